"""What a write into the tool's scratch folder failed with, in words: for
want of room, where the scratch folder is and how to put it elsewhere."""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# What a write to the scratch folder fails with when the file system (or the
# user's share of it, or the file size limit) has no room for it.
NO_ROOM = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


def why(exc: OSError) -> str:
    """Why a write into the scratch folder failed."""
    if exc.errno not in NO_ROOM:
        return str(exc.strerror or exc)
    what = {
        errno.ENOSPC: "no space left on the scratch file system",
        errno.EDQUOT: "the disk quota on the scratch file system is used up",
        errno.EFBIG: "the file is bigger than the scratch file system or the file size limit (ulimit -f) allows",
    }
    return f"{what[exc.errno]} {where()}"


def where() -> str:
    """Where the scratch folder is, and how to put it elsewhere. Python's
    tempfile passes over a TMPDIR it cannot write a file in (not there, not
    a folder, full) for TEMP, TMP, /tmp: said, to a user who set it."""
    # Both absolute: Python keeps a TMPDIR of "." as it is spelled.
    used, asked = os.path.abspath(tempfile.gettempdir()), os.environ.get("TMPDIR")
    passed_over = f": TMPDIR, {asked}, is no folder it can write" if asked and os.path.abspath(asked) != used else ""
    return f"(verifier-tui copies into {used}{passed_over}; set TMPDIR to a folder with more room)"


# As good as full: what failed for want of room may have freed a little on its
# way out (a file it made and removed again), and a few pages take no run far.
NEARLY_FULL_BYTES = 64 << 10
NEARLY_FULL_INODES = 16


def free(folder: Path) -> tuple[int, int] | None:
    """The bytes and inodes left for this user on the file system holding
    ``folder`` (inodes: -1 where it does not count them); None: not known."""
    try:
        st = os.statvfs(folder)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize, st.f_favail if st.f_files > 0 else -1


def filled(before: tuple[int, int] | None, after: tuple[int, int] | None) -> bool:
    """Whether the file system went from ``before`` to next to no room (or
    inodes) left at ``after`` by more than a few pages: what a run itself
    took, never the little a run writes on a scratch that was nearly full."""
    if before is None or after is None:
        return False
    took_bytes = after[0] < NEARLY_FULL_BYTES and before[0] - after[0] >= NEARLY_FULL_BYTES
    took_inodes = 0 <= after[1] < NEARLY_FULL_INODES and before[1] - after[1] >= NEARLY_FULL_INODES
    return took_bytes or took_inodes


def short(left: tuple[int, int] | None) -> bool:
    """Whether ``left`` (:func:`free`'s) is next to no room, or no inodes."""
    return left is not None and (left[0] < NEARLY_FULL_BYTES or 0 <= left[1] < NEARLY_FULL_INODES)


def said(exc: OSError, root: Path | None = None) -> str:
    """An OSError in one line: where (under ``root``: relative to it) and why."""
    if not exc.filename:
        return why(exc)
    path = Path(os.fsdecode(exc.filename))
    if root is not None and path.is_relative_to(root):
        path = path.relative_to(root)
    return f"{path}: {why(exc)}"


@contextmanager
def naming(path: str | Path) -> Iterator[None]:
    """An OSError raised within, naming ``path`` where it names no file: a
    write (or the flush as the file closes) that finds no room says nothing
    of the file it was writing, and the user is left to guess what filled."""
    try:
        yield
    except OSError as exc:
        if exc.filename is not None:
            raise
        raise OSError(exc.errno, exc.strerror, os.fspath(path)) from None
