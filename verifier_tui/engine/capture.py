"""Bounded capture of one output stream, shared by both process drivers.

A verifier may print gigabytes, a single line of megabytes, or bytes that are
not UTF-8. A capture keeps the first ``cap/2`` and the last ``cap/2`` bytes,
cut on UTF-8 character boundaries, and counts exactly how many bytes it dropped
between them; it never holds more. No asyncio here: the synchronous driver of
the one-shot commands uses it too.
"""

from __future__ import annotations

from collections import deque

from verifier_tui.engine.model import CapturedText

DEFAULT_CAP_BYTES = 256 * 1024


def _is_continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def _sequence_length(lead: int) -> int:
    """How many bytes a UTF-8 sequence starting with ``lead`` has (1 when it is
    not a valid lead byte: it will decode as one replacement character)."""
    if lead >= 0xF0:
        return 4
    if lead >= 0xE0:
        return 3
    if lead >= 0xC0:
        return 2
    return 1


class BoundedCapture:
    """The first ``cap/2`` and the last ``cap/2`` bytes of a stream, cut on
    UTF-8 character boundaries, and a count of the bytes dropped between."""

    def __init__(self, cap_bytes: int) -> None:
        self.head_limit = max(cap_bytes // 2, 0)
        self.tail_limit = max(cap_bytes - self.head_limit, 0)
        self.head = bytearray()
        self.head_full = self.head_limit == 0
        self.tail: deque[bytes] = deque()
        self.tail_len = 0
        self.total = 0
        self.dropped = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        if not self.head_full:
            room = self.head_limit - len(self.head)
            if len(data) <= room:
                self.head += data
                if len(data) == room:
                    self._close_head(b"")
                return
            self.head += data[:room]
            data = self._close_head(data[room:])
        if data:
            self.tail.append(bytes(data))
            self.tail_len += len(data)
            self._trim_tail()

    def _close_head(self, rest: bytes) -> bytes:
        """Mark the head full; an incomplete character at its end moves over
        to the tail side so that neither half decodes a broken sequence."""
        self.head_full = True
        for back in range(1, min(4, len(self.head)) + 1):
            byte = self.head[-back]
            if not _is_continuation(byte):
                if byte >= 0xC0 and _sequence_length(byte) > back:
                    moved = bytes(self.head[-back:])
                    del self.head[-back:]
                    return moved + rest
                break
        return rest

    def _trim_tail(self) -> None:
        excess = self.tail_len - self.tail_limit
        while excess > 0 and self.tail:
            first = self.tail[0]
            if len(first) <= excess:
                self.tail.popleft()
                self.tail_len -= len(first)
                self.dropped += len(first)
                excess -= len(first)
            else:
                self.tail[0] = first[excess:]
                self.tail_len -= excess
                self.dropped += excess
                excess = 0

    def result(self) -> CapturedText:
        tail = b"".join(self.tail)
        if self.dropped:
            # The tail starts wherever trimming stopped: skip a partial
            # character there (it counts as dropped).
            skip = 0
            while skip < min(3, len(tail)) and _is_continuation(tail[skip]):
                skip += 1
            tail = tail[skip:]
            dropped = self.dropped + skip
        else:
            dropped = 0
        return CapturedText(
            head=bytes(self.head).decode("utf-8", errors="replace"),
            tail=tail.decode("utf-8", errors="replace"),
            dropped_bytes=dropped,
            total_bytes=self.total,
        )
