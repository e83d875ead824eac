"""What a task is: found from a path, its kinds, task.toml, rows and cases."""
