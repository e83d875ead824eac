"""What Harbor 0.26.0's ``Task`` refuses to load in a task's files, once task.toml's values are
taken (``harbor/models/task/task.py``: ``Task.__init__``, ``_validate_tests``).

A refusal is a task no trial of which gets a verdict: the tool still runs it (useful while
the task is being written) and says so on every face, as for a task.toml Harbor refuses.
Only a folder with a task.toml is a Harbor task here: without one the tool runs the verifier
it was given, with the defaults, and Harbor's refusals are not its business.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifier_tui.engine.task.config import refused_for
from verifier_tui.engine.task.rows import TASKS_FILE

if TYPE_CHECKING:
    from pathlib import Path

    from verifier_tui.engine.task.config import TaskConfig

NOT_FOUND = "FileNotFoundError"


def as_harbor_loads(config: TaskConfig, task_root: Path) -> TaskConfig:
    """``config``, refused for the first reason Harbor's ``Task`` would raise loading the task
    at ``task_root``, in Harbor's order. A task.toml refused already is refused by pydantic first."""
    if config.refused is not None:
        return config
    why = _steps_refused(config, task_root) if config.steps else _instruction_refused(task_root)
    return refused_for(config, why, NOT_FOUND) if why is not None else config


def _instruction_refused(task_root: Path) -> str | None:
    """``Task.__init__`` reads instruction.md even with verification disabled. A parameterized
    template (tasks.jsonl) is not what Harbor loads: NeMo Gym renders each row into a task
    folder of its own, with its instruction."""
    if (task_root / "instruction.md").exists() or (task_root / TASKS_FILE).exists():
        return None
    return "no instruction.md beside task.toml (Task directory is missing instruction.md)"


def _steps_refused(config: TaskConfig, task_root: Path) -> str | None:
    """``_validate_tests`` of a multi-step task: the first step with no folder, or no
    ``instruction.md`` in it (``Step directory not found``, ``Step instruction not found``)
    fails every step's trial: a step renamed in task.toml alone, say."""
    for step in config.steps:
        folder = task_root / "steps" / step.name
        if not folder.exists():
            return f"[[steps]] {step.name!r} has no folder steps/{step.name}/ (Step directory not found)"
        if not (folder / "instruction.md").exists():
            return f"[[steps]] {step.name!r} has no steps/{step.name}/instruction.md (Step instruction not found)"
    return None
