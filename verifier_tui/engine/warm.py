"""Warm runs: the next run of a stage started ahead, waiting, so that a save
costs what the verifier costs rather than what starting Python and the
sandbox cost.

Once a run is over, its spec is prepared again and its runner started held
(:class:`~verifier_tui.engine.process.Held`): in the view, the view
and its view set up; the interpreter started with a cold start's command
line, environment and working folder, the runner blocked before it reads its
arguments, having imported only ``os``, ``stat`` and ``sys``. The next run of
that stage prepares again (staging what changed since, the view's
``ctl`` files left to the init that holds them; but the held view can write
the copies of the workspace and the tests, so a change to stage there ends the
held run first, :meth:`Stage.app_settled`, :class:`HeldInTheWay`, but for a
file of the tests' top folder, renamed into place) and compares: the same
command line, environment, working folder and limits, the same stage
folders (which the view has bound), the same runner bytes (the waiting
interpreter has compiled them), the same interpreter and site folders (it
has read its ``.pth`` files), the same task.toml -> the held child is told to go. Anything else
(a case, a response, task.toml's env or timeout, ``--python``, the runner,
an overlay instead of a copy) -> it is discarded and the run starts cold.

``test`` runs each case once: where ``-j N`` leaves a CPU idle, a case's run
is started held as soon as it is staged, while the cases before it hold
the N runner slots, and at its turn it goes if still the same
(:func:`at_its_turn`), so that its interpreter and namespace start on the
idle CPU rather than in a slot. The pytest plugin, which runs cases one at
a time, starts the next case held as one is about to run (:meth:`WarmRuns.start`).
A Harbor job's replays (``test JOB``, and the stand-ins they use) stay cold:
their sessions are the trials' own.

Runs stay cold where a held child cannot be the cold one: a task's own
runner and test.sh (they know nothing of the wait), ``explain``, a
workspace staged as an overlay (its lower layer, the user's folder, may
not change under a mounted overlay), and an environment that may run a
file as the interpreter starts (``PYTHONPATH``, ``LD_PRELOAD``, ...): no
code of the task's or the agent's may run while the tool stages.
"""

from __future__ import annotations

import glob
import os
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING

from verifier_tui.engine import untrusted
from verifier_tui.engine.invocation import prepare
from verifier_tui.engine.process import MARKER, Held
from verifier_tui.engine.record import record
from verifier_tui.engine.sandbox.isolation import inside
from verifier_tui.engine.sandbox.stage import HeldInTheWay
from verifier_tui.engine.sandbox.view import INPUTS, REWARD, TESTS
from verifier_tui.engine.task.config import TOML_LIMIT
from verifier_tui.engine.to_the_end import to_the_end

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Callable, Iterator, Mapping
    from pathlib import Path
    from typing import Any

    from verifier_tui.engine.invocation import Prepared, RunSpec
    from verifier_tui.engine.sandbox.stage import Stage

VARIABLE = "VERIFIER_TUI_WARM"
"""Set (to the go pipe's fd) only in a held runner's environment; the runner removes it first thing."""

PRELOAD = "VERIFIER_TUI_PRELOAD"
"""``--preload``'s modules, comma-separated, in a held runner's environment:
it imports them before it waits (and removes the variable first thing)."""

MAX_AGE_S = 180.0
"""A held run older than this is started anew: what it read at its start
(the system's files, the clock's zone) should not be older than a few minutes."""

MAX_WAITING = 8
"""Held runs kept at most (one per stage: running all cases warms each case's)."""


@record
class Waiting:
    """A run started ahead and held, and what it was started with."""

    held: Held
    prepared: Prepared
    fingerprint: tuple[object, ...]
    born: float

    def end(self) -> None:
        """End it unrun (its stage's ctl folder is emptied by the next staging)."""
        self.prepared.stage.keep_ctl = False
        self.held.discard()


def eligible(prepared: Prepared) -> bool:
    """Whether ``prepared`` may be started ahead (see the module's last paragraph)."""
    spec = prepared.spec
    return (
        prepared.start_error is None
        and prepared.shim_refusal is None
        and spec.runner is None
        and not spec.via_test_sh
        and not spec.explain_only
        and prepared.stage.overlay_lower is None
        and not _runs_a_file_at_start(_runners_environment(prepared), prepared.stage.app_at)
    )


def _runners_environment(prepared: Prepared) -> Mapping[str, str]:
    """What the runner's environment holds (in the view, ``env`` is bwrap's, the runner's passed apart)."""
    return prepared.environment.values if prepared.environment is not None else prepared.env


#: Python's variables that make it read no file it would not read anyway (the tool's own among them):
#: any other (``PYTHONPATH``'s ``sitecustomize.py``, ``PYTHONHOME``'s standard library, ``PYTHONUSERBASE``'s
#: ``.pth`` files, ``PYTHONPYCACHEPREFIX``'s bytecode, a ``PYTHONWARNINGS`` category's module) may run one.
INERT_PYTHON = frozenset(
    {
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONFAULTHANDLER",
        "PYTHONHASHSEED",
        "PYTHONINTMAXSTRDIGITS",
        "PYTHONIOENCODING",
        "PYTHONNODEBUGRANGES",
        "PYTHONNOUSERSITE",
        "PYTHONOPTIMIZE",
        "PYTHONSAFEPATH",
        "PYTHONTRACEMALLOC",
        "PYTHONUNBUFFERED",
        "PYTHONUTF8",
    }
)


def _runs_a_file_at_start(env: Mapping[str, str], app_at: str) -> bool:
    """Whether ``env`` may make the view's shell or the interpreter run a file
    as it starts: a ``HOME`` in a folder the task or the agent fills
    (``HOME = "/app"``: a user site there, the agent's, whose ``.pth`` files
    Python runs; any other HOME is an empty folder of the view's own) or a
    variable that may (:func:`_starts_a_file`)."""
    home = os.path.normpath(env["HOME"]) if env.get("HOME") else None
    # (relative, it is the working folder's, often /app; through /proc it can be anywhere)
    filled = home is not None and (
        not home.startswith("/") or any(inside(home, folder) for folder in (app_at, TESTS, REWARD, INPUTS, "/proc"))
    )
    return filled or any(map(_starts_a_file, env))


def _starts_a_file(name: str) -> bool:
    """Whether the variable may make the view's shell or the interpreter run a
    file as it starts: Python's own but the inert ones, the dynamic loader's
    (``LD_PRELOAD``, ``LD_AUDIT``, ``LD_LIBRARY_PATH``), glibc's conversion
    modules, a shell's start-up file or imported function, and bash's options
    and trace prompt (``SHELLOPTS=xtrace`` with a ``PS4`` holding ``$(...)``
    runs it, where ``sh`` is bash and not root's). A run started
    ahead starts before its run is staged: such a file of the task's or the
    agent's would run while the tool stages into its view. A name ``PYTHON_``
    starts (``PYTHON_VERSION``, which Docker's python images set) names none
    of Python's start-up files."""
    if name.startswith("PYTHON") and name[6:7].isalpha():
        return name not in INERT_PYTHON
    return name.startswith(("LD_", "BASH_FUNC_")) or name in (
        "GCONV_PATH",
        "BASH_ENV",
        "ENV",
        "SHELLOPTS",
        "BASHOPTS",
        "PS4",
    )


def fingerprint(prepared: Prepared) -> tuple[object, ...]:
    """Everything a held run already holds of ``prepared``: equal fingerprints, the same run."""
    stage = prepared.stage
    env = {name: value for name, value in prepared.env.items() if name != MARKER}  # a new mark per run
    folders = (
        stage.root,
        stage.tests_dir,
        stage.ng_dir,
        stage.app_dir,
        stage.reward_dir,
        stage.inputs_dir,
        stage.ctl_dir,
    )
    return (
        prepared.argv,
        env,
        str(prepared.cwd),
        prepared.limits,
        prepared.memory_limit,
        stage.namespace,
        tuple(_stamp(str(folder))[:2] for folder in folders),
        _read(stage.ng_dir / "run_verifier.py"),
        _read(stage.ctl_dir / "env"),  # the view's environment (``env`` is the outer processes')
        _interpreter(prepared.python, env.get("HOME")),
        _read_users(prepared.spec.task.root / "task.toml"),
    )


def _read(path: Any) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def _read_users(path: Path) -> tuple[str, bytes | None]:
    """A file of the user's, which may be a FIFO whose open() would wait for ever (in a thread
    the run awaits to its end, so that nothing could stop it): read as every such file is."""
    found = untrusted.read_bytes(path, TOML_LIMIT)
    return found.state, found.data


def _stamp(path: str) -> tuple[int, int, int, int] | tuple[None, None, None, None]:
    try:
        st = os.stat(path)
    except OSError:
        return (None,) * 4
    return st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size


def _interpreter(
    python: str, home: str | None
) -> tuple[tuple[str, tuple[int, int, int, int] | tuple[None, None, None, None]], ...]:
    """The interpreter and the folders its ``site`` reads at start-up: a
    package installed or removed changes a folder's time."""
    places: list[str] = []
    for path in dict.fromkeys((python, os.path.realpath(python))):
        prefix = os.path.dirname(os.path.dirname(path))
        places += [path, os.path.join(prefix, "pyvenv.cfg")]
        places += glob.glob(os.path.join(glob.escape(prefix), "lib", "python3*", "*-packages"))
    if home:
        places += glob.glob(os.path.join(glob.escape(home), ".local", "lib", "python3*", "site-packages"))
    return tuple((place, _stamp(place)) for place in places)


def prepare_held(spec: RunSpec, stage: Stage, waiting: Waiting | None) -> tuple[Prepared, Held | None]:
    """Stage ``spec`` for a run; the held run of this stage to tell go, when
    it is the same run (it is discarded otherwise)."""
    if waiting is None:
        return prepare(spec, stage), None
    # The held view can write /app and /tests, and code in it may have run (a
    # preloaded module's thread): one that swaps a folder there for a link between
    # the mirror's look and its write would have the tool write where the link
    # leads, on this machine. So nothing is written there while it lives but a
    # file of /tests' top folder, renamed into place (that folder is a mount point).
    in_the_way = not stage.app_settled(spec.workspace)
    if not in_the_way:
        stage.held = True
        try:
            prepared = prepare(spec, stage)
        except HeldInTheWay:
            in_the_way = True
        finally:
            stage.keep_ctl = stage.held = False
    if in_the_way:
        waiting.end()
        return prepare(spec, stage), None
    if waiting.prepared.marker is not None:  # the held runner's mark finds its strays
        prepared.marker = waiting.prepared.marker
        prepared.env = dict(prepared.env, **{MARKER: prepared.marker})
    prepared.attached = waiting.prepared.attached  # the held run's cgroups and network namespace
    return at_its_turn(waiting, spec, prepared)


def at_its_turn(waiting: Waiting, spec: RunSpec, prepared: Prepared | None = None) -> tuple[Prepared, Held | None]:
    """``waiting``, now taken, to go as ``prepared`` (by default as it was
    staged to be held while it waited for its turn, :meth:`WarmRuns.hold`)
    if :func:`still_the_same`; else it is discarded and its stage staged
    again, for a cold run (the view's ctl emptied)."""
    prepared = prepared if prepared is not None else waiting.prepared
    prepared.stage.keep_ctl = False
    if still_the_same(waiting, prepared):
        return prepared, waiting.held
    waiting.held.discard()
    return prepare(spec, prepared.stage), None


def still_the_same(waiting: Waiting, prepared: Prepared) -> bool:
    """Whether ``waiting`` (alive, young enough) is the run ``prepared`` would start now."""
    return (
        eligible(prepared)
        and waiting.held.waiting
        and time.monotonic() - waiting.born < MAX_AGE_S
        and fingerprint(prepared) == waiting.fingerprint
    )


class WarmRuns:
    """A session's held runs, one per stage, started after each run
    (``again``), and runs held while they wait for their turn (:meth:`hold`).

    ``claim(spec)`` and ``release(stage)`` are the session's: a stage being
    staged for a held run is busy like one being run."""

    def __init__(
        self,
        claim: Callable[[RunSpec], Stage],
        release: Callable[[Stage], None],
        again: bool = True,
        preload: tuple[str, ...] = (),
    ) -> None:
        self._claim = claim
        self._release = release
        self.again = again
        """After a run, start its next one ahead (re-runs: watch, the TUI); not
        for ``test``, whose cases each run once."""
        self.preload = preload
        """Modules a held runner imports before it waits (``--preload``)."""
        self.waiting: dict[int, Waiting] = {}  # id(stage): its held run
        self._starting: set[asyncio.Future[None]] = set()
        self._timers: dict[int, asyncio.TimerHandle] = {}
        self.closed = False

    def order(self, spec: RunSpec, stages: list[Stage], room: bool) -> list[Stage]:
        """``stages`` (free, of one workspace) in the order a run of ``spec``
        should take them: the one whose held run is ``spec``'s, then one
        holding none. None of these and ``room``: no stage (a new one is
        made), so that runs that alternate (both modes: with the response,
        then without) each keep their own held run."""

        def rank(stage: Stage) -> int:
            waiting = self.waiting.get(id(stage))
            return 1 if waiting is None else 0 if waiting.prepared.spec == spec else 2

        ranked = sorted(stages, key=rank)
        if room and (not ranked or rank(ranked[0]) == 2):
            return []
        return ranked

    def take(self, stage: Stage) -> Waiting | None:
        """The held run of ``stage``, now the caller's (to run or discard)."""
        timer = self._timers.pop(id(stage), None)
        if timer is not None:
            timer.cancel()
        return self.waiting.pop(id(stage), None)

    def after(self, spec: RunSpec) -> None:
        """A run of ``spec`` is over: start the next one ahead (on the running loop)."""
        import asyncio

        if not self.again or self.closed or spec.runner is not None or spec.via_test_sh or spec.explain_only:
            return  # never held (eligible): not worth staging to find out
        task = asyncio.ensure_future(self._start(spec))
        self._starting.add(task)
        task.add_done_callback(self._started)

    def _started(self, task: asyncio.Task[None]) -> None:
        self._starting.discard(task)
        if not task.cancelled():
            # A start ahead that failed costs only its warmth: the run itself
            # starts cold and says what is wrong. Retrieved, its error is not
            # printed as "never retrieved" when the tool ends, nor is the
            # SystemExit that a SIGTERM or SIGHUP raised while it ran (that
            # one still ends the loop).
            task.exception()

    async def settle(self) -> None:
        """Wait for the held runs being started: a run then finds its stage's."""
        import asyncio

        while self._starting:
            await asyncio.wait(list(self._starting))

    @contextmanager
    def _stage_anew(self, spec: RunSpec) -> Iterator[Stage]:
        """A stage for a run of ``spec`` started ahead, the caller's while the
        block runs; the run it held, if any, ended (too old, or another's:
        this one replaces it)."""
        stage = self._claim(spec)
        try:
            old = self.take(stage)
            if old is not None:
                old.end()
            yield stage
        finally:
            self._release(stage)

    async def _start(self, spec: RunSpec) -> None:
        import asyncio

        with self._stage_anew(spec) as stage:
            prepared = await to_the_end(asyncio.to_thread(prepare, spec, stage))
            if await self.hold(prepared) is None:
                return
            self._timers[id(stage)] = asyncio.get_running_loop().call_later(MAX_AGE_S, self._expire, stage, spec)
            if len(self.waiting) > MAX_WAITING:
                oldest = min(self.waiting.values(), key=lambda w: w.born)
                self.take(oldest.prepared.stage)
                oldest.end()

    async def hold(self, prepared: Prepared) -> Waiting | None:
        """Start ``prepared`` (staged, its stage the caller's) now, held; None
        when it may not be (:func:`eligible`). A run that waits for its turn
        (``test``'s next cases, while every runner slot is taken) is held
        meanwhile, then goes if :func:`still_the_same`."""
        import asyncio

        if self.closed or not eligible(prepared):
            return None
        printed = await to_the_end(asyncio.to_thread(fingerprint, prepared))
        # Started here, on the loop's thread, which lives as long as the
        # tool: the parent-death signal follows the thread that started it.
        return self._held(prepared, printed)

    def start(self, spec: RunSpec) -> None:
        """Start a run of ``spec`` now, held, from a blocking caller on the
        thread that runs its runs (the pytest plugin, as the case before it
        is about to run); :meth:`Session.run` finds it as :meth:`after`'s."""
        with self._stage_anew(spec) as stage:
            prepared = prepare(spec, stage)
            if eligible(prepared):
                self._held(prepared, fingerprint(prepared))

    def _held(self, prepared: Prepared, printed: tuple[object, ...]) -> Waiting | None:
        if self.closed:
            return None
        env = dict(prepared.env, **{PRELOAD: ",".join(self.preload)}) if self.preload else prepared.env
        try:
            held = Held(prepared.argv, cwd=prepared.cwd, env=env, variable=VARIABLE, attach=prepared.attached)
        except OSError:
            return None  # the run itself will say why it cannot start
        prepared.stage.keep_ctl = True
        waiting = self.waiting[id(prepared.stage)] = Waiting(held, prepared, printed, time.monotonic())
        return waiting

    def _expire(self, stage: Stage, spec: RunSpec) -> None:
        self._timers.pop(id(stage), None)
        if id(stage) in self.waiting:
            self.after(spec)  # discards it and starts another

    def discard(self) -> None:
        """End every held run (the stages' ctl folders are emptied by their next staging)."""
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        for waiting in self.waiting.values():
            waiting.end()
        self.waiting.clear()

    def close(self) -> None:
        """The session is over: nothing held is left running, nothing more is started."""
        self.closed = True
        for task in self._starting:
            task.cancel()
        self.discard()
