"""One line under the header: live reload on or off, and the run in flight
(with its elapsed time) or the last run's outcome."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from verifier_tui.engine.model import RunResult
from verifier_tui.engine.task.config import REFUSED_TO_RUN
from verifier_tui.tui.display import content
from verifier_tui.tui.widgets.status_style import status_of
from verifier_tui.words.run import short_reward
from verifier_tui.words.text import one_line

if TYPE_CHECKING:
    from typing import Any

    from textual.timer import Timer

    from verifier_tui.tui.display import Display

#: How often the elapsed time of a running run is looked at (it is redrawn when what it shows changes).
TICK_S = 0.1


class ClockedLine(Widget):
    """A line that says how long the run in flight has run (a task's, a trial's replay): a run's
    time moving is what tells a long one from a frozen screen. Set ten times a second,
    ``elapsed`` is a repaint alone, on one line, so the screen is not laid out again."""

    elapsed = reactive("")
    """How long the run in flight has run, as shown."""

    def __init__(self, fmt: Display, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.fmt = fmt
        self._timer: Timer | None = None
        self._started: float | None = None

    def on_mount(self) -> None:
        self._timer = self.set_interval(TICK_S, self._tick, pause=True)

    def time_run(self, started: float | None) -> None:
        """Time the run that started at ``started`` (``time.monotonic``), or none (None)."""
        self._started = started
        self.elapsed = ""
        if self._timer is None:
            return
        if started is None:
            self._timer.pause()
        else:
            self._timer.resume()

    def _tick(self) -> None:
        if self._started is not None:
            self.elapsed = self.fmt.elapsed(time.monotonic() - self._started)


class StatusLine(ClockedLine):
    """Each attribute below, set, redraws the line. A note, an outcome or a
    run starting or ending lays it out again: the stylesheet lets the line
    wrap to three, so a long note (R's, a case kept, a run that could not
    start) is read whole."""

    watching: reactive[tuple[str, str]] = reactive(("starting", ""), layout=True)
    """Live reload's state (:class:`~verifier_tui.tui.messages.WatchStateChanged`) and its detail."""
    running: reactive[tuple[str, str, float] | None] = reactive(None, init=False, layout=True)
    """The run in flight: (case, trigger, when it started). Set as a run
    starts and ends (the ticks set ``elapsed``): laid out then, or an outcome
    shown when another case's run ends (``set_finished(None)``) kept the one
    line of "running"."""
    last: reactive[Content | None] = reactive(None, always_update=True, layout=True)
    """The last run's outcome."""
    note: reactive[Content | None] = reactive(None, always_update=True, layout=True)
    """A standing note (nothing to run, a run failed): replaced by the next run."""
    every_case = reactive(False, layout=True)
    """"Every case on save" is on: said beside live reload's state."""
    stale: reactive[str | None] = reactive(None, layout=True)
    """What changed since the shown run, live reload being off (None: nothing)."""

    def set_running(self, case: str | None, trigger: str) -> None:
        self.note = None
        self.running = (one_line(case) if case else "the current choices", one_line(trigger), time.monotonic())

    def set_finished(self, result: RunResult | None) -> None:
        self.running = None
        if result is not None:
            self.note = None  # a run's outcome replaces a standing note (b's runs start none of their own)
            symbol, word, style = status_of(result)
            reward = short_reward(result)
            self.last = content(
                (f"run #{result.sequence} ", "$text-muted"),
                (f"{symbol} {word}", style),
                (f" · reward {reward}" if reward else "", "bold"),
                (f" · {REFUSED_TO_RUN}" if result.task_refused is not None else "", "bold $error"),
                f"{'' if word in result.outcome_words else ' · ' + self.fmt.text(result.outcome_words)}"
                f" · {self.fmt.duration(result.duration_s)}",
                (f" · {one_line(result.inputs.case or 'no case')}", "$text-muted"),
            )

    def set_note(self, text: str, style: str = "$warning") -> None:
        """A key's note leaves a run in flight said (both are shown); a note
        that a run could not be made ends it first (``set_finished(None)``)."""
        self.note = content((text, style))

    def watch_running(self, running: tuple[str, str, float] | None) -> None:
        self.time_run(None if running is None else running[2])

    def render(self) -> Content:
        state, detail = self.watching
        text, style = {
            "starting": ("live reload: starting", "$text-muted"),
            "watching": ("● watching", "$success"),
            "off": ("○ not watching: r runs, w watches", "$warning"),
            "failed": (f"live reload failed: {detail} (w retries)", "$error"),
        }.get(state, (state, ""))
        parts: list[str | Content | tuple[str, str]] = [
            (text, style),
            (" · every case on save" if self.every_case else "", "bold $accent"),
            ("   ", ""),
        ]
        if self.stale is not None and self.running is None:  # first, where a narrow screen does not cut it
            parts += [(f"stale: {self.stale} since this run", "bold $warning"), ("   ", "")]
        if self.running is not None:
            case, trigger, _started = self.running
            parts += [("▶ running ", "bold $accent"), f"{case} ", (f"after {trigger}", "$text-muted")]
            if self.elapsed:
                parts.append((f"  {self.elapsed}", "bold"))
            if self.note is not None:
                parts += [("   ", ""), self.note]
        elif self.note is not None:
            parts.append(self.note)
        elif self.last is not None:
            parts.append(self.last)
        else:
            parts.append(("no run yet (r runs)", "$text-muted"))
        return content(*parts)
