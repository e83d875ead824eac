"""The trial app, watched as a test watches it: through its own messages
(a replay's end bubbles from the trial's screen up to the app) and what it
shows. Nothing here is in the product."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.notifications import Notify

from tests.tui.app_under_test import rendered_text
from verifier_tui.engine.harbor.folders import open_harbor, select_trial
from verifier_tui.engine.harbor.trial_session import Replayed
from verifier_tui.engine.session import Options
from verifier_tui.tui.messages import ReplayFinished
from verifier_tui.tui.trial_app import TrialApp
from verifier_tui.tui.widgets.too_small import MIN_HEIGHT, MIN_WIDTH

#: The terminal the tests drive the app in: the smallest it accepts (as
#: tests/tui/app_under_test.py says why).
SIZE = (MIN_WIDTH, MIN_HEIGHT)
#: The snapshots' terminal.
SNAPSHOT_SIZE = (130, 44)


class TrialAppUnderTest(TrialApp):
    """:class:`TrialApp` plus a record of the replays that ended on screen and
    of every notification."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.replays: list[Replayed] = []
        self.notices: list[str] = []
        self._ended = asyncio.Event()

    def on_replay_finished(self, message: ReplayFinished) -> None:
        self.replays.append(message.replayed)
        self._ended.set()

    def on_notify(self, message: Notify) -> None:
        self.notices.append(message.notification.message)

    async def wait_for_replays(self, count: int, timeout: float = 30.0) -> Replayed:
        async def enough() -> None:
            while len(self.replays) < count:
                self._ended.clear()
                await self._ended.wait()

        await asyncio.wait_for(enough(), timeout)
        return self.replays[count - 1]


def make_trial_app(
    path: Path,
    *,
    trial: str | None = None,
    step: str | None = None,
    watch: bool = False,
    task: Path | None = None,
    **options,
) -> TrialAppUnderTest:
    found, in_path = open_harbor(path)
    if trial is not None:
        found, in_path = select_trial(found, trial, step)
    return TrialAppUnderTest(
        found, step or in_path, options=Options(**options), task_dir=task, watch=watch, deterministic=True
    )


def text_of(app: TrialApp, selector: str) -> str:
    """The plain text a widget of the current screen shows."""
    return rendered_text(app.screen.query_one(selector))


async def until(pilot, holds, what: str, shown=None) -> None:
    """Pauses (each until the app is idle) until ``holds()``; fails saying
    ``what`` (and ``shown(app)``) if it does not within 30 s."""

    async def paused() -> None:
        while not holds():
            await pilot.pause()

    try:
        await asyncio.wait_for(paused(), 30)
    except asyncio.TimeoutError:
        raise AssertionError(f"never: {what}" + (f"\n{shown(pilot.app)}" if shown else "")) from None
