"""Testing a job of thousands of trials must not hold them all: each trial is
read at its turn and let go after it, whatever the job's size."""

from __future__ import annotations

import asyncio
import gc

from tests.harbor.job_copies import copy_job_files, copy_trial
from tests.helpers.tasks import PY
from verifier_tui.engine.harbor.folders import Trial, TrialRef
from verifier_tui.engine.session import Options
from verifier_tui.engine.suite import arun_groups, collect

COPIES = 8
JOBS = 2


def test_testing_a_job_holds_only_the_trials_in_hand(real, private_cache):
    job = copy_job_files(real, real / "jobs" / "copies", source="separate-mode")
    for index in range(COPIES):
        copy_trial(real, job, f"separate-mode__c{index:02d}", source="separate-mode")
    collection = collect([job], Options(python=PY))
    group = collection.groups[0]
    assert len(group.cases) == COPIES and all(isinstance(t, TrialRef) for t in group.found.trials)
    alive: list[int] = []

    def keep(_group, _index, opened):
        gc.collect()
        alive.append(sum(isinstance(o, Trial) for o in gc.get_objects()))
        return opened.last.agreement.same

    with collection:
        agreed = asyncio.run(arun_groups([group], JOBS, keep))[0]
    assert agreed == [True] * COPIES
    # At most 2 x JOBS trials are in hand (staged or running) at once.
    assert max(alive) <= 2 * JOBS, alive
