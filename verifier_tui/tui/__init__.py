"""The Textual face of verifier-tui: a thin view over :mod:`verifier_tui.engine`.

Nothing here decides how a run is staged, executed or judged; it only chooses,
shows and re-runs. Importing this package imports Textual, so the command line
imports it only when the TUI is really started.
"""
