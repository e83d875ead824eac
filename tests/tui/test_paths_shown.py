"""One path display (words/paths.py) for every face: the main screen, the
trial screen and a trial's text output show a path as it resolves from where
they start, the home folder as ``~``; the command a shell takes back keeps it
whole."""

from __future__ import annotations

from verifier_tui.tui.display import Display
from verifier_tui.tui.trial_display import TrialDisplay
from verifier_tui.words.paths import path_from, text_from


def test_every_face_shows_a_path_from_where_it_starts_and_the_home_folder_as_a_tilde(tmp_path):
    home = tmp_path / "home"
    start = home / "work"
    inside, outside = start / "tasks" / "t" / "tests" / "verifier.py", home / "other" / "f.py"
    main = Display(start / "tasks" / "t", cwd=start, home=str(home))
    trial = TrialDisplay(start / "tasks" / "t", base=start / "tasks", cwd=start, home=str(home))
    for face in (main.path, main.text, trial.path, trial.text, lambda p: text_from(str(p), start, str(home))):
        assert face(str(inside)) == "tasks/t/tests/verifier.py"
        assert face(str(outside)) == "~/other/f.py"
    assert path_from(outside, start) == str(outside)
    assert path_from(start / "-x", start) == "./-x"  # never read as an option


def test_a_trials_paths_read_from_where_the_user_started_unless_the_screen_is_a_snapshot(tmp_path):
    """Harbor ran in ``runs/``; started one folder up, ``tasks/t`` would name
    the ``tasks/t`` beside the user, not the trial's task."""
    task = tmp_path / "runs" / "tasks" / "t"
    shown = TrialDisplay(task, base=tmp_path / "runs", cwd=tmp_path, home="/nowhere")
    assert shown.path(task) == "runs/tasks/t"
    snapshot = TrialDisplay(task, deterministic=True, base=tmp_path / "runs", cwd=tmp_path, home="/nowhere")
    assert snapshot.path(task) == "tasks/t"  # the same on every machine
