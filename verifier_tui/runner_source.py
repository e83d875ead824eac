"""Where the runner script, its extras and its shim are, for staging the
runner into a sandbox layout and for placing the runner and the shim in a task
(``new``, ``vendor``).

The repository holds one source of each, ``runner/run_verifier.py``,
``runner/run_verifier_extras.py`` and ``runner/test.sh``. A wheel carries
byte-identical copies in ``verifier_tui/_runner/`` (see pyproject.toml); a
source checkout or editable install uses the originals.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent

EXTRAS = "run_verifier_extras.py"
"""What only verifier-tui asks of the runner (--explain-to, --phases-to, the
held start, ...): the runner loads it from beside itself when one is asked for."""


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


def extras_path() -> Path:
    """The runner's extras, staged beside it for the tool's own runs."""
    return _bundled(EXTRAS)


def shim_path() -> Path:
    """The ``tests/test.sh`` shim that hands a Harbor run over to the runner."""
    return _bundled("test.sh")
