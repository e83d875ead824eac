"""The sandbox's own view: a run sees /app, /tests and
/logs/verifier where Harbor's sandbox has them, in a machine it cannot write,
in Harbor's working directory, under the task's limits; and nothing it
starts outlives the tool."""

from __future__ import annotations

import errno
import functools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.helpers.commands import run_tool
from tests.helpers.harbor import make_trial
from tests.helpers.processes import bwrap_probes_that_fail, in_a_cgroup, machine_without_namespaces, needs_namespaces
from tests.helpers.tasks import LONG_PATH_NOTE, PY, big_task_at_a_long_path, make_task, write
from verifier_tui.engine.changes import Change
from verifier_tui.engine.sandbox import isolation
from verifier_tui.engine.session import Options, Session


def run_json(env, *args) -> dict:
    done = run_tool(env, "run", "--json", *args, "--python", PY)
    assert done.stdout, done.stderr
    return json.loads(done.stdout)


# ---------------------------------------------------------------------------
# 1. /app, /tests and /logs/verifier by absolute path


def test_a_verifier_that_names_app_and_tests_by_absolute_path_scores_as_in_harbor(tmp_path, namespace):
    """Harbor tasks read /app and /tests by name (the workspace *is* /app);
    the shim's command line names them too."""
    task_dir = make_task(
        tmp_path / "t",
        """\
        import sys
        from pathlib import Path

        def verify(workspace):
            print(sys.argv[1:7], workspace)
            answer = Path("/app/answer.txt").read_text()
            expected = Path("/tests/expected.txt").read_text()
            return 1.0 if answer == expected else 0.0
    """,
        files={"expected.txt": "42\n"},
        cases={"good": {"answer.txt": "42\n"}, "bad": {"answer.txt": "41\n"}},
    )
    with Session(task_dir, Options(python=PY)) as session:
        session.select_case_named("good")
        good = session.run()
        session.select_case_named("bad")
        bad = session.run()
    assert good.verdict.rewards == {"reward": 1.0}, good.stderr.text
    assert bad.verdict.rewards == {"reward": 0.0}
    # What the runner was handed is the shim's own command line; shown with the user's paths.
    ws = task_dir / "cases" / "good" / "workspace"
    assert good.stdout.text == (
        f"['--verifier', '{task_dir}/tests/verifier.py', '--workspace', '{ws}', "
        f"'--reward-dir', '<reward folder>'] {ws}\n"
    )


def test_a_traceback_through_app_points_at_the_users_files(tmp_path, namespace):
    task_dir = make_task(
        tmp_path / "t",
        """\
        from pathlib import Path

        def verify(workspace):
            return float(Path("/app/missing.txt").read_text())
    """,
        cases={"only": {"a.txt": "a"}},
    )
    with Session(task_dir, Options(python=PY)) as session:
        result = session.run()
    ws = task_dir / "cases" / "only" / "workspace"
    assert f'File "{task_dir}/tests/verifier.py", line 4, in verify' in result.stderr.text
    assert f"No such file or directory: '{ws}/missing.txt'" in result.stderr.text
    # /app stays only in the quoted source line (the code as the user wrote it)
    assert [line for line in result.stderr.text.splitlines() if "/app" in line] == [
        '    return float(Path("/app/missing.txt").read_text())'
    ]


def test_the_copy_sandbox_names_the_lines_that_use_the_sandboxs_paths(tmp_path, monkeypatch):
    monkeypatch.setenv(isolation.VARIABLE, "copy")
    task_dir = make_task(
        tmp_path / "t",
        """\
        from pathlib import Path
        from helper import EXPECTED

        def verify(workspace):
            # "/app" in a comment is not a use
            return float(Path("/app/answer.txt").read_text() == EXPECTED)
    """,
        files={"helper.py": "EXPECTED = open('/tests/expected.txt').read()\n"},
        cases={"only": {}},
    )
    with Session(task_dir, Options(python=PY)) as session:
        result = session.run()
    note = next(n for n in result.notices if "copy sandbox has no /app" in n)
    assert f"{task_dir / 'tests' / 'verifier.py'}:6 /app" in note
    assert f"{task_dir / 'tests' / 'helper.py'}:1 /tests" in note
    assert ":5" not in note


def test_a_path_that_only_starts_like_app_is_left_alone(tmp_path, namespace):
    task_dir = make_task(
        tmp_path / "t",
        """\
        def verify(workspace):
            print("/application /apps /x/app /app")
            return 1.0
    """,
        cases={"only": {}},
    )
    with Session(task_dir, Options(python=PY)) as session:
        result = session.run()
    ws = task_dir / "cases" / "only" / "workspace"
    assert result.stdout.text == f"/application /apps /x/app {ws}\n"


# ---------------------------------------------------------------------------
# 8. The machine is read-only to the run, whatever the user's uid; what else it writes stays in its view


def test_the_machine_is_read_only_even_to_root_and_what_the_run_writes_stays_in_its_view(tmp_path, namespace):
    home = Path(os.path.expanduser("~"))
    marker = f"vtui-{os.getpid()}-{time.monotonic_ns()}"
    refused = ["/etc", "/usr/local/bin"]
    absent = ["/var/tmp", str(tmp_path)]
    its_own = [str(home), "/"]  # a container's /root and root folder: writable, and the run's alone
    task_dir = make_task(
        tmp_path / "t",
        f"""\
        import os, subprocess

        def verify(workspace):
            for folder in {refused + absent + its_own!r}:
                try:
                    open(os.path.join(folder, {marker!r}), "w").close()
                    print("WROTE", folder)
                except OSError as exc:
                    print("refused", folder, exc.strerror)
            remount = subprocess.run(["mount", "-o", "remount,bind,rw", "/etc"], capture_output=True)
            print("remount exit", remount.returncode != 0)
            open("/tmp/" + {marker!r}, "w").close()
            (workspace / "x").write_text("x")
            print(sorted(os.listdir("/tmp")), os.getcwd())
            return 1.0
    """,
        cases={"only": {}},
    )
    with Session(task_dir, Options(python=PY)) as session:
        result = session.run()
    assert result.verdict.rewards == {"reward": 1.0}, result.stderr.text
    said = result.stdout.text.splitlines()
    for folder in refused:
        assert f"refused {folder} Read-only file system" in said
    for folder in absent:
        assert f"refused {folder} No such file or directory" in said
    for folder in its_own:
        assert f"WROTE {folder}" in said
    for folder in refused + absent + its_own:
        assert not os.path.exists(os.path.join(folder, marker))  # nothing of it on this machine
    assert "remount exit True" in result.stdout.text
    # A /tmp of its own: what it wrote, and none of this machine's /tmp (the
    # chosen interpreter's folder is shown there where it lives under /tmp).
    listing = eval(said[-1].rsplit(" ", 1)[0])
    assert marker in listing and f"pytest-of-{os.environ.get('USER', 'root')}" not in listing
    assert set(listing) - {marker} <= {Path(PY).parts[2]} if PY.startswith("/tmp/") else set(listing) == {marker}
    assert not os.path.exists("/tmp/" + marker)


# ---------------------------------------------------------------------------
# 6. Renaming a folder of the workspace


def test_renaming_a_folder_of_the_workspace_works_as_in_the_sandbox(tmp_path, sandbox):
    task_dir = make_task(
        tmp_path / "t",
        """\
        import os

        def verify(workspace):
            os.rename(workspace / "src", workspace / "moved")
            return float(sorted(os.listdir(workspace / "moved")) == ["a.py"])
    """,
        cases={"only": {"src/a.py": "a"}},
    )
    with Session(task_dir, Options(python=PY)) as session:
        first, second = session.run(), session.run()
    assert first.verdict.rewards == {"reward": 1.0}, first.stderr.text
    assert second.verdict.rewards == {"reward": 1.0}, second.stderr.text
    assert (task_dir / "cases" / "only" / "workspace" / "src" / "a.py").read_text() == "a"


RENAMES_A_FOLDER = """\
        import os

        def verify(workspace):
            try:
                os.rename(workspace / "src", workspace / "moved")
            except OSError as exc:
                print(exc.strerror)
            return 1.0
    """


@pytest.mark.parametrize(
    ("folder", "overlay"), [("", True), ("a:b", True), ("a,b", True), ("a\\b", True), ("a,context=b", False)]
)
def test_a_big_workspace_is_an_overlay_and_says_a_rename_gets_exdev(tmp_path, namespace, folder, overlay):
    """Under a folder whose name holds ``:`` ``,`` or ``\\`` too: bwrap escapes those in the
    overlay's options as the kernel reads them. A name an LSM (SELinux) could read as
    its own mount option, after a comma, stays a copy."""
    task_dir = make_task(tmp_path / folder / "t", RENAMES_A_FOLDER, cases={"only": {"src/a.py": "a"}})
    ws = task_dir / "cases" / "only" / "workspace"
    for index in range(1100):
        (ws / f"f{index}.txt").write_text("x")
    with Session(task_dir, Options(python=PY)) as session:
        first, second = session.run(), session.run()
    assert first.verdict.rewards == {"reward": 1.0}, first.stderr.text
    assert first.stdout.text == ("Invalid cross-device link\n" if overlay else "")
    assert sum("EXDEV" in n for n in first.notices) == overlay
    assert not any("EXDEV" in n for n in second.notices)  # said once


# ---------------------------------------------------------------------------
# 4 and 5. The task's limits, network and working directory


def test_memory_mb_ends_the_biggest_process_as_the_oom_killer_would(tmp_path, env, sandbox):
    task_dir = make_task(
        tmp_path / "t",
        """\
        def verify(workspace):
            blob = bytearray(400 << 20)
            return 1.0
    """,
        toml='version = "1.0"\n[environment]\nmemory_mb = 128\n',
        cases={"only": {}},
    )
    data = run_json(dict(env, VERIFIER_TUI_SANDBOX=sandbox), task_dir)
    assert data["rewards"] is None and data["verdict_error"] == "RewardFileNotFoundError"
    assert data["signal"] == signal.SIGKILL
    assert data["limits"]["memory_mb"] == 128
    if in_a_cgroup("memory", sandbox):  # the kernel's OOM killer says how many it ended, not which
        assert data["out_of_memory"] == ["the runner"] and data["limits"]["cgroup"] == ["memory"]
    else:
        assert len(data["out_of_memory"]) == 1 and "run_verifier.py" in data["out_of_memory"][0]
    assert any("out of memory" in n and "memory_mb = 128" in n for n in data["notices"])


def test_where_a_runs_cgroup_goes_on_cgroup_v2_and_in_a_container(tmp_path):
    """This machine has only cgroup v1 as its own: the v2 layouts (a subtree
    handed the controllers, a session's leaf that is not) and v1 as a
    container sees it are read as the kernel writes them."""
    from verifier_tui.engine.sandbox.cgroup import Place, folder_for, hierarchies, mounts

    unified, memory = tmp_path / "unified", tmp_path / "my mem"
    (unified / "user.slice" / "u").mkdir(parents=True)
    memory.mkdir()
    mounted = mounts(
        f"30 25 0:26 / {unified} rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
        f"31 25 0:27 /docker/abc {str(memory).replace(' ', chr(92) + '040')} rw - cgroup cgroup rw,memory\n"
        "32 25 0:28 / /proc rw - proc proc rw\n"
    )
    assert [(fs, root, point) for fs, root, point, _ in mounted] == [
        ("cgroup2", "/", str(unified)),
        ("cgroup", "/docker/abc", str(memory)),
    ]
    leaf = unified / "user.slice" / "u"
    on_v2 = hierarchies("0::/user.slice/u\n")
    (leaf / "cgroup.subtree_control").write_text("cpu memory\n")
    assert folder_for("memory", on_v2, mounted) == Place(str(leaf), 2)
    assert folder_for("cpu", on_v2, mounted) == Place(str(leaf), 2)
    (leaf / "cgroup.subtree_control").write_text("cpu\n")  # memory not handed down: no child gets it
    assert folder_for("memory", on_v2, mounted) is None
    in_a_container = hierarchies("4:memory:/docker/abc\n1:name=systemd:/docker/abc\n0::/\n")
    assert folder_for("memory", in_a_container, mounted) == Place(str(memory), 1)
    assert folder_for("cpu", in_a_container, mounted) is None  # v2's root hands nothing down here


def test_a_cgroup_line_whose_path_is_not_absolute_loses_only_its_own_hierarchy(tmp_path):
    """A /proc/self/cgroup line no kernel writes (an empty or relative path,
    fewer than three fields) threw away the whole file: the memory limit, whose own line is sound,
    was then not applied either."""
    from verifier_tui.engine.sandbox.cgroup import Place, folder_for, hierarchies, mounts

    memory = tmp_path / "mem"
    memory.mkdir()
    mounted = mounts(f"31 25 0:27 /docker/abc {memory} rw - cgroup cgroup rw,memory\n")
    groups = hierarchies("5:cpu:docker/abc\n4:memory:/docker/abc\n0::\n")
    assert folder_for("memory", groups, mounted) == Place(str(memory), 1)
    assert "cpu" not in groups and "" not in groups, groups
    # nor a line without its three fields (no ':'), which raised and lost the memory line with it
    groups = hierarchies("garbage\n5:cpu\n4:memory:/docker/abc\n")
    assert folder_for("memory", groups, mounted) == Place(str(memory), 1)
    assert "cpu" not in groups, groups


def test_a_runs_cgroups_are_removed_once_it_is_over_and_those_a_killed_tool_left_too(tmp_path, env):
    """A run's cgroups outlive nothing: removed as it ends, and those of a
    tool SIGKILLed mid-run removed by the next tool that makes one."""
    if not in_a_cgroup("memory"):
        pytest.skip("this user may make no memory cgroup here")
    from verifier_tui.engine.sandbox.cgroup import places

    folder = Path(places()["memory"].folder)
    left = folder / "verifier-tui-4194305-0"  # past any pid_max (2**22): its tool is gone
    left.mkdir(exist_ok=True)
    task_dir = make_task(
        tmp_path / "t",
        "def verify(workspace):\n    return 1.0\n",
        toml='version = "1.0"\n[environment]\nmemory_mb = 128\ncpus = 1\n',
        cases={"only": {}},
    )
    try:
        assert run_json(env, task_dir)["rewards"] == {"reward": 1.0}
        assert not left.exists()
    finally:
        if left.exists():
            left.rmdir()
    with Session(task_dir, Options(python=PY)) as session:
        assert session.run().verdict.rewards == {"reward": 1.0}
    mine = f"verifier-tui-{os.getpid()}-"
    assert not [p for place in places().values() for p in os.listdir(place.folder) if p.startswith(mine)]


def test_a_runs_cgroup_is_removed_though_its_last_process_is_slow_to_go(tmp_path):
    """A later tour: under load, a run OOM-killed with processes still being
    torn down left its cgroup once the tool exited (it waited 0.1 s for them,
    then only a later run of the same process tried again)."""
    if not in_a_cgroup("memory"):
        pytest.skip("this user may make no memory cgroup here")
    from verifier_tui.engine.sandbox.cgroup import RunCgroup

    groups = RunCgroup(128 << 20, None)
    joins = groups.open()
    folder = groups.folders["memory"]
    going = subprocess.Popen(["sh", "-c", f'echo $$ >"{joins[isolation.MEMORY_JOIN]}" && exec sleep 0.5'])
    try:
        deadline = time.monotonic() + 5
        while not Path(folder, "cgroup.procs").read_text() and time.monotonic() < deadline:
            time.sleep(0.01)
        groups.close()
    finally:
        going.wait()
    assert not os.path.exists(folder)


@pytest.mark.parametrize("written", ['"$WS"', "$(cat /etc/ws)", "`cat /etc/ws`", "/srv/$NAME/ws"])
def test_a_workspace_known_only_as_test_sh_runs_is_said_not_guessed(tmp_path, env, written):
    """A test.sh passing --workspace "$WS" (a variable, a command's output): the run laid the workspace
    at /app without a word, where the verifier may look elsewhere. It still does (nothing here knows
    the value), and says so in a note naming the word as test.sh writes it."""
    needs_namespaces()
    task_dir = make_task(tmp_path / "t", "def verify(workspace):\n    return 1.0\n", cases={"only": {}})
    shim = task_dir / "tests" / "test.sh"
    shim.write_text(shim.read_text().replace("--workspace /app", f"--workspace {written}"))
    data = run_json(dict(env, VERIFIER_TUI_SANDBOX="namespace"), task_dir)
    assert data["rewards"] == {"reward": 1.0}
    assert f"tests/test.sh passes --workspace {written}, a path known only as test.sh runs" in "\n".join(
        data["notices"]
    ), data["notices"]


def test_a_crlf_test_sh_is_refused_not_scored_by_a_shim_bash_cannot_parse(tmp_path, env):
    """A CRLF test.sh with no #! line: bash, which Harbor starts it from, runs it itself and stops at the
    shim's `do\\r` (a syntax error, exit 2, no reward). The run laid the workspace at `/srv/ws` + \\r and
    scored the runner's 1.0. It is refused in one line."""
    import subprocess

    needs_namespaces()
    task_dir = make_task(tmp_path / "t", "def verify(workspace):\n    return 1.0\n", cases={"only": {}})
    shim = task_dir / "tests" / "test.sh"
    body = shim.read_text().split("\n", 1)[1]
    shim.write_text(body.replace("--workspace /app", "--workspace /srv/ws").replace("\n", "\r\n"))
    said = subprocess.run(["bash", str(shim)], capture_output=True, text=True, check=False)
    assert said.returncode == 2 and "syntax error near unexpected token `$'do\\r''" in said.stderr, said
    data = run_json(dict(env, VERIFIER_TUI_SANDBOX="namespace"), task_dir)
    assert data["rewards"] is None and data["outcome"] == "could_not_start", data
    assert "tests/test.sh has CRLF line endings" in data["outcome_words"], data["outcome_words"]


def test_a_workspace_in_braces_is_refused_as_the_runner_refuses_what_bash_passes(tmp_path, env):
    """A test.sh passing ``--workspace /app/{src,lib}``: bash, which runs it, passes the runner two words,
    and the runner refuses the second (exit 2), so Harbor finds no reward. ``run`` laid the workspace at
    a folder named ``/app/{src,lib}`` and scored the runner's 1.0. It is refused in one line, saying so."""
    import subprocess

    task_dir = make_task(tmp_path / "t", "def verify(workspace):\n    return 1.0\n", cases={"only": {}})
    shim = task_dir / "tests" / "test.sh"
    shim.write_text(shim.read_text().replace("--workspace /app", "--workspace /app/{src,lib}"))
    runner = Path(__file__).parents[2] / "runner" / "run_verifier.py"
    said = subprocess.run(
        ["bash", "-c", f"{PY} {runner} --verifier /x.py --workspace /app/{{src,lib}} --reward-dir {tmp_path / 'r'}"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert said.returncode == 2 and "unrecognised argument '/app/lib'" in said.stderr, said
    data = run_json(env, task_dir)
    assert data["rewards"] is None and data["outcome"] == "could_not_start", data
    assert (
        "tests/test.sh passes --workspace /app/{src,lib}, which bash expands into 2 words (/app/src /app/lib): "
        "the runner takes one --workspace and refuses the rest (exit 2)" in data["outcome_words"]
    ), data["outcome_words"]


def test_a_pattern_after_the_equals_sign_is_the_workspace_bash_passes(tmp_path, env):
    """``--workspace=/app*``: bash passes the word as written (nothing matches it), and the runner takes
    ``/app*`` as its workspace. The run laid it at ``/app``: a verifier checking its workspace scored 0.0."""
    verifier = "def verify(workspace):\n    return float(str(workspace) == '/app*')\n"
    task_dir = make_task(tmp_path / "t", verifier, cases={"only": {}})
    shim = task_dir / "tests" / "test.sh"
    shim.write_text(shim.read_text().replace("--workspace /app", "--workspace=/app*"))
    data = run_json(env, task_dir)
    assert data["rewards"] == {"reward": 1.0}, data
    assert not [notice for notice in map(str, data.get("notices", [])) if "pattern" in notice], data


def test_braces_under_a_dash_line_are_the_workspace_as_written(tmp_path, env):
    """A ``#!/bin/dash`` test.sh passing ``--workspace /app/{a,b}``: dash passes the word as written, and
    the runner takes it as its workspace. The run was refused, saying "if /bin/dash ... is bash"."""
    verifier = "def verify(workspace):\n    return float(str(workspace) == '/app/{a,b}')\n"
    task_dir = make_task(tmp_path / "t", verifier, cases={"only": {}})
    shim = task_dir / "tests" / "test.sh"
    text = shim.read_text().replace("--workspace /app", "--workspace /app/{a,b}")
    shim.write_text("#!/bin/dash\n" + text.split("\n", 1)[1] if text.startswith("#!") else "#!/bin/dash\n" + text)
    data = run_json(env, task_dir)
    assert data["rewards"] == {"reward": 1.0}, data


def test_a_workspace_path_ending_in_cr_is_said_as_bash_got_it(tmp_path, env):
    """An LF test.sh passing --workspace "/srv/ws<CR>" (the \\r quoted, the file's own): the note said its
    lines end in \\r\\n (a CRLF file) and that sh passes the \\r, where the file has none and bash runs it.
    And a run refused for its CRLF test.sh said `workspace at /app\\r`, a workspace it never laid."""
    needs_namespaces()
    verifier = "def verify(workspace):\n    return float(str(workspace) == '/srv/ws\\r')\n"
    task_dir = make_task(tmp_path / "t", verifier, cases={"only": {}})
    shim = task_dir / "tests" / "test.sh"
    shim.write_text(shim.read_text().replace("--workspace /app", '--workspace "/srv/ws\r"'))
    data = run_json(dict(env, VERIFIER_TUI_SANDBOX="namespace"), task_dir)
    assert data["rewards"] == {"reward": 1.0}, data
    note = next(note for note in data["notices"] if "--workspace /srv/ws\\r" in note)
    assert "CRLF" not in note and "bash" in note and " sh " not in note, note
    shim.write_bytes(shim.read_bytes().replace(b'"/srv/ws\r"', b"/app").replace(b"\n", b"\r\n"))
    done = run_tool(dict(env, VERIFIER_TUI_SANDBOX="namespace"), "run", task_dir, "--python", PY)
    assert "tests/test.sh has CRLF line endings" in done.stdout and "workspace at" not in done.stdout, done.stdout


def test_a_workspace_bound_over_the_views_shm_is_not_the_runs_memory(tmp_path, env):
    """A test.sh passing --workspace /dev/shm (or /tmp) binds the workspace's
    copy (this machine's disk) over the view's tmpfs: its disk was counted as
    the run's memory, and a run of a few bytes was killed as out of memory."""
    needs_namespaces()
    task_dir = make_task(
        tmp_path / "t",
        "def verify(workspace):\n    return 1.0\n",
        toml='version = "1.0"\n[environment]\nmemory_mb = 48\n',
        cases={"only": {"a.txt": "x"}},
    )
    shim = task_dir / "tests" / "test.sh"
    shim.write_text(shim.read_text().replace("--workspace /app", "--workspace /dev/shm"))
    with open(Path(env["TMPDIR"]) / "filler", "wb") as handle:  # the disk the workspace's copy is on, in use
        handle.write(b"x" * (64 << 20))
    data = run_json(dict(env, VERIFIER_TUI_SANDBOX="namespace"), task_dir)
    assert data["rewards"] == {"reward": 1.0} and data["out_of_memory"] == [], data["notices"]


@pytest.mark.parametrize("length", [4_080, 4_090])
def test_a_workspace_path_past_path_max_for_bwrap_is_refused_in_a_line(tmp_path, env, length):
    """A test.sh passing a --workspace of 4,090 characters: bwrap makes it as ``/newroot`` and the path,
    past PATH_MAX, and the run was refused with ``bwrap: Can't mkdir .../cases/only/workspace: File name
    too long``, naming the case's folder. It is refused in a line saying the workspace's path is too long;
    one of 4,080 characters runs."""
    needs_namespaces()
    workspace = "/srv/" + "/".join(["w" * 200] * 20)
    workspace += "/" + "x" * (length - len(workspace) - 1)
    task_dir = make_task(tmp_path / "t", "def verify(workspace):\n    return 1.0\n", cases={"only": {}})
    shim = task_dir / "tests" / "test.sh"
    shim.write_text(shim.read_text().replace("--workspace /app", f"--workspace {workspace}"))
    data = run_json(dict(env, VERIFIER_TUI_SANDBOX="namespace"), task_dir)
    if length < 4_088:
        assert data["rewards"] == {"reward": 1.0}, data["outcome_words"]
        return
    assert data["rewards"] is None and data["outcome"] == "could_not_start", data
    said = data["outcome_words"]
    assert "\n" not in said and len(said) < 500, said
    assert f"--workspace {workspace[:40]}" in said and "too long" in said and "cases/only" not in said, said


def test_a_workspace_bound_over_the_interpreters_folder_is_one_line(tmp_path, env):
    """A test.sh passing --workspace over the folder the chosen interpreter
    lives in (a venv under /tmp and --workspace /tmp): the bind hid the
    interpreter, and the run ended with exit 127, "not found"."""
    needs_namespaces()
    home = str(Path(sys.base_prefix).parent)
    task_dir = make_task(tmp_path / "t", "def verify(workspace):\n    return 1.0\n", cases={"only": {}})
    shim = task_dir / "tests" / "test.sh"
    shim.write_text(shim.read_text().replace("--workspace /app", f"--workspace {home}"))
    data = run_json(dict(env, VERIFIER_TUI_SANDBOX="namespace"), task_dir)
    assert data["exit_code"] is None and data["rewards"] is None
    assert f"passes --workspace {home}, which holds the chosen interpreter's folder" in data["outcome_words"]


@pytest.mark.parametrize("mb", [1 << 43, 10**23])
def test_a_limit_too_big_to_give_is_said_and_the_run_goes_on(tmp_path, env, sandbox, mb):
    """2**63 bytes and more is past what bwrap's --size (the run's /tmp) or a
    memory cgroup takes: without a word, the run could not start at all."""
    task_dir = make_task(
        tmp_path / "t",
        "def verify(workspace):\n    return 1.0\n",
        toml=f'version = "1.0"\n[environment]\nmemory_mb = {mb}\nstorage_mb = {mb}\n',
        cases={"only": {}},
    )
    data = run_json(dict(env, VERIFIER_TUI_SANDBOX=sandbox), task_dir)
    assert data["rewards"] == {"reward": 1.0}
    assert data["limits"]["memory_mb"] is None and data["limits"]["storage_mb"] is None
    for key in ("memory_mb", "storage_mb"):
        assert any(f"{key} = {mb} is 2**63 bytes or more" in n for n in data["notices"]), data["notices"]


def test_past_memory_mb_a_child_is_killed_and_the_verifier_goes_on(tmp_path, env, sandbox):
    """The OOM killer ends the biggest process, not the whole container: a
    verifier whose helper process is killed can still write its reward."""
    task_dir = make_task(
        tmp_path / "t",
        """\
        import subprocess, sys

        def verify(workspace):
            child = subprocess.run([sys.executable, "-c", "b = bytearray(400 << 20); import time; time.sleep(5)"])
            return 0.5 if child.returncode == -9 else 1.0
    """,
        toml='version = "1.0"\n[environment]\nmemory_mb = 128\n',
        cases={"only": {}},
    )
    data = run_json(dict(env, VERIFIER_TUI_SANDBOX=sandbox), task_dir)
    assert data["rewards"] == {"reward": 0.5}, data["stderr"]
    if in_a_cgroup("memory", sandbox):
        assert data["out_of_memory"] == ["a process the runner started"]
    else:
        assert "bytearray" in data["out_of_memory"][0]


def test_a_memory_limit_gets_dockers_swap_and_a_probe_a_killed_tool_left_is_swept(tmp_path):
    """Docker gives a container whose ``mem_limit`` is set alone as much swap
    again (``memory.memsw.limit_in_bytes`` twice the limit on cgroup v1,
    ``memory.swap.max`` the limit on v2): a run could swap without bound. A
    probe folder of a tool SIGKILLed as it probed was never swept."""
    if not in_a_cgroup("memory"):
        pytest.skip("this user may make no memory cgroup here")
    from verifier_tui.engine.sandbox import cgroup

    place = cgroup.places()["memory"]
    groups = cgroup.RunCgroup(128 << 20, None)
    groups.open()
    try:
        swap = Path(
            groups.folders["memory"], "memory.memsw.limit_in_bytes" if place.version == 1 else "memory.swap.max"
        )
        if swap.exists():
            assert int(swap.read_text()) == (128 << 20) * (2 if place.version == 1 else 1)
    finally:
        groups.close()
    probe = Path(place.folder, "verifier-tui-4194305-probe")  # past any pid_max: its tool is gone
    probe.mkdir(exist_ok=True)
    cgroup._sweep(place.folder)
    assert not probe.exists()


def test_a_runner_killed_at_its_timeout_is_not_said_killed_for_memory(tmp_path, env):
    """A later tour: a child ended by the cgroup's OOM killer, then a runner
    that ignores SIGTERM SIGKILLed at its timeout, was said "the kernel's OOM
    killer ended the runner": the timeout ended it, and the OOM killer a child."""
    if not in_a_cgroup("memory"):
        pytest.skip("this user may make no memory cgroup here")
    task_dir = make_task(
        tmp_path / "t",
        """\
        import signal, subprocess, sys, time

        def verify(workspace):
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            subprocess.run([sys.executable, "-c", "b = bytearray(1 << 30)\\nfor i in range(0, len(b), 4096): b[i] = 1"])
            while True:
                time.sleep(1)
    """,
        toml='version = "1.0"\n[environment]\nmemory_mb = 128\n',
        timeout=2,
        cases={"only": {}},
    )
    data = run_json(env, task_dir)
    assert data["verdict_error"] == "VerifierTimeoutError" and data["signal"] == signal.SIGKILL
    assert data["out_of_memory"] == ["a process the runner started"], data["notices"]


@pytest.mark.parametrize(
    ("cpus", "said"),
    [
        # A later tour: a quota the kernel refuses was "could not start: /usr/bin/sh: Numerical
        # result out of range", and the verifier never ran. More CPUs than the machine has limits nothing.
        ("1e308", None),
        # A later tour: the kernel's least quota (1 ms in every 100 ms, 0.01 CPUs), ten times
        # what the limits line said, unsaid; Docker's container would not start with it.
        ("0.001", "cpus = 0.001 is less than the least CPU quota"),
    ],
)
def test_cpus_past_what_a_quota_takes_still_runs_and_is_said(tmp_path, env, cpus, said):
    if not in_a_cgroup("cpu"):
        pytest.skip("this user may make no cpu cgroup here")
    task_dir = make_task(
        tmp_path / "t",
        "def verify(workspace):\n    return 1.0\n",
        toml=f'version = "1.0"\n[environment]\ncpus = {cpus}\n',
        cases={"only": {}},
    )
    data = run_json(env, task_dir)
    assert data["rewards"] == {"reward": 1.0}, data
    if said is not None:
        assert any(said in n and "would not start" in n for n in data["notices"]), data["notices"]


def test_cpus_above_this_machines_count_is_said(tmp_path, env, sandbox):
    """``cpus = 3`` on a machine of 2: the quota (or the affinity) was clamped to
    the machine's CPUs and nothing said the run got fewer than the task asked."""
    have = len(os.sched_getaffinity(0))
    task_dir = make_task(
        tmp_path / "t",
        "def verify(workspace):\n    return 1.0\n",
        toml=f'version = "1.0"\n[environment]\ncpus = {have + 1}\n',
        cases={"only": {}},
    )
    data = run_json(dict(env, VERIFIER_TUI_SANDBOX=sandbox), task_dir)
    assert data["rewards"] == {"reward": 1.0}, data
    # --json said only "cpus": 3 beside "cgroup": ["memory", "cpu"], its limits "as the run got them"
    assert (data["limits"]["cpus"], data["limits"]["cpus_given"]) == (have + 1, have), data["limits"]
    said = f"task.toml: [environment] cpus = {have + 1} is more than the {have} CPUs this machine gives the run"
    assert any(n.startswith(said) and f"this run gets {have}" in n for n in data["notices"]), data["notices"]
    # The limits line said "3 CPUs (a quota, as Docker's)" above that note (the copy sandbox "(as
    # affinity, not a quota)", though nothing was bound): it says what the run gets, and what was asked.
    from verifier_tui.engine.sandbox.view import Limits
    from verifier_tui.words.run import limits_words

    text = run_tool(dict(env, VERIFIER_TUI_SANDBOX=sandbox), "run", task_dir, "--python", PY)
    line = next(line for line in text.stdout.splitlines() if line.startswith("limits: "))
    assert f" {have} CPU" in line and f"(the task asks {have + 1}; " in line and f"{have + 1} CPUs" not in line, line
    if sandbox == "copy":
        assert "affinity" not in line, line
    short = limits_words(Limits(cpus=have + 1), namespace=True, short=True)
    assert short is not None and short.startswith(f"{have} CPU") and f"{have + 1} asked" in short, short


def test_one_cpu_is_said_in_the_singular(tmp_path, env, sandbox):
    """Under ``taskset -c 0``, ``cpus = 2``: the note said "more than the 1
    CPUs this machine gives the run", where the limits line says "1 CPU"."""
    from tests.helpers.commands import TOOL

    task_dir = make_task(
        tmp_path / "t",
        "def verify(workspace):\n    return 1.0\n",
        toml='version = "1.0"\n[environment]\ncpus = 2\n',
        cases={"only": {}},
    )
    done = run_tool(
        dict(env, VERIFIER_TUI_SANDBOX=sandbox),
        "run",
        "--json",
        task_dir,
        "--python",
        PY,
        tool=["taskset", "-c", "0", *TOOL],
    )
    notices = json.loads(done.stdout)["notices"]
    said = "cpus = 2 is more than the 1 CPU this machine gives the run: this run gets 1 CPU ("
    assert any(said in n for n in notices), notices


def test_the_cpus_a_run_gets_are_counted_one_way(monkeypatch):
    """Under ``taskset -c 0`` on a machine of 2, ``cpus = 2``: the note said the
    run gets 1 CPU (the CPUs this process may run on) while its cgroup's quota
    was clamped to ``os.cpu_count()``, 2. The quota, the affinity, the note and
    ``-j``'s default count the same CPUs."""
    from verifier_tui.engine import procfs
    from verifier_tui.engine.sandbox import cgroup, view

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert procfs.machine_cpus() == 1
    assert cgroup._limit_text("cpu", 2.0, 2) == f"{cgroup.PERIOD_US} {cgroup.PERIOD_US}"
    assert view.cpus_to_bind(2) == 0  # no fewer than the run has: nothing to bind


def test_the_cpus_a_run_gets_are_said_as_it_gets_them(monkeypatch):
    """``cpus = 1.5`` on 2 CPUs without a cpu cgroup: the line said "1.5 CPUs
    (not bound: all of this machine's)", where the run got both; ``cpus =
    0.001`` in a cgroup: "0.001 CPUs (a quota, as Docker's)", where the quota
    was the kernel's least, 0.01. The quota, the note and the line count
    them one way (``view.cpus_given``)."""
    from verifier_tui.engine.sandbox import cgroup, view
    from verifier_tui.words.run import limits_words

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    unbound = limits_words(view.Limits(cpus=1.5), namespace=False)
    assert unbound is not None and "2 CPUs (the task asks 1.5; not bound: all of this machine's)" in unbound, unbound
    least = limits_words(view.Limits(cpus=0.001, cgroup=("cpu",)), namespace=True)
    assert least is not None and "0.01 CPUs (the task asks 0.001; a quota, as Docker's)" in least, least
    assert cgroup._limit_text("cpu", 0.001, 2) == f"{round(view.LEAST_CPUS * cgroup.PERIOD_US)} {cgroup.PERIOD_US}"
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    bound = limits_words(view.Limits(cpus=1.5, cpu_list=(0, 1)), namespace=False)
    assert bound is not None and "2 CPUs (the task asks 1.5; as affinity, not a quota)" in bound, bound
    whole = limits_words(view.Limits(cpus=1.5, cgroup=("cpu",)), namespace=True)
    assert whole is not None and "1.5 CPUs (a quota, as Docker's)" in whole, whole


def test_cpus_is_a_quota_in_a_cgroup_else_as_many_cpus_bound(tmp_path, env, sandbox):
    """Harbor's ``cpus`` is Docker's: the container sees every CPU and gets
    ``cpus`` worth of their time. Two processes busy for a second under
    ``cpus = 1`` got two CPU-seconds: the run was bound to nothing."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("this machine has one CPU")
    task_dir = make_task(
        tmp_path / "t",
        """\
        import multiprocessing, os, resource, time

        def busy():
            end = time.monotonic() + 1.0
            while time.monotonic() < end:
                pass

        def verify(workspace):
            workers = [multiprocessing.Process(target=busy) for _ in range(2)]
            for worker in workers:
                worker.start()
            for worker in workers:
                worker.join()
            print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime)
            return float(len(os.sched_getaffinity(0)))
    """,
        toml='version = "1.0"\n[environment]\ncpus = 1\n',
        cases={"only": {}},
    )
    data = run_json(dict(env, VERIFIER_TUI_SANDBOX=sandbox), task_dir)
    assert data["limits"]["cpus"] == 1
    if in_a_cgroup("cpu", sandbox):
        assert data["rewards"] == {"reward": float(os.cpu_count() or 1)} and data["limits"]["cpu_list"] == []
        assert data["limits"]["cgroup"] == ["cpu"]
    else:
        assert data["rewards"] == {"reward": 1.0} and len(data["limits"]["cpu_list"]) == 1
    assert float(data["stdout"]) < 1.5, data["stdout"]  # a CPU's worth of the two seconds' work, at most


def test_runs_side_by_side_are_bound_to_cpus_of_their_own(tmp_path, env, sandbox):
    """``test -j 2`` on a task with ``cpus = 1``: each sandbox has a CPU's
    worth of its own, so the two runs must not both be bound to the first CPU."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("this machine has one CPU")
    task_dir = make_task(
        tmp_path / "t",
        """\
        import os, time

        def verify(workspace):
            time.sleep(0.5)  # long enough for the other run to start meanwhile
            return float(min(os.sched_getaffinity(0)))
    """,
        toml='version = "1.0"\n[environment]\ncpus = 1\n',
        cases={"one": {}, "two": {}},
    )
    for case in ("one", "two"):
        (task_dir / "cases" / case / "expected.json").write_text('{"exit_code": 0}')
    done = run_tool(dict(env, VERIFIER_TUI_SANDBOX=sandbox), "test", "--json", "-j", "2", task_dir, "--python", PY)
    cases = json.loads(done.stdout)["cases"]
    bound = [case["limits"]["cpu_list"] for case in cases]
    if in_a_cgroup("cpu", sandbox):  # each a quota of its own, bound to no CPU
        assert bound == [[], []] and all(case["limits"]["cgroup"] == ["cpu"] for case in cases), done.stdout
        return
    assert [len(cpus) for cpus in bound] == [1, 1] and bound[0] != bound[1], done.stdout
    assert sorted(case["rewards"]["reward"] for case in cases) == sorted(float(cpus[0]) for cpus in bound)


@pytest.mark.parametrize(
    ("toml", "options"),
    [
        ("", ()),
        ('[verifier]\nnetwork_mode = "no-network"\n', ()),
        ('[environment]\nnetwork_mode = "no-network"\n', ()),
        ('[environment]\nnetwork_mode = "allowlist"\n', ()),
        ("", ("--network", "host")),
    ],
)
def test_this_machines_loopback_is_reached_only_with_network_host(tmp_path, env, namespace, listener, toml, options):
    """Every view has a network namespace of its own: a service on the
    user's 127.0.0.1 is never reachable, whatever the task's network_mode,
    unless the user shares the machine's (``--network host``, said)."""
    task_dir = make_task(
        tmp_path / "t",
        f"""\
        import socket

        def verify(workspace):
            for host in ("127.0.0.1", "10.0.2.2"):  # this machine's loopback; slirp4netns's way to it
                try:
                    with socket.create_connection((host, {listener}), timeout=2) as conn:
                        print(host, conn.recv(5).decode())
                except OSError as exc:
                    print(host, "no:", type(exc).__name__)
            return 1.0
    """,
        toml='version = "1.0"\n' + toml,
        cases={"only": {}},
    )
    data = run_json(env, task_dir, *options)
    if options:
        assert data["stdout"].startswith("127.0.0.1 hello\n"), data["stdout"]
        assert any(n.startswith("--network host: the run shares this machine's network") for n in data["notices"])
        assert data["limits"]["network_given"] == "host"
    else:
        assert data["stdout"].startswith("127.0.0.1 no: ConnectionRefusedError\n"), data["stdout"]
        assert "10.0.2.2 hello" not in data["stdout"]
    if "no-network" in toml:
        assert data["limits"]["network"] == "no-network" and data["limits"]["network_given"] == "none"
    if "allowlist" in toml:
        assert any('"allowlist" is not applied' in n for n in data["notices"])


def test_network_host_is_said_by_test_and_its_junit_though_every_case_passes(tmp_path, env, namespace):
    """``run --network host`` says the run shared this machine's network; ``test``
    and ``test JOB`` said nothing of it, in their text or their JUnit report,
    whenever every case passed: a CI log never showed that the runs could
    reach the machine's loopback services."""
    import xml.etree.ElementTree as ET

    from tests.helpers.harbor import make_trial

    shared = "--network host: the run shares this machine's network, its loopback services included"
    task = make_task(tmp_path / "runs" / "tasks" / "t", toml='version = "1.0"\n', cases={"only": {}})
    (task / "cases" / "only" / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    trial = make_trial(tmp_path / "runs" / "jobs" / "j" / "t__aaaaaaa", task=task, rewards={"reward": 1.0}, app={})
    for target in (task, trial.parent):
        junit = tmp_path / "junit.xml"
        done = run_tool(env, "test", target, "--network", "host", "--junit", junit, "--python", PY, cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"note: {shared}" in done.stdout.splitlines(), done.stdout
        report = ET.parse(junit).getroot()
        assert report.find("properties/property[@name='network']").get("value") == shared, ET.tostring(report)
        alone = run_tool(env, "test", target, "--junit", junit, "--python", PY, cwd=tmp_path)
        assert "--network host" not in alone.stdout and ET.parse(junit).getroot().find("properties") is None


def test_no_network_in_the_copy_sandbox_is_said_not_applied(tmp_path, env):
    task_dir = make_task(tmp_path / "t", toml='version = "1.0"\n[verifier]\nnetwork_mode = "no-network"\n')
    data = run_json(dict(env, VERIFIER_TUI_SANDBOX="copy"), task_dir)
    assert any('"no-network" is not applied' in n for n in data["notices"])


@pytest.mark.parametrize(
    ("toml", "dockerfile", "expected"),
    [
        ('[environment]\nworkdir = "/app"\n', "FROM python:3.12\nWORKDIR /srv\n", "/app"),
        ("", "FROM python:3.12\nWORKDIR /opt\nworkdir sub\n", "/opt/sub"),
        ("", "FROM python:3.12\nWORKDIR /app\n", "/app"),
        ("", None, "/"),
        ('[environment]\nworkdir = "/tmp/build"\n', None, "/tmp/build"),
        ('[environment]\nworkdir = "/usr/no-such-folder"\n', None, "/usr/no-such-folder"),
        ('[environment]\nworkdir = "//app"\n', None, "/app"),  # //app is /app to Linux: the same checks
        ("", "FROM python:3.12\nWORKDIR //tmp/build\n", "/tmp/build"),
    ],
)
def test_the_run_starts_in_harbors_working_directory(tmp_path, env, namespace, toml, dockerfile, expected):
    task_dir = make_task(
        tmp_path / "t",
        """\
        import os

        def verify(workspace):
            print(os.getcwd())
            return 1.0
    """,
        toml='version = "1.0"\n' + toml,
        cases={"only": {}},
    )
    if dockerfile is not None:
        write(task_dir / "environment" / "Dockerfile", dockerfile)
    data = run_json(env, task_dir)
    assert data["limits"]["workdir"] == expected
    if expected == "/usr/no-such-folder":
        assert data["stdout"] == "/\n"  # in this machine's read-only /usr: said, and the run starts in /
        assert any(f"{expected} is not in this machine's view" in n for n in data["notices"])
    else:  # a folder the image would have (its WORKDIR made it) is made in the view's own root
        ws = task_dir / "cases" / "only" / "workspace"
        assert data["stdout"] == (f"{ws}\n" if expected == "/app" else f"{expected}\n")


def test_a_workdir_in_the_workspace_that_it_lacks_is_said_however_it_is_spelled(tmp_path, env, namespace):
    """``workdir = "//app/sub"`` (a task.toml's, read as /app/sub by Linux):
    /app/sub was said not in this workspace, but //app/sub passed unsaid and
    the view made an empty sub/ in the verifier's /app."""
    task_dir = make_task(
        tmp_path / "t",
        """\
        import os

        def verify(workspace):
            print(sorted(os.listdir(workspace)), os.getcwd() == str(workspace))
            return 1.0
    """,
        toml='version = "1.0"\n[environment]\nworkdir = "//app/sub"\n',
        cases={"only": {"x.txt": "x"}},
    )
    data = run_json(env, task_dir)
    assert data["stdout"] == "['x.txt'] True\n", data["stdout"]
    assert "the working directory /app/sub is not in this workspace: the run starts in /app" in data["notices"]


def test_a_test_sh_that_passes_another_workspace_path_is_followed(tmp_path, env, namespace):
    task_dir = make_task(
        tmp_path / "t",
        """\
        from pathlib import Path

        def verify(workspace):
            print(workspace == Path("/workspace"), Path("/workspace/a.txt").read_text())
            return 1.0
    """,
        cases={"only": {"a.txt": "here"}},
    )
    shim = (task_dir / "tests" / "test.sh").read_text().replace("--workspace /app", "--workspace /workspace")
    (task_dir / "tests" / "test.sh").write_text(shim)
    data = run_json(env, task_dir)
    assert data["stdout"] == "True here\n", data["stderr"]
    assert data["limits"]["workspace"] == "/workspace"


# ---------------------------------------------------------------------------
# 10. The probe


def _remember(answer: dict) -> None:
    """The probe's answer as the tool keeps it in its cache, for this machine and user."""
    from verifier_tui.engine import cache

    cache.store("isolation.json", {isolation._cache_key(): answer})


def test_a_forced_namespace_is_probed_now_not_taken_from_the_cache(tmp_path, env, private_cache):
    needs_namespaces()
    os.environ["XDG_CACHE_HOME"] = str(private_cache)
    _remember({"problem": "stale: said long ago", "bwrap": None, "at": time.time()})
    task_dir = make_task(tmp_path / "t")
    forced = run_json(dict(env, VERIFIER_TUI_SANDBOX="namespace"), task_dir)
    assert forced["sandbox"] == "namespace"
    # ...and the fresh answer is remembered: auto now uses it.
    assert run_json(env, task_dir)["sandbox"] == "namespace"


def test_a_negative_probe_is_asked_again_after_a_minute(tmp_path, env, private_cache):
    needs_namespaces()
    os.environ["XDG_CACHE_HOME"] = str(private_cache)
    task_dir = make_task(tmp_path / "t")
    _remember({"problem": "said just now", "bwrap": None, "at": time.time()})
    data = run_json(env, task_dir)
    assert data["sandbox"] == "copy"
    assert data["sandbox_words"] == (
        "sandbox: copy (no namespaces here: said just now): "
        "the verifier runs on this machine as you and can write your files"
    )
    _remember({"problem": "said long ago", "bwrap": None, "at": time.time() - 61})
    assert run_json(env, task_dir)["sandbox"] == "namespace"


@pytest.mark.parametrize(
    "planted",
    [
        # A run that reached the cache (the copy sandbox is the user): "no" for ever after.
        {"problem": "no namespaces here", "bwrap": None, "at": 1e12},
        # A "yes" naming a program the tool would never choose: it would run it as the user.
        {"problem": None, "bwrap": "/tmp/not-bwrap", "at": 0},
        # Shapes the tool never writes.
        {"problem": None, "at": 0},
        {"problem": 7, "bwrap": None, "at": 0},
        {"problem": None, "bwrap": "x", "at": float("nan"), "extra": 1},
        "no",
    ],
)
def test_an_answer_the_tool_did_not_write_is_asked_again(tmp_path, env, private_cache, planted):
    needs_namespaces()
    os.environ["XDG_CACHE_HOME"] = str(private_cache)
    _remember(planted)
    assert run_json(env, make_task(tmp_path / "t"))["sandbox"] == "namespace"


def test_the_cache_is_in_no_view_even_inside_a_folder_the_view_shows(tmp_path, env, namespace):
    """The tool's cache kept inside the interpreter's own folder (which the
    view shows): covered, so a verifier can neither read nor plant answers."""
    prefix = Path(sys.prefix)
    cache_home = Path(tempfile.mkdtemp(prefix="vtui-cache-", dir=prefix))
    try:
        task_dir = make_task(
            tmp_path / "t",
            f"""\
            import os

            def verify(workspace):
                print(os.path.isdir({str(prefix)!r}), os.listdir({str(cache_home / "verifier-tui")!r}))
                return 1.0
        """,
            cases={"only": {}},
        )
        data = run_json(dict(env, XDG_CACHE_HOME=str(cache_home)), task_dir)
        assert (cache_home / "verifier-tui" / "isolation.json").exists()  # the tool's answer is kept there
        assert data["sandbox"] == "namespace" and data["stdout"] == "True []\n", data["stderr"]
    finally:
        shutil.rmtree(cache_home)


def test_a_machine_without_namespaces_refuses_a_forced_one_in_one_line(tmp_path, env, private_cache):
    needs_namespaces()  # to make a machine without them, this one must have them
    task_dir = make_task(tmp_path / "t")
    tool = [sys.executable, "-m", "verifier_tui"]
    done = machine_without_namespaces(
        [*tool, "run", str(task_dir), "--python", PY], dict(env, VERIFIER_TUI_SANDBOX="namespace")
    )
    assert done.returncode == 2
    assert done.stderr.startswith("verifier-tui: VERIFIER_TUI_SANDBOX=namespace, but this machine cannot: bwrap: ")
    assert len(done.stderr.splitlines()) == 1


@pytest.mark.parametrize("asked", ["namespace", "namespaces"])
def test_test_without_a_sandbox_writes_its_junit_report_as_that_refusal(tmp_path, env, private_cache, asked):
    """test TASK --junit where no sandbox can be had said the one line and exited 2, but
    wrote no report: the last run's, all green, was left for CI to show as this one's."""
    needs_namespaces()  # to make a machine without them, this one must have them
    task_dir = make_task(tmp_path / "t", cases={"only": {}})
    write(task_dir / "cases" / "only" / "expected.json", '{"rewards": {"reward": 1.0}}')
    report = tmp_path / "report.xml"
    report.write_text('<testsuite name="last run" tests="1" failures="0" errors="0" />')
    tool = [sys.executable, "-m", "verifier_tui", "test", str(task_dir), "--python", PY]
    done = machine_without_namespaces([*tool, "--junit", str(report)], dict(env, VERIFIER_TUI_SANDBOX=asked))
    assert (done.returncode, done.stdout) == (2, "") and len(done.stderr.splitlines()) == 1, done.stderr
    error = ET.parse(report).getroot().find("testcase/error")
    assert error is not None and f"verifier-tui: {error.get('message')}\n" == done.stderr


def test_test_of_two_tasks_asks_for_the_sandbox_once_and_reports_both(tmp_path, env, private_cache):
    """test A B --junit with VERIFIER_TUI_SANDBOX=namespace: each task's session probed the sandbox
    again, and a later probe that could not be tried (no process slot to spare a moment after the
    first, a machine too busy for bwrap to answer) ended the command in one line, exit 2: A's results
    lost, no report written, the last run's (all green) left for CI. The sandbox is chosen once for
    the command: both tasks run in it."""
    needs_namespaces()
    sandboxed = bwrap_probes_that_fail(env, tmp_path / "bin", after=1)
    tasks = [make_task(tmp_path / name, cases={"only": {}}) for name in ("t1", "t2")]
    for task_dir in tasks:
        write(task_dir / "cases" / "only" / "expected.json", '{"rewards": {"reward": 1.0}}')
    report = tmp_path / "r.xml"
    report.write_text('<testsuite name="last run" tests="1" failures="0" errors="0" />')
    done = run_tool(sandboxed, "test", *tasks, "--python", PY, "--junit", report, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    cases = ET.parse(report).getroot().findall(".//testcase")
    assert len(cases) == 2 and not any(case.find("failure") is not None for case in cases), report.read_text()


def test_a_probe_short_of_file_descriptors_is_said_so_and_never_remembered(tmp_path, env, private_cache):
    """``ulimit -n`` of 10 to 12: the probe's own shell, or the view's init,
    found no descriptor, and the view was said impossible (``this machine
    cannot: … the probe of …/bwrap exited 2``); unasked, auto fell back to the
    copy and kept that, so a later run with no such limit still got the copy.
    Now one line saying descriptors ran short, and nothing remembered."""
    needs_namespaces()
    task_dir = make_task(tmp_path / "t", cases={"only": {}})
    tool = [sys.executable, "-m", "verifier_tui", "run", str(task_dir), "--python", PY]
    short = 0
    for limit in range(8, 14):
        for asked in ("namespace", "auto"):
            done = subprocess.run(
                ["sh", "-c", f'ulimit -n {limit} && exec "$@"', "sh", *tool],
                env=dict(env, VERIFIER_TUI_SANDBOX=asked),
                capture_output=True,
                text=True,
                stdin=subprocess.DEVNULL,
            )
            said = (limit, asked, done.stdout[:300], done.stderr)
            assert "this machine cannot" not in done.stderr and "sandbox: copy" not in done.stdout, said
            if "sandbox's view" in done.stderr:
                short += 1
                assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, said
                assert f"too few file descriptors (ulimit -n {limit})" in done.stderr, said
    assert short, "no limit tried made the probe run short"
    assert run_json(env, task_dir)["sandbox"] == "namespace"


@pytest.mark.parametrize(
    ("code", "said"),
    [
        (errno.EAGAIN, "too many processes"),
        (errno.ENOMEM, "too little memory"),
        (errno.ENOSPC, "no space left on the scratch file system"),
        # the system's table, which no ulimit -n of this process's would raise
        (errno.ENFILE, "the system's table of open files is full: Too many open files in system"),
    ],
)
def test_a_probe_that_cannot_start_its_process_for_now_is_said_so_and_never_remembered(
    env, private_cache, monkeypatch, code, said
):
    """The probe's process not started for want of processes (``ulimit -u``, a
    full pids cgroup), memory or room: the answer, ``no namespaces here: …:
    Resource temporarily unavailable``, was kept, so a minute of runs after
    it, with processes to spare, went to the copy sandbox. Now it is one
    line saying what ran short (for ENFILE, the system's table of open
    files, once said as this process's ``ulimit -n``), and nothing is remembered. (A fork that fails
    so cannot be had for a test as root, whom no process limit binds: the
    probe's start is made to fail as the kernel would fail it.)"""
    needs_namespaces()
    isolation.forget()  # what needs_namespaces found: the probe below is the first
    real = subprocess.run

    def cannot_start(argv, *args, **kwargs):
        if any("verifier-tui-sandbox" in str(part) for part in argv):
            raise OSError(code, os.strerror(code))
        return real(argv, *args, **kwargs)

    monkeypatch.delenv(isolation.VARIABLE, raising=False)
    monkeypatch.setattr(subprocess, "run", cannot_start)
    with pytest.raises(isolation.IsolationError) as refused:
        isolation.choose()
    assert str(refused.value).startswith("cannot try the sandbox's view: ") and said in str(refused.value)
    assert "\n" not in str(refused.value)
    monkeypatch.setattr(subprocess, "run", real)
    assert isolation.choose().kind == isolation.NAMESPACE


@pytest.mark.parametrize(
    ("stderr", "said"),
    [
        ("bwrap: Creating new namespace failed: Resource temporarily unavailable\n", "too many processes"),
        ("/usr/bin/sh: 1: Cannot fork\n", "too many processes"),
        ("bwrap: Creating new namespace failed: Cannot allocate memory\n", "too little memory"),
        ("verifier-tui-init: 7: 5: Too many open files in system\n", "the system's table of open files is full"),
    ],
)
def test_a_probe_whose_view_ran_short_of_processes_memory_or_files_is_never_remembered(
    env, private_cache, monkeypatch, stderr, said
):
    """The probe's process started, but bwrap's clone (or a shell of the view) found no process
    slot or memory, or the system no file: a pids cgroup with one slot to spare had auto mode
    remember "no namespaces here: bwrap: Creating new namespace failed: Resource temporarily
    unavailable", and move a minute of runs to the copy sandbox. (The words are bwrap's and
    dash's; the failure itself cannot be had for a test as root.)"""
    needs_namespaces()
    isolation.forget()
    real = subprocess.run

    def ran_short(argv, *args, **kwargs):
        if any("verifier-tui-sandbox" in str(part) for part in argv):
            return subprocess.CompletedProcess(argv, 1, b"", stderr.encode())
        return real(argv, *args, **kwargs)

    monkeypatch.delenv(isolation.VARIABLE, raising=False)
    monkeypatch.setattr(subprocess, "run", ran_short)
    with pytest.raises(isolation.IsolationError) as refused:
        isolation.choose()
    assert said in str(refused.value), str(refused.value)
    monkeypatch.setattr(subprocess, "run", real)
    assert isolation.choose().kind == isolation.NAMESPACE


@pytest.mark.parametrize("asked", ["auto", "namespace"])
def test_a_probe_that_times_out_is_said_so_and_never_remembered(tmp_path, env, private_cache, monkeypatch, asked):
    """A machine too loaded for bwrap to answer the probe in time: the timeout was taken for
    "no namespaces here", so auto put this run and a minute of runs after it in the copy sandbox
    (which can write the user's files), and ``namespace`` said "this machine cannot", with
    bwrap's whole command line. Now one line saying the probe did not answer, and nothing is
    remembered: the next run asks again. (A stand-in bwrap that never answers, and a short timeout.)"""
    needs_namespaces()
    isolation.forget()
    stand_in = write(tmp_path / "bwrap", "#!/bin/sh\nexec sleep 60\n")
    stand_in.chmod(0o755)
    real = isolation.bwrap_candidates
    monkeypatch.setenv(isolation.VARIABLE, asked)
    monkeypatch.setattr(isolation, "bwrap_candidates", lambda: [str(stand_in)])
    monkeypatch.setattr(isolation, "PROBE_TIMEOUT_S", 0.5)
    with pytest.raises(isolation.IsolationError) as refused:
        isolation.choose()
    said = str(refused.value)
    assert said == (
        f"cannot try the sandbox's view: {stand_in} did not answer within 0.5 s "
        "(is the machine too busy? try again once it is quieter)"
    )
    monkeypatch.setattr(isolation, "bwrap_candidates", real)
    monkeypatch.setenv(isolation.VARIABLE, "auto")
    assert isolation.choose().kind == isolation.NAMESPACE


def test_a_probe_that_timed_out_is_said_again_at_once_within_one_command(tmp_path, env, private_cache, monkeypatch):
    """``test`` of ten cases on a machine where the probe timed out: each case's run probed again,
    each waiting out the timeout, 100 s before the one line. The refusal is said again at once for a
    moment (the stand-in started once, the words saying it was not asked again), then asked again, as
    a save or ``r`` a little later must find the machine as it is; never cached for the next command."""
    needs_namespaces()
    isolation.forget()
    started = tmp_path / "started"
    stand_in = write(tmp_path / "bwrap", f"#!/bin/sh\necho x >> {started}\nexec sleep 60\n")
    stand_in.chmod(0o755)
    monkeypatch.setattr(isolation, "bwrap_candidates", lambda: [str(stand_in)])
    monkeypatch.setattr(isolation, "PROBE_TIMEOUT_S", 0.5)
    monkeypatch.setattr(isolation, "_timed_out", {})
    said = []
    for _ in range(3):
        with pytest.raises(isolation.IsolationError) as refused:
            isolation.choose()
        said.append(str(refused.value))
    assert all("did not answer within 0.5 s" in words for words in said), said
    assert said[1] == said[2] == f"{said[0]}; not asked again, a moment later", said  # honest about not asking
    assert started.read_text().count("x") == 1
    monkeypatch.setattr(isolation, "HOLD_TIMEOUT_S", 0.0)  # the hold over: asked again
    with pytest.raises(isolation.IsolationError):
        isolation.choose()
    assert started.read_text().count("x") == 2


def test_a_tmpdir_too_long_for_the_views_overlay_is_one_line_and_never_remembered(tmp_path, env, private_cache):
    """TMPDIR 3,000 characters deep: the probe's overlay names three folders in it, past the one page
    of mount options the kernel copies, so bwrap failed on a cut path. Auto said ``sandbox: copy (no
    namespaces here: bwrap: Can't make overlay mount ...`` in a 9,000-character line, ``namespace``
    refused in the same words, and the answer was cached: a minute of runs with an ordinary TMPDIR got
    the copy. Now every face says in one short line what is too long, the limit and the fix, exit 2,
    and nothing is remembered; the limit said is where the view really stops."""
    needs_namespaces()
    isolation.forget()  # what needs_namespaces found: the first command probes
    task_dir = make_task(tmp_path / "t", cases={"only": {}})
    write(task_dir / "cases" / "only" / "expected.json", '{"exit_code": 0}')

    def folder_of(length: int) -> Path:
        folder = tmp_path / "d"
        while len(str(folder)) < length - 201:
            folder /= "d" * 200
        folder /= "d" * (length - len(str(folder)) - 1)
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    deep = folder_of(3000)
    page = os.sysconf("SC_PAGE_SIZE")
    for asked in ("auto", "namespace"):
        long_env = dict(env, TMPDIR=str(deep), VERIFIER_TUI_SANDBOX=asked)
        for face in (["run"], ["run", "--json"], ["test"], ["test", "--json"], []):  # []: the TUI's launch
            done = run_tool(long_env, *face, task_dir, "--python", PY)
            said = (asked, face, done.returncode, done.stdout[:300], done.stderr[:300])
            assert done.returncode == 2 and done.stdout == "", said
            assert re.fullmatch(
                "verifier-tui: cannot try the sandbox's view: TMPDIR is too long \\(3,000 bytes; at most [0-9,]+, "
                f"as the view's overlay names three folders in it in one {page:,}-byte page of mount options\\); "
                "set TMPDIR to a shorter folder\n",
                done.stderr,
            ), said
    assert not list(deep.iterdir())  # no probe or scratch folder left behind
    cached = json.loads((private_cache / "verifier-tui" / "isolation.json").read_text())
    assert all(entry["problem"] is None for entry in cached.values()), cached
    assert run_json(env, task_dir)["sandbox"] == "namespace"  # an ordinary TMPDIR: the view at once
    # The limit said is true: a TMPDIR of that many characters gets the view, one more is refused.
    most = int(re.search("at most ([0-9,]+)", done.stderr)[1].replace(",", ""))
    at_most = dict(env, TMPDIR=str(folder_of(most)), VERIFIER_TUI_SANDBOX="namespace")
    assert run_json(at_most, task_dir)["sandbox"] == "namespace"
    done = run_tool(dict(env, TMPDIR=str(folder_of(most + 1))), "run", task_dir, "--python", PY)
    assert done.returncode == 2 and f"({most + 1:,} bytes; at most {most:,}," in done.stderr, done.stderr


def test_a_cached_yes_that_fails_is_the_runs_error_and_the_next_run_asks_again(tmp_path, env, private_cache):
    """A machine that lost its namespaces since the probe: the run is not
    quietly moved to the copy sandbox (which can write the user's files);
    it fails in one line, and the next run, asking again, says the copy."""
    needs_namespaces()
    os.environ["XDG_CACHE_HOME"] = str(private_cache)
    task_dir = make_task(tmp_path / "t", cases={"only": {}})
    run_json(env, task_dir)  # the answer of a machine that had namespaces, kept in the cache
    tool = [sys.executable, "-m", "verifier_tui"]
    done = machine_without_namespaces([*tool, "run", str(task_dir), "--python", PY], env)
    assert done.returncode == 2, done.stdout + done.stderr
    said = [line for line in done.stdout.splitlines() + done.stderr.splitlines() if "could not" in line]
    assert said and "could not set up the run's sandbox: bwrap: " in said[0], done.stdout + done.stderr
    assert "reward written" not in done.stdout
    done = machine_without_namespaces([*tool, "run", "--json", str(task_dir), "--python", PY], env)
    data = json.loads(done.stdout)
    assert data["sandbox"] == "copy" and data["rewards"] == {"reward": 1.0}
    assert data["sandbox_words"].startswith("sandbox: copy (no namespaces here: bwrap: ")
    assert data["sandbox_words"].endswith("can write your files")


# ---------------------------------------------------------------------------
# 11. SIGKILL to the tool


@pytest.mark.parametrize("command", ["run", "watch"])
def test_sigkill_to_the_tool_ends_the_run_and_the_next_start_sweeps_its_scratch(tmp_path, env, namespace, command):
    token = f"vtui-orphan-{os.getpid()}-{time.monotonic_ns()}"
    task_dir = make_task(
        tmp_path / "t",
        f"""\
        import subprocess, sys, time

        def verify(workspace):
            subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", {token!r}], start_new_session=True)
            print("started", flush=True)
            time.sleep(300)
    """,
        cases={"only": {}},
    )
    tool = subprocess.Popen(
        [sys.executable, "-m", "verifier_tui", command, str(task_dir), "--python", PY],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while not _pids_with(token) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _pids_with(token), "the verifier's child never started"
        scratch = [p for p in Path(env["TMPDIR"]).iterdir() if p.name.startswith("verifier-tui-")]
        assert len(scratch) == 1
        tool.send_signal(signal.SIGKILL)
        tool.wait()
        deadline = time.monotonic() + 5
        while _pids_with(token) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _pids_with(token), "the run outlived the tool"
        assert scratch[0].exists()  # nobody removed it...
        run_tool(env, "explain", task_dir, "--python", PY)
        deadline = time.monotonic() + 10
        while scratch[0].exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not scratch[0].exists()  # ...until the next start swept it
    finally:
        tool.kill()
        for pid in _pids_with(token):
            os.kill(pid, signal.SIGKILL)


def _pids_with(text: str) -> list[int]:
    from tests.helpers.processes import processes_with

    return processes_with(text)


def test_a_live_sessions_scratch_is_not_swept(tmp_path, env):
    task_dir = make_task(tmp_path / "t", cases={"only": {}})
    with Session(task_dir, Options(python=PY)) as session:
        session.run()
        root = session.scratch.root
        run_tool(env | {"TMPDIR": str(root.parent)}, "explain", task_dir, "--python", PY)
        assert root.exists()
    assert not root.exists()


def test_a_tracebacks_source_lines_are_the_users_code_as_written(tmp_path, namespace):
    task_dir = make_task(
        tmp_path / "t",
        """\
        from pathlib import Path

        def verify(workspace):
            return float(Path("/app/missing.txt").read_text())
    """,
        cases={"only": {}},
    )
    with Session(task_dir, Options(python=PY)) as session:
        result = session.run()
    lines = result.stderr.text.splitlines()
    frame = lines.index(f'  File "{task_dir}/tests/verifier.py", line 4, in verify')
    assert lines[frame + 1] == '    return float(Path("/app/missing.txt").read_text())'  # the code as written
    assert lines[-1].endswith(f"'{task_dir}/cases/only/workspace/missing.txt'")  # the path it meant


def test_the_command_that_reproduces_a_run_on_this_machines_network_shares_it(tmp_path, env, namespace):
    """``run --network host`` (or the TUI started so, whose ``c`` copies the
    same words): the command that reproduces the run (``command`` in
    ``--json``) had no ``--network host``, so pasted into a shell it ran in a
    network of its own, this machine's loopback services out of its reach."""
    import shlex

    from tests.helpers.commands import run_in_shell_text

    task_dir = make_task(tmp_path / "t", cases={"only": {}})
    data = run_json(env, task_dir, "--network", "host")
    assert data["limits"]["network_given"] == "host"
    again = run_in_shell_text(shlex.join(data["command"]), env, tmp_path)
    assert json.loads(again.stdout)["limits"]["network_given"] == "host", data["command"]
    assert "--network" not in run_json(env, task_dir)["command"]  # the task's own network: nothing to say


def test_a_stages_folders_read_on_the_class_are_their_descriptors(tmp_path):
    """``Stage.tests_dir`` (introspection, a debugger's watch) raised AttributeError on ``None.root``:
    on the class each folder is its descriptor; on a stage, the path under that stage's root."""
    from verifier_tui.engine.sandbox.stage import Stage

    assert Stage.reward_dir.parts == ("logs", "verifier")
    assert Stage(root=tmp_path).reward_dir == tmp_path / "logs" / "verifier"


def _trial_whose_app_is_past_a_page_of_options(folder: Path, target: Path) -> Path:
    """A hostile job's trial: /app collected deep under runs of ``:`` (bwrap doubles each in the
    overlay's options, past the page the kernel copies of them), and beside each folder a link for
    every shorter run, leading to ``target`` through bwrap's /oldroot: wherever the options are cut,
    the lower layer named is one of the links."""
    task = make_task(
        folder / "task",
        "import os\ndef verify(workspace):\n    print(sorted(os.listdir(workspace))[:4])\n    return 1.0\n",
    )
    trial = make_trial(
        folder / "runs" / "jobs" / "j" / "demo__aaaaaaa", task=task, app={f"f{i}.txt": "x" for i in range(1100)}
    )
    artifacts = deep = trial / "artifacts"
    for _ in range(8):
        for length in range(1, 250):
            (deep / (":" * length)).symlink_to("../" * 60 + "oldroot" + str(target))
        deep = deep / (":" * 250)
        deep.mkdir()
    (artifacts / "app").rename(deep / "app")
    manifest = artifacts / "manifest.json"
    entries = json.loads(manifest.read_text())
    for entry in entries:
        if entry["source"] == "/app":
            entry["destination"] = str((deep / "app").relative_to(trial))
    manifest.write_text(json.dumps(entries))
    return trial


@pytest.mark.parametrize("who", ["you", "an ordinary user"])
def test_a_trials_workspace_past_a_page_of_overlay_options_never_shows_this_machine(
    tmp_path, env, namespace, ordinary_user, who
):
    """The kernel keeps a page of mount options (4,095 bytes and the NUL): bwrap's overlay over a
    trial's /app named deep enough was cut short, and the cut path was a link the job put there,
    so /app was any folder of this machine (its /etc, the user's ~/.ssh). Such a workspace is
    copied: the run sees its own files."""
    if who == "you":
        secret = tmp_path / "secret"
        trial = _trial_whose_app_is_past_a_page_of_options(tmp_path / "jobs", secret)
        run = functools.partial(run_tool, dict(env, **{isolation.VARIABLE: "namespace"}))
    else:
        secret = ordinary_user.home / ".ssh"
        trial = _trial_whose_app_is_past_a_page_of_options(ordinary_user.root / "jobs", secret)
        run = functools.partial(ordinary_user.run, env=ordinary_user.env(**{isolation.VARIABLE: "namespace"}))
    secret.mkdir()
    (secret / "id_rsa").write_text("PRIVATE KEY")
    data = json.loads(run("run", "--json", trial).stdout)
    assert data["local"]["stdout"] == "['f0.txt', 'f1.txt', 'f10.txt', 'f100.txt']\n", data["local"]


@pytest.mark.parametrize("length", [4_000, 4_200])
def test_a_big_workspace_at_a_long_path_runs_on_a_copy_or_is_refused_in_a_line(tmp_path, env, length):
    """A big workspace under a plain path of ~4,000 characters: the overlay's options, cut at the page,
    named no folder, and every run failed with bwrap's "...,userxattr: No such file or directory". It
    is copied now; past PATH_MAX (4,096) nothing can open it, and the run is refused in one line."""
    task_dir = make_task(tmp_path / "t", RENAMES_A_FOLDER, cases={"only": {"src/a.py": "a"}})
    folder = task_dir / "cases" / "only"
    left = length - len(f"{folder}/workspace")
    names = ["d" * 200] * (left // 201) + ["e" * (left % 201 - 1)]
    fd = os.open(folder, os.O_RDONLY)  # (a path past PATH_MAX is made a folder at a time)
    for name in names:
        os.mkdir(name, dir_fd=fd)
        fd, above = os.open(name, os.O_RDONLY, dir_fd=fd), fd
        os.close(above)
    for name in ("workspace", "workspace/src"):
        os.mkdir(name, dir_fd=fd)
    for name in ["src/a.py", *(f"f{index}.txt" for index in range(1100))]:
        os.close(os.open(f"workspace/{name}", os.O_WRONLY | os.O_CREAT, dir_fd=fd))
    os.close(fd)
    ws = Path(folder, *names, "workspace")
    assert len(str(ws)) == length
    done = run_tool(dict(env, **{isolation.VARIABLE: "namespace"}), "run", "--json", task_dir, "--workspace", ws)
    if length < 4096:
        data = json.loads(done.stdout)
        assert data["rewards"] == {"reward": 1.0}, data["stderr"]
        assert data["stdout"] == ""  # a copy's rename works
    else:
        assert (done.returncode, done.stdout) == (2, ""), done.stdout
        assert done.stderr.endswith("/workspace: File name too long\n") and done.stderr.count("\n") == 1


def test_a_big_workspace_copied_for_its_long_path_says_why_and_how_to_have_it_overlaid(tmp_path, env, namespace):
    """A big workspace is an overlay, staged in one mount; one whose path is too long for the overlay's
    mount options was copied instead, file by file at each new session, and nothing said why the run
    was slow. One note says it in run's text and --json, with the way out: a shorter path."""
    task_dir = big_task_at_a_long_path(tmp_path, RENAMES_A_FOLDER)
    env = dict(env, **{isolation.VARIABLE: "namespace"})
    data = json.loads(run_tool(env, "run", "--json", task_dir, "--python", PY).stdout)
    assert data["stdout"] == "", data["stderr"]  # a copy: the rename works
    said = [n for n in data["notices"] if LONG_PATH_NOTE in n]
    assert len(said) == 1, data["notices"]
    assert "copied" in said[0] and "shorter" in said[0], said
    text = run_tool(env, "run", task_dir, "--python", PY).stdout
    assert f"note: {said[0]}" in text.splitlines(), text
    # A small workspace at that path is a copy as anywhere: nothing to say
    for index in range(1100):
        (task_dir / "cases" / "only" / "workspace" / f"f{index}.txt").unlink()
    data = json.loads(run_tool(env, "run", "--json", task_dir, "--python", PY).stdout)
    assert not any(LONG_PATH_NOTE in n for n in data["notices"]), data["notices"]


def test_a_workspace_grown_past_the_copys_bound_mid_session_becomes_an_overlay(tmp_path, namespace):
    """Its size was asked once per workspace: one that grew past 1,000 entries under
    a watching session stayed a copy, walked whole at every run that made a folder or
    a file it removed. It is asked again once the copy may hold more."""
    task_dir = make_task(tmp_path / "t", RENAMES_A_FOLDER, cases={"only": {"src/a.py": "a"}})
    ws = task_dir / "cases" / "only" / "workspace"
    with Session(task_dir, Options(python=PY, case="only")) as session:
        session.follow_changes(True)
        first = session.run()
        made = {ws / f"f{index}.txt" for index in range(1100)}
        for path in made:
            path.write_text("x")
        session.note_change(Change(frozenset(made)))
        grown = session.run()
    assert first.stdout.text == "" and not any("EXDEV" in n for n in first.notices)
    assert grown.stdout.text == "Invalid cross-device link\n", grown.stderr.text
    assert any("EXDEV" in n for n in grown.notices)


def _renames_under_a_watcher(task_dir: Path, change) -> tuple[str, str, str]:
    """What a run that renames ``src`` prints (EXDEV's words in an overlay, nothing in a copy): before
    and after ``change`` (which returns the paths it changed, for the watcher to report), then a cold
    start's in a new session."""
    with Session(task_dir, Options(python=PY, case="only")) as session:
        session.follow_changes(True)
        before = session.run()
        session.note_change(Change(frozenset(change())))
        after = session.run()
    with Session(task_dir, Options(python=PY, case="only")) as session:
        cold = session.run()
    return before.stdout.text, after.stdout.text, cold.stdout.text


EXDEV_WORDS = "Invalid cross-device link\n"


def test_a_workspace_grown_past_32_mb_mid_session_is_an_overlay_as_a_cold_start(tmp_path, namespace):
    """Its size was asked again only past 1,000 entries: a file of 40 MB saved under a watcher left
    the workspace a copy, where a cold start's is an overlay (a rename of a folder works in one and
    gets EXDEV in the other)."""
    task_dir = make_task(tmp_path / "t", RENAMES_A_FOLDER, cases={"only": {"src/a.py": "a"}})
    big = task_dir / "cases" / "only" / "workspace" / "big.bin"

    def grow() -> set[Path]:
        big.write_bytes(b"x" * (40 << 20))
        return {big}

    assert _renames_under_a_watcher(task_dir, grow) == ("", EXDEV_WORDS, EXDEV_WORDS)


def test_a_workspace_replaced_by_a_big_one_under_a_watcher_is_an_overlay(tmp_path, namespace):
    """A workspace folder replaced (the watcher's changes under it not known) by one of 1,100 files stayed a copy."""
    task_dir = make_task(tmp_path / "t", RENAMES_A_FOLDER, cases={"only": {"src/a.py": "a"}})
    ws = task_dir / "cases" / "only" / "workspace"
    big = tmp_path / "big"
    for name in ["src/a.py", *(f"f{index}.txt" for index in range(1100))]:
        write(big / name, "a")

    def replace() -> set[Path]:
        shutil.rmtree(ws)
        big.rename(ws)
        return {ws}

    assert _renames_under_a_watcher(task_dir, replace) == ("", EXDEV_WORDS, EXDEV_WORDS)


def test_a_workspace_shrunk_below_the_bound_mid_session_is_a_copy_again(tmp_path, namespace):
    """Once an overlay, a workspace stayed one after its files were removed, where a cold start copies it."""
    made = {f"f{index}.txt": "x" for index in range(1100)}
    task_dir = make_task(tmp_path / "t", RENAMES_A_FOLDER, cases={"only": {"src/a.py": "a", **made}})
    ws = task_dir / "cases" / "only" / "workspace"

    def shrink() -> set[Path]:
        for name in made:
            (ws / name).unlink()
        return {ws / name for name in made}

    assert _renames_under_a_watcher(task_dir, shrink) == (EXDEV_WORDS, "", "")


def test_an_overlaid_workspace_is_measured_again_only_when_something_under_it_changed(tmp_path, namespace, monkeypatch):
    """Under a watcher, an overlay's size was walked (up to the copy's bound: about 3 ms) at every
    staging, a save of the verifier alone too. It is walked again only when the watcher saw something
    under the workspace change: one shrunk below the bound is a copy again, as a cold start's."""
    from verifier_tui.engine.sandbox import stage

    made = {f"f{index}.txt": "x" for index in range(1100)}
    task_dir = make_task(tmp_path / "t", RENAMES_A_FOLDER, cases={"only": {"src/a.py": "a", **made}})
    ws, verifier = task_dir / "cases" / "only" / "workspace", task_dir / "tests" / "verifier.py"
    walked: list[Path] = []
    within = stage._within
    monkeypatch.setattr(stage, "_within", lambda folder, *bounds: walked.append(folder) or within(folder, *bounds))
    with Session(task_dir, Options(python=PY, case="only")) as session:
        session.follow_changes(True)
        first = session.run()
        verifier.write_text(verifier.read_text() + "# saved\n")
        session.note_change(Change(frozenset({verifier})))
        saved = session.run()
        for name in made:
            (ws / name).unlink()
        session.note_change(Change(frozenset(ws / name for name in made)))
        shrunk = session.run()
    assert (first.stdout.text, saved.stdout.text, shrunk.stdout.text) == (EXDEV_WORDS, EXDEV_WORDS, "")
    assert walked == [ws, ws]


def test_without_a_watcher_a_workspace_grown_past_the_bound_is_an_overlay_at_the_next_run(tmp_path, namespace):
    """With no watcher to count what changed, the size is asked at every staging (a walk that stops past the bound)."""
    task_dir = make_task(tmp_path / "t", RENAMES_A_FOLDER, cases={"only": {"src/a.py": "a"}})
    ws = task_dir / "cases" / "only" / "workspace"
    with Session(task_dir, Options(python=PY, case="only")) as session:
        first = session.run()
        for index in range(1100):
            (ws / f"f{index}.txt").write_text("x")
        grown = session.run()
    assert (first.stdout.text, grown.stdout.text) == ("", EXDEV_WORDS)


def test_an_overlay_shrunk_while_no_case_is_chosen_is_measured_again(tmp_path, namespace):
    """Under a watcher, a workspace shrunk below the copy's bound while no case was chosen (nothing
    noted for it then) is a copy again when its case comes back, as a cold start's would be."""
    made = {f"f{index}.txt": "x" for index in range(1100)}
    task_dir = make_task(tmp_path / "t", RENAMES_A_FOLDER, cases={"only": {"src/a.py": "a", **made}})
    ws = task_dir / "cases" / "only" / "workspace"
    with Session(task_dir, Options(python=PY, case="only")) as session:
        session.follow_changes(True)
        first = session.run()
        session.select_case(None)
        session.run()
        for name in made:
            (ws / name).unlink()
        session.note_change(Change(frozenset(ws / name for name in made)))
        session.select_case_named("only")
        back = session.run()
    with Session(task_dir, Options(python=PY, case="only")) as cold:
        cold_run = cold.run()
    assert first.stdout.text == EXDEV_WORDS
    assert back.stdout.text == cold_run.stdout.text == ""


def test_a_save_noted_while_the_first_staging_walks_is_the_next_stagings(tmp_path, namespace, monkeypatch):
    """Files deleted while the first staging measures the workspace, and the watcher's note of it
    then, leave the next run a copy (as a cold start's), not a stale overlay where a rename fails."""
    from verifier_tui.engine.sandbox import stage

    made = {f"f{index}.txt": "x" for index in range(1100)}
    task_dir = make_task(tmp_path / "t", RENAMES_A_FOLDER, cases={"only": {"src/a.py": "a", **made}})
    ws = task_dir / "cases" / "only" / "workspace"
    within, box = stage._within, {}

    def racing(folder, *bounds):
        result = within(folder, *bounds)
        if "done" not in box:  # the user deletes files while the first staging walks; the watcher notes it now
            box["done"] = True
            for name in made:
                (ws / name).unlink()
            box["s"].note_change(Change(frozenset(ws / name for name in made)))
        return result

    monkeypatch.setattr(stage, "_within", racing)
    with Session(task_dir, Options(python=PY, case="only")) as session:
        box["s"] = session
        session.follow_changes(True)
        session.run()
        second = session.run()
    monkeypatch.setattr(stage, "_within", within)
    with Session(task_dir, Options(python=PY, case="only")) as cold:
        cold_run = cold.run()
    assert second.stdout.text == cold_run.stdout.text
