"""The runner's environment, built on purpose, and what was passed in words.

Harbor 0.26.0 runs ``test.sh`` inside the task's container with that
container's environment plus the task's ``[verifier] env``
(``harbor/verifier/verifier.py``: ``merged_env``, values resolved by
``harbor/utils/env.py`` ``resolve_env_vars``), never with the developer's
shell. So the runner gets here, lowest first:

1. from the user's environment, only what any container has and a Python
   needs to start (:data:`PASSED_THROUGH`): a secret in the shell (an API key,
   a token) never reaches the verifier unasked, and neither do the interpreter's
   switches (``PYTHONOPTIMIZE=1`` would skip a verifier's ``assert`` and score
   it 1.0; ``PYTHONPATH``, ``PYTHONWARNINGS``, ``PYTHONHASHSEED``, ...);
2. verifier-tui's own: unbuffered UTF-8 output and no bytecode written into the
   staged tests (:data:`OWN`);
3. the task's variables: ``[environment] env`` (the container's, which
   Harbor's environment gives every ``exec``) overlaid by ``[verifier] env``,
   where a value that is exactly ``${VAR}`` or ``${VAR:-default}`` comes from
   the user's environment, ``--env VAR`` over it, as Harbor takes it from the
   host's (a trial's
   replay hands over its own, filled as :mod:`~verifier_tui.engine.harbor.inputs`
   says, never from the user's environment, and taken as they are);
   each labelled by the table it was written in;
4. what the user added by name: ``--env NAME`` (its value from the user's
   environment) or ``--env NAME=VALUE``.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from verifier_tui.engine.record import field, record

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Mapping
    from typing import Any

#: What the runner inherits from the user's environment: what a container's
#: shell has (PATH, HOME, USER, the locale, TERM, TMPDIR, TZ), pyenv's choice
#: of interpreter (the ``python3`` a pyenv shim runs depends on it), and what
#: Python needs to start on Windows.
PASSED_THROUGH = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LANGUAGE",
    "TERM",
    "TMPDIR",
    "TZ",
    "PYENV_ROOT",
    "PYENV_VERSION",
    "SYSTEMROOT",
    "WINDIR",
    "COMSPEC",
    "PATHEXT",
    "TEMP",
    "TMP",
)
PASSED_THROUGH_PREFIXES = ("LC_",)
#: verifier-tui's own settings for the runner: output unbuffered (live output
#: in the TUI), decoded as UTF-8, and no __pycache__ written (the runner is
#: also started with ``-B -u``).
OWN = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1", "PYTHONIOENCODING": "utf-8"}

# Where each passed variable came from, in the words the user sees.
FROM_USER = "your environment"
FROM_TOOL = "verifier-tui"
FROM_TASK = "task.toml [verifier] env"
FROM_OPTION = "--env"

# harbor/utils/env.py _TEMPLATE_PATTERN: the whole value is ${NAME} or ${NAME:-default}.
_TEMPLATE = re.compile(r"\$\{([^}:]+)(?::-(.*))?\}")
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"


@record(frozen=True)
class Passed:
    """One variable the runner gets: its name, where it came from (for the
    task's, the table it was written in), and its value when that is safe to
    show (verifier-tui's own, and the task's as written: a ``${VAR}`` template
    is shown, not what it became)."""

    name: str
    source: str
    shown: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "source": self.source, "value": self.shown}


@record
class ChildEnvironment:
    """The runner's environment and how it was made."""

    values: dict[str, str]
    passed: list[Passed] = field(default_factory=list)
    held_back: list[str] = field(default_factory=list)
    """Names of the user's variables that were not passed, sorted."""
    problems: list[str] = field(default_factory=list)
    """A task variable that could not be set (``${VAR}`` of an unset VAR)."""

    def to_json(self) -> dict[str, Any]:
        return {"passed": [p.to_json() for p in self.passed], "held_back": list(self.held_back)}


def passes_through(name: str) -> bool:
    return name in PASSED_THROUGH or name.startswith(PASSED_THROUGH_PREFIXES)


def template_variable(value: str) -> str | None:
    """The variable a whole-value template (``${NAME}``, ``${NAME:-default}``) reads; None: a literal."""
    match = _TEMPLATE.fullmatch(value)
    return None if match is None else match.group(1)


def resolve_template(value: str, environ: Mapping[str, str]) -> tuple[str | None, str | None]:
    """Harbor's ``resolve_env_vars`` for one value: ``(resolved, None)``, or
    ``(None, missing variable)`` when it names an unset one without a default
    (Harbor raises ValueError then, and the verifier does not run)."""
    match = _TEMPLATE.fullmatch(value)
    if match is None:
        return value, None
    name, default = match.group(1), match.group(2)
    if name in environ:
        return environ[name], None
    if default is not None:
        return default, None
    return None, name


def is_variable_name(name: str) -> bool:
    """A name ``--env`` takes (letters, digits, ``_``; not a digit first)."""
    return re.fullmatch(_NAME, name) is not None


def parse_assignment(text: str, environ: Mapping[str, str] | None = None) -> tuple[str, str]:
    """``--env NAME`` or ``--env NAME=VALUE``: (name, value). Raises ValueError
    with a sentence when the name is not a variable name, or when a bare NAME
    is not set in the user's environment."""
    environ = os.environ if environ is None else environ
    name, equals, value = text.partition("=")
    if not is_variable_name(name):
        raise ValueError(f"{text!r}: give NAME or NAME=VALUE, NAME a variable name (letters, digits, _)")
    if equals:
        return name, value
    if name not in environ:
        raise ValueError(f"{name} is not set in your environment: give --env {name}=VALUE")
    return name, environ[name]


def child_environment(
    task_env: Mapping[str, str],
    extra: Iterable[str] = (),
    environ: Mapping[str, str] | None = None,
    sources: Mapping[str, tuple[str, str]] | None = None,
    *,
    resolve: bool = True,
    unset: Iterable[str] = (),
    fills_only: Collection[str] = (),
) -> ChildEnvironment:
    """The runner's environment (see the module's docstring). ``extra`` holds
    the ``--env`` words as the user gave them; ``sources``, for each of
    ``task_env``'s variables, the table it was written in and its value as
    written there (:attr:`TaskConfig.env_sources`; a variable without one is
    said as ``[verifier] env``'s, as it is). ``resolve``: False for a trial's
    replay, whose values are filled already and never from the user's
    environment (:attr:`TaskConfig.env_final`). ``unset``: the variables a
    replay runs without (:attr:`TaskConfig.env_unset`), left out as a
    ``${VAR}`` of an unset VAR is here. ``fills_only``: the ``--env`` names
    that only filled a replay's templates (:attr:`TaskConfig.env_fills_only`):
    not passed, as Harbor's verifier never had them, and not held back
    either (the replay's note says what each filled)."""
    sources = sources or {}
    environ = os.environ if environ is None else environ
    # Harbor fills a template from the environment of the shell that runs it; ``--env VAR=x`` sets VAR for the
    # run as that shell would have it, so the task's ``${VAR}`` takes x (a word it refuses is said below).
    given, bad = _assignments(extra, environ)
    # said after the task's problems, as the words come last
    refused = [f"--env {exc}" for word, exc in bad if word.partition("=")[0] not in fills_only]
    filling = {**environ, **dict(given)}
    values: dict[str, str] = {}
    passing: dict[str, Passed] = {}
    problems: list[str] = []
    for name, value in environ.items():
        if passes_through(name):
            values[name] = value
            passing[name] = Passed(name, FROM_USER)
    for name, value in OWN.items():
        values[name] = value
        passing[name] = Passed(name, FROM_TOOL, value)
    for name, raw in task_env.items():
        table, written = sources.get(name, (FROM_TASK, raw))
        if not name or "=" in name or "\0" in name or "\0" in raw:
            # No process environment holds it (the run could not start at all): said, left out.
            problems.append(
                f"{table}: {name!r} = {raw!r} cannot be in an environment (an empty name, '=' or NUL): "
                f"the runner gets no {name!r}"
            )
            continue
        resolved, missing = resolve_template(raw, filling) if resolve else (raw, None)
        if resolved is None:
            problems.append(
                f"{table}: {name} = {raw!r}, but {missing} is not set in your "
                f"environment (Harbor would stop with ValueError and not run the verifier): "
                f"the runner gets no {name}"
            )
            values.pop(name, None)
            passing.pop(name, None)
            continue
        values[name] = resolved
        passing[name] = Passed(name, table, written)
    for name in unset:
        # The task's table gives the verifier this name, unfilled: Harbor would not run it with the
        # container's own HOME either, and the note says the replay runs without it, so the user's
        # (the allowlist's) is not passed in its place.
        values.pop(name, None)
        passing.pop(name, None)
    for name, value in given:
        if name in fills_only:
            continue
        values[name] = value
        passing[name] = Passed(name, FROM_OPTION)
    problems += refused
    order = {FROM_USER: 0, FROM_TOOL: 1, FROM_OPTION: 3}  # the task's tables between
    passed = sorted(passing.values(), key=lambda p: (order.get(p.source, 2), p.name))
    held_back = sorted(name for name in environ if name not in values and name not in fills_only)
    return ChildEnvironment(values, passed, held_back, problems)


def _assignments(
    extra: Iterable[str], environ: Mapping[str, str]
) -> tuple[list[tuple[str, str]], list[tuple[str, ValueError]]]:
    """The ``--env`` words of ``extra``, read once (it may be a generator):
    the good ones as (name, value), and each refused with why."""
    good: list[tuple[str, str]] = []
    bad: list[tuple[str, ValueError]] = []
    for word in extra:
        try:
            good.append(parse_assignment(word, environ))
        except ValueError as exc:
            bad.append((word, exc))
    return good, bad


def filled_from_shell(
    task_env: Mapping[str, str],
    sources: Mapping[str, tuple[str, str]],
    extra: Iterable[str] = (),
) -> list[str]:
    """A note for each of a task's ``${VAR}`` templates that takes VAR from
    the user's environment or from ``--env VAR`` (Harbor's resolve_env_vars
    reads the environment of the machine that runs the job, which ``--env``
    stands for), since that value reaches the verifier and what it runs of
    the agent's; never the value itself, and none for a name an ``--env``
    word of ``extra`` sets over it. A note on the task, said by every face
    that says its notes (:meth:`Session.task_notices`)."""
    given = {name for name, _ in _assignments(extra, os.environ)[0]}
    notes = []
    for name, raw in task_env.items():
        read = template_variable(raw)
        if read is None or name in given or not (read in given or read in os.environ):
            continue
        table = sources.get(name, (FROM_TASK, raw))[0]
        # --env VAR sets VAR as the environment of the machine that runs Harbor would hold it.
        whence = f"--env {read}, set as on" if read in given else "your environment, as Harbor fills it on"
        notes.append(
            f"{table}: {name} = {raw!r} takes {read} from {whence} the machine that runs the job: "
            "the verifier gets its value"
        )
    return notes


def interpreter_switches(names: Iterable[str]) -> list[str]:
    """The ``PYTHON*`` variables among ``names``: the ones that change how the
    interpreter runs the verifier (named when held back, so the user knows
    why a run differs from their shell's ``python3``)."""
    return [name for name in names if name.startswith("PYTHON")]
