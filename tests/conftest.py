"""Fixtures for every test folder. Plain helpers are in ``tests/helpers.py``."""

from __future__ import annotations

import gc
import os
import shutil
import signal
import stat
import tempfile
import venv
from pathlib import Path

import pytest
from hypothesis import settings

from tests.helpers.commands import inner_pytest_options
from tests.helpers.processes import answering, needs_namespaces
from tests.helpers.tasks import copy_example
from tests.users import ordinary_user  # noqa: F401 - a fixture for every test

# A shell without job control starts a command put in the background with
# SIGINT ignored, and an ignored signal stays ignored across exec: the tools
# these tests interrupt as Ctrl-C does would never hear it. Handled here, it
# is back to its default in every process a test starts.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
# Under nohup, SIGHUP is ignored the same way, and the tests that close a
# terminal would wait for a hangup that never comes. A handler that does
# nothing keeps this run (and xdist's workers, told so below) alive through a
# hangup, as nohup wants, and is reset to the default in every program a test
# starts (exec resets caught signals, not ignored ones).
_HANGUP_IGNORED = signal.getsignal(signal.SIGHUP) is signal.SIG_IGN


def _outlive_hangups() -> None:
    signal.signal(signal.SIGHUP, lambda signum, frame: None)


if _HANGUP_IGNORED:
    _outlive_hangups()

# These machines are shared: one example of a property test may wait on another
# process for longer than Hypothesis's 200 ms deadline, and fail a test that
# found nothing. No property test here is about speed: none sets a deadline of its own.
settings.register_profile("shared-machines", deadline=None)
settings.load_profile("shared-machines")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    node.workerinput["hangup_ignored"] = _HANGUP_IGNORED


# Tests of the pytest plugin start pytest in a subprocess, as a user does.
pytest_plugins = ["pytester"]


_bare_python: list[Path] = []


def pytest_configure(config):
    """The runs the tests start find ``python3`` (the runner's default
    interpreter, as ``test.sh`` finds it) in a bare virtual environment of the
    interpreter running the tests, made here once and put first on PATH;
    xdist's workers inherit it. So no test depends on what this machine's own
    ``python3`` is or holds. On the machines CI runs on, that one has a
    ``.pth`` start-up hook importing certifi: 58 ms of CPU at each start,
    against 18 ms for the bare one. The tool itself is not put on PATH (the
    README's venv is made, not activated)."""
    # Each Textual app a test runs leaves a few hundred thousand objects, and
    # with Python's default thresholds the workers ran a full collection
    # every app or so: a quarter of their CPU went to the collector. Fewer
    # young collections and almost no automatic full ones (the workers peak
    # under 200 MB; tests that need a collection make it themselves).
    gc.set_threshold(50_000, 20, 100)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        if config.workerinput.get("hangup_ignored"):
            _outlive_hangups()
        return
    # The machines CI runs on set PYTHONDONTWRITEBYTECODE. The processes the
    # tests start (``python -m verifier_tui``, the watcher process, inner
    # pytest runs, xdist's workers) import this source tree, and without its
    # bytecode each compiled it again (150 ms of CPU a start). Runs of the
    # tool set their own (``OWN`` in sandbox/environment.py), so what a
    # verifier run writes is the same either way.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    _temporary_files_in_memory()
    folder = Path(tempfile.mkdtemp(prefix="verifier-tui-tests-python-"))
    venv.create(folder, with_pip=False, symlinks=True)
    _bare_python.append(folder)
    os.environ["PATH"] = os.pathsep.join([str(folder / "bin"), os.environ.get("PATH", "")])


def _temporary_files_in_memory() -> None:
    """Without a TMPDIR of the user's, the run's temporary folders (pytest's
    ``tmp_path``, the tool's scratch) go to a folder of this user's own in
    /dev/shm, a tmpfs, where there is one. The suite makes tens of thousands
    of files; on the disks CI runs on, each file made costs far more CPU than
    in memory (the engine and Harbor tests took 6% less CPU in all). pytest
    keeps its last three runs there, as it does in /tmp."""
    if "TMPDIR" in os.environ or not os.path.isdir("/dev/shm"):
        return
    folder = f"/dev/shm/vt-tests-{os.getuid()}"  # no "verifier-tui-": tests look for that name
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        owned = os.lstat(folder)
        if not stat.S_ISDIR(owned.st_mode) or owned.st_uid != os.getuid() or owned.st_mode & 0o077:
            return  # not a private folder of ours: the default place
        if shutil.disk_usage(folder).free < 2**30:
            return
    except OSError:
        return
    os.environ["TMPDIR"] = folder
    tempfile.tempdir = None  # tempfile reads TMPDIR again


def pytest_collection_modifyitems(items):
    """Each folder's modules spread evenly over the run, each module's tests
    kept together. xdist hands tests out in about this order; in collection's
    order every worker reached ``tests/tui`` at the same time, and apps that
    wait on timers and runs left the cores idle. Blended with the folders
    that keep processes busy, that wait is filled."""
    modules: dict[Path, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(item.path, []).append(item)
    by_folder: dict[Path, list[Path]] = {}
    for path in modules:
        by_folder.setdefault(path.parent, []).append(path)
    place = {path: (k + 0.5) / len(paths) for paths in by_folder.values() for k, path in enumerate(paths)}
    items[:] = [item for path in sorted(modules, key=place.__getitem__) for item in modules[path]]


def pytest_sessionfinish(session):
    """Collect what the tests left (the cycles of every finished Textual app,
    a few hundred thousand objects a worker, that the thresholds above leave
    for later) before xdist's worker tells the controller it is done: a hook
    wrapper sends that once this hook has run. From then execnet gives the
    worker 5 s to end, else sends it SIGINT; pytest's own collections at
    unconfigure (five in a row) walked all of it after that, 3 s and more on
    a busy machine, and the KeyboardInterrupt landed in Hypothesis's gc
    callback, printed as a PytestUnraisableExceptionWarning at the end of
    ``pytest -n 4``. Here the collection is the same one, made earlier; what
    is still alive then lives until the process ends, so it is frozen: those
    five walk only what is made after (a second each over a worker's modules
    and caches, else)."""
    gc.collect()
    gc.freeze()


def pytest_unconfigure(config):
    while _bare_python:
        shutil.rmtree(_bare_python.pop(), ignore_errors=True)


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("xdg-cache")


@pytest.fixture
def private_cache(tmp_path):
    """A cache folder of this test's own, empty at its start: for the tests
    about the cache, or about what the tool does before it has one."""
    return tmp_path / "xdg-cache"


@pytest.fixture(autouse=True)
def tool_cache(request, shared_cache, monkeypatch):
    """``XDG_CACHE_HOME`` for the test and all it starts: never the user's
    ~/.cache. One folder per worker, shared by its tests as a user's runs
    share theirs, so the interpreter and namespace probes and the view's
    skeletons are made once rather than in every test (a tenth of the
    suite's CPU); :func:`private_cache` where a test asks for it."""
    cache = request.getfixturevalue("private_cache") if "private_cache" in request.fixturenames else shared_cache
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return cache


@pytest.fixture
def example(tmp_path):
    """``example("hello-file")``: a private copy of a bundled example task, at
    ``tmp_path/tasks/<name>`` (a fixed parent name, so screens and messages
    that show paths relative to the task's parent never show a tmp name)."""

    def copy(name: str) -> Path:
        return copy_example(name, tmp_path / "tasks" / name)

    return copy


def _on_tmpfs(path: Path) -> bool:
    """Whether ``path`` is on a tmpfs: the file system of the deepest mount
    holding it, as /proc/self/mountinfo lists them (a mount point's spaces
    and such written as octal escapes; the type after the " - " field)."""
    best, fstype = "", ""
    target = str(path.resolve())
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields, _, rest = line.partition(" - ")
        point = fields.split()[4].encode().decode("unicode_escape")
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, fstype = point, rest.split()[0]
    return fstype == "tmpfs"


@pytest.fixture
def example_on_disk(tmp_path):
    """As :func:`example`, but on a disk's file system: ``tmp_path`` where it
    is on one, else /var/tmp. ext4 gives a folder made the inode of one just
    removed, which tmpfs never does, and a test of what follows a folder by
    its inode needs that reuse."""
    parent = Path(tempfile.mkdtemp(prefix="vt-tests-", dir="/var/tmp" if _on_tmpfs(tmp_path) else tmp_path))

    def copy(name: str) -> Path:
        return copy_example(name, parent / "tasks" / name)

    yield copy
    shutil.rmtree(parent, ignore_errors=True)


@pytest.fixture
def pytester(pytester, monkeypatch):
    """pytest's own ``pytester``, whose inner runs leave off the plugins this
    suite installs for itself (:func:`~tests.helpers.inner_pytest_options`).
    ``pytester`` clears ``PYTEST_ADDOPTS`` when it is made; this sets it after."""
    monkeypatch.setenv("PYTEST_ADDOPTS", inner_pytest_options())
    return pytester


@pytest.fixture
def env(tmp_path, tool_cache):
    """The user's environment for a command a test starts, with the tool's
    caches and scratch folders kept in ``tmp_path``."""
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    out = dict(os.environ)
    out.update(XDG_CACHE_HOME=str(tool_cache), TMPDIR=str(tmpdir))
    return out


@pytest.fixture(params=["namespace", "copy"])
def sandbox(request, monkeypatch):
    """Each isolation in turn (``VERIFIER_TUI_SANDBOX``): the namespace where
    this machine has one (skipped, saying why, where it has not), and the
    copy, which every machine can do."""
    from verifier_tui.engine.sandbox.isolation import VARIABLE

    if request.param == "namespace":
        needs_namespaces()
    monkeypatch.setenv(VARIABLE, request.param)
    return request.param


@pytest.fixture
def namespace(monkeypatch):
    """The sandbox's view, asked for by name (skipped, saying why, where this machine has none)."""
    from verifier_tui.engine.sandbox.isolation import VARIABLE

    needs_namespaces()
    monkeypatch.setenv(VARIABLE, "namespace")


@pytest.fixture
def listener():
    """A TCP server on this machine's loopback that answers every connection: its port."""
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    with answering([server]):
        yield server.getsockname()[1]
