"""The screen never freezes, for the headless text output too: a
reward of 100,000 keys, a sys.path of thousands of entries and thousands of
warnings print their start and one "N more" line, never a 2 MB line; the
whole stays in ``--json``."""

from __future__ import annotations

import json

from tests.helpers.commands import no_traceback, run_tool
from tests.helpers.tasks import interpreter_with_long_sys_path, make_task

KEYS = 100_000
BIG_REWARD = f"""
def verify(workspace):
    rewards = {{f"key_{{i:06d}}": 0.5 for i in range({KEYS})}}
    rewards["reward"] = 1.0
    return rewards
"""


def test_run_prints_the_start_of_a_100000_key_reward_and_json_keeps_it_whole(tmp_path, env):
    task = make_task(tmp_path / "tasks" / "big", BIG_REWARD)
    done = run_tool(env, "run", task)
    no_traceback(done)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) < 30 and max(len(line) for line in lines) < 3000
    verdict = next(line for line in lines if line.startswith("verdict: "))
    assert '"key_000000": 0.5' in verdict and '…, "reward": 1.0}' in verdict  # the reward Harbor aggregates on
    assert verdict.endswith("(from reward.json; 99,981 more keys: --json lists them all)")
    assert any(
        line.startswith("  … ") and line.endswith("more characters of reward.json (--json has them)") for line in lines
    )

    whole = run_tool(env, "run", task, "--json")
    rewards = json.loads(whole.stdout)["rewards"]
    assert len(rewards) == KEYS + 1 and rewards["key_099999"] == 0.5


def test_explain_lists_a_long_sys_path_up_to_50_entries_and_json_has_them_all(tmp_path, env):
    python = interpreter_with_long_sys_path(tmp_path / "venv", 3000)
    task = make_task(tmp_path / "tasks" / "t")
    done = run_tool(env, "explain", task, "--python", python)
    no_traceback(done)
    assert done.returncode == 0, done.stdout + done.stderr
    listed = [line for line in done.stdout.splitlines() if "folder0" in line]
    assert len(listed) < 50
    more = next(line for line in done.stdout.splitlines() if "more entries" in line)
    assert more.strip().endswith("more entries (--json lists them all)")

    # The explanation comes whole (it was "the runner gave no explanation": cut at 256 KiB).
    whole = json.loads(run_tool(env, "explain", task, "--python", python, "--json").stdout)
    assert sum("folder0" in row["path"] for row in whole["sys_path"]) == 3000
