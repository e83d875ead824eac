"""A run's containment: what :func:`contain` adds to a prepared run, and what
:func:`settle` reads back once it is over.

With namespaces (:mod:`.isolation`), the runner's command line is wrapped so
it starts in a namespace of its own: the user's files read-only, the
workspace an overlay, every process it leaves behind listed and ended with
the namespace. Without, the runner's environment carries a mark its escaped
descendants are found by (:data:`~verifier_tui.engine.process.MARKER`), and the user's files are looked at
before and after the run (:mod:`.user_files`) to report what it wrote.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from verifier_tui.engine import cache
from verifier_tui.engine.process import MARKER, new_token
from verifier_tui.engine.record import field, record
from verifier_tui.engine.sandbox import isolation, user_files
from verifier_tui.engine.sandbox.view import cpus_to_bind, sandbox_path_lines

if TYPE_CHECKING:
    from verifier_tui.engine.process import ProcessResult
    from verifier_tui.engine.sandbox.stage import Stage
    from verifier_tui.engine.sandbox.view import Limits


@record
class Settled:
    """What the containment learnt of a finished run."""

    returncode: int | None
    signal: int | None
    start_error: str | None
    strays: list
    written: list


NAMESPACE_FAILED = "could not set up the run's namespace: "


def namespace_failure(start_error: str | None) -> str | None:
    """Why a run's namespace did not set up, from its start error (None: it did)."""
    if start_error and start_error.startswith(NAMESPACE_FAILED):
        return start_error[len(NAMESPACE_FAILED) :]
    return None


@record
class Contained:
    """A run's command line as :func:`contain` wraps it, and what else it sets."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path | None = None
    """Where the run starts (None: where it would have)."""
    notices: list[str] = field(default_factory=list)
    start_error: str | None = None
    marker: str | None = None
    """Without namespaces: the value of :data:`~verifier_tui.engine.process.MARKER` in the runner's
    environment, by which its escaped descendants are found."""
    guard: Any = None
    """Without namespaces: what the user's files looked like before the run
    (:class:`~.user_files.Snapshot`), to report what it wrote."""
    taskset: str = ""
    """``taskset``, when the run is to be bound to the task's ``cpus``."""
    memory_limit: int | None = None
    """Bytes the run's processes may hold together before the biggest is killed."""


def contain(
    argv: list[str],
    env: dict[str, str],
    *,
    stage: Stage,
    limits: Limits | None,
    python: str,
    workspace: Path | None,
    tests_dir: Path,
    verifier: Path,
    user_paths: list[Path | None],
) -> Contained:
    """Wrap a run's command line in the stage's isolation and the task's
    limits. ``user_paths``: the user's files and folders the run uses, the
    ones to look at before and after it without namespaces."""
    out = Contained(argv, env)
    if limits is not None and cpus_to_bind(limits.cpus):
        # Docker's cpus as affinity to as many CPUs: which ones, when the run starts (invocation.bound_argv)
        out.taskset = shutil.which("taskset") or shutil.which("taskset", path="/usr/bin:/bin") or ""
        if not out.taskset:
            out.notices.append(f"cpus = {limits.cpus} is not applied: taskset is not on PATH")
    if limits is not None and limits.memory_mb is not None:
        out.memory_limit = limits.memory_mb << 20
    if stage.namespace:
        workdir = _workdir(limits, workspace, stage, out.notices)
        overlay = None
        if stage.overlay_lower is not None:
            overlay = (str(stage.overlay_lower), str(stage.upper_dir), str(stage.work_dir))
        plan = isolation.ViewPlan(
            view=str(stage.view_dir),
            ctl=str(stage.ctl_dir),
            tests=str(stage.tests_dir),
            reward=str(stage.reward_dir),
            inputs=str(stage.inputs_dir),
            app_copy=None if overlay is not None else str(stage.app_dir),
            overlay=overlay,
            workdir=workdir,
            app_at=stage.app_at,
            network=limits is None or limits.network != "no-network",
            hide=str(stage.root.parent),
            skeletons=os.path.join(cache.folder(), "views"),
            expose=_hidden_interpreter(python or argv[0]),
        )
        try:
            out.argv = isolation.namespace_argv(plan, argv)
        except OSError as exc:
            out.start_error = f"cannot build the run's view in {stage.view_dir}: {exc.strerror or exc}"
        out.cwd = stage.root
        return out
    if limits is not None and limits.network == "no-network":
        out.notices.append(
            'network_mode = "no-network" is not applied: the copy sandbox has no network '
            "namespace, so the verifier reaches the network the sandbox would refuse it"
        )
    named = sandbox_path_lines(tests_dir, verifier)
    if named:
        shown = ", ".join(named[:3]) + (f" +{len(named) - 3} more" if len(named) > 3 else "")
        out.notices.append(
            "the copy sandbox has no /app, /tests or /logs/verifier (the run gets the scratch "
            f"folder's paths), and the verifier names them by absolute path: {shown}"
        )
    token = new_token()
    out.marker = token
    out.env = dict(env, **{MARKER: token})
    out.guard = user_files.take(user_paths)
    setpriv = shutil.which("setpriv") or shutil.which("setpriv", path="/usr/bin:/bin")
    # Should the tool be SIGKILLed, the runner goes with it. What the runner
    # started does not: without a PID namespace nothing ends those then (the
    # README says so).
    guard = [setpriv, "--pdeathsig", "KILL"] if setpriv is not None and sys.platform.startswith("linux") else []
    out.argv = guard + argv
    return out


def _hidden_interpreter(executable: str) -> tuple:
    """The folders of the chosen interpreter that the view would hide (a
    virtual environment in /tmp, say): each is shown in the view read-only,
    at its own path. In the sandbox the interpreter is the image's; here it is
    the one the user chose, and it must be there to run."""
    out: list[str] = []
    for path in dict.fromkeys((executable, os.path.realpath(executable))):
        if not os.path.isabs(path) or not isolation.hidden_by_view(path):
            continue
        folder = os.path.dirname(os.path.dirname(path))  # .../bin/python: its prefix
        probe = os.path.dirname(path)
        while probe not in ("/", ""):
            if os.path.isfile(os.path.join(probe, "pyvenv.cfg")):
                folder = probe
                break
            probe = os.path.dirname(probe)
        if folder not in ("/", "") and folder not in out:
            out.append(folder)
    return tuple(out)


def _workdir(limits: Limits | None, workspace: Path | None, stage: Stage, notices: list[str]) -> str:
    """The runner's working directory in the view: the sandbox's (the task's
    workdir, the image's WORKDIR), where this machine's view has it."""
    wanted = limits.workdir if limits is not None else "/"
    app = stage.app_at
    if wanted == app or wanted.startswith(app.rstrip("/") + "/"):
        rel = wanted[len(app) :].strip("/")
        if not rel or (workspace is not None and (workspace / rel).is_dir()):
            return wanted
        notices.append(f"the working directory {wanted} is not in this workspace: the run starts in {app}")
        return app
    parts = [p for p in wanted.split("/") if p]
    if not parts or parts in (["tmp"], ["tests"], ["logs"], ["logs", "verifier"]):
        return wanted  # a folder the view has
    if parts[0] not in ("tmp", "tests", "logs", "proc", "dev") and (
        os.path.isdir(wanted) or not os.path.lexists("/" + parts[0])
    ):
        return wanted  # this machine's, or made in the view when it is a top folder this machine lacks
    notices.append(f"the working directory {wanted} is not in this machine's view: the run starts in /")
    return "/"


def settle(stage: Stage, guard: Any, done: ProcessResult) -> Settled:
    """The run's exit as the runner's (not the namespace init's), the
    processes it left behind, and what it wrote to the user's files
    (``guard``: :attr:`Contained.guard`)."""
    returncode, signal, start_error = done.returncode, done.signal, done.start_error
    found = list(done.strays)
    written: list = []
    if stage.namespace and start_error is None:
        ctl = str(stage.ctl_dir)
        problem = isolation.setup_problem(ctl, done.stderr.text)
        if problem is not None and not done.timed_out and signal is None:
            isolation.forget()  # a probe said yes, yet this failed: ask again next time
            start_error = NAMESPACE_FAILED + problem
        found += isolation.strays(ctl)  # one per process, as the copy sandbox's mark finds them
        status = isolation.runner_status(ctl)
        if status is not None:
            # The runner's status as the init saw it. sh reports a runner
            # ended by signal N as 128 + N, as it reports exit(128 + N): read
            # back as the signal, since the runner itself only exits 0, 1 or 2
            # (it catches SystemExit); only a verifier's own os._exit(129..192)
            # is misread (docs/faults.md).
            returncode, signal = status, None
            if 128 < status <= 128 + 64:
                signal, returncode = status - 128, -(status - 128)
    if guard is not None:
        written = user_files.written(guard)
    return Settled(returncode, signal, start_error, found, written)
