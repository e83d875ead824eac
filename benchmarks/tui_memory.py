"""How much memory the TUI gains over many live re-runs, whatever they print.

One row per verifier. The venv's ``verifier-tui TASK`` runs in a
pseudo-terminal (see commands/terminal.py), live reload on; each save makes
the verifier return a new number and the next save waits until that number is
drawn. The app's resident memory (VmRSS) is read after 20 warm-up runs and
after the counted runs; the row gives the growth:

  tui-memory        1,000 live re-runs of a trivial verifier (100 with --quick)
  tui-memory-flood  500 re-runs of a verifier that prints 600 KB each (50)

The anchor is ``verifier-tui watch`` over the same runs: it keeps nothing from
one run to the next, so its growth is what the engine alone leaves behind.

Why "at most +5 MB, whatever each run prints": a session left open for a day
re-runs thousands of times; memory must be bounded by what is on screen and
a short history, not by the number of runs or their output. 5 MB is room for
the history's summaries and the allocator's own slack, and far below the
+17.6 MB / +210 MB measured when every run's full result was kept.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from harness import Bench, Goal, Lines, Row
from layouts import small_task
from terminal import TerminalApp
from tui_latency import reward_text

NAME = "memory"
WARMUP_RUNS = 20
FLOOD_BYTES = 600_000


def verifier(number: int, flood: bool) -> str:
    text = "import sys\n\ndef verify(workspace):\n"
    if flood:  # 6,000 lines of 100 bytes
        text += f"    sys.stdout.write(('x' * 99 + '\\n') * {FLOOD_BYTES // 100})\n"
    return text + f"    return {reward_text(number)}\n"


def tui_growth(bench: Bench, task: Path, runs: int, flood: bool) -> tuple[float, float]:
    """(RSS after the warm-up, RSS after ``runs`` more), in MB."""
    source = task / "tests" / "verifier.py"
    app = TerminalApp(
        [bench.tool, str(task), "--case", "only", "--python", bench.python], bench.tool_env(), task.parent
    )
    try:
        app.expect(reward_text(0))
        app.wait(60)
        time.sleep(1.0)  # the watcher is in place after the first run starts
        before = 0.0
        for number in range(1, WARMUP_RUNS + runs + 1):
            app.expect(reward_text(number))
            source.write_text(verifier(number, flood), encoding="utf-8")
            app.wait(60)
            time.sleep(0.02)
            if number == WARMUP_RUNS:
                before = app.rss_mb()
        return before, app.rss_mb()
    finally:
        app.close()


def watch_growth(bench: Bench, task: Path, runs: int, flood: bool) -> tuple[float, float]:
    source = task / "tests" / "verifier.py"
    watch = Lines(
        [bench.tool, "watch", "--json", str(task), "--case", "only", "--python", bench.python],
        cwd=task.parent,
        env=bench.tool_env(),
    )
    try:
        watch.next(timeout=60)
        before = 0.0
        for number in range(1, WARMUP_RUNS + runs + 1):
            source.write_text(verifier(number, flood), encoding="utf-8")
            expected = reward_text(number)
            watch.next(timeout=60, match=lambda line, expected=expected: expected in line)
            time.sleep(0.02)
            if number == WARMUP_RUNS:
                before = rss_mb(watch.proc.pid)
        return before, rss_mb(watch.proc.pid)
    finally:
        watch.stop()


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024 / 1e6
    raise ValueError(f"no VmRSS for process {pid}")


def measure(bench: Bench) -> list[Row]:
    rows = []
    for key, flood, runs in (
        ("tui-memory", False, bench.rounds(1000, 100)),
        ("tui-memory-flood", True, bench.rounds(500, 50)),
    ):
        where = bench.folder(key)
        task = small_task(where, verifier=verifier(0, flood))
        tui_before, tui_after = tui_growth(bench, task, runs, flood)
        (task / "tests" / "verifier.py").write_text(verifier(0, flood), encoding="utf-8")
        watch_before, watch_after = watch_growth(bench, task, runs, flood)
        what = f"TUI memory growth over {runs:,} live re-runs" + (" printing 600 KB each" if flood else "")
        rows.append(
            Row(
                key,
                "11",
                what,
                anchor=f"watch over the same {runs:,} runs",
                unit="MB",
                values=[tui_after - tui_before],
                anchor_values=[watch_after - watch_before],
                goal=Goal.at_most(5, "MB"),
                notes=[
                    f"RSS {tui_before:.0f} -> {tui_after:.0f} MB (watch {watch_before:.0f} -> {watch_after:.0f} MB)"
                ],
            )
        )
    return rows


if __name__ == "__main__":
    from run_all import main

    sys.exit(main(["--only", NAME] + sys.argv[1:]))
