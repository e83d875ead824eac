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
    trial = TrialDisplay(start / "tasks" / "t", base=start, home=str(home))
    for face in (main.path, main.text, trial.path, trial.text, lambda p: text_from(str(p), start, str(home))):
        assert face(str(inside)) == "tasks/t/tests/verifier.py"
        assert face(str(outside)) == "~/other/f.py"
    assert path_from(outside, start) == str(outside)
    assert path_from(start / "-x", start) == "./-x"  # never read as an option
