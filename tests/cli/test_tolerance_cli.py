"""test and run with expected.json's "tolerance"."""

from __future__ import annotations

import json
from xml.etree import ElementTree

from tests.helpers.commands import run_tool
from tests.helpers.tasks import PY, make_task, write

ROUNDED = "def verify(workspace):\n    return 0.1 + 0.2\n"


def rounded_task(root, expected: str):
    task_dir = make_task(root, ROUNDED, cases={"a": {"x.txt": "x\n"}})
    write(task_dir / "cases" / "a" / "expected.json", expected)
    return task_dir


def test_test_says_a_near_miss_is_float_rounding_and_passes_with_a_tolerance(env, tmp_path):
    task_dir = rounded_task(tmp_path / "tasks" / "sum", '{"rewards": {"reward": 0.3}}')
    done = run_tool(env, "test", task_dir, "--python", PY)
    assert done.returncode == 1
    assert (
        "a: only float rounding: reward 0.30000000000000004 vs 0.3 (off by 5.6e-17); expected.json compares "
        'exactly unless it gives a tolerance, such as "tolerance": 1e-9'
    ) in done.stdout.splitlines()
    write(task_dir / "cases" / "a" / "expected.json", '{"rewards": {"reward": 0.3}, "tolerance": 1e-9}')
    done = run_tool(env, "test", task_dir, "--python", PY)
    assert done.returncode == 0, done.stdout
    assert '{"reward": 0.3} ± 1e-09' in done.stdout and "1 passed, 0 failed" in done.stdout


def test_test_says_a_tolerance_as_written(env, tmp_path):
    # 1e-320 was said "± 9.99989e-321", six digits of the float it reads as.
    task_dir = rounded_task(tmp_path / "tasks" / "sum", '{"rewards": {"reward": 0.3}, "tolerance": 1e-320}')
    done = run_tool(env, "test", task_dir, "--python", PY)
    assert '{"reward": 0.3} ± 1e-320' in done.stdout, done.stdout


def test_run_notes_the_near_miss(env, tmp_path):
    task_dir = rounded_task(tmp_path / "tasks" / "sum", '{"rewards": {"reward": 0.3}}')
    lines = run_tool(env, "run", task_dir, "--case", "a", "--python", PY).stdout.splitlines()
    at = lines.index('expected {"rewards": {"reward": 0.3}}: DID NOT MATCH')
    assert lines[at + 1].startswith("note: only float rounding: reward 0.30000000000000004 vs 0.3")


def test_an_unusable_tolerance_is_one_clear_line(env, tmp_path):
    task_dir = rounded_task(tmp_path / "tasks" / "sum", '{"rewards": {"reward": 0.3}, "tolerance": -1}')
    done = run_tool(env, "test", task_dir, "--python", PY)
    assert done.returncode == 1
    assert 'expected.json: "tolerance" must be a number, 0 or more and finite, such as 1e-9 (not -1)' in done.stdout


def test_a_tolerance_too_large_for_a_float_is_one_clear_line(env, tmp_path):
    """A tolerance of 10**400 passed the check (0 <= it < inf) and float()
    raised OverflowError: test died with a traceback."""
    huge = "1" + "0" * 400
    task_dir = rounded_task(tmp_path / "tasks" / "sum", '{"rewards": {"reward": 0.3}, "tolerance": %s}' % huge)
    done = run_tool(env, "test", task_dir, "--python", PY)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert 'expected.json: "tolerance" must be a number, 0 or more and finite, such as 1e-9 (not 1000' in done.stdout


#: A reward key that would forge a line, clear the screen and reverse what follows, were it printed raw.
HOSTILE_KEY = "x\nforged line\x1b[2J\u202e"


def test_a_near_miss_names_a_hostile_reward_key_as_every_listing_does(env, tmp_path):
    """The near-miss note put the reward key raw: a key holding a line break, an escape and a bidi
    override forged a line of ``run``, of ``test`` and of its JUnit report. It is named as every
    listing names a key, on its line, nothing in it acting on the terminal."""
    task_dir = make_task(
        tmp_path / "tasks" / "sum",
        f"def verify(workspace):\n    return {{{HOSTILE_KEY!r}: 0.1 + 0.2}}\n",
        cases={"a": {"x.txt": "x\n"}},
    )
    write(task_dir / "cases" / "a" / "expected.json", json.dumps({"rewards": {HOSTILE_KEY: 0.3}}))
    junit = tmp_path / "junit.xml"
    said = [
        run_tool(env, "run", task_dir, "--case", "a", "--python", PY).stdout,
        run_tool(env, "test", task_dir, "--python", PY, "--junit", junit).stdout,
        ElementTree.parse(junit).getroot().findtext(".//failure") or "",
    ]
    for text in said:
        near = [line for line in text.splitlines() if "only float rounding" in line]
        assert near and all('"x\\nforged line\\x1b[2J<U+202E>" 0.30000000000000004' in line for line in near), text
        assert not any(line.lstrip().startswith("forged line") for line in text.splitlines()), text
        assert "\x1b" not in text and "\u202e" not in text, text
