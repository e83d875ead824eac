"""The tool's own cache: small files under ``$XDG_CACHE_HOME/verifier-tui``.

What is remembered between runs is what would be felt at every start of
``verifier-tui run`` if learnt again: what an interpreter says about itself
(a child Python, about 18 ms: :mod:`verifier_tui.engine.interpreter`), what a
``task.toml`` says (importing tomllib, about 6 ms: :mod:`verifier_tui.engine.task.discovery`),
both JSON, and the runner's extras compiled (:func:`verifier_tui.engine.sandbox.stage.extras_bytecode`).

Written privately: the folder is made 0700 and each file is written 0600 to a
temporary name beside it, then renamed over the old one, so a reader never
sees half a file. Read back with suspicion: a file that is a symbolic link,
that is not the user's own, that others may write, or (for the JSON ones)
that is not a JSON object is ignored, and each entry is kept only when the caller's check accepts
its shape. Whatever fails costs a fresh answer, never a traceback.
"""

from __future__ import annotations

import json
import os
import stat
from typing import TYPE_CHECKING

from verifier_tui.engine import untrusted

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

LIMIT = 16 * untrusted.MB
"""What a cache file holds is kilobytes; a bigger one is not ours."""


def folder() -> str:
    """``$XDG_CACHE_HOME/verifier-tui`` (a relative XDG_CACHE_HOME is ignored,
    as the XDG specification says), else ``~/.cache/verifier-tui``."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "verifier-tui")


def read(name: str) -> bytes | None:
    """The bytes of cache file ``name``; None when it is missing, unreadable
    or not ours."""
    # Not following a link: one planted in place of the file is refused,
    # whatever it points to.
    handle, _ = untrusted.open_regular(os.path.join(folder(), name), beneath=folder())
    if handle is None:
        return None
    try:
        with handle:
            st = os.fstat(handle.fileno())
            if st.st_uid != os.getuid() or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
                return None
            raw = handle.read(LIMIT + 1)
    except OSError:
        return None
    return raw if len(raw) <= LIMIT else None


def load(name: str, valid: Callable[[Any], bool]) -> dict[str, Any]:
    """The entries of cache file ``name`` that ``valid`` accepts; {} when the
    file is missing, unreadable, not ours or not a JSON object."""
    raw = read(name)
    data, problem = untrusted.parse_json(raw, name) if raw is not None else (None, "missing")
    if problem is not None or not isinstance(data, dict):
        return {}
    out = {}
    for key, entry in data.items():
        try:
            if valid(entry):
                out[key] = entry
        except (TypeError, ValueError, KeyError, AttributeError):
            pass  # a check that trips over a wrong shape: not valid either
    return out


def store(name: str, entries: dict[str, Any], keep: int = 50) -> None:
    """Write ``entries`` (the last ``keep`` of them, in insertion order) as
    cache file ``name``. A cache that cannot be written only costs a fresh
    answer next time: errors are swallowed.

    Kept small: the whole file is read and written again at each miss, and a
    file of 500 remembered task.toml documents (290 KB) took 40 ms to load
    and store, five times what it saved."""
    try:
        data = json.dumps(dict(list(entries.items())[-keep:]), allow_nan=False).encode("utf-8")
    except (TypeError, ValueError):  # ValueError: a NaN, which JSON cannot hold
        return
    write(name, data)


def write(name: str, data: bytes) -> None:
    """Cache file ``name`` made to hold ``data``, privately and whole (see
    the module's docstring); errors are swallowed."""
    import tempfile

    where = folder()
    try:
        os.makedirs(where, mode=0o700, exist_ok=True)
        os.chmod(where, 0o700)  # made wider by an older version or by hand: ours alone again
        handle, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=where)  # 0600
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(temporary, os.path.join(where, name))
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError:
        pass


def discard() -> None:
    """Forget everything remembered: a run in the copy sandbox wrote here,
    and what it wrote (an interpreter's folders, a task's settings, the
    runner's extras compiled) would shape the views of later runs. Nothing
    is followed: a link put in the folder's place is removed as a link."""
    import shutil

    where = folder()
    try:
        if os.path.islink(where):
            os.unlink(where)
        else:
            shutil.rmtree(where)
    except OSError:
        pass
