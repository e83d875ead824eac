"""What Harbor 0.26.0's ``Task`` refuses to load in a task's files, once task.toml's values are
taken (``harbor/models/task/task.py``: ``Task.__init__``, ``_validate_tests``; which verifier
image holds the tests: ``harbor/models/task/verifier_mode.py``).

A refusal is a task no trial of which gets a verdict: the tool still runs it (useful while
the task is being written) and says so on every face, as for a task.toml Harbor refuses.
Only a folder with a task.toml is a Harbor task here: without one the tool runs the verifier
it was given, with the defaults, and Harbor's refusals are not its business.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifier_tui.engine.record import replace
from verifier_tui.engine.task.config import SEPARATE, files_unrefused, refused_for
from verifier_tui.engine.task.file_filter import HARBORIGNORE, TaskFileFilter
from verifier_tui.engine.task.rows import TASKS_FILE

if TYPE_CHECKING:
    from pathlib import Path

    from verifier_tui.engine.task.config import StepSettings, TaskConfig

NOT_FOUND = "FileNotFoundError"
EXCLUDED = "ValueError"
#: What makes a folder the build context of a verifier image that holds the tests (verifier_mode.py).
_IMAGE_FILES = ("Dockerfile", "docker-compose.yaml")


def as_harbor_loads(config: TaskConfig, task_root: Path, *, verifying: bool = True) -> TaskConfig:
    """``config``, refused for the first reason Harbor's ``Task`` would raise loading the task
    at ``task_root``, in Harbor's order. A task.toml refused already is refused by pydantic first.
    ``verifying`` False: as ``Task(disable_verification=True)`` loads it, without ``_validate_tests``."""
    if config.refused is not None:
        return config
    root = task_root.resolve()  # Task resolves its folder: so do its paths
    file_filter = TaskFileFilter(root)
    refusal = (
        _inputs_refused(config, root, file_filter)
        or (_tests_refused(config, root, file_filter) if verifying else None)
        or _instruction_unread(config, root)
    )
    return refused_for(config, *refusal) if refusal is not None else config


def as_loaded_without_verifier(config: TaskConfig, task_root: Path) -> TaskConfig:
    """``config`` as a trial whose job disabled the verifier loads the task: trial.py ``_load_task``
    builds ``Task(disable_verification=config.verifier.disable)``, which checks no test script (nor a
    step's folder or instruction). What only a run of the verifier is refused for is a note."""
    if not config.files_refused:
        return config
    loaded = as_harbor_loads(files_unrefused(config), task_root, verifying=False)
    if loaded.refused is not None:
        return loaded
    note = "Harbor loads this task only with the verifier disabled, as this job ran it; one that runs the verifier"
    return replace(loaded, problems=(f"{note} is refused: {config.refused}", *loaded.problems))


def _inputs_refused(config: TaskConfig, task_root: Path, file_filter: TaskFileFilter) -> tuple[str, str] | None:
    """``_validate_input_paths``, verifier disabled or not: walking each step's folder, tests/ and
    solution/, ``TaskFileFilter`` reads the ``.harborignore`` rules with ``read_text()``, which
    raises on one that is not UTF-8."""
    folders = [*(task_root / "steps" / step.name for step in config.steps), task_root / "tests", task_root / "solution"]
    for folder in folders:
        found = file_filter.first_undecodable(folder)
        if found is not None:
            shown = found.relative_to(task_root).as_posix()
            return f"{shown} is not UTF-8 text", "UnicodeDecodeError"
    return None


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
    """``_validate_tests``'s ``instruction_path.exists()``. A parameterized template (tasks.jsonl)
    is not what Harbor loads: NeMo Gym renders each row into a task folder of its own, with its
    instruction."""
    if (task_root / "instruction.md").exists() or (task_root / TASKS_FILE).exists():
        return None
    return "no instruction.md beside task.toml (Task directory is missing instruction.md)"


def _instruction_unread(config: TaskConfig, task_root: Path) -> tuple[str, str] | None:
    """``Task.__init__``'s ``instruction_path.read_text()``, last, verification disabled or not: it
    raises for none (FileNotFoundError) and for a folder, which ``exists()`` passes
    (IsADirectoryError). A task of steps reads none there: each step's is read as its agent starts
    (``step_instruction``), whose failure Harbor's error policy still grades."""
    if config.steps:
        return None
    why = _instruction_refused(task_root)
    if why is not None:
        return why, NOT_FOUND
    if (task_root / "instruction.md").is_dir() and not (task_root / TASKS_FILE).exists():
        return "instruction.md beside task.toml is a folder, not a file", "IsADirectoryError"
    return None


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
        return f"{shown} is excluded by {HARBORIGNORE} (Required task input is excluded)", EXCLUDED
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
