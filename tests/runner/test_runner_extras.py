"""The runner's extras beyond the contract: code compiled on demand (a script
gets no bytecode cache, and parsing is most of its own cost), and --pdb."""

import ast
import re
import sys

from conftest import RUNNER_SOURCE


def test_a_passing_run_never_compiles_the_cold_code(sandbox):
    """Without --explain-to, and when nothing fails, neither block is compiled."""
    # The verifier looks at the running runner (the __main__ module) from inside verify.
    sandbox.verifier(
        "import sys\n"
        "def verify(workspace):\n"
        "    return 0.0 if sys.modules['__main__']._loaded_blocks else 1.0\n"
    )
    result = sandbox.run()
    assert result.returncode == 0, result.describe()
    assert result.reward_txt == "1.0"


def test_cold_functions_report_their_real_line_numbers(tmp_path):
    """Tracebacks through cold code must point at the right line of the file."""
    sys.path.insert(0, str(RUNNER_SOURCE.parent))
    try:
        namespace = {"__name__": "runner_cold_probe", "__file__": str(RUNNER_SOURCE)}
        module = type(sys)("runner_cold_probe")
        module.__dict__.update(namespace)
        sys.modules["runner_cold_probe"] = module
        exec(compile(RUNNER_SOURCE.read_text(encoding="utf-8"), str(RUNNER_SOURCE), "exec"), module.__dict__)
        module._explain()
        module._errors()
        lines = RUNNER_SOURCE.read_text(encoding="utf-8").splitlines()
        cold_text = module._EXPLAIN_SOURCE + module._ERRORS_SOURCE
        names = re.findall(r"^def (\w+)\(", cold_text, re.M)
        assert len(names) > 5
        for name in names:
            code = getattr(module, name).__code__
            assert code.co_filename == str(RUNNER_SOURCE)
            assert lines[code.co_firstlineno - 1].startswith("def %s(" % name), name
    finally:
        sys.modules.pop("runner_cold_probe", None)
        sys.path.remove(str(RUNNER_SOURCE.parent))


def test_cold_code_is_valid_python_38(tmp_path):
    module = ast.parse(RUNNER_SOURCE.read_text(encoding="utf-8"))
    blocks = [
        node.value.value for node in module.body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "").endswith("_SOURCE")
    ]
    assert len(blocks) == 2
    for block in blocks:
        ast.parse(block, feature_version=(3, 8))
    ast.parse(RUNNER_SOURCE.read_text(encoding="utf-8"), feature_version=(3, 8))


def test_pdb_flag_opens_post_mortem_in_the_verifiers_frame(any_sandbox):
    any_sandbox.verifier(
        "import json\n"
        "def verify(workspace):\n"
        "    marker = 'inside-verify'\n"
        "    return json.loads('{not json')\n"
    )
    result = any_sandbox.run("--pdb", input=b"p marker\nq\n")
    assert result.returncode == 1
    assert "pdb post-mortem" in result.stderr
    assert "(Pdb)" in result.stdout
    # The first frame pdb shows is verify's own, not json's decoder.
    assert "'inside-verify'" in result.stdout
    assert not result.rewards


def test_pdb_flag_on_a_passing_or_contract_run_says_there_is_nothing_to_debug(sandbox):
    sandbox.verifier("def verify(workspace):\n    return 1.0\n")
    passing = sandbox.run("--pdb")
    assert passing.returncode == 0 and "nothing to debug" in passing.stderr
    sandbox.verifier("def verify(workspace):\n    return 'yes'\n")
    contract = sandbox.run("--pdb")
    assert contract.returncode == 2 and "contract problem" in contract.stderr
