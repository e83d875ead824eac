"""A short list to choose from (a case, a verifier, where a response comes from)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from verifier_tui.tui.display import content
from verifier_tui.tui.workarounds import KeyFooter


class ChooseListScreen(ModalScreen[str | None]):
    """Dismisses with the chosen option's id, or None on escape."""

    BINDINGS = [Binding("escape", "cancel", "cancel")]

    def __init__(
        self,
        title: str,
        options: list[tuple[str, Content | str]],
        current: str | None = None,
        hint: str = "enter chooses · esc cancels",
    ) -> None:
        super().__init__()
        self.title_text = title
        self.choices = options
        self.current = current
        self.hint = hint

    def compose(self) -> ComposeResult:
        with Vertical(id="chooser", classes="dialog"):
            yield Label(Content(self.title_text), classes="dialog-title")
            yield OptionList(*self._options(), id="options")
            yield Label(Content(self.hint), classes="dialog-hint")
        yield KeyFooter()

    def _options(self) -> list[Option]:
        return [Option(label if isinstance(label, Content) else content(label), id=key) for key, label in self.choices]

    def offer(self, options: list[tuple[str, Content | str]]) -> None:
        """Offer ``options`` instead while open (what they list changed on
        disk: a case folder renamed, added, removed): the cursor stays on its
        option, or at its place when that one is gone."""
        if [(key, str(label)) for key, label in options] == [(key, str(label)) for key, label in self.choices]:
            return
        self.choices = options
        listed = self.query_one(OptionList)
        was = listed.highlighted_option.id if listed.highlighted_option is not None else None
        place = listed.highlighted or 0
        listed.set_options(self._options())
        ids = [key for key, _ in options]
        listed.highlighted = ids.index(was) if was in ids else min(place, len(ids) - 1)

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        ids = [key for key, _ in self.choices]
        if self.current in ids:
            options.highlighted = ids.index(self.current)
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
