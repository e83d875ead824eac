"""Pictures of a folder of jobs and of a job's overview (pytest-textual-snapshot),
on the genuine Harbor 0.26.0 jobs and on a job built from their trials. Each
picture is taken once every job or trial was read. Update with ``--snapshot-update``."""

from __future__ import annotations

import asyncio

from tests.harbor.job_copies import mixed_job
from tests.harbor.trial_app_under_test import SNAPSHOT_SIZE, TrialAppUnderTest
from verifier_tui.engine.session import Options


def read(app: TrialAppUnderTest):
    async def run_before(pilot) -> None:
        async def done() -> None:
            while not getattr(app.screen, "done", False):
                await asyncio.sleep(0.02)

        await asyncio.wait_for(done(), 60)
        await pilot.pause()
        await pilot.pause(0.1)

    return run_before


def test_a_folder_of_jobs(snap_compare, real):
    app = TrialAppUnderTest(real / "jobs", options=Options(), watch=False, deterministic=True)
    assert snap_compare(app, terminal_size=SNAPSHOT_SIZE, run_before=read(app))


def test_a_jobs_overview(snap_compare, real, tmp_path):
    app = TrialAppUnderTest(
        mixed_job(real, tmp_path / "jobs" / "mixed"), options=Options(), watch=False, deterministic=True
    )
    assert snap_compare(app, terminal_size=SNAPSHOT_SIZE, run_before=read(app))
