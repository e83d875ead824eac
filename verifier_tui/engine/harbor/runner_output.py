"""The runner's own output, recognised in a trial's ``verifier/test-stdout.txt``
(the phases it tells of are :mod:`.phases`'s).

Harbor runs ``(/tests/test.sh) > /logs/verifier/test-stdout.txt 2>&1``: the
shim's and the runner's stdout and stderr merged, and no exit code. What the
runner (``runner/run_verifier.py``) prints is fixed by its contract:

- nothing at all on success (exit 0, a reward file written);
- on exit 1 a traceback, its own frames and importlib's left out, so the first
  frame is the verifier's code (``<module>`` when importing failed; a
  ``SyntaxError`` prints no frame line at all, only ``File "...", line N``);
- on exit 2 one line ``run_verifier: error: <problem>``;
- the shim, before the runner, ``test.sh: the verifier needs Python 3.8 or newer; ...``
  (exit 127);
- the shell, when a command of ``test.sh`` itself fails (``cd`` into a folder
  the image lacks, under ``set -e`` the script's end): bash writes
  ``/tests/test.sh: line 9: cd: /opt/x: No such file or directory``, dash
  ``/tests/test.sh: 9: cd: can't cd to /opt/x``.

The verifier's own prints come before any of these; the runner's report is the
last thing written, so it is searched from the end.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from verifier_tui.engine.model import CONTRACT_PREFIX, LINE_NUMBER, contract_line_at, line_number
from verifier_tui.engine.plain import ANSI
from verifier_tui.engine.record import record

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["CONTRACT_PREFIX"]
SHIM_PREFIX = "test.sh: the verifier needs Python 3.8 or newer"
TRACEBACK_HEADER = "Traceback (most recent call last):"
_CHAIN_LINES = (
    "The above exception was the direct cause of the following exception:",
    "During handling of the above exception, another exception occurred:",
)
# Any run of digits: a line no file has names no line, not no frame (model.line_number).
_FRAME = re.compile(r'^\s+File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<function>.+))?\s*$')
_EXCEPTION_LINE = re.compile(r"^(?P<type>[A-Za-z_][\w.]*)(?::\s?(?P<message>.*))?$")
_SYNTAX_TYPES = ("SyntaxError", "IndentationError", "TabError")
_PYTHON_IN_PATH = re.compile(r"/python(\d+\.\d+)/")
_SHELL_ERROR = re.compile(rf"^(?P<script>\S*test\.sh): (?:line )?(?P<line>{LINE_NUMBER}): (?P<message>.+)$")
# An ExceptionGroup (asyncio.TaskGroup's) is printed with every line of its
# report behind `  | `, each sub-exception's indented further, between `+-` rules.
_GROUP_MARK = re.compile(r"^ *[|+](?P<rest>.*)$")
# The rule before a group's next sub-exception (``+---- 2 ----``, or ``... ----`` before "and N more").
_NEXT_RULE = re.compile(r"^ *\+-+ (?:\d+|\.\.\.) -+$")
# A group's own report begins so (its margin taken off by _ungrouped): a group of exceptions never raised one
# by one (checks gathered, then raised together) has no other report with frames than this one.
_GROUP_TRACEBACK = "Exception Group " + TRACEBACK_HEADER
_GROUP_HEADER = re.compile(rf"^ *\+ {re.escape(_GROUP_TRACEBACK)}$")
_HEADERS = (TRACEBACK_HEADER, _GROUP_TRACEBACK)
# The line Python prints before the report of an exception that ended no run, in its exact shapes (a line
# verify writes must not pass over the run's report after it): one Python could not raise (a __del__'s,
# "Exception ignored in: <function Scratch.__del__ ...>"; an atexit callback's as the interpreter exits,
# "Exception ignored in atexit callback: <...>", 3.13 "... callback <...>:", 3.8 "Error in atexit._run_exitfuncs:"),
# or a thread's ("Exception in thread Thread-1 (worker):", its report's first frame threading's _bootstrap_inner).
_IGNORED = ("Exception ignored in: <", "Exception ignored in atexit callback")
# Where the runner's own report starts (it leaves its own frames and importlib's out, run_verifier.py's
# own_frames): in the verify it called, or in the verifier's top level when importing it failed. A verify that
# printed Python's line before an ignored exception's report (an agent's program's stderr it echoed) and then
# raised must not have its report passed over, yet verify need not be a plain function (a decorated one starts in
# the decorator's wrapper, an instance in __call__, a functools.partial in its function), so a report is matched
# to the line before it: where the line names a function (`<function Scratch.__del__ at 0x...>`, an atexit
# callback's, a generator's), the report passes through it before any frame in verify (first, or after a
# decorator's wrappers: a decorated __del__'s starts in `wrapper`); a weakref.finalize's (`<finalize object ...>`)
# starts in weakref.py's __call__; a line naming none (3.8's atexit line) is matched by no frame in verify or a
# top level first. Where they differ, the runner's report is read (a verifier's failure is not hidden for an
# exit-time report's sake); only where a genuine report and a verify's are the same text is it passed over, or
# the genuine one would be read as the run's: a partial or an instance's __call__ echoing 3.8's atexit line (an
# atexit callback's report, frames of the verifier's own), a verify under a wrapper named as the echoed line names.
_RUNNERS_FIRST_FRAMES = ("verify", "<module>")
_NAMED = re.compile(r"<(?:function|bound method|(?:async_generator|generator|coroutine) object) (\S+) (?:at|of) ")
_FINALIZE_CALL = ("weakref.py", "__call__")
# A weakref.finalize callback that raised as the interpreter exited: weakref.py's finalize._exitfunc hands the
# exception to sys.excepthook itself, so its report comes with no line before it, its first frame _exitfunc.
_FINALIZE_AT_EXIT = ("weakref.py", "_exitfunc")
_ATEXIT_38 = "Error in atexit._run_exitfuncs:"
_THREAD = "Exception in thread "
# A group's first line as Python prints it for the exception that ended the run: 2 columns in.
_GROUP_FIRST_LINE = "  + " + _GROUP_TRACEBACK


@record(frozen=True)
class Frame:
    file: str
    line: int | None
    function: str | None  # None for a SyntaxError's location line


@record(frozen=True)
class RunnerTraceback:
    """The last traceback in the output: ``frames`` of the exception that
    ended the run (the last of a chain), ``text`` the whole chain."""

    frames: tuple[Frame, ...]
    exception_type: str  # as printed: maybe dotted ("json.decoder.JSONDecodeError")
    exception_message: str
    text: str

    @property
    def bare_type(self) -> str:
        return self.exception_type.rsplit(".", 1)[-1]

    @property
    def while_importing(self) -> bool:
        """The verifier's top-level code raised (``<module>`` first), or it did not compile."""
        if self.bare_type in _SYNTAX_TYPES and (not self.frames or self.frames[0].function is None):
            return True
        return bool(self.frames) and self.frames[0].function == "<module>"

    @property
    def frameless(self) -> bool:
        """Only a SyntaxError's location, no frame that ran: the verifier did not compile."""
        return all(frame.function is None for frame in self.frames)


@record(frozen=True)
class ShellError:
    """A line the shell wrote when a command of test.sh itself failed."""

    script: str  # as the shell named it: /tests/test.sh in the sandbox
    line: int
    message: str  # "cd: /opt/x: No such file or directory"


@record(frozen=True)
class RunnerOutput:
    """What of the runner's output the text holds. ``kind``: ``empty``,
    ``traceback``, ``contract_error``, ``shim_no_python``, ``test_sh_error``
    (the last report is the shell's, about test.sh's own line) or ``other``
    (text that is none of these reports)."""

    kind: str
    traceback: RunnerTraceback | None = None
    contract_message: str | None = None
    shim_message: str | None = None
    python_version: str | None = None  # seen in the traceback's paths (/usr/lib/python3.11/...)
    nemo_gym_files: tuple[str, ...] = ()  # frames inside a nemo_gym package
    last_line: str | None = None
    shell_error: ShellError | None = None


def parse_runner_output(text: str) -> RunnerOutput:
    """Recognise the runner's (and the shim's) report in ``text``, its colours
    taken out: Python 3.13 colours what it prints itself under FORCE_COLOR
    (a task's own runner, a trial's test.sh), ``File \\x1b[35m"..."\\x1b[0m``."""
    lines = _plain_lines(text)
    meaningful = [line for line in lines if line.strip()]
    last_line = meaningful[-1] if meaningful else None
    if not meaningful:
        return RunnerOutput("empty")
    contract_at = _last_index(lines, lambda line: line.startswith(CONTRACT_PREFIX))
    shim_at = _last_index(lines, lambda line: line.startswith(SHIM_PREFIX))
    traceback_at = _traceback_end(lines)
    shell_at = _last_index(lines, lambda line: _SHELL_ERROR.match(line) is not None)
    found = [
        (at, kind)
        for at, kind in (
            (contract_at, "contract_error"),
            (shim_at, "shim_no_python"),
            (traceback_at, "traceback"),
            (shell_at, "test_sh_error"),
        )
        if at is not None
    ]
    if not found:
        return RunnerOutput("other", last_line=last_line)
    at, kind = max(found)
    if kind == "test_sh_error":
        match = _SHELL_ERROR.match(lines[at])
        assert match is not None
        shell = ShellError(match.group("script"), int(match.group("line")), match.group("message").strip())
        return RunnerOutput(kind, last_line=last_line, shell_error=shell)
    if kind == "contract_error":
        return RunnerOutput(kind, contract_message=lines[at][len(CONTRACT_PREFIX) :].strip(), last_line=last_line)
    if kind == "shim_no_python":
        return RunnerOutput(kind, shim_message=lines[at].strip(), last_line=last_line)
    tb = _read_traceback(lines, at)
    version = None
    for frame in tb.frames:
        match = _PYTHON_IN_PATH.search(frame.file)
        if match:
            version = match.group(1)
            break
    nemo = tuple(f.file for f in tb.frames if "/nemo_gym/" in f.file)
    return RunnerOutput("traceback", traceback=tb, python_version=version, nemo_gym_files=nemo, last_line=last_line)


def _plain_lines(text: str) -> list[str]:
    """``text``'s lines as the readers read them: colours off, a report's first line split from output
    left unfinished before it (:func:`_report_lines`), an exception group's margin off (:func:`_ungrouped`)."""
    return _ungrouped(_report_lines(_uncoloured(text)))


def _uncoloured(text: str) -> str:
    return re.sub(ANSI, "", text) if "\x1b" in text else text


def group_sub_exception(text: str, kind: str, message: str) -> tuple[str, str] | None:
    """``(type, message)`` of the report ``text`` reads when it is a
    sub-exception printed inside the last exception group whose own line is
    ``kind: message`` (as the runner's phase record names what raised: the
    class's bare name, ``Checks`` of a verifier's ``class
    Checks(ExceptionGroup)``, which Python prints with its module,
    ``verifier.Checks: ...``), else None: a report that is not one of the
    group's (an atexit callback's printed after it) does not stand for what
    raised. Whether it was a group is what Python printed says (the own line
    under a group's header), not the class's name."""
    report = parse_runner_output(text).traceback
    if report is None:
        return None
    lines = _report_lines(_uncoloured(text))  # the group's margin still on
    # the runner cuts a message at 500 characters (`...`); its first line is the group's own line's end
    first_of_own = (message.splitlines() or [""])[0].removesuffix("...")

    def own(at: int) -> bool:
        said = _EXCEPTION_LINE.match(_unmarked(lines[at])) if _GROUP_MARK.match(lines[at]) is not None else None
        if (
            said is None
            or said["type"].rsplit(".", 1)[-1] != kind
            or not (said["message"] or "").startswith(first_of_own)
        ):
            return False
        # A group's own line: its header, then only its frames (indented, Python 3.11's source lines bare), before it.
        while at > 0 and _unmarked(lines[at - 1])[:1].isspace():
            at -= 1
        return at > 0 and _GROUP_MARK.match(lines[at - 1]) is not None and _unmarked(lines[at - 1]) == _GROUP_TRACEBACK

    at = next((index for index in range(len(lines) - 1, -1, -1) if own(index)), None)
    # Where the group ends is the reader's own rule (_group_spans), not a second one: Python 3.11 and 3.12 print a
    # message's later lines bare in column 0 inside it, where the reader still reads the group.
    end = next((end for start, end in _group_spans(lines)[1] if start < at < end), None) if at is not None else None
    if at is None or end is None:
        return None
    first = (report.exception_message.splitlines() or [""])[0]
    last = f"{report.exception_type}: {first}" if report.exception_message else report.exception_type
    if any(_GROUP_MARK.match(line) is not None and _unmarked(line) == last for line in lines[at + 1 : end]):
        return report.bare_type, report.exception_message
    return None


def _report_lines(text: str) -> list[str]:
    """``text``'s lines, a report's first line split from output the run left
    unfinished before it. Python starts its report where the output stood:
    after ``sys.stderr.write("0;")`` (or a progress bar's ``\\r 5/10``) it
    prints ``0;Traceback (most recent call last):``, one line, and the report
    would not be read. A first line is taken only at the end of its line, as
    Python prints it (nothing follows it there), and after output that is not
    an exception group's margin (``    | Traceback ...`` is a sub-exception's,
    read by :func:`_ungrouped`). The lines after it are read as any others:
    a run that prints lines can forge a whole report at the start of one as
    easily, and it is the last report, read from the end, that counts. The
    runner's contract error line goes on from unfinished output the same way
    (:func:`~verifier_tui.engine.model.contract_line_at`)."""
    lines: list[str] = []
    frame_at = top_at = -1  # in lines: the last frame line, the last line in column 0 (a group's margin off)
    for line in text.splitlines():
        at = report_line_at(line)
        in_report = frame_at > top_at and _a_reports_line(line[:at], lines[top_at] if top_at >= 0 else "")
        for piece in [line[:at], line[at:]] if at > 0 and line[:at].strip(" |") and not in_report else [line]:
            unmarked = _unmarked(piece)
            if _FRAME.match(unmarked) is not None:
                frame_at = len(lines)
            elif unmarked[:1].strip():
                top_at = len(lines)
            lines.append(piece)
    return lines


def report_line_at(line: str) -> int:
    """Where a report's first line starts in ``line`` (-1: it holds none): Python's header (a group's
    too) only where it ends the line, as Python prints it, else the runner's contract line
    (:func:`~verifier_tui.engine.model.contract_line_at`). What comes before it is output the run left
    unfinished, or a line of a report Python was printing (:func:`_report_lines` tells them apart)."""
    first = _GROUP_FIRST_LINE if line.endswith(_GROUP_TRACEBACK) else TRACEBACK_HEADER
    return len(line) - len(first) if line.endswith(first) else contract_line_at(line)


# Where str.splitlines ends a line, as the reader splits them (a progress bar's `\r` too).
_LINE_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
# How far before a line the reader is run to tell its start apart (a frame's source line, after the frame).
_LOOK_BACK = 1000


def tail_start(text: str, at: int, most: int) -> int:
    """Where the end of ``text`` kept from about ``at`` starts, at a line as the reader splits
    ``text`` (:func:`_report_lines`: lines end at a progress bar's ``\r`` too). When ``at`` falls in
    a report's first line (Python's header, the runner's contract line) or in output the run left
    unfinished before it on its line, that first line's start, if it is at most ``most`` characters
    (a whole line of 100 KB that starts with the prefix is not kept whole; a frame's source line naming
    the prefix is the report's, as the reader reads it); else the next line's start; none: ``at``."""
    cut = max(text.rfind(mark, 0, at) for mark in _LINE_BREAKS) + 1
    if cut < at:  # ``at`` falls inside a line
        end = min((found for mark in _LINE_BREAKS if (found := text.find(mark, at)) >= 0), default=len(text))
        last = _report_lines(text[max(0, cut - _LOOK_BACK) : end])[-1]  # the line, or the piece the reader split
        if report_line_at(last) == 0 and len(last) <= most:
            return end - len(last)
    ends = [found for mark in _LINE_BREAKS if (found := text.find(mark, at - 1, len(text) - 1)) >= 0]
    if not ends:
        return at
    start = min(ends) + 1
    return start + 1 if text[start - 1 : start + 1] == "\r\n" and start + 1 < len(text) else start


def _a_reports_line(before: str, top: str) -> bool:
    """``before``, the start of a line after a frame (``top`` the last line in column 0 before it), is a line
    of the report Python was printing, never output left unfinished: the frame's source line (indented:
    ``assert out.startswith("run_verifier: error: ")``), or the report's last line (``Type: message`` after
    a header and frames: ``AssertionError: prog crashed: Traceback (most recent call last):``, an agent
    program's report in the message). A group's sub-exception is read with its margin taken off."""
    text = _unmarked(before)
    if text[:1].isspace():
        return True
    return _EXCEPTION_LINE.match(text) is not None and _unmarked(top) in _HEADERS


def _unmarked(line: str) -> str:
    """``line`` without an exception group's margin (``    | ``), if it has one."""
    mark = _GROUP_MARK.match(line)
    return mark["rest"].removeprefix(" ") if mark is not None else line


def _ungrouped(lines: list[str]) -> list[str]:
    """``lines`` with an exception group's report written as plain ones (:func:`_group_spans`)."""
    return _group_spans(lines)[0]


def _group_spans(lines: list[str]) -> tuple[list[str], list[tuple[int, int]]]:
    """``lines`` with an exception group's report written as plain ones: its
    ``|`` and ``+`` markers taken off (a sub-exception's, a group's within it,
    are only indented further; a rule between them is a blank line), so each
    sub-exception is a report of its own, the last one in depth-first order
    (as Python prints them; with two failed tasks, the second) read as the one
    that ended the run, and its frames as where it failed.

    Inside a group an unmarked line is still the group's, in any column:
    Python 3.11 and 3.12 put the margin on the first line of a chunk only, so a
    SyntaxError's source and caret lines come bare and indented, and a
    message's later lines bare in column 0, a blank one empty. The group ends
    after the outermost group's closing rule (what follows, a table drawn
    with ``|`` and ``+``, is not the group's), or before a column-0 traceback
    header or chain line (a report printed after it), or before a blank line
    after which no line of the group comes (one cut short). A closing rule
    ends the whole group unless a further sub-exception's rule follows it:
    Python prints one closing rule for groups that end together, at the
    innermost's margin (a nested group that is the last sub-exception).

    Also, each group's span in ``lines`` (its header's index, and the index
    after its last line): one line out for each line in."""
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    start = 0
    closing: str | None = None  # the outermost group's closing rule's margin, while in a group
    goes_on_to = -1  # a blank line's look ahead found the group goes on to this line
    passed_over = False  # the group is one Python introduced as ending no run: kept as printed, none of it read
    chain_first = 0  # the first header of the chain the last report seen is in
    judged = (-1, False)  # a chain's first header, and whether it is passed over: asked once, not for each link
    for index, line in enumerate(lines):
        if _a_header(line) and (closing is None or line == TRACEBACK_HEADER) and _link_before(lines, index) is None:
            chain_first = index
        printed = line
        if closing is None:
            header = _GROUP_HEADER.match(line)
            if header is not None:
                closing = " " * (line.index("+") + 2) + "+"  # its sub-exceptions' rules are 2 columns in
                start = index
                # A thread's group (`Exception in thread ...:` before it): its sub-exceptions, each a report of
                # its own once the margin is off, would be read as the run's as much as the group's own.
                if judged[0] != chain_first:
                    judged = (chain_first, _chain_ends_no_run(lines, chain_first))
                passed_over = judged[1]
        elif index > goes_on_to and line in (TRACEBACK_HEADER, *_CHAIN_LINES):
            closing = None
            spans.append((start, index))
        elif index > goes_on_to and not line.strip():
            found = _group_goes_on(lines, index, closing[:-3])
            if found is None:
                closing = None
                spans.append((start, index))
            else:
                goes_on_to = found
        if closing is None:
            out.append(line)
            continue
        mark = _GROUP_MARK.match(line)
        if mark is not None:
            rest = mark["rest"]
            ending = rest and set(rest) == {"-"} and line.startswith(closing[:-1])  # +------, at any depth
            if ending and not (index + 1 < len(lines) and _NEXT_RULE.match(lines[index + 1])):
                closing = None
                spans.append((start, index + 1))
            line = "" if rest.startswith("-") else rest.removeprefix(" ")  # +-+---- 1 ----, +------: rules
        out.append(printed if passed_over else line)
    if closing is not None:
        spans.append((start, len(lines)))  # cut short: the group runs to the text's end
    return out, spans


def _group_goes_on(lines: list[str], blank: int, margin: str) -> int | None:
    """The next line after ``blank`` marked at or inside the group's
    ``margin`` (its ``|`` or ``+``), or None when a column-0 traceback
    header, chain line or group header, or the text's end, comes first. A
    blank line inside a group is a message's (Python 3.11 and 3.12 print a
    message's later lines bare, ``ValueError('a\\n\\nb')`` with an empty
    line, 3.13 behind the margin) only if the group goes on after it;
    the caller goes on from what is found, so no line is looked ahead at twice."""
    for index in range(blank + 1, len(lines)):
        line = lines[index]
        if line in (TRACEBACK_HEADER, *_CHAIN_LINES) or _GROUP_HEADER.match(line):
            return None
        if line.startswith(margin) and _GROUP_MARK.match(line):
            return index
    return None


def _last_index(lines: list[str], test: Callable[[str], bool]) -> int | None:
    for index in range(len(lines) - 1, -1, -1):
        if test(lines[index]):
            return index
    return None


def report_frames(text: str, *, whole_only: bool = False) -> list[tuple[str, int | None]]:
    """(path, line) of the frames of the last exception report in ``text``
    (what the runner printed for the exception that ended the run), outermost
    first: a frame printed after it (an atexit handler's ``print_stack`` as the
    interpreter exits) is not where it failed. Without a whole report, every
    frame ``text`` names (a run that printed frames of its own), or none when
    ``whole_only`` (a replay: the sandbox's side of a trial reads the report alone)."""
    from verifier_tui.engine.failing import traceback_frames

    report = parse_runner_output(text).traceback
    if report is None:  # a report passed over names no frame of the run's either (a thread's line)
        return [] if whole_only else traceback_frames(_outside_passed_over(text))
    return [(frame.file, frame.line) for frame in report.frames]


def _outside_passed_over(text: str) -> str:
    """``text``'s lines (its colours and a group's margin off) without the reports Python introduced as
    ending no run (:func:`_chain_ends_no_run`), their chains and groups too: each is skipped from its introduction
    to its last line in column 0 (a group's, kept as printed, to its end)."""
    lines = ["", *_plain_lines(text)]  # a report may start the text, no line before it
    kept: list[str] = []
    skipping, ended = False, False  # in a passed-over report; its last line read, a chain may follow
    for index, line in enumerate(lines):
        after = lines[index + 1] if index + 1 < len(lines) else ""
        # Judged at a chain's first report only: a later one's is judged with it, and asking again is quadratic.
        chain_first = (after in _HEADERS or _GROUP_HEADER.match(after)) and _link_before(lines, index + 1) is None
        if chain_first and _chain_ends_no_run(lines, index + 1):
            skipping, ended = True, _GROUP_HEADER.match(after) is not None  # a group's lines are all margined
            continue
        if skipping and (not line or line[0].isspace() or line in _HEADERS or line in _CHAIN_LINES):
            ended = ended and line not in _CHAIN_LINES
            continue
        if skipping and not ended:
            ended = True  # the report's last line (`Type: message`)
            continue
        skipping = False
        kept.append(line)
    return "\n".join(kept)


def _traceback_end(lines: list[str]) -> int | None:
    """The line of the last exception report's final line (``Type: message``
    right after a header and its indented frames, or after a SyntaxError's
    location), or None. A report Python introduces as one of an exception
    that ended no run (:func:`_ends_no_run`) is passed over, its whole chain
    with it. One backward pass: each indented run is walked once."""
    index = len(lines)
    while index > 0:
        index -= 1
        line = lines[index]
        if not line or line[0].isspace():
            continue
        match = _EXCEPTION_LINE.match(line)
        if match is None:
            continue
        probe, saw_frame = index - 1, False
        while probe >= 0 and (not lines[probe] or lines[probe][0].isspace()):
            saw_frame = saw_frame or _FRAME.match(lines[probe]) is not None
            probe -= 1
        if probe >= 0 and lines[probe] in _HEADERS:
            first = _chain_start(lines, probe)
            if _chain_ends_no_run(lines, first):
                index = first  # the run ended on a report before the chain, or on none
                continue
            return index
        if saw_frame and match.group("type").rsplit(".", 1)[-1] in _SYNTAX_TYPES:
            return index
    return None


def _chain_ends_no_run(lines: list[str], first: int) -> bool:
    """The chain whose first report's header is ``lines[first]`` is one Python introduced as ending no run
    (:func:`_ends_no_run`), judged by the line before its first report and the frames of its last: a chain's
    earlier reports start where their exception was caught (a helper of verify's, a finalize callback's or a
    thread's target), its last where the exception that ended the call started (verify, weakref's _exitfunc,
    threading's _bootstrap_inner)."""
    return _ends_no_run(lines[first - 1] if first > 0 else "", lines, _chain_end(lines, first))


def _ends_no_run(before: str, lines: list[str], header: int) -> bool:
    """``before``, the line before a report (its header ``lines[header]``, a group's margin on or off), is
    Python's introduction of an exception that ended no run (:data:`_IGNORED`, :data:`_THREAD`): a thread's
    report starts in threading's ``_bootstrap_inner``, an ignored one's matches its line
    (:data:`_RUNNERS_FIRST_FRAMES`); or the report is one Python prints with none (:data:`_FINALIZE_AT_EXIT`)."""
    frames = _frames_of(lines, header)
    first = (frames[0]["file"].rsplit("/", 1)[-1], frames[0]["function"]) if frames else None
    if first == _FINALIZE_AT_EXIT:
        return True
    if before.startswith(_THREAD):
        return before.endswith(":") and first == ("threading.py", "_bootstrap_inner")
    if not (before.startswith(_IGNORED) or before == _ATEXIT_38):
        return False
    functions = [frame["function"] for frame in frames]
    named = _NAMED.search(before)
    if named is not None:
        name = named[1].rsplit(".", 1)[-1]
        return name not in _RUNNERS_FIRST_FRAMES and name in functions[: _runners_frame(functions)]
    if "<finalize object" in before:
        return first == _FINALIZE_CALL
    return _runners_frame(functions) == len(functions)


def _runners_frame(functions: list[str]) -> int:
    """The index of the first of a report's ``functions`` where the runner's report could start (verify's, or a
    top level's first: a top level the verifier imports later is the import's, not the runner's), or their count."""
    if functions[:1] == ["<module>"]:
        return 0
    return next((at for at, name in enumerate(functions) if name == "verify"), len(functions))


def _frames_of(lines: list[str], header: int) -> list[re.Match[str]]:
    """The frames of the report whose header is ``lines[header]``."""
    frames = []
    for at in range(header + 1, len(lines)):  # by index: islice steps through every line before header
        unmarked = _unmarked(lines[at])
        if unmarked[:1].strip():
            break
        frame = _FRAME.match(unmarked)
        if frame is not None:
            frames.append(frame)
    return frames


def _read_traceback(lines: list[str], end: int) -> RunnerTraceback:
    """The exception report ending at ``end``: its frames, its type and
    message, and the text of its whole chain."""
    start = end
    while start > 0 and (not lines[start - 1] or lines[start - 1][0].isspace()):
        start -= 1
    if start > 0 and lines[start - 1] in _HEADERS:
        start -= 1
    frames = []
    for line in lines[start:end]:
        match = _FRAME.match(line)
        if match:
            frames.append(Frame(match.group("file"), line_number(match.group("line")), match.group("function")))
    exception = _EXCEPTION_LINE.match(lines[end])
    return RunnerTraceback(
        frames=tuple(frames),
        exception_type=exception.group("type") if exception else lines[end],
        exception_message=(exception.group("message") or "") if exception else "",
        text="\n".join(lines[_chain_start(lines, start) : end + 1]),
    )


def _a_header(line: str) -> bool:
    """``line`` begins a report: a group's kept as printed (one passed over) too."""
    return line in _HEADERS or _GROUP_HEADER.match(line) is not None


def _chain_end(lines: list[str], header: int) -> int:
    """The last header of the chain a report starting at ``header`` is in: walked on over "The above exception
    was ..." links, as :func:`_chain_start` walks back."""
    index = header + 1
    while index < len(lines):
        line = lines[index]
        if _a_header(line):
            break
        if line in _CHAIN_LINES:
            after = next((at for at in range(index + 1, len(lines)) if lines[at].strip()), None)
            if after is None or not _a_header(lines[after]):
                break
            header = after
            index = after
        index += 1
    return header


def _chain_start(lines: list[str], header: int) -> int:
    """The first header of the chain whose last report starts at ``header``:
    walked back over "The above exception was ..." links."""
    start = header
    while (link := _link_before(lines, start)) is not None:
        earlier = next((at for at in range(link - 1, -1, -1) if _a_header(lines[at])), None)
        if earlier is None:
            return start
        start = earlier
    return start


def _link_before(lines: list[str], header: int) -> int | None:
    """The "The above exception was ..." line before the report at ``header`` (blank lines between), or None."""
    probe = header - 1
    while probe >= 0 and not lines[probe].strip():
        probe -= 1
    return probe if probe >= 0 and lines[probe] in _CHAIN_LINES else None
