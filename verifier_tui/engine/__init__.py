"""The engine: everything a run needs, with no Textual and no command line.

discovery and cases (find verifiers and cases), stage, mirror and interpreter
(the sandbox layout in scratch), invocation (the runner's command line),
results (what the run left, read back as a RunResult), process (run the child: bounded output, process-group
kill), verdict (Harbor's rules), watch (file changes to re-runs), cache (the
tool's own remembered answers), session (ties them together). The TUI and the
headless commands are faces over :class:`verifier_tui.engine.session.Session`;
the import-linter contracts in pyproject.toml keep it that way.
"""
