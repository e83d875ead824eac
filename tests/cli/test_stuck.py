"""run, test and watch say where a verifier that timed out was stuck."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from tests.helpers.commands import no_traceback, run_tool, start_watch, stop
from tests.helpers.tasks import PY, make_task, stuck_task, write
from verifier_tui.engine.sandbox.isolation import VARIABLE


def stuck_task_with_a_case(root):
    """The stuck verifier with one case, which expects it to pass."""
    task_dir = stuck_task(root, cases={"only": {"a.txt": "a\n"}})
    write(task_dir / "cases" / "only" / "expected.json", '{"rewards": {"reward": 1.0}}')
    return task_dir


def test_run_says_where_it_was_stuck_and_shows_the_stack(env, tmp_path, sandbox):
    env = dict(env, **{VARIABLE: sandbox})
    task_dir = stuck_task_with_a_case(tmp_path / "tasks" / "slow")
    done = run_tool(env, "run", task_dir, "--timeout", "1", "--python", PY, cwd=task_dir.parent)
    assert done.returncode == 124
    lines = done.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("timed out after 1 s · "))
    assert lines[at + 1] == "stuck at slow/tests/helpers.py:6 in wait_for_file"
    stack = lines[next(i for i, line in enumerate(lines) if "stack at the timeout" in line) :]
    assert f'  File "{task_dir / "tests" / "helpers.py"}", line 6 in wait_for_file' in stack
    no_traceback(done)


def test_run_json_has_stuck_at_and_the_stack(env, tmp_path, sandbox):
    env = dict(env, **{VARIABLE: sandbox})
    task_dir = stuck_task_with_a_case(tmp_path / "tasks" / "slow")
    data = json.loads(run_tool(env, "run", "--json", task_dir, "--timeout", "1", "--python", PY).stdout)
    helpers = str(task_dir / "tests" / "helpers.py")
    assert data["stuck_at"] == {"path": helpers, "line": 6, "function": "wait_for_file"}
    assert f'File "{task_dir / "tests" / "verifier.py"}", line 7 in verify' in data["stack"]
    assert data["stack_unavailable"] is None
    assert "most recent call first" not in data["stderr"]


def test_test_says_where_a_timed_out_case_was_stuck(env, tmp_path):
    task_dir = stuck_task_with_a_case(tmp_path / "tasks" / "slow")
    done = run_tool(env, "test", task_dir, "--timeout", "1", "--python", PY, cwd=task_dir.parent)
    assert done.returncode == 1
    assert "only: stuck at slow/tests/helpers.py:6 in wait_for_file" in done.stdout.splitlines()


def test_junit_failure_says_where_a_timed_out_case_was_stuck(env, tmp_path):
    """The text said where the case was stuck; the JUnit failure a CI page shows said only
    "timed out", with an empty body (the stuck runner wrote no stderr)."""
    task_dir = stuck_task_with_a_case(tmp_path / "tasks" / "slow")
    junit = tmp_path / "report.xml"
    done = run_tool(env, "test", task_dir, "--timeout", "1", "--python", PY, "--junit", junit, cwd=task_dir.parent)
    assert done.returncode == 1
    failure = ET.parse(junit).getroot().find("testcase/failure")
    assert failure is not None and "stuck at slow/tests/helpers.py:6 in wait_for_file" in (failure.text or "")


def test_watch_says_where_a_timed_out_run_was_stuck(env, tmp_path):
    task_dir = stuck_task_with_a_case(tmp_path / "tasks" / "slow")
    proc, reader = start_watch(env, task_dir, "--timeout", "1", "--python", PY, cwd=task_dir.parent)
    try:
        first = reader.next_run()
        assert "timed out" in first
        assert reader.next().strip() == "stuck at slow/tests/helpers.py:6 in wait_for_file"
    finally:
        stop(proc)


def test_a_hung_import_says_so(env, tmp_path):
    task_dir = make_task(
        tmp_path / "tasks" / "hangs", "import time\ntime.sleep(300)\n\ndef verify(workspace):\n    return 1.0\n"
    )
    done = run_tool(env, "run", task_dir, "--timeout", "1", "--python", PY, cwd=task_dir.parent)
    assert "stuck at hangs/tests/verifier.py:2, in top-level code: importing it never finished" in done.stdout


def test_a_flood_of_stderr_is_said_as_what_lost_the_stack_not_a_signal_handler(env, tmp_path):
    task_dir = make_task(
        tmp_path / "flood",
        """
        import sys

        def verify(workspace):
            while True:
                sys.stderr.write("flood " + "y" * 200 + "\\n")
        """,
    )
    data = json.loads(run_tool(env, "run", "--json", task_dir, "--timeout", "1", "--python", PY).stdout)
    assert data["outcome"] == "timed_out"
    if data["stack"] is None:  # the dump, pushed out of the kept end of stderr
        assert data["stack_unavailable"].startswith("the runner's stack is not in what was kept of stderr"), data
        assert "does the verifier handle" not in data["stack_unavailable"]


def test_a_forged_stack_line_past_pythons_digit_limit_is_no_traceback(env, tmp_path):
    """stderr is the verifier's to write: a stack dump of its own, its frame naming a line of 5,000
    digits (``int()`` refuses text past 4,300), then stuck: the timed-out run ended in the tool's
    ValueError instead of saying where it was stuck."""
    task_dir = make_task(
        tmp_path / "forged",
        """
        import sys, time

        def verify(workspace):
            sys.stderr.write("Current thread 0x00007f (most recent call first):\\n")
            sys.stderr.write('  File "/tests/verifier.py", line ' + "9" * 5000 + " in verify\\n\\n")
            sys.stderr.flush()
            time.sleep(60)
        """,
    )
    done = run_tool(env, "run", "--json", task_dir, "--timeout", "1", "--python", PY)
    no_traceback(done)
    data = json.loads(done.stdout)
    assert data["outcome"] == "timed_out"
    assert data["stuck_at"] is None or "9" * 5000 not in json.dumps(data["stuck_at"]), data["stuck_at"]


def test_a_stack_frame_with_a_line_no_file_has_is_still_where_it_was_stuck(env, tmp_path):
    """The verifier's own stack dump (SIGUSR1 ignored, so the runner's never comes) names, innermost,
    tests/helper.py at a line past ten digits: that frame ended the dump's reading, so where the run was
    stuck was lost (or blamed on the frame that called it). The frame is kept, its line unknown."""
    task_dir = make_task(
        tmp_path / "forged",
        """
        import os, signal, sys, time

        def verify(workspace):
            signal.signal(signal.SIGUSR1, signal.SIG_IGN)
            here = os.path.dirname(__file__)
            sys.stderr.write("Current thread 0x00007f (most recent call first):\\n")
            sys.stderr.write('  File "' + here + '/helper.py", line ' + "9" * 5000 + " in check\\n")
            sys.stderr.write('  File "' + here + '/verifier.py", line 8 in verify\\n\\n')
            sys.stderr.flush()
            time.sleep(60)
        """,
        files={"helper.py": "def check():\n    while True:\n        pass\n"},
    )
    done = run_tool(env, "run", "--json", task_dir, "--timeout", "1", "--python", PY)
    no_traceback(done)
    data = json.loads(done.stdout)
    assert data["stuck_at"] == {"path": str(task_dir / "tests" / "helper.py"), "line": None, "function": "check"}
    said = run_tool(env, "run", task_dir, "--timeout", "1", "--python", PY, cwd=tmp_path).stdout
    assert "stuck at forged/tests/helper.py in check\n" in said, said
