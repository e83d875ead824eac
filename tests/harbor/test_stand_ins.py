"""Stand-ins for /app (``--workspace DIR``, ``--case NAME``, ``--stand-in
empty``, and the pytest plugin's ``--verifier-*``) serve only the trials
that did not capture /app, and the output says which; where /app was not
captured, the message names Harbor 0.26.0's setting that captures it;
``explain TRIAL`` needs no workspace; ``test JOB`` reads each task once.
On the genuine Harbor 0.26.0 jobs of ``../shared/harbor-0.26`` (copied),
or jobs built from them."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.helpers.commands import no_traceback, run_tool
from tests.helpers.harbor import PASSED, make_job
from tests.helpers.tasks import PY

CAPTURE = 'artifacts = ["/app"] at the top of task.toml, before its first [table]'


def tool(env, *args, cwd):
    done = run_tool(env, *args, "--python", PY, cwd=cwd)
    no_traceback(done)
    return done


@pytest.fixture
def mixed(real):
    """A job of two trials of the genuine hello-file task: one that captured
    /app (an agent that wrote hello.txt) and one that did not, both 1.0."""
    task = real / "tasks" / "hello-file"
    job = make_job(
        real / "jobs" / "mixed",
        {
            "hello-file__Captur1": dict(task=task, app={"hello.txt": "hello world\n"}, **PASSED),
            "hello-file__NoApp22": dict(task=task, **PASSED),
        },
    )
    return job


def test_a_workspace_given_for_a_trial_that_captured_app_is_not_used_and_said_so(real, env, tmp_path):
    stand_in = tmp_path / "stand-in"
    stand_in.mkdir()  # nothing in it: replayed on it, the genuine verifier would raise
    done = tool(env, "run", real / "jobs" / "separate-mode", "--workspace", stand_in, "--json", cwd=tmp_path)
    data = json.loads(done.stdout)
    assert data["replay"]["workspace_origin"] == "exact" and data["same"] is True
    assert data["replay"]["stand_in_unused"] == f"your stand-in ({stand_in}) was not used: the trial captured /app"
    text = tool(env, "run", real / "jobs" / "separate-mode", "--workspace", stand_in, cwd=tmp_path).stdout
    assert "workspace: artifact artifacts/app: exactly what the verifier saw" in text
    assert "the trial did not capture /app" not in text


def test_test_job_uses_the_stand_in_only_where_app_was_not_captured_and_names_them(mixed, env, tmp_path):
    stand_in = tmp_path / "my-app"
    stand_in.mkdir()
    (stand_in / "hello.txt").write_text("hello world\n")
    done = tool(env, "test", mixed, "--workspace", stand_in, cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    # (paths are shown from the current folder)
    assert "stand-in my-app used for 1 trial(s) that did not capture /app: hello-file__NoApp22" in done.stdout
    assert "stand-in my-app not used for 1 trial(s) that captured /app: hello-file__Captur1" in done.stdout
    data = json.loads(tool(env, "test", mixed, "--workspace", stand_in, "--json", cwd=tmp_path).stdout)
    assert data["stand_in"] == {
        "given": str(stand_in),
        "used_for": ["hello-file__NoApp22"],
        "not_used_for": ["hello-file__Captur1"],
    }
    origins = {t["trial"]["name"]: t["replay"]["workspace_origin"] for t in data["trials"]}
    assert origins == {"hello-file__Captur1": "snapshot", "hello-file__NoApp22": "stand-in"}


def test_test_job_takes_a_case_of_the_task_as_the_stand_in(mixed, real, env, tmp_path):
    case = real / "tasks" / "hello-file" / "cases" / "good" / "workspace"
    case.mkdir(parents=True)
    (case / "hello.txt").write_text("hello world\n")
    done = tool(env, "test", mixed, "--case", "good", cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    assert "stand-in case good used for 1 trial(s) that did not capture /app: hello-file__NoApp22" in done.stdout
    assert "2 agree, 0 differ, 0 not compared" in done.stdout
    refused = tool(env, "test", mixed, "--case", "good", "--case", "bad", cwd=tmp_path)
    assert refused.returncode == 2 and refused.stdout == ""
    assert "--case: a Harbor job takes one case of its task" in refused.stderr


def test_an_empty_stand_in_replays_an_agent_that_wrote_nothing(real, env, tmp_path):
    # The genuine nop trial: the agent did nothing, verify raised, Harbor recorded RewardFileNotFoundError.
    job = real / "jobs" / "nop-fail"
    without = tool(env, "test", job, cwd=tmp_path)
    assert without.returncode == 1 and "0 agree, 0 differ, 1 not compared" in without.stdout
    done = tool(env, "test", job, "--stand-in", "empty", cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    assert "stand-in an empty /app used for 1 trial(s) that did not capture /app: hello-file__C4SunEc" in done.stdout
    run = tool(env, "run", job, "--stand-in", "empty", cwd=tmp_path)
    assert "workspace: your stand-in: an empty /app (the trial did not capture /app)" in run.stdout
    assert "agreement same" in run.stdout
    # The run's own empty scratch folder, named as such: no folder of this
    # machine's that is gone once the run is, and no note that nothing was chosen.
    assert "No such file or directory: '<empty scratch workspace>/hello.txt'" in run.stdout
    assert "verifier-tui-" not in run.stdout and "no case and no workspace chosen" not in run.stdout


def test_one_stand_in_at_most_and_only_for_trials(real, env, tmp_path):
    done = tool(env, "run", real / "jobs" / "oracle-pass", "--stand-in", "empty", "--workspace", tmp_path, cwd=tmp_path)
    assert (
        done.returncode == 2
        and done.stderr.strip() == "verifier-tui: --workspace and --stand-in empty: give one stand-in for /app"
    )
    done = tool(env, "run", real / "tasks" / "hello-file", "--stand-in", "empty", cwd=tmp_path)
    assert done.returncode == 2 and "--stand-in: only for a Harbor trial or job folder" in done.stderr


@pytest.mark.parametrize("command", ["run", "explain", "test"])
def test_a_stand_in_folder_that_is_not_there_is_bad_input(real, env, tmp_path, command):
    """``--workspace nowhere`` on a job: ``run`` printed the whole walkthrough
    with "replay none: --workspace nowhere: not a folder", ``explain`` exited 0
    and ``test JOB`` 1, where the pytest plugin's ``--verifier-workspace`` and
    ``--workspace`` on a task are refused in one line before anything runs."""
    done = tool(env, command, real / "jobs" / "nop-fail", "--workspace", "nowhere", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    # worded as on a task (run TASK --workspace nowhere): one wording for one mistake
    assert done.stderr.strip().splitlines() == [f"verifier-tui: workspace {tmp_path / 'nowhere'} is not a folder"]


def test_a_stand_in_case_the_task_lacks_is_never_said_used(mixed, env, tmp_path):
    """``test JOB --case nosuch``: the trial that needed it said "--case nosuch:
    no such case", and the summary under it "stand-in case nosuch used for 1
    trial(s)": no trial was replayed on it."""
    done = tool(env, "test", mixed, "--case", "nosuch", cwd=tmp_path)
    assert done.returncode == 1
    assert "--case nosuch: no such case in hello-file" in done.stdout
    assert "stand-in case nosuch used for" not in done.stdout
    assert "stand-in case nosuch not used for 1 trial(s) that captured /app: hello-file__Captur1" in done.stdout
    data = json.loads(tool(env, "test", mixed, "--case", "nosuch", "--json", cwd=tmp_path).stdout)
    assert data["stand_in"]["used_for"] == []


def test_an_uncaptured_app_names_the_harbor_setting_that_captures_it(real, env, tmp_path):
    done = tool(env, "run", real / "jobs" / "oracle-pass", cwd=tmp_path)
    assert done.returncode == 2
    assert "no workspace to replay on: the trial did not capture /app" in done.stdout
    assert CAPTURE in done.stdout and 'artifacts: ["/app"] in the job\'s config file' in done.stdout
    assert "harbor run --artifact /app" in done.stdout
    assert "give --workspace DIR, --case NAME or --stand-in empty" in done.stdout


def test_explain_needs_no_workspace(real, env, tmp_path):
    done = tool(env, "explain", real / "jobs" / "oracle-pass", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "replay (Harbor mode, verify not called):" in done.stdout
    assert "no workspace: the trial did not capture /app" in done.stdout
    assert "verify(workspace)" in done.stdout
    lines = done.stdout.splitlines()  # sys.path as every explain says it: the roles, then the path
    assert any("verifier's folder" in line and line.endswith("tasks/hello-file/tests") for line in lines)
    data = json.loads(tool(env, "explain", real / "jobs" / "oracle-pass", "--json", cwd=tmp_path).stdout)
    assert data["explain"]["parameters"][0]["name"] == "workspace" and data["local"] is None


def test_the_pytest_plugin_takes_the_same_stand_ins_and_says_when_nothing_was_replayed(pytester, real):
    shutil.copytree(real, pytester.path / "harbor")
    args = ("--verifier-python=" + PY, "-p", "no:cacheprovider", "--verifier-cases", "harbor/jobs/nop-fail")
    done = pytester.runpytest_subprocess(*args, timeout=300)
    done.assert_outcomes(failed=1)
    text = done.stdout.str()
    assert "nop-fail::hello-file__C4SunEc: not replayed: no workspace to replay on" in text
    assert "give --verifier-workspace DIR, --verifier-case NAME or --verifier-stand-in empty" in text
    assert "the replay did not end as the sandbox's run did" not in text
    pytester.runpytest_subprocess(*args, "--verifier-stand-in", "empty", timeout=300).assert_outcomes(passed=1)
    refused = pytester.runpytest_subprocess(*args, "--verifier-stand-in", "empty", "--verifier-case", "x", timeout=300)
    assert "--verifier-case and --verifier-stand-in empty: give one stand-in for /app" in refused.stderr.str()


def test_test_job_reads_a_task_once_for_all_its_trials(real, monkeypatch, tmp_path, capsys):
    """Thousands of trials of one task: its digest (every file hashed) once, not three times a trial."""
    job = real / "jobs" / "separate-mode"
    genuine = next(p for p in job.iterdir() if p.is_dir())
    for index in range(5):
        shutil.copytree(genuine, job / f"separate-mode__copy{index:03d}")
    from verifier_tui.cli import main
    from verifier_tui.engine.harbor import digest

    read = []
    original = digest._task_digest
    monkeypatch.setattr(digest, "_task_digest", lambda folder: read.append(folder) or original(folder))
    monkeypatch.chdir(tmp_path)
    assert main(["test", str(job), "--python", PY, "-j", "2"]) == 0
    assert "6 agree, 0 differ, 0 not compared" in capsys.readouterr().out
    assert read == [(real / "tasks" / "separate-mode").resolve()]


def test_an_empty_stand_in_chosen_over_a_captured_app_is_not_said_to_replace_a_missing_one(mixed):
    """On screen (f, s) a stand-in may replace a captured /app on purpose:
    the replay then differs, and the reason must not claim /app was not captured."""
    from verifier_tui.engine.harbor.folders import open_harbor
    from verifier_tui.engine.harbor.trial_session import TrialSession
    from verifier_tui.engine.session import Options

    trial, step = open_harbor(mixed / "hello-file__Captur1")
    session = TrialSession(trial, step, options=Options(python=PY))
    try:
        session.choose_stand_in(empty=True)
        assert session.plan.workspace_words.startswith("your stand-in: an empty /app, instead of the /app")
        replayed = session.run()
        assert replayed.agreement.same is False
        reasons = " ".join(replayed.agreement.differences)
        assert "the workspace is your stand-in" in reasons
        assert "did not capture /app" not in reasons
    finally:
        session.close()


def test_a_stand_in_case_behind_a_cases_link_out_of_the_task_says_why(mixed, env, tmp_path):
    """``test JOB --case private-a``, the task's ``cases`` a link out of it: the trial that needed the
    case said ``no such case in hello-file (cases: none)``, though the folder is there; it says, as
    ``test TASK --case`` does, that cases leads out of the task and is not followed."""
    (tmp_path / "elsewhere" / "private-a" / "workspace").mkdir(parents=True)
    (mixed.parent.parent / "tasks" / "hello-file" / "cases").symlink_to(tmp_path / "elsewhere")
    done = tool(env, "test", mixed, "--case", "private-a", cwd=tmp_path)
    assert "--case private-a: no such case in hello-file (cases leads out of the task" in done.stdout, done.stdout
    assert "cases: none" not in done.stdout, done.stdout
