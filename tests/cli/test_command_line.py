"""The headless commands' common command lines are read without argparse (it
costs ~6% of `run --json`); argparse stays the authority. Both must agree on
every well-formed command line, and the fast reading must step aside for
anything else."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier_tui.arguments import build_parser
from verifier_tui.cli import read_simple_command_line

WELL_FORMED = [
    ["run", "tasks/foo"],
    ["run", "--json", "tasks/foo"],
    ["run", "tasks/foo", "--case", "good", "--json"],
    ["run", "tasks/foo", "--verifier", "tests/v.py", "--workspace", "ws", "--response", "r.json",
     "--task-data", "td.json", "--timeout", "2.5", "--python", "/usr/bin/python3", "--nemo-gym", "gym/verifiers"],
    ["run", "tasks/foo", "--no-response"],
    ["explain", "--json", "tasks/foo/tests/verifier.py", "--response", "r.txt"],
    ["test", "tasks/foo", "--json", "--junit", "out.xml", "--jobs", "3"],
    ["test", "tasks/foo", "-j", "1", "--no-response"],
    ["watch", "tasks/foo", "--poll", "--json", "--case", "good"],
]

LEFT_TO_ARGPARSE = [
    ["run"],  # no path
    ["run", "a", "b"],  # two paths
    ["run", "tasks/foo", "--json=yes"],
    ["run", "tasks/foo", "--work", "ws"],  # an abbreviation argparse accepts
    ["run", "tasks/foo", "--case=good"],
    ["run", "tasks/foo", "--timeout", "-1"],
    ["run", "tasks/foo", "--timeout", "0"],
    ["run", "tasks/foo", "--timeout", "soon"],
    ["run", "tasks/foo", "--response", "r.json", "--no-response"],
    ["run", "tasks/foo", "--case", "a", "--case", "b"],
    ["run", "tasks/foo", "--case"],
    ["run", "tasks/foo", "--help"],
    ["run", "tasks/foo", "--poll"],  # watch only
    ["test", "tasks/foo", "--case", "good"],  # test has no --case
    ["test", "tasks/foo", "--jobs", "many"],
    ["run", "--", "tasks/foo"],
]


@pytest.mark.parametrize("argv", WELL_FORMED, ids=" ".join)
def test_the_fast_reading_agrees_with_argparse(argv):
    fast = read_simple_command_line(argv)
    assert fast is not None
    assert vars(fast) == vars(build_parser(only=argv[0]).parse_args(argv))


@pytest.mark.parametrize("argv", LEFT_TO_ARGPARSE, ids=" ".join)
def test_anything_else_is_left_to_argparse(argv):
    assert read_simple_command_line(argv) is None


def test_values_have_argparse_types():
    args = read_simple_command_line(["run", "t", "--workspace", "ws", "--timeout", "3"])
    assert args.workspace == Path("ws") and args.timeout == 3.0 and args.python == "python3"
