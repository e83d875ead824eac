"""Helpers shared by every test folder: building tasks, copying the bundled
examples, and watching processes vanish.

Plain functions and constants; the fixtures that use them live in the root
``tests/conftest.py``. Import as ``from tests.helpers import ...`` (the
repository root is on ``sys.path`` through pytest's ``pythonpath`` setting).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "tasks"
#: The NeMo Gym shim, as a published task carries it in tests/test.sh.
SHIM = (EXAMPLES / "hello-file" / "tests" / "test.sh").read_text(encoding="utf-8")
PY = sys.executable
#: The installed console script, else ``python -m verifier_tui``.
CONSOLE_SCRIPT = Path(sys.executable).parent / "verifier-tui"
TOOL = [str(CONSOLE_SCRIPT)] if CONSOLE_SCRIPT.exists() else [sys.executable, "-m", "verifier_tui"]
MODULE = [sys.executable, "-m", "verifier_tui"]
#: Bound on any one command a test starts: a hang fails the test instead of blocking the suite.
HANG_GUARD_S = 120
#: The bundled examples that have cases.
TASKS_WITH_CASES = ["count-errors", "fizzbuzz-module", "hello-file", "sum-column", "summary-keywords"]

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


def run_tool(env: dict[str, str], *args: object, tool: list[str] | None = None, cwd: Path | None = None,
             input: str | None = None) -> subprocess.CompletedProcess:
    """``verifier-tui ARGS`` as a user runs it, bounded by :data:`HANG_GUARD_S`."""
    return subprocess.run((tool or TOOL) + [str(a) for a in args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=HANG_GUARD_S, input=input,
                          stdin=None if input is not None else subprocess.DEVNULL)


def no_traceback(done: subprocess.CompletedProcess) -> None:
    """The tool printed no Python traceback of its own."""
    assert "Traceback (most recent call last)" not in done.stderr, done.stderr
