"""The watching threads: the targets split into channels (:mod:`.channel`),
and each channel's raw events turned into a
:class:`~verifier_tui.engine.changes.Change` on the user's paths.

No event loop here: the watcher process (:mod:`.child`) runs these threads
and nothing else, and importing asyncio would add about 25 ms of CPU to its
start, once per TUI and ``watch`` session. :class:`~.watcher.Watcher` runs
them in its own process when the child cannot start (or is not wanted).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path

from verifier_tui.engine.changes import Change, WatchTarget
from verifier_tui.engine.filters import is_noise
from verifier_tui.engine.record import record
from verifier_tui.engine.watch.channel import Channel, forms, is_under


@record
class Target:
    path: Path  # absolute, not resolved
    label: str
    folder: bool
    ignore: tuple[Path, ...]  # ignored paths strictly inside this folder target
    beside: bool = False  # WatchTarget.beside


class WatchThreads:
    """One channel for the folder targets (watched recursively) and one for
    the parents of single-file targets (non-recursively), as needed. What they
    find goes to ``post`` (see :class:`~.channel.Channel`); ``stop`` ends them."""

    def __init__(
        self,
        targets: list[WatchTarget],
        *,
        ignore: Iterable[Path] = (),
        force_polling: bool = False,
        links_in: Path | None = None,
        post: Callable[[object], None],
    ) -> None:
        if not targets:
            raise ValueError("nothing to watch")
        self.ignore = [Path(os.path.abspath(p)) for p in ignore]
        self.links_in = links_in  # where a channel keeps its links to roots not named in UTF-8
        ignored_forms = [form for p in self.ignore for form in forms(p)]

        self.targets: list[Target] = []
        for target in targets:
            path = Path(os.path.abspath(target.path))
            folder = path.is_dir() if target.folder is None else target.folder
            # An ignored path applies inside the target only: one that contains
            # the target would silence it entirely, which nobody means.
            inside = tuple(
                {
                    path / ignored.relative_to(form)  # in the target's own spelling
                    for form in forms(path)
                    for ignored in ignored_forms
                    if folder and ignored != form and is_under(ignored, form)
                }
            )
            self.targets.append(Target(path, target.label, folder, inside, target.beside))

        # Recursive roots: folder targets not inside another folder target (but for one watched
        # beside the runs' inputs: what is inside it keeps its own root, made or removed said so),
        # and those that are links (what lies behind a link inside a root is not a change: see the
        # channel's _behind_link).
        folders = sorted({t.path for t in self.targets if t.folder}, key=lambda p: len(p.parts))
        beside = {t.path for t in self.targets if t.beside}
        tree_roots: list[Path] = []
        for path in folders:
            if path.is_symlink() or not any(is_under(path, r) and r not in beside for r in tree_roots):
                tree_roots.append(path)
        # Non-recursive roots: parents of single files not covered above.
        file_roots: list[Path] = []
        for t in self.targets:
            parent = t.path.parent
            covered = parent in file_roots or any(is_under(parent, r) for r in tree_roots)
            if not t.folder and not covered:
                file_roots.append(parent)

        self._files = {t.path: t for t in self.targets if not t.folder}
        self._folders = sorted((t for t in self.targets if t.folder), key=lambda t: -len(t.path.parts))
        self.stop = threading.Event()
        self.channels = [
            Channel(
                roots,
                recursive,
                force_polling=force_polling,
                stop=self.stop,
                post=post,
                # The parent of a single file sees a folder target beside it come
                # and go too (``cases/`` beside ``task.toml``); the folder's own
                # channel reports that, and two reports of one ``mv`` were two runs.
                make_change=partial(self._make_change, folders=recursive),
                links_in=links_in,
            )
            for roots, recursive in ((tree_roots, True), (file_roots, False))
            if roots
        ]

    def start(self) -> None:
        for channel in self.channels:
            channel.thread.start()

    def join(self, timeout: float) -> None:
        for channel in self.channels:
            if channel.thread.is_alive():
                channel.thread.join(timeout)

    def _classify(self, path: Path, folders: bool) -> str | None:
        """The display name of a relevant path, "" for a quiet one (noise
        under a watched folder: see ``Change.quiet``), None for one that is
        not ours at all (or under a folder target, unless ``folders``)."""
        if path in self._files:
            return _file_name(self._files[path])  # chosen by name: no noise rule applies
        for target in self._folders if folders else ():
            if is_under(path, target.path):
                if any(is_under(path, ignored) for ignored in target.ignore):
                    return None
                if target.beside and any(is_under(path, f) for f in self._files):
                    return None  # in a file target that is a folder now (a step's tests link made one): not ours
                relative = path.relative_to(target.path).parts
                if is_noise(relative):
                    return ""
                return "/".join((target.label, *relative))
        return None  # e.g. a sibling of a single-file target

    def _make_change(
        self,
        paths: set[Path],
        added: set[Path],
        appeared: list[Path],
        vanished: frozenset[Path],
        new: frozenset[Path],
        *,
        folders: bool,
    ) -> Change | None:
        """The change to report for a channel's batch: ``paths`` changed (of
        them ``added`` were created), ``appeared`` roots came (back; ``new`` of
        them were never there while watched), ``vanished`` roots went; all as the user named them; paths under
        folder targets only when ``folders``. (Called in the channels' threads.)"""
        names: dict[Path, str] = {}
        quiet: set[Path] = set()
        recreated: set[Path] = set()
        for path in paths:
            name = self._classify(path, folders)
            if name and path in added and not os.path.lexists(path):
                # Made and gone within the batch: an atomic save's temporary file, renamed
                # over the file the user saved. No run read it; the mirror follows it all the same.
                quiet.add(path)
            elif name:
                names[path] = name
            elif name == "":
                quiet.add(path)
        for root in appeared:
            for target in self.targets:
                if target.folder and target.path == root:
                    names[root] = target.label
                    recreated.add(root)
                elif not target.folder and target.path.parent == root:
                    if os.path.lexists(target.path):
                        names[target.path] = _file_name(target)  # a single file in it
                    elif "/" in target.label and target.label.endswith("/" + target.path.name):
                        # The folder made before its file (mkdir steps/third, then its instruction.md): what
                        # Harbor says of the task changed (no folder, then no instruction), said by its path.
                        names[root] = target.label.rsplit("/", 1)[0]
                        recreated.add(root)
        names.update(self._gone(vanished, folders))
        if not names and not quiet:
            return None
        # Stat after the batch: what matters is the state now, not the order
        # of an unordered event set.
        deleted = frozenset(p for p in names if not os.path.lexists(p))
        return Change(
            paths=frozenset(names),
            deleted=deleted,
            recreated=frozenset(recreated - deleted),
            created=frozenset(recreated & new) - deleted,
            names=tuple(sorted(names.items())),
            quiet=frozenset(quiet),
        )

    def _gone(self, vanished: frozenset[Path], folders: bool) -> dict[Path, str]:
        """The targets ``vanished`` roots took with them, by name: a folder target, and each
        single file in a root gone (``mv steps/second steps/away`` removes its instruction.md)."""
        names: dict[Path, str] = {}
        for path in vanished:
            name = self._classify(path, folders)
            if name:
                names[path] = name
            names.update((t.path, _file_name(t)) for t in self._files.values() if t.path.parent == path)
        return names


def _file_name(target: Target) -> str:
    """How a change to a single-file target is named: its file name ("response.json", not the
    label "response"), or its label when that is its path in the task, ending in that name: a
    step's tests folder watched by its own name (a link) is "steps/second/tests"; as "tests" it
    read as the task's tests/ folder, which had not changed."""
    return target.label if target.label.rsplit("/", 1)[-1] == target.path.name else target.path.name
