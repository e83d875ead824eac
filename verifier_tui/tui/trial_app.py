"""The app on a Harbor trial or job folder: a job opens its list of trials,
a trial (or a job with one) opens the trial's screen. The same stylesheet,
keys and words as the app on a task (:mod:`verifier_tui.tui.app`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual import on

from verifier_tui.commands import terminal
from verifier_tui.engine.harbor.folders import Job, Trial
from verifier_tui.engine.harbor.replay import StandIn
from verifier_tui.engine.harbor.trial_session import TrialSession
from verifier_tui.engine.task.target import Target, classify
from verifier_tui.tui.base import BaseApp
from verifier_tui.tui.messages import ReplayFinished
from verifier_tui.tui.screens.job import JobScreen
from verifier_tui.tui.screens.job_overview import JobOverviewScreen
from verifier_tui.tui.screens.jobs import JobsScreen
from verifier_tui.tui.screens.trial import TrialScreen
from verifier_tui.words.trial import NOT_FOR_TRIALS

if TYPE_CHECKING:
    import argparse

    from verifier_tui.engine.sandbox.isolation import Isolation
    from verifier_tui.engine.session import Options


class TrialApp(BaseApp):
    def __init__(
        self,
        found: Trial | Job | Target | Path,
        step: str | None = None,
        *,
        options: Options,
        task_dir: Path | None = None,
        watch: bool = True,
        poll: bool = False,
        deterministic: bool = False,
        isolation: Isolation | None = None,
        stand_in: StandIn | None = None,
    ) -> None:
        """``isolation``: the sandbox chosen before the screen, kept for every replay it opens
        (as ``run TRIAL`` keeps its own): asked again, it could be refused a moment later.
        ``stand_in``: what the command line gave to stand in for /app (``--stand-in empty``
        too), else ``options``' workspace or case."""
        super().__init__()
        self.isolation = isolation
        self.stand_in = stand_in or StandIn(workspace=options.workspace, case=options.case)
        self.found = found
        self.step = step
        self.options = options
        self.task_dir = task_dir
        self.watching = watch
        self.poll = poll
        self.deterministic = deterministic

    def on_mount(self) -> None:
        """A folder of jobs opens its list; a job its overview (a job of one
        trial, that trial on top of it); a multi-step trial with no step chosen its steps;
        a single trial (or step) opens at once. ``found`` as a target (or a
        path): a job or a folder of jobs whose trials are read on screen, in a worker."""
        from verifier_tui.engine.harbor.overview import first_trials

        found = self.found
        if isinstance(found, Path):
            found = classify(found)
        if isinstance(found, Job) and found.jobs is not None:
            self.push_screen(JobsScreen(found.path))
            return
        if isinstance(found, Target):
            folder = found.root or found.path  # a Harbor folder's target has its root
            if found.kind == "jobs":
                self.push_screen(JobsScreen(folder))
                return
            only = first_trials(folder)
            self.open_job(folder)  # beneath a lone trial too: esc on it reaches the job's overview
            if len(only) == 1:
                self.open_trial_folder(only[0], self.step)
            return
        if isinstance(found, Job):
            self.open_job(found.path)
            if len(found.trials) == 1:
                self._show(found.trials[0], self.step, from_job=True)
            return
        self._show(found, self.step, from_job=False)

    def on_replay_finished(self, _message: ReplayFinished) -> None:
        """The sandbox a trial's replay chose (in its worker, off this thread) kept for every trial
        opened after it, as one chosen before the screen is: each probing again could be refused a
        moment later (no process slot to spare) and break that trial's replay."""
        if self.isolation is None:
            chosen = (screen.opened.isolation for screen in self.screen_stack if isinstance(screen, TrialScreen))
            self.isolation = next((isolation for isolation in chosen if isolation is not None), None)

    @on(JobsScreen.JobChosen)
    def _job_chosen(self, message: JobsScreen.JobChosen) -> None:
        self.open_job(message.path, from_jobs=True)

    @on(JobsScreen.CompareChosen)
    def _compare_chosen(self, message: JobsScreen.CompareChosen) -> None:
        from verifier_tui.tui.screens.compare import CompareScreen

        self.push_screen(CompareScreen(message.a, message.b))

    @on(JobOverviewScreen.TrialChosen)
    def _trial_chosen(self, message: JobOverviewScreen.TrialChosen) -> None:
        self.open_trial_folder(message.path)

    @on(JobScreen.StepChosen)
    def _step_chosen(self, message: JobScreen.StepChosen) -> None:
        self.open_trial(message.trial, message.step, from_job=True, back_to="steps")

    @on(TrialScreen.TrialReadAgain)
    def _trial_read_again(self, message: TrialScreen.TrialReadAgain) -> None:
        """A step's screen read its trial again: the list of the trial's steps beneath it shows that."""
        for screen in self.screen_stack:
            if isinstance(screen, JobScreen) and screen.found.path == message.trial.path:
                screen.show_trial(message.trial)

    def open_job(self, path: Path, *, from_jobs: bool = False) -> None:
        """A job's overview (Harbor's version from its own lock.json)."""
        from verifier_tui.engine.harbor.folders import LOCK
        from verifier_tui.engine.harbor.reading import read_json

        version = read_json(path / LOCK, beneath=path).text("harbor", "version")
        self.push_screen(JobOverviewScreen(path, from_jobs=from_jobs, harbor_version=version))

    def open_trial_folder(self, path: Path, step: str | None = None) -> None:
        """A trial of a job's: its steps, or the trial (``step`` of it) itself."""
        from verifier_tui.engine.harbor.folders import HarborFolderError, open_trial

        try:
            trial = open_trial(path)
        except (HarborFolderError, OSError) as exc:  # gone or unreadable since the overview listed it
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            self.notify(f"cannot open {path.name}: {why}", severity="error")
            return
        self._show(trial, step, from_job=True)

    def _show(self, trial: Trial, step: str | None, *, from_job: bool) -> None:
        """A multi-step trial with no step chosen: its steps; else the trial (its step)."""
        if trial.multi_step and step is None:
            self.push_screen(JobScreen(trial, from_job=from_job))
        else:
            self.open_trial(trial, step, from_job=from_job)

    def open_trial(self, trial: Trial, step: str | None, *, from_job: bool, back_to: str = "trials") -> None:
        """Walk the trial (finding its task, reading the sandbox side) and show it.
        The engine reads a trial without raising for what a folder may hold;
        anything else is shown and the app goes on (or, with nothing else to
        show, ends with the reason)."""
        options = self.options
        try:
            opened = TrialSession(
                trial,
                step or (trial.steps[0].name if trial.multi_step else None),
                options=options,
                stand_in=self.stand_in,
                task_dir=self.task_dir,
                isolation=self.isolation,
            )
        except Exception as exc:  # noqa: BLE001 - a boundary: shown, never a crash
            # a part of the trial its modes keep from us: said as such, no fault of ours
            unreadable = exc if isinstance(exc, OSError) and exc.filename is not None else None
            what = f"{unreadable.filename}: {unreadable.strerror}" if unreadable else f"{type(exc).__name__}: {exc}"
            message = f"cannot open {trial.name}: {what}"
            if from_job:
                title = "cannot be read" if unreadable else "something went wrong"
                self.notify(message, title=title, severity="error")
            else:
                self.exit(return_code=2, message=message)
            return
        self.push_screen(
            TrialScreen(
                opened,
                watch=self.watching,
                poll=self.poll,
                back_to=back_to if from_job else None,
                deterministic=self.deterministic,
            )
        )


def launch_trial(args: argparse.Namespace) -> int:
    """``verifier-tui TRIAL|JOB``: the app on a Harbor folder; bad input is one line and exit 2."""

    from verifier_tui.engine.harbor.folders import HarborFolderError, open_harbor, open_trial, select_trial
    from verifier_tui.engine.harbor.overview import first_trials

    for flag in ("response", "verifier", "task_data"):
        if getattr(args, flag, None) is not None:
            return terminal.refuse(f"--{flag.replace('_', '-')}: {NOT_FOR_TRIALS[flag]}")
    options = args.options
    stand_in = StandIn(workspace=options.workspace, case=options.case, empty=args.stand_in == "empty")
    problem = stand_in.problem("--workspace", "--case", "--stand-in empty")
    if problem is not None:  # one line before the screen, as run TRIAL and the TUI on a task say it
        return terminal.refuse(problem)
    target = args.target
    if target.kind in ("job", "jobs") and args.trial is None and args.step is None:
        # A job of one trial opens that trial on top of its overview, and so replays it at once:
        # a --python that cannot run it, or no sandbox to run it in, is refused as on the trial
        # itself (one line, exit 2).
        only = first_trials(target.root or target.path) if target.kind == "job" else []
        isolation = None
        if len(only) == 1:
            try:
                problem, isolation = _replay_problem(open_trial(only[0]), None, options, args.task, stand_in)
            except (HarborFolderError, OSError):
                problem = None  # the screen says why it cannot open the trial
            if problem is not None:
                return terminal.refuse(problem)
        # Read on screen: the overview shows at once and fills in as trials are read.
        return _run_app(args, target, stand_in, isolation=isolation)
    try:
        found, step = open_harbor(target)
        step = args.step or step
        if args.trial is not None or (step is not None and isinstance(found, Job) and len(found.trials) == 1):
            found, _ = select_trial(found, args.trial, step, typed_step=args.step is not None)
        if step is not None:
            if isinstance(found, Job):
                return terminal.refuse("--step: choose the trial too (--trial NAME)")
            step = found.step(step, typed=args.step is not None).name  # raises with the step names
    except HarborFolderError as exc:
        return terminal.refuse(str(exc))
    problem, isolation = (
        _replay_problem(found, step, options, args.task, stand_in) if isinstance(found, Trial) else (None, None)
    )
    if problem is not None:
        return terminal.refuse(problem)
    return _run_app(args, found, stand_in, step, isolation)


def _run_app(
    args: argparse.Namespace,
    found: Trial | Job | Target,
    stand_in: StandIn,
    step: str | None = None,
    isolation: Isolation | None = None,
) -> int:
    app = TrialApp(
        found,
        step,
        options=args.options,
        task_dir=args.task,
        watch=not args.no_watch,
        poll=args.poll,
        isolation=isolation,
        stand_in=stand_in,
    )
    app.run()
    return app.return_code or 0


def _replay_problem(
    trial: Trial, step: str | None, options: Options, task_dir: Path | None, stand_in: StandIn
) -> tuple[str | None, Isolation | None]:
    """Why the replay the trial's screen starts with cannot run (a ``--python`` that cannot run the
    runner, no sandbox to be had), as run TRIAL says it (one line, exit 2, before the screen, not a
    toast on it); None when it can, or when no replay would run (no /app to replay on, a multi-step
    trial's list of steps): as run TRIAL, the interpreter and the sandbox are asked only then.
    With it, the sandbox chosen, for the screen's replays to keep."""
    from verifier_tui.engine.sandbox.isolation import IsolationError, choose
    from verifier_tui.words.run import python_words

    isolation = None
    problem = python_words(options.interpreter())
    if problem is None:
        try:
            isolation = choose()
        except IsolationError as exc:
            problem = str(exc)
    if problem is None or (trial.multi_step and step is None):
        return None, isolation
    opened = TrialSession(
        trial,
        step,
        options=options,
        stand_in=stand_in,
        task_dir=task_dir,
    )
    try:
        return (problem, None) if opened.session is not None else (None, None)
    finally:
        opened.close()
