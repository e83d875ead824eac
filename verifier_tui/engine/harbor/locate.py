"""Where the task a trial ran is, on this machine.

``config.json`` → ``task`` says where Harbor took it from (Harbor 0.26.0
``harbor/models/trial/config.py`` ``TaskConfig``, ``harbor/models/task/id.py``):

- a local task: ``path`` as typed to ``harbor run``, usually relative to the
  folder Harbor ran in. That folder is ``result.json``'s ``trial_uri`` minus
  ``<trials_dir>/<trial_name>``. Folders move, so the same relative path is
  also tried from where the trial folder stands now, and from its ancestors;
- a git task (``git_url``): Harbor's cache,
  ``~/.cache/harbor/tasks/<shortuuid of the GitTaskId>/<basename of path>``
  (``GitTaskId.get_local_path``); any ``~/.cache/harbor/tasks/*/<basename>``
  whose digest is the recorded one is accepted too;
- a package task (``name`` "org/name"): ``~/.cache/harbor/tasks/packages/<org>/<name>/<digest hex>``
  (``PackageTaskId.get_local_path``), the digest from ``lock.json`` or a
  ``sha256:`` ``ref``.

A folder given by the caller (``--task DIR``) comes first. When several
places hold a task, the first whose digest is the recorded one wins, else the
first found; ``found_by`` then names the others and why this one was taken.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from verifier_tui.engine.advice import GIVE_TASK, Advice
from verifier_tui.engine.harbor.folders import Trial
from verifier_tui.engine.record import field, record
from verifier_tui.engine.task.kinds import TASK_FILES, looks_like_task, some_names

_SHORTUUID_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_CACHE_SCAN_LIMIT = 200


@record(frozen=True)
class TaskLocation:
    """Where the task was found (``path``, ``found_by`` in words), or not:
    ``tried`` lists each place with why it was tried."""

    path: Path | None
    found_by: str | None
    kind: str  # "local", "git", "package" or "unknown"
    tried: tuple[tuple[str, str], ...] = field(default_factory=tuple)  # (place, why)
    #: Why config.json, which says where the task was, could not be read (missing, a link, a FIFO, not JSON), when no
    #: copy of it in result.json said it either: "config.json has no task" would be said of a file never read.
    unread: str | None = None

    @property
    def found(self) -> bool:
        return self.path is not None

    def message(self) -> str:
        """One line for a task that was not found: where it looked, how to give
        it. Only for that: every caller checks :attr:`found` first, and where
        a found task is the faces say (``words.trial.task_found_at``)."""
        if not self.tried:
            why = self.unread or "config.json has no task"
            return Advice(f"the trial does not say where its task was ({why}); ", GIVE_TASK)
        groups: list[tuple[str, list[str]]] = []
        for place, why in self.tried:
            if groups and groups[-1][0] == why:
                groups[-1][1].append(place)
            else:
                groups.append((why, [place]))
        places = "; ".join(
            f"{found[0]} ({why})" if len(found) == 1 else f"{found[0]} ... {found[-1]} ({why}, {len(found)} places)"
            for why, found in groups
        )
        # One sentence, as the one above: after ". " the advice began a second in lower case.
        return Advice(f"the task was not found (looked in: {places}); ", GIVE_TASK)


def harbor_cache_dir() -> Path:
    """``harbor.constants.CACHE_DIR``: ``~/.cache/harbor`` (not XDG: Harbor hard-codes it)."""
    return Path("~/.cache/harbor").expanduser()


def shortuuid_of(name: str) -> str:
    """``shortuuid.uuid(name)`` (shortuuid 1.0.13): a UUID5 of ``name`` (URL
    namespace for http(s) names, DNS otherwise), written in its 57-letter
    alphabet, most significant first, padded to 22 letters."""
    import uuid  # only git tasks need it; it brings platform along

    namespace = uuid.NAMESPACE_URL if name.lower().startswith(("http://", "https://")) else uuid.NAMESPACE_DNS
    number = uuid.uuid5(namespace, name).int
    alphabet = _SHORTUUID_ALPHABET
    out = ""
    while number:
        number, digit = divmod(number, len(alphabet))
        out += alphabet[digit]
    out += alphabet[0] * max(22 - len(out), 0)
    return out[::-1]


def git_task_id_text(git_url: str, git_commit_id: str | None, path: str) -> str:
    """``str(GitTaskId(...))`` as pydantic 2 prints it, which is what Harbor
    hashes for the cache folder; ``path`` normalised as ``normalize_git_task_path``."""
    parts: list[str] = []
    for part in PurePosixPath(path).parts:
        if part == "..":
            if parts:
                parts.pop()
        elif part not in ("/", "."):
            parts.append(part)
    normalised = "/".join(parts) or "."
    return f"git_url={git_url!r} git_commit_id={git_commit_id!r} path=PosixPath({normalised!r})"


def git_task_cache_dir(git_url: str, git_commit_id: str | None, path: str, cache: Path | None = None) -> Path:
    """``GitTaskId.get_local_path()``."""
    base = (cache or harbor_cache_dir()) / "tasks"
    return base / shortuuid_of(git_task_id_text(git_url, git_commit_id, path)) / PurePosixPath(path).name


def run_folder(trial: Trial) -> Path | None:
    """The folder Harbor ran in: ``trial_uri`` minus ``<trials_dir>/<trial_name>``."""
    uri = trial.result.text("trial_uri")
    trials_dir = _trials_dir(trial)
    if uri is None or not uri.startswith("file://") or trials_dir is None:
        return None
    from urllib.parse import unquote, urlparse

    trial_path = PurePosixPath(unquote(urlparse(uri).path))
    return _strip_tail(trial_path, PurePosixPath(trials_dir) / trial.name)


def moved_run_folder(trial: Trial) -> Path | None:
    """Where that folder is now, if the trial still sits at ``<trials_dir>/<trial_name>`` below it."""
    trials_dir = _trials_dir(trial)
    if trials_dir is None:
        return None
    return _strip_tail(PurePosixPath(trial.path), PurePosixPath(trials_dir) / trial.path.name)


def _trials_dir(trial: Trial) -> str | None:
    """config.json's ``trials_dir``; where it names none as a string, result.json's copy of the config
    (either file may hold anything: a value of another kind is no folder)."""
    return trial.config.text("trials_dir") or trial.result.text("config", "trials_dir")


def _strip_tail(path: PurePosixPath, tail: PurePosixPath) -> Path | None:
    if tail.is_absolute():
        return None
    tail_parts = [p for p in tail.parts if p not in (".", "")]
    if ".." in tail_parts or len(path.parts) <= len(tail_parts):
        return None
    if list(path.parts[-len(tail_parts) :]) != tail_parts:
        return None
    return Path(*path.parts[: -len(tail_parts)])


def locate_task(trial: Trial, given: Path | str | None = None, cache: Path | None = None) -> TaskLocation:
    """Find the trial's task (see the module docstring for the order)."""
    from verifier_tui.engine.harbor.digest import task_digest

    task = trial.task_config
    recorded = trial.recorded_digest
    path_text = task.get("path") if isinstance(task.get("path"), str) else None
    kind, candidates = _places(trial, path_text, recorded, cache)
    if given is not None:
        candidates.insert(0, (Path(given).expanduser().absolute(), "given with --task"))

    tried: list[tuple[str, str]] = []
    # (folder, why, digest is the recorded one, why that cannot be told)
    qualified: list[tuple[Path, str, bool | None, str | None]] = []
    seen: set[str] = set()
    for folder, why in candidates:
        key = os.path.normpath(str(folder))
        if key in seen:
            continue
        seen.add(key)
        tried.append((str(folder), why))
        if not looks_like_task(folder):
            if why.startswith("given"):  # the caller's folder is no task: say so, do not look elsewhere
                return TaskLocation(None, None, kind, ((str(folder), f"given with --task: no {TASK_FILES} there"),))
            continue
        if why.startswith("given"):
            return TaskLocation(folder, why, kind, tuple(tried))
        local = task_digest(folder)
        same = None if recorded is None or local.digest is None else local.digest == recorded
        qualified.append((folder, why, same, _untold(recorded, local.unknown)))
        if len(qualified) >= _COPIES_COMPARED:
            break
    if kind == "git" and path_text and not any(same for _f, _w, same, _u in qualified):
        match = _scan_git_cache(PurePosixPath(path_text).name, recorded, cache)
        if match is not None:
            return TaskLocation(match, "Harbor's cache (same task name and digest)", kind, tuple(tried))
        tried.append(
            (
                str((cache or harbor_cache_dir()) / "tasks" / "*" / PurePosixPath(path_text).name),
                "any cached copy with the recorded digest",
            )
        )
    if not qualified:
        config = trial.config
        unread = config.problem if not trial.task_config and not config.ok else None
        return TaskLocation(None, None, kind, tuple(tried), unread)
    chosen = next((q for q in qualified if q[2]), qualified[0])
    return TaskLocation(chosen[0], chosen[1] + _why_this_copy(chosen, qualified), kind, tuple(tried))


def _places(
    trial: Trial, path_text: str | None, recorded: str | None, cache: Path | None
) -> tuple[str, list[tuple[Path, str]]]:
    """The kind of the trial's task ("git", "package", "local" or "unknown")
    and the places it may be, in order, each with why it is tried."""
    task = trial.task_config
    if task.get("git_url"):
        if not path_text:
            return "git", []
        where = git_task_cache_dir(task["git_url"], task.get("git_commit_id"), path_text, cache)
        return "git", [(where, "Harbor's cache for this git task")]
    if isinstance(task.get("name"), str) and "/" in task["name"] and not path_text:
        org, name = task["name"].split("/", 1)
        digest = recorded or (task.get("ref") if str(task.get("ref") or "").startswith("sha256:") else None)
        if not digest:
            return "package", []
        packages = (cache or harbor_cache_dir()) / "tasks" / "packages"
        return "package", [(packages / org / name / digest.removeprefix("sha256:"), "Harbor's cache for this package")]
    if path_text:
        return "local", _local_candidates(trial, path_text)
    return "unknown", []


#: At most this many copies of the task are found and compared with the recorded digest.
_COPIES_COMPARED = 4


def _why_this_copy(
    chosen: tuple[Path, str, bool | None, str | None], qualified: list[tuple[Path, str, bool | None, str | None]]
) -> str:
    """When several folders hold the task: which others there were, and why this one."""
    others = [q for q in qualified if q is not chosen]
    if not others:
        return ""
    if chosen[2] is None:
        reason = f"it is tried first ({chosen[3]})"
    else:  # lock.json records a digest: a copy whose own is not known is said to be so, never to differ
        untold = [(folder, why) for folder, _w, same, why in others if same is None]
        if chosen[2]:
            reason = "its digest is the one lock.json recorded" + (
                "" if untold or any(same for _f, _w, same, _u in others) else ", the other's is not"
            )
        else:
            reason = "its digest is not the one lock.json recorded" if untold else "none has the recorded digest"
            reason += ", and it is tried first"
        reason += "".join(f"; for {folder}, {why}" for folder, why in untold[:2])
    listed = some_names([f"{folder} ({why})" for folder, why, _same, _u in others], 2, "; ")
    return f"; chosen over {listed}: {reason}"


def _untold(recorded: str | None, unknown: str | None) -> str | None:
    """Why whether a copy has the run's digest cannot be told (None: it can): lock.json records
    none, or the copy's own is ``unknown`` (an ignore file past what the tool reads)."""
    if recorded is None:
        return "lock.json records no digest to tell them apart"
    return None if unknown is None else f"whether it has the digest lock.json recorded cannot be told: {unknown}"


def _local_candidates(trial: Trial, path_text: str) -> list[tuple[Path, str]]:
    path = Path(path_text).expanduser()
    out: list[tuple[Path, str]] = []
    if path.is_absolute():
        out.append((path, "config.json's task.path"))
        # Moved along with the trial: the path's last parts (".../tasks/demo", "demo") from the trial's ancestors.
        tails = [Path(*path.parts[-n:]) for n in range(min(3, len(path.parts) - 1), 0, -1)]
        for ancestor in trial.path.parents:
            for tail in tails:
                out.append((ancestor / tail, "the end of task.path, from the trial's ancestors"))
        return out
    ran_in = run_folder(trial)
    if ran_in is not None:
        out.append((ran_in / path, "task.path from the folder Harbor ran in (result.json's trial_uri)"))
    moved = moved_run_folder(trial)
    if moved is not None:
        out.append((moved / path, "task.path in config.json; the trial folder moved since Harbor ran it"))
    for ancestor in (trial.job_path or trial.path.parent, *(trial.job_path or trial.path.parent).parents):
        out.append((ancestor / path, "task.path from an ancestor of the job folder"))
    # A trial the user named through a link of theirs (`run latest`): also from the job the link leads to,
    # whose ancestors hold the task (those of the link's folder alone found nothing)
    real = Path(os.path.realpath(trial.path)).parent
    if real != (trial.job_path or trial.path.parent):
        for ancestor in (real, *real.parents):
            out.append((ancestor / path, "task.path from an ancestor of the job folder the trial's link leads to"))
    return out


def _scan_git_cache(name: str, recorded: str | None, cache: Path | None) -> Path | None:
    """A cached git task of that name whose digest is the recorded one."""
    if recorded is None:
        return None
    from verifier_tui.engine.harbor.digest import task_digest

    base = (cache or harbor_cache_dir()) / "tasks"
    try:
        entries = sorted(base.iterdir())[:_CACHE_SCAN_LIMIT]
    except OSError:
        return None
    for entry in entries:
        candidate = entry / name
        if entry.name != "packages" and looks_like_task(candidate) and task_digest(candidate).digest == recorded:
            return candidate
    return None
