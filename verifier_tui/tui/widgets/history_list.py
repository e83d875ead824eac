"""This session's runs, newest first: trigger, outcome, reward and its change
from the previous run of the same case. Enter shows that run's reward files
and output."""

from __future__ import annotations

from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from verifier_tui.engine.model import RunResult
from verifier_tui.tui.widgets.status_style import status_of
from verifier_tui.words import short_reward

#: Runs kept in the list (each keeps its bounded output; a day of saves is fine).
MAX_RUNS = 500


def reward_change(result: RunResult, previous: RunResult | None) -> tuple[str, str]:
    """(mark, style) comparing two runs' rewards: ▲ up, ▼ down, = same, ≠ when
    one of them has no reward."""
    if previous is None:
        return "", ""
    now, before = result.verdict.reward, previous.verdict.reward
    if now is None and before is None:
        return ("=", "$text-muted") if result.outcome == previous.outcome else ("≠", "$warning")
    if now is None or before is None:
        return "≠", "$warning"
    if now > before:
        return "▲", "bold $success"
    if now < before:
        return "▼", "bold $error"
    return "=", "$text-muted"


class HistoryList(OptionList):
    class RunChosen(Message):
        def __init__(self, result: RunResult, latest: bool) -> None:
            super().__init__()
            self.result = result
            self.latest = latest

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.results: list[RunResult] = []
        """Every shown run, oldest first."""

    def add(self, result: RunResult) -> None:
        previous = next((r for r in reversed(self.results) if r.case == result.case), None)
        self.results.append(result)
        del self.results[:-MAX_RUNS]
        option = Option(self._prompt(result, previous))
        highlighted = self.highlighted
        self.set_options([option, *list(self.options)[: MAX_RUNS - 1]])
        # Stay on the run the user was looking at; follow the newest otherwise.
        self.highlighted = 0 if highlighted in (None, 0) else min(highlighted + 1, self.option_count - 1)

    @staticmethod
    def _prompt(result: RunResult, previous: RunResult | None) -> Content:
        """Two lines: ``#7 ✓ good 1 ▲`` and, under it, what triggered the run."""
        symbol, _word, style = status_of(result)
        mark, mark_style = reward_change(result, previous)
        reward = short_reward(result)
        return Content.assemble(
            (f"#{result.sequence:<3}", "$text-muted"),
            (f"{symbol} ", style),
            (result.case or "no case", ""),
            (f" {reward}" if reward else "", "bold"),
            (f" {mark}" if mark else "", mark_style),
            (f"\n after {result.trigger}", "$text-muted"),
        )

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        index = event.option_index
        if 0 <= index < len(self.results):
            self.post_message(self.RunChosen(self.results[-1 - index], latest=index == 0))
