"""The runner stays what the shim can copy alone into any sandbox: Python 3.8
syntax, and a plain run imports only what it uses (it runs on every save)."""

import ast


def test_the_runner_is_python_38_syntax(runner_source):
    ast.parse(runner_source.read_text(encoding="utf-8"), feature_version=(3, 8))


def test_a_plain_run_imports_no_json(any_sandbox):
    any_sandbox.verifier("""
        import sys

        def verify(workspace):
            return 0.0 if "json" in sys.modules else 1.0
    """)
    for flags in ([], ["--stack-signal", "USR1"]):
        result = any_sandbox.run(*flags)
        assert result.returncode == 0, result.describe()
        assert result.reward_txt == "1.0", flags
