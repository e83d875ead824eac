"""How quickly the TUI answers: save -> verdict on screen, launch -> first
verdict, and the longest freeze while a verifier floods its output.

Four rows:

  save -> verdict  The venv's ``verifier-tui TASK`` runs in a pseudo-terminal
                   of 120x40 (see commands/terminal.py), live reload on. Each round
                   writes the verifier so that it returns a new number, and
                   times from just after the write to the moment the app draws
                   that number. Interleaved with it, the bare runner on the same
                   verifier. Goal: adds at most 40 ms to the runner.
  launch           ``verifier-tui TASK`` started in a fresh pseudo-terminal,
                   until the first verdict is drawn; then q. Goal: at most 1 s.
  big reward       A verifier returns a reward of 100,000 keys (once the
                   screen froze 4 to 6 s per run); the app runs under the pilot
                   inside the venv, and the row is the time from the app's
                   RunFinished message to the screen updated (the messages
                   handled and the screen's refresh done), the median of a
                   few runs; the anchor, the same after a one-key reward.
                   Goal: at most 100 ms.
  flood            A verifier prints 50,000 lines; the app runs under Textual's
                   pilot inside the venv, and a 10 ms timer records the longest
                   gap between its ticks while the lines stream in: how long
                   the screen froze. Goal: at most 100 ms, the stall a person
                   starts to notice.

Why "runner + 40 ms" for the TUI and + 10 ms for ``watch``: both keep the
next run started and waiting (warm runs), so neither starts an interpreter or
a sandbox after the save; the TUI does what ``watch`` does and then draws:
Textual draws at most every 1/60 s, and the reward, resolution and output
panels are re-laid out on each verdict, so it is given 30 ms more than ``watch``.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import subprocess
import sys
import time
from pathlib import Path

from harness import Bench, BenchmarkError, Goal, Row, child_env, interleave, ms, timed_run
from layouts import bare_layout, small_task, wrote_reward
from terminal import TerminalApp

NAME = "tui"
FLOOD_LINES = 50_000
BIG_REWARD_KEYS = 100_000


def verifier_returning(value: str) -> str:
    return f"def verify(workspace):\n    return {value}\n"


def reward_text(number: int) -> str:
    """A reward that reads the same on screen as in the source (repr of the
    float) and nowhere else: 700001.25, 700002.25, ..."""
    return f"7{number:05d}.25"


def measure(bench: Bench) -> list[Row]:
    where = bench.folder("tui-latency")
    task = small_task(where, verifier=verifier_returning(reward_text(0)))
    bare = bare_layout(where / "bare")
    verifier = task / "tests" / "verifier.py"
    app = TerminalApp([bench.tool, str(task), "--case", "only", "--python", bench.python], bench.tool_env(), where)
    saves = iter(range(1, 99_999))
    try:
        app.expect(reward_text(0))
        app.wait(60)
        time.sleep(1.0)  # the watcher is built off the event loop after the first run starts

        def save() -> float:
            value = reward_text(next(saves))
            app.expect(value)
            verifier.write_text(verifier_returning(value), encoding="utf-8")
            written = time.perf_counter()
            drawn = app.wait()
            time.sleep(0.3)  # settle: no save lands on a run or a redraw in flight
            return drawn - written

        def runner() -> float:
            (bare.reward_dir / "reward.txt").unlink(missing_ok=True)
            return timed_run(bare.command(bench.python), cwd=bare.app, env=child_env(), check=wrote_reward(bare))

        samples = interleave({"tui": save, "runner": runner}, rounds=bench.rounds(30, 8), warmup=2)
    finally:
        app.close()
    rows = [
        Row(
            "tui",
            "26",
            "save -> verdict on screen, TUI (pty)",
            anchor="bare runner",
            values=ms(samples["tui"]),
            anchor_values=ms(samples["runner"]),
            goal=Goal.adds(40),
        )
    ]
    rows.append(
        Row(
            "tui-launch",
            "earlier",
            "launch -> first verdict on screen, TUI (pty)",
            values=ms(launches(bench, task, bench.rounds(10, 3))),
            goal=Goal.at_most(1000, "ms"),
        )
    )
    rows.append(flood(bench, where))
    rows.append(big_reward(bench, where, bench.rounds(5, 2)))
    return rows


def launches(bench: Bench, task: Path, count: int) -> list[float]:
    (task / "tests" / "verifier.py").write_text(verifier_returning(reward_text(99999)), encoding="utf-8")
    times = []
    for _ in range(count):
        started = time.perf_counter()
        app = TerminalApp(
            [bench.tool, str(task), "--case", "only", "--python", bench.python], bench.tool_env(), task.parent
        )
        try:
            app.expect(reward_text(99999))
            times.append(app.wait(60) - started)
        finally:
            app.close()
    return times


def flood(bench: Bench, where: Path) -> Row:
    """The flood runs inside the venv (this file, with --flood-inside)."""
    done = subprocess.run(
        [bench.venv_python, __file__, "--flood-inside", str(where / "flood"), str(FLOOD_LINES)],
        env=bench.tool_env(),
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise BenchmarkError(f"the flood benchmark failed: {done.stderr.strip()[-800:]}")
    found = json.loads(done.stdout)
    return Row(
        "tui-flood",
        "earlier",
        f"longest screen freeze, verifier printing {FLOOD_LINES:,} lines",
        values=[found["stall_ms"]],
        goal=Goal.at_most(100, "ms"),
        notes=[f"the run took {found['run_ms']:.0f} ms"],
    )


FLOOD_VERIFIER = """\
import sys
def verify(workspace):
    for i in range({lines}):
        print(f"line {{i}} [bold]not markup[/]")
    sys.stdout.flush()
    return 1.0
"""


async def flood_inside(root: Path, lines: int) -> dict:
    """Under the pilot: the app, one run, a 10 ms timer; the longest gap.
    (The verifier runs on the ``python3`` the app finds, as in the TUI.)"""
    from verifier_tui.engine.session import Session
    from verifier_tui.tui.app import VerifierApp

    (root / "tests").mkdir(parents=True)
    (root / "tests" / "verifier.py").write_text(FLOOD_VERIFIER.format(lines=lines), encoding="utf-8")
    finished = asyncio.Event()
    results: list = []

    def hook(message) -> None:  # the app's RunFinished message carries the result
        if type(message).__name__ == "RunFinished" and not finished.is_set():
            results.append(message.result)
            finished.set()

    app = VerifierApp(Session(root), watch=False)
    async with app.run_test(size=(120, 40), message_hook=hook) as pilot:
        ticks = [time.perf_counter()]
        timer = app.set_interval(0.01, lambda: ticks.append(time.perf_counter()))
        await asyncio.wait_for(finished.wait(), 120)
        timer.stop()
        await pilot.pause()
    stall = max(b - a for a, b in itertools.pairwise(ticks))
    return {"stall_ms": 1000 * stall, "run_ms": 1000 * results[0].duration_s}


def big_reward(bench: Bench, where: Path, runs: int) -> Row:
    """Inside the venv, as the flood (this file, with --big-reward-inside);
    the anchor is the same app after a one-key reward."""
    found = {}
    for keys in (BIG_REWARD_KEYS, 1):
        done = subprocess.run(
            [bench.venv_python, __file__, "--big-reward-inside", str(where / f"reward-{keys}"), str(keys), str(runs)],
            env=bench.tool_env(),
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise BenchmarkError(f"the big reward benchmark failed: {done.stderr.strip()[-800:]}")
        found[keys] = json.loads(done.stdout)
    big = found[BIG_REWARD_KEYS]
    return Row(
        "tui-big-reward",
        "9",
        f"TUI update after a {BIG_REWARD_KEYS:,}-key reward",
        anchor="after a 1-key reward",
        values=big["update_ms"],
        anchor_values=found[1]["update_ms"],
        goal=Goal.at_most(100, "ms"),
        notes=[f"longest screen freeze after the run: {max(big['stall_ms']):.0f} ms"],
    )


BIG_REWARD_VERIFIER = """\
def verify(workspace):
    rewards = {{f"key_{{i:06d}}": 0.5 for i in range({keys} - 1)}}
    rewards["reward"] = 1.0
    return rewards
"""


async def big_reward_inside(root: Path, keys: int, runs: int) -> dict:
    """Under the pilot: the app, ``runs`` runs (r between them); for each, the
    time from RunFinished to the end of ``pilot.pause()`` (which handles every
    pending message and then refreshes the screen), and the longest gap of a
    10 ms timer in that time."""
    from verifier_tui.engine.session import Session
    from verifier_tui.tui.app import VerifierApp

    (root / "tests").mkdir(parents=True)
    (root / "tests" / "verifier.py").write_text(BIG_REWARD_VERIFIER.format(keys=keys), encoding="utf-8")
    finished = asyncio.Event()
    stamps: list[float] = []

    def hook(message) -> None:
        if type(message).__name__ == "RunFinished" and not finished.is_set():
            stamps.append(time.perf_counter())
            finished.set()

    updates, stalls = [], []
    app = VerifierApp(Session(root), watch=False)
    async with app.run_test(size=(120, 40), message_hook=hook) as pilot:
        for index in range(runs):
            if index:
                finished.clear()
                await pilot.press("r")
            ticks = [time.perf_counter()]
            timer = app.set_interval(0.01, lambda ticks=ticks: ticks.append(time.perf_counter()))
            await asyncio.wait_for(finished.wait(), 120)
            await pilot.pause()
            updates.append(1000 * (time.perf_counter() - stamps[-1]))
            timer.stop()
            gaps = [b - max(a, stamps[-1]) for a, b in itertools.pairwise(ticks) if b > stamps[-1]]
            stalls.append(1000 * max(gaps, default=0.0))
    return {"update_ms": updates, "stall_ms": stalls}


if __name__ == "__main__":
    if sys.argv[1:2] == ["--big-reward-inside"]:
        found = asyncio.run(big_reward_inside(Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])))
        print(json.dumps(found))
        sys.exit(0)
    if sys.argv[1:2] == ["--flood-inside"]:
        found = asyncio.run(flood_inside(Path(sys.argv[2]), int(sys.argv[3])))
        print(json.dumps(found))
        sys.exit(0)
    from run_all import main

    sys.exit(main(["--only", NAME] + sys.argv[1:]))
