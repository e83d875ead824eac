"""Gitignore patterns, matched as the ``pathspec`` library (1.x) matches them.

Harbor's content digest filters files with two flavours of ``pathspec``:

- ``PathSpec.from_lines("gitignore", ...)`` for the task's ``.gitignore`` (or
  Harbor's default ignores): ``GitIgnoreBasicPattern``, the last matching
  pattern decides;
- ``GitIgnoreSpec`` for ``.harborignore`` files: ``GitIgnoreSpecPattern``,
  where a match through a directory pattern ranks below a match of the path
  itself, as Git behaves.

Both translate a pattern into a regular expression over the path relative to
the rules' folder (POSIX separators, a trailing ``/`` for folders). The
translation below follows ``pathspec/patterns/gitignore/basic.py`` and
``spec.py``, and the ranking ``pathspec/_backends/simple/gitignore.py``.
``pathspec`` is not a dependency: these few rules are all the digest needs.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

_DIR_MARK = "ps_d"
_DIR_MARK_GROUP = f"(?P<{_DIR_MARK}>/)"
_DIR_MARK_OPTIONAL = f"(?:{_DIR_MARK_GROUP}|$)"


class _BadRange(ValueError):
    """``[`` without its ``]``: a literal for the basic flavour, the whole
    pattern dropped for Git's flavour."""


def _segment_glob(segment: str, *, strict_ranges: bool) -> str:
    """One path segment's glob as a regex (``fnmatch`` with ``FNM_PATHNAME``)."""
    out = ""
    i, end = 0, len(segment)
    escaped = False
    while i < end:
        char = segment[i]
        i += 1
        if escaped:
            escaped = False
            out += re.escape(char)
        elif char == "\\":
            escaped = True
        elif char == "*":
            out += "[^/]*"
        elif char == "?":
            out += "[^/]"
        elif char == "[":
            j = i
            if j < end and segment[j] in "!^":
                j += 1
            if j < end and segment[j] == "]":
                j += 1
            while j < end and segment[j] != "]":
                j += 1
            if j < end:
                j += 1
                expr = "["
                if segment[i] in "!^":
                    expr += "^"
                    i += 1
                out += expr + _bracket_body(segment[i : j - 1]) + "]"
                i = j
            elif strict_ranges:
                raise _BadRange(segment)
            else:
                out += "\\["
        else:
            out += re.escape(char)
    if escaped:
        raise ValueError(f"a pattern ends with a lone backslash: {segment!r}")
    return out


def _bracket_body(body: str) -> str:
    """The inside of a glob's bracket expression as ``re`` reads it, with every literal ``\\``,
    ``[``, ``-``, ``&``, ``~`` and ``|`` escaped. pathspec hands the inside to ``re`` as written (only
    ``\\`` doubled), and ``re`` warns of ``[[``, ``--``, ``&&``, ``~~`` and ``||`` there (FutureWarning,
    "possible nested set"); escaped, the set holds the same characters and nothing warns. A ``-``
    between two characters stays bare: it makes the range, as in pathspec's regex."""
    out = ""
    k, end = 0, len(body)
    while k < end:
        out += _set_literal(body[k])
        k += 1
        if k + 1 < end and body[k] == "-":
            out += "-" + _set_literal(body[k + 1])
            k += 2
    return out


def _set_literal(char: str) -> str:
    return "\\" + char if char in "\\[-&~|" else char


def pattern_regex(pattern: str, *, git_flavour: bool) -> tuple[str | None, bool | None]:
    """``(regex, include)`` for one line: ``include`` True means "ignored",
    False "re-included" (``!``), None a blank line or comment (no regex)."""
    if not pattern.endswith("\\ "):
        pattern = pattern.rstrip()
    if not pattern or pattern.startswith("#"):
        return None, None
    if git_flavour and pattern == "/":
        return None, None
    include = not pattern.startswith("!")
    if not include:
        pattern = pattern[1:]
    # the basic flavour reads a lone slash as "everything", not as a folder; Git's flavour (spec.py) takes
    # `!/` (its `/` check comes before the `!` is taken off) as a folder pattern: only paths through a folder
    is_dir_pattern = pattern.endswith("/") and (git_flavour or pattern != "/")
    segments = _normalised(pattern)
    try:
        return _segments_regex(segments, is_dir_pattern, git_flavour), include
    except _BadRange:
        return None, None  # Git discards such a pattern


def _normalised(pattern: str) -> list[str]:
    """The pattern's segments: a leading slash anchors, a single segment
    floats (``**/name``), a trailing slash means all below, ``**/**`` is one."""
    segments = pattern.split("/")
    if not segments[0]:
        del segments[0]
    elif (len(segments) == 1 or (len(segments) == 2 and not segments[1])) and segments[0] != "**":
        segments.insert(0, "**")
    if not segments:
        raise ValueError(f"the pattern {pattern!r} normalises to nothing")
    if not segments[-1]:
        segments[-1] = "**"
    for i in range(len(segments) - 1, 0, -1):
        if segments[i - 1] == "**" and segments[i] == "**":
            del segments[i]
    return segments


def _segments_regex(segments: list[str], is_dir_pattern: bool, git_flavour: bool) -> str:
    dir_end = _DIR_MARK_GROUP if git_flavour and is_dir_pattern else "/"
    if segments == ["**"]:
        return dir_end if is_dir_pattern else "."
    if segments == ["**", "*"]:
        return "."
    if segments == ["**", "*", "**"]:
        return dir_end
    parts: list[str] = []
    need_slash = False
    last = len(segments) - 1
    for i, segment in enumerate(segments):
        if segment == "**":
            if i == 0:
                parts.append("^(?:.+/)?")
            elif i < last:
                parts.append("(?:/.+)?")
                need_slash = True
            else:
                parts.append(dir_end)
            continue
        if i == 0:
            parts.append("^")
        if need_slash:
            parts.append("/")
        parts.append("[^/]+" if segment == "*" else _segment_glob(segment, strict_ranges=git_flavour))
        if i == last:
            parts.append(_ending(segment, git_flavour))
        need_slash = True
    return "".join(parts)


def _ending(segment: str, git_flavour: bool) -> str:
    if git_flavour:
        return _DIR_MARK_OPTIONAL
    return "/?$" if segment == "*" else "(?:/|$)"


class IgnoreRules:
    """The patterns of one ignore file. :meth:`check` gives what the file says
    about a path: True (ignored), False (re-included) or None (no pattern matched)."""

    def __init__(self, lines: Iterable[str], *, git_flavour: bool = False) -> None:
        self.git_flavour = git_flavour
        self._patterns: list[tuple[re.Pattern[str], bool]] = []
        self.refused: tuple[str, str] | None = None
        """The first line ``pathspec`` raises on, and the exception's name: a lone trailing
        backslash (``GitIgnorePatternError``), or a range ``re`` refuses (``[z-a]``: ``re.error``,
        as the bracket is handed to ``re`` as written). Harbor cannot load rules holding it; here
        the line is taken as no pattern."""
        for line in lines:
            try:
                regex, include = pattern_regex(line, git_flavour=git_flavour)
                if regex is not None and include is not None:
                    self._patterns.append((re.compile(regex), include))
            except ValueError:
                self.refused = self.refused or (line, "GitIgnorePatternError")
            except re.error:
                self.refused = self.refused or (line, "re.error")

    @property
    def decides(self) -> bool:
        """Whether a pattern may give a verdict: with none, :meth:`check` is always None."""
        return bool(self._patterns)

    def check(self, relative: str) -> bool | None:
        """``relative``: a POSIX path under the rules' folder (``dir/`` for a folder)."""
        if relative.startswith("./"):
            relative = relative[2:]
        if not self.git_flavour:
            verdict = None
            for regex, include in self._patterns:
                if regex.search(relative):
                    verdict = include
            return verdict
        # GitIgnoreSpec ranking (pathspec's default, reversed scan): the last
        # pattern matching the path itself decides; only when none does, the
        # last one matching it through a directory pattern.
        through_dir_verdict = None
        for regex, include in reversed(self._patterns):
            match = regex.search(relative)
            if match is None:
                continue
            if not match.groupdict().get(_DIR_MARK):
                return include
            if through_dir_verdict is None:
                through_dir_verdict = include
        return through_dir_verdict

    def ignores(self, relative: str) -> bool:
        return self.check(relative) is True
