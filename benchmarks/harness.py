"""The timing harness every benchmark shares.

What it gives a benchmark:

* :func:`interleave`: timed rounds of the things compared, one of each per
  round and in a rotating order, so that a burst of load from elsewhere on the
  machine falls on every side alike instead of on whichever ran last;
* :class:`Row`: one line of the results table, with medians, p90, the absolute
  difference and the ratio against its anchor, and whether its goal
  holds;
* :class:`Bench`: the clean virtual environment (made in a temporary folder
  with the project installed into it as the README installs it, ``pip install
  <repo>``, not editable), the interpreter the verifiers run on, a scratch
  root on tmpfs when the machine has one, and the environment the tool's
  commands get (a private cache and TMPDIR);
* :class:`Lines`: a child's stdout read line by line on a thread, each line
  stamped when it arrived (for "save -> line" timings);
* the machine facts and the table printer (:func:`table`), and
  :func:`write_readme`, which puts the table into docs/performance.md's
  section.

Standard library only: it runs under any Python 3.10+, outside the
benchmark's virtual environment, and the tests import it without Textual.
"""

from __future__ import annotations

import datetime
import math
import os
import platform
import queue
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RUNNER = REPO / "runner" / "run_verifier.py"
README_BEGIN = "<!-- benchmarks:begin -->"
README_END = "<!-- benchmarks:end -->"

# The environment variable another unit adds to force the staging; sent to
# the "view" / "copy" rows (an older build ignores it, and the
# rows then say the tool reported no sandbox).
SANDBOX_VARIABLE = "VERIFIER_TUI_SANDBOX"
NOT_REPORTED = "not reported"


# -- statistics -----------------------------------------------------------------------------


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def p90(values: Sequence[float]) -> float:
    """The nearest-rank 90th percentile: the smallest sample that at least 90%
    of the samples do not exceed (with 10 samples, the 9th smallest)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]


# -- goals and rows ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Goal:
    """A row's goal: ``adds`` (median minus the anchor's median
    at most ``limit``), ``ratio`` (median over the anchor's at most
    ``limit``) or ``at_most`` (the median itself at most ``limit``)."""

    kind: str
    limit: float
    text: str

    @classmethod
    def adds(cls, limit: float, unit: str = "ms") -> Goal:
        return cls("adds", limit, f"adds <= {limit:g} {unit}")

    @classmethod
    def ratio(cls, limit: float) -> Goal:
        return cls("ratio", limit, f"<= {limit:g}x")

    @classmethod
    def at_most(cls, limit: float, unit: str) -> Goal:
        return cls("at_most", limit, f"<= {limit:g} {unit}")


@dataclass
class Row:
    """One line of the table: what was measured against what, and the goal.

    ``values`` and ``anchor_values`` are in the row's ``unit`` ("ms" or
    "MB"). A row with ``skipped`` set was not measured; the text says why."""

    key: str
    issue: str
    what: str
    anchor: str = ""
    unit: str = "ms"
    values: list[float] = field(default_factory=list)
    anchor_values: list[float] = field(default_factory=list)
    goal: Goal | None = None
    notes: list[str] = field(default_factory=list)
    skipped: str | None = None

    @property
    def median(self) -> float | None:
        return median(self.values) if self.values else None

    @property
    def anchor_median(self) -> float | None:
        return median(self.anchor_values) if self.anchor_values else None

    @property
    def difference(self) -> float | None:
        if self.median is None or self.anchor_median is None:
            return None
        return self.median - self.anchor_median

    @property
    def ratio(self) -> float | None:
        if self.median is None or not self.anchor_median:
            return None
        return self.median / self.anchor_median

    @property
    def holds(self) -> bool | None:
        """Whether the goal holds on the medians; None when it cannot be told."""
        goal = self.goal
        if goal is None or self.skipped or self.median is None:
            return None
        measured = {"adds": self.difference, "ratio": self.ratio, "at_most": self.median}[goal.kind]
        return None if measured is None else measured <= goal.limit


def skipped(key: str, issue: str, what: str, reason: str, anchor: str = "", goal: Goal | None = None) -> Row:
    return Row(key, issue, what, anchor=anchor, goal=goal, skipped=reason)


# -- timing -----------------------------------------------------------------------------------


def interleave(actions: dict[str, Callable[[], float]], rounds: int, warmup: int = 1) -> dict[str, list[float]]:
    """Run each action once per round, ``warmup`` untimed rounds first; each
    action returns its own measurement (seconds, or whatever unit it times).
    The order rotates from round to round, so no side always runs first."""
    names = list(actions)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for index in range(warmup + rounds):
        shift = index % len(names)
        for name in names[shift:] + names[:shift]:
            value = actions[name]()
            if index >= warmup:
                samples[name].append(value)
    return samples


def timed_run(
    argv: Sequence[str],
    *,
    cwd: Path | str | None = None,
    env: dict[str, str] | None = None,
    check: Callable[[subprocess.CompletedProcess], str | None] | None = None,
) -> float:
    """Wall time of one command, in seconds, measured from outside as a user
    would feel it. ``check`` returns a complaint when the command did not do
    its job; the benchmark then stops with it (a wrong result is no timing)."""
    start = time.perf_counter()
    done = subprocess.run(list(argv), cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True)
    elapsed = time.perf_counter() - start
    if check is not None:
        problem = check(done)
        if problem:
            raise BenchmarkError(f"{argv[0]} did not do its job: {problem}")
    elif done.returncode != 0:
        raise BenchmarkError(
            f"{' '.join(map(str, argv))} exited {done.returncode}: "
            f"{done.stderr.decode(errors='replace').strip()[-500:]}"
        )
    return elapsed


def ms(values: Iterable[float]) -> list[float]:
    return [1000 * value for value in values]


class BenchmarkError(Exception):
    """A benchmark could not measure what it set out to (its row says why)."""


# -- a child's lines, stamped --------------------------------------------------------------


class Lines:
    """A child process whose stdout is read on a thread, line by line, each
    line stamped with ``time.perf_counter()`` the moment it was read."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path | str | None = None,
        env: dict[str, str] | None = None,
        stdin_text: str | None = None,
    ) -> None:
        self.argv = list(argv)
        self.proc = subprocess.Popen(
            self.argv,
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL,
            start_new_session=True,
        )
        if stdin_text is not None:
            assert self.proc.stdin is not None
            self.proc.stdin.write(stdin_text.encode())
            self.proc.stdin.close()
        self._lines: queue.Queue = queue.Queue()
        self._stderr: list[bytes] = []
        threading.Thread(target=self._pump, daemon=True).start()
        threading.Thread(target=self._keep_stderr, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put((time.perf_counter(), line.decode("utf-8", "replace")))
        self._lines.put((time.perf_counter(), None))

    def _keep_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._stderr = (self._stderr + [line])[-20:]

    def next(self, timeout: float = 30.0, match: Callable[[str], bool] | None = None) -> tuple[float, str]:
        """The next line (that ``match`` accepts) and when it was read."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                stamp, line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise BenchmarkError(
                    f"{Path(self.argv[0]).name} printed no expected line in {timeout:g} s{self._tail()}"
                ) from None
            if line is None:
                raise BenchmarkError(f"{Path(self.argv[0]).name} ended early{self._tail()}")
            if match is None or match(line):
                return stamp, line

    def drain(self, quiet: float = 0.0) -> list[str]:
        """Discard what was printed so far (waiting until ``quiet`` seconds
        pass without a line)."""
        dropped = []
        while True:
            try:
                _, line = self._lines.get(timeout=quiet) if quiet else self._lines.get_nowait()
            except queue.Empty:
                return dropped
            if line is not None:
                dropped.append(line)

    def _tail(self) -> str:
        text = b"".join(self._stderr).decode("utf-8", "replace").strip()
        return f": {text[-600:]}" if text else ""

    def stop(self) -> None:
        """SIGINT to the child's group (Ctrl+C), then SIGKILL if it lingers."""
        stop_group(self.proc)


def stop_group(proc: subprocess.Popen, grace: float = 10.0) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGINT)
            proc.wait(timeout=grace)
        except (ProcessLookupError, subprocess.TimeoutExpired) as error:
            if isinstance(error, subprocess.TimeoutExpired):
                print(f"   {proc.args!r} did not end within {grace:g} s of SIGINT: SIGKILLed", flush=True)
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()


# -- the environment -------------------------------------------------------------------------


def tmpfs_root() -> Path | None:
    """/dev/shm when it is a writable tmpfs (it is on most Linux machines)."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK) and filesystem_type(shm) == "tmpfs":
        return shm
    return None


def filesystem_type(path: Path) -> str:
    """The file system type of the mount that holds ``path`` (Linux), else "?"."""
    try:
        mounts = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return "?"
    best, kind = "", "?"
    target = os.path.realpath(path)
    for line in mounts:
        parts = line.split()
        if len(parts) < 3:
            continue
        point = parts[1].replace("\\040", " ")
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, kind = point, parts[2]
    return kind


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment the tool gives the runner (verifier_tui/engine/run.py's
    child_env): ours without what changes the import path or start-up, with
    unbuffered UTF-8 output and no bytecode writing."""
    dropped = {
        "PYTHONPATH",
        "PYTHONSTARTUP",
        "PYTHONHOME",
        "PYTHONSAFEPATH",
        "PYTHONUSERBASE",
        "PYTHONINSPECT",
        "PYTHONBREAKPOINT",
        "PYTHONNOUSERSITE",
        "PYTHONWARNINGS",
    }
    env = {k: v for k, v in os.environ.items() if k not in dropped and not k.startswith("TEXTUAL")}
    env.update(PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1", PYTHONIOENCODING="utf-8")
    env.update(extra or {})
    return env


@dataclass
class Bench:
    """What every benchmark runs with. Made once by :func:`make_bench`."""

    root: Path
    """Scratch for tasks, workspaces and the tool's own scratch (TMPDIR)."""
    venv: Path
    python: str
    """The real interpreter behind the venv: the verifiers run on it (the
    bare runner, the floor and the tool's ``--python``)."""
    quick: bool = False
    entr: str | None = None
    """entr, when found (an anchor of the watch rows)."""
    ptw: str | None = None
    """pytest-watcher's ``ptw`` in the venv, when it could be installed."""
    notes: list[str] = field(default_factory=list)

    @property
    def tool(self) -> str:
        return str(self.venv / "bin" / "verifier-tui")

    @property
    def venv_python(self) -> str:
        return str(self.venv / "bin" / "python")

    def rounds(self, full: int, quick: int) -> int:
        return quick if self.quick else full

    def folder(self, name: str) -> Path:
        path = self.root / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def settle(self, within_s: float = 120.0) -> None:
        """Wait (untimed) until the tool's scratch folders are gone from its
        TMPDIR: a big copy is removed in the background after the command
        returned (engine/sandbox/stage.py), and that removal must not run into the
        next sample."""
        deadline = time.monotonic() + within_s
        while left := sorted(p.name for p in self.folder("tmp").iterdir() if p.name.startswith("verifier-tui-")):
            if time.monotonic() > deadline:
                inside = sorted(q.name for q in (self.folder("tmp") / left[0]).iterdir())[:10]
                raise BenchmarkError(
                    f"the tool's scratch in {self.folder('tmp')} was not removed in {within_s:.0f} s: "
                    f"{', '.join(left)} (the first holds {', '.join(inside) or 'nothing'})"
                )
            time.sleep(0.02)

    def tool_env(self, sandbox: str | None = None) -> dict[str, str]:
        """The tool's environment: a private cache and TMPDIR under the scratch
        root (so its staging lands on the same file system as the workspaces
        and ``cp -a``), and the staging forced when ``sandbox`` is given."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "TEXTUAL"))}
        env.pop(SANDBOX_VARIABLE, None)
        env.update(XDG_CACHE_HOME=str(self.folder("cache")), TMPDIR=str(self.folder("tmp")))
        if sandbox is not None:
            env[SANDBOX_VARIABLE] = sandbox
        return env


def make_bench(
    *,
    quick: bool,
    venv: Path | None = None,
    tmp: Path | None = None,
    python: str = sys.executable,
    log: Callable[[str], None] = print,
) -> Bench:
    """The scratch root and a clean venv with the project installed into it,
    non-editable, from this checkout (the dependencies come from whatever
    index pip is configured with). ``venv`` reuses (or makes) one at that path
    and reinstalls only the project."""
    base = tmp or tmpfs_root() or Path(tempfile.gettempdir())
    root = Path(tempfile.mkdtemp(prefix="verifier-tui-bench-", dir=base))
    fresh = venv is None
    if venv is None:
        venv = Path(tempfile.mkdtemp(prefix="verifier-tui-bench-venv-"))
    if not (venv / "bin" / "python").exists():
        log(f"making a virtual environment in {venv}")
        subprocess.run([python, "-m", "venv", str(venv)], check=True)
        fresh = True
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    log(f"installing {REPO} into it (pip install, not editable)")
    if fresh:
        subprocess.run(pip + [str(REPO)], check=True)
    else:
        subprocess.run(pip + ["--force-reinstall", "--no-deps", str(REPO)], check=True)
    real = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import sys; print(sys._base_executable)"],
        check=True,
        stdout=subprocess.PIPE,
        text=True,
    ).stdout.strip()
    return Bench(root=root, venv=venv, python=os.path.realpath(real), quick=quick)


def pip_install(bench: Bench, *packages: str) -> str | None:
    """Install ``packages`` into the benchmark's venv; a reason when it failed."""
    done = subprocess.run(
        [bench.venv_python, "-m", "pip", "install", "-q", "--disable-pip-version-check", *packages],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    if done.returncode != 0:
        return f"pip install {' '.join(packages)} failed: {done.stdout.strip().splitlines()[-1:]}"
    return None


def find_entr(install: bool) -> tuple[str | None, str]:
    """entr on PATH; with ``install`` and apt-get present, try to install it.
    (path or None, a note saying what happened)."""
    found = shutil.which("entr")
    if found:
        return found, f"entr: {found}"
    if not install:
        return None, "entr is not on PATH (--install-anchors tries apt-get install entr)"
    if not shutil.which("apt-get"):
        return None, "entr is not on PATH and there is no apt-get to install it"
    command = ["apt-get", "install", "-y", "-q", "entr"]
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:  # the package lists may never have been fetched
        subprocess.run(["apt-get", "update", "-q"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    found = shutil.which("entr")
    if found:
        return found, f"entr: installed with apt-get ({found})"
    return None, f"entr could not be installed: {done.stdout.strip().splitlines()[-1:]}"


def machine_facts(bench: Bench) -> dict[str, str]:
    version = subprocess.run(
        [bench.python, "-c", "import platform; print(platform.python_version())"], stdout=subprocess.PIPE, text=True
    ).stdout.strip()
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count() or 0
    commit = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ).stdout.strip()
    kind = filesystem_type(bench.root)
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cores": f"{usable} usable of {os.cpu_count()}",
        "python": f"{version} ({bench.python})",
        "system": f"{platform.system()} {platform.release()}",
        "temp folder": f"{bench.root} ({'tmpfs' if kind == 'tmpfs' else kind + ': not tmpfs'})",
        "load average": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "commit": commit or "?",
        "mode": "quick (fewer rounds)" if bench.quick else "full",
    }


# -- the table -------------------------------------------------------------------------------

COLUMNS = ("issue", "what", "median (p90)", "anchor", "anchor median (p90)", "difference", "ratio", "goal", "holds")


def _amount(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    return f"{value:.1f} {unit}" if unit != "ms" or abs(value) < 1000 else f"{value / 1000:.2f} s"


def _spread(values: list[float], unit: str) -> str:
    if not values:
        return "-"
    if len(values) == 1:
        return _amount(values[0], unit)
    return f"{_amount(median(values), unit)} ({_amount(p90(values), unit)})"


def row_cells(row: Row) -> list[str]:
    """The table's cells for one row, in the order of :data:`COLUMNS`."""
    what = row.what + "".join(f"; {note}" for note in row.notes)
    if row.skipped:
        return [
            row.issue,
            what,
            "skipped",
            row.anchor or "-",
            "-",
            "-",
            "-",
            row.goal.text if row.goal else "-",
            f"- ({row.skipped})",
        ]
    difference = row.difference
    return [
        row.issue,
        what,
        _spread(row.values, row.unit),
        row.anchor or "-",
        _spread(row.anchor_values, row.unit),
        "-" if difference is None else ("+" if difference >= 0 else "") + _amount(difference, row.unit),
        "-" if row.ratio is None or row.unit != "ms" else f"{row.ratio:.2f}x",  # a ratio of growths means little
        row.goal.text if row.goal else "-",
        {True: "yes", False: "NO", None: "-"}[row.holds],
    ]


def table(rows: Sequence[Row]) -> str:
    """A Markdown table: readable in a terminal, rendered in the README."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for row in rows:
        lines.append("| " + " | ".join(cell.replace("|", "/") for cell in row_cells(row)) + " |")
    return "\n".join(lines)


def report(rows: Sequence[Row], facts: dict[str, str], command: str) -> str:
    head = "\n".join(f"- {name}: {value}" for name, value in facts.items())
    return (
        f"Measured with `{command}`:\n\n{head}\n\n{table(rows)}\n\n"
        "Medians of interleaved rounds (p90 in brackets); the difference and the ratio compare medians. "
        "Each benchmark's docstring in `benchmarks/` says what it times and why its goal is what it is."
    )


def replace_section(text: str, body: str) -> str:
    """``text`` with what stands between the benchmark markers replaced by ``body``."""
    start, end = text.find(README_BEGIN), text.find(README_END)
    if start < 0 or end < start:
        raise BenchmarkError(f"docs/performance.md has no {README_BEGIN} ... {README_END} section")
    return text[: start + len(README_BEGIN)] + "\n" + body.strip() + "\n" + text[end:]


def write_readme(body: str, readme: Path = REPO / "docs" / "performance.md") -> None:
    readme.write_text(replace_section(readme.read_text(encoding="utf-8"), body), encoding="utf-8")
