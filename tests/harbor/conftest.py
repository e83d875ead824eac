"""Fixtures for the Harbor trial tests: a folder Harbor "ran in" (its
``tasks/`` and ``jobs/``), and a writable copy of the genuine Harbor 0.26.0
job folders from ``../shared/harbor-0.26``."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import pytest

from tests.helpers.harbor import HARBOR_REAL
from tests.helpers.tasks import make_task


@pytest.fixture
def runs(tmp_path) -> Path:
    """``tmp_path/runs``: where ``harbor run`` was started, with ``tasks/`` and ``jobs/``."""
    root = tmp_path / "runs"
    (root / "tasks").mkdir(parents=True)
    (root / "jobs").mkdir()
    return root


@pytest.fixture
def task(runs):
    """``task(name, verifier_source, **make_task kwargs)``: a task under ``runs/tasks``."""

    def build(name: str = "demo", verifier: str = "def verify(workspace):\n    return 1.0\n", **kwargs) -> Path:
        return make_task(runs / "tasks" / name, verifier, **kwargs)

    return build


@pytest.fixture
def real(tmp_path) -> Path:
    """A writable copy of ``../shared/harbor-0.26`` (jobs/ and tasks/)."""
    if HARBOR_REAL is None:
        pytest.skip("../shared/harbor-0.26 is not here")
    target = tmp_path / "harbor-0.26"
    shutil.copytree(HARBOR_REAL, target)
    for path in [target, *target.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)
    return target
