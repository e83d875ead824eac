"""Jobs built from genuine Harbor 0.26.0 trials (``../shared/harbor-0.26``):
each trial a copy of a genuine one with its ``result.json`` edited to
another outcome, as Harbor would have written it. Nothing here is in the product."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from tests.helpers.harbor import harbor_exception


def genuine_trial(real: Path, job: str) -> Path:
    return next(p for p in (real / "jobs" / job).iterdir() if p.is_dir())


def copy_trial(
    real: Path, job_dir: Path, name: str, *, source: str = "oracle-pass", edit: Callable[[dict], None] | None = None
) -> Path:
    """A copy of ``source``'s genuine trial named ``name`` in ``job_dir``, its result.json edited by ``edit``."""
    target = job_dir / name
    shutil.copytree(genuine_trial(real, source), target)
    result = json.loads((target / "result.json").read_text())
    result["trial_name"] = name
    result["config"]["trial_name"] = name
    if edit is not None:
        edit(result)
    (target / "result.json").write_text(json.dumps(result, indent=4))
    config = json.loads((target / "config.json").read_text())
    config["trial_name"] = name
    (target / "config.json").write_text(json.dumps(config, indent=4))
    return target


def copy_job_files(real: Path, job_dir: Path, source: str = "oracle-pass", name: str | None = None) -> Path:
    job_dir.mkdir(parents=True, exist_ok=True)
    for file in ("config.json", "result.json", "lock.json", "job.log"):
        shutil.copy2(real / "jobs" / source / file, job_dir / file)
    if name is not None:
        config = json.loads((job_dir / "config.json").read_text())
        config["job_name"] = name
        (job_dir / "config.json").write_text(json.dumps(config, indent=4))
    return job_dir


def rewarded(value: dict) -> Callable[[dict], None]:
    def edit(result: dict) -> None:
        result["verifier_result"] = {"rewards": value}

    return edit


def agent_timeout(result: dict) -> None:
    """An agent that ran out of time but left work the verifier scored 0.5:
    Harbor keeps that reward (AgentTimeoutError's policy)."""
    result["exception_info"] = harbor_exception("AgentTimeoutError", "Agent execution timed out after 60.0 seconds")
    result["verifier_result"] = {"rewards": {"reward": 0.5}}


def with_usage(n_in: int, n_out: int, cost: float, model: str | None = None) -> Callable[[dict], None]:
    def edit(result: dict) -> None:
        result["agent_result"].update(n_input_tokens=n_in, n_cache_tokens=0, n_output_tokens=n_out, cost_usd=cost)
        if model is not None:
            result["agent_info"]["model_info"] = {"name": model, "provider": "openai"}

    return edit


def unfinished(result: dict) -> None:
    """Harbor stopped mid-way: the result as written when the trial started."""
    result["finished_at"] = None
    result["verifier_result"] = None


def mixed_job(real: Path, job_dir: Path) -> Path:
    """Seven trials of one genuine task, ending every way the overview counts:
    2 passed, 1 below 1, an agent timeout with a kept reward, Harbor's
    RewardFileNotFoundError (the genuine nop-fail trial), a failing oracle
    (exit code 3, no exception), one not finished."""
    copy_job_files(real, job_dir, name="mixed")
    copy_trial(real, job_dir, "hello-file__pass001", edit=with_usage(1200, 300, 0.0125))
    copy_trial(real, job_dir, "hello-file__pass002", edit=with_usage(800, 200, 0.0075))
    copy_trial(real, job_dir, "hello-file__half003", edit=rewarded({"reward": 0.0}))
    copy_trial(real, job_dir, "hello-file__slow004", edit=agent_timeout)
    copy_trial(real, job_dir, "hello-file__nop0005", source="nop-fail")
    oracle = copy_trial(real, job_dir, "hello-file__exit006", edit=rewarded({"reward": 0.0}))
    (oracle / "agent" / "exit-code.txt").write_text("3\n")
    copy_trial(real, job_dir, "hello-file__stop007", edit=unfinished)
    return job_dir


def hostile_jobs(real, root):
    """A folder of jobs whose files hold what Harbor never writes: a trial
    named with markup and escape codes, result.json cut short, a list, a
    wrong type everywhere; the job's own result.json malformed."""
    job = copy_job_files(real, root / "jobs" / "odd")
    copy_trial(
        real,
        job,
        "odd__aaaaaaa",
        edit=lambda r: r.update(
            trial_name="[/bold]\x1b[2Jodd__aaaaaaa",
            task_name="[red]task\x07",
            agent_info={"name": ["x"], "model_info": "gpt"},
            verifier_result={"rewards": {"reward": "high", "[b]": None}},
            started_at=3,
            finished_at="yesterday",
            agent_result={"n_input_tokens": "many", "cost_usd": True},
        ),
    )
    (copy_trial(real, job, "cut__bbbbbbb") / "result.json").write_text('{"trial_name": "cut__bbbbbbb", "verifier_re')
    (copy_trial(real, job, "list__ccccccc") / "result.json").write_text("[1, 2, 3]")
    (copy_trial(real, job, "steps__ddddddd") / "result.json").write_text(
        json.dumps(
            {"finished_at": "2026-12-01T03:36:18Z", "step_results": [7, {"exception_info": {"exception_type": 5}}]}
        )
    )
    (job / "result.json").write_text(
        json.dumps({"stats": {"evals": {"x": {"exception_stats": ["a"], "metrics": ["mean"], "reward_stats": [1]}}}})
    )
    return job
