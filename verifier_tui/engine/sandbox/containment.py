"""A run's containment: what :func:`contain` adds to a prepared run, and what
:func:`settle` reads back once it is over.

In the sandbox's view (:mod:`.isolation`), the runner's command line is
wrapped so it starts in bubblewrap's namespaces: the view an image would
show, the task's network and limits, every process it leaves behind listed
and ended with the namespace. In the copy sandbox, the runner's environment
carries a mark its escaped descendants are found by
(:data:`~verifier_tui.engine.process.MARKER`), and the user's files are
looked at before and after the run (:mod:`.user_files`) to report what it wrote.
"""

from __future__ import annotations

import errno
import functools
import os
import re
import shutil
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from verifier_tui.engine import cache, procfs
from verifier_tui.engine.advice import PYTHON_OPTION, Advice
from verifier_tui.engine.plain import cut_middle
from verifier_tui.engine.process import MARKER, new_token
from verifier_tui.engine.record import field, record, replace
from verifier_tui.engine.sandbox import cgroup, isolation, network, user_files
from verifier_tui.engine.sandbox.room import naming
from verifier_tui.engine.sandbox.view import LEAST_CPUS, TESTS, cpus_text, sandbox_path_lines

if TYPE_CHECKING:
    from verifier_tui.engine.process import ProcessResult
    from verifier_tui.engine.sandbox.stage import Stage
    from verifier_tui.engine.sandbox.view import Limits


@record
class Settled:
    """What the containment learnt of a finished run."""

    returncode: int | None
    signal: int | None
    start_error: str | None
    strays: list[str]
    written: list[str]
    strays_more: int = 0
    """Strays counted past :data:`~.isolation.STRAYS_MOST` and not listed (by the view's init,
    or of those the copy sandbox's mark found)."""
    strays_at_least: bool = False
    """Their listing was cut short (``ProcessResult.listing_cut_short``): there were at least as many."""


VIEW_FAILED = "could not set up the run's sandbox: "


@record
class Contained:
    """A run's command line as :func:`contain` wraps it, and what else it sets."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path | None = None
    """Where the run starts (None: where it would have)."""
    notices: list[str] = field(default_factory=list)
    start_error: str | None = None
    marker: str | None = None
    """In the copy sandbox: the value of :data:`~verifier_tui.engine.process.MARKER` in the runner's
    environment, by which its escaped descendants are found."""
    guard: Any = None
    """In the copy sandbox: what the user's files looked like before the run
    (:class:`~.user_files.Snapshot`), to report what it wrote."""
    memory_limit: int | None = None
    """Bytes the run may hold (memory and the view's tmpfs) before its biggest process is killed."""
    memory_extra: Any = None
    """In a view: what its tmpfs holds, by the run's leader (``process.run_process``'s ``memory_extra``)."""
    runner_over: Any = None
    """In a view: whether its runner exited, its init listing the strays, by the run's leader
    (``process.run_process``'s ``runner_over``)."""
    attached: Attached | None = None
    """In a view: its cgroups and network helper, as the run starts."""
    limits: Any = None
    """The limits as this run gets them (the network it was given)."""


def contain(
    argv: list[str],
    env: dict[str, str],
    *,
    stage: Stage,
    limits: Limits,
    interpreter: tuple[str, ...],
    network_choice: str,
    workspace: Path | None,
    tests_dir: Path,
    verifier: Path,
    user_paths: list[Path | None],
) -> Contained:
    """Wrap a run's command line in the stage's isolation and the task's
    limits. ``interpreter``: the chosen interpreter's folders (its
    installation, its import path). ``network_choice``: ``task`` or ``host``
    (``--network``). ``user_paths``: the user's files and folders the run uses,
    the ones to look at before and after it in the copy sandbox."""
    out = Contained(argv, env, limits=limits)
    if limits.memory_mb is not None:
        out.memory_limit = limits.memory_mb << 20
    have = procfs.machine_cpus()
    if limits.cpus is not None and limits.cpus > have:
        # A quota past the machine's CPUs is clamped to them, and an affinity can bind no more
        # (view.cpus_given, either way: all of them): the run gets fewer than the task asked. Docker
        # refuses such a container ("range of CPUs is from 0.01 to N.00, as there are only N CPUs available").
        out.notices.append(
            f"task.toml: [environment] cpus = {limits.cpus!r} is more than the {cpus_text(have)} this machine "
            f"gives the run: this run gets {cpus_text(have)} (Docker would not start the container "
            "on this machine; Harbor's machine may have more)"
        )
    if stage.namespace:
        _in_view(out, argv, stage, limits, interpreter, network_choice, workspace)
        return out
    if limits.network == "no-network":
        out.notices.append(
            'network_mode = "no-network" is not applied: the copy sandbox has no network '
            "namespace, so the verifier reaches the network the sandbox would refuse it"
        )
    named = sandbox_path_lines(tests_dir, verifier)
    if named:
        shown = ", ".join(named[:3]) + (f" +{len(named) - 3} more" if len(named) > 3 else "")
        out.notices.append(
            "the copy sandbox has no /app, /tests or /logs/verifier (the run gets the scratch "
            f"folder's paths), and the verifier names them by absolute path: {shown}"
        )
    token = new_token()
    out.marker = token
    out.env = dict(env, **{MARKER: token})
    # The tool's cache first (it is small): what the run writes there is thrown away after it.
    out.guard = user_files.take([Path(cache.folder()), *user_paths])
    setpriv = shutil.which("setpriv", path="/usr/bin:/bin") or shutil.which("setpriv")
    # Should the tool be SIGKILLed, the runner goes with it. What the runner
    # started does not: without a PID namespace nothing ends those then (the
    # README says so).
    guard = [setpriv, "--pdeathsig", "KILL"] if setpriv is not None and sys.platform.startswith("linux") else []
    out.argv = guard + argv
    return out


def _in_view(
    out: Contained,
    argv: list[str],
    stage: Stage,
    limits: Limits,
    interpreter: tuple[str, ...],
    network_choice: str,
    workspace: Path | None,
) -> None:
    if isolation.view_has(limits.app) and not os.path.isdir(limits.app):
        out.start_error = (
            f"tests/test.sh passes --workspace {limits.app}, inside this machine's read-only "
            f"/{limits.app.strip('/').split('/')[0]}, where the view cannot make it: give the task's "
            "workspace another path (the sandbox's image would have to hold that folder)"
        )
        return
    clash = isolation.workspace_clash(limits.app)
    if clash is not None:
        # Harbor's workspace is the image's /app; no container has the agent's
        # files at /etc or /tests, so there is no Docker behaviour to mirror here.
        out.start_error = (
            f"tests/test.sh passes --workspace {limits.app}, which would hide or be hidden by {clash}, "
            "a folder the sandbox needs: give the task's workspace another path"
        )
        return
    if not isolation.bwrap_reaches(limits.app):
        out.start_error = (
            f"tests/test.sh passes --workspace {cut_middle(limits.app, 200)}, a path of {len(limits.app):,} "
            "characters: too long for the view, where bwrap makes it past PATH_MAX (File name too long); "
            "give the task's workspace a shorter path"
        )
        return
    if limits.app_note:
        out.notices.append(limits.app_note)
    shown = shown_interpreter(interpreter)  # (each folder looked up on disk: once a run)
    too_long = [folder for folder in shown if not isolation.bwrap_reaches(folder, os.path.realpath(folder))]
    out.notices += [
        f"the chosen interpreter's folder {cut_middle(folder, 200)} is left out of the view: its path, "
        "after bwrap's /oldroot, is past PATH_MAX (File name too long), so no bind can show it"
        for folder in too_long
    ]
    shown = tuple(folder for folder in shown if folder not in too_long)
    bound = _not_overlaid(shown, stage.bwrap)
    out.notices += [
        f"the chosen interpreter's folder {folder} {why}: it is shown by a read-only bind, through which "
        "a socket in it (a server's of this machine) answers the run"
        for folder, why in bound
    ]
    hidden = next((folder for folder in shown if isolation.inside(folder, limits.app)), None)
    if hidden is not None:  # bound first, the workspace over it: the runner could not start (exit 127)
        out.start_error = Advice(  # an action: the TUI's user restarts with it, the plugin has its own option
            f"tests/test.sh passes --workspace {limits.app}, which holds the chosen interpreter's folder "
            f"{hidden}: the workspace bound there would hide it; choose an interpreter that lives elsewhere: ",
            PYTHON_OPTION,
        )
        return
    workdir, make = _workdir(limits, workspace, stage, out.notices)
    reach, attach = _network(limits, network_choice, out.notices)
    resolv = None
    if reach == "user":
        resolv = str(stage.ctl_dir / "resolv.conf")
        _write_beside(resolv, f"nameserver {network.RESOLVER}\n")
    groups = cgroup.RunCgroup(out.memory_limit, limits.cpus)
    if "memory" in groups.limits:
        out.memory_limit = None  # the kernel counts it, and its OOM killer acts
    if "cpu" in groups.limits and limits.cpus is not None and limits.cpus < LEAST_CPUS:
        out.notices.append(
            # Docker leaves the lower bound to the kernel, which refuses a quota under 1 ms; the
            # quota written is that least one (view.cpus_given)
            f"task.toml: [environment] cpus = {limits.cpus!r} is less than the least CPU quota the kernel "
            f"takes (1 ms in every 100 ms, {cpus_text(LEAST_CPUS)}): Docker's container would not start "
            f"with it; this run gets {cpus_text(LEAST_CPUS)}"
        )
    given = tuple(groups.limits)
    if attach is not None or given:
        out.attached = Attached(groups if given else None, attach)
    out.limits = replace(limits, network_given=reach, cgroup=given)
    overlay = None
    if stage.overlay_lower is not None:
        overlay = (str(stage.overlay_lower), str(stage.upper_dir), str(stage.work_dir))
    tmp_mb = limits.storage_mb if limits.storage_mb is not None else limits.memory_mb
    plan = isolation.ViewPlan(
        tests=str(stage.tests_dir),
        reward=str(stage.reward_dir),
        inputs=str(stage.inputs_dir),
        app_copy=None if overlay is not None else str(stage.app_dir),
        overlay=overlay,
        workdir=workdir,
        make_workdir=make,
        app_at=stage.app_at,
        network=reach,
        interpreter=shown,
        interpreter_bound=tuple(folder for folder, _ in bound),
        # The run's HOME (the user's, or the one the task sets: /root, as Harbor's root images have)
        # is an empty folder of its own, whoever runs the tool; one the view cannot make is a variable only.
        home=out.env.get("HOME") or None,
        hide=(str(stage.root.parent), cache.folder()),
        tmp_bytes=tmp_mb << 20 if tmp_mb is not None else None,
        resolv=resolv,
        env=tuple(out.env.items()),
        cgroup=bool(given),
    )
    out.argv = isolation.sandbox_argv(stage.bwrap, plan, str(stage.ctl_dir), argv)
    out.env = {}  # the processes on this machine's side get none of the task's (see isolation._env_file)
    out.runner_over = functools.partial(isolation.runner_over, str(stage.ctl_dir))
    out.cwd = stage.root
    if out.memory_limit is not None:
        out.memory_extra = functools.partial(tmpfs_bytes, workspace=plan.app_at)


class Attached:
    """A view's cgroups and network helper as the one
    :class:`~verifier_tui.engine.process.Attachment` its run starts with: the
    cgroups made first (the outer shell joins them before bwrap starts), and
    removed last (once the helper is over)."""

    def __init__(self, groups: cgroup.RunCgroup | None, helper: network.UserNetwork | None) -> None:
        self.cgroup, self.network = groups, helper
        self._parts: list[Any] = [part for part in (groups, helper) if part is not None]

    def open(self) -> dict[str, int | str]:
        opened: dict[str, int | str] = {}
        for index, part in enumerate(self._parts):
            try:
                opened |= part.open()
            except BaseException:
                for done in self._parts[:index]:
                    done.close()
                raise
        return opened

    def started(self, started: bool) -> None:
        for part in self._parts:
            part.started(started)

    def close(self) -> None:
        for part in reversed(self._parts):
            part.close()


def _network(limits: Limits, choice: str, notices: list[str]) -> tuple[str, Any]:
    """The network the view gets (:func:`.network.given`) and the helper that
    gives it, with what the user must know of it beyond the limits line
    (which says a network the run lacks, and how to get it)."""
    reach = network.given(limits.network, choice)
    if reach == network.HOST:
        notices.append(network.SHARED)
    elif limits.network == "allowlist":
        notices.append('network_mode = "allowlist" is not applied here: the allowlist is not enforced')
    helper = network.helper() if reach == "user" else None
    return reach, network.UserNetwork(helper) if helper is not None else None


def shown_interpreter(folders: tuple[str, ...]) -> tuple[str, ...]:
    """The interpreter's folders the view binds: those the machine's
    programs do not already show, never the user's home, a folder the view
    keeps its own or leaves out, or one that holds either, each once (a
    folder inside another is shown with it)."""
    home = os.path.realpath(os.path.expanduser("~"))
    kept: list[str] = []
    for folder in sorted({os.path.normpath(f) for f in folders if os.path.isabs(f)}):
        if not os.path.exists(folder) or isolation.view_has(folder):
            continue
        real = os.path.realpath(folder)
        if isolation.inside(real, "/proc") or any(
            isolation.inside(private, place) for private in (home, *isolation.NOT_SHOWN) for place in (folder, real)
        ):
            continue
        if any(isolation.inside(folder, other) for other in kept):
            continue
        kept.append(folder)
    return tuple(kept)


def _not_overlaid(folders: tuple[str, ...], bwrap: str) -> list[tuple[str, str]]:
    """Each of ``folders`` (a folder, not a file) the kernel lays no overlay over, with why: one holding
    a mount point of this machine's (in a user namespace it refuses, EINVAL: the overlay would uncover
    what the mount hides), or one on an overlay stacked on another already (two deep, as far as the
    kernel stacks: bwrap's third fails, Invalid argument). On an overlay whose layers cannot be told
    here, ``bwrap`` tries it (:func:`_overlay_tried`)."""
    mounts: list[tuple[str, str, str, str]] = []  # (point, type, its options, its line)
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as handle:
            for line in handle:
                left, _, right = line.partition(" - ")
                fields, tail = left.split(), right.split()
                if len(fields) > 4 and tail:
                    mounts.append((cgroup.unescape(fields[4]), tail[0], tail[2] if len(tail) > 2 else "", line))
    except OSError:
        pass

    def on(path: str) -> tuple[str, str, str, str] | None:
        """The mount ``path`` is on: the deepest holding it, the last made there."""
        held = [(len(p), n) for n, (p, _, _, _) in enumerate(mounts) if isolation.inside(path, p)]
        return mounts[max(held)[1]] if held else None

    def stacked(options: str) -> bool | None:
        """Whether an overlay's lower layers are on an overlay; None when that cannot be told here: layers
        given one by one (the new mount API's ``lowerdir+=``), relative, or not found here (a container's,
        the host's paths)."""
        given = options.split(",")
        lowers = next((o[len("lowerdir=") :] for o in given if o.startswith("lowerdir=")), "")
        found = [cgroup.unescape(lower) for lower in re.split(r"(?<!\\):", lowers) if lower]
        if any(o.startswith(("lowerdir+=", "datadir+=")) for o in given) or not found:
            return None
        if not all(os.path.isabs(lower) and os.path.isdir(lower) for lower in found):
            return None
        return any((on(os.path.realpath(lower)) or ("", "", "", ""))[1] == "overlay" for lower in found)

    found = []
    for folder in folders:
        real = os.path.realpath(folder)
        if not os.path.isdir(folder):
            continue
        # (a folder's number among bwrap's --tmp-overlay ones is below len(folders): as long at most)
        if not isolation.overlay_can_take(folder, tmp_index=len(folders)):
            found.append((folder, "has a path longer than an overlay's mount options carry, or one read as an option"))
            continue
        below = next((p for p, _, _, _ in mounts if p != real and isolation.inside(p, real)), None)
        mount = on(real)
        if below is not None:
            found.append(
                (folder, f"holds a mount point ({folder + below[len(real) :]}), where the kernel lays no overlay")
            )
            continue
        if mount is None or mount[1] != "overlay":
            continue
        deep = stacked(mount[2])
        if deep:
            found.append(
                (folder, f"is on an overlay stacked on another (mounted at {mount[0]}), where the kernel lays no third")
            )
        elif deep is None and (why := _overlay_tried(bwrap, folder, mount[3])) is not None:
            # A container's root overlay (Docker's, a devcontainer's) names the host's layers: most are
            # one overlay deep, where the kernel lays the view's, and a few two, where it refuses it
            found.append((folder, f"is on an overlay (mounted at {mount[0]}) {why}"))
    return found


_overlays_tried: dict[str, str | None] = {}
"""Each overlay whose layers could not be told, by its line of ``/proc/self/mountinfo`` (its mount id, and
the rest: an id the kernel gives again to another mount is tried again), and whether the kernel laid the
view's over a folder of it (None), else why not: once a process where the kernel answered (a few ms). Not
kept in the tool's cache: a "no" a run wrote there would show its sockets to the next runs, and a "yes"
for a mount that is no longer the one tried would fail a run to start."""
_timed_out: dict[str, tuple[float, str]] = {}
"""Each such overlay whose try did not answer in time: when, and what was said. Taken as not answering
again for :data:`~.isolation.HOLD_TIMEOUT_S`, as the sandbox's own probe is: ``test``'s cases, which
all ask at once, would each wait out the timeout in turn."""
_trying = threading.Lock()
"""``test``'s cases are contained side by side (a runner started held while another runs): one try serves all."""


def _overlay_tried(bwrap: str, folder: str, mount: str) -> str | None:
    """Why ``folder``, on the overlay whose mountinfo line is ``mount``, gets no overlay of the view's
    (None: it does), tried once per mount. One that could not be tried is bound this time (a run never
    fails to start for it) and tried again at the next (one that timed out, once the hold is over)."""
    untried = "whose layers cannot be told here, and another could not be tried there ({})"
    with _trying:
        if mount not in _overlays_tried:
            late = _timed_out.get(mount)
            if late is not None and time.monotonic() - late[0] < isolation.HOLD_TIMEOUT_S:
                return untried.format(f"{late[1]}; not tried again so soon")
            try:
                _overlays_tried[mount] = isolation.overlay_refused(bwrap, folder)
            except OSError as exc:
                said = exc.strerror or str(exc)
                if exc.errno == errno.ETIMEDOUT:
                    _timed_out[mount] = (time.monotonic(), said)
                return untried.format(said)
    refused = _overlays_tried[mount]
    return None if refused is None else f"where the kernel refused another (tried: {refused})"


INODE_BYTES = 1024
"""What the kernel keeps for each file or folder of a tmpfs, outside its
blocks: an inode (752 bytes on Linux 6.x) and a name (192, more for a long
one). A memory cgroup is charged for them; a tmpfs's size does not bound them
(600,000 empty folders in the view's 64 MB /dev/shm held 600 MB of them)."""


def tmpfs_bytes(leader: int, workspace: str = "/app") -> int:
    """What the view's tmpfs hold (``/``, ``/tmp``, ``/dev``, ``/dev/shm``: memory, as
    a memory cgroup counts a container's shmem), read through its init's
    root once bwrap has made it (before that, its root is still this machine's).
    One the ``workspace`` is bound over (a test.sh's ``--workspace /tmp``) is
    a folder of this machine's disk there: not memory. The files' inodes count
    only in ``/dev`` and ``/dev/shm``, a container's tmpfs too: its ``/`` and ``/tmp``
    are on its disk, where its memory cgroup reclaims them (600,000 empty folders
    in a container's /tmp scored 1.0 under ``memory_mb = 256``; in its /dev/shm they were killed)."""
    total = 0
    for init in procfs.children(leader):
        if not procfs.has_own_root(init):  # its command line would not tell: the run may rewrite it
            continue
        for place in ("", "/tmp", "/dev", "/dev/shm"):
            if place and os.path.normpath(workspace) == place:
                continue
            try:
                st = os.statvfs(f"/proc/{init}/root{place}")
            except OSError:
                continue
            total += (st.f_blocks - st.f_bfree) * st.f_frsize
            if place in ("/dev", "/dev/shm"):
                total += (st.f_files - st.f_ffree) * INODE_BYTES
    return total


def _write_beside(path: str, text: str) -> None:
    """``path`` holding ``text``, written beside and renamed (a run started
    ahead may have bound the last one). Left as it is when it holds ``text``
    already: a run started ahead may be binding it that moment, and bwrap
    fails on a bound file replaced under it ("(deleted)" in the mount table)."""
    try:
        with open(path, encoding="utf-8") as handle:
            if handle.read() == text:
                return
    except OSError:
        pass
    with naming(path + ".new"), open(path + ".new", "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(path + ".new", path)


def _workdir(limits: Limits, workspace: Path | None, stage: Stage, notices: list[str]) -> tuple[str, bool]:
    """The runner's working directory in the view: the sandbox's (the task's
    workdir, the image's WORKDIR), and whether the view must make it (an
    image would have it; this machine does not)."""
    wanted = limits.workdir
    app = stage.app_at
    if wanted == app or wanted.startswith(app.rstrip("/") + "/"):
        rel = wanted[len(app) :].strip("/")
        if not rel or (workspace is not None and (workspace / rel).is_dir()):
            return wanted, False
        notices.append(f"the working directory {wanted} is not in this workspace: the run starts in {app}")
        return app, False
    parts = [p for p in wanted.split("/") if p]
    if not parts:
        return "/", False
    if parts in (["tmp"], [TESTS.strip("/")], ["logs"], ["logs", "verifier"], ["proc"], ["dev"]):
        return wanted, False  # a folder the view has
    if isolation.view_has(wanted):
        if os.path.isdir(wanted):
            return wanted, False
    elif parts[0] not in ("tests", "logs", "proc", "dev"):
        return wanted, True  # in the view's own root: made there, empty
    notices.append(f"the working directory {wanted} is not in this machine's view: the run starts in /")
    return "/", False


def settle(stage: Stage, guard: Any, done: ProcessResult) -> Settled:
    """The run's exit as the runner's (not the view's init's), the processes
    it left behind, and what it wrote to the user's files (``guard``:
    :attr:`Contained.guard`)."""
    returncode, signal, start_error = done.returncode, done.signal, done.start_error
    found = list(done.strays)
    written: list[str] = []
    more = 0
    if stage.namespace and start_error is None:
        ctl = str(stage.ctl_dir)
        problem = isolation.setup_problem(ctl, done.stderr.text)
        if problem is not None and not done.timed_out and signal is None:
            isolation.forget()  # the machine may have changed since the probe: the next run asks again
            start_error = VIEW_FAILED + problem
        listed = isolation.listing(ctl)
        found += listed.commands  # one per process, as the copy sandbox's mark finds them
        more = listed.more
        if done.listing_cut_short and listed.status is not None:
            # The runner exited in time and the init said its status before the
            # listing that was cut short: bwrap, killed then, could not.
            returncode, signal = listed.status, None
        # bwrap ended by itself exits with its init's status, the runner's
        # (``exit $rc``), which nothing in the view can rewrite. sh reports a
        # runner ended by signal N as 128 + N, as it reports exit(128 + N):
        # read back as the signal, since the runner itself only exits 0, 1 or
        # 2 (it catches SystemExit); only a verifier's own os._exit(129..192)
        # is misread (docs/faults.md).
        if problem is None and signal is None and returncode is not None and 128 < returncode <= 128 + 64:
            signal, returncode = returncode - 128, -(returncode - 128)
    if len(found) > isolation.STRAYS_MOST:
        # The copy sandbox's mark finds every stray: listed as many as the
        # view's init lists, the rest counted, so both say them alike.
        found, more = found[: isolation.STRAYS_MOST], more + len(found) - isolation.STRAYS_MOST
    written = after_copy_run(guard)
    return Settled(returncode, signal, start_error, found, written, more, done.listing_cut_short)


def after_copy_run(guard: Any) -> list[str]:
    """What a run in the copy sandbox wrote of the user's files (``guard``:
    :attr:`Contained.guard`; none in the view); the tool's cache thrown away
    when it wrote there. Every run of the copy sandbox ends here: ``run``'s,
    ``explain``'s, the TUI's under pdb."""
    if guard is None:
        return []
    written = user_files.written(guard)
    mine = [path for path in written if isolation.inside(path, cache.folder())]
    if mine:
        cache.discard()
    return [path for path in written if path not in mine]
