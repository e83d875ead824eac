"""Run one child process: bounded output, a timeout, and nothing left behind.

The child gets its own session (so its own process group), ``stdin`` from
``/dev/null`` and two pipes. Both pipes are drained as data arrives, whatever
their line lengths; each stream keeps a bounded head and tail and counts what
it dropped between them, so a verifier printing gigabytes costs a fixed amount
of memory. When the time is up the whole group gets SIGTERM, then SIGKILL after
a grace period. When the leader exits on its own, whatever it left running in
its group is SIGKILLed. When the awaiting task is cancelled (a newer run
supersedes this one) the same clean-up runs, shielded from the cancellation,
before the cancellation goes on. No zombie, no leftover process.

Why ``loop.subprocess_exec`` with our own protocol instead of
``asyncio.create_subprocess_exec``: the latter's ``Process.wait()`` only
returns once *both pipes are closed* (CPython 3.10/3.11
``BaseSubprocessTransport._call_connection_lost`` wakes the waiters), so a
grandchild that keeps ``stdout`` open (``subprocess.Popen(["sleep", "100"])``
without waiting) keeps ``wait()`` from returning and the run would only end at
its timeout. ``SubprocessProtocol.process_exited`` fires when the leader exits,
pipes or not, and ``pipe_data_received`` hands us every chunk the transport
reads (up to 256 KiB at a time, never split on lines) without a second buffer.

A process that leaves its group (``setsid``, a daemonising double fork) is
beyond ``killpg``; if it still holds a pipe we stop reading after
:data:`DRAIN_AFTER_EXIT_S` and say so in ``ProcessResult.output_cut_short``.
"""

from __future__ import annotations

import asyncio
import codecs
import os
import signal as _signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from verifier_tui.engine.capture import DEFAULT_CAP_BYTES, BoundedCapture
from verifier_tui.engine.model import CapturedText

DRAIN_AFTER_EXIT_S = 1.0
"""How long to keep reading after the leader exited and its group was killed.
Pipes normally close at once then (only what is still in the pipe buffer, at
most 64 KiB on Linux, is left to read); this only bounds the case of a process
that escaped the group and holds a pipe open."""

_STREAM_NAMES = {1: "stdout", 2: "stderr"}


@dataclass(frozen=True)
class ProcessResult:
    """How one child process ended and what it printed."""

    returncode: int | None
    """The exit status; negative when a signal ended it (asyncio's convention);
    None when the process never started."""
    signal: int | None
    """The signal that ended the process (from a negative ``returncode``)."""
    timed_out: bool
    """True when the timeout passed and we ended the process group."""
    start_error: str | None
    """Why the process could not start, e.g. ``"python3: No such file or directory"``."""
    stdout: CapturedText
    stderr: CapturedText
    duration_s: float
    """From just before the spawn to the leader's exit (``time.perf_counter``)."""
    pid: int | None
    killed_leftovers: bool = False
    """The leader exited but left processes running in its group; we killed them."""
    output_cut_short: bool = False
    """A pipe was still open (held by a process outside the group) after the
    leader exited; we stopped reading it after :data:`DRAIN_AFTER_EXIT_S`."""

    @property
    def started(self) -> bool:
        return self.start_error is None

    @property
    def signal_name(self) -> str | None:
        if self.signal is None:
            return None
        try:
            return _signal.Signals(self.signal).name
        except ValueError:
            return f"signal {self.signal}"

    def to_json(self) -> dict[str, Any]:
        return {
            "returncode": self.returncode,
            "signal": self.signal,
            "signal_name": self.signal_name,
            "timed_out": self.timed_out,
            "start_error": self.start_error,
            "duration_s": self.duration_s,
            "pid": self.pid,
            "killed_leftovers": self.killed_leftovers,
            "output_cut_short": self.output_cut_short,
            "stdout": _captured_to_json(self.stdout),
            "stderr": _captured_to_json(self.stderr),
        }


def _captured_to_json(captured: CapturedText) -> dict[str, Any]:
    return {
        "text": captured.text,
        "dropped_bytes": captured.dropped_bytes,
        "total_bytes": captured.total_bytes,
    }


# --------------------------------------------------------------------------
# The protocol: pipes and exit, as they happen.


class _ChildProtocol(asyncio.SubprocessProtocol):
    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        cap_bytes: int,
        on_output: Callable[[str, str], None] | None,
    ) -> None:
        self.exited: asyncio.Future[None] = loop.create_future()
        self.exit_time: float | None = None
        self.pipes_closed: dict[int, asyncio.Future[None]] = {
            fd: loop.create_future() for fd in _STREAM_NAMES
        }
        self.captures = {fd: BoundedCapture(cap_bytes) for fd in _STREAM_NAMES}
        self._on_output = on_output
        self._decoders = {
            fd: codecs.getincrementaldecoder("utf-8")(errors="replace") for fd in _STREAM_NAMES
        }

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        capture = self.captures.get(fd)
        if capture is None:
            return
        capture.feed(data)
        if self._on_output is not None:
            self._emit(fd, self._decoders[fd].decode(data))

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd not in self.pipes_closed:
            return
        if self._on_output is not None:
            self._emit(fd, self._decoders[fd].decode(b"", final=True))
        if not self.pipes_closed[fd].done():
            self.pipes_closed[fd].set_result(None)

    def process_exited(self) -> None:
        self.exit_time = time.perf_counter()
        if not self.exited.done():
            self.exited.set_result(None)

    def _emit(self, fd: int, text: str) -> None:
        if not text or self._on_output is None:
            return
        try:
            self._on_output(_STREAM_NAMES[fd], text)
        except Exception:  # noqa: BLE001 - a display callback must not end the capture
            pass


# --------------------------------------------------------------------------
# Signals to the group.


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
    except ProcessLookupError:
        return False
    except PermissionError:
        # A member changed its credentials (setuid); it is beyond us.
        return False


async def _end_group(pgid: int, protocol: _ChildProtocol, grace_s: float) -> None:
    """SIGTERM the group, give the leader ``grace_s`` to exit, SIGKILL the
    group, then wait until asyncio's child watcher has reaped the leader."""
    if not protocol.exited.done():
        _signal_group(pgid, _signal.SIGTERM)
        try:
            await asyncio.wait_for(asyncio.shield(protocol.exited), timeout=max(grace_s, 0))
        except asyncio.TimeoutError:
            pass
    _signal_group(pgid, _signal.SIGKILL)
    # SIGKILL cannot be ignored: the leader exits and is reaped promptly.
    await asyncio.shield(protocol.exited)


async def _finish_shielded(coro: Any) -> None:
    """Run clean-up to its end even if we are cancelled (again) meanwhile."""
    task = asyncio.ensure_future(coro)
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            continue
    task.result()


# --------------------------------------------------------------------------
# The entry point.


async def run_process(
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    timeout_s: float | None,
    cap_bytes: int = DEFAULT_CAP_BYTES,
    on_output: Callable[[str, str], None] | None = None,
    grace_s: float = 2.0,
) -> ProcessResult:
    """Run ``argv`` in its own process group and capture its output, bounded.

    ``env`` is the child's whole environment (nothing is inherited). Each of
    stdout and stderr keeps its first and last ``cap_bytes // 2`` bytes.
    ``on_output(stream, text)`` is called on the event loop for every decoded
    chunk as it arrives (``stream`` is ``"stdout"`` or ``"stderr"``): it must
    return quickly (append to a buffer, post a message); its exceptions are
    ignored. ``timeout_s=None`` waits as long as it takes.

    Never raises for a child that cannot start (``start_error`` says why). If
    the awaiting task is cancelled, the process group is ended first (SIGTERM,
    ``grace_s``, SIGKILL, reaped) and then the cancellation propagates.
    """
    loop = asyncio.get_running_loop()

    def factory() -> _ChildProtocol:
        return _ChildProtocol(loop, cap_bytes, on_output)

    started = time.perf_counter()
    if not argv:
        return _not_started("empty command", started)
    try:
        transport, protocol = await loop.subprocess_exec(
            factory,
            *argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            cwd=str(cwd),
            env=env,
        )
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        return _not_started(_start_error_text(argv, exc), started)

    pid = transport.get_pid()
    timed_out = False
    killed_leftovers = False
    output_cut_short = False
    finished = False
    try:
        try:
            await asyncio.wait_for(asyncio.shield(protocol.exited), timeout=timeout_s)
        except asyncio.TimeoutError:
            timed_out = True
            await _end_group(pid, protocol, grace_s)
        # The leader is gone; whatever it left in its group goes too, or a
        # grandchild holding our pipes would keep us reading forever.
        killed_leftovers = _signal_group(pid, _signal.SIGKILL)
        pipes = [asyncio.shield(f) for f in protocol.pipes_closed.values()]
        _done, pending = await asyncio.wait(pipes, timeout=DRAIN_AFTER_EXIT_S)
        output_cut_short = bool(pending)
        for waiter in pending:
            waiter.cancel()
        finished = True
    finally:
        if not finished:
            # Cancelled (or failed) before the end: end the group first.
            await _finish_shielded(_end_group(pid, protocol, grace_s))
            _signal_group(pid, _signal.SIGKILL)
        # Our own clean-up is done (the leader is reaped): now release the
        # pipes. transport.close() would kill only the leader, already gone.
        transport.close()

    returncode = transport.get_returncode()
    exit_time = protocol.exit_time if protocol.exit_time is not None else time.perf_counter()
    return ProcessResult(
        returncode=returncode,
        signal=-returncode if returncode is not None and returncode < 0 else None,
        timed_out=timed_out,
        start_error=None,
        stdout=protocol.captures[1].result(),
        stderr=protocol.captures[2].result(),
        duration_s=exit_time - started,
        pid=pid,
        killed_leftovers=killed_leftovers,
        output_cut_short=output_cut_short,
    )


def _not_started(message: str, started: float) -> ProcessResult:
    return ProcessResult(
        returncode=None,
        signal=None,
        timed_out=False,
        start_error=message,
        stdout=CapturedText(),
        stderr=CapturedText(),
        duration_s=time.perf_counter() - started,
        pid=None,
    )


def _start_error_text(argv: list[str], exc: BaseException) -> str:
    if isinstance(exc, OSError):
        what = exc.filename if exc.filename is not None else argv[0]
        reason = exc.strerror or str(exc)
        return f"{what}: {reason}"
    return f"{argv[0]}: {exc}"
