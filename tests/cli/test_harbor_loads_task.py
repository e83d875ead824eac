"""A task whose files Harbor 0.26.0's ``Task`` refuses to load (``harbor/models/task/task.py``:
``_validate_input_paths``, ``_validate_tests``, the instruction ``__init__`` reads), as every
headless face says it: a task Harbor would refuse, exit 2, the run still made.

Each test runs the real console script on a private copy of a bundled example.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.helpers.commands import HANG_GUARD_S, no_traceback, run_tool, start_watch, stop
from tests.helpers.processes import wait_waiting_in, waiting_in
from tests.helpers.tasks import make_task

REFUSED = "Harbor would refuse to run this task"


def _refused_on_every_face(env, task, why: str) -> None:
    """run --json, test, explain --json all say Harbor would refuse ``task`` for ``why``; run and test exit 2."""
    done = run_tool(env, "run", task, "--case", "correct", "--json")
    no_traceback(done)
    assert done.returncode == 2, done.stdout + done.stderr
    data = json.loads(done.stdout)
    assert why in (data["harbor_refuses_task"] or ""), data["harbor_refuses_task"]
    assert data["rewards"] == {"reward": 1.0}  # the run still happened
    tested = run_tool(env, "test", task)
    no_traceback(tested)
    assert tested.returncode == 2, tested.stdout + tested.stderr
    said = tested.stdout + tested.stderr
    assert REFUSED in said and why in said and "correct: not run" in said, said
    explained = run_tool(env, "explain", task, "--json")
    no_traceback(explained)
    assert any(REFUSED in n and why in n for n in json.loads(explained.stdout)["notices"]), explained.stdout


def _socket_at(path: Path) -> None:
    """A socket bound at ``path``, by its name in its folder: a temporary folder's path may pass 107 bytes."""
    here = os.getcwd()
    os.chdir(path.parent)
    try:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.bind(path.name)
    finally:
        os.chdir(here)


def _why_run_is_refused(env, task) -> str:
    """``run --json``'s harbor_refuses_task, exit 2."""
    done = run_tool(env, "run", task, "--case", "correct", "--json")
    no_traceback(done)
    assert done.returncode == 2, done.stdout + done.stderr
    return json.loads(done.stdout)["harbor_refuses_task"]


def _watch_reads_it_again(env, task, refuse, accept) -> None:
    """watch on ``task``: ``refuse()`` then ``accept()`` are each a run saying whether Harbor
    would refuse the task, not a verdict kept until another file is saved."""
    proc, reader = start_watch(env, task, "--case", "correct")
    try:
        assert "reward 1" in reader.next_run()
        refuse()
        refused = reader.next_run()
        accept()
        back = reader.next_run()
    finally:
        stop(proc)
    assert "Harbor would refuse" in refused, refused
    assert "Harbor would refuse" not in back and "reward 1" in back, back


def test_a_task_without_instruction_md_is_one_harbor_refuses(env, example):
    """hello-file with instruction.md deleted: Task.__init__ raises FileNotFoundError ("Task
    directory ... is missing instruction.md"), even with verification disabled, so no trial of it
    gets a verdict; run and test scored it as before, exit 0."""
    task = example("hello-file")
    (task / "instruction.md").unlink()
    _refused_on_every_face(env, task, "no instruction.md")


def test_an_instruction_md_that_is_a_folder_is_one_harbor_refuses(env, example):
    """hello-file with instruction.md a folder: _validate_tests's exists() passes, then Task.__init__'s
    read_text() raises IsADirectoryError, verification disabled or not, so no trial of it gets a
    verdict; every face scored it as a task Harbor loads, exit 0."""
    task = example("hello-file")
    (task / "instruction.md").unlink()
    (task / "instruction.md").mkdir()
    _refused_on_every_face(env, task, "instruction.md beside task.toml is a folder, not a file")


def test_an_instruction_md_that_is_a_fifo_or_a_socket_is_one_harbor_refuses(env, example):
    """hello-file with instruction.md a FIFO: Task.__init__'s read_text() waits on it for a writer
    that never comes, so Harbor's job never loads the task; a socket: open() raises OSError (ENXIO).
    Every face scored it as a task Harbor loads, exit 0, and none may open it (it would block too)."""
    task = example("hello-file")
    (task / "instruction.md").unlink()
    os.mkfifo(task / "instruction.md")
    _refused_on_every_face(env, task, "instruction.md beside task.toml is a FIFO (a named pipe): Harbor's read_text()")
    (task / "instruction.md").unlink()
    _socket_at(task / "instruction.md")
    _refused_on_every_face(
        env,
        task,
        "instruction.md beside task.toml cannot be read (No such device or address) (Harbor's loader raises OSError)",
    )


@contextmanager
def writer_blocked_on(fifo: Path) -> Iterator[subprocess.Popen]:
    """A process blocked opening the FIFO ``fifo`` to write, until a reader opens it; released at the end."""
    os.mkfifo(fifo)
    writer = subprocess.Popen([sys.executable, "-c", f"open({str(fifo)!r}, 'w').write('x')"])
    try:
        wait_waiting_in(writer, "wait_for_partner", HANG_GUARD_S)  # the writer is in its open
        yield writer
    finally:
        if writer.poll() is None:
            os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))  # releases it (moved back here if moved)
        writer.wait(timeout=HANG_GUARD_S)


def test_an_instruction_md_fifo_a_writer_waits_on_is_never_opened(env, example):
    """hello-file with instruction.md a FIFO a writer is blocked on: each face opened it without
    blocking to see what it was, which released the writer (its open returned, then its write met
    SIGPIPE). The kind is looked at first: the writer stays blocked through every face."""
    task = example("hello-file")
    (task / "instruction.md").unlink()
    with writer_blocked_on(task / "instruction.md") as writer:
        _refused_on_every_face(env, task, "instruction.md beside task.toml is a FIFO (a named pipe)")
        assert writer.poll() is None and waiting_in(writer.pid, "wait_for_partner"), "a face opened the FIFO"


def test_watch_never_opens_an_instruction_md_fifo_moved_in(env, example, tmp_path):
    """watch on hello-file, then a FIFO a writer is blocked on moved over instruction.md: watch
    opened the changed file to tell whether it was as the last run read it, releasing the writer."""
    task = example("hello-file")
    proc, reader = start_watch(env, task, "--case", "correct")
    try:
        assert "reward 1" in reader.next_run()
        with writer_blocked_on(tmp_path / "fifo") as writer:
            os.rename(tmp_path / "fifo", task / "instruction.md")
            refused = reader.next_run()
            assert writer.poll() is None and waiting_in(writer.pid, "wait_for_partner"), "watch opened the FIFO"
            os.rename(task / "instruction.md", tmp_path / "fifo")
    finally:
        stop(proc)
    assert "Harbor would refuse" in refused, refused


def test_an_instruction_md_that_is_not_utf8_is_one_harbor_refuses(env, example):
    """hello-file with instruction.md in Latin-1: Task.__init__'s read_text() raises
    UnicodeDecodeError, verification disabled or not; every face scored it as a task Harbor loads."""
    task = example("hello-file")
    (task / "instruction.md").write_bytes(b"Write h\xe9llo\n")
    _refused_on_every_face(env, task, "instruction.md beside task.toml is not UTF-8 text")


def test_watch_reads_the_task_again_when_instruction_md_is_saved_not_utf8(env, example):
    """watch on hello-file, instruction.md saved in Latin-1: a save of the instruction's text was
    taken to change nothing, so the runs went on as a task Harbor loads; saved back in UTF-8, the
    refusal goes."""
    task = example("hello-file")
    proc, reader = start_watch(env, task, "--case", "correct")
    try:
        assert "reward 1" in reader.next_run()
        (task / "instruction.md").write_bytes(b"Write h\xe9llo\n")
        said = reader.next()
        while "not UTF-8 text" not in said:
            said = reader.next()
        assert said.strip().startswith(f"note: {REFUSED}: instruction.md beside task.toml is not UTF-8"), said
        (task / "instruction.md").write_text("Write hello\n", encoding="utf-8")
        assert "reward 1" in reader.next_run()
    finally:
        stop(proc)


def test_watch_reads_the_task_again_when_instruction_md_becomes_a_folder(env, example):
    """watch on hello-file, instruction.md swapped for a folder at once (removed, a folder moved
    in): instruction.md is there before and after, so the task was not read again and the runs
    went on as a task Harbor loads."""
    task = example("hello-file")
    folder = task.parent / "instruction-folder"
    folder.mkdir()
    proc, reader = start_watch(env, task, "--case", "correct")
    try:
        assert "reward 1" in reader.next_run()
        (task / "instruction.md").unlink()
        folder.rename(task / "instruction.md")
        said = reader.next()
        while "is a folder, not a file" not in said:  # the removal may be a run of its own first
            said = reader.next()
    finally:
        stop(proc)
    assert said.strip().startswith(f"note: {REFUSED}: instruction.md beside task.toml is a folder"), said


def test_a_steps_instruction_md_that_is_a_folder_is_no_refusal(env, tmp_path):
    """A step's instruction.md a folder: Harbor's Task loads the task (it reads a step's
    instruction only as that step's agent starts: step_instruction, whose IsADirectoryError fails
    the agent, and Harbor's error policy still grades the step). The step's verifier runs in
    Harbor, so the task is no refusal."""
    from tests.helpers.tasks import make_task

    steps = 'version = "1.0"\n\n[[steps]]\nname = "first"\n'
    task = make_task(tmp_path / "tasks" / "one", toml=steps, cases={"correct": {}})
    (task / "steps" / "first" / "instruction.md").unlink()
    (task / "steps" / "first" / "instruction.md").mkdir()
    done = run_tool(env, "run", task, "--step", "first", "--case", "correct", "--json")
    no_traceback(done)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["harbor_refuses_task"] is None, done.stdout


def test_a_parameterized_template_needs_no_instruction_md(env, example):
    """greeting-rows keeps instruction.template.md, which NeMo Gym renders into each row's own
    task folder: Harbor loads those, never the template, so the template is not refused."""
    done = run_tool(env, "run", example("greeting-rows"), "--case", "ada", "--json")
    no_traceback(done)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["harbor_refuses_task"] is None


def test_watch_reads_the_task_again_when_instruction_md_comes_and_goes(env, example):
    """watch on hello-file, instruction.md deleted then written again."""
    task = example("hello-file")
    text = (task / "instruction.md").read_text()
    _watch_reads_it_again(
        env, task, (task / "instruction.md").unlink, lambda: (task / "instruction.md").write_text(text)
    )


def test_a_task_without_its_test_sh_is_one_harbor_refuses(env, example):
    """hello-file with tests/test.sh deleted: Harbor's _validate_tests raises FileNotFoundError
    (the task declares [environment].os = 'linux' but has no tests/test.sh) before any trial runs;
    the tool ran the verifier as if the sandbox would, exit 0."""
    task = example("hello-file")
    (task / "tests" / "test.sh").unlink()
    _refused_on_every_face(env, task, "no tests/test.sh")


def test_a_test_sh_excluded_by_harborignore_is_one_harbor_refuses(env, example):
    """tests/.harborignore listing test.sh: TaskFileFilter.require_included raises ValueError
    (Required task input is excluded by .harborignore), Harbor would upload no script to run."""
    task = example("hello-file")
    (task / "tests" / ".harborignore").write_text("*.sh\n")
    _refused_on_every_face(env, task, "tests/test.sh is excluded by .harborignore")


def test_a_harborignore_that_is_not_utf8_is_one_harbor_refuses(env, example):
    """tests/.harborignore in Latin-1: loading the task walks tests/ asking TaskFileFilter of each
    file, which reads the folder's rules with read_text(): UnicodeDecodeError, verifier disabled or
    not. The tool took the file for no rules at all and scored the task, exit 0."""
    task = example("hello-file")
    (task / "tests" / ".harborignore").write_bytes("# brouillon réservé\n*.log\n".encode("latin-1"))
    _refused_on_every_face(env, task, "tests/.harborignore is not UTF-8 text")


@pytest.mark.parametrize("pattern", ["data[z-a].txt", "notes\\"])
def test_a_harborignore_pattern_pathspec_cannot_read_is_one_harbor_refuses(env, example, pattern):
    """A backwards range (``[z-a]``: re.error) or a lone trailing backslash (GitIgnorePatternError):
    Harbor's ``GitIgnoreSpec.from_lines`` raises on it as it reads the folder's rules, loading the task.
    The tool ended in a traceback on the one and took the other for no pattern, exit 0."""
    task = example("hello-file")
    (task / "tests" / ".harborignore").write_text(f"*.log\n{pattern}\n", encoding="utf-8")
    _refused_on_every_face(env, task, f"tests/.harborignore has a pattern Harbor cannot read: {pattern}")


# Harbor reads a task's .gitignore only as a job works out its digest, not as it loads the task
_PACKAGER_RAISES = "(Harbor's Packager.collect_files, run as a job builds lock.json, raises"


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (
            lambda p: p.write_bytes(b"data[z-a].txt\n*.bin\n"),
            ".gitignore has a pattern Harbor cannot read: data[z-a].txt " + _PACKAGER_RAISES + " re.error)",
        ),
        (lambda p: p.write_bytes(b"notes\\\n"), ".gitignore has a pattern Harbor cannot read: notes\\"),
        (
            lambda p: p.write_bytes("# brouillon r\u00e9serv\u00e9\n*.log\n".encode("latin-1")),
            ".gitignore is not UTF-8 text",
        ),
        (Path.mkdir, ".gitignore is a folder, not a file"),
        (os.mkfifo, ".gitignore is a FIFO (a named pipe): Harbor's read_text() would wait on it for a writer"),
        (
            _socket_at,
            ".gitignore cannot be read (No such device or address) " + _PACKAGER_RAISES + " OSError)",
        ),
    ],
    ids=["backwards-range", "trailing-backslash", "latin-1", "folder", "fifo", "socket"],
)
def test_a_gitignore_harbor_cannot_read_is_one_harbor_refuses(env, example, make, why):
    """The task's own .gitignore: Harbor works out the task's digest for the job's (and each
    trial's) lock.json with ``Packager.collect_files``, which reads it with ``read_text()`` and hands
    it to ``PathSpec.from_lines("gitignore", ...)``: a backwards range, a lone trailing backslash or
    Latin-1 bytes raise there, a folder raises IsADirectoryError, a socket OSError, and a FIFO waits
    for a writer, so no trial of the task runs. The tool took each as no rules and scored the task,
    exit 0 (and must never open the FIFO: it would release a writer)."""
    task = example("hello-file")
    make(task / ".gitignore")
    _refused_on_every_face(env, task, why)


def test_a_gitignore_too_big_to_read_is_said_to_be_unchecked(env, example):
    """A .gitignore past the 16 MB the tool reads, which Harbor reads whole: whether Harbor can read
    it is unknown, and said so, where the tool took it for no rules without a word."""
    task = example("hello-file")
    with (task / ".gitignore").open("wb") as big:
        big.truncate(16 * 1024 * 1024 + 1)
    explained = run_tool(env, "explain", task, "--json")
    no_traceback(explained)
    notices = json.loads(explained.stdout)["notices"]
    assert any("not checked whether Harbor can read the task's .gitignore" in n for n in notices), notices
    done = run_tool(env, "run", task, "--case", "correct", "--json")
    no_traceback(done)
    assert json.loads(done.stdout)["harbor_refuses_task"] is None, done.stdout


def test_watch_reads_the_task_again_when_its_gitignore_is_saved(env, example):
    """watch on hello-file, its .gitignore saved with a pattern Harbor cannot read, then fixed: a
    file no run reads, whose save must still say (and unsay) that Harbor would refuse the task."""
    task = example("hello-file")
    gitignore = task / ".gitignore"
    _watch_reads_it_again(
        env, task, lambda: gitignore.write_text("data[z-a].txt\n"), lambda: gitignore.write_text("*.bin\n")
    )


def test_a_harborignore_pattern_python_warns_of_prints_no_warning(env, example):
    """``[[a]x`` is a pattern pathspec reads (a bracket holding ``[`` and ``a``), whose regex ``re``
    compiles with a FutureWarning ("Possible nested set"): the tool printed that warning, naming
    its own source file and line, on stderr of every command reading the task."""
    task = example("hello-file")
    (task / "tests" / ".harborignore").write_text("[[a]x\n", encoding="utf-8")
    done = run_tool(env, "run", task, "--case", "correct", "--json")
    no_traceback(done)
    assert done.returncode == 0 and json.loads(done.stdout)["harbor_refuses_task"] is None, done.stdout
    assert "Warning" not in done.stderr, done.stderr


def test_a_verifier_image_that_bundles_the_tests_needs_no_test_sh(env, example):
    """[verifier.environment] docker_image in separate mode: the image holds the tests, Harbor
    asks for no tests/test.sh (verifier_mode.py bundled_tests), so the task is not refused."""
    task = example("hello-file")
    (task / "tests" / "test.sh").unlink()
    toml = task / "task.toml"
    toml.write_text(toml.read_text() + '\n[verifier.environment]\ndocker_image = "example/checks:1"\n')
    done = run_tool(env, "run", task, "--case", "correct", "--json")
    no_traceback(done)
    assert json.loads(done.stdout)["harbor_refuses_task"] is None, done.stdout


def test_a_step_without_any_test_sh_is_one_harbor_refuses(env, tmp_path):
    """A multi-step task with no tests/test.sh and no steps/second/tests/test.sh: Harbor refuses
    it (step 'second' does not contain an OS-compatible test script); a step's own test.sh is enough."""
    steps = 'version = "1.0"\n\n[[steps]]\nname = "first"\n\n[[steps]]\nname = "second"\n'
    task = make_task(tmp_path / "tasks" / "two", toml=steps, shim=False, cases={"correct": {}})
    (task / "steps" / "first" / "tests").mkdir()
    (task / "steps" / "first" / "tests" / "test.sh").write_text("#!/bin/sh\n")
    why = _why_run_is_refused(env, task)
    assert "'second'" in why and "steps/second/tests/test.sh or tests/test.sh" in why, why


def test_watch_reads_the_task_again_when_harborignore_leaves_test_sh_out(env, example):
    """watch on hello-file, then tests/.harborignore written to leave test.sh out, then removed."""
    task = example("hello-file")
    ignore = task / "tests" / ".harborignore"
    _watch_reads_it_again(env, task, lambda: ignore.write_text("test.sh\n"), ignore.unlink)


def test_a_tests_link_out_of_the_task_is_one_harbor_refuses(env, example, tmp_path):
    """tests/data a link to a folder outside the task: Harbor's validate_input_tree raises
    ValueError (Input paths must stay within the task) before any trial runs; the run skipped
    the link (and said so) and scored as if Harbor would. The run still skips it."""
    task = example("hello-file")
    outside = tmp_path / "outside"
    outside.mkdir()
    (task / "tests" / "data").symlink_to(outside)
    _refused_on_every_face(env, task, f"tests/data leads out of the task, to {outside}")
    done = run_tool(env, "run", task, "--case", "correct")
    assert "skipped data" in done.stdout, done.stdout


def test_a_link_out_that_harborignore_excludes_is_not_refused(env, example, tmp_path):
    """The same link, listed in tests/.harborignore: Harbor never uploads it, nor checks it."""
    task = example("hello-file")
    (tmp_path / "outside").mkdir()
    (task / "tests" / "data").symlink_to(tmp_path / "outside")
    (task / "tests" / ".harborignore").write_text("data\n")
    done = run_tool(env, "run", task, "--case", "correct", "--json")
    no_traceback(done)
    assert json.loads(done.stdout)["harbor_refuses_task"] is None, done.stdout


def test_a_solution_link_cycle_is_one_harbor_refuses(env, example):
    """solution/again a link to solution/ itself: a directory-link cycle, which Harbor refuses
    (Input directory links must not form cycles) even though no verifier reads solution/."""
    task = example("hello-file")
    (task / "solution" / "again").symlink_to(task / "solution")
    _refused_on_every_face(env, task, "solution/again is a link back to a folder it lies in")


def test_a_steps_file_linked_out_of_the_task_is_one_harbor_refuses(env, tmp_path):
    """steps/first/notes.txt a link to a file outside the task: Harbor checks every step's folder too."""
    steps = 'version = "1.0"\n\n[[steps]]\nname = "first"\n'
    task = make_task(tmp_path / "tasks" / "one", toml=steps, cases={"correct": {}})
    (tmp_path / "notes.txt").write_text("mine\n")
    (task / "steps" / "first" / "notes.txt").symlink_to(tmp_path / "notes.txt")
    why = _why_run_is_refused(env, task)
    assert "steps/first/notes.txt leads out of the task" in why and "ValueError" in why, why


def test_watch_reads_the_task_again_when_a_solution_link_cycle_comes_and_goes(env, example):
    """watch on hello-file, then solution/again made a link to solution/ (Harbor refuses the
    task), then removed: solution/ is watched too."""
    task = example("hello-file")
    again = task / "solution" / "again"
    _watch_reads_it_again(env, task, lambda: again.symlink_to(task / "solution"), again.unlink)


def test_a_link_whose_target_holds_a_line_break_cannot_forge_a_line(env, example, tmp_path):
    """tests/data a link to ``out<newline>reward 1.0 (forged)``: the refusal named the target as it
    was written, so run's verdict line broke in two and the second read as a line of its own. It is
    named on its line, its break written ``\\n``."""
    task = example("hello-file")
    (task / "tests" / "data").symlink_to(str(tmp_path / "out\nreward 1.0 (forged)"))
    done = run_tool(env, "run", task, "--case", "correct")
    no_traceback(done)
    assert done.returncode == 2, done.stdout + done.stderr
    assert not any(line.startswith("reward 1.0 (forged)") for line in done.stdout.splitlines()), done.stdout
    assert "out\\nreward 1.0 (forged)" in done.stdout, done.stdout


def test_watch_reads_the_task_again_when_a_link_out_comes_and_goes_in_a_steps_folder(env, tmp_path):
    """watch on a one-step task, then steps/first/notes.txt made a link out of the task (Harbor
    refuses it), then removed: a step's folder is watched for it, not only its instruction.md."""
    steps = 'version = "1.0"\n\n[[steps]]\nname = "first"\n'
    task = make_task(tmp_path / "tasks" / "one", toml=steps, cases={"correct": {}})
    (tmp_path / "notes.txt").write_text("mine\n")
    notes = task / "steps" / "first" / "notes.txt"
    _watch_reads_it_again(env, task, lambda: notes.symlink_to(tmp_path / "notes.txt"), notes.unlink)


def test_watch_reads_the_task_again_when_a_link_out_comes_and_goes_behind_a_folder_link(env, example, tmp_path):
    """watch on hello-file whose tests/shared is a link to environment/shared, in the task: a link
    out of the task made in environment/shared is one Harbor refuses (it walks tests/ through the
    link), and watch ran on as before until another file was saved; removed, the refusal goes."""
    task = example("hello-file")
    _shared_folder(task, tmp_path, linked=True)
    out = task / "environment" / "shared" / "out"
    _watch_reads_it_again(env, task, lambda: out.symlink_to(tmp_path / "outside"), out.unlink)


def _shared_folder(task, tmp_path, *, linked: bool):
    """environment/shared in ``task`` (tests/shared a link to it when ``linked``), and a folder outside."""
    (task / "environment" / "shared").mkdir(parents=True)
    if linked:
        (task / "tests" / "shared").symlink_to("../environment/shared")
    (tmp_path / "outside").mkdir()


def _a_link_out_there_runs_nothing(task, tmp_path, reader) -> None:
    """A link out made in environment/shared, then a save in tests/: the next run is the save's, loaded."""
    (task / "environment" / "shared" / "out").symlink_to(tmp_path / "outside")
    (task / "tests" / "notes.txt").write_text("saved\n")
    said = reader.through_next_run()
    assert "environment" not in "".join(said) and "notes.txt" in said[-1], said
    assert "Harbor would refuse" not in "".join(said) and "reward 1" in said[-1], said


def test_watch_runs_nothing_for_a_link_out_where_no_link_of_the_task_leads(env, example, tmp_path):
    """The same link out made in environment/shared with nothing in tests/ leading there: Harbor
    loads the task as before, so nothing is read again and nothing runs; the next save runs for itself."""
    task = example("hello-file")
    _shared_folder(task, tmp_path, linked=False)
    proc, reader = start_watch(env, task, "--case", "correct")
    try:
        assert "reward 1" in reader.next_run()
        _a_link_out_there_runs_nothing(task, tmp_path, reader)
    finally:
        stop(proc)


def test_watch_lets_go_of_a_folder_once_no_link_leads_there(env, example, tmp_path):
    """tests/shared, the link to environment/shared, removed while watched: a link out made there
    then is none Harbor checks, so nothing is read again; the next save runs for itself, loaded."""
    task = example("hello-file")
    _shared_folder(task, tmp_path, linked=True)
    proc, reader = start_watch(env, task, "--case", "correct")
    try:
        assert "reward 1" in reader.next_run()
        (task / "tests" / "shared").unlink()
        assert "reward 1" in reader.next_run()
        _a_link_out_there_runs_nothing(task, tmp_path, reader)
    finally:
        stop(proc)


def _a_save_of_the_verifier_runs(env, task) -> None:
    """watch on ``task``: tests/verifier.py saved to return 0.5 is a run that says so."""
    verifier = task / "tests" / "verifier.py"
    proc, reader = start_watch(env, task, "--case", "correct")
    try:
        assert "reward 1" in reader.next_run()
        verifier.write_text(verifier.read_text().replace("return 1.0", "return 0.5"))
        said = reader.next_run()
    finally:
        stop(proc)
    assert "tests/verifier.py" in said and "reward 0.5" in said, said


def test_watch_runs_a_save_in_tests_that_are_a_link_to_a_folder_of_the_task(env, example):
    """tests itself a link to environment/tests, a folder of the task the link check enters through
    it: not watched a second time as environment/tests, by whose name the OS watch would then name
    the save, which no run reads; the save of tests/verifier.py runs."""
    task = example("hello-file")
    (task / "tests").rename(task / "environment" / "tests")
    (task / "tests").symlink_to("environment/tests")
    _a_save_of_the_verifier_runs(env, task)


def test_watch_runs_a_save_in_tests_that_a_link_in_a_steps_folder_leads_to(env, tmp_path):
    """steps/first/shared a link to ../../tests (Harbor loads such a task; solution/tests a link to
    ../tests alike): the OS watch names a folder two watched roots reach by the root it was given
    last, here the step's folder, and an event named behind a link was dropped: a save of the
    verifier ran nothing."""
    steps = 'version = "1.0"\n\n[[steps]]\nname = "first"\n'
    task = make_task(tmp_path / "tasks" / "one", toml=steps, cases={"correct": {}})
    (task / "steps" / "first" / "shared").symlink_to("../../tests")
    _a_save_of_the_verifier_runs(env, task)
