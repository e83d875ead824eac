"""A verifier plants links where the tool reads a run back.

The reward folder, the runner's ``explain.json`` and ``phases.jsonl`` are
written by the run, so a verifier may leave a link there: to
``/proc/self/environ`` (read by the tool, that is the tool's own environment,
with whatever secret the user's shell holds), or to a file of the user's that
the verifier itself cannot read. Each test here plants one through the real
command and the real runner, in both sandboxes: the secret is never shown,
and the link is said as a link.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.helpers.commands import TOOL, no_traceback, run_tool
from tests.helpers.harbor import harbor_exception, make_trial
from tests.helpers.tasks import LINK_PLANTER, PY, make_task, write

SECRET = "sekrit-123"


@pytest.fixture
def env(env, sandbox):
    """The user's shell: a secret in its environment, the sandbox under test chosen."""
    env["VERIFIER_TUI_SANDBOX"] = sandbox
    env["AWS_SECRET_ACCESS_KEY"] = SECRET
    return env


@pytest.fixture
def private(tmp_path) -> Path:
    """A folder of the user's, outside every task, holding the secret in a
    reward file, a log and a JSON document shaped as the runner's."""
    folder = tmp_path / "private"
    folder.mkdir()
    (folder / "reward.txt").write_text(f"{SECRET}\n")
    (folder / "notes.txt").write_text(f"my password is {SECRET}\n")
    row = {"index": 0, "path": SECRET, "role": SECRET, "roles": [SECRET], "exists": True}
    (folder / "explain.json").write_text(json.dumps({"verifier": SECRET, "sys_path": [row], "problems": [SECRET]}))
    phases = ("reward_files_cleared", "verifier_found", "inputs_read", "sys_path_placed", "module_imported")
    lines = [{"phase": phase, "status": "ok", "file": SECRET} for phase in phases]
    lines.append({"phase": "reward_written", "status": "ok", "file": SECRET, "text": SECRET})
    (folder / "phases.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    for path in folder.iterdir():
        path.chmod(0o600)
    return folder


def _task(root: Path, plant: list[list[str]]) -> Path:
    task = make_task(root, LINK_PLANTER, cases={"a": {"plant.json": json.dumps(plant)}})
    (task / "cases" / "a" / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    return task


def _said(env, *args, cwd: Path) -> str:
    # the console script itself, never a warm fork: /proc/self/environ must be the environment given here
    done = run_tool(env, *args, "--python", PY, cwd=cwd, tool=TOOL)
    no_traceback(done)
    assert done.returncode in (0, 1, 2), (args, done.stdout, done.stderr)
    return done.stdout + done.stderr


def _every_face(env, task: Path, cwd: Path) -> dict[str, str]:
    return {
        "run": _said(env, "run", task, cwd=cwd),
        "run --json": _said(env, "run", task, "--json", cwd=cwd),
        "test --json": _said(env, "test", task, "--json", cwd=cwd),
    }


@pytest.mark.parametrize(
    "name, target",
    [("reward.json", "/proc/self/environ"), ("reward.txt", "private/reward.txt")],
    ids=["reward.json-to-environ", "reward.txt-to-a-private-file"],
)
def test_a_reward_file_planted_as_a_link_is_said_never_read(env, tmp_path, private, name, target):
    target = target if target.startswith("/") else str(tmp_path / target)
    task = _task(tmp_path / "t", [[f"--reward-dir:{name}", target]])
    said = _every_face(env, task, tmp_path)
    for face, text in said.items():
        assert SECRET not in text, face
    link = f"{name} is a link to {target}: Harbor would read it inside the container; not read here"
    assert link in said["run"], said["run"]
    run = json.loads(said["run --json"])
    assert run["rewards"] is None and link in run["verdict_message"]
    assert run["reward_files"] == [
        {"name": name, "kind": "link", "target": target, "size": 0, "text": None, "is_utf8": True, "truncated": False}
    ]
    assert link in said["test --json"]


def test_test_and_its_junit_say_why_a_planted_reward_link_leaves_the_verdict_unknown(env, tmp_path, private):
    """``test`` showed the case as ``exit 0 · no reward · unknown`` and its
    JUnit failure said no more: a CI reader was not told that the verifier
    left a link, which ``run`` says."""
    target = str(private / "reward.txt")
    task = _task(tmp_path / "t", [["--reward-dir:reward.txt", target]])
    junit = tmp_path / "junit.xml"
    text = _said(env, "test", task, "--junit", junit, cwd=tmp_path)
    link = f"reward.txt is a link to {target}: Harbor would read it inside the container; not read here"
    assert f"a: {link}" in text, text
    report = ET.parse(junit).getroot()
    failure = report.find("testcase/failure")
    assert failure is not None and link in (failure.text or ""), ET.tostring(report)
    assert SECRET not in text + ET.tostring(report, encoding="unicode")


def test_a_reward_folder_planted_as_a_link_is_never_read(env, sandbox, tmp_path, private):
    """The copy sandbox's reward folder is the verifier's to replace (the
    namespace's is a mount point it cannot): a link to a folder of the user's
    holding a reward file is said, and nothing in it is read."""
    task = _task(tmp_path / "t", [["--reward-dir", str(private)]])
    said = _every_face(env, task, tmp_path)
    for face, text in said.items():
        assert SECRET not in text, face
    if sandbox == "copy":
        assert f"logs/verifier is a link to {private}" in said["run"], said["run"]


def test_an_explanation_planted_as_a_link_is_never_read(env, tmp_path, private):
    task = _task(tmp_path / "t", [["--explain-to", str(private / "explain.json")]])
    said = _every_face(env, task, tmp_path)
    for face, text in said.items():
        assert SECRET not in text, face


def test_a_replays_phases_planted_as_a_link_are_never_read(env, tmp_path, private):
    """A trial replay asks the runner for its phases (``--phases-to``)."""
    task = make_task(tmp_path / "runs" / "tasks" / "t", LINK_PLANTER, toml='version = "1.0"\nartifacts = ["/app"]\n')
    plant = json.dumps([["--phases-to", str(private / "phases.jsonl")]])
    trial = make_trial(
        tmp_path / "runs" / "jobs" / "j" / "t__aaaaaaa",
        task=task,
        app={"plant.json": plant},
        exception=harbor_exception("RewardFileNotFoundError", "No reward file found"),
        verifier_files={"test-stdout.txt": ""},
    )
    for args in (["run", trial], ["run", trial, "--json"], ["test", trial.parent, "--json"]):
        assert SECRET not in _said(env, *args, cwd=tmp_path), args


@pytest.mark.parametrize(
    "link, option",
    [
        ("cases/only/response.txt", "--response FILE"),
        ("cases/only/task_data.json", "--task-data FILE"),
        ("task_data.json", "--task-data FILE"),
        ("cases/only/workspace", "--workspace DIR"),
        ("tasks.jsonl", "--task-data FILE --task-id ID"),
    ],
)
def test_a_cases_file_that_leads_out_of_the_task_is_never_read_for_a_run(env, tmp_path, link, option):
    """A task someone sent, whose case links its response to
    /proc/self/environ or its workspace to ~/.ssh: the run read it on this
    machine and handed it to the verifier, which could send it anywhere."""
    secret = tmp_path / "home"
    secret.mkdir()
    (secret / "id_rsa").write_text("PRIVATE-KEY")
    (secret / "token.json").write_text('{"token": "PRIVATE-KEY"}')
    task = make_task(
        tmp_path / "t",
        """
        import json

        def verify(workspace, response=None, task_data=None):
            seen = [json.dumps(response), json.dumps(task_data), *(p.read_text() for p in workspace.rglob("*"))]
            print("SEEN", *seen)
            return 1.0
        """,
        cases={"only": {}},
    )
    target = secret if link.endswith("workspace") else secret / ("token.json" if "json" in link else "id_rsa")
    if link == "tasks.jsonl":  # a parameterized task, its case naming a row of the file out of the task
        target = secret / "rows.jsonl"
        target.write_text('{"task_id": "only", "token": "PRIVATE-KEY"}\n')
    place = task / link
    if place.is_dir():
        place.rmdir()
    place.symlink_to(target)
    done = run_tool(env, "run", task, "--case", "only", "--python", PY)
    no_traceback(done)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PRIVATE-KEY" not in done.stdout, done.stdout
    assert f"{link.removeprefix('cases/only/') if link.startswith('cases') else link}" in done.stdout
    assert f"leads out of the task, to {target}" in done.stdout and option in done.stdout


def test_an_expected_json_that_leads_out_of_the_task_is_not_read(env, tmp_path):
    """The case's expectation is the task's own: one read through a link to
    the user's files judged the case by a file no task holds."""
    outside = tmp_path / "elsewhere.json"
    outside.write_text(json.dumps({"rewards": {"reward": 0.123}}))
    task = make_task(tmp_path / "t", "def verify(workspace):\n    return 1.0\n", cases={"only": {"a.txt": "x"}})
    (task / "cases" / "only" / "expected.json").symlink_to(outside)
    done = run_tool(env, "test", task, "--python", PY, cwd=tmp_path)
    no_traceback(done)
    said = done.stdout + done.stderr
    assert "0.123" not in said, said
    assert f"expected.json leads out of the task, to {outside}: not read; the case has no expectation" in said


def test_a_cases_folder_that_leads_out_of_the_task_is_not_listed(env, tmp_path):
    """``cases`` a link to a folder out of the task (``/``, a home folder): each folder there was
    listed as a case of the task (``bin``, ``etc``, ...), every one "not run", in test's table and its
    JUnit report, naming what the user keeps there. The task's cases are its own: none is listed, said
    in one line."""
    elsewhere = tmp_path / "elsewhere"
    for name in ("private-a", "private-b"):
        (elsewhere / name).mkdir(parents=True)
    task = make_task(tmp_path / "tasks" / "t", "def verify(workspace):\n    return 1.0\n")
    (task / "cases").symlink_to(elsewhere)
    report = tmp_path / "report.xml"
    done = run_tool(env, "test", task, "--python", PY, "--junit", report, cwd=tmp_path)
    no_traceback(done)
    assert done.returncode == 2
    said = done.stdout + done.stderr + report.read_text()
    assert "private-" not in said, said
    assert "no case to test: cases leads out of the task, to " in done.stderr
    assert done.stderr.rstrip().endswith("elsewhere: not followed"), done.stderr
    # found below a folder, the task is tested all the same, and says so, never "none of its 2 cases has ..."
    below = run_tool(env, "test", tmp_path / "tasks", "--python", PY, cwd=tmp_path)
    assert below.returncode == 2 and "private-" not in below.stdout + below.stderr
    assert "cases leads out of the task, to " in below.stdout + below.stderr


@pytest.mark.parametrize("command", ["run", "test", "explain"])
def test_a_case_named_through_a_cases_folder_out_of_the_task_says_why_it_is_refused(command, env, tmp_path):
    """``run tasks/t/cases/private-a``, ``cases`` a link out of the task: it said only
    ``--case private-a: no such case (cases: none)``, though the user typed no --case and the folder is
    there. It says now that cases/ leads out of the task and is not followed."""
    write(tmp_path / "elsewhere" / "private-a" / "expected.json", '{"rewards": {"reward": 1.0}}')
    (tmp_path / "elsewhere" / "private-a" / "workspace").mkdir()
    task = make_task(tmp_path / "tasks" / "t", "def verify(workspace):\n    return 1.0\n")
    (task / "cases").symlink_to("../../elsewhere")
    done = run_tool(env, command, task / "cases" / "private-a", "--python", PY, cwd=tmp_path)
    no_traceback(done)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "cases leads out of the task, to ../../elsewhere: not followed" in done.stderr, done.stderr
    assert "--case" not in done.stderr and "cases: none" not in done.stderr, done.stderr
    typed = run_tool(env, command, task, "--case", "private-a", "--python", PY, cwd=tmp_path)
    assert typed.returncode == 2 and "cases leads out of the task" in typed.stderr, typed.stderr


def test_a_verifier_that_is_a_link_is_named_as_one_when_none_is_found(env, tmp_path):
    outside = tmp_path / "outside_verifier.py"
    outside.write_text("def verify(workspace):\n    return 1.0\n")
    task = make_task(tmp_path / "t", None)
    (task / "tests" / "verifier.py").symlink_to(outside)
    done = run_tool(env, "run", task, "--python", PY)
    no_traceback(done)
    assert done.returncode == 2
    assert f"tests/verifier.py is a link to {outside}, and links are not followed" in done.stderr, done.stderr


def test_a_task_toml_that_leads_out_of_the_task_is_not_read(env, tmp_path):
    """Its values were echoed in notes (``timeout_sec = 'TOPSECRET' is not a number``)."""
    outside = tmp_path / "elsewhere.toml"
    outside.write_text('[verifier]\ntimeout_sec = "TOPSECRET"\n')
    task = make_task(tmp_path / "t", "def verify(workspace):\n    return 1.0\n", toml=None)
    (task / "task.toml").symlink_to(outside)
    done = run_tool(env, "run", task, "--python", PY)
    no_traceback(done)
    assert done.returncode == 0 and "TOPSECRET" not in done.stdout + done.stderr, done.stdout
    assert f"task.toml leads out of the task, to {outside}: not read (Harbor would read it)" in done.stdout


def test_test_says_a_task_toml_it_did_not_read_above_the_table(env, tmp_path):
    outside = tmp_path / "elsewhere.toml"
    outside.write_text('[verifier]\nenv = { STRICT = "1" }\n')
    task = make_task(tmp_path / "t", "def verify(workspace):\n    return 1.0\n", toml=None, cases={"c": {}})
    (task / "cases" / "c" / "expected.json").write_text(json.dumps({"rewards": {"reward": 1.0}}))
    (task / "task.toml").symlink_to(outside)
    lines = run_tool(env, "test", task, "--python", PY, cwd=tmp_path).stdout.splitlines()
    said = f"note: task.toml leads out of the task, to {outside}: not read (Harbor would read it); the run uses"
    said += " the defaults"
    assert lines[1] == said, lines


def _leaving(tmp_path: Path, name: str, make: str) -> Path:
    """A task whose verifier makes its reward file ``name`` (at ``path``) by ``make``, then ends the
    interpreter, so that the runner writes no reward over it."""
    verifier = (
        "import os, sys\n\n"
        "def verify(workspace):\n"
        f"    path = os.path.join(sys.argv[sys.argv.index('--reward-dir') + 1], {name!r})\n"
        f"    {make}\n"
        "    os._exit(0)\n"
    )
    return make_task(tmp_path / "t", verifier, cases={"a": {}})


def test_a_reward_file_planted_as_a_fifo_is_said_in_words(env, tmp_path):
    """A verifier left ``reward.json`` as a FIFO: ``run`` listed it as
    ``reward.json: <a other, not a file>``."""
    task = _leaving(tmp_path, "reward.json", "os.mkfifo(path)")
    said = _said(env, "run", task, cwd=tmp_path)
    assert "reward.json: <not a regular file, not read>" in said, said


def test_a_reward_file_too_big_to_read_is_not_said_to_be_an_exception_of_harbors(env, tmp_path):
    """A verifier left a 50 GB ``reward.txt`` (sparse: it took no room) and
    ended the interpreter: ``run`` said "Harbor would raise RewardFileTooLarge",
    an exception Harbor 0.26.0 does not have (its ``read_text()`` reads the
    file whole, and what then becomes of it depends on its bytes and the
    memory it has), and ``--json`` gave that name as ``verdict_error``."""
    task = _leaving(tmp_path, "reward.txt", "os.truncate(os.open(path, os.O_CREAT | os.O_WRONLY), 50 << 30)")
    said = _said(env, "run", task, cwd=tmp_path)
    verdict = next(line for line in said.splitlines() if line.startswith("verdict: "))
    said_first = "verdict: none: Harbor's verdict cannot be known here: reward.txt is 53,687,091,200 bytes"
    assert verdict.startswith(said_first), verdict
    assert "RewardFileTooLarge" not in said, said
    assert json.loads(_said(env, "run", task, "--json", cwd=tmp_path))["verdict_error"] == "unknown"
