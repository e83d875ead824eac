"""Cases on disk: ``<task>/cases/<name>/`` with a workspace, an optional
response and task data, and an optional expected verdict (the README's "Tasks and
cases" shows the layout). In a parameterized task (``tasks.jsonl``) a case's
task data may be one of its rows (:mod:`verifier_tui.engine.task.rows`)."""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from verifier_tui.engine import untrusted
from verifier_tui.engine.advice import Advice
from verifier_tui.engine.model import Expectation, ResponseSource, reward_float
from verifier_tui.engine.record import field, record
from verifier_tui.engine.task.rows import CASE_TASK_ID_FILE, TaskRows, case_task_id, leads_out, no_such_row, outside
from verifier_tui.engine.verdict import clip

EXPECTED_LIMIT = untrusted.MB  # an expected.json is a few lines

if TYPE_CHECKING:
    from typing import Any


@record(frozen=True)
class Case:
    """One input to a verifier, as found on disk. ``problems`` name anything
    malformed (an unreadable expected.json, a response in two forms); the case is
    still usable for everything that is well-formed."""

    name: str
    folder: Path
    workspace: Path | None
    response: ResponseSource | None
    task_data: Path | None  # a JSON file, or the tasks.jsonl that holds the row ``task_id``
    expected: Expectation | None
    problems: tuple[str, ...] = field(default_factory=tuple)
    task_id: str | None = None  # the row of a parameterized task's tasks.jsonl this case uses
    names_no_row: str | None = None  # the one of ``problems`` that says so: true only of the case's own task data
    expected_problem: str | None = None
    """Why its expected.json, there, cannot be used (one of ``problems``);
    None when it can, or there is none (the case is then not judged)."""
    unreadable: str | None = None
    """Why the case folder itself cannot be read (mode 000): then nothing
    of it is known, and no run of it is made (``test`` says it not run)."""


def is_case_folder(entry: Path | os.DirEntry[str]) -> bool:
    """Whether an entry of a task's ``cases/`` folder is a case: a folder (or a
    link to one) whose name does not start with a dot (``.draft``, ``.git``: a
    tool's or the user's own, never run). The one rule wherever cases are
    counted or looked for (:func:`find_cases`, ``suite``), so a task is not
    said to have a case that no run would find. May raise OSError."""
    return not entry.name.startswith(".") and entry.is_dir()


def case_order(name: str) -> tuple[tuple[str | tuple[int, str], ...], str]:
    """Where a case named ``name`` is listed, on every face (``test``'s table
    and ``--json``, the pytest plugin, the TUI's list and chooser): as a user
    counts, not as text sorts: c1, c2, c10 (a run of digits is its number),
    a before B (letters without regard to case), the name itself breaking
    ties (c01 and c1). Split on digit runs, text and numbers alternate, so
    two keys compare part by part of one kind."""
    parts = re.split(r"([0-9]+)", name)
    return tuple((int(p), p) if i % 2 else p.casefold() for i, p in enumerate(parts)), name


def cases_unread(folder: Path, exc: OSError) -> str:
    """Why a task's ``cases/`` (or one case folder), there, cannot be read, as every face says it."""
    return f"{folder} cannot be read ({exc.strerror or exc})"


def find_cases(
    task_root: Path, tests_dir: Path | None = None, rows: TaskRows | None = None, unread: list[str] | None = None
) -> list[Case]:
    """Every case folder under ``<task_root>/cases`` (:func:`is_case_folder`), in :func:`case_order`.
    A ``cases/`` that cannot be listed (mode 000) has none; why is added to ``unread``."""
    folder = task_root / "cases"
    if not folder.is_dir():
        return []
    away = outside(folder, task_root)
    if away is not None:  # each folder out there was listed as a case: the names of whatever the user keeps
        if unread is not None:
            unread.append(f"{away}: not followed")
        return []
    fallbacks = [task_root / "task_data.json"]
    if tests_dir is not None:
        fallbacks.append(tests_dir / "task_data.json")
    cases = []
    try:
        entries = sorted((p for p in folder.iterdir() if is_case_folder(p)), key=lambda p: case_order(p.name))
    except OSError as exc:
        if unread is not None:
            unread.append(cases_unread(folder, exc))
        return []
    for entry in entries:
        try:
            cases.append(load_case(entry, fallbacks, rows))
        except OSError as exc:
            # One case folder that cannot be read (mode 000) is that case's problem: it ended the whole run
            # (every task's, the report unwritten). It is a case not run, saying why, as an unusable
            # expected.json is; the others run.
            why = cases_unread(entry, exc)
            cases.append(Case(entry.name, entry, None, None, None, None, (why,), expected_problem=why, unreadable=why))
    return cases


def defines_a_case(cases_folder: Path, path: Path) -> bool:
    """Whether a change to ``path`` may change what :func:`find_cases` reads:
    a case folder itself, its workspace folder appearing or going, or a file
    beside it (expected.json, the response, task_data.json, task_id.txt).
    What lies inside a case's workspace is that case's input, not its definition."""
    if not (path == cases_folder or path.is_relative_to(cases_folder)):
        return False
    parts = path.relative_to(cases_folder).parts
    return len(parts) <= 2 or parts[1] != "workspace"


def default_task_data(task_root: Path, tests_dir: Path | None, problems: list[str] | None = None) -> Path | None:
    """The task-wide task data: ``task_data.json`` at the task root, else in
    tests/; not one that leads out of the task (said in ``problems``)."""
    for candidate in (task_root / "task_data.json", (tests_dir / "task_data.json") if tests_dir else None):
        if candidate is not None and untrusted.present(candidate):  # a FIFO too: the run then says what it is
            return _inside(candidate, task_root, "--task-data FILE", [] if problems is None else problems)
    return None


def load_case(folder: Path, task_data_fallbacks: Any = (), rows: TaskRows | None = None) -> Case:
    """One case folder. Its task data: its own ``task_data.json``; in a
    parameterized task the row its ``task_id.txt`` names, else the row named
    like the folder; else the task's (``task_data_fallbacks``)."""
    problems: list[str] = []
    workspace = folder / "workspace"
    json_response = folder / "response.json"
    text_response = folder / "response.txt"
    response: ResponseSource | None = None
    # Present, not is_file(): a response that is a FIFO or a folder is the
    # case's response all the same, and the run refuses it in words.
    if untrusted.present(json_response):
        response = ResponseSource(json_response, "json")
        if untrusted.present(text_response):
            problems.append("both response.json and response.txt exist; using response.json")
    elif untrusted.present(text_response):
        response = ResponseSource(text_response, "text")
    own_data = folder / "task_data.json"
    task_data: Path | None = own_data if untrusted.present(own_data) else None
    task_id: str | None = None
    names_no_row: str | None = None
    if task_data is None:
        named = case_task_id(folder)
        if rows is not None and named is not None:
            if rows.row(named) is not None:
                task_id = named
            else:
                problems.append(f"its {CASE_TASK_ID_FILE} names a row that is not there: {no_such_row(rows, named)}")
        elif named is not None:
            problems.append(f"its {CASE_TASK_ID_FILE} names a row, but the task has no tasks.jsonl")
        elif rows is not None and rows.row(folder.name) is not None:
            task_id = folder.name
        if task_id is not None and rows is not None:
            task_data = rows.path
        else:
            task_data = next((p for p in task_data_fallbacks if untrusted.present(p)), None)
        if task_data is None and rows is not None and rows.rows and not problems:
            names_no_row = (
                f"no task data: the task is parameterized ({rows.path.name}, {len(rows.rows)} rows) but the case "
                f"names no row, so verify gets task_data = {{}}; put the row's task_id in the case's "
                f"{CASE_TASK_ID_FILE}, or name the case folder after it"
            )
            problems.append(names_no_row)
    # A case's files are the task's own: one that leads out of the task (a
    # link to ~/.ssh, to /proc/self/environ) is not read for a run, whose
    # verifier could send it anywhere. The user may still give it by name.
    root = folder.parent.parent if folder.parent.name == "cases" else folder
    away = outside(folder / "expected.json", root)
    expected, problem = (
        (None, f"{away}: not read; the case has no expectation") if away else read_expected(folder / "expected.json")
    )
    if problem:
        problems.append(problem)
    if response is not None and _inside(response.path, root, "--response FILE", problems) is None:
        response = None
    if task_id is None:
        task_data = _inside(task_data, root, "--task-data FILE", problems)
    kept = _workspace(workspace, root, problems)
    return Case(
        name=folder.name,
        folder=folder,
        workspace=kept,
        response=response,
        task_data=task_data,
        expected=expected,
        problems=tuple(problems),
        task_id=task_id,
        names_no_row=names_no_row,
        expected_problem=problem,
    )


_KEYS = ("rewards", "exit_code", "tolerance")


def read_expected(path: Path) -> tuple[Expectation | None, str | None]:
    """``expected.json``: ``{"rewards": {...}}`` or ``{"exit_code": 1|2}``
    (both may be given); with rewards, ``"tolerance"``: how far each reward
    may be from its number. Returns (expectation, problem)."""
    if not untrusted.present(path):
        return None, None
    found = untrusted.read_json(path, EXPECTED_LIMIT)
    if not found.ok:
        return None, f"{found.problem}; the case has no expectation"
    data = found.data
    if not isinstance(data, dict):
        return None, f'{path.name} must be a JSON object like {{"rewards": {{"reward": 1.0}}}} or {{"exit_code": 1}}'
    rewards = data.get("rewards")
    exit_code = data.get("exit_code")
    # What no run can give would fail the case for ever: a reward file holds at
    # least one finite number (the runner refuses NaN, inf and {}), and an exit
    # status is 0 to 255.
    if rewards is not None and not (
        isinstance(rewards, dict) and rewards and _numbers(rewards) and all(map(_finite, rewards.values()))
    ):
        return None, f'{path.name}: "rewards" must be an object of finite numbers, at least one'
    if exit_code is not None and (
        isinstance(exit_code, bool) or not isinstance(exit_code, int) or not 0 <= exit_code <= 255
    ):
        return None, f'{path.name}: "exit_code" must be an integer from 0 to 255'
    if rewards is None and exit_code is None:
        problem = f'{path.name} names neither "rewards" nor "exit_code"'
        loose = {key: value for key, value in data.items() if key not in _KEYS}
        misspelt = next((close for key in loose for close in _close(key)), None)
        if loose and _numbers(loose):
            # The reward file's own shape ({"reward": 1.0}): the one-step fix, when it is short.
            wrapped = json.dumps({"rewards": loose, **{key: data[key] for key in _KEYS if key in data}})
            problem += f": for these rewards, write {wrapped}" if len(wrapped) <= 100 else ': put them under "rewards"'
        elif misspelt is not None:
            problem += f' (did you mean "{misspelt}"?)'
        return None, problem
    unknown = next((key for key in data if key not in _KEYS), None)
    if unknown is not None:  # a misspelt "tolerence" was ignored, and the case failed on rounding
        close = _close(unknown)
        return None, (
            f"{path.name}: unknown key {json.dumps(unknown)}"
            + (f' (did you mean "{close[0]}"?)' if close else "")
            + ': it holds "rewards", "exit_code" and "tolerance"'
        )
    tolerance = data.get("tolerance")
    if tolerance is not None:
        if (
            isinstance(tolerance, bool)
            or not isinstance(tolerance, (int, float))
            or not 0 <= reward_float(tolerance) < math.inf  # (an int no float holds: inf)
        ):
            return None, (
                f'{path.name}: "tolerance" must be a number, 0 or more and finite, such as 1e-9 '
                f"(not {clip(json.dumps(tolerance))})"  # 10**400: not all its digits, as a verdict says one
            )
        if rewards is None:
            return None, f'{path.name}: "tolerance" applies to "rewards", and there are none'
    return Expectation(
        rewards=rewards, exit_code=exit_code, source=path, tolerance=float(tolerance) if tolerance is not None else None
    ), None


def _close(key: str) -> list[str]:
    """The key of expected.json's that ``key`` was likely meant to be ("Rewards", "tolerence")."""
    import difflib

    return difflib.get_close_matches(key.lower(), _KEYS, n=1)


def _finite(number: float) -> bool:
    # An int is finite however large: the runner writes one past any float to reward.json
    # (verify's dict), and Harbor's check of reward.json keeps it as the reward.
    return isinstance(number, int) or math.isfinite(number)


def _inside(path: Path | None, root: Path, option: str, problems: list[str]) -> Path | None:
    """``path``, or None (said in ``problems``) when it leads out of ``root``."""
    said = None if path is None else leads_out(path, root, option)
    if said is not None:
        problems.append(said)
        return None
    return path


#: How a case's problem with its workspace ends: what a run of the case does instead (audit, which
#: makes no such run, says its own).
ON_SCRATCH = "the verifier runs on an empty scratch workspace"


def _workspace(workspace: Path, root: Path, problems: list[str]) -> Path | None:
    """The case's workspace folder, or None: the verifier runs on an empty scratch workspace."""
    if workspace.is_dir():
        said = leads_out(workspace, root, "--workspace DIR")
        if said is None:
            return workspace
        problems.append(Advice(said, f"; {ON_SCRATCH}"))
    elif untrusted.present(workspace):
        what = "a link that leads to no folder" if workspace.is_symlink() else "not a folder"
        problems.append(f"its workspace is {what}: {ON_SCRATCH}")
    return None


def _numbers(mapping: dict[str, Any]) -> bool:
    """Whether every value is a number (JSON's, not a boolean)."""
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in mapping.values())


def wrap_text_response(text: str) -> dict[str, Any]:
    """A minimal Responses API response holding ``text`` as the assistant's one
    message, as the environment server would hold the agent's final answer."""
    return {
        "id": "resp_verifier_tui",
        "object": "response",
        "status": "completed",
        "model": "verifier-tui",
        "output": [
            {
                "type": "message",
                "id": "msg_verifier_tui",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        ],
    }
