"""Whether the sandbox and a local replay ended the same way, and when not,
the reasons that can be known, in words.

"The same way" is Harbor's verdict: the same rewards (as numbers: 1 == 1.0),
or the same exception type. A local run that timed out already carries
``VerifierTimeoutError`` as its verdict (:func:`verifier_tui.engine.verdict.timeout_verdict`),
which is what Harbor records for it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from verifier_tui.engine.harbor.phases import VERBS
from verifier_tui.engine.harbor.sandbox import HarborVerdict, SandboxSide, same_rewards
from verifier_tui.engine.model import UNKNOWN, Outcome, RunResult, duration_text, timed_out_words
from verifier_tui.engine.record import record
from verifier_tui.engine.task.config import refused_words
from verifier_tui.engine.verdict import VERIFIER_TIMEOUT

if TYPE_CHECKING:
    from typing import Any

    from verifier_tui.engine.harbor.digest import TaskDrift
    from verifier_tui.engine.harbor.facts import TrialFacts
    from verifier_tui.engine.harbor.phases import Parting

_PYTHON_IN_PATH = re.compile(r"/python(\d+\.\d+)(?:/|$)")


#: The replay, named in the agreement's sentence: the run that gave its verdict.
REPLAY = "the replay"
BY_TEST_SH = "the replay (the task's test.sh, run as the sandbox ran it)"


@record(frozen=True)
class RunnerAlone:
    """verifier-tui's runner, run alone on the same inputs beside the task's
    test.sh (which gave the verdict), ended otherwise: how (``verdict``, the
    RunResult's ``runner_verdict``), where it parts from the sandbox and why.
    ``steps``: the replay's steps shown are its own (not when the script
    ended before it started the runner: they are the script's then)."""

    verdict: dict[str, Any]
    parting: Parting | None
    why: str
    steps: bool = True

    @property
    def ended(self) -> str:
        """How it ended: ``1.0 (reward written)``."""
        label = HarborVerdict(self.verdict.get("rewards"), self.verdict.get("verdict_error"), "", "replay").label()
        return f"{label} ({self.verdict.get('outcome_words')})"

    def lines(self) -> tuple[str, ...]:
        """The story after the agreement's sentence, in order: how the runner
        alone ended, where it parts from the sandbox, why."""
        out = [f"verifier-tui's runner alone, on the same inputs, ended otherwise: {self.ended}"]
        parting = self.parting
        if parting is not None:  # each side's detail is beside the steps: this line is the same for many trials
            out.append(
                f"it parts from the sandbox at '{parting.label}': the sandbox {VERBS[parting.sandbox]}, "
                f"the runner alone {VERBS[parting.local]}"
            )
        out.append(f"why: {self.why}")
        return tuple(out)

    def to_json(self) -> dict[str, Any]:
        return {
            **{key: self.verdict.get(key) for key in ("outcome", "exit_code", "rewards", "verdict_error")},
            "parted_at": self.parting.to_json() if self.parting is not None else None,
            "why": self.why,
        }


@record(frozen=True)
class Agreement:
    same: bool | None  # None: no replay, or nothing to compare against
    differences: tuple[str, ...] = ()
    judge: str = REPLAY  # the run whose verdict was compared, in words
    story: tuple[str, ...] = ()  # said after the sentence, same or not: the runner alone's (RunnerAlone.lines)
    refused: str | None = None  # why Harbor would refuse the task as it is now (TaskConfig.refused): not compared


def local_verdict(result: RunResult) -> HarborVerdict | None:
    """What Harbor would have recorded for the local run; None when it did not start."""
    if result.outcome is Outcome.COULD_NOT_START:
        return None
    verdict = result.verdict
    return HarborVerdict(
        dict(verdict.rewards) if verdict.rewards is not None else None, verdict.error, verdict.message or "", "replay"
    )


def same_verdict(a: HarborVerdict, b: HarborVerdict) -> bool:
    if a.rewards is not None or b.rewards is not None:
        return same_rewards(a.rewards, b.rewards)
    return a.error not in (None, UNKNOWN) and a.error == b.error  # two links say nothing of what they held


def local_python_version(result: RunResult) -> str | None:
    """``X.Y`` of the interpreter the replay ran, from the runner's explain document."""
    explain = result.explain
    if explain is None:
        return None
    version = explain.python.version if explain.python is not None else ""
    if version.count(".") >= 1:
        return ".".join(version.split(".")[:2])
    for row in explain.sys_path:
        match = _PYTHON_IN_PATH.search(row.path)
        if match:
            return match.group(1)
    return None


def compare(
    side: SandboxSide,
    facts: TrialFacts,
    local: RunResult | None,
    *,
    drift: TaskDrift | None = None,
    workspace: str | None = None,
    workspace_path: str | None = None,
    other_reasons: tuple[str, ...] = (),
    parting: str | None = None,
    alone: RunnerAlone | None = None,
    task_refused: str | None = None,
) -> Agreement:
    """``workspace``: where the replay's workspace came from: ``exact`` (the
    artifact, separate mode), ``snapshot`` (the artifact, shared mode),
    ``stand-in`` (the user's folder or a case) or None. ``other_reasons``:
    what the replay's plan already knows could differ (a variable missing
    from the environment, another runner), said only when the two differ.
    ``parting``: the first step where the two runs went differently, said
    right after the verdicts. ``alone``: the task's test.sh gave the verdict
    and verifier-tui's runner, run alone, ended otherwise: its story is told
    after the sentence, which names test.sh as the judge. ``task_refused``: why Harbor would
    refuse the task as it is now (TaskConfig.refused), for when there is no replay to say it."""
    refused = local.task_refused if local is not None else task_refused
    if refused is not None:
        # Harbor would not load the task as it is now, so it would run no verifier and record no verdict
        # (as run TASK says "none"): the replay's own reward or exception is nothing to set beside the sandbox's,
        # and with no replay (no /app) that refusal is still the result, whatever a workspace would hold.
        return Agreement(None, (refused_words(refused),), refused=refused)
    if local is None:
        return Agreement(None)
    mine = local_verdict(local)
    if mine is None:
        return Agreement(None, (f"the replay could not start: {local.start_error}",))
    theirs = side.verdict
    if not theirs.known:
        return Agreement(None, (f"the sandbox has no verdict to compare with: {theirs.message}",))
    judge, story = (BY_TEST_SH, alone.lines()) if alone is not None else (REPLAY, ())
    if same_verdict(theirs, mine):
        return Agreement(True, judge=judge, story=story)
    headline = [f"the sandbox ended with {theirs.label()}, {judge} with {mine.label()}"]
    if parting:
        headline.append(parting)
    reasons: list[str] = []
    if side.phases.stopped_at == "test_sh" and local.verdict_by != "test.sh":
        # The sandbox's script ended before its runner: a replay without the script cannot end so.
        reasons.append(
            f"in the sandbox, {side.phases.explanation.split(';')[0]}; the replay ran verifier-tui's runner "
            "without the script, which it runs only in the sandbox's view (/tests and /app, as the script names them)"
        )
    if drift is not None and drift.same is False:
        reasons += drift.sentences()
    # What the plan knows (a template filled here, a variable missing) is this trial's own: said before
    # the snapshot, which every shared-mode replay stands on.
    reasons += list(other_reasons)
    if workspace == "snapshot":
        reasons.append(
            "the workspace is the shared-mode snapshot taken before the verifier ran, in the same "
            "container as the agent: not necessarily what the verifier saw"
        )
    elif workspace == "stand-in":
        shown = f" ({workspace_path})" if workspace_path else ""
        # Not "because the trial did not capture /app": one chosen on screen may replace a captured one.
        reasons.append(f"the workspace is your stand-in{shown}, not what the verifier saw")
    sandbox_timeout = theirs.error == VERIFIER_TIMEOUT
    local_timeout = mine.error == VERIFIER_TIMEOUT
    if sandbox_timeout and not local_timeout:
        limit = facts.timeout.for_replay
        reasons.append(
            f"the sandbox timed out{_after(limit)} and the replay did not (it took {duration_text(local.duration_s)})"
        )
    elif local_timeout and not sandbox_timeout:
        took = facts.verifier_duration_s
        ran = f" (its verifier phase took {duration_text(took)})" if took is not None else ""
        reasons.append(f"the replay timed out {timed_out_words(local.inputs.timeout_s)} and the sandbox did not{ran}")
    theirs_python = side.runner.python_version
    mine_python = local_python_version(local)
    if theirs_python and mine_python and theirs_python != mine_python:
        reasons.append(
            f"a different Python: the sandbox ran {theirs_python} (seen in its traceback's paths), "
            f"the replay {mine_python}"
        )
    reasons += _nemo_gym_reasons(side, local)
    if not reasons:
        reasons.append(
            "none of the known causes applies (task, workspace, timeout, Python, nemo_gym, "
            "environment): compare the two outputs"
        )
    return Agreement(False, tuple(headline + reasons), judge, story)


def _after(seconds: float | None) -> str:
    return f" {timed_out_words(seconds)}" if seconds is not None else ""


def _nemo_gym_reasons(side: SandboxSide, local: RunResult) -> list[str]:
    out = []
    elsewhere = sorted(
        {f.split("/nemo_gym/")[0] for f in side.runner.nemo_gym_files if not f.startswith("/tests/.ng/nemo_gym/")}
    )
    if elsewhere:
        out.append(f"in the sandbox, nemo_gym resolved outside the vendored tests/.ng copy ({', '.join(elsewhere)})")
    tb = side.runner.traceback
    found = local.explain.modules.get("nemo_gym") if local.explain is not None else None
    resolved_here = found.resolved if found is not None else None
    if (
        tb is not None
        and tb.bare_type in ("ModuleNotFoundError", "ImportError")
        and "nemo_gym" in tb.exception_message
        and resolved_here
    ):
        out.append(
            f"the sandbox could not import nemo_gym (nothing vendored in tests/.ng), while the replay "
            f"found it at {resolved_here}"
        )
    return out
