"""What both screens that run (a task's, a trial's) share: a face over the
engine's :class:`~verifier_tui.engine.watch.live.LiveRuns`, requests in and
messages out to the screen.

``LiveRuns`` watches and schedules with ``supersede=True``: a request during a
run (a save, a key, a new choice) cancels the run in flight (the engine kills
its whole process group) and starts a fresh one, and the cancelled run's
result is never reported, so an old verdict never lands over a newer one.

The controller is the one owner of its screen's watcher: it starts it in a
worker of its own group (nothing done to runs can cancel it), says its state
as :class:`~verifier_tui.tui.messages.WatchStateChanged` (a watcher that
failed too, never a crash), and :meth:`Controller.close`, which the screen
awaits as it goes (popped, or the app quitting), ends the watcher's process
and the run in flight and waits for both.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from verifier_tui.engine.watch.live import LiveRuns
from verifier_tui.tui.messages import RunFailed, VerdictStale, WatchStateChanged

if TYPE_CHECKING:
    from textual.message import Message
    from textual.screen import Screen
    from textual.worker import Worker

    from verifier_tui.engine.changes import Change
    from verifier_tui.engine.session import Session


class Controller:
    """The runs of ``session`` for ``screen`` (without a session, nothing
    runs: :meth:`nothing_to_run` answers each request). ``hooks``: the
    subclass's own ``LiveRuns`` callbacks."""

    def __init__(
        self,
        screen: Screen[None],
        session: Session | None,
        *,
        live_reload: bool = True,
        poll: bool = False,
        **hooks: Any,
    ) -> None:
        self.screen = screen
        self.live: LiveRuns | None = None
        if session is not None:
            self.live = LiveRuns(
                session,
                self._run,
                supersede=True,
                force_polling=poll,
                on_result=self._on_result,
                on_error=lambda error: self._post(RunFailed(error)),
                on_watching=lambda: self._post(WatchStateChanged("watching" if self.live_reload else "off")),
                on_stale=lambda change: self._post(VerdictStale(change.happened(), change)),
                on_note=lambda said: screen.notify(said, severity="warning"),
                **hooks,
            )
            self.live.live_reload = live_reload
        self._live_reload = live_reload
        self._watcher: Worker[None] | None = None

    def _post(self, message: Message) -> None:
        """Run messages go to the screen, whose widgets show them (it keeps
        receiving them while a chooser is open on top of it)."""
        self.screen.post_message(message)

    @property
    def live_reload(self) -> bool:
        """Whether a relevant save runs (off: it marks the verdict stale)."""
        return self.live.live_reload if self.live is not None else self._live_reload

    # -- what the subclass says -------------------------------------------------------

    async def _run(self, trigger: str, change: Change | None) -> Any:
        """One run for the screen; what it returns goes to :meth:`_on_result`."""
        raise NotImplementedError

    def _on_result(self, change: Change | None, value: Any) -> None:
        raise NotImplementedError

    def nothing_to_run(self, trigger: str) -> None:
        """A request without a session."""

    # -- requests ---------------------------------------------------------------------

    def start(self, trigger: str = "start") -> None:
        """The first run, then live reload (or the word that it is off)."""
        self.request(trigger)
        if self.live_reload:
            self.start_watching()
        else:
            self._post(WatchStateChanged("off"))

    def request(self, trigger: str, change: Change | None = None) -> None:
        """Run now (superseding a run in flight)."""
        if self.live is None:
            self.nothing_to_run(trigger)
        else:
            self.live.request(trigger, change)

    def on_change(self, change: Change) -> None:
        """A relevant file changed (as the watcher reports it)."""
        if self.live is not None:
            self.live.on_change(change)

    def pause(self) -> None:
        if self.live is not None:
            self.live.pause()

    def resume(self) -> None:
        if self.live is not None:
            self.live.resume()

    def drop_held(self) -> bool:
        """Forget the saves held while paused (not a key's request); whether there were any."""
        return self.live.drop_held() if self.live is not None else False

    # -- the watcher --------------------------------------------------------------------

    def start_watching(self, run_first: bool = False) -> None:
        """Watch the session's current targets; with ``run_first``, run once
        the watcher is in place (nothing saw what changed before it)."""
        if self.live is None:
            self._post(WatchStateChanged("idle"))
            return
        self._post(WatchStateChanged("starting"))
        self._watcher = self.screen.run_worker(
            self._watch(self.live, run_first), name="watcher", group="watch", exclusive=True
        )

    async def _watch(self, live: LiveRuns, run_first: bool) -> None:
        try:
            await live.watch(run_first=run_first, first_trigger="live reload on")
        except Exception as error:  # noqa: BLE001 - said on the status line, w retries
            self._post(WatchStateChanged("failed", f"{type(error).__name__}: {error}"))

    def set_live_reload(self, on: bool) -> None:
        """Live reload on or off. Off, the watcher stays: a change is held and
        the verdict marked stale; on again, what changed meanwhile runs. When
        nothing was watching (started without it, or the watcher failed),
        nobody knows what changed: turned on, it runs once."""
        self._live_reload = on
        if self.live is None:
            self._post(WatchStateChanged("idle"))
            return
        self.live.set_live_reload(on)
        if on and self.live.targets is None:
            self.start_watching(run_first=True)
        else:
            self._post(WatchStateChanged("watching" if on else "off"))

    async def close(self, timeout_s: float = 5.0) -> None:
        """Stop watching, cancel the run in flight, and wait until the
        watcher's process and the run's have ended: nothing of them may
        outlive the screen, or the event loop at exit."""
        watcher, self._watcher = self._watcher, None
        if self.live is not None:
            self.live.stop_watching()
        if watcher is not None:
            watcher.cancel()
            try:
                await asyncio.wait_for(asyncio.shield(watcher.wait()), timeout_s)
            except Exception:  # noqa: BLE001 - cancelled, failed or slow: we are leaving anyway
                pass
        if self.live is not None:
            await self.live.close()
        # A subprocess transport finishes closing in callbacks scheduled on the
        # loop: let them run before the loop closes, or each leaves an
        # "Event loop is closed" complaint at exit.
        for _ in range(3):
            await asyncio.sleep(0.01)
