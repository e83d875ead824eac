"""``watch`` on a terminal, the same for a task (``watch TASK``) and a Harbor
trial (``watch TRIAL``): each command prepares its own run and its own lines;
how the watch runs and how it ends are said here once (how it ends also for
``test --watch``'s rounds)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from verifier_tui.commands import stopping, terminal

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Coroutine

    from verifier_tui.engine.changes import Change
    from verifier_tui.engine.session import Session


def watch_to_the_end(work: Coroutine[Any, Any, Any], poll: bool) -> str | None:
    """Run the command's watch ``work`` until Ctrl+C (or SIGTERM) ends it;
    None, or why it could not watch (e.g. the inotify watch limit), in one line
    with what to try."""
    from verifier_tui.engine.watch.channel import WatchError

    try:
        stopping.run(work)
    except KeyboardInterrupt:
        pass
    except WatchError as exc:
        hint = "" if poll else " (--poll watches without OS events)"
        return f"{exc}{hint}"
    return None


async def watch_session(
    session: Session, run: Callable[[str, Change | None], Awaitable[Any]], poll: bool, failed: str
) -> None:
    """``run`` first, then again on each change a run reads, until stopped. A
    run that raises is one line on stderr (``{failed}: {exc}``), as are a task
    that cannot be re-read and a change that is not run."""
    import asyncio

    from verifier_tui.engine.watch.live import LiveRuns

    def on_error(exc: BaseException) -> None:
        terminal.error(f"{failed}: {exc}")

    live = LiveRuns(
        session, run, force_polling=poll, on_error=on_error, on_task_error=terminal.error, on_note=terminal.error
    )
    # Nobody reads the stream any more (| head -1 exited): stop, as Ctrl+C would, rather than run on for no one.
    reader = asyncio.ensure_future(terminal.until_reader_gone(live.stop_watching))
    try:
        await live.watch(run_first=True)
    finally:
        reader.cancel()
        await live.close()
