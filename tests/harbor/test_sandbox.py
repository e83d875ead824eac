"""The sandbox side of a trial: Harbor's verdict beside what the reward files
say, test-stdout.txt with the runner's report recognised (from the real
runner, run as the sandbox's shim runs it), and where the run stopped."""

from __future__ import annotations

import json
import sys

import pytest

from tests.helpers.harbor import harbor_exception, harbor_masked_failure_log, make_job, sandbox_run
from tests.helpers.tasks import python_or_skip
from verifier_tui.engine.harbor.folders import open_harbor
from verifier_tui.engine.harbor.runner_output import parse_runner_output
from verifier_tui.engine.harbor.walkthrough import trial_json, walk_trial

NOT_FOUND = "RewardFileNotFoundError"


def trial_of(runs, task, name="demo__aaaaaaa", **kwargs):
    make_job(runs / "jobs" / "j", {name: dict(task=task, **kwargs)})
    return open_harbor(runs / "jobs" / "j" / name)[0]


def statuses(walk):
    return {p.name: p.status for p in walk.sandbox.phases.phases}


def test_verify_raised_no_reward_with_the_traceback_mapped_to_local_files(task, runs, tmp_path):
    verifier = (
        "import json\n\n\ndef verify(workspace):\n"
        "    data = json.loads((workspace / 'out.json').read_text())\n"
        "    return float(data['score'])\n"
    )
    demo = task(
        verifier=verifier, toml='version = "1.0"\nartifacts = ["/app"]\n\n[verifier]\nenvironment_mode = "separate"\n'
    )
    run = sandbox_run(demo, tmp_path, workspace={"out.json": '{"points": 3}'})
    trial = trial_of(
        runs,
        demo,
        mode="separate",
        app={"out.json": '{"points": 3}'},
        exception=harbor_exception(NOT_FOUND, "No reward file found"),
        verifier_files=run.files,
    )
    walk = walk_trial(trial)
    side = walk.sandbox
    assert side.verdict.error == NOT_FOUND and side.verdict.source == "result.json"
    assert side.computed.error == NOT_FOUND and side.disagreement is None
    assert side.runner.kind == "traceback" and side.runner.traceback.bare_type == "KeyError"
    assert side.phases.stopped_at == "verify_called"
    assert statuses(walk)["arguments_bound"] == "done" and statuses(walk)["reward_written"] == "not reached"
    assert "Harbor scored this trial with RewardFileNotFoundError" in side.phases.explanation
    assert side.failure.sandbox_path == "/tests/verifier.py" and side.failure.line == 6
    assert side.failure.local_path == demo / "tests" / "verifier.py"
    assert str(demo / "tests" / "verifier.py") in side.mapped_output
    assert walk.workspace.exact is True and walk.workspace.path == trial.path / "artifacts" / "app"
    out = trial_json(walk)
    assert out["sandbox"]["failure"]["path"] == str(demo / "tests" / "verifier.py")
    assert out["sandbox"]["phase"] == "verify_called" and out["sandbox"]["exception_type"] == NOT_FOUND


def test_an_import_failure_and_a_syntax_error_stop_at_the_import(task, runs, tmp_path):
    demo = task(verifier="import helper_that_is_not_there\n\ndef verify(workspace):\n    return 1.0\n")
    run = sandbox_run(demo, tmp_path / "a")
    walk = walk_trial(
        trial_of(runs, demo, verifier_files=run.files, exception=harbor_exception(NOT_FOUND, "No reward file found"))
    )
    assert walk.sandbox.phases.stopped_at == "module_imported"
    assert walk.sandbox.failure.line == 1
    (demo / "tests" / "verifier.py").write_text("def verify(workspace:\n    return 1.0\n")
    run = sandbox_run(demo, tmp_path / "b")
    walk = walk_trial(
        trial_of(
            runs,
            demo,
            name="demo__bbbbbbb",
            verifier_files=run.files,
            exception=harbor_exception(NOT_FOUND, "No reward file found"),
        )
    )
    assert walk.sandbox.runner.traceback.bare_type == "SyntaxError"
    assert walk.sandbox.phases.stopped_at == "module_imported"


def test_a_contract_error_from_a_required_response(task, runs, tmp_path):
    demo = task(verifier="def verify(workspace, response):\n    return 1.0\n")
    run = sandbox_run(demo, tmp_path)
    walk = walk_trial(
        trial_of(runs, demo, verifier_files=run.files, exception=harbor_exception(NOT_FOUND, "No reward file found"))
    )
    side = walk.sandbox
    assert side.runner.kind == "contract_error"
    assert "requires 'response' without a default" in side.runner.contract_message
    assert side.phases.stopped_at == "arguments_bound"
    assert statuses(walk)["module_imported"] == "done" and statuses(walk)["verify_called"] == "not reached"
    assert trial_json(walk)["sandbox"]["contract_error"] == side.runner.contract_message


def test_a_contract_error_after_output_verify_left_unfinished(task, runs, tmp_path):
    """verify wrote `0;` with no newline, then returned 'pass': test-stdout.txt held
    `0;run_verifier: error: verify returned ...`, read as no report of the runner (kind 'other', every
    step unknown, test.sh said perhaps not to be the runner's shim)."""
    demo = task(verifier="import sys\n\ndef verify(workspace):\n    sys.stderr.write('0;')\n    return 'pass'\n")
    run = sandbox_run(demo, tmp_path)
    assert "0;run_verifier: error: verify returned 'pass'" in run.files["test-stdout.txt"]
    walk = walk_trial(
        trial_of(runs, demo, verifier_files=run.files, exception=harbor_exception(NOT_FOUND, "No reward file found"))
    )
    side = walk.sandbox
    assert side.runner.kind == "contract_error", side.runner
    assert side.runner.contract_message.startswith("verify returned 'pass' (str)")
    assert side.phases.stopped_at == "reward_written" and statuses(walk)["verify_called"] == "done"


def test_a_reward_planted_before_the_run_is_removed_by_the_runner(task, runs, tmp_path):
    """The agent left reward.json (which Harbor reads first) in the shared
    reward folder; the runner removes it and the verifier's own 0.25 stands."""
    demo = task(verifier="def verify(workspace):\n    return 0.25\n")
    run = sandbox_run(demo, tmp_path / "a", planted={"reward.json": '{"reward": 1.0}', "reward.txt": "1.0"})
    assert set(run.files) == {"test-stdout.txt", "reward.txt"}
    walk = walk_trial(trial_of(runs, demo, rewards={"reward": 0.25}, verifier_files=run.files))
    assert walk.sandbox.verdict.rewards == {"reward": 0.25} and walk.sandbox.disagreement is None
    assert set(statuses(walk).values()) == {"done"}
    assert walk.sandbox.phases.phases[-1].detail == "reward.txt: 0.25"
    # And when verify raises, the planted verdict is gone too: no reward at all.
    (demo / "tests" / "verifier.py").write_text("def verify(workspace):\n    raise RuntimeError('no')\n")
    run = sandbox_run(demo, tmp_path / "b", planted={"reward.txt": "1.0"})
    assert set(run.files) == {"test-stdout.txt"}
    walk = walk_trial(
        trial_of(
            runs,
            demo,
            name="demo__bbbbbbb",
            verifier_files=run.files,
            exception=harbor_exception(NOT_FOUND, "No reward file found"),
        )
    )
    assert walk.sandbox.computed.error == NOT_FOUND and statuses(walk)["reward_files_cleared"] == "done"


def test_a_verifier_timeout(task, runs, tmp_path):
    demo = task(verifier="import time\n\ndef verify(workspace):\n    time.sleep(60)\n    return 1.0\n", timeout=1.0)
    run = sandbox_run(demo, tmp_path, timeout_s=1.0, keep_output_on_timeout=False)  # a cloud sandbox
    assert run.timed_out and run.files == {}
    trial = trial_of(
        runs,
        demo,
        verifier_files=run.files,
        verifier_seconds=1.0,
        exception=harbor_exception("VerifierTimeoutError", "Verifier execution timed out after 1.0 seconds"),
    )
    walk = walk_trial(trial)
    assert walk.sandbox.verdict.error == "VerifierTimeoutError"
    assert walk.facts.timed_out and walk.facts.timeout.seconds == 1.0 and walk.facts.timeout.recorded_seconds == 1.0
    assert walk.sandbox.phases.stopped_at == "timeout"
    assert set(statuses(walk).values()) == {"unknown"}
    assert walk.sandbox.disagreement is None  # nothing was written before Harbor gave up
    assert any("timed out" in s for s in walk.facts.sentences())


def test_an_agent_timeout_then_a_verifier_failure_found_only_in_trial_log(task, runs, tmp_path):
    demo = task(verifier="def verify(workspace):\n    return (workspace / 'hello.txt').read_text() == 'hi'\n")
    run = sandbox_run(demo, tmp_path)
    message = "No reward file found at jobs/j/demo__aaaaaaa/verifier/reward.txt or ..."
    trial = trial_of(
        runs,
        demo,
        agent="claude-code",
        verifier_files=run.files,
        exception=harbor_exception("AgentTimeoutError", "Agent execution timed out after 120.0 seconds"),
        log=harbor_masked_failure_log("demo__aaaaaaa", NOT_FOUND, message),
    )
    walk = walk_trial(trial)
    assert walk.facts.agent_failure.type == "AgentTimeoutError"
    assert walk.facts.verifier_exception.type == NOT_FOUND and walk.facts.verifier_exception_source == "trial.log"
    assert walk.sandbox.verdict.error == NOT_FOUND and walk.sandbox.verdict.source == "trial.log"
    assert walk.sandbox.phases.stopped_at == "verify_called"  # FileNotFoundError in verify
    out = trial_json(walk)
    assert out["sandbox"]["exception_type"] == "AgentTimeoutError"
    assert out["sandbox"]["verifier_exception"] == {"type": NOT_FOUND, "message": message, "source": "trial.log"}
    assert any("recorded only in trial.log" in s for s in out["sandbox"]["facts"])


def test_a_verifier_timeout_after_an_agent_failure_is_read_through_the_chain(task, runs):
    trial = trial_of(
        runs,
        task(),
        verifier_files={},
        exception=harbor_exception("AgentTimeoutError", "Agent execution timed out after 60.0 seconds"),
        log=harbor_masked_failure_log(
            "demo__aaaaaaa", "VerifierTimeoutError", "Verifier execution timed out after 30.0 seconds"
        ),
    )
    walk = walk_trial(trial)
    assert walk.facts.verifier_exception.type == "VerifierTimeoutError" and walk.facts.timed_out


def test_an_unparseable_reward_txt(task, runs):
    """A plain test.sh task wrote a reward.txt that is no number."""
    demo = task(
        verifier=None, shim=False, files={"test.sh": "#!/bin/sh\necho 'score: high' > /logs/verifier/reward.txt\n"}
    )
    trial = trial_of(
        runs,
        demo,
        verifier_files={"test-stdout.txt": "", "reward.txt": "score: high\n"},
        exception=harbor_exception("VerifierOutputParseError", "Failed to parse rewards from text file"),
    )
    walk = walk_trial(trial)
    side = walk.sandbox
    assert side.computed.error == "VerifierOutputParseError" and side.verdict.error == "VerifierOutputParseError"
    assert side.disagreement is None
    assert "could not use it" in side.phases.explanation and "not the shim" in side.phases.explanation
    from verifier_tui.engine.harbor.replay import plan_replay

    assert plan_replay(walk.location, walk.workspace, walk.env, walk.step.name).skipped.startswith(
        "tests/test.sh is the task's own script, not the runner's shim"
    )


def test_a_bare_number_in_reward_json(task, runs):
    trial = trial_of(
        runs,
        task(),
        verifier_files={"test-stdout.txt": "", "reward.json": "0.5"},
        exception=harbor_exception("ValidationError", "1 validation error for VerifierResult"),
    )
    side = walk_trial(trial).sandbox
    assert side.computed.error == "ValidationError" and side.verdict.error == "ValidationError"
    assert side.disagreement is None


def test_reward_files_that_contradict_result_json_get_a_sentence(task, runs):
    trial = trial_of(runs, task(), rewards={"reward": 1.0}, verifier_files={"test-stdout.txt": "", "reward.txt": "0.0"})
    side = walk_trial(trial).sandbox
    assert side.verdict.rewards == {"reward": 1.0}  # what Harbor scored stands
    assert side.disagreement.startswith("the reward files now give rewards reward=0.0, but result.json recorded")


def test_the_shims_python_check(task, runs):
    output = "test.sh: the verifier needs Python 3.8 or newer; found only an older one: python3\n"
    trial = trial_of(
        runs,
        task(),
        verifier_files={"test-stdout.txt": output},
        exception=harbor_exception(NOT_FOUND, "No reward file found"),
    )
    side = walk_trial(trial).sandbox
    assert side.runner.kind == "shim_no_python" and side.phases.stopped_at == "python_check"
    assert set(p.status for p in side.phases.phases) == {"not reached"}
    assert "exited 127" in side.phases.explanation


def test_the_runner_report_is_found_after_the_verifiers_own_prints(task, runs, tmp_path):
    demo = task(
        verifier="import sys\n\ndef verify(workspace):\n    print('checking', file=sys.stderr)\n"
        "    print('Traceback (most recent call last): not really')\n"
        "    raise ValueError('bad')\n"
    )
    run = sandbox_run(demo, tmp_path)
    assert "checking" in run.files["test-stdout.txt"]
    parsed = parse_runner_output(run.files["test-stdout.txt"])
    assert parsed.kind == "traceback" and parsed.traceback.bare_type == "ValueError"
    assert parsed.traceback.exception_message == "bad"


def test_a_python_version_is_seen_in_the_sandbox_traceback(task, runs, tmp_path):
    demo = task(verifier="def verify(workspace):\n    return float((workspace / 'n.txt').read_text())\n")
    run = sandbox_run(demo, tmp_path)  # pathlib's frames name the interpreter's folder
    parsed = parse_runner_output(run.files["test-stdout.txt"])
    import sys

    assert parsed.python_version == f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert (
        json.loads(json.dumps(trial_json(walk_trial(trial_of(runs, demo, verifier_files=run.files))), default=str))[
            "sandbox"
        ]["python"]
        == parsed.python_version
    )


def test_a_huge_test_stdout_is_read_bounded(task, runs):
    noise = "x" * 100 + "\n"
    text = noise * 20000 + "run_verifier: error: verify returned None (NoneType); it must return a number\n"
    trial = trial_of(
        runs,
        task(),
        verifier_files={"test-stdout.txt": text},
        exception=harbor_exception(NOT_FOUND, "No reward file found"),
    )
    side = walk_trial(trial).sandbox
    assert side.output.dropped_bytes > 0 and len(side.output.text) < 300_000
    assert side.phases.stopped_at == "reward_written"


def test_a_verifier_that_never_ran_has_no_verdict_to_compare(task, runs):
    """AgentSetupTimeoutError's policy does not grade: Harbor skips the verifier."""
    trial = trial_of(
        runs,
        task(),
        verifier_ran=False,
        verifier_files=None,
        exception=harbor_exception("AgentSetupTimeoutError", "Agent setup timed out after 360.0 seconds"),
    )
    walk = walk_trial(trial)
    assert walk.facts.verifier_ran is False and walk.facts.agent_failure.type == "AgentSetupTimeoutError"
    assert walk.sandbox.verdict.known is False
    assert walk.sandbox.verdict.message == "the verifier never ran (AgentSetupTimeoutError)"
    assert walk.sandbox.phases.stopped_at == "not_run"
    assert {p.status for p in walk.sandbox.phases.phases} == {"not reached"}
    assert "the verifier never ran" in walk.facts.sentences()


# What Python 3.11's own printer (no runner: `--runner task` with an older shim, a trial's sandbox side)
# writes for an asyncio.TaskGroup whose task imports a module with a syntax error: the sub-exception's
# source and caret lines carry no `|` (3.11 and 3.12 prefix only the first line of each chunk).
PY311_GROUPED_SYNTAX_ERROR = (
    "  + Exception Group Traceback (most recent call last):\n"
    '  |   File "/tests/verifier.py", line 13, in <module>\n'
    "  |     asyncio.run(verify_async())\n"
    '  |   File "/usr/local/lib/python3.11/asyncio/runners.py", line 190, in run\n'
    "  |     return runner.run(main)\n"
    "  |            ^^^^^^^^^^^^^^^^\n"
    '  |   File "/usr/local/lib/python3.11/asyncio/runners.py", line 118, in run\n'
    "  |     return self._loop.run_until_complete(task)\n"
    "  |            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
    '  |   File "/usr/local/lib/python3.11/asyncio/base_events.py", line 653, in run_until_complete\n'
    "  |     return future.result()\n"
    "  |            ^^^^^^^^^^^^^^^\n"
    '  |   File "/tests/verifier.py", line 9, in verify_async\n'
    "  |     async with asyncio.TaskGroup() as group:\n"
    '  |   File "/usr/local/lib/python3.11/asyncio/taskgroups.py", line 145, in __aexit__\n'
    "  |     raise me from None\n"
    "  | ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)\n"
    "  +-+---------------- 1 ----------------\n"
    "    | Traceback (most recent call last):\n"
    '    |   File "/tests/verifier.py", line 5, in check\n'
    "    |     import broken  # noqa: F401\n"
    "    |     ^^^^^^^^^^^^^\n"
    '    |   File "/tests/broken.py", line 1\n'
    "    def f(:\n"
    "          ^\n"
    "    | SyntaxError: invalid syntax\n"
    "    +------------------------------------\n"
)


def test_a_syntax_error_in_an_exception_group_printed_by_python_3_11_is_read():
    """The group's report, with two lines unmarked inside it, ended there: the rest stayed behind `|`,
    so it read as kind 'other' with the last line '    +----'; the sub-exception is the report."""
    parsed = parse_runner_output(PY311_GROUPED_SYNTAX_ERROR)
    assert parsed.kind == "traceback", parsed.last_line
    assert parsed.traceback.bare_type == "SyntaxError" and parsed.traceback.exception_message == "invalid syntax"
    assert [(f.file, f.line) for f in parsed.traceback.frames][-2:] == [
        ("/tests/verifier.py", 5),
        ("/tests/broken.py", 1),
    ], parsed.traceback.frames


# Python 3.11.7's own printer (/root/.pyenv/versions/3.11.7, the script run bare, its path written as
# /tests/verifier.py) for two failed tasks of an asyncio.TaskGroup, the first's message two lines long:
# 3.11 and 3.12 print the message's later lines at column 0, with no margin (3.13 puts `    | ` before it).
PY311_GROUPED_MULTILINE_MESSAGE = (
    "  + Exception Group Traceback (most recent call last):\n"
    '  |   File "/tests/verifier.py", line 9, in <module>\n'
    "  |     asyncio.run(main())\n"
    '  |   File "/root/.pyenv/versions/3.11.7/lib/python3.11/asyncio/runners.py", line 190, in run\n'
    "  |     return runner.run(main)\n"
    "  |            ^^^^^^^^^^^^^^^^\n"
    '  |   File "/root/.pyenv/versions/3.11.7/lib/python3.11/asyncio/runners.py", line 118, in run\n'
    "  |     return self._loop.run_until_complete(task)\n"
    "  |            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
    '  |   File "/root/.pyenv/versions/3.11.7/lib/python3.11/asyncio/base_events.py", line 653, in run_until_complete\n'
    "  |     return future.result()\n"
    "  |            ^^^^^^^^^^^^^^^\n"
    '  |   File "/tests/verifier.py", line 7, in main\n'
    "  |     async with asyncio.TaskGroup() as g:\n"
    '  |   File "/root/.pyenv/versions/3.11.7/lib/python3.11/asyncio/taskgroups.py", line 145, in __aexit__\n'
    "  |     raise me from None\n"
    "  | ExceptionGroup: unhandled errors in a TaskGroup (2 sub-exceptions)\n"
    "  +-+---------------- 1 ----------------\n"
    "    | Traceback (most recent call last):\n"
    '    |   File "/tests/verifier.py", line 3, in a\n'
    '    |     raise ValueError("first line\\nsecond line of message")\n'
    "    | ValueError: first line\n"
    "second line of message\n"
    "    +---------------- 2 ----------------\n"
    "    | Traceback (most recent call last):\n"
    '    |   File "/tests/verifier.py", line 5, in b\n'
    '    |     raise KeyError("second task")\n'
    "    | KeyError: 'second task'\n"
    "    +------------------------------------\n"
)


def test_a_multi_line_message_in_an_exception_group_printed_by_python_3_11_is_inside_the_group():
    """Its second line, at column 0, ended the group there: the second task's KeyError stayed behind `|`,
    and the report read was the ValueError at :3, where 3.13's output of the same run reads KeyError at :5."""
    parsed = parse_runner_output(PY311_GROUPED_MULTILINE_MESSAGE)
    assert parsed.kind == "traceback", parsed.last_line
    assert parsed.traceback.bare_type == "KeyError", parsed.traceback
    assert [(f.file, f.line) for f in parsed.traceback.frames] == [("/tests/verifier.py", 5)]


# Python 3.11.7 again: `logging.exception` of an ExceptionGroup, then the verifier's own table drawn
# with `  |` and `  +---` (and a traceback-looking row in it), then its last line.
PY311_GROUP_LOGGED_THEN_A_TABLE = (
    "ERROR:root:logged\n"
    "  + Exception Group Traceback (most recent call last):\n"
    '  |   File "/tests/verifier.py", line 3, in <module>\n'
    '  |     raise ExceptionGroup("eg", [ValueError("inner")])\n'
    "  | ExceptionGroup: eg (1 sub-exception)\n"
    "  +-+---------------- 1 ----------------\n"
    "    | ValueError: inner\n"
    "    +------------------------------------\n"
    "  | step | score |\n"
    "  +------+-------+\n"
    "  | Traceback (most recent call last):\n"
    '  |   File "/tests/fake.py", line 99, in x\n'
    "  | RuntimeError: from a table\n"
    "done\n"
)


# The same with the group's last sub-exception a group itself: Python 3.11 then prints one closing rule for
# both, at the inner group's margin (nested asyncio TaskGroups), and the outer group was never closed.
PY311_NESTED_GROUP_LOGGED_THEN_A_TABLE = PY311_GROUP_LOGGED_THEN_A_TABLE.replace(
    '[ValueError("inner")]',
    '[ExceptionGroup("in", [ValueError("inner")])]',
).replace(
    "    | ValueError: inner\n    +------------------------------------\n",
    "    | ExceptionGroup: in (1 sub-exception)\n"
    "    +-+---------------- 1 ----------------\n"
    "      | ValueError: inner\n"
    "      +------------------------------------\n",
)


@pytest.mark.parametrize(
    "text", [PY311_GROUP_LOGGED_THEN_A_TABLE, PY311_NESTED_GROUP_LOGGED_THEN_A_TABLE], ids=["flat", "nested"]
)
def test_what_follows_an_exception_groups_closing_rule_is_not_the_groups(text):
    """The table's rows were read as the group's (a column-0 line alone ended it): their `|` taken off,
    `RuntimeError: from a table` became a report, blamed on /tests/fake.py:99 that the run never raised.
    The last report is the logged group's own, as a logged traceback's would be."""
    parsed = parse_runner_output(text)
    assert parsed.traceback is not None and parsed.traceback.bare_type == "ExceptionGroup", parsed.traceback
    assert [(frame.file, frame.line) for frame in parsed.traceback.frames] == [("/tests/verifier.py", 3)]
    assert parsed.last_line == "done"


def test_a_group_nested_before_its_last_sibling_is_read_to_that_sibling():
    """A nested group's closing rule followed by its sibling's rule (+---- 3 ----) does not end the outer
    group: the report read is the last sub-exception, TypeError, as Python 3.11 prints it."""
    text = (
        "  + Exception Group Traceback (most recent call last):\n"
        '  |   File "/tests/verifier.py", line 3, in verify\n'
        "  | ExceptionGroup: o (3 sub-exceptions)\n"
        "  +-+---------------- 1 ----------------\n"
        "    | ValueError: v\n"
        "    +---------------- 2 ----------------\n"
        "    | ExceptionGroup: i (1 sub-exception)\n"
        "    +-+---------------- 1 ----------------\n"
        "      | KeyError: 'k'\n"
        "      +------------------------------------\n"
        "    +---------------- 3 ----------------\n"
        "    | Traceback (most recent call last):\n"
        '    |   File "/tests/verifier.py", line 7, in check\n'
        "    | TypeError: t\n"
        "    +------------------------------------\n"
    )
    parsed = parse_runner_output(text)
    assert parsed.traceback is not None and parsed.traceback.bare_type == "TypeError"
    assert [(frame.file, frame.line) for frame in parsed.traceback.frames][-1] == ("/tests/verifier.py", 7)


# Python 3.13.0's own printer for an asyncio.TaskGroup whose task raised, after the verifier wrote `0;` with no
# newline: the group's first line ends that line.
PY313_GROUP_AFTER_UNFINISHED_OUTPUT = (
    "0;  + Exception Group Traceback (most recent call last):\n"
    '  |   File "/tests/verifier.py", line 11, in <module>\n'
    "  |     asyncio.run(main())\n"
    "  |     ~~~~~~~~~~~^^^^^^^^\n"
    '  |   File "/tests/verifier.py", line 9, in main\n'
    "  |     async with asyncio.TaskGroup() as g:\n"
    "  |                ~~~~~~~~~~~~~~~~~^^\n"
    "  | ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)\n"
    "  +-+---------------- 1 ----------------\n"
    "    | Traceback (most recent call last):\n"
    '    |   File "/tests/verifier.py", line 3, in a\n'
    '    |     raise ValueError("first")\n'
    "    | ValueError: first\n"
    "    +------------------------------------\n"
)


def test_an_exception_group_printed_after_unfinished_output_is_read():
    """`0;  + Exception Group Traceback ...` was no group's first line: the group was left unread, the
    output read as kind 'other' with no failing line."""
    parsed = parse_runner_output(PY313_GROUP_AFTER_UNFINISHED_OUTPUT)
    assert parsed.kind == "traceback", parsed.last_line
    assert parsed.traceback.bare_type == "ValueError" and parsed.traceback.exception_message == "first"
    assert [(f.file, f.line) for f in parsed.traceback.frames] == [("/tests/verifier.py", 3)]


# What Python 3.8, 3.11 and 3.13 print for a script whose thread raised (KeyError), which then raised ValueError
# at line 20 itself, an atexit callback and a __del__ raising as the interpreter exited (3.8 words the atexit one
# "Error in atexit._run_exitfuncs:"; 3.13 puts the colon after the callback).
_THREAD = (
    "Traceback (most recent call last):\n"
    '  File "/usr/lib/python3.11/threading.py", line 1045, in _bootstrap_inner\n'
    "    self.run()\n"
    '  File "/usr/lib/python3.11/threading.py", line 982, in run\n'
    "    self._target(*self._args, **self._kwargs)\n"
    '  File "/tests/verifier.py", line 14, in worker\n'
    '    raise KeyError("in a thread")\n'
    "KeyError: 'in a thread'\n"
)
_RAISED = (
    "Traceback (most recent call last):\n"
    '  File "/tests/verifier.py", line 20, in <module>\n'
    '    raise ValueError("the answer is wrong")\n'
    "ValueError: the answer is wrong\n"
)
_AT_EXIT = (
    "Traceback (most recent call last):\n"
    '  File "/tests/verifier.py", line 10, in cleanup\n'
    '    raise OSError("atexit cleanup failed")\n'
    "OSError: atexit cleanup failed\n"
    "Exception ignored in: <function Scratch.__del__ at 0x7f5e8f022ee0>\n"
    "Traceback (most recent call last):\n"
    '  File "/tests/verifier.py", line 6, in __del__\n'
    "RuntimeError: cleanup failed\n"
)


@pytest.mark.parametrize(
    ("thread", "atexit"),
    [
        ("Exception in thread Thread-1:", "Error in atexit._run_exitfuncs:"),
        ("Exception in thread Thread-1 (worker):", "Exception ignored in atexit callback: <function cleanup at 0x7f>"),
        ("Exception in thread Thread-1 (worker):", "Exception ignored in atexit callback <function cleanup at 0x7f>:"),
    ],
    ids=["3.8", "3.11", "3.13"],
)
def test_reports_of_exceptions_that_did_not_end_the_run_are_passed_over(thread, atexit):
    """The report read was the last one, a __del__'s that Python ignored as the interpreter exited:
    RuntimeError at :6, where the run ended on ValueError at :20."""
    parsed = parse_runner_output(f"{thread}\n{_THREAD}{_RAISED}{atexit}\n{_AT_EXIT}")
    assert parsed.traceback is not None and parsed.traceback.bare_type == "ValueError", parsed.traceback
    assert [(frame.file, frame.line) for frame in parsed.traceback.frames] == [("/tests/verifier.py", 20)]
    alone = parse_runner_output(f"{thread}\n{_THREAD}")  # a thread's report alone ended nothing
    assert alone.traceback is None and alone.kind == "other", alone


# verify raised with an agent program's crash in its message: Python prints the message's first line after the
# exception's name, so `AssertionError: prog crashed: Traceback (most recent call last):` ends a line.
RAISES_WITH_A_CRASH_IN_ITS_MESSAGE = """\
import subprocess
import sys

def verify(workspace):
    proc = subprocess.run([sys.executable, "-c", "x = 1\\nprint(1 / 0)"], capture_output=True, text=True)
    raise AssertionError(f"prog crashed: {proc.stderr}")
"""


def test_a_report_in_an_exceptions_message_is_not_split_off_it(task, runs, tmp_path):
    """The header ending `AssertionError: prog crashed: Traceback ...` was split off it, so the report read was
    the agent program's ZeroDivisionError at <string>:2, not verify's AssertionError at verifier.py:6."""
    demo = task(verifier=RAISES_WITH_A_CRASH_IN_ITS_MESSAGE)
    run = sandbox_run(demo, tmp_path)
    assert "AssertionError: prog crashed: Traceback (most recent call last):" in run.files["test-stdout.txt"]
    walk = walk_trial(
        trial_of(runs, demo, verifier_files=run.files, exception=harbor_exception(NOT_FOUND, "No reward file found"))
    )
    report = walk.sandbox.runner.traceback
    assert report is not None and report.bare_type == "AssertionError", report
    assert [(frame.file, frame.line) for frame in report.frames][-1] == ("/tests/verifier.py", 6)


RAISES_ON_A_SOURCE_LINE_NAMING_THE_PREFIX = """\
def verify(workspace):
    out = "fine"
    assert out.startswith("run_verifier: error: "), "no contract line"
    return 1.0
"""


def test_the_runners_prefix_in_a_reports_source_line_is_not_its_contract_line(task, runs, tmp_path):
    """The prefix was split out of the source line Python printed under the frame, the column-0 half read as
    the report's last line: exception 'run_verifier', not AssertionError at verifier.py:3."""
    demo = task(verifier=RAISES_ON_A_SOURCE_LINE_NAMING_THE_PREFIX)
    run = sandbox_run(demo, tmp_path)
    walk = walk_trial(
        trial_of(runs, demo, verifier_files=run.files, exception=harbor_exception(NOT_FOUND, "No reward file found"))
    )
    report = walk.sandbox.runner.traceback
    assert walk.sandbox.runner.kind == "traceback" and report is not None, walk.sandbox.runner
    assert report.bare_type == "AssertionError" and report.exception_message == "no contract line", report
    assert [(frame.file, frame.line) for frame in report.frames][-1] == ("/tests/verifier.py", 3)
    assert statuses(walk)["verify_called"] == "failed"


def test_a_reward_beside_the_runners_report_is_not_said_to_be_the_runners(task, runs, tmp_path):
    """verify raised (the runner's report, exit 1, no reward), then a reward.txt of 1.0 was written by something
    else (test.sh's `|| echo 1 > reward.txt`, an agent's process still running): the sandbox's side said `the
    runner wrote reward.txt; Harbor read {"reward": 1.0}`, every step done and no failing line. The same for a
    reward beside the runner's contract error, which it never writes either: as verify may have printed that
    line itself (test-stdout.txt is the run's to write), both are named, the steps not known."""
    demo = task(verifier="def verify(workspace):\n    x = 1\n    raise RuntimeError('no')\n")
    run = sandbox_run(demo, tmp_path / "a")
    walk = walk_trial(trial_of(runs, demo, rewards={"reward": 1.0}, verifier_files={**run.files, "reward.txt": "1"}))
    side = walk.sandbox
    assert not side.phases.explanation.startswith("the runner wrote"), side.phases.explanation
    assert 'Harbor read {"reward": 1.0}' in side.phases.explanation, side.phases.explanation
    assert "RuntimeError" in side.phases.explanation and "something other than the runner" in side.phases.explanation
    assert side.failure is not None and side.failure.line == 3, side.failure
    assert statuses(walk)["verify_called"] != "done"
    # The runner refused what verify returned (exit 2, no reward written); a reward.txt is there all the same.
    (demo / "tests" / "verifier.py").write_text("def verify(workspace):\n    return 'pass'\n")
    run = sandbox_run(demo, tmp_path / "b")
    walk = walk_trial(
        trial_of(
            runs, demo, name="demo__bbbbbbb", rewards={"reward": 1.0}, verifier_files={**run.files, "reward.txt": "1"}
        )
    )
    side = walk.sandbox
    assert statuses(walk)["reward_written"] != "done", side.phases
    assert "verify returned 'pass'" in side.phases.explanation and "reward.txt" in side.phases.explanation
    assert "something other than it wrote the reward" in side.phases.explanation, side.phases.explanation


THREAD_RAISES_A_GROUP_AFTER_VERIFY = """\
import threading
import time


def work():
    time.sleep(0.3)
    errors = []
    for key in ("sub 1", "sub 2"):
        try:
            raise KeyError(key)
        except KeyError as error:
            errors.append(error)
    raise ExceptionGroup("thread checks", errors)


def verify(workspace):
    threading.Thread(target=work).start()
    raise ValueError("the answer is wrong")
"""


@pytest.mark.skipif(sys.version_info < (3, 11), reason="ExceptionGroup is Python 3.11's")
def test_a_group_a_thread_raised_after_verify_is_passed_over_sub_exceptions_and_all(task, runs, tmp_path):
    """A non-daemon thread raised an ExceptionGroup after verify had raised: Python printed `Exception in thread
    ...:` and the group, whose own report was passed over but not its sub-exceptions, so the report read was
    KeyError 'sub 2' at the thread's line 10, not verify's ValueError at line 18."""
    demo = task(verifier=THREAD_RAISES_A_GROUP_AFTER_VERIFY)
    run = sandbox_run(demo, tmp_path)
    assert "Exception in thread" in run.files["test-stdout.txt"], run.files["test-stdout.txt"]
    walk = walk_trial(
        trial_of(runs, demo, verifier_files=run.files, exception=harbor_exception(NOT_FOUND, "No reward file found"))
    )
    report = walk.sandbox.runner.traceback
    assert report is not None and report.bare_type == "ValueError", report
    assert walk.sandbox.failure is not None and walk.sandbox.failure.line == 18, walk.sandbox.failure


WRITES_AN_INTRODUCTION_THEN_RAISES = """\
import sys


def verify(workspace):
    print({introduction!r}, file=sys.stderr)
    raise ValueError("the answer is wrong")
"""


@pytest.mark.parametrize(
    "introduction",
    [
        "Exception in thread pool worker:",
        "Exception ignored in: <function Scratch.__del__ at 0x7f5e8f022ee0>",
        "Exception ignored in atexit callback: <function cleanup at 0x7f>",
        "Exception ignored in: <function verify at 0x7f>",
        "Exception ignored in: <finalize object at 0x7f5e8f022ee0; dead>",
        "Error in atexit._run_exitfuncs:",
    ],
    ids=["thread", "del", "atexit", "verify", "finalize", "3.8-atexit"],
)
def test_a_line_like_pythons_introduction_does_not_pass_over_the_runs_report(task, runs, tmp_path, introduction):
    """verify wrote `Exception in thread pool worker:` (or `Exception ignored in: <function Scratch.__del__ ...>`:
    an agent's program's stderr it echoed), then raised: the runner's report after it was passed over as a
    thread's (or one Python ignored), so no report was read (every step unknown, no failing line; a trial's root
    cause `test.sh may not be the runner's shim`). A report is passed over only as Python prints it: a thread's
    first frame threading's _bootstrap_inner, an ignored one's matching its line, never starting in verify (or
    the verifier's top level), where the runner's report starts."""
    _reads_the_runners_value_error(
        task(verifier=WRITES_AN_INTRODUCTION_THEN_RAISES.format(introduction=introduction)), runs, tmp_path, 6
    )
    for forged in ("Exception ignored by me", "Error in atexit._run_exitfuncs: none"):
        parsed = parse_runner_output(f"{forged}\n{_RAISED}")
        assert parsed.traceback is not None and parsed.traceback.bare_type == "ValueError", (forged, parsed)
    # the runner's report of a chain whose first exception a helper of verify's caught: only its last starts in verify
    parsed = parse_runner_output(f"{introduction}\n{_CHAINED_IN_A_HELPER}")
    assert parsed.traceback is not None and parsed.traceback.bare_type == "ValueError", parsed
    assert [frame.function for frame in parsed.traceback.frames] == ["verify", "load"], parsed.traceback
    # a report like a weakref.finalize callback's at exit (Python prints none before it), the runner's chained to it
    forged = _FINALIZE_AT_EXIT + "\nThe above exception was the direct cause of the following exception:\n\n"
    parsed = parse_runner_output(f"{introduction}\n{forged}{_RAISED}")
    assert parsed.traceback is not None and parsed.traceback.bare_type == "ValueError", parsed
    assert parse_runner_output(_FINALIZE_AT_EXIT).traceback is None


# A verify the runner calls that is no plain function: its report's first frame is not `verify`.
_CALLABLE_WRITES_AN_INTRODUCTION_THEN_RAISES = """\
import functools
import sys


def logged(function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        return function(*args, **kwargs)

    return wrapper


def check(expected, workspace):
    print({introduction!r}, file=sys.stderr)
    raise ValueError("the answer is wrong")


class Checker:
    def __call__(self, workspace):
        return check(1, workspace)


@logged
def verify(workspace):
    return check(1, workspace)


verify = {{"decorated": verify, "instance": Checker(), "partial": functools.partial(check, 1)}}[{shape!r}]
"""


@pytest.mark.parametrize("shape", ["decorated", "instance", "partial"])
@pytest.mark.parametrize(
    "introduction",
    [
        "Exception ignored in: <function Scratch.__del__ at 0x7f5e8f022ee0>",
        "Exception ignored in atexit callback: <function cleanup at 0x7f>",
        "Exception ignored in: <finalize object at 0x7f5e8f022ee0; dead>",
        "Exception ignored in: <generator object closing at 0x7f5e8f022ee0>",
        "Error in atexit._run_exitfuncs:",
    ],
    ids=["del", "atexit", "finalize", "generator", "3.8-atexit"],
)
def test_a_line_like_pythons_introduction_does_not_pass_over_a_callable_verifys_report(
    task, runs, tmp_path, introduction, shape
):
    if introduction == "Error in atexit._run_exitfuncs:" and shape != "decorated":
        pytest.skip("3.8's line names no function: an atexit callback's report and a verify's are the same text")
    """A decorated verify (an instance's __call__, a functools.partial) echoed `Exception ignored in: <function
    Scratch.__del__ ...>` and raised: its report starts in the decorator's wrapper (in __call__, in the partial's
    function), not in verify, so it was passed over as one Python ignored and a trial's sandbox side said
    test-stdout.txt holds no report of the runner, test.sh may not be the runner's shim."""
    verifier = _CALLABLE_WRITES_AN_INTRODUCTION_THEN_RAISES.format(introduction=introduction, shape=shape)
    _reads_the_runners_value_error(task(verifier=verifier), runs, tmp_path, 15)


def _reads_the_runners_value_error(demo, runs, tmp_path, line):
    """The sandbox's side of a trial of ``demo``, run in the sandbox, reads the runner's report of the ValueError
    verify raised at ``line``."""
    run = sandbox_run(demo, tmp_path)
    walk = walk_trial(
        trial_of(runs, demo, verifier_files=run.files, exception=harbor_exception(NOT_FOUND, "No reward file found"))
    )
    report = walk.sandbox.runner.traceback
    assert report is not None and report.bare_type == "ValueError", walk.sandbox.runner
    assert walk.sandbox.failure is not None and walk.sandbox.failure.line == line, walk.sandbox.failure


# What Python 3.13 prints for a weakref.finalize callback that raised as the interpreter exited.
_FINALIZE_AT_EXIT = """\
Traceback (most recent call last):
  File "/usr/lib/python3.13/weakref.py", line 666, in _exitfunc
    f()
    ~^^
  File "/usr/lib/python3.13/weakref.py", line 590, in __call__
    return info.func(*info.args, **(info.kwargs or {}))
           ~~~~~~~~~^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/tests/verifier.py", line 13, in cleanup
    raise RuntimeError("cleanup failed")
RuntimeError: cleanup failed
"""


# What the runner (Python 3.13) prints for verify calling load(), which caught a KeyError and raised ValueError.
_CHAINED_IN_A_HELPER = """\
Traceback (most recent call last):
  File "/tests/verifier.py", line 3, in load
    {}["k"]
    ~~^^^^^
KeyError: 'k'

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/tests/verifier.py", line 7, in verify
    load()
    ~~~~^^
  File "/tests/verifier.py", line 5, in load
    raise ValueError("bad") from e
ValueError: bad
"""


# A module-level object whose __del__ raises as the interpreter exits, after verify ended: Python prints
# `Exception ignored in: <function Scratch.__del__ ...>` and its report after the runner's line (or none).
_DEL_AT_EXIT = """\
class Scratch:
    def __del__(self):
        raise RuntimeError("cleanup failed")


KEEP = Scratch()


def verify(workspace):
    return {returns}
"""


@pytest.mark.parametrize("returns", ["'pass'", "1.0"], ids=["contract-error", "passing"])
def test_a_del_raising_at_exit_after_a_run_that_did_not_raise_is_not_its_report(task, runs, tmp_path, returns):
    """verify returned (a contract error, or a reward), then a module's object's __del__ raised as Python exited:
    its report, introduced `Exception ignored in: <...>`, was read as the run's, so a trial's sandbox side said
    `verify called and awaited ✗ RuntimeError: cleanup failed` where the replay said it returned, and a passing
    run's steps were all unknown with a failing line at the __del__. It ended nothing: no report is read."""
    demo = task(verifier=_DEL_AT_EXIT.format(returns=returns))
    run = sandbox_run(demo, tmp_path)
    assert "Exception ignored in: <function Scratch.__del__" in run.files["test-stdout.txt"], run.files
    passing = returns == "1.0"
    kwargs = dict(rewards={"reward": 1.0}) if passing else dict(exception=harbor_exception(NOT_FOUND, "No reward"))
    walk = walk_trial(trial_of(runs, demo, verifier_files=run.files, **kwargs))
    side = walk.sandbox
    assert side.runner.traceback is None, side.runner
    assert side.failure is None, side.failure
    assert statuses(walk)["verify_called"] == "done", statuses(walk)
    if not passing:
        assert side.runner.kind == "contract_error" and side.runner.contract_message.startswith("verify returned")
    details = [phase.detail for phase in side.phases.phases]
    assert not [d for d in details if "RuntimeError" in d] and "RuntimeError" not in side.phases.explanation, details


# What verify does to have Python print a report of an exception it ignored: its introduction does not always name
# the function the report starts in (weakref.finalize's names the finalize object and starts in weakref.py's
# __call__; a decorated __del__'s starts in the decorator's wrapper).
_IGNORED_BY_PYTHON = """\
import atexit
import functools
import threading
import weakref


def logged(function):
    @functools.wraps(function)
    def wrapper(*args):
        return function(*args)

    return wrapper


def bare(function):
    def wrapper(*args):
        return function(*args)

    return wrapper


class Scratch:
    def __del__(self):
        raise RuntimeError("cleanup failed")


class Decorated:
    @logged
    def __del__(self):
        raise RuntimeError("cleanup failed")


class Plain:
    def close(self):
        raise RuntimeError("cleanup failed")


class Bare:
    __del__ = bare(Scratch.__del__)


def cleanup():
    raise RuntimeError("cleanup failed")


def chained():
    try:
        {{}}["k"]
    except KeyError as error:
        raise RuntimeError("cleanup failed") from error


def grouped():
    checks = []
    try:
        {{}}["k"]
    except KeyError as error:
        checks.append(error)  # raised, so the group's report holds one of its own
    try:
        raise ExceptionGroup("checks", checks)  # a NameError before Python 3.11: chained all the same
    except Exception as error:
        raise RuntimeError("cleanup failed") from error


def closing():
    try:
        yield 1
    finally:
        raise RuntimeError("cleanup failed")


def ignored(kind):
    global KEPT  # till the interpreter exits, after the runner's line
    if kind == "del-at-exit":
        KEPT = Scratch()
    elif kind == "decorated-del-at-exit":
        KEPT = Decorated()
    elif kind == "finalize-at-exit":
        KEPT = Plain()
        weakref.finalize(KEPT, cleanup)
    elif kind == "del":
        Scratch()
    elif kind == "decorated-del":
        Decorated()
    elif kind == "finalize":
        weakref.finalize(Plain(), cleanup)
    elif kind == "atexit":
        atexit.register(cleanup)
    elif kind == "generator":
        opened = closing()
        next(opened)
        del opened
    elif kind == "thread":
        worker = threading.Thread(target=Scratch)
        worker.start()
        worker.join()
    elif kind == "bare-decorated-del-at-exit":
        KEPT = Bare()
    elif kind == "bound-method-atexit":
        atexit.register(Plain().close)
    elif kind == "chained-finalize-at-exit":
        KEPT = Plain()
        weakref.finalize(KEPT, chained)
    elif kind in ("chained-thread", "chained-group-thread"):
        worker = threading.Thread(target=chained if kind == "chained-thread" else grouped)
        worker.start()
        worker.join()


def verify(workspace):
    ignored({kind!r})
    return {returns}
"""
_IGNORED_KINDS = [
    "bare-decorated-del-at-exit",
    "bound-method-atexit",
    "chained-finalize-at-exit",
    "chained-thread",
    "chained-group-thread",
    "del",
    "decorated-del",
    "del-at-exit",
    "decorated-del-at-exit",
    "finalize",
    "finalize-at-exit",
    "atexit",
    "generator",
    "thread",
]


@pytest.mark.parametrize("version", ["3.8", "3.13", None], ids=["3.8", "3.13", "this-python"])
@pytest.mark.parametrize("kind", _IGNORED_KINDS)
def test_an_exception_python_ignored_in_a_run_that_refused_is_not_its_report(task, runs, tmp_path, kind, version):
    """verify returned 'pass' (the runner's refusal) after Python printed a report of an exception it ignored
    whose introduction names no function of the report's first frame (`<finalize object ...; dead>`, a decorated
    __del__'s `wrapper`): that report was read as the run's, so a trial's sandbox side said `verify raised
    RuntimeError: cleanup failed`, not the refusal."""
    python = python_or_skip(version) if version is not None else None
    demo = task(verifier=_IGNORED_BY_PYTHON.format(kind=kind, returns="'pass'"))
    run = sandbox_run(demo, tmp_path, python=python)
    assert "RuntimeError: cleanup failed" in run.files["test-stdout.txt"], run.files
    walk = walk_trial(
        trial_of(runs, demo, verifier_files=run.files, exception=harbor_exception(NOT_FOUND, "No reward file found"))
    )
    side = walk.sandbox
    assert side.runner.kind == "contract_error" and side.runner.traceback is None, side.runner
    assert side.failure is None, side.failure
    assert "RuntimeError" not in side.phases.explanation, side.phases.explanation


@pytest.mark.parametrize("kind", _IGNORED_KINDS)
def test_an_exception_python_ignored_in_a_passing_run_leaves_its_steps_known(task, runs, tmp_path, kind):
    """verify returned 1.0 after Python printed a report of an exception it ignored (a weakref.finalize
    callback's, a decorated __del__'s): the report was read as the runner's beside the reward, so every step of
    a passing trial's sandbox side was `unknown`, 'either verify logged an exception and returned...'."""
    demo = task(verifier=_IGNORED_BY_PYTHON.format(kind=kind, returns="1.0"))
    run = sandbox_run(demo, tmp_path)
    assert "RuntimeError: cleanup failed" in run.files["test-stdout.txt"], run.files
    walk = walk_trial(trial_of(runs, demo, rewards={"reward": 1.0}, verifier_files=run.files))
    side = walk.sandbox
    assert side.runner.traceback is None and side.failure is None, (side.runner, side.failure)
    assert set(statuses(walk).values()) == {"done"}, statuses(walk)
    assert "either" not in side.phases.explanation, side.phases.explanation
