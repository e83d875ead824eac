"""The words the headless commands and the TUI share for what the engine found
(no Textual here): numbers, durations, the two modes' names, a verdict in a
line, a case's status and the one legend of its marks, the hints a run's output
calls for. Paths are :mod:`verifier_tui.words.paths`'s, sys.path and the
bindings :mod:`verifier_tui.words.resolution`'s. The TUI keeps only what is
screen-specific (:mod:`verifier_tui.tui.display`: deterministic paths and
durations for snapshots; :mod:`verifier_tui.tui.widgets.status_style`: theme styles)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING

from verifier_tui.engine.advice import NEMO_GYM_COPY, PYTHON_OPTION, Advice, of_test
from verifier_tui.engine.harbor.runner_output import tail_start

# One formatter for every duration and timeout, and one name per mode: the
# engine's, which its own words use too.
from verifier_tui.engine.model import (
    MODE_NAMES,
    CapturedText,
    Expectation,
    Outcome,
    RunResult,
    at_line,
    dropped_marker,
    duration_text,
)
from verifier_tui.engine.task.config import REFUSED_TO_RUN, refused_words
from verifier_tui.engine.verdict import key_shown, rewards_json
from verifier_tui.words.paths import here, path_from
from verifier_tui.words.text import one_line, unbroken

__all__ = ["MODE_NAMES", "duration_text"]

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from verifier_tui.engine.both_modes import BothModes
    from verifier_tui.engine.model import RewardFile, Stack
    from verifier_tui.engine.readback import Explanation
    from verifier_tui.engine.session import Session


#: The options whose value is a path in the reproduce command (engine/invocation.py's reproduce_command) and
#: the trial's ``run TRIAL`` (TrialSession.replay_command).
_PATH_OPTIONS = ("--verifier", "--workspace", "--response", "--task-data", "--nemo-gym", "--python", "--task")


def command_words(command: list[str], cwd: Path) -> list[str]:
    """The reproduce command's words (``RunResult.command``) as typed in a
    shell in ``cwd``: each quoted for the shell, each path relative to
    ``cwd`` when inside it, else absolute; the words that start the tool
    stay as they are (absolute, or a name on PATH). A word that holds a line
    break or a bidi control (a case folder's name) is written with visible
    escapes, so that the command shown is the one that runs."""
    from verifier_tui.engine.procfs import shell_word

    start = command.index("run") + 1 if "run" in command else len(command)
    out = list(command[:start])
    for index in range(start, len(command)):
        word = command[index]
        is_path = index == start or command[index - 1] in _PATH_OPTIONS
        out.append(path_from(word, cwd) if is_path and Path(word).is_absolute() else word)
    return [shell_word(word) for word in out]


def cut_words(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters: cut at a word boundary, with
    ``…`` where the rest was (a single word longer than that is cut
    inside it)."""
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    room = width - 1
    cut = text[: room + 1].rfind(" ")
    return (text[:cut] if cut > 0 else text[:room]).rstrip(" ,;:·") + "…"


#: The end of a change's description (``Change.describe``): what happened to the file, and how many more.
_TRIGGER_END = re.compile(r"( re-created| created| deleted)?( \+\d+ more)?$")


TRIGGER_WIDTH = 28  # watch's column of what each run was for


def watch_line_start(sequence: int, trigger: str) -> str:
    """``#3   12:00:01  tests/verifier.py changed``: watch's line, a task's run's or a trial's replay's."""
    return f"#{sequence:<3} {time.strftime('%H:%M:%S')}  {trigger_words(trigger):<{TRIGGER_WIDTH}}"


def run_numbers(numbers: Sequence[int]) -> str:
    """Runs by number, as watch and the history say the runs cut short: ``#2``,
    ``#3-#37`` (with no gap between them), else each (``#2, #4``)."""
    if len(numbers) > 1 and numbers[-1] - numbers[0] == len(numbers) - 1:
        return f"#{numbers[0]}-#{numbers[-1]}"
    return ", ".join(f"#{n}" for n in numbers)


def trigger_words(trigger: str) -> str:
    """What a run was for, in at most :data:`TRIGGER_WIDTH` characters. What happened to the file stays
    (``cases/cor…ected.json deleted…``, not ``cases/correct/expected.json…``, read as a save): the
    ``+N more`` goes first (an ``…`` where it was), then the path is cut in its middle, so its first
    folder and its file's end both stay."""
    text = " ".join(trigger.split())
    if len(text) <= TRIGGER_WIDTH:
        return text
    end = _TRIGGER_END.search(text)
    verb = (end.group(1) if end is not None else None) or ""
    more = "…" if end is not None and end.group(2) else ""  # where "+N more" was
    name = text[: end.start()] if end is not None else text
    if len(name) + len(verb) + len(more) <= TRIGGER_WIDTH:
        return f"{name}{verb}{more}"
    room = TRIGGER_WIDTH - len(verb) - len(more) - 1
    if room < 4:  # no room for a name: the start as before
        return cut_words(text, TRIGGER_WIDTH)
    return f"{name[: room // 2]}…{name[len(name) - (room - room // 2) :]}{verb}{more}"


def format_number(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:g}" if abs(value) >= 1e-4 or value == 0 else repr(value)
    if isinstance(value, int) and abs(value) >= 10**16:  # a JSON integer of 309 digits would stretch a table
        try:
            return f"{value:g}"
        except OverflowError:  # past any float
            return f"{'-' if value < 0 else ''}~2^{value.bit_length()}"
    return str(value)


def rewards_text(rewards: dict[str, Any] | None) -> str:
    if rewards is None:
        return "none"
    return ", ".join(f"{key_shown(k)}={format_number(v)}" for k, v in rewards.items())  # keys a file wrote, cut


def within_words(expected: Expectation) -> str:
    """`` ± TOLERANCE``, said after an expectation's rewards when it gives one; "" when they must be equal."""
    return f" ± {format_number(expected.tolerance)}" if expected.tolerance is not None else ""


def headline_reward(result: RunResult) -> str:
    """The number shown in lists: the reward, or a short word for why there is none."""
    verdict = result.verdict
    if verdict.rewards is not None:
        if "reward" in verdict.rewards:
            return format_number(verdict.rewards["reward"])
        return "no 'reward'"
    return {
        Outcome.VERIFIER_RAISED: "raised",
        Outcome.CONTRACT_ERROR: "contract",
        Outcome.TIMED_OUT: "timeout",
        Outcome.KILLED: "killed",
        Outcome.COULD_NOT_START: "no start",
        Outcome.REFUSED_BY_SHIM: "refused",
        Outcome.TEST_SH_ENDED: "test.sh",
    }.get(result.outcome, "missing")


def harbor_error(result: RunResult) -> str:
    """The exception Harbor would raise for a run that scored nothing, by its
    own name (``VerifierTimeoutError`` for a run stopped at its timeout); ""
    when the run has rewards, or never started (the tool's failure, not one
    the sandbox would have)."""
    if result.verdict.rewards is not None or result.outcome is Outcome.COULD_NOT_START:
        return ""
    return result.verdict.error or ""


def short_reward(result: RunResult) -> str:
    """The reward Harbor aggregates on, when there is one; else nothing (the
    status symbol, and the reward panel, say why there is none). A task
    Harbor would refuse gets none, whatever the reward folder holds."""
    if result.task_refused is not None or result.verdict.rewards is None or result.verdict.reward is None:
        return ""
    return headline_reward(result)


# The marks of the cases list and the history, each defined once. LEGEND says
# what each means, in the app's help (?) and in the README's legend (a test
# holds the README to it).
PASSED, FAILED = "✓", "✗"  # judged against the case's expected.json
WRITTEN, NO_REWARD, TIMED_OUT = "•", "!", "⏱"  # a case without expected.json
NOT_RUN, RUNNING = "·", "▶"
OUTDATED = "?"  # the case's last run read the task's files as they were before a change (or ran other tests: S, v)
OUTDATED_BY = "the tests, the verifier or task.toml changed"  # what makes a run out of date
UP, DOWN, SAME, CHANGED = "▲", "▼", "=", "≠"  # the history: a run against the case's run before it

LEGEND: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    (
        "cases and history",
        (
            (PASSED, "passed: the run matches the case's expected.json"),
            (FAILED, "failed: the run differs from the case's expected.json, however it ended"),
            (WRITTEN, "reward written (the case has no expected.json)"),
            (NO_REWARD, "no reward: verifier raised, contract error, or another failure (no expected.json)"),
            (TIMED_OUT, "timed out (no expected.json)"),
            (NOT_RUN, "not run yet"),
            (
                OUTDATED,
                f"out of date: {OUTDATED_BY} since the case ran (a runs every case)",
            ),
            (RUNNING, "running"),
        ),
    ),
    (
        "history, after the reward",
        (
            (UP, "reward up from the case's run before"),
            (DOWN, "reward down from the case's run before"),
            (SAME, "the same rewards, or none both times for one reason (a task Harbor refuses: the refusal)"),
            (CHANGED, "other rewards changed, one of the two has none, or neither has and they ended differently"),
        ),
    ),
)


def step_words(step: str | None) -> str:
    """A run's step on a multi-step task, as S's list names the choice: ``step second``, or ``no step``."""
    return f"step {one_line(step)}" if step is not None else "no step"


def case_status(result: RunResult) -> tuple[str, str]:
    """(mark, word) for a case's last run: judged against expected.json when
    the case has one (passed / failed, however the run ended), else by how it
    ended. The marks are LEGEND's."""
    matched = result.expected_matched
    if matched is True:
        return PASSED, "passed"
    if matched is False:
        return FAILED, "failed"
    if result.outcome is Outcome.REWARD_WRITTEN:
        return WRITTEN, "reward written"
    if result.outcome is Outcome.TIMED_OUT:
        return TIMED_OUT, "timed out"
    return NO_REWARD, result.outcome.value


def expected_words(result: RunResult) -> str | None:
    """Whether a run matched its case's expected.json, in two words; None without one."""
    if result.inputs.expected is None:
        return None
    return "matches expected" if result.expected_matched else "differs from expected"


def not_a_file(reward_file: RewardFile) -> str:
    """A reward file that is no regular file to read, in a few words: a link
    with where it points (never read), a folder, a FIFO..."""
    if reward_file.kind == "link":
        return f"a link to {reward_file.target}, not read here"
    if reward_file.kind == "other":  # a FIFO, a socket, a device, or not even looked at: never opened
        return "not a regular file, not read"
    return "a file that cannot be read" if reward_file.kind == "file" else f"a {reward_file.kind}, not a file"


VERIFIER_NOT_RUN = "the verifier was not run"
#: The verdict of a run refused before its verifier was called (the line above it says why).
VERIFIER_NOT_CALLED = f"none: {VERIFIER_NOT_RUN}"


def verdict_line(result: RunResult) -> str:
    verdict = result.verdict
    if result.not_staged:
        return VERIFIER_NOT_CALLED
    line: str
    if verdict.rewards is not None:
        shown, left_out = rewards_json(verdict.rewards)
        more = Advice(f"; {left_out:,} more keys: ", IN_JSON) if left_out else ""
        line = Advice(f"{shown}  (from {verdict.source}", more, ")")
    elif result.contract_cause is not None:  # the cause (the message's start) before what Harbor makes of it
        line = f"none: {verdict.message}; so {verdict.harbor_would}"
    else:
        line = f"none: {verdict.harbor_would}: {verdict.message}"
    if result.task_refused is not None:
        # Harbor would not get as far as the reward folder: the task does not load.
        # An Advice, as the line it says is: each face words its actions (the plugin has no --json).
        return Advice(f"none: {refused_words(one_line(result.task_refused))}. The reward folder gives: ", line)
    return line


def missed_for(result: RunResult) -> str | None:
    """Why a case cannot match its expected.json whatever its run gave
    (``RunResult.expected_matched``): Harbor would refuse its task, or the
    verifier was not run (the sandbox could not start it: an exit code is the
    sandbox's own). None otherwise (the rewards and the exit code then say why)."""
    if result.inputs.expected is None:
        return None
    if result.task_refused is not None:
        # Short: each face that says it shows the run's notes beside it, the first of which says why.
        return REFUSED_TO_RUN
    if result.outcome is Outcome.COULD_NOT_START:
        return Advice(f"{VERIFIER_NOT_RUN}: ", result.start_error or "")  # its action, when it names one
    return None


def expected_line(result: RunResult) -> str | None:
    if result.inputs.expected is None:
        return None
    want = expectation_json(result.inputs.expected)
    why = missed_for(result)
    said = f"expected {want}: {'matched' if result.expected_matched else 'DID NOT MATCH'}"
    return Advice(said, ": ", why) if why else said  # why may name an action: each face words it


def near_miss_line(result: RunResult) -> str | None:
    """When the rewards missed ``expected.json`` only by float rounding: by
    how much, and the tolerance that would accept it (exact is the default)."""
    misses = result.near_misses()
    if not misses:
        return None
    shown = ", ".join(
        f"{key_shown(key)} {got!r} vs {want!r} (off by {abs(got - want):.2g})" for key, (got, want) in misses.items()
    )
    return (
        f"only float rounding: {shown}; expected.json compares exactly unless it gives a tolerance, "
        'such as "tolerance": 1e-9'
    )


def run_notes(result: RunResult, show_path: Callable[[str], str] = here) -> list[str]:
    """A run's own notes, then those on the task's modules that another of the same name keeps
    out (a standard-library module shadowed; one --preload imported first, which Harbor never
    does): ``run`` prints them all, ``--json`` has them, and ``test`` says them under a case that
    failed, where they are often why (``test --preload`` fails every case the preload changed).
    ``show_path`` shows a path as the face does."""
    return [*result.notices, *shadow_lines(result.explain, show_path)]


def notices(session: Session, result: RunResult | None = None, show_path: Callable[[str], str] = here) -> list[str]:
    """The session's notes, and with ``result`` those of that run, each once."""
    own = session.notices(result)  # a mode of --both-modes: as they stand for its response
    if result is not None and session.case is not None and result.inputs.case != session.case.name:
        # Another case than the session's (``test``): that case's problems, not the session's case's; the
        # task's, the verifier's and the runner's, as every case ran with them.
        case = session.task.case(result.inputs.case) if result.inputs.case else None
        own = session.task_notices()
        own += [Advice(f"case {case.name}: ", p) for p in case.problems] if case else []
    seen: list[str] = []
    for notice in own + (run_notes(result, show_path) if result else []):
        if notice not in seen:
            seen.append(notice)
    return seen


def both_modes_lines(
    session: Session, both: BothModes, show_path: Callable[[str], str] = here, word: Callable[[str], str] = str
) -> list[str]:
    """What ``run --both-modes`` says under its title and the TUI's b in its
    banner: the notes every mode has, once; each mode's verdict with its own
    notes, its contract problems and its expected.json line (the mode that is
    the case's own run); the finding last. ``word`` puts the engine's advice
    in the face's words, ``show_path`` a path."""
    from verifier_tui.engine.both_modes import works

    ran = [result for result in (both.server, both.harbor) if result is not None]
    noted = {id(result): notices(session, result, show_path) for result in ran}
    # What run says as notes (a plain test.sh task, which Harbor runs instead of this verifier;
    # no workspace): those of every mode once, above; a mode's own, under it (the case's
    # expected.json not applied to the run with the user's --response is the server mode's).
    above = [note for note in noted[id(ran[0])] if all(note in noted[id(r)] for r in ran)]
    lines = [f"note: {one_line(word(note))}" for note in above]
    for mode, result in (("server", both.server), ("harbor", both.harbor)):
        mark, label = {True: "✓", False: "✗", None: "-"}[works(result)], mode_text(mode)
        if result is None:
            # One line: the reason names the case, a folder's name that may hold a line break.
            lines.append(f"{mark} {label}: not run: {unbroken(word(both.server_skipped or ''))}")
            continue
        lines.append(f"{mark} {label}: {word(result.outcome_words)} · {word(verdict_line(result))}")
        lines += [f"    note: {one_line(word(note))}" for note in noted[id(result)] if note not in above]
        lines += [f"    contract: {word(p)}" for p in (result.explain.problems if result.explain is not None else ())]
        expected = expected_line(result)
        if expected is not None:
            lines.append(f"    {word(expected)}")
    lines.append(unbroken(word(both.summary())))  # whole: a reward's key may be long, and it is the verdict
    return lines


def mode_text(mode: str) -> str:
    """The mode's name and what it means for ``response``."""
    return f"{MODE_NAMES[mode]} ({'with a response' if mode == 'server' else 'no response'})"


def missing_nemo_gym_hint(result: RunResult) -> str | None:
    """When the verifier failed on ``import nemo_gym`` and no copy was vendored:
    where to get one (the sandbox's shim vendors it from NeMo Gym)."""
    if "No module named 'nemo_gym" not in result.stderr.text:
        return None
    found = result.explain.modules.get("nemo_gym.verifiers") if result.explain is not None else None
    if found is not None and found.resolved:
        return None
    return Advice(
        f"nemo_gym is not installed for {result.inputs.python}, so nothing was vendored beside the runner: "
        "install NeMo Gym for that interpreter, or ",
        PYTHON_OPTION,
        " naming another, or ",
        NEMO_GYM_COPY,
    )


def runner_words(session: Any) -> str | None:
    """The header's word on the runner, when the task ships one of its own
    (tests/.ng/run_verifier.py): which runner runs, and whether the task's is
    the same as ours. None when the task ships none (nothing to say)."""
    own = session.task.own_runner
    if own is None:
        return None
    if session.runner == "task":
        return "task's own runner"
    return "our runner (= the task's)" if own.same_as_ours else "our runner (the task's differs)"


def preload_words(session: Any) -> str | None:
    """The header's word on ``--preload`` (None when off)."""
    preload = session.options.preload
    return f"preloads {', '.join(preload)}" if preload else None


def shadow_lines(explain: Explanation | None, show_path: Callable[[str], str]) -> list[str]:
    """The task's own files that shadow the standard library, or that a module
    imported as the run started keeps from being imported, as sentences."""
    from verifier_tui.engine.diagnosis import shadow_text, shadows

    return [shadow_text(s, show_path) for s in shadows(explain)]


def stuck_line(stack: Stack | None, show_path: Callable[[str], str]) -> str | None:
    """Where a run that timed out was stuck, in a line: the innermost frame of
    the runner's stack dump in the verifier's own files (``show_path`` shows
    a path as the face does). None for a run that did not time out."""
    if stack is None:
        return None
    at = stack.stuck_at
    if at is not None:
        where = at_line(show_path(at.path), at.line)
        if at.function == "<module>":
            return f"stuck at {where}, in top-level code: importing it never finished"
        return f"stuck at {where} in {at.function}"
    if stack.refused is not None:
        # A name in the verifier's folder the run gave, through a link out of it (or no file): not "outside", and
        # not where it was either (the staged copy has no such file).
        at = stack.refused
        return (
            f"where it was stuck is not known: its stack dump names {at_line(show_path(at.path), at.line)} in "
            f"{at.function}, no file of the verifier's own (a link out of its folder, or not a file)"
        )
    if stack.text:
        top = stack.frames[0] if stack.frames else None
        return "stuck outside the verifier's files" + (
            f", at {at_line(show_path(top.path), top.line)} in {top.function}" if top is not None else ""
        )
    return Advice("where it was stuck is unknown: ", stack.unavailable or "")


# -- Long things, cut where they are shown ------------------------------------------------
# Shown whole, a reward of 100,000 keys freezes the TUI for seconds and prints a
# 2 MB line; a huge sys.path or warning list does the same on a smaller scale. The screen
# and the text output show the start and say how much more there is; --json
# keeps everything.

#: Rows of a list (sys.path, warnings, verify's parameters) shown before a "N more" line.
LISTED = 50
#: Lines and characters of a file's text (a reward file) shown before a "N more" line.
TEXT_LINES = 40
TEXT_CHARS = 2000
#: Where the headless text output points for the whole: an action, as the pytest
#: plugin, which reports with these lines, has no --json.
IN_JSON = Advice(of_test("--json lists them all"))
#: The same, for the rest of a file's text.
JSON_HAS_THEM = Advice(of_test("--json has them"))


def more_text(count: int, noun: str, where: str = IN_JSON) -> str:
    """The line that ends a cut list: ``… 99,981 more keys (--json lists them all)``."""
    return Advice(f"… {count:,} more {noun} (", where, ")")


def text_head(text: str) -> tuple[str, str | None]:
    """The start of a long text (at most :data:`TEXT_LINES` lines and :data:`TEXT_CHARS`
    characters) and what is left out in words ("12 more lines", "3,000 more
    characters"); None when nothing is."""
    head = "\n".join(text[:TEXT_CHARS].split("\n")[:TEXT_LINES])
    rest = text[len(head) :]
    if not rest.strip():
        return text, None
    if "\n" in rest:
        return head, f"{len(rest.strip(chr(10)).split(chr(10))):,} more lines"
    return head, f"{len(rest):,} more characters"


def text_tail(captured: CapturedText, chars: int) -> str:
    """The end of a long output, where its traceback is, as a report keeps it:
    its last lines, at most ``chars`` characters from the start of a line,
    after the line a capture puts where it drops output (:func:`dropped_marker`)
    saying how many bytes the run wrote before them, those the capture itself
    dropped included; the whole text when it is that short. The bare last
    characters began mid-line, with no word that anything was left out.
    A report's first line at the end of the line the window cuts is kept
    too, as the reader splits it (:func:`.runner_output.tail_start`):
    after output the run left unfinished (10 MB of it) Python's header goes
    on from it, ``xxx…xxxTraceback (most recent call last):``, and the kept
    end began at the frame below it."""
    text = captured.text
    if len(text) <= chars:
        return text
    start = len(text) - chars
    # a report's first line the window cuts is kept whole if short (a header, the runner's line: at most a
    # quarter of the window more)
    start = tail_start(text, start, chars // 4)
    if start == 0:
        return text  # nothing left out: no line saying so
    head = len(captured.head)
    if captured.dropped_bytes and start >= head:  # the capture's own cut, left out too, its line with it
        tail = len(text) - len(captured.tail)
        start = max(start, tail)
        before = _printed(captured.head) + captured.dropped_bytes + _printed(text[tail:start])
    else:
        before = _printed(text[:start])
    return f"{dropped_marker(before, 'bytes')}\n{text[start:]}"


def _printed(text: str) -> int:
    """How many bytes the run printed for ``text``, as a capture decoded them:
    each byte that was not UTF-8 is one U+FFFD here (three bytes in UTF-8)."""
    return len(text.encode("utf-8", "surrogatepass")) - 2 * text.count("\ufffd")


def expectation_json(expected: Any) -> str:
    """A case's expected.json in one line, its rewards cut as :func:`rewards_json` cuts them."""
    data = expected.to_json()
    if expected.rewards is None:
        return json.dumps(data)
    rewards, _left_out = rewards_json(expected.rewards)
    rest = json.dumps({k: v for k, v in data.items() if k != "rewards"})[1:-1]
    return f'{{"rewards": {rewards}{", " + rest if rest else ""}}}'


def given_limits(session: Session, result: RunResult | None) -> Any:
    """The session's limits as ``result`` (the run shown; None: none yet) got
    them: a network its helper could not give (the note says why) is
    ``lost``, not the internet. ``run``'s limits line and the TUI's header
    both say it from here."""
    limits = session.limits()
    ran = (result.limits if result is not None else None) or {}
    # Lost only by a run that itself asked for the internet: the session's
    # limits are task.toml's now (edited since, or an older run shown), and a
    # run under network_mode = "no-network" got none as it asked.
    asked = ran.get("network") != "no-network"
    if limits.network_given == "user" and asked and ran.get("network_given") == "none":
        from verifier_tui.engine.record import replace

        return replace(limits, network_given="lost")
    return limits


def limits_words(limits: Any, *, namespace: bool, short: bool = False) -> str | None:
    """The task's limits as the run gets them (``engine/sandbox/view.py``):
    ``1024 MB · 1 CPU · no network`` (``short``: the TUI's header, only what
    the task sets or the run lacks), or the whole line the headless commands
    print, which says how each is applied."""
    if limits is None:
        return None
    parts = []
    if limits.memory_mb is not None:
        memory = f"{limits.memory_mb} MB"
        # Measured, the bound misses what only a cgroup charges: sockets' and pipes' buffers, which no
        # rlimit or /proc file bounds or counts, so a run can hold far past memory_mb in them. The copy
        # sandbox always measures.
        measured = " (measured, without a cgroup: socket and pipe buffers not counted)"
        how = " (a memory cgroup)" if namespace and "memory" in limits.cgroup else measured
        parts.append(memory if short else memory + how)
    if limits.cpus is not None:
        from verifier_tui.engine.sandbox.view import cpus_given, cpus_text

        # Harbor's cpus is a quota of CPU time: a cgroup's, else as many CPUs bound, else none
        # (engine/sandbox/view.py): what the run gets of them, and the task's count when it differs
        gets, how = cpus_given(limits.cpus, limits.cgroup)
        cpus = cpus_text(gets or 0)
        asked = f"the task asks {format_number(limits.cpus)}; " if gets != limits.cpus else ""
        applied = {
            "quota": "a quota, as Docker's",
            "bound": "as affinity, not a quota",
            "unbound": "not bound: all of this machine's",
        }[how]
        if short:
            parts.append(cpus + (f" ({format_number(limits.cpus)} asked)" if asked else ""))
        else:
            parts.append(f"{cpus} ({asked}{applied})")
    if limits.storage_mb is not None and not short:
        parts.append(f"storage {limits.storage_mb} MB (" + ("on /tmp only)" if namespace else "not applied)"))
    network = network_words(limits, namespace=namespace, short=short)
    if network:
        parts.append(network)
    if short:
        return " · ".join(parts) or None
    if namespace:
        parts.append(f"starts in {limits.workdir}")
        if limits.app != "/app":
            parts.append(f"workspace at {one_line(limits.app)}")  # a CRLF test.sh's path ends in \r
    return "limits: " + " · ".join(parts) if parts else None


def network_words(limits: Any, *, namespace: bool, short: bool = False) -> str | None:
    """The network a run has, beside the task's ``network_mode``
    (``engine/sandbox/network.py``); None for the usual (the internet, as
    the task asks), in the short form."""
    mode = limits.network
    if not namespace:
        return "no-network not applied" if mode == "no-network" else None
    given = limits.network_given
    if given == "host":
        return "this machine's network (--network host)"
    if mode == "no-network":
        return "no network"
    if given == "lost":  # the helper is there, and failed this run
        return f"no network (network {mode}: slirp4netns failed this run" + (")" if short else "; the note says why)")
    if given == "none":
        from verifier_tui.engine.sandbox.network import INSTALL

        return f"no network (network {mode}: slirp4netns is not installed" + (")" if short else f"; {INSTALL})")
    if mode == "allowlist":
        return "network allowlist (not applied)"
    return None if short else "network public (user-mode)"


def python_words(probe: Any) -> str | None:
    """A probed ``--python``'s problem (``probe_interpreter``'s answer) as every
    face says it, in one line (None: it can run the runner)."""
    return None if probe.error is None else f"--python {probe.error}"


def unlisted_job(path: Path | str, why: str, side: str | None = None) -> str:
    """A job folder that cannot be listed, as every face says it: by its side
    in a comparison (A or B) and its path as the TUI shows paths (from where
    the tool was started): two jobs of one name in two runs folders are told
    apart (the compare screen named it by its folder's name alone, the job
    overview "the job folder", compare "PATH: why")."""
    return f"job {f'{side} ' if side else ''}{here(path)} cannot be listed: {why}"


def side_of(filename: object, a: Path, b: Path) -> tuple[str, Path] | None:
    """Which of two compared jobs an OSError's ``filename`` is (or is in): its
    letter and folder; None when it is neither."""
    import os

    if filename is None:
        return None
    failed = Path(os.fsdecode(filename))  # type: ignore[arg-type]
    for letter, folder in (("A", a), ("B", b)):
        if failed == folder or folder in failed.parents:
            return letter, folder
    return None
