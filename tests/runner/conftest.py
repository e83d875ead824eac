"""Shared fixtures for the runner tests: a staged sandbox and the interpreters.

Every test runs ``runner/run_verifier.py`` as a real subprocess, laid out the way
a task's ``tests/test.sh`` shim lays it out::

    <tmp>/tests/.ng/run_verifier.py   a copy of runner/run_verifier.py
    <tmp>/tests/.ng/run_verifier_extras.py   and of its extras, as verifier-tui stages them
    <tmp>/tests/verifier.py           the verifier the test writes
    <tmp>/app                         the workspace
    <tmp>/logs/verifier               the reward folder (--reward-dir)

The runner is started cold. The tests of ``sys.path`` (``WARM_TOO`` in their
module) run twice, cold and warm (as verifier-tui starts it ahead of a run:
held on a pipe of its own before it reads anything, then told to go), which
must make no difference to anything a test sees: the path is the one thing a
held runner has already made when it is told to go. From the go on, a warm
runner runs the lines a cold one runs, from the same arguments and files;
``test_runner_warm.py`` checks the hold and the go themselves, and the
engine's warm tests compare every example case warm and cold.

Fixtures, not importable helpers: the tests reach the runner through them.
Helpers every test folder shares are in ``tests/helpers.py``.
"""

import fcntl
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.helpers.harbor import RUNNER
from tests.helpers.tasks import no_python, other_python, write

# The runner under test; RUNNER_UNDER_TEST points the suite at another copy
# (the wheel's, or a deliberately broken one to check that the tests bite).
# Its extras are the file beside it.
RUNNER_SOURCE = Path(os.environ.get("RUNNER_UNDER_TEST") or RUNNER)
EXTRAS_SOURCE = RUNNER_SOURCE.with_name("run_verifier_extras.py")
REWARD_FILES = ("reward.json", "reward.txt")
TIMEOUT = 60


def clean_env(pythonpath=None, extra=None):
    """The caller's environment without any PYTHON* variable (no PYTHONPATH,
    PYTHONSTARTUP, PYTHONSAFEPATH, ...), plus what the test asks for."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath if isinstance(pythonpath, str) else os.pathsep.join(map(str, pythonpath))
    env.update(extra or {})
    return env


PYTHON38 = other_python("3.8")
NO_PYTHON38 = no_python("3.8")
PYTHONS = [
    pytest.param(sys.executable, id="py-current"),
    pytest.param(PYTHON38, id="py3.8", marks=pytest.mark.skipif(PYTHON38 is None, reason=NO_PYTHON38)),
]


class Result:
    """What a user sees after a run: exit code, output, the reward folder."""

    def __init__(self, completed, reward_dir):
        self.returncode = completed.returncode
        self.stdout = completed.stdout
        self.stderr = completed.stderr
        self.args = completed.args
        self.reward_dir = reward_dir
        self.rewards = {}
        for name in REWARD_FILES:
            path = reward_dir / name
            if path.is_symlink():
                self.rewards[name] = "<symlink>"
            elif path.is_dir():
                self.rewards[name] = "<folder>"
            elif path.exists():
                self.rewards[name] = path.read_text(encoding="utf-8")

    @property
    def reward_txt(self):
        return self.rewards.get("reward.txt")

    @property
    def reward_json(self):
        text = self.rewards.get("reward.json")
        return None if text is None else json.loads(text)

    @property
    def stderr_lines(self):
        return self.stderr.splitlines()

    def stdout_json(self):
        """The last stdout line that parses as JSON (verifiers print there)."""
        for line in reversed(self.stdout.splitlines()):
            try:
                return json.loads(line)
            except ValueError:
                continue
        raise AssertionError("no JSON line on stdout:\n" + self.stdout)

    def traceback_files(self):
        """The files of the traceback frames on stderr, first frame first."""
        files = []
        for line in self.stderr_lines:
            stripped = line.strip()
            if stripped.startswith('File "'):
                files.append(stripped.split('"')[1])
        return files

    def assert_contract_error(self, *words):
        """Exit 2, exactly one line on stderr naming the problem, no reward."""
        assert self.returncode == 2, self.describe()
        assert len(self.stderr_lines) == 1, self.describe()
        for word in words:
            assert word in self.stderr, self.describe()
        assert self.rewards == {}, self.describe()

    def assert_verifier_raised(self, verifier, exception_name):
        """Exit 1, a traceback whose first frame is the verifier, no reward."""
        assert self.returncode == 1, self.describe()
        assert self.stderr.startswith("Traceback (most recent call last):") or exception_name == "SyntaxError", (
            self.describe()
        )
        files = self.traceback_files()
        assert files, self.describe()
        assert Path(files[0]).resolve() == Path(verifier).resolve(), self.describe()
        assert exception_name in self.stderr_lines[-1], self.describe()
        assert self.rewards == {}, self.describe()

    def describe(self):
        return "exit %s\nargs: %s\n--- stdout\n%s--- stderr\n%s--- rewards %r" % (
            self.returncode,
            self.args,
            self.stdout,
            self.stderr,
            self.rewards,
        )


WARM_VARIABLE = "VERIFIER_TUI_WARM"
START_MODES = ["cold", "warm"]


def _start(command, warm, **popen):
    """Popen ``command``; ``warm``: held on a pipe at fd 10 or above (named by
    VERIFIER_TUI_WARM), told to go once it waits on that pipe."""
    if not warm:
        return subprocess.Popen(command, **popen)
    read, go = os.pipe()
    high = fcntl.fcntl(read, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(read)
    popen["env"] = dict(popen["env"], **{WARM_VARIABLE: str(high)})
    try:
        proc = subprocess.Popen(command, pass_fds=(high,), **popen)
    finally:
        os.close(high)
    deadline = time.monotonic() + TIMEOUT
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            with open("/proc/%d/wchan" % proc.pid) as handle:
                if handle.read().endswith("pipe_read"):
                    break
        except OSError:
            break
        time.sleep(0.005)
    try:
        os.write(go, b"g")
    except OSError:
        pass
    os.close(go)
    return proc


class Sandbox:
    """A staged sandbox under ``root`` and a way to run the runner in it
    (``start``: "cold" or "warm", see the module's docstring)."""

    def __init__(self, root, python=None, start="cold"):
        self.root = root
        self.warm = start == "warm"
        self.python = python or sys.executable
        self.tests = root / "tests"
        self.ng = self.tests / ".ng"
        self.runner = self.ng / "run_verifier.py"
        self.app = root / "app"
        self.reward_dir = root / "logs" / "verifier"
        for folder in (self.ng, self.app, self.reward_dir):
            folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(str(RUNNER_SOURCE), str(self.runner))
        shutil.copyfile(str(EXTRAS_SOURCE), str(self.ng / EXTRAS_SOURCE.name))
        self.verifier_path = self.tests / "verifier.py"

    def write(self, relative, text):
        """Write dedented ``text`` at ``root/relative``; return the path."""
        return write(self.root / relative, textwrap.dedent(text).lstrip("\n"))

    def verifier(self, source, where="tests/verifier.py"):
        """Write the verifier module; later runs use it."""
        self.verifier_path = self.write(where, source)
        return self.verifier_path

    def package(self, base, value, name="nemo_gym"):
        """Plant ``name/verifiers/__init__.py`` under folder ``base`` with
        ``x = value`` and ``ORIGIN`` naming the copy."""
        base = Path(base)
        (base / name / "verifiers").mkdir(parents=True, exist_ok=True)
        (base / name / "__init__.py").write_text("ORIGIN = %r\n" % str(base), encoding="utf-8")
        (base / name / "verifiers" / "__init__.py").write_text(
            "x = %r\nORIGIN = %r\n" % (value, str(base)), encoding="utf-8"
        )
        return base / name

    def run(self, *extra, **kw):
        """Run the runner with --verifier/--workspace/--reward-dir filled in
        (override any of them by keyword; ``None`` leaves it out)."""
        verifier = kw.pop("verifier", self.verifier_path)
        workspace = kw.pop("workspace", self.app)
        reward_dir = kw.pop("reward_dir", self.reward_dir)
        args = []
        if verifier is not None:
            args += ["--verifier", str(verifier)]
        if workspace is not None:
            args += ["--workspace", str(workspace)]
        if reward_dir is not None:
            args += ["--reward-dir", str(reward_dir)]
        return self.run_raw(*(args + [str(arg) for arg in extra]), **kw)

    def start(self, *extra):
        """Start the runner like :meth:`run` and return the running process
        (stdout and stderr piped as bytes, stdin closed) without waiting."""
        args = [
            "--verifier",
            str(self.verifier_path),
            "--workspace",
            str(self.app),
            "--reward-dir",
            str(self.reward_dir),
        ] + [str(arg) for arg in extra]
        return _start(
            [str(self.python), str(self.runner)] + args,
            self.warm,
            cwd=str(self.root),
            env=clean_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    def run_raw(self, *args, **kw):
        """Run ``python *flags runner *args`` exactly; clean environment."""
        python = kw.pop("python", None) or self.python
        flags = list(kw.pop("flags", ()))
        runner = kw.pop("runner", self.runner)
        env = clean_env(kw.pop("pythonpath", None), kw.pop("env", None))
        cwd = kw.pop("cwd", self.root)
        stdin_bytes = kw.pop("input", None)
        reward_dir = kw.pop("inspect_reward_dir", None)
        if kw:
            raise TypeError("unknown keyword(s): %s" % ", ".join(kw))
        command = [str(python)] + flags + [str(runner)] + [str(arg) for arg in args]
        proc = _start(
            command,
            self.warm,
            cwd=str(cwd),
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            stdout, stderr = proc.communicate(stdin_bytes if stdin_bytes is not None else b"", timeout=TIMEOUT)
        finally:
            proc.kill()
            proc.wait()
        completed = subprocess.CompletedProcess(
            command, proc.returncode, stdout.decode("utf-8", "replace"), stderr.decode("utf-8", "replace")
        )
        return Result(completed, Path(reward_dir) if reward_dir else self.reward_dir)


@pytest.fixture
def python38():
    """A CPython 3.8 to run things with (the test is skipped without one)."""
    if PYTHON38 is None:
        pytest.skip(NO_PYTHON38)
    return PYTHON38


@pytest.fixture
def runner_source():
    """The runner file under test (see RUNNER_UNDER_TEST)."""
    return RUNNER_SOURCE


def pytest_generate_tests(metafunc):
    """``start_mode``: cold, and warm too in a module that sets ``WARM_TOO``."""
    if "start_mode" in metafunc.fixturenames:
        metafunc.parametrize("start_mode", START_MODES if getattr(metafunc.module, "WARM_TOO", False) else ["cold"])


@pytest.fixture
def sandbox(tmp_path, start_mode):
    """A staged sandbox run by the interpreter running the tests."""
    return Sandbox(tmp_path, start=start_mode)


@pytest.fixture(params=PYTHONS)
def any_sandbox(request, tmp_path, start_mode):
    """The same, once per interpreter: the current one and CPython 3.8."""
    return Sandbox(tmp_path, python=request.param, start=start_mode)
