"""The replays of one trial's screen, over the
:class:`~verifier_tui.tui.controller.Controller` both screens share: every
change to the task (the verifier edited) re-reads the task and replays. The
sandbox side is what Harbor recorded: only the screen's r re-reads it, on a
trial Harbor had not ended.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from verifier_tui.tui.controller import Controller
from verifier_tui.tui.messages import ReplayFinished, ReplayStarted, RunFailed, TaskUnreadable
from verifier_tui.words.trial import change_words

if TYPE_CHECKING:
    from textual.screen import Screen

    from verifier_tui.engine.changes import Change
    from verifier_tui.engine.harbor.trial_session import Replayed, TrialSession


#: The trigger of a replay after its trial's folder was read again (its task then too).
READ_AGAIN = "trial read again"


class ReplayController(Controller):
    """Replays of ``opened`` for ``screen``; without a replay to run (no
    session: the task was not found, no stand-in for /app), each request
    reports the reason at once."""

    def __init__(
        self, screen: Screen[None], opened: TrialSession, *, poll: bool = False, live_reload: bool = True
    ) -> None:
        super().__init__(
            screen,
            opened.session,
            live_reload=live_reload,
            poll=poll,
            on_task_error=lambda reason: self._post(RunFailed(TaskUnreadable(reason))),
        )
        self.opened = opened

    def nothing_to_run(self, trigger: str) -> None:
        self._post(ReplayFinished(self.opened.run(trigger), trigger))

    async def _run(self, trigger: str, change: Change | None) -> tuple[str, Replayed]:
        if change is not None:
            trigger = change_words(self.opened, trigger, change)
        if change is not None or trigger not in ("start", "stand-in chosen", READ_AGAIN):
            # The task may have changed (a save, or one held while live reload
            # was off): its drift since the run (a digest of its files), its settings.
            await asyncio.to_thread(self.opened.refresh)
        self._post(ReplayStarted(trigger))
        return trigger, await self.opened.arun(trigger)

    def _on_result(self, _change: Change | None, value: Any) -> None:
        trigger, replayed = value
        self._post(ReplayFinished(replayed, trigger))
