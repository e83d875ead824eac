"""What ``test``, ``run`` and ``watch`` say first (issue 43, items 6 and 8), as a
user reads it: the real tool in a subprocess on real task folders.

- a case ``test`` does not judge (no expected.json) is listed with why, in the
  text and in ``--json``, and the exit status is what it was;
- a verify that returns something the contract refuses: the cause, in the
  runner's words, comes before what Harbor would raise for the missing reward
  file, on every line that says how the run went."""

from __future__ import annotations

import ast
import json
import shutil
import xml.etree.ElementTree as ET

import pytest

from tests.helpers.commands import run_tool, start_watch, stop
from tests.helpers.processes import in_a_cgroup
from tests.helpers.tasks import HANG_GUARD_S, PY, make_task


def test_a_case_without_expected_json_is_said_not_judged(env, example):
    task = example("hello-file")
    (task / "cases" / "wrong-text" / "expected.json").unlink()
    done = run_tool(env, "test", task, "--python", PY)
    assert done.returncode == 0, done.stdout + done.stderr  # the cases that are judged all pass
    assert "·  wrong-text: not judged: it has no expected.json (write one" in done.stdout
    assert done.stdout.splitlines()[-1] == "3 passed, 0 failed, 1 not judged"
    data = json.loads(run_tool(env, "test", task, "--json", "--python", PY).stdout)
    assert [(item["task"], item["case"]) for item in data["not_judged"]] == [("hello-file", "wrong-text")]
    assert data["not_judged"][0]["reason"].startswith("it has no expected.json")
    assert (data["passed"], data["failed"]) == (3, 0)


def test_a_case_not_judged_and_one_not_run_are_named_as_the_table_names_cases(env, example):
    """A case without expected.json was named ``cases/wrong-text`` two lines
    below one with an unusable expected.json named ``correct``, and the table
    above names cases by name alone."""
    task = example("hello-file")
    (task / "cases" / "wrong-text" / "expected.json").unlink()
    (task / "cases" / "correct" / "expected.json").write_text("{")
    lines = run_tool(env, "test", task, "--python", PY).stdout.splitlines()
    assert any(line.startswith("✓  missing-file ") for line in lines), lines
    assert any(line.startswith("!  correct: not run: expected.json is not valid JSON") for line in lines), lines
    assert any(line.startswith("·  wrong-text: not judged: it has no expected.json") for line in lines), lines


def test_a_task_without_a_case_below_a_folder_is_said_and_one_named_alone_is_told_true(env, example, tmp_path):
    """``test examples/tasks`` said "(6 tasks)" and never named plain-test-sh,
    which has no case; named alone, it said "no case ... under
    plain-test-sh/cases", a folder that does not exist."""
    tasks = example("hello-file").parent
    example("plain-test-sh")
    done = run_tool(env, "test", tasks, "--python", PY)
    assert done.returncode == 0, done.stdout + done.stderr  # nothing failed: said, not a failure
    said = next(said for said in done.stdout.splitlines() if "plain-test-sh" in said)
    assert said.startswith("·  task plain-test-sh (") and "not tested: it has no case: make one with " in said
    assert "verifier-tui run TASK --save-case NAME" in said
    assert done.stdout.splitlines()[-1] == "4 passed, 0 failed, 1 task without a case"
    data = json.loads(run_tool(env, "test", tasks, "--json", "--python", PY).stdout)
    assert [(item["task"], item["folder"]) for item in data["without_cases"]] == [
        ("plain-test-sh", str(tasks / "plain-test-sh"))
    ]
    report = tmp_path / "report.xml"
    run_tool(env, "test", tasks, "--junit", report, "--python", PY)
    suite = ET.parse(report).getroot()
    skipped = [c for c in suite.iter("testcase") if c.find("skipped") is not None]
    assert [(c.get("classname"), c.get("name")) for c in skipped] == [("plain-test-sh", "(task)")]
    assert skipped[0].find("skipped").get("message").startswith("not tested: it has no case: make one with ")
    assert suite.get("skipped") == "1" and suite.get("failures") == "0"
    alone = run_tool(env, "test", tasks / "plain-test-sh", "--python", PY)
    assert alone.returncode == 2
    assert "/cases" not in alone.stderr and "has no cases folder; make one with" in alone.stderr


def test_with_no_task_to_test_the_tasks_without_a_case_are_said_too(env, example, tmp_path):
    """A folder whose one task with cases cannot be tested (several verifiers)
    and one task without a case: ``test`` said only the first, on stderr and in
    JUnit, and left the task without a case out (the pytest plugin says it)."""
    tasks = example("hello-file").parent
    example("plain-test-sh")
    tests = tasks / "hello-file" / "tests"
    (tests / "verifier.py").rename(tests / "a.py")
    (tests / "b.py").write_text((tests / "a.py").read_text())
    report = tmp_path / "report.xml"
    done = run_tool(env, "test", tasks, "--junit", report, "--python", PY)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "hello-file has several verifiers" in done.stderr
    said = next(said for said in done.stderr.splitlines() if "plain-test-sh" in said)
    assert said.startswith("verifier-tui: task plain-test-sh (") and "not tested: it has no case: make one " in said
    suite = ET.parse(report).getroot()
    skipped = [c for c in suite.iter("testcase") if c.find("skipped") is not None]
    assert [(c.get("classname"), c.get("name")) for c in skipped] == [("plain-test-sh", "(task)")]


def test_a_case_left_out_by_case_is_not_listed(env, example):
    task = example("hello-file")
    (task / "cases" / "wrong-text" / "expected.json").unlink()
    data = json.loads(run_tool(env, "test", task, "--case", "correct", "--json", "--python", PY).stdout)
    assert data["not_judged"] == [] and data["passed"] == 1


RETURNS = {
    "str": "'pass'",
    "none": "None",
    "bool": "True",
    "string-in-a-dict": '{"reward": "1.0"}',
    "str-after-unfinished-output": "'pass'",
    "str-after-unfinished-output-naming-the-prefix": "'pass'",
    "str-then-an-atexit-callback-raises": "'pass'",
    "str-naming-the-prefix-after-unfinished-output": "'run_verifier: error: verify returned 1.0 (float)'",
    "str-after-unfinished-output-naming-the-prefix-with-an-apostrophe": "'pass'",
    "object-whose-repr-names-the-prefix-after-unfinished-output": (
        "type('Score', (), {'__repr__': lambda self: 'Score(run_verifier: error: fine)'})()"
    ),
}
# What the runner says verify returned, where its words are not a literal's repr (an object of the verifier's).
SAID = {
    "object-whose-repr-names-the-prefix-after-unfinished-output": "verify returned Score(run_verifier: error: fine) (",
}
# What verify does first: a mark with no newline, so the runner's line goes on from it (`0;run_verifier: error: ...`);
# or a log line left unfinished that names the runner's prefix itself, mid-line, before the runner's own line.
BEFORE = {
    "str-after-unfinished-output": "sys.stderr.write('0;')",
    "str-after-unfinished-output-naming-the-prefix": (
        "sys.stderr.write('log: run_verifier: error: verify returned 0.5 (checked) -- ')"
    ),
    # Python prints the callback's report after the runner's line as it exits (`Exception ignored in atexit
    # callback ...`): it ended nothing, the runner's line is still the cause.
    "str-then-an-atexit-callback-raises": "atexit.register(lambda: {}['cleanup'])",
    # what verify returned names the prefix: the runner's line holds it twice, its own place first
    "str-naming-the-prefix-after-unfinished-output": "sys.stderr.write('0;')",
    # the apostrophe in verify's own words is no quote of the runner's: it opens no value
    "str-after-unfinished-output-naming-the-prefix-with-an-apostrophe": (
        """sys.stderr.write("log: run_verifier: error: can't read answer -- ")"""
    ),
    # what verify returned names the prefix unquoted, in its own repr
    "object-whose-repr-names-the-prefix-after-unfinished-output": "sys.stderr.write('0;')",
}


@pytest.fixture(params=list(RETURNS), ids=list(RETURNS))
def wrong_return(request, tmp_path):
    first = BEFORE.get(request.param, "pass")
    verifier = f"import atexit\nimport sys\n\n\ndef verify(workspace):\n    {first}\n"
    verifier += f"    return {RETURNS[request.param]}\n"
    task = make_task(tmp_path / request.param, verifier)
    (task / "cases" / "only" / "workspace").mkdir(parents=True)
    (task / "cases" / "only" / "expected.json").write_text('{"exit_code": 2}')
    return task


def before(text: str, first: str, then: str) -> bool:
    return first in text and then in text and text.index(first) < text.index(then)


def returned(task) -> str:
    """What the runner says verify returned, as its words give it: `verify returned 'pass' (` (a dict's
    value is named further on)."""
    if task.name in SAID:
        return SAID[task.name]
    value = ast.literal_eval(RETURNS[task.name])
    return f"verify returned {value!r} (" if isinstance(value, str) else "verify returned "


def runners_cause_alone(text: str, task) -> bool:
    """``text`` says what verify returned, and no more of the runner's line or of verify's own output."""
    return returned(task) in text and (
        "run_verifier" not in text.replace(returned(task), "") and "0.5 (" not in text and "can't" not in text
    )


def test_run_says_what_verify_returned_before_what_harbor_would_raise(env, wrong_return):
    done = run_tool(env, "run", wrong_return, "--python", PY)
    assert done.returncode == 2
    lines = done.stdout.splitlines()
    outcome = next(line for line in lines if line.startswith("exit 2"))
    assert outcome.startswith("exit 2 · contract error: verify returned ")
    assert runners_cause_alone(outcome, wrong_return), outcome
    verdict = next(line for line in lines if line.startswith("verdict: "))
    assert verdict.startswith("verdict: none: verify returned ")
    assert runners_cause_alone(verdict, wrong_return), verdict
    assert before(verdict, "verify returned", "Harbor would raise RewardFileNotFoundError")
    data = json.loads(run_tool(env, "run", wrong_return, "--json", "--python", PY).stdout)
    assert data["outcome_words"].startswith("exit 2 · contract error: verify returned ")
    assert data["verdict_message"].startswith("verify returned ")
    assert runners_cause_alone(data["verdict_message"], wrong_return), data["verdict_message"]
    assert data["verdict_error"] == "RewardFileNotFoundError"


def test_test_row_says_what_verify_returned_first(env, wrong_return):
    done = run_tool(env, "test", wrong_return, "--python", PY)
    assert done.returncode == 0  # expected.json asks for the contract error
    row = next(line for line in done.stdout.splitlines() if line.startswith("✓  only"))
    assert before(row, "contract error: verify returned", "RewardFileNotFoundError")
    assert runners_cause_alone(row, wrong_return), row


def test_watch_line_says_what_verify_returned_first(env, wrong_return):
    proc, reader = start_watch(env, wrong_return, "--python", PY)
    try:
        line = reader.next_run(HANG_GUARD_S)
        whole = reader.next()  # the words too long for their column, whole on the line below
        said = reader.next()  # the runner's line, as stderr ends
    finally:
        code, stderr = stop(proc)
    assert code == 0 and "Traceback" not in stderr
    assert "contract error   verify returned" in line, line  # cut to its column, a long value with `…`
    assert before(whole, "verify returned", "RewardFileNotFoundError"), whole
    assert runners_cause_alone(whole, wrong_return), whole
    # The runner's line alone, as run names its cause: not `0;` (output verify left unfinished) before it.
    assert said.startswith("      run_verifier: error: verify returned ") and "0.5 (checked)" not in said, said


def test_a_case_killed_past_memory_mb_says_so_under_the_table_once(env, tmp_path):
    """run said "out of memory"; test showed only "killed by signal 9"; then it said it twice,
    its own line and the run's note, in other words, as if two things had gone wrong."""
    task = make_task(
        tmp_path / "t",
        "def verify(workspace):\n    blob = bytearray(400 << 20)\n    return 1.0\n",
        toml='version = "1.0"\n[environment]\nmemory_mb = 128\n',
        cases={"only": {}},
    )
    (task / "cases" / "only" / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    junit = tmp_path / "report.xml"
    done = run_tool(env, "test", task, "--python", PY, "--junit", junit)
    assert done.returncode == 1, done.stdout + done.stderr
    said = [line for line in done.stdout.splitlines() if "out of memory" in line]
    killed = "the runner" if in_a_cgroup("memory") else "run_verifier.py"
    assert len(said) == 1 and killed in said[0] and "memory_mb = 128" in said[0], done.stdout
    # The JUnit failure a CI page shows says it too: its body was the (empty) stderr alone.
    failure = ET.parse(junit).getroot().find("testcase/failure")
    assert failure is not None and "out of memory" in (failure.text or "")


def test_a_failing_case_says_its_own_problem_under_the_table(env, tmp_path):
    """A case whose workspace leads out of the task runs on an empty one: its
    ✗ said nothing of why."""
    task = make_task(tmp_path / "t", "def verify(workspace):\n    return float((workspace / 'a').exists())\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "a").write_text("x")
    (task / "cases" / "out").mkdir(parents=True)
    (task / "cases" / "out" / "workspace").symlink_to(elsewhere)
    (task / "cases" / "out" / "expected.json").write_text(json.dumps({"rewards": {"reward": 1.0}}))
    done = run_tool(env, "test", task, "--python", PY)
    assert done.returncode == 1
    said = [line for line in done.stdout.splitlines() if line.startswith("out: ")]
    assert len(said) == 1 and f"leads out of the task, to {elsewhere}" in said[0], done.stdout


def test_a_task_whose_only_expected_json_is_in_a_dot_folder_has_no_case(env, example):
    """``cases/.draft/expected.json`` only: a dot-folder is no case (none
    runs), yet the search counted the task as one with a case, and ``test``
    failed it, exit 1, with ``! not tested: no case with a usable expected.json``
    where a task without a case is said and passes."""
    tasks = example("hello-file").parent
    drafts = example("plain-test-sh")
    (drafts / "cases" / ".draft" / "workspace").mkdir(parents=True)
    (drafts / "cases" / ".draft" / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    done = run_tool(env, "test", tasks, "--python", PY)
    assert done.returncode == 0, done.stdout + done.stderr
    said = next(said for said in done.stdout.splitlines() if "plain-test-sh" in said)
    assert said.startswith("·  task plain-test-sh (") and "not tested: it has no case: make one with " in said
    assert done.stdout.splitlines()[-1] == "4 passed, 0 failed, 1 task without a case"


def test_a_task_whose_cases_have_no_expected_json_is_said_so_in_the_summary_and_when_alone(env, example):
    """A task found below a folder whose 4 case folders have no expected.json:
    its line said ``not tested: none of its 4 cases has an expected.json``,
    but the summary said ``1 task without a case``; and with it the only task
    there, ``test`` said ``none has a case to test: make one with verifier-tui
    run TASK --save-case NAME``, to a user looking at its four cases."""
    tasks = example("hello-file").parent
    example("plain-test-sh")
    unjudged = example("sum-column")
    shutil.rmtree(unjudged / "cases" / "quantity-variant")
    for expected in unjudged.glob("cases/*/expected.json"):
        expected.unlink()
    done = run_tool(env, "test", tasks, "--python", PY)
    assert done.returncode == 0, done.stdout + done.stderr
    said = next(said for said in done.stdout.splitlines() if "sum-column" in said)
    assert "not tested: none of its 2 cases has an expected.json (write one" in said
    summary = done.stdout.splitlines()[-1]
    assert summary == "4 passed, 0 failed, 1 task without a case, 1 task without an expected.json"
    shutil.rmtree(tasks / "hello-file")
    shutil.rmtree(tasks / "plain-test-sh")
    alone = run_tool(env, "test", tasks, "--python", PY)
    assert alone.returncode == 2 and alone.stdout == ""
    assert alone.stderr.count("\n") == 1, alone.stderr
    assert "holds 1 task(s) (sum-column) and none has a case to test" in alone.stderr
    assert "none of its 2 cases has an expected.json (write one" in alone.stderr
    assert "--save-case" not in alone.stderr


def test_a_task_given_alone_whose_cases_have_no_expected_json_says_what_to_write(env, example):
    """``test TASK`` on a task whose cases have no expected.json (``new``'s three, say, once
    their expected.json were removed, or cases made by hand): it said ``no case with a usable
    expected.json under TASK/cases`` and no more, where a folder of tasks says what to write."""
    task = example("sum-column")
    for expected in task.glob("cases/*/expected.json"):
        expected.unlink()
    done = run_tool(env, "test", task, "--python", PY)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1, done.stderr
    assert "no case with a usable expected.json under " in done.stderr
    assert 'write one, such as {"rewards": {"reward": 1.0}} or {"exit_code": 1}' in done.stderr
