"""The task files ``.harborignore`` leaves out, as Harbor 0.26.0 leaves them out
(``harbor/models/task/file_filter.py``, ``TaskFileFilter``): what Harbor uploads of a task, what
its content digest counts, and whether a file Harbor needs is one it would refuse to miss.

Rules are read only under ``tests/``, ``solution/``, ``steps/*/tests/`` and
``steps/*/solution/``, each folder's inherited by the folders below it; a file named
``.harborignore`` is always left out.
"""

from __future__ import annotations

import os
from pathlib import Path

from verifier_tui.engine.task.harbor_text import IGNORE_FILE_LIMIT, read_as_harbor
from verifier_tui.engine.task.ignore_rules import IgnoreRules

HARBORIGNORE = ".harborignore"
_IGNORE_SCOPES = IgnoreRules(["/tests/", "/solution/", "/steps/*/tests/", "/steps/*/solution/"], git_flavour=True)


class TaskFileFilter:
    """``TaskFileFilter``: ``.harborignore`` rules inherited down the task's
    test and solution folders."""

    def __init__(self, task_dir: Path) -> None:
        self.task_dir = Path(task_dir).resolve()
        self._rules: dict[Path, IgnoreRules | None] = {}
        self._read_refused: dict[Path, tuple[str, str | None]] = {}
        """Folders whose .harborignore Harbor's ``read_text()`` raises on (:meth:`read_refusal`)."""
        self.unknown: set[Path] = set()
        """Folders whose rules were asked and are past what the tool reads: taken as none."""
        self.consulted: set[Path] | None = None
        """When a set, the folders whose rules are asked meanwhile are added to it."""

    def _in_scope(self, relative: str) -> bool:
        return _IGNORE_SCOPES.ignores(relative)

    def reads_rules(self, folder: Path) -> bool:
        """Whether Harbor reads the ``.harborignore`` of ``folder`` (a path in the task)."""
        return self._in_scope(folder.relative_to(self.task_dir).as_posix() + "/")

    def read_refusal(self, folder: Path) -> tuple[str, str | None] | None:
        """Why Harbor's ``read_text()`` raises on the ``.harborignore`` of ``folder`` (not UTF-8 text,
        unreadable: chmod 000) as soon as it reads the folder's rules, and the exception's name."""
        self._rules_of(folder)
        return self._read_refused.get(folder)

    def refused_in(self, folder: Path) -> tuple[str, str] | None:
        """The pattern of the ``.harborignore`` of ``folder`` that ``GitIgnoreSpec.from_lines``
        raises on, and the exception's name (:attr:`IgnoreRules.refused`)."""
        rules = self._rules_of(folder)
        return rules.refused if rules is not None else None

    def _rules_of(self, folder: Path) -> IgnoreRules | None:
        if self.consulted is not None:
            self.consulted.add(folder)
        if folder not in self._rules:
            rules = None
            if self.reads_rules(folder):
                # past what the tool reads: unknown, never taken as none
                shown = (folder / HARBORIGNORE).relative_to(self.task_dir).as_posix()
                found = read_as_harbor(folder / HARBORIGNORE, IGNORE_FILE_LIMIT, shown)
                if found.refusal is not None:
                    self._read_refused[folder] = found.refusal
                if found.too_big:
                    self.unknown.add(folder)
                rules = IgnoreRules((found.text or "").splitlines(), git_flavour=True)
            self._rules[folder] = rules
        return self._rules[folder]

    def _matches(self, path: Path) -> bool:
        relative = path.relative_to(self.task_dir)
        if relative.name == HARBORIGNORE:
            return True
        suffix = "/" if path.is_dir() else ""
        if not self._in_scope(relative.as_posix() + suffix):
            return False
        specs: list[tuple[Path, IgnoreRules]] = []
        candidate = self.task_dir
        for part in relative.parts:
            rules = self._rules_of(candidate)
            if rules is not None:
                specs.append((candidate, rules))
            candidate = candidate / part
            suffix = "/" if candidate != path or path.is_dir() else ""
            if not self._in_scope(candidate.relative_to(self.task_dir).as_posix() + suffix):
                continue
            excluded = False
            for folder, rules in specs:
                verdict = rules.check(candidate.relative_to(folder).as_posix() + suffix)
                if verdict is not None:
                    excluded = verdict
            if excluded:
                return True
        return False

    def excludes(self, path: Path) -> bool:
        """``TaskFileFilter.is_excluded``: the path, or a link's target inside the task."""
        path = Path(os.path.abspath(path))
        if not path.is_relative_to(self.task_dir):
            return False
        if self._matches(path):
            return True
        # realpath, not resolve: a loop of links is left as it is, where resolve raises up to Python 3.12
        # (Harbor's own, on 3.12, then cannot load the task: its staging note says so; 3.13 does not raise)
        resolved = Path(os.path.realpath(path))
        return resolved != path and resolved.is_relative_to(self.task_dir) and self._matches(resolved)
