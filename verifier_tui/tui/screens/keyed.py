"""The screens with keys to learn: their ``?`` help, from their own
``BINDINGS`` (:mod:`verifier_tui.tui.keys`) and the marks they show; and the
screens a user works in (a task's, a trial's)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar
from weakref import WeakSet

from textual.events import Resize, ScreenSuspend
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from verifier_tui.tui.display import Display
from verifier_tui.tui.keys import offered
from verifier_tui.tui.screens.help import HelpScreen, Legend, help_content
from verifier_tui.tui.widgets.too_small import MIN_HEIGHT, MIN_WIDTH, TooSmall


class KeyedScreen(Screen[None]):
    """``?`` shows :attr:`MARKS`, then the keys the screen offers now and
    :attr:`OTHER_KEYS`."""

    HELP_TITLE: ClassVar[str] = "keys"
    MARKS: ClassVar[Legend] = ()
    OTHER_KEYS: ClassVar[Sequence[tuple[str, str, str]]] = ()
    """``(key, title, what it does)`` of keys the screen's widgets own (enter
    in a table, tab between panels): in the help, not bound twice."""

    #: The flows (their workers' groups) that open a dialog: a chooser, k's name for the case.
    DIALOG_GROUPS: ClassVar[tuple[str, ...]] = ("choose", "keep")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._shown: WeakSet[Worker[Any]] = WeakSet()  # the dialog flows whose dialog came up

    def opening(self) -> bool:
        """Whether a dialog of this screen is on its way (a chooser, k's case
        name): its flow started (the key that opens it was read) and its dialog
        is not up yet. The keys read meanwhile are the dialog's: the app holds
        them till then."""
        return any(w not in self._shown for w in self._dialog_flows())

    def _dialog_flows(self) -> list[Worker[Any]]:
        return [w for w in self.workers if w.group in self.DIALOG_GROUPS and w.node is self and not w.is_finished]

    def on_screen_suspend(self, _event: ScreenSuspend) -> None:
        """A dialog came up over this screen: the flows that opened it are
        no longer on their way (what they do once it closes, a replay or k's
        copy, say, holds no key)."""
        self._shown.update(self._dialog_flows())

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
                markup=False,
            )

    def action_help(self) -> None:
        keys = [(shown, title, does) for shown, title, does, _action in offered(self)]
        self.app.push_screen(HelpScreen(help_content(self.MARKS, [*keys, *self.OTHER_KEYS]), self.HELP_TITLE))


class FolderScreen(KeyedScreen):
    """A screen on Harbor's folders (the jobs, a job, two jobs compared): a
    note's path (a link's target) said from where the user started, as
    ``run`` says it."""

    def __init__(self, folder: Path) -> None:
        super().__init__()
        self.fmt = Display(folder)


class SizedScreen(KeyedScreen):
    """A screen the user works in (a task's, a trial's): it shows its
    :class:`TooSmall` (which it composes) instead of itself while the terminal
    is smaller than the layout needs."""

    def on_resize(self, event: Resize) -> None:
        self._fit(*event.size)

    def on_screen_resume(self) -> None:
        """A dialog over it closed: its notice names this screen's keys again."""
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
