"""Running: r, run all, live reload on a real file write, superseding, history."""

from __future__ import annotations

import asyncio
import os
import time

from textual.widgets import OptionList

from tests.helpers.processes import wait_none_with
from tests.helpers.tasks import make_task, write
from tests.tui.app_under_test import (
    SIZE,
    make_app,
    recorded,
    report_change,
    saved_with_live_reload_off,
    screen_text,
    started_processes,
    still_there,
    wait_for,
    watchers,
    widget_text,
)
from verifier_tui.engine.model import Outcome
from verifier_tui.engine.procfs import descendants
from verifier_tui.tui.messages import RunFinished, RunStarted
from verifier_tui.tui.widgets.history_list import HistoryList


async def test_r_runs_again(example):
    app = make_app(example("hello-file"), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("r")
        result = await app.wait_for_runs(2)
        assert result.trigger == "r key" and result.sequence == 2
        await pilot.pause()
        assert "#2  ✓ correct 1 =" in screen_text(app)


#: Writes a reward.json whose reward is a 400-digit integer, past any float, and
#: ends the runner before it could clear it: Harbor's check takes any int.
HUGE_REWARD = """\
import os, sys

def verify(workspace):
    with open(os.path.join(sys.argv[sys.argv.index("--reward-dir") + 1], "reward.json"), "w") as f:
        f.write('{"reward": 1' + '0' * 400 + '}')
    os._exit(0)
"""


async def test_a_reward_too_large_for_a_float_is_compared_in_the_history(tmp_path):
    """The history compares each run's reward with the one before: a reward
    past any float (Harbor's reward all the same) raised OverflowError there,
    and the app died with a traceback at the second run."""
    app = make_app(make_task(tmp_path / "t", HUGE_REWARD), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        first = await app.wait_for_runs(1)
        assert first.verdict.rewards == {"reward": 10**400}
        await pilot.press("r")
        assert (await app.wait_for_runs(2)).verdict.rewards == {"reward": 10**400}
        await pilot.pause()
        assert "#2  " in screen_text(app) and app.is_running


async def test_run_all_cases_marks_every_case(example):
    messages = []
    app = make_app(example("hello-file"), watch=False)
    async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("a")
        await app.wait_for_runs(5)
        await pilot.pause()
        ran = [r.inputs.case for r in app.finished[1:]]
        assert ran == ["correct", "missing-file", "wrong-case", "wrong-text"]
        assert all(r.expected_matched for r in app.finished[1:])
        text = screen_text(app)
        for name in ran:
            assert f"✓ {name}" in text
        # Each case was marked running in turn.
        started = [m.case for m in recorded(messages, RunStarted)]
        assert started[1:] == ran
        # The panels still show the current case.
        assert app.main.latest.inputs.case == "correct"


async def test_live_reload_after_a_real_file_write(example):
    root = example("hello-file")
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        first = await app.wait_for_runs(1)
        assert first.verdict.rewards == {"reward": 1.0}
        await asyncio.wait_for(app.controller.live.watch_ready.wait(), 10)
        verifier = root / "tests" / "verifier.py"
        verifier.write_text(verifier.read_text().replace("1.0 if", "0.75 if"))
        result = await app.wait_for_runs(2)
        assert result.verdict.rewards == {"reward": 0.75}
        assert result.trigger == "tests/verifier.py"
        await pilot.pause()
        assert "#2  • correct 0.75" in screen_text(app) or "#2  ✗ correct 0.75 ▼" in screen_text(app)
        history = app.main.query_one("#history", OptionList)
        assert "after tests/verifier.py" in str(history.get_option_at_index(0).prompt)
        # A change in the workspace re-runs too.
        (root / "cases" / "correct" / "workspace" / "hello.txt").write_text("goodbye\n")
        result = await app.wait_for_runs(3)
        assert result.verdict.rewards == {"reward": 0.0}
        assert result.trigger.startswith("workspace/hello.txt")


async def test_a_file_named_in_bytes_that_are_not_utf8_runs_once_and_is_shown(example):
    """watchfiles ends its watch on such a name, even when a run only reads
    the file: one save is one run (not a run after each run), and its name
    is shown as the byte it holds, the history's column intact."""
    root = example("hello-file")
    bad = os.fsencode(root / "tests") + b"/notes\xff.txt"
    with open(bad, "wb") as handle:
        handle.write(b"a")
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await app.first_run_and_watcher()
        with open(bad, "wb") as handle:
            handle.write(b"b")
        result = await app.wait_for_runs(2)
        assert result.trigger == "tests/" + os.fsdecode(b"notes\xff.txt")
        await asyncio.sleep(1.0)  # the run read the file: that must start no other
        assert len(app.finished) == 2
        await pilot.pause()
        history = app.main.query_one("#history", OptionList)
        assert "after tests/notes\\xff.txt" in str(history.get_option_at_index(0).prompt)


SLOW = """
import time
def verify(workspace):
    time.sleep({delay})
    return {value}
"""


async def test_a_change_mid_run_supersedes_it(tmp_path):
    root = make_task(tmp_path / "tasks" / "slow", SLOW.format(delay=20, value=0.1))
    messages = []
    app = make_app(root)
    async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
        await asyncio.wait_for(app.controller.live.watch_ready.wait(), 10)
        for _ in range(100):  # the slow first run is under way
            if any(isinstance(m, RunStarted) for m in messages):
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)
        assert "running" in widget_text(app, "#status")
        (root / "tests" / "verifier.py").write_text(SLOW.format(delay=0, value=0.9))
        # Within 15 s although the first run sleeps 20 s: it was cut short.
        result = await app.wait_for_runs(1, timeout=15)
        assert result.verdict.rewards == {"reward": 0.9}
        await pilot.pause(0.3)
        finished = [m.result for m in recorded(messages, RunFinished)]
        assert [r.verdict.rewards for r in finished] == [{"reward": 0.9}]  # 0.1 never shown
        assert len(recorded(messages, RunStarted)) == 2  # the first was cut short: it never finished
        assert "0.1" not in widget_text(app, "#reward-body")


async def test_history_selection_shows_that_run(example):
    app = make_app(example("hello-file"), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("down", "enter")  # missing-file: raises
        await app.wait_for_runs(2)
        await pilot.pause()
        history = app.main.query_one("#history", OptionList)
        history.focus()
        await pilot.press("down", "enter")  # the older run: correct, reward 1
        await pilot.pause()
        reward = widget_text(app, "#reward-body")
        assert "run #1 from the history" in reward and '{"reward": 1.0}' in reward
        assert "(nothing on stderr)" in app.main.query_one("#output").text("stderr")
        await pilot.press("escape")
        await pilot.pause()
        reward = widget_text(app, "#reward-body")
        assert "from the history" not in reward and "verifier raised" in reward
        assert "FileNotFoundError" in app.main.query_one("#output").text("stderr")


async def test_a_new_run_returns_from_history_to_the_latest(example):
    app = make_app(example("hello-file"), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("r")
        await app.wait_for_runs(2)
        app.main.query_one("#history", OptionList).focus()
        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.main.viewing is not None
        await pilot.press("r")
        await app.wait_for_runs(3)
        await pilot.pause()
        assert app.main.viewing is None
        assert "from the history" not in widget_text(app, "#reward-body")


async def test_toggle_watch_off_and_on(example):
    root = example("hello-file")
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        verifier = root / "tests" / "verifier.py"
        said = await saved_with_live_reload_off(app, pilot, verifier, "def verify(workspace):\n    return 0.5\n")
        assert "not watching" in said
        await pilot.press("w")  # on again: what changed meanwhile runs
        result = await app.wait_for_runs(2)
        assert result.verdict.rewards == {"reward": 0.5} and result.trigger == "tests/verifier.py"
        await asyncio.wait_for(app.controller.live.watch_ready.wait(), 10)
        await pilot.pause(0.1)
        assert "● watching" in widget_text(app, "#status")
        verifier.write_text("def verify(workspace):\n    return 0.25\n")
        result = await app.wait_for_runs(3)
        assert result.verdict.rewards == {"reward": 0.25}


async def test_a_reported_change_reruns_and_names_it(example):
    root = example("hello-file")
    app = make_app(root)
    async with app.run_test(size=SIZE):
        await app.wait_for_runs(1)
        report_change(app, [root / "cases" / "correct" / "workspace" / "hello.txt"])
        result = await app.wait_for_runs(2)
        assert result.trigger == "hello.txt"


async def test_timeout_is_shown_in_words(tmp_path):
    root = make_task(tmp_path / "tasks" / "sleepy", SLOW.format(delay=30, value=1.0), timeout=1)
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        result = await app.wait_for_runs(1, timeout=20)
        await pilot.pause()
        assert result.outcome is Outcome.TIMED_OUT
        reward = widget_text(app, "#reward-body")
        assert "timed out after 1 s" in reward
        assert "everything it started were stopped" in reward


async def test_quitting_ends_the_run_in_flight_and_the_watcher_and_waits_for_them(tmp_path):
    """The watcher's process is ended and waited for by the time the app has
    quit, and every other process it started (the run's, one started ahead)
    is ended and reaped within seconds: the view's network helper is killed as the
    run ends and reaped aside (verifier_tui/engine/sandbox/network.py says why)."""
    root = make_task(tmp_path / "tasks" / "slow", SLOW.format(delay=60, value=1.0))
    before = descendants(os.getpid())
    started: dict[int, str] = {}

    def runner_started() -> bool:
        started.update(started_processes(before))
        return any("run_verifier.py" in command for command in started.values())

    async with make_app(root).run_test(size=SIZE) as pilot:
        await asyncio.wait_for(pilot.app.controller.live.watch_ready.wait(), 10)
        await wait_for(runner_started, "the run's runner")
        assert watchers(started), started
    assert still_there(watchers(started)) == []
    await wait_for(lambda: not still_there(started), f"every process of {started} ended and reaped", timeout=5)


async def test_an_engine_failure_becomes_a_message(example, monkeypatch):
    app = make_app(example("hello-file"), watch=False)

    async def broken(*args, **kwargs):
        raise RuntimeError("scratch disk full")

    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        monkeypatch.setattr(app.session, "arun", broken)
        await pilot.press("r")
        assert await app.wait_for_runs(2) is None
        await pilot.pause()
        assert "RuntimeError: scratch disk full" in widget_text(app, "#status")
        assert "the run could not be completed" in widget_text(app, "#reward-body")
        monkeypatch.undo()
        await pilot.press("r")
        assert (await app.wait_for_runs(3)).verdict.rewards == {"reward": 1.0}


async def test_a_process_the_run_left_is_named_on_screen(tmp_path, sandbox):
    """An escaped process is ended with the run, and the reward panel says so
    with its command line, on one line: the newline in its -c shown as \\n."""
    token = f"vtui-tui-stray-{os.getpid()}-{time.monotonic_ns()}"
    root = make_task(
        tmp_path / "tasks" / "leaves",
        f"""
        import subprocess, sys
        def verify(workspace):
            subprocess.Popen([sys.executable, "-c", "import time\\ntime.sleep(300)", {token!r}], start_new_session=True)
            return 1.0
    """,
    )
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        result = await app.wait_for_runs(1, timeout=20)
        await pilot.pause()
        assert wait_none_with(token) == []
        reward = " ".join(widget_text(app, "#reward-body").split())
        assert "note: the run left 1 process(es) running, ended when it was over" in reward
        assert f"-c $'import time\\ntime.sleep(300)' {token}" in reward
        assert result.sandbox == sandbox


async def test_r_a_and_b_take_the_runs_started_ahead_for_them(example):
    """Each key's runs, asked for again, are the ones started ahead (warm)
    after its last press: a run per case for a, one per mode for b."""
    app = make_app(example("count-errors"), case="response-json", watch=False)

    async def press_and_wait(key: str, runs: int) -> None:
        sequence = app.session.sequence
        await pilot.press(key)
        for _ in range(400):  # (b's runs end as one verdict, not as RunFinished messages)
            await pilot.pause(0.05)
            if (
                app.session.sequence >= sequence + runs
                and not app.controller.live.scheduler.busy
                and not any(worker.is_running for worker in app.workers)
            ):
                break
        await app.session.warm.settle()

    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        for key, runs in (("r", 1), ("a", len(app.session.task.cases)), ("b", 2)):
            await press_and_wait(key, runs)
            held = [waiting.held for waiting in app.session.warm.waiting.values()]
            await press_and_wait(key, runs)
            assert sum(h.went for h in held) == runs, key


async def test_a_reward_past_any_float_that_grew_is_marked_up(tmp_path):
    """10**400, then 2 * 10**400: both read as an infinity as floats, yet the
    reward grew; the history says ▲, not "other rewards changed"."""
    app = make_app(make_task(tmp_path / "t", HUGE_REWARD), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        write(tmp_path / "t" / "tests" / "verifier.py", HUGE_REWARD.replace("'{\"reward\": 1'", "'{\"reward\": 2'"))
        await pilot.press("r")
        assert (await app.wait_for_runs(2)).verdict.rewards == {"reward": 2 * 10**400}
        await pilot.pause()
        assert " ▲" in str(app.main.query_one(HistoryList).get_option_at_index(0).prompt)
