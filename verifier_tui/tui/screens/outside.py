"""The main screen's actions that leave the app: open the failing line in the
user's editor and re-run under pdb (both suspend the app; re-runs wait
meanwhile), and copy the command that reproduces the run."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import SuspendNotSupported

from verifier_tui.engine.discovery import DiscoveryError
from verifier_tui.engine.model import RunResult
from verifier_tui.engine.session import SelectionError
from verifier_tui.tui.external import editor_command, failing_location, pdb_command, verify_line

if TYPE_CHECKING:
    from verifier_tui.tui.screens.main import MainScreen

    _Base = MainScreen
else:
    _Base = object


class OutsideActions(_Base):
    """Mixed into :class:`MainScreen`."""

    @property
    def shown_result(self) -> RunResult | None:
        return self.viewing or self.latest

    def action_copy_command(self) -> None:
        result = self.shown_result
        if result is None:
            self.notify("nothing has run yet: r runs", severity="warning", markup=False)
            return
        command = " ".join(result.command)
        self.app.copy_to_clipboard(command)
        note = ""
        if result.response is not None and result.response.path is None:
            note = "\n(the typed response is not in it: save it to a file and pass --response FILE)"
        self.vt.last_copied = command
        self.notify(f"{command}{note}", title="copied to the clipboard", markup=False, timeout=8)

    def action_edit(self) -> None:
        session = self.vt.session
        result = self.shown_result
        location = failing_location(result, session.task.root) if result is not None else None
        if location is None:
            if session.verifier is None:
                self.notify("no verifier to open", severity="warning", markup=False)
                return
            location = (session.verifier, verify_line(session.verifier))
        path, line = location
        command = editor_command(path, line)
        where = f"{self.vt.fmt.path(path)}:{line}"
        if command is None:
            self.notify(f"set $EDITOR (or $VISUAL) to open {where} from here", severity="warning", markup=False)
            return
        self._outside(command, where, what="the editor")

    async def action_debug(self) -> None:
        session = self.vt.session
        if session.verifier is None:
            self.notify("no verifier to debug", severity="warning", markup=False)
            return
        controller = self.vt.controller
        controller.pause()
        try:
            if controller.scheduler.busy:
                self.notify("waiting for the run in flight to end…", markup=False)
                await controller.scheduler.drain()
            try:
                prepared = session.prepare(session.spec())
            except (DiscoveryError, SelectionError, OSError) as exc:
                self.notify(f"cannot debug: {exc}", severity="error", markup=False)
                return
            if prepared.start_error:
                self.notify(f"cannot debug: {prepared.start_error}", severity="error", markup=False)
                return
            command = pdb_command(prepared.argv)
            stage = prepared.stage
            where = (f"verify under pdb ({session.case.name if session.case else 'no case'}), in the staged sandbox "
                     f"layout:\n  {stage.tests_dir} is a copy of {session.task.tests_dir}\n  {stage.app_dir} is a "
                     f"copy of the workspace {session.workspace or '(empty)'}")
            self._outside(command, "the run under pdb", what="pdb", cwd=prepared.cwd, env=prepared.env,
                          wait_for_enter=True, paused=True, banner=where)
        finally:
            controller.resume()

    def _outside(self, command: list[str], where: str, what: str, cwd: Path | None = None,
                 env: dict[str, str] | None = None, wait_for_enter: bool = False, paused: bool = False,
                 banner: str | None = None) -> None:
        """Run ``command`` in the real terminal with the app suspended; re-runs
        wait meanwhile. Where suspending is impossible, say so and how to do it."""
        controller = self.vt.controller
        if not paused:
            controller.pause()
        try:
            with self.app.suspend():
                print(f"verifier-tui: {what}: {banner or where}", flush=True)
                try:
                    subprocess.run(command, cwd=cwd, env=env)
                except OSError as exc:
                    print(f"verifier-tui: could not start {shlex.quote(command[0])}: {exc.strerror or exc}")
                    wait_for_enter = True
                if wait_for_enter:
                    try:
                        input("\nverifier-tui: press Enter to return ")
                    except (EOFError, KeyboardInterrupt):
                        pass
        except SuspendNotSupported:
            self.notify(
                f"{what} needs the real terminal, and this app cannot suspend here: open {where} yourself"
                + (" (c copies the command that reproduces the run)" if what == "pdb" else ""),
                title="cannot suspend", severity="warning", markup=False,
            )
            self.vt.last_suspend_refused = what
        finally:
            if not paused:
                controller.resume()
        self.refresh_choices()
