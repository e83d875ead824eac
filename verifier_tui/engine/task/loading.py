"""What Harbor 0.26.0's ``Task`` refuses to load in a task's files, once task.toml's values are
taken (``harbor/models/task/task.py``: ``Task.__init__``, ``_validate_input_paths``,
``_validate_tests``; ``harbor/utils/path_safety.py``: ``validate_input_tree``; which verifier
image holds the tests: ``harbor/models/task/verifier_mode.py``).

A refusal is a task no trial of which gets a verdict: the tool still runs it (useful while
the task is being written) and says so on every face, as for a task.toml Harbor refuses.
Only a folder with a task.toml is a Harbor task here: without one the tool runs the verifier
it was given, with the defaults, and Harbor's refusals are not its business.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import TYPE_CHECKING

from verifier_tui.engine.task.config import SEPARATE, refused_for
from verifier_tui.engine.task.file_filter import HARBORIGNORE, TaskFileFilter
from verifier_tui.engine.task.rows import TASKS_FILE, outside

if TYPE_CHECKING:
    from collections.abc import Callable

    from verifier_tui.engine.task.config import StepSettings, TaskConfig

NOT_FOUND = "FileNotFoundError"
INVALID = "ValueError"
#: Folders a tree's check looks into at most: past it (a hostile web of links, which Harbor walks
#: route by route) the rest is not checked, rather than every run waiting on it.
_MOST_FOLDERS = 20_000
#: What makes a folder the build context of a verifier image that holds the tests (verifier_mode.py).
_IMAGE_FILES = ("Dockerfile", "docker-compose.yaml")


def as_harbor_loads(config: TaskConfig, task_root: Path) -> TaskConfig:
    """``config``, refused for the first reason Harbor's ``Task`` would raise loading the task
    at ``task_root``, in Harbor's order. A task.toml refused already is refused by pydantic first."""
    if config.refused is not None:
        return config
    root = task_root.resolve()  # Task resolves its folder: so do its paths
    file_filter = TaskFileFilter(root)
    refusal = _inputs_refused(config, root, file_filter) or _tests_refused(config, root, file_filter)
    return refused_for(config, *refusal) if refusal is not None else config


def _inputs_refused(config: TaskConfig, task_root: Path, file_filter: TaskFileFilter) -> tuple[str, str] | None:
    """``_validate_input_paths``, checked even with verification disabled: each step's folder,
    then tests/ and solution/, following the links in them, must stay inside the task and form no
    cycle, except what ``.harborignore`` leaves out. Only the words: the tool reads the user's
    files following their links as before (the run's view skips a link out of tests/, and says so)."""
    folders = [task_root / "steps" / step.name for step in config.steps]
    for folder in [*folders, task_root / "tests", task_root / "solution"]:
        refusal = _tree_refused(folder, task_root, file_filter)
        if refusal is not None:
            return refusal
    return None


def _tree_refused(top: Path, task_root: Path, file_filter: TaskFileFilter) -> tuple[str, str] | None:
    """``validate_input_tree(top)``: the first thing in it Harbor refuses, and why. A plain file
    in a folder of the task lies in the task, so only folders and links are looked at; whether
    ``.harborignore`` leaves a refused path out (it, or a folder on its way) is asked of it alone."""
    on_path: set[Path] = set()  # the real folders the walk is in, as Harbor's ancestors
    # (path, the route to it, the real folder it lies in: None when it must be resolved) or its exit
    stack: list[tuple[Path, _Route | None, Path | None] | Path] = [(top, None, None)]
    folders = 0
    while stack:
        item = stack.pop()
        if isinstance(item, Path):
            on_path.discard(item)
            continue
        candidate, route, parent = item
        real, why = _real(candidate, task_root, parent)
        is_dir = real is not None and candidate.is_dir()
        if why is None and is_dir and real in on_path:
            shown = candidate.relative_to(task_root).as_posix()
            why = f"{shown} is a link back to a folder it lies in (Input directory links must not form cycles)"
        here = _Route(candidate, route)
        if why is not None:
            if not here.excluded(file_filter.excludes):
                return why, "RuntimeError" if real is None else INVALID
            continue
        folders += is_dir
        if not is_dir or real is None or folders > _MOST_FOLDERS:
            continue
        try:
            with os.scandir(candidate) as scan:
                listed = list(scan)
        except OSError:
            continue
        why = _rules_refused(candidate, [e.name for e in listed], task_root, file_filter)
        if why is not None and not here.excluded(file_filter.excludes):
            return why, INVALID
        entries = sorted(e.name for e in listed if e.is_symlink() or e.is_dir())
        on_path.add(real)
        stack.append(real)
        stack += [(candidate / name, here, real) for name in reversed(entries)]
    return None


def _rules_refused(folder: Path, names: list[str], task_root: Path, file_filter: TaskFileFilter) -> str | None:
    """``TaskFileFilter.ignore_rules``: the ``.harborignore`` of a folder Harbor reads rules in, read
    as soon as a path in the folder is checked, must lie in the task and be a regular file."""
    if HARBORIGNORE not in names or len(names) < 2 or not file_filter.reads_rules(folder):
        return None
    rules = folder / HARBORIGNORE
    away = outside(rules, task_root)
    if away is not None:
        return f"{away} (Input paths must stay within the task)"
    if not rules.is_file():
        shown = rules.relative_to(task_root).as_posix()
        return f"{shown} is not a regular file (Ignore rules must be a regular file)"
    return None


class _Route:
    """A path the walk met, and the route to it: Harbor asks ``.harborignore`` of each in turn."""

    def __init__(self, path: Path, parent: _Route | None) -> None:
        self.path, self.parent = path, parent

    def excluded(self, excludes: Callable[[Path], bool]) -> bool:
        route: _Route | None = self
        while route is not None:
            if excludes(route.path):
                return True
            route = route.parent
        return False


def _real(candidate: Path, task_root: Path, parent: Path | None) -> tuple[Path | None, str | None]:
    """Where ``candidate`` really is, and why Harbor refuses it if it does: it leads out of the
    task, or is a link loop (``Path.resolve`` raises RuntimeError on Python 3.12, Harbor's oldest)."""
    if parent is not None and not candidate.is_symlink():
        return parent / candidate.name, None
    try:
        real = Path(os.path.realpath(candidate, strict=True))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return None, f"{candidate.relative_to(task_root).as_posix()} is a link loop (Symlink loop)"
        real = Path(os.path.realpath(candidate))  # a link to nothing is checked where it points
    away = outside(candidate, task_root) if not real.is_relative_to(task_root) else None
    return real, None if away is None else f"{away} (Input paths must stay within the task)"


def _tests_refused(config: TaskConfig, task_root: Path, file_filter: TaskFileFilter) -> tuple[str, str] | None:
    """``_validate_tests``: why, and the exception Harbor raises."""
    if not config.steps:
        why = _instruction_refused(task_root)
        if why is not None:
            return why, NOT_FOUND
        return _script_refused(config, task_root, None, file_filter)
    for step in config.steps:
        why = _step_refused(step, task_root)
        if why is not None:
            return why, NOT_FOUND
        refusal = _script_refused(config, task_root, step, file_filter)
        if refusal is not None:
            return refusal
    return None


def _instruction_refused(task_root: Path) -> str | None:
    """``Task.__init__`` reads instruction.md even with verification disabled. A parameterized
    template (tasks.jsonl) is not what Harbor loads: NeMo Gym renders each row into a task
    folder of its own, with its instruction."""
    if (task_root / "instruction.md").exists() or (task_root / TASKS_FILE).exists():
        return None
    return "no instruction.md beside task.toml (Task directory is missing instruction.md)"


def _step_refused(step: StepSettings, task_root: Path) -> str | None:
    """A step with no folder, or no ``instruction.md`` in it (``Step directory not found``, ``Step
    instruction not found``) fails every step's trial: a step renamed in task.toml alone, say."""
    folder = task_root / "steps" / step.name
    if not folder.exists():
        return f"[[steps]] {step.name!r} has no folder steps/{step.name}/ (Step directory not found)"
    if not (folder / "instruction.md").exists():
        return f"[[steps]] {step.name!r} has no steps/{step.name}/instruction.md (Step instruction not found)"
    return None


def _script_refused(
    config: TaskConfig, task_root: Path, step: StepSettings | None, file_filter: TaskFileFilter
) -> tuple[str, str] | None:
    """The test script Harbor runs for the task (or ``step``: its own ``steps/NAME/tests/``
    one, else the shared one) missing, or left out by ``.harborignore``
    (``TaskFileFilter.require_included``). None too when the verifier's own image holds the tests."""
    verifier_os = _verifier_os(config, task_root, step)
    if verifier_os is None:
        return None
    name = "test.bat" if verifier_os == "windows" else "test.sh"
    shared = task_root / "tests" / name
    own = task_root / "steps" / step.name / "tests" / name if step is not None else None
    found = next((p for p in (own, shared) if p is not None and p.exists()), None)  # discover_script
    if found is None:
        where = (
            f"step {step.name!r} has no steps/{step.name}/tests/{name} or tests/{name}" if step else f"no tests/{name}"
        )
        return f"{where}, the test script Harbor runs on {verifier_os}", NOT_FOUND
    if file_filter.excludes(found):
        shown = found.relative_to(task_root).as_posix()
        return f"{shown} is excluded by {HARBORIGNORE} (Required task input is excluded)", INVALID
    return None


def _verifier_os(config: TaskConfig, task_root: Path, step: StepSettings | None) -> str | None:
    """``resolve_verifier_environment_definition``: the OS the verifier runs on, whose script
    Harbor asks for; None when it runs in a separate image that holds the tests (the step's
    ``[steps.verifier.environment] docker_image`` or an image built from its tests folder, else
    the task's), which needs no script of the task's."""
    if config.verifier_mode(step.name if step else None) != SEPARATE:
        return config.os
    candidates = [(step.verifier, task_root / "steps" / step.name / "tests")] if step is not None else []
    candidates.append((config.verifier, task_root / "tests"))
    for verifier, tests in candidates:
        if verifier.environment_image or any((tests / name).is_file() for name in _IMAGE_FILES):
            return None
    # resolve_effective_verifier_env_config: the step's environment, else the task's, else [environment]
    own = next((v for v, _ in candidates if v.environment_env is not None), None)
    return (own.environment_os if own is not None else None) or config.os
