"""Run one child process: bounded output, a timeout, and nothing left behind.

One blocking core, :func:`run_process`, which asyncio callers run in a
thread of its own (:func:`in_a_thread`): the way watchfiles serves
``run_process`` and ``arun_process`` from one implementation. A session's run
calls the core in line (the headless ``run``) or in such a thread (the TUI,
``watch``, ``test``).

The child gets its own session (so its own process group), ``stdin`` from
``/dev/null`` and two pipes. One selector waits on both pipes, on the child's
pidfd (Linux: the leader's exit is noticed at once, even while a grandchild
holds the pipes open) and on a wake-up pipe that cancellation writes to. Both
pipes are drained as data arrives, whatever their line lengths; each stream
keeps a bounded head and tail and counts what it dropped between them
(:mod:`verifier_tui.engine.capture`), so a verifier printing gigabytes costs a
fixed amount of memory.

When the time is up, or the run is cancelled, the whole group gets SIGTERM,
then SIGKILL after a grace period, and the leader is reaped. At a timeout a
``before_kill`` hook may first ask the child for something (the runner's
stack dump, :mod:`verifier_tui.engine.stacks`): output is read on for
:data:`BEFORE_KILL_WAIT_S` at most, until stderr goes quiet, before the group
is ended. When the leader
exits on its own, whatever it left running in its group is SIGKILLed. A process
that left the group (``setsid``, a daemonising double fork) is beyond
``killpg``; if it still holds a pipe we stop reading after
:data:`DRAIN_AFTER_EXIT_S` and say so in ``ProcessResult.output_cut_short``.

Over 500 lines on purpose: the one driver both faces share, and the code
that ends a child's group is only right read beside the loop that reads its
pipes (the drain, the grace period and the strays all depend on when the
leader exited); split, each half would hold half of one state machine.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import selectors
import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from verifier_tui.engine import procfs
from verifier_tui.engine.capture import DEFAULT_CAP_BYTES, BoundedCapture
from verifier_tui.engine.model import CapturedText
from verifier_tui.engine.record import record

T = TypeVar("T")

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Callable, Iterable
    from pathlib import Path

DRAIN_AFTER_EXIT_S = 1.0
"""How long to keep reading after the leader exited and its group was killed.
Pipes normally close at once then (only what is still in the pipe buffer is
left to read); this only bounds the case of a process that escaped the group
and holds a pipe open."""

DEFAULT_GRACE_S = 2.0
"""Between SIGTERM and SIGKILL when a run times out or is superseded: time
for a verifier's own clean-up handlers."""

INTERRUPT_GRACE_S = 0.2
"""The same, when the user stopped the tool (Ctrl+C, SIGTERM to ``run``):
they asked for it to end now."""

BEFORE_KILL_WAIT_S = 0.2
"""At a timeout, after ``before_kill`` asked the child for something: how
long to read on for it at most before the group is ended. faulthandler writes
a stack dump from its signal handler in one go, so it takes milliseconds."""

INIT_LIST_WAIT_S = 1.0
"""A namespace run whose runner ignored SIGTERM: after the rest of its group
was killed, how long its init has to list the strays and exit (milliseconds
as a rule)."""

LIST_GRACE_S = 2.0
"""A namespace run whose runner exited before its timeout while its init was
still listing the strays (a thousand of them, one program each): how long
past the timeout the listing may go on before it is cut short. The timeout
is the runner's alone, as Harbor's covers test.sh alone."""

_QUIET_S = 0.02
"""...and once stderr has received something, this long without more ends the wait."""

MEMORY_CHECK_S = 0.02
"""How often a run with a memory limit is measured: a verifier allocating
1 GB a second passes the limit by about 20 MB before it is caught."""

RUNNER_END_POLL_S = 0.05
"""A namespace run: how often it is checked whether its init has said the
runner exited (one small read while it has not): the runner's duration ends
then, not when the init is done listing its strays (see ``runner_over``)."""

GO_POLL_S = 0.01
"""A held run told to go: how often it is checked whether its runner has read
the go yet (a module ``--preload`` imports may still be importing)."""

_CHUNK = 64 * 1024
_NO_PIDFD_POLL_S = 0.05  # without a pidfd, how often the leader's exit is checked


@record(frozen=True)
class ProcessResult:
    """How one child process ended and what it printed."""

    returncode: int | None
    """The exit status; negative when a signal ended it (subprocess's
    convention); None when the process never started."""
    signal: int | None
    """The signal that ended the process (from a negative ``returncode``)."""
    timed_out: bool
    """True when the timeout passed and we ended the process group."""
    start_error: str | None
    """Why the process could not start, e.g. ``"python3: No such file or directory"``."""
    stdout: CapturedText
    stderr: CapturedText
    duration_s: float
    """From just before the spawn to the leader's exit (``time.perf_counter``);
    in a view whose runner was over at the timeout while its init still listed
    the strays, to the timeout (the runner's exit came by then, the leader's
    later)."""
    pipe_wait_s: float = 0.0
    """After the leader's exit, how long its pipes stayed open (a process
    outside the group holding them): not part of ``duration_s``."""
    pid: int | None = None
    killed_leftovers: bool = False
    """The leader exited but left processes running in its group; we killed them."""
    output_cut_short: bool = False
    """A pipe was still open after the leader exited (held by a process
    outside the group); we stopped reading it after :data:`DRAIN_AFTER_EXIT_S`."""
    strays: tuple[str, ...] = ()
    """The command lines of the processes found still running once the leader
    was over (by ``marker``, see :data:`MARKER`); all were ended."""
    asked_before_kill: bool = False
    """At the timeout, ``before_kill`` said it asked the child for something
    (and output was read on for it, :data:`BEFORE_KILL_WAIT_S` at most)."""
    oom_killed: tuple[tuple[str, int], ...] = ()
    """(command line, resident bytes of the run then) of each process killed
    for passing ``memory_limit``."""
    listing_cut_short: bool = False
    """The view's init was still listing the strays when the run was ended:
    :data:`LIST_GRACE_S` after the timeout, the runner over in time; or, the
    run timed out, once SIGTERM's grace and :data:`INIT_LIST_WAIT_S` were over."""


class Attachment(Protocol):
    """What a run's start needs besides its command line (the sandbox's
    network helper and cgroups, :mod:`verifier_tui.engine.sandbox.network`,
    :mod:`~verifier_tui.engine.sandbox.cgroup`): pipes (their numbers) or
    files (their paths) that replace their stand-ins in the command line, a
    step once the child started, and an end with the run."""

    def open(self) -> dict[str, int | str]: ...

    def started(self, started: bool) -> None: ...

    def close(self) -> None: ...


class ProcessCancelled(Exception):
    """The run was cancelled; its process group is gone and the leader reaped."""


class NoThread(Exception):
    """:func:`in_a_thread` could not set its work going (no descriptor for the
    pipe that cancels it, under a tiny ``ulimit -n``; no thread): the work never
    ran. Its ``__cause__`` says why."""


class CancelSignal:
    """Cancels a :func:`run_process` from another thread: :meth:`set` wakes
    its selector at once through a pipe (no polling)."""

    def __init__(self) -> None:
        self._read, self._write = os.pipe()
        os.set_blocking(self._write, False)
        self.is_set = False

    def set(self) -> None:
        if not self.is_set:
            self.is_set = True
            try:
                os.write(self._write, b"x")
            except OSError:  # closed already: the run is over
                pass

    def fileno(self) -> int:
        return self._read

    def close(self) -> None:
        for fd in (self._read, self._write):
            try:
                os.close(fd)
            except OSError:
                pass


def run_process(
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    timeout_s: float | None,
    cap_bytes: int = DEFAULT_CAP_BYTES,
    grace_s: float = DEFAULT_GRACE_S,
    on_output: Callable[[str, str], None] | None = None,
    cancel: CancelSignal | None = None,
    marker: str | None = None,
    before_kill: Callable[[int], bool] | None = None,
    init_lists_strays: bool = False,
    runner_over: Callable[[int], bool] | None = None,
    memory_limit: int | None = None,
    memory_extra: Callable[[int], int] | None = None,
    held: Held | None = None,
    attach: Attachment | None = None,
    cpus: tuple[int, ...] = (),
) -> ProcessResult:
    """Run ``argv`` in its own process group to its end and capture its output, bounded.

    ``env`` is the child's whole environment (nothing is inherited). Each of
    stdout and stderr keeps its first and last ``cap_bytes // 2`` bytes.
    ``on_output(stream, text)`` is called (in this thread) for every decoded
    chunk as it arrives (``stream`` is ``"stdout"`` or ``"stderr"``); its
    exceptions are ignored. ``timeout_s=None`` waits as long as it takes.

    Never raises for a child that cannot start (``start_error`` says why). When
    ``cancel`` is set, the group is ended (SIGTERM, ``grace_s``, SIGKILL), the
    leader reaped, and then :class:`ProcessCancelled` is raised. An exception
    in this thread (Ctrl+C) ends the group the same way before it propagates.

    ``marker``: the token of :data:`MARKER` in
    ``env``; once the leader is over, every process that carries it (those
    that left the group too) is ended, and listed in ``strays``.

    ``before_kill(pid)``: called with the leader's pid when the timeout
    passes, before the group is ended (not on cancellation). When it returns
    True it asked the child to write something (a stack dump): output is read
    on until stderr has been quiet for a moment, :data:`BEFORE_KILL_WAIT_S` at
    most. Its exceptions are ignored.

    ``init_lists_strays``: the leader (bwrap) starts a PID namespace whose
    init (the leader's child) lists what is still running once the runner is
    gone (:mod:`verifier_tui.engine.sandbox.isolation`). The run's signals then
    go to the processes in it, never to the leader (whose death ends the
    namespace at once) or the init; when the runner ignored SIGTERM, all but
    the init are killed and the init gets a moment to write that list before
    the leader is killed too. ``runner_over(leader)``: whether the runner
    exited already and the init is listing the strays, asked every
    :data:`RUNNER_END_POLL_S` (``duration_s`` ends when it is first so) and at
    the timeout; if so then, the run is not timed out: the listing gets
    :data:`LIST_GRACE_S`, then the run is ended (``listing_cut_short``).

    ``memory_limit``: bytes the leader and its descendants may hold together,
    counted as a memory cgroup counts them: their anonymous and shared memory
    (proportional set size, :func:`~verifier_tui.engine.procfs.memory_bytes`),
    the memory files they hold (:func:`~verifier_tui.engine.procfs.memfd_bytes`),
    their page tables and threads' kernel stacks (:func:`~verifier_tui.engine.procfs.kernel_bytes`)
    and ``memory_extra(leader)`` (the view's tmpfs). Past it the biggest of
    them is SIGKILLed, as the kernel's OOM killer does in a container over
    its ``memory_mb``. Checked every :data:`MEMORY_CHECK_S`; what was killed
    is in ``oom_killed``.

    ``held``: the child, started ahead with this same ``argv``, ``cwd`` and
    ``env`` (:class:`Held`), is told to go instead of a new one being
    started; the timeout and ``duration_s`` count from when its runner read
    the go (see :meth:`_Child.wait_for_exit`).

    ``attach``: see :class:`Attachment`; closed when the run is over.
    ``cpus``: see :func:`popen`.
    """
    started = time.perf_counter()
    if not argv:
        return _not_started("empty command", started)
    if held is not None:
        proc = held.go()
        attach = held.attach
        started = time.perf_counter()
    else:
        try:
            proc = _start(argv, cwd, env, attach=attach, cpus=cpus)
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            if attach is not None:
                attach.close()
            return _not_started(_start_error_text(argv, exc), started)
    child = _Child(proc, cap_bytes, on_output, cancel, marker, before_kill, init_lists_strays, memory_limit)
    child.memory_extra, child.runner_over = memory_extra, runner_over
    child.started, child.held = started, held
    try:
        try:
            child.wait_for_exit(timeout_s, grace_s)
        except BaseException:
            child.end_group(INTERRUPT_GRACE_S)
            raise
        child.drain()
    finally:
        child.close()
        if attach is not None:
            attach.close()
    code = proc.returncode
    return ProcessResult(
        returncode=code,
        signal=-code if code is not None and code < 0 else None,
        timed_out=child.timed_out,
        start_error=None,
        stdout=child.captures[0].result(),
        stderr=child.captures[1].result(),
        duration_s=(child.exited_at if child.runner_ended_by is None else child.runner_ended_by) - child.started,
        pipe_wait_s=child.pipes_closed_at - child.exited_at,
        pid=proc.pid,
        killed_leftovers=child.killed_leftovers,
        output_cut_short=child.output_cut_short,
        strays=tuple(child.strays.values()),
        asked_before_kill=child.asked_before_kill,
        oom_killed=tuple(child.oom_killed),
        listing_cut_short=child.listing_cut_short,
    )


async def in_a_thread(work: Callable[..., T]) -> T:
    """``work(cancel=CancelSignal)``, blocking work that ends its process
    group when told to (:func:`run_process`, or a run that calls it), from
    asyncio in a thread of its own.

    Output callbacks are called in that thread, as :func:`run_process` calls
    them: they must be quick and thread-safe. Not on the event loop: a flood
    arrives faster than a loop takes callbacks, and the queue of chunks would
    grow without bound, with every key waiting behind it.

    If the awaiting task is cancelled, the work is told at once; the process
    group is ended (SIGTERM, ``grace_s``, SIGKILL) and the leader reaped, and
    only then does the cancellation propagate (a second cancellation
    meanwhile changes nothing). :class:`NoThread` when the work could not be
    set going at all.
    """
    import asyncio
    import threading

    from verifier_tui.engine.to_the_end import to_the_end

    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()
    try:
        cancel = CancelSignal()
    except OSError as exc:
        raise NoThread from exc

    def in_the_thread() -> None:
        outcome: tuple[T | None, BaseException | None]
        try:
            outcome = (work(cancel=cancel), None)
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task
            outcome = (None, exc)
        try:
            loop.call_soon_threadsafe(_settle, done, outcome)
        except RuntimeError:  # the loop closed meanwhile: nobody is waiting
            pass

    # A thread per run (not the default executor, whose few workers `test`
    # would queue behind), and not a daemon: the interpreter waits for the
    # group to be ended before it exits.
    try:
        try:
            threading.Thread(target=in_the_thread, name="verifier-tui-run", daemon=False).start()
        except RuntimeError as exc:  # "can't start new thread": a process limit
            raise NoThread from exc
        return await to_the_end(done, on_cancel=cancel.set)
    finally:
        cancel.close()


def _start(
    argv: list[str],
    cwd: Path,
    env: dict[str, str],
    pass_fds: tuple[int, ...] = (),
    attach: Attachment | None = None,
    cpus: tuple[int, ...] = (),
) -> subprocess.Popen[bytes]:
    return popen(
        argv,
        attach=attach,
        cpus=cpus,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        pass_fds=pass_fds,
    )


def popen(
    argv: list[str],
    *,
    attach: Attachment | None = None,
    pass_fds: tuple[int, ...] = (),
    cpus: tuple[int, ...] = (),
    **options: Any,
) -> subprocess.Popen[bytes]:
    """``subprocess.Popen(argv, **options)`` with ``attach``'s pipes in place
    of their stand-ins and its step once the child started (the caller
    closes it when the child is over); with ``cpus``, the child and all it
    starts bound to those CPUs (the task's ``cpus``, see
    :func:`~verifier_tui.engine.invocation.leased_cpus`)."""
    fds = attach.open() if attach is not None else {}
    started = False
    try:
        # Linux keeps a CPU affinity per thread, and a child starts with its
        # parent thread's: this thread is bound only while it starts the
        # child, so no program is started just to bind it, and the helper
        # attached next and this thread's reading of the output stay off the
        # run's CPUs.
        before = os.sched_getaffinity(0) if cpus else None
        if cpus:
            os.sched_setaffinity(0, cpus)
        try:
            proc = subprocess.Popen(
                [str(fds[word]) if word in fds else word for word in argv],
                pass_fds=(*pass_fds, *(fd for fd in fds.values() if isinstance(fd, int))),
                **options,
            )
        finally:
            if before is not None:
                os.sched_setaffinity(0, before)
        started = True
    finally:
        if attach is not None:
            attach.started(started)
    return proc


HELD_GOING_S = 5.0
"""How long ending a held run waits for its view's processes to go (SIGKILLed, they run nothing more)."""


class Held:
    """A child started ahead of its run, as :func:`run_process` starts one,
    that waits before doing anything: the runner reads one byte from a pipe
    of its own, whose number is in ``env[variable]`` (the runner removes the
    variable; the pipe is at 10 or above, clear of the fds the view's
    init uses). :func:`run_process` with ``held=`` says go; :meth:`discard`
    ends it unrun.

    Start it from a thread that outlives it: the parent-death signal that
    ends it should the tool be SIGKILLed follows the thread that started it."""

    def __init__(
        self, argv: list[str], *, cwd: Path, env: dict[str, str], variable: str, attach: Attachment | None = None
    ) -> None:
        import fcntl

        read, write = os.pipe()
        try:
            high = fcntl.fcntl(read, fcntl.F_DUPFD_CLOEXEC, 10)
        except BaseException:
            os.close(read)
            os.close(write)
            raise
        # Kept here (never passed on): once the run is over, whether the runner read its go.
        self._unread: int | None = read
        self.attach = attach
        try:
            self.proc = _start(argv, cwd, dict(env, **{variable: str(high)}), pass_fds=(high,), attach=attach)
        except BaseException:
            os.close(write)
            os.close(read)
            if attach is not None:
                attach.close()
            raise
        finally:
            os.close(high)
        self._go: int | None = write
        self.over = False
        """Told to go, or discarded: no longer held."""
        self.went = False
        """Told to go (not discarded)."""
        self.cpus: tuple[int, ...] = ()
        """The CPUs the runner binds itself to when told to go (none: as it is)."""

    @property
    def waiting(self) -> bool:
        """Still held and alive (a namespace that failed to set up has exited)."""
        return not self.over and self.proc.poll() is None

    def go(self) -> subprocess.Popen[bytes]:
        self.over = self.went = True
        fd, self._go = self._go, None
        if fd is not None:
            try:
                os.write(fd, b"g" + ",".join(map(str, self.cpus)).encode())
            except OSError:  # it died meanwhile: the run reports how
                pass
            os.close(fd)
        return self.proc

    def go_is_read(self) -> bool:
        """Told to go: whether the runner has read it (nothing of it is left
        in the pipe, by the end kept here). True when it cannot be known."""
        if self._unread is None:
            return True
        import fcntl
        import termios

        try:
            left = fcntl.ioctl(self._unread, termios.FIONREAD, bytes(4))
        except OSError:
            return True
        return int.from_bytes(left, sys.byteorder) == 0

    def read_its_go(self) -> bool:
        """Once the run it went as is over: whether the runner read its go.
        One that ended before it did (a module ``--preload`` imported ended
        its interpreter: ``os._exit``, a crash) never ran the run, and what
        it left is no verdict of the verifier's. Asked once (the pipe's end
        kept for it is closed); True when it cannot be known."""
        try:
            return self.go_is_read()
        finally:
            fd, self._unread = self._unread, None
            if fd is not None:
                os.close(fd)

    def discard(self) -> None:
        """End it unrun: SIGKILL its group (in the view, the PID namespace
        goes with its init), reap it, close its pipes. Once over, nothing."""
        if self._unread is not None:
            os.close(self._unread)
            self._unread = None
        if self.over:
            return
        self.over = True
        os.close(self._go)  # type: ignore[arg-type]
        self._go = None
        # The view's init is in a session of its own (bwrap --new-session): ended and waited for
        # itself, as its end takes every process of its namespace; the parent-death signal would
        # come only after bwrap's, while what the view runs could still write where staging goes next.
        inits = procfs.children(self.proc.pid)
        _signal_group(self.proc.pid, signal.SIGKILL)
        for pid in inits:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        self.proc.wait()
        _wait_gone(inits, HELD_GOING_S)
        self.proc.stdout.close()  # type: ignore[union-attr]
        self.proc.stderr.close()  # type: ignore[union-attr]
        if self.attach is not None:
            self.attach.close()


def _settle(future: asyncio.Future[Any], outcome: tuple[object, BaseException | None]) -> None:
    result, error = outcome
    if future.done():
        return
    if error is None:
        future.set_result(result)
    else:
        future.set_exception(error)


class _Child:
    """A started child and everything the core watches about it."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        cap_bytes: int,
        on_output: Callable[[str, str], None] | None,
        cancel: CancelSignal | None,
        marker: str | None = None,
        before_kill: Callable[[int], bool] | None = None,
        init_lists_strays: bool = False,
        memory_limit: int | None = None,
    ) -> None:
        self.proc = proc
        self.memory_limit = memory_limit
        self.memory_extra: Callable[[int], int] | None = None
        self.runner_over: Callable[[int], bool] | None = None
        self.listing_cut_short = False
        self.oom_killed: list[tuple[str, int]] = []
        self.oom_victims: set[int] = set()
        self.next_memory_check = 0.0
        self.next_memfd_walk = 0.0
        self.init_lists_strays = init_lists_strays
        self.before_kill = before_kill
        self.asked_before_kill = False
        self.marker = marker
        self.strays: dict[int, str] = {}  # pid: command line (one per process, however alike)
        self.pipes = [proc.stdout.fileno(), proc.stderr.fileno()]  # type: ignore[union-attr]
        self.captures = [BoundedCapture(cap_bytes), BoundedCapture(cap_bytes)]
        self.on_output = on_output
        self.decoders = [codecs.getincrementaldecoder("utf-8")(errors="replace") for _ in self.pipes]
        self.open = set(self.pipes)
        self.cancel = cancel
        self.cancelled = False
        self.timed_out = False
        self.killed_leftovers = False
        self.output_cut_short = False
        self.started: float = 0.0
        """When the run began: the spawn, or when a held runner read its go."""
        self.held: Held | None = None
        self.exited_at: float = 0.0
        self.runner_ended_by: float | None = None
        """A namespace run's runner first seen over (:meth:`_see_the_runner_end`; or at the
        timeout, :meth:`_let_the_init_list`): its exit came by then; the
        leader's, later, is its init's listing's, which the copy sandbox has not."""
        self.next_runner_check: float = 0.0
        self.pipes_closed_at: float = 0.0
        self.has_exited = False
        self.selector = selectors.DefaultSelector()
        for fd in self.pipes:
            self.selector.register(fd, selectors.EVENT_READ)
        self.pidfd: int | None = None
        if hasattr(os, "pidfd_open"):
            try:
                self.pidfd = os.pidfd_open(proc.pid)
                self.selector.register(self.pidfd, selectors.EVENT_READ)
            except OSError:  # an older kernel: the exit is polled for instead
                self.pidfd = None
        if cancel is not None:
            self.selector.register(cancel.fileno(), selectors.EVENT_READ)

    # -- the phases ---------------------------------------------------------

    def wait_for_exit(self, timeout_s: float | None, grace_s: float) -> None:
        """Read output until the leader exits; end the group ``timeout_s``
        after the run began or on cancellation (then raise ProcessCancelled).

        A held run begins when its runner reads its go, not when it is told:
        a module ``--preload`` imports may still be importing, and that time
        is not the verifier's (Harbor preloads nothing), so the timeout counts
        from the last moment the go was seen unread, :data:`GO_POLL_S` before
        the read at most. While unread the deadline stays ``timeout_s`` after
        the go: a preload that outlasts it is ended, and the run runs again
        cold (:meth:`Held.read_its_go`)."""
        deadline = None if timeout_s is None else self.started + timeout_s
        unread = self.held
        while not self.has_exited:
            if unread is not None:
                if unread.go_is_read():
                    unread = None
                    deadline = None if timeout_s is None else self.started + timeout_s
                else:
                    self.started = time.perf_counter()
            if self.cancelled:
                self.end_group(grace_s)
                raise ProcessCancelled
            if deadline is not None and time.perf_counter() >= deadline:
                if self.runner_ended_by is not None or self._runner_was_over():
                    if self.runner_ended_by is None:  # over within the last check's interval
                        self.runner_ended_by = deadline
                    self._let_the_init_list()
                    return
                self.timed_out = True
                self._ask_before_kill()
                self.end_group(grace_s)
                return
            if unread is not None:
                poll = time.perf_counter() + GO_POLL_S
                self._step(poll if deadline is None else min(deadline, poll))
            else:
                look = self._see_the_runner_end()
                self._step(deadline if look is None or (deadline is not None and deadline < look) else look)

    def _see_the_runner_end(self) -> float | None:
        """A namespace run: note when its runner is first seen over (its init
        then lists the strays, which may take seconds; the copy sandbox's
        duration has no such listing in it, nor has Harbor's ``docker exec``,
        which returns when test.sh exits). Checked every
        :data:`RUNNER_END_POLL_S` until then: when to look next, None once seen
        or when there is nothing to look for."""
        if self.runner_over is None or self.runner_ended_by is not None:
            return None
        now = time.perf_counter()
        if now >= self.next_runner_check:
            if self._runner_was_over():
                self.runner_ended_by = now
                return None
            self.next_runner_check = now + RUNNER_END_POLL_S
        return self.next_runner_check

    def _runner_was_over(self) -> bool:
        if self.runner_over is None:
            return False
        try:
            return self.runner_over(self.proc.pid)
        except Exception:  # noqa: BLE001 - a hook must not keep the run from its timeout
            return False

    def _let_the_init_list(self) -> None:
        """The runner exited in time and its init lists the strays: for
        :data:`LIST_GRACE_S` more, then the namespace is ended, the listing
        cut short."""
        until = time.perf_counter() + LIST_GRACE_S
        while not self.has_exited and time.perf_counter() < until:
            self._step(until)
        if not self.has_exited:
            self.listing_cut_short = True
            _signal_group(self.proc.pid, signal.SIGKILL)  # bwrap: its init dies with it (--die-with-parent)
            self.proc.wait()
            self._exited()

    def _ask_before_kill(self) -> None:
        """The timeout's ``before_kill``, then output read on until stderr is
        quiet again (or the leader exits), :data:`BEFORE_KILL_WAIT_S` at most."""
        if self.before_kill is None:
            return
        try:
            self.asked_before_kill = bool(self.before_kill(self.proc.pid))
        except Exception:  # noqa: BLE001 - a hook must not keep the group from being ended
            self.asked_before_kill = False
        if not self.asked_before_kill:
            return
        stderr = self.captures[1]
        until = time.perf_counter() + BEFORE_KILL_WAIT_S
        seen, last_data = stderr.total, None
        while not self.has_exited and time.perf_counter() < until:
            self._step(until if last_data is None else min(until, last_data + _QUIET_S))
            if stderr.total != seen:
                seen, last_data = stderr.total, time.perf_counter()
            elif last_data is not None and time.perf_counter() - last_data >= _QUIET_S:
                return

    def end_group(self, grace_s: float) -> None:
        """SIGTERM the group, read on while the leader has ``grace_s`` to exit,
        then SIGKILL the group and reap the leader."""
        if not self.has_exited:
            reached = self._signal_run(signal.SIGTERM)
            until = time.perf_counter() + grace_s
            while not self.has_exited and time.perf_counter() < until:
                if reached:
                    self._step(until)
                else:
                    # Cancelled while the view was still being set up: its init starts
                    # the runner after the signal, which must get it too, or the verifier
                    # runs the whole grace period and the next run waits for it. Only until
                    # one process got it: what the init starts later lists the strays.
                    self._step(min(until, time.perf_counter() + _QUIET_S))
                    reached = self._signal_run(signal.SIGTERM)
        if self.has_exited:
            # What outlived the runner is a stray, in its group or not: the
            # same ones the view's init lists once the runner is gone.
            self._end_strays()
        elif self.init_lists_strays:
            # The runner ignored SIGTERM: all but the view's init are
            # killed; it then lists what was started meanwhile and exits.
            self._signal_run(signal.SIGKILL)
            until = time.perf_counter() + INIT_LIST_WAIT_S
            while not self.has_exited and time.perf_counter() < until:
                self._step(until)
            self.listing_cut_short = not self.has_exited
        _signal_group(self.proc.pid, signal.SIGKILL)
        if not self.has_exited:
            self.proc.wait()  # SIGKILL cannot be ignored: this is prompt
            self._exited()
        self._end_strays()

    def _signal_run(self, sig: int) -> bool:
        """``sig`` to the run's process group: in a view, the group of its
        view's init (which the runner shares), but not the init (PID 1
        takes only what it has a handler for, save SIGKILL from here, which
        would end the namespace unlisted) nor bwrap. What left the group is
        left to the init to list, as the copy sandbox's mark finds it.
        True when some process got it."""
        leader = self.proc.pid
        if not self.init_lists_strays:
            return _signal_group(leader, sig)
        inits = procfs.children(leader)
        groups = {fields[2] for fields in map(procfs.stat, inits) if fields is not None and len(fields) > 2}
        # The runner (each init's first child) last: once it is gone the init stops every process
        # left (isolation._INIT), and a stopped process holds SIGTERM pending, so those not yet
        # signalled would live on to be listed as strays, where the copy sandbox's group ends at once.
        runners = {
            int(kid) for init in inits for kid in (procfs.read(init, f"task/{init}/children") or b"").split()[:1]
        }
        reached = False
        for pid in sorted(procfs.descendants(leader) - inits, key=lambda pid: pid in runners):
            fields = procfs.stat(pid)
            if fields is not None and len(fields) > 2 and fields[2] in groups:
                try:
                    os.kill(pid, sig)
                    reached = True
                except (ProcessLookupError, PermissionError):
                    pass
        return reached

    def _end_strays(self) -> None:
        """End the leader's descendants still running, those that left its group too (found by the marker)."""
        if self.marker is not None:
            for pid, command in end_marked(self.marker).items():
                self.strays.setdefault(pid, command)

    def drain(self) -> None:
        """After the leader's exit: kill what it left in its group, then read
        until the pipes close, for :data:`DRAIN_AFTER_EXIT_S` at most. Its
        escaped descendants are ended first: they would hold the pipes."""
        self._end_strays()
        self.killed_leftovers = _signal_group(self.proc.pid, signal.SIGKILL)
        until = time.perf_counter() + DRAIN_AFTER_EXIT_S
        while self.open and time.perf_counter() < until:
            self._step(until)
        self.output_cut_short = bool(self.open)
        self.pipes_closed_at = time.perf_counter()

    def close(self) -> None:
        self.selector.close()
        if self.pidfd is not None:
            os.close(self.pidfd)
        self.proc.stdout.close()  # type: ignore[union-attr]
        self.proc.stderr.close()  # type: ignore[union-attr]

    # -- one wait -------------------------------------------------------------

    def _step(self, until: float | None) -> None:
        """Wait for anything to happen (until ``until`` at most), and take it in."""
        # At most an hour per wait: a timeout of 1e308 s is a valid one, but
        # select() refuses a wait longer than about 24 days (OverflowError).
        timeout = None if until is None else min(max(0.0, until - time.perf_counter()), 3600.0)
        if self.pidfd is None and not self.has_exited:
            timeout = _NO_PIDFD_POLL_S if timeout is None else min(timeout, _NO_PIDFD_POLL_S)
        if self.memory_limit is not None and not self.has_exited:
            timeout = MEMORY_CHECK_S if timeout is None else min(timeout, MEMORY_CHECK_S)
            now = time.perf_counter()
            if now >= self.next_memory_check:
                self.next_memory_check = now + MEMORY_CHECK_S
                self._check_memory()
        for key, _events in self.selector.select(timeout):
            fd = key.fd
            if fd in self.open:
                self._read(fd)
            elif fd == self.pidfd:
                self.selector.unregister(fd)
            elif self.cancel is not None and fd == self.cancel.fileno():
                self.selector.unregister(fd)
                self.cancelled = True
        if not self.has_exited and self.proc.poll() is not None:
            self._exited()

    def _check_memory(self) -> None:
        """Past the limit, SIGKILL the biggest process of the run (the
        kernel's OOM killer picks by size too)."""
        leader = self.proc.pid
        pids = {leader} | procfs.descendants(leader)
        extra = self.memory_extra(leader) if self.memory_extra is not None else 0
        limit = self.memory_limit or 0
        # In no resident set: the page tables and kernel stacks, and the memory files held open, counted
        # whole (more than their pages not mapped) until a total past the limit needs their walk of the mappings.
        tables, files = procfs.kernel_bytes(pids), procfs.memfd_bytes(pids, whole=True)
        beyond, whole = sum(tables.values()) + extra, sum(files.values())
        if procfs.resident_bytes(pids) + beyond + whole <= limit:
            return  # within it by the resident sizes, which hold more: the exact count costs a page walk each
        sizes = procfs.memory_bytes(pids)
        counted = sum(sizes.values()) + beyond
        if counted > limit:
            files = {}  # past it without them: not counted twice where mapped, nor walked for
        elif counted + whole > limit:  # they decide it: only their pages not mapped count
            began = time.perf_counter()
            if began < self.next_memfd_walk:
                return  # walking every mapping can take most of a CPU: rationed, no verdict until it is due
            files = procfs.memfd_bytes(pids)
            # Read again after the walk: a mapping undone meanwhile (a process exiting) counted in the
            # sizes and again as not mapped was a kill of a run that had scored within the limit.
            sizes = procfs.memory_bytes(pids)
            ended = time.perf_counter()
            self.next_memfd_walk = ended + 9 * (ended - began)  # at most a tenth of the time
        for held in (tables, files):
            for pid, size in held.items():
                sizes[pid] = sizes.get(pid, 0) + size
        total = sum(sizes.values()) + extra
        if not sizes or total <= limit:
            return
        if any(sizes.get(victim) for victim in self.oom_victims):
            return  # a process killed already still frees its memory: the kernel waits for it too
        pid = max(sizes, key=lambda p: sizes[p])
        command = procfs.command_line(pid)
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            return
        self.oom_victims.add(pid)
        self.oom_killed.append((command, total))

    def _exited(self) -> None:
        self.has_exited = True
        self.exited_at = time.perf_counter()

    def _read(self, fd: int) -> None:
        index = self.pipes.index(fd)
        try:
            data = os.read(fd, _CHUNK)
        except OSError:
            data = b""
        if data:
            self.captures[index].feed(data)
            self._emit(index, self.decoders[index].decode(data))
        else:
            self.selector.unregister(fd)
            self.open.discard(fd)
            self._emit(index, self.decoders[index].decode(b"", final=True))

    def _emit(self, index: int, text: str) -> None:
        if text and self.on_output is not None:
            try:
                self.on_output(("stdout", "stderr")[index], text)
            except Exception:  # noqa: BLE001 - a display callback must not end the capture
                pass


def _signal_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to the process group; True when some process got it.

    ``pgid`` is the leader's pid (``start_new_session``). While the leader is
    unreaped its pid cannot be reused, and after it is reaped the number stays
    reserved as long as any process of the group lives; once none does,
    ``killpg`` finds no group and we stop.
    """
    try:
        os.killpg(pgid, sig)
        return True
    except (ProcessLookupError, PermissionError):  # none left; or one changed its credentials (setuid)
        return False


# -- what left the group: found by a mark in its environment ---------------------------

MARKER = "VERIFIER_TUI_RUN"
"""In the copy sandbox, the environment variable whose value (:func:`new_token`)
marks one run's processes. A process that calls ``setsid`` or double-forks
leaves the group ``killpg`` reaches, but keeps the environment it inherited,
which ``/proc/<pid>/environ`` shows: once the run is over, every process of
ours that holds its token is a stray (CI servers find a build's strays so:
Jenkins' ``BUILD_ID``). One started with a cleaned environment escapes it;
where there is no ``/proc`` (macOS), none is found."""


def new_token() -> str:
    return f"{os.getpid()}-{time.monotonic_ns()}-{os.urandom(4).hex()}"


def end_marked(token: str) -> dict[int, str]:
    """SIGKILL every process marked with ``token`` (again, for those started
    meanwhile); each one's command line by its pid, for the run's result."""
    commands: dict[int, str] = {}
    for _ in range(5):
        found = _marked(token)
        if not found:
            break
        for pid, command in found.items():
            commands.setdefault(pid, command)
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        _wait_gone(found, 1.0)
    return commands


def _marked(token: str) -> dict[int, str]:
    """The processes still running (pid: command line) whose environment holds ``token``."""
    needle = f"{MARKER}={token}".encode()
    out: dict[int, str] = {}
    me = os.getpid()
    for pid in procfs.pids():
        if pid == me:
            continue
        environ = procfs.read(pid, "environ", procfs.ARGS_BYTES)
        if environ is None or needle not in environ.split(b"\0"):  # gone, not ours, or not of the run
            continue
        if procfs.is_over(pid):
            continue
        out[pid] = procfs.command_line(pid)
    return out


def _wait_gone(pids: Iterable[int], within_s: float) -> None:
    until = time.monotonic() + within_s
    for pid in pids:
        while time.monotonic() < until:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            if procfs.is_over(pid):
                break
            time.sleep(0.005)


def not_started(argv: list[str], exc: BaseException) -> ProcessResult:
    """The result of a run of ``argv`` that ``exc`` kept from starting, said as :func:`run_process` says one."""
    return _not_started(_start_error_text(argv, exc), time.perf_counter())


def _not_started(message: str, started: float) -> ProcessResult:
    return ProcessResult(
        returncode=None,
        signal=None,
        timed_out=False,
        start_error=message,
        stdout=CapturedText(),
        stderr=CapturedText(),
        duration_s=time.perf_counter() - started,
    )


def _start_error_text(argv: list[str], exc: BaseException) -> str:
    if isinstance(exc, OSError):
        what = exc.filename if exc.filename is not None else argv[0]
        return f"{what}: {exc.strerror or exc}"
    return f"{argv[0]}: {exc}"
