"""Copying files for the copy sandbox's mirror (engine/sandbox/mirror.py), with the
kernel's help.

One file is copied by :func:`copy_file`: the source opened without following
a link (and without blocking on a FIFO put in its place), ``fstat`` on that
descriptor (the one ``stat`` of the entry when nothing was known of it), the
bytes moved by ``copy_file_range`` (in the kernel: no trip through Python, and
a clone on copy-on-write file systems such as btrfs and XFS, which is what a
``FICLONE`` would give), the mode and times set on the open descriptor. A
sparse file keeps its holes (its data ranges are copied one by one); a file
system without ``copy_file_range`` gets plain reads and writes. A new file is
made at its own name (``O_EXCL``: never through a link); only where the
target existed does the copy go to a temporary name first and then replace it.

One process copies a whole tree: helper processes taking a share of the
copies were no faster on a two-core machine, and threads gain nothing under
the GIL.
"""

from __future__ import annotations

import errno
import os
import stat

from verifier_tui.engine import procfs

_CHUNK = 1 << 20
#: The copy's own flags: never follow a link put in the source's or the
#: target's place, never block on a FIFO, never leak into the runner.
_READ = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)

_kernel_copy = hasattr(os, "copy_file_range")  # False once a file system refused it outright


class NotAFile(OSError):
    """The source is no longer a regular file (replaced since it was listed)."""


def source_sig(st: os.stat_result) -> tuple:
    """What says a source file changed: size, modification time, mode."""
    return (st.st_size, st.st_mtime_ns, st.st_mode)


def copy_sig(st: os.stat_result) -> tuple:
    """What says a copy changed. Its ctime too: it changes on any write, chmod
    or rename, so a verifier that puts the size and time back cannot hide a change."""
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode)


def copy_file(src: str, dst: str, replace: bool) -> tuple[tuple, tuple]:
    """Copy the regular file ``src`` to ``dst`` (mode with owner read and
    write added, access and modification times); ``replace``: ``dst`` may
    exist and is replaced whole. Returns the source's :func:`source_sig` and
    the copy's :func:`copy_sig`."""
    fd_in = os.open(src, _READ)
    try:
        sst = os.fstat(fd_in)
        if not stat.S_ISREG(sst.st_mode):
            raise NotAFile(errno.EINVAL, "not a regular file any more", src)
        target = _temporary_name(dst) if replace else dst
        mode = stat.S_IMODE(sst.st_mode) | stat.S_IRUSR | stat.S_IWUSR
        # made with its mode when the umask leaves it whole (one system call
        # fewer per file), else given it afterwards
        try:
            fd_out = os.open(target, _CREATE, mode if mode & _umask() == 0 else 0o600)
        except FileExistsError:
            if not replace:
                raise
            # The temporary name is taken: an earlier copy's leftover, or
            # something a verifier put there. It is ours to remove (a link as
            # a link), and O_EXCL still refuses whatever comes back.
            os.unlink(target)
            fd_out = os.open(target, _CREATE, mode if mode & _umask() == 0 else 0o600)
        try:
            try:
                _copy_contents(fd_in, fd_out, sst)
                if mode & _umask() != 0:
                    os.fchmod(fd_out, mode)
                os.utime(fd_out, ns=(sst.st_atime_ns, sst.st_mtime_ns))
                dst_st = os.fstat(fd_out)
            finally:
                os.close(fd_out)
            if replace:
                os.replace(target, dst)
                dst_st = os.lstat(dst)  # a rename changes the moved file's ctime
        except BaseException:
            _unlink_quietly(target)
            raise
    finally:
        os.close(fd_in)
    return source_sig(sst), copy_sig(dst_st)


def _umask() -> int:
    """The process's umask, read without changing it (``os.umask`` sets it,
    for every thread at once); all bits when it cannot be read (Linux
    before 4.7, macOS): every copy then gets its mode with ``fchmod``, or
    with a mode that has set-id or sticky bits, which ``open`` may drop."""
    global _known_umask
    if _known_umask is None:
        try:
            _known_umask = int(procfs.status_field("self", "Umask") or "", 8) | 0o7000
        except ValueError:
            _known_umask = 0o7777
    return _known_umask


_known_umask: int | None = None


def _temporary_name(dst: str) -> str:
    folder, name = os.path.split(dst)
    return os.path.join(folder, f".{name}.vtui-tmp")


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _copy_contents(fd_in: int, fd_out: int, sst: os.stat_result) -> None:
    size = sst.st_size
    if size == 0:
        return
    # A file with far fewer blocks than its size has holes: a 100 GB sparse
    # file must be copied as its data, never read (or written) byte by byte.
    if size > _CHUNK and sst.st_blocks * 512 < size // 2 and hasattr(os, "SEEK_DATA"):
        _copy_sparse(fd_in, fd_out, size)
        return
    # exactly the size seen: a file that changes meanwhile has another size
    # or time than the one recorded, and is copied again at the next sync
    _copy_range(fd_in, fd_out, 0, size)


def _copy_range(fd_in: int, fd_out: int, offset: int, length: int) -> None:
    """Copy ``length`` bytes from ``offset`` of ``fd_in`` to the same offset of ``fd_out``."""
    global _kernel_copy
    end = offset + length
    if _kernel_copy:
        try:
            while offset < end:
                done = os.copy_file_range(fd_in, fd_out, min(_CHUNK * 64, end - offset), offset, offset)
                if done == 0:  # the file got shorter meanwhile
                    return
                offset += done
            return
        except OSError as exc:
            # across file systems (before Linux 5.19 and again since), or a
            # file system without it: the same bytes the slow way, from where it stopped
            if exc.errno not in (errno.EXDEV, errno.ENOSYS, errno.EOPNOTSUPP, errno.EINVAL, errno.ENOTSUP):
                raise
            if exc.errno in (errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):
                _kernel_copy = False
    os.lseek(fd_in, offset, os.SEEK_SET)
    os.lseek(fd_out, offset, os.SEEK_SET)
    while offset < end:
        chunk = os.read(fd_in, min(_CHUNK, end - offset))
        if not chunk:
            return
        while chunk:
            written = os.write(fd_out, chunk)
            chunk = chunk[written:]
            offset += written


def _copy_sparse(fd_in: int, fd_out: int, size: int) -> None:
    offset = 0
    while offset < size:
        try:
            data_at = os.lseek(fd_in, offset, os.SEEK_DATA)
        except OSError as exc:
            if exc.errno == errno.ENXIO:  # only a hole remains
                break
            raise
        hole_at = os.lseek(fd_in, data_at, os.SEEK_HOLE)
        _copy_range(fd_in, fd_out, data_at, hole_at - data_at)
        offset = hole_at
    os.ftruncate(fd_out, size)
