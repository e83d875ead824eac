"""Two jobs compared from the jobs list (space marks, c compares), driven
through the real app: the comparison's tables, its keys (the overview's where
they mean the same), a flipped trial opened, and its picture."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable

from tests.harbor.test_job_tui import HeldReads, happened, job_app, read_all
from tests.harbor.trial_app_under_test import SIZE, SNAPSHOT_SIZE, text_of, until
from tests.helpers.harbor import harbor_exception, make_job
from tests.tui.app_under_test import screen_text
from verifier_tui.tui.screens.compare import CompareScreen
from verifier_tui.tui.screens.jobs import JobsScreen
from verifier_tui.tui.screens.trial import TrialScreen

TIMEOUT = harbor_exception("VerifierTimeoutError", "Verifier execution timed out after 5.0 seconds")


@pytest.fixture
def jobs(runs, task):
    """``runs/jobs`` with model-a and model-b (as tests/harbor/test_compare.py's) and a third job."""
    alpha, beta, gamma = (task(name) for name in ("alpha", "beta", "gamma"))
    make_job(
        runs / "jobs" / "model-a",
        {
            "alpha__a1": dict(task=alpha, rewards={"reward": 1.0}),
            "alpha__a2": dict(task=alpha, rewards={"reward": 1.0}),
            "beta__a1": dict(task=beta, rewards={"reward": 0.0}),
        },
    )
    make_job(
        runs / "jobs" / "model-b",
        {
            "alpha__b1": dict(task=alpha, rewards={"reward": 1.0}),
            "alpha__b2": dict(task=alpha, rewards={"reward": 0.0}),
            "beta__b1": dict(task=beta, rewards={"reward": 1.0}),
            "gamma__b1": dict(task=gamma, exception=TIMEOUT),
        },
    )
    make_job(runs / "jobs" / "other", {"alpha__c1": dict(task=alpha, rewards={"reward": 1.0})})
    return runs / "jobs"


async def mark(app, pilot, *names: str) -> None:
    """Mark the jobs ``names`` in the jobs list, in that order (A, then B)."""
    table = app.screen.query_one(DataTable)
    for name in names:
        table.move_cursor(row=[job.name for job in app.screen.jobs].index(name))
        await pilot.press("space")
    await pilot.pause()


async def compared(app, pilot, a: str, b: str) -> None:
    """The jobs list read, ``a`` and ``b`` marked and compared, the comparison read."""
    await read_all(app)
    await mark(app, pilot, a, b)
    await pilot.press("c")
    await read_all(app)
    await pilot.pause()


def rows(app, selector: str) -> list[list[str]]:
    table = app.screen.query_one(selector, DataTable)
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


async def test_two_marked_jobs_compared_task_by_task(jobs):
    app = job_app(jobs)
    async with app.run_test(size=SIZE) as pilot:
        await read_all(app)
        await pilot.press("c")  # nothing marked: said, nothing pushed
        await pilot.pause()
        assert isinstance(app.screen, JobsScreen) and any("mark two jobs" in n for n in app.notices)
        await mark(app, pilot, "model-a", "other", "model-b")  # a third mark lets go of the first
        marks = {row[1]: row[0] for row in rows(app, "#jobs-table")}
        assert marks == {"model-a": " ", "other": "A", "model-b": "B"}
        await mark(app, pilot, "other", "model-a")  # unmarked, then marked again: B stays, A is model-b's partner
        marks = {row[1]: row[0] for row in rows(app, "#jobs-table")}
        assert marks == {"model-a": "B", "other": " ", "model-b": "A"}
        assert "A model-b, B model-a: c compares them" in text_of(app, "#job-header")
        await mark(app, pilot, "model-b", "model-b")
        await pilot.press("c")
        await read_all(app)
        assert isinstance(app.screen, CompareScreen)
        header = text_of(app, "#job-header")
        assert "A  job model-a · 3 trials" in header and "B  job model-b · 4 trials" in header
        assert "only A passes: alpha" in header and "only B passes: beta" in header and "2 trials flipped" in header
        tasks = rows(app, "#job-tasks")
        assert tasks[0] == ["alpha", "2/2", "1.000", "1/2", "0.500", "-0.500", "1"]
        assert [r[0] for r in tasks] == ["alpha", "beta", "gamma"]
        flips = rows(app, "#job-trials")
        assert [f[0] for f in flips] == ["alpha__a2", "beta__a1"]
        # The overview's keys: s sorts, t narrows to the task under the cursor, esc goes back.
        await pilot.press("s")
        await pilot.pause()
        assert [r[0] for r in rows(app, "#job-tasks")] == ["beta", "alpha", "gamma"]  # largest difference first
        await pilot.press("t")  # the cursor stayed on alpha, its task, sorted to the second row
        await pilot.pause()
        assert [f[-1] for f in rows(app, "#job-trials")] == ["alpha"]
        await pilot.press("tab", "enter")  # the flipped trial: A's side opens beside its replay
        await until(pilot, lambda: isinstance(app.screen, TrialScreen), "the flipped trial's screen")
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, CompareScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, JobsScreen)


def test_the_comparison(snap_compare, jobs):
    app = job_app(jobs)

    async def run_before(pilot) -> None:
        await compared(app, pilot, "model-a", "model-b")

    assert snap_compare(app, terminal_size=SNAPSHOT_SIZE, run_before=run_before)


async def test_a_job_that_cannot_be_read_is_said_never_a_crash(jobs, monkeypatch):
    def unreadable(*folders, **_options):
        raise PermissionError(13, "Permission denied", str(folders[0]))

    monkeypatch.setattr("verifier_tui.tui.screens.compare.read_compared", unreadable)
    monkeypatch.chdir(jobs.parent)  # paths are shown from where the tool was started
    app = job_app(jobs)
    async with app.run_test(size=SIZE) as pilot:
        await read_all(app)
        await mark(app, pilot, "model-a", "model-b")
        await pilot.press("c")
        await read_all(app, timeout=10)
        await pilot.pause()
        header = text_of(app, "#job-header")
        # which job: its side and its path (two jobs named model-a in two runs folders)
        said = f"job A {jobs.name}/model-a cannot be listed: Permission denied: nothing is compared"
        assert said in header, header
        assert isinstance(app.screen, CompareScreen) and app.is_running
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, JobsScreen)


async def test_a_marked_job_removed_before_c_is_said_not_read_for_ever(jobs, monkeypatch):
    """Two jobs marked, one removed, then ``c``: the header said ``B  job
    model-b (reading)`` for good, under a toast "something went wrong _read:
    FileNotFoundError: ..." naming a function of ours."""
    import shutil

    monkeypatch.chdir(jobs.parent)  # paths are shown from where the tool was started
    app = job_app(jobs)
    async with app.run_test(size=SIZE) as pilot:
        await read_all(app)
        await mark(app, pilot, "model-a", "model-b")
        shutil.rmtree(jobs / "model-b")
        await pilot.press("c")
        await read_all(app, timeout=10)
        await pilot.pause()
        header = text_of(app, "#job-header")
        assert "(reading)" not in header, header
        assert "B  job model-b (not read)" in header, header
        said = f"job B {jobs.name}/model-b cannot be listed: No such file or directory: nothing is compared"
        assert said in header, header
        assert not any("went wrong" in notice or "_read" in notice for notice in app.notices), app.notices


async def test_two_jobs_with_no_task_in_common_are_said_so(runs, task):
    """The note the headless comparison ends with is on the screen too."""
    make_job(runs / "jobs" / "left", {"gamma__a1": dict(task=task("gamma"), rewards={"reward": 1.0})})
    make_job(runs / "jobs" / "right", {"delta__b1": dict(task=task("delta"), rewards={"reward": 1.0})})
    app = job_app(runs / "jobs")
    async with app.run_test(size=SIZE) as pilot:
        await compared(app, pilot, "left", "right")
        assert isinstance(app.screen, CompareScreen)
        assert "note: the two jobs ran no task in common: each task is in one job only, so none is compared" in text_of(
            app, "#job-header"
        )


async def test_f_with_no_task_that_differs_says_none_does(runs, task):
    """f on two jobs that agree left both tables empty under "showing tasks that differ", as if
    the comparison had not been read."""
    alpha = task("alpha")
    make_job(runs / "jobs" / "left", {"alpha__a1": dict(task=alpha, rewards={"reward": 1.0})})
    make_job(runs / "jobs" / "right", {"alpha__b1": dict(task=alpha, rewards={"reward": 1.0})})
    app = job_app(runs / "jobs")
    async with app.run_test(size=SIZE) as pilot:
        await compared(app, pilot, "left", "right")
        await pilot.press("f")
        assert rows(app, "#job-tasks") == []
        assert "showing tasks that differ: none · sorted" in text_of(app, "#job-header")
        await pilot.press("f")
        assert "differ: none" not in text_of(app, "#job-header") and len(rows(app, "#job-tasks")) == 1


async def test_t_on_a_task_with_no_flip_says_none_flipped(jobs):
    """t on a task none of whose trials flipped (gamma, in B alone) left the flips
    table empty under "showing task gamma", as if the comparison had not been
    read; the flips shown for the task are counted."""
    app = job_app(jobs)
    async with app.run_test(size=SIZE) as pilot:
        await compared(app, pilot, "model-a", "model-b")
        tasks = app.screen.query_one("#job-tasks", DataTable)
        tasks.move_cursor(row=[r[0] for r in rows(app, "#job-tasks")].index("gamma"))
        await pilot.press("t")
        await pilot.pause()
        assert rows(app, "#job-trials") == []
        assert "showing task gamma: no trial flipped · sorted" in text_of(app, "#job-header"), text_of(
            app, "#job-header"
        )
        tasks.move_cursor(row=[r[0] for r in rows(app, "#job-tasks")].index("alpha"))
        await pilot.press("t", "t")  # off, then on alpha
        await pilot.pause()
        assert len(rows(app, "#job-trials")) == 1
        assert "showing task alpha: 1 trial flipped · sorted" in text_of(app, "#job-header")


async def test_means_by_reward_key_are_shown_narrowed_and_sorted_by_their_differences(runs, task):
    """alpha: one key, +0.5; beta: B higher on key b only; gamma: different keys, both passed; delta: the same."""
    alpha, beta, gamma, delta = (task(name) for name in ("alpha", "beta", "gamma", "delta"))
    make_job(
        runs / "jobs" / "keys-a",
        {
            "alpha__a1": dict(task=alpha, rewards={"reward": 0.5}),
            "beta__a1": dict(task=beta, rewards={"a": 1, "b": 0}),
            "gamma__a1": dict(task=gamma, rewards={"x": 1, "y": 1}),
            "delta__a1": dict(task=delta, rewards={"reward": 1}),
        },
    )
    make_job(
        runs / "jobs" / "keys-b",
        {
            "alpha__b1": dict(task=alpha, rewards={"reward": 1}),
            "beta__b1": dict(task=beta, rewards={"a": 1, "b": 1}),
            "gamma__b1": dict(task=gamma, rewards={"reward": 1}),
            "delta__b1": dict(task=delta, rewards={"reward": 1}),
        },
    )
    app = job_app(runs / "jobs")
    async with app.run_test(size=SIZE) as pilot:
        await compared(app, pilot, "keys-a", "keys-b")
        tasks = {row[0]: row for row in rows(app, "#job-tasks")}
        assert tasks["beta"] == [
            "beta",
            "0/1",
            "a 1.000, b 0.000",
            "1/1",
            "a 1.000, b 1.000",
            "a +0.000, b +1.000",
            "1",
        ]
        assert tasks["gamma"] == ["gamma", "1/1", "x 1.000, y 1.000", "1/1", "reward 1.000", "-", ""]
        assert "B - A is given only for a key both jobs have" in text_of(app, "#job-header")
        await pilot.press("f")  # what differs: gamma's keys do, delta nothing
        await pilot.pause()
        assert sorted(r[0] for r in rows(app, "#job-tasks")) == ["alpha", "beta", "gamma"]
        await pilot.press("s")  # beta's largest difference (b, +1.0) first
        await pilot.pause()
        assert [r[0] for r in rows(app, "#job-tasks")] == ["beta", "alpha", "gamma"]


def tab_word(app) -> str:
    """What the footer says tab reaches (the table not focused)."""
    return app.screen.active_bindings["tab"].binding.description


async def test_enter_on_a_task_narrows_the_flips_and_tab_then_enter_opens_one(jobs):
    """Enter on the tasks (where the comparison starts) moved the focus to the
    flipped trials without a word: the tab that followed went back to the
    tasks, and the next enter did nothing to be seen, as if it were lost."""
    app = job_app(jobs)
    async with app.run_test(size=SIZE) as pilot:
        await read_all(app)
        await mark(app, pilot, "model-a", "model-b")
        await pilot.press("c")
        await read_all(app)
        assert app.screen.focused.id == "job-tasks" and tab_word(app) == "trials"
        await pilot.press("down", "enter")  # beta
        await pilot.pause()
        assert [f[-1] for f in rows(app, "#job-trials")] == ["beta"]
        assert app.notices[-1] == "1 flipped trial of task beta below: tab reaches it, t shows every task"
        assert app.screen.focused.id == "job-tasks"
        assert app.screen.query_one("#job-tasks", DataTable).cursor_row == 1  # the task chosen, still under the cursor
        await pilot.press("tab")
        await pilot.pause()
        assert app.screen.focused.id == "job-trials" and tab_word(app) == "tasks"
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, TrialScreen), "the flipped trial's screen")
        assert app.screen.opened.trial.name == "beta__a1"


@pytest.mark.parametrize("key", ["escape", "q"])
async def test_esc_or_q_while_two_jobs_are_read_for_a_comparison_stops_reading_them(jobs, monkeypatch, key):
    # The comparison reads both jobs in a thread, which a cancelled worker
    # does not stop: esc left it reading on, for nothing, and q waited for it
    # as the process ended (two jobs of 2,000 trials: 3 s after q). Here the
    # first trial's read is held until the key has cancelled the worker.
    from verifier_tui.engine.harbor import overview
    from verifier_tui.tui.screens import compare as compare_screen

    held = HeldReads(overview.read_trial_row)
    app = job_app(jobs)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await read_all(app)
            await mark(app, pilot, "model-a", "model-b")
            monkeypatch.setattr(overview, "read_trial_row", held)
            monkeypatch.setattr(compare_screen, "read_compared", held.whole(compare_screen.read_compared))
            await pilot.press("c")
            await happened(held.first, "the first trial's read")
            assert isinstance(app.screen, CompareScreen)
            await pilot.press(key)
            await happened(held.worker.cancelled_event, f"the reading's worker cancelled by {key}")
            if key == "escape":
                await pilot.pause()
                assert isinstance(app.screen, JobsScreen)
                shown, notices = screen_text(app), list(app.notices)
            held.release()
            await happened(held.ended, "the end of the reading")
            if key == "escape":  # the jobs list shows no more of the reading it cancelled
                await pilot.pause(0.2)
                assert isinstance(app.screen, JobsScreen)
                assert screen_text(app) == shown and app.notices == notices
    finally:
        held.release()  # a test that failed above leaves no thread waiting
    # the one being read when the key came, no more: none of B's trials
    assert [folder.parent.name for folder in held.started] == ["model-a"], held.started


async def test_the_comparison_notes_each_folder_of_either_job_that_is_no_trial(jobs):
    """``compare`` notes a link (never followed) and a stray folder of each
    job (``note: A: …``); the TUI's comparison said nothing of them."""
    (jobs / "model-a" / "alpha__a3").symlink_to(jobs / "other" / "alpha__c1")
    (jobs / "model-b" / "scratch").mkdir()
    app = job_app(jobs)
    async with app.run_test(size=SIZE) as pilot:
        await compared(app, pilot, "model-a", "model-b")
        header = text_of(app, "#job-header")
        assert f"note: A: alpha__a3 is a link to {jobs / 'other' / 'alpha__c1'}: not read here" in header, header
        assert "note: B: scratch: not a trial folder (no trial.log, no config.json of a trial): left out" in header


async def test_the_comparison_says_a_links_target_from_where_the_user_started(jobs, monkeypatch):
    """A trial folder of job A that is a link: ``run`` and the rest of the
    app say paths from where the user started; the comparison said it absolute."""
    (jobs / "model-a" / "alpha__a3").symlink_to(jobs / "other" / "alpha__c1")
    monkeypatch.chdir(jobs)
    app = job_app(jobs)
    async with app.run_test(size=SIZE) as pilot:
        await compared(app, pilot, "model-a", "model-b")
        header = text_of(app, "#job-header")
        assert "note: A: alpha__a3 is a link to other/alpha__c1: not read here" in header, header


async def test_a_mean_that_is_a_number_in_one_job_only_is_a_difference(runs, task):
    """alpha: A's trials scored 1e308 twice (Harbor's sum overflows: no
    number), B's 1.0 twice; beta: 0.5 against 1.0; gamma alike. ``f`` hid
    alpha and ``s`` sorted it as no difference (its ``differences`` is
    ``{}``), though A has no mean there and B has 1.000."""
    alpha, beta, gamma = (task(name) for name in ("alpha", "beta", "gamma"))
    make_job(
        runs / "jobs" / "big-a",
        {
            "alpha__a1": dict(task=alpha, rewards={"reward": 1e308}),
            "alpha__a2": dict(task=alpha, rewards={"reward": 1e308}),
            "beta__a1": dict(task=beta, rewards={"reward": 0.5}),
            "gamma__a1": dict(task=gamma, rewards={"reward": 1.0}),
        },
    )
    make_job(
        runs / "jobs" / "big-b",
        {
            "alpha__b1": dict(task=alpha, rewards={"reward": 1.0}),
            "alpha__b2": dict(task=alpha, rewards={"reward": 1.0}),
            "beta__b1": dict(task=beta, rewards={"reward": 1.0}),
            "gamma__b1": dict(task=gamma, rewards={"reward": 1.0}),
        },
    )
    app = job_app(runs / "jobs")
    async with app.run_test(size=SIZE) as pilot:
        await compared(app, pilot, "big-a", "big-b")
        await pilot.press("f")
        await pilot.pause()
        assert sorted(r[0] for r in rows(app, "#job-tasks")) == ["alpha", "beta"]
        await pilot.press("s")  # a mean one job has no number for first: no difference is larger
        await pilot.pause()
        assert [r[0] for r in rows(app, "#job-tasks")] == ["alpha", "beta"]
