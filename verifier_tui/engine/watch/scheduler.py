"""One run at a time, at most one pending: :class:`RunScheduler`."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from verifier_tui.engine.changes import Change

logger = logging.getLogger(__name__)


class RunScheduler:
    """One run at a time, at most one pending.

    ``request(change)`` starts a run now when idle; during a run it merges the
    change into the single pending request, which starts as soon as the run
    ends. So a change that lands mid-run is never dropped, and ten of them give
    exactly one more run.

    With ``supersede=True`` (the TUI, ``watch``, ``test --watch``'s rounds), a
    request during a run also cancels the in-flight run: its coroutine receives
    ``CancelledError`` and must clean up (kill its process group); the pending run starts as soon as that cleanup
    is done (not before, so two runs never share the scratch folder), and the
    cancelled run's result is never reported.

    A run that raised goes to ``on_error`` (logged when there is none); the
    result of one that returned goes to ``on_result``, unless it was
    superseded or :meth:`close` came; a run that ended cancelled reports nothing.
    """

    def __init__(
        self,
        run: Callable[[Change | None], Awaitable[Any]],
        *,
        supersede: bool = False,
        on_error: Callable[[BaseException], Any] | None = None,
        on_result: Callable[[Change | None, Any], Any] | None = None,
    ) -> None:
        self._run = run
        self.supersede = supersede
        self._on_error = on_error
        self._on_result = on_result
        self._task: asyncio.Task[Any] | None = None
        self._task_superseded = False
        self._running: Change | None = None  # what the run in flight was asked for
        self._has_pending = False
        self._pending: Change | None = None
        self._closed = False
        self._idle = asyncio.Event()
        self._idle.set()
        self.latest_result: Any = None
        """The result of the last run that finished without being superseded."""

    @property
    def busy(self) -> bool:
        return self._task is not None

    @property
    def pending(self) -> bool:
        return self._has_pending

    def request(self, change: Change | None = None) -> None:
        """Ask for a run for ``change`` (None: no file changed, e.g. the user
        pressed "run"). Must be called on the event loop's thread."""
        if self._closed:
            return
        if self._task is None:
            self._start(change)
            return
        self._pending = Change.combine(self._pending, change) if self._has_pending else change
        self._has_pending = True
        if self.supersede and not self._task_superseded:
            self._task_superseded = True
            self._task.cancel()
            # The run that takes its place is the first to read what the cancelled one was for: it is
            # named after both ("workspace/hello.txt +1 more"), not after the last save alone. A key's
            # request (None) keeps its own words ("r key").
            if self._pending is not None:
                self._pending = Change.combine(self._running, self._pending)

    async def drain(self) -> None:
        """Wait until no run is in flight and none is pending."""
        while self._task is not None or self._has_pending:
            await self._idle.wait()
            await asyncio.sleep(0)  # never spin without yielding to the loop

    async def close(self) -> None:
        """Drop the pending request, cancel the run in flight, wait for its cleanup."""
        self._closed = True
        self._has_pending = False
        self._pending = None
        task = self._task
        if task is not None:
            task.cancel()
            await asyncio.wait({task})
            # Let the done-callback run, so nothing of this run is left to report.
            while self._task is task:
                await asyncio.sleep(0)
        self._idle.set()

    def _start(self, change: Change | None) -> None:
        self._idle.clear()
        self._task_superseded = False
        self._running = change

        async def invoke() -> Any:
            return await self._run(change)

        task = asyncio.get_running_loop().create_task(invoke())
        self._task = task
        task.add_done_callback(lambda t: self._on_done(t, change))

    def _on_done(self, task: asyncio.Task[Any], change: Change | None) -> None:
        superseded = self._task_superseded
        self._task = None
        self._task_superseded = False
        # A run superseded or cancelled by close() reports nothing, even one
        # that swallowed its cancellation and returned: its result is stale.
        if not task.cancelled():
            if (error := task.exception()) is not None:
                self._call(self._on_error, error, what="on_error", fallback_error=error)
            elif not (superseded or self._closed):
                self.latest_result = task.result()
                if self._on_result is not None:
                    self._call(self._on_result, change, self.latest_result, what="on_result")
        if self._has_pending and not self._closed:
            pending, self._pending, self._has_pending = self._pending, None, False
            self._start(pending)
        else:
            self._idle.set()

    def _call(
        self,
        callback: Callable[..., Any] | None,
        *args: Any,
        what: str,
        fallback_error: BaseException | None = None,
    ) -> None:
        if callback is None:
            if fallback_error is not None:
                logger.error("run failed", exc_info=fallback_error)
            return
        try:
            callback(*args)
        except Exception:
            logger.exception("RunScheduler %s callback raised", what)
