"""The headless commands: ``run``, ``explain``, ``test``, ``watch``.

Readable output by default, ``--json`` for machines (documented in the README),
and exit statuses that mean something: ``run`` exits with the runner's code
(124 on timeout), ``test`` with 0 only when every case matched.

Everything is written through :mod:`verifier_tui.commands.terminal`: the verifier's
escape codes are shown harmlessly, a terminal that cannot take a character
gets an escape, and a reader that goes away (``| head -1``) changes no exit
status.
"""

from __future__ import annotations

import os
import time
from functools import partial
from typing import TYPE_CHECKING

from verifier_tui.commands import coverage, report, stopping, terminal
from verifier_tui.engine.harbor.runner_output import parse_runner_output
from verifier_tui.engine.keep_case import refusal, save
from verifier_tui.engine.model import CONTRACT_PREFIX, Outcome, RunResult
from verifier_tui.engine.procfs import shell_word
from verifier_tui.engine.session import Session
from verifier_tui.engine.task.config import refusal_first
from verifier_tui.engine.task.steps import step_back
from verifier_tui.words.run import cut_words, notices
from verifier_tui.words.text import one_line, plain_text

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    from verifier_tui.engine.changes import Change
    from verifier_tui.engine.suite import Collection

    Framing = Callable[[Callable[[argparse.Namespace, Session], int]], Callable[[argparse.Namespace], int]]


def _harbor(args: argparse.Namespace, command: str) -> int | None:
    """A Harbor trial or job folder goes to the trial commands (and
    ``run --both-modes`` to its own); None: this module's command goes on."""
    from verifier_tui.commands import harbor as headless_harbor

    status = headless_harbor.dispatch(args, command)
    if status is None and getattr(args, "both_modes", False):
        return headless_harbor.both_modes_command(args)
    return status


def _task_command(command: str, *checks: Callable[[argparse.Namespace, Session], str | None]) -> Framing:
    """``run``, ``explain`` and ``watch`` begin alike: a Harbor folder goes to the trial commands; a task's
    session exits 2, in one line, before anything runs when refused or one of ``checks`` names a problem."""

    def frame(body: Callable[[argparse.Namespace, Session], int]) -> Callable[[argparse.Namespace], int]:
        def framed(args: argparse.Namespace) -> int:
            status = _harbor(args, command)
            if status is not None:
                return status
            with Session(args.target, args.options) as session:
                if report.refused_before_running(session, *(partial(check, args, session) for check in checks)):
                    return 2
                return body(args, session)

        return framed

    return frame


@_task_command(
    "run",
    lambda args, session: refusal(session.task.root, args.save_case, session.workspace),
    lambda args, session: report.output_file_problem(
        "--coverage-report", args.coverage_report, report.read_by([session], session.options)
    ),
)
def run_command(args: argparse.Namespace, session: Session) -> int:
    """``verifier-tui run``."""
    result = session.run(trigger="command line")
    saved = save(result, session.task, args.save_case) if args.save_case is not None else None
    named = [(result.inputs.case or "-", result)]
    if args.json:
        data = report.result_json(session, result)
        if saved is not None:
            data["saved_case"] = saved
        terminal.out_json(coverage.with_member(args, data, named))
    else:
        for line in report.result_lines(session, result):
            terminal.out(line)
        if saved is not None:
            for line in report.saved_case_lines(saved):
                terminal.out(line)
        for line in coverage.said(args, named):
            terminal.out(line)
    if (saved is not None and saved["problem"] is not None) or _coverage_report(args, named):
        return 2
    return result.exit_status


def _coverage_report(args: argparse.Namespace, named: list[tuple[str, RunResult]]) -> bool:
    """``--coverage-report``'s file written; True (the command exits 2) when it could not be."""
    problem = coverage.write_report(args.coverage_report, named) if args.coverage_report else None
    if problem is not None:
        terminal.error(problem)
    return problem is not None


@_task_command("explain")
def explain_command(args: argparse.Namespace, session: Session) -> int:
    """``verifier-tui explain``."""
    explanation = session.explain()
    if args.json:
        terminal.out_json(report.explain_json(session, explanation))
        return 0 if explanation.error is None else 2
    if explanation.error is not None:
        if explanation.imported:  # its import may have run, and written there, before it failed
            terminal.out(session.isolation.words)
        terminal.error(explanation.error)
        if explanation.imported:  # else the error says all there is (a view's failure is said in it)
            terminal.write(plain_text(explanation.stderr or ""), "stderr")
        return 2
    for line in report.explain_lines(session, explanation):
        terminal.out(line)
    return 0


# ---------------------------------------------------------------------------
# test


def _before_any_run(collection: Collection) -> str | None:
    """What stops every task's runs before any starts (the first task's interpreter, no sandbox to
    be had), in one line; None: the sandbox the first task's session chose is every task's, asked
    once for the command."""
    first = next((group.session for group in collection.runnable if group.session is not None), None)
    if first is None:
        return None
    problem = report.interpreter_problem(first) or report.sandbox_problem(first)
    if problem is None:
        collection.keep_isolation(first.isolation)
    return problem


def test_command(args: argparse.Namespace) -> int:
    """``verifier-tui test``: every case with an expected.json of every task
    the paths name or hold (see :mod:`verifier_tui.engine.suite`), by task; a
    Harbor job or trial folder, alone, goes to the trial commands."""
    one_round = next(
        (o for o, v in (("--junit", args.junit), ("--coverage", args.coverage or args.coverage_report)) if v), None
    )
    if args.watch and one_round:
        return terminal.refuse(
            f"--watch and {one_round}: that report is of one run of the cases; give one or the other"
        )
    status = _harbor_test(args)
    if status is not None:
        return status
    return _test_cases(args)  # signals held since its command line was read, but with --watch (cli.main)


def _test_cases(args: argparse.Namespace) -> int:
    """``test`` on tasks, once or ``--watch``."""
    from verifier_tui.engine.procfs import machine_cpus
    from verifier_tui.engine.sandbox.isolation import IsolationError
    from verifier_tui.engine.suite import Collection, CollectionError, arun_groups, collect

    try:
        found = stopping.read_unless_stopped(lambda: collect(args.targets, args.options, args.case_patterns or ()))
    except (CollectionError, IsolationError) as exc:  # (a misspelt VERIFIER_TUI_SANDBOX: each session asks)
        return _not_collected(args, exc)
    if found is None:  # a signal ended the reading: nothing ran
        halted = SystemExit(stopping.status(2))
        _stopped_run(args, halted, [], Collection([]), "verifier-tui", 0.0)
        return stopping.exit_status(halted)
    collection = found
    with collection:
        groups = collection.groups
        runnable = collection.runnable
        own = report.read_by([group.session for group in groups if group.session is not None], args.options)
        junit_name = f"verifier-tui {groups[0].name}" if len(groups) == 1 else "verifier-tui"
        # Nothing at all: why, one line per task; but --watch on a task it read (a task.toml Harbor would refuse,
        # no verifier yet) watches for the save that makes its cases runnable, as it does once they ran
        fixable = args.watch and any(group.session is not None for group in groups)
        if not runnable and not any(group.invalid for group in groups) and not fixable:
            return _nothing_to_test(args, groups, collection, own, junit_name)
        problem = _reports_problem(args, own)
        if problem:  # a report that cannot be written: none is
            return terminal.refuse(problem)
        problem = stopping.unless_stopped(lambda: _before_any_run(collection))
        if problem:
            return report.refused_run(args.junit, problem, own)
        if args.watch:
            from verifier_tui.commands.rounds import watch_rounds

            return watch_rounds(collection, args)
        started = time.perf_counter()
        progress = terminal.Progress(sum(len(group.cases) for group in runnable), "cases", "failed")
        finished: dict[int, dict[int, RunResult]] = {}  # each group's outcomes so far, by case: for a stop

        def ended(group: object, index: int, outcome: RunResult) -> RunResult:
            progress.step(not outcome.expected_matched)
            finished.setdefault(id(group), {})[index] = outcome
            return outcome

        stop: BaseException | None = None
        try:
            ran_groups = stopping.run(arun_groups(runnable, args.jobs or machine_cpus(), ended))
        except (KeyboardInterrupt, SystemExit) as exc:
            stop = exc
            ran_groups = [[one for _i, one in sorted(finished.get(id(group), {}).items())] for group in runnable]
        finally:
            progress.erase()
        results = dict(zip(map(id, runnable), ran_groups, strict=True))
        wall = time.perf_counter() - started
        ran = [(group, results.get(id(group), [])) for group in groups]
        if stop is not None and sum(map(len, ran_groups)) < progress.total:
            # Stopped (Ctrl+C, a CI job's timeout): a report of what ran and that it stopped, never none, which
            # left the last run's report, all green perhaps, for CI to show as this one's. A signal once every
            # case had ended leaves this run's reports whole: the status alone says it.
            _stopped_run(args, stop, ran, collection, junit_name, wall)
            return stopping.exit_status(stop)
        every = [r for _group, rs in ran for r in rs]
        passed = sum(1 for r in every if r.expected_matched)
        invalid = sum(len(group.invalid) for group in groups)
        errors = [group for group in groups if group.error is not None]
        refused = [group for group in groups if report.refused(group)]
        named = [(group.item_name(r.inputs.case or "-"), r) for group, rs in ran for r in rs]
        # the report first, as when stopped: stdout that cannot be written (a full disk) ends the command
        junit = _test_junit(args, ran, collection, junit_name, wall) if args.junit else None
        if args.json:
            data = report.test_json(ran, wall, collection.without_cases, collection.without_step)
            terminal.out_json(coverage.with_member(args, data, named))
        else:
            for line in report.test_lines(
                ran, coverage.said(args, named), collection.without_cases, collection.without_step
            ):
                terminal.out(line)
        if junit is not None:
            terminal.error(junit)  # said after the table, which is printed all the same
        if refused or _coverage_report(args, named) or junit is not None:
            return 2  # whatever the cases did, Harbor would not run any of that task's (or a report is missing)
        return 0 if passed == len(every) and not invalid and not errors else 1


def _not_collected(args: argparse.Namespace, exc: Exception) -> int:
    """Nothing to test: said in one line (exit 2); tasks found, none with a case, are
    listed in a document and the report, as a task named alone is."""
    bare = getattr(exc, "without_cases", [])
    return report.refused_run(
        args.junit,
        str(exc),
        report.given(args.options),
        report.junit_cases([], bare),
        (lambda: terminal.out_json(report.test_json([], 0.0, bare))) if args.json and bare else None,
    )


def _stopped_run(
    args: argparse.Namespace,
    stop: BaseException,
    ran: list[tuple[Any, list[RunResult]]],
    collection: Collection,
    name: str,
    wall: float,
) -> None:
    """``test`` stopped by a signal before every case ran: said in one line,
    ``--json``'s document printed with the cases that ran and that line, and
    ``--junit``'s report written with them and that line as an error of its
    own, ``(stopped)``."""
    count = sum(len(group.cases) for group in collection.runnable)
    why = report.stopped_words(stop, sum(len(rs) for _group, rs in ran), count, "cases")
    # the report, then the document, then the lines (said too when stdout fails: a full disk ends the
    # command), so that a stderr that cannot be written (a closed terminal) cuts no document sent to a file
    problem = _test_junit(args, ran, collection, name, wall, report.stopped_case(why)) if args.junit else None
    try:
        if args.json:
            terminal.out_json(report.test_json(ran, wall, collection.without_cases, collection.without_step, why))
    finally:
        terminal.last_error(why)
        if problem is not None:
            terminal.last_error(problem)


def _test_junit(
    args: argparse.Namespace,
    ran: list[tuple[Any, list[RunResult]]],
    collection: Collection,
    name: str,
    wall: float,
    *more: Any,
) -> str | None:
    """``test --junit``'s report of what ran (and ``more`` cases: a stop's error), finished or stopped
    alike: the copy sandbox's, the shared network's and the step's words with the tasks' notes (the
    stopped report had the notes alone). Returns why it could not be written (None: it was)."""
    cases = report.junit_cases(ran, collection.without_cases, collection.without_step)
    network = report.shared_network(r for _group, rs in ran for r in rs)
    return report.write_junit(
        args.junit,
        name,
        [*cases, *more],
        wall,
        report.copy_warning(ran),
        network,
        report.junit_notes(ran),
        report.junit_step(ran),
    )


def _nothing_to_test(
    args: argparse.Namespace,
    groups: list[Any],
    collection: Collection,
    own: list[tuple[str, Path | None]],
    name: str,
) -> int:
    """No task could be tested: why, one line each, and in the reports (exit 2);
    the tasks found without a case (or without the step) are said too, as when some case runs.
    ``--json`` still prints the test document (its ``errors``, each task's
    ``harbor_refuses_task``), as ``test --watch --json`` does each round: a
    script reading stdout got nothing to parse."""
    without = collection.without_cases
    ran: list[tuple[Any, list[RunResult]]] = [(group, []) for group in groups]
    junit = None
    if args.junit and not report.output_file_problem("--junit", args.junit, own):
        # a report of the last run left in place would show CI a green page; written first: stdout that
        # cannot be written (a full disk) ends the command
        junit = report.write_junit(args.junit, name, report.junit_cases(ran, without, collection.without_step), 0.0)
    if args.json:
        terminal.out_json(report.test_json(ran, 0.0, without, collection.without_step))
    for group in groups:
        terminal.error(f"{'' if len(groups) == 1 else group.id + ': '}{report.error_line(group.error)}")
        for line in report.cases_not_run(group):
            terminal.error(line if len(groups) == 1 else f"{group.id}: {line}")
    for task in without:
        terminal.error(report.without_case(task))
    for lacking in collection.without_step:
        terminal.error(report.without_the_step(lacking))
    if junit is not None:
        terminal.error(junit)
    return 2


def _reports_problem(args: argparse.Namespace, own: list[tuple[str, Path | None]]) -> str | None:
    """Why ``test``'s report files cannot be written (see :func:`report.output_file_problem`)."""
    both = args.junit and args.coverage_report
    return (
        report.output_file_problem("--coverage-report", args.coverage_report, own)
        or report.output_file_problem("--junit", args.junit, own)
        or (
            f"--junit and --coverage-report name the same file, {args.junit}: give each its own"
            if both and os.path.realpath(args.junit) == os.path.realpath(args.coverage_report)
            else None
        )
    )


def _harbor_test(args: argparse.Namespace) -> int | None:
    """``test JOB`` (or ``test TRIAL``) replays the trials (``headless_harbor``);
    None when the paths are tasks and folders of tasks."""
    if args.watch and any(target.harbor for target in args.targets):
        return terminal.refuse(
            "--watch: for tasks and folders of tasks, not a Harbor job or trial (watch TRIAL re-runs one)"
        )
    if len(args.paths) == 1:
        args.path, args.target = args.paths[0], args.targets[0]
        return _harbor(args, "test")
    harbor = next((path for path, target in zip(args.paths, args.targets, strict=True) if target.harbor), None)
    if harbor is not None:
        return terminal.refuse(f"{harbor} is a Harbor folder: test it alone (verifier-tui test {shell_word(harbor)})")
    if getattr(args, "task", None) is not None:
        return terminal.refuse("--task: only for a Harbor trial or job folder")
    return None


# ---------------------------------------------------------------------------
# watch


@_task_command("watch")
def watch_command(args: argparse.Namespace, session: Session) -> int:
    """``verifier-tui watch``."""
    if not args.json:
        terminal.out(report.header(session))
        terminal.out(session.isolation.words)
        for notice in notices(session):
            terminal.out(f"note: {one_line(notice)}")
        terminal.out(report.WATCHING)
    from verifier_tui.commands.watching import watch_to_the_end

    problem = watch_to_the_end(_watch(session, args), args.poll)
    if problem is not None:
        return terminal.refuse(problem)
    if not args.json:
        terminal.out(f"stopped after {session.sequence} run(s) started")  # (the last, perhaps, cut short)
    return 2 if terminal.output_failed() else 0


async def _watch(session: Session, args: argparse.Namespace) -> None:
    from verifier_tui.commands.watching import watch_session

    session.keep_warm()  # every save re-runs: the next run waits, started, for it
    said = set(notices(session))  # above the first run
    step_was = session.step  # None once task.toml dropped --step's step

    async def run(trigger: str, change: Change | None) -> None:
        nonlocal said, step_was
        result = await session.arun(trigger=trigger)
        if args.json:
            terminal.out_json(report.result_json(session, result), indent=None)
        else:
            for line in report.watch_lines(result, trigger):
                terminal.out(line)
            # What run notes that the run before did not, under this run: a run started ahead that differs
            # from the cold one before it, as --preload kept the task's own module out, says why; and the
            # session's notes as they stand after a reload (task.toml dropping --step's step: this run is
            # tests/). A note that stays is said once; one gone and back is said again, or the run that
            # scores otherwise a second time has no word why. The step back is said, as its going was.
            current = notices(session, result)
            if result.task_refused is not None:
                # The refusal the line's column cuts, whole, right under it: a note, so said once while it
                # holds (under every run it was a second time, and twice where the task's note said it too)
                current = refusal_first(result.task_refused, current)
            back = (
                [step_back(session.task.root, session.step)]
                if session.step is not None and step_was != session.step
                else []
            )
            for note in back + [note for note in current if note not in said]:
                terminal.out(f"      note: {one_line(note)}")
            said, step_was = set(current), session.step
            stuck = report.stuck_at(result)
            if stuck:
                terminal.out(f"      {stuck}")
            elif result.outcome is Outcome.COULD_NOT_START:  # nothing ran, so nothing on stderr says why;
                # the tool's own sentence, whole: its end says what is wrong with the path it names
                terminal.out(f"      {one_line(plain_text(result.start_error or ''))}")
            elif result.outcome.slug != "reward_written" and result.stderr.text.strip():
                # The last line of the report the run ended on, as its panel says it: an exception printed after
                # it (a __del__ Python ignored as the interpreter exited) ended nothing. Only a run whose verify
                # raised ended on a report; after any other end a report in stderr is one verify logged. A
                # contract error's is the runner's line alone, as run names its cause: it goes on from output
                # verify left unfinished (`0;run_verifier: error: ...`), which is verify's, not the runner's.
                raised = result.outcome is Outcome.VERIFIER_RAISED
                contract = result.outcome is Outcome.CONTRACT_ERROR
                reading = parse_runner_output(result.stderr.text) if raised or contract else None
                cause = reading.contract_message if reading is not None and contract else None
                ended_on = reading.traceback if reading is not None and raised else None
                text = result.stderr.text
                if cause is not None:
                    text = f"{CONTRACT_PREFIX}{cause}"
                elif ended_on is not None:
                    text = ended_on.text
                last = plain_text(text).strip().splitlines()[-1:] or [""]
                terminal.out(f"      {cut_words(last[0], 150)}")
        terminal.flush()

    await watch_session(session, run, args.poll, "run", json=args.json, started=lambda: session.sequence)
