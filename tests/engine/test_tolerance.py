"""expected.json's "tolerance": the one comparison test, the TUI's
case marks and the pytest plugin share accepts rewards within it; exact when
there is none, with a word when the only difference is float rounding."""

from __future__ import annotations

import json

import pytest

from tests.helpers.tasks import PY, make_task, write
from verifier_tui.engine.session import Options, Session
from verifier_tui.engine.task.cases import read_expected

ROUNDED = "def verify(workspace):\n    return {'reward': 0.1 + 0.2, 'format': 1.0}\n"


def task_expecting(tmp_path, expected: str, verifier: str = ROUNDED):
    task_dir = make_task(tmp_path / "t", verifier, cases={"a": {"x.txt": "x\n"}})
    write(task_dir / "cases" / "a" / "expected.json", expected)
    return task_dir


def run_case(task_dir):
    with Session(task_dir, Options(python=PY, case="a")) as session:
        return session.run()


def test_exact_by_default_and_a_near_miss_is_named(tmp_path):
    result = run_case(task_expecting(tmp_path, '{"rewards": {"reward": 0.3, "format": 1}}'))
    assert result.expected_matched is False
    assert result.near_misses() == {"reward": (0.30000000000000004, 0.3)}


def test_a_tolerance_accepts_float_rounding(tmp_path):
    result = run_case(task_expecting(tmp_path, '{"rewards": {"reward": 0.3, "format": 1}, "tolerance": 1e-9}'))
    assert result.expected_matched is True
    assert result.to_json()["expected"] == {"rewards": {"reward": 0.3, "format": 1}, "tolerance": 1e-9}


def test_a_tolerance_is_absolute_and_bounds_every_reward(tmp_path):
    result = run_case(task_expecting(tmp_path, '{"rewards": {"reward": 0.25, "format": 1}, "tolerance": 0.01}'))
    assert result.expected_matched is False
    assert result.near_misses() == {}  # a tolerance was given: nothing to suggest


def test_a_real_difference_is_no_near_miss(tmp_path):
    result = run_case(task_expecting(tmp_path, '{"rewards": {"reward": 0.3, "format": 0.5}}'))
    assert result.expected_matched is False
    assert result.near_misses() == {}  # a tolerance would not make it match


@pytest.mark.parametrize(
    "value, words",
    [
        ("-1e-9", "0 or more"),
        ("NaN", "finite"),
        ("Infinity", "finite"),
        ('"1e-9"', "must be a number"),
        ("true", "must be a number"),
        pytest.param("1" + "0" * 400, "finite", id="int-past-float"),  # float() of it raised OverflowError
    ],
)
def test_an_unusable_tolerance_is_said_clearly(tmp_path, value, words):
    path = write(tmp_path / "expected.json", f'{{"rewards": {{"reward": 0.3}}, "tolerance": {value}}}')
    expectation, problem = read_expected(path)
    assert expectation is None
    assert problem.startswith('expected.json: "tolerance" must be a number, 0 or more and finite, such as 1e-9')
    assert words in problem and json.dumps(json.loads(value))[:60] in problem


def test_a_tolerance_of_many_digits_is_quoted_short(tmp_path):
    """``"tolerance": 10**400`` was quoted with all its 401 digits, a line of
    ~490 characters; it is cut as the verdict cuts a long number (``1000…``)."""
    huge = "1" + "0" * 400
    path = write(tmp_path / "expected.json", f'{{"rewards": {{"reward": 0.3}}, "tolerance": {huge}}}')
    _, problem = read_expected(path)
    assert problem.endswith(f"(not {huge[:60]}…)")
    assert len(problem) < 200


def test_a_tolerance_without_rewards_is_said(tmp_path):
    path = write(tmp_path / "expected.json", '{"exit_code": 1, "tolerance": 0.1}')
    assert read_expected(path) == (None, 'expected.json: "tolerance" applies to "rewards", and there are none')


@pytest.mark.parametrize(
    "text, words",
    [
        ('{"rewards": {"reward": NaN}}', '"rewards" must be an object of finite numbers, at least one'),
        ('{"rewards": {"reward": 1e999}}', '"rewards" must be an object of finite numbers, at least one'),
        ('{"rewards": {}}', '"rewards" must be an object of finite numbers, at least one'),
        ('{"exit_code": -1}', '"exit_code" must be an integer from 0 to 255'),
        ('{"exit_code": 99999999999999999999999}', '"exit_code" must be an integer from 0 to 255'),
    ],
)
def test_an_expectation_no_run_can_meet_is_said(tmp_path, text, words):
    """The runner never writes NaN, inf or an empty dict, and an exit status
    is 0 to 255: such a case would fail for ever, whatever the verifier did."""
    assert read_expected(write(tmp_path / "expected.json", text)) == (None, f"expected.json: {words}")


def test_an_expected_int_too_large_for_a_float_is_an_expectation(tmp_path):
    """A verify returning {"reward": 10**400} writes it to reward.json, and it
    is Harbor's reward (its check takes any int): expected.json holding it was
    refused as "must be an object of finite numbers", which an int is."""
    path = write(tmp_path / "expected.json", json.dumps({"rewards": {"reward": 10**400}}))
    expectation, problem = read_expected(path)
    assert problem is None and expectation is not None and expectation.rewards == {"reward": 10**400}


@pytest.mark.parametrize("tolerance", ["", ', "tolerance": 1e-9'], ids=["exact", "tolerance"])
def test_an_int_reward_past_any_float_matches_itself_with_or_without_a_tolerance(tmp_path, tolerance):
    """With a tolerance, two equal 400-digit rewards were both made inf, and
    inf - inf is nan: the case expecting exactly what verify returned failed."""
    huge = "1" + "0" * 400
    verifier = "def verify(workspace):\n    return {'reward': 10 ** 400}\n"
    result = run_case(task_expecting(tmp_path, '{"rewards": {"reward": %s}%s}' % (huge, tolerance), verifier))
    assert result.expected_matched is True, result.to_json()
