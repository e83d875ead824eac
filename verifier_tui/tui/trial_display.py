"""How a trial's paths are put on screen: relative to the folder that holds
both the task and the trial (where Harbor ran, usually), so that
``tasks/demo/tests/verifier.py`` and ``jobs/<job>/<trial>`` read alike; the
rest (deterministic durations for snapshots, ``~``, ANSI stripped) is the
main screen's :class:`~verifier_tui.tui.display.Display`."""

from __future__ import annotations

import os
from pathlib import Path

from verifier_tui.engine.advice import STAND_IN, Action
from verifier_tui.engine.record import record
from verifier_tui.tui.display import Display


def common_base(*paths: Path | None) -> Path:
    """The deepest folder holding every one of ``paths`` (the first's parent for one)."""
    given = [str(p) for p in paths if p is not None]
    if not given:
        return Path("/")
    base = Path(os.path.commonpath(given)) if len(given) > 1 else Path(given[0]).parent
    return base


@record
class TrialDisplay(Display):
    """``task_root`` is the task (or the trial when the task was not found);
    ``base`` the folder paths are shown relative to."""

    base: Path = Path("/")

    @property
    def origin(self) -> Path:
        return self.base

    def action(self, action: Action) -> str:
        # The trial screen's keys for a stand-in are a line of their own
        # (agreement_panel.NO_REPLAY_KEYS); it has no key for the others.
        return "" if action == STAND_IN else action.flag
