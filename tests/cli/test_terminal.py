"""verifier_tui.commands.terminal: the one place the headless commands write through."""

from __future__ import annotations

import io
import json
import re
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.strategies import utf8_text
from verifier_tui.commands import terminal
from verifier_tui.words.text import NAME_MOST, one_line, one_name


@pytest.mark.parametrize(
    "raw, shown",
    [
        ("\x1b[31mred\x1b[0m", "red"),
        ("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"),
        ("\x1b]0;title\x07after", "after"),
        ("bell\x07 back\x08space \x00nul", "bell backspace nul"),
        ("c1 \x9b31m csi", "c1 31m csi"),
        ("tab\there\nnew line", "tab here\nnew line"),
        ("caf\u00e9 \u2713 \ufffd", "caf\u00e9 \u2713 \ufffd"),
        # a file name's bytes that are not UTF-8 (os.fsdecode), and a lone surrogate
        ("bad\udcff.txt", "bad\\xff.txt"),
        ("half \ud800 pair", "half <U+D800> pair"),
    ],
)
def test_plain_text_is_harmless_to_a_terminal(raw, shown):
    assert terminal.plain_text(raw) == shown


def test_json_is_strict_and_fits_the_stream(monkeypatch):
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(io.BytesIO(), encoding="ascii"))
    text = terminal.json_text({"a": float("nan"), "b": [float("inf")], "c": "caf\u00e9 \udcff"})
    text.encode("ascii")
    assert json.loads(text, parse_constant=lambda name: pytest.fail(name)) == {
        "a": "NaN",
        "b": ["Infinity"],
        "c": "caf\u00e9 \\xff",  # a file name's byte that is not UTF-8, as the text shows it
    }


def test_json_keeps_non_ascii_where_the_stream_takes_it(monkeypatch):
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(io.BytesIO(), encoding="utf-8"))
    assert terminal.json_text({"c": "caf\u00e9"}, indent=None) == '{"c": "caf\u00e9"}'


@pytest.mark.parametrize("encoding", ["utf-8", "ascii"])
def test_json_escapes_del_in_text_that_is_otherwise_ascii(monkeypatch, encoding):
    """DEL is written as ``\\u007f`` as the C1 controls are: it was passed raw
    whenever nothing else in the document was outside ASCII."""
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(io.BytesIO(), encoding=encoding))
    text = terminal.json_text({"s": "a\x7fb"}, indent=None)
    assert text == '{"s": "a\\u007fb"}'
    assert json.loads(text) == {"s": "a\x7fb"}
    assert terminal.plain_text(text) == text  # nothing left for the text filter to drop


@given(st.lists(st.characters() | st.integers(0xD800, 0xDFFF).map(chr), max_size=40).map("".join))
def test_json_text_is_plain_already(text):
    """``test JOB --json`` writes each trial's line as json_text made it,
    not through plain_text again: nothing in it is for that filter to change."""
    for indent in (None, 2):
        written = terminal.json_text({text: [text, 1.5]}, indent=indent)
        assert terminal.plain_text(written) == written


def test_error_is_one_line(monkeypatch):
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    terminal.error("first\nsecond \x1b[2Jthird\n")
    # as a table cell writes it (words.text.one_line): a name shows what it holds
    assert sys.stderr.getvalue() == "verifier-tui: first\\nsecond \\x1b[2Jthird\n"


@given(st.lists(st.characters() | st.integers(0xD800, 0xDFFF).map(chr), max_size=40).map("".join))
def test_shown_text_can_always_be_written_as_utf8(text):
    """Any str, lone surrogates too (a file name that is not UTF-8): a
    terminal cannot show one, and a screen that counted it as a cell was
    misaligned by what the terminal printed instead."""
    terminal.plain_text(text).encode("utf-8")
    one_line(text).encode("utf-8")


@given(utf8_text(max_size=40))
def test_a_name_on_one_line_keeps_to_its_line_and_never_acts_on_the_terminal(name):
    shown = one_line(name)
    assert len(shown.splitlines()) <= 1  # no line break of any kind: \n, \r, \u2028, \x85 ...
    assert not re.search("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]", shown)
    assert one_line("a\nb\t\u202ec") == "a\\nb\\t<U+202E>c"


@given(st.integers(NAME_MOST + 1, NAME_MOST + 200))
def test_a_name_just_over_its_room_keeps_most_of_itself(length):
    """A task's name of 61 characters, one over a name's room of 60, showed 24 of them, then
    ' … 29 characters left out … ', then 8: the marker took more room than the overflow. A name
    cut keeps within its room, says how much is left out, and shows what the marker leaves room for."""
    name = "".join(chr(ord("a") + i % 26) for i in range(length))
    shown = one_name(name)
    assert len(shown) <= NAME_MOST, shown
    head, said, tail = shown.split("…")
    left_out = int("".join(ch for ch in said if ch.isdigit()))
    kept = len(head.rstrip(" ")) + len(tail.lstrip(" "))  # the name is letters alone
    assert kept + left_out == length, shown
    assert kept >= NAME_MOST - len(f" … {length:,} characters left out … "), shown
    if length - NAME_MOST < len(" … 9 characters left out … "):
        assert kept >= NAME_MOST - len(f"…+{length}…"), shown  # the overflow is less than the words would take


def test_json_writes_a_file_names_undecodable_bytes_as_the_text_shows_them(monkeypatch):
    # A lone surrogate escape ("\udcff") is refused by strict JSON readers.
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(io.BytesIO(), encoding="utf-8"))
    text = terminal.json_text({"trigger": "workspace/bad\udcff.txt", "name": "caf\u00e9"}, indent=None)
    assert json.loads(text) == {"trigger": "workspace/bad\\xff.txt", "name": "caf\u00e9"}
    assert "\\udc" not in text
