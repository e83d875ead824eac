"""How quickly the TUI answers (a benchmark, not a test).

    python benchmarks/tui_latency.py [--saves 30] [--launches 10]

1. Save to verdict: the app runs in-process under its pilot, live reload on,
   on a copy of examples/tasks/hello-file. Each round writes the verifier (a
   real file write the watcher must see) and waits until the new verdict is on
   screen: the main screen has handled RunFinished and its reward panel shows
   the new reward. Reported: the median of that latency, the median of the
   runner's own wall time for the same runs (RunResult.duration_s), and the
   median of the difference (what the tool adds: watching, staging, reading
   the verdict, drawing). Target: latency at most runner + 80 ms.

3. Output flood (--flood N): a verifier prints N lines (default 50,000); a
   10 ms timer in the app records the longest gap between its ticks while
   they stream in, i.e. the longest the screen froze. Reported with the run's
   own duration. No target number in the issue beyond "never freezes"; what
   a person notices is a stall over ~100 ms.

2. Launch to first verdict: ``verifier-tui PATH`` is started for real, in a
   pseudo-terminal of 120x40, and timed until the first verdict ("passed")
   appears in what it draws; then q quits it. Target: median at most 1.0 s.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import select
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from verifier_tui.engine.session import Session  # noqa: E402

EXAMPLE = REPO / "examples" / "tasks" / "hello-file"
VERIFIER = """\
def verify(workspace):
    text = (workspace / "hello.txt").read_text(encoding="utf-8")
    return {value} if text.strip() == "hello world" else 0.0
"""


async def save_to_verdict(rounds: int) -> tuple[list[float], list[float]]:
    from verifier_tui.tui.app import VerifierApp

    latencies: list[float] = []
    runner: list[float] = []
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "hello-file"
        shutil.copytree(EXAMPLE, root)
        verifier = root / "tests" / "verifier.py"
        app = VerifierApp(Session(root))
        async with app.run_test(size=(120, 40)) as pilot:
            await app.wait_for_runs(1)
            await asyncio.wait_for(app.controller.watch_ready.wait(), 10)
            await pilot.pause(0.2)
            for index in range(rounds):
                value = round(0.01 + index / 100, 2)
                started = time.perf_counter()
                verifier.write_text(VERIFIER.format(value=value), encoding="utf-8")
                result = await app.wait_for_runs(2 + index, timeout=30)
                elapsed = time.perf_counter() - started
                body = str(app.main.query_one("#reward-body").content)
                assert f"{{\"reward\": {value}}}" in body, (value, body)
                latencies.append(elapsed)
                runner.append(result.duration_s)
                await asyncio.sleep(0.15)  # let the system settle between saves
    return latencies, runner


def launch_to_first_verdict(rounds: int) -> list[float]:
    import fcntl
    import pty
    import struct
    import termios

    exe = shutil.which("verifier-tui", path=os.path.dirname(sys.executable)) or shutil.which("verifier-tui")
    command = [exe, str(EXAMPLE)] if exe else [sys.executable, "-m", "verifier_tui", str(EXAMPLE)]
    times: list[float] = []
    for _ in range(rounds):
        started = time.perf_counter()
        pid, fd = pty.fork()
        if pid == 0:  # the child: the real command, in a real terminal of 120x40
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
            env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
            env["TERM"] = "xterm-256color"  # COLUMNS/LINES would override the terminal's size
            os.execve(command[0], command, env)
        seen = b""
        found = None
        deadline = started + 20
        while time.perf_counter() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.05)
            if not ready:
                continue
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            seen = (seen + chunk)[-8192:]
            if b"passed" in seen:
                found = time.perf_counter() - started
                break
        os.write(fd, b"q")
        end = time.perf_counter() + 5
        while time.perf_counter() < end:  # drain until it exits
            ready, _, _ = select.select([fd], [], [], 0.05)
            if ready:
                try:
                    if not os.read(fd, 65536):
                        break
                except OSError:
                    break
            done, _status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
        else:
            os.kill(pid, 9)
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
        os.close(fd)
        if found is None:
            raise SystemExit("the first verdict never appeared on screen")
        times.append(found)
    return times


FLOOD = """\
import sys
def verify(workspace):
    for i in range({lines}):
        print(f"line {{i}} [bold]not markup[/]")
    sys.stdout.flush()
    return 1.0
"""


async def flood_stall(lines: int) -> tuple[float, float]:
    """(longest event-loop gap, run duration) while ``lines`` lines stream in."""
    from verifier_tui.tui.app import VerifierApp

    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "flood"
        (root / "tests").mkdir(parents=True)
        (root / "tests" / "verifier.py").write_text(FLOOD.format(lines=lines))
        app = VerifierApp(Session(root), watch=False)
        async with app.run_test(size=(120, 40)) as pilot:
            ticks = [time.perf_counter()]
            timer = app.set_interval(0.01, lambda: ticks.append(time.perf_counter()))
            result = await app.wait_for_runs(1, timeout=120)
            timer.stop()
            await pilot.pause()
    return max(b - a for a, b in zip(ticks, ticks[1:])), result.duration_s


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--saves", type=int, default=30)
    parser.add_argument("--launches", type=int, default=10)
    parser.add_argument("--flood", type=int, default=50_000, metavar="LINES")
    args = parser.parse_args()

    stall, flood_run = asyncio.run(flood_stall(args.flood))
    print(f"output flood ({args.flood:,} lines printed by the verifier)")
    print(f"  longest screen stall  {ms(stall)}  (run took {ms(flood_run)})")

    latencies, runner = asyncio.run(save_to_verdict(args.saves))
    overhead = [a - b for a, b in zip(latencies, runner)]
    print(f"save -> verdict on screen ({args.saves} saves, hello-file)")
    print(f"  median latency        {ms(statistics.median(latencies))}")
    print(f"  median runner wall    {ms(statistics.median(runner))}")
    print(f"  median tool overhead  {ms(statistics.median(overhead))}  (target: <= 80 ms)")
    print(f"  p90 tool overhead     {ms(sorted(overhead)[int(len(overhead) * 0.9) - 1])}")

    launches = launch_to_first_verdict(args.launches)
    print(f"launch -> first verdict on screen ({args.launches} launches, real terminal 120x40)")
    print(f"  median                {ms(statistics.median(launches))}  (target: <= 1000 ms)")
    print(f"  min / max             {ms(min(launches))} / {ms(max(launches))}")
    ok = statistics.median(overhead) <= 0.080 and statistics.median(launches) <= 1.0
    print("targets met" if ok else "TARGETS MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
