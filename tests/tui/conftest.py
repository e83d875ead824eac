"""Helpers for the TUI's pilot and snapshot tests.

Tasks are copied into ``tmp_path/tasks/<name>`` (a fixed folder name) when a
test writes files or needs a stable picture: the app shows paths relative to
the task's parent folder, so no tmp name ever reaches the screen.
"""

from __future__ import annotations

import io
import shutil
import textwrap
from pathlib import Path

import pytest
from rich.console import Console

from verifier_tui.engine.session import Options, Session
from verifier_tui.tui.app import VerifierApp

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "tasks"
SIZE = (120, 40)


@pytest.fixture(autouse=True)
def _no_user_editor(monkeypatch):
    # The suspend tests must not depend on the developer's $EDITOR.
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", "true")


def copy_task(tmp_path: Path, name: str) -> Path:
    target = tmp_path / "tasks" / name
    shutil.copytree(EXAMPLES / name, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def make_task(tmp_path: Path, name: str, verifier: str | None, *, timeout: float | None = None,
              cases: dict[str, dict[str, str]] | None = None) -> Path:
    """A small task folder: tests/verifier.py (when given), task.toml, and
    cases/<name>/workspace/<files> for each case."""
    root = tmp_path / "tasks" / name
    (root / "tests").mkdir(parents=True)
    toml = "[verifier]\n" + (f"timeout_sec = {timeout}\n" if timeout else "")
    (root / "task.toml").write_text(toml, encoding="utf-8")
    if verifier is not None:
        (root / "tests" / "verifier.py").write_text(textwrap.dedent(verifier), encoding="utf-8")
    for case, files in (cases or {"only": {}}).items():
        workspace = root / "cases" / case / "workspace"
        workspace.mkdir(parents=True)
        for file_name, text in files.items():
            (workspace / file_name).write_text(text, encoding="utf-8")
    return root


def make_app(path: Path | str, *, watch: bool = True, deterministic: bool = True, **options) -> VerifierApp:
    return VerifierApp(Session(path, Options(**options)), watch=watch, deterministic=deterministic)


def screen_text(app: VerifierApp) -> str:
    """The screen as plain text (what a user reads), for assertions."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True, color_system=None,
                      record=True, legacy_windows=False, safe_box=False)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text()


def widget_text(app: VerifierApp, selector: str) -> str:
    """The plain text a Static-like widget (or a Log) holds."""
    from textual.widgets import Log, Static

    widget = app.main.query_one(selector)
    if isinstance(widget, Log):
        return "\n".join(widget.lines)
    if isinstance(widget, Static):
        content = widget.content
        return getattr(content, "plain", str(content))
    raise TypeError(type(widget))


def recorded(messages: list, kind: type) -> list:
    """Messages of one kind from a ``message_hook`` record, each once (a
    bubbling message reaches several message pumps)."""
    seen: set[int] = set()
    out = []
    for message in messages:
        if isinstance(message, kind) and id(message) not in seen:
            seen.add(id(message))
            out.append(message)
    return out
