"""The main screen: cases on the left, the resolution on top, the verdict and
stderr side by side below, the run history bottom left.

Keys live here (not on the app), so they are inactive while a chooser is open.
The screen is handed the session and the display; it starts its runs through
its own :class:`~verifier_tui.tui.run_controller.RunController`, whose
messages it shows.
Each chooser is one flow: a worker that pushes the chooser, awaits the choice
and applies it (what a chooser offers is built in
:mod:`~verifier_tui.tui.chooser_options`). Every action that can fail says why
on screen; none raises.

Over 500 lines on purpose: the keys, then one action (and, for a chooser,
one flow) per key of the one screen that has the keys, each a few lines.
The widgets, the chooser options and the runs
(:mod:`~verifier_tui.tui.run_controller`) live in their own modules; what
remains here is what each key does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.reactive import var

from verifier_tui.engine.failing import Failing
from verifier_tui.engine.invocation import leased_cpus
from verifier_tui.engine.model import RunResult, at_line
from verifier_tui.engine.record import replace
from verifier_tui.engine.session import SelectionError
from verifier_tui.engine.task.discovery import DiscoveryError, no_verifier_help, no_verifier_message
from verifier_tui.engine.task.kinds import no_runner_words
from verifier_tui.engine.task.steps import no_steps
from verifier_tui.engine.to_the_end import to_the_end
from verifier_tui.tui.chooser_options import (
    NO_CASE,
    NO_STEP,
    OTHER_FILE,
    case_options,
    default_task_data_for,
    editor_start,
    response_options,
    step_options,
    task_data_options,
    task_row_options,
    verifier_options,
)
from verifier_tui.tui.external import editor_command, failing_of, not_opened, nothing_to_debug, pdb_command, verify_line
from verifier_tui.tui.keys import QUIT, footer_when_wide, key, output_keys
from verifier_tui.tui.messages import (
    CasesOutdated,
    ChoicesChanged,
    ExplainReady,
    RunFailed,
    RunFinished,
    RunNotPossible,
    RunStarted,
    VerdictStale,
    WatchStateChanged,
)
from verifier_tui.tui.real_terminal import run_suspended
from verifier_tui.tui.run_controller import RunController
from verifier_tui.tui.screens.case_name import keep_run
from verifier_tui.tui.screens.choose_list import ChooseListScreen
from verifier_tui.tui.screens.command import CommandScreen
from verifier_tui.tui.screens.coverage import CoverageScreen
from verifier_tui.tui.screens.keyed import SizedScreen
from verifier_tui.tui.screens.picker import PickerScreen
from verifier_tui.tui.screens.response_editor import ResponseEditorScreen
from verifier_tui.tui.widgets.cases_list import CasesList
from verifier_tui.tui.widgets.choices_panel import ChoicesPanel
from verifier_tui.tui.widgets.header_line import HeaderLine
from verifier_tui.tui.widgets.history_list import HistoryList, summary_text, without_output
from verifier_tui.tui.widgets.output_panel import OutputPanel
from verifier_tui.tui.widgets.resolution_panel import WAITING, ResolutionPanel
from verifier_tui.tui.widgets.reward_panel import RewardPanel
from verifier_tui.tui.widgets.status_line import StatusLine
from verifier_tui.words.run import LEGEND, both_modes_lines, command_words, mode_text, step_words
from verifier_tui.words.text import one_line

if TYPE_CHECKING:
    from verifier_tui.engine.model import ResponseSource
    from verifier_tui.engine.readback import Explanation
    from verifier_tui.engine.session import Session
    from verifier_tui.tui.display import Display

#: A refused choice (a file that is not a verifier, a folder that vanished) is
#: one of these; it becomes a message and the choice stays as it was.
REFUSED = (SelectionError, DiscoveryError, OSError)

#: The five choosers share one footer entry ("s v f p t choose"): each key is
#: also shown next to what it changes in the header.
CHOOSE = Binding.Group("choose")
#: How many times b runs both modes again when files it reads were saved while they ran.
_B_AGAIN_AFTER_SAVES = 3
#: m (toggle the mode) and b (run in both modes) share one entry, "m b mode":
#: the footer must fit 100 columns.
MODE = Binding.Group("mode")
#: a (run all cases once) and A (every case on each save) share "a A all".
ALL = Binding.Group("all")
#: The flows (their workers' names) whose chooser, open, follows what it lists (:meth:`open_dialog`):
#: the case chooser (s) follows the cases as the list does, the step chooser (S) task.toml's steps.
CHOOSE_CASE, CHOOSE_STEP = "choose a case", "choose a step"
#: k, g and R are left out of the footer, which must fit 100 columns (they are in the palette and
#: the help, R in the header too), but for a screen this wide, where the footer holds them all.
WIDE = 140


#: The keys d leaves on while it stages its run: those that only show (what else changed the
#: choices under the banner d prints, or, as b, cancelled d).
_WHILE_STAGING = frozenset({"help", "show_output", "copy_command", "latest"})


class MainScreen(SizedScreen):
    BINDINGS = [
        key("r", "run", "run", "Run now", "Run the verifier on the current choices"),
        key("w", "toggle_watch", "watch", "Toggle live reload", "Re-run on every save (on) or only on r (off)"),
        key("m", "toggle_mode", "mode", "Toggle mode", f"{mode_text('harbor')} or {mode_text('server')}", group=MODE),
        key(
            "b",
            "both_modes",
            "both modes",
            "Run in both modes",
            f"{mode_text('server')} and {mode_text('harbor')}: does the verifier work under each?",
            group=MODE,
        ),
        key("a", "run_all", "all", "Run all cases", "Run every case; each shows its verdict in the list", group=ALL),
        key(
            "A",
            "toggle_every_case",
            "every case",
            "Toggle every case on save",
            "Each save (and r) runs every case, not only the chosen one; the cases list shows each verdict",
            group=ALL,
        ),
        *footer_when_wide(
            key(
                "k",
                "keep_case",
                "keep",
                "Keep this run as a case",
                "Copy its workspace, response and task data into cases/NAME/, with an expected.json of its verdict",
            ),
            WIDE,
        ),
        *footer_when_wide(
            key(
                "g",
                "coverage",
                "coverage",
                "Coverage of the verifier",
                "Its source and its helpers', each line marked by the cases that reached it; every case runs",
            ),
            WIDE,
        ),
        key("s", "choose_case", "case", "Choose case", "Pick one of the task's cases", group=CHOOSE),
        key("v", "choose_verifier", "verifier", "Choose verifier", "Pick the verifier file to run", group=CHOOSE),
        key(
            "f",
            "choose_workspace",
            "workspace",
            "Choose workspace",
            "Pick any folder as the workspace (/app)",
            group=CHOOSE,
        ),
        key(
            "p",
            "choose_response",
            "response",
            "Choose response",
            "A file, none (Harbor mode), or typed in an editor",
            group=CHOOSE,
        ),
        key("t", "choose_task_data", "task data", "Choose task data", "A JSON file passed as task_data", group=CHOOSE),
        # A multi-step task's step (--step NAME on the command line): with the other choosers, in the
        # header next to the step (as R), in the footer too where it is wide enough (at 100 columns
        # "s v f p t S choose" would cut the footer's last key).
        *footer_when_wide(
            key(
                "S",
                "choose_step",
                "step",
                "Choose step",
                "One step of the multi-step task, run as Harbor verifies it (its own tests over tests/), or none",
                group=CHOOSE,
            ),
            110,  # "s v f p t S choose": the footer still ends with q quit
        ),
        # S on a task without steps: offered nowhere, but said why it does nothing (as R).
        Binding("S", "no_steps", show=False),
        key(
            "e", "edit", "edit", "Open failing line in $EDITOR", "Open the traceback's failing line (suspends the app)"
        ),
        key(
            "d",
            "debug",
            "pdb",
            "Re-run under pdb",
            "Post-mortem pdb in the real terminal (suspends the app); a run with no frame to stop in is said here",
        ),
        key("c", "copy_command", "copy", "Copy reproduce command", "The shell command that reproduces this run"),
        *output_keys("the run's"),
        # the footer must fit 100 columns (with R it was cut before q quit); R is in the header
        # next to the runner it toggles, as s v f p t next to what they choose, and in the palette
        *footer_when_wide(
            key(
                "R",
                "toggle_runner",
                "runner",
                "Toggle runner",
                "verifier-tui's runner, or the task's own tests/.ng/run_verifier.py (what the sandbox runs)",
            ),
            WIDE,
        ),
        # R on a task without a runner of its own: offered nowhere, but said
        # why it does nothing when pressed (no tooltip: not in the palette or help).
        Binding("R", "no_own_runner", show=False),
        *footer_when_wide(
            key(
                "?",
                "help",
                "help",
                "Help: keys and marks",
                "Every key, and what the marks in the cases list and the history mean",
            ),
            110,  # the first key a newcomer needs: in the footer wherever it fits, S too
        ),
        QUIT,
        key(
            "escape",
            "latest",
            "latest run",
            "Back to the latest run",
            "after picking a run in the history",
            show=False,
        ),
    ]
    HELP_TITLE = "verifier-tui: keys and marks"
    MARKS = LEGEND
    # The lists' own keys: without them, esc "after picking a run in the history" named no way there.
    OTHER_KEYS = [
        (
            "tab",
            "Move between the cases, the resolution, the history, the reward and the output",
            "enter on a case runs it, on a run in the history shows it (esc: back to the latest); "
            "up and down move in the one in focus",
        )
    ]

    # What the cases list shows besides the session's cases: set, it is redrawn.
    running_case: var[str | None] = var(None, init=False)
    """The case of the run in flight (marked ▶)."""
    last_by_case: var[dict[str, RunResult]] = var(dict, init=False)
    """Each case's last run of its own inputs (its mark), without its output."""
    outdated_through = var(0, init=False)
    """Runs up to this number read the task's shared files before their last change."""
    # Set, the keys are offered again: esc goes back to the latest only from a
    # run picked in the history (always_update: no run compared field by field).
    viewing: var[RunResult | None] = var(None, init=False, always_update=True, bindings=True)
    """A run picked in the history (None: showing the latest)."""

    def __init__(self, session: Session, fmt: Display, *, watch: bool = True, poll: bool = False) -> None:
        super().__init__()
        self.session = session
        self.fmt = fmt
        """Paths, durations and verifier text as shown (deterministic for snapshots)."""
        self.controller = RunController(session, self, live_reload=watch, poll=poll)
        self._b_turn = asyncio.Lock()
        self._staging: asyncio.Future[Any] | None = None
        """d's run being staged in a thread: only keys that change nothing meanwhile, awaited before the
        app removes the scratch folder it stages into."""
        self.latest: RunResult | None = None
        """The newest finished run of the current choices."""
        self.explain: Explanation | None = None
        self._last_response: ResponseSource | None = None  # the response put aside by "toggle mode"
        self.coverage_view: CoverageScreen | None = None
        """The coverage view while it is open: each run's coverage goes to it."""
        self.stream = "stderr"
        """The stream the output panel shows (o shows the other)."""
        self._response_edited = False
        """The typed response changed while live reload was off: w on runs it."""
        self._json_draft: tuple[ResponseSource | None, str] | None = None
        """JSON the editor was closed on before it parsed, and the response then
        in use (the runs kept it): the JSON editor opens on the draft while that
        response is still the one it would open."""

    @property
    def shown_result(self) -> RunResult | None:
        """The run on screen: one picked in the history, else the latest."""
        return self.viewing or self.latest

    # -- layout -----------------------------------------------------------------------

    def compose_panels(self) -> ComposeResult:
        fmt = self.fmt
        yield HeaderLine(id="header")
        yield ChoicesPanel(id="choices")
        yield StatusLine(fmt, id="status")
        with Horizontal(id="top"):
            yield CasesList(id="cases", classes="sidebar")
            yield ResolutionPanel(id="resolution")
        with Horizontal(id="bottom"):
            yield HistoryList(id="history", classes="sidebar")
            yield RewardPanel(id="reward")
            yield OutputPanel(fmt, id="output")

    def on_mount(self) -> None:
        self.query_one("#cases").border_title = "Cases · s"
        self.query_one("#resolution").border_title = "Resolution"
        self.query_one("#history").border_title = "History"
        self.query_one("#reward").border_title = "Reward"
        self.refresh_choices()
        self.query_one(CasesList).focus()
        session = self.session
        if session.verifier is None:
            self._no_verifier()
        notices = session.notices()
        if notices:
            self.query_one(ResolutionPanel).show_message(WAITING, notices)
        self.controller.start()

    async def on_unmount(self) -> None:
        if self._staging is not None:
            await asyncio.wait([self._staging])
        await self.controller.close()

    # -- refreshing from the session ---------------------------------------------------------

    def refresh_choices(self) -> None:
        session, fmt = self.session, self.fmt
        self._refresh_header()
        self.query_one(ChoicesPanel).show(session, fmt, self.explain)
        self._refresh_cases()
        step_chooser = self.open_dialog(CHOOSE_STEP)
        if isinstance(step_chooser, ChooseListScreen):
            # Open while task.toml changed, it offers the steps as read now (as the case chooser its cases):
            # a step dropped is no longer chosen, only to be refused.
            step_chooser.offer(step_options(session, fmt)[0])

    def _refresh_header(self) -> None:
        """The header, its limits as the run on screen got them (a network its helper failed to give)."""
        self.query_one(HeaderLine).show(self.session, self.fmt, self.explain, self.shown_result)

    def _refresh_cases(self) -> None:
        session = self.session
        self.query_one(CasesList).show(
            session.task.cases,
            session.case.name if session.case else None,
            self.last_by_case,
            self.running_case,
            self.outdated_through,
            session.setup,
        )
        case_chooser = self.open_dialog(CHOOSE_CASE)
        if isinstance(case_chooser, ChooseListScreen):
            # Open over the list, it offers what the list shows: a case folder renamed on disk is offered
            # under its new name, not under the old one that names no case.
            case_chooser.offer(case_options(session, self.last_by_case, self.outdated_through)[0])

    watch_running_case = watch_last_by_case = watch_outdated_through = _refresh_cases

    def on_choices_changed(self, _message: ChoicesChanged) -> None:
        self.refresh_choices()
        self.query_one(ResolutionPanel).notices_now(self.session.notices())

    def _no_verifier(self) -> None:
        session = self.session
        # words(): the message is Advice (a multi-step task's says S), which an f-string would read as its flags
        then = no_verifier_help(session.task, self.controller.live_reload)
        help_text = self.fmt.words(no_verifier_message(session.task)) + (f"\n\n{self.fmt.text(then)}" if then else "")
        self.query_one(ResolutionPanel).show_message(help_text, session.notices(), style="bold $warning")
        self.query_one(RewardPanel).show_message("Nothing to run yet: this task has no verifier.", "$warning")
        # The verifier deleted while watched: the last run's output is no longer this state's, as
        # the reward panel's verdict is not (the history keeps it).
        self.query_one(OutputPanel).show_text("")
        self.query_one(StatusLine).set_note("no verifier found (see the resolution panel)")

    # -- run messages ------------------------------------------------------------------------

    def on_run_started(self, message: RunStarted) -> None:
        self.running_case = message.case
        self.query_one(StatusLine).set_running(message.case, message.trigger)
        if message.primary:
            # This run reads the files as they are now, for the verdict shown. Another case's run (a)
            # is none of its: a save after the current case's run started left that verdict stale.
            self._show_stale(None)
            self._response_edited = False
            self.query_one(OutputPanel).start_streaming(self.controller.output)
            if self.latest is None:
                self.query_one(RewardPanel).show_message("Running: the verdict appears here when the run ends.")

    def on_explain_ready(self, message: ExplainReady) -> None:
        if message.run_id != self.controller.current_run_id:
            return  # a superseded run's
        self.explain = message.explain
        self._show_explain(message.explain)
        self.refresh_choices()

    def _show_explain(self, explain: Explanation | None, mode: str | None = None) -> None:
        panel = self.query_one(ResolutionPanel)
        notices = self.session.notices()
        self.fmt.learn_interpreter(explain)
        if explain is None:
            panel.show_message("The runner wrote no explanation for this run (see stderr).", notices)
        else:
            panel.show(explain, mode or self.session.mode, self.fmt, notices)

    def on_run_finished(self, message: RunFinished) -> None:
        result = message.result
        self._record(result, message.cut)
        if self.controller.running_case is None:
            self.running_case = None
        if self.coverage_view is not None and (
            not self.session.task.cases or self.session.ran_case_inputs(result.inputs)
        ):
            self.coverage_view.take(result)  # the cases' own runs, as test --coverage counts, not the choices' run
        if message.primary:
            self.latest = result
            self.viewing = None
            self._show_result(result)
            self.query_one(StatusLine).set_finished(result)
        else:
            self.query_one(StatusLine).set_finished(None)

    def _record(self, result: RunResult, cut: tuple[int, ...] = ()) -> None:
        """A run that ended: in the history (with ``cut``, the runs superseded before it), and as its case's mark."""
        case = result.inputs.case
        own = self.session.ran_case_inputs(result.inputs)  # False without a case
        if case is not None and own:
            # A case's mark says how its own inputs go: a run with another
            # workspace or a typed response leaves it alone. Only the status
            # and the reward are needed there: a case list of whole results
            # would grow with what every case prints.
            self.last_by_case[case] = without_output(result)
            self.mutate_reactive(MainScreen.last_by_case)
        changed = case is not None and not own
        self.query_one(HistoryList).add(result, self._says_step(result), cut, changed)

    def _says_step(self, result: RunResult) -> bool:
        """Whether what shows ``result`` says its step: a multi-step task's runs do, as the header does."""
        return result.inputs.step is not None or bool(self.session.task.config.steps)

    def _show_result(self, result: RunResult, banner: str | None = None) -> None:
        fmt = self.fmt
        fmt.learn_interpreter(result.explain)
        self.query_one(RewardPanel).show(result, fmt, banner)
        self.query_one(OutputPanel).show(result)
        if result.explain is not None:
            self.explain = result.explain
            self._show_explain(result.explain, result.mode)
            self.refresh_choices()  # the header too
            return
        self._refresh_header()
        if result.start_error:
            self.query_one(ResolutionPanel).show_message(
                f"The runner could not start: {fmt.words(result.start_error)}", style="bold $error"
            )

    def on_run_not_possible(self, message: RunNotPossible) -> None:
        self.running_case = None
        self.query_one(StatusLine).set_finished(None)  # no run in flight: the note says why
        if self.controller.live.stale is None and not self._response_edited:
            self._show_stale(None)  # r found no verifier in the files as they are now: that is what is shown
        if self.session.verifier is None:
            self._no_verifier()
        else:
            self.query_one(StatusLine).set_note(message.reason)
            self.query_one(RewardPanel).show_message(message.reason, "$warning")
        if self.coverage_view is not None:  # the screen on top, where r or the save asked for the runs
            self.coverage_view.not_possible(self.fmt.words(message.reason))

    def on_run_failed(self, message: RunFailed) -> None:
        text = f"the run could not be completed: {message.said}"
        self.running_case = None
        self.query_one(StatusLine).set_finished(None)
        self.query_one(StatusLine).set_note(text, "$error")
        self.query_one(RewardPanel).show_message(text, "bold $error")
        self.notify(text, title="run failed", severity="error")

    def on_cases_outdated(self, message: CasesOutdated) -> None:
        self.outdated_through = max(self.outdated_through, message.through)
        if self.coverage_view is not None:
            self.coverage_view.outdated(self.outdated_through)

    def on_verdict_stale(self, message: VerdictStale) -> None:
        self._show_stale(message.what)

    def _show_stale(self, what: str | None) -> None:
        """Mark the verdict out of date (``what`` changed since its run,
        live reload being off), or not (None)."""
        self.query_one(StatusLine).stale = what
        self.query_one("#reward").border_title = "Reward" if what is None else "Reward · stale"

    def on_watch_state_changed(self, message: WatchStateChanged) -> None:
        self.query_one(StatusLine).watching = (message.state, message.detail)

    # -- lists ----------------------------------------------------------------------------------

    @on(CasesList.CaseChosen)
    def _case_chosen(self, message: CasesList.CaseChosen) -> None:
        if self._staging is not None:  # the list's enter and clicks pass no check_action: held here too
            self.notify("d is staging its run: the case stays as it is until pdb starts", severity="warning")
            self._refresh_cases()
            return
        self._select_case(message.name)

    @on(HistoryList.RunChosen)
    def _history_chosen(self, message: HistoryList.RunChosen) -> None:
        result = message.result
        if message.latest and result is self.latest:
            self.action_latest()
            return
        self.viewing = result
        case = one_line(result.inputs.case) if result.inputs.case else "no case"  # as the history names it, on its line
        # Its step too: the header says the step chosen now, which may not be this run's.
        step = f" · {step_words(result.inputs.step)}" if self._says_step(result) else ""
        banner = f" run #{result.sequence} from the history · {case}{step} · esc: back to the latest "
        if message.full:
            self._show_result(result, banner)
            return
        self.query_one(RewardPanel).show_message(
            f"{banner}\n\n{summary_text(result, self.fmt.duration(result.duration_s))}"
        )
        self.query_one(OutputPanel).show_text(f"(the output of run #{result.sequence} is no longer kept)")
        self._refresh_header()

    def action_latest(self) -> None:
        if self.viewing is None or self.latest is None:
            return
        self.viewing = None
        self._show_result(self.latest)
        self.query_one(HistoryList).highlighted = 0

    # -- changing the choices ----------------------------------------------------------------

    def _changed(self, trigger: str) -> None:
        """The choices changed: show them, watch what they name, and run."""
        self.refresh_choices()
        if self.session.came_back_changed():  # a step or verifier chosen again, its files edited unwatched
            self.post_message(CasesOutdated(self.session.sequence))
        self.controller.live.restart_watch_if_needed()  # new choices, new targets (also with live reload off)
        self.controller.request(trigger)

    def _choose(self, trigger: str, choose: Callable[..., None], *args: Any) -> bool:
        """Apply a choice through a session method, then run; a refused choice
        becomes a message and changes nothing."""
        problem = self._refusal(choose, *args)
        if problem is not None:
            self.notify(problem, title="cannot use that", severity="warning")
            return False
        self._changed(trigger)
        return True

    def _refusal(self, choose: Callable[..., None], *args: Any) -> str | None:
        """The choice applied through a session method; why it was refused, in words (None: it was not)."""
        try:
            choose(*args)
        except REFUSED as exc:
            return self._refused_words(exc)
        return None

    def _refused_words(self, exc: Exception) -> str:
        """Why a choice (or a run) was refused, in this screen's words: its
        Advice, which str() would word as the command line, a flag this user never typed."""
        said = exc.args[0] if isinstance(exc, (SelectionError, DiscoveryError)) and exc.args else str(exc)
        return self.fmt.words(said)  # paths as the rest of the screen shows them, not absolute

    async def _pick(self, trigger: str, choose: Callable[[Path], None], picker: PickerScreen) -> None:
        """A path chosen in ``picker`` and applied there: a refused one is said
        in the picker, which stays open with what was typed."""
        failed: list[Exception] = []

        def apply(path: Path) -> str | None:
            try:
                return self._refusal(choose, path)
            except Exception as exc:  # noqa: BLE001 - raised again below, in the worker, which says it
                failed.append(exc)
                return None

        picker.apply = apply
        if await self.dialog(picker) is not None:
            if failed:
                raise failed[0]
            self._changed(trigger)

    def _select_case(self, name: str | None) -> None:
        session = self.session
        select = session.select_case if name is None else session.select_case_named
        if self._choose("case chosen", select, name):
            self._last_response = None

    @work(name=CHOOSE_CASE, group="choose", exit_on_error=False)
    async def action_choose_case(self) -> None:
        options, current = case_options(self.session, self.last_by_case, self.outdated_through)
        key = await self.dialog(ChooseListScreen("Choose a case", options, current))
        if key is not None:
            self._select_case(None if key == NO_CASE else key)

    @work(name="choose a verifier", group="choose", exit_on_error=False)
    async def action_choose_verifier(self) -> None:
        session = self.session
        current = str(session.verifier) if session.verifier else None
        key = await self.dialog(
            ChooseListScreen("Choose a verifier", verifier_options(session, self.fmt), current), more=True
        )
        if key == OTHER_FILE:
            title = "Choose a verifier (.py with a top-level verify)"
            picker = PickerScreen(title, session.task.root, suffixes=(".py",), base=self.fmt.cwd)
            await self._pick("verifier chosen", session.choose_verifier, picker)
        elif key is not None:
            self._choose("verifier chosen", session.choose_verifier, Path(key))

    @work(name=CHOOSE_STEP, group="choose", exit_on_error=False)
    async def action_choose_step(self) -> None:
        options, current = step_options(self.session, self.fmt)
        key = await self.dialog(ChooseListScreen("Choose a step (run as Harbor verifies it)", options, current))
        if key is None:
            return
        # The cases list marks a run of another step `?` by the step the run recorded (RunResult.setup): a
        # run of the step chosen back is current again.
        self._choose("step chosen", self.session.choose_step, None if key == NO_STEP else key)

    def action_no_steps(self) -> None:
        # as --step says it: a task Harbor refuses (a task.toml that is not TOML) is not verified "as one"
        self.query_one(StatusLine).set_note(f"S: {self.fmt.words(no_steps(self.session.task))}")

    @work(name="choose the workspace", group="choose", exit_on_error=False)
    async def action_choose_workspace(self) -> None:
        session = self.session
        title = "Choose the workspace folder (the sandbox's /app)"
        start = session.workspace or session.task.root
        picker = PickerScreen(title, session.task.root, start, folders=True, base=self.fmt.cwd)
        await self._pick("workspace chosen", session.choose_workspace, picker)

    @work(name="choose a response", group="choose", exit_on_error=False)
    async def action_choose_response(self) -> None:
        session = self.session
        case_response = session.case.response if session.case else None
        key = await self.dialog(
            ChooseListScreen("Where the response comes from", response_options(session, self.fmt)), more=True
        )
        if key == "case" and case_response is not None:
            self._choose("response chosen", session.choose_response, case_response.path)
        elif key == "file":
            start = session.case.folder if session.case else session.task.root
            picker = PickerScreen("Choose a response file", session.task.root, start, base=self.fmt.cwd)
            await self._pick("response chosen", session.choose_response, picker)
        elif key in ("text", "json"):
            self._open_response_editor(key)
        elif key == "none":
            self._choose("response: none", session.choose_response, None)

    def _open_response_editor(self, kind: str) -> None:
        """The editor runs what is typed after each pause (and once as it
        opens), JSON only once it parses; it stays open, over the top half, until esc."""
        session = self.session
        current = session.response or self._last_response
        # what the runs do meanwhile, said only of the chosen response (Harbor mode stages none)
        text, kind, why_not = editor_start(current, kind, chosen=session.response is current)
        draft = self._json_draft
        if kind == "json" and draft is not None and draft[0] is current:
            text, why_not = draft[1], None  # typed after the last JSON that parsed: not lost on esc
        if why_not is not None:  # only a file the editor cannot open has a why-not: what the runs do meanwhile, said
            self.notify(self.fmt.words(why_not), severity="warning")

        def edited(new_text: str, new_kind: str) -> None:
            session.set_typed_response(new_text, new_kind)
            if self.controller.live_reload:
                self._changed("response edited")
            else:  # as a save with live reload off: the verdict is stale, r (or w) runs it
                self._response_edited = True
                self.refresh_choices()
                self._show_stale("the typed response changed")

        def closed(unparsed: str | None) -> None:
            self._json_draft = None if unparsed is None else (session.response, unparsed)

        editor = ResponseEditorScreen(text, kind, edited, run_at_once=why_not is None)
        self.app.push_screen(editor, callback=closed)

    @work(name="choose task data", group="choose", exit_on_error=False)
    async def action_choose_task_data(self) -> None:
        session = self.session
        default = default_task_data_for(session)
        key = await self.dialog(ChooseListScreen("Task data", task_data_options(session, self.fmt)), more=True)
        case_row = session.case.task_id if session.case else None
        if key == "default" and default is not None:
            self._choose("task data chosen", session.choose_task_data, default, case_row)
        elif key == "rows":
            options, current = task_row_options(session)
            row = await self.dialog(ChooseListScreen("A row of tasks.jsonl as task data", options, current))
            if row is not None:
                self._choose("task row chosen", session.choose_task_data, None, row)
        elif key == "file":
            picker = PickerScreen(
                "Choose task data (a JSON object)", session.task.root, suffixes=(".json",), base=self.fmt.cwd
            )
            await self._pick("task data chosen", session.choose_task_data, picker)
        elif key == "none":
            self._choose("task data: none", session.choose_task_data, None)

    # -- running --------------------------------------------------------------------------------

    def action_run(self) -> None:
        self.controller.request("r key")

    def action_coverage(self) -> None:
        """The coverage view; while it is open every run asks for coverage
        and runs every case, so each line's mark counts them all."""
        if self.session.verifier is None:
            self.notify("no verifier to measure", severity="warning")
            return
        cases = len(self.session.task.cases) or 1
        self.coverage_view = CoverageScreen(
            self.fmt, self.session.verifier, cases, self.open_in_editor, self._every_case
        )
        self._coverage(True)
        self.app.push_screen(self.coverage_view, callback=lambda _closed: self._coverage(False))
        self._every_case()

    def _every_case(self) -> None:
        self.controller.request_all() if self.session.task.cases else self.controller.request("coverage")

    def _coverage(self, on: bool) -> None:
        self.session.options = replace(self.session.options, coverage=on)
        if not on:
            self.coverage_view = None
            self.controller.run_all_pending = False  # the view's round: a save after it runs what it would have

    def action_run_all(self) -> None:
        if not self.session.task.cases:
            self.notify(
                "this task has no cases (cases/<name>/workspace): r runs the current choices",
                severity="warning",
            )
            return
        self.controller.request_all()

    def action_toggle_every_case(self) -> None:
        controller = self.controller
        on = not controller.every_case
        if on and not self.session.task.cases:
            self.query_one(StatusLine).set_note("every case on save: this task has no cases (cases/<name>/workspace)")
            return
        controller.every_case = on
        self.query_one(StatusLine).every_case = on
        if on:
            controller.request("every case on save")  # the list shows every case's verdict from now on
        else:
            self.notify("every case on save off: a save runs the chosen case")

    # A dialog flow (KeyedScreen.DIALOG_GROUPS): the keys read before its dialog is up are the dialog's.
    @work(name="keep the run as a case", group="keep", exit_on_error=False)
    async def action_keep_case(self) -> None:
        """The run on screen kept as a case of the task (as ``run --save-case NAME``)."""
        status, session = self.query_one(StatusLine), self.session
        result = self.shown_result
        if result is None:
            status.set_note(f"nothing has run yet to keep as a case: {self._until_a_run()}")
            return
        said, kept = await keep_run(
            self, f"run #{result.sequence}", result, session.task, self.fmt.path, status.set_note
        )
        if kept:
            try:
                session.reload_task()  # the new case in the list, whether or not a watcher saw it
            except REFUSED as exc:
                said, kept = f"{said}; the task could not be re-read: {exc}", False
            self.refresh_choices()
        if said:
            status.set_note(said, "$success" if kept else "$error")

    def action_toggle_watch(self) -> None:
        on = not self.controller.live_reload
        self.controller.set_live_reload(on)
        if on and self._response_edited and self.controller.live.targets is not None:
            self.controller.request("response edited")  # (with no watcher yet, turning it on runs once anyway)
        if self.session.verifier is None:
            self._no_verifier()  # its help says what runs a verifier written, which w just changed
        if on:
            self.notify("live reload on: every relevant save re-runs")
        else:
            self.notify("live reload off: r runs; a save marks the verdict stale")

    async def _wait_for_the_run_in_flight(self) -> bool:
        """Until no run is in flight or pending (b and d run their own after it); whether there was
        one. Not paused meanwhile: a run stuck in a loop would hold r and every save until its
        timeout. r cuts it short as ever, and the wait goes on for the run that took its place."""
        scheduler = self.controller.live.scheduler
        if not (scheduler.busy or scheduler.pending):
            return False
        self.notify("waiting for the run in flight to end…")
        await scheduler.drain()
        return True

    @work(name="run in both modes", group="outside", exclusive=True, exit_on_error=False)
    async def action_both_modes(self) -> None:
        """The current choices with the response and without: both
        runs go to the history, the verdict area shows the one of the current
        mode under a line saying how each mode went."""
        # A b pressed again ends this one's runs (one b at a time) and waits for it to end: the runs it
        # cut have their numbers alone, and it pauses saves only once the b it ended has resumed them.
        async with self._b_turn:
            await self._run_both_modes()

    async def _run_both_modes(self) -> None:
        from verifier_tui.engine.both_modes import arun_both_modes

        session, controller = self.session, self.controller
        live = controller.live
        if session.verifier is None:
            self.notify("no verifier to run", severity="warning")
            return
        await self._wait_for_the_run_in_flight()
        if not live.read_unwatched():
            return
        controller.pause()  # saves wait until both runs are done
        status = self.query_one(StatusLine)
        try:
            controller.drop_held()  # a save held before b (a task read again): b's first runs read it
            # b's runs are not the scheduler's, which says ▶ running for its own:
            # said here, or the key looks like it did nothing until both end.
            status.set_running(session.case.name if session.case else None, "both modes")
            stale, saves = live.stale, live.saves_held
            live.reading_now()  # they read the files as they are now, as a run of the scheduler's does
            both = await controller.counted(arun_both_modes(session, last=session.mode))
            # A save while they ran (held, or, live reload off, marking the verdict stale) may have
            # come between the two runs, which then compared two states of the files as two modes
            # ("scores otherwise in each"): both run again over the files as saved. Bounded: a run
            # that writes the files it reads (the copy sandbox) would go round for ever; its save
            # then runs on resume (or stays stale).
            for _ in range(_B_AGAIN_AFTER_SAVES):
                if live.saves_held == saves and live.stale is None:
                    # b's last runs read every save: that is their run, unless a key's request or
                    # every case's run (A, a) is held with them, which runs on resume.
                    controller.drop_held()
                    break
                saves = live.saves_held
                live.reading_now()
                # The pair set aside had their numbers: said cut short on the next row, as a superseded run is.
                controller.cut_short(*(result.sequence for result in both.ran))
                both = await controller.counted(arun_both_modes(session, last=session.mode))
        except REFUSED as exc:
            if live.stale is None:
                live.stale = stale  # nothing ran over what made it stale
            self.notify(f"cannot run both modes: {self._refused_words(exc)}", severity="error")
            return
        finally:
            status.set_finished(None)  # the outcome of b's runs, if any, is set below
            controller.resume()
        # The current mode's run went last: it is the latest run, in the
        # history's top row, the status line and the reward panel alike.
        runs = both.ran
        for result in runs:
            self._record(result, controller.take_cut())
        shown = runs[-1]
        self.latest, self.viewing = shown, None
        self.query_one(StatusLine).set_finished(shown)
        if live.stale is None:
            self._show_stale(None)  # b's runs read every save so far
        # Under the line, what run --both-modes says of each mode (its notes, contract problems,
        # expected.json) and the finding, in this screen's words.
        said = both_modes_lines(session, both, self.fmt.path, self.fmt.words)
        self._show_result(shown, "\n".join([f" both modes: {both.line()} ", *said]))

    def action_toggle_mode(self) -> None:
        session = self.session
        if session.response is not None:
            self._last_response = session.response
            self._choose("mode: Harbor", session.choose_response, None)
            return
        candidate = self._last_response or (session.case.response if session.case else None)
        if candidate is None:
            self.notify("no response to run with yet: choose or type one")
            self.action_choose_response()
        elif candidate.path is None:
            self._choose("mode: server", session.set_typed_response, candidate.text or "", candidate.kind)
        else:
            self._choose("mode: server", session.choose_response, candidate.path)

    def action_show_output(self, stream: str) -> None:
        self.stream = stream
        self.query_one(OutputPanel).show_stream(stream)
        self.refresh_bindings()  # o now names the other stream

    def action_no_own_runner(self) -> None:
        why = no_runner_words(self.session.task.tests_dir, self.session.step)
        self.query_one(StatusLine).set_note(f"R: this task ships no runner of its own ({why}); verifier-tui's runs it")

    def action_toggle_runner(self) -> None:
        """verifier-tui's runner (the default) or the one the task ships."""
        session = self.session
        other = "ours" if session.runner == "task" else "task"
        trigger = "runner: the task's own" if other == "task" else "runner: verifier-tui's"
        self._choose(trigger, session.choose_runner, other)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Nothing while a chooser is opening; o is offered as the stream not
        on screen; R (the runner) only for a task that ships its own (in the
        footer, the palette and the help at once), else R says why it does nothing;
        esc (back to the latest run) enabled only on a run picked in the history."""
        if self.opening():
            return False  # a dialog on its way: keys typed meanwhile (s s s) stacked more of them
        if self._staging is not None and action not in _WHILE_STAGING:
            return False  # a choice made meanwhile would not be the one d's banner names; b would drop d
        if action == "show_output":
            return parameters[0] != self.stream
        if action in ("toggle_runner", "no_own_runner"):
            return (self.session.task.own_runner is not None) is (action == "toggle_runner")
        if action in ("choose_step", "no_steps"):
            return bool(self.session.task.config.steps) is (action == "choose_step")
        if action == "latest":
            # On the latest run (or none yet) esc has nowhere to go back to: disabled (None), so the palette
            # leaves it out while the help still says what it is for.
            return True if self.viewing is not None else None
        return super().check_action(action, parameters)  # S's twin in the footer, when wide

    # -- leaving the app: the editor, pdb; copying the command ---------------------------------------

    def _until_a_run(self) -> str:
        """What gives a key with no run on screen one: r, or, while the first
        run is going, its end (r would only start it over)."""
        return "the first run is still going" if self.controller.live.scheduler.busy else "r runs"

    def action_copy_command(self) -> None:
        result = self.shown_result
        if result is None:
            self.notify(f"nothing has run yet: {self._until_a_run()}", severity="warning")
            return
        words = command_words(result.command, self.fmt.cwd)  # it runs where the user started the tool
        self.app.copy_to_clipboard(" ".join(words))
        note = None
        if result.inputs.response is not None and result.inputs.response.path is None:
            note = "The typed response is not in it: save it to a file and pass --response FILE."
        self.app.push_screen(CommandScreen(words, note))

    def action_edit(self) -> None:
        session = self.session
        result = self.shown_result
        failing = failing_of(result) if result is not None else Failing()
        location = failing.location
        if location is None and failing.refused is not None:  # a file the run named that is none of the task's
            path, line = failing.refused
            workspace = result.inputs.workspace if result is not None else None
            in_workspace = workspace is not None and path.is_relative_to(workspace)
            self.notify(not_opened(at_line(self.fmt.path(path), line), workspace=in_workspace), severity="warning")
            return
        if location is None:
            if session.verifier is None:
                self.notify("no verifier to open", severity="warning")
                return
            location = (session.verifier, verify_line(session.verifier))
        self.open_in_editor(*location)

    def open_in_editor(self, path: Path, line: int | None) -> None:
        """``path`` at ``line`` (None: from its top) in the user's editor, re-runs paused meanwhile."""
        command = editor_command(path, line)
        where = at_line(self.fmt.path(path), line)
        if command is None:
            self.notify(f"set $EDITOR (or $VISUAL) to open {where} from here", severity="warning")
            return
        controller = self.controller
        controller.pause()
        try:
            self._outside(command, where, what="the editor")
        finally:
            controller.resume()

    def action_debug(self) -> None:
        """The verdict on screen, when it is up to date (no run on its way,
        no file saved since), tells a run with nothing to stop in without
        leaving the screen."""
        session = self.session
        if session.verifier is None:
            self.notify("no verifier to debug", severity="warning")
            return
        why = self._nothing_to_debug_now()
        if why is not None:
            self.notify(why)
            return
        self._debug()

    def _nothing_to_debug_now(self) -> str | None:
        """Why the latest run gives pdb nothing to stop in, when it is up to
        date (no run on its way, no file saved since); None: pdb may."""
        scheduler = self.controller.live.scheduler
        current = not (scheduler.busy or scheduler.pending or self.query_one(StatusLine).stale)
        return nothing_to_debug(self.latest) if current and self.latest is not None else None

    @work(name="debug under pdb", group="outside", exclusive=True, exit_on_error=False)
    async def _debug(self) -> None:
        session = self.session
        controller = self.controller
        waited = await self._wait_for_the_run_in_flight()
        controller.pause()  # from now on, saves wait for the return from pdb
        try:
            if waited:
                # The run waited for is judged as d judges the one on screen: one
                # that passed is said here, not after leaving the screen for pdb.
                why = self._nothing_to_debug_now()
                if why is not None:
                    self.notify(why)
                    return
            status = self.query_one(StatusLine)
            status.set_note("d: staging the run for pdb…", "$text-muted")
            # In a thread: staging probes the interpreter and may try an overlay in a throwaway view,
            # each allowed 10 s, which froze the screen on the event loop. To its end even when d is
            # cancelled: the stage it claims is never left half made.
            self._staging = asyncio.ensure_future(asyncio.to_thread(session.prepare, session.spec()))
            self.refresh_bindings()
            try:
                prepared = await to_the_end(self._staging)
            except REFUSED as exc:
                self.notify(f"cannot debug: {self._refused_words(exc)}", severity="error")
                return
            finally:
                self._staging = None
                self.refresh_bindings()
                status.note = None
            if prepared.start_error or prepared.shim_refusal:
                self.notify(
                    f"cannot debug: {self.fmt.words(prepared.start_error or prepared.shim_refusal or '')}",
                    severity="error",
                )
                return
            stage = prepared.stage
            seen = stage.seen  # the sandbox's own paths in the view, the stage's in the copy
            # Under --step, /tests is tests/ with the step's own tests laid over it (Harbor uploads
            # them last): "a copy of tests/" alone hid where the step's verifier and helpers came from.
            overlay = prepared.spec.extra_tests
            inputs = prepared.spec.inputs  # what was staged: the choices as d was pressed
            over = f" with {overlay} laid over it (the step's files win)" if overlay is not None else ""
            banner = (
                f"verify under pdb ({inputs.case or 'no case'}), in the staged sandbox "
                f"layout:\n  {seen(stage.tests_dir)} is a copy of {prepared.spec.task.tests_dir}{over}\n  "
                f"{seen(stage.app_dir)} is the workspace {inputs.workspace or '(empty)'}, as the run sees it"
            )
            with leased_cpus(prepared) as cpus:
                self._outside(
                    pdb_command(prepared.argv),
                    "the run under pdb",
                    what="pdb",
                    banner=banner,
                    cwd=prepared.cwd,
                    env=prepared.env,
                    wait_for_enter=True,
                    attach=prepared.attached,
                    cpus=cpus,
                )
            from verifier_tui.engine.sandbox.containment import after_copy_run

            after_copy_run(prepared.guard)
        finally:
            controller.resume()

    def _outside(
        self,
        command: list[str],
        where: str,
        what: str,
        banner: str | None = None,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        wait_for_enter: bool = False,
        attach: Any = None,
        cpus: tuple[int, ...] = (),
    ) -> None:
        """Run ``command`` in the real terminal (the caller pauses re-runs);
        where suspending is impossible, say so and how to do it."""
        if not run_suspended(
            self.app,
            command,
            banner=f"{what}: {banner or where}",
            cwd=cwd,
            env=env,
            wait_for_enter=wait_for_enter,
            attach=attach,
            cpus=cpus,
        ):
            self.notify(
                f"{what} needs the real terminal, and this app cannot suspend here: open {where} yourself"
                + (" (c copies the command that reproduces the run)" if what == "pdb" else ""),
                title="cannot suspend",
                severity="warning",
            )
        self.refresh_choices()
