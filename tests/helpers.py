"""Helpers shared by every test folder: building tasks, copying the bundled
examples, watching processes vanish, driving the tool (watch, a terminal),
the stuck verifiers, Harbor's trial and job folders.

Plain functions and constants; the fixtures that use them live in the root
``tests/conftest.py``. Import as ``from tests.helpers import ...`` (the
repository root is on ``sys.path`` through pytest's ``pythonpath`` setting).
Over 500 lines because it is the one place test modules share code (no test
module imports another); its sections are marked.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import json
import os
import queue
import select
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "tasks"
#: The NeMo Gym shim, as a published task carries it in tests/test.sh.
SHIM = (EXAMPLES / "hello-file" / "tests" / "test.sh").read_text(encoding="utf-8")
PY = sys.executable

SUITE_PLUGINS = ("hypothesispytest", "syrupy", "textual-snapshot", "anyio", "asyncio", "xdist", "xdist.looponfail")


def inner_pytest_options(*keep: str) -> str:
    """For a pytest that a test starts in a subprocess (``PYTEST_ADDOPTS``):
    the plugins this suite installs for itself, off but for ``keep``. Each
    inner run would load them all at its start (hypothesis has its whole
    package assertion-rewritten), and pytest's garbage collections at its end
    walk all they made: about 2 s of CPU per inner run with them, 0.3 s without."""
    return " ".join(f"-p no:{name}" for name in SUITE_PLUGINS if name not in keep)


#: The installed console script, else ``python -m verifier_tui``.
CONSOLE_SCRIPT = Path(sys.executable).parent / "verifier-tui"
TOOL = [str(CONSOLE_SCRIPT)] if CONSOLE_SCRIPT.exists() else [sys.executable, "-m", "verifier_tui"]
MODULE = [sys.executable, "-m", "verifier_tui"]
#: Bound on any one command a test starts: a hang fails the test instead of blocking the suite.
HANG_GUARD_S = 120
#: The bundled examples that have cases.
TASKS_WITH_CASES = ["count-errors", "fizzbuzz-module", "greeting-rows", "hello-file", "sum-column", "summary-keywords"]

DEFAULT_VERIFIER = "def verify(workspace):\n    return 1.0\n"


def write(path: Path, text: str | bytes) -> Path:
    """Write ``text`` (dedented) to ``path``, creating its folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def make_task(
    root: Path,
    verifier: str | None = DEFAULT_VERIFIER,
    *,
    files: dict[str, str] | None = None,
    toml: str | None = 'version = "1.0"\n',
    timeout: float | None = None,
    shim: bool = True,
    cases: dict[str, dict[str, str]] | None = None,
) -> Path:
    """A task folder at ``root``.

    - ``verifier``: the source of ``tests/verifier.py`` (dedented); None for none.
    - ``files``: more files under ``tests/`` by relative path (helpers, more verifiers).
    - ``toml``: ``task.toml``'s text (None: no task.toml); ``timeout`` appends
      ``[verifier] timeout_sec``.
    - ``shim``: ``tests/test.sh`` is NeMo Gym's shim (False: no test.sh).
    - ``cases``: ``{case: {relative path: text}}``, each a ``cases/<case>/workspace``.
    """
    (root / "tests").mkdir(parents=True, exist_ok=True)
    if toml is not None or timeout is not None:
        text = toml or ""
        if timeout is not None:
            text += f"\n[verifier]\ntimeout_sec = {timeout}\n"
        (root / "task.toml").write_text(text, encoding="utf-8")
    if shim:
        (root / "tests" / "test.sh").write_text(SHIM, encoding="utf-8")
    if verifier is not None:
        write(root / "tests" / "verifier.py", verifier)
    for rel, source in (files or {}).items():
        write(root / "tests" / rel, source)
    for case, workspace_files in (cases or {}).items():
        workspace = root / "cases" / case / "workspace"
        workspace.mkdir(parents=True, exist_ok=True)
        for rel, text in workspace_files.items():
            write(workspace / rel, text)
    return root


BRANCHY_VERIFIER = """\
import scoring


def verify(workspace):
    answer = workspace / "answer.txt"
    if not answer.exists():
        return 0.0
    text = answer.read_text()
    if text == "42":
        return scoring.full()
    if text.strip() == "42":
        return scoring.partial(text)
    return 0.0
"""
BRANCHY_HELPER = """\
def full():
    return 1.0


def partial(text):
    if text.endswith("\\n"):
        return 0.5
    return 0.25
"""


def make_branchy_task(root: Path) -> Path:
    """A task whose verifier has known branches and a helper module (scoring.py),
    with two cases that take different ones: coverage's tests pin its lines."""
    task = make_task(
        root,
        BRANCHY_VERIFIER,
        files={"scoring.py": BRANCHY_HELPER},
        cases={"right": {"answer.txt": "42"}, "empty": {}},
    )
    (task / "cases" / "right" / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    (task / "cases" / "empty" / "expected.json").write_text('{"rewards": {"reward": 0.0}}')
    (task / "tests" / "unused_helper.py").write_text("X = 1\n")
    return task


@functools.cache
def other_python(version: str) -> str | None:
    """A working CPython ``version`` ("3.8", "2.7") on this machine, else None:
    ``pythonX.Y`` on PATH, then pyenv's versions folder. The path is the
    interpreter's own, never a shim's: a pyenv shim on PATH is passed over (it
    runs one from that same folder, after 0.2 s of CPU in pyenv's scripts, or
    refuses to run)."""
    root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    on_path = shutil.which(f"python{version}")
    if on_path is not None and Path(on_path).parent == root / "shims":
        on_path = None
    candidates = [on_path, *sorted(map(str, (root / "versions").glob(f"{version}.*/bin/python{version}")))]
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    for candidate in filter(None, candidates):
        try:
            done = subprocess.run(
                [candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2]); print(sys.executable)"],
                capture_output=True,
                text=True,
                timeout=30,
                env=env,
            )
        except (OSError, subprocess.SubprocessError):
            continue
        lines = done.stdout.split()
        if done.returncode == 0 and len(lines) == 2 and lines[0] == version:
            return lines[1]
    return None


def no_python(version: str) -> str:
    """Why a test that needs :func:`other_python` ``(version)`` is skipped."""
    return f"no Python {version} on this machine (python{version} on PATH, or pyenv's versions folder)"


def python_or_skip(version: str) -> str:
    """:func:`other_python`, or the test is skipped, saying why."""
    found = other_python(version)
    if found is None:
        pytest.skip(no_python(version))
    return found


def copy_example(name: str, target: Path) -> Path:
    """A private copy of the bundled example task ``name`` at ``target``."""
    shutil.copytree(EXAMPLES / name, target, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    return target


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


def needs_namespaces() -> None:
    """Skip, saying why, where this machine cannot build the sandbox's view."""
    from verifier_tui.engine.sandbox.isolation import namespace_problem

    problem = namespace_problem()
    if problem is not None:
        pytest.skip(f"no namespaces on this machine: {problem}")


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
                [sys.executable, str(Path(__file__).with_name("tool_server.py")), str(theirs.fileno())],
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
        deadline = time.monotonic() + within_s
        while True:
            line = self.next(max(0.1, deadline - time.monotonic()))
            if line.startswith(prefix):
                return line


def interrupted(env, args, ready, sig: int, never_ready: str) -> tuple[int, str]:
    """``verifier-tui ARGS`` started, then :func:`signal_when` ``ready()``."""
    proc = subprocess.Popen(
        TOOL + [str(arg) for arg in args],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return signal_when(proc, ready, sig, never_ready)


def signal_when(proc: subprocess.Popen, ready, sig: int, never_ready: str) -> tuple[int, str]:
    """``sig`` sent to the tool ``proc`` once ``ready()`` holds (within 60 s,
    else the test fails saying ``never_ready``): its exit status and stderr
    (text). A tool still running after that, or after ``ready`` raised, is killed."""
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


def start_watch(env, *args, cwd: Path | None = None) -> tuple[subprocess.Popen, LineReader]:
    """``verifier-tui watch ARGS`` started, with a reader of its output lines."""
    proc = subprocess.Popen(
        TOOL + ["watch", *map(str, args)],
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


def start_in_terminal(env: dict[str, str], args: list[str]) -> tuple[int, int]:
    """Start ``verifier-tui ARGS`` in a new 120x40 pseudo-terminal: (pid, the
    terminal's file descriptor). Callers skip where there is no ``pty``."""
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
        os.execve(TOOL[0], [*TOOL, *args], child_env)
    return pid, fd


def run_in_terminal(
    env: dict[str, str], args: list[str], until: bytes, keys: bytes = b"q", timeout: float = 20.0
) -> tuple[bytes, int]:
    """Start ``verifier-tui ARGS`` in a 120x40 terminal, read until ``until``
    is drawn, press ``keys``; return what was drawn and the exit status."""
    pid, fd = start_in_terminal(env, args)
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
        end = time.monotonic() + 10
        while time.monotonic() < end:
            if select.select([fd], [], [], 0.05)[0]:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                seen += chunk
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return seen, os.waitstatus_to_exitcode(status)
        os.kill(pid, 9)
        _, status = os.waitpid(pid, 0)
        return seen, os.waitstatus_to_exitcode(status)
    finally:
        os.close(fd)


# --------------------------------------------------------------------------
# A verifier that leaves links where the tool reads a run back.

#: Plants each ``[where, target]`` of the workspace's ``plant.json`` as a link,
#: ``where`` being a runner flag's path (``--explain-to``) or a name in the
#: folder a flag names (``--reward-dir:reward.json``); then ends the
#: interpreter, before the runner clears the reward folder or writes its own.
#: Indented, as STUCK_HELPER below says why.
LINK_PLANTER = """\
    import json, os, shutil, sys
    from pathlib import Path


    def _place(where):
        flag, _, name = where.partition(":")
        named = sys.argv[sys.argv.index(flag) + 1]
        return os.path.join(named, name) if name else named


    def verify(workspace):
        for where, target in json.loads((Path(workspace) / "plant.json").read_text()):
            place = _place(where)
            try:
                if os.path.isdir(place) and not os.path.islink(place):
                    shutil.rmtree(place)
                elif os.path.lexists(place):
                    os.unlink(place)
                os.symlink(target, place)
            except OSError as exc:
                print("could not plant", where, exc.strerror)
        sys.stdout.flush()
        os._exit(0)
"""


# --------------------------------------------------------------------------
# A verifier that never finishes: it waits in a helper of its own for a file
# nobody writes, so a run of it times out "stuck at" helpers.py:6 (in
# wait_for_file), called from verifier.py:7 (in verify).
# Indented, as make_task dedents them: a top-level ``def verify`` in this file
# would make the repository's tests/ folder look like a task.

STUCK_HELPER = """\
import time


def wait_for_file(path):
    while not path.exists():
        time.sleep(0.5)
"""

STUCK_VERIFIER = """\
    import sys
    from helpers import wait_for_file


    def verify(workspace):
        print("looking for done.txt", file=sys.stderr, flush=True)
        wait_for_file(workspace / "done.txt")
        return 1.0
"""


#: The same in one file, as a replayed trial's verifier: stuck at verifier.py:6 (in wait).
STUCK_IN_ONE_FILE = """\
    import time


    def wait(path):
        while not path.exists():
            time.sleep(0.2)


    def verify(workspace):
        wait(workspace / "done.txt")
        return 1.0
"""


def stuck_task(root: Path, **options) -> Path:
    """A task at ``root`` whose verifier is :data:`STUCK_VERIFIER` (``options`` as for :func:`make_task`)."""
    return make_task(root, STUCK_VERIFIER, files={"helpers.py": STUCK_HELPER}, **options)


# --------------------------------------------------------------------------
# Harbor trial and job folders.
#
# Builders that write trial and job folders in Harbor 0.26.0's layout and
# file shapes (harbor/models/trial/{config,result,paths}.py,
# harbor/models/job/lock.py), as Harbor's own tests build them; the tests in
# tests/harbor/test_builders.py check them against genuine folders written by
# Harbor 0.26.0 (../shared/harbor-0.26). sandbox_run() produces what a trial's
# verifier/ folder holds by running the real runner as the sandbox's shim would.

RUNNER = REPO / "runner" / "run_verifier.py"


def _shared_folder() -> Path | None:
    """``../shared`` from the project's root (a worktree sits one level deeper)."""
    for base in (REPO.parent, REPO.parent.parent):
        if (base / "shared" / "harbor-0.26").is_dir():
            return base / "shared"
    return None


SHARED = _shared_folder()
#: Genuine Harbor 0.26.0 job folders and the tasks they ran (None when ../shared is not there).
HARBOR_REAL = SHARED / "harbor-0.26" if SHARED else None

HARBOR_TIME = "2026-12-01T03:36:18.000000Z"
_RETRY_EXCLUDED = [
    "AgentTimeoutError",
    "RewardFileEmptyError",
    "RewardFileNotFoundError",
    "VerifierOutputParseError",
    "VerifierTimeoutError",
]
#: ErrorPolicy of Harbor 0.26.0 (harbor/models/trial/error_policy.py) for the types the tests use.
_POLICIES = {
    "AgentTimeoutError": (False, True, True),
    "NonZeroAgentExitCodeError": (False, True, True),
    "AgentSetupTimeoutError": (True, False, False),
    "VerifierTimeoutError": (False, True, False),
    "RewardFileNotFoundError": (False, True, False),
    "RewardFileEmptyError": (False, True, False),
    "VerifierOutputParseError": (False, True, False),
}
_EXCEPTION_MODULES = {
    "RewardFileNotFoundError": "harbor.verifier.verifier",
    "RewardFileEmptyError": "harbor.verifier.verifier",
    "VerifierOutputParseError": "harbor.verifier.verifier",
    "VerifierTimeoutError": "harbor.trial.errors",
    "AgentTimeoutError": "harbor.trial.errors",
    "ValidationError": "pydantic_core._pydantic_core",
}


def _agent_config(name: str) -> dict:
    return {
        "name": name,
        "import_path": None,
        "model_name": None,
        "base_url": None,
        "model_api_key_name": None,
        "model_api_format": None,
        "skip_model_parsing": False,
        "n_concurrent": None,
        "concurrency_group": None,
        "skills": [],
        "override_timeout_sec": None,
        "override_setup_timeout_sec": None,
        "max_timeout_sec": None,
        "resume_trajectory": False,
        "load_trajectory": None,
        "extra_allowed_hosts": [],
        "kwargs": {},
        "mcp_servers": [],
    }


def _environment_config(env: dict | None = None) -> dict:
    out = {
        "type": None,
        "import_path": "hostenv:HostEnvironment",
        "force_build": False,
        "delete": True,
        "stream": False,
        "cpu_enforcement_policy": "auto",
        "memory_enforcement_policy": "auto",
        "override_cpus": None,
        "override_memory_mb": None,
        "override_storage_mb": None,
        "override_gpus": None,
        "override_tpu": None,
        "mounts": None,
        "extra_docker_compose": [],
        "kwargs": {},
        "extra_allowed_hosts": [],
    }
    if env:
        out["env"] = env  # TrialConfig drops an empty env when serialising
    return out


def _task_config(path: str) -> dict:
    return {
        "path": path,
        "git_url": None,
        "git_commit_id": None,
        "name": None,
        "ref": None,
        "overwrite": False,
        "download_dir": None,
        "source": None,
    }


def harbor_trial_config(
    *,
    task_path: str,
    trial_name: str,
    trials_dir: str,
    agent: str = "oracle",
    timeout_multiplier: float = 1.0,
    verifier_timeout_multiplier: float | None = None,
    override_timeout_sec: float | None = None,
    max_timeout_sec: float | None = None,
    verifier_env: dict | None = None,
    environment_env: dict | None = None,
    job_id: str | None = None,
) -> dict:
    """A ``TrialConfig`` as Harbor 0.26.0 writes it to config.json."""
    verifier = {"override_timeout_sec": override_timeout_sec, "max_timeout_sec": max_timeout_sec, "disable": False}
    if verifier_env:
        verifier["env"] = verifier_env
    return {
        "schema_version": 1,
        "task": _task_config(task_path),
        "trial_name": trial_name,
        "trials_dir": trials_dir,
        "install_only": False,
        "timeout_multiplier": timeout_multiplier,
        "agent_timeout_multiplier": None,
        "verifier_timeout_multiplier": verifier_timeout_multiplier,
        "agent_setup_timeout_multiplier": None,
        "environment_build_timeout_multiplier": None,
        "agent": _agent_config(agent),
        "user_agent": None,
        "environment": _environment_config(environment_env),
        "verifier": verifier,
        "override_error_policy": {},
        "artifacts": [],
        "extra_instruction_paths": [],
        "extra_instructions": [],
        "job_id": job_id or str(uuid.uuid4()),
        "source_trial": None,
    }


def harbor_exception(kind: str, message: str, *, at: str = HARBOR_TIME) -> dict:
    """An ``ExceptionInfo`` as result.json holds it (with its computed policy)."""
    retry, grade, valid = _POLICIES.get(kind, (True, True, True))
    module = _EXCEPTION_MODULES.get(kind, "harbor.trial.errors")
    traceback_text = (
        f'Traceback (most recent call last):\n  File "/opt/harbor/site-packages/harbor/trial/trial.py", '
        f"line 616, in run\n    await self._run()\n{module}.{kind}: {message}\n"
    )
    return {
        "exception_type": kind,
        "exception_message": message,
        "exception_traceback": traceback_text,
        "occurred_at": at,
        "policy": {"should_retry": retry, "should_grade": grade, "has_valid_reward": valid},
    }


def _span(base, start: float, end: float) -> dict:
    """A TimingInfo ``start`` to ``end`` seconds after ``base`` (a UTC datetime)."""
    from datetime import timedelta

    def stamp(seconds: float) -> str:
        return (base + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    return {"started_at": stamp(start), "finished_at": stamp(end)}


def _agent_result() -> dict:
    return {
        "n_input_tokens": None,
        "n_cache_tokens": None,
        "n_output_tokens": None,
        "cost_usd": None,
        "model_usage": None,
        "rollout_details": None,
        "metadata": None,
    }


def _write_json(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=4), encoding="utf-8")


def _write_files(folder: Path, files: dict) -> None:
    for rel, content in files.items():
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")


def _manifest(app: dict | Path | None) -> list:
    entries = [
        {
            "source": "/logs/artifacts",
            "destination": "artifacts/logs/artifacts",
            "type": "directory",
            "status": "ok",
            "service": None,
            "exclude": [],
        }
    ]
    if app is not None:
        entries.append(
            {
                "source": "/app",
                "destination": "artifacts/app",
                "type": "directory",
                "status": "ok",
                "service": None,
                "exclude": [],
            }
        )
    return entries


def _write_pass(
    folder: Path, *, verifier_files: dict | None, app: dict | Path | None, agent: str, manifest: bool = True
) -> None:
    """A pass's agent/, verifier/ and artifacts/ (the trial's own, or one step's)."""
    _write_files(folder / "agent", {"oracle.txt": ""} if agent == "oracle" else {})
    (folder / "agent").mkdir(parents=True, exist_ok=True)
    if verifier_files is not None:
        (folder / "verifier").mkdir(parents=True, exist_ok=True)
        _write_files(folder / "verifier", verifier_files)
    (folder / "artifacts").mkdir(parents=True, exist_ok=True)
    if isinstance(app, Path):
        shutil.copytree(app, folder / "artifacts" / "app")
    elif app is not None:
        (folder / "artifacts" / "app").mkdir(parents=True, exist_ok=True)
        _write_files(folder / "artifacts" / "app", app)
    if manifest:
        _write_json(folder / "artifacts" / "manifest.json", _manifest(app))


def make_trial(
    folder: Path,
    *,
    task: Path,
    run_dir: Path | None = None,
    agent: str = "oracle",
    rewards: dict | None = None,
    exception: dict | None = None,
    verifier_files: dict | None = None,
    app: dict | Path | None = None,
    mode: str | None = "shared",
    steps: list[dict] | None = None,
    log: str = "Collecting main service artifacts\n",
    digest: str | None = "auto",
    verifier_ran: bool = True,
    verifier_seconds: float = 0.7,
    config: dict | None = None,
    result: str = "ok",
    old_layout: bool = False,
) -> Path:
    """A trial folder at ``folder`` (its parent plays the job folder) as
    Harbor 0.26.0 writes it.

    - ``task``: the task folder; config.json's ``task.path`` is it relative to
      ``run_dir`` (default: the job folder's grandparent, the folder Harbor ran in).
    - ``rewards`` / ``exception`` (see :func:`harbor_exception`): what result.json records.
    - ``verifier_files``: ``verifier/`` contents (``test-stdout.txt``, reward files); None: no folder.
    - ``app``: captured ``/app`` (files, or a folder to copy); recorded in the manifest.
    - ``mode``: ``verifier_environment_mode`` (None for multi-step).
    - ``steps``: for a multi-step trial, ``[{"name", "rewards", "exception", "verifier_files", "app"}]``.
    - ``digest``: lock.json's task digest ("auto": the task's own, via the engine's
      digest, which tests/harbor/test_digest.py checks against Harbor's; None: no lock.json).
    - ``result``: "ok", "missing" (Harbor killed) or "truncated".
    - ``old_layout``: a trial of an older Harbor (no schema_version,
      verifier_environment_mode, reward_valid, lock.json or manifest).
    """
    from datetime import datetime, timezone

    base = datetime.now(timezone.utc)  # the trial "starts" now: the task's files are older
    folder = Path(folder)
    job = folder.parent
    run_dir = run_dir or job.parent.parent
    trials_dir = os.path.relpath(job, run_dir)
    task_path = os.path.relpath(task, run_dir)
    name = folder.name
    cfg = config or harbor_trial_config(task_path=task_path, trial_name=name, trials_dir=trials_dir, agent=agent)
    folder.mkdir(parents=True, exist_ok=True)
    _write_json(folder / "config.json", cfg)
    (folder / "trial.log").write_text(log, encoding="utf-8")
    if digest == "auto":
        from verifier_tui.engine.harbor.digest import task_digest

        digest = task_digest(task).digest
    if digest is not None and not old_layout:
        _write_json(
            folder / "lock.json",
            {
                "schema_version": 2,
                "task": {"name": Path(task).name, "type": "local", "digest": digest, "path": task_path},
                "install_only": False,
                "timeout_multiplier": cfg["timeout_multiplier"],
                "agent": {
                    k: cfg["agent"][k]
                    for k in (
                        "name",
                        "skip_model_parsing",
                        "skills",
                        "resume_trajectory",
                        "extra_allowed_hosts",
                        "kwargs",
                        "mcp_servers",
                    )
                },
                "bridge_inputs": {},
                "skills": [],
                "environment": {k: v for k, v in cfg["environment"].items() if v is not None and k != "type"},
                "verifier": {"disable": False, **({"environment_mode": mode} if mode else {})},
                "artifacts": [],
                "override_error_policy": {},
            },
        )
    step_results = None
    if steps:
        step_results = []
        for index, step in enumerate(steps):
            _write_pass(
                folder / "steps" / step["name"],
                verifier_files=step.get("verifier_files"),
                app=step.get("app"),
                agent=agent,
            )
            start = 0.1 + index * 1.0
            step_results.append(
                {
                    "step_name": step["name"],
                    "agent_result": _agent_result(),
                    "verifier_result": {"rewards": step["rewards"]} if step.get("rewards") is not None else None,
                    "exception_info": step.get("exception"),
                    "agent_execution": _span(base, start, start + 0.05),
                    "verifier": _span(base, start + 0.06, start + 0.06 + verifier_seconds),
                }
            )
    else:
        _write_pass(folder, verifier_files=verifier_files, app=app, agent=agent, manifest=not old_layout)
    if steps and rewards is None:
        # MultiStepTrial._aggregate_step_rewards: per-key means over the steps that have rewards.
        scored = [step["rewards"] for step in steps if step.get("rewards") is not None]
        keys = sorted({key for r in scored for key in r})
        rewards = {key: sum(r.get(key, 0) for r in scored) / len(scored) for key in keys} if scored else None
    if exception is not None:
        (folder / "exception.txt").write_text(exception["exception_traceback"], encoding="utf-8")
    data = {
        "schema_version": 1,
        "id": str(uuid.uuid4()),
        "task_name": Path(task).name,
        "trial_name": name,
        "trial_uri": (run_dir / trials_dir / name).as_uri() if run_dir.is_absolute() else f"file:///{name}",
        "task_id": {"path": task_path},
        "source": None,
        "task_checksum": "0" * 64,
        "config": cfg,
        "agent_info": {"name": agent, "version": "1.0.0", "model_info": None},
        "agent_result": None if steps else _agent_result(),
        "verifier_result": {"rewards": rewards} if rewards is not None else None,
        "verifier_environment_mode": None if steps else mode,
        "exception_info": exception,
        "started_at": _span(base, 0, 0)["started_at"],
        "finished_at": _span(base, 0, 3)["finished_at"],
        "environment_setup": _span(base, 0.01, 0.02),
        "agent_setup": _span(base, 0.02, 0.03),
        "agent_execution": None if steps else _span(base, 0.03, 0.08),
        "verifier": _span(base, 0.1, 0.1 + verifier_seconds) if verifier_ran and not steps else None,
        "step_results": step_results,
        "reward_valid": rewards is not None and (exception is None or exception["policy"]["has_valid_reward"]),
    }
    if old_layout:
        for key in ("schema_version", "verifier_environment_mode", "reward_valid", "step_results"):
            data.pop(key)
    if result == "ok":
        _write_json(folder / "result.json", data)
    elif result == "truncated":
        (folder / "result.json").write_text(json.dumps(data, indent=4)[:700], encoding="utf-8")
    return folder


def make_job(folder: Path, trials: dict[str, dict]) -> Path:
    """A job folder at ``folder`` with one trial per ``{trial_name: make_trial kwargs}``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    job_id = str(uuid.uuid4())
    tasks = []
    for name, kwargs in trials.items():
        make_trial(folder / name, **kwargs)
        tasks.append(json.loads((folder / name / "config.json").read_text())["task"])
    run_dir = folder.parent.parent
    _write_json(
        folder / "config.json",
        {
            "schema_version": 1,
            "job_name": folder.name,
            "jobs_dir": os.path.relpath(folder.parent, run_dir),
            "n_attempts": 1,
            "install_only": False,
            "skip_credential_checks": False,
            "timeout_multiplier": 1.0,
            "agent_timeout_multiplier": None,
            "verifier_timeout_multiplier": None,
            "agent_setup_timeout_multiplier": None,
            "environment_build_timeout_multiplier": None,
            "debug": False,
            "n_concurrent_trials": 4,
            "quiet": True,
            "retry": {
                "max_retries": 0,
                "include_exceptions": None,
                "exclude_exceptions": _RETRY_EXCLUDED,
                "wait_multiplier": 1.0,
                "min_wait_sec": 1.0,
                "max_wait_sec": 60.0,
            },
            "override_error_policy": {},
            "environment": _environment_config(),
            "verifier": {"override_timeout_sec": None, "max_timeout_sec": None, "disable": False},
            "metrics": [],
            "agents": [_agent_config("oracle")],
            "user_agent": None,
            "datasets": [],
            "tasks": tasks,
            "artifacts": [],
            "extra_instruction_paths": [],
            "extra_instructions": [],
            "source_jobs": [],
        },
    )
    _write_json(
        folder / "lock.json",
        {
            "schema_version": 3,
            "created_at": HARBOR_TIME,
            "harbor": {"version": "0.26.0", "is_editable": False},
            "n_concurrent_trials": 4,
            "retry": {
                "max_retries": 0,
                "exclude_exceptions": _RETRY_EXCLUDED,
                "wait_multiplier": 1.0,
                "min_wait_sec": 1.0,
                "max_wait_sec": 60.0,
            },
            "trials": [
                json.loads((folder / n / "lock.json").read_text())
                for n in trials
                if (folder / n / "lock.json").is_file()
            ],
        },
    )
    evals: dict = {}
    for name in trials:
        data = (
            json.loads((folder / name / "result.json").read_text())
            if (folder / name / "result.json").is_file()
            else None
        )
        if data is None:
            continue
        stats = evals.setdefault(
            f"{data['agent_info']['name']}__adhoc",
            {"n_trials": 0, "n_errors": 0, "metrics": [], "pass_at_k": {}, "reward_stats": {}, "exception_stats": {}},
        )
        error = (data.get("exception_info") or {}).get("exception_type")
        if error:
            stats["n_errors"] += 1
            stats["exception_stats"].setdefault(error, []).append(name)
        rewards = (data.get("verifier_result") or {}).get("rewards")
        if rewards is not None:
            stats["n_trials"] += 1
            for key, value in rewards.items():
                stats["reward_stats"].setdefault(key, {}).setdefault(str(value), []).append(name)
    for stats in evals.values():
        means = [
            float(v)
            for by_value in stats["reward_stats"].get("reward", {}).items()
            for v in [by_value[0]] * len(by_value[1])
        ]
        if means:
            stats["metrics"] = [{"mean": sum(means) / len(means)}]
    _write_json(
        folder / "result.json",
        {
            "schema_version": 1,
            "id": job_id,
            "started_at": "2026-12-01T03:36:17.773290",
            "updated_at": "2026-12-01T03:36:18.904091",
            "finished_at": "2026-12-01T03:36:18.904091",
            "n_total_trials": len(trials),
            "stats": {
                "n_completed_trials": len(trials),
                "n_errored_trials": 0,
                "n_running_trials": 0,
                "n_pending_trials": 0,
                "n_cancelled_trials": 0,
                "n_retries": 0,
                "evals": evals,
                "n_input_tokens": None,
                "n_cache_tokens": None,
                "n_output_tokens": None,
                "cost_usd": None,
            },
        },
    )
    (folder / "job.log").write_text("Collecting main service artifacts\n", encoding="utf-8")
    return folder


class SandboxRun:
    """What a sandbox's verifier/ folder holds after the shim ran the runner."""

    def __init__(self, files: dict, timed_out: bool) -> None:
        self.files = files  # {"test-stdout.txt": text, "reward.txt": bytes, ...}
        self.timed_out = timed_out


def sandbox_run(
    task: Path,
    scratch: Path,
    *,
    workspace: dict | Path | None = None,
    planted: dict | None = None,
    timeout_s: float | None = None,
    python: str | None = None,
    env: dict | None = None,
    keep_output_on_timeout: bool = True,
) -> SandboxRun:
    """Run ``task``'s verifier with the real runner as the sandbox's shim does
    (``--verifier /tests/verifier.py --workspace /app``, task data when
    ``tests/task_data.json`` exists, stdout and stderr merged as Harbor's
    ``> test-stdout.txt 2>&1``), in a staged copy under ``scratch``; the
    output's staged paths are written back as ``/tests``, ``/app`` and
    ``/logs/verifier``. ``planted``: reward files in the reward folder before
    the runner starts. ``timeout_s``: kill it then, as Harbor's timeout does
    (``keep_output_on_timeout`` False: a cloud sandbox, nothing downloaded)."""
    root = Path(scratch) / "sandbox"
    tests = root / "tests"
    shutil.copytree(Path(task) / "tests", tests)
    (tests / ".ng").mkdir(exist_ok=True)
    shutil.copy(RUNNER, tests / ".ng" / "run_verifier.py")
    app = root / "app"
    if isinstance(workspace, Path):
        shutil.copytree(workspace, app)
    else:
        app.mkdir(parents=True)
        _write_files(app, workspace or {})
    rewards = root / "logs" / "verifier"
    rewards.mkdir(parents=True)
    _write_files(rewards, planted or {})
    argv = [
        python or PY,
        str(tests / ".ng" / "run_verifier.py"),
        "--verifier",
        str(tests / "verifier.py"),
        "--workspace",
        str(app),
        "--reward-dir",
        str(rewards),
    ]
    if (tests / "task_data.json").is_file():
        argv += ["--task-data", str(tests / "task_data.json")]
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    child_env.update(env or {})
    timed_out = False
    try:
        done = subprocess.run(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=child_env,
            timeout=timeout_s or HANG_GUARD_S,
            stdin=subprocess.DEVNULL,
        )
        output = done.stdout
    except subprocess.TimeoutExpired as exc:
        timed_out = True
        output = exc.output or b""
    text = output.decode("utf-8", errors="replace")
    for staged, sandbox in ((rewards, "/logs/verifier"), (app, "/app"), (tests, "/tests")):
        text = text.replace(str(staged), sandbox)
    files: dict = {}
    if not timed_out or keep_output_on_timeout:
        files["test-stdout.txt"] = text
        for entry in sorted(rewards.iterdir()):
            if entry.is_file():
                files[entry.name] = entry.read_bytes()
    return SandboxRun(files, timed_out)


def harbor_masked_failure_log(trial_name: str, kind: str, message: str) -> str:
    """trial.log after the agent failed first and then the verifier failed
    too: Harbor 0.26.0's ``Trial.run`` logs "Trial <name> failed: <message>",
    then ``_record_exception`` logs that it skips recording it, with the
    traceback (Python logging's default format: the message alone)."""
    module = _EXCEPTION_MODULES.get(kind, "harbor.trial.errors")
    frames = (
        '  File "/opt/harbor/site-packages/harbor/trial/trial.py", line 616, in run\n'
        "    await self._run()\n"
        '  File "/opt/harbor/site-packages/harbor/trial/single_step.py", line 52, in _run\n'
        "    await self._run_verifier()\n"
    )
    chain = ""
    if kind == "VerifierTimeoutError":
        chain = (
            "Traceback (most recent call last):\n"
            '  File "/usr/lib/python3.12/asyncio/tasks.py", line 520, in wait_for\n'
            "    return await fut\n"
            "asyncio.exceptions.CancelledError\n\n"
            "The above exception was the direct cause of the following exception:\n\n"
        )
    return (
        f"Trial {trial_name} failed: {message}\n"
        "Skipping exception record because trial already has exception_info\n"
        f"{chain}Traceback (most recent call last):\n{frames}{module}.{kind}: {message}\n"
        "Collecting main service artifacts\n"
    )


def sandbox_trial(
    job: Path,
    task: Path,
    scratch: Path,
    *,
    workspace: dict | Path | None,
    mode: str = "shared",
    capture: bool = False,
    name: str = "demo__aaaaaaa",
    trial_kwargs: dict | None = None,
    **run_kwargs,
):
    """Run ``task``'s verifier as the sandbox would (:func:`sandbox_run`) and
    record the trial Harbor would write of it in the job folder ``job``: the
    reward it read, or the exception it raised (``VerifierTimeoutError`` when
    the run was killed at ``timeout_s``). ``capture``: ``/app`` collected as an
    artifact. Returns the opened trial."""
    from verifier_tui.engine.harbor.folders import open_harbor
    from verifier_tui.engine.verdict import harbor_verdict

    run = sandbox_run(task, Path(scratch) / f"sandbox-{name}", workspace=workspace, **run_kwargs)
    staged = Path(scratch) / f"verdict-{name}"
    staged.mkdir(parents=True)
    for file, content in run.files.items():
        (staged / file).write_bytes(content if isinstance(content, bytes) else content.encode())
    verdict = harbor_verdict(staged)
    if run.timed_out:
        kwargs = dict(
            exception=harbor_exception(
                "VerifierTimeoutError", f"Verifier execution timed out after {run_kwargs['timeout_s']} seconds"
            )
        )
    elif verdict.ok:
        kwargs = dict(rewards=verdict.rewards)
    else:
        kwargs = dict(exception=harbor_exception(verdict.error, verdict.message))
    kwargs.update(trial_kwargs or {})
    make_job(
        Path(job),
        {name: dict(task=task, mode=mode, verifier_files=run.files, app=workspace if capture else None, **kwargs)},
    )
    return open_harbor(Path(job) / name)[0]


def interpreter_with_long_sys_path(root: Path, entries: int) -> Path:
    """A virtual environment (no pip) whose ``sys.path`` holds ``entries``
    more folders, from a ``.pth`` file as an editable install writes one; its
    interpreter."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=HANG_GUARD_S)
    folders = [root / "extra" / f"folder{i:05d}" for i in range(entries)]
    for folder in folders:
        folder.mkdir(parents=True)
    (site_packages,) = root.glob("lib/python3*/site-packages")
    (site_packages / "many.pth").write_text("".join(f"{folder}\n" for folder in folders), encoding="utf-8")
    return root / "bin" / "python"


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


def has_started(tmpdir: str | Path) -> bool:
    """Whether a run under ``tmpdir`` (the tool's TMPDIR) ran :data:`SAY_STARTED`.
    (A folder may go while it is looked at, the namespace probe's: asked again.)"""
    for _ in range(10):
        try:
            return bool(list(Path(tmpdir).glob("verifier-tui-*/stage-*/logs/verifier/started")))
        except FileNotFoundError:
            continue
    return False


def replay_trial(trial, step: str | None = None, **kwargs):
    """Open ``trial`` and replay it once, as ``run TRIAL`` does: the session
    (closed again) and its replay."""
    from verifier_tui.engine.harbor.trial_session import TrialSession

    with TrialSession(trial, step, **kwargs) as opened:
        return opened, opened.run()
