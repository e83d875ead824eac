"""Watch, then request runs: the one loop the ``watch`` command and the TUI share.

:class:`LiveRuns` keeps a :class:`~.watcher.Watcher` on what the session's
current choices depend on (``Session.watch_targets``) and turns each change
into a run request through a :class:`~.scheduler.RunScheduler`:

* a change to ``task.toml``, anything in ``tests/`` or in the step's own
  ``steps/NAME/tests/`` re-reads the task first
  (new verifiers, cases, ``[verifier] env``), keeping the user's choices;
* when the targets change (a new workspace chosen, ``task.toml`` created), the
  watcher is restarted on the new ones;
* while paused (the TUI suspended for the editor or pdb), changes and requests
  are held and merged, and run once on resume;
* with live reload off (the TUI's ``w``), the watcher goes on: changes re-read
  the task and are held as ``stale`` (the verdict on screen is out of date),
  and turning live reload on again runs them;
* with no watcher (the TUI's ``--no-watch``, a watcher that failed), a run
  re-reads the task first: no change said it changed;
* a change to another case (its workspace, its expected.json) runs nothing
  (unless :attr:`~LiveRuns.every_case`: a run is then every case's);
  the task's cases are re-read when a case folder or a file beside one changes;
* with ``supersede`` (the TUI, ``watch``), a request during a run cancels the
  run in flight; without, it waits as the single pending run.

What a run does and how it is shown is the face's: the ``run`` callback.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import stat
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

from verifier_tui.engine.changes import Change
from verifier_tui.engine.record import replace
from verifier_tui.engine.sandbox.isolation import NAMESPACE
from verifier_tui.engine.task.discovery import DiscoveryError
from verifier_tui.engine.watch.scheduler import RunScheduler
from verifier_tui.engine.watch.watcher import Watcher

#: The most files of a run's change (and of the saves it clears as stale) looked at as it starts, to
#: tell the late events of that save (one file, or a few) from a new one: a checkout of thousands
#: would stall the event loop.
_READ_AS_AT_MOST = 100
#: The most bytes of them read to know their content (a file past it is told by its times and size).
_HASH_AT_MOST = 8 * 1024 * 1024

if TYPE_CHECKING:
    from pathlib import Path

    from verifier_tui.engine.session import Session
    from verifier_tui.engine.task.cases import Case


class LiveRuns:
    """The runs of one session, requested by hand and by every relevant change."""

    def __init__(
        self,
        session: Session,
        run: Callable[[str, Change | None], Awaitable[Any]],
        *,
        supersede: bool = False,
        force_polling: bool = False,
        on_result: Callable[[Change | None, Any], Any] | None = None,
        on_error: Callable[[BaseException], Any] | None = None,
        on_task_error: Callable[[str], Any] | None = None,
        on_task_reloaded: Callable[[], Any] | None = None,
        on_watching: Callable[[], Any] | None = None,
        on_stale: Callable[[Change], Any] | None = None,
        on_outdated: Callable[[], Any] | None = None,
        on_note: Callable[[str], Any] | None = None,
        noted: set[str] | None = None,
    ) -> None:
        """``run(trigger, change)`` performs one run for the face and returns
        what ``on_result(change, result)`` receives; ``trigger`` says in words
        what asked for it ("start", "r key", "tests/verifier.py +2 more").
        ``on_task_error(message)`` is told when the task could not be re-read
        (no run follows), ``on_task_reloaded()`` after it was, ``on_watching()``
        each time a watcher is in place, ``on_stale(change)`` when a change is
        held because live reload is off (the last run is stale),
        ``on_outdated()`` when what every case's run reads changed (the tests,
        the verifier, task.toml): no case's last verdict is of the files now;
        ``on_note(sentence)`` when a change is not run, and why, or the watcher cannot see every
        change (each said once; ``noted``, the notices said, shared by the watchers of one command
        says each once in it)."""
        self.session = session
        self.force_polling = force_polling
        self.scheduler = RunScheduler(self._run, supersede=supersede, on_error=on_error, on_result=on_result)
        self._face_run = run
        self._on_task_error = on_task_error
        self._task_error: str | None = None  # the last one said, until the task reads again
        self._on_task_reloaded = on_task_reloaded
        self._on_watching = on_watching
        self._on_stale = on_stale
        self._on_outdated = on_outdated
        self._on_note = on_note
        self._noted = set() if noted is None else noted
        self.live_reload = True
        """False: a change re-reads the task but runs nothing; it is held in
        :attr:`stale` until a run starts or live reload is turned on again."""
        self.stale: Change | None = None
        """What changed that the current choices read since the last run started (live reload off)."""
        self._read_as: dict[Path, tuple[object, ...] | None] = {}  # the files of the change it ran for, then (_as_read)
        self.every_case = False
        """True (``test --watch``): a run is every case's, so any change to what one reads runs,
        another case's workspace or expected.json too."""
        # Why the run the scheduler has waiting was asked for, and the one held
        # (paused, restarting): apart, or the waiting run took the held one's words.
        self._trigger: str | None = None
        self._held_trigger: str | None = None
        self.saves_held = 0
        """How many saves came while paused, so far: the one who paused (b) tells by it whether
        one came between its runs, whether or not it may drop them (:meth:`drop_held`)."""
        self._pauses = 0  # counted: the editor opened while b runs must not end b's pause
        self._held: Change | None = None
        self._held_any = False
        self.watch_ready = asyncio.Event()
        """Set while a watcher is in place: a file written after this is seen."""
        self.targets: list[Any] | None = None
        """What the current watcher watches (None: not watching)."""
        self._links: list[bool] = []  # which targets were links when the watch began (its roots differ)
        self._restarting = False
        """A new watcher is being put in place: requests are held until it is,
        so a run never reads files whose next change no watcher would see."""
        self._watcher: Watcher | None = None
        self._watching = False
        self._after_run: Change | None = None  # changes seen during a copy sandbox's run (on_change)
        self._rerun_for: frozenset[Path] = frozenset()  # see _less_its_own
        self._said: frozenset[Path] = frozenset()
        self._seen: set[Path] = set()  # folders ever there while watched: see _said_as_seen
        self._ran = False  # a run read the task's files (read_unwatched)
        self.busy: Callable[[], bool] = lambda: self.scheduler.busy
        """Whether a run of this session is in flight. ``test --watch`` runs its rounds
        elsewhere (its ``run`` only asks for one): it says so here, and calls
        :meth:`run_ended` after each round."""

    # -- requests -----------------------------------------------------------------

    def request(self, trigger: str, change: Change | None = None) -> None:
        """Run the current choices (``trigger`` names why, when no file changed)."""
        if self.paused or self._restarting:
            self._held = Change.combine(self._held, change)
            self._held_any = True
            if change is None:
                self._held_trigger = trigger
            else:
                self.saves_held += 1
            return
        if change is None:
            self._trigger = trigger
        self.scheduler.request(change)

    def on_change(self, change: Change) -> None:
        """A watched file changed: re-read the task when its shape may have
        changed (task.toml, anything in tests/, a case folder, an expected.json),
        then run if what the current choices read changed (with live reload
        off, hold it: :attr:`stale`)."""
        session = self.session
        session.note_change(change)  # for the copy sandbox's mirror: copy what changed, not the whole tree
        change = self._said_as_seen(change)
        if not change.paths:
            return  # only caches, VCS internals, editors' temporary files: the mirror follows, nothing runs
        if self.targets is not None and any(target.path in change.paths for target in self.targets):
            self.restart_watch_if_needed()  # a folder watched replaced, by a link perhaps
        linked = session.task.config.linked  # followed as they are now by what follows
        if self._on_outdated is not None and session.changes_every_case(change.paths):
            self._on_outdated()
        task_changed = session.changes_the_task(change.paths)
        if session.task.config.linked != linked:
            # a folder a new link leads to is one Harbor checks from now on, one no link leads to any more is
            # not: watched anew, though no run reads it and Harbor's answer is the same (no run for it)
            self.restart_watch_if_needed()
        case_before = _what_runs(session.case)
        feeds = session.feeds_a_run(change.paths)  # what the choices read before the task is read again
        refused = session.task.config.refused
        if task_changed or session.defines_cases(change.paths):
            root = session.task.root
            if not self._read_task_again():
                return
            if session.task.root != root and not os.path.lexists(root):  # the task's folder renamed, followed
                change = replace(change, moved=(*change.moved, (root, session.task.root.name)))
            if session.task.config.refused != refused and not task_changed:
                # Read again for another reason (a case made), the task is one Harbor now loads, or refuses,
                # otherwise (an instruction.md removed meanwhile, whose own change then finds nothing new):
                # no verdict shown says how the task goes now.
                task_changed = True
                if self._on_outdated is not None:
                    self._on_outdated()
        # A run follows a change to what it reads, and to the current case's
        # definition (its expected.json: the verdict is judged anew); test --watch's round, to any
        # change but one no run reads that leaves Harbor's answer as it was (an instruction's text).
        every_case = self.every_case and not session.read_by_no_run(change.paths)
        if not (every_case or task_changed or _what_runs(session.case) != case_before or feeds):
            return  # another case added, removed or redefined, or its workspace edited: nothing to run
        if self.busy() and session.isolation.kind != NAMESPACE:
            # In the copy sandbox, which of these the run in flight changed is
            # known once it is over: held till then (see _less_its_own), not superseding it.
            self._after_run = Change.combine(self._after_run, change)
            # A run whose run_ended is past is busy till its task is done: judged then, not never.
            asyncio.get_running_loop().call_soon(self._if_idle)
            return
        self._go(change)

    def _read_task_again(self) -> bool:
        """Re-read the task (task.toml, the verifiers, the cases); whether it could be (if not, it is
        said, once while it lasts: a folder removed comes as several changes)."""
        try:
            self.session.reload_task()
        except (DiscoveryError, OSError) as exc:
            said = f"the task could not be re-read: {exc}"
            if self._on_task_error is not None and said != self._task_error:
                self._on_task_error(said)
            self._task_error = said
            return False
        self._task_error = None
        if self._on_task_reloaded is not None:
            self._on_task_reloaded()
        self.restart_watch_if_needed()
        return True

    def read_unwatched(self) -> bool:
        """Before a run: when no watcher has seen the task's files since a run read them (started
        with live reload off, a watcher that failed), the task is read again, as a save would have
        it read (:meth:`on_change`), so a key's run is of task.toml and the cases as they are now.
        Whether the run may go on."""
        ran, self._ran = self._ran, True
        return self._watcher is not None or not ran or self._read_task_again()

    def _go(self, change: Change) -> None:
        """A change judged to run: requested, or, with live reload off, held as :attr:`stale`."""
        change = self._less_its_own(change)
        if not change.paths or self._as_the_last_run_read(change):
            return  # late events of a save the last run read (vim's, a loaded machine's)
        if not self.live_reload:
            self.stale = change if self.stale is None else self.stale.merge(change)
            if self._on_stale is not None:
                self._on_stale(self.stale)
            return
        self.request(change.describe(), change)

    def _said_as_seen(self, change: Change) -> Change:
        """``change`` with a folder that was there under an earlier watcher said "re-created": a watcher
        knows only what it saw itself, and a reload starts a new one (steps/NAME/tests moved away
        re-reads the task), which took the folder moved back for one never there."""
        known = change.created & self._seen
        self._seen |= change.recreated
        return replace(change, created=change.created - known) if known else change

    def _less_its_own(self, change: Change) -> Change:
        """``change`` less what the last run seems to have written itself.

        In the copy sandbox a run can write the user's files, and what it changed
        is found by looking before and after it, which cannot tell its writes from
        a save made meanwhile. So such a change runs again, as in the view, unless
        the last run was made for these very files alone and changed them again:
        that run writes them itself, and would run itself for ever (a verifier that
        appends to a file of its tests/). Said once; a save of the user's runs."""
        own = self.session.own_writes(change.paths)  # as the last run left them
        if own and own <= self._rerun_for:
            if own != self._said and self._on_note is not None:
                named = change.without(change.paths - own).describe()
                self._on_note(
                    f"the run itself seems to write {named}: it changed again in the run made for its "
                    "change alone, so it is not run again for its own changes; save to run again"
                )
            self._said = own
            change = change.without(own)
        if change.paths:
            self._rerun_for = own if change.paths <= own else frozenset()
        return change

    def set_live_reload(self, on: bool) -> None:
        """Live reload on (changes run) or off (changes are held as :attr:`stale`,
        requests still run). Turned on, it runs what changed meanwhile."""
        self.live_reload = on
        if on and self.stale is not None:
            self.request(self.stale.describe(), self.stale)

    @property
    def paused(self) -> bool:
        """While paused, requests are held (merged), and run on the last :meth:`resume`."""
        return self._pauses > 0

    def pause(self) -> None:
        self._pauses += 1

    def resume(self) -> None:
        self._pauses = max(0, self._pauses - 1)
        self._release()

    def drop_held(self) -> bool:
        """Forget the saves held while paused, saying whether there were any: the
        one who paused ran the current choices again over them (b, whose two
        runs a save came between). A key's request held (r, a, a new choice) is
        not the same run: it is kept, with the saves it came with, for :meth:`resume`."""
        if self._held is None or self._held_trigger is not None:
            return False
        self._held, self._held_any = None, False
        return True

    def _release(self) -> None:
        """Run what was held, unless something still holds it. A change held
        was judged when it came (on_change): judged again now, against the
        task as its reading left it, a tasks.jsonl removed ran nothing."""
        if self._held_any and not (self.paused or self._restarting):
            change, self._held, self._held_any = self._held, None, False
            trigger, self._held_trigger = self._held_trigger, None
            if change is None:
                self._trigger = trigger
                self.scheduler.request(None)
            else:
                self._go(change)  # live reload may have been turned off meanwhile

    def _as_the_last_run_read(self, change: Change) -> bool:
        """Whether every file of ``change`` is as it was when the last run, started for it (or
        clearing it as stale: r with live reload off), began: the late events of that save. vim
        saves in place, fsyncs, and only then sets the file's mode and ACL again; those events
        cancelled the save's run for a run of the same file, or marked r's fresh verdict stale."""
        read = self._read_as
        if not read or change.recreated or change.moved or not change.paths <= read.keys():
            return False
        # By content, not time alone: a save in the same clock tick as the run's start (a second, on a
        # file system that keeps no finer times) may leave the same size and time, and ran nothing.
        now = _as_read_all(change.paths)
        return all(now[path] is not None and now[path] == read[path] for path in change.paths)

    def reading_now(self, change: Change | None = None) -> None:
        """The runs starting now read the files as they are now: those of ``change`` and the saves
        held as :attr:`stale` (r, b, with live reload off), which are stale no more, and whose late
        events are then no change to them (:meth:`_as_the_last_run_read`). Every run that clears
        the mark says so here, so one rule of what a run read holds for all (the scheduler's, b's,
        the shown case's in a). Told by their content, never by times against the run's start: a
        file system keeping times to the second (or 2 s) stamps a save just after the start with a
        time before it."""
        read = (change.paths if change is not None else frozenset()) | (self.stale.paths if self.stale else frozenset())
        self.stale = None
        if len(read) > _READ_AS_AT_MOST:
            self._read_as = {}
            return
        # Added to what earlier runs read, never in its place: a file recorded then and not saved since (it
        # would be in stale) is still as they read it, and a's shown case or b, reading nothing new after
        # the scheduler's run, must not forget what that run read.
        merged = {**self._read_as, **_as_read_all(read)}
        self._read_as = merged if len(merged) <= _READ_AS_AT_MOST else _as_read_all(read)

    async def _run(self, change: Change | None) -> Any:
        if not self.read_unwatched():
            self.run_ended()
            return None
        self.reading_now(change)
        if change is not None:
            trigger = change.describe()
        else:
            trigger, self._trigger = self._trigger or "start", None
        try:
            return await self._face_run(trigger, change)
        finally:
            self.run_ended()

    def run_ended(self) -> None:
        """A run is over (finished or cancelled): what changed during it is judged now."""
        after, self._after_run = self._after_run, None
        if after is not None:  # judged when they came; what the run changed is known now
            self._go(after)

    def _if_idle(self) -> None:
        if not self.busy():
            self.run_ended()

    # -- watching -----------------------------------------------------------------

    async def watch(self, *, run_first: bool = False, first_trigger: str = "start") -> None:
        """Watch the session's targets until :meth:`stop_watching` or
        cancellation, on new targets whenever they change. With ``run_first``,
        one run (``first_trigger``) is requested as soon as the first watcher is in place:
        nothing reports the state that was there before it. A watcher that
        fails raises :class:`~.channel.WatchError` here."""
        self._watching = True
        try:
            while self._watching:
                self.targets = self.session.watch_targets()
                self._links = _links(self.targets)
                # the folders the new watcher's roots may be: each target's own, or a file target's parent
                self._seen |= {
                    path for target in self.targets for path in (target.path, target.path.parent) if path.is_dir()
                }
                scratch = self.session.scratch_folder()
                watcher = Watcher(
                    self.targets,
                    ignore=[scratch],
                    force_polling=self.force_polling,
                    links_in=scratch,
                    on_notice=self._note_once,
                )
                self._watcher = watcher
                try:
                    await watcher.start()
                    self.session.follow_changes(True)
                    self.watch_ready.set()
                    self._restarting = False
                    self._release()
                    if self._on_watching is not None:
                        self._on_watching()
                    if run_first:
                        run_first = False
                        # nothing saw what changed since a run read the task: read as it is now
                        if not self._ran or self._read_task_again():
                            self.request(first_trigger)
                    async for change in watcher.changes():
                        self.on_change(change)
                finally:
                    self.session.follow_changes(False)
                    self.watch_ready.clear()
                    self._watcher = None
                    await watcher.close()
        finally:
            self._watching = False
            self.targets = None
            self._restarting = False  # no watcher comes: what was held runs now
            self._release()

    def _note_once(self, said: str) -> None:
        """What a watcher says of itself (it cannot see every change), said once in the command: a
        watcher made anew on new targets, or another task's sharing ``noted``, does not say it again."""
        if said not in self._noted and self._on_note is not None:
            self._noted.add(said)
            self._on_note(said)

    def restart_watch_if_needed(self) -> None:
        """Watch the session's targets anew if the choices changed them."""
        if self._watcher is None:
            return
        targets = self.session.watch_targets()
        if targets != self.targets or _links(targets) != self._links:
            self._restarting = True
            self._watcher.stop()  # changes() ends; watch() starts over on the new targets

    def stop_watching(self) -> None:
        self._watching = False
        if self._watcher is not None:
            self._watcher.stop()

    async def close(self) -> None:
        """Drop the pending request and cancel the run in flight (waiting for its clean-up)."""
        await self.scheduler.close()


def _as_read_all(paths: Iterable[Path]) -> dict[Path, tuple[object, ...] | None]:
    """:func:`_as_read` of each of ``paths``, reading at most :data:`_HASH_AT_MOST` bytes in all."""
    budget = [_HASH_AT_MOST]
    return {path: _as_read(path, budget) for path in paths}


def _as_read(path: Path, budget: list[int]) -> tuple[object, ...] | None:
    """What a run reads of ``path``: its content (a chmod, chown or xattr leaves it), mode, and
    the inode a rename over it brings; and its modification time, which ``touch`` (a save of the
    same bytes) moves to ask for a run. A file bigger than what is left of ``budget`` (bytes,
    spent here) is told by its times and size alone. None: not a regular file, not known, so not
    taken as unchanged. Never through a link."""
    try:
        # Looked at before it is opened: even a non-blocking open of a FIFO releases a writer waiting on it.
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None  # a folder's, a FIFO's: nothing a run reads of it is told here
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None  # swapped in since it was looked at
        if st.st_size > budget[0]:  # too big to read at each run's start: told by its times alone
            return (st.st_dev, st.st_ino, st.st_mode, st.st_mtime_ns, st.st_size)
        budget[0] -= st.st_size
        digest, left = hashlib.blake2b(), st.st_size + 1  # a file growing meanwhile differs by its extra byte
        while left > 0 and (block := os.read(fd, min(left, 1 << 16))):
            digest.update(block)
            left -= len(block)
        return (st.st_dev, st.st_ino, st.st_mode, st.st_mtime_ns, digest.digest())
    except OSError:
        return None
    finally:
        os.close(fd)


def _links(targets: list[Any]) -> list[bool]:
    return [target.path.is_symlink() for target in targets]


def _what_runs(case: Case | None) -> tuple[object, ...] | None:
    """What of ``case`` a run reads or is judged by (not the notes about it:
    tasks.jsonl written beside a case that names no row adds one, and runs nothing)."""
    if case is None:
        return None
    return (case.name, case.workspace, case.response, case.task_data, case.task_id, case.expected)
