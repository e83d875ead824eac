"""A multi-step task (task.toml ``[[steps]]``), as ``run``, ``test`` and
``explain`` show it: Harbor verifies each step with its own
``steps/<name>/tests`` laid over ``tests/`` and its own ``[steps.verifier]``,
which a run of the task's ``tests/`` alone is not.

Each test runs the real console script on a copy of Harbor 0.26's own
``tasks/multi-step`` (never the shared folder itself).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from tests.helpers.commands import no_traceback, run_tool, start_watch, stop
from tests.helpers.harbor import HARBOR_REAL
from tests.helpers.tasks import PY, copy_example, nested_folders

pytestmark = pytest.mark.skipif(HARBOR_REAL is None, reason="../shared/harbor-0.26 is not here")


@pytest.fixture
def multi_step(tmp_path) -> Path:
    """Harbor's multi-step task, copied, with one case whose workspace passes."""
    assert HARBOR_REAL is not None
    task = tmp_path / "multi-step"
    shutil.copytree(HARBOR_REAL / "tasks" / "multi-step", task, symlinks=True)
    case = task / "cases" / "hello"
    (case / "workspace").mkdir(parents=True)
    (case / "workspace" / "hello.txt").write_text("hello world\n")
    (case / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    return task


def _steps_note(notes: list[str]) -> str:
    said = [n for n in notes if "[[steps]]" in n]
    assert len(said) == 1, notes
    return said[0]


def _says_what_harbor_runs(note: str) -> None:
    assert "first, second" in note, note
    assert "steps/<name>/tests over tests/" in note, note
    assert "[steps.verifier]" in note, note
    assert "this run is tests/ with the task's [verifier]" in note, note


def test_run_of_a_multi_step_task_says_harbor_verifies_each_step(env, multi_step):
    done = run_tool(env, "run", multi_step, "--case", "hello", "--json")
    no_traceback(done)
    assert done.returncode == 0, done.stderr
    _says_what_harbor_runs(_steps_note(json.loads(done.stdout)["notices"]))
    text = run_tool(env, "run", multi_step, "--case", "hello")
    assert text.returncode == 0, text.stderr
    _says_what_harbor_runs(_steps_note([line for line in text.stdout.splitlines() if line.startswith("note:")]))


def test_test_and_explain_of_a_multi_step_task_say_it_too(env, multi_step):
    done = run_tool(env, "test", multi_step)
    no_traceback(done)
    assert done.returncode == 0, done.stdout + done.stderr
    _says_what_harbor_runs(_steps_note([line for line in done.stdout.splitlines() if "note" in line]))
    explained = run_tool(env, "explain", multi_step, "--json")
    no_traceback(explained)
    _says_what_harbor_runs(_steps_note(json.loads(explained.stdout)["notices"]))


STEP_VERIFIER = """import os
import time


def verify(workspace):
    print("STRICT", os.environ.get("STRICT"), "STEP_ONLY", os.environ.get("STEP_ONLY"))
    time.sleep(float(os.environ.get("SLEEP", "0")))
    return 0.5
"""


@pytest.fixture
def own_step(multi_step) -> Path:
    """The task's second step with its own tests/verifier.py, timeout and env."""
    (multi_step / "steps" / "second" / "tests").mkdir()
    (multi_step / "steps" / "second" / "tests" / "verifier.py").write_text(STEP_VERIFIER)
    toml = multi_step / "task.toml"
    toml.write_text(
        toml.read_text().replace(
            '[[steps]]\nname = "second"\n',
            '[[steps]]\nname = "second"\n\n[steps.verifier]\ntimeout_sec = 2.0\n'
            'env = { STEP_ONLY = "yes", STRICT = "0" }\n',
        )
    )
    return multi_step


def test_step_runs_the_steps_own_verifier_with_its_own_settings(env, own_step):
    done = run_tool(env, "run", own_step, "--case", "hello", "--step", "second", "--json")
    no_traceback(done)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["verifier"] == str(own_step / "steps" / "second" / "tests" / "verifier.py")
    assert data["rewards"] == {"reward": 0.5}
    # [steps.verifier] env over [verifier] env, as Harbor's Verifier.verify merges them; the step's timeout.
    assert "STRICT 0 STEP_ONLY yes" in data["stdout"]
    assert data["timeout_s"] == 2.0
    assert data["command"][-2:] == ["--step", "second"]
    assert not [n for n in data["notices"] if "[[steps]]" in n]
    assert (own_step / "tests" / "verifier.py").read_text() == (
        HARBOR_REAL / "tasks/multi-step/tests/verifier.py"
    ).read_text()
    text = run_tool(env, "run", own_step, "--case", "hello", "--step", "second")
    assert text.stdout.startswith("task multi-step · step second · verifier "), text.stdout


def test_a_step_outliving_its_own_timeout_is_harbors_verifier_timeout(env, own_step):
    done = run_tool(env, "run", own_step, "--case", "hello", "--step", "second", "--env", "SLEEP=30", "--json")
    no_traceback(done)
    data = json.loads(done.stdout)
    assert done.returncode == 124, done.stderr
    assert data["verdict_error"] == "VerifierTimeoutError" and data["duration_s"] < 10


def test_a_step_without_its_own_tests_runs_tests_with_the_steps_default_timeout(env, own_step, tmp_path):
    """Harbor's ``_step_verifier_timeout_sec`` takes the step's timeout_sec, whose default is 600
    whatever [verifier] says (30 here); [verifier] env still holds (STRICT = "1")."""
    done = run_tool(env, "run", own_step, "--case", "hello", "--step", "first", "--json")
    no_traceback(done)
    data = json.loads(done.stdout)
    assert data["verifier"] == str(own_step / "tests" / "verifier.py")
    assert data["timeout_s"] == 600.0 and data["rewards"] == {"reward": 1.0}
    loud = tmp_path / "loud"
    loud.mkdir()
    (loud / "hello.txt").write_text("Hello World\n")
    strict = run_tool(env, "run", own_step, "--workspace", loud, "--step", "first", "--json")
    assert json.loads(strict.stdout)["rewards"] == {"reward": 0.0}  # STRICT = "1" of [verifier] env


def test_a_step_the_task_has_not_is_one_line(env, own_step, tmp_path):
    done = run_tool(env, "run", own_step, "--step", "third")
    no_traceback(done)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "verifier-tui: --step third: multi-step has no step 'third' (steps: first, second)"
    ]
    # a name that draws nothing in part is spelled as a case's is, never Python's 'thi\u200brd'
    done = run_tool(env, "run", own_step, "--step", "thi\u200brd")
    assert "--step thi<U+200B>rd: multi-step has no step 'thi<U+200B>rd' (steps: first, second)" in done.stderr
    (own_step / "task.toml").write_text('version = "1.0"\n')
    done = run_tool(env, "run", own_step, "--step", "first")
    assert done.returncode == 2 and "has no [[steps]] in its task.toml" in done.stderr, done.stderr


def test_a_tasks_step_is_taken_as_its_refusal_spells_it(env, own_step):
    """A task's step named with a zero-width space: ``--step`` refused it as it listed it
    (``no step 'fir<U+200B>st' (steps: fir<U+200B>st, second)``). Typed so, it is that step, for ``run``
    and for ``test FOLDER``."""
    toml = own_step / "task.toml"
    toml.write_text(toml.read_text().replace('name = "first"', 'name = "fir\\u200bst"'))
    (own_step / "steps" / "first").rename(own_step / "steps" / "fir\u200bst")
    done = run_tool(env, "run", own_step, "--step", "fir<U+200B>st", "--case", "hello", "--json")
    no_traceback(done)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["step"] == "fir\u200bst", done.stdout
    tested = run_tool(env, "test", own_step.parent, "--step", "fir<U+200B>st")
    no_traceback(tested)
    assert tested.returncode == 0 and "no task found has it" not in tested.stdout + tested.stderr, tested.stdout


def test_a_tasks_steps_reading_alike_are_refused_with_names_to_type(env, own_step):
    """A task's step ``fir`` + U+200B + ``st`` and a ``[[steps]]`` name literally ``fir<U+200B>st``
    (which Harbor refuses, the tool running the task with a note) list alike: ``--step 'fir<U+200B>st'``,
    typed as task.toml writes the second, ran the first without a word. It is refused now, saying the
    second is kept out of the steps and giving the first as bash takes it back."""

    raw, literal = "fir\u200bst", "fir<U+200B>st"
    toml = own_step / "task.toml"
    text = toml.read_text().replace('name = "first"', 'name = "fir\\u200bst"')
    toml.write_text(text.replace('name = "second"', f'name = "{literal}"'))
    (own_step / "steps" / "first").rename(own_step / "steps" / raw)
    (own_step / "steps" / "second").rename(own_step / "steps" / literal)
    refused = run_tool(env, "run", own_step, "--step", literal, "--case", "hello", "--json")
    no_traceback(refused)
    assert refused.returncode == 2 and "2 steps of multi-step read so" in refused.stderr, refused.stderr
    assert "\u200b" not in refused.stderr, refused.stderr
    assert f"[[steps]] name '{literal}', which Harbor refuses" in refused.stderr, refused.stderr
    word = refused.stderr.split("typed in bash as: ")[1].strip()
    typed = subprocess.run(["bash", "-c", f"printf %s {word}"], capture_output=True, text=True, check=True).stdout
    assert typed == raw, refused.stderr
    done = run_tool(env, "run", own_step, "--step", typed, "--case", "hello", "--json")
    assert json.loads(done.stdout)["step"] == raw, (
        done.stderr
    )  # a run, its expected.json missed: Harbor refuses the task
    tested = run_tool(env, "test", own_step.parent, "--step", literal)
    no_traceback(tested)
    assert tested.returncode == 2 and "2 steps of multi-step read so" in tested.stdout + tested.stderr, tested.stdout


def test_a_task_whose_verifiers_are_all_in_its_steps_is_run_with_step(env, own_step):
    (own_step / "steps" / "first" / "tests").mkdir()
    (own_step / "tests" / "verifier.py").rename(own_step / "steps" / "first" / "tests" / "verifier.py")
    done = run_tool(env, "run", own_step, "--case", "hello")
    assert done.returncode == 2
    assert "no verifier found" in done.stderr and "--step NAME looks in steps/NAME/tests too" in done.stderr
    done = run_tool(env, "run", own_step, "--case", "hello", "--step", "first", "--json")
    no_traceback(done)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["verifier"] == str(own_step / "steps" / "first" / "tests" / "verifier.py")


def test_test_and_explain_take_step(env, own_step):
    (own_step / "cases" / "hello" / "expected.json").write_text('{"rewards": {"reward": 0.5}}')
    done = run_tool(env, "test", own_step, "--step", "second")
    no_traceback(done)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "step second" in done.stdout
    explained = run_tool(env, "explain", own_step, "--step", "second", "--json")
    no_traceback(explained)
    assert json.loads(explained.stdout)["verifier"].endswith("steps/second/tests/verifier.py")


def test_test_job_refuses_step_and_the_tui_keeps_it_in_its_advice(env, own_step, tmp_path):
    assert HARBOR_REAL is not None
    job = tmp_path / "job"
    shutil.copytree(HARBOR_REAL / "jobs" / "multi-step", job, symlinks=True)
    done = run_tool(env, "test", job, "--step", "first")
    no_traceback(done)
    assert done.returncode == 2 and "--step: test replays every step of every trial" in done.stderr, done.stderr
    # The TUI without a terminal says what to run instead: with the step, else run would be tests/ alone.
    done = run_tool(env, own_step, "--step", "second")
    assert done.returncode == 2 and f"verifier-tui run {own_step} --step second`" in done.stderr, done.stderr
    done = run_tool(env, own_step, "--step", "third")
    assert done.returncode == 2 and "--step third: multi-step has no step 'third'" in done.stderr, done.stderr


def test_a_steps_own_task_data_is_what_its_verifier_gets(env, multi_step):
    """The shim passes /tests/task_data.json, which for a step is the step's own when it ships one."""
    (multi_step / "tests" / "task_data.json").write_text('{"weight": 1.0}')
    own = multi_step / "steps" / "second" / "tests"
    own.mkdir()
    (own / "task_data.json").write_text('{"weight": 0.25}')
    (own / "verifier.py").write_text("def verify(workspace, task_data):\n    return task_data['weight']\n")
    for chosen in (["--case", "hello"], []):
        done = run_tool(env, "run", multi_step, "--step", "second", "--json", *chosen)
        no_traceback(done)
        data = json.loads(done.stdout)
        assert data["rewards"] == {"reward": 0.25}, (chosen, data["stderr"])
        assert data["task_data"] == str(own / "task_data.json")


def test_watch_with_step_runs_again_on_a_save_of_the_steps_own_verifier(env, own_step):
    proc, reader = start_watch(env, own_step, "--case", "hello", "--step", "second")
    try:
        assert "reward 0.5" in reader.next_run()
        verifier = own_step / "steps" / "second" / "tests" / "verifier.py"
        verifier.write_text(verifier.read_text().replace("return 0.5", "return 0.75"))
        again = reader.next_run()
    finally:
        stop(proc)
    assert "reward 0.75" in again and " steps/second/" in again, again  # not tests/verifier.py


def test_watch_with_step_runs_again_on_a_save_of_a_tests_file_hard_linked_into_the_step(env, own_step):
    """steps/second/tests/verifier.py is a hard link of tests/verifier.py: a save through tests/
    changes what the step's run reads, though only tests/ saw the write."""
    linked = own_step / "steps" / "second" / "tests" / "verifier.py"
    linked.unlink()
    os.link(own_step / "tests" / "verifier.py", linked)
    proc, reader = start_watch(env, own_step, "--case", "hello", "--step", "second", "--json")
    try:
        assert json.loads(reader.next_run(prefix="{"))["rewards"] == {"reward": 1.0}
        saved = own_step / "tests" / "verifier.py"
        with saved.open("r+") as same_file:  # in place: the step's link sees the new text
            text = same_file.read().replace("return 1.0 if", "return 0.25 if")
            same_file.seek(0)
            same_file.write(text)
            same_file.truncate()
        again = json.loads(reader.next_run(prefix="{"))
    finally:
        stop(proc)
    assert linked.read_text() == saved.read_text()
    assert again["rewards"] == {"reward": 0.25}, again["stderr"]


def test_the_pytest_plugin_says_the_steps_note_in_its_own_words(pytester):
    """The plugin has no --step: its TaskNote names the command that takes it."""
    assert HARBOR_REAL is not None
    task = pytester.path / "tasks" / "multi-step"
    shutil.copytree(HARBOR_REAL / "tasks" / "multi-step", task, symlinks=True)
    (task / "cases" / "hello" / "workspace").mkdir(parents=True)
    (task / "cases" / "hello" / "workspace" / "hello.txt").write_text("hello world\n")
    (task / "cases" / "hello" / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    done = pytester.runpytest_subprocess(
        f"--verifier-python={PY}", "-p", "no:cacheprovider", "--verifier-cases", "tasks", timeout=300
    )
    done.assert_outcomes(passed=1, warnings=2)
    done.stdout.fnmatch_lines(
        ["*TaskNote: a multi-step task (*steps*: first, second)*verifier-tui test PATH --step NAME runs one step*"]
    )


def test_watch_with_step_reads_the_task_again_when_the_steps_tests_go(env, own_step):
    """The step's own tests are the task's /tests as much as tests/ is: deleting
    steps/second/tests/ leaves Harbor running tests/verifier.py, and so does watch."""
    proc, reader = start_watch(env, own_step, "--case", "hello", "--step", "second")
    try:
        assert "reward 0.5" in reader.next_run()
        shutil.rmtree(own_step / "steps" / "second" / "tests")
        again = reader.next_run()
    finally:
        stop(proc)
    assert "reward 1" in again and "could not stage" not in again, again


def test_watch_with_step_names_the_verifier_that_runs_once_the_steps_own_is_deleted(env, own_step):
    proc, reader = start_watch(env, own_step, "--case", "hello", "--step", "second", "--json")
    try:
        assert json.loads(reader.next_run(prefix="{"))["rewards"] == {"reward": 0.5}
        (own_step / "steps" / "second" / "tests" / "verifier.py").unlink()
        again = json.loads(reader.next_run(prefix="{"))
    finally:
        stop(proc)
    assert again["rewards"] == {"reward": 1.0}, again["stderr"]
    assert again["verifier"] == str(own_step / "tests" / "verifier.py")  # what ran, not the file deleted


def test_watch_with_step_sees_the_steps_tests_made_after_it_started(env, multi_step):
    proc, reader = start_watch(env, multi_step, "--case", "hello", "--step", "second", "--json")
    try:
        assert json.loads(reader.next_run(prefix="{"))["rewards"] == {"reward": 1.0}
        (multi_step / "steps" / "second" / "tests").mkdir()
        (multi_step / "steps" / "second" / "tests" / "verifier.py").write_text(STEP_VERIFIER)
        again = json.loads(reader.next_run(prefix="{"))
    finally:
        stop(proc)
    assert again["rewards"] == {"reward": 0.5}, again["stderr"]
    # the step's file is what /tests/verifier.py now is, and what is named
    assert again["verifier"] == str(multi_step / "steps" / "second" / "tests" / "verifier.py")
    # made for the first time: never there before, so not "re-created"
    assert again["trigger"].startswith("steps/second/tests created"), again["trigger"]


def test_watch_with_step_says_the_steps_tests_moved_away_and_back_re_created(env, own_step):
    """Moved away, the task is read again and watched anew without the folder: it was there when
    watch began all the same, so back it is "re-created", not "created"."""
    own = own_step / "steps" / "second" / "tests"
    proc, reader = start_watch(env, own_step, "--case", "hello", "--step", "second", "--json")
    try:
        assert json.loads(reader.next_run(prefix="{"))["rewards"] == {"reward": 0.5}
        own.rename(own_step / "aside")
        gone = json.loads(reader.next_run(prefix="{"))
        (own_step / "aside").rename(own)
        back = json.loads(reader.next_run(prefix="{"))
    finally:
        stop(proc)
    assert gone["trigger"].startswith("steps/second/tests deleted"), gone["trigger"]
    assert back["trigger"].startswith("steps/second/tests re-created"), back["trigger"]
    assert back["rewards"] == {"reward": 0.5}, back["stderr"]


def test_watch_with_step_says_so_once_task_toml_drops_the_step(env, own_step):
    """task.toml no longer naming the step --step chose: the run is the task's
    as it is now, tests/ with its [verifier], and one note says the --step went."""
    proc, reader = start_watch(env, own_step, "--case", "hello", "--step", "second", "--json")
    try:
        assert json.loads(reader.next_run(prefix="{"))["rewards"] == {"reward": 0.5}
        toml = own_step / "task.toml"
        toml.write_text(toml.read_text().split('[[steps]]\nname = "second"')[0])
        again = json.loads(reader.next_run(prefix="{"))
    finally:
        stop(proc)
    assert again["verifier"] == str(own_step / "tests" / "verifier.py"), again["notices"]
    assert again["rewards"] == {"reward": 1.0}, again["stderr"]
    notes = again["notices"]
    assert not [n for n in notes if "you chose" in n], notes  # --step chose it, the user did not
    said = [n for n in notes if "--step second" in n]
    assert len(said) == 1 and "task.toml no longer has it" in said[0], notes
    assert len([n for n in notes if "[[steps]]" in n or "this run is tests/" in n]) <= 1, notes


def _drop_second(task: Path) -> None:
    toml = task / "task.toml"
    toml.write_text(toml.read_text().split('[[steps]]\nname = "second"')[0])


@pytest.mark.parametrize("named", ["path", "bare"])
def test_watch_with_step_keeps_the_tests_verifier_the_user_named_once_task_toml_drops_the_step(env, own_step, named):
    """--verifier tests/verifier.py under --step second: /tests/verifier.py is the step's (Harbor uploads
    it last), so that is the run's; once task.toml drops the step the run is the file the user named, not
    the step's (a reload in between rewrote the pick to it, and the notes said 'the file you chose').
    Named bare (--verifier verifier.py, the short form), it is read again as a fresh run reads it: the step's
    while the step is there, tests/'s once it is gone (it stayed the step's, 'which you chose')."""
    mine = own_step / "tests" / "verifier.py"
    steps_own = own_step / "steps" / "second" / "tests" / "verifier.py"
    words = str(mine) if named == "path" else "verifier.py"
    proc, reader = start_watch(
        env, own_step, "--case", "hello", "--step", "second", "--verifier", words, "--json", cwd=own_step.parent
    )
    try:
        first = json.loads(reader.next_run(prefix="{"))
        steps_own.write_text(STEP_VERIFIER.replace("0.5", "0.25"))
        saved = json.loads(reader.next_run(prefix="{"))
        _drop_second(own_step)
        dropped = json.loads(reader.next_run(prefix="{"))
    finally:
        stop(proc)
    assert first["verifier"] == str(steps_own) and first["rewards"] == {"reward": 0.5}, first["notices"]
    assert saved["verifier"] == str(steps_own) and saved["rewards"] == {"reward": 0.25}, saved["notices"]
    assert dropped["verifier"] == str(mine) and dropped["rewards"] == {"reward": 1.0}, dropped["notices"]
    notes = dropped["notices"]
    assert not [n for n in notes if "you chose" in n], notes
    said = [n for n in notes if "--step second" in n]
    assert len(said) == 1 and "this run is tests/ with the task's [verifier]" in said[0], notes


def test_watch_with_step_says_the_steps_verifier_the_user_named_is_kept_once_task_toml_drops_it(env, own_step):
    """The user named the step's own verifier.py; task.toml then drops the step: it runs still (the user's
    pick), and the note no longer says the run is tests/ with the task's [verifier], which it is not."""
    steps_own = own_step / "steps" / "second" / "tests" / "verifier.py"
    proc, reader = start_watch(
        env, own_step, "--case", "hello", "--step", "second", "--verifier", str(steps_own), "--json"
    )
    try:
        assert json.loads(reader.next_run(prefix="{"))["rewards"] == {"reward": 0.5}
        _drop_second(own_step)
        dropped = json.loads(reader.next_run(prefix="{"))
    finally:
        stop(proc)
    assert dropped["verifier"] == str(steps_own) and dropped["rewards"] == {"reward": 0.5}, dropped["stderr"]
    notes = dropped["notices"]
    said = [n for n in notes if "--step second" in n]
    assert len(said) == 1 and "task.toml no longer has it" in said[0], notes
    assert "with the task's [verifier]" not in said[0] and "steps/second/tests/verifier.py" in said[0], notes
    assert not [n for n in notes if "this run is tests/ with the task's [verifier]" in n], notes


def _tests_alone_under_second(env, own_step) -> dict:
    """``run --step second --json`` of the case hello, the step's own tests not laid over tests/:
    tests/verifier.py ran, and scored 1.0 (the step's would score 0.5). Harbor refuses such a task
    (validate_input_tree: Input paths must stay within the task), so it exits 2, saying so."""
    done = run_tool(env, "run", own_step, "--case", "hello", "--step", "second", "--json")
    no_traceback(done)
    assert done.returncode == 2, done.stderr
    data = json.loads(done.stdout)
    assert "leads out of the task" in data["harbor_refuses_task"], data["harbor_refuses_task"]
    assert data["verifier"] == str(own_step / "tests" / "verifier.py") and data["rewards"] == {"reward": 1.0}
    return data


@pytest.mark.parametrize("linked", ["steps/second/tests", "steps", "steps/second"])
def test_a_step_whose_tests_lie_behind_a_link_out_of_the_task_names_that_link(env, own_step, tmp_path, linked):
    """steps/second/tests a link to a folder outside the task: --step second ran the verifier.py there
    silently (a sandbox has nothing there), where a linked tests/verifier.py is refused and said. With
    steps (or steps/second) the link, the note said steps/second/tests was 'a link to …', though ls shows
    it a plain folder; it names the link the user can make a folder of the task's own."""
    link = own_step / linked
    outside = tmp_path / "outside"
    link.rename(outside)
    link.symlink_to(outside)
    data = _tests_alone_under_second(env, own_step)
    said = [n for n in data["notices"] if "out of the task" in n and "Harbor would refuse" not in n]
    assert len(said) == 1 and said[0].startswith(f"{linked} is a link to {outside}, out of the task"), said
    assert "not laid over tests/" in said[0], said
    if linked != "steps/second/tests":  # the folder behind the link is no link itself
        assert "steps/second/tests is a link" not in said[0], said


def test_watch_with_step_does_not_watch_through_a_steps_tests_folder_linked_out_of_the_task(env, own_step, tmp_path):
    """steps/second/tests a link out of the task (to $HOME, say): it is not laid over tests/, yet the watch
    followed it, and every save there started a run (said as steps/second/tests/verifier.py). The link made
    a folder of the task's own is seen, and that step's tests run."""
    own = own_step / "steps" / "second" / "tests"
    outside = tmp_path / "outside"
    own.rename(outside)
    own.symlink_to(outside)
    proc, reader = start_watch(env, own_step, "--case", "hello", "--step", "second", "--json")
    try:
        first = json.loads(reader.next_run(prefix="{"))
        for reward in ("0.3", "0.4"):
            (outside / "verifier.py").write_text(STEP_VERIFIER.replace("0.5", reward))
            time.sleep(1.0)
        own.unlink()
        own.mkdir()
        (own / "verifier.py").write_text(STEP_VERIFIER.replace("0.5", "0.25"))
        made = json.loads(reader.next_run(prefix="{"))
    finally:
        stop(proc)
    assert first["verifier"] == str(own_step / "tests" / "verifier.py"), first["notices"]
    assert made["verifier"] == str(own / "verifier.py") and made["rewards"] == {"reward": 0.25}, made["notices"]


def test_no_verifier_on_a_multi_step_task_without_step_tests_says_nothing_of_step(env, multi_step):
    """--step NAME finds nothing more where no step has its own tests: the hint would send the user nowhere."""
    (multi_step / "tests" / "verifier.py").unlink()
    done = run_tool(env, "run", multi_step, "--case", "hello")
    no_traceback(done)
    assert done.returncode == 2 and "no verifier found" in done.stderr, done.stderr
    assert "--step" not in done.stderr, done.stderr


def test_no_verifier_with_step_says_the_steps_verifier_is_a_link(env, multi_step, tmp_path):
    (multi_step / "tests" / "verifier.py").unlink()
    own = multi_step / "steps" / "first" / "tests"
    own.mkdir()
    (tmp_path / "elsewhere.py").write_text("def verify(workspace):\n    return 1.0\n")
    (own / "verifier.py").symlink_to(tmp_path / "elsewhere.py")
    done = run_tool(env, "run", multi_step, "--case", "hello", "--step", "first")
    no_traceback(done)
    assert done.returncode == 2 and "no verifier found" in done.stderr, done.stderr
    assert f"steps/first/tests/verifier.py is a link to {tmp_path / 'elsewhere.py'}" in done.stderr, done.stderr


def test_the_step_is_in_every_document_and_the_junit_report(env, own_step, tmp_path):
    """The header says `step second`: so do run, explain and test --json (null without --step) and JUnit."""
    (own_step / "cases" / "hello" / "expected.json").write_text('{"rewards": {"reward": 0.5}}')
    ran = json.loads(run_tool(env, "run", own_step, "--case", "hello", "--step", "second", "--json").stdout)
    assert ran["step"] == "second"
    assert json.loads(run_tool(env, "run", own_step, "--case", "hello", "--json").stdout)["step"] is None
    explained = json.loads(run_tool(env, "explain", own_step, "--step", "second", "--json").stdout)
    assert explained["step"] == "second"
    assert json.loads(run_tool(env, "explain", own_step, "--json").stdout)["step"] is None
    junit = tmp_path / "report.xml"
    done = run_tool(env, "test", own_step, "--step", "second", "--json", "--junit", junit)
    assert done.returncode == 0, done.stdout + done.stderr
    tested = json.loads(done.stdout)
    assert [t["step"] for t in tested["tasks"]] == ["second"] and tested["cases"][0]["step"] == "second"
    suite = ET.parse(junit).getroot()
    assert [p.get("value") for p in suite.iter("property") if p.get("name") == "step"] == ["second"]
    plain = tmp_path / "plain.xml"
    tested = json.loads(run_tool(env, "test", own_step, "--json", "--junit", plain).stdout)
    assert [t["step"] for t in tested["tasks"]] == [None]
    assert not [p for p in ET.parse(plain).getroot().iter("property") if p.get("name") == "step"]


def test_a_tests_verifier_named_under_step_says_the_steps_own_runs_in_its_place(env, own_step):
    """--verifier tests/verifier.py --step second: /tests/verifier.py is the step's own (Harbor uploads
    steps/second/tests over tests/), so that file ran, and nothing said the file named was not the one
    run; a note says so."""
    mine = own_step / "tests" / "verifier.py"
    done = run_tool(env, "run", own_step, "--case", "hello", "--step", "second", "--verifier", str(mine), "--json")
    no_traceback(done)
    data = json.loads(done.stdout)
    assert data["verifier"] == str(own_step / "steps" / "second" / "tests" / "verifier.py")
    said = [n for n in data["notices"] if "tests/verifier.py" in n and "steps/second/tests/verifier.py" in n]
    assert len(said) == 1, data["notices"]
    assert "under --step second" in said[0] and "runs in its place" in said[0], said
    plain = run_tool(env, "run", own_step, "--case", "hello", "--step", "second")
    assert "runs in its place" not in plain.stdout, plain.stdout  # not named: nothing was put in its place


def test_a_case_saved_under_step_says_it_records_no_step_and_how_to_check_it(env, own_step):
    """--save-case under --step second: the case's expected.json is the step's verdict, yet the case
    holds nothing of the step, so `test` (no --step) checks it against tests/ and fails it. The case
    files have no place for a step (expected.json takes rewards, tolerance, exit_code): the save says
    so, and names the command that checks it as it ran."""
    done = run_tool(env, "run", own_step, "--case", "hello", "--step", "second", "--save-case", "halved")
    no_traceback(done)
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stdout.splitlines() if "records no step" in line]
    assert len(said) == 1 and "--step second" in said[0], done.stdout
    data = json.loads(
        run_tool(env, "run", own_step, "--case", "hello", "--step", "second", "--save-case", "other", "--json").stdout
    )
    assert [n for n in data["saved_case"]["notes"] if "records no step" in n], data["saved_case"]
    checked = run_tool(env, "test", own_step, "--step", "second", "--case", "halved")
    assert checked.returncode == 0, checked.stdout + checked.stderr  # what the note sends the user to run
    plain = run_tool(env, "run", own_step, "--case", "hello", "--save-case", "plain")
    assert "records no step" not in plain.stdout, plain.stdout


def test_test_of_a_folder_accounts_for_the_tasks_without_the_step_and_passes_on_the_others(env, own_step, tmp_path):
    """test FOLDER --step second over tasks some of which have no step second: each such task failed the
    whole command (exit 1, a JUnit failure, under --json `errors`), though --step named nothing wrong in
    it. Each is a row saying why it was not tested, a skipped JUnit test and `without_step` in --json;
    the exit is the tested tasks'. No task having the step is one line, exit 2."""
    (own_step / "cases" / "hello" / "expected.json").write_text('{"rewards": {"reward": 0.5}}')
    folder = tmp_path / "tasks"
    folder.mkdir()
    own_step.rename(folder / "multi-step")
    plain = folder / "plain"
    shutil.copytree(folder / "multi-step", plain, symlinks=True)
    toml = plain / "task.toml"
    toml.write_text(toml.read_text().split("[[steps]]")[0])
    (plain / "instruction.md").write_text("Say hello.\n")  # a single-step task has one, or Harbor refuses it
    done = run_tool(env, "test", folder, "--step", "second")
    no_traceback(done)
    assert done.returncode == 0, done.stdout + done.stderr
    said = [line for line in done.stdout.splitlines() if "plain" in line]
    assert len(said) == 1 and "not tested: --step second: plain has no [[steps]]" in said[0], done.stdout
    assert done.stdout.splitlines()[-1] == "1 passed, 0 failed, 1 task without step second", done.stdout
    junit = tmp_path / "report.xml"
    data = json.loads(run_tool(env, "test", folder, "--step", "second", "--json", "--junit", junit).stdout)
    assert data["errors"] == [] and data["passed"] == 1, data
    assert [(t["task"], t["reason"]) for t in data["without_step"]] == [
        ("plain", "--step second: plain has no [[steps]] in its task.toml (Harbor verifies it as one)")
    ]
    suite = ET.parse(junit).getroot()
    assert suite.get("failures") == "0" and suite.get("skipped") == "1", ET.tostring(suite)
    none = run_tool(env, "test", folder, "--step", "third")
    no_traceback(none)
    assert none.returncode == 2 and none.stdout == "", none.stdout
    assert len(none.stderr.strip().splitlines()) == 1 and "step 'third'" in none.stderr, none.stderr


def test_a_steps_tests_that_is_a_link_to_nothing_is_said(env, own_step, tmp_path):
    """steps/second/tests a link to nothing (its folder moved away): Harbor uploads a step's tests only when
    they exist, so tests/ alone is /tests, and so it was here, without a word, where a link out of the task is
    said. The note names the link and that nothing of the step's is laid over tests/."""
    own = own_step / "steps" / "second" / "tests"
    shutil.rmtree(own)
    own.symlink_to(tmp_path / "moved-away")
    data = _tests_alone_under_second(env, own_step)
    said = [n for n in data["notices"] if "steps/second/tests" in n and "Harbor would refuse" not in n]
    assert len(said) == 1, data["notices"]
    assert said[0].startswith(f"steps/second/tests is a link to {tmp_path / 'moved-away'}, which does not exist")
    assert "not laid over tests/" in said[0], said


def test_watch_names_a_steps_tests_link_made_a_folder_by_its_own_path(env, own_step, tmp_path):
    """steps/second/tests a link out of the task, then made a folder of the task's own: watch's line
    said the run was for a change to `tests`, which reads as the task's tests/ folder, untouched."""
    own = own_step / "steps" / "second" / "tests"
    outside = tmp_path / "outside"
    own.rename(outside)
    own.symlink_to(outside)
    proc, reader = start_watch(env, own_step, "--case", "hello", "--step", "second")
    try:
        reader.next_run()
        own.unlink()
        own.mkdir()
        (own / "verifier.py").write_text(STEP_VERIFIER.replace("0.5", "0.25"))
        made = reader.next_run()
    finally:
        stop(proc)
    assert "reward 0.25" in made, made
    assert " steps/second/tests" in made and "  tests " not in made, made


def test_a_case_pattern_naming_a_task_without_the_step_says_why_it_matches_nothing(env, own_step, tmp_path):
    """test FOLDER --step second --case plain::hello, plain having no step second: `matches no case (cases:
    multi-step::hello)` sent the user looking for a case that is there; the line says the task was passed over."""
    folder = tmp_path / "tasks"
    folder.mkdir()
    own_step.rename(folder / "multi-step")
    plain = folder / "plain"
    shutil.copytree(folder / "multi-step", plain, symlinks=True)
    (plain / "task.toml").write_text((plain / "task.toml").read_text().split("[[steps]]")[0])
    (plain / "instruction.md").write_text("Say hello.\n")
    done = run_tool(env, "test", folder, "--step", "second", "--case", "plain::hello")
    no_traceback(done)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip().splitlines() == [
        "verifier-tui: --case plain::hello matches no case (cases: multi-step::hello; "
        "not tested, without step second: plain)"
    ], done.stderr


def test_both_modes_under_step_says_the_step_in_its_header(env, own_step):
    """run --both-modes --step second ran the step's own verifier in both modes, under a header
    `task multi-step · case hello · both modes` that said nothing of the step, as run's header does."""
    (own_step / "cases" / "hello" / "response.txt").write_text("hello\n")
    done = run_tool(env, "run", own_step, "--case", "hello", "--step", "second", "--both-modes")
    no_traceback(done)
    assert done.stdout.startswith("task multi-step · step second · case hello · both modes\n"), done.stdout
    plain = run_tool(env, "run", own_step, "--case", "hello", "--both-modes")
    assert plain.stdout.startswith("task multi-step · case hello · both modes\n"), plain.stdout


def test_audit_of_a_multi_step_task_says_it_probes_tests_not_a_step(env, multi_step):
    """audit takes no --step: its probes run tests/ with the task's [verifier], which Harbor never runs as
    such on a multi-step task, and nothing said so (run, test and explain do). The note is said, naming
    the command that runs one step, since audit has no --step. In audit's words: it said 'this run is tests/',
    where audit runs no one run but its probes."""
    done = run_tool(env, "audit", multi_step)
    no_traceback(done)
    note = _steps_note([line for line in done.stdout.splitlines() if line.startswith("note:")])
    assert "first, second" in note and "steps/<name>/tests over tests/" in note, note
    assert "this run is" not in note and "audit's probes run tests/ with the task's [verifier]" in note, note
    assert "verifier-tui test PATH --step NAME runs one step as Harbor would" in note, note


def test_a_case_saved_under_step_follows_the_steps_own_task_data(env, multi_step):
    """--save-case under --step second, the step shipping its own task_data.json: the case got a copy of
    it, so an edit of the step's task data later went unseen by that case (its own copy wins), where the
    task-wide task data is left for every case to find. The step's is the task-wide one under the step."""
    own = multi_step / "steps" / "second" / "tests"
    own.mkdir()
    (own / "task_data.json").write_text('{"weight": 0.25}')
    (own / "verifier.py").write_text("def verify(workspace, task_data):\n    return task_data['weight']\n")
    done = run_tool(env, "run", multi_step, "--case", "hello", "--step", "second", "--save-case", "quarter")
    no_traceback(done)
    assert done.returncode == 0, done.stderr
    assert not (multi_step / "cases" / "quarter" / "task_data.json").exists(), done.stdout
    (own / "task_data.json").write_text('{"weight": 0.75}')
    data = json.loads(run_tool(env, "run", multi_step, "--case", "quarter", "--step", "second", "--json").stdout)
    assert data["rewards"] == {"reward": 0.75} and data["task_data"] == str(own / "task_data.json"), data


def test_step_on_a_task_harbor_would_refuse_says_that_not_that_it_has_no_steps(env, own_step, tmp_path):
    """--step second on a task whose task.toml is not TOML: `has no [[steps]] in its task.toml (Harbor verifies
    it as one)`, where Harbor verifies it not at all (it refuses to load it), and test FOLDER passed over it as a
    task of one verifier. The line says Harbor would refuse it."""
    toml = own_step / "task.toml"
    toml.write_text(toml.read_text() + "this is not toml [\n")
    done = run_tool(env, "run", own_step, "--step", "second")
    no_traceback(done)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "has no [[steps]]" not in done.stderr and "Harbor would refuse" in done.stderr, done.stderr
    assert "--step second" in done.stderr, done.stderr


def test_watch_says_under_the_run_that_task_toml_dropped_the_step(env, own_step):
    """watch --step second (text), task.toml then drops step second: the next run is tests/ with the task's
    [verifier] and scored otherwise (0.5 to 1), with not a word why; --json had the note. The note is said
    under that run, as watch says a run's other new notes."""
    proc, reader = start_watch(env, own_step, "--case", "hello", "--step", "second")
    try:
        assert "reward 0.5" in reader.next_run()
        _drop_second(own_step)
        dropped = reader.next_run()
        under = reader.next(10.0)
    finally:
        stop(proc)
    assert "reward 1" in dropped, dropped
    assert under.strip().startswith("note: --step second: task.toml no longer has it"), under


def test_watch_says_a_step_is_dropped_because_task_toml_is_not_toml_not_that_it_has_no_steps(env, own_step):
    """watch --step second, task.toml then saved half-written (not TOML): the note under the run said
    `task.toml no longer has it (no [[steps]])`, where the file still lists the step and only cannot be
    read; `run --step second` on the same file says its steps cannot be read."""
    toml = own_step / "task.toml"
    proc, reader = start_watch(env, own_step, "--case", "hello", "--step", "second")
    try:
        assert "reward 0.5" in reader.next_run()
        toml.write_text(toml.read_text() + "this is not toml [\n")
        reader.next_run()
        notes = [reader.next(10.0) for _ in range(2)]  # the refusal, which the task's note says whole, and the step
    finally:
        stop(proc)
    assert sum("Harbor would refuse" in n for n in notes) == 1, notes
    dropped = [n for n in notes if "--step second" in n]
    assert len(dropped) == 1, notes
    assert "no [[steps]]" not in dropped[0] and "its steps cannot be read" in dropped[0], dropped


@pytest.mark.parametrize("lacks", ["folder", "instruction"])
def test_a_step_renamed_in_task_toml_alone_is_a_task_harbor_refuses(env, own_step, lacks):
    """task.toml's step `second` renamed `2nd`, its folder left as steps/second (or the step's
    instruction.md deleted): every run scored as before, where Harbor's Task refuses to load the
    task (FileNotFoundError: Step directory not found, Step instruction not found), every step's
    trial with it. Each face says Harbor would refuse it, naming the step, and exits 2."""
    toml = own_step / "task.toml"
    if lacks == "folder":
        toml.write_text(toml.read_text().replace('name = "second"', 'name = "2nd"'))
        missing, step = "has no folder steps/2nd/", "2nd"
    else:
        (own_step / "steps" / "second" / "instruction.md").unlink()
        missing, step = "has no steps/second/instruction.md", "second"
    done = run_tool(env, "run", own_step, "--case", "hello", "--step", "first", "--json")
    no_traceback(done)
    assert done.returncode == 2, done.stdout + done.stderr
    assert missing in json.loads(done.stdout)["harbor_refuses_task"], done.stdout
    tested = run_tool(env, "test", own_step, "--step", step)
    no_traceback(tested)
    assert tested.returncode == 2, tested.stdout + tested.stderr
    said = tested.stdout + tested.stderr
    assert "Harbor would refuse" in said and missing in said and "hello: not run" in said, said


def test_watch_runs_again_when_a_renamed_steps_folder_is_renamed_too(env, own_step):
    """watch --step first, step `second` renamed `2nd` in task.toml (Harbor refuses the task: no
    steps/2nd/), then the folder renamed to match (`mv steps/second steps/2nd`): nothing ran, so
    the last line said Harbor would refuse the task until some other file was saved. The step's
    folder made (or its instruction.md removed) runs again, as task.toml's own edit does."""
    toml = own_step / "task.toml"
    proc, reader = start_watch(env, own_step, "--case", "hello", "--step", "first")
    try:
        assert "reward 1" in reader.next_run()
        toml.write_text(toml.read_text().replace('name = "second"', 'name = "2nd"'))
        assert "Harbor would refuse" in reader.next_run()
        (own_step / "steps" / "second").rename(own_step / "steps" / "2nd")
        fixed = reader.next_run()
        (own_step / "steps" / "2nd" / "instruction.md").unlink()
        removed = reader.next_run()
    finally:
        stop(proc)
    assert "reward 1" in fixed and "steps/2nd" in fixed, fixed
    assert "Harbor would refuse" in removed and "deleted" in removed, removed


def test_watch_runs_again_when_a_steps_folder_is_made_without_its_instruction_yet(env, multi_step):
    """watch --step first, a step `third` added to task.toml (Harbor refuses: no steps/third/), then
    `mkdir steps/third`: nothing ran, so the last note went on saying the folder is missing, where
    Harbor now refuses the task for its missing instruction.md. The folder made runs, said as created."""
    toml = multi_step / "task.toml"
    proc, reader = start_watch(env, multi_step, "--case", "hello", "--step", "first")
    try:
        assert "reward 1" in reader.next_run()
        toml.write_text(toml.read_text() + '\n[[steps]]\nname = "third"\n')
        assert "Harbor would refuse" in reader.next_run()
        assert "has no folder steps/third/" in reader.next(10.0)
        (multi_step / "steps" / "third").mkdir()
        made = reader.next_run()
        said = reader.next(10.0)
    finally:
        stop(proc)
    assert "steps/third created" in made and "Harbor would refuse" in made, made
    assert "has no steps/third/instruction.md (Step instruction not found)" in said, said


def test_a_steps_own_runner_is_the_one_runner_task_runs_and_the_header_compares(env, own_step):
    """A step shipping its own steps/second/tests/.ng/run_verifier.py, which Harbor uploads over
    tests/ (so the sandbox runs it for that step): `--runner task` ran the task's tests/.ng/run_verifier.py,
    and the header compared verifier-tui's runner with that one, never with the step's."""
    from verifier_tui.runner_source import runner_path

    ng = own_step / "steps" / "second" / "tests" / ".ng"
    ng.mkdir()
    (ng / "run_verifier.py").write_text(
        'import sys\nsys.stderr.write("the step\'s own runner\\n")\n' + runner_path().read_text()
    )
    shutil.copy(runner_path(), own_step / "tests" / ".ng" / "run_verifier.py")  # the task's is ours
    ran = run_tool(env, "run", own_step, "--case", "hello", "--step", "second", "--runner", "task", "--json")
    no_traceback(ran)
    data = json.loads(ran.stdout)
    assert "the step's own runner" in data["stderr"] and data["rewards"] == {"reward": 0.5}, data["stderr"]
    ours = json.loads(run_tool(env, "run", own_step, "--case", "hello", "--step", "second", "--json").stdout)
    differs = [n for n in ours["notices"] if "ships its own runner" in n]
    assert len(differs) == 1 and "steps/second/tests/.ng/run_verifier.py" in differs[0], ours["notices"]


@pytest.mark.parametrize("shape", ["link", "too big"])
def test_a_steps_runner_that_is_no_file_of_its_own_is_no_runner_not_the_tasks(env, own_step, shape):
    """steps/second/tests/.ng/run_verifier.py a link (to the step's real.py) or too big to read: the step
    offered no runner, so --runner task fell back to the task's tests/.ng/run_verifier.py and said it ran
    the task's own, where Harbor uploads the step's file over tests/'s and the sandbox never runs that one."""
    from verifier_tui.runner_source import runner_path

    ours = runner_path().read_text()
    (own_step / "tests" / ".ng" / "run_verifier.py").write_text('import sys\nprint("TASK RUNNER RAN")\n' + ours)
    ng = own_step / "steps" / "second" / "tests" / ".ng"
    ng.mkdir()
    if shape == "link":
        (ng / "real.py").write_text('import sys\nprint("STEP RUNNER RAN")\n' + ours)
        (ng / "run_verifier.py").symlink_to("real.py")
    else:
        (ng / "run_verifier.py").write_text("# " + "x" * (5 * 1024 * 1024) + "\n" + ours)
    done = run_tool(env, "run", own_step, "--case", "hello", "--step", "second", "--runner", "task")
    no_traceback(done)
    assert done.returncode != 0 and "RUNNER RAN" not in done.stdout + done.stderr, done.stdout + done.stderr
    (line,) = done.stderr.splitlines()
    assert "ships no runner of its own (steps/second/tests/.ng/run_verifier.py" in line, line
    assert ("is a link to real.py" if shape == "link" else "more than the 4 MB this tool reads") in line, line
    # the header compares ours with no runner: the task's tests/.ng one is not what the sandbox runs for the step
    ours_run = json.loads(run_tool(env, "run", own_step, "--case", "hello", "--step", "second", "--json").stdout)
    assert not [n for n in ours_run["notices"] if "ships its own runner" in n], ours_run["notices"]


@pytest.fixture
def refused_beside(multi_step, tmp_path) -> Path:
    """A folder holding a task Harbor would refuse (``bad``: 4 cases, no [[steps]]) and the multi-step task."""
    folder = tmp_path / "k"
    folder.mkdir()
    bad = copy_example("hello-file", folder / "bad")
    toml = bad / "task.toml"
    toml.write_text(toml.read_text().replace('version = "1.0"', "version = 1", 1))
    multi_step.rename(folder / "ms")
    return folder


def test_a_refused_task_below_a_folder_is_refused_with_its_cases_under_step(env, refused_beside):
    """test FOLDER --step first over a task Harbor would refuse (and which has no step first): the
    session raised before the task's cases were read, so the row listed none of them, the summary lost
    '4 cases not run', --json said harbor_refuses_task null and problem '--step first: ...', the exit went
    from 2 to 1 and --case bad::correct matched no case. It is refused as it is without --step."""
    plain = run_tool(env, "test", refused_beside)
    assert plain.returncode == 2, plain.stdout + plain.stderr
    done = run_tool(env, "test", refused_beside, "--step", "first")
    no_traceback(done)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "4 cases not run" in done.stdout.splitlines()[-1], done.stdout
    assert "correct: not run (its task is not tested)" in done.stdout, done.stdout
    data = json.loads(run_tool(env, "test", refused_beside, "--step", "first", "--json").stdout)
    (error,) = data["errors"]
    assert error["problem"].startswith("Harbor would refuse to run this task: version = 1"), error
    assert len(error["not_run"]) == 4, error
    bad = next(t for t in data["tasks"] if t["name"] == "bad")
    assert bad["harbor_refuses_task"] is not None, bad
    asked = run_tool(env, "test", refused_beside, "--step", "first", "--case", "bad::correct")
    no_traceback(asked)
    assert asked.returncode == 2 and "matches no case" not in asked.stderr, asked.stdout + asked.stderr


def test_step_on_a_refused_task_names_the_steps_it_read(env, refused_beside):
    """--step on a task Harbor would refuse said `its steps cannot be read` whatever the refusal: of a
    multi-step task whose steps first and second were read (named neither), and of a task without
    [[steps]] (as if they were broken). It names the steps read, or says there are none; `cannot be
    read` stays for a task.toml that is not TOML (the test above)."""
    ms = refused_beside / "ms"
    toml = ms / "task.toml"
    toml.write_text(toml.read_text().replace('version = "1.0"', "version = 1", 1))
    third = run_tool(env, "run", ms, "--step", "third")
    no_traceback(third)
    assert third.returncode == 2, third.stdout + third.stderr
    assert "Harbor would refuse to run this task: version = 1" in third.stderr, third.stderr
    assert "cannot be read" not in third.stderr and "(steps: first, second)" in third.stderr, third.stderr
    first = run_tool(env, "run", refused_beside / "bad", "--step", "first")
    no_traceback(first)
    assert first.returncode == 2, first.stdout + first.stderr
    assert "cannot be read" not in first.stderr and "bad has no [[steps]]" in first.stderr, first.stderr
    assert "Harbor verifies it as one" not in first.stderr, first.stderr  # Harbor would not load it


def test_a_folder_whose_task_with_the_step_has_no_case_says_so_not_that_no_task_has_it(env, multi_step, tmp_path):
    """test FOLDER --step first where the one task with step first has no case and the other has no
    [[steps]]: `--step first: no task found has it: hf has no [[steps]]...`, false (ms has it) and hiding
    the real reason. The line names both: the task with the step and no case, and the one without it."""
    folder = tmp_path / "g2"
    folder.mkdir()
    copy_example("hello-file", folder / "hf")
    shutil.rmtree(multi_step / "cases")
    multi_step.rename(folder / "ms")
    done = run_tool(env, "test", folder, "--step", "first")
    no_traceback(done)
    assert done.returncode == 2 and done.stdout == "", done.stdout + done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "no task found has it:" not in line, line
    assert "ms has it (make one with verifier-tui run TASK --save-case NAME" in line, line
    assert "not tested, without it: hf has no [[steps]]" in line, line
    none = run_tool(env, "test", folder, "--step", "third")  # no task has step third: said as it was
    assert none.returncode == 2 and "--step third: no task found has it: hf has no [[steps]]" in none.stderr


def test_the_tasks_without_the_step_are_listed_as_far_as_the_cases_are(env, multi_step, tmp_path):
    """`no task found has it: ...` and --case's `not tested, without step first: ...` named every task
    found without the step: below a folder of hundreds of tasks, one line of thousands of characters.
    They are cut where the list of cases is (20 shown), saying how many there are in all."""
    folder = tmp_path / "many"
    folder.mkdir()
    for index in range(25):
        copy_example("hello-file", folder / f"plain-{index:02}")
    none = run_tool(env, "test", folder, "--step", "first")
    no_traceback(none)
    assert none.returncode == 2, none.stdout + none.stderr
    assert none.stderr.count("has no [[steps]]") == 20 and " and 5 more" in none.stderr, none.stderr
    multi_step.rename(folder / "ms")
    asked = run_tool(env, "test", folder, "--step", "first", "--case", "nope")
    no_traceback(asked)
    assert asked.returncode == 2, asked.stdout + asked.stderr
    passed_over = asked.stderr.split("without step first: ")[1]
    assert passed_over.count("plain-") == 20 and " and 5 more" in passed_over, asked.stderr


def test_watch_says_each_time_task_toml_drops_the_step_and_when_it_has_it_again(env, own_step):
    """watch --step second: task.toml drops the step (the note said), gets it back (nothing said), drops it
    again: run #4 was tests/ again, scored otherwise, with no word why, since each note was said once a
    session. A note new since the run before is said, and the step back is said too."""
    toml = own_step / "task.toml"
    whole = toml.read_text()
    proc, reader = start_watch(env, own_step, "--case", "hello", "--step", "second")
    try:
        assert "reward 0.5" in reader.next_run()
        _drop_second(own_step)
        assert "reward 1" in reader.next_run()
        assert "task.toml no longer has it" in reader.next(10.0)
        toml.write_text(whole)
        assert "reward 0.5" in reader.next_run()
        back = reader.next(10.0)
        _drop_second(own_step)
        again = reader.next_run()
        under = reader.next(10.0)
    finally:
        stop(proc)
    assert back.strip().startswith("note: --step second: task.toml has it again"), back
    # what /tests is for the step, in the words of the TUI's S list (one function says it for both)
    assert back.rstrip().endswith("(/tests is steps/second/tests laid over tests/)"), back
    assert "reward 1" in again, again
    assert under.strip().startswith("note: --step second: task.toml no longer has it"), under


def test_watch_says_what_tests_is_for_a_step_back_without_tests_of_its_own_as_s_does(env, multi_step):
    """Step first has no steps/first/tests: the note of its coming back says /tests as S's list says it."""
    toml = multi_step / "task.toml"
    whole = toml.read_text()
    proc, reader = start_watch(env, multi_step, "--case", "hello", "--step", "first")
    try:
        assert "reward 1" in reader.next_run()
        toml.write_text(whole.split('[[steps]]\nname = "first"')[0] + '[[steps]]\nname = "second"\n')
        reader.next_run()
        assert "task.toml no longer has it" in reader.next(10.0)
        toml.write_text(whole)
        reader.next_run()
        back = reader.next(10.0)
    finally:
        stop(proc)
    assert back.strip().startswith("note: --step first: task.toml has it again"), back
    assert back.rstrip().endswith("(/tests is tests/ alone: the step has no tests of its own)"), back


def test_a_steps_tests_nested_past_pythons_recursion_limit_are_one_line(env, own_step):
    """A step's own tests/ holding 1,100 folders one inside the other: laying them over tests/ walked
    them with os.walk, which recurses a folder at a time, and `run --step` ended in a RecursionError
    traceback, where tests/ itself nested as deep is refused in a line."""
    tests = own_step / "steps" / "second" / "tests"
    with nested_folders(tests):
        done = run_tool(env, "run", own_step, "--case", "hello", "--step", "second")
    no_traceback(done)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "the step's own tests folder could not be copied whole: folders nested too deep to copy" in (
        done.stdout + done.stderr
    )
