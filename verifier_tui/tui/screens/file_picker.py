"""Choose a file (a response, task data, a verifier): browse with a tree, or type a path."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import DirectoryTree, Input, Label

from verifier_tui.tui.display import content
from verifier_tui.tui.widgets.key_footer import KeyFooter
from verifier_tui.words.text import one_line

if TYPE_CHECKING:
    from rich.text import Text, TextType

_SKIP = ("__pycache__", ".git", ".venv", "node_modules")


class NamesTree(DirectoryTree):
    """A tree of the user's folders, each name shown harmless and on its
    line: a case folder may come from anywhere (a bidi override in its name)."""

    def process_label(self, label: TextType) -> Text:
        return super().process_label(one_line(label) if isinstance(label, str) else label)


class FileTree(NamesTree):
    def __init__(self, path: Path, suffixes: tuple[str, ...] = (), **kwargs) -> None:
        super().__init__(path, **kwargs)
        self.suffixes = suffixes

    def filter_paths(self, paths: Iterable[Path]) -> Iterable[Path]:
        out = []
        for path in paths:
            if path.name in _SKIP:
                continue
            try:
                folder = path.is_dir()
            except OSError:
                continue
            if folder or not self.suffixes or path.suffix.lower() in self.suffixes:
                out.append(path)
        return out


class PathBox(Input):
    """A picker's box. A path put in it is shown harmless and on its line (a
    folder's name may hold a bidi override); used as shown, it is that path,
    else what was typed (:func:`typed_path`)."""

    def __init__(self, path: Path | None, **kwargs) -> None:
        super().__init__(one_line(str(path)) if path is not None else "", **kwargs)
        self.path = path

    def put(self, path: Path) -> None:
        self.path = path
        self.value = one_line(str(path))

    @property
    def chosen(self) -> Path:
        text = self.value.strip()
        if self.path is not None and text == one_line(str(self.path)).strip():
            return self.path
        return typed_path(text)


class FilePickerScreen(ModalScreen[Path | None]):
    """Dismisses with the chosen file, or None on escape."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, root: Path, suffixes: tuple[str, ...] = (), start: Path | None = None) -> None:
        super().__init__()
        self.title_text = title
        self.root = root
        self.suffixes = suffixes
        self.start = start

    def compose(self) -> ComposeResult:
        with Vertical(id="picker", classes="dialog"):
            yield Label(Content(self.title_text), classes="dialog-title")
            yield PathBox(self.start, id="path", placeholder="a file path (enter uses it)")
            yield FileTree(self.root, self.suffixes, id="tree")
            yield Label(
                Content(
                    "box: type a path (relative: from where verifier-tui started), enter uses it · "
                    "tab: the tree, enter on a file uses it · esc cancels"
                ),
                classes="dialog-hint",
            )
            yield Label("", id="picker-error", classes="dialog-error")
        yield KeyFooter()

    def on_mount(self) -> None:
        # Typing goes to the box as soon as the picker opens (tab reaches the
        # tree); the box's text is selected, so what is typed replaces it.
        self.query_one("#path", Input).focus()

    @on(DirectoryTree.FileSelected)
    def _selected(self, event: DirectoryTree.FileSelected) -> None:
        event.stop()
        self.dismiss(Path(event.path).absolute())

    @on(Input.Submitted, "#path")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        path = self.query_one(PathBox).chosen
        if not path.is_file():
            self.query_one("#picker-error", Label).update(content(f"{event.value.strip() or '(empty)'} is not a file"))
            return
        self.dismiss(path)

    def action_cancel(self) -> None:
        self.dismiss(None)


def typed_path(text: str) -> Path:
    """A path typed into a picker's box, as a shell would take it: ``~``
    expanded, a relative path from the folder the tool was started in."""
    return Path(text).expanduser().absolute()
