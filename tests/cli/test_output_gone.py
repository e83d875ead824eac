"""A command whose output has nowhere to go: started with stdout closed
(``>&-``), its reader gone while it waits (``| head -1``), or a full disk.
One line or none, an end, never a traceback or a watch that runs for no one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from tests.helpers.commands import TOOL
from tests.helpers.tasks import PY, copy_example


def _shell(env, command: str, tmp_path, timeout: float = 40) -> subprocess.CompletedProcess:
    """``command`` in bash, in a session of its own: a tool that never ends
    (the fault these tests look for) is ended with it, never left running."""
    proc = subprocess.Popen(
        ["bash", "-c", command],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.parametrize(
    "args",
    [["run", "task"], ["watch", "task", "--case", "correct"], ["watch", "task", "--json"], ["test", "task", "--watch"]],
)
def test_a_command_started_with_stdout_closed_ends_without_a_traceback(env, tmp_path, args):
    copy_example("hello-file", tmp_path / "task")
    tool = " ".join(TOOL)
    done = _shell(env, f"{tool} {' '.join(args)} --python {PY} >&-", tmp_path)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode in (0, 1), (done.returncode, done.stderr)


WATCHES = [["watch", "task", "--case", "correct", "--json"], ["test", "task", "--watch", "--json"]]


@pytest.mark.parametrize("args", WATCHES)
def test_a_watch_whose_reader_left_ends_while_nothing_changes(env, tmp_path, args):
    # Before, it noticed only when the next save's line could not be written: _shell's timeout.
    copy_example("hello-file", tmp_path / "task")
    command = f'{" ".join(TOOL)} {" ".join(args)} --python {PY} | head -1; echo "${{PIPESTATUS[0]}}"'
    done = _shell(env, command, tmp_path)
    assert done.stdout.splitlines()[-1] == "0", done.stdout + done.stderr


@pytest.mark.parametrize("args", [["run", "task"], ["watch", "task", "--json"], ["test", "task", "--watch"]])
def test_output_to_a_full_disk_is_said_as_stdouts_and_ends_with_status_2(env, tmp_path, args):
    # It named the task ("task: No space left on device"), and a watch ran on with exit 0.
    copy_example("hello-file", tmp_path / "task")
    done = _shell(env, f"{' '.join(TOOL)} {' '.join(args)} --python {PY} >/dev/full", tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.count("No space left") == 1 and "standard output" in done.stderr, done.stderr


# The watch says its run failed on the full disk; a SIGTERM lands before the watch has ended (a CI timeout).
SIGTERM_AFTER_THE_FAILURE = """
import os, signal, sys
from verifier_tui.commands import terminal
said = terminal.error
def error(text):
    said(text)
    if "failed:" in text:
        os.kill(os.getpid(), signal.SIGTERM)
terminal.error = error
from verifier_tui.cli import main
sys.exit(main())
"""


@pytest.mark.parametrize("args", [["watch", "task", "--json"], ["test", "task", "--watch", "--json"]])
def test_a_watch_on_a_full_disk_then_stopped_says_the_full_disk_once(env, tmp_path, args):
    # The failure was said as the run's (or round's) line, then again as the command's own when the
    # signal made the stop raise it once more: two lines for one full disk.
    copy_example("hello-file", tmp_path / "task")
    (tmp_path / "tool.py").write_text(SIGTERM_AFTER_THE_FAILURE)
    done = _shell(env, f"{sys.executable} tool.py {' '.join(args)} --python {PY} >/dev/full", tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.count("No space left") == 1, done.stderr
