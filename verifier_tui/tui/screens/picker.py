"""Choose a file (a response, task data, a verifier) or a folder (the
workspace, a trial's stand-in for /app): browse with a tree, or type a path."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import DirectoryTree, Input, Label

from verifier_tui.engine.filters import NOT_SEARCHED
from verifier_tui.tui.display import content
from verifier_tui.tui.workarounds import KeyFooter
from verifier_tui.words.paths import here
from verifier_tui.words.text import one_line

if TYPE_CHECKING:
    from typing import Any

    from rich.text import Text, TextType
    from textual.widgets.directory_tree import DirEntry

_TYPED = "box: type a path (relative: from where verifier-tui started), enter uses it · "


class PathTree(DirectoryTree):
    """The user's folders (caches, VCS internals and installed software left
    out, as every search for a task leaves them), and with ``suffixes`` (any,
    when empty) their files, unless ``folders`` only; each name shown harmless
    and on its line: a case folder may come from anywhere (a bidi override in
    its name)."""

    def __init__(self, path: Path, suffixes: tuple[str, ...], folders: bool, **kwargs: Any) -> None:
        super().__init__(path, **kwargs)
        self.suffixes = suffixes
        self.folders = folders

    def process_label(self, label: TextType) -> Text:
        return super().process_label(one_line(label) if isinstance(label, str) else label)

    def filter_paths(self, paths: Iterable[Path]) -> Iterable[Path]:
        return [path for path in paths if path.name not in NOT_SEARCHED and self._shown(path)]

    def _shown(self, path: Path) -> bool:
        try:
            folder = path.is_dir()
        except OSError:
            return False
        return folder or not (self.folders or self.suffixes and path.suffix.lower() not in self.suffixes)


class PathBox(Input):
    """A picker's box. A path put in it is shown as the user would type it
    (:func:`~verifier_tui.words.paths.here`: from ``base``, where the tool
    started, which is where a typed relative path is taken from), harmless and
    on its line (a folder's name may hold a bidi override); used as shown, it
    is that path, else what was typed (:func:`typed_path`)."""

    def __init__(self, path: Path | None, base: Path, **kwargs: Any) -> None:
        super().__init__(here(path, base) if path is not None else "", **kwargs)
        self.path = path
        self.base = base

    def put(self, path: Path) -> None:
        self.path = path
        self.value = here(path, self.base)

    @property
    def chosen(self) -> Path:
        text = self.value.strip()
        if self.path is not None and text == here(self.path, self.base).strip():
            return self.path
        return typed_path(text, self.base)


class PickerScreen(ModalScreen[Path | None]):
    """Dismisses with the chosen file (or, with ``folders``, folder), or None
    on escape. A file is chosen by enter on it in the tree; a folder is opened
    by enter in the tree, which puts its path in the box, and chosen by enter
    in the box (or ctrl+u anywhere, the box too)."""

    BINDINGS = [
        Binding("escape", "cancel", "cancel"),
        # Before the box's own ctrl+u (erase to the start of the line): the
        # box has the keys when the picker opens, and the hint says ctrl+u
        # uses the folder (a file picker, which has none, leaves it to the box).
        Binding("ctrl+u", "use", "use this folder", priority=True),
    ]

    def __init__(
        self,
        title: str,
        root: Path,
        start: Path | None = None,
        *,
        base: Path,
        suffixes: tuple[str, ...] = (),
        folders: bool = False,
    ) -> None:
        super().__init__()
        self.title_text = title
        self.root = root
        self.start = start
        self.base = base
        """Where a path in the box is shown and typed from: where the tool started (the screen's
        ``fmt.cwd``, read as it started: the folder may be removed since, and ``Path.cwd()`` raise)."""
        self.suffixes = suffixes
        self.folders = folders
        self.apply: Callable[[Path], str | None] | None = None
        """Applies the path chosen; why it was refused (None: it was not), said
        here, the picker open with what was typed (it closed, and the keys
        typed next went to the screen below as its commands)."""

    def compose(self) -> ComposeResult:
        hint = (
            "tab: the tree, enter opens a folder and fills the box · ctrl+u uses it · esc cancels"
            if self.folders
            else "tab: the tree, enter on a file uses it · esc cancels"
        )
        with Vertical(id="picker", classes="dialog"):
            yield Label(Content(self.title_text), classes="dialog-title")
            placeholder = "a folder path" if self.folders else "a file path (enter uses it)"
            yield PathBox(self.start, self.base, id="path", placeholder=placeholder)
            yield PathTree(self.root, self.suffixes, self.folders, id="tree")
            yield Label(Content(_TYPED + hint), classes="dialog-hint")
            yield Label("", id="picker-error", classes="dialog-error")
        yield KeyFooter()

    def on_mount(self) -> None:
        # Typing goes to the box as soon as the picker opens (tab reaches the
        # tree); the box's text is selected, so what is typed replaces it.
        self.query_one("#path", Input).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """ctrl+u picks a folder; a file is picked by enter."""
        return action != "use" or self.folders

    @on(DirectoryTree.FileSelected)
    def _file_selected(self, event: DirectoryTree.FileSelected) -> None:
        event.stop()
        if self.folders:
            # Textual's tree says a root it cannot read as a folder (gone) is a file: no choice in a
            # folder picker.
            return
        self._use(Path(event.path).absolute())

    @on(DirectoryTree.DirectorySelected)
    def _folder_selected(self, event: DirectoryTree.DirectorySelected) -> None:
        event.stop()
        if self.folders:
            self.query_one(PathBox).put(Path(event.path))

    @on(DirectoryTree.NodeHighlighted)
    def _highlighted(self, event: DirectoryTree.NodeHighlighted[DirEntry]) -> None:
        data = event.node.data
        # Only while the user browses the tree: its first highlight, as it
        # loads, must not replace what is being typed in the box.
        if self.folders and data is not None and event.control.has_focus:
            self.query_one(PathBox).put(data.path)

    @on(Input.Submitted, "#path")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_use()

    def action_use(self) -> None:
        box = self.query_one(PathBox)
        path = box.chosen
        # An empty box names no path: taken from where the tool started, it was that folder, and a
        # folder picker made it /app unasked (the user's home, say) where a file picker refused it.
        if not box.value.strip() or not (path.is_dir() if self.folders else path.is_file()):
            kind = "folder" if self.folders else "file"
            self.query_one("#picker-error", Label).update(content(f"{box.value.strip() or '(empty)'} is not a {kind}"))
            return
        self._use(path)

    def _use(self, path: Path) -> None:
        if not self.is_current:
            # Chosen once already (a second enter, a message after it): a second dismiss would
            # take the screen below away too.
            return
        problem = self.apply(path) if self.apply is not None else None
        if problem is not None:
            self.query_one("#picker-error", Label).update(content(problem))
            return
        self.dismiss(path)

    def action_cancel(self) -> None:
        self.dismiss(None)


def typed_path(text: str, base: Path) -> Path:
    """A path typed into a picker's box, as a shell would take it: ``~``
    expanded, a relative path from ``base`` (the folder the tool was started
    in, as the box shows paths from it; never ``Path.cwd()``, which raises once
    that folder is removed). The text is expanded, not its Path: pathlib
    drops a leading ``./``, and ``./~/ws`` (a folder named ``~``) would
    become the home folder's ``ws``."""
    return base / os.path.expanduser(text)
