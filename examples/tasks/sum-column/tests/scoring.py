"""Helpers for sum-column's verifier, kept apart so a family of CSV tasks
can share them.

The runner puts the verifier's own folder on sys.path, so verifier.py
imports this as a plain `from scoring import ...`.
"""

import csv


def column_sum(csv_path, column):
    """Sum of `column` over every data row of the CSV at `csv_path`.

    KeyError when the header has no such column: that is a broken task,
    not a wrong answer, so it should crash loudly rather than score 0."""
    with open(csv_path, newline="", encoding="utf-8") as handle:
        return sum(float(row[column]) for row in csv.DictReader(handle))


def read_number(path):
    """The single number in the text file at `path`, or None when the file
    is missing or holds anything else (both are the agent's mistakes)."""
    try:
        text = path.read_text(encoding="utf-8").strip()
        return float(text)
    except (OSError, ValueError):
        return None


def close_enough(got, want, tolerance):
    # Sums of decimal prices are not exact in binary floating point.
    return got is not None and abs(got - want) <= tolerance
