"""``verifier-tui test TASK --watch``, as a user runs it: the real console script
in a subprocess on private copies of the examples, the files saved as an
editor would, Ctrl+C sent as a terminal sends it. Every wait is bounded; no
assertion is about how long anything took."""

from __future__ import annotations

import json
import os
import queue
import select
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.helpers.commands import (
    TOOL,
    LineReader,
    documented_fields,
    run_tool,
    signal_when,
    start_in_terminal,
)
from tests.helpers.harbor import make_job
from tests.helpers.processes import SAY_STARTED, has_started, processes_with, wait_none_with
from tests.helpers.tasks import HANG_GUARD_S, PY, Gate, copy_example, make_task


def start(env, *args) -> tuple[subprocess.Popen, LineReader]:
    proc = subprocess.Popen(
        [*TOOL, "test", *map(str, args), "--watch", "--python", PY],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    return proc, LineReader(proc.stdout)


def interrupt(proc: subprocess.Popen) -> tuple[int, str]:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=HANG_GUARD_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail("test --watch did not stop on SIGINT")
    return proc.returncode, proc.stderr.read()


def round_lines(reader: LineReader) -> list[str]:
    """A round's text: from its heading to its summary line."""
    lines = [reader.next_run(HANG_GUARD_S, prefix="── round")]
    while "passed, " not in lines[-1]:
        lines.append(reader.next(HANG_GUARD_S))
    return lines


def test_every_case_again_on_a_save_of_the_verifier(env, example):
    task = example("hello-file")
    (task / "cases" / "wrong-text" / "expected.json").unlink()
    proc, reader = start(env, task)
    try:
        first = round_lines(reader)
        verifier = task / "tests" / "verifier.py"
        verifier.write_text(verifier.read_text().replace("return 1.0 if", "return 0.5 if"))
        second = round_lines(reader)
    finally:
        code, stderr = interrupt(proc)
    assert code == 0 and "Traceback" not in stderr, stderr
    assert "round 1 · start" in first[0]
    assert first[-1] == "3 passed, 0 failed, 1 not judged"
    assert any(line.startswith("✓  correct") for line in first)
    assert "round 2 · tests/verifier.py" in second[0]
    assert any(line.startswith("✗  correct") and '{"reward": 0.5}' in line for line in second)
    assert second[-1] == "2 passed, 1 failed, 1 not judged"
    assert any("·  wrong-text: not judged: it has no expected.json" in line for line in second)
    assert list(Path(env["TMPDIR"]).iterdir()) == [], "the scratch folder outlived the command"


def test_json_lines_one_document_a_round_and_another_cases_workspace_counts(env, example):
    """The session's own case is the first; a save in the last case's workspace runs a round too."""
    task = example("hello-file")
    proc, reader = start(env, task, "--json")
    try:
        first = json.loads(reader.next_run(HANG_GUARD_S, prefix="{"))
        (task / "cases" / "wrong-text" / "workspace" / "hello.txt").write_text("hello world\n")
        second = json.loads(reader.next_run(HANG_GUARD_S, prefix="{"))
        (task / "cases" / "wrong-text" / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
        third = json.loads(reader.next_run(HANG_GUARD_S, prefix="{"))
    finally:
        code, stderr = interrupt(proc)
    assert code == 0 and "Traceback" not in stderr, stderr
    assert [first["round"], second["round"], third["round"]] == [1, 2, 3]
    assert first["trigger"] == "start" and (first["passed"], first["failed"]) == (4, 0)
    assert "hello.txt" in second["trigger"] and (second["passed"], second["failed"]) == (3, 1)
    wrong = next(case for case in second["cases"] if case["id"].endswith("::wrong-text"))
    assert wrong["rewards"] == {"reward": 1.0} and wrong["expected_matched"] is False
    assert "expected.json" in third["trigger"] and (third["passed"], third["failed"]) == (4, 0)
    assert set(first) == documented_fields("## The test document", "## The explain document") | documented_fields(
        "## The test --watch stream", "## Example"
    )


def slow_task(root: Path) -> Path:
    """A task whose one case says it started, then sleeps until ended."""
    task = make_task(
        root, "import time\n\ndef verify(workspace):\n" + textwrap.indent(SAY_STARTED, "    ") + "    time.sleep(300)\n"
    )
    (task / "cases" / "only" / "workspace").mkdir(parents=True)
    (task / "cases" / "only" / "expected.json").write_text('{"exit_code": 0}')
    return task


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes through /proc")
def test_ctrl_c_during_a_round_ends_it_cleanly(env, tmp_path):
    task = slow_task(tmp_path / "slow")
    scratch = env["TMPDIR"]
    proc, _reader = start(env, task)

    def ready() -> bool:
        return has_started(scratch) and bool(processes_with(scratch))

    code, stderr = signal_when(proc, ready, signal.SIGINT, "the verifier never started")
    assert code == 0 and "Traceback" not in stderr, stderr
    assert wait_none_with(scratch) == [], "the runner outlived the command"
    assert list(Path(scratch).iterdir()) == []


def save_once_started(proc: subprocess.Popen, env, task: Path) -> None:
    """Once the slow task's verifier runs, save a verifier that returns 1.0 at once."""
    deadline = time.monotonic() + HANG_GUARD_S
    while not has_started(env["TMPDIR"]):
        assert proc.poll() is None and time.monotonic() < deadline, "the verifier never started"
        time.sleep(0.05)
    (task / "tests" / "verifier.py").write_text("def verify(workspace):\n    return 1.0\n")


def test_a_save_during_a_round_supersedes_it(env, tmp_path):
    """The table shown is of the files as last saved: the round that ran the
    old verifier is ended, and the first table is the new one's."""
    task = slow_task(tmp_path / "slow")
    proc, reader = start(env, task, "--json")
    try:
        save_once_started(proc, env, task)
        first = json.loads(reader.next_run(HANG_GUARD_S, prefix="{"))
    finally:
        code, stderr = interrupt(proc)
    assert code == 0 and "Traceback" not in stderr, stderr
    assert first["round"] == 1 and first["trigger"].startswith("tests/verifier.py")
    assert first["cases"][0]["rewards"] == {"reward": 1.0}


def test_a_round_cut_short_by_a_save_says_so(env, tmp_path):
    """A round ended by a newer save vanished without a word: its table never
    came, and the next round's heading gave its number again."""
    task = slow_task(tmp_path / "slow")
    proc, reader = start(env, task)
    try:
        save_once_started(proc, env, task)
        cut = reader.next_run(HANG_GUARD_S, prefix="round cut short")
        table = round_lines(reader)
    finally:
        code, stderr = interrupt(proc)
    assert code == 0 and "Traceback" not in stderr, stderr
    assert cut == "round cut short (start): a file changed meanwhile, and every case runs again"
    assert "round 1 · tests/verifier.py" in table[0] and table[-1] == "1 passed, 0 failed"


@pytest.mark.parametrize(
    "extra, said",
    [
        (["--junit", "out.xml"], "--watch and --junit"),
        (["--coverage-report", "out.xml"], "--watch and --coverage"),
        ([], "not a Harbor job"),
    ],
    ids=["junit", "coverage", "harbor"],
)
def test_watch_refuses_in_one_line(env, tmp_path, example, extra, said):
    task = example("hello-file")
    path = task if extra else make_job(tmp_path / "runs" / "jobs" / "job", {"hello__abc": dict(task=task)})
    done = run_tool(env, "test", path, "--watch", *extra, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stdout == "" and len(done.stderr.strip().splitlines()) == 1 and said in done.stderr
    assert not (tmp_path / "out.xml").exists()


def read_until(fd: int, seen: bytes, wanted: bytes) -> bytes:
    """What the terminal shows, read until ``wanted`` is drawn (bounded)."""
    deadline = time.monotonic() + HANG_GUARD_S
    while wanted not in seen:
        assert time.monotonic() < deadline, seen[-2000:]
        if select.select([fd], [], [], 0.05)[0]:
            chunk = os.read(fd, 65536)
            assert chunk, seen[-2000:]
            seen += chunk
    return seen


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a pseudo-terminal")
def test_on_a_terminal_the_table_is_drawn_again_and_ctrl_c_ends_it(env, example):
    task = example("hello-file")
    pid, fd = start_in_terminal(env, ["test", str(task), "--watch", "--python", PY])
    try:
        seen = read_until(fd, b"", b"watching for changes; Ctrl+C stops")
        verifier = task / "tests" / "verifier.py"
        verifier.write_text(verifier.read_text().replace("return 1.0 if", "return 0.5 if"))
        seen = read_until(fd, seen, b"3 passed, 1 failed\r\nwatching for changes; Ctrl+C stops\r\n")
        os.write(fd, b"\x03")  # Ctrl+C, as the terminal sends it: SIGINT to the foreground group
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0
    second = seen.rsplit(b"\x1b[2J\x1b[H", 1)[1]  # what the screen shows after the last clear
    assert second.startswith(b"round 2 \xc2\xb7 tests/verifier.py") and b"round 1" not in second
    assert seen.count(b"\x1b[2J\x1b[H") == 2 and b"Traceback" not in seen


def test_several_tasks_a_round_names_the_task_saved(env, tmp_path):
    folder = tmp_path / "tasks"
    for name in ("hello-file", "sum-column"):
        copy_example(name, folder / name)
    proc, reader = start(env, folder, "--json")
    try:
        first = json.loads(reader.next_run(HANG_GUARD_S, prefix="{"))
        verifier = folder / "sum-column" / "tests" / "verifier.py"
        verifier.write_text(verifier.read_text() + "\n# saved\n")
        second = json.loads(reader.next_run(HANG_GUARD_S, prefix="{"))
    finally:
        code, stderr = interrupt(proc)
    assert code == 0 and "Traceback" not in stderr, stderr
    assert [task["name"] for task in first["tasks"]] == ["hello-file", "sum-column"]
    assert second["trigger"] == "sum-column: tests/verifier.py"
    assert second["passed"] == first["passed"] and second["failed"] == 0


def test_each_round_names_a_task_found_without_a_case(env, tmp_path):
    """As ``test`` without --watch: a task below the folder with no case is said
    in every round's text and document, never left out quietly."""
    folder = tmp_path / "tasks"
    copy_example("hello-file", folder / "hello-file")
    copy_example("plain-test-sh", folder / "plain-test-sh")
    proc, reader = start(env, folder)
    try:
        text = round_lines(reader)
    finally:
        code, stderr = interrupt(proc)
    assert code == 0 and "Traceback" not in stderr, stderr
    assert any("task plain-test-sh" in line and "not tested: it has no case" in line for line in text), text
    assert text[-1].endswith(", 1 task without a case"), text
    proc, reader = start(env, folder, "--json")
    try:
        first = json.loads(reader.next_run(HANG_GUARD_S, prefix="{"))
    finally:
        code, stderr = interrupt(proc)
    assert code == 0 and "Traceback" not in stderr, stderr
    assert [task["task"] for task in first["without_cases"]] == ["plain-test-sh"]


def test_a_round_names_a_file_of_any_case_by_its_path_in_the_task(env, example):
    """A file of the first case (the one the task's session chose) was named
    ``workspace/hello.txt``, as if there were no other case."""
    task = example("hello-file")
    proc, reader = start(env, task, "--json")
    try:
        json.loads(reader.next_run(HANG_GUARD_S, prefix="{"))
        (task / "cases" / "correct" / "workspace" / "hello.txt").write_text("hello world\n")
        second = json.loads(reader.next_run(HANG_GUARD_S, prefix="{"))
    finally:
        code, stderr = interrupt(proc)
    assert code == 0, stderr
    assert second["trigger"] == "cases/correct/workspace/hello.txt", second["trigger"]


def test_a_copy_round_that_writes_its_own_tests_is_not_run_for_ever(env, tmp_path):
    """In the copy sandbox (asked for), a verifier appending to a file of its tests/ saw its own
    write as a save: it superseded its own round, for ever, and no table was ever shown. Its write
    cannot be told from a save made during the round, so it runs one more round, made for that
    file alone, which writes it again: no round follows, and that is said once. A save of the
    user's own, after, still runs a round."""
    task = tmp_path / "t"
    data = task / "tests" / "data.txt"
    source = f"def verify(workspace):\n    open({str(data)!r}, 'a').write('x')\n    return 1.0\n"
    make_task(task, source, cases={"only": {}})
    (task / "cases" / "only" / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    data.write_text("")
    proc, reader = start(dict(env, VERIFIER_TUI_SANDBOX="copy"), task, "--json")
    try:
        first = json.loads(reader.next(HANG_GUARD_S))
        again = json.loads(reader.next(HANG_GUARD_S))
        with pytest.raises(queue.Empty):
            reader.next(within_s=2.0)  # well past the watcher's debounce: no round of its own write
        written = data.read_text()
        (task / "tests" / "verifier.py").write_text(source.replace("1.0", "0.5"))
        saved = json.loads(reader.next(HANG_GUARD_S))
    finally:
        code, stderr = interrupt(proc)
    assert code == 0 and "Traceback" not in stderr, stderr
    assert (first["round"], first["trigger"], again["trigger"], written) == (1, "start", "tests/data.txt", "xx")
    assert saved["round"] == 3 and saved["trigger"] == "tests/verifier.py"
    assert stderr.count("the run itself seems to write tests/data.txt") == 1, stderr


def json_round_where(reader: LineReader, wanted) -> dict:
    """The first round (``--json``) for which ``wanted(document)`` holds, within the guard."""
    deadline = time.monotonic() + HANG_GUARD_S
    while True:
        document = json.loads(reader.next_run(max(0.1, deadline - time.monotonic()), prefix="{"))
        if wanted(document):
            return document


def test_a_case_deleted_during_a_copy_round_runs_another(env, example, tmp_path):
    """In the copy sandbox (asked for), a case folder deleted while a round ran was taken for the
    round's own write: that round was the last, showing the case passed ("4 passed" of the 3
    cases left), and every case named the deletion as what the run wrote of the user's files."""
    task, gate = example("hello-file"), Gate(tmp_path / "gate")
    verifier = task / "tests" / "verifier.py"
    verifier.write_text(gate.verifier(verifier.read_text()))
    proc, reader = start(dict(env, VERIFIER_TUI_SANDBOX="copy"), task, "--json")
    try:
        assert json.loads(reader.next_run(HANG_GUARD_S, prefix="{"))["passed"] == 4
        gate.go.unlink()
        verifier.write_text(verifier.read_text() + "# saved\n")
        gate.wait_for_run(5)  # the second round's first case
        shutil.rmtree(task / "cases" / "wrong-case")
        gate.go.touch()
        cut = json_round_where(reader, lambda d: "wrong-case" in {c["case"] for c in d["cases"]})
        after = json_round_where(reader, lambda d: "wrong-case" not in {c["case"] for c in d["cases"]})
    finally:
        code, stderr = interrupt(proc)
    assert code == 0 and "Traceback" not in stderr, stderr
    assert (after["passed"], after["failed"]) == (3, 0)
    said = [n for c in cut["cases"] for n in c["notices"] if "wrong-case" in n]
    assert said and all(n.startswith("your own files changed while the run ran") for n in said), said
    assert all("by the run or by you" in n for n in said), said


def test_a_second_save_during_a_copy_round_runs_another(env, tmp_path):
    """In the copy sandbox (asked for), a save of the verifier while a round ran (a slow verifier)
    was taken for the round's own write: no round followed, and the last table was of the code
    before it."""
    gate = Gate(tmp_path / "gate")
    source = gate.verifier("def verify(workspace):\n    return 1.0\n")
    task = make_task(tmp_path / "t", source, cases={"only": {}})
    (task / "cases" / "only" / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    verifier = task / "tests" / "verifier.py"
    proc, reader = start(dict(env, VERIFIER_TUI_SANDBOX="copy"), task, "--json")
    try:
        json.loads(reader.next_run(HANG_GUARD_S, prefix="{"))
        gate.go.unlink()
        verifier.write_text(source.replace("1.0", "0.5"))
        gate.wait_for_run(2)
        verifier.write_text(source.replace("1.0", "0.25"))
        gate.go.touch()
        last = json_round_where(reader, lambda d: d["cases"][0]["rewards"] == {"reward": 0.25})
    finally:
        code, stderr = interrupt(proc)
    assert code == 0 and "Traceback" not in stderr, stderr
    assert last["trigger"] == "tests/verifier.py"


def test_a_named_case_deleted_while_watched_is_said_gone_not_its_cases_folder(env, example):
    """``test TASK/cases/correct --watch``, then that case folder deleted: the next
    round said the task "has no cases folder" though ``cases/`` was there."""
    task = example("hello-file")
    proc, reader = start(env, task / "cases" / "correct")
    try:
        assert round_lines(reader)[-1].startswith("1 passed, 0 failed"), "the first round"
        shutil.rmtree(task / "cases" / "correct")
        said = reader.next_run(HANG_GUARD_S, prefix="!  not tested: ")
    finally:
        code, stderr = interrupt(proc)
    assert code == 0 and "Traceback" not in stderr, stderr
    assert said == f"!  not tested: no case to test: {task / 'cases' / 'correct'} is not there any more", said


@pytest.mark.parametrize("broken", ["refused", "no-verifier"])
def test_a_task_alone_that_cannot_be_tested_yet_is_watched_until_a_save_fixes_it(env, example, broken):
    """``test TASK --watch``, TASK's task.toml one Harbor would refuse (whose
    cases are not run, as Harbor would run none) or its verifier not written
    yet: it exited 2 at once, where the same task among others is watched
    and runs once a save fixes it. It is watched alone too."""
    task = example("hello-file")
    verifier = task / "tests" / "verifier.py"
    source = verifier.read_text()
    if broken == "refused":
        (task / "task.toml").write_text((task / "task.toml").read_text().replace('version = "1.0"', "version = 1"))
    else:
        verifier.unlink()
    proc, reader = start(env, task)
    try:
        first = round_lines(reader)
        assert any(line.startswith("!  not tested: ") for line in first), first
        assert first[-1].startswith("0 passed, 0 failed, 1 task not tested, 4 cases not run"), first
        if broken == "refused":
            (task / "task.toml").write_text((task / "task.toml").read_text().replace("version = 1", 'version = "1.0"'))
        else:
            verifier.write_text(source)
        second = round_lines(reader)
        assert second[-1].startswith("4 passed, 0 failed"), second
    finally:
        code, stderr = interrupt(proc)
    assert code == 0 and "Traceback" not in stderr, stderr


def test_a_task_passed_over_for_no_case_is_tested_once_it_gains_one(env, tmp_path):
    """``test FOLDER --watch``: a task found without a case was said "not tested"
    in every round, and the case saved into it later never ran: only the tasks
    with a case when the command began were watched."""
    folder = tmp_path / "tasks"
    copy_example("hello-file", folder / "hello-file")
    task = make_task(folder / "later")
    proc, reader = start(env, folder, "--json")
    try:
        first = json.loads(reader.next_run(HANG_GUARD_S, prefix="{"))
        assert [t["task"] for t in first["without_cases"]] == ["later"], first
        made = tmp_path / "cases"  # made aside and moved in whole, as one save
        (made / "one" / "workspace").mkdir(parents=True)
        (made / "one" / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
        made.rename(task / "cases")
        second = json.loads(reader.next_run(HANG_GUARD_S, prefix="{"))
    finally:
        code, stderr = interrupt(proc)
    assert code == 0 and "Traceback" not in stderr, stderr
    assert second["without_cases"] == [], second
    assert [t["name"] for t in second["tasks"]] == ["hello-file", "later"], second
    assert second["failed"] == 0 and second["passed"] == first["passed"] + 1, second["tasks"]


def test_a_task_passed_over_for_lacking_the_step_is_tested_once_it_gains_it(env, tmp_path):
    """``test FOLDER --step S --watch``: a task without step S was passed over
    at the start and never looked at again, though task.toml gained S while watched."""
    folder = tmp_path / "tasks"
    steps = '[[steps]]\nname = "first"\n'
    cases = {"one": {"a.txt": "a"}}
    for name, toml in (("has", steps), ("lacks", '[[steps]]\nname = "zero"\n')):
        make_task(folder / name, toml=f'version = "1.0"\n{toml}', cases=cases)
        (folder / name / "cases" / "one" / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    lacking = folder / "lacks" / "task.toml"
    for step in ("first", "second"):  # Harbor refuses a task whose step has no folder and instruction
        (folder / "lacks" / "steps" / step).mkdir(parents=True)
        (folder / "lacks" / "steps" / step / "instruction.md").touch()
    proc, reader = start(env, folder, "--step", "first", "--json")
    try:
        first = json.loads(reader.next_run(HANG_GUARD_S, prefix="{"))
        lacking.write_text(lacking.read_text() + '[[steps]]\nname = "second"\n')
        second = json.loads(reader.next_run(HANG_GUARD_S, prefix="{"))
        assert [t["name"] for t in second["tasks"]] == ["has"], second
        lacking.write_text(f'version = "1.0"\n{steps}[[steps]]\nname = "second"\n')
        third = json.loads(reader.next_run(HANG_GUARD_S, prefix="{"))
    finally:
        code, stderr = interrupt(proc)
    assert code == 0 and "Traceback" not in stderr, stderr
    assert [t["name"] for t in first["tasks"]] == ["has"], first
    assert [t["task"] for t in third.get("without_step", [])] == [], third
    assert [t["name"] for t in third["tasks"]] == ["has", "lacks"], third
    assert third["passed"] == 2 and third["failed"] == 0, third["cases"]


def test_a_round_follows_a_link_out_made_behind_a_folder_link_of_the_tests(env, example, tmp_path):
    """tests/shared a link to environment/shared, in the task: a link out of the task made there
    is one Harbor refuses, which the next round says without another save; removed, it is gone."""
    task = example("hello-file")
    (task / "environment" / "shared").mkdir(parents=True)
    (task / "tests" / "shared").symlink_to("../environment/shared")
    (tmp_path / "outside").mkdir()
    out = task / "environment" / "shared" / "out"
    proc, reader = start(env, task)
    try:
        first = round_lines(reader)
        out.symlink_to(tmp_path / "outside")
        refused = round_lines(reader)
        out.unlink()
        back = round_lines(reader)
    finally:
        code, stderr = interrupt(proc)
    assert "Traceback" not in stderr, stderr
    assert not any("Harbor would refuse" in line for line in first + back), (first, back)
    assert "environment/shared/out" in refused[0], refused
    assert any("tests/shared/out leads out of the task" in line for line in refused), refused
