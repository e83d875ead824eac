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
    import asyncio
    from pathlib import Path

    from verifier_tui.engine.changes import Change
    from verifier_tui.engine.model import RunResult
    from verifier_tui.engine.session import Session
    from verifier_tui.engine.suite import Collection, TaskCases
    from verifier_tui.engine.watch.live import LiveRuns
    from verifier_tui.engine.watch.scheduler import RunScheduler

#: Clears a terminal and puts the cursor top left (what pytest-watcher does before a run).
CLEAR = "\x1b[2J\x1b[H"


def watch_rounds(collection: Collection, args: argparse.Namespace) -> int:
    """Rounds until Ctrl+C (exit 0), SIGTERM, or the reader of the output going away."""
    from verifier_tui.commands.watching import watch_to_the_end

    problem = watch_to_the_end(_rounds(collection, args), args.poll)
    if problem is not None:
        return terminal.refuse(problem)
    return 2 if terminal.output_failed() else 0


async def _rounds(collection: Collection, args: argparse.Namespace) -> None:
    import asyncio

    from verifier_tui.engine.procfs import machine_cpus
    from verifier_tui.engine.suite import arun_groups
    from verifier_tui.engine.watch.scheduler import RunScheduler

    groups = [group for group in collection.groups if group.session is not None]
    patterns = tuple(args.case_patterns or ())
    # The tasks passed over (no case yet, or not --step's step) are watched too, each by a session of its
    # own: a save that gives one a case or the step makes it a task of the next round, as a fresh test would.
    passed_over = {folder: _watched(folder, args) for folder in _passed_over(collection)}
    on_terminal = not args.json and sys.stdout.isatty()
    done = 0

    async def one_round(change: Change | None) -> None:
        nonlocal done
        trigger = _trigger(change, [(g.folder, g.name) for g in groups] + [(f, f.name) for f in passed_over])
        if on_terminal:
            terminal.out(f"running every case ({trigger})…")
            terminal.flush()
        for group, session, watcher in _found_again(collection, passed_over, args):
            groups.append(group)
            watchers.watch(session)
            watchers.stop(watcher)  # the task's own session watches it now
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
            watchers.run_ended()
        ran = [(group, results.get(id(group), [])) for group in collection.groups]
        done += 1
        wall = time.perf_counter() - started
        _show(ran, collection, done, trigger, wall, args.json, on_terminal)

    def failed(exc: BaseException) -> None:
        terminal.error(f"round failed: {exc}")

    rounds = RunScheduler(one_round, supersede=True, on_error=failed)
    watchers = _Watchers(rounds, args.poll)
    for session in [group.session for group in groups] + [s for s in passed_over.values() if s is not None]:
        watchers.watch(session)
    reader = asyncio.ensure_future(terminal.until_reader_gone(watchers.stop))
    try:
        # The first round once every watcher is in place: a save after its table is seen.
        if await watchers.ready():
            rounds.request(None)
        await watchers.until_stopped()
    finally:
        reader.cancel()
        await watchers.cancel()
        await rounds.close()
        await watchers.close({id(group.session) for group in groups})


class _Watchers:
    """The watchers of ``test --watch``: one per task tested, and one per task passed over until
    it is tested; each change asks the one scheduler of rounds for a round."""

    def __init__(self, rounds: RunScheduler, poll: bool) -> None:
        self.rounds = rounds
        self.poll = poll
        self.lives: list[LiveRuns] = []
        self.watching: list[asyncio.Future[Any]] = []
        self.noted: set[str] = set()  # a watcher's notice of itself (the inotify limit) is said once, not per task

    def watch(self, session: Session) -> None:
        import asyncio

        from verifier_tui.engine.watch.live import LiveRuns

        async def ask(_trigger: str, change: Change | None) -> None:
            self.rounds.request(change)

        live = LiveRuns(
            session,
            ask,
            force_polling=self.poll,
            on_task_error=terminal.error,
            on_note=terminal.error,
            noted=self.noted,
        )
        live.every_case = True
        # a change during a round is held to its end, when the round's own writes are known
        live.busy = lambda: self.rounds.busy
        self.lives.append(live)
        self.watching.append(asyncio.ensure_future(live.watch()))

    def stop(self, session: Session | None = None) -> None:
        """Stop watching for ``session``, or (None) for every session: nobody reads on (| head -1),
        stop as Ctrl+C would."""
        for live in self.lives:
            if session is None or live.session is session:
                live.stop_watching()

    def run_ended(self) -> None:
        for live in self.lives:  # what the round wrote of the user's files (the copy sandbox) is known now
            live.run_ended()

    async def ready(self) -> bool:
        """True once every watcher is in place; False when one ended first."""
        import asyncio

        ready: asyncio.Future[Any] = asyncio.gather(*(live.watch_ready.wait() for live in self.lives))
        await asyncio.wait([ready, *self.watching], return_when=asyncio.FIRST_COMPLETED)
        if not ready.done():
            ready.cancel()
            # its cancellation retrieved: asyncio printed a traceback of one never retrieved, above the
            # one line that says why the watch could not go on
            await asyncio.gather(ready, return_exceptions=True)
            return False
        return True

    async def until_stopped(self) -> None:
        """Ends when every watcher stopped, or raises the first one's failure (a task found again adds one)."""
        import asyncio

        while True:
            watching = len(self.watching)
            await asyncio.gather(*self.watching)
            if len(self.watching) == watching:
                return

    async def cancel(self) -> None:
        import asyncio

        for task in self.watching:
            task.cancel()
        await asyncio.gather(*self.watching, return_exceptions=True)

    async def close(self, tested: set[int]) -> None:
        """Each watcher closed, and the sessions of the tasks passed over (not in ``tested``: the collection's)."""
        for live in self.lives:
            await live.close()
            if id(live.session) not in tested:
                live.session.close()


def _passed_over(collection: Collection) -> list[Path]:
    return [*collection.without_cases, *(lacking.folder for lacking in collection.without_step)]


def _watched(folder: Path, args: argparse.Namespace) -> Session | None:
    """A session that watches a task passed over (without --step: what it lacks may be the step);
    None when it cannot be read even so: a fresh start of the command is then what finds it."""
    from verifier_tui.engine.record import replace
    from verifier_tui.engine.session import SelectionError, Session
    from verifier_tui.engine.task.discovery import DiscoveryError

    try:
        return Session(folder, replace(args.options, step=None))
    except (DiscoveryError, SelectionError):
        return None


def _found_again(
    collection: Collection, passed_over: dict[Path, Session | None], args: argparse.Namespace
) -> list[tuple[TaskCases, Session, Session | None]]:
    """The tasks passed over that are to be tested now (:func:`~verifier_tui.engine.suite.found_again`),
    each with its session and the one that watched it, taken into the collection; those still passed over are said
    as this round finds them (one read but not runnable, a verifier gone, as a task of the table)."""
    from verifier_tui.engine.suite import WithoutStep, found_again

    found: list[tuple[TaskCases, Session, Session | None]] = []
    collection.without_cases, collection.without_step = [], []
    collection.groups = [group for group in collection.groups if group.folder not in passed_over]
    for folder in list(passed_over):
        now = found_again(folder, args.options)
        if now is None:
            collection.without_cases.append(folder)
        elif isinstance(now, WithoutStep):
            collection.without_step.append(now)
        else:
            collection.groups.append(now)
            if now.session is not None:  # (none: it cannot be run, and is watched on)
                found.append((now, now.session, passed_over.pop(folder)))
    return found


def _trigger(change: Change | None, owners: list[tuple[Path, str]]) -> str:
    """What a round ran for: "start", or the change as ``watch`` says it,
    each file by its path in its task (``owners``: each watched task's folder and name; with the
    task's name when there are several), on one line."""
    if change is None:
        return "start"
    from verifier_tui.engine.record import replace

    def owned(path: Path, name: str) -> str:
        """The path in its task (every case counts here: the watcher's own
        name, ``workspace/x``, is of the session's case alone)."""
        owner = next(((folder, task) for folder, task in owners if path.is_relative_to(folder)), None)
        if owner is None:
            return name
        inside = path.relative_to(owner[0]).as_posix()
        return f"{owner[1]}: {inside}" if len(owners) > 1 else inside

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
            terminal.out(report.WATCHING)
    terminal.flush()
