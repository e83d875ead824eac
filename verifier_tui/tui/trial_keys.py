"""The keys of a trial's screen and of a job's list: one table each feeds
the bindings (and so the footer) and the command palette."""

from __future__ import annotations

from textual.binding import Binding

#: (key, action, footer word, palette title, palette help).
TRIAL_KEYS: list[tuple[str, str, str, str, str]] = [
    ("r", "run", "replay", "Replay now", "Run the verifier locally again, in Harbor mode, on the trial's inputs"),
    ("w", "toggle_watch", "watch", "Toggle live reload", "Replay on every save to the task (on) or only on r (off)"),
    ("e", "edit", "edit", "Open the failing line in $EDITOR",
     "The failing line of the side in focus (tab moves between the sandbox and the replay)"),
    ("f", "choose_workspace", "workspace", "Replay on a folder of yours",
     "A stand-in for /app when the trial did not capture it"),
    ("s", "choose_case", "case", "Replay on a case", "One of the task's cases as the stand-in for /app"),
    ("q", "app.quit", "quit", "Quit", "Quit verifier-tui"),
]

JOB_KEYS: list[tuple[str, str, str, str, str]] = [
    ("q", "app.quit", "quit", "Quit", "Quit verifier-tui"),
]


def bindings(table: list[tuple[str, str, str, str, str]]) -> list[Binding]:
    return [Binding(key, action, word) for key, action, word, _title, _help in table]
