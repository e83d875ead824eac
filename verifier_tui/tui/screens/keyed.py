"""The screens with keys to learn: their ``?`` help, from their own
``BINDINGS`` (:mod:`verifier_tui.tui.keys`) and the marks they show; and the
screens a user works in (a task's, a trial's)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, TypeVar
from weakref import WeakKeyDictionary

from textual.actions import parse
from textual.app import ComposeResult
from textual.binding import Binding
from textual.events import Resize
from textual.screen import Screen
from textual.worker import Worker, WorkerState, get_current_worker

from verifier_tui.tui.display import Display
from verifier_tui.tui.keys import footer_when_wide, offered
from verifier_tui.tui.screens.help import HelpScreen, Legend, help_content
from verifier_tui.tui.widgets.too_small import MIN_HEIGHT, MIN_WIDTH, TooSmall
from verifier_tui.tui.workarounds import KeyFooter

T = TypeVar("T")


class KeyedScreen(Screen[None]):
    """``?`` shows :attr:`MARKS`, then the keys the screen offers now and
    :attr:`OTHER_KEYS`."""

    HELP_TITLE: ClassVar[str] = "keys"
    MARKS: ClassVar[Legend] = ()
    OTHER_KEYS: ClassVar[Sequence[tuple[str, str, str]]] = ()
    """``(key, title, what it does)`` of keys the screen's widgets own (enter
    in a table, tab between panels): in the help, not bound twice."""
    TABLE_KEYS: ClassVar[Sequence[tuple[str, str, str]]] = ()
    """Its tables' keys, in the help after :attr:`OTHER_KEYS`."""

    #: The flows (their workers' groups) that open a dialog: a chooser, k's name for the case.
    DIALOG_GROUPS: ClassVar[tuple[str, ...]] = ("choose", "keep")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Each dialog flow's dialog being pushed or up; None once its last one closed.
        self._dialogs: WeakKeyDictionary[Worker[Any], Screen[Any] | None] = WeakKeyDictionary()

    async def dialog(self, screen: Screen[T], *, more: bool = False) -> T:
        """``push_screen_wait`` from a dialog flow (:attr:`DIALOG_GROUPS`):
        ``more`` when the flow may push another once this one closes (the
        verifier's list, then the picker of another .py file)."""
        worker = get_current_worker()
        self._dialogs[worker] = screen
        try:
            return await self.app.push_screen_wait(screen)
        finally:
            if more:
                del self._dialogs[worker]  # on its way again till it pushes the next or ends
            else:
                self._dialogs[worker] = None

    def open_dialog(self, flow: str) -> Screen[Any] | None:
        """The dialog the flow named ``flow`` (its worker's name) has up, mounted; None while
        it has none (not pushed yet, or closed): a chooser left open follows what it lists."""
        for worker, dialog in self._dialogs.items():
            if worker.name == flow and dialog is not None and dialog.is_mounted:
                return dialog
        return None

    def opening(self) -> bool:
        """Whether a dialog of this screen is on its way: a flow that opens one
        started (the key that opens it was read) and its dialog is not up yet,
        or it closed one after which another may come. The keys read meanwhile
        are the dialog's: the app holds them till it is up and mounted (and the
        task's screen refuses its own keys meanwhile: ``s s s`` opens one
        chooser; a trial's ``r`` still replays). Once a flow's
        last dialog closed, what it does next (a replay, k's copy) holds no key."""
        for worker in self.workers:
            if worker.group not in self.DIALOG_GROUPS or worker.node is not self or worker.is_finished:
                continue
            if worker not in self._dialogs:
                return True
            dialog = self._dialogs[worker]
            if dialog is not None and dialog not in self.app.screen_stack:
                return True
        return False

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A flow or a reading worker that raised is shown, never a crash
        nor a screen left waiting (a job, two jobs compared, a trial)."""
        worker = event.worker
        if event.state is WorkerState.ERROR:
            error = worker.error
            self.notify(
                f"{worker.name}: {type(error).__name__}: {error}",
                title="something went wrong",
                severity="error",
            )

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """A key's twin for the footer (``wide('ACTION', WIDTH)``) is offered while the screen is
        wide enough for it, and the key itself is (its action's own check) then."""
        if action == "wide":
            _, name, inner = parse(str(parameters[0]))
            return self.wide_enough(int(str(parameters[1]))) and self.check_action(name, inner)
        return True

    def wide_enough(self, width: int) -> bool:
        """Whether a twin for the footer of ``width`` columns is offered."""
        return self.size.width >= width

    async def action_wide(self, action: str, _width: int) -> None:
        await self.run_action(action)

    def action_help(self) -> None:
        keys = [(shown, title, does) for shown, title, does, _action in offered(self)]
        self.app.push_screen(
            HelpScreen(help_content(self.MARKS, [*keys, *self.OTHER_KEYS, *self.TABLE_KEYS]), self.HELP_TITLE)
        )


class FolderScreen(KeyedScreen):
    """A screen on Harbor's folders (the jobs, a job, two jobs compared): a
    note's path (a link's target) said from where the user started, as
    ``run`` says it."""

    # Their tables (:class:`Table`), whose columns a narrow terminal cuts on the right
    # (the row cursor leaves ← → to the table's scrolling).
    TABLE_KEYS = (
        ("home end", "To the first or last row", "Of the table focused (page up, page down: a page at a time)"),
        (
            "← →",
            "Scroll the columns",
            "To the ones cut on the right (shift+home, shift+end: to either edge); the first (the name) stays",
        ),
    )

    def __init__(self, folder: Path) -> None:
        super().__init__()
        self.fmt = Display(folder)

    def on_resize(self) -> None:
        self.refresh_bindings()

    #: The command palette's ``▏^p palette`` at the footer's right, with the space before it.
    PALETTE_WIDTH = 12
    _measuring = False

    def wide_enough(self, width: int) -> bool:
        """Narrower than every key it offers, the footer cut the last, the way back or out: the keys
        the hint line above the tables names (:func:`named_above`) then leave it, and ``?`` is in it
        (the palette and the help list them still): that line may be cut to fit too. Measured as
        Textual 8.2.8's compact footer lays keys out: a key and its word, a space after; a group's keys
        and its word, with a space more before them."""
        if self._measuring:
            return True  # the footer as it would be with them
        self._measuring = True
        try:
            shown = [binding for _node, binding, _enabled, _tip in self.active_bindings.values() if binding.show]
        finally:
            self._measuring = False
        keys = self.app.get_key_display
        need = sum(len(f"{keys(b)} {b.description} ") for b in shown if b.group is None) + self.PALETTE_WIDTH
        for group in {b.group for b in shown if b.group is not None}:
            grouped = " ".join(keys(b) for b in shown if b.group is group)
            need += len(f" {grouped} {group.description} ")
        return super().wide_enough(width) and self.size.width >= need


def named_above(*bindings: Binding) -> list[Binding]:
    """``bindings``, in the footer while it has room for every key it offers
    (:meth:`FolderScreen.wide_enough`): the hint line above the tables names them."""
    return [twin for binding in bindings for twin in footer_when_wide(binding, 0)]


class SizedScreen(KeyedScreen):
    """A screen the user works in (a task's, a trial's): its panels, then its
    :class:`TooSmall`, shown instead of them while the terminal is smaller than
    the layout needs, and the footer."""

    def compose(self) -> ComposeResult:
        yield from self.compose_panels()
        yield TooSmall(id="too-small")
        yield KeyFooter()

    def compose_panels(self) -> ComposeResult:
        raise NotImplementedError

    def on_resize(self, event: Resize) -> None:
        self._fit(*event.size)
        self.refresh_bindings()  # the keys shown when wide, in or out of the footer

    def on_screen_resume(self) -> None:
        """A dialog over it closed: its notice names this screen's keys again."""
        self._fit(*self.size)

    def on_screen_suspend(self) -> None:
        """A dialog came over it: its notice names the dialog's esc, in view below it."""
        self._fit(*self.size)

    def _fit(self, width: int, height: int) -> None:
        small = width < MIN_WIDTH or height < MIN_HEIGHT
        self.set_class(small, "-too-small")
        if small:
            # "back", or "back('steps')" where esc names the list it goes back to
            offers = offered(self)
            back = next((title for _shown, title, _, action in offers if action.partition("(")[0] == "back"), None)
            # A dialog over it (the response editor, a chooser) has the keys:
            # q typed there is text, or nothing; esc closes it.
            self.query_one(TooSmall).show_size(width, height, back, dialog=self.app.screen is not self)
