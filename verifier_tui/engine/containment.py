"""A run's containment: what :func:`contain` adds to a prepared run, and what
:func:`settle` reads back once it is over.

With namespaces (:mod:`.isolation`), the runner's command line is wrapped so
it starts in a namespace of its own: the user's files read-only, the
workspace an overlay, every process it leaves behind listed and ended with
the namespace. Without, the runner's environment carries a mark its escaped
descendants are found by (:mod:`.strays`), and the user's files are looked at
before and after the run (:mod:`.user_files`) to report what it wrote.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifier_tui.engine import isolation, strays, user_files
from verifier_tui.engine.record import record

if TYPE_CHECKING:
    from verifier_tui.engine.invocation import Prepared
    from verifier_tui.engine.process import ProcessResult


@record
class Settled:
    """What the containment learnt of a finished run."""

    returncode: int | None
    signal: int | None
    start_error: str | None
    strays: list
    written: list


def contain(prepared: Prepared) -> None:
    """Wrap ``prepared``'s command line in the stage's isolation."""
    stage, spec = prepared.stage, prepared.spec
    response = spec.response.path if spec.response is not None else None
    inputs = [spec.task.root, spec.task.tests_dir, spec.verifier, spec.workspace, response, spec.task_data]
    if stage.namespace:
        user_paths = [str(p) for p in inputs if p is not None]
        read_only, writable = isolation.read_only_paths(user_paths, str(stage.root.parent))
        plan = isolation.NamespacePlan(
            read_only=read_only,
            writable=writable,
            workspace=str(stage.overlay_lower) if stage.overlay_lower is not None else None,
            upper=str(stage.upper_dir),
            work=str(stage.work_dir),
            app=str(stage.app_dir),
            ctl=str(stage.ctl_dir),
        )
        prepared.argv = isolation.namespace_argv(plan, prepared.argv, str(prepared.cwd))
        return
    token = strays.new_token()
    prepared.marker = token
    prepared.env = dict(prepared.env, **{strays.MARKER: token})
    order = [spec.task.tests_dir, spec.task.root / "task.toml", spec.verifier, response, spec.task_data,
             spec.task.root, spec.workspace]
    prepared.guard = user_files.take(order)


def settle(prepared: Prepared, done: ProcessResult) -> Settled:
    """The run's exit as the runner's (not the namespace init's), the
    processes it left behind, and what it wrote to the user's files."""
    returncode, signal, start_error = done.returncode, done.signal, done.start_error
    found = list(done.strays)
    written: list = []
    stage = prepared.stage
    if stage.namespace and start_error is None:
        ctl = str(stage.ctl_dir)
        problem = isolation.setup_problem(ctl, done.stderr.text)
        if problem is not None and not done.timed_out and signal is None:
            isolation.forget()  # a probe said yes, yet this failed: ask again next time
            start_error = f"could not set up the run's namespace: {problem}"
        found += [c for c in isolation.strays(ctl) if c not in found]
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
    if prepared.guard is not None:
        written = user_files.written(prepared.guard)
    return Settled(returncode, signal, start_error, found, written)
