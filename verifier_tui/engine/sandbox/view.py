"""What the sandbox shows a task's verifier, read from the task: where the
workspace is, the working directory, and the limits of ``task.toml``.

Each mirrors a piece of Harbor 0.26.0:

* the workspace is ``/app``: the shim passes ``--workspace /app``; a task's
  own ``tests/test.sh`` that passes another absolute path there is followed;
* the working directory is ``[environment] workdir`` when set, else the
  image's ``WORKDIR`` (harbor/environments/docker/docker.py, ``exec``: the
  command runs where ``docker exec`` starts it), else ``/``, Docker's own
  default;
* ``[environment] memory_mb`` and ``cpus`` become the container's limits,
  and the verifier's ``network_mode`` (``[verifier]`` over
  ``[environment]``, harbor/models/task/config.py) is the container's
  network.
"""

from __future__ import annotations

import os
import re
import shlex
import threading
from contextlib import contextmanager
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING

from verifier_tui.engine import untrusted
from verifier_tui.engine.plain import cut_middle, unbroken
from verifier_tui.engine.procfs import machine_cpus
from verifier_tui.engine.record import record

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from verifier_tui.engine.task.discovery import Task

# Where the sandbox puts things (harbor-trials.md: the shim's command line,
# Harbor's reward folder). The tool's own inputs and outputs (a case's task
# data and response, the runner's explanation) are at INPUTS, which no
# Harbor sandbox has: it is named so no task would use it. APP and TESTS are
# Harbor's own paths, not a choice of ours: engine/harbor reads a trial's
# manifest and test-stdout.txt by them (a task's test.sh may move the workspace
# of a run, never what Harbor collected as /app).
APP = "/app"
TESTS = "/tests"
REWARD = "/logs/verifier"
INPUTS = "/.verifier-tui"
DOCKER_DEFAULT_WORKDIR = "/"
_READ_AT_MOST = 256 * 1024  # a test.sh or Dockerfile is a few KB; a bigger file is read this far

# A Dockerfile's WORKDIR instruction (case-insensitive, as Docker reads it).
_WORKDIR = re.compile(r"^[ \t]*WORKDIR[ \t]+(.+?)[ \t]*$", re.IGNORECASE | re.MULTILINE)


@record(frozen=True)
class Limits:
    """The task's limits, and how the run gets them (``cpus`` is the task's:
    what the run gets of it is :func:`cpus_given`)."""

    memory_mb: int | None = None
    cpus: int | float | None = None  # as TaskConfig.cpus: 1.5 is allowed
    storage_mb: int | None = None
    network: str = "public"  # public, no-network, allowlist
    workdir: str = DOCKER_DEFAULT_WORKDIR
    app: str = APP
    app_note: str = ""  # test.sh's workspace, when not known here (view.workspace_given): said in the run's notes
    cpu_list: tuple[int, ...] = ()  # the CPUs the run was bound to (empty: all of this machine's; set by cpu_lease)
    network_given: str = ""  # in a view: "none", "user" (the internet, by a helper) or "host"; "" in the copy
    # (and "lost" in the words of a run whose helper failed: its JSON says "none")
    cgroup: tuple[str, ...] = ()  # the limits a cgroup of the run's own applies: "memory", "cpu" (.cgroup)

    def to_json(self) -> dict[str, Any]:
        return {
            "memory_mb": self.memory_mb,
            "cpus": self.cpus,
            "cpus_given": cpus_given(self.cpus, self.cgroup)[0],
            "storage_mb": self.storage_mb,
            "cpu_list": list(self.cpu_list),
            "network": self.network,
            "network_given": self.network_given or None,
            "cgroup": list(self.cgroup),
            "workdir": self.workdir,
            "workspace": self.app,
        }


def _read_text(path: Path) -> str | None:
    """A file of the task's, as text: its first :data:`_READ_AT_MOST` bytes."""
    return untrusted.read_bytes(path, _READ_AT_MOST, keep="head").text()


def normal_path(path: str) -> str:
    """An absolute path in its normal form with one leading slash: POSIX lets
    ``//`` mean something else, so ``os.path.normpath`` keeps it ("//etc"),
    where Linux, bwrap and every check of the view take it as ``/etc``."""
    return "/" + os.path.normpath(path).lstrip("/")


def workspace_path(tests_dir: Path) -> str:
    """Where the task's ``tests/test.sh`` tells the runner the workspace is:
    ``/app`` for the shim (and when it says nothing plain)."""
    return workspace_given(tests_dir)[0]


def workspace_given(tests_dir: Path, shell: str | None = "bash") -> tuple[str, str]:
    """:func:`workspace_path`, and a note ("" for none) when test.sh passes a workspace known only as it
    runs (``"$WS"``, a command's output, a pattern matched against the container's files, braces
    ``shell`` expands) or holding a line break (the run's is then ``/app``), or one ending in \\r.
    ``shell`` is the one reading test.sh, as said ("bash", or the program its #! line names), None for
    one keeping braces (dash)."""
    path, line, unknown = _workspace_read(tests_dir, braces=shell is not None)
    if path is not None:
        if not path.endswith("\r"):
            return path, ""
        # bash runs test.sh (its #! line's, or bash itself, which Harbor starts it from)
        why = "its lines end in \\r\\n (a CRLF file)" if line.endswith("\r") else "it quotes the \\r"
        return path, f"tests/test.sh passes --workspace {unbroken(path)}: {why}, which bash keeps as the path's own"
    if unknown is None:
        return APP, ""
    said = f"tests/test.sh passes {cut_middle(unbroken(unknown.written), 200)}"
    if unknown.how == "braces":
        return APP, f"{said}, {braces_words(unknown, shell or '')}: this run's workspace is at {APP}, the shim's"
    why = {
        "pattern": "a pattern the container's shell matches against the container's files (pathname expansion), "
        "which are not here",
        "line break": "a path holding a line break, which no view here lays",
    }.get(unknown.how, "a path known only as test.sh runs (a variable, a command's output, a home folder: ~)")
    return APP, f"{said}, {why}: this run's workspace is at {APP}, the shim's"


@record(frozen=True)
class UnknownWorkspace:
    """A ``--workspace`` word of test.sh whose path the shell makes as it runs: ``how`` it does
    ("expands": a variable, a command's output; "pattern": pathname expansion; "braces": bash's brace
    expansion, into ``words`` when they are known here), and the flag and its word as ``written``."""

    written: str
    how: str
    words: tuple[str, ...] = ()


def braces_words(unknown: UnknownWorkspace, shell: str) -> str:
    """What ``shell`` (:func:`workspace_given`'s) makes of a ``--workspace`` word with braces, said for a
    note or a refusal: bash's words, where another program its #! line names may do otherwise."""
    words = f"{len(unknown.words)} words ({unbroken(shlex.join(unknown.words))})" if unknown.words else ""
    if shell != "bash":
        into = f"into {words}" if words else "(brace expansion)"
        return (
            f"whose braces {unbroken(shell)}, which its #! line names, may expand as bash does {into} (dash does not)"
        )
    if not words:
        return "whose braces bash expands (brace expansion) into words not worked out here"
    return f"which bash expands into {words}"


def braced_workspace(tests_dir: Path, *, braces: bool) -> UnknownWorkspace | None:
    """The ``--workspace`` word with braces its shell expands (``braces``: it does) that test.sh passes,
    when no plain path is passed."""
    path, _line, unknown = _workspace_read(tests_dir, braces=braces)
    return unknown if path is None and unknown is not None and unknown.how == "braces" else None


def _workspace_read(tests_dir: Path, *, braces: bool = True) -> tuple[str | None, str, UnknownWorkspace | None]:
    """The first plain path test.sh passes as ``--workspace`` and the line passing it, else None, "" and
    the first such word whose path its shell makes as it runs (None for none)."""
    text = _read_text(tests_dir / "test.sh") or ""
    unknown: UnknownWorkspace | None = None
    for _number, line in sh_lines(text):
        # lexed only where the flag is written (a test.sh of 256 KB took 175 ms to lex whole, each run)
        path, written = _workspace_given(line, braces=braces) if "--workspace" in line else (None, None)
        if path is not None:
            return path, line, None
        unknown = unknown or written
    return None, "", unknown


# one piece of sh's text: where an arithmetic $((...)) or ((...)) starts (read on by _arithmetic_end), a
# heredoc's operator and delimiter word (a CRLF line's \r is the word's, as bash reads it: no blank), a
# single-quoted string (literal to the next quote, a newline too), a double-quoted one, a quote that never
# closes (that line's rest, as one piece), a backslash and what it escapes, a newline, a #, or anything else
_SH_PIECE = re.compile(
    r"""\$?\(\(|\$\("""
    r"""|(?<!<)<<(?!<)(-?)[ \t]*((?:'[^'\n]*'|"[^"\n]*"|\\.|[^ \t\n;&|()<>'"\\])+)"""
    r"""|'[^']*'|"(?:[^"\\]|\\.)*"|['"][^\n]*|\\.?|\n|\#|[<$(]|[^'"\\\n#<$(]+""",
    re.DOTALL,
)
# inside arithmetic: a string quoted or backquoted or an escaped character (a parenthesis there counts for
# nothing), a parenthesis (a $( one's starts a command), a #, or a run of anything else
_ARITHMETIC_PIECE = re.compile(
    r"""'[^']*'|"(?:[^"\\]|\\.)*"|`(?:[^`\\]|\\.)*`|\\.|\$?\(|\)|[^()'"`\\$#]+|.""", re.DOTALL
)
_WORD_BEFORE = " \t;&|()<>"  # after one of these unescaped (or at a line's start) a # starts a comment
_NOT_JOINED = re.compile(r"\\(.)", re.DOTALL)
_UNQUOTED = re.compile(r"""\\(.)|['"]""", re.DOTALL)
# one piece of a word, as sh takes it apart: single-quoted, double-quoted (a backslash keeps only $ ` " \ ),
# a backslash and the character it escapes, a run of plain characters; or what ends a word (blanks, an
# operator: a CRLF line's \r is none, bash passes it as the word's last character), or a quote that never closes
_WORD_PIECE = re.compile(
    r"""'([^']*)'|"((?:[^"\\]|\\.)*)"|\\(.)|((?:[^ \t\n'"\\;&|()<>$]|\$(?!\())+)|([ \t\n;&|()<>]+|\\$)|(['"])"""
    r"""|\$(\()""",
    re.DOTALL,
)
_IN_DOUBLE_QUOTES = re.compile(r"""\\([$`"\\])""")
# What ends a command within a line (a word's end, white space aside), and the commands that only say
# their words, passing no --workspace to a runner: a hint a test.sh prints is not where it points it.
_COMMAND_ENDS = re.compile(r"[;&|()]")
_REDIRECTION = re.compile(r"&?[<>]+[&|]?")  # an operator whose next word is a file (or a descriptor: >&2)
_SAYS = frozenset({"echo", "printf", ":"})
# what sh expands in a word: a $ before a name (ASCII: bash's legal_variable_starter, as in a UTF-8 or C
# locale), a special parameter, { ( [, or, unquoted, (bash's) a quote; a backquote. A $ before anything
# else ($é, $日本), or at a word's end, is kept as it is, as a \$ is.
_EXPANDED = r"""\$(?=[A-Za-z0-9_{(\[@*#?$!-])|`"""
_EXPANDS = re.compile(_EXPANDED + r"""|\$(?=['"])""")
_EXPANDS_IN_DOUBLE_QUOTES = re.compile(_EXPANDED)
_ESCAPE = re.compile(r"\\.", re.DOTALL)
# a piece of a word as written, for where it ends: quoted, backquoted or escaped, a $( or a parenthesis,
# what ends a word outside them, or a run of anything else
_WRITTEN_PIECE = re.compile(
    r"""'[^']*'|"(?:[^"\\]|\\.)*"|`(?:[^`\\]|\\.)*`|\\.|\$\(|[()]|[ \t\n;&|<>]|[^'"`\\$() \t\n;&|<>]+|.""", re.DOTALL
)
PATH_MAX = 4096  # Linux's: a longer word is no path the runner can open
# the inside of braces bash expands as a sequence of integers or letters, with an optional step (brace_expand's
# expand_seqterm: an integer may have a sign)
_SEQUENCE = re.compile(r"(?:[-+]?\d+\.\.[-+]?\d+|[A-Za-z]\.\.[A-Za-z])(?:\.\.[-+]?\d+)?")
# pathname expansion: an unquoted * or ?, or a bracket expression
_PATTERN = re.compile(r"[*?]|\[.+\]")


def _closing(text: str, opener: int, closes: dict[int, int], *, command: bool = False) -> int:
    """Where the ``)`` closing the ``(`` at ``opener`` is, as bash 5 reads the arithmetic it may open, or
    the command (``command``) a ``$(`` opens (parse.y's parse_matched_pair: over lines, through any
    depth of parentheses, quotes and backquotes kept whole, a ``$(`` command's comments as
    parse_comsub skips them); -1 when nothing closes it.
    Each ``(`` met is recorded in ``closes`` and one met again is stepped over: bash reads a ``((``
    that closes as no arithmetic again from its second ``(``, and all those readings of a line of
    them would read it over and over (256 KB of ``(`` for hours)."""
    if opener in closes:
        return closes[opener]
    opened = [(opener, command)]  # each ( not yet closed, and whether a command is inside it (a $( one's)
    at = opener + 1
    while opened and at < len(text):
        piece = _ARITHMETIC_PIECE.match(text, at)
        assert piece is not None  # the pattern matches any character
        at, piece_text = piece.end(), piece.group()
        if piece_text == ")":
            closes[opened.pop()[0]] = piece.start()
        elif piece_text in ("(", "$("):
            known = closes.get(at - 1)
            if known is None:
                command = not text.startswith("(", at) if piece_text == "$(" else opened[-1][1]
                opened.append((at - 1, command))
            elif known < 0:
                break
            else:
                at = known + 1
        elif piece_text == "#" and opened[-1][1] and text[piece.start() - 1] in _WORD_BEFORE + "\n":
            newline = text.find("\n", at)  # a comment of the command, its ( no parenthesis (parse_comsub's)
            at = len(text) if newline < 0 else newline
    for never, _command in opened:
        closes[never] = -1
    return closes[opener]


def sh_lines(text: str) -> Iterator[tuple[int, str]]:
    """test.sh's lines as sh (Harbor executes test.sh with its #! line's sh or bash) reads them, each with
    the number of the line it starts on: comments and heredoc bodies gone, a line that ends in ``\\``
    joined to the next, except in a comment or single quotes."""
    line: list[str] = []
    heredocs: list[tuple[bool, str]] = []  # (<<- strips tabs, the delimiter) of the line being read
    at = start = counted = 0  # start: where the line being read starts; counted: newlines counted to there
    number = 1
    closes: dict[int, int] = {}  # where each ( arithmetic may open is closed (_closing)
    while at < len(text):
        piece = _SH_PIECE.match(text, at)
        assert piece is not None  # the pattern matches any character
        at, piece_text = piece.end(), piece.group()
        if piece_text in ("((", "$(("):
            # arithmetic: $(( to the ) closing its first (, (( to the ) closing its second when a ) follows
            # it (a << inside is a shift, no heredoc); else bash reads a subshell, on as sh text
            closed = _closing(text, piece.start() + 1, closes)
            if closed < 0:
                return  # never closed: bash stops at its syntax error, running nothing from this command on
            arithmetic = piece_text == "$((" or text.startswith(")", closed + 1)
            at = closed + 1 + (piece_text == "((") if arithmetic else piece.start() + 1
            piece_text = text[piece.start() : at]
        elif piece_text == "$(":
            # a command's output, read whole over lines to its ) as the word it is part of
            closed = _closing(text, piece.start() + 1, closes, command=True)
            if closed < 0:
                return
            at = closed + 1
            piece_text = text[piece.start() : at]
        if piece_text == "\n":
            number += text.count("\n", counted, start)
            counted = start
            yield number, "".join(line)
            line = []
            for strip_tabs, delimiter in heredocs:  # sh reads each body, unparsed, to its delimiter's line
                while at < len(text):
                    end = text.find("\n", at)
                    end = len(text) if end < 0 else end
                    body_line, at = text[at:end], end + 1
                    if (body_line.lstrip("\t") if strip_tabs else body_line) == delimiter:
                        break
            heredocs = []
            start = at
        elif piece_text == "#" and (not line or line[-1][-1] in _WORD_BEFORE and line[-1][0] != "\\"):
            newline = text.find("\n", at)
            at = len(text) if newline < 0 else newline  # a # that starts a word comments out the line's rest
        elif piece_text != "\\\n":
            if piece[2]:
                heredocs.append((piece[1] == "-", _UNQUOTED.sub(r"\1", piece[2])))
            elif piece_text.startswith('"'):
                piece_text = _NOT_JOINED.sub(lambda escaped: "" if escaped[1] == "\n" else escaped[0], piece_text)
            line.append(piece_text)
    yield number + text.count("\n", counted, start), "".join(line)


def sh_commands(line: str) -> list[list[str]]:
    """The commands of one of :func:`sh_lines`, each as the words sh passes it (quotes and escapes
    undone, nothing expanded, no redirection's file), split where sh ends a command (``;``, ``&&``,
    ``||``, ``|``, ``&``, parentheses); a command that only says its words (echo) is none, and so
    is a line with a quote that never closes (sh stops there)."""
    commands: dict[int, list[str]] = {}
    for word in _command_words(line) or ():
        if word.text:
            commands.setdefault(word.command, []).append(word.text)
    return list(commands.values())


def _workspace_given(line: str, *, braces: bool = True) -> tuple[str | None, UnknownWorkspace | None]:
    """The absolute path one line of test.sh passes as ``--workspace DIR`` or ``--workspace=DIR``, its
    words read with sh's quoting (``;``, ``&&``, ``|`` end a word as in sh); else None, with the first
    such word whose path the shell makes (``"$WS"``, a backquote, ``/ap*``, ``/app/{a,b}``: its value is
    not known here). None too for no such word, one holding a newline (quoted over two lines), or a
    quote that never closes."""
    words = _command_words(line)
    if words is None:
        return None, None
    unknown = None  # the first such word the shell makes, said only when no plain path follows it
    for flag, after in pairwise([*words, _Word("", "", False, len(line))]):
        passed = _passed(flag, after, braces=braces)
        if passed is None:
            continue
        given, value, how = passed
        if how:
            # bash expands braces in the whole word: --workspace=/a/{b,c} is two --workspace= words
            written = _written(line, given.start)
            written = written if given is flag else f"--workspace {written}"
            unknown = unknown or UnknownWorkspace(written, how, given.braces())
        elif value.startswith("/") and len(value) < PATH_MAX and normal_path(value) != "/":
            return normal_path(value), None
    return None, unknown


def _passed(flag: _Word, after: _Word, *, braces: bool) -> tuple[_Word, str, str] | None:
    """The word passing a path where ``flag`` is ``--workspace`` (``after``) or ``--workspace=DIR`` (itself),
    the path bash passes in it and how the shell makes it (:meth:`_Word.how`); None for any other flag."""
    if flag.text == "--workspace":
        given, value = after, after.text
    elif flag.text.startswith("--workspace="):
        given, value = flag, flag.text.partition("=")[2]
    else:
        return None
    how = given.how(braces=braces)
    if how == "braces" and given is after and len(given.braces()) == 1:  # {/app,}: bash passes one word
        return given, given.braces()[0], ""
    if how == "pattern" and given is flag:
        # bash matches the whole word from its working directory, whose first part is then a folder
        # named "--workspace=" (no name holds a /): only such a folder in the container's workdir
        # could match, which is not modelled here; with none bash passes the word as written, and the
        # runner takes the path after the =
        return given, value, ""
    return given, value, how


def _command_words(line: str) -> list[_Word] | None:
    """The words a line of test.sh passes its commands, as sh reads them (None: a quote never closes):
    the words of one that only says them (echo) blank, no redirection's file (``>/dev/null``) nor the
    digits just before its operator (``2>``), which sh takes out of a command's words."""
    words: list[_Word] = []
    pieces: list[str] | None = None  # of the word being read
    masks: list[str] = []  # the word's pieces with what is quoted or escaped masked (a NUL a character)
    expands, start, saying = False, 0, False  # saying: the command only says its words (echo)
    quoted_empty = False  # the word holds '' or "": an empty word its braces make is then kept
    redirected = False  # the next word is where a redirection points
    command = 0  # which of the line's commands the word is in

    def word_read(ends: str) -> bool:
        """Whether the command only says its words, the word just read counted."""
        word, mask = "".join(pieces or ()), "".join(masks)
        if redirected or (ends[:1] in ("<", ">") and re.fullmatch("[0-9]+", mask)):
            return saying
        said = saying or word in _SAYS  # (then echo, { echo, 2>&1 echo: wherever it stands)
        words.append(
            _Word("", "", False, start, command=command)
            if said
            else _Word(word, mask, expands, start, quoted_empty, command)
        )
        return said

    at, closes = 0, dict[int, int]()  # closes: _closing's, for a $( in the line
    while piece := _WORD_PIECE.match(line, at):
        at = piece.end()
        single, double, escaped, plain, ends, unclosed, substituted = piece.groups()
        if unclosed:
            return None
        if substituted:
            # a $( or $(( is one piece of the word, to the ) closing it (bash reads it whole, a ( or
            # a brace's comma inside it no word's end nor brace: brace_gobbler steps over it), and its
            # output is made as test.sh runs
            closed = _closing(line, piece.start(7), closes, command=True)
            if closed < 0:
                return None
            at, escaped = closed + 1, line[piece.start() : closed + 1]
        if ends is None:
            if pieces is None:
                pieces, masks, expands, start, quoted_empty = [], [], False, piece.start(), False
            if substituted:
                expands = True
            elif double is not None:
                expands |= _EXPANDS_IN_DOUBLE_QUOTES.search(_ESCAPE.sub("", double)) is not None
            elif plain is not None:  # what follows may be what is expanded: $( $' $"
                expands |= _EXPANDS.search(line, piece.start(), piece.end() + 1) is not None
            value = _IN_DOUBLE_QUOTES.sub(r"\1", double) if double is not None else single or escaped or plain or ""
            pieces.append(value)
            quoted_empty |= not value and plain is None
            masks.append(plain if plain is not None else "\0" * len(value))
            continue
        if pieces is not None:
            saying, pieces, redirected = word_read(ends), None, False
        redirected = redirected or _REDIRECTION.search(ends) is not None
        if _COMMAND_ENDS.search(_REDIRECTION.sub("", ends)):
            saying, command = False, command + 1
    if pieces is not None:
        word_read("")
    return words


@record(frozen=True)
class _Word:
    """A word of a test.sh line as sh passes it (``text``), and as ``mask``: its quoted and escaped
    characters NUL, what sh may still expand as written (``{``, ``*``)."""

    text: str
    mask: str
    expands: bool  # a variable, a command's output: sh makes its value
    start: int  # where it starts in its line
    quoted_empty: bool = False  # it holds '' or ""
    command: int = 0  # which of its line's commands it is in

    def how(self, *, braces: bool = True) -> str:
        """How the shell makes this word's value as it runs ("" for as written): bash's order, in
        which braces come first (``{$x,b}`` is two words whatever $x holds), then variables, then
        pathname expansion; ``braces``: the shell expands them (bash does, dash does not)."""
        if braces and _brace_expansions(self.mask):
            return "braces"
        if self.expands or self.mask.startswith("~"):  # bash's tilde expansion: a user's home, the container's
            return "expands"
        if _PATTERN.search(self.mask):
            return "pattern"
        return "line break" if "\n" in self.text else ""

    def braces(self) -> tuple[str, ...]:
        """The words bash expands this one into, where it holds one list of braces and nothing
        else to expand (``/app/{src,lib}``: ``/app/src``, ``/app/lib``); else none (not worked out)."""
        found = _brace_expansions(self.mask)
        if len(found) != 1 or self.mask.count("{") > 1 or self.expands or _PATTERN.search(self.mask):
            return ()
        head, tail = found[0]
        cuts = [head] + [at for at in range(head + 1, tail) if self.mask[at] == ","] + [tail]
        if len(cuts) == 2:
            return ()  # a sequence
        words = [self.text[:head] + self.text[a + 1 : b] + self.text[tail + 1 :] for a, b in pairwise(cuts)]
        if "" in words and self.quoted_empty:
            return ()  # which empty word is quoted, and kept, is not worked out here
        return tuple(word for word in words if word)  # bash drops an empty one, unquoted: no word


def _brace_expansions(mask: str) -> list[tuple[int, int]]:
    """Where bash's brace expansion (braces.c, brace_expand) finds braces to expand in a word masked as
    :attr:`_Word.mask`: a ``{`` (not a ``${``) to its ``}`` (:func:`_brace_closing`), holding a comma or a
    sequence (:data:`_SEQUENCE`). Braces that hold neither are kept, and bash reads on after them; a ``{``
    with no ``}`` is kept, and bash reads on after it; a ``${`` is a variable's (``${x,A}`` its case changed:
    brace_gobbler steps over it)."""
    found: list[tuple[int, int]] = []
    at = 0
    while (opening := mask.find("{", at)) >= 0:
        closing = _brace_closing(mask, opening)
        at = opening + 1
        if closing < 0 or (opening and mask[opening - 1] == "$"):
            continue
        inside = mask[opening + 1 : closing]
        if "," in inside or _SEQUENCE.fullmatch(inside):
            found.append((opening, closing))
        at = closing + 1
    return found


def _brace_closing(mask: str, opening: int) -> int:
    """The ``}`` closing the ``{`` at ``opening`` as brace_gobbler finds it (-1: none): nested braces
    counted, and only once a comma, or a ``..`` not just before a ``}``, was met outside them (``{a},b}``
    closes at its last ``}``)."""
    depth, separated = 0, False
    for index in range(opening + 1, len(mask)):
        char = mask[index]
        if char == "}" and not depth and separated:
            return index
        if char == "{":
            depth += 1
        elif char == "}" and depth:
            depth -= 1
        elif not depth and (char == "," or (mask.startswith("..", index) and mask[index + 2 : index + 3] != "}")):
            separated = True
    return -1


def _written(line: str, at: int) -> str:
    """The word of ``line`` that starts at ``at`` as written, through any ``$(...)`` or backquotes."""
    depth, end = 0, at
    for piece in _WRITTEN_PIECE.finditer(line, at):
        text = piece.group()
        if text == "$(" or (text == "(" and depth):
            depth += 1
        elif text == ")" and depth:
            depth -= 1
        elif not depth and (text in "()" or text in " \t\n;&|<>"):
            break
        end = piece.end()
    return line[at:end]


def image_workdir(task_root: Path) -> str:
    """The ``WORKDIR`` that ``environment/Dockerfile`` leaves in force (the
    last one; a relative one continues the one before), else Docker's ``/``."""
    text = _read_text(task_root / "environment" / "Dockerfile")
    workdir = DOCKER_DEFAULT_WORKDIR
    for found in _WORKDIR.finditer(text or ""):
        value = found.group(1).strip().strip("\"'")
        if not value or "$" in value:
            continue  # a build variable: not known here
        workdir = normal_path(os.path.join(workdir, value))
    return workdir


def limits_for(task: Task, app: str, app_note: str = "") -> Limits:
    """The limits of ``task`` (its ``task.toml`` as Harbor reads it)."""
    config = task.config
    return Limits(
        memory_mb=config.memory_mb,
        cpus=config.cpus,
        storage_mb=config.storage_mb,
        network=config.verifier_network_mode,
        workdir=task_workdir(task),
        app=app,
        app_note=app_note,
    )


def task_workdir(task: Task) -> str:
    """Where the runner starts: task.toml's ``workdir``, in its normal form
    ("//app/sub" is /app/sub to Linux, and meets the same checks), else the
    image's WORKDIR."""
    given = task.config.workdir
    if not given:
        return image_workdir(task.root)
    return normal_path(given) if given.startswith("/") else given


def cpus_to_bind(cpus: int | float | None) -> int:
    """How many CPUs a run of a task with ``cpus`` is bound to where no
    cgroup gives it a quota (Docker's ``cpus`` is a share of time; affinity
    to as many CPUs is the nearest a run without one gets); 0 when the task
    sets none or this machine has no more."""
    if cpus is None or not hasattr(os, "sched_getaffinity"):
        return 0
    wanted = max(1, int(-(-float(cpus) // 1)))  # a fraction of a CPU still needs one
    return wanted if wanted < machine_cpus() else 0


LEAST_CPUS = 0.01
"""The kernel's least CPU quota, 1 ms, in CPUs of Docker's 100 ms period (:mod:`.cgroup`)."""


def cpus_given(cpus: int | float | None, cgroup: tuple[str, ...]) -> tuple[int | float | None, str]:
    """How many CPUs a run of a task with ``cpus`` gets, and how: ``"quota"``
    in a cpu cgroup of its own (``cgroup`` holds ``"cpu"``), Docker's share
    of time, between the kernel's least quota and this machine's CPUs (more
    is no limit; Docker refuses both ends); else ``"bound"``, affinity to as
    many whole CPUs (:func:`cpus_to_bind`); else ``"unbound"``, every CPU this
    machine gives it. (None, "") when the task sets none. The quota written,
    the notes, the limits line and ``--json`` all count them here."""
    if cpus is None:
        return None, ""
    have = machine_cpus()
    if "cpu" in cgroup:
        return min(max(cpus, LEAST_CPUS), have), "quota"
    bound = cpus_to_bind(cpus)
    return (bound, "bound") if bound else (have, "unbound")


def cpus_text(count: int | float) -> str:
    """``1 CPU``, ``2 CPUs``, ``0.01 CPUs``: a count of CPUs in the notes and the limits line."""
    return f"{count:g} CPU" + ("" if count == 1 else "s")


# How many of this process's runs are bound to each CPU right now.
_bound: dict[int, int] = {}
_bound_lock = threading.Lock()


@contextmanager
def cpu_lease(wanted: int) -> Iterator[tuple[int, ...]]:
    """The ``wanted`` CPUs this process may use that its other runs are bound
    to least, held for the block. Runs side by side (``test -j 2``) each get
    their own: bound to the same first CPU, they would share it while the
    others idle, which no sandbox of its own does."""
    with _bound_lock:
        allowed = sorted(os.sched_getaffinity(0))
        chosen = tuple(sorted(sorted(allowed, key=lambda cpu: _bound.get(cpu, 0))[:wanted]))
        for cpu in chosen:
            _bound[cpu] = _bound.get(cpu, 0) + 1
    try:
        yield chosen
    finally:
        with _bound_lock:
            for cpu in chosen:
                _bound[cpu] -= 1


# A string literal that starts with one of the sandbox's own paths.
_SANDBOX_LITERAL = r"""(?<![\w.])[rRbBuU]?["'](/app|/tests|/logs/verifier)(?=["'/])"""
_SOURCES_AT_MOST = 64  # the task's own .py files looked at, at most


def sandbox_path_lines(tests_dir: Path, verifier: Path) -> list[str]:
    """Where the verifier and its helpers name ``/app``, ``/tests`` or
    ``/logs/verifier`` by absolute path (``verifier.py:8 /app``): what the
    copy sandbox, which has none of them, cannot run as the sandbox would."""
    files = [verifier]
    try:
        for path in sorted(tests_dir.rglob("*.py")):
            if len(files) >= _SOURCES_AT_MOST:
                break
            if path != verifier and ".ng" not in path.relative_to(tests_dir).parts:
                files.append(path)
    except OSError:
        pass
    found: list[str] = []
    for path in files:
        text = _read_text(path) or ""
        for number, line in enumerate(text.splitlines(), 1):
            if line.lstrip().startswith("#"):
                continue
            hit = re.search(_SANDBOX_LITERAL, line)
            if hit:
                found.append(f"{path}:{number} {hit.group(1)}")
    return found
