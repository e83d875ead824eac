"""The TUI's case marks use expected.json's "tolerance", and the verdict names a near miss."""

from __future__ import annotations

from tests.helpers.tasks import make_task, write
from tests.tui.app_under_test import SIZE, make_app, screen_text, widget_text

ROUNDED = "def verify(workspace):\n    return 0.1 + 0.2\n"


def rounded_task(tmp_path):
    root = make_task(tmp_path / "tasks" / "sum", ROUNDED, cases={"exact": {}, "within": {}})
    write(root / "cases" / "exact" / "expected.json", '{"rewards": {"reward": 0.3}}')
    write(root / "cases" / "within" / "expected.json", '{"rewards": {"reward": 0.3}, "tolerance": 1e-9}')
    return root


async def test_case_marks_use_the_tolerance_and_a_near_miss_is_named(tmp_path):
    app = make_app(rounded_task(tmp_path), case="exact", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        first = await app.wait_for_runs(1)
        await pilot.pause()
        assert first.inputs.case == "exact" and first.expected_matched is False
        reward = widget_text(app, "#reward-body")
        assert "only float rounding: reward 0.30000000000000004 vs 0.3" in reward
        await pilot.press("a")
        await app.wait_for_runs(3)
        await pilot.pause()
        marks = {r.inputs.case: r.expected_matched for r in app.finished[1:]}
        assert marks == {"exact": False, "within": True}
        text = screen_text(app)
        assert "✗ exact" in text and "✓ within" in text


async def test_the_case_chooser_names_a_cases_tolerance(tmp_path):
    # The chooser said "expects rewards reward=0.3" of a case that accepts 0.1 + 0.2, as of one that
    # refuses it: its ✓ beside a reward of 0.30000000000000004 read as a wrong mark. `test` says "± 1e-09".
    # A tolerance of 1e-320 was said "± 9.99989e-321", six digits of the float it reads as: as written now.
    root = rounded_task(tmp_path)
    write(root / "cases" / "tiny" / "expected.json", '{"rewards": {"reward": 0.3}, "tolerance": 1e-320}')
    app = make_app(root, case="exact", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.press("s")
        await pilot.pause()
        lines = screen_text(app).splitlines()
        assert any("within  · expects rewards reward=0.3 ± 1e-09" in line for line in lines), lines
        assert any("tiny  · expects rewards reward=0.3 ± 1e-320" in line for line in lines), lines
        assert any("exact  · expects rewards reward=0.3 " in line + " " for line in lines), lines
