"""A run kept as a case (``k``, on a task's screen and a trial's): the name
asked in one typed line (enter keeps it, esc keeps nothing), then the run
kept by :func:`verifier_tui.engine.keep_case.save`, as ``run --save-case``
keeps it. A name taken is the engine's one line, said on the status line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from verifier_tui.tui.workarounds import KeyFooter
from verifier_tui.words.text import one_line

if TYPE_CHECKING:
    from textual.screen import Screen

    from verifier_tui.engine.model import RunResult
    from verifier_tui.engine.task.discovery import Task


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


async def keep_run(
    screen: Screen[Any], what: str, result: RunResult, task: Task, shown: Callable[[Path], str]
) -> tuple[str, bool]:
    """Ask for a name and keep ``result`` (``what``, in words) as a case of
    ``task``: the line to say (empty when the prompt was cancelled) and
    whether the case was written. ``shown``: a path as the screen shows paths."""
    from verifier_tui.engine.keep_case import refusal, save

    cases = task.root / "cases"
    name = await screen.app.push_screen_wait(CaseNameScreen(what, shown(cases)))
    if name is None:
        return "", False
    # The refusal asked first, as the command line does: alone, it fits the one status line.
    problem = refusal(task.root, name)
    saved = save(result, task, name) if problem is None else {}
    problem = problem or saved.get("problem")
    if problem:
        # The engine's words name the command line's flag and absolute paths: here, the name and the paths shown.
        return one_line(problem.replace("--save-case ", "").replace(str(cases), shown(cases))), False
    notes = f" ({'; '.join(saved['notes'])})" if saved["notes"] else ""
    return one_line(f"kept as case {name} in {shown(Path(saved['folder']))}: {', '.join(saved['files'])}{notes}"), True
