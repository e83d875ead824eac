"""The job screens at 80x24, keyboard only: each trial's name beside how it
ended and its reward, the other columns a right arrow away, the name staying."""

from __future__ import annotations

import shutil

from textual.widgets import DataTable

from tests.harbor.job_copies import agent_timeout, copy_job_files, copy_trial, with_usage
from tests.harbor.test_compare_tui import TIMEOUT, compared
from tests.harbor.test_job_tui import footer_shows, job_app, read_all
from tests.harbor.trial_app_under_test import SIZE, make_trial_app, text_of, until
from tests.helpers.harbor import harbor_exception, make_job
from tests.tui.app_under_test import footer_promises, screen_text
from verifier_tui.tui.screens.compare import CompareScreen
from verifier_tui.tui.screens.job_overview import JobOverviewScreen
from verifier_tui.tui.screens.jobs import JobsScreen
from verifier_tui.tui.screens.trial import TrialScreen

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
        await pilot.press("shift+end")  # to the last columns (right: a column's cell at a time): the name stays
        await pilot.pause()
        shown = lines(table)
        assert table.scroll_x > 0 and "cost" in shown[0] and "$" in shown[2]
        assert f"{LONG}__aaaaaaa" in shown[1]
        await pilot.press("shift+home")
        await pilot.pause()
        assert table.scroll_x == 0 and "✗ RewardFileNotFoundError" in lines(table)[1]


def many_agents_job(real, folder):
    """Four tasks of long names, three agents: a summary of a dozen lines at 80 columns."""
    job = copy_job_files(real, folder)
    tasks = ["fix-the-broken-build-system-in-legacy-repo", "hello-file", "count-dataset-tokens", "configure-git-hooks"]
    for index in range(12):
        task = tasks[index % 4]

        def edit(result: dict, task=task, index=index) -> None:
            result["task_name"] = task
            if index % 3 == 1:
                usage_and_timeout(result)
            elif index % 3 == 2:
                result["verifier_result"] = {"rewards": {"reward": 0.0}}

        copy_trial(
            real, job, f"{task[:32]}__{index:07d}", source="nop-fail" if index % 5 == 0 else "oracle-pass", edit=edit
        )
    return job


async def test_at_80x24_the_summary_gives_way_to_the_trials_and_tab_reaches_what_it_cut(real, tmp_path):
    """The summary above the tables took 14 lines of 24, the tasks the rest: no trial was shown at all."""
    app = job_app(many_agents_job(real, tmp_path / "jobs" / "busy"))
    async with app.run_test(size=SMALL) as pilot:
        await read_all(app)
        await pilot.pause()
        trials = app.screen.query_one("#job-trials", DataTable)
        assert trials.scrollable_content_region.height >= 5  # the column headers and four trials at least
        assert "configure-git-hooks__0000003" in lines(trials)[1]  # the first by name
        summary = app.screen.query_one("#job-summary")
        assert summary.max_scroll_y > 0  # cut to fit: tab reaches it, after the tasks
        await pilot.press("tab")
        assert app.screen.focused is app.screen.query_one("#job-tasks")
        await pilot.press("tab")
        assert app.screen.focused is summary
        await pilot.press("end")  # a scroll Textual may animate: waited for, not one pause
        await until(pilot, lambda: summary.scroll_y == summary.max_scroll_y > 0, "the summary at its end")
        await pilot.press("tab")
        assert app.screen.focused is trials


async def test_at_80x24_the_jobs_list_shows_each_jobs_name_how_its_trials_ended_and_harbors_mean(real):
    app = job_app(real / "jobs")
    async with app.run_test(size=SMALL) as pilot:
        await read_all(app)
        await pilot.pause()
        table = app.screen.query_one("#jobs-table", DataTable)
        shown = lines(table)
        assert "Harbor's mean" in shown[0]
        assert "nop-fail" in shown[3] and "1 RewardFileNotFoundError" in shown[3]
        assert "oracle-pass" in shown[4] and "1 passed" in shown[4] and "1.000" in shown[4]
        await pilot.press("space", "shift+end")  # the mark and the name stay beside the last columns
        await pilot.pause()
        shown = lines(table)
        assert table.scroll_x > 0 and shown[0].split()[-1] == "agent"
        assert "A" in shown[1].split()[0] and "multi-step" in shown[1]


async def test_at_50_columns_the_jobs_list_keeps_help_and_quit_in_its_footer(real):
    """Once r came to the jobs list its footer at 50 columns was cut to `space mark c compare r read again
    ? he`, q quit unseen. The keys its hint line names (space, c) leave the footer first, as on the
    job screens, which keeps r, ? help and q quit whole."""
    app = job_app(real / "jobs")
    async with app.run_test(size=(50, 20)) as pilot:
        await read_all(app)
        await pilot.pause()
        assert "space marks two jobs, c compares them" in screen_text(app)
        assert footer_promises(app.screen) == ["r read again", "? help", "q quit"]
        await until(pilot, lambda: "q quit" in screen_text(app).splitlines()[-1], "q quit in the footer")
        await pilot.press("space", "down", "space", "c")  # they still work
        await until(pilot, lambda: isinstance(app.screen, CompareScreen), "two jobs compared")
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, JobsScreen), "back on the jobs")
        await pilot.resize_terminal(100, 30)
        await until(pilot, lambda: "space mark" in screen_text(app).splitlines()[-1], "space mark in the footer")
        assert footer_promises(app.screen) == ["space mark", "c compare", "r read again", "? help", "q quit"]


async def test_at_100_columns_the_jobs_list_shows_every_column_header_whole(real):
    """Harbor's four jobs at 100x30 (the smallest a task's screen draws in): the
    last column's header was cut to "agent (mode", its values whole beneath it."""
    app = job_app(real / "jobs")
    async with app.run_test(size=(100, 30)) as pilot:
        await read_all(app)
        await pilot.pause()
        table = app.screen.query_one("#jobs-table", DataTable)
        header = lines(table)[0].split("  ")
        assert [part.strip() for part in header if part.strip()][-1] == "agent", header
        assert table.max_scroll_x == 0  # every column whole: nothing to scroll to


async def test_at_80x24_two_jobs_compared_show_each_flipped_trial_beside_how_it_ended_in_each(runs, task):
    long = task("fix-the-broken-build-system-in-legacy-repo")
    make_job(runs / "jobs" / "model-a", {f"{LONG}__aaaaaaa": dict(task=long, rewards={"reward": 1.0})})
    make_job(runs / "jobs" / "model-b", {f"{LONG}__bbbbbbb": dict(task=long, exception=TIMEOUT)})
    app = job_app(runs / "jobs")
    async with app.run_test(size=SMALL) as pilot:
        await compared(app, pilot, "model-a", "model-b")
        flips = app.screen.query_one("#job-trials", DataTable)
        shown = lines(flips)
        assert f"{LONG}__aaaaaaa" in shown[1] and "✓ passed" in shown[1] and "✗ VerifierTimeoutError" in shown[1]
        tasks = app.screen.query_one("#job-tasks", DataTable)
        assert tasks.has_focus
        await pilot.press("shift+end")  # the task's name stays beside the last columns
        await pilot.pause()
        shown = lines(tasks)
        assert tasks.scroll_x > 0 and "flipped" in shown[0]
        assert "fix-the-broken-build-system-in-legacy-repo" in shown[1]


async def test_at_100x30_a_trial_fits_the_screen_and_tab_reaches_the_steps_it_cut(real):
    """Harbor's own failing trial at the smallest size the trial screen takes: its panels stood 8 lines
    taller than the terminal, so the screen scrolled to the sides, the trial's name and root cause went
    off the top, and no key brought them back."""
    app = make_trial_app(real / "jobs" / "nop-fail")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, TrialScreen)
        assert screen.max_scroll_y == 0 and screen.query_one("#trial-header").region.y == 0
        sides = screen.query_one("#sides").region
        assert sides.bottom <= SIZE[1] - 1 and sides.height >= 6  # above the footer, each side a few lines
        facts = screen.query_one("#trial-facts")
        assert facts.max_scroll_y > 0  # the agreement and the steps, cut to fit: tab reaches them
        for _ in range(3):
            await pilot.press("tab")
            if screen.focused is facts:
                break
        assert screen.focused is facts
        await pilot.press("end")
        await pilot.pause()
        assert facts.scroll_y == facts.max_scroll_y
        words = screen.query_one("#phase-words").region  # the steps' last lines, now in view
        assert facts.region.y <= words.y and words.bottom <= facts.region.bottom
        assert "replay: none yet" in text_of(app, "#phase-words")


async def test_at_80x24_a_trial_opened_from_a_job_names_esc_as_the_way_back_not_only_q(real, tmp_path):
    """A trial needs 100x30: at 80x24 its screen said only "q quits", and q ended the app, job and all."""
    app = job_app(long_named_job(real, tmp_path / "jobs" / "long"))
    async with app.run_test(size=SMALL) as pilot:
        await read_all(app)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, TrialScreen)
        text = screen_text(app)
        assert "terminal too small (need 100x30)" in text and "esc back to the trials" in text
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, JobOverviewScreen)


async def test_at_80x24_a_trial_opened_from_a_comparison_names_where_esc_goes_back_to(runs, task):
    """From a comparison's flipped trials, the notice said "esc back to the
    job's trials", where esc goes back to the comparison."""
    from tests.harbor.test_compare_tui import mark
    from verifier_tui.tui.screens.compare import CompareScreen

    alpha = task("alpha")
    make_job(runs / "jobs" / "model-a", {"alpha__a1": dict(task=alpha, rewards={"reward": 1.0})})
    make_job(runs / "jobs" / "model-b", {"alpha__b1": dict(task=alpha, rewards={"reward": 0.0})})
    app = job_app(runs / "jobs")
    async with app.run_test(size=SMALL) as pilot:
        await read_all(app)
        await mark(app, pilot, "model-a", "model-b")
        await pilot.press("c")
        await read_all(app)
        await pilot.press("tab", "enter")
        await pilot.pause(0.5)
        assert isinstance(app.screen, TrialScreen)
        text = screen_text(app)
        assert "esc back to the job's trials" not in text and "esc back to the trials" in text
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, CompareScreen)


async def test_at_100x30_a_trials_root_cause_is_read_whole(real):
    """Harbor's own failing trial: the root cause took 5 lines at 100 columns and its panel was cut at 4,
    with no scroll and no hint, so its advice ended mid-sentence ("...tests/verifier.py:28 (e opens it)
    and return 0.0 instead of raising" was missing)."""
    app = make_trial_app(real / "jobs" / "nop-fail")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert "and return 0.0 instead of raising" in screen_text(app)  # its last line
        cause = screen.query_one("#root-cause-box")
        assert cause.max_scroll_y == 0 and not cause.focusable  # whole: nothing to scroll, tab passes it by
        assert screen.max_scroll_y == 0  # the other panels gave way: the screen still does not scroll
        sides = screen.query_one("#sides").region
        assert sides.bottom <= SIZE[1] - 1 and sides.height >= 6


async def test_at_100x30_a_root_cause_longer_than_its_cap_scrolls_and_tab_reaches_it(runs, task):
    """An environment's exception of a thousand characters: the root cause stops at 8 lines, the
    panels below keep theirs, and the rest is a tab and an end away."""
    said = " ".join(f"word{n}" for n in range(150)) + " THE-END"
    exception = harbor_exception("EnvironmentStartTimeoutError", said)
    job = make_job(runs / "jobs" / "long-cause", {"demo__aaaaaaa": dict(task=task("demo"), exception=exception)})
    app = make_trial_app(job / "demo__aaaaaaa")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        cause = screen.query_one("#root-cause-box")
        assert cause.region.height == 8 and cause.max_scroll_y > 0 and screen.max_scroll_y == 0
        for _ in range(4):
            await pilot.press("tab")
            if screen.focused is cause:
                break
        assert screen.focused is cause
        await pilot.press("end")
        await pilot.pause()
        assert cause.scroll_y == cause.max_scroll_y and "THE-END" in screen_text(app)


async def test_at_80x24_two_jobs_compared_show_four_tasks_of_long_names(runs, task):
    """Four tasks of long names in each job: the tasks table, capped at 30% of the height, lost a row of
    that to the horizontal scrollbar its wide columns need and showed two tasks of the four."""
    names = [f"fix-the-broken-build-system-in-legacy-repo-{n}" for n in range(4)]
    for job, rewards in (("model-a", {"reward": 1.0}), ("model-b", {"reward": 0.0})):
        trials = {f"{name[:32]}__{n}{job[-1]}": dict(task=task(name), rewards=rewards) for n, name in enumerate(names)}
        make_job(runs / "jobs" / job, trials)
    app = job_app(runs / "jobs")
    async with app.run_test(size=SMALL) as pilot:
        await compared(app, pilot, "model-a", "model-b")
        tasks = app.screen.query_one("#job-tasks", DataTable)
        assert tasks.max_scroll_x > 0  # the columns are wider than the screen
        assert tasks.scrollable_content_region.height == tasks.region.height - 2  # all but the border are rows
        shown = screen_text(app)
        assert all(name in shown for name in names[:3])  # the column headers and three tasks, as the cap allows
        await pilot.press("shift+end")  # the rest of the columns, the task's name staying
        await pilot.pause()
        assert tasks.scroll_x > 0 and "flipped" in screen_text(app)
        flips = app.screen.query_one("#job-trials", DataTable)
        assert flips.scrollable_content_region.height >= 5  # the flipped trials keep a few rows


def header_lines(app) -> list[str]:
    """The summary's lines as drawn, wrapped to the terminal (the part the summary's cap cuts too)."""
    header = app.screen.query_one("#job-header")
    return [header.render_line(y).text for y in range(header.size.height)]


def whole_on_one_line(hints: list[str], shown: list[str]) -> None:
    for hint in hints:
        assert sum(hint in line for line in shown) == 1, (hint, shown[-4:])


async def test_at_80x24_the_keys_under_two_jobs_compared_wrap_between_keys(real):
    """Harbor's own multi-step and separate-mode compared: the summary's last line wrapped inside a key,
    "esc" at the end of one line and "jobs" at the start of the next."""
    app = job_app(real / "jobs")
    async with app.run_test(size=SMALL) as pilot:
        await compared(app, pilot, "multi-step", "separate-mode")
        whole_on_one_line(["f differences", "t task", "s sort", "esc jobs", "? keys"], header_lines(app))
        await pilot.press("f", "s")  # longer words before the keys
        await pilot.pause()
        whole_on_one_line(["showing tasks that differ", "f differences", "esc jobs", "? keys"], header_lines(app))


async def test_at_80x24_the_keys_under_a_jobs_overview_wrap_between_keys(real, tmp_path):
    app = job_app(long_named_job(real, tmp_path / "jobs" / "long"))
    async with app.run_test(size=SMALL) as pilot:
        await read_all(app)
        hints = ["f failures", "x exception", "t task", "s sort", "? keys"]
        for keys in ((), ("f",), ("s",), ("s",), ("t",)):  # each filter and sort changes the words before them
            await pilot.press(*keys)
            await pilot.pause()
            whole_on_one_line(hints, header_lines(app))


async def test_at_80x24_the_keys_over_two_marked_jobs_wrap_between_keys(runs, task):
    """Two jobs named as Harbor names them, marked A and B: the line over the list broke inside
    "enter opens a job", "job" at the start of the next line."""
    alpha = task("alpha")
    for name in ("2026-12-01__03-36-17", "2026-12-01__03-36-18"):
        make_job(runs / "jobs" / name, {"alpha__a1": dict(task=alpha, rewards={"reward": 1.0})})
    app = job_app(runs / "jobs")
    async with app.run_test(size=SMALL) as pilot:
        await read_all(app)
        await pilot.press("space", "down", "space")
        await pilot.pause()
        whole_on_one_line(["c compares them", "enter opens a job", "? keys"], header_lines(app))


async def test_a_jobs_overview_made_narrow_then_wide_again_gives_the_summarys_lines_back(real, tmp_path):
    # The summary wrapped to more lines at 60 columns kept that height once the
    # terminal was wide again: blank lines between it and the tasks, rows lost below.
    app = job_app(many_agents_job(real, tmp_path / "jobs" / "many"))
    async with app.run_test(size=(160, 45)) as pilot:
        await read_all(app)
        await pilot.pause()
        summary = app.screen.query_one("#job-summary")
        wide = summary.region.height
        # A resize is laid out, then the summary flows its text again after
        # that refresh and is laid out anew: waited for by what it shows.
        await pilot.resize_terminal(60, 20)
        # At 60 columns its text takes more lines than it had (it then scrolls, its
        # height capped below what it was): the wait below cannot pass before the widening.
        await until(pilot, lambda: summary.region.width == 60 and summary.virtual_size.height > wide, "60 columns")
        await pilot.resize_terminal(160, 45)
        await until(
            pilot, lambda: (summary.region.width, summary.region.height) == (160, wide), "its lines back", screen_text
        )


async def test_a_narrow_running_job_keeps_help_in_the_footer_when_its_keys_leave_it(real, tmp_path):
    """At 60x20 a running job's footer left f x t s out for the line above the tables that names them,
    but that line was cut there too: `tab tasks r read again q quit esc jobs`, nothing on screen naming
    f x t s or ?. Whenever keys leave the footer, ? help stays in it (the help lists them)."""
    jobs = tmp_path / "jobs"
    shutil.copytree(real / "jobs" / "oracle-pass", jobs / "oracle-pass")
    (jobs / "oracle-pass" / "result.json").unlink()  # Harbor has not ended it: r reads it again
    app = job_app(jobs)
    async with app.run_test(size=(60, 20)) as pilot:
        await read_all(app)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, JobOverviewScreen), "the job's overview")
        await read_all(app)
        await footer_shows(app, pilot, "esc jobs")
        assert "? help" in footer_promises(app.screen) and "s sort" not in footer_promises(app.screen)
        await pilot.resize_terminal(100, 30)  # room for every key, and the line naming them (? keys) in view
        await until(pilot, lambda: "s sort" in screen_text(app).splitlines()[-1], "s sort in the footer")
        assert "? help" not in footer_promises(app.screen)
        await footer_shows(app, pilot, "esc jobs")

    ended = shutil.copytree(real / "jobs" / "multi-step", tmp_path / "more" / "multi-step")
    for n in range(6):  # a note each: the summary is cut above the line naming the keys
        (ended / f"stray{n}").mkdir()
    app = job_app(ended.parent)
    async with app.run_test(size=(100, 20)) as pilot:
        await read_all(app)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, JobOverviewScreen), "the job's overview")
        await read_all(app)
        await pilot.pause()
        assert "? keys" not in screen_text(app)
        assert footer_promises(app.screen) == ["tab tasks", "filter", "s sort", "? help", "q quit", "esc jobs"]


async def test_at_60_columns_each_job_screen_s_footer_still_shows_esc_the_way_back(real, tmp_path):
    """At 60x20 a running job's footer was cut after "r read again q", two jobs
    compared after "? help q": esc, the way back to the jobs, unseen. The keys
    the line above the tables names (f x t s) leave the footer there."""
    jobs = tmp_path / "jobs"
    for name in ("multi-step", "oracle-pass"):
        shutil.copytree(real / "jobs" / name, jobs / name)
    (jobs / "oracle-pass" / "result.json").unlink()  # Harbor has not ended it: r reads it again
    app = job_app(jobs)
    async with app.run_test(size=(60, 20)) as pilot:
        await read_all(app)
        app.screen.query_one(DataTable).move_cursor(row=[job.name for job in app.screen.jobs].index("oracle-pass"))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, JobOverviewScreen), "the job's overview")
        await read_all(app)
        assert "r read again" in footer_promises(app.screen)
        await footer_shows(app, pilot, "esc jobs")
        await pilot.press("f")  # named on the line above the tables, it still filters
        await until(pilot, lambda: "failures only" in text_of(app, "#job-header"), "failures only")
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, JobsScreen), "back on the jobs")
        await pilot.press("space", "down", "space", "c")  # the cursor came back on oracle-pass: the latest first
        await until(pilot, lambda: isinstance(app.screen, CompareScreen), "two jobs compared")
        await read_all(app)
        await footer_shows(app, pilot, "esc jobs")
        assert "? help" in footer_promises(app.screen)  # the line naming f t s is cut with the summary here
        await pilot.resize_terminal(100, 30)  # wide enough again: the footer names every key
        await until(pilot, lambda: "s sort" in screen_text(app).splitlines()[-1], "s sort in the footer")
        await pilot.resize_terminal(60, 20)
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, JobsScreen), "back on the jobs from the comparison")
        app.screen.query_one(DataTable).move_cursor(row=[job.name for job in app.screen.jobs].index("multi-step"))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, JobOverviewScreen), "a job Harbor ended")
        await read_all(app)
        assert "filter" in footer_promises(app.screen) and "s sort" in footer_promises(app.screen)  # room for all
        await footer_shows(app, pilot, "esc jobs")
