"""The history keeps whole results only for the latest runs (memory
bounded whatever the run count and output size); older runs show a summary."""

from __future__ import annotations

import gc
import weakref

from textual.widgets import OptionList

from tests.helpers.tasks import make_task
from tests.tui.app_under_test import SIZE, make_app, widget_text
from verifier_tui.engine.record import replace
from verifier_tui.tui.screens.choose_list import ChooseListScreen
from verifier_tui.tui.widgets.history_list import KEEP_FULL, MAX_RUNS, HistoryList

LOUD = """
import sys

def verify(workspace):
    sys.stdout.write("line of output\\n" * 20000)
    sys.stderr.write("LOUD-STDERR-MARK\\n")
    return 0.25
"""


async def _runs(app, pilot, count: int) -> None:
    await app.wait_for_runs(1)
    for number in range(2, count + 1):
        await pilot.press("r")
        await app.wait_for_runs(number)
    await pilot.pause()


async def test_only_the_latest_runs_keep_their_output(tmp_path):
    root = make_task(tmp_path / "tasks" / "loud", LOUD, cases={"only": {"a.txt": "a"}})
    runs = KEEP_FULL + 3
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await _runs(app, pilot, runs)
        history = app.main.query_one(HistoryList)
        assert history.option_count == runs
        kept = [r.sequence for r in history.results if r.stdout.text]
        assert kept == list(range(runs - KEEP_FULL + 1, runs + 1))
        # What an older run still says: its status, reward and trigger, in the list.
        assert all(r.verdict.reward == 0.25 for r in history.results)
        oldest = str(history.get_option_at_index(runs - 1).prompt)
        assert "#1" in oldest and "only 0.25" in oldest and "after start" in oldest


async def test_an_old_history_entry_shows_its_summary_and_says_the_output_is_gone(tmp_path):
    root = make_task(tmp_path / "tasks" / "loud", LOUD, cases={"only": {"a.txt": "a"}})
    runs = KEEP_FULL + 2
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await _runs(app, pilot, runs)
        history = app.main.query_one("#history", OptionList)
        history.focus()
        # The newest run that still keeps everything: its output is shown.
        await pilot.press(*["down"] * (KEEP_FULL - 1), "enter")
        await pilot.pause()
        assert f"run #{runs - KEEP_FULL + 1} from the history" in widget_text(app, "#reward-body")
        assert "LOUD-STDERR-MARK" in app.main.query_one("#output").text("stderr")
        # One further down: only its summary is left, and the screen says so.
        await pilot.press("down", "enter")
        await pilot.pause()
        reward = widget_text(app, "#reward-body")
        assert f"run #{runs - KEEP_FULL} from the history" in reward
        assert "reward written" in reward and '{"reward": 0.25}' in reward
        assert "no longer kept" in reward and f"latest {KEEP_FULL} runs" in reward
        stderr = app.main.query_one("#output").text("stderr")
        assert "LOUD-STDERR-MARK" not in stderr and "no longer kept" in stderr
        # c still copies that run's command, and esc goes back to the latest.
        assert app.main.shown_result.sequence == runs - KEEP_FULL
        await pilot.press("escape")
        await pilot.pause()
        assert "from the history" not in widget_text(app, "#reward-body")
        assert "LOUD-STDERR-MARK" in app.main.query_one("#output").text("stderr")


async def test_the_cases_list_keeps_no_output(example):
    app = make_app(example("hello-file"), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("a")
        await app.wait_for_runs(5)
        await pilot.pause()
        last = app.main.last_by_case
        assert sorted(last) == ["correct", "missing-file", "wrong-case", "wrong-text"]
        assert all(r.expected_matched for r in last.values())  # the marks still judge each case
        assert last["missing-file"].stderr.text == "" and last["missing-file"].explain is None
        # The whole result of the latest run is still on screen.
        assert app.main.latest.explain is not None


BIG = """
def verify(workspace):
    rewards = {f"key_{i:05}": 0.5 for i in range(5000)}
    rewards["reward"] = 1.0
    return rewards
"""


async def test_an_old_entry_keeps_a_few_of_a_big_rewards_dict_and_says_how_many(tmp_path):
    root = make_task(tmp_path / "tasks" / "big", BIG, cases={"only": {"a.txt": "a"}})
    runs = KEEP_FULL + 1
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await _runs(app, pilot, runs)
        history = app.main.query_one(HistoryList)
        oldest, newest = history.results[0], history.results[-1]
        assert len(newest.verdict.rewards) == 5001
        # 5,001 keys held by every old entry would be what bounded memory forbids
        assert len(oldest.verdict.rewards) <= 21 and oldest.verdict.reward == 1.0
        history.focus()
        await pilot.press(*["down"] * KEEP_FULL, "enter")
        await pilot.pause()
        assert "5,001 keys in all" in widget_text(app, "#reward-body")


async def test_the_history_lists_at_most_max_runs_and_keeps_no_more(tmp_path):
    """However long the session: the list and what it keeps stop at MAX_RUNS, the newest first."""
    root = make_task(tmp_path / "tasks" / "quiet", cases={"only": {"a.txt": "a"}})
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        first = await app.wait_for_runs(1)
        history = app.main.query_one(HistoryList)
        for number in range(2, MAX_RUNS + 11):
            history.add(replace(first, sequence=number))
        await pilot.pause()
        assert history.option_count == MAX_RUNS == len(history.results)
        assert [r.sequence for r in history.results[:2]] == [11, 12]  # the ten oldest are gone
        assert str(history.get_option_at_index(0).prompt).startswith("#210 • only")  # a space past #99 too
        old = history.results[0]
        assert old.stdout.text == "" and old.explain is None and old.environment is None and old.phases is None


async def test_choosers_opened_and_closed_all_day_do_not_pile_up_in_memory(example):
    """A session stays open all day and opens a chooser at every turn: what
    the closed ones drew is let go of (Textual's cache of backgrounds kept the
    rendered lines of every widget it saw: base.py). Textual itself keeps one
    of the screens it showed alive a while longer (the first, in 8.2.8), so one
    chooser's worth may stay."""
    app = make_app(example("hello-file"), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        closed: list[list[weakref.ref]] = []
        for _ in range(5):
            await pilot.press("s")
            await pilot.pause()
            assert isinstance(app.screen, ChooseListScreen)
            closed.append([weakref.ref(node._styles_cache) for node in app.screen.walk_children(with_self=True)])
            await pilot.press("escape")
            await pilot.pause()
            assert app.screen is app.main
        gc.collect()
        kept = [sum(ref() is not None for ref in refs) for refs in closed]
        assert sum(kept) <= max(len(refs) for refs in closed), kept


WIDE = """
def verify(workspace):
    return {f"check_{i:02}": 1.0 for i in range(30)}
"""


async def test_a_wide_reward_unchanged_after_other_runs_is_still_marked_the_same(tmp_path):
    """One reward per check, 30 of them: a run older than KEEP_FULL keeps 20.
    Run again after other cases' runs, the case's unchanged rewards read ≠
    ("other rewards changed") against that cut copy."""
    root = make_task(tmp_path / "tasks" / "wide", WIDE, cases={"only": {"a.txt": "a"}})
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        first = await app.wait_for_runs(1)
        history = app.main.query_one(HistoryList)
        for number in range(100, 100 + KEEP_FULL + 1):  # other cases' runs, after it
            history.add(replace(first, inputs=replace(first.inputs, case="other"), sequence=number))
        assert len(history.results[0].verdict.rewards) < 30  # the case's run is cut
        await pilot.press("r")
        await app.wait_for_runs(2)
        await pilot.pause()
        assert str(history.get_option_at_index(0).prompt).startswith("#2  • only =")
