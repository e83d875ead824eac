"""Live output of the run in flight, gathered between screen updates.

The run's reading thread calls ``feed`` for every decoded chunk (up to 64 KiB,
many lines), as fast as the verifier writes; the output panel takes what
arrived about 20 times a second, on the event loop, and writes it in one
``Log.write_lines`` call: each write resizes the ``Log`` and scrolls it to
its end, so a flood written line by line would hold the screen still for
seconds.

Whatever the verifier writes, what waits here is bounded: a line keeps its
first :data:`LINE_CHARS` characters, and only the newest lines, at most
:data:`KEEP_LINES` of them and :data:`KEEP_CHARS` characters, wait for the
next update; the panel is told how many it was not given (it shows a marker
where they were). So a flood costs the loop one bounded batch per update,
however much arrives between two, and the app answers keys all along.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable

#: Lines that wait for the next update (the full, bounded capture replaces
#: them when the run ends).
KEEP_LINES = 2000
#: ...and characters: a screen shows a few thousand, and each update maps,
#: cleans and wraps what it takes, so this bounds the loop's work per update.
KEEP_CHARS = 50_000

#: Characters of one line shown; the rest is counted (the panel says how many).
#: A line still being written keeps no more than this, so that each chunk of
#: a line without end costs its own length, not the whole line's.
LINE_CHARS = 5_000


def more_characters(more: int) -> str:
    """The line that stands for what a long line holds past :data:`LINE_CHARS`."""
    return f"  ... {more:,} more characters on this line (`verifier-tui run` and --json show it whole)"


def _cut(line: str) -> list[str]:
    """``line`` as shown: its first :data:`LINE_CHARS` and, past them, how many more it holds."""
    if len(line) <= LINE_CHARS:
        return [line]
    return [line[:LINE_CHARS], more_characters(len(line) - LINE_CHARS)]


class OutputBuffer:
    """Pending lines per stream for the current run; chunks of older runs are dropped.

    ``feed`` runs in the run's thread, the rest on the event loop: one lock
    keeps them apart, held only for list work bounded by the chunk or by
    :data:`KEEP_LINES`."""

    def __init__(self, keep_lines: int = KEEP_LINES, keep_chars: int = KEEP_CHARS) -> None:
        self.keep_lines = keep_lines
        self.keep_chars = keep_chars
        self.run_id = 0
        self._lock = threading.Lock()
        self._lines: dict[str, deque[str]] = {}
        self._chars: dict[str, int] = {}  # characters in _lines
        self._partial: dict[str, list[str]] = {}  # the line being written: its first LINE_CHARS, in pieces
        self._partial_chars: dict[str, int] = {}  # ...and its whole length so far
        self.dropped: dict[str, int] = {}
        self._user_paths: Callable[[str], str] | None = None
        self.reset(0)

    def reset(self, run_id: int) -> None:
        """Start collecting for ``run_id``; anything pending is discarded."""
        with self._lock:
            self.run_id = run_id
            self._lines = {"stdout": deque(), "stderr": deque()}
            self._chars = {"stdout": 0, "stderr": 0}
            self._partial = {"stdout": [], "stderr": []}
            self._partial_chars = {"stdout": 0, "stderr": 0}
            self.dropped = {"stdout": 0, "stderr": 0}
            self._user_paths = None

    def feed(self, run_id: int, stream: str, text: str, user_paths: Callable[[str], str] | None = None) -> None:
        """A chunk of ``stream`` as the verifier wrote it; ``user_paths`` is
        applied to what is taken (never to all of a flood)."""
        with self._lock:
            if run_id != self.run_id or stream not in self._lines:
                return
            self._user_paths = user_paths
            parts = text.split("\n")
            if len(parts) == 1:
                self._grow(stream, text)
                return
            parts[:1] = self._finish(stream, parts[0])
            self._grow(stream, parts.pop())
            if len(text) > LINE_CHARS and max(map(len, parts)) > LINE_CHARS:
                parts = [shown for line in parts for shown in _cut(line)]
            self._keep(stream, parts)

    def _keep(self, stream: str, parts: list[str]) -> None:
        """``parts`` after the lines waiting, the oldest dropped past the bounds."""
        lines = self._lines[stream]
        if len(parts) >= self.keep_lines:  # all that waited goes, and some of these: no line by line
            self.dropped[stream] += len(lines) + len(parts) - self.keep_lines
            parts = parts[-self.keep_lines :]
            lines.clear()
            self._chars[stream] = 0
        lines.extend(parts)
        chars = self._chars[stream] + sum(map(len, parts))
        while len(lines) > 1 and (len(lines) > self.keep_lines or chars > self.keep_chars):
            chars -= len(lines.popleft())
            self.dropped[stream] += 1
        self._chars[stream] = chars

    def _grow(self, stream: str, piece: str) -> None:
        """More of the line being written: kept up to :data:`LINE_CHARS`, counted past it."""
        held = self._partial_chars[stream]
        if held < LINE_CHARS and piece:
            self._partial[stream].append(piece[: LINE_CHARS - held])
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

    def take(self, stream: str) -> tuple[list[str], int]:
        """The whole lines gathered since the last call (within the bounds,
        with the user's paths), and how many lines before them were dropped."""
        with self._lock:
            lines, dropped = self._lines[stream], self.dropped[stream]
            out = list(lines)
            lines.clear()
            self._chars[stream] = self.dropped[stream] = 0
            user_paths = self._user_paths
        if user_paths is not None and out:
            out = user_paths("\n".join(out)).split("\n")
        return out, dropped
