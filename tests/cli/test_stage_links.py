"""A verifier turns its own stage against the user.

In the copy sandbox a verifier reaches the whole stage (``Path(workspace).parent``
is the stage): it can leave a link, or a rewritten file, wherever the tool
writes, copies or deletes when it stages the *next* run (``test``'s next case,
``watch``'s next save, ``run --both-modes``' second mode). Each test here is a
verifier doing that in one case, through the real command line, the real
runner and real subprocesses; the next case must neither write nor delete
the user's files, nor run a runner the verifier changed, nor stop the command.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers.commands import run_tool, start_watch, stop
from tests.helpers.tasks import PY, make_task
from verifier_tui.runner_source import EXTRAS

#: The verifier of every case below. A case's ``plant.json`` lists
#: ``[path in the stage, link target]``: each path is replaced by a link to its
#: target after the case has been judged. Where the stage cannot be reached (a
#: namespace that shows the verifier only its own folders) or written, it says
#: so and goes on: what is tested is what happens to the user's files.
PLANTER = """
import json, os, shutil
from pathlib import Path

def verify(workspace):
    ws = Path(workspace)
    stage = ws.parent
    plan = ws / "plant.json"
    if plan.exists():
        for rel, target in json.loads(plan.read_text()):
            where = stage / rel
            try:
                if where.is_dir() and not where.is_symlink():
                    shutil.rmtree(where)
                elif os.path.lexists(where):
                    where.unlink()
                where.parent.mkdir(parents=True, exist_ok=True)
                os.symlink(target, where)
            except OSError as exc:
                print("could not plant", rel, exc)
    if (ws / "raise.txt").exists():
        raise RuntimeError("this case's verifier raises")
    return 1.0
"""

PASS = '{"rewards": {"reward": 1.0}}'


def _case(task: Path, name: str, files: dict[str, str], expected: str = PASS, **beside: str) -> Path:
    workspace = task / "cases" / name / "workspace"
    workspace.mkdir(parents=True)
    for rel, text in files.items():
        (workspace / rel).write_text(text)
    (task / "cases" / name / "expected.json").write_text(expected)
    for name_beside, text in beside.items():
        (task / "cases" / name / name_beside.replace("_", ".", 1)).write_text(text)
    return workspace


def _rows(stdout: str) -> dict[str, str]:
    """The table's rows by case: {case: mark}."""
    return {line.split()[1]: line[0] for line in stdout.splitlines() if line[:1] in "✓✗!" and len(line.split()) > 1}


def _test(env, task: Path) -> tuple[int, str, dict[str, str]]:
    # one job: the cases take turns in two stages (the next is staged while one runs)
    done = run_tool(env, "test", task, "-j", "1", "--python", PY)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout + done.stderr, _rows(done.stdout)


@pytest.fixture
def env(env, sandbox):
    """The user's environment with the sandbox under test chosen (``env``
    copies the environment before ``sandbox`` may have set it)."""
    env["VERIFIER_TUI_SANDBOX"] = sandbox
    return env


@pytest.fixture
def home(tmp_path, env):
    """A home folder of the test's own, with a ``.bashrc`` to stand for the user's."""
    folder = tmp_path / "home"
    folder.mkdir()
    (folder / ".bashrc").write_text("export PS1='mine'\n")
    env["HOME"] = str(folder)
    return folder


def test_the_runner_replaced_by_a_link_to_bashrc_writes_nothing_there(env, sandbox, home, tmp_path):
    task = make_task(tmp_path / "tasks" / "t", PLANTER)
    bashrc = home / ".bashrc"
    _case(task, "a-plant", {"plant.json": json.dumps([["tests/.ng/run_verifier.py", str(bashrc)]])})
    for name in ("b-next", "c-next", "d-next"):  # staged while the one before runs: two stages take turns
        _case(task, name, {"x.txt": "x"})
    code, out, rows = _test(env, task)
    assert bashrc.read_text() == "export PS1='mine'\n"
    assert rows == {"a-plant": "✓", "b-next": "✓", "c-next": "✓", "d-next": "✓"}, out
    assert code == 0, out


@pytest.mark.parametrize("link", ["inputs/response.json", "inputs/task_data.json"])
def test_inputs_replaced_by_links_to_the_users_files_write_nothing_there(env, sandbox, tmp_path, link):
    """The staged response and task data: links to another case's workspace
    file, to task.toml and to tasks.jsonl, each left for the next case."""
    task = make_task(tmp_path / "tasks" / "t", PLANTER)
    (task / "tasks.jsonl").write_text(
        '{"task_id": "b-next", "task_data": {"n": 1}}\n'
        '{"task_id": "c-next", "task_data": {"n": 2}}\n'
        '{"task_id": "d-next", "task_data": {"n": 3}}\n'
    )
    other = _case(task, "z-other", {"keep.txt": "the other case's file\n"})
    targets = [other / "keep.txt", task / "task.toml", task / "tasks.jsonl"]
    before = {path: path.read_bytes() for path in targets}
    for index, (name, target) in enumerate(zip(["a-plant", "b-next", "c-next"], targets, strict=True)):
        _case(task, name, {"plant.json": json.dumps([[link, str(target)]])}, response_txt=f"answer {index}")
    _case(task, "d-next", {"x.txt": "x"}, response_txt="last")
    code, out, rows = _test(env, task)
    assert {path: path.read_bytes() for path in targets} == before
    assert set(rows.values()) == {"✓"} and len(rows) == 5, out
    assert code == 0, out


def test_the_overlay_replaced_by_a_link_to_a_read_only_folder_deletes_nothing_there(env, sandbox, tmp_path):
    """``overlay`` (whose ``upper`` is emptied before a namespace's run) and
    ``inputs`` made links to a folder of the user's the verifier could only
    read: the tool, which may write there, must not empty it for the next run."""
    if sandbox == "copy":
        pytest.skip("the copy sandbox has no overlay; its mirror: tests/engine/test_stage_links.py")
    task = make_task(tmp_path / "tasks" / "t", PLANTER)
    mine = tmp_path / "mine"
    for name in ("upper", "work"):
        (mine / name).mkdir(parents=True)
        (mine / name / "precious.txt").write_text("keep me\n")
    (mine / "precious.txt").write_text("keep me\n")
    _case(
        task, "a-plant", {"plant.json": json.dumps([["overlay", str(mine)], ["inputs", str(mine)]])}, response_txt="r"
    )
    for name in ("b-next", "c-next", "d-next"):
        _case(task, name, {"x.txt": "x"}, response_txt="r")
    folders = (mine, mine / "upper", mine / "work")
    for folder in folders:
        os.chmod(folder, 0o555)
    try:
        code, out, rows = _test(env, task)
    finally:
        for folder in folders:
            os.chmod(folder, 0o755)
    assert sorted(p.relative_to(mine).as_posix() for p in mine.rglob("*")) == [
        "precious.txt",
        "upper",
        "upper/precious.txt",
        "work",
        "work/precious.txt",
    ]
    assert set(rows.values()) == {"✓"} and len(rows) == 4, out
    assert code == 0, out


FAKE_RUNNER = (
    "import os, sys\n"
    "d = sys.argv[sys.argv.index('--reward-dir') + 1]\n"
    "open(os.path.join(d, 'reward.txt'), 'w').write('1')\n"
    "os._exit(0)\n"
)

REWRITER = PLANTER.replace(
    '    if (ws / "raise.txt")',
    """\
    runner = stage / "tests" / ".ng" / "run_verifier.py"
    if (ws / "rewrite.txt").exists():
        st = runner.stat()
        fake = FAKE.encode()
        fake += b"#" * (st.st_size - len(fake))
        with open(runner, "r+b") as handle:
            handle.write(fake)
        os.utime(runner, ns=(st.st_atime_ns, st.st_mtime_ns))
    if (ws / "raise.txt")""",
).replace("import json, os, shutil", f"import json, os, shutil\nFAKE = {FAKE_RUNNER!r}")


@pytest.mark.parametrize("name", ["run_verifier.py", EXTRAS])
def test_a_runner_rewritten_in_place_keeping_size_and_time_never_runs_again(env, sandbox, tmp_path, name):
    task = make_task(tmp_path / "tasks" / "t", REWRITER.replace('"run_verifier.py"', repr(name)))
    _case(task, "a-rewrite", {"rewrite.txt": ""})
    for name in ("b-raises", "c-raises", "d-raises"):
        _case(task, name, {"raise.txt": ""})
    code, out, rows = _test(env, task)
    # /tests is writable in either sandbox, as in Harbor's: the rewrite itself goes through.
    assert rows == {"a-rewrite": "✓", "b-raises": "✗", "c-raises": "✗", "d-raises": "✗"}, out
    assert "this case's verifier raises" in out
    assert code == 1


@pytest.mark.parametrize("where", ["tests/.ng/run_verifier.py", "inputs/response.json"])
def test_a_dangling_link_left_in_the_stage_fails_no_case(env, sandbox, tmp_path, where):
    task = make_task(tmp_path / "tasks" / "t", PLANTER)
    nowhere = tmp_path / "no-such-folder" / "no-such-file"
    _case(task, "a-plant", {"plant.json": json.dumps([[where, str(nowhere)]])}, response_txt="r")
    for name in ("b-next", "c-next", "d-next"):
        _case(task, name, {"x.txt": "x"}, response_txt="r")
    code, out, rows = _test(env, task)
    assert rows == {"a-plant": "✓", "b-next": "✓", "c-next": "✓", "d-next": "✓"}, out
    assert code == 0, out
    assert not nowhere.parent.exists()


IMMUTABLE = PLANTER.replace(
    '    if (ws / "raise.txt")',
    """\
    if (ws / "stuck.txt").exists():
        stuck = stage / "inputs" / "stuck"
        stuck.write_text("")
        import subprocess
        subprocess.run(["chattr", "+i", str(stuck)], check=True)
    if (ws / "raise.txt")""",
)


def test_a_stage_the_tool_cannot_put_right_fails_one_case_in_one_line(env, sandbox, tmp_path):
    """A file made immutable (``chattr +i``, as root) in the stage: that stage
    cannot be emptied. The case staged there next fails to start, saying why
    in one line; the stage is left for a new one and every other case runs."""
    if sandbox == "namespace":
        pytest.skip("in a namespace the verifier is no root of the stage's file system: it cannot chattr")
    if os.geteuid() != 0 or shutil.which("chattr") is None:
        pytest.skip("needs root and chattr to make a file the tool cannot remove")
    task = make_task(tmp_path / "tasks" / "t", IMMUTABLE)
    _case(task, "a-stuck", {"stuck.txt": ""})
    for name in ("b-next", "c-next", "d-next", "e-next"):
        _case(task, name, {"x.txt": "x"})
    try:
        code, out, rows = _test(env, task)
    finally:
        subprocess.run(["chattr", "-R", "-i", env["TMPDIR"]], capture_output=True)
    failed = [name for name, mark in rows.items() if mark != "✓"]
    assert len(rows) == 5 and len(failed) == 1 and failed[0] != "a-stuck", out
    said = [line for line in out.splitlines() if "could not stage the run" in line]
    assert len(said) == 1 and "could not stage the run: inputs/stuck: it cannot be removed" in said[0], out
    assert code == 1


def test_watch_goes_on_after_a_run_left_a_dangling_link(env, sandbox, tmp_path):
    task = make_task(tmp_path / "tasks" / "t", PLANTER)
    nowhere = tmp_path / "no-such-folder" / "no-such-file"
    plant = [["tests/.ng/run_verifier.py", str(nowhere)], ["inputs", str(nowhere)]]
    workspace = _case(task, "only", {"plant.json": json.dumps(plant)})
    proc, reader = start_watch(env, task, "--case", "only", "--python", PY)
    try:
        assert "reward 1" in reader.next_run()
        (workspace / "x.txt").write_text("a save")
        second = reader.next_run()
        assert second.startswith("#2") and "reward 1" in second, second
        (workspace / "x.txt").write_text("another save")
        assert "reward 1" in reader.next_run()
    finally:
        code, stderr = stop(proc)
    assert code == 0 and "Traceback" not in stderr, stderr
    assert not nowhere.parent.exists()


def test_both_modes_second_mode_writes_nothing_through_the_first_ones_links(env, sandbox, home, tmp_path):
    task = make_task(tmp_path / "tasks" / "t", PLANTER)
    bashrc = home / ".bashrc"
    plant = [["tests/.ng/run_verifier.py", str(bashrc)], ["inputs/response.json", str(task / "task.toml")]]
    _case(task, "only", {"plant.json": json.dumps(plant)}, response_json='{"output": []}')
    toml = (task / "task.toml").read_bytes()
    done = run_tool(env, "run", task, "--case", "only", "--both-modes", "--python", PY)
    assert "Traceback" not in done.stderr, done.stderr
    assert bashrc.read_text() == "export PS1='mine'\n"
    assert (task / "task.toml").read_bytes() == toml
    assert done.stdout.count("exit 0") == 2, done.stdout


def test_watch_starts_no_run_for_what_lies_behind_a_link_in_the_workspace(env, tmp_path):
    """A link in the workspace to the folder the tool keeps its scratch in
    (an agent's ``tmp -> /tmp``): the OS watch follows it, each run's scratch
    was a change there, and watch ran again and again. The run copies the
    link as a link: what lies behind it is not what it reads."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    task = make_task(tmp_path / "tasks" / "t", "def verify(workspace):\n    return 1.0\n")
    workspace = _case(task, "only", {"a.txt": "a"})
    (workspace / "tmp").symlink_to(scratch)
    proc, reader = start_watch(env | {"TMPDIR": str(scratch)}, task, "--case", "only", "--python", PY)
    try:
        assert reader.next_run().startswith("#1")
        (workspace / "a.txt").write_text("a save")  # the next run is this one, not one after the first
        assert "workspace/a.txt" in reader.next_run()
        (scratch / "elsewhere.txt").write_text("not the workspace's")
        (workspace / "a.txt").write_text("another save")
        third = reader.next_run()
        assert third.startswith("#3") and "workspace/a.txt" in third, third
    finally:
        code, stderr = stop(proc)
    assert code == 0 and "Traceback" not in stderr, stderr


def test_watch_follows_a_case_workspace_replaced_by_a_link(env, tmp_path):
    """The case's workspace folder replaced by a link to another folder of
    the task: the runs read what the link leads to, so watch follows it there.
    It went on running a copy of the old folder, scoring it as before."""
    task = make_task(
        tmp_path / "tasks" / "t", "def verify(workspace):\n    return float((workspace / 'a.txt').read_text())\n"
    )
    elsewhere = task / "data" / "elsewhere"
    elsewhere.mkdir(parents=True)
    (elsewhere / "a.txt").write_text("1.0")
    workspace = _case(task, "only", {"a.txt": "1.0"})
    proc, reader = start_watch(env, task, "--case", "only", "--python", PY)
    try:
        assert "reward 1" in reader.next_run()
        shutil.rmtree(workspace)
        workspace.symlink_to(elsewhere)
        assert "reward 1" in reader.next_run()  # run once the watch follows the link: nothing after it is missed
        (elsewhere / "a.txt").write_text("0.5")
        assert "reward 0.5" in reader.next_run()
    finally:
        code, stderr = stop(proc)
    assert code == 0 and "Traceback" not in stderr, stderr


def test_a_case_folder_moved_away_edited_and_back_runs_on_its_new_files(env, example, tmp_path):
    """The staged copy took the watcher's word for what changed: nothing under
    the case folder while it was away, so the runs after it came back scored
    the old files."""
    task_dir = example("hello-file")
    case = task_dir / "cases" / "wrong-text"
    proc, reader = start_watch(env, "--json", task_dir, "--case", "wrong-text", "--python", PY)
    try:
        assert json.loads(reader.next_run(prefix="{"))["rewards"] == {"reward": 0.0}
        away = tmp_path / "away"
        case.rename(away)
        assert json.loads(reader.next_run(prefix="{"))["outcome"] == "could_not_start"
        (away / "workspace" / "hello.txt").write_text("hello world\n")
        away.rename(case)
        back = json.loads(reader.next_run(prefix="{"))
        assert back["rewards"] == {"reward": 1.0}, back
    finally:
        code, stderr = stop(proc)
    assert code == 0 and "Traceback" not in stderr


def test_a_link_out_of_the_tests_folder_is_said_as_out_of_the_tests_folder(env, tmp_path):
    task = make_task(tmp_path / "t", "def verify(workspace):\n    return 1.0\n")
    (task / "tests" / "helper.py").symlink_to("/etc/passwd")
    done = run_tool(env, "run", task, "--python", PY, cwd=tmp_path)
    notes = [line for line in done.stdout.splitlines() if "helper.py" in line]
    assert notes and all("outside the workspace" not in line for line in notes), done.stdout
    assert any("links outside its folder, tests (/etc/passwd)" in line for line in notes), notes


def test_test_says_the_note_that_explains_a_failed_case(env, tmp_path):
    """A helper linked out of tests/ (to a folder of the task: one out of the task Harbor refuses) is
    skipped with a note, and the verifier's import of it fails: run said the note, test and audit only
    the ModuleNotFoundError. A note every case has is said once for the task; one case's, on its line."""
    task = make_task(
        tmp_path / "t",
        "from helper import grade\n\ndef verify(workspace):\n    return grade()\n",
        cases={"right": {"answer.txt": "42"}, "wrong": {"answer.txt": "41"}},
    )
    (task / "cases" / "right" / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    (task / "cases" / "wrong" / "expected.json").write_text('{"rewards": {"reward": 0.0}}')
    shared = task / "shared" / "helper.py"
    shared.parent.mkdir()
    shared.write_text("def grade():\n    return 1.0\n")
    (task / "tests" / "helper.py").symlink_to(os.path.relpath(shared, task / "tests"))
    done = run_tool(env, "test", task, "--python", PY)
    assert done.returncode == 1, done.stdout
    lines = done.stdout.splitlines()
    skipped = "note: tests: skipped helper.py: it links outside its folder, tests (../shared/helper.py)"
    assert lines.count(skipped) == 1, done.stdout
    assert lines.index(skipped) < lines.index(next(line for line in lines if "ModuleNotFoundError" in line))
    audited = run_tool(env, "audit", task, "--python", PY)  # its case judged against fails the same way
    assert audited.returncode == 2 and audited.stdout.splitlines()[1:2] == [skipped], audited.stdout
    assert "(ModuleNotFoundError in the verifier): no probe was run" in audited.stdout.splitlines()[2]
    # One case's note: said for it when it failed, not for the case that passed.
    (task / "tests" / "helper.py").unlink()
    shutil.copy(shared, task / "tests" / "helper.py")
    os.mkfifo(task / "cases" / "wrong" / "workspace" / "pipe")
    done = run_tool(env, "test", task, "--python", PY)
    assert done.returncode == 1, done.stdout
    assert [line for line in done.stdout.splitlines() if "pipe" in line] == [
        "wrong: note: workspace: skipped pipe: it is a FIFO, not a file"
    ], done.stdout
