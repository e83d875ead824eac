"""The promises of the headless commands, as a user meets them: every
failure reported truthfully with the right exit status, bad input in one
line, the verifier's output shown harmlessly, and the runner given only the
environment Harbor's sandbox would give it.

Each test runs the real ``verifier-tui`` console script on a real task folder,
and fails on a tool that breaks the promise it checks.
"""

from __future__ import annotations

import fcntl
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers.commands import (
    TOOL,
    LineReader,
    no_traceback,
    run_from_a_removed_folder,
    run_tool,
    start_watch,
    stop,
)
from tests.helpers.harbor import HARBOR_REAL
from tests.helpers.tasks import HANG_GUARD_S, PY, Gate, make_task, no_python, other_python, write

PY27 = other_python("2.7")
# A pipe's buffer, shrunk from Linux's 64 KB to one page where the system
# allows it: output past it needs 16 times fewer cases.
PIPE_BYTES = 4096 if hasattr(fcntl, "F_SETPIPE_SZ") else 65536


def strict_json(text: str):
    """``text`` parsed as JSON proper: ``NaN`` and ``Infinity`` (which Python's
    json module accepts) are refused, as a strict parser refuses them."""

    def refuse(name: str):
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


def with_case(task_dir: Path, name: str = "only", expected: str | None = '{"exit_code": 0}') -> Path:
    (task_dir / "cases" / name / "workspace").mkdir(parents=True, exist_ok=True)
    if expected is not None:
        (task_dir / "cases" / name / "expected.json").write_text(expected)
    return task_dir


# ---------------------------------------------------------------------------
# Exit 0 with no reward file


EXITS_ITSELF = "import os\n\ndef verify(workspace):\n    os._exit(0)\n"


def test_exit_0_without_a_reward_file_is_its_own_outcome(env, tmp_path):
    task_dir = with_case(make_task(tmp_path / "t", EXITS_ITSELF))
    done = run_tool(env, "run", task_dir, "--python", PY)
    assert done.returncode == 1, done.stdout
    assert "reward written" not in done.stdout
    assert "exit 0 · no reward: Harbor would raise RewardFileNotFoundError" in done.stdout
    data = strict_json(run_tool(env, "run", "--json", task_dir, "--python", PY).stdout)
    assert data["outcome"] == "no_reward" and data["exit_code"] == 0
    assert data["verdict_error"] == "RewardFileNotFoundError" and data["reward_files"] == []
    # A case expecting exit 0 expects a reward: it fails, and test says so.
    tested = run_tool(env, "test", task_dir, "--python", PY)
    assert tested.returncode == 1
    assert "0 passed, 1 failed" in tested.stdout


# ---------------------------------------------------------------------------
# A reader that goes away keeps the exit status


LOUD_AND_RAISING = (
    "import sys\n\n"
    "def verify(workspace):\n"
    "    print('x\\n' * 200000)\n"
    "    sys.stderr.write('e' * 3000 + '\\n')\n"
    "    raise ValueError('boom')\n"
)


def first_line_then_close(args: list[str], env: dict, then=None) -> tuple[int, str, str]:
    """``verifier-tui ARGS | head -1``: read one line, close the pipe (then
    call ``then``), and return the tool's exit status, that line and its stderr.
    The pipe holds PIPE_BYTES: past them, the tool writes to a reader that is gone."""
    read_end, write_end = os.pipe()
    if hasattr(fcntl, "F_SETPIPE_SZ"):
        fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    try:
        proc = subprocess.Popen(
            TOOL + args, env=env, stdout=write_end, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL
        )
    finally:
        os.close(write_end)
    reader = os.fdopen(read_end, "rb", buffering=0)  # takes the first line alone from the pipe
    try:
        first = reader.readline().decode()
        reader.close()
        if then is not None:
            then()
        try:
            code = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail("the command went on after its reader went away")
        return code, first, proc.stderr.read().decode()
    finally:
        reader.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize(
    "args, status",
    [
        (["run"], 1),
        (["run", "--json"], 1),
        (["test"], 1),
        (["test", "--json"], 1),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else str(value),
)
def test_a_closed_pipe_does_not_change_the_exit_status(env, tmp_path, args, status):
    # Output well past the pipe's buffer, so the reader is gone while the
    # tool still writes: run prints 400 KB of stdout; test about 2 KB of
    # stderr per case in its table, 9 KB in --json (its cases print no stdout:
    # capturing 400 KB for each is all they would add).
    loud = LOUD_AND_RAISING if args[0] == "run" else LOUD_AND_RAISING.replace("    print('x\\n' * 200000)\n", "")
    assert loud.count("print") == (args[0] == "run")
    task_dir = make_task(tmp_path / "t", loud)
    for index in range(2 + 3 * PIPE_BYTES // (9000 if "--json" in args else 2000)):
        with_case(task_dir, f"c{index:02d}")
    code, first, err = first_line_then_close(
        [*args, str(task_dir), "--python", PY, "--jobs", "2"]
        if args[0] == "test"
        else [*args, str(task_dir), "--python", PY],
        env,
    )
    assert first  # it did write
    assert code == status, err
    assert "Traceback" not in err and "Exception ignored" not in err


def test_watch_stops_when_its_reader_goes_away(env, tmp_path):
    task_dir = make_task(tmp_path / "t", LOUD_AND_RAISING)
    verifier = task_dir / "tests" / "verifier.py"

    def change_the_verifier() -> None:
        time.sleep(0.5)
        verifier.write_text(verifier.read_text() + "\n# changed\n")

    code, first, err = first_line_then_close(
        ["watch", "--json", str(task_dir), "--python", PY], env, then=change_the_verifier
    )
    assert first.startswith("{")
    assert code == 0, err
    assert "Traceback" not in err


# ---------------------------------------------------------------------------
# A terminal that cannot take every character


UNICODE_OUTPUT = (
    "def verify(workspace):\n    print('h\\u00e9llo \\u2713 \\u2500')\n    raise ValueError('\\u00e9chec \\u2717')\n"
)


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
@pytest.mark.parametrize(
    "args", [["run"], ["run", "--json"], ["explain"], ["explain", "--json"], ["test"], ["test", "--json"]], ids=" ".join
)
def test_a_narrow_encoding_gets_escapes_not_a_traceback(env, tmp_path, encoding, args):
    task_dir = with_case(make_task(tmp_path / "tâche ✓", UNICODE_OUTPUT), expected='{"exit_code": 1}')
    env = dict(env, PYTHONIOENCODING=encoding)
    done = subprocess.run(
        TOOL + [*args, str(task_dir), "--python", PY],
        env=env,
        capture_output=True,
        timeout=HANG_GUARD_S,
        stdin=subprocess.DEVNULL,
    )
    stdout = done.stdout.decode(encoding)  # everything it wrote is in the terminal's encoding
    stderr = done.stderr.decode(encoding)
    assert "Traceback" not in stderr, stderr
    expected = {"run": 1, "explain": 0, "test": 0}[args[0]]
    assert done.returncode == expected, stderr
    if "--json" in args:
        data = strict_json(stdout)
        if args[0] == "run":
            assert "h\u00e9llo \u2713" in data["stdout"]  # the characters survive, escaped as JSON does
            assert data["task"] == str(task_dir)
    elif args[0] == "run":
        assert "\\u2713" in stdout  # what the terminal cannot show is written as an escape


# ---------------------------------------------------------------------------
# Timeouts: finite, more than 0, the same in every command


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-5"])
def test_a_task_timeout_that_is_not_a_finite_positive_number_is_harbors_everywhere(env, tmp_path, value):
    """Harbor takes any float and hands it to asyncio.wait_for: inf never gives
    up, anything else here gives up before the verifier runs. The local run
    uses the default (600 s) to show what the verifier does; the verdict is
    Harbor's."""
    task_dir = with_case(make_task(tmp_path / "t", toml=f'version = "1.0"\n[verifier]\ntimeout_sec = {value}\n'))
    ran = strict_json(run_tool(env, "run", "--json", task_dir, "--python", PY).stdout)
    tested = strict_json(run_tool(env, "test", "--json", task_dir, "--python", PY).stdout)
    at_once = value != "inf"
    for document in (ran, tested["cases"][0]):
        assert document["timeout_s"] == 600.0
        assert document["exit_code"] == 0 and document["reward_files"]  # the verifier ran, and wrote its reward
        assert any("timeout_sec" in n and "the run uses" in n for n in document["notices"]), document["notices"]
        assert document["outcome"] == "reward_written"  # what this run did; the verdict is Harbor's
        if at_once:
            assert document["verdict_error"] == "VerifierTimeoutError"
            assert document["verdict_message"] == f"Verifier execution timed out after {float(value)} seconds"
        else:
            assert document["verdict_error"] is None
    assert tested["passed"] == (0 if at_once else 1)
    readable = run_tool(env, "run", task_dir, "--python", PY)
    assert readable.returncode == (124 if at_once else 0) and "timeout_sec" in readable.stdout
    said = "Harbor would stop every case's verifier before it runs: task.toml's timeout_sec is"
    assert (said in run_tool(env, "test", task_dir, "--python", PY).stdout) == at_once
    # --timeout overrides task.toml's, as a job's override_timeout_sec does: the verifier's reward counts
    overridden = strict_json(run_tool(env, "run", "--json", task_dir, "--timeout", "30", "--python", PY).stdout)
    assert (overridden["outcome"], overridden["verdict_error"]) == ("reward_written", None)


# Each refused value with two commands, each command with two to four: one
# check of the option, shared by every command, refuses them all (all 24
# pairs would start the tool 24 times to run the same lines).
TIMEOUT_COMMANDS = ["run", "explain", "test", "watch"]
REFUSED_TIMEOUTS = [
    (value, TIMEOUT_COMMANDS[(index + shift) % len(TIMEOUT_COMMANDS)])
    for index, value in enumerate(["nan", "inf", "-inf", "0", "-1", "soon"])
    for shift in (0, 1)
]


@pytest.mark.parametrize("value, command", REFUSED_TIMEOUTS)
def test_a_timeout_option_that_is_not_a_finite_positive_number_is_refused(env, tmp_path, value, command):
    task_dir = with_case(make_task(tmp_path / "t"))
    done = run_tool(env, command, task_dir, "--timeout", value, "--python", PY)
    assert done.returncode == 2 and done.stdout == ""
    no_traceback(done)
    assert "--timeout" in done.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize("command", TIMEOUT_COMMANDS)
@pytest.mark.parametrize("folder", ["etc", "missing"])
def test_a_nemo_gym_option_with_no_verifiers_in_it_is_refused_before_anything_runs(env, tmp_path, command, folder):
    """Not a run that cannot start (exit 127, the code of a too-old Python) or
    a table of failed cases (exit 1): bad input, one line, exit 2."""
    task_dir = with_case(make_task(tmp_path / "t"))
    given = tmp_path / folder
    if folder == "etc":
        (given / "verifiers").mkdir(parents=True)  # no __init__.py: not a package
    done = run_tool(env, command, task_dir, "--nemo-gym", str(given), "--python", PY)
    assert done.returncode == 2 and done.stdout == ""
    no_traceback(done)
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .endswith(
            f"argument --nemo-gym: {given}: "
            + (
                "neither a nemo_gym/verifiers folder, the nemo_gym package, nor a folder holding nemo_gym/ "
                "(looked for verifiers/__init__.py in each)"
                if folder == "etc"
                else "not a folder"
            )
        )
    )


@pytest.mark.parametrize("value, words", [("0", "give 1 or more"), ("-1", "give 1 or more"), ("two", "whole number")])
@pytest.mark.parametrize("command", ["test", "audit"])
def test_a_jobs_option_below_one_is_refused(env, tmp_path, command, value, words):
    task_dir = with_case(make_task(tmp_path / "t"))
    done = run_tool(env, command, task_dir, "-j", value, "--python", PY)
    assert done.returncode == 2 and done.stdout == ""
    no_traceback(done)
    assert "argument --jobs/-j" in done.stderr and words in done.stderr


@pytest.mark.parametrize("words", [("run", "{task}"), ("run", "../t"), ("explain", "{task}"), ("{task}",)])
def test_a_start_from_a_removed_folder_says_so_and_not_that_the_task_is_missing(env, tmp_path, words):
    # A path given whole ran, and one relative to the removed folder was "../t does not exist"; the TUI too is
    # refused before it opens, rather than showing every path from / .
    task_dir = make_task(tmp_path / "t")
    gone = tmp_path / "gone"
    done = run_from_a_removed_folder(env, gone, *(word.format(task=task_dir) for word in words), "--python", PY)
    no_traceback(done)
    assert done.returncode == 2
    assert (
        done.stderr
        == "verifier-tui: the folder verifier-tui was started in was removed: start it from one that exists\n"
    )


def test_a_huge_finite_timeout_is_honoured(env, tmp_path):
    task_dir = make_task(tmp_path / "t")
    done = run_tool(env, "run", "--json", task_dir, "--timeout", "1e308", "--python", PY)
    no_traceback(done)
    assert done.returncode == 0
    assert strict_json(done.stdout)["timeout_s"] == 1e308


def test_every_json_output_is_strict_json(env, tmp_path):
    """NaN and Infinity are not JSON: no --json output may hold them, whatever
    the task, its cases and its reward files hold."""
    task_dir = make_task(
        tmp_path / "t",
        "def verify(workspace):\n    return {'reward': 1.0, 'big': 1e308}\n",
        toml='version = "1.0"\n[verifier]\ntimeout_sec = inf\n',  # (nan: in the test above)
    )
    with_case(task_dir, "nan-expected", '{"rewards": {"reward": NaN}}')
    with_case(task_dir, "inf-expected", '{"rewards": {"reward": Infinity}}')
    with_case(task_dir, "fine", '{"rewards": {"reward": 1.0, "big": 1e308}}')
    outputs = [
        run_tool(env, "run", "--json", task_dir, "--case", "fine", "--python", PY).stdout,
        run_tool(env, "run", "--json", task_dir, "--case", "nan-expected", "--python", PY).stdout,
        run_tool(env, "explain", "--json", task_dir, "--python", PY).stdout,
        run_tool(env, "test", "--json", task_dir, "--python", PY).stdout,
    ]
    for text in outputs:
        strict_json(text)
    proc, reader = start_watch(env, "--json", task_dir, "--case", "fine", "--python", PY)
    try:
        line = reader.next()
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=HANG_GUARD_S)
    assert strict_json(line)["rewards"] == {"reward": 1.0, "big": 1e308}


# ---------------------------------------------------------------------------
# A task.toml Harbor would refuse


@pytest.mark.parametrize(
    "toml, words",
    [
        ('version = "1.0"\n[verifier\n', "could not be read"),
        ("version = 1\n", "version = 1 is not a string"),
        ("[verifier]\nenv = { LEVEL = 3 }\n", "LEVEL"),
        ('[verifier]\ntimeout_sec = "soon"\n', "is not a number"),
    ],
)
def test_a_task_toml_harbor_would_refuse_still_runs_but_says_so(env, tmp_path, toml, words):
    task_dir = with_case(make_task(tmp_path / "t", toml=toml))
    done = run_tool(env, "run", task_dir, "--python", PY)
    assert done.returncode == 2, done.stdout
    verdict = next(line for line in done.stdout.splitlines() if line.startswith("verdict:"))
    assert "Harbor would refuse to run this task" in verdict and words in verdict
    assert '{"reward": 1.0}' in verdict  # the run itself went ahead
    data = strict_json(run_tool(env, "run", "--json", task_dir, "--python", PY).stdout)
    assert words in data["harbor_refuses_task"] and data["rewards"] == {"reward": 1.0}
    tested = run_tool(env, "test", task_dir, "--python", PY)
    # Harbor would run none of its cases: none is run here, nor said to pass
    assert tested.returncode == 2 and "verifier-tui: Harbor would refuse to run this task: " in tested.stderr
    assert "verifier-tui: only: not run (its task is not tested)" in tested.stderr


def test_explain_of_a_task_harbor_would_refuse_says_so_and_exits_as_it_explained(env, tmp_path):
    """``explain`` on a task Harbor would refuse (``version = 1``) ended ``no contract problems:
    verify would be called``, where Harbor would call none, and its ``--json`` had no
    ``harbor_refuses_task`` to read (``explain TRIAL``'s has). explain's status says whether it
    explained (0, as for a contract problem, which it reports too); what it found is in its text
    and document, and ``run`` and ``test`` are the gate that exits 2 (docs/commands.md)."""
    task_dir = with_case(make_task(tmp_path / "t", toml="version = 1\n"))
    done = run_tool(env, "explain", task_dir, "--python", PY)
    no_traceback(done)
    assert done.returncode == 0, done.stderr
    assert "verify would be called" not in done.stdout
    assert "no contract problems, but Harbor would refuse to run this task: verify would not be called" in done.stdout
    data = strict_json(run_tool(env, "explain", "--json", task_dir, "--python", PY).stdout)
    assert "version = 1 is not a string" in data["harbor_refuses_task"]
    loaded = with_case(make_task(tmp_path / "u"))
    assert strict_json(run_tool(env, "explain", "--json", loaded, "--python", PY).stdout)["harbor_refuses_task"] is None


def test_a_case_of_a_task_harbor_would_refuse_never_matches_its_expected_json(env, tmp_path):
    """``run TASK --case C``, TASK's task.toml one Harbor would refuse and C's
    expected.json the reward the run wrote: it said "matched" (``--json``'s
    expected_matched true), where Harbor would run no verifier and read no
    reward. It does not match, saying why; ``test`` runs none of its cases."""
    task_dir = with_case(
        make_task(tmp_path / "t", toml='[verifier]\ntimeout_sec = "abc"\n'), expected='{"rewards": {"reward": 1.0}}'
    )
    done = run_tool(env, "run", task_dir, "--case", "only", "--python", PY)
    assert done.returncode == 2, done.stdout
    line = next(line for line in done.stdout.splitlines() if line.startswith("expected "))
    assert line.endswith("DID NOT MATCH: Harbor would refuse to run this task"), line
    assert "note: Harbor would refuse to run this task: [verifier] timeout_sec = 'abc' is not a number" in done.stdout
    data = strict_json(run_tool(env, "run", "--json", task_dir, "--case", "only", "--python", PY).stdout)
    assert data["expected_matched"] is False and data["rewards"] == {"reward": 1.0}
    tested = run_tool(env, "test", task_dir, "--python", PY)
    assert tested.returncode == 2 and "verifier-tui: only: not run (its task is not tested)" in tested.stderr


def test_test_json_on_a_task_harbor_would_refuse_prints_the_document(env, tmp_path):
    """``test TASK --json``, TASK's task.toml one Harbor would refuse: stdout
    was empty (exit 2), where a script reads the document; ``test --watch
    --json`` printed one. So is a task without a verifier, whose cases are not run either."""
    task_dir = with_case(make_task(tmp_path / "t", toml="version = 1\n"))
    done = run_tool(env, "test", "--json", task_dir, "--python", PY)
    assert done.returncode == 2, done.stderr
    data = strict_json(done.stdout)
    assert "version = 1 is not a string" in data["harbor_refuses_task"]
    assert data["tasks"][0]["harbor_refuses_task"] == data["harbor_refuses_task"]
    [error] = data["errors"]
    assert error["problem"] == f"Harbor would refuse to run this task: {data['harbor_refuses_task']}"
    assert error["not_run"] == ["only"] and data["cases"] == [] and data["passed"] == 0
    bare = with_case(make_task(tmp_path / "bare", verifier=None))
    done = run_tool(env, "test", "--json", bare, "--python", PY)
    assert done.returncode == 2, done.stderr
    [error] = strict_json(done.stdout)["errors"]
    assert error["problem"].startswith("no verifier found") and error["not_run"] == ["only"]


def test_a_task_toml_not_read_is_not_said_to_run_with_the_defaults_beside_its_refusal(env, tmp_path):
    """``test`` on a task whose task.toml cannot be read: under the task's header ``note: task.toml could
    not be read (...); the run uses the defaults``, then ``not tested: Harbor would refuse this task:
    task.toml could not be read (...)``: said twice, and contradicting (nothing runs). So did --json's
    tasks row. The refusal alone now."""
    task_dir = with_case(make_task(tmp_path / "tasks" / "t", toml='version = "1.0"\n[verifier\n'))
    with_case(make_task(tmp_path / "tasks" / "ok"))  # a folder of tasks: the refused one is a table's part
    tested = run_tool(env, "test", tmp_path / "tasks", "--python", PY)
    said = tested.stdout
    assert tested.returncode == 2 and "Harbor would refuse to run this task: task.toml could not be read" in said
    assert "the run uses the defaults" not in tested.stdout + tested.stderr, tested.stdout
    data = strict_json(run_tool(env, "test", "--json", task_dir, "--python", PY).stdout)
    assert data["tasks"][0]["notices"] == [], data["tasks"]
    # run goes ahead (and says Harbor would refuse): with the defaults, as its note says
    assert "the run uses the defaults" in run_tool(env, "run", task_dir, "--python", PY).stdout


UNREAD = "its settings are unknown, so nothing is run"


def test_a_task_toml_past_what_this_tool_reads_is_a_task_that_does_not_run(env, tmp_path):
    """A task.toml past the 4 MB this tool reads was said refused by Harbor (which reads it whole), then
    read as the defaults (a padded multi-step task had `no [[steps]]`, 4.8 MB that is not TOML passed its
    cases). Its settings are unknown: every command says so in one line, exit 2, and runs nothing."""
    shutil.copytree(HARBOR_REAL / "tasks" / "multi-step", tmp_path / "multi")
    toml = tmp_path / "multi" / "task.toml"
    toml.write_text(toml.read_text() + "# padding\n" * 520_000)
    not_toml = with_case(make_task(tmp_path / "t", toml="version = [\n" + "# padding\n" * 500_000))
    fifo = with_case(make_task(tmp_path / "f"))
    (fifo / "task.toml").unlink()
    os.mkfifo(fifo / "task.toml")
    for args, why in (
        (
            ("run", tmp_path / "multi", "--step", "first"),
            f"task.toml is 5.0 MB: more than the 4 MB this tool reads: {UNREAD}",
        ),
        (("run", not_toml), f"task.toml is 4.8 MB: more than the 4 MB this tool reads: {UNREAD}"),
        (("test", not_toml), f"task.toml is 4.8 MB: more than the 4 MB this tool reads: {UNREAD}"),
        (("explain", not_toml), f"task.toml is 4.8 MB: more than the 4 MB this tool reads: {UNREAD}"),
        (("audit", not_toml), f"task.toml is 4.8 MB: more than the 4 MB this tool reads: {UNREAD}"),
        (
            ("run", fifo),
            "task.toml is a FIFO (a named pipe), not a regular file: Harbor's read_text() would block on "
            "it; not read, so nothing is run",
        ),
    ):
        done = run_tool(env, *args, "--python", PY, cwd=tmp_path)
        no_traceback(done)
        said = done.stdout + done.stderr
        assert done.returncode == 2 and said.count(why) == 1, (args, said)
        assert "Harbor would refuse" not in said and "[[steps]]" not in said and "reward" not in said, (args, said)
        assert "defaults" not in said and "passed" not in said, (args, said)


def test_watch_runs_nothing_on_old_settings_once_task_toml_is_past_what_it_reads(env, tmp_path):
    """watch, task.toml replaced by one past the 4 MB read: it said the settings unknown, kept the task
    as it was, and ran the next save on the old settings. Nothing runs now until task.toml is read again."""
    task_dir = with_case(make_task(tmp_path / "t", toml="[verifier]\ntimeout_sec = 30\n"))
    proc, reader = start_watch(env, task_dir, "--case", "only", "--python", PY)
    try:
        assert "reward written" in reader.next_run()
        # written whole and moved in, as an editor saves: a half-written file is one the tool reads
        (tmp_path / "big.toml").write_text("[verifier]\ntimeout_sec = 30\n" + "# padding\n" * 520_000)
        os.replace(tmp_path / "big.toml", task_dir / "task.toml")
        lines = [reader.next_run()]
        (task_dir / "cases" / "only" / "workspace" / "saved.txt").write_text("x")
        lines.append(reader.next_run())
    finally:
        _, err = stop(proc)
    assert all("reward written" not in line and "could not start" in line for line in lines), lines
    assert "Harbor would refuse" not in " ".join(lines) + err, lines


@pytest.mark.parametrize(
    "toml", ["version = 1\n", 'version = "1.0"\n[verifier\n', None], ids=["wrong-type", "not-toml", "a-folder"]
)
def test_explain_of_a_task_harbor_would_refuse_says_so(env, tmp_path, toml):
    """``explain`` on a task whose task.toml is not TOML (or is a folder) said only ``note: task.toml
    could not be read (...); the run uses the defaults`` and ``no contract problems: verify would be
    called``, where ``run`` says Harbor would refuse to run the task (as explain said of ``version = 1``)."""
    task_dir = make_task(tmp_path / "t", toml=toml)
    if toml is None:
        (task_dir / "task.toml").mkdir()
    said = run_tool(env, "explain", task_dir, "--python", PY).stdout
    notes = [line for line in said.splitlines() if line.startswith("note: ")]
    assert any(note.startswith("note: Harbor would refuse to run this task: ") for note in notes), said
    notices = strict_json(run_tool(env, "explain", "--json", task_dir, "--python", PY).stdout)["notices"]
    assert any(notice.startswith("Harbor would refuse to run this task: ") for notice in notices), notices


@pytest.mark.parametrize("toml", ["version = 1\n", 'version = "1.0"\n[verifier\n'], ids=["wrong-type", "not-toml"])
def test_a_task_harbor_would_refuse_is_said_in_one_phrasing_on_every_face(env, tmp_path, toml):
    """run's verdict said `Harbor would refuse to run this task: …`, its note, test's line, the JUnit
    failure and --json's problem `Harbor would refuse this task: …`, and the reason itself ended
    `(Harbor would refuse to load the task: pydantic ValidationError)`: three phrasings of one refusal,
    two of them in one line."""
    task_dir = with_case(make_task(tmp_path / "t", toml=toml))
    junit = tmp_path / "junit.xml"
    tested = run_tool(env, "test", task_dir, "--python", PY, "--junit", junit)
    said = [
        run_tool(env, "run", task_dir, "--python", PY).stdout,
        run_tool(env, "run", "--json", task_dir, "--python", PY).stdout,
        tested.stdout + tested.stderr,
        junit.read_text(),
        run_tool(env, "test", "--json", task_dir, "--python", PY).stdout,
    ]
    for text in said:  # run --json says it by its key, harbor_refuses_task, when no note needs to
        phrasings = re.findall(r"Harbor would refuse[\w ]*", text)
        assert set(phrasings) <= {"Harbor would refuse to run this task"}, text
        assert phrasings or '"harbor_refuses_task": "' in text, text


def test_keys_harbor_does_not_know_are_no_refusal(env, tmp_path):
    task_dir = make_task(
        tmp_path / "t", toml='version = "1.0"\nflavour = "mint"\n[verifier]\ncolour = 3\ntimeout_sec = "45"\n'
    )
    data = strict_json(run_tool(env, "run", "--json", task_dir, "--python", PY).stdout)
    assert data["harbor_refuses_task"] is None and data["timeout_s"] == 45.0  # "45": pydantic reads a number


# ---------------------------------------------------------------------------
# JUnit: well-formed XML, whatever the output held


def test_junit_escapes_control_characters(env, tmp_path):
    task_dir = make_task(
        tmp_path / "t",
        (
            "import sys\n\n"
            "def verify(workspace):\n"
            "    print('out \\x1b[31mred\\x1b[0m \\x00 \\x07 \\x0c \\ufffe')\n"
            "    sys.stderr.write('err \\x1b]8;;http://x\\x1b\\\\ \\x01\\x02\\n')\n"
            "    return 0.0\n"
        ),
    )
    with_case(task_dir, "bell\x07case", '{"rewards": {"reward": 1.0}}')
    report = tmp_path / "junit.xml"
    done = run_tool(env, "test", task_dir, "--junit", report, "--python", PY)
    assert done.returncode == 1
    root = ET.parse(report).getroot()  # expat refuses invalid characters: this parse is strict
    case = root.find("testcase")
    assert case.get("name") == "bell\\x07case"
    assert "\\x1b[31mred" in case.find("system-out").text
    assert "\\x01\\x02" in case.find("system-err").text


def test_junit_writes_bidi_controls_as_visible_escapes(env, tmp_path):
    """A case (or a trial) named ``a\u202eevil`` and a verifier printing a
    bidi override: the JUnit file held U+202E as it is, so a CI page (or
    ``cat``) showed the name and the output reordered."""
    task_dir = make_task(tmp_path / "t", "def verify(workspace):\n    print('x\\u202etxt.exe')\n    return 0.0\n")
    with_case(task_dir, "a\u202eevil", '{"rewards": {"reward": 1.0}}')
    report = tmp_path / "junit.xml"
    run_tool(env, "test", task_dir, "--junit", report, "--python", PY)
    assert "\u202e" not in report.read_text(encoding="utf-8")
    case = ET.parse(report).getroot().find("testcase")
    assert case.get("name") == "a<U+202E>evil"  # as the table and the pytest plugin's report name it
    assert "x\\u202etxt.exe" in case.find("system-out").text


def test_junit_writes_c1_controls_and_del_as_visible_escapes(env, tmp_path):
    """A verifier printing C1's CSI and OSC (U+009B, U+009D: what ESC [ and ESC ] are in one character)
    and DEL: ESC was written as \\x1b, but these went into the JUnit file as they are, where --json escapes
    them, and `cat junit.xml` on a terminal that acts on C1 cleared the screen and set its title."""
    task_dir = make_task(
        tmp_path / "t",
        "import sys\n\ndef verify(workspace):\n    print('out \\x9b2J \\x9d0;PWNED\\x07 \\x7f')\n"
        "    sys.stderr.write('err \\x9b31m\\n')\n    return 0.0\n",
    )
    with_case(task_dir, "c\x9bcase", '{"rewards": {"reward": 1.0}}')
    report = tmp_path / "junit.xml"
    run_tool(env, "test", task_dir, "--junit", report, "--python", PY)
    text = report.read_text(encoding="utf-8")
    assert not re.search("[\x7f-\x9f]", text), text
    case = ET.parse(report).getroot().find("testcase")
    assert "out \\x9b2J \\x9d0;PWNED\\x07 \\x7f" in case.find("system-out").text
    assert "err \\x9b31m" in case.find("system-err").text
    assert "\\x9b" in case.get("name")


@pytest.mark.parametrize("lines", [3_000, 40_000])  # under the capture's 256 KiB, and over it (it cut first)
def test_junit_and_test_say_how_much_of_a_long_output_they_leave_out(env, tmp_path, lines):
    """A verifier printing numbered lines and raising: the JUnit case's output and failure were
    their last 4,000 characters, and test's stderr block its last 2,000, each starting in the middle of a
    line with no word that anything came before, as if the run had printed only that. Then the line
    said counted characters of the capture's text, the capture's own cut of megabytes one line of it."""
    task_dir = make_task(
        tmp_path / "t",
        f"import sys\n\ndef verify(workspace):\n    for n in range({lines}):\n        print(f'out line {{n}}')\n"
        "        print(f'err line {n}', file=sys.stderr)\n    raise ValueError('the end')\n",
    )
    with_case(task_dir, "only", '{"rewards": {"reward": 1.0}}')
    report = tmp_path / "junit.xml"
    tested = run_tool(env, "test", task_dir, "--junit", report, "--python", PY)
    case = ET.parse(report).getroot().find("testcase")
    shown = [case.find("system-out").text, case.find("system-err").text, case.find("failure").text]
    shown.append(tested.stdout.split("only: stderr", 1)[1].split("\n", 1)[1])
    for text in shown:
        cut = re.search(r"\[\.\.\. ([\d,]+) bytes of output dropped here by verifier-tui \.\.\.\]\n", text)
        assert cut is not None, text[:300]
        kept = text[cut.end() :]
        first = re.match(r"(out|err) line (\d+)\n", kept)
        assert first is not None, kept[:100]
        # the count is of what the run printed before the first line kept, the capture's own cut included
        before = sum(len(f"{first.group(1)} line {n}\n") for n in range(int(first.group(2))))
        assert cut.group(1) == f"{before:,}", (cut.group(), first.group())
    assert case.find("system-out").text.rstrip().endswith(f"out line {lines - 1}")
    assert case.find("failure").text.rstrip().endswith("ValueError: the end")
    assert "ValueError: the end" in shown[-1]


# What verify writes before it raises, and how many bytes that is (None: the kept end starts in it, at a piece the
# reader splits at `\r`): a header goes on from it, or it is a line of its own.
BEFORE_A_HEADER = {
    # 10 MB with no newline: `xxx…xxxTraceback (most recent call last):`, one line
    "huge-unfinished-line": ("sys.stderr.write('x' * 10_000_000)", 10_000_000),
    # a progress bar, `\r` and no newline: the reader splits lines at `\r` too, so the header's line is the last
    # piece, ` 999/1000 checked Traceback (most recent call last):`, which starts with a space
    "progress-bar": (
        "[sys.stderr.write(f'\\r {i}/1000 checked') for i in range(1000)]",
        None,
    ),
    # a whole line of 100 KB that starts with the runner's prefix: not a report's first line to keep whole
    "huge-line-naming-the-prefix": ("print('run_verifier: error: ' + 'x' * 100_000, file=sys.stderr)", 100_022),
}


@pytest.mark.parametrize("first", list(BEFORE_A_HEADER), ids=list(BEFORE_A_HEADER))
def test_a_reports_header_after_a_huge_unfinished_line_stays_in_test_and_junit(env, tmp_path, first):
    """verify wrote 10 MB with no newline, then raised: Python's header went on from it,
    `xxx…xxxTraceback (most recent call last):`, one line, and the kept end started at the line after it,
    so test's stderr block and the JUnit failure and system-err began at the frame, no header above it.
    After a progress bar (`\r`, no newline) the header was left out the same way; after a 100 KB line
    starting with the runner's prefix, the whole line was kept (100,587 bytes where 2,000 are kept) under
    `[... 0 bytes of output dropped here ...]`."""
    writes, printed = BEFORE_A_HEADER[first]
    task_dir = make_task(
        tmp_path / "t",
        f"import sys\n\n\ndef verify(workspace):\n    {writes}\n    raise ValueError('the answer is wrong')\n",
    )
    with_case(task_dir, "only", '{"rewards": {"reward": 1.0}}')
    report = tmp_path / "junit.xml"
    tested = run_tool(env, "test", task_dir, "--junit", report, "--python", PY)
    case = ET.parse(report).getroot().find("testcase")
    block = tested.stdout.split("only: stderr", 1)[1].split("\n", 1)[1]
    for text, cap in ((block, 2000), (case.find("failure").text, 4000), (case.find("system-err").text, 4000)):
        cut = re.search(r"\[\.\.\. ([\d,]+) bytes of output dropped here by verifier-tui \.\.\.\]\n", text)
        assert cut is not None, text[:300]
        kept = text[cut.end() :]
        header = "Traceback (most recent call last):\n"
        assert kept.startswith(header) if printed is not None else header in kept, kept[:300]
        assert 'verifier.py", line 6, in verify' in kept and "ValueError: the answer is wrong" in kept, kept
        assert printed is None or cut.group(1) == f"{printed:,}", cut.group()  # what the run printed before
        assert cut.group(1) != "0" and len(kept) <= cap + 100, len(kept)  # (and test's count of cases after it)


@given(
    head=st.text(alphabet="ab\n\ufffd", max_size=40),
    tail=st.text(alphabet="cd\n\ufffd", max_size=40),
    dropped=st.integers(0, 5000),
    chars=st.integers(1, 200),
)
def test_the_count_before_a_kept_end_is_what_the_run_printed_before_it(head, tail, dropped, chars):
    """Whatever the window: a kept end starting at the capture's own line said two cuts, the first
    counting the line break the capture put before its own; a byte that was not UTF-8 counted three."""
    from verifier_tui.engine.model import CapturedText
    from verifier_tui.words.run import text_tail

    def printed(text: str) -> int:  # each U+FFFD stands for one byte that was not UTF-8
        return len(text.encode()) - 2 * text.count("\ufffd")

    captured = CapturedText(head=head, tail=tail, dropped_bytes=dropped)
    shown = text_tail(captured, chars)
    if shown == captured.text:
        return
    said, kept = shown.split("\n", 1)
    count = re.fullmatch(r"\[\.\.\. ([\d,]+) bytes of output dropped here by verifier-tui \.\.\.\]", said)
    assert count is not None, said
    before = int(count[1].replace(",", ""))
    if dropped and len(kept) <= len(tail):  # the capture's cut left out with the rest
        assert kept == tail[len(tail) - len(kept) :]
        assert before + printed(kept) == printed(head) + dropped + printed(tail)
    else:  # the capture's line is kept, saying its own cut
        assert captured.text.endswith(kept) and before == printed(captured.text[: len(captured.text) - len(kept)])


# ---------------------------------------------------------------------------
# explain when the module's top level never finishes


def test_explain_says_the_top_level_code_timed_out(env, tmp_path):
    task_dir = make_task(tmp_path / "t", "import time\ntime.sleep(120)\n\ndef verify(workspace):\n    return 1.0\n")
    for args in (["explain"], ["explain", "--json"]):
        done = run_tool(env, *args, task_dir, "--timeout", "1", "--python", PY)
        assert done.returncode == 2
        no_traceback(done)
        text = done.stdout if "--json" in args else done.stderr
        assert "timed out after 1 s" in text and "top-level code" in text
        assert "gave no explanation" not in text
        if "--json" in args:
            data = strict_json(done.stdout)
            # No exit of the runner's own (as a run's exit_code after a timeout): never Python's -15.
            assert data["timed_out"] is True and data["exit_code"] is None
            assert set(data) == explain_failure_fields()


def explain_failure_fields() -> set[str]:
    """The fields docs/json-output.md gives the explain document that says why there is none."""
    from tests.helpers.commands import JSON_DOC

    said = JSON_DOC.read_text(encoding="utf-8").split("### When explain fails", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r'"(\w+)":', said))


@pytest.mark.parametrize(
    "ending, words",
    [
        ("os._exit(0)", "the runner ended with exit 0 before it could explain"),
        ("os.kill(os.getpid(), signal.SIGKILL)", "the runner was killed by signal 9 before it could explain"),
    ],
    ids=["os._exit", "SIGKILL"],
)
def test_explain_says_the_top_level_code_ended_the_runner(env, tmp_path, ending, words):
    """The module's top-level code ends the process as it is imported: explain
    said only "the runner gave no explanation", in the sandbox's view the
    signal too (its init reports a signal N as the status 128 + N)."""
    source = f"import os, signal\n{ending}\n\ndef verify(workspace):\n    return 1.0\n"
    task_dir = make_task(tmp_path / "t", source)
    done = run_tool(env, "explain", task_dir, "--python", PY)
    assert done.returncode == 2
    no_traceback(done)
    assert words in done.stderr, done.stderr
    data = strict_json(run_tool(env, "explain", "--json", task_dir, "--python", PY).stdout)
    assert data["exit_code"] == (0 if "_exit" in ending else None)  # a signal has no exit code, as in a run
    assert set(data) == explain_failure_fields()


def test_explain_in_a_view_that_could_not_be_set_up_says_so(env, tmp_path, private_cache):
    """A machine that lost its namespaces since the probe: bwrap fails before
    the runner starts. explain dropped the view's failure and said "the runner
    gave no explanation" (or blamed the verifier's top-level code, by bwrap's
    exit); it now says why the view could not be set up, as a run does, with
    no sandbox line above it, as no runner ran there."""
    import sys

    from tests.helpers.processes import machine_without_namespaces, needs_namespaces

    needs_namespaces()
    os.environ["XDG_CACHE_HOME"] = str(private_cache)
    task_dir = make_task(tmp_path / "t")
    assert run_tool(env, "run", task_dir, "--python", PY).returncode == 0  # the probe's yes, kept in the cache
    done = machine_without_namespaces(
        [sys.executable, "-m", "verifier_tui", "explain", str(task_dir), "--python", PY], env
    )
    assert done.returncode == 2, done.stdout + done.stderr
    no_traceback(done)
    assert "could not set up the run's sandbox: bwrap: " in done.stderr, done.stderr
    assert "top-level code" not in done.stderr and "gave no explanation" not in done.stderr
    # no runner ran: no sandbox line saying where one ran, nor bwrap's line again as a runner's stderr
    assert "sandbox:" not in done.stdout, done.stdout
    assert len(done.stderr.splitlines()) == 1, done.stderr
    # nor does explain TRIAL's replay side say a sandbox, as its document says none
    assert run_tool(env, "run", task_dir, "--python", PY).returncode == 0  # the probe's yes again
    shutil.copytree(HARBOR_REAL, tmp_path / "real")
    trial = next(path for path in (tmp_path / "real" / "jobs" / "oracle-pass").iterdir() if path.is_dir())
    explain_trial = [sys.executable, "-m", "verifier_tui", "explain", str(trial), "--stand-in", "empty", "--python", PY]
    done = machine_without_namespaces(explain_trial, env)
    assert done.returncode == 2, done.stdout + done.stderr
    replay = done.stdout[done.stdout.index("\nreplay ") :]
    assert "could not set up the run's sandbox: bwrap: " in replay and "\n  sandbox: " not in replay, replay
    # nor does its document hold a runner's stderr, exit or sandbox: only what a runner that ran gives
    assert run_tool(env, "run", task_dir, "--python", PY).returncode == 0  # the probe's yes again: the failure
    done = machine_without_namespaces(  # above made the next start probe anew
        [sys.executable, "-m", "verifier_tui", "explain", "--json", str(task_dir), "--python", PY], env
    )
    assert done.returncode == 2, done.stdout + done.stderr
    data = strict_json(done.stdout)
    assert data["error"].startswith("could not set up the run's sandbox: bwrap: "), data["error"]
    ran_only = {"stderr", "exit_code", "timed_out", "sandbox", "sandbox_words"}
    assert set(data) == explain_failure_fields() - ran_only, sorted(data)


# ---------------------------------------------------------------------------
# The explanation the verifier can reach is checked when read back


def test_an_explanation_rewritten_by_the_verifier_is_checked(env, tmp_path):
    task_dir = make_task(
        tmp_path / "t",
        (
            "import json, sys\n\n"
            "def verify(workspace):\n"
            "    target = sys.argv[sys.argv.index('--explain-to') + 1]\n"
            "    with open(target, 'w') as f:\n"
            "        json.dump({'sys_path': 'nope', 'parameters': [1, None, {'name': 7}],"
            " 'problems': [3, 'real one'],\n"
            "                   'modules': [], 'verify': 'x', 'python': {'flags': [1]}, 'injected': True}, f)\n"
            "    return 1.0\n"
        ),
    )
    ran = run_tool(env, "run", "--json", task_dir, "--python", PY)
    no_traceback(ran)
    data = strict_json(ran.stdout)
    assert data["rewards"] == {"reward": 1.0}
    assert data["sys_path"] == [] and data["modules"] == {} and data["signature"] is None
    assert [row["name"] for row in data["arguments"]] == [""] and data["problems"] == ["real one"]
    readable = run_tool(env, "run", task_dir, "--python", PY)
    no_traceback(readable)
    assert readable.returncode == 0


# ---------------------------------------------------------------------------
# Escape codes from the verifier reach no terminal


NOISY = (
    "import sys\n\n"
    "def verify(workspace):\n"
    "    print('\\x1b[2J\\x1b[Hcleared \\x1b]8;;http://evil.example\\x1b\\\\link"
    "\\x1b]8;;\\x1b\\\\ \\x07bell \\x9b31m')\n"
    "    sys.stderr.write('\\x1b]0;new title\\x07\\x1b[31mred\\n')\n"
    "    raise ValueError('\\x1b[2Jboom')\n"
)


@pytest.mark.parametrize("args", [["run"], ["test"], ["explain"]], ids=" ".join)
def test_escape_codes_in_the_verifiers_output_are_shown_harmlessly(env, tmp_path, args):
    task_dir = with_case(make_task(tmp_path / "t", NOISY), expected='{"exit_code": 0}')
    if args == ["explain"]:  # the module's top level raises: explain shows the message and the traceback
        (task_dir / "tests" / "verifier.py").write_text(
            "raise ValueError('\\x1b[2Jboom\\x07')\n\ndef verify(workspace):\n    return 1.0\n"
        )
    done = run_tool(env, *args, task_dir, "--python", PY)
    for text in (done.stdout, done.stderr):
        assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text, text
    if args == ["run"]:
        assert "cleared" in done.stdout and "link" in done.stdout and "red" in done.stdout
        assert "ValueError: boom" in done.stdout


def test_escape_codes_in_watch_lines_are_shown_harmlessly(env, tmp_path):
    task_dir = make_task(tmp_path / "t", NOISY)
    proc = subprocess.Popen(
        TOOL + ["watch", str(task_dir), "--python", PY],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    lines: list[str] = []
    try:
        reader = LineReader(proc.stdout)
        while not any("ValueError" in line for line in lines):
            lines.append(reader.next())
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=HANG_GUARD_S)
    text = "\n".join(lines)
    assert "ValueError: boom" in text
    assert "\x1b" not in text and "\x07" not in text


def test_a_watch_line_for_a_name_that_is_not_utf8_keeps_its_columns(env, tmp_path):
    """The changed file's name holds a byte that is not UTF-8 and a line
    break: the line says it as ``\\xff`` and ``\\n``, on its own line, with
    the run's outcome in the same column as every other line's."""
    task_dir = make_task(tmp_path / "t", "def verify(workspace):\n    return 1.0\n")
    proc, reader = start_watch(env, task_dir, "--python", PY)
    try:
        first = next(line for line in iter(reader.next, None) if line.startswith("#1 "))
        with open(os.fsencode(task_dir / "tests") + b"/odd\xff\nname.txt", "wb") as handle:
            handle.write(b"x")
        second = reader.next_run()  # (after the notes said under the first)
    finally:
        stop(proc)
    assert second.startswith("#2 ") and "tests/odd\\xff\\nname.txt" in second, second
    assert second.index("reward written") == first.index("reward written"), (first, second)


# ---------------------------------------------------------------------------
# --python that cannot run the runner: bad input, one line


UNUSABLE_PYTHONS = {
    "missing": ("/nonexistent/python3", "/nonexistent/python3"),
    "not-on-path": ("no-such-python-here", "not found on PATH"),
    "broken": ("{tmp}/broken-python", "failed to start"),
    "python2.7": ("{py27}", "Python 2.7 is too old: the runner needs 3.8 or newer"),
}
PYTHON_COMMANDS = [["run"], ["run", "--json"], ["explain"], ["test"], ["watch"], ["audit"]]
# Each unusable interpreter with two commands, every command with one or two:
# the interpreter is judged once for all of them (all 20 pairs would start
# the tool 20 times to run the same lines).
UNUSABLE_PYTHON_RUNS = [
    pytest.param(command, *python, id=f"{name}-{' '.join(command)}")
    for index, (name, python) in enumerate(UNUSABLE_PYTHONS.items())
    for command in (PYTHON_COMMANDS[(2 * index + shift) % len(PYTHON_COMMANDS)] for shift in (0, 1))
]


@pytest.mark.parametrize("command, python, words", UNUSABLE_PYTHON_RUNS)
def test_a_python_that_cannot_run_the_runner_is_bad_input(env, tmp_path, command, python, words):
    if "{py27}" in python and PY27 is None:
        pytest.skip(no_python("2.7"))
    broken = tmp_path / "broken-python"
    broken.write_text("#!/bin/sh\necho 'ImportError: this interpreter is broken' >&2\nexit 3\n")
    broken.chmod(0o755)
    task_dir = with_case(make_task(tmp_path / "t"))
    done = run_tool(env, *command, task_dir, "--python", python.format(tmp=tmp_path, py27=PY27))
    assert done.returncode == 2
    assert done.stdout == ""
    no_traceback(done)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("verifier-tui: --python ") and words in lines[0]


# ---------------------------------------------------------------------------
# The runner's environment: Harbor's, not the developer's shell


SHOWS_ENV = "import json, os\n\ndef verify(workspace):\n    print(json.dumps(dict(os.environ)))\n    return 1.0\n"


def seen_environment(env, task_dir, *args) -> dict:
    done = run_tool(env, "run", "--json", task_dir, "--python", PY, *args)
    assert done.returncode == 0, done.stderr
    return json.loads(strict_json(done.stdout)["stdout"])


def test_secrets_in_the_shell_do_not_reach_the_verifier(env, tmp_path):
    task_dir = make_task(tmp_path / "t", SHOWS_ENV, toml='[verifier]\nenv = { MODE = "strict", KEY = "${MY_KEY}" }\n')
    env = dict(env, AWS_SECRET_ACCESS_KEY="hunter2", GITHUB_TOKEN="ghp_x", MY_KEY="for the task", LC_ALL="C.UTF-8")
    seen = seen_environment(env, task_dir)
    assert "AWS_SECRET_ACCESS_KEY" not in seen and "GITHUB_TOKEN" not in seen and "MY_KEY" not in seen
    assert seen["MODE"] == "strict"
    assert seen["KEY"] == "for the task"  # ${MY_KEY} resolved from the user's environment, as Harbor does
    assert seen["PATH"] == env["PATH"] and seen["LC_ALL"] == "C.UTF-8" and seen["TMPDIR"] == env["TMPDIR"]
    assert seen["PYTHONIOENCODING"] == "utf-8"


def test_a_template_filled_from_the_shell_is_said_without_its_value(env, tmp_path):
    """A task.toml's ``KEY = "${MY_KEY}"`` hands the shell's MY_KEY to the
    verifier, as Harbor does on the machine that runs the job; run said
    nothing of it, and explain counted MY_KEY among the variables held back."""
    toml = '[verifier]\nenv = { KEY = "${MY_KEY}", D = "${NOPE:-d}" }\n'
    task_dir = make_task(tmp_path / "t", SHOWS_ENV, toml=toml, cases={"c": {}})
    env = dict(env, MY_KEY="hunter2")
    done = run_tool(env, "run", task_dir, "--python", PY)
    said = "note: task.toml [verifier] env: KEY = '${MY_KEY}' takes MY_KEY from your environment"
    assert said in done.stdout, done.stdout
    data = strict_json(run_tool(env, "run", "--json", task_dir, "--python", PY).stdout)
    assert any(note.startswith(said.removeprefix("note: ")) for note in data["notices"]), data["notices"]
    assert not any("NOPE" in note for note in data["notices"])  # its own default: nothing of the shell's
    assert "hunter2" not in json.dumps(data["notices"]) + json.dumps(data["environment"])
    # A note on the task: test says it under the task's header, of cases that pass too.
    write(task_dir / "cases" / "c" / "expected.json", '{"rewards": {"reward": 1.0}}')
    tested = run_tool(env, "test", task_dir, "--python", PY)
    assert tested.returncode == 0 and said in tested.stdout, tested.stdout
    # --env KEY=... sets KEY over the template: nothing of the shell's reaches it, nothing to say.
    typed = strict_json(run_tool(env, "run", "--json", task_dir, "--python", PY, "--env", "KEY=typed").stdout)
    assert not any("takes MY_KEY" in note for note in typed["notices"]), typed["notices"]
    assert json.loads(typed["stdout"])["KEY"] == "typed"


READS_Z = (
    "import os\n\ndef verify(workspace):\n"
    "    z, d = os.environ.get('Z'), os.environ.get('D')\n"
    "    return {'reward': float(z == 'sekrit-9f3'), 'd': float(d == 'sekrit-d7e')}\n"
)


@pytest.mark.parametrize("shell", [{"VTUI_VAR": "from the shell"}, {}], ids=["shell-sets-it", "shell-lacks-it"])
def test_env_fills_the_tasks_templates_as_the_shell_that_runs_harbor_would(env, tmp_path, shell):
    """``--env VTUI_VAR=x`` sets VTUI_VAR for the run as the shell that runs Harbor would have it, and Harbor
    fills ``Z = "${VTUI_VAR}"`` from that shell: Z was the shell's value (or missing), never x, in run, test
    and explain alike, while the note that the shell filled it was gone."""
    toml = '[verifier]\nenv = { Z = "${VTUI_VAR}", D = "${VTUI_DV:-dflt}" }\n'
    task_dir = with_case(make_task(tmp_path / "t", READS_Z, toml=toml), "c", '{"rewards": {"reward": 1.0, "d": 1.0}}')
    shell = {k: v for k, v in env.items() if k not in ("VTUI_VAR", "VTUI_DV")} | shell
    words = ("--env", "VTUI_VAR=sekrit-9f3", "--env", "VTUI_DV=sekrit-d7e")  # values no other word holds
    data = strict_json(run_tool(shell, "run", "--json", task_dir, "--case", "c", "--python", PY, *words).stdout)
    assert data["rewards"] == {"reward": 1.0, "d": 1.0}, data
    assert not any("not set in your environment" in note for note in data["notices"]), data["notices"]
    said = "task.toml [verifier] env: Z = '${VTUI_VAR}' takes VTUI_VAR from --env VTUI_VAR"
    assert any(note.startswith(said) for note in data["notices"]), data["notices"]
    assert not any("takes VTUI_VAR from your environment" in note for note in data["notices"]), data["notices"]
    junit = tmp_path / "junit.xml"
    tested = run_tool(shell, "test", task_dir, "--python", PY, "--junit", junit, *words)
    assert tested.returncode == 0, tested.stdout
    explained = run_tool(shell, "explain", task_dir, "--case", "c", "--python", PY, *words)
    assert explained.returncode == 0 and said in explained.stdout, explained.stdout
    # Never the values: neither --env's nor the shell's, in any output (but the reproducing command, the user's words).
    outputs = {
        "run --json": json.dumps({k: v for k, v in data.items() if k != "command"}),
        "test": tested.stdout + tested.stderr,
        "junit": junit.read_text(),
        "explain": explained.stdout + explained.stderr,
    }
    for name, text in outputs.items():
        assert "from the shell" not in text and "sekrit" not in text, (name, text)


def test_env_option_passes_a_variable_by_name_or_with_a_value(env, tmp_path):
    task_dir = make_task(tmp_path / "t", SHOWS_ENV)
    env = dict(env, GITHUB_TOKEN="ghp_x")
    seen = seen_environment(env, task_dir, "--env", "GITHUB_TOKEN", "--env", "EXTRA=a=b", "--env", "EMPTY=")
    assert seen["GITHUB_TOKEN"] == "ghp_x" and seen["EXTRA"] == "a=b" and seen["EMPTY"] == ""
    data = strict_json(run_tool(env, "run", "--json", task_dir, "--python", PY, "--env", "GITHUB_TOKEN").stdout)
    passed = {row["name"]: row for row in data["environment"]["passed"]}
    assert passed["GITHUB_TOKEN"] == {"name": "GITHUB_TOKEN", "source": "--env", "value": None}  # never its value
    assert "ghp_x" not in json.dumps(data["environment"])
    assert data["command"][-2:] == ["--env", "GITHUB_TOKEN"]


@pytest.mark.parametrize(
    "word, words", [("NOT_SET_ANYWHERE", "not set in your environment"), ("1BAD=x", "NAME"), ("=x", "NAME")]
)
def test_a_bad_env_option_is_one_clear_error(env, tmp_path, word, words):
    done = run_tool(env, "run", make_task(tmp_path / "t"), "--env", word)
    assert done.returncode == 2 and done.stdout == ""
    no_traceback(done)
    assert words in done.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize(
    "variable, value",
    [
        ("PYTHONOPTIMIZE", "1"),
        ("PYTHONWARNINGS", "error"),
        ("PYTHONDEVMODE", "1"),
        ("PYTHONHASHSEED", "7"),
        ("PYTHONPYCACHEPREFIX", "/tmp/elsewhere"),
        ("PYTHONPATH", "/tmp"),
        ("PYTHONSAFEPATH", "1"),
        ("PYTHONINSPECT", "1"),
        ("PYTHONVERBOSE", "1"),
        ("PYTHONUTF8", "0"),
        ("PYTHONNOUSERSITE", "1"),
    ],
)
def test_interpreter_switches_of_the_shell_do_not_reach_the_runner(env, tmp_path, variable, value):
    task_dir = make_task(tmp_path / "t", SHOWS_ENV)
    seen = seen_environment(dict(env, **{variable: value}), task_dir)
    assert variable not in seen


def test_pythonoptimize_in_the_shell_does_not_skip_the_verifiers_assert(env, tmp_path):
    """With PYTHONOPTIMIZE=1 passed through, the assert below is skipped and
    the verifier scores 1.0 on a workspace that fails it."""
    task_dir = make_task(
        tmp_path / "t",
        ("def verify(workspace):\n    assert (workspace / 'answer.txt').is_file(), 'no answer.txt'\n    return 1.0\n"),
    )
    done = run_tool(dict(env, PYTHONOPTIMIZE="1"), "run", "--json", task_dir, "--python", PY)
    data = strict_json(done.stdout)
    assert done.returncode == 1
    assert data["outcome"] == "verifier_raised" and data["rewards"] is None
    assert "AssertionError: no answer.txt" in data["stderr"]


def test_explain_says_what_the_runner_gets(env, tmp_path):
    task_dir = make_task(tmp_path / "t", toml='[verifier]\nenv = { MODE = "strict", KEY = "${MY_KEY}" }\n')
    env = dict(env, MY_KEY="s3cret", PYTHONOPTIMIZE="2", SOME_TOKEN="t0ken")
    done = run_tool(env, "explain", task_dir, "--env", "SOME_TOKEN", "--python", PY)
    assert done.returncode == 0
    assert "  task.toml [verifier] env: KEY=${MY_KEY}, MODE=strict" in done.stdout
    assert "  --env: SOME_TOKEN" in done.stdout
    assert "PYTHONOPTIMIZE" in done.stdout.split("held back:")[1]
    assert "s3cret" not in done.stdout and "t0ken" not in done.stdout
    data = strict_json(run_tool(env, "explain", "--json", task_dir, "--python", PY).stdout)
    assert {"name": "MODE", "source": "task.toml [verifier] env", "value": "strict"} in data["environment"]["passed"]
    assert "PYTHONOPTIMIZE" in data["environment"]["held_back"]


def test_an_unset_template_in_the_task_env_is_named(env, tmp_path):
    task_dir = make_task(tmp_path / "t", SHOWS_ENV, toml='[verifier]\nenv = { KEY = "${NOT_SET_VTUI}" }\n')
    env = {k: v for k, v in env.items() if k != "NOT_SET_VTUI"}
    done = run_tool(env, "run", "--json", task_dir, "--python", PY)
    data = strict_json(done.stdout)
    assert "KEY" not in json.loads(data["stdout"])
    assert any("NOT_SET_VTUI is not set" in notice for notice in data["notices"])


def test_bidi_and_c1_controls_are_escaped_in_json_and_shown_in_text(env, tmp_path):
    """--json escapes U+009B (a one-character CSI) and U+202E (a right-to-left
    override, which makes ``txt.exe`` read ``exe.txt``) instead of passing
    them raw, and the text output shows U+202E instead of obeying it."""
    task_dir = with_case(
        make_task(
            tmp_path / "t",
            """\
        def verify(workspace):
            print("report\\u202etxt.exe \\x9b31m done")
            return 1.0
    """,
        )
    )
    done = run_tool(env, "run", "--json", task_dir, "--python", PY)
    assert "\u202e" not in done.stdout and "\x9b" not in done.stdout
    assert "\\u202e" in done.stdout and "\\u009b" in done.stdout
    assert strict_json(done.stdout)["stdout"] == "report\u202etxt.exe \x9b31m done\n"  # the same text, escaped
    text = run_tool(env, "run", task_dir, "--python", PY).stdout
    assert "\u202e" not in text and "report<U+202E>txt.exe 31m done" in text


def test_a_misspelt_table_of_task_toml_is_a_note_and_the_run_goes_on(env, tmp_path):
    """``[verifer] timeout_sec = 1`` ran with Harbor's 600 s and no word: Harbor
    ignores what its model does not know, and so the run goes on, but says so."""
    task = make_task(tmp_path / "t", toml='version = "1.0"\n[verifer]\ntimeout_sec = 1\n', cases={"only": {}})
    done = run_tool(env, "run", task, "--python", PY)
    assert done.returncode == 0, done.stdout
    said = "note: task.toml: [verifer] is not one Harbor knows: did you mean [verifier]? (Harbor ignores it)"
    assert said in done.stdout


def test_a_module_in_the_folder_the_tool_starts_in_never_runs_on_this_machine(env, tmp_path):
    """Asking the interpreter where it imports from runs ``python -c``, which
    puts the current folder first on the import path: a json.py in a job
    folder someone sent, where the user started the tool, ran outside any
    sandbox. The question is asked from the root folder."""
    here = tmp_path / "sent"
    here.mkdir()
    marker = tmp_path / "ran"
    for name in ("json", "importlib"):
        (here / f"{name}.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    task_dir = make_task(tmp_path / "t", "def verify(workspace):\n    return 1.0\n")
    cache = tmp_path / "fresh-cache"  # nothing remembered: the interpreter is asked
    done = run_tool(env | {"XDG_CACHE_HOME": str(cache)}, "run", task_dir, "--python", PY, cwd=here)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not marker.exists()


def test_a_tasks_env_never_reaches_the_interpreters_probe_on_this_machine(env, tmp_path):
    """The probe runs outside any sandbox: with the task's PYTHONPATH =
    "${PWD}" it imported the sitecustomize.py of the folder the user started
    in, and any folder the task named this way became part of every later
    run's view (the answer is remembered by interpreter)."""
    here = tmp_path / "sent"
    here.mkdir()
    marker = tmp_path / "ran"
    (here / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    secret = tmp_path / "agent-folder"
    secret.mkdir()
    cache = tmp_path / "fresh-cache"
    user = env | {"XDG_CACHE_HOME": str(cache), "AGENT_FOLDER": str(secret), "PWD": str(here)}
    for name in ("PWD", "AGENT_FOLDER"):
        toml = f'[verifier]\nenv = {{ PYTHONPATH = "${{{name}}}" }}\n'
        task_dir = make_task(tmp_path / name, "def verify(workspace):\n    return 1.0\n", toml=toml)
        done = run_tool(user, "run", task_dir, "--python", PY, cwd=here)
        assert done.returncode == 0, done.stdout + done.stderr
        assert not marker.exists()
        remembered = (cache / "verifier-tui" / "interpreters-2.json").read_text()
        assert str(secret) not in remembered and str(here) not in remembered
        (cache / "verifier-tui" / "interpreters-2.json").unlink()  # asked again for the next task


def test_a_launcher_that_refuses_is_said_by_its_first_line(env, tmp_path):
    # A pyenv shim's message ends with "Python versions to be found at the same time."
    shim = tmp_path / "python2"
    shim.write_text(
        "#!/bin/sh\necho 'pyenv: python2: command not found' >&2\necho >&2\n"
        "echo \"Note: See 'pyenv help global' for tips on allowing both\" >&2\n"
        "echo '      Python versions to be found at the same time.' >&2\nexit 127\n"
    )
    shim.chmod(0o755)
    done = run_tool(env, "run", with_case(make_task(tmp_path / "t")), "--python", shim)
    assert done.returncode == 2
    assert done.stderr.strip().endswith("failed to start: pyenv: python2: command not found"), done.stderr


def test_a_copy_run_that_writes_its_own_tests_is_not_run_for_ever_under_watch(env, tmp_path):
    """In the copy sandbox (asked for), a verifier appending to a file of its
    tests/ was seen as a save: it ran itself again, 245 times in 15 s. Its
    write cannot be told from a save made during the run, so one more run
    follows, made for that file alone, which writes it again: no run follows
    that, and it is said once. A save of the user's own, after, still runs."""
    task_dir = tmp_path / "t"
    data = task_dir / "tests" / "data.txt"
    source = f"def verify(workspace):\n    open({str(data)!r}, 'a').write('x')\n    return 1.0\n"
    make_task(task_dir, source, cases={"only": {}})
    data.write_text("")
    proc, reader = start_watch(dict(env, VERIFIER_TUI_SANDBOX="copy"), "--json", task_dir, "--python", PY)
    try:
        assert json.loads(reader.next())["rewards"] == {"reward": 1.0}
        assert json.loads(reader.next())["trigger"] == "tests/data.txt"
        with pytest.raises(queue.Empty):
            reader.next(within_s=2.0)  # well past the watcher's debounce: no run of its own write
        assert data.read_text() == "xx"
        (task_dir / "tests" / "verifier.py").write_text(source.replace("1.0", "0.5"))
        assert json.loads(reader.next())["rewards"] == {"reward": 0.5}
    finally:
        code, stderr = stop(proc)
    assert code == 0 and stderr.count("the run itself seems to write tests/data.txt") == 1, stderr


def test_a_save_during_a_copy_run_under_watch_runs_again(env, tmp_path):
    """In the copy sandbox (asked for), a save of the verifier while a run went on (a slow
    verifier) was taken for the run's own write: no run followed it."""
    gate = Gate(tmp_path / "gate")
    source = gate.verifier("def verify(workspace):\n    return 1.0\n")
    task_dir = make_task(tmp_path / "t", source, cases={"only": {}})
    verifier = task_dir / "tests" / "verifier.py"
    proc, reader = start_watch(dict(env, VERIFIER_TUI_SANDBOX="copy"), "--json", task_dir, "--python", PY)
    try:
        assert json.loads(reader.next(HANG_GUARD_S))["rewards"] == {"reward": 1.0}
        gate.go.unlink()
        verifier.write_text(source.replace("1.0", "0.5"))
        gate.wait_for_run(2)
        verifier.write_text(source.replace("1.0", "0.25"))
        gate.go.touch()
        deadline = time.monotonic() + HANG_GUARD_S
        while (last := json.loads(reader.next(max(0.1, deadline - time.monotonic()))))["rewards"] != {"reward": 0.25}:
            assert last["rewards"] == {"reward": 0.5}, last
    finally:
        code, stderr = stop(proc)
    assert code == 0 and "Traceback" not in stderr, stderr
    assert last["trigger"] == "tests/verifier.py"
