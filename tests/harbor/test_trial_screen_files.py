"""A trial's screen in the real app (Textual's pilot): the root cause at the
top at any size, every Harbor file of the trial one key away (trial.log,
exception.txt, the agent's logs, the ATIF trajectory as a conversation, the
task's instruction, the artifacts manifest), ``?`` help, ``c`` and ``o``,
stale marks with live reload off, "stuck at" for a replay that timed out, and
output Harbor never downloaded said so."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.harbor.trial_app_under_test import SIZE, make_trial_app, text_of, until
from tests.helpers.harbor import (
    RUNNER,
    SEPARATE,
    captured_trial,
    harbor_exception,
    harbor_masked_failure_log,
    sandbox_trial,
    timed_out_trial,
    trial_with_job_env,
)
from tests.helpers.tasks import STUCK_IN_ONE_FILE, nested_folders
from tests.tui.app_under_test import screen_text
from verifier_tui.engine.changes import Change
from verifier_tui.tui.screens.command import CommandScreen
from verifier_tui.tui.screens.help import HelpScreen
from verifier_tui.tui.screens.trial import TrialScreen
from verifier_tui.tui.screens.trial_file import TrialFileScreen

READS_HELLO = (
    "def verify(workspace):\n    print('looking at', sorted(p.name for p in workspace.iterdir()))\n"
    "    return 1.0 if (workspace / 'hello.txt').read_text() == 'hi' else 0.0\n"
)
TRAJECTORY = {
    "schema_version": "ATIF-v1.6",
    "session_id": "s-1",
    "agent": {"name": "claude-code", "version": "2.0.1", "model_name": "claude-sonnet-4"},
    "steps": [
        {"step_id": 1, "source": "user", "message": "Create /app/hello.txt containing hi."},
        {
            "step_id": 2,
            "source": "agent",
            "message": "I will write the file.",
            "reasoning_content": "Simple.",
            "tool_calls": [
                {
                    "tool_call_id": "call_1",
                    "function_name": "bash",
                    "arguments": {"command": "printf hi > /app/hallo.txt"},
                }
            ],
            "observation": {"results": [{"source_call_id": "call_1", "content": "(no output)"}]},
            "metrics": {"prompt_tokens": 120, "completion_tokens": 30},
        },
        {"step_id": 3, "source": "agent", "message": [{"type": "text", "text": "Done: the file is written."}]},
    ],
    "final_metrics": {"total_prompt_tokens": 120, "total_completion_tokens": 30, "total_steps": 3},
}


def timed_out_agent(task, runs, tmp_path, **kwargs):
    """A claude-code trial whose agent timed out; the verifier then found no
    hello.txt (only in trial.log); agent/ holds its log and its trajectory."""
    demo = task(verifier=READS_HELLO, toml=SEPARATE)
    message = "No reward file found at jobs/j/demo__aaaaaaa/verifier/reward.txt or ..."
    trial = sandbox_trial(
        runs / "jobs" / "j",
        demo,
        tmp_path,
        workspace={"hallo.txt": "hi"},
        mode="separate",
        capture=True,
        trial_kwargs=dict(
            agent="claude-code",
            log=harbor_masked_failure_log("demo__aaaaaaa", "RewardFileNotFoundError", message),
            exception=harbor_exception("AgentTimeoutError", "Agent execution timed out after 120.0 seconds"),
        ),
        **kwargs,
    )
    (trial.path / "agent" / "claude-code.txt").write_text("starting claude\nwrote /app/hallo.txt\n")
    (trial.path / "agent" / "trajectory.json").write_text(json.dumps(TRAJECTORY))
    return demo, trial


def top_lines(app, count: int) -> str:
    return "\n".join(screen_text(app).splitlines()[:count])


async def test_the_root_cause_is_at_the_top_at_160x45_and_80x24(task, runs, tmp_path):
    _, trial = timed_out_agent(task, runs, tmp_path)
    for size in ((160, 45), (80, 24)):
        app = make_trial_app(trial.path)
        async with app.run_test(size=size) as pilot:
            await app.wait_for_replays(1)
            await pilot.pause()
            cause = text_of(app, "#root-cause")
            assert cause.startswith("✗ root cause  AgentTimeoutError (in the agent): Agent execution timed out")
            assert "then the verifier: RewardFileNotFoundError, recorded only in trial.log" in cause
            assert "try: the agent ran out of time" in cause
            # Seen without scrolling, right under the header (two lines at 160 columns, four at 80).
            top = " ".join(top_lines(app, 6).split())
            assert "✗ root cause AgentTimeoutError (in the agent)" in top, size


async def test_a_passing_genuine_trial_says_nothing_went_wrong(real):
    app = make_trial_app(real / "jobs" / "separate-mode", task=real / "tasks" / "separate-mode")
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        await pilot.pause()
        assert text_of(app, "#root-cause") == "✓ root cause  none: Harbor scored 1.0"


async def test_every_harbor_file_of_the_trial_is_one_key_away(task, runs, tmp_path):
    demo, trial = timed_out_agent(task, runs, tmp_path)
    (demo / "instruction.md").write_text("# Hello\n\nCreate /app/hello.txt containing `hi`.\n")
    expected = {
        "j": [
            "the trajectory",
            "ATIF-v1.6 · agent claude-code 2.0.1 · model claude-sonnet-4 · 3 steps",
            "#1 user",
            "Create /app/hello.txt containing hi.",
            "#2 agent",
            "(reasoning)",
            '→ bash({"command": "printf hi > /app/hallo.txt"})',
            "← call_1",
            "(no output)",
            "(prompt tokens 120, completion tokens 30)",
            "#3 agent",
            "Done: the file is written.",
            "final metrics",
        ],
        "l": ["trial.log", "Skipping exception record because trial already has exception_info"],
        "x": ["exception.txt", "harbor.trial.errors.AgentTimeoutError: Agent execution timed out after 120.0"],
        "a": [
            "the agent's logs",
            "2 files in agent/",
            "── claude-code.txt",
            "wrote /app/hallo.txt",
            "(j shows it as a conversation)",
        ],
        "i": ["the task's instruction", "Create /app/hello.txt containing `hi`."],
        "m": ["the artifacts manifest", "/app → artifacts/app  (directory, there)"],
    }
    app = make_trial_app(trial.path)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        await pilot.pause()
        for key, wanted in expected.items():
            await pilot.press(key)
            await pilot.pause()
            assert isinstance(app.screen, TrialFileScreen), key
            shown = screen_text(app) + text_of(app, "#file-text")
            for words in wanted:
                assert words in shown, (key, words)
            await pilot.press("escape")
            await pilot.pause()
            assert isinstance(app.screen, TrialScreen)


async def test_a_missing_file_says_so_and_a_big_log_is_read_from_its_end(real):
    trial = real / "jobs" / "nop-fail" / "hello-file__C4SunEc"
    with open(trial / "trial.log", "a") as log:
        for index in range(40_000):
            log.write(f"agent line {index}: {'x' * 20}\n")
        log.write("the last line of the log\n")
    app = make_trial_app(trial)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        for key, words in (
            ("j", "agent/trajectory.json is not there: only agents that record their run in ATIF"),
            ("a", "agent/ is not there: the agent wrote no logs (the nop agent writes nothing)"),
        ):
            await pilot.press(key)
            await pilot.pause()
            assert words in text_of(app, "#file-text")
            await pilot.press("escape")
            await pilot.pause()
        await pilot.press("l")
        await pilot.pause()
        text = text_of(app, "#file-text")
        assert text.startswith("(the last 256 KiB of ") and "agent line 0:" not in text
        await pilot.pause(0.2)
        assert "the last line of the log" in screen_text(app)  # opened at its end


async def test_a_trajectory_cut_short_or_not_atif_says_so(task, runs, tmp_path):
    _, trial = timed_out_agent(task, runs, tmp_path)
    trajectory = trial.path / "agent" / "trajectory.json"
    app = make_trial_app(trial.path)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        for content, words in (
            (json.dumps(TRAJECTORY)[:300], "trajectory.json is cut short"),
            ('{"steps": "none"}', "not an ATIF trajectory: no steps list"),
            # the agent's to write: calls (or results) that are no list are none, and the rest is shown
            (json.dumps({"steps": [{"tool_calls": 5, "observation": {"results": 7}}, {"message": "after"}]}), "after"),
            ("[" * 100_000, "trajectory.json"),
        ):
            trajectory.write_text(content)
            await pilot.press("j")
            await pilot.pause()
            assert words in text_of(app, "#file-text"), content[:20]
            await pilot.press("escape")
            await pilot.pause()
            assert isinstance(app.screen, TrialScreen)


async def test_question_mark_lists_the_keys_of_the_trial_screen(task, runs, tmp_path):
    _, trial = timed_out_agent(task, runs, tmp_path)
    app = make_trial_app(trial.path)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = text_of(app, "#help-text")
        for binding in TrialScreen.BINDINGS:
            title = binding.tooltip.split("\n")[0]
            if binding.action.startswith("back") or binding.action == "show_output('stderr')":
                # a trial opened on its own has no list to go back to; o names stdout while stderr is shown
                assert title not in text
            else:
                assert re.search(rf"^  {re.escape(app.get_key_display(binding))} +{re.escape(title)}: ", text, re.M)
        assert "Marks: root cause" in text and "◀▶" in text
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, TrialScreen)


async def test_o_shows_the_replays_stdout_and_c_its_command(task, runs, tmp_path):
    _, trial = timed_out_agent(task, runs, tmp_path)
    app = make_trial_app(trial.path)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        await pilot.pause()
        local = text_of(app, "#local-side .side-body")
        assert "stderr  (o shows stdout:" in local and "looking at" not in local
        for _ in range(100):  # the footer offers o once the replay is shown: on a busy machine, a few frames later
            if "o stdout" in screen_text(app).splitlines()[-1]:
                break
            await pilot.pause(0.05)
        assert "o stdout" in screen_text(app).splitlines()[-1]
        await pilot.press("o")
        for _ in range(100):  # the panel is drawn again after the key: on a busy machine, a few frames later
            await pilot.pause(0.05)
            local = text_of(app, "#local-side .side-body")
            if "stdout  (o shows stderr:" in local:
                break
        assert "stdout  (o shows stderr:" in local and "looking at ['hallo.txt']" in local
        assert "o stderr" in screen_text(app).splitlines()[-1]  # the footer names what o goes to
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, CommandScreen)
        assert any("verifier.py" in word for word in app.screen.words)


async def command_note(app, pilot):
    """The note under the command ``c`` shows (what it lacks of the replay), once its dialog is up."""
    await pilot.press("c")
    await until(pilot, lambda: isinstance(app.screen, CommandScreen), "the command dialog")
    return " ".join(text_of(app, ".dialog-hint").split())


#: The keys that need a replay (c, k, o): their titles in the palette and the help.
NEED_A_REPLAY = ("Copy the replay's command", "Keep the replay as a case", "Show the replay's stdout")


async def offered_keys(app, pilot) -> tuple[str, list[str], str]:
    """The footer, the palette's titles and the help's text, once the screen
    holds the first replay's outcome (what check_action reads)."""
    await until(pilot, lambda: isinstance(app.screen, TrialScreen) and app.screen.replayed is not None, "a replay")
    await pilot.pause()
    footer = screen_text(app).splitlines()[-1]
    titles = [c.title for c in app.get_system_commands(app.screen)]
    await pilot.press("question_mark")
    await until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
    return footer, titles, text_of(app, "#help-text")


async def test_a_key_not_offered_is_in_neither_the_footer_the_palette_nor_the_help(real, task, runs, tmp_path):
    """One list of keys feeds all three: c, k and o, which need a replay, are in
    none of them without one (a trial whose replay could not run), and in the
    palette and the help with one; r is in all three either way."""
    app = make_trial_app(real / "jobs" / "nop-fail")
    async with app.run_test(size=SIZE) as pilot:
        assert (await app.wait_for_replays(1)).local is None
        footer, titles, shown = await offered_keys(app, pilot)
    assert "r replay" in footer and "Replay now  (r)" in titles and "Replay now: " in shown
    assert "o stdout" not in footer, footer  # (c and k are never in the footer: it is full)
    for title in NEED_A_REPLAY:
        assert not any(t.startswith(title) for t in titles) and title not in shown, (title, titles, shown)
    _, trial = timed_out_agent(task, runs, tmp_path)
    app = make_trial_app(trial.path)
    async with app.run_test(size=SIZE) as pilot:
        assert (await app.wait_for_replays(1)).local is not None
        footer, titles, shown = await offered_keys(app, pilot)
    assert "r replay" in footer and "o stdout" in footer, footer
    for title in NEED_A_REPLAY:
        assert any(t.startswith(title) for t in titles) and title in shown, (title, titles, shown)


async def test_with_live_reload_off_a_save_marks_the_replay_stale_and_r_keeps_the_changed_task_note(
    task, runs, tmp_path
):
    demo, trial = timed_out_agent(task, runs, tmp_path)
    app = make_trial_app(trial.path)  # live reload off
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        await pilot.pause()
        verifier = demo / "tests" / "verifier.py"
        verifier.write_text("def verify(workspace):\n    return 0.5\n")
        app.screen.controller.on_change(Change(paths=frozenset([verifier])))  # as the watcher reports it
        await pilot.pause(0.3)
        assert len(app.replays) == 1  # nothing replayed
        assert "⚠ stale: verifier.py changed since this replay (r replays)" in text_of(app, "#trial-status")
        assert app.screen.query_one("#local-side").border_title.endswith("· stale")
        await pilot.press("r")
        replayed = await app.wait_for_replays(2)
        await pilot.pause()
        assert replayed.local.verdict.rewards == {"reward": 0.5}
        assert "changed since the run: tests/verifier.py" in text_of(app, "#trial-header")
        assert "stale" not in text_of(app, "#trial-status")
        await pilot.press("r")  # again: the note stays while the task differs from the run's
        await app.wait_for_replays(3)
        await pilot.pause()
        assert "changed since the run: tests/verifier.py" in text_of(app, "#trial-header")


async def test_a_timed_out_replay_says_where_it_was_stuck_and_output_never_downloaded(runs, tmp_path):
    trial = timed_out_trial(runs, tmp_path, STUCK_IN_ONE_FILE)
    app = make_trial_app(trial.path)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        await pilot.pause()
        local = text_of(app, "#local-side .side-body")
        assert "stuck at tasks/demo/tests/verifier.py:6 in wait (e opens it)" in local
        sandbox = text_of(app, "#sandbox-side .side-body")
        assert "(not downloaded: Harbor fetches /logs/verifier only once test.sh has ended" in sandbox
        assert "(empty" not in sandbox
        assert text_of(app, "#root-cause").startswith("✗ root cause  VerifierTimeoutError (in the verifier)")


async def test_a_task_instruction_that_links_out_of_the_task_is_not_shown(task, runs, tmp_path):
    """The task came with the job someone sent: ``i`` showed /etc/shadow
    through its instruction.md."""
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET-INSTRUCTION\n")
    demo, trial = timed_out_agent(task, runs, tmp_path)
    (demo / "instruction.md").unlink(missing_ok=True)
    (demo / "instruction.md").symlink_to(secret)
    app = make_trial_app(trial.path)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        await pilot.press("i")
        await pilot.pause()
        shown = screen_text(app) + text_of(app, "#file-text")
        assert "TOPSECRET" not in shown
        assert f"instruction.md is a link to {secret}" in shown, shown


async def file_view(path, key: str) -> str:
    """What the trial screen's view of a file shows after ``key``."""
    app = make_trial_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        await pilot.press(key)
        await pilot.pause()
        return text_of(app, "#file-text")


async def test_an_agent_file_name_shows_its_escapes(task, runs, tmp_path):
    demo, trial = timed_out_agent(task, runs, tmp_path)
    (trial.path / "agent" / "log\x1b[31m.txt").write_text("hello\n")
    shown = await file_view(trial.path, "a")
    assert "── log\\x1b[31m.txt" in shown and "── log.txt" not in shown, shown


async def test_a_log_whose_last_line_is_longer_than_its_tail_is_never_said_empty(real):
    """trial.log ending in one line of 300 KB (an agent's output dumped on
    one line): ``l`` said "(the last 256 KiB of 300,026 bytes)" and "(empty)",
    the partial first line of the tail dropped, and with it all there was."""
    trial = real / "jobs" / "nop-fail" / "hello-file__C4SunEc"
    (trial / "trial.log").write_text("first line\n" + "x" * 300_000 + " the end\n")
    shown = await file_view(trial, "l")
    assert "(empty)" not in shown and shown.startswith("(the last 256 KiB of "), shown[:300]
    assert "xxxxxxxx" in shown, shown[:300]


async def test_x_on_a_trial_whose_exception_txt_was_lost_says_result_json_records_one(task, runs, tmp_path):
    _demo, trial = timed_out_agent(task, runs, tmp_path)
    (trial.path / "exception.txt").unlink()  # a copy of the folder made without it
    shown = await file_view(trial.path, "x")
    assert "though result.json records an exception for the trial" in shown
    assert "it recorded none" not in shown


async def test_e_is_offered_for_the_failing_line_on_the_trial_screen_never_on_the_command_line(
    task, runs, tmp_path, env
):
    from tests.helpers.commands import run_tool

    demo = task(verifier="def verify(workspace):\n    raise ValueError('no')\n")
    trial = sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={"a.txt": "x"}, capture=True)
    app = make_trial_app(trial.path)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        await pilot.pause()
        assert "try: fix the error at tests/verifier.py:2 (e opens it), or catch it" in screen_text(app)
    done = run_tool(env, "run", trial.path, cwd=runs)
    assert "verifier.py:2, or catch it and return 0.0" in done.stdout, done.stdout
    assert "e opens it" not in done.stdout  # the command line has no e


async def test_at_100_columns_the_stale_mark_is_read_whole(task, runs, tmp_path):
    """With live reload off and a save since the replay, the status line under the root cause was one
    line of 100 columns: "⚠ stale: verifier.py changed since this replay (r replays)" was cut after
    "⚠ stale: verifier.py changed si", the key that replays with it."""
    demo, trial = timed_out_agent(task, runs, tmp_path)
    app = make_trial_app(trial.path)  # live reload off
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        verifier = demo / "tests" / "verifier.py"
        verifier.write_text("def verify(workspace):\n    return 0.5\n")
        app.screen.controller.on_change(Change(paths=frozenset([verifier])))
        await pilot.pause(0.3)
        shown = " ".join(line.strip() for line in screen_text(app).splitlines())
        assert "⚠ stale: verifier.py changed since this replay (r replays)" in shown
        assert app.screen.max_scroll_y == 0  # the panels below gave the line its room


async def test_a_trial_folder_moved_away_while_shown_is_said_gone_not_its_files_missing(task, runs, tmp_path):
    # The folder a user looks at is moved (or deleted) while the screen shows
    # it: "trial.log is not there: ... copied without it" and "artifacts/app
    # is not a folder of its own (a link, or no folder)" blamed the trial for it.
    _demo, trial = timed_out_agent(task, runs, tmp_path)
    app = make_trial_app(trial.path)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        trial.path.rename(tmp_path / "elsewhere")
        for key in ("l", "x", "a", "j", "m"):
            await pilot.press(key)
            await pilot.pause()
            shown = text_of(app, "#file-text")
            assert "the trial folder is no longer there" in shown, (key, shown)
            assert "is not there" not in shown and "copied" not in shown, (key, shown)
            await pilot.press("escape")
        await pilot.press("r")
        replayed = await app.wait_for_replays(2)
        assert replayed.skipped is not None and "the trial folder is no longer there" in replayed.skipped
        assert "a link, or no folder" not in text_of(app, "#agreement")


async def test_the_command_of_a_replay_on_an_empty_app_says_run_would_take_the_first_case(task, runs, tmp_path):
    # s, an empty /app, c: the command shown was `run TASK --verifier ... --no-response`, which runs the task's
    # first case (1.0 here) where the replay ran on an empty /app (RewardFileNotFoundError), and nothing said so.
    reads = "def verify(workspace):\n    return 1.0 if (workspace / 'hello.txt').read_text() == 'hi' else 0.0\n"
    demo = task(verifier=reads, toml=SEPARATE, cases={"correct": {"hello.txt": "hi"}})
    trial = sandbox_trial(
        runs / "jobs" / "j", demo, tmp_path, workspace={"hello.txt": "hi"}, mode="separate", capture=True
    )
    app = make_trial_app(trial.path)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        await pilot.press("s", "end", "enter")  # the last offer: an empty /app
        replayed = await app.wait_for_replays(2)
        assert app.screen.opened.empty_stand_in and replayed.local is not None and not replayed.local.verdict.ok
        said = await command_note(app, pilot)
        assert "without --workspace, run takes the task's first case, correct" in said, said


async def test_a_trial_folder_moved_away_keeps_its_sandbox_side_as_harbor_recorded_it(task, runs, tmp_path):
    # mv TRIAL while shown, then a replay (r, or a save with live reload): the sandbox side was read again from
    # the folder that was no longer there, and blamed the trial: every step "? unknown", "the trial has no
    # verifier/ folder", "test-stdout.txt is empty ... did not run to the end (killed, or test.sh never started it)".
    demo = task(verifier="def verify(workspace):\n    return 1.0\n", toml=SEPARATE)
    trial = sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={}, mode="separate", capture=True)
    app = make_trial_app(trial.path)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        await pilot.pause()
        before = text_of(app, "#phase-sandbox")
        trial.path.rename(tmp_path / "elsewhere")
        await pilot.press("r")
        replayed = await app.wait_for_replays(2)
        await pilot.pause()
        assert replayed.skipped is not None and "the trial folder is no longer there" in replayed.skipped
        assert text_of(app, "#phase-sandbox") == before
        sandbox = text_of(app, "#sandbox-side .side-body") + text_of(app, "#phase-words")
        assert "no verifier/ folder" not in sandbox and "did not run to the end" not in sandbox, sandbox
        assert "Harbor scored 1.0" in sandbox


async def test_the_command_of_a_replay_names_the_jobs_environment_it_does_not_carry(task, runs, tmp_path):
    # config.json's verifier.env (the job's MODE=strict): the replay scored 1.0 with it, the command c showed,
    # `run TASK ...`, reads only task.toml and scored 0.0, and nothing said the job's environment was left out.
    demo = task(
        verifier="import os\ndef verify(workspace):\n    return 1.0 if os.environ.get('MODE') == 'strict' else 0.0\n"
    )
    folder = trial_with_job_env(runs, demo, {"MODE": "strict"})
    app = make_trial_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        replayed = await app.wait_for_replays(1)
        assert replayed.local is not None and replayed.local.verdict.rewards == {"reward": 1.0}
        said = await command_note(app, pilot)
        assert "The job's environment from the trial's config.json is not in it (MODE): add --env NAME=VALUE" in said


async def test_the_command_of_a_replay_does_not_name_the_jobs_variables_its_env_carries(task, runs, tmp_path):
    # Started with --env MODE=strict, the command c shows ends in --env MODE=strict, yet its note listed MODE as
    # a variable of the job's it does not carry (and told to add it).
    demo = task(verifier="def verify(workspace):\n    return 1.0\n")
    folder = trial_with_job_env(runs, demo, {"MODE": "strict", "LEVEL": "2"})
    app = make_trial_app(folder, env=["MODE=strict"])
    async with app.run_test(size=SIZE) as pilot:
        replayed = await app.wait_for_replays(1)
        assert replayed.local is not None and replayed.local.command[-2:] == ["--env", "MODE=strict"]
        said = await command_note(app, pilot)
        assert "The job's environment from the trial's config.json is not in it (LEVEL): add --env" in said, said


@pytest.mark.parametrize("shell", ["of-the-shell", None])
async def test_the_command_of_a_replay_names_the_templates_your_shell_would_fill(task, runs, monkeypatch, shell):
    # The command c shows, `run TASK ...`, fills the task.toml's ${VAR} from the user's shell; the replay took a
    # template's default, or ran without it, and the note said nothing: the command was taken for the same run.
    # With no VTUI_NOPE in the shell, run TASK does what the replay did, and the note said it did not.
    toml = '[verifier]\nenv = { Z = "${VTUI_NOPE}", W = "${VTUI_NOPE:-d}" }\n'
    folder = trial_with_job_env(runs, task(verifier="def verify(workspace):\n    return 1.0\n", toml=toml), {})
    if shell is None:
        monkeypatch.delenv("VTUI_NOPE", raising=False)
    else:
        monkeypatch.setenv("VTUI_NOPE", shell)  # what run TASK would fill them with
    app = make_trial_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        said = await command_note(app, pilot)
        if shell is None:
            assert "templates" not in said and "not the same run" not in said, said
        else:
            assert "(W, Z)" in said and "from your environment" in said and shell not in said, said


async def test_the_command_of_a_replay_names_the_templates_its_env_filled(task, runs, tmp_path, monkeypatch):
    # Started with --env VTUI_SECRET=s3 to fill Z = "${VTUI_SECRET}": c showed run TASK ... --env VTUI_SECRET=s3,
    # which fills Z from --env too but passes VTUI_SECRET itself, and its note said nothing.
    toml = '[verifier]\nenv = { Z = "${VTUI_SECRET}" }\n'
    folder = trial_with_job_env(runs, task(verifier="def verify(workspace):\n    return 1.0\n", toml=toml), {})
    monkeypatch.delenv("VTUI_SECRET", raising=False)
    app = make_trial_app(folder, env=["VTUI_SECRET=s3"])
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        said = await command_note(app, pilot)
        # run TASK --env VTUI_SECRET fills Z from --env as the replay did: what differs is VTUI_SECRET itself
        # reaching the verifier (the note said the command filled Z "from your environment alone").
        assert "It passes VTUI_SECRET to the verifier as well, which the replay held back" in said, said
        assert "only filled Z from it" in said and "not the same run" in said, said
        assert "from your environment" not in said and "s3" not in said, said


async def test_the_command_of_a_replay_names_a_template_the_jobs_variable_would_fill(task, runs, monkeypatch):
    # config.json sets MODE=strict, task.toml W = "${MODE:-d}": the replay gave W its default (Harbor gives the job's
    # MODE to the verifier, not to the host the template is filled from). c said only "add --env NAME=VALUE" for
    # MODE, and run TASK --env MODE=strict fills W with strict: not the run the replay was. W is named with it.
    toml = '[verifier]\nenv = { W = "${MODE:-d}" }\n'
    folder = trial_with_job_env(
        runs, task(verifier="def verify(workspace):\n    return 1.0\n", toml=toml), {"MODE": "strict"}
    )
    monkeypatch.delenv("MODE", raising=False)
    app = make_trial_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        said = await command_note(app, pilot)
        assert "is not in it (MODE): add --env NAME=VALUE" in said, said
        assert "templates (W)" in said and "add --env NAME=VALUE for each as the replay had it" in said, said
        assert "strict" not in said, said


async def test_with_live_reload_off_a_trial_folder_moved_away_is_the_stale_marks_reason(task, runs, tmp_path):
    # mv TRIAL with live reload off: the status line said "⚠ stale: workspace deleted since this replay", as if
    # a workspace of the user's had been deleted, where the trial folder (holding the captured /app) went.
    demo = task(verifier="def verify(workspace):\n    return 1.0\n", toml=SEPARATE)
    trial = sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={}, mode="separate", capture=True)
    app = make_trial_app(trial.path)  # live reload off
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        await pilot.pause()
        captured = trial.path / "artifacts" / "app"
        assert app.screen.opened.session.workspace == captured
        trial.path.rename(tmp_path / "elsewhere")
        gone = frozenset([captured])
        app.screen.controller.on_change(Change(paths=gone, deleted=gone, names=((captured, "workspace"),)))
        await until(pilot, lambda: "stale" in text_of(app, "#trial-status"), "the stale mark")
        status = " ".join(text_of(app, "#trial-status").split())
        assert "⚠ stale: trial folder moved or gone since this replay (r replays)" in status, status


async def test_a_save_of_the_task_after_the_trial_folder_moved_is_said_as_that_save(task, runs, tmp_path):
    # Any change seen once the trial folder was gone was worded "trial folder moved or gone": on a workspace of
    # the user's, a save of tests/verifier.py, a file of the task, set off a replay said to be for the trial folder.
    demo = task(verifier="def verify(workspace):\n    return 1.0\n", toml=SEPARATE)
    trial = sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={}, mode="separate")
    mine = tmp_path / "mine"
    mine.mkdir()
    app = make_trial_app(trial.path, watch=True, workspace=str(mine))
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        trial.path.rename(tmp_path / "elsewhere")
        await pilot.pause(1)  # nothing of the trial folder is watched: the workspace is the user's
        (demo / "tests" / "verifier.py").write_text("def verify(workspace):\n    return 0.0\n")
        await app.wait_for_replays(len(app.replays) + 1)
        await pilot.pause()
        status = " ".join(text_of(app, "#trial-status").split())
        assert "after tests/verifier.py" in status and "trial folder moved or gone" not in status, status


@pytest.mark.parametrize(
    ("vendored", "runner"),
    [("differs", "ours"), ("differs", "task"), ("none", "ours")],
    ids=["own-runner-ours", "own-runner-task", "no-own-runner"],
)
async def test_c_copies_a_command_that_ends_as_the_replay_shown(task, runs, tmp_path, env, vendored, runner):
    """``c`` on a trial's screen, the command pasted into a shell: it runs
    the replay's runner (``--runner task`` where the screen ran the task's
    own) on the trial's /app and ends as the replay did, for a task that
    vendors a runner of its own (one writing 0.25 whatever verify returns)
    and one that vendors none. Where the screen's verdict was the task's
    test.sh's (0.25, its own runner) and verifier-tui's runner alone ended
    otherwise (1.0), the command, which is that runner's, gave 1.0 and its
    dialog said nothing: it now says so, and names ``run TRIAL``, which
    replays it as shown."""
    from tests.helpers.commands import run_in_shell_text

    demo, trial = captured_trial(task, runs, tmp_path)
    if vendored == "differs":
        own = demo / "tests" / ".ng" / "run_verifier.py"
        own.parent.mkdir()
        ours = RUNNER.read_text()
        own.write_text(
            ours.replace("    number = _number(result)\n", "    result = 0.25\n    number = _number(result)\n", 1)
        )
    app = make_trial_app(trial.path, runner=runner)
    async with app.run_test(size=SIZE) as pilot:
        shown = (await app.wait_for_replays(1)).local
        note = await command_note(app, pilot)  # as shown
        said, command = app.screen.note or "", app.clipboard
    assert shown is not None
    assert ("--runner task" in command) == (runner == "task"), command
    done = run_in_shell_text(command, env, Path.cwd())
    again = json.loads(done.stdout)
    if (vendored, runner) != ("differs", "ours"):
        assert again["rewards"] == shown.verdict.rewards == ({"reward": 0.25} if runner == "task" else {"reward": 1.0})
        assert "Not the same run" not in note, note
        return
    assert shown.verdict.rewards == {"reward": 0.25} and again["rewards"] == {"reward": 1.0}
    assert "verifier-tui's runner alone, which ended otherwise here: 1.0" in note, note
    assert "The verdict shown is the task's test.sh's" in note and "Not the same run" in note, note
    replay = said[said.index("Not the same run: ") + len("Not the same run: ") : said.index(" replays the trial")]
    done = run_in_shell_text(replay, env, Path.cwd())
    assert json.loads(done.stdout)["local"]["rewards"] == {"reward": 0.25}, done.stdout[-2000:]


async def test_the_agents_logs_show_beside_folders_nested_past_pythons_recursion_limit(task, runs, tmp_path):
    """An agent that left 1,100 folders one inside the other in agent/: `a` listed agent/ with os.walk,
    which recurses a folder at a time, and said only `cannot show it: RecursionError: maximum
    recursion depth exceeded`: none of the agent's logs could be read."""
    demo, trial = timed_out_agent(task, runs, tmp_path)
    with nested_folders(trial.path / "agent"):
        shown = await file_view(trial.path, "a")
    assert "── claude-code.txt" in shown and "wrote /app/hallo.txt" in shown, shown


async def test_the_agents_logs_named_before_a_big_folder_still_show(task, runs, tmp_path):
    """agent/command-0/stdout.txt beside a sessions/ of 5,000 files: the listing, walked with a stack
    of folders, took sessions/ (the last named) first, spent its 5,000 entries there and never showed
    the command's log, which os.walk's order had shown."""
    demo, trial = timed_out_agent(task, runs, tmp_path)
    (trial.path / "agent" / "command-0").mkdir()
    (trial.path / "agent" / "command-0" / "stdout.txt").write_text("the command's own output\n")
    sessions = trial.path / "agent" / "sessions"
    sessions.mkdir()
    for index in range(5000):
        (sessions / f"s{index:04}.jsonl").write_text("{}\n")
    shown = await file_view(trial.path, "a")
    assert "the command's own output" in shown, shown[:2000]
