"""What the user types and picks: typed JSON runs once it parses,
a picker's box takes the keys and paths from where the tool started, and a
case's mark comes from its own inputs only."""

from __future__ import annotations

import json

from textual.widgets import Input, OptionList, TextArea

from tests.tui.app_under_test import SIZE, history_text, make_app, screen_text, wait_for
from verifier_tui.engine.task.cases import wrap_text_response
from verifier_tui.tui.screens.choose_list import ChooseListScreen
from verifier_tui.tui.screens.picker import PickerScreen
from verifier_tui.tui.screens.response_editor import EDIT_PAUSE_S, ResponseEditorScreen


def answered_task(tmp_path):
    """A task under ``tasks/t`` whose one case, ``c``, holds a text
    response, and a verify that takes one: its response.txt."""
    from tests.helpers.tasks import make_task

    root = make_task(
        tmp_path / "tasks" / "t", "def verify(workspace, response=None):\n    return 1.0\n", cases={"c": {}}
    )
    response = root / "cases" / "c" / "response.txt"
    response.write_text("an answer\n")
    return response


async def notices_of_the_text_editor_after(change, response) -> list[str]:
    """The task of ``response`` run once, then ``change`` made to the file,
    then p and "type plain text in an editor": the last notice said."""
    app = make_app(response.parents[2], case="c", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        change()
        await opened_editor(pilot, "down", "down")  # "type plain text in an editor"
        return app.notices[-1:]


async def opened_editor(pilot, *keys: str) -> None:
    """p, ``keys`` down to one of the response list's editors, enter: that editor on screen."""
    await pilot.press("p", *keys, "enter")
    await pilot.pause()
    assert isinstance(pilot.app.screen, ResponseEditorScreen)


def typed(app) -> str | None:
    """The response text of the last run that ended (None: it had none)."""
    response = app.finished[-1].inputs.response if app.finished else None
    return response.text if response is not None else None


def case_line(app, name: str) -> str:
    """The cases list's line for ``name``, as shown."""
    cases = app.main.query_one("#cases", OptionList)
    index = next(i for i in range(cases.option_count) if cases.get_option_at_index(i).id == name)
    return str(cases.get_option_at_index(index).prompt).strip()


async def test_typed_json_runs_only_once_it_parses(example):
    app = make_app(
        example("count-errors"), case="harbor-mode", watch=True
    )  # a typed response runs as a save does: with live reload on
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("p", "down", "down", "enter")  # "type Responses API JSON"
        assert isinstance(app.screen, ResponseEditorScreen)
        await pilot.press(*'{"output": [')
        await pilot.pause(EDIT_PAUSE_S * 3)  # past the pause after which a response runs
        state = str(app.screen.query_one("#editor-state").content)
        assert "not valid JSON yet (line 1, column 13" in state and "not run until it parses" in state
        # Completed, it runs: the first run since the editor opened is of the JSON that parses.
        text_area = app.screen.query_one(TextArea)
        valid = json.dumps(wrap_text_response("3"), indent=2)
        text_area.replace(valid, (0, 0), text_area.document.end)
        result = await app.wait_for_runs(2)
        assert result.trigger == "response edited" and json.loads(result.inputs.response.text)["output"]
        assert result.verdict.rewards == {"reward": 1.0}
        assert app.finished[1:] == [result]
        # Closed on JSON that no longer parses: the runs keep the last one that did, and it is said.
        await pilot.press("end", *" trailing{")
        await pilot.press("escape")
        await pilot.pause()
        assert any("the typed JSON does not parse" in n and "keep the last" in n for n in app.notices), app.notices


async def test_typing_in_the_file_picker_goes_to_the_box_relative_to_where_the_tool_started(
    example, tmp_path, monkeypatch
):
    root = example("count-errors")
    started_in = tmp_path / "my-answers"
    started_in.mkdir()
    (started_in / "answer.json").write_text(json.dumps(wrap_text_response("3")))
    monkeypatch.chdir(started_in)
    app = make_app(root, case="harbor-mode", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("p", "enter")  # "a file…"
        assert isinstance(app.screen, PickerScreen) and not app.screen.folders
        await pilot.press(*"answer.json", "enter")  # typed at once, no click on the box
        result = await app.wait_for_runs(2)
        assert result.inputs.response.path == started_in / "answer.json"
        assert result.verdict.rewards == {"reward": 1.0}


async def test_typing_in_the_folder_picker_goes_to_the_box_relative_to_where_the_tool_started(example, monkeypatch):
    root = example("hello-file")
    monkeypatch.chdir(root / "cases")
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("f")
        assert isinstance(app.screen, PickerScreen) and app.screen.folders
        await pilot.pause()  # the tree has loaded: its first highlight must not replace what is typed
        await pilot.press(*"wrong-text/workspace")
        await pilot.pause()
        assert app.screen.query_one("#path", Input).value == "wrong-text/workspace"
        await pilot.press("enter")
        result = await app.wait_for_runs(2)
        assert result.inputs.workspace == root / "cases" / "wrong-text" / "workspace"


async def test_a_run_with_other_inputs_leaves_the_case_mark_alone(example):
    root = example("hello-file")
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.pause()
        assert case_line(app, "correct") == "✓ correct  1"
        # The correct case with another case's workspace: reward 0, and no word about "correct".
        await pilot.press("f")
        box = app.screen.query_one("#path", Input)
        box.value = str(root / "cases" / "wrong-text" / "workspace")
        await pilot.press("enter")
        result = await app.wait_for_runs(2)
        assert result.inputs.case == "correct" and result.verdict.rewards == {"reward": 0.0}
        await pilot.pause()
        assert case_line(app, "correct") == "✓ correct  1"
        await pilot.press("s")
        assert isinstance(app.screen, ChooseListScreen)
        assert "✓ correct" in screen_text(app)
        await pilot.press("escape")
        # The case chosen again runs its own inputs: its mark follows that run.
        (root / "cases" / "correct" / "workspace" / "hello.txt").write_text("goodbye\n")
        app.main.query_one("#cases", OptionList).focus()
        await pilot.press("home", "enter")
        result = await app.wait_for_runs(3)
        assert result.inputs.workspace == root / "cases" / "correct" / "workspace" and result.expected_matched is False
        await pilot.pause()
        assert case_line(app, "correct").startswith("✗ correct")


async def test_a_response_file_with_escape_codes_is_not_opened_in_the_editor(tmp_path):
    """The editor shows text as it is: a response.txt holding an OSC title and
    a clear-screen set the terminal's title and wiped the screen."""
    from tests.helpers.tasks import make_task

    root = make_task(tmp_path / "t", "def verify(workspace, response=None):\n    return 1.0\n", cases={"ctl": {}})
    (root / "cases" / "ctl" / "response.txt").write_text("BEGIN \x1b]0;PWNED\x07 \x1b[2J end\n")
    app = make_app(root, case="ctl", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await opened_editor(pilot, "down", "down")  # "type plain text in an editor"
        assert app.screen.query_one(TextArea).text == ""
        assert any("response.txt holds control characters or escape codes" in n for n in app.notices), app.notices


async def test_the_typed_response_put_aside_by_m_opens_in_the_editor_again(tmp_path):
    """Typed, then m (Harbor mode), then p and the editor again: it opened
    empty and ran that at once, and m then brought back the empty response:
    what was typed was gone for good."""
    from tests.helpers.tasks import make_task

    root = make_task(tmp_path / "t", "def verify(workspace, response=None):\n    return 1.0\n", cases={"c": {}})
    app = make_app(root, case="c", watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await opened_editor(pilot, "down")  # "type plain text in an editor"
        await pilot.press(*"my answer")
        await pilot.press("escape")
        await wait_for(lambda: typed(app) == "my answer", "the typed response ran")
        await pilot.press("m")  # Harbor mode: the typed response put aside
        await wait_for(lambda: typed(app) is None, "the run in Harbor mode")
        await opened_editor(pilot, "down")  # the editor again
        assert app.screen.query_one(TextArea).text == "my answer"
        await pilot.press("escape")
        await wait_for(lambda: typed(app) == "my answer", "the typed response ran again")


async def test_a_response_file_too_big_for_the_editor_is_said_not_opened_empty(tmp_path):
    """A case's response.txt of 2 MB: the editor took it, and held the screen
    for seconds (1.4 s for 1 MB here, 20 s for 16 MB, the bound it had); past
    that bound it opened empty without a word, and ran the empty response in
    the file's place; then, said, it still ran that empty response (the
    editor runs what it opens with)."""
    from tests.helpers.tasks import make_task

    # the reward says whether the verifier was given the file's answer (0.0: an empty one)
    verifier = "def verify(workspace, response=None):\n    return 1.0 if 'many words' in str(response) else 0.0\n"
    root = make_task(tmp_path / "t", verifier, cases={"big": {}})
    (root / "cases" / "big" / "response.txt").write_text("an answer of many words\n" * 90_000)  # 2 MB
    app = make_app(root, case="big", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await opened_editor(pilot, "down", "down")  # "type plain text in an editor"
        assert app.screen.query_one(TextArea).text == ""
        said = [n for n in app.notices if "response.txt" in n]
        assert said == [
            "response.txt is more than the 1 MB the response editor opens: edit it in your editor; "
            "the editor starts empty, and the runs keep the file until you type"
        ], app.notices
        # the empty editor did not take the file's place: the next run still gets the file
        assert app.session.response is not None
        assert app.session.response.path == root / "cases" / "big" / "response.txt"
        await pilot.press("escape")
        await pilot.press("r")
        result = await app.wait_for_runs(2)
        assert result is not None and result.verdict.rewards == {"reward": 1.0}


async def test_the_editor_over_a_response_file_gone_says_the_next_run_cannot_start(tmp_path):
    """The case's response.txt deleted, then p and the text editor: the
    notice said "the runs keep the file until you type", of a file that is
    not there: the next run could not start."""
    response = answered_task(tmp_path)
    assert await notices_of_the_text_editor_after(response.unlink, response) == [
        "the response t/cases/c/response.txt is not there any more (deleted or moved?): the editor starts "
        "empty, and the next run cannot start until you type (or choose another response with p)"
    ]


async def test_the_editor_over_a_response_file_become_a_link_to_nothing_says_what_the_run_says(tmp_path):
    """The case's response.txt replaced by a link to nothing, then p and the
    text editor: the notice said it "is not there any more (deleted or
    moved?)" (the link is there), where the run said "response.txt is a link
    to nothing: the run cannot read it" and p "is not a file"."""
    response = answered_task(tmp_path)

    def dangle() -> None:
        response.unlink()
        response.symlink_to(tmp_path / "nowhere")

    assert await notices_of_the_text_editor_after(dangle, response) == [
        "the response response.txt is a link to nothing: the run cannot read it: the editor starts empty, "
        "and the next run cannot start until you type (or choose another response with p)"
    ]


async def test_the_editor_over_a_put_aside_response_gone_claims_nothing_of_the_runs(tmp_path):
    """m (Harbor mode) put the case's response.txt aside; it was deleted, then
    p and the text editor: the notice said "the next run cannot start until
    you type", yet Harbor mode stages no response and r ran at once. The runs
    are spoken of only when the file is the chosen response."""
    from verifier_tui.engine.model import Outcome

    response = answered_task(tmp_path)
    root = response.parents[2]
    app = make_app(root, case="c", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("m")  # Harbor mode: the case's response put aside
        await app.wait_for_runs(2)
        response.unlink()
        await opened_editor(pilot, "down", "down")  # "type plain text in an editor"
        notice = app.notices[-1]
        assert notice.startswith("the response t/cases/c/response.txt is not there any more"), notice
        assert "run" not in notice, notice
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("r")  # what the notice would have said cannot happen
        result = await app.wait_for_runs(3)
        assert result is not None and result.outcome is not Outcome.COULD_NOT_START, result.outcome_words


def test_the_editor_over_a_put_aside_big_response_says_nothing_of_the_runs(tmp_path):
    """A response.txt past what the editor opens, put aside by m: the notice
    said "the runs keep the file until you type", of runs that read none."""
    from verifier_tui.engine.session import response_source
    from verifier_tui.tui.chooser_options import EDITOR_LIMIT, editor_start

    big = tmp_path / "response.txt"
    big.write_text("a" * (EDITOR_LIMIT + 1))
    _, _, aside = editor_start(response_source(big), "text", chosen=False)
    _, _, chosen = editor_start(response_source(big), "text", chosen=True)
    assert aside is not None and chosen is not None
    assert "runs" not in aside and chosen.endswith("the runs keep the file until you type"), (aside, chosen)


async def test_the_json_editor_closed_untouched_over_a_big_file_keeps_the_file(tmp_path):
    """A case's response.json over 1 MB, the JSON editor opened empty and
    closed with esc, nothing typed: it said "the typed JSON does not parse
    (empty)" and kept an empty draft; opened again, it took that draft (no
    "too big" notice, run at once), and ctrl+t put an empty text response in
    the file's place without a word."""
    from tests.helpers.tasks import make_task

    verifier = "def verify(workspace, response=None):\n    return 1.0 if 'many words' in str(response) else 0.0\n"
    root = make_task(tmp_path / "t", verifier, cases={"big": {}})
    big = root / "cases" / "big" / "response.json"
    big.write_text(json.dumps(wrap_text_response("an answer of many words " * 90_000)))  # 2 MB
    app = make_app(root, case="big", watch=False)
    too_big = "response.json is more than the 1 MB the response editor opens"
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await opened_editor(pilot, "down", "down", "down")  # "type Responses API JSON"
        await pilot.press("escape")
        await pilot.pause()
        assert not any("does not parse" in n for n in app.notices), app.notices
        await opened_editor(pilot, "down", "down", "down")  # the JSON editor again: the file still too big
        assert sum(too_big in n for n in app.notices) == 2, app.notices
        await pilot.press("ctrl+t")
        await pilot.pause(EDIT_PAUSE_S * 2)
        assert app.session.response is not None and app.session.response.path == big
        await pilot.press("escape")
        await pilot.press("r")
        result = await app.wait_for_runs(2)
        assert result is not None and result.verdict.rewards == {"reward": 1.0}


async def test_json_closed_before_it_parses_opens_again_as_it_was_typed(example):
    """esc on JSON that did not parse (yet) said that the runs keep the last
    response that did; p and the editor again then opened that one: the
    edits made since were gone."""
    app = make_app(example("count-errors"), case="harbor-mode", watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("p", "down", "down", "enter")  # "type Responses API JSON"
        await pilot.pause()
        text_area = app.screen.query_one(TextArea)
        valid = json.dumps(wrap_text_response("3"), indent=2)
        text_area.replace(valid, (0, 0), text_area.document.end)
        await wait_for(lambda: typed(app) == valid, "the JSON that parses ran")
        await pilot.press("end", *" half-typed{")
        await pilot.press("escape")
        await pilot.pause()
        assert any("the typed JSON does not parse" in n for n in app.notices), app.notices
        await opened_editor(pilot, "down", "down")  # the JSON editor again
        assert " half-typed{" in app.screen.query_one(TextArea).text
        assert "not valid JSON yet" in str(app.screen.query_one("#editor-state").content)
        assert typed(app) == valid  # what runs is still the last JSON that parsed


async def test_a_refused_choice_names_its_path_as_the_screen_does(tmp_path):
    """The case's response.txt gone, then p and "the case's response.txt":
    the refusal named it by its absolute path, where the chooser and the rest
    of the screen name it from the folder the tool was started in."""
    response = answered_task(tmp_path)
    root = response.parents[2]
    app = make_app(root, case="c", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        (root / "cases" / "c" / "response.txt").unlink()
        await pilot.press("p")
        await pilot.pause()
        assert isinstance(app.screen, ChooseListScreen)
        await pilot.press("enter")  # "the case's t/cases/c/response.txt"
        await pilot.pause()
        # gone: the words a run says of it (stage.not_there), not a second wording of the same fault
        said = "the response t/cases/c/response.txt is not there any more (deleted or moved?)"
        assert app.notices[-1:] == [said], app.notices


async def test_typed_json_of_another_kind_is_said_in_jsons_words(example):
    """A typed response that parses to ``null`` or a list: the editor said
    ``a JSON NoneType, not an object`` (``a JSON list``): Python's name for
    what the user typed."""
    app = make_app(example("count-errors"), case="harbor-mode")
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("p", "down", "down", "enter")  # "type Responses API JSON"
        assert isinstance(app.screen, ResponseEditorScreen)
        text_area = app.screen.query_one(TextArea)
        for typed_text, said in (("null", "null, not an object"), ("[1]", "a list, not an object")):
            text_area.replace(typed_text, (0, 0), text_area.document.end)
            await pilot.pause(EDIT_PAUSE_S * 3)
            state = str(app.screen.query_one("#editor-state").content)
            assert state.startswith(f"the response holds {said}: the runner will refuse it"), state


async def test_a_run_the_response_editor_cut_short_is_said_in_the_history(tmp_path):
    """Typing while a run of the typed response was under way cut it short and ran
    again: the history went #1, #3 with nothing said of #2, where watch says
    ``run #2 cut short``. The next run's row says the run it cut short."""
    from tests.helpers.tasks import make_task

    slow = "import sys, time\n\ndef verify(workspace, response=None):\n    if 'wait' in str(response):\n"
    slow += "        print('waiting', file=sys.stderr, flush=True)\n        time.sleep(60)\n    return 1.0\n"
    root = make_task(tmp_path / "t", slow, cases={"c": {}})
    (root / "cases" / "c" / "response.txt").write_text("an answer\n")
    app = make_app(root, case="c")
    async with app.run_test(size=SIZE) as pilot:
        await app.first_run_and_watcher()
        await opened_editor(pilot, "down", "down")  # "type plain text in an editor"
        await pilot.press(*"wait")
        await wait_for(lambda: "waiting" in screen_text(app), "the run of the typed response under way")
        cut = app.session.sequence
        app.screen.query_one(TextArea).text = "done"
        await wait_for(lambda: app.finished[-1] is not None and app.finished[-1].sequence > cut, "the next run")
        assert app.finished[-1].verdict.rewards == {"reward": 1.0}
        await pilot.press("escape")
        await pilot.pause()
        history = history_text(app)
        assert f"#{cut} cut short" in history, history
        assert history.index(f"#{cut + 1} ") < history.index(f"#{cut} cut short"), history
