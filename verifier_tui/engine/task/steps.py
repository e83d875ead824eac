"""A multi-step task (task.toml ``[[steps]]``): what Harbor verifies for each
step, against what a run of the task shows.

Mirrors Harbor 0.26.0 ``harbor/verifier/verifier.py`` ``Verifier._resolve_tests``
and ``verify``: a step is verified with ``tests/`` uploaded into ``/tests``,
then the step's own ``steps/<name>/tests/`` over it (the step's files win),
and the step's ``[steps.verifier]`` settings (``Trial._run_step_verifier``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from verifier_tui.engine.task.config import TaskConfig


def steps_notices(config: TaskConfig, step: str | None) -> list[str]:
    """Said when the task has steps and no step was chosen: the run is the
    task's ``tests/`` with its ``[verifier]``, which Harbor never runs as
    such on a multi-step task."""
    if not config.steps or step is not None:
        return []
    names = ", ".join(s.name for s in config.steps)
    return [
        f"a multi-step task ([[steps]]: {names}): Harbor verifies each step with steps/<name>/tests over tests/ "
        "(the step's files win) and the step's own [steps.verifier]; this run is tests/ with the task's [verifier]"
    ]
