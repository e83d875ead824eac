"""The engine's plain data: what a run was asked to do and what came of it.

Everything here is a frozen or plain record (see
:mod:`verifier_tui.engine.record`) with a ``to_json`` where it travels to
``--json`` output, so the TUI, the headless commands and the tests read one shape.
"""

from __future__ import annotations

import re
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

from verifier_tui.engine.advice import Advice
from verifier_tui.engine.plain import unbroken
from verifier_tui.engine.record import AsJson, field, record

if TYPE_CHECKING:
    from typing import Any

    from verifier_tui.engine.coverage import Coverage
    from verifier_tui.engine.readback import Explanation

#: How the runner starts each line it writes of its own (run_verifier.PROG).
RUNNER_PREFIX = "run_verifier: "
#: How the runner starts the one line it writes on a contract error (exit 2), its cause after it.
CONTRACT_PREFIX = RUNNER_PREFIX + "error: "
#: A line number as Python's traceback or a shell prints one (a C int, ten digits at most): a longer run
#: of digits in what a run printed names no line, and ``int()`` refuses text past 4,300 digits.
LINE_NUMBER = r"\d{1,10}(?!\d)"


def line_number(digits: str) -> int | None:
    """A frame's line as printed, ``digits`` any run of them: None past :data:`LINE_NUMBER`, a line no file
    has, where the frame is still the one the run named (not one to pass over for the frame that called it)."""
    return int(digits) if re.fullmatch(LINE_NUMBER, digits) else None


def at_line(shown: object, line: int | None) -> str:
    """``shown:line``, or ``shown`` alone where the run printed no line a file can have."""
    return str(shown) if line is None else f"{shown}:{line}"


# The runner's words before what verify returned: its line names the value right after them.
_RETURNED = CONTRACT_PREFIX + "verify returned "
# In the runner's line, the next place of the prefix, or the next quote that opens a value the runner's words
# put there (write_reward's `verify returned %s`, `value for %r`, `...: %s`); and, for each quote, the rest
# of the literal it opens (its escapes skipped).
_VALUE_OR_PREFIX = re.compile(re.escape(CONTRACT_PREFIX) + r"|(?:verify returned |value for |: )(?=['\"])")
_LITERAL_END = {quote: re.compile(rf"(?:\\.|[^{quote}\\])*{quote}", re.DOTALL) for quote in "'\""}


def contract_line_at(line: str) -> int:
    """Where the runner's contract error line starts in ``line`` (-1: it holds
    none). A line that starts with the prefix is the runner's whole (what
    verify returned, in its words, may name the prefix again:
    ``verify returned 'run_verifier: error: ...' (str)``). Else the runner
    wrote it where the output stood: after a line verify left unfinished
    (``sys.stderr.write("0;")``) it goes on from that,
    ``0;run_verifier: error: ...``, as Python's own report does; that
    unfinished output is verify's and may name the prefix itself
    (``log: run_verifier: error: can't read -- ``), so a later place of the
    prefix starts the line, but not one inside the value a ``verify
    returned`` line before it names: quoted (a returned str's repr, read to
    its closing quote; a quote in verify's own words opens nothing), or
    not (an object's repr, ``Score(run_verifier: error: fine)``), where only
    a place that goes on ``verify returned`` itself starts the line."""
    at = 0 if line.startswith(CONTRACT_PREFIX) else line.find(CONTRACT_PREFIX)
    if at <= 0:
        return at
    index = at + len(CONTRACT_PREFIX)
    while (found := _VALUE_OR_PREFIX.search(line, index)) is not None:
        index = found.end()
        returned = line.startswith(_RETURNED, at)  # the line so far names a value; any other is verify's words
        if found.group() == CONTRACT_PREFIX:
            if not returned or line.startswith(_RETURNED, found.start()):
                at = found.start()
            continue
        if not returned or (found.group() == "verify returned " and found.start() != at + len(CONTRACT_PREFIX)):
            continue  # no place of the runner's for a value: a quote there is plain text
        closed = _LITERAL_END[line[index]].match(line, index + 1)
        if closed is None:
            break  # a value quoted to the line's end (the runner shortens a long repr): no later line starts in it
        index = closed.end()
    return at


def returned_wrong(stderr: str) -> str | None:
    """What was wrong with what verify returned, as the runner's last contract
    error message in ``stderr`` says (``verify returned 'pass' (str); it must
    return ...``), on one line, else None. (A problem found before verify was
    called is the explanation's, shown with the bindings.)"""
    lines = stderr.splitlines(keepends=True)
    starts = [(index, at) for index, line in enumerate(lines) if (at := contract_line_at(line)) >= 0]
    if not starts:
        return None
    index, at = starts[-1]
    said = lines[index][at + len(CONTRACT_PREFIX) :]
    # A repr may break over lines (pandas', numpy's: _short_repr keeps a break, within its 120 characters).
    # Only a message whose end is known is read on, to the line closing it (a value's with its type, one
    # naming its rule with that rule): past it, what follows is other output (an atexit handler's,
    # test.sh's), never the message's. A key's is one line (older runners: ended by its bare repr).
    ends = _ENDS_WITH_TYPE if said.startswith(_VALUE_NOT_A_NUMBER) and _NOT_A_NUMBER in said else _ENDS_WITH_RULE
    if not said.startswith(_KEY_NOT_A_STRING) and not ends.search(said):
        rest = lines[index + 1 : index + 1 + _REPR_LIMIT]
        end = next((n for n, line in enumerate(rest) if ends.search(line)), None)
        more = rest[: end + 1] if end is not None else []
        if sum(map(len, more)) <= 4096 and not any(line.startswith(RUNNER_PREFIX) for line in more):
            said = "".join([said, *more])
    said = said.strip()
    return unbroken(said) if said.startswith("verify returned") else None


# run_verifier.write_reward's messages that name a rule, after "; " at their end: an empty dict's, whole, and
# `verify returned %s; <rule>` for a value neither a number nor a dict. Its message for a key that is not a
# string ends with the key's repr and type on one line instead (a runner vendored before: its repr alone, to
# its first line), a repr verify controls, which may hold either rule's words.
_EMPTY_DICT = ("verify returned an empty dict", "a reward dict needs at least one number")
_NOT_A_REWARD = "it must return a finite number (int or float, not bool) or a dict of them"
_REPR_LIMIT = 120  # run_verifier._short_repr's: the most lines a repr can break a message over
# write_reward's messages for a dict's key that is no str and a value that is no number: they end `REPR (TYPE)`
_KEY_NOT_A_STRING = "verify returned a dict with a key that is not a string: "
_VALUE_NOT_A_NUMBER = "verify returned a dict whose value for "
_NOT_A_NUMBER = " is not a finite number: "
_ENDS_WITH_TYPE = re.compile(r" \(\w+\)\s*$")
_ENDS_WITH_RULE = re.compile(re.escape(f"; {_NOT_A_REWARD}") + r"\s*$")


def returned_and_rule(cause: str) -> tuple[str, str | None]:
    """The runner's ``verify returned ...`` message (:func:`returned_wrong`) as
    (what verify returned, the rule it broke; None where it names none). Cut
    only where the message of that shape puts the runner's wording of a rule,
    never at the first "; ": the str verify returned, or a key of its dict,
    may hold one (or a rule's words)."""
    if cause == "; ".join(_EMPTY_DICT):
        return _EMPTY_DICT
    if cause.endswith(f"; {_NOT_A_REWARD}") and not cause.startswith(_KEY_NOT_A_STRING):
        return cause[: -len(_NOT_A_REWARD) - 2], _NOT_A_REWARD
    return cause, None


class Outcome(str, Enum):
    """What happened to a run, in the words the user sees."""

    REWARD_WRITTEN = "reward written"
    NO_REWARD = "no reward"  # exit 0, yet the reward folder gives Harbor nothing to score
    VERIFIER_RAISED = "verifier raised"
    CONTRACT_ERROR = "contract error"
    TIMED_OUT = "timed out"
    KILLED = "killed by a signal"
    UNEXPECTED_EXIT = "unexpected exit code"
    COULD_NOT_START = "could not start"
    # The shim's test.sh found no Python 3.8 or newer: exit 127, runner never started.
    REFUSED_BY_SHIM = "refused by test.sh"
    # A trial replay through the task's test.sh: a command of the script failed and it
    # ended before it started the runner (Harbor 0.26.0 discards test.sh's exit code).
    TEST_SH_ENDED = "test.sh ended before the runner"

    @property
    def slug(self) -> str:
        return self.name.lower()


@record(frozen=True)
class CapturedText:
    """A bounded capture of one output stream: the head, the tail, and how many
    bytes were dropped between them (0 when everything was kept)."""

    head: str = ""
    tail: str = ""
    dropped_bytes: int = 0
    total_bytes: int = 0

    @property
    def text(self) -> str:
        if not self.dropped_bytes:
            return self.head + self.tail
        return f"{self.head}\n{dropped_marker(self.dropped_bytes, 'bytes')}\n{self.tail}"

    @property
    def truncated(self) -> bool:
        return self.dropped_bytes > 0


def dropped_marker(count: int, unit: str) -> str:
    """The line that stands where output was cut: bytes in a capture (what
    ``run`` prints), lines in the TUI's output panel; the same words in both."""
    return f"[... {count:,} {unit} of output dropped here by verifier-tui ...]"


@record(frozen=True)
class RewardFile(AsJson):
    """One reward file as found in the reward folder after the run."""

    name: str  # "reward.json" or "reward.txt"
    kind: str  # "file", "folder", "link", "other"
    target: str | None = None  # a link's: where it points (never read), made harmless to show
    size: int = 0
    text: str | None = None  # decoded text (size-capped); None when not a regular file
    is_utf8: bool = True
    truncated: bool = False


UNKNOWN = "unknown"
"""``Verdict.error`` when Harbor's verdict cannot be known here: a reward file
(or the reward folder) is a link, which Harbor would follow inside its
container and the tool never reads (``message`` names the link), or a file
too big for the tool to parse."""


@record(frozen=True)
class Verdict:
    """What Harbor would score from the reward folder, or the error it would raise.

    Exactly one of ``rewards`` and ``error`` is set. ``error`` is the name of
    Harbor's exception (``RewardFileNotFoundError``, ``RewardFileEmptyError``,
    ``VerifierOutputParseError``, ``ValidationError``, or ``VerifierTimeoutError``
    for a run stopped at its timeout; the names are
    :mod:`verifier_tui.engine.verdict`'s); ``message`` says why in words.
    """

    rewards: dict[str, Any] | None
    error: str | None = None
    message: str | None = None
    source: str | None = None  # the file the verdict came from
    warnings: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.rewards is not None

    @property
    def harbor_would(self) -> str:
        """What Harbor would do, when it scores nothing, in a few words."""
        return "Harbor's verdict cannot be known here" if self.error == UNKNOWN else f"Harbor would raise {self.error}"

    @property
    def reward(self) -> float | None:
        """The number Harbor aggregates on (``rewards["reward"]``), when there is one."""
        if self.rewards is None:
            return None
        value = self.rewards.get("reward")
        # An integer past any float is Harbor's reward all the same: compared as an infinity.
        return reward_float(value) if isinstance(value, (int, float)) else None


@record(frozen=True)
class Expectation:
    """A case's ``expected.json``: Harbor-normalised rewards, or an exit code."""

    rewards: dict[str, Any] | None = None
    exit_code: int | None = None
    source: Path | None = None
    tolerance: float | None = None
    """How far each reward may be from the expected number (absolute); None: exactly equal."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.rewards is not None:
            out["rewards"] = self.rewards
        if self.tolerance is not None:
            out["tolerance"] = self.tolerance
        if self.exit_code is not None:
            out["exit_code"] = self.exit_code
        return out


@record(frozen=True)
class StackFrame(AsJson):
    """One frame of a stack dump: the user's path, the line, the function
    (``<module>``: a module's top-level code, the verifier's while it is imported)."""

    path: str
    line: int | None  # None: a line no file has (line_number); 0: faulthandler's ``???``
    function: str


STACK_SIGNAL = "USR1"
"""The signal the runner is asked to dump its stacks on (``--stack-signal USR1``,
:mod:`verifier_tui.engine.stacks`); named here, where every run's command line
is made, so a run that never times out loads nothing of that module."""


@record(frozen=True)
class Stack:
    """Where a run was when it timed out: the runner's stack dump (``--stack-signal``,
    :mod:`verifier_tui.engine.stacks`), or why there is none."""

    text: str = ""
    """The dump as the runner wrote it (every thread), paths mapped to the user's."""
    frames: tuple[StackFrame, ...] = ()
    """The frames of the thread that ran ``verify``, innermost first."""
    stuck_at: StackFrame | None = None
    """The innermost of those in the verifier's own files (the verifier, its helpers)."""
    refused: StackFrame | None = None
    """Without ``stuck_at``: the innermost of those that names a file in the
    verifier's folder that is none of its own (a link out of it, or no
    regular file): the dump is the run's to write, so it is not said to be
    where the run was, but said as what it is, and ``e`` says why it opens nothing."""
    unavailable: str | None = None
    """Why there is no dump (the task's own runner has no ``--stack-signal``, ...)."""


@record(frozen=True)
class ResponseSource:
    """Where a run's ``response`` comes from: a Responses API JSON file, a plain
    text file (wrapped into a minimal response), or text typed in the TUI."""

    path: Path | None  # the user's file; None for typed text
    kind: str  # "json" or "text"
    text: str | None = None  # typed text (kind "json" or "text"), when path is None

    def label(self) -> str:
        if self.path is not None:
            return str(self.path)
        return "(typed in the editor)"


#: The two modes, one name each, wherever a mode is named in words: as a
#: published Harbor task runs (test.sh, never a response) and as NeMo Gym's
#: environment server runs it (with the agent's response). ``--json`` says
#: ``"harbor"`` and ``"server"`` (:attr:`RunResult.mode`).
MODE_NAMES = {"harbor": "Harbor mode", "server": "environment-server mode"}


def timed_out_words(seconds: float) -> str:
    """``after 30 s``; a timeout of 0 or less (or NaN), which Harbor takes as
    it is and gives up at once: ``at once (its timeout is -30 s)``."""
    return f"after {duration_text(seconds)}" if seconds > 0 else f"at once (its timeout is {duration_text(seconds)})"


def duration_text(seconds: float) -> str:
    """Every duration and timeout the user reads, in one style: milliseconds
    under a second (``142 ms``), else seconds to three figures (``6 s``,
    ``6.05 s``, ``12.3 s``, ``1800 s``). The engine's own words use it, and
    the faces through :mod:`verifier_tui.words.run`. A timeout Harbor took
    from a task.toml as it was (inf, NaN, 0 or less) is said as it is."""
    if seconds == float("inf"):
        return "no limit"
    if not seconds >= 0:  # NaN, or less than 0
        return f"{seconds:g} s"
    if seconds < 0.9995:  # what rounds to 1000 ms or more is said in seconds
        return f"{seconds * 1000:.0f} ms"
    return f"{seconds:.0f} s" if 99.95 <= seconds < 1e9 else f"{seconds:.3g} s"


@record(frozen=True)
class RunInputs:
    """What a run was given, the user's own paths: what its result keeps of its ``RunSpec``, not
    the task (each save reloads it, and the TUI's history of results would keep every one alive)."""

    verifier: Path
    case: str | None
    workspace: Path | None  # None: an empty scratch workspace
    response: ResponseSource | None  # None: Harbor mode
    task_data: Path | None
    expected: Expectation | None
    python: str
    timeout_s: float
    task_id: str | None  # task_data is a .jsonl: the verifier gets this row's fields
    step: str | None  # the step of a multi-step task this run is (--step), kept: a reload may drop it


@record
class RunResult:
    """Everything one run produced, with every path already mapped back to the
    user's own files (never the scratch copy)."""

    outcome: Outcome
    exit_code: int | None
    signal: int | None
    duration_s: float  # the runner's own time: from its spawn to its exit
    reward_files: list[RewardFile]
    verdict: Verdict
    stdout: CapturedText
    stderr: CapturedText
    explain: Explanation | None  # how the runner imported and called verify, read back
    inputs: RunInputs
    command: list[str]  # the exact shell command that reproduces this run outside the tool
    trigger: str = "start"
    notices: list[str] = field(default_factory=list)
    start_error: str | None = None
    not_staged: bool = False  # refused before the runner ran: its files could not be staged (whole), its view built,
    # or its test.sh is one the runner alone stands for no more (CRLF lines bash runs)
    sequence: int = 0  # this session's run number
    pipe_wait_s: float = 0.0  # after the runner exited, waiting for its output pipes (held by an escaped process)
    phases: list[dict[str, Any]] | None = None  # the runner's --phases-to lines, when the spec asked for them
    task_refused: str | None = None  # why Harbor would refuse to load the task (its task.toml), if it would
    environment: dict[str, Any] | None = None  # what the runner's environment held and where each came from
    sandbox: str = ""  # "namespace" or "copy": how the run was kept apart from the user's files
    sandbox_words: str = ""  # what every face says of that sandbox (Isolation.words), as the run got it
    strays: list[str] = field(default_factory=list)  # command lines of processes the run left running (all ended)
    strays_not_listed: int = 0  # more of them, counted past those listed (isolation.STRAYS_MOST)
    strays_cut_short: bool = False  # their listing was cut short: there were at least as many
    user_files_written: list[str] = field(default_factory=list)  # the user's files changed while it ran (copy sandbox)
    stack: Stack | None = None  # a run that timed out: where it was stuck
    tests_dirs: tuple[Path, ...] = ()  # the user's folders the run's /tests mirrored (a step's own tests/ first)
    limits: dict[str, Any] | None = None  # the task's limits and the sandbox's paths as the run got them
    out_of_memory: list[str] = field(default_factory=list)  # processes killed past memory_mb, as the OOM killer would
    verdict_by: str = "runner"  # "test.sh": a trial replay that ran the task's test.sh, as the sandbox did
    runner_verdict: dict[str, Any] | None = None  # then: how verifier-tui's runner, run beside it, ended
    coverage: Coverage | None = None  # the task's own lines that ran, when the spec asked for them

    @property
    def mode(self) -> str:
        return "server" if self.inputs.response is not None else "harbor"

    @property
    def setup(self) -> tuple[str | None, Path]:
        """What decided the tests this run ran: its step and its verifier (another of
        either runs other tests: its verdict says nothing of how the case goes under these)."""
        return self.inputs.step, self.inputs.verifier

    @property
    def stuck_at(self) -> StackFrame | None:
        """Where a run that timed out was stuck, in the verifier's own files
        (None: it did not time out, or no frame of them was on the stack)."""
        return self.stack.stuck_at if self.stack is not None else None

    @property
    def copy_sandbox(self) -> str | None:
        """What is said of a run in the copy sandbox (why, and that it could
        write the user's files), from the run's own record; None: it ran in
        the sandbox's view. Never asked of the machine again: its answer may
        have changed since the run."""
        return self.sandbox_words if self.sandbox == "copy" else None

    @property
    def outcome_words(self) -> str:
        """The exit code in words, as the user reads it."""
        if self.outcome is Outcome.TIMED_OUT:
            return f"timed out {timed_out_words(self.inputs.timeout_s)}"
        if self.outcome is Outcome.KILLED:
            return f"killed by signal {self.signal}"
        if self.outcome is Outcome.COULD_NOT_START:
            return Advice("could not start: ", self.start_error or "")  # its action, when it names one
        if self.outcome is Outcome.UNEXPECTED_EXIT:
            return f"exit {self.exit_code}: not a runner exit code"
        if self.outcome is Outcome.NO_REWARD:
            return f"exit 0 · no reward: {self.verdict.harbor_would}"
        cause = self.contract_cause
        if cause is not None:  # what the user must change, before what Harbor would make of it
            return f"exit {self.exit_code} · {self.outcome.value}: {returned_and_rule(cause)[0]}"
        return f"exit {self.exit_code} · {self.outcome.value}"

    @property
    def contract_cause(self) -> str | None:
        """A contract error's cause when it was what verify returned, in the
        runner's words (:func:`returned_wrong`); None for any other outcome."""
        return returned_wrong(self.stderr.text) if self.outcome is Outcome.CONTRACT_ERROR else None

    @property
    def expected_matched(self) -> bool | None:
        """Whether the case's ``expected.json`` matched (None without one).
        The one rule every face reads (test, run, the TUI, audit, the plugin)."""
        expected = self.inputs.expected
        if expected is None:
            return None
        if self.task_refused is not None:
            # Harbor would not load the task (its TaskConfig raises): it would run no verifier and read no
            # reward, so no expectation of a case holds, whatever the reward folder gives here.
            return False
        if self.outcome is Outcome.COULD_NOT_START:
            # The verifier never ran: an exit code here is the sandbox's own (bwrap's 1 when it cannot
            # exec), no verdict of the verifier's, so no expectation of a case holds.
            return False
        if expected.exit_code is not None and self.exit_code != expected.exit_code:
            return False
        if expected.exit_code == 0 and self.verdict.rewards is None:
            return False  # exit 0 promises a reward Harbor scores; it would score none
        if expected.rewards is not None:
            return self.verdict.rewards is not None and same_rewards(
                self.verdict.rewards, expected.rewards, expected.tolerance
            )
        return True

    def near_misses(self) -> dict[str, tuple[float, float]]:
        """When the rewards failed ``expected.json`` only by float rounding
        (each differs by less than :data:`NEAR_MISS` and there is no
        tolerance): each such key's (got, expected). Empty otherwise."""
        expected = self.inputs.expected
        actual = self.verdict.rewards
        if (
            expected is None
            or expected.rewards is None
            or expected.tolerance is not None
            or actual is None
            or self.expected_matched is not False
            or self.task_refused is not None  # missed for the refusal, not for a rounding (words.run.missed_for)
            or not same_rewards(actual, expected.rewards, NEAR_MISS)
        ):
            return {}
        return {
            key: (float(actual[key]), float(value))
            for key, value in expected.rewards.items()
            if float(actual[key]) != float(value)
        }

    @property
    def exit_status(self) -> int:
        """The status the headless ``run`` command exits with (README and
        docs/json-output.md): the runner's exit code, except where the reward
        folder or the task tells another story. A task Harbor would refuse to
        load gives 2 (bad input, whatever the run did), and so does a run refused
        because its files could not be staged whole or its view could not be
        built. Exit 0 without a usable
        reward file gives 1: the verifier ended the run itself, which is what
        the runner reports with 1 when it can (``sys.exit`` inside ``verify``)."""
        if self.task_refused is not None:
            return 2
        # (verdict.VERIFIER_TIMEOUT, spelt out: that module imports this one) The latter:
        # a task.toml timeout_sec at which Harbor stops the verifier before it runs.
        if self.outcome is Outcome.TIMED_OUT or self.verdict.error == "VerifierTimeoutError":
            return 124
        if self.outcome is Outcome.NO_REWARD or (self.outcome is Outcome.TEST_SH_ENDED and not self.exit_code):
            return 1
        if self.outcome is Outcome.COULD_NOT_START:
            return 2 if self.not_staged else 127
        if self.signal is not None:
            return 128 + self.signal
        return self.exit_code if self.exit_code is not None else 2

    def to_json(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome.slug,
            "outcome_words": self.outcome_words,
            "exit_code": self.exit_code,
            "signal": self.signal,
            "rewards": self.verdict.rewards,
            "verdict_error": self.verdict.error,
            "verdict_message": self.verdict.message,
            "verdict_source": self.verdict.source,
            "warnings": list(self.verdict.warnings),
            "reward_files": [f.to_json() for f in self.reward_files],
            "stdout": self.stdout.text,
            "stderr": self.stderr.text,
            "stdout_dropped_bytes": self.stdout.dropped_bytes,
            "stderr_dropped_bytes": self.stderr.dropped_bytes,
            "duration_s": round(self.duration_s, 4),
            "pipe_wait_s": round(self.pipe_wait_s, 4),
            **self._resolution_json(),
            "case": self.inputs.case,
            "verifier": str(self.inputs.verifier),
            "workspace": str(self.inputs.workspace) if self.inputs.workspace else None,
            "response": self.inputs.response.label() if self.inputs.response else None,
            "task_data": str(self.inputs.task_data) if self.inputs.task_data else None,
            "task_id": self.inputs.task_id,
            "mode": self.mode,
            "python": self.inputs.python,
            "timeout_s": self.inputs.timeout_s,
            "expected": self.inputs.expected.to_json() if self.inputs.expected else None,
            "expected_matched": self.expected_matched,
            "command": self.command,
            "trigger": self.trigger,
            "notices": self.notices,
            "harbor_refuses_task": self.task_refused,
            "environment": self.environment,
            "sandbox": self.sandbox,
            "strays": list(self.strays),
            "strays_not_listed": self.strays_not_listed,
            "strays_cut_short": self.strays_cut_short,
            "user_files_written": list(self.user_files_written),
            "stuck_at": self.stuck_at.to_json() if self.stuck_at else None,
            "stack": (self.stack.text or None) if self.stack else None,
            "stack_unavailable": self.stack.unavailable if self.stack else None,
            "limits": self.limits,
            "out_of_memory": list(self.out_of_memory),
            "verdict_by": self.verdict_by,
            "runner_verdict": self.runner_verdict,
        }

    def _resolution_json(self) -> dict[str, Any]:
        """What the runner's explain document says in the run document."""
        explain = self.explain
        if explain is None:
            return dict.fromkeys(("sys_path", "modules", "signature", "arguments", "problems"))
        return {
            "sys_path": [row.to_json() for row in explain.sys_path],
            "modules": {name: info.to_json() for name, info in explain.modules.items()},
            "signature": explain.verify.signature if explain.verify is not None else None,
            "arguments": [row.to_json() for row in explain.parameters],
            "problems": list(explain.problems),
        }


NEAR_MISS = 1e-9
"""Rewards this close to ``expected.json``'s that are not equal: float
rounding (``0.1 + 0.2``), said with a hint to give a tolerance."""


def same_number(a: Any, b: Any) -> bool:
    """Two reward numbers equal as Harbor's numbers (1 == 1.0; two integers
    past any float exactly); False for what is no number."""
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    try:
        return reward_float(a) == reward_float(b)
    except (TypeError, ValueError):
        return False


def reward_float(value: Any) -> float:
    """A reward number as a float, an integer past any float as an infinity:
    Harbor keeps such an integer (JSON's and pydantic's ``int``), and comparing
    or averaging it here must not raise. Raises TypeError or ValueError for
    what is no number."""
    try:
        return float(value)
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")


def same_rewards(actual: dict[str, Any], expected: dict[str, Any], tolerance: float | None = None) -> bool:
    """Rewards compare as Harbor's numbers: 1 == 1.0, keys must match exactly;
    each number exactly equal, or within ``tolerance`` (absolute) when
    ``expected.json`` gives one. Harbor itself compares nothing: exact is the
    default, so a test says what it means."""
    if set(actual) != set(expected):
        return False
    if tolerance is None:
        return all(same_number(actual[key], value) for key, value in expected.items())
    for key, value in expected.items():
        if isinstance(actual[key], int) and isinstance(value, int):  # exactly, as same_number: two ints
            if not abs(actual[key] - value) <= tolerance:  # past any float are not both inf (inf - inf is nan)
                return False
            continue
        try:
            if not abs(reward_float(actual[key]) - reward_float(value)) <= tolerance:
                return False
        except (TypeError, ValueError):
            return False
    return True
