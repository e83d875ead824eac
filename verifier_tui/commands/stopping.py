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
there, it left the rest of the scratch folders behind; nor in :func:`holding`,
where ``test`` says what it ran whatever the timing, but for its checks before
any run (:func:`unless_stopped`), which it ends.
"""

from __future__ import annotations

import contextlib
import signal
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from verifier_tui.engine.to_the_end import cleaning_up

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine, Iterator

T = TypeVar("T")


class _Closed(Protocol):
    def close(self) -> None: ...


C = TypeVar("C", bound=_Closed)

_received: list[int] = []  # the signal that asked the command to stop, once one did
_failed_first: list[BaseException] = []  # what ended the command on its own before any signal came
_loop_task: list[Any] = []  # (loop, main task) while :func:`run` runs one
_taken: list[signal.Signals] = []  # the signals :func:`stop_cleanly_on_sigterm` took
_holding = [0]  # how many :func:`holding` blocks are open
_checking = [0]  # how many :func:`unless_stopped` checks run


def _stop(signum: int, _frame: object) -> None:
    """The handler of SIGTERM and SIGHUP (and of Ctrl+C in :func:`holding`): the first one counts,
    the others are ignored while the command cleans up and says what it ran."""
    for ours in _taken:
        signal.signal(ours, signal.SIG_IGN)
    if signal.getsignal(signal.SIGINT) is _stop:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    _received.append(signum)
    if _loop_task:
        loop, task = _loop_task[-1]
        try:
            loop.call_soon_threadsafe(task.cancel)
        except RuntimeError:  # the loop is closed already: run() raises once it returns
            pass
        return
    if cleaning_up() or (_holding[0] and not _checking[0]):
        return  # the clean-up (the report) finishes; then the command ends with status(), below
    raise SystemExit(128 + signum)


def stop_cleanly_on_sigterm() -> Callable[[], None] | None:
    """Take SIGTERM and SIGHUP for the command; returns what puts the previous
    handlers back. A signal that had another handler already (a test harness,
    an embedding program, nohup) is left alone."""
    _failed_first.clear()  # a command before this one's, in the same process
    for signum in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if signum is None:
            continue
        try:
            if signal.getsignal(signum) is not signal.SIG_DFL:
                continue
            signal.signal(signum, _stop)
        except ValueError:  # not the main thread: signals are not ours to handle
            break
        _taken.append(signum)
    if not _taken:
        return None

    def restore() -> None:
        for signum in _taken:
            signal.signal(signum, signal.SIG_DFL)
        _taken.clear()
        _received.clear()
        _failed_first.clear()

    return restore


@contextlib.contextmanager
def holding() -> Iterator[None]:
    """``test`` (``test JOB``; not ``--watch``) from its command line being read until its document and
    report are written (:func:`verifier_tui.cli.main`): a
    signal (Ctrl+C too) cancels the runs while :func:`run` runs them, and is only recorded before
    and after, the command ending with :func:`status`. Raised where it landed, it left stdout empty
    (a signal as the tasks were read, or as the document was made once every run had ended) or the
    document cut short (a SIGTERM following a Ctrl+C as the stop was reported); Ctrl+C raised
    ``KeyboardInterrupt`` wherever it landed. Not the main thread, or SIGINT not Python's own
    handler (an embedding program's): SIGINT is left alone."""
    try:
        took = signal.getsignal(signal.SIGINT) is signal.default_int_handler
        if took:
            signal.signal(signal.SIGINT, _stop)
    except ValueError:  # not the main thread
        took = False
    _holding[0] += 1
    try:
        yield
    finally:
        _holding[0] -= 1
        if took:
            signal.signal(signal.SIGINT, signal.default_int_handler)


def unless_stopped(check: Callable[[], T]) -> T | None:
    """``check()`` (``test``'s interpreter and sandbox checks, up to seconds each) ended at once by a
    signal in :func:`holding`, as outside it: None then, or when one came before; ``test`` goes on to
    say that nothing ran, where a held signal waited out a ``--python`` that never answers."""
    if _received and _holding[0]:
        return None
    _checking[0] += 1
    try:
        try:
            return check()
        finally:
            _checking[0] -= 1
    except (KeyboardInterrupt, SystemExit):
        if not (_received and _holding[0]):
            raise
        return None


def read_unless_stopped(read: Callable[[], C]) -> C | None:
    """``read()`` (``test``'s reading of its tasks or trials: seconds for thousands) as :func:`unless_stopped`
    runs a check, ended where a signal lands: None then, what was read closed, also when the signal came as
    the reading returned."""
    made: list[C] = []

    def reading() -> C:
        made.append(read())
        return made[-1]

    found = unless_stopped(reading)
    if found is None:
        for whole in made:
            whole.close()
    return found


def exit_status(stop: BaseException) -> int:
    """The exit status of a command ``stop`` ended: ``SystemExit(128 + signal)`` as :func:`run`
    raises it, or Ctrl+C's ``KeyboardInterrupt`` (130)."""
    return stop.code if isinstance(stop, SystemExit) and isinstance(stop.code, int) else 128 + signal.SIGINT


def failed(error: BaseException) -> None:
    """The command failed on its own (``error``: stdout on a full disk), said where it happened: a signal
    that lands from then on (as the other runs are cancelled, as the report is written) is no cause of its
    end, and the failure's status is the exit status, as the failure is what the command says."""
    if not _received and not _failed_first:
        _failed_first.append(error)


def failed_first(error: BaseException) -> bool:
    """Whether ``error`` is the failure :func:`failed` recorded, which :func:`run` raises again when a
    signal came after it: its command has said it already."""
    return bool(_failed_first) and error is _failed_first[0]


def status(code: int) -> int:
    """The command's exit status: ``128 + signal`` when one asked it to stop
    while it was cleaning up or :func:`holding` (it finished instead of raising there),
    unless the command had failed on its own first (:func:`failed`)."""
    return 128 + _received[0] if _received and not _failed_first else code


def run(work: Coroutine[Any, Any, Any]) -> Any:
    """``asyncio.run(work)``, where SIGTERM and SIGHUP cancel ``work`` (it
    cleans up as it does for Ctrl+C) and then end the command with
    ``SystemExit(128 + signal)``. In :func:`holding`, a ``work`` that ended
    before the cancel could reach it is returned whole all the same."""
    import asyncio

    async def main() -> Any:
        _loop_task.append((asyncio.get_running_loop(), asyncio.current_task()))
        if _received:  # recorded before the runs began (holding): none starts
            work.close()
            raise asyncio.CancelledError
        try:
            return await work
        finally:
            _loop_task.clear()  # over: a signal from here on is for holding() to record

    try:
        result = asyncio.run(main())
    except BaseException:  # a cancellation, or what the clean-up raised: the first cause decides
        if _received and _failed_first:  # the signal's cancel may have put itself over the failure
            raise _failed_first[0] from None
        if not _received:
            raise
        raise SystemExit(128 + _received[0]) from None
    finally:
        _loop_task.clear()
    if _received and not _holding[0] and not _failed_first:
        raise SystemExit(128 + _received[0])
    return result  # within holding(), whole though a signal came as it ended: status() gives 128 + it
