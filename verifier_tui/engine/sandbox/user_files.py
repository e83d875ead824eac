"""In the copy sandbox, notice what a run wrote to the user's own files.

In a copy sandbox nothing stops a verifier from writing outside its scratch
folder (``../../../x``, an absolute path, a link it makes to a user file).
The run is not prevented from doing it there (namespaces are: see
:mod:`.isolation`), but it is caught: the task folder and the user's inputs
(workspace, response, task data) are looked at before and after the run,
one ``lstat`` per entry, and whatever was created, changed or deleted
meanwhile is reported with the result: by the run, or by the user saving
meanwhile, which this look cannot tell apart (``LiveRuns._less_its_own``).

The look is bounded (:data:`LIMIT` entries, the task's own files first, a
big workspace last) so that a re-run does not grow with the workspace; what
lies beyond the limit is not checked.
"""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING

from verifier_tui.engine.record import record

if TYPE_CHECKING:
    from pathlib import Path

    # An entry as looked at: ("d",) for a folder, else ("f", size, mtime,
    # ctime, inode, mode).
    _Sig = tuple[str] | tuple[str, int, int, int, int, int]

LIMIT = 2000
"""Entries looked at before and after a run (about 5 ms each way on the
project's 2-core machine)."""


@record
class Snapshot:
    """What the user's files looked like just before a run."""

    entries: dict[str, _Sig]
    roots: list[str]


def take(roots: list[Path | None]) -> Snapshot:
    """``lstat`` every entry under ``roots`` (files or folders), in order,
    :data:`LIMIT` entries at most."""
    kept = [str(r) for r in roots if r is not None]
    return Snapshot(_look(kept), kept)


def written(before: Snapshot) -> list[str]:
    """The paths created, changed or deleted since ``before`` was taken."""
    after = _look(before.roots)
    out = []
    for path, sig in after.items():
        if before.entries.get(path) != sig and not (sig[0] == "d" and path in before.entries):
            out.append(path)
    if len(before.entries) < LIMIT and len(after) < LIMIT:  # both complete: deletions are real
        out += [p for p in before.entries if p not in after]
    return sorted(set(out))


def _look(roots: list[str]) -> dict[str, _Sig]:
    """Breadth first from each root, one ``lstat`` per file (``scandir``'s)
    and none for a folder (its entry says it is one)."""
    out: dict[str, _Sig] = {}
    for root in roots:
        if len(out) >= LIMIT:
            break
        if root in out:
            continue
        try:
            st = os.lstat(root)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode):
            out[root] = _signature(st)
            continue
        out[root] = ("d",)
        folders = [root]
        while folders and len(out) < LIMIT:
            try:
                with os.scandir(folders.pop(0)) as listing:
                    entries = sorted(listing, key=lambda e: e.name)
            except OSError:
                continue
            for entry in entries:
                if len(out) >= LIMIT:
                    break
                if entry.name == "__pycache__" or entry.path in out:
                    continue
                try:
                    if entry.is_dir(follow_symlinks=False):
                        # a folder's own times change with every entry made
                        # in it: its entries are compared instead
                        out[entry.path] = ("d",)
                        folders.append(entry.path)
                    else:
                        out[entry.path] = _signature(entry.stat(follow_symlinks=False))
                except OSError:
                    continue
    return out


def _signature(st: os.stat_result) -> _Sig:
    return ("f", st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode)
