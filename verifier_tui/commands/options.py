"""Values the command line takes, checked as argparse types: the cli's and
the pytest plugin's options share them."""

from __future__ import annotations

import argparse
import math


def positive_seconds(text: str) -> float:
    """A number of seconds: finite and more than 0 (``nan``, ``inf``, ``0`` and
    ``-1`` are refused here, as task.toml's are in engine/task/config.py)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"{text!r}: give a finite number of seconds more than 0")
    return value
