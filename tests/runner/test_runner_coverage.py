"""``--coverage-to FILE``: the lines of the tests folder's own .py files that
could run and those that ran, told by the interpreter that ran (sys.monitoring
on 3.12 and later, a trace function before); a run without it is the run of
before, which never loads the extras; with it, the run ends as it would have."""

import json
import os

import pytest

from tests.helpers.tasks import other_python
from tests.runner.conftest import EXTRAS_SOURCE, PYTHON38

VERIFIER = """\
import asyncio
import threading

from checks import Check, graded


async def count(n):
    total = 0
    for i in range(n):
        await asyncio.sleep(0)
        total += i
    return total


def in_thread(out):
    out.append(sum(i for i in range(3)))


def verify(workspace):
    out = []
    worker = threading.Thread(target=in_thread, args=(out,))
    worker.start()
    worker.join()
    try:
        if not (workspace / "answer.txt").exists():
            raise FileNotFoundError("answer.txt")
    except FileNotFoundError:
        pass
    finally:
        out.append(asyncio.run(count(2)))
    return graded(Check(out).passed())
"""
CHECKS = '''\
"""Checks the verifier uses."""


class Check:
    def __init__(self, values):
        self.values = values

    def passed(self):
        return [v for v in self.values if v] != []

    def never(self):
        return False


def _decorate(function):
    return function


@_decorate
def graded(ok):
    if ok:
        return 1.0
    return 0.0
'''
PYTHON312 = other_python("3.12") or other_python("3.13")
VERSIONS = [
    pytest.param(PYTHON38, id="py3.8-settrace", marks=pytest.mark.skipif(PYTHON38 is None, reason="no Python 3.8")),
    pytest.param(PYTHON312, id="py3.12+-monitoring", marks=pytest.mark.skipif(PYTHON312 is None, reason="no 3.12+")),
]


def _coverage(sandbox, path):
    data = json.loads(path.read_text(encoding="utf-8"))
    return {
        os.path.relpath(name, str(sandbox.tests)): (
            lines["executed"],
            sorted(set(lines["statements"]) - set(lines["executed"])),
        )
        for name, lines in data["files"].items()
    }


@pytest.mark.parametrize("python", VERSIONS)
def test_the_lines_that_ran_are_exact(sandbox, tmp_path, python):
    sandbox.verifier(VERIFIER)
    sandbox.write("tests/checks.py", CHECKS)
    sandbox.write("app/answer.txt", "42")
    sandbox.write("tests/.ng/vendored.py", "X = 1\n")  # the vendored folder is not the task's
    result = sandbox.run("--coverage-to", tmp_path / "coverage.json", python=python)
    assert result.returncode == 0, result.describe()
    assert result.reward_txt == "1.0"
    # Every line a thread, a generator, a coroutine and a finally ran; the
    # branch not taken (the raise and its handler) and the methods never called are missing.
    assert _coverage(sandbox, tmp_path / "coverage.json") == {
        "checks.py": ([1, 4, 5, 6, 8, 9, 11, 15, 16, 19, 20, 21, 22], [12, 23]),
        "verifier.py": (
            [1, 2, 4, 7, 8, 9, 10, 11, 12, 15, 16, 19, 20, 21, 22, 23, 24, 25, 30, 31],
            [26, 27, 28],
        ),
    }


@pytest.mark.parametrize(
    "body",
    ["    raise KeyError('k')", "    return 'no number'", "    print('out'); return {'reward': 0.5}"],
    ids=["raises", "contract-error", "rewards"],
)
def test_the_flag_never_changes_how_the_run_ends(sandbox, tmp_path, body):
    sandbox.verifier("import sys\n\ndef verify(workspace):\n    print('said', file=sys.stderr)\n" + body + "\n")
    plain = sandbox.run()
    traced = sandbox.run("--coverage-to", tmp_path / "coverage.json")
    assert (traced.returncode, traced.stdout, traced.stderr, traced.rewards) == (
        plain.returncode,
        plain.stdout,
        plain.stderr,
        plain.rewards,
    )
    # written even when verify raised or broke the contract: the lines up to there ran
    assert _coverage(sandbox, tmp_path / "coverage.json") == {"verifier.py": ([1, 3, 4, 5], [])}


def test_a_verifier_that_takes_coverage_pys_monitoring_id_runs_as_without_the_flag(sandbox, tmp_path):
    """On 3.12 and later the tracer is a sys.monitoring tool; it took
    COVERAGE_ID, so a verifier measuring the agent's code with coverage.py
    (that id) raised under --coverage and passed without it."""
    if PYTHON312 is None:
        pytest.skip("no Python 3.12 or later here")
    sandbox.verifier(
        "import sys\n\ndef verify(workspace):\n    mon = sys.monitoring\n"
        "    mon.use_tool_id(mon.COVERAGE_ID, 'agent-coverage')\n"
        "    mon.free_tool_id(mon.COVERAGE_ID)\n    return 1.0\n"
    )
    traced = sandbox.run("--coverage-to", tmp_path / "coverage.json", python=PYTHON312)
    assert (traced.returncode, traced.reward_txt) == (0, "1.0"), traced.describe()
    assert _coverage(sandbox, tmp_path / "coverage.json") == {"verifier.py": ([1, 3, 4, 5, 6, 7], [])}


def test_a_run_without_the_flag_never_loads_the_extras(sandbox, tmp_path):
    (sandbox.ng / EXTRAS_SOURCE.name).write_text("import sys\nsys.stderr.write('extras loaded\\n')\n")
    sandbox.verifier("def verify(workspace):\n    return 1.0\n")
    plain = sandbox.run()
    assert (plain.returncode, plain.stderr, plain.reward_txt) == (0, "", "1.0")
    asked = sandbox.run("--coverage-to", tmp_path / "coverage.json")
    assert asked.stderr.startswith("extras loaded\n")  # the stand-in is what the flag loads


def test_an_unwritable_coverage_file_changes_nothing(sandbox, tmp_path):
    sandbox.verifier("def verify(workspace):\n    return 1.0\n")
    result = sandbox.run("--coverage-to", tmp_path / "no-such-folder" / "coverage.json")
    assert (result.returncode, result.stdout, result.stderr, result.reward_txt) == (0, "", "", "1.0")


@pytest.mark.parametrize("python", VERSIONS)
def test_each_file_read_has_its_digest_and_one_imported_through_a_linked_folder_is_measured(sandbox, tmp_path, python):
    """The tool keeps a file's lines only when its bytes are those the runner
    compiled (a verifier can rewrite a file of /tests): each file read says
    its SHA-256, one that does not compile too. A module imported through a
    folder that is a link (``tests/lib -> pkg``) is not walked: it is measured
    by the name it ran under, which the tool follows to the user's file."""
    import hashlib

    sandbox.verifier("from lib import helper\n\ndef verify(workspace):\n    return helper.score()\n")
    sandbox.write("tests/pkg/__init__.py", "")
    sandbox.write("tests/pkg/helper.py", "def score():\n    return 1.0\n")
    sandbox.write("tests/broken.py", "def (:\n")
    os.symlink("pkg", str(sandbox.tests / "lib"))
    result = sandbox.run("--coverage-to", tmp_path / "coverage.json", python=python)
    assert (result.returncode, result.reward_txt) == (0, "1.0"), result.describe()
    assert _coverage(sandbox, tmp_path / "coverage.json") == {
        "lib/helper.py": ([1, 2], []),
        "lib/__init__.py": ([], []) if python == PYTHON312 else ([1], []),
        "pkg/__init__.py": ([], []) if python == PYTHON312 else ([], [1]),
        "pkg/helper.py": ([], [1, 2]),
        "verifier.py": ([1, 3, 4], []),
    }
    data = json.loads((tmp_path / "coverage.json").read_text(encoding="utf-8"))
    assert set(data["not_compiled"]) == {str(sandbox.tests / "broken.py")}
    read = ["broken.py", "lib/__init__.py", "lib/helper.py", "pkg/__init__.py", "pkg/helper.py", "verifier.py"]
    assert data["sha256"] == {
        str(sandbox.tests / name): hashlib.sha256((sandbox.tests / name).read_bytes()).hexdigest() for name in read
    }


@pytest.mark.parametrize("flags", [(), ("-I", "-S")], ids=["plain", "-I-S"])
def test_helpers_named_like_the_modules_coverage_needs_leave_it_measured(sandbox, tmp_path, flags):
    # statements() imported hashlib and types once the task's folders led
    # sys.path: a helper tests/hashlib.py (tests/types.py under -S) stood in,
    # and every file was reported as one that does not compile
    # ("module 'hashlib' has no attribute 'sha256"), so g showed no line as reached.
    for name in ("hashlib", "types", "dis"):
        sandbox.write("tests/%s.py" % name, "SHADOW = True\n")
    sandbox.verifier("import hashlib, types\n\ndef verify(workspace):\n    return 1.0\n")
    result = sandbox.run("--coverage-to", tmp_path / "coverage.json", flags=flags)
    assert result.returncode == 0, result.describe()
    data = json.loads((tmp_path / "coverage.json").read_text(encoding="utf-8"))
    assert data["not_compiled"] == {}, data
    assert _coverage(sandbox, tmp_path / "coverage.json")["verifier.py"] == ([1, 3, 4], [])
