"""The job screens at 80x24, keyboard only: each trial's name beside how it
ended and its reward, the other columns a right arrow away, the name staying."""

from __future__ import annotations

from textual.widgets import DataTable

from tests.harbor.job_copies import agent_timeout, copy_job_files, copy_trial, with_usage
from tests.harbor.test_job_tui import job_app, read_all

SMALL = (80, 24)
#: As Harbor names a trial: the task's name cut to 32 characters, then a short id.
LONG = "fix-the-broken-build-system-in-l"


def lines(table: DataTable) -> list[str]:
    """What the table shows, a line per row, its column headers first."""
    return [table.render_line(y).text for y in range(table.scrollable_content_region.height)]


def usage_and_timeout(result: dict) -> None:
    agent_timeout(result)
    with_usage(1200, 300, 0.0125, "anthropic/claude-sonnet-4-5-20250929")(result)


def long_named_job(real, folder):
    job = copy_job_files(real, folder)
    for suffix, source, edit in (("aaaaaaa", "nop-fail", None), ("bbbbbbb", "oracle-pass", usage_and_timeout)):
        copy_trial(real, job, f"{LONG}__{suffix}", source=source, edit=edit)
    return job


async def test_at_80x24_a_trial_shows_its_whole_name_beside_how_it_ended_and_keeps_it_scrolled(real, tmp_path):
    app = job_app(long_named_job(real, tmp_path / "jobs" / "long"))
    async with app.run_test(size=SMALL) as pilot:
        await read_all(app)
        await pilot.pause()
        table = app.screen.query_one("#job-trials", DataTable)
        shown = lines(table)
        assert f"{LONG}__aaaaaaa" in shown[1] and "✗ RewardFileNotFoundError" in shown[1]
        assert f"{LONG}__bbbbbbb" in shown[2] and "AgentTimeoutError" in shown[2] and "0.5" in shown[2]
        await pilot.press("end")  # to the last columns (right: a column's cell at a time): the name stays
        await pilot.pause()
        shown = lines(table)
        assert table.scroll_x > 0 and "cost" in shown[0] and "$" in shown[2]
        assert f"{LONG}__aaaaaaa" in shown[1]
        await pilot.press("home")
        await pilot.pause()
        assert table.scroll_x == 0 and "✗ RewardFileNotFoundError" in lines(table)[1]
