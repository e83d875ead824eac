"""A private, incrementally updated copy of a folder: how the user's tests
folder and workspace reach the staged sandbox layout.

The user's files are only ever *read*: a mirror is a private copy (never hard
links: a write through a link would change the original). It is updated
incrementally: files whose size and mtime match what was copied last time are
left alone, so a re-run on an unchanged 10k-file workspace costs a walk of
stats, not a copy; with a watcher's changes and the run's own writes known
(engine/sandbox/write_tracker.py), not even that. After each run the mirror is checked
again and anything the verifier changed, added or deleted is repaired on the
next sync. The copying itself is engine/sandbox/file_copy.py's. Links that
lead outside the source, FIFOs, sockets and sparse files are handled so that
copying neither hangs, explodes nor lets the verifier write through to the
user's disk.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
from collections import namedtuple
from pathlib import Path
from typing import TYPE_CHECKING

from verifier_tui.engine.filters import BYTECODE
from verifier_tui.engine.sandbox.file_copy import (
    Copier,
    NotAFile,
    copy_outcome,
    copy_sig,
    source_sig,
    temporary_name,
)
from verifier_tui.engine.untrusted import LOOP, kept_in_copy, not_there_words, real_dir

if TYPE_CHECKING:
    from collections.abc import Callable, Collection

    from verifier_tui.engine.sandbox.file_copy import CopySig, SourceSig
    from verifier_tui.engine.sandbox.write_tracker import WriteTracker


# What we know of one mirrored entry: its kind ("file", "dir", "link"), the
# source's stat when copied and the copy's stat right after, to notice changes
# on either side. A named tuple: one is made per file, and a record's
# __init__ cost 0.25 s over 100,000 files.
_Copied = namedtuple("_Copied", "kind src_sig dst_sig")


TOO_DEEP = "folders nested too deep to copy"
"""Why a copy is not whole past Python's recursion limit: a walk recurses into a folder at a time."""


class Mirror:
    """A private, incrementally updated copy of a folder."""

    def __init__(
        self,
        source: Path,
        target: Path,
        keep: frozenset[str] = frozenset(),
        track: bool = False,
        verbatim_links: bool = False,
        on_a_loop: str = "",
        contained: bool = False,
    ) -> None:
        self.source = source
        self.target = target
        self.verbatim_links = verbatim_links
        """Every link recreated with its own target, as ``docker cp`` or tar
        keeps it, none resolved: where nothing of the user's is reachable
        through one (the sandbox's view, a case kept for it)."""
        self.on_a_loop = on_a_loop  # said after a loop of links is left out: what it means for this folder
        self.keep = keep  # relative paths in the target that belong to the stager, not the source
        self.index: dict[str, _Copied] = {}
        self.notes: list[str] = []
        self.failed: list[tuple[str, OSError]] = []
        """The files the last sync could not copy (relative path, why): the copy is not whole."""
        self.files_copied = 0
        self.track = track
        """Watch the copy for what each run writes (see write_tracker), so a
        re-run repairs only that instead of walking the whole copy."""
        self.contained = contained  # the runs writing the copy are held to it: see WriteTracker.contained
        self._tracker: WriteTracker | None = None
        self._copier: Copier | None = None  # during a walk: its copies, shared with helper processes
        self.walked = False
        """Whether the last sync walked the whole tree (else: only the paths it was given)."""
        self._early: set[str] | None = set()  # what :meth:`untouched` took from the tracker, for the next sync

    def sync(self, changed: set[str] | None = None) -> None:
        """Make the target equal to the source (repairing what a run changed).

        ``changed``: the source's paths (relative, "/"-separated) that may
        have changed since the last sync, as the watcher reported them; None
        when that is not known (no watcher, events lost, the first sync): then
        the whole tree is walked. Either way, what the last run wrote in the
        copy is put right: only that, when the copy is tracked and the
        tracker saw it all, else by the walk."""
        incomplete = bool(self.failed)  # what the last sync could not copy is in no change set: walk for it
        self.notes = []
        self.failed = []
        self.files_copied = 0
        written = self._written() if changed is not None else None
        if changed is None or written is None or not self.index or incomplete:
            self._full_sync()
        else:
            self.walked = False
            try:
                for rel in sorted(changed | written, key=lambda r: r.count("/")):
                    self._sync_rel(rel)
            except RecursionError:
                # The update of what changed recurses a level at a time as the
                # walk does: a folder that became nested this deep since (a
                # depth checked once per workspace, or the copy sandbox) is
                # refused as the walk refuses it; the next sync walks for it.
                self._too_deep()
        if self._tracker is not None:
            self._tracker.take()  # our own writes: not the run's
        self._early = set()

    def untouched(self) -> bool:
        """Whether the copy is as the last sync left it, as its tracker saw (no tracker: not known)."""
        return self._written() == set()

    def unchanged_source(self) -> bool:
        """Whether the source holds just what the last sync copied, by their stats (nothing is written)."""
        return self.source_changes() == set()

    def source_changes(self) -> set[str] | None:
        """The source's paths unlike what the last sync copied, by their stats (a new
        folder's own path alone; nothing is written); None where that is not known."""
        if self.failed:
            return None
        changes: set[str] = set()
        listed: set[str] = set()
        stack = [(str(self.source), "")]
        try:
            while stack:
                folder, prefix = stack.pop()
                with os.scandir(folder) as listing:
                    for entry in listing:
                        rel = prefix + entry.name
                        if entry.name == BYTECODE or rel in self.keep:
                            continue
                        known = self.index.get(rel)
                        st = entry.stat(follow_symlinks=False)
                        if known is None:
                            if not self._left_out_still(entry.path, rel, st):
                                changes.add(rel)
                            continue
                        listed.add(rel)
                        if stat.S_ISDIR(st.st_mode):
                            if known.kind != "dir" or known.src_sig != (stat.S_IMODE(st.st_mode),):
                                changes.add(rel)
                            else:
                                stack.append((entry.path, f"{prefix}{entry.name}/"))
                        elif known.src_sig != source_sig(st):
                            changes.add(rel)
        except OSError:
            return None
        return changes | (self.index.keys() - listed)

    def copy_beside(self, names: set[str]) -> None:
        """Copy the source's files ``names`` (of its top folder) over the copy's,
        each written aside and renamed into place, and nothing else: what a
        held view may do to the copy's folders meanwhile leads no write astray
        (the copy's top folder is a mount point there, never swapped). What
        the tracker saw besides these writes is kept for the next sync."""
        for name in names:
            dst = str(self.target / name)
            self._copy_file(str(self.source / name), dst, name, replace=os.path.lexists(dst))
        own = names | {os.path.basename(temporary_name(str(self.target / name))) for name in names}
        taken = self._tracker.take(frozenset(own)) if self._tracker is not None else None
        self._early = None if taken is None or self._early is None else self._early | (taken - own)

    def watch_also(self, folders: dict[str, Path]) -> None:
        """Watch ``folders`` (relative path: the folder) of the copy that a sync
        leaves to others (``keep``) for writes too; writes so far forgotten."""
        if self._tracker is not None:
            for rel, folder in folders.items():
                if real_dir(folder):
                    self._tracker.watch(str(folder), rel)
            self._tracker.take()
        self._early = set()

    def _left_out_still(self, path: str, rel: str, st: os.stat_result) -> bool:
        """Whether a sync would leave out the entry (not a file, a folder or a link it keeps)."""
        if stat.S_ISLNK(st.st_mode):
            return not self.verbatim_links and self._left_out(Path(path), rel, "") is not None
        return not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode))

    def _written(self) -> set[str] | None:
        """The copy's paths written since the last sync; None where that is not known."""
        taken = self._tracker.take() if self._tracker is not None else None
        self._early = None if taken is None or self._early is None else self._early | taken
        return self._early

    def _full_sync(self) -> None:
        self.walked = True
        if self._tracker is not None:
            self._tracker.close()
            self._tracker = None
        if self.track:
            from verifier_tui.engine.sandbox.write_tracker import tracker

            self._tracker = tracker(self.contained)
        # A verifier may have replaced its workspace (or the tests folder) by a
        # link to another folder: syncing through it would delete and write
        # there. Make it a real folder of ours again first.
        fresh = not os.path.lexists(self.target)
        make_real_dir(self.target)
        seen: set[str] = set()
        copier = self._copier = Copier(self._copied)
        try:
            self._sync_dir(str(self.source), str(self.target), "", seen, fresh)
        except RecursionError:
            # A folder nested past Python's recursion limit (the walk recurses
            # a level at a time): the copy is not whole, which refuses the run.
            copier.abandon()
            self._copier = None
            self._too_deep()
            return
        except BaseException:
            copier.abandon()
            raise
        finally:
            self._copier = None
        copier.finish()
        for rel in [r for r in self.index if r not in seen]:
            del self.index[rel]

    def _too_deep(self) -> None:
        """The copy is not whole (which refuses the run): a folder is nested past
        Python's recursion limit, which a sync recurses into a level at a time."""
        self.failed.append(("", OSError(errno.ELOOP, TOO_DEEP)))

    def _sync_rel(self, rel: str) -> None:
        """Bring one path of the copy up to date (a folder: all of it)."""
        if not rel or rel == ".":
            self._full_sync()
            return
        parts = rel.split("/")
        for depth in range(1, len(parts)):
            ancestor = "/".join(parts[:depth])
            if not (real_dir(self.source / ancestor) and real_dir(self.target / ancestor)):
                self._sync_rel(ancestor)  # made, removed or replaced as a whole: take it whole
                return
        if parts[-1] == BYTECODE or self._kept(rel):
            return
        src, dst = self.source / rel, self.target / rel
        if not os.path.lexists(src):
            if os.path.lexists(dst):
                remove_path(dst)
            self.index.pop(rel, None)
            return
        dentry = _Entry(dst) if os.path.lexists(dst) else None
        self._sync_entry(_Entry(src), str(dst), rel, dentry, set())

    def close(self) -> None:
        if self._tracker is not None:
            self._tracker.close()
            self._tracker = None

    def _kept(self, rel: str) -> bool:
        return rel in self.keep or any(k.startswith(rel + "/") for k in self.keep)

    def _sync_dir(self, src: str, dst: str, prefix: str, seen: set[str], fresh: bool = False) -> None:
        """``fresh``: ``dst`` was just made (empty): nothing in it to look at."""
        if self._tracker is not None:
            self._tracker.watch(dst, prefix.rstrip("/"))
        try:
            with os.scandir(src) as listing:
                src_entries = {e.name: e for e in listing}
        except OSError as exc:
            self.notes.append(f"could not read {src}: {exc.strerror or exc}")
            src_entries = {}
        dst_entries: dict[str, os.DirEntry[str]] = {}
        if not fresh:
            try:
                with os.scandir(dst) as listing:
                    dst_entries = {e.name: e for e in listing}
            except OSError:
                pass
        for name, dentry in dst_entries.items():
            rel = prefix + name
            if self._kept(rel):
                if rel not in self.keep and name not in src_entries and dentry.is_dir(follow_symlinks=False):
                    # there for what the stager keeps in it (the runner's): anything else a run left goes
                    prune(dentry.path, self.keep, rel + "/")
                continue
            if name not in src_entries or name == BYTECODE:
                remove_path(Path(dentry.path))
                self.index.pop(rel, None)
        for name, sentry in src_entries.items():
            if name == BYTECODE:
                continue
            rel = prefix + name
            if rel in self.keep:
                continue
            seen.add(rel)
            self._sync_entry(sentry, f"{dst}/{name}", rel, dst_entries.get(name), seen)

    def _sync_entry(
        self,
        sentry: os.DirEntry[str] | _Entry,
        dst: str,
        rel: str,
        dentry: os.DirEntry[str] | _Entry | None,
        seen: set[str],
    ) -> None:
        known = self.index.get(rel)
        if known is None and dentry is None and sentry.is_file(follow_symlinks=False):
            # Nothing known, nothing there: copied whatever it is like, and the
            # copy's own fstat is this entry's one stat.
            self._copy_file(sentry.path, dst, rel, replace=False)
            return
        try:
            sst = sentry.stat(follow_symlinks=False)
        except OSError as exc:
            self.notes.append(f"skipped {rel}: {exc.strerror or exc}")
            return
        if stat.S_ISLNK(sst.st_mode):
            self._sync_link(Path(sentry.path), Path(dst), rel, sst, known, dentry, seen)
            return
        if stat.S_ISDIR(sst.st_mode):
            fresh = dentry is None or not dentry.is_dir(follow_symlinks=False)
            if fresh:
                if dentry is not None:
                    remove_path(Path(dst))
                os.mkdir(dst)
            try:
                # before syncing into it: the verifier may have made it unreadable or read-only
                os.chmod(dst, stat.S_IMODE(sst.st_mode) | stat.S_IRWXU)
            except OSError:
                pass
            self.index[rel] = _Copied("dir", (stat.S_IMODE(sst.st_mode),), ())  # its mode is copied too
            self._sync_dir(sentry.path, dst, rel + "/", seen, fresh)
            return
        if not stat.S_ISREG(sst.st_mode):
            kind = "a FIFO" if stat.S_ISFIFO(sst.st_mode) else "a socket" if stat.S_ISSOCK(sst.st_mode) else "a device"
            self.notes.append(f"skipped {rel}: it is {kind}, not a file")
            if dentry is not None:
                remove_path(Path(dst))
            return
        if known is not None and known.kind == "file" and known.src_sig == source_sig(sst) and dentry is not None:
            try:
                if copy_sig(dentry.stat(follow_symlinks=False)) == known.dst_sig:
                    return  # unchanged on both sides
            except OSError:
                pass
        self._copy_file(sentry.path, dst, rel, replace=dentry is not None)

    def _copy_file(self, src: str, dst: str, rel: str, replace: bool) -> None:
        """Copy ``src`` to ``dst`` (``replace``: something is there now): by
        the walk's copier when a walk is under way, else on the spot."""
        if replace and real_dir(Path(dst)):
            remove_tree(Path(dst))
            replace = False
        if self._copier is not None:
            self._copier.add(rel, src, dst, replace)
            return
        self._copied(rel, copy_outcome(src, dst, replace))

    def _copied(self, rel: str, outcome: tuple[SourceSig, CopySig] | OSError) -> None:
        """A copy's outcome: the index learns both sides, or the user why not."""
        if isinstance(outcome, OSError):
            self.index.pop(rel, None)
            if isinstance(outcome, NotAFile) or outcome.errno in (errno.ENOENT, errno.ELOOP):
                # gone, or no longer a file, since it was listed: as if listed a moment later
                self.notes.append(f"skipped {rel}: {outcome.strerror or outcome}")
            else:
                self.failed.append((rel, outcome))
            return
        self.files_copied += 1
        self.index[rel] = _Copied("file", *outcome)

    def _sync_link(
        self,
        src: Path,
        dst: Path,
        rel: str,
        sst: os.stat_result,
        known: _Copied | None,
        dentry: os.DirEntry[str] | _Entry | None,
        seen: set[str],
    ) -> None:
        """A link is never read through: kept verbatim (:attr:`verbatim_links`),
        else one inside the source tree is recreated as a link and one that
        leads outside it (or to nothing) is left out with a note, so the copy
        sandbox cannot read or write through it to the user's files. A
        workspace, a trial's captured ``/app`` above all, is someone else's
        writing: its links are theirs."""
        target = os.readlink(src)
        if self.verbatim_links:
            link_to = target
        else:
            why = self._left_out(src, rel, target)
            if why is not None:
                self.notes.append(f"skipped {rel}: {why}")
                if dentry is not None:
                    remove_path(dst)
                seen.discard(rel)
                return
            link_to = os.path.relpath(os.path.realpath(src), os.path.realpath(src.parent))
        if dentry is not None:
            try:
                if os.readlink(dst) == link_to:
                    self.index[rel] = _Copied("link", source_sig(sst), ())
                    return
            except OSError:
                pass
            remove_path(dst)
        os.symlink(link_to, dst)
        self.index[rel] = _Copied("link", source_sig(sst), ())

    def _left_out(self, src: Path, rel: str, target: str) -> str | None:
        """Why the copy sandbox leaves out the link ``src`` (None: it keeps it)."""
        if not os.path.exists(src):  # to nothing, or a loop: nothing is there to keep, inside or out
            why = not_there_words(src, rel)
            if why.endswith(LOOP) and not any(note.endswith(self.on_a_loop) for note in self.notes):
                why += self.on_a_loop  # what a loop means for this folder: once a sync, each link still named
            return why
        if not kept_in_copy(src, self.source):
            return f"it links outside its folder, {self.source.name} ({target})"
        return None


class _Entry:
    """The part of ``os.DirEntry`` a sync uses, for a path looked up alone."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)
        self._st: os.stat_result | None = None

    def stat(self, follow_symlinks: bool = False) -> os.stat_result:
        if self._st is None:
            self._st = os.lstat(self.path)
        return self._st

    def is_dir(self, follow_symlinks: bool = False) -> bool:
        return self._is(stat.S_ISDIR)

    def is_file(self, follow_symlinks: bool = False) -> bool:
        return self._is(stat.S_ISREG)

    def _is(self, kind: Callable[[int], bool]) -> bool:
        try:
            return kind(self.stat().st_mode)
        except OSError:
            return False


def remove_tree(path: Path) -> None:
    """Remove a folder of ours, even one the verifier made unreadable or
    read-only inside (we own it: take the permissions back). Links inside are
    removed as links, never followed, and so is ``path`` itself when a
    verifier put a link (or anything else) in its place."""
    if not real_dir(path):
        try:
            os.unlink(path)
        except OSError:
            pass
        return
    try:
        shutil.rmtree(path, ignore_errors=True)
    except RecursionError:
        # A run may nest folders deeper than Python's recursion limit (any
        # folder it can write is ours to remove): rmtree recurses before Python 3.13.
        pass
    if not os.path.lexists(path):
        return
    _remove_deep(path)


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _own_dir(name: Path | str, mode: int = stat.S_IRWXU, dir_fd: int | None = None) -> int:
    """A descriptor of the folder ``name``, given ``mode`` first. Never through a
    link, even one swapped in since the folder was looked at (code still running
    in a held view can): the mode is set through a descriptor opened without
    following one, and the folder opened from it. (``fchmod`` takes no ``O_PATH``
    descriptor, and an ``O_RDONLY`` one cannot be had of a folder made unreadable.)"""
    if not hasattr(os, "O_PATH"):  # macOS: the copy sandbox alone, no held view; a link's own mode is set
        os.chmod(name, mode, dir_fd=dir_fd, follow_symlinks=False)
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    spot = os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        os.chmod(f"/proc/self/fd/{spot}", mode)
        return os.open(".", _DIR_FLAGS, dir_fd=spot)
    finally:
        os.close(spot)


def _identity(fd: int) -> tuple[int, int]:
    st = os.fstat(fd)
    return st.st_dev, st.st_ino


def _remove_deep(path: Path) -> None:
    """What ``rmtree`` left of ``path``, however deep: one folder open at a
    time (no recursion, no path longer than a name), each made ours again
    before it is entered (a verifier may have made it unreadable); a link is
    removed as a link. What cannot be removed is left, and not tried again."""
    try:
        fd = _own_dir(path)
    except OSError:
        return
    names: list[str] = []  # the folders entered below ``path``, in order
    kept: list[set[str]] = [set()]  # at each depth, what could not be removed
    ids = [_identity(fd)]  # each entered folder's: its ".." must be the one entered from (a held view can move it)
    while True:
        entered = False
        try:
            entries = list(os.scandir(fd))
        except OSError:
            entries = []
        for entry in entries:
            if entry.name in kept[-1]:
                continue
            try:
                if not entry.is_dir(follow_symlinks=False):
                    os.unlink(entry.name, dir_fd=fd)
                    continue
                inner = _own_dir(entry.name, dir_fd=fd)
            except OSError:
                kept[-1].add(entry.name)
                continue
            os.close(fd)
            fd, entered = inner, True
            names.append(entry.name)
            kept.append(set())
            ids.append(_identity(fd))
            break
        if entered:
            continue
        if not names:
            os.close(fd)
            break
        # This folder is as empty as it gets: back to its parent, and remove it there.
        try:
            parent = os.open("..", _DIR_FLAGS, dir_fd=fd)
        except OSError:
            os.close(fd)
            return
        os.close(fd)
        fd = parent
        ids.pop()
        if _identity(fd) != ids[-1]:  # moved elsewhere meanwhile: what is above it now is not ours to empty
            os.close(fd)
            return
        name = names.pop()
        kept.pop()
        try:
            os.rmdir(name, dir_fd=fd)
        except OSError:
            kept[-1].add(name)
    try:
        os.rmdir(path)
    except OSError:
        pass


def prune(folder: Path | str, keep: Collection[str], prefix: str = "", dir_fd: int | None = None) -> None:
    """Remove from the real folder ``folder`` all but ``keep`` (paths below it,
    each after ``prefix``); a folder that holds one of them is pruned in turn.
    Each folder is opened without following a link, and given back to us first
    where a run took our rights to it (``chmod 0``: it could not be listed)."""
    st = os.lstat(folder, dir_fd=dir_fd)
    if not stat.S_ISDIR(st.st_mode):
        raise NotADirectoryError(errno.ENOTDIR, "not a folder", str(folder))
    if st.st_mode & stat.S_IRWXU == stat.S_IRWXU:
        fd = os.open(folder, _DIR_FLAGS, dir_fd=dir_fd)
    else:
        fd = _own_dir(folder, stat.S_IMODE(st.st_mode) | stat.S_IRWXU, dir_fd)
    try:
        with os.scandir(fd) as listing:
            entries = list(listing)
        for entry in entries:
            rel = prefix + entry.name
            if rel in keep:
                continue
            if entry.is_dir(follow_symlinks=False) and any(k.startswith(rel + "/") for k in keep):
                prune(entry.name, keep, rel + "/", fd)
            else:
                remove_name(fd, entry.name)
    finally:
        os.close(fd)


def remove_name(dfd: int, name: str) -> None:
    """Remove ``name`` from the folder ``dfd`` whatever it is (a link as a link)."""
    try:
        st = os.lstat(name, dir_fd=dfd)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        # A folder's tree by a path through the descriptor: a folder above it
        # swapped for a link since (a held view can) leads nowhere else.
        remove_tree(Path(f"/proc/self/fd/{dfd}", name))
    else:
        os.unlink(name, dir_fd=dfd)


def make_real_dir(path: Path) -> None:
    """Make ``path`` a real, writable folder of ours. A link, a file or anything
    else put in its place is removed (a link as a link: what it points to is
    never touched)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        path.mkdir(parents=True)
        return
    if not stat.S_ISDIR(st.st_mode):
        remove_path(path)
        path.mkdir(parents=True)
    elif st.st_mode & stat.S_IRWXU != stat.S_IRWXU:
        os.close(_own_dir(path, stat.S_IMODE(st.st_mode) | stat.S_IRWXU))


def remove_path(path: Path) -> None:
    try:
        if path.is_dir() and not path.is_symlink():
            remove_tree(path)
        else:
            path.unlink()
    except FileNotFoundError:
        pass
    except OSError:
        try:
            parent = _own_dir(path.parent)
        except OSError:
            return
        try:
            os.unlink(path.name, dir_fd=parent)
        except OSError:
            pass
        finally:
            os.close(parent)
