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

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from verifier_tui.engine.harbor.runner_output import parse_runner_output
from verifier_tui.engine.model import CapturedText, RunResult
from verifier_tui.engine.record import replace
from verifier_tui.engine.task.config import refused_words
from verifier_tui.engine.verdict import REWARD_KEYS, rewards_json
from verifier_tui.tui.display import content
from verifier_tui.tui.widgets.status_style import status_of
from verifier_tui.words.run import CHANGED, DOWN, SAME, UP, run_numbers, short_reward, step_words
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
        f"{symbol} {word}  run #{result.sequence} · {one_line(result.inputs.case or 'no case')}",
        f"after {one_line(result.trigger)}",
        f"{result.outcome_words} · {duration}",
    ]
    if result.task_refused is not None:  # as verdict_line says it (no note is kept here to say why)
        lines.append(f"Harbor's verdict: none: {refused_words(one_line(result.task_refused))}")
    elif result.verdict.rewards is not None:
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


#: A run as the history compares it (:func:`seen`): how it ended, and a digest of its rewards.
Seen = tuple[str | None, bytes | None]


def seen(result: RunResult) -> Seen:
    """What the history compares a run by, read while the run is whole: its
    :func:`ending`, and a digest of all its rewards, since an older run keeps
    only REWARD_KEYS of them (:func:`without_output`) and keeping them all
    would unbound the history's memory (a 100,000-key reward is megabytes).
    A task Harbor would refuse scores nothing, whatever the reward folder
    holds (as the row's reward says): the refusal is how it ended."""
    if result.task_refused is not None:
        return result.task_refused, None
    rewards = result.verdict.rewards
    if rewards is None:
        return ending(result), None
    return ending(result), hashlib.blake2b(json.dumps(rewards, sort_keys=True, default=repr).encode()).digest()


def _reward(result: RunResult) -> int | float | None:
    """The run's "reward" as written: Python compares an integer past any float exactly (10**400 < 2 * 10**400).
    None for a task Harbor would refuse (:func:`seen`)."""
    if result.task_refused is not None:
        return None
    value = (result.verdict.rewards or {}).get("reward")
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def reward_change(
    result: RunResult,
    previous: RunResult | None,
    seen_both: tuple[Seen, Seen],
) -> tuple[str, str]:
    """(mark, style) comparing two runs' rewards: ▲ up, ▼ down, = the same
    rewards, ≠ when they changed but not their "reward" (a dict without one,
    a key beside it), one of them has no reward, or neither has and they ended
    differently (two runs of a task Harbor would refuse: by the refusal alone)
    (``seen_both``: :func:`seen` of each; the marks and their meaning: words.LEGEND)."""
    if previous is None:
        return "", ""
    now, before = _reward(result), _reward(previous)
    if now is not None and before is not None:
        if now > before:
            return UP, "bold $success"
        if now < before:
            return DOWN, "bold $error"
    (ended, rewards), (ended_before, rewards_before) = seen_both
    if result.task_refused is not None and previous.task_refused is not None:
        # Harbor runs neither: both end in the refusal alone (seen), however the runner's run went here
        same = ended == ended_before
    elif rewards is None and rewards_before is None:
        same = result.outcome == previous.outcome and ended == ended_before
    else:
        same = rewards == rewards_before
    return (SAME, "$text-muted") if same else (CHANGED, "$warning")


def _compared_by(result: RunResult) -> tuple[object, ...]:
    """What makes two runs comparable by their rewards: the same inputs (a case's own run and a run of
    it with another workspace, response or task data, as a's batch alternates them, say nothing of each
    other; a response by its file, as a file's edits are edits) and the same step and verifier."""
    ran = result.inputs
    response = (ran.response.path, ran.response.kind) if ran.response is not None else None
    return ran.case, ran.workspace, response, ran.task_data, ran.task_id, result.setup


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
        self.seen: dict[int, Seen] = {}
        """Each listed run's :func:`seen`, by sequence: read while it is still whole."""

    def add(self, result: RunResult, steps: bool = False, cut: tuple[int, ...] = (), changed: bool = False) -> None:
        """``steps``: the task has steps (or the run was one), so the row says the run's step;
        ``cut``: the runs superseded before it, which its row says cut short; ``changed``: a run of
        its case with other inputs than the case's, which its row says as the header does."""
        # The run compared is the last of the same inputs and set-up: another step (S) or verifier (v) runs
        # other tests, so its reward going up or down says nothing of an edit (the case list marks those `?`).
        previous = next((r for r in reversed(self.results) if _compared_by(r) == _compared_by(result)), None)
        self.seen[result.sequence] = seen(result)
        self.results.append(result)
        for gone in self.results[:-MAX_RUNS]:
            self.seen.pop(gone.sequence, None)
        del self.results[:-MAX_RUNS]
        if len(self.results) > KEEP_FULL:
            self.results[-1 - KEEP_FULL] = without_output(self.results[-1 - KEEP_FULL])
        both = (
            self.seen[result.sequence],
            self.seen.get(previous.sequence, (None, None)) if previous else (None, None),
        )
        option = Option(self._prompt(result, previous, both, steps, cut, changed))
        highlighted = self.highlighted
        self.set_options([option, *list(self.options)[: MAX_RUNS - 1]])
        # Stay on the run the user was looking at; follow the newest otherwise.
        self.highlighted = min(highlighted + 1, self.option_count - 1) if highlighted else 0

    @staticmethod
    def _prompt(
        result: RunResult,
        previous: RunResult | None,
        seen_both: tuple[Seen, Seen],
        steps: bool = False,
        cut: tuple[int, ...] = (),
        changed: bool = False,
    ) -> Content:
        """Two lines: ``#7 ✓ good 1 ▲`` and, under it, what triggered the run
        (with ``steps``, after its step: ``step second · after r key``; with
        ``changed``, ``inputs changed · after r key``); with ``cut``, a third:
        ``#6 cut short``."""
        symbol, _word, style = status_of(result)
        mark, mark_style = reward_change(result, previous, seen_both)
        reward = short_reward(result)
        number = f"#{result.sequence}"
        return content(
            (number + " " * max(1, 4 - len(number)), "$text-muted"),  # #100 on: still a space before the mark
            (f"{symbol} ", style),
            (one_line(result.inputs.case or "no case"), ""),
            (f" {reward}" if reward else "", "bold"),
            (f" {mark}" if mark else "", mark_style),
            # The step before the trigger: the narrow list cuts the line's end, and a step is short.
            (f"\n {step_words(result.inputs.step)} ·" if steps else "\n", "$text-muted"),
            (" inputs changed ·" if changed else "", "$warning"),
            (f" after {one_line(result.trigger)}", "$text-muted"),
            (f"\n {run_numbers(cut)} cut short" if cut else "", "$text-muted"),
        )

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        index = event.option_index
        if 0 <= index < len(self.results):
            self.post_message(self.RunChosen(self.results[-1 - index], latest=index == 0, full=index < KEEP_FULL))
