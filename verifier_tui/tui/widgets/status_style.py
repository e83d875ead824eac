"""Theme styles for a run's status (theme variables only: every built-in theme
keeps working, and no colour is written in Python). The words themselves are
:mod:`verifier_tui.words.run`'s, shared with the headless commands."""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifier_tui.engine.model import RunResult
from verifier_tui.words.run import OUTDATED, case_status, short_reward

if TYPE_CHECKING:
    from pathlib import Path

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


def case_mark(result: RunResult, outdated_through: int, setup: tuple[str | None, Path | None]) -> tuple[str, str, str]:
    """(symbol, style, reward) of a case's last run, as the cases list and s's list both mark it.
    Out of date (``?``, ``was ✓ 0.1``): its verdict was the files' before a change (a run of
    ``outdated_through`` or before), or another step's or verifier's than ``setup``, the ones
    chosen now (:attr:`Session.setup`), which ran other tests. Judged by what the run itself
    recorded, so S or v choosing back what it ran under makes it current again."""
    symbol, _word, style = status_of(result)
    reward = short_reward(result)
    if result.sequence <= outdated_through or result.setup != setup:
        return OUTDATED, "bold $warning", f"was {symbol} {reward}".rstrip()
    return symbol, style, reward
