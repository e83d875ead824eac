"""Every file the tool did not write is read through here.

Trial folders come from other machines, tasks from other people, and the
runner's outputs from a verifier that may be hostile. So a read here:

* opens regular files only: a FIFO or a device in a file's place is seen by
  its kind and never opened (opening a FIFO releases a writer waiting on it,
  a blocking open would wait for ever, a device would stream for ever), and
  the open does not block, should one be swapped in after the look;
* given the folder a file belongs to (``beneath``: a trial folder, a run's
  stage), never goes through a link on the way: whoever wrote the folder may
  have linked ``reward.json`` to ``/proc/self/environ`` (the tool's own
  environment, read here) or a folder on the way to the user's files. Python
  has no ``openat2(RESOLVE_BENEATH)``, so the folder is walked one name at a
  time (``O_NOFOLLOW``, ``dir_fd``), and a link is said as one, never read;
* reads at most a bound (the head, or the tail of a log);
* parses JSON only when its nesting is within a bound (``json`` recurses,
  and a file of ten thousand ``[`` ends in ``RecursionError``, here or in
  whatever walks the value afterwards);
* never raises for what it finds: every outcome is a :class:`Read` whose
  ``problem`` is one sentence naming the file.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from collections.abc import Callable
from itertools import accumulate
from pathlib import Path
from typing import Any, BinaryIO

from verifier_tui.engine.plain import shown_one_by_one
from verifier_tui.engine.record import record

MAX_DEPTH = 200
"""Nesting bound for JSON: no file Harbor, a task or the runner writes comes near."""

MB = 1024 * 1024
SCRIPT_LIMIT = 4 * MB
"""A task's scripts (test.sh, a vendored runner): kilobytes."""

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_OPEN = os.O_RDONLY | os.O_NONBLOCK | _CLOEXEC
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC
_MISSING = (errno.ENOENT, errno.ENOTDIR)  # a file of a folder on the way is not there either
TARGET_CHARS = 200
"""A link's target shown up to this many characters (Linux allows 4,095)."""


@record(frozen=True)
class Read:
    """What was found at ``path``. ``state``: ``ok``, ``missing``,
    ``not-a-file`` (a folder, FIFO, socket or device), ``too-big`` (more
    than the bound, read whole), ``link`` (read beneath a folder: the file,
    or a folder on the way, is a link; ``path`` is the link's own, ``target``
    where it points, made harmless to show) or ``unreadable``. ``data`` is
    the bytes read when ``ok`` (for a tail read, the last bytes; ``cut`` says
    earlier ones were left out); ``problem`` says what went wrong, naming the
    file."""

    path: Path
    state: str
    data: bytes | None = None
    problem: str | None = None
    size: int = 0
    cut: bool = False
    error: str | None = None  # the exception's name, when reading raised one
    target: str | None = None

    @property
    def ok(self) -> bool:
        return self.state == "ok"

    def text(self) -> str | None:
        """The bytes as text (UTF-8, undecodable bytes replaced), when read."""
        return None if self.data is None else self.data.decode("utf-8", errors="replace")


def kind(mode: int) -> str:
    """What a file of this ``st_mode`` is, in words."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (a named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def is_kind(path: Path, kind: Callable[[int], bool]) -> bool:
    """Whether ``path`` itself (a link as a link) is of ``kind`` (``stat.S_ISDIR``, ...); not where it
    cannot be looked at."""
    try:
        return kind(os.lstat(path).st_mode)
    except OSError:
        return False


def real_dir(path: Path) -> bool:
    """Whether ``path`` is a folder, not a link to one."""
    return is_kind(path, stat.S_ISDIR)


def present(path: Path | str) -> bool:
    """Whether anything at all is at ``path`` (a FIFO or a broken link too):
    what decides that a file the user meant to give exists. ``is_file()``
    says no for a FIFO, and a file given as a FIFO must be said, not skipped."""
    return os.path.lexists(path)


def open_regular(
    path: Path | str, name: str | None = None, *, beneath: Path | str | None = None
) -> tuple[BinaryIO | None, Read | None]:
    """``path`` opened for reading when it is a regular file, else the
    :class:`Read` saying what is there instead. A FIFO or a device is never
    opened, and no open blocks. Links are followed, as a reader of the user's task would, unless
    ``path`` is read ``beneath`` the folder it belongs to (see the module's
    docstring): then no link is."""
    path = Path(path)
    label = name or path.name
    if beneath is not None:
        walked = _walk(path, Path(beneath), label)
        if isinstance(walked, Read):
            return None, walked
        folder, last = walked
        try:
            refused = _never_opened(path, label, last, folder)
            if refused is not None:
                return None, refused
            fd = os.open(last, _OPEN | os.O_NOFOLLOW, dir_fd=folder)
        except OSError as exc:
            return None, _refused(folder, last, path, label, exc)
        finally:
            os.close(folder)
    else:
        refused = _never_opened(path, label, path)
        if refused is not None:
            return None, refused
        try:
            fd = os.open(path, _OPEN)
        except FileNotFoundError:
            if os.path.islink(path):
                # not its target: a name from elsewhere may hold a newline or a terminal's escape codes
                return None, Read(path, "missing", problem=f"{label} is a link to nothing")
            return None, Read(path, "missing", problem=f"{label} is missing")
        except OSError as exc:
            return None, _unreadable(path, label, exc)
    try:
        mode = os.fstat(fd).st_mode
    except OSError as exc:
        os.close(fd)
        return None, _unreadable(path, label, exc)
    if not stat.S_ISREG(mode):  # swapped in since it was looked at, or a folder or socket
        os.close(fd)
        return None, _not_a_file(path, label, mode)
    return os.fdopen(fd, "rb"), None


def _not_a_file(path: Path, label: str, mode: int) -> Read:
    return Read(path, "not-a-file", problem=f"{label} is {kind(mode)}, not a regular file")


def _never_opened(path: Path, label: str, name: Path | str, folder: int | None = None) -> Read | None:
    """The :class:`Read` refusing a FIFO or a device at ``name`` (in ``folder``, not followed, as the
    open that comes next does not follow it), looked at before any open: even a non-blocking one
    releases a writer waiting on a FIFO (whose write then meets a closed pipe), and a device may act
    when opened. None for anything else (a socket's open fails, touching nothing)."""
    try:
        mode = os.stat(name, dir_fd=folder, follow_symlinks=folder is None).st_mode
    except OSError:
        return None  # the open says why
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return _not_a_file(path, label, mode)
    return None


def look(path: Path | str, beneath: Path | str) -> os.stat_result | Read:
    """What ``path`` is, looked at beneath the folder it belongs to without
    following a link (``lstat``): its stat, whatever kind of file, or the
    :class:`Read` saying it is missing, a link (it or a folder on the way),
    or cannot be looked at."""
    path = Path(path)
    label = path.name
    walked = _walk(path, Path(beneath), label)
    if isinstance(walked, Read):
        return walked
    folder, last = walked
    try:
        found = os.lstat(last, dir_fd=folder)
        if stat.S_ISLNK(found.st_mode):
            return _link(folder, last, path, label)
        return found
    except OSError as exc:
        return _refused(folder, last, path, label, exc)
    finally:
        os.close(folder)


_HOPS = 40  # links followed on the way to one file at most, as Linux's MAXSYMLINKS


def followed_inside(path: Path, beneath: Path) -> Path | None:
    """``path`` with each link on the way to it followed, while every one
    leads to a place beneath ``beneath`` (``tests/helper.py`` linked to
    ``real_helper.py`` is ``tests/real_helper.py``); None when one leads out
    of it, or to nothing, or there are too many. Only a link's own text is
    read (``readlink``), never a file or folder through it; ``beneath``
    itself is the caller's to name (followed). What is at the path returned
    is for the caller to open beneath ``beneath``, where nothing put there
    since is followed."""
    roots = [beneath, Path(os.path.realpath(beneath))]  # an absolute link may name either
    try:
        todo = list(path.relative_to(beneath).parts)
    except ValueError:
        return None
    done: list[str] = []  # names of folders beneath, none a link
    hops = _HOPS
    while todo:
        part = todo.pop(0)
        if part == "..":  # of a folder that is no link: its parent is the one named before it
            if not done:
                return None
            done.pop()
            continue
        here = beneath.joinpath(*done, part)
        try:
            found = os.lstat(here)
            target = os.readlink(here) if stat.S_ISLNK(found.st_mode) else None
        except (OSError, ValueError):  # (ValueError: a name no file can have)
            return None
        if target is None:
            done.append(part)
            continue
        hops -= 1
        if hops < 0:
            return None
        if os.path.isabs(target):
            inside = next((Path(target).relative_to(r) for r in roots if Path(target).is_relative_to(r)), None)
            if inside is None:
                return None
            done, todo = [], [*inside.parts, *todo]
        else:
            todo = [*Path(target).parts, *todo]
    return beneath.joinpath(*done) if done else None


def own_file(path: Path, beneath: Path) -> Path | None:
    """The regular file of ``beneath``'s own that ``path`` names, else None:
    ``..`` folded first (a name a run wrote: ``tests/../../x`` is no file of
    the task's), each link on the way followed only while it leads to a place
    beneath ``beneath`` (:func:`followed_inside`: ``tests/helper.py`` linked to
    ``real_helper.py`` is that file, which the staged copy keeps too; linked to
    ``~/.bashrc``, none), and what it leads to looked at beneath ``beneath``,
    through no link put there since. The one rule for every name from a run's
    (or a trial's) output that the tool turns into a file to open."""
    if not os.path.isabs(path):
        return None
    found = followed_inside(Path(os.path.normpath(path)), beneath)
    if found is None:
        return None
    there = look(found, beneath=beneath)
    return found if isinstance(there, os.stat_result) and stat.S_ISREG(there.st_mode) else None


def kept_in_copy(path: Path | str, root: Path | str) -> bool:
    """Whether ``path``, its links followed, is ``root`` or lies in it, and
    leads to something: what the staged copy of ``root`` keeps of a link
    (mirror.py recreates it; one out of the folder, or to nothing, is left
    out), so what a task's tests/ holds as its own (engine/task/kinds.py).
    One rule for both: a ``tests/.ng`` linked out of tests/ was read as the
    task's though the copy the run sees had none."""
    resolved, inside = os.path.realpath(path), os.path.realpath(root)
    return os.path.commonpath([resolved, inside]) == inside and os.path.exists(path)


def link_words(name: str, target: str) -> str:
    return f"{name} is a link to {target}"


LOOP = "a loop of links"


def not_there_words(path: Path | str, name: str | None = None) -> str:
    """``PATH does not exist`` (``name`` for ``PATH``, when given); of a link to
    nothing, where it points: the name is there, and the user looking for it
    finds it. A target that is there, a link itself, leads nowhere: a loop, or
    a chain ending in nothing."""
    try:
        target = os.readlink(path)
    except OSError:  # no link (nothing at all there)
        return f"{name or path} does not exist"
    said = link_words(name or str(path), harmless(target))
    if not os.path.islink(os.path.join(os.path.dirname(path), target)):
        return f"{said}, which does not exist"
    # the target is there, itself a link: "does not exist" sent the user to a name they then find
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return f"{said}, which leads nowhere: {LOOP}"
    return f"{said}, which leads nowhere: a chain of links ending in nothing"


def harmless(text: str) -> str:
    """A name from elsewhere (a link's target) as it can be shown: what would
    act on a terminal, reorder the line or draw nothing written as every other
    name is (``\\n``, ``<U+202E>``, ``<U+200B>``, a byte not UTF-8 ``\\xff``:
    :func:`~verifier_tui.engine.plain.one_line`'s spelling), and cut at its end."""
    shown: list[str] = []
    room = TARGET_CHARS  # of the shown text: an escape is up to ten characters of it
    for piece in shown_one_by_one(text[: TARGET_CHARS + 1]):  # each character is one or more shown
        if len(piece) > room:
            return "".join(shown) + "…"
        shown.append(piece)
        room -= len(piece)
    return "".join(shown)


def _walk(path: Path, beneath: Path, label: str) -> tuple[int, str] | Read:
    """The folder of ``path`` opened from ``beneath`` one name at a time,
    never through a link, and ``path``'s last name; or the :class:`Read`
    saying why not. ``beneath`` itself is the caller's to name (followed)."""
    try:
        parts = path.relative_to(beneath).parts
    except ValueError:
        parts = ()
    if not parts or ".." in parts:
        return Read(path, "unreadable", problem=f"{label} is not inside {harmless(beneath.name)}")
    if any("\0" in part for part in parts):  # no file can be named so (and os.open raises on it)
        return Read(path, "missing", problem=f"{harmless(label)} is missing: its name holds a NUL byte")
    try:
        folder = os.open(beneath, _FOLDER)
    except OSError as exc:
        return (
            Read(path, "missing", problem=f"{label} is missing")
            if exc.errno in _MISSING
            else _unreadable(path, label, exc)
        )
    for depth, part in enumerate(parts[:-1], 1):
        try:
            inner = os.open(part, _FOLDER | os.O_NOFOLLOW, dir_fd=folder)
        except OSError as exc:
            return _refused(folder, part, beneath.joinpath(*parts[:depth]), label, exc, "/".join(parts[:depth]))
        finally:
            os.close(folder)
        folder = inner
    return folder, parts[-1]


def _refused(folder: int, name: str, path: Path, label: str, exc: OSError, shown: str | None = None) -> Read:
    """Why ``name`` in ``folder`` could not be opened: it is a link (named
    ``shown``, or ``label``), it is missing, or the error says why."""
    try:
        if stat.S_ISLNK(os.lstat(name, dir_fd=folder).st_mode):
            return _link(folder, name, path, shown or label)
    except OSError:
        pass
    if exc.errno in _MISSING:
        return Read(path, "missing", problem=f"{label} is missing")
    return _unreadable(path, label, exc)


def _link(folder: int, name: str, path: Path, label: str) -> Read:
    try:
        target = harmless(os.readlink(name, dir_fd=folder))
    except OSError:
        target = "somewhere that cannot be read"
    return Read(path, "link", problem=f"{link_words(label, target)}: not read here", target=target)


def read_bytes(
    path: Path | str, limit: int, *, keep: str = "all", name: str | None = None, beneath: Path | str | None = None
) -> Read:
    """``path``'s bytes, at most ``limit`` of them. ``keep``: ``all`` (a
    larger file is ``too-big``), ``head`` (its first bytes) or ``tail`` (its
    last bytes); ``cut`` says when some were left out. ``beneath``: see
    :func:`open_regular`."""
    path = Path(path)
    label = name or path.name
    handle, refused = open_regular(path, label, beneath=beneath)
    if handle is None:
        assert refused is not None
        return refused
    with handle:
        try:
            size = os.fstat(handle.fileno()).st_size
            if size > limit and keep == "all":
                return Read(
                    path,
                    "too-big",
                    size=size,
                    problem=f"{label} {_past(size, limit)} this tool reads",
                )
            start = max(0, size - limit) if keep == "tail" else 0
            handle.seek(start)
            # One byte more than the size, then (a file that grew while read) on
            # to one more than the bound, so one grown past it is caught: a
            # read(limit + 1) would take a buffer as big as the bound for every
            # small file.
            wanted = min(size - start, limit) + 1
            data = handle.read(wanted)
            if len(data) == wanted <= limit:
                data += handle.read(limit + 1 - wanted)
        except OSError as exc:
            return _unreadable(path, label, exc)
    cut = start > 0
    if len(data) > limit:
        if keep == "all":
            return Read(
                path, "too-big", size=len(data), problem=f"{label} is more than the {_amount(limit)} this tool reads"
            )
        data, cut = (data[:limit] if keep == "head" else data[-limit:]), True
    return Read(path, "ok", data, size=max(size, start + len(data)), cut=cut)


def _unreadable(path: Path, label: str, exc: OSError) -> Read:
    return Read(path, "unreadable", problem=f"{label} cannot be read ({exc.strerror or exc})", error=type(exc).__name__)


def read_text(path: Path | str, limit: int) -> tuple[str | None, str | None]:
    """``path`` as text (UTF-8, undecodable bytes replaced) and None, or None
    and the problem. A missing file is a problem too: ask :func:`present` first
    where a missing file is fine."""
    found = read_bytes(path, limit)
    return found.text(), found.problem


_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def too_deep(text: str | bytes) -> bool:
    """Whether JSON ``text`` nests arrays and objects more than ``MAX_DEPTH`` deep
    (brackets inside strings do not count). Linear, and nearly free for
    ordinary files: only a text with more brackets than the bound is scanned."""
    if isinstance(text, bytes):
        if text.count(b"[") + text.count(b"{") <= MAX_DEPTH:
            return False
        text = text.decode("utf-8", errors="replace")
    elif text.count("[") + text.count("{") <= MAX_DEPTH:
        return False
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0) > MAX_DEPTH


def parse_json(text: str | bytes, name: str, writer: str | None = None) -> tuple[Any, str | None]:
    """The value of JSON ``text`` and None, or None and the problem (not
    UTF-8, invalid, or nested past ``MAX_DEPTH``: then no file ``writer`` writes).
    ``json.loads``'s own rules otherwise: ``NaN`` and ``Infinity`` are
    accepted, as Harbor's and the runner's readers do."""
    if too_deep(text):
        theirs = f"{writer} writes" if writer else "this tool reads"
        return None, f"{name} nests more than {MAX_DEPTH} levels deep: not a file {theirs}"
    try:
        return json.loads(text), None
    except RecursionError:  # the bound is far below the interpreter's; only a tiny stack gets here
        return None, f"{name} nests too deeply to read"
    except UnicodeDecodeError as exc:
        return None, f"{name} is not {exc.encoding.upper()} text"
    except json.JSONDecodeError as exc:
        return None, f"{name} is not valid JSON ({exc})"
    except ValueError:  # an integer past sys.get_int_max_str_digits(): Python's limit, Harbor's reader's too
        return None, f"{name} holds an integer too long for Python's JSON reader (Harbor's too) to read"


@record(frozen=True)
class JsonFile:
    """One JSON file as found: ``state`` is ``ok``, ``missing``, ``truncated``
    (cut short, as when its writer is killed while writing it), ``invalid`` or
    ``unreadable``; ``problem`` says so in words, naming the file."""

    path: Path
    state: str
    data: Any = None
    problem: str | None = None

    @property
    def ok(self) -> bool:
        return self.state == "ok"

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default) if isinstance(self.data, dict) else default

    def text(self, *keys: str) -> str | None:
        """The string at ``keys``, down objects nested in the document; None
        where one of them is missing or of another kind (a file not written by
        its writer may hold anything at any of them)."""
        value = self.data
        for key in keys:
            value = value.get(key) if isinstance(value, dict) else None
        return value if isinstance(value, str) else None


def read_json(
    path: Path | str,
    limit: int,
    *,
    shape: type | tuple[type, ...] = object,
    writer: str | None = None,
    beneath: Path | str | None = None,
) -> JsonFile:
    """The JSON file at ``path`` (``limit`` and ``beneath`` as for
    :func:`read_bytes`), never raising: see :class:`JsonFile` for the states.
    A document that is not of ``shape`` is ``invalid``. ``writer`` names who
    writes the file (``"Harbor"``) when it can be killed while writing it: a
    document cut short is then ``truncated``, and one too big or of another
    shape is said to be no file of theirs."""
    path = Path(path)
    label = path.name
    found = read_bytes(path, limit, beneath=beneath)
    theirs = f": not a file {writer} writes" if writer else ""
    if found.data is None:
        if found.state == "too-big":
            return JsonFile(path, "invalid", problem=f"{found.problem}{theirs}")
        return JsonFile(path, "missing" if found.state == "missing" else "unreadable", problem=found.problem)
    data, problem = parse_json(found.data, label, writer=writer)
    if problem is not None:
        if writer and _cut_short(found.data):
            how = "cut short" if found.data.strip() else "empty"
            return JsonFile(path, "truncated", problem=f"{label} is {how}: {writer} was stopped while writing it")
        return JsonFile(path, "invalid", problem=problem)
    if not isinstance(data, shape):
        what = "an object" if shape is dict else "a list"
        # in JSON's words, as the user reads the file (Python's NoneType, list or int were not)
        return JsonFile(path, "invalid", problem=f"{label} holds {json_kind(data)}, not {what}{theirs}")
    return JsonFile(path, "ok", data)


def json_kind(value: Any) -> str:
    """A JSON value's kind, as a sentence says it (``a string``, ``null``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"


def _cut_short(raw: bytes) -> bool:
    """Whether JSON that does not parse is the start of a document: nothing
    at all, a character cut in half at the end, or a text that fails in its
    last token (a cut ``true``, ``nul``, number) or inside a string; a bad
    file fails with JSON's punctuation still after the error."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.reason == "unexpected end of data"
    if not text.strip():
        return True
    if too_deep(text):
        return False
    try:
        json.loads(text)
    except ValueError as exc:
        rest = text[getattr(exc, "pos", 0) :].rstrip()
        return not any(c in '{}[],:"' for c in rest) or str(exc).startswith("Unterminated string")
    return False


def table(document: Any, key: str) -> dict[str, Any]:
    """``document[key]`` when both are objects (JSON) or tables (TOML), else
    ``{}``: a file from elsewhere may hold anything under a key."""
    value = document.get(key) if isinstance(document, dict) else None
    return value if isinstance(value, dict) else {}


def _past(size: int, limit: int) -> str:
    """``is <size>: more than the <limit>``, said so the two differ: a file
    just past a bound (16 MB and a byte) rounds to the bound itself, so the
    exact bytes are said then."""
    if _amount(size) != _amount(limit):
        return f"is {_amount(size)}: more than the {_amount(limit)}"
    return f"is {size:,} bytes: more than the {_amount(limit)} ({limit:,} bytes)"


def _amount(size: int) -> str:
    if size >= MB:
        return f"{size / MB:,.0f} MB" if size % MB == 0 or size >= 10 * MB else f"{size / MB:,.1f} MB"
    if size >= 1024:
        return f"{size / 1024:,.0f} KB"
    return f"{size:,} bytes"
