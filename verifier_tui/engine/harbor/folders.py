"""Harbor trial and job folders: recognised by their files, read without trust.

Layout mirrored from Harbor 0.26.0 ``harbor/models/trial/paths.py``
(``TrialPaths``): a trial folder holds ``config.json`` (the ``TrialConfig``),
``result.json`` (the ``TrialResult``, written once at the end), ``lock.json``
(0.17.0+), ``trial.log``, ``exception.txt`` (only when an exception was
recorded), and ``agent/``, ``verifier/``, ``artifacts/`` at its root, or under
``steps/<name>/`` for a multi-step trial. A job folder holds ``config.json``,
``lock.json``, ``result.json`` (totals), ``job.log`` and one folder per trial.
Harbor itself tells them apart by ``job.log`` against ``trial.log``.

Every file may be missing, cut short or malformed (Harbor killed mid-write, a
hand-edited folder, an older Harbor): that is recorded as a state with words,
never raised. Only "this is neither a trial nor a job" raises.

About 500 lines: one reader per Harbor file of a trial or job, kept together
so the layout they mirror can be checked against Harbor's in one place.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from verifier_tui.engine import untrusted
from verifier_tui.engine.harbor.reading import (
    LOG_TAIL_BYTES,
    ExceptionRecord,
    TimeSpan,
    exception_from_text,
    exception_record,
    not_ended,
    parse_time,
    read_json,
    read_text_tail,
    tail_text,
    time_span,
)
from verifier_tui.engine.plain import one_line, posix_from, typed_back, typed_in_bash
from verifier_tui.engine.record import field, record
from verifier_tui.engine.task.target import CONFIG, TRIAL_LOG, Target, classify, harbor_kind, kind_within
from verifier_tui.engine.untrusted import JsonFile, Read, json_kind, look

if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

RESULT = "result.json"
LOCK = "lock.json"
EXCEPTION_TXT = "exception.txt"
MANIFEST = "manifest.json"
TEST_STDOUT = "test-stdout.txt"
TEST_STDERR = "test-stderr.txt"  # Harbor 0.1.42 and older only


class HarborFolderError(Exception):
    """The path is neither a Harbor trial folder nor a job folder."""


# --------------------------------------------------------------------------
# Records.


@record(frozen=True)
class ManifestEntry:
    """One entry of ``artifacts/manifest.json`` (``ArtifactManifestEntry``).
    ``path`` is ``destination`` resolved on disk, or None when not there;
    ``looked_at`` is the place read for it that is to be described (where
    something is, a link or a file too, else the first place looked), None
    without a destination."""

    source: str
    destination: str
    type: str
    status: str
    exclude: tuple[str, ...] | None
    path: Path | None
    looked_at: Path | None = None


@record(frozen=True)
class StepView:
    """One verifier pass: the trial's own (``name`` None) or one step's.

    ``folder`` holds its ``agent/``, ``verifier/`` and ``artifacts/``: the
    trial folder, or ``steps/<name>/``.
    """

    name: str | None
    folder: Path
    trial_path: Path  # the trial folder: every file of the step is read beneath it, never through a link
    rewards: dict[str, Any] | None  # verifier_result.rewards as recorded
    exception: ExceptionRecord | None
    agent_execution: TimeSpan | None
    verifier: TimeSpan | None
    manifest: JsonFile
    artifacts: tuple[ManifestEntry, ...] = ()
    recorded: bool = True  # False: result.json said nothing about this pass

    @property
    def verifier_dir(self) -> Path:
        return self.folder / "verifier"

    @property
    def agent_dir(self) -> Path:
        return self.folder / "agent"

    @property
    def artifacts_dir(self) -> Path:
        return self.folder / "artifacts"

    @property
    def label(self) -> str:
        return self.name or "(single step)"


#: Whether a path is a link, and the device and inode of the folder it leads to.
FolderIdentity = tuple[bool, int, int]


@record
class Trial:
    """A trial folder, read."""

    path: Path
    name: str
    config: JsonFile
    result: JsonFile
    lock: JsonFile
    steps: list[StepView]
    exception_text: str | None
    log_text: str
    identity: FolderIdentity  # the folder read, taken before reading it
    job_path: Path | None = None
    harbor_version: str | None = None  # from the job's lock.json, when there is one
    absent: list[str] = field(default_factory=list)  # what an older (or killed) Harbor did not write
    notes: list[str] = field(default_factory=list)

    @property
    def multi_step(self) -> bool:
        return any(step.name is not None for step in self.steps)

    @property
    def task_config(self) -> dict[str, Any]:
        """``config.json`` → ``task``: where the task came from."""
        task = self.config.get("task")
        if not isinstance(task, dict):
            task = self.result.get("config", {}).get("task") if isinstance(self.result.get("config"), dict) else None
        return task if isinstance(task, dict) else {}

    @property
    def task_name(self) -> str | None:
        name = self.result.text("task_name")
        if name is not None:
            return name
        if (locked := self.lock.text("task", "name")) is not None:
            return locked
        task = self.task_config
        if isinstance(configured := task.get("name"), str):
            return configured
        if isinstance(task.get("path"), str):
            return Path(task["path"]).name
        return None

    @property
    def agent_name(self) -> str | None:
        named = self.result.text("agent_info", "name")
        return named if named is not None else self.config.text("agent", "name")

    @property
    def started_at(self) -> datetime | None:
        """When the trial started: result.json's ``started_at``, else when
        Harbor wrote config.json (``Trial._init_result`` writes it first)."""
        started = parse_time(self.result.get("started_at"))
        if started is None and self.config.state != "missing":
            from datetime import datetime, timezone

            try:
                started = datetime.fromtimestamp(os.stat(self.config.path).st_mtime, timezone.utc)
            except OSError:
                return None
        return started

    @property
    def finished(self) -> bool:
        """Whether Harbor ended the trial. It writes result.json once, at the
        end, with ``finished_at``: a missing or cut short one (or one without
        ``finished_at``) means Harbor was stopped or is still running it, and
        has scored nothing yet, whatever verifier/ holds so far (the job
        overview's "not finished", by the same rule: :func:`not_ended`)."""
        return not_ended(self.result) is None

    @property
    def exception(self) -> ExceptionRecord | None:
        """The trial-level exception (a multi-step trial records step failures
        on the step). Without a readable result.json, ``exception.txt`` (written
        the moment Harbor records it) still names it."""
        if not self.result.ok:
            return exception_from_text(self.exception_text)
        return exception_record(self.result.get("exception_info"))

    @property
    def recorded_digest(self) -> str | None:
        return self.lock.text("task", "digest")

    def gone(self) -> str | None:
        """Why the trial's folder cannot be read any more (moved, deleted or
        shut since it was opened), or None: a file of it not found is then
        no file Harbor left out."""
        try:
            found = os.stat(self.path)
        except FileNotFoundError:
            return "the trial folder is no longer there: it was moved or deleted since it was opened"
        except OSError as exc:
            return f"the trial folder cannot be read now ({exc.strerror or exc})"
        if not stat.S_ISDIR(found.st_mode):
            return "the trial folder is no longer there: something else has its name since it was opened"
        if not os.access(self.path, os.R_OK | os.X_OK):
            return "the trial folder cannot be read now (permission denied since it was opened)"
        return None

    def step(self, name: str | None, *, typed: bool = False) -> StepView:
        """The step called ``name``; None gives the first (the only one of a single-step trial).
        ``typed``: a name the user gave, as written or as the listing spells it, refused where it names
        more than one step; else the step's own name (a path's folder, one read from a file) picks it."""
        if name is None:
            return self.steps[0]
        exact = [s for s in self.steps if s.name == name]
        spelled = [s for s in self.steps if typed_back(s.name or "", name)]
        named = spelled if typed else exact or spelled
        if len(named) > 1:
            folders = ", ".join(typed_in_bash(str(s.folder)) for s in named[:4])
            raise HarborFolderError(
                f"--step {shown_name(name)}: {len(named)} steps of trial {shown_name(self.name)} read so: "
                f"open one by its folder, typed in bash as: {folders}"
            )
        if named:
            return named[0]
        if self.steps[0].name is None:  # its one step has no name: "(steps: (single step))" read as one to give
            one = "it is a trial of one step (leave --step out)"
            raise HarborFolderError(f"trial {shown_name(self.name)} has no step '{shown_name(name)}': {one}")
        names = _some_names([s.label for s in self.steps])
        raise HarborFolderError(f"trial {shown_name(self.name)} has no step '{shown_name(name)}' (steps: {names})")


@record(frozen=True)
class TrialRef:
    """A trial known by its folder, name and step names only: what testing a
    job keeps of each trial until its turn, when it is read again. A job of
    thousands of trials, each held whole, would grow the tool by tens of KB
    a trial (the parsed result.json, config.json, the log's tail)."""

    path: Path
    name: str
    step_names: tuple[str | None, ...]

    @classmethod
    def of(cls, trial: Trial) -> TrialRef:
        return cls(trial.path, trial.name, tuple(view.name for view in trial.steps))

    @classmethod
    def read(cls, path: Path) -> TrialRef:
        """What a trial folder says of its name and steps, read as
        :func:`open_trial` reads them, and nothing else of it."""
        result = read_json(path / RESULT, beneath=path)
        recorded, _problems = result_shape(result.data if result.ok else None)
        return cls(path, path.name, tuple(_step_names(path, recorded)))


@record
class Job:
    """A job folder, read: its trials in name order (each a :class:`TrialRef`
    when it was opened for testing only)."""

    path: Path
    name: str
    config: JsonFile
    result: JsonFile
    lock: JsonFile
    trials: list[Trial]
    problems: list[str] = field(default_factory=list)
    jobs: list[Path] | None = None  # a folder of jobs read as one: its job folders
    left_out: dict[str, str] = field(default_factory=dict)
    """Each folder of the job that is no trial, by the name ``--trial`` takes
    (``job/folder`` in a jobs folder): its line among ``problems``."""
    problems_of: dict[str, list[str]] = field(default_factory=dict)
    """A folder of jobs: each job's lines among ``problems``, by the job's name (the rest are the folder's own)."""

    @property
    def what(self) -> str:
        return "job" if self.jobs is None else "jobs folder"

    @property
    def harbor_version(self) -> str | None:
        return self.lock.text("harbor", "version")

    def trial(self, name: str) -> Trial:
        """The trial named ``name``: its folder's name, or job/folder. A
        folder's name is unique in its job, not in a jobs folder: a name two
        jobs' trials share is refused, naming their folders."""
        # a folder's name, then job/folder (only the latter holds a /); a folder of the job that is no trial
        # (a link, never followed) is a candidate too, by its whole name, never its line's first word
        for whole in (False, True):
            # as written or as spelled alike: a folder named demo<U+200B> as written is no surer a pick
            # than one whose name ends in U+200B, which the listing spells so
            found = [
                t
                for t in self.trials
                if typed_back(f"{t.path.parent.name}/{t.path.name}" if whole else t.path.name, name)
            ]
            out = [key for key in self.left_out if typed_back(key if whole else key.rpartition("/")[2], name)]
            if len(found) + len(out) > 1:
                paths = [*(t.path for t in found), *(self.path / k for k in out)]
                folders = ", ".join(typed_in_bash(str(path)) for path in paths[:4])
                raise HarborFolderError(
                    f"--trial {shown_name(name)}: {len(paths)} {'folders' if out else 'trials'} of {self.what} "
                    f"{shown_name(self.name)} read so: open one by its folder, typed in bash as: {folders}"
                )
            if found:
                return found[0]
            if out:
                break
        names = _some_names([t.name for t in self.trials])
        if out:  # why, as the overview says it
            raise HarborFolderError(
                f"--trial {shown_name(name)}: {one_line(self.left_out[out[0]])}; name a trial ({names})"
            )
        missing = f"has no trial '{shown_name(name)}'"
        raise HarborFolderError(f"{self.what} {shown_name(self.name)} {missing} (trials: {names})")


def shown_name(name: str) -> str:
    """A trial's, a step's, a job's or a reward key's name read from a file (or one typed) as a job's
    listing shows it, which ``--trial`` and ``--step`` take back (:func:`typed_back`): ``demo<U+200B>``,
    as ``--case`` says a case's, never Python's ``demo\\u200b``."""
    return one_line(name, untrusted.TARGET_CHARS)


def _some_names(names: list[str]) -> str:
    """A list of names (each as :func:`shown_name`) cut to a few and a count: never a line of thousands."""
    from verifier_tui.engine.task.kinds import some_names

    return some_names([shown_name(name) for name in names]) if names else "none"


# --------------------------------------------------------------------------
# Opening (what a path names is decided by engine/task/target.py).


def open_harbor(path: Path | str | Target, refs: bool = False) -> tuple[Trial | Job, str | None]:
    """The trial or job at ``path`` (relative paths against the current
    folder; a :class:`Target` already classified), and the step a path
    inside ``steps/<name>/`` named (``refs``: a job's trials as
    :class:`TrialRef`). Raises HarborFolderError with what was expected."""
    target = path if isinstance(path, Target) else classify(path)
    if target.kind == "missing":
        raise HarborFolderError(f"{target.path} does not exist")
    if not target.harbor or target.root is None:  # a Harbor folder has its root
        raise HarborFolderError(
            f"{target.path} is not a Harbor trial or job folder: a trial folder holds trial.log, "
            "config.json and result.json; a job folder holds job.log, config.json and one folder per trial"
        )
    if target.kind == "jobs":
        return open_jobs_folder(target.root, refs), None
    if target.kind == "job":
        return open_job(target.root, refs), None
    return open_trial(target.root), target.step


def select_trial(
    opened: Trial | Job, trial: str | None = None, step: str | None = None, *, typed_step: bool = True
) -> tuple[Trial, str | None]:
    """The trial (and step, by its own name) a command means: ``run JOB --trial NAME [--step S]``
    or ``run TRIAL [--step S]`` (``typed_step``: S was typed, as :meth:`Trial.step` takes it; else
    the folder of a path named it). A job with one trial needs no ``--trial``.
    Raises HarborFolderError naming the choices."""
    if isinstance(opened, Job):
        if trial is None:
            if len(opened.trials) != 1:
                names = _some_names([t.name for t in opened.trials])
                raise HarborFolderError(
                    f"{opened.what} {opened.name} has {len(opened.trials)} trials: choose one with "
                    f"--trial NAME ({names})"
                )
            chosen = opened.trials[0]
            # Chosen for being the only one: what of the job is no trial (a
            # link, a stray folder) is said with it, as the job's overview says it.
            chosen.notes = [*chosen.notes, *(f"{opened.what} {opened.name}: {p}" for p in opened.problems)]
        else:
            chosen = opened.trial(trial)
    else:
        if trial is not None and not any(typed_back(name, trial) for name in (opened.name, opened.path.name)):
            raise HarborFolderError(f"{opened.path} is the trial {shown_name(opened.name)}, not {shown_name(trial)}")
        chosen = opened
    if step is not None:
        step = chosen.step(step, typed=typed_step).name  # raises with the step names
    elif chosen.multi_step:
        step = chosen.steps[0].name
    return chosen, step


# --------------------------------------------------------------------------
# Reading.


def rewards_of(verifier_result: Any) -> dict[str, Any] | None:
    """The ``rewards`` of a ``verifier_result`` in result.json, when it is an object."""
    if isinstance(verifier_result, dict) and isinstance(rewards := verifier_result.get("rewards"), dict):
        return rewards
    return None


#: What the tool reads of one verifier pass in ``result.json``: the
#: ``TrialResult`` itself, or one of its ``step_results`` (Harbor 0.26.0,
#: harbor/models/trial/result.py), with the JSON kind Harbor writes there
#: (null is always allowed).
_PASS_FIELDS: dict[str, type] = {
    "agent_result": dict,
    "agent_execution": dict,
    "verifier": dict,
    "verifier_result": dict,
    "exception_info": dict,
}
_RESULT_FIELDS: dict[str, type] = {
    **_PASS_FIELDS,
    "trial_name": str,
    "task_name": str,
    "trial_uri": str,
    "started_at": str,
    "finished_at": str,
    "verifier_environment_mode": str,
    "config": dict,
    "agent_info": dict,
    "environment_setup": dict,
    "agent_setup": dict,
    "step_results": list,
}
_STEP_FIELDS: dict[str, type] = {**_PASS_FIELDS, "step_name": str}
_KIND_WORDS: dict[type, str] = {str: "a string", dict: "an object", list: "a list"}
#: Lines said of one result.json at most: a file of thousands of odd items gets a count.
SHAPE_LINES = 5


def result_shape(data: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """The ``step_results`` of ``result.json``'s object that are steps as Harbor
    writes them (an object whose ``step_name`` names a folder of ``steps/``,
    once), and what in the file is not of Harbor's shape, each in a line (at
    most SHAPE_LINES, then a count). An item passed by is said; a field of
    another kind is said and read as absent; the rest of the file still speaks."""
    if not isinstance(data, dict):
        return [], []
    problems = _field_problems(data, _RESULT_FIELDS, "")
    steps: list[dict[str, Any]] = []
    names: set[str] = set()
    items = data.get("step_results")
    for index, item in enumerate(items if isinstance(items, list) else []):
        name = item.get("step_name") if isinstance(item, dict) else None
        if not isinstance(item, dict):
            why = f"is {json_kind(item)}, not a step (an object with its step_name)"
        elif not isinstance(name, str):
            why = "has no step_name" if name is None else f"has {json_kind(name)} for its step_name"
        elif name in ("", ".", "..") or "/" in name or "\0" in name:
            why = f"names the step '{shown_name(name)}', which cannot be a folder of steps/"
        elif name in names:
            why = f"names the step '{shown_name(name)}' again"
        else:
            names.add(name)
            steps.append(item)
            problems += _field_problems(item, _STEP_FIELDS, f"step_results[{index}].")
            continue
        problems.append(f"result.json: step_results[{index}] {why}: not what Harbor writes, passed by")
    if len(problems) > SHAPE_LINES:
        problems[SHAPE_LINES - 1 :] = [
            f"result.json: {len(problems) - SHAPE_LINES + 1} more things not of Harbor's shape"
        ]
    return steps, problems


def _field_problems(record: dict[str, Any], fields: dict[str, type], where: str) -> list[str]:
    problems = [
        f"result.json: {where}{key} is {json_kind(value)}, not {_KIND_WORDS[kind]}: not what Harbor writes, "
        "read as absent"
        for key, kind in fields.items()
        if (value := record.get(key)) is not None and not isinstance(value, kind)
    ]
    rewards = untrusted.table(record, "verifier_result").get("rewards")
    if isinstance(rewards, dict):
        odd = [key for key, value in rewards.items() if not isinstance(value, (int, float))]
        if odd:
            more = f" (and {len(odd) - 1} more)" if len(odd) > 1 else ""
            problems.append(
                f"result.json: {where}verifier_result.rewards['{shown_name(odd[0])}'] is {json_kind(rewards[odd[0]])}, "
                f"not a number{more}: not what Harbor writes"
            )
    elif rewards is not None:
        problems.append(
            f"result.json: {where}verifier_result.rewards is {json_kind(rewards)}, not an object: "
            "not what Harbor writes, read as absent"
        )
    exception = untrusted.table(record, "exception_info")
    if exception and not isinstance(exception.get("exception_type"), str):
        problems.append(
            f"result.json: {where}exception_info has no exception_type (a string): not what Harbor writes, "
            "read as absent"
        )
    return problems


def read_manifest(folder: Path, trial: Path) -> tuple[JsonFile, tuple[ManifestEntry, ...]]:
    """``artifacts/manifest.json`` of a trial (or step) ``folder`` of the
    trial folder ``trial``. Each entry's ``destination`` is relative to that
    folder (Harbor writes ``artifacts/<...>``); a destination relative to
    ``artifacts/`` is accepted too, when it is there without a link on the way."""
    manifest = read_json(folder / "artifacts" / MANIFEST, (list, dict), beneath=trial)
    entries: list[ManifestEntry] = []
    data = manifest.data if isinstance(manifest.data, list) else (manifest.get("entries") or [])
    for item in data if isinstance(data, list) else []:
        if not isinstance(item, dict) or not isinstance(item.get("source"), str):
            continue
        destination = str(item.get("destination") or "")
        places = [base / destination for base in (folder, folder / "artifacts")] if destination else []
        found = [(place, look(place, trial)) for place in places]
        path = next((place for place, what in found if isinstance(what, os.stat_result)), None)
        # What is not a folder is said of where it is (artifacts/app a link), never of the other place ("missing")
        there = (place for place, what in found if isinstance(what, Read) and what.state != "missing")
        looked_at = path or next(there, None) or next(iter(places), None)
        exclude = item.get("exclude")
        entries.append(
            ManifestEntry(
                source=item["source"],
                destination=destination,
                type=str(item.get("type") or ""),
                status=str(item.get("status") or ""),
                exclude=tuple(str(e) for e in exclude) if isinstance(exclude, list) else None,
                path=path,
                looked_at=looked_at,
            )
        )
    return manifest, tuple(entries)


def _identity(folder: Path) -> FolderIdentity:
    try:
        found = os.stat(folder)
        os.scandir(folder).close()
    except OSError as exc:  # said of the folder, not of the first file a later step happens to look at
        raise HarborFolderError(f"the trial folder {folder.name} cannot be read ({exc.strerror or exc})") from None
    return folder.is_symlink(), found.st_dev, found.st_ino


def open_trial(path: Path | str) -> Trial:
    """Read a trial folder (see the module docstring for what may be missing)."""
    folder = Path(os.path.normpath(Path(path).expanduser().absolute()))
    identity = _identity(folder)
    config = read_json(folder / CONFIG, beneath=folder)
    result = read_json(folder / RESULT, beneath=folder)
    lock = read_json(folder / LOCK, beneath=folder)
    absent: list[str] = []
    notes: list[str] = []
    name = folder.name  # Harbor's <trials_dir>/<trial_name>: copies of a trial keep names apart
    if not config.ok:
        notes.append(config.problem or "config.json cannot be read")
    if result.state == "missing":
        notes.append(
            "result.json is missing: Harbor was stopped (or is still running) before the trial ended; "
            "what the sandbox did is read from verifier/ and trial.log alone"
        )
    elif not result.ok:
        notes.append(f"{result.problem}; what the sandbox did is read from verifier/ and trial.log alone")
    if lock.state == "missing":
        absent.append(
            "lock.json (written from Harbor 0.17.0): the task's digest at the run is not known, "
            "so whether the task changed since cannot be told"
        )
    elif not lock.ok:
        notes.append(lock.problem or "lock.json cannot be read")
    if result.ok:
        if "schema_version" not in result.data:
            absent.append("schema_version and reward_valid in result.json (written from Harbor 0.26.0)")
        if "verifier_environment_mode" not in result.data:
            absent.append(
                "verifier_environment_mode in result.json (written from Harbor 0.21.0): "
                "the verifier mode comes from task.toml"
            )
    log = untrusted.read_bytes(folder / TRIAL_LOG, LOG_TAIL_BYTES, keep="tail", beneath=folder)
    log_text = tail_text(log)
    if log_text is None:  # missing, or a link or a FIFO: said as what it is
        absent.append(log.problem or "trial.log")
    exception_text = read_text_tail(folder / EXCEPTION_TXT, 256 * 1024, beneath=folder)
    recorded, problems = result_shape(result.data if result.ok else None)
    notes += problems
    steps = _read_steps(folder, result, recorded, exception_text)
    for step in steps:
        if step.manifest.state == "missing" and step.artifacts_dir.is_dir():
            absent.append(
                f"{posix_from(step.artifacts_dir, folder)}/manifest.json: collected files are found "
                "by the older layout (artifacts/<name of the source>)"
            )
        if untrusted.present(step.verifier_dir / TEST_STDERR):
            notes.append(
                f"{posix_from(step.verifier_dir, folder)}/{TEST_STDERR}: Harbor 0.1.42 or older kept stderr "
                "apart; both files are read"
            )
    job_path, version = _job_of(folder)
    return Trial(
        path=folder,
        name=name,
        config=config,
        result=result,
        lock=lock,
        steps=steps,
        exception_text=exception_text,
        log_text=log_text or "",
        job_path=job_path,
        harbor_version=version,
        absent=absent,
        notes=notes,
        identity=identity,
    )


def read_trial_again(trial: Trial) -> Trial:
    """``trial``'s folder read anew, refused (HarborFolderError) when its path
    no longer leads to the folder read: the job overview never follows a trial
    folder that is a link (whoever wrote the job may point one at any folder),
    and a link or another folder put in its place since is no longer this trial."""
    again = open_trial(trial.path)
    was_link, *folder = trial.identity
    # Looked at after the reading too: a folder swapped meanwhile is refused.
    for is_link, *now in (again.identity, _identity(trial.path)):
        if is_link and not was_link:
            raise HarborFolderError(f"{trial.path.name} is now a link")
        if now != folder:
            raise HarborFolderError(f"{trial.path.name} is another folder now (replaced since it was read)")
    return again


def _job_of(trial_folder: Path) -> tuple[Path | None, str | None]:
    parent = trial_folder.parent
    if harbor_kind(parent) != "job":
        return None, None
    return parent, read_json(parent / LOCK, beneath=parent).text("harbor", "version")


def _steps_on_disk(folder: Path) -> list[str]:
    steps_dir = folder / "steps"
    try:
        return sorted(p.name for p in steps_dir.iterdir() if p.is_dir()) if steps_dir.is_dir() else []
    except OSError:
        return []


def _step_names(folder: Path, recorded: list[dict[str, Any]]) -> list[str | None]:
    """The names of the views :func:`_read_steps` makes: ``[None]`` for a single step."""
    names: list[str | None] = [item["step_name"] for item in recorded]
    names += [name for name in _steps_on_disk(folder) if name not in names]
    return names or [None]


def _read_steps(
    folder: Path, result: JsonFile, recorded: list[dict[str, Any]], exception_text: str | None
) -> list[StepView]:
    """One view per verifier pass, never none. Multi-step: the steps
    ``step_results`` records (``recorded``: :func:`result_shape`'s) in order,
    then any ``steps/<name>/`` folder that result.json does not know (a trial
    stopped mid-way); single-step: the trial's own folders."""
    steps_dir = folder / "steps"
    on_disk = _steps_on_disk(folder)
    if not recorded and not on_disk:
        manifest, entries = read_manifest(folder, folder)
        return [
            StepView(
                name=None,
                folder=folder,
                trial_path=folder,
                rewards=rewards_of(result.get("verifier_result")),
                exception=exception_record(result.get("exception_info"))
                if result.ok
                else exception_from_text(exception_text),
                agent_execution=time_span(result.get("agent_execution")),
                verifier=time_span(result.get("verifier")),
                manifest=manifest,
                artifacts=entries,
                recorded=result.ok,
            )
        ]
    views: list[StepView] = []
    seen: set[str] = set()
    for item in recorded:
        name = item["step_name"]
        seen.add(name)
        step_folder = steps_dir / name
        manifest, entries = read_manifest(step_folder, folder)
        views.append(
            StepView(
                name=name,
                folder=step_folder,
                trial_path=folder,
                rewards=rewards_of(item.get("verifier_result")),
                exception=exception_record(item.get("exception_info")),
                agent_execution=time_span(item.get("agent_execution")),
                verifier=time_span(item.get("verifier")),
                manifest=manifest,
                artifacts=entries,
            )
        )
    for name in on_disk:
        if name in seen:
            continue
        step_folder = steps_dir / name
        manifest, entries = read_manifest(step_folder, folder)
        views.append(StepView(name, step_folder, folder, None, None, None, None, manifest, entries, recorded=False))
    return views


def open_job(path: Path | str, refs: bool = False) -> Job:
    """Read a job folder and every trial in it (``refs``: keep each trial as
    a :class:`TrialRef` once read)."""
    folder = Path(os.path.normpath(Path(path).expanduser().absolute()))
    config = read_json(folder / CONFIG, beneath=folder)
    trials: list[Any] = []  # Trials, or TrialRefs
    left_out: dict[str, str] = {}
    try:
        children, problems = sub_folders(folder, left_out)
    except OSError as exc:
        raise HarborFolderError(f"{folder} cannot be listed ({exc.strerror or exc})") from None
    for child in children:
        if kind_within(child, "trial") != "trial":
            left_out[child.name] = f"{child.name}: {NOT_A_TRIAL}"
            problems.append(left_out[child.name])
            continue
        try:
            trials.append(TrialRef.read(child) if refs else open_trial(child))
        except OSError as exc:  # a folder that vanished or became unreadable meanwhile
            left_out[child.name] = f"{child.name}: cannot be read ({exc.strerror or exc})"
            problems.append(left_out[child.name])
            if refs:  # tested all the same: its turn reads it again, and its row says why when it cannot be
                trials.append(TrialRef(child, child.name, (None,)))
    if not trials:
        problems.append("no trial folders in this job (each holds trial.log, config.json, result.json)")
    return Job(
        path=folder,
        name=folder.name,  # Harbor's <jobs_dir>/<job_name>: copies of a job keep their own
        config=config,
        result=read_json(folder / RESULT, beneath=folder),
        lock=read_json(folder / LOCK, beneath=folder),
        trials=trials,
        problems=problems,
        left_out=left_out,
    )


#: A sub-folder of a job that is no trial (Harbor writes only trial folders in a job).
NOT_A_TRIAL = "not a trial folder (no trial.log, no config.json of a trial): left out"


def sub_folders(folder: Path, named: dict[str, str] | None = None) -> tuple[list[Path], list[str]]:
    """The folders in ``folder`` (a job's trials, a jobs folder's jobs), in
    name order, and a line for each link to a folder among them: whoever
    wrote the folder may point one at the user's files, so it is never read
    (``named`` gets each line by the link's name). Raises OSError when
    ``folder`` cannot be listed."""
    folders: list[Path] = []
    links: list[str] = []
    with os.scandir(folder) as scan:
        for entry in scan:
            if entry.is_dir(follow_symlinks=False):
                folders.append(Path(entry.path))
            elif entry.is_symlink() and entry.is_dir():
                found = look(Path(entry.path), folder)
                links.append(found.problem if isinstance(found, Read) and found.problem else entry.name)
                if named is not None:
                    named[entry.name] = links[-1]
    return sorted(folders), sorted(links)


NOT_A_JOB = "not a job folder (no job.log): left out"


def job_paths(folder: Path, notes: list[str] | None = None) -> list[Path]:
    """The job folders of a folder of jobs, newest name first (as ``harbor
    view`` lists them). ``notes`` gets a line for each of the others, in name
    order, as :func:`open_jobs_folder` says them: a link to a folder (never
    followed), then each folder that is no job."""
    try:
        children, links = sub_folders(folder)
    except OSError:
        return []
    jobs = [p for p in children if kind_within(p, "job") == "job"]
    if notes is not None:
        notes += links
        notes += [f"{child.name}: {NOT_A_JOB}" for child in children if child not in jobs]
    return sorted(jobs, key=lambda p: p.name, reverse=True)


def open_jobs_folder(path: Path | str, refs: bool = False) -> Job:
    """A folder of jobs read as one job whose trials are every job's: what
    ``test`` and the pytest plugin replay, and ``run --trial JOB/TRIAL`` opens."""
    folder = Path(os.path.normpath(Path(path).expanduser().absolute()))
    trials: list[Trial] = []
    problems: list[str] = []
    left_out: dict[str, str] = {}
    problems_of: dict[str, list[str]] = {}
    jobs = job_paths(folder, problems)
    for job_path in jobs:
        try:
            job = open_job(job_path, refs)
        except HarborFolderError as exc:  # a job folder that cannot be listed: said, the others go on
            problems.append(str(exc))
            continue
        trials += job.trials
        problems_of[job.name] = [f"{job.name}: {problem}" for problem in job.problems]
        problems += problems_of[job.name]
        left_out |= {f"{job.name}/{name}": f"{job.name}: {why}" for name, why in job.left_out.items()}
    missing = JsonFile(folder / CONFIG, "missing", problem="a folder of jobs has no config.json of its own")
    return Job(
        path=folder,
        name=folder.name,
        config=missing,
        result=missing,
        lock=missing,
        trials=trials,
        problems=problems or ([] if trials else ["no job folders here (each holds job.log)"]),
        jobs=jobs,
        left_out=left_out,
        problems_of=problems_of,
    )
