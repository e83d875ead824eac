"""Coverage on tasks whose files or verifiers fight it: it never changes a
verdict, never hides a line that ran, never writes a report of nothing, and
names every file as it is."""

from __future__ import annotations

import json
import os
import sys

import pytest

from tests.helpers.commands import no_traceback, run_tool
from tests.helpers.tasks import BRANCHY_HELPER, PY, make_branchy_task, make_task


def test_a_fifo_the_verifier_makes_in_its_tests_folder_changes_no_verdict(env, tmp_path):
    # The runner reads each .py of the tests folder as it ends: it blocked on
    # this one until the timeout, and a passing case failed under --coverage.
    task = make_task(
        tmp_path / "task",
        "import os\n\ndef verify(workspace):\n    os.mkfifo('/tests/zz_trap.py')\n    return 1.0\n",
        timeout=20,
    )
    done = run_tool(env, "run", task, "--coverage", "--json", "--python", PY)
    no_traceback(done)
    data = json.loads(done.stdout)
    assert data["outcome"] == "reward_written" and data["rewards"] == {"reward": 1.0}, done.stdout
    assert data["coverage"]["files"][str(task / "tests" / "verifier.py")]["missing"] == []


def test_a_helper_loaded_through_dots_counts_as_the_file_it_is(env, tmp_path):
    task = make_task(
        tmp_path / "task",
        """
        import importlib.util, os

        here = os.path.dirname(__file__)
        spec = importlib.util.spec_from_file_location("common", os.path.join(here, "sub", "..", "common.py"))
        common = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(common)

        def verify(workspace):
            return common.score(workspace)
        """,
        files={"common.py": "def score(workspace):\n    return 1.0\n", "sub/__init__.py": ""},
    )
    done = run_tool(env, "run", task, "--coverage", "--json", "--python", PY)
    assert done.returncode == 0, done.stdout + done.stderr
    files = json.loads(done.stdout)["coverage"]["files"]
    assert files[str(task / "tests" / "common.py")] == {"executed": [1, 2], "missing": []}


def test_a_verifier_that_sets_its_own_tracer_is_not_said_to_have_run_nothing(env, tmp_path):
    task = make_task(
        tmp_path / "task",
        "import sys\n\ndef verify(workspace):\n    sys.settrace(None)\n    x = 1\n    return 1.0\n",
    )
    done = run_tool(env, "run", task, "--coverage", "--python", PY)
    assert done.returncode == 0, done.stdout + done.stderr
    if sys.version_info >= (3, 12):  # sys.monitoring: the verifier's settrace does not touch it
        assert "coverage of the run without a case: 5 of 5 lines ran" in done.stdout, done.stdout
    else:
        assert done.stdout.splitlines()[-1] == (
            "no coverage: the verifier set a trace function of its own (sys.settrace): what ran is not known"
        ), done.stdout


def test_a_case_that_timed_out_is_named_where_coverage_says_it_has_none(env, tmp_path):
    task = make_branchy_task(tmp_path / "task")
    verifier = task / "tests" / "verifier.py"
    verifier.write_text(verifier.read_text().replace("def verify(", "import time\n\ndef verify(", 1))
    empty = task / "cases" / "empty" / "workspace"
    (empty / "hang").write_text("")
    source = verifier.read_text().replace(
        "def verify(workspace):\n",
        "def verify(workspace):\n    while (workspace / 'hang').exists():\n        time.sleep(0.1)\n",
    )
    verifier.write_text(source)
    (task / "task.toml").write_text('version = "1.0"\n\n[verifier]\ntimeout_sec = 2\n')
    done = run_tool(env, "test", task, "--coverage", "--python", PY, cwd=tmp_path)
    no_traceback(done)
    said = [line for line in done.stdout.splitlines() if line.startswith("no coverage")]
    assert said == [
        "no coverage of task::empty: the run was stopped, or ended the interpreter itself, before the runner wrote it"
    ], done.stdout


def test_a_report_of_no_measured_case_is_not_written_and_says_why(env, tmp_path):
    task = make_task(tmp_path / "task", "import os\n\ndef verify(workspace):\n    os._exit(0)\n")
    report = tmp_path / "cov.info"
    done = run_tool(env, "run", task, "--coverage-report", report, "--python", PY, cwd=tmp_path)
    no_traceback(done)
    assert done.returncode == 2
    assert not report.exists()
    assert done.stderr.strip() == (
        "verifier-tui: --coverage-report cov.info: not written: no coverage: the run was stopped, "
        "or ended the interpreter itself, before the runner wrote it"
    )


def test_a_file_name_that_is_not_utf8_reaches_the_report_as_its_bytes(env, tmp_path):
    task = make_branchy_task(tmp_path / "task")
    odd = os.fsdecode(b"h\xff.py")
    (task / "tests" / odd).write_text("def g():\n    return 1\n")
    report = tmp_path / "cov.info"
    done = run_tool(env, "test", task, "--coverage", "--coverage-report", report, "--python", PY, cwd=tmp_path)
    no_traceback(done)
    assert done.returncode == 0, done.stdout + done.stderr
    assert b"SF:" + os.fsencode(str(task / "tests" / odd)) + b"\n" in report.read_bytes()
    assert "task/tests/h\\xff.py 1-2: def g():" in done.stdout


def test_a_file_name_with_a_line_break_stays_on_its_line_and_out_of_the_lcov(env, tmp_path):
    task = make_branchy_task(tmp_path / "task")
    (task / "tests" / "b\nad.py").write_text("def g():\n    return 1\n")
    report = tmp_path / "cov.info"
    done = run_tool(env, "test", task, "--coverage", "--coverage-report", report, "--python", PY, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "task/tests/b\\nad.py 1-2: def g():" in done.stdout.splitlines()
    records = [line for line in report.read_text().splitlines() if line.startswith("SF:")]
    assert records and all(line.endswith(".py") for line in records) and "ad.py" not in "".join(records)


def test_a_file_with_a_null_byte_is_not_measured_with_no_line_said(env, tmp_path):
    task = make_branchy_task(tmp_path / "task")
    (task / "tests" / "nul.py").write_bytes(b"x = 1\x00\n")
    done = run_tool(env, "test", task, "--coverage", "--python", PY, cwd=tmp_path)
    said = [line for line in done.stdout.splitlines() if line.startswith("task/tests/nul.py")]
    assert len(said) == 1 and said[0].startswith("task/tests/nul.py: not measured: SyntaxError: "), said
    assert "line None" not in said[0]


def test_a_long_line_no_case_reached_is_shown_cut(env, tmp_path):
    long = "x = [" + "1, " * 5000 + "]"
    task = make_task(tmp_path / "task", f"def verify(workspace):\n    return 1.0\n\ndef never():\n    {long}\n")
    done = run_tool(env, "run", task, "--coverage", "--python", PY, cwd=tmp_path)
    last = done.stdout.splitlines()[-1]
    assert last.startswith("task/tests/verifier.py 5: x = [1, 1, ") and last.endswith("…") and len(last) < 200


def test_both_modes_refuses_what_is_of_one_run(env, tmp_path):
    task = make_branchy_task(tmp_path / "task")
    done = run_tool(env, "run", task, "--both-modes", "--coverage", "--python", PY)
    no_traceback(done)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == "verifier-tui: --both-modes and --coverage: that is of one run; give one or the other\n"


def _rewrites_coverage(files: str) -> str:
    """A verifier whose exit handler puts ``files`` in the runner's coverage file."""
    return f"""
import atexit, json, sys

def forge(path=sys.argv[sys.argv.index("--coverage-to") + 1]):
    with open(path, "w") as handle:
        files = {files}
        json.dump({{"files": files, "not_compiled": {{}}, "sha256": {{name: "0" * 64 for name in files}}}}, handle)

def verify(workspace):
    atexit.register(forge)
    return 1.0
"""


def test_coverage_never_shows_a_file_a_link_in_tests_leads_to(env, tmp_path):
    """Staging left the links out, but the coverage lines were read through
    them: the lines of /etc/shadow, or of a file of the user's, were printed."""
    secret = tmp_path / "secret.txt"
    secret.write_text("MY-SECRET-CONTENT\n")
    named = ["/tests/evil.py", "/tests/lone\\ud800.py", "/tests/nothing.py"]  # a link, no name a file has, nothing
    files = "{" + ", ".join(f'"{name}": {{"statements": [1], "executed": []}}' for name in named) + "}"
    task = make_task(tmp_path / "task", _rewrites_coverage(files))
    (task / "tests" / "evil.py").symlink_to(secret)
    report = tmp_path / "cov.info"
    done = run_tool(env, "run", task, "--coverage", "--coverage-report", report, "--python", PY, cwd=tmp_path)
    no_traceback(done)
    # Harbor refuses a task whose tests/ links out of it (exit 2), and the run still happens
    assert done.returncode == 2 and "Harbor would refuse" in done.stdout, done.stdout + done.stderr
    assert "MY-SECRET" not in done.stdout + report.read_text()
    assert "evil.py" not in report.read_text() and "nothing.py" not in report.read_text()
    assert "coverage of the run without a case: 0 of 0 lines ran" in done.stdout, done.stdout


def test_a_huge_file_or_a_replaced_settrace_in_tests_changes_no_verdict(env, tmp_path):
    task = make_task(
        tmp_path / "task",
        """
        import sys

        def _refuse(*args):
            raise RuntimeError("no tracing here")

        def verify(workspace):
            with open("/tests/zz_big.py", "w") as handle:
                handle.write("x = 1\\n" * 800_000)
            sys.settrace = _refuse
            return 1.0
        """,
        timeout=20,
    )
    done = run_tool(env, "run", task, "--coverage", "--json", "--python", PY)
    no_traceback(done)
    data = json.loads(done.stdout)
    assert done.returncode == 0 and data["rewards"] == {"reward": 1.0}, done.stdout
    assert data["coverage"]["not_measured"].get(str(task / "tests" / "zz_big.py")) in (
        None,
        "OSError: larger than 2 MB",
    )


@pytest.mark.parametrize("link", ["file", "folder"])
def test_a_helper_imported_through_a_link_in_tests_counts_for_the_file_it_leads_to(env, tmp_path, link):
    """``tests/scoring.py -> real_scoring.py``: the runner records the lines
    under the link's name, and the tool, which reads no link, counted them
    nowhere: real_scoring.py's every line was said never reached."""
    task = make_branchy_task(tmp_path / "task")
    tests = task / "tests"
    if link == "file":
        (tests / "scoring.py").rename(tests / "real_scoring.py")
        (tests / "scoring.py").symlink_to("real_scoring.py")
        real = tests / "real_scoring.py"
    else:  # a folder: ``import lib.scoring`` through tests/lib -> pkg
        (tests / "pkg").mkdir()
        (tests / "scoring.py").rename(tests / "pkg" / "scoring.py")
        (tests / "pkg" / "__init__.py").write_text("")
        (tests / "lib").symlink_to("pkg")
        verifier = tests / "verifier.py"
        verifier.write_text(verifier.read_text().replace("import scoring\n", "from lib import scoring\n", 1))
        real = tests / "pkg" / "scoring.py"
    report = tmp_path / "cov.info"
    done = run_tool(env, "test", task, "--coverage", "--coverage-report", report, "--json", "--python", PY)
    no_traceback(done)
    assert done.returncode == 0, done.stdout + done.stderr
    files = json.loads(done.stdout)["coverage"]["files"]
    assert files[str(real)] == {"executed": [1, 2, 5], "missing": [6, 7, 8]}
    assert not any(name.endswith(("tests/scoring.py", "lib/scoring.py")) for name in files), files
    lcov = report.read_text()
    assert f"SF:{real}\nDA:1,1\nDA:2,1\nDA:5,1\nDA:6,0\nDA:7,0\nDA:8,0\n" in lcov, lcov


def test_a_helper_the_verifier_rewrites_is_not_measured_and_no_line_of_it_is_said(env, tmp_path):
    """The runner compiles each file as the run ends: a verifier that wrote
    200 blank lines and a def over its staged helper had lines 201-202 of an
    eight-line file reported, with no source, and the lines that ran lost."""
    task = make_task(
        tmp_path / "task",
        """
        import os
        import scoring

        HERE = os.path.dirname(__file__)

        def verify(workspace):
            score = scoring.full()
            with open(os.path.join(HERE, "scoring.py"), "w") as handle:
                handle.write("\\n" * 200 + "def extra():\\n    return 1\\n")
            with open(os.path.join(HERE, "old.py"), "w") as handle:  # not to compile, at a line old.py has not
                handle.write("\\n" * 50 + "def (:\\n")
            return score
        """,
        files={"scoring.py": BRANCHY_HELPER, "old.py": "x = 1\n"},
    )
    report = tmp_path / "cov.info"
    done = run_tool(env, "run", task, "--coverage", "--coverage-report", report, "--python", PY, cwd=tmp_path)
    no_traceback(done)
    assert done.returncode == 0, done.stdout + done.stderr
    said = done.stdout.splitlines()
    assert said[-3].startswith("coverage of the run without a case: "), said
    assert said[-3].endswith(" lines ran, every one"), said
    assert said[-2:] == [
        "task/tests/old.py: not measured: changed by the run",
        "task/tests/scoring.py: not measured: changed by the run",
    ], done.stdout
    assert [line for line in report.read_text().splitlines() if line.startswith("SF:")] == [
        f"SF:{task / 'tests' / 'verifier.py'}"
    ]


def test_a_helper_the_verifier_replaces_with_a_link_is_not_read_through(env, tmp_path):
    """A helper the run made a link to /etc/passwd: the runner reads it there
    (in the sandbox), the tool never does, and says the file changed."""
    task = make_task(
        tmp_path / "task",
        """
        import os

        HELPER = os.path.join(os.path.dirname(__file__), "unused_helper.py")

        def verify(workspace):
            os.remove(HELPER)
            os.symlink("/etc/passwd", HELPER)
            return 1.0
        """,
        files={"unused_helper.py": "X = 1\n"},
    )
    done = run_tool(env, "run", task, "--coverage", "--json", "--python", PY, cwd=tmp_path)
    no_traceback(done)
    data = json.loads(done.stdout)["coverage"]
    assert data["not_measured"] == {str(task / "tests" / "unused_helper.py"): "changed by the run"}, data
    assert "root:" not in done.stdout


def test_a_helper_imported_through_a_link_that_leaves_tests_is_said_not_measured(env, tmp_path):
    """``tests/scoring.py -> ../../task/tests/real_scoring.py`` leaves tests/ to
    come back: it is not followed, and its lines, which ran, were counted for
    no file without a word (real_scoring.py looked never reached)."""
    task = make_branchy_task(tmp_path / "task")
    tests = task / "tests"
    (tests / "scoring.py").rename(tests / "real_scoring.py")
    (tests / "scoring.py").symlink_to("../../task/tests/real_scoring.py")
    done = run_tool(env, "test", task, "--coverage", "--python", PY)
    no_traceback(done)
    assert (
        f"{tests / 'scoring.py'}: not measured: a link that leads out of its folder: "
        "the lines that ran through it are not counted"
    ) in done.stdout, done.stdout


def test_a_helper_the_verifier_removes_is_said_changed_by_the_run(env, tmp_path):
    """A helper imported, then removed by the verifier: `tests/scoring.py: not measured:
    FileNotFoundError: [Errno 2] No such file or directory: '/tests/scoring.py'`, a path the user
    does not have, said of a file that is there, untouched, in their task."""
    task = make_task(
        tmp_path / "task",
        """
        import os
        import scoring

        def verify(workspace):
            os.remove(scoring.__file__)
            return scoring.full()
        """,
        files={"scoring.py": BRANCHY_HELPER},
    )
    done = run_tool(env, "run", task, "--coverage", "--python", PY, cwd=tmp_path)
    no_traceback(done)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "task/tests/scoring.py: not measured: changed by the run", done.stdout
    assert (task / "tests" / "scoring.py").read_text() == BRANCHY_HELPER
