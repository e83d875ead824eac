"""Verifier for greeting-rows, a parameterized task.

NeMo Gym renders one task per row of tasks.jsonl and gives each its row's
fields as task_data, so this one verifier serves every row. The line it
wants is built from task_data; without a row, task_data is {} and
task_data["name"] raises KeyError (verifier-tui says when a case names no row).

Returns 1.0 when /app/greeting.txt holds "<greeting>, <name>!", else 0.0.
"""


def verify(workspace, task_data):
    want = f"{task_data['greeting']}, {task_data['name']}!"
    path = workspace / "greeting.txt"
    got = path.read_text(encoding="utf-8").strip() if path.is_file() else ""
    return 1.0 if got == want else 0.0
