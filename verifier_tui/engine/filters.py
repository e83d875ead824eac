"""Which changed paths no verifier run depends on: caches, version-control
internals and editors' temporary files, judged on paths *relative to* a
watched root (a workspace under a folder named ``.tox`` must still be watched,
which a filter on absolute paths, like watchfiles' ``DefaultFilter``, gets wrong)."""

from __future__ import annotations

from collections.abc import Iterable

# The one list of folders to skip, shaped as watchfiles' ``DefaultFilter``
# (folder names, then file names): each use takes the part it skips.

#: Folder names whose whole subtree no run depends on: version-control
#: internals and the caches tools write next to code. Their changes start no
#: run, and no search for tasks or verifiers looks into them.
NOISE_DIRS = frozenset(
    {
        "__pycache__",
        ".git",
        ".hg",
        ".svn",
        ".jj",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
    }
)
#: Installed software kept beside the user's files (environments and their
#: packages): a run may read it, so its changes still start one, but it holds
#: no task, case or verifier of the user's.
INSTALLED_DIRS = frozenset({".venv", "venv", "node_modules", ".tox", ".nox", "site-packages"})
#: What a search for tasks or verifiers never enters.
NOT_SEARCHED = NOISE_DIRS | INSTALLED_DIRS
#: Bytecode caches: stale copies of code, never copied into a sandbox's mirror.
BYTECODE = "__pycache__"

#: File-name suffixes of compiled files and of editors' temporary files.
_NOISE_SUFFIXES = (
    ".pyc",
    ".pyo",
    "~",  # vim/emacs backup (vim's atomic save renames x to x~ first)
    "___jb_tmp___",  # JetBrains "safe write": x___jb_tmp___ then renamed over x
    "___jb_old___",  # JetBrains: the old x renamed away, then deleted
    ".kate-swp",
    ".DS_Store",
)


def _is_vim_swap(name: str) -> bool:
    # .x.swp, then .swo, .swn ... .swa as vim finds earlier ones in use; .swx is
    # its probe for whether swap files can be created at all.
    return len(name) > 4 and name[-4:-1] == ".sw" and (name[-1] == "x" or "a" <= name[-1] <= "p")


def _is_vim_probe(name: str) -> bool:
    # Vim checks it may create files in the folder by creating and deleting
    # "4913" (or 5036, 5159, ...: it adds 123 until the name is free).
    if not name.isdigit() or len(name) > 5:
        return False
    number = int(name)
    return number >= 4913 and (number - 4913) % 123 == 0


def is_noise(relative: Iterable[str]) -> bool:
    """Whether a path, given as its parts *relative to a watched root*, is one
    no verifier run depends on: caches, VCS internals, editors' temporary files.

    Relative on purpose: a workspace that lives under a folder named ``.tox``
    or ``.git`` must still be watched, which a filter on absolute paths (like
    watchfiles' ``DefaultFilter``) gets wrong.
    """
    parts = tuple(relative)
    if not parts:
        return False
    if any(part in NOISE_DIRS for part in parts):
        return True
    name = parts[-1]
    return (
        name.endswith(_NOISE_SUFFIXES)
        or _is_vim_swap(name)
        or _is_vim_probe(name)
        or name.startswith(".#")  # emacs lock file
        or (len(name) > 2 and name.startswith("#") and name.endswith("#"))  # emacs auto-save
        or name.startswith(".goutputstream-")  # GIO (gedit) atomic save
    )
