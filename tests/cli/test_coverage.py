"""``test --coverage``, ``run --coverage``, ``--json``'s coverage member and
``--coverage-report``'s LCOV, on a verifier whose branches are known and a
helper module beside it, with two cases that take different branches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.commands import documented_fields, no_traceback, run_tool
from tests.helpers.harbor import make_trial
from tests.helpers.tasks import PY, make_branchy_task, make_task

# The lines that can run (ALL), and those each case reaches: "right" the
# verifier's first two branches and scoring.full, "empty" the early return.
RIGHT = {"verifier.py": [1, 4, 5, 6, 8, 9, 10], "scoring.py": [1, 2, 5]}
EMPTY = {"verifier.py": [1, 4, 5, 6, 7], "scoring.py": [1, 5]}
ALL = {
    "scoring.py": [1, 2, 5, 6, 7, 8],
    "unused_helper.py": [1],
    "verifier.py": [1, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13],
}


def test_test_coverage_names_each_range_no_case_reached(env, tmp_path, sandbox):
    task = make_branchy_task(tmp_path / "task")
    done = run_tool(env, "test", task, "--coverage", "--python", PY, cwd=tmp_path)
    no_traceback(done)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    start = lines.index("coverage of 2 cases: 11 of 18 lines ran")
    assert lines[start + 1 :] == [
        'task/tests/scoring.py 6-8: if text.endswith("\\n"):',
        "task/tests/unused_helper.py 1: X = 1",
        'task/tests/verifier.py 11-13: if text.strip() == "42":',
        "2 passed, 0 failed",
    ]


def test_json_gives_each_cases_lines_and_their_union(env, tmp_path):
    task = make_branchy_task(tmp_path / "task")
    done = run_tool(env, "test", task, "--coverage", "--json", "--python", PY)
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads(done.stdout)["coverage"]
    assert data["problems"] == []

    def lines(ran: dict[str, list[int]]) -> dict[str, dict[str, list[int]]]:
        return {
            str(task / "tests" / name): {
                "executed": ran.get(name, []),
                "missing": sorted(set(can) - set(ran.get(name, []))),
            }
            for name, can in sorted(ALL.items())
        }

    assert documented_fields("## Coverage", "Each file:") == set(data)
    scoring = str(task / "tests" / "scoring.py")
    assert documented_fields("Each file:", "## The both-modes document") == set(data["files"][scoring])
    assert data["cases"] == {
        "task::empty": lines(EMPTY),
        "task::right": lines(RIGHT),
    }  # by the id each case has in "cases"
    union = {name: sorted(set(RIGHT[name]) | set(EMPTY[name])) for name in RIGHT}
    assert data["files"] == lines(union)


def test_the_lcov_report_has_every_line_that_can_run_with_the_users_paths(env, tmp_path):
    task = make_branchy_task(tmp_path / "task")
    report = tmp_path / "cov.info"
    done = run_tool(env, "test", task, "--coverage-report", report, "--python", PY)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "coverage of" not in done.stdout  # the report alone was asked for
    tests = task / "tests"
    assert report.read_text() == (
        f"TN:\nSF:{tests / 'scoring.py'}\nDA:1,1\nDA:2,1\nDA:5,1\nDA:6,0\nDA:7,0\nDA:8,0\n"
        "LF:6\nLH:3\nend_of_record\n"
        f"TN:\nSF:{tests / 'unused_helper.py'}\nDA:1,0\nLF:1\nLH:0\nend_of_record\n"
        f"TN:\nSF:{tests / 'verifier.py'}\n"
        "DA:1,1\nDA:4,1\nDA:5,1\nDA:6,1\nDA:7,1\nDA:8,1\nDA:9,1\nDA:10,1\nDA:11,0\nDA:12,0\nDA:13,0\n"
        "LF:11\nLH:8\nend_of_record\n"
    )


def test_run_coverage_is_one_cases(env, tmp_path):
    task = make_branchy_task(tmp_path / "task")
    done = run_tool(env, "run", task, "--case", "empty", "--coverage", "--python", PY, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    start = lines.index("coverage of 1 case: 7 of 18 lines ran")
    assert lines[start + 1 :] == [
        "task/tests/scoring.py 2: return 1.0",
        'task/tests/scoring.py 6-8: if text.endswith("\\n"):',
        "task/tests/unused_helper.py 1: X = 1",
        "task/tests/verifier.py 8-13: text = answer.read_text()",
    ]


def test_run_coverage_without_a_case_says_so(env, tmp_path):
    """``run TASK --coverage`` on a task without cases (a Harbor task as
    published) said `coverage of 1 case`: there is none; the run was on an
    empty scratch workspace."""
    task = make_branchy_task(tmp_path / "task")
    done = run_tool(env, "run", task, "--workspace", task / "cases" / "empty" / "workspace", "--coverage", cwd=tmp_path)
    assert "coverage of the run without a case: 7 of 18 lines ran" in done.stdout.splitlines(), done.stdout


@pytest.mark.parametrize(
    ("where", "says"),
    [("no-such-folder/cov.info", "there is no folder"), (".", "is a folder")],
)
def test_a_report_that_cannot_be_written_is_one_line_and_exit_2(env, tmp_path, where, says):
    task = make_branchy_task(tmp_path / "task")
    done = run_tool(env, "test", task, "--coverage-report", tmp_path / where, "--python", PY)
    no_traceback(done)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and says in done.stderr, done.stderr


def test_the_tasks_own_runner_without_the_flag_says_so_once(env, tmp_path):
    task = make_branchy_task(tmp_path / "task")
    ng = task / "tests" / ".ng"
    ng.mkdir()
    (ng / "run_verifier.py").write_text(
        (Path(__file__).parents[2] / "runner" / "run_verifier.py").read_text().replace("--coverage-to", "--elsewhere")
    )
    done = run_tool(env, "test", task, "--coverage", "--runner", "task", "--python", PY)
    assert done.returncode == 0, done.stdout + done.stderr
    said = [line for line in done.stdout.splitlines() if "coverage" in line]
    assert said == ["no coverage: the task's own runner has no --coverage-to (leave out --runner task)"]


def test_a_verifier_that_rewrites_the_coverage_file_gets_a_note(env, tmp_path):
    """The runner writes the file after verify returns; an exit handler of the
    verifier's runs later still, and can put anything there."""
    task = make_task(
        tmp_path / "task",
        """
        import atexit, sys

        def spoil(path=sys.argv[sys.argv.index("--coverage-to") + 1]):
            with open(path, "w") as handle:
                handle.write('{"files": {"/etc/passwd": {"statements": [1], "executed": "all"}}}')

        def verify(workspace):
            atexit.register(spoil)
            return 1.0
        """,
    )
    done = run_tool(env, "run", task, "--coverage", "--json", "--python", PY)
    no_traceback(done)
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads(done.stdout)
    assert data["rewards"] == {"reward": 1.0}
    assert data["coverage"] == {
        "files": {},
        "cases": {},
        "problems": ["no coverage: coverage.json is not what the runner writes (the verifier may have rewritten it)"],
        "not_measured": {},
    }


def test_a_coverage_file_naming_a_file_outside_the_task_through_dots_reads_nothing(env, tmp_path):
    """``/tests/../..`` starts with the tests folder as text: the tool read
    that file of the user's, printed its lines and put it in the LCOV. Paths
    the run wrote are folded before they are held to the task's folders."""
    secret = tmp_path / "home" / "credentials"
    secret.parent.mkdir()
    secret.write_text("aws_secret_access_key = SUPERSECRET\n")
    ups = "/..".join([""] * 12)
    task = make_task(
        tmp_path / "task",
        f"""
        import atexit, json, sys

        def forge(path=sys.argv[sys.argv.index("--coverage-to") + 1]):
            files = {{"/tests{ups}{secret}": {{"statements": [1], "executed": []}}}}
            digests = {{name: "0" * 64 for name in files}}
            with open(path, "w") as handle:
                json.dump({{"files": files, "not_compiled": {{}}, "sha256": digests}}, handle)

        def verify(workspace):
            atexit.register(forge)
            return 1.0
        """,
    )
    report = tmp_path / "coverage.info"
    done = run_tool(env, "run", task, "--coverage", "--coverage-report", report, "--python", PY, cwd=tmp_path)
    no_traceback(done)
    assert done.returncode == 0 and "coverage of the run without a case" in done.stdout, done.stdout + done.stderr
    assert "SUPERSECRET" not in done.stdout and "credentials" not in done.stdout, done.stdout
    assert "credentials" not in report.read_text()


def test_each_line_unreached_is_shown_with_its_own_source_past_a_form_feed_and_u2028(env, tmp_path):
    """Python numbers lines at \\n and \\r only; a form feed or U+2028 inside
    a line moved every source line shown after it by one."""
    task = make_task(tmp_path / "task", "def verify(workspace):\n    return 1.0\n")
    (task / "tests" / "verifier.py").write_text(
        "# page one\nSEP = 1  # a form feed ->\x0c\ndef never_called():\n    return 'this line never runs'\n"
        "# U+2028 ->\u2028\ndef verify(workspace):\n    if workspace.name == 'impossible':\n"
        "        return 0.5\n    return 1.0\n",
        encoding="utf-8",
    )
    done = run_tool(env, "run", task, "--coverage", "--python", PY, cwd=tmp_path)
    no_traceback(done)
    assert done.stdout.splitlines()[-2:] == [
        "task/tests/verifier.py 4: return 'this line never runs'",
        "task/tests/verifier.py 8: return 0.5",
    ], done.stdout


def test_coverage_of_a_harbor_trial_is_refused_in_one_line(env, tmp_path):
    task = make_task(tmp_path / "tasks" / "demo", "def verify(workspace):\n    return 1.0\n")
    trial = make_trial(tmp_path / "jobs" / "j" / "demo__aaaaaaa", task=task, rewards={"reward": 1.0})
    done = run_tool(env, "run", trial, "--coverage", "--python", PY)
    no_traceback(done)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "--coverage: a trial replays as its sandbox ran" in done.stderr


def test_a_run_that_ends_the_interpreter_itself_has_no_coverage_and_says_why(env, tmp_path):
    task = make_task(tmp_path / "task", "import os\n\ndef verify(workspace):\n    os._exit(0)\n")
    done = run_tool(env, "run", task, "--coverage", "--python", PY)
    no_traceback(done)
    assert done.stdout.splitlines()[-1] == (
        "no coverage: the run was stopped, or ended the interpreter itself, before the runner wrote it"
    )


def test_a_helper_python_cannot_compile_is_named_as_not_measured(env, tmp_path):
    # No lines to count is not "every line ran": the file is named, with why.
    task = make_branchy_task(tmp_path / "task")
    (task / "tests" / "py2_script.py").write_text('print "hello"\n')
    done = run_tool(env, "test", task, "--coverage", "--python", PY, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert "coverage of 2 cases: 11 of 18 lines ran" in lines
    said = [line for line in lines if "py2_script" in line]
    assert len(said) == 1 and said[0].startswith("task/tests/py2_script.py: not measured: SyntaxError at line 1: ")
    done = run_tool(env, "test", task, "--coverage", "--json", "--python", PY)
    data = json.loads(done.stdout)["coverage"]
    assert list(data["not_measured"]) == [str(task / "tests" / "py2_script.py")]
    assert data["not_measured"][str(task / "tests" / "py2_script.py")].startswith("SyntaxError at line 1: ")
    assert str(task / "tests" / "py2_script.py") not in data["files"]


def test_a_verifier_that_does_not_compile_is_not_said_to_have_every_line_run(env, tmp_path):
    """A verifier with a syntax error: `coverage of 1 case: 0 of 0 lines ran, every one`, full
    coverage claimed of a file no line of which could be counted."""
    task = make_task(tmp_path / "task", "def verify(workspace)\n    return 1.0\n")
    done = run_tool(env, "run", task, "--coverage", "--python", PY, cwd=tmp_path)
    no_traceback(done)
    said = done.stdout.splitlines()
    assert said[-2] == "coverage of the run without a case: 0 of 0 lines ran", done.stdout
    assert said[-1].startswith("task/tests/verifier.py: not measured: SyntaxError at line 1: "), done.stdout
