"""A screen's keys: its one ``BINDINGS`` list feeds the footer (each key's
word), the command palette and the ``?`` help (each key's title and what it
does: the two lines of its tooltip, which the footer shows on hover).
A footer's words are lower case on every screen, a dialog's too (``esc cancel``,
written as a plain ``Binding`` there): one footer, one style."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from textual.binding import Binding

if TYPE_CHECKING:
    from textual.screen import Screen


def key(key: str, action: str, word: str, title: str, does: str, **kwargs: Any) -> Binding:
    """``key`` runs ``action``: ``word`` in the footer, ``title`` and what it
    ``does`` in the palette and the help."""
    return Binding(key, action, word, tooltip=f"{title}\n{does}", **kwargs)


QUIT = key("q", "app.quit", "quit", "Quit", "Quit verifier-tui")
HELP = key("?", "help", "help", "Keys", "This list")  # a screen with no marks to explain


def footer_when_wide(binding: Binding, width: int) -> list[Binding]:
    """``binding``, left out of the footer (which must fit 100 columns, the
    narrowest a screen draws in), and before it its twin shown in the footer,
    run as ``wide('ACTION', WIDTH)``: a :class:`~verifier_tui.tui.screens.keyed.KeyedScreen`
    offers the twin only while it is ``width`` columns wide or more (at 160 the
    footer had half its line empty, the key unseen), else the binding itself.
    One of the two is offered at a time, so the palette and the help list the key once."""
    twin = dataclasses.replace(binding, action=f"wide({binding.action!r}, {width})", show=True)
    return [twin, dataclasses.replace(binding, show=False)]


def output_keys(whose: str) -> list[Binding]:
    """``o``, worded as the stream it shows next: two bindings of one key,
    the screen's ``check_action`` offering the one whose stream is not on
    screen (``show_output`` with the stream shown answers False), so the
    footer, the palette and the help all name what ``o`` toggles to."""
    return [
        key(
            "o", f"show_output('{stream}')", stream, f"Show {whose} {stream}", f"Instead of its {other} (o again: back)"
        )
        for stream, other in (("stdout", "stderr"), ("stderr", "stdout"))
    ]


def offered(screen: Screen[Any], *, enabled_only: bool = False) -> list[tuple[str, str, str, str]]:
    """(key as shown, title, what it does, action) of each of ``screen``'s own
    keys, in its BINDINGS' order, as it offers them now: one its
    ``check_action`` refuses (R for a task without its own runner) is left out,
    as the footer leaves it out. One it disables for now (esc on the latest
    run: None) is left out too with ``enabled_only`` (the palette, where it
    would do nothing), kept otherwise (the help, which teaches it)."""
    found = []
    for node, binding, enabled, _tooltip in screen.active_bindings.values():
        if node is screen and binding.tooltip and (enabled or not enabled_only):
            title, _, does = binding.tooltip.partition("\n")
            found.append((screen.app.get_key_display(binding), title, does, binding.action))
    return found
