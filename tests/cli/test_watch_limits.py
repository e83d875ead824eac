"""``watch`` where the OS watch cannot cover every folder: past the inotify limits, watchfiles
(passed ``ignore_permission_denied``) dropped the folders it could not watch without a word, and a
save in one of them ran nothing. The limit is lowered for the tool alone, in a user namespace of
its own (:func:`~tests.helpers.processes.past_the_inotify_limit`), never for the machine."""

from __future__ import annotations

import shutil

import pytest

from tests.helpers.commands import start_watch, stop
from tests.helpers.processes import past_the_inotify_limit
from tests.helpers.tasks import HANG_GUARD_S, PY

#: What every face says, once, when some folder could not be watched.
SAID = "cannot see every change: the inotify watch limit is reached (fs.inotify.max_user_watches)"
SYSCTL = "sudo sysctl fs.inotify.max_user_watches="


def deep_workspace(example, tmp_path):
    """hello-file, and a workspace of its correct case's files in more folders than the lowered limit
    lets a user watch, deeper than the task's folders so that they are watched first (roots are
    watched in the order of their depth, each walked whole before the next)."""
    task = example("hello-file")
    workspace = tmp_path / "a" / "b" / "c" / "d" / "e" / "f" / "workspace"
    shutil.copytree(task / "cases" / "correct" / "workspace", workspace)
    for n in range(40):
        (workspace / "deep" / f"d{n}").mkdir(parents=True)
    return task, workspace


@pytest.mark.parametrize("json", [False, True], ids=["text", "json"])
def test_watch_says_once_it_cannot_see_every_change_past_the_watch_limit_and_goes_on(env, example, tmp_path, json):
    task, workspace = deep_workspace(example, tmp_path)
    proc, reader = start_watch(
        env, task, "--workspace", workspace, *(["--json"] if json else []), around=past_the_inotify_limit(24)
    )
    prefix = "{" if json else "#"
    try:
        reader.next_run(prefix=prefix)
        verifier = task / "tests" / "verifier.py"
        verifier.write_text(verifier.read_text() + "\n# saved\n")  # what could be watched still is
        assert "tests/verifier.py" in reader.next_run(prefix=prefix)
    finally:
        code, err = stop(proc)
    assert code == 0 and "Traceback" not in err, (code, err)
    assert err.count(SAID) == 1 and SYSCTL in err, err


def test_watch_says_nothing_of_the_limit_where_every_folder_is_watched(env, example, tmp_path):
    task, workspace = deep_workspace(example, tmp_path)
    proc, reader = start_watch(env, task, "--workspace", workspace, around=past_the_inotify_limit(1000))
    try:
        reader.next_run()
    finally:
        code, err = stop(proc)
    assert SAID not in err, err


def test_test_watch_of_many_tasks_says_the_limit_once(env, example, tmp_path):
    # each task tested has a watcher of its own: past the limit, each said it, four times for four tasks
    task = example("hello-file")
    for n in range(3):
        shutil.copytree(task, task.parent / f"hello-file-{n}")
    proc, reader = start_watch(
        env, task.parent, "--watch", "--python", PY, command="test", around=past_the_inotify_limit(12)
    )
    try:
        reader.next_run(HANG_GUARD_S, prefix="── round")
        while "passed, " not in reader.next(HANG_GUARD_S):  # the round ends: every watcher is in place
            pass
    finally:
        code, err = stop(proc)
    assert code == 0 and "Traceback" not in err, (code, err)
    assert err.count(SAID) == 1, err
