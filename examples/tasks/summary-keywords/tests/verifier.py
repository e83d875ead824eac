"""Verifier for summary-keywords: parameters of every kind.

    def verify(workspace, /, task_data, *, threshold=0.5)

- `workspace` is positional-only: the runner passes it by position.
- `task_data` is an ordinary parameter: passed by name.
- `threshold` is keyword-only with a default. The runner knows only
  workspace, task_data, response and state, so it never passes `threshold`:
  the default is what counts. Tests and other callers can still pass it.

Returns the fraction of task_data's keywords that /app/summary.md mentions,
or 0.0 when that fraction is below the threshold (a summary missing most
points is not half-right, it is wrong).
"""

import re


def _mentions(text, keyword):
    # Case-insensitive, at the start of a word, so "Latency" and "retrying"
    # count but "precache" does not.
    return re.search(r"\b" + re.escape(keyword), text, re.IGNORECASE) is not None


def verify(workspace, /, task_data, *, threshold=0.5):
    keywords = task_data["keywords"]
    path = workspace / "summary.md"
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    score = sum(1 for keyword in keywords if _mentions(text, keyword)) / len(keywords)
    return score if score >= threshold else 0.0
