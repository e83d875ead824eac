"""Theme styles for a run's status (theme variables only: every built-in theme
keeps working, and no colour is written in Python)."""

from __future__ import annotations

from verifier_tui.engine.model import RunResult
from verifier_tui.present import case_status, headline_reward

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


def short_reward(result: RunResult) -> str:
    """The reward Harbor aggregates on, when there is one; else nothing (the
    symbol, and the reward panel, say why there is none)."""
    if result.verdict.rewards is None or result.verdict.reward is None:
        return ""  # no reward, or a dict without 'reward': the reward panel says why
    return headline_reward(result)
