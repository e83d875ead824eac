"""Words of the headless commands and the README: the verdict in
a line without a stutter, one unit style, one name per mode, the ``watch``
line, ``breakpoint()``, and a README that documents the legend, every option
and the types ``verify`` gets."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from tests.helpers.commands import no_traceback, run_tool, start_watch, stop
from tests.helpers.tasks import (
    HANG_GUARD_S,
    PY,
    REPO,
    RETURNED_WITH_A_SEMICOLON,
    RETURNS_A_MULTILINE_REPR,
    copy_example,
    make_task,
    write,
)
from verifier_tui.cli import OPTIONS

README = (REPO / "README.md").read_text(encoding="utf-8")
#: The README and the reference pages it points to: what a user reads.
DOCS = README + "".join(page.read_text(encoding="utf-8") for page in sorted((REPO / "docs").glob("*.md")))


def test_the_verdict_line_says_none_once(env, example):
    done = run_tool(env, "run", example("hello-file"), "--case", "missing-file")
    assert "verdict: none: Harbor would raise RewardFileNotFoundError: No reward file" in done.stdout
    assert "no verdict" not in done.stdout


def test_a_timeout_and_the_run_s_time_are_in_one_unit_style(env, tmp_path):
    task_dir = make_task(tmp_path / "t", "import time\ndef verify(workspace):\n    time.sleep(30)\n", timeout=1)
    done = run_tool(env, "run", task_dir, "--python", PY)
    assert done.returncode == 124
    line = next(line for line in done.stdout.splitlines() if line.startswith("timed out"))
    assert re.fullmatch(r"timed out after 1 s · 1(\.\d+)? s", line), line


def test_both_modes_are_named_as_everywhere_else(env, example):
    done = run_tool(env, "run", example("count-errors"), "--case", "response-json", "--both-modes")
    assert "✓ environment-server mode (with a response): exit 0" in done.stdout
    assert "✗ Harbor mode (no response): exit 2" in done.stdout
    assert "works in environment-server mode (with a response) but fails in Harbor mode" in done.stdout
    assert "environment server (with" not in done.stdout


def test_both_modes_say_once_why_the_server_mode_was_not_run(env, example):
    """A case with no response: the server mode's line said why it was not run, and the finding
    under it said the same sentence again, where to put a response and how, whole (the TUI's b too)."""
    done = run_tool(env, "run", example("hello-file"), "--both-modes")
    lines = done.stdout.splitlines()
    assert done.stdout.count("no response to run the environment-server mode with") == 1, lines
    assert lines[-1] == "in Harbor mode the verifier works; the environment-server mode was not run: no response", lines


def test_breakpoint_in_the_verifier_says_what_happened_and_points_to_the_tui(env, tmp_path):
    task_dir = make_task(tmp_path / "t", "def verify(workspace):\n    breakpoint()\n    return 1.0\n")
    done = run_tool(env, "run", task_dir, "--python", PY)
    assert done.returncode == 1
    note = next(line for line in done.stdout.splitlines() if "bdb.BdbQuit" in line and line.startswith("note: "))
    assert "stdin is not a terminal" in note
    assert "open the task in the TUI (verifier-tui TASK) and press d" in note


@pytest.mark.parametrize(("returns", "cause", "rule"), RETURNED_WITH_A_SEMICOLON)
def test_what_verify_returned_is_said_whole_when_it_holds_a_semicolon(env, tmp_path, returns, cause, rule):
    """run's exit line cut the runner's message at its first "; ", which sat inside the str verify returned
    or a key of its dict: `exit 2 · contract error: verify returned 'a · 272 ms`. It says what was returned
    whole; --json keeps the runner's message as it wrote it."""
    task_dir = make_task(tmp_path / "t", f"def verify(workspace):\n    return {returns}\n")
    done = run_tool(env, "run", task_dir, "--python", PY)
    assert done.returncode == 2 and f"\nexit 2 · contract error: {cause} · " in done.stdout, done.stdout
    data = json.loads(run_tool(env, "run", task_dir, "--python", PY, "--json").stdout)
    message = f"{cause}; {rule}" if rule else cause
    assert data["outcome_words"] == f"exit 2 · contract error: {cause}", data["outcome_words"]
    assert data["stderr"] == f"run_verifier: error: {message}\n", data["stderr"]
    assert data["verdict_message"].startswith(f"{message}. No reward file"), data["verdict_message"]


def test_what_verify_returned_is_said_whole_when_its_repr_breaks_over_lines(env, tmp_path):
    """An object whose repr breaks over lines, 'S(a<newline>b; c)' (pandas', numpy's): the runner's
    message was read to its first line's end, so run said `contract error: verify returned S(a` and
    --json's outcome_words and verdict_message the same. The message is read to its end, on one line,
    its line break written as the tool writes one elsewhere."""
    verifier, cause = RETURNS_A_MULTILINE_REPR
    task_dir = make_task(tmp_path / "t", verifier)
    done = run_tool(env, "run", task_dir, "--python", PY)
    assert done.returncode == 2 and f"\nexit 2 · contract error: {cause} · " in done.stdout, done.stdout
    data = json.loads(run_tool(env, "run", task_dir, "--python", PY, "--json").stdout)
    assert data["outcome_words"] == f"exit 2 · contract error: {cause}", data["outcome_words"]
    rule = "it must return a finite number (int or float, not bool) or a dict of them"
    assert data["verdict_message"].startswith(f"{cause}; {rule}. No reward file"), data["verdict_message"]


def test_a_dict_value_whose_repr_breaks_over_lines_is_said_whole(env, tmp_path):
    """A dict whose reward is an object with a repr over lines (a pandas Series): its message, which ends
    with the value's type, was cut at the repr's first line once only messages ending with a rule were read
    on (`... is not a finite number: S(a`). It is read to the line closing with the type."""
    verifier = RETURNS_A_MULTILINE_REPR[0].replace("return S()", "return {'reward': S()}")
    task_dir = make_task(tmp_path / "t", verifier)
    data = json.loads(run_tool(env, "run", task_dir, "--python", PY, "--json").stdout)
    cause = "verify returned a dict whose value for 'reward' is not a finite number: S(a\\nb; c) (S)"
    assert data["outcome_words"] == f"exit 2 · contract error: {cause}", data["outcome_words"]


def test_a_dict_key_whose_repr_breaks_over_lines_is_said_whole_and_no_further(env, tmp_path):
    """A dict whose key is no str and has a repr over lines: the runner's message ended with the key's
    repr, whose end nothing marked, so it was read only to its first line (`... not a string: S(a`).
    The message now ends with the key's type, as a value's does: read to that line, and not into
    what an atexit handler prints after it."""
    verifier = RETURNS_A_MULTILINE_REPR[0].replace("return S()", "return {S(): 1.0}")
    verifier = "import atexit, sys\natexit.register(lambda: print('closing (db)', file=sys.stderr))\n" + verifier
    task_dir = make_task(tmp_path / "t", verifier)
    data = json.loads(run_tool(env, "run", task_dir, "--python", PY, "--json").stdout)
    cause = "verify returned a dict with a key that is not a string: S(a\\nb; c) (S)"
    assert data["outcome_words"] == f"exit 2 · contract error: {cause}", data["outcome_words"]


def test_a_key_message_from_a_runner_that_ends_it_with_the_repr_is_read_to_its_first_line(env, tmp_path):
    """A runner vendored before the key's message ended with its type (``--runner task``, a trial's
    own) ends it with the bare repr, so a later line ending ``(word)``, an atexit handler's, was read
    into it: ``... not a string: None\\nclosing pool (ok)``. Such a message is read to its first line."""
    ours = (REPO / "runner" / "run_verifier.py").read_text(encoding="utf-8")
    old = re.sub(r"(not a string: %s\" % )\w+", r"\1_short_repr(key)", ours)  # 781fa1a9's message
    assert old != ours
    verifier = (
        "import atexit, sys\natexit.register(lambda: print('closing pool (ok)', file=sys.stderr))\n"
        "def verify(workspace):\n    return {None: 1.0}\n"
    )
    task_dir = make_task(tmp_path / "t", verifier)
    (task_dir / "tests" / ".ng").mkdir()
    (task_dir / "tests" / ".ng" / "run_verifier.py").write_text(old, encoding="utf-8")
    done = run_tool(env, "run", task_dir, "--python", PY, "--runner", "task", "--json")
    cause = "verify returned a dict with a key that is not a string: None"
    assert json.loads(done.stdout)["outcome_words"] == f"exit 2 · contract error: {cause}"


@pytest.mark.parametrize("returned", ["'pass'", "{}"])
def test_what_is_printed_after_the_runners_message_is_no_part_of_it(env, tmp_path, returned):
    """An atexit handler printing after the runner's contract error ('closing db pool', 20,000 lines of it)
    was read into the message once a repr could break it over lines: outcome_words held the handler's
    lines (276,769 characters on one line) and the rule was lost. Only a message that ends with its
    rule is read past its first line, up to that rule."""
    verifier = (
        "import atexit, sys\n\n"
        "atexit.register(lambda: print('closing db pool\\n' * 20000, file=sys.stderr))\n\n\n"
        f"def verify(workspace):\n    return {returned}\n"
    )
    task_dir = make_task(tmp_path / "t", verifier)
    data = json.loads(run_tool(env, "run", task_dir, "--python", PY, "--json").stdout)
    cause = "verify returned 'pass' (str)" if returned != "{}" else "verify returned an empty dict"
    assert data["outcome_words"] == f"exit 2 · contract error: {cause}", data["outcome_words"][:300]


def test_watch_says_whole_what_verify_returned_when_it_holds_a_semicolon(env, tmp_path):
    """Under a run's line, cut to its column, watch says the reward words whole: they were cut at the
    first "; " of the str verify returned (`verify returned 'a · RewardFileNotFoundError`)."""
    task_dir = make_task(tmp_path / "t", "def verify(workspace):\n    return 'a; b'\n")
    proc, reader = start_watch(env, task_dir, "--python", PY)
    try:
        reader.next_run()
        under = reader.next(HANG_GUARD_S)
    finally:
        code, stderr = stop(proc)
    assert code == 0 and "Traceback" not in stderr, stderr
    assert under.strip() == "verify returned 'a; b' (str) · RewardFileNotFoundError", under


def test_watch_lines_say_how_each_run_went_against_expected_json(env, example):
    task_dir = example("hello-file")
    workspace = task_dir / "cases" / "wrong-text" / "workspace"
    proc, reader = start_watch(env, task_dir, "--case", "wrong-text", "--python", PY)
    try:
        first = reader.next_run()
        assert "reward written" in first and "reward 0" in first and first.endswith("matches expected")
        (workspace / "hello.txt").write_text("hello world\n")
        second = reader.next_run()
        assert "reward 1" in second and second.endswith("differs from expected")
        (workspace / "hello.txt").unlink()
        third = reader.next_run()
        assert "verifier raised" in third and third.endswith("differs from expected")
        assert "reward raised" not in third and "raised  reward" not in third
        # A trigger too long for its column keeps its start and its end (what happened, the file's
        # name), cut in its middle, and says so.
        name = "notes about the greeting written in full.txt"
        (workspace / name).write_text("x")
        fourth = reader.next_run()
        head, tail = re.search(r"  (\S+)…(.+?\.txt)", fourth).groups()  # e.g. "workspace/not", "en in full.txt"
        shown = f"workspace/{name}"
        assert shown.startswith(head) and shown.endswith(tail) and len(head + tail) < len(shown), fourth
    finally:
        code, stderr = stop(proc)
    assert code == 0 and "Traceback" not in stderr


def test_watch_says_why_a_run_could_not_start(env, example):
    """The chosen case's folder deleted while ``watch`` runs: the next run cannot start, and the
    line under it says why, as ``--json``'s ``outcome_words`` and the TUI do (it said only
    "could not start")."""
    task_dir = example("hello-file")
    proc, reader = start_watch(env, task_dir, "--python", PY)
    try:
        assert "reward 1" in reader.next_run()
        shutil.rmtree(task_dir / "cases" / "correct")
        assert "could not start" in reader.next_run()
        why = reader.next()
    finally:
        code, stderr = stop(proc)
    assert why.startswith("      the workspace ")
    assert why.endswith("cases/correct/workspace is not there any more (deleted or moved?)")
    assert code == 0 and "Traceback" not in stderr


def test_watch_json_says_a_response_deleted_while_chosen_is_not_there(env, example, tmp_path):
    """``--response FILE`` deleted while ``watch --json`` runs: the run said
    ``contract error`` (the runner's exit 2 on a path it was handed), where a
    deleted workspace is ``could not start`` with why; now both are alike."""
    task_dir = example("count-errors")
    answer = tmp_path / "answer.json"
    answer.write_text((task_dir / "cases" / "response-json" / "response.json").read_text())
    proc, reader = start_watch(env, "--json", task_dir, "--response", answer, "--python", PY)
    try:
        assert json.loads(reader.next_run(prefix="{"))["outcome"] == "reward_written"
        answer.unlink()
        gone = json.loads(reader.next_run(prefix="{"))
    finally:
        code, stderr = stop(proc)
    assert gone["outcome"] == "could_not_start", gone["outcome_words"]
    assert gone["outcome_words"] == f"could not start: the response {answer} is not there any more (deleted or moved?)"
    assert code == 0 and "Traceback" not in stderr


def test_a_file_just_over_a_bound_says_how_it_differs(env, example, tmp_path):
    """A response one byte past the 64 MB a run reads: the line said "is 64 MB:
    more than the 64 MB this tool reads", two equal sizes. Where the rounded
    sizes are equal, the exact bytes say the difference."""
    answer = tmp_path / "answer.txt"
    with answer.open("wb") as sparse:
        sparse.truncate(64 * 1024 * 1024 + 1)
    done = run_tool(env, "run", example("count-errors"), "--response", answer, "--python", PY)
    assert done.returncode == 2
    said = "answer.txt is 67,108,865 bytes: more than the 64 MB (67,108,864 bytes) this tool reads"
    assert f"could not start: the response {said}: the run cannot read it" in done.stdout, done.stdout
    assert "is 64 MB: more than the 64 MB" not in done.stdout


def test_watch_lines_say_when_harbor_would_refuse_the_task(env, example):
    """A task.toml Harbor cannot load: ``run`` says the verdict is none and exits 2, ``test``
    counts the task Harbor would refuse, the TUI says so over the reward; ``watch``'s lines
    gave the reward as if it were the verdict, also when task.toml broke while it watched.
    Why it would refuse was then said twice under the run (whole below the cut column, and
    as a note), and again under each run after while nothing changed: it is said once, as
    watch's other notes are, and again only when the reason changes."""
    task_dir = example("hello-file")
    toml = task_dir / "task.toml"
    good = toml.read_text()
    proc, reader = start_watch(env, task_dir, "--python", PY)

    def until_run() -> tuple[list[str], str]:
        """The lines under the last run, then the next run's line."""
        under = []
        while not (line := reader.next()).startswith("#"):
            under.append(line)
        return under, line

    try:
        first = reader.next_run()
        assert "reward 1" in first and "Harbor would refuse" not in first
        toml.write_text("version = [\n")
        second = reader.next_run()
        toml.write_text("version = [\n# saved again, as broken\n")
        under_second, third = until_run()
        toml.write_text("version = 1\n")
        under_third, fourth = until_run()
        toml.write_text(good)
        under_fourth, fifth = until_run()
    finally:
        code, stderr = stop(proc)
    whole = "Harbor would refuse to run this task: "
    for line in (second, third, fourth):
        assert "Harbor would refuse" in line and "reward 1" not in line, line
    said = [line for line in under_second if whole in line]
    assert len(said) == 1 and "TOMLDecodeError" in said[0], under_second
    assert not any(whole in line for line in under_third), under_third  # nothing changed: not said again
    said = [line for line in under_fourth if whole in line]
    assert len(said) == 1 and "version = 1 is not a string" in said[0], under_fourth  # another why
    assert "reward 1" in fifth and "Harbor would refuse" not in fifth
    assert code == 0 and "Traceback" not in stderr


def test_the_readme_documents_the_legend_the_app_shows():
    from verifier_tui.words.run import LEGEND

    for _title, marks in LEGEND:
        for mark, meaning in marks:
            assert f"| {mark} | {meaning} |" in README, mark
    assert "| `?` | help: every key, and the marks below |" in README


def test_the_docs_document_every_option_and_the_readme_verify_s_argument_types():
    for flags, _commands, _engine, _keywords in OPTIONS:
        assert any(re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", DOCS) for flag in flags), flags
    for flag in ("--nemo-gym DIR", "--jobs N", "--poll", "--no-watch", "--network host"):
        assert f"- `{flag}" in DOCS, flag
    for name, kind in (("workspace", "pathlib.Path"), ("task_data", "dict"), ("response", "dict"), ("state", "dict")):
        assert f"| `{name}` | `{kind}` |" in README, name
    # The opening two commands stay as they are.
    assert (
        "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/verifier-tui examples/tasks/hello-file" in README
    )
    assert "python3 -m venv .venv && .venv/bin/pip install '.[test]' && .venv/bin/python -m pytest" in README


def test_an_integer_past_any_float_is_shown_short():
    from verifier_tui.words.run import format_number

    assert format_number(10**308) == "1e+308"
    assert format_number(-(10**400)) == "-~2^1329"
    assert format_number(10**15) == "1000000000000000"


def test_a_reward_key_shows_its_control_characters_as_escapes():
    # Dropped, "re\x1b[31mward\x9b2J" read as "reward2J": a key that looks like another. Quoted once
    # made visible, so it is not the key a verifier wrote with backslashes in it.
    from verifier_tui.words.run import rewards_text

    assert rewards_text({"re\x1b[31mward\x9b2J": 0.5}) == '"re\\x1b[31mward\\x9b2J"=0.5'


def test_an_input_the_user_cannot_read_means_the_run_cannot_start_on_every_face(ordinary_user):
    """A case's response file, or its task_data.json, there but unreadable
    (mode 000, run as an ordinary user): it was handed to the runner as it
    was, whose contract error said the file "does not exist". A deleted one
    is a run that could not start, saying why; an unreadable one now is too,
    in the same words on run, ``--json`` and ``test``."""
    task = copy_example("count-errors", ordinary_user.root / "t")
    case = task / "cases" / "response-txt"
    write(case / "task_data.json", "{}")
    ordinary_user.own(ordinary_user.root)
    for name, what in (("response.txt", "the response"), ("task_data.json", "the task data")):
        (case / name).chmod(0)
        said = f"could not start: {what} {name} cannot be read (Permission denied)"
        done = ordinary_user.run("run", task, "--case", "response-txt")
        no_traceback(done)
        assert said in done.stdout and "contract" not in done.stdout, done.stdout
        assert done.returncode == 2
        data = json.loads(ordinary_user.run("run", "--json", task, "--case", "response-txt").stdout)
        assert (data["outcome"], data["outcome_words"]) == ("could_not_start", said)
        tested = ordinary_user.run("test", task, "--case", "response-txt")
        assert said in tested.stdout and tested.returncode == 1, tested.stdout
        (case / name).chmod(0o644)
