"""``test JOB --junit FILE``: a file that cannot be written is said before
anything runs when it can be known then (a folder, no folder to hold it), and
otherwise (a full disk) after the table, which is never lost."""

from __future__ import annotations

from tests.helpers.commands import no_traceback, run_tool
from tests.helpers.harbor import SEPARATE, sandbox_trial
from tests.helpers.tasks import PY


def a_job(task, runs, tmp_path):
    demo = task(toml=SEPARATE)
    sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={"hello.txt": "hi"}, mode="separate", capture=True)
    return runs / "jobs" / "j"


def test_a_junit_file_in_no_folder_is_refused_before_any_replay(task, runs, tmp_path, env):
    done = run_tool(env, "test", a_job(task, runs, tmp_path), "--junit", tmp_path / "none" / "j.xml", "--python", PY)
    no_traceback(done)
    assert done.returncode == 2 and done.stdout == ""
    assert (
        done.stderr.strip()
        == f"verifier-tui: --junit {tmp_path / 'none' / 'j.xml'}: there is no folder {tmp_path / 'none'}"
    )


def test_a_junit_file_the_disk_cannot_take_keeps_the_table_and_says_which_file(task, runs, tmp_path, env):
    done = run_tool(env, "test", a_job(task, runs, tmp_path), "--junit", "/dev/full", "--python", PY)
    no_traceback(done)
    assert done.returncode == 2
    assert "1 agree, 0 differ, 0 not compared" in done.stdout
    assert done.stderr.strip().endswith("--junit /dev/full: cannot write it: No space left on device")


def test_a_junit_file_inside_the_job_is_refused(task, runs, tmp_path, env):
    """Nothing of a job or its trials is written: a report among them neither."""
    job = a_job(task, runs, tmp_path)
    done = run_tool(env, "test", job, "--junit", job / "report.xml", "--python", PY)
    no_traceback(done)
    assert done.returncode == 2 and not (job / "report.xml").exists()
    assert "--junit" in done.stderr and f"inside the job folder, {job}" in done.stderr


def test_a_refused_test_job_writes_its_refusal_into_the_junit_file(task, runs, tmp_path, env):
    """``test JOB --junit FILE --python nowhere`` (or ``--workspace nowhere``)
    ran nothing and wrote nothing: the report of the last run stayed, passing,
    for CI to show green. As on a task, the refusal is the report's one error."""
    job = a_job(task, runs, tmp_path)
    report = tmp_path / "report.xml"
    for refused, said in (
        (("--python", "/nonexistent/python3"), "--python /nonexistent/python3: No such file or directory"),
        (("--workspace", tmp_path / "nowhere"), f"workspace {tmp_path / 'nowhere'} is not a folder"),
        (("--response", "r.json"), "--response: a trial replays in Harbor mode"),
    ):
        done = run_tool(env, "test", job, "--junit", report, "--python", PY)
        assert done.returncode == 0 and 'failures="0"' in report.read_text()  # a passing report, then
        done = run_tool(env, "test", job, "--junit", report, "--python", PY, *refused)
        no_traceback(done)
        assert done.returncode == 2 and said in done.stderr
        text = report.read_text()
        assert 'errors="1"' in text and said in text, text
