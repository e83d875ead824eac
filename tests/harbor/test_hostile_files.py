"""Trial and task folders from elsewhere, with a FIFO or a file nested ten
thousand levels deep where Harbor writes a JSON file or a log: every command
finishes, with one clear line, and no traceback of the tool's own."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.harbor.trial_app_under_test import make_trial_app
from tests.helpers.commands import inner_pytest_options, no_traceback, run_tool
from tests.helpers.harbor import READS_HELLO, sandbox_trial
from tests.helpers.tasks import make_task
from tests.tui.app_under_test import screen_text

PY = sys.executable
#: A FIFO waits for a writer for ever: a command that opens one never ends.
#: Far more than any of these commands takes here; far less than for ever.
BOUND_S = 60
DEEP = "[" * 10_000 + "]" * 10_000


def command(env, *args, cwd):
    done = run_tool(env, *args, cwd=cwd, timeout_s=BOUND_S)
    no_traceback(done)
    assert "RecursionError" not in done.stdout + done.stderr
    return done


@pytest.fixture
def trial(runs, tmp_path):
    demo = make_task(runs / "tasks" / "demo", READS_HELLO, toml='version = "1.0"\nartifacts = ["/app"]\n')
    return sandbox_trial(runs / "jobs" / "j", demo, tmp_path, workspace={"hello.txt": "hi"}, capture=True)


def replace(path, how):
    if path.exists():
        path.unlink()
    if how == "fifo":
        os.mkfifo(path)
    else:
        path.write_text(DEEP)


@pytest.mark.parametrize(
    "name",
    ["result.json", "config.json", "lock.json", "trial.log", "artifacts/manifest.json", "verifier/test-stdout.txt"],
)
def test_a_fifo_in_a_trial_never_hangs_a_command(name, trial, env, tmp_path):
    replace(trial.path / name, "fifo")
    said = {}
    for args in (["run", trial.path], ["explain", trial.path], ["test", trial.path]):
        done = command(env, *args, "--python", PY, cwd=tmp_path)
        assert done.returncode in (0, 1, 2), (args, done.stdout, done.stderr)
        said[args[0]] = done.stdout + done.stderr
    if name in ("result.json", "config.json", "verifier/test-stdout.txt"):
        # test-stdout.txt read "(missing: verifier/ holds no test-stdout.txt ...)" of a file ls lists
        assert f"{name.split('/')[-1]} is a FIFO (a named pipe), not a regular file" in said["run"], said["run"]


@pytest.mark.parametrize("how", ["fifo", "folder"])
def test_a_test_stdout_that_is_no_regular_file_is_said_not_read(how, trial, env, tmp_path):
    """``test_stdout_state`` is ``not read`` for a FIFO or a folder too, but the
    words in its place said only what is there, ``(test-stdout.txt is a FIFO
    (a named pipe), not a regular file)``, never that it was not read, as a
    link's do (``...: not read here``)."""
    output = trial.path / "verifier" / "test-stdout.txt"
    output.unlink()
    if how == "fifo":
        os.mkfifo(output)
    else:
        output.mkdir()
    kind = "a FIFO (a named pipe)" if how == "fifo" else "a folder"
    done = command(env, "run", trial.path, "--python", PY, cwd=tmp_path)
    shown = done.stdout.split("── sandbox: verifier/test-stdout.txt", 1)[1].splitlines()[1]
    assert shown == f"(test-stdout.txt is {kind}, not a regular file: not read)", shown
    data = json.loads(command(env, "run", trial.path, "--json", "--python", PY, cwd=tmp_path).stdout)
    assert data["sandbox"]["test_stdout_state"] == "not read"


@pytest.mark.parametrize("how", ["no verifier folder", "verifier a device", "test-stdout a fifo"])
def test_output_the_trial_does_not_hold_is_never_said_empty(how, trial, env, tmp_path):
    """A trial with no ``verifier/`` (a copy that lost it), a device in its
    place, or a FIFO for ``test-stdout.txt`` beside no reward file: the
    sandbox's steps said ``test-stdout.txt is empty and no reward file was
    written ... so it did not run to the end``, of output nobody read, beside
    ``Harbor scored 1.0``. They say it was not read, so how far the runner got
    is not known; and never that no reward file ``was written`` beside the note
    that verifier/ changed after the run (Harbor read one): none is there now."""
    folder = trial.path / "verifier"
    if how == "test-stdout a fifo":
        for name in os.listdir(folder):
            (folder / name).unlink()
        os.mkfifo(folder / "test-stdout.txt")
    else:
        for name in os.listdir(folder):
            (folder / name).unlink()
        folder.rmdir()
        if how == "verifier a device":
            os.mknod(folder, 0o644 | 0o020000, os.makedev(1, 5))  # /dev/zero's numbers
    done = command(env, "run", trial.path, "--python", PY, cwd=tmp_path)
    said = done.stdout.split("\nsandbox: ", 1)[1].splitlines()[0]
    assert "is empty" not in said and "did not run to the end" not in said, said
    assert said.endswith("so how far the runner got is not known"), said
    assert "was written" not in said, said
    if how == "test-stdout a fifo":
        assert said.startswith("no reward file is in the trial now"), said
    data = json.loads(command(env, "run", trial.path, "--json", "--python", PY, cwd=tmp_path).stdout)
    assert "is empty" not in data["sandbox"]["phase_explanation"], data["sandbox"]["phase_explanation"]


@pytest.mark.parametrize("name", ["result.json", "config.json"])
@pytest.mark.parametrize("text, kind", [("null", "null"), ("[1, 2]", "a list"), ("7", "a number"), ('"x"', "a string")])
def test_a_trial_file_of_another_json_kind_is_said_in_jsons_words(name, text, kind, trial, env, tmp_path):
    """A trial's result.json or config.json holding ``null``: the note said
    ``result.json holds NoneType, not an object`` (``list``, ``int``: Python's
    names for what the user reads as JSON)."""
    (trial.path / name).write_text(text)
    done = command(env, "run", trial.path, "--python", PY, cwd=tmp_path)
    assert f"{name} holds {kind}, not an object: not a file Harbor writes" in done.stdout, done.stdout


def test_a_result_json_config_of_another_json_kind_is_no_traceback(trial, env, tmp_path):
    """A config.json without trials_dir sends the search for the folder Harbor ran in to result.json's
    copy of the config; one that was no object there (a string) ended every command on the trial in
    ``AttributeError: 'str' object has no attribute 'get'``. The task is still found, as without it."""
    config = json.loads((trial.path / "config.json").read_text())
    del config["trials_dir"]
    (trial.path / "config.json").write_text(json.dumps(config))
    result = json.loads((trial.path / "result.json").read_text())
    result["config"] = "x"
    (trial.path / "result.json").write_text(json.dumps(result))
    for args in (["run", trial.path], ["explain", trial.path], ["test", trial.path]):
        done = command(env, *args, "--python", PY, cwd=tmp_path)
        assert done.returncode in (0, 1), (args, done.stdout, done.stderr)
        if args[0] != "test":
            assert "task found at runs/tasks/demo" in done.stdout, (args, done.stdout)


@pytest.mark.parametrize("name", ["result.json", "config.json"])
def test_a_trial_file_nested_ten_thousand_deep_is_one_line(name, trial, env, tmp_path):
    replace(trial.path / name, "deep")
    said = {}
    for args in (["run", trial.path], ["explain", trial.path], ["test", trial.path], ["run", trial.path, "--json"]):
        done = command(env, *args, "--python", PY, cwd=tmp_path)
        assert done.returncode in (0, 1, 2), (args, done.stdout, done.stderr)
        said[" ".join(map(str, args))] = done.stdout + done.stderr
    assert f"{name} nests more than 200 levels deep" in said[f"run {trial.path}"]


@pytest.mark.parametrize("how", ["fifo", "deep"])
def test_the_pytest_plugin_on_a_hostile_trial_reports_instead_of_crashing(how, trial, env, tmp_path):
    replace(trial.path / "result.json", how)
    done = subprocess.run(
        [
            PY,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            "--verifier-cases",
            str(trial.path),
            "--rootdir",
            str(tmp_path),
        ],
        env=dict(env, PYTEST_ADDOPTS=inner_pytest_options()),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=BOUND_S,
        stdin=subprocess.DEVNULL,
    )
    assert "INTERNALERROR" not in done.stdout + done.stderr
    assert "RecursionError" not in done.stdout + done.stderr
    assert done.returncode in (0, 1), done.stdout + done.stderr


async def test_the_trial_screen_opens_on_a_result_nested_ten_thousand_deep(trial):
    replace(trial.path / "result.json", "deep")
    app = make_trial_app(trial.path, python=PY)
    async with app.run_test(size=(160, 45)) as pilot:
        await app.wait_for_replays(1)
        await pilot.pause()
        assert app.is_running
        assert "result.json nests more than 200 levels deep" in screen_text(app)


def test_a_nul_in_a_manifest_destination_is_no_traceback(trial, env, tmp_path):
    """A path with a NUL cannot be looked up: ``os.path.realpath`` raises ValueError, not OSError."""
    manifest = [{"source": "/app", "destination": "artifacts/a\0b", "type": "directory", "status": "ok"}]
    (trial.path / "artifacts" / "manifest.json").write_text(json.dumps(manifest))
    for args in (["run", trial.path], ["test", trial.path], ["run", trial.path, "--json"]):
        done = command(env, *args, "--python", PY, cwd=tmp_path)
        assert done.returncode in (0, 1, 2), (args, done.stdout, done.stderr)


@pytest.mark.parametrize(
    "printed",
    [
        'Traceback (most recent call last):\n  File "/tests/verifier.py", line {n}, in verify\nValueError: x\n',
        "/tests/test.sh: line {n}: cd: /opt/x: No such file or directory\n",
        '  File "/tests/verifier.py", line {n}, in verify\n',
    ],
)
def test_a_line_number_past_pythons_digit_limit_in_test_stdout_is_no_traceback(printed, trial, env, tmp_path):
    """test-stdout.txt is the verifier's to write: a frame or a shell's line naming a line of 5,000
    digits (no file has one; ``int()`` refuses text past 4,300) ended every command on the trial, and
    on its job, in the tool's ValueError."""
    (trial.path / "verifier" / "test-stdout.txt").write_text(printed.format(n="9" * 5000))
    for args in (["run", trial.path], ["explain", trial.path], ["test", trial.path], ["run", trial.path, "--json"]):
        done = command(env, *args, "--python", PY, cwd=tmp_path)
        assert done.returncode in (0, 1, 2), (args, done.stdout, done.stderr)


def test_a_frame_whose_line_number_no_file_has_is_still_where_the_run_failed(trial, env, tmp_path, runs):
    """The innermost frame naming a line past ten digits was dropped whole, so the failure was
    blamed on the frame that called it (tests/verifier.py:7, not tests/helper.py)."""
    (runs / "tasks" / "demo" / "tests" / "helper.py").write_text("def check():\n    raise ValueError('x')\n")
    (trial.path / "verifier" / "test-stdout.txt").write_text(
        'Traceback (most recent call last):\n  File "/tests/verifier.py", line 7, in verify\n'
        f'  File "/tests/helper.py", line {"9" * 5000}, in check\nValueError: x\n'
    )
    explained = command(env, "explain", trial.path, "--python", PY, cwd=tmp_path).stdout
    assert "failed at runs/tasks/demo/tests/helper.py\n" in explained, explained
    assert "(ValueError: x at tests/helper.py)" in explained, explained
    sandbox = json.loads(command(env, "run", trial.path, "--json", "--python", PY, cwd=tmp_path).stdout)["sandbox"]
    frames = [(frame["sandbox_path"], frame["line"], frame["function"]) for frame in sandbox["frames"]]
    assert frames == [("/tests/verifier.py", 7, "verify"), ("/tests/helper.py", None, "check")]
    assert sandbox["failure"]["sandbox_path"] == "/tests/helper.py"


def test_a_gitignore_pattern_pathspec_cannot_read_is_a_task_harbor_refuses(trial, env, tmp_path, runs):
    """A task's .gitignore is the task author's: a backwards range in it (``data[z-a].txt``, which
    ``re`` refuses) ended every command that works out the task's digest in ``re.error``; then the
    line was taken as no pattern and the digest compared with no word, where Harbor's
    ``Packager.collect_files``, run as it builds the job's lock.json, raises on it."""
    (runs / "tasks" / "demo" / ".gitignore").write_text("data[z-a].txt\n*.bin\n")
    for args in (["explain", trial.path], ["run", trial.path, "--json"]):
        done = command(env, *args, "--python", PY, cwd=tmp_path)
        said = done.stdout + done.stderr
        assert "Traceback" not in said and "Harbor would refuse to run this task" in said, (args, said)
        assert ".gitignore has a pattern Harbor cannot read: data[z-a].txt" in said, (args, said)
    walked = json.loads(done.stdout)
    assert walked["trial"]["task_digest"]["local"].startswith("sha256:"), walked["trial"]
    assert "data[z-a].txt" in walked["local"]["harbor_refuses_task"], walked["local"]


def test_a_loop_of_links_in_the_trials_task_is_no_traceback(trial, env, tmp_path, runs):
    """A task whose tests/ holds a link to a link back to it: working out the task's digest,
    to compare with lock.json's, raised `RuntimeError: Symlink loop`, a traceback for every
    command on the trial. The replay leaves the two links out, and says so: as a loop (it was
    said to link outside tests/, which it never leaves), and that Harbor on Python 3.12 (the
    oldest it runs on) refuses such a task where 3.13 keeps the links, once for the loop."""
    tests = runs / "tasks" / "demo" / "tests"
    (tests / "la").symlink_to("lb")
    (tests / "lb").symlink_to("la")
    for args in (["run", trial.path], ["explain", trial.path], ["test", trial.path], ["run", trial.path, "--json"]):
        done = command(env, *args, "--python", PY, cwd=tmp_path)
        assert done.returncode in (0, 1), (args, done.stdout, done.stderr)
    said = command(env, "run", trial.path, "--python", PY, cwd=tmp_path).stdout
    assert "note: tests: skipped la: la is a link to lb, which leads nowhere: a loop of links" in said, said
    assert "outside" not in said, said
    assert "on Python 3.12 (the oldest it runs on) refuses a task that holds one" in said, said
    assert "(Path.resolve raises RuntimeError: Symlink loop); on 3.13 it keeps the links as they are" in said, said
    # each link named, what Harbor does said once, after the first met (it was said after each)
    assert "note: tests: skipped lb: lb is a link to la, which leads nowhere: a loop of links" in said, said
    assert said.count("a loop of links; Harbor on Python 3.12") == 1, said
