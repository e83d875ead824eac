"""Every place verifier-tui reaches into Textual's private parts, each with
the Textual issue, or the behaviour of Textual 8.2.8 (pinned), it works
around. A Textual upgrade starts here: each can go once Textual no longer
behaves so (each checks what it relies on, and stands aside when Textual
changed it)."""

from __future__ import annotations

import functools
import signal
from typing import TYPE_CHECKING, Any, ClassVar

from textual._styles_cache import StylesCache
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Footer

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from textual.color import Color
    from textual.style import Style
    from textual.widgets.data_table import RowKey


def release_style_caches() -> None:
    """Textualize/textual#6665: ``StylesCache.get_inner_outer`` is wrapped in
    ``functools.lru_cache`` as a plain method, so the cache's keys hold the
    ``StylesCache`` of every widget that drew a background, with all the lines
    it rendered, long after the widget is gone: up to 1,024 of them. A session
    kept open all day mounts new widgets with each chooser, history entry and
    trial it opens. This is the same cache, keyed by the two colours alone
    (the method reads nothing else)."""
    cached = StylesCache.__dict__.get("get_inner_outer")
    compute: Callable[[type[StylesCache], Color, Color], tuple[Style, Style]] | None = getattr(
        cached, "__wrapped__", None
    )
    if compute is None or not hasattr(cached, "cache_info"):
        return  # Textual no longer caches it that way

    @functools.lru_cache(1024)
    def get_inner_outer(base_background: Color, background: Color) -> tuple[Style, Style]:
        return compute(StylesCache, base_background, background)

    StylesCache.get_inner_outer = staticmethod(get_inner_outer)  # type: ignore[method-assign,assignment]


def continue_only_after_a_stop() -> None:
    """Textual 8.2.8's ``LinuxDriver`` starts application mode again on every
    SIGCONT (meant for ``fg`` after a SIGTSTP), with a new thread reading the terminal,
    whether or not the app had stopped, and still once it has exited. A
    terminal that closes sends SIGCONT with its SIGHUP, as ``kill -CONT`` does
    to a process that never stopped: a second reader started beside the
    first, and the one the app's exit did not join kept the process alive
    (it is not a daemon). Its SIGCONT handler is kept for a continue after
    its own SIGTSTP handler stopped the app, which sets ``_must_signal_resume``
    (cleared again as application mode starts). Called from the app's mount,
    once the driver has put its handlers in place."""
    from textual.drivers.linux_driver import LinuxDriver

    handler = signal.getsignal(signal.SIGCONT)
    driver = getattr(handler, "__self__", None)
    if not callable(handler) or not isinstance(driver, LinuxDriver) or not hasattr(driver, "_must_signal_resume"):
        return  # another driver, or Textual no longer handles SIGCONT so

    def on_continue(signum: int, frame: Any) -> None:
        if driver._must_signal_resume:
            handler(signum, frame)

    try:
        signal.signal(signal.SIGCONT, on_continue)
    except ValueError:
        pass  # not the main thread: Textual's handler is not there either


class KeyFooter(Footer):
    """The footer of every screen: Textual's, made again only when its keys change.

    Textual 8.2.8's ``Footer`` recomposes (a new widget per key, with its
    styles) each time its screen signals that its bindings were updated,
    which it does on every focus move and twice more while a screen starts,
    nearly always for the same keys. This one compares what it would show
    with what it shows and keeps it when they are the same: moving the focus
    between two lists, or starting the app, then composes no footer for
    nothing. It reads the private ``_pruning`` (as ``Widget.recompose`` does)
    and ``_bindings_ready`` (as ``Footer.compose`` does)."""

    def __init__(self) -> None:
        super().__init__(compact=True)
        self._shown: tuple[Any, ...] | None = None

    def _keys(self) -> tuple[Any, ...]:
        """What :meth:`Footer.compose` reads of the screen's bindings."""
        return tuple(
            (b.key, b.action, b.description, b.show, b.key_display, b.group, b.tooltip, enabled, tooltip)
            for (_node, b, enabled, tooltip) in self.screen.active_bindings.values()
        )

    async def recompose(self) -> None:
        if not self.is_attached or self._pruning:
            return  # as Widget.recompose: a footer of a screen being dismissed
        keys = self._keys() if self._bindings_ready else None
        if keys is not None and keys == self._shown:
            return
        self._shown = keys
        await super().recompose()


class Table(DataTable[Any]):
    """The table of the job screens. Textual 8.2.8's ``DataTable`` measures
    new rows' columns when it is next idle (``_update_dimensions``), and
    caches each row it draws under ``_update_count``, a key that holds no
    width; a frame drawn in between (the cursor's row is repainted as soon as
    rows arrive) kept those cells at the old widths until something else
    changed: the jobs list showed its first row cut to the headers' widths
    ("mul" for multi-step, "2026-12" for the date). Once measured, the rows
    are drawn again."""

    #: A table of rows, as in a pager or a file list: home and end go to the
    #: first and last row (Textual's DataTable gives them to the columns, and
    #: the rows to ctrl+home and ctrl+end); shift+home and shift+end scroll
    #: the columns to either edge instead.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("home", "scroll_top", "First row", show=False),
        Binding("end", "scroll_bottom", "Last row", show=False),
        Binding("shift+home", "scroll_home", "Leftmost columns", show=False),
        Binding("shift+end", "scroll_end", "Rightmost columns", show=False),
    ]

    def _update_dimensions(self, new_rows: Iterable[RowKey]) -> None:
        super()._update_dimensions(new_rows)
        self._update_count += 1  # the key of every cached cell, row and line
        self.refresh()
