"""A trial's replay gets Harbor's environment for its verifier, and what
``--env`` adds (issue 9): never the rest of the user's shell."""

from __future__ import annotations

from tests.harbor.test_replay import SEPARATE, replay, trial_from_sandbox

SHOWS = ("import os\n\n"
         "def verify(workspace):\n"
         "    print(os.environ.get('VTUI_TOKEN'), os.environ.get('VTUI_TYPED'))\n"
         "    return 1.0\n")


def test_a_replay_gets_what_env_adds_and_nothing_else_of_the_shell(task, runs, tmp_path, monkeypatch):
    monkeypatch.setenv("VTUI_TOKEN", "from the shell")
    trial = trial_from_sandbox(runs, tmp_path, task(verifier=SHOWS, toml=SEPARATE), workspace={}, mode="separate",
                               capture=True)
    _, _, plain, _ = replay(trial)
    assert plain.stdout.text == "None None\n"
    _, _, added, _ = replay(trial, env=("VTUI_TOKEN", "VTUI_TYPED=typed"))
    assert added.stdout.text == "from the shell typed\n"
