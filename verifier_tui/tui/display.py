"""How paths, durations and verifier text are put on screen.

One :class:`Display` per app. In *deterministic* mode (snapshot tests and the
screenshots) nothing that changes between runs or machines reaches the screen:
durations read ``-- ms``, the home folder reads ``~`` and no clock is shown, so
an SVG of the same state is byte-for-byte the same every time.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from verifier_tui.terminal import plain_text
from verifier_tui.words import duration_text, short_path

@dataclass
class Display:
    """Paths and durations in the words of this session."""

    task_root: Path
    deterministic: bool = False
    python_prefixes: tuple[str, ...] = ()
    """In deterministic mode, the interpreter's install folders, shown as
    ``<python>`` (they differ from machine to machine)."""

    def learn_interpreter(self, explain: dict | None) -> None:
        """Note where the run's interpreter lives, from its explain document."""
        if not self.deterministic or not explain:
            return
        prefixes = set(self.python_prefixes)
        for row in explain.get("sys_path") or []:
            path = str(row.get("path") or "") if isinstance(row, dict) else ""
            if row.get("role") == "interpreter" and "/lib/python" in path:
                prefixes.add(path.split("/lib/python", 1)[0])
        self.python_prefixes = tuple(sorted(prefixes, key=len, reverse=True))

    def path(self, path: Path | str | None) -> str:
        """A path relative to the task's parent folder when inside it
        (``hello-file/tests/verifier.py``), the home folder as ``~``."""
        if path is None:
            return "(none)"
        text = short_path(path, self.task_root)
        return self._home(text)

    def in_task(self, path: Path | str | None) -> str:
        """A path relative to the task folder when inside it (the header names
        the task already): ``tests/verifier.py``, ``cases/good/workspace``."""
        if path is None:
            return "(none)"
        try:
            return Path(path).relative_to(self.task_root).as_posix() or "."
        except ValueError:
            return self.path(path)

    def duration(self, seconds: float | None) -> str:
        if self.deterministic or seconds is None:
            return "-- ms"
        return duration_text(seconds)

    def elapsed(self, seconds: float) -> str:
        """A running run's elapsed time (hidden in deterministic mode)."""
        if self.deterministic:
            return ""
        return f"{seconds:.1f} s"

    def text(self, text: str) -> str:
        """Verifier output made readable: escapes removed, and absolute paths
        under the task's parent folder shown relative to it, as everywhere else
        on screen (the files are still the user's own)."""
        text = plain_text(text)
        parent = str(self.task_root.parent)
        if parent not in ("/", "") and parent in text:
            text = text.replace(parent + os.sep, "")
        return self._home(text)

    def _home(self, text: str) -> str:
        for prefix in self.python_prefixes:
            if prefix and prefix in text:
                text = text.replace(prefix, "<python>")
        home = os.path.expanduser("~")
        if home not in ("/", "~", "") and home + os.sep in text:
            text = text.replace(home + os.sep, "~" + os.sep)
        return text
