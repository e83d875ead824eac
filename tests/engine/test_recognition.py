"""Recognising real tasks as they are found, and paths that are not tasks:
pytest files, plain test.sh tasks, NeMo Gym's
environment format, a task's own runner and nemo_gym, task.toml's name, and
folders that are not tasks. Real folders, the real runner, real processes.
"""

from __future__ import annotations

import shutil
import time

import pytest

from tests.helpers.tasks import PY, REPO, make_task, write
from verifier_tui.engine.model import Outcome
from verifier_tui.engine.session import Options, SelectionError, Session
from verifier_tui.engine.task.discovery import (
    DiscoveryError,
    choose_verifier,
    find_verifiers,
    no_verifier_message,
    resolve,
)
from verifier_tui.runner_source import runner_path
from verifier_tui.words.run import runner_words

# NeMo Gym's hello_world task as published: the verifier, and a pytest module
# beside it that borrows the verifier's verify at top level to test it.
HELLO_VERIFIER = """\
def verify(workspace):
    return 1.0 if (workspace / "hello.txt").is_file() else 0.25
"""
HELLO_PYTEST = """\
from pathlib import Path
from runpy import run_path

verify = run_path(str(Path(__file__).with_name("verifier.py")))["verify"]


def test_scores_a_missing_file(tmp_path):
    assert verify(tmp_path) == 0.25
"""


def run(session: Session):
    result = session.run()
    return result


# ---------------------------------------------------------------------------
# pytest files are never verifiers


def test_a_pytest_module_with_a_top_level_verify_is_not_a_verifier(tmp_path):
    task_dir = make_task(tmp_path / "hello_world", HELLO_VERIFIER, files={"test_hello_world_verifier.py": HELLO_PYTEST})
    task = resolve(task_dir)
    assert task.verifiers == [task_dir / "tests" / "verifier.py"]
    with Session(task_dir, Options(python=PY)) as session:
        result = run(session)
    assert result.inputs.verifier == task_dir / "tests" / "verifier.py"
    assert result.verdict.rewards == {"reward": 0.25}  # verifier.py ran, on an empty workspace


@pytest.mark.parametrize("name", ["test_scoring.py", "scoring_test.py", "conftest.py", "checks/test_more.py"])
def test_pytest_file_names_are_never_candidates(tmp_path, name):
    task_dir = make_task(tmp_path / "t", None, files={name: "def verify(workspace):\n    return 1.0\n"})
    assert find_verifiers(task_dir / "tests") == []
    with pytest.raises(DiscoveryError, match="pytest's test_\\*.py files are never verifiers"):
        choose_verifier(resolve(task_dir), None)


def test_verifier_py_is_preferred_to_every_other_candidate(tmp_path):
    task_dir = make_task(
        tmp_path / "t",
        "def verify(workspace):\n    return 0.5\n",
        files={
            "alpha.py": "def verify(workspace):\n    return 0.0\n",
            "deep/also.py": "def verify(workspace):\n    return 0.0\n",
        },
    )
    with Session(task_dir, Options(python=PY)) as session:
        assert session.verifier == task_dir / "tests" / "verifier.py"
        assert run(session).verdict.rewards == {"reward": 0.5}


def test_naming_a_pytest_file_runs_it_and_says_the_shim_would_not(tmp_path):
    task_dir = make_task(tmp_path / "hello_world", HELLO_VERIFIER, files={"test_hello_world_verifier.py": HELLO_PYTEST})
    named = task_dir / "tests" / "test_hello_world_verifier.py"
    with Session(named, Options(python=PY)) as session:
        assert session.verifier == named
        assert any("is a pytest file" in n and "tests/verifier.py" in n for n in session.notices())


# ---------------------------------------------------------------------------
# Plain Harbor tasks


def test_a_plain_test_sh_task_without_a_verifier_is_named_as_such(tmp_path):
    task_dir = make_task(
        tmp_path / "pytest-task",
        None,
        shim=False,
        files={
            "test.sh": "#!/bin/bash\npytest /tests/test_outputs.py\n",
            "test_outputs.py": "def test_x():\n    assert True\n",
        },
    )
    task = resolve(task_dir)
    assert task.plain_test_sh and task.verifiers == []
    message = no_verifier_message(task)
    assert "plain Harbor task" in message and "Harbor runs its tests/test.sh" in message
    assert "no verifier found" not in message
    assert not any("as you asked" in n or "helper" in n for n in task.notices())
    with Session(task_dir) as session, pytest.raises(DiscoveryError, match="plain Harbor task"):
        session.spec()


def test_a_plain_test_sh_beside_a_verifier_is_said_before_running(example):
    task_dir = example("plain-test-sh")
    with Session(task_dir, Options(python=PY)) as session:
        before = " ".join(session.notices())  # known before any run
        assert "the sandbox would not run tests/verifier.py" in before
        assert "tests/test.sh wins over a verifier.py" in before
        result = run(session)
    assert result.outcome is Outcome.REWARD_WRITTEN  # run anyway, through the runner


# ---------------------------------------------------------------------------
# NeMo Gym's environment format (episode API)

EPISODE_VERIFIER = """\
async def verify(attempt, verifier_input):
    return {"reward": 1.0}
"""
MANIFEST = """\
name: hello-episode
tasksets:
  - name: default
    tasks: tasks.jsonl
    verifier:
      implementation: verifier.py:verify   # the episode API
"""


def test_an_environment_yaml_with_tasksets_is_named_in_one_line(tmp_path):
    env_dir = tmp_path / "hello-episode"
    write(env_dir / "environment.yaml", MANIFEST)
    write(env_dir / "verifier.py", EPISODE_VERIFIER)
    for path in (env_dir, env_dir / "verifier.py"):
        with pytest.raises(DiscoveryError) as info:
            resolve(path)
        message = str(info.value)
        assert "\n" not in message
        assert "NeMo Gym environment" in message and "episode API" in message
        assert "verifier.py:verify" in message
        assert "tests/verifier.py with verify(workspace, task_data, response, state)" in message


def test_an_environment_yaml_without_tasksets_is_not_taken_for_one(tmp_path):
    folder = tmp_path / "other"
    write(folder / "environment.yaml", "name: conda-env\ndependencies:\n  - python\n")
    with pytest.raises(DiscoveryError) as info:
        resolve(folder)
    assert "episode API" not in str(info.value) and "is not a task" in str(info.value)


def test_an_episode_api_verify_in_a_harbor_task_gets_a_notice_and_the_runners_verdict(tmp_path):
    task_dir = make_task(tmp_path / "t", EPISODE_VERIFIER)
    with Session(task_dir, Options(python=PY)) as session:
        assert any("NeMo Gym's episode API" in n for n in session.notices())
        result = run(session)
    assert result.outcome is Outcome.CONTRACT_ERROR
    assert "attempt" in result.stderr.text


# ---------------------------------------------------------------------------
# task.toml's [task] name


def test_the_task_tables_name_is_the_tasks_name(tmp_path):
    task_dir = make_task(
        tmp_path / "folder-name",
        None,
        toml='[task]\nname = "acme/greeter"\n',
        files={"a.py": "def verify(workspace):\n    return 1.0\n", "b.py": "def verify(workspace):\n    return 0.0\n"},
    )
    task = resolve(task_dir)
    assert task.name == "acme/greeter"
    with pytest.raises(DiscoveryError) as info:
        choose_verifier(task, None)
    assert str(info.value).startswith("acme/greeter has several verifiers")


def test_a_task_without_a_name_is_named_after_its_folder(tmp_path):
    assert resolve(make_task(tmp_path / "plain-name")).name == "plain-name"


# ---------------------------------------------------------------------------
# Folders that are not tasks


@pytest.mark.parametrize("path", ["", "  "])
def test_an_empty_path_is_one_line(path):
    with pytest.raises(DiscoveryError, match="^an empty path: give a task folder"):
        resolve(path)


def test_the_root_folder_is_not_walked():
    started = time.monotonic()
    with pytest.raises(DiscoveryError) as info:
        resolve("/")
    message = str(info.value)
    assert message.startswith("/ is not a task: expected a task folder")
    assert len(message) < 400 and "\n" not in message
    # Not a timing assertion on the tool's speed: a guard that it did not walk
    # the file system (which took minutes), generous for a shared machine.
    assert time.monotonic() - started < 30


def test_this_repository_is_not_a_task():
    # Its tests/ folder holds a TUI test module with a top-level verify.
    for path in (REPO, REPO / "tests"):
        with pytest.raises(DiscoveryError) as info:
            resolve(path)
        assert "is not a task" in str(info.value)


def test_a_verifier_deep_in_a_folder_that_is_not_a_task_is_not_searched_for(tmp_path):
    write(tmp_path / "notes" / "a" / "b" / "checks.py", "def verify(workspace):\n    return 1.0\n")
    with pytest.raises(DiscoveryError, match="is not a task"):
        resolve(tmp_path / "notes")


def test_a_folder_of_tasks_lists_a_few_then_a_count(tmp_path):
    dataset = tmp_path / "dataset"
    for name in ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf"):
        make_task(dataset / name)
    write(dataset / "dataset.toml", "[dataset]\n")
    (dataset / "notes").mkdir()
    with pytest.raises(DiscoveryError) as info:
        resolve(dataset)
    message = str(info.value)
    assert "is a folder of 7 tasks, not a task: alpha, bravo, charlie, delta, echo and 2 more" in message
    assert "notes" not in message


def test_a_dataset_with_its_own_verifier_is_a_folder_of_tasks(tmp_path):
    dataset = tmp_path / "dataset"
    write(dataset / "dataset.toml", "[dataset]\n")
    write(dataset / "verifier.py", "def verify(workspace):\n    return 1.0\n")
    for name in ("one", "two"):
        write(dataset / name / "task.toml", 'version = "1.0"\n')
    with pytest.raises(DiscoveryError, match="is a folder of 2 tasks, not a task: one, two"):
        resolve(dataset)
    task = resolve(dataset / "one")  # each task is graded by the dataset's verifier
    assert task.verifiers == [dataset / "verifier.py"]


def test_the_parent_of_one_task_points_at_it(tmp_path):
    make_task(tmp_path / "outer" / "only")
    with pytest.raises(DiscoveryError) as info:
        resolve(tmp_path / "outer")
    assert "it holds one: only" in str(info.value)
    assert str(tmp_path / "outer" / "only") in str(info.value)


def test_real_harbor_task_folders_are_tasks_and_their_parent_a_folder_of_tasks():
    from tests.helpers.harbor import HARBOR_REAL

    if HARBOR_REAL is None:
        pytest.skip("../shared/harbor-0.26 is not here")
    tasks = HARBOR_REAL / "tasks"
    with pytest.raises(DiscoveryError, match="folder of 3 tasks, not a task: hello-file, multi-step, separate-mode"):
        resolve(tasks)
    assert resolve(tasks / "hello-file").root == tasks / "hello-file"


def test_a_task_without_task_toml_is_still_a_task_by_its_tests(tmp_path):
    task_dir = make_task(tmp_path / "bare", toml=None)
    assert resolve(task_dir).root == task_dir
    assert resolve(task_dir / "tests").root == task_dir
    assert resolve(task_dir / "tests" / "verifier.py").root == task_dir


def test_a_folder_holding_a_verifier_module_still_opens(tmp_path):
    folder = tmp_path / "scratch"
    write(folder / "check.py", "def verify(workspace):\n    return 1.0\n")
    task = resolve(folder)
    assert task.verifiers == [folder / "check.py"]


# ---------------------------------------------------------------------------
# A published task's own tests/.ng/: its runner and its nemo_gym

# A runner of the task's own that scores everything 0.25 and knows none of
# our extra flags (a different runner is enough to tell which one ran).
OWN_RUNNER = """\
import os, sys
args = sys.argv[1:]
reward_dir = args[args.index("--reward-dir") + 1] if "--reward-dir" in args else "/logs/verifier"
os.makedirs(reward_dir, exist_ok=True)
with open(os.path.join(reward_dir, "reward.txt"), "w") as handle:
    handle.write("0.25")
print("the task's own runner ran")
"""


def test_a_runner_identical_to_ours_is_recognised_as_the_same(tmp_path):
    task_dir = make_task(tmp_path / "t")
    (task_dir / "tests" / ".ng").mkdir()
    shutil.copyfile(runner_path(), task_dir / "tests" / ".ng" / "run_verifier.py")
    task = resolve(task_dir)
    assert task.own_runner is not None and task.own_runner.same_as_ours
    with Session(task_dir, Options(python=PY)) as session:
        assert not any("differs" in n for n in session.notices())
        assert runner_words(session) == "our runner (= the task's)"  # what the header says


def test_a_different_runner_is_said_and_ours_runs_by_default(tmp_path):
    task_dir = make_task(tmp_path / "t")
    write(task_dir / "tests" / ".ng" / "run_verifier.py", OWN_RUNNER)
    with Session(task_dir, Options(python=PY)) as session:
        assert any("ships its own runner" in n and "differs" in n for n in session.notices())
        result = run(session)
    assert result.verdict.rewards == {"reward": 1.0}  # ours ran the verifier
    assert result.explain is not None and result.explain.verify  # with its full resolution


def test_runner_task_runs_the_tasks_own_and_shows_what_the_contract_says(tmp_path):
    task_dir = make_task(tmp_path / "t")
    write(task_dir / "tests" / ".ng" / "run_verifier.py", OWN_RUNNER)
    with Session(task_dir, Options(python=PY, runner="task")) as session:
        assert any("running the task's own runner" in n for n in session.notices())
        result = run(session)
        assert "--runner" in result.command and "task" in result.command
    assert result.verdict.rewards == {"reward": 0.25}
    assert "the task's own runner ran" in result.stdout.text
    explain = result.explain
    assert explain.from_contract is True and explain.verify is None
    assert [row.roles for row in explain.sys_path] == [
        ("vendored helpers",),
        ("verifier's folder", "tests folder"),
    ]
    assert explain.sys_path[1].path == str(task_dir / "tests")


def test_runner_task_on_a_steps_own_verifier_shows_it_in_tests_as_the_contract_says(tmp_path):
    """--step NAME with the step's own verifier.py: staged at /tests/verifier.py (the step's tests
    laid over tests/), so the contract's verifier's folder is /tests, not the .ng folder."""
    task_dir = make_task(tmp_path / "t")
    write(task_dir / "task.toml", '[[steps]]\nname = "one"\n')
    write(task_dir / "steps" / "one" / "tests" / "verifier.py", "def verify(workspace):\n    return 0.5\n")
    write(task_dir / "tests" / ".ng" / "run_verifier.py", OWN_RUNNER)
    with Session(task_dir, Options(python=PY, runner="task", step="one")) as session:
        assert session.verifier == task_dir / "steps" / "one" / "tests" / "verifier.py"
        result = run(session)
    assert result.explain is not None and result.explain.from_contract is True
    assert [row.roles for row in result.explain.sys_path] == [
        ("vendored helpers",),
        ("verifier's folder", "tests folder"),
    ]


def test_runner_task_without_a_runner_of_the_tasks_own_is_refused(tmp_path):
    with pytest.raises(SelectionError, match="ships no runner of its own"):
        Session(make_task(tmp_path / "t"), Options(runner="task"))


def test_runner_task_with_explain_to_gives_its_own_resolution(tmp_path):
    """A copy of ours: the extras staged beside it are the ones it was written with."""
    task_dir = make_task(tmp_path / "t")
    (task_dir / "tests" / ".ng").mkdir()
    shutil.copyfile(runner_path(), task_dir / "tests" / ".ng" / "run_verifier.py")
    with Session(task_dir, Options(python=PY, runner="task")) as session:
        result = run(session)
    assert result.verdict.rewards == {"reward": 1.0}
    assert not result.explain.from_contract and result.explain.verify


def test_a_runner_with_extras_of_its_own_that_differs_is_asked_for_none(tmp_path):
    """Ours with one comment changed, as another build published it: its extras are
    a file it loads, and the stage has ours, not the ones it was written with."""
    task_dir = make_task(tmp_path / "t")
    text = runner_path().read_text(encoding="utf-8") + "\n# published by another build\n"
    write(task_dir / "tests" / ".ng" / "run_verifier.py", text)
    own = resolve(task_dir).own_runner
    assert own is not None and not own.same_as_ours
    assert not (own.knows_explain or own.knows_explain_to or own.knows_phases_to or own.knows_stack_signal)
    with Session(task_dir, Options(python=PY, runner="task")) as session:
        result = run(session)
    assert result.verdict.rewards == {"reward": 1.0}, result.stderr.text
    assert result.explain is not None and result.explain.from_contract


def test_a_single_file_runner_knows_the_flags_it_names(tmp_path):
    """A runner with its extras inside (as verifier-tui vendored one before they had
    a file of their own) is asked for each flag it names."""
    task_dir = make_task(tmp_path / "t")
    write(task_dir / "tests" / ".ng" / "run_verifier.py", OWN_RUNNER + "# --explain-to --stack-signal\n")
    own = resolve(task_dir).own_runner
    assert own is not None and own.knows_explain and own.knows_explain_to and own.knows_stack_signal
    assert not own.knows_phases_to


def test_a_runner_behind_a_link_out_of_the_tests_folder_is_not_the_tasks_own(tmp_path):
    """``tests/.ng`` a link to a folder outside the task, holding a runner: the
    staged tests/ left the link out ("skipped .ng: it links outside its
    folder"), yet the runner behind it was read, said to be what the sandbox
    runs, and ``--runner task`` ran that file of the user's from outside the task."""
    task_dir = make_task(tmp_path / "t")
    write(tmp_path / "elsewhere" / "run_verifier.py", OWN_RUNNER)
    (task_dir / "tests" / ".ng").symlink_to(tmp_path / "elsewhere")
    assert resolve(task_dir).own_runner is None
    with pytest.raises(SelectionError, match="ships no runner of its own"):
        Session(task_dir, Options(python=PY, runner="task"))
    with Session(task_dir, Options(python=PY)) as session:
        assert not any("ships its own runner" in n for n in session.notices())
        result = run(session)
    assert result.verdict.rewards == {"reward": 1.0} and "the task's own runner ran" not in result.stdout.text


NEEDS_GYM = """\
from nemo_gym.verifiers.helpers import VALUE

def verify(workspace):
    return VALUE
"""


def _gym_copy(root, value):
    verifiers = root / "nemo_gym" / "verifiers"
    write(verifiers / "__init__.py", "")
    write(verifiers / "helpers.py", f"VALUE = {value}\n")
    write(root / "nemo_gym" / "__init__.py", "")
    return verifiers


def test_the_tasks_own_nemo_gym_is_never_shadowed(tmp_path):
    task_dir = make_task(tmp_path / "t", NEEDS_GYM)
    _gym_copy(task_dir / "tests" / ".ng", 0.3)
    other = _gym_copy(tmp_path / "elsewhere", 0.9)
    with Session(task_dir, Options(python=PY, nemo_gym=other)) as session:
        result = run(session)
    assert result.verdict.rewards == {"reward": 0.3}
    resolved = result.explain.modules["nemo_gym.verifiers"].resolved
    assert resolved.startswith(str(task_dir / "tests" / ".ng" / "nemo_gym" / "verifiers"))
    assert any("is not used: the task vendors its own nemo_gym" in n for n in result.notices)
    assert not (task_dir / "tests" / ".ng" / "run_verifier.py").exists()  # the user's files are untouched


def test_a_steps_own_nemo_gym_is_what_runs_and_explain_names_it(tmp_path):
    """Harbor uploads steps/one/tests over tests/, so /tests/.ng/nemo_gym is the step's package for step
    one: it resolves, never shadowed by a copy vendored beside the runner (the interpreter's, --nemo-gym's),
    and explain names the step's files."""
    task_dir = make_task(tmp_path / "t", NEEDS_GYM)
    write(task_dir / "task.toml", '[[steps]]\nname = "one"\n')
    _gym_copy(task_dir / "steps" / "one" / "tests" / ".ng", 0.3)
    other = _gym_copy(tmp_path / "elsewhere", 0.9)
    with Session(task_dir, Options(python=PY, nemo_gym=other, step="one")) as session:
        result = run(session)
    assert result.verdict.rewards == {"reward": 0.3}, result.stderr.text
    own = task_dir / "steps" / "one" / "tests" / ".ng" / "nemo_gym"
    assert result.explain.modules["nemo_gym.verifiers"].resolved.startswith(str(own / "verifiers"))
    assert any("is not used" in n and "steps/one/tests/.ng/nemo_gym" in n for n in result.notices), result.notices


def test_a_steps_nemo_gym_files_are_laid_over_the_tasks_own(tmp_path):
    """Both vendor nemo_gym: the sandbox's package is the task's with the step's files over it (Harbor
    uploads both into /tests), each module named from where it came."""
    task_dir = make_task(tmp_path / "t", NEEDS_GYM)
    write(task_dir / "task.toml", '[[steps]]\nname = "one"\n')
    _gym_copy(task_dir / "tests" / ".ng", 0.3)
    step = task_dir / "steps" / "one" / "tests" / ".ng" / "nemo_gym"
    write(step / "verifiers" / "__init__.py", "# the step's\n")
    write(step / "verifiers" / "helpers.py", "VALUE = 0.6\n")
    with Session(task_dir, Options(python=PY, step="one")) as session:
        result = run(session)
    assert result.verdict.rewards == {"reward": 0.6}, result.stderr.text
    assert result.explain.modules["nemo_gym.verifiers"].resolved == str(step / "verifiers" / "__init__.py")
    assert result.explain.modules["nemo_gym"].resolved == str(task_dir / "tests" / ".ng" / "nemo_gym" / "__init__.py")


@pytest.mark.parametrize("level", ["verifiers", "package", "holder"])
def test_nemo_gym_option_accepts_the_package_or_its_folder(tmp_path, level):
    task_dir = make_task(tmp_path / "t", NEEDS_GYM)
    verifiers = _gym_copy(tmp_path / "gym", 0.75)
    given = {"verifiers": verifiers, "package": verifiers.parent, "holder": verifiers.parent.parent}[level]
    with Session(task_dir, Options(python=PY, nemo_gym=given)) as session:
        result = run(session)
    assert result.verdict.rewards == {"reward": 0.75}, result.stderr.text
    assert f"nemo_gym/verifiers vendored from {verifiers}" in result.notices


def test_nemo_gym_option_naming_something_else_is_one_line_and_no_run(tmp_path):
    task_dir = make_task(tmp_path / "t", NEEDS_GYM)
    (tmp_path / "random").mkdir()
    with Session(task_dir, Options(python=PY, nemo_gym=tmp_path / "random")) as session:
        result = run(session)
    assert result.outcome is Outcome.COULD_NOT_START
    assert (
        "neither a nemo_gym/verifiers folder, the nemo_gym package, nor a folder holding nemo_gym/"
        in result.start_error
    )
    assert not any("vendored from" in n for n in result.notices)
