"""``test JOB`` on a terminal counts its trials on stderr as their replays end."""

from __future__ import annotations

import pytest

from tests.helpers.commands import counters, run_in_terminal
from tests.helpers.harbor import SEPARATE, sandbox_trial
from tests.helpers.tasks import PY

pytest.importorskip("pty")


def test_test_job_counts_its_trials(env, tmp_path, task, runs):
    demo = task(toml=SEPARATE)
    job = runs / "jobs" / "j"
    for name in ("demo__aaaaaaa", "demo__bbbbbbb"):
        sandbox_trial(job, demo, tmp_path, workspace={"hello.txt": "hi"}, mode="separate", capture=True, name=name)
    seen, status = run_in_terminal(env, ["test", str(job), "--python", PY], until=b"not compared", keys=b"")
    assert status == 0
    assert [(done, total, noun) for done, total, noun, _bad in counters(seen)] == [(1, 2, "trials"), (2, 2, "trials")]
    assert b"2 agree, 0 differ" in seen[seen.rindex(b"\r\x1b[K") :]
