"""One line under the header: live reload on or off, and the run in flight
(with its elapsed time) or the last run's outcome."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from textual.content import Content
from textual.widgets import Static

from verifier_tui.engine.model import RunResult
from verifier_tui.tui.display import content
from verifier_tui.tui.widgets import redraw
from verifier_tui.tui.widgets.status_style import status_of
from verifier_tui.words.run import short_reward
from verifier_tui.words.text import one_line

if TYPE_CHECKING:
    from textual.timer import Timer

    from verifier_tui.tui.display import Display

#: How often the elapsed time of a running run is redrawn.
TICK_S = 0.1


class StatusLine(Static):
    def __init__(self, fmt: Display, **kwargs) -> None:
        super().__init__(**kwargs)
        self.fmt = fmt
        self.watch_words = ("live reload: starting", "$text-muted")
        self.running: tuple[str, str, float] | None = None  # (case, trigger, started)
        self.last: Content | None = None
        self.note: Content | None = None
        self.stale: str | None = None
        """What changed since the shown run, live reload being off (None: nothing)."""
        self._timer: Timer | None = None

    def on_mount(self) -> None:
        self._timer = self.set_interval(TICK_S, self._tick, pause=True)
        self._draw()

    def set_watch(self, state: str, detail: str = "") -> None:
        words = {
            "starting": ("live reload: starting", "$text-muted"),
            "watching": ("● watching", "$success"),
            "off": ("○ not watching: r runs, w watches", "$warning"),
            "failed": (f"live reload failed: {detail} (w retries)", "$error"),
        }
        self.watch_words = words.get(state, (state, ""))
        self._draw()

    def set_running(self, case: str | None, trigger: str) -> None:
        self.running = (one_line(case) if case else "the current choices", trigger, time.monotonic())
        self.note = None
        if self._timer is not None:
            self._timer.resume()
        self._draw()

    def set_finished(self, result: RunResult | None) -> None:
        self.running = None
        if self._timer is not None:
            self._timer.pause()
        if result is not None:
            symbol, word, style = status_of(result)
            reward = short_reward(result)
            self.last = content(
                (f"run #{result.sequence} ", "$text-muted"),
                (f"{symbol} {word}", style),
                (f" · reward {reward}" if reward else "", "bold"),
                f"{'' if word in result.outcome_words else ' · ' + self.fmt.text(result.outcome_words)}"
                f" · {self.fmt.duration(result.duration_s)}",
                (f" · {one_line(result.case or 'no case')}", "$text-muted"),
            )
        self._draw()

    def set_note(self, text: str, style: str = "$warning") -> None:
        """A standing note (nothing to run, a run failed): replaced by the next run."""
        self.running = None
        if self._timer is not None:
            self._timer.pause()
        self.note = content((text, style))
        self._draw()

    def set_stale(self, what: str | None) -> None:
        self.stale = what
        self._draw()

    def _tick(self) -> None:
        self._draw()

    def _draw(self) -> None:
        text, style = self.watch_words
        parts: list = [(text, style), ("   ", "")]
        if self.stale is not None and self.running is None:  # first, where a narrow screen does not cut it
            parts += [(f"stale: {self.stale} changed since this run", "bold $warning"), ("   ", "")]
        if self.running is not None:
            case, trigger, started = self.running
            elapsed = self.fmt.elapsed(time.monotonic() - started)
            parts += [("▶ running ", "bold $accent"), f"{case} ", (f"after {trigger}", "$text-muted")]
            if elapsed:
                parts.append((f"  {elapsed}", "bold"))
        elif self.note is not None:
            parts.append(self.note)
        elif self.last is not None:
            parts.append(self.last)
        else:
            parts.append(("no run yet (r runs)", "$text-muted"))
        # One line high in the stylesheet whatever it says: a repaint, not a
        # layout of the whole screen (twice a run, and ten times a second while
        # one runs; the layouts were about a sixth of a re-run's CPU in the app).
        redraw.update(self, content(*parts), layout=False)
