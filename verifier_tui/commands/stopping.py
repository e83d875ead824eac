"""How a headless command ends on SIGTERM (``kill``, a CI job's timeout) or
SIGHUP (the terminal closed, an ssh session dropped): the way Ctrl+C ends it,
the run's process group ended and the scratch folder removed. Python's default
would die on the spot and leave both behind (the runner lives in its own
session, so nothing else would end it). A second such signal is ignored while
that clean-up runs.

Outside an event loop the handler raises ``SystemExit``, as Ctrl+C raises
``KeyboardInterrupt``. Inside one (``test``, ``watch``: :func:`run`) it does
what asyncio's runner does for Ctrl+C: it cancels the command's main task from
the loop itself. An exception raised at whatever line the loop happened to be
on can land inside asyncio's own bookkeeping, and a task then waits for a
wake-up that never comes (the likely cause of a ``watch`` that once outlived
SIGTERM by a minute). During a clean-up (a session's, a scratch folder's:
:func:`~verifier_tui.engine.to_the_end.uninterrupted`) it raises nothing: raised
there, it left the rest of the scratch folders behind.
"""

from __future__ import annotations

import contextlib
import signal
from typing import TYPE_CHECKING, Any

from verifier_tui.engine.to_the_end import cleaning_up

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine, Iterator

_received: list[int] = []  # the signal that asked the command to stop, once one did
_loop_task: list[Any] = []  # (loop, main task) while :func:`run` runs one


def stop_cleanly_on_sigterm() -> Callable[[], None] | None:
    """Take SIGTERM and SIGHUP for the command; returns what puts the previous
    handlers back. A signal that had another handler already (a test harness,
    an embedding program, nohup) is left alone."""
    taken: list[signal.Signals] = []

    def stop(signum: int, _frame: object) -> None:
        for ours in taken:
            signal.signal(ours, signal.SIG_IGN)
        _received.append(signum)
        if _loop_task:
            loop, task = _loop_task[-1]
            try:
                loop.call_soon_threadsafe(task.cancel)
            except RuntimeError:  # the loop is closed already: run() raises once it returns
                pass
            return
        if cleaning_up():
            return  # the clean-up finishes; then the command ends with status(), below
        raise SystemExit(128 + signum)

    for signum in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if signum is None:
            continue
        try:
            if signal.getsignal(signum) is not signal.SIG_DFL:
                continue
            signal.signal(signum, stop)
        except ValueError:  # not the main thread: signals are not ours to handle
            return None
        taken.append(signum)
    if not taken:
        return None

    def restore() -> None:
        for signum in taken:
            signal.signal(signum, signal.SIG_DFL)
        _received.clear()

    return restore


@contextlib.contextmanager
def reporting_the_stop() -> Iterator[None]:
    """While a stopped command writes what it ran (its line, ``--junit``'s
    report): a second Ctrl+C is ignored, as a second SIGTERM or SIGHUP is
    (:func:`stop_cleanly_on_sigterm`). Pressed twice, 20 ms apart, it landed
    between the stopped line and the report, and the last run's report was
    left for CI to show as this one's. Not the main thread, or SIGINT not
    Python's own handler (an embedding program's): left alone."""
    try:
        before = signal.getsignal(signal.SIGINT)
        if before is signal.default_int_handler:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread
        before = None
    try:
        yield
    finally:
        if before is signal.default_int_handler:
            signal.signal(signal.SIGINT, before)


def status(code: int) -> int:
    """The command's exit status: ``128 + signal`` when one asked it to stop
    while it was cleaning up (it finished instead of raising there)."""
    return 128 + _received[0] if _received else code


def run(work: Coroutine[Any, Any, Any]) -> Any:
    """``asyncio.run(work)``, where SIGTERM and SIGHUP cancel ``work`` (it
    cleans up as it does for Ctrl+C) and then end the command with
    ``SystemExit(128 + signal)``."""
    import asyncio

    async def main() -> Any:
        _loop_task.append((asyncio.get_running_loop(), asyncio.current_task()))
        return await work

    try:
        result = asyncio.run(main())
    except BaseException:  # a cancellation, or what the clean-up raised: the signal decides
        if not _received:
            raise
        result = None
    finally:
        _loop_task.clear()
    if _received:
        raise SystemExit(128 + _received[0])
    return result
