"""The parts of a task's ``task.toml`` that shape how Harbor ran its verifier.

Mirrors Harbor 0.26.0 ``harbor/models/task/config.py`` (``TaskConfig``,
``VerifierConfig``, ``StepConfig``) and ``harbor/models/task/verifier_mode.py``
for the few fields that matter here, with Harbor's defaults:

- ``[verifier] timeout_sec`` (600.0), ``env``, ``environment_mode``, and
  ``[verifier.environment]`` (whose presence alone means "separate");
- ``[environment] env`` (the container's own variables, under the verifier's);
- ``[[steps]]``, each with its own ``[steps.verifier]`` (the same model, so
  its ``timeout_sec`` also defaults to 600.0, whatever the task's says);
- ``artifacts`` (task level and per step).

The discovery module reads ``task.toml`` for local runs; this one reads what
only a Harbor trial needs, and reports problems instead of raising.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from verifier_tui.engine.record import field, record

if TYPE_CHECKING:
    from typing import Any

HARBOR_DEFAULT_VERIFIER_TIMEOUT_S = 600.0
"""``VerifierConfig.timeout_sec``'s default in Harbor 0.26.0."""

SHARED = "shared"
SEPARATE = "separate"


@record(frozen=True)
class VerifierSettings:
    """One ``[verifier]`` table (the task's, or one step's)."""

    timeout_sec: float = HARBOR_DEFAULT_VERIFIER_TIMEOUT_S
    timeout_given: bool = False  # False: Harbor's default applied
    env: dict[str, str] = field(default_factory=dict)
    environment_mode: str | None = None
    environment_env: dict[str, str] | None = None  # [verifier.environment] env, when the table exists

    @property
    def own_mode(self) -> str | None:
        """``_resolve_mode``: the explicit mode, else "separate" when an
        environment is defined, else None (not said at this level)."""
        if self.environment_mode in (SHARED, SEPARATE):
            return self.environment_mode
        if self.environment_env is not None:
            return SEPARATE
        return None


@record(frozen=True)
class StepSettings:
    name: str
    verifier: VerifierSettings
    artifacts: tuple[str, ...] = ()


@record(frozen=True)
class HarborTask:
    """A task folder's ``task.toml`` as Harbor reads it (only what a verifier run needs)."""

    root: Path
    verifier: VerifierSettings
    environment_env: dict[str, str]
    steps: tuple[StepSettings, ...] = ()
    artifacts: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()

    def step(self, name: str | None) -> StepSettings | None:
        if name is None:
            return None
        return next((s for s in self.steps if s.name == name), None)

    def verifier_mode(self, step_name: str | None = None) -> str:
        """``resolve_task_verifier_mode`` / ``resolve_step_verifier_mode``:
        the step's own mode, else the task's, else shared."""
        step = self.step(step_name)
        if step is not None and step.verifier.own_mode is not None:
            return step.verifier.own_mode
        return self.verifier.own_mode or SHARED

    def container_env(self, step_name: str | None = None) -> dict[str, str]:
        """The env of the container the verifier runs in: ``[environment] env``
        in shared mode; in separate mode the verifier environment's own
        (``resolve_effective_verifier_env_config``: the step's, else the
        task's ``[verifier.environment]``, else a copy of ``[environment]``)."""
        if self.verifier_mode(step_name) != SEPARATE:
            return dict(self.environment_env)
        step = self.step(step_name)
        if step is not None and step.verifier.environment_env is not None:
            return dict(step.verifier.environment_env)
        if self.verifier.environment_env is not None:
            return dict(self.verifier.environment_env)
        return dict(self.environment_env)

    def declares_artifact(self, source: str, step_name: str | None = None) -> bool:
        wanted = source.rstrip("/")
        step = self.step(step_name)
        declared = list(self.artifacts) + (list(step.artifacts) if step else [])
        return any(a.rstrip("/") == wanted for a in declared)


def read_harbor_task(root: Path) -> HarborTask:
    """``root/task.toml`` read for Harbor's fields; a missing or broken file
    gives Harbor's defaults and a problem in words."""
    path = Path(root) / "task.toml"
    problems: list[str] = []
    try:
        import tomllib  # type: ignore[import-not-found]
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    data: Any = {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        problems.append("task.toml is missing: Harbor's defaults are assumed")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        problems.append(f"task.toml cannot be read ({exc}): Harbor's defaults are assumed")
    verifier = _verifier(data.get("verifier"), "[verifier]", problems)
    environment = data.get("environment") if isinstance(data.get("environment"), dict) else {}
    steps: list[StepSettings] = []
    raw_steps = data.get("steps")
    for index, item in enumerate(raw_steps if isinstance(raw_steps, list) else []):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            problems.append(f"task.toml: [[steps]] #{index + 1} has no name; ignored")
            continue
        steps.append(StepSettings(
            name=item["name"],
            verifier=_verifier(item.get("verifier"), f"[steps.verifier] of {item['name']}", problems),
            artifacts=_artifacts(item.get("artifacts")),
        ))
    return HarborTask(
        root=Path(root),
        verifier=verifier,
        environment_env=_env(environment.get("env"), "[environment] env", problems),
        steps=tuple(steps),
        artifacts=_artifacts(data.get("artifacts")),
        problems=tuple(problems),
    )


def _verifier(table: Any, where: str, problems: list[str]) -> VerifierSettings:
    if table is None:
        return VerifierSettings()
    if not isinstance(table, dict):
        problems.append(f"task.toml: {where} is not a table; Harbor's defaults are assumed")
        return VerifierSettings()
    timeout = table.get("timeout_sec")
    given = timeout is not None
    if given and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))):
        problems.append(f"task.toml: {where} timeout_sec = {timeout!r} is not a number; Harbor would refuse it")
        timeout, given = None, False
    mode = table.get("environment_mode")
    if mode is not None and mode not in (SHARED, SEPARATE):
        problems.append(f"task.toml: {where} environment_mode = {mode!r} is neither 'shared' nor 'separate'")
        mode = None
    environment = table.get("environment")
    environment_env = None
    if isinstance(environment, dict):
        environment_env = _env(environment.get("env"), f"{where} environment.env", problems)
    return VerifierSettings(
        timeout_sec=float(timeout) if given else HARBOR_DEFAULT_VERIFIER_TIMEOUT_S,
        timeout_given=given,
        env=_env(table.get("env"), f"{where} env", problems),
        environment_mode=mode,
        environment_env=environment_env,
    )


def _env(value: Any, where: str, problems: list[str]) -> dict[str, str]:
    """An env table as Harbor's ``dict[str, str]`` (numbers become text, as
    pydantic's lax mode would not: they are named as a problem and kept)."""
    if value is None:
        return {}
    if isinstance(value, list):  # the legacy "KEY=VALUE" list Harbor still accepts for [environment]
        out = {}
        for item in value:
            if isinstance(item, str) and "=" in item:
                key, text = item.split("=", 1)
                out[key.strip()] = text.strip()
        return out
    if not isinstance(value, dict):
        problems.append(f"task.toml: {where} is not a table; ignored")
        return {}
    out = {}
    for key, item in value.items():
        if isinstance(item, str):
            out[str(key)] = item
        else:
            problems.append(f"task.toml: {where}.{key} = {item!r} is not a string")
            out[str(key)] = str(item)
    return out


def _artifacts(value: Any) -> tuple[str, ...]:
    """Artifact sources: plain strings, or tables with a ``source``."""
    out = []
    for item in value if isinstance(value, list) else []:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict) and isinstance(item.get("source"), str):
            out.append(item["source"])
    return tuple(out)
