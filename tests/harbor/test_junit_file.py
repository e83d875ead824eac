"""``test JOB --junit FILE``: a file that cannot be written is said before
anything runs when it can be known then (a folder, no folder to hold it), and
otherwise (a full disk) after the table, which is never lost."""

from __future__ import annotations

import json
import os
import signal
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.helpers.commands import (
    a_python_that_never_answers,
    held_at,
    hung_up,
    interrupted,
    junit_of_a_test_to_a_full_disk,
    no_traceback,
    refused_test_with_stderr_full,
    run_tool,
    signalled_at,
)
from tests.helpers.harbor import PASSED, READS_HELLO, SEPARATE, make_job, sandbox_trial
from tests.helpers.processes import SAY_STARTED, an_old_green_report, has_started
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


def test_a_test_job_whose_stdout_is_a_full_disk_still_writes_its_junit_report(task, runs, tmp_path, env):
    """``test JOB --junit out.xml >/dev/full``: the command ended with status 2 at the table's first
    line, before the report was written, the last run's (all green) left for CI, where a stopped
    run writes its report first. It is written first here too, the full disk said in one line."""
    names = junit_of_a_test_to_a_full_disk(env, tmp_path, a_job(task, runs, tmp_path))
    assert len(names) == 1 and names[0].startswith("demo__"), names


def test_a_test_job_json_whose_stdout_is_a_full_disk_writes_a_report_that_it_stopped(task, runs, tmp_path, env):
    """``test JOB --json --junit out.xml >/dev/full``: the document's first lines, printed before any
    replay, could not be written, and the command ended there, the last run's report (all green) left
    for CI. Its report now says the run stopped because standard output could not be written."""
    report = tmp_path / "out.xml"
    names = junit_of_a_test_to_a_full_disk(env, tmp_path, a_job(task, runs, tmp_path), "--json")
    assert names == ["(stopped)"], names
    error = ET.parse(report).getroot().find("testcase/error")
    assert error is not None and "standard output" in error.get("message", ""), ET.tostring(ET.parse(report).getroot())


def test_a_test_job_of_no_trial_whose_stdout_is_a_full_disk_still_writes_its_junit_report(runs, tmp_path, env):
    """A job with no trial folder: its document came before the report, which was never written."""
    names = junit_of_a_test_to_a_full_disk(env, tmp_path, make_job(runs / "jobs" / "empty", {}), "--json")
    assert names == ["(command line)"], names


def test_a_test_job_of_no_trial_prints_its_document_when_stderr_cannot_take_its_line(runs, env, tmp_path):
    """``test EMPTYJOB --json --junit r.xml >out.json 2>/dev/full``: the refusal's line, said before the
    document, ended the command and out.json stayed empty; the report and the document come first."""
    document, names = refused_test_with_stderr_full(env, tmp_path, make_job(runs / "jobs" / "empty", {}))
    assert document["trial_folders"] == 0 and names == ["(command line)"], (document, names)


def test_a_test_job_of_no_trial_says_a_junit_file_the_disk_cannot_take(runs, env):
    """Nothing to replay, and a report the disk refuses: both said, exit 2 (the full disk went unsaid)."""
    done = run_tool(env, "test", make_job(runs / "jobs" / "empty", {}), "--junit", "/dev/full", "--python", PY)
    no_traceback(done)
    assert done.returncode == 2 and "no trial folders in this job" in done.stderr, done.stderr
    assert done.stderr.strip().endswith("--junit /dev/full: cannot write it: No space left on device"), done.stderr


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


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_mid_test_job_leaves_a_junit_report_of_this_run_not_the_last(task, runs, tmp_path, env, sig):
    """Ctrl+C (or a CI job's timeout) while ``test JOB --junit out.xml`` replays: no report was written, so
    the last run's, all green, was left for CI to show as this one's. The report holds the trials that
    finished and one error saying the run was stopped, as ``test`` on tasks has it."""
    demo = task(verifier=READS_HELLO, toml=SEPARATE)
    job = runs / "jobs" / "j"
    for name, files in (("a__aaaaaaa", {"hello.txt": "hi"}), ("b__bbbbbbb", {"hello.txt": "hi", "slow.txt": ""})):
        sandbox_trial(job, demo, tmp_path, workspace=files, mode="separate", capture=True, name=name)
    slow = "import time\n\ndef verify(workspace):\n    if (workspace / 'slow.txt').exists():\n"
    slow += textwrap.indent(SAY_STARTED, "        ") + "        time.sleep(300)\n    return 1.0\n"
    (demo / "tests" / "verifier.py").write_text(slow)
    report = an_old_green_report(tmp_path / "out.xml")
    scratch = env["TMPDIR"]

    # Both replays at once: the slow one stopped while the other ended, or not yet (how soon is the machine's).
    args = ["test", job, "--junit", report, "-j", "2", "--python", PY]
    code, err = interrupted(env, args, lambda: has_started(scratch), sig, "the slow replay never started")
    assert code == 128 + sig and "Traceback" not in err, (code, err)
    suite = ET.parse(report).getroot()
    names = [(c.get("classname"), c.get("name")) for c in suite.iter("testcase")]
    assert names[-1] == ("verifier-tui", "(stopped)") and set(names[:-1]) <= {("j", "a__aaaaaaa")}, (names, err)
    stopped = f"stopped by {signal.Signals(sig).name} before every one ran: {len(names) - 1} of 2 trials finished"
    assert suite.find("testcase[@name='(stopped)']/error").get("message") == stopped
    assert err.count(stopped) == 1, err  # said once
    # Its time is the run's until it stopped, as test's stopped report and test JOB's own have it (not 0.000).
    assert float(suite.get("time")) > 0, suite.get("time")


def _a_job_with_a_slow_first_trial(task, runs, tmp_path):
    """A job of two trials, ``a__aaaaaaa`` stuck once its verifier started, ``b__bbbbbbb`` quick."""
    demo = task(verifier=READS_HELLO, toml=SEPARATE)
    job = runs / "jobs" / "j"
    for name, files in (("a__aaaaaaa", {"hello.txt": "hi", "slow.txt": ""}), ("b__bbbbbbb", {"hello.txt": "hi"})):
        sandbox_trial(job, demo, tmp_path, workspace=files, mode="separate", capture=True, name=name)
    slow = "import time\n\ndef verify(workspace):\n    if (workspace / 'slow.txt').exists():\n"
    slow += textwrap.indent(SAY_STARTED, "        ") + "        time.sleep(300)\n    return 1.0\n"
    (demo / "tests" / "verifier.py").write_text(slow)
    return job


def test_a_signal_mid_test_job_json_leaves_one_whole_document(task, runs, tmp_path, env):
    """A CI job's timeout while ``test JOB --json`` streams its trials: stdout held the document's
    head and no end, which no JSON reader takes. It ends whole: the trials that finished (a slow
    first trial stops none after it from being said), their counts, and ``stopped`` saying why.
    The signal comes once b's replay has ended (its row made), a's still running."""
    job = _a_job_with_a_slow_first_trial(task, runs, tmp_path)
    tool = signalled_at("verifier_tui.commands.harbor:job_row", signal.SIGTERM)
    done = run_tool(env, "test", job, "--json", "-j", "2", "--python", PY, tool=tool)
    assert done.returncode == 143 and "Traceback" not in done.stderr, (done.returncode, done.stderr)
    data = json.loads(done.stdout)
    assert [trial["trial"]["name"] for trial in data["trials"]] == ["b__bbbbbbb"], data["trials"]
    assert data["stopped"] == "stopped by SIGTERM before every one ran: 1 of 2 trials finished", data
    assert data["stopped"] in done.stderr and data["agree"] == 1 and data["trial_folders"] == 2


def test_a_terminal_that_closes_mid_test_job_leaves_a_junit_report_of_this_run(task, runs, tmp_path, env):
    """``test JOB --junit out.xml`` in an ssh session that drops: SIGHUP, and the stop's line to the
    closed terminal failed (EIO) before the report was written: the last run's, all green, stayed for CI."""
    job = _a_job_with_a_slow_first_trial(task, runs, tmp_path)
    report = an_old_green_report(tmp_path / "out.xml")
    scratch = env["TMPDIR"]
    args = ["test", str(job), "--junit", str(report), "-j", "1", "--python", PY]
    assert hung_up(env, args, lambda: has_started(scratch)) is not None, "the tool outlived its terminal"
    names = [case.get("name") for case in ET.parse(report).getroot().iter("testcase")]
    assert names[-1] == "(stopped)" and set(names[:-1]) <= {"b__bbbbbbb"}, names  # b, quick, may have ended


def test_a_stop_whose_document_then_fails_is_reported_once_with_its_first_cause(task, runs, tmp_path, env):
    """``test JOB --json --junit out.xml 2>err`` in a terminal that closes: SIGHUP stopped it and the
    report said so; then the document's end, to the closed terminal, failed (EIO), and the stop was
    reported again as standard output's: a second stop line, and the report rewritten with that cause
    (a FIFO's reader got two documents). One report, one line: the signal's."""
    job = _a_job_with_a_slow_first_trial(task, runs, tmp_path)
    report, err = an_old_green_report(tmp_path / "out.xml"), tmp_path / "err.txt"
    scratch = env["TMPDIR"]
    args = ["test", str(job), "--json", "--junit", str(report), "-j", "1", "--python", PY]
    assert hung_up(env, args, lambda: has_started(scratch), stderr=err) is not None, "it outlived its terminal"
    said = err.read_text()
    assert "Traceback" not in said and said.count("stopped") == 1, said
    error = ET.parse(report).getroot().find("testcase[@name='(stopped)']/error")
    assert error is not None and error.get("message", "").startswith("stopped by SIGHUP"), said


def test_a_terminal_that_closes_mid_test_job_json_to_a_file_leaves_the_whole_document(task, runs, tmp_path, env):
    """``test JOB --json >out.json`` in an ssh session that drops: the stop's line to the closed terminal
    failed (EIO) before the document was ended, which stayed ``{"trials": [`` open. The document is
    written whole before the line, and a line that cannot be written ends nothing."""
    job = _a_job_with_a_slow_first_trial(task, runs, tmp_path)
    out, scratch = tmp_path / "out.json", env["TMPDIR"]
    args = ["test", str(job), "--json", "-j", "1", "--python", PY]
    assert hung_up(env, args, lambda: has_started(scratch), stdout=out) == 129
    assert json.loads(out.read_text())["stopped"].startswith("stopped by SIGHUP"), out.read_text()


# stdout fails (ENOSPC) from its Nth write on, as a disk that fills while the document streams; with
# "term", a SIGTERM lands once it has failed, the replays over (a CI timeout as the report is written)
FAILS_AFTER = """
import errno, os, signal, sys
from verifier_tui.commands import harbor, terminal
n, term = int(sys.argv.pop(1)), sys.argv.pop(1) == "term"
real, count = terminal._write_all, [0]
def failing(handle, text):
    if handle is sys.stdout:
        count[0] += 1
        if count[0] > n:
            raise OSError(errno.ENOSPC, "No space left on device")
    return real(handle, text)
terminal._write_all = failing
said = harbor._stdout_failed
def signalled(*args):
    if term:
        os.kill(os.getpid(), signal.SIGTERM)
    return said(*args)
harbor._stdout_failed = signalled
from verifier_tui.cli import main
sys.exit(main())
"""


@pytest.mark.parametrize("then", ["", "term"], ids=["alone", "then-a-sigterm"])
def test_a_document_cut_mid_stream_reports_every_trial_that_finished(task, runs, tmp_path, env, then):
    """``test JOB --json --junit out.xml`` to a disk that fills as the trials stream: the trial whose
    line could not be written was left out of the report, though its replay had ended. It is in it,
    with the ``(stopped)`` error saying standard output could not be written, said in one line. A
    SIGTERM landing after the failure gave status 143 where the line and the report blamed the full
    disk: the first cause wins, its status too."""
    job = runs / "jobs" / "j"
    demo = task(verifier=READS_HELLO, toml=SEPARATE)
    for name in ("a__aaaaaaa", "b__bbbbbbb", "c__ccccccc"):
        sandbox_trial(job, demo, tmp_path, workspace={"hello.txt": "hi"}, mode="separate", capture=True, name=name)
    report = an_old_green_report(tmp_path / "out.xml")
    tool = [sys.executable, "-c", FAILS_AFTER, "1", then]  # the document's head with a's line; b's fails
    done = run_tool(env, "test", job, "--json", "--junit", report, "--python", PY, "-j", "1", tool=tool)
    no_traceback(done)
    names = [case.get("name") for case in ET.parse(report).getroot().iter("testcase")]
    assert sorted(names[:-1]) == ["a__aaaaaaa", "b__bbbbbbb"] and names[-1] == "(stopped)", names
    error = ET.parse(report).getroot().find("testcase[@name='(stopped)']/error")
    assert error is not None and "standard output could not be written" in error.get("message", "")
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "No space left" in done.stderr, done.stderr


@pytest.mark.parametrize(
    ("where", "when", "stopped"),
    [
        ("verifier_tui.engine.suite:arun_groups", "after", None),
        ("verifier_tui.commands.harbor:_job_counts", "before", None),
        (
            "verifier_tui.engine.suite:collect",
            "after",
            "stopped by SIGTERM before the trials to run were all found: none ran",
        ),
        (
            "verifier_tui.commands.harbor:stand_in_of",
            "after",
            "stopped by SIGTERM before the trials to run were all found: none ran",
        ),
    ],
    ids=["as-the-last-trial-ends", "as-the-document-ends", "as-the-trials-are-read", "before-the-trials-are-read"],
)
def test_a_sigterm_outside_the_replays_leaves_the_whole_document_and_report(
    task, runs, tmp_path, env, where, when, stopped
):
    """A CI job's timeout landing as the last replay ended (the document said ``2 of 2 trials finished``
    stopped, the report had a ``(stopped)`` error, of a run that completed), as the document was ended
    (its trials' array left open), as the trials were read or before (stdout empty). The document ends whole:
    every trial and no ``stopped``, or none run and ``stopped`` saying so; the exit status says the signal."""
    job = runs / "jobs" / "j"
    demo = task(verifier=READS_HELLO, toml=SEPARATE)
    for name in ("a__aaaaaaa", "b__bbbbbbb"):
        sandbox_trial(job, demo, tmp_path, workspace={"hello.txt": "hi"}, mode="separate", capture=True, name=name)
    report = an_old_green_report(tmp_path / "out.xml")
    tool = signalled_at(where, signal.SIGTERM, when)
    done = run_tool(env, "test", job, "--json", "--junit", report, "--python", PY, tool=tool)
    assert done.returncode == 143 and "Traceback" not in done.stderr, (done.returncode, done.stderr)
    data = json.loads(done.stdout)
    names = [trial["trial"]["name"] for trial in data["trials"]]
    cases = [case.get("name") for case in ET.parse(report).getroot().iter("testcase")]
    assert data["stopped"] == stopped, data
    if stopped is None:
        assert names == cases == ["a__aaaaaaa", "b__bbbbbbb"] and data["agree"] == 2, (names, cases)
    else:
        assert names == [] and cases == ["(stopped)"] and stopped in done.stderr, (names, cases)


def test_a_sigterm_as_the_one_trials_row_is_made_leaves_the_whole_document_and_report(task, runs, tmp_path, env):
    """A CI job's timeout landing as the row of a job's one trial was made, the replays not yet over:
    they are cancelled with every trial ended. The document and report are this run's, whole, with no
    ``stopped`` and no ``(stopped)`` error; the exit status alone says the signal came."""
    job = runs / "jobs" / "j"
    demo = task(verifier=READS_HELLO, toml=SEPARATE)
    sandbox_trial(job, demo, tmp_path, workspace={"hello.txt": "hi"}, mode="separate", capture=True, name="a__aaaaaaa")
    report = an_old_green_report(tmp_path / "out.xml")
    tool = signalled_at("verifier_tui.commands.harbor:job_row", signal.SIGTERM)
    done = run_tool(env, "test", job, "--json", "--junit", report, "--python", PY, tool=tool)
    assert done.returncode == 143 and "Traceback" not in done.stderr, (done.returncode, done.stderr)
    data = json.loads(done.stdout)
    assert data["stopped"] is None and data["agree"] == 1, data
    assert [trial["trial"]["name"] for trial in data["trials"]] == ["a__aaaaaaa"], data["trials"]
    assert [case.get("name") for case in ET.parse(report).getroot().iter("testcase")] == ["a__aaaaaaa"]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "ctrl-c"])
def test_a_signal_stops_test_job_among_trials_that_replay_nothing(task, runs, tmp_path, env, sig):
    """Ctrl+C (or a CI job's timeout) as ``test JOB`` went through a job whose trials kept no /app,
    Harbor's default: each such trial ends without a process, so the cancel the signal asked for
    waited until every one had been gone through (68 s for 1,500 trials), and the document said
    nothing was stopped. The signal lands between two trials: the first one listed, the rest not."""
    demo = task()
    names = [f"t{i}__aaaaaaa" for i in range(6)]
    job = make_job(runs / "jobs" / "j", {name: dict(task=demo, **PASSED) for name in names})
    tool = signalled_at("verifier_tui.commands.harbor:job_row", sig)
    done = run_tool(env, "test", job, "--json", "-j", "1", "--python", PY, tool=tool)
    assert done.returncode == 128 + sig and "Traceback" not in done.stderr, (done.returncode, done.stderr)
    data = json.loads(done.stdout)
    assert len(data["trials"]) < len(names) and data["stopped"], (len(data["trials"]), data["stopped"])


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "ctrl-c"])
def test_a_sigterm_as_python_is_checked_for_test_job_prints_the_document_of_no_trial_run(
    task, runs, tmp_path, env, sig
):
    """A CI job's timeout (or Ctrl+C) while ``test JOB --json --junit`` checks ``--python``: the tool exited 143 with
    stdout empty and the last run's report (all green) left for CI, where ``test`` on tasks prints its
    document of no case run. As there: the check ends, the document says none ran (the trials are not
    read after it), and the report has the ``(stopped)`` error."""
    job = runs / "jobs" / "j"
    demo = task(verifier=READS_HELLO, toml=SEPARATE)
    for name in ("a__aaaaaaa", "b__bbbbbbb"):
        sandbox_trial(job, demo, tmp_path, workspace={"hello.txt": "hi"}, mode="separate", capture=True, name=name)
    python, asked = a_python_that_never_answers(tmp_path)
    report, out = an_old_green_report(tmp_path / "out.xml"), tmp_path / "out.json"
    args = ["test", job, "--json", "--junit", report, "--python", python]
    code, err = interrupted(env, args, asked.exists, sig, "never asked", out)
    assert code == 128 + sig and "Traceback" not in err and "did not answer" not in err, (code, err)
    data = json.loads(out.read_text())
    assert data["stopped"] == f"stopped by {sig.name} before the trials to run were all found: none ran", data
    assert data["trials"] == [] and data["stopped"] in err, data
    assert [case.get("name") for case in ET.parse(report).getroot().iter("testcase")] == ["(stopped)"]


def _a_job_read_until_a_signal(task, runs, tmp_path, env, sig, out):
    """``test JOB --json --junit out.xml > out`` signalled while it reads the trials (the reading waits
    on a FIFO after the first trial): its exit status, stderr and report."""
    job = runs / "jobs" / "j"
    demo = task(verifier=READS_HELLO, toml=SEPARATE)
    for name in ("a__aaaaaaa", "b__bbbbbbb"):
        sandbox_trial(job, demo, tmp_path, workspace={"hello.txt": "hi"}, mode="separate", capture=True, name=name)
    fifo = tmp_path / "reading"
    os.mkfifo(fifo)
    report = an_old_green_report(tmp_path / "out.xml")
    tool = held_at("verifier_tui.engine.harbor.folders:TrialRef.read", fifo)
    args = ["test", job, "--json", "--junit", report, "--python", PY]
    code, err = interrupted(env, args, "wait_for_partner", sig, "never waited on the FIFO", out, tool)
    return code, err, report


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "ctrl-c"])
def test_a_signal_while_the_trials_are_read_ends_the_reading(task, runs, tmp_path, env, sig):
    """A CI job's timeout (or Ctrl+C) as ``test JOB`` read a job of thousands of trials: the signal
    waited until every trial had been read. Here the reading never ends by itself (it waits on a FIFO
    after the first trial): the signal ends it, no trial ran, and the document and the report say so,
    as ``test`` on tasks does."""
    out = tmp_path / "out.json"
    code, err, report = _a_job_read_until_a_signal(task, runs, tmp_path, env, sig, out)
    assert code == 128 + sig and "Traceback" not in err, (code, err)
    data = json.loads(out.read_text())
    assert data["stopped"] == f"stopped by {sig.name} before the trials to run were all found: none ran", data
    assert data["trials"] == [] and data["trial_folders"] == 0 and data["stopped"] in err, data
    assert [case.get("name") for case in ET.parse(report).getroot().iter("testcase")] == ["(stopped)"]


def test_a_signal_while_the_trials_are_read_writes_the_report_though_stdout_is_a_full_disk(task, runs, tmp_path, env):
    """The same, stdout a full disk: the document's first lines, printed before the report, ended the
    command, and the last run's report (all green) was left for CI. The report says the stop."""
    code, err, report = _a_job_read_until_a_signal(task, runs, tmp_path, env, signal.SIGTERM, Path("/dev/full"))
    assert "Traceback" not in err and err.count("No space left on device") == 1, (code, err)
    assert [case.get("name") for case in ET.parse(report).getroot().iter("testcase")] == ["(stopped)"], err
    assert code == 128 + signal.SIGTERM, (code, err)


def test_the_folders_a_job_leaves_out_are_notes_of_the_junit_report_as_of_the_table(task, runs, tmp_path, env):
    """A link in a job (never followed) and a folder that is no trial: ``test
    JOB`` says each in a ``note:`` line under its table and in ``--json``'s
    ``problems``, but its ``--junit`` report had no word of them, so a CI page
    showed every trial accounted for. Each is a ``note`` property of the suite,
    as a task's notes are in ``test --junit``."""
    job = a_job(task, runs, tmp_path)
    (job / "other__x1").symlink_to(tmp_path)
    (job / "scratch").mkdir()
    report = tmp_path / "report.xml"
    done = run_tool(env, "test", job, "--junit", report, "--python", PY, cwd=tmp_path)
    no_traceback(done)
    said = [line.removeprefix("note: ") for line in done.stdout.splitlines() if line.startswith("note: ")]
    assert len(said) == 2 and any("other__x1 is a link to" in note for note in said), done.stdout
    suite = ET.parse(report).getroot()
    notes = [p.get("value") for p in suite.iter("property") if p.get("name") == "note"]
    assert notes == said, ET.tostring(suite)


def test_a_trials_notes_are_in_its_junit_case_as_under_the_table(task, runs, tmp_path, env):
    """A trial whose ``verifier/reward.txt`` is a link (to a file of the
    user's): ``test JOB`` says under its table that it was not read, so what
    result.json recorded cannot be checked against it, but the trial's JUnit
    case had no word of it (a passing case nothing at all): a CI page never
    showed the link. The case's output holds each of the trial's notes."""
    job = a_job(task, runs, tmp_path)
    trial = next(path for path in job.iterdir() if path.is_dir())
    mine = tmp_path / "mine.txt"
    mine.write_text("0.5\n")
    (trial / "verifier" / "reward.txt").unlink()
    (trial / "verifier" / "reward.txt").symlink_to(mine)
    report = tmp_path / "report.xml"
    done = run_tool(env, "test", job, "--junit", report, "--python", PY, cwd=tmp_path)
    no_traceback(done)
    prefix = f"── {trial.name}: "
    notes = [line.removeprefix(prefix) for line in done.stdout.splitlines() if line.startswith(prefix)]
    assert any("reward.txt is a link to" in note for note in notes), done.stdout
    [case] = ET.parse(report).getroot().iter("testcase")
    out = case.find("system-out")
    said = out.text if out is not None and out.text else ""
    # (the table says the link's target from where the command ran; the report, read elsewhere, says it whole)
    assert f"reward.txt is a link to {mine}: " in said and "cannot be checked against it" in said, said


def test_a_trials_note_is_one_line_in_its_junit_case(task, runs, tmp_path, env):
    """A trial whose result.json records a reward keyed ``a`` newline ``b``,
    which its reward files do not bear out: the note saying so broke across
    lines in the JUnit case (its notes were joined as read, not put on one line
    as every other face says them), so a CI page showed half a note, and a
    line of the trial's making; so did its failure's message and text."""
    job = a_job(task, runs, tmp_path)
    trial = next(path for path in job.iterdir() if path.is_dir())
    result = json.loads((trial / "result.json").read_text())
    result["verifier_result"]["rewards"] = {"a\nb": 1.0}
    (trial / "result.json").write_text(json.dumps(result))
    report = tmp_path / "report.xml"
    done = run_tool(env, "test", job, "--junit", report, "--python", PY, cwd=tmp_path)
    no_traceback(done)
    [case] = ET.parse(report).getroot().iter("testcase")
    out = case.find("system-out")
    said = out.text if out is not None and out.text else ""
    assert "result.json recorded" in said, said
    assert not any(line.startswith("b=") for line in said.splitlines()), said
    failure = case.find("failure")
    assert failure is not None and "\n" not in failure.get("message", ""), ET.tostring(case)
    assert not any(line.startswith("b ") for line in (failure.text or "").splitlines()), failure.text
