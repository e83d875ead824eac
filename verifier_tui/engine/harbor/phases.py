"""The runner's phases as steps, one model for both sides of a trial.

The names are the runner's own (``run_verifier.py --phases-to``), so the
sandbox and the local replay line up step by step:

- the local replay's phases are read from the file the runner wrote with
  ``--phases-to`` (one JSON line as each phase ends; ``verify_called`` also
  writes a ``started`` line): :func:`local_phases`. A run killed mid-phase
  (a timeout, a signal) shows the phase it was in as ``stopped``;
- the sandbox's are inferred from ``test-stdout.txt`` and the reward folder
  (:func:`sandbox_phases`): the runner prints nothing until it fails, so a
  phase marked done there is inferred from what came after.

The first step that went wrong carries two sentences: what it means under
Harbor (``explanation``) and what to try next (``advice``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from verifier_tui.engine.advice import OPEN_IN_EDITOR, PYTHON_OPTION, Advice
from verifier_tui.engine.model import UNKNOWN as NOT_KNOWN
from verifier_tui.engine.model import duration_text
from verifier_tui.engine.readback import exception_words
from verifier_tui.engine.record import AsJson, record, replace
from verifier_tui.engine.verdict import NOT_PARSED_PAST, REWARD_FILE_NOT_FOUND, VERIFIER_TIMEOUT, rewards_json

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from verifier_tui.engine.harbor.runner_output import RunnerOutput, RunnerTraceback
    from verifier_tui.engine.model import RunResult, Verdict

PHASES = (
    ("reward_files_cleared", "reward files cleared"),
    ("verifier_found", "verifier found"),
    ("inputs_read", "inputs read"),
    ("sys_path_placed", "sys.path placed"),
    ("module_imported", "module imported"),
    ("arguments_bound", "arguments bound"),
    ("verify_called", "verify called and awaited"),
    ("reward_written", "reward written"),
)
"""The runner's phases in its order (``run_verifier.py``'s ``_run``), with the words the user reads."""
LABELS = dict(PHASES)

DONE, FAILED, STOPPED, NOT_REACHED, UNKNOWN = "done", "failed", "stopped", "not reached", "unknown"
"""``stopped``: the run ended while in this phase (killed, timed out); ``unknown``: nothing tells."""

NO_REWARD = {
    False: f"no reward file: Harbor scores that {REWARD_FILE_NOT_FOUND}",
    True: f"no reward file: Harbor scored this trial with {REWARD_FILE_NOT_FOUND}",
}
"""Keyed by whether the sentence is about the sandbox (what happened) or the replay (what would)."""


@record(frozen=True)
class Phase(AsJson):
    name: str
    label: str
    status: str
    detail: str = ""  # one line
    lines: tuple[str, ...] = ()  # more: the sys.path, the argument table, a traceback's last lines
    data: dict[str, Any] | None = None  # the runner's own line for this phase (the replay only)


@record(frozen=True)
class PhaseReport(AsJson):
    """The phases of one run. ``stopped_at``: the phase that went wrong (a
    phase name; ``test_sh``: test.sh ended before it started the runner; for
    the sandbox also ``python_check``, ``timeout``, ``not_run``,
    ``command_line``), None when the run reached its end or nothing tells.
    ``explanation``: what happened, and what it means under Harbor.
    ``advice``: what to try next ("" when nothing went wrong)."""

    stopped_at: str | None
    explanation: str
    advice: str = ""
    phases: tuple[Phase, ...] = ()

    @property
    def first_wrong(self) -> Phase | None:
        return next((p for p in self.phases if p.status in (FAILED, STOPPED)), None)

    def status_of(self, name: str) -> str:
        return next((p.status for p in self.phases if p.name == name), UNKNOWN)


# --------------------------------------------------------------------------
# What went wrong, in words: the same for both sides.


def contract_phase(message: str) -> str | None:
    """The phase a ``run_verifier: error:`` line stopped at, from the runner's own wording."""
    if message.startswith(("cannot create reward folder", "cannot inspect planted", "cannot remove planted")):
        return "reward_files_cleared"
    if message.startswith("verifier file ") or re.match(r"^verifier .* is not a file$", message):
        return "verifier_found"
    if message.startswith(("--task-data file", "--response file")):
        return "inputs_read"
    if "defines no verify" in message or message.startswith(
        ("verify in ", "cannot read the signature", "verify requires")
    ):
        return "arguments_bound"
    if message.startswith(("verify returned", "cannot write")):
        return "reward_written"
    return None


def _agent_file_missing(kind: str, error: str) -> bool:
    """Whether ``error`` blames the agent: a file verify looked for and did
    not find, outside the tests folder (a file of the tests' own missing, or
    a KeyError in the verifier's own data, is the verifier's to fix: telling
    the author to look at what the agent produced would mislead)."""
    if kind not in ("FileNotFoundError", "IsADirectoryError", "NotADirectoryError"):
        return False
    _, quote, rest = error.rpartition(": '")
    path = rest.rstrip("'") if quote else ""
    return bool(path) and "/tests/" not in f"{path}/" and "/.ng/" not in path


def failure_words(
    phase: str,
    *,
    error: str | None = None,
    problem: str | None = None,
    where: str | None = None,
    sandbox: bool = False,
    opens: bool = True,
) -> tuple[str, str]:
    """``(explanation, advice)`` for a run that failed in ``phase`` with an
    exception ``error`` ("Type: message", exit 1) or a contract ``problem``
    (exit 2). ``where`` is the failing line (``tests/verifier.py:12``);
    ``opens`` False: it is no file here (the sandbox's ``/tests/verifier.py``
    of a task not found), so the advice offers no editor for it;
    ``sandbox``: the sentence tells what Harbor did, not what it would do."""
    no_reward = NO_REWARD[sandbox]
    at = f" at {where}" if where else ""
    edit = (OPEN_IN_EDITOR,) if opens else ()
    if error is not None:
        kind = error.split(":", 1)[0]
        if phase == "module_imported":
            explanation = f"importing the verifier raised {error}: the runner exited 1 without a reward; {no_reward}"
            if kind in ("ModuleNotFoundError", "ImportError"):
                advice = (
                    "a module the verifier imports is not there: put a helper beside the verifier in tests/ "
                    "(that folder is on sys.path), or install the package in environment/Dockerfile"
                )
            elif kind in ("SyntaxError", "IndentationError", "TabError"):
                advice = Advice(f"fix the syntax{at}", *edit)
            else:
                advice = Advice(
                    f"fix the top-level code{at}",
                    *edit,
                    ": it runs when the runner imports the module; keep work that needs the workspace inside verify",
                )
            return explanation, advice
        explanation = f"verify raised {error}: the runner exited 1 without a reward; {no_reward}"
        if _agent_file_missing(kind, error):
            advice = Advice(
                f"a verify that raises scores nothing: check for what the agent may not have produced{at}",
                *edit,
                " and return 0.0 instead of raising",
            )
        else:
            advice = Advice(
                f"fix the error{at}",
                *edit,
                ", or catch it and return 0.0: a verify that raises scores nothing",
            )
        return explanation, advice
    problem = problem or "no details"
    explanation = f"contract error ({problem}): the runner exited 2 without a reward; {no_reward}"
    if phase == "arguments_bound" and "'response'" in problem:
        advice = (
            "Harbor never passes a response: give response a default (def verify(workspace, "
            "response=None)) and score from the workspace, or drop the parameter"
        )
    elif phase == "arguments_bound" and "defines no verify" in problem:
        advice = "define verify at the top level of the verifier module"
    elif phase == "arguments_bound":
        advice = "verify may declare workspace, task_data, response and state; give any other parameter a default"
    elif phase == "reward_written":
        advice = (
            "return a finite number (written to reward.txt) or a dict of numbers with a 'reward' key "
            "(reward.json); not a bool, None, a string or NaN"
        )
    elif phase == "inputs_read":
        advice = "tests/task_data.json must hold one JSON object: fix it or remove it"
    elif phase == "verifier_found":
        advice = "tests/test.sh passes --verifier /tests/...: make it name the verifier file, or put the file there"
    elif phase == "reward_files_cleared":
        advice = "the reward folder (/logs/verifier) must be a writable folder in the sandbox image"
    else:
        advice = "read the runner's message above"
    return explanation, advice


def stopped_words(phase: str, how: str) -> tuple[str, str]:
    """A run that ended while in ``phase``: ``how`` is "timeout N" or words."""
    label = LABELS.get(phase, phase)
    if how.startswith("timeout"):
        seconds = how.split(" ", 1)[1] if " " in how else ""
        return (
            f"the run was still in '{label}' when the timeout ({seconds} s) hit: Harbor scores that {VERIFIER_TIMEOUT}",
            "find what is slow or stuck there, or raise [verifier] timeout_sec in task.toml",
        )
    return (
        f"the run ended while in '{label}' ({how}): {NO_REWARD[False]}",
        "something in the verifier ended the process (os._exit, a crash of the interpreter, a signal)",
    )


def test_sh_words(where: str, message: str, *, sandbox: bool = False) -> tuple[str, str]:
    """A test.sh whose own command failed at ``where`` (``tests/test.sh:9``)
    with the shell's ``message``, and which ended there (``set -e``) before
    it started the runner."""
    return (
        f"{test_sh_ended(where, message)}; {NO_REWARD[sandbox]}",
        f"fix {where}: a command of test.sh itself failed there, so the verifier never ran",
    )


def test_sh_ended(where: str, message: str) -> str:
    return f"test.sh ended at {where} ({message}) before it started the runner"


def hung_words(what: str, limit: str, *, sandbox: bool = False) -> tuple[str, str]:
    """A run whose runner reached its end (``what`` it did: wrote a reward,
    reported a failure) and whose process still did not exit before the
    timeout (``limit``: " (1 s)" or ""). Harbor waits for test.sh, not for
    the reward file, and gives up before reading the folder
    (``Trial._verify_with_timeout``, harbor/trial/trial.py)."""
    did = "stopped it and scored" if sandbox else "stops it and scores"
    return (
        f"{what}, but the process was still running when the timeout{limit} hit: Harbor {did} "
        f"{VERIFIER_TIMEOUT} without reading the reward folder",
        "something the verifier started keeps the interpreter from exiting once verify is over (a thread that "
        "is not a daemon, an atexit handler, a child process it waits for): end it before verify returns",
    )


# --------------------------------------------------------------------------
# The local replay: the runner's --phases-to lines.


def _paths(paths: list[Any]) -> str:
    return ", ".join(str(p) for p in paths)


def _detail(name: str, line: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
    """A done phase's detail and lines, from the runner's line."""
    if name == "reward_files_cleared":
        removed = line.get("removed") or []
        if not removed:
            return "none was there", ()
        return "removed " + ", ".join(
            f"{r.get('name')} (a {r.get('kind')})" for r in removed if isinstance(r, dict)
        ), ()
    if name == "verifier_found":
        return str(line.get("file") or ""), ()
    if name == "inputs_read":
        available = line.get("available") or []
        extra = "" if "response" in available else " (no response: Harbor mode)"
        return "available: " + ", ".join(available) + extra, ()
    if name == "sys_path_placed":
        front: list[str] = []
        for path in line.get("front") or []:
            if path not in front:
                front.append(path)
        return "first " + _paths(front), tuple(f"{i}  {p}" for i, p in enumerate(line.get("sys_path") or []))
    if name == "module_imported":
        return f"module {line.get('module')}", ()
    if name == "arguments_bound":
        return _plan_words(line.get("plan") or [])
    if name == "verify_called":
        awaited = "awaited, " if line.get("awaited") else ""
        kind = str(line.get("result_type"))
        article = "an" if kind[:1].lower() in "aeiou" else "a"  # an int, an object; a float, a dict
        return f"{awaited}returned {article} {kind}", ()
    if name == "reward_written":
        file = str(line.get("file") or "").rsplit("/", 1)[-1]
        removed = line.get("removed") or []
        replaced = (
            (
                " (replacing "
                + ", ".join(str(r.get("name")) for r in removed if isinstance(r, dict))
                + " verify wrote itself)"
            )
            if removed
            else ""
        )
        return f"{file}: {line.get('text')}{replaced}", ()
    return "", ()


def _plan_words(plan: list[Any]) -> tuple[str, tuple[str, ...]]:
    rows = []
    for row in plan:
        if not isinstance(row, dict):
            continue
        binding = row.get("binding")
        if binding == "argument":
            source = row.get("source")
            source = ", ".join(source) if isinstance(source, list) else source
            how = f"{source} ({row.get('passed')})"
        elif binding == "default":
            how = f"keeps its default {row.get('default')}"
        else:
            how = str(binding)
        rows.append(f"{row.get('name')}: {how}")
    return "; ".join(rows) if rows else "verify takes no arguments", tuple(rows)


def _failed_detail(line: dict[str, Any], stderr: str) -> tuple[str, str | None, str | None]:
    """``(detail, error, problem)`` of a failed line. What raised is named as
    the runner's line names it, but for an exception group (an
    ``asyncio.TaskGroup``'s) whose sub-exception is the report stderr reads,
    by the rule the sandbox's side reads test-stdout.txt with
    (:mod:`.runner_output`): ``ValueError: wrong answer``, where the runner's
    line names the group; one failure, one exception on both sides, the one
    whose line is named. Any other report in stderr (an atexit callback's
    after verify raised) is not what the record says raised: it stands."""
    from verifier_tui.engine.harbor.runner_output import group_sub_exception

    error = line.get("error")
    if isinstance(error, dict):
        kind, message = str(error.get("type")), str(error.get("message") or "")
        report = group_sub_exception(stderr, kind, message)
        text = exception_words(*(report or (kind, message)))
        return text, text, None
    problem = str(line.get("problem") or "")
    return problem, None, problem


def recorded_frames(result: RunResult) -> list[tuple[str, int]] | None:
    """Where what raised was raised, as the runner's phase record says
    (``(file, line)``, outermost first), when that record names the run's
    failure (:func:`_failed_detail`'s rule: not a group whose sub-exception
    stderr reads), else None: a report printed after it (an atexit
    callback's) holds another exception's frames."""
    from verifier_tui.engine.harbor.runner_output import group_sub_exception

    failed = [line for line in result.phases or [] if isinstance(line, dict) and line.get("status") == "failed"]
    error = failed[-1].get("error") if failed else None
    if not isinstance(error, dict) or "frames" not in error:
        return None  # no error, or a runner that records no frames: stderr's report is all there is
    if str(error.get("type")) in _PLACED_OUTSIDE_FRAMES:
        return None
    if group_sub_exception(result.stderr.text, str(error.get("type")), str(error.get("message") or "")):
        return None
    # The phase file is in the run's reach (a verify may append to it): a frame of another shape is no place.
    frames = error["frames"] if isinstance(error["frames"], list) else []
    places = [
        (frame["file"], frame["line"])
        for frame in frames
        if isinstance(frame, dict)
        and isinstance(frame.get("file"), str)
        and isinstance(frame.get("line"), int)
        and not isinstance(frame.get("line"), bool)
    ]
    return places or None  # none left (a code object without line numbers): stderr's report is all there is


# Where these were raised is their filename and lineno, in no frame (the import machinery's, left out): stderr's
# report, which prints that place, says it.
_PLACED_OUTSIDE_FRAMES = frozenset({"SyntaxError", "IndentationError", "TabError"})


def local_phases(result: RunResult, *, where: str | None = None, task_root: Path | None = None) -> PhaseReport:
    """The replay's phases from ``result.phases`` (the runner's lines, paths
    mapped). ``where``: the failing line, for the advice. Paths in the task
    are said relative to it (``tests/verifier.py``)."""
    report = _local_phases(result, where) if result.phases is not None else inferred_phases(result, where=where)
    if task_root is None:
        return report
    prefix = str(task_root) + "/"

    def short(text: str) -> str:
        # An Advice is shortened part by part, so that it stays one: each face still words its actions
        # (the plugin its --verifier-python, the TUI its editor key), where a str.replace flattened it.
        if isinstance(text, Advice):
            return Advice(*(p.replace(prefix, "") if isinstance(p, str) else p for p in text.parts))
        return text.replace(prefix, "")

    return replace(
        report,
        explanation=short(report.explanation),
        advice=short(report.advice),
        phases=tuple(
            replace(p, detail=short(p.detail), lines=tuple(short(line) for line in p.lines)) for p in report.phases
        ),
    )


def _local_phases(result: RunResult, where: str | None) -> PhaseReport:
    from verifier_tui.engine.model import Outcome

    if result.outcome is Outcome.COULD_NOT_START:
        return PhaseReport(
            "start",
            f"the replay could not start: {result.start_error}",
            Advice("check the interpreter (", PYTHON_OPTION, ") and the task's tests/ folder"),
            tuple(Phase(name, label, NOT_REACHED) for name, label in PHASES),
        )
    if result.outcome is Outcome.REFUSED_BY_SHIM:  # no step of the runner's: it never started
        return _report(
            None,
            NOT_REACHED,
            "",
            f"test.sh exited {result.exit_code} before it started the runner (the run's notes say why), "
            "so nothing wrote a reward file",
            stopped_at="test_sh",
        )
    lines = result.phases or []
    by_phase: dict[str, list[dict[str, Any]]] = {}
    for line in lines:
        by_phase.setdefault(str(line.get("phase")), []).append(line)
    ended_normally = result.outcome in (Outcome.REWARD_WRITTEN, Outcome.VERIFIER_RAISED, Outcome.CONTRACT_ERROR)
    timeout_s = result.inputs.timeout_s
    phases: list[Phase] = []
    stopped_at: str | None = None
    explanation, advice = "", ""
    for name, label in PHASES:
        if stopped_at is not None:
            phases.append(Phase(name, label, NOT_REACHED))
            continue
        seen = by_phase.get(name, [])
        final = next((line for line in reversed(seen) if line.get("status") in ("ok", "failed")), None)
        if final is not None and final.get("status") == "ok":
            detail, more = _detail(name, final)
            phases.append(Phase(name, label, DONE, detail, more, final))
            continue
        if final is not None:  # failed
            detail, error, problem = _failed_detail(final, result.stderr.text)
            more = tuple(str(p) for p in final.get("problems") or [] if str(p) != problem)
            if final.get("plan"):
                more += _plan_words(final["plan"])[1]
            phases.append(Phase(name, label, FAILED, detail, more, final))
            stopped_at = name
            explanation, advice = failure_words(name, error=error, problem=problem, where=where)
            continue
        if not ended_normally:
            # The run was here when it ended (a started line, or no line at all).
            how = f"timeout {timeout_s:g}" if result.outcome is Outcome.TIMED_OUT else result.outcome_words
            phases.append(
                Phase(
                    name,
                    label,
                    STOPPED,
                    f"still running when the run ended ({result.outcome_words})",
                    (),
                    seen[-1] if seen else None,
                )
            )
            stopped_at = name
            explanation, advice = stopped_words(name, how)
            continue
        # A normal exit with no line: the file was not written (an older runner, a full disk).
        phases.append(Phase(name, label, UNKNOWN))
    if result.outcome is Outcome.TIMED_OUT and (stopped_at is None or any(p.status == FAILED for p in phases)):
        # Every step had ended (or one failed and said so), yet the process ran on to the timeout.
        written = next((p for p in phases if p.name == "reward_written" and p.status == DONE), None)
        what = (
            f"the runner wrote {written.detail}"
            if written is not None and stopped_at is None
            else f"'{LABELS.get(stopped_at, stopped_at)}' failed"
            if stopped_at is not None
            else "every step ended"
        )
        explanation, advice = hung_words(what, f" ({duration_text(timeout_s)})")
        return PhaseReport(stopped_at or "timeout", explanation, advice, tuple(phases))
    if stopped_at is None:
        if lines:
            written = next((p for p in phases if p.name == "reward_written" and p.status == DONE), None)
            verdict = result.verdict
            scored = (
                f"Harbor would score {rewards_json(verdict.rewards)[0]}"
                if verdict.rewards is not None
                else verdict.harbor_would
            )
            explanation = f"the runner wrote {written.detail}; {scored}" if written else scored
        else:
            explanation = "the runner reported no phases for this run"
    return PhaseReport(stopped_at, explanation, advice, tuple(phases))


# --------------------------------------------------------------------------
# The sandbox: inferred from test-stdout.txt and the reward folder.


def _report(
    failed: str | None,
    before: str,
    detail: str,
    explanation: str,
    advice: str = "",
    *,
    stopped_at: str | None = None,
    written: str = "",
    lines: tuple[str, ...] = (),
    lines_at: str | None = None,
) -> PhaseReport:
    """Phases before ``failed`` get ``before`` (all of them when nothing
    failed), ``failed`` its detail and lines, the rest "not reached".
    ``lines_at``: the phase the lines go under when none failed."""
    phases = []
    past_failure = False
    for name, label in PHASES:
        if name == failed:
            phases.append(Phase(name, label, FAILED, detail, lines))
            past_failure = True
        elif past_failure:
            phases.append(Phase(name, label, NOT_REACHED))
        else:
            shown = lines if name == lines_at else ()
            phases.append(Phase(name, label, before, written if name == "reward_written" else "", shown))
    return PhaseReport(stopped_at or failed, explanation, advice, tuple(phases))


def _refused(message: str, wrote: Verdict | None, limit: str | None, *, sandbox: bool) -> PhaseReport:
    """The runner's contract error (``limit``: the process then went on past Harbor's limit). It outranks a
    reward: the runner clears the reward folder before verify and writes nothing when it refuses (exit 2), so a reward
    beside its line is one something else wrote, or the line is one verify printed in the runner's words
    before it returned (test-stdout.txt is the run's to write): which, neither file says, as of a report
    beside a reward (:func:`_written`), so both are named and every step is not known."""
    if limit is not None:  # the line may be verify's, printed before it went on past the limit: both are named
        explanation, advice = _hung_or_printed(
            f"the runner's refusal ({message})", "printed that line", "refused", limit, sandbox=sandbox
        )
        if wrote is not None and wrote.rewards is not None:
            explanation += (
                f"; {wrote.source} is there all the same and Harbor read {rewards_json(wrote.rewards)[0]}: the "
                "runner writes none when it refuses, so if it refused, something other than the runner wrote it"
            )
        return _report(None, UNKNOWN, "", explanation, advice, stopped_at="timeout")
    if wrote is not None and wrote.rewards is not None:
        return _report(
            None,
            UNKNOWN,
            "",
            f"{wrote.source} is there and Harbor read {rewards_json(wrote.rewards)[0]}, yet the output holds the "
            f"runner's refusal ({message}): either verify printed that line itself and returned, and the runner "
            "wrote the reward, or the runner refused and something other than it wrote the reward (it writes "
            "none when it refuses)",
            "if the runner refused, let nothing else write to /logs/verifier (test.sh, the agent's processes)",
            written=_written_words(wrote),
        )
    refused_at = contract_phase(message)
    explanation, advice = failure_words(refused_at or "", problem=message, sandbox=sandbox)
    if refused_at is None:
        return _report(None, UNKNOWN, "", explanation, advice, stopped_at="command_line")
    return _report(refused_at, DONE, message, explanation, advice)


def _hung_or_printed(report: str, printed: str, did: str, limit: str, *, sandbox: bool) -> tuple[str, str]:
    """Words for output that ends in ``report`` (the runner's, as it reads) from a process still running at
    Harbor's limit: test-stdout.txt is the run's to write, so verify may have ``printed`` it itself (a logged
    traceback, a line in the runner's words) and gone on, or the runner ``did`` so and something kept the
    interpreter alive. Neither file says which: both are named."""
    explanation, advice = hung_words(f"the output holds {report}", limit, sandbox=sandbox)
    explanation += (
        f"; either verify {printed} itself and was still running, or the runner {did} and something the verifier "
        "started kept the interpreter from exiting"
    )
    return explanation, f"{advice}; if verify {printed}, make it faster or raise [verifier] timeout_sec in task.toml"


def _written_words(wrote: Verdict) -> str:
    """The reward file a run left, as its step says it: ``reward.txt: 1.0``."""
    rewards = rewards_json(wrote.rewards or {})[0]
    shown = rewards if wrote.source == "reward.json" else repr(float((wrote.rewards or {}).get("reward", 0.0)))
    return f"{wrote.source}: {shown}"


def _written(
    wrote: Verdict, tb: RunnerTraceback | None, where: str | None, limit: str | None, *, sandbox: bool
) -> PhaseReport:
    """A valid reward file ``wrote`` (``limit``: the run then hung, Harbor's limit said), the output ending in
    the report ``tb`` or in none of the runner's."""
    rewards = rewards_json(wrote.rewards or {})[0]
    written = _written_words(wrote)
    if limit is not None:
        explanation, advice = hung_words(f"the runner wrote {wrote.source}", limit, sandbox=sandbox)
        return _report(None, DONE, "", explanation, advice, stopped_at="timeout", written=written)
    if tb is None:  # no report of the runner's: verify returned and the runner wrote the reward
        return _report(None, DONE, "", f"the runner wrote {wrote.source}; Harbor read {rewards}", written=written)
    # A reward and a report ending the output: the runner writes a reward only once verify has returned, and
    # reports nothing then (the traceback is one verify logged, as logging.exception does); on exit 1 it writes
    # none (something else did: test.sh's `|| echo 0 > reward.txt`, an agent's process still running). Which,
    # neither file says: both are named, every step not known, and the failing line is kept.
    at = f" at {where}" if where else ""
    return _report(
        None,
        UNKNOWN,
        "",
        f"{wrote.source} is there and Harbor read {rewards}, yet the output ends in a traceback "
        f"({exception_words(tb.bare_type, tb.exception_message)}{at}): either verify logged an exception and "
        "returned, and the runner wrote the reward, or verify raised and something other than the runner wrote "
        "it (the runner writes none when verify raises)",
        "if verify raised, let nothing else write to /logs/verifier (test.sh, the agent's processes); if it "
        "logged the exception, the reward is its own",
        written=written,
    )


def sandbox_phases(
    output: RunnerOutput,
    verdict: Verdict | None,
    *,
    timed_out: bool = False,
    timeout_s: float | None = None,
    verifier_ran: bool | None = True,
    where: str | None = None,
    where_opens: bool = True,
    not_run_because: str | None = None,
    tail: tuple[str, ...] = (),
    sandbox: bool = True,
    downloaded: bool = True,
    unread: str | None = None,
) -> PhaseReport:
    """The runner's phases in the sandbox, from its output and the reward
    folder's verdict (``verdict`` None: the trial has no ``verifier/``).
    ``where``: the failing line mapped to the local task (``where_opens``
    False: it maps to no file here, said as the sandbox's); ``tail``: the last
    lines of the traceback to show with the failed phase. ``sandbox`` False:
    a replay whose runner reports no phases, inferred the same way.
    ``downloaded`` False: Harbor never fetched the sandbox's reward folder (a timeout).
    ``unread``: why the trial holds no test.sh output to read (no ``verifier/``, a FIFO or a link in
    its place), in words: that output is not known, never empty."""
    if verifier_ran is False:
        why = f" ({not_run_because})" if not_run_because else ""
        return _report(
            None,
            NOT_REACHED,
            "",
            f"the verifier never ran in the sandbox{why}",
            "nothing in the verifier to fix for this trial: "
            + (
                "the job ran without it (verifier.disable)"
                if not_run_because == "verifier disabled"
                else "the failure came before it (the agent or the environment)"
            ),
            stopped_at="not_run",
        )
    if output.kind == "shim_no_python":
        return _report(
            None,
            NOT_REACHED,
            "",
            f"{output.shim_message}: test.sh exited 127 before the runner "
            f"started, so no reward was written and Harbor scored {REWARD_FILE_NOT_FOUND}",
            "install Python 3.8 or newer in the image the verifier runs in (environment/Dockerfile)",
            stopped_at="python_check",
        )
    # A timeout outranks whatever the output and the reward folder say: Harbor gives up
    # before it reads the folder (Trial._verify_with_timeout, harbor/trial/trial.py).
    limit = f" ({duration_text(timeout_s)})" if timeout_s is not None else ""
    wrote = verdict if verdict is not None and verdict.source is not None else None
    if output.kind == "contract_error":
        return _refused(output.contract_message or "", wrote, limit if timed_out else None, sandbox=sandbox)
    if wrote is not None and wrote.rewards is not None and not (timed_out and output.traceback is not None):
        return _written(wrote, output.traceback, where, limit if timed_out else None, sandbox=sandbox)
    if output.traceback is not None:  # the output's kind is "traceback"
        tb = output.traceback
        error = exception_words(tb.bare_type, tb.exception_message)
        phase = "module_imported" if tb.while_importing else "verify_called"
        if timed_out:  # the report may be one verify logged (logging.exception) before it went on past the limit
            report = f"a report of {error}" + (f" at {where}" if where else "")
            did = f"reported '{LABELS[phase]}' failed"
            explanation, advice = _hung_or_printed(report, "logged that report", did, limit, sandbox=sandbox)
            return _report(None, UNKNOWN, "", explanation, advice, stopped_at="timeout", lines=tail, lines_at=phase)
        explanation, advice = failure_words(phase, error=error, where=where, sandbox=sandbox, opens=where_opens)
        return _report(phase, DONE, error, explanation, advice, lines=tail)
    if timed_out:
        scored = "scored" if sandbox else "would score"
        after = f" after {duration_text(timeout_s)}" if timeout_s is not None else ""
        why = (
            "the runner prints nothing until it fails, so its output does not say how far it got"
            if downloaded
            else "Harbor downloads the verifier's output only once test.sh has ended, so none was downloaded "
            "to say how far the runner got"
        )
        return _report(
            None,
            UNKNOWN,
            "",
            f"Harbor stopped the verifier{after} and {scored} {VERIFIER_TIMEOUT}: {why}",
            "the replay shows where a run spends its time: make verify faster, or raise "
            "[verifier] timeout_sec in task.toml",
            stopped_at="timeout",
        )
    shell = output.shell_error
    if output.kind == "test_sh_error" and shell is not None:
        explanation, advice = test_sh_words(where or f"{shell.script}:{shell.line}", shell.message, sandbox=sandbox)
        return _report(None, NOT_REACHED, "", explanation, advice, stopped_at="test_sh")
    if wrote is not None and wrote.error == NOT_KNOWN:
        # not known: a link (the runner writes none), or a file too big to parse here (the runner
        # writes a dict verify returns, however big, to reward.json; a number to reward.txt, in a few characters)
        others = "something else left it (test.sh, the verifier, or whoever handled the folder)"
        too_big = NOT_PARSED_PAST in (wrote.message or "")
        return _report(
            None,
            UNKNOWN,
            "",
            wrote.message or "",
            "if the runner wrote it, verify returned a dict this big (many keys, or long ones): keep its "
            "metrics few and their names short"
            if too_big and wrote.source == "reward.json"
            else f"the runner writes reward.txt as a number, a few characters: {others}"
            if too_big
            else f"the runner writes reward files, never links: {others}",
        )
    if wrote is not None:
        return _report(
            None,
            UNKNOWN,
            "",
            f"{wrote.source} is there but Harbor could not use it ({wrote.error}); the runner "
            "writes only valid reward files, so test.sh is not the shim or something else wrote it",
            "let verify return the reward and the runner write it; nothing else should write to /logs/verifier",
            stopped_at=None,
        )
    if output.kind == "other":
        return _report(
            None,
            UNKNOWN,
            "",
            "test-stdout.txt holds no report of the runner (last line: "
            f"{output.last_line!r}): test.sh may not be the runner's shim",
            "check that tests/test.sh is NeMo Gym's shim",
        )
    if unread is not None:
        # Output nobody read is not empty output: "it did not run to the end" would be said of it beside a
        # reward Harbor recorded, and of a trial that merely lost its verifier/ folder (git drops empty folders).
        # "Is in the trial now", not "was written": Harbor may have read one that went later (verifier/ changed).
        rewards = "" if verdict is None else "no reward file is in the trial now, and "
        return _report(
            None,
            UNKNOWN,
            "",
            f"{rewards}what test.sh printed is not in the trial to read {unread}, so how far the runner got "
            "is not known",
            "look at trial.log for what the verifier phase did",
        )
    return _report(
        None,
        UNKNOWN,
        "",
        # The runner reports every failure on stderr, unless verify took that from it (closed fd 2): the runner
        # then ran to its end with nothing to show (the replay's steps, where there is one, say what verify did).
        "test-stdout.txt is empty and no reward file was written: the runner reports every failure there, "
        "so it did not run to the end (it was killed, verify ended the interpreter with os._exit, or test.sh "
        "never started it), or the verifier closed its stderr",
        "look at trial.log for what stopped the verifier phase",
    )


def inferred_phases(result: RunResult, *, where: str | None = None) -> PhaseReport:
    """The replay's phases when its runner reports none (the task's own
    runner, without --phases-to): inferred from its stderr and reward folder,
    as the sandbox's are."""
    from verifier_tui.engine.harbor.runner_output import parse_runner_output
    from verifier_tui.engine.model import Outcome

    if result.outcome in (Outcome.COULD_NOT_START, Outcome.REFUSED_BY_SHIM):
        return _local_phases(result, where)
    report = sandbox_phases(
        parse_runner_output(result.stderr.text),
        result.verdict,
        timed_out=result.outcome is Outcome.TIMED_OUT,
        timeout_s=result.inputs.timeout_s,
        where=where,
        sandbox=False,
    )
    if report.stopped_at == "test_sh":
        return report  # the runner never started: there are no steps of its to infer
    note = " (inferred from its output: the task's own runner reports no phases)"
    return replace(report, explanation=report.explanation + note)


# --------------------------------------------------------------------------
# Side by side.


@record(frozen=True)
class Parting(AsJson):
    """The first step where the sandbox and the replay went differently."""

    phase: str
    label: str
    sandbox: str
    local: str
    words: str


#: What a side did at a step, in words.
VERBS = {DONE: "got through it", FAILED: "failed", STOPPED: "was stopped there", NOT_REACHED: "never got there"}


def where_they_part(sandbox: PhaseReport, local: PhaseReport, alone: bool = False) -> Parting | None:
    """The first phase both sides know about whose status differs. ``alone``:
    the local phases are verifier-tui's runner's, run alone beside the task's
    test.sh, which gave the verdict: said as that run's, not the replay's."""
    theirs = {p.name: p for p in sandbox.phases}
    for mine in local.phases:
        other = theirs.get(mine.name)
        if other is None or UNKNOWN in (other.status, mine.status):
            continue
        if other.status != mine.status:
            said_theirs = VERBS[other.status] + (f" ({other.detail})" if other.detail else "")
            said_mine = VERBS[mine.status] + (f" ({mine.detail})" if mine.detail else "")
            words = (
                f"verifier-tui's runner alone parts from the sandbox at '{mine.label}': the sandbox {said_theirs}, "
                f"the runner alone {said_mine}"
                if alone
                else f"they part at '{mine.label}': the sandbox {said_theirs}, the replay {said_mine}"
            )
            return Parting(mine.name, mine.label, other.status, mine.status, words)
    return None
