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

#: A job's overview (screens/job_overview.py).
OVERVIEW_KEYS: list[tuple[str, str, str, str, str]] = [
    ("enter", "open", "open", "Open the trial (or show the task's trials)",
     "On a trial: the sandbox beside a local replay; on a task: only its trials"),
    ("f", "failures", "failures", "Failures only", "Show only the trials that did not pass (again: all)"),
    ("x", "next_exception", "exception", "Filter by exception type",
     "Each press shows the trials of the next exception type Harbor recorded, then all again"),
    ("t", "task", "task", "Filter by task", "Only the trials of the task under the cursor in the tasks table "
     "(again: every task)"),
    ("s", "sort", "sort", "Sort the trials", "By name, how they ended, reward, duration (longest first), task"),
    ("question_mark", "help", "help", "Keys", "This list"),
    ("q", "app.quit", "quit", "Quit", "Quit verifier-tui"),
]

#: A folder of jobs (screens/jobs.py).
JOBS_KEYS: list[tuple[str, str, str, str, str]] = [
    ("enter", "open", "open", "Open the job", "Its overview: how its trials ended, rewards, tasks, trials"),
    ("question_mark", "help", "help", "Keys", "This list"),
    ("q", "app.quit", "quit", "Quit", "Quit verifier-tui"),
]


def bindings(table: list[tuple[str, str, str, str, str]]) -> list[Binding]:
    # enter belongs to the table in focus (DataTable selects on it): not bound twice.
    return [Binding(key, action, word) for key, action, word, _title, _help in table if key != "enter"]
