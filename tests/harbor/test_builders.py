"""The test builders write what Harbor 0.26.0 writes: the same files, the
same JSON keys, as the genuine job folders in ``../shared/harbor-0.26``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers.harbor import PASSED, harbor_exception, job_entries, make_job
from verifier_tui.engine.harbor.folders import open_harbor


def files_of(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def shape(value):
    """The keys of every object, recursively (a list by its first element)."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value and isinstance(value[0], (dict, list)) else "list"
    return "value"


def build_like(name: str, real: Path, runs: Path) -> Path:
    """The builders' version of the real job ``name``, its task copied into ``runs/tasks``."""
    trial = next(p for p in (real / "jobs" / name).iterdir() if p.is_dir())
    task_name = json.loads((trial / "config.json").read_text())["task"]["path"].split("/")[-1]
    task = runs / "tasks" / task_name
    shutil.copytree(real / "tasks" / task_name, task)
    kwargs = {
        "oracle-pass": dict(PASSED),
        "nop-fail": dict(
            agent="nop",
            exception=harbor_exception("RewardFileNotFoundError", "No reward file found"),
            verifier_files={"test-stdout.txt": "Traceback (most recent call last):\n"},
        ),
        "separate-mode": dict(PASSED, mode="separate", app={"hello.txt": "hello world\n"}),
        "multi-step": dict(mode=None, steps=[dict(PASSED, name="first"), dict(PASSED, name="second")]),
    }[name]
    return make_job(runs / "jobs" / name, {trial.name: dict(task=task, **kwargs)})


@pytest.mark.parametrize("name", ["oracle-pass", "nop-fail", "separate-mode", "multi-step"])
def test_a_built_job_has_the_files_and_keys_harbor_writes(name, real, runs):
    built = build_like(name, real, runs)
    genuine = real / "jobs" / name
    assert files_of(built) == files_of(genuine)
    for rel in sorted(files_of(genuine)):
        if rel.endswith(".json"):
            ours = json.loads((built / rel).read_text())
            theirs = json.loads((genuine / rel).read_text())
            assert shape(ours) == shape(theirs), rel


@pytest.mark.parametrize("name", ["oracle-pass", "nop-fail", "separate-mode", "multi-step"])
def test_a_built_job_reads_as_the_genuine_one_does(name, real, runs):
    built, _ = open_harbor(build_like(name, real, runs))
    genuine, _ = open_harbor(real / "jobs" / name)
    assert [(e.trial, e.step, e.label) for e in job_entries(built)] == [
        (e.trial, e.step, e.label) for e in job_entries(genuine)
    ]
    assert built.trials[0].absent == genuine.trials[0].absent == []
    assert built.trials[0].recorded_digest == genuine.trials[0].recorded_digest
