"""Paths as both faces show them: as they resolve from a folder (the one the
user started the tool in; on a trial's screen, the one that holds its task and
its job), relative when inside it, else absolute, and the home folder as
``~`` where the face shows it so (the TUI, a trial's text; not a command a
shell takes back, nor a task's text output)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from verifier_tui.words.text import one_line


def home_folder() -> str:
    """The user's home folder (read once by a face that shows many lines)."""
    return os.path.expanduser("~")


def path_from(path: Path | str, base: Path) -> str:
    """``path`` as it resolves from ``base``: relative to it when inside it
    (``.`` for itself, ``./-x`` for a name never to be read as an option,
    ``./~x`` for one never to be read as a home folder, as a shell and a
    picker's box expand ``~``), else absolute."""
    path = Path(path)
    try:
        rel = path.relative_to(base).as_posix()
    except ValueError:
        return str(path)
    if rel == ".":
        return rel
    return f"./{rel}" if rel.startswith(("-", "~")) else rel


def here(path: Path | str, base: Path | None = None) -> str:
    """A path as it resolves from ``base`` (by default the folder the tool was
    started in, as the TUI shows it), on one line whatever its name holds;
    absolute when there is no such folder (it was removed since: ``Path.cwd()``
    raises)."""
    if base is None:
        try:
            base = Path.cwd()
        except OSError:
            return one_line(str(path))
    return one_line(path_from(path, base))


def pasted(path: Path | str) -> str:
    """``path`` in a command to paste back: as it resolves from where the user
    started (relative inside it, ``./-x`` never an option; else absolute, never
    ``~``, which a shell does not expand inside quotes), as one shell word. A line
    holding one is printed as it is, not shortened again."""
    from verifier_tui.engine.procfs import shell_word

    try:
        base = Path.cwd()
    except OSError:  # the folder the user started in was removed since
        base = Path("/")
    return shell_word(str(path) if base == Path("/") else path_from(path, base))


def text_from(text: str, base: Path | str, home: str = "") -> str:
    """``text`` (verifier output, a sentence of the tool's) with the paths
    under ``base`` made relative to it, and ``home`` (when given) as ``~``."""
    base = str(base)
    if base not in ("/", "") and base + os.sep in text:
        text = _at_path_start(base + os.sep).sub("", text)
    return tilde(text, home)


def tilde(text: str, home: str) -> str:
    """``text`` with the paths under ``home`` written from ``~``."""
    if home not in ("/", "~", "") and home + os.sep in text:
        text = _at_path_start(home + os.sep).sub("~" + os.sep, text)
    return text


def _at_path_start(folder: str) -> re.Pattern[str]:
    """``folder`` where a path starts with it, not further in: a path a trial's
    config.json names (``/srv/home/dev/t``, ``../../home/dev/t``) holds the home
    folder past its start, and read ``/srv~/t`` with it replaced there. A path
    starts the text or follows a space, a quote, a bracket or a separator."""
    return re.compile(r"(?<![^\s\"'`(\[{<=:,;])" + re.escape(folder))
