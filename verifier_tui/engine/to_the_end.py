"""Work that must finish: awaited to its end even when the one awaiting it
is cancelled, and clean-up that a terminating signal does not cut short."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

T = TypeVar("T")


async def to_the_end(work: Awaitable[T], on_cancel: Callable[[], None] | None = None) -> T:
    """``work``'s result, awaited to its end even if we are cancelled (any
    number of times) meanwhile: what it holds (a stage, a process, a thread
    that cannot be stopped) is never released early. ``on_cancel`` is called
    at the first cancellation (to ask the work to stop sooner). A cancellation
    that arrived is raised once the work is over, in place of its outcome (an
    error the work ended with is its cause)."""
    import asyncio

    task = asyncio.ensure_future(work)
    cancelled = False
    while not task.done():
        try:
            await asyncio.wait([task])  # cancelling the wait leaves the task alone
        except asyncio.CancelledError:
            if not cancelled and on_cancel is not None:
                on_cancel()
            cancelled = True
    if cancelled:
        raise asyncio.CancelledError from (None if task.cancelled() else task.exception())
    return task.result()


_cleaning = [0]  # how many clean-ups marked uninterrupted are running


def uninterrupted(close: Callable[..., Any]) -> Callable[..., Any]:
    """For a clean-up method (a session's, a scratch folder's): while it runs,
    :func:`cleaning_up` is true, and the headless commands' SIGTERM and SIGHUP
    handler lets it finish before the command ends, rather than raising in
    the middle of it and leaving what it was removing half there."""

    @functools.wraps(close)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        _cleaning[0] += 1
        try:
            return close(*args, **kwargs)
        finally:
            _cleaning[0] -= 1

    return wrapper


def cleaning_up() -> bool:
    return _cleaning[0] > 0
