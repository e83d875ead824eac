"""``task.toml`` as Harbor 0.26.0 would load it: what the tool honours, and
whether Harbor would refuse the task.

Harbor loads a task with ``TaskConfig.model_validate_toml``
(``harbor/models/task/task.py``, ``Task.__init__``; the models are in
``harbor/models/task/config.py``): ``tomllib.loads``, then pydantic's
validation in its default, lax mode. So Harbor

* refuses a file that is not TOML (``TOMLDecodeError``) or cannot be read;
* ignores keys it does not know (pydantic's default ``extra="ignore"``);
* refuses a value of the wrong type (``ValidationError``): a ``str`` field
  takes only a string (``version = 1`` is refused), a ``float`` field takes an
  integer, a float, a boolean or a string holding a number (``"600"``), and
  ``nan`` and ``inf`` too; an ``int`` field a whole number; ``dict[str, str]``
  (``[verifier] env``) only strings as values; an enum only its words.

The tool goes on running a task Harbor would refuse (it is useful while the
file is being edited), and says so: :attr:`TaskConfig.refused`, shown as the
verdict, and ``run`` and ``test`` exit 2. Only the fields below are checked
(the ones the tool reads, and the common ones of ``[task]``, ``[metadata]``,
``[agent]``, ``[environment]``, ``[solution]``, ``[[steps]]``); the rest of
Harbor's schema (network policies, healthchecks, MCP servers, ...) is not.

A timeout Harbor accepts but no run can honour (``nan``, ``inf``, zero or
less) is reported and replaced by the default, the same in every command.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

from verifier_tui.engine.record import field, record

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any


@record(frozen=True)
class TaskConfig:
    """What the tool honours from ``task.toml``."""

    timeout_sec: float | None = None
    env: dict[str, str] = field(default_factory=dict)
    name: str | None = None
    problems: tuple[str, ...] = ()
    refused: str | None = None
    """Why Harbor would refuse to load this task at all (None: it would load it)."""


# harbor/constants.py ORG_NAME_PATTERN, for [task] name.
_ORG_NAME = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9._-]*/[a-zA-Z0-9][a-zA-Z0-9._-]*$")

# The checked part of Harbor's schema: dotted path -> kind. "float", "int",
# "str", "table", "env" (a table of strings), "list", "choice:a|b", and a
# trailing "!" for a required field. A path segment "[]" is every item of an
# array of tables.
_SCHEMA = {
    "version": "str", "schema_version": "str", "source": "str", "metadata": "table",
    "task": "table", "task.name": "str!", "task.version": "str", "task.description": "str",
    "task.keywords": "list", "task.authors": "list",
    "verifier": "table", "verifier.timeout_sec": "float", "verifier.env": "env", "verifier.user": "user",
    "verifier.environment_mode": "choice:shared|separate", "verifier.environment": "table",
    "agent": "table", "agent.timeout_sec": "float", "agent.user": "user",
    "environment": "table", "environment.build_timeout_sec": "float", "environment.cpus": "int",
    "environment.memory_mb": "int", "environment.storage_mb": "int", "environment.gpus": "int",
    "environment.docker_image": "str", "environment.os": "choice:linux|windows", "environment.env": "env",
    "solution": "table", "solution.env": "env",
    "multi_step_reward_strategy": "choice:mean|final",
    "steps": "list", "steps.[]": "table", "steps.[].name": "str!", "steps.[].verifier": "table",
    "steps.[].verifier.timeout_sec": "float", "steps.[].verifier.env": "env", "steps.[].agent": "table",
    "steps.[].agent.timeout_sec": "float", "artifacts": "list",
}


def parse_task_config(path: Path) -> TaskConfig:
    """``path`` read as Harbor would (module docstring), never raising."""
    try:
        import tomllib  # type: ignore[import-not-found]
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        why = f"task.toml could not be read ({exc})"
        return TaskConfig(problems=(f"{why}; the run uses the defaults",),
                          refused=f"{why} (Harbor would refuse to load the task: {type(exc).__name__})")
    refusals = _refusals(data)
    problems: list[str] = []
    verifier = data.get("verifier") if isinstance(data.get("verifier"), dict) else {}
    timeout = _as_float(verifier.get("timeout_sec"))
    if timeout is not None and not (math.isfinite(timeout) and timeout > 0):
        problems.append(f"task.toml: [verifier] timeout_sec = {verifier['timeout_sec']!r} is not a finite number "
                        "of seconds more than 0; the run uses the default")
        timeout = None
    raw_env = verifier.get("env")
    env = {str(k): v for k, v in raw_env.items() if isinstance(v, str)} if isinstance(raw_env, dict) else {}
    # Harbor's package name is [task] name ("org/name", harbor/models/task/config.py's
    # PackageInfo); older tasks put a name at the top or under [metadata].
    task_table = data.get("task") if isinstance(data.get("task"), dict) else {}
    metadata = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    name = next((n for n in (task_table.get("name"), data.get("name"), metadata.get("name"))
                 if isinstance(n, str) and n.strip()), None)
    refused = None
    if refusals:
        refused = "; ".join(refusals) + " (Harbor would refuse to load the task: pydantic ValidationError)"
        problems.insert(0, f"Harbor would refuse this task: {refused}")
    return TaskConfig(timeout_sec=timeout, env=env, name=name if isinstance(name, str) else None,
                      problems=tuple(problems), refused=refused)


def _as_float(value: Any) -> float | None:
    """A float field's value as pydantic's lax mode reads it, or None when
    absent or not a number."""
    if isinstance(value, (int, float)):  # bool too: True is 1.0 to pydantic
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def _refusals(data: dict[str, Any]) -> list[str]:
    """Every checked field whose value Harbor's validation would refuse."""
    out: list[str] = []
    for path, kind in _SCHEMA.items():
        required = kind.endswith("!")
        kind = kind.rstrip("!")
        for where, value in _values_at(data, path.split("."), []):
            if value is _ABSENT:
                if required:
                    out.append(f"{_label(where, kind)} is missing")
            elif kind == "env" and isinstance(value, dict):
                out += [f"{_label(where, kind)}.{key} = {_short(item)} is not a string (write it in quotes)"
                        for key, item in value.items() if not isinstance(item, str)]
            else:
                why = _wrong(kind, value)
                if why is not None:
                    out.append(f"{_label(where, kind)} = {_short(value)} {why}")
    name = (data.get("task") or {}).get("name") if isinstance(data.get("task"), dict) else None
    if isinstance(name, str) and (not _ORG_NAME.match(name) or ".." in name):
        out.append(f"[task] name = {name!r} is not in org/name form")
    return out


def _label(where: list[str], kind: str) -> str:
    """A field's place as task.toml writes it: ``[verifier] timeout_sec``,
    ``version``, ``[[steps]] 1: name``."""
    *tables, last = where
    if not tables:
        return last
    if tables[-1].isdigit():  # an item of an array of tables
        return f"[[{'.'.join(tables[:-1])}]] {int(tables[-1]) + 1}: {last}"
    if last.isdigit():
        return f"[[{'.'.join(tables)}]] {int(last) + 1}"
    return f"[{'.'.join(tables)}] {last}"


_ABSENT = object()


def _values_at(data: Any, parts: list[str], where: list[str]) -> list[tuple[list[str], Any]]:
    """(where, value) at the dotted ``parts`` under ``data``; a missing value
    is ``_ABSENT`` only where its table exists (a missing table is no field)."""
    if not parts:
        return [(where, data)]
    head, rest = parts[0], parts[1:]
    if head == "[]":
        if not isinstance(data, list):
            return []
        found = []
        for index, item in enumerate(data):
            found += _values_at(item, rest, [*where, str(index)])
        return found
    if not isinstance(data, dict):
        return []
    if head not in data:
        return [([*where, head], _ABSENT)] if not rest else []
    return _values_at(data[head], rest, [*where, head])


def _wrong(kind: str, value: Any) -> str | None:
    """Why pydantic (lax mode) would refuse ``value`` for a field of ``kind``."""
    if kind == "str":
        return None if isinstance(value, str) else "is not a string"
    if kind == "float":
        return None if _as_float(value) is not None else "is not a number"
    if kind == "int":
        whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
        return None if whole else "is not a whole number"
    if kind == "table":
        return None if isinstance(value, dict) else "is not a table"
    if kind == "list":
        return None if isinstance(value, list) else "is not an array"
    if kind == "user":
        return None if isinstance(value, (str, int)) else "is neither a user name nor a uid"
    if kind == "env":
        return None if isinstance(value, dict) else "is not a table"
    if kind.startswith("choice:"):
        words = kind.split(":", 1)[1].split("|")
        return None if value in words else f"is not one of {', '.join(repr(w) for w in words)}"
    return None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
