"""Bounded capture of one output stream: decoded safely, head and tail kept.

A verifier may print gigabytes, a single line of megabytes, or bytes that are
not UTF-8. The capture keeps the first ``cap/2`` bytes' worth of text and the
last ``cap/2``, counts what it dropped between them, and never holds more.
"""

from __future__ import annotations

import codecs
from collections import deque

from verifier_tui.engine.model import CapturedText

DEFAULT_CAP_BYTES = 256 * 1024


class BoundedCapture:
    """Feed raw chunks; read back a :class:`CapturedText`."""

    def __init__(self, cap_bytes: int = DEFAULT_CAP_BYTES) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._half = max(1, cap_bytes // 2)
        self._head: list[str] = []
        self._head_len = 0
        self._tail: deque[str] = deque()
        self._tail_len = 0
        self.dropped = 0  # characters dropped between head and tail
        self.total_bytes = 0

    def feed(self, data: bytes) -> str:
        """Take a raw chunk; return its decoded text (for live display)."""
        self.total_bytes += len(data)
        text = self._decoder.decode(data)
        self._keep(text)
        return text

    def finish(self) -> str:
        text = self._decoder.decode(b"", final=True)
        self._keep(text)
        return text

    def _keep(self, text: str) -> None:
        if not text:
            return
        room = self._half - self._head_len
        if room > 0:
            self._head.append(text[:room])
            self._head_len += min(room, len(text))
            text = text[room:]
            if not text:
                return
        self._tail.append(text)
        self._tail_len += len(text)
        while self._tail_len > self._half:
            excess = self._tail_len - self._half
            first = self._tail[0]
            if len(first) <= excess:
                self._tail.popleft()
                self._tail_len -= len(first)
                self.dropped += len(first)
            else:
                self._tail[0] = first[excess:]
                self._tail_len -= excess
                self.dropped += excess

    def result(self) -> CapturedText:
        return CapturedText(
            head="".join(self._head),
            tail="".join(self._tail),
            dropped_bytes=self.dropped,
            total_bytes=self.total_bytes,
        )
