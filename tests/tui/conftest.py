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
