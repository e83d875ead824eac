"""The runner stays what the shim can copy alone into any sandbox: Python 3.8
syntax, a plain run imports only what it uses (it runs on every save), and
what only verifier-tui asks for is in run_verifier_extras.py beside it, which
a plain run never needs."""

import ast

import pytest

from tests.runner.conftest import EXTRAS_SOURCE


@pytest.mark.parametrize("which", ["runner", "extras"])
def test_the_runner_is_python_38_syntax(runner_source, which):
    source = runner_source if which == "runner" else EXTRAS_SOURCE
    ast.parse(source.read_text(encoding="utf-8"), feature_version=(3, 8))


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


def test_the_contract_needs_nothing_beside_the_runner(any_sandbox):
    """A task's tests/.ng holds the runner alone: every run the shim starts works."""
    (any_sandbox.ng / EXTRAS_SOURCE.name).unlink()
    any_sandbox.verifier("""
        def verify(workspace, task_data):
            return {"reward": 1.0, "keys": len(task_data)}
    """)
    result = any_sandbox.run("--task-data", any_sandbox.write("task_data.json", '{"a": 1}'))
    assert result.returncode == 0, result.describe()
    assert result.reward_json == {"reward": 1.0, "keys": 1}
    assert any_sandbox.run("--help").stdout.startswith("usage: run_verifier.py")
    any_sandbox.verifier("def verify(workspace):\n    return 'no number'\n")
    any_sandbox.run().assert_contract_error("verify returned 'no number' (str)")
    any_sandbox.verifier("def verify(workspace):\n    raise KeyError('k')\n")
    any_sandbox.run().assert_verifier_raised(any_sandbox.verifier_path, "KeyError")


@pytest.mark.parametrize("flags", [["--explain-to", "explain.json"], ["--phases-to", "p.jsonl"], ["--pdb"]])
def test_an_extra_without_the_extras_beside_the_runner_is_a_usage_error(sandbox, flags):
    (sandbox.ng / EXTRAS_SOURCE.name).unlink()
    (sandbox.reward_dir / "reward.txt").write_text("planted", encoding="utf-8")
    result = sandbox.run(*flags)
    result.assert_contract_error(flags[0], "needs the runner's extras: there is no", EXTRAS_SOURCE.name)


def test_explain_without_the_extras_leaves_the_reward_folder_alone(sandbox):
    (sandbox.ng / EXTRAS_SOURCE.name).unlink()
    (sandbox.reward_dir / "reward.txt").write_text("planted", encoding="utf-8")
    result = sandbox.run("--explain")
    assert result.returncode == 2 and EXTRAS_SOURCE.name in result.stderr, result.describe()
    assert result.rewards == {"reward.txt": "planted"}


def test_the_extras_leave_nothing_the_verifier_can_see(sandbox):
    """Loaded for the tool's own flags, they add no module of the runner's the
    verifier could import (or that would rename it): the run is the sandbox's."""
    sandbox.verifier("""
        import sys

        def verify(workspace):
            return 0.0 if {"run_verifier", "run_verifier_extras"} & set(sys.modules) else 1.0
    """)
    flags = ["--explain-to", sandbox.root / "e.json", "--phases-to", sandbox.root / "p.jsonl", "--stack-signal", "USR1"]
    for extra in ([], flags):
        result = sandbox.run(*extra)
        assert result.returncode == 0, result.describe()
        assert result.reward_txt == "1.0", extra
