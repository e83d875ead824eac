"""Words on the screen: one legend for the marks, shown by ``?``;
one unit style; one name per mode; the contract problem said once; the keys
the TUI user has, never a command-line flag they never typed; and what a
``breakpoint()`` in the verifier needs."""

from __future__ import annotations

import re

import pytest

from tests.helpers.commands import run_tool
from tests.helpers.tasks import PY, make_task
from tests.tui.app_under_test import SIZE, make_app, screen_text, wait_for, widget_text
from verifier_tui.engine.model import Outcome

CONTRACT = "verify requires 'response' without a default"


async def test_question_mark_shows_every_mark_of_the_legend_and_every_key(example):
    from verifier_tui.tui.screens.help import HelpScreen
    from verifier_tui.words.run import LEGEND

    app = make_app(example("hello-file"), watch=False)
    async with app.run_test(size=(120, 60)) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = screen_text(app)
        for _title, marks in LEGEND:
            for mark, meaning in marks:
                assert re.search(rf"{re.escape(mark)}\s+{re.escape(meaning)}", text), (mark, meaning)
        everything = app.screen.query_one("#help-text").content.plain  # scrolled: the keys come after the marks
        for key in ("r", "w", "m", "b", "a", "s", "v", "f", "p", "t", "e", "d", "c", "o", "?", "q", "esc", "ctrl+p"):
            assert re.search(rf"^  {re.escape(key)} +[A-Z]", everything, re.M), key
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)
        assert "Help: keys and marks  (?)" in [c.title for c in app.get_system_commands(app.main)]


async def test_the_help_says_how_to_reach_the_history_and_pick_a_run_there(example):
    """The help named esc "after picking a run in the history", but none of its keys said how to
    reach the history or pick a run in it: a user at the keyboard found no way to an older run.
    It says tab (in the order focus goes) and enter, and they do what it says."""
    from verifier_tui.tui.screens.help import HelpScreen

    app = make_app(example("hello-file"), watch=False)
    async with app.run_test(size=(120, 60)) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("r")
        await app.wait_for_runs(2)
        await pilot.press("question_mark")
        await wait_for(lambda: isinstance(app.screen, HelpScreen), "the help")
        said = " ".join(app.screen.query_one("#help-text").content.plain.split())
        assert "tab Move between the cases, the resolution, the history, the reward and the output" in said, said
        assert "enter on a case runs it, on a run in the history shows it (esc: back to the latest)" in said, said
        await pilot.press("escape")
        await wait_for(lambda: app.screen is app.main, "the help closed")
        await pilot.press("tab", "tab", "down", "enter")  # from the cases: the resolution, then the history
        await pilot.pause()
        assert app.main.viewing is not None and app.main.viewing.sequence == 1


async def test_a_raising_case_with_expected_json_is_marked_by_it_as_the_legend_says(example):
    """missing-file raises, as its expected.json says it should: ✓ (passed), not ! (no reward)."""
    app = make_app(example("hello-file"), case="missing-file", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        result = await app.wait_for_runs(1)
        await pilot.pause()
        assert result.outcome is Outcome.VERIFIER_RAISED
        assert re.search(r"✓ missing-file", screen_text(app))
        await pilot.press("question_mark")
        await pilot.pause()
        assert "✓  passed: the run matches the case's expected.json" in screen_text(app)


async def test_durations_and_timeouts_are_in_one_unit_style(tmp_path):
    slow = "import time\ndef verify(workspace):\n    time.sleep(30)\n    return 1.0\n"
    root = make_task(tmp_path / "tasks" / "sleepy", slow, timeout=1)
    app = make_app(root, watch=False, deterministic=False)
    async with app.run_test(size=SIZE) as pilot:
        result = await app.wait_for_runs(1, timeout=30)
        await pilot.pause()
        assert result.outcome is Outcome.TIMED_OUT
        reward = widget_text(app, "#reward-body")
        # "timed out after 1 s · 1.02 s", never "· 1020 ms" beside a timeout in seconds
        assert re.search(r"timed out after 1 s · \d+(\.\d+)? s\n", reward), reward
        assert re.search(r"timed out · \d+(\.\d+)? s ·", widget_text(app, "#status"))


async def test_each_mode_has_one_name_everywhere_on_screen(example):
    app = make_app(example("count-errors"), case="response-json", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.pause()
        assert "environment-server mode m" in widget_text(app, "#header")
        palette = {c.title: c.help for c in app.get_system_commands(app.main)}
        assert "Harbor mode" in palette["Toggle mode  (m)"]
        assert "environment-server mode" in palette["Toggle mode  (m)"]
        await pilot.press("m")
        await app.wait_for_runs(2)
        await pilot.pause()
        assert "Harbor mode m" in widget_text(app, "#header")
        assert "(environment-server mode)" in widget_text(app, "#resolution-body")
        await pilot.press("b")
        for _ in range(200):  # both runs end on screen as one verdict, not as RunFinished messages
            await pilot.pause(0.1)
            if "both modes:" in widget_text(app, "#reward-body"):
                break
        verdict = widget_text(app, "#reward-body")
        assert "environment-server mode ✓" in verdict and "Harbor mode ✗" in verdict
        for other in ("server mode (response)", "environment server (with", "(environment server)"):
            assert other not in screen_text(app)


async def test_the_contract_problem_is_said_once_and_names_keys_not_flags(example):
    app = make_app(example("count-errors"), case="harbor-mode", watch=False)
    async with app.run_test(size=(160, 50)) as pilot:
        result = await app.wait_for_runs(1)
        await pilot.pause()
        assert result.outcome is Outcome.CONTRACT_ERROR
        resolution = widget_text(app, "#resolution-body")
        reward = widget_text(app, "#reward-body")
        # The tool's own words: once, under Resolution (stderr shows what the runner printed).
        assert resolution.count(CONTRACT) == 1
        assert CONTRACT not in reward and "the contract problem is under Resolution" in reward
        # The TUI user never typed --response: the screen names the mode key instead.
        assert "--response" not in resolution and "--response" not in reward
        assert "this run has no response" in resolution and "press m" in resolution


async def test_a_verify_that_yields_is_not_said_refused(tmp_path):
    """The runner calls a verify that yields, and refuses what it returns: its
    explanation's problem says so, and the reward panel must not say "the runner
    refused to call verify", but why the run failed."""
    task_dir = make_task(tmp_path / "t", "def verify(workspace):\n    yield 1.0\n")
    app = make_app(task_dir, watch=False)
    async with app.run_test(size=(160, 50)) as pilot:
        result = await app.wait_for_runs(1)
        await pilot.pause()
        assert result.outcome is Outcome.CONTRACT_ERROR
        assert "verify yields: calling it returns a generator" in widget_text(app, "#resolution-body")
        reward = widget_text(app, "#reward-body")
        assert "refused to call verify" not in reward and "verify returned <generator" in reward, reward


async def test_a_run_killed_past_memory_mb_is_not_said_killed_by_something_unknown(tmp_path):
    """Under the note that the OOM killer ended the runner past memory_mb, the reward panel
    went on: "something outside the runner ended it", as if the cause were unknown."""
    task = make_task(
        tmp_path / "t",
        "def verify(workspace):\n    blob = bytearray(400 << 20)\n    return 1.0\n",
        toml='version = "1.0"\n[environment]\nmemory_mb = 128\n',
    )
    app = make_app(task, watch=False)
    async with app.run_test(size=(160, 50)) as pilot:
        result = await app.wait_for_runs(1)
        await pilot.pause()
        assert result.outcome is Outcome.KILLED and result.out_of_memory
        reward = " ".join(widget_text(app, "#reward-body").split())
        assert "out of memory" in reward and "something outside the runner" not in reward, reward


async def test_breakpoint_in_the_verifier_points_to_d(tmp_path):
    root = make_task(tmp_path / "tasks" / "stops", "def verify(workspace):\n    breakpoint()\n    return 1.0\n")
    app = make_app(root, watch=False)
    async with app.run_test(size=(160, 50)) as pilot:
        result = await app.wait_for_runs(1)
        await pilot.pause()
        assert result.outcome is Outcome.VERIFIER_RAISED
        reward = " ".join(widget_text(app, "#reward-body").split())
        assert "bdb.BdbQuit" in reward and "press d: it runs the verifier under pdb in your terminal" in reward
        assert "verifier-tui TASK" not in reward


async def test_an_action_is_the_option_on_the_command_line_and_the_key_on_screen(env, tmp_path):
    """One run's advice in both faces: ``run`` names the option to give, the
    TUI the key that does the same (its user typed no option)."""
    root = make_task(tmp_path / "tasks" / "rows", "def verify(workspace):\n    breakpoint()\n    return 1.0\n")
    (root / "tasks.jsonl").write_text('{"task_id": "ada"}\n{"task_id": "lin"}\n', encoding="utf-8")
    done = run_tool(env, "run", root, "--python", PY)
    assert (
        "so verify gets task_data = {}; choose one with --task-id ID (t in the TUI; task ids: ada, lin)" in done.stdout
    )
    assert "To step through it, open the task in the TUI (verifier-tui TASK) and press d: it runs" in done.stdout
    app = make_app(root, watch=False)
    async with app.run_test(size=(160, 50)) as pilot:
        await app.wait_for_runs(1)
        await pilot.pause()
        resolution = " ".join(widget_text(app, "#resolution-body").split())
        reward = " ".join(widget_text(app, "#reward-body").split())
    assert "so verify gets task_data = {}; choose one with t (task ids: ada, lin)" in resolution
    assert "To step through it, press d: it runs" in reward
    assert "--task-id" not in resolution + reward and "verifier-tui TASK" not in resolution + reward


def test_the_main_screen_words_every_kind_of_action_the_engine_suggests():
    """Each kind of action the engine's advice may name is said by the main
    screen on purpose (its key, or the flag to start it again with). Kinds
    added after the table (the interpreter to choose when nemo_gym is missing,
    a newer one than test.sh refuses, the editor, a verifier to choose) fell
    back to the command line's words, "choose another with --python", as if
    the screen took it; and four kinds said "--python" for one option."""
    from verifier_tui.engine import advice
    from verifier_tui.tui.display import KEY_WORDS

    kinds = [value.kind for value in vars(advice).values() if isinstance(value, advice.Action)]
    assert len(kinds) == len(set(kinds)), "two actions of one kind"
    flags = [value.flag for value in vars(advice).values() if isinstance(value, advice.Action) and value.flag]
    assert len(flags) == len(set(flags)), "one option said by two kinds"
    assert sorted(KEY_WORDS) == sorted(kinds)


async def test_a_workspace_over_the_interpreters_folder_says_what_the_tui_user_does(tmp_path):
    """A test.sh passing --workspace over the folder the chosen interpreter
    lives in: the run cannot start, and the screen said to choose another
    interpreter "(--python)", a flag its user never typed and cannot give it
    now: it says to start verifier-tui again with one."""
    import sys
    from pathlib import Path

    from tests.helpers.processes import needs_namespaces

    needs_namespaces()
    home = str(Path(sys.base_prefix).parent)
    task_dir = make_task(tmp_path / "t", "def verify(workspace):\n    return 1.0\n", cases={"only": {}})
    shim = task_dir / "tests" / "test.sh"
    shim.write_text(shim.read_text().replace("--workspace /app", f"--workspace {home}"))
    app = make_app(task_dir, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        result = await app.wait_for_runs(1)
        assert result.outcome is Outcome.COULD_NOT_START, result.outcome_words
        await pilot.pause()
        text = widget_text(app, "#reward-body") + widget_text(app, "#resolution-body")
        assert "which holds the chosen interpreter's folder" in text, text
        said = "choose an interpreter that lives elsewhere: start verifier-tui again with --python EXE"
        assert "(--python)" not in text and said in text, text


async def test_a_module_the_interpreter_lacks_says_start_verifier_tui_again_once(tmp_path):
    """A verifier importing a package the task installs but the interpreter
    lacks: the advice read "Run with an interpreter that has it: --python EXE
    (start verifier-tui again with it) (for example ...)": the restart said
    twice in one sentence."""
    verifier = "import yamlish\n\ndef verify(workspace):\n    return 1.0\n"
    task_dir = make_task(tmp_path / "t", verifier, cases={"only": {}})
    (task_dir / "environment").mkdir(exist_ok=True)
    (task_dir / "environment" / "Dockerfile").write_text("FROM python:3.12\nRUN pip install yamlish\n")
    app = make_app(task_dir, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.pause()
        text = " ".join((widget_text(app, "#reward-body") + widget_text(app, "#resolution-body")).split())
        said = (
            "Run with an interpreter that has it: start verifier-tui again with --python EXE (for example a "
            "virtual environment's bin/python where you installed it)"
        )
        assert said in text, text
        assert text.count("start verifier-tui again") == 1, text


async def test_a_multi_line_import_error_is_one_line_in_the_panel(tmp_path):
    """``raise ValueError('first\\nsecond')`` at import: the panel's line
    ``the module raised while being imported: ValueError: first`` was split,
    ``second`` a line of its own; faults.md says the TUI keeps it on one line,
    as explain does."""
    verifier = "raise ValueError('first\\nsecond')\n\ndef verify(workspace):\n    return 1.0\n"
    task_dir = make_task(tmp_path / "t", verifier, cases={"only": {}})
    app = make_app(task_dir, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.pause()
        text = widget_text(app, "#resolution-body")
        assert "the module raised while being imported: ValueError: first\\nsecond" in text, text
        assert not any(line.strip() == "second" for line in text.splitlines()), text


async def test_a_multi_step_task_says_its_steps_and_step_runs_the_one_given(tmp_path):
    """Harbor's own multi-step task: without --step the screen says that Harbor verifies each
    step otherwise than this run; `verifier-tui TASK --step second` runs that step's own verifier."""
    import shutil

    from tests.helpers.harbor import HARBOR_REAL

    if HARBOR_REAL is None:
        pytest.skip("../shared/harbor-0.26 is not here")
    root = tmp_path / "tasks" / "multi-step"
    shutil.copytree(HARBOR_REAL / "tasks" / "multi-step", root, symlinks=True)
    (root / "steps" / "second" / "tests").mkdir()
    (root / "steps" / "second" / "tests" / "verifier.py").write_text("def verify(workspace):\n    return 0.5\n")
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1, timeout=30)
        await pilot.pause()
        assert any("[[steps]]: first, second" in note for note in app.main.session.notices())
        said = " ".join(screen_text(app).split())
        assert "a multi-step task" in said, said
    app = make_app(root, watch=False, step="second")
    async with app.run_test(size=SIZE) as pilot:
        result = await app.wait_for_runs(1, timeout=30)
        await pilot.pause()
        assert result is not None and result.verdict.rewards == {"reward": 0.5}
        assert "multi-step · step second S · verifier multi-step/steps/second/tests/verifier.py" in widget_text(
            app, "#header"
        )
        assert "a multi-step task" not in " ".join(screen_text(app).split())


async def test_under_step_the_resolution_panel_says_the_step_s_tests_are_laid_over_tests(tmp_path):
    """--step NAME: sys.path's '/tests' row read 'verifier's folder + tests
    folder  TASK/tests', though the verifier and the helper it imported came
    from steps/NAME/tests, laid over tests/ in /tests as Harbor uploads it."""
    toml = '[[steps]]\nname = "first"\n\n[[steps]]\nname = "second"\n'
    root = make_task(tmp_path / "tasks" / "ms", "def verify(workspace):\n    return 0.0\n", toml=toml)
    own = root / "steps" / "second" / "tests"
    own.mkdir(parents=True)
    (own / "helper.py").write_text("WANT = 1.0\n")
    (own / "verifier.py").write_text("from helper import WANT\n\ndef verify(workspace):\n    return WANT\n")
    app = make_app(root, watch=False, step="second")
    async with app.run_test(size=SIZE) as pilot:
        result = await app.wait_for_runs(1, timeout=30)
        await pilot.pause()
        assert result is not None and result.verdict.rewards == {"reward": 1.0}
        said = " ".join(widget_text(app, "#resolution-body").split())
    assert "tests folder ms/tests with ms/steps/second/tests laid over it" in said, said
