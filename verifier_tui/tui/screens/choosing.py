"""The main screen's choosers: case, verifier, workspace, response (a file,
none, or typed), task data. Each pushes a chooser screen and, on a choice the
session accepts, re-runs; a refused choice becomes a message."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual.content import Content

from verifier_tui.engine.cases import default_task_data
from verifier_tui.words import rewards_text
from verifier_tui.tui.screens.choose_list import ChooseListScreen
from verifier_tui.tui.screens.file_picker import FilePickerScreen
from verifier_tui.tui.screens.folder_picker import FolderPickerScreen
from verifier_tui.tui.screens.response_editor import ResponseEditorScreen
from verifier_tui.tui.widgets.status_style import status_of

if TYPE_CHECKING:
    from verifier_tui.tui.screens.main import MainScreen

    _Base = MainScreen
else:
    _Base = object


class ChoosingActions(_Base):
    """Mixed into :class:`MainScreen`."""

    def _select_case(self, name: str | None) -> None:
        session = self.vt.session
        if name is None:
            session.select_case(None)
        elif not self._guard(session.select_case_named, name):
            return
        self._last_response = None
        self._changed("case chosen")

    def action_choose_case(self) -> None:
        session = self.vt.session
        options: list[tuple[str, Content | str]] = []
        for case in session.task.cases:
            last = self.last_by_case.get(case.name)
            symbol = status_of(last)[0] if last else "·"
            extra = " (with a response)" if case.response else ""
            expected = "  · " + expectation_words(case)
            options.append((case.name, Content(f"{symbol} {case.name}{extra}{expected}")))
        options.append(("\0none", Content("no case: run on an empty workspace")))
        current = session.case.name if session.case else "\0none"

        def chosen(key: str | None) -> None:
            if key is not None:
                self._select_case(None if key == "\0none" else key)

        self.app.push_screen(ChooseListScreen("Choose a case", options, current), chosen)

    def action_choose_verifier(self) -> None:
        session, fmt = self.vt.session, self.vt.fmt
        options: list[tuple[str, Content | str]] = [(str(v), fmt.path(v)) for v in session.task.verifiers]
        options.append(("\0other", "another .py file…"))

        def chosen(key: str | None) -> None:
            if key == "\0other":
                self.app.push_screen(FilePickerScreen("Choose a verifier (.py with a top-level verify)",
                                                      session.task.root, (".py",)), picked)
            elif key is not None:
                picked(Path(key))

        def picked(path: Path | None) -> None:
            if path is not None and self._guard(session.choose_verifier, path):
                self._changed("verifier chosen")

        self.app.push_screen(ChooseListScreen("Choose a verifier", options,
                                              str(session.verifier) if session.verifier else None), chosen)

    def action_choose_workspace(self) -> None:
        session = self.vt.session

        def chosen(path: Path | None) -> None:
            if path is not None and self._guard(session.choose_workspace, path):
                self._changed("workspace chosen")

        start = session.workspace or session.task.root
        self.app.push_screen(FolderPickerScreen("Choose the workspace folder (the sandbox's /app)", start,
                                                session.task.root), chosen)

    def action_choose_response(self) -> None:
        session, fmt = self.vt.session, self.vt.fmt
        options: list[tuple[str, Content | str]] = []
        case_response = session.case.response if session.case else None
        if case_response is not None and case_response.path is not None:
            options.append(("case", f"the case's {fmt.path(case_response.path)}"))
        options += [
            ("file", "a file… (.json: Responses API JSON; anything else: plain text)"),
            ("text", "type plain text in an editor"),
            ("json", "type Responses API JSON in an editor"),
            ("none", "none: Harbor mode (a published task never gets a response)"),
        ]

        def chosen(key: str | None) -> None:
            if key == "case" and case_response is not None:
                if self._guard(session.choose_response, case_response.path):
                    self._changed("response chosen")
            elif key == "file":
                start = session.case.folder if session.case else session.task.root
                self.app.push_screen(FilePickerScreen("Choose a response file", session.task.root, (), start), picked)
            elif key in ("text", "json"):
                self.open_response_editor(key)
            elif key == "none":
                session.choose_response(None)
                self._changed("response: none")

        def picked(path: Path | None) -> None:
            if path is not None and self._guard(session.choose_response, path):
                self._changed("response chosen")

        self.app.push_screen(ChooseListScreen("Where the response comes from", options), chosen)

    def open_response_editor(self, kind: str) -> None:
        session = self.vt.session
        text = ""
        current = session.response
        if current is not None and current.path is None:
            text, kind = current.text or "", current.kind if kind == current.kind else kind
        elif current is not None and current.path is not None and current.kind == kind:
            try:
                text = current.path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                text = ""

        def edited(new_text: str, new_kind: str) -> None:
            session.set_typed_response(new_text, new_kind)
            self.vt.choices_changed(restart_watch=True)
            self.vt.controller.request("response edited")

        self.app.push_screen(ResponseEditorScreen(text, kind, edited))
        edited(text, kind)

    def action_choose_task_data(self) -> None:
        session, fmt = self.vt.session, self.vt.fmt
        default = session.case.task_data if session.case else default_task_data(session.task.root,
                                                                                 session.task.tests_dir)
        options: list[tuple[str, Content | str]] = []
        if default is not None:
            options.append(("default", f"the default: {fmt.path(default)}"))
        options += [("file", "a JSON file…"), ("none", "none: the runner passes {}")]

        def chosen(key: str | None) -> None:
            if key == "default" and default is not None:
                if self._guard(session.choose_task_data, default):
                    self._changed("task data chosen")
            elif key == "file":
                self.app.push_screen(FilePickerScreen("Choose task data (a JSON object)", session.task.root,
                                                      (".json",)), picked)
            elif key == "none":
                session.choose_task_data(None)
                self._changed("task data: none")

        def picked(path: Path | None) -> None:
            if path is not None and self._guard(session.choose_task_data, path):
                self._changed("task data chosen")

        self.app.push_screen(ChooseListScreen("Task data", options), chosen)


def expectation_words(case) -> str:
    """What a case's expected.json asks for, in words."""
    expected = case.expected
    if expected is None:
        return "no expected.json"
    words = []
    if expected.rewards is not None:
        words.append("rewards " + rewards_text(expected.rewards))
    if expected.exit_code is not None:
        words.append(f"exit {expected.exit_code}")
    return "expects " + " and ".join(words)
