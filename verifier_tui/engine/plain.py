"""Text from files the tool did not write made harmless to show, in either
face: what a verifier prints, or a trial recorded, may hold escape codes that
would act on the user's terminal, line breaks that would forge a line, bidi
controls that would reorder one. The engine names such text too (a reward
key in a listing), so the rule lives here, said once.

The patterns only text that holds an escape or is not ASCII needs are kept as
strings and compiled by ``re`` at their first use (it keeps them)."""

from __future__ import annotations

import bisect
import itertools
import os
import re
import shlex
import unicodedata
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

ANSI = r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]"
"""ANSI escape sequences (CSI, OSC ended by BEL or ST, and two-byte escapes), which
what a run prints may hold: taken out before it is shown, and before it is read (Python
3.13 colours a traceback it prints itself under FORCE_COLOR). An OSC ends at its line:
one left open must not take the lines after it (the runner's report) out up to a BEL
printed later before a forged one. A string, compiled at first use."""
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
        text = re.sub(BIDI, lambda found: code_point(found.group()), text)
        text = plain_surrogates(text)
    return text.expandtabs(4) if "\t" in text else text


#: The most of one line of words read from a file that is shown; the rest is counted.
ONE_LINE_MOST = 1000


def cut_middle(line: str, most: int = ONE_LINE_MOST) -> str:
    """``line`` in at most ``most`` characters: its start and its end, with a count of the rest
    between (``… 4,037 characters left out …``), the count within them."""
    if len(line) <= most:
        return line
    said, head, tail = _cut(len(line), len(line), most)
    return f"{line[:head]}{said(len(line) - head - tail)}{line[-tail:]}"


def _cut(shown: int, length: int, most: int) -> tuple[Callable[[int], str], int, int]:
    """How a line ``shown`` characters long as shown, of ``length`` characters of its own, is cut to
    ``most``: the words counting what is left out, and the room of the start and of the end kept."""
    said = _left_out_words
    if shown - most < len(said(length)):
        said = _left_out_mark  # a few over: the words would leave out more than the overflow, half a name
    kept = max(most - len(said(length)), 2)
    # Cut from the middle: an error's end says where (``at tests/verifier.py:28``).
    return said, kept * 3 // 4, kept - kept * 3 // 4


def _left_out_words(count: int) -> str:
    return f" … {count:,} characters left out … "


def _left_out_mark(count: int) -> str:
    return f"…+{count}…"


#: Line breaks, tabs and every other control character written as escapes
#: where text must stay on its line: a name shows what it holds (``h\x1b[31mX.py``),
#: never a shorter name that does not exist.
_ON_ONE_LINE = str.maketrans(
    {
        **{code: f"\\x{code:02x}" for code in [*range(0x20), *range(0x7F, 0xA0)]},
        **{"\n": "\\n", "\r": "\\r", "\t": "\\t", "\u2028": "\\u2028", "\u2029": "\\u2029"},
    }
)


def unbroken(text: str) -> str:
    """``text`` made harmless (:func:`plain_text`) on one line, its line
    breaks and tabs written as ``\\n``, ``\\t``, whatever its length: a
    folder named ``a<newline>b`` reads ``a\\nb`` wherever it is named."""
    return plain_text(text.translate(_ON_ONE_LINE))


#: Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt): what a font draws as
#: nothing. Python's isprintable() passes some of them (a variation selector, the combining
#: grapheme joiner, a Hangul filler), and unicodedata has no such property: the ranges, listed.
_IGNORABLE = (
    r"[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f"
    r"\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
#: The scripts whose letters a zero-width (non-)joiner shapes, by their blocks: Arabic and Persian
#: and the scripts written as they are (Syriac, N'Ko, Mongolian, Hanifi Rohingya, Sogdian, Adlam...),
#: and those of the Brahmi family (Devanagari to Sinhala, Tibetan, Myanmar, Tagalog to Tagbanwa,
#: Khmer, Limbu, Tai Le, New Tai Lue, Balinese, Kayah Li, Rejang, Javanese, and past the first
#: plane Brahmi, Sharada, Grantha... at U+11000 to U+11FFF).
#: Persian's نمره‌کل, Devanagari's क्‍ष need one.
_JOINING = (
    r"[\u0600-\u08ff\u0900-\u0dff\u0f00-\u109f\u1700-\u18af\u1900-\u19df\u1a20-\u1aaf\u1b00-\u1c4f"
    r"\ua800-\ua95f\ua980-\uaaff\uabc0-\uabff\ufb50-\ufdff\ufe70-\ufefe\U00010a00-\U00010a5f"
    r"\U00010ac0-\U00010aff\U00010b80-\U00010baf\U00010d00-\U00010d3f\U00010e80-\U00010ebf"
    r"\U00010f30-\U00011fff\U0001e900-\U0001e95f]"
)
_JOINERS = "\u200c\u200d"
#: Unicode 15.1's Extended_Pictographic (emoji-data.txt; adjacent ranges merged): what an emoji is
#: made of, less its reserved U+1FC00 to U+1FFFD, which no Unicode version assigns (nothing draws).
#: A presentation selector or joiner beside another symbol (°, €, →) joins nothing and draws nothing:
#: ``temp°C`` and ``temp°`` U+FE0F ``C`` would print alike.
_PICTOGRAPHIC = (
    r"[\u00a9\u00ae\u203c\u2049\u2122\u2139\u2194-\u2199\u21a9\u21aa\u231a\u231b\u2328\u2388\u23cf"
    r"\u23e9-\u23f3\u23f8-\u23fa\u24c2\u25aa\u25ab\u25b6\u25c0\u25fb-\u25fe\u2600-\u2605\u2607-\u2612"
    r"\u2614-\u2685\u2690-\u2705\u2708-\u2712\u2714\u2716\u271d\u2721\u2728\u2733\u2734\u2744\u2747\u274c"
    r"\u274e\u2753-\u2755\u2757\u2763-\u2767\u2795-\u2797\u27a1\u27b0\u27bf\u2934\u2935\u2b05-\u2b07"
    r"\u2b1b\u2b1c\u2b50\u2b55\u3030\u303d\u3297\u3299\U0001f000-\U0001f0ff\U0001f10d-\U0001f10f\U0001f12f"
    r"\U0001f16c-\U0001f171\U0001f17e\U0001f17f\U0001f18e\U0001f191-\U0001f19a\U0001f1ad-\U0001f1e5"
    r"\U0001f201-\U0001f20f\U0001f21a\U0001f22f\U0001f232-\U0001f23a\U0001f23c-\U0001f23f"
    r"\U0001f249-\U0001f3fa\U0001f400-\U0001f53d\U0001f546-\U0001f64f\U0001f680-\U0001f6ff"
    r"\U0001f774-\U0001f77f\U0001f7d5-\U0001f7ff\U0001f80c-\U0001f80f\U0001f848-\U0001f84f"
    r"\U0001f85a-\U0001f85f\U0001f888-\U0001f88f\U0001f8ae-\U0001f8ff\U0001f90c-\U0001f93a"
    r"\U0001f93c-\U0001f945\U0001f947-\U0001faff]"
)
#: A skin tone may come between an emoji and the joiner that joins it to the next (👩🏽‍💻).
_BEFORE_JOINER = _PICTOGRAPHIC[:-1] + "\U0001f3fb-\U0001f3ff]"
_PRESENTATION = "\ufe0e\ufe0f"  # a symbol drawn as text, or as an emoji (❤️)
_KEYCAP = "[0-9#*]\ufe0f\u20e3"  # 1️⃣: a digit, # or * made an emoji
#: The emoji tag sequences (Unicode 15.1's emoji-sequences.txt, RGI_Emoji_Tag_Sequence): a black
#: flag, the tags of "gbeng", "gbsct" or "gbwls", a cancel tag (England's, Scotland's, Wales'
#: flags). Other tags draw nothing: 🏴 + "a" and 🏴 + "b" would print alike.
_FLAG = (
    "\U0001f3f4\U000e0067\U000e0062"
    "(?:\U000e0065\U000e006e\U000e0067|\U000e0073\U000e0063\U000e0074|\U000e0077\U000e006c\U000e0073)\U000e007f"
)
#: What may be kept by what is beside it: a flag's tags; a joiner between letters of a joining
#: script or pictographs, a selector after a pictograph or a keycap's digit (:func:`_joins` judges
#: those). A joiner with neither beside it is named unjudged: 5 MB of U+200D took 25 s judged.
_JUDGED = (
    f"{_FLAG}|(?<=[{_JOINING[1:-1]}{_BEFORE_JOINER[1:-1]}\ufe0f])[{_JOINERS}](?=[{_JOINING[1:-1]}{_PICTOGRAPHIC[1:-1]}])"
    f"|(?<=[{_PICTOGRAPHIC[1:-1]}0-9#*])[{_PRESENTATION}]"
)


def _unseen(c: str) -> bool:
    """Whether ``c`` draws nothing a reader can tell apart unless what is beside it keeps it
    (:data:`_JUDGED`): what is not printable (a control, a byte-order mark) or default-ignorable (a
    zero-width space, a joiner); never the soft hyphen, which terminals draw."""
    if c == "\u00ad":
        return False
    if re.match(_IGNORABLE, c):
        return True
    # isprintable() knows the interpreter's Unicode (3.11's is 14.0): an emoji newer than it (🫨
    # U+1FAE8, 15.0's) is unassigned there, yet a terminal draws it
    return not c.isprintable() and re.match(_PICTOGRAPHIC, c) is None


def _joins(text: str, at: int) -> bool:
    """Whether the joiner or emoji presentation selector ``text[at]`` is part of what is beside
    it: a selector after a pictograph (❤️) or in a keycap (1️⃣), a joiner between two pictographs of an emoji (👨‍👩‍👧,
    ❤️‍🔥, 👩🏽‍💻) or two letters of a joining script. Elsewhere (``日`` U+200D ``本``,
    ``reward`` U+FE0F, ``°`` U+FE0F) it makes a key look like another."""
    c = text[at]
    before = text[at - 1] if at else ""
    after = text[at + 1 : at + 2]
    if c in _PRESENTATION:
        return re.match(_PICTOGRAPHIC, before) is not None or (
            at > 0 and re.match(_KEYCAP, text[at - 1 : at + 2]) is not None
        )
    if c not in _JOINERS:
        return False
    joined = text[at - 2] if before == "\ufe0f" and at > 1 else before
    if c == "\u200d" and re.match(_BEFORE_JOINER, joined) and re.match(_PICTOGRAPHIC, after):
        return True
    return _joining_letter(before) and _joining_letter(after)


def _joining_letter(c: str) -> bool:
    return bool(c) and unicodedata.category(c)[0] in "LM" and re.match(_JOINING, c) is not None


def may_spell(text: str) -> bool:
    """Whether :func:`spelled_out` may name anything in ``text``: it holds what is not printable
    or what is default-ignorable (a joiner it may keep)."""
    return not (text.isprintable() and (text.isascii() or re.search(_IGNORABLE, text) is None))


def spelled_out(text: str, spell: Callable[[str], str]) -> str:
    """``text`` with each character a reader could not see (:func:`_unseen`, :func:`_joins`)
    written as ``spell`` writes it: a key ``reward`` and one ending in a zero-width space must not
    look one. What can be read stays as written: é, 日本, an emoji.

    A trial's reward key may be megabytes long: what draws nothing is named in one str.translate
    pass (a table of the text's distinct such characters) over what lies between what is kept;
    only a joiner or selector with a letter or pictograph beside it is judged one at a time."""
    if not may_spell(text):
        return text
    table = {ord(c): spell(c) for c in set(text) if _unseen(c)}
    shown, start = [], 0
    for found in _kept(text):
        shown += [text[start : found.start()].translate(table), found.group()]
        start = found.end()
    return "".join([*shown, text[start:].translate(table)])


def _kept(text: str) -> Iterator[re.Match[str]]:
    """What :data:`_JUDGED` finds in ``text`` that is kept as written: a flag, or what joins."""
    return (found for found in re.finditer(_JUDGED, text) if len(found.group()) > 1 or _joins(text, found.start()))


def code_point(c: str) -> str:
    """``<U+200B>``: how a name shows a character it cannot show, as it shows a bidi control."""
    return f"<U+{ord(c):04X}>"


def one_line(text: str, most: int = ONE_LINE_MOST) -> str:
    """``text`` :func:`unbroken`, what draws nothing spelled as a reward key's is
    (``<U+200B>``, :func:`spelled_out`), in at most ``most``
    (ONE_LINE_MOST) characters (its start and its end, with a count of the rest between, the
    count within them: a column ``most`` wide holds it): a name read from a
    file (a task's, a case's, a trial's, an exception's message) in a table
    cell or a header can never start a row of its own, nor make a line of 100 KB,
    nor read as another (cases ``right`` and ``right`` with a zero-width space)."""
    if not may_spell(text):
        return cut_middle(text, most)
    # each character as shown, where a cut may show it (a name may be megabytes of what draws nothing):
    # a cut keeps whole ones and counts those of the name's own it leaves out, never the spelling's
    whole = len(text) <= 2 * most
    head = shown_one_by_one(text if whole else text[:most])
    shown = sum(map(len, head)) if whole else len(text)
    if shown <= most:
        return "".join(head)
    tail = head if whole else shown_one_by_one(text[-most:])
    said, head_room, tail_room = _cut(shown, len(text), most)
    heads = bisect.bisect_right(list(itertools.accumulate(map(len, head))), head_room)
    tails = bisect.bisect_right(list(itertools.accumulate(map(len, reversed(tail)))), tail_room)
    return "".join([*head[:heads], said(len(text) - heads - tails), *tail[len(tail) - tails :]])


def typed_back(name: str, typed: str) -> bool:
    """Whether ``typed`` names ``name``: as it is, or as :func:`one_line` spells it whole (a case
    ``correct`` + U+200B, listed as ``correct<U+200B>``, is picked by those words)."""
    return typed == name or (may_spell(name) and typed == "".join(shown_one_by_one(name)))


def typed_in_bash(text: str) -> str:
    """``text`` as one word bash takes back whole, on one line: quoted, or ``$'...'`` with each
    character :func:`one_line` would not show as it is written as its UTF-8 bytes
    (``$'demo\\xe2\\x80\\x8b'``, in any locale), so two names that a listing spells alike can each be typed."""
    shown = shown_one_by_one(text) if may_spell(text) else list(text)
    if shown == list(text):
        return shlex.quote(text)
    escaped = (
        c.replace("\\", "\\\\").replace("'", "\\'") if flat == c else "".join(f"\\x{b:02x}" for b in os.fsencode(c))
        for c, flat in zip(text, shown, strict=True)
    )
    return "$'" + "".join(escaped) + "'"


def posix_from(path: Path, folder: Path) -> str:
    """``path`` named in a sentence: from ``folder`` when it is inside it, else whole."""
    return path.relative_to(folder).as_posix() if path.is_relative_to(folder) else str(path)


def shown_one_by_one(text: str) -> list[str]:
    """Each character of ``text`` as :func:`one_line` shows it: :func:`unbroken`, then what draws
    nothing spelled, unless what is beside it keeps it (as :func:`spelled_out` does)."""
    kept = {at for found in _kept(text) for at in range(found.start(), found.end())}
    shown = []
    for at, c in enumerate(text):
        flat = unbroken(c)
        shown.append(code_point(c) if flat == c and at not in kept and _unseen(c) else flat)
    return shown


def json_escape(c: str) -> str:
    """``\\u200b``: a character as a JSON string may write it (a pair of them past U+FFFF)."""
    units = c.encode("utf-16-be", "surrogatepass")
    return "".join(f"\\u{int.from_bytes(units[i : i + 2], 'big'):04x}" for i in range(0, len(units), 2))
