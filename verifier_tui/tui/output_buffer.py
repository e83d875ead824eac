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


class OutputBuffer:
    """Pending lines per stream for the current run; chunks of older runs are dropped."""

    def __init__(self, keep_lines: int = KEEP_LINES) -> None:
        self.keep_lines = keep_lines
        self.run_id = 0
        self._lines: dict[str, deque[str]] = {}
        self._partial: dict[str, str] = {}
        self.dropped: dict[str, int] = {}
        self.reset(0)

    def reset(self, run_id: int) -> None:
        """Start collecting for ``run_id``; anything pending is discarded."""
        self.run_id = run_id
        self._lines = {"stdout": deque(maxlen=self.keep_lines), "stderr": deque(maxlen=self.keep_lines)}
        self._partial = {"stdout": "", "stderr": ""}
        self.dropped = {"stdout": 0, "stderr": 0}

    def feed(self, run_id: int, stream: str, text: str) -> None:
        if run_id != self.run_id or stream not in self._lines:
            return
        text = self._partial[stream] + text
        parts = text.split("\n")
        self._partial[stream] = parts.pop()
        lines = self._lines[stream]
        overflow = len(lines) + len(parts) - self.keep_lines
        if overflow > 0:
            self.dropped[stream] += overflow
        lines.extend(parts)

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
