"""``watch``, ``test --watch`` and the TUI where the kernel will not place every watch
they need: the real command in a user namespace of its own whose inotify watch limit is
tiny (the limit is that namespace's: no other process of the machine's, a test beside
it or another user's editor, is short of a watch, or frees one for it)."""

from __future__ import annotations

import json
import os
import select
import shlex
import shutil
import subprocess
import sys
import time

import pytest

from tests.helpers.commands import TOOL, LineReader, ended, start_in_terminal, stop
from tests.helpers.tasks import HANG_GUARD_S, PY

#: The rest of the command line run where at most 4 inotify watches may be placed:
#: fewer than the folders of the hello-file example, so the OS watch of its tree
#: fails part of the way through.
_FEW_WATCHES = (
    "unshare",
    "--user",
    "--map-root-user",
    "sh",
    "-c",
    'echo 4 >/proc/sys/user/max_inotify_watches && exec "$@"',
    "sh",
)

#: What the user is told, the cure first.
_SAID = "the inotify watch limit is reached (raise /proc/sys/fs/inotify/max_user_watches, or keep fewer folders"


def _few_watches_or_skip() -> None:
    made = subprocess.run([*_FEW_WATCHES, "true"], capture_output=True, text=True, timeout=30, check=False)
    if made.returncode != 0:
        pytest.skip(f"no user namespace with its own inotify watch limit here: {made.stderr.strip()[-200:]}")


@pytest.mark.parametrize(
    ("command", "first", "second"),
    [
        (["watch", "--case", "correct"], "#1 ", "#2 "),
        (["watch", "--case", "correct", "--json"], '{"', '{"'),
        (["test", "--watch"], "── round 1", "── round 2"),
    ],
)
def test_a_watch_limit_reached_is_said_and_saves_still_run(env, example, command, first, second):
    """Past the inotify watch limit, watchfiles (given ignore_permission_denied) dropped the
    error: the task was watched in part, a save of the verifier ran nothing, and nothing said
    why. Now one line says it with the cure, and the tree is polled: the save runs."""
    _few_watches_or_skip()
    task = example("hello-file")
    proc = subprocess.Popen(
        [*_FEW_WATCHES, *TOOL, *command[:1], str(task), *command[1:], "--python", PY],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    reader = LineReader(proc.stdout)
    try:
        assert "start" in reader.next_run(HANG_GUARD_S, prefix=first)
        verifier = task / "tests" / "verifier.py"
        verifier.write_text(verifier.read_text().replace("return 1.0 if", "return 0.5 if"))
        again = reader.next_run(HANG_GUARD_S, prefix=second)
    finally:
        code, stderr = stop(proc)
    assert code == 0 and "Traceback" not in stderr, stderr
    if again.startswith("{"):
        assert json.loads(again)["trigger"] == "tests/verifier.py"
    else:
        assert "tests/verifier.py" in again, again
    said = [line for line in stderr.splitlines() if _SAID in line]
    assert said, stderr
    assert all(line.startswith("verifier-tui: ") and "polling" in line for line in said), said
    assert len(said) == len(set(said)), "a line said twice"


def test_the_tuis_status_line_says_it_polls_past_the_watch_limit_and_a_save_runs(env, example):
    """The TUI said "● watching" and a save of the verifier ran nothing. Now its status
    line says why it polls, with the cure, and the save runs (its run #2 is drawn)."""
    _few_watches_or_skip()
    task = example("hello-file")
    pid, fd = start_in_terminal(env, [], shell=shlex.join([*_FEW_WATCHES, *TOOL, str(task), "--python", PY]))
    drawn = b""

    def drawn_until(text: bytes) -> bool:
        nonlocal drawn
        deadline = time.monotonic() + HANG_GUARD_S
        while text not in drawn and time.monotonic() < deadline:
            if select.select([fd], [], [], 0.05)[0]:
                try:
                    drawn += os.read(fd, 65536)
                except OSError:
                    return False
        return text in drawn

    try:
        assert drawn_until("● watching · the inotify watch limit is reached (raise".encode()), drawn[-2000:]
        assert drawn_until(b"run #1 ")
        verifier = task / "tests" / "verifier.py"
        verifier.write_text(verifier.read_text().replace("return 1.0 if", "return 0.5 if"))
        assert drawn_until(b"run #2 "), drawn[-2000:]
    finally:
        os.write(fd, b"q")
        _rest, status = ended(pid, fd, within_s=HANG_GUARD_S)
        os.close(fd)
    assert status == 0


#: Watches FOLDER (argv[1]) from the watcher's threads, saves FOLDER/z/saved once it is
#: ready, and prints each note and change: what a face would say.
_WATCH_AND_SAVE = """
import asyncio, sys
from pathlib import Path
from verifier_tui.engine.changes import WatchTarget
from verifier_tui.engine.watch.watcher import Watcher

async def main(root):
    watcher = Watcher([WatchTarget(root, "root", folder=True)], isolate=False, on_note=lambda n: print("note:", n))
    await watcher.start()
    (root / "z" / "saved").write_text("x")
    async for change in watcher.changes():
        print("change:", change.describe(), flush=True)
        watcher.stop()

asyncio.run(main(Path(sys.argv[1])))
"""


def test_a_folder_that_cannot_be_read_is_said_and_the_rest_still_watched():
    """Not given ignore_permission_denied, watchfiles raises EACCES for a folder the user
    cannot read; polling fails on it as well (notify's poll watcher reports it at every
    scan). So the rest is watched as before, and one line says that folder is not."""
    import tempfile
    from pathlib import Path

    root_user = os.geteuid() == 0
    prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if root_user else []
    parent = Path(tempfile.mkdtemp(prefix="vt-unread-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None))
    try:
        os.chmod(parent, 0o755)
        root = parent / "root"
        for folder in (root, root / "a", root / "a" / "locked", root / "z"):
            folder.mkdir()
            os.chmod(folder, 0o777)
        if root_user:
            for folder in (root, root / "a", root / "z"):
                os.chown(folder, 65534, 65534)  # the locked one stays root's
        os.chmod(root / "a" / "locked", 0o700 if root_user else 0)
        repo = str(Path(__file__).resolve().parents[2])
        done = subprocess.run(
            [*prefix, sys.executable, "-c", _WATCH_AND_SAVE, str(root)],
            capture_output=True,
            text=True,
            timeout=HANG_GUARD_S,
            env=dict(os.environ, PYTHONPATH=repo),
            check=False,
        )
        if root_user and done.returncode != 0 and "Traceback" not in done.stderr:
            pytest.skip(f"cannot run as another user here: {done.stderr.strip()[-200:]}")
    finally:
        os.chmod(parent / "root" / "a" / "locked", 0o700)
        shutil.rmtree(parent, ignore_errors=True)
    assert done.returncode == 0, done.stderr
    said = done.stdout.splitlines()
    assert said[0].startswith("note: a folder cannot be watched (Permission denied"), said
    assert "/a/locked" in said[0] and said[0].endswith("saves in it, and perhaps in others after it, go unseen")
    assert said[1:] == ["change: root/z/saved"], said
