"""A multi-step task (task.toml ``[[steps]]``), as ``run``, ``test`` and
``explain`` show it: Harbor verifies each step with its own
``steps/<name>/tests`` laid over ``tests/`` and its own ``[steps.verifier]``,
which a run of the task's ``tests/`` alone is not.

Each test runs the real console script on a copy of Harbor 0.26's own
``tasks/multi-step`` (never the shared folder itself).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers.commands import no_traceback, run_tool
from tests.helpers.harbor import HARBOR_REAL

pytestmark = pytest.mark.skipif(HARBOR_REAL is None, reason="../shared/harbor-0.26 is not here")


@pytest.fixture
def multi_step(tmp_path) -> Path:
    """Harbor's multi-step task, copied, with one case whose workspace passes."""
    assert HARBOR_REAL is not None
    task = tmp_path / "multi-step"
    shutil.copytree(HARBOR_REAL / "tasks" / "multi-step", task, symlinks=True)
    case = task / "cases" / "hello"
    (case / "workspace").mkdir(parents=True)
    (case / "workspace" / "hello.txt").write_text("hello world\n")
    (case / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    return task


def _steps_note(notes: list[str]) -> str:
    said = [n for n in notes if "[[steps]]" in n]
    assert len(said) == 1, notes
    return said[0]


def _says_what_harbor_runs(note: str) -> None:
    assert "first, second" in note, note
    assert "steps/<name>/tests over tests/" in note, note
    assert "[steps.verifier]" in note, note
    assert "this run is tests/ with the task's [verifier]" in note, note


def test_run_of_a_multi_step_task_says_harbor_verifies_each_step(env, multi_step):
    done = run_tool(env, "run", multi_step, "--case", "hello", "--json")
    no_traceback(done)
    assert done.returncode == 0, done.stderr
    _says_what_harbor_runs(_steps_note(json.loads(done.stdout)["notices"]))
    text = run_tool(env, "run", multi_step, "--case", "hello")
    assert text.returncode == 0, text.stderr
    _says_what_harbor_runs(_steps_note([line for line in text.stdout.splitlines() if line.startswith("note:")]))


def test_test_and_explain_of_a_multi_step_task_say_it_too(env, multi_step):
    done = run_tool(env, "test", multi_step)
    no_traceback(done)
    assert done.returncode == 0, done.stdout + done.stderr
    _says_what_harbor_runs(_steps_note([line for line in done.stdout.splitlines() if "note" in line]))
    explained = run_tool(env, "explain", multi_step, "--json")
    no_traceback(explained)
    _says_what_harbor_runs(_steps_note(json.loads(explained.stdout)["notices"]))
