"""Harbor trial and job folders: builders that write them in Harbor 0.26.0's
layout and file shapes (harbor/models/trial/{config,result,paths}.py,
harbor/models/job/lock.py), as Harbor's own tests build them; the tests in
tests/harbor/test_builders.py check them against genuine folders written by
Harbor 0.26.0 (../shared/harbor-0.26). sandbox_run() produces what a trial's
verifier/ folder holds by running the real runner as the sandbox's shim would."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path

from tests.helpers.tasks import HANG_GUARD_S, PY, REPO

RUNNER = REPO / "runner" / "run_verifier.py"


#: A verifier scoring 1.0 when the workspace's hello.txt says hi (a trial's /app as an agent left it), else 0.0.
READS_HELLO = "def verify(workspace):\n    return 1.0 if (workspace / 'hello.txt').read_text() == 'hi' else 0.0\n"


def _shared_folder() -> Path | None:
    """``../shared`` from the project's root (a worktree sits one level deeper)."""
    for base in (REPO.parent, REPO.parent.parent):
        if (base / "shared" / "harbor-0.26").is_dir():
            return base / "shared"
    return None


SHARED = _shared_folder()
#: Genuine Harbor 0.26.0 job folders and the tasks they ran (None when ../shared is not there).
HARBOR_REAL = SHARED / "harbor-0.26" if SHARED else None

HARBOR_TIME = "2026-12-01T03:36:18.000000Z"
_RETRY_EXCLUDED = [
    "AgentTimeoutError",
    "RewardFileEmptyError",
    "RewardFileNotFoundError",
    "VerifierOutputParseError",
    "VerifierTimeoutError",
]
#: ErrorPolicy of Harbor 0.26.0 (harbor/models/trial/error_policy.py) for the types the tests use.
_POLICIES = {
    "AgentTimeoutError": (False, True, True),
    "NonZeroAgentExitCodeError": (False, True, True),
    "AgentSetupTimeoutError": (True, False, False),
    "VerifierTimeoutError": (False, True, False),
    "RewardFileNotFoundError": (False, True, False),
    "RewardFileEmptyError": (False, True, False),
    "VerifierOutputParseError": (False, True, False),
}
_EXCEPTION_MODULES = {
    "RewardFileNotFoundError": "harbor.verifier.verifier",
    "RewardFileEmptyError": "harbor.verifier.verifier",
    "VerifierOutputParseError": "harbor.verifier.verifier",
    "VerifierTimeoutError": "harbor.trial.errors",
    "AgentTimeoutError": "harbor.trial.errors",
    "ValidationError": "pydantic_core._pydantic_core",
}


def _agent_config(name: str) -> dict:
    return {
        "name": name,
        "import_path": None,
        "model_name": None,
        "base_url": None,
        "model_api_key_name": None,
        "model_api_format": None,
        "skip_model_parsing": False,
        "n_concurrent": None,
        "concurrency_group": None,
        "skills": [],
        "override_timeout_sec": None,
        "override_setup_timeout_sec": None,
        "max_timeout_sec": None,
        "resume_trajectory": False,
        "load_trajectory": None,
        "extra_allowed_hosts": [],
        "kwargs": {},
        "mcp_servers": [],
    }


def _environment_config(env: dict | None = None) -> dict:
    out = {
        "type": None,
        "import_path": "hostenv:HostEnvironment",
        "force_build": False,
        "delete": True,
        "stream": False,
        "cpu_enforcement_policy": "auto",
        "memory_enforcement_policy": "auto",
        "override_cpus": None,
        "override_memory_mb": None,
        "override_storage_mb": None,
        "override_gpus": None,
        "override_tpu": None,
        "mounts": None,
        "extra_docker_compose": [],
        "kwargs": {},
        "extra_allowed_hosts": [],
    }
    if env:
        out["env"] = env  # TrialConfig drops an empty env when serialising
    return out


def _task_config(path: str) -> dict:
    return {
        "path": path,
        "git_url": None,
        "git_commit_id": None,
        "name": None,
        "ref": None,
        "overwrite": False,
        "download_dir": None,
        "source": None,
    }


def harbor_trial_config(
    *,
    task_path: str,
    trial_name: str,
    trials_dir: str,
    agent: str = "oracle",
    timeout_multiplier: float = 1.0,
    verifier_timeout_multiplier: float | None = None,
    override_timeout_sec: float | None = None,
    max_timeout_sec: float | None = None,
    verifier_env: dict | None = None,
    environment_env: dict | None = None,
    job_id: str | None = None,
) -> dict:
    """A ``TrialConfig`` as Harbor 0.26.0 writes it to config.json."""
    verifier = {"override_timeout_sec": override_timeout_sec, "max_timeout_sec": max_timeout_sec, "disable": False}
    if verifier_env:
        verifier["env"] = verifier_env
    return {
        "schema_version": 1,
        "task": _task_config(task_path),
        "trial_name": trial_name,
        "trials_dir": trials_dir,
        "install_only": False,
        "timeout_multiplier": timeout_multiplier,
        "agent_timeout_multiplier": None,
        "verifier_timeout_multiplier": verifier_timeout_multiplier,
        "agent_setup_timeout_multiplier": None,
        "environment_build_timeout_multiplier": None,
        "agent": _agent_config(agent),
        "user_agent": None,
        "environment": _environment_config(environment_env),
        "verifier": verifier,
        "override_error_policy": {},
        "artifacts": [],
        "extra_instruction_paths": [],
        "extra_instructions": [],
        "job_id": job_id or str(uuid.uuid4()),
        "source_trial": None,
    }


def harbor_exception(kind: str, message: str, *, at: str = HARBOR_TIME) -> dict:
    """An ``ExceptionInfo`` as result.json holds it (with its computed policy)."""
    retry, grade, valid = _POLICIES.get(kind, (True, True, True))
    module = _EXCEPTION_MODULES.get(kind, "harbor.trial.errors")
    traceback_text = (
        f'Traceback (most recent call last):\n  File "/opt/harbor/site-packages/harbor/trial/trial.py", '
        f"line 616, in run\n    await self._run()\n{module}.{kind}: {message}\n"
    )
    return {
        "exception_type": kind,
        "exception_message": message,
        "exception_traceback": traceback_text,
        "occurred_at": at,
        "policy": {"should_retry": retry, "should_grade": grade, "has_valid_reward": valid},
    }


def _span(base, start: float, end: float) -> dict:
    """A TimingInfo ``start`` to ``end`` seconds after ``base`` (a UTC datetime)."""
    from datetime import timedelta

    def stamp(seconds: float) -> str:
        return (base + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    return {"started_at": stamp(start), "finished_at": stamp(end)}


def _agent_result() -> dict:
    return {
        "n_input_tokens": None,
        "n_cache_tokens": None,
        "n_output_tokens": None,
        "cost_usd": None,
        "model_usage": None,
        "rollout_details": None,
        "metadata": None,
    }


def _write_json(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=4), encoding="utf-8")


def _write_files(folder: Path, files: dict) -> None:
    for rel, content in files.items():
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")


def _manifest(app: dict | Path | None) -> list:
    entries = [
        {
            "source": "/logs/artifacts",
            "destination": "artifacts/logs/artifacts",
            "type": "directory",
            "status": "ok",
            "service": None,
            "exclude": [],
        }
    ]
    if app is not None:
        entries.append(
            {
                "source": "/app",
                "destination": "artifacts/app",
                "type": "directory",
                "status": "ok",
                "service": None,
                "exclude": [],
            }
        )
    return entries


def _write_pass(
    folder: Path, *, verifier_files: dict | None, app: dict | Path | None, agent: str, manifest: bool = True
) -> None:
    """A pass's agent/, verifier/ and artifacts/ (the trial's own, or one step's)."""
    _write_files(folder / "agent", {"oracle.txt": ""} if agent == "oracle" else {})
    (folder / "agent").mkdir(parents=True, exist_ok=True)
    if verifier_files is not None:
        (folder / "verifier").mkdir(parents=True, exist_ok=True)
        _write_files(folder / "verifier", verifier_files)
    (folder / "artifacts").mkdir(parents=True, exist_ok=True)
    if isinstance(app, Path):
        shutil.copytree(app, folder / "artifacts" / "app")
    elif app is not None:
        (folder / "artifacts" / "app").mkdir(parents=True, exist_ok=True)
        _write_files(folder / "artifacts" / "app", app)
    if manifest:
        _write_json(folder / "artifacts" / "manifest.json", _manifest(app))


def make_trial(
    folder: Path,
    *,
    task: Path,
    run_dir: Path | None = None,
    agent: str = "oracle",
    rewards: dict | None = None,
    exception: dict | None = None,
    verifier_files: dict | None = None,
    app: dict | Path | None = None,
    mode: str | None = "shared",
    steps: list[dict] | None = None,
    log: str = "Collecting main service artifacts\n",
    digest: str | None = "auto",
    verifier_ran: bool = True,
    verifier_seconds: float = 0.7,
    config: dict | None = None,
    result: str = "ok",
    old_layout: bool = False,
) -> Path:
    """A trial folder at ``folder`` (its parent plays the job folder) as
    Harbor 0.26.0 writes it.

    - ``task``: the task folder; config.json's ``task.path`` is it relative to
      ``run_dir`` (default: the job folder's grandparent, the folder Harbor ran in).
    - ``rewards`` / ``exception`` (see :func:`harbor_exception`): what result.json records.
    - ``verifier_files``: ``verifier/`` contents (``test-stdout.txt``, reward files); None: no folder.
    - ``app``: captured ``/app`` (files, or a folder to copy); recorded in the manifest.
    - ``mode``: ``verifier_environment_mode`` (None for multi-step).
    - ``steps``: for a multi-step trial, ``[{"name", "rewards", "exception", "verifier_files", "app"}]``.
    - ``digest``: lock.json's task digest ("auto": the task's own, via the engine's
      digest, which tests/harbor/test_digest.py checks against Harbor's; None: no lock.json).
    - ``result``: "ok", "missing" (Harbor killed) or "truncated".
    - ``old_layout``: a trial of an older Harbor (no schema_version,
      verifier_environment_mode, reward_valid, lock.json or manifest).
    """
    from datetime import datetime, timezone

    base = datetime.now(timezone.utc)  # the trial "starts" now: the task's files are older
    folder = Path(folder)
    job = folder.parent
    run_dir = run_dir or job.parent.parent
    trials_dir = os.path.relpath(job, run_dir)
    task_path = os.path.relpath(task, run_dir)
    name = folder.name
    cfg = config or harbor_trial_config(task_path=task_path, trial_name=name, trials_dir=trials_dir, agent=agent)
    folder.mkdir(parents=True, exist_ok=True)
    _write_json(folder / "config.json", cfg)
    (folder / "trial.log").write_text(log, encoding="utf-8")
    if digest == "auto":
        from verifier_tui.engine.harbor.digest import task_digest

        digest = task_digest(task).digest
    if digest is not None and not old_layout:
        _write_json(
            folder / "lock.json",
            {
                "schema_version": 2,
                "task": {"name": Path(task).name, "type": "local", "digest": digest, "path": task_path},
                "install_only": False,
                "timeout_multiplier": cfg["timeout_multiplier"],
                "agent": {
                    k: cfg["agent"][k]
                    for k in (
                        "name",
                        "skip_model_parsing",
                        "skills",
                        "resume_trajectory",
                        "extra_allowed_hosts",
                        "kwargs",
                        "mcp_servers",
                    )
                },
                "bridge_inputs": {},
                "skills": [],
                "environment": {k: v for k, v in cfg["environment"].items() if v is not None and k != "type"},
                "verifier": {"disable": False, **({"environment_mode": mode} if mode else {})},
                "artifacts": [],
                "override_error_policy": {},
            },
        )
    step_results = None
    if steps:
        step_results = []
        for index, step in enumerate(steps):
            _write_pass(
                folder / "steps" / step["name"],
                verifier_files=step.get("verifier_files"),
                app=step.get("app"),
                agent=agent,
            )
            start = 0.1 + index * 1.0
            step_results.append(
                {
                    "step_name": step["name"],
                    "agent_result": _agent_result(),
                    "verifier_result": {"rewards": step["rewards"]} if step.get("rewards") is not None else None,
                    "exception_info": step.get("exception"),
                    "agent_execution": _span(base, start, start + 0.05),
                    "verifier": _span(base, start + 0.06, start + 0.06 + verifier_seconds),
                }
            )
    else:
        _write_pass(folder, verifier_files=verifier_files, app=app, agent=agent, manifest=not old_layout)
    if steps and rewards is None:
        # MultiStepTrial._aggregate_step_rewards: per-key means over the steps that have rewards.
        scored = [step["rewards"] for step in steps if step.get("rewards") is not None]
        keys = sorted({key for r in scored for key in r})
        rewards = {key: sum(r.get(key, 0) for r in scored) / len(scored) for key in keys} if scored else None
    if exception is not None:
        (folder / "exception.txt").write_text(exception["exception_traceback"], encoding="utf-8")
    data = {
        "schema_version": 1,
        "id": str(uuid.uuid4()),
        "task_name": Path(task).name,
        "trial_name": name,
        "trial_uri": (run_dir / trials_dir / name).as_uri() if run_dir.is_absolute() else f"file:///{name}",
        "task_id": {"path": task_path},
        "source": None,
        "task_checksum": "0" * 64,
        "config": cfg,
        "agent_info": {"name": agent, "version": "1.0.0", "model_info": None},
        "agent_result": None if steps else _agent_result(),
        "verifier_result": {"rewards": rewards} if rewards is not None else None,
        "verifier_environment_mode": None if steps else mode,
        "exception_info": exception,
        "started_at": _span(base, 0, 0)["started_at"],
        "finished_at": _span(base, 0, 3)["finished_at"],
        "environment_setup": _span(base, 0.01, 0.02),
        "agent_setup": _span(base, 0.02, 0.03),
        "agent_execution": None if steps else _span(base, 0.03, 0.08),
        "verifier": _span(base, 0.1, 0.1 + verifier_seconds) if verifier_ran and not steps else None,
        "step_results": step_results,
        "reward_valid": rewards is not None and (exception is None or exception["policy"]["has_valid_reward"]),
    }
    if old_layout:
        for key in ("schema_version", "verifier_environment_mode", "reward_valid", "step_results"):
            data.pop(key)
    if result == "ok":
        _write_json(folder / "result.json", data)
    elif result == "truncated":
        (folder / "result.json").write_text(json.dumps(data, indent=4)[:700], encoding="utf-8")
    return folder


#: A trial that passed, as make_trial and make_job take its fields: reward 1.0 in reward.txt.
PASSED = {"rewards": {"reward": 1.0}, "verifier_files": {"test-stdout.txt": "", "reward.txt": "1.0"}}


def make_job(folder: Path, trials: dict[str, dict]) -> Path:
    """A job folder at ``folder`` with one trial per ``{trial_name: make_trial kwargs}``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    job_id = str(uuid.uuid4())
    tasks = []
    for name, kwargs in trials.items():
        make_trial(folder / name, **kwargs)
        tasks.append(json.loads((folder / name / "config.json").read_text())["task"])
    run_dir = folder.parent.parent
    _write_json(
        folder / "config.json",
        {
            "schema_version": 1,
            "job_name": folder.name,
            "jobs_dir": os.path.relpath(folder.parent, run_dir),
            "n_attempts": 1,
            "install_only": False,
            "skip_credential_checks": False,
            "timeout_multiplier": 1.0,
            "agent_timeout_multiplier": None,
            "verifier_timeout_multiplier": None,
            "agent_setup_timeout_multiplier": None,
            "environment_build_timeout_multiplier": None,
            "debug": False,
            "n_concurrent_trials": 4,
            "quiet": True,
            "retry": {
                "max_retries": 0,
                "include_exceptions": None,
                "exclude_exceptions": _RETRY_EXCLUDED,
                "wait_multiplier": 1.0,
                "min_wait_sec": 1.0,
                "max_wait_sec": 60.0,
            },
            "override_error_policy": {},
            "environment": _environment_config(),
            "verifier": {"override_timeout_sec": None, "max_timeout_sec": None, "disable": False},
            "metrics": [],
            "agents": [_agent_config("oracle")],
            "user_agent": None,
            "datasets": [],
            "tasks": tasks,
            "artifacts": [],
            "extra_instruction_paths": [],
            "extra_instructions": [],
            "source_jobs": [],
        },
    )
    _write_json(
        folder / "lock.json",
        {
            "schema_version": 3,
            "created_at": HARBOR_TIME,
            "harbor": {"version": "0.26.0", "is_editable": False},
            "n_concurrent_trials": 4,
            "retry": {
                "max_retries": 0,
                "exclude_exceptions": _RETRY_EXCLUDED,
                "wait_multiplier": 1.0,
                "min_wait_sec": 1.0,
                "max_wait_sec": 60.0,
            },
            "trials": [
                json.loads((folder / n / "lock.json").read_text())
                for n in trials
                if (folder / n / "lock.json").is_file()
            ],
        },
    )
    evals: dict = {}
    for name in trials:
        data = (
            json.loads((folder / name / "result.json").read_text())
            if (folder / name / "result.json").is_file()
            else None
        )
        if data is None:
            continue
        stats = evals.setdefault(
            f"{data['agent_info']['name']}__adhoc",
            {"n_trials": 0, "n_errors": 0, "metrics": [], "pass_at_k": {}, "reward_stats": {}, "exception_stats": {}},
        )
        error = (data.get("exception_info") or {}).get("exception_type")
        if error:
            stats["n_errors"] += 1
            stats["exception_stats"].setdefault(error, []).append(name)
        rewards = (data.get("verifier_result") or {}).get("rewards")
        if rewards is not None:
            stats["n_trials"] += 1
            for key, value in rewards.items():
                stats["reward_stats"].setdefault(key, {}).setdefault(str(value), []).append(name)
    for stats in evals.values():
        means = [
            float(v)
            for by_value in stats["reward_stats"].get("reward", {}).items()
            for v in [by_value[0]] * len(by_value[1])
        ]
        if means:
            stats["metrics"] = [{"mean": sum(means) / len(means)}]
    _write_json(
        folder / "result.json",
        {
            "schema_version": 1,
            "id": job_id,
            "started_at": "2026-12-01T03:36:17.773290",
            "updated_at": "2026-12-01T03:36:18.904091",
            "finished_at": "2026-12-01T03:36:18.904091",
            "n_total_trials": len(trials),
            "stats": {
                "n_completed_trials": len(trials),
                "n_errored_trials": 0,
                "n_running_trials": 0,
                "n_pending_trials": 0,
                "n_cancelled_trials": 0,
                "n_retries": 0,
                "evals": evals,
                "n_input_tokens": None,
                "n_cache_tokens": None,
                "n_output_tokens": None,
                "cost_usd": None,
            },
        },
    )
    (folder / "job.log").write_text("Collecting main service artifacts\n", encoding="utf-8")
    return folder


class SandboxRun:
    """What a sandbox's verifier/ folder holds after the shim ran the runner."""

    def __init__(self, files: dict, timed_out: bool) -> None:
        self.files = files  # {"test-stdout.txt": text, "reward.txt": bytes, ...}
        self.timed_out = timed_out


def sandbox_run(
    task: Path,
    scratch: Path,
    *,
    workspace: dict | Path | None = None,
    planted: dict | None = None,
    timeout_s: float | None = None,
    python: str | None = None,
    env: dict | None = None,
    keep_output_on_timeout: bool = True,
) -> SandboxRun:
    """Run ``task``'s verifier with the real runner as the sandbox's shim does
    (``--verifier /tests/verifier.py --workspace /app``, task data when
    ``tests/task_data.json`` exists, stdout and stderr merged as Harbor's
    ``> test-stdout.txt 2>&1``), in a staged copy under ``scratch``; the
    output's staged paths are written back as ``/tests``, ``/app`` and
    ``/logs/verifier``. ``planted``: reward files in the reward folder before
    the runner starts. ``timeout_s``: kill it then, as Harbor's timeout does
    (``keep_output_on_timeout`` False: a cloud sandbox, nothing downloaded)."""
    root = Path(scratch) / "sandbox"
    tests = root / "tests"
    shutil.copytree(Path(task) / "tests", tests)
    (tests / ".ng").mkdir(exist_ok=True)
    shutil.copy(RUNNER, tests / ".ng" / "run_verifier.py")
    app = root / "app"
    if isinstance(workspace, Path):
        shutil.copytree(workspace, app)
    else:
        app.mkdir(parents=True)
        _write_files(app, workspace or {})
    rewards = root / "logs" / "verifier"
    rewards.mkdir(parents=True)
    _write_files(rewards, planted or {})
    argv = [
        python or PY,
        str(tests / ".ng" / "run_verifier.py"),
        "--verifier",
        str(tests / "verifier.py"),
        "--workspace",
        str(app),
        "--reward-dir",
        str(rewards),
    ]
    if (tests / "task_data.json").is_file():
        argv += ["--task-data", str(tests / "task_data.json")]
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    child_env.update(env or {})
    timed_out = False
    try:
        done = subprocess.run(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=child_env,
            timeout=timeout_s or HANG_GUARD_S,
            stdin=subprocess.DEVNULL,
        )
        output = done.stdout
    except subprocess.TimeoutExpired as exc:
        timed_out = True
        output = exc.output or b""
    text = output.decode("utf-8", errors="replace")
    for staged, sandbox in ((rewards, "/logs/verifier"), (app, "/app"), (tests, "/tests")):
        text = text.replace(str(staged), sandbox)
    files: dict = {}
    if not timed_out or keep_output_on_timeout:
        files["test-stdout.txt"] = text
        for entry in sorted(rewards.iterdir()):
            if entry.is_file():
                files[entry.name] = entry.read_bytes()
    return SandboxRun(files, timed_out)


def harbor_masked_failure_log(trial_name: str, kind: str, message: str) -> str:
    """trial.log after the agent failed first and then the verifier failed
    too: Harbor 0.26.0's ``Trial.run`` logs "Trial <name> failed: <message>",
    then ``_record_exception`` logs that it skips recording it, with the
    traceback (Python logging's default format: the message alone)."""
    module = _EXCEPTION_MODULES.get(kind, "harbor.trial.errors")
    frames = (
        '  File "/opt/harbor/site-packages/harbor/trial/trial.py", line 616, in run\n'
        "    await self._run()\n"
        '  File "/opt/harbor/site-packages/harbor/trial/single_step.py", line 52, in _run\n'
        "    await self._run_verifier()\n"
    )
    chain = ""
    if kind == "VerifierTimeoutError":
        chain = (
            "Traceback (most recent call last):\n"
            '  File "/usr/lib/python3.12/asyncio/tasks.py", line 520, in wait_for\n'
            "    return await fut\n"
            "asyncio.exceptions.CancelledError\n\n"
            "The above exception was the direct cause of the following exception:\n\n"
        )
    return (
        f"Trial {trial_name} failed: {message}\n"
        "Skipping exception record because trial already has exception_info\n"
        f"{chain}Traceback (most recent call last):\n{frames}{module}.{kind}: {message}\n"
        "Collecting main service artifacts\n"
    )


#: task.toml of a task whose verifier runs in a separate environment, with /app captured.
SEPARATE = 'version = "1.0"\nartifacts = ["/app"]\n\n[verifier]\nenvironment_mode = "separate"\n'


def timed_out_trial(
    runs: Path, scratch: Path, verifier: str, *, name: str = "demo", job: str = "j", trial: str = "demo__aaaaaaa"
):
    """A separate-mode trial of ``runs/tasks/NAME`` stopped at its 1 s timeout,
    as a cloud sandbox leaves it: Harbor downloads no verifier output after a
    timeout. Returns the opened trial."""
    from tests.helpers.tasks import make_task

    demo = make_task(runs / "tasks" / name, verifier, toml=SEPARATE + "timeout_sec = 1.0\n")
    return sandbox_trial(
        runs / "jobs" / job,
        demo,
        scratch,
        workspace={},
        mode="separate",
        capture=True,
        timeout_s=1.0,
        keep_output_on_timeout=False,
        name=trial,
    )


def sandbox_trial(
    job: Path,
    task: Path,
    scratch: Path,
    *,
    workspace: dict | Path | None,
    mode: str = "shared",
    capture: bool = False,
    name: str = "demo__aaaaaaa",
    trial_kwargs: dict | None = None,
    **run_kwargs,
):
    """Run ``task``'s verifier as the sandbox would (:func:`sandbox_run`) and
    record the trial Harbor would write of it in the job folder ``job``: the
    reward it read, or the exception it raised (``VerifierTimeoutError`` when
    the run was killed at ``timeout_s``). ``capture``: ``/app`` collected as an
    artifact. Returns the opened trial."""
    from verifier_tui.engine.harbor.folders import open_harbor
    from verifier_tui.engine.verdict import harbor_verdict

    run = sandbox_run(task, Path(scratch) / f"sandbox-{name}", workspace=workspace, **run_kwargs)
    staged = Path(scratch) / f"verdict-{name}"
    staged.mkdir(parents=True)
    for file, content in run.files.items():
        (staged / file).write_bytes(content if isinstance(content, bytes) else content.encode())
    verdict = harbor_verdict(staged)
    if run.timed_out:
        kwargs = dict(
            exception=harbor_exception(
                "VerifierTimeoutError", f"Verifier execution timed out after {run_kwargs['timeout_s']} seconds"
            )
        )
    elif verdict.ok:
        kwargs = dict(rewards=verdict.rewards)
    else:
        kwargs = dict(exception=harbor_exception(verdict.error, verdict.message))
    kwargs.update(trial_kwargs or {})
    make_job(
        Path(job),
        {name: dict(task=task, mode=mode, verifier_files=run.files, app=workspace if capture else None, **kwargs)},
    )
    return open_harbor(Path(job) / name)[0]


def verifier_disabled_trial(runs: Path, demo: Path, **trial) -> Path:
    """``runs/jobs/j/demo__off``: a job of one trial of ``demo`` (``trial``: more of :func:`make_trial`'s
    options), as Harbor writes a job run with ``verifier.disable``."""
    job = make_job(runs / "jobs" / "j", {"demo__off": dict(task=demo, **trial)})
    folder = job / "demo__off"
    for name in ("config.json", "result.json"):
        data = json.loads((folder / name).read_text())
        (data["config"] if name == "result.json" else data)["verifier"]["disable"] = True
        if name == "result.json":
            data["verifier"] = data["verifier_result"] = data["exception_info"] = None
        (folder / name).write_text(json.dumps(data))
    shutil.rmtree(folder / "verifier", ignore_errors=True)
    return folder


def replay_trial(trial, step: str | None = None, *, workspace=None, case=None, empty=False, **options):
    """Open ``trial`` and replay it once, as ``run TRIAL`` does: the session
    (closed again) and its replay. ``workspace``, ``case`` and ``empty`` make
    the stand-in for /app; the rest are the engine's options (``timeout``,
    ``env``, ``python`` ...)."""
    from verifier_tui.engine.harbor.replay import StandIn
    from verifier_tui.engine.harbor.trial_session import TrialSession
    from verifier_tui.engine.session import Options

    stand_in = StandIn(Path(workspace) if workspace else None, case, empty)
    with TrialSession(trial, step, options=Options(**options), stand_in=stand_in) as opened:
        return opened, opened.run()


def job_entries(job) -> list:
    """Every trial of an opened ``job`` (every step of a multi-step one) with its
    sandbox verdict, each read as the multi-step trial's screen reads its steps."""
    from verifier_tui.engine.harbor.walkthrough import trial_entries

    return [entry for trial in job.trials for entry in trial_entries(trial)]


def trial_with_job_env(runs: Path, demo: Path, env: dict[str, str]) -> Path:
    """A passing trial (reward 1.0, /app captured empty) of the task ``demo``,
    in ``runs/jobs/j``, whose job gave the verifier ``env`` (config.json's
    ``verifier.env``), as ``harbor run --ve NAME=VALUE`` records it."""
    folder = runs / "jobs" / "j" / "demo__aaaaaaa"
    config = harbor_trial_config(task_path="tasks/demo", trial_name=folder.name, trials_dir="jobs/j", verifier_env=env)
    verifier_files = {"reward.txt": "1.0", "test-stdout.txt": ""}
    return make_trial(folder, task=demo, rewards={"reward": 1.0}, config=config, app={}, verifier_files=verifier_files)


def captured_trial(task, runs: Path, tmp_path: Path, **task_options):
    """The task ``task(verifier=READS_HELLO, toml=SEPARATE, **task_options)`` (the
    ``task`` fixture's maker) and a trial of it in ``runs/jobs/j`` whose sandbox
    run passed on a captured /app holding hello.txt = hi (separate mode)."""
    demo = task(verifier=READS_HELLO, toml=SEPARATE, **task_options)
    trial = sandbox_trial(
        runs / "jobs" / "j", demo, tmp_path, workspace={"hello.txt": "hi"}, mode="separate", capture=True
    )
    return demo, trial


PLANTED_FRAMES = {
    # test-stdout.txt is the trial's to write: a frame that climbs out of /tests or /app with "..",
    "tests, climbing out": lambda secret: "/tests/" + "../" * 40 + str(secret).lstrip("/"),
    "app, climbing out": lambda secret: "/app/" + "../" * 40 + str(secret).lstrip("/"),
    # or names a link in the task's tests/ or in the captured workspace that leads out of it.
    "task's link": lambda secret: "/tests/notes.py",
    "workspace's link": lambda secret: "/app/notes.py",
}


def planted_trial(task, runs: Path, tmp_path: Path, how: str):
    """A trial of ``task`` (the fixture) whose test-stdout.txt names, as its
    failing frame, the user's file ``secret`` (outside the task and the
    workspace) in the way ``how`` (a key of PLANTED_FRAMES): ``(task folder,
    trial, secret, the frame's path)``."""
    secret = tmp_path / "secret.py"
    secret.write_text("password = 'hunter2'\n")
    demo = task(verifier="def verify(workspace):\n    raise ValueError('no')\n")
    trial = sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={"main.py": "x = 1\n"}, capture=True)
    (demo / "tests" / "notes.py").symlink_to(secret)
    (trial.path / "artifacts" / "app" / "notes.py").symlink_to(secret)
    output = trial.path / "verifier" / "test-stdout.txt"
    text = output.read_text()
    assert '"/tests/verifier.py", line 2' in text
    frame = PLANTED_FRAMES[how](secret)
    output.write_text(text.replace('"/tests/verifier.py", line 2', f'"{frame}", line 1'))
    return demo, trial, secret, frame
