"""The first line under a trial's header: the first thing that went wrong
in the whole trial, in Harbor's order (the environment, the agent, the
verifier), what to try, and the verifier's part after an earlier failure."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.containers import VerticalScroll
from textual.widgets import Static

from verifier_tui.tui.display import content
from verifier_tui.words.text import one_line, one_name

if TYPE_CHECKING:
    from verifier_tui.engine.harbor.root_cause import RootCause
    from verifier_tui.tui.trial_display import TrialDisplay


class RootCauseBox(VerticalScroll):
    """Holds the root cause: it grows to its cap (app.tcss); a longer cause scrolls, its
    scrollbar the hint, and tab reaches it (the arrows and end scroll it)."""

    def allow_focus(self) -> bool:
        return self.max_scroll_y > 0  # tab stops here only when there is something to scroll to


class RootCausePanel(Static):
    def show(self, cause: RootCause, fmt: TrialDisplay) -> None:
        if not cause.failed:
            mark = ("✓ root cause  ", "bold $success") if cause.finished else ("· root cause  ", "bold $warning")
            self.update(content(mark, fmt.text(one_line(cause.headline(one_name)))))
            return
        # a trial's own words (an exception's type and message) can hold line breaks: each part is one line
        parts: list[Any] = [("✗ root cause  ", "bold $error"), (fmt.text(one_line(cause.headline(one_name))), "bold")]
        if cause.then:
            parts += ["\n", ("  " + fmt.text(one_line(cause.then)), "$text-muted")]
        if cause.advice:
            parts += ["\n", ("  try: ", "bold $accent"), fmt.words(cause.advice)]
        self.update(content(*parts))
