"""``run --save-case NAME``: a run kept as a case of its task, through the
real command on real folders; ``test`` then checks it as any other case."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.helpers.commands import TOOL, held_at, modes_bind_root, no_traceback, on_a_small_disk, run_tool
from tests.helpers.harbor import sandbox_trial
from tests.helpers.processes import wait_waiting_in
from tests.helpers.tasks import HANG_GUARD_S, PY, make_task, write

SAYS_HI = """\
    def verify(workspace, response=None, task_data=None):
        if task_data and task_data.get("strict") and response is None:
            return {"reward": 0.25}
        return 1.0 if (workspace / "hello.txt").read_text() == "hi" else 0.0
"""


def tree(folder):
    return {
        p.relative_to(folder).as_posix(): (p.read_bytes() if p.is_file() and not p.is_symlink() else os.readlink(p))
        for p in sorted(folder.rglob("*"))
        if p.is_symlink() or p.is_file()
    }


@pytest.fixture
def hello(tmp_path):
    task = make_task(tmp_path / "hello", SAYS_HI, cases={"good": {"hello.txt": "hi", "sub/notes.md": "n"}})
    write(task / "cases" / "good" / "response.json", '{"output": []}')
    write(task / "cases" / "good" / "task_data.json", '{"strict": false}')
    return task


def test_a_run_is_kept_as_a_case_that_test_then_checks(env, hello, tmp_path):
    before = tree(hello / "cases" / "good")
    done = run_tool(env, "run", hello, "--case", "good", "--save-case", "kept", "--python", PY, cwd=tmp_path)
    no_traceback(done)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == (
        "kept as case kept: hello/cases/kept (workspace/, response.json, task_data.json, "
        'expected.json {"rewards": {"reward": 1.0}})'
    )
    kept = tree(hello / "cases" / "kept")
    assert kept == {
        "expected.json": b'{"rewards": {"reward": 1.0}}\n',
        "response.json": b'{"output": []}',
        "task_data.json": b'{"strict": false}',
        "workspace/hello.txt": b"hi",
        "workspace/sub/notes.md": b"n",
    }
    assert tree(hello / "cases" / "good") == before  # the case run was only read
    assert not [p for p in (hello / "cases").iterdir() if p.name.startswith(".")]  # no scratch left behind
    tested = run_tool(env, "test", hello, "--case", "kept", "--python", PY)
    assert tested.returncode == 0 and "1 passed, 0 failed" in tested.stdout


def test_a_name_that_is_taken_or_no_name_is_refused_before_the_run(env, hello, tmp_path):
    (hello / "cases" / "kept").mkdir()
    for name, said in (
        ("kept", "the task already has a case kept"),
        ("good", "the task already has a case good"),
        ("../out", "a case name is one folder name"),
        (".hidden", "a case name is one folder name"),
        ("two\nlines", "a case name is one folder name of printable characters"),
        ("rtl\u202eevil", "a case name is one folder name of printable characters"),
        ("b" * 256, "a folder name holds at most 255 bytes"),
        # test finds a case of that name, but watch and the TUI skip whatever is under one: no edit ran it
        ("__pycache__", "watch and the TUI skip folders named __pycache__"),
    ):
        done = run_tool(env, "run", hello, "--case", "good", "--save-case", name, "--python", PY, cwd=tmp_path)
        no_traceback(done)
        assert done.returncode == 2 and done.stdout == ""  # nothing ran
        assert len(done.stderr.splitlines()) == 1 and said in done.stderr, done.stderr
    assert sorted(p.name for p in (hello / "cases").iterdir()) == ["good", "kept"]
    assert not (tmp_path / "out").exists() and list((hello / "cases" / "kept").iterdir()) == []


def test_the_longest_name_a_folder_can_have_is_kept(env, hello, tmp_path):
    """The scratch folder it is written in first is not named after it."""
    name = "b" * 255
    done = run_tool(env, "run", hello, "--case", "good", "--save-case", name, "--python", PY, cwd=tmp_path)
    no_traceback(done)
    assert done.returncode == 0, done.stderr
    assert (hello / "cases" / name / "expected.json").is_file()


def test_a_run_without_a_reward_expects_its_exit_code_and_a_timeout_expects_nothing(env, tmp_path):
    task = make_task(
        tmp_path / "t",
        "import time\ndef verify(workspace):\n    if (workspace / 'slow').exists():\n        time.sleep(30)\n"
        "    return 'pass'\n",
        cases={"quick": {"a.txt": "a"}, "slow": {"slow": ""}},
    )
    done = run_tool(env, "run", task, "--case", "quick", "--save-case", "says-pass", "--python", PY)
    assert done.returncode == 2  # the runner's contract error, as before
    assert json.loads((task / "cases" / "says-pass" / "expected.json").read_text()) == {"exit_code": 2}
    assert run_tool(env, "test", task, "--case", "says-pass", "--python", PY).returncode == 0
    done = run_tool(
        env, "run", task, "--case", "slow", "--timeout", "1", "--save-case", "stuck", "--json", "--python", PY
    )
    saved = json.loads(done.stdout)["saved_case"]
    assert saved["problem"] is None and saved["files"] == ["workspace/"]
    assert saved["notes"] == [
        "no expected.json: the run ended without a reward or an exit code to check (timed out after 1 s)"
    ]
    assert sorted(p.name for p in (task / "cases" / "stuck").iterdir()) == ["workspace"]


def test_links_are_kept_as_links_and_a_fifo_is_left_out(env, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("do not copy")
    task = make_task(tmp_path / "t", "def verify(workspace):\n    return 1.0\n", cases={"odd": {"a.txt": "a"}})
    workspace = task / "cases" / "odd" / "workspace"
    (workspace / "out").symlink_to(secret)
    os.mkfifo(workspace / "pipe")
    done = run_tool(env, "run", task, "--case", "odd", "--save-case", "odd-kept", "--python", PY)
    no_traceback(done)
    kept = task / "cases" / "odd-kept" / "workspace"
    assert (kept / "out").is_symlink() and os.readlink(kept / "out") == str(secret)  # verbatim, never read
    assert not (kept / "pipe").exists()
    assert "pipe" in done.stdout  # said what was left out


def test_a_trials_captured_app_becomes_the_cases_workspace(env, tmp_path):
    runs = tmp_path / "runs"
    task = make_task(runs / "tasks" / "demo", SAYS_HI)
    job = runs / "jobs" / "j"
    sandbox_trial(job, task, tmp_path / "scratch", workspace={"hello.txt": "hi"}, capture=True)
    done = run_tool(env, "run", job / "demo__aaaaaaa", "--save-case", "from-trial", "--python", PY, cwd=tmp_path)
    no_traceback(done)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "kept as case from-trial" in done.stdout.splitlines()[-1]
    assert tree(task / "cases" / "from-trial") == {
        "expected.json": b'{"rewards": {"reward": 1.0}}\n',
        "workspace/hello.txt": b"hi",
    }


NAMED_ROW = """\
    def verify(workspace, task_data):
        return 1.0 if (workspace / "hello.txt").read_text() == task_data.get("name") else 0.0
"""


def test_a_row_of_a_file_other_than_the_tasks_own_is_kept_as_the_rows_task_data(env, tmp_path):
    # task_id.txt is looked up in the task's own tasks.jsonl: a row of another file kept
    # that way named a row the task lacks, or silently the task's own row of that id.
    task = make_task(tmp_path / "rows", NAMED_ROW, cases={"ada": {"hello.txt": "Zed"}})
    write(task / "tasks.jsonl", '{"task_id": "ada", "task_data": {"name": "Ada"}}\n')
    other = write(tmp_path / "other.jsonl", '{"task_id": "ada", "name": "Zed"}\n{"task_id": "zed", "name": "Zed"}\n')
    for row in ("ada", "zed"):
        done = run_tool(
            env, "run", task, "--case", "ada", "--task-data", other, "--task-id", row,
            "--save-case", f"kept-{row}", "--python", PY, cwd=tmp_path,
        )  # fmt: skip
        no_traceback(done)
        assert done.returncode == 0, done.stderr
        assert "(workspace/, task_data.json, expected.json" in done.stdout.splitlines()[-1], done.stdout
        assert tree(task / "cases" / f"kept-{row}") == {
            "expected.json": b'{"rewards": {"reward": 1.0}}\n',
            "task_data.json": b'{"name": "Zed"}\n',
            "workspace/hello.txt": b"Zed",
        }
    own = run_tool(env, "run", task, "--case", "ada", "--task-id", "ada", "--save-case", "own", "--python", PY)
    assert own.returncode == 0 and "task_id.txt (ada)" in own.stdout  # the task's own row stays a row
    tested = run_tool(env, "test", task, "--case", "kept-*", "--python", PY)
    assert tested.returncode == 0 and "2 passed, 0 failed" in tested.stdout, tested.stdout


def test_a_workspace_holding_the_cases_folder_is_refused_before_the_run(env, hello, tmp_path):
    # The copy walked into the case it was writing, ~100 levels deep inside the
    # task, until "File name too long".
    before = tree(hello)
    for workspace in (hello, hello / "cases"):
        done = run_tool(
            env, "run", hello, "--workspace", workspace, "--save-case", "kept", "--python", PY, cwd=tmp_path
        )  # fmt: skip
        no_traceback(done)
        assert done.returncode == 2 and done.stdout == "", done.stdout
        assert done.stderr.splitlines() == [
            f"verifier-tui: --save-case: the run's workspace, {workspace}, holds the task's cases folder, where "
            "the case would be copied into itself: give a workspace outside it"
        ]
    assert tree(hello) == before


def test_a_case_the_tasks_disk_cannot_hold_is_said_in_words_and_leaves_nothing(env, tmp_path):
    """The task's disk has no room for the workspace: the line says which file,
    where the case was to go and why, in words (it said ``[Errno 28]``), exit 2,
    and ``cases/`` holds what it held."""
    write(tmp_path / "ws" / "answer.txt", "hello, world\n")
    write(tmp_path / "ws" / "big.bin", "x" * (200 << 10))
    script = f"""disk=$1; shift
"$@" new "$disk/t" --no-open > /dev/null || exit 3
"$@" run "$disk/t" --workspace {tmp_path / "ws"} --save-case big --python {PY}; echo "status $?"
ls -A "$disk/t/cases"
"""
    done = on_a_small_disk(env, tmp_path / "disk", script)
    lines = done.stdout.splitlines()
    assert lines[-4:] == ["status 2", "correct", "empty", "wrong"], done.stdout + done.stderr
    cases = tmp_path / "disk" / "t" / "cases"
    assert lines[-5] == (
        f"the run was not kept as case big: could not copy big.bin of {tmp_path / 'ws'} into {cases}: "
        "No space left on device"
    )


# A run's save, with cases/ made read-only once the check before the run had passed.
SAVE_AFTER_A_RUN = """\
import sys
from pathlib import Path
from verifier_tui.engine.keep_case import save
from verifier_tui.engine.session import Options, Session

task = Path(sys.argv[1])
with Session(task, Options(case="good", python=sys.argv[2])) as session:
    result = session.run()
    (task / "cases").chmod(0o555)
    print(save(result, session.task, "kept")["problem"])
"""


def test_a_cases_folder_made_read_only_during_the_run_is_named(env, hello):
    """``cases/`` made read-only while the run went on (past the check before it): the line
    named the hidden scratch folder the save tried to make (``cases/.saving-6whomym5``), which
    the user never saw. It names ``cases/``; nothing is written."""
    done = subprocess.run(
        [*modes_bind_root(), sys.executable, "-c", SAVE_AFTER_A_RUN, hello, PY],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    no_traceback(done)
    assert done.stdout.splitlines() == [f"the run was not kept as case kept: {hello / 'cases'}: Permission denied"]
    assert sorted(p.name for p in (hello / "cases").iterdir()) == ["good"]


@pytest.mark.parametrize("read_only", ["cases", "task"])
def test_a_task_that_cannot_be_written_is_refused_before_the_run(env, hello, read_only):
    """``cases/`` (or the task folder, which has none yet) read-only: the whole verifier ran, and only
    then was it said that the case could not be kept (naming, at first, a hidden scratch folder the
    user never saw). It is said before anything runs, in one line naming the folder, exit 2."""
    if read_only == "task":
        shutil.rmtree(hello / "cases")
    folder = hello / "cases" if read_only == "cases" else hello
    folder.chmod(0o555)
    tool = [*modes_bind_root(), *TOOL]
    done = run_tool(env, "run", hello, "--save-case", "kept", "--python", PY, tool=tool)
    no_traceback(done)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines() == [
        f"verifier-tui: --save-case kept: {folder} cannot be written (permission denied): no case can be kept there"
    ]
    assert not (hello / "cases" / "kept").exists()


def test_a_run_on_an_empty_scratch_workspace_is_kept_saying_so(env, tmp_path):
    """No case and no workspace chosen, the run's header names its workspace "an empty scratch
    folder"; kept, the note said "the run had no workspace", as if it had run on none."""
    task = make_task(tmp_path / "bare", "def verify(workspace):\n    return 0.0\n")
    done = run_tool(env, "run", task, "--save-case", "nothing", "--python", PY, cwd=tmp_path)
    no_traceback(done)
    assert done.returncode == 0, done.stderr
    said = done.stdout.splitlines()
    assert "  the run's workspace was an empty scratch folder: the case's is empty too" in said, said
    assert not any("had no workspace" in line for line in said), said
    assert tree(task / "cases" / "nothing") == {"expected.json": b'{"rewards": {"reward": 0.0}}\n'}


def _removed_while_held(env, tmp_path, where, args, gone):
    """``run ARGS`` held at ``where`` (waiting on a FIFO there) while the folder ``gone`` is removed, then
    let go: its exit code and stdout, after checking it printed no traceback."""
    fifo = tmp_path / "held"
    os.mkfifo(fifo)
    proc = subprocess.Popen(
        held_at(where, fifo, "before") + ["run", *(str(a) for a in args), "--python", PY],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_waiting_in(proc, "wait_for_partner")
        shutil.rmtree(gone)
        with open(fifo, "w"):  # the save goes on
            pass
        out, err = proc.communicate(timeout=HANG_GUARD_S)
    finally:
        proc.kill()
        proc.wait()
    assert "Traceback" not in err, err
    return proc.returncode, out


def test_a_run_whose_workspace_is_gone_since_is_not_kept(env, hello, tmp_path):
    """The run's workspace deleted between the run and the save (the save waits on a FIFO here): the
    case was written with an empty workspace beside the verdict of a run that read hello.txt
    (reward 1.0), and its note named the workspace by its absolute path. The save is refused, in one
    line naming the workspace as the run's header does, and nothing is written."""
    args = [hello, "--case", "good", "--save-case", "kept"]
    code, out = _removed_while_held(
        env, tmp_path, "verifier_tui.engine.keep_case:save", args, hello / "cases/good/workspace"
    )
    assert code == 2 and 'verdict: {"reward": 1.0}' in out, out
    assert out.splitlines()[-1] == (
        "the run was not kept as case kept: the run's workspace, hello/cases/good/workspace, is no longer a "
        "folder: a case of it would hold none of the files the run's verdict came from"
    ), out
    assert sorted(p.name for p in (hello / "cases").iterdir()) == ["good"]  # nor a scratch folder left


@pytest.mark.parametrize("had_cases", [True, False])
def test_a_workspace_gone_while_the_case_is_copied_keeps_no_case(env, tmp_path, had_cases):
    """The workspace deleted after the check that it is a folder, as the copy starts (the save waits on a
    FIFO there): the copy found nothing and said no failure, so the run was kept, exit 0, as a case with
    an empty workspace/ beside the verdict of a run that read hello.txt, its note naming the workspace
    by its absolute path. The save is refused as one whose workspace was gone before it, and nothing of
    the case is left: neither its hidden folder nor a cases/ folder it made."""
    task = make_task(tmp_path / "hello", SAYS_HI)
    workspace = write(tmp_path / "ws" / "hello.txt", "hi").parent
    if had_cases:
        write(task / "cases" / "other" / "workspace" / "hello.txt", "hi")
    before = sorted(p.name for p in task.iterdir())
    args = [task, "--workspace", workspace, "--save-case", "kept"]
    code, out = _removed_while_held(env, tmp_path, "verifier_tui.engine.keep_case:_fill", args, workspace)
    assert code == 2 and 'verdict: {"reward": 1.0}' in out, out
    assert out.splitlines()[-1] == (
        "the run was not kept as case kept: the run's workspace, ws, is no longer a "
        "folder: a case of it would hold none of the files the run's verdict came from"
    ), out
    assert sorted(p.name for p in task.iterdir()) == before
    if had_cases:
        assert sorted(p.name for p in (task / "cases").iterdir()) == ["other"]
