"""The facts of a trial that explain its verdict: the verifier's mode, its
effective timeout and how long it ran, an agent failure before it, a timeout,
and the verifier's own failure when only ``trial.log`` has it.

Mirrors Harbor 0.26.0 ``harbor/trial/trial.py``:

- the effective timeout (``_compute_verifier_timeout_sec``,
  ``_step_verifier_timeout_sec``, ``_resolve_timeout_sec``):
  ``min(override_timeout_sec or timeout_sec, max_timeout_sec or inf)`` times
  ``verifier_timeout_multiplier`` (or else ``timeout_multiplier``), the
  override, maximum and multipliers from ``config.json``. For a step,
  ``timeout_sec`` is the step's ``[steps.verifier]`` value, which defaults to
  600 whatever the task's ``[verifier]`` says (Harbor checks it against None,
  but the model's default is 600, never None);
- ``_verify_with_timeout``: a timeout is recorded as ``VerifierTimeoutError``
  "Verifier execution timed out after N seconds";
- ``Trial.run`` / ``_record_exception``: the first exception recorded wins. When
  the agent phase already failed (``AgentTimeoutError``, whose policy still
  grades), the verifier runs, and its own failure is only logged to
  ``trial.log``: "Trial <name> failed: <message>", then "Skipping exception
  record because trial already has exception_info" with its traceback.
  (A multi-step trial drops a step's verifier failure after that step's agent
  failed without logging it: there, only the reward files are left.)
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

from verifier_tui.engine import untrusted
from verifier_tui.engine.harbor.folders import StepView, Trial, shown_name
from verifier_tui.engine.harbor.reading import ExceptionRecord, read_text_tail
from verifier_tui.engine.model import duration_text
from verifier_tui.engine.readback import exception_words
from verifier_tui.engine.record import record
from verifier_tui.engine.task.config import (
    HARBOR_DEFAULT_VERIFIER_TIMEOUT_S,
    SEPARATE,
    TOML_UNREAD,
    TaskConfig,
    toml_unread,
)
from verifier_tui.engine.verdict import (
    OUTPUT_PARSE_ERROR,
    REWARD_FILE_EMPTY,
    REWARD_FILE_NOT_FOUND,
    TIMEOUT_MESSAGE,
    VALIDATION_ERROR,
    VERIFIER_TIMEOUT,
)

if TYPE_CHECKING:
    from collections.abc import Callable

VERDICT_ERRORS = (REWARD_FILE_NOT_FOUND, REWARD_FILE_EMPTY, OUTPUT_PARSE_ERROR, VALIDATION_ERROR)
"""What Harbor raises reading the reward files (``harbor/verifier/verifier.py``)."""
VERIFIER_ERRORS = VERDICT_ERRORS + (VERIFIER_TIMEOUT, "AddTestsDirError", "DownloadVerifierDirError")
"""Exceptions of the verifier phase itself; any other recorded one is the agent's or the environment's.
(The last two are the sandbox's own: copying tests/ in, the reward folder out; a local run has neither.)"""
_SKIP_LINE = "Skipping exception record because trial already has exception_info"


@record(frozen=True)
class Timeout:
    """The verifier's effective timeout and how it was computed."""

    seconds: float | None  # None: no timeout (Harbor passes None to wait_for) or not computable
    words: str
    recorded_seconds: float | None = None  # from a VerifierTimeoutError's message, the sandbox's own figure

    @property
    def for_replay(self) -> float | None:
        """What the sandbox had: its own figure when it said, else the computed one."""
        return self.recorded_seconds if self.recorded_seconds is not None else self.seconds


@record(frozen=True)
class LoggedFailure:
    """An exception found only in ``trial.log``."""

    type: str
    message: str
    traceback: str


@record(frozen=True)
class TrialFacts:
    verifier_mode: str | None  # "shared", "separate" or None (unknown)
    mode_source: str  # where it was read: result.json, lock.json, task.toml
    timeout: Timeout
    verifier_duration_s: float | None
    verifier_dates: str | None  # why the verifier phase's times give no duration (TimeSpan.problem)
    verifier_ran: bool | None  # None: result.json missing
    verifier_disabled: bool
    agent_failure: ExceptionRecord | None  # recorded, not a verifier exception
    verifier_exception: ExceptionRecord | LoggedFailure | None  # the verifier's own failure, wherever found
    verifier_exception_source: str | None  # "result.json", "exception.txt" (no result.json) or "trial.log"
    timed_out: bool
    agent_exit_code: int | None = None  # agent/exit-code.txt: the oracle's solve.sh failed (no exception recorded)

    def sentences(self, name: Callable[[str], str] = str) -> list[str]:
        """The facts in words; an exception type as ``name`` gives it (as :meth:`RootCause.headline`)."""
        out = []
        if self.verifier_mode is not None:
            how = (
                "a fresh container given only the collected artifacts"
                if self.verifier_mode == SEPARATE
                else "the agent's container, after the agent"
            )
            out.append(f"verifier mode: {self.verifier_mode} ({how}; from {self.mode_source})")
        out.append(f"effective verifier timeout: {self.timeout.words}")
        if self.verifier_duration_s is not None:
            out.append(f"the verifier phase took {duration_text(self.verifier_duration_s)}")
        elif self.verifier_dates is not None:  # no time at all, rather than one no clock measured
            dates = f"result.json's dates are not usable ({self.verifier_dates})"
            out.append(f"how long the verifier phase took is not known: {dates}")
        if self.verifier_disabled:
            out.append("the verifier was disabled for this job (verifier.disable)")
        elif self.verifier_ran is False:
            out.append("the verifier never ran")
        if self.agent_exit_code is not None:
            out.append(
                f"the agent exited {self.agent_exit_code} (agent/exit-code.txt); Harbor recorded no error for it"
            )
        if self.agent_failure is not None:
            failure = self.agent_failure  # Harbor records str(e): empty for an exception without a message
            out.append(f"the agent failed first: {exception_words(name(failure.type), failure.message)}")
        if self.verifier_exception is not None and self.verifier_exception_source == "trial.log":
            out.append(
                f"the verifier then failed too, recorded only in trial.log: "
                f"{exception_words(name(self.verifier_exception.type), self.verifier_exception.message)}"
            )
        if self.timed_out:
            out.append("the verifier timed out: Harbor stopped waiting and read no reward file")
        return out


def verifier_mode(trial: Trial, step: StepView, task: TaskConfig | None) -> tuple[str | None, str]:
    """The mode the verifier ran in, and where that was read."""
    if step.name is None and (recorded := trial.result.text("verifier_environment_mode")) is not None:
        return recorded, "result.json"
    if step.name is None and (locked := trial.lock.text("verifier", "environment_mode")) in ("shared", SEPARATE):
        return locked, "lock.json"
    if task is not None and task.unread is None:
        return task.verifier_mode(step.name), "task.toml"
    return None, f"unknown ({_unknown_why(task)})"


def _unknown_why(task: TaskConfig | None) -> str:
    """Why the task's settings are not known: no task, or a task.toml not read (:attr:`TaskConfig.unread`)."""
    return "the task was not found" if task is None else "task.toml was not read"


def effective_timeout(trial: Trial, step: StepView, task: TaskConfig | None) -> Timeout:
    """The verifier's timeout by Harbor's formula (module docstring)."""
    verifier = untrusted.table(trial.config.data, "verifier")
    override = _number(verifier.get("override_timeout_sec"))
    maximum = _number(verifier.get("max_timeout_sec"))
    multiplier = _number(trial.config.get("verifier_timeout_multiplier"))
    multiplier_name = "verifier_timeout_multiplier"
    if multiplier is None:
        multiplier = _number(trial.config.get("timeout_multiplier"))
        multiplier_name = "timeout_multiplier"
    if multiplier is None:
        multiplier = 1.0
    recorded = _recorded_timeout(step.exception) or _recorded_timeout(trial.exception if step.name is None else None)
    # `override or base`: Harbor's `or` lets an override of 0 fall through to the base.
    if override:
        base, base_words = override, f"override_timeout_sec {override:g}"
    elif task is not None and task.unread is None:
        base, base_words = _task_timeout(task, step.name)
    else:
        words = f"unknown: {_unknown_why(task)}"
        if recorded is not None:
            words += f"; the sandbox reported {duration_text(recorded)}"
        return Timeout(None, words, recorded)
    seconds = min(base, maximum if maximum else float("inf")) * multiplier
    parts = [base_words]
    if maximum and maximum < base:
        parts.append(f"capped by max_timeout_sec {maximum:g}")
    parts.append(f"× {multiplier_name} {multiplier:g}")
    if seconds == float("inf"):  # timeout_sec inf, a multiplier of inf or one past any float
        # No limit in Harbor; a replay of the agent's code that never ends helps no one.
        seconds = HARBOR_DEFAULT_VERIFIER_TIMEOUT_S
        when = duration_text(seconds)
        parts[0] = f"no limit in Harbor; the replay stops at Harbor's default {seconds:g}: {parts[0]}"
    elif seconds > 0:
        when = duration_text(seconds)
    else:  # 0 or less, or NaN: asyncio.wait_for gives up before the verifier runs (NaN too, on Python 3.12)
        when, seconds = f"{seconds:g} s, so Harbor gives up at once", seconds if -math.inf < seconds <= 0 else 0.0
    words = f"{when} ({', '.join(parts)})"
    if recorded is not None and abs(recorded - seconds) > 1e-6:
        words += f"; the sandbox reported {duration_text(recorded)} (the task or job changed since?)"
    return Timeout(seconds, words, recorded)


def _task_timeout(task: TaskConfig, name: str | None) -> tuple[float, str]:
    """The timeout task.toml gives the verifier (of step ``name``), and where it comes from, in words."""
    settings = task.verifier
    where = "[verifier]"
    step_settings = task.step(name)
    if name is not None:
        settings = step_settings.verifier if step_settings else type(task.verifier)()
        where = f"[steps.verifier] of {name}"
    base = settings.timeout_sec
    # A task that sets none is said so: "timeout_sec 600 (Harbor's default 600)" sent the user to
    # task.toml for a 600 it does not hold; nor does it hold the table of a step it no longer lists,
    # and one that is not TOML may hold either: it is said unread, as the note beside says it.
    if settings.timeout_given:
        base_words = f"task.toml {where} timeout_sec {base:g}"
    elif toml_unread(task):
        base_words = f"{TOML_UNREAD}: Harbor's default {base:g}"
    elif name is not None and step_settings is None:
        base_words = f"task.toml has no step '{shown_name(name)}': Harbor's default {base:g}"
    else:
        base_words = f"task.toml {where} sets no timeout_sec: Harbor's default {base:g}"
    if settings.gives_up_at_once is not None:  # 0 or less, or NaN: Harbor used it as it was
        base, base_words = settings.gives_up_at_once, f"task.toml {where} timeout_sec {settings.gives_up_at_once:g}"
    elif settings.harbor_timeout is not None:  # inf: no limit in Harbor, as below once multiplied
        base, base_words = settings.harbor_timeout, f"task.toml {where} timeout_sec inf"
    return base, base_words


def _number(value: object) -> float | None:
    """A number of config.json's, or None where Harbor's own float field would
    refuse it (not a number; an integer past any float)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return float(value)
    except OverflowError:
        return None


def _recorded_timeout(exception: ExceptionRecord | None) -> float | None:
    if exception is None or exception.type != VERIFIER_TIMEOUT:
        return None
    match = re.search(TIMEOUT_MESSAGE, exception.message)
    if match is None or match.group(1) == "None":
        return None
    try:
        return float(match.group(1))
    except ValueError:
        return None


def logged_verifier_failure(log_text: str) -> LoggedFailure | None:
    """The exception Harbor logged but did not record (see the module
    docstring): the traceback after the last "Skipping exception record"."""
    at = log_text.rfind(_SKIP_LINE)
    if at < 0:
        return None
    from verifier_tui.engine.harbor.runner_output import parse_runner_output

    block = log_text[at + len(_SKIP_LINE) :]
    # The next Harbor log line starts without indentation after the traceback's
    # final line; parse only the traceback itself.
    output = parse_runner_output(_first_traceback(block))
    if output.traceback is None:
        return None
    tb = output.traceback
    return LoggedFailure(tb.bare_type, tb.exception_message, tb.text)


def _first_traceback(block: str) -> str:
    lines = block.lstrip("\n").splitlines()
    if not lines or not lines[0].startswith("Traceback"):
        return ""
    out = [lines[0]]
    for line in lines[1:]:
        out.append(line)
        if line and not line[0].isspace() and not line.startswith(("Traceback", "The above", "During handling")):
            # An exception line; the chain goes on only after a blank line and a link sentence.
            following = lines[len(out) : len(out) + 2]
            if (
                not following
                or following[0].strip()
                or len(following) < 2
                or not following[1].startswith(("The above", "During handling"))
            ):
                break
    return "\n".join(out)


def trial_facts(trial: Trial, step: StepView, task: TaskConfig | None) -> TrialFacts:
    mode, source = verifier_mode(trial, step, task)
    timeout = effective_timeout(trial, step, task)
    verifier_cfg = untrusted.table(trial.config.data, "verifier")
    disabled = bool(verifier_cfg.get("disable"))
    # A failure before this pass: the step's own, or (single step) the trial's.
    recorded = step.exception if step.name is not None else (step.exception or trial.exception)
    agent_failure = recorded if recorded is not None and recorded.type not in VERIFIER_ERRORS else None
    verifier_exception: ExceptionRecord | LoggedFailure | None = None
    exception_source = None
    if recorded is not None and recorded.type in VERIFIER_ERRORS:
        verifier_exception = recorded
        exception_source = "result.json" if trial.result.ok else "exception.txt"
    elif agent_failure is not None and step.verifier is not None and step.name is None:
        # Only a single-step trial logs it: a step's verifier failure after its
        # agent failed is dropped without a word (MultiStepTrial._run_step_verifier).
        logged = logged_verifier_failure(trial.log_text)
        if logged is not None:
            verifier_exception, exception_source = logged, "trial.log"
    ran = (
        step.verifier is not None if step.recorded else untrusted.present(step.verifier_dir / "test-stdout.txt") or None
    )
    timed_out = verifier_exception is not None and verifier_exception.type == VERIFIER_TIMEOUT
    return TrialFacts(
        verifier_mode=mode,
        mode_source=source,
        timeout=timeout,
        verifier_duration_s=step.verifier.duration_s if step.verifier else None,
        verifier_dates=step.verifier.problem if step.verifier else None,
        verifier_ran=ran,
        verifier_disabled=disabled,
        agent_failure=agent_failure,
        verifier_exception=verifier_exception,
        verifier_exception_source=exception_source,
        timed_out=timed_out,
        agent_exit_code=agent_exit_code(step),
    )


def agent_exit_code(step: StepView) -> int | None:
    """A non-zero ``agent/exit-code.txt``: Harbor 0.26.0's ``OracleAgent.run``
    writes it when ``solve.sh`` exits non-zero, and raises nothing."""
    text = read_text_tail(step.agent_dir / "exit-code.txt", 64, beneath=step.trial_path)
    try:
        code = int((text or "").strip())
    except ValueError:
        return None
    return code or None
