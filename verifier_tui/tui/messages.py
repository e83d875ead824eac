"""App-wide messages: a run's (and a trial's replay's) life travels as
messages that carry all they need.

Tests record them with ``App.run_test(message_hook=...)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from verifier_tui.engine.changes import Change
    from verifier_tui.engine.harbor.trial_session import Replayed
    from verifier_tui.engine.model import RunResult
    from verifier_tui.engine.readback import Explanation


@dataclass
class RunStarted(Message):
    """The runner was started for one case (or the current choices).
    ``primary`` is False for the other cases of "run all cases": their output
    is not streamed into the panels, which show the current choices."""

    run_id: int
    case: str | None
    trigger: str
    primary: bool = True


@dataclass
class ExplainReady(Message):
    """The runner's ``--explain`` document for a run in flight: the resolution
    is shown before ``verify`` returns."""

    run_id: int
    explain: Explanation


@dataclass
class RunFinished(Message):
    """A run ended and was not superseded. ``primary`` is False for the other
    cases of "run all cases" (they update the cases list and history only).
    ``cut``: the numbers of the runs superseded since the last that ended."""

    run_id: int
    result: RunResult
    primary: bool = True
    cut: tuple[int, ...] = ()


@dataclass
class RunNotPossible(Message):
    """Nothing could be run (no verifier, a choice that vanished): why, in words."""

    reason: str


class TaskUnreadable(Exception):
    """The task could not be read again after a change (no run follows): its words, said alone."""


@dataclass
class RunFailed(Message):
    """The engine itself raised while running or replaying: shown, never a traceback."""

    error: BaseException

    @property
    def said(self) -> str:
        """The error as a screen says it: what the user can act on (no sandbox to be had, a task that
        cannot be read again) in its own words, as every other face says it; else, a fault of the
        tool's own, named by its class too."""
        from verifier_tui.engine.sandbox.isolation import IsolationError

        if isinstance(self.error, (IsolationError, TaskUnreadable)):
            return str(self.error)
        return f"{type(self.error).__name__}: {self.error}"


class ChoicesChanged(Message):
    """The session's task, verifier, case, workspace, response or task data changed."""


@dataclass
class WatchStateChanged(Message):
    """Live reload was turned on or off, or the watcher became ready or failed."""

    state: str
    """"starting", "watching", "off", "failed" (``detail`` says why), or "idle" (nothing to watch)."""
    detail: str = ""


@dataclass
class CasesOutdated(Message):
    """The task's tests, verifier or task.toml changed: every case's mark
    from a run numbered ``through`` or lower (the session's runs so far) is
    out of date until the case runs again."""

    through: int


@dataclass
class VerdictStale(Message):
    """With live reload off, a file the current choices read changed: the
    verdict on screen no longer says how they go. ``what`` names the change
    ("tests/verifier.py +2 more"); ``change`` is that change."""

    what: str
    change: Change


@dataclass
class ReplayStarted(Message):
    """A trial's local replay started (``trigger`` says why)."""

    trigger: str


@dataclass
class ReplayFinished(Message):
    """A replay ended (or there was none to run: ``replayed.local`` is None)
    and was not superseded; ``replayed.agreement`` compares it with the sandbox."""

    replayed: Replayed
    trigger: str
