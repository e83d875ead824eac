"""The counter a long ``test``, ``audit`` or ``test JOB`` keeps on stderr
while its runs go, on a terminal only, erased before the table it prints."""

from __future__ import annotations

import json

import pytest

from tests.helpers.commands import counters, run_in_terminal, run_tool
from tests.helpers.tasks import PY, copy_example

pytest.importorskip("pty")


def _one_failing(tmp_path):
    task = copy_example("hello-file", tmp_path / "hello-file")
    (task / "cases" / "wrong-text" / "expected.json").write_text(json.dumps({"rewards": {"reward": 1.0}}))
    return task


def test_test_counts_the_cases_as_they_end_and_erases_the_count_before_its_table(env, tmp_path):
    task = _one_failing(tmp_path)
    seen, status = run_in_terminal(env, ["test", str(task), "--python", PY, "-j", "1"], until=b"passed", keys=b"")
    assert status == 1
    counts = counters(seen)
    assert [(done, total, noun) for done, total, noun, _bad in counts] == [(n, 4, "cases") for n in range(1, 5)]
    assert counts[-1][3] == 1  # the failing case is counted by the time the last one ends
    erased = seen.rindex(b"\r\x1b[K")  # the count, gone: the line is the table's again
    assert erased > seen.rindex(b"4/4 cases")
    assert b"task " in seen[erased:] and b"3 passed, 1 failed" in seen[erased:]


def test_audit_counts_its_probes(env, tmp_path):
    task = copy_example("hello-file", tmp_path / "hello-file")
    seen, status = run_in_terminal(env, ["audit", str(task), "--python", PY], until=b"probes score", keys=b"")
    assert status == 0
    counts = counters(seen)
    assert counts and {noun for _d, _t, noun, _b in counts} == {"probes"}
    total = counts[0][1]
    assert [done for done, *_ in counts] == list(range(1, total + 1))
    assert f"0 of {total} probes score".encode() in seen


def test_without_a_terminal_nothing_but_the_table_is_written(env, tmp_path):
    task = _one_failing(tmp_path)
    done = run_tool(env, "test", task, "--python", PY)
    assert done.returncode == 1 and "3 passed, 1 failed" in done.stdout
    assert done.stderr == ""  # a CI log gets no counter
