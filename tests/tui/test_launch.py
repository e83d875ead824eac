"""``verifier-tui PATH`` for real: a pseudo-terminal, the installed entry point."""

from __future__ import annotations

import os
import select
import textwrap
import time
from pathlib import Path

import pytest

from tests.helpers.commands import TOOL, ended, no_traceback, run_in_terminal, run_tool, start_in_terminal
from tests.helpers.processes import SAY_STARTED, has_started, past_the_inotify_limit, processes_with, wait_none_with
from tests.helpers.tasks import make_task

pty = pytest.importorskip("pty")


def test_opens_runs_and_quits_in_a_real_terminal(example, env):
    seen, status = run_in_terminal(env, [str(example("hello-file"))], until=b"passed")
    assert b"passed" in seen
    assert status == 0
    assert b"Traceback" not in seen


def test_a_task_without_a_verifier_opens_and_says_so(tmp_path, env):
    root = make_task(tmp_path / "tasks" / "empty", None)
    seen, status = run_in_terminal(env, [str(root)], until=b"Nothing to run yet")
    assert b"no verifier found" in seen
    assert status == 0


def test_new_in_a_terminal_opens_the_tui_on_the_task_it_wrote(tmp_path, env):
    task = tmp_path / "first-task"
    seen, status = run_in_terminal(env, ["new", str(task)], until=b"passed")
    assert status == 0
    assert b"wrote a new task" in seen and b"local/first-task" in seen  # the list, then the TUI's header
    assert (task / "tests" / "verifier.py").is_file()
    # A task named like a command (`new test`) is opened as a task too, not read as that command.
    seen, status = run_in_terminal(env, ["new", "test"], until=b"passed", around=["env", "-C", str(tmp_path)])
    assert status == 0 and b"local/test" in seen, seen[-2000:]


def test_no_watch_starts_with_live_reload_off(example, env):
    seen, status = run_in_terminal(env, [str(example("hello-file")), "--no-watch"], until=b"not watching")
    assert b"not watching" in seen and status == 0


def test_a_path_that_cannot_be_debugged_is_one_clear_line(tmp_path, env):
    done = run_tool(env, tmp_path / "nope")
    assert done.returncode == 2
    assert done.stderr.startswith("verifier-tui: ") and "does not exist" in done.stderr
    no_traceback(done)


def test_a_folder_it_cannot_open_is_told_every_kind_it_opens(tmp_path, env):
    """`verifier-tui jobs/` on Harbor's jobs folder before any job: "expected a task folder ..., or a
    Harbor trial folder", as if a job or a folder of jobs (what the README opens first) were no
    input of the tool's."""
    (tmp_path / "jobs").mkdir()
    done = run_tool(env, tmp_path / "jobs")
    assert done.returncode == 2
    assert done.stderr.rstrip().endswith("or a Harbor trial or job folder, or Harbor's jobs/ folder"), done.stderr
    no_traceback(done)


@pytest.mark.parametrize("signame", ["SIGHUP", "SIGTERM"])
def test_closing_the_terminal_ends_the_run_and_removes_the_scratch(tmp_path, env, signame):
    """The runner lives in its own session, so a terminal's hangup never reaches
    it: the app must end it (and its children) and remove its scratch folder."""
    import signal

    root = make_task(
        tmp_path / "tasks" / "slow",
        "import time\ndef verify(workspace):\n"
        + textwrap.indent(SAY_STARTED, "    ")
        + "    time.sleep(120)\n    return 1.0\n",
    )
    pid, fd = start_in_terminal(env, [str(root), "--no-watch"])
    try:
        deadline = time.monotonic() + 30
        while not has_started(env["TMPDIR"]) and time.monotonic() < deadline:
            if select.select([fd], [], [], 0.05)[0]:
                try:
                    os.read(fd, 65536)
                except OSError:
                    break
        assert has_started(env["TMPDIR"]), "the verifier never started"
        # The runner (and, with namespaces, the init around it), by the scratch
        # folder on their command lines: the pid the verifier sees is its
        # namespace's, which means nothing out here.
        scratch = env["TMPDIR"]
        assert processes_with(scratch), "the runner is not to be seen"
        os.kill(pid, getattr(signal, signame))
        _, status = ended(pid, fd, within_s=20)
        assert status is not None, "the app did not quit"
    finally:
        os.close(fd)
    left = wait_none_with(scratch, within_s=10)
    for stray in left:
        os.kill(stray, 9)
    assert left == [], "the runner outlived the app"
    assert list(Path(env["TMPDIR"]).iterdir()) == []  # the scratch folder is gone


@pytest.mark.parametrize("terminal", ["neither", "stdin only", "stdout only"])
def test_without_a_terminal_it_says_to_use_run_or_watch(example, env, tmp_path, terminal):
    """``verifier-tui TASK </dev/null >out`` drew the app's escape codes into
    ``out`` and waited for keys that never come; without a terminal on both
    stdin and stdout it now says in one line what to use instead, exit 2."""
    import subprocess

    from tests.helpers.tasks import HANG_GUARD_S

    controller, terminal_end = pty.openpty()
    stdin = terminal_end if terminal == "stdin only" else subprocess.DEVNULL
    try:
        with open(tmp_path / "out", "w") as out:
            stdout = terminal_end if terminal == "stdout only" else out
            done = subprocess.run(
                [*TOOL, str(example("hello-file"))],
                env=env,
                stdin=stdin,
                stdout=stdout,
                stderr=subprocess.PIPE,
                text=True,
                timeout=HANG_GUARD_S,
            )
    finally:
        os.close(terminal_end)
        os.close(controller)
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("verifier-tui: ") and "needs a terminal" in lines[0]
    # Neither a terminal once read "stdin and stdout is not one".
    said = {"neither": "neither stdin nor stdout is one", "stdin only": "stdout is not one"}
    assert said.get(terminal, "stdin is not one") in lines[0], lines[0]
    assert "verifier-tui run " in lines[0] and "verifier-tui watch " in lines[0]
    assert (tmp_path / "out").read_text() == ""  # no escape codes written into the file


def test_a_sigcont_not_after_a_stop_leaves_the_app_as_it_was_and_q_quits(example, env):
    """A terminal that closes sends SIGCONT with its SIGHUP, and ``kill -CONT``
    sends it to a process that never stopped: Textual 8.2.8 started its
    application mode again each time, a second thread reading the terminal
    beside the first, and one of them outlived the app's exit: q drew the
    screen away, and the process waited on that thread for good."""
    import signal

    pid, fd = start_in_terminal(env, [str(example("hello-file")), "--no-watch"])
    try:
        seen = b""
        deadline = time.monotonic() + 30
        while b"passed" not in seen and time.monotonic() < deadline:
            if select.select([fd], [], [], 0.05)[0]:
                seen += os.read(fd, 65536)
        assert b"passed" in seen, seen[-500:]
        for _ in range(6):
            os.kill(pid, signal.SIGCONT)
            time.sleep(0.1)
        os.write(fd, b"q")
        _, status = ended(pid, fd, within_s=15)
        assert status == 0, "the app did not quit on q"
    finally:
        os.close(fd)


def test_a_terminal_closed_while_the_app_waits_for_enter_ends_the_app(example, env):
    """An editor that failed left the real terminal at "press Enter to return";
    closing the terminal (the tool started from a shell, as a terminal's tab
    starts it) then left the process waiting for good, deaf to SIGTERM: its
    handler waited on the suspended app's loop."""
    import shlex

    command = f"{shlex.join([*TOOL, str(example('hello-file')), '--no-watch'])}; true"  # the shell stays its parent
    shell, fd = start_in_terminal(dict(env, EDITOR="false", VISUAL="false"), [], shell=command)
    seen, pressed = b"", False
    deadline = time.monotonic() + 30
    while b"press Enter to return" not in seen and time.monotonic() < deadline:
        if select.select([fd], [], [], 0.05)[0]:
            try:
                seen += os.read(fd, 65536)
            except OSError:
                break
        if b"passed" in seen and not pressed:
            os.write(fd, b"e")  # opens the verifier in the editor, which fails
            pressed = True
    assert b"press Enter to return" in seen, seen[-500:]
    [tool] = [int(pid) for pid in Path(f"/proc/{shell}/task/{shell}/children").read_text().split()]
    os.close(fd)  # the terminal goes
    os.waitpid(shell, 0)
    end = time.monotonic() + 15
    while Path(f"/proc/{tool}").exists() and Path(f"/proc/{tool}/stat").read_text().split()[2] != "Z":
        if time.monotonic() > end:
            os.kill(tool, 9)
            raise AssertionError("the app outlived its terminal")
        time.sleep(0.05)


@pytest.mark.parametrize("kind", ["missing", "not an interpreter", "a folder"])
def test_a_python_that_cannot_run_the_runner_is_refused_before_the_screen(example, env, tmp_path, kind):
    """``verifier-tui TASK --python BAD`` opened the screen, whose every run then
    failed to start, where ``run`` refuses it in one line, exit 2: the TUI says
    the same line, before anything is drawn."""
    not_python = tmp_path / "not-python"
    not_python.write_text("just text\n")
    python = {"missing": str(tmp_path / "nowhere" / "python3"), "not an interpreter": str(not_python)}.get(
        kind, str(tmp_path)
    )
    task = str(example("hello-file"))
    refused = run_tool(env, "run", task, "--python", python)
    said = refused.stderr.strip().encode()
    assert refused.returncode == 2 and said.startswith(b"verifier-tui: --python ")
    seen, status = run_in_terminal(env, [task, "--python", python], until=said)
    assert said in seen and status == 2
    assert b"Resolution" not in seen and b"correct" not in seen  # no screen


def test_the_tui_says_it_cannot_see_every_change_past_the_inotify_watch_limit(env, tmp_path):
    """Past fs.inotify.max_user_watches (lowered for the app alone, in a user namespace of its own) the
    TUI's live reload missed saves in the folders left unwatched, without a word: it now says so, with
    the sysctl that raises the limit, and goes on (q still quits)."""
    root = make_task(tmp_path / "tasks" / "deep", cases={"one": {"out.txt": "x"}})
    for n in range(40):
        (root / "cases" / "one" / "workspace" / f"d{n}").mkdir()
    drawn, status = run_in_terminal(
        env, [str(root)], until=b"max_user_watches=524288", timeout=60, around=past_the_inotify_limit(12)
    )
    assert b"max_user_watches=524288" in drawn and status == 0, (status, drawn[-2000:])
