"""Find what to run in the task a path names, without importing anything.

What the path is (a task folder, its ``tests/`` folder, a verifier file or a
case folder) is decided by :mod:`verifier_tui.engine.task.target`; this
module reads the task it names. Verifiers are recognised by a top-level ``def verify``, ``async def
verify`` or ``verify = ...`` in the source text: importing a module would run
its code, and a verifier's top level may be slow or broken (that is what the
user is here to debug).
"""

from __future__ import annotations

import os
import posixpath
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from verifier_tui.engine import cache, untrusted
from verifier_tui.engine.advice import CHOOSE_VERIFIER, STEP_TESTS, VERIFIER_OPTION, Action, Advice
from verifier_tui.engine.filters import NOT_SEARCHED
from verifier_tui.engine.plain import posix_from, typed_back
from verifier_tui.engine.procfs import shell_word
from verifier_tui.engine.record import field, record
from verifier_tui.engine.task.cases import Case, find_cases, load_case
from verifier_tui.engine.task.config import USES_DEFAULTS, TaskConfig, config_from_toml, load_toml
from verifier_tui.engine.task.kinds import (
    MAX_SCAN_BYTES,
    OwnRunner,
    episode_api_notice,
    has_top_level_verify,
    is_pytest_file,
    step_tests,
    task_nemo_gym,
    task_runner,
    unfollowed_verifier_link,
    uses_episode_api,
)
from verifier_tui.engine.task.loading import as_harbor_loads
from verifier_tui.engine.task.rows import TaskRows, outside, task_rows
from verifier_tui.engine.task.sh_words import assigned_value, option_values, sh_lines
from verifier_tui.engine.task.target import TASK_KINDS, Target, classify_task, harbor_place
from verifier_tui.runner_source import runner_path

if TYPE_CHECKING:
    from typing import Any

# How the tool tells the runner's shim from a task's own test.sh.
SHIM_MARKER = "run_verifier.py"
# Where Harbor uploads the task's tests/, whose files a shim's --verifier names (ours: /tests/verifier.py).
_TESTS = "/tests/"
# The file our shim passes, the candidate where a task's shim makes its --verifier word as test.sh runs.
SHIMS_OWN = "verifier.py"
# Folders never searched for verifiers: the one skip list, and the vendored helpers.
_SKIP_DIRS = NOT_SEARCHED | {"nemo_gym"}


class DiscoveryError(Exception):
    """The path cannot be debugged; the message says why and where we looked."""


@record
class Task:
    """A resolved task: where its pieces are and which verifiers it has."""

    root: Path  # the task folder (or the folder the verifier sits in, without a task)
    tests_dir: Path  # the folder staged as the sandbox's /tests
    verifiers: list[Path]
    config: TaskConfig
    cases: list[Case]
    test_sh: Path | None
    plain_test_sh: bool  # tests/test.sh exists and is the task's own script, not the shim
    shim_runs: Path | None = None  # the file the shim runs (what its --verifier names), when test.sh is one
    # and names it as written (not "$V")
    shim_named_as_it_runs: bool = False  # the shim's --verifier is made as test.sh runs ("$V")
    dataset_verifier: Path | None = None  # a dataset-wide verifier.py beside dataset.toml
    initial_case: str | None = None  # the case the path named, if it named one
    initial_verifier: Path | None = None  # the verifier file the path named, if it named one
    looked_in: list[Path] = field(default_factory=list)
    own_runner: OwnRunner | None = None  # tests/.ng/run_verifier.py, as a published task ships it
    own_nemo_gym: Path | None = None  # tests/.ng/nemo_gym, vendored by NeMo Gym's publish step
    rows: TaskRows | None = None  # tasks.jsonl of a parameterized task
    cases_unread: str | None = None
    """Why ``cases/``, there, could not be listed (``.../cases cannot be read
    (Permission denied)``): the task has cases, not none, and every face says so."""

    @property
    def name(self) -> str:
        """task.toml's ``[task] name`` (``org/name``) when it has one, else the folder's."""
        return self.config.name or self.root.name

    def case(self, name: str) -> Case | None:
        """The case ``name`` names, as written or as the tool spells it (:func:`typed_back`)."""
        return next((c for c in self.cases if c.name == name), None) or next(
            (c for c in self.cases if typed_back(c.name, name)), None
        )

    def staged_name(self, verifier: Path) -> str:
        """Where ``verifier`` lives inside the staged tests folder (relative)."""
        if self.dataset_verifier is not None and verifier == self.dataset_verifier:
            return ".ng/verifier.py"
        try:
            return verifier.relative_to(self.tests_dir).as_posix()
        except ValueError:
            return ".ng/verifier.py"

    def notices(self) -> list[str]:
        out = list(self.config.problems)
        if self.rows is not None:
            out += [Advice(f"{self.rows.path.name}: ", p) for p in self.rows.problems]
        if self.cases_unread is not None:
            out.append(f"{self.cases_unread}: no case is listed")
        return out


def plain_test_sh_notice(task: Task, verifier: Path) -> str:
    """Said before anything runs, when a task's own test.sh sits beside a
    Python verifier: the sandbox runs the script, so this verifier is not what
    would score the task. NeMo Gym's rule (``nemo_gym.data.tasks.harbor.python_verifier``):
    ``tests/test.sh`` always wins when present."""
    return (
        f"the sandbox would not run {_display(task, verifier)}: {_display(task, task.test_sh)} is the task's own "
        "script, not the runner's shim, and Harbor runs that script (NeMo Gym's rule: tests/test.sh wins over a "
        "verifier.py, which is then a helper). verifier-tui runs the verifier through the runner anyway, to debug it"
    )


def find_verifiers(tests_dir: Path) -> list[Path]:
    """Every verifier file under ``tests_dir``: ``verifier.py`` first, then the
    rest by path. The vendored helpers, caches and pytest's files are skipped."""
    found: list[Path] = []
    if not tests_dir.is_dir():
        return found
    stack = [tests_dir]
    while stack:
        folder = stack.pop()
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            continue
        for entry in entries:
            if entry.is_symlink():
                continue
            if entry.is_dir():
                if entry.name not in _SKIP_DIRS:
                    stack.append(entry)
            elif (
                entry.suffix == ".py"
                and entry.name != "run_verifier.py"
                and not is_pytest_file(entry)
                and has_top_level_verify(entry)
            ):
                found.append(entry)

    def order(path: Path) -> tuple[int, int, str]:
        rel = path.relative_to(tests_dir)
        return (0 if path.name == "verifier.py" else 1, len(rel.parts), rel.as_posix())

    return sorted(found, key=order)


def read_task_config(task_root: Path) -> TaskConfig:
    """``task.toml`` read by Harbor's rules (:mod:`verifier_tui.engine.task.config`,
    the one reader); problems are reported, never raised (a broken task.toml
    must not stop debugging). No task.toml: the defaults, without a word.

    The parsed TOML document (not the config made from it: that is made
    afresh each time, so it can never disagree with the reader) is remembered
    in this process and in the cache (:mod:`verifier_tui.engine.cache`), keyed by the file's size,
    modification and change times and inode: a remembered document takes
    0.3 ms, a parse (importing tomllib) about 8 ms of ``run``, and task.toml
    rarely changes between two runs. Any write to the file changes its change
    time, so a stale answer cannot survive. A document JSON cannot hold (a
    date, ``nan``) is remembered in this process only."""
    path = task_root / "task.toml"
    away = outside(path, task_root)
    if away is not None:  # a task sent with a job: its task.toml may link to a file of the user's
        return TaskConfig(problems=(f"{away}: not read (Harbor would read it){USES_DEFAULTS}",))
    try:
        st = os.stat(path)
    except OSError:
        # nothing there: the defaults; a link to nothing is said by the reader
        return TaskConfig() if not untrusted.present(path) else load_toml(path)[1] or TaskConfig()
    if not stat.S_ISREG(st.st_mode):
        return load_toml(path)[1] or TaskConfig()  # a FIFO or a folder: said, never waited on
    key = os.path.abspath(path)
    stamp = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]
    known = _read_here.get(key)
    if known is None or known["stamp"] != stamp:
        known = cache.load(_CONFIG_CACHE_FILE, _valid_config_entry).get(key)
    if known is not None and known["stamp"] == stamp:
        _read_here[key] = known
        return as_harbor_loads(config_from_toml(known["toml"]), task_root)
    document, unreadable = load_toml(path)
    if unreadable is not None:
        return unreadable
    remembered = cache.load(_CONFIG_CACHE_FILE, _valid_config_entry)
    remembered.pop(key, None)
    remembered[key] = _read_here[key] = {"shape": _CONFIG_SHAPE, "stamp": stamp, "toml": document}
    cache.store(_CONFIG_CACHE_FILE, remembered)
    return as_harbor_loads(config_from_toml(document), task_root)


_CONFIG_CACHE_FILE = "task-config.json"
# This process's documents, by path, under the same stamp: the trials of a job
# read one task.toml each, and reading the cache file back (tens of documents)
# cost each trial more than its own check.
_read_here: dict[str, dict[str, Any]] = {}
# The shape of a remembered answer, written in each entry: entries of an
# older shape (which held a config made by an older reader) are discarded.
_CONFIG_SHAPE = 4  # 4: the TOML document itself


def _valid_config_entry(entry: Any) -> bool:
    """A remembered task.toml has the shape written above; what the document
    holds needs no check, as the reader takes any document without raising."""
    return entry.get("shape") == _CONFIG_SHAPE and isinstance(entry["stamp"], list) and isinstance(entry["toml"], dict)


def _dataset_verifier(task_root: Path) -> Path | None:
    """A dataset may keep one verifier.py beside its dataset.toml for every task."""
    parent = task_root.parent
    candidate = parent / "verifier.py"
    if (parent / "dataset.toml").is_file() and candidate.is_file() and has_top_level_verify(candidate):
        return candidate
    return None


def resolve(path: Path | str | Target) -> Task:
    """The task a path names (a task folder, its tests folder, a verifier
    file or a case folder), or the task of a :class:`Target` already
    classified (:mod:`verifier_tui.engine.task.target`). Anything else raises
    DiscoveryError with the one line the target carries."""
    target = path if isinstance(path, Target) else classify_task(path)
    root, tests_dir = target.root, target.tests_dir
    if target.kind not in TASK_KINDS or root is None or tests_dir is None:  # a task's kind has both
        if target.why or root is None:
            raise DiscoveryError(target.why or f"{target.path} is not a task")
        ran = "a task folder its jobs ran" if target.kind == "jobs" else "the task folder it ran"
        raise DiscoveryError(f"{harbor_place(target.path, root, target.kind)}, not a task: open {ran} instead")
    config = read_task_config(root)
    looked_in = [tests_dir]
    verifiers = find_verifiers(tests_dir)
    dataset = _dataset_verifier(root)
    if dataset is not None:
        looked_in.append(dataset.parent)
        verifiers.append(dataset)
    if target.verifier is not None and target.verifier not in verifiers:
        verifiers.insert(0, target.verifier)
    test_sh = tests_dir / "test.sh"
    plain = False
    known = True
    shims_file = tests_dir / SHIMS_OWN
    if test_sh.is_file():
        # The head only: a script past the bound (test files in a heredoc) is still the task's own, and
        # the shim names the runner in its first lines
        script = untrusted.read_bytes(test_sh, MAX_SCAN_BYTES, keep="head").data
        plain = script is not None and SHIM_MARKER.encode() not in script
        named, known = shim_reads(script.decode(errors="replace")) if script and not plain else (None, True)
        # a file named only as test.sh runs ("$V") stays tests/verifier.py, the shim's own default, as the
        # candidate (never a helper beside it), but no note claims the sandbox runs another
        shims_file = tests_dir / named if named else shims_file
    if shims_file not in verifiers and not plain and shims_file.is_file() and not shims_file.is_symlink():
        # The shim runs tests/verifier.py whatever it holds: with no top-level
        # verify in sight (renamed, or imported from a helper: `from grader
        # import verify`, after setting grader up) the runner decides, and says
        # what is wrong as it would in the sandbox. It comes first even when a
        # helper does define verify: running the helper instead is not what
        # Harbor runs, and may score otherwise.
        verifiers.insert(0, shims_file)
    rows = task_rows(root)
    unread: list[str] = []
    cases = find_cases(root, tests_dir, rows, unread)
    return Task(
        root=root,
        tests_dir=tests_dir,
        verifiers=verifiers,
        config=config,
        cases=cases,
        test_sh=test_sh if test_sh.is_file() else None,
        plain_test_sh=plain,
        shim_runs=shims_file if test_sh.is_file() and not plain and known else None,
        shim_named_as_it_runs=not known,
        dataset_verifier=dataset,
        initial_case=target.case,
        initial_verifier=target.verifier,
        looked_in=looked_in,
        own_runner=task_runner(tests_dir, runner_path),
        own_nemo_gym=task_nemo_gym(tests_dir),
        rows=rows,
        cases_unread=unread[0] if unread else None,
    )


def no_verifier_message(task: Task) -> str:
    if task.plain_test_sh:
        return (
            f"{task.name} is a plain Harbor task: Harbor runs its {_display(task, task.test_sh)} (the task's own "
            "script, usually pytest or a check script, not the runner's shim), and verifier-tui does not run "
            "that script: it runs a Python verifier beside the runner's shim. To debug here, move the checks "
            "into tests/verifier.py (def verify(workspace): ...) and run verifier-tui vendor "
            f"{shell_word(str(task.root))}, which puts the shim in place of tests/test.sh (kept as tests/test.sh.old)"
        )
    places = ", ".join(str(p) + ("" if p.is_dir() else " (not there)") for p in task.looked_in)
    said: list[str | Action] = [
        f"no verifier found for {task.name}: looked in {places} for a .py file with a top-level "
        "`def verify`, `async def verify` or `verify = ...` (pytest's test_*.py files are never verifiers)"
    ]
    # Harbor verifies each step with its own steps/NAME/tests over tests/ (engine/task/steps.py): --step
    # finds more only for a step that has its own tests, when no step's own tests were looked in.
    own = [s.name for s in task.config.steps if step_tests(task.root, s.name) is not None]
    if own and task.looked_in[0] == task.tests_dir:
        # an Advice: the TUI says its S, which chooses the step on screen
        said += [f"; a multi-step task whose steps {', '.join(own)} have their own tests: ", STEP_TESTS]
    # The folders of /tests looked in (a step's own first): a verifier.py there may be a link, never followed,
    # or no file at all (a folder, a FIFO), which the author sees there all the same.
    for place in [folder / "verifier.py" for folder in dict.fromkeys([task.looked_in[0], task.tests_dir])]:
        if place.is_symlink():
            said.append(f"; {unfollowed_verifier_link(_display(task, place), place)}")
        elif untrusted.present(place) and not place.is_file():
            what = untrusted.kind(os.lstat(place).st_mode)
            said.append(f"; {_display(task, place)} is {what}, not a file: make it a file of the task's own")
    return Advice(*said)


def no_verifier_help(task: Task, live_reload: bool = True) -> str:
    """What to do next, when a task has no verifier to run (``live_reload``: a save runs); a
    plain Harbor task's message says it already."""
    if task.plain_test_sh:
        return ""
    # With live reload off (--no-watch, w) nothing runs a verifier written: what does is said.
    runs = (
        "live reload picks it up and runs it" if live_reload else "then r runs it (live reload is off: w turns it on)"
    )
    return f"Write one (tests/verifier.py with a top-level def verify(workspace): ...): {runs}. v chooses another file."


def verifier_notices(task: Task, verifier: Path | None) -> list[str]:
    """What the tool can tell about the chosen verifier before it runs."""
    if verifier is None:
        return []
    out = [plain_test_sh_notice(task, verifier)] if task.plain_test_sh else []
    if is_pytest_file(verifier):
        out.append(
            f"{_display(task, verifier)} is a pytest file: NeMo Gym never runs it as the verifier "
            "(the shim runs tests/verifier.py)"
        )
    elif shim_notice := shim_runs_another_notice(task, verifier):
        out.append(shim_notice)
    elif task.shim_named_as_it_runs and verifier != task.dataset_verifier:
        out.append(named_as_it_runs_notice(_display(task, task.test_sh)))
    if uses_episode_api(verifier):
        out.append(episode_api_notice(_display(task, verifier)))
    return out


def named_as_it_runs_notice(test_sh: str) -> str:
    """Said of a run (a task's, a trial's replay) whose shim, ``test_sh``, names its verifier by a word made
    as the script runs (:func:`shim_reads`): the tool runs the shim's own tests/verifier.py, or the file
    chosen, but cannot tell it is the one the sandbox runs."""
    return (
        f"the shim ({test_sh}) names its --verifier by a word made as it runs, which no plain assignment before "
        f"it makes certain: the sandbox's verifier is chosen then, and may not be the one verifier-tui runs "
        f"(the shim's own tests/{SHIMS_OWN} unless you choose another)"
    )


def shim_reads(script: str) -> tuple[str | None, bool]:
    """The file a shim's ``--verifier /tests/...`` names, relative to /tests, read as sh reads test.sh:
    the first ``--verifier`` (or ``--verifier=``) word a command passes, not one a comment holds or a
    command only says (echo), with its quotes removed, as bash hands it to the runner; and whether it is
    known here: not for a word its shell makes as test.sh runs (braces, a pattern, a variable no plain
    assignment before it makes certain: :func:`assigned_value`). None
    when it names no file there. A name that climbs out of /tests (``..``) is none: here it would be a
    file of the user's beside the task, never to be run."""
    lines = [line for _number, line in sh_lines(script)]
    for at, line in enumerate(lines):
        # lexed only where the option is written, as the workspace's reading does
        for word, written, how, _inline in option_values(line, "--verifier") if "--verifier" in line else ():
            value = assigned_value(lines, at, word, written) if how == "expands" else None if how else written
            if value is None:
                return None, False
            # Linux reads //tests//a.py as /tests/a.py, the path the runner opens
            path = posixpath.normpath("/" + value.lstrip("/"))
            named = path.removeprefix(_TESTS) if path.startswith(_TESTS) else None
            return (None if ".." in value.split("/") else named), True
    return None, True


def shim_runs_another_notice(task: Task, verifier: Path) -> str | None:
    """Said when the runner's shim is the task's test.sh but the verifier
    chosen here is not the file it runs (ours passes ``--verifier
    /tests/verifier.py``), so in the sandbox this file never scores the task
    (a package's ``__init__.py``, a ``grader.py``)."""
    shims_file = task.shim_runs
    if task.test_sh is None or shims_file is None or verifier in (shims_file, task.dataset_verifier):
        return None
    if shims_file.is_file() and not shims_file.is_symlink():
        return (
            f"the sandbox would not run {_display(task, verifier)}: the shim ({_display(task, task.test_sh)}) "
            f"runs {_display(task, shims_file)}. verifier-tui runs the file you chose anyway, to debug it"
        )
    return (
        f"the sandbox would not run {_display(task, verifier)}: the shim ({_display(task, task.test_sh)}) runs "
        f"{_display(task, shims_file)}, which does not exist, so there the runner exits 2 and no reward is "
        f"written. Move verify into {_display(task, shims_file)} (it may import it from a helper); "
        "verifier-tui runs this file anyway, to debug it"
    )


def choose_verifier(task: Task, wanted: str | None) -> Path:
    """The verifier to run: ``wanted`` (a path, a file name or a path relative to
    the tests folder), the one the path named, or the only one."""
    if not task.verifiers:
        raise DiscoveryError(no_verifier_message(task))
    if wanted:
        want = Path(wanted).expanduser()
        for candidate in task.verifiers:
            rel = candidate.relative_to(task.tests_dir).as_posix() if candidate.is_relative_to(task.tests_dir) else None
            if want.is_absolute() and candidate == want.absolute():
                return candidate
            if wanted in (rel, candidate.name) or (want.exists() and candidate == want.absolute()):
                return candidate
        if want.is_file() and has_top_level_verify(want):
            return want.absolute()
        names = ", ".join(_display(task, v) for v in task.verifiers)
        what = "not a verifier (a .py file defining verify)" if want.exists() else "no such verifier"
        raise DiscoveryError(Advice(VERIFIER_OPTION, f" {wanted}: {what}; this task has: {names}"))
    if task.initial_verifier is not None:
        return task.initial_verifier
    if len(task.verifiers) == 1:
        return task.verifiers[0]
    # The file the shim runs (its --verifier names it; tests/verifier.py in ours), as Harbor does.
    preferred = task.shim_runs or task.tests_dir / "verifier.py"
    if preferred in task.verifiers:
        return preferred
    names = ", ".join(_display(task, v) for v in task.verifiers)
    raise DiscoveryError(Advice(f"{task.name} has several verifiers ({names}): ", CHOOSE_VERIFIER))


def _display(task: Task, path: Path | None) -> str:
    return "?" if path is None else posix_from(path, task.root)


def load_case_dir(path: Path, task: Task | None = None) -> Case:
    """A case folder named directly (``--case`` may be a path too). A folder
    that is one of ``task``'s own cases is that case; any other still falls
    back to the task's task data, as the task's own cases do (README, "Tasks and cases")."""
    fallbacks: tuple[Path, ...] = ()
    if task is not None:
        real = path.resolve()
        for case in task.cases:
            if case.folder.resolve() == real:
                return case
        fallbacks = (task.root / "task_data.json", task.tests_dir / "task_data.json")
    return load_case(path, task_data_fallbacks=fallbacks, rows=task.rows if task is not None else None)
