"""``verifier-tui new`` and ``verifier-tui vendor`` as an author runs them: the
real console script on real folders, and what it leaves on disk."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers.commands import (
    TOOL,
    modes_bind_root,
    no_traceback,
    on_a_small_disk,
    run_from_a_removed_folder,
    run_tool,
)
from tests.helpers.tasks import EXAMPLES, REPO, write

SHIM_SOURCE = REPO / "runner" / "test.sh"
RUNNER_SOURCE = REPO / "runner" / "run_verifier.py"
NEW_FILES = {
    "task.toml",
    "instruction.md",
    "environment/Dockerfile",
    "solution/solve.sh",
    "tests/test.sh",
    "tests/.ng/run_verifier.py",
    "tests/verifier.py",
    "cases/correct/expected.json",
    "cases/correct/workspace/answer.txt",
    "cases/wrong/expected.json",
    "cases/wrong/workspace/answer.txt",
    "cases/empty/expected.json",
}


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` and its bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_new_writes_a_task_whose_cases_pass_under_test(tmp_path, env):
    task = tmp_path / "my-task"
    done = run_tool(env, "new", task)
    assert done.returncode == 0, done.stderr
    assert f"verifier-tui test {task}" in done.stdout  # the next step, said
    assert set(tree(task)) == NEW_FILES
    assert (task / "tests" / "test.sh").read_bytes() == SHIM_SOURCE.read_bytes()
    assert (task / "tests" / ".ng" / "run_verifier.py").read_bytes() == RUNNER_SOURCE.read_bytes()
    for program in ("tests/test.sh", "solution/solve.sh"):
        assert os.access(task / program, os.X_OK), program
    dockerfile = (task / "environment" / "Dockerfile").read_text()
    assert "WORKDIR /app" in dockerfile and "python" in dockerfile.lower()

    tested = run_tool(env, "test", task, "--json")
    assert tested.returncode == 0, tested.stdout + tested.stderr
    cases = {c["case"]: c for c in json.loads(tested.stdout)["cases"]}
    assert set(cases) == {"correct", "wrong", "empty"}
    assert cases["correct"]["rewards"] == {"reward": 1.0} and cases["wrong"]["rewards"] == {"reward": 0.0}
    assert cases["empty"]["rewards"] == {"reward": 0.0}
    assert list((task / "cases" / "empty" / "workspace").iterdir()) == []


def test_the_new_tasks_oracle_earns_the_full_reward(tmp_path, env):
    """solution/solve.sh, run on an empty /app, leaves what the verifier gives 1.0."""
    task = tmp_path / "oracle"
    assert run_tool(env, "new", task).returncode == 0
    app = tmp_path / "app"
    app.mkdir()
    solve = (task / "solution" / "solve.sh").read_text().replace("/app", str(app))
    subprocess.run(["bash", "-c", solve], check=True, timeout=60)
    done = run_tool(env, "run", task, "--workspace", app, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["rewards"] == {"reward": 1.0}


def test_the_new_task_toml_is_one_harbor_loads(tmp_path, env):
    """Read by the tool's Harbor 0.26.0 rules: nothing refused, the name given,
    a verifier timeout of its own, /app collected after every trial."""
    from verifier_tui.engine.task.discovery import read_task_config

    task = tmp_path / "named"
    assert run_tool(env, "new", task, "--name", "acme/hello-world").returncode == 0
    config = read_task_config(task)
    assert config.refused is None and config.problems == ()
    assert config.name == "acme/hello-world"
    assert config.verifier.timeout_given and config.timeout_sec == 60.0
    assert "/app" in [artifact.rstrip("/") for artifact in config.artifacts]


def test_new_without_a_name_takes_the_folders(tmp_path, env):
    from verifier_tui.engine.task.discovery import read_task_config

    task = tmp_path / "Sum Numbers!"
    assert run_tool(env, "new", task).returncode == 0
    config = read_task_config(task)
    assert config.refused is None and config.name == "local/Sum-Numbers"


def test_new_through_a_link_takes_the_name_typed_not_the_targets(tmp_path, env):
    """``new adder`` where adder is a link to a folder named target-0: the task
    was named local/target-0, a name the user never typed."""
    from verifier_tui.engine.task.discovery import read_task_config

    (tmp_path / "target-0").mkdir()
    (tmp_path / "adder").symlink_to(tmp_path / "target-0")
    (tmp_path / "via").symlink_to(tmp_path)
    done = run_tool(env, "new", "--no-open", tmp_path / "adder")
    assert done.returncode == 0, done.stderr
    assert read_task_config(tmp_path / "target-0").name == "local/adder"
    done = run_tool(env, "new", "--no-open", tmp_path / "via" / "sum")  # a path through a link
    assert done.returncode == 0, done.stderr
    assert read_task_config(tmp_path / "sum").name == "local/sum"


@pytest.mark.parametrize(("folder", "name"), [("_x", "local/x"), ("a..b", "local/a.b"), ("ééé", "local/eee")])
def test_a_folder_name_harbor_would_refuse_still_gives_a_name(tmp_path, env, folder, name):
    """``new _x`` was refused, blaming a --name never given."""
    from verifier_tui.engine.task.discovery import read_task_config

    done = run_tool(env, "new", "--no-open", tmp_path / folder)
    assert done.returncode == 0, done.stderr
    assert read_task_config(tmp_path / folder).name == name


def test_new_refuses_a_folder_inside_a_task_and_an_empty_path(tmp_path, env):
    """A task written in another's tests/ or cases/ is published with it, or
    runs as one of its cases; ``new ""`` said ". is not empty"."""
    assert run_tool(env, "new", "--no-open", tmp_path / "t").returncode == 0
    before = tree(tmp_path / "t")
    for inner in ("tests/sub", "cases/inner"):
        done = run_tool(env, "new", "--no-open", tmp_path / "t" / inner)
        no_traceback(done)
        assert done.returncode == 2 and f"is inside the task {tmp_path / 't'}" in done.stderr
    assert tree(tmp_path / "t") == before
    for command in ("new", "vendor"):
        done = run_tool(env, command, "")
        assert done.returncode == 2 and "an empty path: give a folder" in done.stderr


def test_the_next_command_new_prints_never_reads_as_an_option(tmp_path, env):
    done = run_tool(env, "new", "--no-open", "--", "-x", cwd=tmp_path)
    assert done.returncode == 0
    assert "next: verifier-tui test ./-x " in done.stdout


def test_the_tui_new_suggests_opens_a_task_named_like_a_command(tmp_path, env):
    """`new test` said `verifier-tui test  # the TUI`, which read as the test
    command without a path ("the following arguments are required: PATH"):
    the TUI's line names such a task so that it opens the TUI."""
    for name in ("test", "~"):  # a review after: ~ opened the user's home
        done = run_tool(env, "new", "--no-open", name, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        tui = next(line for line in done.stdout.splitlines() if "# the TUI" in line).split("#")[0]
        opened = run_tool(env, *shlex.split(tui)[1:], cwd=tmp_path)
        assert opened.returncode == 2 and "the TUI needs a terminal" in opened.stderr, opened.stderr


def test_new_refuses_a_folder_that_is_not_empty(tmp_path, env):
    task = write(tmp_path / "busy" / "notes.txt", "mine\n").parent
    done = run_tool(env, "new", task)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "is not empty" in done.stderr
    no_traceback(done)
    assert tree(task) == {"notes.txt": b"mine\n"}


@pytest.mark.parametrize("path", ["gone/..", "gone/../t", "plain.txt/../t"])
def test_new_through_a_folder_that_is_not_there_writes_nothing(tmp_path, env, path):
    """``new gone/..`` (gone not there): the path named nothing, so it was no
    folder that "is not empty", and the task's files, each made through
    ``gone/..`` once ``gone`` was made, went into the folder holding it, among
    the user's own files (``gone/../t`` made a stray ``gone`` beside ``t``)."""
    mine = write(tmp_path / "mine" / "plain.txt", "mine\n").parent
    done = run_tool(env, "new", path, "--no-open", cwd=mine)
    no_traceback(done)
    climbed = path.split("/..")[0]
    assert done.returncode == 2
    assert done.stderr == (
        f"verifier-tui: {path} climbs out of {climbed} with '..', and {climbed} is not a folder: "
        "give the new task's folder by a path without it\n"
    )
    assert tree(mine) == {"plain.txt": b"mine\n"} and os.listdir(mine) == ["plain.txt"]


def test_new_refuses_a_name_harbor_would_refuse(tmp_path, env):
    done = run_tool(env, "new", tmp_path / "t", "--name", "no-org")
    assert done.returncode == 2 and "org/name" in done.stderr and done.stderr.count("\n") == 1
    assert not (tmp_path / "t").exists()


def test_new_from_a_removed_folder_says_so(tmp_path, env):
    """``new x`` in a folder removed meanwhile said ``[Errno 2] No such file or
    directory``, naming nothing; it now says what every other command says."""
    gone = tmp_path / "gone"
    done = run_from_a_removed_folder(env, gone, "new", "x", "--no-open")
    no_traceback(done)
    assert done.returncode == 2
    assert done.stderr == (
        "verifier-tui: the folder verifier-tui was started in was removed: start it from one that exists\n"
    )


def test_new_refuses_a_name_ending_in_a_line_break(tmp_path, env):
    """``--name $'org/name\\n'`` (a name pasted with its line end): its ``$``
    matched before the line break, and ``task.toml`` got a line break inside a
    string, which is no TOML: every command then said Harbor would refuse the task."""
    done = run_tool(env, "new", tmp_path / "t", "--name", "org/name\n", "--no-open")
    no_traceback(done)
    assert done.returncode == 2 and done.stderr.startswith("verifier-tui: --name 'org/name\\n': Harbor wants org/name")
    assert not (tmp_path / "t").exists()


def test_new_under_a_file_names_the_path_and_why(tmp_path, env):
    write(tmp_path / "plain.txt", "mine\n")
    done = run_tool(env, "new", tmp_path / "plain.txt" / "sub", "--no-open")
    no_traceback(done)
    assert done.returncode == 2
    assert done.stderr == f"verifier-tui: cannot write {tmp_path / 'plain.txt' / 'sub'}: Not a directory\n"
    assert (tmp_path / "plain.txt").read_text() == "mine\n"


def test_new_says_a_path_with_a_line_break_on_its_lines_and_as_a_command_to_paste(tmp_path, env):

    path = tmp_path / "x\nwrote a new task in /etc\x1b[31m:"
    done = run_tool(env, "new", path, "--no-open")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert (
        lines[0] == f"wrote a new task in {tmp_path}/x\\nwrote a new task in /etc\\x1b[31m::"
        and "\x1b" not in done.stdout
    )
    assert sum(line.startswith("wrote a new task") for line in lines) == 1
    command = next(line for line in lines if line.startswith("next: "))[len("next: ") :].split("  #")[0]
    pasted = subprocess.run(["bash", "-c", f"printf %s {command.split(' ', 2)[2]}"], capture_output=True, text=True)
    assert pasted.stdout == str(path) and shlex.split(command)[:2] == ["verifier-tui", "test"]


def test_new_into_an_empty_folder(tmp_path, env):
    (tmp_path / "empty").mkdir()
    assert run_tool(env, "new", tmp_path / "empty", "--no-open").returncode == 0
    assert set(tree(tmp_path / "empty")) == NEW_FILES


def test_new_on_a_full_disk_names_the_tasks_file_and_leaves_nothing(tmp_path, env):
    """The disk fills while ``new`` writes: one line naming the file of the task
    it could not write (never the tool's own runner it copies from, never
    ``[Errno 28]``), and no half task, so ``new`` into the same folder works once
    there is room (a half task was "not empty")."""
    script = """disk=$1; shift
head -c 110000 /dev/zero > "$disk/filler"
"$@" new "$disk/task" --no-open; echo "status $?"
find "$disk/task" 2>/dev/null; echo "--- room made"
rm "$disk/filler"
"$@" new "$disk/task" --no-open > /dev/null; echo "status $?"
"$@" test "$disk/task" > /dev/null; echo "status $?"
"""
    done = on_a_small_disk(env, tmp_path / "disk", script)
    disk = tmp_path / "disk"
    assert done.stdout.splitlines() == ["status 2", "--- room made", "status 0", "status 0"], done.stdout + done.stderr
    (said,) = done.stderr.splitlines()
    assert said.startswith(f"verifier-tui: cannot write {disk}/task/") and said.endswith(": No space left on device")
    assert "runner/" not in said and "Errno" not in said


@pytest.mark.parametrize("into", ["a new folder", "an empty folder"])
def test_new_cut_short_takes_back_only_what_it_wrote(tmp_path, monkeypatch, into):
    """``new`` fails part way (here its runner cannot be read, as on a full disk or
    at Ctrl+C) after the user put files of their own in the folder it writes: the
    clean-up takes back the files and folders ``new`` made, and nothing of theirs
    (it used to empty the whole folder, or remove the folder it had made)."""
    from verifier_tui.engine.task import authoring

    folder = tmp_path / "tasks" / "demo"
    if into == "an empty folder":
        folder.mkdir(parents=True)

    def meanwhile() -> Path:
        write(folder / "notes.md", "mine\n")
        write(folder / "tests" / "helper.py", "X = 1\n")
        return tmp_path / "gone" / "test.sh"  # unreadable: new fails here

    monkeypatch.setattr(authoring, "shim_path", meanwhile)
    with pytest.raises(OSError):
        authoring.new_task(folder)
    assert tree(folder) == {"notes.md": b"mine\n", "tests/helper.py": b"X = 1\n"}
    assert sorted(p.name for p in folder.iterdir()) == ["notes.md", "tests"]


def test_vendor_turns_a_plain_task_into_a_runner_task_and_keeps_its_script(tmp_path, env):
    import shutil

    task = shutil.copytree(EXAMPLES / "plain-test-sh", tmp_path / "plain")
    before = tree(task)
    done = run_tool(env, "vendor", task)
    assert done.returncode == 0, done.stderr
    after = tree(task)
    assert after["tests/test.sh"] == SHIM_SOURCE.read_bytes()
    assert after["tests/test.sh.old"] == before["tests/test.sh"]  # the task's own script, kept
    assert after["tests/.ng/run_verifier.py"] == RUNNER_SOURCE.read_bytes()
    assert {
        k: v for k, v in after.items() if k not in ("tests/test.sh", "tests/test.sh.old", "tests/.ng/run_verifier.py")
    } == {k: v for k, v in before.items() if k != "tests/test.sh"}
    assert "tests/test.sh.old" in done.stdout and "tests/.ng/run_verifier.py: written" in done.stdout
    assert os.access(task / "tests" / "test.sh", os.X_OK)

    again = run_tool(env, "vendor", task)
    assert again.returncode == 0 and tree(task) == after
    assert again.stdout.count("left as it is") == 2


def test_vendor_says_a_kept_file_would_be_published_with_the_task(tmp_path, env):
    """``vendor`` kept the task's own test.sh as tests/test.sh.old and said only
    that: Harbor publishes tests/ whole, so the old script (and an old runner)
    went out with the task unless the user had read docs/tasks.md."""
    task = tmp_path / "t"
    write(task / "task.toml", 'schema_version = "1.4"\n')
    write(task / "tests" / "verifier.py", "def verify(workspace):\n    return 1.0\n")
    write(task / "tests" / "test.sh", "#!/bin/bash\necho mine\n")
    write(task / "tests" / ".ng" / "run_verifier.py", "# an older runner\n")
    done = run_tool(env, "vendor", task)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "tests/test.sh: replaced by the runner's shim; the task's own is kept as tests/test.sh.old "
        "(Harbor publishes it with tests/: delete it, or list it in tests/.harborignore, before publishing)",
        "tests/.ng/run_verifier.py: replaced by verifier-tui's runner; the task's own is kept as "
        "tests/.ng/run_verifier.py.old (Harbor publishes it with tests/: delete it, or list it in "
        "tests/.harborignore, before publishing)",
    ]


def test_vendor_never_reads_a_huge_test_sh_whole(tmp_path, env):
    """It read the task's tests/test.sh into memory to compare it with the
    shim: a 3 GB (sparse) file took 3 GB. Under a 1 GiB address space limit
    the vendor now goes as for any other script: kept beside, shim written."""
    import sys

    task = tmp_path / "t"
    assert run_tool(env, "new", task, "--no-open").returncode == 0
    (task / "tests" / "test.sh").unlink()
    with open(task / "tests" / "test.sh", "wb") as handle:
        handle.truncate(3 << 30)
    limited = [
        sys.executable,
        "-c",
        "import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)); "
        "from verifier_tui.cli import main; sys.exit(main(sys.argv[1:]))",
    ]
    done = run_tool(env, "vendor", task, tool=limited)
    no_traceback(done)
    assert done.returncode == 0, done.stderr
    assert (task / "tests" / "test.sh").read_bytes() == SHIM_SOURCE.read_bytes()
    assert (task / "tests" / "test.sh.old").stat().st_size == 3 << 30


def test_vendor_replaces_a_different_runner_and_keeps_it_beside(tmp_path, env):
    task = tmp_path / "published"
    write(task / "task.toml", 'schema_version = "1.4"\n')
    write(task / "instruction.md", "Say hello.\n")
    write(task / "tests" / "verifier.py", "def verify(workspace):\n    return 1.0\n")
    write(task / "tests" / ".ng" / "run_verifier.py", "# an older runner\n")
    write(task / "tests" / ".ng" / "run_verifier.py.old", "# kept by an earlier vendor\n")
    done = run_tool(env, "vendor", task)
    assert done.returncode == 0, done.stderr
    ng = task / "tests" / ".ng"
    assert (ng / "run_verifier.py").read_bytes() == RUNNER_SOURCE.read_bytes()
    assert (ng / "run_verifier.py.old").read_text() == "# kept by an earlier vendor\n"  # never overwritten
    assert (ng / "run_verifier.py.old.2").read_text() == "# an older runner\n"
    assert "tests/.ng/run_verifier.py: replaced" in done.stdout and "run_verifier.py.old.2" in done.stdout
    assert "tests/test.sh: written" in done.stdout
    assert run_tool(env, "run", task).returncode == 0


def test_vendor_on_a_full_disk_keeps_the_tasks_own_script_in_place(tmp_path, env):
    """The disk fills while ``vendor`` writes the shim: the task's own
    ``test.sh`` stays where it was, whole (it was moved to ``test.sh.old`` and a
    cut shim put in its place, which the next ``vendor`` then kept as "the
    task's own"); once there is room, ``vendor`` keeps the real one beside."""
    script = """disk=$1; shift
mkdir -p "$disk/t/tests"
printf 'schema_version = "1.4"\\n' > "$disk/t/task.toml"
printf '#!/bin/bash\\necho mine\\n' > "$disk/t/tests/test.sh"
cat /dev/zero > "$disk/filler" 2>/dev/null
"$@" vendor "$disk/t"; echo "status $?"
ls -A "$disk/t/tests"; cat "$disk/t/tests/test.sh"; echo "--- room made"
rm "$disk/filler"
"$@" vendor "$disk/t"; echo "status $?"
ls -A "$disk/t/tests"; cat "$disk/t/tests/test.sh.old"
"""
    done = on_a_small_disk(env, tmp_path / "disk", script)
    disk = tmp_path / "disk"
    before, after = done.stdout.split("--- room made\n")
    assert before == "status 2\ntest.sh\n#!/bin/bash\necho mine\n", done.stdout + done.stderr
    (said,) = done.stderr.splitlines()
    assert said == f"verifier-tui: cannot write {disk}/t/tests/test.sh: No space left on device"
    assert "tests/test.sh: replaced by the runner's shim; the task's own is kept as tests/test.sh.old" in after
    assert after.endswith("status 0\n.ng\ntest.sh\ntest.sh.old\n#!/bin/bash\necho mine\n"), after


def test_vendor_that_fails_half_way_says_what_it_did_before(tmp_path, env):
    """The shim is replaced, then the runner cannot be written (``tests/.ng``
    read-only): besides the line saying why, the user is told their
    ``test.sh`` is now ``test.sh.old`` (it was moved without a word)."""
    task = tmp_path / "t"
    write(task / "task.toml", 'schema_version = "1.4"\n')
    write(task / "tests" / "verifier.py", "def verify(workspace):\n    return 1.0\n")
    write(task / "tests" / "test.sh", "#!/bin/bash\necho mine\n")
    write(task / "tests" / ".ng" / "run_verifier.py", "# an older runner\n")
    (task / "tests" / ".ng").chmod(0o555)
    done = run_tool(env, "vendor", task, tool=[*modes_bind_root(), *TOOL])
    no_traceback(done)
    assert done.returncode == 2
    assert done.stderr == f"verifier-tui: cannot write {task}/tests/.ng/run_verifier.py: Permission denied\n"
    assert done.stdout.startswith(
        "tests/test.sh: replaced by the runner's shim; the task's own is kept as tests/test.sh.old ("
    )
    assert len(done.stdout.splitlines()) == 1
    assert (task / "tests" / "test.sh.old").read_text() == "#!/bin/bash\necho mine\n"
    assert (task / "tests" / ".ng" / "run_verifier.py").read_text() == "# an older runner\n"


def test_vendor_refuses_a_folder_that_is_no_task(tmp_path, env):
    write(tmp_path / "notes" / "a.txt", "x")
    done = run_tool(env, "vendor", tmp_path / "notes")
    assert done.returncode == 2 and "is not a task" in done.stderr and done.stderr.count("\n") == 1
    assert tree(tmp_path / "notes") == {"a.txt": b"x"}


def listing(root: Path) -> dict[str, tuple]:
    """Every name under ``root``, links as links (never followed), with what each holds."""
    out: dict[str, tuple] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                out[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                out[rel] = ("folder",)
            else:
                out[rel] = ("file", path.read_bytes(), path.stat().st_mode)
    return out


@pytest.mark.parametrize("link", ["tests", "tests/.ng", "tests/test.sh", "tests/.ng/run_verifier.py"])
def test_vendor_refuses_to_write_through_a_link(link, tmp_path, env):
    """A task from elsewhere whose ``tests/.ng`` (or ``tests``, or a file
    vendor writes) is a link out of it: vendor wrote the runner there. Now
    one line names the link, exit 2, and nothing is written anywhere."""
    task = tmp_path / "task"
    write(task / "task.toml", 'version = "1.0"\n')
    write(task / "tests" / "verifier.py", "def verify(workspace):\n    return 1.0\n")
    write(task / "tests" / "test.sh", "#!/bin/sh\necho the task's own\n")
    write(task / "tests" / ".ng" / "run_verifier.py", "# an older runner\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (task / link).rename(elsewhere / Path(link).name)  # what the task shows through the link lives outside it
    (task / link).symlink_to(elsewhere / Path(link).name)
    before = listing(tmp_path)
    done = run_tool(env, "vendor", task)
    no_traceback(done)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == "" and done.stderr.count("\n") == 1, done.stderr
    assert f"{link} is a link to {elsewhere / Path(link).name}" in done.stderr
    assert listing(tmp_path) == before


def test_the_readmes_say_how_to_start_a_task_and_link_to_what_exists():
    import re

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Write your first task", 1)[1].split("\n## ", 1)[0]
    for words in (
        "verifier-tui new ",
        "verifier-tui test ",
        "verifier-tui vendor ",
        "tests/.ng/run_verifier.py",
        "cases/",
        "Publishing",
    ):
        assert words in section, words
    examples = EXAMPLES.parent / "README.md"
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", examples.read_text(encoding="utf-8"))
    assert links and all((examples.parent / link).exists() for link in links), links


def test_vendor_on_what_is_not_a_task_folder_says_what_it_is(tmp_path, env):
    task = tmp_path / "t"
    assert run_tool(env, "new", task, "--no-open").returncode == 0
    expected = {
        task / "tests": f"{task / 'tests'} is a tests/ folder: vendor its task, {task}",
        task / "cases" / "correct": f"{task / 'cases' / 'correct'} is a case folder: vendor its task, {task}",
        task / "tests" / "verifier.py": f"{task / 'tests' / 'verifier.py'} is a file: give the task folder (",
        tmp_path / "nothing": f"{tmp_path / 'nothing'} does not exist: give the task folder (",
    }
    for path, says in expected.items():
        done = run_tool(env, "vendor", path)
        assert done.returncode == 2 and done.stderr.startswith(f"verifier-tui: {says}"), done.stderr


def test_vendor_on_a_harbor_trial_or_job_says_what_it_is(tmp_path, env):
    """``vendor`` on a trial folder (or its job) said only `is not a task:
    expected a task folder (...)`, where every other command names it a trial."""
    from tests.helpers.harbor import make_job

    task = tmp_path / "t"
    assert run_tool(env, "new", task, "--no-open").returncode == 0
    job = make_job(tmp_path / "jobs" / "j", {"t__abc": {"task": task}})
    for path, kind in ((job / "t__abc", "trial"), (job, "job")):
        done = run_tool(env, "vendor", path)
        assert done.returncode == 2, done.stderr
        assert done.stderr == f"verifier-tui: {path} is a Harbor {kind} folder, not a task: vendor the task it ran\n"
    # Harbor's folder of jobs (jobs/) was still "not a task: expected a task folder (...)", where audit and
    # run name it; it is named as they name it, and a place inside a trial (its agent/) as in that trial.
    jobs = job.parent
    done = run_tool(env, "vendor", jobs)
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"verifier-tui: {jobs} is a Harbor jobs folder, not a task: vendor the tasks its jobs ran\n"
    inside = job / "t__abc" / "agent"
    done = run_tool(env, "vendor", inside)
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        f"verifier-tui: {inside} is in the Harbor trial folder {job / 't__abc'}, not a task: vendor the task it ran\n"
    )
    assert not list(jobs.rglob("run_verifier.py")) and not list(jobs.rglob("test.sh.old")), "nothing written"


@pytest.mark.parametrize("inner", ["artifacts/mine", "agent/mine", "artifacts/app/mine"])
def test_new_refuses_a_folder_in_a_trial_which_every_command_would_open_as_that_trial(tmp_path, env, inner):
    """``new TRIAL/artifacts/mine`` wrote a task there, and its own ``next: verifier-tui test ...``
    then tested the trial, not the task: every command takes a place inside a trial for that trial."""
    from tests.helpers.harbor import make_job

    task = tmp_path / "t"
    assert run_tool(env, "new", task, "--no-open").returncode == 0
    trial = make_job(tmp_path / "jobs" / "j", {"t__abc": {"task": task}}) / "t__abc"
    before = listing(trial)
    done = run_tool(env, "new", trial / inner, "--no-open")
    no_traceback(done)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith(f"verifier-tui: {trial / inner} is in the Harbor trial folder {trial}: "), done.stderr
    assert listing(trial) == before, "nothing written"


@pytest.mark.parametrize("inner", ["", "sub"])
def test_new_on_a_loop_of_links_says_so_in_one_line(tmp_path, env, inner):
    """``new loop`` (or ``new loop/sub``), loop a link to a link back to it: a traceback
    (``RuntimeError: Symlink loop``), exit 1, from looking for a task around the folder."""
    here = tmp_path / "here"
    here.mkdir()
    (here / "loop").symlink_to("back")
    (here / "back").symlink_to("loop")
    done = run_tool(env, "new", here / "loop" / inner, "--no-open")
    no_traceback(done)
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.splitlines()) == 1 and "loop" in done.stderr, done.stderr
    assert sorted(os.listdir(here)) == ["back", "loop"]


def test_new_and_vendor_on_a_dangling_link_or_a_fifo_say_what_it_is(tmp_path, env):
    """Each was "a file" to ``vendor``, and a link to nothing "exists" to ``new``."""
    (tmp_path / "gone").symlink_to("nowhere")
    os.mkfifo(tmp_path / "pipe")
    expected = {
        "gone": f"{tmp_path / 'gone'} is a link to nowhere, which does not exist",
        "pipe": f"{tmp_path / 'pipe'} is a FIFO (a named pipe)",
    }
    for name, says in expected.items():
        made = run_tool(env, "new", tmp_path / name, "--no-open")
        assert made.returncode == 2
        assert made.stderr == f"verifier-tui: {says}: new writes a task into a new or empty folder\n"
        vendored = run_tool(env, "vendor", tmp_path / name)
        assert vendored.returncode == 2 and vendored.stderr.startswith(f"verifier-tui: {says}: give the task folder (")
    assert os.readlink(tmp_path / "gone") == "nowhere" and not (tmp_path / "nowhere").exists()


def test_vendor_where_tests_ng_is_a_file_says_so_and_writes_nothing(tmp_path, env):
    task = tmp_path / "t"
    assert run_tool(env, "new", task, "--no-open").returncode == 0
    shutil.rmtree(task / "tests" / ".ng")
    (task / "tests" / ".ng").write_text("mine")
    (task / "tests" / "test.sh").write_text("#!/bin/sh\necho own\n")
    before = tree(task)
    done = run_tool(env, "vendor", task)
    assert done.returncode == 2
    assert (
        done.stderr
        == f"verifier-tui: {task / 'tests' / '.ng'} is a file, not a folder: move it away and vendor again\n"
    )
    assert tree(task) == before


def test_vendor_on_what_the_user_cannot_read_says_so(ordinary_user):
    """Run as an ordinary user: a task folder of mode 000 was "not a task:
    expected a task folder (...)", of a task; a tests/test.sh of mode 000
    (the shim, unchanged) was "cannot write tests/test.sh", a file vendor
    only meant to read. The folder is said unreadable; the file, not known
    to be the shim, is replaced and kept beside, as one that differs is."""
    sealed, task = ordinary_user.root / "sealed", ordinary_user.root / "t"
    for folder in (sealed, task):
        ordinary_user.run("new", folder, "--no-open")
    sealed.chmod(0)
    done = ordinary_user.run("vendor", sealed)
    no_traceback(done)
    assert (done.returncode, done.stderr) == (2, f"verifier-tui: {sealed} cannot be read (Permission denied)\n")
    shim = task / "tests" / "test.sh"
    shim.chmod(0)
    done = ordinary_user.run("vendor", task)
    no_traceback(done)
    assert done.returncode == 0, done.stderr
    assert "tests/test.sh: replaced by the runner's shim; the task's own is kept as tests/test.sh.old" in done.stdout
    assert shim.read_bytes() == SHIM_SOURCE.read_bytes()
    assert (task / "tests" / "test.sh.old").stat().st_mode & 0o777 == 0  # the task's own, as it was


def test_new_into_a_folder_the_user_cannot_read_says_so(ordinary_user):
    """``new FOLDER``, an empty folder the user may write but not list (mode
    333), run as an ordinary user: it said "cannot write FOLDER: Permission
    denied" of a folder it could write, and only failed to look into."""
    folder = ordinary_user.root / "unlisted"
    folder.mkdir()
    ordinary_user.own(ordinary_user.root)
    folder.chmod(0o333)
    done = ordinary_user.run("new", folder, "--no-open")
    no_traceback(done)
    assert (done.returncode, done.stderr) == (
        2,
        f"verifier-tui: {folder} cannot be read (Permission denied): "
        "new writes a task only into a new folder or one it sees is empty\n",
    )
    folder.chmod(0o755)
    assert os.listdir(folder) == []


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda p: p.mkdir(), "tests/verifier.py is a folder"),
        (lambda p: os.mkfifo(p), "tests/verifier.py is a FIFO (a named pipe)"),
    ],
)
def test_vendor_where_tests_verifier_py_is_no_file_says_what_it_is(make, says, tmp_path, env):
    """It said "tests/verifier.py does not exist yet" of a folder (or a FIFO)
    standing there, which the author then looks at and finds. (A link, to
    nothing too, is the next test's.)"""
    task = shutil.copytree(EXAMPLES / "hello-file", tmp_path / "t")
    (task / "tests" / "verifier.py").unlink()
    make(task / "tests" / "verifier.py")
    done = run_tool(env, "vendor", task)
    assert done.returncode == 0, done.stderr
    no_traceback(done)
    assert "does not exist yet" not in done.stdout
    assert f"{says}: the shim runs it as the verifier" in done.stdout


@pytest.mark.parametrize("target", ["../solution", "../solution/solve.sh", "gone.py", "x\nverifier-tui: forged"])
def test_vendor_where_tests_verifier_py_is_a_link_says_what_run_says(target, tmp_path, env):
    """A link to a folder was "tests/verifier.py is a folder" (vendor looked through it), a link to a
    file got no line at all, while ``run`` says it is a link it does not follow: both now say the same."""
    task = shutil.copytree(EXAMPLES / "hello-file", tmp_path / "t")
    (task / "tests" / "verifier.py").unlink()
    (task / "tests" / "verifier.py").symlink_to(target)
    done = run_tool(env, "vendor", task)
    assert done.returncode == 0, done.stderr
    no_traceback(done)
    shown = target.replace("\n", "\\n")
    says = f"tests/verifier.py is a link to {shown}, and links are not followed"
    [line] = [line for line in done.stdout.splitlines() if line.startswith("tests/verifier.py")]
    assert line.startswith(says), done.stdout
    ran = run_tool(env, "run", task, "--case", "correct")
    assert ran.returncode != 0 and says in ran.stderr, ran.stderr
    assert line.split(says)[1] in ran.stderr, (line, ran.stderr)
