"""A task from someone else, with a FIFO (a named pipe) where a file should
be: said in one line and refused, never waited on for ever, never taken for
"no such file" (which would run with defaults and lose the case's
expectation)."""

from __future__ import annotations

import json
import os

import pytest

from tests.helpers.commands import no_traceback, run_tool, start_watch, stop
from tests.helpers.tasks import PY, make_task

BOUND_S = 60  # a FIFO opened for reading waits for ever: a bound far above any run here
VERIFIER = (
    "import json\n"
    "def verify(workspace, task_data, response=None):\n"
    "    return 1.0 if (workspace / 'hello.txt').read_text() == 'hi' else 0.0\n"
)
FIFO_WORDS = "is a FIFO (a named pipe), not a regular file"


def command(env, *args, cwd):
    done = run_tool(env, *args, "--python", PY, cwd=cwd, timeout_s=BOUND_S)
    no_traceback(done)
    return done


@pytest.fixture
def task(tmp_path):
    root = make_task(tmp_path / "demo", VERIFIER, cases={"good": {"hello.txt": "hi"}})
    (root / "cases" / "good" / "expected.json").write_text(json.dumps({"rewards": {"reward": 1.0}}))
    (root / "cases" / "good" / "task_data.json").write_text("{}")
    (root / "cases" / "good" / "response.json").write_text('{"output": []}')
    return root


def fifo(path):
    path.unlink(missing_ok=True)
    os.mkfifo(path)


def test_a_fifo_task_toml_is_said_and_the_run_is_not_harbors(task, env, tmp_path):
    fifo(task / "task.toml")
    done = command(env, "run", task, cwd=tmp_path)
    assert f"task.toml {FIFO_WORDS}: Harbor's read_text() would block on it; not read, so nothing is run" in done.stderr
    assert done.returncode == 2 and "Harbor would refuse" not in done.stdout + done.stderr  # it would wait on it


@pytest.mark.parametrize("name", ["response.json", "task_data.json"])
def test_a_fifo_input_of_a_case_refuses_the_run_in_one_line(name, task, env, tmp_path):
    fifo(task / "cases" / "good" / name)
    done = command(env, "run", task, "--case", "good", cwd=tmp_path)
    assert f"{name} {FIFO_WORDS}: the run cannot read it" in done.stdout
    assert done.returncode != 0
    assert "reward" not in done.stdout.split("could not start", 1)[-1].splitlines()[0]


def test_a_fifo_expected_json_fails_test_instead_of_vanishing(task, env, tmp_path):
    fifo(task / "cases" / "good" / "expected.json")
    done = command(env, "test", task, cwd=tmp_path)
    assert f"expected.json {FIFO_WORDS}" in done.stdout + done.stderr
    assert done.returncode != 0  # a case whose expectation cannot be read is a broken test, not a pass


def test_a_fifo_among_the_tests_files_does_not_hang_discovery(task, env, tmp_path):
    os.mkfifo(task / "tests" / "helper.py")
    done = command(env, "run", task, "--case", "good", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "reward.txt: 1.0" in done.stdout


@pytest.mark.parametrize(
    "make, what", [(os.mkfifo, "a FIFO (a named pipe)"), (os.mkdir, "a folder")], ids=["fifo", "folder"]
)
def test_a_verifier_py_that_is_no_file_is_named_in_no_verifier_found(make, what, task, env, tmp_path):
    """``tests/verifier.py`` a FIFO or a folder: "no verifier found: looked in tests for a .py file"
    and no more, while the author sees tests/verifier.py there (a link to one was explained)."""
    (task / "tests" / "verifier.py").unlink()
    make(task / "tests" / "verifier.py")
    for args in (["run", task], ["test", task], ["explain", task]):
        done = command(env, *args, cwd=tmp_path)
        assert done.returncode == 2
        assert "no verifier found for demo: looked in " in done.stderr, done.stderr
        assert f"; tests/verifier.py is {what}, not a file: make it a file of the task's own" in done.stderr


def test_a_fifo_tasks_jsonl_is_said(task, env, tmp_path):
    fifo(task / "tasks.jsonl")
    done = command(env, "explain", task, cwd=tmp_path)
    assert f"tasks.jsonl {FIFO_WORDS}" in done.stdout + done.stderr


@pytest.mark.parametrize(
    "make, what",
    [
        (lambda ws: ws.write_text("a file"), "not a folder"),
        (lambda ws: ws.symlink_to("/etc/passwd"), "a link that leads to no folder"),
        (lambda ws: ws.symlink_to(ws), "a link that leads to no folder"),  # a loop
    ],
)
def test_a_case_workspace_that_is_no_folder_is_said_as_the_cases(make, what, task, env, tmp_path):
    """Not silently an empty workspace, and never "no case chosen": the case was."""
    workspace = task / "cases" / "good" / "workspace"
    for item in workspace.iterdir():
        item.unlink()
    workspace.rmdir()
    make(workspace)
    done = command(env, "run", task, "--case", "good", cwd=tmp_path)
    assert f"note: case good: its workspace is {what}: the verifier runs on an empty scratch workspace" in done.stdout
    assert "no case and no workspace chosen" not in done.stdout


HUGE = "1" + "0" * 400  # an integer past any float: valid JSON, and Harbor keeps it as an int


def test_a_reward_file_holding_an_integer_past_any_float_is_judged_without_a_traceback(env, tmp_path):
    """The verifier writes it itself and ends before the runner could refuse
    it: comparing it with expected.json raised OverflowError."""
    task = make_task(
        tmp_path / "t",
        f"""
        import os

        def verify(workspace):
            with open("/logs/verifier/reward.json", "w") as handle:
                handle.write('{{"reward": {HUGE}}}')
            os._exit(0)
        """,
        cases={"only": {}},
    )
    (task / "cases" / "only" / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    for args, code in ((["run", "--json"], 0), (["test"], 1)):  # run ends as the runner did; test as the cases did
        done = run_tool(env, *args, task, "--python", PY)
        no_traceback(done)
        assert done.returncode == code, done.stdout + done.stderr
    assert json.loads(run_tool(env, "run", "--json", task, "--python", PY).stdout)["expected_matched"] is False


def test_an_expected_json_reward_past_any_float_is_an_expectation_the_case_misses(env, tmp_path):
    """An int of 400 digits is a reward Harbor takes from reward.json, so
    expected.json may hold one: a verifier scoring 1.0 misses it, and the
    other cases are judged as ever."""
    task = make_task(tmp_path / "t", "def verify(workspace):\n    return 1.0\n", cases={"odd": {}, "fine": {}})
    (task / "cases" / "odd" / "expected.json").write_text(f'{{"rewards": {{"reward": {HUGE}}}}}')
    (task / "cases" / "fine" / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    done = run_tool(env, "test", task, "--python", PY)
    no_traceback(done)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "✗  odd" in done.stdout and "✓  fine" in done.stdout and "1 passed, 1 failed" in done.stdout, done.stdout


def test_a_run_that_could_not_start_matches_no_expected_exit_code(env, tmp_path):
    """A task.toml env value past what one exec may carry (128 KiB): the sandbox could not start the
    runner, its own exit 1 was kept as the run's, and a case expecting ``{"exit_code": 1}`` (the verifier
    raises) passed, ``test`` green, though ``run`` said "the verifier was not run"."""
    toml = '[verifier]\nenv = { BIG = "' + "a" * 200_000 + '" }\n'
    verifier = "def verify(workspace):\n    raise ValueError('never here')\n"
    task = make_task(tmp_path / "t", verifier, toml=toml, cases={"raises": {}})
    (task / "cases" / "raises" / "expected.json").write_text('{"exit_code": 1}')
    done = run_tool(env, "test", task, "--python", PY)
    no_traceback(done)
    assert done.returncode != 0 and "0 passed, 1 failed" in done.stdout, done.stdout + done.stderr
    assert "could not start" in done.stdout
    alone = run_tool(env, "run", task, "--case", "raises", "--python", PY)
    assert 'expected {"exit_code": 1}: DID NOT MATCH' in alone.stdout, alone.stdout


def test_a_run_that_could_not_start_says_why_it_missed_its_expected_json(env, tmp_path):
    """After the fix above, ``run`` said ``expected {"exit_code": 1}: DID NOT MATCH`` with no reason, and
    ``test``'s table and JUnit message read ``expected exit 1, got exit 1 · could not start``: the exit
    code the case expected, as the one it got (the sandbox's own 1). Each face says why the verifier was not run."""
    import xml.etree.ElementTree as ET

    toml = '[verifier]\nenv = { BIG = "' + "a" * 200_000 + '" }\n'
    task = make_task(tmp_path / "t", "def verify(workspace):\n    raise ValueError\n", toml=toml, cases={"raises": {}})
    (task / "cases" / "raises" / "expected.json").write_text('{"exit_code": 1}')
    why = "the verifier was not run: could not set up the run's sandbox: "
    alone = run_tool(env, "run", task, "--case", "raises", "--python", PY)
    assert f'expected {{"exit_code": 1}}: DID NOT MATCH: {why}' in alone.stdout, alone.stdout
    report = tmp_path / "report.xml"
    done = run_tool(env, "test", task, "--python", PY, "--junit", report)
    no_traceback(done)
    started = "could not start: could not set up the run's sandbox: "
    assert started in done.stdout and "exit 1 · could not start" not in done.stdout, done.stdout
    [failure] = ET.parse(report).iter("failure")
    assert failure.get("message").startswith(f"expected exit 1, got {started}"), failure.get("message")
    [case] = json.loads(run_tool(env, "test", task, "--python", PY, "--json").stdout)["cases"]
    assert case["expected_matched"] is False and case["expected_missed"].startswith(why), case["expected_missed"]


def test_an_env_name_no_environment_can_hold_is_said_and_the_run_goes_on(env, tmp_path):
    # 'A=B' made the run 'could not start: /usr/bin/sh: illegal environment variable name'.
    task = make_task(tmp_path / "t", "def verify(workspace):\n    return 1.0\n")
    (task / "task.toml").write_text('version = "1.0"\n\n[verifier]\nenv = { "A=B" = "x", KEPT = "1" }\n')
    done = run_tool(env, "run", task, "--json", "--python", PY)
    no_traceback(done)
    data = json.loads(done.stdout)
    assert done.returncode == 0 and data["rewards"] == {"reward": 1.0}, done.stdout
    assert any("'A=B' = 'x' cannot be in an environment" in notice for notice in data["notices"]), data["notices"]


def test_watch_goes_on_when_task_toml_becomes_a_fifo(task, env, tmp_path):
    """The next run compared the run held ready for it by task.toml's bytes, opened as a file:
    on a FIFO that open waited for ever, in a thread Ctrl+C waits for, so ``watch`` (and the
    TUI) stopped running and could not be stopped."""
    proc, reader = start_watch(env, task, "--case", "good", "--python", PY, cwd=tmp_path)
    try:
        assert "reward 1" in reader.next_run()
        fifo(task / "task.toml")
        again = reader.next_run(within_s=BOUND_S)
    finally:
        code, stderr = stop(proc)
    assert again.split()[2] == "task.toml"  # the run its change asked for
    assert code == 0 and "Traceback" not in stderr
