"""A trial and a job in the real app (Textual's pilot): the job's list of
trials with their sandbox verdicts, a trial's screen (header, agreement, the
runner's steps side by side, both sides), its keys, and live reload."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import time

import pytest
from textual.widgets import Input

from tests.harbor.trial_app_under_test import SIZE, make_trial_app, text_of, until
from tests.helpers.commands import run_tool
from tests.helpers.harbor import (
    PASSED,
    READS_HELLO,
    SEPARATE,
    captured_trial,
    harbor_exception,
    make_job,
    make_trial,
    planted_trial,
    sandbox_run,
    sandbox_trial,
    timed_out_trial,
    verifier_disabled_trial,
)
from tests.tui.app_under_test import footer_promises, screen_text, started_processes, still_there, wait_for, watchers
from verifier_tui.engine.changes import Change
from verifier_tui.engine.procfs import descendants
from verifier_tui.tui.screens.help import HelpScreen
from verifier_tui.tui.screens.job_overview import JobOverviewScreen
from verifier_tui.tui.screens.picker import PickerScreen
from verifier_tui.tui.screens.trial import TrialScreen


async def _workspace_picker(app, pilot) -> Input:
    """f pressed: the workspace picker on screen; its box."""
    await pilot.press("f")
    await until(pilot, lambda: isinstance(app.screen, PickerScreen), "the workspace picker")
    return app.screen.query_one("#path", Input)


def failing_trial(task, runs, tmp_path, **kwargs):
    demo = task(verifier=READS_HELLO, toml=SEPARATE)
    return demo, sandbox_trial(
        runs / "jobs" / "j", demo, tmp_path, workspace={"other.txt": ""}, mode="separate", capture=True, **kwargs
    )


async def test_the_header_says_where_the_task_was_found_as_explain_does(task, runs, tmp_path, env):
    # The screen said `task at X  (how)` where `run` and `explain` say `task found at X (how)`.
    demo, trial = failing_trial(task, runs, tmp_path)
    explained = run_tool(env, "explain", trial.path, cwd=tmp_path)
    said = next(line.strip() for line in explained.stdout.splitlines() if "task found at" in line)
    app = make_trial_app(trial.path)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        await pilot.pause()
        shown = text_of(app, "#trial-header").splitlines()[1]
    how = said.partition(" (")[2]
    assert said == f"task found at runs/tasks/demo ({how}" and how.endswith(")")
    # The screen's paths are from the folder that holds the task and the job; the command's from its current one.
    assert shown == f"task found at tasks/demo ({how}"


async def test_the_workspace_picker_starts_with_the_path_as_typed_from_where_the_tool_started(
    task, runs, tmp_path, monkeypatch
):
    # f's box held /dev/shm/.../runs/tasks/demo: a path nobody types, where the box takes one from the tool's folder.
    demo = task(verifier=READS_HELLO, toml=SEPARATE)
    trial = sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={"hello.txt": "hi"}, mode="separate")
    monkeypatch.chdir(runs)
    app = make_trial_app(trial.path)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        box = await _workspace_picker(app, pilot)
        assert box.value == "tasks/demo"
        await pilot.press("enter")  # the path shown is the one used
        await app.wait_for_replays(2)
        assert app.screen.opened.stand_in[0] == demo


async def test_the_workspace_picker_starts_at_the_folder_the_replay_is_on(task, runs, tmp_path, monkeypatch):
    # f started at the task's folder whatever the replay was on: enter replayed with the task itself as /app, where
    # the task's screen starts f at its current workspace.
    demo, trial = captured_trial(task, runs, tmp_path, cases={"correct": {"hello.txt": "hi"}})
    monkeypatch.chdir(runs)
    app = make_trial_app(trial.path)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        box = await _workspace_picker(app, pilot)
        assert box.value == "jobs/j/demo__aaaaaaa/artifacts/app"
        # The tree browses from the folder holding the task and the job (the user's folders, the task's
        # cases), not the trial folder alone; enter replays on the captured /app as the trial captured it.
        assert app.screen.query_one("#tree").path == runs
        await pilot.press("enter")
        replayed = await app.wait_for_replays(2)
        assert app.screen.opened.stand_in == (None, None) and app.screen.opened.plan.workspace_origin == "exact"
        assert replayed.local is not None and replayed.agreement.same is True
        assert "your stand-in" not in screen_text(app)
        await _workspace_picker(app, pilot)
        await pilot.press("escape")
        await pilot.press("s", "down", "enter")  # the case after the trial's own /app
        await app.wait_for_replays(3)
        box = await _workspace_picker(app, pilot)
        assert box.value == "tasks/demo/cases/correct/workspace"


async def test_the_help_of_f_says_it_replays_over_a_captured_app_too(task, runs, tmp_path):
    # The help and the palette said f gives "a stand-in for /app when the trial did not capture it": on a trial
    # that captured /app, f (as s) replays on the folder chosen instead of the captured one.
    demo, trial = failing_trial(task, runs, tmp_path)
    app = make_trial_app(trial.path)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        said = " ".join(str(app.screen.query_one("#help-text").content).split())
        assert "when the trial did not capture it" not in said
        assert "f Replay on a folder of yours: A stand-in for /app, used instead of the one the trial captured" in said
        await pilot.press("escape", "f")
        await until(pilot, lambda: isinstance(app.screen, PickerScreen), "the workspace picker")
        app.screen.query_one("#path", Input).value = str(demo)
        await pilot.press("enter")
        replayed = await app.wait_for_replays(2)
        assert replayed.local is not None and replayed.local.inputs.workspace == demo  # over the captured /app


async def test_a_failing_trial_shows_both_sides_step_by_step(task, runs, tmp_path):
    demo, trial = failing_trial(task, runs, tmp_path)
    app = make_trial_app(trial.path)
    async with app.run_test(size=SIZE) as pilot:
        replayed = await app.wait_for_replays(1)
        await pilot.pause()
        assert isinstance(app.screen, TrialScreen)
        assert replayed.agreement.same is True
        header = text_of(app, "#trial-header")
        assert header.startswith("trial demo__aaaaaaa · task demo · agent oracle · verifier mode separate")
        assert header.splitlines()[1].startswith("task found at tasks/demo (")
        assert text_of(app, "#agreement").startswith(
            "✓ same  the replay ended as the sandbox did: RewardFileNotFoundError"
        )
        assert "verify called and awaited" in text_of(app, "#phase-labels")
        sandbox_column = text_of(app, "#phase-sandbox").splitlines()
        local_column = text_of(app, "#phase-local").splitlines()
        assert sandbox_column[7].startswith("✗ FileNotFoundError") and local_column[7].startswith("✗ FileNotFoundError")
        assert sandbox_column[8] == local_column[8] == "· not reached"
        words = text_of(app, "#phase-words")
        assert "Harbor scored this trial with RewardFileNotFoundError" in words
        assert "try: a verify that raises scores nothing" in words
        sandbox = text_of(app, "#sandbox-side .side-body")
        assert (
            "Harbor scored RewardFileNotFoundError" in sandbox and "failed at tasks/demo/tests/verifier.py:2" in sandbox
        )
        assert "FileNotFoundError" in sandbox.split("verifier/test-stdout.txt", 1)[1]
        local = text_of(app, "#local-side .side-body")
        assert "Harbor would score RewardFileNotFoundError" in local
        assert "workspace: artifact artifacts/app: exactly what the verifier saw (separate mode)" in local


async def test_the_trial_screen_says_absurd_verifier_dates_are_not_usable(task, runs, tmp_path):
    """result.json's verifier phase from year 1 to 9999: the facts under the sandbox's side
    said "the verifier phase took 3.16e+11 s"; they say the dates are not usable, as run TRIAL does."""
    import json

    _demo, trial = failing_trial(task, runs, tmp_path)
    result = json.loads((trial.path / "result.json").read_text())
    result["verifier"] = {"started_at": "0001-01-01T00:00:00", "finished_at": "9999-12-31T23:59:59"}
    (trial.path / "result.json").write_text(json.dumps(result))
    app = make_trial_app(trial.path)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        await pilot.pause()
        sandbox = " ".join(text_of(app, "#sandbox-side .side-body").split())
    assert "e+11 s" not in sandbox, sandbox
    assert "how long the verifier phase took is not known: result.json's dates are not usable" in sandbox, sandbox


def _refused_trial(task, runs, tmp_path):
    """A failing trial whose task's task.toml is now one Harbor would refuse (``version = 1``)."""
    demo, trial = failing_trial(task, runs, tmp_path)
    toml = demo / "task.toml"
    toml.write_text(toml.read_text().replace('version = "1.0"', "version = 1"))
    return trial


async def test_the_replay_side_gives_no_score_for_a_task_harbor_would_refuse(task, runs, tmp_path):
    """The task's task.toml one Harbor would refuse (``version = 1``): the agreement says
    ``refused``, yet the replay's side said "Harbor would score RewardFileNotFoundError", a
    verdict Harbor gives no task it does not load. It says none, as a task's run does."""
    app = make_trial_app(_refused_trial(task, runs, tmp_path).path)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        await pilot.pause()
        agreement = text_of(app, "#agreement")
        local = " ".join(text_of(app, "#local-side .side-body").split())
    assert "refused" in agreement and "Harbor would refuse to run this task" in agreement, agreement
    assert "Harbor would score none: Harbor would refuse to run this task" in local, local
    assert "RewardFileNotFoundError" not in local.split("workspace:")[0], local


async def test_the_status_line_says_harbor_would_refuse_not_the_sandbox(task, runs, tmp_path):
    """The status line under a trial's header on a task Harbor would now refuse read "replay #1 refused
    with the sandbox", as if the sandbox had refused something. It says Harbor would refuse the task."""
    app = make_trial_app(_refused_trial(task, runs, tmp_path).path)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        await pilot.pause()
        status = " ".join(text_of(app, "#trial-status").split())
    assert "replay #1: Harbor would refuse the task now · after " in status, status
    assert "with the sandbox" not in status, status


async def test_a_trial_whose_job_disabled_the_verifier_is_not_refused_for_its_test_script(task, runs):
    """A job run with ``verifier.disable`` on a task without tests/test.sh: Harbor loaded the task
    (``Task(disable_verification=True)`` skips ``_validate_tests``), yet the trial's screen said
    Harbor would refuse it and gave the replay no score."""
    trial = verifier_disabled_trial(runs, task(shim=False), app={"hello.txt": "hi"})
    app = make_trial_app(trial)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        await pilot.pause()
        agreement = text_of(app, "#agreement")
        local = " ".join(text_of(app, "#local-side .side-body").split())
    assert "refuse" not in agreement and "nothing to compare" in agreement, agreement
    assert "Harbor would score 1.0" in local, local


async def test_a_job_shows_its_overview_and_opens_a_trial(task, runs, tmp_path):
    passing = task("passing", verifier=READS_HELLO, toml=SEPARATE)
    job = runs / "jobs" / "several"
    sandbox_trial(
        job, passing, tmp_path, workspace={"hello.txt": "hi"}, mode="separate", capture=True, name="passing__aaaaaaa"
    )
    sandbox_trial(job, passing, tmp_path, workspace={}, mode="separate", capture=True, name="passing__bbbbbbb")
    sandbox_trial(
        job,
        passing,
        tmp_path,
        workspace={"hello.txt": "hi"},
        mode="separate",
        capture=True,
        name="passing__ccccccc",
        trial_kwargs=dict(
            exception=harbor_exception("AgentTimeoutError", "Agent execution timed out after 60 seconds")
        ),
    )
    app = make_trial_app(job)
    async with app.run_test(size=SIZE) as pilot:
        while not getattr(app.screen, "done", False):
            await pilot.pause(0.02)
        assert isinstance(app.screen, JobOverviewScreen)
        text = screen_text(app)
        assert "job several · 3 trials · oracle · Harbor 0.26.0" in text
        assert "ended  1 passed, 1 AgentTimeoutError, 1 RewardFileNotFoundError" in text
        await pilot.press("down", "enter")
        replayed = await app.wait_for_replays(1)
        assert isinstance(app.screen, TrialScreen) and app.screen.opened.trial.name == "passing__bbbbbbb"
        assert replayed.agreement.same is True
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, JobOverviewScreen)
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running


async def test_a_trial_left_or_quit_ends_its_watcher_and_waits_for_it(task, runs, tmp_path):
    """A trial's screen ends what it started as it goes: its watcher's process
    is over and waited for once esc went back to the job, and the next
    trial's once the app has quit, every process of its replays ended and
    reaped within seconds (as the task's app does: tests/tui/test_running.py)."""
    demo = task(verifier=READS_HELLO, toml=SEPARATE)
    job = runs / "jobs" / "j"
    for name in ("demo__aaaaaaa", "demo__bbbbbbb"):
        sandbox_trial(job, demo, tmp_path, workspace={"hello.txt": "hi"}, mode="separate", capture=True, name=name)
    before = descendants(os.getpid())
    app = make_trial_app(job, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        while not getattr(app.screen, "done", False):
            await pilot.pause(0.02)
        await pilot.press("enter")
        await app.wait_for_replays(1)
        await asyncio.wait_for(app.screen.controller.live.watch_ready.wait(), 15)
        first = watchers(started_processes(before))
        assert len(first) == 1
        await pilot.press("escape")
        await wait_for(lambda: not still_there(first), "the first trial's watcher ended and waited for")
        assert isinstance(app.screen, JobOverviewScreen)
        await pilot.press("down", "enter")
        await app.wait_for_replays(2)
        await asyncio.wait_for(app.screen.controller.live.watch_ready.wait(), 15)
        started = started_processes(before)
        assert len(watchers(started)) == 1
    assert still_there(watchers(started)) == []
    await wait_for(lambda: not still_there(started), f"every process of {started} ended and reaped", timeout=5)


async def test_a_multi_step_trial_lists_its_steps(task, runs, tmp_path):
    steps = 'version = "1.0"\n\n[[steps]]\nname = "first"\n\n[[steps]]\nname = "second"\n'
    demo = task(verifier="def verify(workspace):\n    return 1.0\n", toml=steps)
    run = sandbox_run(demo, tmp_path / "sandbox")
    make_job(
        runs / "jobs" / "j",
        {
            "demo__aaaaaaa": dict(
                task=demo,
                mode=None,
                steps=[
                    {"name": "first", "rewards": {"reward": 1.0}, "verifier_files": run.files, "app": {}},
                    {
                        "name": "second",
                        "exception": harbor_exception("RewardFileNotFoundError", "No reward file found"),
                        "verifier_files": {"test-stdout.txt": ""},
                        "app": {},
                    },
                ],
            )
        },
    )
    app = make_trial_app(runs / "jobs" / "j" / "demo__aaaaaaa")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        text = screen_text(app)
        assert "trial demo__aaaaaaa · 2 steps" in text
        assert "✓ step first   1.0" in text and "✗ step second  RewardFileNotFoundError" in text
        await pilot.press("question_mark")  # ? was the one key of every screen this one did not take
        assert isinstance(app.screen, HelpScreen) and "Open the step" in str(app.screen.query_one("#help-text").content)
        await pilot.press("escape")
        await pilot.press("down", "enter")
        replayed = await app.wait_for_replays(1)
        assert app.screen.opened.step == "second"
        assert "step second" in text_of(app, "#trial-header")
        assert replayed.agreement.same is False  # the replay writes 1.0
        # esc goes back to the steps, and says so: the footer said "esc trials", the help "Back to the trials"
        # (what the footer is given: at 100 columns its text is cut before esc, and it is redrawn a moment later)
        escape = [b.description for _node, b, _on, _tip in app.screen.active_bindings.values() if b.key == "escape"]
        assert escape == ["steps"], escape
        await pilot.press("question_mark")
        shown = str(app.screen.query_one("#help-text").content)
        assert "Back to the steps" in shown and "Back to the trials" not in shown
        await pilot.press("escape", "escape")
        assert "✓ step first   1.0" in screen_text(app)


async def test_e_opens_the_failing_line_of_the_side_in_focus(task, runs, tmp_path, monkeypatch):
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", "true")
    demo, trial = failing_trial(task, runs, tmp_path)
    later = time.time() + 5
    verifier = demo / "tests" / "verifier.py"
    verifier.write_text("# fixed since?\n" + READS_HELLO)  # the replay fails one line lower
    os.utime(verifier, (later, later))
    app = make_trial_app(trial.path)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        await pilot.pause()
        assert "⚠" in text_of(app, "#trial-header") and "changed since the run" in text_of(app, "#trial-header")
        app.screen.query_one("#sandbox-side").focus()
        await pilot.press("e")
        await pilot.pause()
        assert "tasks/demo/tests/verifier.py:2" in app.notices[-1]
        app.screen.query_one("#local-side").focus()
        await pilot.press("e")
        await pilot.pause()
        assert "tasks/demo/tests/verifier.py:3" in app.notices[-1]
        assert app.notices[-1].startswith("the editor needs the real terminal")


async def test_e_on_a_frame_whose_line_is_unknown_names_no_line(task, runs, tmp_path, monkeypatch):
    """test-stdout.txt (the verifier's to write) with its innermost frame naming a line no file has:
    e on the sandbox side said ``open tasks/demo/tests/helper.py:1 yourself``, a line the run never
    gave; the file is named alone, and opened at its top."""
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", "true")
    demo, trial = failing_trial(task, runs, tmp_path)
    (demo / "tests" / "helper.py").write_text("def check():\n    raise ValueError('x')\n")
    (trial.path / "verifier" / "test-stdout.txt").write_text(
        'Traceback (most recent call last):\n  File "/tests/verifier.py", line 2, in verify\n'
        f'  File "/tests/helper.py", line {"9" * 5000}, in check\nValueError: x\n'
    )
    app = make_trial_app(trial.path)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        await pilot.pause()
        assert "failed at tasks/demo/tests/helper.py (e opens it)" in text_of(app, "#sandbox-side .side-body")
        app.screen.query_one("#sandbox-side").focus()
        await pilot.press("e")
        await pilot.pause()
        assert app.notices[-1].endswith("open tasks/demo/tests/helper.py yourself"), app.notices[-1]


@pytest.mark.parametrize("how", ["tests, climbing out", "workspace's link"])
async def test_e_never_opens_a_file_outside_the_task_that_the_trials_output_named(
    task, runs, tmp_path, monkeypatch, how
):
    """The sandbox side took a frame of test-stdout.txt (the trial's to write)
    as the task's file when its path joined to tests/ (or the captured /app)
    was a file: ``/tests/../../<your file>`` or a link in the captured
    workspace to one of yours showed "(e opens it)", and e opened it."""
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", "true")
    _demo, trial, secret, _frame = planted_trial(task, runs, tmp_path, how)
    app = make_trial_app(trial.path)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        await pilot.pause()
        assert "e opens it" not in text_of(app, "#sandbox-side .side-body")
        assert app.screen.query_one("#sandbox-side").failing is None
        app.screen.query_one("#sandbox-side").focus()
        await pilot.press("e")
        await pilot.pause()
        # The verifier's verify line, as for a sandbox side with no failing line of the task's.
        assert "tasks/demo/tests/verifier.py:1" in app.notices[-1]
        assert secret.name not in app.notices[-1] and "notes.py" not in app.notices[-1]


async def test_live_reload_replays_and_updates_the_agreement_while_the_sandbox_stays(task, runs, tmp_path):
    demo, trial = captured_trial(task, runs, tmp_path)
    app = make_trial_app(trial.path, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        assert (await app.wait_for_replays(1)).agreement.same is True
        screen = app.screen
        await asyncio.wait_for(screen.controller.live.watch_ready.wait(), 15)
        sandbox_before = text_of(app, "#sandbox-side .side-body")
        (demo / "tests" / "verifier.py").write_text(READS_HELLO.replace("'hi'", "'hello'"))
        replayed = await app.wait_for_replays(2)
        await pilot.pause()
        assert replayed.agreement.same is False
        assert text_of(app, "#agreement").startswith("✗ differ  the sandbox ended with 1.0, the replay with 0.0")
        assert "changed since the run" in text_of(app, "#trial-header")
        assert text_of(app, "#sandbox-side .side-body") == sandbox_before
        assert "replay #2 differ" in text_of(app, "#trial-status")
        await pilot.press("w")
        await pilot.pause()
        assert "not watching" in text_of(app, "#trial-status")
        await pilot.press("r")
        assert (await app.wait_for_replays(3)).agreement.same is False


async def test_live_reload_turned_on_after_starting_without_it_watches_then_replays(task, runs, tmp_path):
    """As on a task's screen: started without watching, nothing saw what
    changed meanwhile; w starts the watcher and, once it is in place, replays."""
    demo, trial = captured_trial(task, runs, tmp_path)
    app = make_trial_app(trial.path)  # live reload off
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        (demo / "tests" / "verifier.py").write_text(READS_HELLO.replace("'hi'", "'hello'"))
        await pilot.press("w")
        replayed = await app.wait_for_replays(2)
        assert app.screen.controller.live.watch_ready.is_set() and replayed.agreement.same is False
        await pilot.pause()
        assert "● watching the task" in text_of(app, "#trial-status")
        assert "after live reload on" in text_of(app, "#trial-status")


async def test_a_change_reported_to_the_controller_replays(task, runs, tmp_path):
    """The same path without the OS watcher: a change as the watcher reports it."""
    demo, trial = captured_trial(task, runs, tmp_path)
    app = make_trial_app(trial.path)
    async with app.run_test(size=SIZE):
        await app.wait_for_replays(1)
        app.screen.controller.live.set_live_reload(True)  # live reload on, with no OS watcher
        verifier = demo / "tests" / "verifier.py"
        verifier.write_text("def verify(workspace):\n    raise RuntimeError('broken')\n")
        app.screen.controller.on_change(Change(paths=frozenset([verifier])))
        replayed = await app.wait_for_replays(2)
        assert replayed.agreement.same is False and replayed.parting.phase == "verify_called"


async def test_no_replay_points_to_the_agreement_where_it_is(task, runs, tmp_path):
    """With no replay, the status line sent the reader to "the agreement above", a panel drawn
    below it: it says where the panel is."""
    demo = task(verifier=READS_HELLO, cases={"good": {"hello.txt": "hi"}})
    trial = sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={"hello.txt": "hi"})
    app = make_trial_app(trial.path)
    async with app.run_test(size=SIZE) as pilot:
        assert (await app.wait_for_replays(1)).local is None
        await pilot.pause()
        status, agreement = app.screen.query_one("#trial-status"), app.screen.query_one("#agreement")
        assert agreement.region.y > status.region.y
        assert "no replay: see the agreement below" in text_of(app, "#trial-status")


async def test_no_workspace_says_what_to_give_and_a_case_replays(task, runs, tmp_path):
    demo = task(verifier=READS_HELLO, cases={"good": {"hello.txt": "hi"}})
    trial = sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={"hello.txt": "hi"})
    app = make_trial_app(trial.path)
    async with app.run_test(size=SIZE) as pilot:
        replayed = await app.wait_for_replays(1)
        await pilot.pause()
        assert replayed.local is None
        agreement = text_of(app, "#agreement")
        assert agreement.startswith("? no replay  no workspace to replay on: the trial did not capture /app")
        assert "f chooses a folder to replay on (your stand-in for /app), s a case of the task" in agreement
        local = text_of(app, "#local-side .side-body")
        assert "no replay yet: no workspace to replay on: the trial did not capture /app" in local
        assert "f chooses a folder" in local
        # The keys stand where the command line names its options: none of them on screen.
        assert "--workspace" not in agreement + local and "--stand-in" not in agreement + local
        await pilot.press("s")
        await pilot.pause()
        await pilot.press("enter")  # the only case: good
        replayed = await app.wait_for_replays(2)
        await pilot.pause()
        assert replayed.agreement.same is True and replayed.local.inputs.case == "good"
        assert "your stand-in: case good" in text_of(app, "#local-side .side-body")


async def test_a_task_that_cannot_be_found_is_said_plainly(task, runs, tmp_path):
    demo, trial = failing_trial(task, runs, tmp_path)
    shutil.rmtree(demo)
    app = make_trial_app(trial.path)
    async with app.run_test(size=SIZE) as pilot:
        replayed = await app.wait_for_replays(1)
        await pilot.pause()
        assert replayed.local is None
        assert "the task was not found (looked in: " in text_of(app, "#trial-header")
        assert "); give the task folder with --task DIR" in " ".join(text_of(app, "#trial-header").split())
        # The sandbox side stands on its own.
        assert "Harbor scored RewardFileNotFoundError" in text_of(app, "#sandbox-side .side-body")
        # Its failing line is the sandbox's /tests/verifier.py, no file here: the root cause and the
        # steps' advice said "(e opens it)", and e then said "no failing line, and no verifier to open".
        assert "(not a file of the task)" in text_of(app, "#sandbox-side .side-body")
        assert "e opens it" not in screen_text(app)


async def test_f_on_a_trial_whose_task_cannot_be_found_says_why_it_offers_no_folder(task, runs, tmp_path):
    # f opened the folder picker, a folder chosen in it did nothing: no task, no replay, and nothing said so
    # (s says the task was not found, so it has no cases to offer). Both say how to give the task in the
    # header's words: f and s said "start with --task DIR" under a header saying "give the task folder with".
    demo, trial = failing_trial(task, runs, tmp_path)
    shutil.rmtree(demo)
    app = make_trial_app(trial.path)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        assert "give the task folder with --task DIR" in text_of(app, "#trial-header")
        await pilot.press("f")
        await pilot.pause()
        assert not isinstance(app.screen, PickerScreen)
        assert app.notices and app.notices[-1].startswith("the task was not found, so there is nothing to replay")
        assert app.notices[-1].endswith(": give the task folder with --task DIR"), app.notices[-1]
        await pilot.press("s")
        await pilot.pause()
        said = "the task was not found, so it has no cases to offer: give the task folder with --task DIR"
        assert app.notices[-1] == said


async def test_a_trial_harbor_has_not_ended_is_not_finished_not_scored(task, runs):
    # Harbor writes result.json when the trial ends: without it (killed, or
    # still running) it has scored nothing, whatever verifier/ holds so far.
    trial = make_trial(runs / "jobs" / "j" / "demo__aaaaaaa", task=task(), result="missing", **PASSED)
    app = make_trial_app(trial)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        await pilot.pause()
        cause = " ".join(text_of(app, "#root-cause").split())
        assert cause.startswith("· root cause not finished: Harbor has not scored it (result.json is missing)")
        assert "Harbor scored 1.0" not in cause
        sandbox = text_of(app, "#sandbox-side .side-body")
        # nothing recorded a verdict: no "from none", a place that is none (run TRIAL says no place either)
        assert sandbox.startswith("Harbor: not finished\n"), sandbox
        assert "verifier/ holds rewards reward=1.0 so far" in " ".join(sandbox.split())


def unended_trial(task, runs, ended_at):
    """A trial Harbor has not ended, ended at ``ended_at`` (its copy with Harbor's result.json), and the app on it."""
    demo = task()
    ended = make_trial(ended_at, task=demo, **PASSED)
    trial = make_trial(runs / "jobs" / "j" / "demo__aaaaaaa", task=demo, result="missing", **PASSED)
    return ended, trial, make_trial_app(trial)


async def test_r_on_a_trial_harbor_had_not_ended_reads_it_again_and_shows_it_ended(task, runs):
    """r on a trial Harbor had not ended when it was opened said "nothing to replay" (or replayed)
    and the screen kept saying "not finished" after Harbor ended it: the folder was read once."""
    ended, trial, app = unended_trial(task, runs, runs / "jobs" / "k" / "demo__aaaaaaa")
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        await pilot.press("r")  # not ended yet: read again, and said so
        await app.wait_for_replays(2)
        assert "not finished" in text_of(app, "#root-cause")
        assert app.notices[-1] == "the trial read again: Harbor has not ended it yet", app.notices
        shutil.copy2(ended / "result.json", trial / "result.json")  # Harbor ends the trial
        await pilot.press("r")
        await app.wait_for_replays(3)
        await pilot.pause()
        cause = " ".join(text_of(app, "#root-cause").split())
        assert "not finished" not in cause and "Harbor scored 1.0" in cause, cause
        assert text_of(app, "#sandbox-side .side-body").startswith("Harbor scored 1.0"), text_of(
            app, "#sandbox-side .side-body"
        )
        assert app.notices[-1] == "the trial read again: Harbor has ended it since", app.notices


async def test_r_refuses_a_trial_folder_replaced_by_a_link_or_another_folder(task, runs, tmp_path):
    """r on a trial Harbor had not ended followed a link put in the trial folder's place: another trial
    was shown under this one's name, "Harbor has ended it since". The job overview never follows a
    trial folder that is a link; r now refuses one too, or another folder made at its path, and the
    screen keeps the trial it showed."""
    other, trial, app = unended_trial(task, runs, tmp_path / "elsewhere" / "x__bbbbbbb")
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        await pilot.pause()
        before = text_of(app, "#sandbox-side .side-body")
        shutil.rmtree(trial)
        trial.symlink_to(other)
        await pilot.press("r")
        await until(pilot, lambda: app.notices and app.notices[-1].startswith("r: "), "r refused")
        assert app.notices[-1] == "r: cannot read the trial again: demo__aaaaaaa is now a link", app.notices
        trial.unlink()
        shutil.copytree(other, trial)  # a folder of its own at the trial's path
        await pilot.press("r")
        await until(pilot, lambda: len([n for n in app.notices if n.startswith("r: ")]) == 2, "r refused again")
        assert app.notices[-1] == (
            "r: cannot read the trial again: demo__aaaaaaa is another folder now (replaced since it was read)"
        ), app.notices
        assert "not finished" in text_of(app, "#root-cause")
        assert text_of(app, "#sandbox-side .side-body") == before
        assert not [n for n in app.notices if n.startswith("the trial read again")]


async def test_r_says_a_result_json_that_cannot_be_read_is_no_end(task, runs, tmp_path):
    """A result.json that became a link (never followed), read again, was said "Harbor has ended it
    since": one that cannot be read says nothing of an end. r says so, and why."""
    ended, trial, app = unended_trial(task, runs, tmp_path / "k" / "demo__aaaaaaa")
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        (trial / "result.json").symlink_to(ended / "result.json")
        await pilot.press("r")
        await app.wait_for_replays(2)
        await pilot.pause()
        notice = app.notices[-1]
        said = "the trial read again: whether Harbor has ended it cannot be told: result.json is a link to "
        assert notice.startswith(said) and notice.endswith(": not read here"), notice


async def test_a_replay_in_flight_says_how_long_it_has_run(task, runs):
    """A replay said "▶ replaying after start" and nothing else till it ended: a verifier that ran for
    minutes (up to the task's timeout) left a screen where nothing moved, as if it had frozen."""
    from tests.harbor.trial_app_under_test import TrialAppUnderTest
    from verifier_tui.engine.harbor.folders import open_trial
    from verifier_tui.engine.session import Options

    slow = task(verifier="import time\n\ndef verify(workspace):\n    time.sleep(30)\n    return 1.0\n")
    trial = make_trial(runs / "jobs" / "j" / "demo__aaaaaaa", task=slow, app={"hello.txt": "hi"}, **PASSED)
    app = TrialAppUnderTest(open_trial(trial), None, options=Options(), watch=False)  # its clock shown
    async with app.run_test(size=SIZE) as pilot:
        await until(
            pilot,
            lambda: re.search(r"▶ replaying after start +[0-9.]+ s", text_of(app, "#trial-status")),
            "the replay's time in the status line",
            lambda app: text_of(app, "#trial-status"),
        )


async def test_the_palette_lists_the_trial_keys(task, runs, tmp_path):
    _, trial = failing_trial(task, runs, tmp_path)
    app = make_trial_app(trial.path)
    async with app.run_test(size=(160, 45)) as pilot:
        await app.wait_for_replays(1)
        await pilot.pause()
        footer = screen_text(app).splitlines()[-1]
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "l x a j i m files" in footer  # the six Harbor files share one entry
        assert "f s stand-in" in footer  # as do the two keys that choose the stand-in for /app
        for binding in TrialScreen.BINDINGS:
            shown, title = app.get_key_display(binding), binding.tooltip.split("\n")[0]
            if binding.action.startswith("back"):  # a trial opened on its own has no list to go back to
                assert "esc" not in footer and f"{title}  ({shown})" not in titles
                continue
            if binding.action == "show_output('stderr')":
                continue  # o names the stream it shows next: stdout while stderr is shown
            if binding.show and binding.group is None:
                assert f"{shown} {binding.description}" in footer, shown
            assert f"{title}  ({shown})" in titles


async def test_at_100_columns_the_footer_shows_every_key_of_a_replayed_trial_down_to_esc(task, runs, tmp_path):
    # At 100 columns the footer of a replayed trial opened from its job was cut after "q q": esc, the way back, unseen.
    demo = task(verifier=READS_HELLO, toml=SEPARATE)
    job = runs / "jobs" / "j"
    for name in ("demo__aaaaaaa", "demo__bbbbbbb"):  # two: a job of one trial opens it, with no list to go back to
        sandbox_trial(job, demo, tmp_path, workspace={"hello.txt": "hi"}, mode="separate", capture=True, name=name)
    app = make_trial_app(job)
    async with app.run_test(size=(100, 40)) as pilot:
        await until(pilot, lambda: getattr(app.screen, "done", False), "the job's trials listed")
        await pilot.press("enter")
        await app.wait_for_replays(1)
        promised = footer_promises(app.screen)
        assert "o stdout" in promised and promised[-1] == "esc trials", promised  # the replay shown: its keys too
        await until(
            pilot,
            lambda: all(word in screen_text(app).splitlines()[-1] for word in promised),
            f"the footer shows {promised}",
            lambda app: screen_text(app).splitlines()[-1],
        )


def _two_trials(task, runs, tmp_path):
    """A job of two trials of a task that reads /app/hello.txt, each with /app captured."""
    demo = task(verifier=READS_HELLO, toml=SEPARATE)
    job = runs / "jobs" / "j"
    for name in ("demo__aaaaaaa", "demo__bbbbbbb"):
        sandbox_trial(job, demo, tmp_path, workspace={"hello.txt": "hi"}, mode="separate", capture=True, name=name)
    return job


async def test_at_100_columns_the_runner_s_steps_name_each_column_whole(task, runs, tmp_path):
    """The runner's steps at 100 columns (the smallest the screen draws in): the
    sandbox's column header read "sandbox (inferred from its outp…", cut."""
    app = make_trial_app(_two_trials(task, runs, tmp_path))
    async with app.run_test(size=(100, 40)) as pilot:
        await until(pilot, lambda: getattr(app.screen, "done", False), "the job's trials listed")
        await pilot.press("enter")
        await app.wait_for_replays(1)
        await pilot.pause()
        header = next(line for line in screen_text(app).splitlines() if "│ step " in line)
        assert "…" not in header and "sandbox (" in header and "local replay" in header, header


async def test_at_160_columns_the_footer_of_a_replayed_trial_shows_c_and_help_too(task, runs, tmp_path):
    """c (copy the replay's command) and ? were left out of the footer for it to fit 100
    columns, and out of it at 160 too, with half the line empty: a wide footer shows them,
    the palette and the help list each once, and the footer at 100 still ends with esc."""
    app = make_trial_app(_two_trials(task, runs, tmp_path))
    async with app.run_test(size=(160, 40)) as pilot:
        await until(pilot, lambda: getattr(app.screen, "done", False), "the job's trials listed")
        await pilot.press("enter")
        await app.wait_for_replays(1)
        footer = lambda app: screen_text(app).splitlines()[-1]  # noqa: E731
        await until(pilot, lambda: "c copy" in footer(app) and "? help" in footer(app), "c and ? in the footer", footer)
        assert footer(app).index("esc trials") > footer(app).index("c copy")
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert titles.count("Copy the replay's command  (c)") == 1, titles
        await pilot.press("c")
        await until(pilot, lambda: app.screen.__class__.__name__ == "CommandScreen", "c's command shown")
        await pilot.press("escape")
        await pilot.resize_terminal(100, 40)
        # A footer being redrawn is a blank line for a moment: what is waited for is the new one, with esc.
        narrow = lambda: "c copy" not in footer(app) and "esc trials" in footer(app)  # noqa: E731
        await until(pilot, narrow, "c left to the palette at 100 columns, esc kept", footer)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert titles.count("Copy the replay's command  (c)") == 1, titles


async def test_a_small_terminal_says_so(task, runs, tmp_path):
    _, trial = failing_trial(task, runs, tmp_path)
    app = make_trial_app(trial.path)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.wait_for_replays(1)
        await pilot.pause()
        assert "terminal too small (need 100x30)" in screen_text(app)


async def test_an_empty_stand_in_then_a_fix_names_exactly_the_file_that_changed(task, runs, tmp_path):
    """The nop agent's trial: nothing captured; the empty /app stands in, the
    replay fails as the sandbox did; the verifier fixed, the replay scores 0.0
    and the header names the one file that changed, though every file of the
    task is newer than the trial (a copied task)."""
    demo = task(verifier=READS_HELLO)
    trial = sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={}, trial_kwargs=dict(agent="nop"))
    later = time.time() + 5
    for path in demo.rglob("*"):
        os.utime(path, (later, later))
    app = make_trial_app(trial.path)
    async with app.run_test(size=SIZE) as pilot:
        assert (await app.wait_for_replays(1)).local is None
        await pilot.press("s")
        await pilot.pause()
        await pilot.press("enter")  # the only choice: an empty /app
        replayed = await app.wait_for_replays(2)
        await pilot.pause()
        assert replayed.agreement.same is True and replayed.phases.stopped_at == "verify_called"
        assert "your stand-in: an empty /app" in text_of(app, "#local-side .side-body")
        assert replayed.local.inputs.workspace is None  # the run's own empty scratch folder
        app.screen.controller.live.set_live_reload(True)  # live reload on, with no OS watcher
        verifier = demo / "tests" / "verifier.py"
        verifier.write_text(
            "def verify(workspace):\n    path = workspace / 'hello.txt'\n"
            "    return 1.0 if path.is_file() and path.read_text() == 'hi' else 0.0\n"
        )
        app.screen.controller.on_change(Change(paths=frozenset([verifier])))
        replayed = await app.wait_for_replays(3)
        await pilot.pause()
        assert replayed.local.verdict.rewards == {"reward": 0.0} and replayed.agreement.same is False
        header = text_of(app, "#trial-header")
        assert "changed since the run: tests/verifier.py;" in header
        assert "task.toml" not in header


async def test_b_runs_both_modes_and_says_how_each_went(example):
    """A verify that requires response: it works with the case's response
    and fails in Harbor mode; the verdict area says so in a line."""
    from tests.tui.app_under_test import make_app, widget_text

    app = make_app(example("count-errors"), case="response-json", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("b")
        for _ in range(100):
            await pilot.pause(0.1)
            if "both modes:" in widget_text(app, "#reward-body"):
                break
        verdict = widget_text(app, "#reward-body")
        assert "both modes: environment-server mode ✓ 1.0 · Harbor mode ✗ contract error" in verdict
        assert "every published Harbor run of this task would score RewardFileNotFoundError" in verdict
        history = [r.mode for r in app.main.query_one("#history").results[-2:]]
        assert history == ["harbor", "server"]  # the current mode's run last: the latest, as the status line says


async def test_an_old_layout_trial_opens_with_what_it_lacks_named(task, runs, tmp_path):
    demo = task(verifier=READS_HELLO)
    run = sandbox_run(demo, tmp_path / "sandbox", workspace={"hello.txt": "hi"})
    make_job(
        runs / "jobs" / "j",
        {
            "demo__aaaaaaa": dict(
                task=demo, rewards={"reward": 1.0}, verifier_files=run.files, old_layout=True, app={"hello.txt": "hi"}
            )
        },
    )
    app = make_trial_app(runs / "jobs" / "j")
    async with app.run_test(size=SIZE) as pilot:
        replayed = await app.wait_for_replays(1)
        await pilot.pause()
        assert replayed.agreement.same is True
        assert "verifier mode shared" in text_of(app, "#trial-header")
        sandbox = text_of(app, "#sandbox-side .side-body")
        assert "note: lock.json (written from Harbor 0.17.0)" in sandbox
        assert "from task.toml" in sandbox  # the mode, with no verifier_environment_mode to read


async def test_the_step_where_they_part_is_shown_in_full_under_the_phases(task, runs, tmp_path):
    """The sandbox failed to bind a required response; the verifier since gave it a default: the
    screen shows the replay's whole argument table at the step where the two part."""
    demo = task(
        verifier="def verify(workspace, response):\n    return 1.0\n",
        toml='version = "1.0"\nartifacts = ["/app"]\n\n[verifier]\nenvironment_mode = "separate"\n',
    )
    trial = sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={}, mode="separate", capture=True)
    (demo / "tests" / "verifier.py").write_text("def verify(workspace, response=None):\n    return 1.0\n")
    app = make_trial_app(trial.path)
    async with app.run_test(size=SIZE) as pilot:
        replayed = await app.wait_for_replays(1)
        await pilot.pause()
        assert replayed.parting.phase == "arguments_bound"
        words = text_of(app, "#phase-words").splitlines()
        at = words.index("at arguments bound:")
        assert words[at + 1 : at + 4] == [
            "  replay:",
            "    workspace: workspace (keyword)",
            "    response: keeps its default None",
        ]


async def test_the_root_cause_of_a_timeout_carries_where_the_replay_was_stuck(runs, tmp_path):
    slow = "import time\n\ndef verify(workspace):\n    time.sleep(30)\n    return 1.0\n"
    trial = timed_out_trial(runs, tmp_path, slow)
    app = make_trial_app(trial.path)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        await pilot.pause()
        cause = " ".join(text_of(app, "#root-cause").split())
        assert "the replay, which timed out too, was stuck at tests/verifier.py:4 in verify" in cause
        assert "try: find what is slow or stuck at tests/verifier.py:4" in cause


async def test_a_replay_in_the_copy_sandbox_says_it_could_write_the_users_files(task, runs, tmp_path, monkeypatch):
    """A replay runs what an agent wrote: in the copy sandbox it could write
    the user's files, which ``run TRIAL`` and ``test JOB`` say, and the task's
    screen says in its header. The trial's screen said nothing of it."""
    monkeypatch.setenv("VERIFIER_TUI_SANDBOX", "copy")
    _demo, trial = failing_trial(task, runs, tmp_path)
    app = make_trial_app(trial.path)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        await pilot.pause()
        said = "sandbox: copy (asked for): the verifier runs on this machine as you and can write your files"
        assert said in " ".join(text_of(app, "#trial-status").split()), text_of(app, "#trial-status")


async def test_r_with_nothing_to_replay_says_so(task, runs):
    """r on a trial that captured no /app (no stand-in chosen) changed nothing
    on screen: the key looked dead. It says what gives a replay, as the
    main screen's r says it has no verifier to run."""
    trial = make_trial(runs / "jobs" / "j" / "demo__aaaaaaa", task=task(), **PASSED)
    app = make_trial_app(trial)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        await pilot.press("r")
        await pilot.pause()
        assert app.notices and app.notices[-1].startswith("r: nothing to replay: f chooses a folder to replay on")


async def test_w_with_nothing_to_replay_says_when_it_applies(task, runs):
    """w on a trial with nothing to replay said "every save to the task
    replays" and "r replays", where nothing replays until a stand-in is chosen."""
    trial = make_trial(runs / "jobs" / "j" / "demo__aaaaaaa", task=task(), **PASSED)
    app = make_trial_app(trial)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        for _ in range(2):
            await pilot.press("w")
            await pilot.pause()
            assert "once there is a replay" in app.notices[-1], app.notices[-1]


async def test_k_on_a_stand_in_is_said_to_keep_the_stand_in(task, runs):
    """The help said k keeps "the trial's captured /app", of a replay on an
    empty /app chosen with s (the trial captured none): k keeps the replay's /app."""
    trial = make_trial(runs / "jobs" / "j" / "demo__aaaaaaa", task=task(), **PASSED)
    app = make_trial_app(trial)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        await pilot.press("s")
        await pilot.pause()
        await pilot.press("end", "enter")  # an empty /app
        await app.wait_for_replays(2)
        await pilot.pause()
        await pilot.press("question_mark")
        shown = " ".join(str(app.screen.query_one("#help-text").content).split())
        assert "Keep the replay as a case: The replay's /app (the trial's captured one, or your stand-in)" in shown


async def test_keys_held_for_a_chooser_that_does_not_come_are_handed_on_after_a_second(
    task, runs, tmp_path, monkeypatch
):
    """A chooser's flow that takes long to show it (s, a task of many cases):
    the keys read meanwhile are held a second at most, then act where they
    are (r replays), not kept going round unread until the chooser came,
    nor acting at once as if no chooser were on its way."""
    from textual import events

    _, trial = failing_trial(task, runs, tmp_path)
    app = make_trial_app(trial.path)
    real = app.push_screen_wait

    async def slow_push(screen):
        await asyncio.sleep(30)  # longer than any replay takes on a loaded machine
        return await real(screen)

    async with app.run_test(size=SIZE):
        await app.wait_for_replays(1)
        monkeypatch.setattr(app, "push_screen_wait", slow_push)
        for key in ("s", "r"):
            app.post_message(events.Key(key, key))
        await wait_for(lambda: [held.key for held in app._held] == ["r"], "r held for the chooser", timeout=3)
        assert len(app.replays) == 1  # r waits for the chooser a moment
        await app.wait_for_replays(2, timeout=20)  # before the chooser came
        assert isinstance(app.screen, TrialScreen)


async def test_f_after_the_trial_folder_moved_opens_the_picker_and_keeps_the_screen(task, runs, tmp_path, monkeypatch):
    # The picker's tree was rooted at the (gone) trial folder: Textual posted a file-selected for its missing root,
    # the folder-only picker took it as a choice and dismissed twice, which took the trial screen away too: a blank
    # app that answered no key.
    demo, trial = captured_trial(task, runs, tmp_path)
    monkeypatch.chdir(runs)
    app = make_trial_app(trial.path)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        trial.path.rename(runs / "moved")
        await _workspace_picker(app, pilot)
        await pilot.pause()
        assert isinstance(app.screen, PickerScreen)
        assert app.screen.query_one("#tree").path == runs
        assert app.screen.query_one("#path", Input).value == "tasks/demo"
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, TrialScreen), "the trial screen again")
        assert [type(screen).__name__ for screen in app.screen_stack][-1] == "TrialScreen"


async def test_f_when_the_folder_the_tool_started_in_was_removed(task, runs, tmp_path, monkeypatch):
    # Every picker died (a traceback, exit 1): its box wrote paths from Path.cwd(), which raises once the folder
    # the tool started in is removed. Paths are shown, and a typed relative one taken, from the folder the tool
    # started in, as it was when it started.
    demo = task(verifier=READS_HELLO, toml=SEPARATE)
    trial = sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={"hello.txt": "hi"}, mode="separate")
    started = tmp_path / "started"
    started.mkdir()
    monkeypatch.chdir(started)
    app = make_trial_app(trial.path)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        started.rmdir()
        box = await _workspace_picker(app, pilot)
        assert box.value == str(demo)  # outside the folder the tool started in: whole
        box.value = "tests"  # from the removed folder: none there
        await pilot.press("enter")
        await until(pilot, lambda: "tests is not a folder" in text_of(app, "#picker-error"), "the box's refusal")
        box.value = str(demo / "tests")
        await pilot.press("enter")
        replayed = await app.wait_for_replays(2)
        assert replayed.local is not None and replayed.local.inputs.workspace == demo / "tests"


async def test_a_folder_named_tilde_is_shown_in_the_picker_as_a_shell_takes_it_back(task, runs, tmp_path, monkeypatch):
    # A folder named `~` where the tool started showed in the box as `~/ws`, which the box (as a shell) reads as
    # the home folder: `~/ws/sub` typed became /root/ws/sub. It is shown `./~/ws`, as a name starting with `-` is.
    demo = task(verifier=READS_HELLO, toml=SEPARATE)
    trial = sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={"hello.txt": "hi"}, mode="separate")
    mine = runs / "~" / "ws"
    (mine / "sub").mkdir(parents=True)
    monkeypatch.chdir(runs)
    app = make_trial_app(trial.path, workspace=str(mine))
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        box = await _workspace_picker(app, pilot)
        assert box.value == "./~/ws"
        box.value += "/sub"
        await pilot.press("enter")
        await app.wait_for_replays(2)
        assert app.screen.opened.stand_in[0] == mine / "sub"


async def test_a_trials_bare_template_takes_this_shells_value_only_when_started_with_env(
    task, runs, tmp_path, monkeypatch
):
    """A trial's ``${W}`` took this shell's W into the replay, unasked. The screen now says the replay
    runs without it and how to pass it; the app started with --env W gives it."""
    monkeypatch.setenv("W", "1")
    verifier = "import os\n\ndef verify(workspace):\n    return float(os.environ.get('WEIGHT', '0'))\n"
    demo = task(verifier=verifier, toml=SEPARATE + 'env = { WEIGHT = "${W}" }\n')
    job = runs / "jobs" / "j"
    trial = sandbox_trial(job, demo, tmp_path, workspace={}, mode="separate", capture=True, env={"WEIGHT": "1"})
    said = (
        "note: W is not taken from your environment in a replay (WEIGHT = '${W}' in task.toml [verifier] env): "
        "the replay runs without WEIGHT; --env W passes yours"
    )
    for options, same in (({}, False), ({"env": ("W",)}, True)):
        app = make_trial_app(trial.path, **options)
        async with app.run_test(size=SIZE) as pilot:
            replayed = await app.wait_for_replays(1)
            await pilot.pause()
            assert replayed.agreement.same is same
            local = " ".join(text_of(app, "#local-side .side-body").split())
            assert (said in local) is not same, local


@pytest.mark.parametrize("own_verifier", [False, True])
async def test_c_on_a_step_task_toml_no_longer_lists_says_the_command_lacks_its_tests(
    task, runs, tmp_path, own_verifier
):
    """The replay lays steps/second/tests over tests/; the command c copies, `run TASK` with no --step
    (task.toml lists `first` only), does not, and its note said nothing of it. With the step's own
    verifier.py the command runs that file (--verifier), so the note said wrongly that it runs tests/ alone."""
    from verifier_tui.tui.screens.command import CommandScreen

    demo = task(
        verifier="from weights import WEIGHT\n\ndef verify(workspace):\n    return WEIGHT\n",
        files={"weights.py": "WEIGHT = 1.0\n"},
    )
    (demo / "steps" / "second" / "tests").mkdir(parents=True)
    (demo / "steps" / "second" / "tests" / "weights.py").write_text("WEIGHT = 0.25\n")
    if own_verifier:
        (demo / "steps" / "second" / "tests" / "verifier.py").write_text((demo / "tests" / "verifier.py").read_text())
    run = sandbox_run(demo, tmp_path / "sandbox")
    steps = [
        {"name": name, "rewards": {"reward": 1.0}, "verifier_files": run.files, "app": {}}
        for name in ("first", "second")
    ]
    make_job(runs / "jobs" / "j", {"demo__aaaaaaa": dict(task=demo, mode=None, steps=steps)})
    (demo / "task.toml").write_text('version = "1.0"\n\n[[steps]]\nname = "first"\n')
    app = make_trial_app(runs / "jobs" / "j" / "demo__aaaaaaa")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("down", "enter")
        replayed = await app.wait_for_replays(1)
        assert app.screen.opened.step == "second" and replayed.local is not None
        assert replayed.local.verdict.rewards == {"reward": 0.25}
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, CommandScreen), "the command dialog")
        note = app.screen.note or ""
    assert "steps/second/tests" in note and "Not the same run" in note, note
    assert "without steps/second/tests laid over tests/" in note and "tests/ alone" not in note, note


async def test_a_huge_exception_type_takes_one_line_s_worth_of_the_root_cause_and_the_facts(task, runs):
    """A result.json naming an exception type of 100,000 characters (Harbor's are class
    names): the root cause at the top of the trial's screen took seven lines of 160 columns
    with 1,000 of them, the facts another seven. Each says its start and end, with a count
    of what was left out, as the job overview and the command line do."""
    trial = make_trial(
        runs / "jobs" / "j" / "demo__aaaaaaa", task=task(), exception=harbor_exception("X" * 100_000, "the message")
    )
    app = make_trial_app(trial)
    async with app.run_test(size=(160, 45)) as pilot:
        await app.wait_for_replays(1)
        await pilot.pause()
        cut = f"{'X' * 20} … 99,973 characters left out … {'X' * 7}"
        cause = " ".join(text_of(app, "#root-cause").split())
        assert f"✗ root cause {cut} (before the environment started): the message" in cause, cause
        facts = " ".join(text_of(app, "#sandbox-side .side-body").split())
        assert f"the agent failed first: {cut}: the message" in facts, facts
        assert "X" * 100 not in screen_text(app)


async def test_a_replay_with_no_sandbox_to_run_in_says_why_in_the_users_words(task, runs, tmp_path, monkeypatch):
    """The sandbox lost after the trial's screen opened (``VERIFIER_TUI_SANDBOX=namespace``, a probe the
    machine now refuses): the toast read "... IsolationError: VERIFIER_TUI_SANDBOX=namespace, but this
    machine cannot: ...", a class name of the tool's where every other face says the line alone."""
    from verifier_tui.engine import session
    from verifier_tui.engine.sandbox.isolation import IsolationError

    why = "VERIFIER_TUI_SANDBOX=namespace, but this machine cannot: no bubblewrap for this machine"

    def refused():
        raise IsolationError(why)

    monkeypatch.setattr(session, "choose_isolation", refused)
    _demo, trial = failing_trial(task, runs, tmp_path)
    app = make_trial_app(trial.path)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.notices, "the replay's failure said")
    assert app.notices == [f"the replay could not be completed: {why}"], app.notices


def unended_steps_trial(task, runs, tmp_path):
    """A multi-step trial Harbor has not ended (no result.json), its ended copy elsewhere, and the app on its steps."""
    steps = 'version = "1.0"\n\n[[steps]]\nname = "first"\n\n[[steps]]\nname = "second"\n'
    demo = task(verifier="def verify(workspace):\n    return 1.0\n", toml=steps)
    run = sandbox_run(demo, tmp_path / "sandbox")
    both = [
        {"name": name, "rewards": {"reward": 1.0}, "verifier_files": run.files, "app": {}}
        for name in ("first", "second")
    ]
    ended = make_trial(tmp_path / "k" / "demo__aaaaaaa", task=demo, mode=None, steps=both)
    trial = make_trial(runs / "jobs" / "j" / "demo__aaaaaaa", task=demo, mode=None, steps=both, result="missing")
    return ended, trial, make_trial_app(trial)


async def test_r_on_the_steps_of_a_trial_harbor_had_not_ended_reads_it_again(task, runs, tmp_path):
    """A multi-step trial's steps list had no r while a single step's screen had one: a trial opened
    while Harbor ran it stayed "not finished" there for good. The list now offers r (footer, help)
    while Harbor has not ended the trial, and reads its folder again as the trial's screen does."""
    ended, trial, app = unended_steps_trial(task, runs, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "r read again" in footer_promises(app.screen), footer_promises(app.screen)
        await pilot.press("question_mark")
        assert "Read the trial again" in str(app.screen.query_one("#help-text").content)
        await pilot.press("escape", "r")
        await until(pilot, lambda: app.notices, "r said what it read")
        assert app.notices[-1] == "the trial read again: Harbor has not ended it yet", app.notices
        shutil.copy2(ended / "result.json", trial / "result.json")  # Harbor ends the trial
        await pilot.press("r")
        await until(pilot, lambda: len(app.notices) == 2, "r said it again")
        assert app.notices[-1] == "the trial read again: Harbor has ended it since", app.notices
        text = screen_text(app)
        assert "✓ step first   1.0" in text and "✓ step second  1.0" in text, text
        assert "r read again" not in footer_promises(app.screen)  # ended: nothing more to read
        await pilot.press("down", "enter")  # the step opens as read again: ended, scored
        await app.wait_for_replays(1)
        assert "not finished" not in text_of(app, "#root-cause")


async def test_the_steps_show_the_trial_a_steps_screen_read_again(task, runs, tmp_path):
    """r on a step's screen read the trial again ("Harbor has ended it since"), but esc went back to
    a list of the trial as first read: "not finished", "0 of 2 scored", r offered, and the other step
    opened the old trial. The list now shows what the step's screen read."""
    ended, trial, app = unended_steps_trial(task, runs, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "0 of 2 scored" in screen_text(app)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, TrialScreen), "the first step opened")
        shutil.copy2(ended / "result.json", trial / "result.json")  # Harbor ends the trial
        await pilot.press("r")
        await until(pilot, lambda: app.notices, "r said what it read")
        assert app.notices[-1] == "the trial read again: Harbor has ended it since", app.notices
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, TrialScreen), "back on the steps")
        text = screen_text(app)
        assert "2 of 2 scored" in text and "✓ step first   1.0" in text and "✓ step second  1.0" in text, text
        assert "r read again" not in footer_promises(app.screen)
        await pilot.press("down", "enter")  # the other step opens as read again: ended, scored
        await until(pilot, lambda: isinstance(app.screen, TrialScreen), "the second step opened")
        await app.wait_for_replays(1)
        assert "not finished" not in text_of(app, "#root-cause")


async def test_r_on_the_steps_refuses_a_trial_folder_replaced_and_says_an_unreadable_result(task, runs, tmp_path):
    """The steps list's r refuses what the trial screen's refuses, in the same words: a trial folder
    replaced by a link (or another folder) keeps what the list showed; a result.json that cannot be
    read says whether Harbor ended the trial cannot be told."""
    ended, trial, app = unended_steps_trial(task, runs, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        before = screen_text(app)
        moved = trial.with_name("demo__moved")
        trial.rename(moved)
        trial.symlink_to(ended)
        await pilot.press("r")
        await until(pilot, lambda: app.notices, "r refused")
        assert app.notices[-1] == "r: cannot read the trial again: demo__aaaaaaa is now a link", app.notices
        trial.unlink()
        shutil.copytree(moved, trial)  # a folder of its own at the trial's path
        await pilot.press("r")
        await until(pilot, lambda: len(app.notices) == 2, "r refused again")
        assert app.notices[-1] == (
            "r: cannot read the trial again: demo__aaaaaaa is another folder now (replaced since it was read)"
        ), app.notices
        assert screen_text(app) == before
    ended, trial, app = unended_steps_trial(task, runs, tmp_path / "again")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        (trial / "result.json").symlink_to(ended / "result.json")
        await pilot.press("r")
        await until(pilot, lambda: app.notices, "r said what it read")
        said = "the trial read again: whether Harbor has ended it cannot be told: result.json is a link to "
        assert app.notices[-1].startswith(said) and app.notices[-1].endswith(": not read here"), app.notices
