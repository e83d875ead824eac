"""Shown instead of the panels when the terminal is smaller than the layout needs."""

from __future__ import annotations

from textual.widgets import Static

from verifier_tui.tui.display import content

#: The smallest terminal every panel fits in (the README promises 100x30).
MIN_WIDTH = 100
MIN_HEIGHT = 30


class TooSmall(Static):
    def show_size(self, width: int, height: int, back: str | None = None, dialog: bool = False) -> None:
        """``back``: what esc goes back to, when the screen offers it (a trial
        opened from a job): q alone, the one key named, ended the whole app.
        ``dialog``: a dialog is open over the screen, and has the keys."""
        keys = f"esc {back[:1].lower()}{back[1:]} · q quits" if back else "q quits"
        if dialog:
            keys = "esc closes the dialog first"
        self.set_class(dialog, "-under-dialog")
        self.update(
            content(
                (f"terminal too small (need {MIN_WIDTH}x{MIN_HEIGHT})\n\n", "bold $warning"),
                f"This one is {width}x{height}. Make the window larger, or the font smaller;\n"
                "verifier-tui keeps running and watching meanwhile.\n\n",
                (keys, "$text-muted"),
            )
        )
