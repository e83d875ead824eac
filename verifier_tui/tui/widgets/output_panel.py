"""The run's stderr (and, one key away, its stdout) as plain text.

A ``Log`` never interprets markup, so whatever a verifier prints is shown as
printed. While a run streams, lines arrive from the run controller's buffer
about 20 times a second in one ``write_lines`` each; when the run ends the
bounded capture, with paths mapped to the user's files, replaces them. Long
lines are wrapped to the panel's width (a traceback's last line is the one
that matters, and a Log would otherwise cut it at the edge).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.events import Resize
from textual.widgets import ContentSwitcher, Log

from verifier_tui.engine.model import CapturedText, RunResult

if TYPE_CHECKING:
    from verifier_tui.tui.display import Display
    from verifier_tui.tui.output_buffer import OutputBuffer

#: 20 Hz: fast enough to feel live, slow enough that a flood costs a few
#: batched writes a second instead of one per line.
FLUSH_S = 0.05
#: Lines a Log keeps (the capture itself is bounded by the engine).
MAX_LINES = 5000
STREAMS = ("stderr", "stdout")
_CARETS = re.compile(r"^\s*[\^~]+\s*$")


def wrap_lines(lines: list[str], width: int) -> list[str]:
    """Each line cut to ``width`` columns, at a space when there is one in the
    second half; continuations are indented two spaces."""
    if width < 12:
        return lines
    out: list[str] = []
    for line in lines:
        if len(line) > width and _CARETS.match(line):
            out.append(line[:width])  # a traceback's ^^^ marks: wrapped, they would point nowhere
            continue
        while len(line) > width:
            cut = line.rfind(" ", width // 2, width)
            if cut <= 0:
                cut = width
            out.append(line[:cut])
            line = "  " + line[cut:].lstrip(" ")
        out.append(line)
    return out


class OutputPanel(Vertical):
    def __init__(self, fmt: "Display", **kwargs) -> None:
        super().__init__(**kwargs)
        self.fmt = fmt
        self.buffer: "OutputBuffer | None" = None
        self.streaming = False
        self._clear_on_output = False
        self._shown: dict[str, list[str]] = {stream: [] for stream in STREAMS}
        """The finished run's lines, unwrapped, kept to wrap again on resize."""

    def compose(self) -> ComposeResult:
        with ContentSwitcher(initial="stderr"):
            for stream in STREAMS:
                yield Log(id=stream, max_lines=MAX_LINES, auto_scroll=True)

    def on_mount(self) -> None:
        self.set_interval(FLUSH_S, self.flush)
        self._title()

    @property
    def showing(self) -> str:
        return self.query_one(ContentSwitcher).current or "stderr"

    def toggle(self) -> str:
        switcher = self.query_one(ContentSwitcher)
        switcher.current = "stdout" if switcher.current == "stderr" else "stderr"
        self._title()
        if not self.streaming:
            self._write(switcher.current)
        return switcher.current

    def _title(self) -> None:
        other = "stdout" if self.showing == "stderr" else "stderr"
        self.border_title = self.showing
        self.border_subtitle = f"o: {other}"

    def _width(self) -> int:
        log = self.query_one(f"#{self.showing}", Log)
        return max(0, log.scrollable_content_region.width - 1)

    def text(self, stream: str) -> str:
        """A finished run's output as shown, before wrapping (for tests and copying)."""
        return "\n".join(self._shown[stream])

    def start_streaming(self, buffer: "OutputBuffer") -> None:
        """A run started: its output replaces the last run's as soon as some
        arrives (a quick run that prints nothing does not blank the panel)."""
        self.buffer = buffer
        self.streaming = True
        self._clear_on_output = True

    def flush(self) -> None:
        if not self.streaming or self.buffer is None:
            return
        batches = {stream: self.buffer.take(stream) for stream in STREAMS}
        if not any(batches.values()):
            return
        if self._clear_on_output:
            self._clear_on_output = False
            for log in self.query(Log):
                log.clear()
        width = self._width()
        for stream, lines in batches.items():
            if lines:
                shown = wrap_lines([self.fmt.text(line) for line in lines], width)
                self.query_one(f"#{stream}", Log).write_lines(shown[-MAX_LINES:])

    def show(self, result: RunResult) -> None:
        self.streaming = False
        if self.buffer is not None:
            for stream in STREAMS:
                self.buffer.take(stream)
        self._shown["stderr"] = self._lines(result.stderr, "(nothing on stderr)")
        self._shown["stdout"] = self._lines(result.stdout, "(nothing on stdout)")
        for stream in STREAMS:
            self._write(stream)

    def show_text(self, text: str) -> None:
        self.streaming = False
        self._shown = {"stderr": text.splitlines(), "stdout": []}
        for stream in STREAMS:
            self._write(stream)

    def on_resize(self, event: Resize) -> None:
        if not self.streaming:
            self._write(self.showing)

    def _lines(self, captured: CapturedText, empty: str) -> list[str]:
        text = captured.text
        lines = self.fmt.text(text).splitlines() if text.strip() else [empty]
        if len(lines) > MAX_LINES:
            lines = [f"[... {len(lines) - MAX_LINES:,} earlier lines not shown here ...]", *lines[-MAX_LINES:]]
        return lines

    def _write(self, stream: str) -> None:
        log = self.query_one(f"#{stream}", Log)
        log.clear()
        width = self._width() if stream == self.showing else 0
        lines = wrap_lines(self._shown[stream], width) if width else self._shown[stream]
        log.write_lines(lines[-MAX_LINES:])
        # A traceback is read from its end: keep the newest line in view.
        log.scroll_end(animate=False)
