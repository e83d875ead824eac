"""The help dialog (``?``) of every screen that has one: the marks the
screen shows (the task's: :data:`verifier_tui.words.run.LEGEND`, which the
README documents), then its keys (:mod:`verifier_tui.tui.keys`)."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from verifier_tui.tui.display import HEAD, content
from verifier_tui.tui.workarounds import KeyFooter

#: ``(title, [(mark, meaning)])`` groups: the marks a screen shows.
Legend = Sequence[tuple[str, Sequence[tuple[str, str]]]]


def help_content(marks: Legend, keys: Sequence[tuple[str, str, str]]) -> Content:
    """The marks first (what the screen shows), each padded to the widest,
    then the ``(key, title, what it does)`` rows and the palette, the keys
    padded alike."""
    parts: list[str | tuple[str, str]] = []
    width = max((len(mark) for _title, group in marks for mark, _meaning in group), default=0) + 2
    for title, group in marks:
        parts.append((f"Marks: {title}\n", HEAD))
        for mark, meaning in group:
            parts += [(f"  {mark:<{width}}", "bold"), f"{meaning}\n"]
        parts.append("\n")
    parts.append(("Keys\n", HEAD))
    rows = [*keys, ("ctrl+p", "Command palette", "every action above, by name")]
    # the keys' column as wide as its widest ("home end" ran into its title), a space after it
    key_width = max(7, *(len(key) + 1 for key, _title, _does in rows))
    for key, title, does in rows:
        parts += [(f"  {key:<{key_width}}", "bold"), title, (f": {does}\n", "$text-muted")]
    return content(*parts)


class HelpScreen(ModalScreen[None]):
    """Dismissed by esc, ? or q."""

    BINDINGS = [
        Binding("escape", "close", "close"),
        Binding("question_mark", "close", "close", show=False),
        Binding("q", "close", "close", show=False),
    ]

    def __init__(self, shown: Content, title: str) -> None:
        super().__init__()
        self.shown = shown
        self.heading = title

    def compose(self) -> ComposeResult:
        with Vertical(id="help", classes="dialog"):
            yield Label(Content(self.heading), classes="dialog-title")
            with VerticalScroll(id="help-body"):
                yield Static(self.shown, id="help-text")
            yield Label(Content("esc, ? or q closes"), classes="dialog-hint")
        # Its own keys, as every dialog's: without it the screen's beneath showed (r run, q quit),
        # keys the help does not take.
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one("#help-body").focus()  # the arrows and page keys scroll it

    def action_close(self) -> None:
        self.dismiss(None)
