"""From a saved file to the run's line printed by ``verifier-tui watch --json``.

Four things run side by side, each on its own copy of a small task with the
trivial verifier, and each round saves to each in turn (in a rotating order)
and times from just after the write returns to the moment the line that
reports the new run is read from the child's stdout:

  watch   the venv's ``verifier-tui watch --json TASK --case only``
  runner  the bare runner started directly (no save, no watcher): the run
          that any of these must at least wait for
  entr    ``entr -n -p`` on the verifier file, re-running the bare runner
          through a two-line shell script that then prints a line
  ptw     pytest-watcher (``ptw --runner SCRIPT tests/``, its defaults: a
          100 ms loop and a 0.2 s delay) re-running the same script

Each save waits for the previous line and then a pause, so no two saves
coalesce and no run is still going when the next save lands.

Why the goals are what they are: watch keeps the next run started and
waiting (warm runs), so a save costs the runner's own work and little else:
"watch adds at most 10 ms to the runner" is the watcher's reaction and the
staging of the changed file. Against the anchors, a ratio: entr is the
lightest general-purpose re-runner there is (inotify, about 50 ms of reaction
of its own), pytest-watcher is what Python users reach for; at most 0.5x the
first and 0.4x the second is what starting nothing after the save buys.

And what that costs while nothing is saved (``watch-idle``): the memory of the
processes waiting (the runner's interpreter and, in the view, bwrap, the
view's init and the network helper), and the CPU they use meanwhile.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from pathlib import Path

from harness import Bench, BenchmarkError, Goal, Lines, Row, child_env, interleave, median, ms, skipped, timed_run
from layouts import TRIVIAL_VERIFIER, Bare, bare_layout, sandbox_of, small_task, wrote_reward

NAME = "watch"
ANCHORS = True
MARKER = "@@ran@@"
PAUSE_S = 0.4
"""Between a line and the next save: longer than pytest-watcher's 0.2 s delay
plus a run, so a second run that one save may cause is over first."""


def anchor_script(bare: Bare, python: str) -> Path:
    """The bare runner, then one line: what entr and pytest-watcher re-run."""
    script = bare.root / "anchor.sh"
    script.write_text(
        f"#!/bin/sh\ncd {shlex.quote(str(bare.app))} && {shlex.join(bare.command(python))}\necho {MARKER}\n",
        encoding="utf-8",
    )
    script.chmod(0o755)
    return script


class Saver:
    """Saves one verifier file and times the save to a matching line."""

    def __init__(self, lines: Lines, verifier: Path, match) -> None:
        self.lines, self.verifier, self.match = lines, verifier, match
        self.count = 0

    def __call__(self) -> float:
        time.sleep(PAUSE_S)
        self.lines.drain()
        self.count += 1
        self.verifier.write_text(TRIVIAL_VERIFIER + f"# save {self.count}\n", encoding="utf-8")
        written = time.perf_counter()
        stamp, _line = self.lines.next(timeout=30, match=self.match)
        return stamp - written


def measure(bench: Bench) -> list[Row]:
    where = bench.folder("watch-latency")
    task = small_task(where)
    bare = bare_layout(where / "bare")
    goals = {"runner": Goal.adds(10), "entr": Goal.ratio(0.5), "ptw": Goal.ratio(0.4)}
    what = "save -> watch --json line, small task"
    lines_seen: list[dict] = []

    def watch_line(line: str) -> bool:
        if not line.startswith("{"):
            return False
        document = json.loads(line)
        lines_seen.append(document)
        if "verifier.py" not in document.get("trigger", ""):
            raise BenchmarkError(f"watch ran for {document.get('trigger')!r}, not for the save")
        return True

    def run_runner() -> float:
        (bare.reward_dir / "reward.txt").unlink(missing_ok=True)
        return timed_run(bare.command(bench.python), cwd=bare.app, env=child_env(), check=wrote_reward(bare))

    started: list[Lines] = []
    try:
        watch = Lines(
            [bench.tool, "watch", "--json", str(task), "--case", "only", "--python", bench.python],
            cwd=where,
            env=bench.tool_env(),
        )
        started.append(watch)
        watch.next(timeout=60)  # the first run, right after the watcher is in place
        actions = {"watch": Saver(watch, task / "tests" / "verifier.py", watch_line), "runner": run_runner}
        marker = lambda line: line.strip() == MARKER  # noqa: E731
        if bench.entr:
            entr_bare = bare_layout(where / "entr")
            entr = Lines(
                [bench.entr, "-n", "-p", str(anchor_script(entr_bare, bench.python))],
                cwd=entr_bare.root,
                env=child_env(),
                stdin_text=f"{entr_bare.verifier}\n",
            )
            started.append(entr)
            actions["entr"] = Saver(entr, entr_bare.verifier, marker)
        if bench.ptw:
            ptw_bare = bare_layout(where / "ptw")
            ptw = Lines(
                [bench.ptw, "--runner", str(anchor_script(ptw_bare, bench.python)), str(ptw_bare.tests)],
                cwd=ptw_bare.root,
                env=child_env(),
            )
            started.append(ptw)
            actions["ptw"] = Saver(ptw, ptw_bare.verifier, marker)
        time.sleep(1.0)  # entr and pytest-watcher give no sign that they are watching
        samples = interleave(actions, rounds=bench.rounds(30, 8), warmup=2)
        idle = idle_cost(watch.proc.pid, bench.rounds(10.0, 2.0))
    finally:
        for child in started:
            child.stop()

    watch_ms = ms(samples["watch"])
    durations = [1000 * document["duration_s"] for document in lines_seen]
    notes = [f"runner inside watch {median(durations):.1f} ms", f"sandbox: {sandbox_of(lines_seen[-1])}"]
    rows = [
        Row(
            "watch",
            "26",
            what,
            anchor="bare runner",
            values=watch_ms,
            anchor_values=ms(samples["runner"]),
            goal=goals["runner"],
            notes=notes,
        )
    ]
    for name, anchor in (("entr", "entr + bare runner"), ("ptw", "pytest-watcher + bare runner")):
        if name in samples:
            rows.append(
                Row(
                    f"watch-{name}",
                    "26",
                    what,
                    anchor=anchor,
                    values=watch_ms,
                    anchor_values=ms(samples[name]),
                    goal=goals[name],
                )
            )
        else:
            reason = "entr not found" if name == "entr" else "pytest-watcher could not be installed"
            rows.append(skipped(f"watch-{name}", "26", what, reason, anchor=anchor, goal=goals[name]))
    rss, cpu, count, seconds = idle
    rows.append(
        Row(
            "watch-idle",
            "26",
            "idle watch: the run started ahead, waiting (resident memory)",
            unit="MB",
            values=[rss],
            notes=[f"{count} processes", f"CPU {cpu:.2f}% of one core over {seconds:g} s"],
        )
    )
    return rows


def idle_cost(watch_pid: int, seconds: float) -> tuple[float, float, int, float]:
    """The processes ``watch`` keeps waiting for the next save (those started
    with VERIFIER_TUI_WARM, and what they started): their resident MB, the
    share of a core they use over ``seconds``, and how many there are."""

    def tree(pid: int) -> set[int]:
        found, todo = set(), [pid]
        while todo:
            parent = todo.pop()
            for task in _listdir(f"/proc/{parent}/task"):
                for child in _read(f"/proc/{parent}/task/{task}/children").split():
                    if int(child) not in found:
                        found.add(int(child))
                        todo.append(int(child))
        return found

    time.sleep(1.0)  # the run after the last save's is being started: let it reach its wait
    held: set[int] = set()
    for pid in tree(watch_pid):
        if b"VERIFIER_TUI_WARM=" in _read(f"/proc/{pid}/environ", binary=True):
            held |= {pid} | tree(pid)
    if not held:
        raise BenchmarkError("watch keeps no run started ahead")

    def ticks() -> int:
        return sum(int(f) for pid in held for f in _read(f"/proc/{pid}/stat").rsplit(")", 1)[-1].split()[11:13])

    before = ticks()
    time.sleep(seconds)
    cpu = 100 * (ticks() - before) / os.sysconf("SC_CLK_TCK") / seconds
    rss_kb = sum(
        int(line.split()[1])
        for pid in held
        for line in _read(f"/proc/{pid}/status").splitlines()
        if line.startswith("VmRSS:")
    )
    return rss_kb / 1024, cpu, len(held), seconds


def _listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def _read(path: str, binary: bool = False):
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        data = b""
    return data if binary else data.decode(errors="replace")


if __name__ == "__main__":
    from run_all import main

    sys.exit(main(["--only", NAME] + sys.argv[1:]))
