"""One ``watchfiles.watch`` (recursive or not) over some roots, iterated in one thread; two where a
recursive root holds a link to a folder, so that no walk of the OS watch follows one (:func:`_split`).

``watch`` is iterated with ``yield_on_timeout``, so control comes back at
least every ``_WAKE_MS`` even when nothing happens; the thread then filters
and ``stat``-s what arrived. What ``watch`` cannot do is done here: it goes
on watching a root's old inode once the root is deleted or replaced by a
rename (so the roots are checked between batches, and a new ``watch`` is
started without losing the other roots' events), it never says that the
kernel dropped events (``_RESCAN_AT``), and it has no "ready" signal (its
first wait stands for one).
"""

from __future__ import annotations

import errno
import logging
import os
import re
import shutil
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterable
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from verifier_tui.engine.changes import Change
from verifier_tui.engine.record import record, replace
from verifier_tui.engine.untrusted import real_dir

if TYPE_CHECKING:
    from collections.abc import Generator

    from watchfiles.main import FileChange

    Batch = set[FileChange]
    """Raw events: (watchfiles' change kind, absolute path as the OS reported it)."""
    Batches = Generator[Batch, None, None]
    MakeChange = Callable[[set[Path], set[Path], list[Path], frozenset[Path], frozenset[Path]], Change | None]
    """Turns (changed paths, those of them added, roots that appeared, roots that
    vanished, those appeared that were never there before), all on the user's
    side, into the :class:`Change` to report, or None if none concerns us."""

logger = logging.getLogger(__name__)

#: How long ``watch`` sleeps between looks at its event set (its ``step``).
#: A lone save is seen at the first step boundary after it lands, then one
#: quiet step closes the batch: latency is 1-2 steps, about 9 ms at 5 against
#: 86 at watchfiles' default of 50, and a smaller step costs no more while idle
#: (the watcher process stays under 1% of a core). An editor's save that lands
#: across two steps is held together by settling (``Channel._unsettled``).
STEP_MS = 5

#: The most a batch is held open while events keep arriving for *new* paths.
#: A single save never waits for it (the batch closes after one quiet step);
#: only a stream of changes to ever more paths (``git checkout``, a build
#: writing a tree, ``rsync`` into the workspace) reaches it. 300 ms, the top of
#: the 150-300 ms range usually advised for editors' saves, lets such a stream
#: arrive in a few large batches instead of starting a run on a half-written
#: tree every 150 ms.
DEBOUNCE_MS = 300

#: How long ``watch`` may wait with no event before handing control back (its
#: ``rust_timeout``). This bounds how late a re-created root is noticed when no
#: event tells us, and how long after the watch is built it is
#: said to be ready (a new ``watch`` builds its OS watch in its first step and
#: hands nothing back before its first wait ends). 20 ms: 50 idle wake-ups a
#: second, against the 200 of the steps themselves.
_WAKE_MS = 20

#: The most a batch that looks like half a save (``Channel._unsettled``) is held for the rest: an
#: editor that saves in place (VS Code) truncates the file, then writes it, up to tens of
#: milliseconds apart on a loaded machine or for a big file; held one wait (20 ms) alone, the
#: empty file was a change of its own, and ``watch`` printed a run of the empty verifier before
#: the save's. The hold ends as soon as the rest comes; only a file deleted or emptied on purpose
#: waits it out. The top of the range advised for editors' saves, as :data:`DEBOUNCE_MS`.
_SETTLE_MS = DEBOUNCE_MS

#: watchfiles' codes for an added and a deleted path (``watchfiles.Change``,
#: an IntEnum, imported only when watching starts).
_ADDED = 1
_DELETED = 3

#: The most OS watches (inotify instances, of fs.inotify.max_user_instances: often 128 for all of a
#: user's programs) a channel holds: the two of a root split at its links (:func:`_split`), and those
#: of folders made since in the folders watched alone; past it, the channel's ``watch`` is built again.
_MOST_WATCHES = 5

#: Give up on a watch that keeps failing after this many rebuilds in a row.
_MAX_REBUILDS_AFTER_ERRORS = 3
#: What watchfiles says of an event whose path is not UTF-8 (notify's ``to_str``).
_UNDECODABLE = "Unable to decode path"
#: How far a file system's time stamps may lag ``time.time_ns()``: Linux
#: stamps from a clock updated once a tick (1 to 10 ms).
_CLOCK_SLACK_NS = 10_000_000

#: A batch of this many events is taken for one in which events were lost.
#: When the kernel's inotify queue overflows (a burst of more than
#: fs.inotify.max_queued_events, 16,384 by default, while the watcher was not
#: reading), notify turns the overflow into a rescan event that names no path,
#: and watchfiles drops events without a path: what arrives is only the part of
#: the burst queued before the overflow, never a word that the rest is missing.
#: The public API cannot say so either, hence this guess: a batch this big
#: reports every root as re-created (re-scan it whole), and the copy sandbox
#: then walks its mirror instead of trusting the paths named, which for this
#: many paths costs about what copying them one by one would.
_RESCAN_AT = 1000

#: Sent through ``post`` once the channel's OS watch is in place (or failed),
#: and once the channel has ended.
READY = object()
END = object()


def is_under(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)


def forms(path: Path) -> tuple[Path, ...]:
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


def _changed(path: str | Path, limit_ns: int) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return max(st.st_mtime_ns, st.st_ctime_ns) >= limit_ns


def _behind_link(path: Path, root: Path, links: dict[Path, Path | None]) -> Path | None:
    """Where ``path`` really lies when it lies behind a link inside ``root``, else None (``links``:
    each folder's real place if it is a link, looked at once a batch). A run copies a link as a
    link (as ``docker cp`` does), so what lies behind one is not what it reads: the OS watch
    follows such links, and one out to the tool's own temporary folder started a run after every
    run. Only where a root holds the real place is it a change (:meth:`Channel._change`)."""
    folder = path.parent
    while folder != root and is_under(folder, root):
        if folder not in links:
            links[folder] = Path(os.path.realpath(folder)) if os.path.islink(folder) else None
        real = links[folder]
        if real is not None:
            return real / path.relative_to(folder)
        folder = folder.parent
    return None


def _changed_under(folder: Path, limit_ns: int, found: Batch) -> None:
    """Adds to ``found`` the folder and every entry under it (no link followed) whose data or
    inode changed (its mtime or ctime) at ``limit_ns`` or later, as a modification."""
    from watchfiles import Change as Kind

    folders = [str(folder)]
    while folders:
        with suppress(OSError), os.scandir(folders.pop()) as entries:
            for entry in entries:
                if _changed(entry.path, limit_ns):
                    found.add((Kind.modified, entry.path))
                with suppress(OSError):
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(entry.path)
    if _changed(folder, limit_ns):
        found.add((Kind.modified, str(folder)))


_P = TypeVar("_P", str, Path)


def _outermost(folders: Iterable[_P]) -> list[_P]:
    """The folders of ``folders`` that lie in none of the others (thousands made at once: sorted by
    their parts, a folder comes just before those inside it)."""
    kept: list[_P] = []
    for folder in sorted(set(folders), key=lambda each: os.fspath(each).split(os.sep)):
        if not kept or not os.fspath(folder).startswith(os.path.join(kept[-1], "")):
            kept.append(folder)
    return kept


def _readable(path: Path) -> bool:
    """Whether inotify would watch the folder now (it asks to read it)."""
    return os.access(path, os.R_OK | os.X_OK)


def _is_empty_file(path: Path) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_size == 0


@record
class Root:
    """A folder handed to ``watch``."""

    path: Path
    forms: tuple[Path, ...]
    identity: tuple[int, int] | None = None
    """(st_dev, st_ino) when the current ``watch`` was built; None: absent."""
    missing: bool = False
    """Absent at the last check (already reported as deleted)."""
    seen: bool = False
    """There when the channel began or reported since: one appearing is said re-created, else created."""


def _named_back(batches: Batches, aliases: dict[str, str]) -> Batches:
    """``batches`` with each path under an alias (a link to a root,
    :meth:`Channel._alias`) named by the root's own path."""
    if not aliases:
        return batches

    def back(path: str) -> str:
        for alias, root in aliases.items():
            if path == alias or path.startswith(alias + os.sep):
                return root + path[len(alias) :]
        return path

    def named() -> Batches:
        try:
            for batch in batches:
                yield {(kind, back(path)) for kind, path in batch}
        finally:
            batches.close()

    return named()


def _together(watches: list[Batches]) -> Batches:
    """One batch of each watch in turn, as one; a watch added to ``watches`` meanwhile is read too."""
    try:
        while True:
            batch: Batch = set()
            for watch in list(watches):
                more = next(watch, None)
                if more is None:  # ``stop`` is set
                    return
                batch |= more
            yield batch
    finally:
        for watch in watches:
            watch.close()


class _Stop(Exception):
    pass


@record
class Notice:
    """What a channel says once while it goes on watching: why it cannot see every change."""

    said: str


#: Why inotify sees less than it should, in words, with the sysctl that raises the limit.
SOME_UNWATCHED = (
    "cannot see every change: the inotify watch limit is reached (fs.inotify.max_user_watches), so a folder past "
    "it is not watched and a save in it runs nothing; raise it (sudo sysctl fs.inotify.max_user_watches=524288) "
    "or watch with --poll"
)
#: Why the watch polls though --poll was not given.
POLLING = (
    "no inotify instance to be had (fs.inotify.max_user_instances is reached): watching by polling instead, "
    "which sees every save a little later; raise it (sudo sysctl fs.inotify.max_user_instances=1024)"
)
_NO_INSTANCE = "Error creating recommended watcher"  # watchfiles' words where notify cannot make its watcher


@record
class Shape:
    """How a recursive root is handed to the OS watch, as paths on the user's side (:func:`_split`)."""

    flat: frozenset[Path] = frozenset()
    """Folders on the way to a cut, watched alone."""
    tree: frozenset[Path] = frozenset()
    """The folders beside them, watched whole."""
    cuts: frozenset[Path] = frozenset()
    """Links to folders and folders inotify refuses: not watched."""


def _split(root: str) -> tuple[list[str], list[str], list[str]]:
    """A recursive root as (folders watched alone, folders watched whole, cuts), relative to ``root``.

    notify's walk of a tree (watchfiles 1.3.0, notify 8.0.0: walkdir with ``follow_links(true)``,
    and no switch for it) follows links to folders: a link to / or a pnpm ``node_modules`` had it
    walk and watch the machine for a minute before the first run, for files no run reads (what
    lies behind a link is no part of the tree, :func:`_behind_link`). It also stops at the first
    folder inotify refuses (one its user cannot read: a root-owned one a container left), and
    ``ignore_permission_denied`` drops the error, so every folder not reached yet went unwatched.
    So no recursive root given to it holds a cut: each folder on the way to one is watched alone,
    each folder beside those whole; a folder made in one of the former is watched once the
    channel sees it (:meth:`Channel._reshaped`). A tree with no cut is one root, watched whole; so
    is one that names a folder watchfiles cannot take (not UTF-8): its watch then ends and polls
    (:meth:`Channel._reopen`)."""
    cuts: set[str] = set()
    subfolders: dict[str, list[str]] = {}
    waiting = [""]
    while waiting:  # a stack, not os.walk: a tree deeper than the recursion limit is walked all the same
        part = waiting.pop()
        names: list[str] = []
        try:
            with os.scandir(os.path.join(root, part)) as entries:
                for entry in entries:
                    if entry.is_symlink():
                        if entry.is_dir():
                            cuts.add(os.path.join(part, entry.name))
                    elif entry.is_dir(follow_symlinks=False):
                        names.append(os.path.join(part, entry.name))
        except OSError:
            cuts.add(part)
            continue
        subfolders[part] = names
        waiting += names
    flat: set[str] = set()  # each looked at once, however many cuts lie under it
    for cut in cuts:
        up = cut
        while up and (up := os.path.dirname(up)) not in flat:
            flat.add(up)
    tree = [each for up in flat for each in subfolders.get(up, ()) if each not in cuts and each not in flat]
    if not flat or any(_NOT_UTF8.search(each) for each in (*flat, *tree)):
        return [], [""], []
    return sorted(flat), sorted(tree), sorted(cuts)


def _holds_cut(root: Path) -> bool:
    """Whether a folder inside ``root`` is one :func:`_split` cuts at (a link to a folder, a folder
    inotify refuses): a walk that stops at the first and keeps nothing it walked, as a workspace
    with no link, the most, is walked at every batch that makes a folder. (:func:`_split` says which.)"""
    waiting = [str(root)]
    while waiting:
        part = waiting.pop()
        try:
            with os.scandir(part) as entries:
                for entry in entries:
                    if entry.is_symlink():
                        if entry.is_dir():
                            return True
                    elif entry.is_dir(follow_symlinks=False):
                        waiting.append(entry.path)
        except OSError:
            if part != str(root):  # (as _split: ``root`` itself is no cut)
                return True
    return False


def _split_all(named: dict[str, str]) -> tuple[list[str], list[str], Shape]:
    """:func:`_split` of each root (named as watchfiles takes it: the root on the user's side):
    what to watch alone and whole, as watchfiles takes them, and the :class:`Shape` of it all."""
    flat: list[str] = []
    whole: list[str] = []
    shape = Shape()
    for name, root in named.items():
        alone, beside, cuts = _split(root)
        flat += [os.path.join(name, part) if part else name for part in alone]
        whole += [os.path.join(name, part) if part else name for part in beside]
        shape = Shape(
            shape.flat | {Path(root, part) for part in alone},
            shape.tree | {Path(root, part) for part in beside},
            shape.cuts | {Path(root, part) for part in cuts},
        )
    return flat, whole, shape


_NOT_UTF8 = re.compile("[\ud800-\udfff]")  # what a file name's bytes that are no UTF-8 become in a str


def _out_of_watches(path: Path) -> bool:
    """Whether inotify has no watch left for this user.

    watchfiles (1.3.0, over notify 8.0.0), passed ``ignore_permission_denied``, drops any error of
    adding a root's watches, the watch limit's (ENOSPC) too: a tree built past the limit stops its
    walk there, silently, and a save in a folder left out is never seen. What it built cannot be
    asked, so one more watch is tried: none to be had means the limit was hit (or will be, by the
    next folder made). (No instance to try it with says nothing of the watches.)"""
    if not sys.platform.startswith("linux"):
        return False  # FSEvents and kqueue have no such limit
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_CLOEXEC)
    if fd < 0:
        return False
    try:
        in_attrib = 0x4
        return libc.inotify_add_watch(fd, os.fsencode(path), in_attrib) < 0 and ctypes.get_errno() == errno.ENOSPC
    finally:
        os.close(fd)


class WatchError(RuntimeError):
    """The OS watcher failed (e.g. the inotify watch limit was reached: try
    ``force_polling`` or raise ``fs.inotify.max_user_watches``)."""


class Channel:
    """One ``watch`` (recursive or not) over some roots, iterated in one thread.

    What it finds goes to ``post``: a :class:`Change`, a :class:`WatchError`,
    :data:`READY` once, :data:`END` last. ``stop`` ends it within a step.
    """

    def __init__(
        self,
        roots: list[Path],
        recursive: bool,
        *,
        force_polling: bool,
        stop: threading.Event,
        post: Callable[[object], None],
        make_change: MakeChange,
        links_in: Path | None = None,
    ) -> None:
        self.recursive = recursive
        self.force_polling = force_polling
        self.roots = [Root(path=p, forms=forms(p), seen=_dir_identity(p) is not None) for p in roots]
        self._innermost_first = sorted(self.roots, key=lambda root: -len(root.path.parts))
        self._stop = stop
        self._post = post
        self._make_change = make_change
        self._batches: Batches | None = None
        self._failures = 0  # errors of the OS watcher in a row
        self._taken_ns = 0  # time.time_ns() when the last batch was taken in (:meth:`_took`)
        self._present: list[Path] = []  # the roots the current ``watch`` was given
        self._links: str | None = None  # the folder of the links to roots not named in UTF-8 (:meth:`_alias`)
        self._links_in = links_in  # where that folder is made (None: $TMPDIR)
        self._said_unwatched = False  # SOME_UNWATCHED posted (once)
        self._shape = Shape()  # how the current ``watch`` split the roots (:func:`_split`)
        self._watches: list[Batches] = []  # the OS watches it reads in turn (:func:`_together`)
        self._unfollowed: tuple[Batch, int] | None = None  # left for the next batch (:meth:`_follow_shape`), since when
        self.thread = threading.Thread(
            target=self._main,
            name=f"verifier-tui-watch-{'tree' if recursive else 'files'}",
            daemon=True,
        )

    # -- building ---------------------------------------------------------

    def _open(self) -> Batch:
        """Start a new ``watch`` over the roots that exist now and return what
        it caught in its first wait. Its first step builds the OS watch,
        walking the roots' trees and holding the GIL all along (see
        :mod:`.child`); what building raises is raised here."""
        identities = [_dir_identity(root.path) for root in self.roots]
        present = [r.path for r, i in zip(self.roots, identities, strict=True) if i is not None]
        before = [(root.identity, root.missing) for root in self.roots]
        shape, watches = self._shape, self._watches
        for root, identity in zip(self.roots, identities, strict=True):
            root.identity = identity
            root.missing = identity is None
        self._present = present
        self._taken_ns = time.time_ns()
        self._batches = self._watch(present) if present else None
        try:
            try:
                batch = self._next()
            except RuntimeError as exc:
                if self.force_polling or _NO_INSTANCE not in str(exc):
                    raise
                # No inotify instance to be had (fs.inotify.max_user_instances, 128 on many machines,
                # taken by editors' and other tools' watchers): polling needs none and sees every save.
                self.force_polling = True
                self._post(Notice(POLLING))
                self._batches = self._watch(present)
                batch = self._next()
        except BaseException:  # not built: the next check tries again
            for root, (identity, missing) in zip(self.roots, before, strict=True):
                root.identity, root.missing = identity, missing
            self._shape, self._watches = shape, watches
            raise
        if present and not self.force_polling and not self._said_unwatched and _out_of_watches(present[0]):
            self._said_unwatched = True
            self._post(Notice(SOME_UNWATCHED))
        return batch

    def _watch(self, present: list[Path]) -> Batches:
        aliases = {self._alias(path): str(path) for path in present}
        if self.recursive and not self.force_polling:  # a poll walks no link: it lists what it polls
            flat, whole, self._shape = _split_all(aliases)
        else:
            flat, whole, self._shape = [], list(aliases), Shape()
        # The folders watched alone are looked at for one step, then the rest waited on: a save in
        # one of them comes at most one wait later, and the watcher wakes about as often as before.
        self._watches = [self._part(flat, False, 1 if whole else _WAKE_MS)] if flat else []
        if whole:
            self._watches.append(self._part(whole, self.recursive, _WAKE_MS))
        return _named_back(_together(self._watches), {a: p for a, p in aliases.items() if a != p})

    def _part(self, paths: list[str], recursive: bool, wait_ms: int) -> Batches:
        import watchfiles

        return watchfiles.watch(
            *paths,
            watch_filter=None,  # filtered here, on paths relative to each root
            debounce=DEBOUNCE_MS,
            step=STEP_MS,
            stop_event=self._stop,
            rust_timeout=wait_ms,
            yield_on_timeout=True,
            debug=False,
            force_polling=self.force_polling,
            recursive=recursive,
            ignore_permission_denied=True,
        )

    def _alias(self, path: Path) -> str:
        """``path`` as watchfiles can take it: a path that is not UTF-8 (a task
        kept in a folder so named) it refuses whole, so it watches a link to
        it, named in ASCII in a folder of the channel's own; the events'
        paths are named back (:func:`_named_back`). That folder goes in
        ``links_in`` when given: the session's scratch folder, swept at the
        next start should this process be killed before it removes it."""
        try:
            str(path).encode()
        except UnicodeEncodeError:
            pass
        else:
            return str(path)
        import tempfile

        if self._links is None:
            self._links = tempfile.mkdtemp(prefix="verifier-tui-watch-", dir=self._links_in)
        link = os.path.join(self._links, str([root.path for root in self.roots].index(path)))
        if not os.path.islink(link):
            os.symlink(path, link)
        return link

    def _rebuild(self, raw: Batch, since_ns: int | None = None, touched: frozenset[Path] = frozenset()) -> Batch:
        """Replace the ``watch`` after a root changed, losing no event on the
        other roots: start the new one first, then collect what the old one
        caught meanwhile. With ``since_ns``, what changed since then in the
        folders ``touched`` and those the old one did not watch (made before
        their watch existed) is taken too. Returns what it added to ``raw``."""
        old, old_shape = self._batches, self._shape
        try:
            fresh = self._open()
        except FileNotFoundError:
            # A root vanished again while we walked it: try at the next check.
            self._batches = old
            return set()
        if old is not None:
            with suppress(RuntimeError):  # an error of the old watch no longer matters
                fresh |= next(old, set())
            old.close()
        if since_ns is not None:
            new = self._shape.flat - old_shape.flat | self._shape.tree - old_shape.tree
            new |= {folder for folder in touched if real_dir(folder)}  # never a link: what is behind is not ours
            for folder in _outermost(new):
                _changed_under(folder, since_ns - _CLOCK_SLACK_NS, fresh)
        raw |= fresh
        return fresh

    def _follow_shape(self, raw: Batch, fresh: Batch, since_ns: int) -> None:
        """Watch the folders made (or made again) inside a folder watched alone
        (:meth:`_reshaped`), as often as ``fresh`` says some were: each time
        with a watch of their own, walking only them; with the whole ``watch``
        built again where a watched folder went (moved away, its watch would
        follow it, still naming it by its old place) or past :data:`_MOST_WATCHES`.
        After a rebuild the batch is reported as it is, and what the new watch
        caught is followed with the next one: a folder made again and again (a
        build's) would have each rebuild find it gone again, and nothing reported
        while it lasts."""
        if self._unfollowed is not None:
            fresh = fresh | self._unfollowed[0]
            since_ns = min(since_ns, self._unfollowed[1])
            self._unfollowed = None
        while True:
            touched, went = self._reshaped(fresh)
            made = _outermost({folder for folder in touched if real_dir(folder)})
            if not made and not went:
                return
            flat, whole, shape = _split_all({str(folder): str(folder) for folder in made})
            many = len(self._watches) + bool(flat) + bool(whole) > _MOST_WATCHES
            if went or many or any(_NOT_UTF8.search(str(folder)) for folder in made):
                before = self._batches
                built = self._rebuild(raw, since_ns, touched)
                # not built (a folder went as it was walked): what asked for it is asked again
                self._unfollowed = (built if self._batches is not before else fresh), since_ns
                return
            self._watches += [self._part(paths, deep, 1) for paths, deep in ((flat, False), (whole, True)) if paths]
            self._shape = Shape(
                self._shape.flat | shape.flat, self._shape.tree | shape.tree, self._shape.cuts - set(made) | shape.cuts
            )
            fresh = self._wait()  # builds them, and takes what every watch caught meanwhile
            # One its user could not read as its watch was built (made with mode 000, or chmod 000 at
            # once) has none: a cut, so that the chmod that opens it tells its parent's watch.
            refused = {folder for folder in made if not _readable(folder)}
            if refused:
                self._shape = Shape(self._shape.flat, self._shape.tree - refused, self._shape.cuts | refused)
            for folder in made:  # what was saved there before their watch existed
                _changed_under(folder, since_ns - _CLOCK_SLACK_NS, fresh)
            raw |= fresh

    def _reshaped(self, events: Batch) -> tuple[frozenset[Path], bool]:
        """The folders inside folders watched alone (:func:`_split`) that the
        ``watch`` does not cover as it should: made or moved in (a folder
        inside would not be watched), watched and made again or gone, a link
        that is a folder now; and whether the whole ``watch`` must be built
        again: a watched one went, or a folder made in one watched whole holds
        or is a cut. notify's handler of a new folder there walks it following links
        (as its first walk does), so a folder moved or checked out with a link
        inside had whatever lies behind the link watched until then."""
        shape = self._shape
        touched: set[Path] = set()
        went = False
        grown = [raw_path for kind, raw_path in events if kind == _ADDED] if shape.tree else []
        for kind, raw_path in events if shape.flat else ():
            path = Path(raw_path)
            if path.parent not in shape.flat:
                continue
            if path in shape.flat or path in shape.tree:
                if kind in (_ADDED, _DELETED):
                    touched.add(path)
                    went |= kind == _DELETED
            elif real_dir(path) and (kind == _ADDED or path not in shape.cuts or _readable(path)):
                touched.add(path)  # a refused folder made readable (chmod) tells its parent's watch
        for folder in map(Path, _outermost(grown)):  # (a batch adds thousands of paths: only these are asked)
            if (
                folder.parent not in shape.flat  # (made in a folder watched alone: split above)
                and any(up in shape.tree for up in folder.parents)
                and real_dir(folder)
                # unreadable, notify's handler could not watch it: cut there, as a link is
                and (not _readable(folder) or _holds_cut(folder) and _split(str(folder))[2])
            ):
                touched.add(folder)
                went = True
        return frozenset(touched), went

    # -- the loop ---------------------------------------------------------

    def _main(self) -> None:
        # One finally for every way out: a stop or a failure during the first
        # wait left the watch open and the links folder (:meth:`_alias`) in $TMPDIR.
        try:
            try:
                raw = self._open()
            except _Stop:
                self._post(READY)
                return
            except BaseException as exc:  # noqa: BLE001 - handed to the consumer
                self._post(WatchError(f"could not watch {self._describe_roots()}: {exc}"))
                self._post(READY)
                return
            self._post(READY)
            self._loop(raw)
        except _Stop:
            pass
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer
            self._post(WatchError(f"watching {self._describe_roots()} failed: {exc}"))
        finally:
            if self._batches is not None:
                self._batches.close()
            if self._links is not None:
                shutil.rmtree(self._links, ignore_errors=True)  # the links alone: rmtree never follows one
            self._post(END)

    def _describe_roots(self) -> str:
        return ", ".join(str(r.path) for r in self.roots)

    def _loop(self, raw: Batch) -> None:
        since_ns = self._taken_ns  # what ``raw`` holds happened since
        while True:
            appeared, vanished = self._check_roots(raw)
            self._follow_shape(raw, self._rebuild(raw) if appeared else raw, since_ns)
            change = self._change(raw, appeared, vanished)
            settled_by = time.monotonic() + _SETTLE_MS / 1000
            while change is not None and self._unsettled(change, vanished) and time.monotonic() < settled_by:
                extra = self._wait()
                if not extra:
                    continue  # a wait with no event: the rest of the save may still come
                raw |= extra
                more_appeared, more_vanished = self._check_roots(extra)
                self._follow_shape(raw, self._rebuild(raw) if more_appeared else extra, since_ns)
                appeared += more_appeared
                vanished |= more_vanished
                change = self._change(raw, appeared, vanished)
            if change is not None and len(raw) >= _RESCAN_AT:
                # Events may have been lost: every root is read again whole, while the
                # trigger still names what was seen ("cases re-created" was not true).
                every = self._change(raw, appeared + [r for r in self.roots if not r.missing], vanished)
                change = replace(change, recreated=every.recreated) if every is not None else change
            if change is not None:
                self._post(change)
            for root in appeared:
                root.seen = True
            since_ns = self._taken_ns
            raw = self._wait()

    def _next(self) -> Batch:
        """The next batch of the current ``watch``: empty after ``_WAKE_MS``
        with no event."""
        if self._batches is None:  # no root exists: only wait for one to appear
            if self._stop.wait(_WAKE_MS / 1000):
                raise _Stop
            return set()
        began = time.time_ns()
        try:
            batch = next(self._batches, None)
        except RuntimeError as exc:  # watchfiles' WatchfilesRustInternalError
            if _UNDECODABLE not in str(exc):
                raise
            return self._reopen()
        if batch is None:  # ``watch`` returns once ``stop`` is set
            raise _Stop
        self._took(began)
        return batch

    def _took(self, began_ns: int) -> None:
        """A batch was taken, by a wait that began at ``began_ns``. What the next batch holds happened
        since this one was taken; but the watches of a split root are read in turn, and what one
        caught may have waited a whole wait of another's: then it happened since this wait began."""
        self._taken_ns = began_ns if len(self._watches) > 1 else time.time_ns()

    def _reopen(self) -> Batch:
        """watchfiles cannot name a path that is not UTF-8, even one that was
        only read (it decodes the path before it looks at the kind of event),
        and ends its watch instead. A new one is started, and what the lost
        batch held is found on disk (:meth:`_changed_since`): a file that was
        only read has not changed, so a run that reads one starts no other."""
        since = self._taken_ns
        failed = 0
        while True:  # paced: something may read such a file all along
            if self._stop.wait(_WAKE_MS / 1000):
                raise _Stop
            try:
                began = time.time_ns()
                self._batches = self._watch(self._present)
                batch = next(self._batches, None)
            except FileNotFoundError:  # a root went meanwhile: the next check says so
                self._lost_watch()
                return set()
            except RuntimeError as exc:
                if _UNDECODABLE not in str(exc):
                    raise
                failed += 1
                if failed >= _MAX_REBUILDS_AFTER_ERRORS and not self.force_polling:
                    # A folder of such a name ends every recursive OS watch as it
                    # is built (inotify names each folder it adds): polling names
                    # no folder, and sees what changes all the same.
                    logger.warning("a folder name that is not UTF-8 under %s: polling", self._describe_roots())
                    self.force_polling = True
                continue
            if batch is None:
                raise _Stop
            self._took(began)
            return batch | self._changed_since(since)

    def _changed_since(self, since_ns: int) -> Batch:
        """Every entry under the roots whose data or inode changed (its mtime
        or ctime) since ``since_ns``, as a modification: a folder stands for
        what was added to it or removed from it. A root of single files
        (``recursive`` off) that changed so is taken as re-created, which
        looks at each of its files. File systems stamp times from a clock that
        may lag the one read here by a tick: hence the slack."""
        limit = since_ns - _CLOCK_SLACK_NS
        found: Batch = set()
        for root in self.roots:
            if root.path not in self._present:
                continue
            if not self.recursive:
                if _changed(root.path, limit):
                    root.identity = None
                continue
            _changed_under(root.path, limit, found)
        return found

    def _wait(self) -> Batch:
        """:meth:`_next`, surviving an error of the OS watcher (a watch that
        could not be added...): events may have been lost, and that ``watch``
        has ended. Then every root is taken as re-created, so the next check
        starts a new ``watch`` and reports them re-created (re-scan them)."""
        try:
            batch = self._next()
        except RuntimeError:  # watchfiles' WatchfilesRustInternalError
            self._failures += 1
            if self._failures > _MAX_REBUILDS_AFTER_ERRORS:
                raise
            logger.warning("file watcher error; re-creating it", exc_info=True)
            self._lost_watch()
            return set()
        self._failures = 0
        return batch

    def _lost_watch(self) -> None:
        """The ``watch`` ended on an error: every root is taken as re-created."""
        self._batches = None
        for root in self.roots:
            root.identity = None

    def _change(self, raw: Batch, appeared: list[Root], vanished: frozenset[Path]) -> Change | None:
        paths = set()
        added = set()
        links: dict[Path, Path | None] = {}
        for kind, raw_path in raw:
            found = self._locate(raw_path)
            real = _behind_link(found[1], found[0].path, links) if found is not None else None
            if real is not None:
                # The OS watch names a folder it reaches twice, once through a link (solution/tests a link
                # to tests/, or tests/a to tests/b), by the route it took last: named by where it lies, a
                # save in tests/ is one, not a change behind a link; nowhere watched, none.
                found = self._locate(str(real))
            if found is None or (found[0].missing and found[0].path not in vanished):
                # A root already said gone: its own late events (a loaded machine
                # may deliver them after the check that missed it) add nothing.
                continue
            paths.add(found[1])
            if kind == _ADDED:
                added.add(found[1])
        new = frozenset(root.path for root in appeared if not root.seen)
        return self._make_change(paths, added, [root.path for root in appeared], vanished, new)

    def _locate(self, raw_path: str) -> tuple[Root, Path] | None:
        """The innermost root the event's path lies under, and the path in that
        root's spelling (a root may lie inside another: a link that is a target)."""
        path = Path(raw_path)
        for root in self._innermost_first:
            for form in root.forms:
                if is_under(path, form):
                    return root, root.path / path.relative_to(form)
        return None

    def _unsettled(self, change: Change, vanished: frozenset[Path]) -> bool:
        """Whether the batch looks like the middle of a save that a loaded
        machine paused for more than a step: a file deleted (an atomic save
        between "rename x away" and "write new x"), or a file now empty: just
        created (between open() and write()), or truncated by an editor that
        saves in place (VS Code: truncate, then write). Such a batch is held
        until the rest comes (:data:`_SETTLE_MS` at most) so the save is one Change,
        not two, and no run reads an empty file. Cost: a real deletion or a file
        emptied on purpose is reported up to ``_SETTLE_MS`` later; a normal save,
        nothing."""
        if change.deleted - vanished:
            return True
        return any(_is_empty_file(path) for path in change.paths)

    def _check_roots(self, raw: Batch) -> tuple[list[Root], frozenset[Path]]:
        """Roots that appeared or were replaced (their watch is dead: the OS
        watch follows the old inode, which now lies elsewhere or nowhere), and
        roots that vanished since the last check."""
        # A root's own "deleted" event (rm -rf, or renamed away) kills its
        # watch even when a new folder already stands in its place with the
        # same inode number: file systems reuse freed inodes at once, so the
        # identity check alone would miss "rm -rf ws && mkdir ws".
        dead = {path for kind, path in raw if kind == _DELETED}
        appeared: list[Root] = []
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
