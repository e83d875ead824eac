"""Parameterized tasks: one template task folder with ``tasks.jsonl`` beside
its ``task.toml``, one row per task.

NeMo Gym renders each row into a task folder of its own at prepare time and
writes the row's fields there as ``task_data.json``
(``nemo_gym.data.tasks.harbor.parameterized``). A row is
``{"task_id": "...", "task_data": {...}}``, or the fields flat beside
``task_id``. Debugging the template, the tool hands the verifier one row's
fields as ``task_data``, exactly what the rendered task's ``task_data.json``
would hold.

Which row a case uses (README, "Parameterized tasks"): the case's own
``task_data.json`` first; else the row its ``task_id.txt`` names; else the row
whose ``task_id`` is the case folder's name.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from verifier_tui.engine import untrusted
from verifier_tui.engine.advice import CHOOSE_ROW, CHOOSE_ROW_OR_NONE, Advice, by_name
from verifier_tui.engine.plain import posix_from
from verifier_tui.engine.record import field, record
from verifier_tui.engine.task.kinds import some_names

if TYPE_CHECKING:
    from typing import Any

TASKS_FILE = "tasks.jsonl"
#: The file a case names its row in (one line: the row's task_id).
CASE_TASK_ID_FILE = "task_id.txt"
#: A tasks.jsonl larger than this is not read (a template's rows are small).
MAX_BYTES = 64 * 1024 * 1024
#: How many bad lines a problem names before it gives a count.
_PROBLEMS_NAMED = 3


@record(frozen=True)
class TaskRow:
    """One row: its id, the fields the verifier gets as ``task_data``, and
    its line in the file (1-based)."""

    task_id: str
    data: dict[str, Any]
    line: int


@record(frozen=True)
class TaskRows:
    """The rows of one JSON Lines file, and what was wrong with it."""

    path: Path
    rows: list[TaskRow] = field(default_factory=list)
    problems: tuple[str, ...] = ()

    @property
    def ids(self) -> list[str]:
        return [row.task_id for row in self.rows]

    def row(self, task_id: str) -> TaskRow | None:
        return next((row for row in self.rows if row.task_id == task_id), None)


def outside(path: Path, root: Path) -> str | None:
    """``path`` as the task shows it and where it leads, ``tests/x leads out
    of the task, to /etc``, when it leads out of ``root`` (a link to ~/.ssh,
    to /proc/self/environ, in a task someone sent); None when it lies inside."""
    try:
        real = path.resolve()
    except (OSError, RuntimeError):  # a loop: it leads nowhere, and the run says so
        return None
    if real.is_relative_to(root.resolve()):
        return None
    shown = posix_from(path, root)
    where = os.readlink(path) if path.is_symlink() else str(real)
    # harmless: a line break in where it leads, raw, began a line of its own in test's text and its JUnit
    return f"{untrusted.harmless(shown)} leads out of the task, to {untrusted.harmless(where)}"


def leads_out(path: Path, root: Path, option: str) -> str | None:
    """Why ``path`` is not read for a run (:func:`outside`); ``option`` gives
    such a file by name: an action, as the plugin has no such option and words
    it as the command that has."""
    said = outside(path, root)
    if said is None:
        return None
    return Advice(
        f"{said}: not read for a run, whose verifier could send it anywhere; give it with ",
        by_name(option),
        " if you mean it",
    )


def task_rows(task_root: Path) -> TaskRows | None:
    """The rows of the task's ``tasks.jsonl``, when it is a parameterized
    task; none read from one that leads out of the task (said as its problem)."""
    path = task_root / TASKS_FILE
    if not untrusted.present(path):  # a FIFO is present: reading it says what it is
        return None
    out = leads_out(path, task_root, "--task-data FILE --task-id ID")
    return TaskRows(path, [], (out,)) if out is not None else read_task_rows(path)


def row_task_data(row: dict[str, Any]) -> dict[str, Any] | None:
    """What a row hands the verifier: its ``task_data`` object, or the fields
    beside ``task_id`` when there is no ``task_data`` key; None when its
    ``task_data`` is not an object."""
    if "task_data" in row:
        data = row["task_data"]
        return data if isinstance(data, dict) else None
    return {key: value for key, value in row.items() if key != "task_id"}


def read_task_rows(path: Path) -> TaskRows:
    """Every row of ``path``; a line that is not a row is a problem, never an
    exception (a broken line must not stop debugging the others)."""
    rows: list[TaskRow] = []
    bad: list[str] = []
    seen: dict[str, int] = {}
    found = untrusted.read_bytes(path, MAX_BYTES)
    if found.data is None:
        return TaskRows(path, [], (found.problem or "cannot be read",))
    lines = found.data.split(b"\n")
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        row, problem = untrusted.parse_json(raw, f"line {number}")
        if problem is not None:
            bad.append(problem)
            continue
        if (
            not isinstance(row, dict)
            or isinstance(row.get("task_id"), bool)
            or not isinstance(row.get("task_id"), (str, int))
        ):
            bad.append(f"line {number} has no task_id (a string)")
            continue
        data = row_task_data(row)
        if data is None:
            bad.append(f"line {number}: task_data is not a JSON object")
            continue
        task_id = str(row["task_id"])
        if task_id in seen:
            bad.append(f"line {number} repeats task_id {task_id!r} (first on line {seen[task_id]}, which is used)")
            continue
        seen[task_id] = number
        rows.append(TaskRow(task_id, data, number))
    problems: tuple[str, ...] = ()
    if bad:
        problems = (some_names(bad, _PROBLEMS_NAMED, "; ") + " (those lines are left out)",)
    return TaskRows(path, rows, problems)


def some_ids(rows: TaskRows) -> str:
    return some_names(rows.ids, 5) if rows.ids else "none"


def no_such_row(rows: TaskRows, task_id: str) -> str:
    return f"{rows.path.name} has no row with task_id {task_id!r} (task ids: {some_ids(rows)})"


def choose_row(path: Path, task_id: str | None, known: TaskRows | None = None) -> tuple[str, tuple[str, ...]]:
    """The row of ``path`` to use as task data: ``task_id``, or the file's
    only row when none is named, and what is wrong with the file (lines left
    out, each said as ``NAME: problem``). Raises ValueError with the line to
    show. ``known`` is the task's own rows, read already."""
    rows = known if known is not None and known.path == path else read_task_rows(path)
    # Why a row is not there may be the file itself (too big, not rows): said with it.
    problems = tuple(f"{path.name}: {p}" for p in rows.problems)
    why = "".join(f"; {p}" for p in problems[:1])
    if task_id is None:
        if len(rows.rows) != 1:
            raise ValueError(
                Advice(
                    f"task data {path.name} is JSON Lines with {len(rows.rows)} task rows, not one JSON object: ",
                    CHOOSE_ROW,
                    f" (task ids: {some_ids(rows)}){why}",
                )
            )
        return rows.rows[0].task_id, problems
    if rows.row(task_id) is None:
        raise ValueError(f"--task-id {task_id}: {no_such_row(rows, task_id)}{why}")
    return task_id, problems


def no_row_chosen(rows: TaskRows) -> Advice:
    """Said when a parameterized task runs with no case and no row."""
    return Advice(
        f"no task data: the task is parameterized ({rows.path.name}, {len(rows.rows)} rows) and no row is "
        "chosen, so verify gets task_data = {}; ",
        CHOOSE_ROW_OR_NONE,
        f"task ids: {some_ids(rows)})",
    )


def looks_like_rows(path: Path) -> bool:
    """A file given as task data that is JSON Lines, by its name."""
    return path.suffix.lower() in (".jsonl", ".ndjson")


def case_task_id(folder: Path) -> str | None:
    """The row a case names in its ``task_id.txt``, if it has one."""
    text = untrusted.read_bytes(folder / CASE_TASK_ID_FILE, 64 * 1024, keep="head").text()
    return (text or "").strip() or None


def staged_row_text(path: Path, task_id: str) -> tuple[str | None, str | None]:
    """The JSON text of row ``task_id``'s task data in ``path``, read afresh
    (the file may have changed since the task was opened): (text, None), or
    (None, why there is none)."""
    rows = read_task_rows(path)
    row = rows.row(task_id)
    if row is None:
        problem = f"; {rows.problems[0]}" if rows.problems else ""
        return None, no_such_row(rows, task_id) + problem
    return json.dumps(row.data, ensure_ascii=False), None
