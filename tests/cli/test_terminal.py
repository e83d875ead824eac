"""verifier_tui.commands.terminal: the one place the headless commands write through."""

from __future__ import annotations

import io
import json
import sys

import pytest

from verifier_tui.commands import terminal


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
