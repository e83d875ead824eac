"""Every reader of a file the tool did not write, on anything at all in that
file's place: any bytes (a prefix of the real file, JSON of any shape, deep
nesting, broken UTF-8) or another kind of file (a FIFO, a folder, a link to
nothing, a device); and a genuine Harbor ``result.json`` with anything in
place of its fields and of its ``step_results`` items. Each gives a value, or
a problem in one line; none raises, none waits (``bounded`` fails a read that
does not return), and none loses a trial."""

from __future__ import annotations

import copy
import hashlib
import json
import math
import os
import re
import shutil
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.helpers.harbor import HARBOR_REAL, make_trial
from tests.helpers.hostile import ANY_FIELD, JSON_VALUES, bounded, contents, one_line, put
from tests.helpers.tasks import make_task
from tests.strategies import utf8_text
from verifier_tui.engine import procfs, untrusted
from verifier_tui.engine.diagnosis import imported_names, shadows
from verifier_tui.engine.harbor.compare import Compared, compare
from verifier_tui.engine.harbor.folders import HarborFolderError, open_harbor, select_trial
from verifier_tui.engine.harbor.overview import read_jobs, read_overviews, read_trial_row
from verifier_tui.engine.harbor.reading import EARLIEST_YEAR, FUTURE_SLACK_S
from verifier_tui.engine.harbor.trial_files import VIEWS, conversation, file_view
from verifier_tui.engine.harbor.walkthrough import trial_entries, trial_json, walk_trial
from verifier_tui.engine.readback import Explanation
from verifier_tui.engine.sandbox.cgroup import folder_for, hierarchies, mounts
from verifier_tui.engine.suite import collect
from verifier_tui.engine.task.cases import read_expected
from verifier_tui.engine.task.discovery import read_task_config
from verifier_tui.engine.task.rows import choose_row, read_task_rows
from verifier_tui.engine.verdict import harbor_verdict, read_reward_files
from verifier_tui.words.resolution import binding_lines, plain, sys_path_lines

SETTINGS = settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture(scope="module")
def trial_folder(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("runs")
    task = make_task(root / "tasks" / "demo", "def verify(workspace):\n    return 1.0\n")
    return make_trial(
        root / "jobs" / "j" / "demo__aaaaaaa",
        task=task,
        rewards={"reward": 1.0},
        verifier_files={"reward.txt": "1.0\n", "test-stdout.txt": "ran\n"},
        app={"hello.txt": "hi"},
    )


TRIAL_FILES = [
    "result.json",
    "config.json",
    "lock.json",
    "trial.log",
    "exception.txt",
    "artifacts/manifest.json",
    "verifier/test-stdout.txt",
    "verifier/reward.txt",
    "verifier/reward.json",
    "agent/exit-code.txt",
    "agent/oracle.txt",
    "agent/trajectory.json",
]


@SETTINGS
@given(data=st.data())
def test_a_trial_with_anything_in_place_of_one_file_reads_without_raising(data, trial_folder, tmp_path_factory):
    trial_path = tmp_path_factory.mktemp("trial") / "demo__aaaaaaa"
    shutil.copytree(trial_folder, trial_path, symlinks=True)
    name = data.draw(st.sampled_from(TRIAL_FILES))
    real = (trial_folder / name).read_bytes() if (trial_folder / name).is_file() else b""
    put(trial_path / name, data.draw(contents(real)))
    try:
        opened, step = bounded(open_harbor, trial_path)
        trial, step = select_trial(opened, None, step)
    except HarborFolderError as exc:  # "this is not a trial": one line for the user
        one_line(str(exc))
        return
    for note in trial.notes:
        one_line(note)
    walk = bounded(walk_trial, trial, step, task_dir=trial_folder.parent.parent.parent / "tasks" / "demo")
    json.dumps(trial_json(walk))  # what --json prints
    for key, _title in VIEWS:  # each file the trial screen shows on its key
        view = bounded(file_view, walk, key)
        assert view.lines and all(isinstance(text, str) for _kind, text in view.lines), view


#: Where in a trial's config (config.json, and result.json's copy of it) the tool reads a field.
CONFIG_FIELDS = [
    ("task",),
    ("task", "path"),
    ("task", "name"),
    ("trial_name",),
    ("agent",),
    ("agent", "name"),
    ("agent", "model_name"),
    ("agents",),
    ("environment", "env"),
    ("verifier", "env"),
    ("verifier",),
    ("timeout_multiplier",),
    ("verifier_timeout_multiplier",),
]


@SETTINGS
@given(data=st.data())
def test_a_trial_config_with_anything_in_any_field_reads_without_raising(data, trial_folder, tmp_path_factory):
    """Harbor's config of the trial, another machine's file: any value in any field the tool reads
    (the task's path and name, the agent's, the environment's and verifier's env, the timeouts)
    gives the trial's screen, its --json and its row of the overview, each note one line."""
    trial_path = tmp_path_factory.mktemp("trial") / "demo__aaaaaaa"
    shutil.copytree(trial_folder, trial_path, symlinks=True)
    edits = data.draw(st.lists(st.tuples(st.sampled_from(CONFIG_FIELDS), ANY_FIELD), min_size=1, max_size=3))
    for name in ("config.json", "result.json"):
        document = json.loads((trial_path / name).read_text())
        config = document if name == "config.json" else document.get("config")
        for keys, value in edits if isinstance(config, dict) else []:
            table = config
            for key in keys[:-1]:
                table = table.setdefault(key, {}) if isinstance(table.get(key, {}), dict) else {}
            table[keys[-1]] = copy.deepcopy(value)  # a value drawn twice, set inside itself, is no JSON
        (trial_path / name).write_text(json.dumps(document))
    opened, step = bounded(open_harbor, trial_path)
    trial, step = select_trial(opened, None, step)
    walk = bounded(walk_trial, trial, step, task_dir=trial_folder.parent.parent.parent / "tasks" / "demo")
    for note in (*trial.notes, *walk.notes):
        one_line(note)
    json.dumps(trial_json(walk))
    for key, _title in VIEWS:
        bounded(file_view, walk, key)
    one_line(bounded(read_trial_row, trial_path).problem)


@SETTINGS
@given(data=st.data())
def test_a_trial_with_anything_in_place_of_one_file_is_accounted_for_in_its_jobs_overview_and_comparison(
    data, trial_folder, tmp_path_factory
):
    """The job overview and ``compare`` read every trial of a job: one with
    anything in place of one of its files is a row, or a note saying why it is
    left out, never lost, and nothing they print raises or breaks a line."""
    job = tmp_path_factory.mktemp("job") / "j"
    for trial in ("demo__aaaaaaa", "demo__bbbbbbb"):
        shutil.copytree(trial_folder, job / trial, symlinks=True)
    name = data.draw(st.sampled_from(TRIAL_FILES))
    real = (trial_folder / name).read_bytes() if (trial_folder / name).is_file() else b""
    put(job / "demo__bbbbbbb" / name, data.draw(contents(real)))
    ours, theirs = bounded(read_overviews, job, job)
    assert not any("\n" in note for note in ours.notes), ours.notes  # each note a line of its own
    named = {note.split(":")[0] for note in ours.notes}
    rows = {row.name for row in ours.rows}
    assert rows | named >= {"demo__aaaaaaa", "demo__bbbbbbb"}, "a trial was lost"
    # a trial whose result.json is of no use is counted (cannot be read, not finished) and said why, by name
    assert {row.name for row in ours.rows if row.result_unusable} <= named, ours.notes
    assert ours.total == len(rows) and sum(n for _outcome, n in ours.counts()) == ours.total
    json.dumps(ours.to_json())
    comparison = compare(Compared(job, "A", ours), Compared(job, "B", theirs))
    for task in comparison.tasks:
        assert not any("\n" in cell for cell in (task.task, *task.cells())), task.cells()
    json.dumps(comparison.to_json())


ATIF_PARTS = st.lists(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["text", "image"]) | ANY_FIELD},
        optional={"text": ANY_FIELD, "source": ANY_FIELD},
    ),
    max_size=3,
)
ATIF_STEPS = st.fixed_dictionaries(
    {},
    optional={
        "step_id": ANY_FIELD,
        "source": ANY_FIELD,
        "timestamp": ANY_FIELD,
        "message": ANY_FIELD | ATIF_PARTS,
        "reasoning_content": ANY_FIELD,
        "tool_calls": ANY_FIELD
        | st.lists(st.fixed_dictionaries({}, optional={"function_name": ANY_FIELD, "arguments": ANY_FIELD})),
        "observation": ANY_FIELD
        | st.fixed_dictionaries(
            {},
            optional={
                "results": ANY_FIELD
                | st.lists(st.fixed_dictionaries({}, optional={"source_call_id": ANY_FIELD, "content": ATIF_PARTS}))
            },
        ),
        "metrics": ANY_FIELD | st.fixed_dictionaries({}, optional={"prompt_tokens": ANY_FIELD}),
    },
)


@settings(SETTINGS, max_examples=50)
@given(
    steps=st.lists(ATIF_STEPS | ANY_FIELD, max_size=3),
    agent=ANY_FIELD | st.fixed_dictionaries({}, optional={"name": ANY_FIELD, "model_name": ANY_FIELD}),
    final=ANY_FIELD,
)
@example(steps=[{"tool_calls": 7, "observation": {"results": 7}}], agent={}, final=None)  # numbers are not iterable
def test_a_trajectory_of_any_shape_is_shown_as_lines(steps, agent, final):
    """The agent writes trajectory.json: any value in any field of ATIF's shape is shown or passed over."""
    lines = conversation({"schema_version": "ATIF-v1.6", "agent": agent, "steps": steps, "final_metrics": final})
    assert lines and all(isinstance(kind, str) and isinstance(text, str) for kind, text in lines)


@SETTINGS
@given(found=contents(b'{"reward": 1.0}'), which=st.sampled_from(["reward.json", "reward.txt"]))
def test_reward_files_give_harbors_verdict_whatever_they_hold(found, which, tmp_path_factory):
    folder = tmp_path_factory.mktemp("rewards")
    put(folder / which, found)
    verdict = bounded(harbor_verdict, folder)
    assert (verdict.rewards is None) != (verdict.error is None)
    bounded(read_reward_files, folder)


@SETTINGS
@given(found=contents(b'version = "1.0"\n[verifier]\ntimeout_sec = 30\n'))
def test_task_toml_gives_a_config_or_a_refusal(found, tmp_path_factory):
    folder = tmp_path_factory.mktemp("task")
    put(folder / "task.toml", found)
    config = bounded(read_task_config, folder)
    for problem in config.problems:
        one_line(problem)


@SETTINGS
@given(found=contents(b"import rich\nfrom jinja2 import Template\n\ndef verify(workspace):\n    import numpy\n"))
@example(found=("bytes", b"import rich\nfrom jinja2 import Template\n"))
def test_the_tasks_python_files_give_the_names_they_import(found, tmp_path_factory):
    folder = tmp_path_factory.mktemp("tests")
    put(folder / "verifier.py", found)
    names = bounded(imported_names, folder / "verifier.py", [folder])
    assert all(name.isidentifier() for name in names)
    if found == ("bytes", b"import rich\nfrom jinja2 import Template\n"):
        assert names == ["rich", "jinja2"]


@SETTINGS
@given(found=contents(b'{"rewards": {"reward": 1.0}, "tolerance": 0.01}'))
def test_expected_json_gives_an_expectation_or_a_problem(found, tmp_path_factory):
    folder = tmp_path_factory.mktemp("case")
    put(folder / "expected.json", found)
    expectation, problem = bounded(read_expected, folder / "expected.json")
    one_line(problem)
    if found[0] not in ("bytes", "missing"):
        assert expectation is None and problem, "a FIFO, folder or device is said, never taken for no file"
    if expectation is not None:  # only what some run can give: else the case could never pass
        rewards = expectation.rewards
        assert rewards is None or (rewards and all(math.isfinite(v) for v in rewards.values()))
        assert expectation.exit_code is None or 0 <= expectation.exit_code <= 255


@SETTINGS
@given(found=contents(b'{"trial_name": "t", "task": {"path": "tasks/t"}}'), writer=st.sampled_from([None, "Harbor"]))
def test_the_one_json_reader_gives_a_state_and_says_any_problem_in_a_line(found, writer, tmp_path_factory):
    """Harbor's files and the others are read by one reader; only a file whose
    writer can be killed mid-write (Harbor) is said to be cut short."""
    folder = tmp_path_factory.mktemp("json")
    put(folder / "config.json", found)
    read = bounded(untrusted.read_json, folder / "config.json", 4096, shape=dict, writer=writer, beneath=folder)
    assert read.state in ("ok", "missing", "truncated", "invalid", "unreadable")
    assert (read.problem is None) == read.ok and (not read.ok or isinstance(read.data, dict))
    one_line(read.problem)
    assert writer is not None or read.state != "truncated"


@SETTINGS
@given(found=contents(b'{"task_id": "a", "task_data": {"x": 1}}\n{"task_id": "b"}\n'))
def test_tasks_jsonl_gives_rows_or_problems(found, tmp_path_factory):
    folder = tmp_path_factory.mktemp("rows")
    put(folder / "tasks.jsonl", found)
    rows = bounded(read_task_rows, folder / "tasks.jsonl")
    for problem in rows.problems:
        one_line(problem)
    assert all(isinstance(row.task_id, str) for row in rows.rows)


@SETTINGS
@given(
    found=contents(b'{"task_id": "a", "task_data": {"x": 1}}\n{"task_id": "a"}\n'),
    task_id=st.sampled_from([None, "a", "b"]),
)
def test_a_file_of_rows_given_as_task_data_gives_a_row_or_one_line_saying_why(found, task_id, tmp_path_factory):
    folder = tmp_path_factory.mktemp("rows")
    put(folder / "other.jsonl", found)
    try:
        chosen, problems = bounded(choose_row, folder / "other.jsonl", task_id)
    except ValueError as exc:
        one_line(str(exc.args[0]))
        return
    assert task_id in (None, chosen) and read_task_rows(folder / "other.jsonl").row(chosen) is not None
    for problem in problems:
        one_line(problem)
        assert problem.startswith("other.jsonl: ")


# --------------------------------------------------------------------------
# A genuine result.json with anything in its fields and its step_results.

GENUINE = {"oracle-pass": "hello-file", "multi-step": "multi-step"}  # job: its task
#: The fields of a TrialResult the tool reads, and of each of its step_results.
RESULT_KEYS = [
    "step_results",
    "verifier_result",
    "exception_info",
    "trial_name",
    "task_name",
    "trial_uri",
    "agent_info",
    "agent_result",
    "started_at",
    "finished_at",
    "environment_setup",
    "agent_setup",
    "agent_execution",
    "verifier",
    "verifier_environment_mode",
    "config",
]
STEP_KEYS = ["step_name", "verifier_result", "exception_info", "agent_result", "agent_execution", "verifier"]
#: Step names no folder of steps/ can have, and ones that reorder or break a line.
STEP_NAMES = st.sampled_from(["first", "second", "", ".", "..", "a/b", "../../etc", "x\x00y", "\u202estep", "a\nb"])
ANYTHING = JSON_VALUES | STEP_NAMES | st.sampled_from([{"rewards": {"reward": "high"}}, {"exception_type": 5}, ["x"]])


def step_items(genuine: list) -> st.SearchStrategy:
    """An item of step_results: Harbor's own, one of its fields replaced, or anything."""
    real = st.sampled_from(genuine) if genuine else st.nothing()
    edited = st.tuples(real, st.sampled_from(STEP_KEYS), ANYTHING).map(lambda t: {**t[0], t[1]: t[2]})
    return st.one_of(real, edited, ANYTHING)


@pytest.fixture(scope="module")
def genuine_jobs(tmp_path_factory) -> Path:
    if HARBOR_REAL is None:
        pytest.skip("../shared/harbor-0.26 is not here")
    target = tmp_path_factory.mktemp("genuine") / "harbor-0.26"
    shutil.copytree(HARBOR_REAL, target)
    return target


def steps_harbor_writes(items) -> list[str]:
    """The step names of the items Harbor would have written, first of each name: what must be read."""
    names: list[str] = []
    for item in items if isinstance(items, list) else []:
        name = item.get("step_name") if isinstance(item, dict) else None
        if isinstance(name, str) and name not in ("", ".", "..", *names) and "/" not in name and "\x00" not in name:
            names.append(name)
    return names


@settings(SETTINGS, max_examples=60)
@given(data=st.data())
def test_a_result_json_of_any_shape_loses_no_trial_and_no_step(data, genuine_jobs, tmp_path_factory):
    job = data.draw(st.sampled_from(sorted(GENUINE)))
    source = next(p for p in (genuine_jobs / "jobs" / job).iterdir() if p.is_dir())
    job_dir = tmp_path_factory.mktemp("jobs") / job
    shutil.copytree(genuine_jobs / "jobs" / job, job_dir)
    trial_path = job_dir / source.name
    result = json.loads((trial_path / "result.json").read_text())
    for key in data.draw(st.lists(st.sampled_from(RESULT_KEYS), min_size=1, max_size=3, unique=True)):
        if key == "step_results":
            result[key] = data.draw(ANYTHING | st.lists(step_items(result.get(key) or []), max_size=4))
        else:
            result[key] = data.draw(ANYTHING)
    (trial_path / "result.json").write_text(json.dumps(result))

    opened, step = bounded(open_harbor, trial_path)
    trial, step = select_trial(opened, None, step)
    for note in trial.notes:
        one_line(note)
    items = result["step_results"]
    wanted = steps_harbor_writes(items)
    assert [v.name for v in trial.steps if v.recorded and v.name is not None] == wanted, "a step Harbor wrote was lost"
    said = " ".join(trial.notes)
    passed_by = len(items) - len(wanted) if isinstance(items, list) else 0
    assert not passed_by or "step_results[" in said or "more things" in said, "an item passed by without a word"
    assert trial.steps, "a trial with nothing to show"
    task_dir = genuine_jobs / "tasks" / GENUINE[job]
    for view in trial.steps:
        walk = bounded(walk_trial, trial, view.name, task_dir=task_dir)
        json.dumps(trial_json(walk))  # what --json prints
        for note in walk.notes:
            one_line(note)
    bounded(trial_entries, trial)
    row = bounded(read_trial_row, trial_path)
    one_line(row.problem)
    with bounded(collect, [job_dir]) as collection:
        replays = [item for group in collection.groups for item in group.cases]
    assert replays and all(item.trial.path == trial_path for item in replays), "test JOB left the trial out"


#: Any time at all, as result.json may hold one: year 1 to 9999, to the microsecond.
ANY_TIME = st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59, 999999))


@settings(SETTINGS, max_examples=60)
@example(started=datetime(1, 1, 1), finished=datetime(9999, 12, 31, 23, 59, 59))
@example(started=datetime(2026, 12, 1, 3, 36, 18), finished=datetime(2026, 12, 1, 3, 36, 17))
@given(started=ANY_TIME, finished=ANY_TIME)
def test_a_verifier_phase_s_dates_give_a_time_a_clock_measured_or_are_said_unusable(
    started, finished, genuine_jobs, tmp_path_factory
):
    """result.json's verifier dates, whatever they are: year 1 to year 9999 said "the verifier
    phase took 3.16e+11 s" (run TRIAL, --json, the trial's screen), and a phase that finished
    before it started said nothing at all. A time is said only when a clock could have measured
    it (within Harbor's years, up to now), else that the dates are not usable and why."""
    job_dir = tmp_path_factory.mktemp("jobs") / "oracle-pass"
    shutil.copytree(genuine_jobs / "jobs" / "oracle-pass", job_dir)
    trial_path = next(p for p in job_dir.iterdir() if p.is_dir())
    result = json.loads((trial_path / "result.json").read_text())
    result["verifier"] = {"started_at": started.isoformat(), "finished_at": finished.isoformat()}
    (trial_path / "result.json").write_text(json.dumps(result))

    opened, step = bounded(open_harbor, trial_path)
    trial, step = select_trial(opened, None, step)
    walk = bounded(walk_trial, trial, step, task_dir=genuine_jobs / "tasks" / "hello-file")
    took = walk.facts.verifier_duration_s
    said = [line for line in walk.facts.sentences() if "verifier phase" in line]
    assert len(said) == 1, said
    one_line(said[0])
    latest = datetime.now(timezone.utc).replace(tzinfo=None) + timedelta(seconds=FUTURE_SLACK_S)
    usable = started.year >= EARLIEST_YEAR and started <= finished <= latest
    if usable:
        assert took == (finished - started).total_seconds() and said[0].startswith("the verifier phase took "), said
    else:
        assert took is None and "dates are not usable" in said[0], said
    sandbox = json.loads(json.dumps(trial_json(walk)))["sandbox"]  # what --json prints
    assert sandbox["verifier_duration_s"] == took and said[0] in sandbox["facts"]


@settings(SETTINGS, max_examples=60)
@given(task_name=ANYTHING, task=st.none() | ANYTHING)
def test_a_killed_trial_takes_the_name_its_task_recorded(task_name, task, genuine_jobs, tmp_path_factory):
    # A genuine trial beside a copy of it Harbor was killed in (no result.json):
    # whatever the first's result.json names, the killed one is counted under
    # that name only when it recorded one for the task both were asked for.
    job_dir = tmp_path_factory.mktemp("jobs") / "oracle-pass"
    shutil.copytree(genuine_jobs / "jobs" / "oracle-pass", job_dir)
    finished = next(p for p in job_dir.iterdir() if p.is_dir())
    killed = shutil.copytree(finished, job_dir / "hello-file__killed0")
    (killed / "result.json").unlink()
    result = json.loads((finished / "result.json").read_text())
    result["task_name"] = task_name
    if task is not None:
        result["config"]["task"] = task
    (finished / "result.json").write_text(json.dumps(result))

    (overview,) = bounded(read_overviews, job_dir)
    rows = {row.name: row for row in overview.rows}
    assert set(rows) == {finished.name, killed.name}
    same_task = task is None or task == json.loads((killed / "config.json").read_text())["task"]
    expected = rows[finished.name].task if task_name and same_task else "hello-file"
    assert rows[killed.name].task == expected
    assert sum(row.trials for row in overview.tasks.values()) == 2


@SETTINGS
@given(data=st.data())
def test_a_jobs_result_json_of_any_shape_lists_the_job_in_one_row(data, genuine_jobs, tmp_path_factory):
    """The jobs list reads each job's own result.json (Harbor's ``JobStats``),
    and each trial name in it, whatever they hold."""
    job = tmp_path_factory.mktemp("jobs") / "oracle-pass"
    shutil.copytree(genuine_jobs / "jobs" / "oracle-pass", job, symlinks=True)
    result = json.loads((job / "result.json").read_text())
    group = next(iter(result["stats"]["evals"].values()))
    fields = ["reward_stats", "exception_stats", "metrics", "evals", "stats", "file", "config"]
    field = data.draw(st.sampled_from(fields))
    value = data.draw(JSON_VALUES)
    if field in ("file", "config"):
        mine = job / ("result.json" if field == "file" else "config.json")
        put(mine, data.draw(contents(mine.read_bytes())))
    else:
        {"evals": result["stats"], "stats": result}.get(field, group)[field] = value
        (job / "result.json").write_text(json.dumps(result))
    notes: list[str] = []
    [summary] = bounded(read_jobs, job.parent, notes=notes)
    one_line(summary.ended_words)
    for note in notes:  # a config.json that cannot be read: said why
        one_line(note)
    assert all(isinstance(n, int) and n >= 0 for n in summary.outcomes.values())
    json.dumps(summary.to_json())


# --------------------------------------------------------------------------
# The runner's explain document, which the verifier can rewrite while it runs.

#: A document as the runner writes it (runner/run_verifier.py, _explain_document).
RUNNERS_EXPLANATION = {
    "explain_version": 1,
    "python": {"executable": "/usr/bin/python3", "version": "3.11.7", "implementation": "cpython", "flags": {}},
    "verifier": "/tests/verifier.py",
    "workspace": "/app",
    "workspace_exists": True,
    "reward_dir": "/logs/verifier",
    "sys_path": [
        {"index": 0, "path": "/tests/.ng", "role": "vendored helpers", "roles": ["vendored helpers"], "exists": True},
        {
            "index": 1,
            "path": "/usr/lib/python311.zip",
            "role": "interpreter",
            "roles": ["interpreter"],
            "exists": False,
        },
    ],
    "modules": {"nemo_gym.verifiers": {"resolved": "/tests/.ng/nemo_gym/verifiers/__init__.py", "shadowed": []}},
    "preloaded_nemo_gym": None,
    "preload_failed": [],
    "available": ["workspace", "task_data", "state"],
    "verify": {
        "signature": "verify(workspace, **kw)",
        "is_async": False,
        "type": "function",
        "defined_in": "/x",
        "line": 1,
        "yields": None,
    },
    "parameters": [
        {
            "name": "workspace",
            "kind": "positional or keyword",
            "default": None,
            "has_default": False,
            "binding": "argument",
            "source": "workspace",
            "passed": "keyword",
        },
        {
            "name": "kw",
            "kind": "**kwargs",
            "default": None,
            "has_default": False,
            "binding": "argument",
            "source": ["task_data", "state"],
            "passed": "keyword",
        },
    ],
    "problems": [],
    "import_error": None,
    "would_exit": None,
    "would_call_verify": True,
}
#: Where inside it a value may be replaced: a field, or a field of its first row or object.
EXPLAIN_PLACES = (
    [(key,) for key in RUNNERS_EXPLANATION]
    + [("sys_path", 0, key) for key in ("index", "path", "role", "roles", "exists")]
    + [("parameters", 1, key) for key in ("name", "kind", "binding", "source", "default", "passed")]
    + [
        ("verify", "signature"),
        ("verify", "is_async"),
        ("verify", "yields"),
        ("python", "flags"),
        ("python", "version"),
        ("modules", "nemo_gym.verifiers"),
        ("modules", "nemo_gym.verifiers", "shadowed"),
    ]
)


def _replaced(document: dict, place: tuple, value) -> dict:
    """``document`` with ``value`` at ``place``, when what holds that place is there."""
    document = json.loads(json.dumps(document))
    holder = document
    for step in place[:-1]:
        there = isinstance(holder, dict) and step in holder
        if not (there or (isinstance(holder, list) and isinstance(step, int) and step < len(holder))):
            return document
        holder = holder[step]
    if isinstance(holder, dict) and isinstance(place[-1], str):
        holder[place[-1]] = value
    return document


@SETTINGS
@given(
    found=contents(json.dumps(RUNNERS_EXPLANATION).encode()),
    edits=st.lists(st.tuples(st.sampled_from(EXPLAIN_PLACES), ANYTHING), max_size=4),
)
def test_an_explanation_the_verifier_rewrote_is_a_typed_document_or_none(found, edits, tmp_path_factory):
    """Whatever the file holds (any bytes, any JSON, the runner's own with any
    field, row or object replaced by anything), it reads as a typed document
    that says itself back as strict JSON, or as none at all (the run then says
    the runner gave no explanation); never an exception, here or in a face."""
    folder = tmp_path_factory.mktemp("explain")
    put(folder / "explain.json", found)
    read = bounded(untrusted.read_json, folder / "explain.json", 1_000_000, beneath=folder)
    document = read.data
    for place, value in edits:
        document = _replaced(document, place, value) if isinstance(document, dict) else document
    explanation = Explanation.read(document)
    if explanation is None:
        assert not isinstance(document, dict)
        return
    staged = Explanation.read(document, explanation.module_roles())
    json.dumps(staged.to_json(), allow_nan=False)
    assert all(isinstance(row.path, str) and isinstance(row.index, int) for row in staged.sys_path)
    assert all(isinstance(problem, str) for problem in staged.problems)
    printed = sys_path_lines(staged, str) + binding_lines(staged, "harbor", str)  # what every face prints
    assert all(isinstance(plain(line), str) for line in printed)
    shadows(staged)


# The user's verifier, five lines, as the runner read it (its SHA-256).
VERIFIER_SOURCE = b"import x\n\n\ndef verify(workspace):\n    return 1.0\n"
SHA256 = {"/tests/verifier.py": hashlib.sha256(VERIFIER_SOURCE).hexdigest(), "/tests/h.py": "0" * 64}
REAL_COVERAGE = json.dumps(
    {"files": {"/tests/verifier.py": {"statements": [1, 4, 5], "executed": [1, 4]}}, "sha256": SHA256}
).encode()
# The runner's document with anything in place of one of its parts.
COVERAGE_DOCUMENTS = st.one_of(
    JSON_VALUES.map(lambda v: {"files": v, "sha256": SHA256}),
    JSON_VALUES.map(lambda v: {"files": {"/tests/verifier.py": {"statements": [1], "executed": []}}, "sha256": v}),
    JSON_VALUES.map(lambda v: {"files": {"/tests/verifier.py": v}, "sha256": SHA256}),
    st.tuples(JSON_VALUES, JSON_VALUES).map(
        lambda v: {"files": {"/tests/verifier.py": {"statements": v[0], "executed": v[1]}}, "sha256": SHA256}
    ),
    st.tuples(st.lists(st.integers(), max_size=8), st.lists(st.integers(), max_size=8)).map(
        lambda v: {"files": {"/tests/verifier.py": {"statements": v[0], "executed": v[1]}}, "sha256": SHA256}
    ),
    st.tuples(st.lists(st.integers(), max_size=8), st.lists(st.integers(), max_size=8)).map(
        lambda v: {"files": {"/tests/h.py": {"statements": v[0], "executed": v[1]}}, "sha256": SHA256}
    ),
).map(lambda d: ("bytes", json.dumps(d).encode()))


@SETTINGS
@given(found=st.one_of(contents(REAL_COVERAGE), COVERAGE_DOCUMENTS))
def test_the_runners_coverage_file_gives_lines_or_a_problem(found, tmp_path_factory):
    """The verifier's own code can rewrite the --coverage-to file (an exit
    handler runs after the runner wrote it): whatever is there gives each
    file's lines, never a line that ran and could not, or one problem."""
    from verifier_tui.engine.coverage import read_runner_file

    folder = tmp_path_factory.mktemp("coverage")
    put(folder / "coverage.json", found)
    coverage = bounded(
        read_runner_file, folder / "coverage.json", lambda staged: (Path("/task") / staged.lstrip("/"), VERIFIER_SOURCE)
    )
    one_line(coverage.problem)
    assert coverage.problem is None or coverage.files == {}
    for why in coverage.not_compiled.values():
        one_line(why)
    for path, lines in coverage.files.items():
        assert lines.path == path and lines.executed <= lines.statements
        assert all(type(n) is int and 0 < n <= 5 for n in lines.statements)  # the user's file has five lines
    if found == ("bytes", REAL_COVERAGE):
        (lines,) = coverage.files.values()
        assert (lines.path, lines.missing, sorted(lines.executed)) == (Path("/task/tests/verifier.py"), [5], [1, 4])


@SETTINGS
@given(found=contents(VERIFIER_SOURCE))
def test_a_measured_files_source_is_its_lines_or_none_whatever_is_there_now(found, tmp_path_factory):
    """The coverage view and ``test --coverage`` read a measured file again for its lines, after
    the runs: by then a FIFO may be in its place (it froze them), or a link to a device (read to
    no end). Each gives the lines there are, or none."""
    from verifier_tui.engine.coverage import source_lines

    folder = tmp_path_factory.mktemp("measured")
    put(folder / "verifier.py", found)
    lines = bounded(source_lines, folder / "verifier.py")
    assert all(isinstance(line, str) and "\n" not in line for line in lines)
    if found[0] != "bytes":
        assert lines == []


@SETTINGS
@given(before=contents(VERIFIER_SOURCE), after=contents(VERIFIER_SOURCE))
def test_a_saved_file_is_told_apart_by_what_a_run_reads_whatever_is_there(before, after, tmp_path_factory):
    """``watch`` tells a save's late events (vim setting the mode again) from a new save by what a run
    reads of each file: a FIFO, a device or a link in its place is never opened nor taken as unchanged,
    and a regular file's new bytes are a change."""
    from verifier_tui.engine.watch.live import _as_read_all

    folder = tmp_path_factory.mktemp("watched")
    path = folder / "verifier.py"
    put(path, before)
    first = bounded(_as_read_all, [path])[path]
    put(path, after)
    second = bounded(_as_read_all, [path])[path]
    for found, read in ((before, first), (after, second)):
        assert (read is None) == (found[0] != "bytes"), (found, read)
    if first is not None and before[1] != after[1]:
        assert second != first


def test_an_integer_past_pythons_digit_limit_is_said_as_such(tmp_path):
    """Valid JSON that Python's reader (Harbor's too) refuses: said plainly,
    not as invalid JSON with advice about the interpreter's settings."""
    path = tmp_path / "result.json"
    path.write_text('{"reward": ' + "9" * 5000 + "}")
    found = untrusted.read_json(path, untrusted.MB)
    assert found.problem is not None and "integer too long for Python's JSON reader" in found.problem
    assert "set_int_max_str_digits" not in found.problem


_PART = st.one_of(
    st.sampled_from(["/", "/a", "/a/b", "/..", "", "memory", "cpu", "\\040", "\\777"]), st.text(max_size=8)
)
_CGROUP_LINE = st.builds("{}:{}:{}".format, st.sampled_from(["0", "4", "x"]), _PART, _PART)
_MOUNT_LINE = st.builds(
    "30 25 0:26 {} {} rw - {} src {}".format, _PART, _PART, st.sampled_from(["cgroup", "cgroup2", "tmpfs"]), _PART
)


@SETTINGS
@given(
    cgroup_text=st.one_of(st.text(), st.lists(_CGROUP_LINE).map("\n".join)),
    mountinfo=st.one_of(st.text(), st.lists(_MOUNT_LINE).map("\n".join)),
)
@example(cgroup_text="0::/a", mountinfo="30 25 0:26 / /x\0y rw - cgroup2 src rw")  # a path no kernel writes
@example(cgroup_text="0::\r::", mountinfo="0 0 0 / 0 - cgroup2 0 0")  # an empty cgroup path: relpath raised
def test_proc_cgroup_and_mountinfo_give_a_place_or_none(cgroup_text, mountinfo):
    """The kernel's /proc/self/cgroup and mountinfo, read for where a run's
    cgroup may go: a line without its three fields or whose path is not
    absolute is skipped (only its own hierarchy is lost), nothing raises."""
    groups = hierarchies(cgroup_text)
    for controller in ("memory", "cpu"):
        place = folder_for(controller, groups, mounts(mountinfo))
        assert place is None or place.version in (1, 2)


@settings(SETTINGS, max_examples=100, deadline=None)
@given(
    words=st.lists(
        st.binary(max_size=12).filter(lambda word: b"\0" not in word)
        | utf8_text(max_size=8).map(lambda text: text.replace("\0", "").encode()),
        min_size=1,
        max_size=4,
    )
)
def test_a_command_line_from_proc_is_shown_as_bash_takes_it_back(words):
    """A process's ``/proc/PID/cmdline`` is what the run made it (any bytes but NUL in each word): the
    strays list shows it on one line, with no control character, as words bash gives back as they were."""
    shown = procfs.shown_command(b"\0".join(words) + b"\0", 7)
    assert not re.search("[\x00-\x1f\x7f]", shown), shown
    back = subprocess.run(
        ["bash", "-c", f"printf '%s\\0' {shown}"], capture_output=True, check=True, env={"LC_ALL": "C.UTF-8"}
    )
    assert back.stdout.split(b"\0")[:-1] == words, shown


@settings(SETTINGS, max_examples=50, deadline=None)
@given(name=st.text(st.sampled_from("a) (\n:\tPid1"), min_size=1, max_size=15).filter(lambda n: n not in (".", "..")))
def test_proc_stat_and_status_give_a_process_s_parent_whatever_it_is_named(name, tmp_path_factory):
    """A run names its processes (a program's file name becomes its ``comm``), and ``/proc/PID/stat``
    shows that name in parentheses, ``status`` on a ``Name:`` line: ``a) 1 2 (``, or a line break and
    ``PPid:\\t1``, must not move the fields the strays list and the memory watch read after it."""
    link = tmp_path_factory.mktemp("named") / name
    link.symlink_to(shutil.which("sleep") or "/bin/sleep")
    process = subprocess.Popen([link, "30"])
    try:
        fields = procfs.stat(process.pid)
        assert fields is not None and fields[1] == str(os.getpid()).encode(), fields
        assert procfs.status_fields(process.pid, ("PPid",)) == {"PPid": str(os.getpid())}
    finally:
        process.kill()
        process.wait()
