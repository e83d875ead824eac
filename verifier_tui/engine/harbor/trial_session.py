"""One trial (or one step of it) opened for replaying: the walkthrough, the
replay's plan, and a :class:`~verifier_tui.engine.session.Session` kept open
across replays, so that live reload re-runs the replay in the same staged
layout and only what changed is copied again.

The sandbox side is what Harbor recorded: it changes only when a trial Harbor
had not ended is read again (:meth:`TrialSession.read_again`). The local side
is re-run and compared each time. After a change to the task (the verifier
edited), the walkthrough is read again, so the task's drift from the run
("tests/verifier.py changed since the run") and its ``task.toml`` settings
are current.

This is the one place that drives a Session for a trial.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from verifier_tui.engine.failing import Location
from verifier_tui.engine.harbor.agreement import Agreement, RunnerAlone
from verifier_tui.engine.harbor.folders import Trial
from verifier_tui.engine.harbor.phases import Parting, PhaseReport
from verifier_tui.engine.harbor.replay import (
    ReplayPlan,
    StandIn,
    env_assignments,
    plan_replay,
    runner_alone_why,
    stand_in_words,
)
from verifier_tui.engine.harbor.root_cause import RootCause
from verifier_tui.engine.harbor.walkthrough import (
    TrialWalkthrough,
    agreement_of,
    replay_view,
    runner_alone_differs,
    trial_json,
    walk_trial,
)
from verifier_tui.engine.invocation import NOTHING_CHOSEN
from verifier_tui.engine.model import UNKNOWN, Outcome, RunResult, at_line
from verifier_tui.engine.record import record, replace
from verifier_tui.engine.to_the_end import uninterrupted

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Generator
    from typing import Any

    from verifier_tui.engine.invocation import RunSpec
    from verifier_tui.engine.readback import Explanation
    from verifier_tui.engine.sandbox.isolation import Isolation
    from verifier_tui.engine.session import Options, Session


@record
class Replayed:
    """One replay and how it compares: ``local`` None with ``skipped`` saying why."""

    local: RunResult | None
    skipped: str | None
    agreement: Agreement
    phases: PhaseReport | None
    parting: Parting | None  # where the phases shown part from the sandbox's (maybe the runner alone's)
    failure: Location | None  # the replay's failing line in the task's files
    cause: RootCause  # the trial's root cause, with what the replay adds to it
    runner_alone: RunnerAlone | None  # test.sh gave the verdict and verifier-tui's runner, run alone, ended otherwise


class TrialSession:
    """A trial's walkthrough and its local replay, run as often as asked."""

    def __init__(
        self,
        trial: Trial,
        step: str | None = None,
        *,
        options: Options | None = None,
        stand_in: StandIn | None = None,
        task_dir: Path | str | None = None,
        cache: Path | None = None,
        pool: SessionPool | None = None,
        isolation: Isolation | None = None,
    ) -> None:
        """``options``: the engine's (:class:`~verifier_tui.engine.session.Options`);
        of them a replay takes the interpreter, ``--timeout``, ``--nemo-gym``,
        ``--runner``, ``--env`` and ``--network``. ``stand_in``: what stands in
        for an uncaptured /app. ``isolation``: the sandbox the command chose
        once for every session it opens (Session.keep_isolation)."""
        if options is None:
            from verifier_tui.engine.session import Options

            options = Options()
        stand_in = stand_in or StandIn()
        self.trial = trial
        self.options = options
        self._pool = pool  # many trials replayed in a row share a session per task (the pool closes them)
        self._isolation = isolation
        self.step = step
        self._task_dir = task_dir
        self._cache = cache
        # What the user passed with --env, by name: the only values a ${VAR} the trial names takes (harbor/inputs.py).
        self._given = dict(env_assignments(options.env))
        # A stand-in serves where the trial did not capture /app; one chosen on
        # screen for this trial (choose_stand_in) serves even over a captured one.
        self.stand_in: tuple[Path | None, str | None] = (stand_in.workspace, stand_in.case)
        self.empty_stand_in = stand_in.empty
        self._over_capture = False
        self.session: Session | None = None
        self.last: Replayed | None = None
        self.session_problem: str | None = None
        self._walk()

    def _walk(self) -> None:
        """The trial walked (its task found, its sandbox side read), the replay planned, its session opened."""
        from verifier_tui.engine.harbor.digest import task_digest
        from verifier_tui.engine.task.harbor_text import read_once

        # The task's .gitignore and digest, read once for finding, loading, comparing and replaying it.
        with read_once():
            self.walk: TrialWalkthrough = walk_trial(
                self.trial, self.step, task_dir=self._task_dir, cache=self._cache, given=self._given
            )
            self._baseline = None
            found = self.walk.location.path
            if found is not None and self.walk.drift is not None and self.walk.drift.same:
                # The task is the run's now: keep each file's hash, so that an edit
                # later is named exactly (copies of the task have new file times).
                self._baseline = task_digest(found)
            self.plan: ReplayPlan = self._plan()
            self._open_session()

    def read_again(self, trial: Trial) -> None:
        """``trial``, its folder read anew (:func:`~verifier_tui.engine.harbor.folders.open_trial`), in place
        of the one read before, and all that follows from it. Harbor writes result.json (with
        ``finished_at``) as it ends a trial, the verifier's files and the artifacts it captures before
        that: a trial opened while Harbor ran it may have ended since."""
        self.trial = trial
        self._walk()

    # -- the plan and its session ----------------------------------------------------

    def _plan(self) -> ReplayPlan:
        workspace, case = self.stand_in
        walk = self.walk
        timeout = self.options.timeout if self.options.timeout is not None else walk.facts.timeout.for_replay
        plan = plan_replay(
            walk.location,
            walk.workspace,
            walk.env,
            walk.step.name,
            workspace=workspace,
            case=case,
            empty=self.empty_stand_in,
            over_capture=self._over_capture,
            timeout=timeout,
            runner=self.options.runner,
            env_words=self.options.env,
        )
        if plan.skipped is None and walk.task is not None and walk.task.unread is not None:
            plan.skipped = walk.task.unread  # its settings unknown: no replay on others
        return plan

    def _open_session(self, explaining: bool = False) -> None:
        """A session on the task for this plan (None when there is nothing to
        replay); ``explaining``: one without a workspace, for explain only."""
        # The sandbox the closing session chose serves the next: probed again, a refusal then
        # (no process slot to spare) would fail a replay the first had promised.
        self._isolation = self.isolation
        self._close_session()
        self.session_problem = None
        plan = self.plan
        if plan.task_dir is None or (plan.skipped is not None and not (explaining and plan.no_workspace)):
            return
        from verifier_tui.engine.session import Options, SelectionError, Session
        from verifier_tui.engine.task.discovery import DiscoveryError, read_task_config

        chosen = self.options
        step = self.walk.step.name
        if step is not None and read_task_config(plan.task_dir).step(step) is None:
            # The task no longer lists the trial's step: the replay is still the step's as the plan
            # makes it (its own tests over tests/), not a --step refused for naming no step.
            step = None
        options = Options(
            verifier=str(plan.verifier) if plan.verifier is not None else None,
            case=plan.case,
            workspace=plan.workspace,
            no_response=True,  # Harbor never passes a response
            timeout=plan.timeout_s,
            python=chosen.python,
            nemo_gym=chosen.nemo_gym,
            runner=chosen.runner,
            env=chosen.env,
            network=chosen.network,
            step=step,  # the replay is this step's (the plan lays its tests over tests/)
            replay=True,  # so the task's [[steps]] are no note of it (the plan's overlay stands, listed or not)
            replay_step=self.walk.step.name,  # its overlay, watched listed or not
            verifier_disabled=self.walk.facts.verifier_disabled,
        )
        try:
            if self._pool is not None and not explaining:
                self.session = self._pool.session(plan.task_dir, options)
                return
            self.session = Session(plan.task_dir, options)
            if self._isolation is not None:
                self.session.keep_isolation(self._isolation)
            if explaining or plan.empty:
                self.session.select_case(None)  # not the task's first case: no workspace at all
        except (DiscoveryError, SelectionError) as exc:
            self.session_problem = exc.args[0]  # not str(exc): that drops its actions, each face's words
        except OSError as exc:
            self.session_problem = str(exc)

    @property
    def isolation(self) -> Isolation | None:
        """The sandbox its replays are kept apart in, once chosen (None: not yet), never probed here."""
        return self.session.isolation_chosen if self.session is not None else self._isolation

    @property
    def skipped(self) -> str | None:
        """Why there is no replay (None: there is one)."""
        return self.plan.skipped or self.session_problem

    def choose_stand_in(
        self, *, workspace: Path | str | None = None, case: str | None = None, empty: bool = False
    ) -> None:
        """Replay on another workspace folder, a case of the task, or an empty
        folder (what an agent that did nothing leaves); none of them: back to
        what the trial captured."""
        self.empty_stand_in = empty
        self._over_capture = bool(workspace or case or empty)
        self.stand_in = (Path(_absolute(workspace)) if workspace else None, case)
        self.plan = self._plan()
        self._open_session()

    def replay_command(self) -> tuple[list[str], str | None]:
        """The words of ``run TRIAL`` that replays this trial as this session
        does (its step, the task given, the stand-in, the options), and what
        this session chose that no option of ``run TRIAL`` gives (None: none)."""
        from verifier_tui.engine.invocation import option_value, option_words, tool_words

        # Paths absolute, as the reproduce command's are: a relative ``-ws`` would read as an option.
        words = [*tool_words(), "run", _absolute(self.trial.path)]
        if self._task_dir is not None:
            words += ["--task", _absolute(self._task_dir)]
        workspace, case = self.stand_in
        lacking = None
        if self._over_capture and self.walk.workspace.path is not None:
            # run TRIAL's stand-in serves only where the trial did not capture /app (plan_replay)
            lacking = f"your stand-in ({stand_in_words(workspace, case, self.empty_stand_in)}) over the captured /app"
        elif workspace is not None:
            words += ["--workspace", _absolute(workspace)]
        elif case is not None:
            words += option_value("--case", case)
        elif self.empty_stand_in:
            words += ["--stand-in", "empty"]
        chosen = self.options
        step = self.walk.step.name
        words += option_words(
            chosen.runner, step, chosen.timeout, chosen.python, chosen.nemo_gym, chosen.env, chosen.network
        )
        return words, lacking

    def refresh(self) -> None:
        """Read the task again (after a change to it): its drift since the run,
        its settings, and so the plan; the sandbox side stays as recorded."""
        walk = walk_trial(
            self.trial,
            self.step,
            task_dir=self._task_dir,
            cache=self._cache,
            given=self._given,
            baseline=self._baseline,
        )
        if self.trial.gone() is not None:
            # The trial folder moved or deleted since it was opened: read now, every file of it is
            # missing, which the sandbox side would blame on the trial (no verifier/ folder, every
            # step unknown). What Harbor recorded was read while it was there, and stays; the plan
            # (read anew) says why there is nothing to replay on.
            walk = replace(walk, sandbox=self.walk.sandbox, facts=self.walk.facts, cause=self.walk.cause)
        self.walk = walk
        self.plan = self._plan()
        if self.session is not None:
            # What stopped the last replay (its verifier deleted, say) is found
            # again from the task as it is now: kept, no replay ever ran again.
            self.session_problem = None
        # The session stays (the watch loop holds it); only the verifier the shim names may move.
        if self.session is not None and self.plan.verifier is not None and self.plan.verifier != self.session.verifier:
            from verifier_tui.engine.task.discovery import DiscoveryError

            try:
                self.session.choose_verifier(self.plan.verifier)
            except DiscoveryError as exc:
                self.session_problem = exc.args[0]

    @property
    def _opened(self) -> Session:
        assert self.session is not None, "a replay is run only once a session is open"
        return self.session

    def spec(self) -> RunSpec:
        """The run: the session's choices with Harbor's environment and task
        data, no response, no expectation (the trial is the reference) and
        the runner's phases asked for."""
        plan, session = self.plan, self._opened
        spec = session.spec()
        if self._pool is not None:  # the shared session's own choices are not this trial's
            if plan.case is not None:
                found = session.task.case(plan.case)
                if found is None:
                    from verifier_tui.engine.advice import CASE_OPTION, Advice
                    from verifier_tui.engine.session import SelectionError, no_such_case

                    said = no_such_case(session.task, plan.case, f" in {session.task.name}")
                    raise SelectionError(Advice(CASE_OPTION, said))
                spec = session.spec_for_case(found)
            else:
                spec = replace(spec, case=None, workspace=plan.workspace, expected=None)
        config = replace(
            spec.task.config,
            env=dict(plan.env),
            env_sources=dict(plan.env_sources),
            env_final=True,
            env_unset=plan.env_unset,
            env_fills_only=plan.env_fills_only,
        )
        task = replace(spec.task, config=config)
        timeout = plan.timeout_s if plan.timeout_s is not None else spec.timeout_s
        return replace(
            spec,
            task=task,
            response=None,
            expected=None,
            task_data=plan.task_data,
            phases=True,
            timeout_s=timeout,
            extra_tests=plan.extra_tests,
        )

    def explain(self) -> Explanation | None:
        """The runner's ``--explain`` for the replay (verify is not called),
        with no workspace at all when the trial has none (how verify is
        imported and called does not depend on one); None when there is
        nothing to explain."""
        transient = self.session is None and self.plan.no_workspace and self.session_problem is None
        if transient:
            self._open_session(explaining=True)
        elif self.skipped is not None:
            return None
        try:
            if self.session is None:
                return None
            explained = self.session.explain(replace(self.spec(), explain_only=True, phases=False))
            # The plan's notes (a variable the trial names that the replay runs without, a template
            # filled here) are the replay's, as a run's are (_compare): explain says them too.
            # Without a workspace (none captured, or an empty /app chosen) the plan says so in its own words.
            chosen = self.plan.empty or self.plan.no_workspace
            own = [n for n in explained.notices if not (chosen and n == NOTHING_CHOSEN)]
            notes = [*own, *(n for n in self.plan.notices if n not in own)]
            return replace(explained, notices=tuple(notes))
        finally:
            if transient:
                self._close_session()

    # -- running -------------------------------------------------------------------------

    def run(self, trigger: str = "trial replay") -> Replayed:
        """One replay, blocking."""
        replay = self._replay(only_when_differs=False)
        step = next(replay)
        while not isinstance(step, Replayed):
            step = replay.send(self._opened.run(step, trigger=trigger))
        return step

    async def arun(
        self, trigger: str = "trial replay", *, gate: asyncio.Semaphore | None = None, script_when_differs: bool = False
    ) -> Replayed:
        """One replay from asyncio (the TUI, ``watch``, ``test``); cancelling
        it ends the runner. ``gate`` is held only while a runner runs.
        ``script_when_differs`` (a whole job): the task's test.sh runs only
        when verifier-tui's runner did not end as the sandbox did; it costs
        as much again as the runner (bash, a Python to check the version,
        then the runner), and where the runner agrees it would only confirm."""
        replay = self._replay(only_when_differs=script_when_differs)
        step = next(replay)
        while not isinstance(step, Replayed):
            step = replay.send(await self._opened.arun(step, trigger=trigger, gate=gate))
        return step

    def _replay(self, only_when_differs: bool) -> Generator[RunSpec | Replayed, RunResult, None]:
        """The replay both faces run: the spec of each run it needs is yielded
        for the face to run and the result sent back (verifier-tui's runner,
        then the task's test.sh where it judges); the :class:`Replayed` last."""
        from verifier_tui.engine.session import SelectionError
        from verifier_tui.engine.task.discovery import DiscoveryError

        spec = None
        if self.skipped is None and self.session is not None:
            try:
                spec = self.spec()
            except (DiscoveryError, SelectionError) as exc:
                self.session_problem = exc.args[0]
        if spec is None:
            yield self._compare(None)
            return
        result = yield spec
        replayed = self._compare(result)
        if self._then_test_sh(replayed, only_when_differs=only_when_differs):
            script = yield replace(spec, via_test_sh=True, phases=False)
            replayed = self._compare(with_test_sh_verdict(script, result))
        yield replayed

    def _then_test_sh(self, replayed: Replayed, *, only_when_differs: bool) -> bool:
        """Whether the task's test.sh runs after verifier-tui's runner gave
        ``replayed``: where it can (:meth:`_runs_test_sh`) and, when the
        runner ended as the sandbox did, only for a single trial (not
        ``only_when_differs``) and a runner that did not time out: the script
        runs a runner under the same timeout, so after one that ran it all
        out, as Harbor's did, it would wait as long again to the same end."""
        result = replayed.local
        if result is None or not self._runs_test_sh():
            return False
        if result.outcome is Outcome.REFUSED_BY_SHIM:  # test.sh's own end already: it never started the runner
            return False
        if replayed.agreement.refused is not None:  # not compared (same None): the script cannot change "refused"
            return False
        if not replayed.agreement.same:
            return True
        if only_when_differs:
            return False
        if result.outcome is not Outcome.TIMED_OUT:
            return True
        result.notices.append(
            "the task's test.sh was not run after verifier-tui's runner: that ran out the task's "
            "timeout as the sandbox did, and the script, which runs a runner under the same "
            "timeout, would wait as long again"
        )
        return False

    def _runs_test_sh(self) -> bool:
        """Whether the replay's verdict comes from the task's own test.sh, run
        as Harbor ran it: where the run sees the sandbox's view (the script
        names /tests and /app), and the task has one."""
        from verifier_tui.engine.sandbox.isolation import NAMESPACE

        session = self.session
        return (
            session is not None
            and session.isolation.kind == NAMESPACE
            and (session.task.tests_dir / "test.sh").is_file()
        )

    def _compare(self, result: RunResult | None) -> Replayed:
        plan = self.plan
        if result is not None and result.verdict_by == "test.sh":
            plan = plan.verdict_by_test_sh()  # the script ran the task's own runner
        if result is not None:
            if plan.empty:  # chosen: the plan says so in its own words
                result.notices = [n for n in result.notices if n != NOTHING_CHOSEN]
            result.notices.extend(n for n in plan.notices if n not in result.notices)
        phases, parting, failure = replay_view(self.walk, result)
        alone = None
        if result is not None and runner_alone_differs(result):
            assert result.runner_verdict is not None  # runner_alone_differs checked
            why = runner_alone_why(self.plan, self.step, self._ended_words(result, failure))
            steps = result.phases is not None  # else the script's own: it never started the runner
            alone = RunnerAlone(result.runner_verdict, parting if steps else None, why, steps)
        agreement = agreement_of(self.walk, None if self.skipped and result is None else plan, result, parting, alone)
        cause = self.walk.cause.with_replay(result, self.walk.task_root)
        skipped = None if result is not None else self.skipped
        self.last = Replayed(result, skipped, agreement, phases, parting, failure, cause, alone)
        return self.last

    def _ended_words(self, result: RunResult, failure: Location | None) -> str | None:
        """Where and why the task's test.sh ended before it started the runner,
        or the reward file it left as a link (None: neither)."""
        if result.verdict.error == UNKNOWN:  # the script's verdict is not known: the link is why it differs
            return result.verdict.message
        if result.outcome is not Outcome.TEST_SH_ENDED:
            return None
        from verifier_tui.engine.harbor.phases import test_sh_ended
        from verifier_tui.engine.harbor.runner_output import parse_runner_output

        shell = parse_runner_output(result.stderr.text).shell_error
        root = self.walk.task_root
        if shell is None or failure is None:
            return f"test.sh exited {result.exit_code} before it started the runner, saying nothing of why"
        script = failure[0].relative_to(root) if root is not None and failure[0].is_relative_to(root) else failure[0]
        return test_sh_ended(at_line(script, failure[1]), shell.message)

    def to_json(self, replayed: Replayed | None = None) -> dict[str, Any]:
        """The object ``run TRIAL --json`` prints (docs/json-output.md)."""
        replayed = replayed or self.last or self._compare(None)
        plan = self.plan
        if replayed.local is not None and replayed.local.verdict_by == "test.sh":
            plan = plan.verdict_by_test_sh()
        return trial_json(
            self.walk,
            plan=plan,
            local=replayed.local,
            local_skipped=replayed.skipped,
            view=(replayed.phases, replayed.parting, replayed.failure),
            alone=replayed.runner_alone,
            cause=replayed.cause,
        )

    # -- live reload -----------------------------------------------------------------------

    def watch_targets(self) -> list[Any]:
        return self.session.watch_targets() if self.session is not None else []

    def _close_session(self) -> None:
        if self.session is not None:
            if self._pool is None:
                self.session.close()
            self.session = None

    @uninterrupted
    def close(self) -> None:
        """End the replays: the session's scratch folder goes."""
        self._close_session()

    def __enter__(self) -> TrialSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SessionPool:
    """One :class:`~verifier_tui.engine.session.Session` per task (and
    choices) for the trials of a job replayed in a row: the task is resolved,
    and its tests staged, once; each trial's run takes an idle layout and puts
    its own workspace in place."""

    def __init__(self) -> None:
        self._sessions: dict[tuple[object, ...], Session] = {}
        self.isolation: Isolation | None = None  # the command's, given every session (Session.keep_isolation)

    def session(self, task_dir: Path, options: Any) -> Session:
        from verifier_tui.engine.session import Session

        key = (
            task_dir,
            options.verifier,
            options.timeout,
            options.python,
            options.nemo_gym,
            options.runner,
            options.env,
            options.step,
            options.replay_step,
            options.verifier_disabled,
        )
        if key not in self._sessions:
            opened = Session(task_dir, replace(options, workspace=None, case=None))
            opened.recycle_stages = True  # each trial runs once: a layout serves the next
            if self.isolation is not None:
                opened.keep_isolation(self.isolation)
            self._sessions[key] = opened
        return self._sessions[key]

    @uninterrupted
    def close(self) -> None:
        for opened in self._sessions.values():
            opened.close()
        self._sessions.clear()


def with_test_sh_verdict(script: RunResult, runner: RunResult) -> RunResult:
    """The replay as the sandbox ran it: ``script`` (the task's test.sh) gives
    the verdict and the output, ``runner`` (verifier-tui's runner on the same
    inputs) the explanation and the phases; a disagreement between the two is
    said, and kept in ``runner_verdict``. A script that ended before it
    started the runner is :attr:`Outcome.TEST_SH_ENDED`, and its steps are
    its own (none reached): the runner's, run alone, never happened in it."""
    same = (script.verdict.rewards, script.verdict.error) == (runner.verdict.rewards, runner.verdict.error)
    notices = list(script.notices)
    ended = not same and _ended_before_runner(script, runner)
    if same:
        notices.append(
            "the verdict is the task's test.sh's, run as the sandbox ran it; verifier-tui's runner, "
            "run beside it on the same inputs, agrees and explains it"
        )
    elif ended:
        notices.append(
            "the verdict is the task's test.sh's, run as the sandbox ran it: it ended before it started the "
            "runner, so the steps shown are the script's; verifier-tui's runner, run alone, ended otherwise"
        )
    else:
        notices.append(
            "the verdict is the task's test.sh's, run as the sandbox ran it; verifier-tui's runner, run alone "
            "on the same inputs, ended otherwise, so the steps shown are the runner alone's, not the script's"
        )
    runner_verdict = {
        "outcome": runner.outcome.slug,
        "outcome_words": runner.outcome_words,
        "exit_code": runner.exit_code,
        "rewards": runner.verdict.rewards,
        "verdict_error": runner.verdict.error,
        "agrees": same,
    }
    return replace(
        script,
        outcome=Outcome.TEST_SH_ENDED if ended else script.outcome,
        explain=runner.explain,
        phases=None if ended else runner.phases,
        notices=notices,
        verdict_by="test.sh",
        runner_verdict=runner_verdict,
        stack=_knowing(script.stack, runner.stack),
    )


def _ended_before_runner(script: RunResult, runner: RunResult) -> bool:
    """Whether the task's test.sh ended before it started the runner: it left
    no reward and no word of a runner (a traceback, the runner's error line),
    where the runner alone on the same inputs said its end; the shell's line
    about the script's own command (``cd: /opt/x: No such file or
    directory``), when it wrote one, names where. Harbor 0.26.0 records the
    same RewardFileNotFoundError as for a verify that raised."""
    from verifier_tui.engine.harbor.runner_output import parse_runner_output

    ended_itself = script.outcome in (
        Outcome.VERIFIER_RAISED,
        Outcome.CONTRACT_ERROR,
        Outcome.UNEXPECTED_EXIT,
        Outcome.NO_REWARD,
    )
    # A reward file left as a link says something wrote the reward folder (the runner, then the
    # script or the verifier after it): whatever ran, the script did not end before the runner.
    if script.verdict.rewards is not None or not ended_itself or script.verdict.error == UNKNOWN:
        return False
    said = parse_runner_output(script.stderr.text).kind
    reported = runner.outcome in (Outcome.REWARD_WRITTEN, Outcome.VERIFIER_RAISED, Outcome.CONTRACT_ERROR)
    return said == "test_sh_error" or (said in ("empty", "other") and reported)


def _knowing(*stacks: Any) -> Any:
    """The first stack dump that names where the run was stuck (the task's
    own runner may have none to give), else the first there is."""
    return next(
        (s for s in stacks if s is not None and s.stuck_at is not None),
        next((s for s in stacks if s is not None), None),
    )


def _absolute(path: Path | str) -> str:
    """A path the user gave as it resolves from where they started the tool, ``~`` expanded."""
    return str(Path(path).expanduser().absolute())
