"""How a run is kept apart from the user's machine: the sandbox's own view, or a copy.

Where the kernel lets an unprivileged user make user, mount and PID
namespaces (Linux 5.11 and later, with ``unshare``, ``mount`` and
``pivot_root`` from util-linux), every run sees the file system a Harbor
sandbox shows its verifier (:func:`namespace_argv`):

* ``/app`` is the workspace (writable; what the run changes stays private to
  it: a copy for a small workspace, an overlay over the user's for a big one),
  ``/tests`` the task's tests as staged, read-only, with
  ``.ng/run_verifier.py``, and ``/logs/verifier`` the reward folder;
* everything else is this machine, read-only whatever the user's uid (root
  included): each top folder of ``/`` is bound into a new root and every
  mount in it remounted read-only (``remount,bind,ro`` covers one mount, so
  each submount gets its own line); ``/tmp`` and ``/dev/shm`` are fresh
  and private, ``/dev`` holds the few devices a container has, ``/proc`` is
  the run's own;
* the namespace's init ``pivot_root``\\ s into that root and detaches the old
  one, so no process of the run (not even through ``/proc/1/root``) can reach
  the machine's writable tree; a nested user and mount namespace then locks
  the read-only mounts (the kernel does this when a mount namespace passes
  to a less privileged owner), so a verifier running as root there cannot
  remount them writable;
* the init starts the runner as the shim would, in Harbor's working
  directory, waits for it, writes its status and lists what is still running
  (the strays), then exits, at which the kernel ends every process left in
  the PID namespace;
* ``network_mode = "no-network"`` adds an empty network namespace (loopback
  only), as Docker's ``network_mode: none`` gives the container.

The run's processes are bound to the tool's life: the namespace's first
process gets a parent-death signal (``setpriv --pdeathsig KILL``), and
``unshare --kill-child`` takes the init (and with it the whole PID
namespace) along.

Elsewhere (macOS, kernels that refuse unprivileged namespaces), or when
``VERIFIER_TUI_SANDBOX=copy`` says so, the run gets a private copy of the
workspace in the tool's scratch folder (:mod:`verifier_tui.engine.sandbox.mirror`),
is handed the scratch paths instead of ``/app`` and ``/tests``, and the
escape checks of :data:`verifier_tui.engine.process.MARKER` apply.

``VERIFIER_TUI_SANDBOX`` is ``auto`` (the default), ``namespace`` (probed
now; an error where namespaces are impossible) or ``copy``. Whether
namespaces work is asked once per machine (one probe run, about 20 ms) and
remembered in the tool's cache, keyed by the kernel and the user; a "no" is
asked again after :data:`RETRY_NEGATIVE_S`.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
import time

from verifier_tui.engine import cache
from verifier_tui.engine.procfs import CMDLINE_BYTES, shown_command
from verifier_tui.engine.record import record

VARIABLE = "VERIFIER_TUI_SANDBOX"
NAMESPACE = "namespace"
COPY = "copy"
_CHOICES = ("auto", NAMESPACE, COPY)
_CACHE_FILE = "isolation.json"

RETRY_NEGATIVE_S = 60.0
"""A probe that said "no namespaces" is believed this long, then asked again:
the cause (a sysctl, a missing tool) may have been fixed meanwhile."""

# Where the sandbox puts things (harbor-trials.md: the shim's command line,
# Harbor's reward folder). The tool's own inputs and outputs (a case's task
# data and response, the runner's explanation) are at INPUTS, which no
# Harbor sandbox has: it is named so no task would use it.
APP = "/app"
TESTS = "/tests"
REWARD = "/logs/verifier"
INPUTS = "/.verifier-tui"

# What the headless header says about each (the TUI's header has room for
# ``Isolation.short``, and shows these on hover).
WORDS = {
    NAMESPACE: "sandbox: namespace (the sandbox's view: /app, /tests, /logs/verifier; this machine read-only)",
    COPY: "sandbox: copy (a private copy of the workspace; the verifier runs on this machine as you)",
}

#: The PID namespace's init (``sh``). Arguments: the fstab of the mounts that
#: make the view, the control folder, the uid and gid the runner keeps, the
#: view's root, the working directory inside it, ``ip`` (empty: none), how
#: many bytes of a stray's command line to list, "--", the runner's command line.
#:
#: The control files are opened before the root changes (fd 4: ``started``,
#: then the runner's ``exit N``; fd 5: each stray's pid on a line, then its
#: command line's bytes in hex, as ``od`` writes them, whatever they hold); after
#: ``pivot_root`` the machine's own paths are gone, and so are the tool's
#: scratch folders. Its own messages never reach the runner's stderr (fd 3
#: carries that one): while it sets up, they go to ``setup-error``;
#: afterwards nowhere. (dash writes "Terminated" when a foreground command is
#: ended by a signal, to that command's stderr: hence the subshell, whose
#: redirections are its own.) Zombies are not strays (they are over).
_INIT = r"""
fstab=$1 ctl=$2 uid=$3 gid=$4 view=$5 wd=$6 ip=$7 cmdline_bytes=$8
shift 9
exec 3>&2 2>"$ctl/setup-error" 4>"$ctl/status" 5>"$ctl/strays"
# -c: the paths are the tool's, absolute and resolved already (saves 2 ms)
mount -a -c --fstab "$fstab" || exit 125
if [ -n "$ip" ]; then "$ip" link set lo up || exit 125; fi
cd "$view" && pivot_root . . && umount -l . && cd / || exit 125
echo started >&4
exec 2>/dev/null
(exec unshare --user --mount --map-user="$uid" --map-group="$gid" --wd="$wd" -- "$@" 2>&3 3>&- 4>&- 5>&-)
rc=$?
echo "exit $rc" >&4
for d in /proc/[0-9]*; do
  [ "$d" = /proc/1 ] && continue
  read -r st <"$d/stat" || continue
  case "${st##*) }" in Z*|X*) continue ;; esac
  echo "${d#/proc/}" >&5
  od -An -v -tx1 -N "$cmdline_bytes" "$d/cmdline" >&5
done
exit $rc
"""

# The top folders of / that the view makes itself rather than binding the machine's.
_OWN_TOP = {"proc", "dev", "tmp", "app", "tests", "logs", INPUTS.strip("/")}
# The devices a container gets (Docker's defaults, less the terminal ones it
# sets up per container); each bound from the machine's /dev.
_DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
_DEV_LINKS = {
    "fd": "/proc/self/fd",
    "stdin": "/proc/self/fd/0",
    "stdout": "/proc/self/fd/1",
    "stderr": "/proc/self/fd/2",
    "ptmx": "pts/ptmx",
}
# A mount's flags that an unprivileged remount must keep (the kernel refuses
# to drop a flag the mount was locked with), as mountinfo spells them.
_KEPT_FLAGS = ("nosuid", "nodev", "noexec", "noatime", "nodiratime", "relatime")

# Characters an overlay's options or an fstab line cannot carry plainly.
_UNSAFE = (",", ":", "\n", "\\", '"')


class IsolationError(Exception):
    """The isolation asked for cannot be had (one line, said to the user)."""


@record(frozen=True)
class Isolation:
    """The isolation a session's runs get."""

    kind: str  # NAMESPACE or COPY
    reason: str = ""  # why copy, when namespaces were not used
    fallback: bool = False  # copy because this machine has no namespaces (not because it was asked for)

    @property
    def words(self) -> str:
        text = WORDS[self.kind]
        return f"{text}: {self.reason}" if self.reason else text

    @property
    def short(self) -> str:
        """The same in a few words, the same on every machine that chose alike."""
        if self.kind == NAMESPACE:
            return "sandbox: namespace"
        return "sandbox: copy (no namespaces)" if self.fallback else "sandbox: copy"


def requested() -> str:
    """``VERIFIER_TUI_SANDBOX``, checked: auto, namespace or copy."""
    value = os.environ.get(VARIABLE, "").strip().lower() or "auto"
    if value not in _CHOICES:
        raise IsolationError(f"{VARIABLE}={os.environ.get(VARIABLE)!r}: expected auto, namespace or copy")
    return value


def choose() -> Isolation:
    """The isolation for this process's runs, by ``VERIFIER_TUI_SANDBOX``.
    Asked for by name, namespaces are probed now, whatever the cache says."""
    wanted = requested()
    if wanted == COPY:
        return Isolation(COPY, f"{VARIABLE}=copy")
    problem = namespace_problem(fresh=wanted == NAMESPACE)
    if problem is None:
        return Isolation(NAMESPACE)
    if wanted == NAMESPACE:
        raise IsolationError(f"{VARIABLE}=namespace, but this machine cannot: {problem}")
    return Isolation(COPY, f"no namespaces here ({problem})", fallback=True)


def fallback(problem: str) -> Isolation:
    """The copy sandbox, after a namespace that a probe promised failed to set up."""
    return Isolation(COPY, f"the run's namespace could not be set up ({problem})", fallback=True)


def namespace_problem(fresh: bool = False) -> str | None:
    """Why runs cannot get namespaces here, or None when they can. Asked
    once per machine and user, then remembered (a "no" for
    :data:`RETRY_NEGATIVE_S` only); ``fresh``: a remembered "no" is asked
    again now (a remembered "yes" stands: the run itself tells, and a
    failed one is forgotten)."""
    if not sys.platform.startswith("linux"):
        return "not Linux"
    for tool in ("unshare", "mount", "umount", "pivot_root", "sh"):
        if _tool(tool) is None:
            return f"{tool} is not on PATH"
    key = _cache_key()
    known = cache.load(_CACHE_FILE, _valid_entry).get(key)
    if known is not None and (
        known["problem"] is None or not fresh and time.time() - known.get("at", 0) < RETRY_NEGATIVE_S
    ):
        return known["problem"]
    problem = _probe()
    remembered = cache.load(_CACHE_FILE, _valid_entry)
    remembered[key] = {"problem": problem, "at": time.time()}
    cache.store(_CACHE_FILE, remembered, keep=20)
    return problem


def _cache_key() -> str:
    return f"{os.uname().release} uid {os.getuid()} {_tool('unshare')} view 2"


def forget() -> None:
    """Ask again next time (a namespace that failed to start after a probe said yes)."""
    remembered = cache.load(_CACHE_FILE, _valid_entry)
    remembered.pop(_cache_key(), None)
    cache.store(_CACHE_FILE, remembered)


def _valid_entry(entry: object) -> bool:
    if not isinstance(entry, dict):
        return False
    problem, at = entry.get("problem"), entry.get("at", 0)
    return (problem is None or isinstance(problem, str)) and isinstance(at, (int, float)) and not isinstance(at, bool)


def _tool(name: str) -> str | None:
    # The namespace tools live in /usr/bin, /bin or /usr/sbin; a PATH without
    # them (a stripped environment) should not decide for the machine. Looked
    # up once per process: five lookups cost about 1 ms on every run.
    if name not in _tools:
        _tools[name] = shutil.which(name) or shutil.which(name, path="/usr/bin:/bin:/usr/sbin:/sbin")
    return _tools[name]


_tools: dict[str, str | None] = {}


def _probe() -> str | None:
    """Set up, once, everything a run's view needs, on throwaway folders."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory(prefix="verifier-tui-probe-") as where:
        names = ("lower", "upper", "work", "view", "ctl", "tests", "reward", "inputs")
        lower, upper, work, view, ctl, tests, reward, inputs = (os.path.join(where, n) for n in names)
        for folder in (lower, upper, work, view, ctl, tests, reward, inputs):
            os.mkdir(folder)
        with open(os.path.join(lower, "seen"), "w", encoding="utf-8") as handle:
            handle.write("yes")
        plan = ViewPlan(
            view=view,
            ctl=ctl,
            tests=tests,
            reward=reward,
            inputs=inputs,
            app_copy=None,
            overlay=(lower, upper, work),
            workdir=APP,
            network=True,
            hide=where,
        )
        # The probe's own command: the workspace seen at /app, and / refused to writes.
        argv = namespace_argv(plan, ["sh", "-c", "cat /app/seen && ! (: >/probe-write) 2>/dev/null"])
        try:
            done = subprocess.run(argv, capture_output=True, timeout=10, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError) as exc:
            return f"unshare: {exc}"
        finally:
            _take_back(where)
        if done.returncode == 0 and done.stdout == b"yes":
            return None
        return _setup_problem(ctl, done.stderr.decode(errors="replace")) or f"the probe exited {done.returncode}"


def _take_back(where: str) -> None:
    """The overlay's work folder is left mode 000 by the kernel: make the probe's folders removable."""
    for folder, dirs, _files in os.walk(where):
        for name in dirs:
            try:
                os.chmod(os.path.join(folder, name), 0o700)
            except OSError:
                pass


def _setup_problem(ctl: str, stderr: str) -> str | None:
    """Why the namespace was not set up, or None when it was."""
    if _status_lines(ctl)[:1] == ["started"]:
        return None
    try:
        with open(os.path.join(ctl, "setup-error"), encoding="utf-8", errors="replace") as handle:
            text = handle.read(4096).strip()
    except OSError:
        text = ""
    text = text or stderr.strip()
    lines = [line for line in text.splitlines() if line.strip() and "dmesg" not in line]
    return lines[0].strip() if lines else None


def _status_lines(ctl: str) -> list[str]:
    try:
        with open(os.path.join(ctl, "status"), encoding="ascii", errors="replace") as handle:
            return handle.read(256).split("\n")
    except OSError:
        return []


def _escape(path: str) -> str:
    # fstab's own escapes for the characters that separate its fields
    return path.replace("\\", "\\134").replace(" ", "\\040").replace("\t", "\\011").replace("\n", "\\012")


def _line(source: str, target: str, kind: str, options: str) -> str:
    return f"{_escape(source)} {_escape(target)} {kind} {options} 0 0\n"


def overlay_can_take(path: str) -> bool:
    """Whether ``path`` can be an overlay layer as it is spelled (an overlay's
    options cannot carry a comma or a colon in a folder's name)."""
    return not any(ch in path for ch in _UNSAFE)


@record(frozen=True)
class ViewPlan:
    """What one run's view is made of: the tool's folders (host paths) that
    become ``/app``, ``/tests``, ``/logs/verifier`` and :data:`INPUTS`."""

    view: str  # an empty folder of the stage's: the new root is built on it
    ctl: str  # the control folder (fstab, status, strays, setup-error)
    tests: str  # bound read-only at /tests
    reward: str  # bound at /logs/verifier
    inputs: str  # bound at INPUTS
    app_copy: str | None  # the workspace's private copy, bound at /app (None: the overlay)
    overlay: tuple | None  # (lower, upper, work): the overlay mounted at /app
    workdir: str = APP  # the runner's working directory, inside the view
    app_at: str = APP  # where the workspace is (a task's test.sh may pass another path)
    network: bool = True  # False: an empty network namespace
    hide: str | None = None  # the tool's scratch folder: covered where a bound folder holds it
    skeletons: str | None = None  # where view skeletons are kept and shared (None: made in ``view``)
    expose: tuple = ()  # folders of this machine the view's own folders would hide: shown read-only
    mounts: str = "/proc/self/mountinfo"


def namespace_argv(plan: ViewPlan, argv: list[str]) -> list[str]:
    """The command line that runs ``argv`` (with the view's paths) in the
    view ``plan`` describes (the fstab is written into ``plan.ctl``)."""
    fstab = os.path.join(plan.ctl, "fstab")
    view, lines = view_mounts(plan)
    # Written beside and renamed: a run started ahead may be reading the last one.
    with open(fstab + ".new", "w", encoding="utf-8") as handle:
        handle.write("".join(lines))
    os.replace(fstab + ".new", fstab)
    unshare = _tool("unshare") or "unshare"
    outer = [unshare, "--user", "--map-root-user", "--mount", "--pid", "--fork", "--kill-child", "--mount-proc"]
    if not plan.network:
        outer.append("--net")
    ip = (_tool("ip") or "") if not plan.network else ""
    setpriv = _tool("setpriv")
    # The tool may be SIGKILLed: unshare then gets SIGKILL too, and
    # --kill-child passes it to the init, whose death ends the namespace.
    # (prctl's parent-death signal follows the thread that started the child:
    # run_process starts it from the thread that waits for it, to its end.)
    guard = [setpriv, "--pdeathsig", "KILL"] if setpriv is not None else []
    return [
        *guard,
        *outer,
        _tool("sh") or "sh",
        "-c",
        _INIT,
        "verifier-tui-init",
        fstab,
        plan.ctl,
        str(os.getuid()),
        str(os.getgid()),
        view,
        plan.workdir,
        ip,
        str(CMDLINE_BYTES),
        "--",
        *argv,
    ]


def view_mounts(plan: ViewPlan) -> tuple[str, list[str]]:
    """The folder the view is built on (its skeleton: the mount points, the
    links of ``/``) and the fstab lines that make the view there."""
    view, tops = _skeleton(plan)
    view = os.path.realpath(view)
    mounts = read_mounts(plan.mounts)
    lines: list[str] = []
    read_only: list[tuple[str, str]] = []  # (target in the view, the flags its mount must keep)
    # A folder of the machine that holds the view itself is bound first: bound
    # later, it would carry a copy of every mount made in the view until then,
    # before they were made read-only. (Its copy of the view is covered below.)
    tops = sorted(tops, key=lambda top: not _inside(view, "/" + top[0]))
    for name, kind in tops:
        source, target = "/" + name, os.path.join(view, name)
        if kind == "dir":
            lines.append(_line(source, target, "none", "rbind"))
            read_only.append((target, _flags_at(mounts, source)))
            read_only += [(view + m, flags) for m, flags in mounts if _inside(m, source) and m != source]
        else:
            lines.append(_line(source, target, "none", "bind"))
            read_only.append((target, _flags_at(mounts, source)))
    dev = os.path.join(view, "dev")
    for name in _DEVICES:
        if os.path.exists("/dev/" + name):
            lines.append(_line("/dev/" + name, os.path.join(dev, name), "none", "bind"))
    lines.append(_line("devpts", os.path.join(dev, "pts"), "devpts", "newinstance,ptmxmode=0666,mode=0620"))
    lines.append(_line("tmpfs", os.path.join(dev, "shm"), "tmpfs", "mode=1777,nosuid,nodev"))
    lines.append(_line("proc", os.path.join(view, "proc"), "proc", "nosuid,nodev,noexec"))
    lines.append(_line("tmpfs", os.path.join(view, "tmp"), "tmpfs", "mode=1777,nosuid,nodev"))
    app = view + plan.app_at
    if plan.overlay is not None:
        lower, upper, work = plan.overlay
        # userxattr: the overlay keeps its bookkeeping (opaque folders, redirects)
        # in user.* attributes, which an unprivileged mount may write (5.11+)
        lines.append(_line("overlay", app, "overlay", f"lowerdir={lower},upperdir={upper},workdir={work},userxattr"))
    elif plan.app_copy is not None:
        lines.append(_line(plan.app_copy, app, "none", "bind"))
    for folder in plan.expose:  # made in the view's own /tmp (tmpfs), hence X-mount.mkdir
        lines.append(_line(folder, view + folder, "none", "bind,ro,X-mount.mkdir"))
    lines.append(_line(plan.tests, view + TESTS, "none", "bind"))
    read_only.append((view + TESTS, ""))
    lines.append(_line(plan.reward, view + REWARD, "none", "bind"))
    lines.append(_line(plan.inputs, view + INPUTS, "none", "bind"))
    for hidden in (plan.hide, plan.skeletons):
        # The tool's scratch folder and its skeletons, where a bound folder of
        # the machine holds them (TMPDIR under /var/tmp, the cache in the home
        # folder): covered, so the stage's other folders are not seen beside
        # the ones the view binds.
        if hidden is None:
            continue
        real = os.path.realpath(hidden)
        if os.path.isdir(real) and any(kind == "dir" and _inside(real, "/" + name) for name, kind in tops):
            lines.append(_line("tmpfs", view + real, "tmpfs", "ro,size=4k,mode=0555"))
    # The root last, recursively, so it carries every mount above; then each
    # mount that must be read-only is remounted so (its top: the root's copy).
    lines.append(_line(view, view, "none", "rbind"))
    lines.append(_line(view, view, "none", "remount,bind,ro"))
    for target, flags in read_only:
        lines.append(_line(target, target, "none", "remount,bind,ro" + (f",{flags}" if flags else "")))
    return view, lines


def hidden_by_view(path: str) -> bool:
    """Whether the view shows something else than this machine at ``path``
    (its own /tmp, /dev, /proc, /app, /tests, /logs)."""
    parts = [p for p in path.split("/") if p]
    return bool(parts) and parts[0] in _OWN_TOP


def _skeleton(plan: ViewPlan) -> tuple[str, list[tuple[str, str]]]:
    """The folder the view is built on, and the machine's top entries to bind
    ((name, "dir" or "file")). A skeleton (its mount points and the links of
    ``/``) is made once for what it holds and kept in the tool's cache,
    shared by every run that needs the same: making one costs about 5 ms,
    and removing it again as much; falling back to ``plan.view`` (the stage's)
    where the cache cannot be written."""
    import zlib

    tops: list[tuple[str, str]] = []
    wanted: dict[str, str] = {}  # path in the view: "dir", "file", or "link:<target>"
    with os.scandir("/") as entries:
        for entry in entries:
            name = entry.name
            if name in _OWN_TOP or "\n" in name:
                continue
            try:
                if entry.is_symlink():
                    wanted[name] = "link:" + os.readlink(entry.path)
                elif entry.is_dir():
                    wanted[name] = "dir"
                    tops.append((name, "dir"))
                elif entry.is_file():
                    wanted[name] = "file"
                    tops.append((name, "file"))
            except OSError:
                continue
    for name in ("proc", "dev", "tmp", "tests", "logs", "logs/verifier", INPUTS.strip("/"), "dev/pts", "dev/shm"):
        wanted[name] = "dir"
    wanted.update({f"dev/{name}": "file" for name in _DEVICES})
    wanted.update({f"dev/{name}": "link:" + target for name, target in _DEV_LINKS.items()})
    # The workspace's mount point, and the working directory unless it is in
    # a folder of the machine (bound as it is).
    for extra in (plan.app_at, plan.workdir):
        parts = [p for p in extra.split("/") if p]
        if not parts or parts[0] in wanted and parts[0] not in _OWN_TOP:
            continue
        for depth in range(1, len(parts) + 1):
            wanted.setdefault("/".join(parts[:depth]), "dir")
    # Folders before what is in them.
    spec = sorted(wanted.items(), key=lambda item: (item[0].count("/"), item[0]))
    text = repr(spec).encode()
    key = f"{zlib.crc32(text):08x}-{len(text)}"  # (hashlib's import alone costs 2.5 ms)
    base = plan.skeletons
    if base is not None:
        try:
            return _built(spec, base, key), tops
        except OSError:
            pass  # a cache we cannot write: the stage's own folder, made for this run
    _make_skeleton(plan.view, spec)
    return plan.view, tops


def _built(spec: list[tuple[str, str]], base: str, key: str) -> str:
    """``base/<key>/root``, made (atomically, by renaming a finished one into
    place) unless another run already did."""
    import tempfile

    done = os.path.join(base, key)
    if os.path.isfile(os.path.join(done, "complete")):
        return os.path.join(done, "root")
    os.makedirs(base, mode=0o700, exist_ok=True)
    building = tempfile.mkdtemp(prefix=".building-", dir=base)
    _make_skeleton(os.path.join(building, "root"), spec)
    open(os.path.join(building, "complete"), "w").close()
    try:
        os.rename(building, done)
    except OSError:  # made meanwhile by another run: that one serves
        from pathlib import Path

        from verifier_tui.engine.sandbox.mirror import remove_tree

        remove_tree(Path(building))
        if not os.path.isfile(os.path.join(done, "complete")):
            raise
    return os.path.join(done, "root")


def _make_skeleton(root: str, spec: list[tuple[str, str]]) -> None:
    from pathlib import Path

    from verifier_tui.engine.sandbox.mirror import make_real_dir, remove_path

    make_real_dir(Path(root))
    for rel, kind in spec:
        _ensure(os.path.join(root, rel), kind, remove_path)


def _ensure(path: str, kind: str, remove_path) -> None:
    """``path`` is a folder, an empty file or a link to the given target, as
    the view's skeleton needs it; whatever else is there is replaced."""
    from pathlib import Path

    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    if st is not None:
        if kind == "dir" and stat.S_ISDIR(st.st_mode):
            return
        if kind == "file" and stat.S_ISREG(st.st_mode):
            return
        if kind.startswith("link:") and stat.S_ISLNK(st.st_mode) and os.readlink(path) == kind[5:]:
            return
        remove_path(Path(path))
    if kind == "dir":
        os.mkdir(path)
    elif kind == "file":
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644))
    else:
        os.symlink(kind[5:], path)


def read_mounts(path: str = "/proc/self/mountinfo") -> list[tuple[str, str]]:
    """This machine's mounts, outermost first: (mount point, the flags a
    remount must keep, comma-separated)."""
    out: list[tuple[str, str]] = []
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as handle:
            text = handle.read()
    except OSError:
        return out
    for line in text.splitlines():
        fields = line.split(" ")
        if len(fields) < 6:
            continue
        point = _unescape(fields[4])
        kept = [f for f in fields[5].split(",") if f in _KEPT_FLAGS]
        out.append((point, ",".join(kept)))
    return out


def _unescape(field: str) -> str:
    """mountinfo's octal escapes (``\\040`` for a space) undone."""
    if "\\" not in field:
        return field
    import re

    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def _flags_at(mounts: list[tuple[str, str]], path: str) -> str:
    """The flags of the mount that holds ``path`` (the last, innermost, listed)."""
    best, flags = "", ""
    for point, kept in mounts:
        if _inside(path, point) and len(point) >= len(best):
            best, flags = point, kept
    return flags


def _inside(path: str, folder: str) -> bool:
    return path == folder or folder == "/" or path.startswith(folder.rstrip(os.sep) + os.sep)


def setup_problem(ctl: str, stderr: str) -> str | None:
    """After a run: why its namespace could not be set up (None: it was)."""
    return _setup_problem(ctl, stderr)


def runner_status(ctl: str) -> int | None:
    """The runner's exit status as the init's ``sh`` saw it (0 to 255; a
    runner ended by signal N is 128 + N there), or None when the init did not
    get to write it (it was killed first, or never started the runner)."""
    for line in _status_lines(ctl):
        if line.startswith("exit "):
            text = line[5:].strip()
            return int(text) if text.isdigit() and int(text) <= 255 else None
    return None


def strays(ctl: str) -> list[str]:
    """The command lines of the processes the init found still running once
    the runner had exited (they were ended with the namespace), one per
    process, shown as the copy sandbox shows its own (:func:`~verifier_tui.engine.procfs.shown_command`)."""
    found: list[tuple[int, bytearray]] = []
    try:
        with open(os.path.join(ctl, "strays"), "rb") as handle:
            for line in handle:
                try:
                    if line[:1].isdigit():
                        found.append((int(line), bytearray()))
                    elif found:
                        found[-1][1].extend(bytes.fromhex(line.decode("ascii")))
                except ValueError:  # a line cut short (the init was killed): its process still counts
                    continue
    except OSError:
        pass
    return [shown_command(bytes(raw), pid) for pid, raw in found]
