"""What `verifier-tui run --json` costs over the bare runner on the same verifier.

Times, interleaved (tool, bare, tool, bare, ...), two commands that run the same
verifier on the same workspace with the same interpreter and produce the same
verdict:

  tool  the `verifier-tui` console script: `verifier-tui run --json --python EXE
        TASK --case CASE` (discovery, staging in its own scratch folder, the
        runner, Harbor's verdict, the JSON document, clean-up)
  bare  the runner on a sandbox layout staged by hand once, before timing:
        `EXE -B -u tests/.ng/run_verifier.py --verifier tests/verifier.py
        --workspace app --reward-dir logs/verifier` (plus --task-data /
        --response when the case has them), with the task's [verifier] env

Each command is started with subprocess and timed with time.perf_counter from
the outside. Prints each median, and the ratio tool/bare against the target of
the engine issue (2.0). A report, not a test: it exits 0 whatever the numbers.

The interpreter matters: a pyenv shim is a shell script that costs more than
Python itself, so EXE is the real interpreter behind `python3` as the tool's own
probe resolves it (the same one the tool would run), or --python.

Bytecode matters too: an installed package has its .pyc files (pip compiles
them), but a source checkout under PYTHONDONTWRITEBYTECODE=1 recompiles every
module at every start. So the package's bytecode is compiled once before timing
(into its __pycache__ folders, which git ignores); --no-compile skips that.

    python benchmarks/run_overhead.py [--task DIR] [--case NAME] [--runs N] [--python EXE]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from verifier_tui.engine.cases import wrap_text_response  # noqa: E402
from verifier_tui.engine.discovery import read_task_config  # noqa: E402
from verifier_tui.engine.run import child_env  # noqa: E402
from verifier_tui.engine.staging import probe_interpreter  # noqa: E402
from verifier_tui.runner_source import runner_path  # noqa: E402

TARGET_RATIO = 2.0


def real_python(name: str | None) -> str:
    """The interpreter to use: --python as given (resolved on PATH), else the
    real executable behind `python3`, asked the way the tool asks it."""
    if name:
        found = shutil.which(name) if os.sep not in name else name
        if not found:
            sys.exit(f"run_overhead: {name}: not found")
        return os.path.abspath(found)
    interpreter = probe_interpreter("python3")
    if interpreter.executable is None:
        sys.exit(f"run_overhead: cannot resolve python3: {interpreter.error}")
    return interpreter.executable


def tool_command() -> str:
    beside = Path(sys.executable).parent / "verifier-tui"
    found = str(beside) if beside.exists() else shutil.which("verifier-tui")
    if not found:
        sys.exit("run_overhead: no verifier-tui console script (install the project first)")
    return found


def stage_bare(task: Path, case: Path | None, root: Path) -> tuple[list[str], Path]:
    """The sandbox layout by hand: tests/ with .ng/run_verifier.py, app/, logs/verifier/."""
    tests = root / "tests"
    shutil.copytree(task / "tests", tests)
    (tests / ".ng").mkdir(exist_ok=True)
    shutil.copyfile(runner_path(), tests / ".ng" / "run_verifier.py")
    app = root / "app"
    workspace = case / "workspace" if case is not None else None
    if workspace is not None and workspace.is_dir():
        shutil.copytree(workspace, app, symlinks=True)
    else:
        app.mkdir()
    reward_dir = root / "logs" / "verifier"
    reward_dir.mkdir(parents=True)
    args = ["--verifier", str(tests / "verifier.py"), "--workspace", str(app), "--reward-dir", str(reward_dir)]
    for candidate in ([case / "task_data.json"] if case else []) + [task / "task_data.json", task / "tests" / "task_data.json"]:
        if candidate.is_file():
            args += ["--task-data", str(candidate)]
            break
    if case is not None and (case / "response.json").is_file():
        args += ["--response", str(case / "response.json")]
    elif case is not None and (case / "response.txt").is_file():
        wrapped = root / "response.json"
        wrapped.write_text(json.dumps(wrap_text_response((case / "response.txt").read_text(encoding="utf-8"))))
        args += ["--response", str(wrapped)]
    return args, reward_dir


def read_bare_verdict(reward_dir: Path) -> dict | None:
    if (reward_dir / "reward.json").is_file():
        return json.loads((reward_dir / "reward.json").read_text(encoding="utf-8"))
    if (reward_dir / "reward.txt").is_file():
        return {"reward": float((reward_dir / "reward.txt").read_text(encoding="utf-8"))}
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", type=Path, default=REPO / "examples" / "tasks" / "hello-file")
    parser.add_argument("--case", default=None, help="a case of the task (default: its first case)")
    parser.add_argument("--runs", type=int, default=30, help="timed runs of each command (default 30, at least 20)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs of each first (default 3)")
    parser.add_argument("--python", default=None, help="the interpreter for both (default: the real python3)")
    parser.add_argument("--no-compile", action="store_true", help="do not compile the package's bytecode first")
    args = parser.parse_args(argv)
    if not args.no_compile:
        import compileall

        import verifier_tui

        compileall.compile_dir(str(Path(verifier_tui.__file__).parent), quiet=1)
    runs = max(args.runs, 20)
    python = real_python(args.python)
    tool = tool_command()

    with tempfile.TemporaryDirectory(prefix="run-overhead-") as tmp:
        root = Path(tmp)
        # A private copy of the task: nothing the runs do can touch the repository.
        task = root / "task"
        shutil.copytree(args.task, task, symlinks=True)
        cases = sorted(p for p in (task / "cases").iterdir() if p.is_dir()) if (task / "cases").is_dir() else []
        case = (task / "cases" / args.case) if args.case else (cases[0] if cases else None)
        bare_args, reward_dir = stage_bare(task, case, root / "bare")
        bare_env = child_env(read_task_config(task).env)
        commands = {
            "tool": [tool, "run", "--json", "--python", python, str(task)] + (["--case", case.name] if case else []),
            "bare": [python, "-B", "-u", str(root / "bare" / "tests" / ".ng" / "run_verifier.py")] + bare_args,
        }
        envs = {"tool": dict(os.environ), "bare": bare_env}
        cwds = {"tool": str(root), "bare": str(root / "bare" / "app")}
        samples: dict[str, list[float]] = {"tool": [], "bare": []}
        child_s: list[float] = []
        verdicts: dict[str, object] = {}
        for index in range(args.warmup + runs):
            for name in ("tool", "bare"):
                for stale in ("reward.json", "reward.txt"):
                    (reward_dir / stale).unlink(missing_ok=True)
                start = time.perf_counter()
                done = subprocess.run(commands[name], cwd=cwds[name], env=envs[name], stdin=subprocess.DEVNULL,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                elapsed = time.perf_counter() - start
                if name == "tool":
                    data = json.loads(done.stdout)
                    verdicts["tool"] = data["rewards"]
                    if index >= args.warmup:
                        child_s.append(data["duration_s"])
                else:
                    verdicts["bare"] = read_bare_verdict(reward_dir)
                if index >= args.warmup:
                    samples[name].append(elapsed)

    version = subprocess.run([python, "-c", "import sys; print(sys.version.split()[0])"],
                             stdout=subprocess.PIPE, text=True).stdout.strip()
    print(f"task     {args.task} (case {case.name if case else '-'})")
    print(f"python   {python} ({version})")
    print(f"tool     {tool}")
    print(f"runs     {runs} of each, interleaved, after {args.warmup} warm-up runs of each")
    for name in ("tool", "bare"):
        ordered = sorted(samples[name])
        print(f"{name:<8} median {1000 * statistics.median(ordered):7.1f} ms   min {1000 * ordered[0]:7.1f} ms"
              f"   max {1000 * ordered[-1]:7.1f} ms")
    print(f"runner   median {1000 * statistics.median(child_s):7.1f} ms inside the tool (its own duration_s)")
    if verdicts.get("tool") != verdicts.get("bare"):
        print(f"WARNING  the verdicts differ: tool {verdicts.get('tool')} vs bare {verdicts.get('bare')}")
    ratio = statistics.median(samples["tool"]) / statistics.median(samples["bare"])
    print(f"ratio    tool/bare (medians) = {ratio:.2f}")
    print(f"target   ratio <= {TARGET_RATIO:.1f} -> {'holds' if ratio <= TARGET_RATIO else 'DOES NOT hold'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
