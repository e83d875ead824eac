"""Watching: file changes in, coalesced re-runs out.

Two halves, both free of Textual so the ``watch`` command and the TUI share them:

* :class:`Watcher` turns raw file-system events on the user's files into
  :class:`Change` objects: filtered on paths *relative to* each watched root,
  editors' atomic saves collapsed into one modification, a watched folder that
  is deleted and re-created watched again.
* :class:`RunScheduler` turns a stream of requests into runs: one run at a
  time, at most one pending, and a change that lands mid-run is never dropped.

``watch_and_run`` glues them together.

How the watcher drives watchfiles
---------------------------------
``watchfiles.awatch`` builds its ``RustNotify`` on the event-loop thread, and
building it walks the whole tree (272 ms for 20k folders). Building it in a
thread instead does not help: ``RustNotify()`` holds the GIL for the whole walk
(measured: the loop froze for the full 253 ms of a 20k-folder build done in a
thread). So by default the watching runs in a small child process (this module,
``_child_main``), which prints each finished :class:`Change` as a JSON line;
the loop here only reads lines. Rebuilding after a root is re-created happens
there too, and so do the watcher's 100 wake-ups a second (one per step).
Cost: ~50 ms more to become ready, ~23 MB, 0.4% of a core when idle.
``isolate=False`` (and the fallback when the child cannot start) runs the same
code in threads of this process.

Inside, each of at most two threads (one for folders, watched recursively, one
for the parents of single-file targets, watched non-recursively) builds its own
``RustNotify`` and calls its blocking ``watch(debounce, step, timeout,
stop_event)`` in a loop, as ``awatch`` does internally, then filters and
``stat``-s in that thread.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import logging
import os
import stat
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import aclosing, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from watchfiles._rust_notify import RustNotify

__all__ = [
    "Change",
    "RunScheduler",
    "WatchTarget",
    "WatchError",
    "Watcher",
    "is_noise",
    "watch_and_run",
]

logger = logging.getLogger(__name__)

#: How long RustNotify sleeps between looks at its event set (its ``step``).
#: A lone save is seen at the first step boundary after it lands, then one
#: quiet step closes the batch: latency is 1-2 steps. Measured on the
#: project's 2-core box, write to Change yielded, 30 writes at random phase:
#: step 10: median 16 ms, max 21; step 20: median 31, max 41; watchfiles'
#: default 50: median 86, max 100. 10 ms leaves most of the 50 ms
#: watch-to-screen budget for starting the run and drawing. Below 10 ms buys
#: little: every step wakes the watcher thread and takes its GIL, idle or not
#: (idle cost at 10 ms: 0.4% of a core, in the watcher process).
DEFAULT_STEP_MS = 10

#: The most a batch is held open while events keep arriving for *new* paths.
#: A single save never waits for it (the batch closes after one quiet step);
#: only a stream of changes to ever more paths (``git checkout``, a build
#: writing a tree, ``rsync`` into the workspace) reaches it. 300 ms, the top of
#: the 150-300 ms range in engineering.md, lets such a stream arrive in a few
#: large batches instead of starting a run on a half-written tree every 150 ms.
DEFAULT_DEBOUNCE_MS = 300

#: How long RustNotify may sleep with no event before control returns to us to
#: check the watched roots (deleted, re-created, replaced by a rename). This
#: bounds how late a re-created root is noticed when no event at all tells us.
_ROOT_CHECK_MS = 250

#: While a watched root is missing, check for it this often: a tool that
#: re-creates the workspace is then picked up within ~50 ms.
_MISSING_ROOT_CHECK_MS = 50

#: Folder names whose whole subtree is never relevant, relative to a watched
#: root: version-control internals and the caches tools write next to code.
_NOISE_DIRS = frozenset(
    {
        "__pycache__",
        ".git",
        ".hg",
        ".svn",
        ".jj",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
    }
)

#: File-name suffixes of compiled files and of editors' temporary files.
_NOISE_SUFFIXES = (
    ".pyc",
    ".pyo",
    "~",  # vim/emacs backup (vim's atomic save renames x to x~ first)
    "___jb_tmp___",  # JetBrains "safe write": x___jb_tmp___ then renamed over x
    "___jb_old___",  # JetBrains: the old x renamed away, then deleted
    ".kate-swp",
    ".DS_Store",
)


def _is_vim_swap(name: str) -> bool:
    # .x.swp, then .swo, .swn ... .swa as vim finds earlier ones in use; .swx is
    # its probe for whether swap files can be created at all.
    return len(name) > 4 and name[-4:-1] == ".sw" and (name[-1] == "x" or "a" <= name[-1] <= "p")


def _is_vim_probe(name: str) -> bool:
    # Vim checks it may create files in the folder by creating and deleting
    # "4913" (or 5036, 5159, ...: it adds 123 until the name is free).
    if not name.isdigit() or len(name) > 5:
        return False
    number = int(name)
    return number >= 4913 and (number - 4913) % 123 == 0


def is_noise(relative: Iterable[str]) -> bool:
    """Whether a path, given as its parts *relative to a watched root*, is one
    no verifier run depends on: caches, VCS internals, editors' temporary files.

    Relative on purpose: a workspace that lives under a folder named ``.tox``
    or ``.git`` must still be watched, which a filter on absolute paths (like
    watchfiles' ``DefaultFilter``) gets wrong.
    """
    parts = tuple(relative)
    if not parts:
        return False
    if any(part in _NOISE_DIRS for part in parts):
        return True
    name = parts[-1]
    return (
        name.endswith(_NOISE_SUFFIXES)
        or _is_vim_swap(name)
        or _is_vim_probe(name)
        or name.startswith(".#")  # emacs lock file
        or (len(name) > 2 and name.startswith("#") and name.endswith("#"))  # emacs auto-save
        or name.startswith(".goutputstream-")  # GIO (gedit) atomic save
    )


@dataclass(frozen=True)
class WatchTarget:
    """A path the user cares about.

    A folder is watched recursively. A single file is watched through its
    parent folder (non-recursively) and filtered to its name, because an
    editor's atomic save replaces the file's inode and a watch on the file
    itself would silently end with the first save.
    """

    path: Path
    """The folder or file, as the user named it (shown paths stay the user's)."""
    label: str
    """What it is to the user: "tests", "workspace", "response", "task data", "task.toml"."""
    folder: bool | None = None
    """Folder (True) or single file (False); None decides from disk when the
    watcher starts (a path that does not exist yet is taken as a file)."""


@dataclass(frozen=True)
class Change:
    """A coalesced set of relevant changes: the trigger of a run.

    ``paths`` are absolute paths on the user's side, after filtering, each
    ``stat``-ed after the batch: vim's save, seen as {added x, deleted x}, is
    just ``x``, present. A *folder* in ``paths`` means anything under it may have
    changed (a folder moved in, a watched root re-created).
    """

    paths: frozenset[Path]
    deleted: frozenset[Path] = frozenset()
    """The subset of ``paths`` that did not exist once the batch was over."""
    recreated: frozenset[Path] = frozenset()
    """Watched folders that came (back) into existence: re-scan them whole."""
    names: tuple[tuple[Path, str], ...] = field(default=(), compare=False, repr=False)
    """Short display names ("tests/verifier.py", "response.json") by path."""

    def name_of(self, path: Path) -> str:
        for known, name in self.names:
            if known == path:
                return name
        return path.name

    def describe(self) -> str:
        """A short summary for a run's trigger line: "tests/verifier.py",
        "tests/verifier.py +2 more", "workspace/out.txt deleted"."""
        if not self.paths:
            return "nothing"
        by_name = sorted(self.paths, key=lambda p: (p in self.deleted, self.name_of(p)))
        first = by_name[0]
        text = self.name_of(first)
        if first in self.recreated:
            text += " re-created"
        elif first in self.deleted:
            text += " deleted"
        if len(by_name) > 1:
            text += f" +{len(by_name) - 1} more"
        return text

    def merge(self, later: Change) -> Change:
        """This change followed by ``later``: the union, with ``later``'s view
        of whether each path exists winning."""
        names = dict(self.names)
        names.update(later.names)
        return Change(
            paths=self.paths | later.paths,
            deleted=(self.deleted - later.paths) | later.deleted,
            recreated=(self.recreated - later.deleted) | later.recreated,
            names=tuple(sorted(names.items())),
        )

    @staticmethod
    def combine(earlier: Change | None, later: Change | None) -> Change | None:
        """Merge two optional changes (None: a request with no file change)."""
        if earlier is None:
            return later
        if later is None:
            return earlier
        return earlier.merge(later)


# ---------------------------------------------------------------------------
# The watcher


def _is_under(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)


def _forms(path: Path) -> tuple[Path, ...]:
    """The path as given and, when different, with symlinks resolved: some
    back ends (macOS FSEvents) report canonical paths."""
    real = Path(os.path.realpath(path))
    return (path,) if real == path else (path, real)


def _dir_identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None


def _is_empty_file(path: Path) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_size == 0


@dataclass
class _Target:
    path: Path  # absolute, not resolved
    label: str
    folder: bool
    ignore: tuple[Path, ...]  # ignored paths strictly inside this folder target


@dataclass
class _Root:
    """A folder handed to RustNotify."""

    path: Path
    forms: tuple[Path, ...]
    identity: tuple[int, int] | None = None
    """(st_dev, st_ino) when the current RustNotify was built; None: absent."""
    missing: bool = False
    """Absent at the last check (already reported as deleted)."""


class _Stop(Exception):
    pass


class WatchError(RuntimeError):
    """The OS watcher failed (e.g. the inotify watch limit was reached: try
    ``force_polling`` or raise ``fs.inotify.max_user_watches``)."""


_END = object()

#: watchfiles' codes for an added and a deleted path (``watchfiles.Change``).
_ADDED = 1
_DELETED = 3

#: How many steps an unsettled batch (see ``_Channel._unsettled``) is held.
_SETTLE_STEPS = 3

#: Give up on a watch that keeps failing after this many rebuilds in a row.
_MAX_REBUILDS_AFTER_ERRORS = 3


class _Channel:
    """One RustNotify (recursive or not) over some roots, driven in one thread."""

    def __init__(self, watcher: Watcher, roots: list[Path], recursive: bool) -> None:
        self.watcher = watcher
        self.recursive = recursive
        self.roots = [_Root(path=p, forms=_forms(p)) for p in roots]
        self.notify: RustNotify | None = None
        self.thread = threading.Thread(
            target=self._main,
            name=f"verifier-tui-watch-{'tree' if recursive else 'files'}",
            daemon=True,
        )

    # -- building ---------------------------------------------------------

    def _build(self) -> RustNotify | None:
        """A new RustNotify over the roots that exist now. This walks their
        trees, holding the GIL all along (see the module docstring)."""
        from watchfiles._rust_notify import RustNotify

        identities = [_dir_identity(root.path) for root in self.roots]
        present = [str(r.path) for r, i in zip(self.roots, identities, strict=True) if i is not None]
        w = self.watcher
        notify = (
            RustNotify(present, False, w.force_polling, w.poll_delay_ms, self.recursive, True)
            if present
            else None
        )
        # Recorded only once the new watch is in place, so a failed build is
        # simply retried at the next check.
        for root, identity in zip(self.roots, identities, strict=True):
            root.identity = identity
            root.missing = identity is None
        return notify

    def _rebuild(self, raw: set[tuple[int, str]]) -> None:
        """Replace the RustNotify after a root changed, losing no event on the
        other roots: build the new one first, then collect what the old one
        caught meanwhile."""
        from watchfiles._rust_notify import WatchfilesRustInternalError

        try:
            new = self._build()
        except FileNotFoundError:
            # A root vanished again while we walked it: try at the next check.
            return
        old, self.notify = self.notify, new
        if old is not None:
            try:
                leftover = old.watch(self.watcher.debounce_ms, self.watcher.step_ms, 1, None)
            except WatchfilesRustInternalError:
                leftover = None  # the very error we are rebuilding after
            if isinstance(leftover, set):
                raw |= leftover
            old.close()

    # -- the loop ---------------------------------------------------------

    def _main(self) -> None:
        w = self.watcher
        try:
            self.notify = self._build()
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer
            w._post(WatchError(f"could not watch {self._describe_roots()}: {exc}"))
            w._channel_ready()
            w._post(_END)
            return
        w._channel_ready()
        try:
            self._loop()
        except _Stop:
            pass
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer
            w._post(WatchError(f"watching {self._describe_roots()} failed: {exc}"))
        finally:
            if self.notify is not None:
                self.notify.close()
            w._post(_END)

    def _describe_roots(self) -> str:
        return ", ".join(str(r.path) for r in self.roots)

    def _loop(self) -> None:
        from watchfiles._rust_notify import WatchfilesRustInternalError

        w = self.watcher
        failures = 0
        while not w._stop.is_set():
            try:
                raw = self._wait(_MISSING_ROOT_CHECK_MS if self._any_missing() else _ROOT_CHECK_MS)
                failures = 0
            except WatchfilesRustInternalError:
                # The OS watcher reported an error (its event queue overflowed,
                # a watch could not be added...): events may have been lost.
                # Start over, and report every root as re-created (re-scan).
                failures += 1
                if failures > _MAX_REBUILDS_AFTER_ERRORS:
                    raise
                logger.warning("file watcher error; re-creating it", exc_info=True)
                for root in self.roots:
                    root.identity = None
                raw = set()
            appeared, vanished = self._check_roots(raw)
            if appeared:
                self._rebuild(raw)
            change = w._make_change(self, raw, appeared, vanished)
            if change is not None and self._unsettled(raw, change, vanished):
                try:
                    extra = self._wait(_SETTLE_STEPS * w.step_ms)
                except WatchfilesRustInternalError:
                    extra = set()  # handled (rebuilt) at the next wait
                raw |= extra
                more_appeared, more_vanished = self._check_roots(extra)
                if more_appeared:
                    self._rebuild(raw)
                change = w._make_change(self, raw, appeared + more_appeared, vanished | more_vanished)
            if change is not None:
                w._post(change)

    def _unsettled(self, raw: set[tuple[int, str]], change: Change, vanished: frozenset[Path]) -> bool:
        """Whether the batch looks like the middle of a save that a loaded
        machine paused for more than a step: a file deleted (an atomic save
        between "rename x away" and "write new x"), or a file just created and
        still empty (between open() and write()). Such a batch is held a few
        steps more so the save is one Change, not two, and no run reads an
        empty file. Cost: a real deletion or an empty new file is reported
        ~30 ms later; a normal save, nothing."""
        if change.deleted - vanished:
            return True
        for kind, raw_path in raw:
            if kind == _ADDED:
                path = self.watcher._user_path(self, raw_path)
                if path in change.paths and _is_empty_file(path):
                    return True
        return False

    def _any_missing(self) -> bool:
        return any(r.missing for r in self.roots)

    def _wait(self, timeout_ms: int) -> set[tuple[int, str]]:
        w = self.watcher
        if self.notify is None:
            if w._stop.wait(timeout_ms / 1000):
                raise _Stop
            return set()
        result = self.notify.watch(w.debounce_ms, w.step_ms, timeout_ms, w._stop)
        if result == "stop":
            raise _Stop
        return result if isinstance(result, set) else set()

    def _check_roots(self, raw: set[tuple[int, str]]) -> tuple[list[_Root], frozenset[Path]]:
        """Roots that appeared or were replaced (their watch is dead: the OS
        watch follows the old inode, which now lies elsewhere or nowhere), and
        roots that vanished since the last check."""
        # A root's own "deleted" event (rm -rf, or renamed away) kills its
        # watch even when a new folder already stands in its place with the
        # same inode number: file systems reuse freed inodes at once, so the
        # identity check alone would miss "rm -rf ws && mkdir ws".
        dead = {path for kind, path in raw if kind == _DELETED}
        appeared: list[_Root] = []
        vanished: set[Path] = set()
        for root in self.roots:
            identity = _dir_identity(root.path)
            if identity is None:
                root.identity = None
                if not root.missing:
                    root.missing = True
                    vanished.add(root.path)
            elif identity != root.identity or any(str(f) in dead for f in root.forms):
                appeared.append(root)
        return appeared, frozenset(vanished)


def _child_import_path() -> list[str]:
    """Where the watcher process finds this package and watchfiles, which may
    be an editable install (an import hook, not a path) or on a PYTHONPATH
    that ``-I`` ignores. Nothing else: the child's own stdlib and site come
    from the same interpreter."""
    paths = [str(Path(__file__).resolve().parents[2])]
    spec = importlib.util.find_spec("watchfiles")
    if spec is not None and spec.submodule_search_locations:
        paths.append(str(Path(next(iter(spec.submodule_search_locations))).parent))
    return list(dict.fromkeys(paths))


#: The watcher process's entry point: its import path first, then run.
_CHILD_CODE = (
    "import json, sys; sys.path[:0] = json.loads(sys.argv[1]); "
    "from verifier_tui.engine.watch import _child_main; _child_main(sys.argv[2])"
)

#: A batch from ``git checkout`` of a big tree is one JSON line: allow large ones.
_CHILD_LINE_LIMIT = 64 * 1024 * 1024


def _change_to_json(change: Change) -> dict[str, Any]:
    return {
        "paths": sorted(map(str, change.paths)),
        "deleted": sorted(map(str, change.deleted)),
        "recreated": sorted(map(str, change.recreated)),
        "names": [[str(p), n] for p, n in change.names],
    }


def _change_from_json(data: dict[str, Any]) -> Change:
    return Change(
        paths=frozenset(map(Path, data["paths"])),
        deleted=frozenset(map(Path, data["deleted"])),
        recreated=frozenset(map(Path, data["recreated"])),
        names=tuple((Path(p), n) for p, n in data["names"]),
    )


class Watcher:
    """Watch the targets; ``changes()`` yields a :class:`Change` per relevant batch.

    One-shot: ``changes()`` may be iterated once; ``stop()`` ends it.
    """

    def __init__(
        self,
        targets: list[WatchTarget],
        *,
        ignore: Iterable[Path] = (),
        debounce_ms: int = DEFAULT_DEBOUNCE_MS,
        step_ms: int = DEFAULT_STEP_MS,
        force_polling: bool = False,
        poll_delay_ms: int = 300,
        isolate: bool = True,
    ) -> None:
        if not targets:
            raise ValueError("nothing to watch")
        self.debounce_ms = debounce_ms
        self.step_ms = step_ms
        self.force_polling = force_polling
        """Poll instead of using OS events: network, container and WSL mounts
        deliver no events."""
        self.poll_delay_ms = poll_delay_ms
        self.isolate = isolate and bool(sys.executable) and not getattr(sys, "frozen", False)
        """Watch from a child process (see the module docstring); False: from
        threads of this process. Falls back to threads if the child cannot start."""
        self._ignore = [Path(os.path.abspath(p)) for p in ignore]
        ignored_forms = [form for p in self._ignore for form in _forms(p)]

        self._targets: list[_Target] = []
        for target in targets:
            path = Path(os.path.abspath(target.path))
            folder = path.is_dir() if target.folder is None else target.folder
            # An ignored path applies inside the target only: one that contains
            # the target would silence it entirely, which nobody means.
            inside = tuple(
                {
                    path / ignored.relative_to(form)  # in the target's own spelling
                    for form in _forms(path)
                    for ignored in ignored_forms
                    if folder and ignored != form and _is_under(ignored, form)
                }
            )
            self._targets.append(_Target(path, target.label, folder, inside))

        # Recursive roots: folder targets not inside another folder target.
        folders = sorted({t.path for t in self._targets if t.folder}, key=lambda p: len(p.parts))
        tree_roots: list[Path] = []
        for path in folders:
            if not any(_is_under(path, r) for r in tree_roots):
                tree_roots.append(path)
        # Non-recursive roots: parents of single files not covered above.
        file_roots: list[Path] = []
        for t in self._targets:
            parent = t.path.parent
            covered = parent in file_roots or any(_is_under(parent, r) for r in tree_roots)
            if not t.folder and not covered:
                file_roots.append(parent)

        self._files = {t.path: t for t in self._targets if not t.folder}
        self._folders = sorted((t for t in self._targets if t.folder), key=lambda t: -len(t.path.parts))
        self._channels = [
            _Channel(self, roots, recursive)
            for roots, recursive in ((tree_roots, True), (file_roots, False))
            if roots
        ]
        self._stop = threading.Event()
        self._ready = asyncio.Event()
        self._failure: BaseException | None = None
        self._producers = 0  # threads or child reader still feeding the queue
        self._pending_ready = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._proc: asyncio.subprocess.Process | None = None
        self._child_tasks: list[asyncio.Task[Any]] = []
        self._stderr_tail = bytearray()
        self._iterating = False

    # -- public -----------------------------------------------------------

    async def start(self) -> None:
        """Start watching and return once the OS watchers are in place.
        Idempotent; ``changes()`` calls it."""
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
            if self._stop.is_set():  # stopped before it started: nothing to do
                self._ready.set()
            elif not (self.isolate and await self._start_child()):
                self._start_threads()
        await self.ready()

    async def ready(self) -> None:
        """Wait until the OS watchers are in place: a file written after this
        returns is seen. (Run once right then: nothing reports the state
        before.) Raises :class:`WatchError` if they could not be set up."""
        await self._ready.wait()
        if self._failure is not None:
            raise self._failure

    @property
    def is_ready(self) -> bool:
        return self._ready.is_set()

    def stop(self) -> None:
        """End ``changes()`` within a step or two. Safe from any thread, twice."""
        self._stop.set()
        if self._proc is not None and self._loop is not None:
            # A closed loop raises RuntimeError: the child has seen EOF already.
            with suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._close_child_stdin)

    async def changes(self) -> AsyncIterator[Change]:
        """Coalesced relevant changes until :meth:`stop`. A failure of the OS
        watcher is raised here as :class:`WatchError`."""
        if self._iterating:
            raise RuntimeError("Watcher.changes() is already being iterated")
        self._iterating = True
        try:
            await self.start()
            while self._producers:
                items = [await self._queue.get()]
                # Coalesce whatever else is already queued (a slow consumer,
                # or both threads reporting one save).
                while not self._queue.empty():
                    items.append(self._queue.get_nowait())
                change: Change | None = None
                for item in items:
                    if item is _END:
                        self._producers -= 1
                    elif isinstance(item, BaseException):
                        raise item
                    else:
                        change = Change.combine(change, item)
                if change is not None and not self._stop.is_set():
                    yield change
        finally:
            self.stop()
            await self._wait_stopped()

    # -- watching from threads of this process ------------------------------

    def _start_threads(self) -> None:
        self._producers = self._pending_ready = len(self._channels)
        for channel in self._channels:
            channel.thread.start()

    def _call_in_loop(self, fn: Callable[..., Any], *args: Any) -> None:
        assert self._loop is not None
        try:
            self._loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:  # loop closed: nobody is listening any more
            self._stop.set()

    def _channel_ready(self) -> None:
        self._call_in_loop(self._count_down_ready)

    def _count_down_ready(self) -> None:
        self._pending_ready -= 1
        if self._pending_ready <= 0:
            self._ready.set()

    def _post(self, item: Any) -> None:
        self._call_in_loop(self._deliver, item)

    def _deliver(self, item: Any) -> None:
        if isinstance(item, BaseException) and self._failure is None:
            self._failure = item
        self._queue.put_nowait(item)

    # -- watching from a child process ----------------------------------------

    async def _start_child(self) -> bool:
        """Start the watcher process and wait for it to be ready. False (after
        a warning) if it could not start, so threads take over."""
        options = {
            "targets": [[str(t.path), t.label, t.folder] for t in self._targets],
            "ignore": [str(p) for p in self._ignore],
            "debounce_ms": self.debounce_ms,
            "step_ms": self.step_ms,
            "force_polling": self.force_polling,
            "poll_delay_ms": self.poll_delay_ms,
        }
        try:
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-I",  # no PYTHONPATH, PYTHONSTARTUP, user site: argv[1] sets the path
                "-c",
                _CHILD_CODE,
                json.dumps(_child_import_path()),
                json.dumps(options),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                # Out of the terminal's process group: Ctrl-C is the parent's
                # to handle; the child ends when its stdin closes.
                start_new_session=True,
                limit=_CHILD_LINE_LIMIT,
            )
        except OSError as exc:
            logger.warning("cannot start the watcher process (%s); watching from threads", exc)
            return False
        self._proc = proc
        if self._stop.is_set():  # stop() came while we were spawning it
            self._close_child_stdin()
        self._child_tasks.append(asyncio.create_task(self._read_child_stderr(proc)))
        assert proc.stdout is not None
        first = await proc.stdout.readline()
        if self._stop.is_set() and not first:
            self._ready.set()  # stopped before it was ready: nothing to watch
            return True
        try:
            message = json.loads(first)
        except ValueError:
            message = {}
        if message.get("ready"):
            self._producers = 1
            self._child_tasks.append(asyncio.create_task(self._read_child(proc)))
            self._ready.set()
            return True
        # It failed before watching anything: most likely it could not import
        # this package or watchfiles. Threads will do (or fail with the reason).
        await self._wait_stopped()
        reason = message.get("error") or self._stderr_tail.decode(errors="replace").strip()
        logger.warning("the watcher process failed to start (%s); watching from threads", reason)
        self._proc = None
        return False

    async def _read_child(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stdout is not None
        failed = False
        try:
            while line := await proc.stdout.readline():
                message = json.loads(line)
                if "change" in message:
                    self._queue.put_nowait(_change_from_json(message["change"]))
                elif "error" in message:
                    failed = True
                    self._deliver(WatchError(message["error"]))
            status = await proc.wait()
            if status and not failed and not self._stop.is_set():
                tail = self._stderr_tail.decode(errors="replace").strip()
                self._deliver(WatchError(f"the watcher process exited with status {status}: {tail}"))
        except Exception as exc:  # noqa: BLE001 - a broken pipe, bad JSON: say so
            self._deliver(WatchError(f"lost the watcher process: {exc}"))
        finally:
            self._queue.put_nowait(_END)

    async def _read_child_stderr(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stderr is not None
        while chunk := await proc.stderr.read(65536):
            self._stderr_tail += chunk
            del self._stderr_tail[:-4096]

    def _close_child_stdin(self) -> None:
        stdin = self._proc.stdin if self._proc is not None else None
        if stdin is not None and not stdin.is_closing():
            stdin.close()

    async def _wait_stopped(self) -> None:
        """Wait for the child process or the threads to end."""
        proc = self._proc
        if proc is not None:
            self._close_child_stdin()
            try:
                await asyncio.wait_for(proc.wait(), 5)
            except asyncio.TimeoutError:
                proc.kill()
                await proc.wait()
            if self._child_tasks:
                await asyncio.wait(self._child_tasks)
            # Close the pipes' transport now, on a running loop: left to the
            # garbage collector, it closes after the loop did and says so
            # ("Event loop is closed") on the way out. asyncio's Process
            # exposes no public close, hence the private attribute.
            transport = getattr(proc, "_transport", None)
            if transport is not None:
                transport.close()
        threads = [c.thread for c in self._channels if c.thread.is_alive()]
        if threads:
            await asyncio.to_thread(lambda: [t.join(5) for t in threads])

    # -- turning raw events into a Change (in the watching threads) ---------------

    def _user_path(self, channel: _Channel, raw_path: str) -> Path | None:
        """The event's path on the user's side (under the root as named)."""
        path = Path(raw_path)
        for root in channel.roots:
            for form in root.forms:
                if _is_under(path, form):
                    return root.path / path.relative_to(form)
        return None

    def _classify(self, path: Path) -> str | None:
        """The display name of a relevant path, or None for an irrelevant one."""
        if path in self._files:
            return path.name  # chosen by name: no noise rule applies
        for target in self._folders:
            if _is_under(path, target.path):
                relative = path.relative_to(target.path).parts
                if is_noise(relative):
                    return None
                if any(_is_under(path, ignored) for ignored in target.ignore):
                    return None
                return "/".join((target.label, *relative))
        return None  # e.g. a sibling of a single-file target

    def _make_change(
        self,
        channel: _Channel,
        raw: set[tuple[int, str]],
        appeared: list[_Root],
        vanished: frozenset[Path],
    ) -> Change | None:
        names: dict[Path, str] = {}
        recreated: set[Path] = set()
        for _kind, raw_path in raw:
            path = self._user_path(channel, raw_path)
            if path is None or path in names:
                continue
            name = self._classify(path)
            if name is not None:
                names[path] = name
        for root in appeared:
            for target in self._targets:
                if target.folder and target.path == root.path:
                    names[root.path] = target.label
                    recreated.add(root.path)
                elif not target.folder and target.path.parent == root.path and os.path.lexists(target.path):
                    names[target.path] = target.path.name  # a single file in it
        for path in vanished:
            name = self._classify(path)
            if name is not None:
                names[path] = name
        if not names:
            return None
        # Stat after the batch: what matters is the state now, not the order
        # of an unordered event set.
        deleted = frozenset(p for p in names if not os.path.lexists(p))
        return Change(
            paths=frozenset(names),
            deleted=deleted,
            recreated=frozenset(recreated - deleted),
            names=tuple(sorted(names.items())),
        )


def _child_main(options_json: str) -> None:
    """The watcher process: watch from threads, print each Change as a JSON
    line, end when stdin closes (the parent stopped us, or died)."""
    options = json.loads(options_json)
    targets = [WatchTarget(Path(p), label, folder) for p, label, folder in options.pop("targets")]
    ignore = [Path(p) for p in options.pop("ignore")]
    watcher = Watcher(targets, ignore=ignore, isolate=False, **options)
    out = sys.stdout.buffer

    def emit(message: dict[str, Any]) -> None:
        out.write(json.dumps(message).encode() + b"\n")
        out.flush()

    def wait_for_parent() -> None:
        try:
            sys.stdin.buffer.read()
        finally:
            watcher.stop()

    threading.Thread(target=wait_for_parent, name="verifier-tui-watch-stdin", daemon=True).start()

    async def main() -> None:
        async with aclosing(watcher.changes()) as changes:
            await watcher.start()
            emit({"ready": True})
            async for change in changes:
                emit({"change": _change_to_json(change)})

    try:
        asyncio.run(main())
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        with suppress(OSError):  # the parent may be gone
            emit({"error": str(exc) if isinstance(exc, WatchError) else f"{type(exc).__name__}: {exc}"})
        raise SystemExit(1) from None


# ---------------------------------------------------------------------------
# The scheduler


class RunScheduler:
    """One run at a time, at most one pending.

    ``request(change)`` starts a run now when idle; during a run it merges the
    change into the single pending request, which starts as soon as the run
    ends. So a change that lands mid-run is never dropped, and ten of them give
    exactly one more run.

    With ``supersede=True`` (the TUI), a request during a run also cancels the
    in-flight run: its coroutine receives ``CancelledError`` and must clean up
    (kill its process group); the pending run starts as soon as that cleanup
    is done (not before, so two runs never share the scratch folder), and the
    cancelled run's result is never reported.

    Every started run ends as exactly one of finished, failed, superseded or
    cancelled (by :meth:`close`); the counters say how many of each.
    """

    def __init__(
        self,
        run: Callable[[Change | None], Awaitable[Any]],
        *,
        supersede: bool = False,
        on_error: Callable[[BaseException], Any] | None = None,
        on_result: Callable[[Change | None, Any], Any] | None = None,
    ) -> None:
        self._run = run
        self.supersede = supersede
        self._on_error = on_error
        self._on_result = on_result
        self._task: asyncio.Task[Any] | None = None
        self._task_superseded = False
        self._has_pending = False
        self._pending: Change | None = None
        self._closed = False
        self._idle = asyncio.Event()
        self._idle.set()
        self.requests = 0
        self.runs_started = 0
        self.runs_finished = 0
        """Runs whose coroutine returned (their result was reported)."""
        self.runs_failed = 0
        """Runs whose coroutine raised (the error went to ``on_error``)."""
        self.runs_superseded = 0
        self.runs_cancelled = 0
        """Runs cancelled by :meth:`close`."""
        self.latest_result: Any = None
        """The result of the last run that finished without being superseded."""
        self.latest_change: Change | None = None
        """The change that triggered the run ``latest_result`` came from."""

    @property
    def busy(self) -> bool:
        return self._task is not None

    @property
    def pending(self) -> bool:
        return self._has_pending

    def request(self, change: Change | None = None, *, supersede: bool | None = None) -> None:
        """Ask for a run for ``change`` (None: no file changed, e.g. the user
        pressed "run"). Must be called on the event loop's thread."""
        if self._closed:
            return
        self.requests += 1
        if self._task is None:
            self._start(change)
            return
        self._pending = Change.combine(self._pending, change) if self._has_pending else change
        self._has_pending = True
        if (self.supersede if supersede is None else supersede) and not self._task_superseded:
            self._task_superseded = True
            self._task.cancel()

    async def drain(self) -> None:
        """Wait until no run is in flight and none is pending."""
        while self._task is not None or self._has_pending:
            await self._idle.wait()
            await asyncio.sleep(0)  # never spin without yielding to the loop

    async def close(self) -> None:
        """Drop the pending request, cancel the run in flight, wait for its cleanup."""
        self._closed = True
        self._has_pending = False
        self._pending = None
        task = self._task
        if task is not None:
            task.cancel()
            await asyncio.wait({task})
            # Let the done-callback run so the counters are final.
            while self._task is task:
                await asyncio.sleep(0)
        self._idle.set()

    def _start(self, change: Change | None) -> None:
        self._idle.clear()
        self._task_superseded = False
        self.runs_started += 1

        async def invoke() -> Any:
            return await self._run(change)

        task = asyncio.get_running_loop().create_task(invoke())
        self._task = task
        task.add_done_callback(lambda t: self._on_done(t, change))

    def _on_done(self, task: asyncio.Task[Any], change: Change | None) -> None:
        superseded = self._task_superseded
        self._task = None
        self._task_superseded = False
        if task.cancelled():
            if superseded:
                self.runs_superseded += 1
            else:
                self.runs_cancelled += 1
        elif (error := task.exception()) is not None:
            self.runs_failed += 1
            self._call(self._on_error, error, what="on_error", fallback_error=error)
        elif superseded:
            # The run swallowed its cancellation and returned: still stale.
            self.runs_superseded += 1
        elif self._closed:
            self.runs_cancelled += 1  # swallowed close()'s cancellation: not reported
        else:
            self.runs_finished += 1
            self.latest_result = task.result()
            self.latest_change = change
            if self._on_result is not None:
                self._call(self._on_result, change, self.latest_result, what="on_result")
        if self._has_pending and not self._closed:
            pending, self._pending, self._has_pending = self._pending, None, False
            self._start(pending)
        else:
            self._idle.set()

    def _call(
        self,
        callback: Callable[..., Any] | None,
        *args: Any,
        what: str,
        fallback_error: BaseException | None = None,
    ) -> None:
        if callback is None:
            if fallback_error is not None:
                logger.error("run failed", exc_info=fallback_error)
            return
        try:
            callback(*args)
        except Exception:
            logger.exception("RunScheduler %s callback raised", what)


async def watch_and_run(watcher: Watcher, scheduler: RunScheduler, *, run_first: bool = True) -> None:
    """Request a run for every change until the watcher stops.

    With ``run_first``, one run (for ``None``) is requested as soon as the OS
    watcher is in place: nothing reports the state that was there before it.
    """
    async with aclosing(watcher.changes()) as changes:
        await watcher.start()
        if run_first:
            scheduler.request(None)
        async for change in changes:
            scheduler.request(change)
