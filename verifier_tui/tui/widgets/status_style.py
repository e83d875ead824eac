"""Theme styles for a run's status (theme variables only: every built-in theme
keeps working, and no colour is written in Python). The words themselves are
:mod:`verifier_tui.words.run`'s, shared with the headless commands."""

from __future__ import annotations

from verifier_tui.engine.model import RunResult
from verifier_tui.words.run import case_status

STATUS_STYLES = {
    "passed": "bold $success",
    "failed": "bold $error",
    "verifier raised": "bold $error",
    "contract error": "bold $warning",
    "timed out": "bold $warning",
    "reward written": "bold $accent",
}


def status_of(result: RunResult) -> tuple[str, str, str]:
    """(symbol, word, style) for a run's result."""
    symbol, word = case_status(result)
    return symbol, word, STATUS_STYLES.get(word, "bold $error")
