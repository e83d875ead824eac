"""``verifier-tui test JOB -j 2`` over 1,500 copies of one genuine Harbor
trial, against the bare runner run 2 at a time on the same captured
workspaces; and the tool's peak resident memory meanwhile.

Two rows. The trial is ``separate-mode`` from ``shared/harbor-0.26`` (Harbor
0.26.0, ``/app`` captured, reward 1.0), copied 1,500 times (150 with --quick)
into one job folder beside its task. Interleaved:

  tool  the venv's ``verifier-tui test --json -j 2 JOB``: every trial read,
        its task found and compared, its replay staged and run, compared
        with the sandbox, one document; the process's peak RSS is read from
        ``wait4`` (the tool is the biggest process of its tree)
  bare  the runner itself on each trial's ``artifacts/app``, with the task's
        ``[verifier] env``, one reward folder per trial, two at a time

Why "at most 1.6x": a replay runs the same runner on the same files, so what
the tool adds per trial (reading it, staging, judging) must stay well under
the runner's own cost; 1.6x leaves room for the task's own ``test.sh``, which
the replay runs as the sandbox did. Why "at most 200 MB": a job's size must
not decide whether it can be tested; what is kept per trial after its replay
must be a summary, not the run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from harness import REPO, RUNNER, Bench, BenchmarkError, Goal, Row, child_env, interleave, ms, skipped

NAME = "test-job"
JOBS = 2
GENUINE = "separate-mode"


def genuine_folder() -> Path | None:
    """``shared/harbor-0.26`` beside the checkout (a worktree sits one level deeper)."""
    for base in (REPO.parent, REPO.parent.parent):
        if (base / "shared" / "harbor-0.26" / "jobs" / GENUINE).is_dir():
            return base / "shared" / "harbor-0.26"
    return None


def build_job(where: Path, source: Path, copies: int) -> tuple[Path, list[Path]]:
    """The job of ``copies`` trials and the task beside it, as Harbor's run
    folder holds them; returns the job and each trial's captured ``/app``."""
    task = where / "tasks" / GENUINE
    shutil.copytree(source / "tasks" / GENUINE, task)
    genuine_job = source / "jobs" / GENUINE
    job = where / "jobs" / GENUINE
    job.mkdir(parents=True)
    for name in ("config.json", "lock.json", "result.json", "job.log"):
        shutil.copyfile(genuine_job / name, job / name)
    trial = next(p for p in genuine_job.iterdir() if p.is_dir())
    apps = []
    for index in range(copies):
        copy = job / f"{GENUINE}__c{index:06d}"
        shutil.copytree(trial, copy)
        apps.append(copy / "artifacts" / "app")
    return job, apps


def measure(bench: Bench) -> list[Row]:
    source = genuine_folder()
    copies = bench.rounds(1500, 150)
    what = f"test JOB -j {JOBS} over {copies:,} copies of a genuine trial"
    if source is None:
        return [skipped("test-job", "22", what, "shared/harbor-0.26 is not beside the checkout")]
    where = bench.folder("job-replay")
    job, apps = build_job(where, source, copies)
    tests = where / "tasks" / GENUINE / "tests"
    rewards = [where / "bare" / f"r{index:06d}" for index in range(copies)]
    for folder in rewards:
        folder.mkdir(parents=True)
    peaks: list[float] = []

    def tool() -> float:
        command = [bench.tool, "test", "--json", "-j", str(JOBS), "--python", bench.python, str(job)]
        out_file, err_file = where / "tool.out", where / "tool.err"
        with open(out_file, "wb") as out, open(err_file, "wb") as err:
            started = time.perf_counter()
            proc = subprocess.Popen(
                command, cwd=where, env=bench.tool_env(), stdin=subprocess.DEVNULL, stdout=out, stderr=err
            )
            # wait4: the rusage of this child (on Linux its peak is the largest of the tree it reaped: the tool)
            _pid, status, usage = os.wait4(proc.pid, 0)
            elapsed = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        peaks.append(usage.ru_maxrss * 1024 / 1e6)
        said = err_file.read_text(errors="replace")[-300:]
        try:
            agree = json.loads(out_file.read_bytes()).get("agree")
        except ValueError:
            raise BenchmarkError(f"no JSON (exit {proc.returncode}): {said}") from None
        if agree != copies:
            raise BenchmarkError(f"{agree} of {copies} replays agreed: {said}")
        return elapsed

    def bare() -> float:
        env = child_env({"STRICT": "1"})  # the task's [verifier] env

        def one(index: int) -> int:
            (rewards[index] / "reward.txt").unlink(missing_ok=True)
            return subprocess.run(
                [
                    bench.python,
                    "-B",
                    "-u",
                    str(RUNNER),
                    "--verifier",
                    str(tests / "verifier.py"),
                    "--workspace",
                    str(apps[index]),
                    "--reward-dir",
                    str(rewards[index]),
                ],
                cwd=apps[index],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            ).returncode

        started = time.perf_counter()
        with ThreadPoolExecutor(JOBS) as pool:
            codes = list(pool.map(one, range(copies)))
        elapsed = time.perf_counter() - started
        if any(codes) or any((r / "reward.txt").read_text() != "1.0" for r in rewards):
            raise BenchmarkError("a bare runner did not write reward 1.0")
        return elapsed

    samples = interleave({"tool": tool, "bare": bare}, rounds=bench.rounds(3, 1), warmup=0)
    return [
        Row(
            "test-job",
            "22",
            what,
            anchor=f"bare runner, {JOBS} at a time",
            values=ms(samples["tool"]),
            anchor_values=ms(samples["bare"]),
            goal=Goal.ratio(1.6),
        ),
        Row("test-job-rss", "22", "peak RSS of that test JOB", unit="MB", values=peaks, goal=Goal.at_most(200, "MB")),
    ]


if __name__ == "__main__":
    from run_all import main

    sys.exit(main(["--only", NAME] + sys.argv[1:]))
