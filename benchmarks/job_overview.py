"""A Harbor job of 5,000 trials in the TUI: launch -> the job's overview on screen.

One row. The job is built from a genuine Harbor 0.26.0 trial
(``../shared/harbor-0.26/jobs/oracle-pass``): its job files, and its one trial
copied 5,000 times under new names (each copy's ``trial_name`` rewritten, as
Harbor names trials). The venv's ``verifier-tui JOB`` starts in a
pseudo-terminal of 120x40; the row is the time until the first trial's row is
drawn (the overview is on screen and filling in), the note the time until
every trial was read; the anchor, the same app on a job of two such trials
(the app's own start). Goal: at most 1 s, the launch goal of the task screen;
the list of this job once took 4.3 s to show.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

from harness import REPO, Bench, BenchmarkError, Goal, Row, median, ms
from terminal import TerminalApp

NAME = "job"
TRIALS = 5_000


def genuine_job() -> Path:
    for base in (REPO.parent, REPO.parent.parent):
        job = base / "shared" / "harbor-0.26" / "jobs" / "oracle-pass"
        if job.is_dir():
            return job
    raise BenchmarkError("../shared/harbor-0.26/jobs/oracle-pass is not here: no genuine trial to copy")


def big_job(where: Path, count: int = TRIALS) -> Path:
    """``where/<count>``: the genuine job's own files and ``count`` copies of its trial."""
    source = genuine_job()
    job = where / str(count)
    if (job / "job.log").is_file() and len(list(job.iterdir())) >= count:
        return job
    shutil.rmtree(job, ignore_errors=True)
    job.mkdir(parents=True)
    trial = next(p for p in source.iterdir() if p.is_dir())
    for name in ("config.json", "result.json", "lock.json", "job.log"):
        shutil.copy2(source / name, job / name)
    result = json.loads((trial / "result.json").read_text(encoding="utf-8"))
    for index in range(count):
        name = f"hello-file__{index:07d}"
        copy = job / name
        shutil.copytree(trial, copy)
        result["trial_name"] = name
        (copy / "result.json").write_text(json.dumps(result, indent=4), encoding="utf-8")
    return job


def measure(bench: Bench) -> list[Row]:
    where = bench.folder("job-overview")
    jobs = {"big": big_job(where), "small": big_job(where, 2)}
    shown: dict[str, list[float]] = {"big": [], "small": []}
    read: list[float] = []
    for _ in range(bench.rounds(7, 2)):
        for name, job in jobs.items():
            started = time.perf_counter()
            app = TerminalApp([bench.tool, str(job)], bench.tool_env(), job.parent)
            try:
                app.expect("hello-file__0000000")
                shown[name].append(app.wait(60) - started)
                if name == "big":
                    app.expect(f"{TRIALS} trials")
                    read.append(app.wait(120) - started)
            finally:
                app.close()
    return [
        Row(
            "tui-job",
            "22",
            f"launch -> overview on screen, a {TRIALS:,}-trial job, TUI (pty)",
            anchor="a job of 2 trials",
            values=ms(shown["big"]),
            anchor_values=ms(shown["small"]),
            goal=Goal.at_most(1000, "ms"),
            notes=[f"every trial read after {1000 * median(read):.0f} ms"],
        )
    ]


if __name__ == "__main__":
    from run_all import main

    sys.exit(main(["--only", NAME] + sys.argv[1:]))
