"""What the real ``verifier-tui`` command says about real tasks as they are
found and about paths that are not tasks: one line and exit 2 for what it
cannot open, the task's name, the runner, the rows of a parameterized task,
and the interpreter's shortcomings."""

from __future__ import annotations

import json
import shutil
from xml.etree import ElementTree as ET

import pytest

from tests.helpers.commands import no_traceback, run_tool
from tests.helpers.tasks import DEFAULT_VERIFIER, PY, REPO, SHIM, copy_example, make_task, python_or_skip, write


def one_line_refusal(done, *words):
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == ""
    no_traceback(done)
    line = done.stderr.strip()
    assert "\n" not in line and line.startswith("verifier-tui: ")
    for word in words:
        assert word in line, line
    return line


# ---------------------------------------------------------------------------
# Bad paths


@pytest.mark.parametrize("command", ["run", "explain", "test", "watch"])
def test_the_root_folder_and_an_empty_path_get_one_short_line(env, command):
    line = one_line_refusal(run_tool(env, command, "/"), "/ is not a task", "expected a task folder")
    assert len(line) < 400
    one_line_refusal(run_tool(env, command, ""), "an empty path")


def test_this_checkout_is_not_a_task(env):
    # Before: `run .` here ran a TUI test module as the verifier.
    one_line_refusal(run_tool(env, "run", ".", cwd=REPO), "is not a task")


def test_a_folder_of_tasks_lists_them(env, tmp_path, example):
    for name in ("count-errors", "hello-file", "sum-column"):
        example(name)
    one_line_refusal(
        run_tool(env, "run", tmp_path / "tasks"),
        "is a folder of 3 tasks, not a task: count-errors, hello-file, sum-column",
    )


def test_the_tui_refuses_a_folder_that_is_not_a_task_before_drawing(env, tmp_path):
    (tmp_path / "empty").mkdir()
    one_line_refusal(run_tool(env, tmp_path / "empty"), "is not a task")


# ---------------------------------------------------------------------------
# Kinds of tasks


@pytest.mark.parametrize("command", ["run", "explain", "test", "watch", "audit"])
def test_a_plain_test_sh_task_without_a_verifier(env, tmp_path, command):
    task_dir = make_task(
        tmp_path / "pytest-task",
        None,
        shim=False,
        files={
            "test.sh": "#!/bin/bash\npytest /tests/test_outputs.py\n",
            "test_outputs.py": "def verify(workspace):\n    return 1\n",
        },
    )
    line = one_line_refusal(
        run_tool(env, command, task_dir), "pytest-task is a plain Harbor task", "Harbor runs its tests/test.sh"
    )
    assert "as you asked" not in line
    # what to do, as the TUI says it
    assert f"into tests/verifier.py (def verify(workspace): ...) and run verifier-tui vendor {task_dir}," in line


PACKAGE_VERIFIER = """\
import os

from common import WANT
from . import scoring


def verify(workspace):
    return scoring.score(os.environ.get("MARK") == WANT)
"""


@pytest.mark.parametrize("command", ["run", "explain"])
def test_a_verifier_package_folder_is_its_tasks_verifier(env, tmp_path, command):
    """``run TASK/tests/grader`` (the package the shim runs): taken as a task of its own whose
    tests folder was the package, without task.toml's [verifier] env and with tests/ off sys.path,
    so ``import common`` failed there and nowhere else. It is the task's verifier, as naming its
    ``__init__.py`` is."""
    task = make_task(
        tmp_path / "pkg",
        None,
        toml='version = "1.0"\n\n[verifier]\nenv = { MARK = "x" }\n',
        files={
            "grader/__init__.py": PACKAGE_VERIFIER,
            "grader/scoring.py": "def score(ok):\n    return 1.0 if ok else 0.0\n",
            "common.py": "WANT = 'x'\n",
        },
        cases={"only": {"a.txt": "a"}},
    )
    shim = task / "tests" / "test.sh"
    shim.write_text(shim.read_text().replace("/tests/verifier.py", "/tests/grader/__init__.py"), encoding="utf-8")
    done = run_tool(env, command, "tests/grader", "--python", PY, cwd=task)
    assert done.stdout.startswith("task pkg · verifier tests/grader/__init__.py · case only"), done.stdout
    if command == "run":
        assert done.returncode == 0 and 'verdict: {"reward": 1.0}' in done.stdout, done.stdout + done.stderr


def test_a_verifier_package_of_a_task_without_task_toml_is_its_tasks_verifier(env, tmp_path):
    """A task is one by its tests/test.sh too (the one task rule): without a task.toml, the package's
    folder (or its __init__.py) was a task of its own, ``task grader``, with none of the task's cases."""
    task = make_task(
        tmp_path / "pkg", None, toml=None, files={"grader/__init__.py": DEFAULT_VERIFIER}, cases={"only": {"a": "a"}}
    )
    for named in ("tests/grader", "tests/grader/__init__.py"):
        done = run_tool(env, "run", named, "--python", PY, cwd=task)
        assert done.stdout.startswith("task pkg · verifier tests/grader/__init__.py · case only"), done.stdout
    # task.toml names the task first: a step's own tests/test.sh does not make the step one
    write(task / "task.toml", 'version = "1.0"\n')
    write(task / "steps" / "second" / "tests" / "test.sh", SHIM)
    write(task / "steps" / "second" / "tests" / "verifier.py", DEFAULT_VERIFIER)
    done = run_tool(env, "run", "steps/second/tests/verifier.py", "--python", PY, cwd=task)
    assert done.stdout.startswith("task pkg · verifier steps/second/tests/verifier.py"), done.stdout + done.stderr


@pytest.mark.parametrize("named", ["steps/second/tests/grader", "steps/second/tests/grader/__init__.py"])
def test_a_verifier_package_in_a_steps_tests_is_its_tasks_verifier(env, tmp_path, named):
    """Harbor lays a step's steps/NAME/tests over /tests: a package there (which that step's shim may
    name) was taken as a task of its own, ``task grader ... no case``, and naming its __init__.py staged
    the package alone as /tests, so the step's own modules beside it were not importable."""
    task = make_task(tmp_path / "pkg", None, cases={"only": {"a": "a"}})
    write(task / "steps" / "second" / "tests" / "test.sh", SHIM)
    write(task / "steps" / "second" / "tests" / "common.py", "SCORE = 1.0\n")
    write(task / "steps" / "second" / "tests" / "grader" / "__init__.py", STEP_PACKAGE)
    done = run_tool(env, "run", named, "--python", PY, cwd=task)
    assert done.stdout.startswith("task pkg · verifier steps/second/tests/grader/__init__.py · case only"), done.stdout
    assert done.returncode == 0 and 'verdict: {"reward": 1.0}' in done.stdout, done.stdout + done.stderr


STEP_PACKAGE = "from common import SCORE\n\n\ndef verify(workspace):\n    return SCORE\n"


def test_a_cases_workspace_points_to_its_case(env, tmp_path):
    """``run TASK/cases/wrong/workspace`` (the folder a newcomer sees the agent's files in): the
    refusal listed every kind of path the tool opens, not the case folder one level up."""
    task = make_task(tmp_path / "t", cases={"wrong": {"answer.txt": "no"}})
    line = one_line_refusal(run_tool(env, "run", "cases/wrong/workspace", cwd=task), "is the workspace of case wrong")
    assert f"open the case folder {task / 'cases' / 'wrong'}, or give it to a task as --workspace" in line
    # an agent's own code defining verify there: never run as a folder of verifiers
    write(task / "cases" / "wrong" / "workspace" / "agent.py", "def verify(workspace):\n    return 1.0\n")
    one_line_refusal(run_tool(env, "run", "cases/wrong/workspace", cwd=task), "is the workspace of case wrong")
    # a folder of cases/ named with a dot is no case (no run finds it): never the one to open
    write(task / "cases" / ".draft" / "workspace" / "answer.txt", "no")
    line = one_line_refusal(
        run_tool(env, "run", "cases/.draft/workspace", cwd=task), "cases/.draft, which is not a case"
    )
    assert "open the case folder" not in line, line


def test_a_task_inside_a_folder_shaped_like_a_workspace_is_opened_as_the_task_it_is(env, tmp_path):
    """A real task whose path merely looks like a case's workspace (``/x/cases/acme/workspace/mytask``,
    no task around ``cases/``) was refused as "in the workspace of case acme". A task is opened as the task
    it is, even inside a real case's workspace (Harbor runs the path given as a task); only what is no task
    there is refused."""
    task = make_task(tmp_path / "x" / "cases" / "acme" / "workspace" / "mytask", cases={"only": {"a": "a"}})
    done = run_tool(env, "run", ".", "--python", PY, cwd=task)
    assert done.stdout.startswith("task mytask · verifier tests/verifier.py · case only"), done.stdout + done.stderr
    make_task(tmp_path / "x", cases={"acme": {"a": "a"}})  # now a real case's workspace holds it
    done = run_tool(env, "run", ".", "--python", PY, cwd=task)
    assert done.stdout.startswith("task mytask · verifier tests/verifier.py · case only"), done.stdout + done.stderr
    one_line_refusal(run_tool(env, "run", task.parent), "is the workspace of case acme")
    # a workspace's shape with no task around cases/ is no case's workspace: said as any folder that is no task
    write(tmp_path / "y" / "cases" / "acme" / "workspace" / "a.txt", "a")
    line = one_line_refusal(run_tool(env, "run", tmp_path / "y" / "cases" / "acme" / "workspace"), "is not a task")
    assert "workspace of" not in line, line


def test_a_task_shaped_workspace_of_a_real_case_is_the_agents(env, tmp_path):
    """An agent that left ``tests/test.sh`` and ``tests/verifier.py`` in its workspace: ``run
    TASK/cases/wrong/workspace`` ran the agent's verifier as a task (1.0). The workspace folder of a real
    task's case, and what is in it but a task strictly below it, is the agent's."""
    task = make_task(tmp_path / "t", cases={"wrong": {"answer.txt": "no"}})
    workspace = task / "cases" / "wrong" / "workspace"
    write(workspace / "tests" / "test.sh", SHIM)
    write(workspace / "tests" / "verifier.py", "def verify(workspace):\n    return 1.0\n")
    one_line_refusal(run_tool(env, "run", workspace, "--python", PY), "is the workspace of case wrong")
    one_line_refusal(run_tool(env, "run", workspace / "tests", "--python", PY), "in the workspace of case wrong")


AGENTS_VERIFY = "def verify(workspace):\n    return 1.0\n"


@pytest.mark.parametrize(
    ("agents", "named"),
    [
        ("workspace/__init__.py", "workspace"),
        ("workspace/agentpkg/__init__.py", "workspace/agentpkg"),
        ("workspace/agentpkg/__init__.py", "workspace/agentpkg/__init__.py"),
    ],
)
def test_an_agents_package_in_a_cases_workspace_is_never_run_as_the_verifier(env, tmp_path, agents, named):
    """An agent's package in a case's workspace defining verify: ``run cases/wrong/workspace`` ran the
    agent's code as the task's verifier (the rule for a verifier package's folder took any folder below a
    task.toml), scored 1.0 and said the expected 0.0 was matched."""
    task = make_task(tmp_path / "t", "def verify(workspace):\n    return 0.0\n", cases={"wrong": {"a.txt": "no"}})
    write(task / "cases" / "wrong" / "expected.json", '{"rewards": {"reward": 0.0}}')
    write(task / "cases" / "wrong" / agents, AGENTS_VERIFY)
    case = task / "cases" / "wrong"
    for command in ("run", "explain", "test"):
        line = one_line_refusal(run_tool(env, command, f"cases/wrong/{named}", cwd=task), "workspace of case wrong")
        assert f"open the case folder {case}" in line, line
    # A package beside tests/ (which Harbor does not stage) is a folder of verifiers, not the task's verifier.
    write(task / "grader" / "__init__.py", AGENTS_VERIFY)
    done = run_tool(env, "run", "grader", cwd=task)
    assert done.stdout.startswith("task grader · verifier grader/__init__.py · no case"), done.stdout


def test_a_nemo_gym_environment(env, tmp_path):
    folder = tmp_path / "episode-env"
    write(folder / "environment.yaml", "tasksets:\n  - name: main\n    verifier:\n      implementation: grade:verify\n")
    write(folder / "grade.py", "async def verify(attempt, verifier_input):\n    return 1.0\n")
    one_line_refusal(run_tool(env, "run", folder), "NeMo Gym environment", "episode API", "grade:verify")


def test_hello_world_runs_its_verifier_not_its_pytest_module(env, tmp_path):
    task_dir = make_task(
        tmp_path / "hello_world",
        "def verify(workspace):\n    return 0.5\n",
        files={
            "test_hello_world_verifier.py": ("from runpy import run_path\nverify = run_path('verifier.py')['verify']\n")
        },
    )
    data = json.loads(run_tool(env, "run", "--json", task_dir, "--python", PY).stdout)
    assert data["verifier"] == str(task_dir / "tests" / "verifier.py")
    assert data["rewards"] == {"reward": 0.5}


def test_the_task_tables_name_in_the_header_and_the_json(env, example):
    task_dir = example("greeting-rows")
    done = run_tool(env, "run", task_dir, "--python", PY)
    assert done.stdout.startswith("task verifier-tui-examples/greeting-rows · ")
    data = json.loads(run_tool(env, "run", "--json", task_dir, "--python", PY).stdout)
    assert data["task_name"] == "verifier-tui-examples/greeting-rows"
    tested = json.loads(run_tool(env, "test", "--json", task_dir, "--python", PY).stdout)
    assert tested["task_name"] == "verifier-tui-examples/greeting-rows"


# ---------------------------------------------------------------------------
# Parameterized tasks


def test_task_id_runs_a_row(env, example):
    task_dir = example("greeting-rows")
    workspace = task_dir / "cases" / "wrong-name" / "workspace"  # greets Ada
    for task_id, reward in (("ada", 1.0), ("grace", 0.0)):
        done = run_tool(env, "run", "--json", task_dir, "--task-id", task_id, "--workspace", workspace, "--python", PY)
        data = json.loads(done.stdout)
        assert (data["rewards"], data["task_id"]) == ({"reward": reward}, task_id)
        assert data["task_data"] == str(task_dir / "tasks.jsonl")
    text = run_tool(env, "run", task_dir, "--task-id", "grace", "--python", PY).stdout
    assert " · task row grace · " in text.splitlines()[0]


def test_task_data_naming_tasks_jsonl_asks_for_a_row(env, example):
    task_dir = example("greeting-rows")
    line = one_line_refusal(
        run_tool(env, "run", task_dir, "--task-data", task_dir / "tasks.jsonl"),
        "JSON Lines with 3 task rows",
        "--task-id ID",
        "ada, grace, lin",
    )
    assert "invalid JSON" not in line
    one_line_refusal(run_tool(env, "run", task_dir, "--task-id", "nosuch"), "no row with task_id 'nosuch'")


def test_what_is_wrong_with_a_task_data_file_of_rows_is_said(env, example, tmp_path):
    """``--task-data FILE.jsonl``: a file whose lines are not rows said only
    "no row with task_id 'a' (task ids: none)", hiding why; a row repeated
    later in the file, or a broken line, was dropped without a word."""
    task_dir = example("hello-file")
    flat = tmp_path / "flat.jsonl"
    flat.write_text('{"a": 1}\n')
    for more in ([], ["--task-id", "a"]):
        one_line_refusal(
            run_tool(env, "run", task_dir, "--case", "correct", "--task-data", flat, *more),
            "(task ids: none)",
            "; flat.jsonl: line 1 has no task_id (a string) (those lines are left out)",
        )
    repeated = tmp_path / "repeated.jsonl"
    repeated.write_text('{"task_id": "a", "n": 1}\n{"task_id": "a", "n": 2}\n')
    for command in ("run", "explain"):
        done = run_tool(env, command, task_dir, "--case", "correct", "--task-data", repeated, "--python", PY)
        no_traceback(done)
        assert done.returncode == 0, done.stderr
        said = (
            "note: repeated.jsonl: line 2 repeats task_id 'a' (first on line 1, which is used) "
            "(those lines are left out)"
        )
        assert said in done.stdout.splitlines(), done.stdout


def test_a_case_without_a_row_says_so(env, example):
    done = run_tool(env, "run", example("greeting-rows"), "--case", "no-row", "--python", PY)
    assert done.returncode == 1
    assert "note: case no-row: no task data: the task is parameterized (tasks.jsonl, 3 rows)" in done.stdout


# ---------------------------------------------------------------------------
# The task's own runner

OWN_RUNNER = """\
import os, sys
args = sys.argv[1:]
reward_dir = args[args.index("--reward-dir") + 1]
open(os.path.join(reward_dir, "reward.txt"), "w").write("0.25")
"""


def test_the_header_says_the_task_ships_a_different_runner_and_runner_task_runs_it(env, tmp_path):
    task_dir = make_task(tmp_path / "published")
    write(task_dir / "tests" / ".ng" / "run_verifier.py", OWN_RUNNER)
    ours = run_tool(env, "run", task_dir, "--python", PY)
    header = ours.stdout.splitlines()[0]
    assert header.endswith(" · our runner (the task's differs)")
    assert "--runner task runs the task's own" in ours.stdout
    assert 'verdict: {"reward": 1.0}' in ours.stdout
    theirs = run_tool(env, "run", task_dir, "--runner", "task", "--python", PY)
    assert theirs.stdout.splitlines()[0].endswith(" · task's own runner")
    assert 'verdict: {"reward": 0.25}' in theirs.stdout
    one_line_refusal(run_tool(env, "explain", task_dir, "--runner", "task", "--python", PY), "has no --explain")


@pytest.mark.parametrize("folder", ["published", "steps/published"])
def test_test_says_the_task_ships_a_different_runner(env, tmp_path, folder):
    """``test`` on a task whose own runner differs from verifier-tui's (here,
    it does not even compile): `1 passed, 0 failed` and not a word, where
    ``run`` says the sandbox runs the task's runner, and every trial of the
    published task would score nothing. A task kept in a folder named
    ``steps`` had its runner named ``steps/published/tests/...``, as a step's own."""
    task_dir = make_task(tmp_path / folder, cases={"c": {}})
    write(task_dir / "cases" / "c" / "expected.json", '{"rewards": {"reward": 1.0}}')
    write(task_dir / "tests" / ".ng" / "run_verifier.py", "import sys\nsys.exit(main(\n")
    done = run_tool(env, "test", task_dir, "--python", PY)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[1].startswith(
        "note: the task ships its own runner (tests/.ng/run_verifier.py) and it differs from verifier-tui's: "
        "the sandbox runs the task's"
    ), done.stdout
    assert lines[1].endswith("--runner task runs the task's own"), done.stdout
    assert lines[-1] == "1 passed, 0 failed"
    # --json says it of the task too (each case's notices carried it; a task with none run had it nowhere)
    task_notes = json.loads(run_tool(env, "test", task_dir, "--python", PY, "--json").stdout)["tasks"][0]["notices"]
    assert [note.split(":")[0] for note in task_notes] == [lines[1].removeprefix("note: ").split(":")[0]], task_notes
    assert task_notes[0].endswith("--runner task runs the task's own"), task_notes
    same = make_task(tmp_path / "same", cases={"c": {}})
    write(same / "cases" / "c" / "expected.json", '{"rewards": {"reward": 1.0}}')
    write(same / "tests" / ".ng" / "run_verifier.py", (REPO / "runner" / "run_verifier.py").read_text())
    assert "ships its own runner" not in run_tool(env, "test", same, "--python", PY).stdout


def test_test_runner_task_says_the_tasks_runner_note_of_the_task_as_of_each_case(env, tmp_path):
    """``test --runner task``: each case's notices said ``running the task's own runner ..., as the
    sandbox would``, but the task's (its header in ``test``, its ``tasks`` row in --json, the plugin's
    TaskNote) left it out, where under verifier-tui's runner the task's note is the runner's: one task,
    notes that disagree. Now one list of the task's notes (Session.task_notices) for all of them."""
    same = make_task(tmp_path / "same", cases={"c": {}, "d": {}})
    for case in ("c", "d"):
        write(same / "cases" / case / "expected.json", '{"rewards": {"reward": 1.0}}')
    write(same / "tests" / ".ng" / "run_verifier.py", (REPO / "runner" / "run_verifier.py").read_text())
    done = run_tool(env, "test", same, "--python", PY, "--runner", "task")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[1].startswith("note: running the task's own runner (tests/.ng/run_verifier.py)")
    data = json.loads(run_tool(env, "test", same, "--python", PY, "--runner", "task", "--json").stdout)
    [task_notes] = [task["notices"] for task in data["tasks"]]
    assert [note.split(" (")[0] for note in task_notes] == ["running the task's own runner"], task_notes
    for case in data["cases"]:
        assert set(task_notes) <= set(case["notices"]), (task_notes, case)


def test_every_case_and_the_junit_report_say_the_task_ships_a_different_runner(env, tmp_path):
    """The note that the sandbox runs the task's own runner was on the
    session's first case alone in test --json (the others had none), and
    nowhere in --junit, which is what a CI page shows."""
    task_dir = make_task(tmp_path / "published", cases={"a": {}, "b": {}})
    for case in ("a", "b"):
        write(task_dir / "cases" / case / "expected.json", '{"rewards": {"reward": 1.0}}')
    write(task_dir / "tests" / ".ng" / "run_verifier.py", "import sys\nsys.exit(main(\n")
    junit = tmp_path / "junit.xml"
    done = run_tool(env, "test", task_dir, "--python", PY, "--json", "--junit", junit)
    cases = json.loads(done.stdout)["cases"]
    assert [case["case"] for case in cases] == ["a", "b"]
    for case in cases:
        assert any("ships its own runner" in note for note in case["notices"]), case
    properties = ET.parse(junit).getroot().find("properties")
    notes = [p.get("value") for p in properties.findall("property") if p.get("name") == "note"]
    assert len(notes) == 1 and notes[0].startswith("published: the task ships its own runner"), notes


def test_runner_task_on_a_task_without_one(env, example):
    one_line_refusal(run_tool(env, "run", example("hello-file"), "--runner", "task"), "ships no runner of its own")


@pytest.mark.parametrize(
    ("link", "target", "said"),
    [
        ("tests/.ng/run_verifier.py", "../runner_v2.py", "tests/.ng/run_verifier.py is a link to ../runner_v2.py"),
        ("tests/.ng", "{elsewhere}", "tests/.ng is a link to {elsewhere}"),
    ],
)
def test_runner_task_on_a_runner_behind_a_link_names_the_link(env, tmp_path, link, target, said):
    """``ls tests/.ng`` shows run_verifier.py (a link): the refusal said the task
    had "no tests/.ng/run_verifier.py", and the user looking for it found it."""
    task_dir = make_task(tmp_path / "t")
    elsewhere = tmp_path / "elsewhere"
    write(elsewhere / "run_verifier.py", OWN_RUNNER)
    write(task_dir / "tests" / "runner_v2.py", OWN_RUNNER)
    if link != "tests/.ng":
        (task_dir / "tests" / ".ng").mkdir()
    (task_dir / link).symlink_to(target.format(elsewhere=elsewhere))
    line = one_line_refusal(run_tool(env, "run", task_dir, "--runner", "task", "--python", PY), "ships no runner")
    assert said.format(elsewhere=elsewhere) in line
    assert "no tests/.ng/run_verifier.py" not in line


def test_runner_task_on_a_runner_that_is_a_folder_says_so(env, tmp_path):
    task_dir = make_task(tmp_path / "t")
    (task_dir / "tests" / ".ng" / "run_verifier.py").mkdir(parents=True)
    line = one_line_refusal(run_tool(env, "run", task_dir, "--runner", "task", "--python", PY), "ships no runner")
    assert "(tests/.ng/run_verifier.py is a folder, not a regular file)" in line


def test_runner_task_that_does_not_compile_is_not_said_to_be_the_verifier(env, tmp_path):
    """A task's own runner cut short (a bad merge, a copy stopped half way): the
    run said only `exit 1 · verifier raised`, of a verifier never imported."""
    task_dir = make_task(tmp_path / "t")
    write(task_dir / "tests" / ".ng" / "run_verifier.py", "import sys\nsys.exit(main(\n")
    done = run_tool(env, "run", task_dir, "--runner", "task", "--python", PY)
    assert done.returncode == 1, done.stdout + done.stderr  # what test.sh would exit with
    assert "note: the task's own runner (tests/.ng/run_verifier.py) does not compile (SyntaxError, line 2)" in (
        done.stdout
    )
    assert "verify was never called" in done.stdout


# ---------------------------------------------------------------------------
# Interpreters and dependencies


def test_an_old_python_is_refused_as_the_shim_refuses_it(env, tmp_path):
    done = run_tool(env, "run", make_task(tmp_path / "t"), "--python", python_or_skip("3.7"))
    assert done.returncode == 127
    assert "exit 127 · refused by test.sh" in done.stdout
    assert "Harbor would raise RewardFileNotFoundError" in done.stdout
    assert "the sandbox's test.sh refuses an interpreter older than 3.8" in done.stdout
    no_traceback(done)
    # No bad input: --json prints the run's document, the shim's verdict in it.
    done = run_tool(env, "run", make_task(tmp_path / "t"), "--python", python_or_skip("3.7"), "--json")
    assert done.returncode == 127
    assert json.loads(done.stdout)["outcome"] == "refused_by_shim"


def test_nemo_gym_given_the_package_root(env, tmp_path):
    task_dir = make_task(
        tmp_path / "t", "from nemo_gym.verifiers.helpers import VALUE\n\ndef verify(workspace):\n    return VALUE\n"
    )
    package = tmp_path / "site" / "nemo_gym"
    write(package / "__init__.py", "")
    write(package / "verifiers" / "__init__.py", "")
    write(package / "verifiers" / "helpers.py", "VALUE = 0.5\n")
    done = run_tool(env, "run", task_dir, "--nemo-gym", package, "--python", PY)
    assert done.returncode == 0, done.stdout
    assert f"vendored from {package / 'verifiers'}" in done.stdout
    assert "nothing was vendored" not in done.stdout


def test_coroutine_warning_beside_the_verdict_and_shadowing_in_explain(env, tmp_path):
    task_dir = make_task(
        tmp_path / "t",
        """\
        import gc, statistics

        async def check():
            return 1.0

        def verify(workspace):
            check()
            gc.collect()
            return 0.0
    """,
        files={"statistics.py": ""},
    )
    lines = run_tool(env, "run", task_dir, "--python", PY).stdout.splitlines()
    verdict = next(i for i, line in enumerate(lines) if line.startswith("verdict: "))
    assert "coroutine 'check' was never awaited" in lines[verdict + 1] and lines[verdict + 1].startswith("warning:")
    explained = run_tool(env, "explain", task_dir, "--python", PY, cwd=tmp_path).stdout  # paths from where it started
    assert "⚠ t/tests/statistics.py shadows the standard library's statistics" in explained
    data = json.loads(run_tool(env, "explain", "--json", task_dir, "--python", PY).stdout)
    assert [s["module"] for s in data["shadowing"]] == ["statistics"]


def test_a_missing_module_hint(env, tmp_path):
    task_dir = make_task(tmp_path / "t", "import vtui_absent_pkg\n\ndef verify(workspace):\n    return 1.0\n")
    write(task_dir / "environment" / "Dockerfile", "FROM python:3.12\nRUN pip install vtui-absent-pkg\n")
    done = run_tool(env, "run", task_dir, "--python", PY)
    assert done.returncode == 1
    assert "environment/Dockerfile:2 `RUN pip install vtui-absent-pkg`" in done.stdout
    assert "--python EXE" in done.stdout


def test_the_example_task_shows_its_rows(env, example):
    task_dir = example("greeting-rows")
    shutil.rmtree(task_dir / "cases")
    done = run_tool(env, "run", task_dir, "--python", PY)
    assert "choose one with --task-id ID" in done.stdout and "ada, grace, lin" in done.stdout


def test_a_task_whose_tests_folder_is_gone_says_so(env, tmp_path):
    """The message said where it looked for a verifier, never that the folder was not there."""
    task = copy_example("hello-file", tmp_path / "t")
    shutil.rmtree(task / "tests")
    done = run_tool(env, "run", task)
    assert done.returncode == 2
    assert f"looked in {task / 'tests'} (not there) for a .py file" in done.stderr, done.stderr


# ---------------------------------------------------------------------------
# The file the shim runs


@pytest.mark.parametrize("layout", ["grader.py", "package"])
def test_a_verifier_the_shim_would_not_run_is_said_in_run_explain_and_test(env, tmp_path, layout):
    # The shim runs /tests/verifier.py alone: a task whose verify sits in
    # tests/grader.py, or in a package tests/verifier/__init__.py, gets no
    # reward in the sandbox (the runner exits 2: no such file), whatever it
    # scores here. Before, every command showed a green run and said nothing.
    if layout == "grader.py":
        files = {"grader.py": "def verify(workspace):\n    return 1.0\n"}
        ran = "tests/grader.py"
    else:
        files = {
            "verifier/__init__.py": "from .util import one\n\ndef verify(workspace):\n    return one()\n",
            "verifier/util.py": "def one():\n    return 1.0\n",
        }
        ran = "tests/verifier/__init__.py"
    task_dir = make_task(tmp_path / "t", None, files=files, cases={"c": {}})
    write(task_dir / "cases" / "c" / "expected.json", '{"rewards": {"reward": 1.0}}')
    said = f"the sandbox would not run {ran}: the shim (tests/test.sh) runs tests/verifier.py, which does not exist"
    for command in ("run", "explain", "test"):
        done = run_tool(env, command, task_dir, "--python", PY)
        no_traceback(done)
        assert said in done.stdout, (command, done.stdout)
    data = json.loads(run_tool(env, "run", "--json", task_dir, "--python", PY).stdout)
    assert any(n.startswith(said) for n in data["notices"]), data["notices"]


def test_a_verifier_py_that_imports_its_verify_from_a_helper_is_the_one_run(env, tmp_path):
    # tests/verifier.py may only configure a helper and re-export its verify
    # (`from grader import verify`): the shim runs verifier.py, whose verify is
    # grader's as verifier.py set it up. Reading no `def verify` in it, the tool
    # ran tests/grader.py instead (0.0 where Harbor scores 1.0) and said the
    # sandbox would not run "the file you chose", which nobody had chosen.
    task_dir = make_task(
        tmp_path / "t",
        "import grader\n\ngrader.EXPECTED = 'hello'\n\nfrom grader import verify  # noqa\n",
        files={
            "grader.py": "EXPECTED = 'goodbye'\n\n\ndef verify(workspace):\n"
            "    return 1.0 if (workspace / 'answer.txt').read_text().strip() == EXPECTED else 0.0\n"
        },
        cases={"c": {"answer.txt": "hello\n"}},
    )
    write(task_dir / "cases" / "c" / "expected.json", '{"rewards": {"reward": 1.0}}')
    for command in ("run", "explain", "test"):
        done = run_tool(env, command, task_dir, "--python", PY)
        no_traceback(done)
        assert "tests/verifier.py" in done.stdout.splitlines()[0], (command, done.stdout)
        assert "would not run" not in done.stdout and "you chose" not in done.stdout, (command, done.stdout)
        assert done.returncode == 0, (command, done.stdout)
    # the helper is still there to choose, and choosing it is then said
    done = run_tool(env, "run", task_dir, "--verifier", "grader.py", "--python", PY)
    assert "the sandbox would not run tests/grader.py: the shim (tests/test.sh) runs tests/verifier.py" in done.stdout


def test_a_shim_that_names_another_verifier_is_taken_at_its_word(env, tmp_path):
    # A publisher's shim may pass --verifier /tests/grader.py: the sandbox
    # runs that file, so choosing it here is no mistake to warn of; the file
    # the warning names is the one test.sh names.
    task_dir = make_task(
        tmp_path / "t",
        "def verify(workspace):\n    return 0.0\n",
        files={"grader.py": "def verify(workspace):\n    return 1.0\n"},
    )
    shim = task_dir / "tests" / "test.sh"
    shim.write_text(shim.read_text().replace("--verifier /tests/verifier.py", "--verifier /tests/grader.py"))
    done = run_tool(env, "run", task_dir, "--verifier", "grader.py", "--python", PY)
    no_traceback(done)
    assert "the sandbox would not run" not in done.stdout, done.stdout
    done = run_tool(env, "run", task_dir, "--verifier", "verifier.py", "--python", PY)
    assert "the sandbox would not run tests/verifier.py: the shim (tests/test.sh) runs tests/grader.py" in done.stdout
    # Given no --verifier, the file run is the one the shim runs: it was tests/verifier.py, 0.0 where the
    # sandbox scores 1.0, said to be "the file you chose".
    for command in ("run", "explain"):
        done = run_tool(env, command, task_dir, "--python", PY)
        no_traceback(done)
        assert "tests/grader.py" in done.stdout.splitlines()[0], (command, done.stdout)
        assert "would not run" not in done.stdout and "you chose" not in done.stdout, (command, done.stdout)


def test_test_says_a_plain_test_sh_task_is_judged_by_its_own_script(env, tmp_path):
    # Harbor runs a plain task's own test.sh: a case failing (or passing) here
    # through the runner says nothing of the sandbox's verdict. run said so; test did not.
    task_dir = copy_example("plain-test-sh", tmp_path / "t")
    write(task_dir / "cases" / "c" / "workspace" / ".keep", "")
    write(task_dir / "cases" / "c" / "expected.json", '{"rewards": {"reward": 1.0}}')
    done = run_tool(env, "test", task_dir, "--python", PY)
    no_traceback(done)
    assert "note: the sandbox would not run tests/verifier.py: tests/test.sh is the task's own script" in done.stdout


@pytest.mark.parametrize(
    "lines",
    [
        "# was: --verifier /tests/old.py\nset -- --verifier /tests/grader.py --workspace /app\n",
        "echo --verifier /tests/x.py\nset -- --verifier /tests/grader.py --workspace /app\n",
        "set -- --verifier=/tests/grader.py --workspace /app\n",
        'set -- --verifier="/tests/grader.py" --workspace /app\n',
        'V=/tests/grader.py\nset -- --verifier "$V" --workspace /app\n',
    ],
)
def test_the_verifier_a_shim_names_is_read_as_sh_reads_it(env, tmp_path, lines):
    # The runner takes --verifier=FILE as well as --verifier FILE, once read as tests/verifier.py; a
    # comment or an echoed hint naming another file before the runner's real line was taken for it,
    # and a variable's file for tests/verifier.py: the file the shim does run was said never to score
    # in the sandbox.
    task_dir = make_task(tmp_path / "t", "def verify(workspace):\n    return 1.0\n")
    tests = task_dir / "tests"
    (tests / "verifier.py").rename(tests / "grader.py")
    shim = tests / "test.sh"
    shim.write_text(shim.read_text().replace("set -- --verifier /tests/verifier.py --workspace /app\n", lines))
    for command in ("run", "test"):
        done = run_tool(env, command, task_dir, "--python", PY)
        no_traceback(done)
        assert "the sandbox would not run" not in done.stdout, (command, done.stdout)


def test_a_plain_test_sh_too_big_to_read_whole_is_still_the_tasks_own_script(env, tmp_path):
    # A test.sh carrying its test files in a heredoc (10 MB here) is past the
    # bound the tool reads whole: it was taken for the runner's shim, so no
    # word said Harbor judges the task by that script, not by this verifier.
    task_dir = make_task(tmp_path / "t", "def verify(workspace):\n    return 1.0\n")
    payload = ("x" * 99 + "\n") * 100_000
    script = "#!/bin/bash\npytest /tests/test_outputs.py\n: <<'EOF'\n" + payload + "EOF\n"
    (task_dir / "tests" / "test.sh").write_text(script)
    write(task_dir / "cases" / "c" / "workspace" / ".keep", "")
    write(task_dir / "cases" / "c" / "expected.json", '{"rewards": {"reward": 1.0}}')
    for command in ("run", "test"):
        done = run_tool(env, command, task_dir, "--python", PY)
        no_traceback(done)
        assert "tests/test.sh is the task's own script" in done.stdout, (command, done.stdout)


def test_a_plain_test_sh_tasks_note_names_the_verifier_chosen(env, tmp_path):
    # The note is about the file run here: with a grader.py chosen beside
    # tests/verifier.py, it named tests/verifier.py.
    task_dir = copy_example("plain-test-sh", tmp_path / "t")
    write(task_dir / "tests" / "grader.py", "def verify(workspace):\n    return 1.0\n")
    write(task_dir / "cases" / "c" / "expected.json", '{"rewards": {"reward": 1.0}}')
    said = "the sandbox would not run tests/grader.py: tests/test.sh is the task's own script"
    for command in ("run", "explain", "test"):
        done = run_tool(env, command, task_dir, "--verifier", "grader.py", "--python", PY)
        no_traceback(done)
        assert said in done.stdout, (command, done.stdout)
        assert "would not run tests/verifier.py" not in done.stdout, (command, done.stdout)


def test_a_shim_naming_a_file_out_of_tests_is_never_what_runs(env, tmp_path):
    # --verifier /tests/../../outside.py names a file of the user's, beside the
    # task: in a container it is no file at all. It must not be staged and run
    # (the user's own code, with the task's network) nor named as what the shim runs.
    task_dir = make_task(tmp_path / "t", None, files={"helper.py": "X = 1\n"})
    write(tmp_path / "outside.py", "def verify(workspace):\n    return 1.0\n")
    shim = task_dir / "tests" / "test.sh"
    shim.write_text(shim.read_text().replace("--verifier /tests/verifier.py", "--verifier /tests/../../outside.py"))
    done = run_tool(env, "run", "--json", task_dir, "--python", PY)
    no_traceback(done)
    assert "outside.py" not in done.stdout + done.stderr
    from verifier_tui.engine.harbor.replay import shim_verifier

    assert shim_verifier(task_dir) == (None, None)


def test_a_folder_of_links_says_its_links_are_not_followed(env, tmp_path):
    # Links are never followed to tell a folder of Harbor jobs or trials (one
    # may lead anywhere): a folder of links to jobs said only "is not a task".
    for job in ("job-a", "job-b"):
        write(tmp_path / "real" / job / "job.log", "")
        (tmp_path / "links").mkdir(exist_ok=True)
        (tmp_path / "links" / job).symlink_to(tmp_path / "real" / job)
    done = run_tool(env, "run", tmp_path / "links", "--python", PY)
    no_traceback(done)
    assert done.returncode == 2
    assert "links to Harbor folders in it are not followed: job-a, job-b (open one by its own path)" in done.stderr


CRLF_LINE = (
    "tests/test.sh has CRLF line endings: its first line `#!/usr/bin/env bash\\r` cannot be run in the sandbox "
    "(exit 127); save it with LF endings"
)


def crlf_task(root):
    """A task whose test.sh was saved with CRLF endings, its one case expected to pass."""
    task_dir = make_task(root, cases={"only": {}})
    (task_dir / "cases" / "only" / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    shim = task_dir / "tests" / "test.sh"
    shim.write_bytes(shim.read_bytes().replace(b"\n", b"\r\n"))
    return task_dir


def test_a_crlf_test_sh_fails_every_command_as_the_sandbox_would(env, tmp_path):
    """Harbor runs test.sh as a file: its `#!/usr/bin/env bash\\r` finds no `bash\\r`, it exits 127 and
    Harbor raises RewardFileNotFoundError. run, test and watch passed it, the runner started without it."""
    from tests.helpers.commands import start_watch

    task_dir = crlf_task(tmp_path / "t")
    done = run_tool(env, "run", task_dir, "--python", PY)
    assert done.returncode == 127, done.stdout + done.stderr
    assert "exit 127 · refused by test.sh" in done.stdout
    assert f"note: {CRLF_LINE}\n" in done.stdout and done.stdout.count(CRLF_LINE) == 1
    assert "Harbor would raise RewardFileNotFoundError: No reward file: test.sh never started the runner" in (
        done.stdout
    )
    no_traceback(done)
    data = json.loads(run_tool(env, "run", task_dir, "--python", PY, "--json").stdout)
    assert data["verdict_error"] == "RewardFileNotFoundError" and data["exit_code"] == 127
    assert CRLF_LINE in data["notices"]
    done = run_tool(env, "test", task_dir, "--python", PY)
    assert done.returncode == 1 and "0 passed, 1 failed" in done.stdout, done.stdout
    assert CRLF_LINE in done.stdout
    assert one_line_refusal(run_tool(env, "explain", task_dir, "--python", PY)) == f"verifier-tui: {CRLF_LINE}"
    proc, reader = start_watch(env, task_dir, "--python", PY)
    try:
        said = reader.through_next_run()
        said.append(reader.next())
        assert "refused by test.sh" in said[-2] and "RewardFileNotFoundError" in said[-2], said
        assert said[-1].strip() == f"note: {CRLF_LINE}", said
    finally:
        proc.terminate()
        proc.wait()


# the shim's body as Harbor's bash meets it with CRLF endings, under heads the kernel does start
CRLF_HEADS = {
    "bash-option": b"#!/bin/bash -e",  # bash: "-\r: invalid option", exit 1
    "no-shebang": b"",  # the kernel refuses it, and bash runs it itself: a syntax error at `do\r`, exit 2
    "bom": b"\xef\xbb\xbf#!/bin/bash",  # no #! for the kernel either
    "env-split": b"#!/usr/bin/env -S bash",  # env -S finds bash; bash stops at `do\r`, exit 2
}
CRLF_REFUSAL = (
    "tests/test.sh has CRLF line endings, which bash reads as part of each line (`do\\r` is a syntax error, "
    "a path ends in \\r): how Harbor's run of it ends is bash's, which verifier-tui does not model; "
    "save it with LF endings"
)


@pytest.mark.parametrize("head", list(CRLF_HEADS.values()), ids=list(CRLF_HEADS))
def test_a_crlf_test_sh_bash_starts_is_not_scored_as_the_runner_alone_would(env, tmp_path, head):
    """A CRLF test.sh the kernel does start (or bash runs itself): bash fails on its \\r (an option, `do\\r`)
    and Harbor finds no reward, where run, test and the plugin scored the runner's 1.0."""
    import subprocess

    task_dir = crlf_task(tmp_path / "t")
    shim = task_dir / "tests" / "test.sh"
    body = shim.read_bytes().split(b"\r\n", 1)[1]
    shim.write_bytes((head + b"\r\n" if head else b"") + body)
    shim.chmod(0o755)
    said = subprocess.run(["bash", "-c", f"({shim})"], capture_output=True, check=False)
    assert said.returncode in (1, 2), said  # what Harbor's bash makes of it: no runner, no reward
    data = json.loads(run_tool(env, "run", task_dir, "--python", PY, "--json").stdout)
    assert data["rewards"] is None and data["exit_code"] is None, data
    done = run_tool(env, "run", task_dir, "--python", PY)
    assert done.returncode == 2 and CRLF_REFUSAL in done.stdout and "verdict: none" in done.stdout, done.stdout
    no_traceback(done)
    done = run_tool(env, "test", task_dir, "--python", PY)
    assert done.returncode != 0 and "1 passed" not in done.stdout, done.stdout
    assert one_line_refusal(run_tool(env, "explain", task_dir, "--python", PY)) == f"verifier-tui: {CRLF_REFUSAL}"


def test_a_shim_naming_its_verifier_by_a_variable_still_runs_tests_verifier_py(env, tmp_path):
    # V=${V:-/tests/verifier.py}; --verifier "$V": the file is known only as test.sh runs. tests/verifier.py, which
    # only sets up and imports verify from a helper, was dropped as the candidate and the helper ran in its
    # place: 0.0 where Harbor's shim, running verifier.py, scores 1.0.
    task_dir = make_task(tmp_path / "t", "import os\nos.environ['LENIENT'] = '1'\nfrom grader_impl import verify\n")
    tests = task_dir / "tests"
    (tests / "grader_impl.py").write_text(
        "import os\n\ndef verify(workspace):\n    return 1.0 if os.environ.get('LENIENT') == '1' else 0.0\n"
    )
    shim = tests / "test.sh"
    old = "set -- --verifier /tests/verifier.py --workspace /app\n"
    new = 'V=${V:-/tests/verifier.py}\nset -- --verifier "$V" --workspace /app\n'
    shim.write_text(shim.read_text().replace(old, new))
    done = run_tool(env, "run", task_dir, "--python", PY)
    no_traceback(done)
    assert "tests/verifier.py" in done.stdout.splitlines()[0], done.stdout
    assert "grader_impl" not in done.stdout.splitlines()[0], done.stdout
    assert 'verdict: {"reward": 1.0}' in done.stdout, done.stdout
    assert "names its --verifier by a word made as it runs" in done.stdout, done.stdout


@pytest.mark.parametrize(
    "first", ["#!/usr/bin/env -S vtui-nosuch-shell --script", "#!/usr/local/bin/vtui-nosuch-python3"]
)
def test_a_test_sh_program_this_machine_lacks_does_not_stop_a_run_of_the_runner(env, tmp_path, first):
    # run exited 127 ("Harbor would raise RewardFileNotFoundError") and explain 2 for a #! program missing
    # here, though the image may well have it (uv, the image's own python3): a run of the runner alone
    # never starts test.sh's program, so it carries on with a note.
    task_dir = make_task(tmp_path / "t", "def verify(workspace):\n    return 1.0\n")
    shim = task_dir / "tests" / "test.sh"
    shim.write_text(first + "\n" + shim.read_text().split("\n", 1)[1])
    done = run_tool(env, "run", task_dir, "--python", PY)
    no_traceback(done)
    assert done.returncode == 0 and 'verdict: {"reward": 1.0}' in done.stdout, done.stdout + done.stderr
    assert "the image may have it" in done.stdout, done.stdout
    done = run_tool(env, "explain", task_dir, "--python", PY)
    no_traceback(done)
    assert done.returncode == 0, done.stdout + done.stderr
