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
from verifier_tui.engine.failing import Failing, failing_location
from verifier_tui.engine.harbor.runner_output import parse_runner_output, report_frames
from verifier_tui.engine.model import Outcome, RunResult

_DEF_VERIFY = re.compile(r"^(?:async\s+)?def\s+verify\s*\(|^verify\s*=", re.M)


def failing_of(result: RunResult) -> Failing:
    """Where a task's run failed, for ``e`` and the reward panel: the frames
    of the last exception report its stderr holds, as a trial's are read."""
    return failing_location(result, report_frames(result.stderr.text))


def not_opened(where: str, *, workspace: bool = False) -> str:
    """Why ``e`` opens nothing for the failing frame at ``where`` (as shown):
    it names a file in the task, or in the workspace (``workspace``), that is
    none of that folder's own (:func:`verifier_tui.engine.failing.failing_location`);
    the folder named is the one that refused it, not always the task."""
    whose = "the workspace's" if workspace else "the task's"
    return (
        f"{where}, where the run says it failed, is not opened: it is no regular file "
        f"of {whose} own (a link out of its folder, or not a file)"
    )


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


def editor_command(path: Path, line: int | None, environ: Mapping[str, str] | None = None) -> list[str] | None:
    """The user's editor opened at ``path:line``: ``$VISUAL``, then ``$EDITOR``.
    None when neither is set (we do not guess an editor for the user).

    ``path`` is made absolute, so it starts with ``/`` and no editor reads it
    as an option (a file named ``+!cmd`` would make vim run ``cmd``), and it
    comes after ``--`` where the editor takes it."""
    environ = os.environ if environ is None else environ
    path = Path(os.path.abspath(path))
    line = max(1, line or 1)  # None: a line no file has, so the file from its top
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
    if result.outcome is Outcome.TIMED_OUT:
        # Re-run under pdb, a verifier stuck for good ran in the terminal until ctrl+c, which ends the
        # sandbox with it: no traceback, no pdb, only "press Enter to return".
        return "the run timed out: verify never raised, so there is no frame to debug post-mortem"
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
