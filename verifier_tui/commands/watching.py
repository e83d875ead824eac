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
    except OSError as exc:
        # stopping.run raises the stdout's failure again when a signal came after it; the failure was
        # said already (its run's line) and the watch ends with its status, not a second line of it.
        if not stopping.failed_first(exc):
            raise
    return None


async def watch_session(
    session: Session,
    run: Callable[[str, Change | None], Awaitable[Any]],
    poll: bool,
    what: str,
    *,
    json: bool,
    started: Callable[[], int],
    trigger_said: Callable[[str, Change | None], str] = lambda trigger, _change: trigger,
) -> None:
    """``run`` first, then again on each change a run reads, until stopped. A
    run that raises is one line on stderr (``{what} failed: {exc}``), as are a task
    that cannot be re-read and a change that is not run. A change during a run ends
    that run, said in a line (nothing with ``json``), and runs the files as saved;
    ``trigger_said(trigger, change)``: what set a run off, as the command's run lines say it;
    ``started()``: how many runs the command has started, the number its lines give the last."""
    import asyncio

    from verifier_tui.engine.watch.live import LiveRuns
    from verifier_tui.words.run import run_numbers, trigger_words
    from verifier_tui.words.text import one_line

    def on_error(exc: BaseException) -> None:
        terminal.error(f"{what} failed: {exc}")

    # The numbers of the runs cut short since the last run that ended: a stream of changes (git checkout)
    # cuts several, said in one line as it starts and one as it ends, so the numbers' gap reads (#1, run #2
    # cut short, #38 alone left 3 to 37 unsaid); a run cut before it started has no number, and no line.
    cut: list[int] = []

    def said_cut_too() -> None:
        if len(cut) > 1 and not json:
            runs = f"{what}{'s' * (len(cut) > 2)} {run_numbers(cut[1:])}"
            terminal.out(f"      {runs} cut short too: the files went on changing")
        cut.clear()

    async def run_or_cut_short(trigger: str, change: Change | None) -> Any:
        before = started()
        try:
            result = await run(trigger, change)
        except asyncio.CancelledError:
            # a save, not Ctrl+C (it drops the pending)
            if live.scheduler.pending and not json and started() > before:
                if not cut:
                    # As the run lines say it: a file's name on one line, its escapes shown, never obeyed.
                    said = trigger_words(one_line(trigger_said(trigger, change)))
                    terminal.out(f"{what} #{started()} cut short ({said}): a file changed meanwhile, and it runs again")
                    terminal.flush()
                cut.append(started())
            raise
        except BaseException:
            said_cut_too()
            raise
        said_cut_too()
        return result

    # Superseding, as the TUI's runs and test --watch's rounds: a run stuck in a loop kept the fix saved
    # meanwhile waiting for its timeout (often 600 s in Harbor's tasks), with not a word, and a run of a
    # tree half checked out printed a verdict of files no longer there. (In the copy sandbox a change
    # during a run still waits for its end: LiveRuns holds it, to tell the run's own writes.)
    live = LiveRuns(
        session,
        run_or_cut_short,
        supersede=True,
        force_polling=poll,
        on_error=on_error,
        on_task_error=terminal.error,
        on_note=terminal.error,
    )
    # Nobody reads the stream any more (| head -1 exited): stop, as Ctrl+C would, rather than run on for no one.
    reader = asyncio.ensure_future(terminal.until_reader_gone(live.stop_watching))
    try:
        await live.watch(run_first=True)
    finally:
        reader.cancel()
        await live.close()
