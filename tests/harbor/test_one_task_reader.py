"""``task.toml`` has one reader: ``run`` on the task and
``run TRIAL`` (the replay) take the same values from it, by Harbor 0.26.0's
rules, and refuse (or not) with the same line. Before, the trial code had a
reader of its own: ``timeout_sec = "30"`` gave 30 s in ``run`` and 600 s with
"Harbor would refuse" in the replay; ``timeout_sec = true`` gave 1 s against
600 s; and ``run`` left out ``[environment] env``."""

from __future__ import annotations

import json

import pytest

from tests.helpers.commands import no_traceback, run_tool
from tests.helpers.harbor import PASSED, SEPARATE, make_job
from tests.helpers.tasks import PY

# The verifier reports the variables it sees as its reward's keys (1.0 each).
SHOWS_ENV = (
    "import json, os\n\ndef verify(workspace):\n"
    "    return {k: 1.0 for k in ('FROM_ENVIRONMENT', 'FROM_VERIFIER', 'BOTH') if k in os.environ}"
    " | {'both_is_verifiers': 1.0 if os.environ.get('BOTH') == 'verifier' else 0.0}\n"
)


def command(env, *args, cwd):
    done = run_tool(env, *args, "--json", "--python", PY, cwd=cwd)
    no_traceback(done)
    return json.loads(done.stdout)


def trial_of(runs, task):
    make_job(runs / "jobs" / "j", {"t__aaaaaaa": dict(task=task, app={"hello.txt": "hi"}, mode="separate", **PASSED)})
    return runs / "jobs" / "j" / "t__aaaaaaa"


@pytest.mark.parametrize(
    "value, seconds",
    [
        ('"30"', 30.0),  # pydantic's lax float: a string holding a number is that number
        ("true", 1.0),  # and a boolean is 1.0 or 0.0
        ('" 45 "', 45.0),  # surrounding spaces are trimmed
    ],
)
def test_run_and_the_replay_take_the_same_timeout_and_neither_refuses(task, runs, env, tmp_path, value, seconds):
    demo = task(toml=SEPARATE + f"timeout_sec = {value}\n")
    ran = command(env, "run", demo, cwd=tmp_path)
    assert ran["timeout_s"] == seconds
    assert ran["harbor_refuses_task"] is None
    replayed = command(env, "run", trial_of(runs, demo), cwd=tmp_path)
    assert replayed["local"]["timeout_s"] == seconds
    assert replayed["sandbox"]["timeout_s"] == seconds
    assert replayed["local"]["harbor_refuses_task"] is None
    assert not any("refuse" in note for note in replayed["trial"]["notes"])


def test_a_value_harbor_refuses_is_refused_in_the_same_words_by_run_and_the_replay(task, runs, env, tmp_path):
    demo = task(toml=SEPARATE + 'timeout_sec = "soon"\n')
    ran = command(env, "run", demo, cwd=tmp_path)
    replayed = command(env, "run", trial_of(runs, demo), cwd=tmp_path)
    assert "[verifier] timeout_sec = 'soon' is not a number" in ran["harbor_refuses_task"]
    assert replayed["local"]["harbor_refuses_task"] == ran["harbor_refuses_task"]
    assert f"Harbor would refuse to run this task: {ran['harbor_refuses_task']}" in replayed["trial"]["notes"]
    # Both fall back to Harbor's default, as the reader does for every command.
    assert ran["timeout_s"] == replayed["local"]["timeout_s"] == replayed["sandbox"]["timeout_s"] == 600.0


def test_run_gives_the_verifier_the_environment_env_under_the_verifier_env(task, runs, env, tmp_path):
    """harbor-trials.md: the verifier's environment is the task's [environment]
    env, overlaid by [verifier] env; ``run`` does as the replay does."""
    toml = (
        'version = "1.0"\n\n[environment]\nenv = { FROM_ENVIRONMENT = "e", BOTH = "environment" }\n\n'
        '[verifier]\nenv = { FROM_VERIFIER = "v", BOTH = "verifier" }\n'
    )
    demo = task(verifier=SHOWS_ENV, toml=toml)
    expected = {"FROM_ENVIRONMENT": 1.0, "FROM_VERIFIER": 1.0, "BOTH": 1.0, "both_is_verifiers": 1.0}
    assert command(env, "run", demo, cwd=tmp_path)["rewards"] == expected
    # The replay (shared mode, /app not captured: a case's workspace stands in).
    make_job(runs / "jobs" / "k", {"t__bbbbbbb": dict(task=demo, **PASSED)})
    (demo / "cases" / "any" / "workspace").mkdir(parents=True)
    replayed = command(env, "run", runs / "jobs" / "k" / "t__bbbbbbb", "--case", "any", cwd=tmp_path)
    assert replayed["local"]["rewards"] == expected
