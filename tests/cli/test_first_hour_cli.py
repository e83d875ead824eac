"""What a new author meets in the first hour of writing a verifier, headless:
a renamed verify, a row chosen over a case's, a warning raised at verify's call."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.helpers.commands import TOOL, modes_bind_root, run_from_a_removed_folder, run_tool
from tests.helpers.tasks import REPO, make_task, write

WARNS = "import warnings\n\ndef verify(workspace):\n    warnings.warn('read as text', stacklevel=2)\n    return 1.0\n"


def test_a_renamed_verify_is_run_and_the_runner_says_why(tmp_path, env):
    """As in the sandbox: the shim runs tests/verifier.py, and the runner exits 2."""
    root = make_task(tmp_path / "renamed", "def verifyx(workspace):\n    return 1.0\n", cases={"one": {"a": "a"}})
    write(root / "cases" / "one" / "expected.json", '{"rewards": {"reward": 1.0}}')
    done = run_tool(env, "run", root)
    assert done.returncode == 2
    assert "no verifier found" not in done.stderr + done.stdout
    assert "contract error" in done.stdout and "defines no verify" in done.stdout
    tested = run_tool(env, "test", root)
    assert tested.returncode == 1 and "✗  one" in tested.stdout


def test_a_row_chosen_over_a_case_is_said_once_plainly(tmp_path, env, example):
    """The case names no row, but --task-id gives verify a row: no word of the
    case's {} task data, one line saying what verify gets instead."""
    task = example("greeting-rows")
    done = run_tool(env, "run", task, "--case", "no-row", "--task-id", "grace", "--json")
    notices = json.loads(done.stdout)["notices"]
    assert not any("names no row" in n for n in notices), notices
    about = [n for n in notices if "expected.json is not applied" in n]
    assert len(about) == 1 and "the row 'grace' of tasks.jsonl" in about[0]
    # Without --task-id the case's own missing row is still said.
    own = json.loads(run_tool(env, "run", task, "--case", "no-row", "--json").stdout)["notices"]
    assert any("names no row" in n for n in own)


def _warning_at(stderr: str) -> tuple[Path, int]:
    found = re.search(r"^(\S+):(\d+): UserWarning: read as text$", stderr, re.M)
    assert found, stderr
    return Path(found.group(1)), int(found.group(2))


def test_a_warning_at_verifys_call_names_the_runner_that_ran(tmp_path, env):
    root = make_task(tmp_path / "warns", WARNS)
    done = run_tool(env, "run", root, "--json")
    where, line = _warning_at(json.loads(done.stdout)["stderr"])
    assert where.is_file(), f"{where} does not exist"  # the task ships no runner: verifier-tui's ran
    assert where.read_bytes() == (REPO / "runner" / "run_verifier.py").read_bytes()
    assert "verify(" in where.read_text().splitlines()[line - 1]


def test_a_warning_from_the_tasks_own_runner_names_it(tmp_path, env):
    root = make_task(tmp_path / "own", WARNS)
    ours = (REPO / "runner" / "run_verifier.py").read_text()
    own = write(root / "tests" / ".ng" / "run_verifier.py", "# the task's own copy, one line longer\n" + ours)
    for runner, expected in (("task", own), ("ours", None)):
        done = run_tool(env, "run", root, "--runner", runner, "--json")
        where, line = _warning_at(json.loads(done.stdout)["stderr"])
        if expected is not None:
            assert where == expected
        else:
            assert where != own and where.read_text() == ours
        assert "verify(" in where.read_text().splitlines()[line - 1]


def test_a_mistyped_command_is_said_to_be_one(tmp_path, env, example):
    """`verifier-tui tets TASK` said "unrecognized arguments: TASK", blaming the
    one word that was right, and `verifier-tui help` "help does not exist": a
    first word that is neither a command nor a path there is said to be neither,
    with the command it is closest to and the commands there are."""
    task = example("hello-file")
    for argv, closest in ((["tets", task], "did you mean test?"), (["help"], "verifier-tui --help")):
        done = run_tool(env, *argv, cwd=tmp_path)
        assert done.returncode == 2, done
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
        assert f"{argv[0]} is neither a command nor a path that exists" in lines[0], lines[0]
        assert closest in lines[0] and "run, explain, test, watch, audit, compare, new, vendor" in lines[0]
        assert str(task) not in lines[0]
    empty = run_tool(env, "", cwd=tmp_path)  # a path, though empty: said as run says it
    assert empty.returncode == 2 and "an empty path" in empty.stderr, empty.stderr


def test_a_word_from_a_removed_folder_says_the_folder_was_removed(tmp_path, env):
    """A review after: a word that is no command, typed in a folder since
    removed, was said to be no path that exists; the folder is what is wrong."""
    for args in (["t"], ["t", "--no-watch"]):
        done = run_from_a_removed_folder(env, tmp_path / "gone", *args)
        assert done.returncode == 2
        assert done.stderr == (
            "verifier-tui: the folder verifier-tui was started in was removed: start it from one that exists\n"
        ), done.stderr


def test_a_word_that_cannot_be_looked_up_is_said_as_any_path(tmp_path, env, example):
    """A review after: every word that could not be looked up was taken for a
    mistyped command, and `~` was looked up unexpanded: in a folder the user
    cannot search, `mytask` read "no path that exists" where the folder is
    what is wrong; a name too long the same; and `verifier-tui '~'` with the
    task as HOME was refused, where `run '~'` opens it. Only a word that names
    nothing there is taken for a mistyped command."""
    shut = tmp_path / "shut"
    (shut / "mytask").mkdir(parents=True)
    shut.chmod(0)
    try:
        done = run_tool(env, "mytask", tool=[*modes_bind_root(), *TOOL], cwd=shut)
    finally:
        shut.chmod(0o755)
    assert done.returncode == 2 and done.stderr == "verifier-tui: mytask: Permission denied\n", done.stderr
    long = run_tool(env, "a" * 300, cwd=tmp_path)
    assert long.returncode == 2 and long.stderr.endswith("a: File name too long\n"), long.stderr
    home = run_tool({**env, "HOME": str(example("hello-file"))}, "~", "--no-watch", cwd=tmp_path)
    assert home.returncode == 2 and "the TUI needs a terminal" in home.stderr, home.stderr


def test_a_mistyped_command_after_options_is_said_as_one(tmp_path, env, example):
    """A review after: only the first word was looked at, so options before a
    mistyped command (`verifier-tui --no-watch tets TASK`, `--python python3
    tets TASK`, `-- tets TASK`) still read argparse's "unrecognized arguments:
    TASK", and `--no-watch mytask` another line than `mytask`. The TUI's
    path, wherever it stands, is looked at once."""
    task = example("hello-file")
    for before in (["--no-watch"], ["--python", "python3"], ["--"], []):
        done = run_tool(env, *before, "tets", task, cwd=tmp_path)
        assert done.returncode == 2, done
        assert "tets is neither a command nor a path that exists (did you mean test?)" in done.stderr, done.stderr
        assert str(task) not in done.stderr
    lone, after = (run_tool(env, *words, cwd=tmp_path).stderr for words in (["mytask"], ["--no-watch", "mytask"]))
    assert lone == after and "mytask is neither a command" in lone, (lone, after)
    for typo in (["--timout", "30"], ["--cse", "correct"]):  # a review after: the option is what is wrong
        done = run_tool(env, *typo, "mytask", cwd=tmp_path)
        assert f"unrecognized arguments: {typo[0]} mytask" in done.stderr, done.stderr
        assert "neither a command" not in done.stderr
    gone = run_from_a_removed_folder(env, tmp_path / "gone", "--no-watch", "tets", task)
    assert gone.stderr == (
        "verifier-tui: the folder verifier-tui was started in was removed: start it from one that exists\n"
    ), gone.stderr


def test_no_arguments_opens_the_folder_it_is_started_in_or_says_what_to_name(tmp_path, env, example):
    """`verifier-tui` alone printed the whole --help and exited 0, in a task as anywhere: a
    script that lost its path passed, and a newcomer in a task was not shown it. In a folder the
    TUI opens it opens it (here, with no terminal, it says it needs one); elsewhere one line, exit 2."""
    task = example("hello-file")
    opened = run_tool(env, cwd=task)
    assert opened.returncode == 2 and "the TUI needs a terminal" in opened.stderr, opened
    for folder, why in ((tmp_path, "is not a task"), (task.parent, "it holds one: hello-file")):
        done = run_tool(env, cwd=folder)
        lines = done.stderr.splitlines()
        assert done.returncode == 2 and done.stdout == "" and len(lines) == 1, done
        assert lines[0].startswith("verifier-tui: no PATH given, and nothing here to open: "), lines
        assert why in lines[0] and lines[0].endswith("; verifier-tui --help lists the commands"), lines


def test_no_arguments_in_a_folder_the_user_cannot_search_is_one_line(ordinary_user):
    """`verifier-tui` alone, started in a folder its user may not search, printed a traceback
    (PermissionError) where `verifier-tui .` says one line: now both say it the same way."""
    closed = ordinary_user.root / "closed"
    closed.mkdir()
    ordinary_user.own(ordinary_user.root)
    closed.chmod(0)
    inside = ("sh", "-c", 'cd "$0" && exec "$@"', str(closed))  # (root's cd: the user could not)
    alone, dot = (ordinary_user.run(*args, around=inside) for args in ((), (".",)))
    if alone.returncode == 0 and dot.returncode == 0:
        pytest.skip("this user may search any folder here")
    assert alone.returncode == dot.returncode == 2 and alone.stderr == dot.stderr, (alone, dot)
    assert alone.stderr.count("\n") == 1 and "Traceback" not in alone.stderr, alone.stderr
