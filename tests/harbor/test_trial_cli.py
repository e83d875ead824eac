"""Trials and jobs through the real command, as a user runs it: ``run``,
``explain``, ``test`` and ``watch`` on Harbor folders built as Harbor 0.26.0
writes them (the sandbox side produced by the real runner), from another
current folder; ``run --both-modes`` on any case."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import signal
import subprocess
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.cli.test_truthful import strict_json
from tests.harbor.job_copies import genuine_trial
from tests.helpers.commands import (
    JSON_DOC,
    MODULE,
    TOOL,
    documented_fields,
    no_traceback,
    run_tool,
    start_watch,
    stop,
)
from tests.helpers.harbor import (
    PASSED,
    READS_HELLO,
    SEPARATE,
    captured_trial,
    harbor_exception,
    harbor_masked_failure_log,
    make_job,
    make_trial,
    sandbox_run,
    sandbox_trial,
    timed_out_trial,
    trial_with_job_env,
)
from tests.helpers.processes import (
    MEET_VERIFIER,
    STUCK_ONCE_STARTED,
    bwrap_probes_that_fail,
    machine_without_namespaces,
    meeting,
    needs_namespaces,
    set_meeting,
    wait_started,
)
from tests.helpers.tasks import CHECKS_RAISED_AS_A_GROUP, PY, SHIM, make_step_folders
from verifier_tui.engine.task.config import REFUSED_TO_RUN as REFUSED

NOT_FOUND = "RewardFileNotFoundError"
TRIAL_KEYS = {
    "trial",
    "sandbox",
    "replay",
    "local",
    "local_skipped",
    "local_phases",
    "local_failure",
    "parted_at",
    "same",
    "differences",
}


def tool(env, *args, cwd):
    """The command from ``cwd`` (not the repository), with this interpreter as the runner's."""
    done = run_tool(env, *args, "--python", PY, cwd=cwd)
    no_traceback(done)
    return done


def as_json(done):
    return json.loads(done.stdout)


@pytest.fixture
def elsewhere(tmp_path):
    """A current folder that is neither the trial's nor the task's."""
    folder = tmp_path / "somewhere-else"
    folder.mkdir()
    return folder


def test_verify_raised_no_reward(task, runs, tmp_path, env, elsewhere):
    demo = task(verifier=READS_HELLO, toml=SEPARATE)
    trial = sandbox_trial(
        runs / "jobs" / "j", demo, tmp_path, workspace={"other.txt": ""}, mode="separate", capture=True
    )
    done = tool(env, "run", trial.path, cwd=elsewhere)
    assert done.returncode == 1  # the replay's status: the verifier raised
    out = done.stdout
    assert out.splitlines()[0] == "trial demo__aaaaaaa · task demo · agent oracle · verifier mode separate"
    assert "sandbox   RewardFileNotFoundError (from result.json)" in out
    assert "agreement same: the replay ended as the sandbox did" in out
    assert "verify called and awaited  ✗ FileNotFoundError" in out
    assert "Harbor scored this trial with RewardFileNotFoundError" in out
    assert "  try: a verify that raises scores nothing" in out
    assert "replay: the same step went wrong the same way" in out
    data = as_json(tool(env, "run", trial.path, "--json", cwd=elsewhere))
    assert set(data) >= TRIAL_KEYS
    assert data["same"] is True and data["differences"] == []
    assert data["sandbox"]["phase"] == "verify_called" and data["local_phases"]["stopped_at"] == "verify_called"
    assert data["sandbox"]["failure"]["path"] == str(demo / "tests" / "verifier.py")
    assert data["local_failure"] == {"path": str(demo / "tests" / "verifier.py"), "line": 2}
    assert data["local"]["outcome"] == "verifier_raised" and data["local"]["mode"] == "harbor"


PRINTS_A_STACK_AS_IT_EXITS = """\
import atexit, traceback

def later():
    traceback.print_stack()

def verify(workspace):
    atexit.register(later)
    raise ValueError("no")
"""


def _separate_trial(task, runs, tmp_path, verifier: str):
    """A task of ``verifier`` run in separate mode on an empty /app, and its trial as Harbor left it."""
    demo = task(verifier=verifier, toml=SEPARATE)
    return demo, sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={}, mode="separate", capture=True)


def test_a_replays_failing_line_is_its_exception_reports_not_a_frame_printed_after_it(
    task, runs, tmp_path, env, elsewhere
):
    # verify raised at line 8; as the interpreter exits, an atexit handler prints its stack (File "..." lines with no
    # exception report). The sandbox's side read the last exception report (verifier.py:8), the replay's every
    # File line in stderr (verifier.py:4): the trial screen's two sides named different lines of one failure.
    demo, trial = _separate_trial(task, runs, tmp_path, PRINTS_A_STACK_AS_IT_EXITS)
    data = as_json(tool(env, "run", trial.path, "--json", cwd=elsewhere))
    assert "print_stack" in data["local"]["stderr"], data["local"]["stderr"]
    verifier = str(demo / "tests" / "verifier.py")
    assert (data["sandbox"]["failure"]["path"], data["sandbox"]["failure"]["line"]) == (verifier, 8)
    assert data["local_failure"] == {"path": verifier, "line": 8}, data["local_failure"]


def test_a_replays_frame_with_a_line_no_file_has_is_still_its_failing_line(task, runs, tmp_path, env, elsewhere):
    # verify printed a report of its own whose innermost frame names a line past ten digits, and ended: the
    # replay dropped that frame and named its caller (verifier.py:3) where the sandbox's side named the frame.
    verifier = (
        "import os, sys\n\ndef verify(workspace):\n    here = os.path.abspath(__file__)\n"
        "    sys.stderr.write(f'Traceback (most recent call last):\\n  File \"{here}\", line 3, in verify\\n')\n"
        "    sys.stderr.write(f'  File \"{here}\", line ' + '9' * 5000 + ', in check\\nValueError: x\\n')\n"
        "    sys.stderr.flush()\n    os._exit(1)\n"
    )
    demo, trial = _separate_trial(task, runs, tmp_path, verifier)
    data = as_json(tool(env, "run", trial.path, "--json", cwd=elsewhere))
    path = str(demo / "tests" / "verifier.py")
    assert (data["sandbox"]["failure"]["path"], data["sandbox"]["failure"]["line"]) == (path, None), data["sandbox"]
    assert data["local_failure"] == {"path": path, "line": None}, data["local_failure"]


def test_a_report_printed_after_unfinished_output_names_its_line(task, runs, tmp_path, env, elsewhere):
    # verify wrote a progress mark with no newline, then raised: Python printed
    # `0;Traceback (most recent call last):` on one line, so neither side read the report: the text and
    # --json named no failing line on either side, and the root cause said test-stdout.txt held no report
    # of the runner, so test.sh might not be the runner's shim.
    verifier = "import sys\n\ndef verify(workspace):\n    sys.stderr.write('0;')\n    raise ValueError('no')\n"
    demo, trial = _separate_trial(task, runs, tmp_path, verifier)
    data = as_json(tool(env, "run", trial.path, "--json", cwd=elsewhere))
    assert "0;Traceback (most recent call last):" in data["local"]["stderr"], data["local"]["stderr"]
    path = str(demo / "tests" / "verifier.py")
    sandbox = data["sandbox"]
    assert sandbox["output_kind"] == "traceback" and sandbox["phase"] == "verify_called", sandbox
    assert (sandbox["failure"] or {}).get("path") == path and sandbox["failure"]["line"] == 5, sandbox["failure"]
    assert data["local_failure"] == {"path": path, "line": 5}, data["local_failure"]
    text = tool(env, "run", trial.path, cwd=elsewhere).stdout
    assert "verifier.py:5" in text and "holds no report of the runner" not in text, text


def test_an_exception_group_of_checks_never_raised_one_by_one_is_read_as_the_runners_report(
    task, runs, tmp_path, env, elsewhere
):
    # verify gathered its failed checks and raised them as one ExceptionGroup: its sub-exceptions, never raised,
    # have no traceback, and the group's own report starts `Exception Group Traceback`, which was read as no
    # report at all: the root cause said test-stdout.txt held no report of the runner (test.sh may not be the
    # runner's shim), every step of the sandbox's side was unknown, and neither side named line 8.
    demo, trial = _separate_trial(task, runs, tmp_path, CHECKS_RAISED_AS_A_GROUP)
    data = as_json(tool(env, "run", trial.path, "--json", cwd=elsewhere))
    assert "  | ExceptionGroup: 2 checks failed (2 sub-exceptions)" in data["local"]["stderr"], data["local"]["stderr"]
    path = str(demo / "tests" / "verifier.py")
    sandbox = data["sandbox"]
    assert sandbox["output_kind"] == "traceback" and sandbox["phase"] == "verify_called", sandbox
    assert (sandbox["failure"] or {}).get("path") == path and sandbox["failure"]["line"] == 8, sandbox["failure"]
    assert data["local_failure"] == {"path": path, "line": 8}, data["local_failure"]
    text = tool(env, "run", trial.path, cwd=elsewhere).stdout
    assert "ExceptionGroup: 2 checks failed" in text and "holds no report of the runner" not in text, text


def test_a_verifier_that_closed_its_stderr_is_not_said_to_have_been_killed(task, runs, tmp_path, env, elsewhere):
    # verify closed fd 2, then raised: test-stdout.txt is empty, and the root cause said the runner did not run
    # to the end (killed, or test.sh never started it), though it did, as the replay beside it shows.
    verifier = "import os\n\ndef verify(workspace):\n    os.close(2)\n    raise ValueError('no stderr')\n"
    demo, trial = _separate_trial(task, runs, tmp_path, verifier)
    text = tool(env, "run", trial.path, cwd=elsewhere).stdout
    cause = next(line for line in text.splitlines() if line.startswith("root cause"))
    assert "test-stdout.txt is empty" in cause and "or the verifier closed its stderr" in cause, cause
    assert "verify called and awaited" in text and "ValueError: no stderr" in text, text


def test_a_verifier_that_ended_the_interpreter_is_not_said_to_have_been_killed(task, runs, tmp_path, env, elsewhere):
    # verify called os._exit(3): test-stdout.txt is empty, and the root cause said the runner was killed or
    # test.sh never started it, where the replay beside it shows exit 3 from inside verify.
    verifier = "import os\n\ndef verify(workspace):\n    os._exit(3)\n"
    demo, trial = _separate_trial(task, runs, tmp_path, verifier)
    text = tool(env, "run", trial.path, cwd=elsewhere).stdout
    cause = next(line for line in text.splitlines() if line.startswith("root cause"))
    assert "test-stdout.txt is empty" in cause and "verify ended the interpreter with os._exit" in cause, cause
    assert "exit 3: not a runner exit code" in text, text


LOGS_AN_EXCEPTION_AND_SCORES_0 = """\
import json
import logging


def verify(workspace):
    try:
        json.loads("not json")
    except ValueError:
        logging.exception("the answer is not JSON")
        return 0.0
    return 1.0
"""


def test_a_traceback_the_verifier_logged_before_it_returned_is_not_the_runners_report(
    task, runs, tmp_path, env, elsewhere
):
    # verify logged the exception it caught (logging.exception) and returned 0.0; Harbor scored 0.0. The logged
    # traceback was read as the runner's report: the sandbox's side said verify raised JSONDecodeError, the runner
    # exited 1 without a reward and Harbor scored RewardFileNotFoundError, under `Harbor scored 0.0`; both sides
    # said `failed at tests/verifier.py:7`, and the two parted at 'verify called and awaited'.
    demo, trial = _separate_trial(task, runs, tmp_path, LOGS_AN_EXCEPTION_AND_SCORES_0)
    # The sandbox's files alone cannot tell a logged traceback from the runner's report beside a reward something
    # else wrote (it writes none when verify raises): its side names both, its steps not known, and keeps the
    # report's line as where to look; the replay, which saw verify return, names none, and the two do not part.
    text = tool(env, "run", trial.path, cwd=elsewhere).stdout
    assert "ERROR:root:the answer is not JSON" in text and "Harbor scored 0.0" in text, text
    assert "they part" not in text and NOT_FOUND not in text, text
    assert "either verify logged an exception and returned" in text, text
    row = next(line for line in text.splitlines() if line.startswith("verify called and awaited"))
    assert row.split()[4:6] == ["?", "unknown"] and row.split()[-2:] == ["a", "float"], row
    data = as_json(tool(env, "run", trial.path, "--json", cwd=elsewhere))
    assert data["sandbox"]["failure"]["line"] == 7 and data["local_failure"] is None, data["sandbox"]["failure"]
    assert data["sandbox"]["phase"] is None and data["same"] is True, (data["sandbox"]["phase"], data["differences"])


def test_a_line_verify_printed_in_the_runners_words_beside_its_reward_is_not_taken_for_a_refusal(
    task, runs, tmp_path, env, elsewhere
):
    # verify printed `run_verifier: error: verify returned None; expected a float` to stderr and returned 1.0; the
    # runner wrote reward.txt and Harbor scored 1.0. The sandbox's side took the line for the runner's refusal: the
    # runner exited 2, 'reward written' failed, and the sandbox and the replay were said to part there, of one run.
    forged = "run_verifier: error: verify returned None; expected a float"
    verifier = f"import sys\n\n\ndef verify(workspace):\n    print({forged!r}, file=sys.stderr)\n    return 1.0\n"
    _demo, trial = _separate_trial(task, runs, tmp_path, verifier)
    text = tool(env, "run", trial.path, cwd=elsewhere).stdout
    assert "Harbor scored 1.0" in text or "sandbox   1.0" in text, text
    assert "they part" not in text and "the runner exited 2" not in text, text
    assert "either verify printed" in text, text
    row = next(line for line in text.splitlines() if line.startswith("reward written"))
    assert "✗" not in row, row
    data = as_json(tool(env, "run", trial.path, "--json", cwd=elsewhere))
    assert data["same"] is True and data["sandbox"]["phase"] is None, (data["sandbox"]["phase"], data["differences"])


@pytest.mark.parametrize(
    "ending",
    ["\nexit 0", " || echo 0 > /logs/verifier/reward.txt"],
    ids=["exits-0-after-the-runner", "writes-a-reward-after-the-runner-failed"],
)
def test_both_sides_name_the_failing_line_of_a_test_sh_that_goes_on_after_the_runner(
    task, runs, tmp_path, env, elsewhere, ending
):
    # verify raised at line 3 and the runner printed its report, in a test.sh that runs the runner without exec
    # and then exits 0, or gives a score of its own when the runner fails (`|| echo 0 > reward.txt`). The
    # sandbox's side named verifier.py:3; the replay (exit 0, or judged by that test.sh and ending with its reward
    # written) named none, as if verify had returned: two failing lines of one run.
    demo = task(verifier="def verify(workspace):\n    x = 1\n    raise ValueError('no')\n", toml=SEPARATE)
    script = SHIM.replace(
        'exec "$PY" /tests/.ng/run_verifier.py "$@"', '"$PY" /tests/.ng/run_verifier.py "$@"' + ending
    )
    assert script != SHIM
    (demo / "tests" / "test.sh").write_text(script)
    trial = sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={}, mode="separate", capture=True)
    data = as_json(tool(env, "run", trial.path, "--json", cwd=elsewhere))
    path = str(demo / "tests" / "verifier.py")
    assert (data["sandbox"]["failure"] or {}).get("line") == 3, data["sandbox"]["failure"]
    assert data["local_failure"] == {"path": path, "line": 3}, (data["local_failure"], data["local"]["outcome"])


def test_a_trial_harbor_has_not_ended_is_not_finished_not_scored(task, runs, tmp_path, env, elsewhere):
    # result.json is written when the trial ends: without it Harbor has scored
    # nothing, though verifier/ already holds a reward (the job overview's "not finished").
    demo = task(verifier=READS_HELLO, toml=SEPARATE)
    trial = sandbox_trial(
        runs / "jobs" / "j",
        demo,
        tmp_path,
        workspace={"hello.txt": "hi"},
        mode="separate",
        capture=True,
        trial_kwargs=dict(result="missing"),
    )
    for command in ("explain", "run"):
        out = tool(env, command, trial.path, cwd=elsewhere).stdout
        assert "root cause  not finished: Harbor has not scored it (result.json is missing)" in out, command
        assert "Harbor scored 1.0" not in out and "sandbox   not finished" in out, command
    done = tool(env, "run", trial.path, "--json", cwd=elsewhere)
    verdict = as_json(done)["sandbox"]["harbor_verdict"]
    assert verdict["rewards"] is None and verdict["finished"] is False
    assert as_json(done)["same"] is None  # nothing Harbor scored to compare the replay with


def test_a_contract_error_from_a_required_response(task, runs, tmp_path, env, elsewhere):
    demo, trial = _separate_trial(task, runs, tmp_path, "def verify(workspace, response):\n    return 1.0\n")
    done = tool(env, "run", trial.path, cwd=elsewhere)
    assert done.returncode == 2
    assert "arguments bound            ✗ verify requires 'response'" in done.stdout
    assert "try: Harbor never passes a response: give response a default" in done.stdout
    data = as_json(tool(env, "run", trial.path, "--json", cwd=elsewhere))
    assert data["local"]["outcome"] == "contract_error" and data["local"]["response"] is None
    assert data["sandbox"]["contract_error"].startswith("verify requires 'response'")
    assert data["same"] is True


def test_a_reward_planted_before_the_run_is_removed_by_the_runner(task, runs, tmp_path, env, elsewhere):
    demo = task(verifier="def verify(workspace):\n    return 0.25\n", toml=SEPARATE)
    trial = sandbox_trial(
        runs / "jobs" / "j",
        demo,
        tmp_path,
        workspace={},
        mode="separate",
        capture=True,
        planted={"reward.json": '{"reward": 1.0}'},
    )
    data = as_json(tool(env, "run", trial.path, "--json", cwd=elsewhere))
    assert data["sandbox"]["harbor_verdict"]["rewards"] == {"reward": 0.25}
    assert [f["name"] for f in data["sandbox"]["reward_files"]] == ["reward.txt"]
    assert data["local"]["rewards"] == {"reward": 0.25} and data["same"] is True


def test_a_verifier_timeout(task, runs, tmp_path, env, elsewhere):
    slow = "import time\n\ndef verify(workspace):\n    time.sleep(30)\n    return 1.0\n"
    demo = task(verifier=slow, toml=SEPARATE + "timeout_sec = 1.0\n")
    trial = sandbox_trial(
        runs / "jobs" / "j", demo, tmp_path, workspace={}, mode="separate", capture=True, timeout_s=1.0
    )
    done = tool(env, "run", trial.path, cwd=elsewhere)
    assert done.returncode == 124
    assert "sandbox   VerifierTimeoutError (from result.json)" in done.stdout
    assert "verify called and awaited  ? unknown" in done.stdout
    assert "⏱ still running when the run ended (timed out after 1 s)" in done.stdout
    # One timeout, not two: test.sh would run a runner under the same timeout again.
    assert "test.sh was not run after verifier-tui's runner: that ran out the task's timeout" in done.stdout
    data = as_json(tool(env, "run", trial.path, "--json", cwd=elsewhere))
    assert data["sandbox"]["phase"] == "timeout" and data["local_phases"]["stopped_at"] == "verify_called"
    assert data["same"] is True
    assert data["local"]["verdict_by"] == "runner" and any("test.sh was not run" in n for n in data["local"]["notices"])


def test_the_root_cause_of_a_timeout_says_where_the_replay_was_stuck(runs, tmp_path, env, elsewhere):
    """Harbor downloads nothing after a timeout, so the sandbox cannot say
    how far its runner got; the replay, which timed out too, can."""
    slow = "import time\n\ndef verify(workspace):\n    time.sleep(30)\n    return 1.0\n"
    trial = timed_out_trial(runs, tmp_path, slow)
    done = tool(env, "run", trial.path, cwd=elsewhere)
    root = done.stdout.split("\nsandbox ")[0]
    assert "the replay, which timed out too, was stuck at tests/verifier.py:4 in verify" in root
    assert "try: find what is slow or stuck at tests/verifier.py:4" in root
    assert "is not known" not in done.stdout
    cause = as_json(tool(env, "run", trial.path, "--json", cwd=elsewhere))["sandbox"]["root_cause"]
    assert cause["message"].endswith("the replay, which timed out too, was stuck at tests/verifier.py:4 in verify")


def agent_timeout_trial(task, runs, tmp_path, said: str):
    """A trial whose agent timed out (Harbor recorded ``said`` as the
    exception's message) and whose verifier then wrote no reward."""
    demo = task(verifier=READS_HELLO, toml=SEPARATE)
    message = "No reward file found at jobs/j/demo__aaaaaaa/verifier/reward.txt or ..."
    return sandbox_trial(
        runs / "jobs" / "j",
        demo,
        tmp_path,
        workspace={},
        mode="separate",
        capture=True,
        trial_kwargs=dict(
            agent="claude-code",
            log=harbor_masked_failure_log("demo__aaaaaaa", NOT_FOUND, message),
            exception=harbor_exception("AgentTimeoutError", said),
        ),
    )


def test_an_agent_timeout_followed_by_a_verifier_failure(task, runs, tmp_path, env, elsewhere):
    trial = agent_timeout_trial(task, runs, tmp_path, "Agent execution timed out after 120.0 seconds")
    done = tool(env, "run", trial.path, cwd=elsewhere)
    assert "sandbox   RewardFileNotFoundError (from trial.log)" in done.stdout
    assert "the agent failed first: AgentTimeoutError" in done.stdout
    assert "recorded only in trial.log" in done.stdout
    assert "agreement same" in done.stdout


def test_an_agent_failure_without_a_message_is_said_as_its_traceback_does(task, runs, tmp_path, env, elsewhere):
    """Harbor records ``str(e)``, empty for ``raise AgentTimeoutError()``: the
    line said ``the agent failed first: AgentTimeoutError: ``, a colon and
    nothing after it, where the traceback ends with ``AgentTimeoutError``."""
    trial = agent_timeout_trial(task, runs, tmp_path, "")
    done = tool(env, "run", trial.path, cwd=elsewhere)
    assert "the agent failed first: AgentTimeoutError\n" in done.stdout, done.stdout


def test_an_unparseable_reward_txt_from_a_plain_test_sh(task, runs, env, elsewhere):
    demo = task(verifier=None, shim=False, files={"test.sh": "#!/bin/sh\necho 'high' > /logs/verifier/reward.txt\n"})
    make_job(
        runs / "jobs" / "j",
        {
            "demo__aaaaaaa": dict(
                task=demo,
                verifier_files={"test-stdout.txt": "", "reward.txt": "high\n"},
                exception=harbor_exception("VerifierOutputParseError", "Failed to parse rewards from text file"),
            )
        },
    )
    done = tool(env, "run", runs / "jobs" / "j" / "demo__aaaaaaa", cwd=elsewhere)
    assert done.returncode == 2  # no replay
    assert "sandbox   VerifierOutputParseError" in done.stdout
    assert "replay    none: tests/test.sh is the task's own script, not the runner's shim" in done.stdout
    assert "reward.txt is there but Harbor could not use it" in done.stdout


def test_a_bare_number_in_reward_json(task, runs, tmp_path, env, elsewhere):
    demo = task()
    make_job(
        runs / "jobs" / "j",
        {
            "demo__aaaaaaa": dict(
                task=demo,
                verifier_files={"test-stdout.txt": "", "reward.json": "0.5"},
                exception=harbor_exception("ValidationError", "1 validation error for VerifierResult"),
            )
        },
    )
    stand_in = tmp_path / "stand-in"
    stand_in.mkdir()
    data = as_json(tool(env, "run", runs / "jobs" / "j", "--workspace", stand_in, "--json", cwd=elsewhere))
    assert data["sandbox"]["verdict"]["error"] == "ValidationError"
    assert data["sandbox"]["reward_files"][0]["text"] == "0.5"
    assert data["local"]["rewards"] == {"reward": 1.0} and data["same"] is False
    assert data["differences"][0] == "the sandbox ended with ValidationError, the replay with 1.0"


def test_shared_mode_without_app_says_what_to_give_then_replays_on_a_case(task, runs, tmp_path, env, elsewhere):
    demo = task(verifier=READS_HELLO, cases={"good": {"hello.txt": "hi"}})
    trial = sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={"hello.txt": "hi"})
    done = tool(env, "run", trial.path, cwd=elsewhere)
    assert done.returncode == 2
    assert "replay    none: no workspace to replay on: the trial did not capture /app" in done.stdout
    assert "give --workspace DIR, --case NAME or --stand-in empty" in done.stdout
    data = as_json(tool(env, "run", trial.path, "--json", cwd=elsewhere))
    assert data["local"] is None and data["same"] is None and "--workspace DIR" in data["local_skipped"]
    done = tool(env, "run", trial.path, "--case", "good", cwd=elsewhere)
    assert done.returncode == 0
    assert "workspace: your stand-in: case good (the trial did not capture /app)" in done.stdout
    assert "agreement same" in done.stdout


def test_a_moved_job_folder_still_finds_its_task(task, runs, tmp_path, env, elsewhere):
    demo = task(verifier=READS_HELLO, toml=SEPARATE)
    sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={"hello.txt": "hi"}, mode="separate", capture=True)
    moved = tmp_path / "archive" / "old-runs"
    moved.parent.mkdir()
    shutil.move(str(runs), str(moved))
    data = as_json(tool(env, "run", moved / "jobs" / "j", "--json", cwd=elsewhere))
    assert data["trial"]["task_path"] == str(moved / "tasks" / "demo")
    assert data["trial"]["task_found_by"] == "task.path in config.json; the trial folder moved since Harbor ran it"
    assert data["same"] is True


def test_a_task_changed_since_the_run(task, runs, tmp_path, env, elsewhere):
    demo, trial = captured_trial(task, runs, tmp_path)
    later = time.time() + 5
    verifier = demo / "tests" / "verifier.py"
    verifier.write_text(READS_HELLO.replace("'hi'", "'hello'"))
    os.utime(verifier, (later, later))
    done = tool(env, "run", trial.path, cwd=elsewhere)
    assert "the task changed since the run" in done.stdout
    assert "a different replay result means little while the task differs from the one that ran" in done.stdout
    assert "agreement differ: the sandbox ended with 1.0, the replay with 0.0" in done.stdout


def test_a_replay_whose_timeout_is_below_zero_says_it_timed_out_at_once(task, runs, tmp_path, env, elsewhere):
    """A job's verifier_timeout_multiplier of -1: Harbor gives up before the
    verifier runs, and the replay does too; it read "timed out after -600 s"."""
    _demo, trial = captured_trial(task, runs, tmp_path)
    config = json.loads((trial.path / "config.json").read_text())
    (trial.path / "config.json").write_text(json.dumps({**config, "verifier_timeout_multiplier": -1}))
    done = tool(env, "run", trial.path, cwd=elsewhere)
    assert "timed out at once (its timeout is -600 s)" in done.stdout, done.stdout
    assert "the replay timed out at once (its timeout is -600 s) and the sandbox did not" in done.stdout
    assert "after -600 s" not in done.stdout


def test_a_task_that_cannot_be_found(task, runs, tmp_path, env, elsewhere):
    demo, trial = captured_trial(task, runs, tmp_path)
    kept = tmp_path / "kept-elsewhere"
    shutil.move(str(demo), str(kept))
    done = tool(env, "run", trial.path, cwd=elsewhere)
    assert done.returncode == 2
    # One sentence: "...(task.path ..., 5 places). give the task folder" began its second in lower case.
    assert "the task was not found (looked in: " in done.stdout
    assert re.search(r"\)\); give the task folder with --task DIR$", done.stdout, re.M), done.stdout
    data = as_json(tool(env, "run", trial.path, "--json", cwd=elsewhere))
    assert data["trial"]["task_not_found"].startswith("the task was not found") and data["local"] is None
    done = tool(env, "run", trial.path, "--task", kept, cwd=elsewhere)
    assert done.returncode == 0 and "agreement same" in done.stdout


def two_step_job(demo, runs, tmp_path, *, second: float):
    """Job ``j`` with one trial of ``demo`` in two steps, "first" (recorded 1.0) and "second"
    (recorded ``second``); the task.toml names both steps."""
    (demo / "task.toml").write_text('version = "1.0"\n\n[[steps]]\nname = "first"\n\n[[steps]]\nname = "second"\n')
    make_step_folders(demo)
    run = sandbox_run(demo, tmp_path / "sandbox")
    make_job(
        runs / "jobs" / "j",
        {
            "demo__aaaaaaa": dict(
                task=demo,
                mode=None,
                steps=[
                    {"name": "first", "rewards": {"reward": 1.0}, "verifier_files": run.files, "app": {}},
                    {"name": "second", "rewards": {"reward": second}, "verifier_files": run.files, "app": {}},
                ],
            )
        },
    )
    return runs / "jobs" / "j"


def test_a_step_named_on_a_trial_of_one_step_says_it_has_none(real, env, tmp_path):
    """``watch TRIAL --step nope`` (or run, explain) on a trial of one step said "has no step
    'nope' (steps: (single step))", as if "(single step)" were a step's name to give."""
    trial = genuine_trial(real, "separate-mode")
    for command in ("watch", "run", "explain"):
        done = run_tool(env, command, trial, "--step", "nope", cwd=tmp_path)
        assert done.returncode == 2 and done.stdout == "", done.stdout
        assert done.stderr.strip() == (
            f"verifier-tui: trial {trial.name} has no step 'nope': it is a trial of one step (leave --step out)"
        ), done.stderr


def test_a_multi_step_trial(task, runs, tmp_path, env, elsewhere):
    demo = task(verifier="def verify(workspace):\n    return 1.0\n")
    job = two_step_job(demo, runs, tmp_path, second=0.0)
    data = as_json(tool(env, "run", job, "--step", "second", "--json", cwd=elsewhere))
    assert data["trial"]["step"] == "second" and data["trial"]["steps"] == ["first", "second"]
    assert data["same"] is False  # the recorded 0.0 against the replay's 1.0
    done = tool(env, "run", job, cwd=elsewhere)  # the first step, and the trial's others said
    assert "· step first (1 of 2: --step NAME for another) ·" in done.stdout, done.stdout
    done = tool(env, "run", job, "--step", "third", cwd=elsewhere)
    assert done.returncode == 2 and "has no step 'third' (steps: first, second)" in done.stderr
    done = tool(env, "test", job, cwd=elsewhere)
    assert done.returncode == 1
    assert "demo__aaaaaaa / first" in done.stdout and "demo__aaaaaaa / second" in done.stdout
    assert "1 agree, 1 differ, 0 not compared" in done.stdout
    assert "verifier-tui's runner judged 1 of the 1 that agree; the task's test.sh, as Harbor runs it" in done.stdout


def test_a_multi_step_trial_whose_task_no_longer_names_its_steps_is_replayed_still(
    task, runs, tmp_path, env, elsewhere
):
    """The replay of a step is the trial's (tests/ with the step's own over it), not a --step the user
    gave: a task.toml that no longer lists the trial's steps does not stop it."""
    demo = task(verifier="def verify(workspace):\n    return 1.0\n")
    job = two_step_job(demo, runs, tmp_path, second=1.0)
    (demo / "task.toml").write_text('version = "1.0"\n')
    data = as_json(tool(env, "run", job, "--step", "second", "--json", cwd=elsewhere))
    assert data["local_skipped"] is None and data["local"]["rewards"] == {"reward": 1.0}, data["local_skipped"]


def test_a_replay_of_a_step_task_toml_no_longer_names_says_no_steps_note_and_what_its_command_lacks(
    task, runs, tmp_path, env, elsewhere
):
    """task.toml lists `first` only; the trial's step `second` is replayed still, with steps/second/tests
    over tests/. Its notes said "this run is tests/ with the task's [verifier]", and local.command (what
    c copies), `run TASK` without --step (which the task no longer takes), ran without that overlay unsaid."""
    demo = weighted_by_step(task)
    job = two_step_job(demo, runs, tmp_path, second=0.25)
    (demo / "task.toml").write_text('version = "1.0"\n\n[[steps]]\nname = "first"\n')
    data = as_json(tool(env, "run", job, "--step", "second", "--json", cwd=elsewhere))
    assert data["local"]["rewards"] == {"reward": 0.25} and data["same"] is True, data["local_skipped"]
    assert not [n for n in data["local"]["notices"] if "[[steps]]" in n], data["local"]["notices"]
    assert "--step" not in data["local"]["command"]
    text = tool(env, "run", job, "--step", "second", cwd=elsewhere).stdout
    assert "[[steps]]" not in text and "this run is tests/" not in text, text
    explained = tool(env, "explain", job, "--step", "second", cwd=elsewhere).stdout
    assert "[[steps]]" not in explained and "this run is tests/" not in explained, explained
    assert data["command_lacks_overlay"] == "steps/second/tests"
    # The replay's own session says nothing of the task's steps: it is the trial's step, its tests laid over.
    from verifier_tui.engine.harbor.folders import open_harbor
    from verifier_tui.engine.harbor.trial_session import TrialSession
    from verifier_tui.engine.session import Options

    trial, _ = open_harbor(job / "demo__aaaaaaa")
    with TrialSession(trial, "second", options=Options(python=PY)) as opened:
        assert opened.session is not None and opened.plan.extra_tests is not None
        said = opened.session.task_notices()
        # watch TRIAL (and the TUI's live reload): a save of the step's weights.py, which the replay
        # scores with, re-runs it, though task.toml no longer lists the step.
        saved = [demo / "steps" / "second" / "tests" / "weights.py"]
        watched = [t.path for t in opened.watch_targets()]
        assert demo / "steps" / "second" / "tests" in watched, watched
        assert opened.session.feeds_a_run(saved) and opened.session.changes_the_task(saved)
    assert not [n for n in said if "[[steps]]" in n or "this run is tests/" in n], said
    (demo / "task.toml").write_text('version = "1.0"\n\n[[steps]]\nname = "first"\n\n[[steps]]\nname = "second"\n')
    kept = as_json(tool(env, "run", job, "--step", "second", "--json", cwd=elsewhere))
    assert kept["command_lacks_overlay"] is None  # the task lists the step: the command has --step second


def weighted_by_step(task):
    """A task whose verifier returns tests/weights.py's WEIGHT (1.0), its step `second` shipping a
    weights.py of its own (0.25), which Harbor uploads over tests/ for that step."""
    demo = task(
        verifier="from weights import WEIGHT\n\ndef verify(workspace):\n    return WEIGHT\n",
        files={"weights.py": "WEIGHT = 1.0\n"},
    )
    (demo / "steps" / "second" / "tests").mkdir(parents=True)
    (demo / "steps" / "second" / "tests" / "weights.py").write_text("WEIGHT = 0.25\n")
    return demo


def test_a_steps_own_runner_is_the_one_a_replay_of_the_step_compares_with(task, runs, tmp_path, env, elsewhere):
    """The trial's step `second` ships steps/second/tests/.ng/run_verifier.py, which Harbor uploads over
    tests/ and the sandbox ran for that step: the replay compared verifier-tui's runner with the task's
    tests/.ng/run_verifier.py alone, so a step's runner that differs was never said (nor a reason the
    replay may differ)."""
    from verifier_tui.runner_source import runner_path

    demo = task(verifier="def verify(workspace):\n    return 1.0\n")
    ng = demo / "steps" / "second" / "tests" / ".ng"
    ng.mkdir(parents=True)
    (ng / "run_verifier.py").write_text("# the step's own\n" + runner_path().read_text())
    job = two_step_job(demo, runs, tmp_path, second=1.0)
    data = as_json(tool(env, "run", job, "--step", "second", "--json", cwd=elsewhere))
    said = [n for n in data["local"]["notices"] if "(what the sandbox ran) differs" in n]
    assert len(said) == 1 and said[0].startswith("the task's steps/second/tests/.ng/run_verifier.py"), said
    first = as_json(tool(env, "run", job, "--step", "first", "--json", cwd=elsewhere))
    assert not [n for n in first["local"]["notices"] if "(what the sandbox ran) differs" in n], first["local"]


@pytest.mark.parametrize("listed", [True, False], ids=["listed", "dropped"])
def test_a_steps_own_nemo_gym_is_what_a_replay_of_the_step_imports(task, runs, tmp_path, env, elsewhere, listed):
    """The trial's step `second` vendors steps/second/tests/.ng/nemo_gym, which Harbor uploads over tests/:
    the sandbox imported it for that step. The replay put --nemo-gym's copy over it, and scored otherwise.
    task.toml dropping the step since changes none of it: the replay still lays the step's tests."""
    demo = task(
        verifier="try:\n    from nemo_gym.verifiers.helpers import VALUE\nexcept ImportError:\n    VALUE = 1.0\n\n"
        "def verify(workspace):\n    return VALUE\n"
    )
    for root, value in ((demo / "steps" / "second" / "tests" / ".ng", 0.3), (tmp_path / "elsewhere-gym", 0.9)):
        (root / "nemo_gym" / "verifiers").mkdir(parents=True)
        (root / "nemo_gym" / "__init__.py").write_text("")
        (root / "nemo_gym" / "verifiers" / "__init__.py").write_text("")
        (root / "nemo_gym" / "verifiers" / "helpers.py").write_text(f"VALUE = {value}\n")
    job = two_step_job(demo, runs, tmp_path, second=0.3)
    if not listed:
        (demo / "task.toml").write_text('version = "1.0"\n\n[[steps]]\nname = "first"\n')
    other = tmp_path / "elsewhere-gym"
    data = as_json(tool(env, "run", job, "--step", "second", "--nemo-gym", other, "--json", cwd=elsewhere))
    assert data["local"]["rewards"] == {"reward": 0.3}, data["local"]["stderr"]
    assert any("steps/second/tests/.ng/nemo_gym" in n for n in data["local"]["notices"]), data["local"]["notices"]


def test_a_steps_runner_behind_a_link_is_no_runner_the_replay_compares_tests_runner_with(
    task, runs, tmp_path, env, elsewhere
):
    """steps/second/tests/.ng/run_verifier.py a link to the step's real.py, which Harbor uploads over
    tests/'s: the replay of step second compared verifier-tui's runner with the task's
    tests/.ng/run_verifier.py, which the sandbox never ran for that step, and said that one differed."""
    from verifier_tui.runner_source import runner_path

    demo = task(verifier="def verify(workspace):\n    return 1.0\n")
    (demo / "tests" / ".ng").mkdir()
    (demo / "tests" / ".ng" / "run_verifier.py").write_text("# the task's own\n" + runner_path().read_text())
    ng = demo / "steps" / "second" / "tests" / ".ng"
    ng.mkdir(parents=True)
    (ng / "real.py").write_text(runner_path().read_text())
    (ng / "run_verifier.py").symlink_to("real.py")
    job = two_step_job(demo, runs, tmp_path, second=1.0)
    second = as_json(tool(env, "run", job, "--step", "second", "--json", cwd=elsewhere))
    assert not [n for n in second["local"]["notices"] if "(what the sandbox ran) differs" in n], second["local"]
    first = as_json(tool(env, "run", job, "--step", "first", "--json", cwd=elsewhere))
    said = [n for n in first["local"]["notices"] if "(what the sandbox ran) differs" in n]
    assert len(said) == 1 and said[0].startswith("the task's tests/.ng/run_verifier.py"), said


def test_a_step_with_its_own_tests_is_replayed_on_harbors_merged_tests(task, runs, tmp_path, env, elsewhere):
    """Harbor 0.26 uploads tests/ and then steps/<name>/tests/ into /tests: the second step's own
    weights.py replaces the task's for that step, and a traceback in it points at the step's file."""
    demo = weighted_by_step(task)
    job = two_step_job(demo, runs, tmp_path, second=0.25)
    first = as_json(tool(env, "run", job, "--step", "first", "--json", cwd=elsewhere))
    second = as_json(tool(env, "run", job, "--step", "second", "--json", cwd=elsewhere))
    assert first["local"]["rewards"] == {"reward": 1.0} and first["same"] is True
    assert second["local"]["rewards"] == {"reward": 0.25} and second["same"] is True, second["differences"]
    assert (demo / "tests" / "weights.py").read_text() == "WEIGHT = 1.0\n"  # the user's files as they were
    (demo / "steps" / "second" / "tests" / "weights.py").write_text("raise ValueError('step weights')\n")
    broken = as_json(tool(env, "run", job, "--step", "second", "--json", cwd=elsewhere))
    assert f'File "{demo / "steps" / "second" / "tests" / "weights.py"}", line 1' in broken["local"]["stderr"]
    # A step that ships its own verifier.py: that one is what the sandbox ran for the step.
    (demo / "steps" / "second" / "tests" / "verifier.py").write_text("def verify(workspace):\n    return 0.25\n")
    (demo / "steps" / "second" / "tests" / "weights.py").unlink()
    own = as_json(tool(env, "run", job, "--step", "second", "--json", cwd=elsewhere))
    assert own["local"]["rewards"] == {"reward": 0.25}, own["local"]["stderr"]


def several(runs, tmp_path, task):
    """A job of three trials: two replay as they ran, one differs."""
    passing = task("passing", verifier=READS_HELLO, toml=SEPARATE)
    raising = task("raising", verifier=READS_HELLO, toml=SEPARATE)
    job = runs / "jobs" / "several"
    sandbox_trial(
        job, passing, tmp_path, workspace={"hello.txt": "hi"}, mode="separate", capture=True, name="passing__aaaaaaa"
    )
    sandbox_trial(job, raising, tmp_path, workspace={}, mode="separate", capture=True, name="raising__bbbbbbb")
    sandbox_trial(
        job, passing, tmp_path, workspace={"hello.txt": "no"}, mode="separate", capture=True, name="passing__ccccccc"
    )
    # The third trial's captured /app changed after the run: the replay now scores 1.0.
    (job / "passing__ccccccc" / "artifacts" / "app" / "hello.txt").write_text("hi")
    return job


def test_a_job_with_several_trials(task, runs, tmp_path, env, elsewhere):
    job = several(runs, tmp_path, task)
    done = tool(env, "run", job, cwd=elsewhere)
    assert done.returncode == 0  # the overview is an answer, not bad input
    assert done.stdout.startswith("job several · 3 trials")  # the job's overview, and how to choose
    assert "--trial NAME (passing__aaaaaaa, passing__ccccccc, raising__bbbbbbb)" in done.stdout
    assert tool(env, "run", job, "--trial", "raising__bbbbbbb", cwd=elsewhere).returncode == 1
    done = tool(env, "test", job, "-j", "2", cwd=elsewhere)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert any(line.startswith("✓  passing__aaaaaaa") and line.endswith("same") for line in lines)
    assert any(line.startswith("✓  raising__bbbbbbb") and "RewardFileNotFoundError" in line for line in lines)
    assert any(line.startswith("✗  passing__ccccccc") and line.endswith("differ") for line in lines)
    assert "2 agree, 1 differ, 0 not compared" in done.stdout
    data = as_json(tool(env, "test", job, "--json", cwd=elsewhere))
    assert (data["agree"], data["differ"], data["not_compared"]) == (2, 1, 0)
    assert [t["trial"]["name"] for t in data["trials"]] == ["passing__aaaaaaa", "passing__ccccccc", "raising__bbbbbbb"]
    assert all(set(t) >= TRIAL_KEYS for t in data["trials"])
    report = tmp_path / "junit.xml"
    tool(env, "test", job, "--junit", report, cwd=elsewhere)
    suite = ET.parse(report).getroot()
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("3", "1", "0")
    failed = [case.get("name") for case in suite if case.find("failure") is not None]
    assert failed == ["passing__ccccccc"]
    shutil.rmtree(job / "passing__ccccccc")
    assert tool(env, "test", job, cwd=elsewhere).returncode == 0  # every replay agrees


def test_test_job_replays_its_trials_at_the_same_time(task, runs, tmp_path, env, elsewhere):
    meeting_task = task("meeting", verifier=MEET_VERIFIER, toml=SEPARATE)
    job = runs / "jobs" / "pair"
    for who in ("a", "b"):
        sandbox_trial(
            job,
            meeting_task,
            tmp_path,
            workspace={"who.txt": who},
            mode="separate",
            capture=True,
            name=f"meeting__{who * 7}",
        )
    # One at a time, each waits in vain (the replays, and the test.sh runs of the two that differ).
    for jobs, agree, wait_s in (("2", "2 agree, 0 differ", 3), ("1", "0 agree, 2 differ", 1)):
        set_meeting(meeting_task / "tests", tmp_path / f"meet-{jobs}", wait_s)
        with meeting(tmp_path / f"meet-{jobs}"):
            done = tool(env, "test", job, "-j", jobs, cwd=elsewhere)
        assert agree in done.stdout, done.stdout


def test_a_trial_without_a_replay_fails_the_job_test_and_says_why(task, runs, tmp_path, env, elsewhere):
    demo = task(verifier=READS_HELLO)
    sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={"hello.txt": "hi"})
    done = tool(env, "test", runs / "jobs" / "j", cwd=elsewhere)
    assert done.returncode == 1
    assert "0 agree, 0 differ, 1 not compared" in done.stdout and "give --workspace DIR" in done.stdout


@pytest.mark.parametrize("asked", ["namespace", "namespaces"])
def test_no_sandbox_to_replay_in_is_one_line_and_exit_2_in_every_command(real, env, tmp_path, private_cache, asked):
    """No sandbox to be had (the view asked for by name on a machine without namespaces,
    a misspelt VERIFIER_TUI_SANDBOX): run TRIAL and run TASK said it in one line, exit 2,
    while test JOB made each trial a row "not replayed" and exited 1, as a verdict that
    failed, its --json a document of such rows. Now every command says the same line
    before anything runs, exit 2, and --junit's report is that refusal, never the last one."""
    needs_namespaces()  # to make a machine without them, this one must have them
    job = real / "jobs" / "nop-fail"
    trial = genuine_trial(real, "nop-fail")
    report = tmp_path / "report.xml"
    report.write_text('<testsuite name="last run" tests="1" failures="0" errors="0" />')
    empty = ("--stand-in", "empty", "--python", PY)
    commands = [
        ["run", trial, *empty],
        ["explain", trial, "--python", PY],
        ["test", trial, *empty],
        ["test", job, *empty],
        ["test", job, "--json", *empty],
        ["test", job, "--junit", report, *empty],
        ["test", real / "jobs", *empty],
        ["run", real / "tasks" / "hello-file", "--workspace", tmp_path, "--python", PY],
    ]
    said = set()
    for command in commands:
        done = machine_without_namespaces([*MODULE, *map(str, command)], dict(env, VERIFIER_TUI_SANDBOX=asked))
        no_traceback(done)
        assert (done.returncode, done.stdout) == (2, ""), (command, done.stdout, done.stderr)
        assert len(done.stderr.splitlines()) == 1, (command, done.stderr)
        said.add(done.stderr)
    assert len(said) == 1 and "VERIFIER_TUI_SANDBOX=" in said.pop()
    case = ET.parse(report).getroot().find("testcase")
    assert case is not None and case.find("error").get("message").startswith("VERIFIER_TUI_SANDBOX=")


def test_watch_trial_without_a_sandbox_to_replay_in_says_it_once_and_ends(real, env, private_cache):
    """watch TASK said in one line that no sandbox could be had and exited 2; watch TRIAL
    printed its header, "replay failed: ..." and went on watching for saves that could never
    replay. Now it says the same line before it watches, and exits 2."""
    needs_namespaces()  # to make a machine without them, this one must have them
    trial = genuine_trial(real, "nop-fail")
    asked = dict(env, VERIFIER_TUI_SANDBOX="namespace")
    said = []
    for path, stand_in in ((trial, ["--stand-in", "empty"]), (real / "tasks" / "hello-file", [])):
        done = machine_without_namespaces([*MODULE, "watch", str(path), *stand_in, "--python", PY], asked, 30)
        no_traceback(done)
        assert (done.returncode, len(done.stderr.splitlines())) == (2, 1), (path, done.stdout, done.stderr)
        said.append(done.stderr)
    assert said[0] == said[1] and said[0].startswith("verifier-tui: VERIFIER_TUI_SANDBOX=namespace, but ")


def test_watch_trial_json_without_a_sandbox_exits_as_its_documentation_says(real, env, private_cache):
    """docs/json-output.md gave ``watch TRIAL --json`` only exit 0 (after Ctrl+C), yet where no sandbox
    can be had it exits 2 with nothing on stdout: a script reading the page took that for a clean end."""
    from tests.helpers.commands import JSON_DOC

    needs_namespaces()  # to make a machine without them, this one must have them
    trial = genuine_trial(real, "nop-fail")
    watch = [*MODULE, "watch", str(trial), "--stand-in", "empty", "--json", "--python", PY]
    done = machine_without_namespaces(watch, dict(env, VERIFIER_TUI_SANDBOX="namespace"), 30)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    rows = JSON_DOC.read_text(encoding="utf-8").splitlines()
    row = next(line for line in rows if line.startswith("| `verifier-tui watch TRIAL --json`"))
    exits = row.strip(" |").split(" | ")[-1]
    assert "`2`" in exits and "nothing on stdout" in exits and "no sandbox" in exits, exits


def test_watch_trial_json_on_bad_input_exits_as_its_documentation_says(real, env, tmp_path):
    """docs/json-output.md gave ``watch TRIAL --json`` exit 2 for no sandbox alone, yet a ``--python`` that
    cannot run and a trial folder that is not there end it so too, in one line, nothing on stdout."""
    trial = genuine_trial(real, "nop-fail")
    faces = [
        [trial, "--stand-in", "empty", "--python", "/nonexistent/python3"],
        [tmp_path / "no-such-trial", "--python", PY],
    ]
    for args in faces:
        done = run_tool(env, "watch", *args, "--json", cwd=tmp_path)
        no_traceback(done)
        assert (done.returncode, done.stdout, len(done.stderr.splitlines())) == (2, "", 1), (args, done.stderr)
    rows = JSON_DOC.read_text(encoding="utf-8").splitlines()
    row = next(line for line in rows if line.startswith("| `verifier-tui watch TRIAL --json`"))
    exits = row.strip(" |").split(" | ")[-1]
    assert "--python" in exits and "does not exist" in exits, exits


def test_a_paragraph_that_applies_to_many_trials_is_said_once_with_them(task, runs, tmp_path, env, elsewhere):
    demo = task(verifier=READS_HELLO)
    job = runs / "jobs" / "j"
    for name in ("demo__aaaaaaa", "demo__bbbbbbb", "demo__ccccccc"):
        sandbox_trial(job, demo, tmp_path, workspace={"hello.txt": "hi"}, name=name)
    done = tool(env, "test", job, cwd=elsewhere)
    assert done.stdout.count("no workspace to replay on") == 1
    assert "── 3 trials (demo__aaaaaaa, demo__bbbbbbb, demo__ccccccc): no replay" in done.stdout
    assert "0 agree, 0 differ, 3 not compared" in done.stdout


def test_a_test_sh_that_ended_before_the_runner_is_its_own_outcome_at_its_line(task, runs, env, elsewhere):
    """Under ``set -e`` a failed ``cd`` ends test.sh before the runner: no
    step of the runner happened, in the sandbox or in the replay, which the
    runner run alone (every step done, reward.txt 1.0) must not stand for."""
    needs_namespaces()  # test.sh names /tests and /app: it runs only in the sandbox's view
    missing = f"/opt/verifier-tui-no-runtime-{os.getpid()}"
    demo = task(toml='version = "1.0"\nartifacts = ["/app"]\n')
    script = SHIM.replace("set -u\n", f"set -eu\ncd {missing}\n", 1)
    (demo / "tests" / "test.sh").write_text(script)
    line = script.splitlines().index(f"cd {missing}") + 1
    said = f"/tests/test.sh: line {line}: cd: {missing}: No such file or directory\n"
    make_job(
        runs / "jobs" / "j",
        {
            "demo__aaaaaaa": dict(
                task=demo,
                app={"answer.txt": "42"},
                verifier_files={"test-stdout.txt": said},
                exception=harbor_exception(NOT_FOUND, "No reward file found at /logs/verifier/reward.txt"),
            )
        },
    )
    trial = runs / "jobs" / "j" / "demo__aaaaaaa"
    done = tool(env, "run", trial, cwd=elsewhere)
    assert done.returncode == 1  # the script's exit: cd failed
    out = done.stdout
    where = f"tests/test.sh:{line} (cd: {missing}: No such file or directory) before it started the runner"
    assert f"root cause  {NOT_FOUND} (in the verifier): test.sh ended at {where}" in out
    replay = next(row for row in out.splitlines() if row.startswith("replay "))
    assert replay.startswith(f"replay    {NOT_FOUND} · exit 1 · test.sh ended before the runner")
    assert f"tests/test.sh:{line}" in out.split("failed at ")[1].splitlines()[0]
    steps = out.split("\nstep ")[1].split("\nsandbox: ")[0].splitlines()[1:]
    assert len(steps) == 8 and all(row.count("· not reached") == 2 for row in steps)
    assert "reward.txt: 1.0" not in out
    assert f"          - why: test.sh ended at {where}" in out
    data = as_json(tool(env, "run", trial, "--json", cwd=elsewhere))
    assert data["local"]["outcome"] == "test_sh_ended" and data["local_phases"]["stopped_at"] == "test_sh"
    assert data["local_failure"]["line"] == line and data["same"] is True and data["judged_by"] == "test.sh"
    assert data["runner_alone"]["rewards"] == {"reward": 1.0}
    # Where the script cannot run (the copy sandbox has no /tests), the runner's 1.0 differs, and why is said.
    copied = as_json(tool(dict(env, VERIFIER_TUI_SANDBOX="copy"), "run", trial, "--json", cwd=elsewhere))
    assert copied["same"] is False and copied["judged_by"] == "runner"
    assert copied["differences"][2] == (
        f"in the sandbox, test.sh ended at {where}; the replay ran verifier-tui's runner without the script, "
        "which it runs only in the sandbox's view (/tests and /app, as the script names them)"
    )
    # test JOB tells the same story: the script judged, the runner alone's 1.0 is its own.
    job = tool(env, "test", runs / "jobs" / "j", cwd=elsewhere).stdout.splitlines()
    at = job.index("── demo__aaaaaaa: same")
    assert job[at + 1 : at + 4] == [
        "  the replay (the task's test.sh, run as the sandbox ran it) ended as the sandbox did",
        "  - verifier-tui's runner alone, on the same inputs, ended otherwise: 1.0 (exit 0 · reward written)",
        f"  - why: test.sh ended at {where}",
    ]


GRADING_MODE = (
    "def verify(workspace):\n"
    "    mode = (workspace / '.grading-mode').read_text().strip()\n"
    "    return 1.0 if mode == 'strict' and (workspace / 'out.txt').exists() else 0.0\n"
)


def test_a_test_sh_that_prepares_a_file_first_tells_one_story(task, runs, env, elsewhere):
    """The verdict agrees only through the task's test.sh, which writes
    /app/.grading-mode before it starts the runner: every surface says which
    run judged, where verifier-tui's runner run alone parts, and why."""
    needs_namespaces()
    demo = task(verifier=GRADING_MODE, toml='version = "1.0"\nartifacts = ["/app"]\n')
    script = SHIM.replace("set -u\n", "set -eu\ncd /app\necho strict > /app/.grading-mode\n", 1)
    (demo / "tests" / "test.sh").write_text(script)
    first = script.splitlines().index("cd /app") + 1
    passing = dict(
        task=demo,
        app={"out.txt": "x"},
        rewards={"reward": 1.0},
        verifier_files={"test-stdout.txt": "", "reward.txt": "1.0"},
    )
    job = make_job(runs / "jobs" / "j", {"prep__aaaaaaa": passing, "prep__bbbbbbb": passing})
    story = [
        "verifier-tui's runner alone, on the same inputs, ended otherwise: RewardFileNotFoundError "
        "(exit 1 · verifier raised)",
        "it parts from the sandbox at 'verify called and awaited': the sandbox got through it, the runner alone failed",
        f"why: tests/test.sh runs commands of its own before it starts the runner, which the runner alone "
        f"does not: line {first} `cd /app`, "
        f"line {first + 1} `echo strict > /app/.grading-mode`",
    ]
    done = tool(env, "run", job, "--trial", "prep__aaaaaaa", cwd=elsewhere)
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    at = lines.index(
        "agreement same: the replay (the task's test.sh, run as the sandbox ran it) ended as the sandbox did"
    )
    assert lines[at + 1 : at + 4] == [f"          - {line}" for line in story]
    assert "runner alone" in next(row for row in lines if row.startswith("step "))
    assert "what the agent may not have produced" not in done.stdout and "they part at" not in done.stdout
    data = as_json(tool(env, "run", job, "--trial", "prep__aaaaaaa", "--json", cwd=elsewhere))
    assert data["same"] is True and data["judged_by"] == "test.sh" and data["story"] == story
    assert data["parted_at"] is None and data["runner_alone"]["parted_at"]["phase"] == "verify_called"
    assert ".grading-mode" in data["runner_alone"]["why"] and data["local_phases"]["advice"] == ""
    done = tool(env, "test", job, cwd=elsewhere)
    assert done.returncode == 0
    assert "verifier-tui's runner judged" not in done.stdout
    lines = done.stdout.splitlines()
    at = lines.index("── 2 trials (prep__aaaaaaa, prep__bbbbbbb): same")
    assert lines[at + 1 : at + 5] == [
        "  the replay (the task's test.sh, run as the sandbox ran it) ended as the sandbox did",
        *(f"  - {line}" for line in story),
    ]
    streamed = as_json(tool(env, "test", job, "--json", cwd=elsewhere))
    assert [t["story"] for t in streamed["trials"]] == [story, story]


def test_watch_tells_the_story_of_a_trial_judged_by_test_sh(task, runs, env, elsewhere):
    """Each watch line of a replay judged by the task's test.sh, while the
    runner alone ends otherwise, names the judge, then that runner's story."""
    needs_namespaces()
    demo = task(verifier=GRADING_MODE, toml='version = "1.0"\nartifacts = ["/app"]\n')
    (demo / "tests" / "test.sh").write_text(SHIM.replace("set -u\n", "set -eu\necho strict > /app/.grading-mode\n"))
    files = {"test-stdout.txt": "", "reward.txt": "1.0"}
    passing = dict(task=demo, app={"out.txt": "x"}, rewards={"reward": 1.0}, verifier_files=files)
    trial = make_job(runs / "jobs" / "j", {"prep__aaaaaaa": passing}) / "prep__aaaaaaa"
    proc = subprocess.Popen(
        [*TOOL, "watch", str(trial), "--python", PY],
        cwd=elsewhere,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    try:
        lines: list[str] = []
        while not lines or not lines[-1].lstrip().startswith("why:"):  # the trial's header, then replay #1
            line = proc.stdout.readline()
            assert line, f"watch ended before its first replay was told: {lines}"
            lines = [*lines, line] if lines or line.startswith("#1 ") else lines
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    assert " same " in lines[0]
    assert [line.strip() for line in lines[1:3]] == [
        "the replay (the task's test.sh, run as the sandbox ran it) ended as the sandbox did",
        "verifier-tui's runner alone, on the same inputs, ended otherwise: RewardFileNotFoundError "
        "(exit 1 · verifier raised)",
    ]
    assert len(lines) == 5 and lines[4].strip().startswith("why: tests/test.sh runs commands of its own before")


def test_a_verifier_env_template_is_filled_with_its_default_and_said(task, runs, env, elsewhere):
    """Harbor filled ``${CUTOFF:-0.6}`` on the machine that ran the job and
    recorded nothing: a replay takes the default (not this shell's CUTOFF),
    says so, and lists it among the reasons when the two differ; each of the
    runner's variables is labelled by the table it was written in."""
    verifier = "import os\n\ndef verify(workspace):\n    return 1.0 if float(os.environ['CUTOFF']) <= 0.7 else 0.0\n"
    toml = (
        'version = "1.0"\nartifacts = ["/app"]\n\n[verifier]\nenv = { CUTOFF = "${CUTOFF:-0.6}" }\n\n'
        '[environment]\nenv = { MODE = "strict" }\n'
    )
    demo = task(verifier=verifier, toml=toml)
    files = {"test-stdout.txt": "", "reward.txt": "1.0"}
    passing = dict(task=demo, app={"out.txt": "x"}, rewards={"reward": 1.0}, verifier_files=files)
    trial = make_job(runs / "jobs" / "j", {"cut__aaaaaaa": passing}) / "cut__aaaaaaa"
    env = dict(env, CUTOFF="0.9")  # this shell's CUTOFF, set for something else
    done = tool(env, "run", trial, cwd=elsewhere)
    assert "agreement same: the replay ended as the sandbox did" in done.stdout
    filled = (
        "task.toml [verifier] env writes CUTOFF = '${CUTOFF:-0.6}', which Harbor filled on the machine that ran "
        "the job and recorded nowhere; the replay takes"
    )
    assert f"  note: {filled} CUTOFF='0.6' from the template's default (--env CUTOFF=VALUE" in done.stdout
    replayed = as_json(tool(env, "run", trial, "--env", "CUTOFF=0.9", "--json", cwd=elsewhere))
    differences = replayed["differences"]
    assert replayed["same"] is False and f"{filled} CUTOFF from --env CUTOFF" in differences
    # Said before the shared-mode snapshot, which every such replay stands on: not the /app to blame first.
    snapshot = next(i for i, said in enumerate(differences) if said.startswith("the workspace is the shared-mode"))
    assert differences.index(f"{filled} CUTOFF from --env CUTOFF") < snapshot
    for run in (replayed["local"], as_json(tool(env, "run", demo, "--json", cwd=elsewhere))):
        sources = {p["name"]: (p["source"], p["value"]) for p in run["environment"]["passed"]}
        assert sources["MODE"] == ("task.toml [environment] env", "strict")
    assert sources["CUTOFF"] == ("task.toml [verifier] env", "${CUTOFF:-0.6}")


def test_an_old_layout_trial(task, runs, tmp_path, env, elsewhere):
    demo = task(verifier=READS_HELLO)
    run = sandbox_run(demo, tmp_path / "sandbox", workspace={"hello.txt": "hi"})
    make_job(
        runs / "jobs" / "j",
        {
            "demo__aaaaaaa": dict(
                task=demo, rewards={"reward": 1.0}, verifier_files=run.files, old_layout=True, app={"hello.txt": "hi"}
            )
        },
    )
    data = as_json(tool(env, "run", runs / "jobs" / "j", "--json", cwd=elsewhere))
    absent = " ".join(data["trial"]["absent"])
    assert "lock.json" in absent and "schema_version" in absent and "verifier_environment_mode" in absent
    assert "manifest.json" in absent
    assert data["trial"]["verifier_mode"] == "shared" and data["trial"]["verifier_mode_source"] == "task.toml"
    assert data["same"] is True
    done = tool(env, "run", runs / "jobs" / "j", cwd=elsewhere)
    assert "note: lock.json (written from Harbor 0.17.0)" in done.stdout


def test_explain_a_trial_does_not_call_verify(task, runs, tmp_path, env, elsewhere):
    demo = task(
        verifier="from pathlib import Path\n\ndef verify(workspace, task_data, threshold=0.5):\n"
        "    Path(%r).write_text('called')\n    return 1.0\n" % str(tmp_path / "called"),
        toml=SEPARATE,
    )
    (tmp_path / "called").unlink(missing_ok=True)
    trial = sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={}, mode="separate", capture=True)
    (tmp_path / "called").unlink()
    done = tool(env, "explain", trial.path, cwd=elsewhere)
    assert done.returncode == 0
    assert "verify(workspace, task_data, threshold=0.5)" in done.stdout
    assert "sys.path  in the order the runner placed it" in done.stdout  # as explain TASK says it
    assert "threshold  positional or keyword  default 0.5: not an argument the runner knows" in done.stdout
    assert not [line for line in done.stdout.splitlines() if line.endswith(" ")], done.stdout  # the phases' lines too
    assert not (tmp_path / "called").exists()
    data = as_json(tool(env, "explain", trial.path, "--json", cwd=elsewhere))
    assert data["explain"]["would_call_verify"] is True and data["local"] is None
    assert data["local_skipped"] == "explain does not call verify"


def test_explain_a_trial_says_the_sandbox_the_verifiers_import_ran_in(task, runs, tmp_path, env, elsewhere, sandbox):
    """A later tour: ``explain TRIAL`` imports the trial's verifier, whose
    import-time code ran in the copy sandbox without a word that it could
    write the user's files."""
    demo = task(toml=SEPARATE)
    trial = sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={}, mode="separate", capture=True)
    env = dict(env, VERIFIER_TUI_SANDBOX=sandbox)
    data = as_json(tool(env, "explain", trial.path, "--json", cwd=elsewhere))["explain"]
    assert data["sandbox"] == sandbox, data
    said = tool(env, "explain", trial.path, cwd=elsewhere).stdout
    assert f"  {data['sandbox_words']}" in said.splitlines(), said
    if sandbox == "copy":
        assert "can write your files" in data["sandbox_words"]


def test_watch_a_trial_prints_one_line_per_replay_with_the_agreement(task, runs, tmp_path, env, elsewhere):
    demo, trial = captured_trial(task, runs, tmp_path)
    proc, reader = start_watch(env, trial.path, "--python", PY, cwd=elsewhere)
    try:
        # The first replay is asked for once the watcher is in place: a file
        # written after its line is printed is seen, with no wait.
        first = reader.next_run()
        assert first.startswith("#1 ") and "start" in first and " same " in first, first
        (demo / "tests" / "verifier.py").write_text(READS_HELLO.replace("'hi'", "'hello'"))
        second = reader.next_run()
        assert second.startswith("#2 ") and "tests/verifier.py" in second, second
        assert " differ " in second and "replay 0.0" in second, second
        said = reader.next_run(prefix="  ")
        while "the sandbox ended with" not in said:
            said = reader.next_run(prefix="  ")
        assert "the sandbox ended with 1.0, the replay with 0.0" in said, said
    finally:
        code, stderr = stop(proc)
    rest = []
    while (line := reader.lines.get(timeout=30)) is not None:  # the lines printed as it stopped, to its end
        rest.append(line)
    assert code == 0 and "Traceback" not in stderr, stderr
    assert any("stopped after 2 replay(s) started" in line for line in rest), rest


def test_watch_a_trial_json_stopped_by_sigterm_exits_143_with_whole_documents(task, runs, tmp_path, env, elsewhere):
    """A CI job's timeout ends ``watch TRIAL --json`` as it ends ``watch TASK --json``: exit 143,
    and every line printed is a whole trial document."""
    _demo, trial = captured_trial(task, runs, tmp_path)
    proc, reader = start_watch(env, trial.path, "--python", PY, "--json", cwd=elsewhere)
    try:
        first = json.loads(reader.next_run(prefix="{"))
        assert first["same"] is True and first["local"]["trigger"] == "start", first
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=30)
    while (line := reader.lines.get(timeout=30)) is not None:
        json.loads(line)
    assert code == 143, proc.stderr.read()


def test_watch_a_trial_replays_a_save_at_once_while_a_replay_is_stuck(task, runs, tmp_path, env, elsewhere):
    """The task's verifier stuck in a loop, then the fix saved: watch TRIAL waited for the stuck
    replay's timeout before it replayed the fix, saying nothing meanwhile. A save ends the replay
    in flight, says so, and replays the files as saved."""
    demo, trial = captured_trial(task, runs, tmp_path)
    proc, reader = start_watch(env, trial.path, "--python", PY, cwd=elsewhere)
    try:
        assert reader.next_run().startswith("#1 ")
        verifier = demo / "tests" / "verifier.py"
        verifier.write_text(STUCK_ONCE_STARTED)
        wait_started(env["TMPDIR"])  # the stuck replay under way: a save now cuts it short
        verifier.write_text(READS_HELLO.replace("'hi'", "'hello'"))
        said = reader.through_next_run()
    finally:
        code, stderr = stop(proc)
    assert code == 0 and "Traceback" not in stderr, stderr
    # The replay cut short has its number, as watch TASK's runs do: the next is #3, with no gap unsaid.
    assert said[0] == "replay #2 cut short (tests/verifier.py): a file changed meanwhile, and it runs again", said
    assert said[-1].startswith("#3 ") and "replay 0.0" in said[-1], said


def test_watch_a_trial_whose_folder_is_renamed_says_the_trial_folder_moved(task, runs, tmp_path, env, elsewhere):
    # `mv TRIAL elsewhere` while watched: the replay's line said `workspace deleted`, as if the user had deleted a
    # workspace of theirs, where the trial folder, which holds the captured /app, is what went.
    demo, trial = captured_trial(task, runs, tmp_path)
    proc, reader = start_watch(env, trial.path, "--python", PY, cwd=elsewhere)
    try:
        first = reader.next_run()
        assert first.startswith("#1 ") and " same " in first, first
        trial.path.rename(trial.path.with_name("renamed"))
        second = reader.next_run()
        assert second.startswith("#2 ") and "trial folder moved or gone" in second, second
        assert "workspace deleted" not in second and "the trial folder is no longer there" in second, second
    finally:
        code, stderr = stop(proc)
    assert code == 0 and "Traceback" not in stderr, stderr


def test_run_trial_json_names_the_jobs_variables_its_command_lacks(task, runs, env, elsewhere):
    # local.command, run TASK, reads the task's env only: the job's verifier.env (and environment.env) the replay
    # had were left out with nothing saying so, where the TUI's c says it. Named, never their values.
    demo = task(verifier="def verify(workspace):\n    return 1.0\n")
    folder = trial_with_job_env(runs, demo, {"MODE": "strict", "KEY": "s3"})
    data = as_json(tool(env, "run", folder, "--json", "--env", "MODE=strict", cwd=elsewhere))
    assert data["local"]["command"][-2:] == ["--env", "MODE=strict"]
    assert data["command_lacks_env"] == ["KEY"]  # MODE, the command carries
    assert "s3" not in json.dumps(data["command_lacks_env"])


def test_run_trial_json_names_the_templates_its_command_fills_otherwise(task, runs, env, elsewhere):
    # local.command, run TASK, fills the task.toml's ${VAR} from the user's shell, where the replay took a template's
    # default or ran without it: the command was taken for the same run. Named, as the job's variables are.
    toml = (
        'version = "1.0"\nartifacts = ["/app"]\n\n'
        '[verifier]\nenv = { Z = "${VTUI_SECRET}", W = "${VTUI_SECRET:-d}", L = "literal", N = "${VTUI_SECRET:-n}" }\n'
    )
    demo = task(verifier="def verify(workspace):\n    return 1.0\n", toml=toml)
    folder = trial_with_job_env(runs, demo, {"MODE": "strict"})
    data = as_json(tool(dict(env, VTUI_SECRET="s3"), "run", folder, "--json", "--env", "N=n", cwd=elsewhere))
    assert data["command_lacks_env"] == ["MODE", "W", "Z"]  # N, the command carries; L is no template


def test_run_trial_json_does_not_name_templates_your_shell_cannot_fill(task, runs, env, elsewhere):
    # The replay ran without Z = "${VTUI_NOPE}" and took W's default; with no VTUI_NOPE in the shell, run TASK does
    # exactly that too, yet command_lacks_env named both (and c said "from your environment: not the same run").
    toml = 'version = "1.0"\nartifacts = ["/app"]\n\n[verifier]\nenv = { Z = "${VTUI_NOPE}", W = "${VTUI_NOPE:-d}" }\n'
    folder = trial_with_job_env(runs, task(toml=toml), {})
    shell = dict(env)
    shell.pop("VTUI_NOPE", None)
    assert as_json(tool(shell, "run", folder, "--json", cwd=elsewhere))["command_lacks_env"] == []
    shell["VTUI_NOPE"] = "set"
    assert as_json(tool(shell, "run", folder, "--json", cwd=elsewhere))["command_lacks_env"] == ["W", "Z"]


def test_run_trial_json_names_the_templates_its_env_filled_that_run_task_fills_otherwise(task, runs, env, elsewhere):
    # run TRIAL --env VTUI_SECRET=s3 filled Z = "${VTUI_SECRET}"; local.command, run TASK ... --env VTUI_SECRET=s3,
    # fills Z from --env too but passes VTUI_SECRET itself, which the replay held back: not the same run, yet
    # command_lacks_env was []. Y's VTUI_MINE is a table's own name, passed by both and filling Y from --env in
    # both, whatever the shell holds: the same run.
    toml = (
        'version = "1.0"\nartifacts = ["/app"]\n\n[verifier]\n'
        'env = { Z = "${VTUI_SECRET}", Y = "${VTUI_MINE}", VTUI_MINE = "lit" }\n'
    )
    folder = trial_with_job_env(runs, task(toml=toml), {})
    shell = dict(env)
    for name in ("VTUI_SECRET", "VTUI_MINE"):
        shell.pop(name, None)
    args = ("--env", "VTUI_SECRET=s3", "--env", "VTUI_MINE=m")
    assert as_json(tool(shell, "run", folder, "--json", *args, cwd=elsewhere))["command_lacks_env"] == ["Z"]
    shell.update(VTUI_MINE="shell's", VTUI_SECRET="s3")  # Z still: run TASK would pass VTUI_SECRET itself
    assert as_json(tool(shell, "run", folder, "--json", *args, cwd=elsewhere))["command_lacks_env"] == ["Z"]


def test_run_trial_json_names_a_template_of_a_job_variable_that_its_env_would_fill(
    task, runs, env, elsewhere, tmp_path
):
    # config.json's verifier.env MODE=strict is the verifier's, not the host's: the replay filled W = "${MODE:-d}"
    # with d (reward 1.0). command_lacks_env was ["MODE"], and following it (run TASK --env MODE=strict) filled W
    # with strict, since --env fills a task's templates: reward 0.0. W is named too, and with --env W=d beside
    # MODE's the command ends as the replay did.
    toml = 'version = "1.0"\nartifacts = ["/app"]\n\n[verifier]\nenv = { W = "${MODE:-d}" }\n'
    reads_w = "import os\n\ndef verify(workspace):\n    return float(os.environ.get('W') == 'd')\n"
    demo = task(verifier=reads_w, toml=toml)
    folder = trial_with_job_env(runs, demo, {"MODE": "strict"})
    shell = {k: v for k, v in env.items() if k != "MODE"}
    data = as_json(tool(shell, "run", folder, "--json", cwd=elsewhere))
    assert data["local"]["rewards"] == {"reward": 1.0}, data["local"]
    assert data["command_lacks_env"] == ["MODE", "W"], data["command_lacks_env"]
    followed = ("--env", "MODE=strict", "--env", "W=d")
    empty = tmp_path / "empty-app"  # the trial captured /app empty
    empty.mkdir()
    ran = as_json(tool(shell, "run", demo, "--json", "--workspace", empty, *followed, cwd=elsewhere))
    assert ran["rewards"] == {"reward": 1.0}, ran
    again = as_json(tool(shell, "run", folder, "--json", *followed, cwd=elsewhere))
    assert again["command_lacks_env"] == [] and again["local"]["rewards"] == {"reward": 1.0}, again


def test_watch_a_trial_on_a_workspace_of_yours_says_a_save_after_the_trial_folder_moved(
    task, runs, tmp_path, env, elsewhere
):
    # `watch TRIAL --workspace mine`, the trial folder moved, then tests/verifier.py saved: the replay that save
    # set off was said to be for "trial folder moved or gone"; it is for the save.
    demo = task(verifier=READS_HELLO, toml=SEPARATE)
    trial = sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={"hello.txt": "hi"}, mode="separate")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "hello.txt").write_text("hi")
    proc, reader = start_watch(env, trial.path, "--python", PY, "--workspace", mine, cwd=elsewhere)
    try:
        first = reader.next_run()
        assert first.startswith("#1 ") and " same " in first, first
        trial.path.rename(trial.path.with_name("renamed"))
        time.sleep(1)  # the watcher sees nothing of the trial folder here (the workspace is the user's)
        (demo / "tests" / "verifier.py").write_text(READS_HELLO.replace("'hi'", "'hello'"))
        second = reader.next_run()
        assert second.startswith("#2 ") and "tests/verifier.py" in second, second
        assert "trial folder moved or gone" not in second, second
    finally:
        code, stderr = stop(proc)
    assert code == 0 and "Traceback" not in stderr, stderr


@pytest.mark.parametrize(
    "args, words",
    [
        (["--response", "{task}/tests/verifier.py"], "--response: a trial replays in Harbor mode"),
        (["--verifier", "x.py"], "--verifier: a trial replays the verifier its task's tests/test.sh names"),
        (["--both-modes"], "--both-modes: a trial replays in Harbor mode only"),
    ],
)
def test_options_that_do_not_apply_to_a_trial_say_so(task, runs, tmp_path, env, elsewhere, args, words):
    demo = task()
    trial = sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={})
    done = tool(env, "run", trial.path, *[a.format(task=demo) for a in args], cwd=elsewhere)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().startswith(f"verifier-tui: {words}")


@pytest.mark.parametrize("command", ["run", "explain", "watch", "test"])
def test_a_python_that_cannot_run_the_runner_is_bad_input_on_a_trial_too(task, runs, tmp_path, env, elsewhere, command):
    """``run TRIAL --python /nonexistent/python3`` printed the whole
    walkthrough and exited 127 (the shim's "not found"), ``test JOB`` 1 with
    each trial "could not start", where the same option on a task is bad
    input: one line, exit 2, nothing run."""
    trial = sandbox_trial(runs / "jobs" / "j", task(), tmp_path, workspace={}, capture=True)
    done = run_tool(env, command, trial.path, "--python", "/nonexistent/python3", cwd=elsewhere)
    no_traceback(done)
    assert (done.returncode, done.stdout) == (2, "")
    said = "verifier-tui: --python /nonexistent/python3: No such file or directory"
    assert done.stderr.strip().splitlines() == [said]


@pytest.mark.parametrize("where", ["jobs", "job", "trial without /app"])
def test_a_python_is_checked_only_where_a_replay_runs(task, runs, tmp_path, env, elsewhere, where):
    """The list of jobs, a job's overview and the walkthrough of a trial that
    captured no /app run nothing, yet with no python3 on PATH (or a bad
    ``--python``) each said ``--python python3: not found on PATH``, exit 2,
    instead of what it shows: the interpreter is checked only where a replay runs."""
    made = task()
    first = sandbox_trial(runs / "jobs" / "j", made, tmp_path, workspace={}, capture=where == "job")
    if where == "job":
        sandbox_trial(runs / "jobs" / "j", made, tmp_path, workspace={}, name="demo__bbbbbbb")
    target = {"jobs": runs / "jobs", "job": runs / "jobs" / "j", "trial without /app": first.path}[where]
    # the tool itself runs with sys.executable; python3 is nowhere on its PATH
    bare = tmp_path / "bin"
    bare.mkdir()
    for needed in ("bwrap",):
        found = shutil.which(needed)
        if found:
            (bare / needed).symlink_to(found)
    done = run_tool({**env, "PATH": str(bare)}, "run", target, cwd=elsewhere)
    no_traceback(done)
    assert "--python" not in done.stderr
    assert done.returncode == (2 if where == "trial without /app" else 0)  # 2: there was no replay
    assert done.stdout.strip()
    done = run_tool(env, "run", target, "--python", "/nonexistent/python3", cwd=elsewhere)
    assert "--python" not in done.stderr
    assert done.returncode == (2 if where == "trial without /app" else 0)
    assert done.stdout.strip()


def test_trial_options_on_a_task_say_so(task, env, elsewhere):
    done = tool(env, "run", task(), "--trial", "x", cwd=elsewhere)
    assert done.returncode == 2
    assert "--trial: only for a Harbor trial or job folder" in done.stderr


def test_both_modes_makes_a_required_response_obvious(example, env, elsewhere):
    task_dir = example("count-errors")
    done = tool(env, "run", task_dir, "--case", "response-json", "--both-modes", cwd=elsewhere)
    assert done.returncode == 2  # Harbor mode's status: what every published run faces
    assert "✓ environment-server mode (with a response): exit 0 · reward written" in done.stdout
    assert "✗ Harbor mode (no response): exit 2 · contract error" in done.stdout
    assert "every published Harbor run of this task would score RewardFileNotFoundError" in done.stdout
    data = as_json(tool(env, "run", task_dir, "--case", "response-json", "--both-modes", "--json", cwd=elsewhere))
    assert data["works"] == {"server": True, "harbor": False}
    assert data["server"]["mode"] == "server" and data["harbor"]["mode"] == "harbor"
    assert data["server"]["expected_matched"] is True and data["harbor"]["expected"] is None
    done = tool(env, "run", example("hello-file"), "--both-modes", "--json", cwd=elsewhere)
    data = as_json(done)
    assert done.returncode == 0 and data["server"] is None and data["works"] == {"server": None, "harbor": True}
    assert data["server_skipped"].startswith("no response to run the environment-server mode with")


def test_both_modes_says_when_harbor_would_score_otherwise_and_whether_the_case_matched(task, env, elsewhere):
    """A verify whose default response scores 0.0 works in both modes, yet every
    published Harbor run scores 0.0 where the environment server scores 1.0: the
    summary said only "the verifier works in both modes", and the text left out
    the case's expected.json verdict that --json has."""
    demo = task(
        verifier="def verify(workspace, response=None):\n    return 1.0 if response else 0.0\n",
        cases={"answered": {}},
    )
    case = demo / "cases" / "answered"
    (case / "response.json").write_text('{"ok": true}\n', encoding="utf-8")
    (case / "expected.json").write_text('{"rewards": {"reward": 0.5}}\n', encoding="utf-8")
    done = tool(env, "run", demo, "--case", "answered", "--both-modes", cwd=elsewhere)
    assert done.returncode == 0, done.stderr  # both wrote a reward: the exit status is the runs'
    lines = done.stdout.splitlines()
    server = lines.index(
        '✓ environment-server mode (with a response): exit 0 · reward written · {"reward": 1.0}  (from reward.txt)'
    )
    assert lines[server + 1] == '    expected {"rewards": {"reward": 0.5}}: DID NOT MATCH'
    assert lines[-1] == (
        'the verifier works in both modes but scores otherwise in each: {"reward": 1.0} in environment-server '
        'mode, {"reward": 0.0} in Harbor mode, which is what every published Harbor run of this task would '
        "score on this workspace"
    )
    data = as_json(tool(env, "run", demo, "--case", "answered", "--both-modes", "--json", cwd=elsewhere))
    assert data["same_rewards"] is False and data["summary"] == lines[-1]
    assert data["server"]["expected_matched"] is False
    (case / "response.json").unlink()  # Harbor mode is now the case's own run, and the server mode not run
    data = as_json(tool(env, "run", demo, "--case", "answered", "--both-modes", "--json", cwd=elsewhere))
    assert data["same_rewards"] is None and data["harbor"]["expected_matched"] is False
    demo.joinpath("tests", "verifier.py").write_text("def verify(workspace, response=None):\n    return 1\n")
    (case / "response.json").write_text('{"ok": true}\n', encoding="utf-8")
    data = as_json(tool(env, "run", demo, "--case", "answered", "--both-modes", "--json", cwd=elsewhere))
    assert data["same_rewards"] is True and data["summary"] == "the verifier works in both modes"


def test_both_modes_says_an_unapplied_expectation_of_the_mode_it_is_true_of(example, env, elsewhere):
    """``--response`` on a case without one: the server run is not the case's
    own, its expected.json is not applied; Harbor mode is the case's own run and
    matched. The note "the case's expected.json is not applied" was printed
    above both modes and was in Harbor mode's --json notices beside
    ``expected_matched: true``."""
    response = elsewhere / "resp.json"
    response.write_text('{"x": 1}\n', encoding="utf-8")
    args = ("run", example("hello-file"), "--case", "correct", "--both-modes", "--response", response)
    done = tool(env, *args, cwd=elsewhere)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    note = (
        "    note: the case's expected.json is not applied: the case has no response: its expected.json is for "
        "a run without one"
    )
    server = next(i for i, line in enumerate(lines) if line.startswith("✓ environment-server mode"))
    harbor = next(i for i, line in enumerate(lines) if line.startswith("✓ Harbor mode"))
    assert lines[server + 1 : harbor] == [note], done.stdout
    assert lines[harbor + 1] == '    expected {"rewards": {"reward": 1.0}}: matched'
    assert not any("expected.json is not applied" in line for line in lines[:server] + lines[harbor:])
    data = as_json(tool(env, *args, "--json", cwd=elsewhere))
    assert data["harbor"]["expected_matched"] is True
    assert not any("expected.json" in n for n in data["harbor"]["notices"]), data["harbor"]["notices"]
    assert data["server"]["expected_matched"] is None and note.strip()[6:] in data["server"]["notices"]


def test_both_modes_on_a_task_harbor_would_refuse_says_neither_mode_works(task, env, elsewhere):
    """A task.toml Harbor would refuse (``version = 1``): run exits 2 and says
    Harbor would refuse the task, but --both-modes marked both modes ✓ and
    summed up "the verifier works in both modes" (--json: works true, true)."""
    demo = task(
        verifier="def verify(workspace, response=None):\n    return 1.0\n", toml="version = 1\n", cases={"c": {}}
    )
    (demo / "cases" / "c" / "response.json").write_text("{}\n", encoding="utf-8")
    done = tool(env, "run", demo, "--both-modes", cwd=elsewhere)
    assert done.returncode == 2, done.stdout
    modes = [line for line in done.stdout.splitlines() if " mode (" in line and not line.startswith("note")]
    assert [line[0] for line in modes] == ["✗", "✗"], modes
    assert done.stdout.splitlines()[-1] == (
        "Harbor would refuse to run this task: version = 1 is not a string (Harbor's loader raises "
        "pydantic ValidationError); no published Harbor run of it scores, whatever the verifier does"
    )
    data = as_json(tool(env, "run", demo, "--both-modes", "--json", cwd=elsewhere))
    assert data["works"] == {"harbor": False, "server": False} and data["same_rewards"] is None
    assert data["summary"] == done.stdout.splitlines()[-1]


def test_both_modes_says_the_notes_run_says_and_each_mode_is_a_whole_run_document(example, env, elsewhere):
    """On a plain test.sh task, ``run`` notes that Harbor would run the
    task's script, not this verifier; ``run --both-modes`` said nothing of it
    (nor any other note) and then "in Harbor mode the verifier works". Its
    --json's ``harbor`` and ``server``, documented as run documents, lacked
    the run document's ``task``, ``task_name``, ``sandbox_words`` and
    ``preload``, and their ``notices`` the session's."""
    task_dir = example("plain-test-sh")
    note = "note: the sandbox would not run tests/verifier.py: tests/test.sh is the task's own script"
    done = tool(env, "run", task_dir, "--both-modes", cwd=elsewhere)
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stdout.splitlines() if line.startswith(note)]
    assert len(said) == 1 and done.stdout.index(said[0]) < done.stdout.index("✓ Harbor mode"), done.stdout
    single = as_json(tool(env, "run", task_dir, "--json", cwd=elsewhere))
    both = as_json(tool(env, "run", task_dir, "--both-modes", "--json", cwd=elsewhere))
    assert set(both["harbor"]) == set(single)
    assert both["harbor"]["notices"] == single["notices"] and any(n.startswith(note[6:]) for n in single["notices"])
    both = as_json(
        tool(env, "run", example("count-errors"), "--case", "response-json", "--both-modes", "--json", cwd=elsewhere)
    )
    assert set(both["server"]) == set(both["harbor"]) == set(single)


def test_the_json_documentation_lists_every_trial_job_and_both_modes_field(
    task, runs, tmp_path, env, elsewhere, example
):
    demo = task(verifier="def verify(workspace):\n    raise ValueError('no')\n", toml=SEPARATE)
    job = runs / "jobs" / "j"
    sandbox_trial(job, demo, tmp_path, workspace={}, mode="separate", capture=True)
    (demo / "tests" / "verifier.py").write_text("def verify(workspace):\n    return 1.0\n")  # so that they part
    data = as_json(tool(env, "run", job, "--json", cwd=elsewhere))
    assert documented_fields("## The trial document", "### The trial") == set(data)
    assert documented_fields("### The trial", "### The sandbox") == set(data["trial"])
    assert documented_fields("### The sandbox", "### The replay") == set(data["sandbox"])
    assert documented_fields("### The replay", "### Phases") == set(data["replay"])
    phases = documented_fields("### Phases", "Each phase:")
    assert phases == set(data["local_phases"])
    each = documented_fields("Each phase:", "## The job test document")
    assert each == set(data["local_phases"]["phases"][0]) == set(data["sandbox"]["phases"][0])
    assert set(data["parted_at"]) == {"phase", "label", "sandbox", "local", "words"}
    # local is the replay's run document: each run field it has not is named where the doc says so.
    left_out = documented_fields("## The run document", "### Parameters") - set(data["local"])
    local_row = next(
        line for line in JSON_DOC.read_text(encoding="utf-8").splitlines() if line.startswith("| `local` ")
    )
    assert [name for name in sorted(left_out) if f"`{name}`" not in local_row] == []
    tested = as_json(tool(env, "test", job, "--json", cwd=elsewhere))
    assert documented_fields("## The job test document", "## Explain and watch") == set(tested)
    explained = as_json(tool(env, "explain", job, "--json", cwd=elsewhere))
    assert set(explained) == set(data) | {"explain"}
    # explain is the replay's explain document: every field explain TASK --json documents
    assert documented_fields("## The explain document", "### When explain fails") == set(explained["explain"])
    assert explained["explain"]["mode"] == "harbor" and explained["explain"]["response"] is None
    assert explained["explain"]["step"] is None and explained["explain"]["shadowing"] == []
    # and so is its failure's shape: the runner dead before it could explain
    (demo / "tests" / "verifier.py").write_text("import os\nos._exit(3)\n")
    failed = tool(env, "explain", job, "--json", cwd=elsewhere)
    assert failed.returncode == 2
    said = set(as_json(failed)["explain"])
    assert said == {"error", "stderr", "exit_code", "timed_out", "notices", "mode", "step", "shadowing"} | {
        "harbor_refuses_task",
        "task_data",
        "task_id",
        "response",
        "sandbox",
        "sandbox_words",
    }
    both = as_json(
        tool(env, "run", example("count-errors"), "--case", "response-json", "--both-modes", "--json", cwd=elsewhere)
    )
    assert documented_fields("## The both-modes document", "## The trial document") == set(both)


def test_runner_task_replays_with_the_runner_the_sandbox_ran(real, env, elsewhere, tmp_path):
    """The genuine nop-fail trial's task vendors an older runner (no
    --phases-to): with --runner task the replay runs it, and its phases are
    inferred from its output as the sandbox's are."""
    empty = tmp_path / "empty"
    empty.mkdir()
    job = real / "jobs" / "nop-fail"
    ours = as_json(tool(env, "run", job, "--workspace", empty, "--json", cwd=elsewhere))
    assert any("differs from the runner verifier-tui replays with" in n for n in ours["local"]["notices"])
    assert ours["local_phases"]["phases"][0]["data"] is not None  # our runner's own --phases-to lines
    theirs = as_json(tool(env, "run", job, "--workspace", empty, "--runner", "task", "--json", cwd=elsewhere))
    assert not any("differs from the runner" in n for n in theirs["local"]["notices"])
    assert theirs["same"] is True
    phases = theirs["local_phases"]
    assert phases["stopped_at"] == "verify_called" and "inferred from its output" in phases["explanation"]
    assert {p["data"] is None for p in phases["phases"]} == {True}


def test_test_job_says_when_its_replays_ran_in_the_copy_sandbox(task, runs, tmp_path, env, elsewhere):
    """A replay runs what an agent wrote: in the copy sandbox it could write
    the user's files, which the summary, --json and JUnit say."""
    demo = task(verifier=READS_HELLO)
    trial = sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={"hello.txt": "hi"}, capture=True)
    copy = dict(env, VERIFIER_TUI_SANDBOX="copy")
    done = tool(copy, "test", trial.path.parent, "--junit", tmp_path / "junit.xml", cwd=elsewhere)
    said = "sandbox: copy (asked for): the verifier runs on this machine as you and can write your files"
    assert said in done.stdout.splitlines(), done.stdout
    assert as_json(tool(copy, "test", "--json", trial.path.parent, cwd=elsewhere))["copy_sandbox"] == said
    assert ET.parse(tmp_path / "junit.xml").getroot().find("properties/property").get("value") == said
    assert as_json(tool(env, "test", "--json", trial.path.parent, cwd=elsewhere))["copy_sandbox"] is None
    # run TRIAL --json too: its replay's sandbox "copy" alone did not say what that means
    assert as_json(tool(copy, "run", "--json", trial.path, cwd=elsewhere))["copy_sandbox"] == said
    assert as_json(tool(env, "run", "--json", trial.path, cwd=elsewhere))["copy_sandbox"] is None


def test_run_and_watch_trial_say_when_the_replay_ran_in_the_copy_sandbox(task, runs, tmp_path, env, elsewhere):
    """``run TRIAL --json`` and ``test JOB`` say a replay in the copy sandbox
    could write the user's files; ``run TRIAL``'s and ``watch TRIAL``'s text
    said nothing of it."""
    demo = task(verifier=READS_HELLO)
    trial = sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={"hello.txt": "hi"}, capture=True)
    copy = dict(env, VERIFIER_TUI_SANDBOX="copy")
    said = "sandbox: copy (asked for): the verifier runs on this machine as you and can write your files"
    ran = tool(copy, "run", trial.path, cwd=elsewhere)
    assert f"          {said}" in ran.stdout.splitlines(), ran.stdout
    assert said not in tool(env, "run", trial.path, cwd=elsewhere).stdout
    proc, reader = start_watch(copy, trial.path, "--python", PY, cwd=elsewhere)
    try:
        first = reader.next_run()
        assert first.startswith("#1 "), first
        assert reader.next_run(prefix="  ").strip() == said
    finally:
        code, _stderr = stop(proc)
    assert code == 0


def test_a_recorded_reward_past_any_float_is_shown_without_a_traceback(real, env, tmp_path):
    """result.json may hold any JSON number: compare's means and run's
    agreement converted it to a float and raised OverflowError."""
    job = real / "jobs" / "oracle-pass"
    result = next(job.glob("*/result.json"))
    result.write_text(result.read_text().replace('"reward": 1.0', '"reward": 1' + "0" * 400, 1))
    for args in (["compare", job, real / "jobs" / "nop-fail"], ["run", job], ["test", job]):
        done = run_tool(env, *args, cwd=tmp_path)
        no_traceback(done)
        # raised, never (compare's mean of it is said "Harbor cannot compute it (OverflowError)", as Harbor raises)
        assert done.returncode in (0, 1, 2) and "OverflowError:" not in done.stdout + done.stderr, args


def test_trials_whose_files_say_one_name_are_told_apart_by_their_folders(real, env, tmp_path):
    """Harbor names a trial's folder after it, but config.json and result.json
    say the name too: two trials that say the same one were told apart by
    nothing, and --trial opened whichever came first. A trial is its folder."""
    job = real / "jobs" / "nop-fail"
    ours = next(p for p in job.iterdir() if p.is_dir())
    other = job / "hello-file__Zz9Zz9Z"
    shutil.copytree(next(p for p in (real / "jobs" / "oracle-pass").iterdir() if p.is_dir()), other)
    for trial in (ours, other):
        for name in ("config.json", "result.json"):
            data = json.loads((trial / name).read_text())
            data["trial_name"] = "hello-file__same"
            (trial / name).write_text(json.dumps(data))
    done = run_tool(env, "run", job, "--trial", "hello-file__same", cwd=tmp_path)
    no_traceback(done)
    assert done.returncode == 2 and f"no trial 'hello-file__same' (trials: {ours.name}, {other.name})" in done.stderr
    by_folder = run_tool(env, "run", job, "--trial", other.name, cwd=tmp_path)  # a folder's name is its own
    no_traceback(by_folder)
    assert "agent oracle" in by_folder.stdout, by_folder.stdout + by_folder.stderr


@pytest.mark.parametrize(
    ("written", "folder", "shown"), [("fir.st", "fir.st", "fir.st"), ("fir\\u200bst", "fir\u200bst", "fir<U+200B>st")]
)
def test_a_step_the_task_does_not_have_is_said(real, env, tmp_path, written, folder, shown):
    """A trial whose result.json names a step its task does not define: its
    timeout was worked out for that step as if it were the task's, silently.
    A review after: a step named with a zero-width space was noted with Python's
    escapes, ``'fir\\u200bst'``, where the trial's header lists it ``fir<U+200B>st``."""
    trial = next(p for p in (real / "jobs" / "multi-step").iterdir() if p.is_dir())
    result = trial / "result.json"
    result.write_text(result.read_text().replace('"first"', f'"{written}"'))
    (trial / "steps" / "first").rename(trial / "steps" / folder)
    done = run_tool(env, "run", trial, cwd=tmp_path)
    no_traceback(done)
    assert f"the task has no step '{shown}' (its steps: first, second)" in done.stdout, done.stdout
    assert "\\u200b" not in done.stdout + done.stderr, done.stdout + done.stderr


def test_watch_a_trial_json_prints_trial_documents_one_a_line(task, runs, tmp_path, env, elsewhere):
    demo, trial = captured_trial(task, runs, tmp_path)
    proc, reader = start_watch(env, trial.path, "--json", "--python", PY, cwd=elsewhere)
    try:
        first = json.loads(reader.next_run(prefix="{"))
    finally:
        code, stderr = stop(proc)
    assert code == 0 and "Traceback" not in stderr
    assert set(first) == documented_fields("## The trial document", "### The trial")
    assert first["local"]["trigger"] == "start" and first["same"] is True


def test_watch_a_trial_replays_again_once_its_verifier_is_back(task, runs, tmp_path, env, elsewhere):
    """The verifier deleted while ``watch TRIAL`` runs (a branch switched, an
    editor's save by delete and write): that replay said "no verifier found",
    and so did every replay after, the file written back too, until the watch
    was started again."""
    demo, trial = captured_trial(task, runs, tmp_path)
    proc, reader = start_watch(env, trial.path, "--python", PY, cwd=elsewhere)
    verifier = demo / "tests" / "verifier.py"
    try:
        # The first replay is asked for once the watcher is in place, and a
        # replay after a re-read of the task once the new one is: a file
        # written after its line is printed is seen, with no wait.
        first = reader.next_run()
        assert first.startswith("#1 ") and " same " in first, first
        verifier.unlink()
        second = reader.next_run()
        assert second.startswith("#2 ") and "no verifier found" in second, second
        verifier.write_text(READS_HELLO.replace("'hi'", "'hello'"))
        # A late event of the delete may replay once more without it; the
        # verifier's write must then be replayed (the fault: never again).
        later = reader.next_run()
        while "no verifier found" in later:
            later = reader.next_run()
    finally:
        code, stderr = stop(proc)
    assert code == 0 and "Traceback" not in stderr, stderr
    assert " differ " in later and "replay 0.0" in later, later


def _cut_short(trial: Path) -> None:
    result = trial / "result.json"
    result.write_text(result.read_text()[:200])


def _linked(trial: Path) -> None:
    result = trial / "result.json"
    result.rename(trial.parent / "elsewhere.json")
    result.symlink_to(trial.parent / "elsewhere.json")


@pytest.mark.parametrize("spoil", [_cut_short, _linked], ids=["cut-short", "a-link"])
def test_explain_a_trial_says_where_the_sandboxs_verdict_was_read_as_run_does(real, env, tmp_path, spoil):
    """A trial whose result.json was cut short (Harbor stopped while writing
    it) or is a link: ``run TRIAL`` says its sandbox verdict came from
    exception.txt or the reward files, and that result.json was not read;
    ``explain TRIAL`` said the same verdict bare, as if recorded, and no word
    of result.json."""
    trial = genuine_trial(real, "nop-fail")
    spoil(trial)
    ran, explained = (run_tool(env, command, trial, cwd=tmp_path) for command in ("run", "explain"))
    no_traceback(ran)
    no_traceback(explained)
    sandbox = next(line for line in ran.stdout.splitlines() if line.startswith("sandbox "))
    assert "(from " in sandbox and sandbox in explained.stdout.splitlines(), (sandbox, explained.stdout)
    notes = [line.strip() for line in ran.stdout.splitlines() if "note: result.json" in line]
    assert notes and all(note in explained.stdout for note in notes), (notes, explained.stdout)


def _reward_rewritten(trial: Path) -> None:
    (trial / "verifier" / "reward.txt").write_text("0.0")


def _linked_reward(trial: Path) -> None:
    reward = trial / "verifier" / "reward.txt"
    reward.rename(trial.parent / "reward.txt")
    reward.symlink_to(trial.parent / "reward.txt")


@pytest.mark.parametrize("spoil", [_cut_short, _reward_rewritten], ids=["cut-short", "reward-rewritten"])
def test_watch_a_trial_says_the_sandboxs_verdict_as_run_does(real, env, tmp_path, spoil):
    """A trial whose result.json was cut short, or whose reward file no longer
    says what result.json recorded: ``run TRIAL`` says so (a note on
    result.json, a note that the reward files now give 0.0), but ``watch
    TRIAL``'s header said only ``sandbox: not finished`` or ``sandbox: 1.0``."""
    trial = genuine_trial(real, "separate-mode")  # /app captured: there is a replay to watch
    spoil(trial)
    ran = run_tool(env, "run", trial, cwd=tmp_path)
    said = [line.strip() for line in ran.stdout.splitlines() if line.startswith(("sandbox ", "  note: result.json"))]
    said += [line.strip() for line in ran.stdout.splitlines() if "note: the reward files now give" in line]
    proc, reader = start_watch(env, trial, cwd=tmp_path)
    try:
        header = []
        while not (line := reader.next()).startswith("#1 "):
            header.append(line.strip())
    finally:
        code, stderr = stop(proc)
    assert code == 0 and "Traceback" not in stderr, stderr
    assert len(said) == 2 and all(line in header for line in said), (said, header)


@pytest.mark.parametrize("spoil", [_reward_rewritten, _linked_reward], ids=["reward-rewritten", "reward-a-link"])
def test_test_job_says_when_the_reward_files_do_not_bear_out_result_json_as_run_does(real, env, tmp_path, spoil):
    """verifier/reward.txt rewritten after the run, or made a link: ``run
    TRIAL`` notes that the reward files give another verdict than result.json
    recorded (or cannot be checked against it); ``test JOB`` said only ``✓
    same``, its sandbox column result.json's, without a word."""
    trial = genuine_trial(real, "separate-mode")
    spoil(trial)
    ran = run_tool(env, "run", trial, cwd=tmp_path)
    note = next(line for line in ran.stdout.splitlines() if line.startswith("          note: ")).strip()
    tested = run_tool(env, "test", trial.parent, cwd=tmp_path)
    no_traceback(tested)
    assert f"── {trial.name}: {note.removeprefix('note: ')}" in tested.stdout.splitlines(), (note, tested.stdout)


@pytest.mark.parametrize(
    ("started", "finished", "why"),
    [
        ("0001-01-01T00:00:00", "9999-12-31T23:59:59", "started_at 0001-01-01T00:00:00+00:00 is before Harbor existed"),
        ("2026-12-01T03:36:18", "2026-12-01T03:36:17", "finished_at 2026-12-01T03:36:17+00:00 is before started_at"),
    ],
    ids=["year-1-to-9999", "finished-before-started"],
)
def test_a_trial_whose_verifier_dates_are_absurd_says_they_are_not_usable(real, env, tmp_path, started, finished, why):
    """result.json's verifier phase from year 1 to 9999: run TRIAL said "the verifier phase
    took 3.16e+11 s" (and --json 315537897599.0); one that finished before it started said
    nothing of its time. Both say the dates are not usable, and why, in text and --json."""
    trial = genuine_trial(real, "oracle-pass")
    result = json.loads((trial / "result.json").read_text())
    result["verifier"] = {"started_at": started, "finished_at": finished}
    (trial / "result.json").write_text(json.dumps(result))
    said = "how long the verifier phase took is not known: result.json's dates are not usable ("
    done = run_tool(env, "run", trial, "--stand-in", "empty", cwd=tmp_path)
    no_traceback(done)
    assert "e+11" not in done.stdout and "phase took" not in done.stdout.replace(said, ""), done.stdout
    line = next((line for line in done.stdout.splitlines() if said in line), None)
    assert line is not None and why in line, done.stdout
    for command in ("run", "explain"):
        data = json.loads(run_tool(env, command, trial, "--stand-in", "empty", "--json", cwd=tmp_path).stdout)
        assert data["sandbox"]["verifier_duration_s"] is None, command
        assert any(said in fact and why in fact for fact in data["sandbox"]["facts"]), data["sandbox"]["facts"]


@pytest.mark.parametrize(
    "broken, why",
    [
        ("version = 1\n", "version = 1 is not a string (Harbor's loader raises pydantic ValidationError)"),
        ("version = [\n", "task.toml could not be read ("),
    ],
    ids=["wrong-type", "not-toml"],
)
def test_watch_a_trial_says_when_harbor_would_refuse_its_task_as_it_is_now(real, env, tmp_path, broken, why):
    """The task's task.toml saved as Harbor would refuse it (``version = 1``)
    while ``watch TRIAL`` runs: the replay's line said ``same  replay 1.0``
    (or ``differ``, with where the two part), the refusal only a note under
    it, where ``watch TASK`` says the refusal as the run's result. Harbor
    would run nothing now, so the line says the refusal in the verdict's place,
    why once (not again at the next save while it holds, nor twice under it where
    the task's own note says it too: not TOML), and the replay compares again once
    task.toml loads."""
    trial = genuine_trial(real, "separate-mode")
    toml = real / "tasks" / "separate-mode" / "task.toml"
    good = toml.read_text()
    proc, reader = start_watch(env, trial, cwd=tmp_path)
    try:
        assert " same " in reader.next_run()
        toml.write_text(broken)
        refused = reader.next_run()
        said = reader.next()
        toml.write_text(broken + "# still refused\n")
        under = []
        while not (line := reader.next()).startswith("#"):
            under.append(line)
        again = line
        toml.write_text(good)
        between = []
        while not (line := reader.next()).startswith("#4 "):
            between.append(line)
        mended = line
    finally:
        code, stderr = stop(proc)
    rest = []
    while (line := reader.lines.get(timeout=30)) is not None:
        rest.append(line)
    assert code == 0 and "Traceback" not in stderr, stderr
    for line in (refused, again):
        assert " refused " in line and "replay none: Harbor would refuse to run this task" in line, line
        assert " same " not in line and "replay 1.0" not in line, line
    assert said.strip().startswith(f"note: Harbor would refuse to run this task: {why}"), said
    assert not any("Harbor would refuse" in line for line in under), under  # said once under its replay
    assert not any("Harbor would refuse" in line for line in between), between  # said once while it held
    assert " same " in mended and "refuse" not in mended, mended
    assert not any("Harbor would refuse" in line for line in rest), rest


def test_watch_a_trial_says_a_note_a_save_of_the_task_brought(real, env, tmp_path):
    """``watch TRIAL --step second``, then task.toml saved without that step: the replays went on
    without a word, where ``run TRIAL`` notes "the task has no step 'second' ... Harbor's defaults
    are assumed" and ``watch TASK`` says each note a save brings under the run. The note is said
    under the replay the save set off, once, and not again after the step is back."""
    trial = genuine_trial(real, "multi-step")
    toml = real / "tasks" / "multi-step" / "task.toml"
    good = toml.read_text()
    assert '[[steps]]\nname = "second"\n' in good
    proc, reader = start_watch(env, trial, "--step", "second", "--stand-in", "empty", cwd=tmp_path)
    try:
        reader.next_run()
        toml.write_text(good.replace('[[steps]]\nname = "second"\n', ""))
        reader.next_run()
        (real / "tasks" / "multi-step" / "tests" / "verifier.py").open("a").write("# saved again\n")
        under = []
        while not (line := reader.next()).startswith("#3 "):
            under.append(line)
        toml.write_text(good)
        after = []
        while not (line := reader.next()).startswith("#4 "):
            after.append(line)
    finally:
        code, stderr = stop(proc)
    assert code == 0 and "Traceback" not in stderr, stderr
    notes = [line.strip() for line in under if line.strip().startswith("note: ")]
    assert notes == ["note: the task has no step 'second' (its steps: first): Harbor's defaults are assumed"], under
    assert not any("note: " in line for line in after), after


def test_test_job_gives_no_replay_verdict_for_a_task_harbor_would_refuse(real, env, tmp_path):
    """``test JOB`` on a job whose task.toml is now one Harbor would refuse: the row said the
    trial is ``refused`` (not compared), yet its replay column gave the replay's ``1.0``, a
    score Harbor would not give a task it does not load. The column says ``none``, as ``test
    TASK`` says a refused case's result."""
    trial = genuine_trial(real, "separate-mode")
    toml = real / "tasks" / "separate-mode" / "task.toml"
    toml.write_text(toml.read_text().replace('version = "1.0"', "version = 1"))
    done = run_tool(env, "test", trial.parent, cwd=tmp_path)
    no_traceback(done)
    row = next(line for line in done.stdout.splitlines() if trial.name in line and "refused" in line)
    assert row.split()[-1] == "refused" and f" 1.0      none: {REFUSED}  refused" in row, row


def _refused_trial(real):
    """The separate-mode job's trial, its task.toml made one Harbor would now refuse (``version = 1``)."""
    trial = genuine_trial(real, "separate-mode")
    toml = real / "tasks" / "separate-mode" / "task.toml"
    toml.write_text(toml.read_text().replace('version = "1.0"', "version = 1"))
    return trial


def test_every_face_says_a_refused_replays_result_alike(real, env, tmp_path):
    """A trial whose task Harbor would now refuse: ``test JOB``'s replay column said ``none``, ``run
    TRIAL``'s (and ``watch TRIAL``'s) replay line ``Harbor would refuse to run this task · exit 0 ...``,
    the trial's screen and ``test TASK`` ``none: Harbor would refuse to run this task``: one result said
    three ways. Each says the last."""
    trial = _refused_trial(real)
    job = run_tool(env, "test", trial.parent, cwd=tmp_path)
    no_traceback(job)
    assert f"none: {REFUSED} " in next(line for line in job.stdout.splitlines() if trial.name in line)
    done = run_tool(env, "run", trial, cwd=tmp_path)
    no_traceback(done)
    replay = next(line for line in done.stdout.splitlines() if line.startswith("replay "))
    assert replay.startswith(f"replay    none: {REFUSED} · exit 0 · "), replay


def test_a_trial_whose_task_harbor_would_refuse_exits_2_in_test_job_as_in_run_trial(real, env, tmp_path):
    """A task Harbor would now refuse: run TRIAL exits 2 (as run TASK does), test TASK exits 2
    whatever its other tasks' cases did (Harbor would run none of that task's), but test JOB
    and test on a folder of jobs exited 1, as for replays that differ. 2 now, in each."""
    trial = _refused_trial(real)
    for path in (trial, trial.parent, real / "jobs"):
        done = run_tool(env, "run" if path == trial else "test", path, "--python", PY, cwd=tmp_path)
        no_traceback(done)
        assert done.returncode == 2, (path, done.stdout, done.stderr)


def test_a_trial_without_app_whose_task_harbor_would_refuse_is_refused_in_test_job(real, env, tmp_path):
    """A trial that captured no /app, its task one Harbor would now refuse: test JOB exited 1 and its row
    said only "no replay / no workspace to replay on" (with --stand-in empty: exit 2, "refused"); run TRIAL's
    agreement "not known without a replay". Harbor would run none of the task, whatever /app held: both say the
    refusal, and test JOB exits 2, with a stand-in or without."""
    trial = genuine_trial(real, "oracle-pass")
    toml = real / "tasks" / "hello-file" / "task.toml"
    toml.write_text(toml.read_text().replace('version = "1.0"', "version = 1"))
    done = run_tool(env, "test", trial.parent, cwd=tmp_path)
    no_traceback(done)
    row = next(line for line in done.stdout.splitlines() if trial.name in line)
    assert row.endswith("refused"), done.stdout
    assert f"{REFUSED}: version = 1 is not a string" in done.stdout, done.stdout
    assert done.returncode == 2, (done.stdout, done.stderr)
    ran = run_tool(env, "run", trial, cwd=tmp_path)  # its agreement line said "not known without a replay"
    assert f"agreement refused: {REFUSED}: version = 1 is not a string" in ran.stdout, ran.stdout
    report = tmp_path / "r.xml"
    run_tool(env, "test", trial.parent, "--junit", report, cwd=tmp_path)
    failure = ET.parse(report).getroot().find(".//testcase/failure")
    # the refusal alone: never "replayed, but not compared", of a trial no replay ran for
    assert failure is not None and failure.get("message", "").startswith(f"{REFUSED}: "), report.read_text()


def test_test_job_json_says_the_refusal_of_a_trial_without_app_where_its_page_says(real, env, tmp_path):
    """A trial that captured no /app, its task one Harbor would now refuse: test JOB --json exited 2 for
    it, but its object had ``local`` null and ``local_skipped`` "no workspace to replay on", while the page
    sent scripts to ``local``'s ``harbor_refuses_task``: no field said why. The trial object says it, with
    a replay (a stand-in) or without, and the page points there."""
    trial = genuine_trial(real, "oracle-pass")
    toml = real / "tasks" / "hello-file" / "task.toml"
    toml.write_text(toml.read_text().replace('version = "1.0"', "version = 1"))
    refusals = []
    for stand_in in ([], ["--stand-in", "empty", "--python", PY]):
        done = run_tool(env, "test", trial.parent, "--json", *stand_in, cwd=tmp_path)
        assert done.returncode == 2, (done.stdout, done.stderr)
        (row,) = strict_json(done.stdout)["trials"]
        refusals.append(row["harbor_refuses_task"])
        assert row["local"] is None or row["local"]["harbor_refuses_task"] == row["harbor_refuses_task"], row
    assert refusals[0] == refusals[1] and "version = 1 is not a string" in refusals[0], refusals
    page = JSON_DOC.read_text(encoding="utf-8")
    assert "`local`'s `harbor_refuses_task`" not in page
    exits = next(line for line in page.splitlines() if line.startswith("| `verifier-tui test JOB --json`"))
    assert "the trial object's `harbor_refuses_task`" in exits, exits


@pytest.mark.parametrize(
    "broken, why", [(None, "version = 1 is not a string"), ("version = [\n", "task.toml could not be read")]
)
def test_run_trial_says_why_a_task_would_be_refused_once(real, env, tmp_path, broken, why):
    """``run TRIAL`` on a task Harbor would now refuse said why twice: on its ``agreement refused: ...``
    line and again as a note under the facts (for a task.toml that is not TOML, the note with
    ``; the run uses the defaults`` after it). Once now, on the agreement's line."""
    trial = _refused_trial(real)
    if broken is not None:
        (real / "tasks" / "separate-mode" / "task.toml").write_text(broken)
    done = run_tool(env, "run", trial, cwd=tmp_path)
    no_traceback(done)
    why = f"{REFUSED}: {why}"
    assert done.stdout.count(why) == 1, done.stdout
    assert f"agreement refused: {why}" in done.stdout, done.stdout


def test_a_trial_harbor_would_refuse_runs_no_test_sh_after_the_runner(real, env, tmp_path):
    """``test JOB`` (and ``run TRIAL``) on a task Harbor would now refuse: the replay is not compared
    (``same`` null), which the rule "test.sh runs again where the runner's verdict differs" took for a
    difference, so the task's test.sh ran the verifier a second time (``judged_by: test.sh``), twice the
    work for a result that stays ``refused``. The runner's run is the replay's."""
    trial = genuine_trial(real, "separate-mode")
    toml = real / "tasks" / "separate-mode" / "task.toml"
    toml.write_text(toml.read_text().replace('version = "1.0"', "version = 1"))
    job = json.loads(run_tool(env, "test", trial.parent, "--json", cwd=tmp_path).stdout)["trials"][0]
    alone = json.loads(run_tool(env, "run", trial, "--json", cwd=tmp_path).stdout)
    for data in (job, alone):
        assert data["same"] is None and data["judged_by"] == "runner", (data["same"], data["judged_by"])
        assert data["differences"][0].startswith("Harbor would refuse to run this task: "), data["differences"]


def test_watch_a_trial_says_why_a_replay_was_not_compared(real, env, tmp_path):
    """``watch TRIAL`` on a trial Harbor never finished (no verdict recorded): each line said
    ``nothing to compare`` and no more, where ``run TRIAL`` says why ("the sandbox has no
    verdict to compare with: ..."). The line is followed by why, as a differing one is."""
    trial = genuine_trial(real, "separate-mode")
    result = json.loads((trial / "result.json").read_text())
    result["verifier_result"] = result["finished_at"] = None
    (trial / "result.json").write_text(json.dumps(result))
    proc, reader = start_watch(env, trial, cwd=tmp_path)
    try:
        first = reader.next_run()
        why = reader.next()
    finally:
        code, stderr = stop(proc)
    assert code == 0 and "Traceback" not in stderr, stderr
    assert "nothing to compare" in first, first
    assert why.strip().startswith("the sandbox has no verdict to compare with: "), why


def test_watch_a_trial_json_says_the_refusal_as_the_replays_result(real, env, tmp_path):
    """``watch TRIAL --json`` on a task Harbor would refuse: each replay's
    document said ``same: true`` (or false, with the replay's own verdict
    first in ``differences``), as if Harbor would still score it. It is not
    compared (``same`` null), the refusal first in ``differences``, as
    ``run TASK --json`` says it in ``harbor_refuses_task``."""
    trial = genuine_trial(real, "separate-mode")
    toml = real / "tasks" / "separate-mode" / "task.toml"
    good = toml.read_text()
    proc, reader = start_watch(env, trial, "--json", cwd=tmp_path)
    try:
        first = json.loads(reader.next_run(prefix="{"))
        toml.write_text("version = 1\n")
        refused = json.loads(reader.next_run(prefix="{"))
        toml.write_text(good)
        mended = json.loads(reader.next_run(prefix="{"))
    finally:
        code, stderr = stop(proc)
    assert code == 0 and "Traceback" not in stderr, stderr
    assert first["same"] is True and mended["same"] is True
    why = refused["local"]["harbor_refuses_task"]
    assert why and refused["same"] is None, refused["same"]
    assert refused["differences"] == [f"Harbor would refuse to run this task: {why}"], refused["differences"]


# Runs the rest in a user namespace of its own where no inotify instance may be
# made: the limit is that namespace's, so no other process of the machine's
# (a test beside it, as the same user) is short of one, or frees one for it.
_NO_INOTIFY = (
    "unshare",
    "--user",
    "--map-root-user",
    "sh",
    "-c",
    'echo 0 >/proc/sys/user/max_inotify_instances && exec "$@"',
    "sh",
)


def test_every_watch_without_an_inotify_instance_polls_says_so_once_and_sees_a_save(real, env):
    """Where no inotify instance is to be had (fs.inotify.max_user_instances,
    128 on many machines, taken by editors' and other tools' watchers), watch
    TASK, watch TRIAL and test --watch each ended at once, exit 2, "could not
    watch ...: Too many open files": polling needs no instance and sees every
    save. Each now polls, says so once (the same line for all three), and a
    save still runs the verifier again."""
    made = subprocess.run([*_NO_INOTIFY, "true"], capture_output=True, text=True, timeout=30, check=False)
    if made.returncode != 0:
        pytest.skip(f"no user namespace without inotify instances here: {made.stderr.strip()[-200:]}")
    task = real / "tasks" / "hello-file"
    trial = next(p for p in (real / "jobs" / "oracle-pass").iterdir() if p.is_dir())
    verifier = task / "tests" / "verifier.py"
    said = {}
    for args, prefix in (
        (("watch", task), "#"),
        (("test", "--watch", task), "── round"),
        (("watch", "--stand-in", "empty", trial), "#"),
    ):
        proc, reader = start_watch(env, *args[1:], command=args[0], around=list(_NO_INOTIFY))
        try:
            reader.next_run(prefix=prefix)
            if args == ("watch", task):
                verifier.write_text(verifier.read_text() + "\n# saved\n")
                assert "tests/verifier.py" in reader.next_run(prefix=prefix)
            assert proc.poll() is None
        finally:
            code, stderr = stop(proc)
        assert code == 0 and "Traceback" not in stderr, stderr
        notes = [line for line in stderr.splitlines() if "inotify" in line]
        assert len(notes) == 1, stderr
        said[args[:-1]] = notes[0]
    assert len(set(said.values())) == 1, said
    assert "polling" in next(iter(said.values())), said


#: A verifier that prints the variables a trial may name to stdout (what it would send out, with the network).
PRINTS_NAMED = (
    "import os\n\ndef verify(workspace):\n"
    "    for name in ('X', 'Y', 'Z', 'W', 'AWS_SECRET_ACCESS_KEY'):\n"
    "        print(name, os.environ.get(name))\n"
    "    return 1.0\n"
)
#: task.toml whose [environment] env and [verifier] env name a variable of the user's shell.
NAMES_THE_SHELL = (
    'version = "1.0"\nartifacts = ["/app"]\n\n[verifier]\nenv = { Z = "${VTUI_SECRET}" }\n\n'
    '[environment]\nenv = { W = "${VTUI_SECRET}" }\n'
)


def test_a_trials_template_takes_nothing_from_your_environment(task, runs, env, elsewhere):
    """A trial is untrusted: a bare ``${VAR}`` in its config.json or its task.toml pulled VAR out of the
    user's shell into the sandbox where the agent's code runs (Harbor filled it on the machine that ran the
    job, which this shell is not). Now the replay runs without it and says how to pass it on purpose."""
    demo = task(verifier=PRINTS_NAMED, toml=NAMES_THE_SHELL)
    folder = trial_with_job_env(runs, demo, {"X": "${VTUI_SECRET}"})
    shell = dict(env, VTUI_SECRET="s3cret-of-the-shell")
    done = tool(shell, "run", folder, "--json", cwd=elsewhere)
    assert "s3cret-of-the-shell" not in done.stdout + done.stderr
    data = as_json(done)
    printed = data["local"]["stdout"].splitlines()
    assert {"X None", "Z None", "W None"} <= set(printed), printed
    notices = data["replay"]["notices"]
    said = (
        "VTUI_SECRET is not taken from your environment in a replay (X = '${VTUI_SECRET}' in config.json "
        "verifier.env (the job's)): the replay runs without X; --env VTUI_SECRET passes yours"
    )
    assert said in notices, notices
    assert any(n.startswith("VTUI_SECRET is not taken") and "(Z = " in n for n in notices), notices
    assert any(n.startswith("VTUI_SECRET is not taken") and "(W = " in n for n in notices), notices
    # Passed on purpose, it fills the templates.
    given = as_json(tool(shell, "run", folder, "--json", "--env", "VTUI_SECRET", cwd=elsewhere))
    assert {"X s3cret-of-the-shell", "Z s3cret-of-the-shell", "W s3cret-of-the-shell"} <= set(
        given["local"]["stdout"].splitlines()
    )
    assert not any("not taken from your environment" in n for n in given["replay"]["notices"])


def test_a_redacted_secret_of_a_trial_takes_nothing_from_your_environment(task, runs, env, elsewhere):
    """config.json's redacted ``AWS_SECRET_ACCESS_KEY`` took the user's own key of that name into the
    sandbox, silently. Now the replay runs without it, says so, and --env passes it on purpose."""
    demo = task(verifier=PRINTS_NAMED)
    folder = trial_with_job_env(runs, demo, {"AWS_SECRET_ACCESS_KEY": "****"})
    shell = dict(env, AWS_SECRET_ACCESS_KEY="aws-s3cret-of-the-shell")
    done = tool(shell, "run", folder, "--json", cwd=elsewhere)
    assert "aws-s3cret-of-the-shell" not in done.stdout + done.stderr
    data = as_json(done)
    assert "AWS_SECRET_ACCESS_KEY None" in data["local"]["stdout"].splitlines()
    said = (
        "AWS_SECRET_ACCESS_KEY is not taken from your environment in a replay (redacted by Harbor in "
        "config.json verifier.env (the job's)): the replay runs without it; --env AWS_SECRET_ACCESS_KEY passes yours"
    )
    assert said in data["replay"]["notices"], data["replay"]["notices"]
    given = as_json(tool(shell, "run", folder, "--json", "--env", "AWS_SECRET_ACCESS_KEY", cwd=elsewhere))
    assert "AWS_SECRET_ACCESS_KEY aws-s3cret-of-the-shell" in given["local"]["stdout"].splitlines()


def test_explain_a_trial_says_the_replays_environment_and_its_notes(task, runs, env, elsewhere):
    # explain TASK lists the runner's environment and its notes; explain TRIAL said neither, so "what would the
    # replay's verifier get?" had no answer: not the job's variables, not the ${VAR} the replay runs without.
    demo = task(verifier=PRINTS_NAMED, toml=NAMES_THE_SHELL)
    folder = trial_with_job_env(runs, demo, {"X": "${VTUI_SECRET}", "LEVEL": "2"})
    shell = dict(env, VTUI_SECRET="s3cret-of-the-shell")
    without = (
        "VTUI_SECRET is not taken from your environment in a replay (X = '${VTUI_SECRET}' in config.json "
        "verifier.env (the job's)): the replay runs without X; --env VTUI_SECRET passes yours"
    )
    done = tool(shell, "explain", folder, cwd=elsewhere)
    assert done.returncode == 0 and "s3cret-of-the-shell" not in done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert f"  note: {without}" in lines, done.stdout
    assert "  environment  what the runner gets, as in Harbor's sandbox" in lines, done.stdout
    assert any(line.startswith("  interpreter ") and "(" in line for line in lines), done.stdout  # as explain TASK
    assert "    config.json verifier.env (the job's): LEVEL" in [line.split("=")[0] for line in lines]
    assert any(line.startswith("    held back: ") and "; --env NAME passes one" in line for line in lines)
    assert not [line for line in lines if line.endswith(" ")], done.stdout
    data = as_json(tool(shell, "explain", folder, "--json", cwd=elsewhere))
    assert without in data["explain"]["notices"], data["explain"]["notices"]
    passed = {row["name"]: row["source"] for row in data["explain"]["environment"]["passed"]}
    assert passed["LEVEL"] == "config.json verifier.env (the job's)" and "X" not in passed


#: A verifier that prints the allowlisted names a trial may leave out.
PRINTS_ALLOWLISTED = (
    "import os\n\ndef verify(workspace):\n"
    "    for name in ('HOME', 'TZ', 'LC_ALL'):\n"
    "        print(name, os.environ.get(name))\n"
    "    return 1.0\n"
)


def test_a_trials_allowlisted_name_left_out_is_not_the_shells_either(task, runs, env, elsewhere):
    """``HOME = "${VTUI_NOPE}"`` in a trial's task.toml: the note said "the replay runs without HOME", yet the
    allowlist passed the user's own HOME through (the verifier printed it). ``run TASK`` drops it; so does
    the replay now."""
    toml = (
        'version = "1.0"\nartifacts = ["/app"]\n\n[verifier]\n'
        'env = { HOME = "${VTUI_NOPE}", TZ = "${VTUI_NOPE}", LC_ALL = "${VTUI_NOPE}" }\n'
    )
    demo = task(verifier=PRINTS_ALLOWLISTED, toml=toml)
    folder = trial_with_job_env(runs, demo, {})
    shell = dict(env, HOME="/home/of-the-shell", TZ="Europe/Paris", LC_ALL="C.UTF-8")
    shell.pop("VTUI_NOPE", None)
    data = as_json(tool(shell, "run", folder, "--json", cwd=elsewhere))
    printed = data["local"]["stdout"].splitlines()
    assert {"HOME None", "TZ None", "LC_ALL None"} <= set(printed), printed
    notices = data["replay"]["notices"]
    assert any("the replay runs without HOME" in n for n in notices), notices
    # run TASK, the same task: the same three left out.
    task_run = as_json(tool(shell, "run", demo, "--json", cwd=elsewhere))
    assert {"HOME None", "TZ None", "LC_ALL None"} <= set(task_run["stdout"].splitlines())


def test_env_that_fills_a_trials_template_is_not_passed_as_itself(task, runs, env, elsewhere):
    """``run TRIAL --env VTUI_SECRET`` to fill ``Z = "${VTUI_SECRET}"`` also handed VTUI_SECRET itself to the
    verifier: the secret under two names, and a variable Harbor's verifier never had (resolve_env_vars reads
    it on the host to fill Z; only Z reaches the container). A --env name of the trial's own tables, or one
    that fills nothing, still passes as given."""
    verifier = (
        "import os\n\ndef verify(workspace):\n"
        "    for name in ('Z', 'VTUI_SECRET', 'KEYED', 'MINE'):\n"
        "        print(name, os.environ.get(name))\n"
        "    return 1.0\n"
    )
    toml = (
        'version = "1.0"\nartifacts = ["/app"]\n\n[verifier]\nenv = { Z = "${VTUI_SECRET}", KEYED = "${KEYED:-d}" }\n'
    )
    folder = trial_with_job_env(runs, task(verifier=verifier, toml=toml), {})
    shell = dict(env, VTUI_SECRET="s3cret-of-the-shell")
    args = ("--env", "VTUI_SECRET", "--env", "KEYED=k", "--env", "MINE=m")
    data = as_json(tool(shell, "run", folder, "--json", *args, cwd=elsewhere))
    printed = set(data["local"]["stdout"].splitlines())
    assert {"Z s3cret-of-the-shell", "VTUI_SECRET None", "KEYED k", "MINE m"} <= printed, printed
    assert "VTUI_SECRET" not in {p["name"] for p in data["local"]["environment"]["passed"]}


def test_env_that_only_fills_a_trials_template_is_said_and_not_counted_as_held_back(task, runs, env, elsewhere):
    """``explain TRIAL --env VTUI_SECRET`` to fill ``Z = "${VTUI_SECRET}"``: nothing said VTUI_SECRET itself
    was not passed, and the held-back line counted it, "(--env NAME passes one)", false for it. Now one note."""
    toml = 'version = "1.0"\nartifacts = ["/app"]\n\n[verifier]\nenv = { Z = "${VTUI_SECRET}" }\n'
    folder = trial_with_job_env(runs, task(toml=toml), {})
    shell = dict(env, VTUI_SECRET="s3cret-of-the-shell")
    note = "--env VTUI_SECRET only filled Z: the verifier does not get VTUI_SECRET"
    for command in ("explain", "run"):
        done = tool(shell, command, folder, "--env", "VTUI_SECRET", cwd=elsewhere)
        assert done.stdout.count(note) == 1 and "s3cret" not in done.stdout, done.stdout
    data = as_json(tool(shell, "explain", folder, "--json", "--env", "VTUI_SECRET", cwd=elsewhere))
    assert sum(note in said for said in data["explain"]["notices"]) == 1, data["explain"]["notices"]
    assert "VTUI_SECRET" not in data["explain"]["environment"]["held_back"]


def test_an_allowlisted_env_name_that_fills_a_template_is_not_said_to_be_kept_from_the_verifier(
    task, runs, env, elsewhere
):
    """``run TRIAL --env LANG=C.UTF-8`` to fill ``Z = "${LANG}"``: the note said "the verifier does not get
    LANG itself", yet the verifier printed the shell's LANG, which the allowlist passes to every run (as a
    stand-in for the container's, which Harbor's verifier has whatever filled Z). The given value fills Z
    alone; the note no longer says the verifier has no LANG, and says whose it has."""
    verifier = (
        "import os\n\ndef verify(workspace):\n"
        "    print('Z', os.environ.get('Z'))\n    print('LANG', os.environ.get('LANG'))\n    return 1.0\n"
    )
    toml = 'version = "1.0"\nartifacts = ["/app"]\n\n[verifier]\nenv = { Z = "${LANG}" }\n'
    folder = trial_with_job_env(runs, task(verifier=verifier, toml=toml), {})
    shell = dict(env, LANG="en_GB.UTF-8")
    data = as_json(tool(shell, "run", folder, "--json", "--env", "LANG=C.UTF-8", cwd=elsewhere))
    printed = set(data["local"]["stdout"].splitlines())
    assert {"Z C.UTF-8", "LANG en_GB.UTF-8"} <= printed, printed
    done = tool(shell, "run", folder, "--env", "LANG=C.UTF-8", cwd=elsewhere)
    assert "does not get LANG" not in done.stdout, done.stdout
    assert "--env LANG only filled Z: the verifier gets LANG from your environment, as every run does" in done.stdout


def test_a_value_given_with_env_to_fill_a_trials_template_is_named_not_printed(task, runs, env, elsewhere):
    """``W = "${OPENAI_API_KEY:-none}"`` and ``--env W=sk-...``: explain TRIAL (and run TRIAL) printed "the
    replay takes W='sk-...' from --env", the user's secret in a note, twice in --json. A value from --env (or
    from the shell, through a bare --env W) is named, never shown; the template's own default may be."""
    toml = 'version = "1.0"\nartifacts = ["/app"]\n\n[verifier]\nenv = { W = "${OPENAI_API_KEY:-none}" }\n'
    folder = trial_with_job_env(runs, task(toml=toml), {})
    shell = dict(env, W="sk-SHELLSECRET")
    shell.pop("OPENAI_API_KEY", None)
    head = "task.toml [verifier] env writes W = '${OPENAI_API_KEY:-none}', which Harbor filled on the machine"
    for given, source in (("W=sk-LIVESECRET2", "W"), ("W", "W"), ("OPENAI_API_KEY=sk-LIVESECRET2", "OPENAI_API_KEY")):
        for command in ("explain", "run"):
            for json_flag in ((), ("--json",)):
                done = tool(shell, command, folder, *json_flag, "--env", given, cwd=elsewhere)
                said = done.stdout + done.stderr
                if json_flag and command == "run":  # local.command, run TASK, carries --env as the user typed it
                    # (that alone: a value leaking into local's notes or environment must fail this)
                    doc = as_json(done)
                    doc["local"].pop("command")
                    said = json.dumps(doc)
                assert "SECRET" not in said, (command, given, said)
                assert f"the replay takes W from --env {source}" in said, (command, given, said)
    done = tool(shell, "explain", folder, cwd=elsewhere)  # no --env: the trial's own default is shown
    assert f"{head} that ran the job and recorded nowhere; the replay takes W='none' from the template's" in done.stdout


def test_a_task_path_holding_the_home_folder_further_in_is_said_whole(task, runs, tmp_path, env, elsewhere):
    """A config.json whose task.path holds the home folder's path past its
    start (``/srv/home/dev/t``, ``../../home/dev/t``): the home folder is
    ``~`` only where a path starts with it; it read ``/srv~/t``."""
    _demo, trial = captured_trial(task, runs, tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    claimed = f"/srv{home}/t"
    config = json.loads((trial.path / "config.json").read_text())
    (trial.path / "config.json").write_text(json.dumps({**config, "task": {**config["task"], "path": claimed}}))
    done = tool({**env, "HOME": str(home)}, "run", trial.path, cwd=elsewhere)
    assert f"looked in: {claimed} (" in done.stdout, done.stdout
    assert "/srv~" not in done.stdout


def test_a_huge_exception_type_takes_one_line_s_worth_with_a_count_of_the_rest(task, runs, env, elsewhere):
    """Harbor's exception_type is a class name; a result.json naming one of 100,000 characters
    filled the root cause line and the facts' "the agent failed first" line with about 1,000
    characters each. It is bounded as the job overview bounds it: its start and end, with a
    count of what was left out between."""
    trial = make_trial(
        runs / "jobs" / "j" / "demo__aaaaaaa", task=task(), exception=harbor_exception("X" * 100_000, "the message")
    )
    out = tool(env, "run", trial, cwd=elsewhere).stdout.splitlines()
    cut = f"{'X' * 20} … 99,973 characters left out … {'X' * 7}"
    cause = next(line for line in out if line.startswith("root cause"))
    assert cause == f"root cause  {cut} (before the environment started): the message", cause
    assert f"  the agent failed first: {cut}: the message" in out, out
    assert not [line for line in out if "X" * 100 in line], out
    make_trial(trial.parent / "demo__bbbbbbb", task=task(), rewards={"reward": 1.0})
    out = tool(env, "run", trial.parent, cwd=elsewhere).stdout.splitlines()  # the job's overview, its tables too
    assert f"ended   1 passed, 1 {cut}" in out, out
    assert not [line for line in out if "X" * 100 in line], out


RAISES_IN_A_TASK_GROUP = """\
import asyncio


async def check(answer):
    raise ValueError(f"wrong answer {answer}")


async def verify(workspace):
    async with asyncio.TaskGroup() as group:
        group.create_task(check(1))
    return 1.0
"""


# A group of the verifier's own class: the runner's record names the class (Checks), Python prints it with its
# module (`verifier.Checks: checks failed (2 sub-exceptions)`), each check's report inside it.
RAISES_CHECKS_OF_ITS_OWN_GROUP_CLASS = """\
class Checks(ExceptionGroup):
    pass


def check(n):
    raise ValueError(f"wrong answer {n}")


def verify(workspace):
    problems = []
    for n in (1, 2):
        try:
            check(n)
        except ValueError as exc:
            problems.append(exc)
    raise Checks("checks failed", problems)
"""


# The verifier whose report Python 3.11.2 printed as PRINTED_BARE (below).
RAISES_A_GROUP_A_MESSAGE_OF_TWO_LINES_FIRST = """\
def check(error):
    raise error


def verify(workspace):
    problems = []
    for error in (ValueError("wrong answer\\nsee above"), KeyError("k")):
        try:
            check(error)
        except Exception as exc:
            problems.append(exc)
    raise ExceptionGroup("checks failed", problems)
"""


@pytest.mark.parametrize(
    ("source", "line", "said", "group"),
    [
        (RAISES_IN_A_TASK_GROUP, 5, "ValueError: wrong answer 1", "unhandled errors in a TaskGroup"),
        (RAISES_CHECKS_OF_ITS_OWN_GROUP_CLASS, 6, "ValueError: wrong answer 2", "checks failed"),
    ],
    ids=["task-group", "group-class-of-its-own"],
)
def test_both_sides_name_one_exception_of_a_task_groups_failure(
    task, runs, tmp_path, env, elsewhere, source, line, said, group
):
    # verify's TaskGroup ended on a task's ValueError at line 5: Python prints an ExceptionGroup around it. The
    # sandbox's side (test-stdout.txt) named the sub-exception, ValueError, and the replay's the group,
    # ExceptionGroup, in the text and in --json: two exceptions for one failure. The same with a group of a class
    # of the verifier's own (`class Checks(ExceptionGroup)`), which the replay named as `Checks: checks failed`.
    demo, trial = _separate_trial(task, runs, tmp_path, source)
    data = as_json(tool(env, "run", trial.path, "--json", cwd=elsewhere))
    assert "ExceptionGroup" in data["local"]["stderr"] or "Checks" in data["local"]["stderr"], data["local"]
    path = str(demo / "tests" / "verifier.py")
    assert data["sandbox"]["failure"]["line"] == line and data["local_failure"] == {"path": path, "line": line}, data
    sandbox = {step["name"]: step["detail"] for step in data["sandbox"]["phases"]}
    local = {step["name"]: step["detail"] for step in data["local_phases"]["phases"]}
    assert sandbox["verify_called"] == local["verify_called"] == said, (sandbox, local)
    assert data["local_phases"]["explanation"].startswith(f"verify raised {said}:"), data
    text = tool(env, "run", trial.path, cwd=elsewhere).stdout
    assert group not in text.split("── sandbox: verifier/test-stdout.txt")[0], text


# What Python 3.11.2 printed for RAISES_A_GROUP_A_MESSAGE_OF_TWO_LINES_FIRST: its printer writes the later lines
# of a sub-exception's message bare, in column 0 (3.11.7 and 3.13 put the margin on them). Kept as printed, so the
# reading is tested wherever the suite runs, whatever Python the machine has.
PRINTED_BARE = (
    "  + Exception Group Traceback (most recent call last):\n"
    '  |   File "/tests/verifier.py", line 15, in <module>\n'
    "  |     verify(None)\n"
    '  |   File "/tests/verifier.py", line 12, in verify\n'
    '  |     raise ExceptionGroup("checks failed", problems)\n'
    "  | ExceptionGroup: checks failed (2 sub-exceptions)\n"
    "  +-+---------------- 1 ----------------\n"
    "    | Traceback (most recent call last):\n"
    '    |   File "/tests/verifier.py", line 9, in verify\n'
    "    |     check(error)\n"
    '    |   File "/tests/verifier.py", line 2, in check\n'
    "    |     raise error\n"
    "    | ValueError: wrong answer\n"
    "see above\n"
    "    +---------------- 2 ----------------\n"
    "    | Traceback (most recent call last):\n"
    '    |   File "/tests/verifier.py", line 9, in verify\n'
    "    |     check(error)\n"
    '    |   File "/tests/verifier.py", line 2, in check\n'
    "    |     raise error\n"
    "    | KeyError: 'k'\n"
    "    +------------------------------------\n"
)


def test_a_groups_sub_exception_after_a_message_printed_bare_is_still_the_groups():
    # The first check's message has two lines, the second printed bare in column 0 inside the group: the replay's
    # reading took the group's end there, so its failed step named the group where the sandbox's side (which reads
    # the group as _ungrouped does) named the KeyError.
    from verifier_tui.engine.harbor.runner_output import group_sub_exception, parse_runner_output

    report = parse_runner_output(PRINTED_BARE).traceback
    assert report is not None and report.exception_type == "KeyError", PRINTED_BARE
    assert group_sub_exception(PRINTED_BARE, "ExceptionGroup", "checks failed (2 sub-exceptions)") == (
        "KeyError",
        "'k'",
    )


@pytest.mark.parametrize("where", ["verifier.py", "helper.py"])
def test_both_sides_name_a_syntax_errors_line(task, runs, tmp_path, env, elsewhere, where):
    # A SyntaxError's place is its filename and lineno, in no traceback frame: the runner's phase record held no
    # frame of it, and that empty list outranked stderr's report, so the replay named no line (in verifier.py) or
    # verifier.py:1, the import (in a helper), where the sandbox's side named the broken line.
    broken = "def check():\n    x = (\n    return 1\n"
    verifier = "import helper\n\n\ndef verify(workspace):\n    return 1.0\n" if where == "helper.py" else broken
    demo = task(verifier=verifier, toml=SEPARATE)
    if where == "helper.py":
        (demo / "tests" / "helper.py").write_text(broken)
    trial = sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={}, mode="separate", capture=True)
    data = as_json(tool(env, "run", trial.path, "--json", cwd=elsewhere))
    line = data["sandbox"]["failure"]["line"]
    assert data["sandbox"]["failure"]["path"].endswith(where) and line in (2, 3), data["sandbox"]["failure"]
    assert data["local_failure"] == {"path": str(demo / "tests" / where), "line": line}, data["local_failure"]


def test_a_frame_without_a_line_number_is_no_traceback_of_ours(task, runs, tmp_path, env, elsewhere):
    # A code object with no line table: its frame's line is None, which the runner's phase record wrote as null;
    # reading the record's frames then ended run TRIAL in KeyError: 'line'.
    verifier = (
        "def _boom():\n    raise ValueError('no line')\n\n\n"
        "_boom.__code__ = _boom.__code__.replace(co_linetable=b'')\n\n\n"
        "def verify(workspace):\n    _boom()\n"
    )
    _, trial = _separate_trial(task, runs, tmp_path, verifier)
    for args in (["run", trial.path], ["run", trial.path, "--json"]):
        done = tool(env, *args, cwd=elsewhere)
        assert "Traceback" not in done.stderr and done.returncode in (0, 1), (args, done.stderr)
        assert "ValueError" in done.stdout, done.stdout


PRINTS_A_REPORT_AT_EXIT_AFTER_RAISING = """\
import atexit
import sys


def later():
    print('Traceback (most recent call last):\\n  File "/tests/verifier.py", line 1, in verify\\nKeyError: forged',
          file=sys.stderr)


atexit.register(later)


def verify(workspace):
    raise ValueError("real")
"""


def test_the_replay_names_what_verify_raised_not_a_report_printed_after_it(task, runs, tmp_path, env, elsewhere):
    # verify raised ValueError (the runner's phase record says so); an atexit callback then printed a bare report
    # of a KeyError: the replay's failed step named the KeyError, the last report in stderr, where the record names
    # what raised. Stderr's reading stands in for the record only for a group's sub-exception (the test above).
    demo, trial = _separate_trial(task, runs, tmp_path, PRINTS_A_REPORT_AT_EXIT_AFTER_RAISING)
    data = as_json(tool(env, "run", trial.path, "--json", cwd=elsewhere))
    assert "KeyError: forged" in data["local"]["stderr"], data["local"]["stderr"]
    local = {step["name"]: step["detail"] for step in data["local_phases"]["phases"]}
    assert local["verify_called"] == "ValueError: real", local
    # Its failing line is the record's too (the record's own traceback), not the forged report's line 1: the same
    # replay said `✗ ValueError: real` and `failed at verifier.py:1`.
    path = str(demo / "tests" / "verifier.py")
    assert data["local_failure"] == {"path": path, "line": 14}, data["local_failure"]
    lines = tool(env, "run", trial.path, cwd=elsewhere).stdout.splitlines()
    side = lines[next(i for i, line in enumerate(lines) if line.startswith("replay    ")) :]
    side = side[: next(i for i, line in enumerate(side) if line.startswith("agreement"))]
    assert f"          failed at {path}:14" in side, side
    explained = next(i for i, line in enumerate(lines) if line.startswith("replay: verify raised ValueError: real"))
    assert "fix the error at tests/verifier.py:14," in lines[explained + 1], lines[explained : explained + 2]


def test_a_recorded_reward_of_infinity_or_400_digits_is_said_as_every_face_says_it(task, runs, env, elsewhere):
    # result.json records {"reward": Infinity}: run said `rewards reward=inf, which Harbor never scores`, Python's
    # word, where compare says `reward not a number (Infinity)`; a 400-digit integer was printed whole.
    demo = task()
    huge = 10**400
    (runs / "jobs").mkdir(parents=True, exist_ok=True)
    for name, reward in (("demo__aaaaaaa", math.inf), ("demo__bbbbbbb", huge)):
        make_job(runs / "jobs" / "j", {name: dict(task=demo, rewards={"reward": reward}, verifier_files=None)})
    out = tool(env, "run", runs / "jobs" / "j" / "demo__aaaaaaa", cwd=elsewhere).stdout
    assert "reward=Infinity" in out and "inf," not in out, out
    out = tool(env, "run", runs / "jobs" / "j" / "demo__bbbbbbb", cwd=elsewhere).stdout
    assert str(huge) not in out, out


def test_every_json_face_writes_a_recorded_infinity_or_nan_as_json_spells_it(task, runs, env, elsewhere):
    # result.json records {"reward": Infinity}, {"reward": NaN} and a cost of Infinity: run TRIAL --json (and
    # explain, test JOB, the job's trial rows) wrote "inf" and "nan", Python's words, where compare --json and
    # the means' mean_errors write "Infinity" and "NaN".
    demo = task()
    trials = {"demo__inf": math.inf, "demo__nan": math.nan}
    job = make_job(runs / "jobs" / "j", {n: dict(task=demo, rewards={"reward": r}) for n, r in trials.items()})
    result = json.loads((job / "demo__inf" / "result.json").read_text())
    result["agent_result"] = {"n_input_tokens": 1, "n_output_tokens": 1, "cost_usd": math.inf}
    (job / "demo__inf" / "result.json").write_text(json.dumps(result))
    faces = [
        ("run", "--json", job / "demo__inf"),
        ("explain", "--json", job / "demo__inf"),
        ("run", "--json", job),
        ("test", "--json", job),
    ]
    texts = [tool(env, *args, cwd=elsewhere).stdout for args in faces]
    texts.append(run_tool(env, "compare", "--json", job, job, cwd=elsewhere).stdout)
    for text in texts:
        strict_json(text)
        assert '"inf"' not in text and '"nan"' not in text, text
    data = strict_json(tool(env, "run", "--json", job / "demo__inf", cwd=elsewhere).stdout)
    assert data["sandbox"]["rewards"] == {"reward": "Infinity"}, data["sandbox"]
    rows = strict_json(tool(env, "run", "--json", job, cwd=elsewhere).stdout)["job"]["trial_rows"]
    assert [(r["rewards"], r["cost_usd"]) for r in rows] == [
        ({"reward": "Infinity"}, "Infinity"),
        ({"reward": "NaN"}, None),
    ]


def test_a_trials_task_toml_past_what_this_tool_reads_is_said_once_and_nothing_of_it_claimed(real, env, tmp_path):
    """The task's task.toml (`timeout_sec = 30.0`) padded past the 4 MB this tool reads: `run TRIAL`
    said Harbor would refuse the task (it reads the file whole), then the default timeout of 600 s, or
    the reason twice. Its settings are unknown: the timeout is not said, no replay is made, the reason once."""
    trial = genuine_trial(real, "separate-mode")
    toml = real / "tasks" / "separate-mode" / "task.toml"
    toml.write_text(toml.read_text() + "# padding\n" * 520_000)
    done = run_tool(env, "run", trial, cwd=tmp_path)
    no_traceback(done)
    assert "effective verifier timeout: unknown: task.toml was not read" in done.stdout, done.stdout
    why = "task.toml is 5.0 MB: more than the 4 MB this tool reads: its settings are unknown, so nothing is run"
    assert done.stdout.count(why) == 1, done.stdout
    assert next(line for line in done.stdout.splitlines() if line.startswith("replay ")).endswith(why), done.stdout
    assert "600" not in done.stdout and "Harbor would refuse" not in done.stdout, done.stdout


def test_test_of_a_folder_of_jobs_asks_for_the_sandbox_once_and_replays_every_trial(real, env, tmp_path):
    """test jobs/ --junit with VERIFIER_TUI_SANDBOX=namespace: the command probed the sandbox, then each
    trial's replay probed again; a later probe that could not be tried (no process slot to spare a moment
    after the first) made every row "not replayed: ... cannot", exit 1, a failure per trial in the report.
    The sandbox is asked once for the command: every trial is replayed in it, as where probes never fail."""
    needs_namespaces()
    args = ["test", real / "jobs", "--stand-in", "empty", "--python", PY, "--junit", tmp_path / "r.xml"]
    sandboxed = bwrap_probes_that_fail(env, tmp_path / "bin", after=1)
    done = run_tool(sandboxed, *args, cwd=tmp_path)
    no_traceback(done)
    assert (tmp_path / "bin" / "probed").read_text().count("x") == 1, done.stdout
    assert "not replayed" not in done.stdout and "VERIFIER_TUI_SANDBOX" not in done.stdout, done.stdout
    plain = run_tool(env, *args, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (plain.returncode, plain.stdout), (done.stdout, plain.stdout)


def test_a_reward_file_too_big_to_read_is_not_blamed_on_something_else(real, env, tmp_path):
    """A trial whose ``verifier/reward.json`` is past what the tool parses (a verify that
    returned a dict of 700 keys of 100,000 characters: the runner writes what verify returns):
    the sandbox side's advice said ``the runner writes reward files, never links: something
    else left it (test.sh, the verifier, or whoever handled the folder)``, a link's advice,
    blaming another writer for a file the runner writes. It now says what makes one so big."""
    trial = genuine_trial(real, "oracle-pass")
    (trial / "verifier" / "reward.txt").unlink()
    with (trial / "verifier" / "reward.json").open("wb") as handle:
        handle.truncate(70 * 1024 * 1024)  # its size is all the tool looks at
    ran = run_tool(env, "run", trial, "--case", "correct", cwd=tmp_path)
    no_traceback(ran)
    (advice,) = [line.strip() for line in ran.stdout.splitlines() if line.strip().startswith("try: ")]
    assert "never links" not in advice and "something else left it" not in advice, advice
    assert "verify returned" in advice, advice


def test_a_reward_txt_too_big_to_read_is_not_blamed_on_a_dict(real, env, tmp_path):
    """A trial whose ``verifier/reward.txt`` is past what the tool parses: the advice said
    ``if the runner wrote it, verify returned a dict this big``, but the runner writes a dict
    to reward.json and a number to reward.txt, a few characters. It now says so."""
    trial = genuine_trial(real, "oracle-pass")
    with (trial / "verifier" / "reward.txt").open("wb") as handle:
        handle.truncate(70 * 1024 * 1024)  # its size is all the tool looks at
    ran = run_tool(env, "run", trial, "--case", "correct", cwd=tmp_path)
    no_traceback(ran)
    (advice,) = [line.strip() for line in ran.stdout.splitlines() if line.strip().startswith("try: ")]
    assert "dict" not in advice and "a number" in advice, advice


def test_a_trial_named_as_the_job_lists_it_is_picked_by_that_spelling(task, runs, env, elsewhere):
    """A job's trial whose folder name ends in a zero-width space is listed ``demo__aaa<U+200B>``, as
    ``--case`` names such a case: typed back, ``--trial`` refused it as no trial, and its refusal
    wrote the name ``'demo__aaa\\u200b'`` and listed the trials with the character raw (two names
    reading alike). It picks the trial now, and a refusal spells every name as the listing does."""
    demo = task()
    job = make_job(
        runs / "jobs" / "j", {"demo__aaa": dict(task=demo, **PASSED), "demo__aaa\u200b": dict(task=demo, **PASSED)}
    )
    picked = run_tool(env, "explain", job, "--trial", "demo__aaa<U+200B>", "--json", cwd=elsewhere)
    assert picked.returncode == 0, picked.stderr
    assert json.loads(picked.stdout)["trial"]["name"] == "demo__aaa\u200b", picked.stdout
    refused = run_tool(env, "explain", job, "--trial", "demo__\u200bx", cwd=elsewhere)
    no_traceback(refused)
    assert refused.returncode == 2
    assert "no trial 'demo__<U+200B>x' (trials: demo__aaa, demo__aaa<U+200B>)" in refused.stderr, refused.stderr
    assert "\u200b" not in refused.stderr and "\\u" not in refused.stderr


def test_two_trials_reading_alike_spelled_are_refused_with_folders_to_type(task, runs, env, elsewhere):
    """Trials ``demo__aaa`` + U+200B and one literally named ``demo__aaa<U+200B>`` list alike:
    ``--trial 'demo__aaa<U+200B>'`` silently picked the literal one. It is refused now, naming each
    trial's folder as bash takes it back, and each so typed opens that trial."""
    import subprocess

    demo = task()
    raw, literal = "demo__aaa\u200b", "demo__aaa<U+200B>"
    job = make_job(runs / "jobs" / "j", {raw: dict(task=demo, **PASSED), literal: dict(task=demo, **PASSED)})
    refused = run_tool(env, "explain", job, "--trial", literal, cwd=elsewhere)
    no_traceback(refused)
    assert refused.returncode == 2 and "2 trials of job j read so" in refused.stderr, refused.stderr
    assert "\u200b" not in refused.stderr, refused.stderr
    typed = refused.stderr.rstrip().rpartition(": ")[2].split(", ")
    for word, name in zip(typed, sorted((literal, raw)), strict=True):
        path = subprocess.run(["bash", "-c", f"printf %s {word}"], capture_output=True, text=True, check=True)
        assert path.stdout == str(job / name), (word, path.stdout)
        opened = run_tool(env, "explain", path.stdout, "--json", cwd=elsewhere)
        assert json.loads(opened.stdout)["trial"]["name"] == name, opened.stderr
    picked = run_tool(env, "explain", job, "--trial", raw, "--json", cwd=elsewhere)
    assert json.loads(picked.stdout)["trial"]["name"] == raw, picked.stderr


def test_two_steps_reading_alike_spelled_are_refused_with_folders_to_type(real, env, tmp_path):
    """A trial's steps named ``first`` + U+200B and, literally, ``first<U+200B>`` list alike:
    ``--step 'first<U+200B>'`` picked the first that matched. It is refused now, naming each step's
    folder as bash takes it back, and each so typed opens that step."""
    import subprocess

    trial = next(p for p in (real / "jobs" / "multi-step").iterdir() if p.is_dir())
    raw, literal = "first\u200b", "first<U+200B>"
    result = trial / "result.json"
    result.write_text(result.read_text().replace('"first"', json.dumps(raw)).replace('"second"', f'"{literal}"'))
    (trial / "steps" / "first").rename(trial / "steps" / raw)
    (trial / "steps" / "second").rename(trial / "steps" / literal)
    refused = run_tool(env, "explain", trial, "--step", literal, cwd=tmp_path)
    no_traceback(refused)
    assert refused.returncode == 2 and "2 steps of trial" in refused.stderr, refused.stderr
    assert "\u200b" not in refused.stderr, refused.stderr
    typed = refused.stderr.rstrip().rpartition(": ")[2].split(", ")
    for word, name in zip(typed, (raw, literal), strict=True):
        path = subprocess.run(["bash", "-c", f"printf %s {word}"], capture_output=True, text=True, check=True)
        assert path.stdout == str(trial / "steps" / name), (word, path.stdout)
        opened = run_tool(env, "explain", path.stdout, "--json", cwd=tmp_path)
        assert json.loads(opened.stdout)["trial"]["step"] == name, opened.stderr


def test_a_left_out_folder_is_spelled_and_found_by_its_spelling(task, runs, env, elsewhere):
    """A job's folder that is no trial, named with U+200B and U+202E: ``--trial`` gave its reason with
    both characters raw (the line drawn reversed), and typed as the listing spells it, said the job
    has no such trial instead of why the folder is left out."""
    from verifier_tui.engine.harbor.folders import NOT_A_TRIAL

    job = make_job(runs / "jobs" / "j", {"demo__aaa": dict(task=task(), **PASSED)})
    (job / "lnk\u200b\u202e").mkdir()
    for typed in ("lnk\u200b\u202e", "lnk<U+200B><U+202E>"):
        done = run_tool(env, "explain", job, "--trial", typed, cwd=elsewhere)
        no_traceback(done)
        assert done.returncode == 2, done.stderr
        said = f"--trial lnk<U+200B><U+202E>: lnk<U+200B><U+202E>: {NOT_A_TRIAL}; name a trial"
        assert said in done.stderr, done.stderr
        assert "\u200b" not in done.stderr and "\u202e" not in done.stderr, done.stderr


def test_folders_left_out_reading_alike_are_refused_with_folders_to_type(task, runs, env, elsewhere):
    """Two folders that are no trial, ``lnk`` + U+200B and one literally named ``lnk<U+200B>``, list
    alike: ``--trial 'lnk<U+200B>'`` said the job has no such trial; and a trial literally named
    ``demo<U+200B>`` beside a left-out folder ``demo`` + U+200B was picked without a word. Both are
    refused now, naming each folder as bash takes it back."""
    import subprocess

    job = make_job(runs / "jobs" / "j", {"demo<U+200B>": dict(task=task(), **PASSED)})
    for name in ("demo\u200b", "lnk\u200b", "lnk<U+200B>"):
        (job / name).mkdir()
    for typed, names in (
        ("lnk<U+200B>", ("lnk<U+200B>", "lnk\u200b")),
        ("demo<U+200B>", ("demo<U+200B>", "demo\u200b")),
    ):
        refused = run_tool(env, "explain", job, "--trial", typed, cwd=elsewhere)
        no_traceback(refused)
        assert refused.returncode == 2 and "2 folders of job j read so" in refused.stderr, refused.stderr
        assert "\u200b" not in refused.stderr and "has no trial" not in refused.stderr, refused.stderr
        typed_words = refused.stderr.rstrip().rpartition(": ")[2].split(", ")
        shown = [
            subprocess.run(["bash", "-c", f"printf %s {w}"], capture_output=True, text=True).stdout for w in typed_words
        ]
        assert sorted(shown) == sorted(str(job / name) for name in names), refused.stderr
