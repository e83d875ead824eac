"""Driving the tool as a user does: a command run to its end, one that goes
on until stopped (``watch``, the TUI in a terminal), the documented JSON."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import queue
import re
import select
import selectors
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.helpers.tasks import HANG_GUARD_S, PY, REPO

if TYPE_CHECKING:
    from collections.abc import Callable

SUITE_PLUGINS = ("hypothesispytest", "syrupy", "textual-snapshot", "anyio", "asyncio", "xdist", "xdist.looponfail")


def inner_pytest_options(*keep: str) -> str:
    """For a pytest that a test starts in a subprocess (``PYTEST_ADDOPTS``):
    the plugins this suite installs for itself, off but for ``keep``. Each
    inner run would load them all at its start (hypothesis has its whole
    package assertion-rewritten), and pytest's garbage collections at its end
    walk all they made: about 2 s of CPU per inner run with them, 0.3 s without."""
    return " ".join(f"-p no:{name}" for name in SUITE_PLUGINS if name not in keep)


def modes_bind_root() -> list[str]:
    """A prefix for a command under which a file's mode binds root as it binds
    any other user (no capability overrides it), so that a folder of mode
    000 cannot be read; the test is skipped where that cannot be had."""
    if os.geteuid() != 0:
        return []
    import shutil

    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: a mode 000 folder would be read all the same")
    return ["setpriv", "--inh-caps=-all", "--bounding-set=-dac_override,-dac_read_search", "--"]


#: The installed console script, else ``python -m verifier_tui``.
CONSOLE_SCRIPT = Path(sys.executable).parent / "verifier-tui"
TOOL = [str(CONSOLE_SCRIPT)] if CONSOLE_SCRIPT.exists() else [sys.executable, "-m", "verifier_tui"]
MODULE = [sys.executable, "-m", "verifier_tui"]


def run_tool(
    env: dict[str, str],
    *args: object,
    tool: list[str] | None = None,
    cwd: Path | None = None,
    timeout_s: float = HANG_GUARD_S,
) -> subprocess.CompletedProcess:
    """``verifier-tui ARGS`` as a user runs it, bounded by ``timeout_s``.
    Without ``tool``, a child of the warm tool (``tests/tool_server.py``) where
    the interpreter's start would be the same, else the console script."""
    argv = [str(a) for a in args]
    if tool is None and WarmTool.serves(env):
        return WarmTool.get().run(argv, env, cwd, timeout_s)
    return subprocess.run(
        (tool or TOOL) + argv,
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        stdin=subprocess.DEVNULL,
    )


class WarmTool:
    """The client of ``tests/tool_server.py`` (one server per test process,
    started at its first use; it ends when this process closes the socket)."""

    _one: WarmTool | None = None
    #: What the interpreter reads at its start: the variables a child may not change.
    STARTUP = ("PYTHON", "LC_", "LANG", "HOME")

    @classmethod
    def serves(cls, env: dict[str, str]) -> bool:
        started = cls._one.env if cls._one is not None else os.environ
        return CONSOLE_SCRIPT.exists() and cls._startup(env) == cls._startup(started)

    @classmethod
    def _startup(cls, env) -> dict[str, str]:
        return {k: v for k, v in env.items() if k.startswith(cls.STARTUP)}

    @classmethod
    def get(cls) -> WarmTool:
        if cls._one is None:
            cls._one = cls()
        return cls._one

    def __init__(self) -> None:
        self.env = dict(os.environ)
        self.channel, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with theirs:
            self.server = subprocess.Popen(
                [sys.executable, str(REPO / "tests" / "tool_server.py"), str(theirs.fileno())],
                pass_fds=[theirs.fileno()],
                env={**self.env, "VERIFIER_TUI_TESTS_SCRIPT": str(CONSOLE_SCRIPT)},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
            )
        self.lock = threading.Lock()
        atexit.register(self.close)

    def close(self) -> None:
        """End the server (it ends when its socket closes) and reap it."""
        self.channel.close()
        self.server.wait(HANG_GUARD_S)

    def run(
        self, argv: list[str], env: dict[str, str], cwd: Path | None, timeout_s: float
    ) -> subprocess.CompletedProcess:
        args = TOOL + argv
        with self.lock:
            stdin = os.open(os.devnull, os.O_RDONLY)
            out, out_w = os.pipe()
            err, err_w = os.pipe()
            request = json.dumps({"args": argv, "env": env, "cwd": str(cwd or os.getcwd())}).encode()
            try:
                socket.send_fds(self.channel, [request], [stdin, out_w, err_w])
            finally:
                for fd in (stdin, out_w, err_w):
                    os.close(fd)
            pid = int(self.channel.recv(64))
            streams = _drain(out, err, time.monotonic() + timeout_s)
            if streams is None:
                os.kill(pid, signal.SIGKILL)
            status = int(self.channel.recv(64))
        if streams is None:
            raise subprocess.TimeoutExpired(args, timeout_s)
        stdout, stderr = (b.decode().replace("\r\n", "\n").replace("\r", "\n") for b in streams)
        return subprocess.CompletedProcess(args, os.waitstatus_to_exitcode(status), stdout, stderr)


def _drain(out: int, err: int, deadline: float) -> tuple[bytes, bytes] | None:
    """Read ``out`` and ``err`` to their ends, as ``communicate`` does, and
    close them. None when ``deadline`` came first."""
    read = {out: bytearray(), err: bytearray()}
    with selectors.DefaultSelector() as selector:
        for fd in read:
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map() and time.monotonic() < deadline:
            for key, _events in selector.select(deadline - time.monotonic()):
                if chunk := os.read(key.fd, 65536):
                    read[key.fd] += chunk
                else:
                    selector.unregister(key.fd)
        finished = not selector.get_map()
    for fd in read:
        os.close(fd)
    return (bytes(read[out]), bytes(read[err])) if finished else None


#: The page that documents every ``--json`` field.
JSON_DOC = REPO / "docs" / "json-output.md"


def documented_fields(heading: str, until: str) -> set[str]:
    """The first-column names of every table of :data:`JSON_DOC` between two headings."""
    text = JSON_DOC.read_text(encoding="utf-8")
    section = text.split(heading, 1)[1].split(until, 1)[0]
    names = set()
    for line in section.splitlines():
        if line.startswith("| `"):
            names.add(line.split("`")[1])
    return names


def on_a_small_disk(env: dict[str, str], disk: Path, script: str, size: str = "128k") -> subprocess.CompletedProcess:
    """``sh -c SCRIPT`` with a tmpfs of ``size`` mounted on the folder ``disk``
    (in a user and mount namespace of its own, gone when the script ends), its
    path in ``$1`` and the tool's command line in the rest of ``"$@"``: a disk
    that fills while the tool writes. Skipped where no such mount can be had."""
    import shutil

    disk.mkdir(exist_ok=True)
    mount = 'mount -t tmpfs -o size="$SIZE" verifier-tui-test "$1" || exit 99\n'
    if shutil.which("unshare") is None:
        pytest.skip("no unshare: a small disk cannot be mounted here")
    done = subprocess.run(
        ["unshare", "-rm", "sh", "-c", mount + script, "sh", str(disk), *TOOL],
        env=dict(env, SIZE=size),
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
        stdin=subprocess.DEVNULL,
    )
    if done.returncode == 99:
        pytest.skip("cannot mount a tmpfs in a user namespace here")
    return done


def run_from_a_removed_folder(env: dict[str, str], gone: Path, *args: object) -> subprocess.CompletedProcess:
    """The tool started with ``args`` in the folder ``gone``, removed just
    before (a shell left in a folder another terminal deleted)."""
    gone.mkdir()
    tool = " ".join(shlex.quote(part) for part in TOOL)
    words = " ".join(shlex.quote(str(arg)) for arg in args)
    return subprocess.run(
        ["sh", "-c", f'cd "$1" && rmdir "$1" && exec {tool} {words}', "sh", gone],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def no_traceback(done: subprocess.CompletedProcess) -> None:
    """The tool printed no Python traceback of its own."""
    assert "Traceback (most recent call last)" not in done.stderr, done.stderr


def without_the_tool_on_path(env: dict[str, str]) -> dict[str, str]:
    """The README's set-up: the venv made, not activated, so ``verifier-tui``
    is not on PATH."""
    folders = [p for p in env.get("PATH", "").split(os.pathsep) if p and Path(p) != CONSOLE_SCRIPT.parent]
    return {**env, "PATH": os.pathsep.join(folders)}


def run_in_shell_text(typed: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    """``typed`` (one line, or lines continued with a backslash) run by a shell in ``cwd``, with ``--json`` added."""
    return subprocess.run(
        typed + " --json",
        shell=True,
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
        stdin=subprocess.DEVNULL,
    )


# --------------------------------------------------------------------------
# Commands that go on until stopped: ``watch``, and the TUI in a terminal.


class LineReader:
    """Reads a child's stdout lines in a thread, so waits can be bounded."""

    def __init__(self, stream) -> None:
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self.thread.start()

    def _pump(self, stream) -> None:
        for line in stream:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def next(self, within_s: float = 30.0) -> str:
        line = self.lines.get(timeout=within_s)
        assert line is not None, "the command ended early"
        return line

    def next_run(self, within_s: float = 30.0, prefix: str = "#") -> str:
        return self.through_next_run(within_s, prefix)[-1]

    def through_next_run(self, within_s: float = 30.0, prefix: str = "#") -> list[str]:
        """Every line up to the next run's line, that one last (what was said before it, a run cut short)."""
        deadline = time.monotonic() + within_s
        said = [self.next(within_s)]
        while not said[-1].startswith(prefix):
            said.append(self.next(max(0.1, deadline - time.monotonic())))
        return said


# The tool sending itself a signal (by name) as a function (or method, Class.name) of its own, MODULE:NAME, returns (a
# coroutine function's once awaited) or, "before", as it is called: a window a few milliseconds wide
# (a CI job's timeout landing as the document is made) is hit every time, by a real signal. Given a FIFO's
# path in place of the signal, the tool waits there to open it instead, for a signal sent from outside.
SIGNALLED_AT = """
import asyncio, importlib, os, signal, sys
where, sig, when = sys.argv[1:4]
del sys.argv[1:4]
module, name = where.split(":")
target = importlib.import_module(module)
*owners, name = name.split(".")  # Class.method too
for owner in owners:
    target = getattr(target, owner)
real = getattr(target, name)

def send():
    if sig.startswith("/"):  # a FIFO nothing writes: the tool waits there for a signal from outside
        open(sig).close()
    else:
        os.kill(os.getpid(), getattr(signal, sig))

if asyncio.iscoroutinefunction(real):
    async def hooked(*args, **kwargs):
        got = await real(*args, **kwargs)
        send()
        return got
else:
    def hooked(*args, **kwargs):
        if when == "before":
            send()
        got = real(*args, **kwargs)
        if when == "after":
            send()
        return got

setattr(target, name, hooked)
from verifier_tui.cli import main
sys.exit(main(sys.argv[1:]))
"""


def signalled_at(where: str, sig: int, when: str = "after") -> list[str]:
    """The tool as :data:`SIGNALLED_AT` starts it, ``sig`` sent at ``where`` (``module:function``):
    in place of :data:`TOOL`."""
    return [sys.executable, "-c", SIGNALLED_AT, where, signal.Signals(sig).name, when]


def held_at(where: str, fifo: Path, when: str = "after") -> list[str]:
    """The tool as :data:`SIGNALLED_AT` starts it, waiting at ``where`` to open ``fifo``, which nothing
    writes (:func:`~tests.helpers.processes.waiting_in` ``wait_for_partner``): a step that lasts until
    a signal from outside ends it."""
    return [sys.executable, "-c", SIGNALLED_AT, where, str(fifo), when]


def interrupted(
    env, args, ready, sig: int, never_ready: str, stdout: Path | None = None, tool: list[str] = TOOL
) -> tuple[int, str]:
    """``verifier-tui ARGS`` (started as ``tool``), then :func:`signal_when` ``ready()``; its output
    written to the file ``stdout`` when one is given."""
    with contextlib.ExitStack() as files:
        proc = subprocess.Popen(
            tool + [str(arg) for arg in args],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE if stdout is None else files.enter_context(stdout.open("w")),
            stderr=subprocess.PIPE,
            text=True,
        )
        return signal_when(proc, ready, sig, never_ready)


def a_python_that_never_answers(tmp_path: Path) -> tuple[Path, Path]:
    """A ``--python`` that ignores Ctrl+C and SIGTERM and never answers the interpreter check
    (the tool waits 10 s for it), and the file it makes once it was asked."""
    asked, python = tmp_path / "asked", tmp_path / "slowpy"
    python.write_text(f"#!/bin/sh\ntouch '{asked}'\ntrap '' TERM INT\nsleep 1000\n")
    python.chmod(0o755)
    return python, asked


def json_of_a_stopped_test(env, args, tmp_path: Path) -> tuple[dict, str]:
    """``verifier-tui test ARGS --json`` ended by SIGTERM once a verifier said it started (as
    ``SAY_STARTED`` says it): its document and stderr, having exited 143 without a traceback."""
    from tests.helpers.processes import has_started

    out = tmp_path / "out.json"
    scratch = env["TMPDIR"]
    code, err = interrupted(
        env, ["test", *args, "--json"], lambda: has_started(scratch), signal.SIGTERM, "never started", out
    )
    assert code == 143 and "Traceback" not in err, (code, err)
    return json.loads(out.read_text()), err


def refused_test_with_stderr_full(env, tmp_path: Path, *args) -> tuple[dict, list[str]]:
    """``test ARGS --json --junit out.xml >out.json 2>/dev/full``, a test that runs nothing, ended with status 2:
    its document and the names of its report's cases (a stderr that cannot take the refusal's line cuts neither)."""
    from tests.helpers.processes import an_old_green_report

    report = an_old_green_report(tmp_path / "out.xml")
    out = tmp_path / "out.json"
    with open("/dev/full", "w") as full, out.open("w") as document:
        done = subprocess.run(
            [*TOOL, "test", *map(str, args), "--json", "--junit", str(report), "--python", PY],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=document,
            stderr=full,
            timeout=HANG_GUARD_S,
        )
    assert done.returncode == 2, done.returncode
    return json.loads(out.read_text()), [case.get("name") for case in ET.parse(report).getroot().iter("testcase")]


def junit_of_a_test_to_a_full_disk(env, tmp_path: Path, *args) -> list[str]:
    """``test ARGS --junit out.xml >/dev/full``, ended with status 2 and one line for stdout's full disk:
    the names of its report's cases."""
    from tests.helpers.processes import an_old_green_report

    report = an_old_green_report(tmp_path / "out.xml")
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [*TOOL, "test", *map(str, args), "--junit", str(report), "--python", PY],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=HANG_GUARD_S,
        )
    assert done.returncode == 2 and "Traceback" not in done.stderr, (done.returncode, done.stderr)
    assert done.stderr.count("No space left on device") == 1 and "standard output" in done.stderr, done.stderr
    return [case.get("name") for case in ET.parse(report).getroot().iter("testcase")]


def signal_when(proc: subprocess.Popen, ready, sig: int, never_ready: str) -> tuple[int, str]:
    """``sig`` sent to the tool ``proc`` once ``ready()`` holds (``ready`` a string: once the tool
    is :func:`~tests.helpers.processes.waiting_in` that kernel function) within 60 s, else the test
    fails saying ``never_ready``: its exit status and stderr (text). A tool still running after
    that, or after ``ready`` raised, is killed."""
    if isinstance(ready, str):
        from tests.helpers.processes import waiting_in

        ready = partial(waiting_in, proc.pid, ready)
    try:
        deadline = time.monotonic() + 60
        while not ready():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, never_ready
            time.sleep(0.05)
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, err


def start_watch(
    env, *args, cwd: Path | None = None, around: list[str] | None = None, command: str = "watch"
) -> tuple[subprocess.Popen, LineReader]:
    """``verifier-tui watch ARGS`` (or another ``command`` that goes on: ``test --watch``) started (by
    the command ``around`` when given), with a reader of its output lines."""
    proc = subprocess.Popen(
        (around or []) + TOOL + [command, *map(str, args)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        cwd=cwd,
    )
    return proc, LineReader(proc.stdout)


def stop(proc: subprocess.Popen) -> tuple[int, str]:
    """A ``watch`` started by :func:`start_watch` ended as Ctrl-C ends it: its status and stderr."""
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail("watch did not stop on SIGINT")
    return proc.returncode, proc.stderr.read()


def start_in_terminal(env: dict[str, str], args: list[str], shell: str | None = None) -> tuple[int, int]:
    """Start ``verifier-tui ARGS`` (or the ``shell`` command line, by ``sh -c``)
    in a new 120x40 pseudo-terminal: (pid, the terminal's file descriptor).
    Callers skip where there is no ``pty``."""
    import fcntl
    import pty
    import struct
    import termios

    pid, fd = pty.fork()
    if pid == 0:  # the size is set before the app starts, so it never sees 80x24
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        # COLUMNS/LINES (set at C level under pytest) would override the terminal's own size.
        child_env = {k: v for k, v in env.items() if k not in ("COLUMNS", "LINES")}
        child_env["TERM"] = "xterm-256color"
        if shell is not None:
            os.execve("/bin/sh", ["sh", "-c", shell], child_env)
        os.execve(TOOL[0], [*TOOL, *args], child_env)
    return pid, fd


def hung_up(
    env: dict[str, str],
    args: list[str],
    ready: Callable[[], bool],
    stderr: Path | None = None,
    stdout: Path | None = None,
) -> int | None:
    """``verifier-tui ARGS`` in a terminal that closes once ``ready()`` (an ssh session dropped): the
    kernel sends SIGHUP, and every write to the terminal fails from then on (EIO); stderr and stdout to
    the files ``stderr`` and ``stdout`` when given. Its exit status (None: it outlived the guard, and was killed)."""
    to_files = "".join(f" {fd}>{shlex.quote(str(path))}" for fd, path in ((1, stdout), (2, stderr)) if path)
    shell = f"exec {shlex.join([*TOOL, *args])}{to_files}" if to_files else None
    pid, fd = start_in_terminal(env, args, shell)
    deadline = time.monotonic() + HANG_GUARD_S
    try:
        while not ready() and time.monotonic() < deadline:
            if select.select([fd], [], [], 0.05)[0]:  # drained: a full terminal would hold the tool up
                with contextlib.suppress(OSError):
                    os.read(fd, 65536)
    finally:
        os.close(fd)
    while time.monotonic() < deadline:
        done, raw = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(raw)
        select.select([], [], [], 0.05)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return None


def run_in_terminal(
    env: dict[str, str],
    args: list[str],
    until: bytes,
    keys: bytes = b"q",
    timeout: float = 20.0,
    around: list[str] | None = None,
) -> tuple[bytes, int]:
    """Start ``verifier-tui ARGS`` (by the command ``around`` when given) in a 120x40 terminal, read
    until ``until`` is drawn, press ``keys``; return what was drawn and the exit status."""
    pid, fd = start_in_terminal(env, args, shlex.join([*around, *TOOL, *args]) if around else None)
    seen = b""
    deadline = time.monotonic() + timeout
    try:
        while until not in seen and time.monotonic() < deadline:
            if select.select([fd], [], [], 0.05)[0]:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                seen += chunk
        os.write(fd, keys)
        drawn, status = ended(pid, fd, within_s=10)
        return seen + drawn, -9 if status is None else status
    finally:
        os.close(fd)


def ended(pid: int, fd: int, within_s: float) -> tuple[bytes, int | None]:
    """Read the terminal ``fd`` until the app ``pid`` exits: what it drew and
    its exit status; None where it did not exit within ``within_s`` (it is
    then SIGKILLed and reaped)."""
    seen = b""
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        if select.select([fd], [], [], 0.05)[0]:
            try:
                seen += os.read(fd, 65536)
            except OSError:  # the terminal's far end is closed as the app goes: wait for it
                time.sleep(0.01)
        done, raw = os.waitpid(pid, os.WNOHANG)
        if done:
            return seen, os.waitstatus_to_exitcode(raw)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return seen, None


_COUNTER = re.compile(rb"\r(\d+)/(\d+) (cases|probes|trials)( \xc2\xb7 (\d+) (failed|flagged|differ))?\x1b\[K")


def counters(seen: bytes) -> list[tuple[int, int, str, int]]:
    """The progress counts a command drew on a terminal: (ended, total, noun, how many went wrong)."""
    return [(int(m[1]), int(m[2]), m[3].decode(), int(m[5] or 0)) for m in _COUNTER.finditer(seen)]
