"""The Harbor trial engine never imports Textual, the command line or asyncio
(``run TRIAL`` is a one-shot command, like ``run``)."""

from __future__ import annotations

import json
import os
import pkgutil
import subprocess
import sys

import pytest

import verifier_tui.engine.harbor

MODULES = sorted(
    f"verifier_tui.engine.harbor.{m.name}" for m in pkgutil.iter_modules(verifier_tui.engine.harbor.__path__)
)


def test_every_module_is_listed():
    assert len(MODULES) >= 12 and "verifier_tui.engine.harbor.replay" in MODULES


@pytest.mark.parametrize("module", MODULES)
def test_module_imports_no_textual_no_cli_no_asyncio(module, tmp_path):
    code = (
        f"import {module}, sys, json; print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == "
        "'textual' or m in ('asyncio', 'verifier_tui.cli', 'verifier_tui.commands.headless', 'argparse'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "XDG_CACHE_HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
