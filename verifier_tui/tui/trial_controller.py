"""The replays of one trial's screen: requests in, messages out.

A face over the engine's :class:`~verifier_tui.engine.watch.live.LiveRuns`,
as :mod:`~verifier_tui.tui.run_controller` is for the main screen: every
change to the task (the verifier edited) re-reads the task and replays; a
request during a replay supersedes it. The sandbox side is never re-read:
it is what Harbor recorded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from verifier_tui.engine.changes import Change
from verifier_tui.engine.harbor.trial_session import Replayed, TrialSession
from verifier_tui.engine.watch.live import LiveRuns
from verifier_tui.tui.messages import VerdictStale, WatchStateChanged
from verifier_tui.tui.trial_messages import ReplayFailed, ReplayFinished, ReplayStarted

if TYPE_CHECKING:
    from textual.screen import Screen


class ReplayController:
    """Replays of ``opened`` for ``screen``; without a replay to run, requests
    report the reason at once."""

    def __init__(self, screen: Screen, opened: TrialSession, *, poll: bool = False, live_reload: bool = True) -> None:
        self.screen = screen
        self.opened = opened
        self.live: LiveRuns | None = None
        if opened.session is not None:
            live = LiveRuns(
                opened.session,
                self._run,
                supersede=True,
                force_polling=poll,
                on_result=self._on_result,
                on_error=lambda e: screen.post_message(ReplayFailed(e)),
                on_task_error=lambda reason: screen.post_message(ReplayFailed(RuntimeError(reason))),
                on_watching=lambda: screen.post_message(WatchStateChanged("watching" if live.live_reload else "off")),
                on_stale=lambda change: screen.post_message(VerdictStale(change.describe())),
            )
            live.live_reload = live_reload
            self.live = live

    @property
    def paused(self) -> bool:
        return self.live.paused if self.live is not None else False

    def request(self, trigger: str) -> None:
        if self.live is None:
            self.screen.post_message(ReplayFinished(self.opened.run(trigger), trigger))
            return
        self.live.request(trigger)

    def on_change(self, change: Change) -> None:
        """A relevant file changed (as the watcher reports it)."""
        if self.live is not None:
            self.live.on_change(change)

    async def _run(self, trigger: str, change: Change | None) -> tuple[str, Replayed]:
        if change is not None or trigger not in ("start", "stand-in chosen"):
            import asyncio

            # The task may have changed (a save, or one held while live reload
            # was off): its drift since the run (a digest of its files), its settings.
            await asyncio.to_thread(self.opened.refresh)
        self.screen.post_message(ReplayStarted(trigger))
        return trigger, await self.opened.arun(trigger)

    def _on_result(self, _change: Change | None, value: Any) -> None:
        trigger, replayed = value
        self.screen.post_message(ReplayFinished(replayed, trigger))

    def pause(self) -> None:
        if self.live is not None:
            self.live.pause()

    def resume(self) -> None:
        if self.live is not None:
            self.live.resume()

    def start_watching(self) -> None:
        if self.live is None:
            self.screen.post_message(WatchStateChanged("idle"))
            return
        self.screen.post_message(WatchStateChanged("starting"))
        self.screen.run_worker(self.live.watch(), name="watcher", group="watch", exclusive=True, exit_on_error=False)

    def set_live_reload(self, on: bool) -> None:
        """As on the task's screen: off, saves mark the replay stale and run
        nothing; on, what changed meanwhile replays (a watcher is started
        when none runs)."""
        if self.live is None:
            self.screen.post_message(WatchStateChanged("idle"))
            return
        self.live.set_live_reload(on)
        if on and self.live.targets is None:
            self.start_watching()
            self.request("live reload on")  # nothing saw the saves made meanwhile
        else:
            self.screen.post_message(WatchStateChanged("watching" if on else "off"))

    def stop_watching(self) -> None:
        if self.live is not None:
            self.live.stop_watching()
        self.screen.workers.cancel_group(self.screen, "watch")

    async def close(self) -> None:
        """Stop watching and cancel the replay in flight (waiting for its clean-up)."""
        import asyncio

        workers = [w for w in self.screen.workers if w.group == "watch"]
        self.stop_watching()
        for worker in workers:
            try:
                await asyncio.wait_for(asyncio.shield(worker.wait()), 5.0)
            except Exception:  # noqa: BLE001 - cancelled, failed or slow: we are leaving anyway
                pass
        if self.live is not None:
            await self.live.close()
