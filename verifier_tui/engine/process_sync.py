"""Run the child without asyncio, for the one-shot headless commands.

``verifier-tui run`` must cost little more than the runner itself, and
importing asyncio alone costs about as much as starting Python. This driver
keeps the same guarantees as :mod:`verifier_tui.engine.process`: its own
process group, both pipes drained concurrently in 64 KiB chunks, bounded
output, the whole group ended on timeout, on Ctrl+C and after the leader exits.
"""

from __future__ import annotations

import os
import selectors
import signal as signals
import subprocess
import time

from verifier_tui.engine.capture import DEFAULT_CAP_BYTES, BoundedCapture
from verifier_tui.engine.model import CapturedText, field, record

_CHUNK = 64 * 1024
# After the leader exits, how long to keep reading pipes that a leftover
# grandchild may still hold open (it is killed first, so this is a bound, not a wait).
_DRAIN_S = 2.0


@record
class SyncResult:
    returncode: int | None
    signal: int | None
    timed_out: bool
    start_error: str | None
    stdout: CapturedText = field(default_factory=CapturedText)
    stderr: CapturedText = field(default_factory=CapturedText)
    duration_s: float = 0.0


def _kill_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def run_process_sync(
    argv: list[str],
    *,
    cwd,
    env: dict[str, str],
    timeout_s: float | None,
    cap_bytes: int = DEFAULT_CAP_BYTES,
    grace_s: float = 2.0,
    while_running=None,
) -> SyncResult:
    """Run ``argv`` to its end (see the module's docstring). ``while_running``,
    if given, is called once the child has started, before its output is read:
    work the caller needs afterwards, done while the child runs (the pipes
    hold what it prints meanwhile)."""
    started = time.perf_counter()
    try:
        proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        return SyncResult(None, None, False, f"{argv[0]}: {exc.strerror or exc}")
    captures = {proc.stdout.fileno(): BoundedCapture(cap_bytes), proc.stderr.fileno(): BoundedCapture(cap_bytes)}
    order = [proc.stdout.fileno(), proc.stderr.fileno()]
    timed_out = False
    deadline = started + timeout_s if timeout_s else None
    selector = selectors.DefaultSelector()
    for fd in order:
        selector.register(fd, selectors.EVENT_READ)
    open_fds = set(order)
    leader_done_at: float | None = None
    try:
        if while_running is not None:
            while_running()
        while open_fds:
            now = time.perf_counter()
            if leader_done_at is None and proc.poll() is not None:
                leader_done_at = now
                _kill_group(proc.pid, signals.SIGKILL)  # leftovers must not outlive the run
            if leader_done_at is not None and now - leader_done_at > _DRAIN_S:
                break
            if deadline is not None and now >= deadline and not timed_out:
                timed_out = True
                _end_group(proc, grace_s)
                leader_done_at = time.perf_counter()
            wait = 0.05
            if deadline is not None and not timed_out:
                wait = max(0.0, min(wait, deadline - now))
            for key, _ in selector.select(wait):
                fd = key.fd
                try:
                    data = os.read(fd, _CHUNK)
                except OSError:
                    data = b""
                if data:
                    captures[fd].feed(data)
                else:
                    selector.unregister(fd)
                    open_fds.discard(fd)
        if not timed_out:
            remaining = None if deadline is None else max(0.0, deadline - time.perf_counter())
            try:
                proc.wait(timeout=remaining)
            except subprocess.TimeoutExpired:
                timed_out = True
                _end_group(proc, grace_s)
        proc.wait()
        _kill_group(proc.pid, signals.SIGKILL)
    except BaseException:
        _end_group(proc, 0.2)  # Ctrl+C: nothing the run started survives
        raise
    finally:
        selector.close()
        proc.stdout.close()
        proc.stderr.close()
    duration = time.perf_counter() - started
    code = proc.returncode
    # As the async driver reports it: a timed-out run also names the signal that ended it.
    killed = -code if code is not None and code < 0 else None
    return SyncResult(
        returncode=code,
        signal=killed,
        timed_out=timed_out,
        start_error=None,
        stdout=captures[order[0]].result(),
        stderr=captures[order[1]].result(),
        duration_s=duration,
    )


def _end_group(proc: subprocess.Popen, grace_s: float) -> None:
    """SIGTERM the group, give it ``grace_s``, then SIGKILL it."""
    _kill_group(proc.pid, signals.SIGTERM)
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        pass
    _kill_group(proc.pid, signals.SIGKILL)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
