"""Type the agent's response: plain text (wrapped into a minimal Responses API
response, as the tool does for response.txt) or the Responses API JSON itself.

Each pause in typing re-runs, like saving a file; typed JSON only once it
parses (a run of half-typed JSON would only fail). The editor covers the top of
the screen only, so the verdict and stderr stay in view below it."""

from __future__ import annotations

import json
from collections.abc import Callable

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Label, TextArea

from verifier_tui.tui.display import content
from verifier_tui.tui.workarounds import KeyFooter

#: Pause after the last key before the typed response is run. 400 ms: people
#: type 3-6 keys a second, so a run does not start between two keys of a word,
#: yet a pause to look at the result feels as quick as a save.
EDIT_PAUSE_S = 0.4


class ResponseEditorScreen(ModalScreen[str | None]):
    """Dismissed with the text on screen when it is JSON that does not parse
    (the runs keep the last that did; the editor opens on it again), else None."""

    BINDINGS = [
        Binding("escape", "close", "close editor"),
        Binding("ctrl+t", "toggle_kind", "text / JSON"),
    ]

    def __init__(self, text: str, kind: str, on_edit: Callable[[str, str], None], *, run_at_once: bool = True) -> None:
        """``run_at_once`` False: the editor opens empty in place of a file it
        could not open (too big, escape codes), so the runs keep that file
        until something is typed (an empty typed response would take its
        place without a word)."""
        super().__init__()
        self.text = text
        self.kind = kind
        self.on_edit = on_edit
        self._timer: Timer | None = None
        self._untouched = not run_at_once

    def compose(self) -> ComposeResult:
        with Vertical(id="editor", classes="dialog"):
            yield Label("", id="editor-title", classes="dialog-title")
            yield TextArea(self.text, id="response-text", soft_wrap=True, show_line_numbers=False)
            yield Label("", id="editor-state")
            yield Label(
                Content(
                    "runs after each pause in typing, like a saved file · esc closes (the typed response stays chosen)"
                ),
                classes="dialog-hint",
            )
        yield KeyFooter()

    def on_mount(self) -> None:
        self._describe()
        self.query_one(TextArea).focus()
        self._apply()  # what the editor opens with runs at once

    @on(TextArea.Changed)
    def _changed(self, event: TextArea.Changed) -> None:
        self.text = event.text_area.text
        self._untouched = False
        self._describe()
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(EDIT_PAUSE_S, self._apply)

    def _apply(self) -> None:
        self._timer = None
        if self._untouched:
            return  # nothing typed yet in place of the file the editor could not open: the runs keep it
        if self.kind == "json" and json_error(self.text) is not None:
            return  # the state line says where it does not parse; the last run stays on screen
        self.on_edit(self.text, self.kind)

    def action_toggle_kind(self) -> None:
        self.kind = "json" if self.kind == "text" else "text"
        self._describe()
        self._apply()

    def action_close(self) -> None:
        if self._untouched:
            # Opened empty over a file it could not open, nothing typed: nothing to keep or say. A draft
            # of the empty text would open the editor on it next time, and its ctrl+t run it in the file's place.
            self.dismiss(None)
            return
        if self._timer is not None:
            self._timer.stop()
            self._apply()
        error = json_error(self.text) if self.kind == "json" else None
        if error is not None:  # closed on half-typed JSON: what runs is not what is on screen, said
            self.notify(
                f"the typed JSON does not parse ({error}): runs keep the last response that did; "
                "the JSON editor opens again on what was typed",
                severity="warning",
            )
        self.dismiss(self.text if error is not None else None)

    def _describe(self) -> None:
        if self.kind == "text":
            title = "Response: plain text (wrapped into one assistant message)"
            state, style = "the runner receives it as a Responses API response with this one message", "$text-muted"
        else:
            title = "Response: Responses API JSON (passed as typed)"
            state, style = json_state(self.text)
        self.query_one("#editor-title", Label).update(Content(title))
        self.query_one("#editor-state", Label).update(content((state, style)))


def json_error(text: str) -> str | None:
    """Where and why ``text`` does not parse as JSON, or None when it does."""
    if not text.strip():
        return "empty"
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return f"line {exc.lineno}, column {exc.colno}: {exc.msg}"
    except ValueError as exc:  # e.g. a number too long to convert
        return str(exc)
    except RecursionError:  # ten thousand [ typed or pasted
        return "nested too deeply for Python's json module"
    return None


def json_state(text: str) -> tuple[str, str]:
    """A line on whether ``text`` is what the runner accepts as a response."""
    error = json_error(text)
    if error is not None:
        return f"not valid JSON yet ({error}): not run until it parses", "$warning"
    value = json.loads(text)
    if not isinstance(value, dict):
        from verifier_tui.engine.untrusted import json_kind

        # in JSON's words, as typed (Python's NoneType or list were not)
        return f"the response holds {json_kind(value)}, not an object: the runner will refuse it", "$warning"
    return "a JSON object ✓", "$success"
