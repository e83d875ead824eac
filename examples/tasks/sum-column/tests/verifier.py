"""Verifier for sum-column: a helper module and the task's own fields.

task_data names the column to sum and the tolerance, so one verifier serves
every variant of the task; the case `quantity-variant` overrides the task's
task_data.json with its own to play another variant.

Returns 1.0 when /app/total.txt holds the column's sum, else 0.0.
"""

from scoring import close_enough, column_sum, read_number


def verify(workspace, task_data):
    column = task_data["column"]
    tolerance = float(task_data.get("tolerance", 0.0))
    # Recomputed from the workspace's CSV rather than pinned, so a variant
    # needs no answer key; the instruction forbids editing the CSV.
    want = column_sum(workspace / "sales.csv", column)
    got = read_number(workspace / "total.txt")
    return 1.0 if close_enough(got, want, tolerance) else 0.0
