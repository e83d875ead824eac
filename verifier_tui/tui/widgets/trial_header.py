"""The two lines at the top of a trial's screen: which trial, task, agent
and verifier mode; and where the task was found (or not), said plainly."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.widgets import Static

from verifier_tui.tui.display import content
from verifier_tui.tui.widgets.header_line import LABEL, SEP
from verifier_tui.words.text import one_line
from verifier_tui.words.trial import task_found_at

if TYPE_CHECKING:
    from verifier_tui.engine.harbor.walkthrough import TrialWalkthrough
    from verifier_tui.tui.trial_display import TrialDisplay


class TrialHeader(Static):
    def show(self, walk: TrialWalkthrough, fmt: TrialDisplay) -> None:
        trial = walk.trial
        mode = walk.facts.verifier_mode or "unknown"
        parts: list[Any] = [("trial ", LABEL), (one_line(trial.name), "bold")]
        if walk.step.name is not None:
            parts += [SEP, ("step ", LABEL), (one_line(walk.step.name), "bold")]
        parts += [
            SEP,
            ("task ", LABEL),
            (one_line(trial.task_name or "?"), "bold"),
            SEP,
            ("agent ", LABEL),
            (one_line(trial.agent_name or "?"), "bold"),
            SEP,
            ("verifier mode ", LABEL),
            (mode, "bold $primary"),
        ]
        parts.append("\n")
        location = walk.location
        if not location.found:
            parts.append((fmt.text(location.message()), "bold $error"))
        else:
            said, path, how = task_found_at(fmt.path(location.path), location.found_by)
            parts += [(said, LABEL), (path, ""), (how, LABEL)]
            drift = walk.drift
            if drift is not None and drift.same is False:
                parts += ["\n", ("⚠ ", "bold $warning"), (fmt.text("; ".join(drift.sentences())), "$warning")]
        self.update(content(*parts))
