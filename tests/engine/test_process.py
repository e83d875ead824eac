"""The process driver with real child processes: exit codes, bounded output,
decoding, timeouts, process-group kills, cancellation, and children that
cannot start. Every test runs through both entry points of the one core: the
blocking :func:`run_process` (as ``run`` calls it) and the same core run
from asyncio in a thread of its own, :func:`in_a_thread` (as the TUI,
``watch`` and ``test`` call it).

No assertion is about how long something took. Two kinds of waits are bounded
all the same, so that a bug fails a test instead of hanging the suite: every
run goes through ``asyncio.wait_for(..., HANG_GUARD_S)``, and a killed process
is given a moment to vanish (a SIGKILL is delivered asynchronously).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from functools import partial
from pathlib import Path

import pytest

from tests.helpers.processes import process_gone, wait_gone
from tests.helpers.tasks import HANG_GUARD_S, PY
from verifier_tui.engine import process
from verifier_tui.engine.process import CancelSignal, ProcessCancelled, ProcessResult, in_a_thread, run_process

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes through /proc")


async def run_in_a_thread(argv: list[str], **options) -> ProcessResult:
    """:func:`run_process` from asyncio, as a session's run calls it: in a
    thread of its own (:func:`in_a_thread`)."""
    return await in_a_thread(partial(run_process, argv, **options))


def child_env(**extra: str) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONUNBUFFERED": "1", **extra}


@pytest.fixture(params=["blocking", "async"])
def drive(request):
    """``await drive(argv, cwd=..., env=..., timeout_s=..., **options)`` through
    the blocking core (called right here, as ``run`` does) or the async face."""

    async def go(argv, **kwargs) -> ProcessResult:
        if request.param == "blocking":
            return run_process(argv, **kwargs)
        return await asyncio.wait_for(run_in_a_thread(argv, **kwargs), HANG_GUARD_S)

    return go


@pytest.fixture
def run_py(drive):
    async def go(
        code: str, *args: str, cwd: Path, timeout_s: float | None = 30.0, env: dict[str, str] | None = None, **kwargs
    ) -> ProcessResult:
        argv = [PY, "-c", textwrap.dedent(code), *args]
        return await drive(argv, cwd=cwd, env=env or child_env(), timeout_s=timeout_s, **kwargs)

    return go


async def wait_for_file(path: Path, within_s: float = 20.0) -> str:
    deadline = time.monotonic() + within_s
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        await asyncio.sleep(0.02)
    return path.read_text()


# A child that starts a grandchild `sleep 300`, records both pids (atomically),
# and then sleeps. argv[1] is the pid file.
SPAWNS_GRANDCHILD = """
    import os, subprocess, sys, time
    grandchild = subprocess.Popen(["sleep", "300"])
    tmp = sys.argv[1] + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"{os.getpid()} {grandchild.pid}")
    os.replace(tmp, sys.argv[1])
    time.sleep(300)
"""


IGNORES_SIGTERM = "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"


def read_pids(text: str) -> tuple[int, int]:
    child, grandchild = text.split()
    return int(child), int(grandchild)


# ---------------------------------------------------------------- exit and output


async def test_normal_exit(run_py, tmp_path: Path) -> None:
    result = await run_py("print('hello')", cwd=tmp_path)
    assert result.returncode == 0
    assert result.signal is None
    assert not result.timed_out
    assert result.start_error is None
    assert result.stdout.text == "hello\n"
    assert result.stderr.text == ""
    assert result.stdout.total_bytes == 6 and result.stdout.dropped_bytes == 0
    assert isinstance(result.pid, int)
    assert result.duration_s > 0
    assert not result.killed_leftovers and not result.output_cut_short
    assert process_gone(result.pid)  # reaped before run_process returned


@pytest.mark.parametrize("code", [1, 2, 3, 42, 255])
async def test_exit_codes(run_py, tmp_path: Path, code: int) -> None:
    result = await run_py(f"import sys; sys.exit({code})", cwd=tmp_path)
    assert result.returncode == code
    assert result.signal is None


async def test_past_the_memory_limit_a_process_killed_already_is_waited_for(
    run_py, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kernel's OOM killer lets its victim free its memory before it picks
    again. Here each SIGKILL lands 0.3 s late, as for a big process slow to
    exit on a loaded machine: it is killed, and listed, once."""
    kill = os.kill

    def kill_if_there(pid: int, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            kill(pid, sig)

    def late(pid: int, sig: int) -> None:
        if sig != signal.SIGKILL:
            return kill(pid, sig)
        threading.Timer(0.3, kill_if_there, (pid, sig)).start()

    monkeypatch.setattr(os, "kill", late)
    result = await run_py("b = bytearray(200 << 20)\nimport time\ntime.sleep(30)", cwd=tmp_path, memory_limit=64 << 20)
    assert result.signal == signal.SIGKILL
    assert len(result.oom_killed) == 1, result.oom_killed


async def test_uncaught_exception_goes_to_stderr(run_py, tmp_path: Path) -> None:
    result = await run_py("raise ValueError('boom')", cwd=tmp_path)
    assert result.returncode == 1
    assert "ValueError: boom" in result.stderr.text
    assert result.stdout.text == ""


async def test_environment_is_exactly_the_one_given(run_py, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VERIFIER_TUI_TEST_NOT_INHERITED", "1")
    result = await run_py(
        "import os; print(os.environ.get('ONLY_THIS'), 'VERIFIER_TUI_TEST_NOT_INHERITED' in os.environ)",
        cwd=tmp_path,
        env=child_env(ONLY_THIS="x"),
    )
    assert result.stdout.text == "x False\n"


async def test_cwd_and_stdin(run_py, tmp_path: Path) -> None:
    result = await run_py("import os, sys; print(os.getcwd()); print(repr(sys.stdin.read()))", cwd=tmp_path)
    assert result.stdout.text == f"{tmp_path.resolve()}\n''\n"


async def test_own_session_and_process_group(run_py, tmp_path: Path) -> None:
    result = await run_py("import os; print(os.getpid() == os.getpgrp() == os.getsid(0))", cwd=tmp_path)
    assert result.stdout.text == "True\n"


async def test_output_over_the_cap_keeps_head_and_tail(run_py, tmp_path: Path) -> None:
    # 625,000 numbered lines of 8 bytes: 5,000,000 bytes.
    code = """
        import sys
        out = sys.stdout.buffer
        for start in range(0, 625_000, 5_000):
            out.write(b"".join(b"%07d\\n" % i for i in range(start, start + 5_000)))
    """
    cap = 256 * 1024
    result = await run_py(code, cwd=tmp_path, cap_bytes=cap)
    assert result.returncode == 0
    out = result.stdout
    assert out.total_bytes == 5_000_000
    assert out.truncated
    # Memory stays bounded: what is kept is about the cap, not the output.
    assert len(out.head) == cap // 2 and len(out.tail) == cap // 2
    assert out.dropped_bytes == 5_000_000 - cap
    lines_kept = cap // 2 // 8
    assert out.head == "".join(f"{i:07d}\n" for i in range(lines_kept))
    assert out.tail == "".join(f"{i:07d}\n" for i in range(625_000 - lines_kept, 625_000))
    assert f"{out.dropped_bytes:,} bytes of output dropped" in out.text


async def test_both_pipes_drained_concurrently(run_py, tmp_path: Path) -> None:
    # Far more than a pipe buffer on stderr before anything on stdout: a reader
    # that waited on stdout first would deadlock here.
    code = """
        import sys
        sys.stderr.buffer.write(b"e" * 3_000_000); sys.stderr.flush()
        sys.stdout.buffer.write(b"o" * 3_000_000)
    """
    result = await run_py(code, cwd=tmp_path, cap_bytes=1000)
    assert result.returncode == 0
    assert result.stderr.total_bytes == 3_000_000 and result.stdout.total_bytes == 3_000_000
    assert result.stderr.head == "e" * 500 and result.stderr.tail == "e" * 500
    assert result.stdout.dropped_bytes == 3_000_000 - 1000


async def test_one_megabyte_line_without_newline(run_py, tmp_path: Path) -> None:
    code = "import sys; sys.stdout.write('a' * 1_048_576)"
    small = await run_py(code, cwd=tmp_path)
    assert small.returncode == 0
    assert small.stdout.total_bytes == 1_048_576
    assert small.stdout.head == "a" * 131_072 and small.stdout.tail == "a" * 131_072
    assert small.stdout.dropped_bytes == 1_048_576 - 262_144

    whole = await run_py(code, cwd=tmp_path, cap_bytes=4 * 1024 * 1024)
    assert whole.stdout.text == "a" * 1_048_576
    assert whole.stdout.dropped_bytes == 0


async def test_invalid_utf8_is_replaced(run_py, tmp_path: Path) -> None:
    code = r"""
        import sys
        sys.stdout.buffer.write(b"ok \xff\xfe end\n")
        sys.stderr.buffer.write(b"\xc3(\n")
    """
    result = await run_py(code, cwd=tmp_path)
    assert result.stdout.text == "ok \ufffd\ufffd end\n"
    assert result.stderr.text == "\ufffd(\n"
    assert result.stdout.total_bytes == 10


async def test_character_split_across_writes(run_py, tmp_path: Path) -> None:
    code = r"""
        import sys, time
        out = sys.stdout.buffer
        out.write(b"caf\xc3"); out.flush(); time.sleep(0.05)
        out.write(b"\xa9!"); out.flush()
    """
    seen: list[str] = []
    result = await run_py(code, cwd=tmp_path, on_output=lambda stream, text: seen.append(text))
    assert result.stdout.text == "café!"
    assert "".join(seen) == "café!"
    assert "\ufffd" not in "".join(seen)


async def test_cap_cuts_on_character_boundaries(run_py, tmp_path: Path) -> None:
    code = "import sys; sys.stdout.write('é' * 1000)"  # 2,000 bytes
    result = await run_py(code, cwd=tmp_path, env=child_env(PYTHONIOENCODING="utf-8"), cap_bytes=11)
    out = result.stdout
    assert "\ufffd" not in out.head + out.tail
    assert set(out.head) == {"é"} and set(out.tail) == {"é"}
    assert len(out.head.encode()) + len(out.tail.encode()) + out.dropped_bytes == out.total_bytes == 2000


async def test_small_interleaved_output_is_captured_fully(run_py, tmp_path: Path) -> None:
    code = """
        import sys
        for i in range(200):
            print(f"out {i}", flush=True)
            print(f"err {i}", file=sys.stderr, flush=True)
    """
    result = await run_py(code, cwd=tmp_path)
    assert result.stdout.text == "".join(f"out {i}\n" for i in range(200))
    assert result.stderr.text == "".join(f"err {i}\n" for i in range(200))
    assert not result.stdout.truncated and not result.stderr.truncated


async def test_on_output_sees_every_chunk_by_stream(run_py, tmp_path: Path) -> None:
    code = """
        import sys
        for i in range(50):
            print(f"out {i}", flush=True)
            print(f"err {i}", file=sys.stderr, flush=True)
    """
    seen: dict[str, list[str]] = {"stdout": [], "stderr": []}
    result = await run_py(code, cwd=tmp_path, on_output=lambda s, t: seen[s].append(t))
    assert "".join(seen["stdout"]) == result.stdout.text
    assert "".join(seen["stderr"]) == result.stderr.text
    assert all(seen["stdout"]) and all(seen["stderr"])  # no empty chunks


async def test_on_output_that_raises_does_not_stop_the_capture(run_py, tmp_path: Path) -> None:
    def broken(stream: str, text: str) -> None:
        raise RuntimeError("display broke")

    result = await run_py("print('still here')", cwd=tmp_path, on_output=broken)
    assert result.returncode == 0
    assert result.stdout.text == "still here\n"


async def test_no_timeout(run_py, tmp_path: Path) -> None:
    result = await run_py("print('done')", cwd=tmp_path, timeout_s=None)
    assert result.returncode == 0 and not result.timed_out


# ---------------------------------------------------------------- signals and timeouts


async def test_killed_by_a_signal(run_py, tmp_path: Path) -> None:
    result = await run_py("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", cwd=tmp_path)
    assert result.returncode == -9
    assert result.signal == signal.SIGKILL == 9
    assert not result.timed_out


async def test_timeout_ends_child_and_grandchildren(run_py, tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    result = await run_py(SPAWNS_GRANDCHILD, str(pid_file), cwd=tmp_path, timeout_s=1.0, grace_s=1.0)
    assert result.timed_out
    assert result.signal == signal.SIGTERM  # Python's default SIGTERM handling
    assert result.returncode == -signal.SIGTERM
    child, grandchild = read_pids(pid_file.read_text())
    assert child == result.pid
    assert process_gone(child)  # reaped before run_process returned
    assert wait_gone(grandchild)


async def test_child_ignoring_sigterm_is_killed_after_grace(run_py, tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    code = IGNORES_SIGTERM + textwrap.dedent(SPAWNS_GRANDCHILD)
    result = await run_py(code, str(pid_file), cwd=tmp_path, timeout_s=1.0, grace_s=0.3)
    assert result.timed_out
    assert result.signal == signal.SIGKILL
    child, grandchild = read_pids(pid_file.read_text())
    assert wait_gone(child)
    assert wait_gone(grandchild)


async def test_child_handling_sigterm_exits_its_own_way(run_py, tmp_path: Path) -> None:
    code = """
        import signal, sys, time
        def bye(signum, frame):
            print("cleaning up", flush=True)
            sys.exit(0)
        signal.signal(signal.SIGTERM, bye)
        time.sleep(300)
    """
    result = await run_py(code, cwd=tmp_path, timeout_s=1.0, grace_s=5.0)
    assert result.timed_out
    assert result.returncode == 0 and result.signal is None
    assert result.stdout.text == "cleaning up\n"


async def test_leftover_grandchild_holding_stdout_is_killed_after_exit(run_py, tmp_path: Path) -> None:
    # The leader exits at once; its grandchild keeps the stdout pipe open. The
    # run must end now (not at the timeout) and leave nothing behind.
    pid_file = tmp_path / "pids"
    code = """
        import os, subprocess, sys
        grandchild = subprocess.Popen(["sleep", "100"])
        with open(sys.argv[1], "w") as f:
            f.write(f"{os.getpid()} {grandchild.pid}")
        print("leaving", flush=True)
        sys.exit(4)
    """
    result = await run_py(code, str(pid_file), cwd=tmp_path, timeout_s=None)
    assert result.returncode == 4
    assert not result.timed_out
    assert result.killed_leftovers
    assert not result.output_cut_short
    assert result.stdout.text == "leaving\n"
    _child, grandchild = read_pids(pid_file.read_text())
    assert wait_gone(grandchild)


async def test_leftover_grandchild_without_pipes_is_killed_too(run_py, tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    code = """
        import os, subprocess, sys
        grandchild = subprocess.Popen(
            ["sleep", "100"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        with open(sys.argv[1], "w") as f:
            f.write(f"{os.getpid()} {grandchild.pid}")
    """
    result = await run_py(code, str(pid_file), cwd=tmp_path)
    assert result.returncode == 0
    assert result.killed_leftovers
    _child, grandchild = read_pids(pid_file.read_text())
    assert wait_gone(grandchild)


# ---------------------------------------------------------------- cancellation


@pytest.mark.parametrize("ignore_sigterm", [False, True])
async def test_cancellation_kills_child_and_grandchildren(tmp_path: Path, ignore_sigterm: bool) -> None:
    pid_file = tmp_path / "pids"
    code = SPAWNS_GRANDCHILD
    if ignore_sigterm:
        code = IGNORES_SIGTERM + textwrap.dedent(code)
    task = asyncio.create_task(
        run_in_a_thread(
            [PY, "-c", textwrap.dedent(code), str(pid_file)],
            cwd=tmp_path,
            env=child_env(),
            timeout_s=None,
            grace_s=0.3,
        )
    )
    child, grandchild = read_pids(await wait_for_file(pid_file))
    assert not process_gone(child) and not process_gone(grandchild)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, HANG_GUARD_S)
    # The clean-up ran before the cancellation reached us: the leader is
    # already reaped (not even a zombie of ours), with no waiting here.
    assert process_gone(child)
    assert wait_gone(grandchild)


async def test_cancellation_sends_sigterm_first(tmp_path: Path) -> None:
    ready, termed = tmp_path / "ready", tmp_path / "termed"
    code = """
        import pathlib, signal, sys, time
        def bye(signum, frame):
            pathlib.Path(sys.argv[2]).write_text("SIGTERM")
            sys.exit(0)
        signal.signal(signal.SIGTERM, bye)
        pathlib.Path(sys.argv[1]).write_text("ready")
        time.sleep(300)
    """
    task = asyncio.create_task(
        run_in_a_thread(
            [PY, "-c", textwrap.dedent(code), str(ready), str(termed)],
            cwd=tmp_path,
            env=child_env(),
            timeout_s=None,
            grace_s=10.0,
        )
    )
    await wait_for_file(ready)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, HANG_GUARD_S)
    assert termed.read_text() == "SIGTERM"


async def test_cancelled_twice_still_cleans_up(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    code = IGNORES_SIGTERM + textwrap.dedent(SPAWNS_GRANDCHILD)
    task = asyncio.create_task(
        run_in_a_thread([PY, "-c", code, str(pid_file)], cwd=tmp_path, env=child_env(), timeout_s=None, grace_s=0.5)
    )
    child, grandchild = read_pids(await wait_for_file(pid_file))
    task.cancel()
    await asyncio.sleep(0.1)  # inside the grace period
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, HANG_GUARD_S)
    assert process_gone(child)
    assert wait_gone(grandchild)


def test_the_blocking_core_is_cancelled_from_another_thread(tmp_path: Path) -> None:
    """The async face's cancellation, seen from the core: the wake-up pipe
    ends the wait at once, the group is ended, the leader reaped, then
    ProcessCancelled."""
    pid_file = tmp_path / "pids"
    cancel = CancelSignal()
    timer = threading.Thread(target=lambda: (asyncio.run(wait_for_file(pid_file)), cancel.set()))
    timer.start()
    try:
        with pytest.raises(ProcessCancelled):
            run_process(
                [PY, "-c", textwrap.dedent(SPAWNS_GRANDCHILD), str(pid_file)],
                cwd=tmp_path,
                env=child_env(),
                timeout_s=None,
                grace_s=0.3,
                cancel=cancel,
            )
    finally:
        timer.join()
        cancel.close()
    child, grandchild = read_pids(pid_file.read_text())
    assert process_gone(child)
    assert wait_gone(grandchild)


async def test_live_output_of_the_async_face_comes_from_the_runs_own_thread(tmp_path: Path) -> None:
    """Not queued on the event loop: a flood arrives faster than a loop takes
    callbacks, and the queue grew by gigabytes with every key behind it."""
    threads: set[int] = set()
    seen: list[str] = []

    def on_output(stream: str, text: str) -> None:
        threads.add(threading.get_ident())
        seen.append(text)

    result = await run_in_a_thread(
        [PY, "-c", "for i in range(20000): print(i)"], cwd=tmp_path, env=child_env(), timeout_s=30, on_output=on_output
    )
    assert "".join(seen) == result.stdout.text == "".join(f"{i}\n" for i in range(20000))
    assert threads and threading.get_ident() not in threads


async def test_an_escaped_process_holding_the_pipes_is_waited_for_apart(
    run_py, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A grandchild in its own session keeps stdout open after the runner
    exits: the run ends after the drain bound, reports the wait apart from
    the runner's own duration, and says the output was cut short."""
    monkeypatch.setattr(process, "DRAIN_AFTER_EXIT_S", 0.5)  # the bound is waited in full: keep it short
    pid_file = tmp_path / "pid"
    code = """
        import subprocess, sys
        escaped = subprocess.Popen(["sleep", "60"], start_new_session=True)
        open(sys.argv[1], "w").write(str(escaped.pid))
        print("bye", flush=True)
    """
    try:
        started = time.perf_counter()
        result = await run_py(code, str(pid_file), cwd=tmp_path, timeout_s=None)
        took = time.perf_counter() - started
        assert result.returncode == 0 and result.stdout.text == "bye\n"
        assert result.output_cut_short
        assert result.pipe_wait_s >= 0.5
        # The runner's own time, without the wait: the two add up to no more than the whole call
        # (a duration that counted the wait would count it twice).
        assert result.duration_s + result.pipe_wait_s <= took
    finally:
        os.kill(int(pid_file.read_text()), signal.SIGKILL)


# ---------------------------------------------------------------- could not start


async def test_missing_executable(drive, tmp_path: Path) -> None:
    result = await drive(["definitely-not-a-command-xyz"], cwd=tmp_path, env=child_env(), timeout_s=5)
    assert result.start_error == "definitely-not-a-command-xyz: No such file or directory"
    assert result.returncode is None and result.signal is None and result.pid is None
    assert not result.timed_out
    assert result.stdout.text == "" and result.stderr.text == ""


async def test_missing_cwd(drive, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-folder"
    result = await drive([PY, "-c", "pass"], cwd=missing, env=child_env(), timeout_s=5)
    assert result.start_error is not None
    assert "No such file or directory" in result.start_error
    assert result.returncode is None


async def test_file_that_is_not_executable(drive, tmp_path: Path) -> None:
    script = tmp_path / "script.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o644)
    result = await drive([str(script)], cwd=tmp_path, env=child_env(), timeout_s=5)
    assert result.start_error == f"{script}: Permission denied"


async def test_empty_command(drive, tmp_path: Path) -> None:
    result = await drive([], cwd=tmp_path, env=child_env(), timeout_s=5)
    assert result.start_error == "empty command"


def test_a_child_started_on_cpus_is_bound_and_the_caller_is_not():
    # The task's cpus bind the run's process tree; the thread that starts it
    # (the tool's own, which then reads the run's output) is left as it was.
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        pytest.skip("this machine has one CPU")
    chosen = (allowed[-1],)
    child = process.popen(
        [
            sys.executable,
            "-c",
            "import os, subprocess, sys; print(sorted(os.sched_getaffinity(0))); sys.stdout.flush(); "
            "subprocess.run([sys.executable, '-c', 'import os; print(sorted(os.sched_getaffinity(0)))'])",
        ],
        cpus=chosen,
        stdout=subprocess.PIPE,
        text=True,
    )
    out, _ = child.communicate(timeout=30)
    assert out.split("\n")[:2] == [str(list(chosen))] * 2  # the child, and what it started
    assert sorted(os.sched_getaffinity(0)) == allowed


async def test_a_run_cancelled_before_its_init_started_the_runner_ends_at_once(tmp_path: Path) -> None:
    """A save in the first milliseconds of a run (a save storm) cancels it while the view's init
    is still setting up: the SIGTERM found no runner, and the runner the init started a moment
    later ran the verifier for the whole grace period before SIGKILL, the next run waiting for
    it. The runner that comes after the signal gets it too: the verifier never runs."""
    started, verified = tmp_path / "init-started", tmp_path / "verified"
    runner = f"import pathlib, time; time.sleep(1); pathlib.Path({str(verified)!r}).write_text(''); time.sleep(300)"
    # The shape of the view: a leader (bwrap) whose child is an init in a group of its own, which
    # starts the runner in its group only after a while (the namespace being set up).
    init = f"""
        import os, pathlib, subprocess, sys, time
        os.setsid()
        pathlib.Path({str(started)!r}).write_text("")
        time.sleep(0.5)
        sys.exit(subprocess.call([sys.executable, "-c", {runner!r}]))
    """
    leader = f"import subprocess, sys; sys.exit(subprocess.call([sys.executable, '-c', {textwrap.dedent(init)!r}]))"
    task = asyncio.create_task(
        run_in_a_thread(
            [PY, "-c", leader], cwd=tmp_path, env=child_env(), timeout_s=None, grace_s=10.0, init_lists_strays=True
        )
    )
    await wait_for_file(started)
    began = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, HANG_GUARD_S)
    assert time.monotonic() - began < 5  # not the 10 s grace period
    assert not verified.exists()


async def test_the_exact_count_of_memory_files_is_rationed_and_never_kills_below_the_limit(
    run_py, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A later review, as an ordinary user (no cgroup): an 80 MB memory file
    mapped 30,000 times put the total over memory_mb counted whole but not
    counted exactly, and the exact count's walk of every mapping (340 ms) ran
    at every check: the tool used most of a CPU. Here the walk is made slow
    (0.1 s); the run is within the limit, so it is never killed, and the
    walk takes a small part of its time."""
    from verifier_tui.engine import procfs

    walk, walks = procfs._mapped_bytes, []

    def slow(pids: set[int], inodes: set[int]) -> dict[int, int]:
        walks.append(1)
        time.sleep(0.1)
        return walk(pids, inodes)

    monkeypatch.setattr(procfs, "_mapped_bytes", slow)
    started = time.perf_counter()
    result = await run_py(
        """\
        import mmap, os, time
        held = os.memfd_create("big")
        for _ in range(80):
            os.write(held, b"x" * (1 << 20))
        mapped = mmap.mmap(held, 80 << 20)
        sum(mapped[i] for i in range(0, 80 << 20, 4096))  # every page mapped: counted once, exactly
        time.sleep(3)
        """,
        cwd=tmp_path,
        memory_limit=140 << 20,
    )
    wall = time.perf_counter() - started
    assert result.returncode == 0 and not result.oom_killed, (result.oom_killed, result.stderr)
    assert walks and len(walks) * 0.1 < wall / 4, (len(walks), wall)
