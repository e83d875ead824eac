#!/usr/bin/env bash
# Reference solution. The answer is the agent's final message, so the oracle
# prints it; the workspace is left as it was. Count the level field (the
# second word), not every line that mentions ERROR: a WARN line does too.
set -eu
awk '$2 == "ERROR"' /app/data/server.log | wc -l | tr -d ' '
