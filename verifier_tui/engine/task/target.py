"""What the user named, decided once: :func:`classify` turns a path into a
:class:`Target`, and every command and face dispatches on its ``kind``.

A path is a task (the folder, its ``tests/`` folder, a verifier file or a
case folder, or a bare folder of verifier modules), a Harbor trial, job or
folder of jobs, or something the tool cannot open (with the one line that
says why). It is told from the layout alone, never by walking a tree; Harbor
folders are asked first, as a file inside a trial names that trial.
"""

from __future__ import annotations

import os
from itertools import islice
from pathlib import Path

from verifier_tui.engine import untrusted
from verifier_tui.engine.record import record
from verifier_tui.engine.task.cases import is_case_folder
from verifier_tui.engine.task.kinds import (
    episode_api_message,
    has_top_level_verify,
    is_pytest_file,
    is_tests_folder_of_a_task,
    looks_like_task,
    nemo_gym_environment,
    not_a_task_message,
    some_names,
    tasks_in,
)

# What the tool says a path may be, in every "cannot open this" line.
EXPECTED_PATHS = "a task folder, its tests/ folder, a verifier .py file or a case folder"

#: Kinds opened as a task (``discovery.resolve``).
TASK_KINDS = ("task", "tests", "verifier", "case", "verifiers")
#: Kinds opened as Harbor folders (``engine/harbor``).
HARBOR_KINDS = ("trial", "job", "jobs")

CONFIG = "config.json"
TRIAL_LOG = "trial.log"
JOB_LOG = "job.log"
#: The files Harbor 0.26.0 writes in a job folder that may be left beside its trials once job.log and
#: config.json, either of which makes the folder a job by itself, are gone: lock.json and result.json
#: (``harbor/job.py``), ``harbor analyze``'s analysis.json and analysis.md (``harbor/analyze/analyzer.py``,
#: the job archive of ``harbor/upload/uploader.py``) and ``harbor check``'s check_report.json
#: (``harbor/analyze/checker.py``).
_JOB_FILES = frozenset({"lock.json", "result.json", "analysis.json", "analysis.md", "check_report.json"})
_TRIAL_SUBFOLDERS = ("agent", "verifier", "artifacts", "steps", "user-agent")
#: How many folders in a folder are looked into to tell a folder of jobs (or
#: of trials): enough to meet a real jobs folder's first job, cheap on any
#: other folder. Files are passed over (their kind comes with the listing)
#: up to a bound of their own: notes kept beside the jobs must not hide them.
_PROBE_FOLDERS = 256
_PROBE_ENTRIES = 100_000
_CONFIG_LIMIT = 16 * 1024 * 1024


@record(frozen=True)
class Target:
    """A path as the tool understood it.

    ``kind``: one of :data:`TASK_KINDS` or :data:`HARBOR_KINDS`, or what the
    tool cannot open: ``missing``, ``tasks`` (a folder of tasks),
    ``environment`` (a NeMo Gym environment) or ``other``, each with ``why``.
    """

    kind: str
    path: Path  # as named: expanded, absolute once it exists
    root: Path | None = None  # the task folder, or the trial, job or jobs folder
    tests_dir: Path | None = None  # the folder staged as /tests
    case: str | None = None  # the case folder named
    verifier: Path | None = None  # the verifier file named
    step: str | None = None  # a trial's steps/<name>/ (or a place inside it) named
    why: str | None = None  # why it cannot be opened, in one line

    @property
    def harbor(self) -> bool:
        return self.kind in HARBOR_KINDS


def classify(path: Path | str) -> Target:
    """What ``path`` names (see the module docstring)."""
    named = _existing(path)
    if isinstance(named, Target):
        return named
    harbor = find_harbor_folder(named)
    if harbor is not None:
        kind, folder, step = harbor
        return Target(kind, named, root=folder, step=step)
    return _task_target(named)


def classify_task(path: Path | str) -> Target:
    """What ``path`` names as a task, Harbor folders not asked about (a task's
    own folder, read again after a change, is known not to be one)."""
    named = _existing(path)
    return named if isinstance(named, Target) else _task_target(named)


def _existing(path: Path | str) -> Path | Target:
    if not str(path).strip():
        return Target("missing", Path(str(path)), why=f"an empty path: give {EXPECTED_PATHS}")
    named = Path(path).expanduser()
    if not named.exists():
        return Target("missing", named, why=untrusted.not_there_words(named))
    return Path(os.path.abspath(named))  # "tests/.." is the task's folder, named by its own name


def _task_target(path: Path) -> Target:
    case = _case_around(path)
    if case is not None:
        # The agent's files (a package defining verify among them): never run as a verifier or a task.
        return Target("other", path, why=_in_a_workspace(path, case))
    if path.is_file():
        if path.suffix != ".py":
            return Target("other", path, why=f"{path} is not a Python file: give {EXPECTED_PATHS}")
        if not has_top_level_verify(path):
            return Target(
                "other",
                path,
                why=f"{path} defines no top-level verify (looked for `def verify`, `async def verify`, `verify = ...`)",
            )
        root = _task_root_of_file(path)
        if root is None:
            environment = nemo_gym_environment(path.parent)
            if environment is not None:
                return Target("environment", path, why=episode_api_message(environment, path))
            root = path.parent
        tests = _tests_holding(root, path)
        return Target("verifier", path, root, tests if tests is not None else path.parent, verifier=path)
    if (path / CONFIG).is_file() and (path / "result.json").is_file():
        return Target(
            "other",
            path,
            why=(
                f"{path} looks like a Harbor trial folder (config.json, result.json), but not one Harbor 0.26 writes: "
                "a trial folder holds trial.log and a config.json with trial_name and task; "
                "open the task folder instead"
            ),
        )
    if _is_case_dir(path):
        return Target("case", path, path.parent.parent, path.parent.parent / "tests", case=path.name)
    if is_tests_folder_of_a_task(path):
        return Target("tests", path, path.parent, path)
    if looks_like_task(path):
        return Target("task", path, path, path / "tests")
    environment = nemo_gym_environment(path)
    if environment is not None:
        return Target("environment", path, why=episode_api_message(environment, path))
    # A dataset keeps a verifier.py beside its tasks: still a folder of tasks.
    found = tasks_in(path)
    if found.names:
        return Target("tasks", path, why=not_a_task_message(path, found))
    package = path / "__init__.py"
    root = _task_root_of_file(package)
    if root is not None and _tests_holding(root, path) is not None and has_top_level_verify(package):
        # A verifier package in a task's tests/ or a step's (tests/grader/, which a shim's --verifier may
        # name, as only /tests is staged): the task's verifier, as its __init__.py is, never a task of its own.
        return _task_target(package)
    if not _verifiers_held(path):
        linked = _linked_harbor_folders(path)
        # never followed to tell a folder of jobs (one may lead anywhere): said, so one can be opened
        why = f"; links to Harbor folders in it are not followed: {some_names(linked)} (open one by its own path)"
        return Target("other", path, why=not_a_task_message(path, found) + (why if linked else ""))
    return Target("verifiers", path, path, path)  # a bare folder of verifier modules: its own tests folder


def _case_around(path: Path) -> Path | None:
    """The case folder whose workspace (``TASK/cases/NAME/workspace/``, under a task by the one rule)
    ``path`` is or lies in, with no task between: Harbor runs a task folder given to it wherever it lies,
    so a task strictly below a workspace is the task it is; the workspace itself is the agent's even
    when the agent left it shaped like a task (its own tests/test.sh)."""
    for folder in (path, *path.parents):
        if folder.name == "workspace" and folder.parent.parent.name == "cases" and folder.is_dir():
            return folder.parent if looks_like_task(folder.parent.parent.parent) else None
        if looks_like_task(folder):
            return None
    return None


def _in_a_workspace(path: Path, case: Path) -> str:
    """Why ``path``, in ``case``'s workspace, is not opened, and what to open instead."""
    itself = path == case / "workspace"
    what = f"{path} is {'the' if itself else 'in the'} workspace of"
    also = "give it to a task as --workspace DIR" if itself else ""
    if is_case_folder(case):
        return f"{what} case {case.name}: open the case folder {case}" + (f", or {also}" if also else "")
    # one no run finds (.draft): pointed to, it would answer "no such case"
    return f"{what} {case}, which is not a case (a folder of cases/ named with a dot is never run)" + (
        f"; {also}" if also else ""
    )


def _is_case_dir(path: Path) -> bool:
    return path.parent.name == "cases" and (
        (path / "workspace").is_dir()
        or any(
            (path / n).exists()
            for n in ("expected.json", "response.json", "response.txt", "task_data.json", "task_id.txt")
        )
    )


def _task_root_of_file(path: Path) -> Path | None:
    """The task a verifier file belongs to: the nearest folder above it (at most four folders up)
    with a task.toml, else the nearest that is a task by the one rule (:func:`looks_like_task`: a
    tests/test.sh will do). task.toml comes first: a step's steps/NAME/tests/ may hold a test.sh too."""
    above = [path.parent, *list(path.parent.parents)[:4]]
    return next((c for c in above if untrusted.present(c / "task.toml")), None) or next(
        (c for c in above if looks_like_task(c)), None
    )


def _tests_holding(root: Path, path: Path) -> Path | None:
    """The folder of ``root`` staged as /tests that ``path`` lies in: the task's tests/, or a step's
    steps/NAME/tests/, which Harbor 0.26.0 lays over /tests for that step
    (``harbor/verifier/verifier.py`` ``Verifier._resolve_tests``)."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return None
    tests = root / "tests" if parts[:1] == ("tests",) else None
    if len(parts) > 2 and parts[0] == "steps" and parts[2] == "tests":
        tests = root.joinpath(*parts[:3])
    return tests if tests is not None and tests.is_dir() else None


def _verifiers_held(folder: Path) -> bool:
    """A folder that directly holds a verifier (no task around it): looked at
    one level deep only, so that a path typed by mistake costs nothing."""
    try:
        with os.scandir(folder) as entries:
            for count, entry in enumerate(entries):
                if count >= 1000:
                    return False
                if (
                    entry.name.endswith(".py")
                    and entry.name != "run_verifier.py"
                    and not is_pytest_file(Path(entry.name))
                    and entry.is_file(follow_symlinks=False)
                    and has_top_level_verify(Path(entry.path))
                ):
                    return True
    except OSError:
        return False
    return False


# ---------------------------------------------------------------------------
# Harbor's folders, by their files (Harbor 0.26.0 ``harbor/models/trial/paths.py``)


def harbor_kind(path: Path | str) -> str | None:
    """``"trial"``, ``"job"`` or None for a folder, by its files alone
    (``trial.log`` / ``job.log``, else ``config.json`` with the config's own
    keys). Harbor itself tells them apart by ``job.log`` against ``trial.log``.
    Raises OSError naming the folder when it cannot be read."""
    folder = Path(path)
    try:
        if (folder / JOB_LOG).is_file():
            return "job"
        if (folder / TRIAL_LOG).is_file():
            return "trial"
        if not (folder / CONFIG).is_file():
            return None
    except OSError as exc:  # named as the folder that cannot be read, not as a file that may not be there
        raise OSError(exc.errno, exc.strerror, str(folder)) from None
    return _config_kind(folder)


def _config_kind(folder: Path) -> str | None:
    """``"trial"`` or ``"job"`` by the keys of the folder's config.json (each config's own), else None."""
    config = untrusted.read_json(folder / CONFIG, _CONFIG_LIMIT, shape=dict, beneath=folder).data or {}
    if "trial_name" in config and "task" in config:
        return "trial"
    if "job_name" in config:
        return "job"
    return None


#: What Harbor 0.26.0 writes beside each log: a trial's ``TrialPaths`` (models/trial/paths.py) its
#: result.json, agent/ and verifier/; a ``Job`` (job.py) its lock.json and result.json, with config.json,
#: before any trial starts. Either also has a config.json with its own keys.
_BESIDE_LOG = {"trial": (("result.json",), ("agent", "verifier")), "job": (("lock.json", "result.json"), ())}


def _more_than_a_log(folder: Path, kind: str) -> bool:
    """Whether a folder with a trial.log or job.log (``kind``) also holds what Harbor writes beside
    it: a log alone is one kept in a scratch folder, and does not make a file there a trial's or job's."""
    files, folders = _BESIDE_LOG[kind]
    try:
        # a job's result.json holds its totals: {"reward": 1.0} beside a job.log is a scratch file
        beside = ((folder / f).is_file() and (kind == "trial" or _is_job_file(folder / f)) for f in files)
        if any(beside) or any((folder / d).is_dir() for d in folders):
            return True
    except OSError:
        return False
    return _config_kind(folder) == kind


def kind_within(path: Path | str, holds: str) -> str | None:
    """:func:`harbor_kind` of a folder in a job (``holds`` "trial") or a jobs
    folder ("job"): one that cannot be read is taken as what its container
    holds (Harbor writes nothing else there), so that it is a row saying why,
    never left out."""
    try:
        return harbor_kind(path)
    except OSError:
        return holds


def find_harbor_folder(path: Path | str) -> tuple[str, Path, str | None] | None:
    """``(kind, folder, step)`` for ``path`` or a place inside a trial
    (``result.json``, ``verifier/``, ``steps/<name>/``...): the trial is
    opened on that step. None when nothing Harbor is there."""
    start = Path(os.path.normpath(Path(path).expanduser().absolute()))  # no "..", links kept
    a_file = start.is_file()
    if a_file:
        start = start.parent
    kind = harbor_kind(start)
    if kind is not None and not (a_file and not _more_than_a_log(start, kind)):
        return kind, start, None
    # Inside a trial: at most steps/<name>/<sub>/ deep.
    probe = start
    inner: list[str] = []
    for _ in range(3):
        inner.insert(0, probe.name)
        probe = probe.parent
        if inner[0] not in _TRIAL_SUBFOLDERS:
            continue
        if harbor_kind(probe) == "trial":
            step = inner[1] if inner[0] == "steps" and len(inner) > 1 else None
            return "trial", probe, step
    # A file beside job or trial folders is that file (a verifier being tried in a scratch folder
    # holding a downloaded job), never the folder around it; but for Harbor's own job files beside trial
    # folders, which name their job where the files that tell it apart are gone (a job copied without
    # job.log and config.json). Harbor writes no file in a folder of jobs.
    if a_file and not _is_job_file(start / Path(path).name):
        return None
    held = folder_of(start)
    if a_file and held != "trials":
        return None
    if held is not None:  # a folder of trials without job files reads as a job
        return ("jobs" if held == "jobs" else "job"), start, None
    return None


def _is_job_file(file: Path) -> bool:
    """Whether ``file`` can be one of :data:`_JOB_FILES`: a result.json only when it holds a job's totals
    (Harbor's ``JobResult`` requires ``n_total_trials``), not a trial's result copied beside its folder."""
    if file.name != "result.json":
        return file.name in _JOB_FILES
    return "n_total_trials" in (untrusted.read_json(file, _CONFIG_LIMIT, shape=dict, beneath=file.parent).data or {})


def harbor_place(path: Path, folder: Path, kind: str) -> str:
    """``PATH is a Harbor job folder``; for a place inside a trial (its
    agent/, a file of it), ``PATH is in the Harbor trial folder TRIAL``, the
    trial named as the path was given (``.``, ``..``). ``folder`` and ``kind``:
    :func:`find_harbor_folder`'s."""
    below = Path(os.path.normpath(path.expanduser().absolute())).relative_to(folder).parts
    if not below:
        return f"{path} is a Harbor {kind} folder"
    return f"{path} is in the Harbor {kind} folder {os.path.normpath(os.path.join(path, *[os.pardir] * len(below)))}"


def _linked_harbor_folders(folder: Path) -> list[str]:
    """The links among ``folder``'s first entries probed that lead to a job or trial folder, sorted."""
    try:
        with os.scandir(folder) as scan:
            entries = [e for e in islice(scan, _PROBE_FOLDERS) if e.is_symlink()]
    except OSError:
        return []
    return sorted(
        e.name for e in entries if any(os.path.isfile(os.path.join(e.path, log)) for log in (JOB_LOG, TRIAL_LOG))
    )


def folder_of(folder: Path) -> str | None:
    """``"jobs"`` for a folder holding job folders (Harbor's ``jobs/``, what
    ``harbor view`` opens), ``"trials"`` for one holding trial folders without
    job files (``harbor trial start`` writes into ``./trials``), else None."""
    try:
        with os.scandir(folder) as scan:
            probed = 0
            for count, entry in enumerate(scan):
                if count >= _PROBE_ENTRIES or probed >= _PROBE_FOLDERS:
                    break
                try:
                    if not entry.is_dir(follow_symlinks=False):
                        continue
                except OSError:
                    continue
                probed += 1
                if os.path.isfile(os.path.join(entry.path, JOB_LOG)):
                    return "jobs"
                if os.path.isfile(os.path.join(entry.path, TRIAL_LOG)):
                    return "trials"
    except OSError:
        return None
    return None
