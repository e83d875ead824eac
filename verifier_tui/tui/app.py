"""The Textual app: owns the session and its main screen, which shows the
runs its controller starts; the app only starts and ends them."""

from __future__ import annotations

from textual.screen import Screen

from verifier_tui.engine.session import Session
from verifier_tui.tui.base import BaseApp
from verifier_tui.tui.display import Display
from verifier_tui.tui.screens.main import MainScreen


class VerifierApp(BaseApp):
    def __init__(
        self, session: Session, *, watch: bool = True, poll: bool = False, deterministic: bool = False
    ) -> None:
        super().__init__()
        self.session = session
        session.keep_warm()  # saves and keys re-run: the next run waits, started, for them
        self.main = MainScreen(session, Display(session.task.root, deterministic), watch=watch, poll=poll)
        self.controller = self.main.controller

    def get_default_screen(self) -> Screen[None]:
        """The main screen is the app's first, not pushed over an empty one
        (which was laid out, and resized, for nothing at every start)."""
        return self.main

    async def on_unmount(self) -> None:
        """After the main screen, which ended its runs and its watcher."""
        await self.session.warm.settle()  # a run being started ahead stages into the scratch folder
        self.session.close()
