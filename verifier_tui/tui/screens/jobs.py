"""A folder of Harbor jobs (what ``harbor view`` opens): one row per job
with when it started, its agents and models, its trials, how they ended and
Harbor's mean, all from each job's own ``config.json`` and ``result.json``;
a job without a usable ``result.json`` has its trial folders counted instead.
Enter opens the job's overview; esc there comes back here."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from textual import on, work
from textual.app import ComposeResult
from textual.coordinate import Coordinate
from textual.message import Message
from textual.widgets import DataTable

from verifier_tui.engine.harbor.overview import JobSummary, read_jobs
from verifier_tui.tui.display import content
from verifier_tui.tui.keys import HELP, QUIT, key
from verifier_tui.tui.screens.job_overview import cell
from verifier_tui.tui.screens.keyed import FolderScreen, named_above
from verifier_tui.tui.widgets.header_line import Flowing
from verifier_tui.tui.workarounds import KeyFooter, Table
from verifier_tui.words.text import one_line, one_name
from verifier_tui.words.trial import NO_JOBS, folder_notes

#: Where the notes past the first few are (:func:`folder_notes`).
ALL_NOTES = "verifier-tui run JOBS --json lists them all"
#: The folder notes the list shows above its table: its header is not capped
#: (unlike a job's summary), and 20 of them left 3 rows of jobs at 100x30.
LIST_NOTES_SHOWN = 3


class JobsScreen(FolderScreen):
    BINDINGS = [
        *named_above(
            key(
                "space",
                "mark",
                "mark",
                "Mark the job",
                "Mark (or unmark) the job under the cursor; c compares two marked",
            ),
            key(
                "c",
                "compare",
                "compare",
                "Compare the two marked jobs",
                "Per task: each job's trials passed and mean, the difference, the trials whose outcome flipped",
            ),
        ),
        key(
            "r",
            "read_again",
            "read again",
            "Read the jobs again",
            "Harbor may have started jobs in the folder, or ended some, since it was read",
        ),
        HELP,
        QUIT,
    ]
    HELP_TITLE = "verifier-tui: a folder of jobs"
    OTHER_KEYS = [("enter", "Open the job", "Its overview: how its trials ended, rewards, tasks, trials")]

    @dataclass
    class JobChosen(Message):
        """A job to open (the app opens its overview)."""

        path: Path

    @dataclass
    class CompareChosen(Message):
        """Two jobs to compare (the app opens the comparison), A first."""

        a: Path
        b: Path

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.path = path
        self.jobs: list[JobSummary] = []
        self.done = False  # every job read
        self.marked: list[int] = []  # rows marked for comparison, in the order marked (A, then B)
        self.notes: list[str] = []  # what of the folder is no job, said as test JOBS says it
        self.unlisted: str | None = None  # why the folder itself could not be listed

    def compose(self) -> ComposeResult:
        yield Flowing(id="job-header")
        table = Table(id="jobs-table", cursor_type="row", zebra_stripes=True)
        table.border_title = "Jobs (latest started first)"
        yield table
        yield KeyFooter()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column(" ")  # A and B: the jobs marked for comparison
        # What each job scored first, when and by whom after: a narrow terminal
        # cuts the columns on the right, and the right arrow scrolls to them
        # with the mark and the job's name kept in view (fixed). The last header is "agent": its
        # values say the model in parentheses themselves, and "agent (model)" was cut at 100 columns.
        for label in ("job", "Harbor's mean", "trials", "how they ended", "started", "agent"):
            table.add_column(label)
        table.fixed_columns = 2
        table.focus()
        self._header()
        self._read()

    def _header(self) -> None:
        done = self.done
        count = f"{len(self.jobs)} job{'s' * (len(self.jobs) != 1)}" + ("" if done else " (reading)")
        marked = [one_line(self.jobs[index].name) for index in self.marked]
        hint = (
            f"A {marked[0]}, B {marked[1]}: c compares them · enter opens a job · ? keys"
            if len(marked) == 2
            else f"A {marked[0]} marked: space marks B · enter opens a job · ? keys"
            if marked
            else "enter opens a job · space marks two jobs, c compares them · ? keys"
            if self.jobs or not done
            else self.unlisted or NO_JOBS
        )
        notes = folder_notes(self.notes, where=ALL_NOTES, shown=LIST_NOTES_SHOWN)
        self.query_one("#job-header", Flowing).flow(
            ("jobs folder ", "$text-muted"),
            (one_line(self.path.name), "bold"),
            (f" · {count}\n", "$text-muted"),
            *((f"{self.fmt.text(note)}\n", "$warning") for note in notes),
            [content((part, "$text-muted")) for part in hint.split(" · ")],  # wrapped between hints only
        )

    @work(thread=True, exclusive=True, group="jobs-read", exit_on_error=False)
    def _read(self) -> None:
        """Each job's own two files: hundreds of jobs read in a blink, posted at once."""
        from textual.worker import get_current_worker

        worker = get_current_worker()
        notes: list[str] = []  # what of the folder is no job: a link, a stray folder
        # Asked before each job: a cancelled worker's thread goes on, and q
        # waited for it as the process ended (as the comparison's reading).
        jobs = read_jobs(self.path, cancelled=lambda: worker.is_cancelled, notes=notes)
        try:  # read_jobs finds no job in a folder it cannot list: said why, not as a folder of no jobs
            os.scandir(self.path).close()
            unlisted = None
        except FileNotFoundError:  # as a path given that is not there is said (open_harbor)
            unlisted = f"{self.fmt.path(self.path)} does not exist (moved or removed since it was read)"
        except OSError as exc:
            unlisted = f"{self.fmt.path(self.path)} cannot be listed: {exc.strerror or exc}"
        if not worker.is_cancelled:
            self.app.call_from_thread(self._show, jobs, notes, unlisted)

    def action_read_again(self) -> None:
        """The folder as it is now, the marks and the cursor kept on their jobs."""
        self.done = False
        self._header()
        self._read()

    def _show(self, jobs: list[JobSummary], notes: list[str], unlisted: str | None) -> None:
        table = self.query_one(DataTable)
        # Read again, the rows may come in another order (a job started since): what was marked, and the
        # row under the cursor, are found again by their folders.
        marked = [self.jobs[index].path for index in self.marked]
        current = self.jobs[table.cursor_row].path if 0 <= table.cursor_row < len(self.jobs) else None
        paths = [job.path for job in jobs]
        self.marked = [paths.index(path) for path in marked if path in paths]
        self.jobs, self.done, self.notes, self.unlisted = jobs, True, notes, unlisted
        rows = []
        for index, job in enumerate(jobs):
            started = job.started_at.strftime("%Y-%m-%d %H:%M") if job.started_at else "-"
            rows.append(
                (
                    self._mark(index),
                    cell(job.name),
                    job.mean_words,
                    job.trials_words,
                    cell(job.ended_words),
                    started,
                    cell(", ".join(one_name(agent) for agent in job.agents) or "-"),
                )
            )
        table.clear()
        table.add_rows(rows)
        if current in paths:
            table.move_cursor(row=paths.index(current))
        self._header()

    def _mark(self, index: int) -> str:
        """The comparison's side of the job in row ``index``, A or B, or a space."""
        return "AB"[self.marked.index(index)] if index in self.marked else " "

    def action_mark(self) -> None:
        """Mark the job under the cursor (a third mark lets go of the first)."""
        table = self.query_one(DataTable)
        row = table.cursor_row
        if not 0 <= row < len(self.jobs):
            return
        if row in self.marked:
            self.marked.remove(row)
        else:
            self.marked = [*self.marked, row][-2:]
        for index in range(len(self.jobs)):
            mark = self._mark(index)
            if table.get_cell_at(Coordinate(index, 0)) != mark:
                table.update_cell_at(Coordinate(index, 0), mark)
        self._header()

    def action_compare(self) -> None:
        if len(self.marked) != 2:
            self.notify("mark two jobs to compare (space marks the job under the cursor)")
            return
        a, b = (self.jobs[index].path for index in self.marked)
        self.post_message(self.CompareChosen(a, b))

    @on(DataTable.RowSelected)
    def _open(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if 0 <= event.cursor_row < len(self.jobs):
            self.post_message(self.JobChosen(self.jobs[event.cursor_row].path))
