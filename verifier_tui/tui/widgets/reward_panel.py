"""The verdict of a run: each reward file's text (JSON pretty-printed), the
verdict as Harbor would parse it or why it is missing, warnings, the exit code
in words and the duration."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from verifier_tui.engine import untrusted
from verifier_tui.engine.harbor.runner_output import parse_runner_output, report_frames
from verifier_tui.engine.model import UNKNOWN, Outcome, RunResult, at_line, returned_and_rule
from verifier_tui.engine.task.config import REFUSED_TO_RUN
from verifier_tui.engine.verdict import readable_json, rewards_json
from verifier_tui.tui.display import HEAD, MUTED, content
from verifier_tui.tui.external import failing_of, nothing_to_debug
from verifier_tui.tui.widgets import redraw
from verifier_tui.tui.widgets.status_style import status_of
from verifier_tui.words.run import (
    LISTED,
    VERIFIER_NOT_CALLED,
    expectation_json,
    missed_for,
    more_text,
    near_miss_line,
    not_a_file,
    stuck_line,
    text_head,
)
from verifier_tui.words.text import code_point, one_line

if TYPE_CHECKING:
    from verifier_tui.tui.display import Display

#: The largest reward file pretty-printed.
PRETTY_CHARS = 64 * 1024
#: Where the TUI points for what a panel leaves out: the whole is in the run's --json.
IN_COMMAND = "c copies this run's command: its --json has them all"


class RewardPanel(VerticalScroll):
    def compose(self) -> ComposeResult:
        yield Static(Content("No run yet."), id="reward-body")

    def show_message(self, text: str, style: str = MUTED) -> None:
        redraw.update(self.query_one("#reward-body", Static), content((text, style)))

    def show(self, result: RunResult, fmt: Display, banner: str | None = None) -> None:
        redraw.update(self.query_one("#reward-body", Static), reward_content(result, fmt, banner))
        self.scroll_home(animate=False)


def reward_content(result: RunResult, fmt: Display, banner: str | None = None) -> Content:
    # The banner's first line is its title; what follows it (b's lines on each mode) reads as text.
    title, _, more = (banner or "").partition("\n")
    parts: list[Any] = [(f"{title}\n", "reverse $accent")] if title else []
    if more:
        parts.append((f"{more}\n\n", ""))
    symbol, word, style = status_of(result)
    parts += [(f"{symbol} {word}", style), (f"  run #{result.sequence}\n", MUTED), *_expectation(result, fmt)]
    parts += [(f"note: {one_line(fmt.words(notice))}\n", "$warning") for notice in result.notices]
    if result.not_staged:  # refused before the verifier was called: why, where a verdict would be
        return content(
            *parts,
            ("\nHarbor's verdict\n", HEAD),
            ("  none: ", "bold $error"),
            (f"{VERIFIER_NOT_CALLED.removeprefix('none: ')}\n", "bold"),
            (f"  {fmt.words(result.start_error or '')}\n", "$error"),
        )
    parts += [(fmt.words(result.outcome_words), "bold"), (f" · {fmt.duration(result.duration_s)}\n", "")]
    parts += _stuck(result, fmt)
    why = _why(result, fmt)
    if why:
        parts.append((f"  {why}\n", MUTED))
    return content(*parts, *_verdict(result, fmt), *_reward_files(result, fmt))


def _expectation(result: RunResult, fmt: Display) -> list[tuple[str, str]]:
    """Whether the run matches its case's expected.json (nothing without one)."""
    if result.inputs.expected is None:
        return []
    if result.expected_matched:
        return [("matches the case's expected.json\n", MUTED)]
    want = expectation_json(result.inputs.expected)
    why = missed_for(result) or near_miss_line(result)  # (a refused task's case has no near miss)
    # fmt.words: why the run could not start may name an action, said as this screen's key
    said = [(f"  {fmt.words(why)}\n", MUTED)] if why else []
    return [(f"does not match the case's expected.json: {want}\n", "$error"), *said]


def _verdict(result: RunResult, fmt: Display) -> list[tuple[str, str]]:
    """Harbor's verdict: the rewards or why there are none, and its warnings."""
    verdict = result.verdict
    parts = [("\nHarbor's verdict\n", HEAD)]
    if result.task_refused is not None:
        parts += [
            ("  none: ", "bold $error"),
            (f"{REFUSED_TO_RUN}\n", "bold"),
            (f"  {fmt.text(one_line(result.task_refused))}\n", MUTED),
            ("  the reward folder, read as Harbor would once task.toml loads:\n", MUTED),
        ]
    if verdict.rewards is not None:
        shown, left_out = rewards_json(verdict.rewards)
        parts += [(f"  {shown}", "bold"), (f"  from {verdict.source}\n", MUTED)]
        if left_out:
            parts.append((f"  {more_text(left_out, 'keys', IN_COMMAND)}\n", MUTED))
    else:
        parts += [
            ("  none: ", "bold $error"),
            (f"{verdict.harbor_would}\n", "bold"),
            (f"  {fmt.text(verdict.message or '')}\n", MUTED),
        ]
    parts += [(f"  ⚠ {fmt.text(warning)}\n", "bold $warning") for warning in verdict.warnings[:LISTED]]
    if len(verdict.warnings) > LISTED:
        parts.append((f"  ⚠ {more_text(len(verdict.warnings) - LISTED, 'warnings', IN_COMMAND)}\n", "$warning"))
    return parts


def _reward_files(result: RunResult, fmt: Display) -> list[Any]:
    """Each reward file: its size, then its head (JSON pretty-printed)."""
    if not result.reward_files:
        return [("\nno reward file in the reward folder\n", MUTED)]
    parts: list[Any] = []
    for reward_file in result.reward_files:
        parts.append((f"\n{reward_file.name}", HEAD))
        if reward_file.kind != "file":
            parts.append((f"  {fmt.text(not_a_file(reward_file))}\n", "$warning"))
            continue
        parts.append(
            (
                f"  {reward_file.size} bytes{'' if reward_file.is_utf8 else ', not UTF-8'}"
                f"{', cut short' if reward_file.truncated else ''}\n",
                MUTED,
            )
        )
        head, more = text_head(pretty(reward_file.name, reward_file.text or ""))
        parts.append(head + "\n")
        if more:
            parts.append((f"… {more} of {reward_file.name} ({IN_COMMAND})\n", MUTED))
    return parts


def pretty(name: str, text: str) -> str:
    """JSON pretty-printed (as parsed: what Harbor reads); anything else as it
    is. A big file is shown as it is: parsing it again here would hold the
    screen on every run, for what the verdict above says already (it is
    Harbor's reading of the file)."""
    if name.endswith(".json") and len(text) <= PRETTY_CHARS:
        value, problem = untrusted.parse_json(text, name)  # a verifier wrote it: nested past any bound, say
        if problem is None:
            return readable_json(value, indent=2, spell=code_point)  # as the file's other text shows them
    return text if text.strip() else "(empty)"


#: Under a timeout, how many frames of the stuck thread are shown (innermost first).
_STACK_LINES = 8


def _stuck(result: RunResult, fmt: Display) -> list[tuple[str, str]]:
    """A run that timed out: where it was stuck, and the frames of the
    thread that ran verify (not the runner's own, not importlib's) when
    there is more than the one named."""
    stack = result.stack
    line = stuck_line(stack, fmt.path)
    if stack is None or line is None:
        return []
    opens = " (e opens the line)" if failing_of(result).location is not None else ""
    parts = [(f"  {fmt.words(line)}", "bold $warning"), (f"{opens}\n", MUTED)]
    frames = [f for f in stack.frames if not f.path.endswith("run_verifier.py") and not f.path.startswith("<")]
    for frame in frames[:_STACK_LINES] if len(frames) > 1 else ():
        parts.append((fmt.text(f"    {at_line(fmt.path(frame.path), frame.line)} in {frame.function}") + "\n", MUTED))
    return parts


def _why(result: RunResult, fmt: Display) -> str | None:
    """The outcome explained in words, with where to look next."""
    outcome = result.outcome
    if outcome is Outcome.VERIFIER_RAISED:
        # The exception report's type, not stderr's last line: what printed after it (an atexit handler's
        # print_stack as the interpreter exits) is not what was raised.
        report = parse_runner_output(result.stderr.text).traceback
        lines = [line for line in result.stderr.text.strip().splitlines() if line.strip()]
        error = report.exception_type if report is not None else lines[-1].split(":", 1)[0].strip() if lines else ""
        error = error if error.replace(".", "").replace("_", "").isalnum() else "an exception"
        failing = failing_of(result)
        location = failing.location
        where = f" at {at_line(fmt.path(location[0]), location[1])}" if location else ""
        debug = "" if nothing_to_debug(result) else ", d debugs it in pdb"  # a SyntaxError has no frame to stop in
        if report is None and not report_frames(result.stderr.text):
            # The runner's traceback went nowhere (verify closed fd 2, or pointed it elsewhere): e opens
            # verify's own line, the one place left to look; the run says nothing more (nor would Harbor's log).
            return (
                "raised an exception, but stderr holds no traceback (did the verifier close or redirect it?)\n"
                f"  (e opens verify{debug})"
            )
        # A frame the run named that is no file of the task's own is neither named here nor opened by e.
        opens = "e says why its line is not opened" if failing.refused and not location else "e opens the line"
        return f"raised {error}{where}\n  (the traceback is in stderr: {opens}{debug})"
    if outcome is Outcome.CONTRACT_ERROR:
        explain = result.explain
        if explain is not None and explain.problems and not explain.would_call_verify:  # not a verify that yields
            return "the runner refused to call verify: the contract problem is under Resolution"  # said once
        cause = result.contract_cause
        if cause is not None:
            # the exit line above says what verify returned (outcome_words): only the rule it broke is left
            rule = returned_and_rule(cause)[1]
            return f"why: {rule}" if rule else None
        # The runner's line, read as the engine reads it: it may go on from output verify left unfinished.
        lines = [line for line in result.stderr.text.strip().splitlines() if line.strip()]
        said = parse_runner_output(result.stderr.text).contract_message or (lines[-1] if lines else None)
        return f"why: {fmt.text(said)}" if said else "the runner refused to call verify (see the resolution above)"
    if outcome is Outcome.TIMED_OUT:
        return "the runner and everything it started were stopped when the timeout ran out"
    if outcome is Outcome.KILLED:
        # Killed past memory_mb, the run's note names the OOM killer and the limit: "something
        # outside" read as an unknown cause beneath it.
        return (
            "ended past task.toml's memory_mb (the note above)"
            if result.out_of_memory
            else "something outside the runner ended it"
        )
    if outcome is Outcome.NO_REWARD:
        if result.verdict.error == UNKNOWN:
            # A reward file (or the folder) the verifier left as a link, or too big to parse: that, said
            # under Harbor's verdict, is why it cannot be known (as run and test say it); "no reward"
            # would be a verdict.
            return None
        return (
            "the runner exits 0 only after writing a reward file: something in the verifier ended the "
            "interpreter first (os._exit(0)?), and Harbor would score no reward"
        )
    if outcome is Outcome.UNEXPECTED_EXIT:
        return "the runner only exits 0, 1 or 2: something in the verifier called os._exit or crashed the interpreter"
    return None
