"""``verifier-tui compare JOB_A JOB_B``: two jobs on the same tasks, task by
task (:mod:`verifier_tui.engine.harbor.compare`). Exit 0 once compared, 2
when a path is not a job."""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifier_tui.commands import terminal
from verifier_tui.commands.report import table_lines
from verifier_tui.engine.harbor.compare import (
    Comparison,
    compare,
    flip_words,
    job_line,
    read_compared,
)
from verifier_tui.engine.procfs import shell_word
from verifier_tui.engine.task.target import classify
from verifier_tui.words.run import side_of, unlisted_job
from verifier_tui.words.text import one_line, one_name
from verifier_tui.words.trial import folder_notes

if TYPE_CHECKING:
    import argparse

    from verifier_tui.engine.task.target import Target

#: Flipped trials listed in the text; --json lists them all.
FLIPS_LISTED = 30


def compare_command(args: argparse.Namespace) -> int:
    folders = []
    for path in args.jobs:
        target = classify(path)
        if target.kind != "job":
            return terminal.refuse(_not_a_job(path, target))
        folders.append(target.root or target.path)
    try:
        comparison = compare(*read_compared(folders[0], folders[1]))
    except OSError as exc:  # a job unlisted since it was classified: as the TUI says it, not "PATH: why"
        side = side_of(exc.filename, folders[0], folders[1])
        if side is None:
            raise
        return terminal.refuse(unlisted_job(side[1], exc.strerror or str(exc), side[0]))
    if args.json:
        terminal.out_json(comparison.to_json())
        return 0
    for line in comparison_lines(comparison):
        terminal.out(line)
    # A link's target in a note is said from where the user started (~ for home), as run JOB and the TUI say it.
    for letter, job in (("A", comparison.a), ("B", comparison.b)):
        for line in folder_notes(job.overview.notes, f"{letter}: "):
            terminal.say(line)
    if comparison.note:
        terminal.say(f"note: {comparison.note}")
    return 0


def _not_a_job(path: str, target: Target) -> str:
    if not path.strip():  # classify's own words ask for a task
        return "an empty path: compare takes two job folders (the folder holding each job's trials)"
    if target.kind == "missing":
        return target.why or f"{path} does not exist"
    if target.kind == "jobs":
        listed = f"verifier-tui run {shell_word(path)}"
        return f"{path} is a folder of jobs: compare two of the jobs in it ({listed} lists them)"
    if target.kind == "trial":
        return f"{path} is one trial: compare takes two job folders (the folder holding each job's trials)"
    return f"{path} is not a Harbor job folder (one holding config.json, result.json and a folder per trial)"


def comparison_lines(comparison: Comparison) -> list[str]:
    a, b = comparison.a, comparison.b
    out = [one_line(job_line(letter, job, one_name)) for letter, job in (("A", a), ("B", b))]
    out.append("")
    rows = [("task", "A passed", "A mean", "B passed", "B mean", "B - A", "flipped")]
    rows += [(one_name(task.task), *task.cells()) for task in comparison.tasks]
    out += table_lines(rows)
    if comparison.keys_note:
        out.append(f"note: {comparison.keys_note}")
    out.append("")
    for letter, side in (("A", "a"), ("B", "b")):
        only = comparison.only(side)
        out.append(f"only {letter} passes: " + (one_line(", ".join(one_name(name) for name in only)) or "no task"))
    flips = [(row.task, pair) for row in comparison.tasks for pair in row.flips]
    if flips:
        out.append("")
        out.append(f"trials whose outcome flipped, A → B ({len(flips)}; paired in the order they started):")
        for name, pair in flips[:FLIPS_LISTED]:
            out.append(f"  {one_name(name)}: {one_line(flip_words(pair, one_name))}")
        if len(flips) > FLIPS_LISTED:
            out.append(f"  ... and {len(flips) - FLIPS_LISTED} more (--json lists them all)")
    else:
        out.append("no trial's outcome flipped (trials paired in the order they started)")
    return out
