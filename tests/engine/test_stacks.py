"""A run that times out says where the verifier was stuck: the
engine sends the runner --stack-signal's signal before it ends the run, cuts
the dump out of stderr and names the innermost frame in the task's own files.
Real runners in real subprocesses, in each sandbox."""

from __future__ import annotations

import pytest

from tests.helpers.tasks import PY, make_task, other_python, python_or_skip, stuck_task, write
from verifier_tui.engine.model import Outcome
from verifier_tui.engine.session import Options, Session


def run_once(task_dir, python=PY, **options):
    with Session(task_dir, Options(python=python, timeout=1, **options)) as session:
        return session.run()


def test_a_verifier_asleep_in_a_helper_is_stuck_at_the_helpers_line(tmp_path, sandbox):
    task_dir = stuck_task(tmp_path / "t")
    result = run_once(task_dir)
    assert result.outcome is Outcome.TIMED_OUT
    stuck = result.stack.stuck_at
    assert (stuck.path, stuck.line, stuck.function) == (str(task_dir / "tests" / "helpers.py"), 6, "wait_for_file")
    # The dump names the user's files, and the chain of calls that got there.
    assert f'File "{task_dir / "tests" / "verifier.py"}", line 7 in verify' in result.stack.text
    assert [f.function for f in result.stack.frames[:2]] == ["wait_for_file", "verify"]
    # stderr is what the verifier wrote, as the sandbox would record it: the dump is not in it.
    assert result.stderr.text == "looking for done.txt\n"
    assert result.to_json()["stuck_at"] == {
        "path": str(task_dir / "tests" / "helpers.py"),
        "line": 6,
        "function": "wait_for_file",
    }


def test_a_busy_loop_is_stuck_at_its_line(tmp_path, sandbox):
    task_dir = make_task(
        tmp_path / "t",
        """\
        def verify(workspace):
            count = 0
            while True:
                count += 1
    """,
    )
    result = run_once(task_dir)
    stuck = result.stack.stuck_at
    assert stuck.path == str(task_dir / "tests" / "verifier.py") and stuck.function == "verify"
    assert stuck.line in (3, 4)
    assert result.stderr.text == ""


def test_a_verifier_whose_import_hangs_is_stuck_in_its_top_level_code(tmp_path, sandbox):
    task_dir = make_task(
        tmp_path / "t",
        """\
        import time

        time.sleep(300)


        def verify(workspace):
            return 1.0
    """,
    )
    result = run_once(task_dir)
    stuck = result.stack.stuck_at
    assert (stuck.path, stuck.line, stuck.function) == (str(task_dir / "tests" / "verifier.py"), 3, "<module>")


def test_a_thread_of_the_verifiers_own_does_not_hide_where_verify_is(tmp_path):
    task_dir = make_task(
        tmp_path / "t",
        """\
        import threading
        import time


        def spin():
            while True:
                time.sleep(0.1)


        def verify(workspace):
            threading.Thread(target=spin, daemon=True).start()
            time.sleep(300)
    """,
    )
    result = run_once(task_dir)
    assert (result.stack.stuck_at.line, result.stack.stuck_at.function) == (12, "verify")
    assert result.stack.text.count("(most recent call first)") == 2  # both threads are in the dump


@pytest.mark.parametrize("threads", [0, 1], ids=["alone", "beside-a-thread"])
def test_a_dump_after_a_progress_bar_left_unfinished_says_where_it_was_stuck(tmp_path, sandbox, threads):
    """verify drew a progress bar (`\\r3/10 checking`, no newline), then hung: the dump's first header went
    on from the bar, `3/10 checkingCurrent thread 0x... (most recent call first):`, so no dump was found:
    the run said `the runner wrote no stack within 200 ms of SIGUSR1 (does the verifier handle that
    signal?)`, and the dump stayed in stderr; beside a thread of its own, that thread's block stayed there."""
    task_dir = make_task(
        tmp_path / "t",
        f"""\
        import sys
        import threading
        import time


        def verify(workspace):
            for _ in range({threads}):
                threading.Thread(target=time.sleep, args=(300,), daemon=True).start()
            for done in range(1, 4):
                sys.stderr.write(f"\\r{{done}}/10 checking")
                sys.stderr.flush()
            time.sleep(300)
    """,
    )
    result = run_once(task_dir)
    assert result.outcome is Outcome.TIMED_OUT and result.stack.unavailable is None, result.stack.unavailable
    stuck = result.stack.stuck_at
    assert (stuck.path, stuck.line, stuck.function) == (str(task_dir / "tests" / "verifier.py"), 12, "verify")
    assert result.stack.text.count("(most recent call first)") == 1 + threads, result.stack.text
    # stderr is what the verifier wrote, its unfinished line as it left it.
    assert result.stderr.text == "\r1/10 checking\r2/10 checking\r3/10 checking", result.stderr.text


# An async verifier waiting at an await: its frames are on no thread's stack
# (the main thread is in the event loop's select), so the runner lists the
# waiting tasks after faulthandler's threads.
ASYNC_HELPER = """\
    import asyncio


    async def poll(path):
        while not path.exists():
            await asyncio.sleep(0.2)
"""

ASYNC_VERIFIER = """\
    import sys
    from helpers import poll


    async def verify(workspace):
        print("polling for done.txt", file=sys.stderr, flush=True)
        await poll(workspace / "done.txt")
        return 1.0
"""


@pytest.mark.parametrize(
    "python",
    [
        pytest.param(PY, id="current"),
        pytest.param("3.8", id="py3.8", marks=pytest.mark.skipif(other_python("3.8") is None, reason="no 3.8")),
    ],
)
def test_an_async_verifier_waiting_at_an_await_is_stuck_at_that_await(tmp_path, sandbox, python):
    python = python if python == PY else python_or_skip(python)
    task_dir = make_task(tmp_path / "t", ASYNC_VERIFIER, files={"helpers.py": ASYNC_HELPER})
    result = run_once(task_dir, python=python)
    assert result.outcome is Outcome.TIMED_OUT
    helpers, verifier = str(task_dir / "tests" / "helpers.py"), str(task_dir / "tests" / "verifier.py")
    stuck = result.stack.stuck_at
    assert (stuck.path, stuck.line, stuck.function) == (helpers, 6, "poll")
    # The chain of awaits, innermost first: asyncio's sleep, the helper, verify.
    assert [(f.path, f.line, f.function) for f in result.stack.frames[1:3]] == [
        (helpers, 6, "poll"),
        (verifier, 7, "verify"),
    ]
    assert result.stack.frames[0].function == "sleep"
    # The main thread is in the dump too, and stderr is only what the verifier wrote.
    assert "Current thread" in result.stack.text and "Task 'Task-1'" in result.stack.text
    assert result.stderr.text == "polling for done.txt\n"


def test_a_plain_verify_running_an_event_loop_is_stuck_where_its_coroutine_waits(tmp_path):
    """``def verify`` calling ``asyncio.run``: the main thread is in verify
    but idle in the loop; the place is the coroutine's await, one task down."""
    task_dir = make_task(tmp_path / "t", files={"helpers.py": ASYNC_HELPER})
    write(
        task_dir / "tests" / "verifier.py",
        """\
        import asyncio
        from helpers import poll


        def verify(workspace):
            asyncio.run(poll(workspace / "done.txt"))
            return 1.0
    """,
    )
    result = run_once(task_dir)
    stuck = result.stack.stuck_at
    assert (stuck.path, stuck.line, stuck.function) == (str(task_dir / "tests" / "helpers.py"), 6, "poll")
    assert 'verifier.py", line 6 in verify' in result.stack.text  # the main thread, dumped as it was


def test_an_async_verifier_stuck_in_a_blocking_call_is_listed_once(tmp_path):
    """A coroutine that blocks (time.sleep in an async def) is running, on the
    main thread's stack: faulthandler has it, and no task is listed again."""
    task_dir = make_task(
        tmp_path / "t",
        """\
        import time


        async def verify(workspace):
            time.sleep(300)
    """,
    )
    result = run_once(task_dir)
    stuck = result.stack.stuck_at
    assert (stuck.line, stuck.function) == (5, "verify")
    assert "Task " not in result.stack.text and result.stderr.text == ""


def test_a_verifier_gathering_tasks_is_stuck_where_verify_awaits_them(tmp_path):
    """Several waiting tasks: the one the runner awaits verify in names the
    place, whichever order the event loop keeps them in; every task is listed."""
    task_dir = make_task(
        tmp_path / "t",
        """\
        import asyncio


        async def wait_forever(name):
            await asyncio.Event().wait()


        async def verify(workspace):
            await asyncio.gather(wait_forever("a"), wait_forever("b"))
    """,
    )
    result = run_once(task_dir)
    stuck = result.stack.stuck_at
    assert (stuck.line, stuck.function) == (9, "verify")
    assert result.stack.text.count("Task '") == 3
    assert result.stack.text.count("line 5 in wait_forever") == 2


def test_a_run_that_does_not_time_out_has_no_stack(tmp_path):
    result = run_once(make_task(tmp_path / "t"))
    assert result.outcome is Outcome.REWARD_WRITTEN and result.stack is None
    data = result.to_json()
    assert (data["stuck_at"], data["stack"], data["stack_unavailable"]) == (None, None, None)


def test_the_tasks_own_runner_without_the_flag_says_the_stack_is_unavailable(tmp_path):
    task_dir = make_task(tmp_path / "t")
    write(task_dir / "tests" / ".ng" / "run_verifier.py", "import time\ntime.sleep(300)\n")
    result = run_once(task_dir, runner="task")
    assert result.outcome is Outcome.TIMED_OUT
    assert result.stack.stuck_at is None and result.stack.text == ""
    assert "has no --stack-signal" in result.stack.unavailable
    # Said once: the line read "where it was stuck is unknown: ... so where it was stuck is unknown (...)".
    from verifier_tui.words.run import stuck_line

    said = str(stuck_line(result.stack, str))
    assert said.startswith(
        "where it was stuck is unknown: the task's own runner (run_verifier.py) has no --stack-signal"
    ), said
    assert said.count("unknown") == 1, said


def test_a_verifier_that_takes_the_signal_over_says_no_stack_came(tmp_path):
    task_dir = make_task(
        tmp_path / "t",
        """\
        import signal
        import time


        def verify(workspace):
            signal.signal(signal.SIGUSR1, lambda *_: None)
            time.sleep(300)
    """,
    )
    result = run_once(task_dir)
    assert result.stack.stuck_at is None
    assert "wrote no stack" in result.stack.unavailable


def test_a_verifier_that_ignores_the_signal_is_said_to_ignore_it(tmp_path, sandbox):
    """A hung verifier that set SIGUSR1 to SIG_IGN is said to ignore it, not
    to be "not listening yet (still starting)" after seconds of running."""
    task_dir = make_task(
        tmp_path / "t",
        """\
        import signal, time

        def verify(workspace):
            signal.signal(signal.SIGUSR1, signal.SIG_IGN)
            time.sleep(300)
    """,
    )
    result = run_once(task_dir)
    assert result.stack.stuck_at is None
    assert result.stack.unavailable == (
        "the verifier set SIGUSR1 to be ignored, so the runner could not be asked "
        "for its stack (its --stack-signal needs that signal)"
    )


def forging_a_dump(root, frame_path):
    """A task whose verifier hangs and, asked for its stack, writes a dump of
    its own whose one frame names ``frame_path`` (the run writes its dump)."""
    return make_task(
        root,
        f"""
        import signal, sys, time

        def fake(signum, frame):
            sys.stderr.write('Current thread 0x00007f0000000001 (most recent call first):\\n'
                             '  File "{frame_path}", line 2 in verify\\n\\n')

        def verify(workspace):
            signal.signal(signal.SIGUSR1, fake)
            time.sleep(100)
        """,
    )


def test_a_forged_dump_naming_a_file_outside_the_task_through_dots_is_not_the_verifiers(tmp_path):
    """The run writes its stack dump: a frame ``/tests/../../x`` is not the
    task's own, however it starts, so nothing points the editor at it."""
    secret = tmp_path / "credentials"
    secret.write_text("a\nSECRET\n")
    ups = "/..".join([""] * 12)
    task_dir = forging_a_dump(tmp_path / "t", f"/tests{ups}{secret}")
    result = run_once(task_dir)
    assert result.outcome is Outcome.TIMED_OUT
    assert result.stack is not None and result.stack.stuck_at is None


def test_a_forged_dump_naming_a_tests_file_that_links_out_of_the_task_is_not_the_verifiers(tmp_path):
    """The task's tests/helper.py is a link to a file outside the task (the
    staged copy leaves it out), and the run's dump names it: it is no file of
    the task's own, so the run is not said to be stuck there (nor e sent to it)."""
    from verifier_tui.commands.report import stuck_at
    from verifier_tui.engine.failing import failing_location

    secret = tmp_path / "bashrc"
    secret.write_text("a\nSECRET\n")
    task_dir = forging_a_dump(tmp_path / "t", "/tests/helper.py")
    (task_dir / "tests" / "helper.py").symlink_to(secret)
    result = run_once(task_dir)
    assert result.outcome is Outcome.TIMED_OUT
    assert result.stack is not None and "helper.py" in result.stack.text
    assert result.stack.stuck_at is None
    said = stuck_at(result) or ""
    assert "stuck at" not in said, said
    # tests/helper.py is in the task's tests/: "outside the verifier's files" sent the user looking elsewhere.
    assert "outside" not in said and "tests/helper.py:2" in said and "no file of the verifier's own" in said, said
    # e on it opens nothing and says why (as for a traceback's frame): it silently opened verify.
    refused = failing_location(result, [])  # the dump's frame alone: stderr holds no traceback
    assert refused.location is None and refused.refused == (task_dir / "tests" / "helper.py", 2), refused
