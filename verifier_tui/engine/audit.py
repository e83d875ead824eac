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

The bar is the highest reward a case's ``expected.json`` asks for; a probe
that reaches it is flagged with that case. Each probe's workspace is a copy
in the tool's own temporary folder: nothing is written into the task.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from verifier_tui.engine.model import RunResult
from verifier_tui.engine.record import record, replace

if TYPE_CHECKING:
    from verifier_tui.engine.session import Session
    from verifier_tui.engine.task.cases import Case

REMOVED_AT_MOST = 20
"""Probes of one case's workspace with a file removed, at most (its first files by name)."""

PLANTED = (("reward.json", b'{"reward": 1.0}'), ("reward.txt", b"1.0"))
"""What an agent would plant for a perfect score."""


@record(frozen=True)
class Probe:
    name: str
    workspace: Path
    case: Case | None = None  # the case whose response and task data it runs with
    planted: tuple[tuple[str, bytes], ...] = ()  # (name, bytes) put in the reward folder before the run


@record
class Finding:
    """A probe's run, and the passing case it scores as high as (None: it does not)."""

    probe: str
    result: RunResult
    matches: str | None = None

    @property
    def reward(self) -> float | None:
        rewards = self.result.verdict.rewards
        return headline(rewards) if rewards is not None else None

    def to_json(self) -> dict[str, Any]:
        return {
            "probe": self.probe,
            "reward": self.reward,
            "verdict_error": self.result.verdict.error,
            "outcome": self.result.outcome.slug,
            "flagged": self.matches is not None,
            "matches": self.matches,
        }


def headline(rewards: dict[str, Any]) -> float | None:
    """The reward Harbor's job means count: ``reward``, else a lone key's."""
    value = rewards.get("reward", next(iter(rewards.values())) if len(rewards) == 1 else None)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def bar(cases: list[Case]) -> tuple[str, float] | None:
    """The passing case to beat: the one whose expected.json asks for the
    highest reward, above 0 (None: no case asks for a reward)."""
    best: tuple[str, float] | None = None
    for case in cases:
        expected = case.expected.rewards if case.expected is not None else None
        value = headline(expected) if expected else None
        if value is not None and value > 0 and (best is None or value > best[1]):
            best = (case.name, value)
    return best


def probes(cases: list[Case], scratch: Path) -> list[Probe]:
    """Every probe's workspace, made in ``scratch`` (the tool's own)."""
    empty = scratch / "empty"
    empty.mkdir()
    out = [Probe("an empty workspace", empty), Probe("reward files planted in /logs/verifier", empty, planted=PLANTED)]
    for index, case in enumerate(c for c in cases if c.workspace is not None and c.workspace.is_dir()):
        assert case.workspace is not None
        files = _files(case.workspace)
        if not files:
            continue
        emptied = _copy(case.workspace, scratch / f"{index}-emptied")
        for rel in files:
            (emptied / rel).write_bytes(b"")
        out.append(Probe(f"{case.name}: every file emptied", emptied, case))
        for number, rel in enumerate(files[:REMOVED_AT_MOST]):
            without = _copy(case.workspace, scratch / f"{index}-without-{number}")
            (without / rel).unlink()
            out.append(Probe(f"{case.name}: without {rel}", without, case))
    return out


def _files(folder: Path) -> list[str]:
    """The regular files of ``folder`` (relative, sorted), never through a link."""
    found = []
    for root, dirs, names in os.walk(folder):
        dirs.sort()
        for name in sorted(names):
            path = Path(root) / name
            if path.is_file() and not path.is_symlink():
                found.append(path.relative_to(folder).as_posix())
    return found


def _copy(source: Path, target: Path) -> Path:
    shutil.copytree(source, target, symlinks=True, ignore_dangling_symlinks=True)
    return target


async def arun(session: Session, jobs: int) -> tuple[list[Finding], tuple[str, float] | None]:
    """Every probe of ``session``'s task run, at most ``jobs`` at once, and the bar they were judged by."""
    import asyncio

    cases = session.task.cases
    judged = bar(cases)
    with tempfile.TemporaryDirectory(prefix="verifier-tui-audit-") as where:
        gate = asyncio.Semaphore(max(1, jobs))
        found = probes(cases, Path(where))

        async def one(probe: Probe) -> Finding:
            spec = session.spec_for_case(probe.case) if probe.case is not None else session.spec()
            spec = replace(spec, workspace=probe.workspace, case=None, expected=None, planted=probe.planted)
            result = await session.arun(spec, trigger="audit", gate=gate)
            finding = Finding(probe.name, result)
            if judged is not None and finding.reward is not None and finding.reward >= judged[1]:
                finding.matches = judged[0]
            return finding

        return list(await asyncio.gather(*(one(probe) for probe in found))), judged
