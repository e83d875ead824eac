"""One invocation of the runner: :func:`prepare` stages the layout and builds
the command line, the process driver (:mod:`verifier_tui.engine.process`) runs
it, and :func:`collect` turns what it left into a :class:`RunResult`, every
path mapped back to the user's own files."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

from verifier_tui.engine.cases import wrap_text_response
from verifier_tui.engine.discovery import Task
from verifier_tui.engine.model import (
    CapturedText,
    Expectation,
    Outcome,
    ResponseSource,
    RunResult,
    Verdict,
)
from verifier_tui.engine.record import field, record
from verifier_tui.engine.interpreter import probe_interpreter
from verifier_tui.engine.stage import Stage, StagingError

TYPE_CHECKING = False  # typing is not imported at run time: start-up is measured
if TYPE_CHECKING:
    from typing import Any

    from verifier_tui.engine.process import ProcessResult

# Default timeout when neither --timeout nor task.toml's [verifier] timeout_sec says.
# Harbor's own default verifier timeout is 600 s; a debugger should answer sooner,
# but a slow verifier must not be cut short by surprise: keep Harbor's.
DEFAULT_TIMEOUT_S = 600.0
# Variables that would change what the runner imports or how Python starts,
# which the sandbox's python3 would not have.
_DROPPED_ENV = ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PYTHONSAFEPATH", "PYTHONINSPECT",
                "PYTHONBREAKPOINT", "PYTHONUSERBASE", "VIRTUAL_ENV")
EXPLAIN_FILE = "explain.json"


@record(frozen=True)
class RunSpec:
    """Everything a run needs, fully resolved: the user's own paths."""

    task: Task
    verifier: Path
    case: str | None
    workspace: Path | None  # None: an empty scratch workspace
    response: ResponseSource | None  # None: Harbor mode
    task_data: Path | None
    expected: Expectation | None
    python: str = "python3"
    timeout_s: float = DEFAULT_TIMEOUT_S
    nemo_gym: Path | None = None  # --nemo-gym: another copy of nemo_gym/verifiers to vendor
    explain_only: bool = False


@record
class Prepared:
    """A run ready to start: the command, its environment, and how to map
    scratch paths back to the user's."""

    spec: RunSpec
    stage: Stage
    argv: list[str]
    env: dict[str, str]
    cwd: Path
    path_map: list[tuple[str, str]]
    notices: list[str] = field(default_factory=list)
    reproduce: list[str] = field(default_factory=list)
    start_error: str | None = None


def child_env(task_env: dict[str, str]) -> dict[str, str]:
    """The child's environment, built on purpose: ours minus what would change
    the import path or start-up, plus unbuffered UTF-8 output, plus the task's
    ``[verifier] env``."""
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED_ENV and not k.startswith("TEXTUAL")}
    env.update(PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1", PYTHONIOENCODING="utf-8")
    env.update(task_env)
    return env


def prepare(spec: RunSpec, stage: Stage) -> Prepared:
    """Stage the layout for ``spec`` and build the runner's command line."""
    notices: list[str] = []
    env = child_env(spec.task.config.env)
    interpreter = probe_interpreter(spec.python, env)
    vendored = spec.nemo_gym if spec.nemo_gym is not None else interpreter.nemo_gym_verifiers
    if spec.nemo_gym is not None and not (spec.nemo_gym / "__init__.py").is_file():
        notices.append(f"--nemo-gym {spec.nemo_gym} has no __init__.py: is it a nemo_gym/verifiers folder?")
    start_error = interpreter.error
    try:
        notices += stage.prepare(spec.task.tests_dir, spec.workspace, vendored)
    except StagingError as exc:
        start_error = str(exc)
    staged_rel = spec.task.staged_name(spec.verifier)
    if staged_rel == ".ng/verifier.py":
        stage.place_dataset_verifier(spec.verifier)
    staged_verifier = stage.tests_dir / staged_rel
    argv = [
        interpreter.executable or spec.python,
        "-B",
        "-u",
        str(stage.ng_dir / "run_verifier.py"),
        "--verifier",
        str(staged_verifier),
        "--workspace",
        str(stage.app_dir),
    ]
    response_arg: str | None = None
    if spec.response is not None:
        response_arg = str(_stage_response(spec.response, stage))
        argv += ["--response", response_arg]
    if spec.task_data is not None:
        argv += ["--task-data", str(spec.task_data)]
    explain_file = stage.inputs_dir / EXPLAIN_FILE
    if explain_file.exists():
        explain_file.unlink()
    if spec.explain_only:
        argv.append("--explain")
    else:
        argv += ["--reward-dir", str(stage.reward_dir), "--explain-to", str(explain_file)]

    path_map = [
        (str(stage.ng_dir), str(spec.task.tests_dir / ".ng") + " (staged runner)"),
        (str(stage.tests_dir), str(spec.task.tests_dir)),
        (str(stage.app_dir), str(spec.workspace) if spec.workspace else "<empty scratch workspace>"),
        (str(stage.reward_dir), "<reward folder>"),
    ]
    if staged_rel == ".ng/verifier.py":
        path_map.insert(0, (str(stage.ng_dir / "verifier.py"), str(spec.verifier)))
    if spec.response is not None and response_arg is not None and spec.response.path is not None:
        path_map.insert(0, (response_arg, str(spec.response.path)))
    if stage.vendored_from is not None:
        notices_vendor = f"nemo_gym/verifiers vendored from {stage.vendored_from}"
        path_map.insert(0, (str(stage.ng_dir / "nemo_gym" / "verifiers"), str(stage.vendored_from) + " (vendored)"))
    else:
        notices_vendor = None
    path_map.append((str(stage.root), "<scratch>"))
    if spec.workspace is None:
        notices.append("no case and no workspace chosen: the verifier runs on an empty scratch workspace")
    if notices_vendor and spec.nemo_gym is not None:
        notices.append(notices_vendor)
    reproduce = reproduce_command(spec, vendored)
    return Prepared(
        spec=spec,
        stage=stage,
        argv=argv,
        env=env,
        cwd=stage.app_dir,
        path_map=path_map,
        notices=notices,
        reproduce=reproduce,
        start_error=start_error,
    )


def _stage_response(response: ResponseSource, stage: Stage) -> Path:
    """The file passed as ``--response``: a JSON file as it is (the runner only
    reads it), a text file or typed text wrapped into a minimal response."""
    if response.kind == "json" and response.path is not None:
        return response.path
    if response.path is not None:
        try:
            text = response.path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return response.path  # gone or unreadable: the runner names the file and the problem
    else:
        text = response.text or ""
    target = stage.inputs_dir / "response.json"
    if response.kind == "json":  # typed JSON: passed exactly as typed
        target.write_text(text, encoding="utf-8")
    else:
        target.write_text(json.dumps(wrap_text_response(text), indent=2), encoding="utf-8")
    return target


def reproduce_command(spec: RunSpec, vendored: Path | None) -> list[str]:
    """A shell command that reproduces this run outside the tool, on the
    user's own folders (with a throwaway reward folder)."""
    runner = "verifier-tui run"
    parts = [runner, shlex.quote(str(spec.task.root))]
    parts += ["--verifier", shlex.quote(str(spec.verifier))]
    if spec.case and spec.workspace is not None and spec.workspace.parent.name == spec.case:
        parts += ["--case", shlex.quote(spec.case)]
    elif spec.workspace is not None:
        parts += ["--workspace", shlex.quote(str(spec.workspace))]
    if spec.response is None:
        parts.append("--no-response")
    elif spec.response.path is not None:
        parts += ["--response", shlex.quote(str(spec.response.path))]
    if spec.task_data is not None:
        parts += ["--task-data", shlex.quote(str(spec.task_data))]
    if spec.python != "python3":
        parts += ["--python", shlex.quote(spec.python)]
    if spec.nemo_gym is not None:
        parts += ["--nemo-gym", shlex.quote(str(spec.nemo_gym))]
    return parts


def map_paths(text: str, path_map: list[tuple[str, str]]) -> str:
    """Scratch paths in ``text`` replaced by the user's own (longest first)."""
    if not text:
        return text
    for scratch, user in path_map:
        if scratch in text:
            text = text.replace(scratch, user)
    return text


def map_json(value: Any, path_map: list[tuple[str, str]]) -> Any:
    if isinstance(value, str):
        return map_paths(value, path_map)
    if isinstance(value, list):
        return [map_json(v, path_map) for v in value]
    if isinstance(value, dict):
        return {k: map_json(v, path_map) for k, v in value.items()}
    return value


def read_explain(prepared: Prepared, stdout_text: str | None = None) -> dict[str, Any] | None:
    """The runner's explain document, with paths mapped to the user's."""
    if stdout_text is not None:
        raw = stdout_text
    else:
        try:
            raw = (prepared.stage.inputs_dir / EXPLAIN_FILE).read_text(encoding="utf-8")
        except OSError:
            return None
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    return map_json(data, prepared.path_map) if isinstance(data, dict) else None


def outcome_of(returncode: int | None, signal: int | None, timed_out: bool, start_error: str | None) -> Outcome:
    if start_error is not None:
        return Outcome.COULD_NOT_START
    if timed_out:
        return Outcome.TIMED_OUT
    if signal is not None:
        return Outcome.KILLED
    return {0: Outcome.REWARD_WRITTEN, 1: Outcome.VERIFIER_RAISED, 2: Outcome.CONTRACT_ERROR}.get(
        returncode, Outcome.UNEXPECTED_EXIT
    )


def collect(prepared: Prepared, done: ProcessResult | None, *, trigger: str, sequence: int) -> RunResult:
    """Turn what the child did into a RunResult (verdict read from the staged
    reward folder, paths mapped back to the user's files). ``done`` is what the
    process driver returned; ``None`` when the run could not start."""
    from verifier_tui.engine.verdict import harbor_verdict, read_reward_files

    if done is None:
        returncode = signal = None
        timed_out, start_error, duration_s, pipe_wait_s = False, prepared.start_error, 0.0, 0.0
        stdout = stderr = CapturedText()
    else:
        returncode, signal, timed_out = done.returncode, done.signal, done.timed_out
        start_error, duration_s, pipe_wait_s = done.start_error, done.duration_s, done.pipe_wait_s
        stdout, stderr = done.stdout, done.stderr
    spec = prepared.spec
    reward_dir = prepared.stage.reward_dir
    reward_files = read_reward_files(reward_dir)
    verdict = harbor_verdict(reward_dir)
    pm = prepared.path_map
    stdout = CapturedText(map_paths(stdout.head, pm), map_paths(stdout.tail, pm), stdout.dropped_bytes, stdout.total_bytes)
    stderr = CapturedText(map_paths(stderr.head, pm), map_paths(stderr.tail, pm), stderr.dropped_bytes, stderr.total_bytes)
    if verdict.message:
        verdict = Verdict(verdict.rewards, verdict.error, map_paths(verdict.message, pm), verdict.source, verdict.warnings)
    return RunResult(
        outcome=outcome_of(returncode, signal, timed_out, start_error),
        exit_code=returncode if signal is None and not timed_out else None,
        signal=signal,
        duration_s=duration_s,
        pipe_wait_s=pipe_wait_s,
        reward_files=reward_files,
        verdict=verdict,
        stdout=stdout,
        stderr=stderr,
        explain=read_explain(prepared),
        case=spec.case,
        verifier=spec.verifier,
        workspace=spec.workspace,
        response=spec.response,
        task_data=spec.task_data,
        expected=spec.expected,
        python=spec.python,
        timeout_s=spec.timeout_s,
        command=prepared.reproduce,
        trigger=trigger,
        notices=list(prepared.notices),
        start_error=map_paths(start_error, pm) if start_error else None,
        sequence=sequence,
    )
