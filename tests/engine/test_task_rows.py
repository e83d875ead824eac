"""Parameterized tasks: a template task with tasks.jsonl, one row
per task. Each row is offered as task data; a case named after a row, or
naming one in task_id.txt, uses it; a case with none says so. Real folders,
the real runner."""

from __future__ import annotations

import json

import pytest

from tests.helpers.tasks import PY, make_task, write
from verifier_tui.engine.model import Outcome
from verifier_tui.engine.session import Options, SelectionError, Session
from verifier_tui.engine.task.discovery import resolve
from verifier_tui.engine.task.rows import read_task_rows

# The verifier hands back what it got, so each test reads task_data from the reward.
ECHO = """\
def verify(workspace, task_data):
    return {"reward": float(task_data.get("weight", -1)), "keys": float(len(task_data))}
"""
ROWS = [
    {"task_id": "light", "task_data": {"weight": 0.25}},
    {"task_id": "heavy", "task_data": {"weight": 0.75, "extra": "x"}},
    {"task_id": "flat", "weight": 0.5},  # NeMo Gym also takes the fields flat beside task_id
]


def parameterized(tmp_path, rows=ROWS, cases=("light", "named", "own", "orphan")):
    task_dir = make_task(tmp_path / "template", ECHO, cases={name: {"a.txt": "a"} for name in cases})
    (task_dir / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    if "named" in cases:
        (task_dir / "cases" / "named" / "task_id.txt").write_text("heavy\n")
    if "own" in cases:
        (task_dir / "cases" / "own" / "task_data.json").write_text('{"weight": 0.125}')
    return task_dir


def rewards_of(task_dir, **options):
    with Session(task_dir, Options(python=PY, **options)) as session:
        result = session.run()
    assert result.outcome is Outcome.REWARD_WRITTEN, result.stderr.text + str(result.start_error)
    return result


def test_rows_are_read_in_both_forms(tmp_path):
    rows = read_task_rows(parameterized(tmp_path) / "tasks.jsonl")
    assert rows.ids == ["light", "heavy", "flat"]
    assert rows.row("flat").data == {"weight": 0.5}
    assert rows.row("heavy").data == {"weight": 0.75, "extra": "x"}
    assert rows.problems == ()


def test_bad_lines_are_one_problem_and_the_good_rows_stay(tmp_path):
    path = write(
        tmp_path / "tasks.jsonl",
        "\n".join(
            [
                '{"task_id": "ok", "task_data": {"a": 1}}',
                "not json",
                '{"no_id": 1}',
                '{"task_id": "ok"}',
                '{"task_id": "bad", "task_data": [1]}',
                "",
            ]
        ),
    )
    rows = read_task_rows(path)
    assert rows.ids == ["ok"]
    (problem,) = rows.problems
    assert "line 2 is not valid JSON" in problem and "line 3 has no task_id" in problem
    assert "line 4 repeats task_id 'ok'" in problem and "and 1 more" in problem


def test_each_case_gets_the_row_it_names(tmp_path):
    task_dir = parameterized(tmp_path)
    cases = {c.name: c for c in resolve(task_dir).cases}
    assert (cases["light"].task_id, cases["named"].task_id, cases["own"].task_id) == ("light", "heavy", None)
    assert cases["light"].task_data == task_dir / "tasks.jsonl"
    assert rewards_of(task_dir, case="light").verdict.rewards == {"reward": 0.25, "keys": 1.0}
    assert rewards_of(task_dir, case="named").verdict.rewards == {"reward": 0.75, "keys": 2.0}
    assert rewards_of(task_dir, case="own").verdict.rewards == {"reward": 0.125, "keys": 1.0}
    result = rewards_of(task_dir, case="light")
    assert result.inputs.task_id == "light" and result.to_json()["task_id"] == "light"


def test_a_case_with_no_row_in_a_parameterized_task_says_so(tmp_path):
    task_dir = parameterized(tmp_path)
    with Session(task_dir, Options(python=PY, case="orphan")) as session:
        assert session.task_data is None
        notice = next(n for n in session.notices() if n.startswith("case orphan: no task data"))
        assert "task_data = {}" in notice and "task_id.txt" in notice
        assert session.run().verdict.rewards == {"reward": -1.0, "keys": 0.0}


def test_a_task_id_file_naming_no_row_is_a_problem(tmp_path):
    task_dir = parameterized(tmp_path)
    (task_dir / "cases" / "orphan" / "task_id.txt").write_text("nosuch")
    case = resolve(task_dir).case("orphan")
    assert case.task_id is None
    assert any("has no row with task_id 'nosuch'" in p and "light, heavy, flat" in p for p in case.problems)


def test_task_id_option_chooses_any_row(tmp_path):
    task_dir = parameterized(tmp_path)
    result = rewards_of(task_dir, task_id="flat", workspace=task_dir / "cases" / "own" / "workspace")
    assert result.verdict.rewards == {"reward": 0.5, "keys": 1.0}
    assert result.command[result.command.index("--task-id") + 1] == "flat"  # the reproduce command keeps the row
    with pytest.raises(SelectionError) as info:
        Session(task_dir, Options(task_id="nosuch"))
    assert "no row with task_id 'nosuch'" in str(info.value) and "light, heavy, flat" in str(info.value)


def test_task_data_naming_a_jsonl_of_several_rows_asks_for_one(tmp_path):
    task_dir = parameterized(tmp_path)
    with pytest.raises(SelectionError) as info:
        Session(task_dir, Options(task_data=task_dir / "tasks.jsonl"))
    message = str(info.value)
    assert "JSON Lines with 3 task rows" in message and "--task-id ID" in message
    assert "invalid JSON" not in message
    other = write(tmp_path / "more.jsonl", '{"task_id": "solo", "task_data": {"weight": 0.875}}\n')
    assert rewards_of(task_dir, task_data=other).verdict.rewards == {"reward": 0.875, "keys": 1.0}
    assert rewards_of(task_dir, task_data=task_dir / "tasks.jsonl", task_id="heavy").inputs.task_id == "heavy"


def test_no_case_and_no_row_says_so(tmp_path):
    task_dir = parameterized(tmp_path, cases=())
    with Session(task_dir, Options(python=PY)) as session:
        notice = next(n for n in session.notices() if n.startswith("no task data: the task is parameterized"))
        assert "--task-id ID" in notice and "light, heavy, flat" in notice


def test_an_edited_row_is_read_again_and_a_removed_one_is_said(tmp_path):
    task_dir = parameterized(tmp_path)
    with Session(task_dir, Options(python=PY, case="light")) as session:
        assert session.run().verdict.rewards["reward"] == 0.25
        rows = [dict(ROWS[0], task_data={"weight": 1.0}), *ROWS[1:]]
        (task_dir / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        assert session.run().verdict.rewards["reward"] == 1.0
        (task_dir / "tasks.jsonl").write_text(json.dumps(ROWS[1]) + "\n")
        gone = session.run()
    assert gone.outcome is Outcome.COULD_NOT_START
    assert "has no row with task_id 'light'" in gone.start_error


def test_the_users_tasks_jsonl_is_never_written(tmp_path):
    task_dir = parameterized(tmp_path)
    before = (task_dir / "tasks.jsonl").read_bytes()
    write(
        task_dir / "tests" / "verifier.py",
        """\
        import sys

        def verify(workspace, task_data):
            path = sys.argv[sys.argv.index("--task-data") + 1]
            open(path, "w").write("clobbered")
            return 1.0
    """,
    )
    rewards_of(task_dir, case="light")
    assert (task_dir / "tasks.jsonl").read_bytes() == before


def test_test_runs_every_case_with_its_row(tmp_path):
    import asyncio

    task_dir = parameterized(tmp_path, cases=("light", "named"))
    for name, rewards in (("light", {"reward": 0.25, "keys": 1.0}), ("named", {"reward": 0.75, "keys": 2.0})):
        write(task_dir / "cases" / name / "expected.json", json.dumps({"rewards": rewards}))
    with Session(task_dir, Options(python=PY)) as session:

        async def both():
            return await asyncio.gather(*(session.arun(session.spec_for_case(c)) for c in session.task.cases))

        results = asyncio.run(both())
    assert [r.expected_matched for r in results] == [True, True]
