"""Finding what to run, from the path a user typed: task folders, tests/
folders, verifier files, case folders; several verifiers or none; task.toml;
cases on disk. Everything is read from real folders; nothing is imported.

The example tasks are copied into tmp_path first, so no test can write into
the repository.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.helpers.tasks import make_task, write
from verifier_tui.engine.filters import NOT_SEARCHED
from verifier_tui.engine.session import Options, SelectionError, Session
from verifier_tui.engine.task.cases import find_cases, load_case
from verifier_tui.engine.task.discovery import (
    DiscoveryError,
    choose_verifier,
    find_verifiers,
    has_top_level_verify,
    read_task_config,
    resolve,
    verifier_notices,
)

# ---------------------------------------------------------------------------
# The four kinds of PATH


def test_task_folder(example):
    task_dir = example("hello-file")
    task = resolve(task_dir)
    assert task.root == task_dir
    assert task.tests_dir == task_dir / "tests"
    assert task.verifiers == [task_dir / "tests" / "verifier.py"]
    assert [c.name for c in task.cases] == ["correct", "missing-file", "wrong-case", "wrong-text"]
    assert task.initial_case is None and task.initial_verifier is None
    assert not task.plain_test_sh


def test_tests_folder_means_its_task(example):
    task_dir = example("sum-column")
    task = resolve(task_dir / "tests")
    assert task.root == task_dir
    assert task.tests_dir == task_dir / "tests"
    assert task.verifiers == [task_dir / "tests" / "verifier.py"]  # scoring.py has no verify
    assert [c.name for c in task.cases] == ["correct", "quantity-variant", "wrong-total"]


def test_verifier_file(example):
    task_dir = example("count-errors")
    verifier = task_dir / "tests" / "verifier.py"
    task = resolve(verifier)
    assert task.root == task_dir
    assert task.initial_verifier == verifier
    assert choose_verifier(task, None) == verifier


def test_relative_paths_are_made_absolute(example, monkeypatch):
    task_dir = example("hello-file")
    monkeypatch.chdir(task_dir.parent)
    task = resolve(Path("hello-file"))
    assert task.root == task_dir
    assert task.root.is_absolute()


def test_case_folder_selects_that_case(example):
    task_dir = example("hello-file")
    task = resolve(task_dir / "cases" / "wrong-case")
    assert task.root == task_dir
    assert task.initial_case == "wrong-case"
    with Session(task_dir / "cases" / "wrong-case") as session:
        assert session.case is not None and session.case.name == "wrong-case"
        assert session.workspace == task_dir / "cases" / "wrong-case" / "workspace"


def test_without_a_case_the_first_case_is_chosen(example):
    task_dir = example("hello-file")
    with Session(task_dir) as session:
        assert session.case.name == "correct"


def test_case_option_by_name_and_by_path(example, monkeypatch):
    task_dir = example("sum-column")
    with Session(task_dir, Options(case="quantity-variant")) as session:
        assert session.case.name == "quantity-variant"
        assert session.task_data == task_dir / "cases" / "quantity-variant" / "task_data.json"
    monkeypatch.chdir(task_dir)
    with Session(task_dir, Options(case="cases/correct")) as session:
        assert session.case.name == "correct"
        assert session.workspace == task_dir / "cases" / "correct" / "workspace"
        # a case named by its path still falls back to the task's own task data
        assert session.task_data == task_dir / "task_data.json"


def test_no_such_case_names_the_cases(example):
    task_dir = example("hello-file")
    with pytest.raises(SelectionError) as info:
        Session(task_dir, Options(case="nosuch"))
    message = str(info.value)
    assert "nosuch" in message
    for name in ("correct", "missing-file", "wrong-case", "wrong-text"):
        assert name in message


def test_missing_path(tmp_path):
    with pytest.raises(DiscoveryError, match="does not exist"):
        resolve(tmp_path / "nowhere")


def test_a_file_that_is_not_python(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("def verify(workspace):\n    return 1\n")
    with pytest.raises(DiscoveryError, match="not a Python file"):
        resolve(text)


def test_a_python_file_without_verify(tmp_path):
    helper = write(tmp_path / "helper.py", "def helper():\n    return 1\n")
    with pytest.raises(DiscoveryError) as info:
        resolve(helper)
    assert "no top-level verify" in str(info.value)


# ---------------------------------------------------------------------------
# No verifier, several verifiers


def test_folder_without_any_verifier_says_where_it_looked(tmp_path):
    folder = tmp_path / "just-files"
    write(folder / "notes.py", "x = 1\n")
    with pytest.raises(DiscoveryError) as info:
        resolve(folder)
    assert str(folder) in str(info.value)
    assert "verify" in str(info.value)


def test_task_without_a_verifier_says_where_it_looked(tmp_path):
    task_dir = make_task(tmp_path / "empty-task", None, files={"helper.py": "def helper():\n    pass\n"})
    task = resolve(task_dir)
    assert task.verifiers == []
    with pytest.raises(DiscoveryError) as info:
        choose_verifier(task, None)
    assert str(task_dir / "tests") in str(info.value)
    with Session(task_dir) as session:
        assert session.verifier is None
        with pytest.raises(DiscoveryError, match=str(task_dir / "tests")):
            session.spec()


def test_several_verifiers_need_a_choice(tmp_path):
    task_dir = make_task(
        tmp_path / "two",
        None,
        files={
            "alpha.py": "def verify(workspace):\n    return 1.0\n",
            "checks/beta.py": "async def verify(workspace):\n    return 0.0\n",
        },
    )
    task = resolve(task_dir)
    assert task.verifiers == [task_dir / "tests" / "alpha.py", task_dir / "tests" / "checks" / "beta.py"]
    with pytest.raises(DiscoveryError) as info:
        choose_verifier(task, None)
    message = str(info.value)
    assert "--verifier" in message
    assert "tests/alpha.py" in message and "tests/checks/beta.py" in message
    with pytest.raises(DiscoveryError, match="--verifier"):
        Session(task_dir)


def test_verifier_option_by_name_by_relative_path_and_by_absolute_path(tmp_path):
    task_dir = make_task(
        tmp_path / "two",
        None,
        files={
            "alpha.py": "def verify(workspace):\n    return 1.0\n",
            "checks/beta.py": "def verify(workspace):\n    return 0.0\n",
        },
    )
    task = resolve(task_dir)
    beta = task_dir / "tests" / "checks" / "beta.py"
    assert choose_verifier(task, "beta.py") == beta
    assert choose_verifier(task, "checks/beta.py") == beta
    assert choose_verifier(task, str(beta)) == beta
    with Session(task_dir, Options(verifier="alpha.py")) as session:
        assert session.verifier == task_dir / "tests" / "alpha.py"


def test_unknown_verifier_option_lists_the_verifiers(tmp_path):
    task_dir = make_task(tmp_path / "one")
    task = resolve(task_dir)
    with pytest.raises(DiscoveryError) as info:
        choose_verifier(task, "nosuch.py")
    assert "nosuch.py" in str(info.value)
    assert "tests/verifier.py" in str(info.value)


def test_verifier_py_is_what_the_shim_runs_when_there_are_several(tmp_path):
    task_dir = make_task(
        tmp_path / "t",
        None,
        files={
            "verifier.py": "def verify(workspace):\n    return 1.0\n",
            "other.py": "def verify(workspace):\n    return 0.0\n",
        },
    )
    task = resolve(task_dir)
    assert task.verifiers[0] == task_dir / "tests" / "verifier.py"
    assert choose_verifier(task, None) == task_dir / "tests" / "verifier.py"


def test_vendored_helpers_and_caches_are_not_searched(tmp_path):
    task_dir = make_task(tmp_path / "t")
    write(task_dir / "tests" / ".ng" / "nemo_gym" / "verifiers" / "base.py", "def verify(workspace):\n    pass\n")
    write(task_dir / "tests" / "__pycache__" / "junk.py", "def verify(workspace):\n    pass\n")
    write(task_dir / "tests" / ".ng" / "run_verifier.py", "def verify(workspace):\n    pass\n")
    for skipped in NOT_SEARCHED:  # the one skip list (engine/watch/filters.py), environments included
        write(task_dir / "tests" / skipped / "lib" / "check.py", "def verify(workspace):\n    pass\n")
    assert find_verifiers(task_dir / "tests") == [task_dir / "tests" / "verifier.py"]


# ---------------------------------------------------------------------------
# Recognising a verifier without importing it


@pytest.mark.parametrize(
    "top_level",
    [
        "raise RuntimeError('the top level is broken')",
        "import time\ntime.sleep(600)",
        "import sys\nsys.exit(3)",
        "this is not even valid Python (",
    ],
)
def test_verifier_is_found_without_importing_it(tmp_path, top_level):
    marker = tmp_path / "imported"
    source = (
        f"open({str(marker)!r}, 'w').write('imported')\n" + top_level + "\n\ndef verify(workspace):\n    return 1.0\n"
    )
    task_dir = make_task(tmp_path / "t", None, files={"verifier.py": source})
    task = resolve(task_dir)
    assert task.verifiers == [task_dir / "tests" / "verifier.py"]
    assert not marker.exists()


@pytest.mark.parametrize(
    "source",
    [
        "def verify(workspace):\n    return 1.0\n",
        "async def verify(workspace):\n    return 1.0\n",
        "async  def  verify (workspace):\n    return 1.0\n",
        "def _impl(workspace):\n    return 1.0\n\nverify = _impl\n",
        "from functools import partial\n\ndef score(workspace, weight):\n    return weight\n\n"
        "verify = partial(score, weight=1.0)\n",
        "import typing\nverify: typing.Callable = lambda workspace: 1.0\n",
    ],
)
def test_shapes_that_define_verify_at_top_level(tmp_path, source):
    assert has_top_level_verify(write(tmp_path / "v.py", source))


@pytest.mark.parametrize(
    "source",
    [
        "class Checks:\n    def verify(self, workspace):\n        return 1.0\n",
        "def outer():\n    def verify(workspace):\n        return 1.0\n    return verify\n",
        "def verify_all(workspace):\n    return 1.0\n",
        "verifyer = 1\n",
        "if verify == 1:\n    pass\n",
        "# def verify(workspace):\n",
        "",
    ],
)
def test_shapes_that_do_not_define_verify_at_top_level(tmp_path, source):
    assert not has_top_level_verify(write(tmp_path / "v.py", source))


def test_a_nested_verify_is_not_a_verifier(tmp_path):
    """Not found as one by its source; but tests/verifier.py is what the shim
    runs whatever it holds, so it is what a run of the task runs (and the
    runner says there is no verify at top level, as in the sandbox)."""
    task_dir = make_task(
        tmp_path / "t",
        None,
        files={
            "verifier.py": "class Checker:\n    def verify(self, workspace):\n        return 1.0\n",
            "checks.py": "class Other:\n    def verify(self, workspace):\n        return 1.0\n",
        },
    )
    task = resolve(task_dir)
    assert task.verifiers == [task_dir / "tests" / "verifier.py"]
    with pytest.raises(DiscoveryError):
        resolve(task_dir / "tests" / "verifier.py")
    with Session(task_dir) as session:
        result = session.run()
    assert result.exit_code == 2 and "defines no verify at top level" in result.stderr.text


# ---------------------------------------------------------------------------
# Plain test.sh tasks


def test_plain_test_sh_task_says_so(example):
    task_dir = example("plain-test-sh")
    task = resolve(task_dir)
    assert task.plain_test_sh
    assert task.verifiers == [task_dir / "tests" / "verifier.py"]
    notices = " ".join(verifier_notices(task, task.verifiers[0]))
    assert "the sandbox would not run tests/verifier.py" in notices
    assert "Harbor runs that script" in notices and "tests/test.sh wins over a verifier.py" in notices
    assert "as you asked" not in notices


def test_the_runner_shim_is_not_a_plain_test_sh(example):
    task = resolve(example("hello-file"))
    assert not task.plain_test_sh
    assert not any("would not run" in n for n in [*task.notices(), *verifier_notices(task, task.verifiers[0])])


def test_a_task_without_test_sh_is_not_a_plain_test_sh_task(tmp_path):
    task = resolve(make_task(tmp_path / "t", shim=False))
    assert task.test_sh is None
    assert not task.plain_test_sh


# ---------------------------------------------------------------------------
# task.toml


def test_task_toml_timeout_and_env(example):
    task = resolve(example("hello-file"))
    assert task.config.timeout_sec == 30.0
    assert task.config.env == {"STRICT": "1"}
    assert task.config.problems == ()


def test_task_toml_values_are_normalised(tmp_path):
    task_dir = make_task(tmp_path / "t", toml='[verifier]\ntimeout_sec = 5\nenv = { A = "x", N = 3 }\n')
    config = read_task_config(task_dir)
    assert config.timeout_sec == 5.0
    # Harbor's [verifier] env is dict[str, str]: it refuses N = 3, and so it is no variable here.
    assert config.env == {"A": "x"}
    assert "[verifier] env.N = 3 is not a string" in config.refused


def test_timeout_option_overrides_task_toml(example):
    task_dir = example("hello-file")
    with Session(task_dir) as session:
        assert session.timeout_s == 30.0
    with Session(task_dir, Options(timeout=2.5)) as session:
        assert session.timeout_s == 2.5


def test_broken_task_toml_is_a_notice_not_a_crash(tmp_path):
    task_dir = make_task(tmp_path / "t", toml="[verifier\ntimeout_sec = = 3\n")
    task = resolve(task_dir)
    assert task.config.timeout_sec is None and task.config.env == {}
    assert any("task.toml" in n for n in task.notices())
    with Session(task_dir) as session:
        assert any("task.toml" in n for n in session.notices())


@pytest.mark.parametrize(
    "toml, words",
    [
        ('[verifier]\ntimeout_sec = "soon"\n', "timeout_sec"),
        ("[verifier]\ntimeout_sec = -3\n", "timeout_sec"),
        ('[verifier]\nenv = "STRICT=1"\n', "env"),
        ("[verifier]\nenv = { LIST = [1, 2] }\n", "env.LIST"),
        ("verifier = 3\n", "verifier = 3 is not a table"),
    ],
)
def test_wrong_values_in_task_toml_are_notices(tmp_path, toml, words):
    task = resolve(make_task(tmp_path / "t", toml=toml))
    notices = " ".join(task.notices())
    assert words in notices


def test_task_toml_that_is_not_utf8(tmp_path):
    task_dir = make_task(tmp_path / "t", toml=None)
    (task_dir / "task.toml").write_bytes(b'[verifier]\nenv = { A = "\xff" }\n')
    task = resolve(task_dir)
    assert any("task.toml" in n for n in task.notices())


# ---------------------------------------------------------------------------
# Cases on disk


def test_response_json_and_response_txt(example):
    task_dir = example("count-errors")
    cases = {c.name: c for c in resolve(task_dir).cases}
    assert cases["response-json"].response.kind == "json"
    assert cases["response-json"].response.path == task_dir / "cases" / "response-json" / "response.json"
    assert cases["response-txt"].response.kind == "text"
    assert cases["response-txt"].response.path == task_dir / "cases" / "response-txt" / "response.txt"
    assert cases["harbor-mode"].response is None


def test_both_response_files_prefer_json_with_a_problem(tmp_path):
    case = tmp_path / "cases" / "both"
    (case / "workspace").mkdir(parents=True)
    (case / "response.json").write_text("{}")
    (case / "response.txt").write_text("hi")
    loaded = load_case(case)
    assert loaded.response.kind == "json"
    assert any("response.json" in p and "response.txt" in p for p in loaded.problems)


def test_task_data_fallbacks(tmp_path):
    task_dir = make_task(tmp_path / "t")
    for name in ("own", "from-root", "from-tests", "none"):
        (task_dir / "cases" / name / "workspace").mkdir(parents=True)
    (task_dir / "cases" / "own" / "task_data.json").write_text('{"from": "case"}')

    def task_data_of(name):
        return {c.name: c for c in find_cases(task_dir, task_dir / "tests")}[name].task_data

    # Only tests/task_data.json: every case without its own uses it.
    (task_dir / "tests" / "task_data.json").write_text('{"from": "tests"}')
    assert task_data_of("own") == task_dir / "cases" / "own" / "task_data.json"
    assert task_data_of("from-tests") == task_dir / "tests" / "task_data.json"
    # The task root's task_data.json comes before the tests folder's.
    (task_dir / "task_data.json").write_text('{"from": "root"}')
    assert task_data_of("from-root") == task_dir / "task_data.json"
    assert task_data_of("own") == task_dir / "cases" / "own" / "task_data.json"
    # Neither: no task data file (the runner passes {}).
    (task_dir / "task_data.json").unlink()
    (task_dir / "tests" / "task_data.json").unlink()
    assert task_data_of("none") is None


def test_no_case_and_no_workspace_uses_the_task_data_and_an_empty_workspace(tmp_path):
    task_dir = make_task(tmp_path / "t")
    (task_dir / "task_data.json").write_text('{"k": 1}')
    with Session(task_dir) as session:
        assert session.case is None
        assert session.workspace is None
        assert session.task_data == task_dir / "task_data.json"


def test_expected_json_forms(tmp_path):
    base = tmp_path / "cases"
    samples = {
        "rewards": {"rewards": {"reward": 1.0, "n": 3}},
        "exit": {"exit_code": 2},
        "both": {"rewards": {"reward": 0.5}, "exit_code": 0},
    }
    for name, data in samples.items():
        (base / name).mkdir(parents=True)
        (base / name / "expected.json").write_text(json.dumps(data))
    assert load_case(base / "rewards").expected.rewards == {"reward": 1.0, "n": 3}
    assert load_case(base / "exit").expected.exit_code == 2
    both = load_case(base / "both").expected
    assert both.rewards == {"reward": 0.5} and both.exit_code == 0


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            '{"rewards": {"reward": 0.3}, "tolerence": 1e-6}',
            'expected.json: unknown key "tolerence" (did you mean "tolerance"?): '
            'it holds "rewards", "exit_code" and "tolerance"',
        ),
        (
            '{"reward": 0.3, "tolerance": 0.1}',
            'expected.json names neither "rewards" nor "exit_code": '
            'for these rewards, write {"rewards": {"reward": 0.3}, "tolerance": 0.1}',
        ),
        ('{"tolerance": 0.1}', 'expected.json names neither "rewards" nor "exit_code"'),
        (
            '{"Rewards": {"reward": 1}}',
            'expected.json names neither "rewards" nor "exit_code" (did you mean "rewards"?)',
        ),
    ],
)
def test_a_misspelt_or_misplaced_key_is_named(tmp_path, text, said):
    """A misspelt "tolerence" was ignored, so the case failed on rounding with
    a hint to add "tolerance"; {"tolerance": 0.1} was told to write it as a reward."""
    case = tmp_path / "cases" / "bad"
    (case / "workspace").mkdir(parents=True)
    (case / "expected.json").write_text(text)
    loaded = load_case(case)
    assert loaded.expected is None and said in loaded.problems


@pytest.mark.parametrize(
    "text",
    [
        "{not json",
        "[1, 2]",
        '{"rewards": {"reward": "high"}}',
        '{"rewards": [1.0]}',
        '{"exit_code": "1"}',
        '{"exit_code": true}',
        '{"comment": "nothing useful"}',
        "",
    ],
)
def test_malformed_expected_json_is_a_problem_not_a_crash(tmp_path, text):
    case = tmp_path / "cases" / "bad"
    (case / "workspace").mkdir(parents=True)
    (case / "expected.json").write_text(text)
    loaded = load_case(case)
    assert loaded.expected is None
    assert len(loaded.problems) == 1 and "expected.json" in loaded.problems[0]
    assert loaded.workspace == case / "workspace"  # the rest of the case still works


def test_case_problems_reach_the_session_notices(tmp_path):
    task_dir = make_task(tmp_path / "t")
    (task_dir / "cases" / "bad" / "workspace").mkdir(parents=True)
    (task_dir / "cases" / "bad" / "expected.json").write_text("{oops")
    with Session(task_dir) as session:
        assert any("case bad" in n and "expected.json" in n for n in session.notices())


def test_case_without_workspace_folder(tmp_path):
    case = tmp_path / "cases" / "bare"
    case.mkdir(parents=True)
    (case / "expected.json").write_text('{"exit_code": 2}')
    assert load_case(case).workspace is None


def test_hidden_folders_in_cases_are_not_cases(tmp_path):
    task_dir = make_task(tmp_path / "t")
    (task_dir / "cases" / ".cache").mkdir(parents=True)
    (task_dir / "cases" / "real" / "workspace").mkdir(parents=True)
    assert [c.name for c in find_cases(task_dir)] == ["real"]


# ---------------------------------------------------------------------------
# Harbor trial folders


def test_harbor_trial_folder_gives_a_clear_message(tmp_path):
    trial = tmp_path / "jobs" / "job-1" / "hello-file__abc"
    (trial / "agent").mkdir(parents=True)
    (trial / "verifier").mkdir()
    (trial / "config.json").write_text("{}")
    (trial / "result.json").write_text('{"verifier_result": null}')
    (trial / "verifier" / "test-stdout.txt").write_text("reward file missing\n")
    with pytest.raises(DiscoveryError) as info:
        resolve(trial)
    message = str(info.value)
    assert "Harbor trial" in message
    assert "task folder" in message


# ---------------------------------------------------------------------------
# task.toml is remembered between runs (so start-up need not import tomllib),
# never past a change to it


@pytest.fixture
def config_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "verifier-tui" / "task-config.json"


def test_task_toml_is_read_again_after_every_change(tmp_path, config_cache):
    task_dir = make_task(tmp_path / "t", toml='[verifier]\ntimeout_sec = 5\nenv = { STRICT = "1" }\n')
    assert read_task_config(task_dir).env == {"STRICT": "1"}
    assert config_cache.is_file()
    assert read_task_config(task_dir).env == {"STRICT": "1"}
    toml = task_dir / "task.toml"
    before = toml.stat()
    toml.write_text('[verifier]\ntimeout_sec = 5\nenv = { STRICT = "0" }\n')  # same size
    os.utime(toml, ns=(before.st_atime_ns, before.st_mtime_ns))  # and the same modification time
    assert toml.stat().st_size == before.st_size
    config = read_task_config(task_dir)
    assert config.env == {"STRICT": "0"}
    assert config.timeout_sec == 5.0


def test_remembered_problems_and_names_come_back_the_same(tmp_path, config_cache):
    task_dir = make_task(tmp_path / "t", toml='name = "my-task"\n[verifier]\ntimeout_sec = "soon"\n')
    first = read_task_config(task_dir)
    second = read_task_config(task_dir)
    assert first == second
    assert second.name == "my-task"
    # the old top-level name still names the task here, and is noted as one Harbor ignores
    assert [p.split(" ")[0:2] for p in second.problems] == [["Harbor", "would"], ["task.toml:", "name"]]
    assert "timeout_sec" in second.problems[0]


def test_a_broken_config_cache_is_ignored(tmp_path, config_cache):
    task_dir = make_task(tmp_path / "t", toml="[verifier]\ntimeout_sec = 7\n")
    config_cache.parent.mkdir(parents=True)
    config_cache.write_text("{not json")
    assert read_task_config(task_dir).timeout_sec == 7.0
    key = str(task_dir / "task.toml")
    data = json.loads(config_cache.read_text())  # rewritten, valid, with this task in it
    data[key]["config"] = "garbage"
    config_cache.write_text(json.dumps(data))
    assert read_task_config(task_dir).timeout_sec == 7.0


def test_an_unwritable_cache_only_costs_a_parse(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    task_dir = make_task(tmp_path / "t", toml="[verifier]\ntimeout_sec = 9\n")
    assert read_task_config(task_dir).timeout_sec == 9.0
    assert read_task_config(task_dir).timeout_sec == 9.0
