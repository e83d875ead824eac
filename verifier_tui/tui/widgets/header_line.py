"""The line at the top: task, verifier, case and mode, each with
the key that changes it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.content import Content
from textual.widgets import Static

from verifier_tui.present import mode_text

if TYPE_CHECKING:
    from verifier_tui.engine.session import Session
    from verifier_tui.tui.display import Display

LABEL = "$text-muted"
KEY = "$text-muted italic"
SEP = (" · ", "$text-muted")


class HeaderLine(Static):
    """``task foo · verifier tests/verifier.py v · case good s · Harbor mode (no response) m``."""

    def show(self, session: "Session", fmt: "Display", explain: dict[str, Any] | None) -> None:
        verifier = fmt.in_task(session.verifier) if session.verifier else "none found"
        case = session.case.name if session.case else "none"
        mode_style = "bold $accent" if session.mode == "server" else "bold $primary"
        parts: list[Any] = [
            ("task ", LABEL), (session.task.name, "bold"), SEP,
            ("verifier ", LABEL), (verifier, "bold" if session.verifier else "bold $error"), (" v", KEY), SEP,
            ("case ", LABEL), (case, "bold"), (" s", KEY), SEP,
            (mode_text(session.mode), mode_style), (" m", KEY),
        ]
        self.update(Content.assemble(*parts))
