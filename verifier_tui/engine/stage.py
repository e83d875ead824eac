"""The sandbox layout, staged in the tool's own scratch folder.

```
<stage>/tests/                 a mirror of the task's tests folder
<stage>/tests/.ng/run_verifier.py   the runner (and nemo_gym/verifiers, vendored)
<stage>/app/                   a mirror of the workspace; with namespaces, where
                               the overlay of the user's workspace is mounted
<stage>/logs/verifier/         the reward folder, emptied before every run
<stage>/inputs/                the response and task data (copies: the runner is
                               never handed the user's own files), explain output
<stage>/overlay/{upper,work}   with namespaces: the overlay's scratch layer,
                               emptied before every run
<stage>/ctl/                   with namespaces: the mounts to make, and what the
                               namespace's init reports (see engine/isolation.py)
<stage>/view/                  with namespaces: the skeleton of the run's root (its
                               mount points), on which the sandbox's view is built
```

With namespaces the runner sees these folders where the sandbox has them:
``tests`` at ``/tests`` (read-only), ``app`` at ``/app``, ``logs/verifier`` at
``/logs/verifier`` and ``inputs`` at ``/.verifier-tui``.

A session keeps one stage per selection in its scratch folder (see
:class:`Scratch`), so re-runs only copy what changed (see
:mod:`verifier_tui.engine.mirror`), or, with namespaces, copy nothing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

from verifier_tui.engine.isolation import APP, INPUTS, REWARD, TESTS, overlay_can_take
from verifier_tui.engine.mirror import Mirror, make_real_dir, remove_path, remove_tree
from verifier_tui.engine.record import field, record
from verifier_tui.runner_source import runner_path

# The watcher's changes arrive on the event loop while staging runs in a thread.
_pending_lock = threading.Lock()

# What a stage holds; anything else in it was left there by a verifier.
_STAGE_FOLDERS = {"tests", "app", "logs", "inputs", "overlay", "ctl", "view"}


@record
class Stage:
    """One staged sandbox layout, reused across re-runs of the same inputs."""

    root: Path
    namespace: bool = False
    """Runs of this stage get a namespace: the workspace is an overlay, not a copy."""
    tests: Mirror | None = None
    overlaid: list = field(default_factory=list)
    """Files of a step's own tests folder copied over ``tests`` this run (relative paths)."""
    workspace: Mirror | None = None
    overlay_lower: Path | None = None
    """With namespaces, the user's workspace the overlay shows at ``/app``
    (None: no overlay this run; the workspace is the copy in ``app``)."""
    overlay_for: Path | None = None
    """The workspace whose size chose between the copy and the overlay (asked once)."""
    overlay_big: bool = False
    vendored_from: Path | None = None
    runner_from: Path | None = None  # the runner script placed in .ng/ (ours or the task's own)
    notes: list[str] = field(default_factory=list)
    live: bool = False
    """A watcher reports every change to the user's workspace (see
    :meth:`note`): a re-run copies what changed instead of walking it all."""
    pending: set | None = None
    """The workspace's paths (relative) changed since the last staging;
    None: not known, walk it all."""

    app_at: str = APP
    """Where the runner sees the workspace in the view (the task's test.sh may say another path)."""

    def seen(self, path: Path) -> str:
        """``path``, one of this stage's, as the runner sees it: in the view
        with namespaces (``/tests/...``), else the path itself."""
        if not self.namespace:
            return str(path)
        for folder, there in ((self.tests_dir, TESTS), (self.app_dir, self.app_at), (self.reward_dir, REWARD),
                              (self.inputs_dir, INPUTS)):
            if path == folder or path.is_relative_to(folder):
                rel = path.relative_to(folder).as_posix()
                return there if rel == "." else f"{there.rstrip('/')}/{rel}"
        return str(path)

    @property
    def tests_dir(self) -> Path:
        return self.root / "tests"

    @property
    def ng_dir(self) -> Path:
        return self.root / "tests" / ".ng"

    @property
    def app_dir(self) -> Path:
        return self.root / "app"

    @property
    def reward_dir(self) -> Path:
        return self.root / "logs" / "verifier"

    @property
    def inputs_dir(self) -> Path:
        return self.root / "inputs"

    @property
    def upper_dir(self) -> Path:
        return self.root / "overlay" / "upper"

    @property
    def work_dir(self) -> Path:
        return self.root / "overlay" / "work"

    @property
    def ctl_dir(self) -> Path:
        return self.root / "ctl"

    @property
    def view_dir(self) -> Path:
        return self.root / "view"

    def stage_input(self, source: Path, name: str) -> Path:
        """A copy of one of the user's input files (response, task data) for
        the runner: a verifier that finds the path in ``sys.argv`` and writes
        it writes the copy. A file that cannot be read is handed over as it
        is: the runner then names it and the problem."""
        target = self.inputs_dir / name
        try:
            if os.path.lexists(target):
                remove_path(target)
            shutil.copyfile(source, target)
        except OSError:
            return source
        return target

    def prepare(self, tests_source: Path, workspace: Path | None, nemo_gym_verifiers: Path | None,
                runner: Path | None = None, task_vendors_nemo_gym: bool = False,
                extra_tests: Path | None = None) -> list[str]:
        """Bring the layout up to date for a run; returns notes for the user.

        ``extra_tests``: a step's own ``steps/<name>/tests``, copied over the
        mirrored tests folder as Harbor 0.26 uploads it over ``tests/`` into
        ``/tests`` (harbor/verifier/verifier.py, ``_resolve_tests``). The
        mirror's walk at the next prepare puts the overlaid files back.

        ``runner`` is the runner script to place (default: ours). When the
        task vendors its own ``tests/.ng/nemo_gym`` (a published task), that
        copy is staged as it is, the one the sandbox imports, and
        ``nemo_gym_verifiers`` is not vendored over it.

        The last run's verifier could reach this whole layout (``workspace.parent``
        is the stage): whatever it renamed, replaced by a link or left beside
        the four folders is put right first, and no link is ever followed."""
        notes: list[str] = []
        self._tidy_root()
        # The reward folder first: whatever happens next, no verdict of an
        # earlier run can be read as this one's.
        make_real_dir(self.reward_dir.parent)
        _empty(self.reward_dir)
        if workspace is not None and not workspace.is_dir():
            raise StagingError(f"the workspace {workspace} is not there any more (deleted or moved?)")
        keep = {".ng/run_verifier.py", ".ng/verifier.py"} | (set() if task_vendors_nemo_gym else {".ng/nemo_gym"})
        if self.tests is None or self.tests.source != tests_source or self.tests.keep != keep:
            if os.path.lexists(self.tests_dir):
                remove_path(self.tests_dir)
            self.tests = Mirror(tests_source, self.tests_dir, keep=frozenset(keep))
            self.vendored_from = None
        self.tests.sync()
        notes += [f"tests: {n}" for n in self.tests.notes]
        try:
            self.overlaid = _overlay(extra_tests, self.tests_dir) if extra_tests is not None else []
        except OSError as exc:
            raise StagingError(f"cannot stage the step's own tests folder {extra_tests}: {exc}") from None
        make_real_dir(self.ng_dir)
        self._place_runner(runner or runner_path())
        if not task_vendors_nemo_gym:
            self._vendor(nemo_gym_verifiers)
        overlay = self.namespace and workspace is not None and overlay_can_take(str(workspace)) and self._big(workspace)
        if overlay and self.overlay_lower != workspace:
            notes.append(f"the workspace holds more than {COPY_UP_TO_ENTRIES:,} entries or {COPY_UP_TO_BYTES >> 20} MB: "
                         "it is an overlay over yours, not a copy, so renaming a folder that came with it fails "
                         "with EXDEV (in the sandbox it works)")
        self.overlay_lower = workspace if overlay else None
        if workspace is None:
            self.workspace = None
            # An empty scratch workspace, emptied again if a verifier wrote into it.
            if os.path.lexists(self.app_dir):
                remove_path(self.app_dir)
            self.app_dir.mkdir()
        elif overlay:
            # The overlay is mounted over an empty folder; the last run's
            # writes are in the upper layer: clearing it is the whole staging.
            self.workspace = None
            make_real_dir(self.app_dir)
            _empty(self.upper_dir)
            make_real_dir(self.work_dir)
        else:
            if self.workspace is None or self.workspace.source != workspace:
                if os.path.lexists(self.app_dir):
                    remove_path(self.app_dir)
                if self.workspace is not None:
                    self.workspace.close()
                self.workspace = Mirror(workspace, self.app_dir)
                self.pending = None
            self.workspace.track = self.live
            with _pending_lock:
                changed, self.pending = self.pending, (set() if self.live else None)
            self.workspace.sync(changed)
            notes += [f"workspace: {n}" for n in self.workspace.notes]
        make_real_dir(self.inputs_dir)
        if self.namespace:
            _empty(self.ctl_dir)
        return notes

    def _big(self, workspace: Path) -> bool:
        """Whether ``workspace`` is past what a run copies (asked once per
        workspace, by a walk that stops at the bound)."""
        if self.overlay_for != workspace:
            self.overlay_for, self.overlay_big = workspace, not _within(workspace, COPY_UP_TO_ENTRIES, COPY_UP_TO_BYTES)
        return self.overlay_big

    def note(self, paths, recreated) -> None:
        """The watcher saw ``paths`` change (absolute, the user's); a folder
        in ``recreated`` was made anew or events under it were lost."""
        with _pending_lock:
            self._note(paths, recreated)

    def _note(self, paths, recreated) -> None:
        mirror = self.workspace
        if not self.live or mirror is None or self.pending is None:
            return
        root = mirror.source
        if any(root == r or root.is_relative_to(r) or r.is_relative_to(root) for r in recreated):
            self.pending = None
            return
        for path in paths:
            if path == root:
                self.pending = None
                return
            if path.is_relative_to(root):
                self.pending.add(path.relative_to(root).as_posix())

    def follow(self, live: bool) -> None:
        """A watcher starts (or stops) reporting changes: what happened before
        it was in place is not known, so the next staging walks it all."""
        self.live = live
        self.pending = None

    def close(self) -> None:
        """The session is over: the mirrors stop following their sources (the
        files go with the scratch folder)."""
        for mirror in (self.tests, self.workspace):
            if mirror is not None:
                mirror.close()

    @property
    def entries(self) -> int:
        """How many entries the stage's copies hold."""
        return sum(len(mirror.index) for mirror in (self.tests, self.workspace) if mirror is not None)

    def _tidy_root(self) -> None:
        make_real_dir(self.root)
        for entry in os.scandir(self.root):
            if entry.name not in _STAGE_FOLDERS:
                remove_path(Path(entry.path))

    def place_dataset_verifier(self, verifier: Path) -> None:
        shutil.copyfile(verifier, self.ng_dir / "verifier.py")

    def _place_runner(self, source: Path) -> None:
        target = self.ng_dir / "run_verifier.py"
        try:
            sst, tst = source.stat(), target.stat()
            if self.runner_from == source and sst.st_size == tst.st_size and sst.st_mtime_ns == tst.st_mtime_ns:
                return
        except OSError:
            pass
        shutil.copy2(source, target)
        self.runner_from = source

    def _vendor(self, verifiers: Path | None) -> None:
        """Vendor nemo_gym/verifiers beside the runner, as the shim does."""
        package = self.ng_dir / "nemo_gym"
        if verifiers is None:
            if package.exists():
                shutil.rmtree(package, ignore_errors=True)
            self.vendored_from = None
            return
        if self.vendored_from == verifiers and package.is_dir():
            return
        shutil.rmtree(package, ignore_errors=True)
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("", encoding="utf-8")
        shutil.copytree(verifiers, package / "verifiers", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        self.vendored_from = verifiers


# With namespaces, a workspace up to this size is copied into the run's view
# (a rename of its folders then works as in the sandbox, where the agent's
# files are in the container's writable layer); a bigger one is an overlay,
# whose staging costs one mount however big it is. Copying 1,000 small files
# costs about 40 ms once (later runs copy only what changed).
COPY_UP_TO_ENTRIES = 1000
COPY_UP_TO_BYTES = 32 << 20


def _within(folder: Path, entries: int, size: int) -> bool:
    """Whether ``folder`` holds at most ``entries`` entries and ``size`` bytes
    (links not followed; stops as soon as it is past either)."""
    seen = total = 0
    stack = [str(folder)]
    while stack:
        try:
            with os.scandir(stack.pop()) as found:
                for entry in found:
                    seen += 1
                    if seen > entries:
                        return False
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(entry.path)
                        elif entry.is_file(follow_symlinks=False):
                            total += entry.stat(follow_symlinks=False).st_size
                            if total > size:
                                return False
                    except OSError:
                        continue
        except OSError:
            continue
    return True


def _empty(folder: Path) -> None:
    """Make ``folder`` a real, empty folder of ours. What is in it goes, the
    folder itself stays: removing and making a folder on every run costs
    2 to 8 ms on an ext4 mounted with ``discard`` (this project's machines),
    unlinking a file a few microseconds."""
    make_real_dir(folder)
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                remove_path(Path(entry.path))
        with os.scandir(folder) as entries:
            if next(entries, None) is None:
                return
    except OSError:
        pass
    remove_path(folder)  # something would not go: the folder goes with it, or this raises
    folder.mkdir(parents=True)


class StagingError(Exception):
    """The layout cannot be staged (the chosen workspace is gone): the run
    does not start, and this says why."""


class Scratch:
    """The tool's private scratch folder: one per session, removed on close."""

    def __init__(self) -> None:
        sweep_dead_scratch()
        self.root = Path(tempfile.mkdtemp(prefix=_PREFIX))
        # Who owns it: a scratch folder whose owner is gone (SIGKILLed) is swept by the next start.
        with open(self.root / _OWNER, "w", encoding="ascii") as handle:
            handle.write(f"{os.getpid()} {_started(os.getpid())}\n")
        self._count = 0
        self.stages: list[Stage] = []

    def new_stage(self, namespace: bool = False) -> Stage:
        self._count += 1
        root = self.root / f"stage-{self._count}"
        root.mkdir()
        stage = Stage(root, namespace=namespace)
        self.stages.append(stage)
        return stage

    def close(self) -> None:
        for stage in self.stages:
            stage.close()
        if sum(stage.entries for stage in self.stages) >= _REMOVE_DETACHED_AFTER and _remove_detached(self.root):
            return
        remove_tree(self.root)


_PREFIX = "verifier-tui-"
_OWNER = "owner"


def _started(pid: int) -> str:
    """When ``pid`` started (``/proc/PID/stat``'s 22nd field, in clock ticks
    since boot), which tells a live owner from a new process given its
    number; empty where it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return ""


def sweep_dead_scratch() -> list[Path]:
    """Remove the scratch folders of this user's verifier-tui processes that
    died without cleaning up (SIGKILL, a crash); returns them. A folder is
    swept only when its owner file names a process that is gone, or one
    that started at another time (its number was reused)."""
    swept: list[Path] = []
    base = Path(tempfile.gettempdir())
    try:
        entries = [e for e in os.scandir(base) if e.name.startswith(_PREFIX)]
    except OSError:
        return swept
    for entry in entries:
        try:
            if not entry.is_dir(follow_symlinks=False) or entry.stat(follow_symlinks=False).st_uid != os.getuid():
                continue
            fd = os.open(os.path.join(entry.path, _OWNER), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            try:
                words = os.read(fd, 64).decode("ascii", errors="replace").split()
            finally:
                os.close(fd)
        except OSError:
            continue  # no owner file: not ours to judge (being made, or another version's)
        if len(words) != 2 or not words[0].isdigit():
            continue
        pid = int(words[0])
        if pid != os.getpid() and _started(pid) != words[1]:
            if not _remove_detached(Path(entry.path)):
                remove_tree(Path(entry.path))
            swept.append(Path(entry.path))
    return swept


# Copies past this many entries are removed after the command has returned:
# removing 100,000 files takes 250 ms on tmpfs (57 ms for 20,000), time the
# user would wait for their prompt (or the TUI to close) after the verdict.
_REMOVE_DETACHED_AFTER = 5000


def _remove_detached(root: Path) -> bool:
    """Hand ``root`` to an ``rm`` in its own session that outlives us (the
    ``sh`` started here returns at once, leaving it to the system's init).
    Should ``rm`` fail on a folder a verifier made unreadable, the tree gets
    its permissions back and ``rm`` goes again. False when no such process
    can be started: then the caller removes the tree itself."""
    script = 'rm -rf -- "$1" 2>/dev/null || { chmod -R u+rwx -- "$1"; rm -rf -- "$1"; }'
    try:
        subprocess.run(["sh", "-c", f"{{ {script}; }} >/dev/null 2>&1 &", "verifier-tui-remove", str(root)],
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       start_new_session=True, check=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return True


def _overlay(source: Path, target: Path) -> list[str]:
    """Copy the files under ``source`` over ``target`` (links as links);
    returns their relative paths."""
    copied: list[str] = []
    for folder, dirs, files in os.walk(source):
        rel_folder = Path(folder).relative_to(source)
        make_real_dir(target / rel_folder)
        for name in sorted(files) + sorted(d for d in dirs if os.path.islink(os.path.join(folder, d))):
            rel = (rel_folder / name).as_posix()
            dst = target / rel
            if os.path.lexists(dst):
                remove_path(dst)
            shutil.copy2(os.path.join(folder, name), dst, follow_symlinks=False)
            copied.append(rel)
    return copied
