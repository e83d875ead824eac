"""Narrow terminals, themes, the command palette, copying, and the actions
that suspend the app (which must degrade cleanly where it cannot suspend)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from textual.command import CommandList, CommandPalette
from textual.widgets import OptionList

from tests.helpers.commands import run_in_shell_text, without_the_tool_on_path
from tests.helpers.tasks import Gate, make_task
from tests.tui.app_under_test import SIZE, make_app, palette_maximizes, screen_text, wait_for, widget_text
from verifier_tui.engine.session import Session
from verifier_tui.tui.external import editor_command, failing_of, pdb_command, verify_line
from verifier_tui.tui.screens.main import MainScreen


async def test_narrow_terminal_says_so_and_recovers(example):
    app = make_app(example("hello-file"), watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.wait_for_runs(1)
        await pilot.pause()
        text = screen_text(app)
        assert "terminal too small (need 100x30)" in text
        assert "This one is 80x24" in text
        assert "Cases" not in text
        await pilot.resize_terminal(100, 30)
        await pilot.pause()
        text = screen_text(app)
        assert "too small" not in text
        assert "Cases" in text and "Reward" in text and "stderr" in text
        await pilot.resize_terminal(99, 40)
        await pilot.pause()
        assert "This one is 99x40" in screen_text(app)


async def test_too_small_under_the_response_editor_names_esc_not_q(example):
    """The terminal made small with the response editor open: the notice under
    it said "q quits", but q typed into the editor, where the response ran
    with it. While a dialog is over the screen, the notice names esc. And the
    editor's text area, 45% of the height less its title and hint, had no line
    left: what was typed ran the verifier unseen (at 80x24, then at 14 lines)."""
    app = make_app(example("count-errors"), case="harbor-mode", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("p", "down", "enter")  # "type plain text in an editor"
        await pilot.pause()
        for width, height in ((60, 20), (80, 14)):
            await pilot.resize_terminal(width, height)
            await pilot.press(*f" typed at {height}")
            await pilot.pause()
            text = screen_text(app)
            assert f"This one is {width}x{height}" in text and "esc closes the dialog first" in text, text
            assert "q quits" not in text, text
            assert f"typed at {height}" in text, text
        await pilot.press("escape")
        await pilot.pause()
        text = screen_text(app)
        assert "This one is 80x14" in text and "q quits" in text and "esc closes" not in text, text


async def test_the_response_editor_opened_over_a_small_screen_leaves_the_size_in_view(example):
    """The editor opened after the terminal was made small: the notice under it
    kept its place of a screen with no dialog, so the editor hid the size it
    names and the notice offered q, which the editor takes as text."""
    app = make_app(example("count-errors"), case="harbor-mode", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.resize_terminal(80, 14)
        await pilot.pause()
        await pilot.press("p", "down", "enter")  # "type plain text in an editor"
        await pilot.pause()
        await pilot.press(*"typed")
        await pilot.pause()
        text = screen_text(app)
        assert "This one is 80x14" in text and "esc closes the dialog first" in text, text
        assert "q quits" not in text and "typed" in text, text


async def test_smallest_supported_size_shows_every_panel(example):
    app = make_app(example("count-errors"), case="harbor-mode", watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.wait_for_runs(1)
        await pilot.pause()
        text = screen_text(app)
        for word in ("Cases", "Resolution", "History", "Reward", "stderr", "contract problem", "q quit"):
            assert word in text, word


async def test_each_kind_of_builtin_theme_renders(example):
    """Built-in themes of one kind (dark or light, full colour or the
    terminal's ANSI colours) differ only in their colours' values, never in
    which variables they define, so one theme of each kind is rendered: a
    restyle costs about a second, and there are 21 themes."""
    app = make_app(example("count-errors"), case="harbor-mode", watch=False)
    defaults = app.get_theme_variable_defaults()  # what a theme leaves out, as App.get_css_variables fills it
    kinds: dict[tuple[bool, bool], set[frozenset[str]]] = {}
    for name, theme in app.available_themes.items():
        variables = frozenset({**defaults, **theme.to_color_system().generate(), **theme.variables})
        kinds.setdefault((theme.dark, name.startswith("ansi-")), set()).add(variables)
    assert all(len(defined) == 1 for defined in kinds.values()), kinds
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        for theme in ("textual-dark", "textual-light", "ansi-dark", "ansi-light"):
            kinds.pop((app.available_themes[theme].dark, theme.startswith("ansi-")))
            app.theme = theme
            await pilot.pause()
            assert "contract problem" in screen_text(app), theme
            app.export_screenshot()
    assert not kinds  # every kind was rendered


async def test_copy_says_where_the_command_went_and_it_runs_from_where_the_user_is(example, env, monkeypatch):
    """``c`` said "copied to the clipboard" whether or not anything was (OSC 52
    cannot be confirmed: tmux without set-clipboard on drops it), and the
    command began with a bare ``verifier-tui``, not on PATH after the README's
    set-up. Now it says where the command was sent, shows it to copy by hand,
    and the command (paths relative to where the user is) reproduces the run
    as clipboard text and as shown, broken into lines."""
    # as after the README's set-up, whose venv is not activated (an activated one gives the bare name)
    monkeypatch.setenv("PATH", without_the_tool_on_path(env)["PATH"])
    app = make_app(example("hello-file"), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        result = await app.wait_for_runs(1)
        await pilot.press("c")
        await pilot.pause()
        text = screen_text(app)
        shown = app.screen.query_one("#command-text").content.plain
        hint = app.screen.query_one(".dialog-hint").content.plain  # on screen, wrapped to the dialog's width
    assert "copied to the clipboard" not in text and not any("copied" in n for n in app.notices)
    assert "Sent to the terminal's clipboard (OSC 52)" in text and "select the command above by hand" in hint
    assert hint.splitlines()[-1] == "esc closes" and "│ esc closes" in text  # the hint is shown to its end
    command = app.clipboard
    assert command.split()[1:3] == ["run", "hello-file"]  # relative to the folder the tool was started in
    assert " \\\n" in shown and "/tmp" not in shown.split(" ", 1)[1]
    assert command.split()[0] == shown.split()[0] and command.split()[0].startswith(
        "/"
    )  # the tool, by a path that runs
    env = without_the_tool_on_path(env)
    for typed in (command, shown):
        done = run_in_shell_text(typed, env, Path.cwd())
        assert done.returncode == 0, done.stderr
        again = json.loads(done.stdout)
        assert (again["rewards"], again["case"]) == (result.verdict.rewards, result.inputs.case)


async def test_copy_before_any_run_says_so(tmp_path):
    root = make_task(tmp_path / "tasks" / "none", None)
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("c")
        assert any("nothing has run yet" in n for n in app.notices)


async def test_copy_or_keep_during_the_first_run_does_not_ask_for_r(tmp_path, monkeypatch):
    """c and k while the first run was still going said "nothing has run
    yet: r runs", though a run was running (and r would start it over). They
    say the first run is still going."""
    monkeypatch.setenv("VERIFIER_TUI_SANDBOX", "copy")  # the gate is outside the task
    gate = Gate(tmp_path / "gate")
    gate.go.unlink()
    root = make_task(tmp_path / "tasks" / "slow", gate.verifier("def verify(workspace):\n    return 1.0\n"))
    app = make_app(root, watch=False)
    async with app.run_test(size=(160, 40)) as pilot:
        await asyncio.to_thread(gate.wait_for_run, 1)
        await pilot.press("c")
        await pilot.pause()
        assert app.notices[-1] == "nothing has run yet: the first run is still going", app.notices
        await pilot.press("k")
        await pilot.pause()
        said = widget_text(app, "StatusLine")
        assert "nothing has run yet to keep as a case: the first run is still going" in said, said
        gate.go.touch()
        await app.wait_for_runs(1)


async def test_edit_cannot_suspend_headless(example):
    app = make_app(example("hello-file"), case="missing-file", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("e")
        await pilot.pause()
        assert any(n.startswith("the editor needs the real terminal") for n in app.notices), app.notices
        assert any("hello-file/tests/verifier.py:28" in n for n in app.notices), app.notices
        # Still alive and running.
        await pilot.press("r")
        assert (await app.wait_for_runs(2)).inputs.case == "missing-file"


async def test_edit_without_an_editor_says_how(example, monkeypatch):
    monkeypatch.delenv("EDITOR", raising=False)
    app = make_app(example("hello-file"), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("e")
        await pilot.pause()
        # No traceback: the verifier opens at its verify.
        assert any("set $EDITOR" in n and "verifier.py:24" in n for n in app.notices), app.notices


async def test_debug_cannot_suspend_headless(example):
    app = make_app(example("hello-file"), case="missing-file", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("d")
        await pilot.pause(0.5)
        assert any(n.startswith("pdb needs the real terminal") for n in app.notices), app.notices
        assert not app.controller.live.paused
        await pilot.press("r")
        await app.wait_for_runs(2)


async def test_debug_with_no_frame_to_stop_in_says_so_on_the_screen(tmp_path):
    """d on a passing run suspended the app only to print "nothing to debug";
    on a verifier that does not compile, pdb opened in the runner's own frame
    (``run_verifier.py(364)load_verify()``): a SyntaxError has none of the task's."""
    root = make_task(tmp_path / "tasks" / "broken", "def verify(workspace):\n    return 1.0 +\n")
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("d")
        await pilot.pause(0.5)
        assert app.notices[-1] == "a SyntaxError has no frame to debug: e opens its line"
        assert not any(n.startswith("pdb needs the real terminal") for n in app.notices)
        assert "e opens the line)" in screen_text(app)  # the reward panel no longer offers d
        (root / "tests" / "verifier.py").write_text("def verify(workspace):\n    return 1.0\n")
        await pilot.press("r")
        await app.wait_for_runs(2)
        await pilot.press("d")
        await pilot.pause(0.5)
        assert app.notices[-1] == "verify returned without raising (exit 0): nothing to debug post-mortem"
        assert not any(n.startswith("pdb needs the real terminal") for n in app.notices)
        assert not app.controller.live.paused


async def test_debug_pressed_during_a_passing_run_says_so_on_the_screen(tmp_path, monkeypatch):
    """d pressed while a run was in flight waited for it, then left the
    screen for the terminal whatever it gave: a run that passed printed
    "nothing to debug post-mortem" there and asked for Enter. The run waited
    for is judged as d judges the run on screen."""
    monkeypatch.setenv("VERIFIER_TUI_SANDBOX", "copy")  # the gate is outside the task
    gate = Gate(tmp_path / "gate")
    root = make_task(tmp_path / "tasks" / "fine", gate.verifier("def verify(workspace):\n    raise ValueError\n"))
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)  # raised: the run before is not the one d judges
        verifier = root / "tests" / "verifier.py"
        verifier.write_text(verifier.read_text().replace("raise ValueError", "return 1.0"))
        gate.go.unlink()
        await pilot.press("r")
        await asyncio.to_thread(gate.wait_for_run, 2)
        await pilot.press("d")
        await wait_for(lambda: app.notices[-1:] == ["waiting for the run in flight to end…"], "d to say it waits")
        gate.go.touch()
        await app.wait_for_runs(2)
        await wait_for(lambda: not any(w.name == "debug under pdb" for w in app.main.workers), "d to give up")
        assert app.notices[-1] == "verify returned without raising (exit 0): nothing to debug post-mortem"
        assert not any(n.startswith("pdb needs the real terminal") for n in app.notices), app.notices


def slow_interpreter(tmp_path: Path) -> tuple[Path, Callable[[], None], Path, Path]:
    """A python that is slow (4 s) to answer once told to: its path, what tells it (and changes its import
    path, so that the next staging asks it again), and the files it makes as it starts and ends the wait."""
    extra, slow, started, done = (tmp_path / name for name in ("extra", "slow", "started", "done"))
    extra.mkdir()
    python = tmp_path / "bin" / "python"
    python.parent.mkdir()
    python.write_text(
        f"#!/bin/sh\nexport PYTHONPATH={extra}\n"
        f'if [ -e {slow} ]; then : >{started}; sleep 4; : >{done}; fi\nexec {sys.executable} "$@"\n'
    )
    python.chmod(0o755)

    def be_slow() -> None:
        slow.touch()
        (extra / "new.py").write_text("")

    return python, be_slow, started, done


def _app_whose_d_stages_slowly(tmp_path, **task):
    """An app on a task whose verify raises, run by :func:`slow_interpreter`; ``press_d(pilot)``
    presses d once the first run is over and returns once d's staging asks that interpreter; ``done``
    appears when it has answered."""
    python, be_slow, started, done = slow_interpreter(tmp_path)
    root = make_task(tmp_path / "tasks" / "raises", "def verify(workspace):\n    raise ValueError\n", **task)
    app = make_app(root, watch=False, python=str(python))

    async def press_d(pilot):
        await app.wait_for_runs(1)
        be_slow()
        await pilot.press("d")
        await wait_for(started.exists, "d to ask the interpreter")

    return app, press_d, done


async def test_d_keeps_the_screen_answering_while_it_stages_the_run(tmp_path):
    """d staged the run for pdb on the event loop: an interpreter probe (or an overlay tried in a
    throwaway view) that hung, each allowed 10 s, froze the screen until it ended. The screen says
    what d does and answers ? meanwhile; a key that would change what d stages (s) or drop it (b)
    does nothing until it is staged."""
    app, press_d, done = _app_whose_d_stages_slowly(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await press_d(pilot)
        assert not done.exists(), "the screen froze until staging was over"
        assert "d: staging the run for pdb" in widget_text(app, "StatusLine")
        await pilot.press("question_mark")
        await wait_for(lambda: app.screen is not app.main, "? to open the help")
        assert not done.exists()
        await pilot.press("escape", "s", "b")
        await pilot.pause()
        assert app.screen is app.main and not done.exists()
        await wait_for(lambda: not any(w.name == "debug under pdb" for w in app.main.workers), "d to end", 20)
        assert any(n.startswith("pdb needs the real terminal") for n in app.notices), app.notices
        assert "staging the run" not in widget_text(app, "StatusLine")
        assert not any(w.name == "run in both modes" for w in app.main.workers)


async def test_quitting_while_d_stages_its_run_leaves_no_scratch_folder(tmp_path):
    """q while d staged its run in a thread: the app removed its scratch folder, and the stage made
    after that was left behind. The app waits for the stage, then removes it all."""
    app, press_d, done = _app_whose_d_stages_slowly(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await press_d(pilot)
        scratch = app.session.scratch.root
        await pilot.press("q")
    await wait_for(done.exists, "the interpreter to answer")
    await asyncio.sleep(1)  # what a thread still staging would make by then
    assert not scratch.exists(), list(scratch.rglob("*"))[:5]


async def test_a_key_s_note_during_a_run_keeps_the_run_in_the_status_line(tmp_path, monkeypatch):
    """R on a task without its own runner (or A without cases, k with
    nothing to keep) while a run was in flight: its note took the place of
    "▶ running" in the status line, which then said nothing of the run still
    going until it ended. Both are said now."""
    monkeypatch.setenv("VERIFIER_TUI_SANDBOX", "copy")  # the gate is outside the task
    gate = Gate(tmp_path / "gate")
    root = make_task(tmp_path / "tasks" / "slow", gate.verifier("def verify(workspace):\n    return 1.0\n"))
    app = make_app(root, watch=False)
    async with app.run_test(size=(160, 40)) as pilot:
        await app.wait_for_runs(1)
        gate.go.unlink()
        await pilot.press("r")
        await asyncio.to_thread(gate.wait_for_run, 2)
        await pilot.press("R")
        await pilot.pause()
        said = widget_text(app, "StatusLine")
        assert "▶ running" in said and "R: this task ships no runner of its own" in said, said
        gate.go.touch()
        await app.wait_for_runs(2)
        await pilot.pause()
        said = widget_text(app, "StatusLine")
        assert "run #2" in said and "running" not in said and "R:" not in said, said


async def test_debug_without_verifier(tmp_path):
    app = make_app(make_task(tmp_path / "tasks" / "none", None), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("d", "e")
        await pilot.pause()
        assert any("no verifier to debug" in n for n in app.notices)
        assert any("no verifier to open" in n for n in app.notices)


async def test_command_palette_lists_and_runs_our_commands(example):
    app = make_app(example("hello-file"), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"run all cases")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await app.wait_for_runs(5)
        assert {r.inputs.case for r in app.finished[1:]} == {"correct", "missing-file", "wrong-case", "wrong-text"}


async def _palette_hits(app, pilot, words: str) -> list[str]:
    """What the command palette lists for ``words`` typed in it (then closed)."""
    await pilot.press("ctrl+p")
    await wait_for(lambda: isinstance(app.screen, CommandPalette), "the palette open")
    await pilot.press(*words)
    await pilot.pause(0.3)  # the palette searches as a worker, its hits a moment later
    await pilot.pause()
    hits = app.screen.query_one(CommandList)
    shown = [str(hits.get_option_at_index(i).prompt) for i in range(hits.option_count)]
    await pilot.press("escape")
    await wait_for(lambda: app.screen is app.main, "the palette closed")
    return shown


async def test_the_palettes_maximize_gives_the_cases_and_the_history_the_whole_screen(example):
    """Maximize kept a sidebar's width (24%, 36 columns at most) and the cases list's few rows: the
    cases came out a box of 26x6 at 100x30, in a screen of hatching, smaller than before."""
    app = make_app(example("hello-file"), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        for name in ("#cases", "#history"):
            widget = app.main.query_one(name)
            await palette_maximizes(app, pilot, widget)
            assert widget.region.size == (SIZE[0], SIZE[1] - 1), (name, widget.region)  # all but the footer
            await pilot.press("escape")
            await wait_for(lambda: app.main.maximized is None, "back to the whole screen")


async def test_the_palettes_quit_names_its_key_and_the_tool_as_every_other_command(example):
    # Every command in the palette named its key ("Run all cases  (a)") but Quit, which was Textual's:
    # "Quit", "Quit the application as soon as possible", where the help says q, "Quit verifier-tui".
    app = make_app(example("hello-file"), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        hits = await _palette_hits(app, pilot, "quit")
    assert [hit for hit in hits if hit.startswith("Quit")] == ["Quit  (q)\nQuit verifier-tui"], hits


async def test_the_palette_offers_back_to_the_latest_run_only_on_an_older_run(example):
    # The palette offered "Back to the latest run" on the latest run itself, where it (and esc) did nothing.
    app = make_app(example("hello-file"), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        assert not any("Back to the latest run" in hit for hit in await _palette_hits(app, pilot, "latest run"))
        await pilot.press("r")
        await app.wait_for_runs(2)
        app.main.query_one("#history", OptionList).focus()
        await pilot.press("down", "enter")  # the older run
        await pilot.pause()
        assert app.main.viewing is not None
        assert any("Back to the latest run" in hit for hit in await _palette_hits(app, pilot, "latest run"))
        await pilot.press("escape")  # esc goes back, and the palette no longer offers it
        await pilot.pause()
        assert app.main.viewing is None
        assert not any("Back to the latest run" in hit for hit in await _palette_hits(app, pilot, "latest run"))


async def test_every_key_is_in_the_footer_and_the_palette(example):
    app = make_app(example("hello-file"), watch=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await app.wait_for_runs(1)
        await pilot.pause()
        footer = screen_text(app).splitlines()[-1]
        titles = [c.title for c in app.get_system_commands(app.main)]
        for binding in MainScreen.BINDINGS:
            shown, title = app.get_key_display(binding), binding.tooltip.split("\n")[0]
            if "toggle_runner" in binding.action or binding.action == "no_own_runner":
                continue  # only for a task that ships its own runner (tests/tui/test_recognition_tui.py)
            if "choose_step" in binding.action or binding.action == "no_steps":
                continue  # only for a multi-step task (tests/tui/test_choosing.py::test_shift_s_chooses_a_step_...)
            if binding.action == "show_output('stderr')":
                continue  # o names the stream it shows next: stdout while stderr is shown
            if binding.action == "latest":
                continue  # only on a run picked in the history (test_the_palette_offers_back_to_the_latest_run_...)
            if binding.show:  # ? and esc are left out of the footer, which must fit 100 columns
                assert f"{shown} " in footer, shown
            if binding.action != "app.quit":
                assert f"{title}  ({shown})" in titles
        assert "choose" in footer and "^p palette" in footer


async def test_q_quits(example):
    app = make_app(example("hello-file"))
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running


# -- the plain helpers behind e and d -----------------------------------------------------------------


def test_editor_command_forms(tmp_path):
    path = tmp_path / "v.py"
    assert editor_command(path, 7, {"EDITOR": "vim"}) == ["vim", "+7", "--", str(path)]
    assert editor_command(path, 7, {"EDITOR": "emacs -nw"}) == ["emacs", "-nw", "+7", str(path)]
    assert editor_command(path, 7, {"EDITOR": "code --wait"}) == ["code", "--wait", "--goto", f"{path}:7"]
    assert editor_command(path, 7, {"VISUAL": "nano", "EDITOR": "vim"})[0] == "nano"
    assert editor_command(path, 7, {}) is None


async def test_failing_location_prefers_the_task_frame(example):
    root = example("hello-file")
    app = make_app(root, case="missing-file", watch=False)
    async with app.run_test(size=SIZE):
        result = await app.wait_for_runs(1)
        path, line = failing_of(result).location
        assert path == root / "tests" / "verifier.py" and line == 28
        assert verify_line(path) == 24


def under_pdb(prepared, typed: str) -> subprocess.CompletedProcess:
    """The run under pdb as the ``d`` key starts it, answered with ``typed``."""
    from verifier_tui.engine.process import popen

    command = pdb_command(prepared.argv)
    proc = popen(
        command,
        attach=prepared.attached,
        cwd=prepared.cwd,
        env=prepared.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = proc.communicate(typed, timeout=60)
    finally:
        if prepared.attached is not None:
            prepared.attached.close()
    return subprocess.CompletedProcess(command, proc.returncode, out, err)


def test_pdb_command_stops_post_mortem_in_the_verifier(example):
    session = Session(example("hello-file"))
    session.select_case_named("missing-file")
    try:
        done = under_pdb(session.prepare(session.spec()), "p workspace.name\nq\n")
    finally:
        session.close()
    assert "pdb post-mortem" in done.stderr
    assert "(Pdb)" in done.stdout
    assert "'app'" in done.stdout  # evaluated in verify's frame: workspace is the staged /app
    assert done.returncode == 1


def test_pdb_command_on_a_passing_run_says_nothing_to_debug(example):
    session = Session(example("hello-file"))
    try:
        done = under_pdb(session.prepare(session.spec()), "")
    finally:
        session.close()
    assert done.returncode == 0
    assert "nothing to debug" in done.stderr


def test_an_editor_that_fails_is_said_and_waits_for_enter(monkeypatch, capsys):
    """``EDITOR=false``: the app came back at once and nothing said the editor failed."""
    import contextlib
    import io
    import types

    from verifier_tui.tui.real_terminal import run_suspended

    app = types.SimpleNamespace(suspend=contextlib.nullcontext)
    monkeypatch.setattr("sys.stdin", io.StringIO("\n"))
    assert run_suspended(app, ["false"], banner="opening v.py")  # type: ignore[arg-type]
    said = capsys.readouterr().out
    assert "verifier-tui: false exited 1" in said and "press Enter to return" in said
    run_suspended(app, ["true"], banner="opening v.py")  # type: ignore[arg-type]
    assert "press Enter" not in capsys.readouterr().out


async def test_debug_under_step_says_the_step_s_tests_are_laid_over_tests(tmp_path, monkeypatch):
    """d under --step NAME: the banner over pdb said '/tests is a copy of
    TASK/tests' while the verifier and helper pdb stopped in were the step's
    own (steps/NAME/tests, laid over tests/ as Harbor uploads it)."""
    import verifier_tui.tui.screens.main as main_screen

    toml = '[[steps]]\nname = "first"\n\n[[steps]]\nname = "second"\n'
    root = make_task(tmp_path / "tasks" / "ms", "def verify(workspace):\n    return 1.0\n", toml=toml)
    own = root / "steps" / "second" / "tests"
    own.mkdir(parents=True)
    (own / "verifier.py").write_text("def verify(workspace):\n    raise ValueError('step')\n")
    banners: list[str] = []
    monkeypatch.setattr(
        main_screen, "run_suspended", lambda app, command, banner="", **_: banners.append(banner) or True
    )
    app = make_app(root, watch=False, step="second")
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("d")
        await wait_for(lambda: banners, "pdb to be started")
    assert f"is a copy of {root / 'tests'} with {own} laid over it" in banners[0], banners


async def test_debug_on_a_run_that_timed_out_says_so_on_the_screen(tmp_path, monkeypatch):
    """d on a run that timed out left the screen to re-run the stuck verifier
    in the terminal, for ever: ctrl+c ended the sandbox with it, no traceback
    and no pdb, only 'press Enter to return'."""
    import verifier_tui.tui.screens.main as main_screen

    started: list[list[str]] = []
    monkeypatch.setattr(main_screen, "run_suspended", lambda app, command, **_: started.append(command) or True)
    toml = "[verifier]\ntimeout_sec = 1.0\n"
    root = make_task(tmp_path / "tasks" / "stuck", "def verify(workspace):\n    while True:\n        pass\n", toml=toml)
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        result = await app.wait_for_runs(1, timeout=30)
        assert result is not None and result.outcome.value == "timed out"
        await pilot.press("d")
        await pilot.pause(0.5)
    assert started == [], started
    assert app.notices[-1].startswith("the run timed out: verify never raised"), app.notices


async def test_a_dialog_s_footer_is_worded_in_lower_case_as_every_other_footer(example):
    """The choosers', the command's and the response editor's footers read
    "esc Cancel", "esc Close", "^t Text / JSON" while every screen's footer
    is in lower case ("r run", "q quit")."""
    app = make_app(example("count-errors"), case="harbor-mode", watch=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await app.wait_for_runs(1)
        footers = []
        for keys in (("s",), ("c",), ("v", "end", "enter"), ("p", "down", "enter")):
            await pilot.press(*keys)
            await wait_for(lambda: app.screen is not app.main and app.screen.is_mounted, "the dialog open")
            await pilot.pause()
            footers.append(screen_text(app).splitlines()[-1])
            await pilot.press("escape")
            await wait_for(lambda: app.screen is app.main, "the dialog closed")
    chooser, command, picker, editor = (" ".join(footer.split()) for footer in footers)
    assert chooser.startswith("esc cancel"), chooser
    assert command.startswith("esc close"), command
    assert picker.startswith("esc cancel"), picker
    assert "esc close editor" in editor and "^t text / JSON" in editor, editor


async def test_at_160_columns_the_task_screen_s_footer_shows_keep_coverage_and_help_too(example):
    """k, g and ? were left out of the footer for it to fit 100 columns, and out of it at
    160 too, with a third of the line empty: a wide footer shows them; the palette lists
    each once; at 100 columns the footer still ends with q quit."""
    app = make_app(example("hello-file"), watch=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await app.wait_for_runs(1)
        await pilot.pause()
        footer = " ".join(screen_text(app).splitlines()[-1].split())
        for word in ("k keep", "g coverage", "? help", "q quit"):
            assert word in footer, footer
        titles = [c.title for c in app.get_system_commands(app.main)]
        assert titles.count("Keep this run as a case  (k)") == 1, titles
        await pilot.resize_terminal(100, 30)
        await pilot.pause()
        footer = " ".join(screen_text(app).splitlines()[-1].split())
        assert "k keep" not in footer and "q quit" in footer, footer


async def test_the_help_s_footer_names_its_own_keys_not_the_screen_s_beneath(example):
    """? over a task's screen: the footer under the help still read "r run w watch … q quit",
    keys the help does not take (r did nothing), where every other dialog's footer names its own."""
    from verifier_tui.tui.screens.help import HelpScreen

    app = make_app(example("hello-file"), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("question_mark")
        await wait_for(lambda: isinstance(app.screen, HelpScreen), "the help open")
        await pilot.pause()
        footer = " ".join(screen_text(app).splitlines()[-1].split())
        assert footer.startswith("esc close") and "r run" not in footer, footer


async def test_a_case_chosen_in_the_list_while_d_stages_changes_nothing(tmp_path):
    """The cases list's enter reaches the screen by a message, not a key check_action holds: while
    d stages its run, choosing another case there leaves the case d staged, and says why."""
    from verifier_tui.tui.widgets.cases_list import CasesList

    app, press_d, _done = _app_whose_d_stages_slowly(tmp_path, cases={"one": {"a.txt": "1"}, "two": {"b.txt": "2"}})
    async with app.run_test(size=SIZE) as pilot:
        await press_d(pilot)
        before = app.main.session.case.name
        cases = app.main.query_one(CasesList)
        cases.focus()
        await pilot.pause()
        cases.highlighted = next(i for i, o in enumerate(cases.options) if o.id != before)
        await pilot.press("enter")
        await pilot.pause()
        assert app.main.session.case.name == before
        assert any("d is staging its run" in n for n in app.notices), app.notices[-3:]
