#!/usr/bin/env bash
# Reference solution, rendered per row like the instruction.
set -eu
echo "{{ task_data.greeting }}, {{ task_data.name }}!" > /app/greeting.txt
