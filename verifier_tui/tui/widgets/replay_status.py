"""One line under a trial's header (more when it says more): live reload on or off, and the
replay in flight or the last replay's agreement with the sandbox."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from textual.content import Content
from textual.reactive import reactive

from verifier_tui.tui.display import content
from verifier_tui.tui.widgets.status_line import ClockedLine
from verifier_tui.words.text import one_line
from verifier_tui.words.trial import agreement_words

if TYPE_CHECKING:
    from typing import Any

    from verifier_tui.engine.harbor.trial_session import Replayed
    from verifier_tui.tui.display import Display

WATCH_WORDS = {
    "starting": ("live reload: starting", "$text-muted"),
    "watching": ("● watching the task", "$success"),
    "off": ("○ not watching: r replays, w watches", "$warning"),
    "idle": ("○ nothing to watch until there is a replay", "$text-muted"),
}
AGREEMENT_STYLES = {"same": "bold $success", "differ": "bold $error"}


class ReplayStatus(ClockedLine):
    """Each attribute below, set, redraws the line."""

    # layout=True: what a change says may take another line (app.tcss), or give one back.
    watching: reactive[tuple[str, str]] = reactive(("starting", ""), layout=True)
    """Live reload's state (:class:`~verifier_tui.tui.messages.WatchStateChanged`) and its detail."""
    state: reactive[Content] = reactive(
        lambda: content(("no replay yet", "$text-muted")), always_update=True, layout=True
    )
    """The replay in flight, the last one's agreement, or why there is none."""
    stale: reactive[str | None] = reactive(None, layout=True)
    """What changed since the replay shown, live reload being off (None: nothing)."""

    def __init__(self, fmt: Display, **kwargs: Any) -> None:
        super().__init__(fmt, **kwargs)
        self.count = 0

    def set_running(self, trigger: str) -> None:
        self.state = content(("▶ replaying ", "bold $accent"), (f"after {one_line(trigger)}", "$text-muted"))
        self.time_run(time.monotonic())

    def watch_state(self) -> None:
        """Whatever else it says now (how a replay ended, that it failed), no replay is timed."""
        self.time_run(None)

    def set_finished(self, replayed: Replayed, trigger: str) -> None:
        word, _sentence = agreement_words(replayed.agreement, replayed.skipped)
        if replayed.local is not None:
            self.count += 1
            # A replay runs what an agent wrote: in the copy sandbox it could
            # write the user's files, said as run TRIAL and test JOB say it.
            copied = replayed.local.copy_sandbox
            after = f" · after {one_line(trigger)}"
            said = (
                (f"replay #{self.count} ", "$text-muted"),
                (word, AGREEMENT_STYLES.get(word, "bold $warning")),
                (f" with the sandbox{after}", "$text-muted"),
            )
            if replayed.agreement.refused is not None:  # Harbor's, not the sandbox's ("refused with the sandbox")
                said = (
                    (f"replay #{self.count}: ", "$text-muted"),
                    ("Harbor would refuse the task now", "bold $error"),
                    (after, "$text-muted"),
                )
            self.state = content(
                *said,
                *((("   ⚠ ", "bold $warning"), (one_line(copied), "$warning")) if copied else ()),
            )
        else:
            self.state = content((word, "bold $warning"), (": see the agreement below", "$text-muted"))

    def render(self) -> Content:
        state, detail = self.watching
        text, style = WATCH_WORDS.get(state, (f"live reload failed: {detail} (w retries)", "$error"))
        stale = (
            (("   ⚠ stale: ", "bold $warning"), (f"{self.stale} since this replay (r replays)", "$warning"))
            if self.stale
            else ()
        )
        clock = (f"  {self.elapsed}", "bold") if self.elapsed else ""
        return content((text, style), "   ", self.state, clock, *stale)
