"""Where the stdlib runner script is, for staging it into a sandbox layout.

The repository holds one source, ``runner/run_verifier.py``. A wheel carries a
byte-identical copy as ``verifier_tui/_runner/run_verifier.py`` (see
pyproject.toml); a source checkout or editable install uses the original.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


@lru_cache(maxsize=1)
def runner_path() -> Path:
    """The runner script this installation uses."""
    for candidate in (
        _PACKAGE_DIR / "_runner" / "run_verifier.py",
        _PACKAGE_DIR.parent / "runner" / "run_verifier.py",
    ):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(
        "verifier-tui cannot find its runner script (run_verifier.py): the installation is incomplete; "
        "reinstall it with pip"
    )
