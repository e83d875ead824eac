"""How a trial's paths are put on screen: as they resolve from where the
user started, as everywhere else (a path relative to some other folder would
read as another folder: ``tasks/demo`` beside a ``/here/tasks/demo`` it was
chosen over). In deterministic mode (snapshots), relative to the folder that
holds both the task and the trial instead, so that the screen does not depend
on where the tests run; the rest (deterministic durations, ``~``, ANSI
stripped) is the main screen's :class:`~verifier_tui.tui.display.Display`."""

from __future__ import annotations

import os
from pathlib import Path

from verifier_tui.engine.advice import OPEN_IN_EDITOR, STAND_IN, Action
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
    ``base`` the folder paths are shown relative to in deterministic mode."""

    base: Path = Path("/")

    @property
    def origin(self) -> Path:
        return self.base if self.deterministic else self.cwd

    def action(self, action: Action) -> str:
        # The trial screen's keys for a stand-in are a line of their own
        # (agreement_panel.NO_REPLAY_KEYS); e it shares with the main screen;
        # it has no key for the others.
        if action == OPEN_IN_EDITOR:
            return super().action(action)
        return "" if action == STAND_IN else action.flag
