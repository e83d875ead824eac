"""``verifier-tui audit TASK``: the verifier run on what an agent's failure
or gaming leaves, each probe flagged when it scores as high as a passing case.

A verifier is trusted only as far as its cases exercise it: one that returns
1.0 when the expected file is missing passes every case a newcomer writes
(they all have the file) and pays the empty workspace of an agent that did
nothing. The probes, each a run through the task's own session (the same
sandbox, interpreter and limits as its cases):

* an empty workspace;
* each case's workspace with every file emptied (kept, 0 bytes);
* each case's workspace with one file removed, for each of its files
  (:data:`REMOVED_AT_MOST` per case);
* an empty workspace with reward files planted in ``/logs/verifier`` before
  the run, as an agent sharing the reward folder could (Harbor's shared
  mode): the runner must clear them, so the verdict must be the verifier's.

The bar is the case whose ``expected.json`` asks for the most; a probe that
reaches it, as Harbor's mean counts rewards (:class:`Bar`), is flagged with
that case. The bar case runs first, as it is: a verifier that does not pay it
(that raises on every input, or cannot be imported) would pay no probe either,
and its probes are not run. Each probe's workspace is a copy
in the session's own scratch folder, made only while its run needs it (at
most ``jobs`` at once): nothing is written into the task.
"""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from verifier_tui.engine.model import Outcome, RunResult
from verifier_tui.engine.record import record, replace

if TYPE_CHECKING:
    from collections.abc import Callable

    from verifier_tui.engine.session import Session
    from verifier_tui.engine.task.cases import Case

REMOVED_AT_MOST = 20
"""Probes of one case's workspace with a file removed, at most (its first files by name)."""

TOO_DEEP = "folders nest past what Python's recursion limit lets a walk reach"
"""Why a case's workspace cannot be listed: os.walk recurses a folder at a time."""

PLANTED = (("reward.json", b'{ "reward" : 1.0 }\n'), ("reward.txt", b" 1.0 \n"))
"""What an agent would plant for a perfect score, in bytes no runner writes
(``json.dumps``, ``repr`` of a float): a verdict read from these very bytes
is the planted file left by the runner, never the verifier's own 1.0."""


@record(frozen=True)
class Probe:
    """A probe's workspace as a recipe (none: the run's own empty scratch
    workspace; else a case's, every file emptied or one file left out), made
    only while its run needs it."""

    name: str
    case: Case | None = None  # whose workspace, response and task data it runs with
    emptied: bool = False
    without: str | None = None
    planted: tuple[tuple[str, bytes], ...] = ()  # (name, bytes) put in the reward folder before the run


@record(frozen=True)
class Bar:
    """The passing case a probe must not reach: the one whose expected.json
    asks for the most (the largest sum of its rewards, above 0), and its own
    run (None until it ran)."""

    case: str
    rewards: dict[str, float]
    run: RunResult | None = None
    # Its expected.json's "tolerance": the case passes that far below each
    # reward (model.same_rewards), so a probe paid that much is paid as it is.
    tolerance: float = 0.0

    @property
    def failed(self) -> bool:
        """It ran and did not get what its expected.json asks: the probes cannot be judged by it."""
        return self.run is not None and self.run.expected_matched is not True

    def reached_by(self, rewards: dict[str, Any] | None) -> bool:
        """Whether a run's rewards are as high, as Harbor's mean counts them
        (``aggregate_reward_dicts``): with one key, the run's value of it, or
        its lone reward whatever its name; with several, each key, one the run
        lacks counting 0."""
        if not rewards:
            return False
        if len(self.rewards) == 1:
            ((key, wanted),) = self.rewards.items()
            return _at_least(rewards.get(key, lone(rewards)), wanted - self.tolerance)
        return all(_at_least(rewards.get(key, 0), wanted - self.tolerance) for key, wanted in self.rewards.items())

    def to_json(self) -> dict[str, Any]:
        ran = self.run
        got = None
        if ran is not None:
            got = {
                "passed": not self.failed,
                "rewards": ran.verdict.rewards,
                "verdict_error": ran.verdict.error,
                "outcome": ran.outcome.slug,
                "raised": raised(ran),
            }
        return {
            "case": self.case,
            "reward": lone(self.rewards),
            "rewards": self.rewards,
            "tolerance": self.tolerance or None,
            "run": got,
        }


def raised(result: RunResult) -> str | None:
    """The type of the exception the verifier's traceback ends with (None: it ended without one)."""
    from verifier_tui.engine.harbor.runner_output import parse_runner_output

    found = parse_runner_output(result.stderr.text).traceback
    return found.bare_type if found is not None else None


@record
class Finding:
    """A probe's run, and the passing case it scores as high as (None: it does not)."""

    probe: str
    result: RunResult
    matches: str | None = None
    planted_verdict: str | None = None  # the planted file the verdict was read from: the runner left it

    @classmethod
    def of(cls, probe: Probe, result: RunResult) -> Finding:
        if result.outcome is Outcome.COULD_NOT_START:
            # No runner ran (a tiny ulimit -n): its reward folder holds the probe's own planted files, which
            # Harbor would have deleted before test.sh, so the verdict is Harbor's on an empty folder, on every
            # face; a probe that is not judged is never flagged.
            from verifier_tui.engine.verdict import no_reward_file

            return cls(probe.name, replace(result, verdict=no_reward_file()))
        source = result.verdict.source
        kept = {name: data.decode() for name, data in probe.planted}.get(source) if source else None
        left = any(f.name == source and f.kind == "file" and f.text == kept for f in result.reward_files)
        return cls(probe.name, result, planted_verdict=source if kept is not None and left else None)

    @property
    def rewards(self) -> dict[str, Any] | None:
        return self.result.verdict.rewards

    def to_json(self) -> dict[str, Any]:
        rewards = self.rewards
        return {
            "probe": self.probe,
            "reward": lone(rewards),
            "rewards": rewards,
            "verdict_error": self.result.verdict.error,
            "outcome": self.result.outcome.slug,
            "flagged": self.matches is not None,
            "matches": self.matches,
            "planted_verdict": self.planted_verdict,
            # as the run document has it: where a probe that timed out was stuck
            "stuck_at": self.result.stuck_at.to_json() if self.result.stuck_at else None,
        }


def lone(rewards: dict[str, Any] | None) -> Any:
    """The one reward of a dict that holds one (whatever its key), else None."""
    return next(iter(rewards.values())) if rewards and len(rewards) == 1 else None


def _at_least(value: Any, wanted: float) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value >= wanted


def bar(cases: list[Case]) -> Bar | None:
    """The passing case to beat (None: no case's expected.json asks for a reward above 0)."""
    best: Bar | None = None
    for case in cases:
        expectation = case.expected
        expected = expectation.rewards if expectation is not None else None
        if expectation is None or not expected or not any(value > 0 for value in expected.values()):
            continue
        if best is None or sum(expected.values()) > sum(best.rewards.values()):
            best = Bar(case.name, dict(expected), tolerance=expectation.tolerance or 0.0)
    return best


def probes(cases: list[Case], unread: list[str] | None = None, unprobed: list[str] | None = None) -> list[Probe]:
    """Every probe of the task's cases, in the order they are said; a folder
    of a case's workspace that cannot be listed is said in ``unread``, the
    files past the :data:`REMOVED_AT_MOST` removed one at a time in ``unprobed``."""
    out = [Probe("an empty workspace"), Probe("reward files planted in /logs/verifier", planted=PLANTED)]
    for case in cases:
        failed: list[OSError] = []
        files = _files(case.workspace, failed) if case.workspace is not None and case.workspace.is_dir() else []
        if case.workspace is not None and unread is not None:
            unread += [f"case {case.name}: {_unread_words(case.workspace, exc)}" for exc in failed]
        if files or failed:
            out.append(Probe(f"{case.name}: every file emptied", case, emptied=True))
            out += [Probe(f"{case.name}: without {rel}", case, without=rel) for rel in files[:REMOVED_AT_MOST]]
        if len(files) > REMOVED_AT_MOST and unprobed is not None:  # the file the verifier reads may be among them
            rest = files[REMOVED_AT_MOST:]
            which = rest[0] if len(rest) == 1 else f"{rest[0]} to {rest[-1]}"
            unprobed.append(
                f"case {case.name}: its workspace holds {len(files)} files: a probe removes each of the first "
                f"{REMOVED_AT_MOST} by name, none of the other {len(rest)} ({which})"
            )
    return out


def _files(folder: Path, failed: list[OSError]) -> list[str]:
    """The regular files of ``folder`` (relative, sorted), never through a
    link; a folder that cannot be listed (chmod 000) is put in ``failed``
    (os.walk would pass over it in silence, and its files with it)."""
    found = []
    try:
        for root, dirs, names in os.walk(folder, onerror=failed.append):
            dirs.sort()
            for name in sorted(names):
                path = Path(root) / name
                if path.is_file() and not path.is_symlink():
                    found.append(path.relative_to(folder).as_posix())
    except RecursionError:  # os.walk recurses a folder at a time (up to Python 3.12): an agent may leave any depth
        failed.append(OSError(errno.ELOOP, TOO_DEEP))
    return found


def _unread_words(workspace: Path, exc: OSError) -> str:
    """A folder of a case's workspace that cannot be listed, and what that costs the audit."""
    rel = Path(exc.filename).relative_to(workspace).as_posix() if exc.filename else "."
    what = "its workspace" if rel == "." else f"its workspace's folder {rel}"
    cost = "its files have no probe of their own, and the case's probes cannot copy its workspace whole"
    if exc.strerror == TOO_DEEP:
        return f"its workspace's {TOO_DEEP}: {cost}"
    return f"{what} cannot be read ({exc.strerror or exc}): {cost}"


def _unlisted(source: Path) -> Callable[[OSError], None]:
    """os.walk's ``onerror`` for a probe's copy: a folder it cannot list
    refuses the probe, as an unreadable file does (the copy would not be whole)."""
    from verifier_tui.engine.sandbox.stage import not_whole

    def refuse(exc: OSError) -> None:
        rel = Path(exc.filename).relative_to(source).as_posix() if exc.filename else "."
        raise not_whole("the workspace", rel, exc) from None

    return refuse


def make_workspace(probe: Probe, target: Path) -> Path | None:
    """``probe``'s workspace made at ``target`` (None: the run's own empty
    one). Links are copied as links, files by :func:`copy_file` (a sparse
    file stays sparse, a FIFO put in a file's place never blocks), an emptied
    file is made empty without reading it; what is neither (a FIFO, a socket)
    is left out, as a run's staging leaves it."""
    from verifier_tui.engine.sandbox import mirror
    from verifier_tui.engine.sandbox.stage import not_whole

    if probe.case is None or probe.case.workspace is None:
        return None
    try:
        _copy_tree(probe, probe.case.workspace, target)
    except RecursionError:
        raise not_whole("the workspace", "", OSError(errno.ELOOP, mirror.TOO_DEEP)) from None
    return target


def _copy_tree(probe: Probe, source: Path, target: Path) -> None:
    """:func:`make_workspace`'s copy, which os.walk recurses into a folder at a time."""
    from verifier_tui.engine.sandbox.file_copy import NotAFile, copy_file
    from verifier_tui.engine.sandbox.stage import not_whole

    made: dict[tuple[int, int], Path] = {}  # a hard link is made as one: N names of a file are not N copies
    for root, dirs, names in os.walk(source, onerror=_unlisted(source)):
        here = Path(root)
        rel = here.relative_to(source).as_posix()
        into = target / rel
        # Any entry that cannot be made (a file unreadable; no room, or no inode, for a file, a
        # folder, a link) refuses this probe as a run's staging refuses it, and the audit goes on.
        try:
            into.mkdir(mode=0o700)
            for name in sorted(names + [d for d in dirs if (here / d).is_symlink()]):
                path, rel = here / name, (here / name).relative_to(source).as_posix()
                if rel == probe.without:
                    continue
                if path.is_symlink():
                    os.symlink(os.readlink(path), into / name)
                elif path.is_file():
                    st = path.stat()
                    first = made.get((st.st_dev, st.st_ino))
                    if first is not None:
                        os.link(first, into / name)
                    elif probe.emptied:
                        os.close(os.open(into / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
                    else:
                        try:
                            copy_file(str(path), str(into / name), replace=False)
                        except NotAFile:  # replaced by something else since it was listed
                            pass
                    if st.st_nlink > 1 and first is None and (into / name).exists():
                        made[(st.st_dev, st.st_ino)] = into / name
        except OSError as exc:
            raise not_whole("the workspace", rel, exc) from None
        dirs[:] = sorted(d for d in dirs if not (here / d).is_symlink())


async def arun(
    session: Session,
    chosen: list[Probe],
    jobs: int,
    ended: Callable[[Finding | Bar], object] = lambda _finding: None,
) -> tuple[list[Finding], Bar | None]:
    """The ``chosen`` probes of ``session``'s task (:func:`probes`) run, at
    most ``jobs`` at once, and the bar they were judged by, with its own run;
    ``ended`` is told of the bar's run and each finding as it ends (what a stop
    leaves). None is run when the bar case fails."""
    import asyncio

    from verifier_tui.engine.sandbox.stage import StagingError

    cases = session.task.cases
    judged = bar(cases)
    gate = asyncio.Semaphore(max(1, jobs))
    bar_case = None
    if judged is not None:
        bar_case = next(case for case in cases if case.name == judged.case)
        judged = replace(judged, run=await session.arun(session.spec_for_case(bar_case), trigger="audit", gate=gate))
        ended(judged)
        if judged.failed:
            return [], judged
    room = asyncio.Semaphore(max(1, jobs))  # workspaces made at once: a copy lasts as long as its run
    where = session.scratch_folder()  # the tool's own, swept at the next start if this one is killed

    # The probes of no case (an empty workspace, planted rewards) take the bar case's task data, the task
    # they are judged as, and no response: an agent that did nothing said nothing, and Harbor, which
    # publishes the task, never passes one. With no bar, the first case that can be read gives it (a task
    # of rows has no task without one: its verifier raised for want of a row); none only when none can.
    given = bar_case or next((case for case in cases if case.unreadable is None), None)
    caseless = replace(session.spec_for_case(given) if given is not None else session.spec(), response=None)

    async def one(index: int, probe: Probe) -> Finding:
        spec = session.spec_for_case(probe.case) if probe.case is not None else caseless
        async with room:
            target = where / f"audit-{index}"
            try:
                try:
                    workspace, unmade = await asyncio.to_thread(make_workspace, probe, target), None
                except StagingError as exc:  # this probe does not start, as its case's own run would not
                    workspace, unmade = None, str(exc)
                spec = replace(
                    spec, workspace=workspace, case=None, expected=None, planted=probe.planted, start_error=unmade
                )
                result = await session.arun(spec, trigger="audit", gate=gate)
            finally:
                await asyncio.to_thread(shutil.rmtree, target, True)
        finding = Finding.of(probe, result)
        if judged is not None and judged.reached_by(finding.rewards):
            finding.matches = judged.case
        ended(finding)
        return finding

    return list(await asyncio.gather(*(one(index, probe) for index, probe in enumerate(chosen)))), judged
