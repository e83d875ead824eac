"""Redraw a widget only when what it shows changed.

The main screen redraws its lines and panels from the session on every run
message (started, explained, finished), and most of those redraws show what
is already there: the header, the choices and the resolution of an unchanged
task, and all but one or two of the case marks. ``Static.update`` and
``OptionList.replace_option_prompt_at_index`` repaint (the first also lays
the screen out again) even then, so each run would pay for redrawing a
screen that did not change; a re-run is meant to cost little more than
the run itself.
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import OptionList, Static


def update(widget: Static, content: Content, *, layout: bool = True) -> None:
    """``widget.update(content)``, unless it shows exactly that already (text and styles)."""
    shown = widget.content
    if not (isinstance(shown, Content) and shown.is_same(content)):
        widget.update(content, layout=layout)


def replace_prompt(options: OptionList, index: int, prompt: Content) -> None:
    """The prompt of the option at ``index``, unless it is exactly that already."""
    shown = options.get_option_at_index(index).prompt
    if not (isinstance(shown, Content) and shown.is_same(prompt)):
        options.replace_option_prompt_at_index(index, prompt)
