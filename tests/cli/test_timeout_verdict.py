"""A run stopped at its timeout is what Harbor 0.26.0
records for it, ``VerifierTimeoutError`` ("Verifier execution timed out after
N seconds"), in every headless command; never ``RewardFileNotFoundError``, and
never the reward a verifier wrote before it hung (Harbor cancels the verifier
before it reads the reward folder: ``Trial._verify_with_timeout``).

Each test runs the real ``verifier-tui`` console script on a real task folder.
"""

from __future__ import annotations

import json

from tests.helpers.commands import run_tool, start_watch, stop
from tests.helpers.tasks import PY, make_task, write

SLEEPS = "import time\n\n\ndef verify(workspace):\n    time.sleep(120)\n    return 1.0\n"

HANGS_AFTER_ITS_REWARD = """\
import threading
import time


def verify(workspace):
    # Not a daemon: the interpreter waits for it at exit, after the runner wrote reward.txt.
    threading.Thread(target=time.sleep, args=(120,)).start()
    return 1.0
"""


def task_with_case(root, source):
    task_dir = make_task(root, source, cases={"only": {"a.txt": "a\n"}})
    write(task_dir / "cases" / "only" / "expected.json", '{"rewards": {"reward": 1.0}}')
    return task_dir


def test_run_names_harbors_timeout_error_in_its_text_and_json(env, tmp_path):
    task_dir = make_task(tmp_path / "slow", SLEEPS)
    done = run_tool(env, "run", task_dir, "--timeout", "1", "--python", PY)
    assert done.returncode == 124
    verdict = next(line for line in done.stdout.splitlines() if line.startswith("verdict: "))
    assert verdict == (
        "verdict: none: Harbor would raise VerifierTimeoutError: Verifier execution timed out after 1.0 seconds"
    )
    assert "RewardFileNotFoundError" not in done.stdout
    data = json.loads(run_tool(env, "run", "--json", task_dir, "--timeout", "1", "--python", PY).stdout)
    assert data["outcome"] == "timed_out" and data["rewards"] is None
    assert data["verdict_error"] == "VerifierTimeoutError"
    assert data["verdict_message"] == "Verifier execution timed out after 1.0 seconds"


def test_a_reward_written_before_a_hang_is_listed_but_not_scored(env, tmp_path):
    task_dir = task_with_case(tmp_path / "hangs", HANGS_AFTER_ITS_REWARD)
    done = run_tool(env, "run", task_dir, "--timeout", "1", "--python", PY)
    lines = done.stdout.splitlines()
    assert done.returncode == 124
    assert (
        "verdict: none: Harbor would raise VerifierTimeoutError: Verifier execution timed out after 1.0 seconds"
        in lines
    )
    assert any(line.startswith("warning: reward.txt was written before the timeout") for line in lines)
    assert "reward.txt: 1.0" in lines  # what the folder holds is still shown
    assert 'expected {"rewards": {"reward": 1.0}}: DID NOT MATCH' in lines
    data = json.loads(run_tool(env, "run", "--json", task_dir, "--timeout", "1", "--python", PY).stdout)
    assert (data["rewards"], data["verdict_error"], data["expected_matched"]) == (None, "VerifierTimeoutError", False)
    assert [f["name"] for f in data["reward_files"]] == ["reward.txt"]


def test_test_fails_a_timed_out_case_with_harbors_error(env, tmp_path):
    task_dir = task_with_case(tmp_path / "hangs", HANGS_AFTER_ITS_REWARD)
    done = run_tool(env, "test", task_dir, "--timeout", "1", "--python", PY, cwd=tmp_path)
    assert done.returncode == 1, done.stdout
    row = next(line for line in done.stdout.splitlines() if " only " in line)
    assert row.startswith("✗") and "timed out after 1 s · VerifierTimeoutError" in row
    data = json.loads(run_tool(env, "test", "--json", task_dir, "--timeout", "1", "--python", PY).stdout)
    assert json.dumps(data).count('"verdict_error": "VerifierTimeoutError"') == 1


def test_watch_names_harbors_timeout_error(env, tmp_path):
    task_dir = make_task(tmp_path / "slow", SLEEPS)
    proc, reader = start_watch(env, task_dir, "--timeout", "1", "--python", PY, cwd=tmp_path)
    try:
        first = reader.next_run()
        assert "timed out" in first and "VerifierTimeoutError" in first
    finally:
        stop(proc)
