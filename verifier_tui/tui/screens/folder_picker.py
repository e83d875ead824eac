"""Choose a folder (the workspace): browse with a tree, or type a path."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import DirectoryTree, Input, Label

from verifier_tui.tui.display import content
from verifier_tui.tui.screens.file_picker import NamesTree, PathBox
from verifier_tui.tui.widgets.key_footer import KeyFooter


class FolderTree(NamesTree):
    """Folders only; caches and VCS folders left out."""

    def filter_paths(self, paths: Iterable[Path]) -> Iterable[Path]:
        return [p for p in paths if _is_dir(p) and p.name not in ("__pycache__", ".git", ".venv", "node_modules")]


class FolderPickerScreen(ModalScreen[Path | None]):
    """Dismisses with the chosen folder, or None on escape.

    Enter on a folder in the tree opens it and puts its path in the box; enter
    in the box (or ctrl+u anywhere) uses that folder."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+u", "use", "Use this folder"),
    ]

    def __init__(self, title: str, start: Path, root: Path) -> None:
        super().__init__()
        self.title_text = title
        self.start = start
        self.root = root

    def compose(self) -> ComposeResult:
        with Vertical(id="picker", classes="dialog"):
            yield Label(Content(self.title_text), classes="dialog-title")
            yield PathBox(self.start, id="path", placeholder="a folder path")
            yield FolderTree(self.root, id="tree")
            yield Label(
                Content(
                    "box: type a path (relative: from where verifier-tui started), enter uses it · "
                    "tab: the tree, enter opens a folder and fills the box · ctrl+u uses it · "
                    "esc cancels"
                ),
                classes="dialog-hint",
            )
            yield Label("", id="picker-error", classes="dialog-error")
        yield KeyFooter()

    def on_mount(self) -> None:
        # Typing goes to the box as soon as the picker opens (tab reaches the
        # tree); the box's text is selected, so what is typed replaces it.
        self.query_one("#path", Input).focus()

    @on(DirectoryTree.DirectorySelected)
    def _selected(self, event: DirectoryTree.DirectorySelected) -> None:
        event.stop()
        self.query_one(PathBox).put(Path(event.path))

    @on(DirectoryTree.NodeHighlighted)
    def _highlighted(self, event: DirectoryTree.NodeHighlighted) -> None:
        data = event.node.data
        # Only while the user browses the tree: its first highlight, as it
        # loads, must not replace what is being typed in the box.
        if data is not None and event.control.has_focus:
            self.query_one(PathBox).put(data.path)

    @on(Input.Submitted, "#path")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_use()

    def action_use(self) -> None:
        box = self.query_one(PathBox)
        path = box.chosen
        if not path.is_dir():
            self.query_one("#picker-error", Label).update(content(f"{box.value.strip() or '(empty)'} is not a folder"))
            return
        self.dismiss(path)

    def action_cancel(self) -> None:
        self.dismiss(None)


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False
