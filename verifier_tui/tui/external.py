"""What the suspend-based actions run in the real terminal: the user's editor
on the failing line, and the runner under pdb. Plain functions (no Textual) so
they are tested without a terminal."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path
from typing import Mapping

from verifier_tui.engine.model import RunResult

_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)', re.M)
_DEF_VERIFY = re.compile(r"^(?:async\s+)?def\s+verify\s*\(|^verify\s*=", re.M)


def traceback_frames(text: str) -> list[tuple[Path, int]]:
    """(file, line) of every traceback frame in ``text`` that names an existing file."""
    frames = []
    for match in _FRAME.finditer(text):
        path = Path(match["path"])
        if path.is_file():
            frames.append((path, int(match["line"])))
    return frames


def failing_location(result: RunResult, task_root: Path) -> tuple[Path, int] | None:
    """The line to open: the innermost traceback frame in the user's task
    (the verifier or a helper), else the innermost frame in any file that is
    not the interpreter's own."""
    frames = traceback_frames(result.stderr.text)
    if not frames:
        return None
    roots = [task_root]
    if result.verifier is not None:
        roots.append(result.verifier.parent)
    for path, line in reversed(frames):
        if any(path.is_relative_to(root) for root in roots):
            return path, line
    for path, line in reversed(frames):
        if "site-packages" not in path.parts and not path.as_posix().startswith(("/usr/lib", "/usr/local/lib")):
            return path, line
    return frames[-1]


def verify_line(verifier: Path) -> int:
    """The line where ``verify`` is defined (1 when it cannot be found)."""
    try:
        text = verifier.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return 1
    match = _DEF_VERIFY.search(text)
    return text.count("\n", 0, match.start()) + 1 if match else 1


def editor_command(path: Path, line: int, environ: Mapping[str, str] | None = None) -> list[str] | None:
    """The user's editor opened at ``path:line``: ``$VISUAL``, then ``$EDITOR``.
    None when neither is set (we do not guess an editor for the user)."""
    environ = os.environ if environ is None else environ
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
    return [*words, f"+{line}", str(path)]


def pdb_command(argv: list[str]) -> list[str]:
    """The runner's command (``python -B -u run_verifier.py ARGS``) with the
    runner's own ``--pdb``: when the verifier raises, pdb post-mortem opens at
    the failing frame of the task's code, in the real terminal."""
    runner_at = next((i for i, word in enumerate(argv) if word.endswith("run_verifier.py")), None)
    if runner_at is None:
        raise ValueError("not a runner command")
    args = list(argv[runner_at + 1:])
    if "--explain-to" in args:  # informative only; not wanted in the terminal
        at = args.index("--explain-to")
        del args[at:at + 2]
    return [*argv[:runner_at + 1], *args, "--pdb"]


