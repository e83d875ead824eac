"""``new`` and ``vendor``: the commands that write a task's files."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from verifier_tui.commands import terminal
from verifier_tui.engine.procfs import shell_word
from verifier_tui.engine.task.authoring import AuthoringError, new_task, vendor
from verifier_tui.words.text import one_line

if TYPE_CHECKING:
    import argparse

# What each file of a new task is for, in the order they are listed.
_ROLES = {
    "task.toml": "Harbor's settings: [task] name, the verifier's timeout, /app kept as an artifact",
    "instruction.md": "what the agent is asked to do",
    "environment/Dockerfile": "the agent's container: WORKDIR /app, a Python for the verifier",
    "solution/solve.sh": "the reference solution (Harbor's oracle agent runs it)",
    "tests/verifier.py": "verify(workspace): returns the reward",
    "tests/test.sh": "the shim Harbor runs: it finds a Python and starts the runner",
    "tests/.ng/run_verifier.py": "the runner: imports verifier.py, calls verify, writes the reward file",
    "cases/": "correct/, wrong/ and empty/ (what an agent that did nothing leaves): a workspace each and "
    "the verdict it must get (never published)",
}


def new_command(args: argparse.Namespace) -> int:
    """``verifier-tui new PATH [--name ORG/NAME]``."""
    folder = Path(args.path)
    try:
        new_task(folder, args.name)
    except (AuthoringError, OSError) as exc:
        if _unnamed(exc):
            raise
        return terminal.refuse(_said(exc))
    shown = shell_word(args.tui_path)  # a command to paste back, on one line whatever the name holds
    terminal.out(f"wrote a new task in {one_line(args.path)}:")
    width = max(map(len, _ROLES))
    for rel, role in _ROLES.items():
        terminal.out(f"  {rel:<{width}}  {role}")
    test, tui = f"verifier-tui test {shown}", f"verifier-tui {shown}"
    terminal.out(f"next: {test}  # every case against its expected.json")
    terminal.out(f"      {tui:<{len(test)}}  # the TUI: edit tests/verifier.py, and every save runs it again")
    return 0


def vendor_command(args: argparse.Namespace) -> int:
    """``verifier-tui vendor TASK``."""
    try:
        vendor(Path(args.path), terminal.out)
    except (AuthoringError, OSError) as exc:
        if _unnamed(exc):
            raise
        return terminal.refuse(_said(exc))
    return 0


def _unnamed(exc: AuthoringError | OSError) -> bool:
    """An OSError naming no file, whatever its cause (the folder the tool was
    started in removed, say): this command cannot say which file it is about,
    so it is left to the program's own handler, which says what it is."""
    return isinstance(exc, OSError) and exc.filename is None


def _said(exc: AuthoringError | OSError) -> str:
    """The problem in one line: an OSError names the file and why, never as ``[Errno 17]``."""
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"cannot write {exc.filename}: {exc.strerror or exc}"
    return str(exc)
