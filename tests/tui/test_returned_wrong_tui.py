"""The TUI's reward panel on a verify that returned what the contract refuses
(issue 43, item 8): what verify returned is said before what Harbor would
raise for the reward file it never got. The panel reads the engine's words
(the outcome and the verdict's message), which put the cause first."""

from __future__ import annotations

import pytest

from tests.helpers.tasks import RETURNED_WITH_A_SEMICOLON, RETURNS_A_MULTILINE_REPR, make_task
from tests.tui.app_under_test import SIZE, make_app, widget_text
from verifier_tui.engine.model import Outcome, RunResult


async def _reward_panel(root) -> tuple[RunResult, str]:
    """The first run of ``root``, a contract error, and its reward panel's words on one line."""
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        result = await app.wait_for_runs(1)
        await pilot.pause()
        assert result.outcome is Outcome.CONTRACT_ERROR
        return result, " ".join(widget_text(app, "#reward-body").split())


async def test_the_reward_panel_says_what_verify_returned_first(tmp_path):
    root = make_task(tmp_path / "tasks" / "returns", "def verify(workspace):\n    return 'pass'\n", cases={"only": {}})
    _, reward = await _reward_panel(root)
    assert "exit 2 · contract error: verify returned 'pass' (str)" in reward
    assert reward.index("verify returned 'pass' (str)") < reward.index("Harbor would raise RewardFileNotFoundError")


@pytest.mark.parametrize("mark", ["0;", "log: run_verifier: error: verify returned 0.5 (checked) -- "])
async def test_the_reward_panel_says_what_verify_returned_after_output_it_left_unfinished(tmp_path, mark):
    """verify wrote `0;` with no newline, then returned 'pass': the runner's line went on from it,
    `0;run_verifier: error: verify returned ...`, and the panel said `exit 2 · contract error` with no cause,
    then `why: 0;run_verifier: error: verify returned ...`, the runner's prefix and the verifier's mark in it.
    A mark that names the runner's prefix itself was taken for the start of the runner's line."""
    verifier = f"import sys\n\ndef verify(workspace):\n    sys.stderr.write({mark!r})\n    return 'pass'\n"
    root = make_task(tmp_path / "tasks" / "returns", verifier, cases={"only": {}})
    result, reward = await _reward_panel(root)
    assert f"{mark}run_verifier: error:" in result.stderr.text, result.stderr.text
    assert "exit 2 · contract error: verify returned 'pass' (str)" in reward, reward
    assert "why: it must return a finite number" in reward and "run_verifier" not in reward, reward


async def test_the_reward_panel_shows_readable_keys_as_written_and_invisible_ones_visibly(tmp_path):
    """verify returned ``{"reward": 1.0, "café": 1.0, "reward" + U+200B: 0}``: the panel's verdict
    showed ``caf\\u00e9`` and the reward.json it printed two keys that looked one (``reward``).
    Now café reads as written in both, and the zero-width space is named: ``\\u200b`` in the
    verdict's JSON, ``<U+200B>`` in the file's text, as a bidi control is there."""
    verifier = 'def verify(workspace):\n    return {"reward": 1.0, "caf\\u00e9": 1.0, "reward\\u200b": 0}\n'
    root = make_task(tmp_path / "tasks" / "keys", verifier, cases={"only": {}})
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.pause()
        reward = widget_text(app, "#reward-body")
    assert "\u200b" not in reward and "\\u00e9" not in reward, reward
    assert '{"reward": 1.0, "café": 1.0, "reward\\u200b": 0}' in reward, reward
    assert '"reward<U+200B>": 0' in reward.split("reward.json", 1)[-1], reward


async def test_what_verify_returned_is_said_once_above_harbors_verdict(tmp_path):
    """A dict whose "reward" is a string: the exit line said `contract error: verify returned a dict
    whose value for 'reward' is not a finite number: '1.0' (str)`, and the line under it `why:` the
    same sentence again, word for word."""
    verifier = "def verify(workspace):\n    return {'reward': '1.0'}\n"
    root = make_task(tmp_path / "tasks" / "returns", verifier, cases={"only": {}})
    _, reward = await _reward_panel(root)
    cause = "verify returned a dict whose value for 'reward' is not a finite number: '1.0' (str)"
    above_harbor = reward[: reward.index("Harbor's verdict")]
    assert above_harbor.count(cause) == 1, reward
    assert f"exit 2 · contract error: {cause}" in above_harbor, reward


@pytest.mark.parametrize(("returns", "cause", "rule"), RETURNED_WITH_A_SEMICOLON)
async def test_the_reward_panel_says_whole_what_verify_returned_when_it_holds_a_semicolon(
    tmp_path, returns, cause, rule
):
    """The panel cut the runner's message at its first "; ", inside the str verify returned or a key of
    its dict: `exit 2 · contract error: verify returned 'a · -- ms why: b' (str); it must return ...`,
    so no line above Harbor's verdict said the cause whole. The exit line says what was returned,
    why: the rule it broke where the runner names one."""
    root = make_task(
        tmp_path / "tasks" / "returns", f"def verify(workspace):\n    return {returns}\n", cases={"only": {}}
    )
    _, reward = await _reward_panel(root)
    above_harbor = reward[: reward.index("Harbor's verdict")]
    assert f"exit 2 · contract error: {cause} · " in above_harbor, reward
    assert (f"why: {rule}" in above_harbor) if rule else ("why:" not in above_harbor), reward


async def test_the_reward_panel_says_whole_what_verify_returned_when_its_repr_breaks_over_lines(tmp_path):
    """An object whose repr breaks over lines: the panel's exit line said `verify returned S(a` and no
    why: followed. It says what was returned whole, its line break as the screen shows one, and the rule."""
    verifier, cause = RETURNS_A_MULTILINE_REPR
    _, reward = await _reward_panel(make_task(tmp_path / "tasks" / "returns", verifier, cases={"only": {}}))
    above_harbor = reward[: reward.index("Harbor's verdict")]
    assert f"exit 2 · contract error: {cause} · " in above_harbor, reward
    assert "why: it must return a finite number (int or float, not bool) or a dict of them" in above_harbor, reward
