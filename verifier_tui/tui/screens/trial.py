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

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message

from verifier_tui.engine.harbor.phases import DONE, FAILED, NOT_REACHED, STOPPED, UNKNOWN
from verifier_tui.engine.harbor.trial_session import TrialSession
from verifier_tui.engine.model import at_line
from verifier_tui.tui.display import content
from verifier_tui.tui.external import editor_command, verify_line
from verifier_tui.tui.keys import QUIT, footer_when_wide, key, output_keys
from verifier_tui.tui.messages import ReplayFinished, ReplayStarted, RunFailed, VerdictStale, WatchStateChanged
from verifier_tui.tui.real_terminal import run_suspended
from verifier_tui.tui.screens.choose_list import ChooseListScreen
from verifier_tui.tui.screens.keyed import SizedScreen
from verifier_tui.tui.screens.picker import PickerScreen
from verifier_tui.tui.screens.trial_reading import read_again, say_read_again
from verifier_tui.tui.trial_controller import READ_AGAIN, ReplayController
from verifier_tui.tui.trial_display import TrialDisplay, common_base
from verifier_tui.tui.widgets.agreement_panel import NO_REPLAY_KEYS, AgreementPanel, asks_for_stand_in
from verifier_tui.tui.widgets.phase_table import PhaseTable
from verifier_tui.tui.widgets.replay_status import ReplayStatus
from verifier_tui.tui.widgets.root_cause import RootCauseBox, RootCausePanel
from verifier_tui.tui.widgets.trial_header import TrialHeader
from verifier_tui.tui.widgets.trial_side import SidePanel
from verifier_tui.words.text import one_line
from verifier_tui.words.trial import PHASE_MARKS, change_words, no_task_for, replay_column, verdict_words

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual.content import Content
    from textual.dom import DOMNode

    from verifier_tui.engine.harbor.folders import Trial
    from verifier_tui.engine.harbor.trial_session import Replayed

CAPTURED = "__captured__"
EMPTY = "__empty__"
#: The six keys that show one of the trial's Harbor files share one footer entry ("l x a j i m files").
FILES = Binding.Group("files")
#: f and s both choose the stand-in for /app the replay runs on: one entry, "f s stand-in".
#: With c and ? left to the palette and the help below 120 and 110 columns, the footer then fits 100 columns
#: (the smallest the screen draws in) down to its last key, esc, the way back (it was cut after q).
STAND_IN = Binding.Group("stand-in")


class TrialScreen(SizedScreen):
    BINDINGS = [
        key(
            "r",
            "run",
            "replay",
            "Replay now",
            "Run the verifier locally again, in Harbor mode, on the trial's inputs "
            "(a trial Harbor had not ended: its folder read again first)",
        ),
        key(
            "w",
            "toggle_watch",
            "watch",
            "Toggle live reload",
            "Replay on every save to the task (on), or only mark the replay stale until r (off)",
        ),
        key(
            "e",
            "edit",
            "edit",
            "Open the failing line in $EDITOR",
            "The failing line of the side in focus (tab moves between the sandbox and the replay)",
        ),
        key(
            "f",
            "choose_workspace",
            "workspace",
            "Replay on a folder of yours",
            "A stand-in for /app, used instead of the one the trial captured, if it did",
            group=STAND_IN,
        ),
        key(
            "s",
            "choose_case",
            "case",
            "Replay on a case",
            "One of the task's cases as the stand-in for /app",
            group=STAND_IN,
        ),
        # The footer must fit 100 columns down to esc: c is in it from 120 columns and ? from 110
        # (beside every other key, the palette's hint to the right), else in the palette and the help.
        *footer_when_wide(
            key(
                "c",
                "copy_command",
                "copy",
                "Copy the replay's command",
                "The shell command that runs this replay again",
            ),
            120,
        ),
        key(
            "k",
            "keep_case",
            "keep",
            "Keep the replay as a case",
            "The replay's /app (the trial's captured one, or your stand-in) as the task's cases/NAME/workspace, "
            "with an expected.json of its verdict",
            show=False,  # in the palette and the help; the footer is full
        ),
        *output_keys("the replay's"),
        key(
            "l",
            "show_file('trial_log')",
            "trial.log",
            "Show trial.log",
            "Harbor's log of the trial, from its end",
            group=FILES,
        ),
        key(
            "x",
            "show_file('exception')",
            "exception",
            "Show exception.txt",
            "The traceback of the exception Harbor recorded for the trial",
            group=FILES,
        ),
        key(
            "a",
            "show_file('agent')",
            "agent",
            "Show the agent's logs",
            "Every file the agent left in agent/",
            group=FILES,
        ),
        key(
            "j",
            "show_file('trajectory')",
            "trajectory",
            "Show the trajectory",
            "agent/trajectory.json (ATIF) as a conversation: steps, roles, tool calls, observations",
            group=FILES,
        ),
        key(
            "i",
            "show_file('instruction')",
            "instruction",
            "Show the task's instruction",
            "instruction.md of the task the trial ran",
            group=FILES,
        ),
        key(
            "m",
            "show_file('manifest')",
            "manifest",
            "Show the artifacts manifest",
            "artifacts/manifest.json: what Harbor collected from the sandbox, and where it is",
            group=FILES,
        ),
        *footer_when_wide(
            key(
                "?",
                "help",
                "help",
                "Help: keys and marks",
                "Every key of this screen, and what the marks mean",
            ),
            110,  # the first key a newcomer needs: wherever the footer still ends with esc, the way back
        ),
        QUIT,
        # esc names the list beneath, as o names its stream: two bindings, check_action offers
        # the one of :attr:`back_to`. "the trials": a job's overview or a comparison's flipped
        # trials, whichever opened it; "the steps": a multi-step trial's, this step opened from them.
        key("escape", "back('trials')", "trials", "Back to the trials", "the list this trial was opened from"),
        key("escape", "back('steps')", "steps", "Back to the steps", "the trial's steps, this one opened from them"),
    ]
    HELP_TITLE = "verifier-tui: a trial's keys and marks"
    OTHER_KEYS = [
        (
            "tab",
            "Move between the sandbox, the replay and the steps (and the root cause when it is cut)",
            "e opens the failing line of the side in focus; up and down scroll the one in focus",
        )
    ]
    MARKS = [
        (
            "root cause",
            [
                (
                    "✗",
                    "the first thing that went wrong in the trial, in Harbor's order: the environment, "
                    "the agent, the verifier (the verifier's part follows an earlier failure)",
                ),
                ("✓", "nothing went wrong: what Harbor scored"),
            ],
        ),
        (
            "the runner's steps",
            [
                (PHASE_MARKS[DONE], "done"),
                (PHASE_MARKS[FAILED], "failed: explained below the table"),
                (PHASE_MARKS[STOPPED], "still running when the run ended (a timeout)"),
                (PHASE_MARKS[NOT_REACHED], "not reached"),
                (PHASE_MARKS[UNKNOWN], "unknown: the sandbox's output does not tell"),
                ("◀▶", "where the sandbox and the replay part"),
            ],
        ),
        (
            "the agreement",
            [
                ("✓ same", "the replay ended as the sandbox did"),
                ("✗ differ", "it did not: why follows"),
                ("⚠ stale", "live reload is off and the task changed since this replay: r replays"),
            ],
        ),
    ]

    @dataclass
    class TrialReadAgain(Message):
        """r read the trial's folder again: ``trial`` as it is now, for a list of its steps to show."""

        trial: Trial

    def __init__(
        self,
        opened: TrialSession,
        *,
        watch: bool = True,
        poll: bool = False,
        back_to: str | None = None,
        deterministic: bool = False,
    ) -> None:
        super().__init__()
        self.opened = opened
        self.poll = poll
        self.back_to = back_to  # the list esc goes back to ("trials", "steps"), None without one
        walk = opened.walk
        root = walk.location.path or walk.trial.path
        self.fmt = TrialDisplay(root, deterministic, base=common_base(walk.location.path, walk.trial.path))
        self.controller = ReplayController(self, opened, poll=poll, live_reload=watch)
        self.replayed: Replayed | None = None
        self.stream = "stderr"  # the replay's output the local side shows (o toggles)

    # -- layout -------------------------------------------------------------------------

    def compose_panels(self) -> ComposeResult:
        yield TrialHeader(id="trial-header")
        with RootCauseBox(id="root-cause-box"):
            yield RootCausePanel(id="root-cause")
        yield ReplayStatus(self.fmt, id="trial-status")
        # What the lines above leave: the facts capped to a share of it (app.tcss),
        # so the sides keep rows however long the root cause, and the screen never
        # scrolls (no key scrolls it back); tab reaches what the cap cuts.
        with Vertical(id="trial-body"):
            with VerticalScroll(id="trial-facts"):
                yield AgreementPanel(id="agreement")
                yield PhaseTable(id="phases")
            with Horizontal(id="sides"):
                yield SidePanel(id="sandbox-side")
                yield SidePanel(id="local-side")

    def on_mount(self) -> None:
        self.query_one("#agreement").border_title = "Sandbox against the local replay"
        self.query_one("#phases").border_title = "The runner's steps"
        self.query_one("#sandbox-side").border_title = "Sandbox · as Harbor recorded it"
        self._show_stale(None)
        self._show_trial()
        self.query_one("#sandbox-side").focus()
        self.controller.start()

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

    async def on_unmount(self) -> None:
        """Leaving (back to the job, or the app quitting): the watcher and the
        replay in flight end, the scratch folder goes."""
        await self.controller.close()
        self.opened.close()

    # -- replays --------------------------------------------------------------------------

    def on_replay_started(self, message: ReplayStarted) -> None:
        self.query_one(ReplayStatus).set_running(message.trigger)
        self._show_stale(None)  # this replay reads the task as it is now

    def on_verdict_stale(self, message: VerdictStale) -> None:
        self._show_stale(self.fmt.text(change_words(self.opened, message.what, message.change)))

    def _show_stale(self, what: str | None) -> None:
        """Mark the replay out of date (live reload off, ``what`` saved since), or not (None)."""
        self.query_one(ReplayStatus).stale = what
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

    def on_run_failed(self, message: RunFailed) -> None:
        text = f"the replay could not be completed: {message.said}"
        self.query_one(ReplayStatus).state = content((text, "$error"))
        self.notify(text, title="replay failed", severity="error")

    def on_watch_state_changed(self, message: WatchStateChanged) -> None:
        self.query_one(ReplayStatus).watching = (message.state, message.detail)

    # -- keys -------------------------------------------------------------------------------

    def action_run(self) -> None:
        if not self.opened.trial.finished:
            self._read_again()
            return
        replayed = self.replayed
        if self.controller.live is None and replayed is not None and replayed.local is None:
            # Nothing runs (no task, no stand-in for /app), and the screen would not move: r looked
            # dead. Said, as the task screen's r says it has no verifier, with what gives a replay.
            skipped = replayed.skipped
            why = NO_REPLAY_KEYS if asks_for_stand_in(skipped) else self.fmt.words(skipped or "")
            self.notify(f"r: nothing to replay: {why}", severity="warning")
            return
        self.controller.request("r key")

    def action_toggle_watch(self) -> None:
        on = not self.controller.live_reload
        self.controller.set_live_reload(on)
        # With nothing to replay yet (no stand-in for /app), the choice holds for the replays a
        # stand-in starts: said so, not as if a save replayed now.
        later = "once there is a replay, " if self.controller.live is None else ""
        if on:
            self.notify(f"live reload on: {later}every save to the task replays")
        else:
            self.notify(f"live reload off: {later}a save marks the replay stale, r replays")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """esc goes back to the list beneath only when there is one, named as it is; c and o
        need a replay to copy or show (the footer, the palette and the help
        offer them only then)."""
        if action == "back":
            return parameters[0] == self.back_to
        if action in ("copy_command", "show_output", "keep_case"):
            replayed = self.replayed is not None and self.replayed.local is not None
            return replayed and (action != "show_output" or parameters[0] != self.stream)
        return super().check_action(action, parameters)

    @work(name="keep the replay as a case", group="keep", exit_on_error=False)
    async def action_keep_case(self) -> None:
        """The replay kept as a case of the trial's task (as ``run TRIAL --save-case NAME``)."""
        from verifier_tui.tui.screens.case_name import keep_run

        local, session = self.replayed.local if self.replayed else None, self.opened.session
        if local is None or session is None:
            return  # not offered without a replay
        status = self.query_one(ReplayStatus)

        def say(line: str) -> None:
            status.state = content((line, "$warning"))

        said, kept = await keep_run(self, "this replay", local, session.task, self.fmt.path, say)
        if said:
            status.state = content((said, "$success" if kept else "$error"))

    def action_show_output(self, stream: str) -> None:
        replayed = self.replayed
        if replayed is None or replayed.local is None:
            return
        self.stream = stream
        self.refresh_bindings()  # o now names the other stream
        self.query_one("#local-side", SidePanel).show_local(self.opened, replayed, self.fmt, self.stream)

    def action_copy_command(self) -> None:
        from verifier_tui.engine.harbor.replay import command_lacks_overlay, job_env_not_in, templates_not_in
        from verifier_tui.tui.screens.command import CommandScreen
        from verifier_tui.words.run import command_words

        local = self.replayed.local if self.replayed is not None else None
        if local is None or not local.command:
            self.notify("no replay to copy yet", severity="warning")
            return
        words = command_words(local.command, self.fmt.cwd)  # it runs where the user started the tool
        self.app.copy_to_clipboard(" ".join(words))
        notes = []
        cases = self.opened.session.task.cases if self.opened.session is not None else []
        if local.inputs.workspace is None and local.inputs.case is None and cases:
            # An empty /app (s): `run TASK` has no word for it, and without a workspace it takes a case.
            notes.append(
                f"It is not run on the replay's empty /app: without --workspace, run takes the task's first "
                f"case, {one_line(cases[0].name)}. Add --workspace DIR, DIR an empty folder of yours."
            )
        overlay = command_lacks_overlay(self.opened.plan, local.command)
        if overlay is not None:
            # The trial's step, which task.toml no longer lists: run TASK has no --step for it. Its verifier
            # may still be the step's own (--verifier names it), so what it lacks is the overlay, not the file.
            notes.append(
                f"It runs without {one_line(overlay)} laid over tests/ (the helpers and data in /tests are "
                "tests/'s), where the replay laid it over as Harbor does for the trial's step: task.toml no "
                "longer lists that step, so run TASK takes no --step for it. Not the same run."
            )
        # `run TASK` reads the task's own env; the job's only the replay had, but for those its --env carries.
        jobs = job_env_not_in(self.opened.plan, local.command)
        if jobs:
            notes.append(
                f"The job's environment from the trial's config.json is not in it ({one_line(', '.join(jobs))}): "
                "add --env NAME=VALUE for each, as the replay had it."
            )
        # And it fills the task.toml's ${VAR} from the user's environment with its --env over it (a job's
        # variable added as --env too), where the replay took the template's default or ran without it.
        templates = templates_not_in(self.opened.plan, local.command)
        by_env = self.opened.plan.env_templates_by_env
        other = [name for name in templates if name not in by_env]
        if other:
            notes.append(
                f"It fills the task.toml's templates ({one_line(', '.join(other))}) from your environment and its "
                "--env words (a job variable's too, once added), where the replay took their default or ran without "
                "them: add --env NAME=VALUE for each as the replay had it, or it is not the same run."
            )
        # A template the replay filled from --env VAR: the command's --env VAR fills it alike, but VAR reaches the
        # verifier itself, which the replay held back.
        filled = sorted(name for name in templates if name in by_env)
        if filled:
            given = sorted({by_env[name] for name in filled})
            notes.append(
                f"It passes {one_line(', '.join(given))} to the verifier as well, which the replay held back, "
                f"having only filled {one_line(', '.join(filled))} from it (as the command's --env does too): "
                "not the same run."
            )
        alone = self.replayed.runner_alone if self.replayed is not None else None
        if alone is not None:
            # The replay's verdict is the task's test.sh's (as Harbor runs it), which run TASK cannot run;
            # the command is the runner's alone, which ended otherwise here. run TRIAL replays both.
            who = "the task" if self.opened.options.runner == "task" else "verifier-tui"
            again, lacking = self.opened.replay_command()
            replays = (
                f"{' '.join(command_words(again, self.fmt.cwd))} replays the trial as shown"
                if lacking is None
                else f"{' '.join(command_words(again, self.fmt.cwd))} replays the trial, but not on "
                f"{one_line(lacking)}, which it has no option for"
            )
            notes.append(
                f"It runs {who}'s runner alone, which ended otherwise here: {one_line(alone.ended)}. The verdict "
                f"shown is the task's test.sh's, run as the sandbox ran it, which run TASK cannot run; why they part: "
                f"{one_line(alone.why)}. Not the same run: {replays}."
            )
        self.app.push_screen(CommandScreen(words, "\n".join(notes) or None))

    def action_show_file(self, key: str) -> None:
        from verifier_tui.engine.harbor.trial_files import file_view
        from verifier_tui.tui.screens.trial_file import TrialFileScreen

        try:
            view = file_view(self.opened.walk, key)
        except Exception as exc:  # noqa: BLE001 - a boundary: shown, never a crash
            self.notify(f"cannot show it: {type(exc).__name__}: {exc}", severity="error")
            return
        self.app.push_screen(TrialFileScreen(view, self.fmt))

    def action_back(self, _to: str) -> None:
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
                self.notify("no failing line, and no verifier to open", severity="warning")
                return
            location = (verifier, verify_line(verifier))
        path, line = location
        where = at_line(self.fmt.path(path), line)
        command = editor_command(path, line)
        if command is None:
            self.notify(f"set $EDITOR (or $VISUAL) to open {where} from here", severity="warning")
            return
        self.controller.pause()
        try:
            if not run_suspended(self.app, command, banner=f"the editor: {where}"):
                self.notify(
                    f"the editor needs the real terminal, and this app cannot suspend here: open {where} yourself",
                    title="cannot suspend",
                    severity="warning",
                )
        finally:
            self.controller.resume()

    # -- stand-ins for /app ---------------------------------------------------------------------

    async def _replay_on(self, *, workspace: Path | None = None, case: str | None = None, empty: bool = False) -> None:
        """Replay on another workspace (or case, or the trial's own)."""
        await self._renew(
            lambda: self.opened.choose_stand_in(workspace=workspace, case=case, empty=empty), "stand-in chosen"
        )

    async def _renew(self, change: Callable[[], None], trigger: str) -> None:
        """``change`` made to the trial opened, which gives it a new session: a new controller, and a replay."""
        live_reload = self.controller.live_reload
        await self.controller.close()
        try:
            change()
        finally:
            self.controller = ReplayController(self, self.opened, poll=self.poll, live_reload=live_reload)
        self._show_trial()
        self.controller.start(trigger)

    @work(name="read the trial again", group="read-again", exclusive=True, exit_on_error=False)
    async def _read_again(self) -> None:
        """r on a trial Harbor had not ended when it was read."""
        trial = read_again(self, self.opened.trial)
        if trial is None:  # the screen keeps what it showed
            return
        await self._renew(lambda: self.opened.read_again(trial), READ_AGAIN)
        say_read_again(self, trial)
        self.post_message(self.TrialReadAgain(trial))

    @work(name="choose a workspace", group="choose", exit_on_error=False)
    async def action_choose_workspace(self) -> None:
        walk = self.opened.walk
        if walk.location.path is None:
            # A folder stands in for /app of a task: without one, a folder chosen would replay nothing
            # (and nothing would say so), as s has no cases to offer.
            self.notify(
                no_task_for("there is nothing to replay on a folder"),
                severity="warning",
            )
            return
        session = self.opened.session
        # The box starts at the folder the replay is on (the trial's /app, a stand-in, a case's), as the
        # task's screen starts at its workspace: enter keeps it. Else (it is gone: the trial folder moved)
        # the task's folder. The tree browses from the folder holding the task and the job, whatever the
        # replay is on: the user's folders and the task's cases, never a folder that may be gone.
        current = session.workspace if session is not None else None
        start = current if current is not None and current.is_dir() else walk.location.path
        path = await self.dialog(
            PickerScreen(
                "Replay on this folder (a stand-in for the sandbox's /app)",
                common_base(walk.location.path, walk.trial.path),
                start,
                folders=True,
                base=self.fmt.cwd,
            )
        )
        if path is None:
            return
        if path == walk.workspace.path:
            # The /app the trial captured: replayed as the trial captured it (as s's "the trial's own
            # /app" does), not as a stand-in for itself.
            await self._replay_on()
        else:
            await self._replay_on(workspace=path)

    @work(name="choose a case", group="choose", exit_on_error=False)
    async def action_choose_case(self) -> None:
        task_dir = self.opened.walk.location.path
        if task_dir is None:
            self.notify(
                no_task_for("it has no cases to offer"),
                severity="warning",
            )
            return
        from verifier_tui.engine.task.discovery import DiscoveryError, resolve

        try:
            cases = resolve(task_dir).cases
        except (DiscoveryError, OSError) as exc:
            self.notify(f"cannot read the task's cases: {exc}", severity="warning")
            return
        options: list[tuple[str, Content | str]] = [(case.name, f"case {case.name}") for case in cases]
        options.append((EMPTY, "an empty /app (what an agent that did nothing leaves)"))
        if self.opened.walk.workspace.path is not None:
            options.insert(0, (CAPTURED, "the trial's own /app (what it captured)"))
        current = EMPTY if self.opened.empty_stand_in else self.opened.stand_in[1]
        key = await self.dialog(
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
