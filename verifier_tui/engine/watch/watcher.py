"""Watch the user's files: :class:`Watcher` turns raw file-system events into
:class:`~verifier_tui.engine.changes.Change` records, filtered on paths relative to each watched
root, editors' atomic saves collapsed into one modification, a watched folder
that is deleted and re-created watched again.

By default the channels (:mod:`.channel`, at most two: one for folders,
watched recursively, one for the parents of single-file targets, watched
non-recursively) run in a child process (:mod:`.child`, which says why);
``isolate=False``, and the fallback when the child cannot start, runs them in
threads of this process.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import logging
import sys
from collections.abc import AsyncGenerator, Callable, Iterable
from contextlib import suppress
from pathlib import Path
from typing import Any

from verifier_tui.engine.changes import Change, WatchTarget
from verifier_tui.engine.to_the_end import to_the_end
from verifier_tui.engine.watch.channel import END, READY, Notice, WatchError
from verifier_tui.engine.watch.threads import WatchThreads

logger = logging.getLogger(__name__)


def _child_import_path() -> list[str]:
    """Where the watcher process finds this package and watchfiles, which may
    be an editable install (an import hook, not a path) or on a PYTHONPATH
    that ``-I`` ignores. Nothing else: the child's own stdlib and site come
    from the same interpreter."""
    paths = [str(Path(__file__).resolve().parents[3])]  # the folder holding verifier_tui/engine/watch/
    spec = importlib.util.find_spec("watchfiles")
    if spec is not None and spec.submodule_search_locations:
        paths.append(str(Path(next(iter(spec.submodule_search_locations))).parent))
    return list(dict.fromkeys(paths))


#: The watcher process's entry point: its import path first, then run.
_CHILD_CODE = (
    "import json, sys; sys.path[:0] = json.loads(sys.argv[1]); "
    "from verifier_tui.engine.watch.child import main; main(sys.argv[2])"
)

#: A batch from ``git checkout`` of a big tree is one JSON line: allow large ones.
_CHILD_LINE_LIMIT = 64 * 1024 * 1024


class Watcher:
    """Watch the targets; ``changes()`` yields a :class:`Change` per relevant batch.

    One-shot: ``changes()`` may be iterated once; ``stop()`` ends it.
    """

    def __init__(
        self,
        targets: list[WatchTarget],
        *,
        ignore: Iterable[Path] = (),
        force_polling: bool = False,
        isolate: bool = True,
        links_in: Path | None = None,
        on_notice: Callable[[str], object] | None = None,
    ) -> None:
        self.force_polling = force_polling
        """Poll instead of using OS events: network, container and WSL mounts
        deliver no events."""
        self.isolate = isolate and bool(sys.executable) and not getattr(sys, "frozen", False)
        """Watch from a child process (see the module docstring); False: from
        threads of this process. Falls back to threads if the child cannot start."""
        self._on_notice = on_notice
        """Told what the OS watch says once as it goes on (:class:`~.channel.Notice`): it cannot see every change."""
        self._threads = WatchThreads(
            targets, ignore=ignore, force_polling=force_polling, links_in=links_in, post=self._post
        )
        self._stop = self._threads.stop
        self._ready = asyncio.Event()
        self._failure: BaseException | None = None
        self._producers = 0  # threads or child reader still feeding the queue
        self._pending_ready = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._proc: asyncio.subprocess.Process | None = None
        self._child_tasks: list[asyncio.Task[Any]] = []
        self._stderr_tail = bytearray()
        self._iterating = False

    # -- public -----------------------------------------------------------

    async def start(self) -> None:
        """Start watching and return once the OS watchers are in place.
        Idempotent; ``changes()`` calls it."""
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
            if self._stop.is_set():  # stopped before it started: nothing to do
                self._ready.set()
            elif not (self.isolate and await self._start_child()):
                self._start_threads()
        await self.ready()

    async def ready(self) -> None:
        """Wait until the OS watchers are in place: a file written after this
        returns is seen. (Run once right then: nothing reports the state
        before.) Raises :class:`WatchError` if they could not be set up."""
        await self._ready.wait()
        if self._failure is not None:
            raise self._failure

    def stop(self) -> None:
        """End ``changes()`` within a step or two. Safe from any thread, twice."""
        self._stop.set()
        if self._proc is not None and self._loop is not None:
            # A closed loop raises RuntimeError: the child has seen EOF already.
            with suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._close_child_stdin)

    async def close(self) -> None:
        """Stop, and wait until the watcher's process or threads have ended.
        Safe whether or not it started, and twice.

        The wait runs to its end even if the caller is cancelled again
        meanwhile (Textual cancels the TUI's watching worker when the app's
        loop ends, and the app's exit cancels it once more); the cancellation
        is raised after. Cut short, the watcher's process or threads outlive
        the event loop, and its pipes are closed by the garbage collector after
        the loop is gone ("Event loop is closed")."""
        self.stop()
        await to_the_end(self._wait_stopped())

    async def changes(self) -> AsyncGenerator[Change, None]:
        """Coalesced relevant changes until :meth:`stop`. A failure of the OS
        watcher is raised here as :class:`WatchError`."""
        if self._iterating:
            raise RuntimeError("Watcher.changes() is already being iterated")
        self._iterating = True
        try:
            await self.start()
            while self._producers:
                items = [await self._queue.get()]
                # Coalesce whatever else is already queued (a slow consumer,
                # or both threads reporting one save).
                while not self._queue.empty():
                    items.append(self._queue.get_nowait())
                change: Change | None = None
                for item in items:
                    if item is END:
                        self._producers -= 1
                    elif isinstance(item, BaseException):
                        raise item
                    else:
                        change = Change.combine(change, item)
                if change is not None and not self._stop.is_set():
                    yield change
        finally:
            await self.close()

    # -- watching from threads of this process ------------------------------

    def _start_threads(self) -> None:
        self._producers = self._pending_ready = len(self._threads.channels)
        self._threads.start()

    def _call_in_loop(self, fn: Callable[..., Any], *args: Any) -> None:
        assert self._loop is not None
        try:
            self._loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:  # loop closed: nobody is listening any more
            self._stop.set()

    def _post(self, item: object) -> None:
        self._call_in_loop(self._deliver, item)

    def _deliver(self, item: object) -> None:
        if isinstance(item, Notice):
            if self._on_notice is not None:
                self._on_notice(item.said)
            return
        if item is READY:
            self._pending_ready -= 1
            if self._pending_ready <= 0:
                self._ready.set()
            return
        if isinstance(item, BaseException) and self._failure is None:
            self._failure = item
        self._queue.put_nowait(item)

    # -- watching from a child process ----------------------------------------

    async def _start_child(self) -> bool:
        """Start the watcher process and wait for it to be ready. False (after
        a warning) if it could not start, so threads take over."""
        options = {
            "targets": [[str(t.path), t.label, t.folder, t.beside] for t in self._threads.targets],
            "ignore": [str(p) for p in self._threads.ignore],
            "links_in": str(self._threads.links_in) if self._threads.links_in else None,
            "force_polling": self.force_polling,
        }
        try:
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-I",  # no PYTHONPATH, PYTHONSTARTUP, user site: argv[1] sets the path
                "-c",
                _CHILD_CODE,
                json.dumps(_child_import_path()),
                json.dumps(options),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                # Out of the terminal's process group: Ctrl-C is the parent's
                # to handle; the child ends when its stdin closes.
                start_new_session=True,
                limit=_CHILD_LINE_LIMIT,
            )
        except OSError as exc:
            logger.warning("cannot start the watcher process (%s); watching from threads", exc)
            return False
        self._proc = proc
        if self._stop.is_set():  # stop() came while we were spawning it
            self._close_child_stdin()
        self._child_tasks.append(asyncio.create_task(self._read_child_stderr(proc)))
        assert proc.stdout is not None
        first = await proc.stdout.readline()
        if self._stop.is_set() and not first:
            self._ready.set()  # stopped before it was ready: nothing to watch
            return True
        try:
            message = json.loads(first)
        except ValueError:
            message = {}
        if message.get("ready"):
            self._producers = 1
            self._child_tasks.append(asyncio.create_task(self._read_child(proc)))
            self._ready.set()
            return True
        # It failed before watching anything: most likely it could not import
        # this package or watchfiles. Threads will do (or fail with the reason).
        await self._wait_stopped()
        reason = message.get("error") or self._stderr_tail.decode(errors="replace").strip()
        logger.warning("the watcher process failed to start (%s); watching from threads", reason)
        self._proc = None
        return False

    async def _read_child(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stdout is not None
        failed = False
        try:
            while line := await proc.stdout.readline():
                message = json.loads(line)
                if "change" in message:
                    self._queue.put_nowait(Change.from_json(message["change"]))
                elif "notice" in message:
                    self._deliver(Notice(message["notice"]))
                elif "error" in message:
                    failed = True
                    self._deliver(WatchError(message["error"]))
            status = await proc.wait()
            if status and not failed and not self._stop.is_set():
                tail = self._stderr_tail.decode(errors="replace").strip()
                self._deliver(WatchError(f"the watcher process exited with status {status}: {tail}"))
        except Exception as exc:  # noqa: BLE001 - a broken pipe, bad JSON: say so
            self._deliver(WatchError(f"lost the watcher process: {exc}"))
        finally:
            self._queue.put_nowait(END)

    async def _read_child_stderr(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stderr is not None
        while chunk := await proc.stderr.read(65536):
            self._stderr_tail += chunk
            del self._stderr_tail[:-4096]

    def _close_child_stdin(self) -> None:
        stdin = self._proc.stdin if self._proc is not None else None
        if stdin is not None and not stdin.is_closing():
            stdin.close()

    async def _wait_stopped(self) -> None:
        """Wait for the child process or the threads to end."""
        proc = self._proc
        if proc is not None:
            self._close_child_stdin()
            try:
                await asyncio.wait_for(proc.wait(), 5)
            except asyncio.TimeoutError:
                proc.kill()
                await proc.wait()
            if self._child_tasks:
                await asyncio.wait(self._child_tasks)
            # Close the pipes' transport now, on a running loop: left to the
            # garbage collector, it closes after the loop did and says so
            # ("Event loop is closed") on the way out. asyncio's Process
            # exposes no public close, hence the private attribute.
            transport = getattr(proc, "_transport", None)
            if transport is not None:
                transport.close()
        if any(c.thread.is_alive() for c in self._threads.channels):
            await asyncio.to_thread(self._threads.join, 5)
