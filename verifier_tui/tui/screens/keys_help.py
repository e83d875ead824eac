"""``?`` on a job's overview and on a folder of jobs: that screen's keys,
from its key table (:mod:`verifier_tui.tui.trial_keys`), in the help dialog."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Label, Static

from verifier_tui.tui.keys import shown_key
from verifier_tui.tui.screens.help import HelpScreen


def keys_content(table: list[tuple[str, str, str, str, str]], extra: list[tuple[str, str, str]] = ()) -> Content:
    parts: list = [("Keys\n", "bold $text-primary")]
    rows = [(shown_key(key), title, help_text) for key, _a, _w, title, help_text in table]
    for key, title, help_text in [*rows, *extra, ("ctrl+p", "Command palette", "every action above, by name")]:
        parts += [(f"  {key:<7}", "bold"), title, (f": {help_text}\n", "$text-muted")]
    return Content.assemble(*parts)


class KeysHelp(HelpScreen):
    """The help dialog with one screen's keys; esc, ? or q closes it."""

    def __init__(self, title: str, content: Content) -> None:
        super().__init__()
        self.title_text = title
        self.content = content

    def compose(self) -> ComposeResult:
        with Vertical(id="help", classes="dialog"):
            yield Label(Content(self.title_text), classes="dialog-title")
            with VerticalScroll(id="help-body"):
                yield Static(self.content, id="help-text")
            yield Label(Content("esc, ? or q closes"), classes="dialog-hint")
