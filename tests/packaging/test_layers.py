"""The package's layers hold: import-linter checks the contracts written in
pyproject.toml ([tool.importlinter]): the engine never imports Textual or a
face, the faces sit over the shared words over the engine, the headless
commands never import Textual, and no module circle exists."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.helpers.tasks import HANG_GUARD_S, REPO, write

LINT = [sys.executable, "-c", "from importlinter.cli import lint_imports_command as c; c()", "--no-cache"]


def lint(where: Path) -> subprocess.CompletedProcess:
    return subprocess.run(LINT, cwd=where, capture_output=True, text=True, timeout=HANG_GUARD_S)


def test_the_contracts_are_kept():
    done = lint(REPO)
    assert done.returncode == 0, done.stdout + done.stderr
    contracts = (REPO / "pyproject.toml").read_text().count("[[tool.importlinter.contracts]]")
    assert f"{contracts} kept, 0 broken" in done.stdout


def test_an_engine_module_importing_textual_breaks_them(tmp_path):
    """The check can fail: a copy of the package whose engine imports Textual."""
    shutil.copytree(REPO / "verifier_tui", tmp_path / "verifier_tui", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    write(tmp_path / "verifier_tui" / "engine" / "shortcut.py", "import textual\nfrom verifier_tui import cli\n")
    done = lint(tmp_path)
    assert done.returncode != 0
    assert "The engine imports neither Textual nor the faces BROKEN" in done.stdout
    assert "verifier_tui.engine.shortcut -> textual" in done.stdout
