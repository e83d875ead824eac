"""The screen never freezes, and the output panel's edges, as a user sees
them: a huge reward, a long sys.path and a flood of output show
their start (or their end) with a line saying how much is left out; the
output panel says where it dropped lines, in the words ``run`` uses; an empty
stderr says when stdout has something. (How long an update takes is measured
by benchmarks/tui_latency.py, not here.)"""

from __future__ import annotations

import asyncio

from textual.widgets import Log

from tests.helpers.tasks import interpreter_with_long_sys_path, make_task
from tests.tui.app_under_test import SIZE, make_app, widget_text

BIG_REWARD = """
def verify(workspace):
    rewards = {f"key_{i:06d}": 0.5 for i in range(100000)}
    rewards["reward"] = 1.0
    return rewards
"""


async def test_a_100000_key_reward_shows_its_start_and_how_many_more(tmp_path):
    app = make_app(make_task(tmp_path / "tasks" / "big", BIG_REWARD), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        result = await app.wait_for_runs(1, timeout=60)
        await pilot.pause()
        assert len(result.verdict.rewards) == 100_001  # the engine keeps it whole (run --json prints it)
        body = widget_text(app, "#reward-body")
        assert '"key_000000": 0.5' in body and '…, "reward": 1.0}' in body
        assert "… 99,981 more keys (c copies this run's command: its --json has them all)" in body
        assert "more characters of reward.json (c copies this run's command" in body
        assert len(body.splitlines()) < 40


async def test_a_long_sys_path_shows_50_entries_and_how_many_more(tmp_path):
    python = interpreter_with_long_sys_path(tmp_path / "venv", 300)
    app = make_app(make_task(tmp_path / "tasks" / "t"), watch=False, python=str(python))
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1, timeout=60)
        await pilot.pause()
        body = widget_text(app, "#resolution-body")
        assert 0 < body.count("folder0") < 50
        more = len(app.main.explain.sys_path) - 50
        assert f"… {more:,} more entries (c copies this run's command: its --json has them all)" in body


LONG_LINES = """
import sys
def verify(workspace):
    for i in range(600):
        sys.stderr.write(f"line {i} " + "x" * 400 + "\\n")
    raise ValueError("the end")
"""


async def test_lines_too_many_to_show_once_wrapped_leave_a_marker_where_they_were(tmp_path):
    app = make_app(make_task(tmp_path / "tasks" / "t", LONG_LINES), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.pause()
        log = app.main.query_one("#stderr", Log)
        # 600 lines of 400 characters wrap to more rows than the panel keeps:
        # the oldest go, and the first row says how many, as `run` says a cut.
        first = log.lines[0]
        assert first.startswith("[... ") and first.endswith(" lines of output dropped here by verifier-tui ...]")
        dropped = int(first.split()[1].replace(",", ""))
        assert 0 < dropped < 600
        assert log.lines[1].startswith(f"line {dropped} ")
        assert log.lines[-1] == "ValueError: the end"
        assert app.main.query_one("#output").text("stderr").splitlines()[0] == first


# Waits for a file "stop" beside its staged copy: the test puts it in the
# stage's tests folder, which the run sees live in both sandboxes (the
# namespace's view hides the test's own /tmp).
FLOOD_THEN_WAIT = """
import sys, time
from pathlib import Path
def verify(workspace):
    for i in range(12000):
        sys.stderr.write(f"line {i}\\n")
    sys.stderr.flush()
    while not Path(__file__).with_name("stop").exists():
        time.sleep(0.05)
    return 1.0
"""


async def test_a_streaming_run_marks_the_lines_it_dropped(tmp_path):
    app = make_app(make_task(tmp_path / "tasks" / "t", FLOOD_THEN_WAIT), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        log = app.main.query_one("#stderr", Log)

        async def streamed_to_the_end() -> None:
            while not (log.line_count and log.lines[-1] == "line 11999"):
                await pilot.pause(0.05)

        try:
            await asyncio.wait_for(streamed_to_the_end(), 30)
            assert app.main.query_one("#output").streaming
            first = log.lines[0]
            assert first.startswith("[... ") and first.endswith(" lines of output dropped here by verifier-tui ...]")
            dropped = int(first.split()[1].replace(",", ""))
            assert log.lines[1] == f"line {dropped}" and log.line_count <= 5001
        finally:
            for tests in app.session.scratch.root.glob("stage-*/tests"):
                (tests / "stop").touch()
        await app.wait_for_runs(1)


async def test_an_empty_stderr_says_stdout_has_lines_and_o_shows_them(tmp_path):
    root = make_task(
        tmp_path / "tasks" / "t",
        """
        def verify(workspace):
            print("one")
            print("two")
            print("three")
            return 1.0
    """,
    )
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.pause()
        panel = app.main.query_one("#output")
        assert panel.text("stderr") == "(nothing on stderr; stdout has 3 lines: o shows them)"
        await pilot.press("o")
        await pilot.pause()
        assert "three" in widget_text(app, "#stdout")


HUGE_MESSAGE = """
def verify(workspace):
    raise ValueError("x" * 2_000_000)
"""


async def test_a_huge_line_is_shown_up_to_a_bound_with_how_much_more_it_holds(tmp_path):
    """A two-megabyte exception message (cut by the capture to its head and tail) is shown up to
    MAX_LINE_CHARS characters, then a line saying how many more there are: a bounded number of
    rows, not thousands, and the screen stays responsive."""
    from verifier_tui.tui.widgets.output_panel import MAX_LINE_CHARS

    app = make_app(make_task(tmp_path / "tasks" / "t", HUGE_MESSAGE), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.pause()
        log = app.main.query_one("#stderr", Log)
        marks = [line for line in log.lines if "more characters on this line" in line]
        assert 1 <= len(marks) <= 2, marks  # the capture keeps the message's head and its tail
        width = max(len(line) for line in log.lines if "more characters" not in line)
        assert len(log.lines) < 2 * (MAX_LINE_CHARS // (width // 2)) + 50  # what the bound makes, at most


def test_wrapping_cuts_at_spaces_and_indents_continuations():
    from verifier_tui.tui.widgets.output_panel import MAX_LINE_CHARS, wrap_lines

    text = " ".join(f"word{i}" for i in range(40))
    rows = wrap_lines([text, "short", "    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"], 30)
    assert all(len(row) <= 30 for row in rows)
    body = rows[:-2]
    assert all(row.startswith("  ") for row in body[1:]) and not body[0].startswith(" ")
    assert " ".join(row.strip() for row in body) == text  # nothing lost, cut between words
    assert rows[-2:] == ["short", "    ^^^^^^^^^^^^^^^^^^^^^^^^^^"]  # caret marks are cut, never wrapped
    huge = wrap_lines(["y" * (MAX_LINE_CHARS + 1234)], 100)
    assert huge[-1].endswith("... 1,234 more characters on this line (`verifier-tui run` and --json show it whole)")
    assert sum(len(row.strip()) for row in huge[:-1]) == MAX_LINE_CHARS


# 128 MB on stderr with no newline until the end: the line being written was
# joined again with every 64 KiB chunk (64 MB took 33 s here, 128 MB about
# four times that, and q could not end the app meanwhile); now each chunk
# costs its own length, and the run is over in a few seconds.
ONE_HUGE_LINE = """
import sys
def verify(workspace):
    chunk = "x" * (1 << 20)
    for _ in range(128):
        sys.stderr.write(chunk)
    sys.stderr.write("\\nthe end\\n")
    return 1.0
"""


async def test_a_128_mb_line_streams_through_the_panel_and_the_app_still_answers(tmp_path):
    app = make_app(make_task(tmp_path / "tasks" / "t", ONE_HUGE_LINE), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        result = await app.wait_for_runs(1, timeout=90)
        await pilot.pause()
        assert result.verdict.rewards == {"reward": 1.0}
        assert result.stderr.total_bytes == 128 * (1 << 20) + len("\nthe end\n")
        text = widget_text(app, "#stderr")
        assert "more characters on this line (`verifier-tui run` and --json show it whole)" in text
        assert "the end" in text
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code in (0, None)


def test_a_line_being_written_keeps_its_first_characters_and_counts_the_rest():
    from verifier_tui.tui.output_buffer import LINE_CHARS, OutputBuffer, more_characters

    buffer = OutputBuffer()
    buffer.reset(1)
    for _ in range(100):
        buffer.feed(1, "stderr", "x" * 65536)
    buffer.feed(1, "stderr", "y\nnext\npartial")
    assert buffer.take("stderr") == (["x" * LINE_CHARS, more_characters(100 * 65536 + 1 - LINE_CHARS), "next"], 0)
    buffer.feed(1, "stderr", " line\n")
    assert buffer.take("stderr") == (["partial line"], 0)


async def test_o_twice_leaves_each_stream_wrapped_to_the_panel(tmp_path):
    """The Log o shows was written while hidden (no width yet): its lines were
    left unwrapped, cut at the panel's edge, a traceback's end out of sight."""
    verifier = (
        "import sys\n"
        "def verify(workspace):\n"
        "    print('out ' + 'word ' * 60)\n"
        "    sys.stderr.write('err ' + 'word ' * 60 + '\\n')\n"
        "    return 1.0\n"
    )
    app = make_app(make_task(tmp_path / "tasks" / "t", verifier), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.pause()
        for stream in ("stdout", "stderr"):
            await pilot.press("o")
            await pilot.pause()
            log = app.main.query_one(f"#{stream}", Log)
            width = log.scrollable_content_region.width
            assert len(log.lines) > 1 and max(map(len, log.lines)) <= width, (stream, width, log.lines)
