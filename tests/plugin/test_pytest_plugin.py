"""The pytest plugin, driven by pytest's own ``pytester``: each
inner pytest is a real process, as a user starts it, with the package's
``pytest11`` entry point loading the plugin."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.helpers.commands import inner_pytest_options, run_tool, signal_when
from tests.helpers.harbor import READS_HELLO, SEPARATE, sandbox_trial
from tests.helpers.processes import SAY_STARTED, has_started, wait_none_with
from tests.helpers.tasks import PY, REPO, copy_example, make_task
from verifier_tui.engine.procfs import machine_cpus

PYTHON_OPTION = "--verifier-python=" + PY


@pytest.fixture
def tasks(pytester):
    """``tasks/`` in the inner run's folder: two examples with cases (one
    case made to fail) and one task without cases."""
    folder = pytester.path / "tasks"
    for name in ("hello-file", "sum-column", "plain-test-sh"):
        copy_example(name, folder / name)
    (folder / "sum-column" / "cases" / "wrong-total" / "expected.json").write_text('{"rewards": {"reward": 0.5}}')
    return folder


def run(pytester, *args):
    return pytester.runpytest_subprocess(PYTHON_OPTION, "-p", "no:cacheprovider", *args, timeout=300)


def one_case_task(pytester, name: str, verifier: str | None = None, **options):
    """A task ``tasks/<name>`` of one case, ``only``, that expects a reward of 1.0
    (the default verifier scores 1.0)."""
    if verifier is not None:
        options["verifier"] = verifier
    task_dir = make_task(pytester.path / "tasks" / name, cases={"only": {}}, **options)
    (task_dir / "cases" / "only" / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    return task_dir


def test_each_case_is_an_item_named_task_case(pytester, tasks):
    done = run(pytester, "--verifier-cases", "tasks", "-v", "-rs")
    done.assert_outcomes(passed=6, failed=1, skipped=1)
    done.stdout.fnmatch_lines(
        # Each id's path is the task's folder, from the rootdir (here) as pytest names a test file.
        [
            "tasks/hello-file::correct PASSED*",
            "tasks/hello-file::wrong-text PASSED*",
            "tasks/sum-column::wrong-total FAILED*",
        ]
    )
    # plain-test-sh has no cases: one skipped test saying so, and how to make one (it was left out unsaid).
    done.stdout.fnmatch_lines(
        [
            "tasks/plain-test-sh::(task) SKIPPED*",
            "SKIPPED * tasks/plain-test-sh/task.toml: not tested: it has no case: make one with verifier-tui run TASK*",
        ]
    )
    # The failure says what `verifier-tui run` would: the verdict against expected.json, the reward file,
    # the exit code in words.
    done.stdout.fnmatch_lines(
        [
            "*tasks/sum-column::wrong-total: the run did not match the case's expected.json",
            "task sum-column * case wrong-total *",
            "exit 0 · reward written · *",
            'verdict: {"reward": 0.0}*',
            'expected {"rewards": {"reward": 0.5}}: DID NOT MATCH',
            "reward.txt: 0.0",
        ]
    )
    assert done.ret == 1


def test_a_raising_verifier_reports_the_traceback_on_the_users_files(pytester, tasks):
    (tasks / "hello-file" / "cases" / "missing-file" / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    done = run(pytester, "--verifier-cases", "tasks/hello-file", "-k", "missing")
    done.assert_outcomes(failed=1, deselected=3)
    text = done.stdout.str()
    assert "exit 1 · verifier raised" in text and "Traceback (most recent call last)" in text
    assert f'File "{tasks / "hello-file" / "tests" / "verifier.py"}"' in text  # the user's file, not the scratch copy
    assert "FileNotFoundError" in text and "/stage-" not in text  # no scratch path is left in it


def test_k_selects_a_task_by_the_folder_its_ids_show(pytester):
    # A task whose task.toml names it otherwise than its folder: -k by the folder in the id selected
    # nothing, as the id's own words are what -k takes on any test; -k by its [task] name still selects it.
    one_case_task(pytester, "hello-world", toml='[task]\nname = "myorg/greeter"\n')
    one_case_task(pytester, "other")
    run(pytester, "--verifier-cases", "tasks", "-k", "hello-world").assert_outcomes(passed=1, deselected=1)
    run(pytester, "--verifier-cases", "tasks", "-k", "greeter").assert_outcomes(passed=1, deselected=1)


def test_k_x_lf_and_junitxml_work_on_cases(pytester, tasks):
    done = pytester.runpytest_subprocess(PYTHON_OPTION, "--verifier-cases", "tasks", "-k", "hello-file and wrong")
    done.assert_outcomes(passed=2, deselected=6)
    done = pytester.runpytest_subprocess(
        PYTHON_OPTION, "--verifier-cases", "tasks", "-x", "-k", "wrong-total or correct"
    )
    done.assert_outcomes(passed=2, failed=1, deselected=5)
    # --lf: only the case that failed last time.
    done = pytester.runpytest_subprocess(PYTHON_OPTION, "--verifier-cases", "tasks", "--lf", "-v")
    done.assert_outcomes(failed=1, deselected=7)
    done.stdout.fnmatch_lines(["tasks/sum-column::wrong-total FAILED*"])
    report = pytester.path / "report.xml"
    run(pytester, "--verifier-cases", "tasks", f"--junitxml={report}")
    cases = {(c.get("classname"), c.get("name")): c for c in ET.parse(report).getroot().iter("testcase")}
    assert len(cases) == 8
    assert cases[("tasks.plain-test-sh", "(task)")].find("skipped") is not None  # no case: said, not run
    assert cases[("tasks.sum-column", "wrong-total")].find("failure") is not None  # JUnit's classname: a.b for a/b
    assert cases[("tasks.hello-file", "correct")].find("failure") is None
    # -x stops at the first failure: hello-file::correct, made to fail, is collected first.
    correct = tasks / "hello-file" / "cases" / "correct" / "expected.json"
    correct.write_text('{"rewards": {"reward": 0.5}}')
    done = pytester.runpytest_subprocess(PYTHON_OPTION, "--verifier-cases", "tasks/hello-file", "-x")
    done.assert_outcomes(failed=1)  # the other three cases never ran
    correct.write_text('{"rewards": {"reward": 1.0}}')


@pytest.mark.parametrize("xdist", [False, True])
def test_cases_run_in_the_copy_sandbox_are_said_to_write_the_users_files(pytester, monkeypatch, xdist):
    """A later tour: in the copy sandbox (asked for, or a CI machine whose
    policy refuses user namespaces) a case's verifier wrote a file of the
    user's, and pytest's output and ``--junitxml`` report said nothing of it,
    where ``verifier-tui test`` says so after its summary and in its JUnit."""
    from verifier_tui.engine.sandbox.isolation import COPY_RISK

    mark = pytester.path / "written-by-the-case"
    one_case_task(pytester, "t", f"def verify(workspace):\n    open({str(mark)!r}, 'w').close()\n    return 1.0\n")
    monkeypatch.setenv("VERIFIER_TUI_SANDBOX", "copy")
    more: tuple[str, ...] = ()
    if xdist:
        pytest.importorskip("xdist")
        monkeypatch.setenv("PYTEST_ADDOPTS", inner_pytest_options("xdist", "xdist.looponfail"))
        more = ("-n", "2")
    report = pytester.path / "report.xml"
    done = run(pytester, "--verifier-cases", "tasks", f"--junitxml={report}", *more)
    done.assert_outcomes(passed=1)
    assert mark.exists()
    said = [line for line in done.stdout.lines if COPY_RISK in line]
    assert len(said) == 1 and said[0].startswith("sandbox: copy"), done.stdout.str()
    # after pytest's final line, as `test` says it after its own summary (a later review: it came before)
    *_, final, last = [line for line in done.stdout.lines if line.strip()]
    assert " 1 passed" in final and last == said[0], done.stdout.str()
    properties = {p.get("name"): p.get("value") for p in ET.parse(report).getroot().iter("property")}
    assert properties.get("sandbox") == said[0], properties
    # A later review: no case run, no line (the --junitxml had no such property already)
    done = run(pytester, "--verifier-cases", "tasks", f"--junitxml={report}", "-k", "nomatch", *more)
    assert not [line for line in done.stdout.lines if COPY_RISK in line], done.stdout.str()
    assert "sandbox" not in {p.get("name") for p in ET.parse(report).getroot().iter("property")}
    # nor for a case that failed before its verifier ran (an expected.json cut short), as `test` says nothing
    cases = pytester.path / "tasks" / "t" / "cases"
    shutil.copytree(cases / "only", cases / "cut")
    (cases / "cut" / "expected.json").write_text('{"rewards": ')
    mark.unlink()
    done = run(pytester, "--verifier-cases", "tasks", f"--junitxml={report}", "-k", "cut", *more)
    done.assert_outcomes(failed=1)
    assert not mark.exists() and not [line for line in done.stdout.lines if COPY_RISK in line], done.stdout.str()
    assert "sandbox" not in {p.get("name") for p in ET.parse(report).getroot().iter("property")}
    shutil.rmtree(cases / "cut")
    # and with -q, or pytest's terminal reporter off, said once at most, with no traceback
    for quiet in ("-q", "-p no:terminal"):
        done = run(pytester, "--verifier-cases", "tasks", *quiet.split(), *more)
        assert done.ret == 0 and "Traceback" not in done.stderr.str() + done.stdout.str(), done.stderr.str()
        assert len([line for line in done.stdout.lines if COPY_RISK in line]) == (quiet == "-q"), done.stdout.str()


def test_under_xdist(pytester, tasks, monkeypatch):
    pytest.importorskip("xdist")
    monkeypatch.setenv("PYTEST_ADDOPTS", inner_pytest_options("xdist", "xdist.looponfail"))
    report = pytester.path / "report.xml"
    done = run(pytester, "--verifier-cases", "tasks", "-n", "2", f"--junitxml={report}")
    done.assert_outcomes(passed=6, failed=1, skipped=1)
    done.stdout.fnmatch_lines(["*2 workers*", "*FAILED tasks/sum-column::wrong-total*"])
    assert len(list(ET.parse(report).getroot().iter("testcase"))) == 8


def test_the_plugin_and_verifier_tui_test_agree(pytester, tasks, env):
    report = pytester.path / "report.xml"
    run(pytester, "--verifier-cases", "tasks", f"--junitxml={report}")
    by_pytest = {
        f"{c.get('classname').removeprefix('tasks.')}::{c.get('name')}": c.find("failure") is None
        for c in ET.parse(report).getroot().iter("testcase")
        if c.find("skipped") is None  # plain-test-sh, which `test` says under `without_cases`
    }
    done = run_tool(env, "test", "--json", tasks, "--python", PY)
    by_test = {case["id"]: case["expected_matched"] for case in json.loads(done.stdout)["cases"]}
    assert by_pytest == by_test and list(by_test.values()).count(False) == 1


def test_cases_and_the_users_own_tests_together(pytester, tasks):
    pytester.makepyfile(test_mine="def test_mine():\n    assert True\n")
    done = run(pytester, "--verifier-cases", "tasks/hello-file", "test_mine.py")
    done.assert_outcomes(passed=5)
    # Without test paths on the command line, only the cases are collected.
    done = run(pytester, "--verifier-cases", "tasks/hello-file", "--co", "-q")
    assert "test_mine" not in done.stdout.str() and "4 tests collected" in done.stdout.str()


def test_bad_paths_and_interpreters_are_usage_errors_and_an_untestable_task_a_failing_item(pytester, tasks):
    done = run(pytester, "--verifier-cases", "")  # was every task below the folder pytest ran in
    assert done.ret == pytest.ExitCode.USAGE_ERROR
    done.stderr.fnmatch_lines(["ERROR: --verifier-cases: an empty path: *"])
    done = run(pytester, "--verifier-cases", "nowhere")
    assert done.ret == pytest.ExitCode.USAGE_ERROR
    done.stderr.fnmatch_lines(["ERROR: --verifier-cases: */nowhere does not exist"])
    done = pytester.runpytest_subprocess("--verifier-cases", "tasks", "--verifier-python", "/nonexistent/python3")
    assert done.ret == pytest.ExitCode.USAGE_ERROR
    done.stderr.fnmatch_lines(["ERROR: --verifier-python */nonexistent/python3*"])
    # A collection error stopped every other task's cases too; `test` goes on with them, and so does this.
    done = run(pytester, "--verifier-cases", "tasks/plain-test-sh", "--verifier-cases", "tasks/hello-file")
    done.assert_outcomes(passed=4, failed=1)
    done.stdout.fnmatch_lines(["*plain-test-sh::(task): not run: no case to test: *plain-test-sh has no cases folder*"])
    assert "Traceback" not in done.stdout.str()


def test_a_task_of_several_verifiers_names_what_to_run_not_an_option_the_plugin_lacks(pytester, tasks):
    tests = tasks / "hello-file" / "tests"
    (tests / "verifier.py").rename(tests / "a.py")
    (tests / "b.py").write_text((tests / "a.py").read_text())
    said = (
        "hello-file has several verifiers (tests/a.py, tests/b.py): "
        "the plugin tests one verifier a task (verifier-tui test TASK --verifier FILE chooses one)"
    )
    done = run(pytester, "--verifier-cases", "tasks")  # found in a folder: an item that fails
    done.stdout.fnmatch_lines([f"*hello-file::(task): not run: {said}"])
    done.assert_outcomes(passed=2, failed=2, skipped=1)
    done = run(pytester, "--verifier-cases", "tasks/hello-file")  # named: a usage error, as `test` exits 2
    assert done.ret == pytest.ExitCode.USAGE_ERROR
    done.stderr.fnmatch_lines([f"ERROR: --verifier-cases: {said}"])


def test_an_unusable_expected_json_is_a_failing_item(pytester, tasks):
    (tasks / "hello-file" / "cases" / "wrong-case" / "expected.json").write_text("{oops")
    done = run(pytester, "--verifier-cases", "tasks/hello-file")
    done.assert_outcomes(passed=3, failed=1)
    done.stdout.fnmatch_lines(["*hello-file::wrong-case: not run: expected.json is not valid JSON*"])


def test_a_run_that_could_not_start_fails_saying_the_verifier_was_not_run(pytester):
    """A task.toml env value too big for one exec: the sandbox could not start the runner. Its item read
    ``expected exit 1, got exit 1 · could not start`` (the sandbox's own exit 1) with no reason."""
    toml = '[verifier]\nenv = { BIG = "' + "a" * 200_000 + '" }\n'
    task = one_case_task(pytester, "big", toml=toml)
    (task / "cases" / "only" / "expected.json").write_text('{"exit_code": 1}')
    report = pytester.path / "report.xml"
    done = run(pytester, "--verifier-cases", "tasks", f"--junitxml={report}")
    done.assert_outcomes(failed=1)
    [failure] = ET.parse(report).iter("failure")
    message = failure.get("message")
    assert message.startswith("expected exit 1, got could not start: could not set up the run's sandbox"), message
    done.stdout.fnmatch_lines(["*DID NOT MATCH: the verifier was not run: could not set up the run's sandbox*"])


def test_a_run_that_could_not_start_names_the_plugins_own_option(pytester):
    """A test.sh passing --workspace over the chosen interpreter's folder: the case's expected line
    said to choose one with ``--python EXE`` (an option the plugin does not have) a line after the run's
    own said ``--verifier-python EXE``, and so did the JUnit message. Each names the plugin's option."""
    from tests.helpers.processes import needs_namespaces

    needs_namespaces()
    task = one_case_task(pytester, "hidden")
    (task / "cases" / "only" / "expected.json").write_text('{"exit_code": 1}')
    shim = task / "tests" / "test.sh"
    shim.write_text(shim.read_text().replace("--workspace /app", f"--workspace {Path(sys.base_prefix).parent}"))
    report = pytester.path / "report.xml"
    done = run(pytester, "--verifier-cases", "tasks", f"--junitxml={report}")
    done.assert_outcomes(failed=1)
    [failure] = ET.parse(report).iter("failure")
    for text in (failure.get("message"), failure.text, done.stdout.str()):
        assert "lives elsewhere: --verifier-python EXE" in text and "--python EXE" not in text, text
    done.stdout.fnmatch_lines(["*DID NOT MATCH: the verifier was not run: *lives elsewhere: --verifier-python EXE*"])


def test_without_the_option_the_plugin_does_nothing(pytester, monkeypatch):
    """No option's side effect, no import of Textual or of the engine, no
    item. The run loads this plugin alone (other installed plugins, such as
    pytest-textual-snapshot, import Textual themselves)."""
    pytester.makepyfile(
        test_alone="""
        import sys

        def test_alone(request):
            loaded = [m for m in sys.modules if m == "textual" or m.startswith(("textual.", "verifier_tui.engine",
                                                                               "verifier_tui.commands.headless"))]
            assert loaded == []
            assert "verifier_tui.pytest_plugin" in sys.modules  # loaded, but off
            assert request.config.pluginmanager.get_plugin("verifier-tui-cases") is None
            assert request.config.args == ["test_alone.py"]
        """
    )
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    done = pytester.runpytest_subprocess("-p", "verifier_tui.pytest_plugin", "test_alone.py")
    done.assert_outcomes(passed=1)
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    # With every installed plugin: the same items with and without this one.
    monkeypatch.delenv("PYTEST_ADDOPTS")
    copy_example("hello-file", pytester.path / "tasks" / "hello-file")
    collected = [
        pytester.runpytest_subprocess("--co", "-q", *more).stdout.lines for more in ([], ["-p", "no:verifier_tui"])
    ]
    with_plugin, without_plugin = ([line for line in lines if "::" in line] for lines in collected)
    assert with_plugin == without_plugin == ["test_alone.py::test_alone"]


def test_the_package_declares_the_plugin_to_pytest():
    from importlib.metadata import entry_points

    declared = {ep.name: ep.value for ep in entry_points(group="pytest11")}
    assert declared.get("verifier_tui") == "verifier_tui.pytest_plugin"


def test_a_harbor_jobs_trials_are_items_that_pass_when_the_replay_agrees(pytester, env, tmp_path):
    """``pytest --verifier-cases jobs/<job>/``: each trial replayed, as ``verifier-tui test JOB`` does."""
    demo = make_task(pytester.path / "tasks" / "demo", READS_HELLO, toml=SEPARATE)
    job = pytester.path / "jobs" / "several"
    for name, workspace in (("agrees__aaaaaaa", {"hello.txt": "hi"}), ("differs__bbbbbbb", {"hello.txt": "no"})):
        sandbox_trial(job, demo, tmp_path, workspace=workspace, mode="separate", capture=True, name=name)
    # The second trial's captured /app changed after the run: its replay now scores 1.0, the sandbox had 0.0.
    (job / "differs__bbbbbbb" / "artifacts" / "app" / "hello.txt").write_text("hi")
    done = run(pytester, "--verifier-cases", "jobs/several", "-v")
    done.assert_outcomes(passed=1, failed=1)
    done.stdout.fnmatch_lines(
        [
            "jobs/several::agrees__aaaaaaa PASSED*",
            "jobs/several::differs__bbbbbbb FAILED*",
            "*jobs/several::differs__bbbbbbb: the sandbox ended with 0.0, the replay with 1.0",
        ]
    )
    done.stdout.fnmatch_lines(["sandbox   0.0 *", "replay    1.0 *", "agreement differ*"])  # what run TRIAL prints
    by_tool = json.loads(run_tool(env, "test", "--json", job, "--python", PY).stdout)
    assert {t["trial"]["name"]: t["same"] for t in by_tool["trials"]} == {
        "agrees__aaaaaaa": True,
        "differs__bbbbbbb": False,
    }


def test_a_verifier_python_that_cannot_run_is_a_usage_error_on_a_job_too(pytester, tmp_path):
    """On a task, ``--verifier-python /nonexistent/python3`` is a usage error;
    on a job it was collected and run, each trial failing "replayed, but not
    compared: the replay could not start", as if the trials were at fault."""
    demo = make_task(pytester.path / "tasks" / "demo", READS_HELLO, toml=SEPARATE)
    sandbox_trial(pytester.path / "jobs" / "j", demo, tmp_path, workspace={"hello.txt": "hi"}, capture=True)
    done = pytester.runpytest_subprocess("--verifier-cases", "jobs/j", "--verifier-python", "/nonexistent/python3")
    assert done.ret == pytest.ExitCode.USAGE_ERROR
    done.stderr.fnmatch_lines(["ERROR: --verifier-python /nonexistent/python3: No such file or directory"])


def test_test_job_junit_and_the_plugin_report_each_trial_in_the_same_words(pytester, env, tmp_path):
    """A job of a trial that agrees, one that differs and one not replayed
    (no /app captured): ``test JOB --junit`` had the last an ``<error>``
    saying ``no replay: ...`` and the second a failure saying how they
    differ, where the plugin failed both, saying ``not replayed: ...`` and
    ``the replay did not end as the sandbox's run did``. A CI moving from one
    to the other saw another tag and other words; both now say the plugin's
    ``not replayed`` and test's sentence of how they differ, as failures."""
    demo = make_task(pytester.path / "tasks" / "demo", READS_HELLO, toml=SEPARATE)
    job = pytester.path / "jobs" / "several"
    for name, workspace in (("agrees__aaaaaaa", {"hello.txt": "hi"}), ("differs__bbbbbbb", {"hello.txt": "no"})):
        sandbox_trial(job, demo, tmp_path, workspace=workspace, mode="separate", capture=True, name=name)
    (job / "differs__bbbbbbb" / "artifacts" / "app" / "hello.txt").write_text("hi")
    sandbox_trial(job, demo, tmp_path, workspace={"hello.txt": "hi"}, name="uncaptured__ccccccc")
    run(pytester, "--verifier-cases", "jobs/several", f"--junitxml={pytester.path / 'p.xml'}")
    run_tool(env, "test", job, "--python", PY, "--junit", pytester.path / "t.xml")

    def read(report):  # trial: (tag, message) of how it did not pass, None when it passed; each face words
        # the options it names itself (--workspace, the plugin's --verifier-workspace): what leads to them is left
        return {
            c.get("name"): next(
                ((e.tag, e.get("message").split("; give --")[0]) for e in c if e.tag in ("failure", "error")), None
            )
            for c in ET.parse(report).getroot().iter("testcase")
        }

    by_pytest, by_test = read(pytester.path / "p.xml"), read(pytester.path / "t.xml")
    assert by_test == by_pytest, (by_test, by_pytest)
    assert by_test["agrees__aaaaaaa"] is None
    assert by_test["differs__bbbbbbb"] == ("failure", "the sandbox ended with 0.0, the replay with 1.0"), by_test
    assert by_test["uncaptured__ccccccc"][0] == "failure", by_test
    assert by_test["uncaptured__ccccccc"][1].startswith("not replayed: no workspace to replay on"), by_test


def test_harbors_jobs_folder_is_one_collector_a_job(pytester, env, tmp_path):
    """``--verifier-cases jobs/``: each trial was ``jobs::<trial>``, without its
    job, so a job copied beside itself gave two items of one id. Now each is
    ``<job>::<trial>``, as ``test jobs/`` names its rows ``<job>/<trial>``."""
    import shutil

    demo = make_task(pytester.path / "tasks" / "demo", READS_HELLO, toml=SEPARATE)
    job = pytester.path / "jobs" / "first"
    sandbox_trial(job, demo, tmp_path, workspace={"hello.txt": "hi"}, mode="separate", capture=True)
    shutil.copytree(job, pytester.path / "jobs" / "again")
    done = run(pytester, "--verifier-cases", "jobs", "--co", "-q")
    assert sorted(line for line in done.stdout.lines if "::" in line) == [
        "jobs/again::demo__aaaaaaa",
        "jobs/first::demo__aaaaaaa",
    ]
    run(pytester, "--verifier-cases", "jobs", "-q").assert_outcomes(passed=2)
    by_tool = run_tool(env, "test", pytester.path / "jobs", "--python", PY).stdout
    assert "again/demo__aaaaaaa" in by_tool and "first/demo__aaaaaaa" in by_tool


def test_a_trial_given_alone_is_named_by_its_job_as_in_the_job(pytester, tmp_path):
    """``--verifier-cases jobs/j/<trial>``: the test was ``jobs/j/<trial>::<trial>``, where the docs
    (and the job given whole) name it ``<job folder>::<trial>``: one trial, two ids (``--lf`` after a
    run of the job did not know it). Now ``jobs/j::<trial>`` either way, and that id given back runs it."""
    demo = make_task(pytester.path / "tasks" / "demo", READS_HELLO, toml=SEPARATE)
    trial = sandbox_trial(
        pytester.path / "jobs" / "j", demo, tmp_path, workspace={"hello.txt": "hi"}, mode="separate", capture=True
    )
    named = f"jobs/j::{trial.path.name}"
    for given in ("jobs/j", f"jobs/j/{trial.path.name}"):
        done = run(pytester, "--verifier-cases", given, "--co", "-q")
        assert [line for line in done.stdout.lines if "::" in line] == [named], (given, done.stdout.lines)
    run(pytester, "--verifier-cases", f"jobs/j/{trial.path.name}", named, "-q").assert_outcomes(passed=1)


def test_a_trial_given_alone_leaves_the_users_own_tests_beside_it_to_pytest(pytester, tmp_path):
    """``pytest --verifier-cases tests/<trial> tests``, the user's own ``tests/test_mine.py`` beside the
    trial: the trial's id is its job folder's (``tests::<trial>``), and that whole folder was taken as the
    plugin's, ignored by pytest: ``1 passed``, the user's own test gone from CI without a word. The trial's
    folder alone is the plugin's; the tests beside it run. (``tests/`` is a plain folder, no Harbor job: a
    job's folder is the plugin's whole, test_no_trial_of_a_job_is_pytests_to_collect.)"""
    demo = make_task(pytester.path / "tasks" / "demo", READS_HELLO, toml=SEPARATE)
    trial = sandbox_trial(
        pytester.path / "tests", demo, tmp_path, workspace={"hello.txt": "hi"}, mode="separate", capture=True
    )
    for job_file in ("config.json", "lock.json", "job.log", "result.json"):  # the trial alone, copied into tests/
        (pytester.path / "tests" / job_file).unlink()
    (pytester.path / "tests" / "test_mine.py").write_text("def test_mine():\n    assert True\n")
    given = f"tests/{trial.path.name}"
    done = run(pytester, "--verifier-cases", given, "tests", "-v")
    done.assert_outcomes(passed=2)
    done.stdout.fnmatch_lines_random([f"tests::{trial.path.name} PASSED*", "tests/test_mine.py::test_mine PASSED*"])
    # The trial's own folder given as an argument is still the plugin's alone, narrowed to the trial.
    done = run(pytester, "--verifier-cases", given, given, "--co", "-q")
    assert [line for line in done.stdout.lines if "::" in line] == [f"tests::{trial.path.name}"], done.stdout.lines


def _jobs_with_the_agents_tests(pytester, tmp_path):
    """``jobs/j`` of trials ``a`` and ``b``, and ``jobs/k`` of ``c``: the captured /app of ``b`` and ``c``
    (the agent's work) holds a ``test_agent.py`` and a ``conftest.py`` that write a marker file when pytest
    imports or runs them. Returns the marker's path."""
    demo = make_task(tmp_path / "tasks" / "demo", READS_HELLO, toml=SEPARATE)
    marker = tmp_path / "PWNED"
    planted = f"open({str(marker)!r}, 'w').close()\n\ndef test_agent():\n    open({str(marker)!r}, 'w').close()\n"
    for job, name in (("j", "a__aaaaaaa"), ("j", "b__bbbbbbb"), ("k", "c__ccccccc")):
        trial = sandbox_trial(
            pytester.path / "jobs" / job,
            demo,
            tmp_path / "runs",
            workspace={"hello.txt": "hi"},
            mode="separate",
            capture=True,
            name=name,
        )
        if name != "a__aaaaaaa":
            (trial.path / "artifacts" / "app" / "test_agent.py").write_text(planted)
            (trial.path / "artifacts" / "app" / "conftest.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    return marker


@pytest.mark.parametrize(
    "args",
    [
        ["--verifier-cases", "jobs/j/a__aaaaaaa", "jobs/j"],
        ["--verifier-cases", "jobs/j/a__aaaaaaa", "."],
        ["--verifier-cases", "jobs/j/a__aaaaaaa", "jobs"],
        ["--verifier-cases", "jobs/j/a__aaaaaaa", "jobs/j/b__bbbbbbb"],
        ["--verifier-cases", "jobs/j/a__aaaaaaa/verifier", "jobs/j"],
        ["--verifier-cases", "jobs/j/a__aaaaaaa", "jobs/j", "-n", "2"],
        ["--verifier-cases", "jobs/j", "."],
        ["--verifier-cases", "jobs/j", "jobs"],
        ["--verifier-cases", "jobs/j", "jobs/j/b__bbbbbbb/artifacts/app"],
        ["--verifier-cases", "jobs/j/a__aaaaaaa", "jobs/j/b__bbbbbbb/artifacts/app"],
    ],
    ids=[
        "trial-job",
        "trial-dot",
        "trial-jobs",
        "trial-sibling",
        "trial-subfolder",
        "trial-job-xdist",
        "job-dot",
        "job-jobs",
        "job-app-folder",
        "trial-app-folder",
    ],
)
def test_no_trial_of_a_job_is_pytests_to_collect(pytester, tmp_path, monkeypatch, args):
    """``pytest --verifier-cases jobs/j/<trial> jobs/j`` (or ``.``): a trial given alone owned its own
    folder only, so pytest collected the rest of its job, and ``test_agent.py`` in another trial's captured
    /app, the agent's code, ran here unsandboxed (``2 passed``, the marker written). The same for another job
    beside a job given (``jobs/j .``). A folder in a trial's /app, given to narrow the run to that trial, had
    pytest import the agent's ``conftest.py`` there at start-up. A folder in a Harbor job or trial is never
    pytest's: only the trials given are tested, and nothing of the agent's runs."""
    if "-n" in args:
        pytest.importorskip("xdist")
        monkeypatch.setenv("PYTEST_ADDOPTS", inner_pytest_options("xdist", "xdist.looponfail"))
    marker = _jobs_with_the_agents_tests(pytester, tmp_path)
    done = run(pytester, *args, "-v")
    assert not marker.exists(), done.stdout.str()
    assert "test_agent" not in done.stdout.str(), done.stdout.str()
    assert done.ret == 0, done.stdout.str()


@pytest.mark.parametrize(
    "args",
    [
        ["tasks", "tasks/hello-file::correct"],
        ["tasks", "tasks/hello-file"],
        ["tasks/hello-file", "tasks/hello-file/cases/correct"],
        ["tasks", "tasks/hello-file/tests"],
    ],
    ids=["case-id", "task-folder", "case-folder", "tests-folder"],
)
def test_a_task_given_to_narrow_the_run_has_no_conftest_of_its_own_imported(pytester, tasks, tmp_path, args):
    """``pytest --verifier-cases tasks tasks/hello-file::correct``, as the docs have it: pytest reads a
    ``conftest.py`` near each path given at start-up, in its ``test*`` folders too, so the task's
    ``tests/conftest.py`` (written for the sandbox, with its ``test_*.py``) was imported here, outside any
    sandbox, before the plugin could leave the task's folder to itself. Nothing of the task's runs."""
    marker = tmp_path / "PWNED"
    (tasks / "hello-file" / "tests" / "conftest.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    given, *narrowed = args
    done = run(pytester, "--verifier-cases", given, *narrowed, "-v")
    assert not marker.exists(), done.stdout.str()
    assert done.ret == 0, done.stdout.str()
    done.stdout.fnmatch_lines(["tasks/hello-file::correct PASSED*"])


@pytest.mark.parametrize(
    ("where", "args"),
    [
        ("hello-file", [".", "cases/correct"]),
        ("hello-file", ["."]),
        ("hello-file", [".", "hello-file::correct"]),
        ("hello-file/tests", [".."]),
        ("hello-file/cases", [".."]),
    ],
    ids=["case-folder", "task-alone", "case-id", "from-tests", "from-cases"],
)
def test_a_run_started_in_a_task_has_no_conftest_of_its_imported(pytester, tasks, tmp_path, monkeypatch, where, args):
    """``cd tasks/hello-file && pytest --verifier-cases . cases/correct``: the path that narrows the run was
    left out of pytest's start-up search for ``conftest.py``, which then, given no path, searched the current
    folder, the task: its ``tests/conftest.py`` (written for the sandbox) ran here, outside any sandbox; so it
    did with ``--verifier-cases .`` alone, and from the task's ``tests/`` (from its ``cases/``, a
    ``conftest.py`` at the task's top). Nothing of the task's runs."""
    marker = tmp_path / "PWNED"
    for folder in (tasks / "hello-file" / "tests", tasks / "hello-file"):
        (folder / "conftest.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    monkeypatch.chdir(tasks / where)
    done = run(pytester, "--verifier-cases", *args, "-v")
    assert not marker.exists(), done.stdout.str()
    assert done.ret == 0, done.stdout.str()
    done.stdout.fnmatch_lines(["*hello-file::correct PASSED*"])


@pytest.mark.parametrize(
    ("where", "ini", "args"),
    [
        ("tasks", None, ["--verifier-cases", "."]),
        (".", None, ["--verifier-cases", "tasks", "tasks"]),
        (".", "testpaths = tasks", ["--verifier-cases=tasks"]),
        (".", "testpaths = tasks/*", ["--verifier-cases", "tasks"]),
        (".", "testpaths = tasks/test-evil/tests", ["--verifier-cases", "tasks"]),
    ],
    ids=["run-in-the-folder-of-tasks", "folder-of-tasks-given", "testpaths", "testpaths-glob", "testpaths-in-a-task"],
)
def test_no_conftest_of_a_task_is_imported_where_pytests_own_search_starts(
    pytester, tmp_path, monkeypatch, where, ini, args
):
    """pytest starts its search for ``conftest.py`` at each path it is given, or, given none, at the ini's
    ``testpaths`` (run from the rootdir) or the current folder, and reads each ``test*`` folder's there too:
    a task named ``test-evil`` in the folder of tasks, or ``testpaths`` that lead into a task, had the task's
    ``conftest.py`` (its author's, written for the sandbox) imported here, outside any sandbox. Nothing of the
    task's runs, its cases do, and the user's own ``conftest.py`` beside it is still read."""
    marker = tmp_path / "PWNED"
    evil = one_case_task(pytester, "test-evil")
    for folder in (evil, evil / "tests"):
        (folder / "conftest.py").write_text(f"open({str(marker)!r}, 'a').write({str(folder)!r})\n")
    mine = tmp_path / "MINE"
    (pytester.path / "tasks" / "conftest.py").write_text(f"open({str(mine)!r}, 'w').close()\n")
    if ini is not None:
        pytester.makeini(f"[pytest]\n{ini}\n")
    monkeypatch.chdir(pytester.path / where)
    done = run(pytester, *args, "-v")
    assert not marker.exists(), marker.read_text()
    assert mine.exists(), done.stdout.str()
    assert done.ret == 0, done.stdout.str()
    done.stdout.fnmatch_lines(["*test-evil::only PASSED*"])


@pytest.mark.parametrize(
    ("name", "section"),
    [
        ("pytest.ini", "[pytest]"),
        ("pyproject.toml", "[tool.pytest.ini_options]"),
        ("tox.ini", "[pytest]"),
        ("setup.cfg", "[tool:pytest]"),
    ],
)
def test_a_tasks_own_ini_file_is_refused_as_pytests_settings(pytester, tmp_path, monkeypatch, name, section):
    """``pytest --verifier-cases tasks/evil``: pytest, before any plugin is loaded, takes the path after an
    option it does not know yet for a test path, and looks for its settings there: the task's own ini file,
    its author's, became the run's: its ``addopts`` wrote where it chose (``--junitxml``, ``--log-file``: a
    file of the user's), and its ``pythonpath`` and ``-p`` imported what it chose. Refused in one line naming
    the file and what to write instead, before anything is collected or written; from in the task too. The
    settings chosen with ``-c FILE`` typed for the run are the user's and run; a task's ini file that sets
    nothing is refused as well (it made the task pytest's rootdir)."""
    evil = one_case_task(pytester, "evil")
    marker, written = tmp_path / "PWNED", tmp_path / "users-file"
    (evil / "tests" / "conftest.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    quote = '"' if name == "pyproject.toml" else ""
    settings = [f"addopts = {quote}--junitxml={written}{quote}", f"testpaths = {quote}tests{quote}"]
    if name == "pyproject.toml":
        settings[1] = 'testpaths = ["tests"]'
    (evil / name).write_text("\n".join([section, *settings, ""]))
    done = run(pytester, "--verifier-cases", "tasks/evil")
    assert done.ret == pytest.ExitCode.USAGE_ERROR, done.stdout.str()
    done.stderr.fnmatch_lines(
        [f"ERROR: tasks/evil/{name}: pytest's settings came from this file of a task*write --verifier-cases=PATH*"]
    )
    assert not written.exists()
    monkeypatch.chdir(evil)
    done = run(pytester, "--verifier-cases", ".")
    assert done.ret == pytest.ExitCode.USAGE_ERROR, done.stdout.str()
    assert not marker.exists()
    assert not written.exists()
    # The way out the sentence names: the option's value as one word, pytest's settings then the user's.
    monkeypatch.chdir(pytester.path)
    run(pytester, "--verifier-cases=tasks/evil").assert_outcomes(passed=1)
    # The user's own settings chosen with -c.
    run(pytester, "-c", "/dev/null", "--verifier-cases", "tasks/evil").assert_outcomes(passed=1)
    # Chosen with -c typed for this run, even the task's own file is the user's choice (its -c in addopts is not).
    run(pytester, "-c", f"tasks/evil/{name}", "--verifier-cases", "tasks/evil").assert_outcomes(passed=1)
    assert written.exists()
    written.unlink()
    (evil / name).write_text("\n".join([section, f"addopts = {quote}-c {name}{quote}", ""]))
    assert run(pytester, "--verifier-cases", "tasks/evil").ret == pytest.ExitCode.USAGE_ERROR
    # One that sets nothing is refused too: it made the task pytest's rootdir, so the user's conftest.py above
    # it was not read and pytest's cache was written into the task.
    (evil / name).write_text(f"{section}\n")
    assert run(pytester, "--verifier-cases", "tasks/evil").ret == pytest.ExitCode.USAGE_ERROR
    assert not marker.exists()
    assert not written.exists()


@pytest.mark.parametrize(
    ("where", "args"),
    [
        ("", ["--verifier-cases=tasks", "tasks/evil::only"]),
        ("", ["--verifier-cases=tasks", "tasks/evil"]),
        ("", ["--verifier-cases=tasks", "tasks/evil/cases/only"]),
        ("tasks", ["--verifier-cases=.", "evil::only"]),
        ("tasks/evil", ["--verifier-cases=.."]),
        ("", ["--verifier-cases=jobs/j", "jobs/j/b__bbbbbbb/artifacts/app"]),
    ],
    ids=[
        "id-in-a-folder-given",
        "task-in-a-folder-given",
        "case-folder",
        "id-from-the-folder",
        "from-in-the-task",
        "agents-app",
    ],
)
def test_a_tasks_own_ini_file_is_refused_whichever_way_it_is_reached(pytester, tmp_path, monkeypatch, where, args):
    """``pytest --verifier-cases=tasks tasks/evil::only`` (the documented way to run one case), or run from in
    the task with a folder of tasks given: the refusal only counted a path given that is itself a task, so the
    task's ``pytest.ini`` in a folder of tasks given (or the agent's in a trial's captured /app) was pytest's
    settings again: its ``addopts`` wrote the user's file, exit 0. Refused, nothing written."""
    one_case_task(pytester, "evil")
    _jobs_with_the_agents_tests(pytester, tmp_path)
    written = tmp_path / "users-file"
    for folder in (pytester.path / "tasks" / "evil", pytester.path / "jobs/j/b__bbbbbbb/artifacts/app"):
        (folder / "pytest.ini").write_text(f"[pytest]\naddopts = --junitxml={written}\n")
    monkeypatch.chdir(pytester.path / where)
    done = run(pytester, *args)
    assert not written.exists(), done.stdout.str()
    assert done.ret == pytest.ExitCode.USAGE_ERROR, done.stdout.str()
    done.stderr.fnmatch_lines(["ERROR: *pytest.ini: pytest's settings came from this file of a task*"])


def test_every_documented_example_gives_the_path_in_one_word(pytester):
    """A task's ini may switch the plugin off (``addopts = -p no:verifier_tui``): ``pytest --verifier-cases
    tasks/evil`` takes the path for a test path before any plugin is loaded, reads the task's ini, never
    loads the plugin, and imports the task's ``conftest.py`` here. Only ``--verifier-cases=PATH`` keeps pytest
    from reading it; every example (README, docs/commands.md, the module's usage) gives that form, and the
    option's help says so."""
    from verifier_tui import pytest_plugin

    for where, text in [
        ("README.md", (REPO / "README.md").read_text()),
        ("docs/commands.md", (REPO / "docs" / "commands.md").read_text()),
        ("pytest_plugin", pytest_plugin.__doc__ or ""),
    ]:
        spaced = re.findall(r"pytest [^`\n]*--verifier-cases [^\s`]+", text)
        assert not spaced, (where, spaced)
    done = run(pytester, "--help")
    assert "given apart, pytest reads a task's ini file there" in " ".join(done.stdout.str().split())


def test_a_link_named_test_star_to_a_task_elsewhere_has_no_conftest_read(pytester, tmp_path, monkeypatch):
    """``tasks/test-link -> /elsewhere/evil`` (a task) and ``cd tasks && pytest --verifier-cases=.``: pytest
    reads the ``conftest.py`` of each ``test*`` folder where its search starts, and the link's task was not
    counted as one given (its resolved folder lies outside ``tasks``), so the task's own ``conftest.py`` was
    imported here, outside the sandbox."""
    one_case_task(pytester, "good")
    marker = tmp_path / "PWNED"
    evil = make_task(tmp_path / "elsewhere" / "evil", cases={"only": {}})
    (evil / "conftest.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    (pytester.path / "tasks" / "test-link").symlink_to(evil)
    monkeypatch.chdir(pytester.path / "tasks")
    done = pytester.runpytest_subprocess(PYTHON_OPTION, "-p", "no:cacheprovider", "--verifier-cases=.", timeout=300)
    assert not marker.exists(), done.stdout.str()


def test_pyargs_with_the_cases_is_refused(pytester, tmp_path):
    """``pytest --verifier-cases=tasks --pyargs tasks.evil``, the task folders packages: pytest resolved the
    name to the task's folder and imported both of its ``conftest.py`` files here, outside the sandbox: only
    file paths were kept from pytest's search. Refused in one line, exit 4, nothing imported."""
    evil = one_case_task(pytester, "evil")
    marker = tmp_path / "PWNED"
    for where in (pytester.path / "tasks", evil, evil / "tests"):
        (where / "__init__.py").write_text("")
    for where in (evil, evil / "tests"):
        (where / "conftest.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    done = run(pytester, "--verifier-cases=tasks", "--pyargs", "tasks.evil")
    assert not marker.exists(), done.stdout.str()
    assert done.ret == pytest.ExitCode.USAGE_ERROR, done.stdout.str()
    done.stderr.fnmatch_lines(["ERROR: --pyargs: *--verifier-cases*"])


@pytest.mark.parametrize(
    "given",
    [["--verifier-cases", "tasks"], ["--verifier-cases=tasks"], ["--verifier-cases=tasks", "-n", "2"]],
    ids=["two", "one", "xdist"],
)
def test_the_users_own_ini_in_a_repo_shaped_as_a_task_is_the_users(pytester, tmp_path, monkeypatch, given):
    """A repo of the user's with ``tests/test.sh`` of its own (so shaped as a task), its ``pyproject.toml``
    holding pytest's settings, and a folder of tasks: ``pytest --verifier-cases tasks`` was refused, exit 4,
    "this file of a task, its author's", of the user's own file, since the refusal looked at every folder
    above the ini file. Only an ini file inside a task given to ``--verifier-cases`` is the task author's.
    The repo's own ``conftest.py`` was then never imported (the repo "held" the tasks given, so it counted as
    the plugin's): a task-shaped folder that merely holds the paths given is the user's, its conftest read."""
    if "-n" in given:
        pytest.importorskip("xdist")
        monkeypatch.setenv("PYTEST_ADDOPTS", inner_pytest_options("xdist", "xdist.looponfail"))
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "test.sh").write_text("#!/bin/sh\n")
    pytester.makepyprojecttoml('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    read = tmp_path / "users-conftest-read"
    (pytester.path / "conftest.py").write_text(f"open({str(read)!r}, 'w').close()\n")
    one_case_task(pytester, "good")
    done = run(pytester, *given)
    assert done.ret == 0, done.stdout.str() + done.stderr.str()
    done.assert_outcomes(passed=1)
    assert read.exists(), done.stdout.str()


@pytest.mark.parametrize(
    "given",
    ["jobs/k/c__ccccccc/artifacts/app", "jobs/j/b__bbbbbbb/artifacts/app/test_agent.py", "jobs/k/c__ccccccc"],
    ids=["folder-in-another-job", "file-in-the-job", "trial-of-another-job"],
)
def test_a_path_in_a_trial_given_to_pytest_is_refused_not_run(pytester, tmp_path, given):
    """``pytest --verifier-cases jobs/j/<trial> jobs/k/<trial>/artifacts/app`` (or a ``test_*.py`` in a
    trial's /app): pytest never asks a plugin whether to skip a path given, so it collected the agent's
    ``test_agent.py`` and ran it here, outside any sandbox. Refused, a usage error saying why."""
    marker = _jobs_with_the_agents_tests(pytester, tmp_path)
    done = run(pytester, "--verifier-cases", "jobs/j/a__aaaaaaa", given)
    assert not marker.exists(), done.stdout.str()
    assert done.ret == pytest.ExitCode.USAGE_ERROR, done.stdout.str()
    done.stderr.fnmatch_lines([f"ERROR: {given}: in a Harbor trial, the agent's work: pytest would run it here*"])


def test_a_trial_folder_given_as_an_argument_narrows_the_job_to_it(pytester, tmp_path):
    """``pytest --verifier-cases jobs/j jobs/j/<trial>``: pytest narrows a run to a folder given as an
    argument, as a case's folder narrows a task to that case, but every trial of the job ran."""
    demo = make_task(pytester.path / "tasks" / "demo", READS_HELLO, toml=SEPARATE)
    job = pytester.path / "jobs" / "j"
    for name in ("a__aaaaaaa", "b__bbbbbbb"):
        sandbox_trial(job, demo, tmp_path, workspace={"hello.txt": "hi"}, mode="separate", capture=True, name=name)
    for given in ("jobs/j/b__bbbbbbb", "jobs/j/b__bbbbbbb/verifier"):
        done = run(pytester, "--verifier-cases", "jobs/j", given, "--co", "-q")
        assert [line for line in done.stdout.lines if "::" in line] == ["jobs/j::b__bbbbbbb"], (
            given,
            done.stdout.lines,
        )


@pytest.mark.parametrize(
    "given",
    [
        ["jobs/j/a__aaaaaaa", "jobs/j/b__bbbbbbb"],
        ["jobs/j/a__aaaaaaa", "jobs/j"],
        ["jobs/j", "jobs/j/a__aaaaaaa"],
        ["jobs/j/a__aaaaaaa", "jobs/j/a__aaaaaaa/verifier", "jobs/j/b__bbbbbbb"],
    ],
    ids=["two-trials", "trial-then-job", "job-then-trial", "a-trial-twice"],
)
def test_trials_of_one_job_given_apart_are_one_collector_each_trial_once(pytester, tmp_path, given):
    """``--verifier-cases jobs/j/a --verifier-cases jobs/j/b``: each trial given alone made its own collector
    ``jobs/j``, two nodes of one id (``--co`` listed ``<VerifierTask j>`` twice); with the job given beside one
    of its trials, that trial was collected (and run, and reported) twice under one id. One collector for the
    job, each trial once, under the id it has when the job is given whole."""
    demo = make_task(pytester.path / "tasks" / "demo", READS_HELLO, toml=SEPARATE)
    job = pytester.path / "jobs" / "j"
    for name in ("a__aaaaaaa", "b__bbbbbbb"):
        sandbox_trial(job, demo, tmp_path, workspace={"hello.txt": "hi"}, mode="separate", capture=True, name=name)
    args = [word for path in given for word in ("--verifier-cases", path)]
    tree = run(pytester, *args, "--co").stdout.lines
    assert [line.strip() for line in tree if "<VerifierTask" in line] == ["<VerifierTask j>"], tree
    listed = [line for line in run(pytester, *args, "--co", "-q").stdout.lines if "::" in line]
    assert listed == ["jobs/j::a__aaaaaaa", "jobs/j::b__bbbbbbb"], listed
    done = run(pytester, *args, "-v", f"--junitxml={pytester.path / 'p.xml'}")
    done.assert_outcomes(passed=2)
    cases = [c.get("name") for c in ET.parse(pytester.path / "p.xml").getroot().iter("testcase")]
    assert cases == ["a__aaaaaaa", "b__bbbbbbb"], cases


def test_a_trial_without_its_app_names_the_plugins_stand_in_options_throughout(pytester, tmp_path):
    """The report's head line named ``--verifier-workspace DIR, ...``, and
    the walkthrough below it ``--workspace DIR, --case NAME or --stand-in
    empty``, options pytest refuses."""
    demo = make_task(pytester.path / "tasks" / "demo", READS_HELLO, toml=SEPARATE)
    sandbox_trial(pytester.path / "jobs" / "uncaptured", demo, tmp_path, workspace={"hello.txt": "hi"}, mode="separate")
    done = run(pytester, "--verifier-cases", "jobs/uncaptured")
    done.assert_outcomes(failed=1)
    text = done.stdout.str()
    assert "replay    none: no workspace to replay on: " in text
    assert "give --workspace" not in text and " --stand-in" not in text and " --case" not in text
    assert text.count("--verifier-workspace DIR, --verifier-case NAME or --verifier-stand-in empty") >= 2


def test_folder_names_that_are_not_utf8_under_xdist(pytester, tasks, monkeypatch):
    """A task or case folder named with bytes that are not UTF-8: under ``-n
    2`` each worker sent the folder as its test's location, which execnet
    cannot carry, and the run ended in an INTERNALERROR, no case reported."""
    import os

    pytest.importorskip("xdist")
    monkeypatch.setenv("PYTEST_ADDOPTS", inner_pytest_options("xdist", "xdist.looponfail"))
    cases = tasks / "sum-column" / "cases"
    (cases / "wrong-total").rename(os.fsdecode(bytes(cases / "wrong") + b"\xfe"))  # fails: 0.0, not 0.5
    (cases / "correct" / "expected.json").write_text("{oops")
    (tasks / "hello-file").rename(os.fsdecode(bytes(tasks / "hello") + b"\xff"))
    done = run(pytester, "--verifier-cases", "tasks", "-n", "2", "-v")
    done.assert_outcomes(passed=5, failed=2, skipped=1)
    assert "INTERNALERROR" not in done.stdout.str() + done.stderr.str()
    done.stdout.fnmatch_lines(["*FAILED tasks/sum-column::wrong\\xfe*"])
    # A reason that names such a file: a second verifier makes the task one failing test.
    tests = pytester.path / os.fsdecode(bytes(tasks / "hello") + b"\xff") / "tests"
    (tests / os.fsdecode(b"v\xfe.py")).write_text((tests / "verifier.py").read_text())
    (tests / "verifier.py").rename(tests / "a.py")
    done = run(pytester, "--verifier-cases", "tasks", "-n", "2", "-v")
    done.assert_outcomes(passed=1, failed=3, skipped=1)
    done.stdout.fnmatch_lines(
        ["*tasks/hello\\xff::(task): not run: hello\\xff has several verifiers (tests/a.py, tests/v\\xfe.py)*"]
    )


def test_a_tolerance_in_expected_json_is_the_plugins_too(pytester):
    """The plugin judges with the comparison test uses: "tolerance" accepts float rounding."""
    task_dir = make_task(
        pytester.path / "tasks" / "sum",
        "def verify(workspace):\n    return 0.1 + 0.2\n",
        cases={"exact": {}, "within": {}},
    )
    (task_dir / "cases" / "exact" / "expected.json").write_text('{"rewards": {"reward": 0.3}}')
    (task_dir / "cases" / "within" / "expected.json").write_text('{"rewards": {"reward": 0.3}, "tolerance": 1e-9}')
    done = run(pytester, "--verifier-cases", "tasks", "-v")
    done.assert_outcomes(passed=1, failed=1)
    done.stdout.fnmatch_lines(["tasks/sum::exact FAILED*", "tasks/sum::within PASSED*", "note: only float rounding: *"])


def test_a_task_harbor_would_refuse_fails_its_cases_and_says_why(pytester):
    """As `verifier-tui test` (exit 2 there): a task.toml Harbor cannot load fails every case, whatever
    the verifier scores, with Harbor's reason."""
    one_case_task(pytester, "refused", toml="version = 1\n")
    done = run(pytester, "--verifier-cases", "tasks", "-v")
    done.assert_outcomes(failed=1)
    done.stdout.fnmatch_lines(["*Harbor would refuse to run this task: *version = 1 is not a string*"])


def test_a_refused_tasks_cut_reward_keeps_its_option_for_each_face(tmp_path):
    """The verdict of a task Harbor would refuse, with more reward keys than
    are shown: its sentence was flattened to the command line's ``--json lists
    them all``, an option pytest refuses, wherever a face words it."""
    from verifier_tui.commands.report import result_lines
    from verifier_tui.engine.session import Options, Session
    from verifier_tui.pytest_plugin import said

    verifier = "def verify(workspace):\n    return {'reward': 0.0, **{f'k{i}': 1.0 for i in range(500)}}\n"
    task_dir = make_task(tmp_path / "refused", verifier, toml="version = 1\n")
    with Session(task_dir, Options(python=PY)) as session:
        result = session.run()
        lines = result_lines(session, result, word=said)
    verdict = next(line for line in lines if line.startswith("verdict: "))
    assert "Harbor would refuse to run this task" in verdict, verdict
    assert "more keys: verifier-tui test PATH --json lists them all)" in verdict, verdict


@pytest.mark.skipif(machine_cpus() < 2, reason="the next case is held only where a CPU is idle for it")
def test_each_case_after_the_first_of_a_task_runs_from_a_held_start(pytester, sandbox, monkeypatch):
    """As a case runs, the next is started held (engine/warm.py): its
    verifier sees, in the environment its process started with, the variable
    a held runner waits on, and scores 1.0 for it; the first case started cold."""
    from verifier_tui.engine.warm import VARIABLE

    monkeypatch.delenv("PYTEST_XDIST_WORKER_COUNT", raising=False)  # the inner pytest has no workers

    verifier = f"""\
        def verify(workspace):
            with open("/proc/self/environ", "rb") as environ:
                return 1.0 if b"{VARIABLE}=" in environ.read() else 0.0
    """
    task_dir = make_task(pytester.path / "tasks" / "warmth", verifier, cases={"a": {}, "b": {}, "c": {}})
    for case, reward in (("a", 0.0), ("b", 1.0), ("c", 1.0)):
        (task_dir / "cases" / case / "expected.json").write_text(f'{{"rewards": {{"reward": {reward}}}}}')
    run(pytester, "--verifier-cases", "tasks", "-v").assert_outcomes(passed=3)


def test_a_case_named_with_a_line_break_and_escapes_keeps_its_test_id_on_one_line(pytester, tasks):
    """A case folder of a task someone sent, named to forge a PASSED line and
    write the terminal's clipboard (OSC 52)."""
    cases = tasks / "hello-file" / "cases"
    (cases / "correct").rename(cases / "x\nPASSED hello-file::forged \x1b]52;c;ZXZpbA==\x07")
    done = run(pytester, "--verifier-cases", "tasks", "-v")
    text = done.stdout.str()
    assert "\x1b]52" not in text and "\x07" not in text
    assert not any(line.startswith("PASSED hello-file::forged") for line in text.splitlines())
    assert "hello-file::x\\nPASSED hello-file::forged" in text


@pytest.mark.parametrize("value", ["nan", "-1", "0", "inf"])
def test_a_timeout_the_command_line_refuses_the_plugin_refuses_too(pytester, tasks, value):
    """``nan`` meant no limit and a busy wait; ``-1`` a timeout at once."""
    done = run(pytester, "--verifier-cases", "tasks", "--verifier-timeout", value)
    assert done.ret == pytest.ExitCode.USAGE_ERROR
    assert f"argument --verifier-timeout: '{value}': give a finite number of seconds more than 0" in done.stderr.str()


def test_an_interpreter_named_relative_to_the_folder_pytest_runs_in(pytester, tasks):
    """``--verifier-python .venv/bin/python``: the probe ran from the root
    folder and looked for it there ("No such file or directory")."""
    (pytester.path / "venv" / "bin").mkdir(parents=True)
    (pytester.path / "venv" / "bin" / "python").symlink_to(PY)
    done = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--verifier-cases", "tasks/hello-file", "--verifier-python", "venv/bin/python"
    )
    done.assert_outcomes(passed=4)


def test_a_failing_cases_advice_names_the_plugins_option(pytester):
    """A verifier importing what the interpreter lacks: the report said to run
    with ``--python EXE``, an option pytest does not have."""
    one_case_task(pytester, "needs", "import not_installed_anywhere\n\ndef verify(workspace):\n    return 1.0\n")
    done = run(pytester, "--verifier-cases", "tasks")
    done.assert_outcomes(failed=1)
    done.stdout.fnmatch_lines(["note: the verifier imports not_installed_anywhere, *: --verifier-python EXE"])
    assert "--python EXE" not in done.stdout.str()


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["alone", "xdist"])
def test_a_failing_cases_one_line_reason_is_junits_message_and_the_summarys(pytester, tasks, monkeypatch, workers):
    """JUnit's ``message`` (the title CI shows) was the whole report, over
    many lines, and the short summary said no reason: now both say what
    ``verifier-tui test --junit`` says, on one line, under xdist as alone."""
    if workers:
        pytest.importorskip("xdist")
        monkeypatch.setenv("PYTEST_ADDOPTS", inner_pytest_options("xdist", "xdist.looponfail"))
    (tasks / "hello-file" / "cases" / "wrong-case" / "expected.json").write_text("{oops")
    monkeypatch.setenv("COLUMNS", "120")  # the summary's line is cut at the terminal's width
    report = pytester.path / "report.xml"
    done = run(pytester, "--verifier-cases", "tasks", "-k", "wrong", "-rf", f"--junitxml={report}", *workers)
    done.assert_outcomes(failed=2, passed=1)
    why = 'expected {"reward": 0.5}, got {"reward": 0.0}'
    done.stdout.fnmatch_lines(["FAILED tasks/hello-file::wrong-case - not run: expected.json is *"])
    done.stdout.fnmatch_lines([f"FAILED tasks/sum-column::wrong-total - {why}"])
    cases = ET.parse(report).getroot().iter("testcase")
    failures = {c.get("name"): c.find("failure") for c in cases if c.find("failure") is not None}
    assert failures["wrong-total"].get("message") == why
    assert failures["wrong-case"].get("message").startswith("not run: expected.json is not valid JSON")
    assert "reward.txt: 0.0" in failures["wrong-total"].text  # the whole report is the failure's text


def test_a_task_named_twice_through_a_link_is_collected_once(pytester, tasks):
    """``tasks`` and a link to it (or to a task in it): the verifier's path
    through the link told the two apart, and each case ran twice."""
    (pytester.path / "linked").symlink_to(tasks)
    (pytester.path / "hello").symlink_to(tasks / "hello-file")
    done = run(pytester, "--verifier-cases", "tasks", "--verifier-cases", "linked", "--verifier-cases", "hello", "--co")
    done.stdout.fnmatch_lines(["*8 tests collected*"])


SLEEPS_WITH_A_CHILD = (
    "import subprocess, sys, time\n\n"
    "def verify(workspace):\n"
    # the child names the workspace (a scratch path in the copy sandbox), so the test can find it
    "    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)', str(workspace)])\n"
    + "".join("    " + line + "\n" for line in SAY_STARTED.splitlines())
    + "    time.sleep(300)\n"
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes through /proc")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_sigterm_or_sighup_mid_case_ends_its_processes_and_removes_the_scratch(pytester, sandbox, monkeypatch, sig):
    """A CI job cancelled (SIGTERM), a terminal closed (SIGHUP): pytest died
    on the spot, leaving the scratch folder and, in the copy sandbox, what
    the verifier started. Now they stop the run as Ctrl+C does, 128 + the signal."""
    task_dir = make_task(pytester.path / "tasks" / "slow", SLEEPS_WITH_A_CHILD, cases={"a": {}, "b": {}})
    for case in ("a", "b"):
        (task_dir / "cases" / case / "expected.json").write_text('{"exit_code": 0}')
    scratch = pytester.path / "tmpdir"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", PYTHON_OPTION, "-p", "no:cacheprovider", "--verifier-cases", "tasks"],
        cwd=pytester.path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    code, err = signal_when(proc, lambda: has_started(scratch), sig, "the verifier never started")
    assert code == 128 + sig, (code, err)
    assert "Traceback" not in err
    assert wait_none_with(str(scratch)) == [], "a process of the run outlived pytest"
    assert list(scratch.iterdir()) == []


def test_a_case_file_that_leads_out_of_the_task_names_no_option_the_plugin_lacks(pytester, tmp_path):
    """A case's workspace (or response, or the task's rows) that leads out of
    the task: the report's note said to give it ``with --workspace DIR``, an
    option pytest refuses; it now names the command that takes it."""
    task_dir = make_task(
        pytester.path / "tasks" / "linked", "def verify(workspace):\n    return 1.0\n", cases={"only": {}}
    )
    case = task_dir / "cases" / "only"
    (case / "expected.json").write_text('{"rewards": {"reward": 0.5}}')  # fails: the report is shown
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (case / "workspace").rmdir()
    (case / "workspace").symlink_to(elsewhere)
    (case / "response.txt").symlink_to(tmp_path / "answer.txt")
    (tmp_path / "answer.txt").write_text("hi")
    done = run(pytester, "--verifier-cases", "tasks")
    done.assert_outcomes(failed=1)
    text = done.stdout.str()
    assert f"workspace leads out of the task, to {elsewhere}" in text, text
    assert "with --workspace DIR" not in text and "with --response FILE" not in text, text
    done.stdout.fnmatch_lines(
        [
            "*with verifier-tui run TASK --response FILE if you mean it*",
            "*with verifier-tui run TASK --workspace DIR if*",
        ]
    )


def test_a_stand_in_case_the_task_lacks_is_named_by_the_plugins_option(pytester, tmp_path):
    """``--verifier-case nope`` on a job: the replay's reason said ``--case
    nope: no such case``, an option pytest refuses."""
    demo = make_task(pytester.path / "tasks" / "demo", READS_HELLO, toml=SEPARATE, cases={"good": {}})
    sandbox_trial(pytester.path / "jobs" / "uncaptured", demo, tmp_path, workspace={"hello.txt": "hi"}, mode="separate")
    done = run(pytester, "--verifier-cases", "jobs/uncaptured", "--verifier-case", "nope")
    done.assert_outcomes(failed=1)
    text = done.stdout.str()
    assert "--verifier-case nope: no such case" in text, text
    assert " --case nope" not in text, text


def test_a_missing_nemo_gym_is_advised_in_the_plugins_options(pytester):
    """A verifier importing nemo_gym, which the interpreter lacks: the note
    said to choose another with ``--python``, or ``--nemo-gym DIR``."""
    one_case_task(
        pytester,
        "needs-gym",
        "from nemo_gym.verifiers.helpers import VALUE\n\ndef verify(workspace):\n    return VALUE\n",
    )
    done = run(pytester, "--verifier-cases", "tasks")
    done.assert_outcomes(failed=1)
    text = done.stdout.str()
    assert "nemo_gym is not installed for" in text, text
    assert "with --python" not in text and "with --nemo-gym" not in text, text
    done.stdout.fnmatch_lines(["*or --verifier-python EXE naming another*to verifier-tui run TASK --nemo-gym DIR*"])


def test_a_trial_whose_task_ships_another_runner_names_no_option_the_plugin_lacks(pytester, tmp_path):
    """The task's own tests/.ng/run_verifier.py differs from verifier-tui's:
    the replay's note said ``--runner task replays with the task's``, an
    option pytest refuses."""
    demo = make_task(pytester.path / "tasks" / "demo", READS_HELLO, toml=SEPARATE)
    sandbox_trial(
        pytester.path / "jobs" / "j", demo, tmp_path, workspace={"hello.txt": "hi"}, mode="separate", capture=True
    )
    vendored = demo / "tests" / ".ng" / "run_verifier.py"
    vendored.parent.mkdir(parents=True, exist_ok=True)
    vendored.write_text("raise SystemExit(3)\n")  # not verifier-tui's runner: said, whatever the verdict
    done = run(pytester, "--verifier-cases", "jobs/j", "-rA")
    text = done.stdout.str()
    assert "differs from the runner verifier-tui replays with" in text, text
    assert "(--runner task" not in text, text
    assert "verifier-tui test PATH --runner task replays with the task's" in text, text


def test_a_task_whose_own_runner_differs_names_the_command_that_runs_it(pytester):
    """A task (not a trial) ships a tests/.ng/run_verifier.py unlike
    verifier-tui's: a failing case's report said ``--runner task (R in the
    TUI) runs the task's own``, an option pytest refuses and a key it has not."""
    task_dir = one_case_task(pytester, "own", "def verify(workspace):\n    return 0.0\n")
    vendored = task_dir / "tests" / ".ng" / "run_verifier.py"
    vendored.parent.mkdir(parents=True, exist_ok=True)
    vendored.write_text("raise SystemExit(3)\n")
    done = run(pytester, "--verifier-cases", "tasks")
    done.assert_outcomes(failed=1)
    text = done.stdout.str()
    assert "it differs from verifier-tui's" in text, text
    assert "(R in the TUI)" not in text and " --runner" not in text.replace("PATH --runner", ""), text
    done.stdout.fnmatch_lines(["*verifier-tui test PATH --runner task runs the task's own*"])


def test_a_passing_case_of_a_task_whose_own_runner_differs_warns(pytester):
    """The task ships a tests/.ng/run_verifier.py unlike verifier-tui's (here one that
    does not even compile): its case passed with not a word, where ``test`` says under
    the task that the sandbox runs the task's runner, which scores every Harbor trial.
    A pytest warning at each of the task's cases says it, in the plugin's words."""
    task_dir = one_case_task(pytester, "own")
    vendored = task_dir / "tests" / ".ng" / "run_verifier.py"
    vendored.parent.mkdir(parents=True, exist_ok=True)
    vendored.write_text("import sys\nsys.exit(main(\n")
    done = run(pytester, "--verifier-cases", "tasks")
    done.assert_outcomes(passed=1, warnings=1)
    done.stdout.fnmatch_lines(
        [
            "*warnings summary*",
            "tasks/own::only",
            "*TaskNote: the task ships its own runner (tests/.ng/run_verifier.py) and it differs from "
            "verifier-tui's: the sandbox runs the task's*verifier-tui test PATH --runner task runs the task's own",
        ]
    )


def _task_with_a_note(pytester):
    """``tasks/own``: a task shipping a runner unlike verifier-tui's (a note on the task as a whole), its
    case ``only`` passing and its case ``off`` failing (it expects 0.5 where the verifier scores 1.0)."""
    task_dir = make_task(pytester.path / "tasks" / "own", cases={"only": {}, "off": {}})
    (task_dir / "cases" / "only" / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    (task_dir / "cases" / "off" / "expected.json").write_text('{"rewards": {"reward": 0.5}}')
    vendored = task_dir / "tests" / ".ng" / "run_verifier.py"
    vendored.parent.mkdir(parents=True, exist_ok=True)
    vendored.write_text("import sys\nsys.exit(main(\n")
    return task_dir


@pytest.mark.parametrize("how", ["-W", "ini"])
def test_warnings_made_errors_keep_each_cases_verdict(pytester, how):
    """``-W error`` (or ``filterwarnings = error`` in the project's pytest config, common in CI): the
    task's note was raised inside the case before it ran, so every case of the task failed on a traceback
    through the plugin, the failing one without its verdict. Now a failing case keeps its verdict, and a
    passing one fails (the user asked for warnings to fail) in one line that says it passed and the note."""
    _task_with_a_note(pytester)
    if how == "ini":
        pytester.makeini("[pytest]\nfilterwarnings =\n    error\n")
        done = run(pytester, "--verifier-cases", "tasks")
    else:
        done = run(pytester, "--verifier-cases", "tasks", "-W", "error")
    done.assert_outcomes(failed=2)
    text = done.stdout.str()
    assert "Traceback" not in text and "pytest_plugin.py" not in text, text
    done.stdout.fnmatch_lines_random(
        [
            'FAILED tasks/own::off - expected {"reward": 0.5}, got {"reward": 1.0}',
            'expected {"rewards": {"reward": 0.5}}: DID NOT MATCH',
            "FAILED tasks/own::only - the case passed, but *",
            "tasks/own::only: the case passed, but its task's note is an error here "
            "(-W error or filterwarnings): the task ships its own runner *",
        ]
    )


@pytest.mark.parametrize(
    "first",
    [
        'version = "1.0"',
        # A raw ESC is no valid TOML, even in a comment (the task is refused); C1's CSI and OSC (U+009B,
        # U+009D, read by many terminals as ESC [ and ESC ]) and a bidi override are, in a comment.
        'version = "1.0"  # \u202e\u009d0;PWNED\u009c \u009b2J',
        "# \x1b]0;PWNED\x07",
    ],
    ids=["plain", "valid-toml-controls", "refused-escape"],
)
def test_a_task_note_shows_no_line_of_task_toml(pytester, first):
    """Each TaskNote was warned at line 1 of the task's task.toml, and pytest's warnings summary printed
    that line under every note: raw, so a terminal escape planted there reached the terminal (here a
    title change), and a plain ``version = "1.0"`` under an unrelated note misled. The note names the
    file alone, as a skipped case does."""
    import tomllib

    task_dir = _task_with_a_note(pytester)
    (task_dir / "task.toml").write_text(first + "\n")
    done = run(pytester, "--verifier-cases", "tasks")
    try:
        tomllib.loads(first)
    except tomllib.TOMLDecodeError:
        done.assert_outcomes(failed=2)  # refused: no case runs
    else:
        done.assert_outcomes(passed=1, failed=1)  # a task read: its cases run, `off` expects 0.5
    done.stdout.fnmatch_lines(["*warnings summary*", "*tasks/own/task.toml:0: TaskNote: the task ships its own*"])
    text = done.stdout.str()
    assert "PWNED" not in text and first not in text, text
    assert not any(char in text for char in "\x1b\u009b\u009c\u009d\u202e"), text
    # (a task.toml not read is the refusal that runs none of the cases, not a note that they run with the defaults)
    assert "the run uses the defaults" not in text, text


def test_a_task_toml_linked_to_a_fifo_never_holds_the_warnings_summary(pytester, tmp_path):
    """``task.toml`` a link out of the task to a FIFO (or to ``/dev/zero``): the tool never reads it and
    says so in a note, but the note was warned at that file, and pytest's warnings summary reads the file
    it names (``linecache``, for the line under the note): pytest waited on the FIFO for ever after every
    case had passed (``/dev/zero``: it read until the machine ran out of memory). The note names the task's
    folder instead, which is never read."""
    task_dir = one_case_task(pytester, "linked")
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    (task_dir / "task.toml").unlink()
    (task_dir / "task.toml").symlink_to(pipe)
    # The timeout ends a run that hangs (it raises): one case takes a second or two.
    done = pytester.runpytest_subprocess(
        PYTHON_OPTION, "-p", "no:cacheprovider", "--verifier-cases", "tasks", timeout=120
    )
    done.assert_outcomes(passed=1)
    done.stdout.fnmatch_lines(["*warnings summary*", "*tasks/linked:0: TaskNote: task.toml leads out of the task*"])


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["alone", "xdist"])
def test_the_plugins_junit_carries_a_tasks_notes(pytester, env, monkeypatch, workers):
    """``test --junit`` lists a task's notes as its suite's ``note`` properties, but the plugin's
    ``--junitxml`` had no trace of a TaskNote for a passing case: CI's report was green with not a word.
    Now each task's notes are properties of the suite (once a task, named by its id), as ``test --junit``
    has them; not the test case's (pytest's record_property), which its default xunit2 does not allow."""
    if workers:
        pytest.importorskip("xdist")
        monkeypatch.setenv("PYTEST_ADDOPTS", inner_pytest_options("xdist", "xdist.looponfail"))
    _task_with_a_note(pytester)
    one_case_task(pytester, "plain")  # a task without a note: none of its own
    report = pytester.path / "report.xml"
    done = run(pytester, "--verifier-cases", "tasks", "-k", "only", f"--junitxml={report}", *workers)
    assert done.parseoutcomes()["passed"] == 2  # (xdist's workers count the deselected: it says none)
    root = ET.parse(report).getroot()
    notes = [p.get("value") for p in root.iterfind("testsuite/properties/property") if p.get("name") == "note"]
    assert len(notes) == 1, notes
    assert notes[0].startswith("tasks/own: the task ships its own runner (tests/.ng/run_verifier.py)"), notes
    assert notes[0].endswith("verifier-tui test PATH --runner task runs the task's own"), notes
    assert root.find(".//testcase/properties") is None  # xunit2, pytest's default, has no properties there
    tool = pytester.path / "t.xml"
    run_tool(env, "test", pytester.path / "tasks", "--python", PY, "--junit", tool)
    by_test = [p.get("value") for p in ET.parse(tool).getroot().iter("property") if p.get("name") == "note"]
    assert [note.split(": ", 1)[1].split(" (")[0] for note in by_test] == [
        note.split(": ", 1)[1].split(" (")[0] for note in notes
    ], (by_test, notes)


def test_every_action_of_the_engine_is_worded_with_an_option_the_plugin_has_or_its_command():
    """Each action the engine may suggest: an option pytest refuses (``--runner``,
    ``--task-id``, ``--response``) is said only after the verifier-tui command that
    takes it."""
    import importlib
    import re

    from verifier_tui.pytest_plugin import said

    # The module as sys.modules holds it, which `said` imports its Advice from: pytester's teardown drops a module
    # first imported in its test from sys.modules but not from its package, so `from verifier_tui.engine import
    # advice` could give a stale copy whose Advice `said` does not know (each action then read as its plain flag).
    advice = importlib.import_module("verifier_tui.engine.advice")

    actions = [value for value in vars(advice).values() if isinstance(value, advice.Action)]
    assert len(actions) > 10
    for action in actions:
        worded = said(advice.Advice(action))
        for option in re.findall(r"(?<![\w-])--[\w-]+", worded):
            before = worded[: worded.index(option)]
            assert option.startswith("--verifier-") or "verifier-tui " in before, (action, worded)


def test_a_trials_filled_env_template_names_no_option_the_plugin_lacks(pytester, tmp_path):
    """Harbor filled ``${W:-0.5}`` with another W on its machine: the note, and
    the agreement's reason why the two differ, said ``(--env WEIGHT=VALUE gives
    the one it had)``, an option pytest refuses."""
    verifier = "import os\n\ndef verify(workspace):\n    return float(os.environ['WEIGHT'])\n"
    demo = make_task(pytester.path / "tasks" / "demo", verifier, toml=SEPARATE + 'env = { WEIGHT = "${W:-0.5}" }\n')
    sandbox_trial(
        pytester.path / "jobs" / "j",
        demo,
        tmp_path,
        workspace={},
        mode="separate",
        capture=True,
        env={"WEIGHT": "0.25"},
    )
    done = run(pytester, "--verifier-cases", "jobs/j")
    done.assert_outcomes(failed=1)
    text = done.stdout.str()
    assert "which Harbor filled on the machine that ran the job" in text, text
    assert "(--env" not in text, text
    said = "the replay takes WEIGHT='0.5' from the template's default (verifier-tui run TRIAL --env WEIGHT=VALUE"
    assert text.count(said) >= 2, text  # the note and the agreement's reason


def test_a_trials_bare_template_names_the_command_that_passes_it(pytester, tmp_path, monkeypatch):
    """A trial's ``${W}`` took this shell's W into the replay; now it takes nothing of the shell's and
    says how to pass it: the plugin has no --env, so it names the command that has one."""
    monkeypatch.setenv("W", "0.25")
    verifier = "import os\n\ndef verify(workspace):\n    return float(os.environ.get('WEIGHT', '0'))\n"
    demo = make_task(pytester.path / "tasks" / "demo", verifier, toml=SEPARATE + 'env = { WEIGHT = "${W}" }\n')
    job = pytester.path / "jobs" / "j"
    sandbox_trial(job, demo, tmp_path, workspace={}, mode="separate", capture=True, env={"WEIGHT": "0.25"})
    done = run(pytester, "--verifier-cases", "jobs/j")
    done.assert_outcomes(failed=1)  # the replay, without WEIGHT, scores 0.0
    text = done.stdout.str()
    said = "W is not taken from your environment in a replay (WEIGHT = '${W}' in task.toml [verifier] env)"
    assert said in text and "verifier-tui run TRIAL --env W passes yours" in text, text
    assert "; --env" not in text, text


def test_a_cut_reward_names_no_option_the_plugin_lacks(pytester):
    """A failed case whose verifier wrote 500 reward keys: the report cut them
    with ``--json lists them all`` and ``(--json has them)``, an option pytest
    refuses."""
    one_case_task(
        pytester, "many", "def verify(workspace):\n    return {'reward': 0.0, **{f'k{i}': 1.0 for i in range(500)}}\n"
    )
    done = run(pytester, "--verifier-cases", "tasks")
    done.assert_outcomes(failed=1)
    text = done.stdout.str()
    assert "more keys" in text, text
    assert " --json" not in text.replace("verifier-tui test PATH --json", ""), text
    done.stdout.fnmatch_lines(["verdict: *more keys: verifier-tui test PATH --json lists them all)"])


def test_a_task_folder_given_as_an_argument_narrows_the_run_to_it(pytester, tasks):
    """``pytest --verifier-cases tasks tasks/sum-column``: pytest narrows a run
    to a folder given as an argument, but every task's cases ran; only a
    ``folder::case`` id narrowed them. A folder that holds no task (the
    user's own tests) narrows nothing."""
    done = run(pytester, "--verifier-cases", "tasks", "tasks/sum-column", "--co", "-q")
    ids = [line for line in done.stdout.lines if "::" in line]
    assert ids and all(line.startswith("tasks/sum-column::") for line in ids), done.stdout.str()
    run(pytester, "--verifier-cases", "tasks", "tasks/sum-column").assert_outcomes(passed=2, failed=1)
    run(pytester, "--verifier-cases", "tasks", "tasks/sum-column/cases").assert_outcomes(passed=2, failed=1)
    # plain-test-sh's own tests/test_outputs.py, written for the sandbox, is not pytest's to collect here.
    pytester.makepyfile(test_mine="def test_mine():\n    assert True\n")
    done = run(pytester, "--verifier-cases", "tasks", "tasks/plain-test-sh", "test_mine.py")
    done.assert_outcomes(passed=1, skipped=1)
    mine = pytester.mkdir("mine")
    (pytester.path / "test_mine.py").rename(mine / "test_mine.py")
    done = run(pytester, "--verifier-cases", "tasks", "mine")  # a folder of no task: its tests and every case
    done.assert_outcomes(passed=7, failed=1, skipped=1)


def test_run_below_the_rootdir_its_ids_are_paths_pytest_prints_and_takes_back(pytester, tasks, monkeypatch, tmp_path):
    """rootdir ``.``, pytest started in ``tasks/``: the ids were task names,
    which pytest takes relative to the rootdir, and the summary printed
    ``FAILED ../sum-column::wrong-total``, a path that does not exist."""
    pytester.makeini("[pytest]\n")
    monkeypatch.chdir(tasks)

    def here(*args):
        return pytester.runpytest_subprocess(PYTHON_OPTION, *args, timeout=300)

    done = here("--verifier-cases", ".")
    done.assert_outcomes(passed=6, failed=1, skipped=1)
    done.stdout.fnmatch_lines(["FAILED sum-column::wrong-total - expected*"])
    assert "../" not in done.stdout.str()
    done = here("--verifier-cases", ".", "--co", "-q")  # relative to the rootdir, as pytest lists any test
    done.stdout.fnmatch_lines(["tasks/hello-file::correct", "tasks/sum-column::wrong-total"])
    # The printed id, given back; --lf and -k, from here.
    done = here("--verifier-cases", ".", "sum-column::wrong-total", "-v")
    done.assert_outcomes(failed=1)
    done.stdout.fnmatch_lines(["sum-column::wrong-total FAILED*"])
    here("--verifier-cases", ".", "--lf").assert_outcomes(failed=1, deselected=7)
    here("--verifier-cases", ".", "-k", "sum-column and wrong").assert_outcomes(failed=1, deselected=7)
    # From the rootdir, the same case is tasks/...; an id of no case is said as pytest says it.
    monkeypatch.chdir(pytester.path)
    done = here("--verifier-cases", "tasks", "tasks/sum-column::wrong-total", "tasks/hello-file::correct")
    done.assert_outcomes(passed=1, failed=1)
    done.stdout.fnmatch_lines(["FAILED tasks/sum-column::wrong-total - expected*"])
    done = here("--verifier-cases", "tasks", "tasks/sum-column::nothing")
    assert done.ret == pytest.ExitCode.USAGE_ERROR
    done.stderr.fnmatch_lines(["*not found: tasks/sum-column::nothing*"])
    # A folder outside the rootdir: printed as a path from where pytest runs, that it takes back.
    outside = tmp_path / "elsewhere"
    copy_example("sum-column", outside / "sum-column")
    (outside / "sum-column" / "cases" / "wrong-total" / "expected.json").write_text('{"rewards": {"reward": 0.5}}')
    done = here("--verifier-cases", str(outside))
    done.assert_outcomes(passed=2, failed=1)
    printed = next(line for line in done.stdout.lines if line.startswith("FAILED ")).split()[1]
    assert (pytester.path / printed.split("::")[0]).resolve() == (outside / "sum-column").resolve()
    here("--verifier-cases", str(outside), printed).assert_outcomes(failed=1)


def test_a_folder_of_tasks_given_as_an_argument_is_the_plugins_alone(pytester, tasks):
    """``pytest --verifier-cases tasks tasks`` (or ``.``): pytest collected the
    folder too, and ran plain-test-sh's tests/test_outputs.py, written for the
    sandbox, here (three failures on a missing /app/report.json). The user's
    own tests beside the tasks still run."""
    pytester.makepyfile(test_mine="def test_mine():\n    assert True\n")
    for given in ("tasks", "."):
        done = run(pytester, "--verifier-cases", "tasks", given, "--co", "-q")
        assert "test_outputs" not in done.stdout.str(), done.stdout.str()
    run(pytester, "--verifier-cases", "tasks", "tasks").assert_outcomes(passed=6, failed=1, skipped=1)
    run(pytester, "--verifier-cases", "tasks", ".").assert_outcomes(passed=7, failed=1, skipped=1)


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["alone", "xdist"])
def test_a_dot_in_a_task_or_case_name_shows_as_written_under_v(pytester, tasks, monkeypatch, workers):
    """``pytest -v`` printed case ``v1.2`` of task ``hello.file`` as
    ``tasks/hello::file::v1::2``: pytest reads a test's location as a Python
    name and turns its dots into ``::``. The id shown is the one pytest takes
    back, and the failure's head line names it too."""
    if workers:
        pytest.importorskip("xdist")
        monkeypatch.setenv("PYTEST_ADDOPTS", inner_pytest_options("xdist", "xdist.looponfail"))
    task = tasks / "hello-file"
    task.rename(tasks / "hello.file")
    cases = tasks / "hello.file" / "cases"
    (cases / "correct").rename(cases / "v1.2")
    (cases / "wrong-text" / "expected.json").write_text('{"rewards": {"reward": 0.5}}')
    done = run(pytester, "--verifier-cases", "tasks/hello.file", "-v", *workers)
    done.assert_outcomes(passed=3, failed=1)
    text = done.stdout.str()
    assert "::v1::2" not in text and "hello::file" not in text, text
    done.stdout.fnmatch_lines(["*tasks/hello.file::v1.2 *", "*_ * tasks/hello.file::wrong-text _*"])
    run(pytester, "--verifier-cases", "tasks", "tasks/hello.file::v1.2").assert_outcomes(passed=1)


def test_a_task_folder_named_with_colons_is_given_back_by_its_id(pytester, tasks):
    """A task folder ``a::b``: its cases were printed ``tasks/a::b::correct``,
    and that id given back was refused (``file or directory not found``): the
    id was cut at its first ``::``, ``tasks/a``, which is no folder."""
    (tasks / "hello-file").rename(tasks / "a::b")
    done = run(pytester, "--verifier-cases", "tasks", "tasks/a::b::correct", "-v")
    done.assert_outcomes(passed=1)
    done.stdout.fnmatch_lines(["tasks/a::b::correct PASSED*"])
    run(pytester, "--verifier-cases", "tasks", "tasks/a::b").assert_outcomes(passed=4)


def test_a_case_folder_given_as_an_argument_narrows_the_run_to_that_case(pytester, tasks):
    """``pytest --verifier-cases tasks tasks/sum-column/cases/wrong-total``:
    every case of sum-column ran, where ``--verifier-cases`` given that folder
    (and ``verifier-tui test``) runs that case alone, and pytest narrows a run
    to the tests of a folder given."""
    for given in ("tasks/sum-column/cases/wrong-total", "tasks/sum-column/cases/wrong-total/workspace"):
        done = run(pytester, "--verifier-cases", "tasks", given, "-v")
        done.assert_outcomes(failed=1)
        done.stdout.fnmatch_lines(["tasks/sum-column::wrong-total FAILED*"])


def test_a_case_without_expected_json_is_a_skipped_test_saying_so(pytester, tasks):
    """A case of a task with no expected.json was left out without a word
    (``verifier-tui test`` lists it: ``wrong-text: not judged: ...``);
    a user counting the cases found one missing."""
    (tasks / "hello-file" / "cases" / "wrong-text" / "expected.json").unlink()
    done = run(pytester, "--verifier-cases", "tasks/hello-file", "-v", "-rs")
    done.assert_outcomes(passed=3, skipped=1)
    done.stdout.fnmatch_lines(
        ["tasks/hello-file::wrong-text SKIPPED*", "SKIPPED * not judged: it has no expected.json (write one, *"]
    )


def test_a_task_whose_cases_have_no_expected_json_is_not_said_to_have_no_case(pytester, tasks):
    """hello-file with its four cases but no expected.json, found below
    ``tasks``: its skipped test said ``not tested: it has no case: make one
    with verifier-tui run TASK --save-case NAME``, to a user looking at four."""
    for expected in (tasks / "hello-file" / "cases").glob("*/expected.json"):
        expected.unlink()
    done = run(pytester, "--verifier-cases", "tasks", "-rs")
    done.assert_outcomes(passed=2, failed=1, skipped=2)
    done.stdout.fnmatch_lines(
        ["SKIPPED * tasks/hello-file/task.toml: not tested: none of its 4 cases has an expected.json (write one, *"]
    )
    assert "hello-file/task.toml: not tested: it has no case" not in done.stdout.str()


def test_a_trial_whose_task_is_not_found_names_no_option_the_plugin_lacks_throughout(pytester, tmp_path):
    """A job whose task moved away: the head line said to give it to
    ``verifier-tui test JOB --task DIR (the plugin takes none)``, but the
    walkthrough's task line below still said ``give the task folder with
    --task DIR``, an option pytest refuses."""
    demo = make_task(pytester.path / "tasks" / "demo", READS_HELLO, toml=SEPARATE)
    sandbox_trial(pytester.path / "jobs" / "moved", demo, tmp_path, workspace={"hello.txt": "hi"}, capture=True)
    demo.rename(tmp_path / "elsewhere")
    done = run(pytester, "--verifier-cases", "jobs/moved")
    done.assert_outcomes(failed=1)
    text = done.stdout.str()
    assert "the task was not found" in text
    assert "with --task DIR" not in text, text
    assert text.count("--task DIR") == text.count("verifier-tui test JOB --task DIR (the plugin takes none)") >= 2


def test_a_case_folder_named_beside_its_task_is_collected_once(pytester, tasks):
    """``--verifier-cases tasks/hello-file/cases/correct --verifier-cases
    tasks``: the case was collected by each, and ran twice under one id (two
    JUnit test cases of one name, five results for four cases)."""
    report = pytester.path / "report.xml"
    for first, second in (
        ("tasks/hello-file/cases/correct", "tasks"),
        ("tasks/hello-file", "tasks/hello-file/cases/correct"),
    ):
        done = run(pytester, "--verifier-cases", first, "--verifier-cases", second, f"--junitxml={report}")
        names = [(c.get("classname"), c.get("name")) for c in ET.parse(report).getroot().iter("testcase")]
        assert names.count(("tasks.hello-file", "correct")) == 1, names
        assert len(names) == len(set(names)), names
    done.assert_outcomes(passed=4)


def test_verifier_cases_in_the_ini_files_addopts_keeps_the_users_testpaths(pytester, tasks):
    """``addopts = --verifier-cases tasks`` in pytest.ini, so that every run
    tests the cases too: a plain ``pytest`` then ran the cases alone, and the
    user's own tests (``testpaths = mine``) silently never ran again. Given on
    the command line, ``--verifier-cases`` still runs the cases alone."""
    pytester.makeini("[pytest]\ntestpaths = mine\naddopts = --verifier-cases tasks/hello-file\n")
    mine = pytester.mkdir("mine")
    (mine / "test_mine.py").write_text("def test_mine():\n    assert True\n")
    done = run(pytester, "-v")
    done.assert_outcomes(passed=5)
    done.stdout.fnmatch_lines(["mine/test_mine.py::test_mine PASSED*"])
    pytester.makeini("[pytest]\ntestpaths = mine\n")
    run(pytester, "--verifier-cases", "tasks/hello-file").assert_outcomes(passed=4)


def test_cases_are_collected_in_the_order_a_user_counts(pytester):
    """Cases c1, c2, c10: the plugin collected them as text sorts (c1, c10, c2),
    not as ``test``'s table and the TUI list them."""
    task_dir = make_task(pytester.path / "tasks" / "t", cases={name: {} for name in ("c10", "c2", "c1")})
    for name in ("c10", "c2", "c1"):
        (task_dir / "cases" / name / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    done = run(pytester, "--verifier-cases", "tasks", "--collect-only", "-q")
    done.stdout.fnmatch_lines(["tasks/t::c1", "tasks/t::c2", "tasks/t::c10"], consecutive=True)


@pytest.mark.parametrize("odd", ["x\ny", "x\u202ey"], ids=["newline", "bidi"])
def test_a_task_folder_named_with_a_line_break_or_a_bidi_control_is_given_back_by_its_printed_id(pytester, tasks, odd):
    """A task folder someone sent, named with a line break or a right-to-left
    override: its id is printed escaped (``tasks/x\\ny::correct``), on one line,
    and that id given back was refused (``file or directory not found``): no
    folder has the escaped name."""
    (tasks / "hello-file").rename(tasks / odd)
    done = run(pytester, "--verifier-cases", "tasks", "-v", "-k", "correct")
    printed = next(line for line in done.stdout.lines if line.startswith("tasks/x")).split()[0]
    assert "\n" not in printed and "\u202e" not in printed and printed.endswith("y::correct")
    done = run(pytester, "--verifier-cases", "tasks", printed, "-v")
    done.assert_outcomes(passed=1)
    done.stdout.fnmatch_lines([f"{printed} PASSED*"])
    task = printed.removesuffix("::correct")
    run(pytester, "--verifier-cases", "tasks", task).assert_outcomes(passed=4)
    done = run(pytester, "--verifier-cases", "tasks", f"{task}::nothing")  # as any id of no case is said
    assert done.ret == pytest.ExitCode.USAGE_ERROR
    done.stderr.fnmatch_lines([f"*not found: {task}::nothing*"])


def test_a_task_that_is_pytests_rootdir_is_named_by_its_folder(pytester, tasks, monkeypatch, tmp_path):
    """``pytest --verifier-cases .`` in a task with its own pytest.ini (chosen
    with ``-c``: a task's ini is otherwise refused): its
    ids were ``.::correct`` and JUnit's classname ``.``, which names nothing
    in a CI report. They name the task's folder, and the printed ids are taken
    back, from the task and from a folder in it."""
    task = tasks / "sum-column"
    (task / "pytest.ini").write_text("[pytest]\n")
    monkeypatch.chdir(task)
    report = tmp_path / "report.xml"

    def here(*args):
        return pytester.runpytest_subprocess(
            PYTHON_OPTION, "-c", "pytest.ini", "--verifier-cases", ".", *args, timeout=300
        )

    done = here("-v", f"--junitxml={report}")
    done.assert_outcomes(passed=2, failed=1)
    assert ".::" not in done.stdout.str(), done.stdout.str()
    done.stdout.fnmatch_lines(["sum-column::correct PASSED*", "FAILED sum-column::wrong-total - expected*"])
    assert {c.get("classname") for c in ET.parse(report).getroot().iter("testcase")} == {"sum-column"}
    here("sum-column::wrong-total").assert_outcomes(failed=1)
    here("--lf").assert_outcomes(failed=1, deselected=2)
    monkeypatch.chdir(task / "tests")  # below the rootdir: the id is a path from here
    below = [PYTHON_OPTION, "-c", "../pytest.ini", "--verifier-cases", ".."]
    done = pytester.runpytest_subprocess(*below, "-v", timeout=300)
    done.stdout.fnmatch_lines(["FAILED ../sum-column::wrong-total - expected*"])
    pytester.runpytest_subprocess(*below, "../sum-column::wrong-total", timeout=300).assert_outcomes(failed=1)


def test_test_junit_and_the_plugins_junitxml_list_the_same_cases_in_the_same_words(pytester, tasks, env):
    """``test --junit`` left out a case without expected.json (the plugin's
    report has it, skipped: ``not judged: ...``; test's text lists it too),
    and gave an unusable expected.json's error without the ``not run:`` the
    plugin and test's own row say. A CI moving from one to the other saw a
    test vanish and another reworded."""
    cases = tasks / "hello-file" / "cases"
    (cases / "wrong-text" / "expected.json").unlink()
    (cases / "wrong-case" / "expected.json").write_text('{"rewards": ')

    def read(report):  # (task, case): passed, or the message of what it is instead (status aside)
        return {
            (c.get("classname").removeprefix("tasks."), c.get("name")): next(
                (
                    f"{e.tag if e.tag == 'skipped' else 'not passed'}: {e.get('message')}"
                    for e in c
                    if e.tag in ("failure", "error", "skipped")
                ),
                "passed",
            )
            for c in ET.parse(report).getroot().iter("testcase")
        }

    run(pytester, "--verifier-cases", "tasks", f"--junitxml={pytester.path / 'p.xml'}")
    run_tool(env, "test", tasks, "--python", PY, "--junit", pytester.path / "t.xml")
    by_pytest, by_test = read(pytester.path / "p.xml"), read(pytester.path / "t.xml")
    assert by_test == by_pytest
    assert by_test[("hello-file", "wrong-text")].startswith("skipped: not judged: it has no expected.json")
    assert by_test[("hello-file", "wrong-case")].startswith("not passed: not run: expected.json is not valid JSON")


def test_test_junit_and_the_plugin_name_a_case_of_odd_characters_alike(pytester, env):
    """Cases named with a line break, a control character, a bidi control
    and a byte that is not UTF-8: the plugin's report named them as every
    face does (``nl\\nname``, ``bidi<U+202E>name``, ``bad\\xffname``), ``test
    --junit`` wrote the line break as it is, ``bidi\\u202ename`` and
    ``bad\\udcffname`` (Python's surrogate escape): one case, two names."""
    names = case_names_in_both_reports(
        pytester, env, [b"nl\nname", b"ctl\x01name", "bidi\u202ename".encode(), b"bad\xffname"]
    )
    assert "nl\\nname" in names


def case_names_in_both_reports(pytester, env, names: list[bytes]) -> list[str]:
    """A task with a case ``plain`` and a case named each of ``names``, each
    expecting 1.0, tested by ``test --junit`` and by the plugin's
    ``--junitxml``: the cases' names in the first, checked to be those in the second."""
    import os

    task_dir = make_task(pytester.path / "tasks" / "odd", cases={"plain": {}})
    cases = os.fsencode(task_dir / "cases")
    for name in names:
        shutil.copytree(cases + b"/plain", cases + b"/" + name)
    for case in os.listdir(cases):
        with open(cases + b"/" + case + b"/expected.json", "w") as handle:
            handle.write('{"rewards": {"reward": 1.0}}')

    def named(report):
        return sorted(c.get("name") for c in ET.parse(report).getroot().iter("testcase"))

    done = run(pytester, "--verifier-cases", "tasks", f"--junitxml={pytester.path / 'p.xml'}")
    done.assert_outcomes(passed=len(names) + 1)
    run_tool(env, "test", task_dir, "--python", PY, "--junit", pytester.path / "t.xml")
    by_test = named(pytester.path / "t.xml")
    assert by_test == named(pytester.path / "p.xml")
    return by_test


def test_test_junit_and_the_plugin_name_a_task_and_a_case_of_odd_characters_alike(pytester, env):
    """A task named with a byte that is not UTF-8, a bidi control or a line
    break, and a case named with Unicode's non-characters U+FFFE U+FFFF and an emoji:
    ``test --junit``'s classname was the name as it is (``bad\\udcfftask``,
    ``bidi\\u202etask``, a raw line break) where the plugin's is
    ``tasks.bad\\xfftask``, and the case ``\\ufffe\\uffff`` where pytest
    writes ``#xFFFE#xFFFF`` (and ``#x1F600``): one case, two names."""
    import os

    tasks = os.fsencode(pytester.path / "tasks")
    for name in (b"bad\xfftask", "bidi\u202etask".encode(), b"nl\ntask"):
        task_dir = make_task(pytester.path / "tasks" / "plain", cases={"plain": {}})
        shutil.copytree(task_dir / "cases" / "plain", task_dir / "cases" / "non\ufffe\uffff\U0001f600char")
        for case in os.listdir(task_dir / "cases"):
            (task_dir / "cases" / case / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
        os.rename(os.fsencode(task_dir), tasks + b"/" + name)

    def names(report, prefix=""):
        cases = ET.parse(report).getroot().iter("testcase")
        return sorted((c.get("classname").removeprefix(prefix), c.get("name")) for c in cases)

    run(pytester, "--verifier-cases", "tasks", f"--junitxml={pytester.path / 'p.xml'}").assert_outcomes(passed=6)
    run_tool(env, "test", pytester.path / "tasks", "--python", PY, "--junit", pytester.path / "t.xml")
    by_test = names(pytester.path / "t.xml")
    assert by_test == names(pytester.path / "p.xml", "tasks.")
    assert ("bad\\xfftask", "non#xFFFE#xFFFF#x1F600char") in by_test


def test_the_plugins_junitxml_holds_a_task_named_with_a_non_character(pytester, env):
    """A task folder named with U+FFFE (or U+FFFF), one failing case: pytest
    escapes a test's name and message but writes JUnit's classname as the id
    has it, so ``--junitxml`` held the raw character and no XML reader took
    the file. The id says it #xFFFE, the classname as ``test --junit`` has it;
    an emoji, which XML holds, is one in both."""
    for name in ("t\ufffe", "u\uffff\U0001f600"):
        one_case_task(pytester, name, "def verify(workspace):\n    return 0.0\n")

    def names(report, prefix=""):
        cases = ET.parse(report).getroot().iter("testcase")  # a file an XML reader takes
        return sorted((c.get("classname").removeprefix(prefix), c.get("name")) for c in cases)

    run(pytester, "--verifier-cases", "tasks", f"--junitxml={pytester.path / 'p.xml'}").assert_outcomes(failed=2)
    # xunit1 writes each case's file too (reportinfo's path), as the id has it
    xunit1 = run(pytester, "--verifier-cases", "tasks", "-o", "junit_family=xunit1", "--junitxml=x1.xml")
    xunit1.assert_outcomes(failed=2)
    run_tool(env, "test", pytester.path / "tasks", "--python", PY, "--junit", pytester.path / "t.xml")
    by_test = names(pytester.path / "t.xml")
    assert by_test == names(pytester.path / "p.xml", "tasks.") == names(pytester.path / "x1.xml", "tasks.")
    assert by_test == [("t#xFFFE", "only"), ("u#xFFFF\U0001f600", "only")]
    run(pytester, "--verifier-cases", "tasks", "tasks/t#xFFFE::only").assert_outcomes(failed=1)  # the id printed


def test_a_case_folder_given_as_an_argument_runs_that_case_or_says_it_is_not_collected(pytester, tasks):
    """``pytest --verifier-cases tasks/hello-file/cases/correct
    tasks/hello-file/cases/wrong-text``: the second folder narrowed the run to
    hello-file, so ``correct`` ran and nothing said that ``wrong-text``, the
    case asked for, was not among the cases; a case folder without
    expected.json given as an argument ran every case of its task."""
    cases = tasks / "hello-file" / "cases"
    done = run(pytester, "--verifier-cases", str(cases / "correct"), str(cases / "wrong-text"))
    assert done.ret == pytest.ExitCode.USAGE_ERROR, done.stdout.str()
    done.stderr.fnmatch_lines(["*not found: */hello-file/cases/wrong-text (no such case under --verifier-cases)*"])
    (cases / "wrong-text" / "expected.json").unlink()
    done = run(pytester, "--verifier-cases", "tasks", "tasks/hello-file/cases/wrong-text", "-v", "-rs")
    done.assert_outcomes(skipped=1)
    done.stdout.fnmatch_lines(["tasks/hello-file::wrong-text SKIPPED*"])


def test_test_junit_and_the_plugin_list_the_same_tests_for_a_task_without_a_verifier(pytester, tasks, env):
    """A task with no verifier and four cases, one without expected.json:
    ``test --junit`` wrote one ``(task)`` error, the plugin three cases not
    run and one not judged. Both now list the cases, as the plugin did."""
    task = tasks / "hello-file"
    (task / "tests" / "verifier.py").unlink()
    (task / "cases" / "wrong-text" / "expected.json").unlink()

    run(pytester, "--verifier-cases", "tasks", f"--junitxml={pytester.path / 'p.xml'}")
    run_tool(env, "test", tasks, "--python", PY, "--junit", pytester.path / "t.xml")
    by_pytest, by_test = _hello_file_tests(pytester.path / "p.xml"), _hello_file_tests(pytester.path / "t.xml")
    assert by_test == by_pytest  # the same tests, each with the same tag and message
    assert {name: tag == "skipped" for name, (tag, _m) in by_test.items()} == {
        "correct": False,
        "missing-file": False,
        "wrong-case": False,
        "wrong-text": True,
    }
    assert by_test["correct"][1].startswith("not run: no verifier found for hello-file"), by_test


def test_test_text_counts_the_cases_of_a_task_without_a_verifier_as_junit_and_the_plugin_do(pytester, tasks, env):
    """A task with no verifier and four cases, one without expected.json:
    ``test``'s text said one line, ``! not tested: no verifier found ...``,
    and counted one task, while ``test --junit`` and the plugin list three
    cases not run and one not judged. The text now lists each case too, the
    reason said once, and its summary counts the same tests; alone too
    (nothing could run: the lines on stderr), where the text was one line."""
    task = tasks / "hello-file"
    (task / "tests" / "verifier.py").unlink()
    (task / "cases" / "wrong-text" / "expected.json").unlink()
    run(pytester, "--verifier-cases", "tasks", f"--junitxml={pytester.path / 'p.xml'}")
    not_run = {n for n, (tag, _m) in _hello_file_tests(pytester.path / "p.xml").items() if tag == "failure"}
    assert not_run == {"correct", "missing-file", "wrong-case"}

    for target in (tasks, task):  # beside tasks that run, and alone
        done = run_tool(env, "test", target, "--python", PY, "--junit", pytester.path / "t.xml")
        text = (done.stdout + done.stderr).splitlines()
        assert sum("no verifier found for hello-file" in line for line in text) == 1, text  # the reason, once
        listed = {n for n in not_run if any(line.endswith(f"{n}: not run (its task is not tested)") for line in text)}
        assert listed == not_run, text
        assert target == task or "1 task not tested, 3 cases not run" in text[-1], text  # alone: no summary
        assert {n for n, (tag, _m) in _hello_file_tests(pytester.path / "t.xml").items() if tag == "failure"} == not_run


def test_test_and_the_plugin_say_alike_that_no_case_of_a_task_harbor_would_refuse_ran(pytester, tasks, env):
    """A task whose task.toml Harbor 0.26 would not load (``version = 1``):
    ``test --junit`` reported its cases passed beside a ``task.toml`` error,
    and ``test``'s rows passed them, while the plugin failed each. Harbor
    would run none of them: every face now says each case was not run, why
    once, and ``test`` exits 2 (nothing ran to pass)."""
    task = tasks / "hello-file"
    (task / "task.toml").write_text("version = 1\n")
    run(pytester, "--verifier-cases", "tasks", f"--junitxml={pytester.path / 'p.xml'}")
    done = run_tool(env, "test", tasks, "--python", PY, "--junit", pytester.path / "t.xml")
    by_pytest, by_test = _hello_file_tests(pytester.path / "p.xml"), _hello_file_tests(pytester.path / "t.xml")
    assert by_test == by_pytest, (by_test, by_pytest)
    assert set(by_test) == {"correct", "missing-file", "wrong-case", "wrong-text"}, by_test
    refused = "not run: Harbor would refuse to run this task: version = 1 is not a string"
    assert all(tag == "failure" and m.startswith(refused) for tag, m in by_test.values()), by_test
    text = done.stdout.splitlines()
    assert done.returncode == 2 and sum("version = 1 is not a string" in line for line in text) == 1, done.stdout
    assert sum(line.endswith(": not run (its task is not tested)") for line in text) == 4, done.stdout
    assert not any(line.startswith("✓") and "wrong-case" in line for line in text), done.stdout
    assert "1 task not tested, 4 cases not run" in text[-1], done.stdout


def _hello_file_tests(report):
    """{case: (tag, message)} of hello-file's test cases in a JUnit report:
    how each was reported (error, failure, skipped) and its message."""
    return {
        c.get("name"): next(((e.tag, e.get("message")) for e in c if e.tag in ("error", "failure", "skipped")), None)
        for c in ET.parse(report).getroot().iter("testcase")
        if c.get("classname").removeprefix("tasks.") == "hello-file"
    }


def test_a_task_without_a_verifier_whose_one_case_is_invalid_keeps_its_error(pytester, tasks, env):
    """A task with no verifier and one case whose expected.json is not valid
    JSON: ``test`` said "no verifier found", but ``test --junit`` and the
    plugin held only the case's "not run: expected.json is not valid JSON",
    the task's own error lost. Both now report the ``(task)`` too, alike."""
    task = tasks / "hello-file"
    (task / "tests" / "verifier.py").unlink()
    for case in (task / "cases").iterdir():
        if case.name != "correct":
            shutil.rmtree(case)
    (task / "cases" / "correct" / "expected.json").write_text("{not json")
    run(pytester, "--verifier-cases", "tasks", f"--junitxml={pytester.path / 'p.xml'}")
    run_tool(env, "test", tasks, "--python", PY, "--junit", pytester.path / "t.xml")
    by_pytest, by_test = _hello_file_tests(pytester.path / "p.xml"), _hello_file_tests(pytester.path / "t.xml")
    assert by_test == by_pytest, (by_test, by_pytest)
    assert set(by_test) == {"(task)", "correct"}, by_test
    assert by_test["(task)"][1].startswith("not run: no verifier found for hello-file"), by_test
    assert "expected.json is not valid JSON" in by_test["correct"][1], by_test


def test_a_folder_in_cases_that_is_no_case_is_not_found(pytester, tasks):
    """``pytest --verifier-cases tasks/hello-file tasks/hello-file/cases/.draft``
    (a folder inside cases/ that is no case) ran every case of the task: it
    is now said not found, as any id of no case is."""
    (tasks / "hello-file" / "cases" / ".draft").mkdir()
    done = run(pytester, "--verifier-cases", "tasks/hello-file", "tasks/hello-file/cases/.draft")
    assert done.ret == pytest.ExitCode.USAGE_ERROR, done.stdout.str()
    done.stderr.fnmatch_lines(["*not found: tasks/hello-file/cases/.draft (no such case under --verifier-cases)*"])


def _two_verifiers(folder):
    """``<folder>/two``: hello-file with a second verifier, ``tests/other.py``,
    that scores 0.0 on every case (so its ``correct`` and ``missing-file`` fail)."""
    task = folder / "two"
    copy_example("hello-file", task)
    (task / "tests" / "other.py").write_text("def verify(workspace):\n    return 0.0\n")
    return task


def test_two_verifiers_of_one_task_in_one_run_have_ids_of_their_own(pytester, tasks):
    """``--verifier-cases two/tests/verifier.py --verifier-cases two/tests/other.py``:
    both verifiers' collectors were ``two``, each case id came twice (``two::correct``),
    JUnit had repeated (classname, name) pairs, which CI merges or drops, and the second
    verifier's task note was lost. Now each verifier's collector is the task's id and the
    verifier in the task (only then: a task of one verifier keeps its ids), an id that
    pytest takes back, that --lf and a case folder narrow to, and that never names the
    verifier's file as a path (pytest would import it here, outside the sandbox)."""
    two = _two_verifiers(tasks)
    both = ["--verifier-cases", "tasks/two/tests/verifier.py", "--verifier-cases", "tasks/two/tests/other.py"]
    done = run(pytester, *both, "--verifier-cases", "tasks/sum-column", "--co", "-q")
    ids = [line for line in done.stdout.lines if "::" in line]
    assert len(ids) == len(set(ids)) == 11, done.stdout.str()
    assert {"tasks/two::tests/verifier.py::correct", "tasks/two::tests/other.py::correct"} <= set(ids), ids
    assert "tasks/sum-column::correct" in ids  # one verifier: its ids as they were
    report = pytester.path / "report.xml"
    done = run(pytester, *both, "-v", f"--junitxml={report}")
    done.assert_outcomes(passed=6, failed=2)
    done.stdout.fnmatch_lines(["FAILED tasks/two::tests/other.py::correct - expected*"])
    root = ET.parse(report).getroot()
    names = [(c.get("classname"), c.get("name")) for c in root.iter("testcase")]
    assert len(names) == len(set(names)) == 8, names
    assert ("tasks.two.tests/other.py", "correct") in names, names
    notes = [p.get("value") for p in root.iterfind("testsuite/properties/property") if p.get("name") == "note"]
    assert any(note.startswith("tasks/two::tests/other.py: the sandbox would not run tests/other.py") for note in notes)
    # Given back as printed, by the verifier, by a case folder (both verifiers' case), and by --lf.
    run(pytester, *both, "tasks/two::tests/other.py::correct").assert_outcomes(failed=1)
    run(pytester, *both, "tasks/two::tests/other.py").assert_outcomes(passed=2, failed=2)
    done = run(pytester, *both, str(two / "cases" / "correct"), "-v")
    done.assert_outcomes(passed=1, failed=1)
    done.stdout.fnmatch_lines(["tasks/two::tests/verifier.py::correct PASSED*"])
    done = pytester.runpytest_subprocess(PYTHON_OPTION, *both, f"--junitxml={report}")  # with the cache, for --lf
    done = pytester.runpytest_subprocess(PYTHON_OPTION, *both, "--lf", "-v")
    done.assert_outcomes(failed=2, deselected=6)
    done.stdout.fnmatch_lines(["tasks/two::tests/other.py::correct FAILED*"])


def test_a_jobs_folders_that_are_no_trial_are_said_as_test_job_says_them(pytester, tmp_path):
    """A job holding folders that are no trial (a stray ``notes/``, one named with a
    terminal escape): ``verifier-tui test JOB`` says each ``left out`` under its table,
    the plugin said nothing, its trial green. A TaskNote at the job's trials says each,
    in test JOB's words, never the escape raw."""
    demo = make_task(pytester.path / "tasks" / "demo", READS_HELLO, toml=SEPARATE)
    job = pytester.path / "jobs" / "j"
    sandbox_trial(job, demo, tmp_path, workspace={"hello.txt": "hi"}, mode="separate", capture=True)
    (job / "notes").mkdir()
    (job / "\x1b]0;PWNED\x07").mkdir()
    done = run(pytester, "--verifier-cases", "jobs/j")
    done.assert_outcomes(passed=1, warnings=2)
    left_out = "not a trial folder (no trial.log, no config.json of a trial): left out"
    done.stdout.fnmatch_lines(["*warnings summary*", f"*TaskNote: notes: {left_out}"])
    text = done.stdout.str()
    assert f"\\x1b]0;PWNED\\x07: {left_out}" in text and "\x1b" not in text, text


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["alone", "xdist"])
def test_the_plugins_junit_carries_a_jobs_folders_that_are_no_trial(pytester, tmp_path, env, monkeypatch, workers):
    """``test JOB --junit`` writes a job's folders that are no trial (a stray folder, a link) as the suite's
    ``note`` properties; the plugin's ``--junitxml`` had only the tasks' notes, so CI's report of the job was
    green with not a word of them. Each is a note of the suite now, once a job however many its trials."""
    if workers:
        pytest.importorskip("xdist")
        monkeypatch.setenv("PYTEST_ADDOPTS", inner_pytest_options("xdist", "xdist.looponfail"))
    demo = make_task(pytester.path / "tasks" / "demo", READS_HELLO, toml=SEPARATE)
    job = pytester.path / "jobs" / "j"
    for name in ("demo__aaaaaaa", "demo__bbbbbbb"):
        sandbox_trial(job, demo, tmp_path, workspace={"hello.txt": "hi"}, mode="separate", capture=True, name=name)
    (job / "notes").mkdir()
    report = pytester.path / "report.xml"
    done = run(pytester, "--verifier-cases", "jobs/j", f"--junitxml={report}", *workers)
    assert done.parseoutcomes()["passed"] == 2
    notes = [p.get("value") for p in ET.parse(report).getroot().iter("property") if p.get("name") == "note"]
    left_out = "notes: not a trial folder (no trial.log, no config.json of a trial): left out"
    assert notes == [f"jobs/j: {left_out}"], notes
    tool = pytester.path / "t.xml"
    run_tool(env, "test", job, "--python", PY, "--junit", tool)
    assert [p.get("value") for p in ET.parse(tool).getroot().iter("property") if p.get("name") == "note"] == [left_out]


def test_a_jobs_note_made_an_error_fails_the_trial_in_a_jobs_words(pytester, tmp_path):
    """Under ``-W error`` a job's note (a stray folder in it) failed its passing trial saying "the case
    passed, but its task's note is an error here": a trial, and its job's note. Said so now."""
    demo = make_task(pytester.path / "tasks" / "demo", READS_HELLO, toml=SEPARATE)
    job = pytester.path / "jobs" / "j"
    sandbox_trial(job, demo, tmp_path, workspace={"hello.txt": "hi"}, mode="separate", capture=True)
    (job / "notes").mkdir()
    done = run(pytester, "--verifier-cases", "jobs/j", "-W", "error")
    done.assert_outcomes(failed=1)
    text = done.stdout.str()
    assert "Traceback" not in text and "case passed" not in text and "task's note" not in text, text
    done.stdout.fnmatch_lines(
        [
            "jobs/j::demo__aaaaaaa: the trial passed, but its job's note is an error here "
            "(-W error or filterwarnings): notes: not a trial folder *",
            "FAILED jobs/j::demo__aaaaaaa - the trial passed, but its job's *",
        ]
    )


def test_a_jobs_note_made_an_error_fails_its_own_jobs_trials_only(pytester, tmp_path):
    """Under ``-W error`` a folder of jobs, one holding a stray folder, failed every job's passing trials on
    that job's note: a clean job's trial was blamed for another job's folder. The folder's own notes (a
    stray folder beside the jobs) stay every trial's."""
    demo = make_task(pytester.path / "tasks" / "demo", READS_HELLO, toml=SEPARATE)
    for name in ("a", "b"):
        job = pytester.path / "jobs" / name
        sandbox_trial(job, demo, tmp_path / name, workspace={"hello.txt": "hi"}, mode="separate", capture=True)
    (pytester.path / "jobs" / "a" / "notes").mkdir()
    done = run(pytester, "--verifier-cases", "jobs", "-W", "error")
    done.assert_outcomes(failed=1, passed=1)
    done.stdout.fnmatch_lines(["FAILED jobs/a::demo__aaaaaaa - the trial passed, but its job's *"])


def test_a_misspelt_sandbox_is_one_usage_line(pytester, tasks, monkeypatch):
    """VERIFIER_TUI_SANDBOX misspelt: the plugin raised it through pytest's configure, INTERNALERROR and a
    traceback, exit 3. It is one usage line, as the commands say it."""
    monkeypatch.setenv("VERIFIER_TUI_SANDBOX", "bogus")
    done = run(pytester, "--verifier-cases", "tasks/hello-file")
    text = done.stdout.str() + done.stderr.str()
    assert "INTERNALERROR" not in text and "Traceback" not in text, text
    assert done.ret == pytest.ExitCode.USAGE_ERROR
    done.stderr.fnmatch_lines(["*VERIFIER_TUI_SANDBOX='bogus': expected auto, namespace or copy"])


def test_the_trials_of_two_tasks_ask_for_the_sandbox_once(pytester, env, tmp_path, monkeypatch):
    """``--verifier-cases jobs/j`` with VERIFIER_TUI_SANDBOX=namespace: each task's replays probed the
    sandbox anew, and a probe that could not be tried a moment after the first (no process slot to
    spare) failed that task's trials "not replayed: ...", the machine's fault said as theirs. The
    sandbox is asked once for the run: every trial is replayed in it."""
    from tests.helpers.processes import bwrap_probes_that_fail, needs_namespaces

    needs_namespaces()
    job = pytester.path / "jobs" / "j"
    for name in ("one", "two"):
        demo = make_task(pytester.path / "tasks" / name, READS_HELLO, toml=SEPARATE)
        sandbox_trial(job, demo, tmp_path, workspace={"hello.txt": "hi"}, capture=True, name=f"{name}__aaaaaaa")
    sandboxed = bwrap_probes_that_fail(env, tmp_path / "bin", after=1)
    for name in ("PATH", "VERIFIER_TUI_SANDBOX", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, sandboxed[name])
    run(pytester, "--verifier-cases", "jobs/j").assert_outcomes(passed=2)
    assert (tmp_path / "bin" / "probed").read_text().count("x") == 1


#: A plugin of the inner pytest's, loaded before the run is collected: the sandbox's probe times out at
#: once (a bwrap that never answers).
NEVER_ANSWERS = """
from verifier_tui.engine.sandbox import isolation

isolation.bwrap_candidates = lambda: [STAND_IN]
isolation.PROBE_TIMEOUT_S = 0.3
"""


def test_a_probe_that_times_out_fails_each_case_in_one_line(pytester, tasks, tmp_path, monkeypatch):
    """The sandbox's probe timed out (a machine too busy): the plugin's start of the next case ahead
    raised it through pytest, INTERNALERROR and a traceback, no case reported, exit 3. Each case now
    fails with the one line, the probe waited for once. Never a usage error: that would run none of
    the session's other tests, leave the last --junitxml report in place, and crash xdist's workers."""
    from tests.helpers.tasks import write

    started = tmp_path / "started"
    stand_in = write(tmp_path / "bwrap", f"#!/bin/sh\necho x >> {started}\nexec sleep 60\n")
    stand_in.chmod(0o755)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    pytester.makepyfile(never_answers=NEVER_ANSWERS.replace("STAND_IN", repr(str(stand_in))))
    pytester.makepyfile(test_mine="def test_mine():\n    pass\n")
    monkeypatch.setenv("PYTHONPATH", str(pytester.path), prepend=":")
    report = pytester.path / "report.xml"
    report.write_text("<testsuites/>")  # the last run's, to be replaced
    done = run(
        pytester, "-p", "never_answers", "--verifier-cases", "tasks/hello-file", "test_mine.py", f"--junitxml={report}"
    )
    text = done.stdout.str() + done.stderr.str()
    assert "INTERNALERROR" not in text and "Traceback" not in text, text
    done.assert_outcomes(failed=4, passed=1)
    done.stdout.fnmatch_lines(["*tasks/hello-file::correct: *did not answer within 0.3 s*"])
    assert 'failures="4"' in report.read_text()
    assert started.read_text().count("x") == 1


def test_a_trial_with_no_sandbox_to_replay_in_says_not_replayed_once(pytester, tmp_path, monkeypatch):
    """The same probe, on a job: each trial failed "not replayed: not replayed: cannot try the
    sandbox's view: ...", the words said twice. Once now, as a trial that cannot be read says it."""
    from tests.helpers.tasks import write

    stand_in = write(tmp_path / "bwrap", "#!/bin/sh\nexec sleep 60\n")
    stand_in.chmod(0o755)
    demo = make_task(pytester.path / "tasks" / "demo", READS_HELLO, toml=SEPARATE)
    sandbox_trial(pytester.path / "jobs" / "j", demo, tmp_path / "run", workspace={"hello.txt": "hi"}, capture=True)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    pytester.makepyfile(never_answers=NEVER_ANSWERS.replace("STAND_IN", repr(str(stand_in))))
    monkeypatch.setenv("PYTHONPATH", str(pytester.path), prepend=":")
    done = run(pytester, "-p", "never_answers", "--verifier-cases", "jobs/j")
    done.assert_outcomes(failed=1)
    text = done.stdout.str()
    assert "not replayed: cannot try the sandbox's view: " in text and "not replayed: not replayed" not in text, text


@pytest.mark.parametrize(
    "name",
    [b"\x01" * 250 + "\U0001f600".encode(), b"\xff" * 248 + b"\n" + "\U0001f600".encode()],
    ids=["past-1000-characters", "line-break"],
)
def test_test_junit_and_the_plugin_cut_a_case_name_past_1000_characters_alike(pytester, env, name):
    """A case folder's name that is said in more than 1,000 characters (each
    control byte or byte not UTF-8 is said in four, ``\\x01``), with an emoji
    (pytest's junitxml writes ``#x1F600``): the plugin's name was cut before
    pytest escaped it, ``test --junit``'s after, so the two reports named one
    case two ways, with different counts of what was left out."""
    cut = next(n for n in case_names_in_both_reports(pytester, env, [name]) if n != "plain")
    assert ("…" in cut or "\\n" in cut) and "\n" not in cut and cut.endswith("#x1F600")


def test_a_crlf_test_sh_bash_runs_fails_the_case_in_one_line(pytester):
    """A CRLF test.sh the kernel starts (#!/bin/bash -e\\r: bash stops, no reward in Harbor): the plugin
    passed the case on the runner's 1.0."""
    task_dir = make_task(pytester.path / "tasks" / "crlf", cases={"only": {}})
    (task_dir / "cases" / "only" / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    shim = task_dir / "tests" / "test.sh"
    shim.write_bytes(b"#!/bin/bash -e\r\n" + shim.read_bytes().split(b"\n", 1)[1].replace(b"\n", b"\r\n"))
    done = run(pytester, "--verifier-cases", "tasks", "-v")
    done.assert_outcomes(failed=1)
    done.stdout.fnmatch_lines(["*tests/test.sh has CRLF line endings, which bash reads as part of each line*"])
