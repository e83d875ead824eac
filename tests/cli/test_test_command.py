"""``verifier-tui test`` on several paths and folders of tasks, with --case,
and the layouts it reuses between cases."""

from __future__ import annotations

import json
import os
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.commands import no_traceback, run_tool
from tests.helpers.processes import MEET_VERIFIER, meeting, set_meeting
from tests.helpers.tasks import PY, copy_example, make_task
from verifier_tui.commands import terminal


def _tasks(tmp_path: Path, *names: str) -> Path:
    """``tmp_path/tasks`` holding private copies of bundled examples."""
    folder = tmp_path / "tasks"
    for name in names:
        copy_example(name, folder / name)
    return folder


def _table_rows(stdout: str) -> dict[str, list[str]]:
    """The readable output's rows by task: {task: [row, ...]}."""
    rows: dict[str, list[str]] = {}
    current = None
    for line in stdout.splitlines():
        if line.startswith("task "):
            current = line.split()[1]
            rows[current] = []
        elif current is not None and line[:1] in "✓✗!":
            rows[current].append(line)
    return rows


def test_a_folder_of_tasks_runs_every_task_with_cases(env, tmp_path):
    folder = _tasks(tmp_path, "hello-file", "sum-column", "plain-test-sh")
    done = run_tool(env, "test", folder, "--python", PY)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = _table_rows(done.stdout)
    # plain-test-sh has no cases: it is not part of the run, and said so (not a failure).
    assert list(rows) == ["hello-file", "sum-column"]
    assert [r.split()[1] for r in rows["hello-file"]] == ["correct", "missing-file", "wrong-case", "wrong-text"]
    assert [r.split()[1] for r in rows["sum-column"]] == ["correct", "quantity-variant", "wrong-total"]
    assert all(r.startswith("✓") for task_rows in rows.values() for r in task_rows)
    assert done.stdout.splitlines()[-1] == "7 passed, 0 failed, 1 task without a case (2 tasks)"


def test_several_paths_json_and_junit_carry_each_cases_task(env, tmp_path):
    folder = _tasks(tmp_path, "hello-file", "fizzbuzz-module")
    (folder / "fizzbuzz-module" / "cases" / "partial" / "expected.json").write_text('{"rewards": {"reward": 0.5}}')
    junit = tmp_path / "report.xml"
    done = run_tool(
        env, "test", "--json", folder / "hello-file", folder / "fizzbuzz-module", "--junit", junit, "--python", PY
    )
    assert done.returncode == 1  # one case of one task did not match
    data = json.loads(done.stdout)
    assert data["task"] is None and data["verifier"] is None  # several tasks: see "tasks"
    assert data["passed"] == 5 and data["failed"] == 1
    assert [(t["name"], t["passed"], t["failed"]) for t in data["tasks"]] == [
        ("hello-file", 4, 0),
        ("fizzbuzz-module", 1, 1),
    ]
    ids = [case["id"] for case in data["cases"]]
    assert ids == [
        "hello-file::correct",
        "hello-file::missing-file",
        "hello-file::wrong-case",
        "hello-file::wrong-text",
        "fizzbuzz-module::clean",
        "fizzbuzz-module::partial",
    ]
    partial = data["cases"][-1]
    assert partial["task_name"] == "fizzbuzz-module" and partial["task"] == str(folder / "fizzbuzz-module")
    assert partial["expected_matched"] is False
    suite = ET.parse(junit).getroot()
    assert suite.get("tests") == "6" and suite.get("failures") == "1"
    cases = {(c.get("classname"), c.get("name")): c for c in suite.iter("testcase")}
    assert ("hello-file", "wrong-case") in cases
    assert cases[("fizzbuzz-module", "partial")].find("failure") is not None


def test_case_filters_names_globs_and_task_case(env, tmp_path):
    folder = _tasks(tmp_path, "hello-file", "sum-column")

    def ran(*patterns: str) -> list[str]:
        args = [a for p in patterns for a in ("--case", p)]
        done = run_tool(env, "test", "--json", folder, *args, "--python", PY)
        assert done.returncode == 0, done.stderr
        return [case["id"] for case in json.loads(done.stdout)["cases"]]

    assert ran("correct") == ["hello-file::correct", "sum-column::correct"]
    assert ran("wrong-*") == ["hello-file::wrong-case", "hello-file::wrong-text", "sum-column::wrong-total"]
    assert ran("sum-column::correct") == ["sum-column::correct"]
    assert ran("hello-file::*", "wrong-total") == [
        "hello-file::correct",
        "hello-file::missing-file",
        "hello-file::wrong-case",
        "hello-file::wrong-text",
        "sum-column::wrong-total",
    ]
    # Readable output names only the tasks that ran.
    done = run_tool(env, "test", folder, "--case", "quantity-*", "--python", PY)
    assert list(_table_rows(done.stdout)) == ["sum-column"]


def test_a_pattern_that_matches_nothing_is_one_clear_line(env, tmp_path):
    folder = _tasks(tmp_path, "hello-file")
    done = run_tool(env, "test", folder, "--case", "corect", "--python", PY)
    assert done.returncode == 2 and done.stdout == ""
    no_traceback(done)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("verifier-tui: --case corect matches no case")
    assert "hello-file::correct" in lines[0]


def test_a_folder_that_is_no_task_and_holds_none_says_so(env, tmp_path):
    empty = tmp_path / "notes"
    (empty / "drafts").mkdir(parents=True)
    (empty / "drafts" / "readme.md").write_text("nothing to test\n")
    done = run_tool(env, "test", empty, "--python", PY)
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "is not a task" in lines[0] and "nor was a task with cases to test" in lines[0]
    assert list(Path(env["TMPDIR"]).iterdir()) == []


def test_a_folder_whose_tasks_have_no_cases_says_so(env, tmp_path):
    folder = _tasks(tmp_path, "plain-test-sh")
    make_task(folder / "bare")
    done = run_tool(env, "test", folder, "--python", PY)
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "holds 2 task(s) (bare, plain-test-sh) and none has a case to test" in lines[0]


def test_a_folder_whose_tasks_have_no_case_to_test_still_gives_json_and_junit_a_report(env, tmp_path):
    """A CI script reading --json got nothing from a folder whose tasks have no usable case, where the
    same task named alone gives a document: both give one, the JUnit report lists the tasks, as text does."""
    folder = _tasks(tmp_path, "plain-test-sh")
    make_task(folder / "unjudged", cases={"one": {"a.txt": "a"}})
    report = tmp_path / "junit.xml"
    done = run_tool(env, "test", folder, "--json", "--junit", report, "--python", PY)
    assert done.returncode == 2
    no_traceback(done)
    data = json.loads(done.stdout)
    assert (data["passed"], data["failed"], data["cases"]) == (0, 0, [])
    reasons = {task["task"]: task["reason"] for task in data["without_cases"]}
    assert reasons["unjudged"].startswith("its one case has no expected.json")
    assert reasons["plain-test-sh"].startswith("it has no case")
    said = done.stderr.strip().splitlines()
    assert len(said) == 1 and "holds 2 task(s) (plain-test-sh, unjudged) and none has a case to test" in said[0]
    cases = ET.parse(report).getroot().findall("testcase")
    skipped = {case.get("classname"): case.find("skipped") for case in cases if case.find("skipped") is not None}
    assert skipped["unjudged"].get("message", "").startswith("not tested: its one case has no expected.json")
    assert set(skipped) == {"plain-test-sh", "unjudged"}
    errors = [case.find("error").get("message") for case in cases if case.find("error") is not None]
    assert errors == [said[0].removeprefix("verifier-tui: ")]


def test_the_junit_report_lists_the_cases_in_the_tables_order(env, tmp_path):
    """--junit listed every case without an expected.json, and every unusable one, before the judged
    cases, of every task at once: its order is the table's, task by task."""
    folder = tmp_path / "tasks"
    cases = {name: {"a.txt": "a"} for name in ("a-unjudged", "b-judged", "c-unusable")}
    for task in ("one", "two"):
        root = make_task(folder / task, cases=cases)
        (root / "cases" / "b-judged" / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
        (root / "cases" / "c-unusable" / "expected.json").write_text("[]")
    make_task(folder / "three")  # no case at all
    report = tmp_path / "junit.xml"
    done = run_tool(env, "test", folder, "--junit", report, "--python", PY)
    assert done.returncode == 1, done.stderr
    table, task = [], None
    for line in done.stdout.splitlines():
        if line.startswith("task "):
            task = line.split()[1]
        elif line[:1] in "✓✗!·" and not line.startswith("·  task"):
            table.append((task, line[3:].split(":")[0].split()[0]))
    listed = [(case.get("classname"), case.get("name")) for case in ET.parse(report).getroot().iter("testcase")]
    assert listed[:6] == table == [(t, c) for t in ("one", "two") for c in ("b-judged", "c-unusable", "a-unjudged")]
    assert listed[6:] == [("three", "(task)")]


def test_every_folder_named_without_a_case_to_test_is_listed_in_one_refusal(env, tmp_path):
    """`test f2 f1 f3 --json` stopped at f1, the first folder with no case to test: its document and
    JUnit report left out f3's tasks. Every path is looked at first: one refusal names them all, the
    document lists every task without a case once, sorted, as a run that tests some case does."""
    with_cases = _tasks(tmp_path / "f2", "hello-file")
    first = _tasks(tmp_path / "f1", "plain-test-sh")
    second = tmp_path / "f3"
    for name in ("zeta", "alpha"):
        make_task(second / name)
    report = tmp_path / "junit.xml"
    done = run_tool(env, "test", with_cases, first, second, first, "--json", "--junit", report, "--python", PY)
    assert done.returncode == 2
    no_traceback(done)
    data = json.loads(done.stdout)
    assert [task["task"] for task in data["without_cases"]] == ["plain-test-sh", "alpha", "zeta"]
    assert (data["tasks"], data["cases"]) == ([], [])  # refused: nothing ran, hello-file's cases neither
    said = done.stderr.strip().splitlines()
    assert len(said) == 1
    assert f"{first}, {second} hold 3 task(s) (alpha, plain-test-sh, zeta) and none has a case to test" in said[0]
    skipped = [
        case.get("classname")
        for case in ET.parse(report).getroot().iter("testcase")
        if case.find("skipped") is not None
    ]
    assert skipped == ["plain-test-sh", "alpha", "zeta"]


def test_a_folder_without_a_case_to_test_lists_its_tasks_sorted(env, tmp_path):
    folder = tmp_path / "f6"
    for name in ("zeta", "mid", "alpha", "deeper/beta"):
        make_task(folder / name)
    done = run_tool(env, "test", folder, "--json", "--python", PY)
    assert done.returncode == 2
    assert [task["task"] for task in json.loads(done.stdout)["without_cases"]] == ["alpha", "beta", "mid", "zeta"]


def test_a_case_folder_tests_that_case_only(env, tmp_path):
    folder = _tasks(tmp_path, "hello-file")
    done = run_tool(env, "test", "--json", folder / "hello-file" / "cases" / "wrong-text", "--python", PY)
    assert done.returncode == 0, done.stderr
    assert [case["id"] for case in json.loads(done.stdout)["cases"]] == ["hello-file::wrong-text"]


def test_a_task_below_that_cannot_be_tested_fails_the_run_and_the_others_still_run(env, tmp_path):
    folder = _tasks(tmp_path, "sum-column")
    broken = make_task(folder / "no-verifier", verifier=None, cases={"one": {"a.txt": "a"}})
    (broken / "cases" / "one" / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    done = run_tool(env, "test", folder, "--python", PY)
    assert done.returncode == 1
    no_traceback(done)
    assert "!  not tested: no verifier found for no-verifier" in done.stdout
    assert "3 passed, 0 failed, 1 task not tested, 1 case not run (2 tasks)" in done.stdout
    data = json.loads(run_tool(env, "test", "--json", folder, "--python", PY).stdout)
    assert [e["task"] for e in data["errors"]] == ["no-verifier"] and data["passed"] == 3


def test_two_tasks_of_the_same_name_are_told_apart(env, tmp_path):
    for group in ("a", "b"):
        task = make_task(tmp_path / "suite" / group / "same", cases={"one": {"x.txt": "x"}})
        (task / "cases" / "one" / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    done = run_tool(env, "test", "--json", "suite", "--python", PY, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert [c["id"] for c in json.loads(done.stdout)["cases"]] == ["suite/a/same::one", "suite/b/same::one"]


def test_cases_share_layouts_without_sharing_what_a_run_left(env, tmp_path):
    """``test`` hands a layout on from case to case: each case still sees its
    own workspace alone, whatever the case before it wrote there."""
    task = make_task(
        tmp_path / "tasks" / "own",
        """
        import os

        def verify(workspace):
            seen = sorted(os.listdir(workspace))
            (workspace / "left-behind.txt").write_text("x")
            return 1.0 if seen == ["id.txt"] else 0.0
        """,
    )
    for index in range(12):
        case = task / "cases" / f"c{index:02d}"
        (case / "workspace").mkdir(parents=True)
        (case / "workspace" / "id.txt").write_text(str(index))
        (case / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    done = run_tool(env, "test", task, "--jobs", "2", "--python", PY)
    assert done.returncode == 0, done.stdout
    assert "12 passed, 0 failed" in done.stdout
    for index in range(12):  # the user's workspaces are untouched
        assert sorted(p.name for p in (task / "cases" / f"c{index:02d}" / "workspace").iterdir()) == ["id.txt"]


def test_jobs_runs_that_many_cases_at_the_same_time(env, tmp_path):
    cases = {"a": {"who.txt": "a"}, "b": {"who.txt": "b"}}
    task_dir = make_task(tmp_path / "tasks" / "meeting", MEET_VERIFIER, cases=cases)
    for case in ("a", "b"):
        (task_dir / "cases" / case / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    for jobs, passed, wait_s in (("2", 2, 3), ("1", 0, 1)):  # one at a time, each waits in vain
        set_meeting(task_dir / "tests", tmp_path / f"meet-{jobs}", wait_s)
        with meeting(tmp_path / f"meet-{jobs}"):
            data = json.loads(run_tool(env, "test", "--json", "-j", jobs, task_dir, "--python", PY).stdout)
        assert data["passed"] == passed, data


def test_the_copy_sandbox_is_said_after_tests_summary_in_json_and_junit(env, tmp_path):
    """Where a case runs in the copy sandbox, its verifier could write the
    user's files: ``test`` says so after its summary, and so do ``--json``
    and the JUnit report, not only each case's ``sandbox`` field."""
    task = copy_example("hello-file", tmp_path / "tasks" / "hello-file")
    copy = dict(env, VERIFIER_TUI_SANDBOX="copy")
    done = run_tool(copy, "test", task, "--python", PY, "--junit", tmp_path / "junit.xml")
    assert done.returncode == 0, done.stdout
    said = "sandbox: copy (asked for): the verifier runs on this machine as you and can write your files"
    assert done.stdout.splitlines()[-2:] == ["4 passed, 0 failed", said]
    assert json.loads(run_tool(copy, "test", "--json", task, "--python", PY).stdout)["copy_sandbox"] == said
    suite = ET.parse(tmp_path / "junit.xml").getroot()
    assert suite.find("properties/property[@name='sandbox']").get("value") == said
    assert suite.find("system-err").text == said


def test_report_files_that_cannot_be_told_apart_or_have_no_folder_are_refused_before_any_run(env, tmp_path):
    task = copy_example("hello-file", tmp_path / "hello-file")
    dangling = tmp_path / "report.xml"
    dangling.symlink_to(tmp_path / "no-folder" / "report.xml")
    refused = {
        ("--junit", ""): "argument --junit: an empty path: give a file name",
        ("--junit", "r.out", "--coverage-report", "./r.out"): (
            "--junit and --coverage-report name the same file, r.out: give each its own"
        ),
        ("--junit", str(dangling)): f"--junit {dangling}: there is no folder {tmp_path / 'no-folder'}",
    }
    for options, says in refused.items():
        done = run_tool(env, "test", task, *options, "--python", PY, cwd=tmp_path)
        no_traceback(done)
        assert done.returncode == 2 and done.stdout == "", done.stdout
        assert says in done.stderr, done.stderr
    assert not (tmp_path / "r.out").exists()


def test_a_task_named_twice_is_tested_once_and_by_its_own_name(env, tmp_path):
    folder = _tasks(tmp_path, "hello-file")
    done = run_tool(env, "test", folder, folder / "hello-file", "--json", "--python", PY)
    data = json.loads(done.stdout)
    assert [task["name"] for task in data["tasks"]] == ["hello-file"] and data["passed"] == 4, data["tasks"]
    from_tests = run_tool(env, "test", "..", "--json", "--python", PY, cwd=folder / "hello-file" / "tests")
    assert [task["name"] for task in json.loads(from_tests.stdout)["tasks"]] == ["hello-file"]


def test_case_folders_of_one_task_are_one_task_and_each_case_runs_once(env, tmp_path):
    """``test tasks/hello-file/cases/wrong-*`` (a shell's glob) printed a
    table per case, each headed ``task hello-file``, and ``2 passed, 0 failed
    (2 tasks)``; with the task's folder named too, ``correct`` ran twice."""
    task = _tasks(tmp_path, "hello-file") / "hello-file"
    done = run_tool(env, "test", task / "cases" / "wrong-case", task / "cases" / "wrong-text", "--python", PY)
    assert done.returncode == 0, done.stdout + done.stderr
    assert [line for line in done.stdout.splitlines() if line.startswith("task ")] == [
        f"task hello-file · verifier {task / 'tests' / 'verifier.py'}"
    ], done.stdout
    assert [row.split()[1] for row in _table_rows(done.stdout)["hello-file"]] == ["wrong-case", "wrong-text"]
    assert done.stdout.splitlines()[-1] == "2 passed, 0 failed"
    data = json.loads(run_tool(env, "test", task / "cases" / "correct", task, "--json", "--python", PY).stdout)
    assert [task["name"] for task in data["tasks"]] == ["hello-file"], data["tasks"]
    assert sorted(case["case"] for case in data["cases"]) == ["correct", "missing-file", "wrong-case", "wrong-text"]


def test_a_case_named_with_the_id_separator_is_said_unusable(env, tmp_path):
    # hello-file's case "a::b" and a task "hello-file::a"'s case "b" had one id.
    folder = _tasks(tmp_path, "hello-file")
    shutil.copytree(folder / "hello-file" / "cases" / "correct", folder / "hello-file" / "cases" / "a::b")
    done = run_tool(env, "test", folder / "hello-file", "--python", PY)
    assert done.returncode == 1
    assert "!  a::b: not run: a case name holding '::' cannot be told apart in ids" in done.stdout, done.stdout
    # Its expected.json is fine: the summary counted it "with an unusable expected.json", which sent the
    # author to a file with nothing wrong in it. It is a case not run, as one whose folder cannot be read.
    assert done.stdout.splitlines()[-1] == "4 passed, 0 failed, 1 case not run", done.stdout


def test_two_cases_whose_names_differ_by_a_character_that_draws_nothing_are_told_apart(env, tmp_path):
    """Cases `correct` and `correct` with a zero-width space at its end: test's table showed two rows
    reading `correct`. The character is spelled as a reward key's is, `correct<U+200B>`."""
    folder = _tasks(tmp_path, "hello-file")
    shutil.copytree(folder / "hello-file" / "cases" / "correct", folder / "hello-file" / "cases" / "correct\u200b")
    done = run_tool(env, "test", folder / "hello-file", "--python", PY)
    names = [row.split()[1] for row in _table_rows(done.stdout)["hello-file"]]
    assert names[:2] == ["correct", "correct<U+200B>"] and "\u200b" not in done.stdout, done.stdout


def test_a_case_it_cannot_find_lists_the_cases_as_the_table_names_them(env, tmp_path):
    """`--case nope` listed the cases there are with what draws nothing raw (`run`: `correct`,
    `correct` + U+200B, `correct` + U+FE0F, three names that read alike) or escaped another way
    (`test`: `correct\\u200b`, U+FE0F raw): they are spelled as the table spells them."""
    task = _tasks(tmp_path, "hello-file") / "hello-file"
    for mark in ("\u200b", "\ufe0f"):
        shutil.copytree(task / "cases" / "correct", task / "cases" / f"correct{mark}")
    ran = run_tool(env, "run", task, "--python", PY, "--case", "nope")
    tested = run_tool(env, "test", task, "--python", PY, "--case", "nope")
    for done in (ran, tested):
        assert "correct<U+200B>" in done.stderr and "correct<U+FE0F>" in done.stderr, done.stderr
        assert "\u200b" not in done.stderr and "\ufe0f" not in done.stderr and "\\u" not in done.stderr
    # a review after: the name as listed is typed back, and picks that case alone
    ran = run_tool(env, "run", task, "--python", PY, "--case", "correct<U+200B>", "--json")
    assert ran.returncode == 0 and json.loads(ran.stdout)["case"] == "correct\u200b", ran.stdout + ran.stderr
    tested = run_tool(env, "test", task, "--python", PY, "--case", "correct<U+FE0F>")
    assert [row.split()[1] for row in _table_rows(tested.stdout)["hello-file"]] == ["correct<U+FE0F>"], tested.stdout


def test_a_link_target_is_spelled_as_every_other_name_is(env, tmp_path):
    """``run gone`` where gone is a link to a name holding a zero-width space, a right-to-left override
    and a byte not UTF-8: the refusal wrote them ``\\u200b\\u202e`` and ``\\udcff`` (Python's escapes),
    where a case's or a trial's name reads ``<U+200B>`` and a file name's byte ``\\xff``."""
    (tmp_path / "gone").symlink_to(os.fsdecode(b"x\xe2\x80\x8b\xe2\x80\xaey\xff"))
    for command in ("run", "test"):
        done = run_tool(env, command, tmp_path / "gone")
        assert done.returncode == 2, done.stderr
        assert "gone is a link to x<U+200B><U+202E>y\\xff, which does not exist" in done.stderr, done.stderr
        assert "\\u" not in done.stderr, done.stderr


def test_case_picks_a_name_with_glob_characters_and_a_case_it_cannot_run(env, tmp_path):
    """``--case 'br[ack]et'`` matched no case, though the error listed that
    very name; ``--case`` on a case whose expected.json is unusable printed
    "verifier-tui: None", exit 2, where the documented row and exit 1 belong."""
    task = _tasks(tmp_path, "hello-file") / "hello-file"
    shutil.copytree(task / "cases" / "correct", task / "cases" / "br[ack]et")
    (task / "cases" / "bad-json").mkdir()
    (task / "cases" / "bad-json" / "expected.json").write_text('{"rewards": ')
    done = run_tool(env, "test", task, "--case", "br[ack]et", "--python", PY)
    assert done.returncode == 0, done.stdout + done.stderr
    assert [row.split()[1] for row in _table_rows(done.stdout)["hello-file"]] == ["br[ack]et"]
    done = run_tool(env, "test", task, "--case", "bad-json", "--python", PY, "--junit", tmp_path / "j.xml")
    no_traceback(done)
    assert done.returncode == 1 and "None" not in done.stderr, done.stderr
    assert "bad-json: not run: expected.json is not valid JSON" in done.stdout
    suite = ET.parse(tmp_path / "j.xml").getroot()
    assert suite.get("failures") == "1" and [case.get("name") for case in suite.iter("testcase")] == ["bad-json"]
    assert suite.find("testcase/failure").get("message").startswith("not run: expected.json is not valid JSON")


def test_junit_is_written_when_nothing_could_be_tested(env, tmp_path):
    """A report of the last run was left in place when the next had nothing
    to run (exit 2): CI showed the old green page."""
    tasks = _tasks(tmp_path, "hello-file")
    report = tmp_path / "j.xml"
    assert run_tool(env, "test", tasks / "hello-file", "--python", PY, "--junit", report).returncode == 0
    for case in (tasks / "hello-file" / "cases").iterdir():
        (case / "expected.json").unlink()
    done = run_tool(env, "test", tasks / "hello-file", "--python", PY, "--junit", report)
    assert done.returncode == 2
    suite = ET.parse(report).getroot()
    assert suite.get("failures") == "1" and suite.get("tests") == "1"  # as the plugin reports it: a test not run
    assert next(suite.iter("failure")).get("message").startswith("not run: no case with a usable expected.json")


def test_junit_is_written_when_the_command_line_cannot_be_run(env, tmp_path):
    """A --case that matches nothing, a path that does not exist, a --python
    that cannot start: exit 2, and the report of the last run was left as it was."""
    tasks = _tasks(tmp_path, "hello-file")
    report = tmp_path / "j.xml"
    for args, said in (
        (["--case", "nomatch"], "--case nomatch matches no case"),
        (["--python", str(tmp_path / "no-python")], "No such file or directory"),
    ):
        report.write_text("green from the last run")
        done = run_tool(env, "test", tasks / "hello-file", "--junit", report, *args)
        assert done.returncode == 2 and said in done.stderr, done.stderr
        error = next(ET.parse(report).getroot().iter("error")).get("message")
        assert said in error and "[Errno" not in error
    report.write_text("green from the last run")
    assert run_tool(env, "test", tmp_path / "nowhere", "--junit", report).returncode == 2
    assert "does not exist" in next(ET.parse(report).getroot().iter("error")).get("message")
    # Never into a task, though the command line names none to check against, nor over a file it names.
    expected = tasks / "hello-file" / "cases" / "correct" / "expected.json"
    before = expected.read_bytes()
    assert run_tool(env, "test", tmp_path / "nowhere", "--junit", expected).returncode == 2
    assert expected.read_bytes() == before
    verifier = tmp_path / "elsewhere.py"
    verifier.write_text("def verify(workspace):\n    return 1.0\n")
    for named in (["--verifier", verifier], ["--task-data", verifier]):
        done = run_tool(env, "test", tasks / "hello-file", *named, "--case", "nomatch", "--junit", verifier)
        assert done.returncode == 2 and verifier.read_text().startswith("def verify"), named


def test_cases_are_in_the_order_a_user_counts_in_the_table_and_json(env, tmp_path):
    """Cases c1, c2, c10 (and a, B): the table and ``--json`` listed them as
    text sorts (B, a, c1, c10, c2); every face now lists them as a user counts."""
    names = ["c10", "B", "c2", "a", "c1"]
    task_dir = make_task(tmp_path / "t", cases={name: {} for name in names})
    for name in names:
        (task_dir / "cases" / name / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    table = run_tool(env, "test", task_dir, "--python", PY)
    assert [row.split()[1] for row in _table_rows(table.stdout)["t"]] == ["a", "B", "c1", "c2", "c10"], table.stdout
    done = run_tool(env, "test", task_dir, "--python", PY, "--json")
    assert [case["case"] for case in json.loads(done.stdout)["cases"]] == ["a", "B", "c1", "c2", "c10"]


def test_a_task_below_whose_cases_cannot_be_read_says_so_not_that_it_has_none(ordinary_user):
    """``test tasks/``, one task's cases/ of mode 000, run as an ordinary user:
    the task was "not tested: it has no case: make one with ... --save-case",
    of a folder of cases it could not list (``test TASK`` said why)."""
    tasks = ordinary_user.root / "tasks"
    for name in ("good", "t"):
        task = make_task(tasks / name, cases={"right": {"answer.txt": "42\n"}})
        (task / "cases" / "right" / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    ordinary_user.own(ordinary_user.root)
    unread = f"{tasks / 't' / 'cases'} cannot be read (Permission denied)"
    (tasks / "t" / "cases").chmod(0)
    done = ordinary_user.run("test", tasks, "--junit", ordinary_user.root / "r.xml")
    no_traceback(done)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"not tested: no case to test: {unread}" in done.stdout, done.stdout
    assert "--save-case" not in done.stdout + done.stderr
    junit = (ordinary_user.root / "r.xml").read_text()
    assert unread in junit and "--save-case" not in junit
    data = json.loads(ordinary_user.run("test", "--json", tasks).stdout)
    assert [(e["task"], e["problem"]) for e in data["errors"]] == [("t", f"no case to test: {unread}")]
    assert data["without_cases"] == []
    (tasks / "good").rename(ordinary_user.root / "good")  # t alone: none to test, and why
    alone = ordinary_user.run("test", tasks)
    assert (alone.returncode, alone.stderr) == (2, f"verifier-tui: no case to test: {unread}\n"), alone.stderr


def test_one_case_folder_that_cannot_be_read_is_a_case_not_run_and_the_others_run(ordinary_user):
    """``test tasks/`` with one case folder of mode 000, run as an ordinary user: the whole run ended in
    one line (``.../cases/locked/workspace: Permission denied``), exit 2, no case run and no ``--junit``
    report written (the last run's left in place); the pytest plugin ended the same way. That case is one
    not run, saying why, as a case whose expected.json cannot be used is; the others run; exit 1."""
    tasks = ordinary_user.root / "tasks"
    task = make_task(tasks / "t", cases={"right": {"answer.txt": "42\n"}, "locked": {}, "other": {}})
    for case in ("right", "locked", "other"):
        (task / "cases" / case / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    ordinary_user.own(ordinary_user.root)
    (task / "cases" / "locked").chmod(0)
    unread = f"{task / 'cases' / 'locked'} cannot be read (Permission denied)"
    report = ordinary_user.root / "r.xml"
    done = ordinary_user.run("test", tasks, "--junit", report)
    no_traceback(done)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"locked: not run: {unread}" in done.stdout, done.stdout
    # Counted in its own words, as --json, JUnit and the plugin say it: its expected.json was never read.
    assert "2 passed, 0 failed, 1 case not run" in done.stdout, done.stdout
    assert "unusable expected.json" not in done.stdout, done.stdout
    failures = {c.get("name"): c.find("failure") for c in ET.parse(report).getroot().iter("testcase")}
    assert failures["right"] is None and failures["other"] is None
    assert failures["locked"].get("message") == f"not run: {unread}"
    plugin = "import sys, pytest; sys.exit(pytest.main(sys.argv[1:]))"
    done = ordinary_user.run_python(plugin, "-p", "no:cacheprovider", "--verifier-cases", tasks, "-q", "-rf")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed, 2 passed" in done.stdout and f"not run: {unread}" in done.stdout, done.stdout
    # Another case chosen with --case: the locked one is not part of the run, nor counted (it read "1 passed,
    # 0 failed, -1 with an unusable expected.json, 1 case not run").
    done = ordinary_user.run("test", task, "--case", "right")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed, 0 failed" in done.stdout, done.stdout
    assert "not run" not in done.stdout and "unusable" not in done.stdout, done.stdout


def test_run_of_a_case_folder_that_cannot_be_read_is_refused(ordinary_user):
    """``run t --case locked``, the case folder of mode 000, as an ordinary user: since the case became one
    not run for ``test``, run ran the verifier on an empty /app and printed its verdict ({"reward": 1.0},
    exit 0) under a note, where ``test`` says the case was not run. Refused in one line, exit 2, as before."""
    task = make_task(ordinary_user.root / "t", cases={"right": {}, "locked": {}})
    ordinary_user.own(ordinary_user.root)
    (task / "cases" / "locked").chmod(0)
    unread = f"{task / 'cases' / 'locked'} cannot be read (Permission denied)"
    done = ordinary_user.run("run", task, "--case", "locked")
    no_traceback(done)
    assert (done.returncode, done.stdout) == (2, ""), done.stdout + done.stderr
    assert done.stderr == f"verifier-tui: {unread}\n", done.stderr


def test_a_named_task_whose_cases_cannot_be_read_is_said_once_from_here(ordinary_user):
    """``test a b``, b's cases/ of mode 000: b's part said it twice, a note
    (``…/b/cases cannot be read (Permission denied): no case is listed``) and
    ``! not tested: no case to test: …``, each with the whole path, though
    the header shows paths from where the tool was started."""
    for name in ("a", "b"):
        task = make_task(ordinary_user.home / name, cases={"right": {"answer.txt": "42\n"}})
        (task / "cases" / "right" / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    ordinary_user.own(ordinary_user.root)
    (ordinary_user.home / "b" / "cases").chmod(0)
    done = ordinary_user.run("test", "a", "b")
    no_traceback(done)
    assert done.returncode == 1, done.stdout + done.stderr
    said = [line for line in done.stdout.splitlines() if "cannot be read" in line]
    assert said == ["!  not tested: no case to test: b/cases cannot be read (Permission denied)"], done.stdout


def test_a_lone_task_whose_cases_cannot_be_read_is_said_from_here(ordinary_user):
    """``test b``, b's cases/ of mode 000: the one line said it with the whole
    path, where ``test a b`` and ``test tree`` say ``b/cases`` from where the tool was started."""
    task = make_task(ordinary_user.home / "b", cases={"right": {"answer.txt": "42\n"}})
    (task / "cases" / "right" / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    ordinary_user.own(ordinary_user.root)
    (task / "cases").chmod(0)
    done = ordinary_user.run("test", "b")
    no_traceback(done)
    said = "verifier-tui: no case to test: b/cases cannot be read (Permission denied)\n"
    assert (done.returncode, done.stderr) == (2, said), done.stderr


def test_the_summary_counts_tasks_not_verifiers(env, tmp_path):
    """``test two/tests/verifier.py two/tests/other.py`` tests one task with two verifiers: the
    summary line said ``(2 tasks)``, counting each verifier as a task."""
    folder = _tasks(tmp_path, "hello-file", "sum-column")
    two = folder / "hello-file"
    shutil.copy(two / "tests" / "verifier.py", two / "tests" / "other.py")
    done = run_tool(env, "test", two / "tests" / "verifier.py", two / "tests" / "other.py", "--python", PY)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "8 passed, 0 failed (1 task, 2 verifiers)", done.stdout
    given = [two / "tests" / "verifier.py", two / "tests" / "other.py", folder / "sum-column"]
    done = run_tool(env, "test", *given, "--python", PY)
    assert done.stdout.splitlines()[-1].endswith(" failed (2 tasks, 3 verifiers)"), done.stdout
    done = run_tool(env, "test", folder, "--python", PY)
    assert done.stdout.splitlines()[-1].endswith(" failed (2 tasks)"), done.stdout


def test_two_verifiers_of_one_task_in_one_run_have_ids_of_their_own(env, tmp_path):
    """``test two/tests/verifier.py two/tests/other.py``: each case's --json id
    came twice (``two::correct``), and so did each JUnit (classname, name),
    which CI merges or drops. Each verifier is now named by the task's id and
    the verifier in the task, as the pytest plugin names it; a task of one
    verifier keeps its ids, and ``--case TASK::CASE`` still picks both."""
    folder = _tasks(tmp_path, "hello-file", "sum-column")
    two = folder / "hello-file"
    (two / "tests" / "other.py").write_text("def verify(workspace):\n    return 0.0\n")
    junit = tmp_path / "report.xml"
    given = [two / "tests" / "verifier.py", two / "tests" / "other.py", folder / "sum-column"]
    done = run_tool(env, "test", *given, "--json", "--junit", junit, "--python", PY)
    assert done.returncode == 1, done.stdout + done.stderr  # other.py scores 0.0 on correct
    data = json.loads(done.stdout)
    ids = [case["id"] for case in data["cases"]]
    assert len(ids) == len(set(ids)) == 11, ids
    assert ids[:5] == [
        "hello-file::tests/verifier.py::correct",
        "hello-file::tests/verifier.py::missing-file",
        "hello-file::tests/verifier.py::wrong-case",
        "hello-file::tests/verifier.py::wrong-text",
        "hello-file::tests/other.py::correct",
    ]
    assert ids[-1] == "sum-column::wrong-total"
    tasks = [t["name"] for t in data["tasks"]]
    assert tasks == ["hello-file::tests/verifier.py", "hello-file::tests/other.py", "sum-column"], tasks
    names = [(c.get("classname"), c.get("name")) for c in ET.parse(junit).getroot().iter("testcase")]
    assert len(names) == len(set(names)) == 11, names
    # as the plugin's --junitxml has it (pytest's for tasks/hello-file::tests/other.py: tasks.hello-file.tests/other.py)
    assert ("hello-file.tests/other.py", "correct") in names and ("sum-column", "correct") in names, names
    done = run_tool(env, "test", *given[:2], "--case", "hello-file::correct", "--json", "--python", PY)
    assert [c["id"] for c in json.loads(done.stdout)["cases"]] == [
        "hello-file::tests/verifier.py::correct",
        "hello-file::tests/other.py::correct",
    ]
    done = run_tool(env, "test", *given[:2], "--case", "hello-file::tests/other.py::*", "--json", "--python", PY)
    assert [c["id"].rsplit("::", 1)[0] for c in json.loads(done.stdout)["cases"]] == ["hello-file::tests/other.py"] * 4


#: Any text a verifier can print or a folder be named: every code point, lone surrogates (a name's bytes
#: that are not UTF-8, as Python decodes them) and XML's own delimiters among them.
_ANY_TEXT = st.lists(
    st.characters()
    | st.integers(0xD800, 0xDFFF).map(chr)
    | st.sampled_from(["]]>", "<![CDATA[", "&amp;", '"', "\x00"]),
    max_size=30,
).map("".join)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=200)
@given(name=_ANY_TEXT, classname=_ANY_TEXT, said=_ANY_TEXT, printed=_ANY_TEXT, note=_ANY_TEXT)
def test_the_junit_writer_always_writes_a_file_a_reader_takes(tmp_path, name, classname, said, printed, note):
    """Whatever a verifier printed and a case or task is named (controls, a NUL, lone surrogates, ``]]>``,
    quotes): the report is well-formed XML, one testcase each, and text XML can hold arrives as it was."""
    from verifier_tui.commands.report import JunitCase, junit_name, write_junit
    from verifier_tui.words.text import one_id

    cases = [
        JunitCase(classname, name, "0.1", failure=(said, printed), stdout=printed, stderr=printed),
        JunitCase(classname, name + "x", "0.1", error=said),
        JunitCase(classname, name + "y", "0.1", skipped=said),
    ]
    report = tmp_path / "report.xml"
    assert write_junit(report, name, cases, 1.0, sandbox=said, notes=[note]) is None
    suite = ET.parse(report).getroot()
    found = suite.findall("testcase")
    assert [c.get("name") for c in found] == [junit_name(c.name) for c in cases]
    assert {c.get("classname") for c in found} == {one_id(classname)}
    if printed and not re.search(r"[^\t\n\x20-\x7e]", printed):  # (a carriage return is a line break to XML)
        assert found[0].find("system-out").text == printed
        assert found[0].find("failure").text == printed


def test_the_junit_writer_keeps_a_huge_output_whole_and_well_formed(tmp_path):
    """5 MB of output with controls, NUL, a lone surrogate and ``]]>``, a name of 10,000 characters: a file a
    reader takes, every line of the output in it, the name as every face shows it."""
    from verifier_tui.commands.report import JunitCase, junit_name, write_junit

    printed = ("line \x1b[31mred\x00 ]]> & <b> \ud800 é\n" * 200_000)[:5_000_000]
    report = tmp_path / "report.xml"
    name = "n" * 10_000 + "<&\"'>"
    assert write_junit(report, name, [JunitCase(name, name, "1.0", stderr=printed)], 1.0) is None
    case = ET.parse(report).getroot().find("testcase")
    assert case is not None and case.get("name") == junit_name(name)
    assert case.find("system-err").text == terminal.xml_text(printed)


def test_junit_cuts_no_side_of_a_mismatch_that_fits_whole(env, tmp_path):
    """A short expected.json and a longer result that fit 1,000 characters together: each side was
    cut to half the room whatever the other took, so the message lost the 0.0 that missed. A title
    that fits is whole; one that does not leaves the shorter side its own length, up to half."""
    keys = ["reward"] + [f"metric_{n:02}_accuracy_of_the_subtask" for n in range(20)]
    rewards = ", ".join(f"{k!r}: {0.0 if n == 11 else 1.0}" for n, k in enumerate(keys))
    task = make_task(tmp_path / "t", f"def verify(workspace):\n    return {{{rewards}}}\n", cases={"a": {"a.txt": ""}})
    wanted = {"reward": 1.0, "metric_10_accuracy_of_the_subtask": 1.0}
    (task / "cases" / "a" / "expected.json").write_text(json.dumps({"rewards": wanted}))
    report = tmp_path / "r.xml"
    no_traceback(run_tool(env, "test", task, "--python", PY, "--junit", report))
    [failure] = ET.parse(report).iter("failure")
    message = failure.get("message")
    assert "left out" not in message and '"metric_10_accuracy_of_the_subtask": 0.0' in message, message


def test_junit_says_what_a_case_with_many_rewards_got(env, tmp_path):
    """A verifier giving 20 long-named rewards, one of them 0.0 where expected.json wants 1.0: the
    failure's message, cut at 1,000 characters in its middle, lost "got" and the 0.0, and its body was
    empty, so nothing CI showed said what the run scored. Both sides are in each now. A U+FFFE in the
    task's name is written #xFFFE, as pytest's escape spells it in a name, in the suite's name as in
    the classname (which pytest leaves as the plugin's id spells it: #xFFFE too)."""
    keys = [f"metric_{n:02}_accuracy_of_the_subtask" for n in range(20)]
    rewards = ", ".join(f"{k!r}: {0.0 if n == 5 else 1.0}" for n, k in enumerate(keys))
    verifier = f"def verify(workspace):\n    return {{{rewards}}}\n"
    task = make_task(tmp_path / "t\ufffe", verifier, cases={"a": {"a.txt": ""}})
    (task / "cases" / "a" / "expected.json").write_text(json.dumps({"rewards": dict.fromkeys(keys, 1.0)}))
    report = tmp_path / "r.xml"
    done = run_tool(env, "test", task, "--python", PY, "--junit", report)
    no_traceback(done)
    [failure] = ET.parse(report).iter("failure")
    message, body = failure.get("message"), failure.text
    assert len(message) <= 1000 and "got" in message and "0.0" in message, message
    got = next(line for line in body.splitlines() if line.startswith("got "))
    assert '"metric_05_accuracy_of_the_subtask": 0.0' in got, body
    suite = ET.parse(report).getroot()
    assert suite.get("name") == "verifier-tui t#xFFFE" and suite[0].get("classname") == "t#xFFFE", suite.attrib
    assert any(line.startswith("expected ") for line in body.splitlines()), body


@pytest.mark.parametrize("alone_first", [False, True])
def test_a_task_named_alone_and_in_a_caseless_folder_is_listed_in_the_refusal(env, tmp_path, alone_first):
    """`test f1 f1/alpha --json --junit` (f1 holding alpha and zeta, neither with a case) was refused
    with a line naming both, while the document and the JUnit report listed zeta only: alpha was left
    out as if its group ran, but the refusal runs nothing. Every face lists both, in either order."""
    folder = tmp_path / "c" / "f1"
    for name in ("zeta", "alpha"):
        make_task(folder / name)
    paths = [folder / "alpha", folder] if alone_first else [folder, folder / "alpha"]
    report = tmp_path / "j.xml"
    done = run_tool(env, "test", *paths, "--json", "--junit", report, "--python", PY)
    assert done.returncode == 2
    no_traceback(done)
    assert [task["task"] for task in json.loads(done.stdout)["without_cases"]] == ["alpha", "zeta"]
    said = done.stderr.strip().splitlines()
    assert len(said) == 1 and "(alpha, zeta) and none has a case to test" in said[0]
    cases = ET.parse(report).getroot().iter("testcase")
    assert [case.get("classname") for case in cases if case.find("skipped") is not None] == ["alpha", "zeta"]
