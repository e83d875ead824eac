"""``verifier-tui PATH`` for real: a pseudo-terminal, the installed entry point."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time

import pytest

from tests.tui.conftest import EXAMPLES, make_task

pty = pytest.importorskip("pty")


def run_in_terminal(args: list[str], until: bytes, keys: bytes = b"q", timeout: float = 20.0) -> tuple[bytes, int]:
    """Start ``python -m verifier_tui ARGS`` in a 120x40 terminal, read until
    ``until`` is drawn, press ``keys``; return what was drawn and the exit status."""
    import fcntl
    import struct
    import termios

    pid, fd = pty.fork()
    if pid == 0:  # the size is set before the app starts, so it never sees 80x24
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        # An explicit environment: COLUMNS/LINES (set at C level under pytest)
        # would override the terminal's own size.
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
        env["TERM"] = "xterm-256color"
        os.execve(sys.executable, [sys.executable, "-m", "verifier_tui", *args], env)
    seen = b""
    deadline = time.monotonic() + timeout
    try:
        while until not in seen and time.monotonic() < deadline:
            if select.select([fd], [], [], 0.05)[0]:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                seen += chunk
        os.write(fd, keys)
        end = time.monotonic() + 10
        while time.monotonic() < end:
            if select.select([fd], [], [], 0.05)[0]:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                seen += chunk
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return seen, os.waitstatus_to_exitcode(status)
        os.kill(pid, 9)
        _, status = os.waitpid(pid, 0)
        return seen, os.waitstatus_to_exitcode(status)
    finally:
        os.close(fd)


def test_opens_runs_and_quits_in_a_real_terminal():
    seen, status = run_in_terminal([str(EXAMPLES / "hello-file")], until=b"passed")
    assert b"passed" in seen
    assert status == 0
    assert b"Traceback" not in seen


def test_a_task_without_a_verifier_opens_and_says_so(tmp_path):
    root = make_task(tmp_path, "empty", None)
    seen, status = run_in_terminal([str(root)], until=b"Nothing to run yet")
    assert b"no verifier found" in seen
    assert status == 0


def test_no_watch_starts_with_live_reload_off():
    seen, status = run_in_terminal([str(EXAMPLES / "hello-file"), "--no-watch"], until=b"not watching")
    assert b"not watching" in seen and status == 0


def test_a_path_that_cannot_be_debugged_is_one_clear_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "verifier_tui", str(tmp_path / "nope")],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert done.stderr.startswith("verifier-tui: ") and "does not exist" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("signame", ["SIGHUP", "SIGTERM"])
def test_closing_the_terminal_ends_the_run_and_removes_the_scratch(tmp_path, signame):
    """The runner lives in its own session, so a terminal's hangup never reaches
    it: the app must end it (and its children) and remove its scratch folder."""
    import signal

    pid_file = tmp_path / "verifier.pid"
    root = make_task(tmp_path, "slow", f"""
        import os, time
        def verify(workspace):
            open({str(pid_file)!r}, "w").write(str(os.getpid()))
            time.sleep(120)
            return 1.0
    """)
    scratch_home = tmp_path / "tmp"
    scratch_home.mkdir()
    pid, fd = pty.fork()
    if pid == 0:
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
        env.update(TERM="xterm-256color", TMPDIR=str(scratch_home))
        os.execve(sys.executable, [sys.executable, "-m", "verifier_tui", str(root), "--no-watch"], env)
    try:
        deadline = time.monotonic() + 30
        while not pid_file.exists() and time.monotonic() < deadline:
            if select.select([fd], [], [], 0.05)[0]:
                try:
                    os.read(fd, 65536)
                except OSError:
                    break
        assert pid_file.exists(), "the verifier never started"
        verifier_pid = int(pid_file.read_text())
        os.kill(pid, getattr(signal, signame))
        status = None
        end = time.monotonic() + 20
        while time.monotonic() < end:
            if select.select([fd], [], [], 0.05)[0]:
                try:
                    os.read(fd, 65536)
                except OSError:
                    pass
            done, raw = os.waitpid(pid, os.WNOHANG)
            if done:
                status = os.waitstatus_to_exitcode(raw)
                break
        if status is None:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        assert status is not None, "the app did not quit"
    finally:
        os.close(fd)
    end = time.monotonic() + 10
    while time.monotonic() < end:
        try:
            os.kill(verifier_pid, 0)
        except ProcessLookupError:
            break
        stat = open(f"/proc/{verifier_pid}/stat").read().rsplit(")", 1)[1].split()
        if stat[0] in ("Z", "X"):
            break
        time.sleep(0.05)
    else:
        os.kill(verifier_pid, 9)
        pytest.fail("the verifier outlived the app")
    assert list(scratch_home.iterdir()) == []
