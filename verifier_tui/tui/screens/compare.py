"""Two jobs of a jobs folder side by side (marked in the jobs list, ``c``):
per task, each job's trials passed and Harbor's mean, the difference, and
the trials whose outcome flipped (:mod:`verifier_tui.engine.harbor.compare`,
what ``verifier-tui compare`` prints). Its keys are the job overview's where
they mean the same: f narrows to what differs, t to the task under the
cursor, s sorts, enter on a task narrows to it and on a flipped trial opens
it, tab goes between the two tables, esc goes back."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from textual import work
from textual.widgets import DataTable

from verifier_tui.engine.harbor.compare import (
    Comparison,
    TaskComparison,
    compare,
    job_line,
    read_compared,
)
from verifier_tui.tui.keys import HELP, QUIT, key
from verifier_tui.tui.screens.job_overview import TasksScreen, cell
from verifier_tui.tui.screens.keyed import named_above
from verifier_tui.tui.widgets.header_line import Flowing
from verifier_tui.words.run import side_of, unlisted_job
from verifier_tui.words.text import one_line, one_name
from verifier_tui.words.trial import folder_notes

#: Where a job's notes past the first few are (:func:`folder_notes`).
ALL_NOTES = "verifier-tui compare A B --json lists them all"


class CompareScreen(TasksScreen):
    SORTS = ("task", "difference")  # the tasks' orders, s going round them
    READ_GROUP = "compare-read"
    TRIALS_TITLE = "Trials whose outcome flipped, A → B (paired in the order they started)"
    TRIAL_WORD = "flipped trial"
    BINDINGS = [
        *named_above(
            key(
                "f", "differences", "differences", "Differences only", "Only the tasks the two jobs went differently on"
            ),
            key(
                "t",
                "task",
                "task",
                "Filter by task",
                "Only the flipped trials of the task under the cursor (again: all)",
            ),
            key("s", "sort", "sort", "Sort the tasks", "By name, or by the largest difference of the means first"),
        ),
        # kept at any width: the comparison's summary (with the line naming f t s) is the first thing cut to fit
        HELP,
        QUIT,
        key("escape", "back", "jobs", "Back to the jobs", "the list of jobs the two were marked in"),
    ]
    HELP_TITLE = "verifier-tui: two jobs compared"
    OTHER_KEYS = [
        (
            "enter",
            "Open A's trial (or show the task's)",
            "On a flipped trial: job A's side of the pair, beside a local replay; on a task: only its flipped trials",
        ),
    ]

    def __init__(self, a: Path, b: Path) -> None:
        super().__init__(a)
        self.paths = (a, b)
        self.comparison: Comparison | None = None
        self.done = False
        self.unlisted: str | None = None  # why a job's folder could not be listed: nothing compared
        self.differences_only = False
        self.task_filter: str | None = None
        self.sort = "task"
        self.shown_flips: list[Path] = []  # A's trial of each row of the flips table

    def on_mount(self) -> None:
        tasks = self.query_one("#job-tasks", DataTable)
        for label in ("task", "A passed", "A mean", "B passed", "B mean", "B - A", "flipped"):
            tasks.add_column(label)
        # A narrow terminal cuts the columns on the right: the right arrow
        # scrolls to them with the task's name, or A's trial's, kept in view
        # (fixed); how the pair ended in each job comes right after it.
        tasks.fixed_columns = 1
        flips = self.query_one("#job-trials", DataTable)
        for label in ("A's trial", "A ended", "B ended", "B's trial", "task"):
            flips.add_column(label)
        flips.fixed_columns = 1
        tasks.focus()
        self._redraw()
        self._read()

    @work(thread=True, exclusive=True, group="compare-read", exit_on_error=False)
    def _read(self) -> None:
        """Both jobs' trials, as their overviews read them: off the event loop (a big job takes a while)."""
        from textual.worker import get_current_worker

        a, b = self.paths
        worker = get_current_worker()
        # Asked before each trial: a cancelled worker's thread goes on, and the
        # process waits for it as it ends (q took seconds on two big jobs).
        try:
            comparison = compare(*read_compared(a, b, cancelled=lambda: worker.is_cancelled))
        except OSError as exc:
            # A job removed (or made unreadable) since the list was read: said where the comparison would be, as
            # the job overview says it. Left to the worker, the header said "(reading)" for good under a toast
            # naming this function.
            if not worker.is_cancelled:
                letter, folder = side_of(exc.filename, a, b) or (None, Path(os.fsdecode(exc.filename or "?")))
                self.app.call_from_thread(self._unlisted, unlisted_job(folder, exc.strerror or str(exc), letter))
            return
        if not worker.is_cancelled:
            self.app.call_from_thread(self._compared, comparison)

    def _compared(self, comparison: Comparison) -> None:
        self.comparison, self.done = comparison, True
        self._redraw()

    def _unlisted(self, why: str) -> None:
        self.unlisted, self.done = why, True
        self._redraw()

    # -- showing ---------------------------------------------------------

    def _redraw(self) -> None:
        self._show_header()
        comparison = self.comparison
        tasks = self.query_one("#job-tasks", DataTable)
        flips = self.query_one("#job-trials", DataTable)
        # The cursor stays on its task: cleared, it went to the first row,
        # and the next enter or t acted on a task the user had not chosen.
        kept = tasks.coordinate_to_cell_key(tasks.cursor_coordinate).row_key if tasks.row_count else None
        tasks.clear()
        flips.clear()
        self.shown_flips = []
        if comparison is None:
            return
        rows = self._rows(comparison)
        if self.sort == "difference":
            rows.sort(key=lambda t: -t.largest_difference)
        for task in rows:
            tasks.add_row(cell(one_name(task.task)), *task.cells(), key=task.task)
        if kept in tasks.rows:
            tasks.move_cursor(row=tasks.get_row_index(kept))
        for task in rows:
            if self.task_filter is not None and task.task != self.task_filter:
                continue
            for a, b in task.flips:
                flips.add_row(
                    cell(a.name),
                    cell(f"{a.mark} {one_name(a.outcome_words)}"),
                    cell(f"{b.mark} {one_name(b.outcome_words)}"),
                    cell(b.name),
                    cell(one_name(task.task)),
                )
                self.shown_flips.append(a.path)

    def _rows(self, comparison: Comparison) -> list[TaskComparison]:
        return [t for t in comparison.tasks if t.differs or not self.differences_only]

    def _show_header(self) -> None:
        comparison = self.comparison
        lines: list[Any] = []
        for letter, path in zip("AB", self.paths, strict=True):
            job = None if comparison is None else (comparison.a if letter == "A" else comparison.b)
            if job is None:
                lines += [
                    (f"{letter}  job ", "$text-muted"),
                    (one_line(path.name), "bold"),
                    (" (not read)\n" if self.unlisted else " (reading)\n", "$text-muted"),
                ]
                continue
            lines += [(one_line(job_line(letter, job, one_name)), ""), "\n"]
        if self.unlisted:
            lines.append((f"{one_line(self.unlisted)}: nothing is compared\n", "$error"))
        if comparison is not None:
            for letter, side in (("A", "a"), ("B", "b")):
                only = comparison.only(side)
                names = ", ".join(one_name(name) for name in only)
                lines += [(f"only {letter} passes: ", "$text-muted"), one_line(names or "no task"), "\n"]
            flips = comparison.flips
            lines.append(
                (f"{flips} trial{'s' * (flips != 1)} flipped\n" if flips else "no trial's outcome flipped\n", "bold")
            )
            for note in (comparison.note, comparison.keys_note):
                if note:
                    lines.append((f"note: {note}\n", "$warning"))
            # What of each folder is no trial (a link, a stray folder), as compare says it.
            for letter, job in (("A", comparison.a), ("B", comparison.b)):
                for line in folder_notes(job.overview.notes, f"{letter}: ", ALL_NOTES):
                    lines.append((f"{self.fmt.text(line)}\n", "$warning"))
        shown = []
        if self.differences_only:
            shown.append("tasks that differ")
        if self.task_filter:
            shown.append(f"task {one_name(self.task_filter)}")
        what = "showing " + (", ".join(shown) if shown else "every task")
        if shown and comparison is not None and comparison.tasks and not self._rows(comparison):
            what += ": none"  # an empty table under a filter reads as a comparison not read yet
        elif self.task_filter and comparison is not None:
            # the flips shown, counted: an empty flips table under t reads as a comparison not read yet too
            n = sum(len(t.flips) for t in self._rows(comparison) if t.task == self.task_filter)
            what += f": {n} trial{'s' * (n != 1)} flipped" if n else ": no trial flipped"
        lines.append(
            self._keys_line(f"{what} · sorted by {self.sort}", "f differences  t task  s sort  esc jobs  ? keys")
        )
        self.query_one("#job-header", Flowing).flow(*lines)

    # -- keys ------------------------------------------------------------

    def action_differences(self) -> None:
        self.differences_only = not self.differences_only
        self._redraw()

    def _trial_at(self, row: int) -> Path | None:
        return self.shown_flips[row] if 0 <= row < len(self.shown_flips) else None
