"""The headless commands on Harbor trial and job folders, and ``run --both-modes``.

``run TRIAL`` walks one trial (or step) through: what the sandbox did, the
same verifier replayed locally in Harbor mode, the runner's phases side by
side, where they part and what to try next; it exits with the replay's
status, or 2 when there was no replay. ``test JOB`` replays every trial (and
step) in parallel and exits 0 only when every replay ended as its sandbox
did. ``explain TRIAL`` shows the sandbox side and how the replay would import
and call ``verify``. ``watch TRIAL`` replays on every change to the task, one
line per replay with the agreement. ``--json`` documents: docs/json-output.md.

:mod:`verifier_tui.commands.headless` hands a path over here when it names a trial or
job folder (:func:`dispatch`, on the command line's ``args.target``).

Over 500 lines: the four commands print one TrialSession each in their own
shape (a walkthrough, a table, a stream), and they share its words here.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from verifier_tui.commands import stopping, terminal
from verifier_tui.engine.procfs import shell_word
from verifier_tui.engine.record import record
from verifier_tui.engine.task.config import REFUSED_RESULT, refusal_first
from verifier_tui.words.paths import pasted
from verifier_tui.words.text import one_line, one_name

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence
    from pathlib import Path
    from typing import Any

    from verifier_tui.commands.report import JunitCase
    from verifier_tui.engine.changes import Change
    from verifier_tui.engine.harbor.folders import Job, Trial, TrialRef
    from verifier_tui.engine.harbor.replay import StandIn
    from verifier_tui.engine.harbor.trial_session import Replayed, TrialSession
    from verifier_tui.engine.harbor.walkthrough import TrialWalkthrough
    from verifier_tui.engine.readback import Explanation
    from verifier_tui.engine.suite import Collection, JobTrials, NotReplayed


def dispatch(args: argparse.Namespace, command: str) -> int | None:
    """The command's exit status when ``args.target`` is a trial or job folder;
    None for any other path (after refusing the trial-only options)."""
    if not args.target.harbor:
        from verifier_tui.words.trial import only_for_trials

        refused = only_for_trials(args)
        return terminal.refuse(refused) if refused is not None else None
    # Imported here, as the rest of words.trial in this module: a task's run never loads the trial words.
    from verifier_tui.words.trial import NOT_FOR_TRIALS

    refuse = terminal.refuse if command != "test" else (lambda message: _refused_test(args, message))
    if command == "test" and getattr(args, "step", None) is not None:
        return refuse("--step: test replays every step of every trial; --step is for a task, or one trial's run")
    for name, why in NOT_FOR_TRIALS.items():
        if why is not None and getattr(args, name, None) not in (None, False):
            return refuse(f"--{name.replace('_', '-')}: {why}")
    stand_in = stand_in_of(args)
    if isinstance(stand_in, str):
        return refuse(stand_in)
    args.stand_in_chosen = stand_in
    return {"run": run_command, "explain": explain_command, "test": test_command, "watch": watch_command}[command](args)


def _test_reads(args: argparse.Namespace) -> list[tuple[str, Path | None]]:
    """What ``test`` reads, which its --junit file may not be (report.output_file_problem)."""
    from verifier_tui.commands.report import given

    return [(f"the {args.target.kind} folder", args.target.root), ("the task", args.task), *given(args.options)]


def _refused_test(args: argparse.Namespace, message: str) -> int:
    """``test`` refused before anything ran: its --junit report written with the refusal,
    as on a task (report.refused_run): the report of the last run, passing, was left for CI."""
    from verifier_tui.commands.report import refused_run

    return refused_run(args.junit, message, _test_reads(args))


def python_problem(args: argparse.Namespace) -> str | None:
    """Why ``--python`` cannot run the replay, in one line (None: it can). Bad input
    here as on a task (report.interpreter_problem): one line, exit 2, before anything
    runs; else each replay ended at the shim's "not found" (exit 127 after a whole
    walkthrough; test JOB exit 1). Asked only where a replay will run: the list of
    jobs, a job's overview, a trial with no /app to replay on need no interpreter."""
    from verifier_tui.words.run import python_words

    return python_words(args.options.interpreter())


def stand_in_of(args: argparse.Namespace) -> StandIn | str:
    """The stand-in for an uncaptured /app the command line gives (``--workspace
    DIR``, ``--case NAME``, ``--stand-in empty``), or why it is bad input, in
    one line: at most one may be given. ``test`` reads its ``--case`` here."""
    from verifier_tui.engine.harbor.replay import StandIn

    case = args.options.case
    patterns = getattr(args, "case_patterns", None) or []
    if len(patterns) > 1:
        return (
            f"--case: a Harbor job takes one case of its task, the stand-in for /app where a trial did "
            f"not capture it (given: {', '.join(patterns)})"
        )
    if patterns:
        case = patterns[0]
    stand_in = StandIn(workspace=args.options.workspace, case=case, empty=getattr(args, "stand_in", None) == "empty")
    # A folder that is not there is bad input, as --workspace is on a task and --verifier-workspace to the plugin:
    # one line before anything runs (each replay said it, after the whole walkthrough, and explain exited 0).
    return stand_in.problem("--workspace", "--case", "--stand-in empty") or stand_in


def stand_in_lines(stand_in: StandIn | None, used: list[str], unused: list[str]) -> list[str]:
    """Which trials the stand-in served (those that did not capture /app) and
    which it did not, names cut to a few and a count."""
    from verifier_tui.engine.task.kinds import some_names

    if stand_in is None or stand_in.words is None:
        return []
    used, unused = [one_line(n) for n in used], [one_line(n) for n in unused]
    out = []
    if used:
        out.append(
            f"stand-in {stand_in.words} used for {len(used)} trial(s) that did not capture /app: {some_names(used)}"
        )
    if unused:
        out.append(
            f"stand-in {stand_in.words} not used for {len(unused)} trial(s) that captured /app: {some_names(unused)}"
        )
    return out


# ---------------------------------------------------------------------------
# Opening


def _open(args: argparse.Namespace) -> tuple[Trial | Job, str | None] | int:
    from verifier_tui.engine.harbor.folders import HarborFolderError, open_harbor

    try:
        return open_harbor(args.target)
    except HarborFolderError as exc:
        return terminal.refuse(str(exc))


def open_trial_session(args: argparse.Namespace) -> TrialSession | int:
    """The trial (and step) the command line names, opened for replays; or
    the exit status after one line on stderr."""
    from verifier_tui.engine.harbor.folders import HarborFolderError, select_trial
    from verifier_tui.engine.harbor.trial_session import TrialSession

    shown = show_job_without_trial(args)
    if shown is not None:
        return shown
    opened = _open(args)
    if isinstance(opened, int):
        return opened
    found, step_in_path = opened
    try:
        typed = getattr(args, "step", None)
        trial, step = select_trial(found, getattr(args, "trial", None), typed or step_in_path, typed_step=bool(typed))
    except HarborFolderError as exc:
        return terminal.refuse(str(exc))
    session = TrialSession(trial, step, options=args.options, stand_in=args.stand_in_chosen, task_dir=args.task)
    # explain runs the runner (--explain) without a workspace too, as TrialSession.explain does
    replays = session.session is not None or (args.command == "explain" and session.plan.no_workspace)
    problem = None
    if replays:
        from verifier_tui.commands.report import sandbox_problem

        # before the first replay: watch TRIAL said it as that replay's failure, then watched on for saves
        problem = python_problem(args) or sandbox_problem(session.session)
    if problem is not None:
        session.close()
        return terminal.refuse(problem)
    return session


# ---------------------------------------------------------------------------
# A job or a folder of jobs, no trial chosen: shown, as the TUI shows it


#: Trials listed by name in the text overview; --json lists them all.
TRIALS_LISTED = 20


def show_job_without_trial(args: argparse.Namespace) -> int | None:
    """``run|explain|watch JOB`` with no ``--trial`` on a job of several
    trials (or on a folder of jobs): the overview, and how to choose one;
    exit 0, as the overview is what was asked for (2 is for bad input).
    None when there is one trial to open."""
    from verifier_tui.engine.harbor.overview import first_trials

    kind, folder = args.target.kind, args.target.root
    if kind not in ("job", "jobs") or getattr(args, "trial", None) is not None:
        return None
    if kind == "job" and len(first_trials(folder)) == 1:
        return None
    # Each hint goes on with the command typed (explain JOB: explain one trial), not always a replay
    if kind == "jobs":
        print_jobs(folder, args.json, args.command)
    else:
        print_overview(folder, args.json, args.command)
    return 0


def print_jobs(folder: Path, as_json: bool, command: str) -> None:
    from verifier_tui.engine.harbor.overview import read_jobs
    from verifier_tui.words.trial import NO_JOBS, folder_notes

    problems: list[str] = []  # a link, a stray folder: said as test JOBS says them
    jobs = read_jobs(folder, notes=problems)
    if as_json:
        terminal.out_json(
            {
                "jobs_folder": str(folder),
                "jobs": [job.to_json() for job in jobs],
                "problems": problems,
                "choose": f"verifier-tui {command} JOBS/JOB --trial NAME",
            }
        )
        return
    counted = any(job.trial_folders is not None for job in jobs)  # a job without a usable result.json
    terminal.say(
        f"jobs folder {folder.name} · {len(jobs)} job{'s' * (len(jobs) != 1)} (latest started first; "
        f"each as its result.json recorded it{', or its trial folders counted where it has none' * counted}: "
        "open one for its trial folders)"
    )
    rows = [("job", "started", "agent (model)", "trials", "Harbor's mean", "how they ended")]
    for job in jobs:
        rows.append(
            (
                job.name,
                job.started_at.strftime("%Y-%m-%d %H:%M") if job.started_at else "-",
                ", ".join(one_name(agent) for agent in job.agents) or "-",
                job.trials_words,
                job.mean_words,
                job.ended_words,
            )
        )
    _table(rows)
    for line in folder_notes(problems):
        terminal.say(line)
    if not jobs:
        terminal.say(NO_JOBS)
    else:
        terminal.out(f"see one job: verifier-tui {command} {pasted(jobs[0].path)}")


#: What the overview's hint offers to do with one trial, by the command typed.
_ONE_TRIAL = {"run": "replay one", "explain": "explain one", "watch": "watch one"}


def print_overview(folder: Path, as_json: bool, command: str) -> None:
    from verifier_tui.engine.harbor.folders import LOCK
    from verifier_tui.engine.harbor.overview import (
        AS_READ,
        STILL_RUNNING,
        job_not_ended,
        mean_words,
        read_overview,
        select_rows,
    )
    from verifier_tui.engine.harbor.reading import read_json
    from verifier_tui.engine.task.kinds import some_names
    from verifier_tui.words.trial import folder_notes

    overview = read_overview(folder)
    name = folder.name  # as every job and trial is named: by its folder
    version = read_json(folder / LOCK, beneath=folder).text("harbor", "version")
    names = [row.name for row in overview.rows]
    choose = f"verifier-tui {command} {shell_word(str(folder))} --trial NAME"  # pasted back as one word
    problems = overview.notes  # a link, a stray folder: said as test JOB says them
    # Harbor still running the job, or stopped: as the TUI's overview says it (it went unsaid here)
    running = overview.still_running(job_not_ended(folder))
    if as_json:
        job = {"path": str(folder), "name": name, "harbor_version": version, "still_running": running}
        job |= overview.to_json()
        terminal.out_json({"job": {**job, "problems": list(problems)}, "choose": choose})
        return
    terminal.say(
        f"job {one_line(str(name))} · {overview.total} trial{'s' * (overview.total != 1)} · "
        f"{one_line(', '.join(one_name(agent) for agent in overview.agents())) or '-'}"
        + (f" · Harbor {version}" if version else "")
    )
    counts = ", ".join(f"{n} {one_name(outcome)}" for outcome, n in overview.counts())
    terminal.say("ended   " + (counts or "no trial folders"))
    for index, line in enumerate(overview.reward_lines(one_name)):
        terminal.say(("reward  " if index == 0 else "        ") + one_line(line))
    tokens = overview.token_words()
    if tokens:
        terminal.say(f"agent   {tokens}")
    if running:
        terminal.say(one_line(STILL_RUNNING + running + AS_READ))
    terminal.say("")
    rows = [("task", "trials", "passed", "mean", "errors")]
    tasks = list(overview.tasks.values())
    for task in tasks[:TRIALS_LISTED]:
        rows.append(
            (
                one_name(task.task),
                str(task.trials),
                str(task.passed),
                mean_words(task),
                str(task.errors),
            )
        )
    _table(rows)
    if len(tasks) > TRIALS_LISTED:
        terminal.say(f"... and {len(tasks) - TRIALS_LISTED} more tasks (--json lists them all)")
    terminal.say("")
    failures = select_rows(overview.rows, failures=True, sort="outcome")
    shown = failures or overview.rows
    terminal.say(f"{'trials that did not pass' if failures else 'trials'} ({len(shown)} of {overview.total}):")
    rows = [("trial", "task", "ended", "reward", "duration")]
    for row in shown[:TRIALS_LISTED]:
        rows.append(
            (
                row.name,
                one_name(row.task),
                f"{row.mark} {one_name(row.outcome_words)}",
                row.reward_text,
                "-" if row.duration_s is None else f"{row.duration_s:.1f} s",
            )
        )
    _table(rows)
    if len(shown) > TRIALS_LISTED:
        terminal.say(f"... and {len(shown) - TRIALS_LISTED} more (--json lists them all)")
    for line in folder_notes(problems):
        terminal.say(line)
    if names:
        pick = f"verifier-tui {command} {pasted(folder)} --trial NAME"
        terminal.out(f"{_ONE_TRIAL[command]}: {pick} ({some_names([one_line(n) for n in names])})")


def _table(rows: Sequence[tuple[str, ...]]) -> None:
    from verifier_tui.commands.report import table_lines

    for line in table_lines(rows):
        terminal.say(line)


# ---------------------------------------------------------------------------
# run TRIAL


def run_command(args: argparse.Namespace) -> int:
    opened = open_trial_session(args)
    if isinstance(opened, int):
        return opened
    with opened:
        name = getattr(args, "save_case", None)
        if name is not None:
            from verifier_tui.engine.keep_case import refusal

            problem = (
                refusal(opened.session.task.root, name, opened.session.workspace)
                if opened.session is not None
                else f"--save-case: there is no replay to keep as a case: {opened.skipped or 'the task was not found'}"
            )
            if problem:
                return terminal.refuse(problem)
        replayed = opened.run(trigger="command line")
        saved = None
        if name is not None and opened.session is not None:
            from verifier_tui.engine.keep_case import save

            saved = (
                save(replayed.local, opened.session.task, name)
                if replayed.local is not None
                else {"folder": None, "files": [], "notes": [], "problem": "there was no replay to keep as a case"}
            )
        if args.json:
            data = opened.to_json(replayed)
            if saved is not None:
                data["saved_case"] = saved
            terminal.out_json(data)
        else:
            print_walkthrough(opened, replayed)
            if saved is not None:
                from verifier_tui.commands.report import saved_case_lines

                for line in saved_case_lines(saved):
                    terminal.say(line)
    if saved is not None and saved["problem"] is not None:
        return 2
    return replayed.local.exit_status if replayed.local is not None else 2


def print_walkthrough(opened: TrialSession, replayed: Replayed, word: Callable[[str], str] = str) -> None:
    """``run TRIAL``'s readable output: the verdicts and the agreement first,
    then the phases side by side, what went wrong and what to try, the
    facts, and the two outputs. ``word`` words every engine sentence that
    may name an option (why there was no replay, the agreement and its
    differences, the notes, what to try): the pytest plugin passes its own."""
    from verifier_tui.words.trial import agreement_lines, agreement_words, cause_lines, task_words, trial_header

    walk = opened.walk
    side = walk.sandbox
    terminal.say(trial_header(walk))
    for line in task_words(walk):  # where the task was looked for ends in what to give: worded too
        terminal.say(f"  {word(line)}")
    terminal.say("")
    for line in cause_lines(replayed.cause):
        terminal.say(line)
    for line in sandbox_lines(walk):
        terminal.say(line)
    _say_replay(opened, replayed, word)
    if replayed.local is None and replayed.agreement.refused is None:
        terminal.say("agreement not known without a replay")
    else:  # a task Harbor would refuse: that is the result, replayed or not
        how, sentence = agreement_words(replayed.agreement, replayed.skipped)
        terminal.say(f"agreement {how}: {word(sentence)}")
    for line in agreement_lines(replayed.agreement):  # a reason may be a note's advice (a filled template)
        terminal.say(f"          - {word(line)}")
    terminal.say("")
    print_phases(opened, replayed, word)
    terminal.say("")
    terminal.say("facts:")
    for fact in walk.facts.sentences(one_name):
        terminal.say(f"  {fact}")
    # A refusal is the agreement's line above, said whole there: not again as a note, nor as one that
    # starts with it (a task.toml not TOML: "...; the run uses the defaults", which the replay line shows ran).
    said = replayed.agreement.differences if replayed.agreement.refused is not None else ()
    for note in [*trial_notes(walk), *(replayed.local.notices if replayed.local else [])]:
        if not note.startswith(said):
            terminal.say(f"  note: {one_line(word(note))}")
    terminal.say(f"── sandbox: verifier/test-stdout.txt {'─' * 30}")
    terminal.out(side.output_shown)
    if replayed.local is not None:
        for name, captured in (("stdout", replayed.local.stdout), ("stderr", replayed.local.stderr)):
            if captured.text.strip():
                terminal.say(f"── replay: {name} {'─' * 40}")
                terminal.out(captured.text.rstrip("\n"))


def _say_replay(opened: TrialSession, replayed: Replayed, word: Callable[[str], str]) -> None:
    """``run TRIAL``'s replay line, and under it its workspace, sandbox and where it stopped; or why there was none."""
    from verifier_tui.words.run import stuck_line
    from verifier_tui.words.trial import replay_words, workspace_words

    if replayed.local is None:
        terminal.say(f"replay    none: {word(replayed.skipped or '')}")
        return
    terminal.say(f"replay    {replay_words(replayed)}")
    terminal.say(f"          workspace: {workspace_words(opened)}")
    if replayed.local.copy_sandbox:  # it ran what an agent wrote, able to write the user's files
        terminal.say(f"          {replayed.local.copy_sandbox}")
    stuck = stuck_line(replayed.local.stack, str)  # terminal.say shortens its paths
    if stuck is not None:
        terminal.say(f"          {stuck}")
    elif replayed.failure is not None:
        terminal.say(f"          failed at {replayed.failure[0]}:{replayed.failure[1]}")


def sandbox_lines(walk: TrialWalkthrough) -> list[str]:
    """What the sandbox scored, where that was read from (result.json, or
    exception.txt and the reward files when result.json could not be read),
    whether the reward files tell another story, and where it failed: said
    alike by ``run TRIAL`` and ``explain TRIAL``."""
    from verifier_tui.words.trial import read_from, verdict_words

    side = walk.sandbox
    source = read_from(side.verdict)
    out = [f"sandbox   {verdict_words(side.verdict)}" + (f" (from {source})" if source else "")]
    if side.disagreement:
        out.append(f"          note: {side.disagreement}")
    if side.failure is not None:
        out.append(f"          failed at {side.failure.at(side.failure.local_path or side.failure.sandbox_path)}")
    return out


def trial_notes(walk: TrialWalkthrough) -> list[str]:
    """The notes on the trial's own files (result.json cut short or a link,
    a file missing), which ``run TRIAL`` and ``explain TRIAL`` both say."""
    return [*walk.notes, *walk.trial.absent]


def print_phases(opened: TrialSession, replayed: Replayed, word: Callable[[str], str] = str) -> None:
    """The phases in two columns, the first wrong step of each side explained
    (what to try in the words of ``word``, as :func:`print_walkthrough`'s)."""
    from verifier_tui.words.trial import PHASE_MARKS, SANDBOX_COLUMN, replay_column, step_detail, wrong_key

    sandbox = opened.walk.sandbox.phases
    local = replayed.phases
    mine = {p.name: p for p in local.phases} if local is not None else {}
    width = max(len(p.label) for p in sandbox.phases) + 2
    terminal.say(f"{'step':<{width}}{SANDBOX_COLUMN:<44}{replay_column(replayed)}")
    for theirs in sandbox.phases:
        ours = mine.get(theirs.name)
        left = f"{PHASE_MARKS[theirs.status]} {theirs.detail or theirs.status}"
        right = f"{PHASE_MARKS[ours.status]} {ours.detail or ours.status}" if ours else "-"
        marker = " ◀" if replayed.parting is not None and replayed.parting.phase == theirs.name else ""
        terminal.say(f"{theirs.label:<{width}}{_cut(left, 42):<44}{_cut(right, 70)}{marker}")
    said = None
    for who, report in (("sandbox", sandbox), (replay_column(replayed), local)):
        if report is None or not (report.stopped_at or report.advice):
            continue
        key = wrong_key(report)
        if said is not None and key == said:
            terminal.say(f"{who}: the same step went wrong the same way")
            continue
        said = key
        terminal.say(f"{who}: {report.explanation}")
        if report.advice:
            terminal.say(f"  try: {word(report.advice)}")
    if replayed.parting is not None:
        terminal.say(replayed.parting.words)
    for line in step_detail(sandbox, local, replayed.parting):
        terminal.say(line)


def _cut(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


# ---------------------------------------------------------------------------
# explain TRIAL


def explain_command(args: argparse.Namespace) -> int:
    opened = open_trial_session(args)
    if isinstance(opened, int):
        return opened
    with opened:
        explain = opened.explain()  # needs no workspace: verify is not called
        data = opened.to_json()
        data["local_skipped"] = opened.skipped or "explain does not call verify"
        data["explain"] = None
        if explain is not None:
            from verifier_tui.commands import report

            # A replay runs in Harbor mode (no response) on the trial's own task data, as its run document says.
            task_data, step, refused = data["replay"]["task_data"], data["trial"]["step"], data["harbor_refuses_task"]
            said = list(explain.notices)
            data["explain"] = report.explain_inputs(explain, said, "harbor", step, refused, task_data, None, None)
            if opened.isolation is not None:
                data["explain"] |= report.sandbox_fields(opened.isolation, explain)
        if args.json:
            terminal.out_json(data)
            return 0 if explain is not None and explain.error is None else 2
        from verifier_tui.words.trial import PHASE_MARKS, cause_lines, task_words, trial_header

        walk = opened.walk
        terminal.say(trial_header(walk))
        for line in task_words(walk):
            terminal.say(f"  {line}")
        for line in cause_lines(walk.cause):
            terminal.say(line)
        for line in sandbox_lines(walk):  # (a verdict read from elsewhere than result.json was said bare)
            terminal.say(line)
        for phase in walk.sandbox.phases.phases:
            terminal.say(f"  {PHASE_MARKS[phase.status]} {phase.label:<28}{phase.detail}".rstrip())
        terminal.say(f"  {walk.sandbox.phases.explanation}")
        if walk.sandbox.phases.advice:
            terminal.say(f"  try: {walk.sandbox.phases.advice}")
        for note in trial_notes(walk):
            terminal.say(f"  note: {one_line(note)}")
        return print_replay_explained(opened, explain)


def print_replay_explained(opened: TrialSession, explain: Explanation | None) -> int:
    """``explain TRIAL``'s replay side: its notes (the variables it runs
    without, as ``run TRIAL`` says them), the interpreter, how verify is imported and called,
    and the runner's environment as ``explain TASK`` says it; the exit status."""
    from verifier_tui.words.resolution import problem_line, text_sections
    from verifier_tui.words.trial import agreement_words

    if explain is None:
        assert opened.last is not None  # to_json() compared the sides
        terminal.say(f"replay    {agreement_words(opened.last.agreement, opened.skipped)[1]}")
        return 2
    if explain.error is not None:
        terminal.say(f"replay    the runner gave no explanation: {explain.error}")
    else:
        terminal.say("replay (Harbor mode, verify not called):")
    if opened.isolation is not None and explain.imported:
        terminal.say(f"  {opened.isolation.words}")
    if opened.plan.no_workspace:
        terminal.say(f"  no workspace: {opened.walk.workspace.words}")
    for note in explain.notices:
        terminal.say(f"  note: {one_line(note)}")
    if explain.error is not None:
        return 2
    *calls, environment = text_sections(explain, "harbor", str)
    for section in calls:
        for printed in section:
            terminal.say(f"  {printed}")
    for problem in explain.problems:
        terminal.say(f"  {problem_line(explain, problem)}")
    error = explain.import_error
    if error is not None:
        terminal.say(f"  importing the verifier raised {error.said}")
    if environment:
        terminal.say("")
    for line in environment:
        terminal.say(f"  {line}")
    return 0


# ---------------------------------------------------------------------------
# test JOB


def test_command(args: argparse.Namespace) -> int:
    """Every trial of a job (every step of each), replayed in parallel through
    the pipeline ``test`` runs cases with (:func:`verifier_tui.engine.suite.arun_groups`)."""
    from verifier_tui.commands.report import output_file_problem

    own = _test_reads(args)
    problem = output_file_problem("--junit", args.junit, own)
    if problem is not None:
        return terminal.refuse(problem)
    args.isolation = None  # each replay asks, if a signal ends the checks (none starts then)
    # a signal in the checks says no trial ran, as on tasks (held since the command line was read: cli.main)
    problem = stopping.unless_stopped(lambda: _replays_problem(args))
    if problem is not None:
        return _refused_test(args, problem)
    return _test_trials(args, own)


def _replays_problem(args: argparse.Namespace) -> str | None:
    """Why no replay can run (``--python``, no sandbox to be had), in one line; None: they can, kept
    apart as ``args.isolation`` says (run, explain, watch: checked once opened, open_trial_session)."""
    from verifier_tui.engine.sandbox.isolation import IsolationError, choose

    problem = python_problem(args)
    try:
        # No sandbox is the machine's, not a trial's: one line as test TASK and run TRIAL say it, never a
        # row each. Chosen once, for every replay: a trial's asking again could be told no a moment later.
        args.isolation = choose() if problem is None else None
    except IsolationError as exc:
        problem = str(exc)
    return problem


def _test_trials(args: argparse.Namespace, own: list[tuple[str, Path | None]]) -> int:
    from verifier_tui.engine.suite import NotReplayed

    in_jobs = args.target.kind == "jobs"  # a jobs folder: each row names its job
    collection = _read_trials(args, own, in_jobs)
    if isinstance(collection, int):
        return collection
    with collection:
        collection.keep_isolation(args.isolation)
        group = collection.groups[0]
        if group.error is not None:
            return _no_trial(args, group, own)
        started = time.perf_counter()
        stream: _TrialsStream | None = None

        # --json streams each trial's line as it ends: that is its progress
        progress = terminal.Progress(len(group.cases), "trials", "differ", wanted=not args.json)

        def keep(_group: JobTrials, index: int, opened: TrialSession | NotReplayed) -> JobRow:
            """A trial's row, its session closed: only the words are kept. Kept before its line is
            printed: a stdout that fails on it (a full disk) leaves the trial in the report all the same."""
            if isinstance(opened, NotReplayed):
                row = kept[index] = not_replayed_row(opened, in_jobs)
                said = opened.to_json()
            else:
                assert opened.last is not None  # the replay just ran
                row = kept[index] = job_row(opened, opened.last, stderr=bool(args.junit), in_jobs=in_jobs)
                said = opened.to_json(opened.last)
            if stream is not None:
                stream.put(index, said)
            progress.step(row.same is False)
            return row

        kept: dict[int, JobRow] = {}  # the rows so far, by trial: for a stop
        try:
            stream = _TrialsStream(group) if args.json else None
        except OSError:
            # --json's document begins before the report: stdout that cannot be written (a full disk) ends the
            # command, and the last run's report, left, would be CI's to show (mid-run: _replay_all)
            _stdout_failed(args, group, in_jobs, [], started)
            raise
        try:
            rows = _replay_all(args, group, keep, kept, in_jobs, progress, started, stream)
        finally:
            progress.erase()
        if isinstance(rows, int):
            return rows
    wall = time.perf_counter() - started
    counts = _job_counts(args, group, rows, wall)
    agree, differ, unknown = counts["agree"], counts["differ"], counts["not_compared"]
    used, unused = counts["stand_in"]["used_for"], counts["stand_in"]["not_used_for"]
    copied, network = _sandbox_words(rows)
    # the report first, as when stopped: stdout that cannot be written (a full disk) ends the command
    junit = _job_junit(args, group, in_jobs, rows, wall, (copied, network)) if args.junit else None
    if stream is not None:
        stream.end(counts)
    else:
        print_job_table(group, rows)
        for line in stand_in_lines(args.stand_in_chosen, used, unused):
            terminal.say(line)
        terminal.out(f"{agree} agree, {differ} differ, {unknown} not compared")
        if copied:
            terminal.out(copied)
        if network:
            terminal.out(f"note: {network}")
        by_runner = sum(1 for r in rows if r.same is True and r.judged_by == "runner")
        if by_runner:
            # Said because it is a shortcut: run TRIAL and the TUI always judge through test.sh.
            terminal.say(
                f"verifier-tui's runner judged {by_runner} of the {agree} that agree; the task's test.sh, as Harbor "
                "runs it, is run only where that runner ends otherwise than the sandbox (run TRIAL runs it for one)"
            )
    if junit is not None:
        return terminal.refuse(junit)  # said after the table, which is printed all the same
    return _job_status(rows)


def _job_status(rows: list[JobRow]) -> int:
    """``test JOB``'s exit status: 0 when every replay ended as its sandbox did; 2 when a trial's task is one Harbor
    would not load now, as test TASK and run TRIAL say it, whatever the other trials did; else 1."""
    if any(r.replay == REFUSED_RESULT for r in rows):
        return 2
    return 0 if all(r.same is True for r in rows) else 1


def _no_trial(args: argparse.Namespace, group: JobTrials, own: list[tuple[str, Path | None]]) -> int:
    """``test JOB`` on a job with no trial to replay: why, exit 2, and --json's document all the
    same (no trial in it, why in its problems), as test TASK prints its own with nothing to test."""
    from verifier_tui.commands.report import refused_run

    document = (lambda: _TrialsStream(group).end(_job_counts(args, group, [], 0.0))) if args.json else None
    return refused_run(args.junit, f"{group.folder}: {group.error}", own, document=document)


def _job_counts(
    args: argparse.Namespace, group: JobTrials, rows: list[JobRow], wall: float, stopped: str | None = None
) -> dict[str, Any]:
    """What the job test document says after its trials: the counts of ``rows``, the stand-in, the
    folder's problems, and why the replays were ``stopped`` before every one ran."""
    agree = sum(1 for r in rows if r.same is True)
    differ = sum(1 for r in rows if r.same is False)
    return {
        "trial_folders": trial_folders(group),
        "agree": agree,
        "differ": differ,
        "not_compared": len(rows) - agree - differ,
        "duration_s": round(wall, 3),
        "stand_in": {
            "given": args.stand_in_chosen.words,
            "used_for": [r.name for r in rows if r.stand_in == "used"],
            "not_used_for": [r.name for r in rows if r.stand_in == "unused"],
        },
        "copy_sandbox": _sandbox_words(rows)[0],
        "problems": list(getattr(group.found, "problems", ())),
        "stopped": stopped,
    }


def _sandbox_words(rows: list[JobRow]) -> tuple[str | None, str | None]:
    """The copy sandbox's and the shared network's words of ``rows``: the first row's that has each."""
    copied = next((r.copy_sandbox for r in rows if r.copy_sandbox), None)
    network = next((r.shared_network for r in rows if r.shared_network), None)
    return copied, network


def _job_junit(
    args: argparse.Namespace,
    group: JobTrials,
    in_jobs: bool,
    rows: list[JobRow],
    wall: float,
    said: tuple[str | None, str | None],
    *more: Any,
) -> str | None:
    """``test JOB --junit``'s report of ``rows`` (and ``more`` cases: a stop's error), finished or stopped
    alike: the time it ran, the copy sandbox's and the shared network's words (``said``, by
    :func:`_sandbox_words`), the folder's notes. The stopped report wrote time 0.000 and none of these.
    Returns why it could not be written (None: it was)."""
    from verifier_tui.commands.report import write_junit

    cases = [junit_case(r.job or group.name, r) for r in rows]
    copied, network = said
    # what of the folder was left out (a link, a stray folder), as the table's notes say it: a CI page
    # that shows only the report would otherwise count every trial as accounted for
    left_out = [one_line(note) for note in getattr(group.found, "problems", ())]
    return write_junit(args.junit, _junit_suite(group, in_jobs), [*cases, *more], wall, copied, network, notes=left_out)


def _junit_suite(group: JobTrials, in_jobs: bool) -> str:
    """``test JOB --junit``'s suite name."""
    return f"verifier-tui {'jobs folder' if in_jobs else 'job'} {group.name}"


def _replay_all(
    args: argparse.Namespace,
    group: JobTrials,
    keep: Callable[..., JobRow],
    kept: dict[int, JobRow],
    in_jobs: bool,
    progress: terminal.Progress,
    started: float,
    stream: _TrialsStream | None,
) -> list[JobRow] | int:
    """Every trial's row, each made by ``keep`` (which puts it in ``kept``).
    Stopped by a signal before every replay ended, as ``test`` on tasks is: one
    line, and ``--junit``'s report of the trials that finished with that line as
    an error, never the last run's report left for CI to show as this one's;
    ``--json``'s document, begun on stdout, ends whole with those trials and that
    line; returned: the exit status."""
    from verifier_tui.commands.report import stopped_words
    from verifier_tui.engine.procfs import machine_cpus
    from verifier_tui.engine.suite import arun_groups

    try:
        rows: list[JobRow] = stopping.run(arun_groups([group], args.jobs or machine_cpus(), keep))[0]
    except (KeyboardInterrupt, SystemExit) as stop:
        rows = [kept[i] for i in sorted(kept)]
        if len(rows) == len(group.cases):
            return rows  # every replay had ended as the signal came: this run's reports, whole
        progress.erase()
        why = stopped_words(stop, len(rows), len(group.cases), "trials")
        # said once, by its first cause: a stdout that then fails (a closed terminal) is no second stop
        _say_stopped(args, group, in_jobs, rows, time.perf_counter() - started, why, stream)
        return stopping.exit_status(stop)
    except OSError:
        _stdout_failed(args, group, in_jobs, [kept[i] for i in sorted(kept)], started)
        raise
    return rows


def _read_trials(args: argparse.Namespace, own: list[tuple[str, Path | None]], in_jobs: bool) -> Collection | int:
    """``test JOB``'s trials read (each is read again at its turn), or the exit status when they cannot be,
    or when a signal ended the reading where it landed (thousands of trials take seconds): none ran then,
    said as a stop mid-run is, of a job none of whose trials was read."""
    from verifier_tui.commands.report import refused_run, stopped_words
    from verifier_tui.engine.suite import CollectionError, JobTrials, collect

    try:
        collection = stopping.read_unless_stopped(
            lambda: collect([args.target], args.options, task_dir=args.task, stand_in=args.stand_in_chosen)
        )
    except CollectionError as exc:
        return refused_run(args.junit, str(exc), own)
    if collection is not None:
        return collection
    halted = SystemExit(stopping.status(2))
    unread = JobTrials(name=args.target.root.name, folder=args.target.root, replays=None)
    why = stopped_words(halted, 0, 0, "trials")
    _say_stopped(args, unread, in_jobs, [], 0.0, why, None)
    return stopping.exit_status(halted)


def _say_stopped(
    args: argparse.Namespace,
    group: JobTrials,
    in_jobs: bool,
    rows: list[JobRow],
    wall: float,
    why: str,
    stream: _TrialsStream | None,
) -> None:
    """``test JOB`` stopped by a signal (``why``) with ``rows`` finished: that line, ``--junit``'s report of
    them with it as an error, and ``--json``'s document (begun now when ``stream`` is None) ended whole
    with them and it."""
    # the report, then the document, then the lines (said too when stdout fails: a full disk ends the
    # command), so that a stderr that cannot be written (a closed terminal) cuts no document sent to a file
    problem = _stopped_report(args, group, in_jobs, rows, wall, why)
    try:
        if args.json:
            (stream or _TrialsStream(group)).end(_job_counts(args, group, rows, wall, stopped=why))
    finally:
        terminal.last_error(why)
        if problem is not None:
            terminal.last_error(problem)


def _stopped_report(
    args: argparse.Namespace, group: JobTrials, in_jobs: bool, rows: list[JobRow], wall: float, why: str
) -> str | None:
    """``--junit``'s report of a stopped ``test JOB``: ``rows`` and ``why`` as a ``(stopped)`` error; why
    it could not be written (None: it was, or none was asked for)."""
    from verifier_tui.commands.report import stopped_case

    if not args.junit:
        return None
    return _job_junit(args, group, in_jobs, rows, wall, _sandbox_words(rows), stopped_case(why))


def _stdout_failed(
    args: argparse.Namespace, group: JobTrials, in_jobs: bool, rows: list[JobRow], started: float
) -> None:
    """``test JOB --json``'s document cut by stdout that could not be written (a full disk), ``rows`` finished:
    ``--junit``'s report holds why the rest never ran as a ``(stopped)`` error, and the command's one line
    (cli.main) says the stdout's error. Any other error leaves the report alone."""
    if terminal.output_failed():
        why = f"stopped as standard output could not be written: {len(rows)} of {len(group.cases)} trials finished"
        problem = _stopped_report(args, group, in_jobs, rows, time.perf_counter() - started, why)
        if problem is not None:
            terminal.error(problem)


@record
class JobRow:
    """What ``test JOB`` keeps of one replay once it is over: the words of
    its row and report, never the run itself (a job may hold thousands)."""

    name: str
    mark: str
    sandbox: str
    replay: str
    same: bool | None
    word: str
    sentence: str
    differences: tuple[str, ...]
    duration_s: float
    stand_in: str | None  # "used", "unused" or None
    stderr_tail: str = ""  # for --junit
    notes: tuple[str, ...] = ()  # what in the trial's own files could not be read, or does not bear out result.json
    copy_sandbox: str | None = None  # the replay ran in the copy sandbox: its words (it could write the user's files)
    judged_by: str | None = None  # "runner" or "test.sh": the run whose verdict was compared
    story: tuple[str, ...] = ()  # test.sh judged, and verifier-tui's runner alone ended otherwise: how, where, why
    job: str | None = None  # in a jobs folder, the job the trial is of (its JUnit classname)
    shared_network: str | None = None  # the replay had this machine's network (--network host): its words


class _TrialsStream:
    """``test JOB --json``'s document, written as the replays end: each
    trial's object, on a line of its own, is printed once every trial before
    it was, so a job of thousands is never held whole (neither the objects
    nor their text); the counts follow the trials. Written as
    :func:`terminal.out_json` writes a document: json_text's text is plain
    already (controls, bidi marks and lone surrogates escaped), so it is not
    made plain again."""

    def __init__(self, group: JobTrials) -> None:
        head = terminal.json_text({"path": str(group.folder), "name": group.name}, indent=2)
        terminal.line(head[: head.rindex("}")].rstrip() + ',\n  "trials": [')
        self._next = 0
        self._waiting: dict[int, str] = {}
        self._last: str | None = None  # printed with its comma once another follows

    def put(self, index: int, trial: dict[str, Any]) -> None:
        # One line each: json's C encoder writes no indentation, and its Python
        # one cost more than the rest of the tool's work on a trial
        self._waiting[index] = "    " + terminal.json_text(trial, indent=None)
        while self._next in self._waiting:
            if self._last is not None:
                terminal.line(self._last + ",")
            self._last = self._waiting.pop(self._next)
            self._next += 1

    def end(self, tail: dict[str, Any]) -> None:
        # Stopped by a signal, a trial that ended after one still running is said in its order all the same.
        left = [line for line in (self._last, *(self._waiting[i] for i in sorted(self._waiting))) if line]
        if left:
            terminal.line(",\n".join(left))
        text = terminal.json_text(tail, indent=2)
        terminal.line("  ]," + text[text.index("{") + 1 :])


def job_row(session: TrialSession, replayed: Replayed, *, stderr: bool, in_jobs: bool = False) -> JobRow:
    from verifier_tui.commands.report import JUNIT_OUTPUT_CHARS, shared_network
    from verifier_tui.engine.harbor.agreement import local_verdict
    from verifier_tui.words.run import text_tail
    from verifier_tui.words.trial import agreement_mark, agreement_words, cause_label, verdict_words

    local = local_verdict(replayed.local) if replayed.local is not None else None
    replay = verdict_words(local) if local is not None else "-"
    word, sentence = agreement_words(replayed.agreement, replayed.skipped)
    plan = session.plan
    # Used only by a replay that ran on it: a --case the trial's task lacks is planned as the stand-in, but the
    # replay never started (the trial says "no such case"), and "used for 1 trial(s)" was said of it.
    replayed_on = plan.workspace_origin == "stand-in" and replayed.local is not None
    stand_in = "used" if replayed_on else "unused" if plan.stand_in_unused else None
    return JobRow(
        _entry_name(session.trial, session.step, in_jobs),
        agreement_mark(replayed.agreement),
        cause_label(session.walk),
        # a task Harbor would not load gets no verdict, whatever the replay wrote (as test TASK says it)
        REFUSED_RESULT if replayed.agreement.refused is not None else replay,
        replayed.agreement.same,
        word,
        sentence,
        tuple(replayed.agreement.differences),
        replayed.local.duration_s if replayed.local else 0.0,
        stand_in,
        text_tail(replayed.local.stderr, JUNIT_OUTPUT_CHARS) if stderr and replayed.local is not None else "",
        # Said once for a trial, under its first step's row; and, each step's, reward files that do not bear
        # out what result.json recorded (rewritten, a link), which run TRIAL notes: its ✓ went unqualified
        (tuple(session.trial.notes) if session.step in (None, session.trial.steps[0].name) else ())
        + ((session.walk.sandbox.disagreement,) if session.walk.sandbox.disagreement else ()),
        replayed.local.copy_sandbox if replayed.local is not None else None,
        replayed.local.verdict_by if replayed.local is not None else None,
        replayed.agreement.story,
        session.trial.path.parent.name if in_jobs else None,
        shared_network([replayed.local]),
    )


def not_replayed_row(missed: NotReplayed, in_jobs: bool = False) -> JobRow:
    """The row of a trial that could not be read or replayed: never left out."""
    trial = missed.item.trial
    name = _entry_name(trial, missed.item.step, in_jobs)
    job = trial.path.parent.name if in_jobs else None
    return JobRow(name, "?", "-", "-", None, "not replayed", missed.why, (), 0.0, None, job=job)


def _entry_name(trial: Trial | TrialRef, step: str | None, in_jobs: bool) -> str:
    """A trial's row: in a jobs folder ``job/trial``, as ``run JOBS/JOB/TRIAL``
    and the TUI's job list name it (two jobs may each hold a trial of a name)."""
    name = f"{trial.path.parent.name}/{trial.name}" if in_jobs else trial.name
    return name + (f" / {step}" if step else "")


def trial_folders(group: JobTrials) -> int:
    """The trial folders ``test`` found: its rows are these (a multi-step trial's, one per step)."""
    from verifier_tui.engine.harbor.folders import Job

    if group.found is None:  # a signal ended the reading
        return 0
    return len(group.found.trials) if isinstance(group.found, Job) else 1


def print_job_table(group: JobTrials, rows: list[JobRow]) -> None:
    from verifier_tui.engine.task.kinds import some_names
    from verifier_tui.words.trial import folder_notes

    version = getattr(group.found, "harbor_version", None)
    folders = trial_folders(group)
    replays = f", {len(rows)} replays (one per step)" if len(rows) != folders else ""
    jobs = getattr(group.found, "jobs", None)
    what = (
        f"jobs folder {one_line(group.name)} · {len(jobs)} job(s),"
        if jobs is not None
        else f"job {one_line(group.name)} ·"
    )
    terminal.say(f"{what} {folders} trial(s){replays}" + (f" · Harbor {version}" if version else ""))
    _table([("", "trial", "sandbox", "replay", ""), *((r.mark, r.name, r.sandbox, r.replay, r.word) for r in rows)])
    # A paragraph that applies to many trials (no /app to replay on, one task's test.sh) is said once, with them.
    noun = "trials" if len(rows) == folders else "replays"  # a multi-step trial's rows are its steps
    paragraphs: dict[tuple[str, str, tuple[str, ...]], list[str]] = {}
    for row in rows:
        if row.same is not True or row.story:
            paragraphs.setdefault((row.word, row.sentence, row.story + row.differences[1:]), []).append(row.name)
    for (word, sentence, lines), names in paragraphs.items():
        names = [one_line(name) for name in names]
        terminal.say(f"── {names[0] if len(names) == 1 else f'{len(names)} {noun} ({some_names(names)})'}: {word}")
        terminal.say(f"  {sentence}")
        for line in lines:
            terminal.say(f"  - {line}")
    for row in rows:
        for note in row.notes:
            terminal.say(f"── {one_line(row.name)}: {note}")
    # what of the folder is not a row: a link, a stray folder
    for line in folder_notes(getattr(group.found, "problems", ())):
        terminal.say(line)


def junit_case(job: str, row: JobRow) -> JunitCase:
    """A trial's row as a JUnit test case: a failure when it differs, or was
    not replayed or compared, as the pytest plugin reports it (a test not run
    is a failure saying so, as a task's case is: an ``<error>`` and other
    words made a CI moving from one to the other see another report)."""
    from verifier_tui.commands.report import JunitCase
    from verifier_tui.words.trial import not_passed

    # Each line on one line, as every face says it: a reward key named a\nb never breaks a line in two.
    why = (one_line(not_passed(row.word, row.sentence)), "\n".join(one_line(d) for d in row.differences))
    failure = None if row.same is True else why
    name = row.name.removeprefix(f"{row.job}/") if row.job else row.name  # the job is its classname
    # What in the trial's own files could not be read or does not bear out result.json (a reward file that is a
    # link), as under the table: passing or not, a CI page that shows only the report would never see it.
    notes = "\n".join(one_line(note) for note in row.notes)
    return JunitCase(job, name, f"{row.duration_s:.3f}", failure, stdout=notes, stderr=row.stderr_tail)


# ---------------------------------------------------------------------------
# watch TRIAL


def watch_lines(sequence: int, trigger: str, replayed: Replayed) -> list[str]:
    """A replay's line, then what judged it and how the runner alone ended (each a line of its own)."""
    from verifier_tui.engine.harbor.walkthrough import judged_parting
    from verifier_tui.words.run import watch_line_start
    from verifier_tui.words.trial import agreement_words, replay_words

    word, sentence = agreement_words(replayed.agreement, replayed.skipped)
    detail = replay_words(replayed) if replayed.local is not None else sentence
    lines = [f"{watch_line_start(sequence, one_line(trigger))}  {word:<9}  replay {detail}"]
    agreement = replayed.agreement
    # The sentence names the run that judged; or why a replay was not compared (the sandbox has no verdict,
    # the replay could not start), which "nothing to compare" alone left unsaid. (A refusal's is a note.)
    not_compared = agreement.same is None and replayed.local is not None and agreement.refused is None
    if agreement.same is False or agreement.story or not_compared:
        lines.append(f"      {sentence}")
    parting = judged_parting(replayed.parting, replayed.runner_alone)
    if agreement.same is False and parting is not None:
        lines.append(f"      {parting.words}")
    lines += [f"      {said}" for said in agreement.story]  # the runner alone's, after test.sh judged
    return lines


def watch_command(args: argparse.Namespace) -> int:
    opened = open_trial_session(args)
    if isinstance(opened, int):
        return opened
    with opened:
        if opened.session is None:
            return terminal.refuse(f"nothing to replay, so nothing to watch: {opened.skipped}")
        if not args.json:
            from verifier_tui.words.trial import trial_header

            terminal.out(trial_header(opened.walk))
            # The sandbox's verdict, where it was read and what the trial's files say, as run TRIAL says them
            # (a bare "sandbox: not finished" left out that result.json was cut short)
            for line in sandbox_lines(opened.walk):
                terminal.say(line)
            for note in trial_notes(opened.walk):
                terminal.say(f"  note: {one_line(note)}")
            terminal.out(
                "watching the task for changes; each replay is compared with the sandbox's verdict, which does not "
                "change; Ctrl+C stops"
            )
        from verifier_tui.commands.watching import watch_to_the_end

        started = [0]  # replays started, as watch TASK counts its runs: one cut short by a save has its number
        problem = watch_to_the_end(_watch(opened, args, started), args.poll)
        if problem is not None:
            return terminal.refuse(problem)
        if not args.json:
            terminal.out(f"stopped after {started[0]} replay(s) started")  # (the last, perhaps, cut short)
        return 2 if terminal.output_failed() else 0


async def _watch(opened: TrialSession, args: argparse.Namespace, started: list[int]) -> None:
    from verifier_tui.commands.watching import watch_session
    from verifier_tui.words.trial import change_words

    assert opened.session is not None  # watch_command checked
    # The notes as last said, first by the header. A save may bring one (task.toml without the trial's
    # step; a value Harbor would refuse): said under the replay it set off, as watch TASK says a run's,
    # once while it holds, again if it goes and comes back.
    said = set(trial_notes(opened.walk))
    replays: list[Replayed] = []

    def trigger_said(trigger: str, change: Change | None) -> str:
        return change_words(opened, trigger, change) if change is not None else trigger

    async def replay(trigger: str, change: Change | None) -> None:
        nonlocal said
        started[0] += 1
        number = started[0]
        if change is not None:
            trigger = trigger_said(trigger, change)
            opened.refresh()  # the task changed: its drift from the run, its settings
        replayed = await opened.arun(trigger=trigger)
        replays.append(replayed)
        if args.json:
            terminal.out_json(opened.to_json(replayed), indent=None)
        else:
            for line in watch_lines(number, trigger, replayed):
                terminal.say(line)
            refused = replayed.agreement.refused  # why the line says the refusal, first
            current = trial_notes(opened.walk)
            current = refusal_first(refused, current) if refused is not None else current
            for note in dict.fromkeys(note for note in current if note not in said):
                terminal.say(f"      note: {one_line(note)}")
            said = set(current)
            # Said once, under the first replay in the copy sandbox: it ran
            # what an agent wrote, able to write the user's files.
            copied = [r.local.copy_sandbox for r in replays if r.local is not None and r.local.copy_sandbox]
            if len(copied) == 1 and replayed.local is not None and replayed.local.copy_sandbox:
                terminal.say(f"      {copied[0]}")
        terminal.flush()

    await watch_session(
        opened.session,
        replay,
        args.poll,
        "replay",
        json=args.json,
        started=lambda: started[0],
        trigger_said=trigger_said,
    )


# ---------------------------------------------------------------------------
# run --both-modes (any case)


#: What ``run`` does with its one run, which --both-modes (two runs) has no place for.
_ONE_RUN_OPTIONS = (("--coverage", "coverage"), ("--coverage-report", "coverage_report"), ("--save-case", "save_case"))


def both_modes_command(args: argparse.Namespace) -> int:
    """``run PATH --both-modes``: the case with its response and without."""
    from verifier_tui.commands.report import result_json
    from verifier_tui.engine.both_modes import run_both_modes
    from verifier_tui.engine.session import Session
    from verifier_tui.words.run import both_modes_lines

    if args.options.no_response:
        return terminal.refuse("--both-modes runs the case with its response and without: drop --no-response")
    other = next((flag for flag, given in _ONE_RUN_OPTIONS if getattr(args, given, None)), None)
    if other is not None:
        return terminal.refuse(f"--both-modes and {other}: that is of one run; give one or the other")
    with Session(args.target, args.options) as session:
        both = run_both_modes(session)
        if args.json:
            data = both.to_json()
            data = {
                "task": str(session.task.root),
                "case": session.case.name if session.case else None,
                "verifier": str(session.verifier),
                **data,
                # each mode's run document whole, as run --json prints it (the session's notices too)
                "harbor": result_json(session, both.harbor),
                "server": result_json(session, both.server) if both.server is not None else None,
            }
            terminal.out_json(data)
            return both.exit_status
        case = one_line(session.case.name) if session.case else "none"
        step = f" · step {one_line(session.step)}" if session.step is not None else ""  # as run's header says it
        terminal.out(f"task {one_line(session.task.name)}{step} · case {case} · both modes")
        for line in both_modes_lines(session, both):
            terminal.out(line)
        return both.exit_status
