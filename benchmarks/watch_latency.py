"""From a saved file to the run's line printed by `verifier-tui watch --json`.

Starts the `verifier-tui` console script as `watch --json TASK --python EXE` on
a private copy of a task. After its first run, it repeatedly rewrites the
task's verifier (new content each time, as an editor's save) and times, from
just after the write returns to the moment the run's JSON line is read from
the pipe, how long the line took. Each write waits until the previous line is
printed, then a pause, so no two saves coalesce.

Separately, and interleaved with nothing else, it times the bare runner on
the same verifier and workspace (staged by hand once, as in
benchmarks/run_overhead.py). The report gives:

  write->line   median time from the write to the line
  runner        median wall time of the bare runner
  difference    write->line minus runner: what watching, staging, judging
                and printing add to the run itself (target: <= 50 ms)

The runner's own duration_s, as the lines report it, is printed too. A report,
not a test: it exits 0 whatever the numbers.

    python benchmarks/watch_latency.py [--task DIR] [--case NAME] [--saves N] [--python EXE]
"""

from __future__ import annotations

import argparse
import json
import queue
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO))

from run_overhead import read_bare_verdict, real_python, stage_bare, tool_command  # noqa: E402

from verifier_tui.engine.discovery import read_task_config  # noqa: E402
from verifier_tui.engine.run import child_env  # noqa: E402

TARGET_MS = 50.0
LINE_TIMEOUT_S = 30.0


def pump(stream, lines: queue.Queue) -> None:
    """Each line from the child, stamped when it was read."""
    for line in stream:
        lines.put((time.perf_counter(), line))
    lines.put((time.perf_counter(), None))


def next_line(lines: queue.Queue) -> tuple[float, dict]:
    stamp, line = lines.get(timeout=LINE_TIMEOUT_S)
    if line is None:
        raise SystemExit("watch_latency: verifier-tui watch ended early")
    return stamp, json.loads(line)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", type=Path, default=REPO / "examples" / "tasks" / "hello-file")
    parser.add_argument("--case", default=None, help="a case of the task (default: its first case)")
    parser.add_argument("--saves", type=int, default=30, help="timed saves (default 30, at least 20)")
    parser.add_argument("--pause", type=float, default=0.3, help="seconds between a line and the next save")
    parser.add_argument("--python", default=None, help="the interpreter for both (default: the real python3)")
    args = parser.parse_args(argv)
    saves = max(args.saves, 20)
    python = real_python(args.python)
    tool = tool_command()

    with tempfile.TemporaryDirectory(prefix="watch-latency-") as tmp:
        root = Path(tmp)
        task = root / "task"
        shutil.copytree(args.task, task, symlinks=True)
        cases = sorted(p for p in (task / "cases").iterdir() if p.is_dir()) if (task / "cases").is_dir() else []
        case = (task / "cases" / args.case) if args.case else (cases[0] if cases else None)
        verifier = task / "tests" / "verifier.py"
        original = verifier.read_text(encoding="utf-8")

        # The bare runner's wall time, on a layout staged by hand.
        bare_args, reward_dir = stage_bare(task, case, root / "bare")
        bare = [python, "-B", "-u", str(root / "bare" / "tests" / ".ng" / "run_verifier.py")] + bare_args
        bare_env = child_env(read_task_config(task).env)
        runner_s = []
        for index in range(3 + saves):
            start = time.perf_counter()
            subprocess.run(bare, cwd=root / "bare" / "app", env=bare_env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if index >= 3:
                runner_s.append(time.perf_counter() - start)
        bare_verdict = read_bare_verdict(reward_dir)

        command = [tool, "watch", "--json", str(task), "--python", python]
        if case is not None:
            command += ["--case", case.name]
        proc = subprocess.Popen(command, cwd=root, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=pump, args=(proc.stdout, lines), daemon=True).start()
        latencies, durations, problems = [], [], []
        try:
            _, first = next_line(lines)  # the run right after the watcher is in place
            if first["rewards"] != bare_verdict:
                problems.append(f"first run: {first['rewards']} vs the bare runner's {bare_verdict}")
            for index in range(3 + saves):
                time.sleep(args.pause)
                verifier.write_text(original + f"\n# save {index}\n", encoding="utf-8")
                written = time.perf_counter()
                stamp, data = next_line(lines)
                if "verifier.py" not in data["trigger"]:
                    problems.append(f"save {index}: the run's trigger was {data['trigger']!r}")
                if index >= 3:
                    latencies.append(stamp - written)
                    durations.append(data["duration_s"])
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    write_to_line = 1000 * statistics.median(latencies)
    runner = 1000 * statistics.median(runner_s)
    difference = write_to_line - runner
    print(f"task          {args.task} (case {case.name if case else '-'})")
    print(f"python        {python}")
    print(f"tool          {tool}")
    print(f"saves         {saves} timed, after 3 warm-up saves, {args.pause:g} s apart")
    print(f"write->line   median {write_to_line:6.1f} ms   min {1000 * min(latencies):6.1f}   "
          f"max {1000 * max(latencies):6.1f}")
    print(f"runner        median {runner:6.1f} ms   (the bare runner's wall time, {len(runner_s)} runs)")
    print(f"duration_s    median {1000 * statistics.median(durations):6.1f} ms   (the runner as the lines report it)")
    print(f"difference    {difference:6.1f} ms   (write->line minus runner)")
    for problem in problems[:5]:
        print(f"WARNING       {problem}")
    print(f"target        difference <= {TARGET_MS:.0f} ms -> {'holds' if difference <= TARGET_MS else 'DOES NOT hold'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
