"""The first line under a trial's header: the first thing that went wrong
in the whole trial, in Harbor's order (the environment, the agent, the
verifier), what to try, and the verifier's part after an earlier failure."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.widgets import Static

from verifier_tui.tui.display import content
from verifier_tui.words.text import one_line

if TYPE_CHECKING:
    from verifier_tui.engine.harbor.root_cause import RootCause
    from verifier_tui.tui.trial_display import TrialDisplay


class RootCausePanel(Static):
    def show(self, cause: RootCause, fmt: TrialDisplay) -> None:
        if not cause.failed:
            self.update(content(("✓ root cause  ", "bold $success"), fmt.text(one_line(cause.headline()))))
            return
        # a trial's own words (an exception's type and message) can hold line breaks: each part is one line
        parts: list[Any] = [("✗ root cause  ", "bold $error"), (fmt.text(one_line(cause.headline())), "bold")]
        if cause.then:
            parts += ["\n", ("  " + fmt.text(one_line(cause.then)), "$text-muted")]
        if cause.advice:
            parts += ["\n", ("  try: ", "bold $accent"), fmt.words(cause.advice)]
        self.update(content(*parts))
