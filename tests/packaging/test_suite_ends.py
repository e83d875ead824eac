"""The suite itself ends cleanly under xdist: a worker leaves nothing for
pytest's end-of-run garbage collections to walk once it has told the
controller it is done. execnet gives a worker 5 s from then to end its task
before it sends it SIGINT; the tens of thousands of objects each finished
Textual app leaves (the suite's thresholds in ``tests/conftest.py`` collect
them rarely) took longer than that to collect, and pytest collects five
times over: at the end of ``pytest -n 4`` on a busy machine, the
KeyboardInterrupt was printed from inside Hypothesis's gc callback as a
``PytestUnraisableExceptionWarning``."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.helpers.commands import inner_pytest_options
from tests.helpers.tasks import HANG_GUARD_S, REPO

# The suite's own hook, and nothing else of its conftest (its start makes a virtual environment).
# Collections are off, as the suite's thresholds make them rare; a test leaves a cycle behind; the
# last hook before the worker says it is done says whether the cycle is still there and whether
# what lives on is frozen (left out of pytest's collections after it), and the controller prints it.
INNER_CONFTEST = """
import gc
import weakref

import pytest

from tests.conftest import pytest_sessionfinish  # noqa: F401

LEFT = []


class Node:
    pass


def pytest_configure(config):
    gc.disable()


@pytest.fixture
def leave_a_cycle():
    cycle = Node()
    cycle.itself = cycle
    LEFT.append(weakref.ref(cycle))


@pytest.hookimpl(trylast=True, specname="pytest_sessionfinish")
def pytest_sessionfinish_says_what_is_left(session):
    if hasattr(session.config, "workeroutput"):
        session.config.workeroutput["left"] = sum(ref() is not None for ref in LEFT)
        session.config.workeroutput["frozen"] = gc.get_freeze_count() > 0


def pytest_testnodedown(node, error):
    print("left behind:", node.workeroutput.get("left"), "frozen:", node.workeroutput.get("frozen"))
"""


def test_a_worker_leaves_no_garbage_behind_once_it_has_said_it_is_done(tmp_path):
    (tmp_path / "conftest.py").write_text(INNER_CONFTEST)
    (tmp_path / "test_inner.py").write_text("def test_one(leave_a_cycle):\n    pass\n")
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "PYTEST_ADDOPTS": inner_pytest_options("xdist"),
        "PYTEST_XDIST_AUTO_NUM_WORKERS": "1",
    }
    env.pop("PYTEST_XDIST_WORKER", None)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "1", "-p", "xdist", "-s", "-q", "-p", "no:cacheprovider", "."],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "left behind: 0 frozen: True" in done.stdout, done.stdout + done.stderr
