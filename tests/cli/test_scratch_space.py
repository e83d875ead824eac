"""The tool's scratch folder (where TMPDIR puts it) as the user meets it:
full at any point of a run's staging (the run, or a probe of audit's, is
refused in one line saying where the scratch is), filled by the run itself
or left short by its staging (said, and emptied for the next case, never
through a link the run left), and TMPDIR in the task, passed over, or
relative. Most run the real command with its TMPDIR on a small tmpfs, mounted
in a user and mount namespace of its own."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.commands import TOOL, on_a_small_disk, run_tool
from tests.helpers.tasks import HANG_GUARD_S, PY, make_task

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a tmpfs in a mount namespace")

#: Mounts a tmpfs with the options $1 on $2, then runs the rest of the command line.
ON_TINY_TMPFS = 'mount -t tmpfs -o "$1" verifier-tui-test "$2" && shift 2 && exec "$@"'


@pytest.fixture
def tiny(tmp_path):
    """A folder that becomes a 1 MB tmpfs for the command :func:`on_tiny` starts."""
    folder = tmp_path / "tiny"
    folder.mkdir()
    if (
        shutil.which("unshare") is None
        or subprocess.run(
            ["unshare", "-rm", "sh", "-c", ON_TINY_TMPFS, "sh", "size=1m", str(folder), "true"], capture_output=True
        ).returncode
        != 0
    ):
        pytest.skip("cannot mount a tmpfs in a user namespace here")
    return folder


def on_tiny(tiny, env: dict[str, str], *args: object, mount: str = "size=1m") -> subprocess.CompletedProcess:
    """``verifier-tui ARGS`` with its TMPDIR (where its scratch folder goes) on the tiny tmpfs
    (``mount``: its options, 1 MB by default)."""
    return subprocess.run(
        ["unshare", "-rm", "sh", "-c", ON_TINY_TMPFS, "sh", mount, str(tiny), *TOOL, *map(str, args)],
        env=dict(env, TMPDIR=str(tiny)),
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
        stdin=subprocess.DEVNULL,
    )


def test_a_workspace_the_scratch_disk_cannot_hold_refuses_the_run(tmp_path, env, sandbox, tiny):
    task = make_task(
        tmp_path / "tasks" / "t",
        "def verify(workspace):\n    print('verify ran')\n    return 1.0\n",
        cases={"big": {"small.txt": "x", "big.bin": "x" * (2 << 20)}},
    )
    run_env = dict(env, VERIFIER_TUI_SANDBOX=sandbox)
    said = (
        f"the workspace could not be copied whole: big.bin: no space left on the scratch file system "
        f"(verifier-tui copies into {tiny}; set TMPDIR to a folder with more room)"
    )

    done = on_tiny(tiny, run_env, "run", task, "--python", PY)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "verify ran" not in done.stdout
    assert [line for line in done.stdout.splitlines() if "copied whole" in line] == [
        f"could not start: {said} · 0 ms"
    ], done.stdout
    assert "verdict: none: the verifier was not run" in done.stdout.splitlines()

    data = json.loads(on_tiny(tiny, run_env, "run", task, "--python", PY, "--json").stdout)
    assert data["outcome"] == "could_not_start" and data["outcome_words"] == f"could not start: {said}"
    assert data["reward_files"] == [] and data["stdout"] == ""


def test_audit_says_a_probe_the_scratch_disk_cannot_hold_as_a_run_says_it(tmp_path, env, sandbox, tiny):
    """A probe whose workspace copy ran out of room said only "No space left
    on device", where a run of the same case says where the scratch folder is
    and how to put it elsewhere: the audit built the sentence a second time.
    Two at once: while that copy fills the scratch, the other probe's staging
    finds no room either, and is that probe's start error alone."""
    task = make_task(
        tmp_path / "tasks" / "t",
        "def verify(workspace):\n    return 1.0 if (workspace / 'answer.txt').exists() else 0.0\n",
        cases={"right": {"answer.txt": "42"}, "big": {"answer.txt": "41", "big.bin": "x" * (2 << 20)}},
    )
    (task / "cases" / "right" / "expected.json").write_text('{"rewards": {"reward": 1.0}}', encoding="utf-8")
    done = on_tiny(tiny, dict(env, VERIFIER_TUI_SANDBOX=sandbox), "audit", task, "--python", PY, "--jobs", "2")
    assert not done.stderr, done.stderr
    unmade = [line for line in done.stdout.splitlines() if "big: without answer.txt" in line]
    assert len(unmade) == 1 and "not judged: could not start: " in unmade[0], done.stdout + done.stderr
    assert (
        "the workspace could not be copied whole: big.bin: no space left on the scratch file system "
        f"(verifier-tui copies into {tiny}; set TMPDIR to a folder with more room)"
    ) in unmade[0], done.stdout


def test_audit_goes_on_when_a_probes_folders_find_no_room(tmp_path, env, sandbox, tiny):
    """A probe whose workspace's folders (or links, or emptied files) could not
    be made for want of room, here of inodes: the whole audit stopped at it,
    ``verifier-tui: …/audit-2/d23: No space left on device``, where a file
    that cannot be copied leaves that probe alone not judged."""
    task = make_task(
        tmp_path / "tasks" / "t",
        "def verify(workspace):\n    return 1.0 if (workspace / 'answer.txt').exists() else 0.0\n",
        cases={"right": {"answer.txt": "42"}, "many": {"answer.txt": "41", **{f"d{i}/f.txt": "x" for i in range(200)}}},
    )
    (task / "cases" / "right" / "expected.json").write_text('{"rewards": {"reward": 1.0}}', encoding="utf-8")
    run_env = dict(env, VERIFIER_TUI_SANDBOX=sandbox)
    done = on_tiny(tiny, run_env, "audit", task, "--python", PY, "--jobs", "1", mount="size=4m,nr_inodes=100")
    assert not done.stderr, done.stderr
    rows = {line[3:].split("  ")[0]: line for line in done.stdout.splitlines() if line[:1] in "!✓·"}
    for probe in ("many: every file emptied", "many: without answer.txt"):
        assert "not judged: could not start: the workspace could not be copied whole: d" in rows[probe], done.stdout
        assert ": no space left on the scratch file system (verifier-tui copies into " in rows[probe], done.stdout
    assert rows["an empty workspace"].startswith("✓"), done.stdout


#: ``run --json`` once for each amount of room left on the tiny tmpfs, from
#: none to $MAX KiB a page (4 KiB) at a time, a filler taking the rest: each
#: run's stdout in out-N, its stderr in err-N, its status in rc-N, what it
#: left on the tmpfs in left-N (in $OUT).
AT_EVERY_FILL = """
disk=$1; shift
free=0
while [ "$free" -le "$MAX" ]; do
    rm -f "$disk/filler"
    head -c $((1048576 - free * 1024)) /dev/zero >"$disk/filler" 2>/dev/null
    "$@" run "$TASK" --python "$PY" --json >"$OUT/out-$free" 2>"$OUT/err-$free"
    echo $? >"$OUT/rc-$free"
    ls -A "$disk" >"$OUT/left-$free"
    free=$((free + 4))
done
"""


def _at_every_fill(tmp_path, env, sandbox, task: Path) -> tuple[Path, list[tuple[int, int, str, str]]]:
    """:data:`AT_EVERY_FILL` of ``task`` up to 256 KiB left: the tmpfs, and for
    each amount left, the command's status, stdout and stderr (each checked
    to have left nothing behind in the scratch and to say no traceback)."""
    disk, out = tmp_path / "tiny", tmp_path / "out"
    out.mkdir()
    run_env = dict(env, TMPDIR=str(disk), VERIFIER_TUI_SANDBOX=sandbox, TASK=str(task), PY=PY, OUT=str(out), MAX="256")
    done = on_a_small_disk(run_env, disk, AT_EVERY_FILL, size="1m")
    assert done.returncode == 0, done.stdout + done.stderr
    runs = []
    for free in range(0, 257, 4):
        said, err = (out / f"out-{free}").read_text(), (out / f"err-{free}").read_text()
        assert (out / f"left-{free}").read_text() == "filler\n", (free, "the scratch folder was left behind")
        assert "Traceback" not in err and "Errno" not in said + err, (free, said, err)
        runs.append((free, int((out / f"rc-{free}").read_text()), said, err))
    return disk, runs


def test_a_scratch_disk_full_at_any_point_of_the_staging_fails_only_that_run(tmp_path, env, sandbox):
    """The scratch's file system full at each point of a run's staging in
    turn (the sandbox's probe, the tests, the runner, the workspace, the
    view's files): a write that found no room ended the command with
    ``could not stage the run: [Errno 28] No space left on device``, and
    ``audit`` and ``test``, which run several at once, ended whole on the one
    run (``verifier-tui: …/tasks/t: No space left on device``). Each is now
    the run's start error, or where nothing can run (the sandbox's probe, the
    scratch folder itself) one line, each saying where the scratch is; and
    no run leaves its scratch folder behind."""
    task = make_task(tmp_path / "tasks" / "t", cases={"c": {"a.txt": "x" * 5000}})
    disk, runs = _at_every_fill(tmp_path, env, sandbox, task)
    room = f"no space left on the scratch file system (verifier-tui copies into {disk}; set TMPDIR to"
    ran = 0
    for free, rc, said, err in runs:
        if not said:  # nothing can run: one line
            assert rc == 2 and len(err.splitlines()) == 1 and room in err, (free, err)
            continue
        data = json.loads(said)
        if data["outcome"] == "could_not_start":
            assert rc == 2 and room in data["outcome_words"], (free, data["outcome_words"])
            # the file that found no room is named (a write fails with no file name of its own)
            assert "could not stage the run: no space" not in data["outcome_words"], (free, data["outcome_words"])
        elif rc == 0 and data["rewards"] is not None:
            # a run that wrote next to nothing, and its reward, is never said to have filled the scratch
            ran += 1
            assert not [n for n in data["notices"] if "scratch file system" in n], (free, data["notices"])
    assert ran, "the tiny disk never had room for a run: the sweep stopped short of it"


#: A verifier that writes 3 MB into its workspace where it holds ``fill``, whatever room there is.
FILLS_THE_SCRATCH = """\
def verify(workspace):
    if (workspace / 'fill').exists():
        try:
            (workspace / 'big.bin').write_bytes(b'x' * (3 << 20))
        except OSError:
            pass
    return 1.0
"""


def _run_on_a_small_disk(tmp_path, env, sandbox, verifier: str) -> tuple[subprocess.CompletedProcess, dict, Path]:
    """``run --json`` of a one-case task (its workspace holding ``fill``) with
    ``verifier``, its scratch on a 1 MB tmpfs: the script's output (the
    command's status, then what it left on the tmpfs), the run's JSON, the tmpfs."""
    task = make_task(tmp_path / "tasks" / "t", verifier, cases={"c": {"fill": "1"}})
    disk, said = tmp_path / "tiny", tmp_path / "run.json"
    script = 'disk=$1; shift; "$@" run "$TASK" --python "$PY" --json >"$SAID"; echo "exit $?"; ls -A "$disk"'
    run_env = dict(env, TMPDIR=str(disk), VERIFIER_TUI_SANDBOX=sandbox, TASK=str(task), PY=PY, SAID=str(said))
    done = on_a_small_disk(run_env, disk, script, size="1m")
    return done, json.loads(said.read_text()), disk


def test_a_run_that_fills_the_scratch_says_so_and_leaves_nothing(tmp_path, env, sandbox):
    """A verifier that writes more than the scratch's file system holds into
    its workspace (a copy in the scratch): the runner could not write the
    reward, and the run said only ``Harbor would raise
    RewardFileNotFoundError``, as if the verifier wrote none, where Harbor's
    container, with room, would have its 1.0. The run now says the scratch
    was full and how to move it, and leaves nothing in it behind."""
    done, data, disk = _run_on_a_small_disk(tmp_path, env, sandbox, FILLS_THE_SCRATCH)
    assert done.stdout == "exit 2\n" and not done.stderr, done.stdout + done.stderr  # nothing left in the scratch
    full = (
        "the scratch file system filled while the run ran: what was written past that failed, where Harbor's "
        f"container may have had room (verifier-tui copies into {disk}; set TMPDIR to a folder with more room)"
    )
    assert full in data["notices"], data


def test_a_run_that_fills_the_scratch_but_writes_its_reward_claims_no_failed_write(tmp_path, env, sandbox):
    """A verifier that leaves the scratch's file system all but full, its
    reward still written and the run ending 0: the note said what the run
    wrote past that failed, of a run none of whose writes failed."""
    verifier = (
        "import os\n"
        "def verify(workspace):\n"
        "    st = os.statvfs(workspace)\n"
        "    (workspace / 'big.bin').write_bytes(b'x' * (st.f_bavail * st.f_frsize - (32 << 10)))\n"
        "    return 1.0\n"
    )
    done, data, disk = _run_on_a_small_disk(tmp_path, env, sandbox, verifier)
    assert done.stdout == "exit 0\n" and data["rewards"] == {"reward": 1.0}, done.stdout + done.stderr
    assert [n for n in data["notices"] if "scratch" in n] == [
        "the scratch file system filled while the run ran: its reward was still written, but Harbor's container "
        f"may have had room for what it wrote (verifier-tui copies into {disk}; set TMPDIR to a folder with more room)"
    ], data["notices"]


def test_a_run_short_of_room_from_its_staging_on_that_writes_no_reward_says_the_scratch_was_full(
    tmp_path, env, sandbox
):
    """A scratch left with under 64 KiB by the run's own staging, and a
    verifier that tries to write 3 MB: the run took less than 64 KiB itself,
    so it was not said to have filled the scratch, and the user saw only
    ``RewardFileNotFoundError``, of a reward that found no room. A run that
    ends short of room and wrote no reward (or exited non-zero) says so."""
    task = make_task(tmp_path / "tasks" / "t", FILLS_THE_SCRATCH, cases={"c": {"fill": "1"}})
    disk, runs = _at_every_fill(tmp_path, env, sandbox, task)
    full = (
        "the scratch file system had next to no room as the run ended: if a write failed for want of it, "
        f"Harbor's container may have had room (verifier-tui copies into {disk}; set TMPDIR to a folder with more room)"
    )
    unrewarded = 0
    for free, rc, said, _err in runs:
        data = json.loads(said) if said else {"outcome": "could_not_start"}
        if data["outcome"] == "could_not_start" or (rc == 0 and data["rewards"] is not None):
            continue
        unrewarded += 1
        notes = [n for n in data["notices"] if "scratch file system" in n]
        assert len(notes) == 1 and (notes[0] == full or "filled while the run ran" in notes[0]), (free, notes)
    assert unrewarded, "no run went short of room for its reward: the sweep stopped short of it"


@pytest.mark.parametrize("where", ["workspace", "tests", "task", "its own workspace"])
def test_a_tmpdir_inside_the_task_or_its_workspace_refuses_the_run(tmp_path, env, sandbox, where):
    """TMPDIR in the case's workspace or the task's tests folder: the copy
    of that folder went into the scratch folder inside it, and so on, until
    the path was too long (``could not start: …/verifier-tui-x/stage-1/app/
    verifier-tui-x/stage-1/app/…: File name too long``, a line of thousands of
    characters); in the task's folder, the copy sandbox said the run had
    written the user's files (its own scratch). The run is refused in one
    line saying where TMPDIR is; nothing is left in the user's folder."""
    task = make_task(tmp_path / "tasks" / "t", cases={"c": {"a.txt": "x"}})
    own = tmp_path / "ws"
    (own / "a.txt").parent.mkdir()
    (own / "a.txt").write_text("x", encoding="utf-8")
    tmpdir = {"workspace": task / "cases" / "c" / "workspace", "tests": task / "tests", "task": task}.get(where, own)
    chosen = ["--workspace", own] if where == "its own workspace" else ["--case", "c"]
    inside = f"the workspace {own}" if where == "its own workspace" else f"the task's folder {task}"
    before = sorted(tmpdir.iterdir())
    done = run_tool(dict(env, TMPDIR=str(tmpdir), VERIFIER_TUI_SANDBOX=sandbox), "run", task, *chosen, "--python", PY)
    said = (
        f"could not start: verifier-tui's scratch folder goes in TMPDIR, {tmpdir}, inside {inside}: "
        "a run's copies of its files would hold their own copy; set TMPDIR to a folder outside it · 0 ms"
    )
    assert done.returncode == 2 and said in done.stdout.splitlines(), done.stdout + done.stderr
    assert "your own files changed" not in done.stdout and sorted(tmpdir.iterdir()) == before


def test_a_tmpdir_that_cannot_be_used_is_named_where_the_scratch_has_no_room(tmp_path, env, sandbox):
    """TMPDIR naming a folder that is not there (a typo): Python takes the
    next of TEMP, TMP, /tmp that it can write, and a scratch that then had no
    room said "verifier-tui copies into /tmp; set TMPDIR to a folder with
    more room" to a user whose TMPDIR is set. The words say TMPDIR was passed over."""
    task = make_task(tmp_path / "tasks" / "t", cases={"big": {"big.bin": "x" * (2 << 20)}})
    disk, missing = tmp_path / "tiny", tmp_path / "no-such-folder"
    script = 'shift; "$@" run "$TASK" --python "$PY"'
    run_env = dict(env, TMPDIR=str(missing), TEMP=str(disk), VERIFIER_TUI_SANDBOX=sandbox, TASK=str(task), PY=PY)
    done = on_a_small_disk(run_env, disk, script, size="1m")
    said = (
        f"could not start: the workspace could not be copied whole: big.bin: no space left on the scratch file system "
        f"(verifier-tui copies into {disk}: TMPDIR, {missing}, is no folder it can write; "
        "set TMPDIR to a folder with more room) · 0 ms"
    )
    assert done.returncode == 2 and said in done.stdout.splitlines(), done.stdout + done.stderr


def test_a_relative_tmpdir_in_use_is_not_said_passed_over(tmp_path, env, sandbox):
    """``TMPDIR=.``: Python uses it as it is spelled, and the words said
    ``TMPDIR, ., is no folder it can write`` of the folder the scratch was in."""
    task = make_task(tmp_path / "tasks" / "t", cases={"big": {"big.bin": "x" * (2 << 20)}})
    disk = tmp_path / "tiny"
    script = 'cd "$1" && shift && "$@" run "$TASK" --python "$PY"'
    run_env = dict(env, TMPDIR=".", VERIFIER_TUI_SANDBOX=sandbox, TASK=str(task), PY=PY)
    done = on_a_small_disk(run_env, disk, script, size="1m")
    said = (
        f"could not start: the workspace could not be copied whole: big.bin: no space left on the scratch file system "
        f"(verifier-tui copies into {disk}; set TMPDIR to a folder with more room) · 0 ms"
    )
    assert done.returncode == 2 and said in done.stdout.splitlines(), done.stdout + done.stderr


@pytest.mark.parametrize("tmpdir", [".", "rel/dir"])
def test_a_relative_tmpdir_runs(tmp_path, env, sandbox, tmpdir):
    """``TMPDIR=.``: Python's tempfile keeps it as spelled (any other relative
    TMPDIR it makes absolute), so the scratch folder was relative too and
    every run failed, the copy sandbox's with ``can't open file
    '…/stage-1/app/verifier-tui-…/stage-1/tests/.ng/run_verifier.py'``, the
    namespace's with ``cannot create <scratch>/ctl/status: Directory nonexistent``."""
    task = make_task(tmp_path / "tasks" / "t", cases={"c": {"a.txt": "x"}})
    here = tmp_path / "here"
    (here / tmpdir).mkdir(parents=True)
    done = run_tool(dict(env, TMPDIR=tmpdir, VERIFIER_TUI_SANDBOX=sandbox), "run", task, "--python", PY, cwd=here)
    assert done.returncode == 0 and 'verdict: {"reward": 1.0}' in done.stdout, done.stdout + done.stderr
    assert not list((here / tmpdir).iterdir()), "the scratch folder was left behind"


def test_a_case_that_filled_the_scratch_leaves_the_next_cases_room(tmp_path, env, sandbox):
    """``test -j1``: the case whose verifier filled the scratch kept what it
    wrote in its stage while a later case was staged in another, which then
    found no room for its reward (``RewardFileNotFoundError`` and the note,
    in some runs and not others, by which stage a case took). What a run
    wrote goes as its result is collected, where the scratch is full."""
    cases = {"a1": {"fill": "1"}, "b2": {"a.txt": "x"}, "c3": {"a.txt": "x"}}
    task = make_task(tmp_path / "tasks" / "t", FILLS_THE_SCRATCH, cases=cases)
    for case in ("a1", "b2", "c3"):
        (task / "cases" / case / "expected.json").write_text('{"rewards": {"reward": 1.0}}', encoding="utf-8")
    disk, out = tmp_path / "tiny", tmp_path / "out"
    out.mkdir()
    # Four times over: which stage a case takes varies from one run of the command to the next.
    script = 'shift; for n in 1 2 3 4; do "$@" test "$TASK" --python "$PY" -j1 --json >"$OUT/test-$n"; done'
    run_env = dict(env, TMPDIR=str(disk), VERIFIER_TUI_SANDBOX=sandbox, TASK=str(task), PY=PY, OUT=str(out))
    on_a_small_disk(run_env, disk, script, size="1m")
    for n in range(1, 5):
        results = {c["case"]: c for c in json.loads((out / f"test-{n}").read_text())["cases"]}
        for case in ("b2", "c3"):
            said = (n, case, results[case]["outcome_words"], results[case]["notices"])
            assert results[case]["rewards"] == {"reward": 1.0} and not results[case]["notices"], said


def test_emptying_a_full_stage_never_goes_through_a_link_the_run_left(tmp_path, env):
    """A verifier in the copy sandbox linked the stage's overlay/ to a folder of the user's and
    filled the scratch: emptying that run's folders at once (so the next case has room) went
    through the link and deleted the user's overlay/upper/precious.txt, and nothing said so."""
    user = tmp_path / "user-project"
    (user / "upper").mkdir(parents=True)
    (user / "upper" / "precious.txt").write_text("mine")
    verifier = (
        "import os\n"
        "def verify(workspace):\n"
        f"    os.symlink({str(user)!r}, workspace.parent / 'overlay')\n"
        "    try:\n"
        "        (workspace / 'big.bin').write_bytes(b'x' * (3 << 20))\n"
        "    except OSError:\n"
        "        pass\n"
        "    return 1.0\n"
    )
    _run_on_a_small_disk(tmp_path, env, "copy", verifier)
    assert (user / "upper" / "precious.txt").read_text() == "mine"
