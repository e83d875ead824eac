"""``verifier-tui JOB`` and ``verifier-tui TRIAL`` for real: the installed entry
point in a pseudo-terminal, as a user starts them."""

from __future__ import annotations

import pytest

from tests.helpers.commands import no_traceback, run_in_terminal, run_tool
from tests.helpers.harbor import READS_HELLO, SEPARATE, sandbox_trial
from tests.helpers.processes import bwrap_probes_that_fail

pytest.importorskip("pty")


def _job(task, runs, tmp_path):
    passing = task("passing", verifier=READS_HELLO, toml=SEPARATE)
    job = runs / "jobs" / "several"
    sandbox_trial(
        job, passing, tmp_path, workspace={"hello.txt": "hi"}, mode="separate", capture=True, name="passing__aaaaaaa"
    )
    sandbox_trial(job, passing, tmp_path, workspace={}, mode="separate", capture=True, name="passing__bbbbbbb")
    return job


def test_a_job_opens_on_its_list_of_trials(task, runs, tmp_path, env):
    job = _job(task, runs, tmp_path)
    seen, status = run_in_terminal(env, [str(job)], until=b"passing__bbbbbbb")
    assert b"passing__aaaaaaa" in seen and b"passing__bbbbbbb" in seen
    assert b"RewardFileNotFoundError" in seen  # the sandbox verdict beside the trial
    assert status == 0
    assert b"Traceback" not in seen


def test_a_job_with_trial_named_opens_that_trial_and_replays_it(task, runs, tmp_path, env):
    job = _job(task, runs, tmp_path)
    seen, status = run_in_terminal(env, [str(job), "--trial", "passing__bbbbbbb"], until=b"same")
    assert b"passing__bbbbbbb" in seen
    assert b"same" in seen  # the replay ran and agrees with the sandbox
    assert b"FileNotFoundError" in seen  # the verifier's own traceback (no hello.txt), on both sides
    assert status == 0


def test_a_trial_folder_opens_on_its_walkthrough(task, runs, tmp_path, env):
    job = _job(task, runs, tmp_path)
    seen, status = run_in_terminal(env, [str(job / "passing__aaaaaaa")], until=b"same")
    assert b"passing__aaaaaaa" in seen and b"same" in seen
    assert status == 0


def test_without_a_terminal_the_suggested_command_keeps_the_trial_chosen(task, runs, tmp_path, env):
    job = _job(task, runs, tmp_path)
    done = run_tool(env, job, "--trial", "passing__bbbbbbb")  # stdin and stdout are pipes here
    assert done.returncode == 2
    assert f"verifier-tui run {job} --trial passing__bbbbbbb" in done.stderr
    no_traceback(done)


@pytest.mark.parametrize("given", ["--workspace", "--python"])
def test_a_bad_workspace_or_python_on_a_trial_is_one_line_before_the_screen(task, runs, tmp_path, env, given):
    """``verifier-tui TRIAL --workspace nowhere`` (or a ``--python`` that cannot
    run the runner) opened the trial's screen, where ``verifier-tui TASK
    --workspace nowhere`` and ``run TRIAL`` refuse in one line, exit 2. The
    interpreter is asked only where a replay runs: a job's overview opens."""
    job = _job(task, runs, tmp_path)
    value = {"--workspace": str(tmp_path / "nowhere"), "--python": "/nonexistent/python3"}[given]
    said = {"--workspace": f"workspace {value} is not a folder", "--python": f"--python {value}: No such file"}[given]
    seen, status = run_in_terminal(env, [str(job / "passing__aaaaaaa"), given, value], until=said.encode())
    assert said.encode() in seen and status == 2
    assert b"sandbox" not in seen  # no screen of the trial
    if given == "--python":
        seen, status = run_in_terminal(env, [str(job), given, value], until=b"passing__bbbbbbb")
        assert b"passing__bbbbbbb" in seen and status == 0


def test_a_bad_python_on_a_job_of_one_trial_is_one_line_before_the_screen(task, runs, tmp_path, env):
    """A job of one trial opens that trial, whose replay starts at once: a
    ``--python`` that cannot run the runner opened its screen on "the replay
    could not start", where the trial itself refuses it in one line, exit 2."""
    passing = task("passing", verifier=READS_HELLO, toml=SEPARATE)
    job = runs / "jobs" / "alone"
    sandbox_trial(
        job, passing, tmp_path, workspace={"hello.txt": "hi"}, mode="separate", capture=True, name="passing__aaaaaaa"
    )
    # A line break and an escape code typed into the path are written as escapes, as every error line writes them.
    python = "/nonexistent/pyth\non\x1b[31m3"
    said = b"--python /nonexistent/pyth\\non\\x1b[31m3: No such file"
    seen, status = run_in_terminal(env, [str(job), "--python", python], until=said)
    assert said in seen and status == 2
    assert b"sandbox" not in seen  # no screen of the trial


def test_a_trial_option_on_a_folder_that_is_no_trial_says_its_name_harmlessly(tmp_path, env):
    """`--trial` on a folder that is no Harbor folder is one line; the folder's
    name, whatever it holds, reaches the terminal as text, never as a command."""
    folder = tmp_path / "t\x1b[31mx"
    folder.mkdir()
    seen, status = run_in_terminal(env, [str(folder), "--trial", "x"], until=b"is neither")
    assert b"t\\x1b[31mx" in seen and b"\x1b[31mx" not in seen
    assert status == 2


def test_a_trial_with_no_sandbox_to_replay_in_is_one_line_before_the_screen(task, runs, tmp_path, env):
    """``VERIFIER_TUI_SANDBOX=namespace`` on a machine where the sandbox cannot be had: the TUI on a
    trial opened its screen and toasted "replay failed ... IsolationError: ...", where the TUI on a task,
    ``run TRIAL`` and ``watch TRIAL`` refuse in one line, exit 2."""
    job = _job(task, runs, tmp_path)
    unsandboxed = bwrap_probes_that_fail(env, tmp_path / "bin")
    said = b"cannot try the sandbox's view: too many processes"
    seen, status = run_in_terminal(unsandboxed, [str(job / "passing__aaaaaaa")], until=said)
    assert said in seen and status == 2, seen
    assert b"IsolationError" not in seen and b"passing__aaaaaaa" not in seen  # no screen of the trial


@pytest.mark.parametrize("opened", ["trial", "job of one trial"])
def test_a_trial_opened_in_a_terminal_probes_the_sandbox_once(task, runs, tmp_path, env, opened):
    """``verifier-tui TRIAL`` (or a job of one trial, which opens it) with
    ``VERIFIER_TUI_SANDBOX=namespace``: the sandbox was probed before the
    screen (to refuse in one line) and again for the replay's session, so a
    probe that failed the second time (no process slot to spare a moment
    later) failed the replay the first had promised. It is chosen once, as
    ``run TRIAL`` chooses it, and the replay runs in it."""
    passing = task("passing", verifier=READS_HELLO, toml=SEPARATE)
    job = runs / "jobs" / "alone"
    sandbox_trial(job, passing, tmp_path, workspace={"hello.txt": "hi"}, mode="separate", capture=True, name="p__a")
    once = bwrap_probes_that_fail(env, tmp_path / "bin", after=1)
    seen, status = run_in_terminal(once, [str(job / "p__a" if opened == "trial" else job)], until=b"same")
    assert b"same" in seen and status == 0, seen
    assert b"cannot try the sandbox's view" not in seen
    assert (tmp_path / "bin" / "probed").read_text().count("x") == 1


def probes_that_fail_after_one(env, tmp_path, monkeypatch) -> None:
    """This process's sandbox probes past the first refused (:func:`bwrap_probes_that_fail`), its
    bwrap looked up anew on that PATH for this test alone: a process keeps the first path it
    found, which was another test's PATH (or this one's, for the tests after it)."""
    from verifier_tui.engine.sandbox import isolation

    once = bwrap_probes_that_fail(env, tmp_path / "bin", after=1)
    for name in ("VERIFIER_TUI_SANDBOX", "PATH"):
        monkeypatch.setenv(name, once[name])
    monkeypatch.setattr(isolation, "_tools", {})  # and found again after the test


async def test_each_trial_of_a_job_opened_on_screen_keeps_the_first_sandbox(task, runs, tmp_path, env, monkeypatch):
    """The TUI on a job of several trials with ``VERIFIER_TUI_SANDBOX=namespace``: each trial
    opened probed the sandbox again, so a probe refused later (no process slot to spare) broke
    the second trial's replay. The first replay's sandbox is kept for every trial opened after it."""
    from tests.harbor.trial_app_under_test import SIZE, make_trial_app

    job = _job(task, runs, tmp_path)
    probes_that_fail_after_one(env, tmp_path, monkeypatch)
    app = make_trial_app(job)
    async with app.run_test(size=SIZE) as pilot:
        app.open_trial_folder(job / "passing__aaaaaaa")
        await app.wait_for_replays(1)
        await pilot.pause()
        app.pop_screen()
        app.open_trial_folder(job / "passing__bbbbbbb")
        second = await app.wait_for_replays(2)
    assert second.local is not None and second.agreement.same is True, second.local  # ended as the sandbox did
    assert (tmp_path / "bin" / "probed").read_text().count("x") == 1
    assert not any("cannot try the sandbox's view" in notice for notice in app.notices), app.notices


async def test_a_stand_in_chosen_on_the_first_trial_of_a_job_keeps_its_sandbox(task, runs, tmp_path, env, monkeypatch):
    """The first trial of a job opened on screen chose the sandbox at its replay, but a stand-in
    chosen on that screen opened a session that probed it again: a probe refused then (no process
    slot to spare) failed the replay on the stand-in. The sandbox chosen once serves it."""
    from tests.harbor.trial_app_under_test import SIZE, make_trial_app, until

    job = _job(task, runs, tmp_path)
    probes_that_fail_after_one(env, tmp_path, monkeypatch)
    folder = tmp_path / "standin"
    folder.mkdir()
    (folder / "hello.txt").write_text("hi")
    probed = tmp_path / "bin" / "probed"
    app = make_trial_app(job)
    async with app.run_test(size=SIZE) as pilot:
        app.open_trial_folder(job / "passing__aaaaaaa")
        await app.wait_for_replays(1)
        await app.screen._replay_on(workspace=folder)
        await until(pilot, lambda: len(app.replays) >= 2 or probed.read_text().count("x") > 1, "a second replay")
    assert probed.read_text().count("x") == 1
    assert app.replays[-1].local is not None and app.replays[-1].agreement.same is True, app.replays[-1].local


def test_stand_in_empty_is_taken_by_the_tui_as_by_run(task, runs, tmp_path, env):
    """``run TRIAL`` on a trial that did not capture /app says "give --workspace DIR, --case NAME or
    --stand-in empty", and the TUI takes the same options as run: it took the first two, and refused
    the third as "not an option of the TUI". It replays on an empty /app, as run does; on a task it
    is one line, as --trial is."""
    passing = task("passing", verifier=READS_HELLO)
    trial = sandbox_trial(runs / "jobs" / "j", passing, tmp_path, workspace={})
    seen, status = run_in_terminal(env, [str(trial.path), "--stand-in", "empty"], until=b"replay #1")
    assert b"replay #1" in seen and b"not an option" not in seen, seen[-2000:]
    assert b"same" in seen and b"your stand-in" in seen and status == 0
    done = run_tool(env, passing, "--stand-in", "empty")
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [
        f"verifier-tui: --stand-in: only for a Harbor trial or job folder, and {passing} is neither"
    ], done.stderr
