"""What a write into the tool's scratch folder failed with, in words: for
want of room, where the scratch folder is and how to put it elsewhere."""

from __future__ import annotations

import errno
import os
import tempfile
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
    return (
        f"{what[exc.errno]} (verifier-tui copies into {tempfile.gettempdir()}; set TMPDIR to a folder with more room)"
    )


def said(exc: OSError, root: Path | None = None) -> str:
    """An OSError in one line: where (under ``root``: relative to it) and why."""
    if not exc.filename:
        return why(exc)
    path = Path(os.fsdecode(exc.filename))
    if root is not None and path.is_relative_to(root):
        path = path.relative_to(root)
    return f"{path}: {why(exc)}"
