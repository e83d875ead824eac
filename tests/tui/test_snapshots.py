"""Pictures of the main states (pytest-textual-snapshot).

Deterministic: each task is copied to ``tmp_path/tasks/<name>`` and the test
starts in ``tmp_path/tasks`` (paths on screen are relative to the folder the
tool was started in: ``tests/tui/conftest.py``), the app runs with
``deterministic=True`` (durations read ``-- ms``, the interpreter's folders
``<python>``, home ``~``), the copy sandbox is forced (every machine has it;
the header names it), and each picture is taken once the first run ended
and live reload is in place. Update with ``--snapshot-update``.
"""

from __future__ import annotations

import asyncio

import pytest

from tests.helpers.tasks import make_task
from tests.tui.app_under_test import SNAPSHOT_SIZE, make_app


@pytest.fixture(autouse=True)
def copy_sandbox(monkeypatch):
    """The same header on a machine with namespaces and one without."""
    monkeypatch.setenv("VERIFIER_TUI_SANDBOX", "copy")


def settled(runs: int = 1, watch: bool = True):
    async def run_before(pilot) -> None:
        app = pilot.app
        await app.wait_for_runs(runs)
        if watch:
            await asyncio.wait_for(app.controller.live.watch_ready.wait(), 10)
        await pilot.pause()
        await pilot.pause(0.1)

    return run_before


def test_passing_run(snap_compare, example):
    app = make_app(example("hello-file"))
    assert snap_compare(app, terminal_size=SNAPSHOT_SIZE, run_before=settled())


def test_dict_reward(snap_compare, example):
    app = make_app(example("fizzbuzz-module"), case="partial")
    assert snap_compare(app, terminal_size=SNAPSHOT_SIZE, run_before=settled())


def test_verify_raised(snap_compare, example):
    app = make_app(example("hello-file"), case="missing-file")
    assert snap_compare(app, terminal_size=SNAPSHOT_SIZE, run_before=settled())


def test_contract_error_in_harbor_mode(snap_compare, example):
    app = make_app(example("count-errors"), case="harbor-mode")
    assert snap_compare(app, terminal_size=SNAPSHOT_SIZE, run_before=settled())


def test_timeout(snap_compare, tmp_path):
    root = make_task(
        tmp_path / "tasks" / "sleepy",
        "import time\n\ndef verify(workspace):\n    time.sleep(30)\n    return 1.0\n",
        timeout=1,
        cases={"only": {}},
    )
    app = make_app(root)
    assert snap_compare(app, terminal_size=SNAPSHOT_SIZE, run_before=settled())


def test_task_without_a_verifier(snap_compare, tmp_path):
    root = make_task(tmp_path / "tasks" / "no-verifier-yet", None, cases={"first": {"answer.txt": "42\n"}})
    app = make_app(root)
    assert snap_compare(app, terminal_size=SNAPSHOT_SIZE, run_before=settled())


def test_narrow_terminal(snap_compare, example):
    app = make_app(example("hello-file"))
    assert snap_compare(app, terminal_size=(80, 24), run_before=settled())


def test_smallest_supported_terminal(snap_compare, example):
    app = make_app(example("count-errors"), case="harbor-mode")
    assert snap_compare(app, terminal_size=(100, 30), run_before=settled())


def _every_case_on_save(app, runs: int):
    """The screen once A is on and its first batch (``runs`` in all, the first run's too) is in."""

    async def run_before(pilot) -> None:
        await settled()(pilot)
        await pilot.press("A")
        await app.wait_for_runs(runs)
        await pilot.pause()
        await pilot.pause(0.1)

    return run_before


def test_every_case_on_save(snap_compare, example):
    """A on: the status line says so, and the cases list shows every case's verdict."""
    app = make_app(example("hello-file"), case="correct")
    assert snap_compare(app, terminal_size=SNAPSHOT_SIZE, run_before=_every_case_on_save(app, 5))


def test_every_case_on_save_with_another_workspace(snap_compare, example):
    """A on with another case's workspace chosen: the reward panel shows the run of that workspace
    (its case's expected.json not applied, as the header and the resolution say), the cases list
    each case's own verdict."""
    root = example("hello-file")
    app = make_app(root, case="correct", workspace=root / "cases" / "wrong-text" / "workspace")
    assert snap_compare(app, terminal_size=SNAPSHOT_SIZE, run_before=_every_case_on_save(app, 6))


def test_keep_the_run_as_a_case_prompt(snap_compare, example):
    app = make_app(example("hello-file"), case="wrong-text")

    async def run_before(pilot) -> None:
        await settled()(pilot)
        await pilot.press("k", *"agent-wrote-hi")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SNAPSHOT_SIZE, run_before=run_before)
