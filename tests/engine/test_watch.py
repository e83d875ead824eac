"""Watching with real files: a real Watcher (real watchfiles, real inotify) on
tmp_path, and the RunScheduler it feeds.

Every wait is bounded by a timeout so a broken watcher fails clearly instead of
hanging. No test asserts that something took less than N ms; "nothing else
happened" is checked with a quiet window (QUIET) or, better, with a sentinel
write that must arrive alone.
"""

from __future__ import annotations

import asyncio
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from pathlib import Path

import pytest

from tests.helpers.tasks import make_task
from verifier_tui.engine.changes import Change, WatchTarget
from verifier_tui.engine.filters import INSTALLED_DIRS, NOISE_DIRS, is_noise
from verifier_tui.engine.session import Session
from verifier_tui.engine.watch import channel as channel_module
from verifier_tui.engine.watch import watcher as watcher_module
from verifier_tui.engine.watch.live import LiveRuns
from verifier_tui.engine.watch.scheduler import RunScheduler
from verifier_tui.engine.watch.watcher import Watcher

#: Upper bound for anything that should happen "soon" (a change to arrive).
TIMEOUT = 10.0
#: How long to keep listening to show that no further change arrives: well
#: over the watcher's debounce (300 ms) plus a few steps.
QUIET = 0.6

#: Both ways of watching: from the child process (the default) and from
#: threads of this process (the fallback, and what runs inside the child).
both_modes = pytest.mark.parametrize("isolate", [True, False], ids=["process", "threads"])


class Recorder:
    """Consumes ``watcher.changes()`` in a task and keeps what arrives: the
    changes that start a run in ``changes``; every quiet path (noise under a
    watched folder, which starts none) in ``quiet``."""

    def __init__(self, watcher: Watcher) -> None:
        self.watcher = watcher
        self.changes: list[Change] = []
        self.quiet: set[Path] = set()
        self._taken = 0  # changes already handed out by next(), until() or rest()
        self._arrived = asyncio.Event()
        self.task = asyncio.create_task(self._consume())

    async def _consume(self) -> None:
        try:
            async for change in self.watcher.changes():
                self.quiet |= change.quiet
                if not change.paths:
                    continue  # quiet paths only: LiveRuns starts no run for it
                self.changes.append(change)
                self._arrived.set()
        finally:
            self._arrived.set()  # wake next(): the watcher ended (or failed)

    async def next(self, timeout: float = TIMEOUT) -> Change:
        """The next change not yet taken."""
        taken = self._taken
        while len(self.changes) <= taken:
            if self.task.done():
                self.task.result()  # raises the watcher's error, if any
                raise AssertionError("the watcher stopped before a change arrived")
            self._arrived.clear()
            try:
                await asyncio.wait_for(self._arrived.wait(), timeout)
            except asyncio.TimeoutError:
                raise AssertionError(f"no change arrived within {timeout} s") from None
        self._taken = taken + 1
        return self.changes[taken]

    async def until(self, predicate: Callable[[Change], bool], timeout: float = TIMEOUT) -> Change:
        """Skip changes until one matches (e.g. a root's re-creation)."""

        async def wait() -> Change:
            while True:
                change = await self.next(timeout)
                if predicate(change):
                    return change

        try:
            return await asyncio.wait_for(wait(), timeout)
        except asyncio.TimeoutError:
            raise AssertionError(f"no matching change within {timeout} s: {self.changes}") from None

    async def rest(self, quiet: float = QUIET) -> list[Change]:
        """Whatever else arrives within a quiet window."""
        await asyncio.sleep(quiet)
        taken, self._taken = self._taken, len(self.changes)
        return self.changes[taken:]


@asynccontextmanager
async def watching(targets: list[WatchTarget], **options) -> AsyncIterator[Recorder]:
    watcher = Watcher(targets, **options)
    recorder = Recorder(watcher)
    try:
        await asyncio.wait_for(watcher.ready(), TIMEOUT)
        yield recorder
    finally:
        watcher.stop()
        await asyncio.wait_for(recorder.task, TIMEOUT)


async def wait_until(condition: Callable[[], bool], what: str, timeout: float = TIMEOUT) -> None:
    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.005)

    try:
        await asyncio.wait_for(poll(), timeout)
    except asyncio.TimeoutError:
        raise AssertionError(f"timed out waiting for {what}") from None


def folder(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


# ---------------------------------------------------------------------------
# Filtering rules, without a watcher


@pytest.mark.parametrize(
    "relative",
    [
        "__pycache__/verifier.cpython-311.pyc",
        "helpers/__pycache__/x.pyc",
        "old.pyc",
        ".git/index",
        ".git/objects/ab/cdef",
        ".verifier.py.swp",
        ".verifier.py.swx",
        ".verifier.py.swo",
        "verifier.py~",
        "4913",
        "5036",
        "verifier.py___jb_tmp___",
        "verifier.py___jb_old___",
        ".#verifier.py",
        "#verifier.py#",
        ".pytest_cache/v/cache/lastfailed",
    ],
)
def test_noise_is_recognised(relative: str) -> None:
    assert is_noise(Path(relative).parts)


@pytest.mark.parametrize(
    "relative", ["verifier.py", "helpers/checks.py", "out.txt", "4912", "5000", "data/1234", "swp"]
)
def test_real_files_are_not_noise(relative: str) -> None:
    assert not is_noise(Path(relative).parts)


def test_the_skip_list_is_noise_but_installed_software_is_not() -> None:
    """One list of folders to skip: what no run depends on is noise; a workspace's
    environment is searched for no verifier, but a run may read it, so it is watched."""
    assert all(is_noise((name, "x.py")) for name in NOISE_DIRS)
    assert not any(is_noise((name, "x.py")) for name in INSTALLED_DIRS)


def test_describe_and_merge() -> None:
    a, b, c = Path("/t/tests/a.py"), Path("/t/tests/b.py"), Path("/w/out.txt")
    names = ((a, "tests/a.py"), (b, "tests/b.py"), (c, "workspace/out.txt"))
    one = Change(frozenset({a}), names=names)
    assert one.describe() == "tests/a.py"
    gone = Change(frozenset({c}), deleted=frozenset({c}), names=names)
    assert gone.describe() == "workspace/out.txt deleted"
    three = Change(frozenset({a, b, c}), deleted=frozenset({c}), names=names)
    assert three.describe() == "tests/a.py +2 more"
    # A folder is named after what changed in it (it sorts first by name).
    folder = Change(frozenset({a, a.parent}), names=((a, "tests/a.py"), (a.parent, "tests")))
    assert folder.describe() == "tests/a.py +1 more"
    # A path deleted, then written again, is present in the merge.
    merged = gone.merge(Change(frozenset({c, b}), names=names))
    assert merged.paths == {b, c} and not merged.deleted
    assert Change.combine(None, one) == one and Change.combine(one, None) == one
    assert Change.combine(None, None) is None


def test_engine_watch_does_not_import_textual() -> None:
    code = "import sys, verifier_tui.engine.watch.live; print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---------------------------------------------------------------------------
# The watcher on real files


@both_modes
async def test_one_write_gives_one_change_naming_it(tmp_path: Path, isolate: bool) -> None:
    tests = folder(tmp_path / "tests")
    async with watching([WatchTarget(tests, "tests")], isolate=isolate) as rec:
        (tests / "verifier.py").write_text("def verify(): ...\n")
        change = await rec.next()
        assert change.paths == {tests / "verifier.py"}
        assert not change.deleted
        assert change.describe() == "tests/verifier.py"
        assert await rec.rest() == []


@both_modes
async def test_vim_atomic_save_is_one_change(tmp_path: Path, isolate: bool) -> None:
    tests = folder(tmp_path / "tests")
    target = tests / "verifier.py"
    target.write_text("old\n")
    async with watching([WatchTarget(tests, "tests")], isolate=isolate) as rec:
        # What vim (backupcopy=no, writebackup) does on :w
        probe = tests / "4913"
        probe.write_text("")
        probe.unlink()
        (tests / ".verifier.py.swp").write_bytes(b"swap")
        os.rename(target, tests / "verifier.py~")
        target.write_text("new\n")
        (tests / "verifier.py~").unlink()
        change = await rec.next()
        assert change.paths == {target}
        assert not change.deleted
        assert await rec.rest() == []
        assert target.read_text() == "new\n"


@both_modes
async def test_jetbrains_safe_write_is_one_change(tmp_path: Path, isolate: bool) -> None:
    tests = folder(tmp_path / "tests")
    target = tests / "verifier.py"
    target.write_text("old\n")
    async with watching([WatchTarget(tests, "tests")], isolate=isolate) as rec:
        tmp = tests / "verifier.py___jb_tmp___"
        old = tests / "verifier.py___jb_old___"
        tmp.write_text("new\n")
        os.rename(target, old)
        os.rename(tmp, target)
        old.unlink()
        change = await rec.next()
        assert change.paths == {target}
        assert not change.deleted
        assert change.describe() == "tests/verifier.py"
        assert await rec.rest() == []


@both_modes
async def test_a_rename_over_names_only_the_file_saved(tmp_path: Path, isolate: bool) -> None:
    """``sed -i`` (as VS Code, vim with backupcopy=no, Python's write-then-os.replace) writes a
    temporary file beside the target and renames it over: the temporary file came and went, and
    is no second changed file; a file the user deletes still is one."""
    tests = folder(tmp_path / "tests")
    target = tests / "verifier.py"
    target.write_text("old\n")
    helper = tests / "helper.py"
    helper.write_text("x\n")
    async with watching([WatchTarget(tests, "tests")], isolate=isolate) as rec:
        subprocess.run(["sed", "-i", "s/old/new/", str(target)], check=True)
        change = await rec.next()
        assert change.paths == {target} and not change.deleted
        assert change.describe() == "tests/verifier.py"
        helper.unlink()
        change = await rec.next()
        assert change.paths == change.deleted == {helper}
        assert change.describe() == "tests/helper.py deleted"
        assert await rec.rest() == []
    assert target.read_text() == "new\n"


async def test_a_save_that_truncates_then_writes_is_one_change(tmp_path: Path, monkeypatch) -> None:
    """VS Code, and any editor that saves in place, truncates the file and then
    writes it: with a few milliseconds between the two (a loaded machine, a
    big file), the empty file was a change of its own, and the TUI started a
    run on an empty verifier before the save's run (run #12 never shown, #13
    after it). The empty file is held for the rest of the save, as a file
    just created and still empty is."""
    # The hold lasts until the rest comes, _SETTLE_MS (300 ms) at most: widened here, so that the write lands
    # inside it however loaded the machine. In this process only: a watcher in a child process (isolate)
    # keeps its own (tests/cli/test_headless.py tries that one as it is).
    monkeypatch.setattr(channel_module, "_SETTLE_MS", 2000)
    tests = folder(tmp_path / "tests")
    target = tests / "verifier.py"
    target.write_text("def verify(workspace):\n    return 0.0\n")
    async with watching([WatchTarget(tests, "tests")], isolate=False) as rec:
        with target.open("r+") as handle:
            handle.truncate(0)
            handle.flush()
            await asyncio.sleep(0.5)  # the editor's pause: many steps, well inside the (widened) hold
            assert rec.changes == [], "the emptied file was said as a change of its own"
            handle.write("def verify(workspace):\n    return 1.0\n")
        change = await rec.next()
        assert change.paths == {target} and not change.deleted
        # A loaded machine may still deliver the save's own events after it was said, as a change of
        # the same content: LiveRuns runs nothing for those (test_live_reload.py, test_vim_s_late_...).


@both_modes
async def test_single_file_target_ignores_its_siblings(tmp_path: Path, isolate: bool) -> None:
    case = folder(tmp_path / "cases" / "good")
    response = case / "response.json"
    response.write_text("{}")
    async with watching([WatchTarget(response, "response")], isolate=isolate) as rec:
        (case / "notes.txt").write_text("not watched")
        await asyncio.sleep(0.1)  # let the sibling's batch go by on its own
        # An atomic replace (new inode) is still seen: the parent is watched.
        tmp = case / "response.json.tmp"
        tmp.write_text('{"output": []}')
        os.replace(tmp, response)
        change = await rec.next()
        assert change.paths == {response}
        assert change.describe() == "response.json"
        # And a second save after the inode changed.
        response.write_text('{"output": [1]}')
        assert (await rec.next()).paths == {response}
        assert await rec.rest() == []


async def test_single_file_created_later_is_seen(tmp_path: Path) -> None:
    case = folder(tmp_path / "case")
    task_data = case / "task_data.json"  # does not exist yet
    async with watching([WatchTarget(task_data, "task data")]) as rec:
        task_data.write_text("{}")
        assert (await rec.next()).paths == {task_data}


@both_modes
async def test_root_deleted_and_recreated_is_still_watched(tmp_path: Path, isolate: bool) -> None:
    workspace = folder(tmp_path / "case" / "workspace")
    (workspace / "out.txt").write_text("1")
    async with watching([WatchTarget(workspace, "workspace")], isolate=isolate) as rec:
        shutil.rmtree(workspace)
        workspace.mkdir()
        # The re-creation itself counts as a change (re-scan the folder).
        change = await rec.until(lambda c: workspace in c.recreated)
        assert "workspace re-created" in change.describe()
        (workspace / "new.txt").write_text("2")
        change = await rec.until(lambda c: workspace / "new.txt" in c.paths)
        assert workspace / "new.txt" not in change.deleted


async def test_root_deleted_then_created_later_is_watched_again(tmp_path: Path) -> None:
    workspace = folder(tmp_path / "workspace")
    async with watching([WatchTarget(workspace, "workspace")]) as rec:
        shutil.rmtree(workspace)
        gone = await rec.until(lambda c: workspace in c.deleted)
        assert gone.describe() == "workspace deleted"
        await asyncio.sleep(0.2)  # a while with no workspace at all
        workspace.mkdir()
        back = await rec.until(lambda c: workspace in c.recreated)
        assert back.describe() == "workspace re-created"  # it was there when the watch began
        (workspace / "a.txt").write_text("a")
        await rec.until(lambda c: workspace / "a.txt" in c.paths)


@both_modes
async def test_a_folder_beside_a_watched_file_moved_away_is_one_change(tmp_path: Path, isolate: bool) -> None:
    """``cases/`` beside ``task.toml``: the folder's own watch and the watch on
    the file's parent both see the rename. One change, or ``test --watch``
    ran every case twice for one ``mv``."""
    task = folder(tmp_path / "task")
    cases = folder(task / "cases" / "one")
    (task / "task.toml").write_text("")
    targets = [WatchTarget(task / "task.toml", "task.toml"), WatchTarget(cases.parent, "cases", folder=True)]
    async with watching(targets, isolate=isolate) as rec:
        (task / "cases").rename(task / "elsewhere")
        gone = await rec.until(lambda c: task / "cases" in c.deleted)
        assert gone.describe() == "cases deleted"
        assert await rec.rest() == []


@both_modes
async def test_a_watched_files_folder_moved_away_is_the_file_deleted(tmp_path: Path, isolate: bool) -> None:
    """steps/second/instruction.md watched by itself (Harbor refuses the task without it): `mv steps/second
    steps/away` was no change at all, where the file is gone as surely as by `rm`; its folder back was seen."""
    step = folder(tmp_path / "task" / "steps" / "second")
    instruction = step / "instruction.md"
    instruction.write_text("say hello\n")
    target = WatchTarget(instruction, "steps/second/instruction.md", folder=False)
    async with watching([target], isolate=isolate) as rec:
        step.rename(step.parent / "away")
        gone = await rec.until(lambda c: instruction in c.paths)
        assert instruction in gone.deleted and gone.describe() == "steps/second/instruction.md deleted", gone
        (step.parent / "away").rename(step)
        back = await rec.until(lambda c: instruction in c.paths)
        assert instruction not in back.deleted, back


@both_modes
async def test_missing_root_at_start_is_watched_once_created(tmp_path: Path, isolate: bool) -> None:
    """A folder made for the first time is said as created: "re-created" told of one that never was."""
    workspace = tmp_path / "workspace"
    async with watching([WatchTarget(workspace, "workspace", folder=True)], isolate=isolate) as rec:
        workspace.mkdir()
        made = await rec.until(lambda c: workspace in c.recreated)
        assert made.describe() == "workspace created" and made.happened() == "workspace created"
        (workspace / "a.txt").write_text("a")
        await rec.until(lambda c: workspace / "a.txt" in c.paths)


def make_undecodable(workspace: Path) -> Path:
    """A file named with a byte that is not UTF-8, as the watcher's paths hold it."""
    try:
        os.close(os.open(os.fsencode(workspace) + b"/bad\xff", os.O_CREAT | os.O_WRONLY))
    except OSError:
        pytest.skip("this file system refuses names that are not UTF-8")
    return workspace / os.fsdecode(b"bad\xff")


@both_modes
async def test_a_file_name_that_is_not_utf8_is_a_change_of_that_file(tmp_path: Path, isolate: bool) -> None:
    """watchfiles cannot decode such a name and its watch ends: the watcher
    starts a new one, finds on disk what changed meanwhile (that very file,
    not the whole root re-created) and goes on seeing saves."""
    workspace = folder(tmp_path / "workspace")
    async with watching([WatchTarget(workspace, "workspace")], isolate=isolate) as rec:
        bad = make_undecodable(workspace)
        change = await rec.next()
        assert bad in change.paths
        assert not change.recreated
        (workspace / "after.txt").write_text("x")
        await rec.until(lambda c: workspace / "after.txt" in c.paths)


@both_modes
async def test_reading_a_file_whose_name_is_not_utf8_is_no_change(tmp_path: Path, isolate: bool) -> None:
    """A run that reads such a file (staging copies it, a verifier hashes the
    workspace) ends watchfiles' watch too, as reading reports an event: that
    must start no run, or each run would start the next."""
    workspace = folder(tmp_path / "workspace")
    bad = make_undecodable(workspace)
    async with watching([WatchTarget(workspace, "workspace")], isolate=isolate) as rec:
        for _ in range(3):
            bad.read_bytes()
            await asyncio.sleep(0.1)
        (workspace / "sentinel.txt").write_text("s")
        change = await rec.next()
        assert change.paths == {workspace / "sentinel.txt"}
        assert await rec.rest() == []


@both_modes
async def test_saves_of_a_name_that_is_not_utf8_in_a_row_do_not_end_the_watch(tmp_path: Path, isolate: bool) -> None:
    """Each save ends the watch it reaches, the next one's first wait too:
    past the rebuilds allowed to a failing watch, that was the end of
    ``watch`` (exit 2). Such a name is a change, not a broken watch."""
    workspace = folder(tmp_path / "workspace")
    async with watching([WatchTarget(workspace, "workspace")], isolate=isolate) as rec:
        bad = make_undecodable(workspace)
        for _ in range(40):
            with open(bad, "ab") as handle:
                handle.write(b"x")
            await asyncio.sleep(0.01)
        await rec.rest()  # the last of them seen, and the watch built again
        assert all(bad in change.paths for change in rec.changes)
        (workspace / "after.txt").write_text("x")
        await rec.until(lambda c: workspace / "after.txt" in c.paths)


def undecodable_folder(tmp_path: Path) -> Path:
    """A folder named in bytes that are not UTF-8 (``t\\xffask``), or the test
    skipped where the file system refuses such a name."""
    try:
        return folder(tmp_path / os.fsdecode(b"t\xffask"))
    except OSError:
        pytest.skip("this file system refuses names that are not UTF-8")


def _own_tmpdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A $TMPDIR of the test's own (the watcher's child inherits it), to see what is left there."""
    tmpdir = folder(tmp_path / "tmpdir")
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    monkeypatch.setattr(tempfile, "tempdir", None)
    return tmpdir


@both_modes
async def test_a_root_in_a_folder_whose_name_is_not_utf8_is_watched(
    tmp_path: Path, isolate: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task (or a Harbor job) kept in a folder named so: watchfiles cannot
    take such a path at all, and live reload failed at once ("could not watch
    ...: surrogates not allowed"), on a task's screen and a trial's. The
    folder of links made for it is gone once the watcher stops."""
    tests = folder(undecodable_folder(tmp_path) / "tests")
    tmpdir = _own_tmpdir(tmp_path, monkeypatch)
    async with watching([WatchTarget(tests, "tests")], isolate=isolate) as rec:
        (tests / "verifier.py").write_text("def verify(): ...\n")
        change = await rec.next()
        assert change.paths == {tests / "verifier.py"}
        assert change.describe() == "tests/verifier.py"
        bad = make_undecodable(tests)  # and a name of that kind inside it: polled, through the same alias
        await rec.until(lambda c: bad in c.paths)
        (tests / "after.txt").write_text("x")
        await rec.until(lambda c: tests / "after.txt" in c.paths)
    assert list(tmpdir.glob("verifier-tui-watch-*")) == []


async def test_stopped_in_its_first_wait_a_watch_of_a_root_not_named_in_utf8_leaves_no_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Quitting (or a restart of the watch) while its first wait was still
    going returned before the clean-up: each such stop left a
    verifier-tui-watch-* folder of links in $TMPDIR for good."""
    tests = folder(undecodable_folder(tmp_path) / "tests")
    tmpdir = _own_tmpdir(tmp_path, monkeypatch)
    for _ in range(5):
        watcher = Watcher([WatchTarget(tests, "tests")], isolate=False)
        starting = asyncio.create_task(watcher.start())
        await asyncio.sleep(0)  # the thread is started: its first wait lasts a step at least
        watcher.stop()
        await asyncio.wait_for(starting, TIMEOUT)
        await asyncio.wait_for(watcher.close(), TIMEOUT)
    assert list(tmpdir.glob("verifier-tui-watch-*")) == []


@pytest.mark.parametrize("parent", [".tox", ".git", "__pycache__"])
async def test_workspace_under_a_noisy_folder_name_is_watched(tmp_path: Path, parent: str) -> None:
    workspace = folder(tmp_path / parent / "py311" / "workspace")
    async with watching([WatchTarget(workspace, "workspace")]) as rec:
        (workspace / "out.txt").write_text("x")
        change = await rec.next()
        assert change.paths == {workspace / "out.txt"}
        assert change.describe() == "workspace/out.txt"


# SPLIT_WRITE: nothing but the sentinel follows. Writing a new file is a
# creation and then its content; on a loaded machine the two can land in
# batches further apart than the watcher holds an empty new file for, and
# the sentinel is then reported twice (a user's save would run twice, the
# second time on the whole file). The noise is never reported.
async def test_ignored_scratch_inside_a_root_is_silent(tmp_path: Path) -> None:
    task = folder(tmp_path / "task")
    scratch = folder(task / ".verifier-tui" / "runs")
    async with watching([WatchTarget(task, "task")], ignore=[task / ".verifier-tui"]) as rec:
        (scratch / "reward.txt").write_text("1")
        folder(scratch / "app" / "sub")
        (scratch / "app" / "sub" / "x").write_text("x")
        await asyncio.sleep(0.1)
        (task / "sentinel.txt").write_text("s")
        change = await rec.next()
        assert change.paths == {task / "sentinel.txt"}
        assert all(c.paths == change.paths for c in await rec.rest())  # SPLIT_WRITE


async def test_bytecode_and_editor_noise_is_silent(tmp_path: Path) -> None:
    tests = folder(tmp_path / "tests")
    async with watching([WatchTarget(tests, "tests")]) as rec:
        folder(tests / "__pycache__")
        (tests / "__pycache__" / "verifier.cpython-311.pyc").write_bytes(b"\0")
        (tests / "helpers.pyc").write_bytes(b"\0")
        (tests / ".verifier.py.swp").write_bytes(b"\0")
        (tests / ".#verifier.py").write_text("lock")
        folder(tests / ".git" / "objects")
        (tests / ".git" / "objects" / "x").write_text("x")
        await asyncio.sleep(0.1)
        (tests / "sentinel.py").write_text("s")
        change = await rec.next()
        assert change.paths == {tests / "sentinel.py"}
        assert all(c.paths == change.paths for c in await rec.rest())  # SPLIT_WRITE
        # reported all the same, as quiet: the copy sandbox's mirror follows them. A file
        # made at once inside a new folder may reach inotify only as that folder's
        # creation (the watch on it comes too late); the mirror syncs a folder whole.
        for noise in (
            tests / ".git" / "objects" / "x",
            tests / ".verifier.py.swp",
            tests / ".#verifier.py",
            tests / "helpers.pyc",
        ):
            assert {noise, *noise.parents} & rec.quiet, noise
        assert not rec.quiet & change.paths


async def test_several_targets_label_their_paths(tmp_path: Path) -> None:
    task = folder(tmp_path / "task")
    tests = folder(task / "tests")
    workspace = folder(task / "cases" / "good" / "workspace")
    response = task / "cases" / "good" / "response.json"
    task_toml = task / "task.toml"
    task_toml.write_text("")
    targets = [
        WatchTarget(tests, "tests"),
        WatchTarget(workspace, "workspace"),
        WatchTarget(response, "response"),
        WatchTarget(task_toml, "task.toml"),
    ]
    async with watching(targets) as rec:
        before: set[Path] = set()  # the file the step before changed

        async def changed(path: Path, label: str) -> Change:
            """The change naming ``path``, labelled ``label``. A save is two
            events (the truncation, then the write); on a busy machine the
            second may come in a batch of its own, before this step's change
            or in it: a late event of the step before is let by, nothing else."""
            while path not in (change := await rec.next()).paths:
                assert change.paths <= before, change
            assert change.paths <= {path, *before}, change
            assert change.without(frozenset(before)).describe() == label, change
            before.clear()
            before.add(path)
            return change

        async def saved(path: Path, text: str, label: str) -> None:
            path.write_text(text)
            await changed(path, label)

        await saved(workspace / "out.txt", "x", "workspace/out.txt")
        await saved(task_toml, "[verifier]\n", "task.toml")
        await saved(response, "{}", "response.json")
        (workspace / "out.txt").unlink()
        gone = await changed(workspace / "out.txt", "workspace/out.txt deleted")
        assert gone.deleted == {workspace / "out.txt"}


@both_modes
async def test_stop_ends_changes_and_the_watcher_process(tmp_path: Path, isolate: bool) -> None:
    watcher = Watcher([WatchTarget(folder(tmp_path / "t"), "tests")], isolate=isolate)
    recorder = Recorder(watcher)
    await asyncio.wait_for(watcher.ready(), TIMEOUT)
    watcher.stop()
    await asyncio.wait_for(recorder.task, TIMEOUT)
    assert recorder.changes == []
    child = watcher._proc  # private, but nothing else says the process is gone
    assert (child is not None) == isolate
    assert child is None or child.returncode == 0


@both_modes
async def test_cancelled_twice_the_watcher_still_cleans_up(tmp_path: Path, isolate: bool) -> None:
    """The TUI's watcher runs in a worker, which Textual cancels when the app's
    loop ends and the app's exit cancels again: the second cancellation must
    not cut the clean-up short, or the watcher's process (or threads) outlive
    the event loop, whose pipes then close after it ("Event loop is closed")."""
    watcher = Watcher([WatchTarget(folder(tmp_path / "t"), "tests")], isolate=isolate)
    recorder = Recorder(watcher)
    await asyncio.wait_for(watcher.ready(), TIMEOUT)
    recorder.task.cancel()
    await asyncio.sleep(0)  # the clean-up is under way...
    recorder.task.cancel()  # ...and is cancelled again
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(recorder.task, TIMEOUT)
    child = watcher._proc  # private, but nothing else says the process is gone
    assert child is None or child.returncode == 0
    assert not any(channel.thread.is_alive() for channel in watcher._threads.channels)


async def test_a_watcher_process_that_cannot_start_falls_back_to_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(watcher_module, "_CHILD_CODE", "import sys; sys.exit('no watchfiles here')")
    tests = folder(tmp_path / "tests")
    async with watching([WatchTarget(tests, "tests")]) as rec:
        assert rec.watcher._proc is None
        (tests / "verifier.py").write_text("x")
        assert (await rec.next()).paths == {tests / "verifier.py"}


# ---------------------------------------------------------------------------
# The scheduler, fed by the real watcher


class SlowRuns:
    """A run coroutine that records what it was asked and, for the runs whose
    index is in ``hold``, waits for ``release`` (runs are counted from 0)."""

    def __init__(self, hold: set[int] = frozenset()) -> None:
        self.hold = hold
        self.release = asyncio.Event()
        self.started: list[Change | None] = []
        self.running = asyncio.Event()
        self.cancelled: list[int] = []
        self.finished: list[int] = []

    async def __call__(self, change: Change | None) -> int:
        index = len(self.started)
        self.started.append(change)
        self.running.set()
        if index in self.hold:
            try:
                await self.release.wait()
            except asyncio.CancelledError:
                self.cancelled.append(index)
                raise
        self.finished.append(index)
        return index


async def test_fifty_rapid_saves_give_few_runs_and_the_last_sees_the_end(tmp_path: Path) -> None:
    session = Session(make_task(tmp_path / "t", "v-start\ndef verify(workspace): ..."))
    verifier = session.task.tests_dir / "verifier.py"
    seen: list[str] = []

    async def run(change: Change | None) -> None:
        seen.append(verifier.read_text())
        # A runner's own time (a fresh interpreter importing a verifier): the
        # saves come faster than runs end, which is what must coalesce.
        await asyncio.sleep(0.3)

    def save_fifty_times() -> None:  # an editor, in its own thread
        for i in range(50):
            verifier.write_text(f"v{i}")

    finished: list[None] = []
    live = LiveRuns(
        session,
        lambda trigger, change: run(change),
        on_result=lambda change, result: finished.append(result),
    )
    scheduler = live.scheduler
    glue = asyncio.create_task(live.watch())
    try:
        await asyncio.wait_for(live.watch_ready.wait(), TIMEOUT)
        await asyncio.to_thread(save_fifty_times)
        await wait_until(lambda: seen[-1:] == ["v49"], "a run that saw the final save")
        await asyncio.sleep(QUIET)
        await asyncio.wait_for(scheduler.drain(), TIMEOUT)
    finally:
        live.stop_watching()
        await asyncio.wait_for(glue, TIMEOUT)
        await live.close()
        session.close()
    assert 1 <= len(seen) <= 3, seen
    assert seen[-1] == "v49"
    assert len(finished) == len(seen)


@asynccontextmanager
async def fed(tmp_path: Path, runs, task: Path | None = None, **options):
    """A real task (``task``, else a new one) and session, watched by the
    engine's loop (which requests the first run, for None, as soon as the
    watcher is ready), with ``runs`` as what a run does. Yields (the loop,
    the task's tests folder)."""
    session = Session(task or make_task(tmp_path / "t"))
    live = LiveRuns(session, lambda trigger, change: runs(change), **options)
    glue = asyncio.create_task(live.watch(run_first=True))
    try:
        await asyncio.wait_for(live.watch_ready.wait(), TIMEOUT)
        yield live, session.task.tests_dir
    finally:
        live.stop_watching()
        await asyncio.wait_for(glue, TIMEOUT)
        await live.close()
        session.close()


async def test_the_links_to_a_task_in_a_folder_not_named_in_utf8_are_kept_in_the_sessions_scratch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Made bare in $TMPDIR, the folder of links to such a task stayed there
    for good when the watcher was killed (SIGKILL, the OOM killer) before its
    clean-up; in the session's scratch folder (0700) it goes with it, or with
    the sweep at the next start."""
    try:
        parent = folder(tmp_path / os.fsdecode(b"t\xffask"))
    except OSError:
        pytest.skip("this file system refuses names that are not UTF-8")
    tmpdir = _own_tmpdir(tmp_path, monkeypatch)
    async with fed(tmp_path, SlowRuns(), task=make_task(parent / "t")) as (live, _tests):
        scratch = live.session.scratch_folder()
        assert list(scratch.glob("verifier-tui-watch-*"))  # one per channel of the watcher
        assert list(tmpdir.glob("verifier-tui-watch-*")) == []


async def test_a_change_mid_run_gives_exactly_one_more_run(tmp_path: Path) -> None:
    runs = SlowRuns(hold={0})
    async with fed(tmp_path, runs) as (live, tests):
        scheduler = live.scheduler
        await asyncio.wait_for(runs.running.wait(), TIMEOUT)
        assert runs.started == [None]  # the first run, right after ready
        # Saved in one step (write_text truncates, then writes: on a loaded
        # machine the two may come as two batches, the second after the run
        # below started, which is a third run and rightly so).
        saved = tmp_path / "verifier.py"
        saved.write_text("x")
        os.replace(saved, tests / "verifier.py")
        await wait_until(lambda: scheduler.pending, "the change to be pending")
        assert len(runs.started) == 1
        runs.release.set()
        await asyncio.wait_for(scheduler.drain(), TIMEOUT)
        await asyncio.sleep(QUIET)
        assert len(runs.started) == 2
        assert runs.started[1] is not None and runs.started[1].paths == {tests / "verifier.py"}
        assert runs.finished == [0, 1]
        assert scheduler.latest_result == 1


async def test_five_changes_mid_run_still_give_one_more_run(tmp_path: Path) -> None:
    runs = SlowRuns(hold={0})
    async with fed(tmp_path, runs) as (live, tests):
        scheduler = live.scheduler
        await asyncio.wait_for(runs.running.wait(), TIMEOUT)
        requests: list[Change | None] = []
        ask = scheduler.request

        def request(change: Change | None = None) -> None:  # the loop's requests, counted
            requests.append(change)
            ask(change)

        scheduler.request = request
        files = [tests / f"helper{i}.py" for i in range(5)]
        for i, path in enumerate(files):
            path.write_text("x")
            # Each save its own batch, its own request.
            await wait_until(lambda n=i + 1: len(requests) >= n, f"request for {path.name}")
        assert len(runs.started) == 1 and scheduler.pending
        runs.release.set()
        await asyncio.wait_for(scheduler.drain(), TIMEOUT)
        await asyncio.sleep(QUIET)
        assert len(runs.started) == 2
        assert runs.started[1] is not None and runs.started[1].paths == set(files)
        assert runs.started[1].describe() == "tests/helper0.py +4 more"


async def test_supersede_cancels_the_run_in_flight(tmp_path: Path) -> None:
    runs = SlowRuns(hold={0})  # run 0 would wait forever
    results: list[tuple[Change | None, int]] = []
    async with fed(tmp_path, runs, supersede=True, on_result=lambda c, r: results.append((c, r))) as (live, tests):
        scheduler = live.scheduler
        await asyncio.wait_for(runs.running.wait(), TIMEOUT)
        (tests / "verifier.py").write_text("x")
        await wait_until(lambda: len(runs.started) == 2, "the superseding run")
        await asyncio.wait_for(scheduler.drain(), TIMEOUT)
        assert runs.cancelled == [0]
        assert runs.finished == [1]
        # Only the second run's result was reported.
        assert [r for _, r in results] == [1]
        assert results[0][0] is not None and results[0][0].paths == {tests / "verifier.py"}
        assert scheduler.latest_result == 1


# ---------------------------------------------------------------------------
# The scheduler alone


async def test_errors_go_to_on_error_and_the_scheduler_lives_on() -> None:
    errors: list[BaseException] = []
    calls: list[Change | None] = []

    async def run(change: Change | None) -> str:
        calls.append(change)
        if len(calls) == 1:
            raise ValueError("boom")
        return "ok"

    scheduler = RunScheduler(run, on_error=errors.append)
    scheduler.request(None)
    await asyncio.wait_for(scheduler.drain(), TIMEOUT)
    scheduler.request(None)
    await asyncio.wait_for(scheduler.drain(), TIMEOUT)
    assert [type(e) for e in errors] == [ValueError]
    assert len(calls) == 2
    assert scheduler.latest_result == "ok"


async def test_requests_mid_run_merge_their_paths() -> None:
    runs = SlowRuns(hold={0})
    scheduler = RunScheduler(runs)
    a, b = Path("/x/a"), Path("/x/b")
    scheduler.request(Change(frozenset({a})))
    await asyncio.sleep(0)
    for _ in range(10):
        scheduler.request(Change(frozenset({b}), deleted=frozenset({b})))
    scheduler.request(None)  # a manual "run" mid-run joins the same pending run
    runs.release.set()
    await asyncio.wait_for(scheduler.drain(), TIMEOUT)
    assert len(runs.started) == 2
    assert runs.started[1] == Change(frozenset({b}), deleted=frozenset({b}))


async def test_close_cancels_the_run_and_drops_the_pending_one() -> None:
    runs = SlowRuns(hold={0})
    scheduler = RunScheduler(runs)
    scheduler.request(None)
    await asyncio.wait_for(runs.running.wait(), TIMEOUT)
    scheduler.request(None)
    await asyncio.wait_for(scheduler.close(), TIMEOUT)
    assert runs.cancelled == [0] and runs.finished == []
    assert len(runs.started) == 1
    scheduler.request(None)  # ignored once closed
    await asyncio.sleep(0)
    assert len(runs.started) == 1
    await asyncio.wait_for(scheduler.drain(), TIMEOUT)


# ---------------------------------------------------------------------------
# The loop the faces share: pausing, re-reading the task, new targets


async def test_changes_while_paused_are_held_and_run_once_on_resume(tmp_path: Path) -> None:
    runs = SlowRuns()
    async with fed(tmp_path, runs) as (live, tests):
        await wait_until(lambda: runs.finished == [0], "the first run")
        live.pause()
        (tests / "a.py").write_text("a")
        (tests / "b.py").write_text("b")
        await asyncio.sleep(QUIET)
        assert len(runs.started) == 1  # held while paused
        live.resume()
        await wait_until(lambda: len(runs.finished) == 2, "the held run")
        await asyncio.sleep(QUIET)
        assert len(runs.started) == 2
        assert runs.started[1] is not None and runs.started[1].paths == {tests / "a.py", tests / "b.py"}


async def test_each_run_is_named_by_what_asked_for_it_while_requests_wait(tmp_path: Path) -> None:
    """Keys pressed while a run went on, then while runs were held (an editor
    open, the watcher starting again), named the wrong runs: one slot held the
    latest key's words, the run already waiting took them, and the held one
    was said to run "after start"."""
    triggers: list[str] = []
    finished: list[str] = []
    gate = asyncio.Event()

    async def face(trigger: str, change: Change | None) -> None:
        triggers.append(trigger)
        if len(triggers) == 1:
            await gate.wait()
        finished.append(trigger)

    session = Session(make_task(tmp_path / "t"))
    live = LiveRuns(session, face)
    try:
        live.request("r key")
        await wait_until(lambda: len(triggers) == 1, "the first run")
        live.request("m key")  # waits for the first run
        live.pause()
        live.request("s key")  # held while paused
        gate.set()
        await wait_until(lambda: len(finished) == 2, "the waiting run")
        live.resume()
        await wait_until(lambda: len(finished) == 3, "the held run")
        assert triggers == ["r key", "m key", "s key"]
    finally:
        await live.close()
        session.close()


async def test_a_changed_task_toml_is_read_again_before_the_run(tmp_path: Path) -> None:
    seen: list[float] = []
    session = Session(make_task(tmp_path / "t", timeout=5))
    live = LiveRuns(session, lambda trigger, change: asyncio.sleep(0, seen.append(session.timeout_s)))
    glue = asyncio.create_task(live.watch(run_first=True))
    try:
        await wait_until(lambda: seen == [5.0], "the first run")
        (session.task.root / "task.toml").write_text('version = "1.0"\n[verifier]\ntimeout_sec = 7\n')
        await wait_until(lambda: seen[-1:] == [7.0], "a run after task.toml changed")
    finally:
        live.stop_watching()
        await asyncio.wait_for(glue, TIMEOUT)
        await live.close()
        session.close()


async def test_new_choices_are_watched_at_once(tmp_path: Path) -> None:
    runs = SlowRuns()
    async with fed(tmp_path, runs) as (live, _tests):
        await wait_until(lambda: runs.finished == [0], "the first run")
        workspace = folder(tmp_path / "elsewhere")
        live.session.choose_workspace(workspace)
        live.restart_watch_if_needed()
        await wait_until(
            lambda: (
                live.targets is not None
                and any(t.path == workspace for t in live.targets)
                and live.watch_ready.is_set()
            ),
            "a watcher on the new workspace",
        )
        (workspace / "out.txt").write_text("x")
        await wait_until(lambda: len(runs.started) == 2, "a run for the new workspace's change")
        assert runs.started[1] is not None and runs.started[1].paths == {workspace / "out.txt"}


def _files_to_overflow() -> int:
    """Files whose creation (create, modify, close: three events each) is
    half again what the kernel's inotify queue holds."""
    try:
        queued = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    except (OSError, ValueError):
        queued = 16_384  # Linux's default
    return queued // 2


async def test_an_overflowed_event_queue_reports_the_root_for_a_full_rescan(tmp_path: Path) -> None:
    """The watcher stopped while a burst overflows the kernel's inotify queue (more than
    fs.inotify.max_queued_events), then a file changed last: its event is lost and watchfiles says
    nothing of the overflow. The batch that does arrive is big, and it asks for a re-scan of the
    whole root, so the copy sandbox walks its mirror instead of missing the change."""
    if sys.platform != "linux":
        pytest.skip("the inotify queue is Linux's")
    workspace = folder(tmp_path / "workspace")
    (workspace / "a.txt").write_text("before")
    async with watching([WatchTarget(workspace, "workspace", folder=True)], isolate=True) as rec:
        child = rec.watcher._proc
        assert child is not None, "the watcher runs in its own process here"
        os.kill(child.pid, signal.SIGSTOP)
        try:
            for index in range(_files_to_overflow()):
                (workspace / f"f{index}").write_bytes(b"x")
            (workspace / "a.txt").write_text("after")
        finally:
            os.kill(child.pid, signal.SIGCONT)
        change = await rec.until(lambda c: workspace in c.recreated, timeout=30)
        # Read again whole, and said as what was seen: nothing was re-created.
        assert "re-created" not in change.describe() and change.describe().startswith("workspace/")


def test_the_watcher_process_says_ready_before_any_change(tmp_path: Path) -> None:
    """A file target's channel is ready long before a big tree's is built; a
    change it sees meanwhile must come after the ready line, which the
    watcher takes as the only sign the process started (anything else first
    and it watches from threads instead, with a warning)."""
    tree = folder(tmp_path / "tree")
    for i in range(1000):
        (tree / f"d{i}").mkdir()
    answer = folder(tmp_path / "single") / "answer.txt"
    answer.write_text("0")
    options = {
        "targets": [[str(tree), "tree", True, False], [str(answer), "answer.txt", False, False]],
        "ignore": [],
        "force_polling": False,
    }
    code = watcher_module._CHILD_CODE
    proc = subprocess.Popen(
        [sys.executable, "-I", "-c", code, json.dumps(watcher_module._child_import_path()), json.dumps(options)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    ready = threading.Event()

    def save_until_ready() -> None:  # saves all along while the tree is being watched
        count = 0
        while not ready.wait(0.002):
            count += 1
            answer.write_text(str(count))

    saver = threading.Thread(target=save_until_ready)
    saver.start()
    try:
        assert proc.stdout is not None
        first = json.loads(proc.stdout.readline())
    finally:
        ready.set()
        saver.join()
        proc.kill()
        proc.wait()
    assert first == {"ready": True}


async def test_a_task_that_cannot_be_read_is_said_once_while_it_lasts(tmp_path):
    """A task folder removed comes as several changes, each finding no task:
    said once (watch, test --watch and the TUI print what they are told), and
    again only after the task has read once more."""
    task = make_task(tmp_path / "t")
    session = Session(task)
    said: list[str] = []
    live = LiveRuns(session, lambda trigger, change: asyncio.sleep(0), on_task_error=said.append)
    toml = Change(paths=frozenset({task / "task.toml"}))
    away = tmp_path / "elsewhere" / "t"  # moved out of its folder: gone (renamed beside, it is followed)
    away.parent.mkdir()
    try:
        task.rename(away)
        live.on_change(toml)
        live.on_change(toml)
        assert len(said) == 1 and "the task could not be re-read" in said[0]
        away.rename(task)
        live.on_change(toml)
        shutil.rmtree(task)
        live.on_change(toml)
        assert len(said) == 2 and said[1] == said[0]
    finally:
        live.stop_watching()
        await live.close()
        session.close()


async def test_tasks_jsonl_edited_is_read_again_without_a_run(tmp_path: Path, example) -> None:
    """The rows t offers (and their problems) stayed those of the file as
    the app opened: tasks.jsonl was not watched unless a run read a row.
    A case that reads none runs not; one that reads a row runs, the file gone too."""
    runs = SlowRuns(hold=set())
    async with fed(tmp_path, runs, example("hello-file")) as (live, tests):
        session = live.session
        await wait_until(lambda: runs.finished == [0], "the first run")
        (tests.parent / "tasks.jsonl").write_text('{"task_id": "ada"}\n{"task_id": "newrow"}\n')
        await wait_until(
            lambda: session.task.rows is not None and [r.task_id for r in session.task.rows.rows] == ["ada", "newrow"],
            "the rows read again",
        )
        await asyncio.sleep(QUIET)
        assert len(runs.started) == 1  # no run reads it
    rows = SlowRuns(hold=set())
    task = example("greeting-rows")
    async with fed(tmp_path, rows, task) as (live, _tests):
        await wait_until(lambda: rows.finished == [0], "the first run")
        assert live.session.task_id == "ada"  # its case reads a row
        (task / "tasks.jsonl").unlink()
        await wait_until(lambda: rows.finished == [0, 1], "a run on the file's removal")


async def test_a_late_event_of_a_save_the_last_run_read_leaves_it_fresh(tmp_path: Path) -> None:
    """Live reload off, on a loaded machine: a save's second batch of events
    came after r's run had started on the saved file, and marked that run
    stale. What a run started after is no change to it; a later save is."""
    runs = SlowRuns()
    async with fed(tmp_path, runs) as (live, tests):
        scheduler = live.scheduler
        await asyncio.wait_for(scheduler.drain(), TIMEOUT)
        live.set_live_reload(False)
        verifier = tests / "verifier.py"
        verifier.write_text("def verify(workspace):\n    return 0.5\n")
        await wait_until(lambda: live.stale is not None, "the save held as stale")
        await asyncio.sleep(0.02)  # the save well before the run, as a user presses r after it
        live.request("r key")
        await asyncio.wait_for(scheduler.drain(), TIMEOUT)
        assert live.stale is None
        live._go(Change(frozenset({verifier})))  # the save's late batch, as the watcher judges it
        assert live.stale is None
        verifier.write_text("def verify(workspace):\n    return 0.25\n")
        await wait_until(lambda: live.stale is not None, "a save after the run is stale")


async def test_a_copy_change_in_the_instant_a_run_ends_runs(tmp_path, monkeypatch):
    """In the copy sandbox a change during a run waits for its end. One reported after the run's
    end was judged, but before its task was done (the scheduler still busy), was held for the end
    of a run that had already ended: it ran only after some later run."""
    monkeypatch.setenv("VERIFIER_TUI_SANDBOX", "copy")
    task = make_task(tmp_path / "t")
    saved = Change(paths=frozenset({task / "tests" / "verifier.py"}), names=((task / "tests" / "verifier.py", "v"),))
    triggers: list[str] = []
    with Session(task) as session:

        async def run(trigger: str, change: Change | None) -> None:
            triggers.append(trigger)
            if len(triggers) == 1:  # reported once this run is over, before its task is
                asyncio.get_running_loop().call_soon(live.on_change, saved)

        live = LiveRuns(session, run)
        live.request("start")

        async def second() -> None:
            while len(triggers) < 2:
                await asyncio.sleep(0.01)

        try:
            await asyncio.wait_for(second(), 30)
        finally:
            await live.close()
    assert triggers == ["start", "v"]


async def test_task_toml_deleted_then_written_again_is_read_and_runs(tmp_path: Path) -> None:
    """task.toml removed (``git rm``, a move) and then put back: the watch
    followed task.toml only while it existed, so the file written again ran
    nothing, and the runs after went on with the task as it was without it."""
    # Each run: the timeout it read, and whether a watcher on task.toml was
    # then in place. LiveRuns holds a run while a new watcher is put in place
    # (a task read again may watch other files), so the state seen by a run is
    # the watcher's that follows the change it runs for, never the old one's.
    seen: list[tuple[float, bool]] = []
    session = Session(make_task(tmp_path / "t", timeout=5))
    toml = session.task.root / "task.toml"

    async def run(trigger: str, change: Change | None) -> None:
        watched = [target.path for target in live.targets or []]
        seen.append((session.timeout_s, live.watch_ready.is_set() and toml in watched))

    live = LiveRuns(session, run)
    glue = asyncio.create_task(live.watch(run_first=True))
    try:
        await wait_until(lambda: len(seen) >= 1, "the first run")
        assert seen == [(5.0, True)]
        toml.unlink()
        await wait_until(lambda: len(seen) >= 2, "a run after task.toml was removed")
        assert seen[1][1], f"no watcher on task.toml once it was removed: {seen}"
        toml.write_text('version = "1.0"\n[verifier]\ntimeout_sec = 7\n')
        await wait_until(lambda: seen[-1][0] == 7.0, "a run after task.toml was written again")
    finally:
        live.stop_watching()
        await asyncio.wait_for(glue, TIMEOUT)
        await live.close()
        session.close()


async def test_a_steps_instruction_saved_runs_nothing_made_or_removed_runs(tmp_path: Path) -> None:
    """Harbor's Task asks only that steps/NAME/instruction.md exists (Task._validate_tests): each save
    of the step's prompt read the task again and ran it, for nothing a run reads. Its removal (Harbor
    refuses the task) and its return run; an edit of its text runs nothing."""
    runs = SlowRuns(hold=set())
    task = make_task(tmp_path / "t", toml='version = "1.0"\n\n[[steps]]\nname = "first"\n')
    instruction = task / "steps" / "first" / "instruction.md"
    async with fed(tmp_path, runs, task) as (live, tests):
        await wait_until(lambda: runs.finished == [0], "the first run")
        handled: list[Change] = []
        on_change = live.on_change

        def judged(change: Change) -> None:
            on_change(change)
            handled.append(change)

        live.on_change = judged
        instruction.write_text("Now say hello twice.\n")
        await wait_until(lambda: any(instruction in c.paths for c in handled), "the save seen")
        verifier = tests / "verifier.py"
        verifier.write_text(verifier.read_text() + "\n")
        await wait_until(lambda: any(c and verifier in c.paths for c in runs.started), "the next save's run")
        assert not [c for c in runs.started if c and instruction in c.paths], runs.started
        ran = len(runs.started)
        instruction.unlink()
        await wait_until(lambda: len(runs.started) > ran and runs.started[-1] is not None, "a run on its removal")
        assert live.session.task.config.refused is not None
        instruction.write_text("back\n")
        await wait_until(lambda: live.session.task.config.refused is None and len(runs.started) > ran + 1, "a run")


def _changed(path: Path, name: str, *, deleted: bool = False, made: bool = False) -> Change:
    return Change(
        paths=frozenset({path}),
        deleted=frozenset({path}) if deleted else frozenset(),
        recreated=frozenset({path}) if made else frozenset(),
        names=((path, name),),
    )


def _step_task_watched(tmp_path: Path, *, every_case: bool = False) -> tuple[Path, LiveRuns, list, list]:
    """A one-step task with two cases, its LiveRuns recording what it would run and mark."""
    task = make_task(
        tmp_path / "t",
        toml='version = "1.0"\n\n[[steps]]\nname = "first"\n',
        cases={"c1": {"a.txt": "a"}, "c2": {"a.txt": "a"}},
    )
    session = Session(task)
    session.select_case(session.task.case("c1"))
    outdated: list[int] = []
    asked: list[Change | None] = []
    live = LiveRuns(session, lambda trigger, change: None, on_outdated=lambda: outdated.append(1))
    live.every_case = every_case
    live.request = lambda trigger, change=None: asked.append(change)  # type: ignore[method-assign]
    return task, live, asked, outdated


async def test_a_case_made_as_a_steps_instruction_goes_runs_and_marks_every_case_old(tmp_path: Path) -> None:
    """A checkout that makes a case and removes a step's instruction.md: the watcher posts the
    two apart. The case's change read the task again, finding Harbor refuses it now, and ran
    nothing; the instruction's own change then found the layout as that reading had left it, and
    ran nothing either: every verdict shown still said Harbor loads the task."""
    task, live, asked, outdated = _step_task_watched(tmp_path)
    new = task / "cases" / "new"
    (new / "workspace").mkdir(parents=True)
    instruction = task / "steps" / "first" / "instruction.md"
    instruction.unlink()
    live.on_change(_changed(new, "cases/new", made=True))
    live.on_change(_changed(instruction, "steps/first/instruction.md", deleted=True))
    assert live.session.task.config.refused is not None
    assert asked, "no run said that Harbor refuses the task now"
    assert outdated, "the other cases' marks still said how they went when Harbor loaded the task"


async def test_test_watch_runs_no_round_for_an_instructions_text(tmp_path: Path) -> None:
    """test --watch ran every case again at each save of a step's instruction.md text, which no
    run reads and which leaves Harbor loading the task as before; its removal still runs one."""
    task, live, asked, _outdated = _step_task_watched(tmp_path, every_case=True)
    instruction = task / "steps" / "first" / "instruction.md"
    instruction.write_text("Do it better.\n")
    live.on_change(_changed(instruction, "steps/first/instruction.md"))
    assert asked == []
    instruction.unlink()
    live.on_change(_changed(instruction, "steps/first/instruction.md", deleted=True))
    assert len(asked) == 1


#: The start of a script an ordinary user runs: a watch of the workspace ``sys.argv[1]`` by threads,
#: what it reports gathered in ``seen``, ``until(path)`` waiting (4 s at most) for a change naming it.
WATCHED_BY_A_USER = """
import asyncio, os, sys
from pathlib import Path
from verifier_tui.engine.changes import WatchTarget
from verifier_tui.engine.watch.watcher import Watcher

root = Path(sys.argv[1])
seen = set()

async def until(path):
    for _ in range(400):
        if path in seen:
            return
        await asyncio.sleep(0.01)

async def watched(act):
    watcher = Watcher([WatchTarget(root, "workspace")], isolate=False)

    async def consume():
        async for change in watcher.changes():
            seen.update(change.paths)

    task = asyncio.create_task(consume())
    await asyncio.wait_for(watcher.ready(), 10)
    await act()
    watcher.stop()
    await asyncio.wait_for(task, 10)
"""

SAVES_PAST_A_LOCKED_FOLDER = (
    WATCHED_BY_A_USER
    + """
folders = sorted(p for p in root.rglob("*") if p.is_dir() and not p.is_symlink() and os.access(p, os.R_OK))

async def act():
    for folder in folders:
        saved = folder / "saved.txt"
        saved.write_text("x")
        await until(saved)

asyncio.run(watched(act))
print(sorted(str(p.parent.relative_to(root)) for p in seen if p.name == "saved.txt"))
print(sorted(str(p.relative_to(root)) for p in folders))
"""
)


@pytest.mark.parametrize("behind", [False, True], ids=["in-the-tree", "behind-a-link"])
def test_a_folder_the_user_cannot_read_leaves_no_other_folder_unwatched(ordinary_user, behind):
    """A workspace holding a folder its user cannot read (a root-owned one a
    container left, mode 700), or a link to a folder holding one (an agent's
    ``tmp`` -> /tmp): inotify refuses that folder, and the OS watch's walk,
    which follows links, stopped there, silently, so a save in any folder it
    had not reached yet (after it in the order the folders are listed in) ran
    nothing. Every readable folder is watched."""
    workspace = ordinary_user.root / "workspace"
    outside = ordinary_user.root / "outside"
    (outside / "locked").mkdir(parents=True)
    # made before the folders and after them, so that whatever order the file system lists them in,
    # some come after a link or the locked folder
    for order in ("first", "last"):
        if order == "last":
            for name in ("a", "b", "c", "d", "e", "f", "nested/g", "nested/h", "nested/i/deeper", "nested/z"):
                (workspace / name).mkdir(parents=True)
        for where in (workspace, workspace / "nested"):
            where.mkdir(parents=True, exist_ok=True)
            if behind:
                (where / f"tmp-{order}").symlink_to(outside)
            else:
                (where / f"locked-{order}").mkdir(exist_ok=True)
    ordinary_user.own(ordinary_user.root)
    for locked in (outside / "locked", *workspace.glob("locked-*"), *workspace.glob("nested/locked-*")):
        locked.chmod(0o000)
    done = ordinary_user.run_python(SAVES_PAST_A_LOCKED_FOLDER, workspace, timeout=120)
    assert done.returncode == 0, done.stderr
    seen, folders = (eval(line) for line in done.stdout.splitlines())
    assert not [f for f in folders if "locked" in f or "tmp" in f] and len(folders) == 12, folders
    assert seen == folders


async def test_a_workspace_deeper_than_the_recursion_limit_is_watched(tmp_path: Path) -> None:
    """A workspace of folders nested 1,100 deep: the walk that looks for folders
    inotify refuses recursed once a level and passed Python's recursion limit,
    and every watch ended at once ("could not watch ...: maximum recursion
    depth exceeded"). It is watched, and a save at its bottom is seen."""
    bottom = tmp_path / "workspace"
    bottom.mkdir()
    for _ in range(1100):  # one level at a time: mkdir(parents=True) recurses too
        bottom = bottom / "d"
        bottom.mkdir()
    try:
        async with watching([WatchTarget(tmp_path / "workspace", "workspace")], isolate=False) as rec:
            (bottom / "saved.txt").write_text("x")
            change = await rec.next()
            assert change.paths == {bottom / "saved.txt"}
    finally:  # level by level: pytest's own removal of old temporary folders recurses once a level
        (bottom / "saved.txt").unlink(missing_ok=True)
        while bottom != tmp_path:
            bottom.rmdir()
            bottom = bottom.parent


def inotify_watches(pid: int) -> int:
    """How many inotify watches process ``pid`` holds: one ``inotify wd:`` line per watch in its fds' fdinfo."""
    held = 0
    for fdinfo in Path(f"/proc/{pid}/fdinfo").iterdir():
        with suppress(OSError):
            held += fdinfo.read_text().count("inotify wd:")
    return held


async def test_a_link_to_a_big_folder_outside_is_not_walked_by_the_watch(tmp_path: Path) -> None:
    """A workspace holding a link to a folder elsewhere (an agent's ``root`` -> /, a pnpm
    ``node_modules``): the OS watch followed it and walked and watched everything behind it, for
    minutes on a big machine, to the inotify watch limit. Only the workspace's own folders are
    watched now, and a save anywhere in them is still seen."""
    outside = tmp_path / "outside"
    for n in range(300):
        (outside / f"d{n}" / "deeper").mkdir(parents=True)
    workspace = tmp_path / "workspace"
    own = [folder(workspace / name) for name in ("a", "a/b", "c", "with/links/inside", "with/beside")]
    (workspace / "root").symlink_to(outside)
    (workspace / "with" / "links" / "inside" / "there").symlink_to(outside)
    async with watching([WatchTarget(workspace, "workspace")]) as rec:
        assert rec.watcher._proc is not None
        held = inotify_watches(rec.watcher._proc.pid)
        # the workspace and its 7 folders, a few times over at most; behind the links, 600 folders
        assert held <= 3 * 8, held
        for where in (workspace, *own):
            (where / "saved.txt").write_text("x")
            await rec.until(lambda change, saved=where / "saved.txt": saved in change.paths)


def _made_in_one_go(workspace: Path, outside: Path, how: str) -> list[Path]:
    """Changes the folders on the way to a link (watched alone) in one of the ways a user or a tool
    does; what it wrote in the folders it made, before any watch of them could exist."""
    if how == "mkdir":
        (workspace / "new" / "deep").mkdir(parents=True)
        return [_write(workspace / "new" / "deep" / "early.txt"), _write(workspace / "new" / "early.txt")]
    if how == "mv-in":
        made = outside.parent / "made"
        (made / "sub").mkdir(parents=True)
        (made / "sub" / "old.txt").write_text("x")
        made.rename(workspace / "with" / "links" / "moved")
        return [_write(workspace / "with" / "links" / "moved" / "sub" / "early.txt")]
    if how == "checkout":  # many folders and files at once, as git checkout writes them
        return [_write(workspace / f"pkg{n}" / "mod" / "early.py") for n in range(30)]
    if how == "folder-again":  # a folder removed and made again under its name, between two looks
        shutil.rmtree(workspace / "a")
        return [_write(workspace / "a" / "b" / "early.txt")]
    if how == "link-to-folder":
        (workspace / "root").unlink()
        return [_write(workspace / "root" / "early.txt")]
    if how == "mv-out":  # its watch would follow it out, naming what changes there as the workspace's
        (workspace / "c" / "behind-kept.txt").write_text("x")
        (workspace / "c").rename(outside.parent / "away")
        return []
    if how == "folder-to-link":
        shutil.rmtree(workspace / "c")
        (workspace / "c").symlink_to(outside)
        return []
    assert how == "root-again"
    shutil.rmtree(workspace)
    _linked_workspace(workspace, outside)
    return [_write(workspace / "a" / "b" / "early.txt")]


def _reported(rec: Recorder, path: Path) -> bool:
    """Whether a change named ``path``, or said a folder holding it made again (read again whole)."""
    return any(path in change.paths or any(path.is_relative_to(p) for p in change.recreated) for change in rec.changes)


def _write(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("early")
    return path


def _linked_workspace(workspace: Path, outside: Path) -> list[Path]:
    own = [folder(workspace / name) for name in ("a", "a/b", "c", "with/links/inside", "with/beside")]
    (workspace / "root").symlink_to(outside)
    (workspace / "with" / "links" / "there").symlink_to(outside)
    return own


@pytest.mark.parametrize(
    "how", ["mkdir", "mv-in", "checkout", "folder-again", "mv-out", "link-to-folder", "folder-to-link", "root-again"]
)
async def test_no_save_is_lost_as_the_folders_on_the_way_to_a_link_change(tmp_path: Path, how: str) -> None:
    """The folders on the way to a link are watched alone (what is beside them, whole) so that the OS
    watch never walks behind the link. A folder made in one of them (mkdir, mv, a checkout), a link
    made a folder or a folder made a link, the workspace made again: a save made in a new folder
    before its watch could exist is reported, every later save is, and nothing behind a link is
    watched."""
    outside = tmp_path / "outside"
    for n in range(100):
        (outside / f"d{n}").mkdir(parents=True)
    workspace = tmp_path / "workspace"
    _linked_workspace(workspace, outside)
    async with watching([WatchTarget(workspace, "workspace")]) as rec:
        assert rec.watcher._proc is not None
        early = _made_in_one_go(workspace, outside, how)
        await wait_until(lambda: all(_reported(rec, saved) for saved in early), f"{early} reported")
        later = [path.parent / "later.txt" for path in early] or [workspace / "a" / "later.txt"]
        for saved in [*later, workspace / "a" / "b" / "later.txt", workspace / "with" / "later.txt"]:
            saved.write_text("later")
            await rec.until(lambda change, saved=saved: saved in change.paths)
        seen = len(rec.changes)
        for away in (outside / "d1", outside.parent / "away"):
            if away.is_dir():
                (away / "behind.txt").write_text("x")
                if (away / "behind-kept.txt").exists():
                    (away / "behind-kept.txt").write_text("changed")
        (workspace / "with" / "beside" / "after.txt").write_text("x")
        await rec.until(lambda change: workspace / "with" / "beside" / "after.txt" in change.paths)
        await rec.rest()
        assert not [p for change in rec.changes[seen:] for p in change.paths if "behind" in p.name], rec.changes[seen:]
        own = sum(1 for p in workspace.rglob("*") if p.is_dir() and not p.is_symlink()) + 1
        assert inotify_watches(rec.watcher._proc.pid) <= 3 * own


async def test_polling_a_workspace_holding_a_link_sees_its_saves(tmp_path: Path) -> None:
    """``--poll`` lists what it polls and walks no tree of inotify's: a workspace holding a link is
    polled whole as before, and a save in the folder on the way to the link and beside it is seen."""
    outside = folder(tmp_path / "outside" / "d")
    workspace = tmp_path / "workspace"
    _linked_workspace(workspace, outside.parent)
    async with watching([WatchTarget(workspace, "workspace")], force_polling=True) as rec:
        for saved in (workspace / "with" / "links" / "saved.txt", workspace / "a" / "b" / "saved.txt"):
            saved.write_text("x")
            await rec.until(lambda change, saved=saved: saved in change.paths)


async def test_folders_made_one_after_another_beside_a_link_are_each_watched(tmp_path: Path) -> None:
    """Each folder made in a folder watched alone gets a watch of its own, and past a few the watch
    is built again whole: through both, what was saved in each at once, and later, is reported, and
    the watcher holds no more inotify instances than a few."""
    outside = folder(tmp_path / "outside" / "d")
    workspace = tmp_path / "workspace"
    _linked_workspace(workspace, outside.parent)
    async with watching([WatchTarget(workspace, "workspace")]) as rec:
        assert rec.watcher._proc is not None
        made = []
        for n in range(12):
            made.append(_write(workspace / f"new{n}" / "deep" / "early.txt"))
            await wait_until(lambda saved=made[-1]: _reported(rec, saved), f"{made[-1]} reported")
        for early in made:
            later = early.with_name("later.txt")
            later.write_text("x")
            await rec.until(lambda change, later=later: later in change.paths)
        fds = Path(f"/proc/{rec.watcher._proc.pid}/fd")
        instances = sum(1 for fd in fds.iterdir() if "inotify" in os.readlink(fd))
        assert instances <= channel_module._MOST_WATCHES, instances


async def test_many_folders_made_at_once_beside_a_link_are_followed_in_linear_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkout or an install making thousands of folders at once in a folder on the way to a
    link: the channel compared each new folder with every other to keep the outermost ones, so a
    save made after 2,000 folders was reported 13 s later (0.6 s before folders were watched alone).
    The save is reported, and the paths compared stay in proportion to the folders made."""
    outside = folder(tmp_path / "outside" / "d")
    workspace = tmp_path / "workspace"
    _linked_workspace(workspace, outside.parent)
    compared = [0]
    equal = pathlib.PurePath.__eq__

    def counted(self: pathlib.PurePath, other: object) -> bool:
        compared[0] += 1
        return equal(self, other)

    async with watching([WatchTarget(workspace, "workspace")], isolate=False) as rec:
        made = 1500
        monkeypatch.setattr(pathlib.PurePath, "__eq__", counted)
        for n in range(made):
            (workspace / f"pkg{n}").mkdir()
        saved = _write(workspace / "a" / "saved.txt")
        await rec.until(lambda change: saved in change.paths, timeout=120)
        monkeypatch.undo()
    assert compared[0] < 100 * made, compared[0]


@pytest.mark.parametrize("isolate", [False, True], ids=["threads", "process"])
async def test_a_folder_remade_again_and_again_beside_a_link_blocks_no_report(tmp_path: Path, isolate: bool) -> None:
    """A build folder removed and made again many times a second in a folder on the way to a link:
    each batch saw a watched folder go, built the watch again, and waited for a batch without one
    before reporting anything, so while the build ran no save anywhere was reported. A save is
    reported while it goes on, and one in the build folder once it ends."""
    outside = folder(tmp_path / "outside" / "d")
    workspace = tmp_path / "workspace"
    _linked_workspace(workspace, outside.parent)
    build = folder(workspace / "build")
    stop = threading.Event()
    remade = [0]

    def churn() -> None:
        while not stop.is_set():
            shutil.rmtree(build, ignore_errors=True)
            build.mkdir()
            (build / "x").write_text("x")
            remade[0] += 1
            stop.wait(0.03)

    async with watching([WatchTarget(workspace, "workspace")], isolate=isolate) as rec:
        churning = threading.Thread(target=churn)
        churning.start()
        try:
            await wait_until(lambda: remade[0] >= 5, "the build under way")
            saved = _write(workspace / "a" / "saved.txt")
            await rec.until(lambda change: saved in change.paths)
        finally:
            stop.set()
            churning.join()
        later = _write(build / "later.txt")
        await rec.until(lambda change: later in change.paths)


@pytest.mark.parametrize("linked", [True, False], ids=["beside-a-link", "no-link"])
async def test_a_folder_holding_a_link_moved_into_a_folder_watched_whole_is_not_walked(
    tmp_path: Path, linked: bool
) -> None:
    """A folder holding a link to a big folder outside, moved (or checked out, folder and link at
    once) into a folder watched whole: the OS watch's handler of a new folder walked it following
    the link, and watched the 2,000 folders behind it. They are let go of, and saves in the moved
    folder are seen."""
    outside = tmp_path / "outside"
    for n in range(300):
        (outside / f"d{n}").mkdir(parents=True)
    workspace = tmp_path / "workspace"
    if linked:
        _linked_workspace(workspace, outside)
    else:
        folder(workspace / "a")
    staged = folder(tmp_path / "staged" / "lib")
    (staged / "deps").symlink_to(outside)
    async with watching([WatchTarget(workspace, "workspace")]) as rec:
        assert rec.watcher._proc is not None
        staged.parent.rename(workspace / "a" / "pkg")
        await rec.until(lambda change: workspace / "a" / "pkg" in change.paths)
        for saved in (workspace / "a" / "pkg" / "lib" / "saved.txt", workspace / "a" / "saved.txt"):
            saved.write_text("x")
            await rec.until(lambda change, saved=saved: saved in change.paths)
        own = sum(1 for p in workspace.rglob("*") if p.is_dir() and not p.is_symlink()) + 1
        assert inotify_watches(rec.watcher._proc.pid) <= 3 * own


SAVE_IN_A_FOLDER_MADE_READABLE = (
    WATCHED_BY_A_USER
    + """
async def act():
    (root / "locked").chmod(0o755)
    await until(root / "locked")
    for saved in (root / "locked" / "saved.txt", root / "locked" / "deeper" / "saved.txt"):
        saved.write_text("x")
        await until(saved)

asyncio.run(watched(act))
print(sorted(str(p.relative_to(root)) for p in seen if p.name == "saved.txt"))
"""
)


def test_a_folder_the_user_could_not_read_made_readable_is_watched(ordinary_user) -> None:
    """A folder its user could not read when the watch was built (a container's, mode 000) is
    made readable (chmod 755): it stayed unwatched, and saves in it ran nothing. It is watched
    from then on."""
    workspace = ordinary_user.root / "workspace"
    (workspace / "locked" / "deeper").mkdir(parents=True)
    (workspace / "tests").mkdir()
    ordinary_user.own(ordinary_user.root)
    (workspace / "locked").chmod(0o000)
    done = ordinary_user.run_python(SAVE_IN_A_FOLDER_MADE_READABLE, workspace, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == str(["locked/deeper/saved.txt", "locked/saved.txt"])


SAVE_IN_A_FOLDER_MADE_UNREADABLE = (
    WATCHED_BY_A_USER
    + """
async def act():
    fresh = root / "fresh"
    fresh.mkdir(mode=0)  # as a tool that makes a folder and locks it at once, before any watch of it
    await asyncio.sleep(0.3)
    fresh.chmod(0o755)
    await until(fresh)
    (fresh / "deeper").mkdir()
    for saved in (fresh / "saved.txt", fresh / "deeper" / "saved.txt"):
        saved.write_text("x")
        await until(saved)

asyncio.run(watched(act))
print(sorted(str(p.relative_to(root)) for p in seen if p.name == "saved.txt"))
"""
)


@pytest.mark.parametrize("linked", [False, True], ids=["no-link", "beside-a-link"])
def test_a_folder_made_unreadable_while_watching_is_watched_once_readable(ordinary_user, linked: bool) -> None:
    """A folder made while watching that its user could not read as the watch reached it (mode 000,
    or chmod 000 at once), then made readable: inotify had refused it, nothing looked at it again,
    and every save in it ran nothing, in a workspace with no link (notify's own watch of a new
    folder) and beside a link (the channel's). It is watched once readable."""
    workspace = ordinary_user.root / "workspace"
    (workspace / "tests").mkdir(parents=True)
    if linked:
        (ordinary_user.root / "outside").mkdir()
        (workspace / "tmp").symlink_to(ordinary_user.root / "outside")
    ordinary_user.own(ordinary_user.root)
    done = ordinary_user.run_python(SAVE_IN_A_FOLDER_MADE_UNREADABLE, workspace, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == str(["fresh/deeper/saved.txt", "fresh/saved.txt"])


async def test_folders_made_in_a_workspace_with_no_link_are_looked_through_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Since a folder made in one watched whole is looked through for links, a workspace with none
    paid for it at every save: an lstat for each path a batch added, files too, and a split of each
    batch's outermost new folder, which lists every folder in it (3,000 folders made: the watcher's
    CPU doubled). Only the outermost new folders are asked what they are, and a look that finds no
    link lists nothing."""
    calls = {"_split": 0, "real_dir": 0}
    opened: list[str] = []
    workspace = folder(tmp_path / "workspace" / "a").parent
    for name in calls:
        real = getattr(channel_module, name)

        def counted(*args, _real=real, _name=name):
            calls[_name] += 1
            return _real(*args)

        monkeypatch.setattr(channel_module, name, counted)
    scandir = os.scandir

    def counted_scandir(path=".", _scandir=scandir):
        if str(path).startswith(str(workspace)):
            opened.append(str(path))
        return _scandir(path)

    async with watching([WatchTarget(workspace, "workspace")], isolate=False) as rec:
        calls.update(_split=0, real_dir=0)
        monkeypatch.setattr(os, "scandir", counted_scandir)
        made = 300
        for n in range(made):
            sub = folder(workspace / "src" / f"pkg{n}" / "sub")
            for k in range(5):
                (sub / f"m{k}.py").write_text("x")
        saved = _write(workspace / "saved.txt")
        await rec.until(lambda change: saved in change.paths)
    assert calls["_split"] == 0, calls
    # An lstat for each of the batch's outermost paths (src, a pkg or a file whose folder an earlier batch
    # brought), however the events fall into batches: far fewer than the 2,100 paths added
    assert calls["real_dir"] < 7 * made // 2, calls
    assert len(opened) <= 3 * (2 * made + 1), len(opened)  # each folder at most once per new folder above it
