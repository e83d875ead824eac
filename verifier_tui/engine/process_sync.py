"""Run the child without asyncio, for the one-shot headless commands.

``verifier-tui run`` must cost little more than the runner itself, and
importing asyncio alone costs about as much as starting Python. This driver
keeps the same guarantees as :mod:`verifier_tui.engine.process`: its own
process group, both pipes drained concurrently in 64 KiB chunks, bounded
output, the whole group ended on timeout, on Ctrl+C and after the leader exits.

The child is started with ``os.posix_spawn`` where it can be (a single-threaded
process on a POSIX system): importing ``subprocess`` alone costs about 2 ms,
some 3% of a whole ``run``. ``subprocess.Popen`` is the fallback, with the same
handling either way.
"""

from __future__ import annotations

import os
import selectors
import signal as signals
import sys
import time

from verifier_tui.engine.capture import DEFAULT_CAP_BYTES, BoundedCapture
from verifier_tui.engine.model import CapturedText
from verifier_tui.engine.record import field, record

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
        proc = _Child.start(argv, cwd, env)
    except OSError as exc:
        return SyncResult(None, None, False, f"{argv[0]}: {exc.strerror or exc}")
    order = [proc.stdout, proc.stderr]
    captures = {fd: BoundedCapture(cap_bytes) for fd in order}
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
            if not proc.wait(remaining):
                timed_out = True
                _end_group(proc, grace_s)
        proc.wait()
        _kill_group(proc.pid, signals.SIGKILL)
    except BaseException:
        _end_group(proc, 0.2)  # Ctrl+C: nothing the run started survives
        raise
    finally:
        selector.close()
        proc.close_pipes()
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


def _end_group(proc: "_Child", grace_s: float) -> None:
    """SIGTERM the group, give it ``grace_s``, then SIGKILL it."""
    _kill_group(proc.pid, signals.SIGTERM)
    proc.wait(grace_s)
    _kill_group(proc.pid, signals.SIGKILL)
    proc.wait(5)


class _Child:
    """The runner's process: its pid, the read ends of its two pipes, and
    its exit status once reaped (negative for a signal, as Popen has it)."""

    def __init__(self, pid: int, stdout: int, stderr: int, popen=None) -> None:
        self.pid = pid
        self.stdout = stdout
        self.stderr = stderr
        self.returncode: int | None = None
        self._popen = popen

    @classmethod
    def start(cls, argv: list[str], cwd, env: dict[str, str]) -> "_Child":
        threads = sys.modules.get("threading")
        if hasattr(os, "posix_spawnp") and (threads is None or threads.active_count() == 1):
            return cls._spawn(argv, cwd, env)
        import subprocess

        popen = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, start_new_session=True)
        return cls(popen.pid, os.dup(popen.stdout.fileno()), os.dup(popen.stderr.fileno()), popen)

    @classmethod
    def _spawn(cls, argv: list[str], cwd, env: dict[str, str]) -> "_Child":
        """posix_spawn in its own session, stdin from /dev/null. It has no
        working-folder option before Python 3.13, so this process steps into
        ``cwd`` for the spawn and back (single-threaded: checked by start)."""
        out_read, out_write = os.pipe()
        err_read, err_write = os.pipe()
        devnull = os.open(os.devnull, os.O_RDONLY)
        here = os.open(".", os.O_RDONLY)
        try:
            os.chdir(cwd)
            try:
                pid = os.posix_spawnp(argv[0], argv, env, setsid=True, file_actions=[
                    (os.POSIX_SPAWN_DUP2, devnull, 0),
                    (os.POSIX_SPAWN_DUP2, out_write, 1),
                    (os.POSIX_SPAWN_DUP2, err_write, 2),
                ])
            finally:
                os.fchdir(here)
        except BaseException:
            os.close(out_read)
            os.close(err_read)
            raise
        finally:
            for fd in (devnull, here, out_write, err_write):
                os.close(fd)
        return cls(pid, out_read, err_read)

    def poll(self) -> int | None:
        if self.returncode is None:
            if self._popen is not None:
                self.returncode = self._popen.poll()
                return self.returncode
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                return self.returncode
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds (None: for good); True once it exited."""
        deadline = None if timeout is None else time.perf_counter() + timeout
        pause = 0.0005
        while self.poll() is None:
            if deadline is not None and time.perf_counter() >= deadline:
                return False
            time.sleep(pause)
            pause = min(pause * 2, 0.02)
        return True

    def close_pipes(self) -> None:
        for fd in (self.stdout, self.stderr):
            try:
                os.close(fd)
            except OSError:
                pass
        if self._popen is not None:
            self._popen.stdout.close()
            self._popen.stderr.close()
