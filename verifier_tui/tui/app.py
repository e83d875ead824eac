"""The Textual app: owns the session, the display policy and the run
controller; the main screen does the showing."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

from textual.app import SystemCommand
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from verifier_tui.engine.session import Session
from verifier_tui.tui.base import BaseApp
from verifier_tui.tui.display import Display
from verifier_tui.tui.keys import KEYS, shown_key
from verifier_tui.tui.messages import WatchStateChanged
from verifier_tui.tui.run_controller import RunController
from verifier_tui.tui.screens.main import MainScreen


class VerifierApp(BaseApp):
    def __init__(
        self, session: Session, *, watch: bool = True, poll: bool = False, deterministic: bool = False
    ) -> None:
        super().__init__()
        self.session = session
        session.keep_warm()  # saves and keys re-run: the next run waits, started, for them
        self.fmt = Display(session.task.root, deterministic)
        """Paths, durations and verifier text as shown (deterministic for snapshots)."""
        self.watching = watch
        self.poll = poll
        self.controller = RunController(self)
        self.main = MainScreen()

    def on_mount(self) -> None:
        self.push_screen(self.main)

    def start(self) -> None:
        """Called by the main screen once it is mounted: the first run, then live reload."""
        self.controller.request("start")
        if self.watching:
            self.controller.start_watching()
        else:
            self.main.post_message(WatchStateChanged("off"))

    async def on_unmount(self) -> None:
        await self.controller.stop_watching_and_wait()
        await self.controller.close()
        await self.session.warm.settle()  # a run being started ahead stages into the scratch folder
        self.session.close()

    # -- what the screen and the controller call -----------------------------------------

    def choices_changed(self, restart_watch: bool = False) -> None:
        self.main.refresh_choices()
        if restart_watch:
            self.controller.restart_watching_if_needed()

    def toggle_watch(self) -> None:
        self.watching = not self.watching
        self.controller.set_live_reload(self.watching)
        if self.watching:
            self.notify("live reload on: every relevant save re-runs", markup=False)
        else:
            self.notify("live reload off: r runs; a save marks the verdict stale", markup=False)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state is WorkerState.ERROR:
            self.show_worker_error(event.worker)

    def show_worker_error(self, worker: Worker) -> None:
        """Where the error of any worker (the app's, or a screen's flow)
        lands: shown, never a crash."""
        error = worker.error
        if worker.group == "watch":
            self.main.post_message(WatchStateChanged("failed", f"{type(error).__name__}: {error}"))
        else:
            self.notify(
                f"{worker.name}: {type(error).__name__}: {error}",
                title="something went wrong",
                severity="error",
                markup=False,
            )

    # -- command palette -----------------------------------------------------------------------

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        if isinstance(screen, MainScreen):
            for key, action, _word, title, help_text in KEYS:
                if action == "toggle_runner" and self.session.task.own_runner is None:
                    continue  # only a task that ships its own runner has another to run
                if action != "app.quit":  # Textual's own Quit is listed already
                    yield SystemCommand(f"{title}  ({shown_key(key)})", help_text, partial(screen.run_action, action))
        yield from super().get_system_commands(screen)
