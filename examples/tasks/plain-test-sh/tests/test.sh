#!/usr/bin/env bash
# This task's own test script, not NeMo Gym's verifier shim: Harbor runs it,
# it runs the checks in test_outputs.py and writes the reward itself. So this
# is a plain test.sh task, and tests/verifier.py beside it is only a helper
# module that test_outputs.py imports (its verify() is never called by a
# runner here).
set -u

mkdir -p /logs/verifier
# All checks pass: 1. Anything else, including a crash in the checks: 0.
if python3 /tests/test_outputs.py; then
    echo 1 > /logs/verifier/reward.txt
else
    echo 0 > /logs/verifier/reward.txt
fi
