"""Big workspaces: the first staging, and a re-run after 5 files changed.

Two workspaces are written once into the scratch folder (tmpfs when the
machine has one; the table's facts say which): 20,000 files of 10 kB (200 MB)
in 100 folders, and 100,000 files of 100 bytes in 1,000 folders. The verifier
is the trivial one, so everything that grows with the workspace is the tool's.

First staging (``run --json --workspace BIG``, a fresh process each time, so
every run stages from nothing), interleaved with:

  * the same ``run --json`` on the small task (five files): what a run costs
    when the workspace costs nothing;
  * ``cp -a BIG`` to the same file system, followed for the 20k workspace by
    the bare runner on the copy (the anchors: "cp -a + runner" and
    "cp -a").

It runs once with ``VERIFIER_TUI_SANDBOX=namespace`` (the workspace as the
read-only lower layer of an overlay in a user and mount namespace) and once
with ``=copy`` (the private mirror), and notes the ``sandbox`` the tool says
was in force. The tool returns once the verdict is out and leaves a big
copy's removal to a background ``rm`` (the sample is what the user waits
for); each sample waits, untimed, for that removal to end before the next one
starts, as ``cp -a``'s copy is removed untimed. Goals: in the view, the
big workspace adds at most 20 ms over the small task (a mount does not depend
on the number of files: that is the point of it); in the copy, at most 1.0x
``cp -a`` (+ runner): a copy that walks the tree once, with one ``stat`` per
entry and the kernel copying the bytes, can match ``cp -a`` but not beat it.

Re-run after 5 files changed: ``watch --json`` on the big workspace and, side
by side, on the small task; each round rewrites 5 files of one and times from
the last write to the run's line, then the same on the other. Goals: the big
workspace at most 30 ms (20k) / 60 ms (100k) over the small task's reaction:
a re-run should cost what changed, not what exists, and the 30/60 ms leave
room for the watcher's own bookkeeping (its recursive watches, and the
events of five files in different folders).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from harness import Bench, BenchmarkError, Goal, Lines, Row, child_env, interleave, ms, skipped, timed_run
from layouts import (
    HUNDRED_K,
    SMALL_FILES,
    TWENTY_K,
    Bare,
    Size,
    bare_layout,
    build_workspace,
    change_files,
    run_document,
    sandbox_of,
    small_task,
)

NAME = "scale"
MODES = ("namespace", "copy")
RERUN_GOAL_MS = {"20k": 30, "100k": 60}


def measure(bench: Bench) -> list[Row]:
    rows: list[Row] = []
    for size in (TWENTY_K, HUNDRED_K):
        started = time.monotonic()
        big = build_workspace(bench.folder("workspaces") / size.name, size)
        print(f"   workspace {size.label} at {big} ({time.monotonic() - started:.1f} s to write)", flush=True)
        try:
            rows += first_staging(bench, big, size)
        except BenchmarkError as error:  # e.g. a forced staging this machine cannot do
            rows.append(skipped(f"staging-{size.name}", "11", f"first staging, {size.label}", f"failed: {error}"))
        for mode in MODES:
            try:
                rows.append(rerun(bench, big, size, mode))
            except BenchmarkError as error:
                rows.append(
                    skipped(
                        f"rerun-{size.name}-{mode}",
                        "11",
                        f"re-run after 5 files changed, {size.label}, VERIFIER_TUI_SANDBOX={mode}",
                        f"failed: {error}",
                    )
                )
    return rows


def first_staging(bench: Bench, big: Path, size: Size) -> list[Row]:
    where = bench.folder(f"staging-{size.name}")
    task = small_task(where)
    bare = bare_layout(where / "bare")
    copy = where / "copy"
    sandboxes: dict[str, str] = {}
    check = run_document()

    def tool(mode: str, workspace: Path | None):
        command = [bench.tool, "run", "--json", "--python", bench.python, str(task), "--case", "only"]
        if workspace is not None:
            command += ["--workspace", str(workspace)]

        def check_and_note(done) -> str | None:
            problem = check(done)
            if problem is None and workspace is not None:
                sandboxes[mode] = sandbox_of(json.loads(done.stdout))
            return problem

        def go() -> float:
            elapsed = timed_run(command, cwd=where, env=bench.tool_env(mode), check=check_and_note)
            bench.settle()  # the copy's removal, after the command returned, stays out of the next sample
            return elapsed

        return go

    with_runner = size is TWENTY_K  # the anchors: "cp -a + runner" (20k), "cp -a" (100k)

    def cp_a() -> float:
        shutil.rmtree(copy, ignore_errors=True)
        started = time.perf_counter()
        subprocess.run(["cp", "-a", str(big), str(copy)], check=True)
        if with_runner:
            subprocess.run(
                Bare(bare.root, bare.tests, copy, bare.reward_dir).command(bench.python),
                cwd=copy,
                env=child_env(),
                check=True,
                stdout=subprocess.DEVNULL,
            )
        elapsed = time.perf_counter() - started
        shutil.rmtree(copy)
        return elapsed

    actions = {mode: tool(mode, big) for mode in MODES}
    actions["small"] = tool("namespace", None)
    actions["cp"] = cp_a
    samples = interleave(actions, rounds=bench.rounds(5, 2), warmup=1)
    anchor = "cp -a + bare runner" if with_runner else "cp -a"
    what = f"first staging, {size.label}"
    return [
        Row(
            f"staging-{size.name}-namespace",
            "11",
            f"{what}, with namespaces (run --json)",
            anchor="run --json, small task",
            values=ms(samples["namespace"]),
            anchor_values=ms(samples["small"]),
            goal=Goal.adds(20),
            notes=[f"sandbox: {sandboxes.get('namespace')}"],
        ),
        Row(
            f"staging-{size.name}-copy",
            "11",
            f"{what}, without namespaces (run --json)",
            anchor=anchor,
            values=ms(samples["copy"]),
            anchor_values=ms(samples["cp"]),
            goal=Goal.ratio(1.0),
            notes=[f"sandbox: {sandboxes.get('copy')}"],
        ),
    ]


def rerun(bench: Bench, big: Path, size: Size, mode: str) -> Row:
    where = bench.folder(f"rerun-{size.name}-{mode}")
    big_task, small = small_task(where, "for-big"), small_task(where, "small")
    small_workspace = small / "cases" / "only" / "workspace"
    env = bench.tool_env(mode)
    watch = [bench.tool, "watch", "--json", "--python", bench.python]
    seen: list[dict] = []
    children: list[Lines] = []
    error: BaseException | None = None
    try:
        big_watch = Lines(watch + [str(big_task), "--case", "only", "--workspace", str(big)], cwd=where, env=env)
        children.append(big_watch)
        small_watch = Lines(watch + [str(small), "--case", "only"], cwd=where, env=env)
        children.append(small_watch)
        big_watch.next(timeout=600)  # the first run: the first staging of the big workspace
        small_watch.next(timeout=60)
        rounds = iter(range(1, 100_000))

        def changed(lines: Lines, change) -> float:
            time.sleep(0.4)  # the previous run and its repairs are over
            lines.drain()
            change(next(rounds))
            written = time.perf_counter()
            stamp, line = lines.next(timeout=120, match=lambda text: text.startswith("{"))
            seen.append(json.loads(line))
            return stamp - written

        def change_small(number: int) -> None:
            for index in range(SMALL_FILES):
                (small_workspace / f"file{index}.txt").write_text(f"round {number}\n", encoding="utf-8")

        samples = interleave(
            {
                "big": lambda: changed(big_watch, lambda number: change_files(big, size, 5, number)),
                "small": lambda: changed(small_watch, change_small),
            },
            rounds=bench.rounds(20, 5),
            warmup=1,
        )
    except BaseException as exc:
        error = exc
        raise
    finally:
        for child in children:
            child.stop()
        try:
            bench.settle()
        except BenchmarkError as leftover:
            if error is None:
                raise
            # said with, not instead of, what went wrong first
            raise BenchmarkError(f"{error}; then {leftover}") from error
    if not seen or any(document.get("rewards") != {"reward": 1.0} for document in seen):
        raise BenchmarkError(f"a re-run did not score 1.0: {[d.get('outcome') for d in seen][:5]}")
    return Row(
        f"rerun-{size.name}-{mode}",
        "11",
        f"re-run after 5 files changed, {size.label}, VERIFIER_TUI_SANDBOX={mode} (watch)",
        anchor="the same on the small task",
        values=ms(samples["big"]),
        anchor_values=ms(samples["small"]),
        goal=Goal.adds(RERUN_GOAL_MS[size.name]),
        notes=[f"sandbox: {sandbox_of(seen[-1])}"],
    )


if __name__ == "__main__":
    from run_all import main

    sys.exit(main(["--only", NAME] + sys.argv[1:]))
