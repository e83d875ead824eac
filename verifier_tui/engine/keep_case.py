"""A run kept as a case: ``--save-case NAME`` (and the TUI's key) copies the
run's workspace, response and task data into ``<task>/cases/NAME/`` and
writes ``expected.json`` from the run's verdict, so the way the agent's work
went wrong this time is checked by ``test`` from now on.

The case is written whole or not at all: into a hidden folder beside the
other cases (which case discovery skips), renamed into place last. The
workspace is copied as a run stages it (:class:`~.sandbox.mirror.Mirror`):
never through a link, FIFOs and sockets left out and named. A name that is
taken is refused before anything is written or run.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from verifier_tui.engine.filters import NOISE_DIRS
from verifier_tui.engine.procfs import shell_word
from verifier_tui.engine.record import record

if TYPE_CHECKING:
    from verifier_tui.engine.model import RunResult
    from verifier_tui.engine.task.discovery import Task


class CaseNameError(ValueError):
    """The name cannot be a new case of this task; the message says why, in one line."""


@record(frozen=True)
class Kept:
    """A case written: its folder, what it holds, what was left out and why."""

    folder: Path
    files: tuple[str, ...]  # what was written beside workspace/, in words (expected.json with its content)
    notes: tuple[str, ...] = ()


#: The longest folder name of the file systems Linux uses (NAME_MAX).
_NAME_MAX = 255


def case_folder(task_root: Path, name: str, workspace: Path | None = None) -> Path:
    """``cases/NAME`` of the task, checked free for a new case (nothing written);
    ``workspace``: the run's, which the case copies."""
    # isprintable: no line break or bidi control, which would forge a row of test's table
    if not name or name.startswith(".") or "/" in name or not name.isprintable() or name != name.strip():
        raise CaseNameError(
            f"--save-case {name!r}: a case name is one folder name of printable characters, not starting with '.'"
        )
    if name in NOISE_DIRS:
        # One rule for a saved case: test would find cases/__pycache__, but the file watcher skips
        # whatever lies under a folder of that name, so no edit to the case would start a run in
        # watch or the TUI. Refused rather than skipped by discovery too, which would hide a case
        # someone already has. (Names starting with '.' are refused above; case discovery skips those.)
        raise CaseNameError(
            f"--save-case {name!r}: watch and the TUI skip folders named {name}, so no edit to the case "
            "would run it: choose another name"
        )
    if "::" in name:  # a case's id is <task>::<case>: test and the plugin could not tell it apart
        raise CaseNameError(f"--save-case {name!r}: a case name cannot hold '::' (test names cases TASK::CASE)")
    if len(os.fsencode(name)) > _NAME_MAX:
        raise CaseNameError(f"--save-case {name[:40]!r}...: a folder name holds at most {_NAME_MAX} bytes")
    cases = task_root / "cases"
    if cases.is_symlink() or (os.path.lexists(cases) and not cases.is_dir()):
        raise CaseNameError(f"{cases} is not a folder of the task's own: no case is written through it")
    if workspace is not None and Path(os.path.realpath(cases)).is_relative_to(os.path.realpath(workspace)):
        # the copy would walk into the case it is being written to, level after level
        raise CaseNameError(
            f"--save-case: the run's workspace, {workspace}, holds the task's cases folder, where the case would "
            "be copied into itself: give a workspace outside it"
        )
    folder = cases / name
    if os.path.lexists(folder):
        raise CaseNameError(f"the task already has a case {name} ({folder}): choose another name; nothing was written")
    return folder


def refusal(task_root: Path, name: str | None, workspace: Path | None = None) -> str | None:
    """Why ``--save-case NAME`` cannot be kept in this task (asked before the run), or None."""
    if name is None:
        return None
    try:
        folder = case_folder(task_root, name, workspace)
    except CaseNameError as exc:
        return str(exc)
    # Where the save makes its folder (cases/, or the task folder that has none yet): a read-only one
    # would be met only after the whole run. Asked of the effective user, whose writes the save makes.
    where = folder.parent if os.path.lexists(folder.parent) else task_root
    if not os.access(where, os.W_OK | os.X_OK, effective_ids=os.access in os.supports_effective_ids):
        why = "a read-only file system" if os.statvfs(where).f_flag & os.ST_RDONLY else "permission denied"
        return f"--save-case {name}: {where} cannot be written ({why}): no case can be kept there"
    return None


def save(result: RunResult, task: Task, name: str) -> dict[str, Any]:
    """The run kept as the task's case ``name``, said as ``--json``'s ``saved_case``:
    the folder and what it holds, or the problem that kept anything from being written."""
    from verifier_tui.engine.task.cases import default_task_data
    from verifier_tui.engine.task.steps import step_task_data

    step = result.inputs.step  # the run's own: the session's may have changed since (S, task.toml dropping it)
    found = default_task_data(task.root, task.tests_dir)
    # Under a step, the step's own tests/task_data.json is the task-wide one (/tests/task_data.json, as
    # Harbor uploads it): left to be found, not frozen into the case, as tests/'s is.
    shared = tuple(dict.fromkeys(p for p in (found, step_task_data(task, step, found)) if p is not None))
    try:
        kept = keep_case(result, task.root, name, shared)
    except (CaseNameError, OSError) as exc:
        why = str(exc)
        if isinstance(exc, OSError) and exc.strerror:  # in words, never "[Errno 28] ..."
            why = f"{exc.filename}: {exc.strerror}" if exc.filename else f"{exc.strerror} in {task.root / 'cases'}"
        return {"folder": None, "files": [], "notes": [], "problem": f"the run was not kept as case {name}: {why}"}
    notes = list(kept.notes)
    if step is not None:
        # A case's files have no place for a step (expected.json takes rewards, tolerance or exit_code,
        # and a case runs as the command that checks it says): its expected.json is the step's verdict,
        # which test checks only under the same --step; without it, test runs tests/ with [verifier].
        notes.append(
            "the case records no step: verifier-tui test checks it as this run did only with "
            f"--step {shell_word(step)} (without it, tests/ with the task's [verifier])"
        )
    return {"folder": str(kept.folder), "files": list(kept.files), "notes": notes, "problem": None}


def expected_of(result: RunResult) -> dict[str, Any] | None:
    """What ``expected.json`` says of this run: its rewards; else the runner's
    exit code (1, 2, a verifier's own); None where neither can be checked
    (a timeout, a signal, exit 0 without a reward Harbor could score)."""
    if result.verdict.rewards is not None:
        return {"rewards": result.verdict.rewards}
    if result.exit_code not in (None, 0):
        return {"exit_code": result.exit_code}
    return None


def keep_case(result: RunResult, task_root: Path, name: str, shared_task_data: tuple[Path, ...] = ()) -> Kept:
    """``result``'s inputs as the case ``name`` of the task at ``task_root``.

    ``shared_task_data``: the task-wide task data files; a run that used one
    leaves it out, so the case goes on following it as every other case does."""
    workspace = result.inputs.workspace
    folder = case_folder(task_root, name, workspace)
    made_cases = not os.path.lexists(folder.parent)
    folder.parent.mkdir(exist_ok=True)
    try:
        scratch = Path(tempfile.mkdtemp(prefix=".saving-", dir=folder.parent))  # not named after it: any name fits
    except OSError as exc:  # named after cases/: the hidden name it tried is none the user knows
        raise OSError(exc.errno, exc.strerror, str(folder.parent)) from None
    try:
        files, notes = _fill(scratch, result, task_root, shared_task_data)
        # Asked after the copy, not before it: the copy of a folder gone (or replaced) meanwhile reads
        # nothing and fails nothing, and an empty workspace beside the run's verdict is no case of that run.
        if workspace is not None and not workspace.is_dir():
            raise CaseNameError(
                f"the run's workspace, {workspace}, is no longer a folder: a case of it would hold none of the "
                "files the run's verdict came from"
            )
        os.chmod(scratch, folder.parent.stat().st_mode & 0o777)  # mkdtemp's 0700 would hide it from others
        try:
            os.rename(scratch, folder)  # fails on a case made meanwhile: never written over
        except OSError:
            # a case of that name made while this one was copied (another k, another
            # --save-case): said as a taken name is, not as the rename's bare "File exists"
            case_folder(task_root, name, result.inputs.workspace)
            raise
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        if made_cases:
            with contextlib.suppress(OSError):  # left if another save put a case there meanwhile
                folder.parent.rmdir()
        raise
    return Kept(folder, tuple(files), tuple(notes))


def _fill(
    target: Path, result: RunResult, task_root: Path, shared_task_data: tuple[Path, ...]
) -> tuple[list[str], list[str]]:
    from verifier_tui.engine.sandbox.file_copy import copy_file
    from verifier_tui.engine.sandbox.mirror import Mirror
    from verifier_tui.engine.task.rows import TASKS_FILE, staged_row_text

    ran = result.inputs
    files: list[str] = ["workspace/"]
    notes: list[str] = []
    workspace = target / "workspace"
    if ran.workspace is not None:  # (no longer a folder by its end: keep_case refuses the case)
        mirror = Mirror(ran.workspace, workspace, verbatim_links=True)
        try:
            mirror.sync()
        finally:
            mirror.close()
        notes += mirror.notes
        if mirror.failed:
            rel, exc = mirror.failed[0]
            raise OSError(f"could not copy {rel} of {ran.workspace} into {target.parent}: {exc.strerror or exc}")
    else:
        workspace.mkdir()  # no workspace was chosen: the run had a scratch one
        notes.append("the run's workspace was an empty scratch folder: the case's is empty too")
    response = ran.response
    if response is not None:
        kept = f"response.{'json' if response.kind == 'json' else 'txt'}"
        if response.path is not None:
            copy_file(str(response.path), str(target / kept), replace=False)
        else:
            (target / kept).write_text(response.text or "", encoding="utf-8")
        files.append(kept)
    own_rows = ran.task_data is not None and os.path.realpath(ran.task_data) == os.path.realpath(task_root / TASKS_FILE)
    if ran.task_id is not None and own_rows:
        (target / "task_id.txt").write_text(ran.task_id + "\n", encoding="utf-8")
        files.append(f"task_id.txt ({ran.task_id})")
    elif ran.task_id is not None and ran.task_data is not None:
        # A case's task_id.txt names a row of the task's own tasks.jsonl: a row of
        # another file is kept as what the verifier got, the row's task data.
        text, problem = staged_row_text(ran.task_data, ran.task_id)
        if text is None:
            raise OSError(problem)
        (target / "task_data.json").write_text(text + "\n", encoding="utf-8")
        files.append("task_data.json")
    elif ran.task_data is not None and ran.task_data not in shared_task_data:
        copy_file(str(ran.task_data), str(target / "task_data.json"), replace=False)
        files.append("task_data.json")
    expected = expected_of(result)
    if expected is None:
        notes.append(
            f"no expected.json: the run ended without a reward or an exit code to check ({result.outcome_words})"
        )
    else:
        text = json.dumps(expected)
        (target / "expected.json").write_text(text + "\n", encoding="utf-8")
        files.append(f"expected.json {text}")
    return files, notes
