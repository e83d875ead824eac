"""Pictures of a trial's screen and of a job's list (pytest-textual-snapshot).

Deterministic: the task and the job are built under ``tmp_path/runs`` (the
screen shows paths relative to the folder holding both), the app runs with
``deterministic=True`` (durations ``-- ms``, the interpreter's folders
``<python>``), and each picture is taken once the replay ended. The
verifiers raise in their own code, so no interpreter frame is on screen.
Update with ``--snapshot-update``.
"""

from __future__ import annotations

from tests.harbor.trial_app_under_test import SNAPSHOT_SIZE, make_trial_app
from tests.helpers.harbor import (
    SEPARATE,
    harbor_exception,
    harbor_masked_failure_log,
    make_job,
    sandbox_trial,
    timed_out_trial,
)
from tests.helpers.processes import needs_namespaces
from tests.helpers.tasks import SHIM

READS_REPORT = (
    "import json\n\n\ndef verify(workspace):\n"
    "    report = json.loads((workspace / 'report.json').read_text())\n"
    "    return float(report['score'])\n"
)


def replayed(count: int = 1):
    async def run_before(pilot) -> None:
        await pilot.app.wait_for_replays(count)
        await pilot.pause()
        await pilot.pause(0.1)

    return run_before


def test_a_trial_whose_verify_raised(snap_compare, task, runs, tmp_path):
    demo = task("report", verifier=READS_REPORT, toml=SEPARATE)
    trial = sandbox_trial(
        runs / "jobs" / "2026-12-01__03-36-17",
        demo,
        tmp_path,
        workspace={"report.json": '{"points": 3}'},
        mode="separate",
        capture=True,
        name="report__x7QmK2p",
    )
    app = make_trial_app(trial.path)
    assert snap_compare(app, terminal_size=SNAPSHOT_SIZE, run_before=replayed())


def test_a_trial_that_needs_a_response_harbor_never_gives(snap_compare, task, runs, tmp_path):
    demo = task("graded", verifier="def verify(workspace, response):\n    return 1.0\n", toml=SEPARATE)
    trial = sandbox_trial(
        runs / "jobs" / "2026-12-01__03-36-17",
        demo,
        tmp_path,
        workspace={},
        mode="separate",
        capture=True,
        name="graded__Lq4Tz9w",
    )
    app = make_trial_app(trial.path)
    assert snap_compare(app, terminal_size=SNAPSHOT_SIZE, run_before=replayed())


def test_a_trial_whose_agent_timed_out_shows_that_first(snap_compare, task, runs, tmp_path):
    """The root cause at the top: the agent's timeout, then the verifier's part
    (recorded only in trial.log), before the verifier's own detail."""
    demo = task("report", verifier=READS_REPORT, toml=SEPARATE)
    name = "report__Zk8Wn1c"
    trial = sandbox_trial(
        runs / "jobs" / "2026-12-01__03-36-17",
        demo,
        tmp_path,
        workspace={},
        mode="separate",
        capture=True,
        name=name,
        trial_kwargs=dict(
            agent="claude-code",
            log=harbor_masked_failure_log(name, "RewardFileNotFoundError", "No reward file found"),
            exception=harbor_exception("AgentTimeoutError", "Agent execution timed out after 120.0 seconds"),
        ),
    )
    app = make_trial_app(trial.path)
    assert snap_compare(app, terminal_size=(160, 45), run_before=replayed())


def test_a_trial_judged_by_a_test_sh_that_prepares_a_file(snap_compare, task, runs):
    """The task's test.sh writes /app/.grading-mode before it starts the
    runner: the agreement names test.sh as the judge, then tells how
    verifier-tui's runner alone ended, where it parts and why; the step
    column is the runner alone's, without advice."""
    needs_namespaces()  # test.sh names /tests and /app: it runs only in the sandbox's view
    verifier = (
        "def verify(workspace):\n"
        "    mode = (workspace / '.grading-mode').read_text().strip()\n"
        "    return 1.0 if mode == 'strict' else 0.0\n"
    )
    demo = task("graded", verifier=verifier, toml='version = "1.0"\nartifacts = ["/app"]\n')
    script = SHIM.replace("set -u\n", "set -eu\ncd /app\necho strict > /app/.grading-mode\n", 1)
    (demo / "tests" / "test.sh").write_text(script)
    files = {"test-stdout.txt": "", "reward.txt": "1.0"}
    passing = dict(task=demo, app={"out.txt": "x"}, rewards={"reward": 1.0}, verifier_files=files)
    job = make_job(runs / "jobs" / "2026-12-01__03-36-17", {"graded__Pq2Rs4t": passing})
    app = make_trial_app(job / "graded__Pq2Rs4t")
    assert snap_compare(app, terminal_size=SNAPSHOT_SIZE, run_before=replayed())


def test_a_trial_whose_test_sh_ended_before_the_runner(snap_compare, task, runs):
    """A failed ``cd`` ends test.sh under ``set -e``: the root cause and both
    step columns name the script's line, no step of the runner is marked done,
    and the runner alone's 1.0 is said as its own, not as this replay's."""
    needs_namespaces()
    missing = "/opt/verifier-tui-no-runtime"
    demo = task("graded", toml='version = "1.0"\nartifacts = ["/app"]\n')
    script = SHIM.replace("set -u\n", f"set -eu\ncd {missing}\n", 1)
    (demo / "tests" / "test.sh").write_text(script)
    line = script.splitlines().index(f"cd {missing}") + 1
    said = f"/tests/test.sh: line {line}: cd: {missing}: No such file or directory\n"
    ended = dict(
        task=demo,
        app={"answer.txt": "42"},
        verifier_files={"test-stdout.txt": said},
        exception=harbor_exception("RewardFileNotFoundError", "No reward file found at /logs/verifier/reward.txt"),
    )
    job = make_job(runs / "jobs" / "2026-12-01__03-36-17", {"graded__Ce5Dn7x": ended})
    app = make_trial_app(job / "graded__Ce5Dn7x")
    assert snap_compare(app, terminal_size=SNAPSHOT_SIZE, run_before=replayed())


def test_a_trial_whose_verifier_timed_out_says_where_the_replay_was_stuck(snap_compare, runs, tmp_path):
    """Harbor downloads no output after a timeout: the root cause takes the
    replay's stack dump (where it was stuck) instead of saying nothing is known."""
    slow = "import time\n\ndef verify(workspace):\n    time.sleep(30)\n    return 1.0\n"
    trial = timed_out_trial(runs, tmp_path, slow, name="slow", job="2026-12-01__03-36-17", trial="slow__Hb3Kq8v")
    app = make_trial_app(trial.path)
    assert snap_compare(app, terminal_size=SNAPSHOT_SIZE, run_before=replayed())


def test_a_trial_whose_verifier_env_template_is_filled_here(snap_compare, task, runs, monkeypatch):
    """Harbor filled ``${CUTOFF:-0.6}`` where the job ran and kept nothing: the
    replay takes the template's default, not this shell's CUTOFF, and says
    so with the value used and where it came from."""
    needs_namespaces()  # the first note on screen is that of a verdict through test.sh
    monkeypatch.setenv("CUTOFF", "0.9")  # this shell's, set for something else
    verifier = "import os\n\ndef verify(workspace):\n    return 1.0 if float(os.environ['CUTOFF']) <= 0.7 else 0.0\n"
    toml = 'version = "1.0"\nartifacts = ["/app"]\n\n[verifier]\nenv = { CUTOFF = "${CUTOFF:-0.6}" }\n'
    demo = task("cutoff", verifier=verifier, toml=toml)
    files = {"test-stdout.txt": "", "reward.txt": "1.0"}
    passing = dict(task=demo, app={"out.txt": "x"}, rewards={"reward": 1.0}, verifier_files=files)
    job = make_job(runs / "jobs" / "2026-12-01__03-36-17", {"cutoff__Mv6Tw2r": passing})
    app = make_trial_app(job / "cutoff__Mv6Tw2r")
    assert snap_compare(app, terminal_size=SNAPSHOT_SIZE, run_before=replayed())


def test_a_job_list(snap_compare, task, runs, tmp_path):
    demo = task("report", verifier=READS_REPORT, toml=SEPARATE)
    job = runs / "jobs" / "2026-12-01__03-36-17"
    sandbox_trial(
        job,
        demo,
        tmp_path,
        workspace={"report.json": '{"score": 1}'},
        mode="separate",
        capture=True,
        name="report__aB3dE5f",
    )
    sandbox_trial(
        job,
        demo,
        tmp_path,
        workspace={"report.json": '{"points": 3}'},
        mode="separate",
        capture=True,
        name="report__x7QmK2p",
    )
    sandbox_trial(
        job,
        demo,
        tmp_path,
        workspace={"report.json": '{"score": 0.5}'},
        mode="separate",
        capture=True,
        name="report__Zk8Wn1c",
        trial_kwargs=dict(
            exception=harbor_exception("AgentTimeoutError", "Agent execution timed out after 120.0 seconds")
        ),
    )
    app = make_trial_app(job)

    async def listed(pilot) -> None:
        while not getattr(pilot.app.screen, "done", False):  # the job's overview reads its trials in a worker
            await pilot.pause(0.02)
        await pilot.pause(0.1)

    assert snap_compare(app, terminal_size=SNAPSHOT_SIZE, run_before=listed)
