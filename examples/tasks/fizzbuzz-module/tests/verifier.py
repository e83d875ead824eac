"""Verifier for fizzbuzz-module: a dict reward (written to reward.json).

    {"reward": 0.75 * tests + 0.25 * style, "tests_passed": <count>, "style": <fraction>}

`reward` is what Harbor aggregates on; the other keys are metrics. The
weights and the number of checks are powers of two, so every score is a
float that JSON round-trips exactly.

Style is judged by reading the source (ast), never by running it. The tests
do run the agent's code, but in a child interpreter with a time limit: an
infinite loop in fizzbuzz() costs the tests, not the verifier's timeout.
"""

import ast
import json
import subprocess
import sys

# Inputs and the answers fizzbuzz() must give; 15 and 30 catch the classic bug
# of testing 3 before 15.
CASES = {1: "1", 2: "2", 3: "Fizz", 5: "Buzz", 6: "Fizz", 10: "Buzz", 15: "FizzBuzz", 30: "FizzBuzz"}
CHILD_TIMEOUT_SEC = 5

# Runs in the child: load the module by path (runpy writes no bytecode, and
# -B keeps it that way for anything it imports), call fizzbuzz on each input
# and print one JSON line. Anything the agent's code prints is swallowed so it
# cannot corrupt that line.
CHILD = r"""
import contextlib, io, json, runpy, sys
results = {}
with contextlib.redirect_stdout(io.StringIO()):
    try:
        namespace = runpy.run_path(sys.argv[1])
        func = namespace["fizzbuzz"]
    except BaseException as exc:
        func = None
    for n in json.loads(sys.argv[2]):
        try:
            results[str(n)] = func(n) if func else None
        except BaseException:
            results[str(n)] = None
print(json.dumps(results, default=repr))
"""


def _tests_passed(module_path):
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-B", "-c", CHILD, str(module_path), json.dumps(list(CASES))],
            capture_output=True,
            text=True,
            timeout=CHILD_TIMEOUT_SEC,
            cwd=str(module_path.parent),
        )
        results = json.loads(done.stdout.strip().splitlines()[-1])
    except (subprocess.TimeoutExpired, ValueError, IndexError):
        return 0  # hung, crashed or printed nothing usable: no test passed
    return sum(1 for n, want in CASES.items() if results.get(str(n)) == want)


def _style(source):
    """Fraction of four checks met: module docstring, function docstring,
    return annotation, no print() call."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return 0.0
    func = next((node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "fizzbuzz"), None)
    prints = any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"
        for node in ast.walk(tree)
    )
    checks = [
        ast.get_docstring(tree) is not None,
        func is not None and ast.get_docstring(func) is not None,
        func is not None and func.returns is not None,
        not prints,
    ]
    return sum(checks) / len(checks)


def verify(workspace):
    module_path = workspace / "fizzbuzz.py"
    if not module_path.is_file():
        # A missing module is a legitimate 0, not a verifier crash.
        return {"reward": 0.0, "tests_passed": 0, "style": 0.0}
    source = module_path.read_text(encoding="utf-8")
    passed = _tests_passed(module_path)
    style = _style(source)
    reward = 0.75 * passed / len(CASES) + 0.25 * style
    return {"reward": reward, "tests_passed": passed, "style": style}
