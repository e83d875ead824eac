"""The run's stderr (and, one key away, its stdout) as plain text.

A ``Log`` never interprets markup, so whatever a verifier prints is shown as
printed. While a run streams, lines arrive from the run controller's buffer
about 20 times a second in one ``write_lines`` each; when the run ends the
bounded capture, with paths mapped to the user's files, replaces them. Long
lines are wrapped to the panel's width (a traceback's last line is the one
that matters, and a Log would otherwise cut it at the edge).

The panel keeps the newest :data:`MAX_LINES` lines of each stream. Where it
drops older ones, a first line says how many, in the words ``run`` uses where
its capture was cut (:func:`~verifier_tui.engine.model.dropped_marker`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.events import Resize
from textual.widgets import ContentSwitcher, Log

from verifier_tui.engine.model import CapturedText, RunResult, dropped_marker
from verifier_tui.tui.output_buffer import LINE_CHARS, more_characters

if TYPE_CHECKING:
    from typing import Any

    from verifier_tui.tui.display import Display
    from verifier_tui.tui.output_buffer import OutputBuffer

#: 20 Hz: fast enough to feel live, slow enough that a flood costs a few
#: batched writes a second instead of one per line.
FLUSH_S = 0.05
#: Lines a panel shows, a dropped-lines marker included (the capture itself is
#: bounded by the engine). While a run streams, past this the older half goes.
MAX_LINES = 5000
#: Characters a panel holds while a run streams (lines of up to
#: MAX_LINE_CHARS each would otherwise make 25 million); past this too the
#: older half goes.
MAX_CHARS = 500_000
#: Characters of one line shown (the rest is counted): see :func:`wrap_lines`.
MAX_LINE_CHARS = LINE_CHARS
STREAMS = ("stderr", "stdout")
_CARETS = re.compile(r"^\s*[\^~]+\s*$")


def wrap_lines(lines: list[str], width: int) -> list[str]:
    """Each line cut to ``width`` columns, at a space when there is one in the
    second half; continuations are indented two spaces. A line longer than
    :data:`MAX_LINE_CHARS` is shown up to there, with how much more it holds:
    a verifier that prints a megabyte on one line (a huge exception message)
    would otherwise make hundreds of rows and hold the screen still."""
    if width < 12:
        return lines
    out: list[str] = []
    for line in lines:
        if len(line) > width and _CARETS.match(line):
            out.append(line[:width])  # a traceback's ^^^ marks: wrapped, they would point nowhere
            continue
        more = len(line) - MAX_LINE_CHARS
        if more > 0:
            line = line[:MAX_LINE_CHARS]
        start, indent = 0, ""
        while len(line) - start + len(indent) > width:
            room = width - len(indent)
            cut = line.rfind(" ", start + width // 2 - len(indent), start + room)
            if cut <= start:
                cut = start + room
            out.append(indent + line[start:cut])
            start, indent = cut, "  "
            while start < len(line) and line[start] == " ":
                start += 1
        out.append(indent + line[start:])
        if more > 0:
            out.append(more_characters(more))
    return out


class OutputPanel(Vertical):
    def __init__(self, fmt: Display, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.fmt = fmt
        self.buffer: OutputBuffer | None = None
        self.streaming = False
        self._clear_on_output = False
        self._shown: dict[str, list[str]] = {stream: [] for stream in STREAMS}
        """The lines shown, unwrapped, kept to wrap again on resize."""
        self._dropped: dict[str, int] = {stream: 0 for stream in STREAMS}
        """How many earlier lines are not in ``_shown``."""
        self._in_log: dict[str, list[str]] = {}
        """The rows :meth:`_write` last put in each Log, while nothing else was written to it."""

    def compose(self) -> ComposeResult:
        with ContentSwitcher(initial="stderr"):
            for stream in STREAMS:
                yield Log(id=stream, auto_scroll=True)  # bounded here, so that the cut gets its marker

    def on_mount(self) -> None:
        self.set_interval(FLUSH_S, self.flush)
        self._title()

    @property
    def showing(self) -> str:
        return self.query_one(ContentSwitcher).current or "stderr"

    def show_stream(self, stream: str) -> None:
        self.query_one(ContentSwitcher).current = stream
        self._title()
        # Once laid out: a Log that was hidden has no width yet, and its lines would not be wrapped.
        self.call_after_refresh(self._write, stream)

    def _title(self) -> None:
        other = "stdout" if self.showing == "stderr" else "stderr"
        self.border_title = self.showing
        self.border_subtitle = f"o: {other}"

    def _width(self) -> int:
        log = self.query_one(f"#{self.showing}", Log)
        return max(0, log.scrollable_content_region.width - 1)

    def text(self, stream: str) -> str:
        """The output as shown, before wrapping (for tests and copying)."""
        return "\n".join(self._marker(stream) + self._shown[stream])

    def _marker(self, stream: str) -> list[str]:
        dropped = self._dropped[stream]
        return [dropped_marker(dropped, "lines")] if dropped else []

    def start_streaming(self, buffer: OutputBuffer) -> None:
        """A run started: its output replaces the last run's as soon as some
        arrives (a quick run that prints nothing does not blank the panel)."""
        self.buffer = buffer
        self.streaming = True
        self._clear_on_output = True

    def flush(self) -> None:
        if not self.streaming or self.buffer is None:
            return
        taken = {stream: self.buffer.take(stream) for stream in STREAMS}
        if not any(lines for lines, _dropped in taken.values()):
            return
        if self._clear_on_output:
            self._clear_on_output = False
            self._shown = {stream: [] for stream in STREAMS}
            self._dropped = {stream: 0 for stream in STREAMS}
            self._in_log.clear()
            for log in self.query(Log):
                log.clear()
        for stream, (lines, dropped) in taken.items():
            if lines:
                self._append(stream, [self.fmt.text(line) for line in lines], dropped)

    def _append(self, stream: str, lines: list[str], dropped: int) -> None:
        """Streamed lines after those shown; ``dropped`` lines came before them
        that the buffer did not keep: everything earlier goes under the marker."""
        shown = self._shown[stream]
        if dropped:
            self._dropped[stream] += len(shown) + dropped
            shown.clear()
        shown.extend(lines)
        if dropped or len(shown) >= MAX_LINES or sum(map(len, shown)) >= MAX_CHARS:
            keep, chars = 0, 0
            for line in reversed(shown):
                chars += len(line)
                if keep >= MAX_LINES // 2 or chars > MAX_CHARS // 2:
                    break
                keep += 1
            excess = len(shown) - max(keep, 1)
            self._dropped[stream] += excess
            del shown[:excess]
            if stream == self.showing:
                self._write(stream)
        elif stream == self.showing:
            self._in_log.pop(stream, None)
            self.query_one(f"#{stream}", Log).write_lines(wrap_lines(lines, self._width()))

    def show(self, result: RunResult) -> None:
        self.streaming = False
        if self.buffer is not None:
            for stream in STREAMS:
                self.buffer.take(stream)
        for stream, captured, other in (
            ("stderr", result.stderr, result.stdout),
            ("stdout", result.stdout, result.stderr),
        ):
            lines = self._lines(captured, stream, other)
            self._dropped[stream] = max(0, len(lines) - MAX_LINES)
            self._shown[stream] = lines[self._dropped[stream] :]
        self._write(self.showing)

    def show_text(self, text: str) -> None:
        self.streaming = False
        self._shown = {"stderr": text.splitlines(), "stdout": []}
        self._dropped = {stream: 0 for stream in STREAMS}
        self._write(self.showing)

    def on_resize(self, event: Resize) -> None:
        self._write(self.showing)

    def _lines(self, captured: CapturedText, stream: str, other: CapturedText) -> list[str]:
        text = captured.text
        if text.strip():
            return self.fmt.text(text).splitlines()
        other_name = "stdout" if stream == "stderr" else "stderr"
        count = len(other.text.splitlines()) if other.text.strip() else 0
        if not count:
            return [f"(nothing on {stream})"]
        return [
            f"(nothing on {stream}; {other_name} has {count:,} line{'s' if count != 1 else ''}: "
            f"o shows {'them' if count != 1 else 'it'})"
        ]

    def _write(self, stream: str) -> None:
        """The stream's Log made anew: its lines wrapped to the panel, the
        newest that fit in MAX_LINES rows, and the marker first when any were
        dropped. Only the stream on screen is written (the other is written
        when ``o`` shows it)."""
        log = self.query_one(f"#{stream}", Log)
        width = self._width()
        shown = self._shown[stream]
        rows: list[list[str]] = []
        room = MAX_LINES - 1  # the marker's row
        for line in reversed(shown):
            wrapped = wrap_lines([line], width) if width else [line]
            if len(wrapped) > room:
                break
            rows.append(wrapped)
            room -= len(wrapped)
        if len(rows) < len(shown):
            # Too long once wrapped: the oldest go under the marker too.
            self._dropped[stream] += len(shown) - len(rows)
            del shown[: len(shown) - len(rows)]
        written = self._marker(stream) + [row for wrapped in reversed(rows) for row in wrapped]
        # The same rows again (a re-run that printed what the last one did, a
        # resize that wraps nothing differently) are left as they are: made
        # anew, the Log and its scroll bars repaint whole.
        if self._in_log.get(stream) != written:
            log.clear()
            log.write_lines(written)
            self._in_log[stream] = written
        # A traceback is read from its end: keep the newest line in view.
        log.scroll_end(animate=False)
