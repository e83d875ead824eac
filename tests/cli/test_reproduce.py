"""The command that reproduces a run (``command`` in ``--json``, ``c`` in the
TUI): typed in a shell where the user is, it runs the same verifier on the
same layout and gives the same verdict."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

from tests.helpers.commands import run_in_shell_text, run_tool, without_the_tool_on_path
from tests.helpers.tasks import make_task, write

HELPER_VERIFIER = "import helper\n\ndef verify(workspace):\n    return helper.VALUE\n"


def run_in_shell(command: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    """The words of ``command`` typed into a shell in ``cwd``, with ``--json`` added."""
    return run_in_shell_text(shlex.join(command), env, cwd)


def a_task_with_a_verifier_outside_tests(tmp_path: Path) -> Path:
    root = make_task(tmp_path / "tasks" / "elsewhere", cases={"only": {"a.txt": "x\n"}})
    write(root / "checks" / "check.py", HELPER_VERIFIER)
    write(root / "checks" / "helper.py", "VALUE = 0.25\n")
    return root


def test_a_verifier_outside_tests_is_reproduced_with_the_same_tests_folder(tmp_path, env):
    """Opened as its file, a verifier in ``checks/`` runs with ``checks/`` as
    ``/tests`` (its helper beside it imports); the command used to name the
    task folder and ``--verifier``, which stages ``tests/`` and put the
    verifier alone in ``.ng``: ``import helper`` failed."""
    root = a_task_with_a_verifier_outside_tests(tmp_path)
    env = without_the_tool_on_path(env)
    done = run_tool(env, "run", root / "checks" / "check.py", "--json")
    first = json.loads(done.stdout)
    assert first["rewards"] == {"reward": 0.25}, done.stderr
    again = run_in_shell(first["command"], env, tmp_path)
    assert again.returncode == 0, again.stderr
    second = json.loads(again.stdout)
    assert second["rewards"] == first["rewards"]
    assert second["sys_path"][1]["path"] == first["sys_path"][1]["path"] == str(root / "checks")
    assert second["command"] == first["command"]


def test_the_command_runs_where_the_tool_is_not_on_path(tmp_path, env):
    """After the README's set-up (a venv, not activated) a bare
    ``verifier-tui`` is not found: the command names the tool by a path
    that runs it, and each word is one shell word (a folder with a space)."""
    root = make_task(
        tmp_path / "my tasks" / "spaced",
        "def verify(workspace):\n    return 0.5\n",
        cases={"one case": {"a.txt": "x\n"}},
    )
    env = without_the_tool_on_path(env)
    done = run_tool(env, "run", root, "--case", "one case", "--timeout", "30", "--json")
    first = json.loads(done.stdout)
    assert first["rewards"] == {"reward": 0.5}, done.stderr
    command = first["command"]
    assert Path(command[0]).is_absolute() and command[command.index("run") + 1] == str(root)
    assert command[command.index("--case") + 1] == "one case"
    assert command[command.index("--timeout") + 1] == "30"  # a --timeout given is part of the run
    again = run_in_shell(command, env, tmp_path)
    assert again.returncode == 0, again.stderr
    second = json.loads(again.stdout)
    assert (second["rewards"], second["case"], second["timeout_s"]) == ({"reward": 0.5}, "one case", 30.0)
