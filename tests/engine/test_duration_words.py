"""Every duration and timeout the user reads goes through duration_text: a
timeout comes from files the tool did not write (task.toml, a trial's
config.json, an exception message), so any float must give words, never an
exception."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from verifier_tui.engine.model import duration_text


@pytest.mark.parametrize(
    "seconds, words",
    [
        (0.142, "142 ms"),
        (0.9994, "999 ms"),
        (0.9996, "1 s"),  # what rounds to 1000 ms is said in seconds
        (6.05, "6.05 s"),
        (12.34, "12.3 s"),
        (1800.0, "1800 s"),
        (1e306, "1e+306 s"),  # a thousand times it is inf
        (math.inf, "no limit"),
        (-3.0, "-3 s"),
    ],
)
def test_durations_read_in_one_style(seconds, words):
    assert duration_text(seconds) == words


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_any_float_is_said_in_a_few_characters(seconds):
    words = duration_text(seconds)
    assert words == "no limit" or words.endswith((" ms", " s"))
    assert len(words) <= 16  # "-1.23457e+306 s" at the most
