"""Fixtures of the TUI tests. The app under test and the helpers that read
its screen are in ``tests/tui/app_under_test.py``; tasks come from the root
``tests/conftest.py`` (``example``) and ``tests/helpers.py`` (``make_task``)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_user_editor(monkeypatch):
    # The suspend tests must not depend on the developer's $EDITOR.
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", "true")


@pytest.fixture(autouse=True)
def _started_in_the_tasks_folder(tmp_path, monkeypatch):
    """The user starts the tool in the folder holding the task
    (``tmp_path/tasks``, where ``example`` and ``make_task`` put it): paths on
    screen are relative to the folder the tool was started in, so no tmp name
    ever reaches the screen (or a snapshot)."""
    folder = tmp_path / "tasks"
    folder.mkdir(exist_ok=True)
    monkeypatch.chdir(folder)
    return folder
