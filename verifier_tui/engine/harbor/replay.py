"""The local replay of a trial: the same verifier on the same inputs, in
Harbor mode (Harbor never passes a response), with the environment and the
timeout Harbor gave it.

What the sandbox ran is read from the task's shim (``tests/test.sh``): the
verifier it names with ``--verifier /tests/...``, and ``--task-data
/tests/task_data.json`` only when that file exists. The workspace is the
trial's captured ``/app``; where it was not captured, the caller's stand-in
(``--workspace DIR``, ``--case NAME``, ``--stand-in empty``); without either
there is no replay, and ``skipped`` says what to give.

:class:`~verifier_tui.engine.harbor.trial_session.TrialSession` runs the plan.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from verifier_tui.engine import untrusted
from verifier_tui.engine.advice import TASK_RUNNER, Advice
from verifier_tui.engine.record import field, record
from verifier_tui.engine.task.kinds import some_names, step_tests_unused
from verifier_tui.engine.task.steps import plain_test_sh, shim_verifier, step_runner, step_tests, tests_dirs

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from verifier_tui.engine.harbor.inputs import VerifierEnv, WorkspaceInput
    from verifier_tui.engine.harbor.locate import TaskLocation


@record
class ReplayPlan:
    """Everything the local replay needs, or why there is none (``skipped``)."""

    task_dir: Path | None
    verifier: Path | None  # None: the session's choice (the task's only or tests/verifier.py)
    workspace: Path | None
    workspace_origin: str | None  # "exact", "snapshot", "stand-in" or None
    case: str | None
    env: dict[str, str]
    timeout_s: float | None
    task_data: Path | None
    empty: bool = False  # an empty /app stands in: no workspace and no case (the run's empty scratch folder)
    skipped: str | None = None
    no_workspace: bool = False  # skipped only for want of a workspace: the rest of the plan stands (explain)
    workspace_words: str = ""  # where the replay's workspace comes from, in words
    stand_in_unused: str | None = None  # a stand-in was given, and the captured /app served instead
    extra_tests: Path | None = None  # the step's own steps/<name>/tests: Harbor uploads it over tests/
    notices: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)  # what may make the replay differ, said when it does
    env_sources: dict[str, tuple[str, str]] = field(default_factory=dict)  # each of env's: its table, as written
    env_unset: tuple[str, ...] = ()  # the trial's variables the replay runs without (VerifierEnv.unset)
    env_fills_only: tuple[str, ...] = ()  # --env names that only fill templates (VerifierEnv.fills_only)
    env_templates_apart: tuple[str, ...] = ()
    """The task.toml's variables written as a template that ``run TASK``,
    which fills a template from the user's environment with its ``--env``
    words over it, fills otherwise than the replay did, or fills the same
    but passes the ``--env`` name itself (:func:`_templates_apart`,
    :func:`templates_not_in`)."""
    env_templates_by_env: dict[str, str] = field(default_factory=dict)
    """Those of :attr:`env_templates_apart` the replay filled from ``--env
    VAR``, VAR only filling templates, by name: VAR. ``run TASK --env VAR``
    fills them the same way; what differs is that it passes VAR itself to
    the verifier, which the replay held back."""
    runner_note: str | None = None
    """The sandbox ran the task's own runner, the replay runs ours: a notice
    (the phases shown are ours) and a reason the verdicts may differ, unless
    the verdict comes from the task's test.sh, which runs the task's runner
    as the sandbox did."""

    def verdict_by_test_sh(self) -> ReplayPlan:
        """This plan when the task's test.sh gave the verdict: the runners'
        difference is no reason the verdicts differ."""
        if self.runner_note is None:
            return self
        from verifier_tui.engine.record import replace

        return replace(self, reasons=[r for r in self.reasons if r != self.runner_note])

    def to_json(self) -> dict[str, Any]:
        return {
            "task": str(self.task_dir) if self.task_dir else None,
            "verifier": str(self.verifier) if self.verifier else None,
            "workspace": str(self.workspace) if self.workspace else None,
            "workspace_origin": self.workspace_origin,
            "stand_in_unused": self.stand_in_unused,
            "case": self.case,
            "env": sorted(self.env),
            "timeout_s": self.timeout_s,
            "task_data": str(self.task_data) if self.task_data else None,
            "notices": self.notices,
        }


@record(frozen=True)
class StandIn:
    """What stands in for /app where a trial did not capture it: a folder, a
    case of the task, or an empty folder; at most one."""

    workspace: Path | None = None
    case: str | None = None
    empty: bool = False

    @property
    def words(self) -> str | None:
        return stand_in_words(self.workspace, self.case, self.empty)

    def too_many(self, workspace: str, case: str, empty: str) -> str | None:
        """Why these cannot be taken, when more than one stand-in was given,
        each named by the option that gave it (the command line's, the pytest
        plugin's: ``workspace``, ``case``, ``empty``); None when at most one was."""
        given = [flag for flag, value in ((workspace, self.workspace), (case, self.case), (empty, self.empty)) if value]
        return f"{' and '.join(given)}: give one stand-in for /app" if len(given) > 1 else None

    def problem(self, workspace: str, case: str, empty: str) -> str | None:
        """Why the stand-in given is bad input, in one line (flags as for
        :meth:`too_many`): more than one, or a workspace that is no folder.
        Said before anything is read or run, by every face (run, test, the
        TUI), as --workspace is on a task (each replay said it, after the whole
        walkthrough; the TUI opened the trial's screen)."""
        too_many = self.too_many(workspace, case, empty)
        if too_many is not None:
            return too_many
        if self.workspace is not None and not Path(self.workspace).expanduser().is_dir():
            from verifier_tui.engine.session import not_a_workspace

            return not_a_workspace(self.workspace)  # as on a task: one wording
        return None


def _env_names(command: Sequence[str]) -> set[str]:
    """The names ``command``'s ``--env NAME`` / ``--env NAME=VALUE`` set (a
    reproduce command: each option and its value are words of their own)."""
    return {word.partition("=")[0] for flag, word in zip(command, command[1:], strict=False) if flag == "--env"}


def job_env_not_in(plan: ReplayPlan, command: Sequence[str]) -> list[str]:
    """The names of the job's variables the replay had (config.json's
    ``verifier.env`` and ``environment.env``, as Harbor layers them) that
    ``command`` (``run TASK``, which reads the task's own env only) does not
    carry as ``--env``: named, never their values (a value may be a secret)."""
    given = _env_names(command)
    jobs = (name for name, (where, _) in plan.env_sources.items() if where.startswith("config"))
    return sorted(name for name in jobs if name not in given)


def templates_not_in(plan: ReplayPlan, command: Sequence[str]) -> list[str]:
    """The names of the task.toml's templates that ``command`` (``run TASK``:
    it fills a ``${VAR}`` from the user's environment with its ``--env``
    words over it, as Harbor does from its host's) fills otherwise than the
    replay did, or fills alike while passing the ``--env`` VAR itself
    (:func:`_templates_apart`), less those its ``--env`` sets itself."""
    given = _env_names(command)
    return [name for name in plan.env_templates_apart if name not in given]


def command_lacks_env(plan: ReplayPlan, command: Sequence[str]) -> list[str]:
    """What ``command`` does not give as the replay had it: the job's
    variables and the task's templates filled otherwise, by name."""
    return sorted({*job_env_not_in(plan, command), *templates_not_in(plan, command)})


def command_lacks_overlay(plan: ReplayPlan, command: Sequence[str]) -> str | None:
    """The step's own tests folder (relative to the task) the replay laid
    over tests/ as Harbor uploads it (``plan.extra_tests``) that ``command``
    does not: ``run TASK`` lays it only with ``--step NAME``, which it leaves
    out (and would refuse) once task.toml no longer lists the trial's step."""
    if plan.extra_tests is None or plan.task_dir is None or "--step" in command:
        return None
    return plan.extra_tests.relative_to(plan.task_dir).as_posix()


def _templates_apart(env: VerifierEnv) -> tuple[str, ...]:
    """``env``'s variables of the task's own tables (not the job's, which
    ``run TASK`` does not read at all) that ``run TASK``, which fills a
    template from the user's environment with its ``--env`` words over it,
    does not give the verifier as the replay did (names only, never a value):

    - ran without, or filled with the template's default, where the user's
      environment holds the template's variable (without it ``run TASK``
      does exactly as the replay did), or where that variable is one of the
      job's (config.json's): Harbor gives the job's to the verifier, never
      to the host's environment a template is filled from, so the replay
      left the template to its default; ``run TASK --env VAR=VALUE``, which
      ``c`` and :func:`job_env_not_in` ask for to pass the job's VAR, fills
      the template from it too;
    - filled from ``--env VAR`` where VAR only fills templates (``fills_only``):
      ``run TASK ... --env VAR`` fills the template from it too, with the same
      value, as the shell that runs Harbor would, but also passes VAR itself,
      which the replay held back (:func:`_templates_by_env`)."""
    from verifier_tui.engine.sandbox.environment import template_variable

    written = {key: (where, value) for where, raw in env.layers for key, value in raw.items()}  # the last table's
    jobs = {name for name, (where, _) in written.items() if where.startswith("config")}
    filling = set(os.environ) | jobs  # what run TASK, given the job's variables as --env, fills a template from
    left_or_default = {*env.unset, *(f.name for f in env.filled if f.given is None)}
    by_env = set(_templates_by_env(env))
    apart = by_env | {name for name in left_or_default if template_variable(written[name][1]) in filling}
    return tuple(sorted(name for name in apart if name not in jobs))


def _templates_by_env(env: VerifierEnv) -> dict[str, str]:
    """The templates the replay filled from ``--env VAR``, VAR no variable of
    the tables (``fills_only``), by name: VAR."""
    return {f.name: f.given for f in env.filled if f.given is not None and f.given in env.fills_only}


def stand_in_words(workspace: Path | str | None, case: str | None, empty: bool) -> str | None:
    """The stand-in for /app as the user gave it, in words (None: none given)."""
    if empty:
        return "an empty /app"
    if workspace is not None:
        return str(workspace)
    return f"case {case}" if case is not None else None


def plan_replay(
    location: TaskLocation,
    captured: WorkspaceInput,
    env: VerifierEnv | None,
    step: str | None,
    *,
    workspace: Path | str | None = None,
    case: str | None = None,
    empty: bool = False,
    over_capture: bool = False,
    timeout: float | None = None,
    runner: str = "ours",
    env_words: tuple[str, ...] = (),
) -> ReplayPlan:
    """The replay's inputs for one trial (or ``step``), or why it cannot run:
    the task's ``location``, the /app the trial ``captured``, the verifier's
    ``env`` and ``timeout`` (None: not known) as the sandbox had them.
    ``runner``: ``ours`` (verifier-tui's, which reports its phases) or
    ``task`` (the one the task ships in tests/.ng/: what the sandbox ran).

    A stand-in (``workspace``, ``case``, or ``empty``) serves only where the trial did not capture /app, unless
    ``over_capture`` (the user chose it for this one trial on screen).
    ``env_words``: ``--env``'s, which win over a template filled here."""
    plan = ReplayPlan(
        task_dir=location.path,
        verifier=None,
        workspace=None,
        workspace_origin=None,
        case=None,
        env=dict(env.values) if env else {},
        timeout_s=None,
        task_data=None,
    )
    task_dir = location.path
    if task_dir is None:
        plan.skipped = location.message()
        return plan
    plain = plain_test_sh(task_dir, step)
    if plain is not None:
        plan.skipped = (
            f"{plain} is the task's own script, not the runner's shim: the sandbox ran it, not a Python "
            "verifier through the runner, so there is nothing to replay"
        )
        return plan
    given = stand_in_words(workspace, case, empty)
    if captured.path is not None and not (given and over_capture):
        try:
            os.scandir(captured.path).close()
        except OSError as exc:  # a replay on it would fail on files the verifier did see
            plan.skipped = f"the /app the trial captured ({captured.path}) cannot be read: {exc.strerror or exc}"
            return plan
        plan.workspace = captured.path
        plan.workspace_origin = "exact" if captured.exact else "snapshot"
        plan.workspace_words = captured.words
        if given:
            plan.stand_in_unused = f"your stand-in ({given}) was not used: the trial captured /app"
            plan.notices.append(plan.stand_in_unused)
    elif given:
        if workspace is not None:
            folder = Path(workspace).expanduser().absolute()
            if not folder.is_dir():
                plan.skipped = f"--workspace {workspace}: not a folder"
                return plan
            plan.workspace = folder
        else:
            plan.case = case
            plan.empty = empty
        plan.workspace_origin = "stand-in"
        plan.workspace_words = (
            f"your stand-in: {given}, instead of the /app the trial captured"
            if captured.path
            else f"your stand-in: {given} (the trial did not capture /app)"
        )
    else:
        plan.skipped = Advice("no workspace to replay on: ", captured.words)
        plan.no_workspace = True
    _take_verifier(plan, task_dir, step)
    for tests in tests_dirs(task_dir, step):
        if (tests / "task_data.json").is_file():
            plan.task_data = tests / "task_data.json"
            break
    plan.timeout_s = timeout
    if plan.timeout_s is None:
        plan.notices.append("the sandbox's verifier timeout is not known: the replay uses the task's")
    if env is not None:
        _take_env(plan, env, env_words)
    plan.extra_tests = step_tests(task_dir, step)  # staged over tests/, as Harbor uploads it
    linked = step_tests_unused(task_dir, step)
    if linked is not None:
        plan.notices.append(linked)
    runner_note = _runner_difference(task_dir, step) if runner == "ours" else None
    if runner_note:
        plan.notices.append(runner_note)
        plan.reasons.append(runner_note)
        plan.runner_note = runner_note
    return plan


def _take_verifier(plan: ReplayPlan, task_dir: Path, step: str | None) -> None:
    """The verifier test.sh hands the runner into ``plan``; where test.sh makes its word as it runs, the
    candidate a task's run takes, said as that run says it, and a reason the replay may differ."""
    plan.verifier, named_as_it_runs = shim_verifier(task_dir, step)
    if named_as_it_runs is not None:
        from verifier_tui.engine.task.discovery import named_as_it_runs_notice

        note = named_as_it_runs_notice(named_as_it_runs.relative_to(task_dir).as_posix())
        plan.notices.append(note)
        plan.reasons.append(note)


def _take_env(plan: ReplayPlan, env: VerifierEnv, env_words: tuple[str, ...]) -> None:
    """The verifier's environment into ``plan``: where each value came from,
    and a note (and a reason the replay may differ) for each template filled
    or left out; ``env_words``: ``--env``'s."""
    plan.env_sources = dict(env.sources)
    plan.env_unset = env.unset
    plan.env_fills_only = env.fills_only
    plan.env_templates_apart = _templates_apart(env)
    plan.env_templates_by_env = _templates_by_env(env)
    named = {name for name, _ in env_assignments(env_words)}  # names only: a value is never said
    filled = [template.sentence(named) for template in env.filled]
    plan.notices += [*env.missing, *filled]
    plan.reasons += [*env.missing, *filled]
    if env.fills_note is not None:  # as Harbor does: a note, no reason the replay may differ
        plan.notices.append(env.fills_note)


#: A few of test.sh's own commands are named; the rest counted.
OWN_COMMANDS_NAMED = 4


def test_sh_own_commands(task_dir: Path, step: str | None = None) -> tuple[str, list[tuple[int, str]]]:
    """The commands the task's test.sh runs before it starts the runner that
    verifier-tui's shim does not (``cd /app``, a file written into /app):
    Harbor runs the whole script, a run of the runner alone runs none of
    them. The script's name in the task, and its lines up to the first
    naming ``run_verifier.py`` with their numbers; blank lines, comments and
    the shell's options (``set -eu``: they change how the script ends, not
    what the verifier sees) left out."""
    from verifier_tui.engine.task.discovery import SHIM_MARKER
    from verifier_tui.runner_source import shim_path

    shim = {line.strip() for line in shim_path().read_text(encoding="utf-8").splitlines()}
    for tests in tests_dirs(task_dir, step):
        text, _ = untrusted.read_text(tests / "test.sh", untrusted.SCRIPT_LIMIT)
        if text is None:
            continue
        out = []
        for number, line in enumerate(text.splitlines(), 1):
            command = line.strip()
            if not command or command.startswith("#"):
                continue
            if SHIM_MARKER in command:
                break
            if command not in shim and not command.startswith("set -"):
                out.append((number, command))
        return (tests / "test.sh").relative_to(task_dir).as_posix(), out
    return "tests/test.sh", []


def runner_alone_why(plan: ReplayPlan, step: str | None, ended_at: str | None) -> str:
    """Why verifier-tui's runner, run alone, ended otherwise than the task's
    test.sh: the script ended before it started the runner, or left a reward
    file as a link (``ended_at``, its words), its own commands before the
    runner, the task's own runner."""
    if ended_at is not None:
        return ended_at
    reasons = []
    script, own = test_sh_own_commands(plan.task_dir, step) if plan.task_dir is not None else ("test.sh", [])
    if own:
        named = some_names([f"line {number} `{command}`" for number, command in own], OWN_COMMANDS_NAMED)
        reasons.append(
            f"{script} runs commands of its own before it starts the runner, which the runner alone does not: {named}"
        )
    if plan.runner_note is not None:
        reasons.append(plan.runner_note)
    return "; ".join(reasons) or (
        f"not known: {script} runs no command of its own before the runner, and the task ships no other "
        "runner; compare the two outputs"
    )


def env_assignments(words: tuple[str, ...]) -> list[tuple[str, str]]:
    """``--env`` words as (name, value); one that is not an assignment is the run's to refuse."""
    from verifier_tui.engine.sandbox.environment import parse_assignment

    out = []
    for word in words:
        try:
            out.append(parse_assignment(word))
        except ValueError:
            continue
    return out


def _runner_difference(task_dir: Path, step: str | None) -> str | None:
    """The sandbox ran the task's vendored ``tests/.ng/run_verifier.py`` (a step's
    own, when it ships one); the replay stages verifier-tui's own. Read as
    ``--runner task`` reads it (:func:`step_runner`: a file of the task's own, no
    link, beneath tests/): a runner behind a link is never read, nor offered, so
    no difference is said."""
    own = step_runner(task_dir, step)
    if own is not None and not own.same_as_ours:
        return Advice(
            f"the task's {own.where} (what the sandbox ran) differs from the runner verifier-tui replays with (",
            TASK_RUNNER,
            " replays with the task's)",
        )
    return None
