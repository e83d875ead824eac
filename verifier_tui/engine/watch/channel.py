"""One ``RustNotify`` (recursive or not) over some roots, driven in one thread.

Each channel builds its own ``RustNotify`` and calls its blocking
``watch(debounce, step, timeout, stop_event)`` in a loop, as ``awatch`` does
internally, then filters and ``stat``-s in that thread. Between waits it
checks its roots: one deleted is reported, one re-created (or replaced by a
rename) gets a new ``RustNotify`` without losing the other roots' events.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from verifier_tui.engine.watch.changes import Change

if TYPE_CHECKING:
    from watchfiles._rust_notify import RustNotify

    from verifier_tui.engine.watch.watcher import Watcher

logger = logging.getLogger(__name__)

#: How long RustNotify may sleep with no event before control returns to us to
#: check the watched roots (deleted, re-created, replaced by a rename). This
#: bounds how late a re-created root is noticed when no event at all tells us.
_ROOT_CHECK_MS = 250

#: While a watched root is missing, check for it this often: a tool that
#: re-creates the workspace is then picked up within ~50 ms.
_MISSING_ROOT_CHECK_MS = 50


def is_under(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)


def forms(path: Path) -> tuple[Path, ...]:
    """The path as given and, when different, with symlinks resolved: some
    back ends (macOS FSEvents) report canonical paths."""
    real = Path(os.path.realpath(path))
    return (path,) if real == path else (path, real)


def _dir_identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None


def _is_empty_file(path: Path) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_size == 0



@dataclass
class Root:
    """A folder handed to RustNotify."""

    path: Path
    forms: tuple[Path, ...]
    identity: tuple[int, int] | None = None
    """(st_dev, st_ino) when the current RustNotify was built; None: absent."""
    missing: bool = False
    """Absent at the last check (already reported as deleted)."""


class _Stop(Exception):
    pass


class WatchError(RuntimeError):
    """The OS watcher failed (e.g. the inotify watch limit was reached: try
    ``force_polling`` or raise ``fs.inotify.max_user_watches``)."""


END = object()

#: watchfiles' codes for an added and a deleted path (``watchfiles.Change``).
_ADDED = 1
_DELETED = 3

#: How many steps an unsettled batch (see ``Channel._unsettled``) is held.
_SETTLE_STEPS = 3

#: Give up on a watch that keeps failing after this many rebuilds in a row.
_MAX_REBUILDS_AFTER_ERRORS = 3

#: A batch of this many events is taken for one in which events were lost.
#: When the kernel's inotify queue overflows (a burst of more than
#: fs.inotify.max_queued_events, 16,384 by default, while the watcher was not
#: reading), notify turns the overflow into a rescan event that names no path,
#: and watchfiles drops events without a path: what arrives is only the part of
#: the burst queued before the overflow, never a word that the rest is missing.
#: So a batch this big reports every root as re-created (re-scan it whole):
#: the copy sandbox then walks its mirror instead of trusting the paths named,
#: which for this many paths costs about what copying them one by one would.
_RESCAN_AT = 1000


class Channel:
    """One RustNotify (recursive or not) over some roots, driven in one thread."""

    def __init__(self, watcher: Watcher, roots: list[Path], recursive: bool) -> None:
        self.watcher = watcher
        self.recursive = recursive
        self.roots = [Root(path=p, forms=forms(p)) for p in roots]
        self.notify: RustNotify | None = None
        self.thread = threading.Thread(
            target=self._main,
            name=f"verifier-tui-watch-{'tree' if recursive else 'files'}",
            daemon=True,
        )

    # -- building ---------------------------------------------------------

    def _build(self) -> RustNotify | None:
        """A new RustNotify over the roots that exist now. This walks their
        trees, holding the GIL all along (see the module docstring)."""
        from watchfiles._rust_notify import RustNotify

        identities = [_dir_identity(root.path) for root in self.roots]
        present = [str(r.path) for r, i in zip(self.roots, identities, strict=True) if i is not None]
        w = self.watcher
        notify = (
            RustNotify(present, False, w.force_polling, w.poll_delay_ms, self.recursive, True)
            if present
            else None
        )
        # Recorded only once the new watch is in place, so a failed build is
        # simply retried at the next check.
        for root, identity in zip(self.roots, identities, strict=True):
            root.identity = identity
            root.missing = identity is None
        return notify

    def _rebuild(self, raw: set[tuple[int, str]]) -> None:
        """Replace the RustNotify after a root changed, losing no event on the
        other roots: build the new one first, then collect what the old one
        caught meanwhile."""
        from watchfiles._rust_notify import WatchfilesRustInternalError

        try:
            new = self._build()
        except FileNotFoundError:
            # A root vanished again while we walked it: try at the next check.
            return
        old, self.notify = self.notify, new
        if old is not None:
            try:
                leftover = old.watch(self.watcher.debounce_ms, self.watcher.step_ms, 1, None)
            except WatchfilesRustInternalError:
                leftover = None  # the very error we are rebuilding after
            if isinstance(leftover, set):
                raw |= leftover
            old.close()

    # -- the loop ---------------------------------------------------------

    def _main(self) -> None:
        w = self.watcher
        try:
            self.notify = self._build()
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer
            w._post(WatchError(f"could not watch {self._describe_roots()}: {exc}"))
            w._channel_ready()
            w._post(END)
            return
        w._channel_ready()
        try:
            self._loop()
        except _Stop:
            pass
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer
            w._post(WatchError(f"watching {self._describe_roots()} failed: {exc}"))
        finally:
            if self.notify is not None:
                self.notify.close()
            w._post(END)

    def _describe_roots(self) -> str:
        return ", ".join(str(r.path) for r in self.roots)

    def _loop(self) -> None:
        from watchfiles._rust_notify import WatchfilesRustInternalError

        w = self.watcher
        failures = 0
        while not w._stop.is_set():
            try:
                raw = self._wait(_MISSING_ROOT_CHECK_MS if self._any_missing() else _ROOT_CHECK_MS)
                failures = 0
            except WatchfilesRustInternalError:
                # The OS watcher reported an error (its event queue overflowed,
                # a watch could not be added...): events may have been lost.
                # Start over, and report every root as re-created (re-scan).
                failures += 1
                if failures > _MAX_REBUILDS_AFTER_ERRORS:
                    raise
                logger.warning("file watcher error; re-creating it", exc_info=True)
                for root in self.roots:
                    root.identity = None
                raw = set()
            appeared, vanished = self._check_roots(raw)
            if appeared:
                self._rebuild(raw)
            change = w._make_change(self, raw, appeared, vanished)
            if change is not None and self._unsettled(raw, change, vanished):
                try:
                    extra = self._wait(_SETTLE_STEPS * w.step_ms)
                except WatchfilesRustInternalError:
                    extra = set()  # handled (rebuilt) at the next wait
                raw |= extra
                more_appeared, more_vanished = self._check_roots(extra)
                if more_appeared:
                    self._rebuild(raw)
                appeared += more_appeared
                vanished |= more_vanished
                change = w._make_change(self, raw, appeared, vanished)
            if change is not None and len(raw) >= _RESCAN_AT:
                change = w._make_change(self, raw, appeared + [r for r in self.roots if not r.missing], vanished)
            if change is not None:
                w._post(change)

    def _unsettled(self, raw: set[tuple[int, str]], change: Change, vanished: frozenset[Path]) -> bool:
        """Whether the batch looks like the middle of a save that a loaded
        machine paused for more than a step: a file deleted (an atomic save
        between "rename x away" and "write new x"), or a file just created and
        still empty (between open() and write()). Such a batch is held a few
        steps more so the save is one Change, not two, and no run reads an
        empty file. Cost: a real deletion or an empty new file is reported
        ~30 ms later; a normal save, nothing."""
        if change.deleted - vanished:
            return True
        for kind, raw_path in raw:
            if kind == _ADDED:
                path = self.watcher._user_path(self, raw_path)
                if path in change.paths and _is_empty_file(path):
                    return True
        return False

    def _any_missing(self) -> bool:
        return any(r.missing for r in self.roots)

    def _wait(self, timeout_ms: int) -> set[tuple[int, str]]:
        w = self.watcher
        if self.notify is None:
            if w._stop.wait(timeout_ms / 1000):
                raise _Stop
            return set()
        result = self.notify.watch(w.debounce_ms, w.step_ms, timeout_ms, w._stop)
        if result == "stop":
            raise _Stop
        return result if isinstance(result, set) else set()

    def _check_roots(self, raw: set[tuple[int, str]]) -> tuple[list[Root], frozenset[Path]]:
        """Roots that appeared or were replaced (their watch is dead: the OS
        watch follows the old inode, which now lies elsewhere or nowhere), and
        roots that vanished since the last check."""
        # A root's own "deleted" event (rm -rf, or renamed away) kills its
        # watch even when a new folder already stands in its place with the
        # same inode number: file systems reuse freed inodes at once, so the
        # identity check alone would miss "rm -rf ws && mkdir ws".
        dead = {path for kind, path in raw if kind == _DELETED}
        appeared: list[Root] = []
        vanished: set[Path] = set()
        for root in self.roots:
            identity = _dir_identity(root.path)
            if identity is None:
                root.identity = None
                if not root.missing:
                    root.missing = True
                    vanished.add(root.path)
            elif identity != root.identity or any(str(f) in dead for f in root.forms):
                appeared.append(root)
        return appeared, frozenset(vanished)

