"""Text from files the tool did not write, on the task's screen: a task.toml
``[task] name``, case folder names, the reward file the verifier wrote (its
keys), its stderr. A right-to-left override (U+202E) among them never
reaches the terminal (it is shown as ``<U+202E>``), and a line break in a
name does not give it a second row."""

from __future__ import annotations

import subprocess

import pytest
from textual.content import Content
from textual.notifications import Notify

from tests.helpers.tasks import make_task
from tests.tui.app_under_test import SIZE, make_app, recorded, screen_text, widget_text

RLO = "\u202e"
VERIFIER = f"""
import sys
def verify(workspace):
    sys.stderr.write("txt{RLO}exe.sh\\n")
    return {{"re{RLO}ward": 1.0, "reward": 1.0}}
"""


async def test_a_right_to_left_override_from_the_tasks_files_never_reaches_the_terminal(tmp_path):
    task = make_task(
        tmp_path / "tasks" / "demo",
        VERIFIER,
        toml=f'version = "1.0"\n[task]\nname = "org/de{RLO}mo"\n',
        cases={f"ca{RLO}se": {"a.txt": ""}, "two\nlines": {"a.txt": ""}},
    )
    app = make_app(task, case=f"ca{RLO}se")
    async with app.run_test(size=(140, 50)) as pilot:
        result = await app.wait_for_runs(1)
        await pilot.pause()
        assert result.verdict.rewards == {f"re{RLO}ward": 1.0, "reward": 1.0}  # the real keys, kept
        shown = screen_text(app)
        assert RLO not in shown
        assert "org/de<U+202E>mo" in shown and "ca<U+202E>se" in shown  # the header, the cases list
        assert '"re<U+202E>ward": 1.0' in shown  # the reward file's text and Harbor's verdict
        assert "two\\nlines" in shown  # one row in the cases list
        await pilot.press("s")  # the case chooser
        await pilot.pause()
        chooser = screen_text(app)
        assert RLO not in chooser and "ca<U+202E>se" in chooser and "two\\nlines" in chooser
        app.notify(f"cannot read ca{RLO}se", title=f"ca{RLO}se")  # as a toast quoting a name would
        await pilot.pause()
        assert app.notices[-1] == "cannot read ca<U+202E>se"
        await pilot.press("escape", "f")  # the workspace's folder picker: its box, the task's folders by name
        await pilot.pause()
        picker = screen_text(app)
        assert RLO not in picker and "demo/cases/ca<U+202E>se/workspace" in picker
        await pilot.press("enter")  # the box as shown is the folder itself
        await app.wait_for_runs(2)
        workspace = task / "cases" / f"ca{RLO}se" / "workspace"
        assert app.session.workspace == workspace
        await pilot.press("c")  # the command that reproduces the run, to copy by hand
        await pilot.pause()
        assert RLO not in screen_text(app)
        words = app.screen.words
        quoted = words[words.index("--case") + 1]
        assert quoted == "$'ca\\u202ese'"  # visible escapes, which a shell takes back
        said = subprocess.run(["bash", "-c", f"printf %s {quoted}"], capture_output=True, text=True, check=True)
        assert said.stdout == f"ca{RLO}se"


async def test_cases_whose_names_differ_by_a_character_that_draws_nothing_are_told_apart(tmp_path):
    """Cases `right` and `right` with a zero-width space: the cases list and the chooser showed two
    `right` rows. The character is spelled as a reward key's is."""
    app = make_app(make_task(tmp_path / "tasks" / "demo", cases={"right": {}, "right\u200b": {}}), watch=False)
    async with app.run_test(size=(140, 50)) as pilot:
        await app.wait_for_runs(1)
        await pilot.pause()
        assert "right<U+200B>" in screen_text(app) and "\u200b" not in screen_text(app)
        await pilot.press("s")
        await pilot.pause()
        assert "right<U+200B>" in screen_text(app) and "\u200b" not in screen_text(app)


@pytest.mark.parametrize(("name", "shown"), [("two\nlines", "two\\nlines"), ("ri\x1b[5mght", "ri\\x1b[5mght")])
async def test_a_run_picked_in_the_history_names_its_case_on_one_line_as_the_list_does(tmp_path, name, shown):
    """The banner over a run picked in the history put the case's name as it
    is: ``two<LF>lines`` broke it in two, ``ri<ESC>[5mght`` read ``right``, a
    case the task does not have (the history itself shows ``ri\\x1b[5mght``)."""
    task = make_task(tmp_path / "tasks" / "demo", cases={name: {}})
    app = make_app(task, case=name, watch=False)
    async with app.run_test(size=(140, 50)) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("r")
        await app.wait_for_runs(2)
        app.main.query_one("#history").focus()
        await pilot.press("down", "enter")  # run #1, from the history
        await pilot.pause()
        banner = widget_text(app, "#reward-body").splitlines()[0]
        assert banner == f" run #1 from the history · {shown} · esc: back to the latest ", banner


async def test_a_toast_a_screen_raises_shows_brackets_as_written(example):
    # A widget's notify asks for markup unless told not to: the app turns it off for every toast,
    # so a name or an exception quoted in one (``[bold]`` in a file name) is shown as written.
    messages: list = []
    app = make_app(example("hello-file"), watch=False)
    async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
        await app.wait_for_runs(1)
        app.screen.notify("cannot read [bold]x[/bold].py", title="[red]t[/red]")
        await pilot.pause()
    toast = recorded(messages, Notify)[-1].notification
    # as textual's Toast draws it
    drawn = [Content.from_markup(text) if toast.markup else Content(text) for text in (toast.message, toast.title)]
    assert [text.plain for text in drawn] == ["cannot read [bold]x[/bold].py", "[red]t[/red]"]
