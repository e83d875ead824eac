"""Faults in the TUI: the runner's environment shown in the resolution panel,
exit 0 without a reward and a task Harbor would refuse said in the reward
panel, and ``e`` opening only the user's own files, never a name taken from
the verifier's stderr that an editor could read as an option."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from textual.widgets import OptionList

from tests.helpers.commands import run_tool
from tests.helpers.tasks import CHECKS_RAISED_AS_A_GROUP, make_task, python_or_skip
from tests.tui.app_under_test import SIZE, make_app, widget_text
from verifier_tui.engine.session import Session
from verifier_tui.tui.external import editor_command, failing_of
from verifier_tui.tui.widgets.history_list import summary_text


async def test_the_resolution_panel_says_what_the_runner_gets(tmp_path, monkeypatch, env):
    monkeypatch.setenv("VTUI_SECRET_TOKEN", "t0ken")
    monkeypatch.setenv("VTUI_ADDED", "added-value")
    root = tmp_path / "tasks" / "env"
    # DATA names a file under the task: the runner gets the value as written, never a path made relative
    verifier = f'[verifier]\nenv = {{ MODE = "strict", DATA = "{root}/data.csv" }}\n'
    toml = verifier + '\n[environment]\nenv = { STAGE = "ci" }\n'
    make_task(root, toml=toml)
    app = make_app(root, watch=False, deterministic=False, env=("VTUI_ADDED",))
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.pause()
        text = widget_text(app, "#resolution-body")
    # Each of the task's variables under the table it was written in, as Harbor merges them.
    assert (
        f"task.toml [verifier] env: DATA={root}/data.csv, MODE=strict" in text
        and "task.toml [environment] env: STAGE=ci" in text
    )
    assert "--env: VTUI_ADDED" in text and "added-value" not in text
    assert "verifier-tui: PYTHONDONTWRITEBYTECODE=1, PYTHONIOENCODING=utf-8" in text
    assert "your environment: " in text and "PATH" in text.split("your environment: ")[1]
    assert "held back:" in text and "t0ken" not in text and "VTUI_SECRET_TOKEN" not in text
    # ... in the very words explain prints: one printer for both faces
    said = run_tool(
        dict(env, VTUI_SECRET_TOKEN="t0ken", VTUI_ADDED="added-value"), "explain", root, "--env", "VTUI_ADDED"
    ).stdout
    block = said[said.index("environment  what the runner gets") :].splitlines()
    assert len(block) >= 6 and all(line in text.splitlines() for line in block[:-1]), (block, text)
    # ... but for the way to pass one more: the TUI takes no option once started
    assert block[-1].endswith("; --env NAME passes one"), block
    assert text.splitlines()[text.splitlines().index(block[-2]) + 1].endswith(
        "; start verifier-tui again with --env NAME to pass one"
    ), text
    interpreter = next(line for line in said.splitlines() if line.startswith("interpreter "))
    assert interpreter in text.splitlines(), (interpreter, text)


async def test_the_resolution_panel_does_not_call_the_verifier_raising_a_contract_problem(tmp_path):
    """A ``__signature__`` property that raises is the verifier's own code
    raising (exit 1, the runner's contract), as ``explain`` says: the
    resolution panel said "✗ contract problem: reading verify's signature
    raised RuntimeError"."""
    source = (
        "class Verify:\n    @property\n    def __signature__(self):\n        raise RuntimeError('gotcha')\n\n"
        "    def __call__(self, workspace):\n        return 1.0\n\nverify = Verify()\n"
    )
    root = make_task(tmp_path / "tasks" / "raises", source)
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        result = await app.wait_for_runs(1)
        await pilot.pause()
        text = widget_text(app, "#resolution-body")
    assert result.exit_code == 1
    assert "contract problem" not in text, text
    assert (
        "✗ verify would not be called (the verifier's own code raised, exit 1): "
        "reading verify's signature raised RuntimeError: gotcha" in " ".join(text.split())
    ), text


async def test_exit_0_without_a_reward_is_said_in_the_reward_panel(tmp_path):
    root = make_task(tmp_path / "tasks" / "exits", "import os\n\ndef verify(workspace):\n    os._exit(0)\n")
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        result = await app.wait_for_runs(1)
        await pilot.pause()
        text = widget_text(app, "#reward-body")
    assert result.outcome.slug == "no_reward"
    assert "exit 0 · no reward: Harbor would raise RewardFileNotFoundError" in text
    assert "os._exit(0)" in text
    assert "reward written" not in text


async def test_a_task_harbor_would_refuse_is_said_in_the_reward_panel(tmp_path):
    root = make_task(tmp_path / "tasks" / "refused", toml="version = 1\n")
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.pause()
        text = widget_text(app, "#reward-body")
    assert "Harbor would refuse to run this task" in text and "version = 1 is not a string" in text
    assert '{"reward": 1.0}' in text  # the run still happened: useful while task.toml is being edited


@pytest.mark.parametrize(
    "made, why",
    [
        (None, "no instruction.md"),
        ("folder", "instruction.md beside task.toml is a folder, not a file"),
        ("latin-1", "instruction.md beside task.toml is not UTF-8 text"),
    ],
    ids=["deleted", "a-folder", "latin-1"],
)
async def test_a_task_without_instruction_md_is_said_as_one_harbor_would_refuse(tmp_path, made, why):
    """instruction.md deleted, a folder, or not UTF-8: Harbor's Task refuses to load the task
    (FileNotFoundError; IsADirectoryError or UnicodeDecodeError from read_text), yet the reward panel
    gave the run's reward as the task's."""
    root = make_task(tmp_path / "tasks" / "bare")
    (root / "instruction.md").unlink()
    if made == "folder":
        (root / "instruction.md").mkdir()
    elif made == "latin-1":
        (root / "instruction.md").write_bytes(b"Write h\xe9llo\n")
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_runs(1)
        await pilot.pause()
        text = widget_text(app, "#reward-body")
    assert "Harbor would refuse to run this task" in text and why in text, text


async def test_a_task_harbor_would_refuse_shows_no_reward_in_the_status_line_or_the_lists(tmp_path):
    """The reward panel said Harbor's verdict is none, but the status line
    said "reward 1", and the cases list and the history showed the 1 too."""
    root = make_task(tmp_path / "tasks" / "refused", toml="version = 1\n")
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        result = await app.wait_for_runs(1)
        await pilot.pause()
        status = widget_text(app, "#status")
        cases = app.main.query_one("#cases", OptionList)
        history = app.main.query_one("#history", OptionList)
        case_line = str(cases.get_option_at_index(0).prompt).strip()
        run_line = str(history.get_option_at_index(0).prompt).splitlines()[0].strip()
    assert result.verdict.reward == 1.0  # what the reward folder holds; Harbor would not read it
    assert "Harbor would refuse to run this task" in status and "reward 1" not in status
    assert not case_line.endswith("1") and not run_line.endswith("1"), (case_line, run_line)


async def test_a_task_toml_past_what_the_tool_reads_runs_nothing_and_is_no_refusal_of_harbors(tmp_path):
    """A task.toml past the 4 MB read (Harbor reads it whole): the screen said Harbor would refuse the
    task, over a run made on the defaults. No run is made: the panel says why where the verdict would be."""
    root = make_task(tmp_path / "tasks" / "big", toml='version = "1.0"\n' + "# padding\n" * 500_000)
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        result = await app.wait_for_runs(1)
        await pilot.pause()
        said = widget_text(app, "#reward-body") + widget_text(app, "#status")
    assert result is not None and result.verdict.rewards is None, result
    assert "task.toml is 4.8 MB: more than the 4 MB this tool reads: its settings are unknown, so nothing is run" in (
        " ".join(said.split())
    ), said
    assert "Harbor would refuse" not in said, said


async def test_a_case_of_a_task_harbor_would_refuse_is_failed_whatever_its_reward(tmp_path):
    """A case whose expected.json is the reward the run wrote, of a task
    Harbor would refuse: the cases list showed ✓ and the reward panel "matches
    the case's expected.json", where Harbor would read no reward at all."""
    root = make_task(tmp_path / "tasks" / "refused", toml="version = 1\n", cases={"c": {"a.txt": ""}})
    (root / "cases" / "c" / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    app = make_app(root, watch=False, case="c")
    async with app.run_test(size=SIZE) as pilot:
        result = await app.wait_for_runs(1)
        await pilot.pause()
        text = widget_text(app, "#reward-body")
        case_line = str(app.main.query_one("#cases", OptionList).get_option_at_index(0).prompt).strip()
    assert result is not None and result.verdict.rewards == {"reward": 1.0}
    assert case_line.startswith("✗"), case_line
    assert "does not match the case's expected.json" in text and "matches the case's" not in text, text
    assert "Harbor would refuse to run this task" in text.split("Harbor's verdict")[0], text
    # a run the history keeps only in summary: no note there, so its verdict line says why
    summary = summary_text(result, "1 s")
    said = "Harbor's verdict: none: Harbor would refuse to run this task: version = 1 is not a string"
    assert said in summary, summary  # the words of the reward panel and of run
    assert "does not match the case's expected.json" in summary, summary


#: A verifier that prints a traceback of its own making, naming files the
#: user's editor must never be given: a name an editor reads as an option
#: ("+!touch pwned" makes vim run a command), relative to wherever the app
#: was started, and an absolute file outside the task.
FAKE_TRACEBACK = """\
import os, sys

def verify(workspace):
    sys.stderr.write('Traceback (most recent call last):\\n'
                     '  File "{outside}", line 1, in <module>\\n'
                     '  File "+!touch pwned", line 1, in <module>\\n'
                     '  File "-c", line 1, in <module>\\n'
                     'ValueError: look here\\n')
    sys.stderr.flush()
    os._exit(1)
"""


async def test_e_never_gives_the_editor_a_name_from_stderr_outside_the_task(tmp_path, monkeypatch):
    outside = tmp_path / "outside.py"
    outside.write_text("x = 1\n")
    started_in = tmp_path / "started-here"
    started_in.mkdir()
    for name in ("+!touch pwned", "-c"):
        (started_in / name).write_text("\n")
    monkeypatch.chdir(started_in)
    root = make_task(tmp_path / "tasks" / "fake", FAKE_TRACEBACK.format(outside=outside))
    app = make_app(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        result = await app.wait_for_runs(1)
        assert failing_of(result).location is None
        await pilot.press("e")
        await pilot.pause()
    # It falls back to the verifier's own verify, named absolutely.
    assert any("fake/tests/verifier.py:3" in n for n in app.notices), app.notices
    assert not any("pwned" in n or "outside.py" in n for n in app.notices), app.notices


async def test_a_frame_in_the_users_workspace_is_opened(tmp_path):
    """A traceback that names only a file of the user's workspace (chosen
    outside the task) opens it: it is one of the user's inputs."""
    workspace = tmp_path / "elsewhere" / "ws"
    workspace.mkdir(parents=True)
    (workspace / "mod.py").write_text("x = 1\ny = 2\n")
    root = make_task(
        tmp_path / "tasks" / "ws-frame",
        (
            "import os, sys\n\n"
            "def verify(workspace):\n"
            "    sys.stderr.write(f'  File \"{workspace}/mod.py\", line 2, in <module>\\n')\n"
            "    sys.stderr.flush()\n"
            "    os._exit(1)\n"
        ),
    )
    app = make_app(root, watch=False, workspace=workspace)
    async with app.run_test(size=SIZE):
        result = await app.wait_for_runs(1)
    assert failing_of(result).location == (workspace / "mod.py", 2)


def test_the_editor_gets_an_absolute_path_after_its_options(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    command = editor_command(Path("+!touch pwned"), 3, {"EDITOR": "vim"})
    assert command == ["vim", "+3", "--", str(tmp_path / "+!touch pwned")]
    nano = editor_command(Path("-x"), 0, {"EDITOR": "nano"})
    assert nano == ["nano", "+1", str(tmp_path / "-x")]
    assert all(not word.startswith(("+!", "-x")) for word in command + nano)


def test_vim_opens_a_file_named_like_a_command_as_a_file(tmp_path):
    """The command editor_command builds, run by a real vim: the file named
    "+!touch pwned" is opened, and nothing is run."""
    import shutil
    import subprocess

    import pytest

    if shutil.which("vim") is None:
        pytest.skip("vim is not installed here")
    hostile = tmp_path / "+!touch pwned"
    hostile.write_text("one\ntwo\n")
    report = tmp_path / "report.txt"
    command = editor_command(hostile, 2, {"EDITOR": "vim -es -u NONE"})
    # -es reads commands from stdin: write what vim has open and on which line, then quit.
    subprocess.run(
        command,
        input=f"call writefile([expand('%:p'), line('.')], '{report}')\nqa!\n",
        text=True,
        cwd=tmp_path,
        timeout=30,
        capture_output=True,
    )
    assert report.read_text().splitlines() == [str(hostile), "2"]
    assert not (tmp_path / "pwned").exists()


def test_the_sessions_env_option_reaches_the_runner(tmp_path, monkeypatch):
    monkeypatch.setenv("VTUI_FROM_SHELL", "shell")
    root = make_task(
        tmp_path / "t",
        "import os\n\ndef verify(workspace):\n"
        "    print(os.environ.get('VTUI_FROM_SHELL'), os.environ.get('X'))\n"
        "    return 1.0\n",
    )
    from verifier_tui.engine.session import Options

    with Session(root, Options(env=("VTUI_FROM_SHELL", "X=typed"))) as session:
        assert session.run().stdout.text == "shell typed\n"
    with Session(root) as session:
        assert session.run().stdout.text == "None None\n"
    assert os.environ["VTUI_FROM_SHELL"] == "shell"


def test_a_trial_replays_failing_line_stays_inside_the_task(tmp_path):
    """The trial screen's e takes its line from the replay's traceback: a
    frame that climbs out of the task with ".." is not the task's."""
    from verifier_tui.engine.harbor.walkthrough import local_failure

    outside = tmp_path / "outside.py"
    outside.write_text("x = 1\n")
    root = make_task(
        tmp_path / "t",
        (
            "import os, sys\n\n"
            "def verify(workspace):\n"
            "    sys.stderr.write('Traceback (most recent call last):\\n'\n"
            f"                     '  File \"{tmp_path}/t/tests/../../outside.py\", line 1, in <module>\\n'\n"
            "                     'ValueError: look here\\n')\n"
            "    sys.stderr.flush()\n"
            "    os._exit(1)\n"
        ),
    )
    with Session(root) as session:
        result = session.run()
    assert "outside.py" in result.stderr.text
    assert local_failure(result) is None


async def test_a_workspace_that_could_not_be_copied_whole_is_an_error_not_a_verdict(tmp_path, sandbox):
    """Copying the case's 2 MB file fails against a 1 MB file size limit (EFBIG, what a full
    scratch disk gives as ENOSPC): the verifier is not called on what was copied, and the
    verdict area says why in place of a verdict."""
    import resource

    root = make_task(
        tmp_path / "tasks" / "full",
        "def verify(workspace):\n    print('verify ran')\n    return 1.0\n",
        cases={"big": {"small.txt": "x", "big.bin": "x" * (2 << 20)}},
    )
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, hard))
    try:
        app = make_app(root, watch=False)
        async with app.run_test(size=SIZE) as pilot:
            result = await app.wait_for_runs(1)
            await pilot.pause()
            text = " ".join(widget_text(app, "#reward-body").split())
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert result.exit_status == 2 and result.stdout.text == ""
    assert "the workspace could not be copied whole: big.bin: the file is bigger than" in text
    assert "Harbor's verdict none: the verifier was not run" in text, text
    assert "reward written" not in text and "RewardFileNotFoundError" not in text


#: A verifier that prints a frame of its own making in ``tests/helper.py``,
#: named as the run sees it (``/tests/...`` in the view, the stage's folder in
#: the copy sandbox: both map to the task's ``tests/``).
FRAME_IN_HELPER = """\
import os, sys

def verify(workspace):
    here = os.path.dirname(os.path.abspath(__file__))
    sys.stderr.write('Traceback (most recent call last):\\n'
                     '  File "%s/helper.py", line 1, in <module>\\n'
                     'ValueError: look here\\n' % here)
    sys.stderr.flush()
    os._exit(1)
"""


async def test_e_never_opens_a_file_a_link_in_the_task_leads_out_to(tmp_path, monkeypatch):
    """The task's tests/helper.py is a link to a file of the user's outside the
    task, and the run's stderr names it as the failing frame: the editor is
    never given it (nor the file it leads to), the reward panel does not name
    it as where it failed, and e says why in one line."""
    from verifier_tui.engine.harbor.walkthrough import local_failure

    secret = tmp_path / "bashrc"
    secret.write_text("export TOKEN=sekrit\n")
    root = make_task(tmp_path / "tasks" / "linked", FRAME_IN_HELPER)
    (root / "tests" / "helper.py").symlink_to(secret)
    result, panel, opened, notes = await _panel_and_e(root, monkeypatch)
    assert "helper.py" in result.stderr.text
    assert opened == [], opened
    assert local_failure(result) is None  # the trial screen's e, on a replay, keeps the same rule
    assert "helper.py:1" not in panel and "e says why its line is not opened" in panel, panel
    said = [n for n in notes if "helper.py" in n]
    assert len(said) == 1 and "\n" not in said[0], notes
    assert "linked/tests/helper.py:1" in said[0] and "not opened" in said[0], said
    assert "bashrc" not in said[0]  # (the staging note names where the task's link leads: the task's, not the run's)


async def test_e_says_a_workspace_file_linked_out_is_none_of_the_workspaces_own(tmp_path, monkeypatch):
    """The workspace's mod.py is a link to a file outside it, and the run names
    it as the failing frame: e opens nothing and says the file is none of the
    workspace's own (it said "of the task's own", a folder it is not in)."""

    secret = tmp_path / "bashrc"
    secret.write_text("export TOKEN=sekrit\n")
    workspace = tmp_path / "elsewhere" / "ws"
    workspace.mkdir(parents=True)
    (workspace / "mod.py").symlink_to(secret)
    root = make_task(
        tmp_path / "tasks" / "ws-link",
        (
            "import os, sys\n\n"
            "def verify(workspace):\n"
            "    sys.stderr.write(f'  File \"{workspace}/mod.py\", line 1, in <module>\\n')\n"
            "    sys.stderr.flush()\n"
            "    os._exit(1)\n"
        ),
    )
    _result, _panel, opened, notes = await _panel_and_e(root, monkeypatch, workspace=workspace)
    assert opened == [], opened
    said = [n for n in notes if "mod.py" in n and "not opened" in n]
    assert len(said) == 1, notes
    assert "of the workspace's own" in said[0] and "task's" not in said[0], said


async def test_e_never_opens_a_file_a_link_in_tests_leads_to_elsewhere_in_the_task(tmp_path, monkeypatch):
    """tests/helper.py is a link to ../lib/h.py: in the task, but out of
    tests/, which is all the staged copy mirrors, so the run could not have
    been there. A frame naming it was opened as lib/h.py (the rule was checked
    against the task's folder, not the tests folder the run saw)."""
    from verifier_tui.engine.harbor.walkthrough import local_failure

    root = make_task(tmp_path / "tasks" / "inlink", FRAME_IN_HELPER)
    (root / "lib").mkdir()
    (root / "lib" / "h.py").write_text("x = 1\n")
    (root / "tests" / "helper.py").symlink_to("../lib/h.py")
    result, panel, opened, notes = await _panel_and_e(root, monkeypatch)
    assert opened == [], opened
    assert failing_of(result).refused == (root / "tests" / "helper.py", 1)
    assert local_failure(result) is None
    assert "h.py:1" not in panel and "e says why its line is not opened" in panel, panel
    said = [n for n in notes if "not opened" in n]
    assert len(said) == 1 and "inlink/tests/helper.py:1" in said[0], notes


async def _panel_and_e(root, monkeypatch, **options):
    """The first run of ``root``, the reward panel's words for it, the editor
    commands ``e`` then ran (the editor itself replaced), and the app's notes."""
    import verifier_tui.tui.screens.main as main_screen

    opened: list[list[str]] = []
    monkeypatch.setattr(main_screen, "run_suspended", lambda app, command, **_: opened.append(command) or True)
    monkeypatch.setenv("EDITOR", "vi")
    app = make_app(root, watch=False, **options)
    async with app.run_test(size=SIZE) as pilot:
        result = await app.wait_for_runs(1)
        await pilot.pause()
        panel = " ".join(widget_text(app, "#reward-body").split())
        await pilot.press("e")
        await pilot.pause()
    return result, panel, opened, app.notices


async def test_the_reward_panel_names_the_raising_line_not_a_stack_printed_as_the_run_exits(tmp_path, monkeypatch):
    """verify raised at line 8; as the interpreter exits, an atexit handler
    prints its stack (File lines, no exception report). The reward panel said
    `raised ValueError at tests/verifier.py:4` and e opened line 4, the
    handler's: every File line of stderr was read, not the exception's report."""
    root = make_task(
        tmp_path / "tasks" / "exits",
        "import atexit, traceback\n\ndef later():\n    traceback.print_stack()\n\n"
        "def verify(workspace):\n    atexit.register(later)\n    raise ValueError('no')\n",
    )
    result, panel, opened, _notes = await _panel_and_e(root, monkeypatch)
    assert "print_stack" in result.stderr.text
    assert "raised ValueError at" in panel and "verifier.py:8" in panel and "verifier.py:4" not in panel, panel
    assert opened and opened[0][1] == "+8", opened


async def test_an_exception_group_from_an_async_verify_names_the_sub_exceptions_line(tmp_path, monkeypatch):
    """verify runs asyncio.TaskGroup and a task raises at line 6: Python prints
    an ExceptionGroup, every frame behind `  |` (the sub-exception's behind
    `    |`). No exception report was found and no frame either: the panel said
    `raised an exception` with no line (stderr's last line, `+----`) and e opened nothing."""
    root = make_task(
        tmp_path / "tasks" / "grouped",
        "import asyncio\n\n\nasync def check(workspace):\n    await asyncio.sleep(0)\n"
        "    raise ValueError('no hello.txt')\n\n\nasync def main(workspace):\n"
        "    async with asyncio.TaskGroup() as group:\n        group.create_task(check(workspace))\n\n\n"
        "def verify(workspace):\n    asyncio.run(main(workspace))\n    return 1.0\n",
    )
    result, panel, opened, _notes = await _panel_and_e(root, monkeypatch)
    assert "| ExceptionGroup: unhandled errors in a TaskGroup" in result.stderr.text
    assert "raised ValueError at" in panel and "verifier.py:6" in panel, panel
    assert failing_of(result).location == (root / "tests" / "verifier.py", 6)
    assert opened and opened[0][1] == "+6", opened


# A task's own runner from before ours caught what verify raised: the exception reaches the
# interpreter, whose own printer (3.11's and 3.12's) writes a message's later lines with no margin.
_RUNNER_THAT_LETS_IT_RAISE = (
    "import runpy, sys\nfrom pathlib import Path\n\nrunpy.run_path('/tests/verifier.py')['verify'](Path('/app'))\n"
)


async def test_an_exception_group_of_checks_never_raised_one_by_one_names_the_groups_line(tmp_path, monkeypatch):
    """verify raised its failed checks as one ExceptionGroup at line 8, the checks never raised one by one
    (no traceback of their own): the group's report, starting `Exception Group Traceback`, was not read as
    one, so the panel said `raised an exception` and not what."""
    root = make_task(tmp_path / "tasks" / "checks", CHECKS_RAISED_AS_A_GROUP)
    result, panel, opened, _notes = await _panel_and_e(root, monkeypatch)
    assert "  | AssertionError: notes.md is missing" in result.stderr.text, result.stderr.text
    assert "raised ExceptionGroup at" in panel and "verifier.py:8" in panel, panel
    assert opened and opened[0][1] == "+8", opened


async def test_a_verifier_that_closed_its_stderr_is_not_said_to_have_a_traceback_there(tmp_path, monkeypatch):
    """verify closed fd 2, then raised: the runner's traceback went nowhere and stderr is empty, yet the panel
    said `raised an exception (the traceback is in stderr: e opens the line ...)`."""
    root = make_task(
        tmp_path / "tasks" / "closed",
        "import os\n\ndef verify(workspace):\n    os.close(2)\n    raise ValueError('no stderr')\n",
    )
    result, panel, opened, _notes = await _panel_and_e(root, monkeypatch)
    assert result.stderr.text == "", result.stderr.text
    assert "the traceback is in stderr" not in panel, panel
    assert "raised an exception, but stderr holds no traceback (did the verifier close or redirect it?)" in panel, panel
    assert "e opens verify" in panel and opened and opened[0][1] == "+3", (panel, opened)


@pytest.mark.parametrize(
    "work",
    [
        "    raise KeyError('in a thread')\n",
        "    try:\n        {}['k']\n    except KeyError as error:\n"
        "        raise RuntimeError('in a thread') from error\n",
    ],
    ids=["raised", "chained"],
)
async def test_a_threads_report_is_not_the_traceback_of_a_verifier_that_closed_its_stderr(tmp_path, monkeypatch, work):
    """A thread raised (Python printed its report), then verify closed fd 2 and raised: the runner's report went
    nowhere, yet the thread's frames were read as the run's, so the panel said `raised OSError at verifier.py:6
    (the traceback is in stderr: e opens the line)`, the thread's line. A thread whose target raised one exception
    from another it caught was read so still (`raised RuntimeError at verifier.py:9`): its chain's first report
    starts in the target, not in threading's _bootstrap_inner."""
    root = make_task(
        tmp_path / "tasks" / "closed-after-a-thread",
        f"import os\nimport threading\n\n\ndef work():\n{work}\n\n"
        "def verify(workspace):\n    thread = threading.Thread(target=work)\n    thread.start()\n    thread.join()\n"
        "    os.close(2)\n    raise OSError('no stderr')\n",
    )
    result, panel, opened, _notes = await _panel_and_e(root, monkeypatch)
    assert "Exception in thread" in result.stderr.text, result.stderr.text
    assert "the traceback is in stderr" not in panel, panel
    assert "stderr holds no traceback" in panel and "e opens verify" in panel, panel
    verify_line = 9 + work.count("\n") - 1
    assert opened and opened[0][1] == f"+{verify_line}", (panel, opened)


async def test_reports_python_prints_after_the_runners_as_it_exits_are_not_where_it_failed(tmp_path, monkeypatch):
    """verify raised ValueError at line 19; as the interpreter exited, an atexit callback raised and an object's
    __del__ raised, which Python prints as reports of their own (`Exception ignored in: ...`): the panel said
    `raised RuntimeError at verifier.py:6` and e opened the __del__'s line."""
    verifier = """import atexit


class Scratch:
    def __del__(self):
        raise RuntimeError("cleanup failed")


def cleanup():
    raise OSError("atexit cleanup failed")


KEEP = []


def verify(workspace):
    KEEP.append(Scratch())
    atexit.register(cleanup)
    raise ValueError("the answer is wrong")
"""
    root = make_task(tmp_path / "tasks" / "ignored", verifier)
    result, panel, opened, _notes = await _panel_and_e(root, monkeypatch)
    assert "Exception ignored in: <function Scratch.__del__" in result.stderr.text, result.stderr.text
    assert "raised ValueError at" in panel and "verifier.py:19" in panel, panel
    assert opened and opened[0][1] == "+19", opened


async def _printed_by_python_itself(root, monkeypatch, version: str):
    """The first run of ``root`` under its own runner, which leaves the exception to Python
    ``version``'s own printer: the run, the reward panel's words and e's editor commands."""
    (root / "tests" / ".ng").mkdir()
    (root / "tests" / ".ng" / "run_verifier.py").write_text(_RUNNER_THAT_LETS_IT_RAISE)
    python = python_or_skip(version)
    result, panel, opened, _notes = await _panel_and_e(root, monkeypatch, runner="task", python=python)
    return result, panel, opened


async def test_a_group_whose_message_holds_a_blank_line_printed_by_python_3_11_names_its_last_report(
    tmp_path, monkeypatch
):
    """Two checks fail and verify raises their ExceptionGroup; the first's message holds a blank line,
    which Python 3.11 prints bare. The group's reading ended at that blank line, so the rest stayed behind
    `|`: the panel and e named the ValueError's line 2, where Python 3.13's output of the same run names
    the KeyError's line 6, the last report (depth first)."""
    root = make_task(
        tmp_path / "tasks" / "grouped",
        "def first():\n    raise ValueError('first line\\n\\nafter a blank line')\n\n\n"
        "def second():\n    raise KeyError('second')\n\n\n"
        "def verify(workspace):\n    failed = []\n    for check in (first, second):\n        try:\n"
        "            check()\n        except Exception as error:\n            failed.append(error)\n"
        "    raise ExceptionGroup('checks failed', failed)\n",
    )
    result, panel, opened = await _printed_by_python_itself(root, monkeypatch, "3.11")
    assert "    | ValueError: first line\n\nafter a blank line\n" in result.stderr.text, result.stderr.text
    assert "raised KeyError at" in panel and "verifier.py:6" in panel, panel
    assert failing_of(result).location == (root / "tests" / "verifier.py", 6)
    assert opened and opened[0][1] == "+6", opened


async def test_an_osc_sequence_left_open_does_not_take_the_report_out_with_it(tmp_path, monkeypatch):
    """Escape sequences are taken out of a run's output before it is read: an OSC the verifier left
    open (``\\x1b]0;title``, no BEL) ran on across lines, through the runner's report, up to a BEL printed as
    the interpreter exited, and all of it was taken out: the panel said `raised an exception` with no
    line and e opened nothing."""
    verifier = r"""import atexit, sys

atexit.register(lambda: sys.stderr.write('\x07done\n'))

def verify(workspace):
    sys.stderr.write('\x1b]0;a title with no end\n')
    raise ValueError('boom')
"""
    root = make_task(tmp_path / "tasks" / "osc", verifier)
    result, panel, opened, _notes = await _panel_and_e(root, monkeypatch)
    assert "\x1b]0;a title" in result.stderr.text and "\x07done" in result.stderr.text, result.stderr.text
    assert "raised ValueError at" in panel and "verifier.py:7" in panel, panel
    assert opened and opened[0][1] == "+7", opened


async def test_a_traceback_python_3_13_prints_in_colour_names_its_line(tmp_path, monkeypatch):
    """A task whose [verifier] env sets FORCE_COLOR (for pytest's colours in CI), under a runner that
    leaves the exception to Python 3.13's own printer: each frame line came with colour codes
    (`File \\x1b[35m"/tests/verifier.py"\\x1b[0m, line \\x1b[35m2`), so no report was read: the panel
    said `raised an exception` with no line and e opened nothing."""
    root = make_task(
        tmp_path / "tasks" / "colour",
        "def check():\n    raise ValueError('no answer')\n\n\ndef verify(workspace):\n    check()\n    return 1.0\n",
        toml='[verifier]\nenv = { FORCE_COLOR = "1" }\n',
    )
    result, panel, opened = await _printed_by_python_itself(root, monkeypatch, "3.13")
    assert "\x1b[35m" in result.stderr.text, result.stderr.text
    assert "raised ValueError at" in panel and "verifier.py:2" in panel, panel
    assert opened and opened[0][1] == "+2", opened


async def test_a_frame_printed_with_a_line_no_file_has_is_still_where_the_run_failed(tmp_path, monkeypatch):
    """verify prints frames of its own, no whole report, the innermost naming tests/helper.py at a line
    past ten digits, and ends: that frame was dropped whole, so the panel and e blamed its caller
    (verifier.py:3). The frame is kept, its line unknown: e opens helper.py from its top."""
    root = make_task(
        tmp_path / "tasks" / "forged",
        "import os, sys\n\ndef verify(workspace):\n    here = os.path.dirname(__file__)\n"
        "    sys.stderr.write(f'  File \"{here}/verifier.py\", line 3, in verify\\n')\n"
        "    sys.stderr.write(f'  File \"{here}/helper.py\", line ' + '9' * 5000 + ', in check\\n')\n"
        "    sys.stderr.flush()\n    os._exit(1)\n",
        files={"helper.py": "def check():\n    raise ValueError('x')\n"},
    )
    result, panel, opened, _notes = await _panel_and_e(root, monkeypatch)
    assert failing_of(result).location == (root / "tests" / "helper.py", None)
    assert "helper.py (the traceback" in panel and "verifier.py:3" not in panel, panel
    assert opened and opened[0][1:3] == ["+1", "--"] and opened[0][-1].endswith("helper.py"), opened
