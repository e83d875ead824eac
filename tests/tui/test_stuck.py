"""The TUI says where a verifier that timed out was stuck, and e opens that line."""

from __future__ import annotations

from tests.helpers.tasks import stuck_task
from tests.tui.app_under_test import SIZE, make_app, widget_text


async def test_a_timeout_shows_where_it_was_stuck_and_e_opens_that_line(tmp_path, monkeypatch):
    monkeypatch.delenv("EDITOR", raising=False)
    root = stuck_task(tmp_path / "tasks" / "slow", timeout=1)
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1, timeout=30)
        await pilot.pause()
        reward = widget_text(app, "#reward-body")
        assert "stuck at slow/tests/helpers.py:6 in wait_for_file (e opens the line)" in reward
        assert "slow/tests/verifier.py:7 in verify" in reward  # the calls that led there
        await pilot.press("e")
        await pilot.pause()
        assert any("set $EDITOR" in n and "slow/tests/helpers.py:6" in n for n in app.notices), app.notices


async def test_a_timeout_under_the_tasks_own_runner_names_the_key_not_the_flag(tmp_path):
    """The task's own runner has no --stack-signal: the TUI says R brings back the runner that
    shows where a run was stuck, never the command-line flag the TUI user did not type."""
    root = stuck_task(tmp_path / "tasks" / "slow", timeout=1)
    (root / "tests" / ".ng").mkdir(parents=True)
    (root / "tests" / ".ng" / "run_verifier.py").write_text("import time\ntime.sleep(60)\n")
    app = make_app(root, watch=False, runner="task")
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1, timeout=30)
        await pilot.pause()
        reward = widget_text(app, "#reward-body")
        assert "has no --stack-signal" in reward  # the runner's own option, named as such
        assert "R back to verifier-tui's runner shows it" in reward
        assert "--runner" not in reward
