"""The one-shot driver starts the child with posix_spawn when this process has
a single thread, and with subprocess.Popen otherwise: both must behave alike."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from verifier_tui.engine.process_sync import run_process_sync

SCRIPT = (
    "import os, sys\n"
    "print(os.getcwd())\n"
    "print('stdin:', repr(sys.stdin.read()))\n"
    "sys.stderr.write('err\\n')\n"
    "print('session leader:', os.getsid(0) == os.getpid())\n"
    "sys.exit(3)\n"
)


@pytest.fixture(params=["posix_spawn", "popen"])
def driver(request):
    """With a second thread alive, the driver must not chdir: it uses Popen."""
    if request.param == "posix_spawn":
        if threading.active_count() != 1:
            pytest.skip("another thread is running in this test process")
        yield request.param
        return
    stop = threading.Event()
    helper = threading.Thread(target=stop.wait)
    helper.start()
    try:
        yield request.param
    finally:
        stop.set()
        helper.join()


def test_cwd_stdin_pipes_session_and_exit_code(driver, tmp_path):
    before = os.getcwd()
    done = run_process_sync([sys.executable, "-c", SCRIPT], cwd=tmp_path, env=dict(os.environ), timeout_s=60)
    assert os.getcwd() == before  # the parent is back where it was
    lines = done.stdout.text.splitlines()
    assert lines[0] == str(tmp_path)
    assert lines[1] == "stdin: ''"
    assert lines[2] == "session leader: True"
    assert done.stderr.text == "err\n"
    assert done.returncode == 3 and done.signal is None and not done.timed_out


def test_a_missing_interpreter_is_a_start_error(driver, tmp_path):
    done = run_process_sync(["/nonexistent/python3", "-c", "pass"], cwd=tmp_path, env=dict(os.environ), timeout_s=5)
    assert done.start_error is not None and "No such file" in done.start_error
    assert done.returncode is None


def test_a_timeout_ends_the_child_with_a_signal(driver, tmp_path):
    done = run_process_sync([sys.executable, "-c", "import time; time.sleep(60)"], cwd=tmp_path,
                            env=dict(os.environ), timeout_s=0.5, grace_s=0.5)
    assert done.timed_out
    assert done.signal in (15, 9)
