"""Two jobs side by side (two agents or models on the same tasks): per task,
each job's trials and Harbor's mean, the difference, and the trials whose
outcome flipped.

Each job is read as its overview is (:mod:`.overview`, from each trial's
``result.json``): the same outcome words and the same mean, Harbor 0.26.0's
``Mean`` over the trials with a valid reward. Tasks are matched by the name
Harbor records (``task_name``), as ``harbor view``'s comparison grid matches
them when a task has no digest.

Harbor names a trial ``<task>__<random>``, so nothing pairs one job's third
attempt at a task with the other's: trials are paired in the order they
started (then by name), the first with the first. A flip is a pair whose
outcomes differ; a trial without a counterpart, or that cannot be read, or
whose result.json is not Harbor's, is counted, never paired.
"""

from __future__ import annotations

import math
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from verifier_tui.engine.harbor.overview import (
    PASSED,
    UNREADABLE,
    JobOverview,
    TaskRow,
    TrialRow,
    mean_figure,
    mean_number,
    mean_words,
    read_overviews,
)
from verifier_tui.engine.record import record
from verifier_tui.engine.verdict import reward_pairs

if TYPE_CHECKING:
    from collections.abc import Callable
    from decimal import Decimal

_EARLIEST = datetime.min.replace(tzinfo=timezone.utc)


@record(frozen=True)
class Compared:
    """One job of the two: where it is, its name, its overview."""

    path: Path
    name: str
    overview: JobOverview  # its notes: what of the folder is no trial (a link, a stray folder), left out

    def to_json(self) -> dict[str, Any]:
        overview = self.overview
        return {
            "path": str(self.path),
            "name": self.name,
            "trials": overview.total,
            "outcomes": dict(overview.counts()),
            "means": overview.recorded_means(),  # as run JOB --json gives them
            "mean_errors": overview.mean_errors(),
            "agents": overview.agents(),
            "problems": list(overview.notes),
        }


@record(frozen=True)
class TaskComparison:
    """One task: each job's row (None: the job did not run it), and the flips."""

    task: str
    a: TaskRow | None
    b: TaskRow | None
    flips: tuple[tuple[TrialRow, TrialRow], ...]

    @property
    def named(self) -> bool:
        """Whether each mean is shown with its reward key: a job scored the
        task on several keys, or the two jobs on different ones."""
        keys = [set(row.means) for row in (self.a, self.b) if row is not None and row.means]
        return any(len(k) > 1 for k in keys) or (len(keys) == 2 and keys[0] != keys[1])

    @property
    def exact_differences(self) -> dict[str, float | Decimal]:
        """B's mean less A's, for each reward key both have a mean of; one
        past any float (1e308 against -1e308: -2e308, which read ``-inf``) as
        the Decimal it is."""
        if self.a is None or self.b is None:
            return {}
        theirs = self.b.means
        # A mean Harbor has no number for (mean_errors: inf, nan, an OverflowError) has no difference either:
        # inf - inf said "+nan".
        no_number = {*self.a.mean_errors, *self.b.mean_errors}
        found: dict[str, float | Decimal] = {}
        for key, mean in self.a.means.items():
            if key in theirs and key not in no_number:
                difference = theirs[key] - mean
                if math.isfinite(difference):
                    found[key] = difference
                    continue
                from decimal import Decimal  # (as count_words: only a number this large needs it)

                found[key] = Decimal(theirs[key]) - Decimal(mean)
        return found

    @property
    def differences(self) -> dict[str, float]:
        """:attr:`exact_differences` that a float holds (--json has no number for the others)."""
        return {key: value for key, value in self.exact_differences.items() if isinstance(value, float)}

    @property
    def number_differs(self) -> bool:
        """Whether a mean is no number in one job and not in the other, or no
        number for another reason (:func:`~.overview.mean_errors`, keyed as
        ``means``): no B - A is given for it, yet the jobs went differently
        (1e308 twice, which Harbor's sum overflows on, against 1.0 twice)."""
        if self.a is None or self.b is None:
            return False
        ours, theirs = self.a.mean_errors, self.b.mean_errors
        return any(ours.get(key) != theirs.get(key) for key in set(self.a.means) & set(self.b.means))

    @property
    def differs(self) -> bool:
        """Whether the two jobs went differently on the task: a trial flipped,
        a mean differs (or is a number in one job only), they scored it on
        different keys, or only one job ran it."""
        if self.a is None or self.b is None:
            return (self.a is None) != (self.b is None)
        keys_differ = set(self.a.means) != set(self.b.means)
        return bool(self.flips) or keys_differ or self.number_differs or any(self.exact_differences.values())

    @property
    def largest_difference(self) -> float:
        """What the tasks are sorted by, the largest first: B - A's largest
        size; a mean that is a number in one job only counts as the largest."""
        numbers = max((abs(float(value)) for value in self.exact_differences.values()), default=0.0)
        return math.inf if self.number_differs else numbers

    @property
    def difference(self) -> float | None:
        """B's mean less A's, when both scored the task on the same one key."""
        differences = self.differences
        return None if self.named or not differences else next(iter(differences.values()))

    def cells(self) -> tuple[str, str, str, str, str, str]:
        """Its row after the task's name, as both faces show it: A passed, A
        mean, B passed, B mean, B - A, how many trials flipped."""
        named = self.named
        exact = self.exact_differences
        if named:
            difference = reward_pairs(exact, lambda key, value: f"{key} {mean_figure(value, True)}") or "-"
        else:
            difference = mean_figure(next(iter(exact.values())), True) if exact else "-"
        return (
            passed_text(self.a),
            mean_words(self.a, named),
            passed_text(self.b),
            mean_words(self.b, named),
            difference,
            str(len(self.flips)) if self.flips else "",
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "a": self.a.to_json() if self.a is not None else None,
            "b": self.b.to_json() if self.b is not None else None,
            "difference": self.difference,
            "differences": self.differences,
            "differs": self.differs,  # what the TUI's f keeps
            "flipped": [{"a": _trial_json(a), "b": _trial_json(b)} for a, b in self.flips],
        }


def passes(row: TaskRow | None) -> bool:
    """A job passes a task when it ran it and every trial of it passed."""
    return row is not None and row.trials > 0 and row.passed == row.trials


@record(frozen=True)
class Comparison:
    a: Compared
    b: Compared
    tasks: tuple[TaskComparison, ...]

    def only(self, side: str) -> list[str]:
        """The tasks only job ``side`` ("a" or "b") passes."""
        other = "b" if side == "a" else "a"
        return [t.task for t in self.tasks if passes(getattr(t, side)) and not passes(getattr(t, other))]

    @property
    def flips(self) -> int:
        return sum(len(t.flips) for t in self.tasks)

    @property
    def note(self) -> str | None:
        """Why nothing could differ, when nothing could: both faces say it."""
        if os.path.realpath(self.a.path) == os.path.realpath(self.b.path):
            return "A and B are the same job folder: nothing can differ"
        # A job none of whose folders is a trial read (each a link, never followed, or a stray folder) ran its
        # tasks all the same: "no task in common" would say the jobs ran different ones.
        # A job of no trial folder at all left nothing out: "each folder left out is noted" promised a note.
        unread = [(letter, job) for letter, job in (("A", self.a), ("B", self.b)) if not job.overview.rows]
        empty = [letter for letter, job in unread if not job.overview.notes]
        left_out = [letter for letter, job in unread if job.overview.notes]
        said = [f"{' and '.join(empty)} hold{'s' * (len(empty) == 1)} no trial folder"] if empty else []
        if left_out:
            said.append(f"no trial of {' or '.join(left_out)} was read (each folder left out is noted)")
        if said:
            return "; ".join(said) + ": no task is compared"
        if self.tasks and not any(task.a is not None and task.b is not None for task in self.tasks):
            return "the two jobs ran no task in common: each task is in one job only, so none is compared"
        return None

    @property
    def keys_note(self) -> str | None:
        if not any(task.named for task in self.tasks):
            return None
        return (
            "a mean shown with its reward key is that key's (a job scored the task on several keys, "
            "or the two jobs on different ones); B - A is given only for a key both jobs have"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "a": self.a.to_json(),
            "b": self.b.to_json(),
            "tasks": [t.to_json() for t in self.tasks],
            "only_a_passes": self.only("a"),
            "only_b_passes": self.only("b"),
            "flipped": self.flips,
            "note": self.note,  # as the text's last line: why nothing could differ
        }


def _trial_json(row: TrialRow) -> dict[str, Any]:
    return {"name": row.name, "path": str(row.path), "outcome": row.outcome, "rewards": row.rewards}


def _order(rows: list[TrialRow]) -> list[TrialRow]:
    """The trials to pair, in the order they started. One that cannot be read,
    or whose result.json is no file Harbor writes (not JSON, a JSON list, too
    big: counted as not finished, and noted), is left out: how it ended is not
    known, so no flip can be said of it. One
    with no start time (Harbor writes result.json when a trial ends, so the
    trial it was running when killed has none) comes after the rest: it is the
    latest started, and put first it would shift every other pair by one."""
    known = (r for r in rows if r.outcome != UNREADABLE and not r.result_unusable)
    return sorted(known, key=lambda r: (r.started_at is None, r.started_at or _EARLIEST, r.name))


def _by_task(rows: list[TrialRow]) -> dict[str, list[TrialRow]]:
    found: dict[str, list[TrialRow]] = {}
    for row in rows:
        found.setdefault(row.task, []).append(row)
    return found


def read_compared(a: Path, b: Path, cancelled: Callable[[], bool] | None = None) -> tuple[Compared, Compared]:
    """The two jobs, read together: a trial one did not finish is named as
    the other's trials name its task (:func:`read_overviews`, which asks ``cancelled``)."""
    ours, theirs = read_overviews(a, b, cancelled=cancelled)
    # named as every job is: by its folder
    return Compared(a, a.name, ours), Compared(b, b.name, theirs)


def compare(a: Compared, b: Compared) -> Comparison:
    """The two jobs task by task, in the order of the tasks' names."""
    ours, theirs = _by_task(a.overview.rows), _by_task(b.overview.rows)
    tasks = []
    for task in sorted(set(a.overview.tasks) | set(b.overview.tasks)):
        pairs = zip(_order(ours.get(task, [])), _order(theirs.get(task, [])), strict=False)  # extras unpaired
        flips = tuple((x, y) for x, y in pairs if x.outcome != y.outcome)
        tasks.append(TaskComparison(task, a.overview.tasks.get(task), b.overview.tasks.get(task), flips))
    return Comparison(a, b, tuple(tasks))


def flip_words(pair: tuple[TrialRow, TrialRow], name: Callable[[str], str] = str) -> str:
    """``a__x1 ✓ passed → b__y1 · reward below 1 (0.0)``; how each ended as ``name`` gives it (a face's)."""

    def side(row: TrialRow) -> str:
        reward = f" ({row.reward_text})" if row.rewards and row.outcome != PASSED else ""
        return f"{row.name} {row.mark} {name(row.outcome_words)}{reward}"

    return f"{side(pair[0])} → {side(pair[1])}"


def passed_text(row: TaskRow | None) -> str:
    return "-" if row is None else f"{row.passed}/{row.trials}"


def job_line(letter: str, job: Compared, name: Callable[[str], str] = str) -> str:
    """``A  job model-a · 4 trials · oracle · Harbor's mean 0.750`` (names as Harbor's files have them;
    ``Harbor's mean nop__adhoc 0.000; oracle__adhoc 1.000`` for a job of several agents)."""
    overview = job.overview
    agents = ", ".join(name(agent) for agent in overview.agents()) or "-"  # each as ``name`` gives it (a face's)
    groups = overview.means()
    errors = overview.mean_errors()
    # Harbor keeps a mean per <agent>__<model>__<dataset> (JobStats.evals): with
    # several, each is named, as the agents' order is not the groups'.

    def pairs(group: str, values: dict[str, float]) -> str:
        said = errors.get(group, {})
        return reward_pairs(values, lambda k, v: ("" if k == "mean" else f"{k} ") + mean_number(v, said.get(k)))

    named = len(groups) > 1
    means = "; ".join((f"{name(group)} " if named else "") + pairs(group, values) for group, values in groups.items())
    trials = overview.total
    return f"{letter}  job {job.name} · {trials} trial{'s' * (trials != 1)} · {agents} · Harbor's mean {means or '-'}"
