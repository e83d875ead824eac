"""What each chooser offers, built from the session: the options of the case,
verifier, response and task-data lists, and the text the response editor
opens with. Plain functions, so the main screen's flows only push, await and
apply."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual.content import Content

from verifier_tui.engine import untrusted
from verifier_tui.engine.sandbox.stage import unreadable
from verifier_tui.engine.task.cases import default_task_data
from verifier_tui.engine.task.steps import tests_words
from verifier_tui.tui.display import content
from verifier_tui.tui.widgets.status_style import case_mark
from verifier_tui.words.run import rewards_text, within_words
from verifier_tui.words.text import one_line, plain_text

if TYPE_CHECKING:
    from verifier_tui.engine.model import ResponseSource, RunResult
    from verifier_tui.engine.session import Session
    from verifier_tui.engine.task.cases import Case
    from verifier_tui.tui.display import Display

#: The biggest response file the editor opens (more is said: edit it in your
#: editor). A text area takes its text on the app's loop: 1.4 s for 1 MB here,
#: 5 s for 4 MB, the screen held meanwhile.
EDITOR_LIMIT = untrusted.MB
#: Option ids that are not a case name or a path (a NUL never is either).
NO_CASE = "\0none"
NO_STEP = "\0no step"
OTHER_FILE = "\0other"

Rows = list[tuple[str, "Content | str"]]


def case_options(session: Session, last_by_case: dict[str, RunResult], outdated_through: int) -> tuple[Rows, str]:
    """Every case with its last verdict and what it expects, then "no case";
    and the id of the current choice. A verdict out of date is marked as the
    cases list marks it (:func:`case_mark`, ``outdated_through`` its)."""
    options: Rows = []
    for case in session.task.cases:
        last = last_by_case.get(case.name)
        symbol = case_mark(last, outdated_through, session.setup)[0] if last else "·"
        extra = " (with a response)" if case.response else ""
        options.append((case.name, content(f"{symbol} {one_line(case.name)}{extra}  · {expectation_words(case)}")))
    options.append((NO_CASE, Content("no case: run on an empty workspace")))
    return options, session.case.name if session.case else NO_CASE


def verifier_options(session: Session, fmt: Display) -> Rows:
    """The task's verifiers (ids are their paths), then "another file"."""
    options: Rows = [(str(v), fmt.path(v)) for v in session.task.verifiers]
    options.append((OTHER_FILE, "another .py file…"))
    return options


def step_options(session: Session, fmt: Display) -> tuple[Rows, str]:
    """Each step of a multi-step task with what Harbor lays over tests/ for it
    (its own tests, if any), then "no step"; and the id of the current choice."""
    options: Rows = []
    width = max((len(one_line(step.name)) for step in session.task.config.steps), default=0)  # one column of "·"
    for step in session.task.config.steps:
        # A step's tests that lead out of the task (or to nothing) are its tests, unused: said why, as the
        # resolution panel says it once the step is chosen, not "no tests of its own".
        laid = tests_words(session.task.root, step.name, fmt.path, fmt.text)
        options.append((step.name, content((one_line(step.name).ljust(width), "bold"), f"  · {laid}")))
    options.append((NO_STEP, Content("no step: tests/ with the task's [verifier] (Harbor never runs it so)")))
    return options, session.step if session.step is not None else NO_STEP


def response_options(session: Session, fmt: Display) -> Rows:
    """Where a response can come from: the case's file (when it has one), a
    file, typed text or JSON, or none."""
    options: Rows = []
    case_response = session.case.response if session.case else None
    if case_response is not None and case_response.path is not None:
        options.append(("case", f"the case's {fmt.path(case_response.path)}"))
    options += [
        ("file", "a file… (.json: Responses API JSON; anything else: plain text)"),
        ("text", "type plain text in an editor"),
        ("json", "type Responses API JSON in an editor"),
        ("none", "none: Harbor mode (a published task never gets a response)"),
    ]
    return options


def default_task_data_for(session: Session) -> Path | None:
    """The case's task data, else the task's default file (if any)."""
    if session.case:
        return session.case.task_data
    return default_task_data(session.task.root, session.task.tests_dir)


def task_data_options(session: Session, fmt: Display) -> Rows:
    default = default_task_data_for(session)
    options: Rows = []
    if default is not None:
        row = session.case.task_id if session.case else None
        options.append(
            ("default", f"the case's: row {row} of {fmt.path(default)}" if row else f"the default: {fmt.path(default)}")
        )
    rows = session.task.rows
    if rows is not None and rows.rows:
        options.append(("rows", f"a row of {rows.path.name} ({len(rows.rows)} task rows)…"))
    options += [("file", "a JSON file…"), ("none", "none: the runner passes {}")]
    return options


def task_row_options(session: Session) -> tuple[Rows, str | None]:
    """Each row of the task's tasks.jsonl (its task_id and the start of its
    fields), and the id of the row in use."""
    import json

    rows = session.task.rows
    options: Rows = []
    for row in rows.rows if rows is not None else []:
        preview = json.dumps(row.data, ensure_ascii=False)
        preview = preview if len(preview) <= 70 else preview[:69] + "…"
        options.append((row.task_id, content((one_line(row.task_id), "bold"), "  ", (preview, "$text-muted"))))
    return options, session.task_id


#: A file the editor cannot open: edited elsewhere. When it is the chosen response, the runs read it until
#: something is typed.
_ELSEWHERE = ": edit it in your editor; the editor starts empty"
_KEPT = ", and the runs keep the file until you type"
_OTHER = " (or choose another response with p)"


def editor_start(current: ResponseSource | None, kind: str, chosen: bool = True) -> tuple[str, str, str | None]:
    """(text, kind, why not) the response editor opens with, from the
    ``current`` response (the one chosen, else the one m put aside: what was
    typed before m is typed on, not lost): a typed response's text, or a
    file's when it is of the kind asked for, else empty. A file that holds
    what would act on the terminal (escape codes, a bidi override) is not
    opened in it: the editor shows text as it is (it set the terminal's
    title, cleared the screen). The why-not is the whole notice: what the
    runs do meanwhile differs, a file too big or with escape codes still
    running, a gone one stopping the next run; said only when ``current`` is
    ``chosen`` (the session's response): one m put aside, the runs do not
    read (Harbor mode stages no response)."""
    if current is not None and current.path is None:
        return current.text or "", kind, None
    if current is not None and current.path is not None and current.kind == kind:
        kept = _KEPT if chosen else ""
        found = untrusted.read_bytes(current.path, EDITOR_LIMIT)
        if found.state == "too-big":  # the runs still read it whole: only the editor leaves it
            limit = f"{EDITOR_LIMIT // untrusted.MB} MB"
            return "", kind, f"{current.path.name} is more than the {limit} the response editor opens{_ELSEWHERE}{kept}"
        if found.state == "missing":  # gone or a link to nothing: the runs cannot stage it either
            gone = unreadable("the response", found)  # a run's start error and p say the same words
            stops = ", and the next run cannot start until you type" if chosen else ""
            return "", kind, f"{gone}: the editor starts empty{stops}{_OTHER}"
        if found.problem is not None:  # not a file: said, or the empty editor looks like the file
            return "", kind, f"{unreadable('the response', found)}: the editor starts empty{_OTHER}"
        text = found.text()
        untabbed = (text or "").replace("\t", " ")  # a tab is the one control character an editor shows as it is
        if plain_text(untabbed) != untabbed:
            return "", kind, f"{current.path.name} holds control characters or escape codes{_ELSEWHERE}{kept}"
        return text or "", kind, None
    return "", kind, None


def expectation_words(case: Case) -> str:
    """What a case's expected.json asks for, in words."""
    expected = case.expected
    if case.expected_problem is not None:
        return f"not judged: {case.expected_problem}"
    if expected is None:
        return "no expected.json"
    words = []
    if expected.rewards is not None:
        words.append("rewards " + rewards_text(expected.rewards) + within_words(expected))
    if expected.exit_code is not None:
        words.append(f"exit {expected.exit_code}")
    return "expects " + " and ".join(words)
