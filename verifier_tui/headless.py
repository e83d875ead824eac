"""The headless commands: ``run``, ``explain``, ``test``, ``watch``.

Readable output by default, ``--json`` for machines (documented in the README),
and exit statuses that mean something: ``run`` exits with the runner's code
(124 on timeout), ``test`` with 0 only when every case matched.

Everything is written through :mod:`verifier_tui.terminal`: the verifier's
escape codes are shown harmlessly, a terminal that cannot take a character
gets an escape, and a reader that goes away (``| head -1``) changes no exit
status.
"""

from __future__ import annotations

import time
from pathlib import Path

from verifier_tui import terminal
from verifier_tui.engine.model import RunResult
from verifier_tui.engine.session import Session
from verifier_tui.engine.verdict import rewards_json
from verifier_tui.words import (
    LISTED,
    binding_text,
    case_status,
    cut_words,
    duration_text,
    expected_line,
    expected_words,
    headline_reward,
    missing_nemo_gym_hint,
    mode_text,
    more_text,
    near_miss_line,
    runner_words,
    shadow_lines,
    short_path,
    stuck_line,
    text_head,
    verdict_line,
)

TYPE_CHECKING = False  # typing is not imported at run time: start-up is measured
if TYPE_CHECKING:
    from typing import Any


def _out(text: str = "") -> None:
    """One line of readable output; the verifier's text in it made harmless."""
    terminal.line(terminal.plain_text(text))


def dump_json(data: Any, indent: int | None = 2) -> str:
    """A ``--json`` document (docs/json-output.md): strict JSON, always."""
    return terminal.json_text(data, indent=indent)


def _out_json(data: Any, indent: int | None = 2) -> None:
    terminal.line(dump_json(data, indent))


def _rule(title: str, width: int) -> str:
    """A heading line: drawn with "─", or "-" where the terminal cannot show it."""
    bar = "─" if terminal.can_show("─") else "-"
    return f"{bar * 2} {title} {bar * width}"


def _interpreter_problem(session) -> str | None:
    """Why ``--python`` cannot run the runner (not found, does not start, too
    old, does not answer), in one line; None when it can. Bad input: the
    commands say so and exit 2 before anything runs."""
    error = session.interpreter().error
    return None if error is None else f"--python {error}"


def _header(session, result: RunResult | None = None) -> str:
    """The task, verifier, case, interpreter and mode: of ``result`` when
    given (``test`` runs other cases than the session's own)."""
    task = session.task
    parts = [f"task {task.name}", f"verifier {short_path(session.verifier, task.root)}"]
    case = result.case if result is not None else (session.case.name if session.case else None)
    parts.append(f"case {case}" if case else "no case")
    task_id = result.task_id if result is not None else session.task_id
    if task_id is not None:
        parts.append(f"task row {task_id}")
    parts.append(session.options.python)
    parts.append(mode_text(result.mode if result is not None else session.mode))
    runner = runner_words(session)
    if runner:
        parts.append(runner)
    return " · ".join(parts)


def _notices(session, result: RunResult | None = None) -> list[str]:
    own = session.notices()
    if result is not None and session.case is not None and result.case != session.case.name:
        # Another case than the session's (``test``): that case's problems, not the session's case's.
        case = session.task.case(result.case) if result.case else None
        own = session.task.notices() + [f"case {case.name}: {p}" for p in (case.problems if case else ())]
    seen: list[str] = []
    for notice in own + (result.notices if result else []):
        if notice not in seen:
            seen.append(notice)
    return seen


def result_json(session, result: RunResult) -> dict[str, Any]:
    data = result.to_json()
    data["task"] = str(session.task.root)
    data["task_name"] = session.task.name
    data["notices"] = _notices(session, result)
    return data


def result_lines(session, result: RunResult) -> list[str]:
    """What ``run`` prints about a run: the verdict, against expected.json
    when there is one, the reward files, the exit code in words, stdout and
    the mapped traceback. The pytest plugin reports a failed case with it."""
    lines = [_header(session, result), session.isolation.words]
    lines += [f"note: {notice}" for notice in _notices(session, result)]
    hint = missing_nemo_gym_hint(result)
    if hint:
        lines.append(f"note: {hint}")
    lines += [f"note: {shadow}" for shadow in shadow_lines(result.explain, session.task.root)]
    lines.append(f"{result.outcome_words} · {duration_text(result.duration_s)}")
    stuck = _stuck(session, result)
    if stuck:
        lines.append(stuck)
    lines.append(f"verdict: {verdict_line(result)}")
    warnings = list(result.verdict.warnings)
    lines += [f"warning: {warning}" for warning in warnings[:LISTED]]
    if len(warnings) > LISTED:
        lines.append(f"warning: {more_text(len(warnings) - LISTED, 'warnings')}")
    line = expected_line(result)
    if line:
        lines.append(line)
    near = near_miss_line(result)
    if near:
        lines.append(f"note: {near}")
    for reward_file in result.reward_files:
        text = reward_file.text if reward_file.text is not None else f"<{reward_file.kind}>"
        head, more = text_head(text.strip())
        lines.append(f"{reward_file.name}: {head}")
        if more:
            lines.append(f"  … {more} of {reward_file.name} (--json has them)")
    problems = (result.explain or {}).get("problems") or []
    lines += [f"contract: {problem}" for problem in problems[:LISTED]]
    if len(problems) > LISTED:
        lines.append(f"contract: {more_text(len(problems) - LISTED, 'problems')}")
    if result.stdout.text.strip():
        lines += [_rule("stdout", 40), result.stdout.text.rstrip("\n")]
    if result.stderr.text.strip():
        lines += [_rule("stderr", 40), result.stderr.text.rstrip("\n")]
    if result.stack is not None and result.stack.text:
        lines += [_rule("stack at the timeout", 40), result.stack.text]
    return lines


def _stuck(session, result: RunResult) -> str | None:
    """Where a run that timed out was stuck (words.stuck_line), paths as the header shows them."""
    return stuck_line(result.stack, lambda path: short_path(path, session.task.root))


def print_result(session, result: RunResult) -> None:
    for line in result_lines(session, result):
        _out(line)


def _harbor(args, command: str) -> int | None:
    """A Harbor trial or job folder goes to the trial commands (and
    ``run --both-modes`` to its own); None: this module's command goes on."""
    from verifier_tui import headless_harbor

    status = headless_harbor.dispatch(args, command)
    if status is None and getattr(args, "both_modes", False):
        return headless_harbor.both_modes_command(args)
    return status


def run_command(args) -> int:
    """``verifier-tui run``."""
    status = _harbor(args, "run")
    if status is not None:
        return status
    session = Session(args.path, args.options)
    with session:
        session.spec()  # no verifier: one line (cli), before the interpreter is asked
        problem = _interpreter_problem(session)
        if problem:
            terminal.error(problem)
            return 2
        try:
            result = session.run(trigger="command line")
        except OSError as exc:
            terminal.error(f"could not stage the run: {exc}")
            return 2
        if args.json:
            _out_json(result_json(session, result))
        else:
            print_result(session, result)
        return result.exit_status


def explain_command(args) -> int:
    """``verifier-tui explain``."""
    status = _harbor(args, "explain")
    if status is not None:
        return status
    session = Session(args.path, args.options)
    with session:
        session.spec()
        problem = _interpreter_problem(session)
        if problem:
            terminal.error(problem)
            return 2
        data = session.explain()
        if args.json:
            data = dict(data)
            data.setdefault("notices", [])
            data["notices"] = _notices(session) + list(data["notices"])
            data["mode"] = session.mode
            from verifier_tui.engine.diagnosis import stdlib_shadows

            data["shadowing"] = stdlib_shadows(data)
            _out_json(data)
            return 0 if "error" not in data else 2
        if "error" in data:
            terminal.error(data["error"])
            terminal.write(terminal.plain_text(data.get("stderr", "")), "stderr")
            return 2
        print_explain(session, data)
        return 0


def print_explain(session, data: dict[str, Any]) -> None:
    _out(_header(session))
    for notice in _notices(session) + list(data.get("notices") or []):
        _out(f"note: {notice}")
    python = data.get("python") or {}
    _out(f"python {python.get('version')} ({python.get('executable')})")
    _out("")
    _out("sys.path (in order):")
    width = max((len(str(row["path"])) for row in data.get("sys_path", [])[:LISTED]), default=10)
    rows = data.get("sys_path", [])
    for row in rows[:LISTED]:
        roles = " + ".join(row.get("roles") or [row.get("role")])
        missing = "" if row.get("exists", True) else "  (missing)"
        _out(f"  {row['index']:>2}  {str(row['path']):<{width}}  {roles}{missing}")
    if len(rows) > LISTED:
        _out(f"  {more_text(len(rows) - LISTED, 'entries')}")
    for shadow in shadow_lines(data, session.task.root):
        _out(f"  ⚠ {shadow}")
    _out("")
    for name, info in (data.get("modules") or {}).items():
        resolved = info.get("resolved") or "not found"
        _out(f"{name}: {resolved}")
        for shadowed in info.get("shadowed") or []:
            _out(f"  shadowed: {shadowed}")
    if data.get("preloaded_nemo_gym"):
        _out(f"note: nemo_gym was already imported at start-up from {data['preloaded_nemo_gym']}; the runner forgot it")
    _out("")
    verify = data.get("verify")
    if verify:
        _out(verify.get("signature", "verify(?)") + (" (async)" if verify.get("is_async") else ""))
        for row in data.get("parameters") or []:
            _out(f"  {row['name']:<12} {row['kind']:<22} {binding_text(row, session.mode)}")
    error = data.get("import_error")
    if error:
        _out(f"importing the verifier raised {error.get('type')}: {error.get('message')}")
        _out(error.get("traceback", "").rstrip())
    problems = data.get("problems") or []
    if problems:
        _out("")
        for problem in problems:
            _out(f"contract problem: {problem}")
    elif not error:
        _out("")
        _out("no contract problems: verify would be called")
    for text in environment_lines(data.get("environment")):
        _out(text)


def environment_lines(environment: dict[str, Any] | None) -> list[str]:
    """What the runner's environment held, by where it came from: names only,
    values only for verifier-tui's own and the task's (as task.toml writes them)."""
    if not environment:
        return []
    from verifier_tui.engine.environment import interpreter_switches

    lines = ["", "environment (what the runner gets):"]
    by_source: dict[str, list[str]] = {}
    for row in environment.get("passed") or []:
        shown = row["name"] if row.get("value") is None else f"{row['name']}={row['value']}"
        by_source.setdefault(row["source"], []).append(shown)
    for source, names in by_source.items():
        lines.append(f"  from {source}: {', '.join(names)}")
    held = environment.get("held_back") or []
    if held:
        switches = interpreter_switches(held)
        among = f", among them {', '.join(switches)}" if switches else ""
        lines.append(f"  held back: {len(held)} other variable(s) of your environment{among} (--env NAME passes one)")
    return lines


# ---------------------------------------------------------------------------
# test


def test_command(args) -> int:
    """``verifier-tui test``: every case with an expected.json of every task
    the paths name or hold (see :mod:`verifier_tui.engine.suite`), by task; a
    Harbor job or trial folder, alone, goes to the trial commands."""
    status = _harbor_test(args)
    if status is not None:
        return status
    import asyncio

    from verifier_tui.engine.session import cpu_count
    from verifier_tui.engine.suite import CollectionError, arun_groups, collect

    try:
        collection = collect(args.paths, args.options, args.case_patterns or ())
    except CollectionError as exc:
        terminal.error(str(exc))
        return 2
    with collection:
        groups = collection.groups
        runnable = collection.runnable
        if not runnable:  # nothing at all to run: why, one line per task
            for group in groups:
                terminal.error(f"{'' if len(groups) == 1 else group.name + ': '}{group.error}")
            return 2
        problem = _interpreter_problem(runnable[0].session)  # one --python for every task
        if problem:
            terminal.error(problem)
            return 2
        started = time.perf_counter()
        results = dict(zip(map(id, runnable), asyncio.run(arun_groups(runnable, args.jobs or cpu_count()))))
        wall = time.perf_counter() - started
        ran = [(group, results.get(id(group), [])) for group in groups]
        every = [r for _group, rs in ran for r in rs]
        passed = sum(1 for r in every if r.expected_matched)
        invalid = sum(len(group.invalid) for group in groups)
        errors = [group for group in groups if group.error is not None]
        refused = [group for group in groups if _refused(group)]
        if args.junit:
            write_junit(args.junit, ran, wall)
        if args.json:
            _out_json(test_json(ran, wall))
        else:
            for group, group_results in ran:
                print_group(group, group_results)
            summary = f"{passed} passed, {len(every) - passed} failed"
            if invalid:
                summary += f", {invalid} with an unusable expected.json"
            if errors:
                summary += f", {len(errors)} task{'s' if len(errors) > 1 else ''} not tested"
            _out(summary + (f" ({len(groups)} tasks)" if len(groups) > 1 else ""))
        if refused:
            return 2  # whatever the cases did, Harbor would not run any of that task's
        return 0 if passed == len(every) and not invalid and not errors else 1


def _harbor_test(args) -> int | None:
    """``test JOB`` (or ``test TRIAL``) replays the trials (``headless_harbor``);
    None when the paths are tasks and folders of tasks."""
    if len(args.paths) == 1:
        args.path = args.paths[0]
        return _harbor(args, "test")
    from verifier_tui.engine.harbor.folders import find_harbor_folder

    harbor = next((p for p in args.paths if find_harbor_folder(p) is not None), None)
    if harbor is not None:
        terminal.error(f"{harbor} is a Harbor folder: test it alone (verifier-tui test {harbor})")
        return 2
    if getattr(args, "task", None) is not None:
        terminal.error("--task: only for a Harbor trial or job folder")
        return 2
    return None


def _refused(group) -> str | None:
    """Why Harbor would refuse the task's task.toml; None when it would load it."""
    return group.session.task.config.refused if group.session is not None else None


def test_json(ran: list, wall: float) -> dict[str, Any]:
    """The test document (docs/json-output.md)."""
    single = ran[0][0] if len(ran) == 1 else None
    cases = []
    for group, results in ran:
        for result in results:
            data = result_json(group.session, result)
            data["id"] = group.item_name(result.case or "-")
            cases.append(data)
    passed = sum(1 for case in cases if case["expected_matched"])
    return {
        "task": str(single.folder) if single else None,
        "task_name": single.name if single else None,
        "verifier": str(single.session.verifier) if single and single.session and single.session.verifier else None,
        "passed": passed,
        "failed": len(cases) - passed,
        "invalid": [{"task": g.name, "case": name, "problem": problem} for g, _rs in ran for name, problem in g.invalid],
        "errors": [{"task": g.name, "folder": str(g.folder), "problem": g.error} for g, _rs in ran if g.error],
        "tasks": [{"name": g.name, "folder": str(g.folder),
                   "verifier": str(g.session.verifier) if g.session and g.session.verifier else None,
                   "passed": sum(1 for r in rs if r.expected_matched),
                   "failed": sum(1 for r in rs if not r.expected_matched), "invalid": len(g.invalid),
                   "harbor_refuses_task": _refused(g)}
                  for g, rs in ran],
        "duration_s": round(wall, 3),
        "harbor_refuses_task": _refused(single) if single else None,
        "cases": cases,
    }


def _expected_text(result: RunResult) -> str:
    expected = result.expected
    if expected is None:
        return "-"
    if expected.rewards is not None:
        within = f" ± {expected.tolerance:g}" if expected.tolerance is not None else ""
        return rewards_json(expected.rewards)[0] + within
    return f"exit {expected.exit_code}"


def _actual_text(result: RunResult) -> str:
    if result.verdict.rewards is not None:
        return rewards_json(result.verdict.rewards)[0]
    return f"exit {result.exit_code} · {result.outcome.value}" if result.exit_code is not None else result.outcome_words


def print_group(group, results: list[RunResult]) -> None:
    """One task's part of ``test``: a table of its cases, the stderr of each
    that failed, and the cases or the task that could not be run."""
    session = group.session
    verifier = f" · verifier {short_path(session.verifier, session.task.root)}" if session and session.verifier else ""
    _out(f"task {group.name}{verifier}")
    if group.error is not None:
        _out(f"!  not tested: {group.error}")
    if results:
        rows = [("", "case", "expected", "actual", "time")]
        for result in results:
            symbol, _ = case_status(result)
            rows.append((symbol, result.case or "-", _expected_text(result), _actual_text(result),
                         duration_text(result.duration_s)))
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        for row in rows:
            _out("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
    for name, problem in group.invalid:
        _out(f"!  {name}: not run: {problem}")
    for result in results:
        for said in (_stuck(session, result), near_miss_line(result)) if not result.expected_matched else ():
            if said:
                _out(f"{result.case}: {said}")
    for result in results:
        if not result.expected_matched and result.stderr.text.strip():
            _out(_rule(f"{result.case}: stderr", 30))
            _out(result.stderr.tail[-2000:].rstrip() if result.stderr.truncated else result.stderr.text[-2000:].rstrip())
    refused = _refused(group)
    if refused:
        _out(f"Harbor would refuse this task: {refused}")


def write_junit(path: Path, ran: list, wall: float) -> None:
    """A JUnit XML report: one testsuite, a testcase per case whose
    ``classname`` is its task; errors for what could not be run."""
    from xml.etree import ElementTree as ET

    x = terminal.xml_text
    results = [r for _g, rs in ran for r in rs]
    invalid = [(g, name, problem) for g, _rs in ran for name, problem in g.invalid]
    errors = [(g, "(task)", g.error) for g, _rs in ran if g.error is not None]
    errors += [(g, "task.toml", f"Harbor would refuse this task: {_refused(g)}") for g, _rs in ran if _refused(g)]
    failures = sum(1 for r in results if not r.expected_matched)
    name = f"verifier-tui {x(ran[0][0].name)}" if len(ran) == 1 else "verifier-tui"
    suite = ET.Element("testsuite", name=name, tests=str(len(results) + len(invalid) + len(errors)),
                       failures=str(failures), errors=str(len(invalid) + len(errors)), time=f"{wall:.3f}")
    for group, case_name, problem in errors + invalid:
        case = ET.SubElement(suite, "testcase", classname=x(group.name), name=x(case_name), time="0")
        ET.SubElement(case, "error", message=x(problem))
    for group, group_results in ran:
        for result in group_results:
            case = ET.SubElement(suite, "testcase", classname=x(group.name), name=x(result.case or "-"),
                                 time=f"{result.duration_s:.3f}")
            if not result.expected_matched:
                failure = ET.SubElement(case, "failure",
                                        message=x(f"expected {_expected_text(result)}, got {_actual_text(result)}"))
                failure.text = x(result.stderr.text[-4000:])
            if result.stdout.text:
                ET.SubElement(case, "system-out").text = x(result.stdout.text[-4000:])
            if result.stderr.text:
                ET.SubElement(case, "system-err").text = x(result.stderr.text[-4000:])
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)


# ---------------------------------------------------------------------------
# watch


def watch_line(result: RunResult, trigger: str) -> str:
    """``#3   12:00:01  tests/verifier.py changed  verifier raised  412 ms  differs from expected``:
    how the run ended, its reward when it wrote one, its time, and whether it
    matched the case's expected.json when there is one."""
    stamp = time.strftime("%H:%M:%S")
    reward = f"reward {headline_reward(result)}" if result.verdict.rewards is not None else ""
    line = (f"#{result.sequence:<3} {stamp}  {cut_words(trigger, 28):<28}  "
            f"{result.outcome.value:<15}  {reward:<12}  {duration_text(result.duration_s):>7}")
    expected = expected_words(result)
    return f"{line}  {expected}" if expected else line


def watch_command(args) -> int:
    """``verifier-tui watch``."""
    status = _harbor(args, "watch")
    if status is not None:
        return status
    import asyncio

    session = Session(args.path, args.options)
    with session:
        if session.verifier is None:
            from verifier_tui.engine.discovery import no_verifier_message

            terminal.error(no_verifier_message(session.task))
            return 2
        problem = _interpreter_problem(session)
        if problem:
            terminal.error(problem)
            return 2
        if not args.json:
            _out(_header(session))
            _out(session.isolation.words)
            for notice in _notices(session):
                _out(f"note: {notice}")
            _out("watching for changes; Ctrl+C stops")
        from verifier_tui.engine.watch.channel import WatchError

        try:
            asyncio.run(_watch(session, args))
        except KeyboardInterrupt:
            pass
        except WatchError as exc:  # e.g. the inotify watch limit: one line, and what to try
            hint = "" if args.poll else " (--poll watches without OS events)"
            terminal.error(f"{exc}{hint}")
            return 2
        if not args.json:
            _out(f"stopped after {session.sequence} run(s)")
        return 0


async def _watch(session, args) -> None:
    from verifier_tui.engine.watch.live import LiveRuns

    async def run(trigger: str, change) -> None:
        result = await session.arun(trigger=trigger)
        if args.json:
            _out_json(result_json(session, result), indent=None)
        else:
            _out(watch_line(result, trigger))
            stuck = _stuck(session, result)
            if stuck:
                _out(f"      {stuck}")
            elif result.outcome.slug != "reward_written" and result.stderr.text.strip():
                last = terminal.plain_text(result.stderr.text).strip().splitlines()[-1:] or [""]
                _out(f"      {cut_words(last[0], 150)}")
        terminal.flush()
        if terminal.reader_gone():
            # Nobody reads the stream any more (| head -1 exited): stop, as
            # Ctrl+C would, rather than run on for no one.
            live.stop_watching()

    def on_error(exc: BaseException) -> None:
        terminal.error(f"run failed: {exc}")

    def on_task_error(message: str) -> None:
        terminal.error(message)

    live = LiveRuns(session, run, force_polling=args.poll, on_error=on_error, on_task_error=on_task_error)
    try:
        await live.watch(run_first=True)
    finally:
        await live.close()
