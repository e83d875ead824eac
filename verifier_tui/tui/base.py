"""What the two apps (on a task, on a Harbor trial or job) share: the
stylesheet, Ctrl+C, SIGTERM and SIGHUP quitting as q does, every toast made
harmless, the command palette of each screen's keys; the style caches of
widgets that are gone let go of, and a SIGCONT that follows no stop left
alone (:mod:`~verifier_tui.tui.workarounds`)."""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from weakref import WeakSet

from textual import events
from textual.app import App, ScreenStackError, SystemCommand, UnknownModeError
from textual.binding import Binding

from verifier_tui.tui.keys import offered
from verifier_tui.tui.workarounds import continue_only_after_a_stop, release_style_caches
from verifier_tui.words.text import plain_text

if TYPE_CHECKING:
    from rich.console import RenderableType
    from textual.screen import Screen


release_style_caches()

#: How often held keys look for the dialog they wait for, and the most they wait for it
#: (a flow that never shows its dialog must not leave the keys dead).
_HOLD_CHECK_S, _HOLD_MOST_S = 0.01, 1.0


#: Ctrl+Q and Ctrl+C quit wherever they are read: never held for a dialog on its way
#: (:meth:`BaseApp.on_event`). q is held as any letter: it may be one of a case's name.
_NEVER_HELD = frozenset(("ctrl+q", "ctrl+c"))


class BaseApp(App[int]):
    #: Absolute, so the app keeps its stylesheet when subclassed in another
    #: folder (Textual reads a relative CSS_PATH beside the subclass's module).
    CSS_PATH = Path(__file__).with_name("app.tcss")
    TITLE = "verifier-tui"
    #: Ctrl+C quits, as q does (the run in flight ended first), on every
    #: screen, as entr and pytest-watcher stop on it: Textual 8 binds it to a
    #: "press q to quit" notice, and every screen and text field to "copy",
    #: which took it with nothing selected (help, the palette) or with what a
    #: field selects of itself when focused (a chooser's path). A priority
    #: binding, then, that copies only text selected on the screen.
    BINDINGS = [
        Binding("ctrl+q", "quit", "quit", show=False, priority=True),
        Binding("ctrl+c", "copy_or_quit", "quit", show=False, priority=True),
    ]

    #: Set once the app is told to end (q, Ctrl+C, a signal).
    quitting = False
    #: Keys and pastes read while a dialog is on its way, in the order read (:meth:`_hand_on_held`).
    _held: tuple[events.Key | events.Paste, ...] = ()
    _handing_on: asyncio.Task[None] | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The held keys once handed on: never held again on their way back up.
        self._handed_on: WeakSet[events.Key | events.Paste] = WeakSet()

    def exit(self, result: int | None = None, return_code: int = 0, message: RenderableType | None = None) -> None:
        from verifier_tui.tui.screens.case_name import keeping_now

        self.quitting = True
        copying = keeping_now()
        if copying and message is None:  # its thread runs on (a case is written whole or not at all): q waits, said
            message = f"{'; '.join(copying)}: verifier-tui ends once it is written"
        super().exit(result, return_code, message)

    async def on_event(self, event: events.Event) -> None:
        """Keys and clicks that come after q are dropped: read from the
        terminal in one go with it ("qi", "q?"), they reached the app before
        it ended, and the screen they pushed was mounted as it shut down,
        without its widgets: a traceback instead of the quit asked for."""
        if self.quitting and isinstance(event, events.InputEvent):
            return
        # Keys read in one go with the one that opens a dialog (s, then end, enter; k, then a
        # name, typed or pasted) reached the list beneath it, its worker not having pushed it
        # yet: held until it is up, then its own, in order (every key read after a held one
        # too, so none overtakes them). Ctrl+Q and Ctrl+C are never held.
        if (
            isinstance(event, (events.Key, events.Paste))
            and not (isinstance(event, events.Key) and event.key in _NEVER_HELD)
            and event not in self._handed_on
            and (self._held or self._keys_wait())
        ):
            # A key (or a paste) on its way back up from the widget it was handed to, where
            # its bindings are looked up: read before the key that opens the dialog had
            # acted, it is read anew where it lands.
            if event.is_forwarded:
                event = (
                    events.Key(event.key, event.character)
                    if isinstance(event, events.Key)
                    else events.Paste(event.text)
                )
            self._held += (event,)
            if self._handing_on is None:
                self._handing_on = asyncio.create_task(self._hand_on_held())
            return
        await super().on_event(event)

    def _keys_wait(self) -> bool:
        """Whether a key read now would miss the screen it is for: the screen on top
        is not mounted yet, or a dialog of it is on its way (:meth:`KeyedScreen.opening`)."""
        from verifier_tui.tui.screens.keyed import KeyedScreen

        try:
            screen = self.screen
        except (ScreenStackError, UnknownModeError):
            return False  # the app is ending: no screen to wait for
        return not screen.is_mounted or (isinstance(screen, KeyedScreen) and screen.opening())

    def _settled(self) -> bool:
        """No message on its way to the app or a widget of its screens: what the
        key handed on last does (a dialog closed, another flow started) is done."""
        nodes = (node for screen in self.screen_stack for node in screen.walk_children(with_self=True))
        return self.message_queue_size == 0 and not any(node.message_queue_size for node in nodes)

    async def _hand_on_held(self) -> None:
        """The held keys handed on one at a time, each once the one before it
        has acted and no dialog is on its way (a key handed on may close the
        dialog or open another flow: the keys after it wait for where it led).
        A dialog that does not come within a second: the keys act where they are."""
        since = time.monotonic()
        try:
            while self._held and not self.quitting:
                late = time.monotonic() - since >= _HOLD_MOST_S
                if not late and (self._keys_wait() or not self._settled()):
                    await asyncio.sleep(_HOLD_CHECK_S)
                    continue
                event, self._held = self._held[0], self._held[1:]
                self._handed_on.add(event)
                await super().on_event(event)  # as read from the terminal, past the holding
                if not late:
                    since = time.monotonic()
        except Exception as error:  # noqa: BLE001 - as the app's own message loop does
            self._handle_exception(error)
        finally:
            self._held, self._handing_on = (), None

    async def action_copy_or_quit(self) -> None:
        if self.screen.get_selected_text():
            self.screen.action_copy_text()
        else:
            await self.run_action("quit")

    def notify(self, message: str, *, title: str = "", **kwargs: Any) -> None:
        """Every toast made harmless (:func:`plain_text`) and never read as
        markup: many name a file or quote an exception, from files the tool
        did not write (a ``[`` in them is theirs). A widget's ``notify`` asks
        for markup unless told not to: it is turned off here, once."""
        kwargs["markup"] = False
        super().notify(plain_text(message), title=plain_text(title), **kwargs)

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """The screen's keys as it offers them now, each by its title, then Textual's own but its
        "Keys" (a side panel of the focused widget's keys): beside ours, "Keys  (?)" (the screen's
        help, which lists every key), it was a second command of the same name. So is Textual's
        "Quit" beside ours ("Quit  (q)", in the help's words), on a screen that offers q."""
        ours = offered(screen, enabled_only=True)
        for shown, title, does, action in ours:
            yield SystemCommand(f"{title}  ({shown})", does, functools.partial(screen.run_action, action))
        twins = {"Keys"} | ({"Quit"} if any(action == "app.quit" for *_, action in ours) else set())
        yield from (command for command in super().get_system_commands(screen) if command.title not in twins)

    def on_mount(self) -> None:
        """SIGTERM, and SIGHUP when the terminal closes, quit as q does: the run
        in flight ends its whole process group (it lives in its own session,
        so the terminal's hangup never reaches it) and the scratch folders go.
        Python's default would die at once and leave both behind. (Textual
        calls this after the subclass's own ``on_mount``.)"""
        import signal

        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGHUP):
            try:
                if signal.getsignal(signum) is signal.SIG_DFL:
                    loop.add_signal_handler(signum, self.exit)
            except (ValueError, RuntimeError, NotImplementedError):
                pass  # not the main thread, or no signals here: nothing to take over
        continue_only_after_a_stop()
