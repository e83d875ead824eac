"""What ``c`` on a trial's screen says where the verdict shown is the task's
test.sh's and verifier-tui's runner alone ended otherwise: how that run
ended (a reward key read from the trial as harmless words), and ``run TRIAL``
with the screen's own choices, which pasted into a shell ends as shown."""

from __future__ import annotations

from tests.harbor.test_trial_screen_files import command_note
from tests.harbor.trial_app_under_test import SIZE, make_trial_app, text_of
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
