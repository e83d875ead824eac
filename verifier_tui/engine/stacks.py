"""Where a run was stuck when it timed out.

Our runner takes ``--stack-signal NAME`` (``runner/run_verifier.py``): it
registers faulthandler on that signal before it imports the verifier, so on
the signal every thread's stack is written to its stderr, from inside the
signal handler (a verifier stuck in C code or in its module's top-level code
shows too), then the awaits of each waiting asyncio task (a coroutine waiting
at an ``await`` is on no thread's stack), and the run goes on. When a run times out, the process core
(:mod:`verifier_tui.engine.process`) calls :func:`ask` before it ends the
group: the signal goes to the runner itself, never to the view's leader
(``bwrap``) or its init (``sh``), which would dump nothing (and bwrap would
die of it). The core reads on for the dump, 200 ms at most.

:func:`take_stack` then cuts the dump out of stderr, so ``stderr`` stays what
the verifier wrote (what the sandbox's ``test-stdout.txt`` would hold), and
finds the innermost frame in the task's own files: where it was stuck.
"""

from __future__ import annotations

import os
import re
import signal as signals
from collections.abc import Callable
from pathlib import Path

from verifier_tui.engine import procfs, untrusted
from verifier_tui.engine.advice import OUR_RUNNER, Advice
from verifier_tui.engine.model import STACK_SIGNAL, CapturedText, Stack, StackFrame, line_number

_SIGNAL_NUMBER = signals.SIGUSR1

# faulthandler's format (CPython 3.8 to 3.13, Python/traceback.c): a header
# per thread, "  File "PATH", line N in FUNCTION" per frame, innermost first,
# "  ..." past 100 frames, a blank line between threads. After it, the runner
# lists each waiting asyncio task in the same format, under "Task 'NAME'".
_HEADERS = (
    r"(?:(?P<current>Current thread)|Thread) 0x[0-9a-fA-F]+.*\(most recent call first\):"
    r"|Stack \(most recent call first\):"
    r"|(?P<task>Task) .*\(most recent call first\):"
)
_HEADER = re.compile(rf"^(?:{_HEADERS})$")
# Any run of digits: a line no file has names no line, not no frame (model.line_number).
_FRAME = re.compile(r'^  File "(?P<path>.*)", line (?P<line>\d+|\?\?\?) in (?P<function>.*)$')
# Where a header may begin inside a line: faulthandler writes to fd 2 where the output stood, so after a
# line the verifier left unfinished (a progress bar's `\r3/10`) the dump's first header goes on from it.
# Each place from which the rest of the line is a whole header.
_HEADER_START = re.compile(rf"(?=(?:{_HEADERS})$)")
_ELLIPSIS = re.compile(r"^  (?:\.\.\.|<.*>)$")


# -- asking the runner ----------------------------------------------------------


ASKED, IGNORED, NOT_YET = "asked", "ignored", "not yet"


def ask(leader: int, script: str) -> str:
    """Send :data:`~verifier_tui.engine.model.STACK_SIGNAL` to the runner (``script`` is the runner's path on
    its command line) in the group ``leader`` leads: :data:`ASKED` when it was
    sent; :data:`IGNORED` when the verifier set the signal to be ignored
    (the dump can never come); :data:`NOT_YET` when the runner does not catch
    it yet (still starting: the default action would end it, with no dump),
    or is gone."""
    pid = runner_pid(leader, script)
    if pid is None:
        return NOT_YET
    if not _has(pid, "SigCgt", _SIGNAL_NUMBER):
        return IGNORED if _has(pid, "SigIgn", _SIGNAL_NUMBER, default=False) else NOT_YET
    try:
        os.kill(pid, _SIGNAL_NUMBER)
    except OSError:  # gone meanwhile
        return NOT_YET
    return ASKED


def runner_pid(leader: int, script: str) -> int | None:
    """The runner's pid, as this process sees it: among the leader and its
    descendants (in a view, bwrap, the view's init, the runner and
    what it started), the outermost one that runs ``script``: an
    interpreter, its options, the script (the init carries the runner's
    command line as arguments). The leader itself where there is no
    ``/proc`` (the copy sandbox runs the runner as the leader)."""
    if not os.path.isdir("/proc"):
        return leader
    parents: dict[int, int] = {}
    for pid in {leader} | procfs.descendants(leader):
        words = (procfs.read(pid, "cmdline", procfs.ARGS_BYTES) or b"").split(b"\0")
        fields = procfs.stat(pid)
        if fields is not None and len(fields) > 1 and _runs(words, os.fsencode(script)):
            parents[pid] = int(fields[1])
    outermost = [pid for pid, parent in parents.items() if parent not in parents]
    return min(outermost) if outermost else None


def _runs(words: list[bytes], script: bytes) -> bool:
    """Whether a command line is ``INTERPRETER [-OPTION ...] SCRIPT ...``."""
    if script not in words[1:]:
        return False
    return all(word.startswith(b"-") for word in words[1 : words.index(script, 1)])


def _has(pid: int, field: str, number: int, default: bool = True) -> bool:
    """Whether signal ``number`` is in ``/proc/PID/status``'s mask ``field``
    (``SigCgt`` caught, ``SigIgn`` ignored); ``default`` where it cannot be read."""
    try:
        return bool(int(procfs.status_field(pid, field) or "", 16) >> (number - 1) & 1)
    except ValueError:
        return default


# -- reading the dump -----------------------------------------------------------


def take_stack(
    stderr: CapturedText,
    asked: bool,
    *,
    stack_signal: bool,
    stack_answer: str,
    runner: Path | None,
    verifier: Path,
    tests_dir: Path,
) -> tuple[CapturedText, Stack]:
    """After a timeout: ``stderr`` (paths already mapped to the user's) without
    the runner's dump, and the :class:`Stack` it held, or why there is none.
    ``runner``: the task's own runner (None: verifier-tui's)."""
    if not stack_signal:
        # Said after "where it was stuck is unknown: " (words.run.stuck_line). No runner named: a replay
        # that ran the task's tests/test.sh, which starts a runner of the task's own.
        what = (
            f"the task's own runner ({runner.name})" if runner is not None else "the runner the task's test.sh starts"
        )
        return stderr, Stack(unavailable=Advice(f"{what} has no --stack-signal ", OUR_RUNNER))
    text = stderr.tail if stderr.truncated else stderr.text
    lines = text.split("\n")
    start, end = _dump_span(lines)
    if start is None:
        if asked and stderr.truncated:  # a flood of stderr: the dump, written or not, is past what is kept
            why = (
                f"the runner's stack is not in what was kept of stderr: the run wrote "
                f"{stderr.total_bytes:,} bytes there, and the end kept holds no dump after SIG{STACK_SIGNAL}"
            )
        elif asked:
            why = (
                f"the runner wrote no stack within 200 ms of SIG{STACK_SIGNAL} (does the verifier handle that signal?)"
            )
        elif stack_answer == IGNORED:
            why = (
                f"the verifier set SIG{STACK_SIGNAL} to be ignored, so the runner could not be asked for its stack "
                "(its --stack-signal needs that signal)"
            )
        else:
            why = f"the runner was not listening for SIG{STACK_SIGNAL} yet (it was still starting)"
        return stderr, Stack(unavailable=why)
    cut = _header_at(lines[start]) or 0
    dump_lines = [lines[start][cut:], *lines[start + 1 : end]]
    after = lines[end:]
    if cut:  # the output the dump went on from is the verifier's, left as it was, unfinished
        after = [lines[start][:cut] + (after[0] if after else ""), *after[1:]]
    dump = "\n".join(dump_lines)
    rest = "\n".join(lines[:start] + after)
    stderr = (
        CapturedText(stderr.head, rest, stderr.dropped_bytes, stderr.total_bytes)
        if stderr.truncated
        else CapturedText(rest, "", 0, stderr.total_bytes)
    )
    blocks = _blocks(dump_lines)

    def own(path: str) -> bool:
        return _own(path, verifier, tests_dir)

    frames = _stuck_block(blocks, str(runner) if runner is not None else "run_verifier.py", own)
    stuck = next((frame for frame in frames if own(frame.path)), None)
    inside = (f for f in frames if _in_folders(f.path, verifier, tests_dir) and untrusted.present(Path(f.path)))
    return stderr, Stack(
        text=dump, frames=tuple(frames), stuck_at=stuck, refused=next(inside, None) if stuck is None else None
    )


def _dump_span(lines: list[str]) -> tuple[int | None, int]:
    """The lines [start, end) of the last stack dump in ``lines``: every
    thread's block, from the first header (which may go on from output the
    verifier left unfinished: :func:`_header_at`) to the last frame."""
    last = next((i for i in range(len(lines) - 1, -1, -1) if _header_at(lines[i]) is not None), None)
    if last is None:
        return None, 0
    end = last + 1
    while end < len(lines) and (_FRAME.match(lines[end]) or _ELLIPSIS.match(lines[end])):
        end += 1
    start = last
    while start >= 2 and lines[start - 1] == "" and _header_at(lines[start]) == 0:  # a blank line between threads
        above = start - 2
        while above >= 0 and (_FRAME.match(lines[above]) or _ELLIPSIS.match(lines[above])):
            above -= 1
        if above < 0 or _header_at(lines[above]) is None:
            break
        start = above
    return start, end


def _header_at(line: str) -> int | None:
    """Where a dump's header begins in ``line`` (0: at its start; None: no
    header): after output the verifier left unfinished, the last place from
    which the rest of the line is a whole header. A header must end its line,
    as faulthandler writes it, so a run forges one no more easily than with a
    line of its own (the dump is the run's to write anyway)."""
    if _HEADER.match(line):
        return 0
    starts = [match.start() for match in _HEADER_START.finditer(line)]
    return starts[-1] if starts else None


_CURRENT, _THREAD, _TASK = "current thread", "thread", "task"


def _blocks(lines: list[str]) -> list[tuple[str, list[StackFrame]]]:
    """(what it is: a thread, the current one or a waiting task; its frames
    innermost first) for each block of a dump."""
    blocks: list[tuple[str, list[StackFrame]]] = []
    for line in lines:
        header = _HEADER.match(line)
        if header:
            blocks.append((_TASK if header["task"] else _CURRENT if header["current"] else _THREAD, []))
            continue
        frame = _FRAME.match(line)
        if frame and blocks:
            number = line_number(frame["line"]) if frame["line"].isdigit() else 0
            blocks[-1][1].append(StackFrame(frame["path"], number, frame["function"]))
    return blocks


def _stuck_block(
    blocks: list[tuple[str, list[StackFrame]]], runner: str, own: Callable[[str], bool]
) -> list[StackFrame]:
    """The frames of what ran ``verify``: the thread the runner's own code is
    on (its outermost frames) when it is in the task's files and not waiting
    in an event loop; else the task the runner awaits ``verify`` in (an
    ``async def verify`` at an ``await`` is on no thread's stack: that thread
    is in the event loop's select); else the first task, then the first
    thread, with a frame in the task's files; else the runner's thread, or
    the current one."""
    threads = [frames for kind, frames in blocks if kind != _TASK]
    tasks = [frames for kind, frames in blocks if kind == _TASK]
    main = [frames for frames in threads if any(f.path.endswith(runner) for f in frames)]
    busy = [frames for frames in main if not _waiting_in_event_loop(frames, own)]
    for group in (busy, [frames for frames in tasks if any(f.path.endswith(runner) for f in frames)], tasks, threads):
        for frames in group:
            if any(own(f.path) for f in frames):
                return frames
    if main:
        return main[0]
    return next((frames for kind, frames in blocks if kind == _CURRENT), threads[0] if threads else [])


def _waiting_in_event_loop(frames: list[StackFrame], own: Callable[[str], bool]) -> bool:
    """Whether a thread waits in an asyncio event loop its own code started
    (``asyncio.run`` in a plain ``verify``): below the innermost frame in the
    task's files, a loop's ``_run_once``. What it waits for is in the tasks."""
    for frame in frames:  # innermost first
        if own(frame.path):
            return False
        if frame.function == "_run_once" and "asyncio" in Path(frame.path).parts:
            return True
    return False


def _in_folders(path: str, verifier: Path, tests_dir: Path) -> bool:
    """Whether ``path`` names a file in the verifier's folders (tests/, or
    beside the verifier; ``..`` folded), own or not (not the vendored runner)."""
    if not os.path.isabs(path):
        return False
    candidate = Path(os.path.normpath(path))
    roots = (tests_dir, verifier.parent)
    return any(candidate.is_relative_to(root) for root in roots) and not candidate.is_relative_to(tests_dir / ".ng")


def _own(path: str, verifier: Path, tests_dir: Path) -> bool:
    """A file of the verifier's own: the verifier, or a file under the tests
    folder or beside the verifier (a helper), not the runner or what is
    vendored beside it (``tests/.ng``). Paths are the user's (mapped), and
    the run wrote them: ``..`` is folded away before anything is compared
    (``tests/../../home/you/.aws/credentials`` is not the task's), and a link
    that leads out of the folder is not followed (:func:`untrusted.own_file`)."""
    if not os.path.isabs(path):
        return False
    candidate = Path(os.path.normpath(path))
    if candidate == verifier:
        return True
    vendored = tests_dir / ".ng"
    if candidate.is_relative_to(vendored):
        return False
    # The rule for every name a run's output gives: a file of the folder's own, through no link out of it
    # (tests/helper.py -> ~/.bashrc, which the staged copy left out, is none). Each folder holding it is asked:
    # a link that leads out of one may stay inside the other.
    roots = (tests_dir, verifier.parent)
    return any(candidate.is_relative_to(root) and untrusted.own_file(candidate, root) is not None for root in roots)
