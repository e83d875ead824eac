"""The benchmark harness's own arithmetic: what the table says must follow
from the samples. (No timing here: the benchmarks are run by hand.)"""

from __future__ import annotations

import pytest

from benchmarks.harness import (
    README_BEGIN,
    README_END,
    BenchmarkError,
    Goal,
    Row,
    interleave,
    median,
    p90,
    replace_section,
    row_cells,
    skipped,
    table,
)


def test_median_and_nearest_rank_p90():
    assert median([3.0, 1.0, 2.0]) == 2.0
    assert median([4.0, 1.0, 3.0, 2.0]) == 2.5
    assert p90([float(x) for x in range(1, 11)]) == 9.0  # 9 of 10 samples are <= 9
    assert p90([float(x) for x in range(20, 0, -1)]) == 18.0
    assert p90([7.0]) == 7.0


def test_a_row_compares_medians_against_its_anchor():
    row = Row(
        "run",
        "7",
        "run --json",
        anchor="bare runner",
        values=[70.0, 72.0, 90.0],
        anchor_values=[40.0, 41.0, 39.0],
        goal=Goal.adds(40),
    )
    assert row.difference == pytest.approx(32.0)
    assert row.ratio == pytest.approx(1.8)
    assert row.holds is True
    assert row_cells(row) == [
        "7",
        "run --json",
        "72.0 ms (90.0 ms)",
        "bare runner",
        "40.0 ms (41.0 ms)",
        "+32.0 ms",
        "1.80x",
        "adds <= 40 ms",
        "yes",
    ]


def test_each_kind_of_goal_can_fail():
    slower = Row("w", "11", "watch", values=[66.0], anchor_values=[100.0], goal=Goal.ratio(0.65))
    assert slower.holds is False and row_cells(slower)[-1] == "NO"
    grows = Row("m", "11", "memory", unit="MB", values=[18.4], anchor_values=[0.1], goal=Goal.at_most(5, "MB"))
    assert grows.holds is False
    assert row_cells(grows)[2] == "18.4 MB" and row_cells(grows)[6] == "-"  # no ratio of two growths
    faster = Row("r", "7", "runner", values=[41.0], anchor_values=[35.5], goal=Goal.adds(6))
    assert faster.holds is True and row_cells(faster)[5] == "+5.5 ms"


def test_seconds_read_as_seconds_and_a_skipped_row_says_why():
    long = Row("s", "11", "staging", values=[1520.0, 1600.0], anchor_values=[820.0], goal=Goal.ratio(1.0))
    assert row_cells(long)[2:7] == ["1.56 s (1.60 s)", "-", "820.0 ms", "+740.0 ms", "1.90x"]
    row = skipped("watch-entr", "11", "save -> line", "entr not found", anchor="entr", goal=Goal.ratio(0.65))
    assert row.holds is None
    assert row_cells(row)[2] == "skipped" and row_cells(row)[-1] == "- (entr not found)"


def test_the_table_has_a_header_a_rule_and_one_line_per_row():
    rows = [Row("a", "7", "one | two", values=[1.0]), skipped("b", "11", "three", "no anchor")]
    lines = table(rows).splitlines()
    assert len(lines) == 4
    assert lines[0].startswith("| issue | what |") and lines[1].startswith("|---|")
    assert all(line.count("|") == lines[0].count("|") for line in lines)  # a "|" in a cell is escaped


def test_interleave_rotates_the_order_and_drops_the_warmup():
    calls: list[str] = []

    def action(name: str, value: float):
        def run() -> float:
            calls.append(name)
            return value + len(calls)

        return run

    samples = interleave({"a": action("a", 0.0), "b": action("b", 100.0)}, rounds=3, warmup=1)
    assert calls == ["a", "b", "b", "a", "a", "b", "b", "a"]
    assert samples == {"a": [4.0, 5.0, 8.0], "b": [103.0, 106.0, 107.0]}


def test_the_readme_section_is_replaced_between_its_markers_only():
    text = f"intro\n{README_BEGIN}\nold table\n{README_END}\nafter\n"
    assert replace_section(text, "new table\n") == f"intro\n{README_BEGIN}\nnew table\n{README_END}\nafter\n"
    with pytest.raises(BenchmarkError):
        replace_section("no markers here", "table")
