"""``--preload`` in the TUI: said in the header, and imported by the runs
started ahead (every run after the first), never by the first, which starts
cold. The real app and the real runner."""

from __future__ import annotations

from tests.helpers.tasks import interpreter_with_nemo_gym, make_task
from tests.tui.app_under_test import SIZE, make_app, widget_text

SEES_COLORSYS = """\
    import sys

    def verify(workspace):
        return 1.0 if "colorsys" in sys.modules else 0.0
"""


async def test_the_runs_started_ahead_import_the_modules_to_preload(tmp_path):
    app = make_app(make_task(tmp_path / "tasks" / "preloaded", SEES_COLORSYS), watch=False, preload=("colorsys",))
    async with app.run_test(size=SIZE) as pilot:
        first = await app.wait_for_runs(1)
        await pilot.pause()
        assert "preloads colorsys" in widget_text(app, "#header")
        await pilot.press("r")
        second = await app.wait_for_runs(2)
    assert first.verdict.rewards == {"reward": 0.0}  # started cold: nothing preloaded
    assert second.verdict.rewards == {"reward": 1.0}


async def test_the_resolution_panel_says_the_preload_imported_nemo_gym(tmp_path):
    """``--preload nemo_gym``: the panel said only that nemo_gym "was imported
    before the runner placed sys.path", what a .pth file or sitecustomize
    does; the runs started ahead imported it."""
    verifier = "from nemo_gym.verifiers import VENDORED\n\ndef verify(workspace):\n    return 1.0\n"
    vendored = {".ng/nemo_gym/__init__.py": "", ".ng/nemo_gym/verifiers/__init__.py": "VENDORED = True\n"}
    root = make_task(tmp_path / "tasks" / "vendors", verifier, files=vendored)
    python = str(interpreter_with_nemo_gym(tmp_path / "venv"))
    app = make_app(root, watch=False, preload=("nemo_gym",), python=python)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.pause()
        assert "imported before the runner placed sys.path" not in widget_text(app, "#resolution-body")
        await pilot.press("r")
        await app.wait_for_runs(2)
        await pilot.pause()
        text = " ".join(widget_text(app, "#resolution-body").split())
    assert "⚠ --preload imported nemo_gym before the runner placed sys.path" in text, text
    assert "as in Harbor, which preloads nothing" in text, text
