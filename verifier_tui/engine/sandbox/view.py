"""What the sandbox shows a task's verifier, read from the task: where the
workspace is, the working directory, and the limits of ``task.toml``.

Each mirrors a piece of Harbor 0.26.0:

* the workspace is ``/app``: the shim passes ``--workspace /app``; a task's
  own ``tests/test.sh`` that passes another absolute path there is followed;
* the working directory is ``[environment] workdir`` when set, else the
  image's ``WORKDIR`` (harbor/environments/docker/docker.py, ``exec``: the
  command runs where ``docker exec`` starts it), else ``/``, Docker's own
  default;
* ``[environment] memory_mb`` and ``cpus`` become the container's limits,
  and the verifier's ``network_mode`` (``[verifier]`` over
  ``[environment]``, harbor/models/task/config.py) is the container's
  network.
"""

from __future__ import annotations

import os
import re
import shlex
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from verifier_tui.engine import untrusted
from verifier_tui.engine.plain import cut_middle, unbroken
from verifier_tui.engine.procfs import machine_cpus
from verifier_tui.engine.record import record
from verifier_tui.engine.task.sh_words import option_values, sh_lines

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from verifier_tui.engine.task.discovery import Task

# Where the sandbox puts things (harbor-trials.md: the shim's command line,
# Harbor's reward folder). The tool's own inputs and outputs (a case's task
# data and response, the runner's explanation) are at INPUTS, which no
# Harbor sandbox has: it is named so no task would use it. APP and TESTS are
# Harbor's own paths, not a choice of ours: engine/harbor reads a trial's
# manifest and test-stdout.txt by them (a task's test.sh may move the workspace
# of a run, never what Harbor collected as /app).
APP = "/app"
TESTS = "/tests"
REWARD = "/logs/verifier"
INPUTS = "/.verifier-tui"
DOCKER_DEFAULT_WORKDIR = "/"
_READ_AT_MOST = 256 * 1024  # a test.sh or Dockerfile is a few KB; a bigger file is read this far

# A Dockerfile's WORKDIR instruction (case-insensitive, as Docker reads it).
_WORKDIR = re.compile(r"^[ \t]*WORKDIR[ \t]+(.+?)[ \t]*$", re.IGNORECASE | re.MULTILINE)


@record(frozen=True)
class Limits:
    """The task's limits, and how the run gets them (``cpus`` is the task's:
    what the run gets of it is :func:`cpus_given`)."""

    memory_mb: int | None = None
    cpus: int | float | None = None  # as TaskConfig.cpus: 1.5 is allowed
    storage_mb: int | None = None
    network: str = "public"  # public, no-network, allowlist
    workdir: str = DOCKER_DEFAULT_WORKDIR
    app: str = APP
    app_note: str = ""  # test.sh's workspace, when not known here (view.workspace_given): said in the run's notes
    cpu_list: tuple[int, ...] = ()  # the CPUs the run was bound to (empty: all of this machine's; set by cpu_lease)
    network_given: str = ""  # in a view: "none", "user" (the internet, by a helper) or "host"; "" in the copy
    # (and "lost" in the words of a run whose helper failed: its JSON says "none")
    cgroup: tuple[str, ...] = ()  # the limits a cgroup of the run's own applies: "memory", "cpu" (.cgroup)

    def to_json(self) -> dict[str, Any]:
        return {
            "memory_mb": self.memory_mb,
            "cpus": self.cpus,
            "cpus_given": cpus_given(self.cpus, self.cgroup)[0],
            "storage_mb": self.storage_mb,
            "cpu_list": list(self.cpu_list),
            "network": self.network,
            "network_given": self.network_given or None,
            "cgroup": list(self.cgroup),
            "workdir": self.workdir,
            "workspace": self.app,
        }


def _read_text(path: Path) -> str | None:
    """A file of the task's, as text: its first :data:`_READ_AT_MOST` bytes."""
    return untrusted.read_bytes(path, _READ_AT_MOST, keep="head").text()


def normal_path(path: str) -> str:
    """An absolute path in its normal form with one leading slash: POSIX lets
    ``//`` mean something else, so ``os.path.normpath`` keeps it ("//etc"),
    where Linux, bwrap and every check of the view take it as ``/etc``."""
    return "/" + os.path.normpath(path).lstrip("/")


def workspace_path(tests_dir: Path) -> str:
    """Where the task's ``tests/test.sh`` tells the runner the workspace is:
    ``/app`` for the shim (and when it says nothing plain)."""
    return workspace_given(tests_dir)[0]


def workspace_given(tests_dir: Path, shell: str | None = "bash") -> tuple[str, str]:
    """:func:`workspace_path`, and a note ("" for none) when test.sh passes a workspace known only as it
    runs (``"$WS"``, a command's output, a pattern matched against the container's files, braces
    ``shell`` expands) or holding a line break (the run's is then ``/app``), or one ending in \\r.
    ``shell`` is the one reading test.sh, as said ("bash", or the program its #! line names), None for
    one keeping braces (dash)."""
    path, line, unknown = _workspace_read(tests_dir, braces=shell is not None)
    if path is not None:
        if not path.endswith("\r"):
            return path, ""
        # bash runs test.sh (its #! line's, or bash itself, which Harbor starts it from)
        why = "its lines end in \\r\\n (a CRLF file)" if line.endswith("\r") else "it quotes the \\r"
        return path, f"tests/test.sh passes --workspace {unbroken(path)}: {why}, which bash keeps as the path's own"
    if unknown is None:
        return APP, ""
    said = f"tests/test.sh passes {cut_middle(unbroken(unknown.written), 200)}"
    if unknown.how == "braces":
        return APP, f"{said}, {braces_words(unknown, shell or '')}: this run's workspace is at {APP}, the shim's"
    why = {
        "pattern": "a pattern the container's shell matches against the container's files (pathname expansion), "
        "which are not here",
        "line break": "a path holding a line break, which no view here lays",
    }.get(unknown.how, "a path known only as test.sh runs (a variable, a command's output, a home folder: ~)")
    return APP, f"{said}, {why}: this run's workspace is at {APP}, the shim's"


@record(frozen=True)
class UnknownWorkspace:
    """A ``--workspace`` word of test.sh whose path the shell makes as it runs: ``how`` it does
    ("expands": a variable, a command's output; "pattern": pathname expansion; "braces": bash's brace
    expansion, into ``words`` when they are known here), and the flag and its word as ``written``."""

    written: str
    how: str
    words: tuple[str, ...] = ()


def braces_words(unknown: UnknownWorkspace, shell: str) -> str:
    """What ``shell`` (:func:`workspace_given`'s) makes of a ``--workspace`` word with braces, said for a
    note or a refusal: bash's words, where another program its #! line names may do otherwise."""
    words = f"{len(unknown.words)} words ({unbroken(shlex.join(unknown.words))})" if unknown.words else ""
    if shell != "bash":
        into = f"into {words}" if words else "(brace expansion)"
        return (
            f"whose braces {unbroken(shell)}, which its #! line names, may expand as bash does {into} (dash does not)"
        )
    if not words:
        return "whose braces bash expands (brace expansion) into words not worked out here"
    return f"which bash expands into {words}"


def braced_workspace(tests_dir: Path, *, braces: bool) -> UnknownWorkspace | None:
    """The ``--workspace`` word with braces its shell expands (``braces``: it does) that test.sh passes,
    when no plain path is passed."""
    path, _line, unknown = _workspace_read(tests_dir, braces=braces)
    return unknown if path is None and unknown is not None and unknown.how == "braces" else None


def _workspace_read(tests_dir: Path, *, braces: bool = True) -> tuple[str | None, str, UnknownWorkspace | None]:
    """The first plain path test.sh passes as ``--workspace`` and the line passing it, else None, "" and
    the first such word whose path its shell makes as it runs (None for none)."""
    text = _read_text(tests_dir / "test.sh") or ""
    unknown: UnknownWorkspace | None = None
    for _number, line in sh_lines(text):
        # lexed only where the flag is written (a test.sh of 256 KB took 175 ms to lex whole, each run)
        path, written = _workspace_given(line, braces=braces) if "--workspace" in line else (None, None)
        if path is not None:
            return path, line, None
        unknown = unknown or written
    return None, "", unknown


# a piece of a word as written, for where it ends: quoted, backquoted or escaped, a $( or a parenthesis,
# what ends a word outside them, or a run of anything else
_WRITTEN_PIECE = re.compile(
    r"""'[^']*'|"(?:[^"\\]|\\.)*"|`(?:[^`\\]|\\.)*`|\\.|\$\(|[()]|[ \t\n;&|<>]|[^'"`\\$() \t\n;&|<>]+|.""", re.DOTALL
)
PATH_MAX = 4096  # Linux's: a longer word is no path the runner can open


def _workspace_given(line: str, *, braces: bool = True) -> tuple[str | None, UnknownWorkspace | None]:
    """The absolute path one line of test.sh passes as ``--workspace DIR`` or ``--workspace=DIR``, its
    words read with sh's quoting (``;``, ``&&``, ``|`` end a word as in sh); else None, with the first
    such word whose path the shell makes (``"$WS"``, a backquote, ``/ap*``, ``/app/{a,b}``: its value is
    not known here). None too for no such word, one holding a newline (quoted over two lines), or a
    quote that never closes."""
    unknown = None  # the first such word the shell makes, said only when no plain path follows it
    for given, value, how, inline in option_values(line, "--workspace", braces=braces):
        if how:
            # bash expands braces in the whole word: --workspace=/a/{b,c} is two --workspace= words
            written = _written(line, given.start)
            written = written if inline else f"--workspace {written}"
            unknown = unknown or UnknownWorkspace(written, how, given.braces())
        elif value.startswith("/") and len(value) < PATH_MAX and normal_path(value) != "/":
            return normal_path(value), None
    return None, unknown


def _written(line: str, at: int) -> str:
    """The word of ``line`` that starts at ``at`` as written, through any ``$(...)`` or backquotes."""
    depth, end = 0, at
    for piece in _WRITTEN_PIECE.finditer(line, at):
        text = piece.group()
        if text == "$(" or (text == "(" and depth):
            depth += 1
        elif text == ")" and depth:
            depth -= 1
        elif not depth and (text in "()" or text in " \t\n;&|<>"):
            break
        end = piece.end()
    return line[at:end]


def image_workdir(task_root: Path) -> str:
    """The ``WORKDIR`` that ``environment/Dockerfile`` leaves in force (the
    last one; a relative one continues the one before), else Docker's ``/``."""
    text = _read_text(task_root / "environment" / "Dockerfile")
    workdir = DOCKER_DEFAULT_WORKDIR
    for found in _WORKDIR.finditer(text or ""):
        value = found.group(1).strip().strip("\"'")
        if not value or "$" in value:
            continue  # a build variable: not known here
        workdir = normal_path(os.path.join(workdir, value))
    return workdir


def limits_for(task: Task, app: str, app_note: str = "") -> Limits:
    """The limits of ``task`` (its ``task.toml`` as Harbor reads it)."""
    config = task.config
    return Limits(
        memory_mb=config.memory_mb,
        cpus=config.cpus,
        storage_mb=config.storage_mb,
        network=config.verifier_network_mode,
        workdir=task_workdir(task),
        app=app,
        app_note=app_note,
    )


def task_workdir(task: Task) -> str:
    """Where the runner starts: task.toml's ``workdir``, in its normal form
    ("//app/sub" is /app/sub to Linux, and meets the same checks), else the
    image's WORKDIR."""
    given = task.config.workdir
    if not given:
        return image_workdir(task.root)
    return normal_path(given) if given.startswith("/") else given


def cpus_to_bind(cpus: int | float | None) -> int:
    """How many CPUs a run of a task with ``cpus`` is bound to where no
    cgroup gives it a quota (Docker's ``cpus`` is a share of time; affinity
    to as many CPUs is the nearest a run without one gets); 0 when the task
    sets none or this machine has no more."""
    if cpus is None or not hasattr(os, "sched_getaffinity"):
        return 0
    wanted = max(1, int(-(-float(cpus) // 1)))  # a fraction of a CPU still needs one
    return wanted if wanted < machine_cpus() else 0


LEAST_CPUS = 0.01
"""The kernel's least CPU quota, 1 ms, in CPUs of Docker's 100 ms period (:mod:`.cgroup`)."""


def cpus_given(cpus: int | float | None, cgroup: tuple[str, ...]) -> tuple[int | float | None, str]:
    """How many CPUs a run of a task with ``cpus`` gets, and how: ``"quota"``
    in a cpu cgroup of its own (``cgroup`` holds ``"cpu"``), Docker's share
    of time, between the kernel's least quota and this machine's CPUs (more
    is no limit; Docker refuses both ends); else ``"bound"``, affinity to as
    many whole CPUs (:func:`cpus_to_bind`); else ``"unbound"``, every CPU this
    machine gives it. (None, "") when the task sets none. The quota written,
    the notes, the limits line and ``--json`` all count them here."""
    if cpus is None:
        return None, ""
    have = machine_cpus()
    if "cpu" in cgroup:
        return min(max(cpus, LEAST_CPUS), have), "quota"
    bound = cpus_to_bind(cpus)
    return (bound, "bound") if bound else (have, "unbound")


def cpus_text(count: int | float) -> str:
    """``1 CPU``, ``2 CPUs``, ``0.01 CPUs``: a count of CPUs in the notes and the limits line."""
    return f"{count:g} CPU" + ("" if count == 1 else "s")


# How many of this process's runs are bound to each CPU right now.
_bound: dict[int, int] = {}
_bound_lock = threading.Lock()


@contextmanager
def cpu_lease(wanted: int) -> Iterator[tuple[int, ...]]:
    """The ``wanted`` CPUs this process may use that its other runs are bound
    to least, held for the block. Runs side by side (``test -j 2``) each get
    their own: bound to the same first CPU, they would share it while the
    others idle, which no sandbox of its own does."""
    with _bound_lock:
        allowed = sorted(os.sched_getaffinity(0))
        chosen = tuple(sorted(sorted(allowed, key=lambda cpu: _bound.get(cpu, 0))[:wanted]))
        for cpu in chosen:
            _bound[cpu] = _bound.get(cpu, 0) + 1
    try:
        yield chosen
    finally:
        with _bound_lock:
            for cpu in chosen:
                _bound[cpu] -= 1


# A string literal that starts with one of the sandbox's own paths.
_SANDBOX_LITERAL = r"""(?<![\w.])[rRbBuU]?["'](/app|/tests|/logs/verifier)(?=["'/])"""
_SOURCES_AT_MOST = 64  # the task's own .py files looked at, at most


def sandbox_path_lines(tests_dir: Path, verifier: Path) -> list[str]:
    """Where the verifier and its helpers name ``/app``, ``/tests`` or
    ``/logs/verifier`` by absolute path (``verifier.py:8 /app``): what the
    copy sandbox, which has none of them, cannot run as the sandbox would."""
    files = [verifier]
    try:
        for path in sorted(tests_dir.rglob("*.py")):
            if len(files) >= _SOURCES_AT_MOST:
                break
            if path != verifier and ".ng" not in path.relative_to(tests_dir).parts:
                files.append(path)
    except OSError:
        pass
    found: list[str] = []
    for path in files:
        text = _read_text(path) or ""
        for number, line in enumerate(text.splitlines(), 1):
            if line.lstrip().startswith("#"):
                continue
            hit = re.search(_SANDBOX_LITERAL, line)
            if hit:
                found.append(f"{path}:{number} {hit.group(1)}")
    return found
