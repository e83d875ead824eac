"""The sandbox layout, staged in the tool's own scratch folder.

```
<stage>/tests/                 a mirror of the task's tests folder
<stage>/tests/.ng/run_verifier.py   the runner, its extras beside it (and
                               nemo_gym/verifiers, vendored)
<stage>/app/                   a mirror of the workspace; in the view, where
                               the overlay of the user's workspace is mounted
<stage>/logs/verifier/         the reward folder, emptied before every run
<stage>/inputs/                the response and task data (copies: the runner is
                               never handed the user's own files), explain output
<stage>/overlay/{upper,work}   in the view: the overlay's scratch layer,
                               emptied before every run
<stage>/ctl/                   in the view: what the view's init reports
                               (see engine/sandbox/isolation.py)
```

In the view the runner sees these folders where the sandbox has them:
``tests`` at ``/tests``, ``app`` at ``/app``, ``logs/verifier`` at
``/logs/verifier`` and ``inputs`` at ``/.verifier-tui``.

A session keeps one stage per selection in its scratch folder (see
:class:`Scratch`), so re-runs only copy what changed (see
:mod:`verifier_tui.engine.sandbox.mirror`), or, for an overlaid one, copy nothing.

A stage is handed from run to run, and the last run's verifier could reach
all of it (in the copy sandbox ``Path(workspace).parent`` is the stage): any
name in it may now be a link to the user's files, a folder where a file was,
or a file rewritten with its size and times put back. So nothing here writes,
copies or deletes through a name without first making sure what it is: the
stage's folders are made real folders again (``lstat``, a link removed as a
link), what the tool writes is made anew under a folder opened one step at a
time without following links (``O_NOFOLLOW``, ``dir_fd``, ``O_EXCL``), the
runner is compared by its bytes, never its size and time, and a stage that
cannot be put right fails its one run with a one-line start error
(:class:`StagingError`, :attr:`Stage.problem`).
"""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
import tempfile
import threading
from contextlib import suppress
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, overload

from verifier_tui.engine import cache, procfs, untrusted
from verifier_tui.engine.filters import BYTECODE
from verifier_tui.engine.record import field, record
from verifier_tui.engine.sandbox.file_copy import copy_file
from verifier_tui.engine.sandbox.isolation import Isolation, IsolationError, overlay_can_take, overlay_options_over
from verifier_tui.engine.sandbox.mirror import (
    TOO_DEEP,
    Mirror,
    make_real_dir,
    prune,
    remove_name,
    remove_path,
    remove_tree,
)
from verifier_tui.engine.sandbox.room import NO_ROOM, naming, said, why
from verifier_tui.engine.sandbox.view import APP, INPUTS, REWARD, TESTS
from verifier_tui.engine.to_the_end import uninterrupted
from verifier_tui.runner_source import EXTRAS, extras_path, runner_path

if TYPE_CHECKING:
    from collections.abc import Iterable

# The watcher's changes arrive on the event loop while staging runs in a thread.
_pending_lock = threading.Lock()

# What a stage holds; anything else in it was left there by a verifier.
_STAGE_FOLDERS = {"tests", "app", "logs", "inputs", "overlay", "ctl"}

# A folder of the stage, opened without following a link; a file of ours,
# made new where nothing is (never through a link left in its place).
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
# A file of ours read back to compare: never a FIFO's open that blocks.
_READ_OWN = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
#: After a loop of links the task's tests/ holds is left out. Harbor 0.26 needs Python 3.12 or later (its
#: wheel's Requires-Python), and loading the task (Task._validate_input_paths: TaskFileFilter.is_excluded,
#: validate_input_tree) calls Path.resolve() on each entry of tests/, which raises on a loop on 3.12 only.
HARBOR_ON_A_LOOP = (
    "; Harbor on Python 3.12 (the oldest it runs on) refuses a task that holds one "
    "(Path.resolve raises RuntimeError: Symlink loop); on 3.13 it keeps the links as they are"
)
VERIFIER_LIMIT = 16 * untrusted.MB  # a dataset's one verifier.py, copied whole


class _Folder:
    """One of a stage's folders: the same place under every stage's root (the layout above)."""

    def __init__(self, *parts: str) -> None:
        self.parts = parts

    @overload
    def __get__(self, stage: None, owner: object = None) -> _Folder: ...
    @overload
    def __get__(self, stage: Stage, owner: object = None) -> Path: ...
    def __get__(self, stage: Stage | None, owner: object = None) -> Path | _Folder:
        if stage is None:  # read on the class (introspection): the descriptor, as a property is
            return self
        return stage.root.joinpath(*self.parts)


@record
class Stage:
    """One staged sandbox layout, reused across re-runs of the same inputs."""

    root: Path
    bwrap: str = ""
    """Runs of this stage get the sandbox's view, built by this bwrap ("": the copy sandbox)."""
    sandbox_words: str = ""
    """What every face says of that isolation (:attr:`Isolation.words`), as
    chosen when the stage was made: each run records it, so what is said of a
    run is what it ran in, never what the machine would choose when reported."""
    tests: Mirror | None = None
    overlaid: list[str] = field(default_factory=list)
    """Files of a step's own tests folder copied over ``tests`` this run (relative paths)."""
    workspace: Mirror | None = None
    overlay_lower: Path | None = None
    """With namespaces, the user's workspace the overlay shows at ``/app``
    (None: no overlay this run; the workspace is the copy in ``app``)."""
    overlay_for: Path | None = None
    """The workspace whose size chose between the copy and the overlay (:meth:`_big`)."""
    overlay_big: bool = False
    copied_for_its_path: Path | None = None
    """The workspace past the copy's bound copied all the same, for a path no overlay can name (said once)."""
    vendored_from: Path | None = None
    vendor: Mirror | None = None
    """The copy of nemo_gym/verifiers in ``.ng/nemo_gym`` (a mirror: what a
    run changed in it is put back, as in the tests folder)."""
    problem: str | None = None
    """Why this run's inputs could not be staged (a start error); None: they were."""
    notes: list[str] = field(default_factory=list)
    live: bool = False
    """A watcher reports every change to the user's workspace (see
    :meth:`note`): a re-run copies what changed instead of walking it all."""
    pending: set[str] | None = None
    """The workspace's paths (relative) changed since the last staging;
    None: not known, walk it all."""
    noting: Path | None = None
    """The workspace whose changes :meth:`note` keeps in ``pending``: the one staged last, named
    before its walk or copy starts, so a save made meanwhile is the next staging's."""

    app_at: str = APP
    """Where the runner sees the workspace in the view (the task's test.sh may say another path)."""
    keep_ctl: bool = False
    """A run started ahead (:mod:`verifier_tui.engine.warm`) waits in this
    stage's namespace, whose init holds ``ctl``'s files open: staging leaves them be."""
    held: bool = False
    """That run's view can write ``app`` and ``tests`` (bound as ``/app`` and
    ``/tests``, writable as Harbor's are) and is about to go: staging leaves the
    workspace's copy be (:meth:`app_settled` found nothing to write in it; a
    save noted since waits for the next staging) and writes in ``tests`` only
    files of its top folder, each renamed into place (else :class:`HeldInTheWay`)."""

    @property
    def namespace(self) -> bool:
        """Runs of this stage get the sandbox's view (its own paths, ``ctl``, maybe an overlay)."""
        return bool(self.bwrap)

    def seen(self, path: Path) -> str:
        """``path``, one of this stage's, as the runner sees it: in the view
        (``/tests/...``), else the path itself. Compared as strings: every
        path a run maps goes through here, and pathlib's comparisons cost a
        job's replays more than the rest of their mapping."""
        text = str(path)
        if not self.namespace:
            return text
        root = str(self.root)
        for folder, there in (("tests", TESTS), ("app", self.app_at), ("logs/verifier", REWARD), ("inputs", INPUTS)):
            prefix = f"{root}/{folder}"
            if text == prefix:
                return there
            if text.startswith(prefix + "/"):
                return f"{there.rstrip('/')}/{text[len(prefix) + 1 :]}"
        return text

    tests_dir = _Folder("tests")
    ng_dir = _Folder("tests", ".ng")
    app_dir = _Folder("app")
    reward_dir = _Folder("logs", "verifier")
    inputs_dir = _Folder("inputs")
    upper_dir = _Folder("overlay", "upper")
    work_dir = _Folder("overlay", "work")
    ctl_dir = _Folder("ctl")

    def stage_input(self, source: Path, name: str, what: str) -> Path:
        """A copy of one of the user's input files (response, task data) for
        the runner: a verifier that finds the path in ``sys.argv`` and writes
        it writes the copy. One that is gone, no longer a file, or cannot be
        read is this run's start error (see :meth:`refuse`)."""
        target = self.inputs_dir / name
        handle, refused = untrusted.open_regular(source)
        if handle is None:
            assert refused is not None
            self.refuse(refused, what)
            return source
        handle.close()
        try:
            # the user's own link is theirs to have: its file is what is copied
            real = os.path.realpath(source)
        except OSError:
            return source
        try:
            self._clear("inputs", name)
        except OSError as exc:
            self._fail(target, exc)
            return target
        try:
            copy_file(real, str(target), replace=False)
        except OSError as exc:
            if os.path.lexists(target):  # the copy could not be made (O_EXCL): never hand over the user's file
                self._fail(target, exc)
                return target
            return source
        return target

    def refuse(self, refused: untrusted.Read, what: str) -> None:
        """An input file of the user's that cannot be staged: one deleted or
        moved since it was chosen, or no longer a file, is this run's start
        error, said as a deleted workspace is. (Handed to the runner, a
        missing ``--response`` was its exit 2, a "contract error": a fault of
        the tool's call, not of the verifier; a FIFO would hold it for ever.)
        So is one there but unreadable (mode 000): the runner, handed the
        user's own path the sandbox does not show, said it "does not exist"."""
        self.problem = self.problem or unreadable(what, refused)

    def plant(self, name: str, data: bytes) -> None:
        """A file in the reward folder before the run, made anew (``audit``)."""
        self._write_own("logs/verifier", name, data)

    def write_input(self, name: str, text: str) -> Path:
        """Write ``inputs/<name>`` anew (a response, a row's task data) for the runner."""
        self._write_own("inputs", name, text.encode("utf-8"))
        return self.inputs_dir / name

    def prepare(
        self,
        tests_source: Path,
        workspace: Path | None,
        nemo_gym_verifiers: Path | None,
        runner: Path | None = None,
        task_vendors_nemo_gym: bool = False,
        extra_tests: Path | None = None,
        task_root: Path | None = None,
    ) -> list[str]:
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
        the four folders is put right first, and no link is ever followed.
        Anything that will not be put right (a name that cannot be removed)
        is a :class:`StagingError`: this run does not start, the next is
        staged again."""
        self.problem = None
        try:
            _outside(self.root, ((task_root, "the task's folder"), (workspace, "the workspace")))
            return self._prepare(
                tests_source, workspace, nemo_gym_verifiers, runner, task_vendors_nemo_gym, extra_tests
            )
        except OSError as exc:
            words = f"could not stage the run: {said(exc, self.root)}"
            if exc.errno not in NO_ROOM:  # (a full disk is not this folder's fault: it stays)
                with suppress(OSError):  # (nor room for a new one: this one is put right next time)
                    self._move_on()
            raise StagingError(words) from None

    def _move_on(self) -> None:
        """Leave a folder that could not be put right (a name that will not
        go) for a new one beside it: this run fails, the next one is staged
        from nothing rather than failing the same way. The old folder goes
        with the scratch folder, as far as it can."""
        for mirror in (self.tests, self.workspace, self.vendor):
            if mirror is not None:
                mirror.close()
        self.tests = self.workspace = self.vendor = None
        self.vendored_from = self.pending = None
        self.root = Path(tempfile.mkdtemp(prefix=f"{self.root.name}-", dir=self.root.parent))

    def _prepare(
        self,
        tests_source: Path,
        workspace: Path | None,
        nemo_gym_verifiers: Path | None,
        runner: Path | None,
        task_vendors_nemo_gym: bool,
        extra_tests: Path | None,
    ) -> list[str]:
        notes: list[str] = []
        self._tidy_root()
        # The reward folder first: whatever happens next, no verdict of an
        # earlier run can be read as this one's.
        make_real_dir(self.reward_dir.parent)
        _empty(self.reward_dir)
        # The inputs too (response, task data, explanation, phases): each is
        # made anew in an empty folder of ours, never written over.
        _empty(self.inputs_dir)
        if workspace is not None and not workspace.is_dir():
            raise StagingError(
                f"the workspace {workspace} is not a folder any more"
                if os.path.lexists(workspace)
                else not_there("the workspace", workspace)
            )
        keep = frozenset({".ng/run_verifier.py", ".ng/" + EXTRAS, f".ng/{BYTECODE}", ".ng/verifier.py"}) | (
            frozenset() if task_vendors_nemo_gym else {".ng/nemo_gym"}
        )
        if self.held:
            self._tests_beside_a_held_run(tests_source, keep, nemo_gym_verifiers, task_vendors_nemo_gym, extra_tests)
            self._place_runner(runner or runner_path())  # (by descriptors: a changed one fails the held run's check)
        else:
            self._stage_tests(tests_source, keep, nemo_gym_verifiers, runner, task_vendors_nemo_gym, extra_tests)
        assert self.tests is not None
        notes += [f"tests: {n}" for n in self.tests.notes]
        with _pending_lock:
            # What the watcher saw change under the workspace since the last staging, taken now: a
            # save noted from here on is the next staging's (a held run's copy waits for it: see the field)
            changed = None if self.pending is None else set(self.pending)
            if not self.held:
                # No workspace: nothing is noted, so the next one's changes are not known.
                self.noting = workspace
                self.pending = set() if self.live and workspace is not None else None
        layers = (str(workspace), str(self.upper_dir), str(self.work_dir))
        big = self.namespace and workspace is not None and self._big(workspace, changed)
        overlay = big and overlay_can_take(*layers)
        if overlay and self.overlay_lower != workspace:
            notes.append(
                f"{_PAST_THE_COPY}: it is an overlay over yours, not a copy, so renaming a folder that came with it "
                "fails with EXDEV (in the sandbox it works)"
            )
        over = (overlay_options_over(*layers) or 0) if big and not overlay else 0
        if over > 0 and self.copied_for_its_path != workspace:
            notes.append(
                f"{_PAST_THE_COPY}, but its path is too long for an overlay's mount options (the kernel reads a "
                f"page of them, {os.sysconf('SC_PAGE_SIZE'):,} bytes): it is copied instead, all of it at each new "
                f"session, which is slow; at a path {over:,} bytes shorter it is overlaid in one mount"
            )
        self.overlay_lower = workspace if overlay else None
        self.copied_for_its_path = workspace if over > 0 else None
        if self.held:
            pass  # the copy is as it was staged for the held run (see the field)
        elif workspace is None:
            self.workspace = None
            # An empty scratch workspace, emptied again if a verifier wrote into
            # it (the folder itself kept: a held run's view has it bound).
            _empty(self.app_dir)
        elif overlay:
            # The overlay is mounted over an empty folder; the last run's
            # writes are in the upper layer: clearing it is the whole staging.
            # (``overlay`` itself is a real folder: _tidy_root saw to it.)
            if self.workspace is not None:  # a copy until now: another workspace, or this one grown
                self.workspace.close()
                self.workspace = None
                remove_path(self.app_dir)
            make_real_dir(self.app_dir)
            _empty(self.upper_dir)
            _empty(self.work_dir)
        else:
            if self.workspace is None or self.workspace.source != workspace:
                if os.path.lexists(self.app_dir):
                    remove_path(self.app_dir)
                if self.workspace is not None:
                    self.workspace.close()
                self.workspace = Mirror(
                    workspace, self.app_dir, verbatim_links=self.namespace, contained=self.namespace
                )
                changed = None  # (what was seen was of another workspace, or of the overlay)
            self.workspace.track = True  # what a run (or one held) writes in the copy, for app_settled
            self.workspace.sync(changed)
            _whole(self.workspace, "the workspace")
        if self.workspace is not None:  # (held: as the last sync left the copy)
            notes += [f"workspace: {n}" for n in self.workspace.notes]
        if self.namespace and not self.keep_ctl:
            _empty(self.ctl_dir)
        return notes

    def _stage_tests(
        self,
        tests_source: Path,
        keep: frozenset[str],
        verifiers: Path | None,
        runner: Path | None,
        task_vendors_nemo_gym: bool,
        extra_tests: Path | None,
    ) -> None:
        if self.tests is None or self.tests.source != tests_source or self.tests.keep != keep:
            if os.path.lexists(self.tests_dir):
                remove_path(self.tests_dir)
            self.tests = Mirror(
                tests_source,
                self.tests_dir,
                keep=keep,
                track=True,
                on_a_loop=HARBOR_ON_A_LOOP,
                contained=self.namespace,
            )
            self.vendored_from = None
        self.tests.sync()
        _whole(self.tests, "the tests folder")
        try:
            self.overlaid = _overlay(extra_tests, self.tests_dir) if extra_tests is not None else []
        except OSError as exc:
            raise StagingError(f"cannot stage the step's own tests folder {extra_tests}: {exc}") from None
        except RecursionError:  # os.walk recurses a folder at a time, as the tests' own mirror does
            raise not_whole("the step's own tests folder", "", OSError(errno.ELOOP, TOO_DEEP)) from None
        make_real_dir(self.ng_dir)
        self._place_runner(runner or runner_path())
        if not task_vendors_nemo_gym:
            self._vendor(verifiers)
        # What a held view writes in our folders in ``.ng`` is seen too (:meth:`_tests_beside_a_held_run`).
        ours = (".ng", f".ng/{BYTECODE}", ".ng/nemo_gym")
        self.tests.watch_also({rel: self.tests_dir / rel for rel in ours})

    def _tests_beside_a_held_run(
        self,
        tests_source: Path,
        keep: frozenset[str],
        verifiers: Path | None,
        task_vendors_nemo_gym: bool,
        extra_tests: Path | None,
    ) -> None:
        """Stage the tests where a held run's view can write them (:attr:`held`):
        only files of their top folder saved since, each renamed into place (a
        save to the verifier). Anything else (a file in a folder, a step's tests
        laid over, the vendored nemo_gym, the repair of what the held view itself
        changed) would be written path by path, through whatever link code in
        that view swapped in meanwhile: :class:`HeldInTheWay`, for a cold run."""
        tests, vendor = self.tests, self.vendor
        if task_vendors_nemo_gym:
            vendored = True  # (part of the tests' copy)
        elif verifiers is None:
            vendored = not os.path.lexists(self.ng_dir / "nemo_gym")
        else:
            vendored = (
                vendor is not None and vendor.source == verifiers and vendor.untouched() and vendor.unchanged_source()
            )
        same = tests is not None and tests.source == tests_source and tests.keep == keep
        changed = tests.source_changes() if tests is not None and same else None
        if (
            tests is None
            or changed is None
            or extra_tests is not None
            or self.overlaid
            or not vendored
            or not tests.untouched()
            or not all("/" not in rel and untrusted.is_kind(tests_source / rel, stat.S_ISREG) for rel in changed)
        ):
            raise HeldInTheWay
        tests.copy_beside(changed)
        _whole(tests, "the tests folder")

    def app_settled(self, workspace: Path | None) -> bool:
        """Whether staging ``workspace`` would write nothing in ``app``: the
        same workspace, unchanged since the last staging (the watcher's word,
        else its stats'), its copy unwritten since (the tracker's word); no
        workspace, an empty ``app``."""
        with _pending_lock:
            none_since = self.pending == set()
        mirror = self.workspace
        if workspace is None:
            return mirror is None and _is_empty(self.app_dir)
        return (
            mirror is not None
            and mirror.source == workspace
            and (none_since or mirror.unchanged_source())
            and mirror.untouched()
        )

    def _big(self, workspace: Path, changed: set[str] | None) -> bool:
        """Whether ``workspace`` is past what a run copies, asked by a walk that stops at the
        bound whenever it may have crossed it since (:meth:`_may_have_crossed`, by what the
        watcher saw ``changed`` under it): the view's copy must stay small (a run may have it
        walked whole: WriteTracker.take), and a run's workspace is a copy or an overlay as a cold
        start's would be (a rename of a folder that came with it works in one, fails with EXDEV
        in the other)."""
        if self.overlay_for != workspace or self._may_have_crossed(workspace, changed):
            self.overlay_for, self.overlay_big = workspace, not _within(workspace, COPY_UP_TO_ENTRIES, COPY_UP_TO_BYTES)
        return self.overlay_big

    def _may_have_crossed(self, workspace: Path, changed: set[str] | None) -> bool:
        """Whether ``workspace``, found on the one side of the copy's bound when last asked, may
        be on the other now. Where the watcher's word is not had (no watcher, the folder replaced,
        events lost): always. An overlay's, which no copy counts: whenever anything under it
        changed (a walk to the bound, about 3 ms). A copy's: by the copy's entries and bytes with
        what changed, a folder made or moved in (what it holds was never seen), or a change as
        deep as the bound."""
        if changed is None:
            return True
        if self.overlay_big:
            return bool(changed)
        mirror = self.workspace
        if mirror is None or mirror.source != workspace:
            return True
        size = sum(copied.src_sig[0] for copied in mirror.index.values() if copied.kind == "file")
        for rel in changed:
            if rel.count("/") >= COPY_UP_TO_DEPTH:
                return True
            try:
                st = os.lstat(workspace / rel)
            except OSError:
                continue  # gone: it takes nothing from the bound
            if stat.S_ISDIR(st.st_mode):
                return True
            size += st.st_size if stat.S_ISREG(st.st_mode) else 0
        return len(mirror.index) + len(changed) > COPY_UP_TO_ENTRIES or size > COPY_UP_TO_BYTES

    def note(self, paths: Iterable[Path], recreated: Iterable[Path]) -> None:
        """The watcher saw ``paths`` change (absolute, the user's); a folder
        in ``recreated`` was made anew or events under it were lost."""
        with _pending_lock:
            self._note(paths, recreated)

    def _note(self, paths: Iterable[Path], recreated: Iterable[Path]) -> None:
        root = self.noting
        if not self.live or root is None or self.pending is None:
            return
        if any(root == r or root.is_relative_to(r) or r.is_relative_to(root) for r in recreated):
            self.pending = None
            return
        for path in paths:
            if root.is_relative_to(path):
                # The workspace or a folder around it came or went (a case folder moved
                # away, edited, moved back): what changed under it was never seen.
                self.pending = None
                return
            if path.is_relative_to(root):
                self.pending.add(path.relative_to(root).as_posix())

    def follow(self, live: bool) -> None:
        """A watcher starts (or stops) reporting changes: what happened before
        it was in place is not known, so the next staging walks it all."""
        self.live = live
        self.pending = None

    def let_go(self) -> None:
        """Empty what the last run wrote (its workspace's copy, its reward
        folder): a run that filled the scratch kept it full for the runs
        staged in other stages, which then found no room for their reward.
        The copy is made whole again by the next staging. The run may have
        left a link among the stage's folders (the copy sandbox's can reach
        them): they are made real first, so nothing is emptied through one."""
        if self.workspace is not None:
            self.workspace.close()
        with _pending_lock:  # a watcher's note() may be adding to it
            self.workspace, self.pending = None, None
        with suppress(OSError):  # (what will not go now is emptied by the next staging)
            self._tidy_root()
            for folder in (self.app_dir, self.upper_dir, self.work_dir, self.reward_dir):
                if os.path.lexists(folder):
                    _empty(folder)

    def close(self) -> None:
        """The session is over: the mirrors stop following their sources (the
        files go with the scratch folder)."""
        for mirror in (self.tests, self.workspace, self.vendor):
            if mirror is not None:
                mirror.close()

    @property
    def entries(self) -> int:
        """How many entries the stage's copies hold."""
        return sum(len(mirror.index) for mirror in (self.tests, self.workspace) if mirror is not None)

    def _tidy_root(self) -> None:
        """The stage's own folders real folders (or absent), nothing else
        beside them: every path below is then looked up from real folders of
        ours (a link left as ``overlay`` would make ``overlay/upper`` a
        folder of the user's, emptied before the next run)."""
        make_real_dir(self.root)
        with os.scandir(self.root) as entries:
            for entry in entries:
                if entry.name not in _STAGE_FOLDERS or not entry.is_dir(follow_symlinks=False):
                    remove_path(Path(entry.path))

    def place_dataset_verifier(self, verifier: Path | None) -> None:
        """The dataset's ``verifier`` as ``.ng/verifier.py``, first on the verifier's sys.path;
        None: nothing there (a run may have left one). Left alone when it holds those bytes:
        a write there, past the staging, is what a run started ahead takes for its view written."""
        if verifier is None:
            try:
                self._clear("tests/.ng", "verifier.py")
            except OSError as exc:
                self._fail(self.ng_dir / "verifier.py", exc)
            return
        found = untrusted.read_bytes(verifier, VERIFIER_LIMIT)
        if found.data is None:
            self.problem = self.problem or f"could not stage {verifier}: {found.problem}"
            return
        try:
            self._place("tests/.ng", "verifier.py", found.data)
        except OSError as exc:
            self._fail(self.ng_dir / "verifier.py", exc)

    def _place_runner(self, source: Path) -> None:
        """The runner and our extras beside it, checked by their bytes before
        every run: a verifier that rewrote one keeping its size and times (or
        left a link in its place) must not be what runs the next case. The
        extras are ours whichever runner runs: a task's own runner is asked
        for them only when it is a copy of ours (engine/task/kinds.py). Their
        bytecode goes beside them (see :func:`extras_bytecode`)."""
        for name, path in (("run_verifier.py", source), (EXTRAS, extras_path())):
            found = untrusted.read_bytes(path, untrusted.SCRIPT_LIMIT)  # ours, or the task's own runner
            if found.data is None:
                raise OSError(found.problem)
            self._place("tests/.ng", name, found.data, stat.S_IMODE(path.stat().st_mode))
        extras = found.data
        name, data = extras_bytecode(extras)
        if not self.held:  # (else its folder is as the tracker last saw it)
            _only(self.ng_dir / BYTECODE, {name})
        self._place(f"tests/.ng/{BYTECODE}", name, data)

    def _vendor(self, verifiers: Path | None) -> None:
        """Vendor nemo_gym/verifiers beside the runner, as the shim does."""
        package = self.ng_dir / "nemo_gym"
        if verifiers is None or self.vendor is None or self.vendor.source != verifiers:
            if self.vendor is not None:
                self.vendor.close()
            self.vendor = None
            if os.path.lexists(package):
                remove_path(package)
        self.vendored_from = verifiers
        if verifiers is None:
            return
        _only(package, {"__init__.py", "verifiers"})
        self._place("tests/.ng/nemo_gym", "__init__.py", b"")
        if self.vendor is None:
            self.vendor = Mirror(verifiers, package / "verifiers", track=True, contained=self.namespace)
        self.vendor.sync()
        _whole(self.vendor, "nemo_gym/verifiers")

    # -- the files the tool itself writes into the stage --------------------

    def _place(self, folder: str, name: str, data: bytes, mode: int = 0o644) -> None:
        """``folder/name`` (relative to the stage) holding ``data`` with
        ``mode``: left alone when it is a regular file holding exactly that
        (read, not judged by size and time), else made anew."""
        mode |= stat.S_IRUSR | stat.S_IWUSR
        dfd = _open_beneath(self.root, folder)
        try:
            try:
                fd = os.open(name, _READ_OWN, dir_fd=dfd)
            except OSError:
                fd = None
            if fd is not None:
                with os.fdopen(fd, "rb") as handle:
                    st = os.fstat(handle.fileno())
                    if (
                        stat.S_ISREG(st.st_mode)
                        and stat.S_IMODE(st.st_mode) == mode
                        and st.st_size == len(data)
                        and handle.read(len(data) + 1) == data
                    ):
                        return
            _write_new(dfd, name, data, mode, self.root / folder / name)
        finally:
            os.close(dfd)

    def _write_own(self, folder: str, name: str, data: bytes) -> None:
        """``folder/name`` made anew holding ``data`` (what was there goes);
        a failure is this run's :attr:`problem`."""
        try:
            dfd = _open_beneath(self.root, folder)
            try:
                _write_new(dfd, name, data, 0o644, self.root / folder / name)
            finally:
                os.close(dfd)
        except OSError as exc:
            self._fail(self.root / folder / name, exc)

    def _clear(self, folder: str, name: str) -> None:
        dfd = _open_beneath(self.root, folder)
        try:
            remove_name(dfd, name)
        finally:
            os.close(dfd)

    def _fail(self, path: Path, exc: OSError) -> None:
        if self.problem is None:
            self.problem = f"could not stage {path.relative_to(self.root)} for the run: {why(exc)}"


def _open_beneath(root: Path, rel: str) -> int:
    """A descriptor of the folder ``root/rel``, each step below ``root``
    opened without following a link: a folder a verifier replaced by a link
    is an error (``ELOOP``, ``ENOTDIR``), never the way to the user's files."""
    fd = os.open(root, _DIR)
    try:
        for part in Path(rel).parts:
            inner = os.open(part, _DIR, dir_fd=fd)
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


def _write_new(dfd: int, name: str, data: bytes, mode: int, path: Path) -> None:
    """``name`` in the folder ``dfd`` made anew (``O_EXCL``: should anything
    still be there, or come back, this fails rather than write through it)."""
    remove_name(dfd, name)
    fd = os.open(name, _NEW_FILE, mode, dir_fd=dfd)
    with naming(path), os.fdopen(fd, "wb") as handle:
        os.fchmod(fd, mode)  # the mode whole, whatever the umask took from it
        handle.write(data)


def _outside(root: Path, sources: Iterable[tuple[Path | None, str]]) -> None:
    """Refuse a stage that is inside a folder it copies, or whose files a run
    is watched writing (TMPDIR in the task or its workspace): each copy would
    hold a copy of itself, until the path is too long."""
    here = os.path.realpath(root)
    for source, what in sources:
        if source is not None and here.startswith(os.path.realpath(source).rstrip("/") + "/"):
            raise StagingError(
                f"verifier-tui's scratch folder goes in TMPDIR, {tempfile.gettempdir()}, inside {what} {source}: "
                "a run's copies of its files would hold their own copy; set TMPDIR to a folder outside it"
            )


def _whole(mirror: Mirror, what: str) -> None:
    """Refuse the run when ``mirror``'s last sync could not copy a file: a
    verifier run on part of its workspace (or of its tests) gives a verdict
    the sandbox would not."""
    if not mirror.failed:
        return
    rel, exc = mirror.failed[0]
    more = f" (and {len(mirror.failed) - 1:,} more files)" if len(mirror.failed) > 1 else ""
    raise not_whole(what, f"{rel}{more}" if rel else "", exc)


def not_whole(what: str, where: str, exc: OSError) -> StagingError:
    """The refusal of a run whose ``what`` ("the workspace") could not be
    copied whole, as ``exc`` said at ``where`` (a path in it; "" for the
    copy as a whole): a run's staging and an audit's probe say it alike."""
    return StagingError(f"{what} could not be copied whole: {where + ': ' if where else ''}{why(exc)}")


# With namespaces, a workspace up to this size is copied into the run's view
# (a rename of its folders then works as in the sandbox, where the agent's
# files are in the container's writable layer); a bigger one is an overlay,
# whose staging costs one mount however big it is. Copying 1,000 small files
# costs about 40 ms once (later runs copy only what changed).
COPY_UP_TO_ENTRIES = 1000
COPY_UP_TO_BYTES = 32 << 20
# And a workspace nested deeper than this (an agent may leave any depth) is
# an overlay too: the copy's walk recurses a level at a time, where an overlay
# is one mount at any depth. Each level costs the walk two frames (_sync_dir,
# _sync_entry) and the run's own stack is under it: 100 levels stay far below
# Python's limit of about 1,000 frames, and no real workspace is that deep.
COPY_UP_TO_DEPTH = 100
_PAST_THE_COPY = (
    f"the workspace holds more than {COPY_UP_TO_ENTRIES:,} entries or {COPY_UP_TO_BYTES >> 20} MB, "
    f"or folders nested more than {COPY_UP_TO_DEPTH} deep"
)


def _within(folder: Path, entries: int, size: int) -> bool:
    """Whether ``folder`` holds at most ``entries`` entries and ``size`` bytes,
    none deeper than :data:`COPY_UP_TO_DEPTH` (links not followed; stops as
    soon as it is past any)."""
    seen = total = 0
    stack = [(str(folder), 0)]
    while stack:
        path, depth = stack.pop()
        try:
            with os.scandir(path) as found:
                for entry in found:
                    seen += 1
                    if seen > entries:
                        return False
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            if depth >= COPY_UP_TO_DEPTH:
                                return False
                            stack.append((entry.path, depth + 1))
                        elif entry.is_file(follow_symlinks=False):
                            total += entry.stat(follow_symlinks=False).st_size
                            if total > size:
                                return False
                    except OSError:
                        continue
        except OSError:
            continue
    return True


def _is_empty(folder: Path) -> bool:
    """Whether ``folder`` holds nothing (one that cannot be listed: not known to)."""
    try:
        with os.scandir(folder) as entries:
            return next(entries, None) is None
    except OSError:
        return False


def _only(folder: Path, names: set[str]) -> None:
    """Make ``folder`` a real folder of ours holding nothing but ``names`` (what a
    run left beside them there would be imported by the next)."""
    make_real_dir(folder)
    prune(folder, names)


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
        if _is_empty(folder):
            return
    except OSError:
        pass
    remove_path(folder)  # something would not go: the folder goes with it, or this raises
    if os.path.lexists(folder):
        left = next(
            (os.path.join(where, name) for where, dirs, files in os.walk(folder) for name in files + dirs), str(folder)
        )
        raise OSError(errno.EPERM, "it cannot be removed", left)
    folder.mkdir(parents=True)


def not_there(what: str, path: Path) -> str:
    """What every face says of an input chosen, then deleted or moved: the
    workspace, the response, the task data."""
    return f"{what} {path} is not there any more (deleted or moved?)"


def unreadable(what: str, found: untrusted.Read) -> str:
    """What every face (a run's start error, p, the response editor) says of
    an input chosen that a run cannot read: one gone (no name there, not even
    a link) is not there any more; one the user may not read cannot be read,
    and why; else what is there instead, which the run cannot read (a link
    to nothing, a folder, a FIFO, a file past the bound)."""
    if not os.path.lexists(found.path):
        return not_there(what, Path(found.path))
    if found.state == "unreadable":  # "<name> cannot be read (Permission denied)" says it already
        return f"{what} {found.problem}"
    return f"{what} {found.problem}: the run cannot read it"


class HeldInTheWay(Exception):
    """Staging would write where a held run's view can (:attr:`Stage.held`): that run must end first."""


class StagingError(Exception):
    """The layout cannot be staged (the chosen workspace is gone): the run
    does not start, and this says why."""


class Scratch:
    """The tool's private scratch folder: one per session, removed on close."""

    def __init__(self) -> None:
        sweep_dead_scratch()
        try:
            # Absolute: tempfile keeps a relative TMPDIR as spelled, and the runner, started in the
            # workspace's copy (or the view, which sees only absolute paths), would look for it there.
            self.root = Path(os.path.abspath(tempfile.mkdtemp(prefix=_PREFIX)))
        except OSError as exc:  # (a full disk: no run of the session can be staged)
            raise IsolationError(f"cannot make verifier-tui's scratch folder: {why(exc)}") from None
        try:
            # Who owns it: a scratch folder whose owner is gone (SIGKILLed) is swept by the next start.
            with open(self.root / _OWNER, "w", encoding="ascii") as handle:
                handle.write(f"{os.getpid()} {_started(os.getpid())}\n")
        except OSError as exc:
            remove_tree(self.root)
            raise IsolationError(f"cannot make verifier-tui's scratch folder: {why(exc)}") from None
        self._count = 0
        self.stages: list[Stage] = []

    def new_stage(self, isolation: Isolation) -> Stage:
        """A stage whose runs get ``isolation``: the view its bwrap builds, or the copy sandbox."""
        self._count += 1
        root = self.root / f"stage-{self._count}"  # made by its first prepare(), where no room is that run's error
        stage = Stage(root, bwrap=isolation.bwrap, sandbox_words=isolation.words)
        self.stages.append(stage)
        return stage

    @uninterrupted
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
    fields = procfs.stat(pid) or []
    return fields[19].decode() if len(fields) > 19 else ""


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
        subprocess.run(
            ["sh", "-c", f"{{ {script}; }} >/dev/null 2>&1 &", "verifier-tui-remove", str(root)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            check=True,
            timeout=10,
        )
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
            src = os.path.join(folder, name)
            if os.path.islink(src):
                os.symlink(os.readlink(src), dst)
            else:  # made new at its name (O_EXCL, O_NOFOLLOW): never through a link left there
                copy_file(src, str(dst), replace=False)
            copied.append(rel)
    return copied


@lru_cache(maxsize=2)
def extras_bytecode(source: bytes) -> tuple[str, bytes]:
    """The runner's extras compiled for this interpreter: the name Python
    looks for in ``__pycache__`` and a .pyc checked against the source's hash
    (PEP 552), so the copy staged beside the extras is valid whatever their
    times. The runner starts with ``-B`` and so writes no bytecode; without
    this it compiles the extras at every run, 3 to 4 ms of each. Another
    interpreter looks for another name (its own tag), or, of another build,
    rejects the header: it compiles the source, as before. Kept in the
    tool's cache, as compiling costs what it saves."""
    import importlib.util
    import marshal

    name = f"run_verifier_extras.{sys.implementation.cache_tag}.pyc"
    header = importlib.util.MAGIC_NUMBER + (0b11).to_bytes(4, "little") + importlib.util.source_hash(source)
    cached = cache.read(name)
    if cached is not None and cached.startswith(header) and _is_code(cached[len(header) :]):
        return name, cached
    code = compile(source, EXTRAS, "exec", dont_inherit=True)
    data = header + marshal.dumps(code)
    cache.write(name, data)
    return name, data


def _is_code(data: bytes) -> bool:
    """Whether ``data`` is a marshalled code object: a cache file cut short
    or rewritten behind its header would fail the runner where Python loads
    it, past the point where it falls back to the source."""
    import marshal
    import types

    try:
        return isinstance(marshal.loads(data), types.CodeType)
    except (EOFError, ValueError, TypeError):
        return False
