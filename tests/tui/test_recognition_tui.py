"""The TUI on real tasks as they are found: a parameterized task's
rows in the task-data chooser, R for the task's own runner, and the tool's
checks (stdlib shadowing, a coroutine never awaited, a missing module, an
interpreter the shim refuses) where the user looks for them. The real app,
watched through its messages and what it shows."""

from __future__ import annotations

from tests.helpers.tasks import make_task, python_or_skip, write
from tests.tui.app_under_test import SIZE, footer_promises, make_app, screen_text, wait_for, widget_text
from verifier_tui.engine.model import Outcome
from verifier_tui.tui.screens.choose_list import ChooseListScreen

OWN_RUNNER = """\
import os, sys
args = sys.argv[1:]
open(os.path.join(args[args.index("--reward-dir") + 1], "reward.txt"), "w").write("0.25")
"""


async def test_t_offers_each_row_of_tasks_jsonl(example):
    app = make_app(example("greeting-rows"), watch=False)  # first case: ada, which uses the row ada
    async with app.run_test(size=SIZE) as pilot:
        first = await app.wait_for_runs(1)
        assert (first.inputs.task_id, first.verdict.rewards) == ("ada", {"reward": 1.0})
        await pilot.pause()
        assert "row ada of greeting-rows/tasks.jsonl" in widget_text(app, "#choices")
        await pilot.press("t")
        assert isinstance(app.screen, ChooseListScreen)
        await pilot.press("down", "enter")  # the case's row -> "a row of tasks.jsonl (3 task rows)…"
        await pilot.pause()
        assert isinstance(app.screen, ChooseListScreen)
        rows = screen_text(app)
        assert "ada" in rows and "grace" in rows and '{"greeting": "Hey", "name": "Lin"}' in rows
        await pilot.press("down", "enter")  # ada (current) -> grace
        result = await app.wait_for_runs(2)
        assert (result.inputs.task_id, result.trigger) == ("grace", "task row chosen")
        assert result.verdict.rewards == {"reward": 0.0}  # the workspace greets Ada, the row Grace
        await pilot.pause()
        assert "row grace of greeting-rows/tasks.jsonl" in widget_text(app, "#choices")
        assert "(inputs changed)" in widget_text(app, "#header")


async def test_a_case_without_a_row_says_so_on_screen(example):
    app = make_app(example("greeting-rows"), watch=False, case="no-row")
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.pause()
        assert "no task data: the task is parameterized" in widget_text(app, "#resolution-body")


async def test_r_shift_runs_the_tasks_own_runner_and_back(tmp_path):
    root = make_task(tmp_path / "tasks" / "published")
    write(root / "tests" / ".ng" / "run_verifier.py", OWN_RUNNER)
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        first = await app.wait_for_runs(1)
        assert first.verdict.rewards == {"reward": 1.0}
        await pilot.pause()
        assert "our runner (the task's differs) R" in widget_text(app, "#header")
        resolution = widget_text(app, "#resolution-body")
        assert "R runs the task's own" in resolution and "--runner" not in resolution  # the key, not the flag
        assert "R runner" not in screen_text(app).splitlines()[-1]  # the header offers it (the footer is full)
        assert "Toggle runner  (R)" in [c.title for c in app.get_system_commands(app.main)]
        await pilot.press("R")
        second = await app.wait_for_runs(2)
        assert second.verdict.rewards == {"reward": 0.25}
        await pilot.pause()
        assert "task's own runner R" in widget_text(app, "#header")
        assert "does not report its resolution (R runs ours" in widget_text(app, "#resolution-body")
        await pilot.press("R")
        third = await app.wait_for_runs(3)
        assert third.verdict.rewards == {"reward": 1.0}


async def test_at_100_columns_the_footer_of_a_task_with_its_own_runner_shows_every_key_down_to_q(tmp_path):
    # A task that ships its own runner (every Harbor task made with the NeMo Gym tooling): at 100 columns,
    # the smallest the screen draws in, the footer ended "o stdout R runner": q quit, its last key, unseen.
    root = make_task(tmp_path / "tasks" / "published")
    write(root / "tests" / ".ng" / "run_verifier.py", OWN_RUNNER)
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE):
        await app.wait_for_runs(1)
        promised = footer_promises(app.main)
        assert "o stdout" in promised and promised[-1] == "q quit", promised  # a run on screen: its keys too
        await wait_for(
            lambda: all(word in screen_text(app).splitlines()[-1] for word in promised), f"the footer shows {promised}"
        )
        assert "our runner (the task's differs) R" in widget_text(app, "#header")  # R, by what it changes


async def test_r_shift_is_not_offered_without_a_runner_of_the_tasks_own(example):
    app = make_app(example("hello-file"), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("R")
        await pilot.pause()
        assert len(app.finished) == 1 and app.session.runner == "ours"
        assert "R runner" not in screen_text(app).splitlines()[-1]
        assert not any("(R)" in c.title for c in app.get_system_commands(app.main))
        assert " R" not in widget_text(app, "#header")


async def test_the_help_lists_r_shift_as_the_footer_and_the_palette_do(tmp_path, example):
    """The help's keys are the screen's, as it offers them: R for a task that ships its own runner only."""
    own = make_task(tmp_path / "tasks" / "published")
    write(own / "tests" / ".ng" / "run_verifier.py", OWN_RUNNER)
    for root, offered in ((own, True), (example("hello-file"), False)):
        app = make_app(root, watch=False)
        async with app.run_test(size=(120, 60)) as pilot:
            await app.wait_for_runs(1)
            await pilot.press("question_mark")
            await pilot.pause()
            shown = app.screen.query_one("#help-text").content.plain
            assert ("  R      Toggle runner: " in shown) is offered, root


async def test_shadowing_a_standard_library_module_is_flagged_in_the_resolution(tmp_path):
    root = make_task(
        tmp_path / "tasks" / "shadow",
        "import statistics\n\ndef verify(workspace):\n    return statistics.mean([1.0])\n",
        files={"statistics.py": ""},
    )
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        result = await app.wait_for_runs(1)
        assert result.outcome is Outcome.VERIFIER_RAISED
        await pilot.pause()
        text = widget_text(app, "#resolution-body")
        assert "⚠ shadow/tests/statistics.py shadows the standard library's statistics" in text


async def test_a_coroutine_never_awaited_and_a_missing_module_in_the_reward_panel(tmp_path):
    root = make_task(
        tmp_path / "tasks" / "unawaited",
        (
            "import gc\n\nasync def check():\n    return 1.0\n\n"
            "def verify(workspace):\n    check()\n    gc.collect()\n    return 0.0\n"
        ),
    )
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.pause()
        assert "⚠ coroutine 'check' was never awaited" in widget_text(app, "#reward-body")
    root = make_task(
        tmp_path / "tasks" / "needs-package", "import vtui_absent\n\ndef verify(workspace):\n    return 1.0\n"
    )
    write(root / "tests" / "requirements.txt", "vtui-absent==2\n")
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.pause()
        text = widget_text(app, "#reward-body")
        assert "the verifier imports vtui_absent" in text and "tests/requirements.txt:1" in text


async def refused_by_test_sh(app) -> str:
    """The reward panel of ``app``'s first run, which test.sh refused."""
    async with app.run_test(size=SIZE) as pilot:
        result = await app.wait_for_runs(1)
        assert result.outcome is Outcome.REFUSED_BY_SHIM
        await pilot.pause()
        text = widget_text(app, "#reward-body")
        assert "exit 127 · refused by test.sh" in text and "RewardFileNotFoundError" in text
        return text


async def test_an_interpreter_the_shim_refuses(tmp_path):
    await refused_by_test_sh(make_app(make_task(tmp_path / "tasks" / "old"), watch=False, python=python_or_skip("3.7")))


async def test_a_plain_harbor_task_without_a_verifier_says_what_it_is(tmp_path):
    root = make_task(
        tmp_path / "tasks" / "pytest-task",
        None,
        shim=False,
        files={
            "test.sh": "#!/bin/bash\npytest /tests/test_outputs.py\n",
            "test_outputs.py": "def test_x():\n    assert True\n",
        },
    )
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.pause()
        text = " ".join(widget_text(app, "#resolution-body").split())
        assert "pytest-task is a plain Harbor task: Harbor runs its tests/test.sh" in text
        assert "move the checks into tests/verifier.py (def verify(workspace): ...) and run verifier-tui vendor" in text
        assert "no verifier found" not in text


async def test_the_header_names_the_task_by_its_task_toml_name(tmp_path):
    root = make_task(tmp_path / "tasks" / "folder-name", toml='version = "1.0"\n[task]\nname = "acme/scorer"\n')
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.pause()
        assert "acme/scorer" in widget_text(app, "#header")


async def test_a_crlf_test_sh_is_never_started(tmp_path):
    """A test.sh saved with CRLF endings, which the sandbox never starts (its #! line names
    `bash\\r`): the reward panel showed reward 1.0 from a runner started without it."""
    root = make_task(tmp_path / "tasks" / "crlf")
    shim = root / "tests" / "test.sh"
    shim.write_bytes(shim.read_bytes().replace(b"\n", b"\r\n"))
    text = await refused_by_test_sh(make_app(root, watch=False))
    assert "tests/test.sh has CRLF line endings" in text and "save it with LF endings" in text, text


async def test_a_crlf_test_sh_bash_runs_is_refused_on_screen(tmp_path):
    """A CRLF test.sh the kernel starts (`#!/bin/bash -e\\r`: bash stops, Harbor finds no reward): the
    reward panel showed the runner's 1.0. It says the run was refused, and why, in one line."""
    root = make_task(tmp_path / "tasks" / "crlf")
    shim = root / "tests" / "test.sh"
    shim.write_bytes(b"#!/bin/bash -e\r\n" + shim.read_bytes().split(b"\n", 1)[1].replace(b"\n", b"\r\n"))
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        result = await app.wait_for_runs(1)
        assert result is not None and result.verdict.rewards is None, result
        await pilot.pause()
        text = widget_text(app, "#reward-body")
        assert "tests/test.sh has CRLF line endings, which bash reads" in " ".join(text.split()), text
