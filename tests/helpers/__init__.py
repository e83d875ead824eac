"""What test modules share (no test module imports another), by concern:
``tasks`` (tasks on disk, examples, interpreters, verifiers that get stuck),
``processes`` (processes seen to start and end, runs that meet),
``commands`` (the tool driven as a user drives it) and ``harbor`` (trial and
job folders). The fixtures that use them live in ``tests/conftest.py``."""
