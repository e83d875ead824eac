"""``task.toml`` as Harbor 0.26.0 loads it: the one reader of that file.

Every command goes through here: ``run``/``test``/``watch`` and the TUI on a
task (through ``discovery.read_task_config``, which remembers the parsed
TOML), and a trial's walkthrough and replay (``engine/harbor/``). So a value
reads the same way in a run and in a replay, and a refusal is the same line.

Harbor loads a task with ``TaskConfig.model_validate_toml``
(``harbor/models/task/task.py``; the models are in
``harbor/models/task/config.py``): ``tomllib.loads``, then pydantic v2's
validation in its default, lax mode. The coercions below were checked against
that model with pydantic 2.14 (not guessed):

* a ``float`` field (``[verifier] timeout_sec``) takes an integer, a float, a
  boolean (``true`` is 1.0) or a string holding a number (``"30"``, ``" 30 "``,
  ``"1e3"``, ``"1_000"``, ``"inf"``, ``"nan"``); ``nan`` and ``inf`` too;
* an ``int`` field (``memory_mb``) takes a whole number, a boolean, a float
  with no fraction (``2.0``) and a string of digits (``"2048"``, ``"2048.0"``),
  never ``2.5`` or ``"1e3"``;
* ``cpus`` is ``int | float`` (``1.5`` is fine; ``2.0`` becomes 2; ``nan`` and
  ``inf`` are refused by ``normalize_cpus``);
* a ``str`` field takes only a string (``version = 1`` is refused), a
  ``dict[str, str]`` (``env``) only strings as values, an enum only its words;
* keys it does not know are ignored (pydantic's default ``extra="ignore"``).

The tool goes on running a task Harbor would refuse (it is useful while the
file is being edited), and says so: :attr:`TaskConfig.refused`, one line,
shown as the verdict of ``run`` and beside a replay; ``run`` and ``test`` exit
2. The checked part of Harbor's schema is every model of ``config.py`` except
artifact collisions (Harbor reports those, it does not refuse).

A value Harbor takes but no run can honour (a timeout of ``nan``, ``inf``,
zero or less; ``cpus`` or ``memory_mb`` of zero or less) is reported and
replaced by the default (600 s; no limit), the same in every command.
"""

from __future__ import annotations

import math
import os
import re
import stat
import sys
import unicodedata
from typing import TYPE_CHECKING, TypeGuard, TypeVar

from verifier_tui.engine import untrusted
from verifier_tui.engine.record import field, record

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

HARBOR_DEFAULT_VERIFIER_TIMEOUT_S = 600.0
"""``VerifierConfig.timeout_sec``'s default in Harbor 0.26.0."""
TOML_LIMIT = 4 * untrusted.MB  # a task.toml is a few KB
USES_DEFAULTS = "; the run uses the defaults"  # ends the note of a task.toml not read (load_toml)


#: The verdict of a task Harbor would not load, whatever its reward folder holds, on every
#: face (``none: `` and why after it; a case's expected.json cannot match it either). The
#: one phrasing of a refusal: :func:`refused_words` puts why after it.
REFUSED_TO_RUN = "Harbor would refuse to run this task"
#: Such a task's result, where a run's or a replay's verdict is said (a case's, a trial's replay, a
#: job's replay column): one wording on every face.
REFUSED_RESULT = f"none: {REFUSED_TO_RUN}"


def refused_words(why: str) -> str:
    """A task Harbor would not load (``TaskConfig.refused``), as every face says it."""
    return f"{REFUSED_TO_RUN}: {why}"


def refusal_first(refused: str, notes: list[str]) -> list[str]:
    """``notes`` with the refusal (:func:`refused_words` of ``refused``) first, once: the
    task's own note in its place when that says it and more (a task.toml not read: the run
    uses the defaults), as ``watch`` says it under the line the refusal's column cuts."""
    said = refused_words(refused)
    whole = next((note for note in notes if note.startswith(said)), said)
    return [whole, *(note for note in notes if note != whole)]


#: Who in Harbor raises what a refusal names: loading the task, by default; but a task's .gitignore is
#: read only by ``Packager.collect_files``, as a job works out its tasks' digests for lock.json.
PACKAGER = "Harbor's Packager.collect_files, run as a job builds lock.json,"
LOADER = "Harbor's loader"


def _raised_by_harbor(why: str, exception: str | None, raiser: str = LOADER) -> str:
    """``TaskConfig.refused``: why, and what ``raiser`` (by default Harbor's loading of the task)
    raises (None: it raises nothing, and ``why`` says what it does instead). The words say no
    refusal of their own: every face puts :data:`REFUSED_TO_RUN` before them."""
    return why if exception is None else f"{why} ({raiser} raises {exception})"


SHARED = "shared"
LINUX = "linux"
SEPARATE = "separate"
PUBLIC = "public"
NETWORK_MODES = ("public", "no-network", "allowlist")  # config.py NetworkMode


#: 2**63 bytes in MB: the most bwrap's --size takes, and a memory cgroup's memory.max.
_MB_PAST_SIGNED_64_BITS = 1 << 43


@record(frozen=True)
class VerifierSettings:
    """One ``[verifier]`` table (the task's, or one step's): ``VerifierConfig``."""

    timeout_sec: float = HARBOR_DEFAULT_VERIFIER_TIMEOUT_S
    timeout_given: bool = False  # False: Harbor's default applies (absent, or a value no run can honour)
    harbor_timeout: float | None = None
    """``timeout_sec`` as given when no local run can honour it (0 or less,
    NaN, inf): Harbor hands it to ``asyncio.wait_for`` as it is
    (``Trial._verify_with_timeout``)."""

    @property
    def gives_up_at_once(self) -> float | None:
        """:attr:`harbor_timeout` when ``asyncio.wait_for`` cancels the verifier
        before it runs (0 or less; NaN too, on Python 3.12, Harbor's oldest),
        recording ``VerifierTimeoutError``; None otherwise (inf never gives up)."""
        return self.harbor_timeout if self.harbor_timeout not in (None, math.inf) else None

    env: dict[str, str] = field(default_factory=dict)
    environment_mode: str | None = None
    environment_env: dict[str, str] | None = None  # [verifier.environment] env, when that table exists
    network_mode: str | None = None  # the explicit phase override (PhaseNetworkPolicyConfig); None: not set
    environment_network_mode: str | None = None  # [verifier.environment]'s baseline, when that table exists
    environment_image: bool = False  # [verifier.environment] docker_image: the verifier's image holds the tests
    environment_os: str | None = None  # [verifier.environment] os, when given (else the task's applies)
    user: str | int | None = None  # as given; None: not set (a step's: the task's applies)

    @property
    def own_mode(self) -> str | None:
        """verifier_mode.py ``_resolve_mode``: the explicit mode, else
        "separate" when an environment is defined, else None (not said here)."""
        if self.environment_mode in (SHARED, SEPARATE):
            return self.environment_mode
        if self.environment_env is not None:
            return SEPARATE
        return None


@record(frozen=True)
class StepSettings:
    """One ``[[steps]]`` item (``StepConfig``): its name, its own verifier, its artifacts."""

    name: str
    verifier: VerifierSettings
    artifacts: tuple[str, ...] = ()


@record(frozen=True)
class TaskConfig:
    """``task.toml`` as Harbor takes it, and what the tool honours of it."""

    timeout_sec: float | None = None
    """``[verifier] timeout_sec`` as the tool honours it; None: Harbor's default."""
    env: dict[str, str] = field(default_factory=dict)
    """The verifier's variables for a local run: the container's env
    (:meth:`container_env`) overlaid by ``[verifier] env``, as
    ``verifier/verifier.py`` and ``environments/base.py`` merge them."""
    env_sources: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Each of ``env``'s variables: the table it was written in and its value
    as written there (a ``${VAR}`` template unresolved), for the user."""
    env_final: bool = False
    """``env`` holds values, not templates: a trial's replay filled each one
    already (harbor/inputs.py), once, as Harbor does; none is resolved again
    (a default that reads as a template, ``${A:-${B}}``, is a literal)."""
    env_unset: tuple[str, ...] = ()
    """Variables the replay of a trial runs without (a ``${VAR}`` it could
    not fill): the runner gets none of them, not even the user's own by the
    allowlist (``HOME``), as a run of the task drops one it cannot fill."""
    env_fills_only: tuple[str, ...] = ()
    """``--env`` names a replay used only to fill a trial's templates: not
    passed as themselves (Harbor's verifier never had them)."""
    name: str | None = None
    problems: tuple[str, ...] = ()
    refused: str | None = None
    """Why Harbor would refuse to load this task at all, in one line (None: it would load it)."""
    files_refused: bool = False
    """``refused`` is for the task's files, not its task.toml (:func:`refused_for`)."""
    linked: tuple[str, ...] = ()
    """The task's folders its input folders' links lead to, as paths in it: Harbor checks the links in them
    too (:mod:`~verifier_tui.engine.task.loading`), so they are watched for whether it loads the task."""
    unread: str | None = None
    """Why task.toml was not read here, where Harbor would read it (past :data:`TOML_LIMIT`, a FIFO, a
    device), in one line: its settings are unknown, so no run is made (None: it was read)."""
    verifier: VerifierSettings = field(default_factory=VerifierSettings)
    environment_env: dict[str, str] = field(default_factory=dict)
    steps: tuple[StepSettings, ...] = ()
    steps_kept_out: tuple[str, ...] = ()
    """``[[steps]]`` names (strings) Harbor refuses, kept out of ``steps``: one may still be typed."""
    artifacts: tuple[str, ...] = ()
    cpus: int | float | None = None
    """``[environment] cpus``: ``int | float | None`` in Harbor (1.5 is allowed), None: no limit."""
    memory_mb: int | None = None
    """``[environment] memory_mb`` (or the deprecated ``memory = "2G"``), None: no limit."""
    storage_mb: int | None = None
    """``[environment] storage_mb`` (or the deprecated ``storage = "10G"``), None: no limit."""
    workdir: str | None = None
    """``[environment] workdir``, None: the image's WORKDIR."""
    network_mode: str = PUBLIC
    """``[environment] network_mode`` (after the deprecated ``allow_internet``)."""
    os: str = LINUX
    """``[environment] os``: which test script Harbor runs (``test.sh``; ``test.bat`` on windows)."""
    verifier_network_mode: str = PUBLIC
    """The network the task's verifier has (:meth:`verifier_network_mode_of` with no step)."""

    def step(self, name: str | None) -> StepSettings | None:
        if name is None:
            return None
        return next((s for s in self.steps if s.name == name), None)

    def verifier_mode(self, step_name: str | None = None) -> str:
        """verifier_mode.py ``resolve_task_verifier_mode`` /
        ``resolve_step_verifier_mode``: the step's own mode, else the task's, else shared."""
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

    def container_env_table(self, step_name: str | None = None) -> str:
        """Where :meth:`container_env` was written, in words."""
        step = self.step(step_name)
        if self.verifier_mode(step_name) == SEPARATE:
            if step is not None and step.verifier.environment_env is not None:
                return f"task.toml [steps.verifier.environment] env of {step.name}"
            if self.verifier.environment_env is not None:
                return "task.toml [verifier.environment] env"
        return "task.toml [environment] env"

    def verifier_network_mode_of(self, step_name: str | None = None) -> str:
        """trial/network_policy.py ``resolve_verifier_phase_policy``: the
        step's ``[steps.verifier] network_mode``, else ``[verifier]
        network_mode``, else the baseline of the container the verifier runs
        in: ``[environment]``'s in shared mode; in separate mode the verifier
        environment's (the step's, else the task's ``[verifier.environment]``,
        whose own default is public, else a copy of ``[environment]``)."""
        step = self.step(step_name)
        if step is not None and step.verifier.network_mode is not None:
            return step.verifier.network_mode
        if self.verifier.network_mode is not None:
            return self.verifier.network_mode
        if self.verifier_mode(step_name) == SEPARATE:
            if step is not None and step.verifier.environment_network_mode is not None:
                return step.verifier.environment_network_mode
            if self.verifier.environment_network_mode is not None:
                return self.verifier.environment_network_mode
        return self.network_mode


#: How a refusal of a task.toml that is not TOML at all starts (:func:`load_toml`): nothing of it was read.
TOML_UNREAD = "task.toml could not be read"


def toml_unread(config: TaskConfig) -> bool:
    """Whether ``config`` is of a task.toml that could not be read as TOML (its steps neither)."""
    return config.refused is not None and config.refused.startswith(TOML_UNREAD)


def load_toml(path: Path) -> tuple[dict[str, Any], TaskConfig | None]:
    """``tomllib``'s document of ``path``, or the config of a file Harbor
    could not load (a refusal)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    found = untrusted.read_bytes(path, TOML_LIMIT, name="task.toml")
    unread = _unread(path, found)
    if unread is not None:
        return {}, TaskConfig(unread=f"{found.problem}: {unread}, so nothing is run")
    try:
        if found.data is None:
            raise OSError(found.problem)
        # read_text()'s universal newlines, as Harbor reads it
        text = found.data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
        return tomllib.loads(text), None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError, ValueError) as exc:
        refused = _raised_by_harbor(_one_line(f"{TOML_UNREAD} ({exc})"), type(exc).__name__)
        # The note says the refusal, as a value of the wrong type's does: explain has no verdict to say it.
        return {}, TaskConfig(problems=(f"{refused_words(refused)}{USES_DEFAULTS}",), refused=refused)


def _unread(path: Path, found: untrusted.Read) -> str | None:
    """Why ``found`` is no task.toml Harbor would refuse but one this tool does not read (None: it
    was read, or one Harbor's read_text() raises on too)."""
    # Harbor 0.26's Task reads it whole, however big, with no check of its kind: config_path.read_text()
    if found.state == "too-big":
        return "its settings are unknown"
    if found.state != "not-a-file":
        return None
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISFIFO(mode):  # never opened here: read_text() waits on it until a writer comes
        return "Harbor's read_text() would block on it; not read"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "Harbor's read_text() would read whatever it gives; not read"
    return None  # a folder, a socket: read_text() raises, so Harbor refuses it (below)


def refused_for(config: TaskConfig, why: str, exception: str | None, raiser: str = LOADER) -> TaskConfig:
    """``config`` refused for a reason of the task's files that Harbor (its ``Task``, or ``raiser``)
    raises ``exception`` for (:mod:`verifier_tui.engine.task.loading`)."""
    refused = _raised_by_harbor(why, exception, raiser)
    return _with(config, refused=refused, files_refused=True, problems=(refused_words(refused), *config.problems))


def files_unrefused(config: TaskConfig) -> TaskConfig:
    """``config`` before :func:`refused_for` refused it."""
    if not config.files_refused:
        return config
    return _with(config, refused=None, files_refused=False, problems=config.problems[1:])


def config_from_toml(data: dict[str, Any]) -> TaskConfig:
    """The config of an already parsed ``task.toml`` (any document ``tomllib``
    can give, or its JSON round trip from the cache), never raising."""
    check = _Check()
    try:
        return _config(data if isinstance(data, dict) else {}, check)
    except RecursionError:  # a document nested past Python's limit: tomllib would not have given it
        check.refuse([], "task.toml is nested too deeply")
        why = check.refused() or ""  # never empty: one reason was just given
        return TaskConfig(problems=(refused_words(why),), refused=why)


# -- reading ----------------------------------------------------------------------------------------


class _Refused(Exception):
    """A value a field's type refuses; the message says why, after the value."""


class _Check:
    """The refusals met while reading, in the order met, and the notes."""

    def __init__(self) -> None:
        self.reasons: list[str] = []
        self.notes: list[str] = []
        # every key each table was asked for: what Harbor's model of it knows
        self.asked: dict[int, tuple[list[str], dict[str, Any], set[str]]] = {}

    def ask(self, table: dict[str, Any], key: str, where: list[str]) -> None:
        self.asked.setdefault(id(table), (where, table, set()))[2].add(key)

    def unknown(self) -> None:
        """A note for each key of a table read here that Harbor's model does
        not know (pydantic ignores it, so the default applies: a misspelt
        ``[verifer]`` or ``timout_sec`` runs silently with the defaults),
        with the key meant when one is close."""
        for where, table, known in self.asked.values():
            for key in table:
                if key in known:
                    continue
                import difflib  # only here: most tasks hold no unknown key, and a run has no other use for it

                meant = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.7)
                hint = f": did you mean {_place(where, meant[0], table[key])}?" if meant else ""
                self.notes.append(
                    f"task.toml: {_place(where, key, table[key])} is not one Harbor knows{hint} (Harbor ignores it)"
                )

    def refuse(
        self, where: list[str], why: str, value: Any = None, show_value: bool = False, suffix: str | None = None
    ) -> None:
        label = _label(where) + (f".{_key(suffix)}" if suffix is not None else "")
        text = f"{label} = {_short(value)} {why}" if show_value else (f"{label} {why}" if label else why)
        self.reasons.append(_one_line(text))

    def refused(self) -> str | None:
        if not self.reasons:
            return None
        return _raised_by_harbor("; ".join(self.reasons), "pydantic ValidationError")

    def get(self, table: dict[str, Any], key: str, kind: Any, where: list[str], default: Any = None) -> Any:
        """``table[key]`` coerced by ``kind`` (a function raising ``_Refused``),
        else ``default`` (absent, or refused and recorded)."""
        self.ask(table, key, where)
        if key not in table:
            return default
        try:
            return kind(table[key])
        except _Refused as exc:
            self.refuse([*where, key], str(exc), table[key], show_value=True)
            return default

    def env(self, table: dict[str, Any], key: str, where: list[str]) -> dict[str, str]:
        """A ``dict[str, str]`` field: its strings (the run keeps them), each
        other value refused by name."""
        found: dict[str, str] = self.get(table, key, _env, where, {})
        if isinstance(table.get(key), dict):
            for name, item in table[key].items():
                if not isinstance(item, str):
                    self.refuse(
                        [*where, key], "is not a string (write it in quotes)", item, show_value=True, suffix=name
                    )
        return found

    def table(self, parent: dict[str, Any], key: str, where: list[str]) -> dict[str, Any] | None:
        """A sub-table (a pydantic sub-model); None when absent or not a table (refused)."""
        self.ask(parent, key, where)
        if key not in parent:
            return None
        value = parent[key]
        if not isinstance(value, dict):
            self.refuse([*where, key], "is not a table", value, show_value=True)
            return None
        return value

    def entry(self, value: Any, where: list[str], required: str) -> dict[str, Any] | None:
        """An item of a list of tables (an author, a hook, a step): None when it
        is not a table (refused); its ``required`` key refused when missing."""
        if not isinstance(value, dict):
            self.refuse(where, "is not a table", value, show_value=True)
            return None
        if required not in value:
            self.refuse([*where, required], "is missing")
        return value


def _config(data: dict[str, Any], check: _Check) -> TaskConfig:
    # TaskConfig.handle_version_rename: `version` is the old name of schema_version.
    version_key = "schema_version" if "schema_version" in data else "version"
    check.get(data, version_key, _str, [])
    check.get(data, "source", _str, [])
    check.get(data, "multi_step_reward_strategy", _choice("mean", "final"), [])
    check.table(data, "metadata", [])
    _package(check.table(data, "task", []), check)
    solution = check.table(data, "solution", [])
    if solution is not None:
        check.env(solution, "env", ["solution"])
    agent = check.table(data, "agent", [])
    if agent is not None:
        _agent(agent, ["agent"], check)
    environment = _environment(check.table(data, "environment", []), ["environment"], check)
    verifier = _verifier(check.table(data, "verifier", []), ["verifier"], check)
    user_note_at = len(check.notes)  # the task's [verifier] user is said after its other notes
    steps, steps_kept_out = _steps(data, check)
    # Trial._step_verifier_user: a step's own [steps.verifier] user over the task's, which then
    # runs no step's verifier when each step sets its own (a task without steps: single_step.py's).
    own, user = sum(step.verifier.user is not None for step in steps), verifier.user
    if _not_root(user) and not (steps and own == len(steps)):
        check.notes.insert(user_note_at, _user_note(["verifier"], user, except_steps=own > 0))
    check.ask(data, "artifacts", [])
    artifacts = _artifacts(data.get("artifacts"), ["artifacts"], check) if "artifacts" in data else ()

    # Harbor's package name is [task] name ("org/name", PackageInfo); older
    # tasks put a name at the top or under [metadata].
    task_table = untrusted.table(data, "task")
    metadata = untrusted.table(data, "metadata")
    name = next(
        (
            n
            for n in (task_table.get("name"), data.get("name"), metadata.get("name"))
            if isinstance(n, str) and n.strip()
        ),
        None,
    )

    limits: dict[str, int | None] = {}
    for key, what in (("cpus", "CPU"), ("memory_mb", "memory"), ("storage_mb", "storage")):
        value = environment[key]
        if value is not None and value <= 0:
            check.notes.append(
                f"task.toml: [environment] {key} = {value!r} is not more than 0; no {what} limit is applied"
            )
            value = None
        elif value is not None and key != "cpus" and value >= _MB_PAST_SIGNED_64_BITS:
            check.notes.append(
                f"task.toml: [environment] {key} = {value!r} is 2**63 bytes or more, past what a tmpfs "
                f"or a memory cgroup can be given; no {what} limit is applied"
            )
            value = None
        limits[key] = value
    cpus, memory_mb, storage_mb = limits["cpus"], limits["memory_mb"], limits["storage_mb"]
    check.unknown()
    refused = check.refused()
    problems = list(check.notes)
    if refused is not None:
        problems.insert(0, refused_words(refused))
    config = TaskConfig(
        timeout_sec=verifier.timeout_sec if verifier.timeout_given else None,
        name=name,
        problems=tuple(problems),
        refused=refused,
        verifier=verifier,
        environment_env=environment["env"],
        steps=steps,
        steps_kept_out=steps_kept_out,
        artifacts=artifacts,
        cpus=cpus,
        memory_mb=memory_mb,
        storage_mb=storage_mb,
        workdir=environment["workdir"],
        network_mode=environment["network_mode"],
        os=environment["os"] or LINUX,
    )
    # The run's variables: the container's (shared mode: [environment] env),
    # then [verifier] env over them (verifier.py merges the verifier's env into exec's,
    # and environments/base.py puts the container's persistent env under it).
    container, table = config.container_env(None), config.container_env_table(None)
    return _with(
        config,
        env={**container, **verifier.env},
        env_sources={
            **{name: (table, value) for name, value in container.items()},
            **{name: ("task.toml [verifier] env", value) for name, value in verifier.env.items()},
        },
        verifier_network_mode=config.verifier_network_mode_of(None),
    )


def _with(config: TaskConfig, **changes: Any) -> TaskConfig:
    from verifier_tui.engine.record import replace

    return replace(config, **changes)


# The patterns of this module are strings that ``re`` compiles at their first
# use and keeps: most tasks need none of them, and every start paid for them.
# harbor/constants.py ORG_NAME_PATTERN, for [task] name, used as Harbor 0.26.0's
# PackageInfo.validate_name_format does: Python's re.match (not pydantic's pattern), whose `$`
# also matches before a final line break, so Harbor loads name = "org/name\n" and so do we.
# (`new --name` is stricter on purpose: it writes the name, see authoring.new_task.)
ORG_NAME = r"^[a-zA-Z0-9][a-zA-Z0-9._-]*/[a-zA-Z0-9][a-zA-Z0-9._-]*$"


def _package(table: dict[str, Any] | None, check: _Check) -> None:
    """``PackageInfo``: ``[task]``."""
    if table is None:
        return
    where = ["task"]
    if "name" not in table:
        check.refuse([*where, "name"], "is missing")
    else:
        name = check.get(table, "name", _str, where)
        if name is not None and (not re.match(ORG_NAME, name) or ".." in name):
            check.refuse([*where, "name"], "is not in org/name form", name, show_value=True)
    if check.get(table, "version", _str, where) == "":
        check.refuse([*where, "version"], "is empty (it must be at least one character)")
    check.get(table, "description", _str, where)
    check.get(table, "keywords", _str_list, where)
    authors = check.get(table, "authors", _list, where, [])
    for index, author in enumerate(authors):
        at = [*where, "authors", str(index)]
        if check.entry(author, at, "name") is None:
            continue
        check.get(author, "name", _str, at)
        check.get(author, "email", _str, at)


def _network(table: dict[str, Any], where: list[str], check: _Check, *, baseline: bool) -> str | None:
    """``PhaseNetworkPolicyConfig`` (``[agent]``, ``[verifier]``: None when not
    set) or ``BaselineNetworkPolicyConfig`` (an environment: public by default),
    with ``_validate_network_policy_fields``."""
    mode = check.get(table, "network_mode", _choice(*NETWORK_MODES), where)
    hosts = check.get(table, "allowed_hosts", _host_list, where)
    if "network_mode" in table and mode is None:
        return PUBLIC if baseline else None  # refused above
    effective = mode if mode is not None else (PUBLIC if baseline else None)
    if hosts is not None and effective is None or hosts and effective != "allowlist":
        check.refuse([*where, "allowed_hosts"], "is only valid with network_mode = 'allowlist'")
    return effective


def _agent(table: dict[str, Any], where: list[str], check: _Check) -> None:
    """``AgentConfig``."""
    check.get(table, "timeout_sec", _float, where)
    check.get(table, "user", _user, where)
    _network(table, where, check, baseline=False)


_SIZE = r"(?s)^(.*)([GMK])$"


def _environment(table: dict[str, Any] | None, where: list[str], check: _Check) -> dict[str, Any]:
    """``EnvironmentConfig`` (``[environment]``, ``[verifier.environment]``):
    the fields the tool uses, the rest checked."""
    out: dict[str, Any] = {
        "env": {},
        "cpus": None,
        "memory_mb": None,
        "storage_mb": None,
        "workdir": None,
        "network_mode": PUBLIC,
        "docker_image": None,
        "os": None,
    }
    if table is None:
        return out
    table = dict(table)
    # _migrate_legacy_resource_fields (mode="before"): `memory`/`storage` as
    # "2G", "512M", "1024K" become memory_mb/storage_mb; a value that is no
    # string is dropped; a conflicting *_mb refuses the whole table.
    for legacy, modern in (("memory", "memory_mb"), ("storage", "storage_mb")):
        if legacy not in table:
            continue
        value = table.pop(legacy)
        if not isinstance(value, str):
            continue
        size = _size_to_mb(value)
        if size is None:
            check.refuse([*where, legacy], "is not a size such as '1G', '512M'", value, show_value=True)
            return out
        if modern in table and table[modern] != size:
            check.refuse(
                [*where, legacy],
                f"({size} MB) conflicts with {modern} = {_short(table[modern])}",
                value,
                show_value=True,
            )
            return out
        table.setdefault(modern, size)
    check.get(table, "build_timeout_sec", _float, where)
    out["docker_image"] = check.get(table, "docker_image", _str, where)
    # normalize_os: a string is lowered first.
    out["os"] = check.get(
        table, "os", lambda v: _choice("linux", "windows")(v.lower() if isinstance(v, str) else v), where
    )
    out["cpus"] = check.get(table, "cpus", _cpus, where)
    out["memory_mb"] = check.get(table, "memory_mb", _int, where)
    out["storage_mb"] = check.get(table, "storage_mb", _int, where)
    check.get(table, "gpus", _int, where)
    check.get(table, "gpu_types", _str_list, where)
    tpu = check.table(table, "tpu", where)
    if tpu is not None:
        if "type" not in tpu or check.get(tpu, "type", _str, [*where, "tpu"]) == "":
            check.refuse([*where, "tpu", "type"], "is missing or empty")
        if "topology" not in tpu:
            check.refuse([*where, "tpu", "topology"], "is missing")
        else:
            topology = check.get(tpu, "topology", _str, [*where, "tpu"])
            if topology is not None and not re.fullmatch(r"[1-9][0-9]*(x[1-9][0-9]*)+", topology.strip()):
                check.refuse([*where, "tpu", "topology"], "is not NxM or NxMxK", topology, show_value=True)
    for index, server in enumerate(check.get(table, "mcp_servers", _list, where, [])):
        _mcp_server(server, [*where, "mcp_servers", str(index)], check)
    out["env"] = check.env(table, "env", where)
    check.get(table, "skills_dir", _str, where)
    healthcheck = check.table(table, "healthcheck", where)
    if healthcheck is not None:
        _healthcheck(healthcheck, [*where, "healthcheck"], check)
    out["workdir"] = check.get(table, "workdir", _str, where)
    allow_internet = check.get(table, "allow_internet", _bool, where)
    out["network_mode"] = _network(table, where, check, baseline=True)
    # TaskConfig._apply_legacy_allow_internet: the deprecated flag decides only
    # when network_mode was not written and allowed_hosts is not set.
    if allow_internet is not None and "network_mode" not in table and "allowed_hosts" not in table:
        out["network_mode"] = PUBLIC if allow_internet else "no-network"
    return out


def _size_to_mb(text: str) -> int | None:
    """``EnvironmentConfig._parse_size_to_mb`` (Python's own float, not pydantic's), or None where it raises."""
    match = re.match(_SIZE, text.strip().upper())
    if match is None:
        return None
    try:
        number = float(match.group(1))
        factor = {"G": 1024.0, "M": 1.0, "K": 1 / 1024}[match.group(2)]
        return int(number * factor) if match.group(2) != "K" else int(number / 1024)
    except (ValueError, OverflowError):
        return None


def _healthcheck(table: dict[str, Any], where: list[str], check: _Check) -> None:
    """``HealthcheckConfig``."""
    if "command" not in table:
        check.refuse([*where, "command"], "is missing")
    check.get(table, "command", _str, where)
    for key in ("interval_sec", "timeout_sec", "start_period_sec", "start_interval_sec"):
        check.get(table, key, _float, where)
    check.get(table, "retries", _int, where)


def _mcp_server(server: Any, where: list[str], check: _Check) -> None:
    """``MCPServerConfig``: the kinds, the header rules and the transport's needs."""
    if check.entry(server, where, "name") is None:
        return
    check.get(server, "name", _str, where)
    raw = server.get("transport", "sse")
    transport = check.get(
        {"transport": "streamable-http" if raw == "http" else raw},
        "transport",
        _choice("stdio", "sse", "streamable-http"),
        where,
    )
    url = check.get(server, "url", _str, where)
    command = check.get(server, "command", _str, where)
    check.get(server, "args", _str_list, where)
    headers = check.env(server, "headers", where)
    for name, value in headers.items():
        problem = _header_problem(name, value)
        if problem is not None:
            check.refuse([*where, "headers"], f"{name!r}: {problem}")
    if transport in ("sse", "streamable-http") and not url:
        check.refuse([*where, "url"], f"is needed for transport {transport!r}")
    if transport == "stdio" and not command:
        check.refuse([*where, "command"], "is needed for transport 'stdio'")
    if transport == "stdio" and headers:
        check.refuse([*where, "headers"], "are only for HTTP transports")


# Harbor 0.26.0's header rules: config.py _HTTP_HEADER_NAME_PATTERN, utils/env.py's templates and credentials.
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_TEMPLATE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")  # _EMBEDDED_TEMPLATE_PATTERN
#: A name that says its value is a secret (utils/env.py _SENSITIVE_KEY_RE): a header's or a template
#: variable's here; in harbor/inputs.py, an env key whose value a trial's config.json redacted or we hide.
SENSITIVE_KEY = re.compile(r"(KEY|SECRET|TOKEN(?!S)|PASSWORD|CREDENTIAL|AUTH)", re.IGNORECASE)
_NO_DEFAULT = r"\$\{[A-Za-z_][A-Za-z0-9_]*(?::-)?\}"
_TEMPLATED_CREDENTIAL = re.compile(rf"\s*(?:[A-Za-z]+\s+)?{_NO_DEFAULT}(?:[\s:-]*{_NO_DEFAULT})*\s*")


def _header_problem(name: str, value: str) -> str | None:
    """Why Harbor 0.26.0's ``MCPServerConfig.validate_headers`` refuses one
    header, in a few words; None when it takes it. Its checks in its order:
    the name an HTTP token, no line break in the value, every ``${`` a whole
    template (``resolve_embedded_env_vars``), and a credential (a header or a
    variable named like one, a cookie) only as ``${VAR}`` without a default
    (``has_literal_header_credential``)."""
    if not _HEADER_NAME.fullmatch(name):
        return "is not an HTTP header name"
    if "\r" in value or "\n" in value:
        return "holds a line break"
    templates = [(match[1], match[2]) for match in _TEMPLATE.finditer(value)]
    if "${" in _TEMPLATE.sub(" ", value) or any(default is not None and "${" in default for _n, default in templates):
        return "holds a ${ that is no ${VAR} or ${VAR:-default}"
    sensitive = bool(SENSITIVE_KEY.search(name)) or name.lower() in ("cookie", "set-cookie")
    written = any(default and (sensitive or SENSITIVE_KEY.search(variable)) for variable, default in templates)
    if written or sensitive and value.strip() and not _TEMPLATED_CREDENTIAL.fullmatch(value):
        return "holds a credential: it must be a ${VAR} without a default (Bearer ${TOKEN})"
    return None


_SERVICE = r"^[a-zA-Z0-9][a-zA-Z0-9_.-]*$"  # config.py _COMPOSE_SERVICE_NAME_PATTERN


def _service(value: Any) -> str:
    """``_validate_compose_service_name``: stripped, then the pattern."""
    text = _str(value).strip()
    if not re.match(_SERVICE, text):
        raise _Refused("is not a Docker Compose service name")
    return text


def _not_root(user: str | int | None) -> TypeGuard[str | int]:
    """A [verifier] (or [steps.verifier]) user set and not root, by name or uid: one a note says Harbor runs as."""
    return user not in (None, "root", 0, "0")


def _user_note(where: list[str], user: str | int, *, except_steps: bool = False) -> str:
    """Trial runs the verifier as this user (with_default_user). The sandbox here
    runs it as whoever runs the tool, as it does without it (an image's root, mostly)."""
    but = ", except in the steps that set their own [steps.verifier] user" if except_steps else ""
    return _one_line(
        f"task.toml: {_label([*where, 'user'])} = {_short(user)}: Harbor runs the verifier as that user{but}; "
        "this run is made as you, so a file only one of you can read or write behaves otherwise"
    )


def _verifier(table: dict[str, Any] | None, where: list[str], check: _Check) -> VerifierSettings:
    """``VerifierConfig``."""
    if table is None:
        return VerifierSettings()
    timeout = check.get(table, "timeout_sec", _float, where)
    given = timeout is not None
    unusable = None
    if given and not (math.isfinite(timeout) and timeout > 0):
        # Harbor takes any float (VerifierConfig has no bound) and hands it to
        # asyncio.wait_for: inf never gives up; 0 or less gives up before the
        # verifier runs, and so does NaN on Python 3.12 (Harbor's oldest).
        unusable = timeout
        if timeout == math.inf:
            words = (
                "sets no limit in Harbor (asyncio.wait_for never gives up); the run uses Harbor's default as its limit"
            )
        else:
            words = (
                "makes Harbor's asyncio.wait_for give up before the verifier runs: every trial ends in "
                "VerifierTimeoutError; the run uses Harbor's default, to show what the verifier does"
            )
        check.notes.append(
            _one_line(f"task.toml: {_label([*where, 'timeout_sec'])} = {_short(table['timeout_sec'])} {words}")
        )
        given = False
    env = check.env(table, "env", where)
    user = check.get(table, "user", _user, where)
    if _not_root(user) and where != ["verifier"]:  # the task's: said once its steps are read
        check.notes.append(_user_note(where, user))
    mode = check.get(table, "environment_mode", _choice(SHARED, SEPARATE), where)
    environment = check.table(table, "environment", where)
    settings = _environment(environment, [*where, "environment"], check) if environment is not None else None
    if mode == SHARED and environment is not None:  # _validate_mode_env_consistency
        check.refuse([*where, "environment_mode"], "is 'shared' but the verifier has its own environment table")
    for index, hook in enumerate(check.get(table, "collect", _list, where, [])):
        at = [*where, "collect", str(index)]
        if check.entry(hook, at, "command") is None:  # VerifierCollectConfig
            continue
        check.get(hook, "command", _str, at)
        check.get(hook, "service", _service, at)
        check.get(hook, "timeout_sec", _float, at)
        check.get(hook, "user", _user, at)
    network_mode = _network(table, where, check, baseline=False)
    return VerifierSettings(
        timeout_sec=float(timeout) if given else HARBOR_DEFAULT_VERIFIER_TIMEOUT_S,
        timeout_given=given,
        harbor_timeout=unusable,
        env=env,
        environment_mode=mode,
        environment_env=settings["env"] if settings is not None else None,
        network_mode=network_mode,
        environment_network_mode=settings["network_mode"] if settings is not None else None,
        environment_image=bool(settings and settings["docker_image"]),
        environment_os=settings["os"] if settings is not None else None,
        user=user,
    )


# step_name.py validate_step_name: one portable directory name.
_STEP_BAD = r'[<>:"/\\|?*\x00-\x1f\x7f]'
_STEP_DEVICE = r"(?i)^(CON|PRN|AUX|NUL|CONIN\$|CONOUT\$|(?:COM|LPT)[1-9¹²³])$"


def _step_name(value: Any) -> str:
    name = _str(value)
    if (
        not name.strip()
        or name in (".", "..")
        or name.endswith((".", " "))
        or re.search(_STEP_BAD, name)
        or re.fullmatch(_STEP_DEVICE, name.partition(".")[0].rstrip(" "))
    ):
        raise _Refused("is not a portable folder name")
    if len(name.encode("utf-8", "surrogatepass")) > 255:
        raise _Refused("is longer than 255 bytes")
    return name


def _steps(data: dict[str, Any], check: _Check) -> tuple[tuple[StepSettings, ...], tuple[str, ...]]:
    """``TaskConfig.steps``: ``list[StepConfig]``, names unique (``step_name_key``); and the names
    refused (``TaskConfig.steps_kept_out``)."""
    check.ask(data, "steps", [])
    if "steps" not in data:
        return (), ()
    items = check.get(data, "steps", _list, [], [])
    steps: list[StepSettings] = []
    kept_out: list[str] = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        where = ["steps", str(index)]
        if check.entry(item, where, "name") is None:
            continue
        name = check.get(item, "name", _step_name, where)
        agent = check.table(item, "agent", where)
        if agent is not None:
            _agent(agent, [*where, "agent"], check)
        verifier = _verifier(check.table(item, "verifier", where), [*where, "verifier"], check)
        if "min_reward" in item:
            value = item["min_reward"]
            if isinstance(value, dict):
                for key in value:
                    check.get(value, key, _float, [*where, "min_reward"])
            else:
                check.get(item, "min_reward", _float, where)
        healthcheck = check.table(item, "healthcheck", where)
        if healthcheck is not None:
            _healthcheck(healthcheck, [*where, "healthcheck"], check)
        check.ask(item, "artifacts", where)
        artifacts = _artifacts(item.get("artifacts"), [*where, "artifacts"], check) if "artifacts" in item else ()
        if name is None:
            kept_out += [item["name"]] if isinstance(item.get("name"), str) else []
            continue
        key = unicodedata.normalize("NFC", name).casefold()
        if key in seen:
            check.refuse(
                [*where, "name"], "repeats an earlier step's name (case and Unicode forms count)", name, show_value=True
            )
            kept_out.append(name)
            continue  # refused, and kept out of the steps as read: a name names one step (S lists each once)
        seen.add(key)
        steps.append(StepSettings(name=name, verifier=verifier, artifacts=artifacts))
    return tuple(steps), tuple(kept_out)


def _artifacts(value: Any, where: list[str], check: _Check) -> tuple[str, ...]:
    """``list[str | ArtifactConfig]``: each source (the check is ArtifactConfig's validators)."""
    if not isinstance(value, list):
        check.refuse(where, "is not an array", value, show_value=True)
        return ()
    out = []
    for index, item in enumerate(value):
        at = [*where, str(index)]
        if isinstance(item, str):
            source = item
        elif isinstance(item, dict):
            if "source" not in item:
                check.refuse([*at, "source"], "is missing")
                continue
            source = check.get(item, "source", _str, at)
            destination = check.get(item, "destination", _str, at)
            if destination:
                why = _bad_destination(destination)
                if why:
                    check.refuse([*at, "destination"], why, destination, show_value=True)
            check.get(item, "exclude", _str_list, at)
            service = check.get(item, "service", _service, at)
            if (
                source is not None
                and service is not None
                and service != "main"
                and not (source.startswith("/") or re.match(r"^[A-Za-z]:[/\\]", source))
            ):
                check.refuse(
                    [*at, "source"],
                    "is not an absolute path, which a service's artifact needs",
                    source,
                    show_value=True,
                )
            if source is None:
                continue
        else:
            check.refuse(at, "is neither a path nor a table", item, show_value=True)
            continue
        if ".." in source.split("/"):  # ArtifactConfig._validate_source (PurePosixPath parts)
            check.refuse(at, "has a '..' component", source, show_value=True)
            continue
        out.append(source)
    return tuple(out)


def _bad_destination(value: str) -> str | None:
    """``ArtifactConfig._validate_destination``."""
    if "\\" in value:
        return "uses backslashes"
    if value.startswith("/"):
        return "is not a relative path"
    parts = [p for p in value.split("/") if p not in ("", ".")]
    if not parts:
        return "names no file or folder"
    if ".." in parts:
        return "has a '..' component"
    if value.rstrip("/") == "manifest.json":
        return "is the manifest's own name"
    return None


# -- pydantic v2's lax coercions, one per field type ------------------------------------------------

# Rust's str::trim (what pydantic-core strips around a number): Unicode
# White_Space, which is not Python's str.isspace (that adds \x1c-\x1f).
_RUST_SPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000"
)
# Rust's f64 grammar (pydantic-core parses a float's text with it): ASCII digits only.
_RUST_FLOAT = r"(?i)[+-]?(?:inf|infinity|nan|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
# pydantic-core's integer text: digits, single underscores between digits, and a fraction of zeros.
_INT_TEXT = r"([+-]?[0-9]+(?:_[0-9]+)*)(?:\.0+)?"
_TRUE = {"1", "on", "t", "true", "y", "yes"}
_FALSE = {"0", "off", "f", "false", "n", "no"}
_I64 = 2**63
_N = TypeVar("_N", int, float)


def _float_text(text: str) -> float | None:
    """pydantic-core ``str_as_float``: the trimmed text as Rust reads a float;
    failing that, the untrimmed text with its single inner underscores removed."""
    trimmed = text.strip(_RUST_SPACE)
    if re.fullmatch(_RUST_FLOAT, trimmed):
        return float(trimmed)
    if text.startswith("_") or text.endswith("_") or "__" in text:
        return None
    bare = text.replace("_", "")
    return float(bare) if re.fullmatch(_RUST_FLOAT, bare) else None


def _int_text(text: str) -> int | None:
    """pydantic-core ``str_as_int``: trimmed, at most 4300 characters, digits
    with single underscores, a fraction only of zeros."""
    trimmed = text.strip(_RUST_SPACE)
    match = re.fullmatch(_INT_TEXT, trimmed) if len(trimmed) <= 4300 else None
    return int(match.group(1)) if match else None


def _from_text(value: Any, read: Callable[[str], _N | None], refusal: str) -> _N:
    """What is left to a number field once its numbers are taken: a string, read as
    pydantic-core reads the field's text (``read``); anything else, or text it cannot read, refused."""
    number = read(value) if isinstance(value, str) else None
    if number is None:
        raise _Refused(refusal)
    return number


def _float(value: Any) -> float:
    if isinstance(value, (bool, int, float)):  # bool too: true is 1.0 in lax mode
        return float(value)
    return _from_text(value, _float_text, "is not a number")


def _int(value: Any) -> int:
    if isinstance(value, (bool, int)):
        return int(value)
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() and -_I64 < value < _I64:
        return int(value)
    return _from_text(value, _int_text, "is not a whole number")


def _cpus(value: Any) -> int | float:
    """``int | float`` (smart union: a string is tried as an int first), then
    ``normalize_cpus``: finite, and a whole float becomes an int."""
    number: int | float
    if isinstance(value, (bool, int)):
        number = int(value)
    elif isinstance(value, float):
        number = value
    elif isinstance(value, str):
        as_int = _int_text(value)
        number = as_int if as_int is not None else _float(value)
    else:
        raise _Refused("is not a number")
    if isinstance(number, float):
        if not math.isfinite(number):
            raise _Refused("is not a finite number")
        if number.is_integer():
            return int(number)
    return number


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.lower() in _TRUE | _FALSE:
        return value.lower() in _TRUE
    raise _Refused("is not a boolean")


def _str(value: Any) -> str:
    if isinstance(value, str):
        return value
    raise _Refused("is not a string")


def _user(value: Any) -> str | int:
    """``str | int | None``: a name, or a uid as an int field takes it."""
    if isinstance(value, str):
        return value
    try:
        return _int(value)
    except _Refused:
        raise _Refused("is neither a user name nor a uid") from None


def _list(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    raise _Refused("is not an array")


def _str_list(value: Any) -> list[str]:
    items = _list(value)
    if not all(isinstance(item, str) for item in items):
        raise _Refused("is not an array of strings")
    return items


def _host_list(value: Any) -> list[str]:
    """``allowed_hosts``: strings each of which Harbor's
    ``_validate_allowed_host_names`` takes (:func:`_host_problem`)."""
    hosts = _str_list(value)
    for host in hosts:
        problem = _host_problem(host)
        if problem is not None:
            raise _Refused(f"holds {host!r}: {problem}")
    return hosts


_HOST_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")  # Harbor's _NETWORK_HOST_LABEL_PATTERN


def _host_problem(entry: str) -> str | None:
    """Why Harbor 0.26.0's ``_validate_allowed_host_names`` refuses one
    ``allowed_hosts`` entry, in a few words; None when it takes it. Its steps,
    in its order (a task whose host it refuses does not load: ``test`` passed
    its cases while only the kinds were checked here)."""
    import ipaddress

    def address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
        try:
            return ipaddress.ip_address(text)
        except ValueError:
            return None

    not_a_host = "not a hostname, an IP address or a CIDR range (a URL, a port or a path?)"
    host = entry.strip().lower().rstrip(".")
    if not host:
        return "an empty host"
    if "/" in host or ":" in host:  # a CIDR range (strict: no host bits) or an IPv6 address, no zone
        if "%" in host:
            return not_a_host
        if "/" in host:
            try:
                ipaddress.ip_network(host, strict=True)
            except ValueError:
                return not_a_host
            return None
        return None if (found := address(host)) is not None and found.version == 6 else not_a_host
    if "[" in host or "]" in host:
        return not_a_host
    if host.startswith("*."):
        rest = host[2:]
        if not rest:
            return "a wildcard without a hostname after '*.'"
        if address(rest) is not None:
            return "a wildcard over an IP address, not a hostname"
    elif "*" in host:
        return "a wildcard not written as a leading '*.'"
    else:
        rest = host
    if not all(_HOST_LABEL.match(label) for label in rest.split(".")):
        return "not a hostname: only letters, digits, hyphens and dots, each label 1 to 63 long, no hyphen at its ends"
    return None


def _env(value: Any) -> dict[str, str]:
    """``dict[str, str]`` (``env``, ``headers``): a table of strings; a value
    that is no string is refused, each named by :meth:`_Check.env`."""
    if not isinstance(value, dict):
        raise _Refused("is not a table")
    return {key: item for key, item in value.items() if isinstance(item, str)}


def _choice(*words: str) -> Any:
    def pick(value: Any) -> str:
        if isinstance(value, str) and value in words:
            return value
        raise _Refused(f"is not one of {', '.join(repr(w) for w in words)}")

    return pick


# -- words ------------------------------------------------------------------------------------------


def _label(where: list[str]) -> str:
    """A field's place as task.toml writes it: ``version``, ``[verifier]
    timeout_sec``, ``[[steps]] 1: verifier.timeout_sec``."""
    if not where:
        return ""
    index = max((i for i, part in enumerate(where) if part.isascii() and part.isdigit()), default=None)
    if index is not None and index > 0:
        head = f"[[{'.'.join(_key(p) for p in where[:index])}]] {int(where[index]) + 1}"
        rest = ".".join(_key(p) for p in where[index + 1 :])
        return f"{head}: {rest}" if rest else head
    *tables, last = where
    if not tables:
        return _key(last)
    return f"[{'.'.join(_key(t) for t in tables)}] {_key(last)}"


def _place(where: list[str], key: str, value: Any) -> str:
    """A key as task.toml writes it: a table's in brackets (``[verifier]``)."""
    label = _label([*where, key])
    if not isinstance(value, dict) or label.startswith("[["):
        return label
    return f"[{label.lstrip('[').replace('] ', '.')}]"


def _key(key: str) -> str:
    """A key as TOML would write it bare, else quoted (never a line break)."""
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else _short(key)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _one_line(text: str) -> str:
    return " ".join(text.split())
