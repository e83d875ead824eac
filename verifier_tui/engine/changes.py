"""What is watched and what changed: the records between the session (which
says what its runs depend on) and the watcher (which reports what changed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from verifier_tui.engine.record import record


@record(frozen=True)
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
    beside: bool = False
    """A folder no run reads, watched for whether Harbor loads the task (a step's folder): a
    folder target inside it keeps a watch of its own, so that it made or removed is said so."""


@record(frozen=True)
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
    created: frozenset[Path] = frozenset()
    """Those of ``recreated`` never there before while watched: said "created", not "re-created"."""
    names: tuple[tuple[Path, str], ...] = ()
    """Short display names ("tests/verifier.py", "response.json") by path."""
    quiet: frozenset[Path] = frozenset()
    """Paths under a watched folder that changed but start no run (caches,
    version-control internals, editors' temporary files: see :mod:`verifier_tui.engine.filters`).
    A change may hold only these: the copy sandbox's mirror follows them all
    (a verifier may read ``.git/``), runs are started by ``paths`` alone."""
    moved: tuple[tuple[Path, str], ...] = ()
    """Folders renamed, each (its old path, its new name): the task's, found
    renamed when it was read again (the watcher sees only its old paths go).
    What went under an old path is that rename, never said as a deletion."""

    def happened(self) -> str:
        """:meth:`describe` with what happened to it: "tests/verifier.py changed",
        "workspace/out.txt deleted" (a stale verdict's reason)."""
        text = self.describe()
        said = self.moved or text.split(" +")[0].endswith((" deleted", " created", " re-created"))
        return text if said else f"{text} changed"

    def describe(self) -> str:
        """A short summary for a run's trigger line: "tests/verifier.py",
        "tests/verifier.py +2 more", "workspace/out.txt deleted". Linear in
        the paths: a burst of thousands of files is described at once."""
        if self.moved:
            # ``mv hello-file hello-world``: the watcher saw cases/, tests/ and task.toml go, which said
            # "cases deleted +2 more" of a task that is all there under its new name.
            rest = sum(1 for path in self.paths if not any(path.is_relative_to(old) for old, _name in self.moved))
            # Short, as watch's column of triggers is (28 characters): the new name is what is seen first.
            return f"task folder → {self.moved[-1][1]}" + (f" +{rest} more" if rest else "")
        if not self.paths:
            return "nothing"
        names = dict(self.names)
        folders = {path.parent for path in self.paths} - self.recreated  # named after what changed in them
        first = min(self.paths, key=lambda p: (p in self.deleted, p in folders, names.get(p, p.name)))
        text = names.get(first, first.name)
        if first in self.recreated:
            text += " created" if first in self.created else " re-created"
        elif first in self.deleted:
            text += " deleted"
        if len(self.paths) > 1:
            text += f" +{len(self.paths) - 1} more"
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
            created=(self.created - later.paths) | later.created,
            names=tuple(sorted(names.items())),
            quiet=self.quiet | later.quiet,
            moved=self.moved + later.moved,
        )

    def without(self, paths: frozenset[Path]) -> Change:
        """This change with ``paths`` left out (quiet ones kept: the mirror follows them)."""
        return Change(
            paths=self.paths - paths,
            deleted=self.deleted - paths,
            recreated=self.recreated - paths,
            created=self.created - paths,
            names=tuple(item for item in self.names if item[0] not in paths),
            quiet=self.quiet,
            moved=self.moved,
        )

    @staticmethod
    def combine(earlier: Change | None, later: Change | None) -> Change | None:
        """Merge two optional changes (None: a request with no file change)."""
        if earlier is None:
            return later
        if later is None:
            return earlier
        return earlier.merge(later)

    def to_json(self) -> dict[str, Any]:
        """For the line the watcher process prints (see :mod:`.child`)."""
        return {
            "paths": sorted(map(str, self.paths)),
            "deleted": sorted(map(str, self.deleted)),
            "recreated": sorted(map(str, self.recreated)),
            "created": sorted(map(str, self.created)),
            "names": [[str(p), n] for p, n in self.names],
            "quiet": sorted(map(str, self.quiet)),
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> Change:
        return Change(
            paths=frozenset(map(Path, data["paths"])),
            deleted=frozenset(map(Path, data["deleted"])),
            recreated=frozenset(map(Path, data["recreated"])),
            created=frozenset(map(Path, data["created"])),
            names=tuple((Path(p), n) for p, n in data["names"]),
            quiet=frozenset(map(Path, data.get("quiet", ()))),
        )
