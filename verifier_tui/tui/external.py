"""What the suspend-based actions run in the real terminal: the user's editor
on the failing line, and the runner under pdb. Plain functions (no Textual) so
they are tested without a terminal."""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from pathlib import Path

from verifier_tui.engine import untrusted
from verifier_tui.engine.harbor.runner_output import parse_runner_output
from verifier_tui.engine.model import Outcome, RunResult

_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)', re.M)
_DEF_VERIFY = re.compile(r"^(?:async\s+)?def\s+verify\s*\(|^verify\s*=", re.M)


def traceback_frames(text: str) -> list[tuple[Path, int]]:
    """(file, line) of every traceback frame in ``text`` that names an
    existing file by an absolute path (``..`` folded away). Tracebacks from a
    run name the user's files absolutely; a relative name would be looked up
    in whatever folder the app was started from."""
    return [frame for match in _FRAME.finditer(text) if (frame := _frame(match["path"], int(match["line"])))]


def _frame(path: str, line: int) -> tuple[Path, int] | None:
    if not os.path.isabs(path):
        return None
    found = Path(os.path.normpath(path))
    return (found, line) if found.is_file() else None


def failing_location(result: RunResult, task_root: Path) -> tuple[Path, int] | None:
    """The line to open: the innermost traceback frame in the user's task
    (the verifier or a helper), else in the user's inputs (a module in the
    workspace, the response or task data file). Nothing else: the file name
    comes from the verifier's stderr, which the verifier writes, and it goes
    to the user's editor (see :func:`editor_command`). A run that timed out:
    where it was stuck (its stack dump's innermost frame in the task's files)."""
    folders = [task_root]
    if result.verifier is not None:
        folders.append(result.verifier.parent)  # a dataset's verifier.py beside dataset.toml
    inputs = [result.workspace] if result.workspace is not None else []
    files = [p for p in (result.response.path if result.response else None, result.task_data) if p is not None]
    stuck = result.stack.stuck_at if result.stack is not None else None
    if stuck is None:
        frames = traceback_frames(result.stderr.text)
    else:  # a stack dump is the run's to write too: its frame is held to the same places
        frames = [frame for frame in [_frame(stuck.path, stuck.line)] if frame is not None]
    for roots in (folders, inputs):
        for path, line in reversed(frames):
            if any(path.is_relative_to(root) for root in roots):
                return path, line
    for path, line in reversed(frames):
        if path in files:
            return path, line
    return None


def verify_line(verifier: Path) -> int:
    """The line where ``verify`` is defined (1 when it cannot be found)."""
    text, _ = untrusted.read_text(verifier, untrusted.SCRIPT_LIMIT)
    if text is None:
        return 1
    match = _DEF_VERIFY.search(text)
    return text.count("\n", 0, match.start()) + 1 if match else 1


#: Editors known to read ``--`` after ``+LINE`` as the end of their options
#: (vim's family); the name after it is a file whatever it looks like. Others
#: get the absolute path alone (nano under POSIXLY_CORRECT would open a file
#: named ``--``).
_ENDS_OPTIONS = {"vi", "vim", "nvim", "gvim", "mvim", "view", "rvim"}


def editor_command(path: Path, line: int, environ: Mapping[str, str] | None = None) -> list[str] | None:
    """The user's editor opened at ``path:line``: ``$VISUAL``, then ``$EDITOR``.
    None when neither is set (we do not guess an editor for the user).

    ``path`` is made absolute, so it starts with ``/`` and no editor reads it
    as an option (a file named ``+!cmd`` would make vim run ``cmd``), and it
    comes after ``--`` where the editor takes it."""
    environ = os.environ if environ is None else environ
    path = Path(os.path.abspath(path))
    line = max(1, int(line))
    editor = environ.get("VISUAL") or environ.get("EDITOR")
    if not editor:
        return None
    try:
        words = shlex.split(editor)
    except ValueError:
        words = [editor]
    if not words:
        return None
    name = Path(words[0]).name
    if name in ("code", "code-insiders", "codium", "cursor"):
        return [*words, "--goto", f"{path}:{line}"]
    if name in ("subl", "zed", "hx", "helix"):
        return [*words, f"{path}:{line}"]
    # vi, vim, nvim, nano, emacs, micro, kak, joe, ne, ... all take +LINE.
    if name in _ENDS_OPTIONS:
        return [*words, f"+{line}", "--", str(path)]
    return [*words, f"+{line}", str(path)]


def nothing_to_debug(result: RunResult) -> str | None:
    """Why re-running ``result`` under pdb would give no frame of the task's
    code to stop in (None: it may): the runner says so too, but only after the
    app has left the screen for the terminal."""
    if result.exit_code == 0:
        return "verify returned without raising (exit 0): nothing to debug post-mortem"
    if result.outcome is Outcome.CONTRACT_ERROR:
        return "exit 2 is a contract problem, not an exception: nothing to debug post-mortem"
    found = parse_runner_output(result.stderr.text).traceback
    if result.outcome is Outcome.VERIFIER_RAISED and found is not None and found.frameless:
        return f"a {found.bare_type} has no frame to debug: e opens its line"
    return None


def pdb_command(argv: list[str]) -> list[str]:
    """The runner's command (``python -B -u run_verifier.py ARGS``) with the
    runner's own ``--pdb``: when the verifier raises, pdb post-mortem opens at
    the failing frame of the task's code, in the real terminal."""
    runner_at = next((i for i, word in enumerate(argv) if word.endswith("run_verifier.py")), None)
    if runner_at is None:
        raise ValueError("not a runner command")
    args = list(argv[runner_at + 1 :])
    if "--explain-to" in args:  # informative only; not wanted in the terminal
        at = args.index("--explain-to")
        del args[at : at + 2]
    return [*argv[: runner_at + 1], *args, "--pdb"]
