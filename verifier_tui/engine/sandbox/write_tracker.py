"""What a run wrote in a mirror, as the kernel saw it (Linux inotify).

The copy sandbox reuses its private mirror of the workspace from run to run.
A verifier may change that copy, so before the next run the mirror must be
put right. Walking the whole copy for that costs what the workspace costs
(900 ms at 100,000 files); asking the kernel which entries were touched costs
what the run touched. Every folder of the mirror is watched (one inotify
watch each, added as the mirror makes or visits it); :meth:`WriteTracker.take`
returns the paths written since it was last called, or None when that cannot
be told (the event queue overflowed, a folder was moved, a watch could not be
added): the mirror then walks it all, as without a tracker.

Only where ``inotify_init1`` exists (Linux); elsewhere :func:`tracker` gives
None and every re-run walks the mirror.
"""

from __future__ import annotations

import os
import stat
import struct
import threading
from contextlib import suppress
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ctypes
    from collections.abc import Iterator

_MODIFY, _ATTRIB, _CLOSE_WRITE = 0x2, 0x4, 0x8
_MOVED_FROM, _MOVED_TO, _CREATE, _DELETE = 0x40, 0x80, 0x100, 0x200
_DELETE_SELF, _MOVE_SELF, _OVERFLOW, _IGNORED, _ISDIR = 0x400, 0x800, 0x4000, 0x8000, 0x40000000
_ONLYDIR, _DONT_FOLLOW, _EXCL_UNLINK = 0x01000000, 0x02000000, 0x04000000
_MASK = (
    _MODIFY
    | _ATTRIB
    | _CLOSE_WRITE
    | _MOVED_FROM
    | _MOVED_TO
    | _CREATE
    | _DELETE
    | _DELETE_SELF
    | _MOVE_SELF
    | _ONLYDIR
    | _DONT_FOLLOW
    | _EXCL_UNLINK
)
_NONBLOCK, _CLOEXEC = os.O_NONBLOCK, 0o2000000
_HEADER = struct.Struct("iIII")

_libc = None

#: The open trackers, least recently used first. Each holds an inotify
#: instance, and a user has 128 in all (``fs.inotify.max_user_instances``),
#: shared with their editors' and every other program's watchers: a TUI that
#: had run 300 cases held 300 and left the user none. Past ``_MOST``, the least
#: recently used is closed; its mirror walks at its next sync, as without one.
_OPEN: dict[WriteTracker, None] = {}
_MOST = 8
_lock = threading.Lock()  # test's runs sync their mirrors in threads


def tracker(contained: bool) -> WriteTracker | None:
    """A new tracker (see :attr:`WriteTracker.contained`), or None where the kernel offers none."""
    global _libc
    with _lock:
        while len(_OPEN) >= _MOST:
            next(iter(_OPEN))._close()
        try:
            if _libc is None:
                import ctypes

                _libc = ctypes.CDLL(None, use_errno=True)
                _libc.inotify_init1  # noqa: B018 - AttributeError where there is none
            fd = _libc.inotify_init1(_NONBLOCK | _CLOEXEC)
        except (OSError, AttributeError):
            return None
        if fd < 0:
            return None
        made = WriteTracker(fd, _libc, contained)
        _OPEN[made] = None
        return made


class WriteTracker:
    """The folders of one mirror, watched for writes."""

    def __init__(self, fd: int, libc: ctypes.CDLL, contained: bool) -> None:
        self.fd = fd
        self._libc = libc
        self.contained = contained
        """Whether the runs writing the mirror are held to it (the sandbox's view): a
        hard link one made to a file of the copy and no longer has is then looked for
        too, by a walk (:meth:`take`). The copy sandbox runs the verifier on this
        machine, free to write the user's own files (docs/sandbox.md): there only a
        link still in place is looked for, which costs a stat, not a walk of the copy."""
        self.folders: dict[int, str] = {}  # watch descriptor: the folder's path relative to the mirror
        self._where: dict[int, tuple[str, tuple[int, int]]] = {}  # watch descriptor: its path, its (device, inode)
        self.lost = False

    def watch(self, path: str, rel: str) -> None:
        """Watch the folder ``path`` (``rel`` in the mirror: "" for its root)."""
        wd = self._libc.inotify_add_watch(self.fd, os.fsencode(path), _MASK)
        try:
            st = os.stat(path, follow_symlinks=False)
        except OSError:
            wd = -1
        if wd < 0:
            self.lost = True  # e.g. fs.inotify.max_user_watches reached: walk instead
        else:
            self.folders[wd] = rel
            self._where[wd] = (path, (st.st_dev, st.st_ino))

    def take(self, own: frozenset[str] = frozenset()) -> set[str] | None:
        """The mirror's paths written since the last call (folders' own
        changes included), or None when some may have been missed (or the
        tracker was closed to make room for another).

        A file the run made may have been a second name for one of the copy's
        (a hard link): the kernel reports a write through it under that name
        alone, so the file it leads to is in no event. A file made here (but
        ``own``, the tool's) that has another name still is taken as one (asked
        of the file where it is now, renames followed): None, and the copy is
        walked. Where the run is :attr:`contained`, so is one made and gone (what
        it led to cannot be asked), and anything in a folder made or moved in
        (not watched yet, it reports nothing): the walk that finds those is the
        view's alone (its copy is small, COPY_UP_TO_ENTRIES, save under a path
        no overlay can take: overlay_can_take)."""
        with _lock:
            if self.fd < 0:
                return None
            _OPEN[self] = _OPEN.pop(self)  # the most recently used now
        written: set[str] = set()
        made = _Made()
        for wd, mask, cookie, name in self._events():
            folder = self.folders.get(wd)
            if mask & _IGNORED:
                self.folders.pop(wd, None)
                self._where.pop(wd, None)
                continue
            if folder is None:
                continue
            if mask & _MOVE_SELF:
                self.lost = True  # a watched folder now lies elsewhere: its paths are wrong
                continue
            rel = f"{folder}/{os.fsdecode(name)}" if folder and name else (os.fsdecode(name) or folder)
            written.add(rel)
            if rel not in own:
                made.see(rel, wd, mask, cookie, name)
        hidden = self.contained and (made.gone or made.moving)
        if self.lost or hidden or any(self._linked(*where) for where in made.files.values()):
            self.lost = False
            return None
        return written

    def _events(self) -> Iterator[tuple[int, int, int, bytes]]:
        """The events queued (watch descriptor, mask, cookie, name); an overflow
        (or a queue that cannot be read) makes :attr:`lost` true."""
        while True:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return
            except OSError:
                self.lost = True
                return
            if not data:
                return
            offset = 0
            while offset < len(data):
                wd, mask, cookie, size = _HEADER.unpack_from(data, offset)
                name = data[offset + _HEADER.size : offset + _HEADER.size + size].rstrip(b"\0")
                offset += _HEADER.size + size
                if mask & _OVERFLOW:
                    self.lost = True
                else:
                    yield wd, mask, cookie, name

    def _linked(self, wd: int, name: bytes) -> bool:
        """Whether the file ``name`` made in the folder ``wd`` watches may be a second
        name of another (or is gone), looked at in that very folder, never through a link."""
        path, identity = self._where.get(wd, ("", (0, 0)))
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return True
        try:
            here = os.fstat(fd)
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except OSError:
            return True
        finally:
            os.close(fd)
        return (here.st_dev, here.st_ino) != identity or (stat.S_ISREG(st.st_mode) and st.st_nlink > 1)

    def close(self) -> None:
        with _lock:
            self._close()

    def _close(self) -> None:
        _OPEN.pop(self, None)
        if self.fd >= 0:
            with suppress(OSError):
                os.close(self.fd)
            self.fd = -1  # its number may be another file's now: never read again


class _Made:
    """What a run made in the mirror, as far as a hard link it made could hide there."""

    def __init__(self) -> None:
        self.files: dict[str, tuple[int, bytes]] = {}  # files made, where they are: folder's watch, name
        self.moving: set[int] = set()  # the cookies of files made and renamed: where to is a later event's
        self.gone = False  # a file made lost its name (removed, renamed away or over) or a folder was made

    def see(self, rel: str, wd: int, mask: int, cookie: int, name: bytes) -> None:
        if mask & _ISDIR:
            # a folder no watch saw filled: a hard link made in it is in no event
            self.gone = self.gone or bool(mask & (_CREATE | _MOVED_TO))
        elif mask & _CREATE:
            self.files[rel] = (wd, name)
        elif mask & (_DELETE | _MOVED_FROM | _MOVED_TO):
            if self.files.pop(rel, None) is not None:
                if mask & _MOVED_FROM:
                    self.moving.add(cookie)
                else:
                    self.gone = True
            if mask & _MOVED_TO and cookie in self.moving:
                self.moving.discard(cookie)
                self.files[rel] = (wd, name)
