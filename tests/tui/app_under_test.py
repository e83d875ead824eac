"""The real app, watched the way a test watches it: through its own messages
and what it shows. Nothing here is in the product; the app does not know it
is being tested.

Tasks come from the root ``example`` fixture or ``tests.helpers.tasks.make_task`` at
``tmp_path/tasks/<name>``, and every TUI test starts in ``tmp_path/tasks``
(``tests/tui/conftest.py``): the app shows paths relative to the folder it was
started in, so no tmp name ever reaches the screen.
"""

from __future__ import annotations

import asyncio
import io
import os
from collections.abc import Iterable
from pathlib import Path

from rich.console import Console
from textual.command import CommandList, CommandPalette
from textual.notifications import Notify
from textual.widget import Widget
from textual.widgets import Log, OptionList

from verifier_tui.engine.changes import Change
from verifier_tui.engine.model import RunResult
from verifier_tui.engine.procfs import command_line, descendants
from verifier_tui.engine.session import Options, Session
from verifier_tui.tui.app import VerifierApp
from verifier_tui.tui.messages import RunFailed, RunFinished, RunNotPossible
from verifier_tui.tui.widgets.too_small import MIN_HEIGHT, MIN_WIDTH

#: The terminal the tests drive the app in: the smallest it accepts. What a
#: user needs to see must fit there, and a smaller screen is cheaper to draw.
SIZE = (MIN_WIDTH, MIN_HEIGHT)
#: The snapshots' terminal: the app as most terminals show it.
SNAPSHOT_SIZE = (120, 40)


class AppUnderTest(VerifierApp):
    """:class:`VerifierApp` plus a record of what ended on screen and what it
    said.

    A run's end reaches the main screen as RunFinished (or RunNotPossible, or
    RunFailed); the screen shows it, and the message then bubbles up to the
    app, where these handlers see it: so a test that waits for a run has it on
    screen. Notifications are the app's own Notify messages."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.finished: list[RunResult | None] = []
        """Every run that ended on screen, in order (None: nothing could run, or the engine failed)."""
        self.notices: list[str] = []
        """Every notification's text, in order (a pilot shows toasts only briefly)."""
        self._ended = asyncio.Event()

    def on_run_finished(self, message: RunFinished) -> None:
        self._end(message.result)

    def on_run_not_possible(self, _message: RunNotPossible) -> None:
        self._end(None)

    def on_run_failed(self, _message: RunFailed) -> None:
        self._end(None)

    def on_notify(self, message: Notify) -> None:
        self.notices.append(message.notification.message)

    def _end(self, result: RunResult | None) -> None:
        self.finished.append(result)
        self._ended.set()

    async def wait_for_runs(self, count: int, timeout: float = 20.0) -> RunResult | None:
        """Wait until ``count`` runs have ended on screen; the last one's result.
        (``workers.wait_for_complete`` would wait for the watcher forever.)"""

        async def enough() -> None:
            while len(self.finished) < count:
                self._ended.clear()
                await self._ended.wait()

        await asyncio.wait_for(enough(), timeout)
        return self.finished[count - 1]

    async def first_run_and_watcher(self) -> RunResult | None:
        """The first run ended on screen and the watcher in place: a file written after this is seen."""
        result = await self.wait_for_runs(1)
        await asyncio.wait_for(self.controller.live.watch_ready.wait(), 10)
        return result


def make_app(path: Path | str, *, watch: bool = True, deterministic: bool = True, **options) -> AppUnderTest:
    return AppUnderTest(Session(path, Options(**options)), watch=watch, deterministic=deterministic)


async def saved_with_live_reload_off(app: AppUnderTest, pilot, path: Path, text: str) -> str:
    """After the first run, live reload turned off (w), then ``text`` saved to ``path``: once the
    watcher has seen the save (the verdict marked stale), nothing has run for it. The status line
    as w left it, before the save."""
    await app.first_run_and_watcher()
    await pilot.press("w")
    await pilot.pause()
    status = widget_text(app, "#status")
    path.write_text(text)
    await wait_for(lambda: "stale" in widget_text(app, "#status"), "the verdict marked stale")
    assert len(app.finished) == 1  # nothing ran
    return status


def report_change(app: VerifierApp, paths: Iterable[Path | str]) -> None:
    """Hand the app's run controller a change of ``paths``, as its watcher would."""
    found = frozenset(Path(p).absolute() for p in paths)
    app.controller.on_change(
        Change(
            paths=found,
            deleted=frozenset(p for p in found if not p.exists()),
            names=tuple(sorted((p, p.name) for p in found)),
        )
    )


def screen_text(app: VerifierApp) -> str:
    """The screen as plain text (what a user reads), for assertions."""
    width, height = app.size
    console = Console(
        width=width,
        height=height,
        file=io.StringIO(),
        force_terminal=True,
        color_system=None,
        record=True,
        legacy_windows=False,
        safe_box=False,
    )
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text()


def footer_promises(screen) -> list[str]:
    """What the footer is given to show now: each shown key with its word, a group's keys with the group's."""
    promised: list[str] = []
    for _node, binding, _enabled, _tip in screen.active_bindings.values():
        if not binding.show:
            continue
        if binding.group is None:
            promised.append(f"{screen.app.get_key_display(binding)} {binding.description}")
        elif binding.group.description not in promised:
            promised.append(binding.group.description)
    return promised


async def palette_maximizes(app, pilot, widget) -> None:
    """``widget`` focused, then the palette's "Maximize" chosen, as a user does it."""
    widget.focus()
    await pilot.press("ctrl+p")
    await wait_for(lambda: isinstance(app.screen, CommandPalette), "the palette open")
    await pilot.press(*"maximize")
    hits = app.screen.query_one(CommandList)  # filled by a worker, a moment after the typing

    def first_hit() -> str:
        return "" if hits.highlighted is None else str(hits.get_option_at_index(hits.highlighted).prompt)

    await wait_for(lambda: first_hit().startswith("Maximize"), "the palette's Maximize highlighted")
    await pilot.press("enter")
    await wait_for(lambda: app.screen.maximized is widget, f"{widget.id} maximized")
    await pilot.pause()


def widget_text(app: VerifierApp, selector: str) -> str:
    """The plain text a widget of the main screen shows (a Log's lines, what another renders)."""
    widget = app.main.query_one(selector)
    if isinstance(widget, Log):
        return "\n".join(widget.lines)
    return rendered_text(widget)


def history_text(app: VerifierApp) -> str:
    """The run history as it reads, newest row first, each row's lines as shown."""
    rows = app.main.query_one("#history", OptionList)
    return "\n".join(str(rows.get_option_at_index(i).prompt) for i in range(rows.option_count))


def rendered_text(widget: Widget) -> str:
    """The plain text a Static-like widget renders (a Static its content, a
    line that renders its reactive attributes what they make)."""
    rendered = widget.render()
    return getattr(rendered, "plain", str(rendered))


def recorded(messages: list, kind: type) -> list:
    """Messages of one kind from a ``message_hook`` record, each once (a
    bubbling message reaches several message pumps)."""
    seen: set[int] = set()
    out = []
    for message in messages:
        if isinstance(message, kind) and id(message) not in seen:
            seen.add(id(message))
            out.append(message)
    return out


async def wait_for(condition, what: str, timeout: float = 20.0) -> None:
    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.02)

    try:
        await asyncio.wait_for(poll(), timeout)
    except asyncio.TimeoutError:
        raise AssertionError(f"timed out waiting for {what}") from None


def started_processes(before: set[int]) -> dict[int, str]:
    """The processes this test started since ``before`` (:func:`descendants`
    of this one then), each with its command line."""
    return {pid: command_line(pid) for pid in descendants(os.getpid()) - before}


def watchers(started: dict[int, str]) -> list[int]:
    """The watcher processes among ``started`` (:mod:`verifier_tui.engine.watch.child`)."""
    return [pid for pid, command in started.items() if "verifier_tui.engine.watch.child" in command]


def still_there(pids: Iterable[int]) -> list[int]:
    """Those of ``pids`` not ended and waited for (a zombie is still there)."""
    return [pid for pid in pids if os.path.exists(f"/proc/{pid}")]
