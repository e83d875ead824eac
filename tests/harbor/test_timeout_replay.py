"""A genuine Harbor 0.26.0 trial, edited to record what Harbor writes after a
verifier timeout (``VerifierTimeoutError``, "Verifier execution timed out
after 1.0 seconds"), replayed by the real runner until the same timeout stops
it: both ended the same way.

The verifier writes its reward and then hangs (a thread that is not a daemon
keeps the interpreter alive). Harbor cancels the verifier before it reads
the reward folder, so the reward.txt left in ``verifier/`` (a Docker sandbox
keeps partial output) and the one the replay wrote count for nothing.
"""

from __future__ import annotations

import json

from tests.helpers.commands import no_traceback, run_tool
from tests.helpers.harbor import replay_trial
from tests.helpers.tasks import PY
from verifier_tui.engine.harbor.folders import open_harbor

HANGS_AFTER_ITS_REWARD = """\
import threading
import time


def verify(workspace):
    # Not a daemon: the interpreter waits for it at exit, after the runner wrote reward.txt.
    threading.Thread(target=time.sleep, args=(120,)).start()
    return 1.0
"""

MESSAGE = "Verifier execution timed out after 1.0 seconds"
TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/usr/lib/python3.12/asyncio/tasks.py", line 520, in wait_for\n'
    "    return await fut\n"
    "asyncio.exceptions.CancelledError\n\n"
    "The above exception was the direct cause of the following exception:\n\n"
    "Traceback (most recent call last):\n"
    '  File "/opt/harbor/site-packages/harbor/trial/trial.py", line 994, in _verify_with_timeout\n'
    "    raise VerifierTimeoutError(\n"
    f"harbor.trial.errors.VerifierTimeoutError: {MESSAGE}\n"
)


def timed_out_trial(real):
    """nop-fail's trial as it would be had its verifier hung after writing reward.txt
    under a 1 s timeout: result.json's exception, the job's verifier timeout, the
    reward file left in verifier/, and the task's verifier."""
    trial = real / "jobs" / "nop-fail" / "hello-file__C4SunEc"
    result = json.loads((trial / "result.json").read_text())
    result["exception_info"].update(
        exception_type="VerifierTimeoutError", exception_message=MESSAGE, exception_traceback=TRACEBACK
    )
    result["config"]["verifier"]["override_timeout_sec"] = 1.0
    (trial / "result.json").write_text(json.dumps(result, indent=4))
    config = json.loads((trial / "config.json").read_text())
    config["verifier"]["override_timeout_sec"] = 1.0
    (trial / "config.json").write_text(json.dumps(config, indent=4))
    (trial / "exception.txt").write_text(TRACEBACK)
    (trial / "verifier" / "test-stdout.txt").write_text("")
    (trial / "verifier" / "reward.txt").write_text("1.0")
    (real / "tasks" / "hello-file" / "tests" / "verifier.py").write_text(HANGS_AFTER_ITS_REWARD)
    return trial


def test_a_sandbox_timeout_and_a_replay_that_timed_out_agree(real, tmp_path):
    folder = timed_out_trial(real)
    workspace = tmp_path / "stand-in"
    workspace.mkdir()
    opened, replayed = replay_trial(open_harbor(folder)[0], None, workspace=workspace)
    out = opened.to_json(replayed)
    assert opened.plan.timeout_s == 1.0  # the sandbox's own figure, from its message
    assert out["sandbox"]["harbor_verdict"]["error"] == "VerifierTimeoutError"
    assert replayed.local.outcome.slug == "timed_out"
    assert out["local"]["verdict_error"] == "VerifierTimeoutError" and out["local"]["rewards"] is None
    assert out["local"]["verdict_message"] == MESSAGE
    assert [f["name"] for f in out["local"]["reward_files"]] == ["reward.txt"]
    assert out["same"] is True and out["differences"] == []
    # Both sides wrote their reward, then ran on to the timeout: neither reward counts.
    assert out["sandbox"]["phase"] == "timeout"
    assert "the runner wrote reward.txt, but the process was still running" in out["sandbox"]["phase_explanation"]
    assert "Harbor read" not in out["sandbox"]["phase_explanation"]
    assert out["local_phases"]["stopped_at"] == "timeout"
    assert "VerifierTimeoutError without reading the reward folder" in out["local_phases"]["explanation"]


def test_run_trial_says_both_ended_with_the_timeout(real, tmp_path, env):
    folder = timed_out_trial(real)
    workspace = tmp_path / "stand-in"
    workspace.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = run_tool(env, "run", folder, "--workspace", workspace, "--python", PY, cwd=elsewhere)
    no_traceback(done)
    lines = done.stdout.splitlines()
    assert "sandbox   VerifierTimeoutError (from result.json)" in lines, done.stdout
    replay = next(line for line in lines if line.startswith("replay "))
    assert "VerifierTimeoutError · timed out after 1 s" in replay and "1.0" not in replay.split("·")[0]
    assert "RewardFileNotFoundError" not in done.stdout
    # The steps: each side got to the end and wrote reward.txt, which Harbor never read.
    assert any(
        line.startswith(
            "sandbox: the runner wrote reward.txt, but the process was still running when the "
            "timeout (1 s) hit: Harbor stopped it and scored VerifierTimeoutError"
        )
        for line in lines
    )
    assert any(
        line.startswith("replay: the runner wrote reward.txt: 1.0, but the process was still running") for line in lines
    )
    assert "Harbor read" not in done.stdout
