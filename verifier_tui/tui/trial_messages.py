"""The messages of a trial's screen: a replay's life, carrying all it needs.

Tests record them with ``App.run_test(message_hook=...)``.
"""

from __future__ import annotations

from textual.message import Message

from verifier_tui.engine.harbor.trial_session import Replayed


class ReplayStarted(Message):
    """The local replay started (``trigger`` says why)."""

    def __init__(self, trigger: str) -> None:
        super().__init__()
        self.trigger = trigger


class ReplayFinished(Message):
    """A replay ended (or there was none to run: ``replayed.local`` is None)
    and was not superseded; ``replayed.agreement`` compares it with the sandbox."""

    def __init__(self, replayed: Replayed, trigger: str) -> None:
        super().__init__()
        self.replayed = replayed
        self.trigger = trigger


class ReplayFailed(Message):
    """The engine itself raised while replaying: shown, never a traceback."""

    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error
