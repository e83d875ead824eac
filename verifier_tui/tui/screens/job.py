"""A Harbor job's trials (one line per step of a multi-step trial), or a
multi-step trial's steps, with what the sandbox scored. Enter opens one in a
trial's screen; esc there comes back here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Static

from verifier_tui.engine.harbor.folders import Job
from verifier_tui.engine.harbor.walkthrough import job_listing, trial_entries
from verifier_tui.tui.trial_keys import JOB_KEYS, bindings
from verifier_tui.tui.widgets.job_list import JobList

if TYPE_CHECKING:
    from verifier_tui.engine.harbor.folders import Trial
    from verifier_tui.tui.trial_app import TrialApp


class JobScreen(Screen[None]):
    BINDINGS = bindings(JOB_KEYS)

    def __init__(self, found: Job | Trial) -> None:
        super().__init__()
        self.found = found

    def compose(self) -> ComposeResult:
        yield Static(id="job-header")
        yield JobList(id="job-list")
        yield Static(id="job-hint")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        found = self.found
        if isinstance(found, Job):
            entries = job_listing(found)
            count = f"{len(found.trials)} trial{'s' if len(found.trials) != 1 else ''}"
            what, problems = "job ", [f"note: {p}" for p in found.problems]
            version = found.harbor_version
        else:
            entries = trial_entries(found)
            count = f"{len(entries)} steps"
            what, problems, version = "trial ", [], found.harbor_version
        scored = sum(1 for e in entries if e.verdict.rewards is not None)
        header = Content.assemble((what, "$text-muted"), (found.name, "bold"),
                                  (f" · {count}" + (f" · Harbor {version}" if version else ""), "$text-muted"),
                                  (f" · {scored} of {len(entries)} scored", "$text-muted"))
        self.query_one("#job-header", Static).update(header)
        listing = self.query_one(JobList)
        listing.border_title = "What the sandbox scored"
        listing.show(entries)
        listing.focus()
        hint = "enter opens one: the sandbox beside a local replay, step by step"
        self.query_one("#job-hint", Static).update(Content.assemble(("\n".join([*problems, hint]), "$text-muted")))

    @on(JobList.EntryChosen)
    def _open(self, message: JobList.EntryChosen) -> None:
        app: TrialApp = self.app  # type: ignore[assignment]
        trials = self.found.trials if isinstance(self.found, Job) else [self.found]
        trial = next(t for t in trials if t.name == message.entry.trial)
        app.open_trial(trial, message.entry.step, from_job=True)
