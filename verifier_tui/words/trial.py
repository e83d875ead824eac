"""The words both faces use for a Harbor trial: a verdict in a few words, a
phase's mark, the agreement in a line, the trial's header. No Textual here;
the screen's styles stay in the TUI."""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifier_tui.engine.advice import GIVE_TASK
from verifier_tui.engine.harbor.phases import DONE, FAILED, NOT_REACHED, STOPPED, UNKNOWN
from verifier_tui.engine.task.config import REFUSED_RESULT
from verifier_tui.words.run import IN_JSON, duration_text, more_text
from verifier_tui.words.text import one_line, one_name

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from verifier_tui.engine.changes import Change
    from verifier_tui.engine.harbor.agreement import Agreement
    from verifier_tui.engine.harbor.root_cause import RootCause
    from verifier_tui.engine.harbor.sandbox import HarborVerdict
    from verifier_tui.engine.harbor.trial_session import Replayed, TrialSession
    from verifier_tui.engine.harbor.walkthrough import TrialWalkthrough


def no_task_for(lacks: str) -> str:
    """What a key of the trial's screen cannot do when the trial's task was not
    found (``lacks``), and how to give the task, in the words the screen's
    header says it with (engine.advice.GIVE_TASK), once for every key."""
    return f"the task was not found, so {lacks}: {GIVE_TASK.flag}"


#: Why an option of a task's run is refused on a trial or job folder (None: harmless there), on
#: the command line and before the TUI opens one alike.
NOT_FOR_TRIALS = {
    "response": "a trial replays in Harbor mode, and Harbor never passes a response",
    "no_response": None,  # Harbor mode already: harmless
    "verifier": "a trial replays the verifier its task's tests/test.sh names",
    "task_data": "a trial replays with the task data the sandbox had (tests/task_data.json)",
    "both_modes": "a trial replays in Harbor mode only; --both-modes is for a task's case",
    "coverage": "a trial replays as its sandbox ran; coverage is for a task's cases (test TASK --coverage)",
    "coverage_report": "a trial replays as its sandbox ran; coverage is for a task's cases",
}


#: Options that mean something only for a trial or a job folder (argparse's names).
TRIAL_ONLY = ("trial", "task", "stand_in")


def only_for_trials(args: Any) -> str | None:
    """The options only a trial or job folder takes that ``args`` gives with its path,
    which is neither (the TUI on a task, run, explain, test, watch): said in one line;
    None when it gives none."""
    flags = [f"--{name.replace('_', '-')}" for name in TRIAL_ONLY if getattr(args, name, None) is not None]
    return (
        f"{' and '.join(flags)}: only for a Harbor trial or job folder, and {args.path} is neither" if flags else None
    )


#: A phase's status as a mark: the same in the text output and on the screen.
PHASE_MARKS = {DONE: "✓", FAILED: "✗", STOPPED: "⏱", NOT_REACHED: "·", UNKNOWN: "?"}


def verdict_words(verdict: HarborVerdict | None) -> str:
    """What Harbor scored (or would): the rewards, or the exception's name."""
    if verdict is None:
        return "no verdict"
    return verdict.label() if verdict.rewards is not None else one_name(verdict.label())  # an exception type


def read_from(verdict: HarborVerdict) -> str | None:
    """Where the sandbox's verdict was read (``result.json``); None when nothing recorded
    one (not finished, the verifier never ran): "from none" named a place there is not."""
    return verdict.source if verdict.source not in ("none", None) else None


def replay_words(replayed: Replayed) -> str:
    """The replay in a few words: its verdict and how the runner ended."""
    from verifier_tui.engine.harbor.agreement import local_verdict

    local = replayed.local
    if local is None:
        return "not replayed"
    # A task Harbor would refuse gets no verdict, whatever the replay wrote (as watch TASK's reward column says)
    verdict = REFUSED_RESULT if local.task_refused is not None else verdict_words(local_verdict(local))
    return f"{verdict} · {local.outcome_words} · {duration_text(local.duration_s)}"


def agreement_words(agreement: Agreement, skipped: str | None = None) -> tuple[str, str]:
    """``(word, sentence)``: same / differ / no replay, and why in a line."""
    if agreement.same is True:
        return "same", f"{agreement.judge} ended as the sandbox did"
    if agreement.same is False:
        return "differ", agreement.differences[0] if agreement.differences else "they differ"
    if agreement.refused is not None:  # Harbor would run nothing now: the refusal is the result (as watch TASK's)
        return "refused", agreement.differences[0]
    if skipped:
        return "no replay", skipped
    return "nothing to compare", agreement.differences[0] if agreement.differences else "no verdict on one side"


def not_passed(word: str, sentence: str) -> str:
    """Why a trial's replay did not pass, from :func:`agreement_words`, as
    ``test JOB --junit`` and the pytest plugin both say it (a CI moving from
    one to the other sees the same words): how the two differ, or why Harbor would
    refuse the task (replayed or not: no replay changes that), or that it was not
    replayed, or not compared, and why."""
    if word in ("differ", "refused"):
        return sentence
    return f"{'not replayed' if word in ('no replay', 'not replayed') else 'replayed, but not compared'}: {sentence}"


def agreement_lines(agreement: Agreement) -> list[str]:
    """What follows the agreement's sentence, in order: the runner alone's
    story (how it ended, where it parts from the sandbox, why), then what may
    make the two differ."""
    return [*agreement.story, *agreement.differences[1:]]


def wrong_key(report: Any) -> tuple[str, ...] | None:
    """What went wrong in a run's steps, to say only once when the sandbox and
    the replay went wrong the same way: the first wrong step and its error's
    name, or test.sh's own end before the runner."""
    wrong = report.first_wrong
    if wrong is not None:
        return (wrong.name, wrong.detail.split(":")[0])
    # "test.sh ended at tests/test.sh:9": the same line on both sides, whatever the tense after it.
    return ("test_sh", report.explanation.split(" (", 1)[0]) if report.stopped_at == "test_sh" else None


#: The header of the sandbox's column of the runner's steps, in the text output and on the screen:
#: its steps are inferred from what the sandbox printed. Short enough for the screen's column at 100
#: columns ("sandbox (inferred from its output)" was cut there).
SANDBOX_COLUMN = "sandbox (as its output shows)"


def replay_column(replayed: Replayed) -> str:
    """Whose steps the replay's column shows: the replay's, or verifier-tui's
    runner's run alone beside the task's test.sh, which gave the verdict."""
    alone = replayed.runner_alone
    return "runner alone" if alone is not None and alone.steps else "replay"


def agreement_mark(agreement: Agreement) -> str:
    return "?" if agreement.same is None else "✓" if agreement.same else "✗"


def cause_lines(cause: RootCause) -> list[str]:
    """The root cause first (the command line's words): the headline, what
    to try, and the verifier's part when the cause came before it."""
    out = [f"root cause  {cause.headline(one_name)}"]
    if cause.then:
        out.append(f"            {cause.then}")
    if cause.advice:
        out.append(f"            try: {cause.advice}")
    return out


def cause_label(walk: TrialWalkthrough) -> str:
    """A listing's few words: the sandbox's verdict, after the earlier
    failure that came first (``AgentTimeoutError → RewardFileNotFoundError``)."""
    cause, verdict = walk.cause, verdict_words(walk.sandbox.verdict)
    if cause.phase is None or cause.phase == "verifier":
        return verdict
    return f"{one_name(cause.what or '')} → {verdict}"


#: A replay's trigger once the trial folder went (``mv TRIAL x``, ``rm -r TRIAL``): its captured /app,
#: under it, was all the watcher saw go ("workspace deleted"). Short, as watch's column of triggers is.
TRIAL_FOLDER_GONE = "trial folder moved or gone"
#: A folder of jobs with none in it, as the TUI's list of jobs and the headless one say it.
NO_JOBS = "no job folders here (each holds job.log, config.json and one folder per trial)"


def change_words(opened: TrialSession, said: str, change: Change) -> str:
    """A change seen while a trial is open (what set a replay off, what made
    one stale), in words: ``said``, the change's own, unless it is the trial
    folder's going (the folder no longer there, and the change under it: its
    captured /app seen deleted): then that, not a deletion of the user's (the
    replay says why there is nothing to replay on). A save of the task's, or
    of a workspace of the user's, made after the folder went is that save."""
    trial = opened.trial.path
    under = any(path.is_relative_to(trial) for path in change.paths | change.deleted)
    return TRIAL_FOLDER_GONE if under and opened.trial.gone() is not None else said


def trial_header(walk: TrialWalkthrough) -> str:
    """``trial X · task T · agent A · verifier mode M`` (and the step)."""
    trial = walk.trial
    parts = [f"trial {one_line(trial.name)}"]
    if walk.step.name is not None:
        names = [step.name for step in trial.steps]
        # Without --step the first is replayed: the others are said, not left to be guessed.
        of = f" ({names.index(walk.step.name) + 1} of {len(names)}: --step NAME for another)" if len(names) > 1 else ""
        parts.append(f"step {one_line(walk.step.name)}{of}")
    parts.append(f"task {one_line(trial.task_name or '?')}")
    parts.append(f"agent {one_line(trial.agent_name or '?')}")
    parts.append(f"verifier mode {walk.facts.verifier_mode or 'unknown'}")
    return " · ".join(parts)


def task_found_at(path: str, found_by: str | None) -> tuple[str, str, str]:
    """``task found at X (how)``: where the task was found, said the same by
    the commands and the trial's screen, in three pieces a face styles apart
    (the words, the path as that face shows paths, how it was found)."""
    return "task found at ", path, f" ({found_by})"


def task_words(walk: TrialWalkthrough) -> list[str]:
    """The task said plainly: where it was found, or where it was looked for;
    whether it changed since the run."""
    location = walk.location
    if not location.found:
        return [location.message()]
    out = ["".join(task_found_at(str(location.path), location.found_by))]
    drift = walk.drift
    if drift is not None and drift.same is False:
        out += drift.sentences()
        out.append("a different replay result means little while the task differs from the one that ran")
    return out


def workspace_words(opened: TrialSession) -> str:
    plan = opened.plan
    if plan.skipped:
        return plan.skipped
    return plan.workspace_words or opened.walk.workspace.words


#: Lines of one side's detail shown under the phases (the whole is in --json).
DETAIL_LINES = 8


def step_detail(sandbox: Any, local: Any, parting: Any) -> list[str]:
    """The detail of the step where the sandbox and the replay part: each
    side's lines (the ``sys.path`` in order, the argument table, the reward
    files), which the one-line cells of the phase table cut. A traceback's
    lines are not repeated here: each side's output shows it whole. Empty when
    the two do not part or neither side has more to say."""
    if parting is None or parting.phase in ("module_imported", "verify_called"):
        return []
    out: list[str] = []
    for who, report in (("sandbox", sandbox), ("replay", local)):
        phase = next((p for p in report.phases if p.name == parting.phase), None) if report is not None else None
        if phase is None or not phase.lines:
            continue
        if not out:
            out.append(f"at {phase.label}:")
        out.append(f"  {who}:")
        out += [f"    {line}" for line in phase.lines[:DETAIL_LINES]]
        if len(phase.lines) > DETAIL_LINES:
            out.append(f"    ... {len(phase.lines) - DETAIL_LINES} more (--json has them all)")
    return out


#: The notes of a job's folder shown before a count: a folder of 5,000 stray folders is not 5,000 lines.
NOTES_SHOWN = 20


def folder_notes(problems: Sequence[str], whose: str = "", where: str = IN_JSON, shown: int = NOTES_SHOWN) -> list[str]:
    """What of a job's folder is no trial (a link, a stray folder), a
    ``note:`` line each (``whose``: ``"A: "``), ``shown`` of them, then a count
    (``where``: where the rest are), in ``test JOB``, ``run JOB``, ``compare`` and the TUI alike."""
    out = [f"note: {whose}{one_line(problem)}" for problem in problems[:shown]]
    if len(problems) > shown:
        out.append(f"note: {whose}{more_text(len(problems) - shown, 'notes', where)}")
    return out
