"""A pytest plugin: the cases of verifier-tui as test items.

    pytest --verifier-cases=tasks/            every case with an expected.json, of every task below
    pytest --verifier-cases=tasks/ -n 4       the same, with pytest-xdist
    pytest --verifier-cases=jobs/<job>/       every trial of a Harbor job, replayed: <job folder>::<trial>
    pytest --verifier-cases=jobs/<job>/ --verifier-stand-in empty
                                              the same, with an empty /app where a trial captured none
                                              (or --verifier-workspace DIR, --verifier-case NAME)

Always ``--verifier-cases=PATH``, one word: pytest reads its settings
before any plugin is loaded, and takes a PATH given apart for a test path,
reading the ini file of a task there (which may switch this plugin off and
have the task's ``conftest.py`` imported here). A path in a task given to
pytest itself (``TASK::CASE``) has that file read either way; a task's ini
file so read is refused once this plugin is loaded.

Installed with the package (the ``pytest11`` entry point in pyproject.toml),
it is off until ``--verifier-cases`` is given: without it, this module adds
the options below and does nothing else (it imports nothing of verifier-tui's
engine, never Textual, and collects nothing). With it, each case is one item
named ``<task folder>::<case>`` (the folder from the rootdir, as pytest names
a file), collected by :func:`verifier_tui.engine.suite.collect`
and run through the same engine as ``verifier-tui test`` (so ``-k``, ``--lf``,
``--junitxml``, ``-x`` and xdist's ``-n`` work on cases as on any test); a
case fails when its run does not match its ``expected.json``, and the report
is what ``verifier-tui run`` prints about that run. A trial of a Harbor job
passes when its replay ends as its sandbox did, as ``verifier-tui test JOB``
has it. When ``--verifier-cases``
is given and the command line names no test paths, only the cases are
collected (not ``testpaths`` or the current folder), unless it comes from the
ini file's ``addopts``: there it adds the cases to every run.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import stat
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr

    from verifier_tui.engine.advice import Action
    from verifier_tui.engine.session import Options
    from verifier_tui.engine.suite import Collection, TaskCases

PLUGIN_NAME = "verifier-tui-cases"


@functools.cache
def plugin_words() -> dict[str, str]:
    """What the engine suggests with an option of the command line that this
    plugin has not, by the action's kind (the engine's modules are imported
    only once a sentence is worded). A kind not listed (pdb's, the editor's)
    keeps the command line's words."""
    from verifier_tui.engine import advice

    return {
        advice.PYTHON_OPTION.kind: "--verifier-python EXE",
        advice.CASE_OPTION.kind: "--verifier-case",
        advice.VERIFIER_OPTION.kind: "verifier-tui test TASK --verifier",
        advice.STEP_NAMED.kind: "verifier-tui test TASK --step",
        advice.STAND_IN.kind: "; give --verifier-workspace DIR, --verifier-case NAME or --verifier-stand-in empty",
        advice.CHOOSE_VERIFIER.kind: "the plugin tests one verifier a task (verifier-tui test TASK --verifier FILE "
        "chooses one)",
        advice.GIVE_TASK.kind: "give it to verifier-tui test JOB --task DIR (the plugin takes none)",
        advice.NEMO_GYM_COPY.kind: "name a copy of nemo_gym/verifiers to verifier-tui run TASK --nemo-gym DIR (the "
        "plugin takes none)",
        # The plugin always runs verifier-tui's runner and takes no row nor response: the command that does.
        advice.TASK_RUNNER.kind: "verifier-tui test PATH --runner task",  # a task's, or a trial's replay
        advice.OUR_RUNNER.kind: "(verifier-tui's runner, which the plugin runs, shows it)",
        advice.CHOOSE_ROW.kind: "choose a row with verifier-tui run TASK --task-id ID",
        # As the command line's, it opens the parenthesis that the list of task ids closes.
        advice.CHOOSE_ROW_OR_NONE.kind: "choose one with verifier-tui run TASK --task-id ID (",
        advice.GIVE_RESPONSE.kind: "give one to verifier-tui run TASK --response FILE",
    }


def _plugin_words(action: Action) -> str:
    from verifier_tui.engine.advice import with_its_command

    # An option of the command line's, given with its value: the plugin has none, so the command that does.
    return with_its_command(action) or plugin_words().get(action.kind, action.flag)


def said(sentence: str) -> str:
    """An engine sentence in this plugin's words (its options, or what to run instead)."""
    from verifier_tui.engine.advice import worded

    return worded(sentence, _plugin_words)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("verifier-tui", "verifier-tui: the cases of verifier tasks as tests")
    group.addoption(
        "--verifier-cases",
        action="append",
        default=[],
        metavar="PATH",
        dest="verifier_cases",
        help="collect every case with an expected.json of the task PATH, or of every task below the "
        "folder PATH, as items named <task folder>::<case> (may be repeated); write --verifier-cases=PATH: "
        "given apart, pytest reads a task's ini file there (its settings, read before this plugin); a path in a "
        "task given to pytest too (TASK::CASE) has it read either way, and a task's ini so read is refused",
    )
    group.addoption(
        "--verifier-python",
        default="python3",
        metavar="EXE",
        dest="verifier_python",
        help="the interpreter that runs the verifiers' runner (default: python3 on PATH, as test.sh would)",
    )
    group.addoption(
        "--verifier-timeout",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        dest="verifier_timeout",
        help="overrides each task.toml's [verifier] timeout_sec",
    )
    group.addoption(
        "--verifier-workspace",
        default=None,
        metavar="DIR",
        dest="verifier_workspace",
        help="a Harbor job or trial: this folder stands in for /app where a trial did not capture it",
    )
    group.addoption(
        "--verifier-case",
        default=None,
        metavar="NAME",
        dest="verifier_case",
        help="a Harbor job or trial: the task's case NAME stands in for /app where a trial did not capture it",
    )
    group.addoption(
        "--verifier-stand-in",
        choices=("empty",),
        default=None,
        dest="verifier_stand_in",
        help="a Harbor job or trial: an empty /app (an agent that wrote nothing) where a trial did not capture it",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """Before pytest reads a ``conftest.py`` near the paths it is given:
    once ``--verifier-cases`` names a Harbor job or trial, a path in a
    Harbor trial (``jobs/j/<trial>/artifacts/app``, which narrows the run to
    that trial) is no place to read one, its captured /app being the agent's
    work: pytest imported the agent's ``conftest.py`` there at start-up, here,
    outside any sandbox, before any other hook could skip or refuse it. Such a
    path is left out of that search alone (pytest_configure narrows by it or
    refuses it).

    The same for a path in a task given (``tasks/hello-file::correct``,
    ``tasks/hello-file``, which narrow the run to the task or its case):
    pytest reads the ``conftest.py`` of its ``test*`` folders too, so the
    task's ``tests/conftest.py``, written for the sandbox, was imported here.

    Left with no path that exists (none given, each left out, or an id as
    pytest printed it, ``hello-file::correct`` from in the task), pytest
    searches the current folder instead: run in a task (``cd tasks/t &&
    pytest --verifier-cases . cases/correct``, or from its ``tests/``) that
    imported the task's ``tests/conftest.py`` all the same. There pytest is
    given a path that lies in no task as well, and never falls back to it.

    Wherever the search starts (:func:`_search_starts`: a path given, the
    ini's ``testpaths``, the current folder), it reads the ``conftest.py`` of
    each ``test*`` folder there: a task named ``test-x`` in a folder of
    tasks, or ``testpaths = tasks/*``, had the task's imported too. Such a
    start is given as the ``conftest.py`` files pytest may read there
    (:func:`_searched_safely`)."""
    known = early_config.known_args_namespace
    given = getattr(known, "verifier_cases", None)
    if not given:
        return
    if getattr(known, "pyargs", False):
        # pytest resolves each name to a folder itself and reads the conftest.py files there (a task's, of task
        # folders that are packages) before any hook could leave them out: only file paths are checked here.
        raise pytest.UsageError(
            "--pyargs: not with --verifier-cases: pytest would import a task's conftest.py files here, outside "
            "the sandbox; give the task's folder to --verifier-cases=PATH instead"
        )
    _refuse_a_tasks_settings(early_config)
    from verifier_tui.engine.task.target import find_harbor_folder

    base = early_config.invocation_params.dir
    harbor = True  # a path given that cannot be looked up: its trials are left out, as a job's are
    with contextlib.suppress(OSError):
        harbor = any(find_harbor_folder(base / Path(one)) for one in given if one)

    def plugins_alone(arg: str) -> bool:
        return _in_a_given_task(base, given, arg) or (harbor and _in_a_trial(base / arg.split("::")[0]))

    kept = [arg for arg in known.file_or_dir if not plugins_alone(str(arg))]
    starts = _search_starts(early_config, kept)
    searched = [str(one) for start in starts for one in _searched_safely(start, plugins_alone)]
    # Left with none, this module's own file: in no task, no conftest.py beside it, and a file has no test*
    # folders (an empty list, pytest would search the current folder).
    known.file_or_dir = list(dict.fromkeys(searched)) or [__file__]


def _refuse_a_tasks_settings(config: pytest.Config) -> None:
    """pytest's settings from an ini file in a task (or a Harbor trial) given to ``--verifier-cases``,
    unless chosen with ``-c`` typed for this run: refused. pytest looks for
    them from the paths it is given, before any plugin is loaded, and then
    takes the path after
    ``--verifier-cases`` for one (``pytest --verifier-cases tasks/evil`` reads
    ``tasks/evil/pytest.ini``): the task author's ``addopts`` wrote where they
    chose (``--junitxml``, ``--log-file``) and their ``pythonpath`` and ``-p``
    imported what they chose. Refused here, before anything is collected or
    written; what pytest imported before this plugin was loaded, no plugin can
    stop, so the sentence says how to keep pytest's settings the user's."""
    ini = config.inipath
    # Even one that sets nothing ([pytest] alone): it makes the task pytest's rootdir, so the user's conftest.py
    # above it is not read and pytest's cache is written into the task.
    if ini is None or _typed(config, "-c", "--config-file"):
        return
    from verifier_tui.words.paths import here

    where = Path(os.path.abspath(ini)).parent
    base = config.invocation_params.dir
    given = config.known_args_namespace.verifier_cases
    # A file in a Harbor trial is the agent's; one whose nearest task (at or above it) is, or lies in, a path
    # given to --verifier-cases is the task author's, however pytest reached it (a folder of tasks given and
    # tasks/evil::correct, or run from in the task). A task-shaped folder that merely holds the paths given
    # (the user's own repo, with a tests/test.sh of its own) holds the user's settings.
    if _in_a_trial(where) or _nearest_task_given(base, given, where):
        raise pytest.UsageError(
            f"{here(ini, config.invocation_params.dir)}: pytest's settings came from this file of a task, its "
            "author's (pytest finds them from the folder it runs in and the paths given, the one after "
            "--verifier-cases too, before verifier-tui is loaded: the file's pythonpath and -p plugins may have "
            "run already); write --verifier-cases=PATH as one word and run from outside the task, or choose your "
            "own settings with -c FILE"
        )


def _nearest_task_given(base: Path, given: list[str], where: Path) -> bool:
    """Whether the nearest task at or above ``where`` is, or lies in, what a
    path given to ``--verifier-cases`` names: the task it is or lies in (its
    ``tests/``, a case, a verifier file), else the path itself (a folder of
    tasks); by their paths (a link in a folder given leads to a task pytest
    reaches through that folder, wherever it leads) and resolved. A
    task-shaped folder that merely holds the paths given (the user's own
    repo, with a ``tests/test.sh`` of its own) is the user's."""
    from verifier_tui.engine.task.kinds import looks_like_task
    from verifier_tui.engine.task.target import classify_task

    with contextlib.suppress(OSError):
        task = next((folder for folder in [where, *where.parents] if looks_like_task(folder)), None)
        if task is None:
            return False
        owners = [classify_task(base / one).root or Path(os.path.abspath(base / one)) for one in given if one]
        return any(_is_or_holds(owner, task) or _is_or_holds_unresolved(owner, task) for owner in owners)
    return False


def _is_or_holds_unresolved(given: Path, folder: Path) -> bool:
    """Whether the folder ``given`` is ``folder`` or holds it, by their paths (links not followed)."""
    return folder == given or given in folder.parents


def _search_starts(config: pytest.Config, args: list[str]) -> list[Path]:
    """Where pytest 8's start-up search for ``conftest.py`` begins
    (``Config._decide_args``, then ``_set_initial_conftests``), given
    ``args``: each that exists (an id's path, before its ``::``); given none,
    the ini's ``testpaths`` (globbed) when run from the rootdir; else, or
    when none exists, the current folder."""
    import glob

    base = config.invocation_params.dir
    if not args and base == config.rootpath:
        args = [one for path in config.getini("testpaths") for one in sorted(glob.glob(path, recursive=True))]
    starts = [Path(os.path.abspath(base / arg.split("::")[0])) for arg in args]
    return [start for start in starts if _exists(start)] or [base]


def _exists(path: Path) -> bool:
    """Whether ``path`` exists; one the system cannot look up (a long option read as a path) does not."""
    try:
        return path.exists()
    except OSError:
        return False


def _searched_safely(start: Path, plugins_alone: Any) -> list[Path]:
    """What pytest's start-up search may be given for ``start`` so that it
    reads no ``conftest.py`` of a folder that is the plugin's alone (a task
    given, a Harbor trial): ``start`` itself when none is in reach; for a
    start in such a folder, the nearest ``conftest.py`` outside it (the
    user's, above the task, which pytest reads from there up as before); for
    a folder whose ``test*`` folders include one (pytest reads each's
    ``conftest.py``), its own nearest and those of its other ``test*``
    folders."""
    if plugins_alone(str(start)):
        outside = next((folder for folder in start.parents if not plugins_alone(str(folder))), None)
        return _nearest_conftest(outside)
    if not start.is_dir():
        return [start]
    with contextlib.suppress(OSError):
        tests = [one for one in start.glob("test*") if one.is_dir()]  # as pytest's _try_load_conftest globs
        if any(plugins_alone(str(one)) for one in tests):
            others = [one / "conftest.py" for one in tests if not plugins_alone(str(one))]
            return _nearest_conftest(start) + [one for one in others if one.is_file()]
    return [start]


def _nearest_conftest(folder: Path | None) -> list[Path]:
    """The ``conftest.py`` in ``folder`` or nearest above it, as a start of
    pytest's search: pytest reads each from its confcutdir down to it."""
    for one in [] if folder is None else [folder, *folder.parents]:
        if (one / "conftest.py").is_file():
            return [one / "conftest.py"]
    return []


def _in_a_given_task(base: Path, given: list[str], arg: str) -> bool:
    """Whether the path ``arg`` names (a test id's folder, ``a::b`` of
    ``a::b::correct`` when that is the folder) is or lies in a task given to
    ``--verifier-cases`` (:func:`_nearest_task_given`): the plugin's alone."""
    parts = arg.split("::")
    paths = [Path(os.path.abspath(base / "::".join(parts[:cut]))) for cut in range(len(parts), 0, -1)]
    with contextlib.suppress(OSError):
        where = next((path for path in paths if path.exists()), None)
        return where is not None and _nearest_task_given(base, given, where)
    return False


def pytest_configure(config: pytest.Config) -> None:
    paths = config.getoption("verifier_cases")
    if not paths:
        return
    if config.args_source is not pytest.Config.ArgsSource.ARGS and _on_the_command_line(config):
        config.args = []  # only the cases were asked for: not testpaths, not the current folder
    chosen = {arg: found for arg in config.args if (found := _case_id(config, arg)) is not None}
    config.args = [arg for arg in config.args if arg not in chosen]
    # As pytest narrows a run to a folder given as an argument, a folder narrows the cases (VerifierCases).
    folders = [arg for arg in config.args if (config.invocation_params.dir / arg).is_dir()]
    plugin = VerifierCases(config, paths, chosen, folders)
    # An id as pytest printed it whose folder is no path (a name written with escapes, tasks/x\ny::correct):
    # the plugin's, as the id of a folder is. A folder that is one is left to the folders' rule above: a trial
    # given alone is named by its job's folder, which may hold the user's own tests too (tests/<trial>).
    printed = {arg: one for arg in config.args if arg not in folders and (one := plugin.printed_id(arg)) is not None}
    plugin.chosen.update(printed)
    # A task's (job's) own folder, or one inside it, is the plugin's alone: pytest collecting it too would run
    # the task's tests/test_*.py here, outside the sandbox they are written for.
    config.args = [arg for arg in config.args if arg not in plugin.task_folders and arg not in printed]
    plugin.refuse_the_agents(config.args)
    config.pluginmanager.register(plugin, PLUGIN_NAME)


def _on_the_command_line(config: pytest.Config) -> bool:
    """Whether ``--verifier-cases`` was typed for this run, not set for every
    run in the ini file's ``addopts`` (or ``PYTEST_ADDOPTS``): there it adds
    the cases to the run, and a plain ``pytest`` still runs ``testpaths``
    (they were silently left out, and the user's own tests never ran)."""
    return _typed(config, "--verifier-cases")


def _typed(config: pytest.Config, *options: str) -> bool:
    """Whether one of ``options`` was typed on the command line (``--name
    VALUE``, ``--name=VALUE``, ``-cVALUE``), not set in an ini file's ``addopts``."""
    return any(
        arg == option or arg.startswith(option + "=" if option.startswith("--") else option)
        for arg in config.invocation_params.args
        for option in options
    )


def _case_id(config: pytest.Config, arg: str) -> tuple[str, list[str]] | None:
    """``<task folder>::<case>`` as the summary printed it (a folder, then
    names), as that folder and the names: pytest refuses names after a folder,
    so such an argument is this plugin's to choose cases with. The folder is
    the longest part before a ``::`` that is one (a task folder ``a::b`` has
    ids ``a::b::correct``); None for any other argument (a folder itself)."""
    if (config.invocation_params.dir / arg).is_dir():
        return None
    parts = arg.split("::")
    for cut in range(len(parts) - 1, 0, -1):
        where = "::".join(parts[:cut])
        if (config.invocation_params.dir / where).is_dir():
            return where, parts[cut:]
    return None


def _is_or_holds(given: Path, folder: Path) -> bool:
    """Whether the folder ``given`` is ``folder`` or holds it, links followed."""
    where, inside = os.path.realpath(given), os.path.realpath(folder)
    return inside == where or inside.startswith(where.rstrip(os.sep) + os.sep)


def node_path(config: pytest.Config, folder: Path) -> str:
    """The path part of a test id: the folder relative to the rootdir, as
    pytest's own ids for files are (``FSCollector``), so that pytest, which
    prints an id relative to where it runs (``cwd_relative_nodeid``), prints a
    path that exists and that it takes back. A folder outside the rootdir:
    its absolute path, which pytest prints relative to where it runs too
    (pytest's own, relative to the path given, would print one that does not
    exist). The rootdir itself (a task with its own pytest.ini): its name,
    not ``.``, which named nothing in ids and JUnit's classname; pytest
    prints it as a path from where it runs (``sum-column`` in the task,
    ``../sum-column`` below it), and ``printed_id`` takes it back."""
    from verifier_tui.words.text import one_id

    where = Path(os.path.abspath(folder))
    try:
        part = where.relative_to(config.rootpath).as_posix()
    except ValueError:
        part = where.as_posix()
    if part == "." and where.name:
        part = where.name
    return one_id(part)  # a test id stays on its line, in UTF-8, and in XML


def task_id(config: pytest.Config, group: Any, folder: Path | None = None) -> str:
    """A collector's id: its task's (job's) folder as :func:`node_path` has it,
    then, when another verifier of the task is collected beside this one, the
    verifier in the task (``tasks/two::tests/other.py``), as ``verifier-tui
    test`` names it (``TaskCases.id``): each verifier's cases had the same ids
    (``tasks/two::correct`` twice). Never the verifier's path itself
    (``tasks/two/tests/other.py``), which pytest, given it back, would import
    here, outside the sandbox: this id's path part is the task's folder."""
    from verifier_tui.words.text import one_id

    apart = group.verifier_apart
    return node_path(config, group.folder if folder is None else folder) + (f"::{one_id(apart)}" if apart else "")


def _before_any_run(collection: Collection, options: Options, listing_only: bool) -> tuple[str | None, str | None]:
    """What stops every case and trial before any runs, in one usage line (None: nothing): the
    options', no case's, said once as the commands say it. The sandbox is chosen here once for
    every case; where none can be had, each case fails with the line. Second: the copy sandbox's
    words when it is the one chosen (its runs can write the user's files), else None."""
    session = next((g.session for g in collection.groups if g.session is not None and g.cases), None)
    # A job's trials have no session until replayed: their interpreter is the option's (as test JOB checks it).
    jobs = any(g.session is None and g.cases for g in collection.groups)
    error = session.interpreter().error if session is not None else options.interpreter().error if jobs else None
    if error is not None:  # one --verifier-python for every task
        return f"--verifier-python {error}", None
    if collection.runnable and not listing_only:
        from verifier_tui.engine.sandbox.isolation import COPY, IsolationError, choose

        try:  # one sandbox for every case and trial, asked once: no later probe can fail some of them
            chosen = choose()
        except IsolationError:
            # Each case says it as it runs: a usage error would run none of the session's own tests
            # and leave the last --junitxml report in place, and under xdist crash every worker.
            return None, None
        collection.keep_isolation(chosen)
        return None, chosen.words if chosen.kind == COPY else None
    return None, None


class VerifierCases:
    """The collection of one pytest run, registered only when asked for."""

    def __init__(
        self, config: pytest.Config, paths: list[str], chosen: dict[str, tuple[str, list[str]]], folders: list[str]
    ) -> None:
        from verifier_tui.engine.session import Options
        from verifier_tui.engine.suite import CollectionError, TrialItem, collect

        base = config.invocation_params.dir
        if "" in paths:  # Path("") is the current folder: every task below it
            raise pytest.UsageError("--verifier-cases: an empty path: give a task, a folder of tasks or a Harbor job")
        options = Options(python=config.getoption("verifier_python"), timeout=config.getoption("verifier_timeout"))
        from verifier_tui.engine.sandbox.isolation import IsolationError, requested

        try:
            requested()  # a misspelt VERIFIER_TUI_SANDBOX: one line, as the commands say it
        except IsolationError as exc:
            raise pytest.UsageError(str(exc)) from None
        stand_in = _stand_in(config, base)
        try:
            self.collection: Collection = collect([base / Path(p) for p in paths], options, stand_in=stand_in)
        except CollectionError as exc:
            raise pytest.UsageError(f"--verifier-cases: {said(exc.args[0])}") from None
        if stand_in.words is not None and all(g.session is not None for g in self.collection.groups):
            self.collection.close()
            raise pytest.UsageError(
                "--verifier-workspace, --verifier-case and --verifier-stand-in stand in for "
                "/app in Harbor trials, and --verifier-cases names no Harbor job or trial"
            )
        problem, self.copy_sandbox = _before_any_run(self.collection, options, config.option.collectonly)
        if problem is not None:
            self.collection.close()
            raise pytest.UsageError(problem)
        from verifier_tui.engine.suite import warm_up

        workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))  # each runs its cases one at a time
        for group in self.collection.groups:
            warm_up(group, workers)
        self.stopped_by: int | None = None
        self.config = config
        #: The tasks and jobs by their collectors' ids, until --junitxml has their notes; the notes said
        self.tasks: dict[str, list[Any]] = {}
        for g in self.collection.groups:
            for _name, folder, _cases in _by_job(g):
                self.tasks.setdefault(task_id(config, g, folder), []).append(g)
        self.task_ids = frozenset(self.tasks)
        self.noted: set[str] = set()
        self.case_ran = False  # in the copy sandbox, what says so: only once a case ran there
        self.taken = self._stop_as_ctrl_c_does()
        from verifier_tui.words.text import one_id

        # The ids given as arguments (``tasks/hello-file::correct``), as test ids
        base = config.invocation_params.dir
        self.chosen = {
            arg: "::".join([node_path(config, base / where), *map(one_id, names)])
            for arg, (where, names) in chosen.items()
        }
        # The tasks (jobs) that a folder given as an argument is, holds or lies in (``tasks/hello-file``), as
        # test ids. A folder with none (the user's own tests/) narrows nothing: its tests run beside the cases.
        # A folder in a task's case (``tasks/hello-file/cases/correct``) narrows to that case alone, as
        # --verifier-cases given it (and `verifier-tui test`) tests that case: pytest runs a folder's tests.
        # Each collector's folder that is the plugin's alone, and the folder its id is named by: the same but
        # for a trial given alone, named by its job (the folder that holds it) yet owning only its own folder:
        # owning the job's made pytest ignore all of it, and the user's own tests beside the trial vanished.
        collected = [
            (_given(group, folder), folder) for group in self.collection.groups for _name, folder, _ in _by_job(group)
        ]
        collected += [(folder, folder) for folder in self.collection.without_cases]
        # Every case folder of a task, collected or not (one without expected.json, one --verifier-cases did
        # not name): its folder narrows to it, never to its whole task, and to nothing when it is not collected;
        # to each verifier's, when several of the task's are tested.
        case_folders: dict[Path, list[str]] = {}
        for group in self.collection.groups:
            for case in group.session.task.cases if group.session is not None else []:  # (a job's: its trials)
                case_folders.setdefault(case.folder, []).append(f"{task_id(config, group)}::{one_id(case.name)}")
        # A folder in a task's cases/ that is no case (``cases/.draft``) names a case that is not there: an id
        # of no case (its path below cases/, which no case's name holds), said not found; it ran the whole task.
        case_folders |= {
            base / arg: [f"{task_id(config, group)}::{one_id(os.path.relpath(base / arg, cases))}"]
            for group in self.collection.groups
            if group.session is not None
            for cases in [group.folder / "cases"]
            for arg in folders
            if _is_or_holds(cases, base / arg) and not _is_or_holds(base / arg, cases)
            if not any(_is_or_holds(case, base / arg) for case in case_folders)
        }
        #: The case folders given, by the ids each narrows to: said as an id of no case is, when none is collected.
        self.case_folders = {
            arg: ids
            for arg in folders
            if (ids := next((named for case, named in case_folders.items() if _is_or_holds(case, base / arg)), None))
        }
        # A trial's folder (or a folder in it) narrows its job to that trial, each of its steps, as a case's
        # folder narrows its task to the case: every trial of the job ran.
        trials: dict[Path, list[str]] = {}
        for group in self.collection.groups:
            for _name, job, items in _by_job(group):
                for item in items:
                    if isinstance(item, TrialItem):
                        trials.setdefault(item.trial.path, []).append(f"{node_path(config, job)}::{one_id(item.name)}")
        self.folders = [
            named
            for arg in folders
            for folder, named_by in collected
            if _is_or_holds(base / arg, folder) or _is_or_holds(folder, base / arg)
            for named in next(
                (ids for trial, ids in trials.items() if _is_or_holds(trial, base / arg)),
                self.case_folders.get(arg) or [node_path(config, named_by)],
            )
        ]
        #: The folders given that are a task (job) or lie in one: not pytest's to collect.
        self.task_folders = [arg for arg in folders if any(_is_or_holds(one, base / arg) for one, _ in collected)]
        self.owned = [Path(os.path.realpath(folder)) for folder, _named_by in collected]
        #: Whether a Harbor job or trial was given (its group has no session): no Harbor folder is pytest's.
        self.harbor = any(group.session is None for group in self.collection.groups)
        # Each task's (job's) id as pytest prints it from where it runs, and that id: a name written with
        # escapes (a line break, a bidi control: one_line) is no path, and the id is taken back by this alone.
        ids = [node_path(config, named_by) for _folder, named_by in collected]
        self.printed = {config.cwd_relative_nodeid(one): one for one in ids}

    def refuse_the_agents(self, args: list[str]) -> None:
        """A path left to pytest that lies in a Harbor trial, once a Harbor
        folder is given (``jobs/k/<trial>/artifacts/app``, a file in it): the
        agent's work, which pytest, given it, would collect and run here
        outside any sandbox (pytest_ignore_collect is never asked about a path
        given): refused, saying so, rather than run or dropped unsaid."""
        if not self.harbor:
            return
        from verifier_tui.words.text import one_line

        base = self.config.invocation_params.dir
        for arg in args:
            if _in_a_trial(base / arg.split("::")[0]):
                self.collection.close()
                raise pytest.UsageError(
                    f"{one_line(arg)}: in a Harbor trial, the agent's work: pytest would run it here, outside "
                    "any sandbox (give the trial to --verifier-cases to replay it)"
                )

    def printed_id(self, arg: str) -> str | None:
        """``arg``, an id as pytest printed it (``tasks/x\\ny::correct``, a task
        folder named with a line break), as the test id it names; None for
        any other argument. The task's part is the longest before a ``::``
        (a task folder ``a::b``), as :func:`_case_id` has it."""
        parts = arg.split("::")
        for cut in range(len(parts), 0, -1):
            task = self.printed.get("::".join(parts[:cut]))
            if task is not None:
                return "::".join([task, *parts[cut:]])
        return None

    def wanted(self, nodeid: str) -> bool:
        """Whether the arguments chose this collector or item (or none was chosen)."""
        node = nodeid + "::"  # a task above a chosen case, or a case below a chosen task
        ids = [one + "::" for one in [*self.chosen.values(), *self.folders]]
        return not ids or any(one.startswith(node) or node.startswith(one) for one in ids)

    def pytest_ignore_collect(self, collection_path: Path) -> bool | None:
        """A task's (job's) folder met while pytest collects a folder that
        holds it (``pytest --verifier-cases tasks tasks``, or ``.``) is this
        plugin's alone, as one given as an argument is: pytest would import its
        ``tests/test_*.py`` and verifiers, written for the sandbox, as test
        modules. So is, once a Harbor job or trial is given, any Harbor trial
        or job folder met (another job beside the one given, ``jobs/j .``): its
        captured /app is the agent's work, and its ``test_*.py`` would run
        here, outside any sandbox. Anything else is left to pytest (None: the
        user's own tests, and pytest's own rules, ``--ignore`` and
        ``collect_ignore``)."""
        if Path(os.path.realpath(collection_path)) in self.owned:
            return True
        if self.harbor and collection_path.is_dir() and _is_harbor_folder(collection_path):
            return True
        return None

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        ids = [item.nodeid for item in items]
        asked = {**{arg: [one] for arg, one in self.chosen.items()}, **self.case_folders}
        missed = [arg for arg, some in asked.items() if not any(_found(one, ids) for one in some)]
        if missed:  # as pytest says of a test it does not find
            raise pytest.UsageError(f"not found: {', '.join(missed)} (no such case under --verifier-cases)")

    def _stop_as_ctrl_c_does(self) -> list[tuple[int, Any]]:
        """SIGTERM (a CI job cancelled, ``timeout``) and SIGHUP (the terminal
        closed) stop the run as Ctrl+C does, so that pytest's teardown ends the
        runs and removes the scratch folder: Python's default died on the spot
        and left both behind, and in the copy sandbox what the verifier
        started. A signal with a handler already (nohup's) is left alone."""
        from verifier_tui.engine.to_the_end import cleaning_up

        def stop(signum: int, _frame: object) -> None:
            for taken, _before in self.taken:
                signal.signal(taken, signal.SIG_IGN)  # a second one waits for the clean-up
            self.stopped_by = signum
            if not cleaning_up():  # raised in a clean-up, it left the rest undone: the next case stops instead
                raise _stopped(signum)

        taken: list[tuple[int, Any]] = []
        for signum in (signal.SIGTERM, signal.SIGHUP):
            try:
                if signal.getsignal(signum) is signal.SIG_DFL:
                    taken.append((signum, signal.signal(signum, stop)))
            except ValueError:  # not the main thread: not ours to take
                break
        return taken

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> None:
        """As a case is about to run, the next one (of the same task) is
        started held: its interpreter starts while this one runs."""
        if self.stopped_by is not None:
            raise _stopped(self.stopped_by)
        if isinstance(nextitem, VerifierCase) and isinstance(item, VerifierCase) and nextitem.group is item.group:
            nextitem.start_ahead()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        report = yield
        if call.when == "call" and getattr(item, "ran", False):
            report.verifier_ran = True  # a plain field: xdist carries it back
        return report

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(self, collector: pytest.Collector) -> Any:
        report = yield
        if isinstance(collector, pytest.Session) and report.passed:
            from verifier_tui.words.text import one_id

            tasks: list[pytest.Collector] = []
            jobs: dict[str, VerifierTask] = {}
            for group in self.collection.groups:
                for name, folder, cases in _by_job(group):
                    nodeid = task_id(collector.config, group, folder)
                    # Trials of one job given apart (jobs/j/a jobs/j/b, or a trial and its job) are one
                    # collector of the job's id: one each made two nodes of one id, and a trial given twice
                    # ran twice under one id.
                    same = jobs.get(nodeid) if group.session is None else None
                    if same is not None:
                        same.parts.append((group, cases))
                        continue
                    # Names come from folders someone may have sent: a test id stays on its line.
                    task = VerifierTask.from_parent(
                        collector, name=one_id(name), nodeid=nodeid, path=folder, group=group, cases=cases
                    )
                    # -k takes the words of the id shown, as pytest's own nodes hold the folders of a test's path:
                    # a task named otherwise in task.toml (its node's name) is also its folder's.
                    task.extra_keyword_matches.add(nodeid)
                    if group.session is None:
                        jobs[nodeid] = task
                    tasks.append(task)
            tasks += [  # a task found without a case: one skipped test saying so, as `test` says it
                TaskWithoutCases.from_parent(
                    collector, name=one_id(folder.name), nodeid=node_path(collector.config, folder), path=folder
                )
                for folder in self.collection.without_cases
            ]
            report.result.extend(task for task in tasks if self.wanted(task.nodeid))
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """The notes of each task that a case reported on (of each job, what
        of its folder is no trial), once a task (a job), as ``--junitxml``'s
        properties of its suite, named by its id, as ``test --junit`` and
        ``test JOB --junit`` have them (a case passing with a note was green in CI
        with not a word). The suite's, not the case's (``user_properties``):
        under pytest's default junit_family, xunit2, a test case has no
        properties (pytest warns so of record_property). Said where reports
        arrive: under xdist, in the controller, which writes the file. A case
        whose verifier ran in the copy sandbox has the sandbox said too."""
        from _pytest.junitxml import xml_key

        parts = report.nodeid.split("::")
        # the task's id is the longest part before a ``::`` that is one (a task folder ``a::b``), as _case_id has it
        task = next(
            (one for cut in range(len(parts) - 1, 0, -1) if (one := "::".join(parts[:cut])) in self.task_ids), ""
        )
        xml = self.config.stash.get(xml_key, None)
        # Set by the case's own run (under xdist, a worker's, carried on its report): a case that failed before
        # its verifier ran (an expected.json cut short, a trial not replayed) ran nothing, as copy_warning has it.
        if task and getattr(report, "verifier_ran", False) and not self.case_ran:
            self.case_ran = True
            if xml is not None and self.copy_sandbox is not None:  # as test --junit's property
                xml.add_global_property("sandbox", self.copy_sandbox)
        if xml is None or report.when != "setup":
            return
        from verifier_tui.commands.report import task_notes
        from verifier_tui.words.text import one_line

        for group in self.tasks.pop(task, []):
            where = task_id(self.config, group)  # a folder of jobs: its notes said once, by the folder given
            for note in task_notes(group) if group.session is not None else _job_notes(group):
                value = f"{where}: {one_line(said(note))}"
                if value not in self.noted:  # (a job given twice, as a trial and as itself)
                    self.noted.add(value)
                    xml.add_global_property("note", value)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.stopped_by is not None:  # as verifier-tui test ends on one
            session.exitstatus = 128 + self.stopped_by

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        # The copy sandbox said after pytest's final line, as `verifier-tui test` says it after its summary: the
        # terminal summary hook comes before that line. (No reporter: -p no:terminal, or an xdist worker's.)
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if self.case_ran and self.copy_sandbox is not None and reporter is not None:
            reporter.write_line(self.copy_sandbox)
        self.collection.close()
        for signum, before in self.taken:
            signal.signal(signum, before)


def _job_notes(group: Any, trial: Any = None) -> list[str]:
    """What of a job's folder is no trial (a stray folder, a link), each on its line, as ``verifier-tui
    test JOB`` says it under its table: none for a job with no trial to replay (its error says them
    already) or a trial given alone. Of a folder of jobs, for ``trial``: its own job's and the folder's."""
    from verifier_tui.words.text import one_line

    if group.error is not None:
        return []
    found = getattr(group, "found", None)
    notes, of_jobs = getattr(found, "problems", ()), getattr(found, "problems_of", {})
    if trial is not None:
        others = {line for job, lines in of_jobs.items() if job != trial.path.parent.name for line in lines}
        notes = [note for note in notes if note not in others]
    return [one_line(note) for note in notes]


def _found(one: str, ids: list[str]) -> bool:
    """Whether an id asked for (a case, a task, a verifier of a task) is, or holds, one of ``ids``."""
    return any(n == one or n.startswith(one + "::") for n in ids)


def _stopped(signum: int) -> BaseException:
    """What stops the session (pytest says it in its ``!!! ... !!!`` line)."""
    return pytest.Session.Interrupted(f"{signal.Signals(signum).name}: stopped, as Ctrl+C stops it")


def _seconds(text: str) -> float:
    """``--verifier-timeout``: the command line's own rule (nan, inf, 0 and -1
    refused), imported only when the option is given."""
    from verifier_tui.commands.options import positive_seconds

    return positive_seconds(text)


def _stand_in(config: pytest.Config, base: Path) -> Any:
    """The stand-in for an uncaptured /app (at most one), as ``test JOB`` takes it."""
    from verifier_tui.engine.harbor.replay import StandIn

    workspace = config.getoption("verifier_workspace")
    stand_in = StandIn(
        workspace=(base / Path(workspace).expanduser()) if workspace else None,
        case=config.getoption("verifier_case"),
        empty=config.getoption("verifier_stand_in") == "empty",
    )
    too_many = stand_in.too_many("--verifier-workspace", "--verifier-case", "--verifier-stand-in empty")
    if too_many is not None:
        raise pytest.UsageError(too_many)
    if stand_in.workspace is not None and not stand_in.workspace.is_dir():
        raise pytest.UsageError(f"--verifier-workspace {workspace}: not a folder")
    return stand_in


def _by_job(group: Any) -> list[tuple[str, Path, list[Any]]]:
    """A group's collectors, their folders and their cases: a task is one, its
    cases ``<task folder>::<case>``; Harbor's trials are one per job, each
    ``<job folder>::<trial>``, whether given as the job, as Harbor's folder of
    jobs (its trials' names alone repeat where a job was copied) or as a trial
    alone (one id for one trial, whichever was given: ``--lf`` after a run of
    the job knows it). A trial's job folder is the folder that holds it."""
    from verifier_tui.engine.suite import JobTrials

    if not isinstance(group, JobTrials):
        return [(group.id, group.folder, group.cases)]
    jobs: dict[Path, list[Any]] = {}
    for item in group.cases:
        jobs.setdefault(item.trial.path.parent, []).append(item)
    named = [(group.name if job == group.folder else job.name, job, items) for job, items in jobs.items()]
    return named or [(group.name, group.folder, group.cases)]


def _given(group: Any, job: Path) -> Path:
    """The folder of ``job``'s collector that is the plugin's alone: the job's
    own (or a task's). A trial given alone (or a folder in it) is named by the
    folder that holds it (``job``), and owns that folder too when it is a
    Harbor job (:func:`_is_harbor_job`): owning only its own, pytest collected
    the job's other trials, and the agent's ``test_*.py`` in their captured
    /app ran here, outside any sandbox. Only a plain folder that holds the
    trial (the user's ``tests/``) is left to pytest beside it."""
    inside = group.folder != job and _is_or_holds(job, group.folder)
    return cast("Path", group.folder) if inside and not _is_harbor_job(job, group.folder) else job


def _is_harbor_folder(folder: Path | str) -> bool:
    """Whether ``folder`` is a Harbor trial or job by its files (the engine's
    :func:`~verifier_tui.engine.task.target.harbor_kind`); one that cannot
    be read is taken as one, as a job's listing takes it (``kind_within``):
    left to pytest, what it holds may be an agent's."""
    from verifier_tui.engine.task.target import kind_within

    return kind_within(Path(folder), "trial") is not None


def _is_trial(folder: Path) -> bool:
    """Whether ``folder`` is a Harbor trial by its files (one that cannot be read: not said to be)."""
    from verifier_tui.engine.task.target import harbor_kind

    try:
        return harbor_kind(folder) == "trial"
    except OSError:
        return False


def _in_a_trial(path: Path) -> bool:
    """Whether ``path`` is or lies in a Harbor trial folder."""
    where = Path(os.path.abspath(path))
    return any(_is_trial(folder) for folder in [where, *where.parents])


def _is_harbor_job(folder: Path, trial: Path) -> bool:
    """Whether the folder holding ``trial`` is a Harbor job: its own files
    (``job.log``, ``config.json``), or a Harbor folder beside the trial (a
    folder of trials, as ``harbor trial start`` writes, reads as a job)."""
    if _is_harbor_folder(folder):
        return True
    try:
        with os.scandir(folder) as entries:
            return any(
                entry.is_dir() and not _is_or_holds(Path(entry.path), trial) and _is_harbor_folder(entry.path)
                for entry in entries
            )
    except OSError:
        return True  # not listed: what it holds is unknown, so never pytest's


class VerifierTask(pytest.Collector):
    """One task (or job): its cases (trials), each an item."""

    def __init__(self, *, group: TaskCases, cases: list[Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        #: Each group's cases (trials) this collector holds: a job's trials given apart are groups of their own.
        self.parts: list[tuple[Any, list[Any]]] = [(group, cases)]

    def collect(self) -> list[pytest.Item]:
        from verifier_tui.engine.suite import error_is_a_test, not_judged
        from verifier_tui.engine.task.cases import case_order
        from verifier_tui.words.text import one_id

        items: dict[str, pytest.Item] = {}  # by name: a trial given twice (alone and in its job) is one item

        def add(item: pytest.Item) -> None:
            items.setdefault(item.name, item)

        for group, cases in self.parts:
            for case in cases:
                add(VerifierCase.from_parent(self, name=one_id(case.name), case=case, group=group))
            for name, problem in group.invalid:
                add(VerifierCase.from_parent(self, name=one_id(name), problem=problem, group=group))
            # A case no expected.json judges: a skipped test saying so, where the case is (`test` lists it after
            # the task's table); it was left out without a word. (None beside a task whose error is a test, as
            # in test.)
            for name, why in [] if error_is_a_test(group) else group.not_judged:
                item = NoCase.from_parent(self, name=one_id(name), path=group.folder / "cases" / name, kind="case")
                item.add_marker(pytest.mark.skip(reason=not_judged(why)))
                add(item)
        plugin = cast("VerifierCases", self.config.pluginmanager.get_plugin(PLUGIN_NAME))
        wanted = sorted(
            (item for item in items.values() if plugin.wanted(item.nodeid)), key=lambda item: case_order(item.name)
        )
        failing = next((group for group, _cases in self.parts if error_is_a_test(group)), None)
        if failing is not None:
            # an item that fails, not an error of collection: that stopped every other task's cases too; beside
            # the cases whose expected.json is unusable (the task's error was lost behind them)
            return [VerifierCase.from_parent(self, name="(task)", group=failing), *wanted]
        return wanted


class TaskWithoutCases(pytest.Collector):
    """A task found below a folder that has no case: one item, skipped, saying how to make one."""

    def collect(self) -> list[pytest.Item]:
        from verifier_tui.engine.suite import not_tested

        item = NoCase.from_parent(self, name="(task)")
        item.add_marker(pytest.mark.skip(reason=not_tested(self.path)))  # said at the task, not in this file
        return [item]


def shown_as(kind: str, nodeid: str) -> str:
    """An item's "domain", the head line of its failure: its id after a
    bracketed word, as pytest's doctests have ``[doctest] name``. pytest reads
    a domain that ends the line ``-v`` prints as a Python name and turns its
    dots into ``::`` (case ``v1.2`` was shown ``v1::2``, an id that names no
    test); it leaves one that starts with ``[`` as it is."""
    return f"[{kind}] {nodeid}"


class NoCase(pytest.Item):
    """An item never run, skipped saying why: a task without a case, or a case
    no expected.json judges (``kind`` "case")."""

    def __init__(self, *, kind: str = "task", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.kind = kind

    def runtest(self) -> None:
        """Never called: the item is skipped."""

    def reportinfo(self) -> tuple[Path, int | None, str]:
        from verifier_tui.words.text import one_id

        toml = self.path / "task.toml"  # where a skip is said: the task's file, line 1
        return Path(one_id(str(toml if toml.is_file() else self.path))), 0, shown_as(self.kind, self.nodeid)


class CaseMismatch(Exception):
    """A case's run did not match its expected.json (a trial's replay did not
    end as its sandbox did): ``result`` is the RunResult (the trial's session,
    its replay as ``last``)."""

    def __init__(self, result: Any) -> None:
        super().__init__()
        self.result = result


def trial_report(session: Any, replayed: Any) -> str:
    """What ``verifier-tui run TRIAL`` prints about this replay."""
    import io
    from contextlib import redirect_stdout

    from verifier_tui.commands.harbor import print_walkthrough

    text = io.StringIO()
    with redirect_stdout(text):
        print_walkthrough(session, replayed, word=said)
    return text.getvalue().rstrip("\n")


class TaskNote(UserWarning):
    """A note on a case's task (or a trial's job) as a whole, as ``verifier-tui test``
    says it under the task (``-W ignore::verifier_tui.pytest_plugin.TaskNote`` hides them)."""


class CaseNotRun(Exception):
    """A case that cannot be run: its expected.json, or its task, is unusable."""


class VerifierCase(pytest.Item):
    """One case of a task: runs the verifier on it and compares with its expected.json."""

    def __init__(self, *, group: TaskCases, case: Any = None, problem: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.group = group  # the task (the job's trials given) it is a case of, which runs it
        self.case = case
        self.problem = problem
        self.ran = False  # whether its verifier ran (a replay was tried): only then is the copy sandbox said

    def start_ahead(self) -> None:
        group = self.group
        if self.problem is not None or group.error is not None or group.session is None:
            return  # not run, or a trial (replays stay cold)
        from verifier_tui.engine.sandbox.isolation import IsolationError

        try:
            group.start_ahead(self.case)
        except (OSError, IsolationError):
            pass  # its own run will say why it cannot be staged, or why there is no sandbox to run in

    def runtest(self) -> None:
        # The task's notes are warned once the case's run is decided, never before: under -W error (or
        # filterwarnings = error, common in CI) a note raised before the run failed every case of the task
        # on a traceback through this plugin, its verdict never reached. What a CI user wants from -W error
        # is that a warning fails the build, not that it hides why a case failed: a failing case keeps its
        # verdict (the note, an error, is dropped: a mismatch's report says the run's notes), and a passing
        # case fails on the note, in one line that says it passed (repr_failure).
        try:
            self._run()
        except Exception:
            with contextlib.suppress(TaskNote):
                self._warn_notes()
            raise
        self._warn_notes()

    def _warn_notes(self) -> None:
        """What `verifier-tui test` says under the task's header (the sandbox
        runs the task's own runner, so this case may pass here and score
        nothing in Harbor): a failure's report says it among the run's notes,
        a case that passes said nothing. pytest's warnings summary lists them
        by note. A job's trials say what of its folder is no trial (a stray
        folder, a link), as ``verifier-tui test JOB`` says it under its table."""
        from verifier_tui.words.text import one_line

        group = self.group
        if group.session is None:
            for note in _job_notes(group, getattr(self.case, "trial", None)):
                warnings.warn_explicit(TaskNote(said(note)), None, one_line(str(group.folder)), 0)
            return
        from verifier_tui.commands.report import task_notes
        from verifier_tui.engine.untrusted import is_kind

        # Where each is said: the task's file, as a skip is (NoCase). pytest's summary has linecache read
        # the file a warning names, whole, whatever its line: a task.toml that is a link (to a FIFO, to
        # /dev/zero) held pytest for ever, so such a one is not named, the task's folder is.
        toml = group.folder / "task.toml"
        where = toml if is_kind(toml, stat.S_ISREG) else group.folder
        for note in task_notes(group):
            # (pytest's Node.warn needs a line, which a case has not.) Line 0, as NoCase.reportinfo has it:
            # linecache has no line 0; at line 1 pytest printed task.toml's first line raw under every
            # note, a planted terminal escape with it.
            warnings.warn_explicit(TaskNote(said(note)), None, one_line(str(where)), 0)

    def _run(self) -> None:
        """The case's run, raising when it is not run or does not pass."""
        from verifier_tui.engine.suite import not_run

        if self.problem is not None:
            raise CaseNotRun(not_run(self.problem))
        if self.group.error is not None:
            raise CaseNotRun(not_run(said(self.group.error)))
        from verifier_tui.engine.sandbox.isolation import IsolationError
        from verifier_tui.engine.suite import NotReplayed

        try:
            outcome = self.group.run(self.case, trigger="pytest")
        except IsolationError as exc:  # no sandbox to run in as things are (a probe that timed out)
            raise CaseNotRun(not_run(str(exc))) from None
        if isinstance(outcome, NotReplayed):
            raise CaseNotRun(f"not replayed: {said(outcome.why)}")
        replayed = getattr(outcome, "last", None)  # a trial's: its replay tried, or a reason it was not
        self.ran = replayed is None or replayed.local is not None
        if not self.group.passed(outcome):
            raise CaseMismatch(outcome)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> str | TerminalRepr:  # type: ignore[override]
        from verifier_tui.words.text import one_line

        error = excinfo.value
        if isinstance(error, TaskNote):  # the case passed; a warning made an error fails it (runtest)
            whose = (
                "the trial passed, but its job's" if self.group.session is None else "the case passed, but its task's"
            )
            why = f"{whose} note is an error here (-W error or filterwarnings): {error}"
            return self._failure(why, f"{self.nodeid}: {one_line(why)}")
        if isinstance(error, CaseNotRun):
            return self._failure(str(error), f"{self.nodeid}: {one_line(str(error))}")
        if isinstance(error, CaseMismatch):
            if self.group.session is None:  # a trial of a Harbor job: what `run TRIAL` prints
                from verifier_tui.words.trial import agreement_words, not_passed

                opened = error.result
                replayed = opened.last
                # in the words of test JOB --junit: how the two differ ("the replay did not end as the
                # sandbox's run did" said less), or why it was not replayed or compared
                word, sentence = agreement_words(replayed.agreement, replayed.skipped)
                why = not_passed(word, said(sentence))
                return self._failure(why, "\n".join([f"{self.nodeid}: {why}", trial_report(opened, replayed)]))
            from verifier_tui.commands.report import mismatch_title, result_lines

            lines = result_lines(self.group.session, error.result, word=said)
            text = "\n".join([f"{self.nodeid}: the run did not match the case's expected.json", *lines])
            return self._failure(mismatch_title(error.result, word=said), text)
        return super().repr_failure(excinfo)

    def _failure(self, why: str, text: str) -> TerminalRepr:
        """``text`` as pytest prints it, with ``why`` its one line: JUnit's
        failure message (what CI shows as its title, in the words of ``test
        --junit``) and the short summary's ``FAILED id - why``. Of the parts
        pytest-xdist carries back from a worker: a plain string loses the line.
        Both made plain, names' bytes that are not UTF-8 too (execnet cannot
        carry those: the run ended in an INTERNALERROR)."""
        from _pytest._code.code import ReprEntryNative, ReprExceptionInfo, ReprFileLocation, ReprTraceback

        from verifier_tui.words.text import one_id, plain_text

        # cut as the id is, so that ``test --junit``'s junit_name says a message alike
        where = ReprFileLocation(str(self.reportinfo()[0]), 0, one_id(why))
        return ReprExceptionInfo(
            reprtraceback=ReprTraceback([ReprEntryNative([plain_text(text) + "\n"])], None, "native"), reprcrash=where
        )

    def reportinfo(self) -> tuple[Path, int | None, str]:
        from verifier_tui.words.text import one_id

        folder = getattr(self.case, "folder", None) or self.group.folder
        kind = "trial" if self.group.session is None else "case"  # a Harbor job's group has no session
        if self.case is None and self.problem is None:
            kind = "task"  # the task's own failing item, (task)
        # Shown, never opened: as the test id, on one line and UTF-8 (pytest-xdist's
        # workers send it, and execnet cannot carry a name's bytes that are not).
        return Path(one_id(str(folder))), None, shown_as(kind, self.nodeid)
