"""The engine: everything a run needs, with no Textual import.

discovery (find verifiers and cases), staging (the sandbox layout in scratch),
process (run the child, bounded output, process-group kill), verdict (Harbor's
rules), watch (file changes to re-runs), session (ties them together). The TUI
and the headless commands are views over :class:`verifier_tui.engine.session.Session`.
"""
