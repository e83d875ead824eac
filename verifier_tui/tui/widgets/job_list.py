"""A job's trials (one line per step of a multi-step trial), each with what
the sandbox scored: the reward, or the exception Harbor recorded. Enter opens one."""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from verifier_tui.engine.harbor.walkthrough import JobEntry
from verifier_tui.tui.display import content
from verifier_tui.words.text import one_line, one_name


class JobList(OptionList):
    @dataclass
    class EntryChosen(Message):
        entry: JobEntry

    def show(self, entries: list[JobEntry]) -> None:
        """A multi-step trial's name heads its steps' lines (not itself a choice)."""
        self.job_entries = entries
        width = max((len(self._entry_name(e)) for e in entries), default=10)
        options: list[Option] = []
        for index, entry in enumerate(entries):
            if entry.step is not None and (index == 0 or entries[index - 1].trial != entry.trial):
                options.append(Option(content(("  ", ""), (one_line(entry.trial), "bold")), disabled=True))
            options.append(Option(self._prompt(entry, width), id=str(index)))
        self.set_options(options)
        first = next((i for i, option in enumerate(options) if not option.disabled), None)
        if first is not None:
            self.highlighted = first

    @staticmethod
    def _entry_name(entry: JobEntry) -> str:
        return one_line(f"  step {entry.step}" if entry.step is not None else entry.trial)

    def _prompt(self, entry: JobEntry, width: int) -> Content:
        verdict = entry.verdict
        scored = verdict.rewards is not None
        mark, style = (
            ("✓", "bold $success") if scored else ("✗", "bold $error") if verdict.error else ("·", "$text-muted")
        )
        extra = ""
        if entry.exception_type and entry.exception_type != verdict.error:
            extra = f"  (Harbor recorded {one_name(entry.exception_type)})"
        indent = "  " if entry.step is not None else ""
        name = one_line(f"step {entry.step}" if entry.step is not None else entry.trial)
        return content(
            indent,
            (f"{mark} ", style),
            (name.ljust(width - len(indent)), "bold"),
            "  ",
            (entry.label, style if not scored else ""),
            (extra, "$text-muted"),
        )

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:  # a trial's heading has none, and is never chosen
            self.post_message(self.EntryChosen(self.job_entries[int(event.option.id)]))
