"""What ``verifier-tui test`` and the pytest plugin run, and how: one
collection and one way of running it, so the two cannot disagree.

:func:`collect` turns paths into :class:`TaskCases` groups: a path that is a
task (or its tests folder, a verifier, a case folder) is that task; any other
folder is searched for tasks that have cases with an ``expected.json``
(``<task>/cases/<case>/expected.json``). ``--case`` patterns narrow the cases.
Each group holds one :class:`~verifier_tui.engine.session.Session`; a case is
run through it (:meth:`TaskCases.run` blocking, :meth:`TaskCases.arun` for
asyncio) and judged by the one comparison with ``expected.json``,
``RunResult.expected_matched``.

A group is anything with ``name``, ``folder``, ``cases`` (items with a
``name``), ``invalid``, ``error``, ``run``, ``arun`` and ``close``: Harbor job
folders (their trials replayed) plug in as one more kind of group, recognised
in :func:`_groups_for`.
"""

from __future__ import annotations

import fnmatch
import itertools
import os
from pathlib import Path
from typing import TYPE_CHECKING

from verifier_tui.engine import untrusted
from verifier_tui.engine.filters import NOT_SEARCHED
from verifier_tui.engine.plain import one_line, typed_back
from verifier_tui.engine.record import field, record, replace
from verifier_tui.engine.session import NoSuchStep, Options, SelectionError, Session, StepOfRefusedTask
from verifier_tui.engine.task.cases import is_case_folder
from verifier_tui.engine.task.config import refused_words
from verifier_tui.engine.task.discovery import DiscoveryError, no_verifier_message, read_task_config
from verifier_tui.engine.task.kinds import MAX_ENTRIES_SCANNED, NAMES_LISTED, looks_like_task, some_names
from verifier_tui.engine.task.rows import outside
from verifier_tui.engine.task.steps import step_named
from verifier_tui.engine.task.target import Target, classify
from verifier_tui.engine.to_the_end import uninterrupted

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Callable, Sequence
    from typing import Any

    from verifier_tui.engine.model import RunResult
    from verifier_tui.engine.sandbox.isolation import Isolation
    from verifier_tui.engine.task.cases import Case

#: Why a case with no expected.json is not judged (``test`` lists it, and why).
WRITE_ONE = 'write one, such as {"rewards": {"reward": 1.0}} or {"exit_code": 1}'
NO_EXPECTED = f"it has no expected.json ({WRITE_ONE})"
#: How a task gets a case to test, said wherever it has none.
MAKE_A_CASE = "make one with verifier-tui run TASK --save-case NAME (cases/NAME/ with an expected.json)"
#: Why a task found below a folder is not tested (said, never left out quietly).
NO_CASES = f"it has no case: {MAKE_A_CASE}"


def _case_folders(task: Path) -> int:
    """How many case folders a task has (:func:`is_case_folder`). A task whose
    ``cases/`` cannot be listed is never here: it is one of ``test``'s errors,
    in ``test TASK``'s words (:class:`TaskCases`)."""
    try:
        with os.scandir(task / "cases") as scan:
            return sum(1 for entry in itertools.islice(scan, MAX_ENTRIES_SCANNED) if is_case_folder(entry))
    except OSError:
        return 0


def no_cases(task: Path) -> str:
    """Why a task found without a case to test is not tested, in every report
    that skips it (text, JSON, JUnit, the pytest plugin): it has no case, or
    its cases have no expected.json (it has cases: "it has no case" was wrong)."""
    count = _case_folders(task)
    if count == 0:
        return NO_CASES
    if count == 1:
        return f"its one case has no expected.json ({WRITE_ONE})"
    return f"none of its {count} cases has an expected.json ({WRITE_ONE})"


def _counted(tasks: Sequence[Path]) -> list[tuple[int, str, str]]:
    """(count, words, advice) of the tasks without a case to test, as
    :func:`no_cases` tells them apart; only the counts not 0."""
    bare = [_case_folders(task) for task in tasks].count(0)
    return [
        (count, words, advice)
        for count, words, advice in (
            (bare, "without a case", MAKE_A_CASE),
            (len(tasks) - bare, "without an expected.json", WRITE_ONE),
        )
        if count
    ]


def without_cases_counted(tasks: Sequence[Path]) -> list[str]:
    """The tasks found without a case to test, counted as :func:`no_cases`
    tells them apart (``test``'s summary line): ``1 task without a case``,
    ``2 tasks without an expected.json`` (their case folders have none)."""
    return [f"{count} task{'s' if count > 1 else ''} {words}" for count, words, _ in _counted(tasks)]


def none_to_test(tasks: Sequence[Path]) -> str:
    """Why none of ``tasks``, found below a folder with none other, is tested,
    in :func:`no_cases`'s words: to make a case, or to write the expected.json
    its case folders lack (making a case was wrong advice to a task with five)."""
    counted = _counted(tasks)
    advice = [advice for _, _, advice in counted]
    if advice == [MAKE_A_CASE]:
        return MAKE_A_CASE
    if len(tasks) == 1:
        return no_cases(tasks[0])
    if advice == [WRITE_ONE]:
        return f"none of their cases has an expected.json ({WRITE_ONE})"
    return " and ".join(f"{count} task{'s' if count > 1 else ''} {words} ({why})" for count, words, why in counted)


def not_run(problem: str) -> str:
    """A case (or task) that could not be run, as every report of it says it
    (test's row and JUnit, the pytest plugin)."""
    return f"not run: {problem}"


def error_is_a_test(group: TaskCases | JobTrials) -> bool:
    """Whether a task's (or job's) ``error`` is a test of its own, ``(task)``, in a report
    (test's JUnit, the pytest plugin): so when it lists no case that could run (a case
    whose expected.json is unusable is reported beside it: the task's error was lost);
    else each case listed says it was not run, for that error."""
    return group.error is not None and not group.cases


def not_judged(why: str) -> str:
    """A case no expected.json judges, as every report of it says it."""
    return f"not judged: {why}"


def not_tested(task: Path | WithoutStep) -> str:
    """A task found below a folder and not tested (without a case to test, or without
    ``--step``'s step), as every report that skips it says it."""
    return f"not tested: {task.why if isinstance(task, WithoutStep) else no_cases(task)}"


#: Between a task's name and a case's in an item's name (pytest's own separator).
SEPARATOR = "::"
COLD = "VERIFIER_TUI_COLD"
"""Set to 1: a task's cases start cold when their turn comes, none held
(a comparison with warm runs, or a suspicion about them)."""
#: How many levels below a folder tasks are looked for: ``tasks/<task>``,
#: ``datasets/<dataset>/<task>``, ``<checkout>/datasets/<dataset>/<task>``.
SEARCH_DEPTH = 3


class CollectionError(Exception):
    """The paths or the ``--case`` patterns name nothing that can be tested:
    the message says why in one line; ``without_cases``: the tasks found, none
    with a case to test (each a report's to list, as when some case runs)."""

    def __init__(self, message: object, without_cases: Sequence[Path] = ()) -> None:
        super().__init__(message)
        self.without_cases = list(without_cases)


@record
class TaskCases:
    """One task's cases to test: those with a usable ``expected.json`` that
    the patterns select (``cases``), those whose ``expected.json`` cannot be
    used (``invalid``: (case, problem)), or why none can run (``error``)."""

    name: str  # the task's name as shown, unique in the collection
    folder: Path
    session: Session | None
    cases: list[Case] = field(default_factory=list)
    invalid: list[tuple[str, str]] = field(default_factory=list)
    error: str | None = None
    not_judged: list[tuple[str, str]] = field(default_factory=list)  # (case, why): cases no expected.json judges
    unread: list[str] = field(default_factory=list)  # those of ``invalid`` whose expected.json is never read
    # (a folder that cannot be read at all, a name that cannot be an id): not run, its expected.json not blamed
    only: tuple[str, ...] | None = None  # the cases case folders named (None: every case)
    #: The verifier, as a path in the task (``tests/other.py``), when the collection tests more than one of the
    #: task's verifiers (:func:`_verifiers_apart`); None otherwise, and the task's ids are as they always were.
    verifier_apart: str | None = None

    @property
    def id(self) -> str:
        """The task's part of its cases' ids (``<task>::<case>``): its name, then
        the verifier when another verifier of the task is tested beside it."""
        return self.name if self.verifier_apart is None else f"{self.name}{SEPARATOR}{self.verifier_apart}"

    def item_name(self, case: str) -> str:
        return f"{self.id}{SEPARATOR}{case}"

    def read_cases(self, patterns: list[str] | tuple[str, ...] = ()) -> None:
        """Sort the task's cases as they are now (``test --watch`` calls this
        again after each save, as cases come and go): those with a usable
        ``expected.json`` that ``patterns`` select, those whose ``expected.json``
        cannot be used, and those without one, which are said, never left out quietly."""
        session = self._session()
        task = session.task
        self.cases, self.invalid, self.not_judged, self.unread = [], [], [], []
        for case in task.cases:
            if (self.only is not None and case.name not in self.only) or (
                patterns and not picked(patterns, self, case.name)
            ):
                continue
            if SEPARATOR in case.name:  # its id, <task>::<case>, could be another task's case
                self.invalid.append((case.name, f"a case name holding {SEPARATOR!r} cannot be told apart in ids"))
                self.unread.append(case.name)
            elif case.expected is not None:
                self.cases.append(case)
            elif case.expected_problem is not None:
                if case.unreadable is not None:
                    self.unread.append(case.name)
                # A broken test, not one to leave out quietly: reported, and the command fails.
                self.invalid.append((case.name, case.expected_problem))
            else:
                self.not_judged.append((case.name, NO_EXPECTED))
        self.error = None
        if session.verifier is None:
            self.error = no_verifier_message(task)
        elif not self.cases and not self.invalid:  # (an unusable one is a row of its own, and fails the command)
            cases = task.root / "cases"
            where = cases / self.only[0] if self.only and len(self.only) == 1 else cases
            if task.cases_unread is not None:  # there, but not to be listed: not "no case" under it
                self.error = f"no case to test: {task.cases_unread}"
            elif where.is_dir():  # (not "under" a folder that is not there)
                self.error = f"no case with a usable expected.json under {where}: {WRITE_ONE}"
            elif cases.is_dir():  # the case folder named was there when the command began
                self.error = f"no case to test: {where} is not there any more"
            else:
                self.error = f"no case to test: {task.root} has no cases folder; {MAKE_A_CASE}"
        elif task.config.unread is not None:  # its settings unknown: no case is run on others
            self.error = task.config.unread
        elif task.config.refused is not None:
            # Harbor would not load the task, so it would run none of its cases: none is run, nor said to pass
            # (test's rows passed them while JUnit added an error); every report says each case was not run
            self.error = refused_words(task.config.refused)

    def start_ahead(self, case: Case) -> None:
        """Start ``case``'s run now, held, for a blocking :meth:`run` to come
        (the pytest plugin: the case before it is about to run)."""
        session = self._session()
        if session.warm is not None:
            session.warm.start(session.spec_for_case(case))

    def run(self, case: Case, trigger: str = "test") -> RunResult:
        """Run one case, blocking (the pytest plugin)."""
        session = self._session()
        return session.run(session.spec_for_case(case), trigger=trigger)

    async def arun(self, case: Case, gate: asyncio.Semaphore | None = None, trigger: str = "test") -> RunResult:
        """Run one case from asyncio; ``gate`` bounds the runners running at
        once (staging and reading the verdict are not held by it)."""
        session = self._session()
        return await session.arun(session.spec_for_case(case), trigger=trigger, gate=gate)

    def _session(self) -> Session:
        assert self.session is not None, "a task that could not be read has no case to run"
        return self.session

    @staticmethod
    def passed(result: RunResult) -> bool:
        """The one comparison with expected.json (``RunResult.expected_matched``)."""
        return bool(result.expected_matched)

    def close(self) -> None:
        if self.session is not None:
            self.session.close()


@record
class TrialItem:
    """One trial of a job (one step of a multi-step trial), opened for its
    replay only when it runs."""

    name: str  # the trial's name, with ``[step]`` for a step
    trial: Any
    step: str | None


@record(frozen=True)
class NotReplayed:
    """A trial (or step) that could not be read or replayed at its turn: the
    job's report keeps it as a row saying why, never leaves it out."""

    item: TrialItem
    why: str

    def to_json(self) -> dict[str, Any]:
        """A trial document (docs/json-output.md) with only what is known:
        every field of one is there (a reader takes each trial object alike),
        those not known null, ``story`` empty."""
        trial = self.item.trial
        return {
            "trial": {"path": str(trial.path), "name": trial.name, "step": self.item.step, "notes": [self.why]},
            "sandbox": None,
            "replay": None,
            "local": None,
            "local_skipped": self.why,
            "command_lacks_env": [],
            "command_lacks_overlay": None,
            "local_phases": None,
            "local_failure": None,
            "judged_by": None,
            "parted_at": None,
            "runner_alone": None,
            "same": None,
            "harbor_refuses_task": None,
            "differences": [self.why],
            "story": [],
            "copy_sandbox": None,
        }


def not_replayed(item: TrialItem, exc: Exception) -> NotReplayed:
    from verifier_tui.engine.harbor.folders import HarborFolderError

    if isinstance(exc, HarborFolderError):  # its words say what cannot be read
        return NotReplayed(item, str(exc))
    if isinstance(exc, OSError):
        return NotReplayed(item, f"cannot be read: {exc}")
    from verifier_tui.engine.sandbox.isolation import IsolationError

    if isinstance(exc, IsolationError):  # no sandbox to replay in: the line every command says (each report adds
        return NotReplayed(item, str(exc))  # "not replayed: " to it, as to a trial that cannot be read)
    # A fault of the tool's own with this trial: said on its row, and the other trials still run.
    return NotReplayed(item, f"could not be replayed: {type(exc).__name__}: {exc}")


@record
class JobTrials:
    """A Harbor job (or one trial) folder: each trial replayed on what it
    captured (or the stand-in, where it captured nothing), passing when the
    replay ends as its sandbox did (the agreement ``test JOB`` reports). A
    trial's outcome is its TrialSession, closed, its replay as ``last``."""

    name: str
    folder: Path
    replays: Any  # a JobReplays
    found: Any = None  # the Job (or Trial) read
    cases: list[TrialItem] = field(default_factory=list)
    invalid: list[tuple[str, str]] = field(default_factory=list)
    error: str | None = None
    session: None = None
    not_judged: list[tuple[str, str]] = field(default_factory=list)  # (every trial is judged by its sandbox's verdict)
    unread: list[str] = field(default_factory=list)  # (a trial's folder unread is an error of the job's)
    verifier_apart: None = None  # (a job's trials are judged by its sandbox's verifier)

    @property
    def id(self) -> str:
        return self.name

    def item_name(self, case: str) -> str:
        return f"{self.id}{SEPARATOR}{case}"

    def run(self, item: TrialItem, trigger: str = "test") -> Any:
        """Replay one trial, blocking (the pytest plugin); a :class:`NotReplayed` when it cannot be."""
        try:
            with self.replays.open(item.trial, item.step) as opened:
                opened.run(trigger=trigger)
        except Exception as exc:
            return not_replayed(item, exc)
        return opened

    async def arun(self, item: TrialItem, gate: asyncio.Semaphore | None = None, trigger: str = "test") -> Any:
        """Replay one trial from asyncio; the task's own test.sh judges a replay
        that differs (as ``run TRIAL`` always does). A :class:`NotReplayed` when it cannot be."""
        try:
            with self.replays.open(item.trial, item.step) as opened:
                await opened.arun(trigger=trigger, gate=gate, script_when_differs=True)
        except Exception as exc:
            return not_replayed(item, exc)
        return opened

    @staticmethod
    def passed(opened: Any) -> bool:
        return not isinstance(opened, NotReplayed) and opened.last.agreement.same is True

    def close(self) -> None:
        self.replays.close()


class JobReplays:
    """The trials of a job (each step of a multi-step one), or the one trial
    (its step, when the path named one), to replay: what ``test JOB`` and the
    pytest plugin replay. Each is opened only when its turn comes
    (:meth:`open`) and closed after, so a job of thousands of trials holds
    only the few in hand; their replays share one session per task and read
    each task's digest once."""

    def __init__(
        self, found: Any, step_in_path: str | None, options: Options, task_dir: Path | None = None, stand_in: Any = None
    ) -> None:
        from contextlib import ExitStack

        from verifier_tui.engine.harbor.folders import Job, TrialRef
        from verifier_tui.engine.harbor.replay import StandIn
        from verifier_tui.engine.harbor.trial_session import SessionPool
        from verifier_tui.engine.task.harbor_text import read_once

        trials = [
            trial if isinstance(trial, TrialRef) else TrialRef.of(trial)
            for trial in (found.trials if isinstance(found, Job) else [found])
        ]
        self.entries: list[tuple[TrialRef, str | None]] = [
            (trial, step) for trial in trials for step in ([step_in_path] if step_in_path else trial.step_names)
        ]
        self.options = options
        self.task_dir = task_dir
        self.stand_in = stand_in or StandIn(workspace=options.workspace, case=options.case)
        self._pool = SessionPool()
        self._memo = ExitStack()
        self._memo.enter_context(read_once())

    def open(self, trial: Any, step: str | None) -> Any:
        """The session replaying ``trial`` (a :class:`TrialRef`: read now, as
        it is now) at ``step``."""
        from verifier_tui.engine.harbor.folders import open_trial
        from verifier_tui.engine.harbor.trial_session import TrialSession

        return TrialSession(
            open_trial(trial.path),
            step,
            options=self.options,
            stand_in=self.stand_in,
            task_dir=self.task_dir,
            pool=self._pool,
        )

    def keep_isolation(self, chosen: Isolation) -> None:
        self._pool.isolation = chosen

    @uninterrupted
    def close(self) -> None:
        self._pool.close()
        self._memo.close()


@record(frozen=True)
class WithoutStep:
    """A task found below a folder that has no step ``--step`` names: not tested, said why
    (``why``: :func:`~verifier_tui.engine.task.steps.no_such_step`'s line), as a task without a
    case is, since the step is the folder's other tasks', not a mistake about this one."""

    folder: Path
    step: str
    why: str


def without_step_counted(tasks: Sequence[WithoutStep]) -> list[str]:
    """``test``'s summary line: ``1 task without step second``."""
    return [f"{len(tasks)} task{'s' if len(tasks) > 1 else ''} without step {tasks[0].step}"] if tasks else []


@record
class Collection:
    groups: list[Any]  # TaskCases and JobTrials: groups as the module's docstring says
    without_cases: list[Path] = field(default_factory=list)  # tasks found below a folder, none with a case
    without_step: list[WithoutStep] = field(default_factory=list)  # tasks found below a folder, lacking --step's

    @property
    def runnable(self) -> list[Any]:
        return [g for g in self.groups if g.error is None and g.cases]

    def keep_isolation(self, chosen: Isolation) -> None:
        """Every task's and trial's runs kept apart as ``chosen``, the command's one choice (why:
        :meth:`~verifier_tui.engine.session.Session.keep_isolation`)."""
        for group in self.groups:
            if group.session is not None:
                group.session.keep_isolation(chosen)
            elif isinstance(group, JobTrials):
                group.replays.keep_isolation(chosen)

    @uninterrupted
    def close(self) -> None:
        for group in self.groups:
            group.close()

    def __enter__(self) -> Collection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def collect(
    paths: list[Path | str | Target],
    options: Options | None = None,
    patterns: list[str] | tuple[str, ...] = (),
    task_dir: Path | None = None,
    stand_in: Any = None,
) -> Collection:
    """The groups to test under ``paths`` (or the targets the command line
    classified), narrowed by ``patterns`` (see
    :func:`matches`). ``task_dir``: a Harbor job's task, when it is not where
    the trials say; ``stand_in``: a job's stand-in for an uncaptured /app
    (a :class:`~verifier_tui.engine.harbor.replay.StandIn`). Raises :class:`CollectionError` for a path that names
    nothing testable and for a pattern that matches no case."""
    options = options or Options()
    groups: list[Any] = []
    without_cases: list[Path] = []
    without_step: list[WithoutStep] = []
    caseless: dict[Path, list[Path]] = {}
    try:
        for path in paths:
            target = path if isinstance(path, Target) else classify(path)
            found = _groups_for(target, options, task_dir, stand_in, without_cases, caseless)
            without_step += [g for g in found if isinstance(g, WithoutStep)]
            groups += [g for g in found if not isinstance(g, WithoutStep)]
        if caseless:  # the refusal runs no group: every task found without a case is listed
            raise _nothing_to_test(caseless, _listed(without_cases))
        if without_step and not groups:
            raise CollectionError(_none_with_step(without_step, without_cases))
        groups = _once_each(groups)
        _verifiers_apart(groups)
        _unique_names(groups)
        if patterns:
            _narrow(groups, list(patterns), without_step)
    except BaseException:
        for group in groups:
            group.close()
        raise
    return Collection(groups, _listed(without_cases, groups), without_step)


def _listed(without_cases: Sequence[Path], groups: Sequence[Any] = ()) -> list[Path]:
    """The tasks without a case to test as every report lists them: each once, in
    the order of their paths, none that a group tests (a task also named alone)."""
    named = {os.path.realpath(group.folder) for group in groups}
    left = {os.path.realpath(p): p for p in without_cases if os.path.realpath(p) not in named}
    return sorted(left.values())


def _nothing_to_test(caseless: dict[Path, list[Path]], without_cases: list[Path]) -> CollectionError:
    """The one refusal for every folder named whose tasks have no case to test,
    said once all the paths were looked at, with every task found without one."""
    bare = _listed([task for tasks in caseless.values() for task in tasks])
    folders = some_names([str(folder) for folder in caseless])
    holds = "holds" if len(caseless) == 1 else "hold"
    names = some_names(sorted(task.name for task in bare))
    return CollectionError(
        f"{folders} {holds} {len(bare)} task(s) ({names}) and none has a case to test: {none_to_test(bare)}",
        without_cases,
    )


def _none_with_step(without_step: Sequence[WithoutStep], without_cases: Sequence[Path]) -> str:
    """Why no task found is tested with ``--step``'s step: none has it, or those that have it
    have no case to test (then "no task found has it" would be false, and hide that)."""
    step = without_step[0].step
    lacking = some_names([w.why.removeprefix(f"--step {step}: ") for w in without_step], NAMES_LISTED, "; ")
    having = [task for task in without_cases if step_named(read_task_config(task), step) is not None]
    if not having:
        return f"--step {step}: no task found has it: {lacking}"
    names = some_names(sorted(task.name for task in having))
    has = "has" if len(having) == 1 else "have"
    return (
        f"--step {step}: no task found has it with a case to test: {names} {has} it ({none_to_test(having)}); "
        f"not tested, without it: {lacking}"
    )


def matches(pattern: str, task: str, case: str) -> bool:
    """A ``--case`` pattern: a shell-style glob on the case's name
    (``wrong-*``), or on ``<task>::<case>`` when it holds ``::``
    (``hello-file::wrong-*``, ``*::correct``). A name as it is matches too:
    ``br[ack]et``, as a glob, is not the case folder of that name."""
    name = f"{task}{SEPARATOR}{case}" if SEPARATOR in pattern else case
    return typed_back(name, pattern) or fnmatch.fnmatchcase(name, pattern)


def picked(patterns: list[str] | tuple[str, ...], group: Any, case: str) -> bool:
    """Whether ``--case`` patterns pick a group's ``case``: ``TASK::CASE`` by the
    task's name (each of its verifiers' case), or by the group's id, which
    names one verifier when several of the task's are tested (``TaskCases.id``)."""
    return any(matches(pattern, task, case) for task in dict.fromkeys([group.name, group.id]) for pattern in patterns)


def _groups_for(
    target: Target,
    options: Options,
    task_dir: Path | None,
    stand_in: Any,
    without_cases: list[Path],
    caseless: dict[Path, list[Path]],
) -> list[Any]:
    """The groups ``target`` names; the tasks found below it without a case
    are added to ``without_cases`` (each said by whoever reports), and a folder
    whose every task is one of them to ``caseless`` (a refusal, once every path is seen)."""
    if target.kind == "missing":
        raise CollectionError(target.why)
    path = target.path
    if target.harbor:
        return [_job_group(target, options, task_dir, stand_in)]
    if target.kind in ("task", "tests", "verifier", "case") or path.is_file():
        return [_task_group(target, options, named=True)]
    found, bare = tasks_below(path)
    without_cases += bare
    if found:
        return [_task_group(folder, options, named=False) for folder in found]
    if bare:
        caseless[path] = bare
        return []
    # Neither a task nor a folder of tasks: discovery says what it is in one line
    # (or takes it as a bare folder of verifiers, which has no cases to test).
    try:
        return [_task_group(target, options, named=True)]
    except CollectionError as exc:
        if not searched(path):
            raise
        raise CollectionError(
            f"{exc}; nor was a task with cases to test (<task>/cases/<case>/expected.json) found below it"
        ) from None


def searched(folder: Path) -> bool:
    """Whether :func:`tasks_below` looks below ``folder`` at all: never below
    the file system's root or the home folder (a path typed by mistake gets
    its one line at once)."""
    return folder not in (Path(folder.anchor), Path.home())


def tasks_below(folder: Path) -> tuple[list[Path], list[Path]]:
    """The tasks below ``folder`` (at most :data:`SEARCH_DEPTH` levels down): those with
    a case to test (a ``cases/<case>/expected.json``), and the others. A
    task's own folders are not searched, nor are hidden folders, caches and
    virtual environments; at most MAX_ENTRIES_SCANNED entries are looked at
    (see :func:`searched` for the folders never searched)."""
    found: list[Path] = []
    others: list[Path] = []
    if not searched(folder):
        return found, others
    budget = MAX_ENTRIES_SCANNED
    level = [folder]
    for _ in range(SEARCH_DEPTH):
        below: list[Path] = []
        for current in level:
            try:
                with os.scandir(current) as scan:
                    entries = sorted(scan, key=lambda entry: entry.name)
            except OSError:
                continue
            for entry in entries:
                budget -= 1
                if budget < 0:
                    return sorted(found), others
                if entry.name.startswith(".") or entry.name in NOT_SEARCHED:
                    continue
                try:
                    if not entry.is_dir(follow_symlinks=False):
                        continue
                except OSError:
                    continue
                sub = Path(entry.path)
                if looks_like_task(sub):
                    (found if _has_expected(sub / "cases") else others).append(sub)
                else:
                    below.append(sub)
        level = below
    return sorted(found), others


def found_again(folder: Path, options: Options) -> TaskCases | WithoutStep | None:
    """A task :func:`collect` passed over (no case, or not ``--step``'s step) as it would find it now
    (``test --watch`` asks each round, as the task is saved): its group once it has a case with an
    expected.json and the step, a :class:`WithoutStep` while it lacks the step, None while it has no case."""
    return _task_group(folder, options, named=False) if _has_expected(folder / "cases") else None


def _has_expected(cases: Path) -> bool:
    """Whether a task found below a folder is tested: it has a case with an
    expected.json, or a ``cases/`` that cannot be listed, whose group then says
    why as ``test TASK`` does and fails the run (it was "not tested: it has no case"); so does a
    ``cases/`` that leads out of the task (:func:`find_cases`), whose folders are no case of it."""
    if outside(cases, cases.parent) is not None:
        return cases.is_dir()
    try:
        return any(untrusted.present(entry / "expected.json") for entry in cases.iterdir() if is_case_folder(entry))
    except OSError:
        return cases.is_dir()


def _job_group(target: Target, options: Options, task_dir: Path | None, stand_in: Any = None) -> JobTrials:
    from verifier_tui.engine.harbor.folders import HarborFolderError, open_harbor

    try:
        found, step_in_path = open_harbor(target, refs=True)  # each trial is read again at its turn
    except HarborFolderError as exc:
        raise CollectionError(str(exc)) from None
    replays = JobReplays(found, step_in_path, options, task_dir, stand_in)
    group = JobTrials(name=found.name, folder=found.path, replays=replays, found=found)
    group.cases = [
        TrialItem(trial.name + (f"[{step}]" if step else ""), trial, step) for trial, step in replays.entries
    ]
    if not group.cases:
        group.error = "; ".join(getattr(found, "problems", None) or ["no trial folders"])
    return group


def _task_group(folder: Path | Target, options: Options, named: bool) -> TaskCases | WithoutStep:
    """The group of the task at ``folder`` (or that a target names). ``named``: the user gave this
    path, so a task with nothing to test says why; a task found below a
    folder always has cases with an expected.json, and one without the
    step ``--step`` names is passed over (:class:`WithoutStep`)."""
    try:
        try:
            session = Session(folder, options)
        except StepOfRefusedTask:
            if named:
                raise
            # Harbor refuses the task whatever the step: its group says so with its cases not run, as
            # test FOLDER does without --step and as it does of a refused task that has the step (exit 2).
            session = Session(folder, replace(options, step=None))
    except (DiscoveryError, SelectionError) as exc:
        if named:
            raise CollectionError(exc.args[0]) from None  # Advice kept
        where = folder.path if isinstance(folder, Target) else folder
        if isinstance(exc, NoSuchStep) and options.step is not None:
            return WithoutStep(where, options.step, str(exc))
        return TaskCases(name=where.name, folder=where, session=None, error=exc.args[0])  # Advice kept
    task = session.task
    # A case folder named: that case only (kept, as a re-read task forgets how it was opened).
    only = (task.initial_case,) if task.initial_case is not None else None
    group = TaskCases(name=task.name, folder=task.root, session=session, only=only)
    group.read_cases()
    return group


def _once_each(groups: list[Any]) -> list[Any]:
    """Each task once (``test tasks tasks/hello-file`` named it twice: its
    cases ran twice, under one id): a later group of the same folder and
    verifier is closed, its cases joined to the first's (``test
    hello/cases/wrong-*`` is one task of those cases, not one task per case;
    a case folder named beside its task, before or after it, is every case
    once). Paths compared where links lead: ``tasks`` and a link to it name
    the same verifier."""
    kept: list[Any] = []
    seen: dict[tuple[Any, ...], Any] = {}
    for group in groups:
        session = getattr(group, "session", None)
        verifier = session and session.verifier and os.path.realpath(session.verifier)
        key = (type(group), os.path.realpath(group.folder), verifier)
        first = seen.get(key)
        if first is None:
            seen[key] = group
            kept.append(group)
            continue
        if isinstance(first, TaskCases) and first.only != group.only:
            first.only = None if first.only is None or group.only is None else (*first.only, *group.only)
            first.read_cases()
        group.close()
    return kept


def _verifiers_apart(groups: list[Any]) -> None:
    """Two verifiers of one task (``test two/tests/verifier.py
    two/tests/other.py``) are two groups of one folder: each case's id came
    twice (``two::correct``), in ``--json``, JUnit and pytest's ids, which CI
    merges or drops. Each is then named by its verifier in the task too,
    ``two::tests/other.py::correct``; only then, so a task of one verifier
    keeps the ids users' CI knows. A group of the folder without a verifier
    (found below a folder, the task's several verifiers are its error) keeps
    the task's, beside the one verifier named apart."""
    by_folder: dict[str, list[TaskCases]] = {}
    for group in groups:
        if isinstance(group, TaskCases):
            by_folder.setdefault(os.path.realpath(group.folder), []).append(group)
    for same in by_folder.values():
        for group in same if len(same) > 1 else []:
            verifier = group.session.verifier if group.session is not None else None
            if verifier is not None:
                group.verifier_apart = Path(os.path.relpath(verifier, group.folder)).as_posix()


def _unique_names(groups: list[Any]) -> None:
    """Two tasks of the same name (``task.toml``'s name, or the folder's) are
    told apart by their folder's path (two verifiers of one task are one task:
    :func:`_verifiers_apart` tells them apart)."""
    folders: dict[str, set[str]] = {}
    for group in groups:
        folders.setdefault(group.name, set()).add(os.path.realpath(group.folder))
    here = Path.cwd()
    for group in groups:
        if len(folders[group.name]) > 1:
            group.name = os.path.relpath(group.folder, here) if group.folder.is_relative_to(here) else str(group.folder)


def _narrow(groups: list[Any], patterns: list[str], without_step: Sequence[WithoutStep] = ()) -> None:
    used: set[str] = set()
    every: list[str] = []
    for group in groups:

        def keep(name: str, group: Any = group) -> bool:
            hits = {p for p in patterns if picked([p], group, name)}
            used.update(hits)
            return bool(hits)

        every += [group.item_name(c.name) for c in group.cases] + [group.item_name(n) for n, _p in group.invalid]
        group.cases = [c for c in group.cases if keep(c.name)]
        group.invalid = [(n, p) for n, p in group.invalid if keep(n)]
        # Those of invalid whose folder cannot be read: narrowed alike, or the report counts one not chosen.
        group.unread = [n for n in group.unread if any(n == name for name, _p in group.invalid)]
        # (A case without expected.json is said when asked for, but it does not make a pattern match.)
        group.not_judged = [(n, w) for n, w in group.not_judged if picked(patterns, group, n)]
    unused = [p for p in patterns if p not in used]
    if unused:
        shown = [one_line(name, untrusted.TARGET_CHARS) for name in every]  # as test's table names them
        known = some_names(shown, NAMES_LISTED) if every else "none"
        # A task passed over for lacking --step's step holds cases a pattern may name: said, or the
        # user looks for a case that is there.
        passed_over = some_names([one_line(w.folder.name, untrusted.TARGET_CHARS) for w in without_step], NAMES_LISTED)
        lacking = f"; not tested, without step {without_step[0].step}: {passed_over}" if without_step else ""
        # a task whose cases/ is not listed (out of the task, unreadable) may hold the case named: why
        tasks = [s.task for s in (getattr(g, "session", None) for g in groups) if s is not None]
        lacking += "".join([f"; {t.name}: {t.cases_unread}" for t in tasks if t.cases_unread][:1])
        pattern = one_line(unused[0], untrusted.TARGET_CHARS)
        raise CollectionError(f"--case {pattern} matches no case (cases: {known}{lacking})")
    # A task none of whose cases was asked for is not part of this run.
    groups[:] = [g for g in groups if g.cases or g.invalid]


def warm_up(group: Any, runners: int) -> None:
    """A task's cases start held ahead of their turn (engine/warm.py) where
    ``runners`` at once leave a CPU idle for them to start on, unless
    :data:`COLD` says otherwise. With every CPU running a verifier, a held
    start only competes with them: 200 trivial cases at ``-j 2`` on 2 CPUs
    took 25% more CPU held than cold and no less time, where at ``-j 1`` they
    took 8.3 s against 13.1 s. A job's trials (``group.session`` None) stay
    cold: their replays, and the stand-ins they use, are the trials' own sessions."""
    from verifier_tui.engine.procfs import machine_cpus

    if group.session is not None and runners < machine_cpus() and os.environ.get(COLD) != "1":
        group.session.keep_warm(again=False)


async def arun_groups(
    groups: list[Any], jobs: int, keep: Callable[[Any, int, Any], Any] | None = None
) -> list[list[Any]]:
    """Every case of ``groups`` (a task's cases, a job's trials), at most
    ``jobs`` runners at once across all of them; each group's outcomes in its
    cases' order, or what ``keep(group, index, outcome)`` makes of each
    (a job of thousands of trials keeps a summary of each, not its replay).

    Only the runner holds one of the ``jobs`` places: the next cases are
    staged, and the last ones' verdicts read, while the runners run (at most
    ``jobs`` more cases are in hand at once, so staging never runs far ahead)."""
    import asyncio

    running = asyncio.Semaphore(max(1, jobs))
    in_hand = asyncio.Semaphore(2 * max(1, jobs))
    for group in groups:
        if group.session is not None:
            # Each case runs once: a layout is worth more to the next case than kept.
            group.session.recycle_stages = True
            warm_up(group, jobs)

    async def one(group: Any, index: int, case: Any) -> Any:
        async with in_hand:
            # A case that starts no process (a trial that kept no /app) never yields to the loop: without
            # this, a stop (Ctrl+C, SIGTERM: a cancel the loop runs) waited until every one had been gone through.
            await asyncio.sleep(0)
            outcome = await group.arun(case, gate=running)
            return outcome if keep is None else keep(group, index, outcome)

    async def whole(group: Any) -> list[Any]:
        return list(await asyncio.gather(*(one(group, index, case) for index, case in enumerate(group.cases))))

    return list(await asyncio.gather(*(whole(group) for group in groups)))
