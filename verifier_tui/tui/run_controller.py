"""The runs and the watcher of the main screen: requests in, messages out.

The engine's :class:`~verifier_tui.engine.watch.live.LiveRuns` does the
watching and the scheduling, with ``supersede=True``: a request during a run
(a save, a key, a new choice) cancels the run in flight (the engine then kills
the child's whole process group) and starts a fresh one, and the cancelled
run's result is never reported, so an old verdict can never land on screen
over a newer one. This class says what a run means on screen (run ids, live
output, "run all cases") and posts it as messages. The watcher runs in its own
worker group so that nothing done to runs can cancel it.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from verifier_tui.engine.changes import Change
from verifier_tui.engine.model import RunResult
from verifier_tui.engine.task.discovery import no_verifier_message
from verifier_tui.engine.watch.live import LiveRuns
from verifier_tui.tui.messages import (
    CasesOutdated,
    ChoicesChanged,
    ExplainReady,
    RunFailed,
    RunFinished,
    RunNotPossible,
    RunStarted,
    VerdictStale,
    WatchStateChanged,
)
from verifier_tui.tui.output_buffer import OutputBuffer

if TYPE_CHECKING:
    from textual.screen import Screen

    from verifier_tui.engine.readback import Explanation
    from verifier_tui.engine.session import Session
    from verifier_tui.engine.watch.scheduler import RunScheduler


class RunController:
    """Starts runs of ``session`` and reports them to ``screen`` as messages."""

    def __init__(self, session: Session, screen: Screen, *, live_reload: bool = True, poll: bool = False) -> None:
        self.session = session
        self.screen = screen
        self.live = LiveRuns(
            session,
            self._run,
            supersede=True,
            force_polling=poll,
            on_result=self._on_result,
            on_error=self._on_error,
            on_task_error=lambda reason: self._post(RunNotPossible(reason)),
            on_task_reloaded=lambda: self._post(ChoicesChanged()),
            on_watching=lambda: self._post(WatchStateChanged("watching" if self.live.live_reload else "off")),
            on_stale=lambda change: self._post(VerdictStale(change.describe())),
            on_outdated=lambda: self._post(CasesOutdated(session.sequence)),
        )
        self.live.live_reload = live_reload
        self.output = OutputBuffer()
        """Live output of the run in flight: fed by the run's thread, flushed to the screen ~20 times a second."""
        self._ids = itertools.count(1)
        self.current_run_id = 0
        self.running_case: str | None = None
        self.run_all_pending = False
        """Set by "run all cases"; cleared only when every case ran, so a save
        that supersedes the batch re-runs the whole batch on the new code."""

    @property
    def scheduler(self) -> RunScheduler:
        return self.live.scheduler

    @property
    def watch_ready(self) -> asyncio.Event:
        """Set once the OS watcher is in place: a file written after this is seen."""
        return self.live.watch_ready

    @property
    def live_reload(self) -> bool:
        """Whether a relevant save runs (off: it marks the verdict stale)."""
        return self.live.live_reload

    @property
    def paused(self) -> bool:
        """While the app is suspended (editor, pdb), changes are held, not run."""
        return self.live.paused

    def _post(self, message: Any) -> None:
        """Run messages go to the screen, whose widgets show them (it keeps
        receiving them while a chooser is open on top of it)."""
        self.screen.post_message(message)

    # -- requests ---------------------------------------------------------------

    def start(self) -> None:
        """The first run, then live reload (or the word that it is off)."""
        self.request("start")
        if self.live.live_reload:
            self.start_watching()
        else:
            self._post(WatchStateChanged("off"))

    def request(self, trigger: str, change: Change | None = None) -> None:
        """Run the current choices now (superseding a run in flight)."""
        self.live.request(trigger, change)

    def request_all(self) -> None:
        self.run_all_pending = True
        self.request("all cases")

    def on_change(self, change: Change) -> None:
        """A relevant file changed (as the watcher reports it)."""
        self.live.on_change(change)

    def pause(self) -> None:
        self.live.pause()

    def resume(self) -> None:
        self.live.resume()

    # -- the run itself --------------------------------------------------------------

    async def _run(self, trigger: str, change: Change | None) -> tuple[int, RunResult] | None:
        session = self.session
        if session.verifier is None:
            self._post(RunNotPossible(no_verifier_message(session.task)))
            return None
        if self.run_all_pending and session.task.cases:
            await self._run_all(trigger)
            self.run_all_pending = False
            return None
        self.run_all_pending = False
        spec = session.spec()  # without the case's expectation when its inputs are not in use
        note = session.expectation_note()
        run_id, result = await self._one(spec, trigger)
        if note is not None:
            result.notices.insert(0, note)
        return run_id, result

    async def _one(self, spec: Any, trigger: str, primary: bool = True) -> tuple[int, RunResult]:
        run_id = next(self._ids)
        self.current_run_id = run_id
        self.running_case = spec.case
        self.output.reset(run_id if primary else -1)
        self._post(RunStarted(run_id, spec.case, trigger, primary))

        def on_output(stream: str, text: str, user_paths: Callable[[str], str]) -> None:  # in the run's thread
            self.output.feed(run_id, stream, text, user_paths)

        def on_explain(explain: Explanation) -> None:
            if primary:
                self._post(ExplainReady(run_id, explain))

        try:
            result = await self.session.arun(spec, trigger=trigger, on_output=on_output, on_explain=on_explain)
        finally:
            self.running_case = None
        return run_id, result

    async def _run_all(self, trigger: str) -> None:
        session = self.session
        current = session.case.name if session.case else None
        for case in list(session.task.cases):
            spec = session.spec_for_case(case)
            primary = case.name == current
            run_id, result = await self._one(spec, trigger, primary)
            self._post(RunFinished(run_id, result, primary=primary))

    def _on_result(self, change: Change | None, value: Any) -> None:
        if value is not None:
            run_id, result = value
            self._post(RunFinished(run_id, result, primary=True))

    def _on_error(self, error: BaseException) -> None:
        self._post(RunFailed(error))

    # -- watching ----------------------------------------------------------------

    def start_watching(self, run_first: bool = False) -> None:
        """Watch the session's current targets (from a worker of its own group,
        the app's: at exit the app awaits its clean-up once the screens are
        gone); with ``run_first``, run once the watcher is in place."""
        self._post(WatchStateChanged("starting"))
        self.screen.app.run_worker(
            self.live.watch(run_first=run_first, first_trigger="live reload on"),
            name="watcher",
            group="watch",
            exclusive=True,
            exit_on_error=False,
        )

    def set_live_reload(self, on: bool) -> None:
        """Live reload on or off. Off, the watcher stays: a change is held and
        the verdict marked stale; on again, what changed meanwhile runs. When
        nothing was watching (started with --no-watch, or the watcher failed),
        nobody knows what changed: turned on, it runs once."""
        self.live.set_live_reload(on)
        watching = self.live.targets is not None
        if on and not watching:
            self.start_watching(run_first=True)
        else:
            self._post(WatchStateChanged("watching" if on else "off"))

    def restart_watching_if_needed(self) -> None:
        """New choices, new targets: also with live reload off, whose watcher marks the verdict stale."""
        self.live.restart_watch_if_needed()

    def stop_watching(self) -> None:
        self.live.stop_watching()
        app = self.screen.app
        app.workers.cancel_group(app, "watch")

    async def stop_watching_and_wait(self, timeout_s: float = 5.0) -> None:
        """Stop watching and wait until the watcher has cleaned up (at exit:
        nothing of it may outlive the event loop)."""
        workers = [w for w in self.screen.app.workers if w.group == "watch"]
        self.stop_watching()
        for worker in workers:
            try:
                await asyncio.wait_for(asyncio.shield(worker.wait()), timeout_s)
            except Exception:  # noqa: BLE001 - cancelled, failed or slow: we are leaving anyway
                pass
        # A subprocess transport finishes closing in callbacks scheduled on the
        # loop: let them run before the loop closes, or each leaves a
        # "Event loop is closed" complaint at exit.
        for _ in range(3):
            await asyncio.sleep(0.01)

    async def close(self) -> None:
        await self.live.close()
