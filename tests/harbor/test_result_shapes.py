"""Genuine Harbor 0.26.0 trials whose ``result.json`` holds what Harbor never
writes in ``step_results`` (an item that is no step, a dict where the list
goes, fields of another kind): ``run TRIAL`` and the trial screen say what
they passed by in one line and replay the rest, and ``test JOB`` keeps a row
for every trial, in its table, its ``--json`` and its JUnit file."""

from __future__ import annotations

import json
import shutil
import sys
import xml.etree.ElementTree as ET

import pytest

from tests.harbor.job_copies import copy_job_files, copy_trial
from tests.harbor.trial_app_under_test import make_trial_app
from tests.helpers.commands import no_traceback, run_tool
from tests.tui.app_under_test import screen_text
from verifier_tui.engine.suite import arun_groups, collect

PY = sys.executable
#: step_results as Harbor never writes them, each with the line that says so.
ODD = {
    "a-string": (["x"], "step_results[0] is a string, not a step"),
    "an-empty-object": ([{}], "step_results[0] has no step_name"),
    "null": ([None], "step_results[0] is null, not a step"),
    "an-object": ({"first": {}}, "step_results is an object, not a list"),
    "a-number-for-a-name": ([{"step_name": 7}], "step_results[0] has a number for its step_name"),
    "a-name-out-of-the-trial": ([{"step_name": "../../x"}], "step_results[0] names the step '../../x'"),
}


def odd_steps(value):
    return lambda result: result.update(step_results=value)


@pytest.mark.parametrize("kind", sorted(ODD))
def test_run_says_what_it_passed_by_and_replays_the_trial(kind, real, env, tmp_path):
    value, said = ODD[kind]
    job = copy_job_files(real, real / "jobs" / "odd", source="separate-mode")
    trial = copy_trial(real, job, "separate-mode__odd0001", source="separate-mode", edit=odd_steps(value))
    done = run_tool(env, "run", trial, "--python", PY, cwd=tmp_path)
    no_traceback(done)
    assert done.returncode == 0, done.stdout + done.stderr  # the replay ran and agrees with the sandbox's 1.0
    notes = [line for line in done.stdout.splitlines() if said in line]
    assert len(notes) == 1 and "not what Harbor writes" in notes[0], done.stdout
    data = json.loads(run_tool(env, "run", trial, "--python", PY, "--json", cwd=tmp_path).stdout)
    assert data["same"] is True and any(said in note for note in data["trial"]["notes"])


def test_run_keeps_the_steps_harbor_wrote_among_items_it_never_writes(real, env, tmp_path):
    job = copy_job_files(real, real / "jobs" / "mixed", source="multi-step")
    trial = copy_trial(
        real,
        job,
        "multi-step__mixed01",
        source="multi-step",
        edit=lambda r: r.update(step_results=["x", r["step_results"][0], None, r["step_results"][1], {}]),
    )
    done = run_tool(env, "run", trial, "--step", "second", "--json", cwd=tmp_path)
    no_traceback(done)
    data = json.loads(done.stdout)
    assert data["trial"]["steps"] == ["first", "second"]
    assert data["sandbox"]["harbor_verdict"]["rewards"] == {"reward": 1.0}  # the step's own record, read
    notes = [n for n in data["trial"]["notes"] if "step_results[" in n]
    assert [n.split(" ")[1] for n in notes] == ["step_results[0]", "step_results[2]", "step_results[4]"]


def test_test_job_has_a_row_for_every_trial_in_its_table_json_and_junit(real, env, tmp_path):
    job = copy_job_files(real, real / "jobs" / "odd", source="separate-mode")
    copy_trial(real, job, "separate-mode__good000", source="separate-mode")
    for index, kind in enumerate(sorted(ODD)):
        copy_trial(real, job, f"separate-mode__odd{index:04}", source="separate-mode", edit=odd_steps(ODD[kind][0]))
    copy_trial(
        real,
        job,
        "multi-step__mixed01",
        source="multi-step",
        edit=lambda r: r.update(step_results=["x", *r["step_results"]]),
    )
    folders = len(ODD) + 2
    rows = folders + 1  # the multi-step trial is replayed step by step

    junit = tmp_path / "junit.xml"
    done = run_tool(env, "test", job, "--python", PY, "--junit", junit, cwd=tmp_path)
    no_traceback(done)
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"job {job.name} · {folders} trial(s), {rows} replays (one per step)"), lines[0]
    table = lines[2 : 2 + rows]
    assert sum(1 for line in table if "separate-mode__" in line) == folders - 1
    assert sum(1 for line in table if "multi-step__mixed01 / " in line) == 2
    assert f"{folders - 1} agree, 0 differ, 2 not compared" in lines  # the multi-step trial captured no /app
    for _kind, (_value, said) in ODD.items():
        assert sum(1 for line in lines if line.startswith("── separate-mode__odd") and said in line) == 1
    # Said once for the trial, not under each of its steps.
    assert sum(1 for line in lines if line.startswith("── multi-step__mixed01") and "step_results[0]" in line) == 1

    data = json.loads(run_tool(env, "test", job, "--python", PY, "--json", cwd=tmp_path).stdout)
    assert data["trial_folders"] == folders and len(data["trials"]) == rows
    assert data["agree"] + data["differ"] + data["not_compared"] == rows

    cases = ET.parse(junit).getroot().iter("testcase")
    assert len(list(cases)) == rows


async def test_a_trial_that_cannot_be_read_at_its_turn_is_a_row_saying_why(real, tmp_path):
    from verifier_tui.engine.suite import NotReplayed

    job = copy_job_files(real, real / "jobs" / "gone", source="multi-step")
    trial = copy_trial(real, job, "multi-step__gone001", source="multi-step")
    with collect([job]) as collection:
        group = collection.groups[0]
        assert [item.step for item in group.cases] == ["first", "second"]
        # Meanwhile the trial lost its second step (Harbor wrote it again, with one step only).
        result = json.loads((trial / "result.json").read_text())
        result["step_results"].pop()
        (trial / "result.json").write_text(json.dumps(result))
        shutil.rmtree(trial / "steps" / "second")
        outcomes = (await arun_groups([group], 1))[0]
    missed = outcomes[1]
    assert isinstance(missed, NotReplayed), outcomes
    assert missed.why == "trial multi-step__gone001 has no step 'second' (steps: first)"
    assert missed.to_json()["local_skipped"] == missed.why and missed.to_json()["same"] is None


async def test_the_trial_screen_opens_on_step_results_harbor_never_writes(real, tmp_path):
    job = copy_job_files(real, real / "jobs" / "odd", source="separate-mode")
    trial = copy_trial(real, job, "separate-mode__odd0001", source="separate-mode", edit=odd_steps(["x"]))
    app = make_trial_app(trial, python=PY)
    async with app.run_test(size=(160, 45)) as pilot:
        replayed = await app.wait_for_replays(1)
        await pilot.pause()
        assert app.is_running and replayed.agreement.same is True
        shown = " ".join(screen_text(app).split())
        assert "result.json: step_results[0] is a string, not a step" in shown
