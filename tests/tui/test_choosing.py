"""Choosing a case, a verifier, a workspace, a response and task data; toggling mode."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import pytest
from textual import events
from textual.widgets import Input, OptionList

from tests.helpers.tasks import make_task
from tests.tui.app_under_test import SIZE, history_text, make_app, report_change, screen_text, wait_for, widget_text
from verifier_tui.engine.model import Outcome
from verifier_tui.tui import base
from verifier_tui.tui.screens.choose_list import ChooseListScreen
from verifier_tui.tui.screens.picker import PickerScreen
from verifier_tui.tui.screens.response_editor import ResponseEditorScreen
from verifier_tui.words.paths import path_from


async def test_enter_in_the_cases_list_chooses_and_runs(example):
    app = make_app(example("hello-file"), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("down", "enter")  # the list has focus; correct -> missing-file
        result = await app.wait_for_runs(2)
        assert result.inputs.case == "missing-file" and result.trigger == "case chosen"
        assert result.outcome is Outcome.VERIFIER_RAISED
        await pilot.pause()
        assert "case missing-file" in widget_text(app, "#header")
        cases = screen_text(app)
        assert "✓ correct 1" in cases and "✓ missing-file" in cases


async def test_s_opens_the_case_chooser(example):
    app = make_app(example("hello-file"), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("s")
        assert isinstance(app.screen, ChooseListScreen)
        await pilot.press("down", "down", "enter")  # correct -> missing-file -> wrong-case
        result = await app.wait_for_runs(2)
        assert result.inputs.case == "wrong-case"
        assert result.verdict.rewards == {"reward": 0.0}
        assert app.session.case.name == "wrong-case"


async def test_a_case_chosen_with_s_is_shown_and_highlighted_in_the_cases_list(tmp_path):
    """Forty cases, the last chosen with s: the cases list stayed at the top,
    its cursor on the first case, so the case running was nowhere in it and
    enter there ran another."""
    cases = {f"case{n:02}": {} for n in range(40)}
    app = make_app(make_task(tmp_path / "tasks" / "many", cases=cases), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("s")
        assert isinstance(app.screen, ChooseListScreen)
        await pilot.press("end", "up", "enter")  # the last case (below it: "no case")
        result = await app.wait_for_runs(2)
        assert result.inputs.case == "case39"
        await pilot.pause()
        listed = app.main.query_one("#cases", OptionList)
        assert listed.highlighted == 39
        top = listed.scroll_offset.y
        assert top <= 39 < top + listed.scrollable_content_region.height, (top, listed.scrollable_content_region)


async def test_the_cases_list_and_the_chooser_are_in_the_order_a_user_counts(tmp_path):
    """Cases c1, c2, c10: the list and ``s`` offered them as text sorts
    (c1, c10, c2), the case a user counts as second shown third."""
    app = make_app(make_task(tmp_path / "t", cases={name: {} for name in ("c10", "c2", "c1")}), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        listed = app.main.query_one("#cases", OptionList)
        assert [listed.get_option_at_index(i).id for i in range(listed.option_count)] == ["c1", "c2", "c10"]
        await pilot.press("s")
        assert isinstance(app.screen, ChooseListScreen)
        offered = app.screen.query_one(OptionList)
        ids = [offered.get_option_at_index(i).id for i in range(offered.option_count)]
        assert [i for i in ids if i in ("c1", "c2", "c10")] == ["c1", "c2", "c10"], ids


async def test_escape_leaves_the_choice_alone(example):
    app = make_app(example("hello-file"), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("s", "down", "escape")
        await pilot.pause()
        assert app.screen is app.main
        assert app.session.case.name == "correct"
        assert len(app.finished) == 1


async def test_choose_among_several_verifiers(tmp_path):
    root = make_task(tmp_path / "tasks" / "two", "def verify(workspace):\n    return 1.0\n")
    (root / "tests" / "strict_verifier.py").write_text("def verify(workspace):\n    return 0.5\n")
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        first = await app.wait_for_runs(1)
        assert first.inputs.verifier.name == "verifier.py"
        await pilot.press("v")
        assert isinstance(app.screen, ChooseListScreen)
        await pilot.press("down", "enter")
        result = await app.wait_for_runs(2)
        assert result.inputs.verifier.name == "strict_verifier.py"
        assert result.verdict.rewards == {"reward": 0.5}
        await pilot.pause()
        assert "tests/strict_verifier.py" in widget_text(app, "#header")


async def test_the_history_compares_a_run_only_with_runs_of_the_same_verifier(tmp_path):
    """verifier.py (1), then v: strict_verifier.py (0.5): the history marked run #2 ▼,
    as if an edit had cost half the reward, where another verifier ran. The first run
    of a verifier has no mark; back on verifier.py, the run is compared with #1."""
    root = make_task(tmp_path / "tasks" / "two", "def verify(workspace):\n    return 1.0\n")
    (root / "tests" / "strict_verifier.py").write_text("def verify(workspace):\n    return 0.5\n")
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("v", "down", "enter")
        await app.wait_for_runs(2)
        await pilot.press("v", "up", "enter")
        await app.wait_for_runs(3)
        await pilot.pause()
        history = app.main.query_one("#history", OptionList)
        rows = [" ".join(str(history.get_option_at_index(i).prompt).split()) for i in range(3)]
        assert rows[1].startswith("#2") and not any(mark in rows[1] for mark in "▲▼≠="), rows
        assert rows[0].startswith("#3") and "1 =" in rows[0], rows


async def test_choose_verifier_from_another_file(tmp_path):
    root = make_task(tmp_path / "tasks" / "other", "def verify(workspace):\n    return 1.0\n")
    elsewhere = tmp_path / "elsewhere.py"
    elsewhere.write_text("async def verify(workspace, task_data):\n    return 0.25\n")
    not_a_verifier = tmp_path / "nothing.py"
    not_a_verifier.write_text("x = 1\n")
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("v", "down", "enter")  # "another .py file…"
        assert isinstance(app.screen, PickerScreen) and not app.screen.folders
        box = app.screen.query_one("#path", Input)
        box.value = str(not_a_verifier)
        box.focus()
        await pilot.press("enter")
        await pilot.pause()
        # Refused with a readable message in the picker, which stays open; the old verifier stays.
        # It named "--verifier", an option the TUI's user never typed.
        said = str(app.screen.query_one("#picker-error").content)
        assert "nothing.py: not a verifier (a .py file defining verify)" in said, said
        assert "--verifier" not in said, said
        assert isinstance(app.screen, PickerScreen) and app.session.verifier.name == "verifier.py"
        box.value = str(elsewhere)
        box.focus()
        await pilot.press("enter")
        result = await app.wait_for_runs(2)
        assert result.inputs.verifier == elsewhere and result.verdict.rewards == {"reward": 0.25}


async def _typed_in_the_folder_box(app, pilot, typed: str) -> None:
    """f, ``typed`` in the picker's box, and enter."""
    await pilot.press("f")
    assert isinstance(app.screen, PickerScreen) and app.screen.folders
    box = app.screen.query_one("#path", Input)
    box.value = typed
    box.focus()
    await pilot.press("enter")
    await pilot.pause()


async def test_an_emptied_folder_box_chooses_nothing(example):
    """The workspace box emptied (ctrl+u, backspace) and enter: the folder
    verifier-tui started in became /app, said as `workspace .`, and the verifier
    ran on it (the user's home, say) as if it were typed; a file picker says
    `(empty) is not a file`."""
    app = make_app(example("hello-file"), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await _typed_in_the_folder_box(app, pilot, "  ")
        assert isinstance(app.screen, PickerScreen)  # stays open, says why
        said = str(app.screen.query_one("#picker-error").content)
        assert said.startswith("(empty) is not a folder"), said
        assert len(app.finished) == 1 and app.session.workspace is not None
        assert app.session.workspace.parent.name == "correct"


async def test_choose_workspace_with_the_folder_picker(example):
    root = example("hello-file")
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await _typed_in_the_folder_box(app, pilot, "no/such/folder")
        assert isinstance(app.screen, PickerScreen) and app.screen.folders  # stays open, says why
        assert "is not a folder" in str(app.screen.query_one("#picker-error").content)
        # A folder the session refuses is said here too, with what was typed: it closed the
        # picker, and the keys typed next went to the main screen as its commands.
        box = app.screen.query_one("#path", Input)
        box.value = "/"
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, PickerScreen) and box.value == "/"
        assert "/" in str(app.screen.query_one("#picker-error").content)
        assert len(app.finished) == 1
        box.value = str(root / "cases" / "wrong-text" / "workspace")
        await pilot.press("enter")
        result = await app.wait_for_runs(2)
        assert result.inputs.workspace.parent.name == "wrong-text"
        assert result.trigger == "workspace chosen"
        assert result.verdict.rewards == {"reward": 0.0}
        await pilot.pause()
        assert "cases/wrong-text/workspace" in widget_text(app, "#choices")
        # The case's expected.json is about its own workspace: not applied, and said so.
        assert result.inputs.expected is None
        assert "expected.json is not applied: its workspace is not in use" in widget_text(app, "#reward-body")
        assert "(inputs changed)" in widget_text(app, "#header")


@pytest.mark.parametrize("key", ["a", "A"])
async def test_all_cases_with_a_chosen_workspace_show_the_run_of_the_choices(example, key):
    """With another case's workspace chosen, a (and A) showed the chosen case's own run, "✓ passed"
    and "matches the case's expected.json", under a header and a resolution saying its
    expected.json is not applied: the reward panel shows the run of the workspace chosen, the
    cases list each case's own verdict."""
    root = example("hello-file")
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await _typed_in_the_folder_box(app, pilot, str(root / "cases" / "wrong-text" / "workspace"))
        await app.wait_for_runs(2)
        await pilot.press(key)
        await app.wait_for_runs(2 + len(app.session.task.cases))
        scheduler = app.controller.live.scheduler
        await wait_for(lambda: not (scheduler.busy or scheduler.pending), "the batch over")
        await pilot.pause()
        shown = app.main.latest
        assert shown.inputs.workspace.parent.name == "wrong-text" and shown.inputs.expected is None
        reward = widget_text(app, "#reward-body")
        assert "expected.json is not applied: its workspace is not in use" in reward, reward
        assert "passed" not in reward and '{"reward": 0.0}' in reward, reward
        assert "(inputs changed)" in widget_text(app, "#header")
        assert "✓ correct 1" in screen_text(app)  # the case's own run, as its mark


async def test_the_history_compares_a_run_with_an_earlier_one_of_the_same_inputs(example):
    """a twice with another workspace chosen: the choices' run (reward 0) and the case's own (1)
    alternated in the history, each row marked ▲ or ▼ against the other though no edit changed
    a reward, and both read `correct · after all cases`. A run is compared with the last of the same
    inputs, and a run of a case with other inputs says so, as the header does."""
    root = example("hello-file")
    app = make_app(root, watch=False, case="correct", workspace=root / "cases" / "wrong-text" / "workspace")
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        scheduler = app.controller.live.scheduler
        for batch in (1, 2):
            await pilot.press("a")
            await app.wait_for_runs(1 + batch * (1 + len(app.session.task.cases)))
            await wait_for(lambda: not (scheduler.busy or scheduler.pending), "the batch over")
        await pilot.pause()
        rows = history_text(app)
    assert "▲" not in rows and "▼" not in rows, rows
    assert "#7  • correct 0 =\n inputs changed · after all cases" in rows, rows
    assert "#8  ✓ correct 1 =\n after all cases" in rows, rows


async def test_all_cases_under_no_response_show_the_run_without_one_and_mark_the_cases_own(example):
    """--no-response on a case with a response, then a: the header said "(inputs changed)" and the
    resolution that the case's expected.json is not applied, yet the run shown was judged by it
    ("does not match the case's expected.json"); the cases ran without their responses, marked by
    expectations about runs with them. The case's own inputs are its response too, everywhere."""
    app = make_app(example("count-errors"), watch=False, case="response-json", no_response=True)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("a")
        await app.wait_for_runs(1 + len(app.session.task.cases))
        scheduler = app.controller.live.scheduler
        await wait_for(lambda: not (scheduler.busy or scheduler.pending), "the batch over")
        await pilot.pause()
        shown = app.main.latest
        assert shown.inputs.response is None and shown.inputs.expected is None
        assert "(inputs changed)" in widget_text(app, "#header")
        reward = widget_text(app, "#reward-body")
        assert "expected.json is not applied: its response is not in use" in reward, reward
        assert "match the case's expected.json" not in reward, reward
        cases = screen_text(app)
        assert "✓ response-json" in cases and "✓ response-txt" in cases, cases


async def test_the_folder_pickers_hint_is_read_to_its_end(example):
    """Its hint ran on one line past the dialog's edge, cut at "enter opens a": how to use the
    folder (ctrl+u) and how to cancel (esc) were never on the screen."""
    app = make_app(example("hello-file"), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("f")
        await pilot.pause()
        assert isinstance(app.screen, PickerScreen)
        words = " ".join(screen_text(app).replace("│", " ").split())
        assert "ctrl+u uses it · esc cancels" in words, words


async def test_a_pickers_refusal_is_read_to_its_end(tmp_path):
    """Why a picker refused a path ran on one line past the dialog's edge: a .py file that is no
    verifier was refused as "...; this task has: tests/verifie", the verifiers the user could
    choose instead cut off."""
    root = make_task(tmp_path / "tasks" / "other", "def verify(workspace):\n    return 1.0\n")
    (root / "tests" / "helpers_for_the_scoring_of_answers.py").write_text("x = 1\n")
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("v", "down", "enter")  # "another .py file…"
        assert isinstance(app.screen, PickerScreen)
        box = app.screen.query_one("#path", Input)
        box.value = "other/tests/helpers_for_the_scoring_of_answers.py"
        await pilot.press("enter")
        await pilot.pause()
        said = str(app.screen.query_one("#picker-error").content)
        assert said.endswith("this task has: tests/verifier.py"), said
        words = " ".join(screen_text(app).replace("│", " ").split())
        assert "this task has: tests/verifier.py" in words, words


async def test_the_folder_picker_starts_with_the_path_as_typed_from_where_the_tool_started(example, monkeypatch):
    # f's box held the workspace's whole path, where the box takes one from the tool's folder.
    root = example("hello-file")
    monkeypatch.chdir(root)
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("f")
        assert isinstance(app.screen, PickerScreen)
        assert app.screen.query_one("#path", Input).value == "cases/correct/workspace"
        await pilot.press("enter")  # the path shown is the one used
        result = await app.wait_for_runs(2)
        assert result.inputs.workspace == root / "cases" / "correct" / "workspace"


async def test_folder_picker_tree_browsing_fills_the_box(example):
    root = example("hello-file")
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("f")
        await pilot.pause()
        await pilot.press("tab", "down")  # from the box to the tree: the first folder under the task
        await pilot.pause()
        value = app.screen.query_one("#path", Input).value
        # As the user would type it: from where the tool started.
        assert Path(value).absolute().is_relative_to(root) and value == path_from(Path(value).absolute(), Path.cwd())
        await pilot.press("ctrl+u")
        result = await app.wait_for_runs(2)
        assert result.inputs.workspace == Path(value).absolute()


async def test_ctrl_u_in_the_folder_pickers_box_uses_the_folder_typed(example):
    """The hint says "ctrl+u uses it", and the box has the keys when the
    picker opens: there ctrl+u was the box's own key (erase to the start),
    so the folder typed was wiped and nothing was used."""
    root = example("hello-file")
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("f")
        await pilot.pause()
        box = app.screen.query_one("#path", Input)
        assert box.has_focus
        box.value = str(root / "cases" / "wrong-text" / "workspace")
        await pilot.press("ctrl+u")
        result = await app.wait_for_runs(2, timeout=5)
        assert result.inputs.workspace == root / "cases" / "wrong-text" / "workspace"


async def test_ctrl_u_in_the_file_pickers_box_is_the_box_s_own_key(example):
    """A file picker has no folder to use: ctrl+u erases the box as in any box."""
    app = make_app(example("count-errors"), case="harbor-mode", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("p", "enter")  # "a file…"
        await pilot.pause()
        assert isinstance(app.screen, PickerScreen) and not app.screen.folders
        await pilot.press(*"answer.json", "ctrl+u")
        assert app.screen.query_one("#path", Input).value == ""


async def test_choose_a_response_file_switches_to_server_mode(example, monkeypatch):
    root = example("count-errors")
    monkeypatch.chdir(root)
    app = make_app(root, case="harbor-mode", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        first = await app.wait_for_runs(1)
        assert first.outcome is Outcome.CONTRACT_ERROR
        await pilot.press("p")
        assert isinstance(app.screen, ChooseListScreen)
        await pilot.press("enter")  # "a file…" (this case has no response of its own)
        assert isinstance(app.screen, PickerScreen) and not app.screen.folders
        box = app.screen.query_one("#path", Input)
        box.value = "cases/response-json/response.json"  # relative to where the tool started
        box.focus()
        await pilot.press("enter")
        result = await app.wait_for_runs(2)
        assert result.mode == "server"
        assert result.verdict.rewards == {"reward": 1.0}
        await pilot.pause()
        assert "environment-server mode m" in widget_text(app, "#header")


async def test_a_response_file_deleted_while_chosen_means_the_run_cannot_start(example, tmp_path):
    """A response file chosen with ``p``, then deleted: ``r`` ran the runner
    on the missing path and said ``contract error``, where a deleted
    workspace says the run could not start and why."""
    root = example("count-errors")
    answer = tmp_path / "answer.json"
    answer.write_text((root / "cases" / "response-json" / "response.json").read_text())
    app = make_app(root, case="harbor-mode", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("p", "enter")  # "a file…"
        assert isinstance(app.screen, PickerScreen)
        box = app.screen.query_one("#path", Input)
        box.value = str(answer)
        box.focus()
        await pilot.press("enter")
        assert (await app.wait_for_runs(2)).verdict.rewards == {"reward": 1.0}
        answer.unlink()
        await pilot.press("r")
        result = await app.wait_for_runs(3)
        assert result.outcome is Outcome.COULD_NOT_START
        said = f"The runner could not start: the response {answer} is not there any more (deleted or moved?)"
        await wait_for(lambda: said in widget_text(app, "#resolution-body"), "why the run could not start")
        assert "contract error" not in screen_text(app)


async def test_typed_text_response_runs_after_a_pause(example):
    app = make_app(
        example("count-errors"), case="harbor-mode", watch=True
    )  # a typed response runs as a save does: with live reload on
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("p", "down", "enter")  # "type plain text in an editor"
        assert isinstance(app.screen, ResponseEditorScreen)
        await app.wait_for_runs(2)  # opening the editor runs the (empty) typed response
        typed = "The log has 3 errors"
        await pilot.press(*typed)
        # A slow machine may pause between two keys long enough for a run of the text so far.
        count = 3
        while (result := await app.wait_for_runs(count)).inputs.response.text != typed:
            count += 1
        assert result.trigger == "response edited"
        assert result.inputs.response.path is None and result.inputs.response.kind == "text"
        assert result.verdict.rewards == {"reward": 1.0}, result.stderr.text
        # The verdict is visible beneath the editor.
        await pilot.pause()
        assert '{"reward": 1.0}' in screen_text(app)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.main
        assert "typed text" in widget_text(app, "#choices")


async def test_choose_task_data_file(example, monkeypatch):
    root = example("sum-column")
    monkeypatch.chdir(root)
    app = make_app(root, case="quantity-variant", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        first = await app.wait_for_runs(1)
        assert first.verdict.rewards == {"reward": 1.0}
        await pilot.press("t")
        assert isinstance(app.screen, ChooseListScreen)
        await pilot.press("down", "down", "enter")  # none: {}
        result = await app.wait_for_runs(2)
        assert result.inputs.task_data is None
        await pilot.press("t", "down", "enter")  # a JSON file…
        assert isinstance(app.screen, PickerScreen) and not app.screen.folders
        box = app.screen.query_one("#path", Input)
        box.value = "cases/quantity-variant/task_data.json"
        box.focus()
        await pilot.press("enter")
        result = await app.wait_for_runs(3)
        assert result.inputs.task_data.name == "task_data.json" and result.verdict.rewards == {"reward": 1.0}


async def test_toggle_mode_with_and_without_the_response(example):
    app = make_app(example("count-errors"), case="response-json", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        first = await app.wait_for_runs(1)
        assert first.mode == "server" and first.verdict.rewards == {"reward": 1.0}
        await pilot.press("m")
        second = await app.wait_for_runs(2)
        assert second.mode == "harbor" and second.outcome is Outcome.CONTRACT_ERROR
        await pilot.pause()
        assert "Harbor mode" in widget_text(app, "#header")
        await pilot.press("m")
        third = await app.wait_for_runs(3)
        assert third.mode == "server" and third.verdict.rewards == {"reward": 1.0}


async def test_toggle_mode_without_any_response_asks_for_one(example):
    app = make_app(example("hello-file"), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("m")
        await pilot.pause()
        assert isinstance(app.screen, ChooseListScreen)
        assert any("no response to run with" in n for n in app.notices)


async def test_a_chooser_flow_that_raises_is_shown_and_the_app_goes_on(example, monkeypatch):
    root = example("hello-file")
    app = make_app(root, watch=False)

    def broken(folder):
        raise RuntimeError("the disk is on fire")

    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        monkeypatch.setattr(app.session, "choose_workspace", broken)
        await pilot.press("f")
        box = app.screen.query_one("#path", Input)
        box.value = str(root / "cases" / "wrong-text" / "workspace")
        box.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert app.is_running and app.screen is app.main
        assert "choose the workspace: RuntimeError: the disk is on fire" in app.notices, app.notices
        await pilot.press("r")
        assert (await app.wait_for_runs(2)).inputs.case == "correct"


async def test_a_chooser_key_pressed_thrice_opens_one_chooser(example):
    """``sss`` stacked three case choosers: two more escapes to get out, and
    the keys typed meanwhile went to the hidden ones."""
    app = make_app(example("hello-file"), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        app.post_message(events.Key("s", "s"))
        app.post_message(events.Key("s", "s"))
        app.post_message(events.Key("s", "s"))
        await pilot.pause(0.3)
        assert len(app.screen_stack) == 2
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.main


async def test_a_response_typed_for_a_case_without_one_is_said_as_one_the_case_never_had(example):
    """The note said "its response is not in use", of a case that never had
    a response: its expected.json is for a run without one."""
    app = make_app(example("hello-file"), case="correct", watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("p", "down", "enter")  # "type plain text in an editor"
        assert isinstance(app.screen, ResponseEditorScreen)
        result = await app.wait_for_runs(2)  # opening the editor runs the (empty) typed response
        assert result.inputs.expected is None
        await pilot.press("escape")
        await pilot.pause()
        said = " ".join(widget_text(app, "#reward-body").split())  # as one line, however it wraps
        assert "its response is not in use" not in said
        assert "the case has no response: its expected.json is for a run without one" in said


async def test_keys_typed_in_one_burst_after_s_go_to_the_case_chooser(example):
    """``s``, ``end``, ``enter`` read from the terminal in one go: the chooser's
    worker had not pushed it yet, so ``end`` and ``enter`` went to the cases
    list beneath (its last case chosen and run) and the chooser stayed open
    over it. They are the chooser's: its last option, no case."""
    app = make_app(example("hello-file"), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        for key in ("s", "end", "enter"):
            app.post_message(events.Key(key, key if len(key) == 1 else None))
        result = await app.wait_for_runs(2)
        await pilot.pause()
        assert result.inputs.case is None and result.trigger == "case chosen", result.inputs.case
        assert app.screen is app.main and app.session.case is None


def _dialogs_slow_to_come(app, monkeypatch) -> None:
    """Each dialog takes a moment to come (a big task's cases), and the keys held for it wait
    for it however long it takes. The hold's own second is not what these tests are about
    (tests/harbor/test_trial_tui.py's chooser that does not come is): on a machine loaded 10
    to 20 deep the picker came past it, and the letters these tests follow acted where they were."""
    real = app.push_screen_wait

    async def slow_push(screen):
        await asyncio.sleep(0.3)
        return await real(screen)

    monkeypatch.setattr(app, "push_screen_wait", slow_push)
    monkeypatch.setattr(base, "_HOLD_MOST_S", math.inf)


async def test_keys_handed_to_a_chooser_that_starts_another_flow_are_held_for_the_next(example, monkeypatch):
    """``s``, ``esc``, ``s``, ``end``, ``enter`` in one go, the chooser slow to
    come: the held keys were all handed on at once, so the second ``s``'s keys
    were no longer held and went to the list beneath (its last case chosen and
    run) and the second chooser stayed open over it. Each key is handed on
    where the one before it left things: the second chooser's last option."""
    app = make_app(example("hello-file"), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        _dialogs_slow_to_come(app, monkeypatch)
        for key in ("s", "escape", "s", "end", "enter"):
            app.post_message(events.Key(key, key if len(key) == 1 else None))
        result = await app.wait_for_runs(2)
        await wait_for(lambda: app.screen is app.main, "the chooser closed")
        await pilot.pause()
        assert result.inputs.case is None and result.trigger == "case chosen", result.inputs.case
        assert app.screen is app.main and app.session.case is None


async def test_a_path_typed_in_one_burst_with_the_keys_that_open_the_picker_is_the_pickers(example, monkeypatch):
    """``v``, ``end`` (another .py file…), ``enter``, then ``x y z`` in one go,
    each dialog slow to come: the flow was counted as shown at its first
    dialog, so the letters read between the list closing and the picker coming
    went to the task's screen, which refused them: the path box stayed empty.
    They wait for the flow's second dialog."""
    app = make_app(example("hello-file"), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        _dialogs_slow_to_come(app, monkeypatch)
        for key in ("v", "end", "enter", "x", "y", "z"):
            app.post_message(events.Key(key, key if len(key) == 1 else None))
        await wait_for(
            # (query, not query_one: the picker is pushed a moment before its path box is composed)
            lambda: (
                isinstance(app.screen, PickerScreen)
                and [box.value for box in app.screen.query("#path").results(Input)] == ["xyz"]
            ),
            "the letters in the picker's path box",
        )
        await pilot.pause()
        assert isinstance(app.screen, PickerScreen)


def _stepped_task(tmp_path, steps: tuple[str, ...], own: str, reward: float):
    """A task whose task.toml lists ``steps``, tests/verifier.py scoring 1.0 and the step
    ``own``'s own steps/OWN/tests/verifier.py scoring ``reward``; the task and that folder."""
    toml = "\n".join(f'[[steps]]\nname = "{name}"\n' for name in steps)
    root = make_task(tmp_path / "tasks" / "ms", "def verify(workspace):\n    return 1.0\n", toml=toml)
    folder = root / "steps" / own / "tests"
    folder.mkdir(parents=True)
    (folder / "verifier.py").write_text(f"def verify(workspace):\n    return {reward}\n")
    return root, folder


async def _open_step_chooser(app, pilot) -> None:
    await pilot.press("S")
    await wait_for(lambda: isinstance(app.screen, ChooseListScreen), "the step chooser")


async def test_shift_s_chooses_a_step_of_a_multi_step_task_and_the_runs_and_the_watcher_follow(tmp_path):
    """A multi-step task could be run only as the step given on the command line
    (--step NAME): nothing on screen chose another. S chooses it as s, v, f, p, t
    choose theirs: the run is the step's (its own tests over tests/), the header,
    the resolution panel and the reproduce command say so, a save in the step's
    own tests re-runs it, and "no step" gives tests/ with the task's [verifier] back."""
    root, own = _stepped_task(tmp_path, ("first", "second"), "second", 0.5)
    app = make_app(root)
    async with app.run_test(size=(160, 45)) as pilot:
        first = await app.wait_for_runs(1)
        assert first.verdict.rewards == {"reward": 1.0}
        await asyncio.wait_for(app.controller.live.watch_ready.wait(), 10)
        await pilot.pause()
        assert "step none S" in " ".join(widget_text(app, "#header").split())
        assert any(hit == "Choose step  (S)" for hit in (c.title for c in app.get_system_commands(app.main)))
        await _open_step_chooser(app, pilot)
        await pilot.pause()
        options = app.screen.query_one(OptionList)
        shown = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert [line.split()[0] for line in shown] == ["first", "second", "no"], shown
        assert "/tests is ms/steps/second/tests laid over tests/" in shown[1], shown
        assert options.highlighted == 2  # on "no step", the current choice
        await pilot.press("up", "enter")
        second = await app.wait_for_runs(2)
        assert second.trigger == "step chosen" and second.verdict.rewards == {"reward": 0.5}
        await pilot.pause()
        header = " ".join(widget_text(app, "#header").split())
        assert "step second S" in header and "verifier ms/steps/second/tests/verifier.py" in header, header
        said = " ".join(widget_text(app, "#resolution-body").split())
        assert "with ms/steps/second/tests laid over it" in said and "a multi-step task" not in said, said
        await pilot.press("c")
        await pilot.pause()
        assert "--step second" in " ".join(screen_text(app).split())
        await pilot.press("escape")
        (own / "verifier.py").write_text("def verify(workspace):\n    return 0.25\n")  # the watcher follows
        saved = await app.wait_for_runs(3)
        assert saved.verdict.rewards == {"reward": 0.25}, saved.trigger
        await _open_step_chooser(app, pilot)
        await pilot.press("end", "enter")  # no step
        back = await app.wait_for_runs(4)
        assert back.verdict.rewards == {"reward": 1.0}
        await pilot.pause()
        header = " ".join(widget_text(app, "#header").split())
        assert "step none S" in header and "verifier ms/tests/verifier.py" in header, header


async def test_shift_s_on_a_task_without_steps_says_it_has_none(example):
    app = make_app(example("hello-file"), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        assert not any("step" in c.title.lower() for c in app.get_system_commands(app.main))
        await pilot.press("S")
        await pilot.pause()
        assert app.screen is app.main
        said = " ".join(widget_text(app, "#status").split())
        assert "S: hello-file has no [[steps]] in its task.toml (Harbor verifies it as one)" in said, said


async def test_a_step_chosen_with_shift_s_then_dropped_from_task_toml_is_said_without_a_flag(tmp_path):
    """The step chosen with S, then task.toml edited to drop it: the resolution panel
    said "--step second: task.toml no longer has it", a flag this user never typed."""
    toml = '[[steps]]\nname = "first"\n\n[[steps]]\nname = "second"\n'
    root = make_task(tmp_path / "tasks" / "ms", "def verify(workspace):\n    return 1.0\n", toml=toml)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await asyncio.wait_for(app.controller.live.watch_ready.wait(), 10)
        await _open_step_chooser(app, pilot)
        await pilot.press("up", "enter")
        await app.wait_for_runs(2)
        (root / "task.toml").write_text('[[steps]]\nname = "first"\n')
        await app.wait_for_runs(3)
        await pilot.pause()
        said = " ".join(widget_text(app, "#resolution-body").split())
        assert "step second: task.toml no longer has it (steps: first)" in said, said
        assert "--step" not in said, said


async def test_a_task_whose_only_verifier_is_a_step_s_says_s_chooses_the_step(tmp_path):
    """A multi-step task whose only verifier is in steps/first/tests: the TUI's "no
    verifier found" said "--step NAME looks in steps/NAME/tests too", a flag of a command
    the user had already started; S chooses the step, and its verifier runs."""
    toml = '[[steps]]\nname = "first"\n'
    root = make_task(tmp_path / "tasks" / "ms", "def verify(workspace):\n    return 1.0\n", toml=toml)
    own = root / "steps" / "first" / "tests"
    own.mkdir(parents=True)
    (root / "tests" / "verifier.py").rename(own / "verifier.py")
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        said = " ".join(widget_text(app, "#resolution-body").split())
        assert "--step" not in said and "S chooses the step" in said, said
        await _open_step_chooser(app, pilot)
        await pilot.press("home", "enter")
        result = await app.wait_for_runs(2)  # the first: nothing to run
        assert result is not None and result.verdict.rewards == {"reward": 1.0}


async def test_a_verifier_named_with_v_then_shadowed_by_the_step_chosen_with_shift_s_is_said_without_a_flag(tmp_path):
    """tests/verifier.py chosen with v, then S chooses a step that ships its own verifier.py:
    the note said "under --step second that is the step's own ...", a flag this user never typed."""
    root, own = _stepped_task(tmp_path, ("first", "second"), "second", 0.5)
    (root / "tests" / "other.py").write_text("def verify(workspace):\n    return 0.0\n")
    app = make_app(root, watch=False, verifier="ms/tests/verifier.py")  # as v picks it: by its path
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await _open_step_chooser(app, pilot)
        await pilot.press("up", "enter")
        result = await app.wait_for_runs(2)
        assert result.verdict.rewards == {"reward": 0.5}
        await pilot.pause()
        said = " ".join(widget_text(app, "#resolution-body").split())
        assert "under step second that is the step's own steps/second/tests/verifier.py" in said, said
        assert "--step" not in said, said


async def test_shift_s_on_a_task_whose_steps_repeat_a_name_lists_each_step_once(tmp_path):
    """Two [[steps]] named "first" (a task Harbor refuses): S listed the name twice as
    one option id, and the list raised DuplicateID: the app ended in a traceback and
    the session's history was lost. Steps whose names differ only in characters a
    widget id cannot hold ("a.b", "a b") are two steps, each listed."""
    toml = '[[steps]]\nname = "first"\n\n[[steps]]\nname = "first"\n\n[[steps]]\nname = "a.b"\n\n'
    toml += '[[steps]]\nname = "a b"\n'
    root = make_task(tmp_path / "tasks" / "ms", "def verify(workspace):\n    return 1.0\n", toml=toml)
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await _open_step_chooser(app, pilot)
        await pilot.pause()
        options = app.screen.query_one(OptionList)
        shown = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert [line.split("·")[0].split(":")[0].strip() for line in shown] == ["first", "a.b", "a b", "no step"], shown
        await pilot.press("escape")
        await pilot.pause()
        assert app.is_running and app.screen is app.main


async def test_a_case_run_under_a_step_is_marked_outdated_once_shift_s_chooses_another(tmp_path):
    """kept1 ran under step first (0.1, as it expects), then no case, then S chose
    "no step": the cases list still showed `✓ kept1 0.1` as current, though under
    tests/ alone the case scores 1. A step chosen changes what every case's run reads
    (the tests and the settings), as a save in tests/ does: its mark is `?` until it runs again."""
    root, own = _stepped_task(tmp_path, ("first",), "first", 0.1)
    (root / "cases" / "kept1" / "workspace").mkdir(parents=True)
    (root / "cases" / "kept1" / "expected.json").write_text('{"rewards": {"reward": 0.1}}')
    app = make_app(root, watch=False, step="first", case="kept1")
    async with app.run_test(size=SIZE) as pilot:
        first = await app.wait_for_runs(1)
        assert first.verdict.rewards == {"reward": 0.1}
        await pilot.press("s", "end", "enter")  # no case
        await app.wait_for_runs(2)
        await pilot.pause()
        assert "✓ kept1 0.1" in screen_text(app)
        await _open_step_chooser(app, pilot)
        await pilot.press("end", "enter")  # no step
        await app.wait_for_runs(3)
        await pilot.pause()
        cases = " ".join(screen_text(app).split())
        assert "? kept1 was ✓ 0.1" in cases, cases


async def test_a_case_mark_is_current_again_once_shift_s_or_v_chooses_back_what_it_ran_under(tmp_path):
    """kept1 ran under step first (0.1, as it expects), then no case; S left the step and came
    back to it: the list still said `? kept1 was ✓ 0.1`, though that run was made under the step
    chosen again and nothing it read had changed. A mark is out of date when its run was made
    under another step or verifier than the ones chosen, or read files that changed since:
    the same goes for a verifier chosen with v and chosen back."""
    root, own = _stepped_task(tmp_path, ("first",), "first", 0.1)
    (own / "other.py").write_text("def verify(workspace):\n    return 0.0\n")
    (root / "cases" / "kept1" / "workspace").mkdir(parents=True)
    (root / "cases" / "kept1" / "expected.json").write_text('{"rewards": {"reward": 0.1}}')
    app = make_app(root, watch=False, step="first", case="kept1")
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("s", "end", "enter")  # no case
        await app.wait_for_runs(2)
        for step_key, runs in (("end", 3), ("home", 4)):  # no step, then first again
            await _open_step_chooser(app, pilot)
            await pilot.press(step_key, "enter")
            await app.wait_for_runs(runs)
        await pilot.pause()
        assert "✓ kept1 0.1" in cases_text(app), cases_text(app)
        await pilot.press("v")
        await wait_for(lambda: isinstance(app.screen, ChooseListScreen), "the verifier chooser")
        await pilot.press("down", "enter")  # steps/first/tests/other.py
        assert (await app.wait_for_runs(5)).inputs.verifier.name == "other.py"
        await pilot.pause()
        assert "? kept1 was ✓ 0.1" in cases_text(app), cases_text(app)  # not that verifier's verdict
        await pilot.press("v")
        await wait_for(lambda: isinstance(app.screen, ChooseListScreen), "the verifier chooser")
        await pilot.press("up", "enter")
        assert (await app.wait_for_runs(6)).inputs.verifier.name == "verifier.py"
        await pilot.pause()
        assert "✓ kept1 0.1" in cases_text(app), cases_text(app)


def _kept1_of_step_first(tmp_path):
    """The app on a task of one step, first (its verifier scores 0.1), with a case kept1 that expects 0.1;
    and the step's own tests folder."""
    root, own = _stepped_task(tmp_path, ("first",), "first", 0.1)
    (root / "cases" / "kept1" / "workspace").mkdir(parents=True)
    (root / "cases" / "kept1" / "expected.json").write_text('{"rewards": {"reward": 0.1}}')
    return make_app(root, step="first", case="kept1"), own


async def _kept1_run_under_first_then_no_step(app, pilot) -> None:
    """kept1 run under step first (its mark ✓ 0.1), then no case chosen and S choosing no step."""
    await app.first_run_and_watcher()
    await pilot.press("s", "end", "enter")  # no case
    await app.wait_for_runs(2)
    await _open_step_chooser(app, pilot)
    await pilot.press("end", "enter")  # no step
    await app.wait_for_runs(3)


async def test_a_case_mark_is_out_of_date_once_shift_s_comes_back_to_a_step_whose_tests_changed_meanwhile(tmp_path):
    """kept1 ran under step first (`✓ 0.1`), then S chose no step, and steps/first/tests/verifier.py
    was edited (not watched then: no run of the choices reads it); S chose first again: the list said
    `✓ kept1 0.1` as current, though the file that run read had changed. As when the edit is made
    while the step is chosen, its mark is `?`."""
    app, own = _kept1_of_step_first(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await _kept1_run_under_first_then_no_step(app, pilot)
        (own / "verifier.py").write_text("def verify(workspace):\n    return 0.75\n")
        await _open_step_chooser(app, pilot)
        await pilot.press("home", "enter")  # first again
        assert (await app.wait_for_runs(4)).verdict.rewards == {"reward": 0.75}
        await pilot.pause()
        assert "? kept1 was ✓ 0.1" in cases_text(app), cases_text(app)


async def test_a_case_mark_stays_current_when_only_an_editor_s_files_came_in_a_step_s_tests_meanwhile(tmp_path):
    """kept1 ran under step first (`✓ 0.1`), S chose no step, and the step's verifier.py was only
    opened in vim (its .verifier.py.swp, its 4913 probe, a verifier.py~ backup; the file itself
    untouched); S chose first again: the list said `? kept1 was ✓ 0.1`, as if a run's file had
    changed. What the watcher ignores is no change on coming back either."""
    app, own = _kept1_of_step_first(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await _kept1_run_under_first_then_no_step(app, pilot)
        for name in (".verifier.py.swp", "4913", "verifier.py~", ".verifier.py.kate-swp"):
            (own / name).write_text("an editor's")
        await _open_step_chooser(app, pilot)
        await pilot.press("home", "enter")  # first again
        assert (await app.wait_for_runs(4)).verdict.rewards == {"reward": 0.1}
        await pilot.pause()
        assert "✓ kept1 0.1" in cases_text(app), cases_text(app)


async def test_a_case_mark_is_out_of_date_once_v_comes_back_to_a_verifier_outside_tests_changed_meanwhile(tmp_path):
    """kept1 ran with a verifier outside the task's tests/ (`✓ 0.25`), then v chose tests/verifier.py
    and the first was edited (not watched then); v chose it again: `✓ kept1 0.25` stayed as current."""
    root = make_task(tmp_path / "tasks" / "t", "def verify(workspace):\n    return 1.0\n")
    elsewhere = tmp_path / "elsewhere.py"
    elsewhere.write_text("def verify(workspace):\n    return 0.25\n")
    (root / "cases" / "kept1" / "workspace").mkdir(parents=True)
    (root / "cases" / "kept1" / "expected.json").write_text('{"rewards": {"reward": 0.25}}')
    app = make_app(root, verifier=str(elsewhere), case="kept1")
    async with app.run_test(size=SIZE) as pilot:
        await app.first_run_and_watcher()
        await pilot.press("s", "end", "enter")  # no case
        await app.wait_for_runs(2)
        await pilot.press("v")
        await wait_for(lambda: isinstance(app.screen, ChooseListScreen), "the verifier chooser")
        await pilot.press("home", "enter")  # tests/verifier.py
        await app.wait_for_runs(3)
        elsewhere.write_text("def verify(workspace):\n    return 0.5\n")
        await pilot.press("v")
        await wait_for(lambda: isinstance(app.screen, ChooseListScreen), "the verifier chooser")
        await pilot.press("end", "enter")  # another .py file…
        await wait_for(lambda: isinstance(app.screen, PickerScreen), "the picker")
        box = app.screen.query_one("#path", Input)
        box.value = str(elsewhere)
        box.focus()
        await pilot.press("enter")
        assert (await app.wait_for_runs(4)).verdict.rewards == {"reward": 0.5}
        await pilot.pause()
        assert "? kept1 was ✓ 0.25" in cases_text(app), cases_text(app)


async def test_the_case_chooser_marks_a_case_out_of_date_as_the_list_does(tmp_path):
    """kept1 ran under step first (`✓ 0.1`), then S chose no step: the cases list said
    `? kept1 was ✓ 0.1`, while s's list, over it, still offered `✓ kept1`, as if the case
    passed under what is chosen now. Both say `?`."""
    root, own = _stepped_task(tmp_path, ("first",), "first", 0.1)
    (root / "cases" / "kept1" / "workspace").mkdir(parents=True)
    (root / "cases" / "kept1" / "expected.json").write_text('{"rewards": {"reward": 0.1}}')
    app = make_app(root, watch=False, step="first", case="kept1")
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("s", "end", "enter")  # no case
        await app.wait_for_runs(2)
        await _open_step_chooser(app, pilot)
        await pilot.press("end", "enter")  # no step
        await app.wait_for_runs(3)
        await pilot.pause()
        assert "? kept1 was ✓ 0.1" in cases_text(app), cases_text(app)
        await pilot.press("s")
        await wait_for(lambda: isinstance(app.screen, ChooseListScreen), "the case chooser")
        options = app.screen.query_one(OptionList)
        first = str(options.get_option_at_index(0).prompt)
        assert first.startswith("? kept1"), first


async def test_shift_s_on_a_task_harbor_refuses_says_the_refusal_as_step_does(tmp_path):
    """task.toml with a [[steps]] table, then a line that is not TOML: S said "this task
    has no [[steps]] in its task.toml (Harbor verifies it as one)", where Harbor verifies
    it not at all and its steps cannot be read. S says the refusal, as --step does."""
    toml = '[[steps]]\nname = "first"\n\n[oops\n'
    root = make_task(tmp_path / "tasks" / "ms", "def verify(workspace):\n    return 1.0\n", toml=toml)
    app = make_app(root, watch=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("S")
        await pilot.pause()
        said = " ".join(widget_text(app, "#status").split())
        assert "S: Harbor would refuse to run this task" in said and "its steps cannot be read" in said, said
        assert "Harbor verifies it as one" not in said, said


_THREE_STEPS = '[[steps]]\nname = "first"\n\n[[steps]]\nname = "second"\n\n[[steps]]\nname = "third"\n'


async def _on_third_as_task_toml_drops_it(app, pilot, root) -> None:
    """S's list open, on third, as task.toml is saved without it."""
    await _open_step_chooser(app, pilot)
    await pilot.press("end", "up")  # on third
    (root / "task.toml").write_text('[[steps]]\nname = "first"\n\n[[steps]]\nname = "second"\n')


async def test_a_step_dropped_while_the_step_list_is_open_is_no_longer_offered(tmp_path):
    """S open on first, second, third, then task.toml drops third (live reload reads it
    again): the open list still offered third, and choosing it was refused."""
    root = make_task(tmp_path / "tasks" / "ms", "def verify(workspace):\n    return 1.0\n", toml=_THREE_STEPS)
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await _on_third_as_task_toml_drops_it(app, pilot, root)
        report_change(app, [root / "task.toml"])
        options = app.screen.query_one(OptionList)
        await wait_for(lambda: options.option_count == 3, "the list without third")
        shown = [str(options.get_option_at_index(i).prompt).split()[0] for i in range(options.option_count)]
        assert shown == ["first", "second", "no"], shown


async def test_a_step_dropped_as_it_is_chosen_is_refused_without_a_flag(tmp_path):
    """third chosen in the open list as task.toml dropped it, the list not told yet: the
    toast said "--step third: ms has no step 'third' ...", a flag this user never typed."""
    root = make_task(tmp_path / "tasks" / "ms", "def verify(workspace):\n    return 1.0\n", toml=_THREE_STEPS)
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await _on_third_as_task_toml_drops_it(app, pilot, root)
        app.session.reload_task()  # read again, as live reload does before the screen hears of it
        await pilot.press("enter")
        await wait_for(lambda: app.notices, "the refusal")
        said = " ".join(app.notices[-1].split())
        assert "step third: ms has no step 'third' (steps: first, second)" in said and "--step" not in said, said


async def test_shift_s_is_in_the_footer_from_110_columns(tmp_path):
    """S joins the footer's choosers (`s v f p t S choose`) from 110 columns, where the
    footer still ends with q quit; at 109 it is left out (the palette and the help have it)."""
    toml = '[[steps]]\nname = "first"\n'
    root = make_task(tmp_path / "tasks" / "ms", "def verify(workspace):\n    return 1.0\n", toml=toml)
    app = make_app(root, watch=False)
    async with app.run_test(size=(110, 40)) as pilot:
        await app.wait_for_runs(1)
        await pilot.pause()
        footer = " ".join(screen_text(app).splitlines()[-1].split())
        assert "s v f p t S choose" in footer and "q quit ▏^p palette" in footer, footer
        await pilot.resize_terminal(109, 40)
        await pilot.pause()
        footer = " ".join(screen_text(app).splitlines()[-1].split())
        assert "s v f p t choose" in footer and " S " not in footer and "q quit ▏^p palette" in footer, footer


async def test_the_step_list_says_a_steps_tests_linked_out_of_the_task_are_not_laid_over(tmp_path):
    """A step whose steps/second/tests is a link out of the task: S's list said
    "tests/ alone (no tests of its own)", where the step has tests, unused: the row
    names the link, and that it is not laid over tests/ (as the resolution panel does)."""
    toml = '[[steps]]\nname = "first"\n\n[[steps]]\nname = "second"\n'
    root = make_task(tmp_path / "tasks" / "ms", "def verify(workspace):\n    return 1.0\n", toml=toml)
    outside = tmp_path / "outside" / "tests"
    outside.mkdir(parents=True)
    (outside / "verifier.py").write_text("def verify(workspace):\n    return 0.5\n")
    (root / "steps" / "second" / "tests").symlink_to(outside)
    app = make_app(root, watch=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await app.wait_for_runs(1)
        await _open_step_chooser(app, pilot)
        await pilot.pause()
        options = app.screen.query_one(OptionList)
        second = " ".join(str(options.get_option_at_index(1).prompt).split())
        assert "no tests of its own" not in second, second
        assert "/tests is tests/ alone: steps/second/tests is a link to" in second, second
        assert "out of the task: it is not laid over tests/" in second, second
        first = " ".join(str(options.get_option_at_index(0).prompt).split())
        assert "/tests is tests/ alone: the step has no tests of its own" in first, first  # as watch says it


async def test_the_history_says_each_runs_step_and_compares_a_case_only_within_its_step(tmp_path):
    """A multi-step task, run with no step (1), then S: second (0.5), then back to no
    step (1): the history said nothing of which run was which step, and marked run #2
    ▼ and run #3 ▲ against each other, as if a step were an edit of the verifier. Each
    row says its step; a mark compares a case's runs of the same step and verifier
    (#3 with #1, both of no step)."""
    root, own = _stepped_task(tmp_path, ("first", "second"), "second", 0.5)
    app = make_app(root, watch=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await app.wait_for_runs(1)
        for key, runs in (("up", 2), ("end", 3)):  # second, then no step
            await _open_step_chooser(app, pilot)
            await pilot.press("end", *(["up"] if key == "up" else []), "enter")
            await app.wait_for_runs(runs)
        await pilot.press("r")
        await app.wait_for_runs(4)
        await pilot.pause()
        history = app.main.query_one("#history", OptionList)
        rows = [" ".join(str(history.get_option_at_index(i).prompt).split()) for i in range(4)]
        assert "step second · after step chosen" in rows[2], rows
        assert "no step · after step chosen" in rows[1] and "no step · after start" in rows[3], rows
        assert not any(mark in rows[2] for mark in "▲▼≠="), rows  # the first of its step
        assert "1 = no step" in rows[1] and "1 = no step" in rows[0], rows  # against #1, then #3


async def test_the_history_of_a_task_without_steps_says_no_step(example):
    app = make_app(example("hello-file"), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.pause()
        row = str(app.main.query_one("#history", OptionList).get_option_at_index(0).prompt)
        assert "step" not in row, row


async def test_a_case_mark_of_another_step_says_its_step(tmp_path):
    """kept2 ran under step first (0.1), then kept1, then S chose no step: the list said
    `? kept2 was • 0.1`, with nothing to say that 0.1 was step first's, not tests/'s. A
    mark made under another step than the one chosen says that step; one of the step
    chosen says none (the header says it)."""
    root, own = _stepped_task(tmp_path, ("first",), "first", 0.1)
    for name in ("kept1", "kept2"):
        (root / "cases" / name / "workspace").mkdir(parents=True)
    app = make_app(root, watch=False, step="first", case="kept2")
    async with app.run_test(size=(100, 40)) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("s", "home", "enter")  # kept1, under first
        assert (await app.wait_for_runs(2)).inputs.case == "kept1"
        await pilot.pause()
        cases = cases_text(app)
        assert "kept1 0.1" in cases and "kept2 0.1" in cases and "step" not in cases, cases
        await _open_step_chooser(app, pilot)
        await pilot.press("end", "enter")  # no step: kept1 runs again
        await app.wait_for_runs(3)
        await pilot.pause()
        cases = cases_text(app)
        assert "kept2 was • 0.1 step first" in cases, cases  # under it
        assert "kept1 1 |" in cases, cases


def cases_text(app) -> str:
    """The cases list's rows, one after another."""
    return " | ".join(" ".join(str(o.prompt).split()) for o in app.main.query_one("#cases", OptionList).options)


async def test_a_run_of_another_step_picked_in_the_history_says_its_step(tmp_path):
    """Run #1 with no step (1), then S: first (0.1); run #1 picked in the history: the
    header said `step first` over its verdict of 1, and nothing on screen said that 1
    was tests/'s. The banner over a picked run says its step, as its row does."""
    root, own = _stepped_task(tmp_path, ("first",), "first", 0.1)
    app = make_app(root, watch=False)
    async with app.run_test(size=(100, 40)) as pilot:
        await app.wait_for_runs(1)
        await _open_step_chooser(app, pilot)
        await pilot.press("home", "enter")
        await app.wait_for_runs(2)
        app.main.query_one("#history", OptionList).focus()
        await pilot.press("down", "enter")  # run #1
        await pilot.pause()
        banner = " ".join(widget_text(app, "#reward-body").split())
        assert "run #1 from the history · no case · no step · esc: back to the latest" in banner, banner


async def test_the_folder_picker_leaves_out_the_folders_no_search_for_a_task_enters(example):
    # One skip list (engine/filters.py): the picker had its own four names, and listed
    # .hg, .mypy_cache, venv or .tox, which no search for a task or verifier enters.
    root = example("hello-file")
    skipped = (".hg", ".mypy_cache", ".pytest_cache", "venv", ".tox", "__pycache__", "node_modules")
    for name in skipped:
        (root / name).mkdir()
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("f")
        await wait_for(lambda: isinstance(app.screen, PickerScreen), "the folder picker")
        tree = app.screen.query_one("#tree")
        await wait_for(lambda: tree.root.children, "the task's folders listed")
        shown = {str(node.label) for node in tree.root.children}
        assert "cases" in shown and not shown & set(skipped), shown
