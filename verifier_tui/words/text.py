"""Verifier text made harmless to show, in either face: what a verifier
prints may hold escape codes that would act on the user's terminal.

The patterns only text that holds an escape or is not ASCII needs are kept as
strings and compiled by ``re`` at their first use (it keeps them): most runs
print neither, and compiling them costs every start more than the rest of
this module."""

from __future__ import annotations

import re

from verifier_tui.engine.untrusted import ANSI

#: C0 control characters other than tab and newline, DEL, and the C1 controls
#: (U+0080 to U+009F: U+009B is a one-character CSI on some terminals). A stray
#: \r or \b from a progress bar would garble the line it lands on.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
#: The characters that reorder text around them (bidi controls: a
#: right-to-left override makes ``txt.exe`` read as ``exe.txt``): shown as
#: what they are, ``<U+202E>``, never obeyed.
BIDI = "[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
#: Lone surrogates: a file name's bytes that are not UTF-8, as Python decodes
#: them (U+DC80 to U+DCFF for the bytes 0x80 to 0xFF). A terminal cannot show
#: them, and a screen that counts one as a cell is misaligned by what the
#: terminal prints instead: shown as the byte, ``\xff``, or ``<U+D800>``.
_SURROGATE = "[\ud800-\udfff]"


def _surrogate_text(found: re.Match[str]) -> str:
    code = ord(found.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"<U+{code:04X}>"


def plain_surrogates(text: str) -> str:
    """``text`` with its lone surrogates as the bytes they stand for (``\\xff``)."""
    return re.sub(_SURROGATE, _surrogate_text, text)


def plain_text(text: str) -> str:
    """``text`` with terminal escape sequences and control characters removed,
    tabs expanded: verifier output made harmless to show."""
    if "\x1b" in text:
        text = re.sub(ANSI, "", text)
    text = _CONTROL.sub("", text)
    if not text.isascii():
        text = re.sub(BIDI, lambda found: f"<U+{ord(found.group()):04X}>", text)
        text = plain_surrogates(text)
    return text.expandtabs(4) if "\t" in text else text


#: Line breaks, tabs and every other control character written as escapes
#: where text must stay on its line: a name shows what it holds (``h\x1b[31mX.py``),
#: never a shorter name that does not exist.
_ON_ONE_LINE = str.maketrans(
    {
        **{code: f"\\x{code:02x}" for code in [*range(0x20), *range(0x7F, 0xA0)]},
        **{"\n": "\\n", "\r": "\\r", "\t": "\\t", "\u2028": "\\u2028", "\u2029": "\\u2029"},
    }
)


#: The most of one line of words read from a file that is shown; the rest is counted.
ONE_LINE_MOST = 1000


def unbroken(text: str) -> str:
    """``text`` made harmless (:func:`plain_text`) on one line, its line
    breaks and tabs written as ``\\n``, ``\\t``, whatever its length: a
    folder named ``a<newline>b`` reads ``a\\nb`` wherever it is named."""
    return plain_text(text.translate(_ON_ONE_LINE))


#: The most of a name read from a file shown where one name goes: an exception type
#: (Harbor's is a class name, ``RewardFileNotFoundError``: tens of characters), a task's
#: name in a table (a dataset's short name). One of 100,000 a result.json named filled ten
#: lines of a screen; a task's of 5,000 pushed every figure of the table off it (:func:`one_name`).
NAME_MOST = 60


def one_name(text: str) -> str:
    """``text``, a name read from a file (an exception type, a task's), on one line and in a
    name's room (:data:`NAME_MOST`), said the same on every face: its start and end
    with a count of the rest (:func:`one_line`)."""
    return one_line(text, NAME_MOST)


def one_line(text: str, most: int = ONE_LINE_MOST) -> str:
    """``text`` :func:`unbroken`, in at most ``most`` (ONE_LINE_MOST)
    characters (its start and its end, with a count of the rest between, the
    count within them: a column ``most`` wide holds it): a name read from a
    file (a task's, a case's, a trial's, an exception's message) in a table
    cell or a header can never start a row of its own, nor make a line of 100 KB."""
    line = unbroken(text)
    if len(line) <= most:
        return line
    said = _left_out_words
    if len(line) - most < len(said(len(line))):
        said = _left_out_mark  # a few over: the words would leave out more than the overflow, half a name
    kept = max(most - len(said(len(line))), 2)
    # Cut from the middle: an error's end says where (``at tests/verifier.py:28``).
    head, tail = kept * 3 // 4, kept - kept * 3 // 4
    return f"{line[:head]}{said(len(line) - head - tail)}{line[-tail:]}"


def one_id(text: str) -> str:
    """``text`` as a test id and JUnit's classname name it: :func:`one_line`,
    with Unicode's non-characters U+FFFE and U+FFFF (all it leaves that XML 1.0
    cannot hold) spelled as pytest's junitxml spells them in a name, ``#xFFFE``:
    pytest writes a classname as the id has it, unescaped, and a raw one made
    the whole ``--junitxml`` file one no reader takes."""
    return one_line(unbroken(text).replace("\ufffe", "#xFFFE").replace("\uffff", "#xFFFF"))


def _left_out_words(count: int) -> str:
    return f" … {count:,} characters left out … "


def _left_out_mark(count: int) -> str:
    return f"…+{count}…"
