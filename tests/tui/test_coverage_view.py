"""The coverage view (``g``): every case runs with coverage, each line of the
verifier and its helper is marked by the cases that reached it, a save runs
every case again, ``e`` opens the highlighted line, esc goes back to runs
without coverage."""

from __future__ import annotations

import asyncio

import pytest
from textual.widgets import OptionList, Static

from tests.helpers.tasks import make_branchy_task
from tests.tui.app_under_test import (
    SNAPSHOT_SIZE,
    make_app,
    rendered_text,
    report_change,
    screen_text,
    wait_for,
    widget_text,
)
from verifier_tui.engine.model import RunResult
from verifier_tui.tui.screens.coverage import CoverageScreen


async def _open(app, pilot) -> CoverageScreen:
    await app.wait_for_runs(1)
    await pilot.press("g")
    await app.wait_for_runs(3)  # both cases, with coverage
    await pilot.pause()
    assert isinstance(app.screen, CoverageScreen)
    return app.screen


async def test_the_view_marks_each_line_by_the_cases_that_reached_it(tmp_path):
    task = make_branchy_task(tmp_path / "tasks" / "branchy")
    app = make_app(task, case="right")  # live reload on: a save re-runs
    async with app.run_test(size=SNAPSHOT_SIZE) as pilot:
        view = await _open(app, pilot)
        assert sorted(view.by_case) == ["empty", "right"]
        shown = [line.rstrip() for line in screen_text(app).splitlines()]
        assert shown[:26] == [
            " Coverage of 2 cases: 11 of 18 lines ran",
            " branchy/tests/verifier.py",
            "    1   2/2 import scoring",
            "    2",
            "    3",
            "    4   2/2 def verify(workspace):",
            '    5   2/2     answer = workspace / "answer.txt"',
            "    6   2/2     if not answer.exists():",
            "    7   1/2         return 0.0",
            "    8   1/2     text = answer.read_text()",
            '    9   1/2     if text == "42":',
            "   10   1/2         return scoring.full()",
            '   11     ✗     if text.strip() == "42":',
            "   12     ✗         return scoring.partial(text)",
            "   13     ✗     return 0.0",
            " branchy/tests/scoring.py",
            "    1   2/2 def full():",
            "    2   1/2     return 1.0",
            "    3",
            "    4",
            "    5   2/2 def partial(text):",
            '    6     ✗     if text.endswith("\\n"):',
            "    7     ✗         return 0.5",
            "    8     ✗     return 0.25",
            " branchy/tests/unused_helper.py",
            "    1     ✗ X = 1",
        ]
        assert shown[-2].strip() == "line 1 reached by empty, right"  # the highlighted line's cases
        lines = app.screen.query_one(OptionList)
        lines.highlighted = view.rows.index((task / "tests" / "verifier.py", 7))
        await pilot.pause()
        assert rendered_text(app.screen.query_one("#coverage-cases")) == "line 7 reached by empty"
        await pilot.press("n")  # the next line no case reached
        assert view.rows[lines.highlighted] == (task / "tests" / "verifier.py", 11)
        await pilot.press("n", "n", "n")  # 12, 13, then the helper's first
        assert view.rows[lines.highlighted] == (task / "tests" / "scoring.py", 6)
        await pilot.pause()
        assert rendered_text(app.screen.query_one("#coverage-cases")) == "line 6: no case reached it"
        await pilot.press("e")
        await pilot.pause()
        assert any("branchy/tests/scoring.py:6" in n for n in app.notices), app.notices

        report_change(app, [task / "tests" / "verifier.py"])  # a save while it is open: every case again
        assert {(await app.wait_for_runs(n)).inputs.case for n in (4, 5)} == {"empty", "right"}
        assert all(r.coverage is not None for r in app.finished[3:5])
        await pilot.press("r")  # every case again, from the view
        assert {(await app.wait_for_runs(n)).inputs.case for n in (6, 7)} == {"empty", "right"}

        await pilot.press("escape")
        await pilot.pause()
        assert app.session.options.coverage is False
        await pilot.press("r")
        assert (await app.wait_for_runs(8)).coverage is None  # back to runs without coverage


@pytest.mark.parametrize("size", [SNAPSHOT_SIZE])
def test_snapshot_of_the_coverage_view(snap_compare, tmp_path, monkeypatch, size):
    monkeypatch.setenv("VERIFIER_TUI_SANDBOX", "copy")  # the same on every machine
    task = make_branchy_task(tmp_path / "tasks" / "branchy")
    app = make_app(task, watch=False, case="right")

    async def opened(pilot) -> None:
        await app.wait_for_runs(1)
        await pilot.press("g")
        await app.wait_for_runs(3)
        await pilot.pause()
        await pilot.press("n")  # to the first line no case reached: verifier.py's 11
        await pilot.pause()
        await asyncio.sleep(0.1)

    assert snap_compare(app, terminal_size=size, run_before=opened)


async def test_a_helper_python_cannot_compile_is_named_under_the_header(tmp_path):
    task = make_branchy_task(tmp_path / "tasks" / "branchy")
    (task / "tests" / "py2_script.py").write_text('print "hello"\n')
    app = make_app(task, case="right")
    async with app.run_test(size=SNAPSHOT_SIZE) as pilot:
        await _open(app, pilot)
        shown = [line.strip() for line in screen_text(app).splitlines()]
        assert shown[0].startswith(
            "Coverage of 2 cases: 11 of 18 lines ran  "
            "· branchy/tests/py2_script.py: not measured: SyntaxError at line 1"
        )


def _slow_when_right(task) -> None:
    """The "right" case takes seconds: the view's round (in name order) has "empty" in alone a while."""
    verifier = task / "tests" / "verifier.py"
    source = verifier.read_text().replace("def verify(workspace):\n", "import time\n\ndef verify(workspace):\n", 1)
    waits = "    if (workspace / 'answer.txt').exists():\n        time.sleep(3)\n"
    verifier.write_text(source.replace("def verify(workspace):\n", "def verify(workspace):\n" + waits, 1))


def _mid_round_app(tmp_path):
    """The app on a task whose "right" case takes seconds (:func:`_slow_when_right`)."""
    task = make_branchy_task(tmp_path / "tasks" / "branchy")
    _slow_when_right(task)
    return task, make_app(task, case="right")


async def _open_mid_round(app, pilot) -> RunResult:
    """``g`` pressed, and the round's first run ("empty") in: "right" still sleeping."""
    await app.wait_for_runs(1)
    await pilot.press("g")
    return await app.wait_for_runs(2)


def _marks(shown: str) -> str:
    """The marks column of every source line on screen."""
    return "".join(line[5:12] for line in shown.splitlines()[1:] if line[1:5].strip().isdigit())


async def test_while_cases_still_run_no_line_is_said_unreached(tmp_path):
    """With one case of two in, the view said 'Coverage of 1 case' and marked
    ✗ the lines only the other case reaches, as if final."""
    _task, app = _mid_round_app(tmp_path)
    async with app.run_test(size=SNAPSHOT_SIZE) as pilot:
        assert (await _open_mid_round(app, pilot)).inputs.case == "empty"
        await pilot.pause()
        shown = screen_text(app)
        assert shown.splitlines()[0].strip().endswith("· 1 still running"), shown
        assert "✗" not in _marks(shown) and "·" in _marks(shown), shown
        await pilot.press("n")  # no ✗ to go to yet: said
        await pilot.pause()
        assert app.notices[-1:] == ["no line is marked ✗ yet: 1 still running"], app.notices
        assert (await app.wait_for_runs(3)).inputs.case == "right"
        await pilot.pause()
        shown = screen_text(app)
        assert shown.splitlines()[0].strip().startswith("Coverage of 2 cases: ")
        assert "✗" in _marks(shown) and "·" not in _marks(shown)


async def test_a_save_while_the_view_is_open_never_marks_new_lines_by_old_runs(tmp_path):
    """Two lines added at the top of the verifier while the view was open:
    with the first case of the new round in, the other case's old run still
    counted, its line numbers two off the source shown: the view said
    "Coverage of 2 cases", final, and marked ✗ lines a case reaches."""
    task, app = _mid_round_app(tmp_path)
    async with app.run_test(size=SNAPSHOT_SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("g")
        await app.wait_for_runs(3)  # both cases in
        await asyncio.wait_for(app.controller.live.watch_ready.wait(), 10)
        verifier = task / "tests" / "verifier.py"
        # The save reaches the app by its watcher alone: a change handed over as well would be a second
        # save, whenever the watcher's own came in (a loaded machine), and a round begun again.
        verifier.write_text("FIRST = 1\nSECOND = 2\n" + verifier.read_text())
        assert (await app.wait_for_runs(4)).inputs.case == "empty"  # "right" still sleeping
        await pilot.pause()
        shown = screen_text(app)
        assert shown.splitlines()[0].strip().endswith("· 1 still running"), shown
        assert "✗" not in _marks(shown), shown
        assert (await app.wait_for_runs(5)).inputs.case == "right"
        await pilot.pause()
        shown = screen_text(app)
        assert shown.splitlines()[0].strip().startswith("Coverage of 2 cases: 16 of 23 lines ran"), shown


async def test_with_live_reload_off_a_save_says_the_view_is_out_of_date(tmp_path):
    """Two lines added at the top with live reload off: the view still marked
    the new source by the old runs' line numbers under a bold "Coverage of 2
    cases: 11 of 18 lines ran", and n went to lines no case missed."""
    task = make_branchy_task(tmp_path / "tasks" / "branchy")
    app = make_app(task, case="right", watch=False)
    async with app.run_test(size=SNAPSHOT_SIZE) as pilot:
        await _open(app, pilot)
        verifier = task / "tests" / "verifier.py"
        verifier.write_text("FIRST = 1\nSECOND = 2\n" + verifier.read_text())
        report_change(app, [verifier])
        await pilot.pause()
        header = rendered_text(app.screen.query_one("#coverage-header"))
        said = "out of date: the tests, the verifier or task.toml changed since these runs (r runs every case again)"
        assert said in header, header
        # the old runs' line numbers are two off the source shown: no line marked by them, no count, n goes nowhere
        assert "lines ran" not in header, header
        shown = screen_text(app)
        assert "FIRST = 1" in shown, shown  # the source is on screen: no marks means none, not no lines
        assert _marks(shown).strip() == "", shown
        await pilot.press("n")
        await pilot.pause()
        assert app.notices[-1:] == ["no line is marked: the coverage is out of date (r runs every case again)"]
        await pilot.press("r")
        await app.wait_for_runs(5)
        await pilot.pause()
        header = rendered_text(app.screen.query_one("#coverage-header"))
        assert header == "Coverage of 2 cases: 13 of 20 lines ran", header


async def test_leaving_the_view_mid_round_leaves_no_round_for_the_next_save(tmp_path):
    task, app = _mid_round_app(tmp_path)
    async with app.run_test(size=SNAPSHOT_SIZE) as pilot:
        await _open_mid_round(app, pilot)
        await pilot.press("escape")
        await pilot.pause()
        report_change(app, [task / "tests" / "verifier.py"])
        await app.wait_for_runs(3)
        await asyncio.sleep(4)  # time for every case a round would run
        saved = [r for r in app.finished if "verifier.py" in r.trigger]
        assert [r.inputs.case for r in saved] == ["right"], [(r.inputs.case, r.trigger) for r in app.finished]
        assert saved[0].coverage is None


async def test_an_escape_code_in_the_source_is_shown_as_one(tmp_path):
    """``s = "<ESC>[5mblink"`` was shown as ``s = "blink"``: a line the file does not hold."""
    task = make_branchy_task(tmp_path / "tasks" / "branchy")
    verifier = task / "tests" / "verifier.py"
    verifier.write_text(verifier.read_text().replace("    return 0.0\n", '    return 0.0  # "\x1b[5mblink"\n', 1))
    app = make_app(task, case="right", watch=False)
    async with app.run_test(size=SNAPSHOT_SIZE) as pilot:
        await _open(app, pilot)
        shown = screen_text(app)
        assert '# "\\x1b[5mblink"' in shown and "\x1b" not in shown


async def test_a_case_with_no_coverage_is_named_under_the_header(tmp_path):
    """A case that timed out has no coverage: the header said "no coverage:
    the run was stopped ..." beside "Coverage of 1 case", naming no case,
    where ``test --coverage`` says ``no coverage of task::empty: ...``."""
    task = make_branchy_task(tmp_path / "tasks" / "branchy")
    verifier = task / "tests" / "verifier.py"
    waits = "    while not (workspace / 'answer.txt').exists():\n        time.sleep(0.1)\n"  # the empty case, for ever
    verifier.write_text("import time\n" + verifier.read_text().replace("    answer = ", waits + "    answer = ", 1))
    (task / "task.toml").write_text('version = "1.0"\n\n[verifier]\ntimeout_sec = 1\n')
    app = make_app(task, watch=False, case="right")
    async with app.run_test(size=SNAPSHOT_SIZE) as pilot:
        await _open(app, pilot)
        header = rendered_text(app.screen.query_one("#coverage-header"))
        assert header.startswith("Coverage of 1 case: "), header
        assert (
            "· no coverage of empty: the run was stopped, or ended the interpreter itself, before the runner wrote it"
        ) in header, header


async def test_a_case_named_with_an_escape_code_is_named_as_the_cases_list_names_it(tmp_path):
    """A case folder ``ri<ESC>[5mght``: the list of the cases that reached a
    line named it ``right``, a case the task does not have (the cases list
    and the history show ``ri\\x1b[5mght``)."""
    task = make_branchy_task(tmp_path / "tasks" / "branchy")
    (task / "cases" / "right").rename(task / "cases" / "ri\x1b[5mght")
    app = make_app(task, case="empty", watch=False)
    async with app.run_test(size=SNAPSHOT_SIZE) as pilot:
        await _open(app, pilot)
        assert rendered_text(app.screen.query_one("#coverage-cases")) == "line 1 reached by empty, ri\\x1b[5mght"


async def test_n_with_no_line_unreached_says_so(tmp_path):
    """n (next ✗) when every line ran did nothing at all: a key that seemed broken."""
    from tests.helpers.tasks import make_task

    task = make_task(tmp_path / "tasks" / "full", cases={"one": {}, "two": {}})
    app = make_app(task, case="one", watch=False)
    async with app.run_test(size=SNAPSHOT_SIZE) as pilot:
        await _open(app, pilot)
        assert "✗" not in _marks(screen_text(app))
        await pilot.press("n")
        await pilot.pause()
        assert app.notices[-1:] == ["no line is marked ✗: a case reached every line that runs"], app.notices


async def _open_without_a_case(app, pilot) -> list[str]:
    """The view open on a task without cases, once its one run is in: the screen's lines."""
    await app.wait_for_runs(1)
    await pilot.press("g")
    await app.wait_for_runs(2)
    await pilot.pause()
    assert isinstance(app.screen, CoverageScreen)
    return [line.strip() for line in screen_text(app).splitlines()]


async def test_a_task_without_cases_is_measured_on_its_run_and_says_so(tmp_path):
    """A task with no cases (a Harbor task as published): `g` measured the
    run on the current choices and said `Coverage of 1 case`, and of each line
    `line 1 reached by -`, a case named `-` the task does not have."""
    from tests.helpers.tasks import BRANCHY_HELPER, BRANCHY_VERIFIER, make_task

    task = make_task(tmp_path / "tasks" / "caseless", BRANCHY_VERIFIER, files={"scoring.py": BRANCHY_HELPER})
    app = make_app(task, watch=False)
    async with app.run_test(size=SNAPSHOT_SIZE) as pilot:
        shown = await _open_without_a_case(app, pilot)
        assert shown[0] == "Coverage of the run without a case: 7 of 17 lines ran", shown[0]
        assert shown[-2] == "line 1 reached by the run without a case", shown[-2]


async def test_the_view_s_footer_offers_its_help_which_says_what_its_marks_mean(tmp_path):
    """The view marks each line `2/2`, `1/2`, `✗`: its footer read "n next ✗ e edit r run
    all esc back", a third of the line used, and never named `?`, whose help says what they mean."""
    task = make_branchy_task(tmp_path / "tasks" / "branchy")
    app = make_app(task, case="right", watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await _open(app, pilot)
        footer = " ".join(screen_text(app).splitlines()[-1].split())
        assert "? help" in footer and footer.index("? help") < footer.index("esc back"), footer


async def _listed(app, pilot) -> tuple[CoverageScreen, list[str]]:
    """The view open on a task without cases, and every row it lists (not only those on screen),
    never more than its bound (and the row counting the files past it)."""
    await _open_without_a_case(app, pilot)
    view = app.screen
    assert isinstance(view, CoverageScreen)
    listed = view.query_one(OptionList)
    rows = [str(listed.get_option_at_index(i).prompt) for i in range(listed.option_count)]
    assert len(rows) <= 3_001, len(rows)
    return view, rows


async def test_a_helper_too_long_to_list_is_listed_in_part_and_the_rest_counted(tmp_path):
    """A generated helper of 40,000 lines in tests/ (within what the runner measures): the view
    made a row of each of its lines, every time a run ended, and the screen froze for seconds
    (14 s for 200,000 lines). Its first lines are listed, the verifier's before them, and one row
    says how many more it has."""
    from tests.helpers.tasks import make_task

    many = "".join(f"def f{n}():\n    return {n}\n" for n in range(20_000))
    task = make_task(tmp_path / "tasks" / "big", "import answers\n\ndef verify(workspace):\n    return 1.0\n")
    (task / "tests" / "answers.py").write_text(many)
    app = make_app(task, watch=False)
    async with app.run_test(size=SNAPSHOT_SIZE) as pilot:
        view, rows = await _listed(app, pilot)
        header = view.query_one("#coverage-header", Static)
        assert rendered_text(header) == "Coverage of the run without a case: 20003 of 40003 lines ran"
        assert rows[1].split() == ["1", "1/1", "import", "answers"], rows[:3]
        at = rows.index("big/tests/answers.py")
        assert rows[at + 1].split() == ["1", "1/1", "def", "f0():"], rows[at : at + 3]
        listed = len(rows) - at - 2  # the helper's lines, its header and its last row apart
        assert rows[-1] == (
            f"{40_000 - listed:,} more lines of it not listed here: "
            "verifier-tui run --coverage (or test --coverage) lists the lines no case reached"
        ), rows[-2:]
        await pilot.press("n")  # to the first line listed that no case reached
        await pilot.pause()
        assert view.rows[view.query_one(OptionList).highlighted or 0][1] == 2


async def test_a_verifier_too_long_to_list_whole_is_listed_from_its_first_line(tmp_path):
    """A verifier of 3,120 lines: the view listed no line of it (a row saying it was too long),
    nor of a helper of 20 lines after it (`more than this view lists`). The verifier's first
    lines are listed and the rest counted; the helper past the view's rows is named as not listed,
    and n says it holds lines no case reached."""
    from tests.helpers.tasks import make_task

    body = "".join(f"x{n} = {n}\n" for n in range(3_120))
    verifier = f"import scoring\n{body}\ndef verify(workspace):\n    return scoring.full()\n"
    task = make_task(tmp_path / "tasks" / "long", verifier)
    (task / "tests" / "scoring.py").write_text("def full():\n    if 1 > 2:\n        return 0.0\n    return 1.0\n")
    app = make_app(task, watch=False)
    async with app.run_test(size=SNAPSHOT_SIZE) as pilot:
        view, rows = await _listed(app, pilot)
        assert rows[0] == "long/tests/verifier.py" and rows[1].split() == ["1", "1/1", "import", "scoring"], rows[:2]
        assert rows[-2].endswith(
            "more lines of it not listed here: verifier-tui run --coverage (or test --coverage) "
            "lists the lines no case reached"
        ), rows[-2:]
        assert rows[-1].startswith("1 more file, long/tests/scoring.py, not listed here (4 lines that run): "), rows[-1]
        await pilot.press("n")  # every line of the verifier ran: the helper's line no case reached is not listed
        await pilot.pause()
        assert app.notices[-1].startswith(
            "no line listed is marked ✗: long/tests/scoring.py has lines no case reached, not listed here: "
        ), app.notices


async def test_a_task_of_thousands_of_small_helpers_lists_a_bounded_number_of_rows(tmp_path):
    """2,000 generated one-line modules: the view made a header and a row for each, 4,000 rows and
    more (12,009 for 6,000), rebuilt at every run's end. The rows are bounded, the files past them
    counted in one row."""
    from tests.helpers.tasks import make_task

    n = 2_000
    verifier = f"import importlib\n\ndef verify(workspace):\n    for i in range({n}):\n"
    verifier += "        importlib.import_module(f'gen.m{i}')\n    return 1.0\n"
    task = make_task(tmp_path / "tasks" / "many", verifier)
    gen = task / "tests" / "gen"
    gen.mkdir()
    (gen / "__init__.py").write_text("")
    for i in range(n):
        (gen / f"m{i}.py").write_text(f"X = {i}\n")
    app = make_app(task, watch=False)
    async with app.run_test(size=SNAPSHOT_SIZE) as pilot:
        view, rows = await _listed(app, pilot)
        assert rows[0] == "many/tests/verifier.py", rows[:2]
        listed = sum(1 for row in rows if row.startswith("many/tests/gen/"))  # gen/__init__.py among them
        assert rows[-1].startswith(f"{n + 1 - listed:,} more files not listed here ("), rows[-1]
        await pilot.press("n")
        await pilot.pause()
        assert app.notices[-1:] == ["no line is marked ✗: a case reached every line that runs"], app.notices


async def test_n_on_a_verifier_that_does_not_compile_claims_no_line_ran(tmp_path):
    """A verifier with a syntax error: n said `no line is marked ✗: a case reached every line that
    runs`, of a file none of whose lines could be counted (the CLI says `0 of 0 lines ran`, no more)."""
    from tests.helpers.tasks import make_task

    task = make_task(tmp_path / "tasks" / "bad", "def verify(workspace)\n    return 1.0\n")
    app = make_app(task, watch=False)
    async with app.run_test(size=SNAPSHOT_SIZE) as pilot:
        shown = await _open_without_a_case(app, pilot)
        assert shown[0].startswith("Coverage of the run without a case: 0 of 0 lines ran"), shown[0]
        await pilot.press("n")
        await pilot.pause()
        assert app.notices[-1:] == ["no line is marked ✗: no line that runs was measured"], app.notices


async def test_the_verifier_removed_while_the_view_is_open_is_said_there(tmp_path):
    """tests/verifier.py deleted with the view open: the view went on saying
    "r runs every case again" over the gone file's name, and r, which found
    no verifier, said so only on the main screen, under the view: the key
    looked dead."""
    task = make_branchy_task(tmp_path / "tasks" / "branchy")
    app = make_app(task, case="right", watch=False)
    async with app.run_test(size=SNAPSHOT_SIZE) as pilot:
        await _open(app, pilot)
        verifier = task / "tests" / "verifier.py"
        verifier.unlink()
        report_change(app, [verifier])
        await pilot.press("r")
        assert await app.wait_for_runs(4) is None  # nothing could run
        await pilot.pause()
        assert isinstance(app.screen, CoverageScreen)
        header = rendered_text(app.screen.query_one("#coverage-header"))
        assert header.startswith("No coverage: no verifier found for branchy"), header
        assert "r runs every case again" not in header, header
        said = rendered_text(app.screen.query_one("#coverage-cases"))
        assert "reached by" not in said, said  # no case reached a line of a file that is gone
        await pilot.press("r")
        assert await app.wait_for_runs(5) is None
        await pilot.pause()
        assert app.notices[-1].startswith("no verifier found for branchy"), app.notices


async def test_q_in_the_view_goes_back_as_it_does_from_every_other_view(tmp_path):
    """q quits from the task's screen and closes the help and a trial's file views, yet in the
    coverage view it did nothing at all, and its help named no q."""
    task = make_branchy_task(tmp_path / "tasks" / "branchy")
    app = make_app(task, case="right", watch=False)
    async with app.run_test(size=SNAPSHOT_SIZE) as pilot:
        await _open(app, pilot)
        await pilot.press("?")
        await pilot.pause()
        assert "  q      Back: " in screen_text(app), screen_text(app)
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("q")
        await pilot.pause()
        assert not isinstance(app.screen, CoverageScreen)
        assert app.is_running and app.session.options.coverage is False


async def test_the_run_shown_after_the_view_is_of_the_code_its_runs_ran(example):
    """Another case's workspace chosen, g, a change to the verifier and r (every case again), then
    esc: the main screen still showed the run from before the view opened, of the old code
    (`reward 0`), with no stale mark. The view's runs run the choices too, shown; the view counts
    the cases' runs alone."""
    root = example("hello-file")
    app = make_app(root, watch=False, case="correct", workspace=root / "cases" / "wrong-text" / "workspace")
    async with app.run_test(size=SNAPSHOT_SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("g")
        scheduler = app.controller.live.scheduler
        await wait_for(lambda: len(app.finished) > 1 and not (scheduler.busy or scheduler.pending), "the view's runs")
        (root / "tests" / "verifier.py").write_text("def verify(workspace):\n    return 0.5\n")
        ran = len(app.finished)
        await pilot.press("r")
        await wait_for(lambda: len(app.finished) > ran and not (scheduler.busy or scheduler.pending), "r's runs")
        await pilot.pause()
        assert screen_text(app).split(":")[0].strip() == "Coverage of 4 cases", screen_text(app)
        await pilot.press("escape")
        await pilot.pause()
        shown = app.main.latest
        assert shown.inputs.workspace.parent.name == "wrong-text" and shown.verdict.rewards == {"reward": 0.5}
        assert "reward 0.5" in widget_text(app, "#status"), widget_text(app, "#status")
