"""verifier-tui: a terminal debugger for Python verifiers of Harbor tasks."""

__version__ = "0.1.0"
