"""Writing a task: ``new`` (a whole starter task) and ``vendor`` (the shim and
the runner placed in a task that exists).

A new task is what Harbor 0.26.0 loads and runs as it is, written with the
runner contract's files: ``tests/test.sh`` is the shim, ``tests/.ng/`` holds
this tool's runner (what NeMo Gym's publish step would place there), and
``cases/`` sits beside ``tests/`` (Harbor copies ``tests/`` into the sandbox,
so cases kept there would ship with the task).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from verifier_tui.engine import untrusted
from verifier_tui.engine.task.config import ORG_NAME
from verifier_tui.engine.task.kinds import TASK_FILES, looks_like_task, not_a_task_message, unfollowed_verifier_link
from verifier_tui.engine.task.target import find_harbor_folder, harbor_place
from verifier_tui.runner_source import runner_path, shim_path

if TYPE_CHECKING:
    from collections.abc import Callable

SHIM = "tests/test.sh"
RUNNER = "tests/.ng/run_verifier.py"
_EXECUTABLE = 0o755

# An organisation for a task whose author named none; to be changed before publishing.
DEFAULT_ORG = "local"

_TASK_TOML = """\
schema_version = "1.4"
# /app is collected after every trial (Harbor puts it in the trial's
# artifacts/app/), so `verifier-tui TRIAL` can replay the verifier on exactly
# what the agent left.
artifacts = ["/app"]

[task]
# org/name: the name Harbor publishes the task under.
name = "{name}"
description = "Write hello, world to /app/answer.txt."

[verifier]
# How long tests/test.sh (the runner, and so verify) may take.
timeout_sec = 60.0

[agent]
timeout_sec = 600.0

[environment]
build_timeout_sec = 600.0
"""

_INSTRUCTION = """\
Write the text `hello, world` to the file `/app/answer.txt`.
"""

_DOCKERFILE = """\
# The verifier runs in this image after the agent (Harbor's shared mode):
# tests/test.sh needs a Python 3.8 or newer on PATH.
FROM python:3.12-slim
# The agent starts here, and the verifier's `workspace` is this folder.
WORKDIR /app
"""

_SOLVE = """\
#!/bin/bash
# The reference solution: Harbor's oracle agent runs it, and the verifier must
# give it the full reward.
set -eu
printf 'hello, world\\n' > /app/answer.txt
"""

_VERIFIER = '''\
"""The task's verifier. Harbor runs tests/test.sh, which hands over to
tests/.ng/run_verifier.py; that runner imports this file and calls verify().

verify returns the reward: a number (written to reward.txt) or a dict of
numbers with a "reward" key (written to reward.json). An exception is no
reward at all (Harbor reports the trial as failed), so score what you can.
"""


def verify(workspace):
    # workspace: a pathlib.Path, the folder the agent worked in (the sandbox's /app).
    # Declare any of these too, by name, and the runner passes them:
    #   task_data: a dict of the task's fields (tests/task_data.json); {} when there is none.
    #   response:  a dict, the agent's final Responses API response. Only NeMo Gym's
    #              environment server passes it, never Harbor: give it a default.
    #   state:     {"workspace": the same Path}.
    answer = workspace / "answer.txt"
    if not answer.is_file():
        return 0.0
    return 1.0 if answer.read_text(encoding="utf-8").strip() == "hello, world" else 0.0
'''

_FILES: dict[str, str | None] = {
    "task.toml": _TASK_TOML,
    "instruction.md": _INSTRUCTION,
    "environment/Dockerfile": _DOCKERFILE,
    "solution/solve.sh": _SOLVE,
    "tests/verifier.py": _VERIFIER,
    # Each case is a workspace (the sandbox's /app) and the verdict it must get.
    "cases/correct/workspace/answer.txt": "hello, world\n",
    "cases/correct/expected.json": '{"rewards": {"reward": 1.0}}\n',
    "cases/wrong/workspace/answer.txt": "goodbye, world\n",
    "cases/wrong/expected.json": '{"rewards": {"reward": 0.0}}\n',
    # What an agent that did nothing leaves: a verifier that pays for it is caught from the start.
    "cases/empty/workspace/": None,
    "cases/empty/expected.json": '{"rewards": {"reward": 0.0}}\n',
}


class AuthoringError(Exception):
    """A task cannot be written or vendored here; the message is one line."""


def default_name(folder: Path) -> str:
    """``local/<folder name>``, with what Harbor's name pattern refuses made
    ``-`` (``..`` made ``.``), starting with a letter or digit as it wants."""
    import unicodedata

    # abspath, not resolve: the name the user typed (``new adder``, adder a link to
    # target-0, is local/adder); only ``.`` and ``..`` need the absolute path to have one.
    typed = os.path.basename(os.path.abspath(folder))
    ascii_name = unicodedata.normalize("NFKD", typed).encode("ascii", "ignore").decode()  # é: e
    short = re.sub(r"[^a-zA-Z0-9._-]+", "-", ascii_name)
    short = re.sub(r"^[^a-zA-Z0-9]+|[-.]+$", "", re.sub(r"\.\.+", ".", short)) or "task"
    return f"{DEFAULT_ORG}/{short}"


def new_task(folder: Path, name: str | None = None) -> None:
    """Write a starter task into ``folder`` (absent or empty). Refuses a
    folder that holds anything, one inside a task or one every command opens as
    a Harbor folder (a place in a trial), and a name Harbor would refuse."""
    climbed = _climbed_from_nothing(folder)
    if climbed is not None:
        raise AuthoringError(
            f"{folder} climbs out of {climbed} with '..', and {climbed} is not a folder: "
            "give the new task's folder by a path without it"
        )
    # realpath, not resolve: a loop of links on the way is said below as what it is, not raised (3.11)
    around = next((p for p in Path(os.path.realpath(folder)).parents if looks_like_task(p)), None)
    if around is not None:
        raise AuthoringError(
            f"{folder} is inside the task {around}: a new task goes in a folder of its own, outside any task "
            "(a case of that task is a folder of its cases/, with a workspace/ and an expected.json)"
        )
    harbor = _harbor_words(folder)
    if harbor is not None:  # its own `next: verifier-tui test PATH` would test the trial
        said, kind = harbor
        opened = "those jobs" if kind == "jobs" else f"that {kind}"
        raise AuthoringError(f"{said}: every command opens {opened}, not a task written in it; give a folder outside")
    name = name if name is not None else default_name(folder)
    # fullmatch: `$` alone matches before a final line break, which task.toml cannot hold in a string
    if not re.fullmatch(ORG_NAME, name) or ".." in name:
        raise AuthoringError(
            f"--name {name!r}: Harbor wants org/name (letters, digits, '.', '_' and '-', "
            "each part starting with a letter or digit)"
        )
    if folder.exists() or folder.is_symlink():
        if not folder.is_dir():
            raise AuthoringError(f"{_what_is(folder)}: new writes a task into a new or empty folder")
        try:
            holds = any(folder.iterdir())
        except OSError as exc:  # a folder it may write but not list (mode 333): a read failed, not a write
            raise AuthoringError(
                f"{folder} cannot be read ({exc.strerror or exc}): "
                "new writes a task only into a new folder or one it sees is empty"
            ) from None
        if holds:
            raise AuthoringError(f"{folder} is not empty: new writes a task only into a new or empty folder")
    made: list[Path] = []  # every file and folder this call created, in order
    try:
        _make_folders(folder, made)
        for rel, text in _FILES.items():
            target = folder / rel
            _make_folders(target if text is None else target.parent, made)
            if text is not None:
                _write(target, (text.format(name=name) if rel == "task.toml" else text).encode(), made=made)
        os.chmod(folder / "solution" / "solve.sh", _EXECUTABLE)
        for rel, source in ((SHIM, shim_path()), (RUNNER, runner_path())):
            _make_folders((folder / rel).parent, made)
            _place(folder / rel, source)
            made.append(folder / rel)
    except BaseException:
        # A full disk, Ctrl+C: a half task would be "not empty" to the next
        # `new` there, and `test` would find no case in it. Only what this call
        # made is taken back, last first: a file the user put in the folder
        # meanwhile stays, and so does each folder holding one.
        for path in reversed(made):
            with contextlib.suppress(OSError):
                if path.is_dir() and not path.is_symlink():
                    path.rmdir()  # refused while it holds a file of the user's
                else:
                    path.unlink()
        raise


def _climbed_from_nothing(folder: Path) -> Path | None:
    """The part of ``folder`` before a ``..`` that is no folder (``gone`` of
    ``gone/..``), or None. Such a path names nothing, so it is no folder that
    "is not empty"; yet each file written through it, once ``mkdir -p`` made
    ``gone``, lands in the folder above, among whatever the user keeps there."""
    parts = folder.parts
    for index, part in enumerate(parts[1:], 1):
        if part == ".." and not os.path.isdir(Path(*parts[:index])):
            return Path(*parts[:index])
    return None


def vendor(task: Path, say: Callable[[str], None]) -> None:
    """Place or refresh the shim and the runner in ``task``; ``say`` gets one
    sentence per file as it is done, so a failure on the second still leaves
    the first told (the task's own ``test.sh`` moved to ``.old``). A file of the task's own that differs is kept
    beside the new one (``<name>.old``); nothing else is touched. A link on
    the way to either (``tests``, ``tests/.ng``, the file) refuses it all."""
    if not task.is_dir() or not looks_like_task(task):
        raise AuthoringError(_not_a_task(task))
    for rel in (SHIM, RUNNER):
        # A task from elsewhere may link tests/.ng (or tests, or the file) out of
        # itself: writing there would write wherever it points. Refused before
        # anything is written.
        found = untrusted.look(task / rel, task)
        if isinstance(found, untrusted.Read) and found.state == "link":
            link = untrusted.link_words(found.path.relative_to(task).as_posix(), found.target or "?")
            raise AuthoringError(
                f"{link}: vendor writes nothing through a link, which may lead out of the task; "
                "make it a folder (or file) of the task's own and vendor again"
            )
        folder = (task / rel).parent
        if untrusted.present(folder) and not folder.is_dir():  # tests, or tests/.ng
            raise AuthoringError(f"{folder} is a file, not a folder: move it away and vendor again")
    for rel, source, what in (
        (SHIM, shim_path(), "the runner's shim"),
        (RUNNER, runner_path(), "verifier-tui's runner"),
    ):
        target = task / rel
        wanted = source.read_bytes()
        if target.exists():
            if _holds(target, wanted):
                say(f"{rel}: already {what}, left as it is")
                continue
            kept = _free_name(target)
            _place(target, source, keep=kept)
            # Harbor uploads tests/ whole (what .harborignore leaves), so the kept file ships with the task.
            say(
                f"{rel}: replaced by {what}; the task's own is kept as {kept.relative_to(task)} (Harbor publishes "
                "it with tests/: delete it, or list it in tests/.harborignore, before publishing)"
            )
        else:
            _place(target, source)
            say(f"{rel}: written ({what})")
    verifier = task / "tests" / "verifier.py"
    if verifier.is_symlink():  # looked through, a link to a folder was "a folder"; run follows none
        say(unfollowed_verifier_link("tests/verifier.py", verifier))
    elif not untrusted.present(verifier):
        say("tests/verifier.py does not exist yet: the shim runs it (write a def verify(workspace) there)")
    elif not verifier.is_file():  # a folder standing there does not "not exist": the author would find it
        said = _what_is(verifier, "tests/verifier.py")
        say(f"{said}: the shim runs it as the verifier (put a file with a def verify(workspace) in its place)")


def _holds(target: Path, wanted: bytes) -> bool:
    """Whether ``target`` is a file of exactly ``wanted``'s bytes (read only
    when it has their size). One the user cannot read is not known to: it is
    replaced and kept beside, as one that differs is (it said "cannot write" of it)."""
    try:
        return target.is_file() and target.stat().st_size == len(wanted) and target.read_bytes() == wanted
    except OSError:
        return False


def _not_a_task(path: Path) -> str:
    """Why ``path`` is not a folder vendor writes in, naming the task when it lies in one."""
    if not untrusted.present(path):
        return f"{path} does not exist: give the task folder ({TASK_FILES})"
    if not path.is_dir():
        return f"{_what_is(path)}: give the task folder ({TASK_FILES})"
    try:  # one the user may not read is no folder of nothing: that it holds no task file is not known
        os.scandir(path).close()
    except OSError as exc:
        return f"{path} cannot be read ({exc.strerror or exc})"
    around = path.parent if path.name == "tests" else path.parent.parent if path.parent.name == "cases" else None
    if around is not None and looks_like_task(around):
        return f"{path} is a {'tests/' if path.name == 'tests' else 'case'} folder: vendor its task, {around}"
    harbor = _harbor_words(path)
    if harbor is not None:
        said, kind = harbor
        return f"{said}, not a task: vendor {'the tasks its jobs ran' if kind == 'jobs' else 'the task it ran'}"
    return not_a_task_message(path, expected=f"expected a task folder ({TASK_FILES})")


def _harbor_words(path: Path) -> tuple[str, str] | None:
    """``PATH is a Harbor job folder`` (or ``is in the Harbor trial folder
    TRIAL``) and its kind, when every other command takes ``path`` for a
    Harbor folder (target.classify); None when it does not."""
    try:
        harbor = find_harbor_folder(path)
    except OSError:  # a folder above it that cannot be read: no Harbor folder known
        return None
    if harbor is None:
        return None
    kind, folder, _step = harbor
    return harbor_place(path, folder, kind), kind


def _what_is(path: Path, name: str | None = None) -> str:
    """``PATH is ...`` (``name`` for ``PATH``, when given), for what is there
    and is not what was wanted: a link to nothing or a FIFO is not "a file",
    and a link to nothing does not "exist"."""
    if not path.exists():
        return untrusted.not_there_words(path, name)
    mode = path.stat().st_mode
    return f"{name or path} is {'a file' if stat.S_ISREG(mode) else untrusted.kind(mode)}"


def _place(target: Path, source: Path, keep: Path | None = None) -> None:
    """``source``'s bytes at ``target``, whole or not at all, and what was
    there moved to ``keep``. Written under a hidden name beside it and renamed
    into place last: on a full disk the task's own file stays where it was
    (moved aside first, it left a cut copy in its place, which the next
    ``vendor`` kept as "the task's own")."""
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = target.with_name(f".{target.name}.{secrets.token_hex(4)}")
    kept = None
    try:
        _write(scratch, source.read_bytes(), named=target)
        if target.name == "test.sh":
            os.chmod(scratch, _EXECUTABLE)  # Harbor runs it as a program
        if keep is not None:
            os.replace(target, keep)
            kept = keep
        os.replace(scratch, target)
    except BaseException:
        if kept is not None:
            # Two renames: when the second fails, the first is undone, or
            # the task would be left with no file there at all (no shim).
            with contextlib.suppress(OSError):
                os.replace(kept, target)
        with contextlib.suppress(OSError):
            os.unlink(scratch)
        raise


def _write(path: Path, data: bytes, named: Path | None = None, made: list[Path] | None = None) -> None:
    """A new file (never through a link, never over a file), its errors
    naming it, or the file it is to become (``named``): a full disk's
    ``write`` names no file, and ``shutil.copyfile`` names its source.
    Once created, it is noted in ``made``, even if writing it then fails."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
        if made is not None:
            made.append(path)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, str(named or path)) from None


def _make_folders(folder: Path, made: list[Path]) -> None:
    """``mkdir -p folder``, each folder it creates noted in ``made``: one that
    appeared meanwhile (the user's) is not."""
    missing = []
    for path in (folder, *folder.parents):
        if os.path.lexists(path):
            break
        missing.append(path)
    for path in reversed(missing):
        with contextlib.suppress(FileExistsError):
            path.mkdir()
            made.append(path)


def _free_name(target: Path) -> Path:
    """``<name>.old``, or ``<name>.old.2`` and on when that is taken: an earlier keep is never overwritten."""
    kept = target.with_name(target.name + ".old")
    number = 2
    while kept.exists() or kept.is_symlink():
        kept = target.with_name(f"{target.name}.old.{number}")
        number += 1
    return kept
