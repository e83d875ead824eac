"""The TUI on a folder of jobs and on a job, driven by Textual's pilot: the
list of jobs, a job's overview (counts, Harbor's mean, tasks, trials), its
filters and order, `?` help, and a trial opened from it and left again."""

from __future__ import annotations

import asyncio
import json
import shutil
import threading
from pathlib import Path
from typing import Any

from textual.app import App
from textual.widgets import DataTable

from tests.harbor.job_copies import copy_job_files, copy_trial, hostile_jobs, mixed_job
from tests.harbor.trial_app_under_test import SIZE, TrialAppUnderTest, text_of, until
from tests.helpers.harbor import PASSED, harbor_exception, make_job
from tests.tui.app_under_test import footer_promises, palette_maximizes, screen_text
from verifier_tui.engine.session import Options
from verifier_tui.tui.screens import job_overview
from verifier_tui.tui.screens.compare import CompareScreen
from verifier_tui.tui.screens.help import HelpScreen
from verifier_tui.tui.screens.job import JobScreen
from verifier_tui.tui.screens.job_overview import JobOverviewScreen
from verifier_tui.tui.screens.jobs import JobsScreen
from verifier_tui.tui.screens.trial import TrialScreen
from verifier_tui.tui.workarounds import Table


def job_app(path) -> TrialAppUnderTest:
    """The app as ``verifier-tui PATH`` starts it on a job or a folder of jobs: nothing read before it shows."""
    return TrialAppUnderTest(path, options=Options(), watch=False, deterministic=True)


async def read_all(app, timeout: float = 60.0) -> None:
    """Until the screen on top has read every job or trial."""

    async def done() -> None:
        while not getattr(app.screen, "done", False):
            await asyncio.sleep(0.02)

    await asyncio.wait_for(done(), timeout)


class HeldReads:
    """Stands in for a read a screen's worker thread makes once per folder:
    each read is counted as it starts and held until :meth:`release`, and the
    worker known, so a test acts while a read is under way (no clock)."""

    def __init__(self, read) -> None:
        self.read = read
        self.started: list[Path] = []
        self.worker: Any = None
        self.first = threading.Event()
        self.released = threading.Event()
        self.ended = threading.Event()

    def __call__(self, folder: Path):
        from textual.worker import get_current_worker

        if self.worker is None:
            self.worker = get_current_worker()
        self.started.append(folder)
        self.first.set()
        self.released.wait(HELD_S)
        return self.read(folder)

    def whole(self, reading):
        """``reading`` (the worker's whole reading) that says when it is over."""

        def read(*args, **kwargs):
            try:
                return reading(*args, **kwargs)
            finally:
                self.ended.set()

        return read

    def release(self) -> None:
        self.released.set()


HELD_S = 30.0  # a bound on each wait: a test that reaches it fails, it does not wait on


async def happened(event: threading.Event, what: str) -> None:
    """Waits (off the event loop, which goes on) until ``event`` is set; fails saying ``what`` did not happen."""
    assert await asyncio.to_thread(event.wait, HELD_S), f"{what} did not happen"


def trial_names(app) -> list[str]:
    table = app.screen.query_one("#job-trials", DataTable)
    return [str(table.get_row_at(i)[0]) for i in range(table.row_count)]


async def test_the_jobs_folder_lists_its_jobs_and_opens_one(real):
    app = job_app(real / "jobs")
    async with app.run_test(size=SIZE) as pilot:
        await read_all(app)
        assert isinstance(app.screen, JobsScreen)
        table = app.screen.query_one(DataTable)
        rows = [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]
        assert [row[1] for row in rows] == ["multi-step", "separate-mode", "nop-fail", "oracle-pass"]  # after the marks
        assert rows[2][2:5] == ["-", "1", "1 RewardFileNotFoundError"] and rows[2][6] == "nop"
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        assert "Open the job" in str(app.screen.query_one("#help-text").content)
        # every key stands apart from its title, in one column: "home end" ran into it ("home endTo the first")
        keys = str(app.screen.query_one("#help-text").content).split("Keys\n", 1)[1].splitlines()
        assert any(line.startswith("  home end To the first or last row: ") for line in keys), keys
        opens = next(line for line in keys if "Open the job" in line)
        assert opens.index("Open the job") == len("  home end "), opens
        await pilot.press("escape", "down", "down", "enter")
        await read_all(app)
        assert isinstance(app.screen, JobOverviewScreen) and app.screen.job_name == "nop-fail"
        assert "1 RewardFileNotFoundError" in text_of(app, "#job-header")
        await pilot.press("escape")
        assert isinstance(app.screen, JobsScreen)


async def test_f_on_a_job_with_no_failure_says_none_is(runs, task):
    """f on a job whose every trial passed left the table empty under "showing failures only"."""
    hello = task("hello")
    make_job(runs / "jobs" / "green", {"hello__1": dict(task=hello, **PASSED), "hello__2": dict(task=hello, **PASSED)})
    app = job_app(runs / "jobs" / "green")
    async with app.run_test(size=SIZE) as pilot:
        await read_all(app)
        await pilot.press("f")
        assert trial_names(app) == []
        assert "showing failures only: none · sorted" in text_of(app, "#job-header")
        await pilot.press("f")
        assert len(trial_names(app)) == 2 and "only: none" not in text_of(app, "#job-header")


async def test_a_jobs_overview_filters_sorts_and_opens_a_trial(real, tmp_path):
    job = mixed_job(real, tmp_path / "jobs" / "mixed")
    app = job_app(job)
    async with app.run_test(size=SIZE) as pilot:
        await read_all(app)
        assert isinstance(app.screen, JobOverviewScreen)
        header = text_of(app, "#job-header")
        assert (
            "ended  2 passed, 1 reward below 1, 1 AgentTimeoutError, 1 RewardFileNotFoundError, "
            "1 agent failed, 1 not finished"
        ) in header
        assert "Harbor's mean leaves out 2 trials with no valid reward" in header
        assert "2,000 input tokens, 500 output tokens, $0.0200" in header
        tasks = app.screen.query_one("#job-tasks", DataTable)
        assert [str(c) for c in tasks.get_row_at(0)] == ["hello-file", "7", "2", "0.500", "2"]
        assert len(trial_names(app)) == 7
        await pilot.press("f")
        assert "hello-file__pass001" not in trial_names(app) and len(trial_names(app)) == 5
        assert "showing failures only" in text_of(app, "#job-header")
        await pilot.press("f", "x")
        assert trial_names(app) == ["hello-file__slow004"]  # the first exception type: AgentTimeoutError
        await pilot.press("x")
        assert trial_names(app) == ["hello-file__nop0005"]
        await pilot.press("x", "s")
        assert len(trial_names(app)) == 7 and "sorted by outcome" in text_of(app, "#job-header")
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        help_text = str(app.screen.query_one("#help-text").content)
        assert "Failures only" in help_text and "Filter by exception type" in help_text
        await pilot.press("q")
        assert isinstance(app.screen, JobOverviewScreen)
        await pilot.press("t")
        assert all("hello-file" in name for name in trial_names(app))
        assert "task hello-file" in text_of(app, "#job-header")
        await pilot.press("t", "s", "s", "s", "s")  # back to sorted by name
        await pilot.press("enter")  # the first trial: hello-file__exit006
        await pilot.pause()
        assert isinstance(app.screen, TrialScreen) and app.screen.opened.trial.name == "hello-file__exit006"
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, JobOverviewScreen)


async def test_a_big_job_is_two_tables_not_a_widget_per_trial(real, tmp_path):
    job = copy_job_files(real, tmp_path / "jobs" / "big")
    for index in range(600):
        copy_trial(real, job, f"hello-file__{index:07d}")
    app = job_app(job)
    async with app.run_test(size=SIZE):
        await read_all(app)
        assert len(trial_names(app)) == 600
        assert "600 trials" in text_of(app, "#job-header")
        assert len(list(app.screen.query("*"))) < 30


async def test_files_harbor_never_writes_are_shown_as_they_are_never_obeyed(real, tmp_path):
    job = hostile_jobs(real, tmp_path)
    app = job_app(job.parent)
    async with app.run_test(size=SIZE) as pilot:
        await read_all(app)
        await pilot.press("enter")
        await read_all(app)
        assert isinstance(app.screen, JobOverviewScreen)
        names = trial_names(app)
        assert "odd__aaaaaaa" in names  # named by its folder: the markup and escape its files say are not used
        assert len(names) == 4
        await pilot.press("f", "x", "s", "t")
        assert app.is_running


async def test_a_row_drawn_before_its_columns_were_measured_is_drawn_again_at_their_widths():
    """The job screens' table, given rows at once: a frame drawn before the table measured them
    (on a busy machine, the cursor's row repainted as they arrive) showed that row cut to the
    headers' widths, and it stayed so (seen as "mul" for multi-step in the jobs list)."""

    class OneTable(App[None]):
        CSS = "Table { height: 1fr; }"

        def compose(self):
            yield Table(cursor_type="row")

    app = OneTable()
    async with app.run_test(size=(60, 8)) as pilot:
        table = app.query_one(Table)
        table.add_columns("job", "started")
        await pilot.pause()
        table.add_rows([("multi-step", "2026-12-01 03:36"), ("other-job", "2026-11-30 01:00")])
        assert table.render_line(1).text.split() == ["mul", "2026-12"]  # the frame in between
        await pilot.pause()
        assert [table.render_line(y).text.split() for y in (1, 2)] == [
            ["multi-step", "2026-12-01", "03:36"],
            ["other-job", "2026-11-30", "01:00"],
        ]


async def test_a_trial_folder_that_cannot_be_read_is_listed_and_the_job_read_to_its_end(task, runs, monkeypatch):
    job = make_job(
        runs / "jobs" / "j", {"demo__ok": dict(task=task(), **PASSED), "demo__shut": dict(task=task(), **PASSED)}
    )
    is_file = Path.is_file

    def shut(path):  # what a folder of mode 000 does to a user who is not root
        if path.parent.name == "demo__shut":
            raise PermissionError(13, "Permission denied", str(path))
        return is_file(path)

    monkeypatch.setattr(Path, "is_file", shut)
    app = job_app(job)
    async with app.run_test(size=SIZE):
        await read_all(app, timeout=20)  # the screen stopped at "0 of 2 folders read", for good
        assert sorted(trial_names(app)) == ["demo__ok", "demo__shut"]


async def test_a_job_folder_that_cannot_be_listed_says_so(task, runs, monkeypatch):
    job = make_job(
        runs / "jobs" / "j", {"demo__a": dict(task=task(), **PASSED), "demo__b": dict(task=task(), **PASSED)}
    )

    def unlisted(folder):  # what a job folder of mode 0o111 does to a user who is not root
        raise PermissionError(13, "Permission denied", str(folder))

    monkeypatch.setattr("verifier_tui.tui.screens.job_overview.sub_folders", unlisted)
    monkeypatch.chdir(runs)  # paths are shown from where the tool was started
    app = job_app(job)
    async with app.run_test(size=SIZE):
        await read_all(app, timeout=20)
        # worded as compare's faces word a job they cannot list: named by its path, as the TUI shows paths
        assert "job jobs/j cannot be listed: Permission denied" in text_of(app, "#job-header")


async def test_a_trial_that_cannot_be_read_when_opened_says_so_not_a_fault(task, runs, monkeypatch):
    job = make_job(
        runs / "jobs" / "j", {"demo__a": dict(task=task(), **PASSED), "demo__b": dict(task=task(), **PASSED)}
    )

    def shut(trial, *args, **kwargs):  # a trial folder of mode 0o444, as a user who is not root meets it
        raise PermissionError(13, "Permission denied", str(trial.path / "artifacts"))

    monkeypatch.setattr("verifier_tui.tui.trial_app.TrialSession", shut)
    app = job_app(job)
    async with app.run_test(size=SIZE) as pilot:
        await read_all(app)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, JobOverviewScreen)
        assert app.notices[-1] == f"cannot open demo__a: {job / 'demo__a' / 'artifacts'}: Permission denied"


async def test_esc_on_the_lone_trial_of_a_job_reaches_the_jobs_overview(task, runs):
    """A job of one trial opens that trial, and its overview (Harbor's mean,
    what it leaves out) could not be reached: esc did nothing."""
    job = make_job(runs / "jobs" / "j", {"demo__only": dict(task=task(), **PASSED)})
    app = job_app(job)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        assert isinstance(app.screen, TrialScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, JobOverviewScreen)
        await read_all(app)
        assert trial_names(app) == ["demo__only"]


async def test_tab_to_the_tasks_and_enter_narrows_the_trials_then_tab_and_one_enter_open_one(real, tmp_path):
    """After tab (to the tasks), enter narrowed the trials and moved the focus
    to them without a word: the tab that followed went back to the tasks and
    the next enter did nothing to be seen; only the second opened the trial."""
    job = mixed_job(real, tmp_path / "jobs" / "mixed")
    app = job_app(job)
    async with app.run_test(size=SIZE) as pilot:
        await read_all(app)
        assert app.screen.focused.id == "job-trials"
        assert app.screen.active_bindings["tab"].binding.description == "tasks"
        await pilot.press("tab", "enter")
        await pilot.pause()
        assert app.notices[-1] == "7 trials of task hello-file below: tab reaches them, t shows every task"
        assert "showing task hello-file" in text_of(app, "#job-header")
        assert app.screen.active_bindings["tab"].binding.description == "trials"
        await pilot.press("tab", "enter")  # the first trial: hello-file__exit006
        await pilot.pause()
        assert isinstance(app.screen, TrialScreen) and app.screen.opened.trial.name == "hello-file__exit006"


async def test_enter_on_a_task_whose_trials_the_filters_hide_says_none_is_shown(task, runs):
    """It said "0 trials of task demo below: tab reaches them", to an empty table."""
    job = make_job(
        runs / "jobs" / "j", {"demo__a": dict(task=task(), **PASSED), "demo__b": dict(task=task(), **PASSED)}
    )
    app = job_app(job)
    async with app.run_test(size=SIZE) as pilot:
        await read_all(app)
        await pilot.press("f", "tab", "enter")  # failures only: both passed
        await pilot.pause()
        assert app.notices[-1] == "no trial of task demo is shown, t shows every task"


async def test_the_lone_trial_of_a_job_that_cannot_be_opened_leaves_the_overview_and_says_why(task, runs, monkeypatch):
    """The app ended with a traceback: the lone trial was opened with no word for a folder it cannot read."""
    from verifier_tui.engine.harbor import folders

    job = make_job(runs / "jobs" / "j", {"demo__only": dict(task=task(), **PASSED)})

    def shut(path):  # a trial folder of mode 000, as a user who is not root meets it
        raise folders.HarborFolderError(f"the trial folder {Path(path).name} cannot be read (Permission denied)")

    monkeypatch.setattr(folders, "open_trial", shut)
    app = job_app(job)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, JobOverviewScreen)
        assert app.notices[-1] == (
            "cannot open demo__only: the trial folder demo__only cannot be read (Permission denied)"
        )


async def test_enter_on_a_trial_that_can_no_longer_be_read_says_so_on_the_overview(task, runs, monkeypatch):
    """A trial folder read as unreadable raises HarborFolderError: enter on its row ended the app."""
    from verifier_tui.engine.harbor import folders

    job = make_job(
        runs / "jobs" / "j", {"demo__a": dict(task=task(), **PASSED), "demo__b": dict(task=task(), **PASSED)}
    )
    app = job_app(job)
    async with app.run_test(size=SIZE) as pilot:
        await read_all(app)

        def shut(path):  # made mode 000 since the overview listed it
            raise folders.HarborFolderError(f"the trial folder {Path(path).name} cannot be read (Permission denied)")

        monkeypatch.setattr(folders, "open_trial", shut)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, JobOverviewScreen)
        assert app.notices[-1] == "cannot open demo__a: the trial folder demo__a cannot be read (Permission denied)"


async def test_a_killed_trial_is_shown_under_the_name_its_task_recorded(task, runs, monkeypatch):
    # Harbor names a task by task.toml's [task] name (Task.name) and says so in
    # result.json only: a killed trial's config.json gives the task's folder. The
    # overview reads trials as they come, and the killed one (alpha__a1) comes
    # before any trial that recorded the name: it is the same task, as `test JOB` says.
    alpha = task("alpha")
    passed = dict(task=alpha, rewards={"reward": 1.0})
    job = make_job(runs / "jobs" / "killed", {"alpha__a1": passed, "alpha__a2": passed, "alpha__a3": passed})
    for name in ("alpha__a2", "alpha__a3"):
        result = job / name / "result.json"
        result.write_text(json.dumps(json.loads(result.read_text()) | {"task_name": "org/alpha"}))
    (job / "alpha__a1" / "result.json").unlink()  # Harbor was killed before it wrote it
    # Each trial posted to the tables on its own, as a big job's are in batches:
    # the killed one is drawn under "alpha" before the others are read.
    monkeypatch.setattr(job_overview, "SLICE_S", 0.0)
    monkeypatch.setattr(job_overview, "POST_S", 0.0)
    app = job_app(job)
    async with app.run_test(size=SIZE) as pilot:
        await read_all(app)
        tasks = app.screen.query_one("#job-tasks", DataTable)
        rows = [[str(c) for c in tasks.get_row_at(i)] for i in range(tasks.row_count)]
        assert rows == [["org/alpha", "3", "2", "1.000", "0"]], rows
        trials = app.screen.query_one("#job-trials", DataTable)
        assert [str(trials.get_row_at(i)[3]) for i in range(trials.row_count)] == ["org/alpha"] * 3
        await pilot.press("tab", "t")  # the task's trials: the killed one among them
        assert trial_names(app) == ["alpha__a1", "alpha__a2", "alpha__a3"]


async def test_a_task_named_later_keeps_the_cursors_on_their_task_and_trial(task, runs, monkeypatch):
    # t4 records the name of t1's task (killed, shown under its folder's name):
    # both tables are filled again, and their cursors went to the first row
    # under the user, while the job was still read.
    alpha, beta = task("alpha"), task("beta")
    task_of = {"t1": alpha, "t2": beta, "t3": beta, "t4": alpha}
    job = make_job(runs / "jobs" / "later", {n: dict(task=t, rewards={"reward": 1.0}) for n, t in task_of.items()})
    result = job / "t4" / "result.json"
    result.write_text(json.dumps(json.loads(result.read_text()) | {"task_name": "org/alpha"}))
    (job / "t1" / "result.json").unlink()  # Harbor was killed before it wrote it
    held = []
    every_row = job_overview.trial_rows

    def first_three(folders, notes):  # t4 comes later, as the reader's next batch
        rows = list(every_row(folders, notes))
        held.extend(rows[3:])
        return iter(rows[:3])

    monkeypatch.setattr(job_overview, "trial_rows", first_three)
    app = job_app(job)
    async with app.run_test(size=SIZE) as pilot:
        await read_all(app)
        tasks = app.screen.query_one("#job-tasks", DataTable)
        trials = app.screen.query_one("#job-trials", DataTable)
        tasks.move_cursor(row=tasks.get_row_index("beta"))
        trials.move_cursor(row=trial_names(app).index("t3"))
        app.screen.done = False  # as when the reader's next batch comes
        app.screen._add(held)
        await pilot.pause()
        assert [str(tasks.get_row_at(i)[0]) for i in range(tasks.row_count)] == ["org/alpha", "beta"]
        assert tasks.coordinate_to_cell_key(tasks.cursor_coordinate).row_key.value == "beta"
        assert trial_names(app)[trials.cursor_row] == "t3"


async def test_a_job_harbor_is_still_running_says_so_and_r_reads_it_again(real, tmp_path):
    # Harbor writes the job's result.json as it goes and a trial's when it
    # ends: without them the job is still running (or was stopped), and what
    # the overview shows is its folders as they were when read.
    job = copy_job_files(real, tmp_path / "jobs" / "running")
    (job / "result.json").unlink()
    copy_trial(real, job, "hello-file__pass001")
    second = copy_trial(real, job, "hello-file__pass002")
    (second / "result.json").rename(tmp_path / "later.json")
    app = job_app(job)
    async with app.run_test(size=SIZE) as pilot:
        await read_all(app)
        await pilot.pause()
        header = " ".join(text_of(app, "#job-header").split())
        assert (
            "still running, or stopped: the job has no result.json yet; 1 trial not finished · this is the job as read"
            in header
        )
        assert "r read again" in header
        assert "read again" in screen_text(app).splitlines()[-1]  # the footer
        await pilot.press("question_mark")
        assert "Read the job again" in str(app.screen.query_one("#help-text").content)
        await pilot.press("escape")
        # Harbor ends the trial, then the job.
        (tmp_path / "later.json").rename(second / "result.json")
        shutil.copy2(real / "jobs" / "oracle-pass" / "result.json", job / "result.json")
        await pilot.press("r")
        await read_all(app)
        await pilot.pause()
        header = " ".join(text_of(app, "#job-header").split())
        assert "ended 2 passed" in header and "still running" not in header and "r read again" not in header
        assert trial_names(app) == ["hello-file__pass001", "hello-file__pass002"]
        assert "read again" not in screen_text(app).splitlines()[-1]


async def test_q_while_a_folder_of_jobs_is_read_stops_reading_it(real, tmp_path, monkeypatch):
    # The jobs are read in a thread, which a cancelled worker does not stop:
    # q waited for the whole reading as the process ended. Here the first
    # job's read is held until q has cancelled the worker.
    from verifier_tui.engine.harbor import overview
    from verifier_tui.tui.screens import jobs as jobs_screen

    jobs = tmp_path / "jobs"
    for index in range(8):
        shutil.copytree(real / "jobs" / "oracle-pass", jobs / f"job-{index}")
    held = HeldReads(overview.read_job_summary)
    monkeypatch.setattr(overview, "read_job_summary", held)
    monkeypatch.setattr(jobs_screen, "read_jobs", held.whole(jobs_screen.read_jobs))
    app = job_app(jobs)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await happened(held.first, "the first job's read")
            assert isinstance(app.screen, JobsScreen) and not app.screen.done
            await pilot.press("q")
            await happened(held.worker.cancelled_event, "the reading's worker cancelled by q")
            held.release()
        await happened(held.ended, "the end of the reading")
    finally:
        held.release()  # a test that failed above leaves no thread waiting
    assert len(held.started) == 1, held.started  # the one being read when q came, no more


async def test_the_palettes_maximize_gives_a_jobs_tasks_table_the_whole_screen(real):
    """The tasks table is capped at 30% of the height so the trials keep rows: Maximize kept the cap,
    four lines in the middle of a screen of hatching."""
    app = job_app(real / "jobs")
    async with app.run_test(size=SIZE) as pilot:
        await read_all(app)
        await pilot.press("enter")
        await read_all(app)
        tasks = app.screen.query_one("#job-tasks")
        await palette_maximizes(app, pilot, tasks)
        assert tasks.region.size == (SIZE[0], SIZE[1] - 1), tasks.region  # all but the footer


async def test_the_palette_has_one_keys_command_ours(real):
    # Textual adds its own "Keys" (a side panel of the focused widget's keys)
    # beside ours ("Keys  (?)", the screen's help): two commands of one name.
    app = job_app(real / "jobs")
    async with app.run_test(size=SIZE) as pilot:
        await read_all(app)
        await pilot.pause()
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert [title for title in titles if title.startswith("Keys")] == ["Keys  (?)"]
        assert "Quit  (q)" in titles and "Quit" not in titles  # ours, in its words, for Textual's


async def test_home_and_end_go_to_the_first_and_last_row(real, tmp_path):
    # Textual's DataTable gives home and end to the columns: on a table of
    # rows only ctrl+end reached the last one, which no help said.
    app = job_app(mixed_job(real, tmp_path / "jobs" / "mixed"))
    async with app.run_test(size=(80, 30)) as pilot:
        await read_all(app)
        await pilot.pause()
        trials = app.screen.query_one("#job-trials", DataTable)
        assert app.screen.focused is trials and trials.max_scroll_x > 0 and trials.row_count > 1
        await pilot.press("end")
        assert (trials.cursor_row, trials.scroll_x) == (trials.row_count - 1, 0)
        await pilot.press("home")
        assert trials.cursor_row == 0
        await pilot.press("shift+end")  # the columns, to the right edge
        await pilot.pause()
        assert trials.cursor_row == 0 and trials.scroll_x == trials.max_scroll_x
        await pilot.press("question_mark")
        shown = " ".join(str(app.screen.query_one("#help-text").content).split())
        assert "To the first or last row" in shown and "shift+home, shift+end: to either edge" in shown


async def test_the_overview_notes_each_folder_of_the_job_that_is_no_trial(task, runs, tmp_path):
    """A trial folder that is a link (never followed) and a folder that is
    no trial: ``test JOB``, ``run JOB`` and ``compare`` note each, the TUI's
    overview left them out without a word (``2 trials`` in a job of four folders)."""
    demo = task()
    job = make_job(runs / "jobs" / "j", {"demo__ok": dict(task=demo, **PASSED), "demo__ok2": dict(task=demo, **PASSED)})
    other = make_job(tmp_path / "x" / "jobs" / "other", {"demo__x": dict(task=demo, **PASSED)})
    (job / "demo__linked").symlink_to(other / "demo__x")
    (job / "scratch").mkdir()
    app = job_app(job)
    async with app.run_test(size=SIZE):
        await read_all(app)
        header = text_of(app, "#job-header")
        assert f"note: demo__linked is a link to {other / 'demo__x'}: not read here" in header, header
        assert "note: scratch: not a trial folder (no trial.log, no config.json of a trial): left out" in header


async def test_the_job_screens_say_a_links_target_as_the_app_says_paths(task, runs, tmp_path, monkeypatch):
    """A trial folder (or a job) that is a link: ``run JOB`` says where it
    leads from where the user started (``x/jobs/other/demo__x``), the home
    as ``~``; the TUI's overview and list of jobs said the absolute path."""
    demo = task()
    job = make_job(runs / "jobs" / "j", {n: dict(task=demo, **PASSED) for n in ("demo__ok", "demo__ok2")})
    other = make_job(tmp_path / "x" / "jobs" / "other", {"demo__x": dict(task=demo, **PASSED)})
    (job / "demo__linked").symlink_to(other / "demo__x")
    (runs / "jobs" / "linked").symlink_to(other)
    monkeypatch.chdir(tmp_path)
    app = job_app(job)
    async with app.run_test(size=SIZE):
        await read_all(app)
        header = text_of(app, "#job-header")
        assert "note: demo__linked is a link to x/jobs/other/demo__x: not read here" in header, header
    monkeypatch.chdir(runs)
    monkeypatch.setenv("HOME", str(tmp_path / "x"))
    app = job_app(runs / "jobs")
    async with app.run_test(size=SIZE):
        await read_all(app)
        header = text_of(app, "#job-header")
        assert "note: linked is a link to ~/jobs/other: not read here" in header, header


async def test_a_trial_nothing_names_the_task_of_is_under_its_folders_task_and_said_why(task, runs):
    """Its result.json cut short and config.json missing: the TUI's tables
    showed it under a task ``?``, with nothing saying why."""
    demo = task()
    job = make_job(runs / "jobs" / "j", {n: dict(task=demo, **PASSED) for n in ("demo__ok", "demo__cut")})
    (job / "demo__cut" / "result.json").write_text('{"task_name": "de')
    (job / "demo__cut" / "config.json").unlink()
    app = job_app(job)
    async with app.run_test(size=SIZE):
        await read_all(app)
        tasks = app.screen.query_one("#job-tasks", DataTable)
        assert [str(tasks.get_row_at(i)[0]) for i in range(tasks.row_count)] == ["demo"]
        header = text_of(app, "#job-header")
        said = "note: demo__cut: result.json is cut short: Harbor was stopped while writing it; config.json is"
        assert said in header, header


async def test_the_jobs_list_notes_each_folder_that_is_no_job(task, runs, tmp_path):
    """A link to a job (never followed) and a folder that is no job: ``test
    JOBS`` notes each, the TUI's list of jobs left them out without a word."""
    demo = task()
    for name in ("j1", "j2"):
        make_job(runs / "jobs" / name, {"demo__ok": dict(task=demo, **PASSED)})
    other = make_job(tmp_path / "x" / "jobs" / "other", {"demo__x": dict(task=demo, **PASSED)})
    (runs / "jobs" / "linked").symlink_to(other)
    (runs / "jobs" / "scratch").mkdir()
    app = job_app(runs / "jobs")
    async with app.run_test(size=SIZE):
        await read_all(app)
        header = text_of(app, "#job-header")
        assert f"note: linked is a link to {other}: not read here" in header, header
        assert "note: scratch: not a job folder (no job.log): left out" in header


async def test_many_folders_that_are_no_job_leave_the_jobs_in_view(task, runs):
    """25 stray folders beside 4 jobs, at the smallest size the app takes
    (100x30): 21 note lines above the table left 3 rows of jobs in view."""
    demo = task()
    for name in ("j1", "j2", "j3", "j4"):
        make_job(runs / "jobs" / name, {"demo__ok": dict(task=demo, **PASSED)})
    for index in range(25):
        (runs / "jobs" / f"scratch{index:02}").mkdir()
    app = job_app(runs / "jobs")
    async with app.run_test(size=SIZE) as pilot:  # 100x30
        await read_all(app)
        await pilot.pause()
        shown = screen_text(app)
        assert all(f" j{n} " in shown for n in range(1, 5)), shown
        assert "note: … 22 more notes (verifier-tui run JOBS --json lists them all)" in shown, shown


async def test_a_huge_cost_is_a_short_cell_in_the_trials_table(task, runs):
    """A cost of 1e300 dollars filled a 313-character cell (``:.4f``); it is
    written as run JOB's agent line writes it: $1.000e+300."""
    job = make_job(runs / "jobs" / "j", {name: dict(task=task(), **PASSED) for name in ("demo__a", "demo__b")})
    data = json.loads((job / "demo__a" / "result.json").read_text())
    data["agent_result"] = {"n_input_tokens": 1_000, "n_output_tokens": 2_000, "cost_usd": 1e300}
    (job / "demo__a" / "result.json").write_text(json.dumps(data))
    app = job_app(job)
    async with app.run_test(size=SIZE):
        await read_all(app)
        table = app.screen.query_one("#job-trials", DataTable)
        costs = [str(table.get_row_at(i)[-1]) for i in range(table.row_count)]
        assert "$1.000e+300" in costs, costs
        assert "$1.000e+300" in text_of(app, "#job-header")


async def footer_shows(app, pilot, back: str) -> None:
    """The footer offers ``back``, the way back, last, and shows every key it offers."""
    promised = footer_promises(app.screen)
    assert promised[-1] == back, promised
    await until(
        pilot,
        lambda: all(word in screen_text(app).splitlines()[-1] for word in promised),
        f"the footer shows {promised}",
        lambda app: screen_text(app).splitlines()[-1],
    )


async def test_each_job_screen_s_footer_shows_esc_the_way_back_at_80_columns(real):
    # The job's overview and two jobs compared, opened from the jobs list, and a multi-step trial's steps opened
    # from its job: esc went back, but no footer said so (the trial's screen says `esc trials`).
    app = job_app(real / "jobs")

    async with app.run_test(size=(80, 24)) as pilot:
        await read_all(app)
        await pilot.press("enter")  # multi-step, the latest started
        await read_all(app)
        assert isinstance(app.screen, JobOverviewScreen)
        await footer_shows(app, pilot, "esc jobs")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, JobScreen), "the trial's steps")
        await footer_shows(app, pilot, "esc trials")
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, JobOverviewScreen), "back on the job")
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, JobsScreen), "back on the jobs")
        await pilot.press("space", "down", "space", "c")
        await until(pilot, lambda: isinstance(app.screen, CompareScreen), "two jobs compared")
        await footer_shows(app, pilot, "esc jobs")
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, JobsScreen), "back on the jobs from the comparison")


async def test_a_running_job_s_footer_shows_read_again_and_esc_at_80_columns(real, tmp_path):
    # A job Harbor has not ended, opened from the jobs list at 80 columns: its footer offered r and esc too and was
    # cut after "r read again q q", esc unseen.
    job = copy_job_files(real, tmp_path / "jobs" / "running")
    (job / "result.json").unlink()
    copy_trial(real, job, "hello-file__pass001")
    app = job_app(tmp_path / "jobs")
    async with app.run_test(size=(80, 24)) as pilot:
        await read_all(app)
        await pilot.press("enter")
        await read_all(app)
        assert "r read again" in footer_promises(app.screen)
        await footer_shows(app, pilot, "esc jobs")


async def test_a_huge_exception_type_leaves_the_overviews_filter_line_in_view(real, tmp_path):
    """Harbor's exception_type is a class name; a result.json naming one of
    100,000 characters filled the header's count line with ten lines at 100x30,
    the line saying which filter x set pushed out of view (and that line held
    all 100,000 characters)."""
    job = copy_job_files(real, tmp_path / "jobs" / "huge")
    copy_trial(real, job, "hello-file__aaaaaaa")
    copy_trial(
        real, job, "hello-file__bbbbbbb", edit=lambda r: r.update(exception_info=harbor_exception("X" * 100_000, "m"))
    )
    app = job_app(job)
    async with app.run_test(size=SIZE) as pilot:  # 100x30
        await read_all(app)
        await pilot.press("x")
        await pilot.pause()
        assert trial_names(app) == ["hello-file__bbbbbbb"]
        shown = screen_text(app)
        assert "showing ended XXX" in shown and "sorted by name" in shown, shown
        assert "X" * 200 not in text_of(app, "#job-header")


async def test_a_task_named_with_thousands_of_characters_leaves_every_tasks_figures_in_view(task, runs):
    """A trial's result.json naming its task with 5,000 characters (Harbor's are a dataset's
    short names): the tasks table's name column took 1,000 of them, and every task's trials,
    passes and mean went off the screen, as did the trials table's; t on it wrote all 5,000
    in the filter line. A task's name takes a name's room, start and end with a count between."""
    job = make_job(
        runs / "jobs" / "long",
        {
            "alpha__a1": dict(task=task("alpha"), rewards={"reward": 0.25}),
            "beta__a1": dict(task=task("beta"), **PASSED),
        },
    )
    result = json.loads((job / "beta__a1" / "result.json").read_text())
    (job / "beta__a1" / "result.json").write_text(json.dumps(result | {"task_name": "T" * 5000}))
    app = job_app(job)
    async with app.run_test(size=SIZE) as pilot:  # 100x30
        await read_all(app)
        await pilot.pause()
        shown = screen_text(app)
        assert "0.250" in shown and "1.000" in shown, shown  # each task's mean
        assert "T" * 100 not in shown and "4,971 characters left out" in shown, shown
        tasks = app.screen.query_one("#job-tasks", DataTable)
        tasks.focus()
        names = [str(tasks.get_row_at(i)[0]) for i in range(tasks.row_count)]
        tasks.move_cursor(row=next(i for i, name in enumerate(names) if name != "alpha"))
        await pilot.press("t")
        await pilot.pause()
        header = text_of(app, "#job-header")
        assert "showing task TTT" in header and "T" * 100 not in header, header


async def test_the_jobs_list_counts_the_trial_folders_of_a_job_without_result_json(runs, task):
    """Its row said ``trials -`` though the job held trial folders: they are counted, as its overview finds them."""
    from tests.harbor.test_job_overview import _running_job

    app = job_app(_running_job(runs, task))
    async with app.run_test(size=SIZE):
        await read_all(app)
        table = app.screen.query_one(DataTable)
        row = [str(cell) for cell in table.get_row_at(0)]
        assert row[1] == "running" and row[3] == "2"


async def test_r_reads_the_jobs_list_again_after_harbor_ended_a_job_keeping_its_marks(real, tmp_path):
    """A job Harbor ran while the list was read stayed "no result.json: the job is running" for good: its
    overview's r showed it ended, and esc came back to the list that said it was still running, with no key
    to read it again."""
    jobs = tmp_path / "jobs"
    for name in ("oracle-pass", "nop-fail"):
        shutil.copytree(real / "jobs" / name, jobs / name)
    (jobs / "oracle-pass" / "result.json").rename(tmp_path / "later.json")
    app = job_app(jobs)
    async with app.run_test(size=SIZE) as pilot:
        await read_all(app)

        def row(name: str) -> list[str]:
            table = app.screen.query_one(DataTable)
            return [str(cell) for cell in table.get_row_at([job.name for job in app.screen.jobs].index(name))]

        assert "running" in row("oracle-pass")[4]
        app.screen.query_one(DataTable).move_cursor(row=[job.name for job in app.screen.jobs].index("oracle-pass"))
        await pilot.press("space")
        assert "r read again" in footer_promises(app.screen)
        (tmp_path / "later.json").rename(jobs / "oracle-pass" / "result.json")  # Harbor ends the job
        await pilot.press("r")
        await until(pilot, lambda: app.screen.done and app.screen.jobs and row("oracle-pass")[4] == "1 passed", "read")
        assert row("oracle-pass")[0] == "A" and row("nop-fail")[0] == " "  # the mark stays on its job
        table = app.screen.query_one(DataTable)
        assert app.screen.jobs[table.cursor_row].name == "oracle-pass"  # and the cursor


async def test_r_on_the_jobs_list_says_its_folder_is_gone(real, tmp_path):
    """r after the jobs folder itself was removed said `0 jobs · no job folders here`, as of an empty
    folder; it says the folder does not exist, as the command says it of a path given that is not there."""
    jobs = tmp_path / "jobs"
    shutil.copytree(real / "jobs" / "oracle-pass", jobs / "oracle-pass")
    app = job_app(jobs)
    async with app.run_test(size=SIZE) as pilot:
        await read_all(app)
        shutil.rmtree(jobs)
        await pilot.press("r")
        await until(pilot, lambda: app.screen.done, "read again")
        await pilot.pause()
        header = " ".join(text_of(app, "#job-header").split())
        assert header.endswith(f"· 0 jobs {jobs} does not exist (moved or removed since it was read)"), header
