"""The keys of a trial's screen and of a job's list: one table each feeds
the bindings (and so the footer) and the command palette (and a trial's ``?`` help)."""

from __future__ import annotations

from textual.binding import Binding, BindingType

#: (key, action, footer word, palette title, palette help).
TRIAL_KEYS: list[tuple[str, str, str, str, str]] = [
    ("r", "run", "replay", "Replay now", "Run the verifier locally again, in Harbor mode, on the trial's inputs"),
    (
        "w",
        "toggle_watch",
        "watch",
        "Toggle live reload",
        "Replay on every save to the task (on), or only mark the replay stale until r (off)",
    ),
    (
        "e",
        "edit",
        "edit",
        "Open the failing line in $EDITOR",
        "The failing line of the side in focus (tab moves between the sandbox and the replay)",
    ),
    (
        "f",
        "choose_workspace",
        "workspace",
        "Replay on a folder of yours",
        "A stand-in for /app when the trial did not capture it",
    ),
    ("s", "choose_case", "case", "Replay on a case", "One of the task's cases as the stand-in for /app"),
    ("c", "copy_command", "copy", "Copy the replay's command", "The shell command that runs this replay again"),
    (
        "o",
        "toggle_output",
        "stdout",
        "Toggle the replay's stdout / stderr",
        "The local side shows the replay's stderr or its stdout",
    ),
    ("l", "show_file('trial_log')", "trial.log", "Show trial.log", "Harbor's log of the trial, from its end"),
    (
        "x",
        "show_file('exception')",
        "exception",
        "Show exception.txt",
        "The traceback of the exception Harbor recorded for the trial",
    ),
    ("a", "show_file('agent')", "agent", "Show the agent's logs", "Every file the agent left in agent/"),
    (
        "j",
        "show_file('trajectory')",
        "trajectory",
        "Show the trajectory",
        "agent/trajectory.json (ATIF) as a conversation: steps, roles, tool calls, observations",
    ),
    (
        "i",
        "show_file('instruction')",
        "instruction",
        "Show the task's instruction",
        "instruction.md of the task the trial ran",
    ),
    (
        "m",
        "show_file('manifest')",
        "manifest",
        "Show the artifacts manifest",
        "artifacts/manifest.json: what Harbor collected from the sandbox, and where it is",
    ),
    ("question_mark", "help", "help", "Help: keys and marks", "Every key of this screen, and what the marks mean"),
    ("q", "app.quit", "quit", "Quit", "Quit verifier-tui"),
]

#: The six keys that show one of the trial's Harbor files share one footer entry ("l x a j i m files").
FILES = Binding.Group("files")


def trial_bindings() -> list[Binding]:
    return [
        Binding(key, action, word, group=FILES if action.startswith("show_file") else None)
        for key, action, word, _title, _help in TRIAL_KEYS
    ]


JOB_KEYS: list[tuple[str, str, str, str, str]] = [
    ("q", "app.quit", "quit", "Quit", "Quit verifier-tui"),
]

#: A job's overview (screens/job_overview.py).
OVERVIEW_KEYS: list[tuple[str, str, str, str, str]] = [
    (
        "enter",
        "open",
        "open",
        "Open the trial (or show the task's trials)",
        "On a trial: the sandbox beside a local replay; on a task: only its trials",
    ),
    ("f", "failures", "failures", "Failures only", "Show only the trials that did not pass (again: all)"),
    (
        "x",
        "next_exception",
        "exception",
        "Filter by exception type",
        "Each press shows the trials of the next exception type Harbor recorded, then all again",
    ),
    (
        "t",
        "task",
        "task",
        "Filter by task",
        "Only the trials of the task under the cursor in the tasks table (again: every task)",
    ),
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


def bindings(table: list[tuple[str, str, str, str, str]]) -> list[BindingType]:
    # enter belongs to the table in focus (DataTable selects on it): not bound twice.
    return [Binding(key, action, word) for key, action, word, _title, _help in table if key != "enter"]
