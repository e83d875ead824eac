"""What ``c`` on a trial's screen says where the verdict shown is the task's
test.sh's and verifier-tui's runner alone ended otherwise: how that run
ended (a reward key read from the trial as harmless words), and ``run TRIAL``
with the screen's own choices, which pasted into a shell ends as shown."""

from __future__ import annotations

import json
from pathlib import Path

from tests.harbor.test_trial_screen_files import command_note
from tests.harbor.trial_app_under_test import SIZE, make_trial_app, text_of
from tests.helpers.commands import run_in_shell_text
from tests.helpers.harbor import RUNNER, SEPARATE, sandbox_trial

#: A reward key that would draw a row of its own, clear the screen and reverse what follows it.
HOSTILE_KEY = "def verify(workspace):\n    return {'reward': 1.0, 'x\\nforged line\\x1b[2J\\u202e': 1.0}\n"


def own_runner_writing(demo, value: str) -> None:
    """The task vendors a runner of its own, which writes ``value`` whatever verify returns: the
    verdict shown (test.sh's) and verifier-tui's runner alone then part."""
    own = demo / "tests" / ".ng" / "run_verifier.py"
    own.parent.mkdir()
    replaced = f"    result = {value}\n    number = _number(result)\n"
    own.write_text(RUNNER.read_text().replace("    number = _number(result)\n", replaced, 1))


async def test_a_hostile_reward_key_of_the_runner_alone_draws_no_row_nor_escape(task, runs, tmp_path):
    """The runner alone's verdict held a reward key with a line break, an escape and a bidi
    control: ``c``'s note put it raw (a forged line, a raw ESC and U+202E drawn), and the
    agreement panel drew the forged line as a row of its own. Both now show the key escaped."""
    demo = task(verifier=HOSTILE_KEY, toml=SEPARATE)
    trial = sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={}, mode="separate", capture=True)
    own_runner_writing(demo, "0.25")
    app = make_trial_app(trial.path)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        await pilot.pause()
        panel = text_of(app, "#agreement")
        await command_note(app, pilot)
        said = app.screen.note or ""
    ended = said[said.index("ended otherwise here") : said.index("The verdict shown")]
    assert not any(c in ended for c in "\n\x1b\u202e"), ended
    assert "forged line" in ended, ended
    assert not any(line.lstrip("│ ").startswith("forged line") for line in panel.splitlines()), panel


#: A verdict that needs the screen's stand-in (hello.txt) and its --env (SCALE): without either it differs.
SCALED_LENGTH = (
    "import os\n\ndef verify(workspace):\n"
    "    return len((workspace / 'hello.txt').read_text()) * float(os.environ.get('SCALE', '1'))\n"
)


def stand_in_folder(tmp_path):
    folder = tmp_path / "standin"
    folder.mkdir()
    (folder / "hello.txt").write_text("hello")
    return folder


def run_trial_of(said: str) -> str:
    """The ``run TRIAL`` command ``c``'s note names."""
    return said[said.index("Not the same run: ") + len("Not the same run: ") : said.index(" replays the trial")]


async def test_c_names_run_trial_with_the_screens_stand_in_and_options(task, runs, tmp_path, env):
    """A trial that did not capture /app, replayed on a folder chosen on screen, with ``--env``: the
    note named ``run TRIAL`` alone as replaying it "as shown", which pasted had no workspace to replay
    on and no SCALE. It names the stand-in and the options, and pasted it ends as the screen shows."""
    demo = task(verifier=SCALED_LENGTH, toml=SEPARATE)
    trial = sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={"hello.txt": "hi"}, mode="separate")
    own_runner_writing(demo, "result / 4")
    app = make_trial_app(trial.path, env=("SCALE=3",))
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        await app.screen._replay_on(workspace=stand_in_folder(tmp_path))
        shown = (await app.wait_for_replays(2)).local
        await command_note(app, pilot)
        said = app.screen.note or ""
    assert shown is not None and shown.verdict.rewards == {"reward": 3.75}
    assert "replays the trial as shown" in said, said
    done = run_in_shell_text(run_trial_of(said), env, Path.cwd())
    assert json.loads(done.stdout)["local"]["rewards"] == {"reward": 3.75}, done.stdout[-2000:]


async def test_c_on_a_stand_in_over_a_captured_app_says_run_trial_has_no_option_for_it(task, runs, tmp_path):
    """``run TRIAL`` takes a stand-in only where the trial did not capture /app: one chosen on
    screen over the captured /app is said to be left out, never "as shown"."""
    demo = task(verifier=SCALED_LENGTH, toml=SEPARATE)
    trial = sandbox_trial(
        runs / "jobs" / "j", demo, tmp_path, workspace={"hello.txt": "hi"}, mode="separate", capture=True
    )
    own_runner_writing(demo, "result / 4")
    app = make_trial_app(trial.path)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        await app.screen._replay_on(workspace=stand_in_folder(tmp_path))
        await app.wait_for_replays(2)
        note = await command_note(app, pilot)
    assert "as shown" not in note, note
    assert "replays the trial, but not on your stand-in" in note and "which it has no option for" in note, note


def test_the_run_trial_named_for_a_step_replays_that_step(task, runs, tmp_path, env):
    """The second step of a trial of two shown: the ``run TRIAL`` named for it replays that
    step, not the first (run TRIAL's default)."""
    from tests.harbor.test_trial_cli import two_step_job
    from verifier_tui.engine.harbor.folders import open_harbor, select_trial
    from verifier_tui.engine.harbor.trial_session import TrialSession
    from verifier_tui.words.run import command_words

    job = two_step_job(task(verifier="def verify(workspace):\n    return 1.0\n"), runs, tmp_path, second=0.0)
    trial, step = select_trial(open_harbor(job)[0], None, "second")
    with TrialSession(trial, step) as opened:
        words, lacking = opened.replay_command()
    assert lacking is None
    done = run_in_shell_text(" ".join(command_words(words, tmp_path)), env, tmp_path)
    assert json.loads(done.stdout)["trial"]["step"] == "second", done.stdout[-2000:]


async def test_c_names_a_run_trial_that_pastes_for_a_relative_workspace_starting_with_a_dash(
    task, runs, tmp_path, env, monkeypatch
):
    """The screen started with ``--workspace ./-ws``: ``c`` named ``run TRIAL ... --workspace -ws``,
    which pasted stopped at once (``--workspace: expected one argument``). The folder is named by
    a path a shell and the command line take, and pasted the command ends as the screen shows."""
    demo = task(verifier=SCALED_LENGTH, toml=SEPARATE)
    trial = sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={"hello.txt": "hi"}, mode="separate")
    own_runner_writing(demo, "result / 4")
    (tmp_path / "-ws").mkdir()
    (tmp_path / "-ws" / "hello.txt").write_text("hello")
    monkeypatch.chdir(tmp_path)
    app = make_trial_app(trial.path, workspace=Path("./-ws"))
    async with app.run_test(size=SIZE) as pilot:
        shown = (await app.wait_for_replays(1)).local
        await command_note(app, pilot)
        said = app.screen.note or ""
    assert shown is not None and shown.verdict.rewards == {"reward": 1.25}
    done = run_in_shell_text(run_trial_of(said), env, tmp_path)
    assert json.loads(done.stdout)["local"]["rewards"] == {"reward": 1.25}, done.stderr[-2000:]


def test_the_run_trial_named_for_a_case_starting_with_a_dash_replays_on_it(task, runs, tmp_path, env):
    """A case named ``-x`` as the stand-in: ``run TRIAL`` was named with ``--case -x``, which the
    command line reads as an option. Every value starting with ``-`` is written ``--case=-x``."""
    from verifier_tui.engine.harbor.replay import StandIn
    from verifier_tui.engine.harbor.trial_session import TrialSession
    from verifier_tui.words.run import command_words

    demo = task(verifier=SCALED_LENGTH, toml=SEPARATE, cases={"-x": {"hello.txt": "hello"}})
    trial = sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={"hello.txt": "hi"}, mode="separate")
    with TrialSession(trial, None, stand_in=StandIn(case="-x")) as opened:
        words, lacking = opened.replay_command()
    assert lacking is None
    done = run_in_shell_text(" ".join(command_words(words, tmp_path)), env, tmp_path)
    assert json.loads(done.stdout)["local"]["rewards"] == {"reward": 5.0}, done.stderr[-2000:]
