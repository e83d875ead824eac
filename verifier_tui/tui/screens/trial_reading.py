"""``r`` on a trial Harbor had not ended, said alike wherever it is offered
(a trial's screen, a multi-step trial's steps): what a screen shows of such a
trial is its folder as it was read, and Harbor may have written its
result.json (and the rest) since."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.screen import Screen

    from verifier_tui.engine.harbor.folders import Trial


def read_again(screen: Screen[None], trial: Trial) -> Trial | None:
    """``trial``'s folder read anew; None, said in one line, when it is gone, unreadable, or its
    path now leads to a link or another folder (never followed)."""
    from verifier_tui.engine.harbor.folders import HarborFolderError, read_trial_again

    try:
        return read_trial_again(trial)
    except (HarborFolderError, OSError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        screen.notify(f"r: cannot read the trial again: {why}", severity="error")
        return None


def say_read_again(screen: Screen[None], trial: Trial) -> None:
    """Whether Harbor has ended ``trial``, read again: an unreadable result.json says nothing of an end."""
    if trial.result.state == "unreadable":
        screen.notify(
            f"the trial read again: whether Harbor has ended it cannot be told: {trial.result.problem}",
            severity="warning",
        )
        return
    ended = "has ended it since" if trial.finished else "has not ended it yet"
    screen.notify(f"the trial read again: Harbor {ended}")
