"""How much the runner costs over the least a sandbox could do.

Stages a sandbox in a temporary folder (tests/.ng/run_verifier.py, a trivial
tests/verifier.py, app/, logs/verifier/) and times, interleaved, two commands
that produce the same reward.txt:

  floor   python -c '<one line>': import pathlib, compile+exec the verifier's
          source into a dict, call verify(pathlib.Path(workspace)), write
          repr(float(result)) to reward.txt
  runner  python tests/.ng/run_verifier.py --verifier ... --workspace ...
          --reward-dir ...

Each is started with subprocess and timed with time.perf_counter, alternating
floor, runner, floor, runner, ... so drift in the machine's load hits both.
Prints each median and the ratio runner/floor. A report, not a test: it exits 0
whatever the numbers (and says whether the target ratio holds).

    python benchmarks/runner_overhead.py [--runs N] [--python EXE]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RUNNER_SOURCE = REPO / "runner" / "run_verifier.py"
TARGET_RATIO = 1.15

VERIFIER = "def verify(workspace):\n    return 1.0\n"

FLOOR = (
    "import pathlib, sys; v, w, r = sys.argv[1:4]; g = {'__name__': 'verifier', '__file__': v}; "
    "exec(compile(open(v).read(), v, 'exec'), g); "
    "open(r + '/reward.txt', 'w').write(repr(float(g['verify'](pathlib.Path(w)))))"
)


def stage(root):
    tests = root / "tests"
    (tests / ".ng").mkdir(parents=True)
    (root / "app").mkdir()
    reward_dir = root / "logs" / "verifier"
    reward_dir.mkdir(parents=True)
    runner = tests / ".ng" / "run_verifier.py"
    shutil.copyfile(str(RUNNER_SOURCE), str(runner))
    verifier = tests / "verifier.py"
    verifier.write_text(VERIFIER, encoding="utf-8")
    return runner, verifier, root / "app", reward_dir


def clean_env():
    return {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}


def timed(command, cwd, env, reward_file):
    if reward_file.exists():
        reward_file.unlink()
    start = time.perf_counter()
    done = subprocess.run(command, cwd=str(cwd), env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    problem = None
    if done.returncode != 0:
        problem = "exit %d: %s" % (done.returncode, done.stderr.decode("utf-8", "replace").strip())
    elif not reward_file.exists() or reward_file.read_text(encoding="utf-8") != "1.0":
        problem = "no reward.txt with 1.0 was written"
    return elapsed, problem


def describe(samples):
    ordered = sorted(samples)
    return "median %7.2f ms   min %7.2f ms   p90 %7.2f ms" % (
        1000 * statistics.median(ordered), 1000 * ordered[0], 1000 * ordered[int(0.9 * (len(ordered) - 1))])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40, help="timed runs of each command (default 40, at least 20)")
    parser.add_argument("--python", default=sys.executable, help="interpreter for both commands (default: this one)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs of each first (default 3)")
    args = parser.parse_args(argv)
    runs = max(args.runs, 20)
    python = shutil.which(args.python) or args.python

    with tempfile.TemporaryDirectory(prefix="runner-overhead-") as tmp:
        root = Path(tmp)
        runner, verifier, workspace, reward_dir = stage(root)
        reward_file = reward_dir / "reward.txt"
        env = clean_env()
        commands = {
            "floor": [python, "-c", FLOOR, str(verifier), str(workspace), str(reward_dir)],
            "runner": [python, str(runner), "--verifier", str(verifier), "--workspace", str(workspace),
                       "--reward-dir", str(reward_dir)],
        }
        samples = {"floor": [], "runner": []}
        problems = {}
        for index in range(args.warmup + runs):
            for name in ("floor", "runner"):
                elapsed, problem = timed(commands[name], root, env, reward_file)
                if problem:
                    problems.setdefault(name, problem)
                if index >= args.warmup:
                    samples[name].append(elapsed)

    version = subprocess.run([python, "-c", "import sys; print(sys.version.split()[0])"],
                             stdout=subprocess.PIPE, env=clean_env()).stdout.decode().strip()
    print("python  %s (%s)" % (python, version))
    print("runs    %d of each, interleaved, after %d warm-up runs of each" % (runs, args.warmup))
    for name in ("floor", "runner"):
        print("%-7s %s" % (name, describe(samples[name])))
    for name, problem in sorted(problems.items()):
        print("WARNING %s did not do its job: %s" % (name, problem))
    ratio = statistics.median(samples["runner"]) / statistics.median(samples["floor"])
    print("ratio   runner/floor (medians) = %.3f" % ratio)
    print("target: ratio <= %.2f -> %s" % (TARGET_RATIO, "holds" if ratio <= TARGET_RATIO else "DOES NOT hold"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
