"""A multi-step task (task.toml ``[[steps]]``): what Harbor verifies for each
step, against what a run of the task shows, and the task as one step of it
(``--step NAME``).

Mirrors Harbor 0.26.0 ``harbor/verifier/verifier.py`` ``Verifier._resolve_tests``
and ``verify``: a step is verified with ``tests/`` uploaded into ``/tests``,
then the step's own ``steps/<name>/tests/`` over it (the step's files win),
and the environment ``[verifier] env`` overlaid by the step's
``[steps.verifier] env``; ``harbor/trial/trial.py`` ``_run_step_verifier``
gives it the step's ``[steps.verifier]`` timeout and user.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifier_tui.engine import untrusted
from verifier_tui.engine.advice import STEP_NAMED, STEP_OPTION, Advice
from verifier_tui.engine.plain import one_line, typed_back, typed_in_bash
from verifier_tui.engine.record import replace
from verifier_tui.engine.task.config import TOML_UNREAD, refused_words, toml_unread
from verifier_tui.engine.task.kinds import step_tests, step_tests_unused, task_runner
from verifier_tui.runner_source import runner_path

__all__ = ["step_tests"]  # told from the task's layout (kinds), which discovery reads too

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from verifier_tui.engine.task.cases import Case
    from verifier_tui.engine.task.config import TaskConfig
    from verifier_tui.engine.task.discovery import Task
    from verifier_tui.engine.task.kinds import OwnRunner


def tests_dirs(task_dir: Path, step: str | None) -> list[Path]:
    """Harbor uploads ``tests/`` then a step's own ``steps/<name>/tests/`` into
    ``/tests``: where a file of ``/tests`` comes from, the step's first."""
    own = step_tests(task_dir, step)
    return [task_dir / "tests"] if own is None else [own, task_dir / "tests"]


def shim_verifier(task_dir: Path, step: str | None = None) -> tuple[Path | None, Path | None]:
    """The verifier the task's test.sh hands to the runner, as a local file; and that test.sh when it names
    it by a word made as it runs (None: known), whose candidate is the shim's own, as discovery takes it."""
    from verifier_tui.engine.task.discovery import SHIMS_OWN, shim_reads

    for tests in tests_dirs(task_dir, step):
        text, _ = untrusted.read_text(tests / "test.sh", untrusted.SCRIPT_LIMIT)
        if text is None:
            continue
        named, known = shim_reads(text)
        unknown = None if known else tests / "test.sh"
        chosen = named if known else SHIMS_OWN
        found = [base / chosen for base in tests_dirs(task_dir, step) if chosen and (base / chosen).is_file()]
        return (found[0] if found else None), unknown
    return None, None


def step_runner(task_dir: Path, step: str | None) -> OwnRunner | None:
    """The runner the sandbox runs for ``step``, ``/tests/.ng/run_verifier.py``: the step's own
    when it has one there at all (uploaded over tests/'s), else the task's (:func:`task_runner`)."""
    return task_runner(task_dir / "tests", runner_path, step)


def plain_test_sh(task_dir: Path, step: str | None) -> str | None:
    """The test script Harbor ran, when it is not the runner's shim (a plain test.sh task)."""
    from verifier_tui.engine.task.discovery import SHIM_MARKER

    for tests in tests_dirs(task_dir, step):
        script = tests / "test.sh"
        text = untrusted.read_bytes(script, untrusted.SCRIPT_LIMIT, keep="head").text()  # as discovery reads it
        if text is None:
            continue
        return None if SHIM_MARKER in text else script.relative_to(task_dir).as_posix()
    return None


def steps_notices(
    config: TaskConfig,
    step: str | None,
    *,
    dropped: str | None = None,
    kept: str | None = None,
    runs: str = "this run is",
) -> list[str]:
    """Said when the task has steps and no step was chosen: the run is the
    task's ``tests/`` with its ``[verifier]``, which Harbor never runs as
    such on a multi-step task. ``dropped``: the step ``--step`` named, which
    task.toml no longer has (changed while watching): said instead, once;
    ``kept``: the verifier the user named under ``steps/``, which still runs;
    ``runs``: what runs ``tests/`` (audit runs probes, not one run)."""
    names = ", ".join(s.name for s in config.steps)
    if config.unread is not None:  # no run is made: its own line says why, the steps are not known
        return []
    if dropped is not None:
        # a task.toml that is not TOML may still list the step: its steps cannot be read, as no_steps says
        gone = (
            f"{TOML_UNREAD}: its steps cannot be read"
            if toml_unread(config)
            else f"task.toml no longer has it ({f'steps: {names}' if names else 'no [[steps]]'})"
        )
        run = (
            "this run is tests/ with the task's [verifier]"
            if kept is None
            else f"this run is {kept}, which you chose, with tests/ alone as /tests (no step's tests over it)"
        )
        # The TUI says "step NAME": its S chooses a step as --step does
        return [Advice(STEP_NAMED, f" {dropped}: {gone}, so the step is dropped: {run}")]
    if not config.steps or step is not None:
        return []
    return [
        Advice(
            f"a multi-step task ([[steps]]: {names}): Harbor verifies each step with steps/<name>/tests over "
            f"tests/ (the step's files win) and the step's own [steps.verifier]; {runs} tests/ with the "
            "task's [verifier]; ",
            # an option of the command line; the TUI's S chooses the step on screen; the pytest plugin names the
            # command that takes it
            STEP_OPTION,
        )
    ]


def step_back(task_dir: Path, name: str) -> str:
    """Said when task.toml has ``--step``'s step again after dropping it (changed while watching):
    the runs are the step's again, and scored as it, where the note said they were not. Worded as
    the note of its dropping is (the TUI's S chooses a step as --step does)."""
    return Advice(
        STEP_NAMED, f" {name}: task.toml has it again, so this run is the step's ({tests_words(task_dir, name)})"
    )


def tests_words(
    task_dir: Path, name: str, path: Callable[[Path], str] | None = None, text: Callable[[str], str] = str
) -> str:
    """What ``/tests`` is for step ``name``, as every face says it (the TUI's S list, watch's note of
    the step back): ``path`` and ``text`` word a path and the tool's sentence for the face."""
    own = step_tests(task_dir, name)
    if own is not None:
        return f"/tests is {path(own) if path else own.relative_to(task_dir).as_posix()} laid over tests/"
    unused = step_tests_unused(task_dir, name)
    return f"/tests is tests/ alone: {text(unused) if unused else 'the step has no tests of its own'}"


def step_named(config: TaskConfig, typed: str) -> str | None:
    """The name of the task's step ``typed`` names: as written or as a listing spells it
    (:func:`~verifier_tui.engine.plain.typed_back`), as ``--case`` and a trial's ``--step`` take names.
    One at most: a spelling holds ``<``, which no step name Harbor loads does (they are kept out, but
    one may be typed: :func:`step_kept_out`)."""
    return next((step.name for step in config.steps if typed_back(step.name, typed)), None)


def step_kept_out(task: Task, typed: str, named: str) -> str | None:
    """The refusal of ``--step`` where ``typed`` is written as a ``[[steps]]`` name kept out of the
    steps (Harbor refuses it, the tool runs the task with a note) and names step ``named`` only as a
    listing spells it: the user may mean either, and the one kept out can never be run as a step."""
    if typed == named or typed not in task.config.steps_kept_out:
        return None
    shown = one_line(typed, untrusted.TARGET_CHARS)
    return Advice(
        STEP_NAMED,
        f" {shown}: 2 steps of {task.name} read so: task.toml's [[steps]] name '{shown}', which Harbor refuses "
        f"(kept out of the steps: rename it), and step {shown} as the listing spells it; give that one "
        f"typed in bash as: {typed_in_bash(named)}",
    )


def no_such_step(task: Task, name: str) -> str:
    """``--step NAME`` naming no step of the task, in one line. Of a task
    Harbor would refuse to load, that first, then the steps as read: only a
    task.toml that is not TOML has steps that cannot be read. The step is the
    STEP_NAMED action: the TUI's S chose it, a flag its user never typed."""
    config = task.config
    shown = one_line(name, untrusted.TARGET_CHARS)  # each name as a listing shows it, as --case's refusal does
    if not config.steps:
        return Advice(STEP_NAMED, f" {shown}: {no_steps(task)}")
    names = ", ".join(one_line(s.name, untrusted.TARGET_CHARS) for s in config.steps)
    why = f"{task.name} has no step '{shown}' (steps: {names})"
    return Advice(
        STEP_NAMED, f" {shown}: {refused_words(config.refused)}; {why}" if config.refused else f" {shown}: {why}"
    )


def no_steps(task: Task) -> str:
    """Why a task has no step to choose (``--step NAME``, the TUI's S), in one
    line: a task Harbor refuses to load says so first (a task.toml that is not
    TOML, whose steps cannot be read, is not verified "as one" either)."""
    config = task.config
    if config.unread is not None:
        return config.unread
    if toml_unread(config):
        return f"{refused_words(config.refused or '')}; its steps cannot be read"
    if config.refused:  # Harbor verifies it not at all
        return f"{refused_words(config.refused)}; {task.name} has no [[steps]] in its task.toml"
    return f"{task.name} has no [[steps]] in its task.toml (Harbor verifies it as one)"


def step_config(config: TaskConfig, name: str) -> TaskConfig:
    """``config`` as Harbor verifies step ``name``: the step's own
    ``[steps.verifier]`` timeout (``Trial._step_verifier_timeout_sec``: the
    step's ``timeout_sec``, whose model default is 600 whatever the task's
    ``[verifier]`` says), the variables of ``Verifier.verify`` (the
    container's, ``[verifier] env``, then the step's ``[steps.verifier] env``
    over them) and the step's network (``resolve_verifier_phase_policy``)."""
    step = config.step(name)
    assert step is not None, "a step of the task's own"
    settings = step.verifier
    container, table = config.container_env(name), config.container_env_table(name)
    own = f"task.toml [steps.verifier] env of {name}"
    return replace(
        config,
        timeout_sec=settings.timeout_sec,
        verifier=settings,
        env={**container, **config.verifier.env, **settings.env},
        env_sources={
            **{key: (table, value) for key, value in container.items()},
            **{key: ("task.toml [verifier] env", value) for key, value in config.verifier.env.items()},
            **{key: (own, value) for key, value in settings.env.items()},
        },
        verifier_network_mode=config.verifier_network_mode_of(name),
    )


def task_for_step(task: Task, name: str) -> Task:
    """``task`` as Harbor verifies step ``name`` (a step of it): its settings
    (:func:`step_config`), and the verifiers and test.sh of ``/tests`` as
    the step's own tests over ``tests/`` make it, the step's first."""
    from verifier_tui.engine.task.discovery import find_verifiers

    own = step_tests(task.root, name)
    config = step_config(task.config, name)
    if own is None:
        return replace(task, config=config)
    cases = [_case_data(task, name, c) for c in task.cases]
    mine = find_verifiers(own)
    # A file of the step's replaces the one of tests/ at the same place (Harbor uploads the step's last).
    kept = [v for v in task.verifiers if not (v.is_relative_to(task.tests_dir) and _there(own, v, task.tests_dir))]
    shim, unknown = shim_verifier(task.root, name)
    verifiers = [*mine, *kept]
    if shim is not None and shim not in verifiers and not shim.is_symlink():
        verifiers.append(shim)  # the shim runs it whatever it holds, as discovery takes tests/verifier.py
    test_sh = next((d / "test.sh" for d in tests_dirs(task.root, name) if (d / "test.sh").is_file()), None)
    return replace(
        task,
        config=config,
        cases=cases,
        verifiers=verifiers,
        test_sh=test_sh,
        own_runner=step_runner(task.root, name),
        plain_test_sh=plain_test_sh(task.root, name) is not None,
        shim_runs=None if unknown else shim if shim is not None else task.shim_runs,
        shim_named_as_it_runs=unknown is not None,
        looked_in=[own, *task.looked_in],
    )


def step_task_data(task: Task, step: str | None, found: Path | None) -> Path | None:
    """The task-wide task data ``found`` (:func:`~verifier_tui.engine.task.cases.default_task_data`)
    as step ``step`` has it: the shim passes ``/tests/task_data.json``, which is
    the step's own when it ships one (uploaded over tests/'s); a task_data.json
    at the task's root (verifier-tui's own place for it) stays."""
    own = step_tests(task.root, step)
    if own is None or not untrusted.present(own / "task_data.json"):
        return found
    return own / "task_data.json" if found in (None, task.tests_dir / "task_data.json") else found


def _case_data(task: Task, step: str, case: Case) -> Case:
    """A case that falls back to the task's task data takes the step's
    (a case's own task_data.json, or a row of tasks.jsonl, stays)."""
    if case.task_data is None and task.rows is not None:
        return case  # a parameterized task's case that names no row: said as it is
    return replace(case, task_data=step_task_data(task, step, case.task_data))


def _there(own: Path, verifier: Path, tests_dir: Path) -> bool:
    return untrusted.present(own / verifier.relative_to(tests_dir))
