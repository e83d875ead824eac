"""The sandbox side of one trial (or one step): what Harbor scored, what the
reward files left in ``verifier/`` say by Harbor's own rules, whether the two
agree, ``test-stdout.txt`` with the runner's report recognised and its
sandbox paths mapped to local files, and the phase where the run stopped.

The verdict from the files is :func:`verifier_tui.engine.verdict.harbor_verdict`,
the same parser the local runs use (Harbor 0.26.0 ``Verifier.verify``).
"""

from __future__ import annotations

import math
import re
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from verifier_tui.engine.harbor.facts import VERDICT_ERRORS, TrialFacts
from verifier_tui.engine.harbor.folders import TEST_STDERR, TEST_STDOUT, StepView, Trial
from verifier_tui.engine.harbor.overview import LONG, NOT_A_NUMBER, NOT_FINISHED, reward_number, rewards_are_numbers
from verifier_tui.engine.harbor.phases import PhaseReport, sandbox_phases
from verifier_tui.engine.harbor.reading import ExceptionRecord
from verifier_tui.engine.harbor.runner_output import RunnerOutput, parse_runner_output
from verifier_tui.engine.model import UNKNOWN, CapturedText, RewardFile, Verdict, at_line, same_number
from verifier_tui.engine.record import AsJson, record
from verifier_tui.engine.sandbox.view import APP, TESTS, normal_path
from verifier_tui.engine.task.steps import tests_dirs
from verifier_tui.engine.untrusted import Read, look, open_regular, own_file
from verifier_tui.engine.verdict import REWARD_FILE_NOT_FOUND, VERIFIER_TIMEOUT, reward_pairs

if TYPE_CHECKING:
    from typing import Any

OUTPUT_HEAD_BYTES = 64 * 1024
OUTPUT_TAIL_BYTES = 192 * 1024
"""``test-stdout.txt`` is read bounded: its head (the verifier's first
prints) and a larger tail (the runner's report is always last)."""
_RUNNER_FILES = ("/tests/.ng/run_verifier.py",)


@record(frozen=True)
class HarborVerdict(AsJson):
    """How Harbor ended this verifier pass: its rewards, or the exception it
    raised (bare class name). ``source`` says where that was read."""

    rewards: dict[str, Any] | None
    error: str | None
    message: str
    source: str  # "result.json", "trial.log", "reward files" or "none"
    finished: bool = True  # False: Harbor has not ended the trial, so has scored nothing yet

    @property
    def known(self) -> bool:
        return self.rewards is not None or self.error is not None

    def label(self) -> str:
        """What a listing shows: the reward, the rewards, or the exception type."""
        if self.rewards is not None:
            value = self.rewards.get("reward")
            if isinstance(value, (int, float)) and len(self.rewards) == 1:
                return _number(value)
            return reward_pairs(self.rewards, lambda k, v: f"{k} {_number(v)}")
        if not self.finished:
            return NOT_FINISHED
        return self.error or "no verdict"


def _number(value: Any) -> str:
    """A reward as Harbor's result.json shows it: ``1.0``, ``0.25``, ``3``."""
    if isinstance(value, bool):
        return repr(float(value))
    if not isinstance(value, (int, float)):
        return str(value)
    if (isinstance(value, float) and not math.isfinite(value)) or abs(value) >= LONG:
        # As every face says it (overview's formatter): Infinity as the file holds it, compare's word, never
        # Python's inf; a 400-digit integer in a few words, never whole.
        return reward_number(value)
    return repr(value)


@record(frozen=True)
class MappedFrame:
    """One traceback frame: its sandbox path, and the local file it is."""

    sandbox_path: str
    line: int | None
    function: str | None
    local_path: Path | None  # None: not a file of the task or the captured workspace

    def to_json(self) -> dict[str, Any]:
        return {
            "sandbox_path": self.sandbox_path,
            "path": str(self.local_path) if self.local_path else None,
            "line": self.line,
            "function": self.function,
        }

    def at(self, shown: object) -> str:
        return at_line(shown, self.line)


@record
class SandboxSide:
    step: StepView
    computed: Verdict | None  # from the reward files; None when the trial has no verifier/ folder
    reward_files: list[RewardFile]
    recorded_rewards: dict[str, Any] | None
    recorded_exception: ExceptionRecord | None
    verdict: HarborVerdict
    disagreement: str | None
    output: CapturedText
    runner: RunnerOutput
    phases: PhaseReport
    frames: tuple[MappedFrame, ...]
    failure: MappedFrame | None  # the innermost frame of the task's own code (or the workspace's)
    mapped_output: str
    output_state: str = "present"  # "present", "empty", or why test-stdout.txt is not there (OUTPUT_ABSENT)
    output_words: str = ""  # the state in a sentence, shown where the output would be

    @property
    def output_shown(self) -> str:
        """The output as a face shows it: the text, or what its absence means."""
        return self.mapped_output.rstrip("\n") or self.output_words


def output_state(output: CapturedText | Read, has_dir: bool, facts: TrialFacts) -> tuple[str, str]:
    """``(state, words)`` of ``test-stdout.txt`` (read, or why not). Harbor's
    shell redirect creates it as test.sh starts, in the sandbox's
    ``/logs/verifier``, which Harbor 0.26.0 downloads only after test.sh
    ended (``Verifier.verify``, unless that folder is mounted): a timeout, or
    a failed download, leaves nothing in the trial, which is not the same as
    empty output. A link (it, or ``verifier/``) is never read, nor what is
    no regular file (a FIFO) or cannot be read: ``not read``, saying what is there."""
    if isinstance(output, CapturedText):
        return ("present", "") if output.total_bytes else ("empty", "(empty: test.sh printed nothing)")
    if output.state != "missing":
        # A link's words say it was not read ("...: not read here"); a FIFO's, a folder's or an
        # unreadable file's say only what is there, so the state's own words are added.
        said = output.problem if output.state == "link" else f"{output.problem}: not read"
        return "not read", f"({said})"
    failure = facts.verifier_exception.type if facts.verifier_exception is not None else None
    if failure == VERIFIER_TIMEOUT:
        return "not downloaded", (
            "(not downloaded: Harbor fetches /logs/verifier only once test.sh has ended, and "
            "it stopped waiting at the timeout, so what the verifier printed never reached "
            "the trial; a sandbox with mounted log folders keeps it)"
        )
    if failure == "DownloadVerifierDirError":
        return "not downloaded", "(not downloaded: Harbor failed to download /logs/verifier, DownloadVerifierDirError)"
    if failure == "AddTestsDirError":
        return "not written", "(not written: copying tests/ into the sandbox failed, so test.sh never ran)"
    if facts.verifier_disabled or facts.verifier_ran is False:
        return "not written", "(not written: the verifier never ran)"
    where = "verifier/ holds no test-stdout.txt" if has_dir else "the trial has no verifier/ folder"
    return "missing", f"(missing: {where}; Harbor writes one whenever test.sh runs)"


def read_bounded(path: Path, trial: Path) -> CapturedText | Read:
    """A text file of the trial folder ``trial``: its head and tail (decoded
    with replacement), or the :class:`Read` saying why there is no regular
    file to read (a link among them: never read through)."""
    opened, refused = open_regular(path, beneath=trial)
    if opened is None:
        assert refused is not None
        return refused
    try:
        with opened as handle:
            head = handle.read(OUTPUT_HEAD_BYTES + OUTPUT_TAIL_BYTES + 1)
            if len(head) <= OUTPUT_HEAD_BYTES + OUTPUT_TAIL_BYTES:
                return CapturedText(head=head.decode("utf-8", errors="replace"), total_bytes=len(head))
            handle.seek(0, 2)
            total = handle.tell()
            handle.seek(total - OUTPUT_TAIL_BYTES)
            tail = handle.read(OUTPUT_TAIL_BYTES)
    except OSError as exc:
        return Read(path, "unreadable", problem=f"{path.name} cannot be read ({exc.strerror or exc})")
    return CapturedText(
        head=head[:OUTPUT_HEAD_BYTES].decode("utf-8", errors="replace"),
        tail=tail.decode("utf-8", errors="replace"),
        dropped_bytes=total - OUTPUT_HEAD_BYTES - OUTPUT_TAIL_BYTES,
        total_bytes=total,
    )


def same_rewards(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool:
    """Rewards as Harbor's numbers: the same keys, equal as floats (1 == 1.0)."""
    return a is not None and b is not None and set(a) == set(b) and all(same_number(a[key], b[key]) for key in a)


class PathMapper:
    """Sandbox paths to local ones: ``/tests/...`` to the task's tests (a
    step's own ``steps/<name>/tests/`` first, as Harbor uploads both into
    ``/tests``), ``/app/...`` to the captured workspace."""

    def __init__(self, task_root: Path | None, step_name: str | None, workspace: Path | None) -> None:
        # The folders of /tests by the rule the replay stages them by (a step's own only when it is a folder).
        self.tests_dirs: list[Path] = tests_dirs(task_root, step_name) if task_root is not None else []
        self.workspace = workspace

    def local(self, sandbox_path: str) -> Path | None:
        """The task's (or the captured workspace's) own regular file that
        ``sandbox_path`` names, else None. The path comes from test-stdout.txt,
        which the trial wrote, and what is found goes to the user's editor:
        ``..`` is folded first (``/tests/../../etc/passwd`` is no file of the
        task's), and a link on the way that leads out of its folder (planted
        in the task's tests/ or the captured /app) is not followed: the rule
        a task's own run's frames go through too (:func:`own_file`)."""
        path = _inside_sandbox(sandbox_path)
        for prefix, bases in ((TESTS, self.tests_dirs), (APP, [self.workspace])):
            if path is not None and path.startswith(prefix + "/"):
                rel = path[len(prefix) + 1 :]
                for base in bases:
                    found = own_file(base / rel, base) if base is not None else None
                    if found is not None:
                        return found
        return None

    def text(self, text: str) -> str:
        """``text`` with ``/tests`` and ``/app`` (whole path starts only) as
        local folders; a path that ``..`` takes out of them is left as written."""
        if self.tests_dirs:
            main = self.tests_dirs[-1]

            def tests(match: re.Match[str]) -> str:
                local = self.local(match.group(0))
                if local is not None:
                    return str(local)
                if not _stays_in(match.group(0), TESTS):
                    return match.group(0)
                return str(main) + match.group(0)[len(TESTS) :]

            text = re.sub(r"(?<![\w./-])/tests(?:/[^\s\"':,)]*)?", tests, text)
        if self.workspace is not None:
            workspace = str(self.workspace)

            def app(match: re.Match[str]) -> str:
                whole = match.group(0)
                return workspace + whole[len(APP) :] if _stays_in(whole, APP) else whole

            text = re.sub(r"(?<![\w./-])/app(?:/[^\s\"':,)]*)?(?!\w)", app, text)
        return text


def _inside_sandbox(path: str) -> str | None:
    """``path`` as the sandbox's Linux resolves it by name: ``..`` and ``//``
    folded (links are the local side's to judge); None when not absolute."""
    return normal_path(path) if path.startswith("/") else None


def _stays_in(path: str, prefix: str) -> bool:
    folded = _inside_sandbox(path)
    return folded is not None and (folded == prefix or folded.startswith(prefix + "/"))


def _own_code(path: str) -> bool:
    """A frame of the task's own code (or the workspace's), by its path folded
    (``/tests/../etc/x.py`` is no file of the task's)."""
    path = _inside_sandbox(path) or path
    if path in _RUNNER_FILES or path.startswith(TESTS + "/.ng/nemo_gym/"):
        return False
    return path.startswith((TESTS + "/", APP + "/"))


def read_sandbox(
    trial: Trial, step: StepView, facts: TrialFacts, *, task_root: Path | None, workspace: Path | None
) -> SandboxSide:
    """Everything the sandbox left for this verifier pass (see the module docstring)."""
    from verifier_tui.engine.verdict import harbor_verdict, read_reward_files

    there = look(step.verifier_dir, trial.path)  # a link is there too: its verdict says so
    has_dir = there.state == "link" if isinstance(there, Read) else stat.S_ISDIR(there.st_mode)
    computed = harbor_verdict(step.verifier_dir, beneath=trial.path) if has_dir else None
    reward_files = read_reward_files(step.verifier_dir, beneath=trial.path) if has_dir else []
    recorded_exception = step.exception if step.name is not None else (step.exception or trial.exception)
    found = read_bounded(step.verifier_dir / TEST_STDOUT, trial.path)
    state, state_words = output_state(found, has_dir, facts)
    output = found if isinstance(found, CapturedText) else CapturedText()
    old_stderr = read_bounded(step.verifier_dir / TEST_STDERR, trial.path)
    if isinstance(old_stderr, CapturedText) and old_stderr.text:
        # Harbor 0.1.42 and older kept stderr apart: the runner's report is there.
        # It follows stdout's tail (its own cut, if any, is marked inside its text).
        joined = output.head + output.tail
        separator = "\n" if joined and not joined.endswith("\n") else ""
        output = CapturedText(
            head=output.head,
            tail=output.tail + separator + old_stderr.text,
            dropped_bytes=output.dropped_bytes,
            total_bytes=output.total_bytes + old_stderr.total_bytes,
        )
    text = output.text
    runner = parse_runner_output(text)
    mapper = PathMapper(task_root, step.name, workspace)
    frames = tuple(
        MappedFrame(f.file, f.line, f.function, mapper.local(f.file))
        for f in (runner.traceback.frames if runner.traceback else ())
    )
    # The last report's line, a reward beside it or not: which of the two ended the run, neither file says
    # (phases.sandbox_phases names both), and the line is where to look if verify raised.
    failure = next((f for f in reversed(frames) if _own_code(f.sandbox_path)), None)
    where, where_opens = None, True  # where_opens: a file here (else the sandbox's own, e opens nothing)
    if failure is not None:
        local = failure.local_path
        if local is not None and task_root is not None and local.is_relative_to(task_root):
            local = local.relative_to(task_root)
        where, where_opens = failure.at(local or failure.sandbox_path), local is not None
    elif runner.shell_error is not None:  # test.sh's own line: the task's tests/test.sh
        script = mapper.local(runner.shell_error.script)
        shown = script.relative_to(task_root) if script is not None and task_root is not None else None
        where, where_opens = f"{shown or runner.shell_error.script}:{runner.shell_error.line}", script is not None
    tail = tuple(mapper.text(runner.traceback.text).splitlines()[-6:]) if runner.traceback else ()
    why_not = (
        facts.agent_failure.type if facts.agent_failure else ("verifier disabled" if facts.verifier_disabled else None)
    )
    phases = sandbox_phases(
        runner,
        computed,
        timed_out=facts.timed_out,
        timeout_s=facts.timeout.for_replay,
        verifier_ran=not (facts.verifier_ran is False and not text),
        where=where,
        where_opens=where_opens,
        not_run_because=why_not,
        tail=tail,
        downloaded=state != "not downloaded",
        unread=state_words if state in ("missing", "not read") else None,
    )
    verdict = _harbor_verdict(trial, step, facts, computed)
    return SandboxSide(
        step=step,
        computed=computed,
        reward_files=reward_files,
        recorded_rewards=step.rewards,
        recorded_exception=recorded_exception,
        verdict=verdict,
        disagreement=_disagreement(step, facts, computed, has_dir),
        output=output,
        runner=runner,
        phases=phases,
        frames=frames,
        failure=failure,
        mapped_output=mapper.text(text),
        output_state=state,
        output_words=state_words,
    )


def _harbor_verdict(trial: Trial, step: StepView, facts: TrialFacts, computed: Verdict | None) -> HarborVerdict:
    """What Harbor scored this pass with: the verifier's own exception
    (recorded, or only logged), else the recorded rewards, else (nothing
    recorded) the reward files."""
    failure = facts.verifier_exception
    if failure is not None:
        return HarborVerdict(None, failure.type, failure.message, facts.verifier_exception_source or "result.json")
    if step.rewards is not None:
        if not rewards_are_numbers(step.rewards):
            # Infinity or NaN, another writer's: Harbor's verifier never scores one (it raises
            # VerifierOutputParseError), so it is no score, as the job overview and compare say.
            recorded = _describe(step.rewards, None)
            return HarborVerdict(
                None, NOT_A_NUMBER, f"result.json records {recorded}, which Harbor never scores", "result.json"
            )
        return HarborVerdict(dict(step.rewards), None, "recorded in result.json", "result.json")
    if facts.verifier_ran is False or facts.verifier_disabled:
        if facts.verifier_disabled:
            why = "verifier disabled"
        else:
            why = facts.agent_failure.type if facts.agent_failure else "not run"
        return HarborVerdict(None, None, f"the verifier never ran ({why})", "none")
    if not trial.finished:
        # Harbor reads the reward files only when the trial ends: until then
        # it has scored nothing, whatever they hold (the job overview's "not
        # finished"). What they hold so far is said, not taken as its verdict.
        so_far = f"; verifier/ holds {_describe(computed.rewards, computed.error)} so far" if computed else ""
        why = trial.result.problem or "result.json records no finished_at"
        return HarborVerdict(
            None,
            None,
            f"Harbor has not scored it ({why}): it scores a trial when it ends, "
            f"and this one was stopped or is still running{so_far}",
            "none",
            finished=False,
        )
    if computed is not None:
        where = "result.json is not readable" if not trial.result.ok else "result.json records no verdict for it"
        if computed.rewards is not None:
            return HarborVerdict(dict(computed.rewards), None, f"from the reward files ({where})", "reward files")
        return HarborVerdict(
            None, computed.error, f"{computed.message} (from the reward files; {where})", "reward files"
        )
    return HarborVerdict(None, None, "nothing recorded and no verifier/ folder", "none")


def _describe(rewards: dict[str, Any] | None, error: str | None) -> str:
    if rewards is not None:
        return "rewards " + reward_pairs(rewards, lambda k, v: f"{k}={_number(v)}")
    return error or "nothing"


def _disagreement(step: StepView, facts: TrialFacts, computed: Verdict | None, has_dir: bool) -> str | None:
    """A sentence when the reward files and what Harbor recorded disagree."""
    recorded_error = facts.verifier_exception.type if facts.verifier_exception is not None else None
    where = facts.verifier_exception_source or "result.json"
    if step.rewards is None and recorded_error is None:
        return None
    if computed is None:
        return (
            f"{where} recorded {_describe(step.rewards, recorded_error)}, but the trial has no verifier/ "
            "folder to check it against"
        )
    if computed.error == UNKNOWN:
        return (
            f"{computed.message}, so what {where} recorded ({_describe(step.rewards, recorded_error)}) "
            "cannot be checked against it"
        )
    files_say = _describe(computed.rewards, computed.error)
    if recorded_error == VERIFIER_TIMEOUT:
        if computed.error == REWARD_FILE_NOT_FOUND:
            return None  # nothing was written before Harbor gave up: no contradiction
        return (
            f"Harbor timed out ({VERIFIER_TIMEOUT}) and never read the reward files; what verifier/ "
            f"holds now gives {files_say}"
        )
    if step.rewards is not None and recorded_error is None:
        if computed.ok and same_rewards(computed.rewards, step.rewards):
            return None
        return (
            f"the reward files now give {files_say}, but result.json recorded "
            f"{_describe(step.rewards, None)}: verifier/ changed after the run"
        )
    if recorded_error in VERDICT_ERRORS:
        if computed.error == recorded_error:
            return None
        return (
            f"{where} recorded {recorded_error}, but the reward files now give {files_say}: "
            "verifier/ changed after the run"
        )
    return None
