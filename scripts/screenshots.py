"""Make the README's screenshots: the real app, driven on the bundled examples
of this checkout, saving SVGs of itself (``App.save_screenshot``).

    .venv/bin/python scripts/screenshots.py [--out screenshots/] [NAME ...]

Each picture is taken once the runs it shows have ended on screen and live
reload is in place. Durations are real, so pictures made again differ in
those digits.

The Harbor pictures (a failing trial, a job's overview, a folder of jobs,
two jobs compared)
are of folders built in a temporary folder by the test suite's builders,
which write what Harbor 0.26.0 writes (tests/harbor/test_builders.py checks
them against genuine job folders), with the sandbox's output produced by the
real runner; the job's overview is of copies of genuine Harbor 0.26.0 trials
(``../shared/harbor-0.26``) edited to end in every way the overview counts,
beside which the genuine jobs are copied for the folder of jobs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from verifier_tui.engine.session import Options, Session
from verifier_tui.tui.app import VerifierApp
from verifier_tui.tui.messages import RunFailed, RunFinished, RunNotPossible

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "tasks"


@dataclass(frozen=True)
class Shot:
    name: str
    task: str
    case: str | None
    size: tuple[int, int] = (120, 36)
    keys: tuple[str, ...] = ()
    runs: int = 1
    """Runs to wait for (keys like "a" start more)."""
    then: tuple[str, ...] = ()
    """Keys pressed once those runs have ended."""


SHOTS = [
    Shot("passing-run", "hello-file", "correct"),
    Shot("dict-reward", "fizzbuzz-module", "partial"),
    Shot("verify-raised", "hello-file", "missing-file"),
    Shot("contract-error-harbor-mode", "count-errors", "harbor-mode"),
    Shot("all-cases-and-history", "hello-file", "correct", keys=("a",), runs=5),
    Shot("narrow-terminal", "hello-file", "correct", size=(80, 24)),
    # g: the verifier and its helper, each line marked by the cases that reached it (all three run)
    Shot("coverage-view", "sum-column", "correct", size=(120, 44), keys=("g",), runs=4, then=("n",)),
]


class CountingApp(VerifierApp):
    """The app, counting the runs that ended on screen: each run's last
    message (RunFinished, RunNotPossible or RunFailed) bubbles up to the app
    once the main screen has shown it."""

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self.ended = 0
        self._ended = asyncio.Event()

    def on_run_finished(self, _message: RunFinished) -> None:
        self._end()

    def on_run_not_possible(self, _message: RunNotPossible) -> None:
        self._end()

    def on_run_failed(self, _message: RunFailed) -> None:
        self._end()

    def _end(self) -> None:
        self.ended += 1
        self._ended.set()

    async def wait_for_runs(self, count: int, timeout: float = 20.0) -> None:
        async def enough() -> None:
            while self.ended < count:
                self._ended.clear()
                await self._ended.wait()

        await asyncio.wait_for(enough(), timeout)


async def take(shot: Shot, out: Path) -> Path:
    app = CountingApp(Session(EXAMPLES / shot.task, Options(case=shot.case)))
    async with app.run_test(size=shot.size) as pilot:
        await app.wait_for_runs(1)
        await asyncio.wait_for(app.controller.live.watch_ready.wait(), 10)
        for key in shot.keys:
            await pilot.press(key)
        await app.wait_for_runs(shot.runs)
        await pilot.pause()
        for key in shot.then:
            await pilot.press(key)
        await pilot.pause()
        await pilot.pause(0.1)
        saved = app.save_screenshot(f"{shot.name}.svg", str(out))
    return Path(saved)


# -- Harbor trials and jobs ------------------------------------------------------------------

SEPARATE = 'version = "1.0"\nartifacts = ["/app"]\n\n[verifier]\nenvironment_mode = "separate"\n'
READS_REPORT = (
    "import json\n\n\ndef verify(workspace):\n"
    "    report = json.loads((workspace / 'report.json').read_text())\n"
    "    return float(report['score'])\n"
)
TRIAL_SHOTS = {
    "trial-verify-raised": (120, 42),
    "trial-root-cause": (160, 45),
    "job-overview": (120, 26),
    "jobs-folder": (120, 14),
    "jobs-compared": (120, 28),  # every task of four: at 24 lines the tasks give way to the trials
}
#: The trial each trial's picture opens (the others open a genuine job or the jobs folder).
TRIAL_OF = {"trial-verify-raised": "report__x7QmK2p", "trial-root-cause": "report__Zk8Wn1c"}
#: The pictures of copies of genuine Harbor 0.26.0 jobs (``../shared/harbor-0.26``).
GENUINE = ("job-overview", "jobs-folder")


def build_job(runs: Path) -> Path:
    """A job of three trials of one task: one scored, one whose verify raised
    (KeyError: the agent wrote another key), one after an agent timeout."""
    sys.path.insert(0, str(REPO))  # the test suite's builders
    from tests.helpers.harbor import harbor_exception, sandbox_trial
    from tests.helpers.tasks import make_task

    task = make_task(runs / "tasks" / "report", READS_REPORT, toml=SEPARATE)
    job = runs / "jobs" / "2026-12-01__03-36-17"
    for name, report, extra in (
        ("report__aB3dE5f", '{"score": 1}', {}),
        ("report__x7QmK2p", '{"points": 3}', {}),
        (
            "report__Zk8Wn1c",
            '{"score": 0.5}',
            {"exception": harbor_exception("AgentTimeoutError", "Agent execution timed out after 120.0 seconds")},
        ),
    ):
        sandbox_trial(
            job,
            task,
            runs.parent / "scratch",
            workspace={"report.json": report},
            mode="separate",
            capture=True,
            name=name,
            trial_kwargs=extra,
        )
    return job


def two_jobs(runs: Path) -> Path:
    """``runs/jobs`` with two jobs (two models, say) on the same four tasks, for
    the comparison (space marks each in the jobs list, c compares them)."""
    sys.path.insert(0, str(REPO))  # the test suite's builders
    from tests.helpers.harbor import harbor_exception, make_job
    from tests.helpers.tasks import make_task

    tasks = {name: make_task(runs / "tasks" / name) for name in ("csv-sum", "fizzbuzz", "greeting", "report")}
    timeout = harbor_exception("AgentTimeoutError", "Agent execution timed out after 600.0 seconds")
    rewards = {
        "model-a": {"csv-sum": (1.0, 1.0), "fizzbuzz": (1.0, 0.0), "greeting": (0.0, 0.0), "report": (1.0, None)},
        "model-b": {"csv-sum": (1.0, 0.0), "fizzbuzz": (1.0, 1.0), "greeting": (1.0, 1.0), "report": (1.0, 1.0)},
    }
    for job, by_task in rewards.items():
        trials = {}
        for task, scores in by_task.items():
            for index, score in enumerate(scores):
                ended = {"rewards": {"reward": score}} if score is not None else {"exception": timeout}
                trials[f"{task}__{job[-1]}{index}"] = dict(task=tasks[task], **ended)
        make_job(runs / "jobs" / job, trials)
    return runs / "jobs"


def genuine_jobs(root: Path) -> tuple[Path, Path]:
    """``root/jobs``: the genuine Harbor 0.26.0 jobs, copied; and
    ``root/built/mixed``: a job of their trials edited to end every way the
    overview counts."""
    import shutil

    from tests.harbor.job_copies import mixed_job
    from tests.helpers.harbor import HARBOR_REAL

    assert HARBOR_REAL is not None  # main refused the genuine pictures without it
    shutil.copytree(HARBOR_REAL / "jobs", root / "jobs")
    return root / "jobs", mixed_job(HARBOR_REAL, root / "built" / "mixed")


async def take_trial(name: str, job: Path, out: Path) -> Path:
    from verifier_tui.engine.harbor.folders import open_harbor
    from verifier_tui.tui.messages import ReplayFinished
    from verifier_tui.tui.trial_app import TrialApp

    class ReplayingApp(TrialApp):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            self.replayed = asyncio.Event()

        def on_replay_finished(self, _message: ReplayFinished) -> None:
            self.replayed.set()

    if name in TRIAL_OF:
        found, step = open_harbor(job / TRIAL_OF[name])
        os.chdir(job.parent.parent)  # started where Harbor ran, as a user would: paths read from there
    else:  # as `verifier-tui JOB` starts: the trials are read on screen
        found, step = job, None
    app = ReplayingApp(found, step, options=Options())
    async with app.run_test(size=TRIAL_SHOTS[name]) as pilot:
        if name == "jobs-compared":  # the jobs list, read; both jobs marked; c
            while not getattr(app.screen, "done", False):
                await pilot.pause(0.02)
            table = app.screen.query_one("#jobs-table")
            for job in ("model-a", "model-b"):  # A, then B
                table.move_cursor(row=[j.name for j in app.screen.jobs].index(job))
                await pilot.press("space")
            await pilot.press("c")
        if name in TRIAL_OF:
            await asyncio.wait_for(app.replayed.wait(), 20)
            await asyncio.wait_for(app.screen.controller.live.watch_ready.wait(), 10)
        while not getattr(app.screen, "done", True):  # a job's or a folder's worker still reading
            await pilot.pause(0.02)
        await pilot.pause()
        await pilot.pause(0.1)
        saved = app.save_screenshot(f"{name}.svg", str(out))
    return Path(saved)


def _harbor_real() -> Path | None:
    """The genuine Harbor 0.26.0 jobs and tasks, as the test suite finds them (None: not here)."""
    sys.path.insert(0, str(REPO))  # the test suite's helpers
    from tests.helpers.harbor import HARBOR_REAL

    return HARBOR_REAL


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="scripts/screenshots.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=REPO / "screenshots", help="folder for the SVGs")
    parser.add_argument("only", nargs="*", help="names of the shots to make (default: all)")
    args = parser.parse_args(argv)
    names = [shot.name for shot in SHOTS] + list(TRIAL_SHOTS)
    unknown = set(args.only) - set(names)
    if unknown:
        parser.error(f"no such shot: {', '.join(sorted(unknown))} (there are: {', '.join(names)})")
    # A clone away from this project's ../shared has no genuine jobs: said before any picture is
    # made, with the ones it can make (the run once stopped there, half of screenshots/ made again).
    genuine = [name for name in GENUINE if not args.only or name in args.only]
    if genuine and _harbor_real() is None:
        parser.error(
            f"{', '.join(genuine)}: copies of genuine Harbor 0.26.0 jobs, from ../shared/harbor-0.26, "
            f"which is not here; name the others to make them: {' '.join(n for n in names if n not in GENUINE)}"
        )
    args.out.mkdir(parents=True, exist_ok=True)
    saved = []
    for shot in SHOTS:
        if args.only and shot.name not in args.only:
            continue
        saved.append(asyncio.run(take(shot, args.out)))
    wanted = [name for name in TRIAL_SHOTS if not args.only or name in args.only]
    if wanted:
        import tempfile

        started = Path.cwd()
        with tempfile.TemporaryDirectory() as scratch:
            job = build_job(Path(scratch) / "runs")
            saved += [asyncio.run(take_trial(name, job, args.out)) for name in wanted if name in TRIAL_OF]
            os.chdir(started)
            if "jobs-compared" in wanted:
                saved.append(asyncio.run(take_trial("jobs-compared", two_jobs(Path(scratch) / "two"), args.out)))
            others = [name for name in wanted if name in GENUINE]
            if others:
                jobs, mixed = genuine_jobs(Path(scratch) / "genuine")
                saved += [
                    asyncio.run(take_trial(name, mixed if name == "job-overview" else jobs, args.out))
                    for name in others
                ]
    for path in saved:
        print(path.relative_to(REPO) if path.is_relative_to(REPO) else path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
