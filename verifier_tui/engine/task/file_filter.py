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
        self._through: dict[Path, bool] = {}
        """Folders, whether a level from the task's folder down to them is excluded."""
        self._specs: dict[Path, list[tuple[Path, IgnoreRules]]] = {}
        """Folders, the rules that decide something of the folders down to them, outermost first."""
        self._reals: dict[Path, Path] = {}
        """Folders, where they really are (links on the way resolved)."""

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
        """Harbor's ``_matches``: whether a level of ``path`` (a folder on the way, or the path
        itself) is excluded by the rules of the folders above it. Each folder's own verdict is
        worked out once and kept: Harbor's loop works out every level again for each path, each
        over every folder above it, so a task nested 200 folders deep took 69 s to walk."""
        relative = path.relative_to(self.task_dir)
        if relative.name == HARBORIGNORE:
            return True
        suffix = "/" if path.is_dir() else ""
        if not relative.parts or not self._in_scope(relative.as_posix() + suffix):
            return False
        excluded = self._excluded_on_the_way(path.parent) or self._level_excludes(path, suffix)
        if self.consulted is not None:  # the folders whose rules Harbor's loop asks: down to the first level excluded
            for folder in reversed(path.parents):
                if folder.is_relative_to(self.task_dir):
                    if self._through.get(folder):
                        break
                    self.consulted.add(folder)
        return excluded

    def _excluded_on_the_way(self, folder: Path) -> bool:
        """Whether a level from the task's folder down to ``folder`` (as a folder) is excluded."""
        down: list[Path] = []
        while folder != self.task_dir and folder not in self._through:
            down.append(folder)
            folder = folder.parent
        excluded = self._through.get(folder, False)
        for below in reversed(down):
            excluded = excluded or self._level_excludes(below, "/")
            self._through[below] = excluded
        return excluded

    def _level_excludes(self, candidate: Path, suffix: str) -> bool:
        """One level of Harbor's loop: ``candidate`` checked against the rules of each folder above it."""
        if not self._in_scope(candidate.relative_to(self.task_dir).as_posix() + suffix):
            return False
        excluded = False
        for folder, rules in self._specs_above(candidate):
            verdict = rules.check(candidate.relative_to(folder).as_posix() + suffix)
            if verdict is not None:
                excluded = verdict
        return excluded

    def _specs_above(self, candidate: Path) -> list[tuple[Path, IgnoreRules]]:
        """The folders from the task's down to ``candidate``'s parent with rules that say something,
        outermost first (a folder without patterns decides nothing, so is left out)."""
        folder = candidate.parent
        down: list[Path] = []
        while folder not in self._specs:
            down.append(folder)
            if folder == self.task_dir:
                break
            folder = folder.parent
        specs = self._specs.get(folder, [])
        for above in reversed(down):
            rules = self._rules_of(above)
            specs = [*specs, (above, rules)] if rules is not None and rules.decides else specs
            self._specs[above] = specs
        return specs

    def excludes(self, path: Path) -> bool:
        """``TaskFileFilter.is_excluded``: the path, or a link's target inside the task."""
        path = Path(os.path.abspath(path))
        if not path.is_relative_to(self.task_dir):
            return False
        if self._matches(path):
            return True
        resolved = self._real(path.parent) / path.name
        if os.path.islink(path):
            # realpath, not resolve: a loop of links is left as it is, where resolve raises up to Python 3.12
            # (Harbor's own, on 3.12, then cannot load the task: its staging note says so; 3.13 does not raise)
            resolved = Path(os.path.realpath(resolved))
        return resolved != path and resolved.is_relative_to(self.task_dir) and self._matches(resolved)

    def _real(self, folder: Path) -> Path:
        """``os.path.realpath(folder)``, each folder on the way resolved once for every path beneath it
        (resolving each path whole costs a look at each of its folders: a task nested 900 deep took 28 s)."""
        down: list[Path] = []
        while folder not in self._reals and folder != folder.parent:
            down.append(folder)
            folder = folder.parent
        real = self._reals.get(folder, folder)
        for below in reversed(down):
            real = Path(os.path.realpath(real / below.name)) if os.path.islink(below) else real / below.name
            self._reals[below] = real
        return real
