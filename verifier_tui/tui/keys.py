"""The main screen's keys: one table feeds the bindings (and so the footer)
and the command palette, so they cannot disagree."""

from __future__ import annotations

from textual.binding import Binding

from verifier_tui.words.run import mode_text

#: The five choosers share one footer entry ("s v f p t choose"): each key is
#: also shown next to what it changes in the header.
CHOOSE = Binding.Group("choose")
#: m (toggle the mode) and b (run in both modes) share one entry, "m b mode":
#: the footer must fit 100 columns.
MODE = Binding.Group("mode")

#: (key, action, footer word, palette title, palette help).
KEYS: list[tuple[str, str, str, str, str]] = [
    ("r", "run", "run", "Run now", "Run the verifier on the current choices"),
    ("w", "toggle_watch", "watch", "Toggle live reload", "Re-run on every save (on) or only on r (off)"),
    ("m", "toggle_mode", "mode", "Toggle mode", f"{mode_text('harbor')} or {mode_text('server')}"),
    (
        "b",
        "both_modes",
        "both modes",
        "Run in both modes",
        f"{mode_text('server')} and {mode_text('harbor')}: does the verifier work under each?",
    ),
    ("a", "run_all", "all", "Run all cases", "Run every case; each shows its verdict in the list"),
    ("s", "choose_case", "case", "Choose case", "Pick one of the task's cases"),
    ("v", "choose_verifier", "verifier", "Choose verifier", "Pick the verifier file to run"),
    ("f", "choose_workspace", "workspace", "Choose workspace", "Pick any folder as the workspace (/app)"),
    ("p", "choose_response", "response", "Choose response", "A file, none (Harbor mode), or typed in an editor"),
    ("t", "choose_task_data", "task data", "Choose task data", "A JSON file passed as task_data"),
    ("e", "edit", "edit", "Open failing line in $EDITOR", "Open the traceback's failing line (suspends the app)"),
    ("d", "debug", "pdb", "Re-run under pdb", "Post-mortem pdb in the real terminal (suspends the app)"),
    ("c", "copy_command", "copy", "Copy reproduce command", "The shell command that reproduces this run"),
    ("o", "toggle_output", "stdout", "Toggle stdout / stderr", "Show the run's stdout or its stderr"),
    # Shown only for a task that ships its own runner (MainScreen.check_action).
    (
        "R",
        "toggle_runner",
        "runner",
        "Toggle runner",
        "verifier-tui's runner, or the task's own tests/.ng/run_verifier.py (what the sandbox runs)",
    ),
    (
        "question_mark",
        "help",
        "help",
        "Help: keys and marks",
        "Every key, and what the marks in the cases list and the history mean",
    ),
    ("q", "app.quit", "quit", "Quit", "Quit verifier-tui"),
]


def shown_key(key: str) -> str:
    """A key as the user types it (Textual names ``?`` question_mark)."""
    return "?" if key == "question_mark" else key


def key_bindings() -> list[Binding]:
    return [
        Binding(
            key,
            action,
            word,
            group=CHOOSE if action.startswith("choose_") else MODE if action in ("toggle_mode", "both_modes") else None,
            show=action != "help",
        )  # the footer must fit 100 columns; ? is in the palette
        for key, action, word, _title, _help in KEYS
    ]
