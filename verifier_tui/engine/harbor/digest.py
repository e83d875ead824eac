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
from pathlib import Path
from typing import TYPE_CHECKING

from verifier_tui.engine import untrusted
from verifier_tui.engine.record import field, record
from verifier_tui.engine.task.file_filter import HARBORIGNORE, TaskFileFilter
from verifier_tui.engine.task.harbor_text import GITIGNORE, IGNORE_FILE_LIMIT, read_gitignore, remembered
from verifier_tui.engine.task.ignore_rules import IgnoreRules

if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime

DEFAULT_IGNORES = ("__pycache__/", "*.pyc", ".DS_Store", "*.swp", "*.swo", "*~")
"""``harbor.publisher.packager.DEFAULT_IGNORES``: used only when the task has no ``.gitignore``."""
SINGLE_FILES = ("task.toml", "instruction.md", "README.md", "trajectory.json")
FOLDERS = ("environment", "tests", "solution", "steps")


@record(frozen=True)
class TaskDigest:
    digest: str | None  # "sha256:<hex>"; None: not known here (``unknown`` says why)
    files: tuple[str, ...]  # relative POSIX paths, in the order hashed
    hashes: tuple[str, ...] = ()  # each file's sha256 hex, same order
    problems: tuple[str, ...] = ()  # files Harbor would have failed on
    unknown: str | None = None


def _collected(task_dir: Path) -> tuple[list[Path], str | None]:
    """``Packager.collect_files``: the task's files that make its digest, in order; and why they
    are not the ones Harbor collects, if they may not be: ignore rules past what the tool reads,
    which Harbor reads whole and applies."""
    harborignore = TaskFileFilter(task_dir)
    files: list[Path] = [task_dir / name for name in SINGLE_FILES if (task_dir / name).exists()]
    for name in FOLDERS:
        folder = task_dir / name
        if not folder.exists():
            continue
        try:
            selected = _select(folder, harborignore.excludes)
        except RecursionError:  # Harbor's select_files too: it recurses into each folder, as _select does
            return [], f"its {name}/ nests folders past what Python's recursion limit lets Harbor's walk of it reach"
        files += [folder / relative for relative in selected if (folder / relative).is_file()]
    gitignore = read_gitignore(task_dir)
    # one Harbor cannot read (not UTF-8, a pattern pathspec raises on, a folder, a FIFO, a socket) is a
    # task it refuses, said by task.loading: the digest is still worked out, with what can be read of it
    lines = DEFAULT_IGNORES if gitignore.missing else (gitignore.text or "").splitlines()
    ignore = IgnoreRules(lines)
    files = [f for f in files if not ignore.ignores(f.relative_to(task_dir).as_posix())]
    files.sort(key=lambda p: p.relative_to(task_dir).as_posix())
    big = [GITIGNORE] if gitignore.too_big else []
    big += sorted(f"{folder.relative_to(task_dir).as_posix()}/{HARBORIGNORE}" for folder in harborignore.unknown)
    if not big:
        return files, None
    named, whole = (f"{' and '.join(big)} are", "them") if len(big) > 1 else (f"{big[0]} is", "it")
    limit = f"the {IGNORE_FILE_LIMIT:,} bytes this tool reads"
    return files, f"its {named} larger than {limit} (Harbor reads {whole} whole)"


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


def task_digest(task_dir: Path) -> TaskDigest:
    """``"sha256:" + Packager.compute_content_hash(task_dir)[0]``."""
    task_dir = Path(task_dir).resolve()
    return remembered("digest", task_dir, lambda: _task_digest(task_dir))


def _task_digest(task_dir: Path) -> TaskDigest:
    outer = hashlib.sha256()
    names: list[str] = []
    hashes: list[str] = []
    problems: list[str] = []
    files, unknown = _collected(task_dir)
    if unknown is not None:
        return TaskDigest(None, (), unknown=unknown)
    for path in files:
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
    local: str | None
    same: bool | None
    modified_since: tuple[str, ...] = ()
    tests_changed: bool | None = None
    problems: tuple[str, ...] = field(default_factory=tuple)
    exact: bool = False  # modified_since compares each file's content with a copy known to be the run's
    all_newer: bool = False  # every file is newer than the trial: the times tell nothing (a copy made since)
    unknown: str | None = None  # why the local digest is not known

    def sentences(self) -> list[str]:
        if self.unknown is not None:
            return [f"whether the task changed since the run cannot be told: {self.unknown}"]
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
    if local.digest is None:
        return TaskDrift(recorded, None, None, problems=local.problems, unknown=local.unknown)
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
