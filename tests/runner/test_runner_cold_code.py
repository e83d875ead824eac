"""The runner keeps explain and error-report code as text compiled on demand
(a script gets no bytecode cache, and parsing is most of its own cost). These
tests pin the two promises that design makes."""

import ast
import re
import sys

from conftest import RUNNER_SOURCE


def test_a_passing_run_never_compiles_the_cold_code(sandbox):
    # The verifier looks at the running runner (the __main__ module) from inside verify.
    sandbox.verifier(
        "import sys\n"
        "def verify(workspace):\n"
        "    return 0.0 if sys.modules['__main__']._cold_loaded else 1.0\n"
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
        module._cold()
        lines = RUNNER_SOURCE.read_text(encoding="utf-8").splitlines()
        cold_text = module._COLD_SOURCE
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
    cold = next(
        node.value.value for node in module.body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "_COLD_SOURCE"
    )
    ast.parse(cold, feature_version=(3, 8))
    ast.parse(RUNNER_SOURCE.read_text(encoding="utf-8"), feature_version=(3, 8))
