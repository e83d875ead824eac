"""``verifier-tui audit TASK``: the verifier on what an agent's failure or
gaming leaves (:mod:`verifier_tui.engine.audit`), one line a probe; exit 1
when one scores as high as a passing case, 0 when none does, 2 when there
is nothing to judge them by (no case asks for a reward, or the case that asks
the most does not get it), no probe ran to its verdict (all timed out), or
Harbor would refuse the task."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, cast

from verifier_tui.commands import report, stopping, terminal
from verifier_tui.engine.advice import with_its_command, worded
from verifier_tui.engine.audit import Bar, Finding, arun, bar, lone, probes, raised
from verifier_tui.engine.diagnosis import runner_not_compiled
from verifier_tui.engine.model import Outcome
from verifier_tui.engine.procfs import machine_cpus
from verifier_tui.engine.session import Session
from verifier_tui.engine.suite import MAKE_A_CASE
from verifier_tui.engine.task.cases import ON_SCRATCH
from verifier_tui.engine.task.config import USES_DEFAULTS, refused_words
from verifier_tui.engine.task.discovery import verifier_notices
from verifier_tui.engine.task.steps import steps_notices
from verifier_tui.words.paths import here
from verifier_tui.words.run import NOT_RUN, TIMED_OUT, format_number, harbor_error, runner_words
from verifier_tui.words.text import one_line

if TYPE_CHECKING:
    import argparse

    from verifier_tui.engine.model import RunResult

#: How a probe ends that tells nothing of what the verifier pays for.
UNJUDGED = (Outcome.TIMED_OUT, Outcome.KILLED, Outcome.COULD_NOT_START)


def audit_command(args: argparse.Namespace) -> int:
    with Session(args.target, args.options) as session:
        # audit runs every case's inputs, never the case run takes by default (the first by name): one that
        # cannot be read is a note below, whatever its name, not a refusal of the whole audit.
        session.select_case(None)
        # a --python that cannot run the runner too: no probe could start; a signal ends the check, as test's
        if stopping.unless_stopped(lambda: report.refused_before_running(session)):
            return 2
        task = session.task
        if not task.cases:
            # As `test` says it: a newcomer without cases is told how to keep one; an unreadable cases/ is not "none".
            why = task.cases_unread or f"{task.name} has no cases"
            how = "" if task.cases_unread else f"; {MAKE_A_CASE}"
            return terminal.refuse(f"{why}: audit compares its probes with a passing case{how}")
        unread: list[str] = []  # a case's folder that cannot be read: said, not dropped from the probes
        unprobed: list[str] = []  # a case's files past those removed one at a time: said, not passed over
        chosen = probes(task.cases, unread, unprobed)
        progress = terminal.Progress(len(chosen), "probes", "flagged")
        judged = bar(task.cases)
        findings: list[Finding] = []  # as each run ends: what a stop leaves, as test keeps its cases

        def ended(found: Finding | Bar) -> None:
            nonlocal judged
            if isinstance(found, Bar):
                judged = found
                return
            progress.step(found.matches is not None)
            findings.append(found)

        stopped: BaseException | None = None
        try:
            findings, judged = stopping.run(arun(session, chosen, args.jobs or machine_cpus(), ended))
        except (KeyboardInterrupt, SystemExit) as stop:
            stopped = stop
            order = {probe.name: at for at, probe in enumerate(chosen)}
            findings.sort(key=lambda finding: order[finding.probe])
        finally:
            progress.erase()
        flagged = [finding for finding in findings if finding.matches is not None]
        judgeable = any(finding.result.outcome not in UNJUDGED for finding in findings)
        refused = task.config.refused
        notes = _notes(session, findings, judged, unread + unprobed)
        # Stopped before every probe ended: said as test says it, its document holding the probes that
        # did; a signal once they all had leaves the whole audit, and the exit status alone says it.
        done, count = len(findings), len(chosen)
        halted = report.stopped_words(stopped, done, count, "probes") if stopped and done < count else None
        try:
            if args.json:
                terminal.out_json(
                    {
                        "task": str(task.root),
                        "task_name": task.name,
                        "bar": judged.to_json() if judged else None,
                        "probes": [finding.to_json() for finding in findings],
                        "unread": unread,
                        "unprobed": unprobed,
                        "flagged": len(flagged),
                        "notices": notes,
                        "harbor_refuses_task": refused,
                        "copy_sandbox": session.isolation.words if session.isolation.kind == "copy" else None,
                        "stopped": halted,
                    }
                )
            elif halted is None:
                _print(session, findings, judged, flagged, judgeable, notes)
        finally:
            if halted is not None:  # said when stdout fails too (a full disk), as test says it
                terminal.last_error(halted)
    if stopped is not None and halted:
        return stopping.exit_status(stopped)
    if judged is None or judged.failed or not judgeable or refused is not None:
        return 2
    return 1 if flagged else 0


def _notes(session: Session, findings: list[Finding], judged: Bar | None, case_notes: list[str]) -> list[str]:
    """What the text says in ``note:`` lines and ``--json`` in ``notices``, each once."""
    task = session.task
    # Why Harbor would refuse the task is said once, last (_print_tail), as test says it once.
    said_last = refused_words(task.config.refused) if task.config.refused is not None else None
    notes = [
        n
        for n in [*task.notices(), *verifier_notices(task, session.verifier), *session.given_notices()]
        if said_last is None or n.removesuffix(USES_DEFAULTS) != said_last
    ]
    # A multi-step task: the probes run tests/ with its [verifier], which Harbor never runs as such. audit
    # takes no --step, so the note names the command that runs one step, as the pytest plugin's does.
    notes += [
        worded(n, lambda a: with_its_command(a) or a.flag)
        for n in steps_notices(task.config, None, runs="audit's probes run")
    ]
    notes += [f"case {one_line(c.name)}: {_case_problem(p)}" for c in task.cases for p in c.problems]
    notes += case_notes
    # What every run had (a failed bar case's: a file staging skipped; a variable of the task's env this
    # machine lacks, which Harbor would refuse to run without), as run and test say it. Of the runs that
    # started: one that could not (a workspace not copied whole) has no notes, and would hide them all.
    ran = [*([judged.run] if judged is not None and judged.run is not None else []), *(f.result for f in findings)]
    ran = [r for r in ran if r.outcome is not Outcome.COULD_NOT_START]
    return list(dict.fromkeys(notes + report.common_notes(ran)))


def _print(
    session: Session,
    findings: list[Finding],
    judged: Bar | None,
    flagged: list[Finding],
    judgeable: bool,
    notes: list[str],
) -> None:
    task = session.task
    cases = f"{len(task.cases)} case{'s' if len(task.cases) != 1 else ''}"
    runner = runner_words(session)
    said = [f"task {one_line(task.name)}", f"verifier {here(session.verifier or '')}", session.options.python]
    terminal.out(" · ".join([*said, *([runner] if runner else []), f"audit of {cases}"]))
    for notice in notes:
        terminal.out(f"note: {one_line(notice)}")
    if judged is not None and judged.failed:
        terminal.out(_failed_bar_line(judged, session))
        _print_tail(session)
        return
    bar = _bar_words(judged) if judged else None
    rows = [_row(finding, bar, _runner_name(session)) for finding in findings]
    for row in report.table_lines([("", "probe", "reward", ""), *rows]):
        terminal.out(row)
    for finding in findings:
        if finding.result.user_files_written:
            wrote = ", ".join(here(path) for path in finding.result.user_files_written)
            terminal.out(f"{finding.probe}: your own files changed while the run ran, by the run or by you: {wrote}")
    if judged is None:
        # One that cannot be used may be the bar: said, not passed over as if it asked for nothing.
        unusable = [one_line(case.name) for case in task.cases if case.expected_problem is not None]
        why = f" (that of {', '.join(unusable)} cannot be used: see the note above)" if unusable else ""
        terminal.out(
            f"no case's expected.json asks for a reward above 0{why}: nothing to judge the probes by; write the "
            'expected.json of a case a correct agent passes, such as {"rewards": {"reward": 1.0}}'
        )
    elif not judgeable:
        terminal.out("no probe ran to its verdict (each timed out, was killed or did not start): none was judged")
    else:
        unjudged = sum(1 for finding in findings if finding.result.outcome in UNJUDGED)
        tail = f" ({unjudged} not judged: timed out, killed or not started)" if unjudged else ""
        terminal.out(f"{len(flagged)} of {len(findings)} probes score as high as {bar}{tail}")
    _print_tail(session)


def _case_problem(problem: str) -> str:
    """A case's problem in audit's words: an option of one input (which audit
    takes none of) named with the command that takes it, and a case without its
    workspace said to get no probes, not to run on an empty one."""
    said = worded(problem, lambda a: with_its_command(a) or a.flag)
    return f"{said.removesuffix(ON_SCRATCH)}audit gives the case no probes" if said.endswith(ON_SCRATCH) else said


def _print_tail(session: Session) -> None:
    if session.task.config.refused is not None:
        terminal.out(refused_words(session.task.config.refused))
    if session.isolation.kind == "copy":
        terminal.out(session.isolation.words)


def _failed_bar_line(judged: Bar, session: Session) -> str:
    """Why no probe was judged: the case they are judged by does not pass, as
    test would say it, and where it raised: a task's own runner that does not
    compile raises before the verifier is imported."""
    ran = cast("RunResult", judged.run)
    error = raised(ran)
    broken = runner_not_compiled(ran.stderr.text, session.task_runner)
    where = f"{broken} of the task's own runner, which does not compile" if broken else f"{error} in the verifier"
    in_verifier = f" ({one_line(where)})" if error else ""
    return (
        f"case {one_line(judged.case)}, which the probes are judged against, does not pass: "
        f"expected {report.expected_text(ran)}, got {report.actual_text(ran)}{in_verifier}{_stuck_words(ran)}: "
        "no probe was run"
    )


def _rewards_words(rewards: dict[str, Any]) -> str:
    """``1``, or ``{"a": 1, "b": 0}`` for several keys."""
    return format_number(lone(rewards)) if len(rewards) == 1 else json.dumps(rewards)


def _bar_words(judged: Bar) -> str:
    within = f" (tolerance {format_number(judged.tolerance)})" if judged.tolerance else ""
    return f"{one_line(judged.case)}'s {_rewards_words(judged.rewards)}{within}"


def _runner_name(session: Session) -> str:
    own = session.task_runner
    return f"the task's own runner ({here(own.path)})" if own is not None else "our runner"


def _row(finding: Finding, bar: str | None, runner: str) -> tuple[str, str, str, str]:
    rewards = finding.rewards
    reward = _rewards_words(rewards) if rewards else harbor_error(finding.result) or "-"
    if finding.matches is not None:
        # Flagged all the same: Harbor 0.26 removes reward files before test.sh only
        # (Verifier._remove_reward_files); one written after that is read unless the runner clears it.
        why = (
            f"{runner} did not clear the planted {finding.planted_verdict} (Harbor clears reward files only before "
            "test.sh starts)"
            if finding.planted_verdict
            else "the verifier pays for this"
        )
        return ("!", one_line(finding.probe), reward, f"as high as {bar}: {why}")
    outcome = finding.result.outcome
    if bar is None:  # no case asks for a reward: ✓ would say the verifier refused to pay
        return (NOT_RUN, one_line(finding.probe), reward, "not judged: no case to judge it by")
    if outcome in UNJUDGED:  # ✓ would say the verifier refused to pay, where it was never asked
        mark = TIMED_OUT if outcome is Outcome.TIMED_OUT else NOT_RUN
        return (mark, one_line(finding.probe), reward, _not_judged_words(finding.result))
    return ("✓", one_line(finding.probe), reward, "")


def _not_judged_words(result: RunResult) -> str:
    """``not judged: timed out after 1 s``, and where the verifier was stuck."""
    return f"not judged: {result.outcome_words}{_stuck_words(result)}"


def _stuck_words(result: RunResult) -> str:
    """``, stuck at tests/verifier.py:6 in verify`` when a run that timed out
    has a stack naming a line of the verifier's own, as run and test say it: a
    verifier that hangs on what a failed agent leaves is fixed at that line."""
    stuck = report.stuck_at(result) if result.stuck_at is not None else None
    return f", {one_line(stuck)}" if stuck else ""
