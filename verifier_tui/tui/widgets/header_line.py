"""The line at the top: task, verifier, case and mode, each with
the key that changes it, and the sandbox runs get (wrapped between them,
never inside one, when the terminal is too narrow for all)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from textual.content import Content
from textual.widgets import Static

from verifier_tui.tui.display import content
from verifier_tui.tui.widgets import redraw
from verifier_tui.words.run import MODE_NAMES, given_limits, limits_words, preload_words, runner_words
from verifier_tui.words.text import one_line

if TYPE_CHECKING:
    from verifier_tui.engine.model import RunResult
    from verifier_tui.engine.readback import Explanation
    from verifier_tui.engine.session import Session
    from verifier_tui.tui.display import Display

LABEL = "$text-muted"
KEY = "$text-muted italic"
SEP = (" · ", "$text-muted")


def flowed(items: Sequence[Content | tuple[Any, Content]], width: int) -> Content:
    """``items`` joined by " · " (an item given as ``(separator, item)`` by its own), a line
    broken only between two (a key hint stays beside its words, the separator dropped) when
    the next would not fit ``width``; an item wider than it wraps alone."""
    lines: list[Content] = []
    for entry in items:
        sep, item = entry if isinstance(entry, tuple) else (SEP, entry)
        joined = content(lines[-1], sep, item) if lines else item
        if lines and (not width or joined.cell_length <= width):
            lines[-1] = joined
        else:
            lines.append(item)
    return Content("\n").join(lines)


class Flowing(Static):
    """Content of which a part given as a list of items is a run of them (key hints, say)
    wrapped only between two (:func:`flowed`) at the widget's width, again when it changes."""

    _parts: tuple[Any, ...] = ()

    def flow(self, *parts: Any) -> None:
        self._parts = parts
        self._draw()

    def on_resize(self) -> None:
        # Flowed again once the resize's layout is over: flowed during it, the
        # height the old flow took was kept (a summary narrowed then widened
        # again kept its narrow line count, blank lines under it).
        self.call_after_refresh(self._draw)

    def _draw(self) -> None:
        width = self.content_size.width
        shown = [flowed(p, width) if isinstance(p, list) else p for p in self._parts]
        if len(shown) == 1:
            redraw.update(self, shown[0])
        elif shown:  # joined, the pieces of one style drawn as one, as they were before they flowed
            redraw.update(self, content(*shown).simplify())


class HeaderLine(Flowing):
    """``foo · verifier tests/verifier.py v · case good s · Harbor mode m · sandbox: namespace``: the
    mode by its name alone (the header must fit 100 columns; the line below says the response)."""

    def show(self, session: Session, fmt: Display, explain: Explanation | None, result: RunResult | None) -> None:
        verifier = fmt.path(session.verifier) if session.verifier else "none found"
        case = one_line(session.case.name) if session.case else "none"
        mode_style = "bold $accent" if session.mode == "server" else "bold $primary"
        # The task's name first, always (the verifier's path may begin with its
        # folder, but a task.toml name can differ, and a reader looks here first).
        items = [
            content((one_line(session.task.name), "bold")),
            # A multi-step task's step, or none (S chooses it), as the verifier and the case are said.
            *(
                [content(("step ", LABEL), (one_line(session.step or "none"), "bold"), (" S", KEY))]
                if session.step is not None or session.task.config.steps
                else []
            ),
            content(("verifier ", LABEL), (verifier, "bold" if session.verifier else "bold $error"), (" v", KEY)),
            content(
                ("case ", LABEL),
                (case, "bold"),
                (" (inputs changed)" if session.expectation_note() else "", "$warning"),
                (" s", KEY),
            ),
            content((MODE_NAMES[session.mode], mode_style), (" m", KEY)),
        ]
        runner = runner_words(session)
        if runner is not None:  # only when the task ships its own runner
            differs = session.task.own_runner is not None and not session.task.own_runner.same_as_ours
            items.append(content((runner, "bold $warning" if differs else "bold"), (" R", KEY)))
        preload = preload_words(session)
        if preload is not None:
            items.append(content((preload, LABEL)))
        # How runs are kept apart from the user's files (engine/sandbox/isolation.py):
        # the kind here, the whole sentence (and why a copy) on hover.
        isolation = session.isolation
        namespace = isolation.kind == "namespace"
        # As the run on screen got them (a network its helper failed to give is none), as `run` says.
        limits = given_limits(session, result)
        short = limits_words(limits, namespace=namespace, short=True)
        sandbox = content(
            (isolation.short, "$warning" if isolation.kind != "namespace" else LABEL),
            *((SEP, (short, LABEL)) if short else ()),
        )
        whole = limits_words(limits, namespace=namespace)
        self.tooltip = isolation.words + (f"\n{whole}" if whole else "")
        self.flow([*items, sandbox])
