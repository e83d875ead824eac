"""The help screen (``?``): every key of the main screen, from the one key
table (:mod:`verifier_tui.tui.keys`), and the legend of the marks in the
cases list and the history, from the one legend (:data:`verifier_tui.words.run.LEGEND`,
which the README documents)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from verifier_tui.tui.display import content
from verifier_tui.tui.keys import KEYS, shown_key
from verifier_tui.words.run import LEGEND

_HEAD = "bold $text-primary"


def help_content() -> Content:
    """The marks first (what the screen shows), then the keys."""
    return content(
        *marks_content(LEGEND),
        *keys_content(KEYS, [("esc", "Back to the latest run", "after picking a run in the history")]),
    )


def marks_content(legend: Sequence, width: int | None = None) -> list[Any]:
    """``(title, [(mark, meaning)])`` groups as the help shows them: each
    mark padded to ``width``, or followed by two spaces."""
    parts: list[Any] = []
    for title, marks in legend:
        parts.append((f"Marks: {title}\n", _HEAD))
        for mark, meaning in marks:
            parts += [(f"  {mark}  " if width is None else f"  {mark:<{width}}", "bold"), f"{meaning}\n"]
        parts.append("\n")
    return parts


def keys_content(
    table: Sequence[tuple[str, str, str, str, str]], extra: Sequence[tuple[str, str, str]] = ()
) -> list[Any]:
    """A screen's key table, then ``(key, title, help)`` rows of keys it has
    no binding row for, then the palette, as the help shows them."""
    parts: list[Any] = [("Keys\n", _HEAD)]
    rows = [(shown_key(key), title, help_text) for key, _a, _w, title, help_text in table]
    for key, title, help_text in [*rows, *extra, ("ctrl+p", "Command palette", "every action above, by name")]:
        parts += [(f"  {key:<7}", "bold"), title, (f": {help_text}\n", "$text-muted")]
    return parts


class HelpScreen(ModalScreen[None]):
    """Dismissed by esc, ? or q. ``content``: another screen's help (the main screen's by default)."""

    BINDINGS = [
        Binding("escape", "close", "close"),
        Binding("question_mark", "close", "close", show=False),
        Binding("q", "close", "close", show=False),
    ]

    def __init__(self, content: Content | None = None, title: str = "verifier-tui: keys and marks") -> None:
        super().__init__()
        self.shown = content
        self.heading = title

    def compose(self) -> ComposeResult:
        with Vertical(id="help", classes="dialog"):
            yield Label(Content(self.heading), classes="dialog-title")
            with VerticalScroll(id="help-body"):
                yield Static(self.shown or help_content(), id="help-text")
            yield Label(Content("esc, ? or q closes"), classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one("#help-body").focus()  # the arrows and page keys scroll it

    def action_close(self) -> None:
        self.dismiss(None)
