"""Keys of issue 43 on the Harbor screens, driven through the real app:
Ctrl+C quits on each of them as q does, and k keeps a trial's replay as a
case of its task."""

from __future__ import annotations

import asyncio

from textual import events

from tests.harbor.job_copies import mixed_job
from tests.harbor.test_job_tui import job_app, read_all
from tests.harbor.test_trial_screen_files import timed_out_agent
from tests.harbor.trial_app_under_test import SIZE, make_trial_app, text_of, until
from verifier_tui.tui.screens.case_name import CaseNameScreen
from verifier_tui.tui.screens.job_overview import JobOverviewScreen
from verifier_tui.tui.screens.jobs import JobsScreen
from verifier_tui.tui.screens.trial import TrialScreen


async def test_ctrl_c_quits_the_jobs_list_a_jobs_overview_and_a_trial(real, task, runs, tmp_path):
    for path, screen in (
        (real / "jobs", JobsScreen),
        (mixed_job(real, tmp_path / "jobs" / "mixed"), JobOverviewScreen),
    ):
        app = job_app(path)
        async with app.run_test(size=SIZE) as pilot:
            await read_all(app)
            assert isinstance(app.screen, screen)
            await pilot.press("ctrl+c")
            await pilot.pause()
            assert not app.is_running, screen
    _, trial = timed_out_agent(task, runs, tmp_path)
    app = make_trial_app(trial.path, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, TrialScreen)
        await pilot.press("ctrl+c")  # while the replay may still run: it ends with the screen
        await pilot.pause()
        assert not app.is_running
        assert not any("Do you want to quit" in notice for notice in app.notices)


async def test_k_keeps_a_trials_replay_as_a_case_of_its_task(task, runs, tmp_path):
    """On a trial's screen, k keeps the replay: the trial's captured /app becomes the case's workspace."""
    demo, trial = timed_out_agent(task, runs, tmp_path)
    app = make_trial_app(trial.path)
    async with app.run_test(size=SIZE) as pilot:
        replayed = await app.wait_for_replays(1)
        await pilot.pause()
        await pilot.press("k")
        await pilot.pause()
        assert isinstance(app.screen, CaseNameScreen)
        await pilot.press(*"no-hello", "enter")
        for _ in range(100):
            await pilot.pause(0.05)
            if "kept as case" in text_of(app, "#trial-status"):
                break
        assert "kept as case no-hello in" in text_of(app, "#trial-status")
        kept = demo / "cases" / "no-hello"
        assert (kept / "workspace" / "hallo.txt").read_text() == "hi"  # the trial's /app, as captured
        assert (kept / "expected.json").read_text().strip() == f'{{"exit_code": {replayed.local.exit_code}}}'
        await pilot.press("k", *"no-hello", "enter")  # taken now: said in the dialog, nothing written

        def problem() -> str:
            return str(app.screen.query_one("#case-name-problem").render())

        # The dialog still up, saying why: waited for, a dialog closed by enter never says it.
        await until(pilot, lambda: isinstance(app.screen, CaseNameScreen) and problem(), "the dialog says a problem")
        assert "the task already has a case no-hello" in problem()


async def test_keys_typed_right_after_q_are_not_acted_on_as_the_app_quits(task, runs, tmp_path):
    # Keys read from the terminal in one go ("qi", "q?") reach the app before
    # it ends: the screen the second one pushed was mounted as the app shut
    # down, without its widgets, and the user got a traceback instead of a quit.
    _, trial = timed_out_agent(task, runs, tmp_path)
    for second, character in (("i", "i"), ("question_mark", "?"), ("l", "l")):
        app = make_trial_app(trial.path)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, TrialScreen)
            app.post_message(events.Key("q", "q"))
            app.post_message(events.Key(second, character))
            await asyncio.wait_for(ended(pilot, app), 30)  # by q and as it quits, not by the test's end
        assert app.return_code == 0, second


async def ended(pilot, app) -> None:
    """Until the app is no longer running: each pause lets it handle what it was sent."""
    while app.is_running:
        await pilot.pause()
