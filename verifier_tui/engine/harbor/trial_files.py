"""The Harbor files of a trial as a reader wants them: ``trial.log``,
``exception.txt``, the agent's logs, its ATIF trajectory as a conversation,
the task's instruction, the artifacts manifest. Each view is a list of lines
with a kind (``head``, ``muted``, ``text``, ``warn``) the faces style; a file
that is missing says so and why, a big one is read from its tail.

Layout mirrored from Harbor 0.26.0 ``harbor/models/trial/paths.py`` (the
trial's files), ``harbor/models/task/paths.py`` (``instruction.md``, a
step's ``steps/<name>/instruction.md``) and ``harbor/models/trajectories/``
(``Trajectory``: ``agent``, ``steps``, ``final_metrics``; ``Step``:
``step_id``, ``source``, ``message``, ``reasoning_content``, ``tool_calls``,
``observation.results``, ``metrics``).
"""

from __future__ import annotations

import json
import os
import stat
from typing import TYPE_CHECKING

from verifier_tui.engine import untrusted
from verifier_tui.engine.harbor.folders import EXCEPTION_TXT, MANIFEST
from verifier_tui.engine.harbor.reading import read_json, tail_text
from verifier_tui.engine.record import record
from verifier_tui.engine.task.target import TRIAL_LOG

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from verifier_tui.engine.harbor.walkthrough import TrialWalkthrough

VIEW_BYTES = 256 * 1024
"""A file is shown from its last 256 KiB: a log's end says how the trial ended."""
AGENT_FILE_BYTES = 16 * 1024
AGENT_FILES = 40
"""The agent's folder: at most this many files listed, each shown from its last 16 KiB."""
MESSAGE_CHARS = 4000
"""A trajectory's message, tool call or observation beyond this is cut (the file has it whole)."""
CONVERSATION_LINES = 20_000
"""A trajectory shown stops after this many lines, saying how many steps are left."""
TRAJECTORY = "trajectory.json"


@record(frozen=True)
class FileView:
    """``key`` names the view; ``path`` the file (or folder) shown, when there is one."""

    key: str
    title: str
    path: Path | None
    lines: tuple[tuple[str, str], ...]  # (kind, text)

    @property
    def text(self) -> str:
        return "\n".join(text for _kind, text in self.lines)


#: (key, title) of every view, in the order of the trial screen's keys.
VIEWS = (
    ("trial_log", "trial.log"),
    ("exception", "exception.txt"),
    ("agent", "the agent's logs"),
    ("trajectory", "the trajectory"),
    ("instruction", "the task's instruction"),
    ("manifest", "the artifacts manifest"),
)


def file_view(walk: TrialWalkthrough, key: str) -> FileView:
    """The view ``key`` (one of :data:`VIEWS`) of the walkthrough's trial (its step)."""
    title = dict(VIEWS)[key]
    make = {
        "trial_log": _trial_log,
        "exception": _exception,
        "agent": _agent,
        "trajectory": _trajectory,
        "instruction": _instruction,
        "manifest": _manifest,
    }[key]
    gone = walk.trial.gone() if key != "instruction" else None  # the instruction is the task's
    if gone is not None:
        return FileView(key, title, walk.trial.path, (("warn", f"{gone}: open it again from where it is now"),))
    path, lines = make(walk)
    return FileView(key, title, path, tuple(lines))


def _tail(path: Path, limit: int, missing: str, beneath: Path) -> list[tuple[str, str]]:
    """A text file from its tail, with a line saying how much is shown: one
    of the folder ``beneath`` (the trial's or its task's), never through a link."""
    found = untrusted.read_bytes(path, limit, keep="tail", beneath=beneath)
    text = tail_text(found)
    if text is None:
        # a link, or a FIFO where a file should be, is said as what it is: "missing" would be false
        said = found.problem if found.state in ("link", "not-a-file") and found.problem else missing
        return [("warn", said)]
    out: list[tuple[str, str]] = []
    if found.size > limit:
        out.append(("muted", f"(the last {limit // 1024} KiB of {found.size:,} bytes)"))
    if not text.strip():
        out.append(("muted", "(empty)"))
    out += [("text", line) for line in text.rstrip("\n").splitlines()]
    return out


def _trial_log(walk: TrialWalkthrough) -> tuple[Path, list[tuple[str, str]]]:
    path = walk.trial.path / TRIAL_LOG
    return path, _tail(
        path,
        VIEW_BYTES,
        "trial.log is not there: Harbor writes it for every trial, so this folder "
        "was copied without it (or Harbor was stopped before it started)",
        walk.trial.path,
    )


def _exception(walk: TrialWalkthrough) -> tuple[Path, list[tuple[str, str]]]:
    path = walk.trial.path / EXCEPTION_TXT
    if isinstance(walk.trial.result.get("exception_info"), dict):
        missing = (
            "exception.txt is not there, though result.json records an exception for the trial (its "
            "exception_info, which the root cause shows): the folder was copied without it"
        )
    else:
        missing = (
            "exception.txt is not there: Harbor writes it only when it records an exception for the trial "
            "(result.json's exception_info), and it recorded none"
        )
    if walk.facts.verifier_exception_source == "trial.log":
        missing += "; the verifier's own failure is only in trial.log (l shows it)"
    elif walk.facts.agent_exit_code is not None:
        missing += f"; the agent's exit code {walk.facts.agent_exit_code} is in agent/exit-code.txt (a shows it)"
    return path, _tail(path, VIEW_BYTES, missing, walk.trial.path)


def _agent(walk: TrialWalkthrough) -> tuple[Path, list[tuple[str, str]]]:
    folder = walk.step.agent_dir
    found = untrusted.look(folder, walk.step.trial_path)
    if isinstance(found, untrusted.Read) and found.state == "link":
        return folder, [("warn", found.problem or "")]
    if not (isinstance(found, os.stat_result) and stat.S_ISDIR(found.st_mode)):
        return folder, [("warn", "agent/ is not there: the agent wrote no logs (the nop agent writes nothing)")]
    files = _files(folder)
    if not files:
        return folder, [("warn", "agent/ is empty: the agent wrote no logs (the nop agent writes nothing)")]
    out: list[tuple[str, str]] = [("head", f"{len(files)} file{'s' if len(files) != 1 else ''} in agent/")]
    for path, size in files[:AGENT_FILES]:
        out.append(
            ("muted", f"  {path.relative_to(folder).as_posix()}  {'a link' if size is None else f'{size:,} bytes'}")
        )
    if len(files) > AGENT_FILES:
        out.append(("muted", f"  … {len(files) - AGENT_FILES} more"))
    for path, _size in files[:AGENT_FILES]:
        rel = path.relative_to(folder).as_posix()
        out += [("text", ""), ("head", f"── {rel}")]
        if rel == TRAJECTORY:
            out.append(("muted", "(j shows it as a conversation)"))
            continue
        out += _tail(path, AGENT_FILE_BYTES, f"{rel} cannot be read", walk.step.trial_path)
    return folder, out


def _files(folder: Path, at_most: int = 5000) -> list[tuple[Path, int | None]]:
    """The regular files under ``folder`` with their sizes, and its links
    (size None: never followed, said when shown), sorted; at most ``at_most``
    entries looked at, folders among them, a folder at a time without recursing:
    the agent may leave any number of folders, nested any depth (os.walk
    recursed past Python's limit at 1,000 deep). In os.walk's order (a folder,
    then each of its folders whole, by name), so a big folder spends the bound
    only on what is named after it."""
    from itertools import islice
    from pathlib import Path

    found: list[tuple[Path, int | None]] = []
    looked = 0
    folders = [folder]
    while folders and looked < at_most:
        try:
            with os.scandir(folders.pop()) as listing:
                entries = sorted(islice(listing, at_most - looked), key=lambda entry: entry.name)
        except OSError:
            continue
        inner: list[Path] = []
        for entry in entries:
            looked += 1
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):
                found.append((Path(entry.path), st.st_size if stat.S_ISREG(st.st_mode) else None))
            elif stat.S_ISDIR(st.st_mode):
                inner.append(Path(entry.path))
        folders += reversed(inner)  # (popped first to last)
    return sorted(found)


def _cut(text: str) -> str:
    return (
        text
        if len(text) <= MESSAGE_CHARS
        else text[:MESSAGE_CHARS] + f" … ({len(text) - MESSAGE_CHARS:,} more characters)"
    )


def _content(value: Any) -> str:
    """A message or an observation: text, or ATIF content parts (text, image, audio)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for part in value:
            if isinstance(part, dict) and part.get("type") == "text":
                parts.append(str(part.get("text") or ""))
            elif isinstance(part, dict):
                source = untrusted.table(part, "source")
                parts.append(f"[{part.get('type')}: {source.get('path') or '?'}]")
        return "\n".join(parts)
    return "" if value is None else json.dumps(value)


def _metrics(metrics: Any) -> str:
    if not isinstance(metrics, dict):
        return ""
    return ", ".join(
        f"{key.replace('_', ' ')} {metrics[key]}"
        for key in ("prompt_tokens", "completion_tokens", "cached_tokens", "cost_usd")
        if isinstance(metrics.get(key), (int, float))
    )


def _items(document: dict[str, Any], key: str) -> list[Any]:
    """``document[key]`` when it is a list (ATIF's ``tool_calls``, ``results``), else none: the agent
    wrote the file, and a number there is not iterable."""
    value = document.get(key)
    return value if isinstance(value, list) else []


def conversation(data: Any) -> list[tuple[str, str]]:
    """An ATIF trajectory as a conversation: each step's role and message,
    its reasoning, its tool calls and what they returned."""
    if not isinstance(data, dict) or not isinstance(data.get("steps"), list):
        return [("warn", "not an ATIF trajectory: no steps list")]
    out: list[tuple[str, str]] = []
    agent = untrusted.table(data, "agent")
    about = [str(data.get("schema_version") or "ATIF")]
    if agent.get("name"):
        about.append(f"agent {agent.get('name')} {agent.get('version') or ''}".rstrip())
    if agent.get("model_name"):
        about.append(f"model {agent['model_name']}")
    steps = data["steps"]
    about.append(f"{len(steps)} step{'s' if len(steps) != 1 else ''}")
    out.append(("muted", " · ".join(about)))
    for index, step in enumerate(steps):
        if len(out) > CONVERSATION_LINES:
            out += [("text", ""), ("warn", f"… {len(steps) - index} more steps (the file has them all)")]
            break
        if not isinstance(step, dict):
            continue
        role = str(step.get("source") or "?")
        stamp = f"  {step['timestamp']}" if isinstance(step.get("timestamp"), str) else ""
        out += [("text", ""), ("head", f"#{step.get('step_id', '?')} {role}{stamp}")]
        message = _content(step.get("message"))
        out += [("text", f"  {line}") for line in _cut(message).splitlines()] if message.strip() else []
        if isinstance(step.get("reasoning_content"), str) and step["reasoning_content"].strip():
            out.append(("muted", "  (reasoning)"))
            out += [("muted", f"  {line}") for line in _cut(step["reasoning_content"]).splitlines()]
        for call in _items(step, "tool_calls"):
            if isinstance(call, dict):
                arguments = json.dumps(call.get("arguments"), ensure_ascii=False)
                out.append(("warn", f"  → {call.get('function_name')}({_cut(arguments)})"))
        observation = untrusted.table(step, "observation")
        for result in _items(observation, "results"):
            if not isinstance(result, dict):
                continue
            out.append(("muted", f"  ← {result.get('source_call_id') or 'observation'}"))
            out += [("text", f"    {line}") for line in _cut(_content(result.get("content"))).splitlines()]
        used = _metrics(step.get("metrics"))
        if used:
            out.append(("muted", f"  ({used})"))
    final = data.get("final_metrics") if isinstance(data.get("final_metrics"), dict) else None
    if final:
        said = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in final.items() if isinstance(v, (int, float)))
        out += [("text", ""), ("head", "final metrics"), ("muted", f"  {said or 'none recorded'}")]
    return out


def _trajectory(walk: TrialWalkthrough) -> tuple[Path, list[tuple[str, str]]]:
    path = walk.step.agent_dir / TRAJECTORY
    try:
        found = read_json(path, beneath=walk.step.trial_path)
    except RecursionError:  # json's own limit: a reader bounding the nesting says so itself
        return path, [("warn", "agent/trajectory.json is nested too deeply: not a trajectory an agent wrote")]
    if found.state == "missing":
        return path, [
            (
                "warn",
                "agent/trajectory.json is not there: only agents that record their run in ATIF "
                "write one (the oracle and nop agents do not)",
            )
        ]
    if not found.ok:
        return path, [("warn", found.problem or "agent/trajectory.json cannot be read")]
    return path, conversation(found.data)


def _instruction(walk: TrialWalkthrough) -> tuple[Path | None, list[tuple[str, str]]]:
    task = walk.location.path
    if task is None:
        return None, [("warn", f"the task was not found, so neither is its instruction: {walk.location.message()}")]
    path = task / "instruction.md"
    if walk.step.name is not None:
        path = task / "steps" / walk.step.name / "instruction.md"
    # The task came with the job someone sent: its instruction.md may link to /etc/shadow.
    lines = _tail(path, VIEW_BYTES, f"{path.relative_to(task).as_posix()} is not in the task", task)
    if walk.drift is not None and walk.drift.same is False:
        lines.insert(0, ("warn", "the task changed since the run: this may not be the instruction the agent had"))
    return path, lines


def _manifest(walk: TrialWalkthrough) -> tuple[Path, list[tuple[str, str]]]:
    step = walk.step
    path = step.artifacts_dir / MANIFEST
    if step.manifest.state == "missing":
        return path, [
            (
                "warn",
                "artifacts/manifest.json is not there: Harbor 0.14.0 and later write it after "
                "collecting artifacts, so this trial ended before that or is older",
            )
        ]
    if not step.manifest.ok:
        return path, [("warn", step.manifest.problem or "artifacts/manifest.json cannot be read")]
    entries = step.artifacts
    out: list[tuple[str, str]] = [
        (
            "head",
            f"{len(entries)} entr{'ies' if len(entries) != 1 else 'y'}: "
            "source in the sandbox → where it is in the trial",
        )
    ]
    for entry in entries:
        where = "there" if entry.path is not None else "not in the trial folder"
        status = "" if entry.status == "ok" else f"  status {entry.status}"
        out.append(
            (
                "text" if entry.status == "ok" else "warn",
                f"  {entry.source} → {entry.destination or '?'}  ({entry.type or '?'}, {where}){status}",
            )
        )
    if "/app" not in [e.source for e in entries]:
        out += [
            ("text", ""),
            (
                "muted",
                '/app was not captured: only when the task or the job declares it an artifact (artifacts = ["/app"])',
            ),
        ]
    return path, out
