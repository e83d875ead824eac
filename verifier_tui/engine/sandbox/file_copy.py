"""Copying files for the copy sandbox's mirror (engine/sandbox/mirror.py): with the
kernel's help, and on every core.

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

:class:`Copier` spreads a whole tree's copies over the machine's cores. Not
over threads: on tmpfs a copy is a few microseconds of system calls between
Python lines, and two threads handing the GIL to each other copy no faster
than one. So once a walk has more than :data:`HELPER_AFTER` files to copy,
helper processes (this file run as a script, standard library only) take
their share of the copies, sent over a pipe, and answer with the stats the
mirror keeps; the walking process copies its own share meanwhile (two
processes take about half the time one does). A walk with fewer files (the tests folder, a small workspace, a re-run's
changed files) copies them all itself.

Run as ``python -I -S file_copy.py --serve``: read jobs (``src NUL dst NUL
r|n NUL``) on stdin, copy each, write one :data:`_RECORD` per job on stdout.
"""

from __future__ import annotations

import errno
import os
import stat
import struct
import sys

# Not typing's: the helpers run this file as a script (-I -S), and importing
# typing would cost each of them its start-up time for nothing (type
# checkers read a name TYPE_CHECKING as typing's).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

_CHUNK = 1 << 20
#: The copy's own flags: never follow a link put in the source's or the
#: target's place, never block on a FIFO, never leak into the runner.
_READ = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)

#: Files to copy before helper processes are started: below this, starting
#: one (about 15 ms) costs more than it saves.
HELPER_AFTER = 1000
#: Jobs handed over at a time, to a helper or to the walking process itself.
BATCH = 256

_kernel_copy = hasattr(os, "copy_file_range")  # False once a file system refused it outright


class NotAFile(OSError):
    """The source is no longer a regular file (replaced since it was listed)."""


#: :func:`source_sig`'s signature: size, modification time, mode, ctime.
SourceSig = tuple[int, int, int, int]
#: :func:`copy_sig`'s signature: size, modification time, ctime, inode, mode.
CopySig = tuple[int, int, int, int, int]
# The record's widths follow the signatures (typing.get_args would cost the helpers typing's import).
_SOURCE_FIELDS = len(SourceSig.__args__)  # type: ignore[attr-defined]
_COPY_FIELDS = len(CopySig.__args__)  # type: ignore[attr-defined]
#: A helper's answer to one job: the error number (0: copied; -1: not a
#: regular file any more), the source's signature, the copy's signature.
_RECORD = struct.Struct(f"<{1 + _SOURCE_FIELDS + _COPY_FIELDS}q")
_NOT_A_FILE = -1
#: A job for :class:`Copier`: the key its outcome is handed over with, the
#: source, the target, whether the target may be replaced.
_Job = tuple[str, str, str, bool]


def source_sig(st: os.stat_result) -> SourceSig:
    """What says a source file changed: size, modification time, mode, and ctime: a save of the
    same size within the file system's clock tick (a second, on some) leaves the size and time,
    and the copy kept the earlier save; nothing but the kernel sets the ctime."""
    return (st.st_size, st.st_mtime_ns, st.st_mode, st.st_ctime_ns)


def copy_sig(st: os.stat_result) -> CopySig:
    """What says a copy changed. Its ctime too: it changes on any write, chmod
    or rename, so a verifier that puts the size and time back cannot hide a change."""
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode)


def copy_file(src: str, dst: str, replace: bool) -> tuple[SourceSig, CopySig]:
    """Copy the regular file ``src`` to ``dst`` (mode with owner read and
    write added, access and modification times); ``replace``: ``dst`` may
    exist and is replaced whole. Returns the source's :func:`source_sig` and
    the copy's :func:`copy_sig`."""
    fd_in = os.open(src, _READ)
    try:
        sst = os.fstat(fd_in)
        if not stat.S_ISREG(sst.st_mode):
            raise NotAFile(errno.EINVAL, "not a regular file any more", src)
        target = temporary_name(dst) if replace else dst
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


def copy_outcome(src: str, dst: str, replace: bool) -> tuple[SourceSig, CopySig] | OSError:
    """:func:`copy_file`'s signatures, or the error it raised."""
    try:
        return copy_file(src, dst, replace)
    except OSError as exc:
        return exc


def _umask() -> int:
    """The process's umask, read without changing it (``os.umask`` sets it,
    for every thread at once); all bits when it cannot be read (Linux
    before 4.7, macOS): every copy then gets its mode with ``fchmod``, or
    with a mode that has set-id or sticky bits, which ``open`` may drop."""
    global _known_umask
    if _known_umask is None:
        _known_umask = 0o7777
        # Read here, not through engine/procfs.py: the helpers run this file
        # as a script (-I -S), where the package cannot be imported.
        try:
            with open("/proc/self/status", encoding="ascii", errors="replace") as handle:
                for line in handle:
                    if line.startswith("Umask:"):
                        _known_umask = int(line.split()[1], 8) | 0o7000
                        break
        except (OSError, ValueError, IndexError):
            pass
    return _known_umask


_known_umask: int | None = None


def temporary_name(dst: str) -> str:
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


class Copier:
    """Copies handed over with :meth:`add`; :meth:`finish` waits for them all.

    Each copy's outcome goes to ``done(key, (source_sig, copy_sig) or
    OSError)``, always called in the thread that calls :meth:`add` and
    :meth:`finish`, so whoever keeps the results needs no lock."""

    def __init__(self, done: Callable[[str, tuple[SourceSig, CopySig] | OSError], None]) -> None:
        self.done = done
        self._batch: list[_Job] = []
        self._added = 0
        self._helpers: list[_Helper] | None = None  # None: not started (yet); []: none to be had

    def add(self, key: str, src: str, dst: str, replace: bool) -> None:
        self._batch.append((key, src, dst, replace))
        self._added += 1
        if len(self._batch) >= BATCH:
            self._hand_over()

    def finish(self) -> None:
        """Copy what is left, wait for every copy, hand every outcome over."""
        try:
            if self._batch:
                self._copy_here(self._batch)
                self._batch = []
            for helper in self._helpers or []:
                for key, outcome in helper.finish():
                    self.done(key, outcome)
        finally:
            self.abandon()

    def abandon(self) -> None:
        """Stop copying (the walk failed, or was interrupted): helpers are
        ended, outcomes not yet handed over are lost (the copies are found
        again, unknown, at the next walk)."""
        for helper in self._helpers or []:
            helper.stop()
        self._helpers = None
        self._batch = []

    def _hand_over(self) -> None:
        batch, self._batch = self._batch, []
        if self._helpers is None and self._added >= HELPER_AFTER:
            self._helpers = _start_helpers(max(1, min(3, (os.cpu_count() or 1) - 1)))
        # To the helper with the least left to do, unless they all have work
        # queued: then the walking process copies this batch itself. So each
        # process copies as much as it can, whatever else the machine runs
        # (the walk itself is about a fifth of the work).
        idle = min(self._helpers or [], key=_Helper.left, default=None)
        if idle is not None and idle.left() < 2 * BATCH:
            idle.send(batch)
        else:
            self._copy_here(batch)

    def _copy_here(self, batch: list[_Job]) -> None:
        for key, src, dst, replace in batch:
            self.done(key, copy_outcome(src, dst, replace))


def _start_helpers(count: int) -> list[_Helper]:
    helpers = []
    for _ in range(count):
        try:
            helpers.append(_Helper())
        except (OSError, ValueError):  # no interpreter to start (a frozen build...): copy here
            break
    return helpers


class _Helper:
    """One helper process: the jobs sent, in order, and its answers."""

    def __init__(self) -> None:
        import subprocess
        import threading

        self.keys: list[str] = []
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-S", os.path.abspath(__file__), "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self._answers = bytearray()
        # its answers are read as they come, so that neither side ever waits on a full pipe
        self._reader = threading.Thread(target=self._read, name="verifier-tui-copy-answers", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        fd = self.proc.stdout.fileno()  # type: ignore[union-attr]
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                return
            if not chunk:
                return
            self._answers += chunk

    def left(self) -> int:
        """Jobs sent and not answered yet."""
        return len(self.keys) - len(self._answers) // _RECORD.size

    def send(self, batch: list[_Job]) -> None:
        parts = []
        for _key, src, dst, replace in batch:
            parts += [os.fsencode(src), os.fsencode(dst), b"r" if replace else b"n"]
        self.keys += [job[0] for job in batch]
        try:
            self.proc.stdin.write(b"\0".join(parts) + b"\0")  # type: ignore[union-attr]
            self.proc.stdin.flush()  # type: ignore[union-attr]
        except OSError:
            pass  # it ended: its missing answers say so

    def finish(self) -> list[tuple[str, tuple[SourceSig, CopySig] | OSError]]:
        try:
            self.proc.stdin.close()  # type: ignore[union-attr]
        except OSError:
            pass
        self.proc.wait()
        self._reader.join()
        out: list[tuple[str, tuple[SourceSig, CopySig] | OSError]] = []
        answers = list(_RECORD.iter_unpack(bytes(self._answers[: len(self._answers) // _RECORD.size * _RECORD.size])))
        for key, answer in zip(self.keys, answers):  # noqa: B905 - the helper may have answered fewer
            code = answer[0]
            if code == 0:
                out.append((key, (answer[1 : 1 + _SOURCE_FIELDS], answer[1 + _SOURCE_FIELDS :])))
            elif code == _NOT_A_FILE:
                out.append((key, NotAFile(errno.EINVAL, "not a regular file any more")))
            else:
                out.append((key, OSError(code, os.strerror(code))))
        for key in self.keys[len(answers) :]:
            out.append((key, OSError(errno.EIO, "the copying process ended before it")))
        return out

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            try:
                pipe.close()  # type: ignore[union-attr]
            except OSError:
                pass


def _serve() -> None:
    """The helper's side: jobs on stdin, one record per job on stdout."""
    pending = b""
    out = os.fdopen(1, "wb")
    while True:
        chunk = os.read(0, 1 << 16)
        if not chunk:
            break
        fields = (pending + chunk).split(b"\0")
        pending = fields.pop()  # what follows the last NUL: the start of the next field
        whole = len(fields) - len(fields) % 3
        pending = b"\0".join(fields[whole:] + [pending]) if whole < len(fields) else pending
        answers = []
        for at in range(0, whole, 3):
            src, dst, replace = os.fsdecode(fields[at]), os.fsdecode(fields[at + 1]), fields[at + 2] == b"r"
            try:
                src_sig, dst_sig = copy_file(src, dst, replace)
                answers.append(_RECORD.pack(0, *src_sig, *dst_sig))
            except OSError as exc:
                code = _NOT_A_FILE if isinstance(exc, NotAFile) else (exc.errno or errno.EIO)
                answers.append(_RECORD.pack(code, *(0,) * (_SOURCE_FIELDS + _COPY_FIELDS)))
        out.write(b"".join(answers))
        out.flush()


if __name__ == "__main__" and sys.argv[1:] == ["--serve"]:
    _serve()
