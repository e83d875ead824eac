"""The real TUI in a pseudo-terminal, for the benchmarks that time or weigh it.

The app is the venv's ``verifier-tui`` console script, started as a user
starts it, in a terminal of 120x40; a thread reads everything it draws, and
:meth:`TerminalApp.wait` returns the moment a given text was drawn. Nothing
of the app's internals is used, so what is timed is what a person sees.
"""

from __future__ import annotations

import fcntl
import os
import pty
import signal
import struct
import termios
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from harness import BenchmarkError

SIZE = (120, 40)


class TerminalApp:
    def __init__(self, argv: Sequence[str], env: dict[str, str], cwd: Path) -> None:
        env = {k: v for k, v in env.items() if k not in ("COLUMNS", "LINES")}  # they would override the size
        env["TERM"] = "xterm-256color"
        self.argv = list(argv)
        pid, fd = pty.fork()
        if pid == 0:  # the child: the real command, in a real terminal of 120x40
            try:
                os.chdir(cwd)
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", SIZE[1], SIZE[0], 0, 0))
                os.execve(self.argv[0], self.argv, env)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        self._changed = threading.Condition()
        self._tail = b""
        self._marker: bytes | None = None
        self._found: float | None = None
        self._closed = False
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:
                chunk = b""
            now = time.perf_counter()
            with self._changed:
                if not chunk:
                    self._closed = True
                    self._changed.notify_all()
                    return
                window = self._tail + chunk
                if self._marker is not None and self._found is None and self._marker in window:
                    self._found = now
                    self._changed.notify_all()
                self._tail = window[-4096:]

    def expect(self, text: str) -> None:
        """Look for ``text`` in what is drawn from now on (call before the save)."""
        with self._changed:
            self._marker, self._found, self._tail = text.encode(), None, b""

    def wait(self, timeout: float = 30.0) -> float:
        """When the expected text was drawn (``time.perf_counter()``)."""
        with self._changed:
            self._changed.wait_for(lambda: self._found is not None or self._closed, timeout)
            if self._found is None:
                what = "ended" if self._closed else f"did not draw {self._marker!r} in {timeout:g} s"
                raise BenchmarkError(f"the TUI {what}")
            return self._found

    def rss_mb(self) -> float:
        """The app process's resident memory, in MB (1e6 bytes)."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024 / 1e6
        raise BenchmarkError("no VmRSS for the TUI's process")

    def close(self) -> None:
        """q, as a user quits; SIGTERM, then SIGKILL, when it does not."""
        try:
            os.write(self.fd, b"q")
        except OSError:
            pass
        for signum in (None, signal.SIGTERM, signal.SIGKILL):
            if signum is not None:
                try:
                    os.kill(self.pid, signum)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                done, _status = os.waitpid(self.pid, os.WNOHANG)
                if done:
                    os.close(self.fd)
                    return
                time.sleep(0.02)
        raise BenchmarkError("the TUI did not exit")
