"""A task's file as Harbor 0.26.0 reads it with ``Path.read_text()``: no encoding given, so the
locale's (UTF-8 where Harbor runs), errors strict, read whole. So it reads ``instruction.md``
(``Task.__init__``), each ``.harborignore`` (``TaskFileFilter.ignore_rules``) and the task's
``.gitignore`` (``Packager.collect_files``); what makes its read raise, or wait for ever, is said
here once, in the words each of them is refused in.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from verifier_tui.engine import untrusted
from verifier_tui.engine.record import record

GITIGNORE = ".gitignore"  # the task's own: its digest leaves out what it ignores
#: Harbor reads an ignore file whole, whatever its size: a bound generous enough for any real one.
IGNORE_FILE_LIMIT = 16 * untrusted.MB


@record(frozen=True)
class HarborText:
    """What ``read_text()`` gives of a file, as far as the tool can tell."""

    text: str | None = None
    """The file's text; None when there is none (missing) or Harbor's read fails."""
    refusal: tuple[str, str | None] | None = None
    """Why Harbor's read fails, and the exception it raises (None: it waits for ever)."""
    too_big: bool = False
    """Larger than the tool reads: Harbor reads it whole, so what it finds is unknown."""
    missing: bool = False

    @property
    def undecodable(self) -> bool:
        return self.refusal is not None and self.refusal[1] == "UnicodeDecodeError"


def read_as_harbor(path: Path, limit: int, label: str) -> HarborText:
    """``path.read_text()`` as Harbor calls it, named ``label`` in what is said, never opening a
    FIFO nor reading past ``limit`` bytes. Missing as ``exists()`` says, which follows links."""
    if not path.exists():
        return HarborText(missing=True)
    if path.is_dir():
        return HarborText(refusal=(f"{label} is a folder, not a file", "IsADirectoryError"))
    found = untrusted.read_bytes(path, limit, name=label)  # never opens a FIFO
    if found.state == "missing":  # gone since
        return HarborText(missing=True)
    if found.state == "not-a-file":
        return HarborText(None, _fifo(path, label)) if _is_fifo(path) else HarborText("")
    if found.state == "unreadable":  # Harbor reads it as the same user: a socket (ENXIO), chmod 000
        return HarborText(refusal=(found.problem or label, found.error or "OSError"))
    if found.state == "too-big":
        return HarborText(too_big=True)
    try:
        return HarborText((found.data or b"").decode("utf-8"))
    except UnicodeDecodeError:
        return HarborText(refusal=(f"{label} is not UTF-8 text", "UnicodeDecodeError"))


def _is_fifo(path: Path) -> bool:
    """A FIFO Harbor's read waits on; a device is not judged: ``/dev/null`` reads as empty."""
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        return False


def _fifo(path: Path, label: str) -> tuple[str, None]:
    return f"{label} is a FIFO (a named pipe): Harbor's read_text() would wait on it for a writer", None


def read_gitignore(task_root: Path) -> HarborText:
    """The task's ``.gitignore`` as ``Packager.collect_files`` reads it, if ``exists()``."""
    return read_as_harbor(Path(task_root) / GITIGNORE, IGNORE_FILE_LIMIT, GITIGNORE)
