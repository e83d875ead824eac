"""One invocation of the runner: :func:`prepare` stages the layout and builds
the command line (and the command that reproduces the run), the process
driver (:mod:`verifier_tui.engine.process`) runs it, and
:func:`verifier_tui.engine.results.collect` turns what it left into a
:class:`~verifier_tui.engine.model.RunResult`."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from verifier_tui.engine import untrusted
from verifier_tui.engine.advice import PYTHON_OPTION, Advice
from verifier_tui.engine.coverage import COVERAGE_FILE
from verifier_tui.engine.interpreter import PROBE_TIMEOUT_S, SHIM_REFUSAL_EXIT, probe_interpreter, shim_refusal
from verifier_tui.engine.model import STACK_SIGNAL, ResponseSource, RunInputs
from verifier_tui.engine.plain import cut_middle, unbroken
from verifier_tui.engine.record import field, narrowed, record, replace
from verifier_tui.engine.sandbox.environment import ChildEnvironment, child_environment
from verifier_tui.engine.sandbox.isolation import SYSTEM_FOLDERS
from verifier_tui.engine.sandbox.room import said
from verifier_tui.engine.sandbox.stage import Stage, StagingError
from verifier_tui.engine.sandbox.view import (
    APP,
    DOCKER_DEFAULT_WORKDIR,
    TESTS,
    Limits,
    braced_workspace,
    braces_words,
    cpu_lease,
    cpus_to_bind,
    limits_for,
    normal_path,
    task_workdir,
    workspace_given,
)
from verifier_tui.engine.task.cases import wrap_text_response
from verifier_tui.engine.task.discovery import Task
from verifier_tui.engine.task.kinds import OwnRunner, task_nemo_gym, verifiers_folder
from verifier_tui.engine.task.rows import staged_row_text
from verifier_tui.runner_source import runner_path

if TYPE_CHECKING:
    from typing import Any

    from verifier_tui.engine.process import Held

# Default timeout when neither --timeout nor task.toml's [verifier] timeout_sec says.
# Harbor's own default verifier timeout is 600 s; a debugger should answer sooner,
# but a slow verifier must not be cut short by surprise: keep Harbor's.
DEFAULT_TIMEOUT_S = 600.0
EXPLAIN_FILE = "explain.json"
PHASES_FILE = "phases.jsonl"
DATASET_VERIFIER = ".ng/verifier.py"  # where a verifier outside the tests folder is staged (Task.staged_name)
NOTHING_CHOSEN = "no case and no workspace chosen: the verifier runs on an empty scratch workspace"
RESPONSE_TEXT_LIMIT = 64 * untrusted.MB  # a response.txt, wrapped into a response


@record(frozen=True)
class RunSpec(RunInputs):
    """Everything a run needs, fully resolved: its inputs (the user's own paths), and how to run them."""

    task: Task
    harbor_gives_up_s: float | None = None  # task.toml's timeout_sec when Harbor stops the verifier before it runs
    nemo_gym: Path | None = None  # --nemo-gym: another copy of nemo_gym/verifiers to vendor
    explain_only: bool = False
    runner: OwnRunner | None = None  # the task's own runner (None: ours)
    phases: bool = False  # ask the runner for its phases (--phases-to): the trial replay shows them
    env: tuple[str, ...] = ()  # --env words, as given: NAME or NAME=VALUE
    extra_tests: Path | None = None  # a step's own steps/<name>/tests, over tests/ in /tests as Harbor does
    via_test_sh: bool = False  # run the task's tests/test.sh as Harbor does (in the view), not the runner itself
    network: str = "task"  # the task's network_mode, or "host": this machine's (--network host)
    planted: tuple[tuple[str, bytes], ...] = ()  # files in the reward folder before the run (audit's probe)
    coverage: bool = False  # ask the runner which of the task's own lines ran (--coverage-to)
    start_error: str | None = None  # why it cannot start, known before staging (audit: its workspace was not made)

    @property
    def inputs(self) -> RunInputs:
        """What the run's result keeps of it: not the task, which each save reloads."""
        return narrowed(self, RunInputs)

    @property
    def own_runner(self) -> OwnRunner | None:
        """The task's own runner, when this run stages it (``--runner task``,
        or through test.sh, which runs what the task ships); None: ours."""
        return self.runner or (self.task.own_runner if self.via_test_sh else None)

    @property
    def own_nemo_gym(self) -> Path | None:
        """The nemo_gym the task vendors in /tests/.ng as this run lays it: tests/'s with the step's
        files over it (Harbor uploads both), or the step's alone; no other copy may shadow it. Told
        from the tests laid, not the step: a trial's replay lays its step's own whether or not
        task.toml still lists the step."""
        laid = task_nemo_gym(self.extra_tests) if self.extra_tests is not None else None
        return self.task.own_nemo_gym or laid


@record
class Prepared:
    """A run ready to start: the command, its environment, and how to map
    scratch paths back to the user's."""

    spec: RunSpec
    stage: Stage
    argv: list[str]
    env: dict[str, str]
    cwd: Path
    path_map: list[tuple[str, str]]
    notices: list[str] = field(default_factory=list)
    reproduce: list[str] = field(default_factory=list)
    start_error: str | None = None
    not_staged: bool = False  # the start error is the stage's: the run's files could not be staged (whole)
    shim_refusal: str | None = None  # the shim would not start the runner (Python too old): its message
    refusal_exit: int = SHIM_REFUSAL_EXIT  # what test.sh exits with then
    environment: ChildEnvironment | None = None  # how ``env`` was made, for the user
    marker: str | None = None
    """In the copy sandbox: the value of :data:`~verifier_tui.engine.process.MARKER`
    in the runner's environment, by which its escaped descendants are found."""
    guard: Any = None
    """In the copy sandbox: what the user's files looked like before the run
    (:class:`~verifier_tui.engine.sandbox.user_files.Snapshot`), to report what it wrote."""
    stack_signal: bool = False
    """The runner was given ``--stack-signal``: at a timeout it is asked for its stacks."""
    stack_answer: str = ""
    """At a timeout, how asking for the stack went (:func:`verifier_tui.engine.stacks.ask`)."""
    runner_script: str = ""
    """The runner's path on its command line (``/tests/.ng/run_verifier.py`` in the view)."""
    limits: Limits | None = None
    """The task's limits and the sandbox's paths, as this run gets them."""
    python: str = ""
    """The interpreter that runs the runner (through test.sh too): the view must show it."""
    memory_limit: int | None = None
    """Bytes the run's processes may hold together before the biggest is killed, as the kernel's OOM killer would."""
    memory_extra: Any = None
    """What else the run holds that counts toward ``memory_limit`` (the view's tmpfs), by its leader."""
    runner_over: Any = None
    """In a view: whether its runner exited, its init listing the strays, by its leader (at the timeout)."""
    attached: Any = None
    """The view's cgroups and network helper, made as the run starts (:class:`~.sandbox.containment.Attached`)."""
    folders: tuple[str, ...] = ()
    """The interpreter's folders (its installation and import path): the view shows them."""
    room_before: tuple[int, int] | None = None
    """The scratch's room (bytes, inodes) as the runner went: what the run itself took is told from what staging did."""

    def before_kill(self, leader: int) -> bool:
        """The process core's hook at a timeout: ask the runner for every
        thread's stack (:mod:`verifier_tui.engine.stacks`); True when asked."""
        if not self.stack_signal:
            return False
        from verifier_tui.engine.stacks import ASKED, ask

        self.stack_answer = ask(leader, self.runner_script)
        return self.stack_answer == ASKED


def prepare(spec: RunSpec, stage: Stage) -> Prepared:
    """Stage the layout for ``spec`` and build the runner's command line, in
    this order, each part using those before it: the staged inputs, the
    command line that names them, the path map from the stage's paths back
    to the user's, and (for a run that can start) the containment."""
    config = spec.task.config
    environment = child_environment(
        config.env,
        spec.env,
        sources=config.env_sources,
        resolve=not config.env_final,
        unset=config.env_unset,
        fills_only=config.env_fills_only,  # a replay's --env that only filled the trial's templates
    )
    interpreter = probe_interpreter(spec.python, timeout_s=min(PROBE_TIMEOUT_S, spec.timeout_s))
    prepared = Prepared(
        spec=spec,
        stage=stage,
        argv=[],
        env=environment.values,
        cwd=stage.app_dir,
        path_map=[],
        notices=list(environment.problems),
        reproduce=reproduce_command(spec),
        # a task.toml not read: no run on settings that may not be the task's
        start_error=spec.start_error or config.unread or interpreter.error,
        not_staged=(spec.start_error or config.unread) is not None,
        environment=environment,
        python=interpreter.executable or spec.python,
        folders=interpreter.folders,
    )
    staged = _stage_inputs(prepared, interpreter.nemo_gym_verifiers)
    # The test.sh staged: a step's own, laid over tests/'s as Harbor uploads them, is the one it runs.
    workdir = task_workdir(spec.task)
    unstartable, refused = test_sh_refusals(stage.tests_dir / "test.sh", via_test_sh=spec.via_test_sh, workdir=workdir)
    # With namespaces the runner sees the sandbox's own paths (/tests, /app,
    # /logs/verifier), as the shim's command line names them; in the copy
    # sandbox, the stage's folders themselves.
    app, app_note = (
        workspace_laid(stage.tests_dir, workdir, via_test_sh=spec.via_test_sh)
        if stage.namespace
        else (str(stage.app_dir), "")
    )
    limits = limits_for(spec.task, app, app_note)
    prepared.limits, stage.app_at = limits, limits.app
    with _unstaged_on_error(prepared):
        _command_line(prepared, staged)
    prepared.path_map = _path_map(spec, stage, staged)
    if prepared.start_error is None and stage.problem is not None:  # an input the stage could not take
        prepared.start_error, prepared.not_staged = stage.problem, True
    if prepared.start_error is None and refused is not None:  # refused: only the script itself, run, ends as bash's
        prepared.start_error, prepared.not_staged = refused, True
        # its words are test.sh's (--workspace /app/{src,lib}), never the view's /app the workspace stands at
        prepared.path_map = [(scratch, user) for scratch, user in prepared.path_map if scratch != limits.app]
    if prepared.start_error is not None:
        return prepared
    missing = None if unstartable else test_sh_program_missing(stage.tests_dir / "test.sh", workdir, ends_here=False)
    if missing is not None:  # only a run of test.sh itself ends for it (unstartable)
        prepared.notices.append(missing[0])
    prepared.shim_refusal = unstartable[0] if unstartable else shim_refusal(interpreter)
    if unstartable is not None:
        prepared.notices.append(unstartable[0])
        prepared.refusal_exit = unstartable[1]
    elif prepared.shim_refusal is not None:
        prepared.notices.append(
            Advice(
                f"{spec.python} is Python {interpreter.version}: the sandbox's test.sh refuses an interpreter "
                f"older than 3.8 (exit {SHIM_REFUSAL_EXIT}, no reward file) and never starts the runner; "
                "verifier-tui does the same. Choose a newer one: ",
                PYTHON_OPTION,
            )
        )
    else:
        with _unstaged_on_error(prepared):
            _contain(prepared, limits)
    return prepared


@contextmanager
def _unstaged_on_error(prepared: Prepared) -> Iterator[None]:
    """A file of the run's own the tool could not write into the stage (the
    view's environment, its resolv.conf, the interpreter's stand-ins on PATH)
    is this run's start error, as a copy that failed is: the scratch's file
    system full as ``audit`` or ``test`` runs several at once ended the whole
    command on one run."""
    try:
        yield
    except OSError as exc:
        prepared.start_error = prepared.start_error or f"could not stage the run: {said(exc, prepared.stage.root)}"
        prepared.not_staged = True


@record
class _Staged:
    """The run's inputs as the stage holds them (None: not given)."""

    verifier: str  # its path in the staged tests folder
    task_vendors: bool  # the task vendors its own nemo_gym (tests/.ng/nemo_gym)
    response: Path | None = None  # the file passed as --response
    row: Path | None = None  # a row of a tasks.jsonl, its fields as task_data.json
    task_data: Path | None = None  # a copy of the task data file


def _stage_inputs(prepared: Prepared, interpreters_nemo_gym: Path | None) -> _Staged:
    """Stage the tests (the runner and nemo_gym beside them) and the
    workspace, then the verifier, the response and the task data; a staging
    that fails is the run's start error."""
    spec, stage, notices = prepared.spec, prepared.stage, prepared.notices
    vendored, task_vendors = _nemo_gym_to_vendor(spec, interpreters_nemo_gym, notices)
    if isinstance(vendored, str):
        prepared.start_error, vendored = prepared.start_error or vendored, None
    own = spec.own_runner
    try:
        notices += stage.prepare(
            spec.task.tests_dir,
            spec.workspace,
            vendored,
            runner=own.path if own is not None else None,
            task_vendors_nemo_gym=task_vendors,
            extra_tests=spec.extra_tests,
            task_root=spec.task.root,
        )
    except StagingError as exc:
        prepared.start_error, prepared.not_staged = str(exc), True
    for name, data in spec.planted:  # what an agent sharing the reward folder left: the runner must clear it
        stage.plant(name, data)
    staged = _Staged(staged_verifier(spec), task_vendors)
    stage.place_dataset_verifier(spec.verifier if staged.verifier == DATASET_VERIFIER else None)
    if spec.response is not None:
        staged.response = _stage_response(spec.response, stage)
    if spec.task_data is not None and spec.task_id is not None:
        # A row of a tasks.jsonl: its fields as the rendered task's task_data.json would hold them.
        text, problem = staged_row_text(spec.task_data, spec.task_id)
        staged.row = stage.inputs_dir / "task_data.json"
        if text is None:
            prepared.start_error = prepared.start_error or problem
        elif prepared.start_error is None:
            stage.write_input("task_data.json", text)
    elif spec.task_data is not None:
        staged.task_data = stage.stage_input(spec.task_data, "task_data.json", "the task data")
    if spec.workspace is None and spec.case is None:
        notices.append(NOTHING_CHOSEN)
    if stage.vendored_from is not None and not task_vendors and spec.nemo_gym is not None:
        notices.append(f"nemo_gym/verifiers vendored from {stage.vendored_from}")
    return staged


def _command_line(prepared: Prepared, staged: _Staged) -> None:
    """The runner's command line: the staged files as the run sees them, and
    what the runner is to write, as far as the task's own runner knows the
    options (ours knows them all); or the task's test.sh, as Harbor starts it."""
    spec, stage, runner = prepared.spec, prepared.stage, prepared.spec.runner
    seen = stage.seen
    prepared.runner_script = seen(stage.ng_dir / "run_verifier.py")
    argv = [prepared.python, "-B", "-u", prepared.runner_script]
    argv += ["--verifier", seen(stage.tests_dir / staged.verifier), "--workspace", seen(stage.app_dir)]
    if staged.response is not None:
        argv += ["--response", seen(staged.response)]
    if staged.row is not None:
        argv += ["--task-data", seen(staged.row)]
    elif staged.task_data is not None and spec.task_data is not None:
        if stage.namespace and spec.task_data.parent == spec.task.tests_dir and spec.extra_tests is None:
            argv += ["--task-data", TESTS + "/" + spec.task_data.name]  # where the shim finds it
        else:
            argv += ["--task-data", seen(staged.task_data)]
    if spec.explain_only:
        if runner is not None and not runner.knows_explain:
            prepared.start_error = prepared.start_error or (
                "the task's own runner (tests/.ng/run_verifier.py) has no --explain: "
                "explain needs verifier-tui's runner (leave out --runner task)"
            )
        argv.append("--explain")
    else:
        argv += ["--reward-dir", seen(stage.reward_dir)]
    if runner is None or runner.knows_explain_to:  # inputs/ was emptied by the staging: no stale file
        # (with --explain, the document goes there rather than to stdout, which the verifier shares)
        argv += ["--explain-to", seen(stage.inputs_dir / EXPLAIN_FILE)]
    if not spec.explain_only:
        if spec.phases and (runner is None or runner.knows_phases_to):  # the runner appends to it
            argv += ["--phases-to", seen(stage.inputs_dir / PHASES_FILE)]
        if spec.coverage and (runner is None or runner.knows_coverage_to):
            argv += ["--coverage-to", seen(stage.inputs_dir / COVERAGE_FILE)]
        prepared.stack_signal = runner is None or runner.knows_stack_signal
    if prepared.stack_signal:  # where it was stuck, should it time out (engine/stacks.py); about 1.5 ms of its start
        argv += ["--stack-signal", STACK_SIGNAL]
    prepared.argv = argv
    if spec.via_test_sh:
        # What Harbor 0.26 runs (harbor/verifier/verifier.py, ``verify``): the
        # task's /tests/test.sh, made executable first, so its own first line
        # picks the shell; it starts whatever runner it names, as it names it.
        prepared.argv = test_sh_argv(stage.tests_dir / "test.sh", seen(stage.tests_dir / "test.sh"))
        prepared.stack_signal = False
        # The script finds its Python on PATH (python3, python): the one chosen here comes first.
        bin_dir = _python_on_path(stage, prepared.python)
        prepared.env = dict(prepared.env, PATH=seen(bin_dir) + os.pathsep + prepared.env.get("PATH", os.defpath))


def _path_map(spec: RunSpec, stage: Stage, staged: _Staged) -> list[tuple[str, str]]:
    """The stage's paths and the user's they stand for, in the order they are
    consulted (of two entries for one path, the first wins): the files staged
    on their own before the folders that hold them, then the stage's folders,
    then the same places as the view's runner sees them, the scratch folder last."""
    ng = stage.ng_dir
    path_map: list[tuple[str, str]] = []
    if stage.vendored_from is not None and not staged.task_vendors:
        path_map.append((str(ng / "nemo_gym" / "verifiers"), str(stage.vendored_from)))
    # The runner's own lines (a warning raised at verify's call) name the file that ran:
    # the task's runner, or verifier-tui's, which the task may not ship or ships another of.
    path_map.append((str(ng / "run_verifier.py"), str(spec.runner.path if spec.runner else runner_path())))
    if staged.task_vendors and spec.own_nemo_gym is not None:  # the task's own copy: the user's file
        path_map.append((str(ng / "nemo_gym"), str(spec.own_nemo_gym)))
    if staged.task_data is not None:
        path_map.append((str(staged.task_data), str(spec.task_data)))
    if staged.row is not None:
        path_map.append((str(staged.row), f"{spec.task_data} (row {spec.task_id})"))
    if staged.response is not None and spec.response is not None and spec.response.path is not None:
        path_map.append((str(staged.response), str(spec.response.path)))
    if spec.extra_tests is not None:  # the step's own files are theirs, not tests/'s
        path_map += [(str(stage.tests_dir / rel), str(spec.extra_tests / rel)) for rel in stage.overlaid]
    if staged.verifier == DATASET_VERIFIER:
        path_map.append((str(ng / "verifier.py"), str(spec.verifier)))
    path_map += [
        # The sandbox's /tests/.ng: the staged runner's folder (its role is the explain
        # document's "vendored helpers", beside the path, never glued into it).
        (str(ng), str(spec.task.tests_dir / ".ng")),
        (str(stage.tests_dir), str(spec.task.tests_dir)),
        (str(stage.app_dir), str(spec.workspace) if spec.workspace else "<empty scratch workspace>"),
        (str(stage.reward_dir), "<reward folder>"),
    ]
    if stage.namespace:  # the same places as the runner saw them
        path_map += [(there, user) for scratch, user in path_map if (there := stage.seen(Path(scratch))) != scratch]
        if staged.task_data is not None and spec.task_data is not None:
            path_map.append((TESTS + "/" + spec.task_data.name, str(spec.task_data)))
    path_map.append((str(stage.root), "<scratch>"))
    return path_map


def _contain(prepared: Prepared, limits: Limits) -> None:
    """Wrap the run in its isolation and the task's limits
    (:func:`~verifier_tui.engine.sandbox.containment.contain`)."""
    from verifier_tui.engine.sandbox.containment import contain

    spec = prepared.spec
    contained = contain(
        prepared.argv,
        prepared.env,
        stage=prepared.stage,
        limits=limits,
        interpreter=prepared.folders,
        network_choice=spec.network,
        workspace=spec.workspace,
        tests_dir=spec.task.tests_dir,
        verifier=spec.verifier,
        user_paths=[
            spec.task.tests_dir,
            spec.task.root / "task.toml",
            spec.verifier,
            spec.response.path if spec.response is not None else None,
            spec.task_data,
            spec.task.root,
            spec.workspace,
        ],
    )
    prepared.argv, prepared.env, prepared.start_error = contained.argv, contained.env, contained.start_error
    if contained.start_error is not None:  # the view cannot be built: bad input, exit 2
        prepared.not_staged = True
        # the path the error names is the view's, never the user's workspace
        prepared.path_map = [(scratch, user) for scratch, user in prepared.path_map if scratch != limits.app]
    prepared.cwd = contained.cwd or prepared.cwd
    prepared.notices += contained.notices
    prepared.marker, prepared.guard = contained.marker, contained.guard
    prepared.memory_limit = contained.memory_limit
    prepared.memory_extra, prepared.attached = contained.memory_extra, contained.attached
    prepared.runner_over = contained.runner_over
    prepared.limits = contained.limits


@contextmanager
def leased_cpus(prepared: Prepared, held: Held | None = None) -> Iterator[tuple[int, ...]]:
    """The CPUs to start ``prepared``'s run on (:func:`~verifier_tui.engine.process.popen`'s
    ``cpus``): the task's ``cpus`` worth of those this process's other runs
    use least, held while the block runs, and then in
    ``prepared.limits.cpu_list``; none when the task sets no ``cpus``. A
    ``held`` run is sent them with its go instead, and binds itself before
    the verifier runs (the runner's ``_wait_for_go``)."""
    limits = prepared.limits
    wanted = cpus_to_bind(limits.cpus) if limits is not None and "cpu" not in limits.cgroup else 0
    if limits is None or not wanted:
        yield ()
        return
    with cpu_lease(wanted) as cpus:
        prepared.limits = replace(limits, cpu_list=cpus)
        if held is not None:
            held.cpus = cpus
            yield ()
        else:
            yield cpus


def _python_on_path(stage: Stage, executable: str) -> Path:
    """A folder of the stage's inputs holding ``python3`` and ``python``,
    each a script that starts ``executable`` (a script, not a link: a virtual
    environment's interpreter knows itself by the path it is started from)."""
    import shlex

    from verifier_tui.engine.sandbox.mirror import make_real_dir, remove_path

    folder = stage.inputs_dir / "bin"
    make_real_dir(folder)
    for name in ("python3", "python"):
        target = folder / name
        if os.path.lexists(target):
            remove_path(target)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o755)
        with open(fd, "w", encoding="utf-8") as handle:
            handle.write(f'#!/bin/sh\nexec {shlex.quote(executable)} "$@"\n')
    return folder


def test_sh_argv(staged: Path, seen_as: str) -> list[str]:
    """How the kernel would start ``test.sh`` once executable (fs/binfmt_script.c): its ``#!``
    line's interpreter, to the first space or tab, then the rest of the line as one argument,
    trimmed of spaces and tabs only (a CRLF line's \\r stays, as the kernel keeps it); a relative
    interpreter is the working directory's (:func:`_test_sh_program`). Without
    one (a BOM before ``#!`` too) the kernel refuses the file and the shell that asked runs it
    itself: Harbor asks from ``bash -c`` (harbor/environments/docker/docker_unix.py,
    ``exec_shell_args``), so bash runs it, not sh."""
    kernel = _shebang(staged)[0]
    if kernel and "/" not in kernel[0]:  # the kernel looks in the working directory, where sh's exec looks on PATH
        kernel[0] = "./" + kernel[0]
    return [*kernel, seen_as] if kernel else ["bash", seen_as]


_BINPRM_BUF_SIZE = 256  # the bytes of a file the kernel reads its #! line from


def _shebang(test_sh: Path) -> tuple[list[str], bytes]:
    """The interpreter and its argument (if any) the kernel starts ``test_sh`` with, read from its first
    256 bytes as fs/binfmt_script.c ``load_script`` reads them (zero-padded), and those bytes. None (the
    kernel's ENOEXEC: the shell that asked runs the file itself) without ``#!``, without a name, or when
    the first line does not end in those bytes and no blank or NUL follows the name (it may be cut). The
    name ends at a blank or a NUL; past blanks the line's rest, to a NUL, is one argument, trimmed of
    blanks only (a CRLF line's \\r stays). Words keep the file's bytes (``os.fsdecode``, as exec takes them)."""
    head = untrusted.read_bytes(test_sh, _BINPRM_BUF_SIZE, keep="head").data or b""
    buf = head.ljust(_BINPRM_BUF_SIZE, b"\0")
    if not buf.startswith(b"#!"):
        return [], head
    end = buf.find(b"\n")
    if end < 0:  # the line is cut: only a name that ends before the buffer does is run, the rest to byte 255
        if not re.search(rb"[ \t\0]", buf[2:].lstrip(b" \t")):
            return [], head
        end = _BINPRM_BUF_SIZE - 1
    line = buf[2:end].strip(b" \t")
    if not line:
        return [], head
    name = re.split(rb"[ \t\0]", line, maxsplit=1)[0]
    rest = line[len(name) :]
    words = [name] if not rest.startswith((b" ", b"\t")) else [name, rest.lstrip(b" \t").split(b"\0", 1)[0]]
    return [os.fsdecode(word) for word in words], head


#: What Harbor's bash exits with where the kernel answers EACCES to the exec of test.sh: its ``#!`` line
#: names the program "" (Linux 6 refuses an empty name so; bash: "bad interpreter: Permission denied").
NO_PROGRAM_EXIT = 126


def test_sh_unstartable(
    test_sh: Path, workdir: str = DOCKER_DEFAULT_WORKDIR, *, missing: bool = True
) -> tuple[str, int] | None:
    """Why Harbor could not start ``test_sh``, said as the run's one line, and what test.sh exits with
    (None: it could). Harbor 0.26 runs it as a file (harbor/verifier/verifier.py: ``chmod +x``, then its
    path as the command, harbor/utils/scripts.py ``build_execution_command``; only a Windows host strips
    \\r first, docker_unix.py), so a CRLF file's \\r ends the program its ``#!`` names: ``/bin/bash\\r`` is
    no file (bash: "cannot execute: required file not found", 127), and ``env`` finds no ``bash\\r``
    (127). A ``#!`` followed by nothing but blanks before a NUL or the file's end names the program ""
    (fs/binfmt_script.c reads it so), which the kernel refuses (126; an empty ``#!`` line, one that
    ends, the kernel leaves to bash). A program the sandbox does not have (:func:`_test_sh_program`)
    cannot start either (127, bash's or env's), unless ``missing`` is False: that one is this machine's
    answer, and the image may have the program. What an interpreter does with a \\r in its argument
    (``#!/bin/bash -e\\r``) is its own, and the replay meets it by running test.sh as the kernel would
    (:func:`test_sh_argv`)."""
    program = _test_sh_program(test_sh, workdir)
    first = cut_middle(unbroken(program.head.split(b"\n", 1)[0].decode(errors="replace")), 120)
    if program.words and not program.words[0]:
        return (
            f"tests/test.sh's first line `{first}` names no program (blanks at most before a NUL or the "
            "file's end): the kernel refuses to start it (Permission denied), and Harbor's bash exits "
            f"{NO_PROGRAM_EXIT} before anything runs; write the program after #!, as #!/bin/bash",
            NO_PROGRAM_EXIT,
        )
    if "\r" in program.name:
        endings = "CRLF" if b"\r\n" in program.head else "CR"
        return (
            f"tests/test.sh has {endings} line endings: its first line `{first}` cannot be "
            f"run in the sandbox (exit {SHIM_REFUSAL_EXIT}); save it with LF endings",
            SHIM_REFUSAL_EXIT,
        )
    return test_sh_program_missing(test_sh, workdir, ends_here=True) if missing else None


def test_sh_program_missing(test_sh: Path, workdir: str, *, ends_here: bool) -> tuple[str, int] | None:
    """The note for a test.sh whose ``#!`` program this machine lacks (:func:`_test_sh_program`), and
    what Harbor's bash exits with where the image lacks it too. ``ends_here``: a run of test.sh itself,
    which ends as the kernel ends it here; a run of the runner alone never starts that program."""
    program = _test_sh_program(test_sh, workdir)
    if isinstance(program.found, str):
        return None
    first = cut_middle(unbroken(program.head.split(b"\n", 1)[0].decode(errors="replace")), 120)
    what = "is not" if program.found == SHIM_REFUSAL_EXIT else "is no program (a folder, a file not executable)"
    where = f"from the working directory {workdir}" if program.relative else "on this machine"
    here = (
        "but this run of test.sh ends as it would there"
        if ends_here
        else "so verifier-tui runs the runner all the same"
    )
    return (
        f"tests/test.sh's first line `{first}` names {cut_middle(unbroken(program.name), 120)}, which {what} "
        f"{where}: where the image lacks it too, Harbor's bash cannot start test.sh (exit {program.found}, no "
        f"reward); the image may have it, {here}",
        program.found,
    )


#: Where ``env`` looks for a command in the sandbox: Docker's Debian images' PATH, whose folders the
#: view shows as this machine has them.
_IMAGE_PATH = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")


@record(frozen=True)
class _Program:
    """The program that reads test.sh as Harbor starts it (:func:`_test_sh_program`)."""

    words: list[str]  # the kernel's #! words (:func:`_shebang`): none without a #! line
    head: bytes
    name: str  # as test.sh names it: its #! program, or the command env runs; "bash" without a #! line
    found: str | int  # the file the sandbox starts (:func:`_in_view`), or what bash exits with for none
    relative: bool = False  # a #! program named from the working directory


def _test_sh_program(test_sh: Path, workdir: str = DOCKER_DEFAULT_WORKDIR) -> _Program:
    """The one reading of test.sh's ``#!`` line for every note and refusal of it. Harbor's ``bash -c``
    starts test.sh as a file (bash itself reads one the kernel refuses, ENOEXEC). The kernel takes a
    relative ``#!`` program from the working directory, which Harbor's exec sets (``[environment]
    workdir``, else the image's WORKDIR: ``workdir``), never from PATH; ``env`` runs the command its
    argument names, whole (it splits nothing: ``bash -e`` is no program), or with ``-S`` the first word of
    the rest that is no option nor assignment, split as coreutils' env splits it (:func:`_env_command`),
    found on PATH unless it holds a ``/``. Checked against Linux 6 and coreutils 9.1."""
    words, head = _shebang(test_sh)
    if not words:
        return _Program(words, head, "bash", "")
    relative = not words[0].startswith("/")
    found = _in_view(os.path.join(workdir, words[0]))
    if not isinstance(found, str) or os.path.basename(words[0]) != "env" or len(words) != 2:
        return _Program(words, head, words[0], found, relative)
    command = _env_command(words[1])
    if command is None:
        return _Program(words, head, words[1], "")
    places = [os.path.join(workdir, command)] if "/" in command else [f"{d}/{command}" for d in _IMAGE_PATH]
    seen = [_in_view(place) for place in places]
    files = [found for found in seen if isinstance(found, str)]  # env runs the first one on PATH
    exits = [found for found in seen if isinstance(found, int)]
    return _Program(words, head, command, next((f for f in files if f), "" if files else min(exits)))


# env's options (coreutils 9.1 env.c: getopt "+C:iS:u:v0" and its long ones) that leave where it finds the
# command alone, by what they take: a value (-S, given as its letter), none, or one only joined by "=". The
# others (-i, -u, -C, an assignment) change the PATH or folder it looks from, which is the sandbox's: no claim
_ENV_FLAGS, _ENV_VALUED = "v", "S"
_ENV_LONG = {"split-string": "S"}
_ENV_LONG |= dict.fromkeys(("default-signal", "ignore-signal", "block-signal"), "")  # =SIG optional
_ENV_LONG_FLAGS = ("debug", "list-signal-handling")
# one piece of env -S's string: single-quoted (\\ and \' its only escapes), double-quoted, a run of plain
# characters, an escape, blanks; else a quote that never closes or a backslash at the end
_ENV_PIECE = re.compile(
    r"""'((?:[^'\\]|\\[\\']|\\(?![\\']))*)'|"((?:[^"\\]|\\.)*)"|([^'"\\ \t\n\v\f\r]+)|\\(.)"""
    r"""|([ \t\n\v\f\r]+)|(.)""",
    re.DOTALL,
)
# in double quotes or plain characters: an escape, or a $ (env takes only ${NAME})
_ENV_SPECIAL = re.compile(r"\\(.)|\$(\{[A-Za-z_][A-Za-z0-9_]*\})?", re.DOTALL)
_ENV_ESCAPES = {"f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "#": "#", "$": "$", '"': '"', "'": "'"}
_ENV_ESCAPES |= {"\\": "\\", "_": " "}  # \_ is a space in double quotes (a separator outside: _env_split)
_UNKNOWN = "\0"  # a ${VAR} env expands from the sandbox's environment, not known here (no word holds a NUL)


def _env_command(argument: str) -> str | None:
    """The command ``env`` runs given ``argument``, its #! line's one (:func:`_test_sh_program`), as
    coreutils' env reads its words: options (``-S`` splitting its string into more, :func:`_env_split`),
    then the command; None where env refuses them (exit 125), none is left (test.sh itself would run), or
    where env finds it is the sandbox's to decide: ``${VAR}``, and what changes the PATH or folder env
    looks from (``-i``, ``-u``, ``-C``, a lone ``-``, a ``NAME=VALUE`` before the command)."""
    words, at = [argument], 0
    while at < len(words) and words[at].startswith("-") and words[at] != "-":
        word, at = words[at], at + 1
        if word == "--":
            break
        parsed = _env_option(word)
        if parsed is None:
            return None
        option, value = parsed
        if value is None:  # its value is the next word
            if at == len(words):
                return None
            value, at = words[at], at + 1
        split = _env_split(value) if option == "S" else []
        if split is None:
            return None
        words[at:at] = split
    command = words[at] if at < len(words) else ""
    # env's obsolete - (as -i) or an assignment (PATH=...) changes where env looks for the command
    return command if command and command != "-" and "=" not in command and _UNKNOWN not in command else None


def _env_option(word: str) -> tuple[str, str | None] | None:
    """The option of env's a word ends with that takes a value (its letter, "" for none) and the value
    joined to it (None: the next word); None for an option not of :data:`_ENV_FLAGS` and its kin (one
    that changes where env finds the command, or env refuses: ``-0`` with a command, an unknown one), or
    where getopt_long would take an abbreviation, --help or --version (not followed)."""
    if _UNKNOWN in word:
        return None
    if word.startswith("--"):
        name, equals, value = word[2:].partition("=")
        if name in _ENV_LONG_FLAGS and not equals:
            return "", ""
        option = _ENV_LONG.get(name)
        return None if option is None else (option, value if equals or not option else None)
    for index, letter in enumerate(word[1:], 2):
        if letter in _ENV_VALUED:
            return letter, word[index:] or None
        if letter not in _ENV_FLAGS:
            return None
    return "", ""


def _env_split(string: str) -> list[str] | None:
    """The words ``env -S`` splits ``string`` into, as coreutils documents -S (``env`` in its manual): at
    unquoted blanks and ``\\_``; single quotes keep all but ``\\'`` and ``\\\\``; double quotes keep blanks
    and take the escapes (``\\_`` a space there); ``\\c`` and a ``#`` that starts a word end the string;
    ``${VAR}`` is env's environment's, :data:`_UNKNOWN` here, making no word where it is empty. None
    where env refuses it (exit 125): a quote not closed, an unknown escape, ``\\c`` in double quotes, a
    backslash at the end, a ``$`` not of ``${NAME}``."""
    words: list[str] = []
    word: list[str] = []
    started = False  # a quote was met: the word is one even when empty
    for piece in _ENV_PIECE.finditer(string):
        single, double, plain, escaped, blanks, unclosed = piece.groups()
        text: str | None
        if single is not None:
            text, started = re.sub(r"\\([\\'])", r"\1", single), True
        elif double is not None:
            text, started = _env_text(double), True
        elif plain is not None:
            if plain.startswith("#") and not word and not started:
                break  # a comment: the string's rest
            text = _env_text(plain)
        elif escaped == "c":
            break
        elif escaped is not None and escaped != "_":
            text = _ENV_ESCAPES.get(escaped)
        elif unclosed is not None:
            return None
        else:  # blanks, or \_ outside double quotes: a word ends
            if word or started:
                words.append("".join(word))
            word, started = [], False
            continue
        if text is None:
            return None
        word.append(text)
    if word or started:
        words.append("".join(word))
    return words


def _env_text(text: str) -> str | None:
    """Double-quoted or plain characters of env -S's string as env makes them (escapes, ``${NAME}``); None
    where env refuses them."""
    refused = False

    def made(special: re.Match[str]) -> str:
        nonlocal refused
        escaped, variable = special.groups()
        into = _ENV_ESCAPES.get(escaped) if escaped is not None else _UNKNOWN if variable else None
        refused = refused or into is None
        return into or ""

    text = _ENV_SPECIAL.sub(made, text)
    return None if refused else text


def _in_view(path: str) -> str | int:
    """``path`` (in the sandbox) as the view has it, in a folder it shows as this machine has it: the file,
    links followed, else what Harbor's bash exits with, 127 for nothing there ("required file not
    found"), 126 for a folder or a file not executable ("Permission denied"); the root holds folders
    alone. "" elsewhere (the workspace, /tests, an image's own folder: not judged here)."""
    path = normal_path(path)
    top = path.split("/")[1]
    if top in SYSTEM_FOLDERS:
        real = os.path.realpath(path)
        if os.path.isfile(real) and os.access(real, os.X_OK):
            return real
        return NO_PROGRAM_EXIT if os.path.exists(real) else SHIM_REFUSAL_EXIT
    if path == "/":
        return NO_PROGRAM_EXIT
    return SHIM_REFUSAL_EXIT if path.count("/") == 1 and top not in ("app", "tests", "logs", "tmp") else ""


CRLF_TEST_SH = (
    "tests/test.sh has CRLF line endings, which bash reads as part of each line (`do\\r` is a syntax error, "
    "a path ends in \\r): how Harbor's run of it ends is bash's, which verifier-tui does not model; "
    "save it with LF endings"
)


def _crlf_test_sh(test_sh: Path) -> str | None:
    """The refusal of a run of the runner alone where ``test_sh`` has CRLF lines the kernel (or bash,
    which Harbor starts it from) does start: bash keeps each \\r, so `set -u\\r` is a bad option,
    `do\\r` a syntax error (exit 2) and `--workspace /app\\r` another path; what the runner would do
    after such a script is no model of it. A trial's replay runs the script itself in the view."""
    head = untrusted.read_bytes(test_sh, untrusted.SCRIPT_LIMIT, keep="head").data or b""
    return CRLF_TEST_SH if b"\r\n" in head else None


def _braced_test_sh(test_sh: Path, workdir: str) -> str | None:
    """The refusal of a run of the runner alone where ``test_sh`` passes ``--workspace`` a word with
    braces bash expands (``/app/{src,lib}``): bash passes the runner two words, and the runner takes one
    workspace, refusing the next as an unrecognised argument (run_verifier.py ``parse_args``: exit 2,
    no reward, which Harbor reports); no workspace laid here is a model of that."""
    shell = _test_sh_shell(test_sh, workdir)
    braced = braced_workspace(test_sh.parent, braces=shell is not None)
    if shell is None or braced is None:
        return None
    said = f"tests/test.sh passes {cut_middle(unbroken(braced.written), 200)}, {braces_words(braced, shell)}"
    if shell == "bash" and braced.words:
        said += ": the runner takes one --workspace and refuses the rest (exit 2), so Harbor finds no reward"
    return f"{said}; the runner alone is no model of it: quote the path, or write the one meant"


def _test_sh_shell(test_sh: Path, workdir: str = DOCKER_DEFAULT_WORKDIR) -> str | None:
    """The shell that reads ``test_sh`` (:func:`_test_sh_program`), as a note says it: "bash" for bash,
    None for dash, which keeps braces as written, else the program as test.sh names it. A program is
    this machine's, whose programs the view shows (``/bin/sh`` is dash on Debian and Ubuntu, and bash
    on others: an image's own may differ)."""
    program = _test_sh_program(test_sh, workdir)
    name = os.path.basename(program.found if isinstance(program.found, str) and program.found else program.name)
    return "bash" if name == "bash" else None if name == "dash" else program.name


def test_sh_refusals(
    test_sh: Path, *, via_test_sh: bool, workdir: str = DOCKER_DEFAULT_WORKDIR
) -> tuple[tuple[str, int] | None, str | None]:
    """Why the sandbox never starts ``test_sh`` (:func:`test_sh_unstartable`), else why a run of the
    runner alone is refused for it (:func:`_crlf_test_sh`, :func:`_braced_test_sh`; a run of the script
    itself never is). ``workdir``: where Harbor starts it (:func:`_test_sh_program`)."""
    unstartable = test_sh_unstartable(test_sh, workdir, missing=via_test_sh)
    if unstartable is not None or via_test_sh:
        return unstartable, None
    return None, _crlf_test_sh(test_sh) or _braced_test_sh(test_sh, workdir)


def workspace_laid(
    tests_dir: Path, workdir: str = DOCKER_DEFAULT_WORKDIR, *, via_test_sh: bool = False
) -> tuple[str, str]:
    """Where a run in the view lays the workspace, and its note (:func:`workspace_given`): where
    test.sh passes it, but ``/app`` for a run refused for its test.sh, which lays none there."""
    if any(test_sh_refusals(tests_dir / "test.sh", via_test_sh=via_test_sh, workdir=workdir)):
        return APP, ""
    return workspace_given(tests_dir, _test_sh_shell(tests_dir / "test.sh", workdir))


def _nemo_gym_to_vendor(spec: RunSpec, interpreters: Path | None, notices: list[str]) -> tuple[Path | str | None, bool]:
    """Which nemo_gym/verifiers to vendor beside the runner, and whether the
    task vendors its own. A published task's own tests/.ng/nemo_gym is what the
    sandbox imports: no other copy is ever put over it. ``--nemo-gym`` may
    name the verifiers folder, the package or the folder holding it; a folder
    that is none of these is returned as the one-line error (a str)."""
    own = spec.own_nemo_gym
    if own is not None:
        if spec.nemo_gym is not None:
            notices.append(
                f"--nemo-gym {spec.nemo_gym} is not used: the task vendors its own nemo_gym "
                f"({own.relative_to(spec.task.tests_dir.parent).as_posix()}), which is what the sandbox imports"
            )
        return None, True
    if spec.nemo_gym is None:
        return interpreters, False
    folder, problem = verifiers_folder(spec.nemo_gym)
    if folder is None:
        return f"--nemo-gym {spec.nemo_gym}: {problem}", False
    return folder, False  # the notice "vendored from <folder>" says which folder was taken


def _stage_response(response: ResponseSource, stage: Stage) -> Path:
    """The file passed as ``--response``: a copy of a JSON file (the runner
    is never handed the user's own file: a verifier could write it), a text
    file or typed text wrapped into a minimal response."""
    if response.kind == "json" and response.path is not None:
        return stage.stage_input(response.path, "response.json", "the response")
    if response.path is not None:
        found = untrusted.read_bytes(response.path, RESPONSE_TEXT_LIMIT)
        text = found.text()
        if text is None:
            stage.refuse(found, "the response")  # gone, a FIFO, too big, unreadable: the run does not start
            return response.path
    else:
        text = response.text or ""
    if response.kind == "json":  # typed JSON: passed exactly as typed
        return stage.write_input("response.json", text)
    return stage.write_input("response.json", json.dumps(wrap_text_response(text), indent=2))


def staged_verifier(spec: RunSpec) -> str:
    """Where the run's verifier is in the staged tests folder (relative): a
    step's own file where its tests are overlaid, else :meth:`Task.staged_name`."""
    if spec.extra_tests is not None and spec.verifier.is_relative_to(spec.extra_tests):
        return spec.verifier.relative_to(spec.extra_tests).as_posix()  # overlaid into the staged tests
    return spec.task.staged_name(spec.verifier)


def reproduce_command(spec: RunSpec) -> list[str]:
    """The words of a command that reproduces this run outside the tool, on
    the user's own folders (with a throwaway reward folder): one word each,
    unquoted, paths absolute (:func:`verifier_tui.words.run.command_words` makes
    the words a user types). The task is named by the path it was opened
    from when that path decides the layout: a verifier file outside the
    task's ``tests/`` is staged with its own folder as ``/tests``
    (:func:`~verifier_tui.engine.task.discovery.resolve`), which naming the task
    folder would not do."""
    task = spec.task
    opened = task.initial_verifier if task.initial_verifier is not None else task.root
    words = [*tool_words(), "run", str(opened), "--verifier", str(spec.verifier)]
    if spec.case and spec.workspace is not None and spec.workspace.parent.name == spec.case:
        words += option_value("--case", spec.case)
    elif spec.workspace is not None:
        words += ["--workspace", str(spec.workspace)]
    if spec.response is None:
        words.append("--no-response")
    elif spec.response.path is not None:
        words += ["--response", str(spec.response.path)]
    if spec.task_data is not None:
        words += ["--task-data", str(spec.task_data)]
    if spec.task_id is not None:
        words += option_value("--task-id", spec.task_id)
    timeout = spec.timeout_s if spec.timeout_s != (task.config.timeout_sec or DEFAULT_TIMEOUT_S) else None
    runner = "ours" if spec.runner is None else "task"
    return words + option_words(runner, spec.step, timeout, spec.python, spec.nemo_gym, spec.env, spec.network)


def option_words(
    runner: str,
    step: str | None,
    timeout: float | None,
    python: str,
    nemo_gym: Path | None,
    env: Sequence[str],
    network: str,
) -> list[str]:
    """The options a task's run and a trial's replay both take, as words, each
    only where it is not the default: the reproduce command's and ``run
    TRIAL``'s as the trial's screen names it."""
    words = ["--runner", "task"] if runner == "task" else []
    if step is not None:
        words += option_value("--step", step)
    if timeout is not None:
        words += ["--timeout", format(timeout, "g")]
    if python != "python3":
        words += option_value("--python", python)
    if nemo_gym is not None:
        words += ["--nemo-gym", str(nemo_gym)]
    for word in env:  # as the user gave it: a bare NAME is read from their environment again
        words += option_value("--env", word)
    if network != "task":  # the user's --network host: without it the run gets a network of its own
        words += ["--network", network]
    return words


def option_value(option: str, value: str) -> list[str]:
    """An option and its value as words the command line takes back: one
    word, ``--case=-x``, for a value starting with ``-``, which argparse
    would otherwise read as an option of its own (and stop)."""
    return [f"{option}={value}"] if value.startswith("-") else [option, value]


def tool_words() -> list[str]:
    """How a shell starts this same verifier-tui: ``verifier-tui`` when that
    name on PATH is this installation's console script; else the script's
    absolute path (a venv made but not activated, as the README sets it up);
    else this interpreter with ``-m verifier_tui``."""
    import sys

    script = Path(sys.executable).parent / "verifier-tui"
    if not script.is_file():
        return [sys.executable, "-m", "verifier_tui"]
    found = shutil.which("verifier-tui")
    try:
        if found is not None and os.path.samefile(found, script):
            return ["verifier-tui"]
    except OSError:
        pass
    return [str(script)]
