"""Which lines of the task's own Python the cases reached.

The runner traces when asked (``--coverage-to FILE``, its extras module) and
writes, per file of ``/tests`` (the vendored ``.ng/`` left out), the lines
the interpreter can execute and those it did, both told by that same
interpreter (a line table differs between Python versions). Here that file is
read (the run wrote it: anything may be in it), its paths mapped back to the
user's, cases merged, and the result said as ranges of source lines, as
``--json`` and as LCOV for editors' gutters and CI services.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from verifier_tui.engine import untrusted
from verifier_tui.engine.record import field, record

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

#: The runner's file: a few numbers per line of the task's own files.
COVERAGE_LIMIT = 16 * untrusted.MB
COVERAGE_FILE = "coverage.json"  # in the stage's inputs/, beside the explain document
_NOT_OURS = f"{COVERAGE_FILE} is not what the runner writes (the verifier may have rewritten it)"


@record(frozen=True)
class FileLines:
    """One file: the lines that can run, and those that ran."""

    path: Path  # the user's own file
    statements: frozenset[int]
    executed: frozenset[int]

    @property
    def missing(self) -> list[int]:
        return sorted(self.statements - self.executed)


#: A file of the user's is one the runner measured only when the runner read
#: these same bytes (its SHA-256); the runner reads at most 2 MB of a file.
MEASURED_LIMIT = 2 * untrusted.MB
#: The user's file as it is now (its path, its bytes: None when they cannot be read whole).
UserFile = tuple[Path, bytes | None]
CHANGED = "changed by the run"
#: A name in tests/ that is a link leading out of it (even to come back): the lines run through it count for no file.
LINK_OUT = "a link that leads out of its folder: the lines that ran through it are not counted"


def read_runner_file(path: Path, user_file: Callable[[str], UserFile | None], beneath: Path | None = None) -> Coverage:
    """The runner's ``--coverage-to`` file, each file's path made the user's
    by ``user_file`` (None: not one of the task's, left out), and its bytes
    as they are now. The runner compiled each file as the run left it, and
    the verifier can change a file of /tests: a file whose bytes are not
    those the runner read is not measured, "changed by the run" (its lines
    would be another file's). Two names of one file (a link beside it) are
    one file. The run could rewrite the file: anything not of the runner's
    shape is a problem in one line, never an exception."""
    found = untrusted.read_json(path, COVERAGE_LIMIT, shape=dict, beneath=beneath)
    if found.state == "missing":  # the runner writes it as it ends: it never ended
        return Coverage(
            {}, "no coverage: the run was stopped, or ended the interpreter itself, before the runner wrote it"
        )
    if not found.ok:
        return Coverage({}, f"no coverage: {found.problem}")
    files, not_compiled = found.data.get("files"), found.data.get("not_compiled", {})
    digests = found.data.get("sha256")
    if not isinstance(files, dict) or not isinstance(not_compiled, dict) or not isinstance(digests, dict):
        return Coverage({}, f"no coverage: {_NOT_OURS}")
    if not all(isinstance(why, str) for why in not_compiled.values()):
        return Coverage({}, f"no coverage: {_NOT_OURS}")
    if not all(isinstance(digest, str) for digest in digests.values()):
        return Coverage({}, f"no coverage: {_NOT_OURS}")
    if found.data.get("tracer_replaced") is True:
        return Coverage(
            {}, "no coverage: the verifier set a trace function of its own (sys.settrace): what ran is not known"
        )
    lines: dict[Path, FileLines] = {}
    unmeasured: dict[Path, str] = {}
    for staged, entry in files.items():
        statements = _numbers(entry.get("statements")) if isinstance(entry, dict) else None
        executed = _numbers(entry.get("executed")) if isinstance(entry, dict) else None
        if statements is None or executed is None or not executed <= statements or staged not in digests:
            return Coverage({}, f"no coverage: {_NOT_OURS}")
        mine = user_file(staged)
        if mine is None:
            continue
        path, data = mine
        if not _same(data, digests[staged]) or max(statements, default=0) > _last_line(data):
            unmeasured[path] = CHANGED
        elif path in lines:
            before = lines[path]
            lines[path] = FileLines(path, before.statements | statements, before.executed | executed)
        else:
            lines[path] = FileLines(path, statements, executed)
    for staged, why in not_compiled.items():
        if (mine := user_file(staged)) is None:
            continue
        path, data = mine
        if _changed(data, digests.get(staged), why):
            unmeasured[path] = CHANGED
        else:  # The run wrote the reason: it is kept on one line (it is shown as one).
            unmeasured.setdefault(path, " ".join(why.split())[:_WHY_AT_MOST] or "no reason given")
    lines = {path: file for path, file in lines.items() if path not in unmeasured}
    return Coverage(dict(sorted(lines.items())), None, dict(sorted(unmeasured.items())))


def _changed(data: bytes | None, digest: str | None, why: str) -> bool:
    """Whether a file the runner did not compile is one the run changed: not
    the bytes the runner read (its SyntaxError's line is another file's), or
    gone when the runner looked, while the user's is there (the runner's words
    would name /tests)."""
    if digest is not None:
        return not _same(data, digest)
    return data is not None and why.startswith(FileNotFoundError.__name__)


def _same(data: bytes | None, digest: str) -> bool:
    """Whether ``data`` are the bytes the runner read, by their SHA-256."""
    import hashlib

    return data is not None and hashlib.sha256(data).hexdigest() == digest


def _last_line(data: bytes | None) -> int:
    """The last line number Python gives in a file of ``data`` (1 for an
    empty one: Python before 3.11 gives its code line 1)."""
    return max(len(_split(data or b"")), 1)


def _numbers(value: Any) -> frozenset[int] | None:
    """A list of line numbers, or None when it is anything else."""
    if not isinstance(value, list) or not all(type(n) is int and n > 0 for n in value):
        return None
    return frozenset(value)


@record(frozen=True)
class Coverage:
    """One run's coverage: per user's file its lines, or why there is none."""

    files: dict[Path, FileLines]
    problem: str | None = None
    not_compiled: dict[Path, str] = field(default_factory=dict)
    """The task's files this interpreter could not compile, and why: they
    have no lines to count, which is not the same as every line ran."""


_WHY_AT_MOST = 200  # the runner's words for a file it could not compile, as kept


#: Both faces' name for a run on no case (a task without cases, or a workspace chosen): `1 case` and
#: `reached by -` named a case there is not.
WITHOUT_A_CASE = "the run without a case"


def runs_words(count: int, without_a_case: bool) -> str:
    """What a coverage is of: ``2 cases``, ``1 case``, or its one run on no case."""
    if without_a_case and count == 1:
        return WITHOUT_A_CASE
    return f"{count} case{'' if count == 1 else 's'}"


def problem_words(problems: Iterable[tuple[str, str]], cases: int) -> list[str]:
    """Why cases have no coverage (``problems``: each case's name and
    ``no coverage: why``), each reason once, naming its cases unless it is
    every one of the ``cases``' (a task's own runner says it for every case):
    ``no coverage of task::empty: the run was stopped, ...``."""
    by_problem: dict[str, list[str]] = {}
    for name, problem in problems:
        by_problem.setdefault(problem, []).append(name)
    said = [
        problem if len(names) == cases else f"no coverage of {', '.join(names)}: {problem.split(': ', 1)[-1]}"
        for problem, names in by_problem.items()
    ]
    return list(dict.fromkeys(said))


def not_measured_words(not_compiled: dict[Path, str], shown: Callable[[Path], str]) -> list[str]:
    """``tests/old.py: not measured: SyntaxError at line 3: invalid syntax``."""
    return [f"{shown(path)}: not measured: {why}" for path, why in not_compiled.items()]


def merge(runs: Iterable[dict[Path, FileLines]]) -> dict[Path, FileLines]:
    """Every run's lines as one: a line ran when any run ran it."""
    merged: dict[Path, FileLines] = {}
    for run in runs:
        for path, lines in run.items():
            before = merged.get(path)
            if before is None:
                merged[path] = lines
            else:
                merged[path] = FileLines(path, before.statements | lines.statements, before.executed | lines.executed)
    return dict(sorted(merged.items()))


def ranges(lines: Iterable[int]) -> list[tuple[int, int]]:
    """``[3, 4, 5, 9]`` as ``[(3, 5), (9, 9)]``."""
    out: list[tuple[int, int]] = []
    for line in sorted(set(lines)):
        if out and line == out[-1][1] + 1:
            out[-1] = (out[-1][0], line)
        else:
            out.append((line, line))
    return out


def source_lines(path: Path) -> list[str]:
    """The file's lines as Python numbers them (empty when it cannot be read):
    in the encoding it declares (PEP 263), and broken only at ``\\n``,
    ``\\r\\n`` and ``\\r``. ``str.splitlines`` breaks at a form feed and at
    U+2028 too, and every line after one was shown beside the wrong mark. Read as every file of
    the user's is, after the runs: a FIFO or a device may be in its place by now."""
    try:
        data = untrusted.read_bytes(path, MEASURED_LIMIT, keep="head").data
    except ValueError:  # a name no file can have (a NUL in it)
        return []
    return _split(data) if data is not None else []


def _split(data: bytes) -> list[str]:
    import io
    import tokenize

    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:  # an encoding Python does not know: the file does not compile either
        encoding = "utf-8"
    text = io.StringIO(data.decode(encoding, errors="replace"), newline=None).read()
    return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")


_SOURCE_AT_MOST = 120  # characters of a line's source shown (a minified line may hold 20,000)


def missing_words(lines: FileLines, shown: str) -> list[str]:
    """Each range no run reached, with its first line's source:
    ``tests/verifier.py 8: return 1.0``, ``tests/verifier.py 12-14: if x:``."""
    text = source_lines(lines.path)
    out = []
    for first, last in ranges(lines.missing):
        label = f"{shown} {first}" if first == last else f"{shown} {first}-{last}"
        source = text[first - 1].strip() if first <= len(text) else ""
        out.append(f"{label}: {source[:_SOURCE_AT_MOST]}{'…' if len(source) > _SOURCE_AT_MOST else ''}")
    return out


def to_json(lines: dict[Path, FileLines]) -> dict[str, dict[str, list[int]]]:
    """Per file, the lines that ran and those no run reached."""
    return {str(path): {"executed": sorted(file.executed), "missing": file.missing} for path, file in lines.items()}


def lcov(lines: dict[Path, FileLines]) -> str:
    """LCOV, as editors' coverage gutters and CI services read it: per file an
    ``SF:`` record and ``DA:<line>,<1 when some run reached it, else 0>`` per
    line that can run. A file whose name holds a line break is left out: a
    record is read line by line, and its ``SF:`` would name another file."""
    records = []
    for path, file in lines.items():
        if "\n" in str(path) or "\r" in str(path):
            continue
        rows = ["TN:", f"SF:{path}"]
        rows += [f"DA:{line},{int(line in file.executed)}" for line in sorted(file.statements)]
        rows += [f"LF:{len(file.statements)}", f"LH:{len(file.executed)}", "end_of_record"]
        records.append("\n".join(rows) + "\n")
    return "".join(records)
