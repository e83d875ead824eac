"""Issue 43's keys on a task's screen, driven through the real app: Ctrl+C
quits as q does, every case on save, a run kept as a case, and what b, o, R,
a typed response and the header say."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

import pytest
from textual.widgets import Input, OptionList, TextArea

from tests.helpers.tasks import Gate, make_task
from tests.tui.app_under_test import (
    SIZE,
    AppUnderTest,
    history_text,
    make_app,
    report_change,
    screen_text,
    started_processes,
    still_there,
    wait_for,
    widget_text,
)
from verifier_tui.engine.procfs import descendants
from verifier_tui.engine.session import Options, Session
from verifier_tui.tui.app import VerifierApp
from verifier_tui.tui.messages import CasesOutdated, VerdictStale
from verifier_tui.tui.screens.case_name import CaseNameScreen
from verifier_tui.tui.screens.response_editor import EDIT_PAUSE_S, ResponseEditorScreen
from verifier_tui.tui.widgets.history_list import HistoryList

SLOW = "import time\n\ndef verify(workspace):\n    time.sleep(60)\n    return 1.0\n"


class HeldCopy:
    """``keep_case`` (k's copy of a run's workspace) held until the test
    lets it go: ``copying`` once it started, ``copied`` once it ended."""

    def __init__(self, monkeypatch) -> None:
        import threading

        from verifier_tui.engine import keep_case as keeping

        self.copying, self.release, self.copied = threading.Event(), threading.Event(), threading.Event()
        real = keeping.keep_case

        def slow_copy(*args, **kwargs):
            self.copying.set()
            self.release.wait(10)
            try:
                return real(*args, **kwargs)
            finally:
                self.copied.set()

        monkeypatch.setattr(keeping, "keep_case", slow_copy)


@pytest.fixture
def held_copy(monkeypatch) -> HeldCopy:
    return HeldCopy(monkeypatch)


async def keep_as(app, pilot, name: str) -> None:
    """k on the run shown, the case named ``name``, enter."""
    await pilot.press("k")
    await pilot.pause()
    app.screen.query_one(Input).value = name
    await pilot.press("enter")


def marks(app) -> dict[str, str]:
    """Each case's line in the cases list, as shown."""
    cases = app.main.query_one("#cases", OptionList)
    return {
        str(cases.get_option_at_index(i).id): str(cases.get_option_at_index(i).prompt).strip()
        for i in range(cases.option_count)
    }


async def test_ctrl_c_quits_and_ends_the_run_in_flight(tmp_path):
    root = make_task(tmp_path / "tasks" / "slow", SLOW)
    before = descendants(os.getpid())
    started: dict[int, str] = {}

    def runner_started() -> bool:
        started.update(started_processes(before))
        return any("run_verifier.py" in command for command in started.values())

    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(runner_started, "the run's runner")
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert not app.is_running
        assert not any("Do you want to quit" in notice for notice in app.notices)  # Textual's own notice is gone
    await wait_for(lambda: not still_there(started), f"every process of {started} ended", timeout=5)


@pytest.mark.parametrize("keys", [["question_mark"], ["k", "a", "b", "c"], ["f"], ["ctrl+p"]])
async def test_ctrl_c_quits_from_help_a_dialog_a_chooser_and_the_palette(example, keys):
    """Their text fields and screens took ctrl+c as "copy", with nothing selected:
    the README promises it quits on every screen."""
    app = make_app(example("hello-file"), case="correct", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press(*keys)
        await pilot.pause()
        assert len(app.screen_stack) > 1  # something is open over the main screen
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert not app.is_running


async def test_every_case_on_save_runs_every_case_and_says_so(example):
    root = example("hello-file")
    app = make_app(root, case="correct", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.pause()
        assert "· every case" not in widget_text(app, "#status")
        assert "· missing-file" in marks(app)["missing-file"]  # not run yet
        await pilot.press("A")
        await app.wait_for_runs(5)  # turned on: every case runs once
        await pilot.pause()
        assert "every case on save" in widget_text(app, "#status")
        assert {r.inputs.case for r in app.finished[1:5]} == {"correct", "missing-file", "wrong-case", "wrong-text"}
        shown = marks(app)
        assert shown["correct"].startswith("✓") and shown["missing-file"].startswith("✓"), shown
        # A save to the verifier re-runs every case, not only the chosen one.
        app.controller.live.set_live_reload(True)  # as with live reload on, without a watcher
        report_change(app, [root / "tests" / "verifier.py"])
        await app.wait_for_runs(9)
        assert {r.inputs.case for r in app.finished[5:9]} == {"correct", "missing-file", "wrong-case", "wrong-text"}
        assert all(r.trigger == "verifier.py" for r in app.finished[5:9])
        await pilot.press("A")
        await pilot.pause()
        assert "every case on save" not in widget_text(app, "#status")
        (root / "tests" / "verifier.py").touch()  # saved again (a file left as the last run read it runs nothing)
        report_change(app, [root / "tests" / "verifier.py"])
        result = await app.wait_for_runs(10)
        assert result.inputs.case == "correct"
        await asyncio.sleep(0.5)
        assert len(app.finished) == 10  # off again: the chosen case alone


async def test_k_keeps_the_run_as_a_case_and_refuses_a_taken_name_in_its_dialog(example):
    root = example("hello-file")
    app = make_app(root, case="wrong-text", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        result = await app.wait_for_runs(1)
        await pilot.press("k")
        await pilot.pause()
        assert isinstance(app.screen, CaseNameScreen)
        # A name refused is said in the dialog, which keeps what was typed to mend (it closed, losing it).
        for typed, said in (
            ("correct", "the task already has a case correct"),
            ("a::b", "a case name cannot hold '::'"),
            ("", "type a name for the case"),
        ):
            app.screen.query_one(Input).value = typed
            await pilot.press("enter")
            await pilot.pause()
            assert isinstance(app.screen, CaseNameScreen) and app.screen.query_one(Input).value == typed
            problem = str(app.screen.query_one("#case-name-problem").render())
            assert said in problem and "--save-case" not in problem and "\n" not in problem.strip()
        app.screen.query_one(Input).value = "kept-wrong"
        await pilot.press("enter")
        await wait_for(lambda: "kept as case" in widget_text(app, "#status"), "the kept case said")
        status = widget_text(app, "#status")
        assert "kept as case kept-wrong in hello-file/cases/kept-wrong" in status
        expected = json.loads((root / "cases" / "kept-wrong" / "expected.json").read_text())
        assert expected == {"rewards": result.verdict.rewards}
        assert "kept-wrong" in marks(app)  # the list shows the new case at once
        # esc in the prompt keeps nothing.
        await pilot.press("k")
        await pilot.pause()
        await pilot.press(*"never", "escape")
        await pilot.pause()
        assert not (root / "cases" / "never").exists()


async def test_k_refuses_a_run_whose_workspace_is_gone_since(tmp_path):
    """The run's workspace deleted after the run, k wrote a case with an empty workspace beside the
    verdict of a run that read hello.txt, its note naming the workspace by its absolute path. k now
    says why it keeps nothing, the workspace named as the screen names paths, and writes nothing."""
    verifier = "def verify(workspace):\n    return float((workspace / 'hello.txt').read_text() == 'hi')\n"
    root = make_task(tmp_path / "tasks" / "t", verifier)
    workspace = tmp_path / "tasks" / "ws"
    workspace.mkdir()
    (workspace / "hello.txt").write_text("hi")
    app = make_app(root, watch=False, workspace=workspace)
    async with app.run_test(size=SIZE) as pilot:
        result = await app.wait_for_runs(1)
        assert result.verdict.rewards == {"reward": 1.0}
        shutil.rmtree(workspace)
        await keep_as(app, pilot, "kept")
        await wait_for(lambda: "not kept" in widget_text(app, "#status"), "the refusal said")
        status = " ".join(widget_text(app, "#status").split())
    assert "the run's workspace, ws, is no longer a folder" in status, status
    assert not (root / "cases").exists()


async def test_k_copying_a_big_workspace_leaves_the_screen_alive(example, held_copy):
    """k copied the workspace on the app's loop: a workspace of 20,000 files
    (2.4 s here) froze the screen, a save meanwhile ran nothing and the
    running clock stood still, until the copy was done. The copy is held
    here until the test lets it go; meanwhile a save runs and its verdict
    is shown."""
    root = example("hello-file")
    copying, release, copied = held_copy.copying, held_copy.release, held_copy.copied
    app = make_app(root, case="wrong-text")  # live reload on: a save runs
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await keep_as(app, pilot, "kept-slowly")
        await wait_for(copying.is_set, "the copy started")
        try:
            report_change(app, [root / "tests" / "verifier.py"])
            result = await app.wait_for_runs(2)
            assert not copied.is_set(), "the save ran only once the copy was done: the screen was frozen"
            assert result.trigger == "verifier.py"
        finally:
            release.set()
        await wait_for(lambda: "kept as case" in widget_text(app, "#status"), "the kept case said")
        assert (root / "cases" / "kept-slowly" / "workspace" / "hello.txt").is_file()


async def test_k_while_a_run_is_being_kept_says_so_and_keeps_one_at_a_time(example, held_copy):
    """While k copied (seconds, for a big workspace) nothing was said; a
    second k with the same name passed the check for a taken name (the first
    was still a hidden scratch folder) and then failed with a bare "File exists"."""
    root = example("hello-file")
    copying, release = held_copy.copying, held_copy.release
    app = make_app(root, case="wrong-text", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await keep_as(app, pilot, "kept")
        try:
            await wait_for(copying.is_set, "the copy started")
            await pilot.pause()
            assert "keeping run #1 as case kept…" in widget_text(app, "#status")
            await pilot.press("k")  # again, while the first is copied: no second dialog, said why
            await pilot.pause()
            assert not isinstance(app.screen, CaseNameScreen)
            assert "still keeping run #1 as case kept…: k again once it is kept" in widget_text(app, "#status")
        finally:
            release.set()
        await wait_for(lambda: "kept as case" in widget_text(app, "#status"), "the kept case said")
        assert "kept as case kept in hello-file/cases/kept" in widget_text(app, "#status")


async def test_a_case_of_the_same_name_made_while_k_copies_is_said_in_words(example, monkeypatch):
    """Another ``run --save-case kept`` finished while k copied: the rename
    failed, said as a bare "File exists" on a hidden scratch folder."""
    from verifier_tui.engine import keep_case as keeping

    root = example("hello-file")
    real = keeping._fill

    def fill_while_another_keeps(*args, **kwargs):
        (root / "cases" / "kept" / "workspace").mkdir(parents=True)  # the other one, done first
        return real(*args, **kwargs)

    monkeypatch.setattr(keeping, "_fill", fill_while_another_keeps)
    app = make_app(root, case="wrong-text", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await keep_as(app, pilot, "kept")
        await wait_for(lambda: "not kept" in widget_text(app, "#status"), "the failure said")
        status = " ".join(widget_text(app, "#status").split())
        assert "the run was not kept as case kept: the task already has a case kept" in status, status
        assert "choose another name; nothing was written" in status and ".saving-" not in status, status
        assert [p.name for p in (root / "cases").iterdir() if p.name.startswith(".")] == []


async def test_after_b_every_surface_names_the_same_run_and_esc_returns_to_it(example):
    app = make_app(example("count-errors"), case="response-json", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        for mode in ("server", "harbor"):
            if mode == "harbor":
                count = len(app.finished)
                await pilot.press("m")
                await app.wait_for_runs(count + 1)
            before = app.session.sequence
            await pilot.press("b")
            newest = before + 2
            await wait_for(
                lambda: app.session.sequence == newest and "both modes" in widget_text(app, "#reward-body"),  # noqa: B023 - awaited in the loop
                "b's runs",
            )
            await pilot.pause()
            assert app.main.latest.sequence == newest and app.main.latest.mode == mode
            assert f"run #{newest} " in widget_text(app, "#status")
            assert f"run #{newest}\n" in widget_text(app, "#reward-body")
            assert screen_text(app).count(f"#{newest}") >= 2  # the history's top row too
            app.main.query_one(HistoryList).focus()
            await pilot.press("down", "enter")  # another run from the history
            await pilot.pause()
            assert f"run #{newest - 1} from the history" in widget_text(app, "#reward-body")
            await pilot.press("escape")
            await pilot.pause()
            assert f"run #{newest}\n" in widget_text(app, "#reward-body")


async def test_o_names_the_stream_it_shows_next_and_r_says_why_it_does_nothing(example):
    app = make_app(example("hello-file"), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.pause()
        assert "o stdout" in screen_text(app).splitlines()[-1]
        await pilot.press("o")
        await pilot.pause()
        footer = screen_text(app).splitlines()[-1]
        assert "o stderr" in footer and "o stdout" not in footer
        await pilot.press("R")
        await pilot.pause()
        assert "this task ships no runner of its own" in widget_text(app, "#status")
        assert len(app.finished) == 1
        await pilot.press("b")  # b's runs replace the note with their outcome, as any run does
        await wait_for(lambda: "run #2 " in widget_text(app, "#status"), "b's run on the status line")
        assert "ships no runner" not in widget_text(app, "#status")


async def test_a_typed_response_follows_live_reload(example):
    app = make_app(example("count-errors"), case="harbor-mode", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("p", "down", "enter")  # "type plain text"
        assert isinstance(app.screen, ResponseEditorScreen)
        app.screen.query_one(TextArea).replace("3", (0, 0), app.screen.query_one(TextArea).document.end)
        await pilot.pause(EDIT_PAUSE_S * 3)
        assert len(app.finished) == 1  # live reload off: nothing ran
        assert "stale: the typed response changed since this run" in widget_text(app, "#status")
        await pilot.press("escape", "w")  # live reload on: what changed meanwhile runs
        result = await app.wait_for_runs(2)
        assert result.trigger in ("response edited", "live reload on") and result.inputs.response is not None
        assert result.inputs.response.text == "3"


async def test_the_readmes_first_example_names_the_task_in_the_header(monkeypatch):
    """``verifier-tui examples/tasks/hello-file`` from the checkout, as the README's first command."""
    checkout = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    monkeypatch.chdir(checkout)
    app = VerifierApp(Session("examples/tasks/hello-file", Options()), watch=False, deterministic=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert widget_text(app, "#header").startswith("hello-file · verifier examples/tasks/hello-file/tests/")


async def test_a_case_whose_expected_json_is_unusable_says_so_in_the_list(example):
    """It was shown as a case without one (•, "no expected.json"), where
    ``test`` fails on it: a broken test looked like an unjudged case."""
    root = example("hello-file")
    (root / "cases" / "wrong-text" / "expected.json").write_text('{"rewards": {"reward": NaN}}')
    app = make_app(root, case="correct", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.pause()
        shown = marks(app)
        assert shown["wrong-text"].endswith("expected.json unusable")
        assert "unusable" not in shown["correct"]


async def test_b_on_a_case_without_a_response_keeps_its_expected_json(example):
    """A case with no response is its Harbor-mode run: b judged neither run by
    its expected.json, and the list turned its ✓ into ! (no expectation)."""
    app = make_app(example("hello-file"), case="missing-file", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.pause()
        assert marks(app)["missing-file"].startswith("✓")
        before = app.session.sequence
        await pilot.press("b")
        await wait_for(lambda: app.session.sequence == before + 1, "b's Harbor-mode run")
        await pilot.pause()
        assert marks(app)["missing-file"].startswith("✓"), marks(app)


async def test_a_note_longer_than_the_status_line_is_read_whole_at_100_columns(example):
    """R's note on a task without its own runner, at 100x30 with live reload off: it was cut
    after "verifier-tui's", and nothing showed the rest."""
    app = make_app(example("hello-file"), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("R")
        await pilot.pause()
        shown = " ".join(line.strip() for line in screen_text(app).splitlines())
        assert "(no tests/.ng/run_verifier.py); verifier-tui's runs it" in shown
        await pilot.press("r")  # the next run's outcome replaces it, whole too (its case's name was cut)
        await app.wait_for_runs(2)
        await pilot.pause()
        shown = " ".join(line.strip() for line in screen_text(app).splitlines())
        assert "ships no runner" not in shown and "reward written ·" in shown and "· correct" in shown


async def test_a_runs_outcome_is_read_whole_when_other_cases_ran_after_it(tmp_path):
    """With every case on save (A) and live reload off at 100x30, another
    case's run ended after the chosen one's: the line stayed as high as the
    one-line "running" it showed meanwhile, and the outcome was cut after
    "exit 0 ·", its duration and case's name lost."""
    from verifier_tui.tui.widgets.status_line import StatusLine

    verifier = (
        "import time\n\ndef verify(workspace):\n"
        "    if (workspace / 'slow').exists():\n        time.sleep(0.5)\n    return 1.0\n"
    )
    task = make_task(tmp_path / "t", verifier, cases={"a-case-with-a-rather-long-name": {}, "b-slow": {"slow": ""}})
    app = make_app(task, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("A")  # runs every case at once: b-slow's ends last
        await app.wait_for_runs(3)
        await pilot.pause()
        assert app.finished[-1].inputs.case == "b-slow"
        status = app.screen.query_one(StatusLine)
        shown = " ".join(line.strip() for line in screen_text(app).splitlines())
        assert "every case on save" in shown and "· a-case-with-a-rather-long-name" in shown, shown
        assert status.size.height == 2


async def test_q_while_k_copies_says_what_it_waits_for(example, held_copy, capfd):
    """q while k copied a big workspace: the screen went and verifier-tui
    waited for the copy, with no word of why it did not end."""
    root = example("hello-file")
    copying, release = held_copy.copying, held_copy.release
    app = make_app(root, case="wrong-text", watch=False)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await app.wait_for_runs(1)
            await keep_as(app, pilot, "kept")
            await wait_for(copying.is_set, "the copy started")
            await pilot.press("q")
    finally:
        release.set()
    said = " ".join(capfd.readouterr().err.split())
    assert "keeping run #1 as case kept…: verifier-tui ends once it is written" in said, said


async def test_b_says_each_modes_notes_contract_problems_and_expected_json_as_run_both_modes_does(example):
    """b said only how each mode went and the finding, where ``run --both-modes``
    also says, under each mode, its notes, its contract problems and whether
    the case's expected.json matched: here the case's own run misses it."""
    root = example("count-errors")
    (root / "cases" / "response-json" / "expected.json").write_text('{"rewards": {"reward": 0.5}}')
    app = make_app(root, case="response-json", watch=False)
    async with app.run_test(size=(160, 60)) as pilot:
        await app.wait_for_runs(1)
        shown = await _b_said(app, pilot)
        for said in (
            "✓ environment-server mode (with a response): exit 0 · reward written",
            'expected {"rewards": {"reward": 0.5}}: DID NOT MATCH',
            "✗ Harbor mode (no response): exit 2 · contract error",
            "note: the case's expected.json is not applied: its response is not in use",
            "contract: verify requires 'response' without a default",
        ):
            assert said in shown, (said, shown)


@pytest.mark.parametrize(
    ("returned", "line"),
    [
        (
            '{"exact": 1.0, "words": 1.0 if response is None else 0.5}',
            'environment-server mode ✓ {"exact": 1.0, "words": 0.5} · Harbor mode ✓ {"exact": 1.0, "words": 1.0}',
        ),
        (
            '{"score" if response is None else "reward": 1.0}',
            'environment-server mode ✓ 1.0 · Harbor mode ✓ {"score": 1.0}',
        ),
    ],
    ids=["several-keys", "a-lone-key-not-reward"],
)
async def test_b_s_line_shows_each_modes_rewards_as_they_differ(tmp_path, returned, line):
    """b's line named each mode's first reward value alone: two modes that scored {"exact": 1.0,
    "words": 0.5} and {"exact": 1.0, "words": 1.0}, or {"reward": 1.0} and {"score": 1.0}, read
    "environment-server mode ✓ 1.0 · Harbor mode ✓ 1.0", the same score, above a finding that they
    score otherwise. Several keys are shown as JSON, and only a lone ``reward`` bare."""
    verifier = f"def verify(workspace, response=None):\n    return {returned}\n"
    root = make_task(tmp_path / "tasks" / "keys", verifier, cases={"c": {"a.txt": "x"}})
    (root / "cases" / "c" / "response.json").write_text(json.dumps({"output": []}))
    app = make_app(root, case="c", watch=False)
    async with app.run_test(size=(160, 60)) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("b")
        await wait_for(lambda: "both modes:" in widget_text(app, "#reward-body"), "b's runs")
        shown = " ".join(widget_text(app, "#reward-body").split())
        assert f"both modes: {line}" in shown, shown


async def _b_said(app, pilot) -> str:
    """b pressed, and what the reward panel says once its runs end, on one line."""
    await pilot.press("b")
    await wait_for(lambda: "both modes" in widget_text(app, "#reward-body"), "b's runs")
    await pilot.pause()
    return " ".join(widget_text(app, "#reward-body").split())


def _gated_task_app(tmp_path, monkeypatch, name: str) -> tuple[Gate, AppUnderTest]:
    """An app, live reload off, on a task whose verifier returns 1.0 once the gate lets it; the copy
    sandbox, as the gate is outside the task."""
    monkeypatch.setenv("VERIFIER_TUI_SANDBOX", "copy")
    gate = Gate(tmp_path / "gate")
    root = make_task(tmp_path / "tasks" / name, gate.verifier("def verify(workspace):\n    return 1.0\n"))
    return gate, make_app(root, watch=False)


async def test_b_says_it_is_running_while_its_runs_go(tmp_path, monkeypatch):
    """b ran both modes without a word: for as long as its runs took, the
    status line still showed the run before, no ▶ running, as if the key had
    done nothing. Now it says what runs, as r does, until b's runs end."""
    gate, app = _gated_task_app(tmp_path, monkeypatch, "slow")
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        gate.go.unlink()
        await pilot.press("b")
        await wait_for(lambda: gate.runs() == 2, "b's run at the gate")
        await pilot.pause()
        said = widget_text(app, "StatusLine")
        assert "▶ running the current choices after both modes" in said, said
        gate.go.touch()
        await wait_for(lambda: "both modes" in widget_text(app, "#reward-body"), "b's runs")
        await pilot.pause()
        said = widget_text(app, "StatusLine")
        assert "running" not in said and "run #2" in said, said


@pytest.mark.parametrize(
    ("key", "done", "ran"),
    [
        ("d", "verify returned without raising (exit 0): nothing to debug post-mortem", "the run d waited for"),
        ("b", "both modes", "b's runs"),
    ],
)
async def test_r_while_b_or_d_waits_for_a_stuck_run_cuts_it_short_at_once(tmp_path, monkeypatch, key, done, ran):
    """b or d pressed during a run stuck in a loop waited for that run to time out (60 s in a task
    `new` writes), holding r and every save meanwhile: no key did anything until then, b said
    nothing, and d then said the run timed out with nothing to debug. Both say they wait, r cuts
    the stuck run short at once, as without them, and they wait for the run that took its place."""
    gate, app = _gated_task_app(tmp_path, monkeypatch, "stuck")
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        gate.go.unlink()
        await pilot.press("r")
        await asyncio.to_thread(gate.wait_for_run, 2)
        await pilot.press(key)
        await wait_for(lambda: app.notices[-1:] == ["waiting for the run in flight to end…"], "the key to say it waits")
        await pilot.press("r")
        await wait_for(lambda: gate.runs() == 3, "r's run, the stuck one cut short", 10)
        gate.go.touch()
        await wait_for(lambda: done in (app.notices[-1] + widget_text(app, "#reward-body")), ran)
        assert [result.trigger for result in app.finished] == ["start", "r key"]  # then b's own runs, if b


async def _b_held_at_the_gate(app, pilot, gate: Gate) -> int:
    """After the first run, b pressed and its first run held at the gate; the run number before b's."""
    await app.first_run_and_watcher()
    before = app.session.sequence
    gate.go.unlink()
    await pilot.press("b")
    await wait_for(lambda: gate.runs() == 2, "b's first run at the gate")
    return before


def _gated_two_mode_task(tmp_path, monkeypatch, name: str, reward: float) -> tuple[Gate, Path]:
    """A task whose verifier scores ``reward`` once the gate lets it, and a case c with a response,
    so b has two modes to run; the copy sandbox, as the gate is outside the task."""
    monkeypatch.setenv("VERIFIER_TUI_SANDBOX", "copy")
    gate = Gate(tmp_path / "gate")
    root = make_task(
        tmp_path / "tasks" / name,
        gate.verifier(f"def verify(workspace):\n    return {reward}\n"),
        cases={"c": {"a.txt": "x"}},
    )
    (root / "cases" / "c" / "response.json").write_text(json.dumps({"output": []}))
    return gate, root


async def test_a_save_between_b_s_two_runs_is_not_compared_as_two_modes(tmp_path, monkeypatch):
    """b ran Harbor mode, the verifier was saved, then the environment-server
    mode ran the saved file: b said "the verifier works in both modes but
    scores otherwise in each: 0.5 ... 0.25", two verifiers compared as two
    modes. A save while b runs makes b run both modes again, over the files
    as saved, and that is the one run the save gets."""
    gate, root = _gated_two_mode_task(tmp_path, monkeypatch, "saved", 0.25)
    verifier = root / "tests" / "verifier.py"
    app, messages = make_app(root, case="c"), []
    async with app.run_test(size=(160, 60), message_hook=messages.append) as pilot:
        await app.first_run_and_watcher()
        gate.go.unlink()
        await pilot.press("b")
        await wait_for(lambda: gate.runs() == 2, "b's first run at the gate")  # its verifier already read
        verifier.write_text(gate.verifier("def verify(workspace):\n    return 0.5\n"))
        await wait_for(lambda: any(isinstance(m, CasesOutdated) for m in messages), "the watcher to see the save")
        gate.go.touch()
        await wait_for(lambda: "both modes:" in widget_text(app, "#reward-body"), "b's runs")
        shown = " ".join(widget_text(app, "#reward-body").split())
        assert "environment-server mode ✓ 0.5 · Harbor mode ✓ 0.5" in shown, shown
        assert "scores otherwise" not in shown, shown
        await asyncio.sleep(1)  # time for a run the save may still start: none, b's was its run
        await pilot.pause()
        assert len(app.finished) == 1 and not app.controller.live.scheduler.busy
        assert "both modes: environment-server mode ✓ 0.5" in widget_text(app, "#reward-body")


async def test_b_run_again_for_a_save_says_the_pair_it_set_aside_cut_short(tmp_path, monkeypatch):
    """b ran both modes again for a save that came while they ran, and its first two runs, numbered, never
    reached the history: it read #1, then #4 and #5, nothing said of #2 and #3. The row of the first run
    kept says them cut short, as a run a save supersedes is said."""
    gate, root = _gated_two_mode_task(tmp_path, monkeypatch, "saved", 0.25)
    verifier = root / "tests" / "verifier.py"
    app, messages = make_app(root, case="c"), []
    async with app.run_test(size=(160, 60), message_hook=messages.append) as pilot:
        before = await _b_held_at_the_gate(app, pilot, gate)
        verifier.write_text(gate.verifier("def verify(workspace):\n    return 0.5\n"))
        await wait_for(lambda: any(isinstance(m, CasesOutdated) for m in messages), "the watcher to see the save")
        gate.go.touch()
        await wait_for(lambda: "both modes:" in widget_text(app, "#reward-body"), "b's runs")
        await pilot.pause()
        history = history_text(app)
    said = f"#{before + 1}-#{before + 2} cut short"
    assert said in history, history
    assert history.index(f"#{before + 4} ") < history.index(f"#{before + 3} ") < history.index(said), history


async def test_b_pressed_again_while_b_runs_says_the_run_it_cut_short(tmp_path, monkeypatch):
    """b pressed while b ran ended the first b's runs, and the run it had numbered reached no row: the
    history went from the run before to the second b's two, a number skipped unsaid. And the first b,
    ending, let runs go again while the second ran: r pressed then ran between the second b's two."""
    gate, root = _gated_two_mode_task(tmp_path, monkeypatch, "again", 0.25)
    app = make_app(root, case="c")
    async with app.run_test(size=(160, 60)) as pilot:
        before = await _b_held_at_the_gate(app, pilot, gate)
        await pilot.press("b")
        await wait_for(lambda: app.session.sequence > before + 1, "the second b's first run numbered")
        await pilot.press("r")
        gate.go.touch()
        ran = (f"#{before + 4} ", "after r key")
        await wait_for(lambda: all(row in history_text(app) for row in ran), "r's run and b's in the history")
        history = history_text(app)
    # newest first: r's run, then the second b's two, the first of which says the run the first b had
    assert history.index(f"#{before + 4} ") < history.index("after r key") < history.index(f"#{before + 3} "), history
    assert f"#{before + 1} cut short" in history, history


async def test_the_editor_opened_while_b_runs_leaves_a_save_held_and_every_run_number_said_once(tmp_path, monkeypatch):
    """e (the editor) while b ran ended b's pause: a save then ran beside b's runs, took a number
    inside b's, and b pressed again said that number cut short while it also had a row of its own
    (#3 twice in the history). Pauses are counted: b's holds until b ends."""
    import re

    gate, root = _gated_two_mode_task(tmp_path, monkeypatch, "editor", 0.25)
    monkeypatch.setenv("EDITOR", "true")
    app = make_app(root, case="c")
    async with app.run_test(size=(160, 60)) as pilot:
        before = await _b_held_at_the_gate(app, pilot, gate)
        await pilot.press("e")  # opened and closed within the key (no terminal to suspend here)
        await pilot.pause()
        (root / "cases" / "c" / "workspace" / "a.txt").write_text("saved")
        # seen, and held by b's pause (else b pressed again would find it held and drop it, its runs
        # reading the save); with the pause ended by e it ran at once, beside b's runs
        await wait_for(lambda: app.controller.live.saves_held > 0, "the save held while b runs")
        await pilot.press("b")
        gate.go.touch()
        await wait_for(lambda: "after workspace/a.txt" in history_text(app), "the save's run")
        await wait_for(lambda: app.session.sequence >= before + 4 and not app.controller.live.scheduler.busy, "all")
        await wait_for(lambda: f"#{app.session.sequence} " in history_text(app), "the last run's row")
        history = history_text(app)
    rows = [int(n) for n in re.findall(r"^#(\d+) ", history, re.M)]
    cut: list[int] = []
    for low, high in re.findall(r"#(\d+)(?:-#(\d+))? cut short", history):
        cut += range(int(low), int(high or low) + 1)
    said = sorted(n for n in rows + cut if n > before)
    assert said == list(range(before + 1, app.session.sequence + 1)), history


async def test_b_refused_leaves_the_stale_verdict_to_run_when_live_reload_is_on_again(tmp_path, monkeypatch):
    """Live reload off, a save marks the verdict stale, then b cannot run (its files unreadable):
    b had forgotten what made the verdict stale, so w (live reload on again) ran nothing, under a
    status line that still said stale. What b did not run over stays to run."""
    from verifier_tui.engine import both_modes

    root = make_task(tmp_path / "tasks" / "refused", "def verify(workspace):\n    return 0.25\n", cases={"c": {}})
    verifier = root / "tests" / "verifier.py"
    app, messages = make_app(root, case="c"), []
    async with app.run_test(size=(160, 60), message_hook=messages.append) as pilot:
        await app.first_run_and_watcher()
        await pilot.press("w")  # live reload off
        await pilot.pause()
        verifier.write_text("def verify(workspace):\n    return 0.5\n")
        await wait_for(lambda: any(isinstance(m, VerdictStale) for m in messages), "the watcher to see the save")

        async def refused(*_args, **_kwargs):
            raise OSError(13, "Permission denied", str(verifier))

        monkeypatch.setattr(both_modes, "arun_both_modes", refused)
        await pilot.press("b")
        await wait_for(lambda: app.controller.live.stale is not None, "the save kept as stale")
        await pilot.press("w")  # live reload on: what changed meanwhile runs
        result = await app.wait_for_runs(2)
        assert result is not None and result.verdict.rewards == {"reward": 0.5}


@pytest.mark.parametrize("key", ["b", "a"])
async def test_the_late_events_of_a_save_a_key_read_leave_its_verdict_current(tmp_path, key):
    """Live reload off, a save (stale), then b or a. b's runs read the saved file but did not record
    what they read; a's shown case's run recorded nothing new in place of what the scheduler's run
    read. Either way the save's late events (vim sets the mode and ACL again after its write) marked
    the fresh verdict "stale: workspace/a.txt changed since this run", as they do not r's."""
    verifier = "def verify(workspace, response=None):\n    return 1.0\n"
    root = make_task(tmp_path / "t", verifier, cases={"c": {"a.txt": "x"}, "d": {"a.txt": "x"}})
    saved = root / "cases" / "c" / "workspace" / "a.txt"
    app, messages = make_app(root, case="c"), []
    async with app.run_test(size=(160, 60), message_hook=messages.append) as pilot:
        await app.first_run_and_watcher()
        await pilot.press("w")  # live reload off
        await pilot.pause()
        saved.write_text("y")
        await wait_for(lambda: any(isinstance(m, VerdictStale) for m in messages), "the save marked stale")
        await pilot.press(key)
        if key == "b":
            await wait_for(lambda: "both modes:" in widget_text(app, "#reward-body"), "b's runs")
        else:
            await app.wait_for_runs(3)  # the first run, then one a case
        await pilot.pause()
        assert "stale" not in widget_text(app, "StatusLine")
        os.chmod(saved, saved.stat().st_mode)  # the save's late events, after the key's runs read it
        await asyncio.sleep(1)
        await pilot.pause()
        assert "stale" not in widget_text(app, "StatusLine"), widget_text(app, "StatusLine")
        assert app.controller.live.stale is None


async def test_a_save_between_b_s_two_runs_with_live_reload_off_is_not_compared_as_two_modes(tmp_path, monkeypatch):
    """With live reload off (w), the verifier saved while b's first mode ran: the save only
    marked the verdict stale, so b compared the two verifiers as two modes ("scores otherwise
    in each") under a stale mark. b runs both modes again over the saved files, and the
    verdict it shows, of the files as they are, is not marked stale."""
    gate, root = _gated_two_mode_task(tmp_path, monkeypatch, "off", 0.25)
    verifier = root / "tests" / "verifier.py"
    app, messages = make_app(root, case="c"), []
    async with app.run_test(size=(160, 60), message_hook=messages.append) as pilot:
        await app.first_run_and_watcher()
        await pilot.press("w")  # live reload off
        await pilot.pause()
        gate.go.unlink()
        await pilot.press("b")
        await wait_for(lambda: gate.runs() == 2, "b's first run at the gate")  # its verifier already read
        verifier.write_text(gate.verifier("def verify(workspace):\n    return 0.5\n"))
        await wait_for(lambda: any(isinstance(m, VerdictStale) for m in messages), "the watcher to see the save")
        gate.go.touch()
        await wait_for(lambda: "both modes:" in widget_text(app, "#reward-body"), "b's runs")
        await pilot.pause()
        shown = " ".join(widget_text(app, "#reward-body").split())
        assert "environment-server mode ✓ 0.5 · Harbor mode ✓ 0.5" in shown, shown
        assert "scores otherwise" not in shown, shown
        assert "stale" not in widget_text(app, "StatusLine") and app.controller.live.stale is None


async def test_keys_pressed_while_b_runs_run_once_it_is_done(tmp_path, monkeypatch):
    """a pressed while b's first mode ran: b ran both modes again (the key taken
    for a save), no case ran, and "run all cases" stayed pending, so a later save
    ran every case unasked. Only a save is b's to run again; a key's run comes
    once b is done."""
    monkeypatch.setenv("VERIFIER_TUI_SANDBOX", "copy")  # the gate is outside the task
    gate = Gate(tmp_path / "gate")
    root = make_task(
        tmp_path / "tasks" / "keys",
        gate.verifier("def verify(workspace):\n    return 1.0\n"),
        cases={"c": {"a.txt": "x"}, "d": {"a.txt": "y"}},
    )
    (root / "cases" / "c" / "response.json").write_text(json.dumps({"output": []}))  # b runs two modes
    app = make_app(root, case="c", watch=False)
    async with app.run_test(size=(160, 60)) as pilot:
        await app.wait_for_runs(1)
        gate.go.unlink()
        await pilot.press("b")
        await wait_for(lambda: gate.runs() == 2, "b's first run at the gate")
        await pilot.press("a")
        await pilot.pause()
        gate.go.touch()
        await wait_for(lambda: "both modes:" in widget_text(app, "#reward-body"), "b's runs")
        await app.wait_for_runs(3)  # a's run: every case
        assert {r.inputs.case for r in app.finished[1:3] if r is not None} == {"c", "d"}
        assert all(r is not None and r.trigger == "all cases" for r in app.finished[1:3])
        assert gate.runs() == 1 + 2 + 2, gate.runs()  # the first run, b's two, a's two: b ran once
        assert not app.controller.run_all_pending


async def test_a_save_while_b_runs_with_every_case_on_runs_every_case(tmp_path, monkeypatch):
    """With every case on save (A), a save while b ran re-ran b's two modes of
    the current case alone; the other cases kept their marks of the old files.
    The save runs every case once b is done, as every save does under A."""
    monkeypatch.setenv("VERIFIER_TUI_SANDBOX", "copy")  # the gate is outside the task
    gate = Gate(tmp_path / "gate")
    root = make_task(
        tmp_path / "tasks" / "every",
        gate.verifier("def verify(workspace):\n    return 1.0\n"),
        cases={"c": {"a.txt": "x"}, "d": {"a.txt": "y"}},
    )
    (root / "cases" / "c" / "response.json").write_text('{"output": []}')
    verifier = root / "tests" / "verifier.py"
    app = make_app(root, case="c", watch=False)
    async with app.run_test(size=(160, 60)) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("A")
        await app.wait_for_runs(3)  # turned on: every case runs once
        app.controller.live.set_live_reload(True)  # as with live reload on, without a watcher
        gate.go.unlink()
        await pilot.press("b")
        await wait_for(lambda: gate.runs() == 4, "b's first run at the gate")
        verifier.write_text(gate.verifier("def verify(workspace):\n    return 0.5\n"))
        report_change(app, [verifier])
        gate.go.touch()
        await wait_for(lambda: "both modes:" in widget_text(app, "#reward-body"), "b's runs")
        # b's two modes both read the save (the save is not b's to drop, yet it came between them)
        assert "scores otherwise" not in " ".join(widget_text(app, "#reward-body").split())
        await app.wait_for_runs(5)  # the save's run: every case, the saved verifier
        rewards = {r.inputs.case: r.verdict.rewards for r in app.finished[3:5] if r is not None}
        assert rewards == {"c": {"reward": 0.5}, "d": {"reward": 0.5}}, rewards
        assert all(r is not None and r.trigger == "verifier.py" for r in app.finished[3:5])


async def test_a_case_name_typed_in_one_burst_after_k_is_the_dialogs(example):
    """``k`` then the name, typed fast: the dialog's worker had not pushed it
    yet, so the name's letters went to the task's screen as keys (``a`` ran
    every case, ``s`` opened the case chooser). They are the dialog's."""
    from textual import events

    root = example("hello-file")
    app = make_app(root, case="correct", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        for key in ("k", "s", "a", "v", "e", "d", "enter"):
            app.post_message(events.Key(key, key if len(key) == 1 else None))
        await wait_for(lambda: (root / "cases" / "saved").is_dir(), "the case kept under the name typed")
        await pilot.pause()
        assert app.screen is app.main and len(app.finished) == 1, app.screen


async def test_held_keys_come_before_the_keys_read_after_them_however_busy_the_app(example, monkeypatch):
    """``k`` then ``sa`` held for the dialog, the app busy a moment while
    ``ved`` and ``enter`` are read: the held keys were handed on behind the ones
    read meanwhile, and the case was kept as ``vedsa``. They keep their order."""
    from textual import events

    import verifier_tui.tui.base as base

    monkeypatch.setattr(base, "_HOLD_CHECK_S", 0.4)  # the check comes while the app is busy
    root = example("hello-file")
    app = make_app(root, case="correct", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        for key in ("k", "s", "a"):
            app.post_message(events.Key(key, key))
        await wait_for(lambda: isinstance(app.screen, CaseNameScreen) and app.screen.is_mounted, "k's dialog")

        async def busy() -> None:
            await asyncio.sleep(0.6)  # one message the app takes long over, past the check's tick

        app.call_later(busy)
        await asyncio.sleep(0.05)
        for key in ("v", "e", "d", "enter"):
            app.post_message(events.Key(key, key if len(key) == 1 else None))
        await wait_for(lambda: any((root / "cases").glob("*ved*")), "the case kept")
        await pilot.pause()
        assert sorted(path.name for path in (root / "cases").glob("*ved*")) == ["saved"]


async def test_a_case_name_pasted_right_after_k_is_the_dialogs(example):
    """``k`` then a bracketed paste of the name, read in one go: the paste
    went to the task's screen beneath (its cases list), the dialog came up
    empty. It is held for the dialog as typed keys are."""
    from textual import events

    root = example("hello-file")
    app = make_app(root, case="correct", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        app.post_message(events.Key("k", "k"))
        app.post_message(events.Paste("pasted"))
        await wait_for(lambda: isinstance(app.screen, CaseNameScreen) and app.screen.is_mounted, "k's dialog")
        await pilot.pause()
        await wait_for(lambda: app.screen.query_one(Input).value == "pasted", "the pasted name in the dialog", 3)


async def test_b_with_no_case_and_no_response_does_not_speak_of_the_case_s(tmp_path):
    """b with no case chosen and no response: the server mode's skip said 'the
    case has none (cases/<name>/response.json or response.txt)', of a case
    there is not."""
    root = make_task(tmp_path / "tasks" / "bare", "def verify(workspace):\n    return 1.0\n")
    app = make_app(root, watch=False)
    async with app.run_test(size=(160, 60)) as pilot:
        await app.wait_for_runs(1)
        assert app.session.case is None
        shown = await _b_said(app, pilot)
    assert "the case has none" not in shown, shown
    assert "no response to run the environment-server mode with: no case is chosen and no response" in shown, shown


async def test_b_on_a_case_without_a_response_names_the_cases_own_folder(example):
    """b on hello-file's case correct, which has no response: the server mode's skip said where a
    response goes as `cases/<name>/response.json`, a placeholder, three times over, where the
    case is known; the task's own folder for it is named instead."""
    app = make_app(example("hello-file"), case="correct", watch=False)
    async with app.run_test(size=(160, 60)) as pilot:
        await app.wait_for_runs(1)
        shown = await _b_said(app, pilot)
    assert "<name>" not in shown, shown
    assert "the case correct has none (cases/correct/response.json or response.txt)" in shown, shown


async def test_b_refused_names_paths_as_the_screen_does(tmp_path, monkeypatch):
    """b refused (its verifier unreadable, or gone while b waited) named the path absolute
    (`/tmp/.../tasks/del/tests/verifier.py`), where d and the rest of the screen name it from where
    the tool started."""
    from verifier_tui.engine import both_modes

    root = make_task(tmp_path / "tasks" / "del", "def verify(workspace):\n    return 1.0\n", cases={"c": {}})
    verifier = root / "tests" / "verifier.py"

    async def refused(*_args, **_kwargs):
        raise OSError(13, "Permission denied", str(verifier))

    monkeypatch.setattr(both_modes, "arun_both_modes", refused)
    app = make_app(root, case="c", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("b")
        await wait_for(lambda: any("cannot run both modes" in n for n in app.notices), "b refused")
    said = next(n for n in app.notices if "cannot run both modes" in n)
    assert str(tmp_path) not in said and "del/tests/verifier.py" in said, said


@pytest.mark.parametrize("read_only", ["cases", "task"])
async def test_k_refused_a_folder_it_cannot_write_names_it_as_the_screen_does(tmp_path, monkeypatch, read_only):
    """k on a task whose cases/ (or, without one, whose folder) cannot be written: the dialog named
    cases/ as the screen does, but the task folder absolute (`/tmp/.../tasks/ro`)."""
    root = make_task(tmp_path / "tasks" / "ro", "def verify(workspace):\n    return 1.0\n")
    if read_only == "cases":
        (root / "cases").mkdir()
    folder = root / "cases" if read_only == "cases" else root
    real_access = os.access

    def access(path, mode, **kwargs):  # the user's own write denied (root's would pass any mode)
        return Path(path) != folder and real_access(path, mode, **kwargs)

    monkeypatch.setattr(os, "access", access)
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await keep_as(app, pilot, "kept")
        await pilot.pause()
        assert isinstance(app.screen, CaseNameScreen)
        problem = str(app.screen.query_one("#case-name-problem").render())
    assert "cannot be written (permission denied)" in problem and str(tmp_path) not in problem, problem
    assert f"ro{'/cases' * (read_only == 'cases')} cannot be written" in problem, problem


async def test_k_under_step_says_the_case_records_no_step(tmp_path):
    """k with --step second kept the step's verdict as expected.json and said nothing of the step,
    which the case cannot hold: test without --step then checks it against tests/ and fails it."""
    toml = '[[steps]]\nname = "first"\n\n[[steps]]\nname = "second"\n'
    root = make_task(tmp_path / "tasks" / "ms", "def verify(workspace):\n    return 1.0\n", toml=toml)
    own = root / "steps" / "second" / "tests"
    own.mkdir(parents=True)
    (own / "verifier.py").write_text("def verify(workspace):\n    return 0.5\n")
    app = make_app(root, watch=False, step="second")
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await keep_as(app, pilot, "halved")
        await wait_for(lambda: "kept as case" in widget_text(app, "#status"), "the kept case said")
        status = widget_text(app, "#status")
    assert "records no step" in status and "--step second" in status, status


async def test_k_takes_the_step_of_the_run_it_keeps_not_the_sessions(tmp_path):
    """k kept the run shown with the session's step as it stood at the key, not the run's: a run of tests/
    (task.toml had dropped --step's step), kept once the step was back, said 'the case records no step: test
    checks it as this run did only with --step second', which is false of that run (tests/ is what test runs)."""
    toml = '[[steps]]\nname = "first"\n\n[[steps]]\nname = "second"\n'
    root = make_task(tmp_path / "tasks" / "ms", "def verify(workspace):\n    return 1.0\n", toml=toml)
    own = root / "steps" / "second" / "tests"
    own.mkdir(parents=True)
    (own / "verifier.py").write_text("def verify(workspace):\n    return 0.5\n")
    whole = (root / "task.toml").read_text()
    app = make_app(root, watch=False, step="second")
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        (root / "task.toml").write_text(whole.split('[[steps]]\nname = "second"')[0])
        app.session.reload_task()
        await pilot.press("r")
        await app.wait_for_runs(2)
        assert app.main.latest is not None and app.main.latest.verdict.rewards == {"reward": 1.0}
        (root / "task.toml").write_text(whole)
        app.session.reload_task()
        assert app.session.step == "second"
        await keep_as(app, pilot, "plain")
        await wait_for(lambda: "kept as case" in widget_text(app, "#status"), "the kept case said")
        status = widget_text(app, "#status")
    assert "records no step" not in status, status
