"""The Textual app: owns the session, the display policy and the run
controller; the main screen does the showing."""

from __future__ import annotations

import asyncio
from functools import partial
from pathlib import Path
from typing import Iterable

from textual.app import App, SystemCommand
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from verifier_tui.engine.model import RunResult
from verifier_tui.engine.session import Session
from verifier_tui.engine.watch.changes import Change
from verifier_tui.tui.display import Display
from verifier_tui.tui.messages import WatchStateChanged
from verifier_tui.tui.run_controller import RunController
from verifier_tui.tui.screens.main import KEYS, MainScreen


class VerifierApp(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "verifier-tui"

    def __init__(self, session: Session, *, watch: bool = True, poll: bool = False, deterministic: bool = False) -> None:
        super().__init__()
        self.session = session
        self.fmt = Display(session.task.root, deterministic)
        """Paths, durations and verifier text as shown (deterministic for snapshots)."""
        self.watching = watch
        self.poll = poll
        self.controller = RunController(self)
        self.main = MainScreen()
        self.finished: list[RunResult | None] = []
        """Every run that ended on screen, in order (None: nothing could run). A test seam."""
        self._finished_event = asyncio.Event()
        self.last_copied: str | None = None
        self.last_suspend_refused: str | None = None
        self.notices: list[str] = []
        """Every notification's text, in order (a test seam: run_test hides toasts)."""

    def on_mount(self) -> None:
        self.push_screen(self.main)
        self._exit_on_hangup()

    def _exit_on_hangup(self) -> None:
        """SIGTERM, and SIGHUP when the terminal closes, quit as q does: the run
        in flight ends its whole process group (it lives in its own session,
        so the terminal's hangup never reaches it) and the scratch folder goes.
        Python's default would die at once and leave both behind."""
        import signal

        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGHUP):
            try:
                if signal.getsignal(signum) is signal.SIG_DFL:
                    loop.add_signal_handler(signum, self.exit)
            except (ValueError, RuntimeError, NotImplementedError):
                pass  # not the main thread, or no signals here: nothing to take over

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
        self.session.close()

    # -- what the screen and the controller call -----------------------------------------

    def choices_changed(self, restart_watch: bool = False) -> None:
        self.main.refresh_choices()
        if restart_watch:
            self.controller.restart_watching_if_needed()

    def toggle_watch(self) -> None:
        self.watching = not self.watching
        if self.watching:
            self.controller.start_watching()
            self.notify("live reload on: every relevant save re-runs", markup=False)
        else:
            self.controller.stop_watching()
            self.main.post_message(WatchStateChanged("off"))
            self.notify("live reload off: r runs", markup=False)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The one place a worker's error lands: shown, never a crash."""
        if event.state is not WorkerState.ERROR:
            return
        error = event.worker.error
        if event.worker.group == "watch":
            self.main.post_message(WatchStateChanged("failed", f"{type(error).__name__}: {error}"))
        else:
            self.notify(f"{event.worker.name}: {type(error).__name__}: {error}", title="something went wrong",
                        severity="error", markup=False)

    # -- command palette -----------------------------------------------------------------------

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        if isinstance(screen, MainScreen):
            for key, action, _word, title, help_text in KEYS:
                if action != "app.quit":  # Textual's own Quit is listed already
                    yield SystemCommand(f"{title}  ({key})", help_text, partial(screen.run_action, action))
        yield from super().get_system_commands(screen)

    def notify(self, message: str, **kwargs) -> None:  # type: ignore[override]
        self.notices.append(message)
        super().notify(message, **kwargs)

    # -- test seams --------------------------------------------------------------------------------

    def record_result(self, result: RunResult | None) -> None:
        self.finished.append(result)
        self._finished_event.set()

    async def wait_for_runs(self, count: int, timeout: float = 20.0) -> RunResult | None:
        """Wait until ``count`` runs have ended on screen; the last one's result.
        (``workers.wait_for_complete`` would wait for the watcher forever.)"""

        async def enough() -> None:
            while len(self.finished) < count:
                self._finished_event.clear()
                await self._finished_event.wait()

        await asyncio.wait_for(enough(), timeout)
        return self.finished[count - 1]

    def request_rerun(self, paths: Iterable[Path | str]) -> None:
        """Act as if the watcher reported ``paths`` changed."""
        found = frozenset(Path(p).absolute() for p in paths)
        change = Change(
            paths=found,
            deleted=frozenset(p for p in found if not p.exists()),
            names=tuple(sorted((p, p.name) for p in found)),
        )
        self.controller.on_change(change)
