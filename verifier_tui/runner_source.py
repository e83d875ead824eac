"""Where the runner script and its shim are, for staging the runner into a
sandbox layout and for placing both in a task (``new``, ``vendor``).

The repository holds one source of each, ``runner/run_verifier.py`` and
``runner/test.sh``. A wheel carries byte-identical copies in
``verifier_tui/_runner/`` (see pyproject.toml); a source checkout or editable
install uses the originals.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def _bundled(name: str) -> Path:
    for candidate in (_PACKAGE_DIR / "_runner" / name, _PACKAGE_DIR.parent / "runner" / name):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(
        f"verifier-tui cannot find its {name}: the installation is incomplete; reinstall it with pip"
    )


@lru_cache(maxsize=1)
def runner_path() -> Path:
    """The runner script this installation uses."""
    return _bundled("run_verifier.py")


def shim_path() -> Path:
    """The ``tests/test.sh`` shim that hands a Harbor run over to the runner."""
    return _bundled("test.sh")
