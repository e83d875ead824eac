"""The runner's phases, one model for both sides: the replay's read from the
real runner's --phases-to file, the sandbox's inferred from test-stdout.txt,
lined up step by step, with the first wrong step explained."""

from __future__ import annotations

import pytest

from tests.helpers.harbor import SEPARATE, replay_trial, sandbox_trial
from verifier_tui.engine.harbor.phases import LABELS
from verifier_tui.words.trial import step_detail


def statuses(report):
    return [(p.name, p.status) for p in report.phases]


def replayed_with_a_second(task, runs, tmp_path, verifier):
    """A trial of ``verifier`` whose task gives it 1 s, as the sandbox ran it, and its replay."""
    demo = task(verifier=verifier, toml=SEPARATE + "timeout_sec = 1.0\n")
    trial = sandbox_trial(
        runs / "jobs" / "j", demo, tmp_path, workspace={}, mode="separate", capture=True, timeout_s=1.0
    )
    return replay_trial(trial)


def test_both_sides_use_the_runners_own_phase_names(task, runs, tmp_path):
    demo = task(verifier="def verify(workspace, task_data):\n    return 0.5\n", toml=SEPARATE)
    trial = sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={}, mode="separate", capture=True)
    opened, replayed = replay_trial(trial)
    assert [p.name for p in opened.walk.sandbox.phases.phases] == list(LABELS)
    assert [p.name for p in replayed.phases.phases] == list(LABELS)
    assert {p.status for p in replayed.phases.phases} == {"done"}
    details = {p.name: p.detail for p in replayed.phases.phases}
    assert details["reward_files_cleared"] == "none was there"
    assert details["verifier_found"] == "tests/verifier.py"  # said relative to the task
    assert details["inputs_read"] == "available: workspace, task_data, state (no response: Harbor mode)"
    assert details["sys_path_placed"] == "first tests/.ng, tests"  # the sandbox's /tests/.ng, no role glued in
    assert details["arguments_bound"] == "workspace: workspace (keyword); task_data: task_data (keyword)"
    assert details["verify_called"] == "returned a float"
    assert details["reward_written"] == "reward.txt: 0.5"
    assert opened.walk.sandbox.phases.phases[-1].detail == "reward.txt: 0.5"
    assert replayed.parting is None and replayed.phases.stopped_at is None


def test_what_verify_returned_is_named_with_its_article(task, runs, tmp_path):
    """An ``int`` reward: the step said "returned a int"."""
    demo = task(verifier="def verify(workspace):\n    return 1\n", toml=SEPARATE)
    trial = sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={}, mode="separate", capture=True)
    _opened, replayed = replay_trial(trial)
    assert {p.name: p.detail for p in replayed.phases.phases}["verify_called"] == "returned an int"


def test_a_verify_that_raises_is_marked_where_it_failed_on_both_sides(task, runs, tmp_path):
    demo = task(verifier="def verify(workspace):\n    return float((workspace / 'n.txt').read_text())\n", toml=SEPARATE)
    trial = sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={}, mode="separate", capture=True)
    opened, replayed = replay_trial(trial)
    for report in (opened.walk.sandbox.phases, replayed.phases):
        assert report.stopped_at == "verify_called"
        assert report.first_wrong.detail.startswith("FileNotFoundError: [Errno 2] No such file or directory")
        assert (
            report.advice.startswith("a verify that raises scores nothing") and "tests/verifier.py:2" in report.advice
        )
    assert "Harbor scored this trial with RewardFileNotFoundError" in opened.walk.sandbox.phases.explanation
    assert "Harbor scores that RewardFileNotFoundError" in replayed.phases.explanation
    assert dict(statuses(replayed.phases))["reward_written"] == "not reached"
    assert replayed.parting is None  # the same step went wrong on both sides


def test_an_exception_whose_message_ends_in_a_colon_keeps_it(task, runs, tmp_path):
    """``ValueError('bad value:')``: the replay's step said ``ValueError: bad
    value`` (its own way of dropping an empty message ate the colon), where
    Python's traceback, and explain, say ``ValueError: bad value:``."""
    demo = task(verifier="def verify(workspace):\n    raise ValueError('bad value:')\n", toml=SEPARATE)
    trial = sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={}, mode="separate", capture=True)
    opened, replayed = replay_trial(trial)
    for report in (opened.walk.sandbox.phases, replayed.phases):
        assert report.first_wrong.detail == "ValueError: bad value:"


def test_a_verifier_fixed_since_the_run_parts_at_the_step_that_failed(task, runs, tmp_path):
    demo = task(verifier="def verify(workspace, response):\n    return 1.0\n", toml=SEPARATE)
    trial = sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={}, mode="separate", capture=True)
    sandbox = replay_trial(trial)[0].walk.sandbox.phases
    assert sandbox.stopped_at == "arguments_bound"
    assert sandbox.advice.startswith("Harbor never passes a response: give response a default")
    (demo / "tests" / "verifier.py").write_text("def verify(workspace, response=None):\n    return 1.0\n")
    opened, replayed = replay_trial(trial)
    assert replayed.parting.phase == "arguments_bound"
    assert replayed.parting.sandbox == "failed" and replayed.parting.local == "done"
    differences = replayed.agreement.differences
    assert differences[0] == "the sandbox ended with RewardFileNotFoundError, the replay with 1.0"
    assert differences[1].startswith("they part at 'arguments bound': the sandbox failed (verify requires 'response'")
    assert any("changed since the run" in d for d in differences[2:])
    detail = step_detail(sandbox, replayed.phases, replayed.parting)  # what the one-line cells cut
    assert detail[0] == "at arguments bound:"
    assert detail[1:] == ["  replay:", "    workspace: workspace (keyword)", "    response: keeps its default None"]


def test_a_replay_killed_by_its_timeout_shows_the_step_it_was_in(task, runs, tmp_path):
    slow = "import time\n\ndef verify(workspace):\n    time.sleep(30)\n    return 1.0\n"
    opened, replayed = replayed_with_a_second(task, runs, tmp_path, slow)
    assert replayed.local.outcome.slug == "timed_out"
    assert dict(statuses(replayed.phases)) == {
        **{name: "done" for name in list(LABELS)[:6]},
        "verify_called": "stopped",
        "reward_written": "not reached",
    }
    assert replayed.phases.explanation.startswith(
        "the run was still in 'verify called and awaited' when the "
        "timeout (1 s) hit: Harbor scores that VerifierTimeoutError"
    )
    assert opened.walk.sandbox.phases.stopped_at == "timeout"
    assert replayed.agreement.same is True


def test_a_module_that_hangs_at_import_is_stopped_in_the_import(task, runs, tmp_path):
    _, replayed = replayed_with_a_second(
        task, runs, tmp_path, "import time\ntime.sleep(30)\n\ndef verify(workspace):\n    return 1.0\n"
    )
    assert replayed.phases.stopped_at == "module_imported"
    assert dict(statuses(replayed.phases))["sys_path_placed"] == "done"
    assert dict(statuses(replayed.phases))["arguments_bound"] == "not reached"


def test_a_verify_that_ends_the_process_is_stopped_in_verify(task, runs, tmp_path):
    demo = task(verifier="import os\n\ndef verify(workspace):\n    os._exit(3)\n", toml=SEPARATE)
    trial = sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={}, mode="separate", capture=True)
    _, replayed = replay_trial(trial)
    assert replayed.local.outcome.slug == "unexpected_exit"
    assert replayed.phases.stopped_at == "verify_called"
    assert "exit 3" in replayed.phases.explanation and "os._exit" in replayed.phases.advice


def test_a_bad_return_value_fails_the_reward_step(task, runs, tmp_path):
    demo = task(verifier="def verify(workspace):\n    return 'yes'\n", toml=SEPARATE)
    trial = sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={}, mode="separate", capture=True)
    opened, replayed = replay_trial(trial)
    for report in (opened.walk.sandbox.phases, replayed.phases):
        assert report.stopped_at == "reward_written"
        assert dict(statuses(report))["verify_called"] == "done"
        assert report.advice.startswith("return a finite number")


HOSTILE = """\
import sys

def verify(workspace):
    if "--phases-to" in sys.argv:  # the runner's phases file is in reach of the verifier
        with open(sys.argv[sys.argv.index("--phases-to") + 1], "a") as handle:
            handle.write('{"phase": "sys_path_placed", "status": "ok", "front": 5}\\n')
            handle.write('[1, 2]\\n{"no": "phase"}\\n')
    return 0.5
"""


def test_a_phases_file_the_verifier_wrote_into_is_read_to_its_shape(task, runs, tmp_path):
    """Values of another type than the runner writes are dropped, as for explain.json: the replay
    still has its phases and its verdict, and no traceback comes from the tool."""
    demo = task(verifier=HOSTILE, toml=SEPARATE)
    trial = sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={}, mode="separate", capture=True)
    _, replayed = replay_trial(trial)
    assert replayed.local.verdict.rewards == {"reward": 0.5}
    assert dict(statuses(replayed.phases))["reward_written"] == "done"
    assert all(isinstance(line.get("front", []), list) for line in replayed.local.phases)


RAISES_THEN_HANGS = """\
import threading
import time


def verify(workspace):
    threading.Thread(target=time.sleep, args=(30,)).start()  # not a daemon: exit waits for it
    raise ValueError("no answer")
"""


def test_a_verify_that_raised_and_then_hung_is_a_timeout_on_both_sides(task, runs, tmp_path):
    """The runner reports the failure, then the interpreter waits for the thread until the
    timeout: Harbor scores VerifierTimeoutError, not the RewardFileNotFoundError of the failure.
    The replay's phase lines say verify failed; the sandbox's side, with only the output, names
    both what the runner reported and a report verify may have logged before it hung."""
    opened, replayed = replayed_with_a_second(task, runs, tmp_path, RAISES_THEN_HANGS)
    assert replayed.local.verdict.error == "VerifierTimeoutError"
    side = opened.walk.sandbox.phases
    assert "either verify logged that report" in side.explanation, side.explanation
    for report in (side, replayed.phases):
        assert "'verify called and awaited' failed" in report.explanation
        assert "VerifierTimeoutError without reading the reward folder" in report.explanation
        assert "RewardFileNotFoundError" not in report.explanation
    assert dict(statuses(replayed.phases))["verify_called"] == "failed"
    assert replayed.agreement.same is True


def test_a_replay_that_could_not_start_keeps_its_advice_for_each_face(task, runs, tmp_path):
    """The advice of a replay that could not start names the interpreter
    option; with the task's paths shortened, it was flattened to the command
    line's words, so the plugin said ``--python`` (an option pytest refuses)."""
    from verifier_tui.engine.advice import PYTHON_OPTION
    from verifier_tui.pytest_plugin import said

    demo = task(toml=SEPARATE)
    trial = sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={}, mode="separate", capture=True)
    _opened, replayed = replay_trial(trial, python="/nonexistent/python3")
    assert replayed.local.outcome.slug == "could_not_start"
    assert replayed.phases.advice.actions == (PYTHON_OPTION,)
    assert said(replayed.phases.advice) == "check the interpreter (--verifier-python EXE) and the task's tests/ folder"


PRINTS_A_REFUSAL_THEN_HANGS = """\
import sys
import time


def verify(workspace):
    print("run_verifier: error: verify returned None; expected a float", file=sys.stderr, flush=True)
    time.sleep(30)
    return 1.0
"""


# The runner's own refusal, then the interpreter waits for verify's thread until the timeout.
REFUSED_THEN_HANGS = """\
import threading
import time


def verify(workspace):
    threading.Thread(target=time.sleep, args=(30,)).start()  # not a daemon: exit waits for it
    return None
"""


LOGS_A_TRACEBACK_THEN_HANGS = """\
import logging
import time


def verify(workspace):
    try:
        {}["answer"]
    except KeyError:
        logging.exception("no answer yet; waiting")
    time.sleep(30)
    return 1.0
"""


@pytest.mark.parametrize(
    ("verifier", "said", "either"),
    [
        (PRINTS_A_REFUSAL_THEN_HANGS, "verify returned None", "either verify printed"),
        (REFUSED_THEN_HANGS, "verify returned None", "either verify printed"),
        (LOGS_A_TRACEBACK_THEN_HANGS, "KeyError: 'answer'", "either verify logged"),
        (RAISES_THEN_HANGS, "ValueError: no answer", "either verify logged"),
    ],
    ids=["printed-refusal", "refused", "logged-traceback", "raised"],
)
def test_a_report_verify_wrote_before_it_hung_is_not_taken_for_the_runners(
    task, runs, tmp_path, verifier, said, either
):
    """verify printed `run_verifier: error: verify returned None; expected a float` (or logged a KeyError's
    traceback, logging.exception) and then slept past the timeout: the sandbox's side said `the runner refused
    to call verify (...)`, 'verify called and awaited' done and 'reward written' failed (or 'verify called and
    awaited' failed (KeyError: 'answer')), while verify was still asleep. Either may be: both are named, no step
    failed; a report's last lines stay under the step it names."""
    opened, replayed = replayed_with_a_second(task, runs, tmp_path, verifier)
    assert replayed.local.verdict.error == "VerifierTimeoutError"
    side = opened.walk.sandbox.phases
    assert "failed" not in dict(statuses(side)).values(), statuses(side)
    assert dict(statuses(side))["verify_called"] != "done", statuses(side)
    assert said in side.explanation and either in side.explanation, side.explanation
    assert "VerifierTimeoutError without reading the reward folder" in side.explanation, side.explanation
    if either == "either verify logged":  # the report's last lines stay under the step it names, not known
        step = next(phase for phase in side.phases if phase.name == "verify_called")
        assert step.lines and said in step.lines[-1], step
    assert replayed.agreement.same is True, replayed.agreement.differences
