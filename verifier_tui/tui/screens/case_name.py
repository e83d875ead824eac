"""The name to keep a run under as a case (``k``): one line typed, enter
keeps it, esc keeps nothing. Whether the name is free is the engine's to
say (:func:`verifier_tui.engine.keep_case.refusal`), after the prompt, on
the status line."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from verifier_tui.tui.workarounds import KeyFooter


class CaseNameScreen(ModalScreen[str | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, what: str, where: str) -> None:
        """``what``: the run to keep, in words; ``where``: the task's cases folder, as shown."""
        super().__init__()
        self.what = what
        self.where = where

    def compose(self) -> ComposeResult:
        with Vertical(id="case-name-dialog", classes="dialog"):
            yield Label(Content(f"Keep {self.what} as a case"), classes="dialog-title")
            yield Input(placeholder="a name for the case", id="case-name")
            yield Static(
                Content(
                    f"Its workspace, response and task data are copied into {self.where}/NAME/, with an "
                    "expected.json of the verdict it got: change that to the verdict it deserves.\n"
                    "enter keeps it · esc cancels"
                ),
                classes="dialog-hint",
            )
        yield KeyFooter()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
