"""Helpers for plain-test-sh's checks.

This file defines a top-level verify(), so it looks like a Python verifier,
but the task's tests/test.sh is its own script and never runs one: here it is
a helper module that test_outputs.py imports. (verify() is kept so the task
can move to the verifier runner later by swapping test.sh for the shim.)
"""

import json


def expected_count(workspace):
    """Non-empty lines of items.txt: what report.json's count must be."""
    lines = (workspace / "items.txt").read_text(encoding="utf-8").splitlines()
    return sum(1 for line in lines if line.strip())


def load_report(workspace):
    """report.json as a dict; ValueError when it is not a JSON object."""
    report = json.loads((workspace / "report.json").read_text(encoding="utf-8"))
    if not isinstance(report, dict):
        raise ValueError("report.json is not a JSON object")
    return report


def verify(workspace):
    try:
        report = load_report(workspace)
    except (OSError, ValueError):
        return 0.0
    good = report.get("status") == "ok" and report.get("count") == expected_count(workspace)
    return 1.0 if good else 0.0
