"""A trial's screen: what the sandbox did beside what the same verifier does
locally, step by step.

Top to bottom: the header (trial, task, agent, verifier mode; the task said
plainly when it changed or was not found), the root cause (the first thing
that went wrong in the whole trial), a status line, the agreement
(where the eye lands first: same or differ, where the two part, why), the
runner's phases side by side with the first wrong step explained, then the
two sides in full (verdict, reward files, output). The sandbox side never
changes; the replay runs again on every save to the task (live reload).
Every Harbor file of the trial is one key away (``l x a j i m``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.worker import Worker, WorkerState

from verifier_tui.engine.harbor.trial_session import TrialSession
from verifier_tui.tui.base import SizedScreen, show_worker_error
from verifier_tui.tui.external import editor_command, verify_line
from verifier_tui.tui.messages import VerdictStale, WatchStateChanged
from verifier_tui.tui.real_terminal import run_suspended
from verifier_tui.tui.screens.choose_list import ChooseListScreen
from verifier_tui.tui.screens.folder_picker import FolderPickerScreen
from verifier_tui.tui.trial_controller import ReplayController
from verifier_tui.tui.trial_display import TrialDisplay, common_base
from verifier_tui.tui.trial_keys import trial_bindings
from verifier_tui.tui.trial_messages import ReplayFailed, ReplayFinished, ReplayStarted
from verifier_tui.tui.widgets.agreement_panel import AgreementPanel
from verifier_tui.tui.widgets.key_footer import KeyFooter
from verifier_tui.tui.widgets.phase_table import PhaseTable
from verifier_tui.tui.widgets.replay_status import ReplayStatus
from verifier_tui.tui.widgets.root_cause import RootCausePanel
from verifier_tui.tui.widgets.too_small import TooSmall
from verifier_tui.tui.widgets.trial_header import TrialHeader
from verifier_tui.tui.widgets.trial_side import SidePanel
from verifier_tui.words.trial import replay_column, verdict_words

if TYPE_CHECKING:
    from textual.content import Content
    from textual.dom import DOMNode

    from verifier_tui.engine.harbor.trial_session import Replayed

CAPTURED = "__captured__"
EMPTY = "__empty__"


class TrialScreen(SizedScreen):
    BINDINGS = [*trial_bindings(), Binding("escape", "back", "trials")]

    def __init__(
        self,
        opened: TrialSession,
        *,
        watch: bool = True,
        poll: bool = False,
        from_job: bool = False,
        deterministic: bool = False,
    ) -> None:
        super().__init__()
        self.opened = opened
        self.watching = watch
        self.poll = poll
        self.from_job = from_job
        walk = opened.walk
        root = walk.location.path or walk.trial.path
        self.fmt = TrialDisplay(root, deterministic, base=common_base(walk.location.path, walk.trial.path))
        self.controller = ReplayController(self, opened, poll=poll, live_reload=watch)
        self.replayed: Replayed | None = None
        self.stream = "stderr"  # the replay's output the local side shows (o toggles)
        self._shut = False

    # -- layout -------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield TrialHeader(id="trial-header")
        yield RootCausePanel(id="root-cause")
        yield ReplayStatus(id="trial-status")
        yield AgreementPanel(id="agreement")
        yield PhaseTable(id="phases")
        with Horizontal(id="sides"):
            yield SidePanel(id="sandbox-side")
            yield SidePanel(id="local-side")
        yield TooSmall(id="too-small")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one("#agreement").border_title = "Sandbox against the local replay"
        self.query_one("#phases").border_title = "The runner's steps"
        self.query_one("#sandbox-side").border_title = "Sandbox · as Harbor recorded it"
        self._show_stale(None)
        self._show_trial()
        self.query_one("#sandbox-side").focus()
        self.controller.request("start")
        if self.watching:
            self.controller.start_watching()
        else:
            self.query_one(ReplayStatus).set_watch("off")

    def _show_trial(self) -> None:
        """Everything that does not wait for the replay."""
        opened, fmt = self.opened, self.fmt
        self.query_one(TrialHeader).show(opened.walk, fmt)
        self.query_one(RootCausePanel).show(opened.walk.cause, fmt)
        self.query_one("#sandbox-side", SidePanel).show_sandbox(opened, fmt)
        sandbox = opened.walk.sandbox
        self.query_one(PhaseTable).show(sandbox.phases, None, None, fmt, "replaying…")
        self.query_one(AgreementPanel).show_waiting(sandbox.verdict)
        self.query_one("#local-side", SidePanel).show_message("replaying…")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state is WorkerState.ERROR:
            error = event.worker.error
            if event.worker.group == "watch":
                self.query_one(ReplayStatus).set_watch("failed", f"{type(error).__name__}: {error}")
            else:
                show_worker_error(self, event.worker)

    async def on_unmount(self) -> None:
        await self.shutdown()

    async def shutdown(self) -> None:
        """Stop watching, end the replay in flight, remove the scratch folder
        (once: the screen leaving and the app quitting both ask)."""
        if self._shut:
            return
        self._shut = True
        await self.controller.close()
        self.opened.close()

    # -- replays --------------------------------------------------------------------------

    def on_replay_started(self, message: ReplayStarted) -> None:
        self.query_one(ReplayStatus).set_running(message.trigger)
        self._show_stale(None)  # this replay reads the task as it is now

    def on_verdict_stale(self, message: VerdictStale) -> None:
        self._show_stale(self.fmt.text(message.what))

    def _show_stale(self, what: str | None) -> None:
        """Mark the replay out of date (live reload off, ``what`` saved since), or not (None)."""
        self.query_one(ReplayStatus).set_stale(what)
        self.query_one("#local-side").border_title = "Local replay · Harbor mode" + (" · stale" if what else "")

    def on_replay_finished(self, message: ReplayFinished) -> None:
        replayed = message.replayed
        self.replayed = replayed
        opened, fmt = self.opened, self.fmt
        sandbox = opened.walk.sandbox
        if replayed.local is not None:
            fmt.learn_interpreter(replayed.local.explain)
        self.query_one(TrialHeader).show(opened.walk, fmt)  # the task may have changed since the run
        self.query_one(RootCausePanel).show(replayed.cause, fmt)  # with what the replay adds to it
        self.query_one("#sandbox-side", SidePanel).show_sandbox(opened, fmt)  # the same, with the paths learned
        self.query_one(AgreementPanel).show(replayed, fmt, verdict_words(sandbox.verdict))
        self.query_one(PhaseTable).show(
            sandbox.phases,
            replayed.phases,
            replayed.parting,
            fmt,
            "none yet (the agreement above says why)",
            replay_column(replayed),
        )
        self.query_one("#local-side", SidePanel).show_local(opened, replayed, fmt, self.stream)
        self.query_one(ReplayStatus).set_finished(replayed, message.trigger)
        self.refresh_bindings()  # c and o apply once there is a replay

    def on_replay_failed(self, message: ReplayFailed) -> None:
        error = message.error
        text = f"the replay could not be completed: {type(error).__name__}: {error}"
        self.query_one(ReplayStatus).set_note(text)
        self.notify(text, title="replay failed", severity="error", markup=False)

    def on_watch_state_changed(self, message: WatchStateChanged) -> None:
        self.query_one(ReplayStatus).set_watch(message.state, message.detail)

    # -- keys -------------------------------------------------------------------------------

    def action_run(self) -> None:
        self.controller.request("r key")

    def action_toggle_watch(self) -> None:
        self.watching = not self.watching
        self.controller.set_live_reload(self.watching)
        if self.watching:
            self.notify("live reload on: every save to the task replays", markup=False)
        else:
            self.notify("live reload off: a save marks the replay stale, r replays", markup=False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """esc goes back to the job's list only when there is one; c and o
        need a replay to copy or show."""
        if action == "back":
            return self.from_job
        if action in ("copy_command", "toggle_output"):
            return self.replayed is not None and self.replayed.local is not None
        return True

    def action_toggle_output(self) -> None:
        replayed = self.replayed
        if replayed is None or replayed.local is None:
            return
        self.stream = "stdout" if self.stream == "stderr" else "stderr"
        self.query_one("#local-side", SidePanel).show_local(self.opened, replayed, self.fmt, self.stream)

    def action_copy_command(self) -> None:
        from verifier_tui.tui.screens.command import CommandScreen
        from verifier_tui.words.run import command_words

        local = self.replayed.local if self.replayed is not None else None
        if local is None or not local.command:
            self.notify("no replay to copy yet", severity="warning", markup=False)
            return
        words = command_words(local.command, self.fmt.cwd)  # it runs where the user started the tool
        self.app.copy_to_clipboard(" ".join(words))
        self.app.push_screen(CommandScreen(words))

    def action_show_file(self, key: str) -> None:
        from verifier_tui.engine.harbor.trial_files import file_view
        from verifier_tui.tui.screens.trial_file import TrialFileScreen

        try:
            view = file_view(self.opened.walk, key)
        except Exception as exc:  # noqa: BLE001 - a boundary: shown, never a crash
            self.notify(f"cannot show it: {type(exc).__name__}: {exc}", severity="error", markup=False)
            return
        self.app.push_screen(TrialFileScreen(view, self.fmt))

    def action_help(self) -> None:
        from verifier_tui.tui.screens.help import HelpScreen
        from verifier_tui.tui.screens.trial_help import trial_help

        self.app.push_screen(HelpScreen(trial_help(self.from_job), "verifier-tui: a trial's keys and marks"))

    def action_back(self) -> None:
        if self.from_job:
            self.app.pop_screen()

    def _side_in_focus(self) -> SidePanel | None:
        node: DOMNode | None = self.focused
        while node is not None and not isinstance(node, SidePanel):
            node = node.parent
        return node

    def action_edit(self) -> None:
        side = self._side_in_focus()
        sides = (
            [side]
            if side is not None
            else [self.query_one("#sandbox-side", SidePanel), self.query_one("#local-side", SidePanel)]
        )
        location = next((s.failing for s in sides if s.failing is not None), None)
        if location is None:
            verifier = self.opened.plan.verifier or (self.opened.session.verifier if self.opened.session else None)
            if verifier is None:
                self.notify("no failing line, and no verifier to open", severity="warning", markup=False)
                return
            location = (verifier, verify_line(verifier))
        path, line = location
        where = f"{self.fmt.path(path)}:{line}"
        command = editor_command(path, line)
        if command is None:
            self.notify(f"set $EDITOR (or $VISUAL) to open {where} from here", severity="warning", markup=False)
            return
        self.controller.pause()
        try:
            if not run_suspended(self.app, command, banner=f"the editor: {where}"):
                self.notify(
                    f"the editor needs the real terminal, and this app cannot suspend here: open {where} yourself",
                    title="cannot suspend",
                    severity="warning",
                    markup=False,
                )
        finally:
            self.controller.resume()

    # -- stand-ins for /app ---------------------------------------------------------------------

    async def _replay_on(self, *, workspace: Path | None = None, case: str | None = None, empty: bool = False) -> None:
        """Replay on another workspace (or case, or the trial's own): a new session, a new controller."""
        await self.controller.close()
        try:
            self.opened.choose_stand_in(workspace=workspace, case=case, empty=empty)
        finally:
            self.controller = ReplayController(self, self.opened, poll=self.poll, live_reload=self.watching)
        self._show_trial()
        self.controller.request("stand-in chosen")
        if self.watching:
            self.controller.start_watching()

    @work(name="choose a workspace", group="choose", exit_on_error=False)
    async def action_choose_workspace(self) -> None:
        walk = self.opened.walk
        start = self.opened.stand_in[0] or walk.location.path or walk.trial.path
        path = await self.app.push_screen_wait(
            FolderPickerScreen(
                "Replay on this folder (a stand-in for the sandbox's /app)", start, common_base(start, walk.trial.path)
            )
        )
        if path is not None:
            await self._replay_on(workspace=path)

    @work(name="choose a case", group="choose", exit_on_error=False)
    async def action_choose_case(self) -> None:
        task_dir = self.opened.walk.location.path
        if task_dir is None:
            self.notify(
                "the task was not found, so it has no cases to offer: start with --task DIR",
                severity="warning",
                markup=False,
            )
            return
        from verifier_tui.engine.task.discovery import DiscoveryError, resolve

        try:
            cases = resolve(task_dir).cases
        except (DiscoveryError, OSError) as exc:
            self.notify(f"cannot read the task's cases: {exc}", severity="warning", markup=False)
            return
        options: list[tuple[str, Content | str]] = [(case.name, f"case {case.name}") for case in cases]
        options.append((EMPTY, "an empty /app (what an agent that did nothing leaves)"))
        if self.opened.walk.workspace.path is not None:
            options.insert(0, (CAPTURED, "the trial's own /app (what it captured)"))
        current = EMPTY if self.opened.empty_stand_in else self.opened.stand_in[1]
        key = await self.app.push_screen_wait(
            ChooseListScreen(
                "Replay on a case of the task",
                options,
                current,
                hint="enter chooses · esc cancels (then f chooses any folder)",
            )
        )
        if key == CAPTURED:
            await self._replay_on()
        elif key == EMPTY:
            await self._replay_on(empty=True)
        elif key is not None:
            await self._replay_on(case=key)
