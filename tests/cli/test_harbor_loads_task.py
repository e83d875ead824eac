"""A task whose files Harbor 0.26.0's ``Task`` refuses to load (``harbor/models/task/task.py``:
``_validate_input_paths``, ``_validate_tests``, the instruction ``__init__`` reads), as every
headless face says it: a task Harbor would refuse, exit 2, the run still made.

Each test runs the real console script on a private copy of a bundled example.
"""

from __future__ import annotations

import json

from tests.helpers.commands import no_traceback, run_tool, start_watch, stop

REFUSED = "Harbor would refuse to run this task"


def _refused_on_every_face(env, task, why: str) -> None:
    """run --json, test, explain --json all say Harbor would refuse ``task`` for ``why``; run and test exit 2."""
    done = run_tool(env, "run", task, "--case", "correct", "--json")
    no_traceback(done)
    assert done.returncode == 2, done.stdout + done.stderr
    data = json.loads(done.stdout)
    assert why in (data["harbor_refuses_task"] or ""), data["harbor_refuses_task"]
    assert data["rewards"] == {"reward": 1.0}  # the run still happened
    tested = run_tool(env, "test", task)
    no_traceback(tested)
    assert tested.returncode == 2, tested.stdout + tested.stderr
    said = tested.stdout + tested.stderr
    assert REFUSED in said and why in said and "correct: not run" in said, said
    explained = run_tool(env, "explain", task, "--json")
    no_traceback(explained)
    assert any(REFUSED in n and why in n for n in json.loads(explained.stdout)["notices"]), explained.stdout


def test_a_task_without_instruction_md_is_one_harbor_refuses(env, example):
    """hello-file with instruction.md deleted: Task.__init__ raises FileNotFoundError ("Task
    directory ... is missing instruction.md"), even with verification disabled, so no trial of it
    gets a verdict; run and test scored it as before, exit 0."""
    task = example("hello-file")
    (task / "instruction.md").unlink()
    _refused_on_every_face(env, task, "no instruction.md")


def test_a_parameterized_template_needs_no_instruction_md(env, example):
    """greeting-rows keeps instruction.template.md, which NeMo Gym renders into each row's own
    task folder: Harbor loads those, never the template, so the template is not refused."""
    done = run_tool(env, "run", example("greeting-rows"), "--case", "ada", "--json")
    no_traceback(done)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["harbor_refuses_task"] is None


def test_watch_reads_the_task_again_when_instruction_md_comes_and_goes(env, example):
    """watch on hello-file, instruction.md deleted then written again: each is a run that says
    whether Harbor would refuse the task, not a verdict kept until another file is saved."""
    task = example("hello-file")
    proc, reader = start_watch(env, task, "--case", "correct")
    try:
        assert "reward 1" in reader.next_run()
        text = (task / "instruction.md").read_text()
        (task / "instruction.md").unlink()
        gone = reader.next_run()
        (task / "instruction.md").write_text(text)
        back = reader.next_run()
    finally:
        stop(proc)
    assert "Harbor would refuse" in gone, gone
    assert "Harbor would refuse" not in back and "reward 1" in back, back
