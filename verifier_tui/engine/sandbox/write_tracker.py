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


def tracker() -> WriteTracker | None:
    """A new tracker, or None where the kernel offers none."""
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
        made = WriteTracker(fd, _libc)
        _OPEN[made] = None
        return made


class WriteTracker:
    """The folders of one mirror, watched for writes."""

    def __init__(self, fd: int, libc: ctypes.CDLL) -> None:
        self.fd = fd
        self._libc = libc
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
        ``own``, the tool's) that is gone, was replaced, or has another name
        still, is taken as one, and so is anything in a folder made or moved
        in (not watched yet, it reports nothing): None, and the copy is walked."""
        with _lock:
            if self.fd < 0:
                return None
            _OPEN[self] = _OPEN.pop(self)  # the most recently used now
        written: set[str] = set()
        made: dict[str, tuple[int, bytes]] = {}  # files made: their folder's watch descriptor, their name
        replaced: set[str] = set()
        while True:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                break
            except OSError:
                self.lost = True
                break
            if not data:
                break
            offset = 0
            while offset < len(data):
                wd, mask, _cookie, size = _HEADER.unpack_from(data, offset)
                name = data[offset + _HEADER.size : offset + _HEADER.size + size].rstrip(b"\0")
                offset += _HEADER.size + size
                if mask & _OVERFLOW:
                    self.lost = True
                    continue
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
                if mask & _ISDIR and mask & (_CREATE | _MOVED_TO):
                    self.lost = True  # a folder no watch saw filled: a hard link made in it is in no event
                elif mask & _CREATE:
                    made[rel] = (wd, name)
                elif mask & (_DELETE | _MOVED_FROM | _MOVED_TO) and rel in made:
                    replaced.add(rel)
        if self.lost or any(rel not in own and (rel in replaced or self._linked(*made[rel])) for rel in made):
            self.lost = False
            return None
        return written

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
