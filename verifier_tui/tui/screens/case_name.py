"""A run kept as a case (``k``, on a task's screen and a trial's): the name
asked in one typed line (enter keeps it, esc keeps nothing), then the run
kept by :func:`verifier_tui.engine.keep_case.save`, as ``run --save-case``
keeps it. A name refused (taken, two folders deep) is said in the dialog,
which keeps what was typed; what only the writing finds, on the status line."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from verifier_tui.tui.workarounds import KeyFooter
from verifier_tui.words.text import one_line

if TYPE_CHECKING:
    from verifier_tui.engine.model import RunResult
    from verifier_tui.engine.task.discovery import Task
    from verifier_tui.tui.screens.keyed import KeyedScreen


class CaseNameScreen(ModalScreen[str | None]):
    BINDINGS = [Binding("escape", "cancel", "cancel")]

    def __init__(self, what: str, where: str, refused: Callable[[str], str | None]) -> None:
        """``what``: the run to keep, in words; ``where``: the task's cases
        folder, as shown; ``refused``: why a name cannot be kept (None: it can)."""
        super().__init__()
        self.what = what
        self.where = where
        self.refused = refused

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
            yield Static(id="case-name-problem", classes="dialog-problem")
        yield KeyFooter()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        name = event.value.strip()
        problem = self.refused(name) if name else "type a name for the case (esc keeps nothing)"
        if problem is None:
            self.dismiss(name)
        else:  # said here, the name typed kept to mend
            said = self.query_one("#case-name-problem", Static)
            said.update(Content(problem))
            said.display = True

    def action_cancel(self) -> None:
        self.dismiss(None)


#: What is being kept (in words; "" while its name is asked) by the cases
#: folder it goes to: one at a time per task, as a second copy of the same
#: name passed the check for a taken name (the first was still a hidden
#: scratch folder) and then failed.
_keeping: dict[Path, str] = {}


def keeping_now() -> list[str]:
    """What is being copied into a case now, in words (q waits for it: the copy's thread runs on)."""
    return [said for said in _keeping.values() if said]


async def keep_run(
    screen: KeyedScreen,
    what: str,
    result: RunResult,
    task: Task,
    shown: Callable[[Path], str],
    say: Callable[[str], None],
) -> tuple[str, bool]:
    """Ask for a name and keep ``result`` (``what``, in words) as a case of
    ``task``: the line to say (empty when the prompt was cancelled) and
    whether the case was written. ``shown``: a path as the screen shows paths;
    ``say``: shows a line while the copy runs (it can take seconds)."""
    from verifier_tui.engine.keep_case import refusal, save

    cases = task.root / "cases"
    if cases in _keeping:  # (its name still asked: a k typed as the dialog opened, nothing to say)
        return (f"still {_keeping[cases]}: k again once it is kept" if _keeping[cases] else ""), False

    def words(problem: str) -> str:
        # The engine's words name the command line's flag and absolute paths (the run's workspace, cases/,
        # or the task folder that has none yet): here, the name and the paths shown, each before the
        # folder that may hold it.
        for path in (result.inputs.workspace, cases, task.root):
            if path is not None:
                problem = problem.replace(str(path), shown(path))
        return one_line(problem.replace("--save-case ", ""))

    def refused(name: str) -> str | None:
        problem = refusal(task.root, name)
        return words(problem) if problem is not None else None

    _keeping[cases] = ""
    try:
        name = await screen.dialog(CaseNameScreen(what, shown(cases), refused))
        if name is None:
            return "", False
        _keeping[cases] = one_line(f"keeping {what} as case {name}…")
        say(_keeping[cases])
        # Off the app's loop: a workspace of 20,000 files takes seconds to copy,
        # and the screen (a save's run, the running clock, its keys) goes on meanwhile.
        saved = await asyncio.to_thread(save, result, task, name)
        if saved.get("problem"):
            return words(saved["problem"]), False
        notes = f" ({'; '.join(saved['notes'])})" if saved["notes"] else ""
        folder = shown(Path(saved["folder"]))
        return one_line(f"kept as case {name} in {folder}: {', '.join(saved['files'])}{notes}"), True
    finally:
        del _keeping[cases]
