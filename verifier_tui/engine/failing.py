"""The line of the user's a failed run points at, for the user's editor: the
innermost traceback frame in the task's files (the verifier, a helper), else
in the user's inputs (the workspace, the response or task data file); for a
run that timed out, where it was stuck; for test.sh that ended before the
runner (a trial's replay), the script's line.

Every name here comes from the run's output (its stderr, its stack dump),
which the verifier writes, and the agent's code runs inside the verifier: a
frame may name any file. So each name goes through one rule,
:func:`verifier_tui.engine.untrusted.own_file`, the one a trial's frames go
through too (:class:`verifier_tui.engine.harbor.sandbox.PathMapper`): a
regular file of the task's (or the workspace's) own, named absolutely, ``..``
folded, through no link that leads out of its folder (``tests/helper.py``
linked to ``~/.bashrc``, which the staged copy leaves out, is no file of the
task's). The innermost frame that names a file in one of those folders but
fails the rule is kept, so the face can say why nothing opens."""

from __future__ import annotations

import os
import re
from pathlib import Path

from verifier_tui.engine import untrusted
from verifier_tui.engine.model import RunResult, line_number
from verifier_tui.engine.record import record

# A frame of an exception group's report is printed behind `  | ` (runner_output._ungrouped).
# Within a line: ``\s`` would match line breaks too, and a run of blank lines rescanned at each made it quadratic.
# Any run of digits: a line no file has names no line, not no frame (model.line_number).
_FRAME = re.compile(r'^[ \t]*(?:\|[ \t]+)?File "(?P<path>[^"]+)", line (?P<line>\d+)', re.M)

#: A file and its line, None where the run printed one no file has (the file is opened from its top).
Location = tuple[Path, int | None]


@record(frozen=True)
class Failing:
    """Where a run failed, as a file to open (``location``), and the
    innermost frame in the task's (or workspace's) folder that was not taken
    (``refused``: a link out of it, or no regular file), as the run named it."""

    location: Location | None = None
    refused: Location | None = None


def traceback_frames(text: str) -> list[tuple[str, int | None]]:
    """(path, line) of every traceback frame in ``text``, as written, outermost first."""
    return [(match["path"], line_number(match["line"])) for match in _FRAME.finditer(text)]


def failing_location(
    result: RunResult, traceback: list[tuple[str, int | None]], *, last: tuple[str, int] | None = None
) -> Failing:
    """Where ``result`` failed (see the module's docstring). A frame named
    relatively is never taken: it would be looked up in whatever folder the
    app was started from. ``last``: a frame the caller read in the output
    that comes after the traceback's (the script's line where a trial's
    test.sh ended before the runner). ``traceback``: the frames of its
    stderr to read, outermost first
    (:func:`verifier_tui.engine.harbor.runner_output.report_frames`: those of
    the last exception report, as the sandbox's side of a trial reads them).

    The task's files are those of the folders the run's ``/tests`` mirrored
    (``result.tests_dirs``) and the verifier's: the staged copy holds no other
    file of the task's, so ``tests/helper.py`` linked to ``../lib/h.py`` is
    none the run could have been in (the rule :mod:`~verifier_tui.engine.stacks`
    and a trial's ``PathMapper`` keep too)."""
    ran = result.inputs
    folders = [*result.tests_dirs, ran.verifier.parent]
    inputs = [ran.workspace] if ran.workspace is not None else []
    files = [p for p in (ran.response.path if ran.response else None, ran.task_data) if p is not None]
    frames = _frames(result, last, traceback)
    refused: Location | None = None
    for roots in (folders, inputs):
        for name, line in reversed(frames):
            if not os.path.isabs(name):
                continue
            path = Path(os.path.normpath(name))
            inside = [root for root in roots if path.is_relative_to(root)]
            own = next((found for root in inside if (found := untrusted.own_file(path, root)) is not None), None)
            if own is not None:
                return Failing((own, line), refused)
            if inside and refused is None and untrusted.present(path):
                refused = (path, line)
    for name, line in reversed(frames):
        if Path(name) in files:  # the response or task data: a file the user named, taken as named
            return Failing((Path(name), line), refused)
    return Failing(None, refused)


def _frames(
    result: RunResult, last: tuple[str, int] | None, traceback: list[tuple[str, int | None]]
) -> list[tuple[str, int | None]]:
    """The frames a run's output names, innermost last: where a run that
    timed out was stuck (its stack dump is the run's to write too), or the
    dump's innermost frame in the verifier's folder that is none of its own
    (so ``e`` says why it opens nothing, as for a traceback's); else its
    traceback's (as given), then ``last``."""
    stack = result.stack
    stuck = (stack.stuck_at or stack.refused) if stack is not None else None
    if stuck is not None:
        return [(stuck.path, stuck.line)]
    return traceback + ([last] if last is not None else [])
