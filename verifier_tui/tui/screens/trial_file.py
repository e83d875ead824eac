"""One Harbor file of a trial, full screen (the trial screen's ``l x a j i
m``): ``trial.log``, ``exception.txt``, the agent's logs, the trajectory as a
conversation, the task's instruction, the artifacts manifest. What to show
is the engine's (:mod:`verifier_tui.engine.harbor.trial_files`); a log opens
at its end, where the trial ended."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from verifier_tui.tui.display import HEAD, MUTED, content
from verifier_tui.tui.workarounds import KeyFooter
from verifier_tui.words.text import one_line

if TYPE_CHECKING:
    from verifier_tui.engine.harbor.trial_files import FileView
    from verifier_tui.tui.trial_display import TrialDisplay

STYLES = {"head": HEAD, "muted": MUTED, "warn": "$warning", "text": ""}
#: Views read from their end: where a log says how the trial ended.
FROM_THE_END = ("trial_log", "exception", "agent")


class TrialFileScreen(Screen[None]):
    BINDINGS = [Binding("escape", "close", "back"), Binding("q", "close", "back", show=False)]

    def __init__(self, view: FileView, fmt: TrialDisplay) -> None:
        super().__init__()
        self.view = view
        self.fmt = fmt

    def compose(self) -> ComposeResult:
        yield Static(id="file-header")
        with VerticalScroll(id="file-body"):
            yield Static(id="file-text")
        yield KeyFooter()

    def on_mount(self) -> None:
        view, fmt = self.view, self.fmt
        where = fmt.path(view.path) if view.path is not None else ""
        self.query_one("#file-header", Static).update(
            content(
                (view.title, "bold"),
                (f"  {where}" if where else "", "$text-muted"),
                ("  · esc goes back", "$text-muted"),
            )
        )
        parts: list[Any] = []
        for kind, text in view.lines:
            # A file's content, made readable; the rest are names and sizes, each on
            # its line with its escapes shown (agent/log\x1b[31m.txt, never log.txt).
            shown = fmt.text(text if kind == "text" else one_line(text))
            parts += [(shown, STYLES.get(kind, "")), "\n"]
        self.query_one("#file-text", Static).update(content(*parts[:-1]))
        body = self.query_one("#file-body")
        body.focus()
        if view.key in FROM_THE_END:
            self.call_after_refresh(body.scroll_end, animate=False)

    def action_close(self) -> None:
        self.app.pop_screen()
