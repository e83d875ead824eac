"""Live reload follows the disk: the cases and their expected.json as they
are now, and a verdict that says when it is out of date."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time

import pytest
from textual.widgets import OptionList

from tests.helpers.tasks import EXAMPLES, Gate, make_task, remove_and_make_on_its_inode
from tests.tui.app_under_test import (
    SIZE,
    history_text,
    make_app,
    saved_with_live_reload_off,
    screen_text,
    wait_for,
    widget_text,
)
from verifier_tui.tui.screens.choose_list import ChooseListScreen


def listed(app) -> list[str]:
    """The names in the cases list, top to bottom."""
    cases = app.main.query_one("#cases", OptionList)
    return [cases.get_option_at_index(i).id for i in range(cases.option_count)]


async def test_a_changed_or_deleted_expected_json_judges_the_next_verdict(example):
    root = example("hello-file")
    expected = root / "cases" / "correct" / "expected.json"
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        first = await app.wait_for_runs(1)
        assert first.expected_matched is True
        await asyncio.wait_for(app.controller.live.watch_ready.wait(), 10)
        expected.write_text(json.dumps({"rewards": {"reward": 0.5}}))
        result = await app.wait_for_runs(2)  # the verdict is compared with the expected.json on disk
        assert result.trigger == "cases/correct/expected.json"
        assert result.inputs.expected.rewards == {"reward": 0.5} and result.expected_matched is False
        await pilot.pause()
        assert "does not match the case's expected.json" in widget_text(app, "#reward-body")
        expected.unlink()
        result = await app.wait_for_runs(3)
        assert result.inputs.expected is None and result.expected_matched is None
        await pilot.pause()
        assert "expected.json" not in widget_text(app, "#reward-body")


async def test_a_case_added_on_disk_appears_in_the_list_and_the_chooser(example):
    root = example("hello-file")
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await app.first_run_and_watcher()
        new = root / "cases" / "zz-added"
        shutil.copytree(root / "cases" / "wrong-text", new)
        await wait_for(lambda: "zz-added" in listed(app), "the new case in the cases list")
        assert app.session.case.name == "correct"  # the current choice stays
        await pilot.press("s")
        assert isinstance(app.screen, ChooseListScreen)
        assert "zz-added" in screen_text(app)
        await pilot.press("end", "up", "enter")  # the last case, above "no case"
        result = await app.wait_for_runs(2)
        assert result.inputs.case == "zz-added" and result.expected_matched is True
        # A case folder removed leaves the list too.
        await pilot.press("s")
        await pilot.press("home", "enter")  # back to "correct"
        await app.wait_for_runs(3)
        workspace = root / "cases" / "correct" / "workspace"
        live = app.controller.live
        await wait_for(
            lambda: live.watch_ready.is_set() and any(t.path == workspace for t in live.targets or ()),
            "the watcher on the new choices",
        )
        shutil.rmtree(new)
        await wait_for(lambda: "zz-added" not in listed(app), "the removed case gone from the list")


async def test_live_reload_off_marks_the_verdict_stale_and_on_runs_what_changed(example):
    root = example("hello-file")
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        answer = root / "cases" / "correct" / "workspace" / "hello.txt"
        assert "stale" not in await saved_with_live_reload_off(app, pilot, answer, "goodbye\n")
        assert "workspace/hello.txt" in widget_text(app, "#status")
        assert "Reward · stale" in screen_text(app)
        await pilot.press("w")  # on again: what changed while it was off runs now
        result = await app.wait_for_runs(2)
        assert result.trigger.startswith("workspace/hello.txt") and result.verdict.rewards == {"reward": 0.0}
        await pilot.pause()
        assert "stale" not in widget_text(app, "#status") and "Reward · stale" not in screen_text(app)


async def test_r_with_live_reload_off_clears_the_stale_mark(example):
    root = example("hello-file")
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await saved_with_live_reload_off(
            app, pilot, root / "tests" / "verifier.py", "def verify(workspace):\n    return 0.5\n"
        )
        await pilot.press("r")
        result = await app.wait_for_runs(2)
        assert result.verdict.rewards == {"reward": 0.5}
        await pilot.pause()
        assert "stale" not in widget_text(app, "#status")
        await pilot.press("w")  # nothing changed since that run: turning it on runs nothing
        await pilot.press("r")
        assert (await app.wait_for_runs(3)).trigger == "r key"


async def test_a_save_in_the_clock_tick_of_rs_run_marks_it_stale(example):
    """Live reload off, on a file system that keeps times to the second (or 2 s): a save held as
    stale, r's run reading it, then a save of the same size in the same clock tick after the run
    started leaves the inode, mode, size and time as the run found them, and was taken for a save
    the run had read: the verdict was not marked stale, though the workspace on disk was no longer
    the one it judged. What the run read is told by the content it found, not by times."""
    root = example("hello-file")
    answer = root / "cases" / "correct" / "workspace" / "hello.txt"
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await app.first_run_and_watcher()
        await pilot.press("w")
        answer.write_text(answer.read_text())  # a save the verdict is stale for, which r's run reads
        await wait_for(lambda: "stale" in widget_text(app, "#status"), "the save held as stale")
        read = answer.stat()
        await pilot.press("r")
        assert (await app.wait_for_runs(2)).verdict.rewards == {"reward": 1.0}
        await pilot.pause()
        assert "stale" not in widget_text(app, "#status")
        answer.write_text("hello wurld\n")  # the same size, and the same time given back: the same tick
        os.utime(answer, ns=(read.st_atime_ns, read.st_mtime_ns))
        assert answer.stat().st_ino == read.st_ino and answer.stat().st_size == read.st_size
        await wait_for(lambda: "stale" in widget_text(app, "#status"), "the verdict marked stale")
        assert "workspace/hello.txt" in widget_text(app, "#status")
        assert len(app.finished) == 2  # nothing ran: live reload is off


async def test_a_file_emptied_just_before_r_never_leaves_a_verdict_wrongly_current(example):
    """Accepted: live reload off, a file emptied and r pressed at once. The watcher holds an
    emptied file up to 300 ms for the rest of a save (VS Code truncates, then writes), so r's run
    may read the content before it; the emptying is then said as the hold ends, and the verdict of
    the old content is marked stale: late, never wrongly current."""
    root = example("hello-file")
    answer = root / "cases" / "correct" / "workspace" / "hello.txt"
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await app.first_run_and_watcher()
        await pilot.press("w")
        await pilot.pause()
        answer.write_text("")
        await pilot.press("r")
        result = await app.wait_for_runs(2)
        await asyncio.sleep(1)  # past the hold
        await pilot.pause()
        if result.verdict.rewards == {"reward": 1.0}:  # the content before: so said
            assert "stale: workspace/hello.txt" in widget_text(app, "#status"), widget_text(app, "#status")


_SLOW = "import time\n\n\ndef verify(workspace):\n    time.sleep(1)\n    return 1.0\n"
_TWO_CASES = {"a-first": {"n.txt": "1"}, "b-second": {"n.txt": "2"}}


async def _a_with_a_save_as_a_first_runs(app, pilot, root, saved: str):
    """Live reload off, a (every case), ``saved``'s workspace saved while a-first runs: the last run."""
    await app.first_run_and_watcher()
    await pilot.press("w")
    await pilot.press("a")
    await wait_for(lambda: "running a-first" in widget_text(app, "#status"), "a-first's run")
    (root / "cases" / saved / "workspace" / "n.txt").write_text("3")
    await wait_for(lambda: app.controller.live.stale is not None, "the save held as stale")
    return await app.wait_for_runs(3)


async def test_a_save_while_every_case_runs_leaves_the_verdict_stale(tmp_path):
    """Live reload off, a (every case): a save of the current case's workspace once its run had
    started marked its verdict stale, and the next case's run, starting, took the mark away,
    though the verdict shown was still of the file before the save. Only a run of the case whose
    verdict is shown reads the files anew for it."""
    root = make_task(tmp_path / "t", _SLOW, cases=_TWO_CASES)
    app = make_app(root, case="a-first")
    async with app.run_test(size=SIZE) as pilot:
        assert (await _a_with_a_save_as_a_first_runs(app, pilot, root, "a-first")).inputs.case == "b-second"
        await pilot.pause()
        assert "stale: workspace/n.txt changed since this run" in widget_text(app, "#status")
        assert "Reward · stale" in screen_text(app)


async def test_a_save_the_shown_cases_run_in_a_read_is_stale_no_more(tmp_path):
    """Live reload off, a (every case), the current case's workspace saved while another case ran
    first: the current case's run read the save and cleared the screen's mark, but not the
    engine's, so the next save of the verifier read "stale: tests/verifier.py +1 more changed since
    this run", the +1 more a file that run had read (and w ran it as "+1 more")."""
    root = make_task(tmp_path / "t", _SLOW, cases=_TWO_CASES)
    app = make_app(root, case="b-second")
    async with app.run_test(size=SIZE) as pilot:
        # a-first's run, then b-second's, which reads the save
        assert (await _a_with_a_save_as_a_first_runs(app, pilot, root, "b-second")).inputs.case == "b-second"
        await pilot.pause()
        assert "stale" not in widget_text(app, "#status")
        (root / "tests" / "verifier.py").write_text(_SLOW.replace("1.0", "0.5"))
        await wait_for(lambda: "stale" in widget_text(app, "#status"), "the verdict marked stale")
        assert "stale: tests/verifier.py changed since this run" in widget_text(app, "#status")
        await pilot.press("w")  # on again: the verifier's save runs, and only it
        assert (await app.wait_for_runs(4)).trigger == "tests/verifier.py"


async def test_r_on_a_verifier_deleted_with_live_reload_off_clears_the_stale_mark(example):
    """Live reload off, the verifier deleted (stale), then r: the panel said "Nothing to run yet:
    this task has no verifier", the files as they are now, under "Reward · stale", and the status
    line still said the deletion made it stale."""
    root = example("hello-file")
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await app.first_run_and_watcher()
        await pilot.press("w")
        (root / "tests" / "verifier.py").unlink()
        await wait_for(lambda: "stale" in widget_text(app, "#status"), "the verdict marked stale")
        await pilot.press("r")
        assert await app.wait_for_runs(2) is None
        await pilot.pause()
        assert "no verifier found" in widget_text(app, "#status")
        assert "stale" not in widget_text(app, "#status") and "Reward · stale" not in screen_text(app)


async def test_live_reload_turned_on_after_starting_without_it_runs(example):
    """Started with --no-watch nothing saw what changed meanwhile: turned on, it runs once."""
    root = example("hello-file")
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        (root / "tests" / "verifier.py").write_text("def verify(workspace):\n    return 0.25\n")
        await pilot.press("w")
        result = await app.wait_for_runs(2)
        assert result.verdict.rewards == {"reward": 0.25} and result.trigger == "live reload on"


async def test_a_run_without_a_watcher_reads_task_toml_as_it_is_now(example):
    """Started with --no-watch, nothing re-read the task: task.toml edited (its [verifier] env),
    r ran with the env of the start, and so did the run as w turned live reload on, so the
    verdict was of a task.toml no longer there (the header's limits too); b and a alike."""
    root = example("hello-file")
    toml = root / "task.toml"
    strict = toml.read_text(encoding="utf-8")
    lenient = strict.replace('STRICT = "1"', 'STRICT = "0"')
    app = make_app(root, case="wrong-case", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        assert (await app.wait_for_runs(1)).verdict.rewards == {"reward": 0.0}  # STRICT=1: case matters
        toml.write_text(lenient, encoding="utf-8")
        await pilot.press("r")
        assert (await app.wait_for_runs(2)).verdict.rewards == {"reward": 1.0}

        async def shown_after(key, runs):
            before = app.session.sequence
            await pilot.press(key)
            await wait_for(
                lambda: (
                    app.session.sequence == before + runs
                    and not app.controller.live.busy()
                    and app.main.latest.sequence > before
                ),
                f"{key}'s runs (sequence {app.session.sequence}, before {before})",
            )
            return app.main.latest.verdict.rewards  # the shown case's

        toml.write_text(strict, encoding="utf-8")
        assert await shown_after("b", 1) == {"reward": 0.0}  # no response: its Harbor mode alone
        toml.write_text(lenient, encoding="utf-8")
        assert await shown_after("a", 4) == {"reward": 1.0}
        toml.write_text(strict, encoding="utf-8")
        await pilot.press("w")
        await wait_for(lambda: app.main.latest.trigger == "live reload on", "w's run")
        assert app.main.latest.verdict.rewards == {"reward": 0.0}


async def test_a_refused_without_a_watcher_leaves_the_next_r_to_the_shown_case(example):
    """--no-watch, the task's folder gone as a was pressed: a ran nothing (the task could not be
    re-read), yet once the folder was back, r ran every case, as if it were a's."""
    root = example("hello-file")
    app = make_app(root, case="correct", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        shutil.rmtree(root)
        await pilot.press("a")
        assert await app.wait_for_runs(2) is None  # refused: the task could not be re-read
        shutil.copytree(EXAMPLES / "hello-file", root)
        await pilot.press("r")
        await app.wait_for_runs(3)
        await wait_for(lambda: not app.controller.live.busy(), "r's run to end")
        await pilot.pause()
        assert len(app.finished) == 3 and "missing-file" not in history_text(app), history_text(app)


async def test_a_deleted_file_makes_the_verdict_stale_in_words_that_read(example):
    """It said "stale: hello.txt deleted changed since this run"."""
    root = example("hello-file")
    app = make_app(root, case="correct")
    async with app.run_test(size=SIZE) as pilot:
        await app.first_run_and_watcher()
        await pilot.press("w")
        (root / "cases" / "correct" / "workspace" / "hello.txt").unlink()
        await wait_for(lambda: "stale" in widget_text(app, "#status"), "the verdict marked stale")
        assert "stale: workspace/hello.txt deleted since this run" in widget_text(app, "#status")


async def test_a_run_that_superseded_another_names_both_saves(tmp_path):
    """A save of hello.txt started a run; a save of new.txt cancelled it and ran again: the
    history said that run was "after workspace/new.txt" alone, though it was the first to read
    hello.txt as saved (its ▲ or ▼ put on the one file). It names both, as a save made while a
    run waits to start is named with the others."""
    slow = "import time\n\ndef verify(workspace):\n    time.sleep(3)\n    return 1.0\n"
    root = make_task(tmp_path / "t", slow, cases={"only": {"hello.txt": "hi"}})
    workspace = root / "cases" / "only" / "workspace"
    app = make_app(root, case="only")
    async with app.run_test(size=(160, 45)) as pilot:  # a history row long enough to show it
        await app.first_run_and_watcher()
        (workspace / "hello.txt").write_text("hello")
        await wait_for(lambda: "running only after workspace/hello.txt" in widget_text(app, "#status"), "its run")
        (workspace / "new.txt").write_text("new")
        result = await app.wait_for_runs(2)
        assert result is not None and result.trigger == "workspace/hello.txt +1 more", result.trigger
        await pilot.pause()
        assert "after workspace/hello.txt +1" in screen_text(app)  # the history's row, cut at its width


async def test_vim_s_late_attribute_events_of_a_save_start_no_second_run(tmp_path):
    """vim saves in place (truncate, write, fsync) and only then sets the file's mode and ACL
    again: those events came after the fsync, once the save's run had started, and cancelled it
    for a run of the very same file (the run numbers skipped one, every second or third save).
    A change that leaves what the run in flight read as it was (its data, size, mode and inode)
    starts no run; a save after it does."""
    slow = "import time\n\ndef verify(workspace):\n    time.sleep(3)\n    return {}\n"
    root = make_task(tmp_path / "t", slow.format("1.0"), cases={"only": {}})
    verifier = root / "tests" / "verifier.py"
    app = make_app(root, case="only")
    async with app.run_test(size=SIZE):
        await app.first_run_and_watcher()
        verifier.write_text(slow.format("0.5"))
        await wait_for(lambda: "running only after tests/verifier.py" in widget_text(app, "#status"), "its run")
        await asyncio.sleep(0.3)  # the fsync's time
        os.chmod(verifier, verifier.stat().st_mode)  # what vim does after it, as setxattr
        result = await app.wait_for_runs(2)
        assert result is not None and result.verdict.rewards == {"reward": 0.5}
        await asyncio.sleep(1)
        assert app.session.sequence == 2, "a second run started for the save"
        verifier.write_text(slow.format("0.25"))  # a save after it still runs
        result = await app.wait_for_runs(3)
        assert result is not None and result.verdict.rewards == {"reward": 0.25}


#: A verifier slow enough to save during, scoring the number in its workspace's n.txt.
_SLOW_N = (
    "import os, time\n\ndef verify(workspace):\n    time.sleep(3)\n"
    "    with open(os.path.join(workspace, 'n.txt')) as f:\n        return float(f.read())\n"
)


async def test_vim_s_late_events_of_a_save_of_a_file_too_big_to_read_start_no_second_run(tmp_path, monkeypatch):
    """A file past what is read at a run's start (a big CSV of a case) is told by its times and
    size: vim's late attribute events of its save started a second run of the same file again."""
    from verifier_tui.engine.watch import live

    monkeypatch.setattr(live, "_HASH_AT_MOST", 4)
    slow = "import time\n\ndef verify(workspace):\n    time.sleep(3)\n    return 1.0\n"
    root = make_task(tmp_path / "t", slow, cases={"only": {"big.csv": "a,b\n"}})
    big = root / "cases" / "only" / "workspace" / "big.csv"
    app = make_app(root, case="only")
    async with app.run_test(size=SIZE):
        await app.first_run_and_watcher()
        big.write_text("a,b\n1,2\n")
        await wait_for(lambda: "running only after workspace/big.csv" in widget_text(app, "#status"), "its run")
        await asyncio.sleep(0.3)
        os.chmod(big, big.stat().st_mode)  # what vim does after its write
        await app.wait_for_runs(2)
        await asyncio.sleep(1)
        assert app.session.sequence == 2, "a second run started for the save"


async def test_a_save_not_known_to_be_before_the_run_is_never_taken_for_its_late_events(tmp_path):
    """The file's time is not known to be before the run started (a coarse clock's tick, or a
    file server whose clock runs ahead): a save after the start may leave the same size and time
    as the run found, so it is not taken for the late events of the save the run is for (vim's):
    a run starts for it, and reads the second save (the sandbox's copy of the workspace followed
    it, where it kept the first's for its size and time)."""
    root = make_task(tmp_path / "t", _SLOW_N, cases={"only": {"n.txt": "0.1"}})
    answer = root / "cases" / "only" / "workspace" / "n.txt"
    app = make_app(root, case="only")
    async with app.run_test(size=SIZE):
        await app.first_run_and_watcher()
        ahead = time.time_ns() + 60 * 10**9
        answer.write_text("0.5")
        os.utime(answer, ns=(ahead, ahead))
        await wait_for(lambda: "running only after workspace/n.txt" in widget_text(app, "#status"), "its run")
        # (the status says so as the run is asked for; its number is taken as it starts, a moment later)
        await wait_for(lambda: app.session.sequence == 2, "its run started")
        await asyncio.sleep(0.3)
        answer.write_text("0.6")  # the same size, and the same time given back
        os.utime(answer, ns=(ahead, ahead))
        await wait_for(lambda: app.session.sequence == 3, "a run for the second save")
        result = await app.wait_for_runs(2)
        assert result is not None and result.verdict.rewards == {"reward": 0.6}, result.verdict


async def test_a_second_save_of_the_same_size_and_time_as_the_first_still_runs(tmp_path):
    """A file system that keeps times to the second (or 2 s): a second save in place of the same
    size within the same second as the first leaves the inode, size, mode and time as the first's
    run found them, and was taken for that save's late events: nothing ran, and the verdict shown
    stayed the first save's. What the run read is told by the file's content now, not its time."""
    root = make_task(tmp_path / "t", _SLOW_N, cases={"only": {"n.txt": "0.1"}})
    answer = root / "cases" / "only" / "workspace" / "n.txt"
    app = make_app(root, case="only")
    async with app.run_test(size=SIZE):
        await app.first_run_and_watcher()
        second = (time.time_ns() // 10**9 - 60) * 10**9  # a whole second, well before the run
        answer.write_text("0.5")
        os.utime(answer, ns=(second, second))
        await wait_for(lambda: "running only after workspace/n.txt" in widget_text(app, "#status"), "its run")
        answer.write_text("0.6")  # the same size, and the same second given back
        os.utime(answer, ns=(second, second))
        await wait_for(lambda: app.session.sequence == 3, "a run for the second save")
        result = await app.wait_for_runs(2)
        assert result is not None and result.verdict.rewards == {"reward": 0.6}, result.verdict


async def test_a_save_during_a_copy_run_runs_again(tmp_path, monkeypatch):
    """In the copy sandbox (asked for), a save of the verifier while a run went on (a slow
    verifier) was taken for the run's own write: no run followed, and the screen kept the
    verdict of the code before it."""
    monkeypatch.setenv("VERIFIER_TUI_SANDBOX", "copy")
    gate = Gate(tmp_path / "gate")
    source = gate.verifier("def verify(workspace):\n    return 1.0\n")
    verifier = make_task(tmp_path / "t", source, cases={"only": {}}) / "tests" / "verifier.py"
    app = make_app(tmp_path / "t")
    async with app.run_test(size=SIZE):
        await app.first_run_and_watcher()
        gate.go.unlink()
        verifier.write_text(source.replace("1.0", "0.5"))
        await wait_for(lambda: gate.runs() == 2, "the second run at the gate")
        verifier.write_text(source.replace("1.0", "0.25"))
        gate.go.touch()
        saved = {"reward": 0.25}
        await wait_for(
            lambda: any(r and r.verdict.rewards == saved for r in app.finished), "a run of the second save", 60
        )


async def test_a_case_folder_named_in_bytes_that_are_not_utf8_is_watched(example):
    """watchfiles cannot build a watch over a tree with a folder whose name is
    not UTF-8: every new one ended on it, so the status line said "live
    reload: starting" for ever and no save ran anything."""
    root = example("hello-file")
    try:
        shutil.copytree(os.fsencode(root / "cases" / "wrong-text"), os.fsencode(root / "cases") + b"/zz\xff")
    except OSError:
        pytest.skip("this file system refuses names that are not UTF-8")
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await wait_for(lambda: "● watching" in screen_text(app), "the status line to say it is watching")
        verifier = root / "tests" / "verifier.py"
        verifier.write_text(verifier.read_text() + "\n# saved\n")
        result = await app.wait_for_runs(2)
        assert result.trigger == "tests/verifier.py"
        await pilot.pause()
        assert "run #2" in screen_text(app)


async def test_the_current_case_renamed_on_disk_stays_chosen_under_its_new_name(example):
    """``mv cases/correct cases/right`` while the app ran with ``correct``
    chosen: the list showed ``right``, but the choice dropped to "no case",
    the header still named ``cases/correct/workspace``, and the run that
    followed could not start (``the workspace ... is not there any more``)."""
    root = example("hello-file")
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await app.first_run_and_watcher()
        (root / "cases" / "correct").rename(root / "cases" / "right")
        await wait_for(lambda: "right" in listed(app), "the renamed case in the cases list")
        assert "correct" not in listed(app)
        assert app.session.case is not None and app.session.case.name == "right"
        assert app.session.workspace == root / "cases" / "right" / "workspace"
        result = await app.wait_for_runs(2)
        assert result.inputs.case == "right" and result.expected_matched is True
        await pilot.pause()
        header = widget_text(app, "#header")
        assert "case right" in header and "could not start" not in screen_text(app)


def saved_atomically(path, text: str) -> None:
    """An editor's save: a file beside ``path``, renamed over it (its folder's mtime changes)."""
    temporary = path.with_name(f".{path.name}.swp")
    temporary.write_text(text)
    os.replace(temporary, path)


async def test_a_case_renamed_and_saved_in_at_once_stays_chosen(example_on_disk):
    """``mv cases/correct cases/right`` and a save in it (its expected.json)
    before the watcher's batch closed: the save changed the folder's mtime, by
    which (with its inode) a renamed folder is known, and the case was said
    gone (``case none``, its workspace ``not there any more``)."""
    root = example_on_disk("hello-file")
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await app.first_run_and_watcher()
        moved = root / "cases" / "right"
        (root / "cases" / "correct").rename(moved)
        saved_atomically(moved / "expected.json", (moved / "expected.json").read_text())
        await wait_for(lambda: "right" in listed(app), "the renamed case in the cases list")
        result = await app.wait_for_runs(2)
        assert app.session.case is not None and app.session.case.name == "right"
        assert result.inputs.case == "right" and result.expected_matched is True
        await pilot.pause()
        assert "case right" in widget_text(app, "#header") and "could not start" not in screen_text(app)


async def test_a_task_folder_renamed_and_saved_in_at_once_is_followed(example_on_disk):
    """``mv hello-file hello-world`` and a save of its task.toml before the
    watcher's batch closed: the task was said gone (``the task could not be
    re-read``) where a rename alone is followed."""
    root = example_on_disk("hello-file")
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await app.first_run_and_watcher()
        moved = root.with_name("hello-world")
        root.rename(moved)
        saved_atomically(moved / "task.toml", (moved / "task.toml").read_text())
        result = await app.wait_for_runs(2)
        assert app.session.task.root == moved and result.inputs.case == "correct" and result.expected_matched is True
        await pilot.pause()
        assert "could not be re-read" not in screen_text(app) and "could not start" not in screen_text(app)


async def test_the_case_chooser_open_follows_a_case_renamed_on_disk(example):
    """``s`` open, then ``mv cases/wrong-text cases/wrong-words``: the list
    behind it followed, but the chooser kept offering ``wrong-text``, a case
    that is no more, and never offered ``wrong-words``."""
    root = example("hello-file")
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await app.first_run_and_watcher()
        await pilot.press("s")
        assert isinstance(app.screen, ChooseListScreen)
        (root / "cases" / "wrong-text").rename(root / "cases" / "wrong-words")
        await wait_for(lambda: "wrong-words" in listed(app), "the renamed case in the cases list")
        chooser = app.screen
        assert isinstance(chooser, ChooseListScreen)
        options = chooser.query_one(OptionList)

        def offered() -> list[str | None]:
            return [options.get_option_at_index(i).id for i in range(options.option_count)]

        await wait_for(lambda: "wrong-words" in offered(), "the renamed case in the chooser")
        assert "wrong-text" not in offered() and "wrong-text" not in screen_text(app)
        await pilot.press("end", "up", "enter")  # the last case, above "no case"
        result = await app.wait_for_runs(2)
        assert result.inputs.case == "wrong-words" and result.expected_matched is True


async def test_the_run_after_the_task_folder_renamed_is_said_to_follow_the_rename(example):
    """``mv hello-file hello-world`` while the app ran: the run that followed
    was in the history ``after cases deleted +1 more``, as if the user had
    deleted the cases of a task that is all there under its new name."""
    root = example("hello-file")
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await app.first_run_and_watcher()
        root.rename(root.with_name("hello-world"))
        result = await app.wait_for_runs(2)
        assert result.trigger == "task folder → hello-world"
        await pilot.pause()
        assert "after task folder →" in screen_text(app)  # (the sidebar cuts the name)
        assert "deleted" not in screen_text(app)


async def test_the_task_folder_renamed_on_disk_is_followed(example):
    """``mv hello-file hello-world`` while the app ran: the status line said
    ``the task could not be re-read: /.../hello-file/tests does not exist``
    for good, and ``r`` then failed the case on a workspace that was gone."""
    root = example("hello-file")
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await app.first_run_and_watcher()
        moved = root.with_name("hello-world")
        root.rename(moved)
        await wait_for(lambda: app.session.task.root == moved, "the task read again at its new name")
        live = app.controller.live
        await wait_for(
            lambda: live.watch_ready.is_set() and any(t.path == moved / "tests" for t in live.targets or ()),
            "the watcher on the task's new folder",
        )
        before = len(app.finished)  # counted before r: its run can end while the press is processed
        await pilot.press("r")
        result = await app.wait_for_runs(before + 1)
        assert result.inputs.case == "correct" and result.expected_matched is True
        assert app.session.workspace == moved / "cases" / "correct" / "workspace"
        await pilot.pause()
        assert "could not be re-read" not in screen_text(app)
        assert "workspace hello-world/cases/correct/workspace" in screen_text(app)
        # A save in the task's new folder runs, as before the rename.
        (moved / "tests" / "verifier.py").write_text("def verify(workspace):\n    return 0.5\n")
        await wait_for(
            lambda: any(r and r.verdict.rewards == {"reward": 0.5} for r in app.finished), "a run of the save"
        )


async def test_a_chosen_case_removed_and_another_made_on_its_inode_is_not_taken_for_it(example_on_disk):
    """``rm -rf cases/wrong-text; mkdir cases/zz-new`` (and its files) with
    ``wrong-text`` chosen: ext4 gave zz-new the inode wrong-text freed, and the
    session, following the chosen case by its inode, silently switched to
    zz-new, another case, whose verdict it showed as the chosen case's."""
    root = example_on_disk("hello-file")
    app = make_app(root, case="wrong-text")
    async with app.run_test(size=SIZE) as pilot:
        await app.first_run_and_watcher()
        new = root / "cases" / "zz-new"
        remove_and_make_on_its_inode(root / "cases" / "wrong-text", new)
        shutil.copytree(root / "cases" / "correct", new, dirs_exist_ok=True)
        await wait_for(lambda: "zz-new" in listed(app), "the new case in the cases list")
        assert "wrong-text" not in listed(app)
        result = await app.wait_for_runs(2)
        assert result.inputs.case is None and app.session.case is None
        await pilot.pause()
        assert "case none" in widget_text(app, "#header")
        lines = [line.strip() for line in screen_text(app).splitlines()]
        assert any(line.startswith("workspace ") and "cases/wrong-text/workspace" in line for line in lines)
        assert "could not start" in screen_text(app) and "is not there any more" in screen_text(app)
        assert all(r is None or r.inputs.case != "zz-new" for r in app.finished)


async def test_a_task_removed_and_another_copied_beside_it_on_its_inode_is_not_taken_for_it(example_on_disk):
    """``rm -rf hello-file`` and another task copied beside it (a checkout of
    another branch): ext4 gave the new folder the inode hello-file freed, and
    the session re-opened as that other task (its verifier, its case of the
    same name), a verdict of another task shown as hello-file's."""
    root = example_on_disk("hello-file")
    app = make_app(root, case="correct")
    async with app.run_test(size=SIZE) as pilot:
        await app.first_run_and_watcher()
        other = root.with_name("sum-column")
        remove_and_make_on_its_inode(root, other)
        shutil.copytree(EXAMPLES / "sum-column", other, dirs_exist_ok=True)
        await wait_for(lambda: "the task could not be re-read" in screen_text(app), "the task said gone")
        await pilot.pause(1.0)
        assert app.session.task.root == root
        assert all(r is None or not r.inputs.verifier.is_relative_to(other) for r in app.finished)
        assert "sum-column" not in screen_text(app)


async def test_a_verifier_deleted_while_watched_leaves_no_output_of_its_last_run(tmp_path):
    """tests/verifier.py deleted while the TUI watched: the reward panel said
    'Nothing to run yet: this task has no verifier', but the stderr panel
    kept the traceback of the run before, as if it were this state's."""
    from verifier_tui.tui.widgets.output_panel import OutputPanel

    root = make_task(tmp_path / "tasks" / "gone", "def verify(workspace):\n    raise ValueError('old trouble')\n")
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await app.first_run_and_watcher()
        await pilot.pause()
        assert "old trouble" in app.main.query_one(OutputPanel).text("stderr")
        (root / "tests" / "verifier.py").unlink()
        await wait_for(lambda: "Nothing to run yet" in widget_text(app, "#reward-body"), "no verifier said")
        await pilot.pause()
        said = app.main.query_one(OutputPanel).text("stderr")
        assert said == "", said


async def test_tests_moved_away_and_back_with_live_reload_off_is_stale_in_words_that_read(example):
    """It said "stale: tests re-created changed since this run"."""
    root = example("hello-file")
    tests = root / "tests"
    app = make_app(root, case="correct")
    async with app.run_test(size=SIZE) as pilot:
        await app.first_run_and_watcher()
        await pilot.press("w")
        await pilot.pause()
        tests.rename(root / "aside")
        await wait_for(lambda: "tests deleted" in widget_text(app, "#status"), "the verdict marked stale")
        (root / "aside").rename(tests)
        await wait_for(lambda: "created" in widget_text(app, "#status"), "tests said back")
        assert "stale: tests re-created since this run" in widget_text(app, "#status")


async def test_a_link_out_made_behind_a_folder_link_of_the_tests_is_said_at_once(example, tmp_path):
    """tests/shared a link to environment/shared, in the task: a link out of the task made there is
    one Harbor refuses, and the reward panel said nothing of it until another file was saved."""
    root = example("hello-file")
    (root / "environment" / "shared").mkdir(parents=True)
    (root / "tests" / "shared").symlink_to("../environment/shared")
    (tmp_path / "outside").mkdir()
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await asyncio.wait_for(app.controller.live.watch_ready.wait(), 10)
        (root / "environment" / "shared" / "out").symlink_to(tmp_path / "outside")
        result = await app.wait_for_runs(2)
        await pilot.pause()
        assert result.trigger == "environment/shared/out"
        assert "tests/shared/out leads out of the task" in widget_text(app, "#reward-body")


async def test_a_link_in_the_task_made_in_solution_runs_nothing_yet_a_link_out_behind_it_is_said(example, tmp_path):
    """solution/env a link to ../environment made while watched: Harbor loads the task as before and no
    run reads solution/, yet it ran, and marked every case out of date; environment/ is now one Harbor
    checks, so a link out made there later is said at once."""
    root = example("hello-file")
    (tmp_path / "outside").mkdir()
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        live = app.controller.live
        await asyncio.wait_for(live.watch_ready.wait(), 10)
        (root / "solution" / "env").symlink_to("../environment")
        watched = root / "environment"
        await wait_for(
            lambda: any(t.path == watched for t in live.targets or ()) and live.watch_ready.is_set(),
            "environment/ watched",
        )
        (root / "tests" / "notes.txt").write_text("saved\n")
        assert (await app.wait_for_runs(2)).trigger == "tests/notes.txt"
        (watched / "out").symlink_to(tmp_path / "outside")
        result = await app.wait_for_runs(3)
        await pilot.pause()
        assert result.trigger == "environment/out"
        assert "solution/env/out leads out of the task" in widget_text(app, "#reward-body")


async def test_an_unusable_expected_json_saved_unusable_otherwise_is_said_as_it_is_now(example):
    """expected.json saved with a NaN reward, then as a list: no run follows (neither judges
    a run), and the resolution panel went on saying the first file's problem, "rewards"
    must be finite numbers, of a file that holds a list."""
    root = example("hello-file")
    expected = root / "cases" / "correct" / "expected.json"
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await app.first_run_and_watcher()
        expected.write_text('{"rewards": {"reward": NaN}}')
        await app.wait_for_runs(2)
        await pilot.pause()
        assert '"rewards" must be an object of finite numbers' in widget_text(app, "#resolution-body")
        expected.write_text("[1, 2]")
        said = "expected.json must be a JSON object like"
        await wait_for(lambda: said in widget_text(app, "#resolution-body"), "the new file's problem said")
        assert "finite numbers" not in widget_text(app, "#resolution-body")
        assert len(app.finished) == 2  # nothing ran for it: neither file judges a run
