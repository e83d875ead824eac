"""Everything about one trial (or one step of it), assembled for the screen
and for ``run TRIAL --json``; and the listing of a multi-step trial's steps.

:func:`walk_trial` reads the trial, finds the task, compares its digest,
reads the sandbox side and the facts, and gathers the replay's inputs.
:func:`trial_json` turns that (with the local run, when there was one) into
the JSON object ``run TRIAL --json`` prints. :func:`trial_entries` gives each
step of a multi-step trial with its sandbox verdict.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from verifier_tui.engine.failing import Location, failing_location
from verifier_tui.engine.harbor.agreement import Agreement, RunnerAlone, compare
from verifier_tui.engine.harbor.digest import TaskDigest, TaskDrift, compare_task
from verifier_tui.engine.harbor.facts import TrialFacts, trial_facts
from verifier_tui.engine.harbor.folders import StepView, Trial, shown_name
from verifier_tui.engine.harbor.inputs import VerifierEnv, WorkspaceInput, trial_workspace, verifier_env
from verifier_tui.engine.harbor.locate import TaskLocation, locate_task
from verifier_tui.engine.harbor.phases import Parting, PhaseReport, local_phases, recorded_frames, where_they_part
from verifier_tui.engine.harbor.replay import command_lacks_env, command_lacks_overlay
from verifier_tui.engine.harbor.root_cause import RootCause, root_cause
from verifier_tui.engine.harbor.sandbox import HarborVerdict, SandboxSide, read_sandbox
from verifier_tui.engine.model import Outcome, RunResult, at_line
from verifier_tui.engine.record import field, record, replace
from verifier_tui.engine.task.config import TaskConfig

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from verifier_tui.engine.harbor.facts import LoggedFailure
    from verifier_tui.engine.harbor.reading import ExceptionRecord
    from verifier_tui.engine.harbor.replay import ReplayPlan


@record
class TrialWalkthrough:
    trial: Trial
    step: StepView
    location: TaskLocation
    task: TaskConfig | None  # task.toml by the one reader (engine/task/config.py)
    drift: TaskDrift | None
    facts: TrialFacts
    sandbox: SandboxSide
    workspace: WorkspaceInput
    env: VerifierEnv | None
    cause: RootCause
    notes: list[str] = field(default_factory=list)

    @property
    def task_root(self) -> Path | None:
        return self.location.path


def walk_trial(
    trial: Trial,
    step: str | None = None,
    *,
    task_dir: Path | str | None = None,
    cache: Path | None = None,
    given: Mapping[str, str] | None = None,
    baseline: TaskDigest | None = None,
) -> TrialWalkthrough:
    """Read everything about ``trial`` (its step ``step``; the first when None).

    ``task_dir``: the task as the caller gives it (``--task DIR``), tried first.
    ``cache``: Harbor's cache folder (default ``~/.cache/harbor``).
    ``baseline``: the task's digest when it was last the run's (see :func:`compare_task`).
    ``given``: the ``--env`` values by name, the only ones a ``${VAR}`` of the trial's takes.
    """
    from verifier_tui.engine.task.discovery import read_task_config
    from verifier_tui.engine.task.harbor_text import read_once
    from verifier_tui.engine.task.loading import as_loaded_without_verifier

    view = trial.step(step)
    with read_once():  # finding the task, loading it and comparing it read its .gitignore and digest once
        location = locate_task(trial, task_dir, cache)
        task = read_task_config(location.path) if location.path is not None else None
        since = trial.started_at
        drift = compare_task(location.path, trial.recorded_digest, since, baseline) if location.path else None
        facts = trial_facts(trial, view, task)
        if task is not None and location.path is not None and facts.verifier_disabled:
            task = as_loaded_without_verifier(task, location.path)
    workspace = trial_workspace(trial, view, facts.verifier_mode)
    side = read_sandbox(trial, view, facts, task_root=location.path, workspace=workspace.path)
    notes = list(trial.notes)
    if task is not None and location.path is not None:  # one is there when the other is
        if not (location.path / "task.toml").is_file():
            notes.append("task.toml is missing: Harbor's defaults are assumed")
        notes += [f"{p}" for p in task.problems]
        if view.name is not None and task.steps and task.step(view.name) is None:
            known = ", ".join(shown_name(step.name) for step in task.steps)
            missing = f"the task has no step '{shown_name(view.name)}' (its steps: {known})"
            notes.append(f"{missing}: Harbor's defaults are assumed")
    if drift is not None and drift.unknown is not None:  # a changed task is said by the agreement
        notes += drift.sentences()
    return TrialWalkthrough(
        trial=trial,
        step=view,
        location=location,
        task=task,
        drift=drift,
        facts=facts,
        sandbox=side,
        workspace=workspace,
        env=verifier_env(trial, view.name, task, given),
        cause=root_cause(trial, view, facts, side),
        notes=notes,
    )


def agreement_of(
    walk: TrialWalkthrough,
    plan: ReplayPlan | None,
    local: RunResult | None,
    parting: Parting | None = None,
    alone: RunnerAlone | None = None,
) -> Agreement:
    """The sandbox against the local run of ``plan``; ``parting``: the first
    step where they went differently, said second when they disagree (unless
    it is the runner alone's, which ``alone`` tells)."""
    return compare(
        walk.sandbox,
        walk.facts,
        local,
        drift=walk.drift,
        workspace=plan.workspace_origin if plan else None,
        workspace_path=str(plan.workspace or plan.case or "") if plan else None,
        other_reasons=tuple(plan.reasons) if plan else (),
        parting=judged.words if (judged := judged_parting(parting, alone)) else None,
        alone=alone,
        task_refused=walk.task.refused if walk.task is not None else None,
    )


def local_failure(result: RunResult) -> Location | None:
    """The replay's failing line, as a task's run finds it (the innermost
    frame in the task's files, where a replay that timed out was stuck,
    test.sh's own line), through the same rule for a name the run wrote."""
    from verifier_tui.engine.harbor.runner_output import parse_runner_output, report_frames

    shell = parse_runner_output(result.stderr.text).shell_error if result.outcome is Outcome.TEST_SH_ENDED else None
    # The last exception report's frames, as the sandbox's side reads test-stdout.txt (sandbox.py): a frame
    # printed after it (an atexit handler's print_stack) made the two sides name different lines of one failure.
    # The last report is read, as the sandbox's side reads it (sandbox.read_sandbox, which has no exit code to go
    # by), except where verifier-tui's runner saw verify return (exit 0): a report is then one verify logged.
    # Judged by the task's test.sh, the runner's own ending is the one run beside it: a reward may be test.sh's,
    # written after the runner failed (`|| echo 0 > reward.txt`).
    if result.verdict_by == "test.sh":
        returned = (result.runner_verdict or {}).get("exit_code") == 0
    else:
        returned = result.outcome is Outcome.REWARD_WRITTEN
    frames = [] if returned else report_frames(result.stderr.text, whole_only=True)
    # Where stderr holds a report and the runner's phase record names what raised, the record's frames are the
    # failing line's: a report printed after it (an atexit callback's, a forged one) is another's, as the replay's
    # failed step names the record's exception. No report, no line: a test.sh that readies what the runner alone
    # lacked ended well, whatever the runner alone's record says.
    recorded = recorded_frames(result) if frames else None
    if recorded is not None:
        frames = list(recorded)
    return failing_location(result, frames, last=(shell.script, shell.line) if shell else None).location


def replay_view(
    walk: TrialWalkthrough, local: RunResult | None
) -> tuple[PhaseReport | None, Parting | None, Location | None]:
    """The replay's phases, where they part from the sandbox's, and its
    failing line. Where test.sh gave the verdict and verifier-tui's runner,
    run alone beside it, ended otherwise, the phases are that runner's: they
    are said as its own, and none of it is advice (the verdict is not its)."""
    if local is None:
        return None, None, None
    failure = local_failure(local)
    phases = local_phases(local, where=at_line(*failure) if failure else None, task_root=walk.task_root)
    alone = runner_alone_differs(local) and local.phases is not None
    if alone:
        phases = replace(phases, advice="")
    return phases, where_they_part(walk.sandbox.phases, phases, alone), failure


def judged_parting(parting: Parting | None, alone: RunnerAlone | None) -> Parting | None:
    """``parting`` when it is the judged run's, not the runner alone's (whose story tells it)."""
    return parting if alone is None or not alone.steps else None


def runner_alone_differs(local: RunResult) -> bool:
    """The task's test.sh gave the replay's verdict, and verifier-tui's runner,
    run alone on the same inputs, ended otherwise."""
    alone = local.runner_verdict
    return local.verdict_by == "test.sh" and alone is not None and not alone.get("agrees")


def _verdict_json(verdict: Any) -> dict[str, Any] | None:
    if verdict is None:
        return None
    return {
        "rewards": verdict.rewards,
        "error": verdict.error,
        "message": verdict.message,
        "source": verdict.source,
        "warnings": list(verdict.warnings),
    }


def _exception_json(failure: ExceptionRecord | LoggedFailure | None, **more: Any) -> dict[str, Any] | None:
    """A failure Harbor recorded, as the JSON says each: its type and message (None: there was none)."""
    return None if failure is None else {"type": failure.type, "message": failure.message, **more}


def trial_json(
    walk: TrialWalkthrough,
    *,
    plan: ReplayPlan | None = None,
    local: RunResult | None = None,
    local_skipped: str | None = None,
    view: tuple[PhaseReport | None, Parting | None, Location | None] | None = None,
    alone: RunnerAlone | None = None,
    cause: RootCause | None = None,
) -> dict[str, Any]:
    """The object ``run TRIAL --json`` prints (see docs/json-output.md).
    ``view``: :func:`replay_view`'s answer, when the caller has it already;
    ``alone`` and ``cause``: the replay's (:class:`~.trial_session.Replayed`)."""
    trial, side, facts = walk.trial, walk.sandbox, walk.facts
    local_report, parting, local_failing = view if view is not None else replay_view(walk, local)
    agreement = agreement_of(walk, plan, local, parting, alone)
    if local is None and local_skipped is None:
        if plan is not None and plan.skipped:
            local_skipped = plan.skipped
        elif not walk.location.found:
            local_skipped = walk.location.message()
        else:
            local_skipped = "no replay was asked for"
    recorded = side.recorded_exception
    drift = walk.drift
    return {
        "trial": {
            "path": str(trial.path),
            "name": trial.name,
            "job": str(trial.job_path) if trial.job_path else None,
            "task_name": trial.task_name,
            "task_path": str(walk.location.path) if walk.location.path else None,
            "task_found_by": walk.location.found_by,
            "task_not_found": None if walk.location.found else walk.location.message(),
            "task_digest": None
            if drift is None
            else {
                "recorded": drift.recorded,
                "local": drift.local,
                "same": drift.same,
                "modified_since": list(drift.modified_since),
                "tests_changed": drift.tests_changed,
                "changes": drift.sentences(),
            },
            "verifier_mode": facts.verifier_mode,
            "verifier_mode_source": facts.mode_source,
            "step": walk.step.name,
            "steps": [s.name for s in trial.steps if s.name is not None],
            "agent": trial.agent_name,
            "harbor_version": trial.harbor_version,
            "absent": list(trial.absent),
            "notes": list(walk.notes),
        },
        "sandbox": {
            "root_cause": (cause or walk.cause).to_json(),
            "rewards": side.recorded_rewards,
            "verdict": _verdict_json(side.computed),
            "harbor_verdict": side.verdict.to_json(),
            "exception_type": recorded.type if recorded else None,
            "exception_message": recorded.message if recorded else None,
            "verifier_exception": _exception_json(facts.verifier_exception, source=facts.verifier_exception_source),
            "recorded_disagrees": side.disagreement,
            "phase": side.phases.stopped_at,
            "phase_explanation": side.phases.explanation,
            "phase_advice": side.phases.advice,
            "phases": [p.to_json() for p in side.phases.phases],
            "failure": side.failure.to_json() if side.failure else None,
            "frames": [f.to_json() for f in side.frames],
            "output_kind": side.runner.kind,
            "contract_error": side.runner.contract_message,
            "python": side.runner.python_version,
            "reward_files": [f.to_json() for f in side.reward_files],
            "test_stdout": side.output.text,
            "test_stdout_state": side.output_state,
            "test_stdout_dropped_bytes": side.output.dropped_bytes,
            "timeout_s": facts.timeout.for_replay,
            "timeout": facts.timeout.words,
            "verifier_duration_s": facts.verifier_duration_s,
            "agent_failure": _exception_json(facts.agent_failure),
            "timed_out": facts.timed_out,
            "facts": facts.sentences(),
        },
        "replay": plan.to_json() if plan is not None else None,
        "local": local.to_json() if local is not None else None,
        # local.command is `run TASK`, which reads the task's env only and fills its templates from the user's
        # environment: the job's it leaves out, and the templates it fills otherwise, are named (as the TUI's c
        # says them), never their values.
        "command_lacks_env": command_lacks_env(plan, local.command) if local is not None and plan is not None else [],
        # and the step's own tests the replay laid over tests/, which it lays only with a --step the task has
        "command_lacks_overlay": command_lacks_overlay(plan, local.command)
        if local is not None and plan is not None
        else None,
        "local_skipped": None if local is not None else local_skipped,
        "local_phases": local_report.to_json() if local_report is not None else None,
        "local_failure": None if local_failing is None else {"path": str(local_failing[0]), "line": local_failing[1]},
        "judged_by": local.verdict_by if local is not None else None,
        "parted_at": judged.to_json() if (judged := judged_parting(parting, alone)) else None,
        "runner_alone": alone.to_json() if alone is not None else None,
        "same": agreement.same,
        # the refusal is the trial's result with a replay or without (no /app): said where a script looks for it
        "harbor_refuses_task": agreement.refused,
        "differences": list(agreement.differences),
        "story": list(agreement.story),
        # A replay runs what an agent wrote: in the copy sandbox it could write the user's files, said in words
        "copy_sandbox": local.copy_sandbox if local is not None else None,
    }


# --------------------------------------------------------------------------
# A job.


@record(frozen=True)
class JobEntry:
    """One line of a job's listing: a trial, or one step of a multi-step trial."""

    trial: str
    step: str | None
    path: Path
    verdict: HarborVerdict
    exception_type: str | None  # what result.json recorded for it (maybe the agent's)

    @property
    def label(self) -> str:
        return self.verdict.label()

    def to_json(self) -> dict[str, Any]:
        return {
            "trial": self.trial,
            "step": self.step,
            "path": str(self.path),
            "label": self.label,
            "rewards": self.verdict.rewards,
            "error": self.verdict.error,
            "source": self.verdict.source,
            "exception_type": self.exception_type,
        }


def trial_entries(trial: Trial) -> list[JobEntry]:
    """A trial's lines: one, or one per step. The task is not looked for:
    the sandbox verdict needs only the trial's own files."""
    out = []
    for view in trial.steps:
        facts = trial_facts(trial, view, None)
        side = read_sandbox(trial, view, facts, task_root=None, workspace=None)
        recorded = side.recorded_exception
        out.append(JobEntry(trial.name, view.name, trial.path, side.verdict, recorded.type if recorded else None))
    return out
