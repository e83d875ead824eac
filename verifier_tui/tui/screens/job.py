"""A multi-step trial's steps, with what the sandbox scored for each. Enter
opens one in a trial's screen; esc there comes back here. (A job's trials
are in :mod:`verifier_tui.tui.screens.job_overview`.)"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.message import Message
from textual.widgets import Static

from verifier_tui.engine.harbor.walkthrough import trial_entries
from verifier_tui.tui.display import content
from verifier_tui.tui.keys import HELP, QUIT, key
from verifier_tui.tui.screens.keyed import KeyedScreen
from verifier_tui.tui.screens.trial_reading import read_again, say_read_again
from verifier_tui.tui.widgets.job_list import JobList
from verifier_tui.tui.workarounds import KeyFooter
from verifier_tui.words.text import one_line

if TYPE_CHECKING:
    from verifier_tui.engine.harbor.folders import Trial


class JobScreen(KeyedScreen):
    BINDINGS = [
        # Offered while Harbor has not ended the trial: the list is its folder as read then.
        key(
            "r",
            "read_again",
            "read again",
            "Read the trial again",
            "Harbor has not ended it: its steps as they are now",
        ),
        HELP,
        QUIT,
        # in the footer, as a trial's screen names its esc: it was offered in the help alone
        key("escape", "back", "trials", "Back to the trials", "the job's trials, this trial was opened from them"),
    ]
    HELP_TITLE = "verifier-tui: a multi-step trial"
    OTHER_KEYS = [("enter", "Open the step", "The sandbox beside a local replay, step by step")]

    @dataclass
    class StepChosen(Message):
        """A step of ``trial`` to open (the app opens its screen)."""

        trial: Trial
        step: str | None

    def __init__(self, found: Trial, *, from_job: bool = False) -> None:
        super().__init__()
        self.found = found
        self.from_job = from_job  # opened from its job's overview, which esc goes back to

    def compose(self) -> ComposeResult:
        yield Static(id="job-header")
        yield JobList(id="job-list")
        yield Static(id="job-hint")
        yield KeyFooter()

    def on_mount(self) -> None:
        self._show()
        self.query_one(JobList).focus()

    def _show(self) -> None:
        found = self.found
        entries = trial_entries(found)
        scored = sum(1 for e in entries if e.verdict.rewards is not None)
        version = found.harbor_version
        header = content(
            ("trial ", "$text-muted"),
            (one_line(found.name), "bold"),
            (f" · {len(entries)} steps" + (f" · Harbor {version}" if version else ""), "$text-muted"),
            (f" · {scored} of {len(entries)} scored", "$text-muted"),
        )
        self.query_one("#job-header", Static).update(header)
        listing = self.query_one(JobList)
        listing.border_title = "What the sandbox scored"
        listing.show(entries)
        hint = "enter opens one: the sandbox beside a local replay, step by step"
        self.query_one("#job-hint", Static).update(content((hint, "$text-muted")))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """esc only when there is a job's overview to go back to; r while Harbor has not ended the trial."""
        if action == "read_again":
            return not self.found.finished
        return action != "back" or self.from_job

    def action_read_again(self) -> None:
        """The trial's folder read anew: the steps Harbor has written since, and what it scored."""
        trial = read_again(self, self.found)
        if trial is None:  # the list keeps what it showed
            return
        self.show_trial(trial)
        say_read_again(self, trial)

    def show_trial(self, trial: Trial) -> None:
        """``trial`` read again (by r here or on a step's screen) in place of the one shown, so that
        the list, r and the steps opened from it are of the folder as it is now."""
        self.found = trial
        listing = self.query_one(JobList)
        at = listing.highlighted
        self._show()
        if at is not None and at < listing.option_count:
            listing.highlighted = at  # the cursor stays on its step
        self.refresh_bindings()

    def action_back(self) -> None:
        """Back to the job's overview the trial was opened from."""
        self.dismiss(None)

    @on(JobList.EntryChosen)
    def _open(self, message: JobList.EntryChosen) -> None:
        self.post_message(self.StepChosen(self.found, message.entry.step))
