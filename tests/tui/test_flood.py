"""The app under a flood of output, in a real terminal: whatever a verifier
writes, and however fast, ``q``, SIGTERM and SIGHUP end the app (and the run,
and its scratch folder), and the app's memory stays bounded.

Each verifier floods until it is ended, so what is measured is the app while
the flood goes on, not how long a given amount takes."""

from __future__ import annotations

import os
import select
import signal
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from tests.helpers.commands import start_in_terminal
from tests.helpers.processes import SAY_STARTED, has_started, wait_none_with
from tests.helpers.tasks import make_task

pytest.importorskip("pty")

#: Seconds the flood goes on before the app is told to end. One is enough to
#: catch unbounded output: with the bounds of output_buffer.py and the panel
#: lifted, the app held 222 MB after one second of "short lines as fast as it
#: can" (712 MB after three), against 46 MB with them. Each second of flood
#: costs two cores a second, in each test that floods that long.
FLOOD_S = 1.0
#: How long the app may take to end (it takes well under a second; the
#: machines that run the tests are shared and slow).
END_WITHIN_S = 10.0
#: The app's resident memory, in MB, at any moment of the flood and of its
#: ending: the app itself is about 50; the live output adds a few at most
#: (output_buffer.py and the panel's MAX_CHARS bound it). Before those bounds
#: a flood took hundreds of MB within seconds, and kept growing.
RSS_BOUND_MB = 150

FLOODS = {
    "a line without end": """
        while True:
            os.write(1, b"x" * 65536)
    """,
    "short lines as fast as it can": """
        chunk = b"a short line\\n" * 5000
        while True:
            os.write(1, chunk)
    """,
    "both streams at once": """
        out, err = b"out\\n" * 16000, (b"err err\\n" * 4000) + b"e" * 70000
        while True:
            os.write(1, out)
            os.write(2, err)
    """,
    "a megabyte line every few ms": """
        line = b"z" * 1_000_000 + b"\\n"
        while True:
            os.write(2, line)
            time.sleep(0.003)
    """,
    "a stray holding the pipe": """
        import sys
        if os.fork() == 0:
            os.setsid()  # out of the run's group: ended only as a stray
            flood = "import os\\nchunk = b'still here\\\\n' * 5000\\nwhile True: os.write(1, chunk)"
            os.execv(sys.executable, [sys.executable, "-c", flood, "STRAY"])
        time.sleep(1)
        return 1.0
    """,
}


def flood_task(root: Path, body: str) -> Path:
    return make_task(
        root,
        "import os, time\ndef verify(workspace):\n"
        + textwrap.indent(SAY_STARTED, "    ")
        + textwrap.indent(textwrap.dedent(body), "    "),
    )


def resident_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def flood_and_end(env: dict[str, str], root: Path, how: str, flood_s: float = FLOOD_S) -> tuple[float | None, float]:
    """Start the app on ``root``, let its verifier flood for ``flood_s``,
    then end the app by ``how`` (a key, or a signal's name): how long it took
    to end (None: it did not within :data:`END_WITHIN_S`), and the most
    memory it held meanwhile."""
    pid, fd = start_in_terminal(env, [str(root), "--no-watch"])
    peak, reaped = 0.0, False
    try:

        def read_for(seconds: float, until=lambda: False) -> None:
            # The terminal is read all along, as a real one is: a full pty would stall the app.
            nonlocal peak
            end = time.monotonic() + seconds
            while time.monotonic() < end and not until():
                if select.select([fd], [], [], 0.05)[0]:
                    try:
                        os.read(fd, 65536)
                    except OSError:
                        pass
                peak = max(peak, resident_mb(pid))

        read_for(30, until=lambda: has_started(env["TMPDIR"]))
        assert has_started(env["TMPDIR"]), "the verifier never started"
        read_for(flood_s)
        asked = time.monotonic()
        if how == "q":
            os.write(fd, b"q")
        else:
            os.kill(pid, getattr(signal, how))
        read_for(END_WITHIN_S, until=lambda: os.waitpid(pid, os.WNOHANG)[0] != 0)
        took = time.monotonic() - asked
        reaped = took < END_WITHIN_S
    finally:
        if not reaped:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)
    return (took if reaped else None), peak


def nothing_left(env: dict[str, str]) -> None:
    """The run, the stray and the scratch folder are gone with the app."""
    scratch = env["TMPDIR"]
    left = wait_none_with(scratch, within_s=10)
    for stray in left:
        os.kill(stray, signal.SIGKILL)
    assert left == [], "the run outlived the app"
    assert list(Path(scratch).iterdir()) == []


#: Each flood, and how the app is told to end, with how long it floods first:
#: FLOOD_S where the memory bound is the point, a moment where it has been
#: shown already for that flood and what is left to see is the signal's ending.
CASES = [
    ("a line without end", "q", FLOOD_S),
    ("short lines as fast as it can", "q", FLOOD_S),
    ("short lines as fast as it can", "SIGTERM", 0.3),
    ("short lines as fast as it can", "SIGHUP", 0.3),
    ("both streams at once", "SIGHUP", FLOOD_S),
    ("a megabyte line every few ms", "q", FLOOD_S),
]


@pytest.mark.parametrize(("flood", "how", "flood_s"), CASES)
def test_the_app_ends_at_once_and_stays_small_under_a_flood(tmp_path, env, flood, how, flood_s):
    root = flood_task(tmp_path / "tasks" / "flood", FLOODS[flood])
    took, peak = flood_and_end(env, root, how, flood_s)
    assert took is not None, f"{how} did not end the app within {END_WITHIN_S} s"
    assert peak < RSS_BOUND_MB, f"the app held {peak:.0f} MB"
    nothing_left(env)


def test_a_stray_flooding_after_the_runner_exited_ends_with_the_app(tmp_path, sandbox, env):
    stray = f"flood-stray-{uuid.uuid4().hex}"  # its command line, to find it by
    root = flood_task(tmp_path / "tasks" / "flood", FLOODS["a stray holding the pipe"].replace("STRAY", stray))
    # the runner returns a second after it starts, then the stray floods alone for FLOOD_S
    took, peak = flood_and_end(env, root, "SIGTERM", flood_s=1 + FLOOD_S)
    assert took is not None, f"SIGTERM did not end the app within {END_WITHIN_S} s"
    assert peak < RSS_BOUND_MB, f"the app held {peak:.0f} MB"
    nothing_left(env)
    assert wait_none_with(stray, within_s=10) == [], "the stray outlived the app"


def test_what_waits_for_the_screen_is_the_newest_output_bounded_and_counted():
    """Between two screen updates a flood leaves only its newest lines, within
    the bounds, and the count of those it dropped: the panel's marker adds up."""
    from verifier_tui.tui.output_buffer import KEEP_CHARS, KEEP_LINES, LINE_CHARS, OutputBuffer

    buffer = OutputBuffer()
    buffer.reset(1)
    short = "".join(f"line {i}\n" for i in range(5000))
    for _ in range(200):
        buffer.feed(1, "stdout", short, str.upper)
    lines, dropped = buffer.take("stdout")
    assert len(lines) == KEEP_LINES and lines[-1] == "LINE 4999"
    assert dropped + len(lines) == 200 * 5000
    for i in range(200):
        buffer.feed(1, "stderr", f"{i} " + "z" * 60_000 + "\n")
    lines, dropped = buffer.take("stderr")
    assert sum(map(len, lines)) <= KEEP_CHARS and lines[-2].startswith("199 ") and len(lines[-2]) == LINE_CHARS
    assert "more characters on this line" in lines[-1]
    assert dropped + len(lines) == 2 * 200
    assert buffer.take("stderr") == ([], 0)
