"""The Harbor trial engine never imports Textual, the command line or asyncio
(``run TRIAL`` is a one-shot command, like ``run``)."""

from __future__ import annotations

import json
import os
import pkgutil
import subprocess
import sys

import verifier_tui.engine.harbor

MODULES = sorted(
    f"verifier_tui.engine.harbor.{m.name}" for m in pkgutil.iter_modules(verifier_tui.engine.harbor.__path__)
)


def test_every_module_is_listed():
    assert len(MODULES) >= 12 and "verifier_tui.engine.harbor.replay" in MODULES


FORBIDDEN = (
    "m.split('.')[0] == 'textual' or m in ('asyncio', 'verifier_tui.cli', 'verifier_tui.commands.headless', 'argparse')"
)


def test_no_module_imports_textual_the_cli_or_asyncio(tmp_path):
    """Each module imported in turn in one interpreter: the first one after
    whose import a forbidden module is loaded is the one that brings it (one
    imported earlier would have brought it first)."""
    code = (
        "import sys, json\n"
        f"for module in {MODULES!r}:\n"
        "    __import__(module)\n"
        f"    loaded = sorted(m for m in sys.modules if {FORBIDDEN})\n"
        "    if loaded:\n"
        "        break\n"
        "print(json.dumps([module, loaded]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "XDG_CACHE_HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    module, loaded = json.loads(done.stdout)
    assert loaded == [], f"importing {module} imports {loaded}"
