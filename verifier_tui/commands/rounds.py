"""``test --watch``: every case, then every case again on each save that a
case's run reads, as pytest-watcher re-runs a suite. A round runs what plain
``test`` runs (:func:`~verifier_tui.engine.suite.arun_groups`, warm where
``--jobs`` leaves a CPU idle) and says it as ``test`` does: on a terminal the
screen is cleared and the table drawn again; otherwise each round's table
follows a line naming the round, what changed and when; ``--json`` prints
each round's test document on one line.

Each task is watched by its own :class:`~verifier_tui.engine.watch.live.LiveRuns`
(its session's targets, the task re-read when its shape changes), which asks
the one scheduler of rounds for a round. A save during a round supersedes it:
the round in flight is ended (its runners too) and a new one starts, so the
last table is always of the files as they were last saved.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any

from verifier_tui.commands import report, terminal
from verifier_tui.words.text import one_line

if TYPE_CHECKING:
    import argparse
    from pathlib import Path

    from verifier_tui.engine.changes import Change
    from verifier_tui.engine.model import RunResult
    from verifier_tui.engine.suite import Collection, TaskCases

#: Clears a terminal and puts the cursor top left (what pytest-watcher does before a run).
CLEAR = "\x1b[2J\x1b[H"


def watch_rounds(collection: Collection, args: argparse.Namespace) -> int:
    """Rounds until Ctrl+C (exit 0), SIGTERM, or the reader of the output going away."""
    from verifier_tui.commands.watching import watch_to_the_end

    problem = watch_to_the_end(_rounds(collection, args), args.poll)
    if problem is not None:
        terminal.error(problem)
        return 2
    return 2 if terminal.output_failed() else 0


async def _rounds(collection: Collection, args: argparse.Namespace) -> None:
    import asyncio

    from verifier_tui.engine.procfs import machine_cpus
    from verifier_tui.engine.suite import arun_groups
    from verifier_tui.engine.watch.live import LiveRuns
    from verifier_tui.engine.watch.scheduler import RunScheduler

    groups = [group for group in collection.groups if group.session is not None]
    patterns = tuple(args.case_patterns or ())
    on_terminal = not args.json and sys.stdout.isatty()
    done = 0

    async def one_round(change: Change | None) -> None:
        nonlocal done
        trigger = _trigger(change, groups)
        if on_terminal:
            terminal.out(f"running every case ({trigger})…")
            terminal.flush()
        for group in groups:
            group.read_cases(patterns)  # cases added, removed or redefined since the last round
        runnable = [group for group in groups if group.error is None and group.cases]
        started = time.perf_counter()
        try:
            each = await arun_groups(runnable, args.jobs or machine_cpus())
            results = dict(zip(map(id, runnable), each, strict=True))
        except asyncio.CancelledError:
            if rounds.pending and not args.json:  # a newer save, not Ctrl+C: the next round runs at once
                terminal.out(f"round cut short ({trigger}): a file changed meanwhile, and every case runs again")
                terminal.flush()
            raise
        finally:
            for live in lives:  # what the round wrote of the user's files (the copy sandbox) is known now
                live.run_ended()
        ran = [(group, results.get(id(group), [])) for group in collection.groups]
        done += 1
        wall = time.perf_counter() - started
        _show(ran, collection, done, trigger, wall, args.json, on_terminal)

    def failed(exc: BaseException) -> None:
        terminal.error(f"round failed: {exc}")

    rounds = RunScheduler(one_round, supersede=True, on_error=failed)

    async def ask(trigger: str, change: Change | None) -> None:
        rounds.request(change)

    lives = [
        LiveRuns(group.session, ask, force_polling=args.poll, on_task_error=terminal.error, on_note=terminal.error)
        for group in groups
    ]
    for live in lives:
        live.every_case = True
        # a change during a round is held to its end, when the round's own writes are known
        live.busy = lambda: rounds.busy
    watching: list[asyncio.Future[Any]] = [asyncio.ensure_future(live.watch()) for live in lives]

    def stop() -> None:  # nobody reads on (| head -1): stop, as Ctrl+C would
        for live in lives:
            live.stop_watching()

    reader = asyncio.ensure_future(terminal.until_reader_gone(stop))
    try:
        # The first round once every watcher is in place: a save after its table is seen.
        ready: asyncio.Future[Any] = asyncio.gather(*(live.watch_ready.wait() for live in lives))
        await asyncio.wait([ready, *watching], return_when=asyncio.FIRST_COMPLETED)
        if ready.done():
            rounds.request(None)
        else:
            ready.cancel()
        await asyncio.gather(*watching)  # ends when every watcher stopped, or raises the first one's failure
    finally:
        reader.cancel()
        for task in watching:
            task.cancel()
        await asyncio.gather(*watching, return_exceptions=True)
        await rounds.close()
        for live in lives:
            await live.close()


def _trigger(change: Change | None, groups: list[TaskCases]) -> str:
    """What a round ran for: "start", or the change as ``watch`` says it,
    each file by its path in its task (with the task's name when there are
    several), on one line."""
    if change is None:
        return "start"
    from verifier_tui.engine.record import replace

    def owned(path: Path, name: str) -> str:
        """The path in its task (every case counts here: the watcher's own
        name, ``workspace/x``, is of the session's case alone)."""
        owner = next((group for group in groups if path.is_relative_to(group.folder)), None)
        if owner is None:
            return name
        inside = path.relative_to(owner.folder).as_posix()
        return f"{owner.name}: {inside}" if len(groups) > 1 else inside

    change = replace(change, names=tuple((path, owned(path, name)) for path, name in change.names))
    return one_line(change.describe())


def _show(
    ran: list[tuple[Any, list[RunResult]]],
    collection: Collection,
    number: int,
    trigger: str,
    wall: float,
    as_json: bool,
    on_terminal: bool,
) -> None:
    """One round: its test document on a line (``--json``), else its table,
    drawn anew on a terminal, after a line naming the round elsewhere; the
    tasks found without a case (or the step) are said in each, as ``test`` says them."""
    if as_json:
        data = report.test_json(ran, wall, collection.without_cases, collection.without_step)
        data["round"], data["trigger"] = number, trigger
        terminal.out_json(data, indent=None)
    else:
        heading = f"round {number} · {trigger} · {time.strftime('%H:%M:%S')}"
        terminal.write(CLEAR if on_terminal else "")
        terminal.out(heading if on_terminal else report.rule(heading, 20))
        for line in report.test_lines(ran, without=collection.without_cases, without_step=collection.without_step):
            terminal.out(line)
        if on_terminal:
            terminal.out("watching for changes; Ctrl+C stops")
    terminal.flush()
