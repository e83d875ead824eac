"""The main screen: cases on the left, the resolution on top, the verdict and
stderr side by side below, the run history bottom left.

Keys live here (not on the app), so they are inactive while a chooser is open.
Every action that can fail says why on screen; none raises.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.events import Resize
from textual.screen import Screen
from textual.widgets import Footer

from verifier_tui.engine.discovery import DiscoveryError, no_verifier_message
from verifier_tui.engine.model import RunResult
from verifier_tui.engine.session import SelectionError
from verifier_tui.tui.messages import (
    ChoicesChanged,
    ExplainReady,
    RunFailed,
    RunFinished,
    RunNotPossible,
    RunStarted,
    WatchStateChanged,
)
from verifier_tui.tui.screens.choosing import ChoosingActions
from verifier_tui.tui.screens.outside import OutsideActions
from verifier_tui.tui.widgets.cases_list import CasesList
from verifier_tui.tui.widgets.choices_panel import ChoicesPanel
from verifier_tui.tui.widgets.header_line import HeaderLine
from verifier_tui.tui.widgets.history_list import HistoryList
from verifier_tui.tui.widgets.output_panel import OutputPanel
from verifier_tui.tui.widgets.resolution_panel import ResolutionPanel
from verifier_tui.tui.widgets.reward_panel import RewardPanel
from verifier_tui.tui.widgets.status_line import StatusLine
from verifier_tui.tui.widgets.too_small import MIN_HEIGHT, MIN_WIDTH, TooSmall

if TYPE_CHECKING:
    from verifier_tui.tui.app import VerifierApp

#: The five choosers share one footer entry ("s v f p t choose"): each key is
#: also shown next to what it changes in the header.
CHOOSE = Binding.Group("choose")

#: (key, action, footer word, palette title, palette help). One table feeds
#: both the footer and the command palette, so they cannot disagree.
KEYS: list[tuple[str, str, str, str, str]] = [
    ("r", "run", "run", "Run now", "Run the verifier on the current choices"),
    ("w", "toggle_watch", "watch", "Toggle live reload", "Re-run on every save (on) or only on r (off)"),
    ("m", "toggle_mode", "mode", "Toggle mode", "Harbor mode (no response) or environment server (with a response)"),
    ("a", "run_all", "all cases", "Run all cases", "Run every case; each shows its verdict in the list"),
    ("s", "choose_case", "case", "Choose case", "Pick one of the task's cases"),
    ("v", "choose_verifier", "verifier", "Choose verifier", "Pick the verifier file to run"),
    ("f", "choose_workspace", "workspace", "Choose workspace", "Pick any folder as the workspace (/app)"),
    ("p", "choose_response", "response", "Choose response", "A file, none (Harbor mode), or typed in an editor"),
    ("t", "choose_task_data", "task data", "Choose task data", "A JSON file passed as task_data"),
    ("e", "edit", "edit", "Open failing line in $EDITOR", "Open the traceback's failing line (suspends the app)"),
    ("d", "debug", "pdb", "Re-run under pdb", "Post-mortem pdb in the real terminal (suspends the app)"),
    ("c", "copy_command", "copy", "Copy reproduce command", "The shell command that reproduces this run"),
    ("o", "toggle_output", "stdout", "Toggle stdout / stderr", "Show the run's stdout or its stderr"),
    ("q", "app.quit", "quit", "Quit", "Quit verifier-tui"),
]


class MainScreen(ChoosingActions, OutsideActions, Screen[None]):
    BINDINGS = [
        Binding(key, action, word, group=CHOOSE if action.startswith("choose_") else None)
        for key, action, word, _title, _help in KEYS
    ] + [
        Binding("escape", "latest", "latest run", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.latest: RunResult | None = None
        """The newest finished run of the current choices."""
        self.viewing: RunResult | None = None
        """A run picked in the history (None: showing the latest)."""
        self.last_by_case: dict[str, RunResult] = {}
        self.running_case: str | None = None
        self.explain: dict[str, Any] | None = None
        self._last_response = None  # the response put aside by "toggle mode"

    @property
    def vt(self) -> "VerifierApp":
        return self.app  # type: ignore[return-value]

    # -- layout -----------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        fmt = self.vt.fmt
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
        yield TooSmall(id="too-small")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#cases").border_title = "Cases · s"
        self.query_one("#resolution").border_title = "Resolution"
        self.query_one("#history").border_title = "History"
        self.query_one("#reward").border_title = "Reward"
        self.refresh_choices()
        self.query_one(CasesList).focus()
        session = self.vt.session
        if session.verifier is None:
            self._no_verifier()
        notices = session.notices()
        if notices:
            self.query_one(ResolutionPanel).show_message("Resolution appears as soon as the runner starts.", notices)
        self.vt.start()

    def on_resize(self, event: Resize) -> None:
        width, height = event.size
        small = width < MIN_WIDTH or height < MIN_HEIGHT
        self.set_class(small, "-too-small")
        if small:
            self.query_one(TooSmall).show_size(width, height)

    # -- refreshing from the session ---------------------------------------------------------

    def refresh_choices(self) -> None:
        session, fmt = self.vt.session, self.vt.fmt
        self.query_one(HeaderLine).show(session, fmt, self.explain)
        self.query_one(ChoicesPanel).show(session, fmt, self.explain)
        self._refresh_cases()

    def _refresh_cases(self) -> None:
        session = self.vt.session
        self.query_one(CasesList).show(
            session.task.cases, session.case.name if session.case else None, self.last_by_case, self.running_case
        )

    def on_choices_changed(self, _message: ChoicesChanged) -> None:
        self.refresh_choices()

    def _no_verifier(self) -> None:
        session = self.vt.session
        text = no_verifier_message(session.task)
        text = self.vt.fmt.text(text)
        help_text = (f"{text}\n\nWrite one (tests/verifier.py with a top-level def verify(workspace): ...): "
                     "live reload picks it up and runs it. v chooses another file.")
        self.query_one(ResolutionPanel).show_message(help_text, session.notices(), style="bold $warning")
        self.query_one(RewardPanel).show_message("Nothing to run yet: this task has no verifier.", "$warning")
        self.query_one(StatusLine).set_note("no verifier found (see the resolution panel)")

    # -- run messages ------------------------------------------------------------------------

    def on_run_started(self, message: RunStarted) -> None:
        self.running_case = message.case
        self._refresh_cases()
        self.query_one(StatusLine).set_running(message.case, message.trigger)
        if message.primary:
            self.query_one(OutputPanel).start_streaming(self.vt.controller.output)
            if self.latest is None:
                self.query_one(RewardPanel).show_message("Running: the verdict appears here when the run ends.")

    def on_explain_ready(self, message: ExplainReady) -> None:
        if message.run_id != self.vt.controller.current_run_id:
            return  # a superseded run's
        self.explain = message.explain
        self._show_explain(message.explain)
        self.refresh_choices()

    def _show_explain(self, explain: dict[str, Any] | None, mode: str | None = None) -> None:
        panel = self.query_one(ResolutionPanel)
        notices = self.vt.session.notices()
        self.vt.fmt.learn_interpreter(explain)
        if explain is None:
            panel.show_message("The runner wrote no explanation for this run (see stderr).", notices)
        else:
            panel.show(explain, mode or self.vt.session.mode, self.vt.fmt, notices)

    def on_run_finished(self, message: RunFinished) -> None:
        result = message.result
        if result.case is not None:
            self.last_by_case[result.case] = result
        if self.vt.controller.running_case is None:
            self.running_case = None
        self.query_one(HistoryList).add(result)
        if message.primary:
            self.latest = result
            self.viewing = None
            self._show_result(result)
            self.query_one(StatusLine).set_finished(result)
        else:
            self.query_one(StatusLine).set_finished(None)
        self._refresh_cases()
        self.vt.record_result(result)

    def _show_result(self, result: RunResult, banner: str | None = None) -> None:
        fmt = self.vt.fmt
        fmt.learn_interpreter(result.explain)
        self.query_one(RewardPanel).show(result, fmt, banner)
        self.query_one(OutputPanel).show(result)
        if result.explain is not None:
            self.explain = result.explain
            self._show_explain(result.explain, result.mode)
            self.refresh_choices()
        elif result.start_error:
            self.query_one(ResolutionPanel).show_message(f"The runner could not start: {fmt.text(result.start_error)}",
                                                         style="bold $error")

    def on_run_not_possible(self, message: RunNotPossible) -> None:
        self.running_case = None
        self._refresh_cases()
        if self.vt.session.verifier is None:
            self._no_verifier()
        else:
            self.query_one(StatusLine).set_note(message.reason)
            self.query_one(RewardPanel).show_message(message.reason, "$warning")
        self.vt.record_result(None)

    def on_run_failed(self, message: RunFailed) -> None:
        error = message.error
        text = f"the run could not be completed: {type(error).__name__}: {error}"
        self.running_case = None
        self._refresh_cases()
        self.query_one(StatusLine).set_note(text, "$error")
        self.query_one(RewardPanel).show_message(text, "bold $error")
        self.notify(text, title="run failed", severity="error", markup=False)
        self.vt.record_result(None)

    def on_watch_state_changed(self, message: WatchStateChanged) -> None:
        self.query_one(StatusLine).set_watch(message.state, message.detail)

    # -- lists ----------------------------------------------------------------------------------

    @on(CasesList.CaseChosen)
    def _case_chosen(self, message: CasesList.CaseChosen) -> None:
        self._select_case(message.name)

    @on(HistoryList.RunChosen)
    def _history_chosen(self, message: HistoryList.RunChosen) -> None:
        result = message.result
        if message.latest and result is self.latest:
            self.action_latest()
            return
        self.viewing = result
        banner = f" run #{result.sequence} from the history · {result.case or 'no case'} · esc: back to the latest "
        self._show_result(result, banner)

    def action_latest(self) -> None:
        if self.viewing is None or self.latest is None:
            return
        self.viewing = None
        self._show_result(self.latest)
        self.query_one(HistoryList).highlighted = 0

    # -- changing the choices ----------------------------------------------------------------

    def _changed(self, trigger: str) -> None:
        """The choices changed: show them, watch what they name, and run."""
        self.vt.choices_changed(restart_watch=True)
        self.vt.controller.request(trigger)

    def _guard(self, fn, *args) -> bool:
        """Call a session method; a refused choice becomes a message."""
        try:
            fn(*args)
            return True
        except (SelectionError, DiscoveryError, OSError) as exc:
            self.notify(str(exc), title="cannot use that", severity="warning", markup=False)
            return False

    # -- running --------------------------------------------------------------------------------

    def action_run(self) -> None:
        self.vt.controller.request("r key")

    def action_run_all(self) -> None:
        if not self.vt.session.task.cases:
            self.notify("this task has no cases (cases/<name>/workspace): r runs the current choices",
                        severity="warning", markup=False)
            return
        self.vt.controller.request_all()

    def action_toggle_watch(self) -> None:
        self.vt.toggle_watch()

    def action_toggle_mode(self) -> None:
        session = self.vt.session
        if session.response is not None:
            self._last_response = session.response
            session.choose_response(None)
            self._changed("mode: Harbor")
            return
        candidate = self._last_response or (session.case.response if session.case else None)
        if candidate is None:
            self.notify("no response to run with yet: choose or type one", markup=False)
            self.action_choose_response()
            return
        if candidate.path is None:
            session.set_typed_response(candidate.text or "", candidate.kind)
        elif not self._guard(session.choose_response, candidate.path):
            return
        self._changed("mode: server")

    def action_toggle_output(self) -> None:
        self.query_one(OutputPanel).toggle()


