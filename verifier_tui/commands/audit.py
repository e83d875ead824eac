"""``verifier-tui audit TASK``: the verifier on what an agent's failure or
gaming leaves (:mod:`verifier_tui.engine.audit`), one line a probe; exit 1
when one scores as high as a passing case, 0 when none does, 2 when there
is nothing to judge them by."""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifier_tui.commands import report, stopping, terminal
from verifier_tui.engine.audit import Finding, arun, probes
from verifier_tui.engine.session import Session, cpu_count
from verifier_tui.words.run import format_number, harbor_error

if TYPE_CHECKING:
    import argparse


def audit_command(args: argparse.Namespace) -> int:
    with Session(args.target, args.options) as session:
        if report.refused_before_running(session):  # a --python that cannot run the runner too: no probe could start
            return 2
        if not session.task.cases:
            terminal.error(f"{session.task.name} has no cases: audit compares its probes with a passing case")
            return 2
        chosen = probes(session.task.cases)
        progress = terminal.Progress(len(chosen), "probes", "flagged")
        try:
            findings, judged = stopping.run(
                arun(session, chosen, args.jobs or cpu_count(), lambda found: progress.step(found.matches is not None))
            )
        finally:
            progress.erase()
        flagged = [finding for finding in findings if finding.matches is not None]
        if args.json:
            terminal.out_json(
                {
                    "task": str(session.task.root),
                    "task_name": session.task.name,
                    "bar": {"case": judged[0], "reward": judged[1]} if judged else None,
                    "probes": [finding.to_json() for finding in findings],
                    "flagged": len(flagged),
                    "copy_sandbox": session.isolation.words if session.isolation.kind == "copy" else None,
                }
            )
        else:
            terminal.out(f"{report.header(session)} · audit")
            bar = f"{judged[0]}'s {format_number(judged[1])}" if judged else None
            for row in report.table_lines([("", "probe", "reward", "")] + [_row(f, bar) for f in findings]):
                terminal.out(row)
            if judged is None:
                terminal.out("no case's expected.json asks for a reward above 0: nothing to judge the probes by")
            else:
                terminal.out(f"{len(flagged)} of {len(findings)} probes score as high as {bar}")
            if session.isolation.kind == "copy":
                terminal.out(session.isolation.words)
    if judged is None:
        return 2
    return 1 if flagged else 0


def _row(finding: Finding, bar: str | None) -> tuple[str, str, str, str]:
    reward = format_number(finding.reward) if finding.reward is not None else harbor_error(finding.result) or "-"
    if finding.matches is not None:
        return ("!", finding.probe, reward, f"as high as {bar}: the verifier pays for this")
    return ("✓", finding.probe, reward, "")
