"""test.sh read as sh reads it: its lines (comments and heredoc bodies gone, continuations joined) and
the words each passes its commands (quotes removed, what only says its words and redirections' files left
out), with how the shell makes a word it expands. Harbor runs test.sh with its #! line's sh or bash, so what
it hands the runner (``--workspace``, ``--verifier``) or installs is known only by reading it so; the
property tests of tests/engine/test_test_sh_against_bash.py judge this reading against real bash."""

from __future__ import annotations

import re
from itertools import pairwise
from typing import TYPE_CHECKING

from verifier_tui.engine.record import record

if TYPE_CHECKING:
    from collections.abc import Iterator

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
# their words, passing nothing to a runner: a hint a test.sh prints (--workspace, --verifier) is not what it runs.
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
# the inside of braces bash expands as a sequence of integers or letters, with an optional step (brace_expand's
# expand_seqterm: an integer may have a sign)
_SEQUENCE = re.compile(r"(?:[-+]?\d+\.\.[-+]?\d+|[A-Za-z]\.\.[A-Za-z])(?:\.\.[-+]?\d+)?")
# pathname expansion: an unquoted * or ?, or a bracket expression
_PATTERN = re.compile(r"[*?]|\[.+\]")
# a word that is one variable, ``$V`` or ``${V}``, and what sh does not read here (assigned_value)
_ONE_VARIABLE = re.compile(r"\$(?:([A-Za-z_]\w*)|\{([A-Za-z_]\w*)\})", re.ASCII)
_COMPOUND = frozenset(
    {"if", "then", "elif", "else", "fi", "case", "esac", "for", "select", "while", "until", "do", "done"}
    | {"function", "{", "}", "coproc"}
)
_UNSEEN = frozenset({"eval", "source", "."})
_BEFORE_A_COMMAND = _COMPOUND | {"!", "time", "command", "builtin"}  # what may stand before eval (then eval)
# builtins that set or unset a variable named by a word (which may be made as test.sh runs: declare "$N=x"),
# or run text later (trap), or make words commands (alias); printf -v, which only says its words otherwise,
# and an export of anything but plain NAME or NAME=VALUE are judged from the line (_names_at_run_time)
_WRITERS = frozenset({"declare", "typeset", "local", "readonly", "read", "mapfile", "readarray", "unset"})
_WRITERS |= {"let", "getopts", "trap", "alias", "enable", "wait", "shopt"}
_EXPORT_PLAIN = re.compile(r"export(?:\s+[A-Za-z_]\w*(?:=\S*)?)+\s*")
_PRINTF_V = re.compile(r"(?<![\w-])printf\s(?:.*\s)?-v")
# the variables bash sets itself (bash(1), Shell Variables): a value assigned to one may not be the one read
_BASHS_OWN = re.compile(
    r"_|PWD|OLDPWD|REPLY|PPID|S?RANDOM|LINENO|SECONDS|EPOCH\w+|HISTCMD|OPT(?:ARG|IND|ERR)|E?UID|GROUPS|FUNCNAME"
    r"|DIRSTACK|PIPESTATUS|HOST(?:NAME|TYPE)|MACHTYPE|OSTYPE|SHELLOPTS|SHLVL|COLUMNS|LINES|MAPFILE|COPROC|IFS"
    r"|(?:BASH|COMP|READLINE)\w*"
)
_ASSIGNMENT = re.compile(r"[A-Za-z_]\w*\+?=")
_CONTINUED = re.compile(r"(?:&&|\|[|&]?)[ \t]*$")  # a list or pipeline the next line carries on
# what this reading does not follow before the use: a subshell or function body, a here-document,
# bash's arithmetic (which assigns: ((N)) with N='V=7'), in (( )), $[ ], [[ ]], a[N]=, and every
# ${...} but a name's value or its default (${!X:=v} assigns the name X holds, ${P@P} runs arithmetic),
# PS4 (xtrace expands it before each command) and test's -v (it evaluates a name's subscript)
_NOT_FOLLOWED = re.compile(
    r"[()]|<<|\[\[|\$\[|\w\[|\$\{(?![A-Za-z_]\w*(?:\}|:?[-=?+]))|PS4|(?:\[|\btest)\s(?:[^;&|]*\s)?-v\b"
)


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
    for word in command_words(line) or ():
        if word.text:
            commands.setdefault(word.command, []).append(word.text)
    return list(commands.values())


def command_words(line: str) -> list[Word] | None:
    """The words a line of test.sh passes its commands, as sh reads them (None: a quote never closes):
    the words of one that only says them (echo) blank, no redirection's file (``>/dev/null``) nor the
    digits just before its operator (``2>``), which sh takes out of a command's words."""
    words: list[Word] = []
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
            Word("", "", False, start, command=command)
            if said
            else Word(word, mask, expands, start, quoted_empty, command)
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


def option_values(line: str, option: str, *, braces: bool = True) -> Iterator[tuple[Word, str, str, bool]]:
    """Each value one line of test.sh passes ``option`` as ``OPTION VALUE`` or ``OPTION=VALUE`` (the runner's
    parse_args takes both): the word holding it, the value bash passes in it, how the shell makes it as
    test.sh runs (:meth:`Word.how`, "" for as written; ``braces``: the shell expands them) and whether the
    word is the ``OPTION=`` one; none where a quote never closes."""
    words = command_words(line) or []
    for flag, after in pairwise([*words, Word("", "", False, len(line))]):
        if flag.text == option:
            given, value = after, after.text
        elif flag.text.startswith(f"{option}="):
            given, value = flag, flag.text.partition("=")[2]
        else:
            continue
        how = given.how(braces=braces)
        if how == "braces" and given is after and len(given.braces()) == 1:  # {/app,}: bash passes one word
            value, how = given.braces()[0], ""
        elif how == "pattern" and given is flag:
            # bash matches the whole word from its working directory, whose first part is then a folder
            # named "OPTION=" (no name holds a /): only such a folder in the container's workdir could
            # match, which is not modelled here; with none bash passes the word as written, and the
            # runner takes the value after the =
            how = ""
        yield given, value, how, given is flag


def assigned_value(lines: list[str], at: int, word: Word, value: str) -> str | None:
    """The value bash passes where ``value`` (the text of ``word``, a word of ``lines[at]``, lines as
    :func:`sh_lines` reads them) is one variable, ``"$V"``, when a plain assignment earlier in the script
    makes it certain; else None (it is chosen as test.sh runs). Certain: ``V=VALUE`` (or ``export V=VALUE``),
    VALUE as written (no expansion), is a line's one command, and every line before the use runs
    unconditionally in the script's own shell and is read whole here (no compound command, function,
    parenthesis, here-document or arithmetic there, no command named by an expansion, no list or
    pipeline carried on to the next line);
    no other line up to the use names V but to read it (no ``read V``, ``${V:=x}``, ``for V``), nor may set
    a name made as it runs (declare, read, unset, printf -v, trap: :data:`_WRITERS`), nothing runs text
    not read here (eval, source), and V is none bash sets itself ($_, PWD, REPLY). Unquoted, bash splits
    and globs the value: then it must hold only characters neither does anything to, and the script must
    leave IFS alone. In doubt, None: a wrong certain value runs another verifier than Harbor."""
    mask = word.mask[len(word.mask) - len(value) :]
    variable = _ONE_VARIABLE.fullmatch(value)
    if variable is None or mask not in (value, "\0" * len(value)):  # $"V", $'V': no variable
        return None
    name = variable[1] or variable[2]
    if _BASHS_OWN.fullmatch(name):
        return None
    read = re.compile(rf"\$(?:{name}(?!\w)|\{{{name}\}})")
    named = re.compile(rf"(?<!\w){name}(?!\w)")
    found: str | None = None
    before = lines[: at + 1]  # what runs after the runner's line decides nothing it was passed
    for index, line in enumerate(before):
        commands = sh_commands(line)
        leading = [_leading(command) for command in commands]
        if any(words & (_UNSEEN | _WRITERS) for words in leading) or _names_at_run_time(line, commands):
            return None
        mentions = len(named.findall(read.sub("", line)))
        compound = any(words & _COMPOUND for words in leading)
        if compound or _NOT_FOLLOWED.search(line) or _CONTINUED.search(line):
            return None  # what runs may be conditional, later, again, in a subshell, or not what is read here
        if index == at:
            if mentions:
                return None
            break
        if _named_by_expansion(commands):
            return None  # ${SRC:-.} ./sets, $c file: a command that may be eval, source or .
        if mentions and (found is not None or (found := _plain_assignment(line, name)) is None):
            return None
    if found is None or mask == "\0" * len(value):
        return found
    # unquoted: bash splits the value at IFS's characters (blanks, unless test.sh sets IFS) and globs it
    return found if "IFS" not in "".join(before) and re.fullmatch(r"[\w./+,:@%=-]+", found) else None


def _names_at_run_time(line: str, commands: list[list[str]]) -> bool:
    """Whether a line may set a variable whose name is made as test.sh runs, beside :data:`_WRITERS`:
    ``printf -v "$N"``, ``export -n``, ``export "$N=x"``."""
    exports = [" ".join(command) for command in commands if "export" in _leading(command)]
    return _PRINTF_V.search(line) is not None or any(not _EXPORT_PLAIN.fullmatch(e) for e in exports)


def _named_by_expansion(commands: list[list[str]]) -> bool:
    """Whether a command's name is made as test.sh runs (``$c``, ``${SRC:-.}``, a command's output):
    it may be eval, source or ``.``. The name is the first word :func:`_leading` does not step over."""
    for command in commands:
        for word in command:
            if word not in _BEFORE_A_COMMAND and not word.startswith("-") and not _ASSIGNMENT.match(word):
                if "$" in word or "`" in word:
                    return True
                break
    return False


def _leading(command: list[str]) -> set[str]:
    """The words of a command up to its name: what stands before it (``!``, ``time -p``, ``command --``,
    ``then``, ``{``, an assignment ``A=1``: any option or assignment is stepped over) and it."""
    leading: set[str] = set()
    for word in command:
        leading.add(word)
        if word not in _BEFORE_A_COMMAND and not word.startswith("-") and not _ASSIGNMENT.match(word):
            break
    return leading


def _plain_assignment(line: str, name: str) -> str | None:
    """The value a line gives ``name`` when it is a plain assignment and nothing else (``V=VALUE``,
    ``export V=VALUE``; other names may be assigned beside it), VALUE as written; else None."""
    if len(sh_commands(line)) != 1 or "&" in re.sub(r"[<>]&|&>", "", line):
        return None  # a pipeline's or a background command's assignment is a subshell's
    words = command_words(line) or []
    given = [word for word in words if word.mask.startswith(f"{name}=")]
    if words and words[0].text == "export":
        words = words[1:]
    if len(given) != 1 or not all(re.match(r"[A-Za-z_]\w*=", word.mask) for word in words):
        return None  # a command's own environment (V=x cmd), or no assignment bash makes
    value = given[0].text[len(name) + 1 :]
    if given[0].expands or "~" in given[0].mask:  # a tilde after = or : is the home folder's
        return None
    return value


@record(frozen=True)
class Word:
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
    :attr:`Word.mask`: a ``{`` (not a ``${``) to its ``}`` (:func:`_brace_closing`), holding a comma or a
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
