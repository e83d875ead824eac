"""This session's runs, newest first: trigger, outcome, reward and its change
from the previous run of the same case. Enter shows that run.

Memory stays bounded however long the session runs and whatever each run
prints: the latest :data:`KEEP_FULL` runs keep their whole result
(output, reward files, the runner's explanation); older ones keep the result
without those (:func:`without_output`: a status, a reward, the command, about
a kilobyte), and at most :data:`MAX_RUNS` are listed: kept whole, every
run's output would stay for as long as the session, and a session left
open all day re-runs on every save.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from verifier_tui.engine.harbor.runner_output import parse_runner_output
from verifier_tui.engine.model import CapturedText, RunResult
from verifier_tui.engine.record import replace
from verifier_tui.engine.verdict import REWARD_KEYS, rewards_json
from verifier_tui.tui.display import content
from verifier_tui.tui.widgets.status_style import status_of
from verifier_tui.words.run import CHANGED, DOWN, SAME, UP, short_reward
from verifier_tui.words.text import one_line

if TYPE_CHECKING:
    from typing import Any

#: Runs whose whole result is kept, so that selecting one shows everything:
#: the few a user compares with the latest while editing.
KEEP_FULL = 5
#: Runs listed at all (older than KEEP_FULL, each without its output). Each
#: listed run costs about 12 KB (its summary, its line and the list's render
#: of it), so 200 keep the TUI's growth near 3 MB however many runs it makes,
#: under the 5 MB that benchmarks/tui_memory.py allows.
MAX_RUNS = 200


def without_output(result: RunResult) -> RunResult:
    """``result`` without what makes a result big: its output, the runner's
    explanation and phases, its environment, the stack of a timeout, the reward
    files' text and all but REWARD_KEYS of the rewards
    (a 100,000-key reward is megabytes). What is left (outcome, verdict,
    expectation, command, trigger) gives a status mark, a reward and a summary."""
    verdict = result.verdict
    if verdict.rewards is not None and len(verdict.rewards) > REWARD_KEYS:
        kept = dict(list(verdict.rewards.items())[:REWARD_KEYS])
        if "reward" in verdict.rewards:
            kept["reward"] = verdict.rewards["reward"]
        verdict = replace(
            verdict, rewards=kept, message=f"{len(verdict.rewards):,} keys in all; the history kept {len(kept)}"
        )
    return replace(
        result,
        verdict=verdict,
        stdout=CapturedText(total_bytes=result.stdout.total_bytes),
        stderr=CapturedText(total_bytes=result.stderr.total_bytes),
        explain=None,
        reward_files=[replace(f, text=None) for f in result.reward_files],
        phases=None,
        environment=None,
        stack=None,
    )


def summary_text(result: RunResult, duration: str) -> str:
    """What a run older than the latest KEEP_FULL shows when picked."""
    symbol, word, _style = status_of(result)
    lines = [
        f"{symbol} {word}  run #{result.sequence} · {one_line(result.case or 'no case')}",
        f"after {one_line(result.trigger)}",
        f"{result.outcome_words} · {duration}",
    ]
    if result.verdict.rewards is not None:
        lines.append(f"Harbor's verdict: {rewards_json(result.verdict.rewards)[0]}")
        if result.verdict.message:
            lines.append(f"({result.verdict.message})")
    else:
        lines.append(f"Harbor's verdict: none ({result.verdict.harbor_would})")
    if result.expected_matched is not None:
        lines.append(
            "matches the case's expected.json" if result.expected_matched else "does not match the case's expected.json"
        )
    lines += [
        "",
        f"Its output, reward files and resolution are no longer kept: the history keeps them for "
        f"the latest {KEEP_FULL} runs and a summary of older ones.",
    ]
    return "\n".join(lines)


def ending(result: RunResult) -> str | None:
    """What ended a run, beyond its outcome: the type of the exception the
    verifier raised, or the runner's contract problem (None: neither)."""
    output = parse_runner_output(result.stderr.text)
    if output.traceback is not None:
        return output.traceback.bare_type
    return output.contract_message


def reward_change(
    result: RunResult, previous: RunResult | None, endings: tuple[str | None, str | None]
) -> tuple[str, str]:
    """(mark, style) comparing two runs' rewards: ▲ up, ▼ down, = the same
    reward file, ≠ when it changed but not its "reward" (a dict without one,
    a key beside it), one of them has no reward, or neither has and they ended
    differently (``endings``: :func:`ending` of each; the marks and their
    meaning: words.LEGEND)."""
    if previous is None:
        return "", ""
    now, before = result.verdict.reward, previous.verdict.reward
    if now is not None and before is not None:
        if now > before:
            return UP, "bold $success"
        if now < before:
            return DOWN, "bold $error"
    if result.verdict.rewards is None and previous.verdict.rewards is None:
        same = result.outcome == previous.outcome and endings[0] == endings[1]
    else:
        same = result.verdict.rewards == previous.verdict.rewards
    return (SAME, "$text-muted") if same else (CHANGED, "$warning")


class HistoryList(OptionList):
    @dataclass
    class RunChosen(Message):
        """A run picked in the list; ``full`` is False when only its summary is
        kept (``result`` is then without its output: see :func:`without_output`)."""

        result: RunResult
        latest: bool
        full: bool = True

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.results: list[RunResult] = []
        """Every listed run, oldest first: the latest KEEP_FULL whole, the others without their output."""
        self.endings: dict[int, str | None] = {}
        """Each listed run's :func:`ending`, by sequence: read while its output is still kept."""

    def add(self, result: RunResult) -> None:
        previous = next((r for r in reversed(self.results) if r.case == result.case), None)
        self.endings[result.sequence] = ending(result)
        self.results.append(result)
        for gone in self.results[:-MAX_RUNS]:
            self.endings.pop(gone.sequence, None)
        del self.results[:-MAX_RUNS]
        if len(self.results) > KEEP_FULL:
            self.results[-1 - KEEP_FULL] = without_output(self.results[-1 - KEEP_FULL])
        endings = (self.endings[result.sequence], self.endings.get(previous.sequence) if previous else None)
        option = Option(self._prompt(result, previous, endings))
        highlighted = self.highlighted
        self.set_options([option, *list(self.options)[: MAX_RUNS - 1]])
        # Stay on the run the user was looking at; follow the newest otherwise.
        self.highlighted = min(highlighted + 1, self.option_count - 1) if highlighted else 0

    @staticmethod
    def _prompt(result: RunResult, previous: RunResult | None, endings: tuple[str | None, str | None]) -> Content:
        """Two lines: ``#7 ✓ good 1 ▲`` and, under it, what triggered the run."""
        symbol, _word, style = status_of(result)
        mark, mark_style = reward_change(result, previous, endings)
        reward = short_reward(result)
        number = f"#{result.sequence}"
        return content(
            (number + " " * max(1, 4 - len(number)), "$text-muted"),  # #100 on: still a space before the mark
            (f"{symbol} ", style),
            (one_line(result.case or "no case"), ""),
            (f" {reward}" if reward else "", "bold"),
            (f" {mark}" if mark else "", mark_style),
            (f"\n after {one_line(result.trigger)}", "$text-muted"),
        )

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        index = event.option_index
        if 0 <= index < len(self.results):
            self.post_message(self.RunChosen(self.results[-1 - index], latest=index == 0, full=index < KEEP_FULL))
