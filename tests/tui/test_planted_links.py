"""A verifier that leaves a link to the user's own file in its reward folder:
the reward panel says the link, and never shows what it points to."""

from __future__ import annotations

import json

import pytest

from tests.helpers.tasks import LINK_PLANTER, PY, make_task
from tests.tui.app_under_test import SIZE, make_app, screen_text, widget_text

SECRET = "sekrit-123"


@pytest.mark.usefixtures("sandbox")
async def test_the_reward_panel_says_a_planted_link_and_never_reads_it(tmp_path):
    private = tmp_path / "private.txt"
    private.write_text(f"{SECRET}\n")
    plant = json.dumps([["--reward-dir:reward.txt", str(private)]])
    make_task(tmp_path / "tasks" / "t", LINK_PLANTER, cases={"a": {"plant.json": plant}})
    app = make_app("t", watch=False, python=PY)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.pause()
        panel = widget_text(app, "#reward-body")
        assert f"reward.txt  a link to {private}, not read here" in panel, panel
        assert "Harbor's verdict cannot be known here" in panel
        assert SECRET not in panel + screen_text(app)


@pytest.mark.usefixtures("sandbox")
async def test_a_planted_reward_link_is_the_one_reason_given_for_an_unknown_verdict(tmp_path):
    # reward.txt -> /etc/passwd, then os._exit(0): the panel said "Harbor would score no reward" (the note of
    # an os._exit with nothing written) beside "Harbor's verdict cannot be known here", two verdicts for one run.
    plant = json.dumps([["--reward-dir:reward.txt", "/etc/passwd"]])
    make_task(tmp_path / "tasks" / "t", LINK_PLANTER, cases={"a": {"plant.json": plant}})
    app = make_app("t", watch=False, python=PY)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.pause()
        panel = " ".join(line.strip() for line in widget_text(app, "#reward-body").splitlines())
        assert "Harbor would score no reward" not in panel and "os._exit" not in panel, panel
        assert "Harbor's verdict cannot be known here reward.txt is a link to /etc/passwd" in panel, panel
