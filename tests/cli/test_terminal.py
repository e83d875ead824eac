"""verifier_tui.commands.terminal: the one place the headless commands write through."""

from __future__ import annotations

import io
import json
import re
import sys

import pytest
from hypothesis import given

from tests.strategies import utf8_text
from verifier_tui.commands import terminal
from verifier_tui.words.text import one_line


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
    ],
)
def test_plain_text_is_harmless_to_a_terminal(raw, shown):
    assert terminal.plain_text(raw) == shown


def test_json_is_strict_and_fits_the_stream(monkeypatch):
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(io.BytesIO(), encoding="ascii"))
    text = terminal.json_text({"a": float("nan"), "b": [float("inf")], "c": "caf\u00e9 \udcff"})
    text.encode("ascii")
    assert json.loads(text, parse_constant=lambda name: pytest.fail(name)) == {
        "a": "nan",
        "b": ["inf"],
        "c": "caf\u00e9 \udcff",
    }


def test_json_keeps_non_ascii_where_the_stream_takes_it(monkeypatch):
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(io.BytesIO(), encoding="utf-8"))
    assert terminal.json_text({"c": "caf\u00e9"}, indent=None) == '{"c": "caf\u00e9"}'


def test_error_is_one_line(monkeypatch):
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    terminal.error("first\nsecond \x1b[2Jthird\n")
    assert sys.stderr.getvalue() == "verifier-tui: first second third\n"


@given(utf8_text(max_size=40))
def test_a_name_on_one_line_keeps_to_its_line_and_never_acts_on_the_terminal(name):
    shown = one_line(name)
    assert len(shown.splitlines()) <= 1  # no line break of any kind: \n, \r, \u2028, \x85 ...
    assert not re.search("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]", shown)
    assert one_line("a\nb\t\u202ec") == "a\\nb\\t<U+202E>c"
