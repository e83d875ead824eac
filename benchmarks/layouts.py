"""What the benchmarks run on: a trivial task, the sandbox layout staged by
hand for the bare runner, and big workspaces.

The bare runner is the yardstick of most rows: the runner as the tool starts
it (``python -B -u tests/.ng/run_verifier.py --verifier ... --workspace ...
--reward-dir ...``, in the tool's child environment), on a layout staged once
before timing, so its time is the runner's and nothing else's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from harness import RUNNER, child_env

TRIVIAL_VERIFIER = "def verify(workspace):\n    return 1.0\n"
SMALL_FILES = 5
"""Files in the small task's workspace: as many as the big-workspace rows change."""


def small_task(
    parent: Path, name: str = "small", verifier: str = TRIVIAL_VERIFIER, cases: int = 1, expected: bool = False
) -> Path:
    """A task folder Harbor would load (instruction.md, task.toml, the shim's
    tests/test.sh beside tests/verifier.py), and ``cases`` cases whose
    workspace holds a few small files (with expected.json when asked). A task
    Harbor refuses would time the tool's refusal path and its exit 2."""
    task = parent / name
    (task / "tests").mkdir(parents=True)
    (task / "tests" / "verifier.py").write_text(verifier, encoding="utf-8")
    shutil.copy2(RUNNER.parent / "test.sh", task / "tests" / "test.sh")
    (task / "instruction.md").write_text("Write the files the verifier reads.\n", encoding="utf-8")
    (task / "task.toml").write_text("[verifier]\ntimeout_sec = 60.0\n", encoding="utf-8")
    for index in range(cases):
        case = task / "cases" / (f"c{index:03d}" if cases > 1 else "only")
        fill_small(case / "workspace")
        if expected:
            (case / "expected.json").write_text(json.dumps({"rewards": {"reward": 1.0}}), encoding="utf-8")
    return task


def fill_small(workspace: Path) -> None:
    workspace.mkdir(parents=True)
    for index in range(SMALL_FILES):
        (workspace / f"file{index}.txt").write_text(f"small file {index}\n", encoding="utf-8")


@dataclass
class Bare:
    """The sandbox layout staged by hand: tests/ with .ng/run_verifier.py, a
    workspace (app/) and an empty reward folder (logs/verifier/)."""

    root: Path
    tests: Path
    app: Path
    reward_dir: Path

    @property
    def verifier(self) -> Path:
        return self.tests / "verifier.py"

    @property
    def runner(self) -> Path:
        return self.tests / ".ng" / "run_verifier.py"

    def command(self, python: str) -> list[str]:
        return [
            python,
            "-B",
            "-u",
            str(self.runner),
            "--verifier",
            str(self.verifier),
            "--workspace",
            str(self.app),
            "--reward-dir",
            str(self.reward_dir),
        ]

    def reward(self) -> str | None:
        path = self.reward_dir / "reward.txt"
        return path.read_text(encoding="utf-8") if path.is_file() else None


def bare_layout(
    root: Path, verifier: str = TRIVIAL_VERIFIER, workspace: Path | None = None, tests: Path | None = None
) -> Bare:
    """Stage ``root`` by hand. ``tests`` shares an already staged tests folder
    (read-only for the runner) instead of making one."""
    root.mkdir(parents=True, exist_ok=True)
    if tests is None:
        tests = root / "tests"
        (tests / ".ng").mkdir(parents=True)
        shutil.copyfile(RUNNER, tests / ".ng" / "run_verifier.py")
        (tests / "verifier.py").write_text(verifier, encoding="utf-8")
    app = root / "app"
    if workspace is not None:
        shutil.copytree(workspace, app, symlinks=True)
    else:
        fill_small(app)
    reward_dir = root / "logs" / "verifier"
    reward_dir.mkdir(parents=True)
    return Bare(root, tests, app, reward_dir)


def run_bare(bare: Bare, python: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        bare.command(python), cwd=bare.app, env=child_env(), stdin=subprocess.DEVNULL, capture_output=True
    )


def wrote_reward(bare: Bare, expected: str = "1.0"):
    """A ``timed_run`` check: the runner exited 0 and wrote the reward."""

    def check(done: subprocess.CompletedProcess) -> str | None:
        if done.returncode != 0:
            return f"exit {done.returncode}: {done.stderr.decode(errors='replace').strip()[-300:]}"
        if bare.reward() != expected:
            return f"reward.txt holds {bare.reward()!r}, not {expected!r}"
        return None

    return check


def run_document(expected_reward: float = 1.0):
    """A ``timed_run`` check for ``run --json``: exit 0, and the document says the reward."""

    def check(done: subprocess.CompletedProcess) -> str | None:
        if done.returncode != 0:
            return f"exit {done.returncode}: {done.stdout.decode(errors='replace')[-300:]}"
        try:
            data = json.loads(done.stdout)
        except ValueError:
            return f"no JSON document (exit {done.returncode}): {done.stderr.decode(errors='replace')[-300:]}"
        if data.get("rewards") != {"reward": expected_reward}:
            return f"rewards {data.get('rewards')}, outcome {data.get('outcome')}: {data.get('stderr', '')[-300:]}"
        return None

    return check


def sandbox_of(document: dict) -> str:
    """The staging the tool says was in force (another unit adds the field)."""
    value = document.get("sandbox")
    return str(value) if value else "not reported"


# -- big workspaces ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Size:
    name: str
    files: int
    file_bytes: int
    per_folder: int

    @property
    def label(self) -> str:
        total = self.files * self.file_bytes
        return f"{self.files:,} files / {total / 1e6:.0f} MB"


TWENTY_K = Size("20k", 20_000, 10_000, 200)
"""The big workspace: 20,000 files / 200 MB: 100 folders of 200 files of 10 kB."""
HUNDRED_K = Size("100k", 100_000, 100, 100)
"""The many-files workspace: 100,000 small files: 1,000 folders of 100 files of 100 bytes."""


def build_workspace(path: Path, size: Size) -> Path:
    """Write the workspace (once; an existing one is kept)."""
    done = path.parent / f"{path.name}.complete"
    if done.exists():
        return path
    block = (b"0123456789abcdef" * (size.file_bytes // 16 + 1))[: size.file_bytes]
    for index in range(size.files):
        folder = path / f"d{index // size.per_folder:04d}"
        if index % size.per_folder == 0:
            folder.mkdir(parents=True, exist_ok=True)
        with open(folder / f"f{index:06d}.txt", "wb") as handle:
            handle.write(block)
    done.write_text("", encoding="utf-8")
    os.sync()  # nothing left to write back while the timings run (a no-op on tmpfs)
    return path


def change_files(workspace: Path, size: Size, count: int, round_number: int) -> list[Path]:
    """Rewrite ``count`` files spread over the workspace, as an editor or a
    build would (same size, new content)."""
    changed = []
    for k in range(count):
        index = (round_number * 7919 + k * (size.files // count)) % size.files
        path = workspace / f"d{index // size.per_folder:04d}" / f"f{index:06d}.txt"
        stamp = f"round {round_number} file {k}\n".encode()
        path.write_bytes((stamp * (size.file_bytes // len(stamp) + 1))[: size.file_bytes])
        changed.append(path)
    return changed
