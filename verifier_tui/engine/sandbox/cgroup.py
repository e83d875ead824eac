"""A run's ``memory_mb`` and ``cpus`` as Docker applies a container's: a cgroup of its own.

Harbor 0.26.0 gives the container ``mem_limit: "<memory_mb>m"`` and
``cpus: <cpus>`` (harbor/environments/docker/__init__.py,
``write_resources_compose_file``). Docker makes them the container's
memory cgroup limit (``memory.limit_in_bytes`` on cgroup v1, ``memory.max``
on v2) and a CPU quota of ``cpus`` × 100 ms in every 100 ms
(``cpu.cfs_quota_us``; ``cpu.max``): the kernel then charges the run for all
a container is charged for (anonymous and shared memory, its tmpfs, System V
segments, memory files, socket buffers), its OOM killer ends a process of
the run past the limit, and the run sees every CPU but gets ``cpus`` worth
of time.

A run in the view gets the same where this tool may make a cgroup: a child
of its own cgroup in a hierarchy that has the controller and lets it write
(root; a delegated v2 subtree whose ``cgroup.subtree_control`` holds the
controller). The view's outer shell joins it before it becomes bwrap
(:func:`~.isolation.sandbox_argv`), so every process of the run is in it;
it is removed once the run is over. Elsewhere the memory is measured
(:func:`verifier_tui.engine.process.run_process`) and the CPUs are an
affinity, and the limits line says so.
"""

from __future__ import annotations

import functools
import itertools
import os
import re
import threading
import time

from verifier_tui.engine.record import record
from verifier_tui.engine.sandbox.isolation import CPU_JOIN, MEMORY_JOIN
from verifier_tui.engine.sandbox.view import cpus_given

PERIOD_US = 100_000
"""Docker's CFS period (``--cpus`` sets the quota to cpus × this)."""
GOING_S = 2.0
"""How long a run's end waits for its cgroups' last processes to go."""

# Per controller and version: the file that takes the limit.
_LIMIT_FILE = {("memory", 1): "memory.limit_in_bytes", ("memory", 2): "memory.max"}
_LIMIT_FILE |= {("cpu", 1): "cpu.cfs_quota_us", ("cpu", 2): "cpu.max"}
# Docker's swap for a memory limit given alone: as much again (memory and
# swap together twice the limit on v1; the swap itself on v2).
_SWAP_FILE = {1: "memory.memsw.limit_in_bytes", 2: "memory.swap.max"}
_OWN = re.compile(r"verifier-tui-(\d+)-(?:\d+|probe)")
_numbers = itertools.count()
_asking = threading.Lock()
_left: list[str] = []  # removed once its processes are gone: tried again at every run's end


@record(frozen=True)
class Place:
    """Where this process may make a run's cgroup for one controller."""

    folder: str
    version: int  # 1 or 2


def hierarchies(text: str) -> dict[str, tuple[int, str]]:
    """A process's cgroup by controller, from its ``/proc/PID/cgroup``:
    (version, path in the hierarchy); ``""`` for cgroup v2's. A line without
    its three fields, or whose path is not absolute, is left out (only its
    hierarchy is lost)."""
    found: dict[str, tuple[int, str]] = {}
    for line in text.splitlines():
        fields = line.split(":", 2)
        # The kernel writes three fields and every cgroup's path from its hierarchy's root: a line that
        # is otherwise gives no place for its controllers, but the others' lines still give theirs.
        if len(fields) != 3 or not fields[2].startswith("/"):
            continue
        number, controllers, path = fields
        if number == "0" and not controllers:
            found.setdefault("", (2, path))
        for controller in filter(None, controllers.split(",")):
            found[controller] = (1, path)
    return found


Mount = tuple[str, str, str, set[str]]


def mounts(text: str) -> list[Mount]:
    """The cgroup file systems in a ``/proc/PID/mountinfo``: (type, mount
    root, mount point, super options)."""
    found = []
    for line in text.splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
            root, point = (unescape(field) for field in fields[3:5])
            found.append((tail[0], root, point, set(tail[2].split(","))))
    return found


def unescape(field: str) -> str:
    """A path as ``/proc/PID/mountinfo`` writes it: a space as ``\\040``, a newline as ``\\012``."""
    return re.sub(r"\\([0-7]{3})", lambda found: chr(int(found.group(1), 8)), field)


def folder_for(controller: str, groups: dict[str, tuple[int, str]], mounted: list[Mount]) -> Place | None:
    """Where a child of the cgroup ``groups`` names would get ``controller``
    (:func:`hierarchies`, :func:`mounts`): its v1 hierarchy's, else v2's where
    the cgroup hands the controller down; None: nowhere."""
    if controller in groups:
        (version, path), kind = groups[controller], "cgroup"
    elif "" in groups:
        (version, path), kind = groups[""], "cgroup2"
    else:
        return None
    for fs, root, point, options in mounted:
        if fs != kind or (version == 1 and controller not in options):
            continue
        if not (path + "/").startswith(root.rstrip("/") + "/"):
            continue
        folder = os.path.join(point, os.path.relpath(path, root))
        if version == 2:  # a child gets the controller only where this cgroup hands it down
            try:
                with open(os.path.join(folder, "cgroup.subtree_control"), encoding="ascii") as handle:
                    if controller not in handle.read().split():
                        continue
            except (OSError, ValueError):  # a path no kernel writes (a NUL in it) is no place either
                continue
        return Place(os.path.normpath(folder), version)
    return None


def _try(place: Place, controller: str) -> bool:
    """Whether a child can be made at ``place`` and given a limit (then removed)."""
    probe = os.path.join(place.folder, f"verifier-tui-{os.getpid()}-probe")
    try:
        os.mkdir(probe, 0o755)
    except FileExistsError:
        pass
    except OSError:
        return False
    try:
        limit = os.path.join(probe, _LIMIT_FILE[controller, place.version])
        with open(limit, encoding="ascii") as handle:
            value = handle.read()
        with open(limit, "w", encoding="ascii") as handle:
            handle.write(value)
        return True
    except OSError:
        return False
    finally:
        _remove(probe)


def places() -> dict[str, Place]:
    """The controllers (``memory``, ``cpu``) this process may give a run a cgroup for, and where."""
    with _asking:  # runs side by side ask at once: one probe
        return _places()


@functools.cache  # once per process: what this machine and this user allow does not change while it runs
def _places() -> dict[str, Place]:
    try:
        with open("/proc/self/cgroup", encoding="utf-8", errors="replace") as handle:
            groups = hierarchies(handle.read())
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as handle:
            mounted = mounts(handle.read())
    except OSError:  # the parsers skip a line they cannot read (only its hierarchy or mount is lost)
        return {}
    found = {}
    for controller in ("memory", "cpu"):
        place = folder_for(controller, groups, mounted)
        if place is not None and _try(place, controller):
            found[controller] = place
            _sweep(place.folder)
    return found


def applied(memory: object, cpus: object) -> tuple[str, ...]:
    """Which of a task's limits (``memory_mb``, ``cpus``; None: not set) a cgroup of the run's own applies here."""
    wanted = [controller for controller, value in (("memory", memory), ("cpu", cpus)) if value is not None]
    return tuple(controller for controller in wanted if controller in places()) if wanted else ()


def _sweep(folder: str) -> None:
    """Remove the runs' cgroups a process of this tool left behind (SIGKILLed): its pid is gone."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        found = _OWN.fullmatch(name)
        if found and not os.path.exists(f"/proc/{found.group(1)}"):
            _remove(os.path.join(folder, name))


def _remove(folder: str) -> bool:
    try:
        os.rmdir(folder)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


class RunCgroup:
    """One run's cgroups (one per v1 hierarchy, one on v2), an
    :class:`~verifier_tui.engine.process.Attachment`: made with their limits
    as the run starts, read and removed once it is over."""

    def __init__(self, memory_bytes: int | None, cpus: float | None) -> None:
        values = {name: value for name, value in (("memory", memory_bytes), ("cpu", cpus)) if value is not None}
        self.limits = {
            controller: (places()[controller], values[controller]) for controller in applied(memory_bytes, cpus)
        }
        self.folders: dict[str, str] = {}
        self.oom_kills = 0
        """How many processes of the run the kernel's OOM killer ended."""

    def open(self) -> dict[str, int | str]:
        """Make the cgroups; the ``cgroup.procs`` files the outer shell joins, by stand-in."""
        name = f"verifier-tui-{os.getpid()}-{next(_numbers)}"
        joined: dict[str, str] = {}
        try:
            for controller, (place, value) in self.limits.items():
                folder = os.path.join(place.folder, name)
                if folder not in self.folders.values():
                    os.mkdir(folder, 0o755)
                self.folders[controller] = folder
                if controller == "cpu" and place.version == 1:  # the period the quota is of, as Docker sets it
                    _write(os.path.join(folder, "cpu.cfs_period_us"), str(PERIOD_US))
                _write(
                    os.path.join(folder, _LIMIT_FILE[controller, place.version]),
                    _limit_text(controller, value, place.version),
                )
                swap = os.path.join(folder, _SWAP_FILE[place.version])
                if controller == "memory" and os.path.exists(swap):  # where this kernel accounts for swap
                    _write(swap, str(int(value) * (2 if place.version == 1 else 1)))
                joined.setdefault(folder, os.path.join(folder, "cgroup.procs"))
        except BaseException:
            self.close()
            raise
        procs = [*joined.values(), "/dev/null", "/dev/null"]
        return {MEMORY_JOIN: procs[0], CPU_JOIN: procs[1]}

    def started(self, started: bool) -> None:
        pass

    def close(self) -> None:
        """Read what the OOM killer did, and remove the cgroups (those whose
        last processes are still being torn down, at a later run's end)."""
        memory = self.folders.get("memory")
        if memory is not None:
            self.oom_kills = _oom_kills(memory)
        # The run's last processes, SIGKILLed, may take a while to go on a busy
        # machine (an OOM-killed run's under its limit): the tool may exit next.
        deadline = time.monotonic() + GOING_S
        for folder in {*self.folders.values(), *_left}:
            if folder in _left:
                _left.remove(folder)
            while not _remove(folder):
                if folder not in self.folders.values() or time.monotonic() > deadline:
                    _left.append(folder)
                    break
                time.sleep(0.01)
        self.folders = {}


def _write(path: str, text: str) -> None:
    try:
        with open(path, "w", encoding="ascii") as handle:
            handle.write(text)
    except OSError as error:  # the kernel's refusal names the file, not the shell the run starts with
        raise OSError(error.errno, error.strerror, path) from error


def _limit_text(controller: str, value: float, version: int) -> str:
    if controller == "memory":
        return str(int(value))
    # More CPUs than the machine has is no limit, and the kernel refuses a quota past 2**44 µs (cpus_given)
    quota = round(float(cpus_given(value, ("cpu",))[0] or 0) * PERIOD_US)
    return f"{quota} {PERIOD_US}" if version == 2 else str(quota)


def _oom_kills(folder: str) -> int:
    """The ``oom_kill`` count of ``memory.oom_control`` (v1) or ``memory.events`` (v2)."""
    for name in ("memory.events", "memory.oom_control"):
        try:
            with open(os.path.join(folder, name), encoding="ascii") as handle:
                for line in handle:
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
        except (OSError, ValueError):
            continue
    return 0
