"""``--coverage`` and ``--coverage-report`` of ``run`` and ``test``: the task's
own lines no case reached, as text after the table, as the ``coverage``
member of ``--json`` (docs/json-output.md) and as an LCOV file."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from verifier_tui.commands.report import open_report
from verifier_tui.engine.coverage import (
    lcov,
    merge,
    missing_words,
    not_measured_words,
    problem_words,
    runs_words,
    to_json,
)
from verifier_tui.words.paths import here
from verifier_tui.words.text import one_line

if TYPE_CHECKING:
    import argparse

    from verifier_tui.engine.coverage import FileLines
    from verifier_tui.engine.model import RunResult


def gathered(
    named: list[tuple[str, RunResult]],
) -> tuple[dict[Path, FileLines], dict[str, dict[Path, FileLines]], list[str], dict[Path, str]]:
    """Each case's lines (by name), all of them merged, why a case has none,
    each reason once, naming its cases unless it is every case's (a task's
    own runner says it for every case), and the files no run could compile."""
    measured = [(name, r.coverage) for name, r in named if r.coverage is not None]
    per_case = {name: c.files for name, c in measured if c.problem is None}
    problems = problem_words(((one_line(name), c.problem) for name, c in measured if c.problem), len(measured))
    not_compiled = {path: why for _name, c in measured for path, why in c.not_compiled.items()}
    return merge(per_case.values()), per_case, problems, dict(sorted(not_compiled.items()))


def coverage_lines(named: list[tuple[str, RunResult]]) -> list[str]:
    """``coverage of 2 cases: 11 of 13 lines ran``, then each range no case
    reached, with its first line."""
    union, per_case, problems, not_compiled = gathered(named)
    out = list(problems)
    if not per_case:
        return out
    lines = sum(len(f.statements) for f in union.values())
    ran = sum(len(f.executed) for f in union.values())
    cases = runs_words(len(per_case), all(result.inputs.case is None for _name, result in named))
    # no line that can run (a verifier that does not compile) is no full coverage
    out.append(f"coverage of {cases}: {ran} of {lines} lines ran" + (", every one" if 0 < lines == ran else ""))
    for file in union.values():
        out += missing_words(file, here(file.path))
    return out + not_measured_words(not_compiled, here)


def said(args: argparse.Namespace, named: list[tuple[str, RunResult]]) -> list[str]:
    """The lines after the table, when ``--coverage`` asked for them."""
    return coverage_lines(named) if args.coverage else []


def with_member(args: argparse.Namespace, data: dict[str, Any], named: list[tuple[str, RunResult]]) -> dict[str, Any]:
    """``data`` (a ``--json`` document) with its ``coverage`` member, when coverage was asked for."""
    if args.coverage or args.coverage_report:
        data["coverage"] = coverage_json(named)
    return data


def coverage_json(named: list[tuple[str, RunResult]]) -> dict[str, Any]:
    union, per_case, problems, not_compiled = gathered(named)
    return {
        "files": to_json(union),
        "cases": {name: to_json(files) for name, files in per_case.items()},
        "problems": problems,
        "not_measured": {str(path): why for path, why in not_compiled.items()},
    }


def write_report(path: Path, named: list[tuple[str, RunResult]]) -> str | None:
    """The LCOV file at ``path``; why not, in one line, when it cannot be
    written or no case was measured (an empty report would pass for one of
    code no line of which can run)."""
    union, per_case, problems, _not_compiled = gathered(named)
    if not per_case:
        return f"--coverage-report {here(path)}: not written: {problems[0] if problems else 'no case was measured'}"
    try:  # a file name's bytes that are not UTF-8 are written as they are: the reader opens that file
        with open_report(path) as handle:
            handle.write(lcov(union).encode("utf-8", "surrogateescape"))
    except OSError as exc:
        return f"--coverage-report {here(path)}: {exc.strerror or exc}"
    return None
