"""What a finished run left, read back: :func:`collect` turns the process
driver's result and the staged reward folder into a
:class:`~verifier_tui.engine.model.RunResult` (Harbor's verdict, the
outcome in words, the runner's explanation and phases), every scratch path
mapped back to the user's own files."""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from verifier_tui.engine import untrusted
from verifier_tui.engine.advice import Advice, of_test
from verifier_tui.engine.coverage import COVERAGE_FILE, LINK_OUT, MEASURED_LIMIT, Coverage, read_runner_file
from verifier_tui.engine.invocation import EXPLAIN_FILE, PHASES_FILE, Prepared, staged_verifier
from verifier_tui.engine.model import CapturedText, Outcome, RunResult, Verdict, duration_text, returned_wrong
from verifier_tui.engine.readback import PHASE_LINE_SHAPE, Explanation, checked_document
from verifier_tui.engine.record import replace
from verifier_tui.engine.sandbox import room

if TYPE_CHECKING:
    from typing import Any

    from verifier_tui.engine.coverage import UserFile
    from verifier_tui.engine.process import ProcessResult

RUNNER_FILE_LIMIT = 16 * untrusted.MB
"""The runner's explain document and phase lines: kilobytes, unless a verifier wrote them."""


def map_paths(text: str, path_map: list[tuple[str, str]]) -> str:
    """Scratch paths in ``text`` (the stage's, and the view's ``/tests``,
    ``/app``...) replaced by the user's own, each only where it is a whole
    path or starts one: ``/app`` in ``/application`` or ``/x/tests`` stays."""
    if not text or not path_map:
        return text
    if isinstance(text, Advice):  # its text mapped, its actions kept for each face to word
        return Advice(*(map_paths(part, path_map) if isinstance(part, str) else part for part in text.parts))
    pattern, users = _path_pattern(tuple(path_map))
    if '  File "' not in text:
        return pattern.sub(lambda found: users[found.group(0)], text)
    # A traceback quotes the verifier's source under each frame: that line
    # is the user's code as written (``Path("/app/x")``), never rewritten.
    # (A stack dump of faulthandler's has File lines only, no source.)
    lines = text.split("\n")
    after_frame = False
    for index, line in enumerate(lines):
        if not (after_frame and line.startswith("    ")):
            lines[index] = pattern.sub(lambda found: users[found.group(0)], line)
        after_frame = line.startswith('  File "') and ", line " in line
    return "\n".join(lines)


@functools.lru_cache(maxsize=64)
def _path_pattern(path_map: tuple[tuple[str, str], ...]) -> tuple[re.Pattern[str], dict[str, str]]:
    users: dict[str, str] = {}
    for scratch, user in path_map:
        users.setdefault(scratch, user)  # the first listed wins, as it did
    # Longest first: a file of a folder before the folder.
    alternatives = "|".join(re.escape(s) for s in sorted(users, key=len, reverse=True))
    return re.compile(rf"(?<![\w.~/-])(?:{alternatives})(?![\w.~-])"), users


def map_json(value: Any, path_map: list[tuple[str, str]]) -> Any:
    if isinstance(value, str):
        return map_paths(value, path_map)
    if isinstance(value, list):
        return [map_json(v, path_map) for v in value]
    if isinstance(value, dict):
        return {k: map_json(v, path_map) for k, v in value.items()}
    return value


def read_explain(prepared: Prepared, stdout_text: str | None = None) -> Explanation | None:
    """The runner's explain document (from ``stdout_text`` when given, else
    from its file; in explain mode, with the run's notices), read back once
    (:mod:`verifier_tui.engine.readback`: the verifier can rewrite it), with
    the environment the runner got; None when there is none to read."""
    if stdout_text is not None:
        document, problem = untrusted.parse_json(stdout_text, EXPLAIN_FILE)
    else:
        stage = prepared.stage
        found = untrusted.read_json(stage.inputs_dir / EXPLAIN_FILE, RUNNER_FILE_LIMIT, beneath=stage.root)
        document, problem = found.data, found.problem
    explanation = explained(document, prepared) if problem is None else None
    if explanation is None or not prepared.spec.explain_only:
        return explanation
    return replace(explanation, notices=tuple(prepared.notices))


def explained(document: Any, prepared: Prepared) -> Explanation | None:
    """``document`` read into an :class:`Explanation`, paths mapped to the
    user's, with the environment the runner got. Each module's role is worked
    out on the staged paths first: a vendored copy maps back to the folder it
    was copied from, outside every sys.path entry."""
    staged = Explanation.read(document)
    if staged is None:
        return None
    mapped = Explanation.read(map_json(document, prepared.path_map), staged.module_roles())
    assert mapped is not None  # an object still, its strings mapped
    overlay = prepared.spec.extra_tests
    if overlay is not None:
        # /tests maps back to tests/ alone, yet under --step the step's own tests are laid over it
        # (Harbor uploads them last): the row says so, or the verifier's folder reads as tests/.
        tests = str(prepared.spec.task.tests_dir)
        rows = tuple(replace(row, laid_over=str(overlay)) if row.path == tests else row for row in mapped.sys_path)
        mapped = replace(mapped, sys_path=rows)
    return replace(mapped, environment=prepared.environment)


# Exits that are not the runner's own (it exits 0, 1 or 2): the view's outer
# shell that could not open its control files (125), an interpreter that
# could not be run or found (126, 127). Nothing of the verifier ran.
_NOT_STARTED = {
    125: "the sandbox's shell could not open its control files",
    126: "its interpreter could not be run",
    127: "its interpreter was not found",
}


def no_explanation(
    prepared: Prepared,
    done: ProcessResult,
    returncode: int | None = None,
    signal: int | None = None,
    start_error: str | None = None,
) -> Explanation:
    """Why the runner gave no explain document, in words; ``returncode`` and
    ``signal``: the runner's own exit (settled), else the process's;
    ``start_error``: why the run's view could not be set up (settled), said
    first: then nothing ran, and its exit is the view's, not the runner's."""
    returncode = done.returncode if returncode is None and signal is None else returncode
    signal = done.signal if signal is None else signal
    if start_error is not None:
        why = start_error
    elif done.timed_out:
        # Explaining imports the verifier module, so its top-level code runs: it never finished.
        why = (
            f"the runner did not finish explaining: it timed out after {duration_text(prepared.spec.timeout_s)} while "
            "importing the verifier (its top-level code runs on import)"
        )
    elif signal is not None:
        why = f"the runner was killed by signal {signal} before it could explain"
    else:
        why = "the runner gave no explanation"
        found = untrusted.look(prepared.stage.inputs_dir / EXPLAIN_FILE, prepared.stage.root)
        if isinstance(found, untrusted.Read) and found.state == "link":  # the verifier's doing: said, never followed
            why += f": its document was made a link to {found.target or '?'}, not read"
        elif returncode == 2:  # its own, for a command line it refuses (extras missing, say)
            why += ": it refused its command line (exit 2), as its line on stderr says"
        elif returncode in _NOT_STARTED:
            why = f"the runner was not started (exit {returncode}): {_NOT_STARTED[returncode]}"
        elif returncode is not None and returncode != 1:  # 1: its traceback, on stderr, says why
            # An exit the runner never gives. Explaining imports the verifier:
            # os._exit in its top-level code ends the runner there.
            why = (
                f"the runner ended with exit {returncode} before it could explain (importing the verifier runs "
                "its top-level code: an os._exit there ends the runner)"
            )
    stderr = map_paths(done.stderr.text, prepared.path_map)
    # As a run's exit_code: a runner never started, timed out or ended by a signal has none
    # (never the process's negative status, -15, which is Python's and no exit code).
    ended = (
        None
        if start_error is not None
        or done.timed_out
        or signal is not None
        or (returncode is not None and returncode < 0)
        else returncode
    )
    ran = start_error is None and returncode not in _NOT_STARTED
    return Explanation(error=why, stderr=stderr, exit_code=ended, timed_out=bool(done.timed_out), ran=ran)


def contract_explanation(prepared: Prepared) -> Explanation | None:
    """What can be known of a run by the task's own runner when it offers no
    --explain-to: the import path the runner contract places (its .ng folder,
    the verifier's folder, the tests folder) and where nemo_gym.verifiers is
    vendored, in the shape of the explain document, marked ``from_contract``.
    Not the runner's report: the signature and bindings stay unknown."""
    spec = prepared.spec
    if spec.runner is None or spec.runner.knows_explain_to or spec.explain_only:
        return None
    stage = prepared.stage
    verifier = stage.tests_dir / staged_verifier(spec)
    rows: list[dict[str, Any]] = []
    for folder, role in (
        (stage.ng_dir, "vendored helpers"),
        (verifier.parent, "verifier's folder"),
        (stage.tests_dir, "tests folder"),
    ):
        same = next((r for r in rows if r["path"] == str(folder)), None)
        if same is not None:
            same["roles"].append(role)
            continue
        rows.append({"index": len(rows), "path": str(folder), "roles": [role], "exists": folder.is_dir()})
    vendored = stage.ng_dir / "nemo_gym" / "verifiers"
    resolved = str(vendored) if (vendored / "__init__.py").is_file() else None
    modules: dict[str, Any] = {"nemo_gym.verifiers": {"resolved": resolved, "shadowed": []}}
    return explained({"from_contract": True, "sys_path": rows, "modules": modules}, prepared)


def read_coverage(prepared: Prepared) -> Coverage | None:
    """The runner's ``--coverage-to`` file, its paths the user's: the task's
    own files (a trial step's files too, and a verifier from elsewhere);
    None when not asked for."""
    spec, stage = prepared.spec, prepared.stage
    if not spec.coverage or spec.explain_only or spec.via_test_sh:
        return None
    if spec.runner is not None and not spec.runner.knows_coverage_to:
        return Coverage({}, "no coverage: the task's own runner has no --coverage-to (leave out --runner task)")
    mine = [spec.task.tests_dir, *([spec.extra_tests] if spec.extra_tests else [])]
    links_out: dict[Path, str] = {}

    def user_file(staged: str) -> UserFile | None:
        mapped = map_paths(staged, prepared.path_map)
        if not os.path.isabs(mapped):
            return None
        path = Path(os.path.normpath(mapped))  # the run wrote it: ``tests/../..`` is not the task's
        if path == spec.verifier:  # a dataset-wide verifier, staged in .ng/
            return path, untrusted.read_bytes(path, MEASURED_LIMIT).data
        own = next((folder for folder in mine if path.is_relative_to(folder)), None)
        if own is None or path.is_relative_to(spec.task.tests_dir / ".ng"):
            return None
        # The file of the user's own folder that name is, as it is on disk now: a link
        # on the way is followed while it stays in that folder (a helper imported through
        # tests/helper.py -> real_helper.py ran real_helper.py's lines). A name the run
        # wrote may be a link staging left out (to /etc/shadow), or nothing at all.
        real = untrusted.followed_inside(path, own)
        if real is None and os.path.islink(path):  # its lines ran, and count for no file: said, not "not reached"
            links_out[path] = LINK_OUT
        if real is None or real.is_relative_to(spec.task.tests_dir / ".ng"):
            return None
        found = untrusted.read_bytes(real, MEASURED_LIMIT, beneath=own)  # never through a link put there since
        if found.state not in ("ok", "too-big"):
            return None
        return real, found.data

    coverage = read_runner_file(stage.inputs_dir / COVERAGE_FILE, user_file, beneath=stage.root)
    if not links_out:
        return coverage
    return Coverage(coverage.files, coverage.problem, {**coverage.not_compiled, **links_out})


def read_phases(prepared: Prepared) -> list[dict[str, Any]] | None:
    """The runner's ``--phases-to`` lines (paths mapped), None when not asked
    for. A line cut short by a kill is left out: each whole line was on disk
    before the run went on."""
    spec = prepared.spec
    if not spec.phases or spec.explain_only or (spec.runner is not None and not spec.runner.knows_phases_to):
        return None
    stage = prepared.stage
    raw = untrusted.read_bytes(stage.inputs_dir / PHASES_FILE, RUNNER_FILE_LIMIT, beneath=stage.root).text()
    lines = []
    for text in (raw or "").splitlines():
        document, problem = untrusted.parse_json(text, PHASES_FILE)  # the verifier can write this file too
        line = checked_document(document, PHASE_LINE_SHAPE) if problem is None else None
        if line is not None and "phase" in line and "status" in line:
            lines.append(map_json(line, prepared.path_map))
    return lines


def outcome_of(
    returncode: int | None, signal: int | None, timed_out: bool, start_error: str | None, verdict: Verdict | None = None
) -> Outcome:
    """What happened, from the runner's exit and the reward folder. Exit 0
    means "a reward file was written" only when the folder agrees: a verifier
    that ends the interpreter itself (``os._exit(0)``) exits 0 with nothing
    written, and Harbor would score RewardFileNotFoundError (or fail on
    whatever file is there): that is :attr:`Outcome.NO_REWARD`."""
    if start_error is not None:
        return Outcome.COULD_NOT_START
    if timed_out:
        return Outcome.TIMED_OUT
    if signal is not None:
        return Outcome.KILLED
    if returncode == 0 and verdict is not None and not verdict.ok:
        return Outcome.NO_REWARD
    exits: dict[int | None, Outcome] = {
        0: Outcome.REWARD_WRITTEN,
        1: Outcome.VERIFIER_RAISED,
        2: Outcome.CONTRACT_ERROR,
    }
    return exits.get(returncode, Outcome.UNEXPECTED_EXIT)


def preload_notices(explain: Explanation | None) -> list[str]:
    """The modules given to ``--preload`` that the run started ahead could not import, each as a note."""
    failed = explain.preload_failed if explain is not None else ()
    return [f"--preload: {module} did not import; the run went on without it" for module in failed]


def _scratch_filled(prepared: Prepared, done: ProcessResult | None, wrote_its_reward: bool) -> list[str]:
    """A run during which the scratch's file system filled, or one that ended
    short of room with no reward or a failure: its verdict says what the run
    could not write (the runner's reward: "no reward file"), not that the
    workspace's copy and the reward folder share a disk of this machine's."""
    if done is None:
        return []
    after = room.free(prepared.stage.root)
    if room.filled(prepared.room_before, after):
        what = (
            "its reward was still written, but Harbor's container may have had room for what it wrote"
            if wrote_its_reward
            else "what was written past that failed, where Harbor's container may have had room"
        )
        return [f"the scratch file system filled while the run ran: {what} {room.where()}"]
    if not wrote_its_reward and room.short(after):
        # The staging, not the run, left the scratch short: a run that wrote its reward and exited 0
        # lost nothing to it, but one that did not may have lost the write that would have done so.
        return [
            "the scratch file system had next to no room as the run ended: if a write failed for want of it, "
            f"Harbor's container may have had room {room.where()}"
        ]
    return []


def _never_ran(verdict: Verdict, start_error: str | None, *, refused: bool) -> Verdict:
    """Harbor's verdict for a run whose verifier never ran (no reward file), saying why nothing wrote one."""
    from verifier_tui.engine.verdict import REWARD_FILE_NOT_FOUND, REWARD_JSON, REWARD_TXT

    if verdict.error != REWARD_FILE_NOT_FOUND or (start_error is None and not refused):
        return verdict
    never = "the run could not start" if start_error is not None else "test.sh never started the runner"
    return replace(verdict, message=f"No reward file: {never}, so nothing wrote {REWARD_JSON} or {REWARD_TXT}")


def collect(prepared: Prepared, done: ProcessResult | None, *, trigger: str, sequence: int) -> RunResult:
    """Turn what the child did into a RunResult (verdict read from the staged
    reward folder, paths mapped back to the user's files). ``done`` is what the
    process driver returned; ``None`` when the run could not start."""
    from verifier_tui.engine.diagnosis import (
        debugger_notice,
        missing_module_notice,
        never_awaited,
        never_awaited_warning,
        own_environment_notice,
        relative_import_notice,
        runner_not_compiled_notices,
    )
    from verifier_tui.engine.sandbox.strays import cut
    from verifier_tui.engine.verdict import (
        harbor_verdict,
        read_reward_files,
        timeout_verdict,
    )

    out_of_memory: list[str] = []
    attached = prepared.attached  # the view's cgroups and network helper, over now
    notices = list(prepared.notices)
    view_failed = False
    if done is None:
        returncode = signal = None
        timed_out, start_error, duration_s, pipe_wait_s = False, prepared.start_error, 0.0, 0.0
        stdout = stderr = CapturedText()
        if prepared.shim_refusal is not None and start_error is None:
            returncode = prepared.refusal_exit  # what test.sh exits with: the runner never ran
            if prepared.shim_refusal not in notices:  # the shim's own words (a test.sh never started has none)
                stderr = CapturedText(prepared.shim_refusal + "\n", total_bytes=len(prepared.shim_refusal) + 1)
        strays, written = [], []
        strays_more, strays_at_least = 0, False
    else:
        from verifier_tui.engine.sandbox.containment import settle

        settled = settle(prepared.stage, prepared.guard, done)
        view_failed = settled.start_error is not None  # the view was not built: the verifier was not called
        returncode, signal, timed_out = settled.returncode, settled.signal, done.timed_out
        start_error, duration_s, pipe_wait_s = settled.start_error, done.duration_s, done.pipe_wait_s
        stdout, stderr = done.stdout, done.stderr
        strays, written = settled.strays, settled.written
        strays_more, strays_at_least = settled.strays_more, settled.strays_at_least
        limit = prepared.limits.memory_mb if prepared.limits is not None else None
        for command, held in done.oom_killed:
            out_of_memory.append(map_paths(command, prepared.path_map))
            # Docker's OOM killer ends the biggest process of the container;
            # when that is the runner, no reward is written and Harbor records
            # RewardFileNotFoundError (test.sh's exit code is discarded).
            notices.append(
                f"out of memory: the run held {held >> 20} MB, over task.toml's memory_mb = {limit}; "
                f"its biggest process was killed, as the sandbox's OOM killer would: "
                f"{cut(map_paths(command, prepared.path_map))}"
            )
        killed = attached.cgroup.oom_kills if attached is not None and attached.cgroup is not None else 0
        if killed:
            # The memory cgroup's own OOM killer: it says how many it ended, not which.
            # A runner SIGKILLed at its timeout was alive till then: the OOM killer ended others.
            victim = "the runner" if signal == 9 and not timed_out else "a process the runner started"
            out_of_memory.append(victim)
            notices.append(
                f"out of memory: the run reached task.toml's memory_mb = {limit} (its memory cgroup's limit), and "
                f"the kernel's OOM killer ended {victim}"
                + (f" ({killed} processes in all)" if killed > 1 else "")
                + ", as it would in the sandbox"
            )
    limits = prepared.limits
    helper = attached.network if attached is not None else None
    if done is not None and helper is not None and helper.problem is not None and limits is not None:
        limits, lost = _network_lost(limits, helper)
        notices.append(lost)
    spec = prepared.spec
    stack = None
    # The run could leave a link anywhere in its stage (the copy sandbox's reward folder
    # itself): read beneath the stage, never through one.
    stage = prepared.stage
    reward_files = read_reward_files(stage.reward_dir, beneath=stage.root)
    # A run stopped at its timeout is VerifierTimeoutError whatever it wrote: Harbor's
    # Trial._verify_with_timeout (harbor/trial/trial.py) cancels Verifier.verify before
    # that reads the reward folder. The files are still listed, for the user.
    verdict = (
        timeout_verdict(spec.timeout_s, reward_files)
        if timed_out
        else harbor_verdict(stage.reward_dir, beneath=stage.root)
    )
    pm = prepared.path_map
    stdout, stderr = (
        replace(text, head=map_paths(text.head, pm), tail=map_paths(text.tail, pm)) for text in (stdout, stderr)
    )
    if timed_out and done is not None:
        from verifier_tui.engine.stacks import take_stack

        own = spec.runner.path if spec.runner is not None else None
        stderr, stack = take_stack(
            stderr,
            done.asked_before_kill,
            stack_signal=prepared.stack_signal,
            stack_answer=prepared.stack_answer,
            runner=own,
            verifier=spec.verifier,
            tests_dir=spec.task.tests_dir,
        )
    verdict = _never_ran(verdict, start_error, refused=done is None and prepared.shim_refusal is not None)
    if verdict.message:
        verdict = replace(verdict, message=map_paths(verdict.message, pm))
    unawaited = never_awaited(stdout.text, stderr.text)
    if unawaited:  # beside the verdict: it is about whether the score can be trusted
        verdict = replace(verdict, warnings=(*verdict.warnings, never_awaited_warning(unawaited)))
    said = (
        missing_module_notice(stderr.text, spec.task.root, [spec.task.tests_dir, spec.verifier.parent], spec.python),
        debugger_notice(stderr.text),
        relative_import_notice(stderr.text, spec.task.root),
    )
    notices += [notice for notice in said if notice is not None]
    notices += runner_not_compiled_notices(stderr.text, spec.own_runner)
    outcome = outcome_of(returncode, signal, timed_out, start_error, verdict)
    notices += _scratch_filled(prepared, done, returncode == 0 and verdict.rewards is not None)
    cause = returned_wrong(stderr.text) if outcome is Outcome.CONTRACT_ERROR else None
    if cause is not None and verdict.rewards is None:
        # Why there is no reward file comes first: what Harbor would raise for it is the consequence.
        verdict = replace(verdict, message=f"{cause}. {verdict.message}")
    if spec.harbor_gives_up_s is not None and not timed_out:
        # task.toml's timeout_sec is 0 or less: Harbor's wait_for cancels the verifier before
        # it runs, whatever this run did (the outcome says that, the verdict Harbor's; the
        # warnings about what the verifier did stay).
        verdict = replace(timeout_verdict(spec.harbor_gives_up_s), warnings=verdict.warnings)
    if done is None and returncode is not None:  # test.sh's own refusal (above)
        outcome = Outcome.REFUSED_BY_SHIM
    strays = sorted(cut(map_paths(c, pm)) for c in strays)  # in each sandbox's order alike
    cut_short = done is not None and done.output_cut_short
    notices += _left_behind(strays, cut_short, pipe_wait_s, written, strays_more, strays_at_least)
    explain = read_explain(prepared) or (contract_explanation(prepared) if done is not None else None)
    notices += preload_notices(explain)
    if verdict.rewards is not None:  # a run that failed has said why already
        borrowed = own_environment_notice(
            explain,
            spec.task.root,
            spec.verifier,
            [spec.verifier.parent, spec.task.tests_dir],  # the runner's order
        )
        notices += [borrowed] if borrowed is not None else []
    return RunResult(
        outcome=outcome,
        exit_code=returncode if signal is None and not timed_out else None,
        signal=signal,
        duration_s=duration_s,
        pipe_wait_s=pipe_wait_s,
        reward_files=reward_files,
        verdict=verdict,
        stdout=stdout,
        stderr=stderr,
        explain=explain,
        phases=read_phases(prepared),
        coverage=read_coverage(prepared) if done is not None else None,
        inputs=spec.inputs,
        command=prepared.reproduce,
        trigger=trigger,
        notices=notices,
        start_error=map_paths(start_error, pm) if start_error else None,
        not_staged=done is None and prepared.not_staged or view_failed,
        sequence=sequence,
        task_refused=spec.task.config.refused,
        environment=prepared.environment.to_json() if prepared.environment is not None else None,
        sandbox="namespace" if prepared.stage.namespace else "copy",
        sandbox_words=prepared.stage.sandbox_words,
        strays=strays,
        strays_not_listed=strays_more,
        strays_cut_short=strays_at_least,
        user_files_written=written,
        stack=stack,
        tests_dirs=(*([spec.extra_tests] if spec.extra_tests else []), spec.task.tests_dir),
        limits=limits.to_json() if limits is not None else None,
        out_of_memory=out_of_memory,
    )


def _network_lost(limits: Any, helper: Any) -> tuple[Any, Advice]:
    """The run's limits as it had them, and the notice of a network helper that
    failed it (``helper.problem``): none at all, or lost once given."""
    had = "lost its network during the run" if helper.ready else "had no network"
    if not helper.ready:
        limits = replace(limits, network_given="none")  # what the run had, not what it was to have
    return limits, Advice(  # an action: the pytest plugin has no --network
        f"network_mode = {limits.network!r}, but this run {had}: {helper.problem}; "
        "its network calls fail here and would not in Harbor (",
        of_test("--network host shares this machine's instead"),
        ")",
    )


def _left_behind(
    strays: list[str], cut_short: bool, pipe_wait_s: float, written: list[str], more: int = 0, at_least: bool = False
) -> list[str]:
    """What the run left behind, in words: processes still running once the
    runner was over (``more`` of them counted, not listed; ``at_least``: their
    listing was cut short), output held open after it, the user's files changed while it ran."""
    from verifier_tui.engine.sandbox.strays import strays_notice

    notices = [strays_notice(strays, more=more, at_least=at_least)] if strays or more else []
    if cut_short:
        # (A shorter wait is in --json's pipe_wait_s only: on a loaded machine even a clean exit
        # can take a few hundred ms to close its pipes, and the strays notice names any holder.)
        notices.append(
            f"output cut short: a process the run started held its output open {duration_text(pipe_wait_s)} "
            "after the runner exited, and what it wrote later is not shown"
        )
    if written:
        shown = ", ".join(written[:5]) + (f" +{len(written) - 5} more" if len(written) > 5 else "")
        # found by looking before and after the run, which cannot tell its writes from a save of the user's
        notices.append(f"your own files changed while the run ran, by the run or by you: {shown}")
    return notices
