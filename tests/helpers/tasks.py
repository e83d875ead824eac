"""Building tasks on disk, the bundled examples, other interpreters, and
the verifiers that get stuck or plant links."""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "tasks"
#: The NeMo Gym shim, as a published task carries it in tests/test.sh.
SHIM = (EXAMPLES / "hello-file" / "tests" / "test.sh").read_text(encoding="utf-8")
PY = sys.executable
#: Bound on any one command a test starts: a hang fails the test instead of blocking the suite.
HANG_GUARD_S = 120
#: The bundled examples that have cases.
TASKS_WITH_CASES = ["count-errors", "fizzbuzz-module", "greeting-rows", "hello-file", "sum-column", "summary-keywords"]

DEFAULT_VERIFIER = "def verify(workspace):\n    return 1.0\n"

#: A verify that gathers its failed checks and raises them as one ExceptionGroup (line 8): the checks,
#: never raised one by one, have no traceback of their own.
CHECKS_RAISED_AS_A_GROUP = """\
def verify(workspace):
    problems = []
    if not (workspace / "answer.txt").exists():
        problems.append(FileNotFoundError("answer.txt is missing"))
    if not (workspace / "notes.md").exists():
        problems.append(AssertionError("notes.md is missing"))
    if problems:
        raise ExceptionGroup("2 checks failed", problems)
    return 1.0
"""

#: verify's returns whose runner message holds "; " in the value or a key, and one naming the other
#: rule: (verify's return, what was returned as the runner says it, the rule it broke as the runner says
#: it, or "" where it names none).
RETURNED_WITH_A_SEMICOLON = [
    (
        "'a; b'",
        "verify returned 'a; b' (str)",
        "it must return a finite number (int or float, not bool) or a dict of them",
    ),
    ("{'reward; x': '1'}", "verify returned a dict whose value for 'reward; x' is not a finite number: '1' (str)", ""),
    (
        "{'r; a reward dict needs at least one number': 'x'}",
        "verify returned a dict whose value for 'r; a reward dict needs at least one number' is not a finite "
        "number: 'x' (str)",
        "",
    ),
    ("{}", "verify returned an empty dict", "a reward dict needs at least one number"),
    *(
        # a key that is not a string: the runner's message ends with its repr and type, the repr verify's own
        (
            f"{{type('K', (), {{'__repr__': lambda self: 'K; {rule}'}})(): 1.0}}",
            f"verify returned a dict with a key that is not a string: K; {rule} (K)",
            "",
        )
        for rule in (
            "a reward dict needs at least one number",
            "it must return a finite number (int or float, not bool) or a dict of them",
        )
    ),
]

#: A verify that returns an object whose repr breaks over lines (as pandas' and numpy's do), and what was
#: returned as the runner says it, its line break shown as every line of the tool shows one.
RETURNS_A_MULTILINE_REPR = (
    "class S:\n    def __repr__(self):\n        return 'S(a\\nb; c)'\n\n\ndef verify(workspace):\n    return S()\n",
    "verify returned S(a\\nb; c) (S)",
)


def write(path: Path, text: str | bytes) -> Path:
    """Write ``text`` (dedented) to ``path``, creating its folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def nest(folder: Path, depth: int) -> None:
    """Folders ``d/d/d/...`` ``depth`` deep inside ``folder``, made one level at
    a time through file descriptors: a path that long is past what one system
    call takes (PATH_MAX)."""
    fd = os.open(folder, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)


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

    With a ``toml``, the task has an ``instruction.md`` (each step ``toml`` names gets
    ``steps/<name>/instruction.md``), without which Harbor refuses it, as a real task has.
    """
    (root / "tests").mkdir(parents=True, exist_ok=True)
    if toml is not None or timeout is not None:
        text = toml or ""
        if timeout is not None:
            text += f"\n[verifier]\ntimeout_sec = {timeout}\n"
        (root / "task.toml").write_text(text, encoding="utf-8")
        (root / "instruction.md").write_text("Do the task.\n", encoding="utf-8")
        make_step_folders(root)
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


def big_task_at_a_long_path(under: Path, verifier: str = DEFAULT_VERIFIER, length: int = 4_000) -> Path:
    """A task whose case ``only`` has a workspace of 1,100 files (past the copy's bound) at a path of about
    ``length`` characters: within PATH_MAX, past a page of an overlay's mount options."""
    left = length - len(f"{under}/t/cases/only/workspace")
    folders, last = divmod(left, 201)
    if last < 2:  # (no name is empty)
        folders, last = folders - 1, last + 201
    deep = under.joinpath(*["d" * 200] * folders, "e" * (last - 1))
    assert len(str(deep / "t/cases/only/workspace")) == length
    files = {f"f{index}.txt": "x" for index in range(1100)}
    return make_task(deep / "t", verifier, cases={"only": {"src/a.py": "a", **files}})


#: What the note on such a workspace says (engine/sandbox/stage.py).
LONG_PATH_NOTE = "but its path is too long for an overlay's mount options"


def make_step_folders(root: Path) -> None:
    """``steps/<name>/instruction.md`` for each ``[[steps]]`` of ``root``'s task.toml that
    names a plain folder (one task.toml refuses otherwise is left as written)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    try:
        steps = tomllib.loads((root / "task.toml").read_text(encoding="utf-8")).get("steps")
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return
    for step in steps if isinstance(steps, list) else []:
        name = step.get("name") if isinstance(step, dict) else None
        if isinstance(name, str) and name.strip() and "/" not in name and name not in (".", ".."):
            (root / "steps" / name).mkdir(parents=True, exist_ok=True)
            (root / "steps" / name / "instruction.md").touch()


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


def interpreter_with_nemo_gym(root: Path) -> Path:
    """A virtual environment whose site-packages holds a ``nemo_gym`` of its own
    (``nemo_gym.verifiers.VENDORED`` False, where a task's vendored copy says
    True), as an interpreter a user preloads it from has one; its interpreter."""
    python = interpreter_with_long_sys_path(root, 0)
    (site_packages,) = root.glob("lib/python3*/site-packages")
    (site_packages / "nemo_gym" / "verifiers").mkdir(parents=True)
    (site_packages / "nemo_gym" / "__init__.py").write_text("")
    (site_packages / "nemo_gym" / "verifiers" / "__init__.py").write_text("VENDORED = False\n")
    return python


class Gate:
    """Holds each run of a verifier it is put in (:meth:`verifier`) until it is open: the run
    first adds a line to ``started``, then waits for ``go``. Both live outside the task, where the
    copy sandbox's look at the user's files does not reach, so a test can change files while a run
    is surely going, then let it end."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.started, self.go = folder / "started", folder / "go"
        self.started.write_text("")
        self.go.touch()  # open: runs go straight through

    def verifier(self, source: str) -> str:
        """``source`` (a ``def verify(workspace):`` at top level) with the gate at its start."""
        head = (
            f"import os as _os, time as _time\n\n\ndef _gate():\n"
            f"    with open({str(self.started)!r}, 'a') as handle:\n        handle.write('run\\n')\n"
            f"    while not _os.path.exists({str(self.go)!r}):\n        _time.sleep(0.01)\n\n\n"
        )
        called = "def verify(workspace):\n    _gate()\n"
        return head + textwrap.dedent(source).replace("def verify(workspace):\n", called)

    def runs(self) -> int:
        """How many runs have reached the gate."""
        return self.started.read_text().count("\n")

    def wait_for_run(self, number: int) -> None:
        """Until the ``number``-th run is at the gate (within :data:`HANG_GUARD_S`)."""
        import time

        deadline = time.monotonic() + HANG_GUARD_S
        while self.runs() < number:
            assert time.monotonic() < deadline, f"run {number} never started"
            time.sleep(0.02)


def remove_and_make_on_its_inode(gone: Path, made: Path) -> None:
    """``rm -rf gone; mkdir made`` at once, as a git checkout does: on ext4 the
    folder made has the inode the removed one freed. A test of that is
    skipped where the file system did not reuse it (tmpfs never does)."""
    inode = gone.stat().st_ino
    shutil.rmtree(gone)
    for _ in range(50):  # a watch on it may hold the inode a moment after the rm
        made.mkdir()
        if made.stat().st_ino == inode:
            return
        made.rmdir()
        time.sleep(0.01)
    pytest.skip(f"{made} did not get the inode {gone} freed (this file system does not reuse it at once)")


@contextlib.contextmanager
def nested_folders(folder: Path, depth: int = 1100) -> Iterator[None]:
    """``depth`` folders named ``d``, one inside the other, under ``folder`` for the block's time
    (past Python's recursion limit, which os.walk and rmtree reach): made a level at a time, as the
    path soon passes what one system call takes, and removed by rm, which walks without recursing."""
    try:
        here = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for _ in range(depth):
                os.mkdir("d", dir_fd=here)
                inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=here)
                os.close(here)
                here = inner
        finally:
            os.close(here)
        yield
    finally:
        subprocess.run(["rm", "-rf", str(folder / "d")], check=True)
