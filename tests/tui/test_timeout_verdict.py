"""The TUI says what Harbor records for a run stopped at its timeout,
``VerifierTimeoutError``, and does not score a reward written before a hang."""

from __future__ import annotations

import re

from tests.helpers.tasks import make_task, write
from tests.tui.app_under_test import SIZE, make_app, screen_text, widget_text

SLEEPS = "import time\n\n\ndef verify(workspace):\n    time.sleep(120)\n    return 1.0\n"

HANGS_AFTER_ITS_REWARD = """\
import threading
import time


def verify(workspace):
    # Not a daemon: the interpreter waits for it at exit, after the runner wrote reward.txt.
    threading.Thread(target=time.sleep, args=(120,)).start()
    return 1.0
"""


async def test_the_reward_panel_names_harbors_timeout_error(tmp_path):
    root = make_task(tmp_path / "tasks" / "sleepy", SLEEPS, timeout=1)
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1, timeout=30)
        await pilot.pause()
        reward = widget_text(app, "#reward-body")
        assert "none: Harbor would raise VerifierTimeoutError" in reward
        assert "Verifier execution timed out after 1.0 seconds" in reward
        assert "RewardFileNotFoundError" not in reward


async def test_a_reward_written_before_a_hang_fails_the_case_and_shows_no_reward(tmp_path):
    root = make_task(tmp_path / "tasks" / "hangs", HANGS_AFTER_ITS_REWARD, timeout=1, cases={"only": {}})
    write(root / "cases" / "only" / "expected.json", '{"rewards": {"reward": 1.0}}')
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        result = await app.wait_for_runs(1, timeout=30)
        await pilot.pause()
        assert result.verdict.error == "VerifierTimeoutError"
        reward = widget_text(app, "#reward-body")
        assert "does not match the case's expected.json" in reward
        assert "none: Harbor would raise VerifierTimeoutError" in reward
        assert "reward.txt was written before the timeout" in reward  # the file is shown, and why it does not count
        text = screen_text(app)
        # The cases list and the history: failed, with no reward beside the case's name.
        assert re.search(r"✗ only\s*│", text) and re.search(r"#1\s+✗ only\s*│", text), text
