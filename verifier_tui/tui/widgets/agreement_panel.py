"""Where the eye lands first on a trial's screen: whether the local replay
ended as the sandbox did, and when not, why (the first sentence names both
verdicts, the second where the two runs part, the rest the known reasons);
where the task's test.sh judged and verifier-tui's runner alone ended
otherwise, that run's story first (how it ended, where it parts, why).
Without a replay it says what to give."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.widgets import Static

from verifier_tui.engine.advice import STAND_IN, Advice
from verifier_tui.tui.display import content
from verifier_tui.words.trial import agreement_lines, agreement_mark, agreement_words, verdict_words

if TYPE_CHECKING:
    from verifier_tui.engine.harbor.trial_session import Replayed
    from verifier_tui.tui.trial_display import TrialDisplay

STYLES = {True: "bold $success", False: "bold $error", None: "bold $warning"}
NO_REPLAY_KEYS = "f chooses a folder to replay on (your stand-in for /app), s a case of the task or an empty /app"


def asks_for_stand_in(skipped: str | None) -> bool:
    """Whether the reason for no replay is a missing /app (the keys above give one)."""
    return isinstance(skipped, Advice) and STAND_IN in skipped.actions


class AgreementPanel(Static):
    def show(self, replayed: Replayed, fmt: TrialDisplay, sandbox_label: str) -> None:
        agreement = replayed.agreement
        word, sentence = agreement_words(agreement, replayed.skipped)
        style = STYLES[agreement.same]
        parts: list[Any] = [(f"{agreement_mark(agreement)} {word}  ", style)]
        if agreement.same is True:
            parts.append(f"{sentence}: {sandbox_label}")
        else:
            parts.append(fmt.words(sentence))
        for line in agreement_lines(agreement):
            parts += ["\n", ("  • ", "$text-muted"), fmt.text(line)]
        if replayed.local is None and asks_for_stand_in(replayed.skipped):
            parts += ["\n", ("  ", ""), (NO_REPLAY_KEYS, "bold $accent")]
        self.update(content(*parts))

    def show_waiting(self, sandbox: Any) -> None:
        self.update(
            content(
                ("▶ replaying  ", "bold $accent"),
                f"the sandbox ended with {verdict_words(sandbox)}; the replay's verdict comes here",
            )
        )
