"""App-wide messages: a run's life travels as messages that carry all they need.

Tests record them with ``App.run_test(message_hook=...)``.
"""

from __future__ import annotations

from textual.message import Message

from verifier_tui.engine.model import RunResult
from verifier_tui.engine.readback import Explanation


class RunStarted(Message):
    """The runner was started for one case (or the current choices).
    ``primary`` is False for the other cases of "run all cases": their output
    is not streamed into the panels, which show the current choices."""

    def __init__(self, run_id: int, case: str | None, trigger: str, primary: bool = True) -> None:
        super().__init__()
        self.run_id = run_id
        self.case = case
        self.trigger = trigger
        self.primary = primary


class ExplainReady(Message):
    """The runner's ``--explain`` document for a run in flight: the resolution
    is shown before ``verify`` returns."""

    def __init__(self, run_id: int, explain: Explanation) -> None:
        super().__init__()
        self.run_id = run_id
        self.explain = explain


class RunFinished(Message):
    """A run ended and was not superseded. ``primary`` is False for the other
    cases of "run all cases" (they update the cases list and history only)."""

    def __init__(self, run_id: int, result: RunResult, primary: bool = True) -> None:
        super().__init__()
        self.run_id = run_id
        self.result = result
        self.primary = primary


class RunNotPossible(Message):
    """Nothing could be run (no verifier, a choice that vanished): why, in words."""

    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason


class RunFailed(Message):
    """The engine itself raised while running: shown, never a traceback."""

    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error


class ChoicesChanged(Message):
    """The session's task, verifier, case, workspace, response or task data changed."""


class WatchStateChanged(Message):
    """Live reload was turned on or off, or the watcher became ready or failed."""

    def __init__(self, state: str, detail: str = "") -> None:
        super().__init__()
        self.state = state  # "starting", "watching", "off", "failed"
        self.detail = detail


class CasesOutdated(Message):
    """The task's tests, verifier or task.toml changed: every case's mark
    from a run numbered ``through`` or lower (the session's runs so far) is
    out of date until the case runs again."""

    def __init__(self, through: int) -> None:
        super().__init__()
        self.through = through


class VerdictStale(Message):
    """With live reload off, a file the current choices read changed: the
    verdict on screen no longer says how they go. ``what`` names the change
    ("tests/verifier.py +2 more")."""

    def __init__(self, what: str) -> None:
        super().__init__()
        self.what = what
