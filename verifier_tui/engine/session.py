"""A debugging session: one task, the user's current choices, and the runs.

The TUI and the headless commands both drive a :class:`Session`. It owns the
scratch folder (removed on :meth:`close`), keeps one staged layout per
selection so re-runs only copy what changed, and builds a :class:`RunSpec`
from the current choices.

Over 500 lines on purpose: it is the one object both faces drive, and its
methods read best together (a choice, the spec it makes, a run of it, and
which file changes feed it). What a run does lives elsewhere
(:mod:`~verifier_tui.engine.invocation`, :mod:`~verifier_tui.engine.results`,
:mod:`~verifier_tui.engine.process`); split further, the class would need
mixins, which is what the code shape work removed.
"""

from __future__ import annotations

import fcntl
import os
import struct
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from verifier_tui.engine import untrusted
from verifier_tui.engine.advice import CASE_OPTION, STEP_NAMED, Advice
from verifier_tui.engine.filters import is_noise
from verifier_tui.engine.invocation import DEFAULT_TIMEOUT_S, EXPLAIN_FILE, Prepared, RunSpec, leased_cpus, prepare
from verifier_tui.engine.model import ResponseSource, RunInputs, RunResult
from verifier_tui.engine.plain import one_line
from verifier_tui.engine.process import NoThread, in_a_thread, not_started, run_process
from verifier_tui.engine.readback import Explanation
from verifier_tui.engine.record import record, replace
from verifier_tui.engine.results import collect, map_paths, no_explanation, read_explain
from verifier_tui.engine.sandbox import room, user_files
from verifier_tui.engine.sandbox.environment import filled_from_shell
from verifier_tui.engine.sandbox.isolation import NAMESPACE, Isolation
from verifier_tui.engine.sandbox.isolation import choose as choose_isolation
from verifier_tui.engine.sandbox.isolation import requested as requested_isolation
from verifier_tui.engine.sandbox.stage import Scratch, Stage, unreadable
from verifier_tui.engine.task.cases import Case, default_task_data, defines_a_case
from verifier_tui.engine.task.discovery import (
    DiscoveryError,
    Task,
    choose_verifier,
    load_case_dir,
    read_task_config,
    resolve,
    verifier_notices,
)
from verifier_tui.engine.task.harbor_text import GITIGNORE
from verifier_tui.engine.task.kinds import (
    NAMES_LISTED,
    runner_notices,
    some_names,
    step_tests_folder,
    step_tests_unused,
)
from verifier_tui.engine.task.loading import as_loaded_without_verifier
from verifier_tui.engine.task.rows import TASKS_FILE, choose_row, looks_like_rows, no_row_chosen
from verifier_tui.engine.task.steps import (
    no_such_step,
    step_kept_out,
    step_named,
    step_task_data,
    step_tests,
    steps_notices,
    task_for_step,
)
from verifier_tui.engine.to_the_end import uninterrupted
from verifier_tui.engine.warm import at_its_turn, prepare_held

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Callable
    from typing import Any

    from verifier_tui.engine.process import Held, ProcessResult
    from verifier_tui.engine.task.kinds import OwnRunner
    from verifier_tui.engine.task.target import Target
    from verifier_tui.engine.warm import Waiting

#: How much of ``explain``'s stdout (the runner's document, indented) is kept.
EXPLAIN_CAP_BYTES = 16 * 1024 * 1024


class SelectionError(Exception):
    """A choice that cannot be honoured (no such case, a file that is missing)."""


def no_such_case(task: Task, name: str, where: str = "") -> str:
    """`` NAME: no such case`` (after ``--case``) and the cases there are, or, with
    cases/ there but not listed (out of the task, unreadable), why: never "cases: none". Each name as
    test's table shows it (:func:`one_line`): cases named alike but for what draws nothing read apart."""
    names = some_names([one_line(c.name, untrusted.TARGET_CHARS) for c in task.cases], NAMES_LISTED) or "none"
    return f" {one_line(name, untrusted.TARGET_CHARS)}: no such case{where} ({task.cases_unread or f'cases: {names}'})"


class NoSuchStep(SelectionError):
    """``--step NAME`` naming no step of the task (``test FOLDER --step NAME`` passes over such a task)."""


class StepOfRefusedTask(SelectionError):
    """``--step NAME`` on a task Harbor would refuse to load, whose steps hold no step NAME
    (``test FOLDER --step NAME`` reports it refused, as it does without ``--step``)."""


@record(frozen=True)
class Options:
    """What the command line (or the TUI's choosers) asked for."""

    verifier: str | None = None
    case: str | None = None
    workspace: Path | None = None
    response: Path | None = None
    no_response: bool = False
    task_data: Path | None = None
    timeout: float | None = None
    python: str = "python3"
    nemo_gym: Path | None = None
    task_id: str | None = None  # a row of the task's tasks.jsonl (or of --task-data's .jsonl)
    runner: str = "ours"  # "task": the runner the task ships in tests/.ng/
    env: tuple[str, ...] = ()  # --env words: NAME (from the user's environment) or NAME=VALUE
    preload: tuple[str, ...] = ()  # --preload: modules a run started ahead imports while it waits
    network: str = "task"  # --network host: the run shares this machine's network, the user's choice
    coverage: bool = False  # --coverage: each run tells which of the task's own lines ran
    step: str | None = None  # --step: a multi-step task's step (a trial's replay: the trial's step)
    replay: bool = False  # a trial's replay: one step's as its plan stages it, whatever task.toml lists now
    # A replay's trial step, listed in task.toml or not (``step`` is None when not): the plan lays its
    # steps/<name>/tests over tests/ either way, so a save there is one of the run's (watch TRIAL).
    replay_step: str | None = None
    verifier_disabled: bool = False  # a replay of a trial whose job disabled the verifier (its task loads so)

    def interpreter(self, timeout_s: float | None = None) -> Any:
        """What ``--python`` is (:func:`~verifier_tui.engine.interpreter.probe_interpreter`),
        asked within ``timeout_s`` (a session's task's timeout), else within
        ``--timeout``: a Harbor trial's or job's tasks are found later. Its
        ``error`` says in one line why it cannot run the runner."""
        from verifier_tui.engine.interpreter import PROBE_TIMEOUT_S, probe_interpreter

        within = timeout_s if timeout_s is not None else self.timeout or PROBE_TIMEOUT_S
        return probe_interpreter(self.python, timeout_s=min(PROBE_TIMEOUT_S, within))


def not_a_workspace(folder: Path | str) -> str:
    """A workspace given that is no folder, as every face says it (a task's
    --workspace, a trial's or job's stand-in, the TUI's): its path absolute."""
    return f"workspace {Path(folder).expanduser().absolute()} is not a folder"


# The machine's own top folders: none is an agent's workspace, and staging
# one would copy (or overlay) a whole system.
_SYSTEM_FOLDERS = frozenset(
    {
        "/",
        "/bin",
        "/boot",
        "/dev",
        "/etc",
        "/lib",
        "/lib32",
        "/lib64",
        "/libx32",
        "/proc",
        "/run",
        "/sbin",
        "/sys",
        "/usr",
        "/var",
    }
)


def system_folder(folder: Path) -> str | None:
    """Why ``folder`` cannot be a workspace (one line), or None: the file
    system's root and the system's own top folders are refused."""
    real = os.path.realpath(folder)
    if real in _SYSTEM_FOLDERS:
        return (
            f"workspace {folder}: a system folder, not an agent's workspace (a run would stage all of it); "
            "give the folder the agent worked in"
        )
    return None


def response_source(path: Path) -> ResponseSource:
    """A response file: JSON when it parses as a JSON object by name
    (``.json``), plain text otherwise (wrapped by the tool)."""
    return ResponseSource(path, "json" if path.suffix.lower() == ".json" else "text")


class Session:
    """The current task, choices and staged layouts of one user session."""

    def __init__(self, path: Path | str | Target, options: Options | None = None) -> None:
        self.options = options or Options()
        self.step: str | None = None  # the step of a multi-step task the runs are (--step), as Harbor verifies it
        self.task: Task = self._as_step(resolve(path), strict=True)
        self._task_folder = _folder_identity(self.task.root)  # the task's folder as last read (a rename keeps it)
        self._steps_read = self._steps_layout()  # which step folders and instructions were there as it was read
        self.scratch: Scratch | None = None
        self._stages: dict[tuple[Path | None, bool], list[Stage]] = {}
        self._busy: set[int] = set()  # id() of the stages a run is using right now
        self._own_writes: dict[Path, tuple[int, int, int, int] | None] = {}  # see note_own_writes
        self.recycle_stages = False  # test: each case runs once, so any idle layout serves the next
        self.sequence = 0
        self.verifier: Path | None = None
        self._verifier_named = False  # --verifier or the user's pick chose it (not the default, nor --step's)
        # The file the user named, as named: ``verifier`` is it as /tests holds it (:meth:`_as_staged`),
        # which a step's own tests may shadow; a reload starts from the pick, so a step dropped gives it back.
        # ``_picked_as``: the user's words for it, read again against the task as re-read (:meth:`_repick`).
        self._picked: Path | None = None
        self._picked_as: str | None = None
        # Each step and verifier chosen before, with its own files as they were when it was left: see _arrived.
        self._left: dict[tuple[str | None, Path | None], user_files.Snapshot] = {}
        self._came_back_changed = False
        self.case: Case | None = None
        self._gone_case: Case | None = None  # the chosen case while its folder is away (chosen again when back)
        self._case_folder: _Identity | None = None  # the chosen case's folder as last read (a rename keeps it)
        self.workspace: Path | None = None
        self.response: ResponseSource | None = None
        self.task_data: Path | None = None
        self.task_id: str | None = None  # the row of ``task_data`` (a .jsonl) in use, if any
        # The file of rows chosen (not the task's own), and what of it was left out.
        self.rows_problems: tuple[Path | None, tuple[str, ...]] = (None, ())
        self.runner = "ours"  # or "task": the task's own tests/.ng/run_verifier.py
        requested_isolation()  # a bad VERIFIER_TUI_SANDBOX is one line now, not at the first run
        self._isolation: Isolation | None = None
        self._live = False  # a watcher reports every change to the user's files (note_change)
        self.warm: Any = None
        """The runs started ahead (:meth:`keep_warm`, a :class:`~verifier_tui.engine.warm.WarmRuns`), or None."""
        self._apply_options(self.options)

    # -- choices -----------------------------------------------------------

    def _as_step(self, task: Task, *, strict: bool = False) -> Task:
        """``task`` as Harbor verifies the step ``--step`` names
        (:func:`~verifier_tui.engine.task.steps.task_for_step`). A step that is
        not the task's: one line when the session opens (``strict``); on a
        reload (task.toml changed since) the task as it is, whose note then
        says that this run is not a step's."""
        if self.options.verifier_disabled:
            task = replace(task, config=as_loaded_without_verifier(task.config, task.root))
        name = self.options.step
        named = step_named(task.config, name) if name is not None else None
        alike = step_kept_out(task, name, named) if strict and name is not None and named is not None else None
        if alike is not None:
            raise SelectionError(alike)
        if named is None:
            if name is not None and strict:
                # A task Harbor would not load at all is refused whatever the step (test FOLDER says so).
                refused = task.config.refused is not None
                raise (StepOfRefusedTask if refused else NoSuchStep)(no_such_step(task, name))
            self.step = None
            return task
        # the step's own name from here on (its folder, the notes), however --step wrote it
        self.step, self.options = named, replace(self.options, step=named)
        return task_for_step(task, named)

    def _apply_options(self, options: Options) -> None:
        self._verifier_named = options.verifier is not None
        if options.verifier is not None and self.task.verifiers:
            self._pick(options.verifier)
        else:
            self._picked = self._picked_as = None
            self.verifier = self._default_verifier(strict=True)
        case_name = options.case or self.task.initial_case
        case: Case | None = None
        if case_name:
            case = self.task.case(case_name)
            if case is None:
                as_path = Path(case_name).expanduser()
                if as_path.is_dir():
                    case = load_case_dir(as_path.absolute(), self.task)
                else:
                    said = no_such_case(self.task, case_name)
                    # a case folder named as the path: no --case was typed
                    raise SelectionError(Advice(CASE_OPTION, said) if options.case else f"case{said}")
        elif options.workspace is None and self.task.cases:
            case = self.task.cases[0]
        self.select_case(case)
        if options.workspace is not None:
            self.choose_workspace(options.workspace)
        if options.no_response:
            self.response = None
        elif options.response is not None:
            self.choose_response(options.response, typed=True)
        if options.task_data is not None or options.task_id is not None:
            self.choose_task_data(options.task_data, options.task_id)
        if options.runner != "ours":
            self.choose_runner(options.runner)

    def select_case(self, case: Case | None) -> None:
        """Take a case's workspace, response and task data (or none at all)."""
        self.case, self._gone_case = case, None
        self._case_folder = _folder_identity(case.folder) if case is not None else None
        if case is None:
            self.workspace = None
            self.response = None
            self.task_data = self._step_default_data()
            self.task_id = None
            return
        self.workspace = case.workspace
        self.response = None if self.options.no_response else case.response
        self.task_data = case.task_data
        self.task_id = case.task_id

    def select_case_named(self, name: str) -> None:
        case = self.task.case(name)
        if case is None:
            raise SelectionError(f"no case named {name}")
        self.select_case(case)

    def choose_verifier(self, verifier: Path | str) -> None:
        left = self._leaving()
        self._pick(str(verifier))
        self._verifier_named = True
        self._arrived(left)

    def _pick(self, words: str) -> None:
        self._picked, self._picked_as = choose_verifier(self.task, words), words
        self.verifier = self._as_staged(self._picked)

    def _repick(self, fallback: Path | None) -> Path | None:
        """The user's pick read again from their words against the task as it
        is now, as a fresh ``run --verifier WORDS`` reads them: a bare
        ``verifier.py`` is the step's own while the step is laid over tests/
        (its files come first) and tests/'s once task.toml drops the step.
        Words that name nothing now (a file gone, the task's folder renamed):
        ``fallback``, the file they named before."""
        if self._picked_as is None or not self.task.verifiers:
            return fallback
        try:
            self._picked = choose_verifier(self.task, self._picked_as)
        except DiscoveryError:
            return fallback
        return self._picked

    def _default_verifier(self, *, strict: bool) -> Path | None:
        """The verifier when the user named none: the one the step's /tests has
        test.sh run (as Harbor does), else discovery's choice; ``strict`` (the
        session opening): several with none preferred is an error, else (a
        reload) the first is taken."""
        if not self.task.verifiers:
            return None
        if self.step is not None and self.task.shim_runs in self.task.verifiers:
            return self.task.shim_runs
        try:
            return choose_verifier(self.task, None)
        except DiscoveryError:
            if strict:
                raise
            # A reload never fails on several with none preferred: it takes the first. Discovery's preference
            # (the file test.sh runs, as Harbor runs it) still comes first: a reload took verifiers[0] over it.
            return self.task.verifiers[0]

    def _as_staged(self, verifier: Path) -> Path:
        """``verifier`` as /tests holds it: a file of tests/ the step's own
        tests ship too is the step's (Harbor uploads them last)."""
        own = step_tests(self.task.root, self.step)
        if own is None or not verifier.is_relative_to(self.task.tests_dir):
            return verifier
        shadow = own / verifier.relative_to(self.task.tests_dir)
        return shadow if untrusted.present(shadow) else verifier

    def choose_step(self, name: str | None) -> None:
        """The runs become step ``name``'s of a multi-step task (None: the task's
        tests/ with its [verifier], which Harbor never runs as such), as
        ``--step NAME`` opens it (the TUI's S): the step's [steps.verifier]
        settings, its own tests laid over tests/ and, with no verifier the user
        named, the one its /tests has test.sh run. A verifier the user named
        stays, read again from their words under the step (the step's own
        ``verifier.py`` when it ships one); no case chosen, the task data is the
        step's default (the shim passes ``/tests/task_data.json``, the step's own when it ships one)."""
        if name is not None and self.task.config.step(name) is None:
            raise SelectionError(no_such_step(self.task, name))
        default_data = self.case is None and self.task_data == self._step_default_data()
        left = self._leaving()
        self.options = replace(self.options, step=name)
        if not self._verifier_named:
            self.verifier = None  # the step's default, chosen again as the task is re-read under it
        self.reload_task()
        if default_data:
            self.task_data = self._step_default_data()
        self._arrived(left)

    def _leaving(self) -> tuple[tuple[str | None, Path | None], user_files.Snapshot]:
        """The step and verifier chosen now, with a look at their own files, before another choice."""
        own: list[Path | None] = [folder for folder, _kept in self._step_tests()]
        if self.verifier is not None and not self.verifier.is_relative_to(self.task.tests_dir):
            own.append(self.verifier)
        # A bounded lstat of each entry that never follows a link (the step's tests linked out of the task
        # are the link, as the watcher watches them by name).
        return self.setup, user_files.take(own)

    def _arrived(self, left: tuple[tuple[str | None, Path | None], user_files.Snapshot]) -> None:
        """After a choice of step or verifier: the setup ``left`` (:meth:`_leaving`) is noted, and coming
        back to one left before whose own files changed since is said by :meth:`came_back_changed`. The
        watcher follows only the chosen step's tests and a chosen verifier outside tests/: an edit of them
        while another is chosen is seen by no one, and the runs made under them would be marked current
        again (RunResult.setup equal to the choice) though what they read changed."""
        setup, seen = left
        if self.setup == setup:
            return
        self._left[setup] = seen
        before = self._left.pop(self.setup, None)
        if before is not None and _edited(before):
            self._came_back_changed = True

    def came_back_changed(self) -> bool:
        """Whether a step or verifier chosen again had its own files changed since it was left
        (then no run made so far says how a case goes now, as after a save the watcher sees). Said once."""
        changed, self._came_back_changed = self._came_back_changed, False
        return changed

    def _step_default_data(self) -> Path | None:
        """The task data a run with no case has by default under the current step."""
        return step_task_data(self.task, self.step, default_task_data(self.task.root, self.task.tests_dir))

    def choose_workspace(self, folder: Path) -> None:
        folder = Path(folder).expanduser().absolute()
        if not folder.is_dir():
            raise SelectionError(not_a_workspace(folder))
        problem = system_folder(folder)
        if problem is not None:
            raise SelectionError(problem)
        self.workspace = folder

    def choose_response(self, path: Path | None, *, typed: bool = False) -> None:
        """``typed``: a path the user typed (--response), whose absence is no
        deletion; any other (the case's file, one picked or put aside by m)
        was there when shown, and gone it is said in a run's words for it."""
        if path is None:
            self.response = None
            return
        path = Path(path).expanduser().absolute()
        if not path.is_file():
            if typed and not os.path.lexists(path):
                raise SelectionError(f"response {path} is not a file")
            handle, found = untrusted.open_regular(path)
            if handle is not None:  # it became a file meanwhile
                handle.close()
            if found is not None:  # in a run's words for it (a link to nothing, a folder, a FIFO)
                raise SelectionError(unreadable("the response", found))
        self.response = response_source(path)

    def set_typed_response(self, text: str, kind: str) -> None:
        """A response typed in the TUI's editor: ``kind`` is "json" or "text"."""
        self.response = ResponseSource(None, kind, text)

    def choose_task_data(self, path: Path | None, task_id: str | None = None) -> None:
        """A JSON file as task data. A JSON Lines file (a parameterized task's
        tasks.jsonl; by default the task's own when ``task_id`` is given) is a
        file of rows: row ``task_id``, or its only row."""
        if path is None and task_id is None:
            self.task_data, self.task_id = None, None
            return
        if path is None:
            if self.task.rows is None:
                raise SelectionError(
                    f"--task-id {task_id}: {self.task.name} has no tasks.jsonl (it is not a "
                    "parameterized task); --task-data FILE.jsonl names another file of rows"
                )
            path = self.task.rows.path
        path = Path(path).expanduser().absolute()
        if not path.is_file():
            raise SelectionError(f"task data {path} is not a file")
        if task_id is None and not looks_like_rows(path):
            self.task_data, self.task_id = path, None
            return
        try:
            self.task_id, problems = choose_row(path, task_id, self.task.rows)
        except ValueError as exc:
            raise SelectionError(*exc.args) from None
        self.task_data = path
        # The task's own tasks.jsonl says its problems among the task's notices.
        own = self.task.rows is not None and self.task.rows.path == path
        self.rows_problems = (path, () if own else problems)

    def choose_runner(self, which: str) -> None:
        """``ours`` (the default: the resolution and the phases need its
        extras) or ``task``: the runner the task ships in tests/.ng/, which
        is what the sandbox would run."""
        if which == "task" and self.task.own_runner is None:
            # Here, not at the top: the module's imports are kept to what start-up needs.
            from verifier_tui.engine.task.kinds import no_runner_words

            why = no_runner_words(self.task.tests_dir, self.step)
            raise SelectionError(f"--runner task: {self.task.name} ships no runner of its own ({why})")
        if which not in ("ours", "task"):
            raise SelectionError(f"--runner {which}: ours or task")
        self.runner = which

    @property
    def isolation(self) -> Isolation:
        """How this session's runs are kept apart from the user's files
        (namespaces where the machine allows them; see engine/sandbox/isolation.py).
        Raises :class:`IsolationError` when ``VERIFIER_TUI_SANDBOX`` asks for
        what cannot be had."""
        if self._isolation is None:
            self._isolation = choose_isolation()
        return self._isolation

    @property
    def isolation_chosen(self) -> Isolation | None:
        """The sandbox its runs are kept apart in, once asked for (None: not yet): read without a probe."""
        return self._isolation

    def keep_isolation(self, chosen: Isolation) -> None:
        """Runs kept apart as ``chosen``, asked once by a command for all its sessions: each asking
        again could be told otherwise a moment later (a probe with no process slot to spare, a bwrap
        too busy to answer) and end the command with the runs already done unreported."""
        self._isolation = chosen

    def limits(self) -> Any:
        """The task's limits and the sandbox's paths, as its runs get them
        (:class:`~verifier_tui.engine.sandbox.view.Limits`), with the network
        a view gives them."""
        from verifier_tui.engine.invocation import workspace_laid
        from verifier_tui.engine.sandbox.cgroup import applied
        from verifier_tui.engine.sandbox.network import given
        from verifier_tui.engine.sandbox.view import limits_for, task_workdir

        test_sh = self.task.test_sh  # (a step's own where it has one: Harbor runs that one)
        tests_dir = test_sh.parent if test_sh else self.task.tests_dir
        limits = limits_for(self.task, workspace_laid(tests_dir, task_workdir(self.task))[0])
        if self.isolation.kind != NAMESPACE:
            return limits
        network = given(limits.network, self.options.network)
        return replace(limits, network_given=network, cgroup=applied(limits.memory_mb, limits.cpus))

    @property
    def mode(self) -> str:
        return "server" if self.response is not None else "harbor"

    @property
    def timeout_s(self) -> float:
        """--timeout, else task.toml's (both checked to be finite and more than
        0 where they are read: cli.py, engine/task/config.py), else the default."""
        if self.options.timeout is not None:
            return self.options.timeout
        return self.task.config.timeout_sec or DEFAULT_TIMEOUT_S

    @property
    def harbor_gives_up_s(self) -> float | None:
        """task.toml's timeout_sec when Harbor stops the verifier before it runs
        (0 or less, NaN); None with --timeout, which overrides it as a job's
        override_timeout_sec does."""
        return self.task.config.verifier.gives_up_at_once if self.options.timeout is None else None

    def interpreter(self) -> Any:
        """What ``--python`` is (:meth:`Options.interpreter`), asked within the task's timeout."""
        return self.options.interpreter(self.timeout_s)

    @property
    def task_runner(self) -> OwnRunner | None:
        """The task's own runner when the session runs it (``--runner task``, ``R``); None: verifier-tui's."""
        return self.task.own_runner if self.runner == "task" else None

    def task_notices(self) -> list[str]:
        """The notes on the task as a whole, as every case of it runs with the
        session's verifier and runner: the task's (its task.toml, rows, cases/),
        the verifier's, and which runner runs and what the sandbox would run.
        The one list ``run``, each case of ``test``, ``test``'s task header and
        the pytest plugin's TaskNote start from, so they never disagree."""
        return [
            *self.task.notices(),
            *verifier_notices(self.task, self.verifier),
            *runner_notices(self.task.own_runner, self.runner),
            *self._steps_notices(),
            *self.given_notices(),
        ]

    def given_notices(self) -> list[str]:
        """What every run of the task is given that Harbor's sandbox would not give it, or would take
        from elsewhere: task_data.json beside task.toml, a ``${VAR}`` of the task's env filled here."""
        config = self.task.config
        return [
            *self._root_data_unseen(),
            # a replay's values are filled already, never from the user's environment
            *([] if config.env_final else filled_from_shell(config.env, config.env_sources, self.options.env)),
        ]

    def _steps_notices(self) -> list[str]:
        """The note on a multi-step task's steps (:func:`steps_notices`); none on a
        replay, the trial's step, whose plan lays the step's tests over tests/ listed or not."""
        if self.options.replay:
            return []
        if not self.dropped_step:
            linked = step_tests_unused(self.task.root, self.step)
            return [*steps_notices(self.task.config, self.step), *([linked] if linked else []), *self._stood_in()]
        kept = self.verifier
        # the user's pick from the dropped step's own tests, kept: the run is that file, not the task's
        if kept is None or not kept.is_relative_to(self.task.root / "steps"):
            return steps_notices(self.task.config, self.step, dropped=self.options.step)
        ran = kept.relative_to(self.task.root).as_posix()
        return steps_notices(self.task.config, self.step, dropped=self.options.step, kept=ran)

    def _stood_in(self) -> list[str]:
        """A file of tests/ the user named that the step's own tests ship too: /tests holds the
        step's (Harbor uploads them last), so that one runs, which the header alone left unsaid."""
        picked = self._picked
        if not self._verifier_named or picked is None:
            return []
        ran = self._as_staged(picked)
        if ran == picked:
            return []
        root, inside = self.task.root, picked.relative_to(self.task.tests_dir).as_posix()
        return [
            Advice(  # "under step NAME" in the TUI, whose S chooses the step as --step does
                f"the verifier you named, {picked.relative_to(root).as_posix()}, is /tests/{inside}: under ",
                STEP_NAMED,
                f" {self.step} that is the step's own {ran.relative_to(root).as_posix()} (Harbor uploads the step's "
                "tests over tests/), which runs in its place",
            )
        ]

    def notices(self, run: RunResult | None = None) -> list[str]:
        """The session's notes; with ``run``, as they stand for that run of the
        session's choices, whose response may be its own (each mode of
        --both-modes): whether the case's expected.json judges it is the run's."""
        out = self.task_notices()
        rows = self.task.rows
        if self.case is None and self.task_data is None:
            default_task_data(self.task.root, self.task.tests_dir, out)  # one that leads out of the task is said
            if rows is not None and rows.rows:
                out.append(no_row_chosen(rows))
        if self.case is not None:
            # That the case names no row is beside the point once other task data is chosen.
            own_data = self.task_data == self.case.task_data and self.task_id == self.case.task_id
            out += [
                Advice(f"case {self.case.name}: ", p)
                for p in self.case.problems
                if own_data or p != self.case.names_no_row
            ]
        if self.task_id is not None and self.rows_problems[0] == self.task_data:
            out += self.rows_problems[1]
        note = self._expectation_note(run.inputs.response if run is not None else self.response)
        if note is not None:
            out.append(note)
        return out

    def _root_data_unseen(self) -> list[str]:
        """Task data taken from ``task_data.json`` beside task.toml (verifier-tui's own place for it)
        by a case without its own: Harbor uploads tests/ alone, and the shim passes
        ``/tests/task_data.json`` only (harbor-trials.md), so a sandbox's verify never gets it. Not
        for a replay, whose plan passes what the shim passes."""
        root = self.task.root / "task_data.json"
        if self.options.replay or self.task.rows is not None or self._step_default_data() != root:
            return []  # a parameterized task's rendered tasks each get their row's fields
        shipped = self.task.tests_dir / "task_data.json"
        harbor = step_task_data(self.task, self.step, shipped if untrusted.present(shipped) else None)
        gets = "{}" if harbor is None else f"the data of {harbor.relative_to(self.task.root).as_posix()}"
        return [
            "task_data.json beside task.toml is verifier-tui's own: a case without its own task data takes "
            f"it, but Harbor uploads tests/ alone and test.sh passes /tests/task_data.json, so in a sandbox "
            f"verify gets {gets} as task_data (put the file in tests/ for the sandbox to see it)"
        ]

    def expectation_note(self) -> str | None:
        """Why the case's expected.json does not judge the current choices, or
        None when it does. An expectation is about the case's own inputs: once
        the workspace, the response or the task data is another, "failed" would
        be noise."""
        return self._expectation_note(self.response)

    def _expectation_note(self, response: ResponseSource | None) -> str | None:
        case = self.case
        if case is None or case.expected is None:
            return None
        changed = _inputs_changed(case, case.response, self.workspace, response, self.task_data, self.task_id)
        if not changed:
            return None
        # A response the case never had is not "its response ... not in use": there was none.
        added = case.response is None and "response" in changed
        gone = [what for what in changed if not (added and what == "response")]
        why = [f"its {' and '.join(gone)} {'is' if len(gone) == 1 else 'are'} not in use"] if gone else []
        if added:
            why.append("the case has no response: its expected.json is for a run without one")
        note = f"the case's expected.json is not applied: {'; '.join(why)}"
        if "task data" in changed:
            note += f"; verify gets {self._task_data_words()}"
        return note

    def _task_data_words(self) -> str:
        if self.task_data is None:
            return "task_data = {}"
        if self.task_id is not None:
            return f"the row {self.task_id!r} of {self.task_data.name}"
        return f"{self.task_data.name} as task_data"

    @property
    def setup(self) -> tuple[str | None, Path | None]:
        """The step and the verifier chosen now, as :attr:`RunResult.setup` records a run's."""
        return self.step, self.verifier

    def ran_case_inputs(self, ran: RunInputs) -> bool:
        """Whether ``ran`` (a run's inputs, or a spec about to run) is its case
        with the case's own inputs (as choosing the case, or running all cases,
        gives them): only such a run says how the case goes. A run of the case
        with another workspace, a typed response or other task data says nothing
        about the case. Without its response (--no-response, m) it is not the
        case's either: the one rule of :meth:`expectation_note` and the header."""
        case = self.task.case(ran.case) if ran.case is not None else None
        if case is None:
            return False
        return not _inputs_changed(case, case.response, ran.workspace, ran.response, ran.task_data, ran.task_id)

    # -- runs --------------------------------------------------------------

    def spec(self, explain_only: bool = False) -> RunSpec:
        if self.case is not None and self.case.unreadable is not None:
            # Nothing of the case is known: running it would run the verifier on an empty /app and print a
            # verdict of no case, where test says the case was not run. Refused, as reading it once was.
            raise DiscoveryError(self.case.unreadable)
        return self._spec(explain_only)

    def _spec(self, explain_only: bool = False) -> RunSpec:
        if self.verifier is None:
            from verifier_tui.engine.task.discovery import no_verifier_message

            raise DiscoveryError(no_verifier_message(self.task))
        return RunSpec(
            task=self.task,
            verifier=self.verifier,
            case=self.case.name if self.case else None,
            workspace=self.workspace,
            response=self.response,
            task_data=self.task_data,
            expected=self.case.expected if self.case and self.expectation_note() is None else None,
            python=self.options.python,
            timeout_s=self.timeout_s,
            harbor_gives_up_s=self.harbor_gives_up_s,
            nemo_gym=self.options.nemo_gym,
            explain_only=explain_only,
            task_id=self.task_id,
            runner=self.task_runner,
            env=self.options.env,
            network=self.options.network,
            coverage=self.options.coverage,
            extra_tests=step_tests(self.task.root, self.step),
            step=self.step,
        )

    def spec_for_case(self, case: Case) -> RunSpec:
        """The spec that runs ``case`` with the session's verifier and options: without its
        response under --no-response, as ``test --no-response`` says it runs (the TUI's marks
        ask for the case's own response: :meth:`ran_case_inputs`)."""
        return replace(
            self._spec(),
            case=case.name,
            workspace=case.workspace,
            response=None if self.options.no_response else case.response,
            task_data=case.task_data,
            task_id=case.task_id,
            expected=case.expected,
        )

    def stage_for(self, spec: RunSpec) -> Stage:
        """One staged layout per workspace, reused so re-runs copy only changes.
        A layout that a run is using right now is never handed out again: runs
        of cases in parallel (``test``) each get their own, even when they share
        a workspace (or have none)."""
        scratch = self._scratch()
        pool = self._stages.setdefault((spec.workspace, spec.explain_only), [])
        free = [stage for stage in pool if id(stage) not in self._busy]
        if self.warm is not None:  # the stage whose held run is this one
            free = self.warm.order(spec, free, room=len(pool) < 2)
        if free:
            return free[0]
        idle = (
            next(
                (
                    (key, st)
                    for key, others in self._stages.items()
                    if key[1] == spec.explain_only
                    for st in others
                    if id(st) not in self._busy
                ),
                None,
            )
            if self.recycle_stages
            else None
        )
        if idle is not None:  # its prepare() puts this spec's workspace in place
            key, stage = idle
            others = self._stages[key]
            others.remove(stage)
            if not others and others is not pool:
                # Its workspace's key goes with its last stage: a job's trials
                # each have a workspace of their own, and every run looked
                # through the keys of all those before it.
                del self._stages[key]
            pool.append(stage)
            return stage
        stage = scratch.new_stage(self.isolation)
        stage.follow(self._live)
        pool.append(stage)
        return stage

    def _claim(self, spec: RunSpec) -> Stage:
        stage = self.stage_for(spec)
        self._busy.add(id(stage))
        return stage

    def _release(self, stage: Stage) -> None:
        self._busy.discard(id(stage))

    def prepare(self, spec: RunSpec | None = None) -> Prepared:
        spec = spec or self.spec()
        return prepare(spec, self.stage_for(spec))

    def next_sequence(self) -> int:
        self.sequence += 1
        return self.sequence

    def run(self, spec: RunSpec | None = None, *, trigger: str = "start") -> RunResult:
        """One run, blocking (the headless ``run``, the pytest plugin: no
        asyncio needed): the steps of a :class:`Run`, in line."""
        with Run(self, spec or self.spec(), trigger) as run:
            if run.staged():
                run.go()
            return run.result()

    def keep_warm(self, again: bool = True) -> None:
        """From now on runs start held (:mod:`verifier_tui.engine.warm`):
        with ``again``, after each :meth:`arun` the next run of its stage is
        started ahead and waits (the faces that re-run on every save:
        ``watch``, the TUI); and a run given a ``gate`` (``test``) starts held
        once staged, so that at its turn it only has to go."""
        if self.warm is None:
            from verifier_tui.engine.warm import WarmRuns

            self.warm = WarmRuns(self._claim, self._release, again, self.options.preload)

    async def arun(
        self,
        spec: RunSpec | None = None,
        *,
        trigger: str = "start",
        on_output: Callable[[str, str, Callable[[str], str]], None] | None = None,
        on_explain: Callable[[Explanation], None] | None = None,
        gate: asyncio.Semaphore | None = None,
    ) -> RunResult:
        """One run from asyncio (the TUI, ``watch``, ``test``): the steps of
        :meth:`run`, those that block in threads (the runner in one of its
        own, :func:`~verifier_tui.engine.process.in_a_thread`), with what only
        asyncio has. ``on_output(stream, text, user_paths)`` gets live output
        as written, in the run's own thread (quick and thread-safe);
        ``user_paths(text)`` shows the user's paths for the scratch copy's, to
        be called only on what is shown (on a flood it costs more than
        reading). ``on_explain`` gets the runner's explanation as soon as it
        is written, on the event loop. ``gate`` (``test``) is held only while
        the runner runs; where warm runs are kept, the runner is started held
        while it waits for its turn. Cancelling the awaiting task ends the
        child and everything it started before the cancellation propagates."""
        import asyncio
        from contextlib import nullcontext

        from verifier_tui.engine.to_the_end import to_the_end

        spec = spec or self.spec()
        if self.warm is not None:
            await self.warm.settle()
        result: RunResult | None = None
        with Run(self, spec, trigger) as run:
            # Staging goes on in its thread if we are cancelled: the stage is
            # handed back only once it is done (never to a run staging into it too).
            ready = await to_the_end(asyncio.to_thread(run.staged))
            # Staged ahead of its turn (test), it may have found the scratch full of what a case before it
            # wrote, which goes as that case's result is collected: staged again at its turn.
            again = not ready and gate is not None and room.short(room.free(run.stage.root))
            if ready or again:
                early = None
                if ready and run.held is None and gate is not None and self.warm is not None:
                    early = run.waiting = await self.warm.hold(run.prepared)  # started while it waits for its turn
                watcher = asyncio.ensure_future(_wait_for_explain(run.prepared, on_explain)) if on_explain else None
                try:
                    async with gate if gate is not None else nullcontext():
                        if again:
                            ready = await to_the_end(asyncio.to_thread(run.staged))
                        if early is not None:
                            self.warm.take(run.stage)
                        if ready and (early is None or await to_the_end(asyncio.to_thread(run.staged, early))):
                            try:
                                await in_a_thread(partial(run.go, on_output))
                            except NoThread as exc:  # that run's start failed, as a runner's own can: the others go on
                                run.done = not_started(run.prepared.argv, exc.__cause__ or exc)
                        if gate is not None and room.short(room.free(run.stage.root)):
                            # The scratch is full: what this run wrote goes (Run.result) before the next case
                            # goes, or it finds no room for its reward.
                            result = await to_the_end(asyncio.to_thread(run.result))
                finally:
                    if watcher is not None:
                        watcher.cancel()
            if result is None:
                result = await to_the_end(asyncio.to_thread(run.result))
        if self.warm is not None and run.done is not None:
            self.warm.after(spec)
        return result

    def explain(self, spec: RunSpec | None = None) -> Explanation:
        """The runner's ``--explain`` for the current choices, or for ``spec``
        (an explain-only one; verify is not called)."""
        spec = spec or self.spec(explain_only=True)
        prepared = self.prepare(spec)
        if prepared.start_error or prepared.shim_refusal:
            return Explanation(error=prepared.start_error or prepared.shim_refusal)
        # The document comes in its file (a task's own runner may write it on
        # stdout, which is captured whole up to this size: cut at the usual
        # 256 KiB, a sys.path of 3,000 entries gave no explanation).
        with leased_cpus(prepared) as cpus:
            done = run_process(
                prepared.argv,
                cwd=prepared.cwd,
                env=prepared.env,
                timeout_s=spec.timeout_s,
                cap_bytes=EXPLAIN_CAP_BYTES,
                marker=prepared.marker,
                init_lists_strays=prepared.stage.namespace,
                runner_over=prepared.runner_over,
                attach=prepared.attached,
                cpus=cpus,
            )
        from verifier_tui.engine.sandbox.containment import settle

        # The runner's own exit, as a run reads it (in the view, through its
        # init: a signal N comes as the status 128 + N), for what no document says.
        settled = settle(prepared.stage, prepared.guard, done)
        found = read_explain(prepared) or read_explain(prepared, done.stdout.text)
        return found or no_explanation(prepared, done, settled.returncode, settled.signal, settled.start_error)

    # -- watching ----------------------------------------------------------

    def follow_changes(self, live: bool) -> None:
        """A watcher is now in place (or gone): while one is, it hands every
        change to :meth:`note_change`, and the copy sandbox copies only what
        changed. (Changes made before it was in place are not known: the next
        staging walks the whole workspace once.)"""
        self._live = live
        for stage in self._all_stages():
            stage.follow(live)

    def note_own_writes(self, paths: list[str]) -> None:
        """The user's files that changed while a run went on (the copy sandbox), as they are now."""
        for path in paths:
            self._own_writes[Path(path)] = _look(path)

    def own_writes(self, paths: frozenset[Path]) -> frozenset[Path]:
        """Those of ``paths`` that are as a run of this session left them (``LiveRuns._less_its_own``)."""
        return frozenset(p for p in paths if p in self._own_writes and _look(str(p)) == self._own_writes[p])

    def note_change(self, change: Any) -> None:
        """What the watcher saw (a :class:`~verifier_tui.engine.changes.Change`),
        for the copies of the workspace to follow."""
        for stage in self._all_stages():
            stage.note(change.paths | change.quiet, change.recreated)
        # A file written in the task's or the chosen case's folder changes its mtime, part of what a rename of
        # it is known by where the file system has no inode generation (_folder_identity): the folders still
        # where they were are taken as they are now.
        if self._task_folder is not None and self.task.root.is_dir():
            self._task_folder = _folder_identity(self.task.root)
        if self.case is not None and self._case_folder is not None and self.case.folder.is_dir():
            self._case_folder = _folder_identity(self.case.folder)

    def _all_stages(self) -> list[Stage]:
        return [stage for pool in self._stages.values() for stage in pool]

    def watch_targets(self) -> list[Any]:
        """What the watcher watches: what a run reads (:meth:`run_inputs`), and
        the task's cases folder, whose case folders, expected.json files and
        responses the case list follows (``LiveRuns.on_change``)."""
        from verifier_tui.engine.changes import WatchTarget

        targets = self.run_inputs()
        # No run reads an instruction.md, but Harbor refuses the task while one is missing
        # (engine/task/loading.py): a step renamed or its folder moved back is seen as it happens, not at the next save.
        # Nor the task's .gitignore, but Harbor refuses the task while it cannot read it.
        targets += [
            WatchTarget(i, i.relative_to(self.task.root).as_posix(), folder=False)
            for i in [*self._instructions(), *self._gitignore()]
        ]
        # nor solution/ or a step's folder, but a link in one that leads out of the task makes Harbor refuse it
        # (one that is a link itself is not followed: it may lead to $HOME, where every save would be a change)
        targets += [
            WatchTarget(d, d.relative_to(self.task.root).as_posix(), folder=True, beside=True)
            for d in self._inputs()
            if not d.is_symlink()
        ]
        if self.task.root != self.task.tests_dir:  # a bare folder of verifiers has no cases
            targets.append(WatchTarget(self.cases_folder, "cases", folder=True))
            # its rows, which t offers and whose problems are said, whether or not a run reads one
            targets.append(WatchTarget(self.rows_file, TASKS_FILE, folder=False))
        # and the task's folders the links of those or of tests/ lead to, which Harbor checks too (tests/shared
        # a link to environment/shared, where a link out is then one it refuses): each in the task, none a
        # link, and none sharing a folder with one watched already: the OS watch names a folder it reaches
        # twice by the route it took last (tests/ a link to environment/tests: saves named by the latter ran nothing)
        watched = [Path(os.path.realpath(t.path)) for t in targets if t.folder is not False and t.path.is_dir()]
        for linked in self._linked():
            real = Path(os.path.realpath(linked))
            if not any(real.is_relative_to(w) or w.is_relative_to(real) for w in watched):
                targets.append(
                    WatchTarget(linked, linked.relative_to(self.task.root).as_posix(), folder=True, beside=True)
                )
        return _dedupe(targets)

    @property
    def rows_file(self) -> Path:
        return self.task.root / TASKS_FILE

    @property
    def cases_folder(self) -> Path:
        return self.task.root / "cases"

    def feeds_a_run(self, paths: Any) -> bool:
        """Whether a change to any of ``paths`` changes what a run of the current choices reads."""
        inputs = [(target.path, target.folder is not False) for target in self.run_inputs()]
        return any(_under(path, folder, whole) for path in paths for folder, whole in inputs)

    def changes_every_case(self, paths: Any) -> bool:
        """Whether a change to any of ``paths`` changes what every case's run
        reads (the tests folder, the verifier, task.toml), or whether Harbor
        loads the task at all (a step's folder or instruction.md), so that no
        case's last verdict says how it goes now."""
        shared = [(self.task.tests_dir, True), (self.task.root / "task.toml", True), *self._step_tests()]
        if self.verifier is not None:
            shared.append((self.verifier, True))
        read = any(_under(path, folder, whole) for path in paths for folder, whole in shared)
        return read or self._changes_steps(paths)

    def defines_cases(self, paths: Any) -> bool:
        """Whether a change to any of ``paths`` may change the task's cases
        (:func:`defines_a_case`) or its rows (tasks.jsonl)."""
        return any(path == self.rows_file or defines_a_case(self.cases_folder, path) for path in paths)

    def run_inputs(self) -> list[Any]:
        """What a change to re-runs on: the tests folder, the workspace, the
        response and task data files, task.toml (and a dataset verifier)."""
        from verifier_tui.engine.changes import WatchTarget

        # A folder even while it is missing: taken as a file, tests/ made later was watched as one,
        # and the verifier then written in it ran nothing.
        targets = [WatchTarget(self.task.tests_dir, "tests", folder=True)]
        # The step's own tests, named as its folder is (a save there is not one of tests/).
        targets += [
            WatchTarget(d, d.relative_to(self.task.root).as_posix(), folder=kept) for d, kept in self._step_tests()
        ]
        if self.workspace is not None:
            targets.append(WatchTarget(self.workspace, "workspace"))
        if self.response is not None and self.response.path is not None:
            targets.append(WatchTarget(self.response.path, "response"))
        if self.task_data is not None:
            targets.append(WatchTarget(self.task_data, "task data"))
        toml = self.task.root / "task.toml"
        # Watched whether or not it exists now (its folder is): one removed and
        # written again, or written for the first time, is read and runs.
        if toml.is_file() or self.task.root != self.task.tests_dir:
            targets.append(WatchTarget(toml, "task.toml"))
        if self.verifier is not None and not self.verifier.is_relative_to(self.task.tests_dir):
            targets.append(WatchTarget(self.verifier, "verifier"))
        return _dedupe(targets)

    def _inputs(self) -> list[Path]:
        """The folders whose links Harbor checks (``Task._validate_input_paths``) beside tests/:
        solution/ and each step's folder, whether or not they exist now (none without a task.toml)."""
        if not (self.task.root / "task.toml").is_file():
            return []
        return [self.task.root / "solution", *(self.task.root / "steps" / s.name for s in self.task.config.steps)]

    def _linked(self) -> list[Path]:
        """The task's folders the links of its input folders lead to (``TaskConfig.linked``)."""
        return [self.task.root / folder for folder in self.task.config.linked]

    def _instructions(self) -> list[Path]:
        """The instruction.md of each step, or the task's (none without a task.toml, which Harbor's refusals need)."""
        if not (self.task.root / "task.toml").is_file():
            return []
        steps = [self.task.root / "steps" / step.name for step in self.task.config.steps]
        return [folder / "instruction.md" for folder in steps or [self.task.root]]

    def _gitignore(self) -> list[Path]:
        """The task's .gitignore, which Harbor reads for the task's digest as it builds a job's lock:
        read by no run, watched for whether Harbor would refuse it (none without a task.toml)."""
        return [self.task.root / GITIGNORE] if self._instructions() else []

    def _step_tests(self) -> list[tuple[Path, bool]]:
        """The step's own tests folder, staged over tests/ (none without a step),
        whether or not it exists now: it is part of /tests as tests/ is (Harbor
        uploads steps/<name>/tests over it), so one made or removed changes the task.
        A replay's is its trial step's, which the plan lays over tests/ whether
        or not task.toml lists it now. With it, whether what lies in it counts:
        not for one there but not the task's (a link out of the task, or to
        nothing: never laid over tests/), which is watched by its own name
        only (a watch of the folder went through the link, to $HOME perhaps,
        and every save there started a run); the link made a folder is seen."""
        name = self.step if self.step is not None else self.options.replay_step
        if name is None:
            return []
        return [step_tests_folder(self.task.root, name)]

    @property
    def dropped_step(self) -> bool:
        """``--step`` named a step that task.toml, read again since, no longer has."""
        return self.options.step is not None and self.step is None and not self.options.replay

    def changes_the_task(self, paths: Any) -> bool:
        """Whether a change to any of ``paths`` may change the task's shape
        (verifiers, test.sh, settings, whether Harbor loads it): task.toml, tests/,
        the step's own tests, a step's folder, an instruction.md."""
        folders = [(self.task.tests_dir, True), *self._step_tests()]
        return any(
            p.name == "task.toml" or any(_under(p, f, whole) for f, whole in folders) for p in paths
        ) or self._changes_steps(paths)

    def _changes_steps(self, paths: Any) -> bool:
        """Whether a change to any of ``paths`` may change whether Harbor loads the task
        (:func:`~verifier_tui.engine.task.loading.as_harbor_loads`): a step's folder or an
        instruction.md made, removed or made a folder, the task's .gitignore saved, or a link in
        solution/, a step's folder or a folder of the task their links or tests/'s lead to
        (``TaskConfig.linked``). Harbor asks that they exist (``Task._validate_tests``), are no folder,
        and that the task's own is UTF-8 text (``read_text()``): a save of the instruction's text
        changes nothing otherwise. The folders linked are followed as they are now, a change of them
        being none of the task's (Harbor's answer is the same): ``LiveRuns`` then watches anew."""
        instructions = self._instructions()
        touched = any(i.is_relative_to(p) for p in paths for i in instructions)
        if touched and self._steps_layout() != self._steps_read:
            return True
        # an instruction or .gitignore saved, or a link in solution/, a step's folder or one linked made or
        # removed (read by no run): only a change of Harbor's refusal counts
        changed = touched or any(
            p.is_relative_to(d) for p in paths for d in [*self._inputs(), *self._linked(), *self._gitignore()]
        )
        if not changed:
            return False
        now = read_task_config(self.task.root)
        self.task.config = replace(self.task.config, linked=now.linked)
        return now.refused != self.task.config.refused

    def read_by_no_run(self, paths: Any) -> bool:
        """Whether every one of ``paths`` is an instruction.md, the task's .gitignore, or lies in
        solution/, a step's folder or a folder of the task linked from the input folders, not in a
        step's tests (a run of that step reads them): watched only for whether Harbor loads the task
        (:meth:`_changes_steps`), read by no run."""
        instructions = {*self._instructions(), *self._gitignore()}
        inputs = self._inputs()
        # a step's tests are laid over tests/; a folder named tests in a linked one is nobody's
        steps_tests = [d / "tests" for d in inputs]
        watched = all(
            p in instructions
            or (
                any(p.is_relative_to(d) for d in [*inputs, *self._linked()])
                and not any(p.is_relative_to(t) for t in steps_tests)
            )
            for p in paths
        )
        return watched and not self.feeds_a_run(paths)

    def _steps_layout(self) -> tuple[tuple[bool, bool, bool], ...]:
        """Whether each step's folder and its instruction.md exist, as Harbor's ``exists()`` asks, and
        whether the instruction is a folder, which the task's ``read_text()`` refuses."""
        return tuple((i.parent.exists(), i.exists(), i.is_dir()) for i in self._instructions())

    def _verifier_after_reload(self, verifier: Path | None) -> Path | None:
        """The verifier chosen before the task was read again, as the task is now."""
        asked = self.options.step
        if verifier is not None and asked is not None and self.dropped_step and not self._verifier_named:
            # --step chose the step's own verifier, not the user: with the step gone from task.toml, /tests
            # is tests/ alone (Harbor has no such step to lay over it), and the verifier is chosen there.
            verifier = None if verifier.is_relative_to(self.task.root / "steps" / asked) else verifier
        verifier = self._as_staged(verifier) if verifier is not None else None
        if verifier is not None and (verifier in self.task.verifiers or verifier.is_file()):
            return verifier  # the user's choice, even with verify gone: the runner says what is wrong
        return self._default_verifier(strict=False)

    def reload_task(self) -> None:
        """Re-read task.toml, the verifiers and the cases (after a change to them),
        keeping the current choices where they still exist."""
        before = self.case or self._gone_case
        # the user's pick as named (a step's file may have shadowed it, and the step may be gone now)
        verifier = self._picked if self._verifier_named else self.verifier
        workspace, response, task_data, task_id = self.workspace, self.response, self.task_data, self.task_id
        # Re-read from the verifier file the task was opened as, when it was: that
        # file decides which folder is staged as /tests (discovery.resolve).
        opened = self.task.initial_verifier
        root = self.task.root
        renamed = _renamed_to(root, self._task_folder) if not root.is_dir() else None
        if renamed is not None:
            # The task's folder renamed (mv hello-file hello-world) is the same task under its new name: what
            # was chosen in it follows it, as a case renamed does (below).
            def follow(path: Path) -> Path:
                return renamed / path.relative_to(root) if path.is_relative_to(root) else path

            opened = follow(opened) if opened is not None else None
            verifier = follow(verifier) if verifier is not None else None
            self._picked = follow(self._picked) if self._picked is not None else None
            named = Path(self._picked_as).absolute() if self._picked_as is not None else None
            if named is not None and named.is_relative_to(root):
                # The user's words named the file by its old path: read again as they are, they would take
                # whatever is later made there (a checkout of the old name), not the file renamed with the task.
                self._picked_as = str(follow(named))
            workspace = follow(workspace) if workspace is not None else None
            task_data = follow(task_data) if task_data is not None else None
        if opened is None or not opened.is_file():
            opened = (renamed or root) if (renamed or root).is_dir() else self.task.tests_dir
        self.task = self._as_step(resolve(opened))
        self._task_folder = _folder_identity(self.task.root)
        self._steps_read = self._steps_layout()
        if self._verifier_named:
            verifier = self._repick(verifier)
        self.verifier = self._verifier_after_reload(verifier)
        self.case = self.task.case(before.name) if before is not None else None
        if before is not None and self.case is None and self._case_folder is not None:
            # Its folder renamed (mv cases/correct cases/right) is the same folder under its new name: chosen
            # still, as an editor's file list follows a file renamed, not dropped to no case on a gone workspace.
            self.case = next((c for c in self.task.cases if _same_folder(c.folder, self._case_folder)), None)
        if self.case is not None:
            self._case_folder = _folder_identity(self.case.folder)
        self._gone_case = before if before is not None and self.case is None else None
        if before is not None and self.case is not None:
            # What the case gave follows the case as it is now (a workspace that
            # stopped being a folder is none, a case folder back is its inputs
            # again); what the user chose instead stays.
            now = self.case
            if workspace == before.workspace:
                workspace = now.workspace
            if _same_response(response, None if self.options.no_response else before.response):
                response = None if self.options.no_response else now.response
            if task_data == before.task_data and task_id == before.task_id:
                task_data, task_id = now.task_data, now.task_id
        self.workspace, self.response, self.task_data, self.task_id = workspace, response, task_data, task_id
        if self.task.own_runner is None:
            self.runner = "ours"  # the task stopped shipping one

    @uninterrupted
    def close(self) -> None:
        if self.warm is not None:
            self.warm.close()
        if self.scratch is not None:
            self.scratch.close()
            self.scratch = None
        self._stages.clear()
        self._busy.clear()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def scratch_folder(self) -> Path:
        """The session's private scratch folder, made on first use (a watcher
        ignores it: every run writes there)."""
        return self._scratch().root

    def _scratch(self) -> Scratch:
        if self.scratch is None:
            self.scratch = Scratch()
        return self.scratch


def _under(path: Path, folder: Path, whole: bool) -> bool:
    """Whether ``path`` is ``folder`` or, where what lies in it counts (``whole``), in it."""
    return path == folder or (whole and path.is_relative_to(folder))


def _renamed_to(folder: Path, identity: _Identity | None) -> Path | None:
    """The name the folder that was ``folder`` (``identity``) has now in the
    same parent folder, if it was renamed there; None if it is not there."""
    if identity is None:
        return None
    try:
        with os.scandir(folder.parent) as entries:
            for entry in entries:  # the inode is in the folder's own listing: a stat only for a likely one
                if entry.inode() == identity[1] and _same_folder(Path(entry.path), identity):
                    return Path(entry.path)
    except OSError:
        return None
    return None


#: A folder's device, inode, mtime and inode generation (None where it cannot be had): :func:`_folder_identity`.
_Identity = tuple[int, int, int, int | None]


def _same_folder(folder: Path, identity: _Identity) -> bool:
    """Whether ``folder`` is the folder once known as ``identity``: the same
    device and inode, and the same generation where both are known, else the
    same mtime. A folder made unreadable meanwhile (``chmod 311``) cannot be
    opened for its generation: matched on device and inode alone, a folder
    made on the inode of a removed one was taken for it."""
    now = _folder_identity(folder)
    if now is None or now[:2] != identity[:2]:
        return False
    if now[3] is not None and identity[3] is not None:
        return now[3] == identity[3]
    return now[2] == identity[2]


#: FS_IOC_GETVERSION, ``_IOR('v', 1, long)`` (linux/fs.h): an inode's generation number.
_GET_GENERATION = (2 << 30) | (struct.calcsize("l") << 16) | (ord("v") << 8) | 1


def _folder_identity(folder: Path) -> _Identity | None:
    """What tells a folder renamed from another folder: its device and inode,
    and its inode's generation, None once gone. A rename keeps all three. The
    inode alone is not enough: ext4 gives the inode of a folder removed to
    the next one made (``rm -rf cases/a; mkdir cases/b``, as a git checkout
    does), with a generation of its own (as NFS tells a file handle gone
    stale). The folder's mtime, which a rename keeps too, is the stand-in
    where the file system has no generation (tmpfs, which never reuses an
    inode at once), and where the folder cannot be opened for its generation
    (kept beside it for that): a file saved in the folder in the watcher's
    batch of the rename changes it, and the folder is then said gone, not followed."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        try:  # a folder that cannot be opened (not readable) is still known by what stat says
            found = folder.stat()
        except OSError:
            return None
        return found.st_dev, found.st_ino, found.st_mtime_ns, None
    try:
        found = os.fstat(fd)
        try:
            generation = struct.unpack("l", fcntl.ioctl(fd, _GET_GENERATION, bytes(struct.calcsize("l"))))[0]
        except OSError:
            generation = None
        return found.st_dev, found.st_ino, found.st_mtime_ns, generation
    finally:
        os.close(fd)


class Run:
    """One run of a session, in the steps both faces take (docs/architecture.md,
    "One run pipeline"): a stage claimed with the run it holds, started ahead;
    :meth:`staged`, :meth:`go`, :meth:`result`; on exit, the stage handed back
    and a held run that did not go ended."""

    prepared: Prepared
    held: Held | None

    def __init__(self, session: Session, spec: RunSpec, trigger: str) -> None:
        self.session, self.spec, self.trigger = session, spec, trigger
        self.sequence = session.next_sequence()
        self.stage = session._claim(spec)
        self.waiting: Waiting | None = session.warm.take(self.stage) if session.warm is not None else None
        self.done: ProcessResult | None = None

    def staged(self, early: Waiting | None = None) -> bool:
        """Stage the run, the run its stage holds told to go if it is this one
        (else ended); or, at its turn, take ``early``, the run held while it
        waited for it (:func:`~verifier_tui.engine.warm.at_its_turn`).
        Whether the runner can start."""
        if early is None:
            self.prepared, self.held = prepare_held(self.spec, self.stage, self.waiting)
        else:
            self.prepared, self.held = at_its_turn(early, self.spec)
        return not (self.prepared.start_error or self.prepared.shim_refusal)

    def go(self, on_output: Any = None, cancel: Any = None) -> None:
        """Run the runner to its end (``on_output``: see :meth:`Session.arun`;
        ``cancel``: see :func:`~verifier_tui.engine.process.run_process`)."""
        held = self.held
        try:
            self._go(on_output, cancel)
            went_on = held is None or held.read_its_go()
        finally:
            if held is not None:
                held.read_its_go()  # asked once: closes what it kept, whatever happened
        if not went_on:
            # The runner started ahead ended before it read its go: killed at its timeout while it still
            # imported what --preload names, or a module it imported ended its interpreter (os._exit, a
            # crash), or something killed it. What it left is no run of the verifier; Harbor, which
            # preloads nothing, would run it, so it runs cold.
            if self.done is not None and self.done.timed_out:
                why = " (it was still importing what --preload names when its timeout came)"
            elif self.session.options.preload:
                why = " (a module --preload imported may have ended its interpreter)"
            else:
                why = ""
            self.prepared, self.held = prepare(self.spec, self.stage), None
            self.prepared.notices.append(
                f"the run started ahead ended before it began the run{why}: the run was started again, cold"
            )
            self._go(on_output, cancel)

    def _go(self, on_output: Any, cancel: Any) -> None:
        prepared, held = self.prepared, self.held
        user_paths = partial(map_paths, path_map=prepared.path_map)

        def live(stream: str, text: str) -> None:
            on_output(stream, text, user_paths)

        prepared.room_before = room.free(prepared.stage.root)
        with leased_cpus(prepared, held) as cpus:
            self.done = run_process(
                prepared.argv,
                cwd=prepared.cwd,
                env=prepared.env,
                timeout_s=self.spec.timeout_s,
                on_output=live if on_output is not None else None,
                cancel=cancel,
                marker=prepared.marker,
                before_kill=prepared.before_kill,
                init_lists_strays=prepared.stage.namespace,
                runner_over=prepared.runner_over,
                memory_limit=prepared.memory_limit,
                memory_extra=prepared.memory_extra,
                held=held,
                attach=prepared.attached,
                cpus=cpus,
            )

    def result(self) -> RunResult:
        """The run's result, from what it left (one that could not start says why)."""
        result = collect(self.prepared, self.done, trigger=self.trigger, sequence=self.sequence)
        if room.short(room.free(self.stage.root)):
            self.stage.let_go()
        if result.user_files_written:
            self.session.note_own_writes(result.user_files_written)
        return result

    def __enter__(self) -> Run:
        return self

    def __exit__(self, *exc: object) -> None:
        waiting = self.waiting
        if waiting is not None and not waiting.held.over:  # another run, not staged, or cancelled before it went
            if self.session.warm is not None:
                self.session.warm.take(self.stage)
            waiting.end()
        self.session._release(self.stage)


def _look(path: str) -> tuple[int, int, int, int] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _inputs_changed(
    case: Case,
    case_response: ResponseSource | None,
    workspace: Path | None,
    response: ResponseSource | None,
    task_data: Path | None,
    task_id: str | None,
) -> list[str]:
    """Which of ``case``'s inputs (its response being ``case_response``) these
    are not: "workspace", "response", "task data"."""
    changed = []
    if workspace != case.workspace:
        changed.append("workspace")
    if not _same_response(response, case_response):
        changed.append("response")
    if task_data != case.task_data or task_id != case.task_id:
        changed.append("task data")
    return changed


def _same_response(a: ResponseSource | None, b: ResponseSource | None) -> bool:
    if a is None or b is None:
        return a is b
    return a.path is not None and a.path == b.path and a.kind == b.kind


def _dedupe(targets: list[Any]) -> list[Any]:
    out: list[Any] = []
    for target in targets:
        if any(target.path.is_relative_to(other.path) and other.path.is_dir() for other in out):
            continue
        out.append(target)
    return out


async def _wait_for_explain(prepared: Prepared, on_explain: Callable[[Explanation], None]) -> None:
    """Hand the runner's explain document over as soon as it is written (it
    is written just before verify is called, so the resolution shows while a
    slow verifier is still running)."""
    import asyncio

    path = prepared.stage.inputs_dir / EXPLAIN_FILE
    while True:
        if path.exists():
            data = read_explain(prepared)
            if data is not None:
                on_explain(data)
                return
        await asyncio.sleep(0.02)


def _edited(before: user_files.Snapshot) -> bool:
    """Whether anything under ``before``'s roots changed since, as the watcher would have seen it:
    an editor's swap file, backup or probe, a cache (:func:`~.filters.is_noise`, judged as the
    watcher judges it, relative to the root it lies under) is not a change of what a run reads."""
    for path in user_files.written(before):
        root = next((r for r in before.roots if path == r or path.startswith(r + os.sep)), path)
        if not is_noise(Path(path).relative_to(root).parts):
            return True
    return False
