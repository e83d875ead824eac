"""Containment: nothing a run starts outlives it, and the user's files are
never written, in each sandbox this machine has (``sandbox``
fixture: the namespace where there is one, the copy everywhere).

Real runs of the real runner; processes are found by a word in their command
line (a pid read inside a PID namespace means nothing outside it).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time

import pytest

from tests.helpers.commands import no_traceback, run_tool
from tests.helpers.processes import processes_with, wait_none_with
from tests.helpers.tasks import PY, make_task
from verifier_tui.engine.model import Outcome
from verifier_tui.engine.sandbox import isolation
from verifier_tui.engine.session import Options, Session

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes through /proc")

ESCAPES = {
    # a child in a process group of its own
    "process_group=0": (
        "subprocess.Popen(SLEEPER, process_group=0, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)"
    ),
    # the daemon's double fork: a new session, the middle process gone. The
    # verifier returns once the sleeper has exec'd (the pipe's write end is
    # close-on-exec): a stray caught between fork and exec still carries the
    # runner's command line, not the token.
    "double fork + setsid": (
        "ready, done = os.pipe()\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        os.setsid()\n"
        "        if os.fork() == 0:\n"
        "            os.execv(SLEEPER[0], SLEEPER)\n"
        "        os._exit(0)\n"
        "    os.close(done)\n"
        "    os.waitpid(pid, 0)\n"
        "    os.read(ready, 1)"
    ),
    # named "x) Z<newline>" (prctl PR_SET_NAME): the first line of its /proc/PID/stat, "N (x) Z",
    # reads as a zombie's; its code comes on stdin (its command line stays short enough to show
    # the token), and the verifier returns once the name is set
    "a name read as a zombie's": (
        'renamer = \'import ctypes, time; ctypes.CDLL(None).prctl(15, b"x) Z\\\\n", 0, 0, 0); print(flush=True); '
        "time.sleep(300)'\n"
        "    named = subprocess.Popen([SLEEPER[0], '-', SLEEPER[3]], stdin=subprocess.PIPE, stdout=subprocess.PIPE)\n"
        "    named.stdin.write(renamer.encode())\n"
        "    named.stdin.close()\n"
        "    named.stdout.readline()"
    ),
}


def escaping_task(tmp_path, token: str, escape: str, *, then: str = "return 1.0"):
    return make_task(
        tmp_path / "t",
        f"""\
import os, subprocess, sys, time

SLEEPER = [sys.executable, "-c", "import time; time.sleep(300)", {token!r}]

def verify(workspace):
    {ESCAPES[escape]}
    {then}
""",
    )


@pytest.mark.parametrize("escape", list(ESCAPES))
def test_an_escaped_process_is_ended_and_reported(tmp_path, sandbox, escape):
    token = f"vtui-escape-{os.getpid()}-{time.monotonic_ns()}"
    task_dir = escaping_task(tmp_path, token, escape)
    with Session(task_dir, Options(python=PY)) as session:
        result = session.run()
    assert result.outcome is Outcome.REWARD_WRITTEN, result.stderr.text
    assert wait_none_with(token) == [], "the escaped process outlived the run"
    assert len(result.strays) == 1 and token in result.strays[0]
    assert result.to_json()["strays"] == result.strays
    assert any("left 1 process(es) running" in n for n in result.notices)


def test_an_escaped_process_is_ended_when_the_run_times_out(tmp_path, sandbox):
    token = f"vtui-timeout-{os.getpid()}-{time.monotonic_ns()}"
    task_dir = escaping_task(tmp_path, token, "double fork + setsid", then="time.sleep(300)")
    with Session(task_dir, Options(python=PY, timeout=1)) as session:
        result = session.run()
    assert result.outcome is Outcome.TIMED_OUT
    assert wait_none_with(token) == []
    assert any(token in command for command in result.strays)


def test_an_escaped_process_is_listed_when_the_timed_out_verifier_ignores_sigterm(tmp_path, sandbox):
    """The runner must be SIGKILLed: with namespaces, the rest of the group goes first and the
    namespace's init lists what was still running before it ends; in the copy, the mark finds it."""
    token = f"vtui-ignores-{os.getpid()}-{time.monotonic_ns()}"
    then = "import signal\n    signal.signal(signal.SIGTERM, signal.SIG_IGN)\n    time.sleep(300)"
    task_dir = escaping_task(tmp_path, token, "double fork + setsid", then=then)
    with Session(task_dir, Options(python=PY, timeout=1)) as session:
        result = session.run()
    assert result.outcome is Outcome.TIMED_OUT
    assert wait_none_with(token) == []
    assert any(token in command for command in result.strays), result.strays


FORK_BOMB = """\
import os, shutil, subprocess, sys

SLEEP = shutil.which("sleep")

def verify(workspace):
    for i in range(200):
        started, child_end = os.pipe()  # closed in the child by its exec (not inheritable)
        if os.fork() == 0:
            try:
                if i % 2:
                    os.setsid()  # half of them leave the runner's process group
                os.execv(SLEEP, ["sleep", {seconds!r}])
            finally:
                os._exit(1)
        os.close(child_end)
        os.read(started, 1)  # until the child is sleep, not a copy of the runner
        os.close(started)
    subprocess.Popen([sys.executable, "-c", "import time\\nwhile True: time.sleep(1)", {token!r}])
    return 1.0
"""


def test_a_fork_bomb_is_counted_the_same_in_each_sandbox(tmp_path, env, sandbox):
    """200 processes alike and one more outlive the runner: each is one stray, in the namespace
    (its init lists them) as in the copy (its mark finds them), in --json and in the note that
    the text output prints; the -c command line, which holds a newline, shows on one line."""
    token = f"vtui-bomb-{os.getpid()}-{time.monotonic_ns()}"
    seconds = f"3000.{time.monotonic_ns() % 10**6:06d}"  # sleep's one argument, unique to this test
    task_dir = make_task(tmp_path / "t", FORK_BOMB.format(seconds=seconds, token=token))
    run_env = dict(env, VERIFIER_TUI_SANDBOX=sandbox)
    try:
        done = run_tool(run_env, "run", task_dir, "--python", PY, "--json")
        text = run_tool(run_env, "run", task_dir, "--python", PY)
    finally:
        assert wait_none_with(seconds) == [] and wait_none_with(token) == [], "a process outlived the run"
    data = json.loads(done.stdout)
    assert data["outcome"] == "reward_written" and data["sandbox"] == sandbox, done.stderr
    python_line = f"{PY} -c $'import time\\nwhile True: time.sleep(1)' {token}"
    assert sorted(data["strays"]) == sorted([f"sleep {seconds}"] * 200 + [python_line])
    said = f"the run left 201 process(es) running, ended when it was over: sleep {seconds} (×200); {python_line}"
    assert said in data["notices"]
    assert text.returncode == 0 and f"note: {said}\n" in text.stdout, text.stdout


MANY_STRAYS = """\
import os, shutil, time

IMPORTED = time.monotonic()  # about when the run's timeout began
SLEEP = shutil.which("sleep")

def verify(workspace):
    for _ in range({count}):
        os.posix_spawn(SLEEP, ["sleep", {seconds!r}], {{}}, setsid={setsid})
    time.sleep(max(0.0, IMPORTED + {returns_at} - time.monotonic()))
    return 1.0
"""


# Instead of MANY_STRAYS' return at a fixed time: once every stray is started, however long that took,
# BEFORE_S s before the timeout of TIMEOUT_S s ends. The view's init (PID 1) was started about when the
# timeout began (the tool starts bwrap, which forks it): its start time, in clock ticks since boot, says when.
TILL_THE_TIMEOUT = """\
    with open("/proc/1/stat") as stat:
        began = int(stat.read().rsplit(")", 1)[1].split()[19]) / os.sysconf("SC_CLK_TCK")
    time.sleep(max(0.0, began + TIMEOUT_S - BEFORE_S - time.clock_gettime(time.CLOCK_BOOTTIME)))
"""


def test_thousands_of_strays_listed_after_the_runner_exited_do_not_make_it_time_out(tmp_path, env, namespace):
    """2,000 sleeping children outlive a runner that wrote its reward and exited before its
    timeout: the view's init listed each with a program of its own, past the timeout, and
    the run that had ended in time was said to have timed out. Harbor's timeout covers
    test.sh alone (``docker exec`` returns when it exits): the verdict is the reward, and
    the strays are said (listed up to isolation.STRAYS_MOST, counted all). The runner
    returns 1 s before its timeout, once all are started (1.5 s on an idle machine; past a
    fixed return at 3 s of 8 on one loaded 10 to 20 deep); listing them takes longer (a
    listing that does outlast the grace past the timeout is made so below, by a slow ``od``)."""
    seconds = f"3000.{time.monotonic_ns() % 10**6:06d}"
    verifier = MANY_STRAYS.format(count=2000, seconds=seconds, returns_at=0, setsid=False)
    fixed = "    time.sleep(max(0.0, IMPORTED + 0 - time.monotonic()))\n"
    assert fixed in verifier
    verifier = verifier.replace(fixed, TILL_THE_TIMEOUT.replace("TIMEOUT_S", "30").replace("BEFORE_S", "1"))
    task_dir = make_task(tmp_path / "t", verifier, timeout=30)
    try:
        done = run_tool(dict(env, VERIFIER_TUI_SANDBOX="namespace"), "run", task_dir, "--python", PY, "--json")
    finally:
        assert wait_none_with(seconds) == [], "a process outlived the run"
    data = json.loads(done.stdout)
    assert data["outcome"] == "reward_written", data["outcome"]
    assert data["rewards"] == {"reward": 1.0}
    assert 0 < len(data["strays"]) <= isolation.STRAYS_MOST
    notice = next(n for n in data["notices"] if "process(es) running" in n)
    # every one counted; or, where this machine was too slow to list them within the grace, said so
    assert notice.startswith(("the run left 2000 process(es) running", "the run left at least ")), notice


def run_outliving_nothing(task_dir, seconds: str):
    """One run of the task; every process it started (one sleeping ``seconds``) gone after it."""
    try:
        with Session(task_dir, Options(python=PY)) as session:
            return session.run()
    finally:
        assert wait_none_with(seconds) == [], "a process outlived the run"


def test_strays_past_those_listed_are_said_alike_in_each_sandbox(tmp_path, sandbox, monkeypatch):
    """3,000 sleeping strays alike: the copy sandbox listed all 3,000 ("sleep
    3001.5 (×3000)", 3,000 --json entries), the view its first 1,000 ("sleep
    3001.5 (×1000); +2000 more (the first 1000 listed)", read as 2,000 other
    command lines). Both list isolation.STRAYS_MOST (here 20) and count the
    rest, in the same words, which say the rest were not listed; --json
    says how many were not (``strays_not_listed``) and whether the listing
    was cut short (``strays_cut_short``)."""
    monkeypatch.setattr(isolation, "STRAYS_MOST", 20)
    seconds = f"3000.{time.monotonic_ns() % 10**6:06d}"
    verifier = MANY_STRAYS.format(count=50, seconds=seconds, returns_at=0, setsid=False)
    # with the run's environment, which holds the copy sandbox's mark
    verifier = verifier.replace("{}, setsid", "dict(os.environ), setsid")
    task_dir = make_task(tmp_path / "t", verifier, timeout=60)
    result = run_outliving_nothing(task_dir, seconds)
    assert result.outcome is Outcome.REWARD_WRITTEN, (result.outcome, result.stderr.text)
    assert result.strays == [f"sleep {seconds}"] * 20
    said = (
        f"the run left 50 process(es) running, ended when it was over: sleep {seconds} (×20); "
        "30 more process(es) not listed (only the first 20 are)"
    )
    assert said in result.notices, result.notices
    data = result.to_json()
    assert (len(data["strays"]), data["strays_not_listed"], data["strays_cut_short"]) == (20, 30, False)


def test_strays_of_other_command_lines_are_said_apart_from_those_not_listed():
    """Four kinds of command line among the 1,000 listed, 2,000 more not: the
    note said "a (×400); b (×300); c (×200); +100 more; 2000 more
    process(es) not listed", the bare "+100 more" read as more of c, or as
    part of the 2,000."""
    from verifier_tui.engine.sandbox.strays import strays_notice

    commands = ["a"] * 400 + ["b"] * 300 + ["c"] * 200 + ["d"] * 60 + ["e"] * 40
    said = strays_notice(commands, more=2000)
    assert said.endswith(
        "a (×400); b (×300); c (×200); +100 more with other command lines; "
        "2000 more process(es) not listed (only the first 1000 are)"
    ), said
    assert strays_notice(["a", "a", "b", "c", "d"]).endswith("a (×2); b; c; +1 more with another command line")


SLOW_LISTER = """\
#!/bin/sh
sleep 0.1
exec {od} "$@"
"""


def slowly_listed_run(
    tmp_path,
    monkeypatch,
    *,
    returns_at: float,
    setsid: bool,
    timeout: float = 1,
    child: str = "",
    returns: str = "1.0",
):
    """A run (timeout 1 s) that leaves 40 sleeping strays, listed by the view's
    init at 0.1 s each (its ``od`` made slow, from the task's tests: /tests/slow_od).
    ``child``: the body of one more child the verifier forks before it returns
    ``returns``."""
    import shutil
    import stat

    seconds = f"3000.{time.monotonic_ns() % 10**6:06d}"
    verifier = MANY_STRAYS.format(count=40, seconds=seconds, returns_at=returns_at, setsid=setsid)
    if child:
        # The child is a fork of the runner: an exception it let out (the copy sandbox has no /logs/verifier)
        # would run the runner's own failure path in it, and clear the reward the parent wrote.
        body = child.replace("\n", "\n    ")  # its lines go one block deeper, into the try
        child = f"    if os.fork() == 0:\n        try:\n            {body}\n        finally:\n            os._exit(0)\n"
    verifier = verifier.replace("    return 1.0\n", f"{child}    return {returns}\n")
    task_dir = make_task(tmp_path / "t", verifier, timeout=timeout)
    lister = task_dir / "tests" / "slow_od"
    lister.write_text(SLOW_LISTER.format(od=shutil.which("od")))
    lister.chmod(lister.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    monkeypatch.setitem(isolation._tools, "od", f"{isolation.TESTS}/slow_od")
    return run_outliving_nothing(task_dir, seconds)


def test_a_listing_of_strays_cut_short_is_said_at_least(tmp_path, namespace, monkeypatch):
    """The strays' listing outlasts the timeout and the grace after it: it is
    cut short, the verdict is still the reward of the runner that exited in
    time (its exit status as the init said it), and the note says how many
    were found at least."""
    result = slowly_listed_run(tmp_path, monkeypatch, returns_at=0, setsid=False)
    assert result.outcome is Outcome.REWARD_WRITTEN, (result.outcome, result.stderr.text)
    assert result.exit_code == 0
    assert 0 < len(result.strays) < 40
    said = f"the run left at least {len(result.strays)} process(es) running"
    assert any(n.startswith(said) for n in result.notices), result.notices


LATE_REWARD = (
    'time.sleep(max(0.0, IMPORTED + {at} - time.monotonic())); open("/logs/verifier/reward.txt", "w").write("0.77")'
)


def test_a_stray_cannot_write_the_reward_after_the_runner_exited(tmp_path, sandbox, monkeypatch):
    """A child of the verifier wrote 0.77 to the reward file 1 s after the runner had
    written 1.0 and exited, while the view's init listed the strays (40 of them, listed
    slowly here; 1,500 take seconds): the namespace's verdict was 0.77, where the copy sandbox ends the strays
    when the runner exits and Harbor reads the reward as soon as ``docker exec``
    returns (1.0). The init now stops every stray before it lists them."""
    child = LATE_REWARD.format(at=1.0)
    result = slowly_listed_run(tmp_path, monkeypatch, returns_at=0, setsid=False, timeout=10, child=child)
    assert result.outcome is Outcome.REWARD_WRITTEN, (result.outcome, result.stderr.text)
    assert (result.exit_code, result.verdict.rewards) == (0, {"reward": 1.0}), result.verdict


def test_a_stray_cannot_write_the_reward_in_the_listings_grace_past_the_timeout(tmp_path, sandbox, monkeypatch):
    """Timeout 3 s, the runner returning 1.5 s in, a child writing 0.77 0.3 s past the
    timeout, within the grace the listing has after it: said "exit 0 · reward written",
    reward 0.77."""
    child = LATE_REWARD.format(at=3.3)
    result = slowly_listed_run(tmp_path, monkeypatch, returns_at=1.5, setsid=False, timeout=3, child=child)
    assert result.outcome is Outcome.REWARD_WRITTEN, (result.outcome, result.stderr.text)
    assert (result.exit_code, result.verdict.rewards) == (0, {"reward": 1.0}), result.verdict


# Only the view's init's list: in the copy sandbox /proc/1 is this machine's init.
FORGER = """try:
            fd = os.open("/proc/1/fd/5", os.O_WRONLY) if os.readlink("/proc/1/fd/5").endswith("/strays") else -1
        except OSError:
            fd = -1
        while fd >= 0:
            os.pwrite(fd, b"rc 0\\n", 0); time.sleep(0.02)"""


def test_a_stray_cannot_write_over_the_runners_status(tmp_path, sandbox, monkeypatch):
    """The verifier returned "pass" (a contract error, exit 2) and its child kept
    writing "rc 0" over the start of the init's list (/proc/1/fd/5 opened afresh
    writes at 0): with the listing cut short, the forged status was the runner's,
    "exit 0 · no reward". The init now stops the child before it writes the status."""
    result = slowly_listed_run(tmp_path, monkeypatch, returns_at=0, setsid=False, child=FORGER, returns='"pass"')
    assert result.outcome is Outcome.CONTRACT_ERROR, (result.outcome, result.stderr.text)
    assert result.exit_code == 2


TIMES_OUT_AMONG_SLEEPERS = """import os, time
def verify(workspace):
    for _ in range(1000):
        if os.fork() == 0:
            time.sleep({seconds})
            os._exit(0)
    time.sleep(20)
    return 1.0
"""


def test_a_timeout_ends_the_runners_group_before_the_init_stops_what_is_left(tmp_path, namespace):
    """At a timeout the tool sends SIGTERM to each process of the run's group in
    turn; when the runner went first, the view's init stopped the rest before
    their turn (a stopped process holds SIGTERM pending), and the namespace
    said "the run left 1000 process(es) running", every sleeper. The runner now
    gets it last."""
    seconds = f"3000.{time.monotonic_ns() % 10**6:06d}"
    task_dir = make_task(tmp_path / "t", TIMES_OUT_AMONG_SLEEPERS.format(seconds=seconds), timeout=4)
    result = run_outliving_nothing(task_dir, seconds)
    assert result.outcome is Outcome.TIMED_OUT, (result.outcome, result.stderr.text)
    assert len(result.strays) < 100, result.notices  # SIGTERM's default ends a sleeper; a few may be mid-fork


def copy_run_of_many_strays(tmp_path, monkeypatch) -> float:
    """The duration of the same verifier (40 strays, returning at once) in the copy sandbox."""
    from verifier_tui.engine.sandbox.isolation import VARIABLE

    monkeypatch.setenv(VARIABLE, "copy")
    seconds = f"3000.{time.monotonic_ns() % 10**6:06d}"
    verifier = MANY_STRAYS.format(count=40, seconds=seconds, returns_at=0, setsid=False)
    try:
        with Session(make_task(tmp_path / "c", verifier, timeout=10), Options(python=PY)) as session:
            result = session.run()
    finally:
        assert wait_none_with(seconds) == [], "a process outlived the run"
    assert result.outcome is Outcome.REWARD_WRITTEN, (result.outcome, result.stderr.text)
    return result.duration_s


@pytest.mark.parametrize("timeout", [2, 10])
def test_a_runner_over_in_time_is_said_to_take_its_own_time(tmp_path, namespace, monkeypatch, timeout):
    """The same run, its runner returning at once: its duration was the
    init's listing's end (4 s of a slow listing; "exit 0 · reward written ·
    2 s" for 1,500 strays in 30 s, 0.8 s in the copy sandbox), or with the
    listing cut short (at 2 s + its grace), the timeout. It is the runner's
    own, as the copy sandbox says it: when its init's status line was first
    seen. Compared with the copy sandbox's alone, on the same machine: a
    bound of its own counted Python's start-up on a loaded machine (and a
    1 s timeout left too little of it to return in time)."""
    result = slowly_listed_run(tmp_path, monkeypatch, returns_at=0, setsid=False, timeout=timeout)
    assert result.outcome is Outcome.REWARD_WRITTEN, (result.outcome, result.stderr.text)
    copy = copy_run_of_many_strays(tmp_path, monkeypatch)
    # The fault said 2 s at least (the cut listing, or the timeout); 1 s of room keeps a loaded machine's
    # slower start of one run against the other from failing a run that is its own.
    assert result.duration_s < copy + 1, (result.duration_s, copy)


def test_a_listing_of_strays_cut_short_after_a_timeout_is_said_at_least(tmp_path, namespace, monkeypatch):
    """The same listing after a runner that did time out (its strays out of its group, which
    SIGTERM does not reach): ended SIGTERM's grace and a moment later, it was said as if
    whole ("the run left 27 process(es) running" of 40)."""
    result = slowly_listed_run(tmp_path, monkeypatch, returns_at=300, setsid=True)
    assert result.outcome is Outcome.TIMED_OUT
    assert 0 < len(result.strays) < 40
    said = f"the run left at least {len(result.strays)} process(es) running"
    assert any(n.startswith(said) for n in result.notices), result.notices


@pytest.mark.parametrize("escape", list(ESCAPES))
async def test_an_escaped_process_is_ended_when_its_run_is_superseded(tmp_path, sandbox, escape):
    """A save while the verifier still runs cancels that run (watch, the TUI): what it started
    outside its group goes with it."""
    token = f"vtui-superseded-{os.getpid()}-{time.monotonic_ns()}"
    task_dir = escaping_task(tmp_path, token, escape, then="time.sleep(300)")
    with Session(task_dir, Options(python=PY)) as session:
        running = asyncio.create_task(session.arun())
        deadline = time.monotonic() + 30
        while not processes_with(token):  # the escaped process has started
            assert time.monotonic() < deadline, "the verifier never started its process"
            await asyncio.sleep(0.05)
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
    assert wait_none_with(token) == [], "the superseded run's escaped process outlived it"


def test_an_escaped_process_holding_the_pipes_is_not_waited_for(tmp_path, sandbox):
    """The escaped process keeps stdout and stderr open: the run's output is
    all there, the process is ended, and the run's duration is the runner's
    own, not the 300 s the escaped process would have taken."""
    token = f"vtui-pipes-{os.getpid()}-{time.monotonic_ns()}"
    task_dir = make_task(
        tmp_path / "t",
        f"""\
        import os, subprocess, sys

        def verify(workspace):
            subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", {token!r}], start_new_session=True)
            print("the verifier's own output")
            return 1.0
    """,
    )
    with Session(task_dir, Options(python=PY)) as session:
        result = session.run()
    assert result.outcome is Outcome.REWARD_WRITTEN
    assert result.stdout.text == "the verifier's own output\n"
    assert wait_none_with(token) == []
    assert any(token in command for command in result.strays)
    assert result.duration_s + result.pipe_wait_s < 300


def test_output_held_open_by_an_unmarked_process_is_said_to_be_cut_short(tmp_path, monkeypatch):
    """In the copy sandbox, a process started with an empty environment carries no mark and keeps
    the output open: the run stops reading a second after the runner's exit and says so, apart
    from the run's own time."""
    monkeypatch.setenv(isolation.VARIABLE, "copy")
    token = f"vtui-unmarked-{os.getpid()}-{time.monotonic_ns()}"
    task_dir = make_task(
        tmp_path / "t",
        f"""\
        import subprocess, sys

        def verify(workspace):
            subprocess.Popen([sys.executable, "-c", "import time; time.sleep(5)", {token!r}],
                             start_new_session=True, env={{}})
            return 1.0
    """,
    )
    with Session(task_dir, Options(python=PY)) as session:
        result = session.run()
    try:
        assert result.outcome is Outcome.REWARD_WRITTEN
        assert result.pipe_wait_s >= 0.9 and result.duration_s < 5
        assert any(
            n.startswith("output cut short: a process the run started held its output open") for n in result.notices
        ), result.notices
    finally:
        for pid in processes_with(token):
            os.kill(pid, 9)


# ---------------------------------------------------------------------------
# The user's files


def test_the_users_task_data_and_response_are_copies(tmp_path, sandbox):
    """A verifier that finds its inputs in sys.argv and writes them writes
    the tool's copies; the paths it shows are still the user's."""
    task_dir = make_task(
        tmp_path / "t",
        """\
        import sys

        def verify(workspace, task_data, response):
            for flag in ("--task-data", "--response"):
                path = sys.argv[sys.argv.index(flag) + 1]
                print(flag, path)
                with open(path, "w") as handle:
                    handle.write("overwritten by the verifier")
            return 1.0
    """,
    )
    task_data = tmp_path / "t" / "task_data.json"
    task_data.write_text('{"answer": 42}')
    response = tmp_path / "response.json"
    response.write_text('{"object": "response", "output": []}')
    with Session(task_dir, Options(python=PY, task_data=task_data, response=response)) as session:
        result = session.run()
    assert result.outcome is Outcome.REWARD_WRITTEN, result.stderr.text
    assert task_data.read_text() == '{"answer": 42}'
    assert response.read_text() == '{"object": "response", "output": []}'
    assert result.stdout.text == f"--task-data {task_data}\n--response {response}\n"
    assert result.user_files_written == []


def test_a_write_through_a_link_to_a_users_file(tmp_path, sandbox):
    """With namespaces the user's files are read-only: the write fails and
    the file is untouched. Without, it cannot be stopped, but it is reported
    (result, --json, notices)."""
    victim = tmp_path / "t" / "tests" / "helper.py"
    task_dir = make_task(
        tmp_path / "t",
        f"""\
        import os

        def verify(workspace):
            os.symlink({str(victim)!r}, workspace / "link")
            try:
                with open(workspace / "link", "w") as handle:
                    handle.write("# written by the verifier")
                print("written")
            except OSError as exc:
                print("refused:", exc.strerror)
            return 1.0
    """,
        files={"helper.py": "# the user's helper\n"},
        cases={"only": {"a.txt": "a"}},
    )
    with Session(task_dir, Options(python=PY)) as session:
        result = session.run()
    assert result.outcome is Outcome.REWARD_WRITTEN, result.stderr.text
    if sandbox == "namespace":  # the task under this /tmp is not even in the run's view
        assert result.stdout.text == "refused: No such file or directory\n"
        assert victim.read_text() == "# the user's helper\n"
        assert result.user_files_written == []
    else:
        assert result.stdout.text == "written\n"
        assert result.user_files_written == [str(victim)]
        assert result.to_json()["user_files_written"] == [str(victim)]
        said = "your own files changed while the run ran, by the run or by you: "
        assert any(n.startswith(said) and str(victim) in n for n in result.notices)


def test_the_workspace_seen_through_the_overlay_is_whole_and_writable(tmp_path, sandbox):
    """The verifier sees the whole workspace, may change it, and the next run
    sees the user's workspace again; the user's files are never changed."""
    task_dir = make_task(
        tmp_path / "t",
        """\
        import shutil

        def verify(workspace):
            print(sorted(str(p.relative_to(workspace)) for p in workspace.rglob("*")))
            (workspace / "a.txt").write_text("changed")
            shutil.rmtree(workspace / "d")
            (workspace / "new.txt").write_text("new")
            return 1.0
    """,
        cases={"only": {"a.txt": "a", "d/b.txt": "b", "d/e/c.txt": "c"}},
    )
    ws = task_dir / "cases" / "only" / "workspace"
    with Session(task_dir, Options(python=PY)) as session:
        first = session.run()
        second = session.run()
    assert first.outcome is Outcome.REWARD_WRITTEN, first.stderr.text
    listing = "['a.txt', 'd', 'd/b.txt', 'd/e', 'd/e/c.txt']\n"
    assert first.stdout.text == listing and second.stdout.text == listing
    assert (ws / "a.txt").read_text() == "a" and (ws / "d" / "e" / "c.txt").read_text() == "c"
    assert not (ws / "new.txt").exists()
    assert first.sandbox == sandbox


# ---------------------------------------------------------------------------
# Choosing the sandbox


def test_the_sandbox_in_force_is_in_the_json_and_the_header(env, tmp_path, sandbox):
    task_dir = make_task(tmp_path / "t")
    env = dict(env, VERIFIER_TUI_SANDBOX=sandbox)
    done = run_tool(env, "run", "--json", task_dir, "--python", PY)
    assert json.loads(done.stdout)["sandbox"] == sandbox
    text = run_tool(env, "run", task_dir, "--python", PY).stdout
    assert text.splitlines()[1].startswith(f"sandbox: {sandbox}")


@pytest.mark.parametrize("ending", ["", "import os; os._exit(3)", "import time; time.sleep(60)"])
def test_explain_says_the_sandbox_the_verifiers_import_ran_in(env, tmp_path, sandbox, ending):
    """A later tour: ``explain`` imports the verifier, whose import-time code
    ran in the copy sandbox (it wrote a file of the user's) while neither its
    text nor its ``--json`` said the run could write the user's files. A later
    review: when that code ended the runner (``os._exit(3)``) or outlived
    ``--timeout``, ``explain TASK`` printed only the error; ``explain TRIAL``
    said the sandbox."""
    mark = tmp_path / "written-by-the-import"
    task_dir = make_task(
        tmp_path / "t",
        f"""\
        try:
            open({str(mark)!r}, "w").close()
        except OSError:  # the view has no folder of the user's
            pass
        {ending}

        def verify(workspace):
            return 1.0
    """,
    )
    env = dict(env, VERIFIER_TUI_SANDBOX=sandbox)
    data = json.loads(run_tool(env, "explain", "--json", task_dir, "--python", PY, "--timeout", "5").stdout)
    assert data["sandbox"] == sandbox and mark.exists() == (sandbox == "copy")
    done = run_tool(env, "explain", task_dir, "--python", PY, "--timeout", "5")
    no_traceback(done)
    if ending:  # the sandbox's line, then the error
        assert done.returncode == 2 and done.stdout.splitlines() == [data["sandbox_words"]], done.stderr
    else:
        assert done.stdout.splitlines()[1] == data["sandbox_words"]
    if sandbox == "copy":
        assert isolation.COPY_RISK in data["sandbox_words"]


def test_a_bad_sandbox_value_is_one_line(env, tmp_path):
    task_dir = make_task(tmp_path / "t")
    done = run_tool(dict(env, VERIFIER_TUI_SANDBOX="chroot"), "run", task_dir, "--python", PY)
    assert done.returncode == 2
    assert done.stderr == "verifier-tui: VERIFIER_TUI_SANDBOX='chroot': expected auto, namespace or copy\n"


# ---------------------------------------------------------------------------
# --python pointing at something that does not answer


def test_an_interpreter_that_hangs_is_bounded_and_ended(env, tmp_path):
    token = f"vtui-hang-{os.getpid()}-{time.monotonic_ns()}"
    fake = tmp_path / "python-that-hangs"
    sleeper = f"{PY} -c 'import time; time.sleep(300)' {token}"
    fake.write_text(f"#!/bin/sh\n{sleeper} &\nexec {sleeper}\n")  # it starts a child, then hangs
    fake.chmod(0o755)
    task_dir = make_task(tmp_path / "t")
    done = run_tool(env, "run", task_dir, "--python", fake, "--timeout", "1")
    assert done.returncode == 2  # bad input: one line, exit 2 (docs/faults.md, "Bad input")
    assert done.stderr.count("\n") == 1 and f"{fake} did not answer within 1 s" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert wait_none_with(token) == [], "the interpreter or its child outlived the probe"


def test_an_interpreter_whose_child_leaves_its_session_holding_the_output_is_ended(env, tmp_path):
    """The probe's child calls setsid and keeps the probe's stdout open: the tool still answers in
    about --timeout, and that child is ended too (found by the mark in its environment)."""
    token = f"vtui-setsid-{os.getpid()}-{time.monotonic_ns()}"
    fake = tmp_path / "python-whose-child-escapes"
    escaper = f"{PY} -c 'import os, time; os.setsid(); time.sleep(300)' {token}"
    fake.write_text(f"#!/bin/sh\n{escaper} &\nexit 0\n")  # stdout stays open in the escaped child
    fake.chmod(0o755)
    task_dir = make_task(tmp_path / "t")
    started = time.monotonic()
    done = run_tool(env, "run", task_dir, "--python", fake, "--timeout", "1")
    assert time.monotonic() - started < 20, "the probe waited for output a process out of its reach held"
    assert done.returncode == 2
    assert f"{fake} did not answer within 1 s" in done.stderr and done.stderr.count("\n") == 1
    assert wait_none_with(token) == [], "the escaped child outlived the probe"


# ---------------------------------------------------------------------------
# What a verifier notices of the sandbox (README "Sandbox", docs/faults.md)


def test_renaming_the_workspace_itself(tmp_path, sandbox):
    """In the view the workspace is a mount point: renaming it fails (EBUSY).
    In the copy it succeeds, and the next run has its workspace back."""
    task_dir = make_task(
        tmp_path / "t",
        """\
        import os

        def verify(workspace):
            print(sorted(os.listdir(workspace)))
            try:
                os.rename(workspace, workspace.with_name("moved"))
                print("renamed")
            except OSError as exc:
                print("refused:", exc.strerror)
            return 1.0
    """,
        cases={"only": {"a.txt": "a"}},
    )
    with Session(task_dir, Options(python=PY)) as session:
        first, second = session.run(), session.run()
    said = "refused: Device or resource busy" if sandbox == "namespace" else "renamed"
    assert first.stdout.text == second.stdout.text == f"['a.txt']\n{said}\n", first.stderr.text


@pytest.mark.parametrize(
    "ending, exit_code, signal_number",
    [
        ("os._exit(3)", 3, None),
        ("os.kill(os.getpid(), signal.SIGKILL)", None, 9),
        ("os._exit(130)", "130 in the copy", "2 with namespaces"),
    ],
)
def test_how_the_runner_ended_is_read_back(tmp_path, sandbox, ending, exit_code, signal_number):
    """An exit status and a signal, in both sandboxes. With namespaces the
    runner's status comes through a shell, which reports a signal N as
    128 + N: a status of 129 to 192 reads as a signal (the runner itself only
    exits 0, 1 or 2; only a verifier's own os._exit(129..192) is misread)."""
    task_dir = make_task(
        tmp_path / "t",
        f"""\
        import os, signal

        def verify(workspace):
            {ending}
    """,
    )
    with Session(task_dir, Options(python=PY)) as session:
        result = session.run()
    if isinstance(exit_code, str):  # the one case the two sandboxes read differently
        exit_code, signal_number = (130, None) if sandbox == "copy" else (None, 2)
    assert (result.exit_code, result.signal) == (exit_code, signal_number), result.stderr.text
    assert result.stderr.text == ""


def test_a_timeout_leaves_only_the_verifiers_own_stderr(tmp_path, sandbox):
    task_dir = make_task(
        tmp_path / "t",
        """\
        import sys, time

        def verify(workspace):
            print("waiting", file=sys.stderr, flush=True)
            time.sleep(300)
    """,
    )
    with Session(task_dir, Options(python=PY, timeout=1)) as session:
        result = session.run()
    assert result.outcome is Outcome.TIMED_OUT
    assert result.stderr.text == "waiting\n"  # nothing of the namespace's init ("Terminated")


def test_the_run_mark_in_the_verifiers_environment(tmp_path, sandbox):
    """Without namespaces the verifier's environment carries VERIFIER_TUI_RUN
    (how its escaped processes are found); with namespaces nothing is added."""
    task_dir = make_task(
        tmp_path / "t",
        """\
        import os

        def verify(workspace):
            print(os.environ.get("VERIFIER_TUI_RUN", "absent"))
            return 1.0
    """,
    )
    with Session(task_dir, Options(python=PY)) as session:
        result = session.run()
    mark = result.stdout.text.strip()
    assert (mark == "absent") == (sandbox == "namespace"), mark
