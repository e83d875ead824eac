"""Run every benchmark and print the table.

    python benchmarks/run_all.py [--quick] [--only NAME,...] [--write-readme]
                                 [--install-anchors] [--venv DIR] [--tmp DIR] [--json FILE]

It makes a clean virtual environment in a temporary folder, installs this
checkout into it as the README does (``pip install <repo>``, not editable),
installs pytest-watcher there, finds entr, builds the tasks and workspaces in
a scratch folder on tmpfs when the machine has one, runs the benchmarks, and
prints one Markdown table with the machine's facts. A benchmark that cannot
run (a missing anchor, a failure) leaves a row saying why; the others go on.
The exit status is 0 whatever the numbers: this is a report, not a test.

Each benchmark module can also be run alone (``python
benchmarks/watch_latency.py --quick``), with the same options.
"""

from __future__ import annotations

import argparse
import importlib
import json
import shutil
import signal
import subprocess
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
from harness import BenchmarkError, Row, skipped  # noqa: E402

MODULES = (
    "runner_overhead",
    "run_overhead",
    "watch_latency",
    "tui_latency",
    "big_workspace",
    "mirror_update",
    "tui_memory",
    "cases_parallel",
    "job_replay",
    "job_overview",
)


def load(names: list[str]) -> list:
    modules = [importlib.import_module(name) for name in MODULES]
    if not names:
        return modules
    unknown = set(names) - {module.NAME for module in modules}
    if unknown:
        raise SystemExit(
            f"run_all: no benchmark named {', '.join(sorted(unknown))} "
            f"(known: {', '.join(module.NAME for module in modules)})"
        )
    return [module for module in modules if module.NAME in names]


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds and runs: shows it works, not figures")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="NAME[,NAME]",
        help="run only these benchmarks (see --list); may be repeated",
    )
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    parser.add_argument("--write-readme", action="store_true", help="put the table into docs/performance.md")
    parser.add_argument(
        "--install-anchors", action="store_true", help="when entr is not on PATH, try apt-get install -y entr"
    )
    parser.add_argument("--venv", type=Path, help="reuse (or make) the benchmark venv here and keep it")
    parser.add_argument(
        "--tmp",
        type=Path,
        help="scratch folder for tasks and workspaces (default: /dev/shm "
        "when it is tmpfs, else the system's temporary folder)",
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write every sample to FILE")
    parser.add_argument("--python", default=sys.executable, help="the interpreter the venv is made with")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    names = [name for chunk in args.only for name in chunk.split(",") if name]
    modules = load(names)
    if args.list:
        for module in modules:
            print(f"{module.NAME:<8} {module.__name__}.py: {module.__doc__.splitlines()[0]}")
        return 0
    command = " ".join(["python benchmarks/run_all.py"] + (argv if argv is not None else sys.argv[1:]))
    started = time.monotonic()
    # The watchers timed here are stopped as Ctrl+C stops them (SIGINT). A shell
    # starts a background job with SIGINT ignored, children inherit that, and a
    # Python started so never installs its KeyboardInterrupt: every watcher
    # then ran out the harness's grace and was SIGKILLed, its scratch left.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    bench = harness.make_bench(quick=args.quick, venv=args.venv, tmp=args.tmp, python=args.python)
    try:
        if any(getattr(module, "ANCHORS", False) for module in modules):
            find_anchors(bench, args.install_anchors)
        facts = harness.machine_facts(bench)
        if bench.notes:
            facts["anchors"] = "; ".join(bench.notes)
        for name, value in facts.items():
            print(f"{name:<13} {value}")
        rows: list[Row] = []
        for module in modules:
            print(f"\n== {module.NAME}: {module.__doc__.splitlines()[0]}", flush=True)
            begun = time.monotonic()
            try:
                found = module.measure(bench)
            except Exception as error:  # noqa: BLE001 - one benchmark's failure must not lose the others' rows
                if not isinstance(error, BenchmarkError):
                    traceback.print_exc()
                found = [skipped(module.NAME, "-", f"{module.NAME} benchmark", f"failed: {error}")]
            for row in found:
                print(harness.table([row]).splitlines()[-1], flush=True)
            print(f"   ({time.monotonic() - begun:.0f} s)")
            rows.extend(found)
        body = harness.report(rows, facts, command)
        print("\n" + body)
        print(f"\n(all benchmarks: {time.monotonic() - started:.0f} s)")
        if args.write_readme:
            harness.write_readme(body)
            print(f"written into {harness.REPO / 'docs' / 'performance.md'}")
        if args.json:
            args.json.write_text(
                json.dumps(
                    {"facts": facts, "rows": [vars(row) | {"goal": row.goal and row.goal.text} for row in rows]},
                    indent=2,
                ),
                encoding="utf-8",
            )
    finally:
        shutil.rmtree(bench.root, ignore_errors=True)
        if args.venv is None:
            shutil.rmtree(bench.venv, ignore_errors=True)
    return 0


def find_anchors(bench: harness.Bench, install: bool) -> None:
    bench.entr, note = harness.find_entr(install)
    bench.notes.append(note)
    # pytest-watcher 0.6.3 matches its "*.py" pattern against absolute paths,
    # which watchdog 7 no longer accepts (no save ever triggers a run): the
    # anchor runs with the watchdog it was written for.
    problem = harness.pip_install(bench, "pytest-watcher", "watchdog<7")
    ptw = bench.venv / "bin" / "ptw"
    if problem is None and ptw.exists():
        bench.ptw = str(ptw)
        version = subprocess.run([str(ptw), "--version"], stdout=subprocess.PIPE, text=True).stdout.strip()
        bench.notes.append(f"pytest-watcher {version} (with watchdog<7)")
    else:
        bench.notes.append(problem or "pytest-watcher installed no ptw command")


if __name__ == "__main__":
    sys.exit(main())
