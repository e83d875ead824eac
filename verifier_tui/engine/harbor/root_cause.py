"""The first thing that went wrong in a trial, in Harbor's own order, and the
verifier's part after it.

Mirrors Harbor 0.26.0 ``harbor/trial/trial.py`` and ``single_step.py``: a
trial starts its environment (``_setup_agent_environment``), sets the agent
up (``_setup_agent``), runs it (``_run_agent``), then the verifier
(``_run_verifier``), each phase timed in result.json (``environment_setup``,
``agent_setup``, ``agent_execution``, ``verifier``). The first exception is
recorded (``_record_exception``); a later one (the verifier's, after an agent
failure) is only logged to ``trial.log``. A failing oracle raises nothing:
``OracleAgent.run`` writes ``agent/exit-code.txt`` and the verifier scores
what it left.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from verifier_tui.engine.harbor.phases import FAILED
from verifier_tui.engine.harbor.reading import time_span
from verifier_tui.engine.model import at_line
from verifier_tui.engine.record import as_json, record, replace
from verifier_tui.engine.verdict import VERIFIER_TIMEOUT

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from verifier_tui.engine.harbor.facts import TrialFacts
    from verifier_tui.engine.harbor.folders import StepView, Trial
    from verifier_tui.engine.harbor.sandbox import SandboxSide
    from verifier_tui.engine.model import RunResult

ENVIRONMENT, AGENT_SETUP, AGENT, VERIFIER, CANCELLED, BEFORE = (
    "environment",
    "agent setup",
    "agent",
    "verifier",
    "cancelled",
    "before the environment",
)

#: Exception types whose phase their name says (harbor/trial/errors.py, agents/installed/base.py).
_KNOWN = {
    "EnvironmentStartTimeoutError": ENVIRONMENT,
    "AgentSetupTimeoutError": AGENT_SETUP,
    "AgentTimeoutError": AGENT,
    "NonZeroAgentExitCodeError": AGENT,
    "CancelledError": CANCELLED,
}

_ADVICE = {
    "AgentTimeoutError": (
        "the agent ran out of time and the verifier scored what it left: raise [agent] "
        "timeout_sec in task.toml (or harbor run --agent-timeout-multiplier), or see in the "
        "agent's logs and trajectory where its time went"
    ),
    "AgentSetupTimeoutError": (
        "installing the agent took too long, so nothing ran: see trial.log, or raise "
        "harbor run --agent-setup-timeout-multiplier"
    ),
    "EnvironmentStartTimeoutError": (
        "the container did not start in time: check environment/Dockerfile, or raise "
        "[environment] build_timeout_sec (--environment-build-timeout-multiplier)"
    ),
    "NonZeroAgentExitCodeError": "the agent's own command failed: its logs (agent/) say why",
    "CancelledError": "Harbor was stopped (Ctrl+C, or the job was cancelled) while this trial ran: run it again",
}
_PHASE_ADVICE = {
    BEFORE: "Harbor refused the trial before starting anything: exception.txt and trial.log say why",
    ENVIRONMENT: "the environment failed to start: exception.txt and trial.log say why",
    AGENT_SETUP: "setting the agent up failed: exception.txt and trial.log say why",
    AGENT: "the agent failed: its logs (agent/), exception.txt and trial.log say why",
}


@record(frozen=True)
class RootCause:
    """``phase`` None: nothing went wrong. ``what``: the exception type (or
    ``exit code N``); ``then``: the verifier's part, when the cause came before it."""

    phase: str | None
    what: str | None
    message: str
    source: str | None
    advice: str
    then: str | None = None
    finished: bool = True  # False: Harbor has not ended the trial, so nothing can have gone wrong yet

    @property
    def failed(self) -> bool:
        return self.phase is not None

    def headline(self, name: Callable[[str], str] = str) -> str:
        """One line: the cause, its phase, its message; the cause's exception type as ``name``
        gives it (a face's: in a name's room, as result.json may name one of any length)."""
        if self.phase is None:
            return self.message
        where = {CANCELLED: "Harbor was stopped", BEFORE: "before the environment started"}.get(
            self.phase, f"in the {self.phase}"
        )
        message = f": {self.message}" if self.message else ""
        return f"{name(self.what or '')} ({where}){message}"

    def with_replay(self, local: RunResult | None, task_root: Path | None) -> RootCause:
        """This cause with what the replay knows and the sandbox's output
        cannot say: where a verifier that timed out in both was stuck (the
        replay's stack dump; Harbor keeps none)."""
        stuck = local.stack.stuck_at if local is not None and local.stack is not None else None
        if self.what != VERIFIER_TIMEOUT or local is None or local.verdict.error != VERIFIER_TIMEOUT or stuck is None:
            return self
        path = Path(stuck.path)
        shown = path.relative_to(task_root) if task_root and path.is_relative_to(task_root) else path
        where = at_line(shown, stuck.line)
        at = f"{where}, in top-level code" if stuck.function == "<module>" else f"{where} in {stuck.function}"
        return replace(
            self,
            message=f"{self.message}; the replay, which timed out too, was stuck at {at}",
            advice=f"find what is slow or stuck at {where}, or raise [verifier] timeout_sec in task.toml",
        )

    def to_json(self) -> dict[str, Any]:
        return as_json(self, headline=self.headline())


def _phase_by_time(trial: Trial, step: StepView, occurred: Any) -> str:
    """The last phase that had started when the exception occurred (the
    last one started at all when that time is unknown)."""
    spans = [
        (ENVIRONMENT, time_span(trial.result.get("environment_setup"))),
        (AGENT_SETUP, time_span(trial.result.get("agent_setup"))),
        (AGENT, step.agent_execution or time_span(trial.result.get("agent_execution"))),
        (VERIFIER, step.verifier),
    ]
    phase = BEFORE
    for name, span in spans:
        if span is None or span.started_at is None:
            continue
        if occurred is not None and span.started_at > occurred:
            break
        phase = name
    return phase


def root_cause(trial: Trial, step: StepView, facts: TrialFacts, side: SandboxSide) -> RootCause:
    """The first thing that went wrong in this trial (or step): the
    environment's, the agent's or the verifier's, with the verifier's part after it."""
    verdict = side.verdict
    recorded = facts.agent_failure
    if recorded is not None:
        phase = _KNOWN.get(recorded.type) or _phase_by_time(trial, step, recorded.occurred_at)
        if recorded.type == "EnvironmentStartTimeoutError" and step.verifier is not None:
            phase = VERIFIER  # the separate verifier's own container
        advice = _ADVICE.get(recorded.type) or _PHASE_ADVICE.get(phase, side.phases.advice)
        source = "result.json" if trial.result.ok else "exception.txt"
        return RootCause(phase, recorded.type, recorded.message, source, advice, _verifier_part(facts, side))
    if facts.agent_exit_code is not None:
        oracle = trial.agent_name == "oracle"
        who = "the oracle's solution/solve.sh" if oracle else "the agent"
        message = f"{who} exited {facts.agent_exit_code}; Harbor records no error for it"
        advice = (
            "fix solution/solve.sh: agent/oracle.txt holds its output"
            if oracle
            else "the agent's logs (agent/) say why it failed"
        )
        return RootCause(
            AGENT,
            f"exit code {facts.agent_exit_code}",
            message,
            "agent/exit-code.txt",
            advice,
            _verifier_part(facts, side),
        )
    if not verdict.finished:
        return RootCause(None, None, f"{verdict.label()}: {verdict.message}", None, "", finished=False)
    if verdict.error is not None:
        return RootCause(VERIFIER, verdict.error, _verifier_words(side), verdict.source, side.phases.advice)
    if facts.verifier_disabled:
        return RootCause(None, None, "none: the verifier was disabled for this job", None, "")
    if verdict.rewards is not None:
        return RootCause(None, None, f"none: Harbor scored {verdict.label()}", None, "")
    return RootCause(None, None, f"none recorded: {verdict.message}", None, "")


def _verifier_words(side: SandboxSide) -> str:
    """The verifier's failure in a line: the runner's step that failed and
    where, else what the sandbox's steps say happened."""
    wrong = side.phases.first_wrong
    if wrong is None or wrong.status != FAILED or not wrong.detail:
        return side.phases.explanation or side.verdict.message
    failure = side.failure
    where = f" at {failure.at(failure.local_path or failure.sandbox_path)}" if failure is not None else ""
    return f"'{wrong.label}' failed: {wrong.detail}{where}"


def _verifier_part(facts: TrialFacts, side: SandboxSide) -> str:
    """What the verifier did after an earlier failure, in a sentence."""
    verdict = side.verdict
    if verdict.error is not None:
        where = ", recorded only in trial.log" if verdict.source == "trial.log" else f" (from {verdict.source})"
        return f"then the verifier: {verdict.error}{where}"
    if verdict.rewards is not None:
        return f"then the verifier scored {verdict.label()}"
    if facts.verifier_disabled:
        return "the verifier was disabled for this job"
    return "the verifier never ran" if facts.verifier_ran is False else f"then the verifier: {verdict.message}"
