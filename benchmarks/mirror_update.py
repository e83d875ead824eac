"""The copy sandbox's mirror after 5 of 100,000 files changed: only they are copied.

One row. The 100,000-file workspace of the "scale" rows (1,000 folders of 100
files of 100 bytes) is mirrored once by a session (``VERIFIER_TUI_SANDBOX=copy``,
its first run walks it all); then each round rewrites 5 files, hands the
session the change as the watcher would (``Session.note_change``) and times
the next run. Interleaved with the same on the small task (five files). The
sessions run in a child on the venv's interpreter (this harness has no
Textual and no verifier_tui); the child also checks what the suite used to
check at this size: no re-run walks, each copies exactly the 5 files, and
after the rounds the mirror holds the user's bytes with no other file
rewritten (any of these failing makes the row say so instead of a time).

Goal: at most 60 ms over the small task, as the "scale" row's watch re-run:
a re-run costs what changed, not what exists.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from harness import Bench, BenchmarkError, Goal, Row
from layouts import HUNDRED_K, SMALL_FILES, build_workspace, change_files, small_task

NAME = "mirror"
CHANGED = 5


def measure(bench: Bench) -> list[Row]:
    big = build_workspace(bench.folder("workspaces") / HUNDRED_K.name, HUNDRED_K)
    where = bench.folder("mirror")
    rounds = bench.rounds(20, 3)
    done = subprocess.run(
        [bench.venv_python, __file__, "--child", bench.python, str(where), str(big), str(rounds)],
        env=bench.tool_env("copy"),
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if done.returncode != 0:
        raise BenchmarkError((done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1])
    samples = json.loads(done.stdout)
    return [
        Row(
            "mirror-100k",
            "11",
            f"run after {CHANGED} of {HUNDRED_K.label} changed, the copy sandbox's mirror (Session.note_change)",
            anchor="the same on the small task",
            values=samples["big"],
            anchor_values=samples["small"],
            goal=Goal.adds(60),
            notes=[f"first run walked and copied {samples['first_copied']:,} files"],
        )
    ]


# -- the child, on the venv's interpreter ----------------------------------------------------------------


def identities(root: Path) -> dict[str, tuple]:
    """Every file's inode, change time, size and modification time: what any write to it changes."""
    out: dict[str, tuple] = {}
    for folder, _, files in os.walk(root):
        for name in files:
            st = os.lstat(os.path.join(folder, name))
            out[os.path.relpath(os.path.join(folder, name), root)] = (
                st.st_ino,
                st.st_ctime_ns,
                st.st_size,
                st.st_mtime_ns,
            )
    return out


def child(python: str, where: Path, big: Path, rounds: int) -> dict:
    import time

    from verifier_tui.engine.changes import Change
    from verifier_tui.engine.model import Outcome
    from verifier_tui.engine.session import Options, Session

    small = small_task(where)
    small_workspace = small / "cases" / "only" / "workspace"

    def change_small(number: int) -> list[Path]:
        paths = [small_workspace / f"file{index}.txt" for index in range(SMALL_FILES)]
        for path in paths:
            path.write_text(f"round {number}\n", encoding="utf-8")
        return paths

    sides = {
        "big": (small_task(where, "for-big"), big, lambda number: change_files(big, HUNDRED_K, CHANGED, number)),
        "small": (small, small_workspace, change_small),
    }
    sessions, samples, edited, first_copied = {}, {"big": [], "small": []}, set(), 0
    for side, (task, workspace, _) in sides.items():
        session = Session(task, Options(python=python, case="only", workspace=workspace))
        spec = session.spec()
        session.follow_changes(True)  # as under a watcher: changes come from note_change, not a walk
        if session.run(spec).outcome is not Outcome.REWARD_WRITTEN:
            raise SystemExit(f"the first run on the {side} workspace did not write a reward")
        mirror = session.stage_for(spec).workspace
        if side == "big":
            first_copied = mirror.files_copied
            before = identities(mirror.target)
        sessions[side] = (session, spec, mirror)
    try:
        for number in range(rounds + 1):  # round 0 warms up
            for side in ("big", "small") if number % 2 else ("small", "big"):
                session, spec, mirror = sessions[side]
                paths = sides[side][2](number)
                if side == "big":
                    edited.update(paths)
                session.note_change(Change(paths=frozenset(paths), deleted=frozenset(), recreated=frozenset()))
                started = time.perf_counter()
                result = session.run(spec)
                took = (time.perf_counter() - started) * 1000
                if result.outcome is not Outcome.REWARD_WRITTEN or mirror.walked or mirror.files_copied != len(paths):
                    raise SystemExit(
                        f"round {number} on the {side} workspace: {result.outcome.slug}, walked "
                        f"{mirror.walked}, copied {mirror.files_copied} files for {len(paths)} changed"
                    )
                if number:
                    samples[side].append(took)
        big_mirror = sessions["big"][2]
        after = identities(big_mirror.target)
        rels = {os.path.relpath(path, big) for path in edited}
        rewritten = {rel for rel in before if before[rel] != after.get(rel)}
        if after.keys() != before.keys() or rewritten != rels:
            raise SystemExit(f"the mirror lost, gained or rewrote files nobody changed: {sorted(rewritten - rels)[:5]}")
        if any((big_mirror.target / rel).read_bytes() != (big / rel).read_bytes() for rel in rels):
            raise SystemExit("a changed file's mirror copy differs from the user's file")
    finally:
        for session, _, _ in sessions.values():
            session.close()
    return {"big": samples["big"], "small": samples["small"], "first_copied": first_copied}


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        python, where, big, rounds = sys.argv[2:6]
        print(json.dumps(child(python, Path(where), Path(big), int(rounds))))
        sys.exit(0)
    from run_all import main

    sys.exit(main(["--only", NAME] + sys.argv[1:]))
