"""What a folder is, told from its layout alone, and what a task ships beside
its verifier.

Every answer here costs a handful of ``stat`` calls and reads a few small
files, never a walk of a tree: a path typed by mistake (``/``, the home folder,
a checkout of this very tool) must get its one line at once.

- a **task** is a folder with ``task.toml``, or a ``tests/`` folder holding
  ``test.sh`` (what Harbor runs) or ``verifier.py`` (NeMo Gym's Python verifier);
- a **folder of tasks** (a dataset, a checkout of several tasks) holds tasks as
  its own subfolders;
- a **NeMo Gym environment** (``environment.yaml`` with ``tasksets``) names a
  verifier written against NeMo Gym's episode API, ``verify(attempt,
  verifier_input)``, which NeMo Gym calls in its own process: not the runner
  contract this tool runs;
- a **published task** may carry ``tests/.ng/`` as NeMo Gym's publish step
  wrote it: its own ``run_verifier.py`` and a vendored ``nemo_gym``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from verifier_tui.engine import untrusted
from verifier_tui.engine.advice import TASK_RUNNER, Advice
from verifier_tui.engine.record import field, record
from verifier_tui.runner_source import EXTRAS

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

#: At most this many entries of a folder are looked at to find the tasks it
#: holds: enough for any dataset a person keeps, bounded for a home folder.
MAX_ENTRIES_SCANNED = 5000
#: How many task names a message lists before it gives a count.
NAMES_SHOWN = 5
#: The most names a one-line list of cases or tasks shows (then how many in all): a folder of hundreds of
#: tasks, or a task of thousands of cases, would make a line of thousands of characters.
NAMES_LISTED = 20
#: How many folders above a path may hold the environment.yaml that owns it.
_ENVIRONMENT_LEVELS = 3
_MANIFEST_NAMES = ("environment.yaml", "environment.yml")
#: Only this much of a manifest is read (they are a few hundred bytes).
_MAX_MANIFEST_BYTES = 1_000_000
_MAX_RUNNER_BYTES = 4 * 1024 * 1024  # ours is about 60 KB
_TASKSETS = rb"(?m)^tasksets[ \t]*:"
_IMPLEMENTATION = rb"(?m)^[ \t-]*implementation[ \t]*:[ \t]*['\"]?([^'\"#\r\n]+?)['\"]?[ \t]*(?:#.*)?$"
# verify's parameter list as written at the top level (a best effort: it only
# chooses the words of a notice).
_VERIFY_PARAMS = re.compile(rb"^(?:async[ \t]+)?def[ \t]+verify[ \t]*\(([^)]*)\)", re.M)
_EPISODE_PARAMS = {"attempt", "verifier_input"}
# A top-level definition or assignment of `verify` (column 0 means module level).
_VERIFY_AT_TOP = re.compile(
    rb"^(?:async[ \t]+def[ \t]+verify[ \t]*\(|def[ \t]+verify[ \t]*\(|verify[ \t]*(?::[^=\n]*)?=(?!=))", re.M
)
#: A verifier file (or test.sh) larger than this is not scanned: it is data, not code.
MAX_SCAN_BYTES = 2_000_000
#: What makes a folder a task (:func:`looks_like_task`), as a message names it.
TASK_FILES = "task.toml, tests/test.sh or tests/verifier.py"


def is_pytest_file(path: Path) -> bool:
    """pytest's own files (``test_*.py``, ``*_test.py``, ``conftest.py``) are
    never verifiers, whatever they define: NeMo Gym's ``hello_world`` task keeps
    ``tests/test_hello_world_verifier.py``, whose top-level
    ``verify = run_path(...)["verify"]`` borrows the real verifier to test it."""
    name = path.name
    return name.endswith(".py") and (name == "conftest.py" or name.startswith("test_") or name.endswith("_test.py"))


def has_top_level_verify(path: Path) -> bool:
    """Whether ``path``'s source defines ``verify`` at module level (read, never imported)."""
    data = untrusted.read_bytes(path, MAX_SCAN_BYTES).data
    return data is not None and _VERIFY_AT_TOP.search(data) is not None


def looks_like_task(folder: Path) -> bool:
    """A Harbor task by its layout: ``task.toml``, or ``tests/test.sh`` or
    ``tests/verifier.py``. A ``tests/`` folder alone is not enough: every
    Python checkout has one (this tool's own does). The one rule: a trial's
    task is looked for by it too (:mod:`verifier_tui.engine.harbor.locate`)."""
    return untrusted.present(folder / "task.toml") or _is_file(
        folder / "tests" / "test.sh", folder / "tests" / "verifier.py"
    )


def _is_file(*paths: Path) -> bool:
    """Whether any of ``paths`` is a file; a path the system cannot look up
    (a name past its length limit, from a trial's config.json) is none."""
    for path in paths:
        try:
            if path.is_file():
                return True
        except OSError:
            continue
    return False


def is_tests_folder_of_a_task(folder: Path) -> bool:
    """``folder`` is a task's ``tests/``: its parent is a task, or it holds the
    files Harbor or NeMo Gym run."""
    if folder.name != "tests":
        return False
    return looks_like_task(folder.parent) or (folder / "test.sh").is_file() or (folder / "verifier.py").is_file()


@record(frozen=True)
class TasksFound:
    """The tasks a folder holds as its own subfolders (sorted names), and
    whether the folder had more entries than were looked at."""

    names: list[str]
    more_unscanned: bool = False


def tasks_in(folder: Path) -> TasksFound:
    """The subfolders of ``folder`` that are tasks, looking at no more than
    :data:`MAX_ENTRIES_SCANNED` entries and never deeper than one level."""
    names: list[str] = []
    more = False
    try:
        with os.scandir(folder) as entries:
            for count, entry in enumerate(entries):
                if count >= MAX_ENTRIES_SCANNED:
                    more = True
                    break
                if entry.name.startswith("."):
                    continue
                try:
                    if entry.is_dir() and looks_like_task(Path(entry.path)):
                        names.append(entry.name)
                except OSError:
                    continue
    except OSError:
        return TasksFound([], False)
    return TasksFound(sorted(names), more)


def some_names(names: Sequence[str], shown: int = NAMES_SHOWN, separator: str = ", ") -> str:
    """``a, b, c`` or ``a, b, c, d, e and 12 more`` (``separator`` between two)."""
    if len(names) <= shown:
        return separator.join(names)
    return f"{separator.join(names[:shown])} and {len(names) - shown} more"


def not_a_task_message(path: Path, found: TasksFound | None = None, expected: str | None = None) -> str:
    """One line for a folder that is none of the things the tool opens: what
    was ``expected`` (by default, anything the tool opens), and what it holds
    when that helps (tasks of its own)."""
    # Every kind the tool opens: naming the trial alone told a user on Harbor's jobs/ folder, empty
    # before its first job, that jobs were no input of the tool's.
    expected = expected or (
        f"expected a task folder ({TASK_FILES}), its tests/ folder, "
        "a case folder (cases/<name>/), a .py file with a top-level verify, "
        "or a Harbor trial or job folder, or Harbor's jobs/ folder"
    )
    found = found if found is not None else tasks_in(path)
    where = str(path)
    if len(found.names) == 1:
        return f"{where} is not a task, but it holds one: {found.names[0]} (open {os.path.join(where, found.names[0])})"
    if found.names:
        count = f"{len(found.names)}{'+' if found.more_unscanned else ''}"
        return (
            f"{where} is a folder of {count} tasks, not a task: {some_names(found.names)}; "
            f"open one of them (for example {os.path.join(where, found.names[0])})"
        )
    return f"{where} is not a task: {expected}"


# ---------------------------------------------------------------------------
# NeMo Gym's environment format


@record(frozen=True)
class NemoGymEnvironment:
    """An ``environment.yaml`` with ``tasksets`` (read as text: no YAML
    parser is needed to tell the format and list what it names)."""

    manifest: Path
    implementations: list[str] = field(default_factory=list)


def nemo_gym_environment(start: Path) -> NemoGymEnvironment | None:
    """The NeMo Gym environment ``start`` belongs to: an ``environment.yaml``
    with a top-level ``tasksets`` key in ``start`` or a few folders above it."""
    for folder in [start, *list(start.parents)[:_ENVIRONMENT_LEVELS]]:
        for name in _MANIFEST_NAMES:
            manifest = folder / name
            data = _read_small(manifest)
            if data is not None and re.search(_TASKSETS, data):
                found = [m.group(1).decode("utf-8", "replace").strip() for m in re.finditer(_IMPLEMENTATION, data)]
                return NemoGymEnvironment(manifest, [f for f in found if f])
    return None


def episode_api_message(environment: NemoGymEnvironment, path: Path) -> str:
    """The one line for a NeMo Gym environment: what it is, and what the tool runs."""
    names = f" (verifier {some_names(environment.implementations, 3)})" if environment.implementations else ""
    return (
        f"{path} belongs to a NeMo Gym environment ({environment.manifest.name} with tasksets{names}): "
        "its verify(attempt, verifier_input) is NeMo Gym's episode API, which NeMo Gym calls in its own "
        "process, not the sandbox runner's contract that verifier-tui runs. verifier-tui debugs a Harbor task's "
        "Python verifier: tests/verifier.py with verify(workspace, task_data, response, state)"
    )


def uses_episode_api(verifier: Path) -> bool:
    """Whether ``verifier``'s top-level ``verify`` is written against NeMo
    Gym's episode API (it declares ``attempt`` or ``verifier_input``)."""
    data = _read_small(verifier)
    if data is None:
        return False
    match = _VERIFY_PARAMS.search(data)
    if match is None:
        return False
    names = {
        re.split(rb"[:=]", p, maxsplit=1)[0].strip(b" \t\r\n*/").decode("ascii", "replace")
        for p in match.group(1).split(b",")
    }
    return bool(names & _EPISODE_PARAMS)


def episode_api_notice(verifier_name: str) -> str:
    return (
        f"{verifier_name}'s verify takes attempt / verifier_input: that is NeMo Gym's episode API (an "
        "environment.yaml verifier), not the runner contract, which passes only workspace, task_data, "
        "response and state; the runner will report the unknown parameters as a contract error"
    )


def _read_small(path: Path) -> bytes | None:
    return untrusted.read_bytes(path, _MAX_MANIFEST_BYTES, keep="head").data


# ---------------------------------------------------------------------------
# What a published task ships in tests/.ng/


@record(frozen=True)
class OwnRunner:
    """The runner a published task carries (``tests/.ng/run_verifier.py``):
    whether it is byte for byte ours, and which of our extra flags it knows."""

    path: Path
    where: str  # the file in words, from the task's folder: tests/.ng/run_verifier.py or a step's own
    same_as_ours: bool
    knows_explain: bool  # --explain: print the plan, call nothing
    knows_explain_to: bool  # --explain-to FILE: the same, written just before verify is called
    knows_phases_to: bool = False  # --phases-to FILE: one line per phase (the trial replay's steps)
    knows_stack_signal: bool = False  # --stack-signal NAME: every thread's stack on that signal (at a timeout)
    knows_coverage_to: bool = False  # --coverage-to FILE: the task's own lines that ran


def _runner_at(tests_dir: Path, step: str | None) -> tuple[Path, Path]:
    """``/tests/.ng/run_verifier.py`` as the sandbox has it for ``step``, and the folder it lies
    beneath: a step's own whenever anything at all is at ``steps/NAME/tests/.ng/run_verifier.py``,
    since Harbor's ``Verifier._resolve_tests`` uploads the step's tests after ``tests/``, over its
    files; one that is a link, or too big to read, then offers no runner, never tests/'s, which the
    sandbox does not run for that step. ``tests_dir``: the task's ``tests/``."""
    own = step_tests(tests_dir.parent, step)
    folder = own if own is not None and untrusted.present(own / ".ng" / "run_verifier.py") else tests_dir
    return folder / ".ng" / "run_verifier.py", folder


def task_runner(tests_dir: Path, ours: Callable[[], Path], step: str | None = None) -> OwnRunner | None:
    """The task's own runner (``step``'s, :func:`_runner_at`), compared with ours (``ours()`` is
    where it is, asked only when the task ships one); None when it ships none."""
    path, beneath = _runner_at(tests_dir, step)
    if path.is_symlink() or not path.is_file() or not untrusted.kept_in_copy(path, beneath):
        return None
    theirs = untrusted.read_bytes(path, _MAX_RUNNER_BYTES).data
    if theirs is None:
        return None
    try:
        mine = ours().read_bytes()  # the tool's own file
    except OSError:
        mine = b""
    same = theirs == mine
    # A runner whose extras are a file of their own offers them only beside the
    # extras it was written with, and the stage places ours: only a copy of ours has them.
    offers = theirs if same or EXTRAS.encode() not in theirs else b""
    return OwnRunner(
        path,
        path.relative_to(tests_dir.parent).as_posix(),
        same,
        b"--explain" in offers,
        b"--explain-to" in offers,
        b"--phases-to" in offers,
        b"--stack-signal" in offers,
        b"--coverage-to" in offers,
    )


def no_runner_words(tests_dir: Path, step: str | None = None) -> str:
    """Why a task (``step`` of it) has no runner of its own to run (``--runner task``, ``R``),
    as ``ls`` would have it: a link at ``tests/.ng`` or at the runner is named
    with where it leads (the task "had no tests/.ng/run_verifier.py", yet
    the user found it there), as ``vendor`` names it."""
    path, beneath = _runner_at(tests_dir, step)
    name = path.relative_to(tests_dir.parent).as_posix()
    found = untrusted.look(path, beneath)
    if isinstance(found, untrusted.Read) and found.state == "link":
        where = found.path.relative_to(tests_dir.parent).as_posix()
        return (
            f"{untrusted.link_words(where, found.target or '?')}: only a runner that is a file "
            "of the task's own is run, never one behind a link"
        )
    read = untrusted.read_bytes(path, _MAX_RUNNER_BYTES, name=name, beneath=beneath)
    # a folder, a FIFO, a file too big or one the user cannot read: what is there, as task_runner found it
    return read.problem if read.state not in ("ok", "missing") and read.problem else f"no {name}"


def runner_notices(own: OwnRunner | None, runner: str) -> list[str]:
    """What the header's runner word means, in a sentence: which runner runs
    (``runner`` is "ours" or "task"), and what the sandbox would run (the
    task's own, when it ships one)."""
    if own is None:
        return []
    where = own.where
    if runner == "task":
        known = (
            "it offers --explain-to, so the resolution is its own"
            if own.knows_explain_to
            else "it offers no --explain-to, so the resolution shown is what the runner contract says, "
            "not what this runner reported"
        )
        return [f"running the task's own runner ({where}), as the sandbox would: {known}"]
    if own.same_as_ours:
        return []
    return [
        Advice(
            f"the task ships its own runner ({where}) and it differs from verifier-tui's: the sandbox runs "
            "the task's; this run uses verifier-tui's (for the resolution panel and the phases). ",
            TASK_RUNNER,
            " runs the task's own",
        )
    ]


def task_nemo_gym(tests_dir: Path) -> Path | None:
    """The ``nemo_gym`` package a published task vendors in ``tests/.ng/``
    (the copy the sandbox imports), or None."""
    package = tests_dir / ".ng" / "nemo_gym"
    if package.is_dir() and not package.is_symlink() and untrusted.kept_in_copy(package, tests_dir):
        return package
    return None


def verifiers_folder(path: Path) -> tuple[Path | None, str | None]:
    """``--nemo-gym DIR`` taken as the user meant it: a ``nemo_gym/verifiers``
    folder, the ``nemo_gym`` package itself, or a folder that holds the package
    (a site-packages or a NeMo Gym checkout). Returns (the verifiers folder,
    None) or (None, why none of these: the callers name the option and path)."""
    if not path.is_dir():
        return None, "not a folder"
    for candidate in (path, path / "verifiers", path / "nemo_gym" / "verifiers"):
        if (
            candidate.name == "verifiers"
            and (candidate / "__init__.py").is_file()
            and candidate.parent.name == "nemo_gym"
        ):
            return candidate, None
    if path.name == "verifiers" and (path / "__init__.py").is_file():
        return path, None  # a copy kept under another name: taken as it is
    return None, (
        "neither a nemo_gym/verifiers folder, the nemo_gym package, nor a folder "
        "holding nemo_gym/ (looked for verifiers/__init__.py in each)"
    )


def step_tests_folder(task_dir: Path, step: str) -> tuple[Path, bool]:
    """A step's own tests folder, ``steps/<name>/tests``, and whether it is
    the task's own (or not there at all): one there that is (or lies through)
    a link out of the task, or to nothing, is none of the task's, as a
    ``tests/`` thing linked out of tests/ is none (:func:`task_runner`): a
    sandbox has nothing there. The one test that :func:`step_tests`,
    :func:`step_tests_unused` and a session's watch all apply."""
    folder = task_dir / "steps" / step / "tests"
    return folder, not os.path.lexists(folder) or untrusted.kept_in_copy(folder, task_dir)


def step_tests(task_dir: Path, step: str | None) -> Path | None:
    """A step's own ``steps/<name>/tests`` folder (a multi-step task's), when it
    has one of the task's own (:func:`step_tests_folder`; one leading out of
    the task :func:`step_tests_unused` says)."""
    if step is None:
        return None
    folder, own = step_tests_folder(task_dir, step)
    return folder if own and folder.is_dir() else None


def step_tests_unused(task_dir: Path, step: str | None) -> str | None:
    """Why the step's own tests folder is not laid over tests/: it is a link out of the task, or
    a link to nothing (Harbor's ``Verifier._resolve_tests`` uploads it only when it ``exists()``)."""
    if step is None:
        return None
    folder, own = step_tests_folder(task_dir, step)
    parts = folder.relative_to(task_dir).parts
    prefixes = [task_dir.joinpath(*parts[:n]) for n in range(1, len(parts) + 1)]
    # A link to nothing (its folder moved away) was passed over without a word, where one out of the task is said.
    dangling = next((path for path in prefixes if path.is_symlink() and not path.exists()), None)
    if dangling is None and (own or not folder.is_dir()):
        return None
    # The link, as ``ls`` shows it: the first of steps, steps/NAME and steps/NAME/tests to nothing or out of
    # the task (naming the tests folder a link when it was steps made the user look at a plain folder).
    outside = (path for path in prefixes if not untrusted.kept_in_copy(path, task_dir))
    link = dangling if dangling is not None else next(outside, folder)
    shown = link.relative_to(task_dir).as_posix()
    what = "it" if link == folder else f"{'/'.join(parts)}, behind it,"
    if dangling is not None:
        return (
            f"{untrusted.not_there_words(dangling).replace(str(dangling), shown, 1)}: {what} is not laid over "
            "tests/ (Harbor uploads a step's tests only when they are there)"
        )
    try:
        target = os.readlink(link)
    except OSError:  # made a folder since (or never a link): where it leads
        target = os.path.realpath(link)
    return (
        f"{untrusted.link_words(shown, untrusted.harmless(target))}, out of the task: {what} is not laid over "
        "tests/ (links out of the task are not followed: a sandbox has nothing there); make it a folder of the "
        "task's own"
    )


def unfollowed_verifier_link(shown: str, link: Path) -> str:
    """What ``run`` and ``vendor`` say of a verifier.py that is a link (``shown`` its name), followed by
    neither: where it points, harmless (a line break in it, raw, began a line of its own in JUnit)."""
    words = untrusted.link_words(shown, untrusted.harmless(os.readlink(link)))
    return (
        f"{words}, and links are not followed "
        "(one may lead out of the task, where a sandbox has nothing): make it a file of the task's own"
    )
