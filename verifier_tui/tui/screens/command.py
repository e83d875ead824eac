"""The command that reproduces the shown run (``c``), sent to the terminal's
clipboard and shown to be copied by hand.

Textual's ``copy_to_clipboard`` writes an OSC 52 escape, which no terminal
answers: whether anything reached the clipboard cannot be known (tmux without
``set-clipboard on`` drops it). So the dialog says where the command was sent
and shows it, broken into lines that a shell joins again (`` \\`` at each
line's end), so that it can be selected and pasted whole."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from verifier_tui.tui.workarounds import KeyFooter

#: Characters per line, `` \\`` included: the dialog's inner width in the smallest terminal the app takes (100 columns).
LINE_WIDTH = 76


class CommandScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape", "close", "close"),
        Binding("enter", "close", "close", show=False),
        Binding("c", "close", "close", show=False),
    ]

    def __init__(self, words: list[str], note: str | None = None) -> None:
        """``words``: the command's words, each already quoted for the shell
        (:func:`verifier_tui.words.run.command_words`)."""
        super().__init__()
        self.words = words
        self.note = note

    def compose(self) -> ComposeResult:
        with Vertical(id="command-dialog", classes="dialog"):
            yield Label(Content("The command that reproduces this run"), classes="dialog-title")
            yield Static(Content(continued_lines(self.words, LINE_WIDTH)), id="command-text")
            hint = (
                "Sent to the terminal's clipboard (OSC 52). A terminal that ignores OSC 52 (tmux without "
                "set-clipboard on, some ssh clients) copies nothing: select the command above by hand. It runs "
                "from the folder verifier-tui was started in."
            )
            if self.note:
                hint += f"\n{self.note}"
            yield Static(Content(hint + "\nesc closes"), classes="dialog-hint")
        yield KeyFooter()

    def action_close(self) -> None:
        self.dismiss(None)


def continued_lines(words: list[str], width: int) -> str:
    """``words`` joined into lines of at most ``width`` characters where they
    fit, an option kept with its value, each line but the last ending in
    `` \\`` (the shell's line continuation)."""
    groups: list[str] = []
    for word in words:
        if groups and groups[-1].startswith("--") and " " not in groups[-1] and not word.startswith("--"):
            groups[-1] += f" {word}"  # an option and its value stay on one line
        else:
            groups.append(word)
    lines: list[str] = []
    for group in groups:
        if lines and len(lines[-1]) + 1 + len(group) + 2 <= width:
            lines[-1] += f" {group}"
        else:
            lines.append(group if not lines else f"  {group}")
    return " \\\n".join(lines)
