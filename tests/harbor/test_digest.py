"""The task's content digest, computed as Harbor 0.26.0's Packager does, and
what can be known of what changed since a run."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import time
import warnings

import pathspec
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.helpers.commands import no_traceback, run_tool
from tests.helpers.harbor import make_job
from tests.helpers.tasks import nested_folders
from verifier_tui.engine.harbor.digest import compare_task, task_digest
from verifier_tui.engine.harbor.folders import open_harbor
from verifier_tui.engine.harbor.walkthrough import walk_trial
from verifier_tui.engine.task.ignore_rules import IgnoreRules


@pytest.mark.parametrize("job", ["oracle-pass", "nop-fail", "separate-mode", "multi-step"])
def test_the_real_tasks_reproduce_their_lock_json_digests(real, job):
    trial = next(p for p in (real / "jobs" / job).iterdir() if p.is_dir())
    lock = json.loads((trial / "lock.json").read_text())
    task = real / lock["task"]["path"]
    assert task_digest(task).digest == lock["task"]["digest"]
    walk = walk_trial(open_harbor(trial)[0])
    assert walk.location.path == task and walk.drift.same is True and walk.drift.sentences() == []


def test_the_files_hashed_are_harbors_selection(tmp_path):
    task = tmp_path / "t"
    for rel in [
        "task.toml",
        "instruction.md",
        "README.md",
        "notes.txt",
        "tests/test.sh",
        "tests/verifier.py",
        "tests/__pycache__/verifier.cpython-311.pyc",
        "tests/x.pyc",
        "tests/.DS_Store",
        "tests/a.swp",
        "solution/solve.sh",
        "solution/solve.sh~",
        "environment/Dockerfile",
        "environment/.harborignore",
        "steps/one/instruction.md",
        "other/data.csv",
    ]:
        (task / rel).parent.mkdir(parents=True, exist_ok=True)
        (task / rel).write_text(rel)
    assert list(task_digest(task).files) == [
        "README.md",
        "environment/Dockerfile",
        "instruction.md",
        "solution/solve.sh",
        "steps/one/instruction.md",
        "task.toml",
        "tests/test.sh",
        "tests/verifier.py",
    ]


def test_a_gitignore_replaces_harbors_default_ignores(tmp_path):
    task = tmp_path / "t"
    (task / "tests").mkdir(parents=True)
    for name in ("verifier.py", "x.pyc", "big.bin"):
        (task / "tests" / name).write_text(name)
    (task / ".gitignore").write_text("*.bin\n")
    assert list(task_digest(task).files) == ["tests/verifier.py", "tests/x.pyc"]


def test_harborignore_rules_apply_below_tests_and_are_inherited(tmp_path):
    task = tmp_path / "t"
    files = [
        "tests/verifier.py",
        "tests/data/big.json",
        "tests/data/keep.json",
        "tests/sub/scratch.log",
        "tests/sub/ok.py",
        "solution/solve.sh",
        "solution/out.log",
        "environment/build.log",
    ]
    for rel in files:
        (task / rel).parent.mkdir(parents=True, exist_ok=True)
        (task / rel).write_text(rel)
    (task / "tests" / ".harborignore").write_text("data/\n*.log\n")
    (task / "solution" / ".harborignore").write_text("out.log\n")
    kept = list(task_digest(task).files)
    # environment/ is outside the scopes .harborignore governs; the rule files themselves never count.
    assert kept == ["environment/build.log", "solution/solve.sh", "tests/sub/ok.py", "tests/verifier.py"]


def test_links_count_as_harbor_counts_them(tmp_path):
    task = tmp_path / "t"
    (task / "tests").mkdir(parents=True)
    (task / "tests" / "verifier.py").write_text("v")
    (tmp_path / "shared.py").write_text("outside")
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "inner.py").write_text("inner")
    os.symlink(tmp_path / "shared.py", task / "tests" / "shared.py")  # a linked file: its target's bytes
    os.symlink(tmp_path / "lib", task / "tests" / "lib")  # a linked folder: not descended
    digest = task_digest(task)
    assert digest.files == ("tests/shared.py", "tests/verifier.py")
    (tmp_path / "shared.py").write_text("changed")
    assert task_digest(task).digest != digest.digest


# Vectors checked against pathspec 1.1.1 (Harbor 0.26.0's dependency):
# PathSpec.from_lines("gitignore", ...) and GitIgnoreSpec.from_lines(...).
@pytest.mark.parametrize(
    "lines, path, basic, git",
    [
        (["__pycache__/"], "a/__pycache__/y.py", True, True),
        (["*.md", "!keep.md"], "docs/keep.md", False, False),
        (["data/", "!data/keep.txt"], "data/keep.txt", False, False),
        (["data/", "!data/keep.txt", "**/"], "data/keep.txt", True, False),
        (["!data/keep.txt", "*/"], "data/keep.txt", True, False),
        (["/build"], "a/build", None, None),
        (["/build"], "build/x", True, True),
        (["a/**/b"], "a/x/y/b", True, True),
        (["foo[.txt"], "foo[.txt", True, None),
        (["x/*"], "x/y/z", None, True),
        (["/"], "anything", True, None),
        (["*.log", "!/"], "x.log", False, True),
        (["*", "*/", "!keep/", "docs/*.md"], "keep/x", False, True),
    ],
)
def test_ignore_rules_match_as_pathspec_does(lines, path, basic, git):
    assert IgnoreRules(lines).check(path) is basic
    assert IgnoreRules(lines, git_flavour=True).check(path) is git


def _job_for(task, runs, **trial):
    make_job(
        runs / "jobs" / "j",
        {
            "demo__aaaaaaa": dict(
                task=task,
                rewards={"reward": 1.0},
                verifier_files={"test-stdout.txt": "", "reward.txt": "1.0"},
                **trial,
            )
        },
    )
    return open_harbor(runs / "jobs" / "j" / "demo__aaaaaaa")[0]


def test_a_task_changed_since_the_run_names_what_changed(task, runs):
    demo = task()
    trial = _job_for(demo, runs)
    assert walk_trial(trial).drift.same is True
    later = time.time() + 5
    (demo / "tests" / "verifier.py").write_text("def verify(workspace):\n    return 0.0\n")
    os.utime(demo / "tests" / "verifier.py", (later, later))
    drift = walk_trial(trial).drift
    assert drift.same is False
    assert drift.modified_since == ("tests/verifier.py",)
    assert drift.tests_changed is True
    words = " ".join(drift.sentences())
    assert "the task changed since the run" in words and "tests/verifier.py" in words
    assert "tests/ changed" in words


def test_a_change_outside_tests_says_tests_did_not_change(task, runs):
    demo = task()
    trial = _job_for(demo, runs)
    later = time.time() + 5
    (demo / "task.toml").write_text('version = "1.1"\n')
    os.utime(demo / "task.toml", (later, later))
    drift = walk_trial(trial).drift
    assert drift.same is False and drift.tests_changed is False
    assert "tests/ did not change" in " ".join(drift.sentences())


def test_a_task_copied_since_the_run_names_no_file_and_does_not_blame_tests(task, runs):
    """Every file newer than the trial (a copy or checkout made since, without the times, as the
    bundled harbor-0.26 tasks are): the times name nothing, so no file and no "tests/ changed"."""
    demo = task(files={"helper.py": "X = 1\n"})
    trial = _job_for(demo, runs)
    later = time.time() + 5
    (demo / "task.toml").write_text('version = "1.1"\n')  # the one real change, outside tests/
    for path in demo.rglob("*"):
        if path.is_file():
            os.utime(path, (later, later))
    drift = walk_trial(trial).drift
    assert drift.same is False
    assert drift.modified_since == () and drift.tests_changed is None
    words = " ".join(drift.sentences())
    assert "which files changed cannot be told from their times" in words
    assert "tests/ changed" not in words


def test_a_removed_file_shows_as_a_change_nothing_can_name(task, runs):
    demo = task(files={"helper.py": "X = 1\n"})
    trial = _job_for(demo, runs)
    (demo / "tests" / "helper.py").unlink()
    drift = walk_trial(trial).drift
    assert drift.same is False and drift.modified_since == () and drift.tests_changed is None
    assert "cannot be known" in " ".join(drift.sentences())


def test_a_task_in_a_repository_runs_nothing_of_its_git_config(task, runs, tmp_path):
    """A task found beside a job someone sent is theirs, .git/config too:
    asking Git what changed ran the command its core.fsmonitor names (or a
    filter's), on this machine, outside any sandbox."""
    demo = task()
    marker = tmp_path / "ran"
    subprocess.run(["git", "-C", str(demo), "init", "-q"], check=True)
    subprocess.run(["git", "-C", str(demo), "config", "core.fsmonitor", f"touch {marker}; false #"], check=True)
    trial = _job_for(demo, runs)
    (demo / "tests" / "verifier.py").write_text("def verify(workspace):\n    return 0.5\n")
    drift = compare_task(demo, trial.recorded_digest, trial.started_at)
    assert drift.same is False and drift.tests_changed is True
    assert not marker.exists()


def test_rules_read_in_threads_leave_the_users_warning_filters_alone():
    """The TUI reads ignore rules in threads. Brackets ``re`` warns of (``[[a]x``) were compiled
    inside ``warnings.catch_warnings()``, which swaps the process's filters: two threads at once left
    'ignore FutureWarning' in place for good (a user's ``-W error::FutureWarning`` then did nothing)
    and let one thread's warning through, raised as an error."""
    code = textwrap.dedent(
        """
        import sys, threading, warnings
        sys.setswitchinterval(1e-6)
        from verifier_tui.engine.task.ignore_rules import IgnoreRules
        before = list(warnings.filters)
        lines = [f"f{i}[[a]x" for i in range(3000)]
        threads = [threading.Thread(target=IgnoreRules, args=(lines,), kwargs={"git_flavour": True}) for _ in range(2)]
        [t.start() for t in threads]
        [t.join() for t in threads]
        assert warnings.filters == before, [f for f in warnings.filters if f not in before]
        try:
            warnings.warn("the user's own", FutureWarning)
        except FutureWarning:
            print("raised as the user asked")
        """
    )
    done = subprocess.run(
        [sys.executable, "-W", "error::FutureWarning", "-c", code], capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "raised as the user asked\n", "")


_BRACKETS = st.text(st.sampled_from("[]!^-&~|\\az/*"), min_size=1, max_size=12)
_NAMES = st.text(st.sampled_from("[]!^-&~|\\az"), min_size=1, max_size=4)


def _pathspec_verdict(lines: list[str], relative: str, *, git_flavour: bool) -> bool | None | str:
    """What pathspec says of the path, or "refused" where it cannot read the lines."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pathspec's own regexes warn
        try:
            spec = (
                pathspec.GitIgnoreSpec.from_lines(lines)
                if git_flavour
                else pathspec.PathSpec.from_lines("gitignore", lines)
            )
        except (ValueError, re.error):
            return "refused"
    return spec.check_file(relative).include


def _our_verdict(lines: list[str], relative: str, *, git_flavour: bool) -> bool | None | str:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rules = IgnoreRules(lines, git_flavour=git_flavour)
    return "refused" if rules.refused else rules.check(relative)


@given(lines=st.lists(_BRACKETS, min_size=1, max_size=3), path=st.lists(_NAMES, min_size=1, max_size=3))
@example(lines=["[[a]x"], path=["ax"])
@example(lines=["[a--]", "[&&b]", "[~~]", "[||]", "[!--z]"], path=["-"])
def test_brackets_match_as_pathspec_does_with_no_warning(lines, path):
    """Brackets holding what ``re`` warns of (``[[``, ``--``, ``&&``, ``~~``, ``||``) match the
    names pathspec 1.1.1 (Harbor 0.26.0's) matches, and compiling them warns of nothing."""
    relative = "/".join(path)
    for git_flavour in (False, True):
        expected = _pathspec_verdict(lines, relative, git_flavour=git_flavour)
        assert _our_verdict(lines, relative, git_flavour=git_flavour) == expected


def test_a_replay_reads_the_tasks_gitignore_once(task, runs, monkeypatch):
    """Opening a trial for a replay found its task (its digest), loaded it (Harbor's refusals),
    compared its digest with lock.json's and opened the replay's session on it, each reading the
    task's .gitignore anew (up to 16 MB each time): one replaced meanwhile gave the walk one file
    and the replay another (loadable and unchanged, then refused). Read once, they agree whatever
    happens to the file after, and the trial (its /app captured) replays."""
    from tests.helpers.harbor import READS_HELLO
    from verifier_tui.engine import untrusted
    from verifier_tui.engine.harbor.trial_session import TrialSession

    demo = task(verifier=READS_HELLO, files={"notes.log": "kept out\n"})
    (demo / ".gitignore").write_text("*.log\n")
    trial = _job_for(demo, runs, app={"hello.txt": "hi"})
    reads = []
    read_bytes = untrusted.read_bytes

    def read_then_spoil(path, *args, **kwargs):
        found = read_bytes(path, *args, **kwargs)
        if os.path.basename(path) == ".gitignore":
            reads.append(path)
            (demo / ".gitignore").write_bytes(b"\xff not UTF-8, and no rule for notes.log\n")
        return found

    monkeypatch.setattr(untrusted, "read_bytes", read_then_spoil)
    with TrialSession(trial) as opened:
        walk = opened.walk
        assert opened.skipped is None, opened.skipped
        replayed = opened.run()
    assert replayed.agreement.refused is None and replayed.agreement.same is True, replayed.agreement
    assert len(reads) == 1, reads
    assert walk.task is not None and walk.task.refused is None, walk.task.refused
    assert walk.drift is not None and walk.drift.same is True, walk.drift


@pytest.mark.parametrize("rules", [".gitignore", "tests/.harborignore"])
def test_ignore_rules_too_big_to_read_leave_the_digest_unknown(task, runs, monkeypatch, rules):
    """Rules past what the tool reads (16 MB; 1,000 bytes here), which Harbor reads whole and
    applies: the digest was worked out with no rules, counting tests/notes.log that Harbor leaves
    out, so a task unchanged since the run was said to have changed (tests/ too). Now whether it
    changed is said unknown, and why."""
    from verifier_tui.engine.task import file_filter, harbor_text

    demo = task(files={"notes.log": "left out\n"})
    (demo / rules).write_text("*.log\n")
    trial = _job_for(demo, runs)
    (demo / rules).write_text("*.log\n" + "# padding\n" * 200)  # the same rules, longer
    monkeypatch.setattr(harbor_text, "IGNORE_FILE_LIMIT", 1000)
    monkeypatch.setattr(file_filter, "IGNORE_FILE_LIMIT", 1000)
    walk = walk_trial(trial)
    assert walk.drift is not None and walk.drift.same is None, walk.drift.sentences()
    said = f"whether the task changed since the run cannot be told: its {rules} is larger than"
    assert any(said in note for note in walk.notes), walk.notes


def test_two_ignore_files_too_big_to_read_are_said_as_two(task, runs, monkeypatch):
    """Both the .gitignore and a .harborignore past what the tool reads: the note named the two
    and went on "(Harbor reads it whole)"."""
    from verifier_tui.engine.task import file_filter, harbor_text

    demo = task(files={"notes.log": "left out\n"})
    trial = _job_for(demo, runs)
    for rules in (".gitignore", "tests/.harborignore"):
        (demo / rules).write_text("*.log\n" + "# padding\n" * 200)
    monkeypatch.setattr(harbor_text, "IGNORE_FILE_LIMIT", 1000)
    monkeypatch.setattr(file_filter, "IGNORE_FILE_LIMIT", 1000)
    notes = " ".join(walk_trial(trial).notes)
    assert "its .gitignore and tests/.harborignore are larger than" in notes, notes
    assert "this tool reads (Harbor reads them whole)" in notes, notes


def test_a_task_nested_hundreds_of_folders_deep_is_read_at_once(real, env):
    """A task sent with a job, its tests/ holding 300 empty folders one inside the other: working out
    its digest asked every folder's rules again for each level of each path (69 s at 200 deep), so
    `run TRIAL` sat at full CPU for minutes before saying anything. Empty folders count for nothing in
    Harbor's digest: the task is still the one the trial ran."""
    trial = next(p for p in (real / "jobs" / "separate-mode").iterdir() if p.is_dir())
    with nested_folders(real / "tasks" / "separate-mode" / "tests", 300):
        done = run_tool(env, "run", trial, cwd=real, timeout_s=30)
    no_traceback(done)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "changed since the run" not in done.stdout + done.stderr


def test_a_task_nested_past_harbors_own_walk_is_said_in_a_line(real, env):
    """1,100 folders deep, Harbor's select_files (recursive) raises RecursionError: the digest walk
    did too, and `run TRIAL` printed a traceback. The drift is said unknown, and why."""
    trial = next(p for p in (real / "jobs" / "separate-mode").iterdir() if p.is_dir())
    tests = real / "tasks" / "separate-mode" / "tests"
    with nested_folders(tests):
        done = run_tool(env, "run", trial, cwd=real, timeout_s=60)
    no_traceback(done)
    assert "whether the task changed since the run cannot be told: its tests/ nests folders past" in done.stdout
