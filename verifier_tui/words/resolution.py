"""How the runner will import and call the verifier, in the lines every face
prints the same: sys.path in the order the runner placed it with each entry's
roles, where ``nemo_gym.verifiers`` resolves, ``verify``'s signature
with each parameter's binding, and the runner's environment. A line is a list of parts, each its text and
what it is (:data:`HEADING`, :data:`QUIET`, :data:`STRONG`, :data:`PROBLEM`,
:data:`WARN`, or plain): the TUI's resolution panel gives
each kind its style, the text output joins them (:func:`plain`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifier_tui.engine.advice import PASS_ENV, Advice
from verifier_tui.engine.readback import INTERPRETER, Resolution
from verifier_tui.words.run import IN_JSON, LISTED, MODE_NAMES, more_text
from verifier_tui.words.text import one_line, unbroken

if TYPE_CHECKING:
    from collections.abc import Callable

    from verifier_tui.engine.readback import Explanation, Parameter
    from verifier_tui.engine.sandbox.environment import ChildEnvironment

HEADING, QUIET, STRONG, PROBLEM, WARN, PLAIN = "heading", "quiet", "strong", "problem", "warn", ""
Line = list[tuple[str, str]]


def plain(line: Line) -> str:
    """A line as text."""
    return "".join(text for text, _kind in line)


def sys_path_lines(explain: Explanation, show_path: Callable[[str], str], where: str = IN_JSON) -> list[Line]:
    """sys.path as the runner placed it: each entry's place, roles and path
    (the first :data:`LISTED`; ``where`` says where the rest are)."""
    rows = explain.sys_path[:LISTED]
    roles = [" + ".join(row.roles) for row in rows]
    width = max([len(role) for role in roles] + [4])
    heading = (
        "  in the order the runner placed it"
        if explain.placed
        else "  not placed: the runner stopped before it put its folders first (the interpreter's own, as it started)"
    )
    lines: list[Line] = [[("sys.path", HEADING), (heading, QUIET)]]
    for row, role in zip(rows, roles, strict=True):
        lines.append(
            [
                (f" {row.index:>2}  ", QUIET),
                (f"{role:<{width}}  ", QUIET if row.role == INTERPRETER else STRONG),
                (show_path(row.path) if row.path else "(the current folder)", PLAIN),
                ("" if row.exists else "  (missing)", QUIET),
                (f" with {show_path(row.laid_over)} laid over it" if row.laid_over else "", QUIET),
            ]
        )
    if len(explain.sys_path) > LISTED:
        lines.append([(f"  {more_text(len(explain.sys_path) - LISTED, 'entries', where)}", QUIET)])
    return lines


def interpreter_lines(explain: Explanation, show_path: Callable[[str], str], *, version: bool = True) -> list[Line]:
    """The interpreter the runner ran on, its version (without ``version``:
    left out, as a snapshot of the screen needs) and the switches it was
    started with."""
    python = explain.python
    if python is None:
        return []
    said = f"{python.implementation or 'python'} {python.version or '?'} " if version else ""
    flags = [name for name, on in python.flags.items() if on and name != "dont_write_bytecode"]
    return [
        [
            ("interpreter ", HEADING),
            (said, PLAIN),
            (f"({show_path(python.executable or '?')})", QUIET),
            (f"  flags: {', '.join(flags)}" if flags else "", QUIET),
        ]
    ]


def nemo_gym_lines(explain: Explanation, show_path: Callable[[str], str]) -> list[Line]:
    """Where ``nemo_gym.verifiers`` resolves (and the role of the sys.path
    entry it is found under), the copies it shadows, and a nemo_gym imported
    before the runner placed sys.path."""
    nowhere = Resolution(None)
    info = explain.modules.get("nemo_gym.verifiers", nowhere)
    head = ("nemo_gym.verifiers ", HEADING)
    if not explain.placed:  # looked up on a path the run never has: it says nothing of the run
        return [[head, ("not looked up: the runner stopped before it placed sys.path", QUIET)]]
    if info.resolved:
        role = [(f"  role: {info.role}", QUIET)] if info.role else []
        lines = [[head, ("resolves to ", PLAIN), (show_path(info.resolved), STRONG), *role]]
    else:
        top = explain.modules.get("nemo_gym", nowhere).resolved
        why = "nemo_gym has no verifiers package" if top else "nemo_gym is not installed for this interpreter"
        lines = [[head, (f"not importable: {why} (only a verifier that imports it needs it)", QUIET)]]
    for shadowed in info.shadowed:
        lines.append([(f"  ⚠ shadowed: {show_path(shadowed)} is further down sys.path and never imported", WARN)])
    if explain.preloaded_nemo_gym:
        # Said by what imported it: --preload (a run started ahead) is the tool's doing, which Harbor's
        # sandbox never does; otherwise the interpreter's start-up (a .pth file, sitecustomize).
        by_preload = explain.nemo_gym_by_preload
        who = "--preload imported nemo_gym" if by_preload else "nemo_gym was imported"
        lines.append(
            [
                (
                    f"  ⚠ {who} before the runner placed sys.path (from {show_path(explain.preloaded_nemo_gym)}); "
                    "the runner dropped it so the vendored copy loads"
                    + (", as in Harbor, which preloads nothing" if by_preload else ""),
                    WARN,
                )
            ]
        )
    return lines


def binding_lines(explain: Explanation, mode: str, show_text: Callable[[str], str], where: str = IN_JSON) -> list[Line]:
    """``verify``'s signature (of a module that imported), then each
    parameter: its name, its kind and what the runner passes it in ``mode``
    (the first :data:`LISTED`; ``where`` says where the rest are)."""
    lines: list[Line] = []
    verify = explain.verify
    if verify is not None and explain.import_error is None:
        # A default is shown by its repr, which the verifier's code writes: on one line, never forging another.
        lines.append([(show_text(unbroken(verify.signature)), HEADING)])
        if verify.is_async:  # (an async def that yields is no coroutine: it has CO_ASYNC_GENERATOR)
            lines[0].append(("  async: run to completion with asyncio.run", QUIET))
    params = explain.parameters[:LISTED]
    name_width = max((len(p.name) for p in params), default=0) + 2
    kind_width = max((len(p.kind) for p in params), default=0) + 2
    for row in params:
        lines.append(
            [
                (f"  {row.name:<{name_width}}", PROBLEM if row.missing else STRONG),
                (f"{row.kind:<{kind_width}}", QUIET),
                (show_text(unbroken(binding_text(row, mode))), PROBLEM if row.missing else PLAIN),
            ]
        )
    if len(explain.parameters) > LISTED:
        lines.append([(f"  {more_text(len(explain.parameters) - LISTED, 'parameters', where)}", QUIET)])
    return lines


def binding_text(row: Parameter, result_mode: str) -> str:
    """One parameter's binding in words."""
    binding = row.binding
    if binding == "argument":
        if isinstance(row.source, tuple):  # **kwargs
            return "receives " + (", ".join(row.source) if row.source else "nothing")
        return f"bound to {row.source} ({row.passed})"
    if binding == "default":
        why = (
            f"not available ({MODE_NAMES['harbor']}: no response)"
            if row.name == "response" and result_mode == "harbor"
            else (
                "not an argument the runner knows"
                if row.name not in ("workspace", "task_data", "response", "state")
                else "not available in this run"
            )
        )
        return f"default {row.default}: {why}"
    if binding == "nothing":
        return "receives nothing"
    if row.missing:
        return "MISSING: required, and nothing can fill it"
    return binding


def problem_line(data: Explanation, problem: str) -> str:
    """One problem the runner stopped on, in explain's words: a contract
    problem (exit 2), or the verifier's own code raising as the runner found
    verify or read its signature (exit 1, as the runner's contract has it)."""
    return problem_head(data) + problem


def problem_head(data: Explanation) -> str:
    """What :func:`problem_line` puts before the problem."""
    if data.would_exit == 1:
        return "verify would not be called (the verifier's own code raised, exit 1): "
    return "contract problem: "


def environment_lines(
    environment: ChildEnvironment | None, text: Callable[[str], str] = str, *, this_machine: bool = True
) -> list[Line]:
    """What the runner's environment held, by where it came from: names only,
    values only for verifier-tui's own and the task's (as task.toml writes
    them, on one line: anything may be written there; never read as paths,
    which the runner does not make of them). Said alike by
    ``explain TASK``, ``explain TRIAL`` (the replay's, the trial's tables as
    Harbor built them) and the TUI. Without ``this_machine``, the rows that
    differ from machine to machine (the user's own variables, what was held
    back) are left out, as a snapshot of the screen needs."""
    from verifier_tui.engine.sandbox.environment import FROM_USER, interpreter_switches

    if environment is None:
        return []
    lines: list[Line] = [[("environment", HEADING), ("  what the runner gets, as in Harbor's sandbox", QUIET)]]
    by_source: dict[str, list[str]] = {}
    for row in environment.passed:
        shown = row.name if row.shown is None else f"{row.name}={row.shown}"
        by_source.setdefault(row.source, []).append(text(one_line(shown)))
    for source, names in by_source.items():
        if this_machine or source != FROM_USER:
            lines.append([(f"  {source}: ", STRONG), (", ".join(names), PLAIN)])
    held = environment.held_back
    if held and this_machine:
        switches = interpreter_switches(held)
        among = f", among them {', '.join(switches)}" if switches else ""
        count = f"{len(held)} more variable{'' if len(held) == 1 else 's'}"
        lines.append([(Advice(f"  held back: {count} of your environment{among}; ", PASS_ENV), QUIET)])
    return lines


def text_sections(explain: Explanation, mode: str, show_path: Callable[[str], str]) -> list[list[str]]:
    """What the text faces (``explain TASK``, ``explain TRIAL``'s replay) print, section by
    section, as text: the interpreter, sys.path, where nemo_gym resolves, ``verify``'s
    bindings in ``mode``, and the runner's environment (each lays them out its own way)."""
    sections = (
        interpreter_lines(explain, show_path),
        sys_path_lines(explain, show_path),
        nemo_gym_lines(explain, show_path),
        binding_lines(explain, mode, str),
        environment_lines(explain.environment, one_line),
    )
    return [[plain(line) for line in lines] for lines in sections]
