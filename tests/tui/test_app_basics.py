"""Opening tasks, the first run, what the panels say."""

from __future__ import annotations

import asyncio
import tempfile

import pytest
from textual.widgets import Log

from tests.helpers.tasks import LONG_PATH_NOTE, big_task_at_a_long_path, copy_example, make_task
from tests.tui.app_under_test import SIZE, make_app, recorded, screen_text, widget_text
from verifier_tui.engine.model import Outcome
from verifier_tui.tui.messages import ExplainReady, RunFinished, RunStarted


async def test_first_run_shows_verdict_resolution_and_history(example):
    messages = []
    app = make_app(example("hello-file"))
    async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
        result = await app.wait_for_runs(1)
        await pilot.pause()
        assert result.outcome is Outcome.REWARD_WRITTEN
        assert result.verdict.rewards == {"reward": 1.0}
        reward = widget_text(app, "#reward-body")
        assert "✓ passed" in reward
        assert '{"reward": 1.0}  from reward.txt' in reward
        assert "exit 0 · reward written · -- ms" in reward
        resolution = widget_text(app, "#resolution-body")
        assert "verify(workspace)" in resolution
        assert "vendored helpers" in resolution and "hello-file/tests" in resolution
        assert "bound to workspace" in resolution
        header = widget_text(app, "#header")
        assert "hello-file" in header and "case correct" in header and "Harbor mode m" in header
        assert "#1  ✓ correct 1" in screen_text(app)
    assert len(recorded(messages, RunStarted)) == 1
    assert recorded(messages, RunFinished)[0].result is result


async def test_resolution_is_shown_while_verify_still_runs(tmp_path, monkeypatch):
    # verify waits for a "go" file in its reward folder (the one folder of the tool's that a run
    # sees in both sandboxes), written once the screen was read.
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    root = make_task(
        tmp_path / "tasks" / "slow",
        """
        import os, sys, time
        def verify(workspace, task_data=None):
            go = os.path.join(sys.argv[sys.argv.index("--reward-dir") + 1], "go")
            deadline = time.monotonic() + 60
            while not os.path.exists(go) and time.monotonic() < deadline:
                time.sleep(0.02)
            return 1.0
    """,
    )
    messages = []
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
        for _ in range(100):
            if recorded(messages, ExplainReady):
                break
            await asyncio.sleep(0.05)
        await pilot.pause()
        assert not app.finished  # verify is still sleeping
        resolution = widget_text(app, "#resolution-body")
        assert "verify(workspace, task_data=None)" in resolution
        assert "running" in widget_text(app, "#status")
        folders = list(scratch.glob("verifier-tui-*/stage-*/logs/verifier"))
        assert len(folders) == 1, folders
        (folders[0] / "go").touch()
        await app.wait_for_runs(1)


async def test_dict_reward_is_pretty_printed(example):
    app = make_app(example("fizzbuzz-module"), case="partial")
    async with app.run_test(size=SIZE) as pilot:
        result = await app.wait_for_runs(1)
        await pilot.pause()
        assert result.reward_files[0].name == "reward.json"
        reward = widget_text(app, "#reward-body")
        assert "reward.json" in reward
        assert '{\n  "reward":' in reward  # pretty-printed, one key a line


async def test_verify_raised_shows_traceback_and_failing_line(example):
    app = make_app(example("hello-file"), case="missing-file")
    async with app.run_test(size=SIZE) as pilot:
        result = await app.wait_for_runs(1)
        await pilot.pause()
        assert result.outcome is Outcome.VERIFIER_RAISED
        reward = widget_text(app, "#reward-body")
        assert "raised FileNotFoundError at hello-file/tests/verifier.py:28" in reward
        assert "RewardFileNotFoundError" in reward
        stderr = app.main.query_one("#output").text("stderr")
        assert "Traceback" in stderr and "FileNotFoundError" in stderr
        # Paths are the user's own, shown relative to the task's parent.
        assert 'File "hello-file/tests/verifier.py", line 28' in stderr


async def test_contract_error_in_harbor_mode_is_explained(example):
    app = make_app(example("count-errors"), case="harbor-mode")
    async with app.run_test(size=SIZE) as pilot:
        result = await app.wait_for_runs(1)
        await pilot.pause()
        assert result.outcome is Outcome.CONTRACT_ERROR
        resolution = widget_text(app, "#resolution-body")
        assert "✗ contract problem" in resolution
        assert "MISSING: required" in resolution
        assert "Harbor never passes a response" in resolution
        assert "async" in resolution
        assert "contract error" in widget_text(app, "#reward-body")


async def test_task_without_verifier_opens_with_a_clear_message(tmp_path):
    root = make_task(tmp_path / "tasks" / "empty-task", None, cases={"only": {}})
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        assert await app.wait_for_runs(1) is None
        await pilot.pause()
        text = screen_text(app)
        assert "no verifier found for empty-task" in text
        assert "Nothing to run yet" in text
        assert "verifier none found" in widget_text(app, "#header")
        # Writing one makes it run (live reload picks it up).
        await app.controller.live.watch_ready.wait()
        (root / "tests" / "verifier.py").write_text("def verify(workspace):\n    return 0.5\n")
        result = await app.wait_for_runs(2)
        assert result is not None and result.verdict.rewards == {"reward": 0.5}


async def test_task_without_verifier_and_live_reload_off_says_r_runs_one_written(tmp_path):
    """Started with --no-watch (or w pressed) on a task with no verifier, the resolution panel
    said "live reload picks it up and runs it": written, nothing ran. It says what will."""
    root = make_task(tmp_path / "tasks" / "empty-task", None, cases={"only": {}})
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        assert await app.wait_for_runs(1) is None
        await pilot.pause()
        said = " ".join(widget_text(app, "#resolution-body").split())
        assert "live reload picks it up" not in said, said
        assert "then r runs it (live reload is off: w turns it on)" in said, said
        await pilot.press("w")
        await pilot.pause()
        said = " ".join(widget_text(app, "#resolution-body").split())
        assert "live reload picks it up and runs it" in said, said


async def test_plain_test_sh_notice_is_shown(example):
    app = make_app(example("plain-test-sh"))
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.pause()
        assert "the sandbox would not run tests/verifier.py" in widget_text(app, "#resolution-body")


async def test_sum_column_helper_import_and_task_data(example):
    app = make_app(example("sum-column"))
    async with app.run_test(size=SIZE) as pilot:
        result = await app.wait_for_runs(1)
        await pilot.pause()
        assert result.outcome is Outcome.REWARD_WRITTEN, result.stderr.text
        assert "task data sum-column/task_data.json" in widget_text(app, "#choices")
        assert "task_data" in widget_text(app, "#resolution-body")


async def test_markup_like_output_is_shown_verbatim(tmp_path):
    root = make_task(
        tmp_path / "tasks" / "markup",
        """
        import sys
        def verify(workspace):
            print("[bold]x[/] [link=http://e]y[/link] [red]")
            sys.stderr.write("[bold]x[/] \\x1b[31mred\\x1b[0m [/nonsense]\\n")
            raise ValueError("[bold]boom[/]")
    """,
    )
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        result = await app.wait_for_runs(1)
        await pilot.pause()
        assert result.outcome is Outcome.VERIFIER_RAISED
        stderr = app.main.query_one("#output").text("stderr")
        assert "[bold]x[/] red [/nonsense]" in stderr  # escapes stripped, brackets kept
        assert "ValueError: [bold]boom[/]" in stderr
        await pilot.press("o")
        stdout = app.main.query_one("#output").text("stdout")
        assert "[bold]x[/] [link=http://e]y[/link] [red]" in stdout
        assert "[bold]x[/]" in screen_text(app)


async def test_fifty_thousand_lines_do_not_freeze(tmp_path):
    root = make_task(
        tmp_path / "tasks" / "flood",
        """
        import sys
        def verify(workspace):
            for i in range(50000):
                print(f"line {i} [bold]not markup[/]")
            sys.stdout.flush()
            return 1.0
    """,
    )
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        # How long the loop may stall is a speed figure, measured by
        # benchmarks/tui_latency.py --flood; here: the run ends, every batch
        # lands, and the app still answers keys.
        result = await app.wait_for_runs(1, timeout=60)
        await pilot.pause()
        assert result.verdict.rewards == {"reward": 1.0}
        await pilot.press("o")
        await pilot.pause()
        log = app.main.query_one("#stdout", Log)
        assert 0 < log.line_count <= 5001
        assert "line 49999 [bold]not markup[/]" in log.lines[-1]
        # Still responsive: a key works at once.
        await pilot.press("o")
        assert app.main.query_one("#output").showing == "stderr"


async def test_the_header_names_the_sandbox_in_force(example, sandbox):
    app = make_app(example("hello-file"))
    async with app.run_test(size=SIZE) as pilot:
        result = await app.wait_for_runs(1)
        await pilot.pause()
        assert result.sandbox == sandbox
        header = app.screen.query_one("#header")
        # last, after the choices or on a line of its own when they fill the width, with the task's limits;
        # a copy says it is unsafe, and a view without slirp4netns that it has no network
        from verifier_tui.engine.sandbox.network import helper

        kind = "namespace" if sandbox == "namespace" else "copy (unsafe)"
        ending = f"sandbox: {kind} · 1024 MB · 1 CPU"
        if sandbox == "namespace" and helper() is None:
            ending += " · no network (network public: slirp4netns is not installed)"
        assert widget_text(app, "#header").rstrip().endswith((f"· {ending}", f"\n{ending}"))
        tooltip = str(header.tooltip)
        assert tooltip.startswith(f"sandbox: {sandbox} (")  # the headless lines, on hover
        from verifier_tui.engine.sandbox.cgroup import places

        network = "network public (user-mode)" if helper() else "no network (network public: slirp4netns is not"
        if sandbox == "namespace":
            # a cgroup of the run's own where this user may make one (root here), said either way
            measured = " (measured, without a cgroup: socket and pipe buffers not counted)"
            memory = " (a memory cgroup)" if "memory" in places() else measured
            cpu = " (a quota, as Docker's)" if "cpu" in places() else " (as affinity, not a quota)"
            limits = f"limits: 1024 MB{memory} · 1 CPU{cpu} · storage 2048 MB (on /tmp only) · {network}"
            assert tooltip.split("\n")[-1].startswith(limits)
            assert tooltip.endswith("· starts in /app")
        else:
            assert tooltip.endswith(  # the copy sandbox measures the memory, as a view without a cgroup does
                "limits: 1024 MB (measured, without a cgroup: socket and pipe buffers not counted) · 1 CPU (as"
                " affinity, not a quota) · storage 2048 MB (not applied)"
            )


async def test_the_header_says_when_a_copy_is_all_this_machine_allows(example, monkeypatch, private_cache):
    """A machine without namespaces, as the tool remembers its probe."""
    from verifier_tui.engine import cache
    from verifier_tui.engine.sandbox import isolation

    monkeypatch.setenv("VERIFIER_TUI_SANDBOX", "auto")
    import time

    said = "bwrap: setting up uid map: Permission denied"
    cache.store("isolation.json", {isolation._cache_key(): {"problem": said, "bwrap": None, "at": time.time()}})
    app = make_app(example("hello-file"))
    async with app.run_test(size=SIZE) as pilot:
        result = await app.wait_for_runs(1)
        await pilot.pause()
        assert result.sandbox == "copy"
        assert "sandbox: copy (unsafe)" in widget_text(app, "#header")
        tooltip = str(app.screen.query_one("#header").tooltip)
        assert said in tooltip and "can write your files" in tooltip


async def test_the_header_of_a_run_the_network_helper_failed_says_no_network(example, tmp_path, monkeypatch, namespace):
    """As an ordinary user (``/dev/net/tun`` root's) slirp4netns fails: ``run``
    said "no network (... slirp4netns failed this run ...)", while the TUI's
    header still said "network public (user-mode)". A helper that ends at once
    fails as that one does."""
    from verifier_tui.engine.sandbox import network

    failing = tmp_path / "slirp4netns"
    failing.write_text("#!/bin/sh\necho 'open(\"/dev/net/tun\"): Permission denied' >&2\nexit 1\n")
    failing.chmod(0o755)
    monkeypatch.setattr(network, "helper", lambda: str(failing))
    app = make_app(example("hello-file"))
    async with app.run_test(size=SIZE) as pilot:
        result = await app.wait_for_runs(1)
        await pilot.pause()
        assert any("this run had no network" in str(notice) for notice in result.notices), result.notices
        header = widget_text(app, "#header")
        tooltip = str(app.screen.query_one("#header").tooltip)
    assert "user-mode" not in header and "user-mode" not in tooltip
    assert "no network (network public: slirp4netns failed this run)" in " ".join(header.split())
    assert "no network (network public: slirp4netns failed this run; the note says why)" in tooltip


async def test_the_header_of_a_run_that_asked_for_no_network_never_says_it_lost_one(example, namespace):
    """A run under network_mode = "no-network", shown while task.toml now asks
    for the internet (edited, its new run not ended yet): the header compared
    the run with the task as it is now and said "slirp4netns failed this run"
    of a run that never asked for a network."""
    from verifier_tui.engine.sandbox import network

    if network.helper() is None:
        pytest.skip("no slirp4netns: the task's public network is none here whatever the run")
    task = example("hello-file")
    toml = task / "task.toml"
    public = toml.read_text()
    toml.write_text(public.replace("[environment]\n", '[environment]\nnetwork_mode = "no-network"\n'))
    app = make_app(task, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        result = await app.wait_for_runs(1)
        assert result.limits["network"] == "no-network" and result.limits["network_given"] == "none"
        toml.write_text(public)
        app.session.reload_task()
        app.screen._refresh_header()
        await pilot.pause()
        header = " ".join(widget_text(app, "#header").split())
        tooltip = str(app.screen.query_one("#header").tooltip)
    assert "failed this run" not in header and "failed this run" not in tooltip, header


async def test_a_big_workspace_copied_for_its_long_path_says_why_under_the_verdict(tmp_path, namespace):
    """The view copies a big workspace whose path is too long for an overlay's mount options (slow), and
    the screen said nothing of why: its note is under the verdict, as run's is."""
    app = make_app(big_task_at_a_long_path(tmp_path / "tasks"), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        result = await app.wait_for_runs(1)
        await pilot.pause()
        reward = " ".join(widget_text(app, "#reward-body").split())
    said = [" ".join(n.split()) for n in result.notices if LONG_PATH_NOTE in n]
    assert len(said) == 1 and f"note: {said[0]}" in reward, (result.notices, reward)


@pytest.mark.parametrize("started_in", ["the task", "elsewhere"])
async def test_paths_on_screen_resolve_from_where_the_tool_was_started(example, tmp_path, monkeypatch, started_in):
    """Paths were shown relative to the task's parent folder (and ``tests/``
    relative to the task) whatever folder the user was in, and the staged
    runner's folder read ``tests/.ng (staged runner)``: paths to type nowhere.
    Now each resolves from where the tool was started, its role beside it."""
    task = example("hello-file")
    cwd = task if started_in == "the task" else tmp_path / "elsewhere"
    cwd.mkdir(exist_ok=True)
    monkeypatch.chdir(cwd)
    app = make_app(task, watch=False, deterministic=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.pause()
        header = widget_text(app, "#header")
        choices = widget_text(app, "#choices")
        resolution = widget_text(app, "#resolution-body")
    tests = "tests" if started_in == "the task" else str(task / "tests")
    assert f"verifier {tests}/verifier.py" in header
    workspace = "cases/correct/workspace" if started_in == "the task" else str(task / "cases/correct/workspace")
    assert f"workspace {workspace}" in choices
    assert "(staged runner)" not in resolution
    rows = [line.split() for line in resolution.splitlines() if line.strip().startswith(("0 ", "1 "))]
    assert rows[0][1:] == ["vendored", "helpers", f"{tests}/.ng"]
    assert rows[1][-1] == tests


@pytest.mark.parametrize("folder", ["verifier-folder", "a-longer-folder-of-tasks"])
async def test_at_100_columns_each_key_hint_stays_on_the_line_of_its_words(tmp_path, folder):
    """With the verifier 15 characters further from where the tool started, the header at 100 columns
    ended its first line with "Harbor mode" and put "m" on a line by itself (with a longer folder the
    choices line parted "task" from "data none t"), and the sandbox line below it was cut off."""
    task = copy_example("hello-file", tmp_path / "tasks" / folder / "hello-file")
    app = make_app(task, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.pause()
        shown = screen_text(app).splitlines()
        header = [line.strip() for line in shown[: app.main.query_one("#choices").region.bottom]]
    for hint in ["case correct s", "Harbor mode m", "sandbox: ", "response none p", "task data none t", "python3"]:
        assert sum(hint in line for line in header) == 1, (hint, header)  # each whole, on one line
    assert all(len(line) <= SIZE[0] - 2 for line in header)


async def test_task_without_tests_folder_runs_the_verifier_written_into_one_made_later(tmp_path):
    """A task with no tests/ at all: the resolution panel says live reload picks a verifier up,
    yet tests/ made, then its verifier.py written, ran nothing: tests/ was watched as a file."""
    root = make_task(tmp_path / "tasks" / "no-tests", None, shim=False, cases={"only": {}})
    (root / "tests").rmdir()
    app = make_app(root)
    async with app.run_test(size=SIZE):
        assert await app.first_run_and_watcher() is None
        (root / "tests").mkdir()
        assert await app.wait_for_runs(2) is None  # the folder made: still no verifier
        await app.controller.live.watch_ready.wait()
        (root / "tests" / "verifier.py").write_text("def verify(workspace):\n    return 0.5\n")
        result = await app.wait_for_runs(3)
        assert result is not None and result.verdict.rewards == {"reward": 0.5}
