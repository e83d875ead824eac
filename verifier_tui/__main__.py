"""The program's entry: the `verifier-tui` console script, and `python -m verifier_tui`, the same."""

import gc
import sys


def main() -> int:
    """:func:`verifier_tui.cli.main`, its modules loaded with Python's cyclic
    collector paused. Each class and function they make counts towards its
    next collection: about 30 went by while they loaded, 5 to 9 ms of every
    ``run --json``, and freed nothing (what a module makes lives as long as the
    program). Loaded, they are set aside from every later collection (which
    would only walk them again) and the collector is back on for the command."""
    gc.disable()
    try:
        from verifier_tui.cli import main as program
    finally:
        gc.freeze()
        gc.enable()
    return program()


if __name__ == "__main__":
    sys.exit(main())
