"""The headless commands as a user runs them: the real ``verifier-tui`` console
script (and ``python -m verifier_tui``) in a subprocess, on private copies of
the example tasks.

What is checked is what a user or a CI script sees: exit statuses, the JSON
documents, the readable output, the JUnit file, and that bad input gives one
clear line and exit 2, never a Python traceback. No assertion is about how
long something took; waits are bounded so that a hang fails instead of
blocking the suite.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.helpers.commands import (
    CONSOLE_SCRIPT,
    MODULE,
    TOOL,
    WarmTool,
    a_python_that_never_answers,
    documented_fields,
    hung_up,
    interrupted,
    json_of_a_stopped_test,
    junit_of_a_test_to_a_full_disk,
    no_traceback,
    refused_test_with_stderr_full,
    run_tool,
    signal_when,
    signalled_at,
    start_watch,
    stop,
)
from tests.helpers.processes import (
    SAY_STARTED,
    STUCK_ONCE_STARTED,
    an_old_green_report,
    forget_started,
    has_started,
    processes_with,
    wait_none_with,
    wait_started,
    wait_waiting_in,
)
from tests.helpers.tasks import EXAMPLES, HANG_GUARD_S, PY, TASKS_WITH_CASES, copy_example, make_task, write

RUN_JSON_FIELDS = {
    "outcome": str,
    "exit_code": (int, type(None)),
    "rewards": (dict, type(None)),
    "verdict_error": (str, type(None)),
    "reward_files": list,
    "stdout": str,
    "stderr": str,
    "duration_s": float,
    "pipe_wait_s": float,
    "sandbox": str,
    "strays": list,
    "user_files_written": list,
    "sys_path": (list, type(None)),
    "arguments": (list, type(None)),
    "case": (str, type(None)),
    "verifier": str,
    "workspace": (str, type(None)),
}


# ---------------------------------------------------------------------------
# --version, --help


@pytest.mark.parametrize("tool", [TOOL, MODULE], ids=["console-script", "python-m"])
def test_version(env, tool):
    done = run_tool(env, "--version", tool=tool)
    assert done.returncode == 0
    assert done.stdout.strip() == "verifier-tui 0.1.0"


@pytest.mark.parametrize("tool", [TOOL, MODULE], ids=["console-script", "python-m"])
def test_help(env, tool):
    done = run_tool(env, "--help", tool=tool)
    assert done.returncode == 0
    for command in ("run", "explain", "test", "watch"):
        assert f"verifier-tui {command} PATH" in done.stdout
    no_traceback(done)


@pytest.mark.parametrize("command", ["run", "explain", "test", "watch"])
def test_command_help(env, command):
    done = run_tool(env, command, "--help")
    assert done.returncode == 0
    assert f"usage: verifier-tui {command}" in done.stdout
    assert "--json" in done.stdout


def test_console_script_is_installed():
    assert CONSOLE_SCRIPT.exists(), "the project is not installed in this environment"


def _steady(text: str) -> str:
    """Output less what differs from one run to the next: durations."""
    text = re.sub(r'"\w+_s": [\d.e-]+', '"_s": 0', text)
    return re.sub(r"\d+(\.\d+)? m?s\b", "T", text)


def test_the_warm_tool_the_tests_use_answers_as_the_console_script(env, example, tmp_path):
    """Most tests run the tool through ``tests/tool_server.py`` (``run_tool``
    without ``tool``): its answers are the console script's, word for word."""
    task_dir = example("hello-file")
    assert WarmTool.serves(env)
    for args in (
        ["--version"],
        ["run", task_dir, "--python", PY, "--case", "wrong-text"],
        ["run", "--json", task_dir, "--python", PY],
        ["explain", "--json", task_dir, "--python", PY],
        ["test", task_dir, "--python", PY],
        ["run", tmp_path / "nowhere"],
        ["run", "--no-such-option"],
    ):
        warm, cold = run_tool(env, *args), run_tool(env, *args, tool=TOOL)
        assert (warm.returncode, _steady(warm.stdout), _steady(warm.stderr)) == (
            cold.returncode,
            _steady(cold.stdout),
            _steady(cold.stderr),
        ), args


# ---------------------------------------------------------------------------
# run


@pytest.mark.parametrize("tool", [TOOL, MODULE], ids=["console-script", "python-m"])
def test_run_json_fields(env, example, tool):
    task_dir = example("hello-file")
    done = run_tool(env, "run", "--json", task_dir, "--python", PY, tool=tool)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    for name, kind in RUN_JSON_FIELDS.items():
        assert name in data, name
        assert isinstance(data[name], kind), (name, data[name])
    assert data["outcome"] == "reward_written"
    assert data["exit_code"] == 0
    assert data["rewards"] == {"reward": 1.0}
    assert data["verdict_error"] is None
    assert data["reward_files"] == [
        {
            "name": "reward.txt",
            "kind": "file",
            "target": None,
            "size": 3,
            "text": "1.0",
            "is_utf8": True,
            "truncated": False,
        }
    ]
    assert data["stdout"] == "" and data["stderr"] == ""
    assert data["duration_s"] > 0
    assert data["case"] == "correct"
    assert data["verifier"] == str(task_dir / "tests" / "verifier.py")
    assert data["workspace"] == str(task_dir / "cases" / "correct" / "workspace")
    assert data["mode"] == "harbor"
    assert data["expected_matched"] is True
    assert data["sys_path"][0]["roles"] == ["vendored helpers"]
    assert data["sys_path"][1]["path"] == str(task_dir / "tests")
    assert [a["name"] for a in data["arguments"]] == ["workspace"]
    assert data["arguments"][0]["binding"] == "argument"
    assert data["task"] == str(task_dir)


def test_run_json_on_a_failing_verifier(env, example):
    task_dir = example("hello-file")
    done = run_tool(env, "run", "--json", task_dir, "--case", "missing-file", "--python", PY)
    assert done.returncode == 1
    data = json.loads(done.stdout)
    assert data["outcome"] == "verifier_raised"
    assert data["exit_code"] == 1
    assert data["rewards"] is None
    assert data["verdict_error"] == "RewardFileNotFoundError"
    assert data["reward_files"] == []
    assert "FileNotFoundError" in data["stderr"]
    assert f'File "{task_dir / "tests" / "verifier.py"}"' in data["stderr"]
    assert "verifier-tui-" not in done.stdout  # no scratch path anywhere


def test_run_with_another_workspace_does_not_judge_by_the_cases_expectation(env, example):
    """expected.json speaks of the case's own inputs: with another workspace,
    'DID NOT MATCH' would be noise, so it is not applied, and the output says why."""
    task_dir = example("hello-file")
    done = run_tool(
        env,
        "run",
        "--json",
        task_dir,
        "--case",
        "correct",
        "--workspace",
        task_dir / "cases" / "wrong-text" / "workspace",
        "--python",
        PY,
    )
    data = json.loads(done.stdout)
    assert data["rewards"] == {"reward": 0.0}
    assert data["expected"] is None and data["expected_matched"] is None
    assert any("expected.json is not applied: its workspace is not in use" in n for n in data["notices"])


@pytest.mark.parametrize("case, status", [("correct", 0), ("missing-file", 1), ("wrong-text", 0)])
def test_run_exit_status_is_the_runners(env, example, case, status):
    done = run_tool(env, "run", example("hello-file"), "--case", case, "--python", PY)
    assert done.returncode == status, done.stderr


def test_run_exit_status_on_a_contract_error(env, example):
    task_dir = example("count-errors")
    done = run_tool(env, "run", task_dir, "--case", "harbor-mode", "--python", PY)
    assert done.returncode == 2
    done = run_tool(env, "run", task_dir, "--case", "response-json", "--no-response", "--python", PY)
    assert done.returncode == 2
    assert "contract" in done.stdout


def test_test_no_response_runs_every_case_without_its_response(env, example):
    """`test --no-response` ("no response, even if the case has one") once ran the cases with their
    responses, all passing, with nothing said: the cases that need one fail without it."""
    done = run_tool(env, "test", example("count-errors"), "--no-response", "--json", "--python", PY)
    cases = {case["id"].partition("::")[2]: case for case in json.loads(done.stdout)["cases"]}
    assert done.returncode == 1 and cases["response-json"]["expected_matched"] is False, done.stdout
    assert cases["harbor-mode"]["expected_matched"] is True and cases["response-json"]["response"] is None


def test_run_exit_status_on_timeout_is_124(env, tmp_path):
    task_dir = make_task(tmp_path / "slow", "import time\n\ndef verify(workspace):\n    time.sleep(120)\n")
    done = run_tool(env, "run", task_dir, "--timeout", "1", "--python", PY)
    assert done.returncode == 124
    assert "timed out after 1 s" in done.stdout
    done = run_tool(env, "run", "--json", task_dir, "--timeout", "0.5", "--python", PY)
    assert done.returncode == 124
    assert json.loads(done.stdout)["outcome"] == "timed_out"


def test_run_readable_output(env, example):
    task_dir = example("hello-file")
    done = run_tool(env, "run", task_dir, "--case", "missing-file", "--python", PY, cwd=task_dir.parent)
    lines = done.stdout.splitlines()
    assert lines[0].startswith("task hello-file · verifier hello-file/tests/verifier.py · case missing-file")
    assert "Harbor mode" in lines[0]
    assert any(line.startswith("exit 1 · verifier raised") for line in lines)
    assert any("RewardFileNotFoundError" in line for line in lines)
    assert any(line == 'expected {"exit_code": 1}: matched' for line in lines)
    assert "── stderr" in done.stdout
    assert f'File "{task_dir / "tests" / "verifier.py"}", line' in done.stdout
    no_traceback(done)

    done = run_tool(env, "run", task_dir, "--python", PY)
    assert 'verdict: {"reward": 1.0}  (from reward.txt)' in done.stdout
    assert "reward.txt: 1.0" in done.stdout


def test_run_paths_resolve_from_where_the_tool_was_started(env, example, tmp_path):
    """Started beside the task, in the task, or elsewhere: the verifier path in the header is one the
    user can open from there (relative when inside that folder, else absolute), as in the TUI."""
    task_dir = example("hello-file")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for cwd, shown in (
        (task_dir, "tests/verifier.py"),
        (task_dir.parent, "hello-file/tests/verifier.py"),
        (elsewhere, str(task_dir / "tests" / "verifier.py")),
    ):
        done = run_tool(env, "run", task_dir, "--python", PY, cwd=cwd)
        assert done.returncode == 0, done.stderr
        header = done.stdout.splitlines()[0]
        assert f" · verifier {shown} · " in header
        assert (cwd / shown).is_file()


def test_run_with_a_text_response(env, example, tmp_path):
    task_dir = example("count-errors")
    answer = tmp_path / "answer.txt"
    answer.write_text("I counted 3 ERROR events.")
    done = run_tool(env, "run", "--json", task_dir, "--case", "harbor-mode", "--response", answer, "--python", PY)
    data = json.loads(done.stdout)
    assert done.returncode == 0, data["stderr"]
    assert data["rewards"] == {"reward": 1.0}
    assert data["mode"] == "server"
    assert data["response"] == str(answer)


def test_run_on_a_plain_test_sh_task_says_so(env, example):
    done = run_tool(env, "run", example("plain-test-sh"), "--python", PY)
    said = done.stdout.index("the sandbox would not run tests/verifier.py")
    assert said < done.stdout.index("exit 0 · reward written")  # said before the run's outcome
    assert "empty scratch workspace" in done.stdout
    no_traceback(done)


def test_run_leaves_no_scratch_behind(env, example):
    run_tool(env, "run", example("hello-file"), "--python", PY)
    assert list(Path(env["TMPDIR"]).iterdir()) == []


# ---------------------------------------------------------------------------
# explain


def test_explain_json(env, example):
    task_dir = example("summary-keywords")
    done = run_tool(env, "explain", "--json", task_dir, "--python", PY)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    rows = data["sys_path"]
    assert [r["index"] for r in rows] == list(range(len(rows)))
    assert rows[0]["roles"] == ["vendored helpers"]
    assert rows[1]["path"] == str(task_dir / "tests")
    assert "verifier's folder" in rows[1]["roles"] and "tests folder" in rows[1]["roles"]
    assert set(data["modules"]) >= {"nemo_gym", "nemo_gym.verifiers"}
    assert data["verify"]["signature"] == "verify(workspace, /, task_data, *, threshold=0.5)"
    assert [(p["name"], p["binding"]) for p in data["parameters"]] == [
        ("workspace", "argument"),
        ("task_data", "argument"),
        ("threshold", "default"),
    ]
    assert data["problems"] == []
    assert data["mode"] == "harbor"
    assert "verifier-tui-" not in done.stdout


def test_explain_json_reports_contract_problems(env, example):
    done = run_tool(env, "explain", "--json", example("count-errors"), "--case", "harbor-mode", "--python", PY)
    data = json.loads(done.stdout)
    assert any("response" in p for p in data["problems"])
    assert {p["name"]: p["binding"] for p in data["parameters"]}["response"] == "missing"


def test_explain_names_the_inputs_verify_would_get(env, example):
    """It said "task_data  bound to task_data (keyword)" and never which file: the case's own
    task_data.json or the task's, as the TUI's line of choices says (and run --json's task_data)."""
    task_dir = example("sum-column")
    case = task_dir / "cases" / "quantity-variant"
    done = run_tool(env, "explain", task_dir, "--case", "quantity-variant", "--python", PY, cwd=task_dir.parent)
    line = "workspace sum-column/cases/quantity-variant/workspace · response none"
    assert f"{line} · task data sum-column/cases/quantity-variant/task_data.json" in done.stdout, done.stdout
    data = json.loads(run_tool(env, "explain", "--json", task_dir, "--case", "quantity-variant", "--python", PY).stdout)
    assert (data["task_data"], data["task_id"], data["response"]) == (str(case / "task_data.json"), None, None)
    assert json.loads(run_tool(env, "explain", "--json", task_dir, "--python", PY).stdout)["task_data"] == str(
        task_dir / "task_data.json"
    )


def test_explain_does_not_call_verify(env, tmp_path):
    marker = tmp_path / "called"
    task_dir = make_task(
        tmp_path / "t", f"def verify(workspace):\n    open({str(marker)!r}, 'w').close()\n    return 1.0\n"
    )
    done = run_tool(env, "explain", task_dir, "--python", PY)
    assert done.returncode == 0
    assert not marker.exists()


@pytest.mark.parametrize(
    ("definition", "what"),
    [
        ("def verify(workspace):\n    yield 1.0\n", "a generator"),
        ("async def verify(workspace):\n    yield 1.0\n", "an async generator"),
        ("class Verify:\n    def __call__(self, workspace):\n        yield 1.0\n\nverify = Verify()\n", "a generator"),
    ],
    ids=["generator", "async-generator", "generator-__call__"],
)
def test_explain_of_a_verify_that_yields_says_what_the_run_does(env, tmp_path, definition, what):
    """A ``verify`` that yields returns a generator when called, never a
    reward: the run is a contract error (exit 2), but explain said "no contract
    problems: verify would be called", as if the run would score."""
    task_dir = make_task(tmp_path / "t", definition)
    ran = run_tool(env, "run", task_dir, "--python", PY)
    assert ran.returncode == 2 and "contract error" in ran.stdout, ran.stdout
    done = run_tool(env, "explain", task_dir, "--python", PY)
    assert "no contract problems" not in done.stdout, done.stdout
    sentence = (
        f"verify yields: calling it returns {what}, not a number or a dict of numbers, so the run "
        "is a contract error (exit 2) and writes no reward"
    )
    assert done.stdout.count(sentence) == 1, done.stdout
    # --json says it where a check looks: its problems were [] (only verify.yields set), so a CI
    # step failing on problems passed a verifier whose every run fails
    data = json.loads(run_tool(env, "explain", task_dir, "--python", PY, "--json").stdout)
    assert data["problems"] == [sentence] and data["would_call_verify"] is True


def test_run_of_a_verify_that_yields_says_the_fault_as_done_not_as_explains_prediction(env, tmp_path):
    """run of a verify that yields said the fault four times: its exit line,
    the verdict, stderr, and explain's ``contract: verify yields: ... so the
    run is a contract error (exit 2)``, a prediction of the run just made."""
    task_dir = make_task(tmp_path / "t", "def verify(workspace):\n    yield 1.0\n")
    ran = run_tool(env, "run", task_dir, "--python", PY)
    assert ran.returncode == 2 and "exit 2 · contract error: verify returned" in ran.stdout, ran.stdout
    assert "verify yields" not in ran.stdout and "contract:" not in ran.stdout, ran.stdout


def test_explain_of_a_generator_the_runner_awaits_says_it_would_be_called(env, tmp_path):
    """A ``@types.coroutine`` generator is awaited as a coroutine is: its run scores."""
    task_dir = make_task(
        tmp_path / "t",
        "import types\n\n@types.coroutine\ndef verify(workspace):\n    yield\n    return 1.0\n",
    )
    assert run_tool(env, "run", task_dir, "--python", PY).returncode == 0
    done = run_tool(env, "explain", task_dir, "--python", PY)
    assert "no contract problems: verify would be called" in done.stdout and "yields" not in done.stdout, done.stdout


def test_explain_a_verifier_that_prints_as_it_is_imported(env, tmp_path):
    """The document came on the runner's stdout, which the verifier shares:
    a ``print`` at import made it "the runner gave no explanation"."""
    source = "import sys\nprint('debug: loading')\nsys.stdout.write('{')\n\ndef verify(workspace):\n    return 1.0\n"
    task_dir = make_task(tmp_path / "t", source)
    done = run_tool(env, "explain", "--json", task_dir, "--python", PY)
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads(done.stdout)
    assert data["verify"]["signature"] == "verify(workspace)" and data["problems"] == []


def test_explain_says_a_planted_link_in_place_of_its_document(env, tmp_path):
    """A verifier that makes the document a link to /proc/self/environ as it
    exits: nothing read through it, and the line says so (it said only
    "the runner gave no explanation")."""
    source = (
        "import atexit, os, sys\n"
        "where = sys.argv[sys.argv.index('--explain-to') + 1]\n"
        "atexit.register(lambda: (os.unlink(where), os.symlink('/proc/self/environ', where)))\n\n"
        "def verify(workspace):\n    return 1.0\n"
    )
    done = run_tool(env, "explain", make_task(tmp_path / "t", source), "--python", PY)
    assert done.returncode == 2 and "SECRET" not in done.stdout + done.stderr
    assert "its document was made a link to /proc/self/environ, not read" in done.stderr, done.stderr


def test_explain_shows_paths_from_where_it_was_started_as_the_tui_does(env, example):
    task_dir = example("count-errors")
    done = run_tool(env, "explain", task_dir, "--python", PY, cwd=task_dir.parent)
    assert f"vendored helpers                  {task_dir.name}/tests/.ng" in done.stdout, done.stdout
    assert str(task_dir) not in done.stdout  # it printed absolute paths, the TUI and explain TRIAL relative ones


def test_explain_readable(env, example):
    task_dir = example("count-errors")
    done = run_tool(env, "explain", task_dir, "--case", "harbor-mode", "--python", PY)
    out = done.stdout
    assert "sys.path  in the order the runner placed it" in out  # words/resolution.py, as the TUI and explain TRIAL
    assert str(task_dir / "tests") in out
    assert "vendored helpers" in out and "verifier's folder" in out
    # in the TUI's words (words/resolution.py), where it said "nemo_gym: not found"
    assert "nemo_gym.verifiers not importable: nemo_gym is not installed for this interpreter" in out
    assert "verify(workspace, response)  async: run to completion with asyncio.run" in out
    assert "MISSING" in out
    assert "contract problem:" in out
    no_traceback(done)


def test_explain_of_a_run_stopped_before_sys_path_was_placed_says_so(env, tmp_path):
    """A response that is not JSON stops the runner before it places its
    folders: explain listed the interpreter's own start-up path under "sys.path
    in the order the runner placed it", the vendored folder as "interpreter",
    and said nemo_gym was not installed, looked up on that path."""
    task_dir = make_task(tmp_path / "t", "def verify(workspace, response=None):\n    return 1.0\n")
    bad = tmp_path / "response.json"
    bad.write_text("{not json")
    done = run_tool(env, "explain", task_dir, "--response", bad, "--python", PY)
    assert done.returncode == 0, done.stderr
    assert "in the order the runner placed it" not in done.stdout
    assert "sys.path  not placed: the runner stopped before it put its folders first" in done.stdout
    assert "nemo_gym.verifiers not looked up: the runner stopped before it placed sys.path" in done.stdout
    assert f"contract problem: --response file {bad} is not valid JSON" in done.stdout
    no_traceback(done)


def test_verify_whose_own_code_raises_as_it_is_looked_up_is_not_called_a_contract_problem(env, tmp_path):
    """A ``__signature__`` property that raises is the verifier raising (exit
    1, the runner's contract): explain said "contract problem:", and run put a
    "contract:" line under "exit 1 · verifier raised". Then explain named
    what raised without its message ("raised RuntimeError"), which run's
    traceback ends with."""
    source = (
        "class Verify:\n    @property\n    def __signature__(self):\n        raise RuntimeError('gotcha')\n\n"
        "    def __call__(self, workspace):\n        return 1.0\n\nverify = Verify()\n"
    )
    task_dir = make_task(tmp_path / "t", source)
    done = run_tool(env, "explain", task_dir, "--python", PY)
    assert "contract problem" not in done.stdout, done.stdout
    assert (
        "verify would not be called (the verifier's own code raised, exit 1): "
        "reading verify's signature raised RuntimeError: gotcha" in done.stdout
    )
    ran = run_tool(env, "run", task_dir, "--python", PY)
    assert ran.returncode == 1 and "exit 1 · verifier raised" in ran.stdout
    assert "contract:" not in ran.stdout and "RuntimeError: gotcha" in ran.stdout


def test_explain_shows_an_import_error(env, tmp_path):
    task_dir = make_task(tmp_path / "t", "import nosuchmodule_vtui\n\ndef verify(workspace):\n    return 1.0\n")
    done = run_tool(env, "explain", task_dir, "--python", PY)
    assert "ModuleNotFoundError" in done.stdout
    assert "nosuchmodule_vtui" in done.stdout


def test_explain_says_an_import_errors_message_as_python_does(env, tmp_path):
    """explain printed ``importing the verifier raised ValueError: 'boom'``,
    quotes Python's traceback (printed just below) does not have."""
    task_dir = make_task(tmp_path / "t", "raise ValueError('boom')\n")
    done = run_tool(env, "explain", task_dir, "--python", PY)
    assert "importing the verifier raised ValueError: boom\n" in done.stdout, done.stdout


def test_explain_says_an_import_error_without_a_message_as_python_does(env, tmp_path):
    """``raise ValueError()`` at import: explain printed ``importing the
    verifier raised ValueError: `` (a colon and nothing after it), where
    Python's traceback ends with ``ValueError``."""
    task_dir = make_task(tmp_path / "t", "raise ValueError()\n")
    done = run_tool(env, "explain", task_dir, "--python", PY)
    assert "importing the verifier raised ValueError\n" in done.stdout, done.stdout


def test_explain_says_a_multi_line_import_error_on_one_line(env, tmp_path):
    """``raise ValueError('first\\nsecond')`` at import: explain's line
    ``importing the verifier raised ValueError: first`` was split, ``second``
    a line of its own (the traceback below still quotes it as Python does)."""
    task_dir = make_task(tmp_path / "t", "raise ValueError('first\\nsecond')\n")
    done = run_tool(env, "explain", task_dir, "--python", PY)
    assert "importing the verifier raised ValueError: first\\nsecond\n" in done.stdout, done.stdout


# ---------------------------------------------------------------------------
# test


@pytest.mark.parametrize("name", TASKS_WITH_CASES)
def test_test_passes_on_every_example(env, example, name):
    task_dir = example(name)
    done = run_tool(env, "test", task_dir, "--python", PY)
    assert done.returncode == 0, done.stdout + done.stderr
    cases = sorted(p.name for p in (task_dir / "cases").iterdir())
    table = done.stdout.splitlines()
    for case in cases:
        assert any(line.startswith("✓") and f" {case} " in line for line in table), (case, done.stdout)
    assert f"{len(cases)} passed, 0 failed" in done.stdout


def test_test_without_cases(env, example):
    done = run_tool(env, "test", example("plain-test-sh"), "--python", PY)
    assert done.returncode == 2
    assert "has no cases folder; make one with verifier-tui run TASK --save-case NAME" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_test_without_cases_prints_its_document_when_stderr_cannot_take_its_line(env, example, tmp_path):
    """``test FOLDER --json --junit r.xml >out.json 2>/dev/full``, its tasks without cases: the line saying
    so came before the document and, refused, ended the command with out.json empty."""
    shutil.copytree(example("plain-test-sh"), tmp_path / "folder" / "plain-test-sh")
    document, names = refused_test_with_stderr_full(env, tmp_path, tmp_path / "folder")
    assert document["without_cases"] and names == ["(task)", "(command line)"], (document, names)


def test_test_with_a_wrong_expectation(env, example, tmp_path):
    task_dir = example("hello-file")
    (task_dir / "cases" / "wrong-text" / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    (task_dir / "cases" / "correct" / "expected.json").write_text('{"exit_code": 2}')
    junit = tmp_path / "report.xml"
    done = run_tool(env, "test", task_dir, "--junit", junit, "--python", PY)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    wrong = next(line for line in lines if " wrong-text " in line)
    assert wrong.startswith("✗")
    assert '{"reward": 1.0}' in wrong and '{"reward": 0.0}' in wrong  # expected vs actual
    correct = next(line for line in lines if " correct " in line)
    assert correct.startswith("✗") and "exit 2" in correct
    assert next(line for line in lines if " wrong-case " in line).startswith("✓")
    assert "2 passed, 2 failed" in done.stdout

    suite = ET.parse(junit).getroot()
    assert suite.tag == "testsuite"
    assert suite.get("tests") == "4" and suite.get("failures") == "2" and suite.get("errors") == "0"
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert sorted(cases) == ["correct", "missing-file", "wrong-case", "wrong-text"]
    assert cases["wrong-text"].find("failure") is not None
    assert "expected" in cases["wrong-text"].find("failure").get("message")
    assert cases["correct"].find("failure") is not None
    assert cases["wrong-case"].find("failure") is None
    assert cases["missing-file"].find("failure") is None
    assert "FileNotFoundError" in cases["missing-file"].find("system-err").text


def test_test_reports_an_unusable_expected_json(env, example, tmp_path):
    task_dir = example("hello-file")
    (task_dir / "cases" / "wrong-text" / "expected.json").write_text("{oops")
    junit = tmp_path / "report.xml"
    done = run_tool(env, "test", task_dir, "--junit", junit, "--python", PY)
    assert done.returncode == 1
    assert "wrong-text: not run: expected.json is not valid JSON" in done.stdout
    assert "3 passed, 0 failed, 1 with an unusable expected.json" in done.stdout
    suite = ET.parse(junit).getroot()
    # a case not run is a failure saying so, as the pytest plugin's report has it
    assert suite.get("tests") == "4" and suite.get("errors") == "0" and suite.get("failures") == "1"
    failed = next(case for case in suite.iter("testcase") if case.get("name") == "wrong-text").find("failure")
    assert failed.get("message").startswith("not run: expected.json is not valid JSON"), failed.get("message")
    data = json.loads(run_tool(env, "test", "--json", task_dir, "--python", PY).stdout)
    assert [i["case"] for i in data["invalid"]] == ["wrong-text"]
    for name in ("correct", "missing-file", "wrong-case"):
        (task_dir / "cases" / name / "expected.json").write_text('{"rewards": "all"}')
    done = run_tool(env, "test", task_dir, "--python", PY)  # every case unusable: four rows, said once each
    assert done.returncode == 1 and done.stderr == ""
    assert "0 passed, 0 failed, 4 with an unusable expected.json" in done.stdout
    assert "wrong-text: not run: expected.json is not valid JSON" in done.stdout


def test_an_expected_json_in_the_reward_files_shape_is_told_how_to_write_it(env, example):
    """A newcomer's first expected.json is often the reward file itself: the
    line names the fix, written out."""
    task_dir = example("hello-file")
    (task_dir / "cases" / "correct" / "expected.json").write_text('{"reward": 1.0}')
    (task_dir / "cases" / "wrong-case" / "expected.json").write_text(json.dumps({f"r{i}": 0 for i in range(30)}))
    done = run_tool(env, "test", task_dir, "--python", PY)
    assert (
        'correct: not run: expected.json names neither "rewards" nor "exit_code": '
        'for these rewards, write {"rewards": {"reward": 1.0}}'
    ) in done.stdout
    assert 'wrong-case: not run: expected.json names neither "rewards" nor "exit_code": put them under "rewards"' in (
        done.stdout
    )


def test_test_junit_all_passing(env, example, tmp_path):
    junit = tmp_path / "ok.xml"
    done = run_tool(env, "test", example("sum-column"), "--junit", junit, "--python", PY)
    assert done.returncode == 0
    suite = ET.parse(junit).getroot()
    assert suite.get("tests") == "3" and suite.get("failures") == "0"
    assert len(list(suite.iter("testcase"))) == 3
    assert list(suite.iter("failure")) == []


def test_test_junit_that_cannot_be_written(env, example, tmp_path):
    """A folder is refused before anything runs; a full disk is found only
    by the write, after the table, which is printed all the same."""
    task = example("sum-column")
    done = run_tool(env, "test", task, "--junit", tmp_path, "--python", PY)
    no_traceback(done)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == f"verifier-tui: --junit {tmp_path}: is a folder"
    done = run_tool(env, "test", task, "--junit", "-", "--python", PY)  # wrote a file named "-"
    assert done.returncode == 2 and done.stdout == "" and "a report goes to a file" in done.stderr
    done = run_tool(env, "test", task, "--junit", "/dev/full", "--python", PY)
    no_traceback(done)
    assert done.returncode == 2 and "3 passed, 0 failed" in done.stdout
    assert done.stderr.strip() == "verifier-tui: --junit /dev/full: cannot write it: No space left on device"


def test_no_report_replaces_a_file_the_run_reads(env, example, tmp_path):
    """``--junit`` naming a case's expected.json, or ``--coverage-report`` the
    verifier, replaced it (exit 0): the next run failed on XML or LCOV. So
    does a link the user made to one, and a file of a ``--workspace`` given."""
    task = example("sum-column")
    expected = next((task / "cases").iterdir()) / "expected.json"
    verifier = task / "tests" / "verifier.py"
    link = tmp_path / "report.xml"
    link.symlink_to(task / "task.toml")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    hard = tmp_path / "hard.xml"
    os.link(expected, hard)
    outside = tmp_path / "outside.py"
    outside.write_text(verifier.read_text())
    before = {path: path.read_bytes() for path in (expected, verifier, task / "task.toml", outside)}
    for command in (
        ["test", task, "--junit", expected],
        ["test", task, "--coverage-report", verifier],
        ["run", task, "--coverage-report", verifier],
        ["test", task, "--junit", link],
        ["run", task, "--workspace", workspace, "--coverage-report", workspace / "lcov.info"],
        ["test", task, "--junit", hard],
        ["run", task, "--verifier", outside, "--coverage-report", outside],
    ):
        done = run_tool(env, *command, "--python", PY)
        no_traceback(done)
        assert done.returncode == 2 and done.stdout == "", command
        assert "which verifier-tui never writes: give a path outside it" in done.stderr or (
            "other name(s) (hard links)" in done.stderr
        ), done.stderr
    assert {path: path.read_bytes() for path in before} == before and not (workspace / "lcov.info").exists()


def test_a_report_file_that_is_the_commands_own_output_is_refused(env, example, tmp_path):
    """``test --json --junit /dev/stdout`` in CI: the report went where the document went, after it
    in a pipe (no JSON reader takes the two) and over it in a file (opened anew, the document was
    gone), exit 0. Refused before anything runs, stdout a pipe or a file alike; a terminal is left be."""
    task = example("sum-column")
    for command in (["test", task, "--json", "--junit"], ["run", task, "--json", "--coverage-report"]):
        done = run_tool(env, *command, "/dev/stdout", "--python", PY)
        no_traceback(done)
        assert done.returncode == 2 and done.stdout == "", command
        assert done.stderr.splitlines() == [
            f"verifier-tui: {command[-1]} /dev/stdout: it is this command's own stdout: give a file of its own"
        ]
    out = tmp_path / "out.json"
    with out.open("w") as stdout:
        done = subprocess.run(
            [*TOOL, "test", str(task), "--json", "--junit", "/dev/stdout", "--python", PY],
            env=env,
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
        )
    assert done.returncode == 2 and out.read_text() == "", done.stderr
    assert "it is this command's own stdout" in done.stderr


def test_a_report_file_that_is_a_fifo_never_waits_for_a_reader(env, example, tmp_path):
    """``--junit`` or ``--coverage-report`` naming a FIFO no program reads:
    the run went, printed its table, then waited for ever to open the FIFO.
    Refused before anything runs; a FIFO a program reads gets the report."""
    task = example("sum-column")
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    for command in (["run", task, "--coverage-report", fifo], ["test", task, "--junit", fifo]):
        done = run_tool(env, *command, "--python", PY)
        no_traceback(done)
        assert done.returncode == 2 and done.stdout == "", command
        assert done.stderr.splitlines() == [f"verifier-tui: {command[2]} {fifo}: a FIFO that no program reads"]
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        done = run_tool(env, "test", task, "--junit", fifo, "--python", PY)
        assert done.returncode == 0, done.stderr
        assert os.read(reader, 1 << 16).startswith(b"<?xml")
    finally:
        os.close(reader)


def test_test_json(env, example):
    task_dir = example("fizzbuzz-module")
    (task_dir / "cases" / "partial" / "expected.json").write_text('{"rewards": {"reward": 0.5}}')
    done = run_tool(env, "test", "--json", task_dir, "--python", PY)
    assert done.returncode == 1
    data = json.loads(done.stdout)
    assert data["passed"] == 1 and data["failed"] == 1
    assert data["task"] == str(task_dir)
    by_case = {c["case"]: c for c in data["cases"]}
    assert by_case["clean"]["expected_matched"] is True
    assert by_case["partial"]["expected_matched"] is False
    assert by_case["partial"]["expected"] == {"rewards": {"reward": 0.5}}
    assert by_case["partial"]["rewards"]["reward"] == 0.6875


def test_test_cases_in_parallel_never_share_a_staged_layout(env, tmp_path):
    """Cases without a workspace folder (or with the same one) run at once,
    each in a layout of its own: every verdict is its own case's."""
    task_dir = make_task(
        tmp_path / "responses",
        (
            "import time\n\n"
            "def verify(workspace, response):\n"
            "    (workspace / 'mine.txt').write_text(response['output'][0]['content'][0]['text'])\n"
            "    time.sleep(0.2)\n"
            "    return float((workspace / 'mine.txt').read_text())\n"
        ),
    )
    for index in range(1, 7):
        case = task_dir / "cases" / f"c{index}"
        case.mkdir(parents=True)
        (case / "response.txt").write_text(f"0.{index}")
        (case / "expected.json").write_text(json.dumps({"rewards": {"reward": index / 10}}))
    done = run_tool(env, "test", task_dir, "--jobs", "6", "--python", PY)
    assert done.returncode == 0, done.stdout
    assert "6 passed, 0 failed" in done.stdout


def test_test_runs_cases_one_at_a_time_too(env, example):
    done = run_tool(env, "test", example("summary-keywords"), "--jobs", "1", "--python", PY)
    assert done.returncode == 0
    assert "3 passed, 0 failed" in done.stdout


# ---------------------------------------------------------------------------
# watch


def test_watch_reruns_on_a_change_and_stops_cleanly(env, example):
    task_dir = example("hello-file")
    proc, reader = start_watch(env, task_dir, "--python", PY)
    try:
        first = reader.next_run()
        assert "start" in first and "reward written" in first and "reward 1" in first
        verifier = task_dir / "tests" / "verifier.py"
        verifier.write_text(verifier.read_text().replace("return 1.0 if", "return 0.5 if"))
        second = reader.next_run()
        assert second.startswith("#2")
        assert "tests/verifier.py" in second
        assert "reward 0.5" in second
    finally:
        code, stderr = stop(proc)
    assert code == 0
    assert "Traceback" not in stderr
    assert stderr.strip() == ""


def test_watch_lines_keep_their_columns_when_the_reward_words_are_long(env, example):
    """The reward column is 24 characters: "Harbor would refuse to run this task"
    (36) pushed the time and the match with expected.json right, so one run's
    line no longer lined up with the next's. The column holds; what did not fit
    is said whole, once: a refusal as watch's notes are, here above the first
    run, where the task's notes are said (not again under it)."""
    task_dir = example("hello-file")
    toml = task_dir / "task.toml"
    good = toml.read_text()
    toml.write_text(good.replace('version = "1.0"', "version = 1"))
    proc, reader = start_watch(env, task_dir, "--case", "correct", "--python", PY)
    try:
        above = []
        while not (first := reader.next(HANG_GUARD_S)).startswith("#"):
            above.append(first)
        toml.write_text(good)
        under = []
        while not (second := reader.next(HANG_GUARD_S)).startswith("#"):
            under.append(second)
    finally:
        code, stderr = stop(proc)
    assert code == 0 and "Traceback" not in stderr, stderr
    assert "reward 1" in second, second
    assert first.index("differs from expected") == second.index("matches expected"), (first, second)
    whole = [line for line in above + under if "Harbor would refuse to run this task: version = 1 is not" in line]
    assert len(whole) == 1 and whole[0] in above, (above, under)


def _watch_first_run_and_the_line_under_it(env, task_dir) -> tuple[str, str]:
    """watch's line for its first run and the line it says under it (past the run's notes); watch
    is stopped cleanly after them."""
    proc, reader = start_watch(env, task_dir, "--python", PY)
    try:
        first = reader.next_run()
        said = reader.next(HANG_GUARD_S)
        while said.strip().startswith("note:"):  # the run's notes come first
            said = reader.next(HANG_GUARD_S)
    finally:
        code, stderr = stop(proc)
    assert code == 0 and "Traceback" not in stderr, stderr
    return first, said


def test_watch_says_the_exception_the_run_ended_on_not_one_printed_as_it_exited(env, tmp_path):
    """Under a run that wrote no reward, watch printed stderr's last line: verify raised ValueError, then an
    object's __del__ raised as the interpreter exited (`Exception ignored in: ...`), so the line said
    `RuntimeError: cleanup failed`, an exception that ended nothing."""
    verifier = (
        "class Scratch:\n    def __del__(self):\n        raise RuntimeError('cleanup failed')\n\n\nKEEP = []\n\n\n"
        "def verify(workspace):\n    KEEP.append(Scratch())\n    raise ValueError('the answer is wrong')\n"
    )
    task_dir = make_task(tmp_path / "ignored", verifier)
    first, said = _watch_first_run_and_the_line_under_it(env, task_dir)
    assert "verifier raised" in first, first
    assert said.strip() == "ValueError: the answer is wrong", said


def test_watch_says_stderrs_last_line_under_a_run_that_did_not_raise(env, tmp_path):
    """verify logged an exception it caught, printed why it gave up and ended the interpreter (os._exit(3)): the
    line under the run was the logged report's last, `json.decoder.JSONDecodeError: ...`, as if it had raised;
    only a run whose verify raised ended on a report, any other says stderr's last line."""
    verifier = (
        "import json, logging, os, sys\n\n\ndef verify(workspace):\n    try:\n        json.loads('not json')\n"
        "    except ValueError:\n        logging.exception('bad answer')\n"
        "    print('giving up on this answer', file=sys.stderr, flush=True)\n    os._exit(3)\n"
    )
    task_dir = make_task(tmp_path / "gives-up", verifier)
    first, said = _watch_first_run_and_the_line_under_it(env, task_dir)
    assert "verifier raised" not in first, first
    assert said.strip() == "giving up on this answer", said


def test_a_long_trigger_keeps_what_happened_to_the_file(env, example):
    """``rm -rf cases/correct`` while watched: the trigger column, 28 characters,
    kept the start of ``cases/correct/expected.json deleted +2 more`` and showed
    ``cases/correct/expected.json…``, as if the file had been saved. What
    happened to it is kept, the path cut in its middle."""
    task_dir = example("hello-file")
    proc, reader = start_watch(env, task_dir, "--case", "correct", "--python", PY)
    try:
        reader.next_run()
        shutil.rmtree(task_dir / "cases" / "correct")
        second = reader.next_run()
    finally:
        code, stderr = stop(proc)
    assert code == 0 and "Traceback" not in stderr, stderr
    trigger = second[15:43]
    assert "expected.json" not in trigger and "cted.json deleted" in trigger, second


def test_watch_names_the_file_an_atomic_save_wrote_and_a_file_deleted(env, example):
    """Editors and ``sed -i`` save by renaming a temporary file over the target: the line
    names the target alone, as the user saved one file; a file the user removed is said."""
    task_dir = example("hello-file")
    helper = write(task_dir / "tests" / "helper.py", "HELPER = 1\n")
    proc, reader = start_watch(env, task_dir, "--case", "correct", "--python", PY)
    try:
        assert "start" in reader.next_run()
        verifier = task_dir / "tests" / "verifier.py"
        save = (
            "import os, sys, tempfile; path = sys.argv[1]; text = open(path).read() + '# saved\\n'; "
            "fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path)); os.write(fd, text.encode()); "
            "os.close(fd); os.replace(tmp, path)"
        )
        subprocess.run([sys.executable, "-c", save, str(verifier)], check=True)
        saved = reader.next_run()
        subprocess.run(["sed", "-i", "s/# saved/# saved again/", str(verifier)], check=True)
        sed = reader.next_run()
        subprocess.run(["rm", str(helper)], check=True)
        removed = reader.next_run()
    finally:
        code, stderr = stop(proc)
    assert code == 0 and "Traceback" not in stderr, stderr
    for line in (saved, sed):
        assert "tests/verifier.py" in line and "more" not in line, line
    assert "tests/helper.py deleted" in removed and "more" not in removed, removed


def test_watch_gives_one_line_for_a_save_that_truncates_then_writes(env, example):
    """VS Code, and any editor that saves in place, truncates the file, then writes it: with more
    than 20 ms between the two, watch printed a line for the empty verifier (contract error,
    RewardFileNotFoundError) before the save's own. One save is one line, the verdict of what
    was written."""
    task_dir = example("hello-file")
    verifier = task_dir / "tests" / "verifier.py"
    saved = verifier.read_text().replace("return 1.0 if", "return 0.5 if")
    proc, reader = start_watch(env, task_dir, "--case", "correct", "--python", PY)
    try:
        assert "reward 1" in reader.next_run()
        with verifier.open("r+") as handle:
            handle.truncate(0)
            handle.flush()
            time.sleep(0.05)  # tens of milliseconds between the two: a loaded machine, a big file
            handle.write(saved)
        line = reader.next_run()
        more = []
        with contextlib.suppress(queue.Empty):
            while True:
                more.append(reader.next(3))
    finally:
        code, stderr = stop(proc)
    assert code == 0 and "Traceback" not in stderr, stderr
    assert line.startswith("#2") and "tests/verifier.py" in line and "reward 0.5" in line, line
    assert not [said for said in more if said.startswith("#")], more


def test_watch_runs_a_save_at_once_while_a_run_is_stuck(env, example):
    """A verifier stuck in a loop, then the fix saved: watch waited for the stuck run's timeout
    (the task's 30 s here; Harbor tasks often give 600 s) before it ran the fix, saying nothing
    meanwhile. A save ends the run in flight, says so, and runs the files as saved, as test
    --watch ends its round and the TUI its run."""
    task_dir = example("hello-file")
    verifier = task_dir / "tests" / "verifier.py"
    proc, reader = start_watch(env, task_dir, "--case", "correct", "--python", PY)
    try:
        assert "reward 1" in reader.next_run()
        verifier.write_text(STUCK_ONCE_STARTED)
        wait_started(env["TMPDIR"])  # the stuck run under way: a save now cuts it short
        verifier.write_text("def verify(workspace):\n    return 0.5\n")
        said = reader.through_next_run()
    finally:
        code, stderr = stop(proc)
    assert code == 0 and "Traceback" not in stderr, stderr
    assert said[0] == "run #2 cut short (tests/verifier.py): a file changed meanwhile, and it runs again", said
    assert said[-1].startswith("#3 ") and "tests/verifier.py" in said[-1] and "reward 0.5" in said[-1], said


def test_watch_says_the_run_cut_short_on_one_line_whatever_its_files_are_named(env, tmp_path):
    """A file named ``a<ESC>[31mRED<newline>b`` set off a run cut short by the next save: the line
    printed its name raw, so the terminal turned red and the line broke in two (``run cut short
    (workspace/aRED`` and ``b): a file changed…``), where the run's own line shows it escaped."""
    stuck = (
        "import os, time\n\n\ndef verify(workspace):\n"
        "    while any('RED' in name for name in os.listdir(workspace)):\n"
        + textwrap.indent(SAY_STARTED, "        ")
        + "        time.sleep(0.01)\n    return 1.0\n"
    )
    task_dir = make_task(tmp_path / "t", stuck, cases={"only": {"ok.txt": "x"}})
    proc, reader = start_watch(env, task_dir, "--case", "only", "--python", PY)
    try:
        assert "reward 1" in reader.next_run()
        (task_dir / "cases" / "only" / "workspace" / "a\x1b[31mRED\nb").write_text("x")
        wait_started(env["TMPDIR"])  # its run stuck
        (task_dir / "tests" / "verifier.py").write_text("def verify(workspace):\n    return 0.5\n")
        said = reader.through_next_run()
    finally:
        code, stderr = stop(proc)
    assert code == 0 and "Traceback" not in stderr, stderr
    assert len(said) == 2 and "\x1b" not in said[0], said
    assert said[0].startswith("run #2 cut short (workspace/a\\x1b[31mRED\\nb"), said
    assert said[0].endswith("a file changed meanwhile, and it runs again"), said


def test_watch_says_which_runs_a_stream_of_saves_cut_short(env, tmp_path):
    """Saves in a stream cut one run after another: watch said `run cut short` once, then `#6`, the
    numbers between unsaid (50 rapid saves read #1, a cut, #38). The first cut names its run, and
    the run that ends says which others were cut short."""
    stuck = (
        "import os, time\n\n\ndef verify(workspace):\n"
        + textwrap.indent(SAY_STARTED, "    ")
        + "    while os.path.exists(os.path.join(workspace, 'stuck')):\n        time.sleep(0.01)\n"
        "    return 1.0\n"
    )
    task_dir = make_task(tmp_path / "t", stuck, cases={"only": {"ok.txt": "x"}})
    workspace = task_dir / "cases" / "only" / "workspace"
    scratch = Path(env["TMPDIR"])

    def save(text: str | None, first: bool = False) -> None:
        """Save (or delete) the file once the run the last save set off is under way (the first save of a
        stream comes after a run that ended): no guess at how long."""
        if first:
            forget_started(scratch)  # what the run that ended left
        else:
            wait_started(scratch)
        if text is None:
            (workspace / "stuck").unlink()
        else:
            (workspace / "stuck").write_text(text)

    proc, reader = start_watch(env, task_dir, "--case", "only", "--python", PY)
    said: list[str] = []
    try:
        assert reader.next_run().startswith("#1 ")
        for n, text in enumerate(("x", "0", None)):  # run #2 stuck, #3 cuts it and is stuck, #4 cuts it and returns
            save(text, first=n == 0)
        said = reader.through_next_run()
        said.append(reader.next(10))
        for n, text in enumerate(("x", "1", "2", None)):  # a stream: #5 stuck, #6 and #7 cut, then #8
            save(text, first=n == 0)
        said += reader.through_next_run()
        said.append(reader.next(10))
    finally:
        code, stderr = stop(proc)
    assert code == 0 and "Traceback" not in stderr, stderr
    assert said[0].startswith("run #2 cut short (workspace/stuck)"), said
    assert said[1].startswith("#4 ") and said[2] == "      run #3 cut short too: the files went on changing", said
    assert said[3].startswith("run #5 cut short (workspace/stuck)"), said
    assert said[4].startswith("#8 ") and said[5] == "      runs #6-#7 cut short too: the files went on changing", said


def test_watch_says_a_task_folder_renamed_as_a_rename(env, example):
    """``mv hello-file hello-world`` while watch ran: the run that followed was
    said to be for ``cases deleted +1 more``, as if the user had deleted the
    cases, where the task is the same one under its new name."""
    task_dir = example("hello-file")
    proc, reader = start_watch(env, task_dir, "--case", "correct", "--python", PY)
    try:
        assert "start" in reader.next_run()
        task_dir.rename(task_dir.with_name("hello-world"))
        renamed = reader.next_run()
        task_dir.with_name("hello-world").rename(task_dir)
        back = reader.next_run()
    finally:
        code, stderr = stop(proc)
    assert code == 0 and "Traceback" not in stderr, stderr
    assert "task folder → hello-world " in renamed and "deleted" not in renamed, renamed
    assert "task folder → hello-file " in back and "matches expected" in back, back


def test_watch_json_one_document_per_line(env, example):
    task_dir = example("hello-file")
    proc, reader = start_watch(env, "--json", task_dir, "--case", "wrong-text", "--python", PY)
    try:
        first = json.loads(reader.next_run(prefix="{"))
        assert first["trigger"] == "start"
        assert first["rewards"] == {"reward": 0.0}
        (task_dir / "cases" / "wrong-text" / "workspace" / "hello.txt").write_text("hello world\n")
        second = json.loads(reader.next_run(prefix="{"))
        assert "hello.txt" in second["trigger"]
        assert second["rewards"] == {"reward": 1.0}
        assert second["expected_matched"] is False
        # Each line is the run document, no field more or less than docs/json-output.md lists.
        documented = documented_fields("## The run document", "### Parameters")
        assert set(first) == set(second) == documented
    finally:
        code, stderr = stop(proc)
    assert code == 0 and "Traceback" not in stderr


def test_watch_rereads_task_toml(env, example):
    task_dir = example("hello-file")
    proc, reader = start_watch(env, "--json", task_dir, "--case", "wrong-case", "--python", PY)
    try:
        first = json.loads(reader.next_run(prefix="{"))
        assert first["rewards"] == {"reward": 0.0}  # STRICT=1: "Hello World" fails
        toml = task_dir / "task.toml"
        toml.write_text(
            toml.read_text()
            .replace('env = { STRICT = "1" }', 'env = { STRICT = "0" }')
            .replace("timeout_sec = 30.0", "timeout_sec = 12.0")
        )
        second = json.loads(reader.next_run(prefix="{"))
        assert second["trigger"] == "task.toml"
        assert second["rewards"] == {"reward": 1.0}
        assert second["timeout_s"] == 12.0
    finally:
        code, stderr = stop(proc)
    assert code == 0 and "Traceback" not in stderr


# ---------------------------------------------------------------------------
# SIGTERM (kill, a CI job's timeout) cleans up like Ctrl+C


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes through /proc")
@pytest.mark.parametrize("command", [["run"], ["run", "--json"], ["test"], ["watch"], ["watch", "--json"]])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=["SIGTERM", "SIGINT", "SIGHUP"])
def test_a_signal_ends_the_run_and_removes_the_scratch(env, tmp_path, command, sig):
    task_dir = make_task(tmp_path / "slow", STUCK_ONCE_STARTED)
    (task_dir / "cases" / "only" / "workspace").mkdir(parents=True)
    (task_dir / "cases" / "only" / "expected.json").write_text('{"exit_code": 0}')
    scratch = env["TMPDIR"]

    def ready() -> bool:
        if not has_started(scratch):
            return False
        # The runner (and, with namespaces, the init around it), by the scratch
        # folder on their command lines: a pid read inside a namespace means
        # nothing outside it.
        assert processes_with(scratch), "the runner is not to be seen"
        return True

    code, err = interrupted(env, [*command, task_dir, "--python", PY], ready, sig, "the verifier never started")
    assert code == 128 + sig or (command[0] == "watch" and code == 0), (code, err)
    assert "Traceback" not in err
    assert wait_none_with(scratch) == [], "the runner outlived the command"
    assert list(Path(env["TMPDIR"]).iterdir()) == []


def _stuck_case_task(path: Path) -> Path:
    """A task whose one case, expected to exit 0, runs a verifier stuck once it says it started."""
    task = make_task(path, STUCK_ONCE_STARTED, cases={"only": {}})
    (task / "cases" / "only" / "expected.json").write_text('{"exit_code": 0}')
    return task


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_mid_test_leaves_a_junit_report_of_this_run_not_the_last(env, tmp_path, sig):
    """Ctrl+C (or a CI job's timeout) while ``test --junit out.xml`` runs: no report was written, so the
    last run's, all green, was left for CI to show as this one's. The report says what ran, and one error
    that the run was stopped before every case ran; a file any reader takes."""
    folder = tmp_path / "tasks"
    copy_example("hello-file", folder / "hello-file")
    _stuck_case_task(folder / "slow")
    report = an_old_green_report(tmp_path / "out.xml")
    scratch = env["TMPDIR"]
    # One at a time, tasks by name: the slow case starts once the four fast ones have ended (no guess at how long).
    args = ["test", folder, "--junit", report, "-j", "1", "--python", PY]
    code, err = interrupted(env, args, lambda: has_started(scratch), sig, "the slow verifier never started")
    assert code == 128 + sig and "Traceback" not in err, (code, err)
    assert list(Path(scratch).iterdir()) == []
    suite = ET.parse(report).getroot()
    cases = {(c.get("classname"), c.get("name")): c for c in suite.iter("testcase")}
    assert ("old", "green") not in cases
    assert all(cases[("hello-file", name)].find("failure") is None for name in ("correct", "wrong-text")), cases
    stopped = f"stopped by {signal.Signals(sig).name} before every one ran: 4 of 5 cases finished"
    assert cases[("verifier-tui", "(stopped)")].find("error").get("message").startswith(stopped)
    assert suite.get("errors") == "1"
    assert err.count(stopped) == 1, err  # said once


def test_a_terminal_that_closes_mid_test_leaves_a_junit_report_of_this_run(env, tmp_path):
    """``test --junit out.xml`` in an ssh session that drops: SIGHUP, and the stop's line to the closed
    terminal failed (EIO) before the report was written, so the last run's, all green, stayed for CI.
    The report is written first, whatever becomes of the line."""
    task = _stuck_case_task(tmp_path / "slow")
    report = an_old_green_report(tmp_path / "out.xml")
    scratch = env["TMPDIR"]
    code = hung_up(env, ["test", str(task), "--junit", str(report), "--python", PY], lambda: has_started(scratch))
    assert code is not None, "the tool outlived its terminal"
    names = [case.get("name") for case in ET.parse(report).getroot().iter("testcase")]
    assert names == ["(stopped)"], names
    assert list(Path(scratch).iterdir()) == []


def test_a_terminal_that_closes_under_a_progress_count_leaves_a_junit_report_of_this_run(env, tmp_path):
    """``test --junit out.xml`` of two tasks in an ssh session that drops once the first one's cases
    have ended: their progress count is on the screen, and its erase, to the closed terminal, failed
    (EIO) before the report was written. The erase ends nothing: the report holds the stop."""
    folder = tmp_path / "tasks"
    copy_example("hello-file", folder / "hello-file")
    _stuck_case_task(folder / "slow")
    report, scratch = an_old_green_report(tmp_path / "out.xml"), env["TMPDIR"]
    args = ["test", str(folder), "--junit", str(report), "-j", "1", "--python", PY]
    assert hung_up(env, args, lambda: has_started(scratch)) == 129
    names = [case.get("name") for case in ET.parse(report).getroot().iter("testcase")]
    assert names == [*sorted(os.listdir(folder / "hello-file" / "cases")), "(stopped)"], names


def test_a_terminal_that_closes_mid_test_json_to_a_file_leaves_the_whole_document(env, tmp_path):
    """``test --json >out.json`` in an ssh session that drops: the stop's line to the closed terminal
    failed (EIO) before the document was written, and out.json stayed empty. The document comes
    before the line, and a line that cannot be written ends nothing."""
    task = _stuck_case_task(tmp_path / "slow")
    out, scratch = tmp_path / "out.json", env["TMPDIR"]
    args = ["test", str(task), "--json", "--python", PY]
    assert hung_up(env, args, lambda: has_started(scratch), stdout=out) == 129
    assert json.loads(out.read_text())["stopped"].startswith("stopped by SIGHUP"), out.read_text()


def test_a_signal_mid_test_json_prints_the_cases_that_finished(env, tmp_path):
    """A CI job's timeout while ``test --json`` runs: stdout held nothing, where ``--junit`` keeps the
    cases that finished and ``test JOB --json`` its trials. The test document is printed with those
    cases and ``stopped``, the line said on stderr."""
    folder = tmp_path / "tasks"
    copy_example("hello-file", folder / "hello-file")
    _stuck_case_task(folder / "slow")
    data, err = json_of_a_stopped_test(env, [folder, "-j", "1", "--python", PY], tmp_path)
    assert [case["id"] for case in data["cases"]] == [
        f"hello-file::{name}" for name in sorted(os.listdir(folder / "hello-file" / "cases"))
    ]
    assert data["passed"] == 4 and data["failed"] == 0
    assert data["stopped"] == "stopped by SIGTERM before every one ran: 4 of 5 cases finished", data["stopped"]
    assert data["stopped"] in err


def _test_stopped_at(
    env, tmp_path, where: str, when: str, *more, sig: int = signal.SIGTERM
) -> tuple[subprocess.CompletedProcess, list[str]]:
    """``test hello-file --json --junit`` with ``sig`` landing at ``where`` (``when``, see
    :data:`SIGNALLED_AT <tests.helpers.commands.SIGNALLED_AT>`): the command's end, and the names of
    its report's cases."""
    task = copy_example("hello-file", tmp_path / "hello-file")
    report = an_old_green_report(tmp_path / "out.xml")
    tool = signalled_at(where, sig, when)
    done = run_tool(env, "test", task, "--json", "--junit", report, "--python", PY, *more, tool=tool)
    assert done.returncode == 128 + sig and "Traceback" not in done.stderr, (done.returncode, done.stderr)
    return done, [case.get("name") for case in ET.parse(report).getroot().iter("testcase")]


@pytest.mark.parametrize(
    ("where", "when"),
    [("verifier_tui.engine.suite:arun_groups", "after"), ("verifier_tui.commands.report:test_json", "before")],
    ids=["as-the-last-case-ends", "as-the-document-is-made"],
)
def test_a_sigterm_once_every_case_ended_leaves_the_whole_document_and_report(env, tmp_path, where, when):
    """A CI job's timeout landing as the last case ended: the document said ``stopped by SIGTERM before
    every one ran: 4 of 4 cases finished`` and the JUnit report had a ``(stopped)`` error, of a run that
    completed; landing a moment later, as the document was made, stdout was left empty. Both are this
    run's, whole, with no ``stopped``: the exit status alone says the signal came."""
    done, cases = _test_stopped_at(env, tmp_path, where, when)
    data = json.loads(done.stdout)
    assert data["stopped"] is None and data["passed"] == 4 == len(data["cases"]), data
    assert sorted(cases) == sorted(os.listdir(tmp_path / "hello-file" / "cases")), cases


def test_a_sigterm_as_the_last_case_is_counted_leaves_the_whole_document_and_report(env, tmp_path):
    """A CI job's timeout landing as the one case run was counted, the runs not yet over: the runs are
    cancelled with every case ended. The document and report are this run's, whole, with no ``stopped``
    and no ``(stopped)`` error; the exit status alone says the signal came."""
    where = "verifier_tui.commands.terminal:Progress.step"
    done, cases = _test_stopped_at(env, tmp_path, where, "after", "--case", "correct")
    data = json.loads(done.stdout)
    assert data["stopped"] is None and [case["id"] for case in data["cases"]] == ["hello-file::correct"], data
    assert cases == ["correct"], cases


def test_a_sigterm_as_the_tasks_are_read_prints_the_document_of_no_case_run(env, tmp_path):
    """A CI job's timeout landing as ``test --json`` read its tasks: stdout was empty, where a signal
    during the runs prints the document. It is printed all the same, no case finished, and ``stopped``
    says so, as the JUnit report's ``(stopped)`` error does."""
    done, cases = _test_stopped_at(env, tmp_path, "verifier_tui.engine.suite:collect", "after")
    data = json.loads(done.stdout)
    assert data["stopped"] == "stopped by SIGTERM before the cases to run were all found: none ran", data
    assert data["cases"] == [] and cases == ["(stopped)"], (data, cases)
    assert data["stopped"] in done.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "ctrl-c"])
@pytest.mark.parametrize(
    ("where", "when"),
    [("verifier_tui.cli:parse", "after"), ("verifier_tui.cli:classify", "before")],
    ids=["as-the-command-line-is-read", "as-the-paths-are-classified"],
)
def test_a_signal_before_the_tasks_are_read_says_none_ran(env, tmp_path, where, when, sig):
    """A CI job's timeout (or Ctrl+C) landing once ``test --json --junit`` had read its command line,
    before it read its tasks: it exited 143 (130) saying nothing, stdout empty, the last run's report
    left for CI to show as this one's (Ctrl+C right after the command line: a traceback). The signal is
    held from the command line on, as in the reading: no case ran, and the line, the document and the
    report say so."""
    done, cases = _test_stopped_at(env, tmp_path, where, when, sig=sig)
    data = json.loads(done.stdout)
    assert data["stopped"] == f"stopped by {sig.name} before the cases to run were all found: none ran", data
    assert data["cases"] == [] and cases == ["(stopped)"] and data["stopped"] in done.stderr, (data, cases)


def test_a_signal_while_the_tasks_are_read_ends_the_reading(env, tmp_path):
    """Ctrl+C as ``test`` read a folder of 2,000 tasks: the signal was held until every task had been
    read (9 s), and a second Ctrl+C or SIGTERM was ignored meanwhile. The reading ends at the signal
    (here after the first of two tasks named): no case ran, the document and the report say so."""
    first, second = copy_example("hello-file", tmp_path / "a"), copy_example("hello-file", tmp_path / "b")
    report = an_old_green_report(tmp_path / "out.xml")
    tool = signalled_at("verifier_tui.engine.suite:_groups_for", signal.SIGINT, "after")
    done = run_tool(env, "test", first, second, "--json", "--junit", report, "--python", PY, tool=tool)
    assert done.returncode == 130 and "Traceback" not in done.stderr, (done.returncode, done.stderr)
    data = json.loads(done.stdout)
    assert data["stopped"] == "stopped by SIGINT before the cases to run were all found: none ran", data
    assert data["cases"] == [] and data["stopped"] in done.stderr
    assert [case.get("name") for case in ET.parse(report).getroot().iter("testcase")] == ["(stopped)"]


def _a_slow_folder(tmp_path: Path) -> Path:
    """hello-file's four cases and, after them by name, a task whose one case is stuck once it started."""
    folder = tmp_path / "tasks"
    copy_example("hello-file", folder / "hello-file")
    _stuck_case_task(folder / "slow")
    return folder


def test_a_sigterm_after_ctrl_c_as_the_stop_is_said_leaves_the_document_whole(env, tmp_path):
    """Ctrl+C, then a CI runner's SIGTERM as ``test --json`` says why it stopped: the SIGTERM ended it
    there, stdout empty. It is recorded (the status stays Ctrl+C's) and the document is printed whole."""
    folder, out, scratch = _a_slow_folder(tmp_path), tmp_path / "out.json", env["TMPDIR"]
    tool = signalled_at("verifier_tui.commands.report:stopped_words", signal.SIGTERM, "before")
    args = ["test", folder, "--json", "-j", "1", "--python", PY]
    code, err = interrupted(env, args, lambda: has_started(scratch), signal.SIGINT, "never started", out, tool)
    assert code == 130 and "Traceback" not in err, (code, err)
    data = json.loads(out.read_text())
    assert data["stopped"] == "stopped by SIGINT before every one ran: 4 of 5 cases finished", data["stopped"]
    assert len(data["cases"]) == 4


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_as_python_is_checked_ends_test_at_once_with_the_document_of_no_case_run(env, tmp_path, sig):
    """Ctrl+C (or a CI job's timeout) while ``test --json`` checks a ``--python`` that never answers: the
    signal was held, the check waited out to its end, and the command then exited with stdout empty and
    ``--python ... did not answer``. The check ends at the signal, and the document says no case ran."""
    task = copy_example("hello-file", tmp_path / "hello-file")
    python, asked = a_python_that_never_answers(tmp_path)
    out = tmp_path / "out.json"
    args = ["test", task, "--json", "--python", python]
    code, err = interrupted(env, args, asked.exists, sig, "never asked", out)
    assert code == 128 + sig and "Traceback" not in err and "did not answer" not in err, (code, err)
    data = json.loads(out.read_text())
    assert data["stopped"] == f"stopped by {sig.name} before every one ran: 0 of 4 cases finished", data
    assert data["cases"] == [], data


def test_a_sigterm_while_the_document_waits_on_a_full_pipe_leaves_it_whole(env, tmp_path):
    """``test --json | slow-reader``: a CI job's timeout while the document (20 cases, about 140 KB)
    waited for the reader to take more. The write came back short at the signal and the rest was
    dropped: the reader got the first 64 KB, no JSON. Every byte is written, then the status is 143."""
    task = copy_example("hello-file", tmp_path / "many")
    for case in os.listdir(task / "cases"):
        for copy in range(4):
            shutil.copytree(task / "cases" / case, task / "cases" / f"{case}-{copy}")
    with (tmp_path / "err").open("w") as err:
        proc = subprocess.Popen(
            [*TOOL, "test", str(task), "--json", "--python", PY], env=env, stdout=subprocess.PIPE, stderr=err
        )
    assert proc.stdout is not None
    try:
        wait_waiting_in(proc, "pipe_write")  # the document fills the pipe: the tool waits on it
        proc.send_signal(signal.SIGTERM)
        chunks = []
        while chunk := proc.stdout.read(4096):  # drained a little at a time
            chunks.append(chunk)
        code = proc.wait(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    data = json.loads(b"".join(chunks))
    assert code == 143 and len(data["cases"]) == 20 and data["stopped"] is None, (code, data["stopped"])


def test_a_stopped_test_json_whose_stdout_is_a_full_disk_still_writes_its_junit_report(env, tmp_path):
    """Ctrl+C on ``test --json --junit out.xml >/dev/full``: the document could not be written, and the
    command ended there with status 2, the last run's report (all green) left for CI. The report is
    written, the full disk said in one line, and the status is Ctrl+C's."""
    folder, report, scratch = _a_slow_folder(tmp_path), an_old_green_report(tmp_path / "out.xml"), env["TMPDIR"]
    args = ["test", folder, "--json", "--junit", report, "-j", "1", "--python", PY]
    code, err = interrupted(env, args, lambda: has_started(scratch), signal.SIGINT, "never started", Path("/dev/full"))
    assert code == 130 and "Traceback" not in err, (code, err)
    assert err.count("No space left on device") == 1 and "standard output" in err, err
    names = [case.get("name") for case in ET.parse(report).getroot().iter("testcase")]
    assert len(names) == 5 and names[-1] == "(stopped)", names


@pytest.mark.parametrize("output", [["--json"], []], ids=["document", "table"])
def test_a_test_whose_stdout_is_a_full_disk_still_writes_its_junit_report(env, tmp_path, output):
    """``test --json --junit out.xml >/dev/full`` (or its table), no signal: the command ended with
    status 2 at the first line it could not print, before the report was written, the last run's (all
    green) left for CI, where a stopped run writes its report first. It is written first here too:
    every case in it, the full disk said in one line, status 2."""
    task = copy_example("hello-file", tmp_path / "hello-file")
    names = junit_of_a_test_to_a_full_disk(env, tmp_path, task, *output)
    assert sorted(names) == ["correct", "missing-file", "wrong-case", "wrong-text"], names


def _tasks_of_no_case(tmp_path: Path) -> Path:
    make_task(tmp_path / "tasks" / "alpha")
    return tmp_path / "tasks"


def test_a_refused_test_whose_stderr_is_a_full_disk_still_writes_its_junit_report(env, tmp_path):
    """``test --junit out.xml --python /nonexistent 2>/dev/full``: the refusal's line failed before the
    report was written, and the last run's report, all green, stayed for CI. The report comes first."""
    report = an_old_green_report(tmp_path / "out.xml")
    task = EXAMPLES / "hello-file"
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [*TOOL, "test", str(task), "--junit", str(report), "--python", "/nonexistent"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=full,
            timeout=HANG_GUARD_S,
        )
    assert done.returncode == 2
    names = [case.get("name") for case in ET.parse(report).getroot().iter("testcase")]
    assert names == ["(command line)"], names


def _a_task_harbor_refuses(tmp_path: Path) -> Path:
    task = copy_example("hello-file", tmp_path / "hello-file")
    toml = task / "task.toml"
    toml.write_text(toml.read_text().replace('version = "1.0"', "version = 1"))
    return task


@pytest.mark.parametrize(
    ("make", "cases"),
    [
        (_tasks_of_no_case, ["(command line)", "(task)"]),
        (_a_task_harbor_refuses, ["correct", "missing-file", "wrong-case", "wrong-text"]),
    ],
    ids=["no-case", "refused-task"],
)
def test_a_test_of_nothing_to_run_whose_stdout_is_a_full_disk_still_writes_its_junit_report(env, tmp_path, make, cases):
    """The same when nothing could be tested (a folder of tasks, none with a case; a task Harbor
    refuses, its cases not run): the document came first, and the report of why was never written."""
    names = junit_of_a_test_to_a_full_disk(env, tmp_path, make(tmp_path), "--json")
    assert sorted(names) == cases, names


def test_a_task_harbor_refuses_says_a_junit_file_the_disk_cannot_take(env, tmp_path):
    """Nothing run, and a report the disk refuses: both said, exit 2 (the full disk went unsaid, as
    though the report of the refusal were there for CI)."""
    done = run_tool(env, "test", _a_task_harbor_refuses(tmp_path), "--junit", "/dev/full", "--python", PY)
    no_traceback(done)
    assert done.returncode == 2 and "Harbor would refuse to run this task" in done.stderr, done.stderr
    assert done.stderr.strip().endswith("--junit /dev/full: cannot write it: No space left on device"), done.stderr


# The tool, a second Ctrl+C landing as it writes the stopped run's report (a
# user pressing it twice, 20 ms apart: the window is hit here every time).
SECOND_CTRL_C_AS_THE_REPORT_IS_WRITTEN = """
import os, signal, sys
from verifier_tui.commands import report
written = report.write_junit

def write_junit(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGINT)
    return written(*args, **kwargs)

report.write_junit = write_junit
from verifier_tui.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_second_ctrl_c_as_the_stopped_report_is_written_still_writes_it(env, tmp_path):
    """Ctrl+C pressed twice, the second as ``test --junit out.xml`` writes the stopped run's report: the
    stopped line was printed but the report was not written, the last run's (all green) left for CI to
    show as this one's. The second Ctrl+C is ignored until the report is written, as SIGTERM's is."""
    slow = _stuck_case_task(tmp_path / "slow")
    report = an_old_green_report(tmp_path / "out.xml")
    scratch = env["TMPDIR"]
    proc = subprocess.Popen(
        [PY, "-c", SECOND_CTRL_C_AS_THE_REPORT_IS_WRITTEN, "test", str(slow), "--junit", str(report), "--python", PY],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    code, err = signal_when(proc, lambda: has_started(scratch), signal.SIGINT, "the slow verifier never started")
    assert code == 128 + signal.SIGINT and "Traceback" not in err, (code, err)
    cases = {(c.get("classname"), c.get("name")) for c in ET.parse(report).getroot().iter("testcase")}
    assert cases == {("verifier-tui", "(stopped)")}, cases
    assert list(Path(scratch).iterdir()) == []


# The tool, its first scratch folder's removal signalling it with SIGTERM: a
# signal that lands in the clean-up at the end of a command, as a CI job's
# timeout can (that window is a few milliseconds wide; here it is hit every time).
SIGNALLED_WHILE_CLEANING_UP = """
import os, signal, sys
from verifier_tui.engine.sandbox import stage
from verifier_tui.engine.to_the_end import uninterrupted
removal = stage.Scratch.close.__wrapped__

def close(self):
    os.kill(os.getpid(), signal.SIGTERM)
    removal(self)

stage.Scratch.close = uninterrupted(close)
from verifier_tui.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_signal_during_the_clean_up_lets_it_remove_every_scratch_folder(env, tmp_path):
    folder = tmp_path / "tasks"
    for name in ("hello-file", "count-errors", "sum-column"):
        copy_example(name, folder / name)
    done = subprocess.run(
        [PY, "-c", SIGNALLED_WHILE_CLEANING_UP, "test", str(folder), "--python", PY],
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )
    assert done.returncode == 128 + signal.SIGTERM, done.stderr
    assert "Traceback" not in done.stderr
    assert list(Path(env["TMPDIR"]).iterdir()) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes through /proc")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=["SIGTERM", "SIGINT", "SIGHUP"])
def test_a_signal_ends_the_run_watch_started_ahead(env, example, sig):
    """watch keeps the next run started and waiting for a save: it goes too."""
    proc, reader = start_watch(env, "--json", example("hello-file"), "--python", PY)
    scratch = env["TMPDIR"]
    first: list[dict] = []

    def ready() -> bool:
        if not first:
            first.append(json.loads(reader.next_run(prefix="{")))
        return bool(processes_with(scratch))  # the run after it, started, waiting

    code, err = signal_when(proc, ready, sig, "no run was started ahead")
    assert first[0]["rewards"] == {"reward": 1.0}
    assert code in (0, 128 + sig) and "Traceback" not in err, (code, err)
    assert wait_none_with(scratch) == [], "the run started ahead outlived the command"
    assert list(Path(scratch).iterdir()) == []


# ---------------------------------------------------------------------------
# Bad input: one clear line, exit 2, never a traceback


BAD_INPUT = [
    (["run", "{tmp}/nowhere"], "does not exist"),
    (["run", "{examples}/../README.md"], "not a Python file"),
    (["run", "{task}", "--case", "nosuch"], "no such case"),
    (["run", "{task}", "--workspace", "{tmp}/nosuch"], "is not a folder"),
    (["run", "{task}", "--workspace", "/"], "a system folder, not an agent's workspace"),
    (["test", "{task}", "--workspace", "/usr"], "a system folder, not an agent's workspace"),
    (["run", "{task}", "--response", "{tmp}/missing.json"], "is not a file"),
    (["run", "{task}", "--task-data", "{tmp}/missing.json"], "is not a file"),
    (["run", "{task}", "--verifier", "nosuch"], "no such verifier"),
    (["explain", "{tmp}/nowhere"], "does not exist"),
    (["explain", "{task}", "--case", "nosuch"], "no such case"),
    (["explain", "{task}", "--python", "/nonexistent"], "/nonexistent"),
    (["test", "{tmp}/nowhere"], "does not exist"),
    (["test", "{task}", "--verifier", "nosuch"], "no such verifier"),
    (["run", "{task}", "--verifier", "{task}/task.toml"], "task.toml: not a verifier (a .py file defining verify)"),
    (["watch", "{tmp}/nowhere"], "does not exist"),
    (["watch", "{task}", "--case", "nosuch"], "no such case"),
    (["{tmp}/nowhere"], "does not exist"),
    (["run", "{tmp}/no-verifier"], "no verifier found"),
    (["explain", "{tmp}/no-verifier"], "no verifier found"),
    (["watch", "{tmp}/no-verifier"], "no verifier found"),
    (["run", "{tmp}/trial"], "Harbor trial"),
    # a link to nothing was said to "not exist", as if no name were there (new and vendor said what it is)
    (["run", "{tmp}/gone"], "gone is a link to nowhere, which does not exist"),
    (["test", "{tmp}/gone"], "gone is a link to nowhere, which does not exist"),
    (["audit", "{tmp}/gone"], "gone is a link to nowhere, which does not exist"),
    # a link to a link that leads nowhere was said to point at what "does not exist", though it is there
    (["run", "{tmp}/loop-a"], "loop-a is a link to loop-b, which leads nowhere: a loop of links"),
    (["test", "{tmp}/chain"], "chain is a link to gone, which leads nowhere: a chain of links ending in nothing"),
]


@pytest.mark.parametrize("args, words", BAD_INPUT, ids=[" ".join(a) for a, _ in BAD_INPUT])
def test_bad_input_gives_one_clear_line(env, example, tmp_path, args, words):
    task_dir = example("hello-file")
    (tmp_path / "no-verifier" / "tests").mkdir(parents=True)
    (tmp_path / "no-verifier" / "task.toml").write_text("")
    (tmp_path / "trial").mkdir()
    (tmp_path / "trial" / "config.json").write_text("{}")
    (tmp_path / "trial" / "result.json").write_text("{}")
    (tmp_path / "gone").symlink_to("nowhere")
    (tmp_path / "chain").symlink_to("gone")
    (tmp_path / "loop-a").symlink_to("loop-b")
    (tmp_path / "loop-b").symlink_to("loop-a")
    argv = [a.format(tmp=tmp_path, task=task_dir, examples=EXAMPLES) for a in args]
    done = run_tool(env, *argv)
    assert done.returncode == 2, (done.stdout, done.stderr)
    no_traceback(done)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("verifier-tui: ")
    assert words in lines[0]
    assert list(Path(env["TMPDIR"]).iterdir()) == []


@pytest.mark.parametrize("command", ["run", "explain"])
def test_a_case_not_found_among_thousands_names_some_and_counts_the_rest(env, example, command):
    """``run TASK --case typo`` on a task of 3,000 cases listed every one on
    its line (tens of kilobytes), where ``test --case typo`` names 20 and counts the rest."""
    task = example("hello-file")
    for i in range(3000):
        (task / "cases" / f"c{i:04d}").mkdir()
    done = run_tool(env, command, task, "--case", "typo")
    assert done.returncode == 2 and done.stdout == ""
    no_traceback(done)
    [line] = done.stderr.splitlines()
    assert line.startswith("verifier-tui: --case typo: no such case (cases: c0000, c0001, ")
    assert line.endswith(" and 2984 more)"), line
    assert "c2999" not in line


@pytest.mark.parametrize(
    "args, words",
    [
        (["run", "{task}", "--timeout", "-1"], "--timeout"),
        (["run", "{task}", "--timeout", "0"], "--timeout"),
        (["run", "{task}", "--timeout", "soon"], "--timeout"),
        (["run"], "PATH"),
        (["run", "{task}", "--response", "x.json", "--no-response"], "not allowed with"),
        (["run", "{task}", "--frobnicate"], "unrecognized arguments"),
        # A line break the user's shell passed reads \n, as in every other line the tool writes, not a space.
        (["run", "{task}", "--frob\nnicate"], "unrecognized arguments: --frob\\nnicate"),
        (["test", "{task}", "--preload", "numpy,not a module"], "give module names, comma-separated"),
        (["run", "{task}", "--preload", "numpy"], "--preload is not an option of run"),  # nothing is started ahead
        # test takes --case again and again; these run one case, so a second one is no silent last-wins.
        (["run", "{task}", "--case", "correct", "--case", "wrong-text"], "--case: given twice (correct, wrong-text)"),
        (["explain", "{task}", "--case=correct", "--case", "correct"], "--case: given twice (correct, correct)"),
        (["watch", "{task}", "--case", "correct", "--case", "wrong-text"], "run one case; test takes several"),
        (["run", "{task}", "--trial", "a", "--trial", "b"], "--trial: given twice (a, b)"),
    ],
)
def test_bad_arguments_are_argparse_errors(env, example, args, words):
    task_dir = example("hello-file")
    done = run_tool(env, *[a.format(task=task_dir) for a in args])
    assert done.returncode == 2
    no_traceback(done)
    assert done.stderr.count("\n") == 1, done.stderr  # one line, as every bad input (no usage block)
    last = done.stderr.strip()
    assert last.startswith("verifier-tui") and ": error: " in last
    assert words in last
    assert done.stdout == ""


def test_python_that_cannot_start_is_bad_input_not_a_crash(env, example):
    done = run_tool(env, "run", "--json", example("hello-file"), "--python", "/nonexistent/python3")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("verifier-tui: --python /nonexistent/python3: ")
    no_traceback(done)


# ---------------------------------------------------------------------------
# docs/json-output.md describes exactly what the commands print


def test_the_json_documentation_lists_every_run_field(env, example):
    done = run_tool(env, "run", "--json", example("hello-file"), "--python", PY)
    data = json.loads(done.stdout)
    fields = documented_fields("## The run document", "### Parameters")
    assert fields == set(data)
    assert documented_fields("### Parameters", "## The test document") == set(data["arguments"][0])


def test_the_json_documentation_gives_the_exit_status_of_every_command_with_json():
    import argparse

    from tests.helpers.commands import JSON_DOC
    from verifier_tui.cli import build_parser

    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    with_json = [name for name, sub in commands.items() if any("--json" in a.option_strings for a in sub._actions)]
    table = [line for line in JSON_DOC.read_text(encoding="utf-8").splitlines() if line.startswith("| `verifier-tui ")]
    assert [name for name in with_json if not any(row.startswith(f"| `verifier-tui {name} ") for row in table)] == []


def test_the_json_documentation_lists_every_test_and_explain_field(env, example):
    task_dir = example("hello-file")
    test_data = json.loads(run_tool(env, "test", "--json", task_dir, "--python", PY).stdout)
    assert documented_fields("## The test document", "## The explain document") == set(test_data)
    explain = json.loads(run_tool(env, "explain", "--json", task_dir, "--python", PY).stdout)
    assert documented_fields("## The explain document", "### When explain fails") == set(explain)


def test_a_verifier_needing_nemo_gym_gets_a_hint_and_runs_with_a_named_copy(env, tmp_path):
    task_dir = make_task(
        tmp_path / "needs-gym",
        ("from nemo_gym.verifiers.helpers import VALUE\ndef verify(workspace):\n    return VALUE\n"),
    )
    missing = run_tool(env, "run", task_dir, "--python", PY)
    assert missing.returncode == 1
    assert "No module named 'nemo_gym'" in missing.stdout
    assert "--nemo-gym DIR" in missing.stdout
    copy = tmp_path / "gym" / "nemo_gym" / "verifiers"
    copy.mkdir(parents=True)
    (copy.parent / "__init__.py").write_text("")
    (copy / "__init__.py").write_text("")
    (copy / "helpers.py").write_text("VALUE = 0.75\n")
    vendored = run_tool(env, "run", "--json", task_dir, "--python", PY, "--nemo-gym", copy)
    data = json.loads(vendored.stdout)
    assert data["rewards"] == {"reward": 0.75}
    assert data["modules"]["nemo_gym.verifiers"]["resolved"].startswith(str(copy))


def test_json_paths_are_paths_and_roles_are_beside_them(env, example, tmp_path):
    """``sys_path``'s first entry read ``.../tests/.ng (staged runner)`` and a
    vendored nemo_gym ``.../verifiers (vendored)/__init__.py``: paths that
    resolve nowhere. Each path is now a path; what it is for is its ``role``."""
    task_dir = example("hello-file")
    copy = write(tmp_path / "gym" / "nemo_gym" / "verifiers" / "__init__.py", "")
    write(tmp_path / "gym" / "nemo_gym" / "__init__.py", "")
    done = run_tool(env, "run", task_dir, "--nemo-gym", copy.parent, "--json")
    data = json.loads(done.stdout)
    assert data["sys_path"][0]["path"] == str(task_dir / "tests" / ".ng")
    assert data["sys_path"][0]["role"] == "vendored helpers"
    verifiers = data["modules"]["nemo_gym.verifiers"]
    assert verifiers["resolved"] == str(copy)  # the copy that was vendored, a file that exists
    assert verifiers["role"] == "vendored helpers"
    for row in data["sys_path"]:
        assert "(" not in row["path"], row


def test_task_data_beside_task_toml_is_said_unseen_by_a_harbor_sandbox(env, example):
    """sum-column's verify reads task_data["column"] from task_data.json beside task.toml: its cases
    scored 1.0, matched, while in a Harbor sandbox (tests/ uploaded alone, test.sh passing only
    /tests/task_data.json) verify gets {} and raises KeyError. Every face says so: run, test (text
    and each case's --json), and what a sandbox gets once tests/task_data.json exists."""
    task = example("sum-column")
    unseen = "task_data.json beside task.toml is verifier-tui's own"

    def notes(*args: str) -> list[str]:
        done = run_tool(env, "run", task, "--python", PY, "--json", *args)
        return [n for n in json.loads(done.stdout)["notices"] if unseen in n]

    said = notes("--case", "correct")
    assert said and "in a sandbox verify gets {} as task_data" in said[0], said
    text = run_tool(env, "test", task, "--python", PY).stdout
    assert f"note: {unseen}" in text, text
    (tested,) = json.loads(run_tool(env, "test", task, "--python", PY, "--json").stdout)["tasks"]
    assert any(unseen in n for n in tested["notices"]), tested
    write(task / "tests" / "task_data.json", '{"column": "quantity"}')
    said = notes("--case", "correct")
    assert said and "verify gets the data of tests/task_data.json as task_data" in said[0], said
    (task / "task_data.json").unlink()
    assert notes("--case", "correct") == []  # the sandbox's own file: nothing to say


def test_both_modes_lines_hold_a_case_named_with_a_line_break_and_a_long_reward_whole(env, example):
    """run --both-modes on a case folder named with a line break: the server mode's skip, which names
    the case, broke the line in two (the summary no longer repeats it); and the summary of a reward
    with a long key was cut mid-key."""
    task = example("hello-file")
    (task / "cases" / "correct").rename(task / "cases" / "evil\nline")
    lines = run_tool(env, "run", task, "--python", PY, "--case", "evil\nline", "--both-modes").stdout.splitlines()
    skip = [line for line in lines if line.startswith("- environment-server mode")]
    assert len(skip) == 1 and "the case evil\\nline has none (cases/evil\\nline/response.json" in skip[0], lines
    key = "score_" + "x" * 1200
    write(
        task / "tests" / "verifier.py",
        f"def verify(workspace, response=None):\n    return {{'{key}': 0.5 if response else 1.0}}\n",
    )
    write(task / "cases" / "evil\nline" / "response.txt", "an answer")
    text = run_tool(env, "run", task, "--python", PY, "--case", "evil\nline", "--both-modes").stdout
    assert text.count(key) >= 2 and "left out" not in text.splitlines()[-1], text[-600:]


def test_task_data_beside_task_toml_of_a_parameterized_task_is_no_note(env, example):
    """greeting-rows with a task_data.json beside task.toml: its cases take their rows, which NeMo
    Gym renders into each task's own tests, yet each run said a sandbox's verify gets {}."""
    task = example("greeting-rows")
    write(task / "task_data.json", '{"name": "x"}')
    done = run_tool(env, "run", task, "--python", PY, "--json", "--case", "ada")
    assert not [n for n in json.loads(done.stdout)["notices"] if "task_data.json beside task.toml" in n], done.stdout
