"""How a run is kept apart from the user's files: a namespace, or a copy.

Where the kernel lets an unprivileged user make a user, mount and PID
namespace (Linux 5.11 and later, with ``unshare`` and ``mount`` from
util-linux), every run starts in namespaces of its own
(:func:`namespace_argv`):

* the workspace the runner sees (``<stage>/app``) is an overlay: the user's
  workspace is its read-only lower layer, a scratch folder its upper layer.
  The verifier sees and may change a whole workspace, its writes land in the
  scratch layer, and staging costs one mount however many files the
  workspace holds (the upper layer is emptied before the next run);
* the user's own files (the task folder, the workspace, the response and
  task-data files, and the home folder unless the scratch folder is inside
  it) are bound read-only over themselves;
* a nested user and mount namespace then locks those mounts (the kernel does
  this when a mount namespace passes to a less privileged owner), so the
  verifier, which runs as the user's own uid there, can neither unmount nor
  remount them;
* a minimal ``sh`` is the PID namespace's init: it starts the runner, waits
  for it, lists what is still running (the strays, with their command lines)
  into the stage's ``ctl`` folder, and exits, at which the kernel ends every
  process left in the namespace, ``setsid`` and double forks included.

Elsewhere (macOS, kernels that refuse unprivileged namespaces), or when
``VERIFIER_TUI_SANDBOX=copy`` says so, the run gets a private copy
(:mod:`verifier_tui.engine.mirror`) and the escape checks of
:mod:`verifier_tui.engine.strays` instead.

``VERIFIER_TUI_SANDBOX`` is ``auto`` (the default), ``namespace`` (an error
where namespaces are impossible) or ``copy``. Whether namespaces work is
asked once per machine (one probe run, about 15 ms) and remembered in the
tool's cache, keyed by the kernel and the user.
"""

from __future__ import annotations

import os
import shutil
import sys

from verifier_tui.engine import cache
from verifier_tui.engine.record import record

VARIABLE = "VERIFIER_TUI_SANDBOX"
NAMESPACE = "namespace"
COPY = "copy"
_CHOICES = ("auto", NAMESPACE, COPY)
_CACHE_FILE = "isolation.json"

# What the headless header says about each (the TUI's header has room for
# ``Isolation.short``, and shows these on hover).
WORDS = {
    NAMESPACE: "sandbox: namespace (overlay workspace, your files read-only)",
    COPY: "sandbox: copy (a private copy of the workspace)",
}

#: The PID namespace's init. Arguments: the fstab of the mounts to make, the
#: control folder, the uid and gid the runner keeps, the folder it starts in
#: (entered again once the overlay is mounted over it), the full paths of
#: ``mount`` and ``unshare``, "--", the runner's command line. The init's own
#: messages never reach the runner's stderr (fd 3 carries that one to the
#: runner): while it sets up, they go to ``setup-error``; afterwards nowhere.
#: (dash writes "Terminated" when a foreground command is ended by a signal, to
#: that command's stderr: hence the subshell, whose redirections are its own.)
#: ``started`` tells the tool the namespace was set up (no file:
#: ``setup-error`` or unshare's stderr says why not); ``status`` is the
#: runner's exit status as sh saw it; each ``stray-<pid>`` holds the command
#: line (NUL-separated) of a process still running once the runner had exited;
#: zombies are skipped (they are over).
_INIT = r"""
fstab=$1 ctl=$2 uid=$3 gid=$4 cwd=$5 mount=$6 unshare=$7
shift 8
exec 3>&2 2>"$ctl/setup-error"
"$mount" -a --fstab "$fstab" || exit 125
cd "$cwd" || exit 125
: >"$ctl/started"
exec 2>/dev/null
(exec "$unshare" --user --mount --map-user="$uid" --map-group="$gid" -- "$@" 2>&3 3>&-)
rc=$?
echo "$rc" >"$ctl/status"
for d in /proc/[0-9]*; do
  [ "$d" = /proc/1 ] && continue
  read -r st <"$d/stat" || continue
  case "${st##*) }" in Z*|X*) continue ;; esac
  cat "$d/cmdline" >"$ctl/stray-${d#/proc/}"
done
exit $rc
"""

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
    """The isolation for this process's runs, by ``VERIFIER_TUI_SANDBOX``."""
    wanted = requested()
    if wanted == COPY:
        return Isolation(COPY, f"{VARIABLE}=copy")
    problem = namespace_problem()
    if problem is None:
        return Isolation(NAMESPACE)
    if wanted == NAMESPACE:
        raise IsolationError(f"{VARIABLE}=namespace, but this machine cannot: {problem}")
    return Isolation(COPY, f"no namespaces here ({problem})", fallback=True)


def namespace_problem() -> str | None:
    """Why runs cannot get namespaces here, or None when they can. Asked
    once per machine and user, then remembered."""
    if not sys.platform.startswith("linux"):
        return "not Linux"
    for tool in ("unshare", "mount", "sh"):
        if _tool(tool) is None:
            return f"{tool} is not on PATH"
    key = f"{os.uname().release} uid {os.getuid()} {_tool('unshare')}"
    known = cache.load(_CACHE_FILE, _valid_entry).get(key)
    if known is not None:
        return known["problem"]
    problem = _probe()
    remembered = cache.load(_CACHE_FILE, _valid_entry)
    remembered[key] = {"problem": problem}
    cache.store(_CACHE_FILE, remembered, keep=20)
    return problem


def forget() -> None:
    """Ask again next time (a namespace that failed to start after a probe said yes)."""
    cache.store(_CACHE_FILE, {})


def _valid_entry(entry: object) -> bool:
    return isinstance(entry, dict) and (entry.get("problem") is None or isinstance(entry.get("problem"), str))


def _tool(name: str) -> str | None:
    # The namespace tools live in /usr/bin or /bin; a PATH without them
    # (a stripped environment) should not decide for the machine. Looked up
    # once per process: three lookups cost about 1 ms on every run.
    if name not in _tools:
        _tools[name] = shutil.which(name) or shutil.which(name, path="/usr/bin:/bin:/usr/sbin:/sbin")
    return _tools[name]


_tools: dict[str, str | None] = {}


def _probe() -> str | None:
    """Set up, once, everything a run's namespace needs, on throwaway folders."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory(prefix="verifier-tui-probe-") as where:
        lower, upper, work, merged, ctl = (os.path.join(where, n) for n in ("lower", "upper", "work", "merged", "ctl"))
        for folder in (lower, upper, work, merged, ctl):
            os.mkdir(folder)
        with open(os.path.join(lower, "seen"), "w", encoding="utf-8") as handle:
            handle.write("yes")
        fstab = os.path.join(ctl, "fstab")
        with open(fstab, "w", encoding="utf-8") as handle:
            handle.write(_overlay_line(lower, upper, work, merged) + _bind_line(lower))
        argv = _outer(fstab, ctl) + ["cat", os.path.join(merged, "seen")]
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
    if os.path.exists(os.path.join(ctl, "started")):
        return None
    try:
        with open(os.path.join(ctl, "setup-error"), encoding="utf-8", errors="replace") as handle:
            text = handle.read().strip()
    except OSError:
        text = ""
    text = text or stderr.strip()
    lines = [line for line in text.splitlines() if line.strip() and "dmesg" not in line]
    return lines[0].strip() if lines else None


def _outer(fstab: str, ctl: str, cwd: str = "/") -> list[str]:
    # the tools by their full paths: the task's [verifier] env may set another PATH
    unshare = _tool("unshare") or "unshare"
    return [unshare, "--user", "--map-root-user", "--mount", "--pid", "--fork", "--kill-child", "--mount-proc",
            _tool("sh") or "sh", "-c", _INIT, "verifier-tui-init", fstab, ctl, str(os.getuid()), str(os.getgid()),
            cwd, _tool("mount") or "mount", unshare, "--"]


def _escape(path: str) -> str:
    # fstab's own escapes for the characters that separate its fields
    return path.replace("\\", "\\134").replace(" ", "\\040").replace("\t", "\\011").replace("\n", "\\012")


def _bind_line(path: str) -> str:
    return f"{_escape(path)} {_escape(path)} none bind,ro 0 0\n"


def _overlay_line(lower: str, upper: str, work: str, target: str) -> str:
    # userxattr: the overlay keeps its bookkeeping (opaque folders, redirects)
    # in user.* attributes, which an unprivileged mount may write (5.11+)
    options = f"lowerdir={lower},upperdir={upper},workdir={work},userxattr"
    return f"overlay {_escape(target)} overlay {options} 0 0\n"


def overlay_can_take(path: str) -> bool:
    """Whether ``path`` can be an overlay layer as it is spelled (an overlay's
    options cannot carry a comma or a colon in a folder's name)."""
    return not any(ch in path for ch in _UNSAFE)


@record(frozen=True)
class NamespacePlan:
    """The mounts of one run's namespace."""

    read_only: list[str]  # the user's files and folders, bound read-only over themselves
    writable: list[str]  # the tool's scratch folders inside a read-only one, bound writable again
    workspace: str | None  # the overlay's lower layer (None: no overlay)
    upper: str
    work: str
    app: str  # where the overlay is mounted: the stage's app folder
    ctl: str  # the control folder (fstab, started, setup-error, stray-*)


def namespace_argv(plan: NamespacePlan, argv: list[str], cwd: str) -> list[str]:
    """The command line that runs ``argv`` in a namespace set up by ``plan``
    (the fstab is written into ``plan.ctl``)."""
    lines = []
    for path in _outermost(plan.read_only):
        lines.append(_bind_line(path))
    for path in plan.writable:
        lines.append(f"{_escape(path)} {_escape(path)} none bind,rw 0 0\n")
        lines.append(f"{_escape(path)} {_escape(path)} none remount,bind,rw 0 0\n")
    if plan.workspace is not None:
        lines.append(_overlay_line(plan.workspace, plan.upper, plan.work, plan.app))
    fstab = os.path.join(plan.ctl, "fstab")
    with open(fstab, "w", encoding="utf-8") as handle:
        handle.write("".join(lines))
    return _outer(fstab, plan.ctl, cwd) + list(argv)


def read_only_paths(candidates: list[str | None], scratch: str) -> tuple[list[str], list[str]]:
    """Which of the user's paths to bind read-only (existing ones, the first
    being the task folder; with them the folder that holds the task and the
    home folder, each unless the temporary folder is inside it), and which of
    the tool's folders must be bound writable again inside them."""
    import tempfile

    out: list[str] = []
    home = os.path.expanduser("~")
    temporary = os.path.realpath(tempfile.gettempdir())
    for path in [home] + list(candidates) + _dataset_folders(candidates[:1]):
        if not path or not os.path.exists(path):
            continue
        real = os.path.realpath(path)
        if path not in candidates and (_inside(scratch, real) or _inside(temporary, real)):
            continue  # the home folder or the dataset's holds the temporary folder: the run writes there
        if _inside(real, scratch):
            continue  # a folder of the tool's own, chosen as an input
        out.append(real)
    writable = [scratch] if any(_inside(scratch, p) for p in out) else []
    return out, writable


def _dataset_folders(task_roots: list[str | None]) -> list[str]:
    """The folder that holds the task: its dataset (the sibling tasks, a
    dataset-wide verifier.py), unless it is the file system's root or the
    temporary folder, which the run needs to write."""
    import tempfile

    out = []
    for root in task_roots:
        if not root:
            continue
        parent = os.path.dirname(os.path.realpath(root))
        if parent not in (os.sep, os.path.realpath(tempfile.gettempdir())):
            out.append(parent)
    return out


def _outermost(paths: list[str]) -> list[str]:
    """Each path once, and none inside another already listed (a bind of a
    folder covers what is in it)."""
    kept: list[str] = []
    for path in sorted(set(paths), key=len):
        if not any(_inside(path, k) for k in kept):
            kept.append(path)
    return kept


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def setup_problem(ctl: str, stderr: str) -> str | None:
    """After a run: why its namespace could not be set up (None: it was)."""
    return _setup_problem(ctl, stderr)


def runner_status(ctl: str) -> int | None:
    """The runner's exit status as the init's ``sh`` saw it (0 to 255; a
    runner ended by signal N is 128 + N there), or None when the init did not
    get to write it (it was killed first, or never started the runner)."""
    try:
        with open(os.path.join(ctl, "status"), encoding="ascii") as handle:
            text = handle.read().strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() and int(text) <= 255 else None


def strays(ctl: str) -> list[str]:
    """The command lines of the processes the init found still running once
    the runner had exited (they were ended with the namespace)."""
    out = []
    try:
        names = sorted(n for n in os.listdir(ctl) if n.startswith("stray-"))
    except OSError:
        return out
    for name in names:
        try:
            with open(os.path.join(ctl, name), "rb") as handle:
                raw = handle.read(4096)
        except OSError:
            continue
        words = [w.decode(errors="replace") for w in raw.split(b"\0") if w]
        out.append(" ".join(words) or f"pid {name[6:]}")
    return out
