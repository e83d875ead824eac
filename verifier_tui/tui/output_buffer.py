"""Live output of the run in flight, gathered between screen updates.

The engine calls ``feed`` for every decoded chunk (up to 64 KiB, many lines);
the output panel takes whole lines about 20 times a second and writes them in
one ``Log.write_lines`` call. Writing line by line costs 12.5 s for 50k lines
(measured, engineering.md); batched, about 0.1 s. Only the last ``keep_lines``
lines of a batch are kept, and the panel is told how many were not (it shows
a marker where they were).
"""

from __future__ import annotations

from collections import deque

#: Lines a panel keeps while a run streams (the full, bounded capture replaces
#: them when the run ends).
KEEP_LINES = 2000

#: Characters of one line shown; the rest is counted (the panel says how many).
#: A line still being written keeps no more than this: a verifier writing
#: 64 MB with no newline once cost a join of the whole line per chunk, which
#: held the app for minutes (issue 23); now each chunk costs its own length.
LINE_CHARS = 5_000


def more_characters(more: int) -> str:
    """The line that stands for what a long line holds past :data:`LINE_CHARS`."""
    return f"  ... {more:,} more characters on this line (`verifier-tui run` and --json show it whole)"


class OutputBuffer:
    """Pending lines per stream for the current run; chunks of older runs are dropped."""

    def __init__(self, keep_lines: int = KEEP_LINES) -> None:
        self.keep_lines = keep_lines
        self.run_id = 0
        self._lines: dict[str, deque[str]] = {}
        self._partial: dict[str, list[str]] = {}  # the line being written: its first LINE_CHARS, in pieces
        self._partial_chars: dict[str, int] = {}  # ...and its whole length so far
        self.dropped: dict[str, int] = {}
        self.reset(0)

    def reset(self, run_id: int) -> None:
        """Start collecting for ``run_id``; anything pending is discarded."""
        self.run_id = run_id
        self._lines = {"stdout": deque(maxlen=self.keep_lines), "stderr": deque(maxlen=self.keep_lines)}
        self._partial = {"stdout": [], "stderr": []}
        self._partial_chars = {"stdout": 0, "stderr": 0}
        self.dropped = {"stdout": 0, "stderr": 0}

    def feed(self, run_id: int, stream: str, text: str) -> None:
        if run_id != self.run_id or stream not in self._lines:
            return
        parts = text.split("\n")
        if len(parts) == 1:
            self._grow(stream, text)
            return
        parts[:1] = self._finish(stream, parts[0])
        rest = parts.pop()
        self._grow(stream, rest)
        lines = self._lines[stream]
        overflow = len(lines) + len(parts) - self.keep_lines
        if overflow > 0:
            self.dropped[stream] += overflow
        lines.extend(parts)

    def _grow(self, stream: str, piece: str) -> None:
        """More of the line being written: kept up to :data:`LINE_CHARS`, counted past it."""
        held = self._partial_chars[stream]
        if held < LINE_CHARS and piece:
            self._partial[stream].append(piece[:LINE_CHARS - held])
        self._partial_chars[stream] = held + len(piece)

    def _finish(self, stream: str, piece: str) -> list[str]:
        """The line being written, ended by ``piece``: itself, and the count of
        what it held past :data:`LINE_CHARS` when it did."""
        if not self._partial[stream]:
            self._partial_chars[stream] = 0
            return [piece]
        self._grow(stream, piece)
        line, total = "".join(self._partial[stream]), self._partial_chars[stream]
        self._partial[stream], self._partial_chars[stream] = [], 0
        return [line] if total <= LINE_CHARS else [line, more_characters(total - LINE_CHARS)]

    def take(self, stream: str) -> list[str]:
        """Whole lines gathered since the last call (at most ``keep_lines``)."""
        lines = self._lines[stream]
        if not lines:
            return []
        out = list(lines)
        lines.clear()
        return out

    def take_dropped(self, stream: str) -> int:
        """How many lines were dropped (a batch over ``keep_lines``) since the last call."""
        dropped, self.dropped[stream] = self.dropped[stream], 0
        return dropped

    def pending(self, stream: str) -> bool:
        return bool(self._lines[stream])
