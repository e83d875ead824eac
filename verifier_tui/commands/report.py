"""What the headless commands say: a run, an explanation, a test and a watch
line, as lines for a reader and as ``--json`` documents (docs/json-output.md).

The commands (:mod:`verifier_tui.commands.headless`) decide what runs and what they
exit with; this module only puts what the engine found into words, with the
words the TUI shares (:mod:`verifier_tui.words.run`). The pytest plugin reports a
failed case with :func:`result_lines`, as ``run`` prints it.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, cast

from verifier_tui.commands import terminal
from verifier_tui.engine.advice import Advice
from verifier_tui.engine.model import UNKNOWN, Outcome, RunResult, returned_and_rule
from verifier_tui.engine.record import record
from verifier_tui.engine.task.config import REFUSED_RESULT, REFUSED_TO_RUN, USES_DEFAULTS, refused_words
from verifier_tui.engine.verdict import rewards_json
from verifier_tui.words.paths import here, home_folder, text_from, tilde
from verifier_tui.words.resolution import problem_line, text_sections
from verifier_tui.words.run import (
    JSON_HAS_THEM,
    LISTED,
    NOT_RUN,
    case_status,
    cut_words,
    duration_text,
    expected_line,
    expected_words,
    given_limits,
    harbor_error,
    headline_reward,
    limits_words,
    missed_for,
    missing_nemo_gym_hint,
    mode_text,
    more_text,
    near_miss_line,
    not_a_file,
    notices,
    preload_words,
    run_notes,
    runner_words,
    shadow_lines,
    stuck_line,
    text_head,
    text_tail,
    verdict_line,
    watch_line_start,
    within_words,
)
from verifier_tui.words.text import ONE_LINE_MOST, one_id, one_line, unbroken

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import IO, Any

    from verifier_tui.engine.readback import Explanation
    from verifier_tui.engine.sandbox.isolation import Isolation
    from verifier_tui.engine.session import Options, Session
    from verifier_tui.engine.suite import WithoutStep


def _shown_path(path: str, home: str) -> str:
    """A path as the TUI shows it: from where the tool was started, the home as ``~``."""
    return tilde(here(path), home)


def rule(title: str, width: int) -> str:
    """A heading line: drawn with "─", or "-" where the terminal cannot show it."""
    bar = "─" if terminal.can_show("─") else "-"
    return f"{bar * 2} {title} {bar * width}"


def header(session: Session, result: RunResult | None = None) -> str:
    """The task, verifier, case, interpreter and mode: of ``result`` when
    given (``test`` runs other cases than the session's own)."""
    task = session.task
    # Written only once a verifier was found (each command refuses a task without one first).
    step = f" · step {one_line(session.step)}" if session.step is not None else ""
    parts = [f"task {one_line(task.name)}{step}", f"verifier {here(cast('Path', session.verifier))}"]
    case = result.inputs.case if result is not None else (session.case.name if session.case else None)
    parts.append(f"case {one_line(case)}" if case else "no case")
    task_id = result.inputs.task_id if result is not None else session.task_id
    if task_id is not None:
        parts.append(f"task row {task_id}")
    parts.append(session.options.python)
    parts.append(mode_text(result.mode if result is not None else session.mode))
    runner = runner_words(session)
    if runner:
        parts.append(runner)
    preload = preload_words(session)
    if preload:
        parts.append(preload)
    return " · ".join(parts)


def result_json(session: Session, result: RunResult) -> dict[str, Any]:
    data = result.to_json()
    data["task"] = str(session.task.root)
    data["task_name"] = session.task.name
    data["step"] = session.step  # the step of a multi-step task run as Harbor verifies it (--step), as the header
    data["notices"] = notices(session, result)
    data["sandbox_words"] = session.isolation.words
    data["expected_missed"] = missed_for(result)
    # only runs started ahead preload; the key is always there, as every other is
    data["preload"] = list(session.options.preload) if session.warm is not None else []
    return data


def result_lines(session: Session, result: RunResult, word: Callable[[str], str] = str) -> list[str]:
    """What ``run`` prints about a run: the verdict, against expected.json
    when there is one, the reward files, the exit code in words, stdout and
    the mapped traceback. The pytest plugin reports a failed case with it,
    its notes' advice put in its own options' words by ``word``."""
    lines = [header(session, result), session.isolation.words]
    limits = limits_words(given_limits(session, result), namespace=result.sandbox == "namespace")
    if limits:
        lines.append(limits)
    lines += [f"note: {one_line(word(notice))}" for notice in notices(session, result)]
    hint = missing_nemo_gym_hint(result)
    if hint:
        lines.append(f"note: {word(hint)}")
    lines.append(f"{word(result.outcome_words)} · {duration_text(result.duration_s)}")
    stuck = stuck_at(result)
    if stuck:
        lines.append(stuck)
    lines.append(f"verdict: {word(verdict_line(result))}")
    warnings = list(result.verdict.warnings)
    lines += [f"warning: {warning}" for warning in warnings[:LISTED]]
    if len(warnings) > LISTED:
        lines.append(f"warning: {word(more_text(len(warnings) - LISTED, 'warnings'))}")
    line = expected_line(result)
    if line:
        lines.append(word(line))
    near = near_miss_line(result)
    if near:
        lines.append(f"note: {near}")
    for reward_file in result.reward_files:
        text = reward_file.text if reward_file.text is not None else f"<{not_a_file(reward_file)}>"
        head, more = text_head(text.strip())
        lines.append(f"{reward_file.name}: {head}")
        if more:
            lines.append(word(Advice(f"  … {more} of {reward_file.name} (", JSON_HAS_THEM, ")")))
    problems = result.explain.problems if result.explain is not None else ()
    if result.explain is not None and result.explain.would_exit in (1, None):
        # 1: the verifier's own code raised (its traceback is below), not the contract. None: the runner went on
        # to call verify, and a problem it still listed (a verify that yields) is explain's prediction of what
        # the call does, which the run's exit line, verdict and stderr say as done.
        problems = ()
    lines += [f"contract: {problem}" for problem in problems[:LISTED]]
    if len(problems) > LISTED:
        lines.append(f"contract: {word(more_text(len(problems) - LISTED, 'problems'))}")
    if result.stdout.text.strip():
        lines += [rule("stdout", 40), result.stdout.text.rstrip("\n")]
    if result.stderr.text.strip():
        lines += [rule("stderr", 40), result.stderr.text.rstrip("\n")]
    if result.stack is not None and result.stack.text:
        lines += [rule("stack at the timeout", 40), result.stack.text]
    return lines


def stuck_at(result: RunResult) -> str | None:
    """Where a run that timed out was stuck (words.stuck_line), paths as the header shows them."""
    return stuck_line(result.stack, here)


def explain_json(session: Session, explanation: Explanation) -> dict[str, Any]:
    """The explain document (docs/json-output.md): the runner's, with the
    session's notices, the mode and the task's modules that shadow the standard
    library or are never imported."""
    said = notices(session) + list(explanation.notices)
    response = str(session.response.path) if session.response and session.response.path else None
    task_data = str(session.task_data) if session.task_data else None
    refused = session.task.config.refused
    data = explain_inputs(explanation, said, session.mode, session.step, refused, task_data, session.task_id, response)
    return data | sandbox_fields(session.isolation, explanation)


def sandbox_fields(isolation: Isolation, explanation: Explanation) -> dict[str, str]:
    """Where explain imported the verifier, whose top-level code runs then: said as a run says it;
    nothing when no runner started, so that nothing was imported anywhere."""
    if not explanation.imported:
        return {}
    return {"sandbox": isolation.kind, "sandbox_words": isolation.words}


def explain_inputs(
    explanation: Explanation,
    said: list[str],
    mode: str,
    step: str | None,
    refused: str | None,
    task_data: str | None,
    task_id: str | None,
    response: str | None,
) -> dict[str, Any]:
    """The explain document: the runner's, its failure's shape too, with what it adds: the notices
    ``said``, the mode, the step, the task's modules that shadow the standard library, why Harbor
    would refuse the task, and the inputs verify would be bound to, as the run document has them
    (the runner's own document names only the workspace: which task_data.json applies is the
    question). ``explain TRIAL`` adds them too."""
    from verifier_tui.engine.diagnosis import shadows

    data = explanation.to_json()
    data.update(notices=said, mode=mode, step=step, shadowing=shadows(explanation), harbor_refuses_task=refused)
    data.update(task_data=task_data, task_id=task_id, response=response)
    return data


def inputs_line(session: Session) -> str:
    """The workspace, response and task data verify would get, in the TUI's words (its line of
    choices): explain's bindings say only which argument each parameter gets, not from which file."""
    workspace = here(session.workspace) if session.workspace else "(an empty scratch folder)"
    response = session.response
    response_text = "none" if response is None else here(response.path) if response.path else "typed"
    task_data = here(session.task_data) if session.task_data else "none (task_data = {})"
    if session.task_id is not None:
        task_data = f"row {one_line(session.task_id)} of {task_data}"
    return f"workspace {workspace} · response {response_text} · task data {task_data}"


def explain_lines(session: Session, data: Explanation) -> list[str]:
    out: list[str] = []
    out.append(header(session))
    out.append(session.isolation.words)
    out.append(inputs_line(session))
    for notice in notices(session) + list(data.notices):
        out.append(f"note: {one_line(notice)}")
    shown = partial(_shown_path, home=home_folder())
    interpreter, sys_path, nemo_gym, bindings, environment = text_sections(data, session.mode, shown)
    out += interpreter
    out.append("")
    out += sys_path
    for shadow in shadow_lines(data, here):
        out.append(f"  ⚠ {shadow}")
    out.append("")
    out += nemo_gym
    out.append("")
    out += bindings
    error = data.import_error
    if error is not None:
        out.append(f"importing the verifier raised {one_line(error.said)}")  # its message on this line alone
        out.append(error.traceback.rstrip())
    if data.problems:
        out.append("")
        for problem in data.problems:
            out.append(problem_line(data, problem))
    elif error is None:
        out.append("")
        # The runner would call verify, but Harbor loads no refused task, so it runs nothing (the note above says why).
        if session.task.config.refused is not None:
            out.append(f"no contract problems, but {REFUSED_TO_RUN}: verify would not be called")
        else:
            out.append("no contract problems: verify would be called")
    return out + ([""] if environment else []) + environment


def refused(group: Any) -> str | None:
    """Why Harbor would refuse the task's task.toml; None when it would load it."""
    return group.session.task.config.refused if group.session is not None else None


def copy_warning(ran: list[tuple[Any, list[RunResult]]]) -> str | None:
    """What ``test`` says after its summary when a case ran in the copy
    sandbox: that the verifier could write the user's files."""
    return next((r.copy_sandbox for _group, rs in ran for r in rs if r.copy_sandbox), None)


def shared_network(results: Iterable[RunResult | None]) -> str | None:
    """What ``test`` (and ``test JOB``) says after its summary, and its JUnit report as a property,
    when a run had this machine's network (``--network host``): said whether or not the cases passed."""
    from verifier_tui.engine.sandbox.network import shared

    return next((said for r in results if r is not None and (said := shared(r.limits))), None)


def test_json(
    ran: list[tuple[Any, list[RunResult]]],
    wall: float,
    without: Sequence[Path] = (),
    without_step: Sequence[WithoutStep] = (),
    stopped: str | None = None,
) -> dict[str, Any]:
    """The test document (docs/json-output.md); ``without``: the tasks found without a case;
    ``without_step``: those found without the step ``--step`` names; ``stopped``: why a signal
    ended the runs before every case ran."""
    from verifier_tui.engine.suite import no_cases

    single = ran[0][0] if len(ran) == 1 else None
    cases = []
    for group, results in ran:
        for result in results:
            data = result_json(group.session, result)
            data["id"] = group.item_name(result.inputs.case or "-")
            cases.append(data)
    passed = sum(1 for case in cases if case["expected_matched"])
    return {
        "task": str(single.folder) if single else None,
        "task_name": single.name if single else None,
        "verifier": str(single.session.verifier) if single and single.session and single.session.verifier else None,
        "passed": passed,
        "failed": len(cases) - passed,
        "invalid": [{"task": g.id, "case": name, "problem": problem} for g, _rs in ran for name, problem in g.invalid],
        "errors": [
            {"task": g.id, "folder": str(g.folder), "problem": g.error, "not_run": [c.name for c in g.cases]}
            for g, _rs in ran
            if g.error
        ],
        "not_judged": [{"task": g.id, "case": name, "reason": why} for g, _rs in ran for name, why in g.not_judged],
        "without_cases": [{"task": p.name, "folder": str(p), "reason": no_cases(p)} for p in without],
        "without_step": [{"task": w.folder.name, "folder": str(w.folder), "reason": w.why} for w in without_step],
        "tasks": [
            {
                "name": g.id,
                "folder": str(g.folder),
                "verifier": str(g.session.verifier) if g.session and g.session.verifier else None,
                "step": g.session.step if g.session else None,
                "passed": sum(1 for r in rs if r.expected_matched),
                "failed": sum(1 for r in rs if not r.expected_matched),
                "invalid": len(g.invalid),
                "harbor_refuses_task": refused(g),
                "notices": task_notes(g),
            }
            for g, rs in ran
        ],
        "duration_s": round(wall, 3),
        "harbor_refuses_task": refused(single) if single else None,
        "copy_sandbox": copy_warning(ran),
        "stopped": stopped,
        "cases": cases,
    }


def expected_text(result: RunResult) -> str:
    expected = result.inputs.expected
    if expected is None:
        return "-"
    if expected.rewards is not None:
        return rewards_json(expected.rewards)[0] + within_words(expected)
    return f"exit {expected.exit_code}"


def mismatch_title(result: RunResult, word: Callable[[str], str] = str) -> str:
    """A case that missed its expected.json in one line (JUnit's message, the
    plugin's FAILED line), whole where it fits, else each side cut apart, the
    shorter keeping up to half: one long side cut from the middle of the whole
    lost the other (what the run got). ``word``:
    as :func:`result_lines`'s."""
    room = ONE_LINE_MOST - len("expected , got ")
    expected, got = unbroken(expected_text(result)), unbroken(word(actual_text(result)))
    # Whole where both fit; else the shorter side keeps its length up to half, the longer the rest.
    keep = min(len(expected), len(got), room // 2)
    room_expected = keep if len(expected) <= len(got) else room - keep
    return f"expected {one_line(expected, room_expected)}, got {one_line(got, room - room_expected)}"


def actual_text(result: RunResult) -> str:
    """What a case got: its rewards, else how the run ended and what Harbor
    would raise for it (``timed out after 1 s · VerifierTimeoutError``).
    A task Harbor would refuse gets none, whatever its reward folder holds."""
    if result.task_refused is not None:
        return REFUSED_RESULT
    if result.verdict.rewards is not None:
        return rewards_json(result.verdict.rewards)[0]
    # a contract error: its cause too; a run that could not start: why (its exit code is the sandbox's own)
    plain = (
        result.exit_code is not None and result.contract_cause is None and result.outcome is not Outcome.COULD_NOT_START
    )
    how = f"exit {result.exit_code} · {result.outcome.value}" if plain else result.outcome_words
    harbor = harbor_error(result)
    return Advice(how, f" · {harbor}") if harbor else how  # why it could not start may name an action


def saved_case_lines(saved: dict[str, Any]) -> list[str]:
    """``--save-case``: where the run was kept and what the case holds, or why it was not."""
    if saved["problem"] is not None:
        return [error_line(saved["problem"])]  # its paths as the header shows them
    lines = [f"kept as case {Path(saved['folder']).name}: {here(saved['folder'])} ({', '.join(saved['files'])})"]
    return lines + [f"  {note}" for note in saved["notes"]]


def table_lines(rows: Sequence[Sequence[str]]) -> list[str]:
    """Rows of cells in aligned columns, each cell on its line: a name read
    from a file (a case folder's, a trial's) can never forge a row."""
    cells = [[one_line(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    return ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in cells]


def error_line(error: str) -> str:
    """A task's (or job's) error on one line, its paths as the header shows
    them: from where the tool was started (``test a b``'s row, ``test b``'s line)."""
    return one_line(text_from(error, Path.cwd()))


def junit_step(ran: list[tuple[Any, list[RunResult]]]) -> str | None:
    """The step the tasks ran as (``--step``), for a JUnit report's property; None without one."""
    return next((g.session.step for g, _rs in ran if g.session is not None and g.session.step is not None), None)


def junit_notes(ran: list[tuple[Any, list[RunResult]]]) -> list[str]:
    """Each task's :func:`task_notes`, named by its task, for a JUnit report."""
    return [f"{one_line(group.id)}: {one_line(note)}" for group, _results in ran for note in task_notes(group)]


def task_notes(group: Any) -> list[str]:
    """The notes on a task as a whole, which ``test`` says under its header,
    ``test --json`` in its ``tasks`` row and the pytest plugin at each of its
    cases: the session's (:meth:`Session.task_notices`, which each case's
    notes start from too): what every case ran with, which runner, and what
    the sandbox would run instead of this verifier (cases passing here may
    score nothing there); but the task's error, said on its own (a task.toml
    Harbor would refuse, which runs none of its cases), and no note in other
    words beside it. None for a job's trials (no session: each replay says
    its own)."""
    session = group.session
    if session is None:
        return []
    # said once: a cases/ that cannot be read, when it is the error itself, is no note beside it in other words
    unread = session.task.cases_unread
    doubled = [unread] if unread is not None and group.error is not None and unread in group.error else []
    refused = session.task.config.refused
    if refused is not None and group.error == refused_words(refused):
        # Nothing runs: a task.toml not read is the refusal itself, and "the run uses the defaults" untrue.
        doubled += [p.removesuffix(USES_DEFAULTS) for p in session.task.config.problems if p.endswith(USES_DEFAULTS)]
    return [
        notice
        for notice in session.task_notices()
        if notice != group.error and not any(one in notice for one in doubled)
    ]


def group_lines(group: Any, results: list[RunResult]) -> list[str]:
    """One task's part of ``test``: a table of its cases, the stderr of each
    that failed, and the cases or the task that could not be run."""
    from verifier_tui.engine.suite import not_judged, not_run

    out: list[str] = []
    session = group.session
    verifier = f" · verifier {here(session.verifier)}" if session and session.verifier else ""
    if session is not None and session.step is not None:
        verifier = f" · step {one_line(session.step)}{verifier}"
    preload = preload_words(session) if session and session.warm is not None else None  # held runs only
    out.append(f"task {one_line(group.name)}{verifier}" + (f" · {preload}" if preload else ""))
    out += [f"note: {one_line(notice)}" for notice in task_notes(group)]
    if group.error is not None:
        out.append(f"!  not tested: {error_line(group.error)}")
        out += [f"!  {line}" for line in cases_not_run(group)]
    if results:
        rows = [("", "case", "expected", "actual", "time")]
        for result in results:
            symbol, _ = case_status(result)
            rows.append(
                (
                    symbol,
                    result.inputs.case or "-",
                    expected_text(result),
                    actual_text(result),
                    duration_text(result.duration_s),
                )
            )
        out += table_lines(rows)
    for name, problem in group.invalid:
        out.append(f"!  {one_line(name)}: {not_run(problem)}")
    for name, why in group.not_judged:
        out.append(f"{NOT_RUN}  {one_line(name)}: {not_judged(why)}")
    from verifier_tui.engine.results import preload_notices

    shared = shared_notes(results)
    # A module --preload names that never imported is said even when every case passed: the
    # header says the task's runs preload it
    unimported = dict.fromkeys(note for result in results for note in preload_notices(result.explain))
    shared += [note for note in unimported if note not in shared]
    out += [f"note: {one_line(note)}" for note in shared]
    for result in results:
        out += [f"{one_line(result.inputs.case or '-')}: {said}" for said in why_failed(session, result, shared)]
    for result in results:
        if not result.expected_matched and result.stderr.text.strip():
            out.append(rule(f"{one_line(result.inputs.case or '-')}: stderr", 30))
            out.append(text_tail(result.stderr, 2000).rstrip())
    gives_up = session.harbor_gives_up_s if session else None
    if gives_up is not None and results:
        out.append(f"Harbor would stop every case's verifier before it runs: task.toml's timeout_sec is {gives_up:g}")
    return out


def why_failed(session: Session | None, result: RunResult, shared: Sequence[str] = ()) -> list[str]:
    """What explains a case that did not get its expected.json, beyond its row and its stderr:
    where it was stuck, a near miss, the case's own problems, the run's notes (but ``shared``,
    said once for the task); none for a case that passed. The text under ``test``'s table and
    each JUnit failure say the same, as a case that timed out or was killed past its memory
    writes no stderr to explain it."""
    if result.expected_matched:
        return []
    case = session.task.case(result.inputs.case) if session is not None and result.inputs.case else None
    # A case's own problems (a workspace leading out of the task) say why it ran on other inputs.
    problems = case.problems if case is not None else ()
    # Its notes say a run killed past memory_mb, with the limit (engine.results).
    notes = [f"note: {note}" for note in run_notes(result) if note not in shared]
    # A reward file left as a link: the row says only "unknown", and the link is why (as `run` says it).
    unknown = result.verdict.message if result.verdict.error == UNKNOWN else None
    return [said for said in (unknown, stuck_at(result), near_miss_line(result), *problems, *notes) if said]


def shared_notes(results: list[RunResult]) -> list[str]:
    """The notes of a task's runs (a file staging skipped, ...) that explain a
    failure and that every one of its runs has, to be said once for the task;
    none when every case passed. A failed case's other notes are its own."""
    if all(result.expected_matched for result in results):
        return []
    return common_notes(results)


def common_notes(results: list[RunResult]) -> list[str]:
    """The notes every one of ``results`` has (a variable of the task's env left
    out, a module shadowing the standard library): what all of them ran with."""
    others = [run_notes(result) for result in results[1:]]
    return [note for note in run_notes(results[0]) if all(note in notes for notes in others)] if results else []


def test_lines(
    ran: list[tuple[Any, list[RunResult]]],
    after_table: list[str] | None = None,
    without: Sequence[Path] = (),
    without_step: Sequence[WithoutStep] = (),
) -> list[str]:
    """``test``'s text: each task's part (:func:`group_lines`), the tasks
    found ``without`` a case or ``without_step``, ``after_table`` (``--coverage``'s lines), the
    summary line, and the copy sandbox's warning when a case ran in it."""
    out = [line for group, results in ran for line in group_lines(group, results)]
    out += [f"{NOT_RUN}  {without_case(p)}" for p in without]
    out += [f"{NOT_RUN}  {without_the_step(w)}" for w in without_step]
    out += after_table or []
    every = [result for _group, results in ran for result in results]
    passed = sum(1 for result in every if result.expected_matched)
    summary = f"{passed} passed, {len(every) - passed} failed"
    # A case whose folder cannot be read, or whose name cannot be an id, is not run, as --json, JUnit and
    # the plugin say: its expected.json was never read, so it is not counted as an unusable one.
    unread = sum(len(group.unread) for group, _results in ran)
    invalid = sum(len(group.invalid) for group, _results in ran) - unread
    if invalid:
        summary += f", {invalid} with an unusable expected.json"
    errors = sum(1 for group, _results in ran if group.error is not None)
    if errors:
        summary += f", {errors} task{'s' if errors > 1 else ''} not tested"
    # the tests JUnit and the plugin count for tasks not tested: each case listed, else the task itself
    not_run = unread + sum(len(group.cases) for group, _results in ran if group.error is not None)
    summary += f", {not_run} case{'s' if not_run > 1 else ''} not run" if not_run else ""
    not_judged = sum(len(group.not_judged) for group, _results in ran)
    if not_judged:
        summary += f", {not_judged} not judged"
    from verifier_tui.engine.suite import without_cases_counted, without_step_counted

    summary += "".join(
        f", {counted}" for counted in [*without_cases_counted(without), *without_step_counted(without_step)]
    )
    out.append(summary + tested_count(ran))
    warning = copy_warning(ran)
    network = shared_network(r for _group, rs in ran for r in rs)
    return out + ([warning] if warning else []) + ([f"note: {network}"] if network else [])


def tested_count(ran: list[tuple[Any, list[RunResult]]]) -> str:
    """How many tasks the summary line covers, `` (2 tasks)``; two verifiers of one
    task are two groups of one folder (``test two/tests/verifier.py two/tests/other.py``),
    counted as verifiers beside the tasks: `` (1 task, 2 verifiers)``. Nothing for one."""
    tasks = len({os.path.realpath(group.folder) for group, _results in ran})
    if len(ran) == tasks:
        return f" ({tasks} tasks)" if tasks > 1 else ""
    return f" ({tasks} task{'s' if tasks > 1 else ''}, {len(ran)} verifiers)"


def cases_not_run(group: Any) -> list[str]:
    """A task that cannot be tested (no verifier): each of its cases, not
    run, its reason said once on the task's line. ``test --junit`` and the
    pytest plugin count each as a test not run; the text listed none."""
    if group.error is None:
        return []
    return [f"{one_line(case.name)}: not run (its task is not tested)" for case in group.cases]


def without_the_step(task: WithoutStep) -> str:
    """A task found without the step ``--step`` names: not tested, and why."""
    from verifier_tui.engine.suite import not_tested

    return f"task {one_line(task.folder.name)} ({here(task.folder)}): {one_line(not_tested(task))}"


def without_case(task: Path) -> str:
    """A task found without a case: not tested, and how to make one."""
    from verifier_tui.engine.suite import not_tested

    return f"task {one_line(task.name)} ({here(task)}): {not_tested(task)}"


@record(frozen=True)
class JunitCase:
    """One ``testcase`` of a JUnit report: a task's case, or a job's trial."""

    classname: str
    name: str
    time: str
    failure: tuple[str, str] | None = None  # (message, text)
    error: str | None = None
    skipped: str | None = None  # why it was not run, and that this is no failure
    stdout: str = ""
    stderr: str = ""


def _not_run(problem: str) -> tuple[str, str]:
    """A JUnit failure's (message, text) for a test that could not be run."""
    from verifier_tui.engine.suite import not_run

    said = one_line(not_run(problem))  # the body too, as the plugin's is
    return said, said


def classname(group: Any) -> str:
    """A task's JUnit classname: its name, then, when another of its verifiers
    is tested beside this one (``TaskCases.verifier_apart``), the verifier, as
    pytest's junitxml writes the plugin's id ``two::tests/other.py``:
    ``two.tests/other.py`` (one case, one classname and name in both)."""
    return group.name if group.verifier_apart is None else f"{group.name}.{group.verifier_apart}"


#: How much of a run's stdout or stderr a JUnit case keeps: its end, where a traceback is (text_tail).
JUNIT_OUTPUT_CHARS = 4000


def junit_cases(
    ran: list[tuple[Any, list[RunResult]]], without: Sequence[Path] = (), without_step: Sequence[WithoutStep] = ()
) -> list[JunitCase]:
    """``test``'s cases as JUnit test cases, each with its task as ``classname``;
    in the order of the table; a task found ``without`` a case (or ``without_step``), a skipped
    test (as pytest reports a test it did not run, and not a failure)."""
    from verifier_tui.engine.suite import error_is_a_test, not_judged, not_tested

    out: list[JunitCase] = []
    # Task by task, in the table's order: what could not be run, the judged cases, the unusable, the unjudged
    for group, results in ran:
        out += _junit_not_run(group)
        for result in results:
            failure = (
                None
                if result.expected_matched
                else (
                    mismatch_title(result),
                    # both sides whole, as the plugin's body says them (its result lines): the title may cut them
                    f"expected {unbroken(expected_text(result))}\ngot {unbroken(actual_text(result))}\n"
                    + "".join(f"{one_line(said)}\n" for said in why_failed(group.session, result))
                    + text_tail(result.stderr, JUNIT_OUTPUT_CHARS),
                )
            )
            out.append(
                JunitCase(
                    classname(group),
                    result.inputs.case or "-",
                    f"{result.duration_s:.3f}",
                    failure,
                    stdout=text_tail(result.stdout, JUNIT_OUTPUT_CHARS),
                    stderr=text_tail(result.stderr, JUNIT_OUTPUT_CHARS),
                )
            )
        # In the words of test's own row and of the plugin's report of the same case (a CI moving from one to
        # the other sees the same tests): an unusable expected.json is "not run: ...", and a case no
        # expected.json judges a skipped test (it was left out of the report, though the text lists it).
        out += [JunitCase(classname(group), name, "0", failure=_not_run(problem)) for name, problem in group.invalid]
        if not error_is_a_test(group):  # (none from a task whose error is a test, as in the plugin)
            out += [JunitCase(classname(group), name, "0", skipped=not_judged(why)) for name, why in group.not_judged]
    out += [JunitCase(p.name, "(task)", "0", skipped=not_tested(p)) for p in without]  # the plugin's words too
    out += [JunitCase(w.folder.name, "(task)", "0", skipped=not_tested(w)) for w in without_step]
    return out


def _junit_not_run(group: Any) -> list[JunitCase]:
    """A task that could not be tested, as JUnit tests: the task itself, or, when it lists cases
    though none can run (no verifier), each case, as in the plugin. A test not run is a <failure>
    saying "not run: ...", as the plugin's (pytest's FAILED) is: a CI moving from one to the other
    sees the same tag and words."""
    from verifier_tui.engine.suite import error_is_a_test

    if group.error is None:
        return []
    out = [JunitCase(classname(group), "(task)", "0", failure=_not_run(group.error))] if error_is_a_test(group) else []
    return out + [JunitCase(classname(group), case.name, "0", failure=_not_run(group.error)) for case in group.cases]


def read_by(sessions: Iterable[Session], options: Options) -> list[tuple[str, Path | None]]:
    """What the runs of ``sessions`` read of the user's, named for :func:`output_file_problem`."""
    tasks = [(name, path) for s in sessions for name, path in (("the task", s.task.root), ("the verifier", s.verifier))]
    return [*tasks, *given(options)]


def given(options: Options) -> list[tuple[str, Path | None]]:
    """The files and folders the command line names for a run to read, named
    for :func:`output_file_problem` (known before any task is)."""
    import shutil

    python = shutil.which(options.python) if os.sep not in options.python else options.python
    return [
        ("the verifier", Path(options.verifier) if options.verifier else None),
        ("the workspace", options.workspace),
        ("the response", options.response),
        ("the task data", options.task_data),
        ("the nemo_gym folder", options.nemo_gym),
        ("the interpreter", Path(python) if python else None),
    ]


def output_file_problem(flag: str, path: Path | None, own: Iterable[tuple[str, Path | None]] = ()) -> str | None:
    """Why the file ``flag`` names (``--junit``, ``--coverage-report``) could
    not be written, asked before anything runs; None when it can (or was not
    asked for). What only the write can tell (a full disk) is said then.
    ``own``: what the user's run reads, named ("the task"), which no report
    may replace (a ``--junit`` naming a case's expected.json did, with exit 0)."""
    if path is None:
        return None
    where = os.path.realpath(path)  # a link's: the file is written where it leads
    folder = Path(where).parent
    from verifier_tui.engine.task.kinds import looks_like_task

    # Any task, not only those named: a report of a command line that names none runs no check of them.
    own = [*own, *(("the task", p) for p in Path(where).parents if looks_like_task(p))]
    for name, mine in own:
        if mine is not None and Path(where).is_relative_to(os.path.realpath(mine)):
            return f"{flag} {path}: inside {name}, {mine}, which verifier-tui never writes: give a path outside it"
    stream = _own_output(path)
    if stream is not None:
        return f"{flag} {path}: it is this command's own {stream}: give a file of its own"
    if path.is_dir():
        return f"{flag} {path}: is a folder"
    try:
        st: os.stat_result | None = os.stat(where)
    except OSError:
        st = None
    if st is not None and stat.S_ISFIFO(st.st_mode):
        try:  # held open to the end, so a reader taking the report later sees no end of file before it
            _HELD.append(open_report(Path(where)))
        except OSError as exc:
            return f"{flag} {path}: {exc.strerror or exc}"
    names = st.st_nlink if st is not None else 1
    if names > 1:  # written in place, it would change every other name of it: one the run reads, may be
        return f"{flag} {path}: a file with {names - 1} other name(s) (hard links), which it would change too"
    if not folder.is_dir():
        return f"{flag} {path}: there is no folder {folder}"
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        return f"{flag} {path}: not writable"
    return None


def _own_output(path: Path) -> str | None:
    """``"stdout"`` or ``"stderr"`` when ``path`` (``/dev/stdout``, the file the output is redirected
    to) is where the command itself writes: a report there is written after its table or ``--json``
    document in a pipe, which no reader then takes, and over it in a file. A terminal (or
    ``/dev/null``), a device, takes both."""
    try:
        target = os.stat(path)
    except OSError:
        return None
    if stat.S_ISCHR(target.st_mode):
        return None
    for name, fd in (("stdout", 1), ("stderr", 2)):
        try:
            mine = os.fstat(fd)
        except OSError:
            continue
        if (mine.st_dev, mine.st_ino) == (target.st_dev, target.st_ino):
            return name
    return None


#: Report FIFOs opened by the checks, open until the command ends.
_HELD: list[IO[bytes]] = []


def open_report(path: Path) -> IO[bytes]:
    """``path`` opened to write a report. Never waits: opening a FIFO no program
    reads would block for ever, after the run, so it raises OSError instead."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NONBLOCK, 0o666)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise OSError(errno.ENXIO, "a FIFO that no program reads") from None
        raise
    os.set_blocking(fd, True)
    return os.fdopen(fd, "wb")


def refused_run(
    junit: Path | None,
    message: str,
    own: Iterable[tuple[str, Path | None]] = (),
    listed: Sequence[JunitCase] = (),
    document: Callable[[], object] | None = None,
) -> int:
    """A ``test`` that ran nothing: ``message`` said, and the report asked for
    written with it as its error (where it may be: ``own`` as for
    :func:`output_file_problem`), after the ``listed`` tests not run, so that a
    report of the last run is never left for CI to show green; ``document``
    prints --json's. Exit status 2."""
    problem = None
    if junit is not None and output_file_problem("--junit", junit, own) is None:
        error = JunitCase("verifier-tui", "(command line)", "0", error=message)
        problem = write_junit(junit, "verifier-tui", [*listed, error], 0.0)
    # the report, then the document, then the lines (said too when stdout fails: a full disk ends the
    # command), as a stop's: a stderr that cannot take them (a closed terminal) cuts no document sent to a file
    try:
        if document is not None:
            document()
    finally:
        terminal.last_error(message)
        if problem is not None:  # unsaid, CI would show the last run's report as this one's
            terminal.last_error(problem)
    return 2


def stopped_words(stop: BaseException, finished: int, count: int, what: str) -> str:
    """``test`` (``test JOB``, ``audit``) stopped by a signal (``KeyboardInterrupt`` is
    Ctrl+C's, ``SystemExit(128 + signal)`` SIGTERM's and SIGHUP's, as
    :mod:`~verifier_tui.commands.stopping` raises them) when ``finished`` of
    its ``count`` cases (trials, probes) had finished: one line."""
    import signal

    from verifier_tui.commands.stopping import exit_status

    name = signal.Signals(exit_status(stop) - 128).name
    if not count:  # stopped as the tasks were read
        return f"stopped by {name} before the {what} to run were all found: none ran"
    return f"stopped by {name} before every one ran: {finished} of {count} {what} finished"


def stopped_case(why: str) -> JunitCase:
    """A stopped run's JUnit error, beside the cases that finished: a report of
    this run, never none (the last run's, left in place, was CI's to show)."""
    return JunitCase("verifier-tui", "(stopped)", "0", error=why)


#: What pytest's junitxml (bin_xml_escape) writes as ``#xFFFE``, its pattern as pytest 8 writes it: there
#: ``\u10000`` is U+1000 then "0", so a character past U+FFFF (an emoji) is written ``#x1F600`` too, DEL is not.
#: Left to ``re``'s own cache, not compiled at import: its ranges take 5 ms to compile, which every `run`
#: would pay though only a JUnit report uses it.
_PYTEST_ESCAPES = "[^\u0009\u000a\u000d\u0020-\u007e\u0080-\ud7ff\ue000-\ufffd\u10000-\u10ffff]"


def junit_name(text: str) -> str:
    """A case's name or a message in a JUnit report, as the pytest plugin's
    report has it (the suite's name spelled alike): on one line and cut as
    every face names it (:func:`one_id`: a line break written \\n, a name not
    UTF-8 \\xff, a bidi control <U+202E>), then escaped as pytest's
    bin_xml_escape escapes the plugin's id in a name and a message: U+FFFE,
    U+FFFF and (its pattern's slip) every character past U+FFFF, #xFFFE,
    #x1F600. Cut before the escapes, as pytest gets the id already cut: cut
    after them, a name of more than 1,000 characters with an emoji was cut
    at another place and said another count left out. One case, one name in both."""
    return re.sub(
        _PYTEST_ESCAPES,
        lambda m: f"#x{ord(m.group()):02X}" if ord(m.group()) <= 0xFF else f"#x{ord(m.group()):04X}",
        one_id(text),
    )


def write_junit(
    path: Path,
    name: str,
    cases: list[JunitCase],
    wall: float,
    sandbox: str | None = None,
    network: str | None = None,
    notes: Sequence[str] = (),
    step: str | None = None,
) -> str | None:
    """A JUnit XML report: one testsuite called ``name``, a testcase for each
    of ``cases``; ``sandbox``: the words of a copy sandbox, ``network``: those
    of ``--network host`` (:func:`shared_network`), ``notes``: the tasks'
    (:func:`junit_notes`), each as a property and on the suite's output, where
    a CI page shows them (a testcase's properties are no xunit2); ``step``: the
    step run (``--step``, :func:`junit_step`), a property of its own. Returns why
    it could not be written (None: it was); the results were printed first."""
    from xml.etree import ElementTree as ET

    x = terminal.xml_text  # what XML 1.0 cannot hold, as a visible escape: the file stays well-formed
    # The suite's name and each message are titles CI shows on one line, as the plugin's (its _failure):
    # a task folder's name with a line break, raw, began a line of its own there. Escaped as pytest's
    # junitxml escapes the plugin's messages, so a title says a name as the classname beside it does.
    title = junit_name

    suite = ET.Element(
        "testsuite",
        name=title(name),
        tests=str(len(cases)),
        failures=str(sum(1 for c in cases if c.failure is not None)),
        errors=str(sum(1 for c in cases if c.error is not None)),
        skipped=str(sum(1 for c in cases if c.skipped is not None)),
        time=f"{wall:.3f}",
    )
    said = [
        (key, words) for key, words in (("step", step), ("sandbox", sandbox), ("network", network)) if words is not None
    ]
    said += [("note", note) for note in notes]
    if said:
        properties = ET.SubElement(suite, "properties")
        for key, words in said:
            ET.SubElement(properties, "property", name=key, value=x(words))
        ET.SubElement(suite, "system-err").text = x("\n".join(words for _key, words in said))
    for each in cases:
        name = junit_name(each.name)
        case = ET.SubElement(suite, "testcase", classname=one_id(each.classname), name=name, time=each.time)
        if each.failure is not None:
            ET.SubElement(case, "failure", message=title(each.failure[0])).text = x(each.failure[1])
        if each.error is not None:
            ET.SubElement(case, "error", message=title(each.error))
        if each.skipped is not None:
            ET.SubElement(case, "skipped", message=title(each.skipped))
        if each.stdout:
            ET.SubElement(case, "system-out").text = x(each.stdout)
        if each.stderr:
            ET.SubElement(case, "system-err").text = x(each.stderr)
    # Made whole before the file is opened, then one write: a signal in between leaves it whole or empty.
    document = ET.tostring(suite, encoding="utf-8", xml_declaration=True)
    try:
        with open_report(path) as handle:
            handle.write(document)
    except OSError as exc:
        return f"--junit {path}: cannot write it: {exc.strerror or exc}"
    return None


#: Said under what ``watch`` and ``test --watch`` print, while they wait for a change.
WATCHING = "watching for changes; Ctrl+C stops"
#: The width of ``watch``'s reward column (``reward 0.25``, ``RewardFileNotFoundError``).
WATCH_REWARD_WIDTH = 24


def watch_lines(result: RunResult, trigger: str) -> list[str]:
    """``#3   12:00:01  tests/verifier.py changed  verifier raised  412 ms  differs from expected``:
    when it ended, how, its reward when it wrote one, its time, and whether
    it matched the case's expected.json when there is one. Reward words longer
    than their column (a refusal, a contract error's cause) are cut there, so
    each run's line lines up with the last, and said whole on a line below
    (a refusal's why by the caller, as a note: once while it holds)."""
    reward = f"reward {headline_reward(result)}" if result.verdict.rewards is not None else harbor_error(result)
    if result.contract_cause is not None:
        reward = f"{returned_and_rule(result.contract_cause)[0]} · {reward}"
    if result.task_refused is not None:  # no verdict at all, whatever the reward folder holds (as run says)
        reward = REFUSED_TO_RUN
    line = (
        f"{watch_line_start(result.sequence, one_line(trigger))}  "
        f"{result.outcome.value:<15}  {cut_words(reward, WATCH_REWARD_WIDTH):<{WATCH_REWARD_WIDTH}}  "
        f"{duration_text(result.duration_s):>7}"
    )
    expected = expected_words(result)
    # (a refusal's why is not said here, under every run: watch says it as a note, once while it holds)
    cut = (
        [f"      {one_line(reward)}"]
        if result.task_refused is None and len(" ".join(reward.split())) > WATCH_REWARD_WIDTH
        else []
    )
    return [f"{line}  {expected}" if expected else line, *cut]


def interpreter_problem(session: Session) -> str | None:
    """Why ``--python`` cannot run the runner (not found, does not start, too
    old, does not answer), in one line; None when it can. Bad input: the
    commands say so and exit 2 before anything runs."""
    from verifier_tui.words.run import python_words

    return python_words(session.interpreter())


def sandbox_problem(session: Session | None = None) -> str | None:
    """Why no run can be kept apart here as ``VERIFIER_TUI_SANDBOX`` asks (a misspelt value,
    the view asked for by name on a machine without namespaces, a probe that could not be
    tried), in one line; None when runs can be. Asked of ``session``, or of this machine
    before any session is opened (a job's replays each open theirs). Not the trials' or
    cases' own fault: the command says it once and exits 2 before anything runs."""
    from verifier_tui.engine.sandbox.isolation import IsolationError, unavailable

    if session is None:
        return unavailable()
    try:
        session.isolation  # noqa: B018 (chosen once, and kept for the session's runs)
    except IsolationError as exc:
        return str(exc)
    return None


def refused_before_running(session: Session, *checks: Callable[[], str | None]) -> bool:
    """Whether the command stops before anything runs: no verifier (``spec``
    raises, and the cli says so in one line), a task.toml not read, an interpreter
    that cannot run the runner, or the first of ``checks`` to name a problem, said in one line."""
    session.spec()
    problem = (
        session.task.config.unread
        or interpreter_problem(session)
        or next(filter(None, (check() for check in checks)), None)
    )
    if problem:
        terminal.error(problem)
    return problem is not None
