"""The runner and its shim ship inside the wheel, byte-identical to their one source."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.helpers.harbor import RUNNER
from tests.helpers.tasks import REPO

WHEEL_PATH = "verifier_tui/_runner/run_verifier.py"
SHIM = REPO / "runner" / "test.sh"
EXTRAS = REPO / "runner" / "run_verifier_extras.py"


def _editable() -> bool:
    try:
        dist = importlib.metadata.distribution("verifier-tui")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("verifier-tui is not installed in this environment")
    text = dist.read_text("direct_url.json")
    return bool(text and json.loads(text).get("dir_info", {}).get("editable"))


def test_repository_holds_exactly_one_runner_source():
    """Tracked files: one run_verifier.py, and no other file with its text."""
    listed = subprocess.run(["git", "ls-files"], capture_output=True, text=True, cwd=REPO)
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    files = [REPO / name for name in listed.stdout.splitlines()]
    assert [p for p in files if p.name == "run_verifier.py"] == [RUNNER]
    source = RUNNER.read_bytes()
    assert [p for p in files if p.suffix == ".py" and p != RUNNER and p.is_file() and p.read_bytes() == source] == []


def test_installed_package_finds_a_runner_identical_to_the_source():
    """In a fresh interpreter that does not see the checkout (-I), the installed
    package's runner is the repository's runner byte for byte; a plain
    (non-editable) install carries it inside the package."""
    editable = _editable()
    code = "import verifier_tui.runner_source as r; print(r.runner_path()); print(r.extras_path())"
    out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, cwd="/", check=True)
    found, extras = map(Path, out.stdout.split())
    assert found.read_bytes() == RUNNER.read_bytes()
    assert extras == found.with_name(EXTRAS.name) and extras.read_bytes() == EXTRAS.read_bytes()
    if not editable:
        assert found.as_posix().endswith(WHEEL_PATH)
        assert found != RUNNER and "site-packages" in found.parts


def test_wheel_carries_the_runner(tmp_path):
    """Build the wheel as pip would and look inside it."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(tmp_path), str(REPO)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"could not build a wheel here: {done.stderr.strip().splitlines()[-1:]}")
    wheel = next(tmp_path.glob("verifier_tui-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        assert archive.read(WHEEL_PATH) == RUNNER.read_bytes()
        assert archive.read("verifier_tui/_runner/" + EXTRAS.name) == EXTRAS.read_bytes()
        assert archive.read("verifier_tui/_runner/test.sh") == SHIM.read_bytes()
        names = archive.namelist()
    assert "verifier_tui/cli.py" in names
    assert any(n.endswith("entry_points.txt") for n in names)


def test_every_example_carries_the_one_shim():
    """The examples' shims are what `new` and `vendor` place: runner/test.sh."""
    from tests.helpers.tasks import EXAMPLES

    shims = [p for p in EXAMPLES.glob("*/tests/test.sh") if p.parent.parent.name != "plain-test-sh"]
    assert len(shims) >= 6
    assert [p for p in shims if p.read_bytes() != SHIM.read_bytes()] == []
