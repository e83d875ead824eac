"""A Harbor job at a glance: how its trials ended, the rewards as Harbor
averages them (and what it leaves out), one row per task, then the trials,
with filters and an order. Trials are read in a worker and posted in
batches, so the screen shows at once and fills in; two DataTables hold every
row (a widget per trial would cost seconds on a big job). Enter on a trial
opens it beside a local replay; esc there comes back here."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import DataTable

from verifier_tui.engine.harbor.folders import sub_folders
from verifier_tui.engine.harbor.overview import (
    AS_READ,
    BELOW_ONE,
    NO_REWARD,
    PASSED,
    SORTS,
    STILL_RUNNING,
    JobOverview,
    TrialRow,
    cost_words,
    count_words,
    job_not_ended,
    mean_words,
    select_rows,
    trial_rows,
)
from verifier_tui.tui.display import content
from verifier_tui.tui.keys import HELP, QUIT, key
from verifier_tui.tui.screens.keyed import FolderScreen, named_above
from verifier_tui.tui.widgets.header_line import Flowing
from verifier_tui.tui.workarounds import KeyFooter, Table
from verifier_tui.words.run import unlisted_job
from verifier_tui.words.text import one_line, one_name
from verifier_tui.words.trial import folder_notes

#: Reading yields to the screen after this long: keys and frames wait at most
#: that. Drawing the first rows takes a dozen hops through the event loop
#: (layout, the tables' column widths when idle), each waiting for a slice
#: to end: slices this short show a big job's first rows as soon as a small one's.
SLICE_S = 0.005
#: Rows read are posted to the tables this often (the first ones at once).
POST_S = 1.0
#: Where a job's notes past the first few are (:func:`folder_notes`).
ALL_NOTES = "verifier-tui run JOB --json lists them all"


def cell(text: str) -> Text:
    """A DataTable cell that shows ``text`` from Harbor's files (names,
    exception types, reward keys) as it is, harmless and on its line (a plain
    ``str`` cell would be read as markup)."""
    return Text(one_line(str(text)), end="")


def _seconds(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.1f} s" if value < 600 else f"{value / 60:.0f} min"


class TasksScreen(FolderScreen):
    """A screen over a table of tasks (``#job-tasks``): the job's overview and
    two jobs compared. ``t`` keeps only the highlighted task (again: every
    task), ``s`` sorts by the next of :attr:`SORTS`; :meth:`_redraw` shows the
    tables again."""

    #: tab, named in the footer by the table it moves to: enter acts in the
    #: table focused, and a user who does not know which one it is cannot
    #: tell a lost enter from one that acted on the other table.
    BINDINGS = [
        key("tab", "focus_table('job-trials')", "trials", "To the trials", "The table below: enter there opens one"),
        key("tab", "focus_table('job-tasks')", "tasks", "To the tasks", "The table above: enter narrows to a task"),
        key(
            "tab",
            "focus_table('job-summary')",
            "summary",
            "To the summary",
            "The lines above the tables, when cut to fit: up, down, end scroll them",
        ),
    ]
    SORTS: ClassVar[tuple[str, ...]]
    READ_GROUP: ClassVar[str]
    """The worker group reading the folders: cancelled on the way back."""
    TRIALS_TITLE: ClassVar[str] = "Trials"
    TRIAL_WORD: ClassVar[str] = "trial"
    task_filter: str | None
    sort: str

    def compose(self) -> ComposeResult:
        # The summary is capped (app.tcss) so a small terminal keeps rows of
        # the tables; what it cuts, tab then reaches and the arrows scroll.
        with VerticalScroll(id="job-summary"):
            yield Flowing(id="job-header")
        tasks = Table(id="job-tasks", cursor_type="row", zebra_stripes=True)
        tasks.border_title = "Tasks"
        yield tasks
        trials = Table(id="job-trials", cursor_type="row", zebra_stripes=True)
        trials.border_title = self.TRIALS_TITLE
        yield trials
        yield KeyFooter()

    def _redraw(self) -> None:
        raise NotImplementedError

    def action_task(self) -> None:
        if self.task_filter is not None:
            self.task_filter = None
        else:
            tasks = self.query_one("#job-tasks", DataTable)
            if not tasks.row_count:
                return
            self.task_filter = str(tasks.coordinate_to_cell_key(tasks.cursor_coordinate).row_key.value)
        self._redraw()

    def action_sort(self) -> None:
        self.sort = self.SORTS[(self.SORTS.index(self.sort) + 1) % len(self.SORTS)]
        self._redraw()

    def _trial_at(self, row: int) -> Path | None:
        """The trial folder a row of the trials table (``#job-trials``) opens."""
        raise NotImplementedError

    def action_back(self) -> None:
        self.workers.cancel_group(self, self.READ_GROUP)
        self.dismiss(None)

    def action_focus_table(self, table: str) -> None:
        self.query_one(f"#{table}").focus()

    def on_mount(self) -> None:
        # Whether the summary is cut (so tab stops there) changes as it fills and with the terminal's size.
        self.watch(self.query_one("#job-summary"), "virtual_size", lambda _size: self.refresh_bindings())

    @staticmethod
    def _keys_line(words: str, keys: str) -> list[Any]:
        """``words · keys`` (keys two spaces apart), for the header (:class:`Flowing`) to wrap
        only between two keys: a key stays beside its word at any width."""
        hints = [
            (content((" · " if index == 0 else "  ", "$text-muted")), content((hint, "$text-muted")))
            for index, hint in enumerate(keys.split("  "))
        ]
        return [content((one_line(words), "$text-muted")), *hints]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """tab goes round the trials, the tasks and the summary when it is
        cut, offering the next one (the trials when no table is focused).
        ``?`` leaves the footer (:data:`HELP_NAMED_ABOVE`) only while the line
        above the tables, the summary's last, names it and the footer has room
        for every key: else the footer is where it is seen."""
        if action == "named_help":
            whole = self.query_one("#job-summary").max_scroll_y == 0
            return whole and (self._measuring or self.wide_enough(0))
        if action != "focus_table":
            return super().check_action(action, parameters)
        focused = self.focused
        if focused is self.query_one("#job-trials"):
            following = "job-tasks"
        elif focused is self.query_one("#job-tasks") and self.query_one("#job-summary").max_scroll_y > 0:
            following = "job-summary"
        else:
            following = "job-trials"
        return parameters[0] == following

    def action_named_help(self) -> None:
        self.action_help()

    @on(DataTable.RowSelected, "#job-tasks")
    def _task_chosen(self, event: DataTable.RowSelected) -> None:
        """The focus stays on the tasks: moved to the trials unseen, the tab
        a user pressed to reach them went back, and their enter narrowed again."""
        event.stop()
        task = str(event.row_key.value)
        self.task_filter = task
        self._redraw()
        shown = self.query_one("#job-trials", DataTable).row_count
        them = "them" if shown != 1 else "it"
        if shown:
            said = f"{shown} {self.TRIAL_WORD}{'s' * (shown != 1)} of task {one_line(task)} below: tab reaches {them}"
        else:  # the filters shown in the header say why: no table to tab to
            said = f"no {self.TRIAL_WORD} of task {one_line(task)} is shown"
        self.notify(f"{said}, t shows every task")

    @on(DataTable.RowSelected, "#job-trials")
    def _trial_chosen(self, event: DataTable.RowSelected) -> None:
        event.stop()
        trial = self._trial_at(event.cursor_row)
        if trial is not None:
            self.post_message(JobOverviewScreen.TrialChosen(trial))


#: f x t share one footer entry, "f x t filter": the line above the tables names each
#: ("f failures  x exception  t task"), as the task screen's header names s v f p t.
FILTERS = Binding.Group("filter")


#: ``?`` out of the footer while the line above the tables names it (:meth:`TasksScreen.check_action`), else in it.
HELP_NAMED_ABOVE = [replace(HELP, action="named_help", show=False), HELP]


class JobOverviewScreen(TasksScreen):
    SORTS = SORTS
    READ_GROUP = "job-read"
    BINDINGS = [
        *named_above(
            key(
                "f",
                "failures",
                "failures",
                "Failures only",
                "Show only the trials that did not pass (again: all)",
                group=FILTERS,
            ),
            key(
                "x",
                "next_exception",
                "exception",
                "Filter by exception type",
                "Each press shows the trials of the next exception type Harbor recorded, then all again",
                group=FILTERS,
            ),
            key(
                "t",
                "task",
                "task",
                "Filter by task",
                "Only the trials of the task under the cursor in the tasks table (again: every task)",
                group=FILTERS,
            ),
            key(
                "s",
                "sort",
                "sort",
                "Sort the trials",
                "By name, how they ended, reward, duration (longest first), task",
            ),
        ),
        # Offered once a job Harbor has not ended is read: what it shows is
        # its folders as they were then, and Harbor may be writing them still.
        key(
            "r",
            "read_again",
            "read again",
            "Read the job again",
            "Harbor has not ended it: its folders as they are now",
        ),
        # ? is in the line above the tables ("? keys") and the palette: with the filters' one entry
        # the footer then fits 80 columns down to esc, the way back, r read again and all
        *HELP_NAMED_ABOVE,
        QUIT,
        key("escape", "back", "jobs", "Back to the jobs", "the list of jobs this job was opened from"),
    ]
    HELP_TITLE = "verifier-tui: a job's keys"
    OTHER_KEYS = [
        (
            "enter",
            "Open the trial (or show the task's trials)",
            "On a trial: the sandbox beside a local replay; on a task: only its trials (tab reaches them)",
        ),
    ]

    @dataclass
    class TrialChosen(Message):
        """A trial's folder to open (the app opens its steps or its screen)."""

        path: Path

    def __init__(self, path: Path, *, from_jobs: bool = False, harbor_version: str | None = None) -> None:
        super().__init__(path)
        self.path = path
        self.job_name = path.name  # as every job and trial is named: by its folder
        self.from_jobs = from_jobs
        self.harbor_version = harbor_version
        self.failures_only = False
        self.outcome: str | None = None
        self.task_filter: str | None = None
        self.sort = "name"
        self._reset_reading()

    def _reset_reading(self) -> None:
        """What reading the job finds, as before it is read (on opening, and for r)."""
        self.overview = JobOverview()
        self.expected: int | None = None
        self.done = False
        self.unlisted: str | None = None  # why the job's folder could not be listed
        self.not_ended: str | None = None  # why Harbor has not ended the job (its result.json), when read
        self.shown_rows: list[TrialRow] = []  # the trials table's rows, in its order

    def on_mount(self) -> None:
        tasks = self.query_one("#job-tasks", DataTable)
        for label in ("task", "trials", "passed", "mean", "errors"):
            tasks.add_column(label, key=label)  # the key update_cell names it by
        trials = self.query_one("#job-trials", DataTable)
        # How each trial ended beside its name, the rest after: a narrow
        # terminal cuts the columns on the right, and the right arrow scrolls
        # to them with the name kept in view (fixed).
        for label in ("trial", "ended", "reward", "task", "agent", "model", "duration", "tokens in/out", "cost"):
            trials.add_column(label)
        trials.fixed_columns = 1
        trials.focus()
        self._show_header()
        self._read()

    # -- reading ---------------------------------------------------------

    @work(exclusive=True, group="job-read", exit_on_error=False)
    async def _read(self) -> None:
        """List the trial folders, then read them on the event loop in short
        slices, posting what was read a few times a second. (A thread would
        wait for the interpreter lock at each of its many small reads while
        the screen draws, and read a big job many times slower.)"""
        import asyncio
        from time import perf_counter

        try:
            folders, links = sub_folders(self.path)
        except OSError as exc:
            self.unlisted = unlisted_job(self.path, exc.strerror or str(exc))
            self._finish()
            return
        self.not_ended = job_not_ended(self.path)
        self._set_expected(len(folders))
        notes = self.overview.notes  # what of the folder is no trial, as it is read
        notes += links
        rows: list[TrialRow] = []
        sliced = posted = perf_counter()
        for row in trial_rows(folders, notes):
            rows.append(row)
            now = perf_counter()
            if now - sliced >= SLICE_S:
                if now - posted >= POST_S or len(self.overview.rows) == 0:
                    self._add(rows)
                    rows, posted = [], now
                await asyncio.sleep(0)
                sliced = perf_counter()
        if rows:
            self._add(rows)
        self._finish()

    def _set_expected(self, count: int) -> None:
        """At most this many trials (the job's sub-folders): "N of M read" meanwhile."""
        self.expected = count
        self._show_header()

    def _add(self, rows: list[TrialRow]) -> None:
        before = self.overview.rows  # the list itself: a rename makes a new one
        renamed = self.overview.add(rows)
        added = self.overview.rows[len(self.overview.rows) - len(rows) :]  # as counted: a killed trial renamed
        tasks = self.query_one("#job-tasks", DataTable)
        trials = self.query_one("#job-trials", DataTable)
        # Tables filled again while the job is read keep each cursor on its
        # task and trial: they went to the first row under the user.
        trial = self._trial_at(trials.cursor_row)
        if renamed:
            # A trial read now recorded the name of a task whose killed trials,
            # read before, were shown under its folder's: the tables again.
            task = self._task_highlighted(before)
            tasks.clear()
            self._update_tasks(self.overview.rows)
            if task is not None and task in tasks.rows:
                tasks.move_cursor(row=tasks.get_row_index(task), animate=False)
        else:
            self._update_tasks(added)
        if self.sort == "name" and not self.done and not renamed:
            # Folders are read in name order: the new rows go at the end.
            self._append(select_rows(added, failures=self.failures_only, outcome=self.outcome, task=self.task_filter))
        else:
            self._fill_trials()
            at = next((i for i, row in enumerate(self.shown_rows) if row.path == trial), None)
            if at is not None:
                trials.move_cursor(row=at, animate=False)
        self._show_header()

    def _task_highlighted(self, rows: list[TrialRow]) -> str | None:
        """The task under the tasks table's cursor, by the name it has now:
        ``rows`` (as they were before a rename) find it by one of its trials."""
        tasks = self.query_one("#job-tasks", DataTable)
        if not tasks.row_count:
            return None
        name = str(tasks.coordinate_to_cell_key(tasks.cursor_coordinate).row_key.value)
        path = next((row.path for row in rows if row.task == name), None)
        return next((row.task for row in self.overview.rows if row.path == path), name)

    def _finish(self) -> None:
        self.done = True
        self._show_header()
        self.refresh_bindings()  # r, for a job Harbor has not ended

    def running(self) -> str | None:
        """Why the job, read to its end, looks still running (or stopped): Harbor
        has not ended it, or trials of it are not finished. None: it has ended."""
        return self.overview.still_running(self.not_ended) if self.done else None

    # -- showing ---------------------------------------------------------

    def _show_header(self) -> None:
        overview = self.overview
        read = overview.total
        count = f"{read} trial{'s' * (read != 1)}" if self.done else f"{read} of {self.expected or '?'} folders read"
        agents = ", ".join(one_name(agent) for agent in overview.agents()) or "-"
        version = f" · Harbor {self.harbor_version}" if self.harbor_version else ""
        lines: list[Any] = [
            ("job ", "$text-muted"),
            (one_line(self.job_name), "bold"),
            (one_line(f" · {count} · {agents}{version}"), "$text-muted"),
            "\n",
        ]
        counts = overview.counts()
        if counts:
            lines.append(("ended  ", "$text-muted"))
            for index, (outcome, number) in enumerate(counts):
                style = (
                    "$success" if outcome == PASSED else "$warning" if outcome in (BELOW_ONE, NO_REWARD) else "$error"
                )
                lines += [(", " if index else "", "$text-muted"), (f"{number} ", "bold"), (one_name(outcome), style)]
            lines.append("\n")
        for index, line in enumerate(overview.reward_lines(one_name)):
            lines += [("reward " if index == 0 else "       ", "$text-muted"), one_line(line), "\n"]
        tokens = overview.token_words()
        if tokens:
            lines += [("agent  ", "$text-muted"), tokens, "\n"]
        running = self.running()
        if running:
            lines += [
                (STILL_RUNNING, "bold $warning"),
                (one_line(running + AS_READ), "$text-muted"),
                "\n",
            ]
        # What of the folder is no trial (a link, never followed; a stray
        # folder): left out, said as test JOB says it, as it is found.
        for note in folder_notes(overview.notes, where=ALL_NOTES):
            lines += [(self.fmt.text(note), "$warning"), "\n"]
        keys = "f failures  x exception  t task  s sort" + ("  r read again" if running else "") + "  ? keys"
        lines.append(self._keys_line(self._filter_words(), keys))
        if self.done and read == 0:
            why = self.unlisted or "no trial folders here (each holds trial.log, config.json, result.json)"
            lines.append((f"\n{why}", "$error"))
        self.query_one("#job-header", Flowing).flow(*lines)

    def _filter_words(self) -> str:
        shown = []
        if self.failures_only:
            shown.append("failures only")
        if self.outcome:
            shown.append(f"ended {one_name(self.outcome)}")
        if self.task_filter:
            shown.append(f"task {one_name(self.task_filter)}")
        what = "showing " + (", ".join(shown) if shown else "every trial")
        # An empty table under a filter reads as a job not read yet: say the filter left nothing.
        none = ": none" if shown and self.done and self.overview.rows and not self.shown_rows else ""
        return f"{what}{none} · sorted by {self.sort}"

    def _update_tasks(self, rows: list[TrialRow]) -> None:
        table = self.query_one("#job-tasks", DataTable)
        for name in dict.fromkeys(row.task for row in rows):
            task = self.overview.tasks[name]
            cells = (task.trials, task.passed, cell(mean_words(task)), task.errors)
            if name in table.rows:
                for key, value in zip(("trials", "passed", "mean", "errors"), cells, strict=True):
                    table.update_cell(name, key, value)
            else:
                table.add_row(cell(one_name(name)), *cells, key=name)

    def _cells(self, row: TrialRow) -> tuple[Text | str, ...]:
        tokens = (
            "-"
            if row.n_input_tokens is None and row.n_output_tokens is None
            else f"{count_words(row.n_input_tokens or 0)}/{count_words(row.n_output_tokens or 0)}"
        )
        return (
            cell(row.name),
            cell(f"{row.mark} {one_name(row.outcome_words)}"),
            cell(row.reward_text),
            cell(one_name(row.task)),
            cell(one_name(row.agent or "-")),
            cell(one_name(row.model or "-")),
            _seconds(row.duration_s),
            tokens,
            "-" if row.cost_usd is None else cost_words(row.cost_usd),
        )

    def _append(self, rows: list[TrialRow]) -> None:
        table = self.query_one("#job-trials", DataTable)
        table.add_rows([self._cells(row) for row in rows])
        self.shown_rows.extend(rows)

    def _fill_trials(self) -> None:
        table = self.query_one("#job-trials", DataTable)
        table.clear()
        self.shown_rows = []
        self._append(
            select_rows(
                self.overview.rows,
                failures=self.failures_only,
                outcome=self.outcome,
                task=self.task_filter,
                sort=self.sort,
            )
        )

    # -- keys ------------------------------------------------------------

    def _redraw(self) -> None:
        self._fill_trials()
        self._show_header()

    def action_failures(self) -> None:
        self.failures_only = not self.failures_only
        self._redraw()

    def action_next_exception(self) -> None:
        types = self.overview.exception_types()
        if not types:
            self.notify("no trial recorded an exception")
            self.outcome = None
        else:
            index = types.index(self.outcome) + 1 if self.outcome in types else 0
            self.outcome = types[index] if index < len(types) else None
        self._redraw()

    def action_read_again(self) -> None:
        """The job's folders read anew, as on opening (filters and order kept)."""
        self._reset_reading()
        self.query_one("#job-tasks", DataTable).clear()
        self.query_one("#job-trials", DataTable).clear()
        self.refresh_bindings()
        self._show_header()
        self._read()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """esc goes back to the list of jobs only when there is one; r reads
        again a job Harbor has not ended."""
        if action == "read_again":
            return self.running() is not None
        return (action != "back" or self.from_jobs) and super().check_action(action, parameters)

    def _trial_at(self, row: int) -> Path | None:
        return self.shown_rows[row].path if 0 <= row < len(self.shown_rows) else None
