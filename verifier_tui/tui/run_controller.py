"""The runs of the main screen: what a run means on screen (run ids, live
output, "run all cases"), over the :class:`~verifier_tui.tui.controller.Controller`
both screens share."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from verifier_tui.engine.model import RunResult
from verifier_tui.engine.record import replace
from verifier_tui.engine.task.discovery import no_verifier_message
from verifier_tui.tui.controller import Controller
from verifier_tui.tui.messages import (
    CasesOutdated,
    ChoicesChanged,
    ExplainReady,
    RunFinished,
    RunNotPossible,
    RunStarted,
)
from verifier_tui.tui.output_buffer import OutputBuffer

if TYPE_CHECKING:
    from textual.screen import Screen

    from verifier_tui.engine.changes import Change
    from verifier_tui.engine.readback import Explanation
    from verifier_tui.engine.session import Session
    from verifier_tui.engine.watch.live import LiveRuns

T = TypeVar("T")


class RunController(Controller):
    """Starts runs of ``session`` and reports them to ``screen`` as messages."""

    live: LiveRuns  # a task's screen always has its session

    def __init__(self, session: Session, screen: Screen[None], *, live_reload: bool = True, poll: bool = False) -> None:
        super().__init__(
            screen,
            session,
            live_reload=live_reload,
            poll=poll,
            on_task_error=lambda reason: self._post(RunNotPossible(reason)),
            on_task_reloaded=lambda: self._post(ChoicesChanged()),
            on_outdated=lambda: self._post(CasesOutdated(session.sequence)),
        )
        self.session = session
        self.output = OutputBuffer()
        """Live output of the run in flight: fed by the run's thread, flushed to the screen ~20 times a second."""
        self._ids = itertools.count(1)
        self.current_run_id = 0
        self.running_case: str | None = None
        self.run_all_pending = False
        """Set by "run all cases"; cleared once its request is answered (:meth:`_on_result`), so a
        save that supersedes the batch re-runs the whole batch on the new code."""
        self.every_case = False
        """"Every case on save": each run (a save's, a key's) runs every case,
        as "run all cases" does, until turned off. Kept in memory only."""
        self._cut: list[int] = []
        """The numbers of the runs superseded (a save, a key, the response typed) since the last that ended."""

    def drop_held(self) -> bool:
        """As :meth:`Controller.drop_held`, but a save while every case is to run
        ("run all cases" pending, every case on save) is every case's run, not
        the current case's alone: kept for resume."""
        if self.run_all_pending or self.every_case:
            return False
        return super().drop_held()

    def request_all(self) -> None:
        self.run_all_pending = True
        self.request("all cases")

    # -- the run itself --------------------------------------------------------------

    async def _run(self, trigger: str, change: Change | None) -> tuple[int, RunResult] | None:
        session = self.session
        if session.verifier is None:
            self._post(RunNotPossible(no_verifier_message(session.task)))
            return None
        # the coverage view counts every case's lines, as "every case on save" does its marks
        if (self.run_all_pending or self.every_case or session.options.coverage) and session.task.cases:
            await self._run_all(trigger, change)
            return None
        if session.case is not None and session.case.unreadable is not None:  # as run refuses it (session.spec)
            self._post(RunNotPossible(session.case.unreadable))
            return None
        return await self._run_chosen(trigger)

    async def _run_chosen(self, trigger: str) -> tuple[int, RunResult]:
        """The run of the current choices, the one the screen shows."""
        session = self.session
        spec = session.spec()  # without the case's expectation when its inputs are not in use
        note = session.expectation_note()
        run_id, result = await self._one(spec, trigger)
        if note is not None:
            result.notices.insert(0, note)
        return run_id, result

    async def _one(self, spec: Any, trigger: str, primary: bool = True) -> tuple[int, RunResult]:
        run_id = next(self._ids)
        self.current_run_id = run_id
        self.running_case = spec.case
        self.output.reset(run_id if primary else -1)
        self._post(RunStarted(run_id, spec.case, trigger, primary))

        def on_output(stream: str, text: str, user_paths: Callable[[str], str]) -> None:  # in the run's thread
            self.output.feed(run_id, stream, text, user_paths)

        def on_explain(explain: Explanation) -> None:
            if primary:
                self._post(ExplainReady(run_id, explain))

        try:
            result = await self.counted(
                self.session.arun(spec, trigger=trigger, on_output=on_output, on_explain=on_explain)
            )
        finally:
            self.running_case = None
        return run_id, result

    async def counted(self, runs: Awaitable[T]) -> T:
        """``runs`` awaited; cancelled (superseded, b pressed again), the runs of it that had their numbers
        are said cut short on the next run's row, as watch says `run #N cut short`, or the history's
        numbers skip them unsaid (one cut before it started has none). Nothing else numbers a run
        meanwhile: the scheduler runs one at a time, and b pauses it and runs alone."""
        before = self.session.sequence
        try:
            return await runs
        except asyncio.CancelledError:
            self.cut_short(*range(before + 1, self.session.sequence + 1))
            raise

    def cut_short(self, *numbers: int) -> None:
        """Runs that had their numbers and get no row of their own: the next run's row says them."""
        self._cut.extend(numbers)

    def take_cut(self) -> tuple[int, ...]:
        """The runs cut short since the last row, for the row being made (and said once)."""
        cut, self._cut = tuple(self._cut), []
        return cut

    def _finished(self, run_id: int, result: RunResult, primary: bool) -> None:
        self._post(RunFinished(run_id, result, primary=primary, cut=self.take_cut()))

    async def _run_all(self, trigger: str, change: Change | None) -> None:
        session = self.session
        # The run shown is the run of the choices, whose inputs and expectation the header and the
        # resolution say: the chosen case's own run when the choices are its inputs, else one of
        # their own (a workspace, response or task data chosen): the case's run with its passing
        # expected.json shown under "expected.json is not applied" contradicted the screen. In the
        # coverage view's runs too: the run shown after it was of the code before them, unmarked.
        case = session.case
        readable = case is None or case.unreadable is None
        chosen = case.name if case is not None and readable and session.ran_case_inputs(session.spec()) else None
        if readable and chosen is None:
            self.live.reading_now(change)
            self._finished(*await self._run_chosen(trigger), primary=True)
        for case in list(session.task.cases):
            if case.unreadable is not None:  # nothing of it known: no run on an empty /app, as test says it not run
                continue
            # Its mark says how the case goes with its own inputs, its response too (--no-response is
            # the choices', run above): :meth:`Session.ran_case_inputs`' one rule.
            spec = replace(session.spec_for_case(case), response=case.response)
            primary = case.name == chosen
            if primary:
                # The shown case's run reads the files as they are now: a save while the cases before
                # it ran is stale no more, on the screen (RunStarted) and in the engine alike.
                self.live.reading_now(change)
            run_id, result = await self._one(spec, trigger, primary)
            self._finished(run_id, result, primary)

    def _on_result(self, change: Change | None, value: Any) -> None:
        # Every request not superseded ends here, those that ran nothing too (the task could not be read
        # again first: LiveRuns never called _run), so an "a" refused is not the next "r"'s batch.
        self.run_all_pending = False
        if value is not None:
            run_id, result = value
            self._finished(run_id, result, primary=True)
