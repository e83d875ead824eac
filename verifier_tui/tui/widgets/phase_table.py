"""The runner's phases, step by step, the sandbox beside the replay: one
row per phase in three columns (the step, each side's mark and detail), the
row where the two part marked, then the first step that went wrong on each
side explained: what it means under Harbor, and what to try next."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Static

from verifier_tui.engine.harbor.phases import DONE, FAILED, NOT_REACHED, PHASES, STOPPED, UNKNOWN
from verifier_tui.tui.display import HEAD, content
from verifier_tui.words.trial import PHASE_MARKS, SANDBOX_COLUMN, step_detail, wrong_key

if TYPE_CHECKING:
    from verifier_tui.engine.harbor.phases import Parting, PhaseReport
    from verifier_tui.tui.trial_display import TrialDisplay

MARK_STYLES = {
    DONE: "$success",
    FAILED: "bold $error",
    STOPPED: "bold $warning",
    NOT_REACHED: "$text-muted",
    UNKNOWN: "$text-muted",
}


class PhaseTable(Vertical):
    def compose(self) -> ComposeResult:
        with Horizontal(id="phase-rows"):
            yield Static(id="phase-labels")
            yield Static(id="phase-sandbox")
            yield Static(id="phase-local")
        yield Static(id="phase-words")

    def show(
        self,
        sandbox: PhaseReport,
        local: PhaseReport | None,
        parting: Parting | None,
        fmt: TrialDisplay,
        local_missing: str = "no replay",
        local_title: str = "replay",
    ) -> None:
        """``local_title``: whose steps the local column shows (``runner
        alone``: verifier-tui's runner, beside the task's test.sh, which judged)."""
        labels: list[Any] = [("step", HEAD)]
        theirs: list[Any] = [(SANDBOX_COLUMN, HEAD)]
        mine: list[Any] = [(f"local {local_title}", HEAD)]
        by_name = {p.name: p for p in local.phases} if local is not None else {}
        for name, label in PHASES:
            parted = parting is not None and parting.phase == name
            labels += ["\n", (("◀▶ " if parted else "   ") + label, "bold $warning" if parted else "")]
            theirs += ["\n", *_cell(next(p for p in sandbox.phases if p.name == name), fmt)]
            ours = by_name.get(name)
            mine += ["\n", *(_cell(ours, fmt) if ours is not None else [("-", "$text-muted")])]
        self.query_one("#phase-labels", Static).update(content(*labels))
        self.query_one("#phase-sandbox", Static).update(content(*theirs))
        self.query_one("#phase-local", Static).update(content(*mine))
        self.query_one("#phase-words", Static).update(_words(sandbox, local, parting, fmt, local_missing, local_title))


def _cell(phase: Any, fmt: TrialDisplay) -> list[Any]:
    detail = fmt.text(phase.detail) if phase.detail else phase.status
    return [
        (PHASE_MARKS[phase.status] + " ", MARK_STYLES[phase.status]),
        (detail, "bold" if phase.status in (FAILED, STOPPED) else ""),
    ]


def _words(
    sandbox: PhaseReport,
    local: PhaseReport | None,
    parting: Parting | None,
    fmt: TrialDisplay,
    local_missing: str,
    local_title: str,
) -> Content:
    parts: list[Any] = []
    said = None
    for who, report in (("sandbox", sandbox), (local_title, local)):
        if report is None:
            continue
        key = wrong_key(report)
        if parts:
            parts.append("\n")
        if not (report.stopped_at or report.advice):
            parts += [(f"{who}: ", "bold"), (fmt.text(report.explanation), "$text-muted")]
            continue
        if key is not None and key == said:
            parts += [(f"{who}: ", "bold"), ("the same step went wrong the same way", "$text-muted")]
            continue
        said = key
        parts += [(f"{who}: ", "bold $error"), fmt.text(report.explanation)]
        if report.advice:
            parts += ["\n", ("  try: ", "bold $accent"), fmt.words(report.advice)]
    if local is None:
        parts += ["\n" if parts else "", ("replay: ", "bold"), (fmt.text(local_missing), "$text-muted")]
    for line in step_detail(sandbox, local, parting):
        parts += ["\n" if parts else "", (fmt.text(line), "$text-muted")]
    return content(*parts)
