"""The replay's inputs from a trial: the workspace the verifier saw, and the
environment Harbor gave it.

Workspace: ``/app`` is in a trial only when collected as an artifact; it is
found through ``artifacts/manifest.json``'s ``destination``
(Harbor 0.26.0 ``harbor/trial/artifact_handler.py``). In separate mode the
verifier was given exactly those files; in shared mode they are a snapshot
taken after the agent, before the verifier ran in the same container.

Environment, lowest first, as Harbor 0.26.0 builds the verifier's ``exec``
(``harbor/environments/base.py`` ``_maybe_resolve_task_env``, ``_merge_env``;
``harbor/verifier/verifier.py`` ``merged_env``):

1. the container's env: ``[environment] env`` (separate mode: the verifier
   environment's own), ``${VAR}`` resolved;
2. the job's environment env (``config.json`` → ``environment.env``);
3. ``[verifier] env``, overlaid by the step's ``[steps.verifier] env`` and the
   job's verifier env (``config.json`` → ``verifier.env``), resolved by
   ``resolve_env_vars``: a value that is exactly ``${VAR}`` or
   ``${VAR:-default}`` comes from the environment of the machine that ran
   ``harbor run``, anything else is literal.

That machine's values are recorded nowhere in the trial. Where a replay
differs from Harbor: it never reads the user's shell because the trial names
a variable. The shell is not the machine that ran the job, and a trial is
untrusted input (its config.json and task.toml may be anyone's, and the
agent's code runs in the replay): a ``${AWS_SECRET_ACCESS_KEY}`` there would
take the user's key into the sandbox. So ``${VAR}`` and ``${VAR:-default}``
take VAR only from what the user passes on purpose with ``--env VAR`` or
``--env VAR=VALUE``, else the template's own default, else the replay runs
without it and says so (one of the reasons it may differ). Each filled template is said,
with where its value came from: the value itself only when it is the template's own default
(one from ``--env`` or the user's shell may be a secret: named, never shown).

``config.json`` keeps a sensitive value (a key naming KEY, SECRET, TOKEN,
PASSWORD, CREDENTIAL or AUTH) as ``${KEY}`` or redacted (``abcd****xyz``)
(``templatize_sensitive_env``); a redacted one is taken from ``--env KEY``
alone, as a template is, or named as missing.

The values handed over are final: the runner's environment takes them as
they are (:attr:`TaskConfig.env_final`), since Harbor resolves a template
once and a default that reads as one (``${A:-${B}}``) is a literal.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from verifier_tui.engine.advice import STAND_IN, Advice, of_run_trial
from verifier_tui.engine.harbor.folders import StepView, Trial
from verifier_tui.engine.record import field, record
from verifier_tui.engine.sandbox.environment import (
    is_variable_name,
    passes_through,
    resolve_template,
    template_variable,
)
from verifier_tui.engine.sandbox.view import APP
from verifier_tui.engine.task.config import SENSITIVE_KEY, SEPARATE, TaskConfig
from verifier_tui.engine.untrusted import kind, look

if TYPE_CHECKING:
    from collections.abc import Container, Mapping

_REDACTED = re.compile(r"^(?:\*\*\*\*|.{4}\*\*\*\*.{3})$")

#: How Harbor 0.26.0 is told to download /app after the agent: the task's
#: ``artifacts`` (``TaskConfig.artifacts``, a top-level key of task.toml, so it
#: must come before the first table), the job's (``JobConfig.artifacts``), or
#: ``harbor run --artifact`` (harbor/cli/jobs.py, which fills the job's list).
CAPTURE_SETTING = (
    f'Harbor 0.26.0 captures it next time with artifacts = ["{APP}"] at the top of '
    f'task.toml, before its first [table]; or artifacts: ["{APP}"] in the job\'s config '
    f"file; or harbor run --artifact {APP}"
)


@record(frozen=True)
class WorkspaceInput:
    """The workspace for the replay, when the trial has one.

    ``exact``: True when it is exactly what the verifier saw (separate mode),
    False for a shared-mode snapshot, None without one.
    """

    path: Path | None
    exact: bool | None
    words: str


@record(frozen=True)
class Filled:
    """A ``${VAR}`` template the replay filled: Harbor's value is not known."""

    name: str  # the variable the verifier gets
    table: str  # where the template is written
    template: str
    value: str
    given: str | None = None  # the VAR whose ``--env`` filled it; None: the template's own default

    def sentence(self, given: Container[str]) -> str:
        """The template in words, ``given`` the names ``--env`` sets (which win).

        A value that came from ``--env`` (typed, or a bare ``--env NAME`` read from the user's shell) is
        named, never shown, whatever its name: ``W = "${OPENAI_API_KEY:-none}"`` with ``--env W=sk-...``
        put the key in a note. Only the template's own default, written in the trial, is shown."""
        head = (
            f"{self.table} writes {self.name} = {self.template!r}, which Harbor filled on the machine that ran "
            "the job and recorded nowhere"
        )
        if self.name in given:
            return f"{head}; the replay takes {self.name} from --env {self.name}"
        if self.given is not None:
            return f"{head}; the replay takes {self.name} from --env {self.given}"
        value = _shown(self.name, self.value)
        # An action, not words: the pytest plugin has no --env and names the command that has it.
        return Advice(
            f"{head}; the replay takes {value} from the template's default (",
            of_run_trial(f"--env {self.name}=VALUE gives the one it had"),
            ")",
        )


def _not_taken(variable: str, what: str, without: str, *, template: bool = True) -> str:
    """``variable``, which the trial names (``what``: how; ``template``: in a
    ``${VAR}``, else a key Harbor redacted), left out of the replay: the
    user's environment gives nothing a trial names. The advice is one the
    user can follow: ``--env VAR`` is refused when VAR is not in their shell."""
    if not is_variable_name(variable):
        # Harbor's pattern reads all of ${...} up to '}' or ':-' as the name (${SECRET-x}: 'SECRET-x'), which
        # --env refuses and no shell sets: resolve_env_vars raises ValueError unless its host holds one so named.
        harbor = (
            "Harbor's pattern reads it whole, and would have stopped with ValueError, not run the verifier, "
            "unless its machine's environment held a variable so named; "
            if template
            else ""
        )
        return (
            f"{variable!r}, which is no variable name, is not taken in a replay ({what}): {harbor}the replay "
            f"runs without {without}, and no --env gives it"
        )
    # An action: the pytest plugin has no --env and names the command that has it.
    option = (
        of_run_trial(f"--env {variable} passes yours")
        if variable in os.environ
        else of_run_trial(f"--env {variable}=VALUE gives it")
    )
    return Advice(
        f"{variable} is not taken from your environment in a replay ({what}): the replay runs without {without}; ",
        option,
    )


def _shown(name: str, value: str) -> str:
    """A value said in a sentence, unless its name says it is a secret (Harbor's own test)."""
    return f"{name} (its value not shown)" if SENSITIVE_KEY.search(name) else f"{name}={value!r}"


@record(frozen=True)
class VerifierEnv:
    values: dict[str, str]
    missing: tuple[str, ...] = ()  # sentences naming each variable that could not be set
    layers: tuple[tuple[str, dict[str, str]], ...] = ()  # (where, raw values), lowest first
    sources: dict[str, tuple[str, str]] = field(default_factory=dict)  # as TaskConfig.env_sources: for each value
    filled: tuple[Filled, ...] = ()  # the templates filled here
    unset: tuple[str, ...] = ()  # the variables the trial gives the verifier that the replay runs without
    fills_only: tuple[str, ...] = ()  # --env names that filled a template and are no variable of the tables
    fills_note: str | None = None  # fills_only in words: what each filled, and that it is not passed itself


def trial_workspace(trial: Trial, step: StepView, mode: str | None) -> WorkspaceInput:
    """``/app`` from the trial's artifacts, found through the manifest."""
    entries = [e for e in step.artifacts if e.source.rstrip("/") == APP]
    entry = entries[-1] if entries else None
    path: Path | None = None
    how = ""
    if entry is not None:
        collected = entry.status in ("ok", "empty")
        if entry.path is None or not collected or not _real_folder(entry.path, step.trial_path):
            if not collected:
                why = (
                    f"Harbor did not collect {APP} (manifest status {entry.status!r}, "
                    f"destination {entry.destination!r})"
                )
            else:  # the folder itself gone since it was opened is no fault of the trial's
                # what is there said as what it is (a link, a place out of the trial, a file, nothing), which
                # "a link, or no folder" never told apart, and was neither for a destination out of the trial;
                # of the place read_manifest looked at (the trial's folder or artifacts/), never another
                where = entry.looked_at
                why = trial.gone() or (
                    f"the manifest gives no destination for the {APP} Harbor collected"
                    if where is None
                    else f"the trial's {os.path.relpath(where, step.trial_path)} is no folder of its own: "
                    f"{_what_is_there(where, step.trial_path)}"
                )
            return WorkspaceInput(None, None, Advice(why, STAND_IN))
        path = entry.path
        how = f"artifact {entry.destination}"
        if entry.exclude:
            how += f" (collected without {', '.join(entry.exclude)})"
    elif step.manifest.state == "missing" and _real_folder(step.artifacts_dir / "app", step.trial_path):
        # No manifest (an older Harbor): artifacts/<name of the source>, its naming before and since 0.14.
        path = step.artifacts_dir / "app"
        how = "artifacts/app (no manifest: the older layout's artifacts/<name>)"
    if path is None and step.artifacts_dir.is_symlink():  # it may have captured /app: not read through a link
        why = "its artifacts folder is a link: a replay never runs on what a link in a trial points to"
        return WorkspaceInput(None, None, Advice(why, STAND_IN))
    if path is None:
        return WorkspaceInput(None, None, Advice(f"the trial did not capture {APP} ({CAPTURE_SETTING})", STAND_IN))
    if mode == SEPARATE:
        return WorkspaceInput(path, True, f"{how}: exactly what the verifier saw (separate mode)")
    if mode is None:
        return WorkspaceInput(
            path,
            False,
            f"{how}: collected after the agent; whether the verifier saw exactly "
            "this (separate mode) or changed it first (shared mode) is not known",
        )
    return WorkspaceInput(
        path,
        False,
        f"{how}: a snapshot taken after the agent, before the verifier ran in the same container (shared mode)",
    )


def _what_is_there(path: Path, trial: Path) -> str:
    """What is at ``path`` instead of a folder of the trial's own, in words
    (``app is a link to /home/me: not read here``, ``x is not inside t``)."""
    found = look(path, trial)
    if not isinstance(found, os.stat_result):
        return found.problem or f"{path.name} cannot be read"
    return f"{path.name} is {'a file' if stat.S_ISREG(found.st_mode) else kind(found.st_mode)}, not a folder"


def _real_folder(path: Path, trial: Path) -> bool:
    """A folder of the trial's own, no link on the way: a replay never runs on
    a folder a link in the trial points to (the user's, for all one knows)."""
    found = look(path, trial)
    return isinstance(found, os.stat_result) and stat.S_ISDIR(found.st_mode)


def verifier_env(
    trial: Trial, step_name: str | None, task: TaskConfig | None, given: Mapping[str, str] | None = None
) -> VerifierEnv:
    """The verifier's environment as Harbor built it (module docstring);
    ``given``: the values the user passed with ``--env``, by name, the only
    ones a ``${VAR}`` of the trial's takes."""
    given = {} if given is None else given
    layers: list[tuple[str, dict[str, str]]] = []
    if task is not None:
        layers.append((task.container_env_table(step_name), task.container_env(step_name)))
    job_environment = _config_env(trial, "environment")
    layers.append(("config.json environment.env (the job's)", job_environment))
    verifier_layers: list[tuple[str, dict[str, str]]] = []
    if task is not None:
        verifier_layers.append(("task.toml [verifier] env", dict(task.verifier.env)))
        step = task.step(step_name)
        if step is not None:
            verifier_layers.append((f"task.toml [steps.verifier] env of {step.name}", dict(step.verifier.env)))
    verifier_layers.append(("config.json verifier.env (the job's)", _config_env(trial, "verifier")))
    layers += verifier_layers

    values: dict[str, str] = {}
    sources: dict[str, tuple[str, str]] = {}
    filled: dict[str, Filled] = {}
    missing: dict[str, str] = {}  # by the variable the verifier would get: a later table's value replaces it
    for where, raw in layers:
        for key, value in raw.items():
            for said in (filled, missing, values, sources):
                said.pop(key, None)
            # A literal stays; a template takes VAR from --env alone (Harbor: from its machine's environment,
            # for ${VAR} and ${VAR:-default} alike), else its own default, else it is missing.
            text, absent = resolve_template(value, given)
            variable = template_variable(value)
            if text is not None and text != value:
                filled[key] = Filled(key, where, value, text, variable if variable in given else None)
            if absent is None and where.startswith("config.json") and _is_redacted(key, value):
                text = given.get(key)
                if text is None:
                    missing[key] = _not_taken(key, f"redacted by Harbor in {where}", "it", template=False)
            elif text is None and absent is not None and key not in given:  # --env KEY=VALUE sets it all the same
                missing[key] = _not_taken(absent, f"{key} = {value!r} in {where}", key)
            if text is not None:
                values[key] = text
                sources[key] = (where, value)
    # Harbor reads VAR on its host to fill ``Z = "${VAR}"``; only Z reaches the verifier. A --env VAR given
    # to fill a template is not passed as itself: its value (a secret, maybe) under a second name, in a
    # variable the sandbox never had. One of the tables' own names, or one that fills nothing, passes as given.
    # A template is read only where it is the last table's value for its key: one a later table overwrites
    # with a literal (the job's Z = "lit" over the task's Z = "${VAR}") fills nothing.
    last = {key: value for _, raw in layers for key, value in raw.items()}
    fills: dict[str, list[str]] = {}
    for key, value in sorted(last.items()):
        variable = template_variable(value)
        if variable is not None and variable in given and variable not in last:
            fills.setdefault(variable, []).append(key)
    fills_only = tuple(sorted(fills))
    return VerifierEnv(
        values,
        tuple(missing.values()),
        tuple(layers),
        sources,
        tuple(filled.values()),
        unset=tuple(missing),
        fills_only=fills_only,
        fills_note=_fills_note({name: fills[name] for name in fills_only}),
    )


def _fills_note(fills: dict[str, list[str]]) -> str | None:
    """The ``--env`` names that only filled templates, and what each filled, said once: none is passed as
    itself (names only, never a value)."""
    if not fills:
        return None
    filled = "; ".join(f"--env {name} only filled {', '.join(keys)}" for name, keys in fills.items())
    # An allowlisted name (LANG, TZ, LC_*) still reaches the verifier: not the value given to fill the
    # template, but the user's own, as in every run. That is kept rather than dropped for a replay: Harbor's
    # verifier has the container's LANG whatever its host's filled Z with, and the allowlist's is this
    # tool's stand-in for the container's in every run, so a replay without it would differ from its task's.
    kept = [name for name in fills if not passes_through(name)]
    passed = [name for name in fills if passes_through(name)]
    said = []
    if kept:
        names, it = (kept[0], "it") if len(kept) == 1 else (" or ".join(kept), "them")
        said.append(
            f"the verifier does not get {names} itself, as Harbor's never had {it} (Harbor reads {it} on "
            "the machine that ran the job to fill the templates)"
        )
    if passed:
        said.append(
            f"the verifier gets {' and '.join(passed)} from your environment, as every run does, not the value "
            "given (Harbor's has the container's)"
        )
    return f"{filled}: {'; '.join(said)}"


def _config_env(trial: Trial, section: str) -> dict[str, str]:
    table = trial.config.get(section)
    env = table.get("env") if isinstance(table, dict) else None
    return {str(k): str(v) for k, v in env.items()} if isinstance(env, dict) else {}


def _is_redacted(key: str, value: str) -> bool:
    return bool(SENSITIVE_KEY.search(key)) and bool(_REDACTED.match(value))
