"""The watcher process: where :class:`~.watcher.Watcher` watches from by default.

watchfiles' ``watch`` and ``awatch`` build their OS watch as they start, and
building it walks the whole tree (a quarter of a second for 20k folders).
``awatch`` builds it on the event-loop thread; building it in a thread
instead does not help: watchfiles holds the GIL for the whole walk, so the
loop would freeze for all of it. So the watching runs in a
small child process (:func:`main`), which prints each finished
:class:`~verifier_tui.engine.changes.Change` as a JSON line; the parent's loop only reads lines.
Rebuilding after a root is re-created happens there too, and so do the
watcher's 200 wake-ups a second (one per step). Cost: under 50 ms more to become
ready, ~23 MB, about 1% of a core when idle.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
from contextlib import suppress
from pathlib import Path
from typing import Any

from verifier_tui.engine.changes import Change, WatchTarget
from verifier_tui.engine.watch.channel import END, READY, Notice, WatchError
from verifier_tui.engine.watch.threads import WatchThreads


def main(options_json: str) -> None:
    """The watcher process: watch from threads, print each Change as a JSON
    line, end when stdin closes (the parent stopped us, or died). The same
    protocol as :class:`~.watcher.Watcher` keeps with its own threads: the
    first line once every channel is ready (or the error that stopped one
    getting there), what is queued together sent as one change."""
    options = json.loads(options_json)
    targets = [WatchTarget(Path(p), label, folder, beside) for p, label, folder, beside in options.pop("targets")]
    ignore = [Path(p) for p in options.pop("ignore")]
    links_in = options.pop("links_in", None)  # None: $TMPDIR
    items: queue.SimpleQueue[object] = queue.SimpleQueue()
    threads = WatchThreads(
        targets, ignore=ignore, links_in=Path(links_in) if links_in else None, post=items.put, **options
    )
    out = sys.stdout.buffer

    def emit(message: dict[str, Any]) -> None:
        out.write(json.dumps(message).encode() + b"\n")
        out.flush()

    def wait_for_parent() -> None:
        try:
            sys.stdin.buffer.read()
        finally:
            threads.stop.set()

    threading.Thread(target=wait_for_parent, name="verifier-tui-watch-stdin", daemon=True).start()
    try:
        threads.start()
        unready = running = len(threads.channels)
        change: Change | None = None  # held until every channel is ready: "ready" comes first
        notices: list[str] = []  # so are these
        while running:
            batch = [items.get()]
            with suppress(queue.Empty):
                while True:
                    batch.append(items.get_nowait())
            for item in batch:
                if item is READY:
                    unready -= 1
                    if not unready:
                        emit({"ready": True})
                elif item is END:
                    running -= 1
                elif isinstance(item, BaseException):
                    raise item
                elif isinstance(item, Notice):
                    notices.append(item.said)
                elif isinstance(item, Change):
                    change = Change.combine(change, item)
            while notices and not unready:
                emit({"notice": notices.pop(0)})
            if change is not None and not unready and not threads.stop.is_set():
                emit({"change": change.to_json()})
                change = None
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        with suppress(OSError):  # the parent may be gone
            emit({"error": str(exc) if isinstance(exc, WatchError) else f"{type(exc).__name__}: {exc}"})
        raise SystemExit(1) from None
