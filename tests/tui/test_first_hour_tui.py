"""What a new author meets in the first hour of writing a verifier, in the TUI:
a renamed verify, and two runs that failed for different reasons."""

from __future__ import annotations

from tests.helpers.tasks import make_task, write
from tests.tui.app_under_test import SIZE, make_app, screen_text, widget_text
from verifier_tui.engine.model import Outcome


async def test_a_renamed_verify_runs_and_shows_the_runners_contract_error(tmp_path):
    """The sandbox's runner still runs tests/verifier.py and exits 2: so does
    the TUI, and the case that passed is marked failed, not left at ✓."""
    root = make_task(
        tmp_path / "tasks" / "renamed", "def verify(workspace):\n    return 1.0\n", cases={"correct": {"a.txt": "a"}}
    )
    write(root / "cases" / "correct" / "expected.json", '{"rewards": {"reward": 1.0}}')
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        first = await app.wait_for_runs(1)
        assert first.expected_matched is True
        await app.controller.live.watch_ready.wait()
        write(root / "tests" / "verifier.py", "def verifyx(workspace):\n    return 1.0\n")
        result = await app.wait_for_runs(2)
        await pilot.pause()
        assert result is not None and result.outcome is Outcome.CONTRACT_ERROR and result.exit_code == 2
        assert result.expected_matched is False
        text = screen_text(app)
        assert "no verifier found" not in text
        assert "defines no verify" in widget_text(app, "#reward-body") + text
        assert "#2  ✗ correct" in text
        # The cases list marks the case failed; only the history's first run still says ✓.
        assert [line for line in text.splitlines() if "✓ correct" in line and "#1  ✓ correct" not in line] == []


async def test_the_history_tells_a_syntax_error_from_a_value_error(tmp_path):
    root = make_task(
        tmp_path / "tasks" / "raising", "def verify(workspace):\n    return (\n", cases={"only": {"a.txt": "a"}}
    )
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        write(root / "tests" / "verifier.py", "def verify(workspace):\n    raise ValueError('one')\n")
        await pilot.press("r")
        await app.wait_for_runs(2)
        write(root / "tests" / "verifier.py", "def verify(workspace):\n    raise ValueError('two')\n")
        await pilot.press("r")
        await app.wait_for_runs(3)
        await pilot.pause()
        text = screen_text(app)
        assert "#2  ! only ≠" in text  # SyntaxError, then ValueError: not the same ending
        assert "#3  ! only =" in text  # ValueError both times


def cases_shown(app) -> str:
    """The cases list as it reads, one case a line."""
    return "\n".join(option.prompt.plain for option in app.main.query_one("#cases").options)


async def test_the_other_cases_marks_say_they_are_out_of_date_after_the_verifier_changed(tmp_path):
    """Only the current case re-runs on a save: the others' ✓ came from the
    verifier before it, so they are marked out of date until they run again."""
    root = make_task(
        tmp_path / "tasks" / "two",
        "def verify(workspace):\n    return 1.0\n",
        cases={"first": {"a.txt": "a"}, "second": {"a.txt": "a"}},
    )
    for case in ("first", "second"):
        write(root / "cases" / case / "expected.json", '{"rewards": {"reward": 1.0}}')
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await app.controller.live.watch_ready.wait()
        await pilot.press("a")  # every case, so both marks are ✓
        await app.wait_for_runs(3)
        await pilot.pause()
        assert "✓ second" in cases_shown(app)
        write(root / "tests" / "verifier.py", "def verifyx(workspace):\n    return 1.0\n")
        await app.wait_for_runs(4)
        await pilot.pause()
        cases = cases_shown(app)
        assert "✓ second" not in cases and "? second" in cases and "was ✓" in cases
        await pilot.press("a")  # run again, both cases get their verdict of now
        await app.wait_for_runs(6)
        await pilot.pause()
        cases = cases_shown(app)
        assert "?" not in cases and "✗ first" in cases and "✗ second" in cases


async def test_the_history_marks_a_changed_reward_dict_without_reward_as_changed(tmp_path):
    """A verifier returning {"words": .., "caps": ..} (no "reward" key): Harbor
    aggregates on nothing, yet the file changed from run to run. The history
    must not mark it "=", the same reward, when a key moved; nor when only a
    key beside "reward" moved."""
    root = make_task(
        tmp_path / "tasks" / "keys", "def verify(workspace):\n    return {'words': 0.2}\n", cases={"only": {"a": "a"}}
    )
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        for number, body in (
            (2, "{'words': 1.0}"),  # a key without "reward" moved
            (3, "{'words': 1.0}"),  # nothing moved
            (4, "{'reward': 1.0, 'words': 0.5}"),
            (5, "{'reward': 1.0, 'words': 0.7}"),  # "reward" the same, a key beside it moved
        ):
            write(root / "tests" / "verifier.py", f"def verify(workspace):\n    return {body}\n")
            await pilot.press("r")
            await app.wait_for_runs(number)
        await pilot.pause()
        text = screen_text(app)
        assert "#2  • only ≠" in text
        assert "#3  • only =" in text
        assert "#5  • only 1 ≠" in text


async def test_the_other_cases_are_out_of_date_when_a_steps_folder_or_instruction_comes_or_goes(tmp_path):
    """A multi-step task, which Harbor refuses while a step has no steps/NAME/ or no instruction.md in
    it: the folder renamed to match task.toml's step, its instruction.md deleted, then written again,
    each ran the current case with the verdict of now, but the other cases' marks stayed as if current
    ("Harbor would refuse" where it loads the task now, ✓ where it refuses it)."""
    root = make_task(
        tmp_path / "tasks" / "two",
        "def verify(workspace):\n    return 1.0\n",
        toml='version = "1.0"\n\n[[steps]]\nname = "first"\n\n[[steps]]\nname = "2nd"\n',
        cases={"c1": {"a.txt": "a"}, "c2": {"a.txt": "a"}},
    )
    for case in ("c1", "c2"):
        write(root / "cases" / case / "expected.json", '{"rewards": {"reward": 1.0}}')
    step = root / "steps" / "2nd"
    step.rename(root / "steps" / "second")  # renamed in task.toml alone: Harbor refuses the task
    instruction = step / "instruction.md"
    changes = [lambda: (root / "steps" / "second").rename(step), instruction.unlink, instruction.touch]
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await app.controller.live.watch_ready.wait()
        runs = 1
        for change in changes:
            await pilot.press("a")  # every case, so both marks are of now
            runs += 2
            await app.wait_for_runs(runs)
            await pilot.pause()
            assert "?" not in cases_shown(app), cases_shown(app)
            change()
            runs += 1
            await app.wait_for_runs(runs)
            await pilot.pause()
            assert "? c2" in cases_shown(app), cases_shown(app)


async def test_the_history_marks_a_run_harbor_would_refuse_as_a_change_from_a_reward(tmp_path):
    """task.toml broken while the verifier still writes 1.0: the row hides the reward (Harbor would
    score none, as the verdict says), yet the history marked it `=`, the same rewards; and `=` again
    when task.toml was mended and 1 came back."""
    root = make_task(
        tmp_path / "tasks" / "toml", "def verify(workspace):\n    return 1.0\n", cases={"only": {"a": "a"}}
    )
    good = (root / "task.toml").read_text(encoding="utf-8")
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        for number, toml in ((2, good + "[verifier\n"), (3, good + "[verifier\n"), (4, good)):
            write(root / "task.toml", toml)
            await pilot.press("r")
            await app.wait_for_runs(number)
        await pilot.pause()
        text = screen_text(app)
        assert "#2  • only ≠" in text  # a reward, then none for Harbor
        assert "#3  • only =" in text  # refused both times, for the same reason
        assert "#4  • only 1 ≠" in text


async def test_the_history_compares_two_runs_harbor_would_refuse_by_the_refusal_alone(tmp_path):
    """task.toml broken, the verifier then edited to raise, then to return 0: Harbor refuses the task
    each time, the same refusal, whatever verify did, yet the history marked each `≠` against the run
    before (it compared how the runner's run ended: wrote 1.0, raised, wrote 0.0)."""
    root = make_task(
        tmp_path / "tasks" / "toml", "def verify(workspace):\n    return 1.0\n", cases={"only": {"a": "a"}}
    )
    write(root / "task.toml", (root / "task.toml").read_text(encoding="utf-8") + "[verifier\n")
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        for number, body in ((2, "raise ValueError('x')"), (3, "return 0.0")):
            write(root / "tests" / "verifier.py", f"def verify(workspace):\n    {body}\n")
            await pilot.press("r")
            await app.wait_for_runs(number)
        await pilot.pause()
        text = screen_text(app)
        assert "#2  ! only =" in text and "#3  • only =" in text, text
