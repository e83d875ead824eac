"""Find a run's escaped processes without namespaces: by a mark in their environment.

A process that calls ``setsid`` (or is started with ``process_group=0``, or
double-forks) leaves the runner's process group, so ending the group misses
it. Every process inherits its parent's environment, though, and
``/proc/<pid>/environ`` shows the one a process started with: the runner
gets ``VERIFIER_TUI_RUN=<a token of its own>``, and once it is over (exited,
timed out or superseded) every process of ours whose environment holds that
token is one of its descendants still running. This is how CI servers find a
build's strays (Jenkins' ``BUILD_ID``). A process that starts another with a
cleaned environment escapes it; with namespaces (:mod:`.isolation`) nothing
escapes, and this is not used.

Where ``/proc`` is missing (macOS), nothing is found: the run's process
group is still ended, and escaped processes are not reported.
"""

from __future__ import annotations

import os
import signal
import time

MARKER = "VERIFIER_TUI_RUN"


def new_token() -> str:
    return f"{os.getpid()}-{time.monotonic_ns()}-{os.urandom(4).hex()}"


def find(token: str) -> dict[int, str]:
    """The processes (pid: command line) whose environment holds ``token``."""
    needle = f"{MARKER}={token}".encode()
    out: dict[int, str] = {}
    me = os.getpid()
    try:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return out
    for pid in pids:
        if pid == me:
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                environ = handle.read()
        except OSError:  # gone, or not ours
            continue
        if needle not in environ.split(b"\0"):
            continue
        if _is_zombie(pid):
            continue
        out[pid] = command_line(pid)
    return out


def end(token: str, rounds: int = 5) -> list[str]:
    """SIGKILL every process marked with ``token`` (again, for those started
    meanwhile); their command lines, for the run's result."""
    commands: dict[int, str] = {}
    for _ in range(rounds):
        found = find(token)
        if not found:
            break
        for pid, command in found.items():
            commands.setdefault(pid, command)
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        _wait_gone(found, 1.0)
    return list(commands.values())


def _wait_gone(pids, within_s: float) -> None:
    until = time.monotonic() + within_s
    for pid in pids:
        while time.monotonic() < until:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            if _is_zombie(pid):
                break
            time.sleep(0.005)


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            state = handle.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in (b"Z", b"X")


def command_line(pid: int) -> str:
    """A process's command line, its words joined by spaces (``pid N`` when it cannot be read)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            raw = handle.read(4096)
    except OSError:
        return f"pid {pid}"
    words = [w.decode(errors="replace") for w in raw.split(b"\0") if w]
    return " ".join(words) or f"pid {pid}"
