"""The sandbox layout, staged in the tool's own scratch folder.

```
<stage>/tests/                 a mirror of the task's tests folder
<stage>/tests/.ng/run_verifier.py   the runner (and nemo_gym/verifiers, vendored)
<stage>/app/                   a mirror of the workspace
<stage>/logs/verifier/         the reward folder, emptied before every run
<stage>/inputs/                a wrapped plain-text response, explain output
```

A session keeps one stage per selection in its scratch folder (see
:class:`Scratch`), so re-runs only copy what changed (see
:mod:`verifier_tui.engine.mirror`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from verifier_tui.engine.mirror import Mirror, make_real_dir, remove_path, remove_tree
from verifier_tui.engine.record import field, record
from verifier_tui.runner_source import runner_path

# What a stage holds; anything else in it was left there by a verifier.
_STAGE_FOLDERS = {"tests", "app", "logs", "inputs"}


@record
class Stage:
    """One staged sandbox layout, reused across re-runs of the same inputs."""

    root: Path
    tests: Mirror | None = None
    workspace: Mirror | None = None
    vendored_from: Path | None = None
    runner_from: Path | None = None  # the runner script placed in .ng/ (ours or the task's own)
    notes: list[str] = field(default_factory=list)

    @property
    def tests_dir(self) -> Path:
        return self.root / "tests"

    @property
    def ng_dir(self) -> Path:
        return self.root / "tests" / ".ng"

    @property
    def app_dir(self) -> Path:
        return self.root / "app"

    @property
    def reward_dir(self) -> Path:
        return self.root / "logs" / "verifier"

    @property
    def inputs_dir(self) -> Path:
        return self.root / "inputs"

    def prepare(self, tests_source: Path, workspace: Path | None, nemo_gym_verifiers: Path | None,
                runner: Path | None = None, task_vendors_nemo_gym: bool = False) -> list[str]:
        """Bring the layout up to date for a run; returns notes for the user.

        ``runner`` is the runner script to place (default: ours). When the
        task vendors its own ``tests/.ng/nemo_gym`` (a published task), that
        copy is staged as it is, the one the sandbox imports, and
        ``nemo_gym_verifiers`` is not vendored over it.

        The last run's verifier could reach this whole layout (``workspace.parent``
        is the stage): whatever it renamed, replaced by a link or left beside
        the four folders is put right first, and no link is ever followed."""
        notes: list[str] = []
        self._tidy_root()
        # The reward folder first: whatever happens next, no verdict of an
        # earlier run can be read as this one's.
        make_real_dir(self.reward_dir.parent)
        if os.path.lexists(self.reward_dir):
            remove_path(self.reward_dir)
        self.reward_dir.mkdir()
        if workspace is not None and not workspace.is_dir():
            raise StagingError(f"the workspace {workspace} is not there any more (deleted or moved?)")
        keep = {".ng/run_verifier.py", ".ng/verifier.py"} | (set() if task_vendors_nemo_gym else {".ng/nemo_gym"})
        if self.tests is None or self.tests.source != tests_source or self.tests.keep != keep:
            if os.path.lexists(self.tests_dir):
                remove_path(self.tests_dir)
            self.tests = Mirror(tests_source, self.tests_dir, keep=frozenset(keep))
            self.vendored_from = None
        self.tests.sync()
        notes += [f"tests: {n}" for n in self.tests.notes]
        make_real_dir(self.ng_dir)
        self._place_runner(runner or runner_path())
        if not task_vendors_nemo_gym:
            self._vendor(nemo_gym_verifiers)
        if workspace is None:
            self.workspace = None
            # An empty scratch workspace, emptied again if a verifier wrote into it.
            if os.path.lexists(self.app_dir):
                remove_path(self.app_dir)
            self.app_dir.mkdir()
        else:
            if self.workspace is None or self.workspace.source != workspace:
                if os.path.lexists(self.app_dir):
                    remove_path(self.app_dir)
                self.workspace = Mirror(workspace, self.app_dir)
            self.workspace.sync()
            notes += [f"workspace: {n}" for n in self.workspace.notes]
        make_real_dir(self.inputs_dir)
        return notes

    def _tidy_root(self) -> None:
        make_real_dir(self.root)
        for entry in os.scandir(self.root):
            if entry.name not in _STAGE_FOLDERS:
                remove_path(Path(entry.path))

    def place_dataset_verifier(self, verifier: Path) -> None:
        shutil.copyfile(verifier, self.ng_dir / "verifier.py")

    def _place_runner(self, source: Path) -> None:
        target = self.ng_dir / "run_verifier.py"
        try:
            sst, tst = source.stat(), target.stat()
            if self.runner_from == source and sst.st_size == tst.st_size and sst.st_mtime_ns == tst.st_mtime_ns:
                return
        except OSError:
            pass
        shutil.copy2(source, target)
        self.runner_from = source

    def _vendor(self, verifiers: Path | None) -> None:
        """Vendor nemo_gym/verifiers beside the runner, as the shim does."""
        package = self.ng_dir / "nemo_gym"
        if verifiers is None:
            if package.exists():
                shutil.rmtree(package, ignore_errors=True)
            self.vendored_from = None
            return
        if self.vendored_from == verifiers and package.is_dir():
            return
        shutil.rmtree(package, ignore_errors=True)
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("", encoding="utf-8")
        shutil.copytree(verifiers, package / "verifiers", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        self.vendored_from = verifiers


class StagingError(Exception):
    """The layout cannot be staged (the chosen workspace is gone): the run
    does not start, and this says why."""


class Scratch:
    """The tool's private scratch folder: one per session, removed on close."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="verifier-tui-"))
        self._count = 0

    def new_stage(self) -> Stage:
        self._count += 1
        root = self.root / f"stage-{self._count}"
        root.mkdir()
        return Stage(root)

    def close(self) -> None:
        remove_tree(self.root)
