"""What Harbor 0.26.0's ``Task`` refuses to load in a task's files, once task.toml's values are
taken (``harbor/models/task/task.py``: ``Task.__init__``, ``_validate_input_paths``,
``_validate_tests``; ``harbor/utils/path_safety.py``: ``validate_input_tree``; which verifier
image holds the tests: ``harbor/models/task/verifier_mode.py``), and the task's ``.gitignore``
that its digest reads (``harbor/publisher/packager.py``), which a job works out before it loads any.

A refusal is a task no trial of which gets a verdict: the tool still runs it (useful while
the task is being written) and says so on every face, as for a task.toml Harbor refuses.
Only a folder with a task.toml is a Harbor task here: without one the tool runs the verifier
it was given, with the defaults, and Harbor's refusals are not its business.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from verifier_tui.engine import untrusted
from verifier_tui.engine.record import replace
from verifier_tui.engine.task.config import PACKAGER, SEPARATE, files_unrefused, refused_for
from verifier_tui.engine.task.file_filter import HARBORIGNORE, TaskFileFilter
from verifier_tui.engine.task.harbor_text import GITIGNORE, IGNORE_FILE_LIMIT, read_as_harbor, read_gitignore
from verifier_tui.engine.task.ignore_rules import IgnoreRules
from verifier_tui.engine.task.rows import TASKS_FILE

if TYPE_CHECKING:
    from verifier_tui.engine.task.config import StepSettings, TaskConfig

NOT_FOUND = "FileNotFoundError"
INSTRUCTION = "instruction.md beside task.toml"
INVALID = "ValueError"
#: Links the check resolves, and folders it looks into, at most: past either (a web of links made
#: to stall it; Harbor, asking .harborignore of each route, walks such a web route by route) the
#: rest is not checked, and the task's notes say so, rather than refusing a task Harbor may load.
_MOST_LINKS = 100_000
_NOT_CHECKED = "not checked whether Harbor refuses the task's links"
_MOST_FOLDERS = 20_000
#: Folders a route may go down: each path's rules are asked along its whole route, so a chain of 200
#: nested folders cost 45 s on every face (Harbor takes longer still).
_DEEPEST = 40
#: Links one link's target may lead through: past it a chain is not followed further, as above.
_LONGEST_CHAIN = 200
#: Folders :meth:`_Walk.linked` gives at most: each is a watched root, compared with every other at
#: each change (3,000 took 27 s to list); past it, a link made in the rest is seen at the next save.
_MOST_LINKED = 100
#: What makes a folder the build context of a verifier image that holds the tests (verifier_mode.py).
_IMAGE_FILES = ("Dockerfile", "docker-compose.yaml")


def as_harbor_loads(config: TaskConfig, task_root: Path, *, verifying: bool = True) -> TaskConfig:
    """``config``, refused for the first reason Harbor's ``Task`` would raise loading the task
    at ``task_root``, in Harbor's order. A task.toml refused already is refused by pydantic first.
    ``verifying`` False: as ``Task(disable_verification=True)`` loads it, without ``_validate_tests``."""
    if config.refused is not None:
        return config
    root = task_root.resolve()  # Task resolves its folder: so do its paths
    file_filter = TaskFileFilter(root)
    walk = _Walk(root, file_filter)
    try:
        refusal: tuple[str, str | None] | None = _inputs_refused(config, walk)
        # watched for whether Harbor loads the task; not when the check gave up (a web of links, a folder
        # too big to check): a watch of them would cost as much, to tell nothing
        config = replace(config, linked=walk.linked())
    except _Unchecked as unchecked:
        refusal, config = None, _noted(config, str(unchecked))
    try:
        gitignore = _gitignore_refused(root)
    except _Unchecked as unchecked:
        gitignore, config = None, _noted(config, str(unchecked))
    if gitignore is not None:  # first: a job digests its tasks for lock.json before any trial loads one
        return refused_for(config, *gitignore, PACKAGER)
    refusal = (
        refusal
        or (_tests_refused(config, root, file_filter) if verifying else None)
        or _instruction_unread(config, root)
    )
    return refused_for(config, *refusal) if refusal is not None else config


def _noted(config: TaskConfig, note: str) -> TaskConfig:
    """``config`` with ``note`` among its problems, said once: a task is read again without the verifier too."""
    return config if note in config.problems else replace(config, problems=(*config.problems, note))


def as_loaded_without_verifier(config: TaskConfig, task_root: Path) -> TaskConfig:
    """``config`` as a trial whose job disabled the verifier loads the task: trial.py ``_load_task``
    builds ``Task(disable_verification=config.verifier.disable)``, which checks no test script (nor a
    step's folder or instruction). What only a run of the verifier is refused for is a note."""
    if not config.files_refused:
        return config
    loaded = as_harbor_loads(files_unrefused(config), task_root, verifying=False)
    if loaded.refused is not None:
        return loaded
    note = "Harbor loads this task only with the verifier disabled, as this job ran it; one that runs the verifier"
    return replace(loaded, problems=(f"{note} is refused: {config.refused}", *loaded.problems))


class _Unchecked(Exception):
    """Why something Harbor checks of a task (its links, its .gitignore) was not checked: said, never a refusal."""


def _inputs_refused(config: TaskConfig, walk: _Walk) -> tuple[str, str | None] | None:
    """``Task._validate_input_paths``, checked even with verification disabled: each step's
    folder, then tests/ and solution/, following the links in them, must stay inside the task and
    form no cycle, except what ``.harborignore`` leaves out. Only the words: the tool reads the
    user's files following their links as before (the run's view skips a link out of tests/)."""
    for top in [*(("steps", step.name) for step in config.steps), ("tests",), ("solution",)]:
        refusal = walk.refused(top)
        if refusal is not None:
            return refusal
    return None


class _Walk:
    """``validate_input_tree`` over a task's input folders, with a bound on its work: each link
    resolved once (:meth:`_real`), each real folder looked into once."""

    def __init__(self, task_root: Path, file_filter: TaskFileFilter) -> None:
        self.root, self.filter = task_root, file_filter
        self._real_of: dict[str, str | None] = {}  # a link's real place: where it leads (None: a loop)
        self._checked: dict[str, Path] = {}  # real folders walked already, by any route: the path first walked
        self._spared: set[str] = set()  # real folders of a route on which something was left out
        self._links = 0

    def linked(self) -> tuple[str, ...]:
        """The task's folders the walk entered through a link, outermost only, as paths in the
        task (the first :data:`_MOST_LINKED`): what Harbor checks there beside tests/, solution/
        and the steps' folders. Its own folder is left out: reached only by a cycle, refused for a
        link in a folder watched already."""
        outermost: list[Path] = []
        entered = (Path(real) for real, walked in self._checked.items() if walked != Path(real))
        for real in sorted(entered, key=lambda p: p.parts):
            if real != self.root and not (outermost and real.is_relative_to(outermost[-1])):
                outermost.append(real)
        return tuple(p.relative_to(self.root).as_posix() for p in outermost[:_MOST_LINKED])

    def refused(self, top: tuple[str, ...]) -> tuple[str, str | None] | None:
        """``validate_input_tree(task_root / *top)``: the first thing in it Harbor refuses, and why.
        Harbor asks ``.harborignore`` of each path first and skips the ones it leaves out; asked
        here of each folder before it is entered, and of a path about to be refused with its route."""
        real: str | None = str(self.root)
        for part in top:
            real = self._real(real, part) if real is not None else None
        on_path: set[str] = set()  # the real folders of the route, Harbor's ancestors
        route: list[tuple[Path, str]] = []
        # (a path, its real place, whether it is a folder: None to ask the kernel) or a folder's end
        stack: list[tuple[Path, str | None, bool | None] | None] = [(self.root.joinpath(*top), real, None)]
        while stack:
            item = stack.pop()
            if item is None:
                self._leave(route, on_path)
                continue
            candidate, real, is_dir = item
            if is_dir is None:  # Path.is_dir follows the route's links as the kernel does (ELOOP past 40)
                is_dir = real is not None and os.path.isdir(candidate)
            why = self._why(candidate, real, is_dir and real in on_path)
            if why is not None:
                if not self._spare(route, candidate):
                    return why, INVALID
                continue
            if not is_dir or real is None or self._passed_by(route, candidate, real):
                continue
            self._checked.setdefault(real, candidate)
            if len(self._checked) > _MOST_FOLDERS:
                raise _Unchecked(f"{_NOT_CHECKED}: more than {_MOST_FOLDERS:,} folders")
            try:
                with os.scandir(candidate) as scan:
                    listed = [(e.name, e.is_symlink(), e.is_dir(follow_symlinks=False)) for e in scan]
            except OSError:
                continue
            refusal = self._rules_refused(candidate, real, [name for name, _, _ in listed])
            if refusal is not None and not self._spare([*route, (candidate, real)], candidate):
                return refusal
            linked = candidate != Path(real)
            on_path.add(real)
            route.append((candidate, real))
            if len(route) > _DEEPEST:
                raise _Unchecked(f"{_NOT_CHECKED}: folders more than {_DEEPEST} deep")
            stack.append(None)
            for name, link, folder in sorted(listed, reverse=True):
                if link:
                    stack.append((candidate / name, self._real(real, name), None))
                elif folder:  # a plain file in a folder of the task lies in the task
                    stack.append((candidate / name, os.path.join(real, name), None if linked else True))
        return None

    def _spare(self, route: list[tuple[Path, str]], candidate: Path, *, whole: bool = True) -> bool:
        """Whether ``.harborignore`` leaves out ``candidate`` or (``whole``) a path of ``route`` to it.
        If so, the route's folders are marked: another route to them, where the rules differ, may
        reach what was left out on this one."""
        if not self._left_out([*(p for p, _ in route if whole), candidate]):
            return False
        self._spared.update(real for _, real in route)
        return True

    def _passed_by(self, route: list[tuple[Path, str]], candidate: Path, real: str) -> bool:
        """Whether the folder ``candidate`` is not to be walked: left out (Harbor asks .harborignore
        first and never looks past a path it leaves out; the route to it was asked on the way), or
        walked already. Reached again where part of it was left out, this route, where other rules
        apply, might reach what the first left out; walking every route, as Harbor does, can take
        minutes: not checked."""
        if real in self._checked and real not in self._spared:
            return True
        if self._spare(route, candidate, whole=False):
            return True
        if real in self._checked:
            shown = untrusted.harmless(candidate.relative_to(self.root).as_posix())
            raise _Unchecked(f"{_NOT_CHECKED}: {shown} reaches a folder part of which was left out")
        return False

    def _leave(self, route: list[tuple[Path, str]], on_path: set[str]) -> None:
        """The walk of the route's last folder is over."""
        on_path.discard(route.pop()[1])

    def _why(self, candidate: Path, real: str | None, cycle: bool) -> str | None:
        """Why Harbor refuses ``candidate``, leading to ``real``: out of the task, or a folder link
        back to a folder it lies in. A loop of links (``real`` None) is no refusal:
        ``Path.resolve`` raises on it on Python 3.12 (Harbor's oldest) and not on 3.13, so whether
        Harbor loads the task depends on the Python it runs on; the run's staging says both."""
        # harmless: a line break in a name, raw, began a line of its own in test's JUnit report
        shown = untrusted.harmless(candidate.relative_to(self.root).as_posix())
        if real is not None and not Path(real).is_relative_to(self.root):
            try:
                target = os.readlink(candidate)
            except OSError:  # no link (a folder below one), or one gone since
                target = real
            target = untrusted.harmless(target)
            return f"{shown} leads out of the task, to {target} (Input paths must stay within the task)"
        if cycle:
            return f"{shown} is a link back to a folder it lies in (Input directory links must not form cycles)"
        return None

    def _left_out(self, route: list[Path]) -> bool:
        """Whether ``.harborignore`` leaves out a path of ``route`` (Harbor then never gets past it);
        unknown rules (a file past what the tool reads) make the refusal unknown: said, not made."""
        # the rules asked for these paths (their folders', and those of where a link leads, as
        # Harbor's is_excluded asks): only those, if too big to read, make the refusal unknown
        # (asked whether left out or not: rules too big to read below the rule that leaves a path out
        # may let it back in)
        consulted: set[Path] = set()
        self.filter.consulted = consulted
        try:
            left_out = any(self.filter.excludes(path) for path in route)
        finally:
            self.filter.consulted = None
        unknown = consulted & self.filter.unknown
        if unknown:
            big = ", ".join(sorted(f"{p.relative_to(self.root).as_posix()}/{HARBORIGNORE}" for p in unknown))
            raise _Unchecked(f"{_NOT_CHECKED}: {big} is larger than the {IGNORE_FILE_LIMIT:,} bytes this tool reads")
        return left_out

    def _real(self, folder: str, name: str, chain: int = 0) -> str | None:
        """Where ``folder/name`` leads (``folder`` a real path, free of links), as Harbor's
        ``Path.resolve()`` (``os.path.realpath``, not strict) finds it: a link to nothing is taken
        where it points, ``..`` after it lexically. Each link is read once; None for a loop."""
        if name in ("", "."):
            return folder
        if name == "..":
            return os.path.dirname(folder)
        path = os.path.join(folder, name)
        if path in self._real_of:
            return self._real_of[path]  # None too while it is being resolved: a loop
        try:
            target = os.readlink(path)
        except OSError:  # no link: a file, a folder or nothing, where it is
            return path
        self._links += 1
        if self._links > _MOST_LINKS or chain > _LONGEST_CHAIN:
            raise _Unchecked(f"{_NOT_CHECKED}: more than {_MOST_LINKS:,} links, or a chain of {_LONGEST_CHAIN}")
        self._real_of[path] = None
        here: str | None = "/" if target.startswith("/") else folder
        for part in target.split("/"):
            here = self._real(here, part, chain + 1) if here is not None else None
        self._real_of[path] = here
        return here

    def _rules_refused(self, folder: Path, real: str, names: list[str]) -> tuple[str, str | None] | None:
        """``TaskFileFilter.ignore_rules``: the ``.harborignore`` of a folder Harbor reads rules in,
        read as soon as a path in the folder but itself is checked, must lie in the task, be a
        regular file, be read by ``read_text()`` (readable, UTF-8 text) and hold patterns ``pathspec``
        reads, in that order."""
        if HARBORIGNORE not in names or len(names) < 2 or not self.filter.reads_rules(folder):
            return None
        rules = folder / HARBORIGNORE
        why = self._why(rules, self._real(real, HARBORIGNORE), cycle=False)
        if why is not None:
            return why, INVALID
        shown = rules.relative_to(self.root).as_posix()
        if not os.path.isfile(rules):  # never raising: a folder listed but not entered (no x bit)
            return f"{shown} is not a regular file (Ignore rules must be a regular file)", INVALID
        unread = self.filter.read_refusal(folder)  # as Harbor's read_text() raises: PermissionError, ...
        if unread is not None:
            return unread
        refused = self.filter.refused_in(folder)
        if refused is not None:
            return _pattern_refused(shown, refused)
        return None


def _gitignore_refused(task_root: Path) -> tuple[str, str | None] | None:
    """``Packager.collect_files``, which Harbor runs for the task's digest as it builds a job's
    (and a trial's) ``lock.json`` (``lock.py`` ``_build_lock_trial_task``), verifier disabled or
    not: the task's ``.gitignore``, if ``exists()``, read with ``read_text()`` and handed to
    ``pathspec.PathSpec.from_lines("gitignore", ...)``, which raise before any trial runs. One past
    what the tool reads, Harbor reads whole: whether it can is said to be unknown (:class:`_Unchecked`)."""
    found = read_gitignore(task_root)
    if found.too_big:
        raise _Unchecked(
            f"not checked whether Harbor can read the task's {GITIGNORE}: it is larger than the"
            f" {IGNORE_FILE_LIMIT:,} bytes this tool reads (Harbor reads it whole)"
        )
    if found.text is None:
        return found.refusal
    refused = IgnoreRules(found.text.splitlines()).refused
    return _pattern_refused(GITIGNORE, refused) if refused is not None else None


def _pattern_refused(shown: str, refused: tuple[str, str]) -> tuple[str, str]:
    """An ignore file's line ``pathspec`` raises on (the line, the exception), as a refusal."""
    return f"{shown} has a pattern Harbor cannot read: {untrusted.harmless(refused[0])}", refused[1]


def _tests_refused(config: TaskConfig, task_root: Path, file_filter: TaskFileFilter) -> tuple[str, str] | None:
    """``_validate_tests``: why, and the exception Harbor raises."""
    if not config.steps:
        why = _instruction_refused(task_root)
        if why is not None:
            return why, NOT_FOUND
        return _script_refused(config, task_root, None, file_filter)
    for step in config.steps:
        why = _step_refused(step, task_root)
        if why is not None:
            return why, NOT_FOUND
        refusal = _script_refused(config, task_root, step, file_filter)
        if refusal is not None:
            return refusal
    return None


def _instruction_refused(task_root: Path) -> str | None:
    """``_validate_tests``'s ``instruction_path.exists()``. A parameterized template (tasks.jsonl)
    is not what Harbor loads: NeMo Gym renders each row into a task folder of its own, with its
    instruction."""
    if (task_root / "instruction.md").exists() or (task_root / TASKS_FILE).exists():
        return None
    return "no instruction.md beside task.toml (Task directory is missing instruction.md)"


def _instruction_unread(config: TaskConfig, task_root: Path) -> tuple[str, str | None] | None:
    """``Task.__init__``'s ``instruction_path.read_text()``, last, verification disabled or not: it
    raises for none (FileNotFoundError), for a folder, which ``exists()`` passes (IsADirectoryError),
    for a file that is not UTF-8 text or cannot be read, and waits for ever on a FIFO (:func:`read_as_harbor`).
    A task of steps reads none there: each step's is read as its agent starts (``step_instruction``),
    whose failure Harbor's error policy still grades."""
    if config.steps:
        return None
    why = _instruction_refused(task_root)
    if why is not None:
        return why, NOT_FOUND
    if (task_root / TASKS_FILE).exists():
        return None
    # one too big to read here is not judged (never a refusal the tool cannot show)
    return read_as_harbor(task_root / "instruction.md", untrusted.SCRIPT_LIMIT, INSTRUCTION).refusal


def _step_refused(step: StepSettings, task_root: Path) -> str | None:
    """A step with no folder, or no ``instruction.md`` in it (``Step directory not found``, ``Step
    instruction not found``) fails every step's trial: a step renamed in task.toml alone, say."""
    folder = task_root / "steps" / step.name
    if not folder.exists():
        return f"[[steps]] {step.name!r} has no folder steps/{step.name}/ (Step directory not found)"
    if not (folder / "instruction.md").exists():
        return f"[[steps]] {step.name!r} has no steps/{step.name}/instruction.md (Step instruction not found)"
    return None


def _script_refused(
    config: TaskConfig, task_root: Path, step: StepSettings | None, file_filter: TaskFileFilter
) -> tuple[str, str] | None:
    """The test script Harbor runs for the task (or ``step``: its own ``steps/NAME/tests/``
    one, else the shared one) missing, or left out by ``.harborignore``
    (``TaskFileFilter.require_included``). None too when the verifier's own image holds the tests."""
    verifier_os = _verifier_os(config, task_root, step)
    if verifier_os is None:
        return None
    name = "test.bat" if verifier_os == "windows" else "test.sh"
    shared = task_root / "tests" / name
    own = task_root / "steps" / step.name / "tests" / name if step is not None else None
    found = next((p for p in (own, shared) if p is not None and p.exists()), None)  # discover_script
    if found is None:
        where = (
            f"step {step.name!r} has no steps/{step.name}/tests/{name} or tests/{name}" if step else f"no tests/{name}"
        )
        return f"{where}, the test script Harbor runs on {verifier_os}", NOT_FOUND
    if file_filter.excludes(found):
        shown = found.relative_to(task_root).as_posix()
        return f"{shown} is excluded by {HARBORIGNORE} (Required task input is excluded)", INVALID
    return None


def _verifier_os(config: TaskConfig, task_root: Path, step: StepSettings | None) -> str | None:
    """``resolve_verifier_environment_definition``: the OS the verifier runs on, whose script
    Harbor asks for; None when it runs in a separate image that holds the tests (the step's
    ``[steps.verifier.environment] docker_image`` or an image built from its tests folder, else
    the task's), which needs no script of the task's."""
    if config.verifier_mode(step.name if step else None) != SEPARATE:
        return config.os
    candidates = [(step.verifier, task_root / "steps" / step.name / "tests")] if step is not None else []
    candidates.append((config.verifier, task_root / "tests"))
    for verifier, tests in candidates:
        if verifier.environment_image or any((tests / name).is_file() for name in _IMAGE_FILES):
            return None
    # resolve_effective_verifier_env_config: the step's environment, else the task's, else [environment]
    own = next((v for v, _ in candidates if v.environment_env is not None), None)
    return (own.environment_os if own is not None else None) or config.os
