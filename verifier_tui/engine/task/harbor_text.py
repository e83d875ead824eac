"""A task's file as Harbor 0.26.0 reads it with ``Path.read_text()``: no encoding given, so the
locale's (UTF-8 where Harbor runs), errors strict, read whole. So it reads ``instruction.md``
(``Task.__init__``), each ``.harborignore`` (``TaskFileFilter.ignore_rules``) and the task's
``.gitignore`` (``Packager.collect_files``); what makes its read raise, or wait for ever, is said
here once, in the words each of them is refused in.

The task's ``.gitignore`` is read once within :func:`read_once`: loading the task and
working out its digest then take the same lines, and a file replaced between the two cannot give
two answers.
"""

from __future__ import annotations

import os
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from verifier_tui.engine import untrusted
from verifier_tui.engine.record import record

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

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


T = TypeVar("T")
_remembered: dict[tuple[str, Path], Any] = {}
_remembering = 0  # how many read_once() are open (they may close in any order)


@contextmanager
def read_once() -> Iterator[None]:
    """Within it, what :func:`remembered` is asked for is worked out once per task: a replay reads
    its task's ``.gitignore`` and works out its digest once, and a job's thousands of trials of one
    task read the task once (the task is taken as it was when first read)."""
    global _remembering
    _remembering += 1
    try:
        yield
    finally:
        _remembering -= 1
        if not _remembering:
            _remembered.clear()


def remembered(what: str, task_root: Path, make: Callable[[], T]) -> T:
    """``make()``, worked out once for ``what`` of the task at ``task_root`` (a resolved path)
    within :func:`read_once`; afresh outside it."""
    if not _remembering:
        return make()
    key = (what, task_root)
    if key not in _remembered:
        _remembered[key] = make()
    return cast("T", _remembered[key])


def read_gitignore(task_root: Path) -> HarborText:
    """The task's ``.gitignore`` as ``Packager.collect_files`` reads it, if ``exists()``."""
    root = Path(task_root).resolve()
    return remembered(GITIGNORE, root, lambda: read_as_harbor(root / GITIGNORE, IGNORE_FILE_LIMIT, GITIGNORE))
