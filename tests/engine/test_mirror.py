"""The copy sandbox's mirror follows the watcher's changes and the run's own
writes instead of walking the whole workspace, and stays exact:
a change the events missed, a verifier that damages the copy, a re-created
workspace, 2,000 files with 5 changed.

Real runs of the real runner with ``VERIFIER_TUI_SANDBOX=copy``; the watcher's
reports are handed to the session as ``LiveRuns`` hands them
(``Session.follow_changes``, ``Session.note_change``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import stat
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.tasks import HANG_GUARD_S, PY, make_task, nest
from verifier_tui.engine.changes import Change
from verifier_tui.engine.model import Outcome
from verifier_tui.engine.session import Options, Session
from verifier_tui.engine.watch.live import LiveRuns

LISTING = """\
import os
from pathlib import Path

def verify(workspace):
    out = []
    for folder, dirs, files in os.walk(workspace):
        for name in sorted(dirs + files):
            path = Path(folder) / name
            rel = path.relative_to(workspace).as_posix()
            out.append((rel, "dir") if path.is_dir() else (rel, path.read_text()))
    print(sorted(out))
    return 1.0
"""


@pytest.fixture(autouse=True)
def copy_sandbox(monkeypatch):
    monkeypatch.setenv("VERIFIER_TUI_SANDBOX", "copy")


def tree(root: Path) -> dict[str, object]:
    out = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            rel = path.relative_to(root).as_posix()
            st = os.lstat(path)
            out[rel] = (
                ("dir", stat.S_IMODE(st.st_mode))
                if stat.S_ISDIR(st.st_mode)
                else ("file", stat.S_IMODE(st.st_mode), path.read_bytes())
            )
    return out


def live_session(task_dir: Path) -> tuple[Session, object]:
    session = Session(task_dir, Options(python=PY))
    spec = session.spec()
    session.follow_changes(True)  # a watcher is in place from now on
    return session, spec


def changed(*paths: Path, recreated: tuple[Path, ...] = ()) -> Change:
    return Change(
        paths=frozenset(paths), deleted=frozenset(p for p in paths if not p.exists()), recreated=frozenset(recreated)
    )


@pytest.fixture
def quick_disk(tmp_path, monkeypatch):
    """A folder on tmpfs when this machine has one (else ``tmp_path``), which
    the session's scratch folder uses too: thousands of files cost seconds to
    write on this project's ext4 and a fraction of that on tmpfs, and what
    is checked does not depend on the disk."""
    import tempfile

    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path
        return
    folder = Path(tempfile.mkdtemp(prefix="vtui-test-", dir=shm))
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def identities(root: Path) -> dict[str, tuple]:
    """Every file's inode, change time, size and modification time (what any
    write to it changes, read without opening it); every folder by its name."""
    out: dict[str, tuple] = {}
    pending = [root]
    while pending:
        with os.scandir(pending.pop()) as listing:
            for entry in listing:
                rel = entry.path[len(str(root)) + 1 :]
                if entry.is_dir(follow_symlinks=False):
                    out[rel] = ("folder",)
                    pending.append(Path(entry.path))
                else:
                    st = entry.stat(follow_symlinks=False)
                    out[rel] = (st.st_ino, st.st_ctime_ns, st.st_size, st.st_mtime_ns)
    return out


def test_only_what_changed_is_copied_and_the_copy_stays_exact(quick_disk):
    # 2,000 files: the 100,000 of the README's rows are benchmarks/mirror_update.py's, which checks the same.
    task_dir = make_task(quick_disk / "t", "def verify(workspace):\n    return 1.0\n", cases={"only": {}})
    ws = task_dir / "cases" / "only" / "workspace"
    for folder in range(20):
        os.mkdir(ws / f"d{folder}")
        for index in range(100):
            fd = os.open(ws / f"d{folder}" / f"f{index}.txt", os.O_WRONLY | os.O_CREAT, 0o644)
            os.write(fd, f"{folder}/{index}".encode())
            os.close(fd)
    session, spec = live_session(task_dir)
    with session:
        session.run(spec)
        mirror = session.stage_for(spec).workspace
        assert mirror.walked and mirror.files_copied == 2_000
        before = identities(mirror.target)
        assert {rel: ident[-2:] for rel, ident in before.items()} == {
            rel: ident[-2:] for rel, ident in identities(ws).items()
        }  # every entry there, files of the same size and time
        edits = [ws / f"d{n * 4}" / f"f{n}.txt" for n in range(5)]
        for path in edits:
            path.write_text("changed by the user")
        session.note_change(changed(*edits))
        result = session.run(spec)
        assert result.outcome is Outcome.REWARD_WRITTEN
        assert not mirror.walked and mirror.files_copied == 5
        after = identities(mirror.target)
        rels = {path.relative_to(ws).as_posix() for path in edits}
        assert [(mirror.target / rel).read_text() for rel in rels] == ["changed by the user"] * 5
    assert {rel for rel in before if before[rel] != after[rel]} == rels  # nothing else was written
    assert after.keys() == before.keys()


def test_a_verifier_that_damages_the_copy_is_repaired_without_a_walk(tmp_path):
    """What the run wrote is put right, and nothing else looked at: a file made
    and removed, a file written aside and renamed over one, a folder made (the
    copy sandbox runs the verifier on this machine: no walk looks for a hard link
    it made and no longer has, see WriteTracker.contained)."""
    task_dir = make_task(
        tmp_path / "t",
        LISTING.replace(
            "    return 1.0",
            """\
    (workspace / "a.txt").write_text("damaged")
    (workspace / "d" / "e" / "c.txt").unlink()
    (workspace / "d" / "b.tmp").write_text("replaced")
    os.replace(workspace / "d" / "b.tmp", workspace / "d" / "b.txt")
    os.chmod(workspace / "d", 0o500)
    (workspace / "planted.txt").write_text("planted")
    (workspace / "scratch").write_text("made and gone")
    os.unlink(workspace / "scratch")
    (workspace / "newdir").mkdir()
    (workspace / "newdir" / "x").write_text("x")
    return 1.0""",
        ),
        cases={"only": {"a.txt": "a", "d/b.txt": "b", "d/e/c.txt": "c"}},
    )
    ws = task_dir / "cases" / "only" / "workspace"
    session, spec = live_session(task_dir)
    with session:
        first = session.run(spec)
        second = session.run(spec)
        mirror = session.stage_for(spec).workspace
        third = session.run(spec)
        assert first.outcome is Outcome.REWARD_WRITTEN, first.stderr.text
        assert first.stdout.text == second.stdout.text == third.stdout.text
        assert not mirror.walked  # the tracker told what the run wrote: nothing else was looked at
        assert "('a.txt', 'a')" in third.stdout.text and "('d/b.txt', 'b')" in third.stdout.text
        assert "planted" not in third.stdout.text and "newdir" not in third.stdout.text
    assert (ws / "a.txt").read_text() == "a" and not (ws / "planted.txt").exists()  # the user's files untouched


def test_a_change_the_events_missed_is_caught(tmp_path):
    """Changes made while no watcher was following, and changes under a
    watcher that lost events (it reports the root as re-created), are found
    by a walk; a change reported by the events alone needs none."""
    task_dir = make_task(tmp_path / "t", LISTING, cases={"only": {"a.txt": "a", "b.txt": "b"}})
    ws = task_dir / "cases" / "only" / "workspace"
    session, spec = live_session(task_dir)
    with session:
        session.run(spec)
        session.follow_changes(False)  # the watcher is restarted: a gap
        (ws / "a.txt").write_text("changed in the gap")
        session.follow_changes(True)
        assert "changed in the gap" in session.run(spec).stdout.text
        (ws / "b.txt").write_text("changed while events were lost")
        session.note_change(changed(ws, recreated=(ws,)))  # what the watcher says after an overflow
        result = session.run(spec)
        assert "changed while events were lost" in result.stdout.text
        assert session.stage_for(spec).workspace.walked


def test_a_recreated_workspace_is_copied_whole(tmp_path):
    task_dir = make_task(tmp_path / "t", LISTING, cases={"only": {"a.txt": "a", "d/b.txt": "b"}})
    ws = task_dir / "cases" / "only" / "workspace"
    session, spec = live_session(task_dir)
    with session:
        session.run(spec)
        shutil.rmtree(ws)
        (ws / "other").mkdir(parents=True)
        (ws / "other" / "z.txt").write_text("z")
        session.note_change(changed(ws, recreated=(ws,)))
        result = session.run(spec)
    assert result.stdout.text == "[('other', 'dir'), ('other/z.txt', 'z')]\n"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the write tracker is inotify")
def test_deleted_and_added_paths_reported_by_the_events(tmp_path):
    task_dir = make_task(tmp_path / "t", LISTING, cases={"only": {"a.txt": "a", "d/b.txt": "b"}})
    ws = task_dir / "cases" / "only" / "workspace"
    session, spec = live_session(task_dir)
    with session:
        session.run(spec)
        (ws / "a.txt").unlink()
        shutil.rmtree(ws / "d")
        (ws / "n" / "m").mkdir(parents=True)
        (ws / "n" / "m" / "k.txt").write_text("k")
        session.note_change(changed(ws / "a.txt", ws / "d", ws / "n"))
        result = session.run(spec)
        assert not session.stage_for(spec).workspace.walked
    assert result.stdout.text == "[('n', 'dir'), ('n/m', 'dir'), ('n/m/k.txt', 'k')]\n"


def test_a_big_first_copy_is_exact_modes_times_and_holes(quick_disk):
    """Enough files for the copy to be shared with helper processes: every
    file's bytes, mode (plus the owner's read and write) and modification
    time as the user's, sparse files still sparse wherever they were copied,
    a FIFO skipped, a link inside the workspace still a link."""
    task_dir = make_task(quick_disk / "t", "def verify(workspace):\n    return 1.0\n", cases={"only": {}})
    ws = task_dir / "cases" / "only" / "workspace"
    modes = [0o644, 0o600, 0o755, 0o444, 0o640]
    for index in range(3000):
        folder = ws / f"d{index // 100}"
        folder.mkdir(exist_ok=True)
        path = folder / f"f{index}.bin"
        path.write_bytes(os.urandom(index % 5000))
        os.chmod(path, modes[index % len(modes)])
        os.utime(path, ns=(1_600_000_000_000_000_000 + index, 1_500_000_000_123_456_789 + index * 1000))
    for index in range(0, 3000, 300):  # sparse files spread over the walk
        with open(ws / f"d{index // 100}" / f"sparse{index}.bin", "wb") as handle:
            handle.seek(512 * 1024**2)
            handle.write(b"end")
    os.mkfifo(ws / "d7" / "pipe")
    os.symlink("f0.bin", ws / "d0" / "link")
    session, spec = live_session(task_dir)
    with session:
        result = session.run(spec)
        mirror = session.stage_for(spec).workspace
        assert result.outcome is Outcome.REWARD_WRITTEN, result.stderr.text
        assert mirror.files_copied == 3010
        for folder, _dirs, files in os.walk(ws):
            for name in files:
                src = Path(folder) / name
                dst = mirror.target / src.relative_to(ws)
                if name == "pipe":
                    assert not os.path.lexists(dst)
                    continue
                if name == "link":
                    assert os.readlink(dst) == "f0.bin"
                    continue
                sst, dst_st = src.stat(), dst.stat()
                assert (stat.S_IMODE(dst_st.st_mode), dst_st.st_mtime_ns) == (
                    stat.S_IMODE(sst.st_mode) | 0o600,
                    sst.st_mtime_ns,
                ), name
                if name.startswith("sparse"):
                    assert dst_st.st_size == sst.st_size and dst_st.st_blocks * 512 < 1024**2
                    with open(dst, "rb") as handle:
                        handle.seek(512 * 1024**2)
                        assert handle.read() == b"end"
                else:
                    assert dst.read_bytes() == src.read_bytes(), name
    assert "workspace: skipped d7/pipe: it is a FIFO, not a file" in result.notices


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the write tracker is inotify")
async def test_changes_that_start_no_run_still_reach_the_copy(tmp_path):
    """``.git/`` and an editor's backup file are noise to the watcher: saving
    them starts no run. A verifier may read them all the same: the next run
    sees them as they are now, and the copy learnt of them from the events
    (no walk of the workspace)."""
    task_dir = make_task(
        tmp_path / "t",
        """\
        def verify(workspace):
            print((workspace / ".git" / "HEAD").read_text(), (workspace / "notes.txt~").read_text())
            return 1.0
    """,
        cases={"only": {"a.txt": "a", ".git/HEAD": "ref: main", "notes.txt~": "old backup"}},
    )
    ws = task_dir / "cases" / "only" / "workspace"
    session = Session(task_dir, Options(python=PY))
    finished: list[object] = []
    live = LiveRuns(
        session,
        lambda trigger, change: session.arun(trigger=trigger),
        on_result=lambda change, result: finished.append(result),
    )

    async def runs(count: int) -> None:
        while len(finished) < count:
            await asyncio.sleep(0.01)

    glue = asyncio.create_task(live.watch(run_first=True))
    try:
        await asyncio.wait_for(runs(1), 30)
        (ws / ".git" / "HEAD").write_text("ref: feature")
        (ws / "notes.txt~").write_text("new backup")
        await asyncio.sleep(0.8)  # well over the watcher's debounce: no run came of it
        assert len(finished) == 1 and not live.scheduler.busy
        (ws / "a.txt").write_text("changed")
        await asyncio.wait_for(runs(2), 30)
        result = live.scheduler.latest_result
        mirror = session.stage_for(session.spec()).workspace
        assert not mirror.walked
    finally:
        live.stop_watching()
        await asyncio.wait_for(glue, 10)
        await live.close()
        session.close()
    assert result.stdout.text == "ref: feature new backup\n", result.stdout.text


def test_a_big_copy_replaced_by_a_link_is_removed_as_a_link(quick_disk):
    """The session's end leaves a big copy to a background ``rm``; a verifier
    that left a link to the user's folder in its place gets the link removed,
    and nothing of what it points to is touched."""
    victim = quick_disk / "victim"
    (victim / "inner").mkdir(parents=True)
    (victim / "inner" / "keep.txt").write_text("keep")
    for folder in (victim, victim / "inner"):
        os.chmod(folder, 0o755)
    task_dir = make_task(
        quick_disk / "t",
        f"""\
        import os, shutil

        def verify(workspace):
            shutil.rmtree(workspace)
            os.symlink({str(victim)!r}, workspace)
            return 1.0
    """,
        cases={"only": {f"d{n // 100}/f{n}.txt": "x" for n in range(6000)}},
    )
    with Session(task_dir, Options(python=PY)) as session:
        result = session.run()
        assert result.outcome is Outcome.REWARD_WRITTEN, result.stderr.text
        app = session.stage_for(session.spec()).app_dir
        assert os.readlink(app) == str(victim)
    deadline = time.monotonic() + HANG_GUARD_S
    while os.path.lexists(app) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.lexists(app)
    assert (victim / "inner" / "keep.txt").read_text() == "keep"
    assert [stat.S_IMODE(os.stat(f).st_mode) for f in (victim, victim / "inner")] == [0o755, 0o755]


def test_a_copy_refused_for_want_of_room_is_walked_whole_next_time(tmp_path):
    """A 2 MB file could not be copied (a 1 MB file size limit: EFBIG): that run is refused. With
    room again and nothing changed since, the next run walks the workspace rather than trusting
    the watcher's (empty) changes, and the verifier sees the whole file."""
    import resource

    task_dir = make_task(
        tmp_path / "t",
        """\
        import os

        def verify(workspace):
            print(os.path.getsize(os.path.join(workspace, "big.bin")))
            return 1.0
    """,
        cases={"only": {"small.txt": "x", "big.bin": "x" * (2 << 20)}},
    )
    session, spec = live_session(task_dir)
    with session:
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, hard))
        try:
            refused = session.run(spec)
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        again = session.run(spec)
    assert refused.outcome is Outcome.COULD_NOT_START and refused.exit_status == 2
    assert "the workspace could not be copied whole: big.bin: " in refused.start_error
    assert again.outcome is Outcome.REWARD_WRITTEN, again.stderr.text
    assert again.stdout.text == f"{2 << 20}\n"


def inotify_instances() -> int:
    links = []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # the listing's own descriptor is gone by now
            links.append(os.readlink(f"/proc/self/fd/{fd}"))
    return links.count("anon_inode:inotify")


def test_a_session_of_many_cases_leaves_the_user_inotify_instances(tmp_path):
    """Each case's copy is tracked by an inotify instance, and a user has 128
    in all, shared with their editor: a TUI over 300 cases took them all. Only
    the few most recently used copies keep one; the others are walked, and
    stay exact."""
    cases = {f"c{i:02}": {"a.txt": f"case {i}"} for i in range(20)}
    task_dir = make_task(tmp_path / "t", LISTING, cases=cases)
    before = inotify_instances()
    session, _spec = live_session(task_dir)
    with session:
        specs = [session.spec_for_case(case) for case in session.task.cases]
        for spec in specs:
            assert session.run(spec).outcome is Outcome.REWARD_WRITTEN
        assert inotify_instances() - before <= 8
        recent, evicted = specs[-1], specs[0]
        session.run(recent)
        assert not session.stage_for(recent).workspace.walked  # still tracked
        (task_dir / "cases" / "c00" / "workspace" / "a.txt").write_text("edited")
        session.note_change(changed(task_dir / "cases" / "c00" / "workspace" / "a.txt"))
        again = session.run(evicted)
        assert session.stage_for(evicted).workspace.walked
        assert "('a.txt', 'edited')" in again.stdout.text


def test_a_workspace_nested_past_pythons_recursion_limit_while_watched_is_refused_in_one_line(tmp_path):
    """The workspace was shallow at the first run; while the watcher follows it, it
    becomes 900 folders deep. The copy's update of what changed recurses a level
    at a time as the whole walk does, and only the walk caught RecursionError: the
    next run ended on a traceback. It is now refused in the same one line as a
    first copy of such a workspace, and the run after the folder is gone is whole."""
    task_dir = make_task(tmp_path / "t", LISTING, cases={"only": {"a.txt": "a"}})
    ws = task_dir / "cases" / "only" / "workspace"
    session, spec = live_session(task_dir)
    with session:
        assert session.run(spec).outcome is Outcome.REWARD_WRITTEN
        nest(ws, 900)
        session.note_change(changed(ws / "d"))
        refused = session.run(spec)
        assert refused.outcome is Outcome.COULD_NOT_START, refused.stderr.text
        assert refused.start_error == "the workspace could not be copied whole: folders nested too deep to copy"
        os.rename(ws / "d", tmp_path / "deep")  # out of the workspace (removing it recurses too)
        session.note_change(changed(ws / "d"))
        again = session.run(spec)
    assert again.outcome is Outcome.REWARD_WRITTEN, again.start_error
    assert again.stdout.text == "[('a.txt', 'a')]\n"


@pytest.mark.parametrize("where", ["the folder itself", "a folder inside it"])
def test_a_folder_swapped_for_a_link_while_it_is_removed_changes_nothing_outside(tmp_path, monkeypatch, where):
    """What ``rmtree`` leaves of a folder is removed one folder at a time, each
    made ours (mode 700) before it is entered. Code still running in a view
    (a run started ahead) could swap such a folder for a link to one of the
    user's between the look and the chmod: the user's folder keeps its mode
    and its files."""
    from verifier_tui.engine.sandbox import mirror

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    os.chmod(outside, 0o755)
    doomed = tmp_path / "stage" / "app"
    (doomed / "inner").mkdir(parents=True)
    swap = doomed if where == "the folder itself" else doomed / "inner"

    def swapped() -> None:
        os.rename(swap, tmp_path / "away")
        os.symlink(outside, swap)

    real_scandir = os.scandir

    def racing(path: object) -> object:
        listed = list(real_scandir(path))  # type: ignore[call-overload]
        if isinstance(path, int) and not os.path.islink(swap):
            swapped()  # after the listing saw a folder, before it is made ours
        return iter(listed)

    if swap == doomed:
        monkeypatch.setattr(mirror.shutil, "rmtree", lambda path, ignore_errors: swapped())
    else:
        monkeypatch.setattr(mirror.shutil, "rmtree", lambda path, ignore_errors: None)
        monkeypatch.setattr(os, "scandir", racing)
    mirror.remove_tree(doomed)
    monkeypatch.undo()
    assert stat.S_IMODE(os.stat(outside).st_mode) == 0o755
    assert (outside / "keep.txt").read_text() == "keep"


def test_without_o_path_as_on_macos_a_readonly_folder_is_still_made_ours(tmp_path, monkeypatch):
    """A review after: the folders made ours through an O_PATH descriptor raised AttributeError
    where os has no O_PATH (macOS, where the copy sandbox runs)."""
    from verifier_tui.engine.sandbox import mirror

    monkeypatch.delattr(os, "O_PATH", raising=False)  # macOS's os has none (the copy sandbox runs there)
    held = tmp_path / "copy" / "sub"
    held.mkdir(parents=True)
    (held / "f.txt").write_text("x")
    held.chmod(0o500)
    mirror.make_real_dir(held)
    assert stat.S_IMODE(os.stat(held).st_mode) & 0o700 == 0o700
    mirror.remove_tree(tmp_path / "copy")
    assert not (tmp_path / "copy").exists()


def test_a_folder_moved_up_while_it_is_removed_changes_nothing_outside(tmp_path, monkeypatch):
    """Code in a held view (it can write /logs/verifier) moves the folder the tool is in to a
    shallower place of the same tree while _remove_deep is inside it: the climb back by '..'
    then goes past the folder being removed."""
    from verifier_tui.engine.sandbox import mirror

    user = tmp_path / "users_files"
    user.mkdir()
    (user / "keep.txt").write_text("keep")
    reward = tmp_path / "stage" / "logs" / "verifier"
    deep = reward / "a" / "b" / "c" / "d" / "e"
    deep.mkdir(parents=True)
    real_scandir = os.scandir
    moved = []

    def racing(path: object) -> object:
        if isinstance(path, int) and not moved and os.readlink(f"/proc/self/fd/{path}") == str(deep):
            os.rename(deep, reward / "e")  # the held view, within its own /logs/verifier
            moved.append(True)
        return real_scandir(path)  # type: ignore[call-overload]

    monkeypatch.setattr(mirror.shutil, "rmtree", lambda path, ignore_errors: None)  # what rmtree left
    monkeypatch.setattr(os, "scandir", racing)
    mirror.remove_tree(reward / "a")
    monkeypatch.undo()
    assert moved
    assert (user / "keep.txt").read_text() == "keep"
