"""Files the tool reads back are checked before they are trusted.

The runner's explanation (``explain.json``) is written into the run's scratch
folder, whose path the verifier can read in ``sys.argv``: a verifier may
overwrite it (by mistake or not) while it runs. Whatever it holds, the TUI and
``--json`` get only values of the shape the runner writes: a value of another
type is dropped (as if the runner had not said it), a row that is not an
object is dropped from its list, and keys the runner never writes are left out.

The tool's cache files are checked the same way by :mod:`verifier_tui.engine.cache`
and their owners' checks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

_NONE = type(None)
_TEXT = (str, _NONE)

# A shape is a type or tuple of types (a plain value), a dict (an object with
# those keys; "*" stands for any key), or a one-item list (a list of that shape).
_ROW_SYS_PATH = {"index": int, "path": str, "role": str, "roles": [str], "exists": bool}
_ROW_PARAMETER = {
    "name": str,
    "kind": str,
    "default": _TEXT,
    "has_default": bool,
    "binding": str,
    "source": (str, [str], _NONE),
    "passed": _TEXT,
}
#: The runner's explain document (runner/run_verifier.py, ``_explain_document``),
#: with the ``notices`` the runner adds in explain mode.
EXPLAIN_SHAPE: dict[str, Any] = {
    "explain_version": int,
    "python": {"executable": _TEXT, "version": str, "implementation": str, "flags": {"*": bool}},
    "verifier": _TEXT,
    "workspace": _TEXT,
    "workspace_exists": bool,
    "reward_dir": _TEXT,
    "sys_path": [_ROW_SYS_PATH],
    "modules": {"*": {"resolved": _TEXT, "shadowed": [str]}},
    "preloaded_nemo_gym": _TEXT,
    "preload_failed": [str],
    "available": [str],
    "verify": ({"signature": str, "is_async": bool, "type": str, "defined_in": _TEXT, "line": (int, _NONE)}, _NONE),
    "parameters": [_ROW_PARAMETER],
    "problems": [str],
    "import_error": ({"type": str, "message": str, "traceback": str}, _NONE),
    "would_exit": (int, _NONE),
    "would_call_verify": bool,
    "notices": [str],
}

#: One line of the runner's ``--phases-to`` file (runner/run_verifier.py,
#: ``_write_phase`` and ``_stop``): the keys of every phase together, each
#: with the type the runner writes.
PHASE_LINE_SHAPE: dict[str, Any] = {
    "phase": str,
    "status": str,
    "removed": [{"name": str, "kind": str}],
    "file": _TEXT,
    "available": [str],
    "front": [str],
    "sys_path": [str],
    "module": str,
    "plan": [_ROW_PARAMETER],
    "awaited": bool,
    "result_type": str,
    "text": str,
    "exit": int,
    "problem": str,
    "problems": [str],
    "error": {"type": str, "message": str},
}

_MISSING = object()


def conform(value: Any, shape: Any) -> Any:
    """``value`` cut to ``shape`` (see above), or a sentinel when it does not
    fit at all. Use :func:`checked_document` for a whole document."""
    if isinstance(shape, tuple) and any(isinstance(s, (dict, list)) for s in shape):
        for option in shape:  # e.g. an object or null
            out = conform(value, option)
            if out is not _MISSING:
                return out
        return _MISSING
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            return _MISSING
        out = {}
        for key, item in value.items():
            inner = shape.get(key, shape.get("*", _MISSING)) if isinstance(key, str) else _MISSING
            if inner is _MISSING:
                continue
            kept = conform(item, inner)
            if kept is not _MISSING:
                out[key] = kept
        return out
    if isinstance(shape, list):
        if not isinstance(value, list):
            return _MISSING
        kept = [conform(item, shape[0]) for item in value]
        return [item for item in kept if item is not _MISSING]
    int_shape = shape is int or (isinstance(shape, tuple) and int in shape)
    if int_shape and isinstance(value, bool) and bool not in (shape if isinstance(shape, tuple) else (shape,)):
        return _MISSING  # True is an int to Python, not a line number or an exit code
    return value if isinstance(value, shape) else _MISSING


def checked_document(data: Any, shape: dict[str, Any]) -> dict[str, Any] | None:
    """A document read back from a file, cut to ``shape``; None when it is not
    a JSON object at all."""
    out = conform(data, shape)
    return None if out is _MISSING else out
