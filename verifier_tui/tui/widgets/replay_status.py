"""One line under a trial's header: live reload on or off, and the replay in
flight or the last replay's agreement with the sandbox."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content
from textual.widgets import Static

from verifier_tui.tui.display import content
from verifier_tui.words.trial import agreement_words

if TYPE_CHECKING:
    from verifier_tui.engine.harbor.trial_session import Replayed

WATCH_WORDS = {
    "starting": ("live reload: starting", "$text-muted"),
    "watching": ("● watching the task", "$success"),
    "off": ("○ not watching: r replays, w watches", "$warning"),
    "idle": ("○ nothing to watch until there is a replay", "$text-muted"),
}
AGREEMENT_STYLES = {"same": "bold $success", "differ": "bold $error"}


class ReplayStatus(Static):
    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.watch_words = WATCH_WORDS["starting"]
        self.state: Content = content(("no replay yet", "$text-muted"))
        self.count = 0
        self.stale: str | None = None

    def on_mount(self) -> None:
        self._draw()

    def set_watch(self, state: str, detail: str = "") -> None:
        self.watch_words = WATCH_WORDS.get(state, (f"live reload failed: {detail} (w retries)", "$error"))
        self._draw()

    def set_running(self, trigger: str) -> None:
        self.state = content(("▶ replaying ", "bold $accent"), (f"after {trigger}", "$text-muted"))
        self._draw()

    def set_finished(self, replayed: Replayed, trigger: str) -> None:
        word, _sentence = agreement_words(replayed.agreement, replayed.skipped)
        if replayed.local is not None:
            self.count += 1
            self.state = content(
                (f"replay #{self.count} ", "$text-muted"),
                (word, AGREEMENT_STYLES.get(word, "bold $warning")),
                (f" with the sandbox · after {trigger}", "$text-muted"),
            )
        else:
            self.state = content((word, "bold $warning"), (": see the agreement above", "$text-muted"))
        self._draw()

    def set_stale(self, what: str | None) -> None:
        """Live reload off and ``what`` changed since the replay shown (None: not stale)."""
        self.stale = what
        self._draw()

    def set_note(self, text: str, style: str = "$error") -> None:
        self.state = content((text, style))
        self._draw()

    def _draw(self) -> None:
        text, style = self.watch_words
        stale = (
            (("   ⚠ stale: ", "bold $warning"), (f"{self.stale} changed since this replay (r replays)", "$warning"))
            if self.stale
            else ()
        )
        self.update(content((text, style), "   ", self.state, *stale))
