"""A task's content digest, computed as Harbor computes it, and what can be
known of what changed since a trial ran.

Mirrors Harbor 0.26.0 ``harbor/publisher/packager.py`` (``Packager.collect_files``,
``compute_file_hash``, ``compute_content_hash``), the digest ``lock.json``
records as ``task.digest`` (``harbor/models/job/lock.py``):

- the files: ``task.toml``, ``instruction.md``, ``README.md`` and
  ``trajectory.json`` when they exist, then every file under ``environment/``,
  ``tests/``, ``solution/`` and ``steps/`` (sorted ``iterdir`` walk that does not
  descend into linked folders; a linked file counts, with its target's bytes),
  minus what ``.harborignore`` files exclude (``TaskFileFilter``: only under
  ``tests/``, ``solution/``, ``steps/*/tests/``, ``steps/*/solution/``, and every
  file named ``.harborignore`` anywhere), minus what the task's ``.gitignore``
  ignores (without one: Harbor's ``DEFAULT_IGNORES``; with one, only its own);
- ``sha256`` over ``"<relative path>\\0<sha256 hex of the file>\\n"`` lines in
  path order, written ``sha256:<hex>``.
"""

from __future__ import annotations

import hashlib
import os
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from verifier_tui.engine import untrusted
from verifier_tui.engine.harbor.ignore_rules import IgnoreRules
from verifier_tui.engine.record import field, record

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from datetime import datetime

DEFAULT_IGNORES = ("__pycache__/", "*.pyc", ".DS_Store", "*.swp", "*.swo", "*~")
"""``harbor.publisher.packager.DEFAULT_IGNORES``: used only when the task has no ``.gitignore``."""
SINGLE_FILES = ("task.toml", "instruction.md", "README.md", "trajectory.json")
FOLDERS = ("environment", "tests", "solution", "steps")
HARBORIGNORE = ".harborignore"
_IGNORE_SCOPES = IgnoreRules(["/tests/", "/solution/", "/steps/*/tests/", "/steps/*/solution/"], git_flavour=True)
IGNORE_FILE_LIMIT = untrusted.MB


@record(frozen=True)
class TaskDigest:
    digest: str  # "sha256:<hex>"
    files: tuple[str, ...]  # relative POSIX paths, in the order hashed
    hashes: tuple[str, ...] = ()  # each file's sha256 hex, same order
    problems: tuple[str, ...] = ()  # files Harbor would have failed on


class _HarborIgnore:
    """``TaskFileFilter``: ``.harborignore`` rules inherited down the task's
    test and solution folders."""

    def __init__(self, task_dir: Path) -> None:
        self.task_dir = task_dir
        self._rules: dict[Path, IgnoreRules | None] = {}

    def _in_scope(self, relative: str) -> bool:
        return _IGNORE_SCOPES.ignores(relative)

    def _rules_of(self, folder: Path) -> IgnoreRules | None:
        if folder not in self._rules:
            rel = folder.relative_to(self.task_dir).as_posix()
            rules = None
            if self._in_scope(rel + "/"):
                lines = _lines(folder / HARBORIGNORE)
                rules = IgnoreRules(lines, git_flavour=True)
            self._rules[folder] = rules
        return self._rules[folder]

    def _matches(self, path: Path) -> bool:
        relative = path.relative_to(self.task_dir)
        if relative.name == HARBORIGNORE:
            return True
        suffix = "/" if path.is_dir() else ""
        if not self._in_scope(relative.as_posix() + suffix):
            return False
        specs: list[tuple[Path, IgnoreRules]] = []
        candidate = self.task_dir
        for part in relative.parts:
            rules = self._rules_of(candidate)
            if rules is not None:
                specs.append((candidate, rules))
            candidate = candidate / part
            suffix = "/" if candidate != path or path.is_dir() else ""
            if not self._in_scope(candidate.relative_to(self.task_dir).as_posix() + suffix):
                continue
            excluded = False
            for folder, rules in specs:
                verdict = rules.check(candidate.relative_to(folder).as_posix() + suffix)
                if verdict is not None:
                    excluded = verdict
            if excluded:
                return True
        return False

    def excludes(self, path: Path) -> bool:
        """``TaskFileFilter.is_excluded``: the path, or a link's target inside the task."""
        path = Path(os.path.abspath(path))
        if not path.is_relative_to(self.task_dir):
            return False
        if self._matches(path):
            return True
        # realpath, not resolve: a loop of links is left as it is, where resolve raises (3.11)
        resolved = Path(os.path.realpath(path))
        return resolved != path and resolved.is_relative_to(self.task_dir) and self._matches(resolved)


def collect_files(task_dir: Path) -> list[Path]:
    """``Packager.collect_files``: the task's files that make its digest, in order."""
    task_dir = Path(task_dir).resolve()
    harborignore = _HarborIgnore(task_dir)
    files: list[Path] = [task_dir / name for name in SINGLE_FILES if (task_dir / name).exists()]
    for name in FOLDERS:
        folder = task_dir / name
        if not folder.exists():
            continue
        for relative in _select(folder, harborignore.excludes):
            path = folder / relative
            if path.is_file():
                files.append(path)
    gitignore = task_dir / ".gitignore"
    if gitignore.exists():
        lines = _lines(gitignore)
        ignore = IgnoreRules(lines)
    else:
        ignore = IgnoreRules(DEFAULT_IGNORES)
    files = [f for f in files if not ignore.ignores(f.relative_to(task_dir).as_posix())]
    files.sort(key=lambda p: p.relative_to(task_dir).as_posix())
    return files


def _lines(path: Path) -> list[str]:
    """An ignore file's lines; none when it cannot be read as UTF-8 text."""
    found = untrusted.read_bytes(path, IGNORE_FILE_LIMIT)
    try:
        return found.data.decode("utf-8").splitlines() if found.data is not None else []
    except UnicodeDecodeError:
        return []


def _select(source: Path, excludes: Callable[[Path], bool]) -> list[Path]:
    """``harbor.utils.file_selection.select_files``: entries in sorted order,
    not descending into linked folders, skipping what the filter excludes."""
    source = Path(os.path.abspath(source))
    if not source.is_dir() or excludes(source):
        return []
    kept: list[Path] = []

    def visit(folder: Path) -> None:
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            return
        for path in entries:
            if excludes(path):
                continue
            kept.append(path.relative_to(source))
            if path.is_dir() and not path.is_symlink():
                visit(path)

    visit(source)
    return kept


def file_sha256(path: Path) -> str:
    """``Packager.compute_file_hash``."""
    digest = hashlib.sha256()
    handle, refused = untrusted.open_regular(path)
    if handle is None:
        assert refused is not None
        raise OSError(refused.problem)  # a FIFO would block Harbor's own read for ever
    with handle:
        for chunk in iter(lambda: handle.read(1024 * 1024), b""):
            digest.update(chunk)
    return digest.hexdigest()


_remembered: dict[Path, TaskDigest] = {}
_remembering = 0  # how many digests_remembered() are open (they may close in any order)


@contextmanager
def digests_remembered() -> Iterator[None]:
    """Within it, each task folder's digest is computed once: a job's
    thousands of trials of one task read the task once, not three times per
    trial (the task is taken as it was when first read)."""
    global _remembering
    _remembering += 1
    try:
        yield
    finally:
        _remembering -= 1
        if not _remembering:
            _remembered.clear()


def task_digest(task_dir: Path) -> TaskDigest:
    """``"sha256:" + Packager.compute_content_hash(task_dir)[0]``."""
    task_dir = Path(task_dir).resolve()
    if _remembering:
        if task_dir not in _remembered:
            _remembered[task_dir] = _task_digest(task_dir)
        return _remembered[task_dir]
    return _task_digest(task_dir)


def _task_digest(task_dir: Path) -> TaskDigest:
    outer = hashlib.sha256()
    names: list[str] = []
    hashes: list[str] = []
    problems: list[str] = []
    for path in collect_files(task_dir):
        rel = path.relative_to(task_dir).as_posix()
        try:
            inner = file_sha256(path)
        except OSError as exc:
            problems.append(f"{rel} cannot be read ({exc.strerror or exc}): Harbor would have failed on it")
            continue
        outer.update(f"{rel}\0{inner}\n".encode())
        names.append(rel)
        hashes.append(inner)
    return TaskDigest("sha256:" + outer.hexdigest(), tuple(names), tuple(hashes), tuple(problems))


# --------------------------------------------------------------------------
# What changed since the run.


@record(frozen=True)
class TaskDrift:
    """The local task against ``lock.json``'s digest.

    ``same`` is None when the run's digest is not known (no lock.json).
    When the digests differ, ``modified_since`` names the task's files
    modified after the trial started (by modification time: a copy that kept
    old times, or a deleted file, does not show), and ``tests_changed`` is
    True when any of them is under ``tests/`` (None when nothing says either
    way). Git is never asked: a task found beside a job someone sent holds its
    own ``.git/config``, whose ``core.fsmonitor`` or filters Git would run on
    this machine.
    """

    recorded: str | None
    local: str
    same: bool | None
    modified_since: tuple[str, ...] = ()
    tests_changed: bool | None = None
    problems: tuple[str, ...] = field(default_factory=tuple)
    exact: bool = False  # modified_since compares each file's content with a copy known to be the run's
    all_newer: bool = False  # every file is newer than the trial: the times tell nothing (a copy made since)

    def sentences(self) -> list[str]:
        if self.same is None:
            return ["the run's task digest is not known (no lock.json): whether the task changed since cannot be told"]
        if self.same:
            return []
        out = ["the task changed since the run: its content digest is not the one lock.json recorded"]
        if self.modified_since:
            shown = ", ".join(self.modified_since[:8]) + (" ..." if len(self.modified_since) > 8 else "")
            out.append(
                f"changed since the run: {shown}" if self.exact else f"modified after the trial started: {shown}"
            )
        if self.all_newer:
            out.append(
                "every file of the task is newer than the trial (the task was copied or checked out since, "
                "without its times): which files changed cannot be told from their times"
            )
        if self.tests_changed:
            out.append("tests/ changed: the verifier replayed here is not the one the sandbox ran")
        elif self.tests_changed is False:
            out.append("tests/ did not change, as far as modification times tell")
        elif not self.modified_since and not self.all_newer:
            out.append(
                "which files changed cannot be known (none was modified after the trial started: "
                "a file may have been removed, or copied with its old time)"
            )
        return out


def compare_task(
    task_dir: Path, recorded: str | None, since: datetime | None, baseline: TaskDigest | None = None
) -> TaskDrift:
    """The local task's digest against ``recorded`` (``lock.json`` → ``task.digest``).

    ``baseline``: the same task's digest taken earlier, when it was still the
    recorded one (a trial opened, then its verifier edited): the files that
    changed are then known exactly, by content, whatever their times say."""
    local = task_digest(task_dir)
    if recorded is None:
        return TaskDrift(None, local.digest, None, problems=local.problems)
    if local.digest == recorded:
        return TaskDrift(recorded, local.digest, True, problems=local.problems)
    if baseline is not None and baseline.digest == recorded:
        before = dict(zip(baseline.files, baseline.hashes, strict=True))
        now = dict(zip(local.files, local.hashes, strict=True))
        changed = sorted(name for name in set(before) | set(now) if before.get(name) != now.get(name))
        return TaskDrift(
            recorded,
            local.digest,
            False,
            tuple(changed),
            any(_is_test_path(p) for p in changed),
            local.problems,
            exact=True,
        )
    modified: list[str] = []
    if since is not None:
        limit = since.timestamp()
        for rel in local.files:
            try:
                if os.stat(Path(task_dir) / rel).st_mtime > limit:
                    modified.append(rel)
            except OSError:
                continue
    # A task copied (or checked out) after the run without its times has every
    # file newer than the trial: that names nothing, and says nothing of tests/.
    all_newer = len(local.files) > 1 and len(modified) == len(local.files)
    if all_newer:
        modified = []
    tests_changed = any(_is_test_path(p) for p in modified) if modified else None
    return TaskDrift(
        recorded,
        local.digest,
        False,
        tuple(modified),
        tests_changed,
        local.problems,
        all_newer=all_newer,
    )


def _is_test_path(relative: str) -> bool:
    """Under ``tests/`` or a step's ``steps/<name>/tests/``: what the sandbox had as /tests."""
    parts = relative.split("/")
    return parts[0] == "tests" or (len(parts) > 2 and parts[0] == "steps" and parts[2] == "tests")
