"""The network a run's view gets, as the task's ``network_mode`` says.

Every view has a network namespace of its own (:mod:`.isolation`): the
user's loopback services, abstract sockets and interfaces are never in it.

* ``no-network``: nothing more (a loopback of its own), as Docker's
  ``network_mode: none``;
* ``public`` (Harbor's default) and ``allowlist``: the internet through
  user-mode networking, ``slirp4netns`` (Debian's and Fedora's package of
  that name, what rootless Podman used for years) attached to the view's
  namespace as it starts, with the machine's loopback not mapped
  (``--disable-host-loopback``), itself confined (a seccomp filter; a
  mount namespace of its own when run by root). Where it is not installed, or cannot start
  (``/dev/net/tun`` closed to the user), the run has no network, and says so
  with the install hint. An allowlist is not applied (said too);
* ``--network host``: the machine's own network, the user's explicit choice,
  said on every face.

:class:`UserNetwork` does the attaching, for the process driver
(:func:`verifier_tui.engine.process.run_process` and ``Held``): bwrap tells
the namespace's process on ``--info-fd`` and waits on ``--block-fd`` until
the helper says its interface is up.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from typing import Any

from verifier_tui.engine.procfs import is_over
from verifier_tui.engine.sandbox.isolation import BLOCK_FD, INFO_FD

HELPER = "slirp4netns"
INSTALL = "apt install slirp4netns, or your distribution's package of that name"
RESOLVER = "10.0.2.3"
"""slirp4netns's own DNS forwarder, the view's resolv.conf's one nameserver:
the machine's (often 127.0.0.53) is another namespace's loopback."""

_WAIT_S = 5.0  # for bwrap's pid, then for the helper's interface: milliseconds as a rule


HOST = "host"
"""``--network host``: the run shares this machine's network, asked for by the user."""
SHARED = "--network host: the run shares this machine's network, its loopback services included"
"""What every face says of a run given this machine's network: a note of ``run``'s, a line after
``test``'s summary and a JUnit property, as the copy sandbox's words are (passing cases say no notes)."""


def shared(limits: dict[str, Any] | None) -> str | None:
    """:data:`SHARED` for a run whose ``limits`` (as ``--json`` has them) say it had this machine's network."""
    return SHARED if limits is not None and limits.get("network_given") == HOST else None


def helper() -> str | None:
    """slirp4netns's path, or None where it is not installed."""
    return shutil.which(HELPER, path="/usr/bin:/bin:/usr/local/bin:/usr/sbin:/sbin") or shutil.which(HELPER)


def given(network_mode: str, choice: str) -> str:
    """The network a view gets: ``none`` (a loopback of its own), ``user``
    (the internet, through the helper) or ``host`` (this machine's), for the
    task's ``network_mode`` and the user's ``--network`` (``task`` or ``host``)."""
    if choice == HOST:
        return HOST
    if network_mode == "no-network" or helper() is None:
        return "none"
    return "user"


class UserNetwork:
    """slirp4netns attached to one run's network namespace (see the module's
    docstring). ``problem`` says why the run got no network after all.

    bwrap waits on ``--block-fd`` before it starts the view's init; the
    helper's own ``--ready-fd`` is read by a thread of the tool's, which
    passes its word on to that pipe at once, so the init starts the moment
    the interface is up, and the tool knows it was. A helper that ends
    before it says ready closes its pipe: the run goes on, without a
    network, and :meth:`close` says why."""

    def __init__(self, executable: str) -> None:
        self.executable = executable
        self.problem: str | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._exit: int | None = None  # slirp4netns ends when this closes
        self._pipes: dict[str, tuple[int, int]] = {}
        self._complaints: Any = None  # the helper's stderr: a file, never a pipe it could fill
        self.ready = False
        """The helper said the run's network was up (it may have ended later: :attr:`problem`)."""

    def open(self) -> dict[str, int | str]:
        """The pipes' ends bwrap gets, by the stand-in its command line holds."""
        self._pipes = {INFO_FD: _pipe(), BLOCK_FD: _pipe()}
        return {INFO_FD: self._pipes[INFO_FD][1], BLOCK_FD: self._pipes[BLOCK_FD][0]}

    def started(self, started: bool) -> None:
        """bwrap was started (or failed to): the helper attached, given the
        pipe that lets the init go (closed here: bwrap then goes on at once
        where there is no helper)."""
        info_read, info_write = self._pipes[INFO_FD]
        block_read, ready = self._pipes[BLOCK_FD]
        os.close(info_write)
        os.close(block_read)
        try:
            if started:
                pid = _child_pid(info_read)
                if pid is not None and _loopback_made(pid):  # else the view failed to be set up, as the run says
                    self._attach(pid, ready)
        finally:
            os.close(info_read)
            os.close(ready)

    def _attach(self, pid: int, ready: int) -> None:
        import fcntl
        import tempfile

        # The namespace itself, and the user namespace that owns it (which the
        # helper must join to configure it), held open: the helper is given
        # them, not a pid whose namespaces may change meanwhile (bwrap run by
        # root makes its user namespace after the network's).
        try:
            net = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return  # bwrap is gone: the run says why
        try:
            owner = fcntl.ioctl(net, _NS_GET_USERNS)
        except OSError as exc:  # Linux before 4.9
            os.close(net)
            self.problem = f"the owner of the run's network namespace is not known here ({exc.strerror})"
            return
        exit_read, self._exit = os.pipe()
        said, says = _pipe()  # the helper's --ready-fd, read by _wait_for_ready
        block = fcntl.fcntl(ready, fcntl.F_DUPFD_CLOEXEC, 10)  # bwrap's --block-fd, written by it
        self._complaints = tempfile.TemporaryFile()  # noqa: SIM115 - closed by close(), after the run
        join = [] if _same_namespace(owner, "/proc/self/ns/user") else [f"--userns-path=/proc/self/fd/{owner}"]
        # The helper parses every packet the run sends, on this machine as the user (libslirp has had
        # flaws a packet could reach): under a seccomp filter always (since 0.4), and in a mount
        # namespace of its own holding only /etc and /run (--enable-sandbox) where it runs as root.
        # Run by anyone else, 1.2.0's sandbox joins no namespace under --netns-type=path and then fails
        # on setegid(0), and the run would have no network (slirp4netns#317; rootless Podman avoids it
        # by starting the helper as uid 0 inside its user namespace, which this tool cannot).
        sandbox = ["--enable-sandbox"] if os.geteuid() == 0 else []
        try:
            self._proc = subprocess.Popen(
                [
                    self.executable,
                    "--configure",
                    "--mtu=65520",
                    "--disable-host-loopback",
                    *sandbox,
                    "--enable-seccomp",
                    f"--ready-fd={says}",
                    f"--exit-fd={exit_read}",
                    "--netns-type=path",
                    *join,
                    f"/proc/self/fd/{net}",
                    "tap0",
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=self._complaints,
                pass_fds=(says, exit_read, net, owner),
                start_new_session=True,
            )
        except OSError as exc:
            self.problem = f"{HELPER} could not start ({exc.strerror or exc})"
            os.close(said)
            os.close(block)
            return
        finally:
            for fd in (says, exit_read, net, owner):
                os.close(fd)
        import threading

        threading.Thread(
            target=self._wait_for_ready, args=(pid, said, block), name="verifier-tui-network", daemon=True
        ).start()

    def _wait_for_ready(self, pid: int, said: int, block: int) -> None:
        """The helper's ready passed on to bwrap. A helper that neither says
        ready nor ends would hold the run for its whole timeout: past
        :data:`_WAIT_S` it is ended, and the run goes on without. Only its
        ready says the run got its network: a view seen from outside once
        lost it while thousands of strays were being ended, its init neither
        with a root of its own nor yet a zombie, and a run that had its
        network was said to have had none."""
        import select

        proc = self._proc
        waiting = select.poll()  # not select.select: a descriptor past 1024 is as good
        waiting.register(said, select.POLLIN)
        try:
            if waiting.poll(_WAIT_S * 1000):
                word = os.read(said, 1)  # b"1"; nothing: the helper ended first, as close() says
                if word:
                    self.ready = True
                    os.write(block, word)
            elif proc is not None and not is_over(pid):  # a view ended meanwhile waits for nothing
                self.problem = f"{HELPER} did not give the run a network within {_WAIT_S:g} s"
                proc.kill()
        except OSError:  # bwrap is gone: the run says why
            pass
        finally:
            os.close(said)
            os.close(block)  # bwrap goes on, without a network if it was not told ready

    def _said(self) -> str:
        """The helper's own first line of complaint: its parent's and child's
        lines interleave, most of them progress (:data:`_PROGRESS`) and the
        "parent failed" / "child failed" that follow the cause."""
        text = ""
        if self._complaints is not None:
            try:
                self._complaints.seek(0)
                text = self._complaints.read(4096).decode(errors="replace")
            except (OSError, ValueError):
                pass
        lines = [
            line.strip()
            for line in text.splitlines()
            if line.strip() and not line.startswith(_PROGRESS) and not line.strip().startswith(_FAILED)
        ]
        return lines[0] if lines else "no reason given"

    def close(self) -> None:
        """The run is over: the helper goes. Killed rather than told (it
        notices its exit pipe at its next poll), and reaped aside: its exit
        closes the network device, which the kernel takes 10 ms and more to
        let go of, after the run's result is known. One that ended on its
        own never gave the run its network: said."""
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.poll() is not None and self.problem is None:
                given = "ended during the run" if self.ready else "could not give the run a network"
                self.problem = f"{HELPER} {given} ({self._said()})"
            else:
                import threading

                proc.kill()
                threading.Thread(target=proc.wait, name="verifier-tui-reap", daemon=True).start()
        if self._exit is not None:
            os.close(self._exit)
            self._exit = None
        if self._complaints is not None:
            self._complaints.close()
            self._complaints = None


_PROGRESS = ("sent tapfd", "received tapfd", "WARNING:", "Starting slirp", "* ")
"""The starts of slirp4netns 1.2.0's lines that say how far it got, not what went wrong."""
_FAILED = ("parent failed", "child failed")


_NS_GET_USERNS = 0xB701
"""ioctl(2) on a namespace: the user namespace that owns it (ioctl_ns(2))."""


def _same_namespace(fd: int, path: str) -> bool:
    try:
        return os.fstat(fd).st_ino == os.stat(path).st_ino
    except OSError:
        return False


def _pipe() -> tuple[int, int]:
    """A pipe at fd 10 or above: clear of the fds the view's outer shell and
    init take for themselves (3 to 5)."""
    import fcntl

    ends = os.pipe()
    try:
        return fcntl.fcntl(ends[0], fcntl.F_DUPFD_CLOEXEC, 10), fcntl.fcntl(ends[1], fcntl.F_DUPFD_CLOEXEC, 10)
    finally:
        os.close(ends[0])
        os.close(ends[1])


def _child_pid(fd: int) -> int | None:
    """The pid bwrap writes on ``--info-fd`` once its namespaces exist."""
    data = _read_within(fd, _WAIT_S, until=b"}")
    try:
        pid = json.loads(data[: data.index(b"}") + 1])["child-pid"]
    except (ValueError, KeyError, TypeError):
        return None
    return pid if isinstance(pid, int) and pid > 0 else None


def _loopback_made(pid: int) -> bool:
    """Whether bwrap has given the namespace its loopback (its 127.0.0.1, in
    the namespace's routes), waited for: the helper brings ``lo`` up too,
    and bwrap, adding 127.0.0.1 after that, would find it there and fail."""
    deadline = time.monotonic() + _WAIT_S
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/net/fib_trie", "rb") as handle:
                if b"127.0.0.1" in handle.read():
                    return True
        except OSError:
            return False  # gone: bwrap failed, and says why
        time.sleep(0.0005)
    return False


def _read_within(fd: int, seconds: float, until: bytes) -> bytes:
    """What ``fd`` gives within ``seconds``, up to ``until``."""
    import selectors

    data = b""
    deadline = time.monotonic() + seconds
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            if not selector.select(max(0.0, deadline - time.monotonic())):
                break
            chunk = os.read(fd, 4096)
            data += chunk
            if not chunk or until in data:
                break
    return data
