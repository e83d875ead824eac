"""The task's cases, each with its last verdict at a glance and a marker on
the one running. Enter (or a click) chooses a case and runs it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from verifier_tui.engine.model import RunResult
from verifier_tui.engine.task.cases import Case
from verifier_tui.tui.display import content
from verifier_tui.tui.widgets import redraw
from verifier_tui.tui.widgets.status_style import case_mark
from verifier_tui.words.run import NOT_RUN, RUNNING, step_words
from verifier_tui.words.text import one_line

NO_CASES = "__none__"


class CasesList(OptionList):
    """Options are case names; the current case is bold, the running one marked ▶."""

    _current: str | None = None
    """The current case as last shown: another one chosen (with s, k) moves the cursor to it."""

    @dataclass
    class CaseChosen(Message):
        name: str

    def show(
        self,
        cases: list[Case],
        current: str | None,
        last: dict[str, RunResult],
        running: str | None,
        outdated_through: int = 0,
        setup: tuple[str | None, Path | None] = (None, None),
    ) -> None:
        """``outdated_through``: a run of this sequence number or lower read
        the task's shared files before they changed (its mark is out of date).
        ``setup``: the step (S) and the verifier (v) chosen now (:attr:`Session.setup`): a mark
        made under others is out of date too, and one of another step says its own."""
        ids = [c.name for c in cases] or [NO_CASES]
        same = [o.id for o in self.options] == ids
        if not cases:
            if not same:
                self.set_options([Option(Content("(no cases)"), id=NO_CASES, disabled=True)])
            return
        prompts = [
            self._prompt(c, c.name == current, last.get(c.name), c.name == running, outdated_through, setup)
            for c in cases
        ]
        at = next((i for i, c in enumerate(cases) if c.name == current), None)
        if same:
            for index, prompt in enumerate(prompts):
                redraw.replace_prompt(self, index, prompt)
            if at is not None and current != self._current:
                # A case chosen elsewhere (s): in view and under the cursor, or
                # the list kept showing the top, and enter in it ran another case.
                self.highlighted = at
        else:
            self.set_options([Option(p, id=c.name) for p, c in zip(prompts, cases, strict=True)])
            self.highlighted = at or 0
        self._current = current

    @staticmethod
    def _prompt(
        case: Case,
        current: bool,
        result: RunResult | None,
        running: bool,
        outdated_through: int,
        setup: tuple[str | None, Path | None],
    ) -> Content:
        marker = (f"{RUNNING} ", "bold $accent") if running else ("  ", "")
        name_style = "bold underline" if current else ""
        # An expected.json there but unusable is a broken test, not a case without one (test fails on it).
        broken = ("  expected.json unusable", "$error") if case.expected_problem is not None else ""
        if result is None:
            return content(marker, (NOT_RUN, "$text-muted"), " ", (one_line(case.name), name_style), broken)
        symbol, style, reward = case_mark(result, outdated_through, setup)
        return content(
            marker,
            (symbol, style),
            " ",
            (one_line(case.name), name_style),
            (f"  {reward}" if reward else "", "$text-muted"),
            # Made under another step (S chose this one since): whose verdict it was, as the history says it,
            # on a line of its own under the name (the list is too narrow to keep it at the end of the line).
            (f"\n    {step_words(result.inputs.step)}" if result.inputs.step != setup[0] else "", "$text-muted"),
            broken,
        )

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id and event.option.id != NO_CASES:
            self.post_message(self.CaseChosen(event.option.id))
