"""Warm runs (engine/warm.py): a run started ahead and held gives what a cold
run gives; anything the held run already holds that changed discards it; and
nothing held outlives the session.

Real runs of the real runner; "warm" is proven by the held run being the one
that went (``Held.went``), never by timing.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.commands import interrupted, run_tool, start_watch, stop
from tests.helpers.harbor import RUNNER
from tests.helpers.processes import (
    SAY_STARTED,
    has_started,
    in_a_cgroup,
    process_gone,
    processes_with,
    wait_gone,
    wait_none_with,
    waiting_in,
)
from tests.helpers.tasks import (
    HANG_GUARD_S,
    PY,
    TASKS_WITH_CASES,
    copy_example,
    interpreter_with_long_sys_path,
    interpreter_with_nemo_gym,
    make_task,
)
from verifier_tui.engine import warm
from verifier_tui.engine.changes import Change
from verifier_tui.engine.model import Outcome
from verifier_tui.engine.procfs import machine_cpus
from verifier_tui.engine.record import replace
from verifier_tui.engine.session import Options, Session
from verifier_tui.engine.suite import COLD, arun_groups, collect

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes through /proc")


def _comparable(result) -> dict:
    """What a user sees of a run, less its timings."""
    return {
        "outcome": result.outcome,
        "exit": (result.exit_code, result.signal, result.start_error),
        "rewards": result.verdict.rewards,
        "files": [(f.name, f.text) for f in result.reward_files],
        "stdout": result.stdout.text,
        "stderr": result.stderr.text,
        "explain": result.explain.to_json() if result.explain is not None else None,
        "phases": [{k: v for k, v in phase.items() if not k.endswith("_s")} for phase in result.phases or []],
        "notices": result.notices,
        "strays": result.strays,
        "environment": result.environment,
    }


async def _held_then_run(session: Session, spec) -> tuple:
    """Run ``spec`` once (cold: nothing is held yet), then again from the run
    that was started ahead meanwhile: (the held run, the cold result, the warm one)."""
    session.keep_warm()
    assert not session.warm.waiting
    cold = await session.arun(spec)
    await session.warm.settle()
    held = [waiting.held for waiting in session.warm.waiting.values()]
    assert len(held) == 1, "no run was started ahead"
    return held[0], cold, await session.arun(spec)


def _run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, HANG_GUARD_S))


# In the sandbox the machine gives (namespaces where it has them): every case
# of test, below, goes warm and cold in each sandbox, and the held runs of
# the copy sandbox have tests of their own here.
@pytest.mark.parametrize("name", TASKS_WITH_CASES)
def test_every_example_case_gives_the_same_result_warm_and_cold(example, name):
    task_dir = example(name)
    with Session(task_dir, Options(python=PY)) as listing:
        count = len(listing.task.cases)
    for index in range(count):
        with Session(task_dir, Options(python=PY)) as session:  # a new one: nothing held, its first run cold
            case = session.task.cases[index]
            held, expected, result = _run(_held_then_run(session, replace(session.spec_for_case(case), phases=True)))
            assert held.went, case.name
            assert _comparable(result) == _comparable(expected), case.name
            assert result.expected_matched is expected.expected_matched is not None, case.name


@pytest.mark.parametrize("change", ["task.toml env", "task.toml timeout", "interpreter", "runner", "response"])
def test_a_change_to_what_the_held_run_holds_discards_it(tmp_path, monkeypatch, sandbox, change):
    runner = tmp_path / "runner.py"
    shutil.copyfile(RUNNER, runner)
    monkeypatch.setattr("verifier_tui.engine.sandbox.stage.runner_path", lambda: runner)
    task_dir = make_task(
        tmp_path / "t",
        """\
        import os, sys

        def verify(workspace):
            print(os.environ.get("COLOUR"), sys.executable, open(sys.argv[0]).read().count("# marked"))
            return 1.0
    """,
        toml='version = "1.0"\n[verifier]\ntimeout_sec = 60\n[verifier.env]\nCOLOUR = "red"\n',
    )
    venv = tmp_path / "venv"
    subprocess.run([PY, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=HANG_GUARD_S)
    response = tmp_path / "response.json"
    response.write_text('{"output": []}', encoding="utf-8")

    async def scenario():
        with Session(task_dir, Options(python=PY)) as session:
            session.keep_warm()
            await session.arun()
            await session.warm.settle()
            [waiting] = session.warm.waiting.values()
            if change == "task.toml env":
                toml = task_dir / "task.toml"
                toml.write_text(toml.read_text().replace('"red"', '"blue"'), encoding="utf-8")
                session.reload_task()
            elif change == "task.toml timeout":
                toml = task_dir / "task.toml"
                toml.write_text(toml.read_text().replace("60", "90"), encoding="utf-8")
                session.reload_task()
            elif change == "interpreter":
                session.options = replace(session.options, python=str(venv / "bin" / "python"))
            elif change == "runner":
                runner.write_text(runner.read_text() + "\n# marked\n", encoding="utf-8")
            else:
                session.choose_response(response)
            result = await session.arun()
            return waiting.held, result, session.timeout_s

    held, result, timeout = _run(scenario())
    assert not held.went and process_gone(held.proc.pid)
    assert result.exit_code == 0, result.stderr.text
    colour, python, marks = result.stdout.text.split()
    assert colour == ("blue" if change == "task.toml env" else "red")
    assert (python == str(venv / "bin" / "python")) is (change == "interpreter")
    assert marks == ("1" if change == "runner" else "0")
    assert timeout == (90 if change == "task.toml timeout" else 60) == result.inputs.timeout_s
    assert (result.inputs.response is not None) is (change == "response")


@pytest.mark.parametrize("watched", [False, True])
def test_a_save_to_the_workspace_starts_the_run_cold_and_one_to_the_verifier_goes_warm(example, sandbox, watched):
    """The held run's view can write the copy of the workspace the tool would stage a save
    into, so a save there ends it and the run starts cold (seeing the save); a save to the
    verifier, with the workspace as it was, goes to the held run (watch's common save)."""
    task_dir = example("hello-file")
    verifier = task_dir / "tests" / "verifier.py"

    async def scenario():
        with Session(task_dir, Options(python=PY, case="correct")) as session:
            session.follow_changes(watched)  # as watch's watcher (else each staging looks for changes)
            session.keep_warm()
            runs = [(None, await session.arun())]
            saves = ((verifier, verifier.read_text() + "\n# saved\n"), (session.workspace / "hello.txt", "else\n"))
            for path, text in saves:
                await session.warm.settle()
                [waiting] = session.warm.waiting.values()
                path.write_text(text, encoding="utf-8")
                session.note_change(Change(frozenset({path})))
                runs.append((waiting.held, await session.arun()))
            return runs

    (_, first), (after_verifier, second), (after_workspace, third) = _run(scenario())
    assert after_verifier is not None and after_verifier.went
    assert after_workspace is not None and not after_workspace.went
    assert first.verdict.rewards == second.verdict.rewards == {"reward": 1.0}
    assert third.verdict.rewards != first.verdict.rewards


def test_nothing_held_is_left_running_after_the_session_closes(example, sandbox):
    task_dir = example("hello-file")

    async def scenario():
        session = Session(task_dir, Options(python=PY))
        session.keep_warm()
        for case in session.task.cases:
            await session.arun(session.spec_for_case(case))
        await session.warm.settle()
        held = [waiting.held for waiting in session.warm.waiting.values()]
        tree = {pid for h in held for pid in _tree(h.proc.pid)}
        session.close()
        return held, tree

    held, tree = _run(scenario())
    assert len(held) == len(example_cases(task_dir)) > 1  # one per case's stage
    if sandbox == "namespace":
        assert len(tree) > len(held)  # the namespaces' inits and interpreters below each leader
    leaders = {h.proc.pid for h in held}
    assert all(process_gone(pid) for pid in leaders)  # reaped before close returned
    # the rest had SIGKILL, which the kernel delivers asynchronously
    assert not [pid for pid in tree - leaders if not wait_gone(pid)]


def test_a_held_run_too_old_is_started_anew(example, sandbox, monkeypatch):
    monkeypatch.setattr(warm, "MAX_AGE_S", 0.2)
    task_dir = example("hello-file")

    async def scenario():
        with Session(task_dir, Options(python=PY)) as session:
            session.keep_warm()
            await session.arun()
            await session.warm.settle()
            [old] = session.warm.waiting.values()
            while old.held.waiting:  # replaced by a fresh one
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.01)
            await session.warm.settle()
            [new] = session.warm.waiting.values()
            monkeypatch.setattr(warm, "MAX_AGE_S", 600)
            result = await session.arun()
            return old.held, new.held, result

    old, new, result = _run(scenario())
    assert not old.went and process_gone(old.proc.pid)
    assert new.went and result.verdict.rewards == {"reward": 1.0}


def example_cases(task_dir) -> list:
    return sorted(p.name for p in (task_dir / "cases").iterdir() if p.is_dir())


def _tree(pid: int) -> set[int]:
    found, todo = {pid}, [pid]
    while todo:
        parent = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{parent}/task/{task}/children") as listing:
                    children = listing.read().split()
            except OSError:
                continue
            for child in map(int, children):
                if child not in found:
                    found.add(child)
                    todo.append(child)
    return found


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="binding to 1 CPU needs 2")
def test_a_held_run_is_bound_to_the_tasks_cpus_as_a_cold_one(tmp_path, sandbox):
    task_dir = make_task(
        tmp_path / "t",
        """\
        import os, subprocess, sys

        def verify(workspace):
            child = subprocess.run([sys.executable, "-c", "import os; print(len(os.sched_getaffinity(0)))"],
                                   capture_output=True, text=True).stdout.strip()
            print(len(os.sched_getaffinity(0)), child)
            return 1.0
    """,
        toml='version = "1.0"\n[environment]\ncpus = 1\n',
    )

    async def scenario():
        with Session(task_dir, Options(python=PY)) as session:
            return await _held_then_run(session, session.spec())

    held, _cold, result = _run(scenario())
    assert held.went
    if in_a_cgroup("cpu", sandbox):  # a quota: the held run's cgroup was made as it started, and it saw every CPU
        every = len(os.sched_getaffinity(0))
        assert result.stdout.text == f"{every} {every}\n" and result.limits["cgroup"] == ["cpu"]
        assert result.limits["cpu_list"] == []
    else:
        assert result.stdout.text == "1 1\n"
        assert len(result.limits["cpu_list"]) == 1


def test_a_tasks_own_runner_stays_cold(tmp_path, sandbox):
    """It knows nothing of the wait: started ahead, it would run at once."""
    task_dir = make_task(tmp_path / "t", files={".ng/run_verifier.py": RUNNER.read_text(encoding="utf-8")})

    async def scenario():
        with Session(task_dir, Options(python=PY, runner="task")) as session:
            session.keep_warm()
            first = await session.arun()
            await session.warm.settle()
            return first, dict(session.warm.waiting), await session.arun()

    first, waiting, second = _run(scenario())
    assert waiting == {}
    assert first.verdict.rewards == second.verdict.rewards == {"reward": 1.0}


# ---------------------------------------------------------------------------
# test: a case's run is started held once staged, and goes at its turn, where
# -j leaves a CPU idle (-j 1 here)

IDLE_CPU = pytest.mark.skipif(machine_cpus() < 2, reason="test holds its cases only where a CPU is idle: -j 1 needs 2")


@pytest.fixture
def recorded(monkeypatch) -> list:
    """Every held run started, in order."""
    made: list = []

    class Recorded(warm.Held):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(warm, "Held", Recorded)
    return made


def _test_cases(folder, options: Options, jobs: int) -> dict:
    """``test -j jobs`` over ``folder`` through the engine: each case's result by ``task::case``."""
    with collect([folder], options) as collection:
        groups = collection.runnable
        ran = asyncio.run(asyncio.wait_for(arun_groups(groups, jobs), HANG_GUARD_S))
        return {
            group.item_name(case.name): result
            for group, results in zip(groups, ran, strict=True)
            for case, result in zip(group.cases, results, strict=True)
        }


def _without_the_switch(data):
    """``data`` less the name of the switch that turns warm runs off (a
    variable of the user's, which the report lists as not passed)."""
    if isinstance(data, dict):
        return {key: _without_the_switch(value) for key, value in data.items()}
    if isinstance(data, list):
        return [_without_the_switch(item) for item in data if item != COLD]
    return data


@IDLE_CPU
def test_every_example_case_of_test_goes_warm_and_as_cold(tmp_path, sandbox, recorded, monkeypatch):
    folder = tmp_path / "tasks"
    for name in TASKS_WITH_CASES:
        copy_example(name, folder / name)
    options = Options(python=PY)
    monkeypatch.setenv(COLD, "1")
    cold = _test_cases(folder, options, jobs=1)
    assert recorded == []
    monkeypatch.delenv(COLD)
    hot = _test_cases(folder, options, jobs=1)
    assert len(hot) > len(TASKS_WITH_CASES)
    assert len(recorded) == len(hot) and all(held.went for held in recorded)
    assert all(process_gone(held.proc.pid) for held in recorded)
    for name, result in hot.items():
        assert _without_the_switch(_comparable(result)) == _without_the_switch(_comparable(cold[name])), name
        assert result.expected_matched is cold[name].expected_matched is not None, name


def test_with_every_cpu_running_a_case_test_holds_none(example, sandbox, recorded):
    """A held start would only compete with the running verifiers."""
    results = _test_cases(example("hello-file"), Options(python=PY), jobs=machine_cpus())
    assert len(results) == 4 and all(result.expected_matched for result in results.values())
    assert recorded == []


def _no_timings(text: str) -> str:
    """The tool's output less its durations (the table's time column, JSON's ``*_s``, JUnit's ``time``),
    the CPU a limited run was bound to (whichever was free) and the scratch
    folder's name (the copy sandbox's workspace is in it)."""
    text = re.sub(r"verifier-tui-\w+/stage-\d+", "SCRATCH/STAGE", text)
    text = re.sub(r"\s+\d+(\.\d+)? m?s$", "", text, flags=re.M)
    text = re.sub(r'"\w+_s": [\d.e-]+', '"_s": 0', text)
    text = re.sub(r'"cpu_list": \[[\d,\s]*\]', '"cpu_list": []', text)
    return re.sub(r' time="[\d.]+"', "", text)


@IDLE_CPU
def test_test_reports_the_same_warm_and_cold(env, example, tmp_path, sandbox):
    """``test -j 1``: the table, --json and JUnit as with every case started cold."""
    env["VERIFIER_TUI_SANDBOX"] = sandbox
    task_dir = example("hello-file")
    said = {}
    for mode, switch in (("warm", {}), ("cold", {COLD: "1"})):
        junit = tmp_path / f"{mode}.xml"
        table = run_tool(dict(env, **switch), "test", "-j", "1", task_dir, "--junit", junit, "--python", PY)
        document = run_tool(dict(env, **switch), "test", "-j", "1", "--json", task_dir, "--python", PY)
        assert table.returncode == document.returncode == 0, table.stderr + document.stderr
        data = _without_the_switch(json.loads(document.stdout))
        said[mode] = (table.stdout, _no_timings(json.dumps(data, indent=1)), junit.read_text(encoding="utf-8"))
    assert len(json.loads(said["warm"][1])["cases"]) == 4
    assert [_no_timings(text) for text in said["warm"]] == [_no_timings(text) for text in said["cold"]]


def _slow_task(root: Path) -> Path:
    """A task of three cases whose verifier says it started, then sleeps."""
    task_dir = make_task(
        root,
        "import time\n\ndef verify(workspace):\n" + textwrap.indent(SAY_STARTED, "    ") + "    time.sleep(300)\n",
    )
    for case in ("one", "two", "three"):
        (task_dir / "cases" / case / "workspace").mkdir(parents=True)
        (task_dir / "cases" / case / "expected.json").write_text('{"exit_code": 0}')
    return task_dir


def _held_stages(scratch: str) -> set[str]:
    """The stages whose runs were started held and still run (found by their
    command lines, which name the stage, and their environment)."""
    stages = set()
    for pid in processes_with(scratch):
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
            command = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if f"{warm.VARIABLE}=".encode() in environ:
            stages.update(re.findall(r"/(stage-[^/\x00]+)", command))
    return stages


@IDLE_CPU
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_nothing_held_outlives_test_stopped_mid_run(env, tmp_path, sandbox, sig):
    env["VERIFIER_TUI_SANDBOX"] = sandbox
    task_dir = _slow_task(tmp_path / "slow")
    scratch = env["TMPDIR"]
    code, err = interrupted(
        env,
        ["test", "-j", "1", task_dir, "--python", PY],
        # One case runs; the next, staged, waits for the one slot with its runner started.
        lambda: has_started(scratch) and len(_held_stages(scratch)) >= 2,
        sig,
        "no case started, or none waits held",
    )
    assert code == 128 + sig and "Traceback" not in err, (code, err)
    assert wait_none_with(scratch) == [], "a run, or one held, outlived the command"
    assert list(Path(scratch).iterdir()) == []


@IDLE_CPU
def test_a_case_that_went_warm_and_timed_out_leaves_nothing(tmp_path, sandbox, recorded):
    task_dir = _slow_task(tmp_path / "slow")
    shutil.rmtree(task_dir / "cases" / "three")
    results = _test_cases(task_dir, Options(python=PY, timeout=1), jobs=1)
    assert [result.outcome.slug for result in results.values()] == ["timed_out", "timed_out"]
    assert len(recorded) == 2 and all(held.went for held in recorded)
    assert all(wait_gone(held.proc.pid) for held in recorded)
    assert wait_none_with(str(tmp_path / "slow")) == []


@IDLE_CPU
def test_preload_imports_the_modules_in_the_runs_started_ahead_and_says_so(env, tmp_path):
    """``test --preload``: every case starts held, so every verifier finds the module imported."""
    verifier = """\
        import sys

        def verify(workspace):
            return 1.0 if "colorsys" in sys.modules else 0.0
    """
    task_dir = make_task(tmp_path / "preloaded", verifier, cases={"a": {}, "b": {}})
    for case in ("a", "b"):
        (task_dir / "cases" / case / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    table = run_tool(env, "test", "-j", "1", task_dir, "--preload", "colorsys", "--python", PY)
    document = run_tool(env, "test", "-j", "1", "--json", task_dir, "--preload", "colorsys", "--python", PY)
    assert table.returncode == document.returncode == 0, table.stdout + document.stdout
    assert table.stdout.splitlines()[0].endswith(" · preloads colorsys")
    assert "2 passed, 0 failed" in table.stdout
    assert [case["preload"] for case in json.loads(document.stdout)["cases"]] == [["colorsys"], ["colorsys"]]
    # With every CPU running a case, none is started ahead: nothing is preloaded, nor said to be.
    busy = run_tool(env, "test", "-j", str(machine_cpus()), "--json", task_dir, "--preload", "colorsys", "--python", PY)
    assert busy.returncode == 1  # the verifiers score 0.0
    assert [case["preload"] for case in json.loads(busy.stdout)["cases"]] == [[], []]


def test_a_module_to_preload_that_does_not_import_is_named_in_the_runs_notices(example):
    """The run started ahead goes on without it, and says so; the cold run
    before it preloaded nothing, so it has nothing to say."""

    async def scenario():
        options = Options(python=PY, case="correct", preload=("no_such_module_here", "colorsys"))
        with Session(example("hello-file"), options) as session:
            return await _held_then_run(session, session.spec_for_case(session.task.cases[0]))

    held, _cold, result = _run(scenario())
    assert held.went
    said = [notice for notice in result.notices if "--preload" in notice]
    assert said == [
        "--preload: no_such_module_here (ModuleNotFoundError: No module named 'no_such_module_here') "
        "did not import; the run went on without it"
    ]
    assert result.verdict.rewards == {"reward": 1.0}


@IDLE_CPU
def test_test_says_under_its_table_that_the_preload_kept_the_tasks_module_out(env, tmp_path):
    """``test -j 1 --preload colorsys`` with a tests/colorsys.py: every case
    failed on the standard library's colorsys, and nothing under the table (nor
    in --json's notices, nor in the JUnit failures) said why, where ``run`` and
    the TUI say the preload kept the task's file out."""
    verifier = """\
        import colorsys

        def verify(workspace):
            return 1.0 if getattr(colorsys, "TASKS_OWN", False) else 0.0
    """
    task_dir = make_task(tmp_path / "preloaded", verifier, files={"colorsys.py": "TASKS_OWN = True\n"}, cases={})
    for case in ("a", "b"):
        (task_dir / "cases" / case / "workspace").mkdir(parents=True)
        (task_dir / "cases" / case / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    junit = tmp_path / "report.xml"
    options = ["-j", "1", "--preload", "colorsys", "--python", PY]
    table = run_tool(env, "test", task_dir, *options, "--junit", junit)
    assert table.returncode == 1 and "0 passed, 2 failed" in table.stdout, table.stdout
    why = "is not imported in this run: --preload imported colorsys before the run started"
    said = [line for line in table.stdout.splitlines() if why in line]
    assert len(said) == 1 and said[0].startswith("note: "), table.stdout  # once, for the task: both cases have it
    document = json.loads(run_tool(env, "test", "--json", task_dir, *options).stdout)
    assert all(any(why in notice for notice in case["notices"]) for case in document["cases"]), document["cases"]
    assert all(why in failure.text for failure in ET.parse(junit).getroot().iter("failure"))


async def _preloading(example, tmp_path, ends: str, timeout: float | None = None) -> tuple:
    """hello-file's correct case held, then run, with ``--preload ends_its_import``: a module of
    an interpreter's site-packages that is still importing when the held run is told to go, as a
    heavy package is, and then runs ``ends``. See :func:`_held_then_run`."""
    python = interpreter_with_long_sys_path(tmp_path / "venv", 0)
    (site_packages,) = (tmp_path / "venv").glob("lib/python3*/site-packages")
    (site_packages / "ends_its_import.py").write_text(f"import os, sys, time\ntime.sleep(1)\n{ends}")
    options = Options(python=str(python), case="correct", preload=("ends_its_import",), timeout=timeout)
    with Session(example("hello-file"), options) as session:
        return await _held_then_run(session, session.spec_for_case(session.task.cases[0]))


@pytest.mark.parametrize("raised", ["SystemExit(3)", "KeyboardInterrupt"])
def test_a_module_to_preload_that_ends_its_import_with_systemexit_is_passed_over(example, tmp_path, raised):
    """A package whose import raises SystemExit or KeyboardInterrupt (a
    command-line module that runs at import) ended the run started ahead: the
    case failed with ``exit 3 · unexpected exit code`` or ``killed by signal 2``
    and the runner's own traceback, where Harbor, which preloads nothing,
    scores 1.0. It did not import: said, and passed over."""
    held, cold, result = _run(_preloading(example, tmp_path, f"raise {raised}\n"))
    assert held.went
    assert (result.exit_code, result.signal, result.verdict.rewards) == (0, None, {"reward": 1.0}), result.stderr.text
    assert _comparable(result)["stderr"] == _comparable(cold)["stderr"] == ""
    (said,) = [notice for notice in result.notices if "--preload" in notice]
    assert said.startswith(f"--preload: ends_its_import ({raised.partition('(')[0]}")
    assert said.endswith("did not import; the run went on without it")


@pytest.mark.parametrize("ends", ["os._exit(0)", "os.kill(os.getpid(), 9)"])
def test_a_module_to_preload_that_ends_the_process_leaves_the_run_to_a_cold_start(example, tmp_path, sandbox, ends):
    """A preloaded module that ends the interpreter at import (``os._exit``, a
    crash), while the held run is being told to go: the case said ``exit 0 ·
    no reward`` or ``killed by signal 9``, where Harbor, which preloads nothing,
    scores 1.0. Its runner never read its go: the run is started again, cold,
    and says why."""
    held, cold, result = _run(_preloading(example, tmp_path, f"sys.stdout.write('imported\\n')\n{ends}\n"))
    assert held.went
    assert _comparable(result) | {"notices": []} == _comparable(cold) | {"notices": []}
    assert (result.exit_code, result.verdict.rewards) == (0, {"reward": 1.0})
    assert result.notices == [
        "the run started ahead ended before it began the run (a module --preload imported may have ended "
        "its interpreter): the run was started again, cold"
    ]


def test_a_run_started_ahead_still_preloading_at_its_timeout_is_run_again_cold(example, tmp_path):
    """``--preload`` of a module slower to import than the task's timeout: the
    run started ahead was told to go while it still imported it, and ended at
    its timeout, ``VerifierTimeoutError``, though the verifier never ran and
    Harbor, which preloads nothing, scores 1.0."""
    held, cold, result = _run(_preloading(example, tmp_path, "time.sleep(60)\n", timeout=3))
    assert held.went
    assert (result.outcome, result.verdict.rewards) == (cold.outcome, {"reward": 1.0}), result.notices
    assert result.notices == [
        "the run started ahead ended before it began the run (it was still importing what --preload names "
        "when its timeout came): the run was started again, cold"
    ]


def test_the_timeout_of_a_run_started_ahead_counts_from_when_it_read_its_go(tmp_path):
    """``--preload`` of a module still importing when the run started ahead was
    told to go: its time counted against the verifier's timeout, so a verifier
    that takes 2 s of a 4 s timeout timed out (``VerifierTimeoutError``) after a
    3 s preload, where Harbor, which preloads nothing, scores 1.0. The timeout
    now counts from when the runner read its go, when the run began."""
    python = interpreter_with_long_sys_path(tmp_path / "venv", 0)
    (site_packages,) = (tmp_path / "venv").glob("lib/python3*/site-packages")
    (site_packages / "slow_to_import.py").write_text("import time\ntime.sleep(3)\n")
    verifier = "import time\n\ndef verify(workspace):\n    time.sleep(2)\n    return 1.0\n"
    task_dir = make_task(tmp_path / "t", verifier, cases={"slow": {}})
    options = Options(python=str(python), case="slow", preload=("slow_to_import",), timeout=4)

    async def held_then_run() -> tuple:
        with Session(task_dir, options) as session:
            return await _held_then_run(session, session.spec_for_case(session.task.cases[0]))

    held, cold, result = _run(held_then_run())
    assert held.went and (cold.outcome, cold.verdict.rewards) == (Outcome.REWARD_WRITTEN, {"reward": 1.0})
    assert (result.outcome, result.verdict.rewards, result.notices) == (cold.outcome, {"reward": 1.0}, [])
    assert result.duration_s < 4


@IDLE_CPU
def test_test_says_a_module_to_preload_that_did_not_import_though_every_case_passed(env, example):
    """``test -j 1 --preload numpyy``: the header said ``preloads numpyy``, every
    case passed, and only ``--json``'s notices said it never imported."""
    done = run_tool(env, "test", "-j", "1", example("hello-file"), "--preload", "numpyy", "--python", PY)
    assert done.returncode == 0 and done.stdout.splitlines()[-1] == "4 passed, 0 failed", done.stdout
    said = [line for line in done.stdout.splitlines() if "numpyy" in line]
    assert said[1:] == [
        "note: --preload: numpyy (ModuleNotFoundError: No module named 'numpyy') did not import; "
        "the run went on without it"
    ], done.stdout


def _said_with(reader, within_s: float = HANG_GUARD_S) -> list[str]:
    """``watch``'s next run line and the lines printed with it (until it is quiet a moment)."""
    lines = [reader.next_run(within_s)]
    try:
        while True:
            lines.append(reader.next(1.0))
    except queue.Empty:
        return lines


def test_watch_says_a_runs_notes_under_it_once(env, tmp_path):
    """``watch --preload colorsys`` on a task with a tests/colorsys.py: the
    first run (cold) matched its expected.json, the next (started ahead)
    differed after a save that changed nothing it reads, and nothing said why,
    where ``run`` notes the shadowing and that the preload kept the task's
    file out. Each note is said under the first run that has it."""
    verifier = """\
        import colorsys

        def verify(workspace):
            return 1.0 if getattr(colorsys, "TASKS_OWN", False) else 0.0
    """
    task_dir = make_task(tmp_path / "t", verifier, files={"colorsys.py": "TASKS_OWN = True\n"}, cases={"a": {}})
    (task_dir / "cases" / "a" / "workspace").mkdir(parents=True, exist_ok=True)
    (task_dir / "cases" / "a" / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    proc, reader = start_watch(env, task_dir, "--preload", "colorsys", "--python", PY, cwd=tmp_path)
    try:
        first = _said_with(reader)
        assert first[0].endswith("matches expected") and len(first) == 2, first
        assert first[1].startswith("      note: t/tests/colorsys.py shadows the standard library's colorsys")
        for save in range(1, 6):  # until a run goes from its start ahead, which preloads
            (task_dir / "tests" / "verifier.py").write_text(textwrap.dedent(verifier) + "#" * save)
            warm = _said_with(reader)
            if warm[0].endswith("differs from expected"):
                break
        assert [line for line in warm if "note:" in line] == [
            "      note: t/tests/colorsys.py is not imported in this run: --preload imported colorsys before the run "
            "started, so `import colorsys` gets "
            + warm[-1].partition("gets ")[2].partition(";")[0]
            + "; Harbor preloads nothing, so its run imports this file (leave colorsys, and what imports it, out of "
            "--preload to run as Harbor does)"
        ], warm
        (task_dir / "tests" / "verifier.py").write_text(textwrap.dedent(verifier) + "# again")
        again = _said_with(reader)
        assert again[0].endswith("differs from expected") and not [line for line in again if "note:" in line], again
    finally:
        code, stderr = stop(proc)
    assert code == 0 and "Traceback" not in stderr, stderr


def test_a_tests_file_that_a_preloaded_module_keeps_out_is_blamed_on_the_preload(tmp_path):
    """tests/colorsys.py, with ``--preload colorsys``: the run started ahead
    got the standard library's, and its note blamed the interpreter's
    start-up (a .pth file, sitecustomize) and said to rename the file, when
    it was the preload, which Harbor's sandbox does not do: there the task's
    file is the one imported."""
    from verifier_tui.engine.diagnosis import shadow_text, shadows

    verifier = """\
        import colorsys

        def verify(workspace):
            return 1.0 if getattr(colorsys, "TASKS_OWN", False) else 0.0
    """
    task_dir = make_task(tmp_path / "preloaded", verifier, files={"colorsys.py": "TASKS_OWN = True\n"})

    async def scenario():
        with Session(task_dir, Options(python=PY, preload=("colorsys",))) as session:
            return await _held_then_run(session, session.spec())

    held, cold, warm_result = _run(scenario())
    assert held.went
    assert cold.verdict.rewards == {"reward": 1.0} and warm_result.verdict.rewards == {"reward": 0.0}
    (cold_note,) = [shadow_text(s, str) for s in shadows(cold.explain)]
    assert "shadows the standard library's colorsys" in cold_note
    (note,) = [shadow_text(s, str) for s in shadows(warm_result.explain)]
    assert "--preload imported colorsys" in note, note
    assert ".pth" not in note and "sitecustomize" not in note and "rename it" not in note, note


def test_a_nemo_gym_the_preload_imported_is_said_to_be_the_preloads(tmp_path):
    """``--preload nemo_gym``: the runner drops the nemo_gym imported before it
    placed sys.path, and the resolution panel said only that it "was imported
    before the runner placed sys.path", which the explanation's documents put
    down to a .pth file or sitecustomize: ``preloaded_nemo_gym`` did not tell
    the preload apart. Said to be the preload's, as Harbor preloads nothing.
    The preload imports the interpreter's own nemo_gym: the task's vendored
    copy is its file, which no run imports before its go."""
    from verifier_tui.tui.display import Display
    from verifier_tui.tui.widgets.resolution_panel import resolution_content

    verifier = """\
        from nemo_gym.verifiers import VENDORED

        def verify(workspace):
            return 1.0 if VENDORED else 0.0
    """
    vendored = {".ng/nemo_gym/__init__.py": "", ".ng/nemo_gym/verifiers/__init__.py": "VENDORED = True\n"}
    task_dir = make_task(tmp_path / "vendors", verifier, files=vendored)

    async def scenario():
        options = Options(python=str(interpreter_with_nemo_gym(tmp_path / "venv")), preload=("nemo_gym",))
        with Session(task_dir, options) as session:
            return await _held_then_run(session, session.spec())

    held, cold, warm_result = _run(scenario())
    assert held.went and warm_result.verdict.rewards == cold.verdict.rewards == {"reward": 1.0}
    assert cold.explain.preloaded_nemo_gym is None and not cold.explain.nemo_gym_by_preload
    assert warm_result.explain.preloaded_nemo_gym and warm_result.explain.nemo_gym_by_preload
    panel = resolution_content(warm_result.explain, "harbor", Display(task_dir)).plain
    (said,) = [line for line in panel.splitlines() if "nemo_gym was imported" in line or "imported nemo_gym" in line]
    assert "--preload imported nemo_gym" in said and "Harbor" in said, said


def test_a_start_ahead_that_fails_costs_only_its_warmth(example, monkeypatch, caplog):
    """Its error is neither raised nor printed when the tool ends ("Task
    exception was never retrieved", with a traceback, on the user's
    terminal); the next run starts cold and ends as it should."""
    real_prepare = warm.prepare
    calls = []

    def prepare_then_fail(*args, **kwargs):
        calls.append(args)
        if len(calls) == 2:  # the first is the run's own; the second, the start ahead after it
            raise OSError("no room left to stage")
        return real_prepare(*args, **kwargs)

    monkeypatch.setattr(warm, "prepare", prepare_then_fail)

    async def scenario():
        with Session(example("hello-file"), Options(python=PY, case="correct")) as session:
            session.keep_warm()
            first = await session.arun()
            await session.warm.settle()
            assert not session.warm.waiting  # nothing was held
            return first, await session.arun()

    first, second = _run(scenario())
    gc.collect()  # an unretrieved task's error is logged when the task is collected
    assert first.verdict.rewards == second.verdict.rewards == {"reward": 1.0}
    assert "never retrieved" not in caplog.text


@pytest.mark.parametrize("where", ["tests/.ng/spy.py", "tests/.ng/spy/__init__.py"])
def test_no_file_of_the_task_is_preloaded_while_a_run_waits_to_be_told_to_go(tmp_path, namespace, where):
    """``--preload spy`` where the task's ``tests/.ng`` (the runner's folder, first on
    ``sys.path`` as it starts) holds a ``spy`` module: the run started ahead imported it
    while it waited, so the task's code ran in the view while the tool staged the next run
    into it (a thread of it that swapped a folder of ``/app`` for a link while the tool
    copied a saved file there had the tool write that file where the link led, on this
    machine). Only the interpreter's modules are preloaded now; the task's ``spy`` is
    imported by the run, as a cold start (and Harbor) import it."""
    verifier = """\
        import sys

        def verify(workspace):
            return 0.0 if "spy" in sys.modules else 1.0
    """
    task_dir = make_task(
        tmp_path / "t", verifier, files={where.removeprefix("tests/"): "RAN = True\n"}, cases={"a": {}}
    )

    async def scenario() -> tuple:
        with Session(task_dir, Options(python=PY, case="a", preload=("spy",))) as session:
            return await _held_then_run(session, session.spec_for_case(session.task.cases[0]))

    held, cold, result = _run(scenario())
    assert held.went
    assert cold.verdict.rewards == result.verdict.rewards == {"reward": 1.0}, result.notices
    assert [notice for notice in result.notices if "--preload" in notice] == [
        "--preload: spy (ModuleNotFoundError: No module named 'spy') did not import; the run went on without it"
    ]


@pytest.mark.parametrize("where", ["tests/sitecustomize.py", "cases/agent/workspace/sitecustomize.py"])
def test_a_file_the_tasks_environment_runs_at_start_runs_once_the_run_is_staged(tmp_path, namespace, where):
    """A task whose ``[verifier] env`` sets ``PYTHONPATH = "/tests"`` (or ``"/app"``, the
    agent's files) beside a ``sitecustomize.py``: Python runs it as it starts, so the run
    started ahead ran the task's code before it was told to go, while the tool staged the
    saved workspace into its view (a thread of it that swapped a folder of ``/app`` for a
    link had the tool write the saved file where the link led, on this machine), and what
    it read of the workspace was the last run's: 0.0 where Harbor scores 1.0. Such a run
    starts cold."""
    verifier = """\
        import sys

        def verify(workspace):
            return 1.0 if sys.SEEN == (workspace / "answer.txt").read_text() else 0.0
    """
    toml = 'version = "1.0"\n[verifier]\nenv = { PYTHONPATH = "%s" }\n' % ("/tests" if "tests/" in where else "/app")
    task_dir = make_task(tmp_path / "t", verifier, toml=toml, cases={"agent": {"answer.txt": "first"}})
    (task_dir / where).write_text(
        'import sys\nsys.SEEN = open("/app/answer.txt").read()\nopen("/app/started", "w").close()\n'
    )

    first, second = _run_twice(
        task_dir,
        PY,
        lambda waiting: (waiting.prepared.stage.app_dir / "started").exists(),  # its Python read the workspace
        lambda: (task_dir / "cases" / "agent" / "workspace" / "answer.txt").write_text("second"),
    )
    assert first.verdict.rewards == second.verdict.rewards == {"reward": 1.0}, second.stderr.text


@pytest.mark.parametrize(
    "env", ['PYTHONHASHSEED = "0", PYTHONUTF8 = "1"', 'PYTHON_VERSION = "3.12.7"', 'HOME = "/root"', 'HOME = "/tmp"']
)
def test_a_task_setting_only_inert_python_variables_still_starts_ahead(tmp_path, env):
    """``PYTHONHASHSEED``, ``PYTHONUTF8`` and the like make Python read no file: such a task's
    runs are still started ahead (only a variable that may run a file makes them cold). So
    does ``PYTHON_VERSION`` (Docker's python images set it): no ``PYTHON_`` name is Python's
    own, yet such a task's runs all started cold. And a review after: any HOME not the user's
    made every run cold, though one outside what the task and agent fill (``/root``, as
    Harbor's root images have it) is an empty folder of the view's own."""
    toml = 'version = "1.0"\n[verifier]\nenv = { %s }\n' % env
    task_dir = make_task(tmp_path / "t", toml=toml, cases={"a": {}})

    async def scenario() -> tuple:
        with Session(task_dir, Options(python=PY, case="a")) as session:
            return await _held_then_run(session, session.spec_for_case(session.task.cases[0]))

    held, cold, result = _run(scenario())
    assert held.went and _comparable(result) == _comparable(cold)


RACER = """\
import os
import threading


def _race():
    open("/logs/verifier/racing", "w").close()
    while True:
        try:
            os.rename("/app/sub", "/app/sub.real")
            os.symlink(%r, "/app/sub")
            os.unlink("/app/sub")
            os.rename("/app/sub.real", "/app/sub")
        except OSError:
            pass


threading.Thread(target=_race, daemon=True).start()
"""


@pytest.mark.parametrize("watched", [False, True])
def test_a_run_started_ahead_that_swaps_a_workspace_folder_for_a_link_never_has_a_save_written_outside(
    tmp_path, namespace, watched
):
    """Code running in a run started ahead (here a module ``--preload`` imports, whose
    thread swaps ``/app/sub`` for a link to a folder outside, over and over) while the user
    saves files in ``sub``: the tool copied the saves into the held run's ``/app`` as it
    waited, and a copy made while the link stood wrote the user's file in the folder outside,
    on this machine. Nothing is written where a held run can write: a save to the workspace
    ends it first, and the run starts cold, with a cold run's verdict."""
    outside = tmp_path / "outside"
    outside.mkdir()
    python = interpreter_with_long_sys_path(tmp_path / "venv", 0)
    (site_packages,) = (tmp_path / "venv").glob("lib/python3*/site-packages")
    (site_packages / "racer.py").write_text(RACER % str(outside))
    names = [f"f{i:03d}.txt" for i in range(200)]
    verifier = """\
        def verify(workspace):
            files = sorted((workspace / "sub").iterdir())
            return 1.0 if len(files) == 200 and all(f.read_text() == "second" for f in files) else 0.0
    """
    task_dir = make_task(tmp_path / "t", verifier, cases={"agent": {f"sub/{name}": "first" for name in names}})
    workspace = task_dir / "cases" / "agent" / "workspace"

    async def scenario() -> tuple:
        with Session(task_dir, Options(python=str(python), case="agent", preload=("racer",))) as session:
            spec = session.spec_for_case(session.task.cases[0])
            session.follow_changes(watched)  # as watch's watcher: the saves below are reported
            session.keep_warm()
            first = await session.arun(spec)
            await session.warm.settle()
            [waiting] = session.warm.waiting.values()
            stage = waiting.prepared.stage
            while not (stage.reward_dir / "racing").exists():
                assert waiting.held.waiting, "the run started ahead ended"
                await asyncio.sleep(0.01)
            for name in names:
                (workspace / "sub" / name).write_text("second")
            if watched:
                session.note_change(Change(frozenset(workspace / "sub" / name for name in names)))
            return first, waiting.held, await session.arun(spec)

    first, held, second = _run(scenario())
    assert list(outside.iterdir()) == []
    assert first.verdict.rewards == {"reward": 0.0} and second.verdict.rewards == {"reward": 1.0}, second.stderr.text
    assert not held.went


def test_a_run_started_ahead_that_swaps_a_tests_folder_for_a_link_never_has_a_save_written_outside(tmp_path, namespace):
    """Harbor's ``/tests`` is writable, so the held run's is: its code (a module ``--preload``
    imports, whose thread swaps ``/tests/lib`` for a link to a folder outside, over and over)
    raced the tool as the user saved ``tests/lib/x.py`` time after time, and the tool copied
    the save through the link it found there, on this machine. A save anywhere in the tests
    but a top-level file ends the held run first; the run starts cold, with a cold run's verdict."""
    outside = tmp_path / "outside"
    outside.mkdir()
    python = interpreter_with_long_sys_path(tmp_path / "venv", 0)
    (site_packages,) = (tmp_path / "venv").glob("lib/python3*/site-packages")
    (site_packages / "racer.py").write_text((RACER % str(outside)).replace("/app/sub", "/tests/lib"))
    verifier = """\
        def verify(workspace):
            return float(open("/tests/lib/x.py").read() == open("/tests/round.txt").read())
    """
    task_dir = make_task(tmp_path / "t", verifier, cases={"agent": {}})
    (task_dir / "tests" / "lib").mkdir()
    (task_dir / "tests" / "lib" / "x.py").write_text("0")
    (task_dir / "tests" / "round.txt").write_text("0")
    rounds = 12

    async def scenario() -> list:
        with Session(task_dir, Options(python=str(python), case="agent", preload=("racer",))) as session:
            spec = session.spec_for_case(session.task.cases[0])
            session.keep_warm()
            runs = [(None, await session.arun(spec))]
            for n in range(1, rounds + 1):
                await session.warm.settle()
                [waiting] = session.warm.waiting.values()
                while not (waiting.prepared.stage.reward_dir / "racing").exists():
                    assert waiting.held.waiting, "the run started ahead ended"
                    await asyncio.sleep(0.01)
                (task_dir / "tests" / "lib" / "x.py").write_text(str(n))
                (task_dir / "tests" / "round.txt").write_text(str(n))
                runs.append((waiting.held, await session.arun(spec)))
            return runs

    runs = _run(scenario())
    assert list(outside.iterdir()) == []
    assert [result.verdict.rewards for _, result in runs] == [{"reward": 1.0}] * (rounds + 1), runs[-1][1].stderr.text
    assert not any(held.went for held, _ in runs[1:])


SEEN_FIRST = 'os.path.exists("/tmp/seen") or open("/tmp/seen", "w").write(open("/tests/answer.txt").read())'
"""What code of the task's run at start-up does here: keep the first ``answer.txt`` it sees."""


def _seen_after_a_save_to_the_tests(task_dir: Path, python: str) -> tuple:
    """Run the case, save ``tests/answer.txt`` (a save the held run may take), run again: both results."""
    verifier = """\
        import os

        def verify(workspace):
            seen = open("/tmp/seen").read() if os.path.exists("/tmp/seen") else None
            return 1.0 if seen in (None, open("/tests/answer.txt").read()) else 0.0
    """
    (task_dir / "tests" / "verifier.py").write_text(textwrap.dedent(verifier))
    (task_dir / "tests" / "answer.txt").write_text("first")

    return _run_twice(
        task_dir,
        python,
        lambda waiting: _at_its_hold(waiting.held),  # all it runs before its go has run
        lambda: (task_dir / "tests" / "answer.txt").write_text("second"),
    )


def _run_twice(task_dir: Path, python: str, ready: Callable[[Any], bool], save: Callable[[], object]) -> tuple:
    """Run case ``agent``, wait until the run started ahead (if any) is ``ready``, ``save()``, run
    again: both results."""

    async def scenario() -> tuple:
        with Session(task_dir, Options(python=python, case="agent")) as session:
            spec = session.spec_for_case(session.task.cases[0])
            session.keep_warm()
            first = await session.arun(spec)
            await session.warm.settle()
            for waiting in session.warm.waiting.values():
                while not ready(waiting):
                    assert waiting.held.waiting, "the run started ahead ended"
                    await asyncio.sleep(0.01)
            save()
            return first, await session.arun(spec)

    return _run(scenario())


def test_a_tasks_importlib_in_the_runners_folder_runs_once_the_run_is_told_to_go(tmp_path, namespace):
    """A task's ``tests/.ng/importlib/__init__.py``: the runner's folder is first on ``sys.path``
    and the runner imported ``importlib.machinery`` as it started, so the run started ahead ran
    the task's module before its go, while the tool staged a save into its view, and what it
    read of the tests folder was the last run's (0.0 where a cold run scores 1.0). The runner
    takes what it needs from the import system the interpreter starts with."""
    shadow = (
        f"import os\n{SEEN_FIRST}\n"
        "__path__[:] = [os.path.join(os.path.dirname(os.__file__), 'importlib')]\n"
        "__file__ = os.path.join(__path__[0], '__init__.py')\n"
        "exec(compile(open(__file__).read(), __file__, 'exec'), globals())\n"
    )
    task_dir = make_task(tmp_path / "t", files={".ng/importlib/__init__.py": shadow}, cases={"agent": {}})
    first, second = _seen_after_a_save_to_the_tests(task_dir, PY)
    assert first.verdict.rewards == second.verdict.rewards == {"reward": 1.0}, second.stderr.text


def _at_its_hold(held) -> bool:
    """Whether the runner of ``held`` waits for its go (reads its pipe)."""
    for pid in _tree(held.proc.pid):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        words = command.split(b"\0")
        if (
            os.path.basename(words[0]).startswith(b"python")
            and b"run_verifier.py" in command
            and waiting_in(pid, "pipe_read")
        ):
            return True
    return False


def _system_python_with_a_user_site() -> tuple[str, str]:
    """The system's interpreter and its version, where it has a user site (a venv's has none)."""
    python = "/usr/bin/python3"
    asked = "import site, sys; print(site.ENABLE_USER_SITE, '%d.%d' % sys.version_info[:2])"
    found = (
        subprocess.run([python, "-c", asked], capture_output=True, text=True, check=False).stdout.split()
        if os.path.exists(python)
        else []
    )
    if found[:1] != ["True"]:
        pytest.skip(f"no {python} with a user site")
    return python, found[1]


def test_a_home_the_task_sets_whose_user_site_runs_a_pth_starts_cold(tmp_path, namespace):
    """``[verifier] env`` sets ``HOME = "/app"`` where the agent left ``.local/lib/python3.X/
    site-packages/spy.pth``: an interpreter with a user site runs it as it starts, so the run
    started ahead ran the agent's code before its go (0.0 where a cold run scores 1.0). A run
    whose ``HOME`` is not the user's own starts cold."""
    python, version = _system_python_with_a_user_site()
    toml = 'version = "1.0"\n[verifier]\nenv = { HOME = "/app" }\n'
    pth = {f".local/lib/python{version}/site-packages/spy.pth": f"import os; {SEEN_FIRST}\n"}
    task_dir = make_task(tmp_path / "t", toml=toml, cases={"agent": pth})
    first, second = _seen_after_a_save_to_the_tests(task_dir, python)
    assert first.verdict.rewards == second.verdict.rewards == {"reward": 1.0}, second.stderr.text


SHELL_OPTIONS = """\
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.engine.test_warm import _seen_after_a_save_to_the_tests
from tests.helpers.tasks import make_task
from verifier_tui.engine.sandbox import isolation

isolation._tools["sh"] = "/bin/bash"  # a machine whose sh is bash (Fedora, Arch)
ps4 = "$(test -e /tmp/seen || cat /tests/answer.txt > /tmp/seen)"
toml = 'version = "1.0"\\n[verifier]\\nenv = { SHELLOPTS = "xtrace", PS4 = "%s" }\\n' % ps4
task_dir = make_task(Path(sys.argv[1]) / "t", toml=toml, cases={"agent": {}})
first, second = _seen_after_a_save_to_the_tests(task_dir, sys.executable)
print("rewards", first.verdict.rewards, second.verdict.rewards)
"""


def test_shell_options_the_task_sets_that_run_a_command_start_cold(ordinary_user, namespace):
    """Where ``sh`` is bash (Fedora, Arch), ``SHELLOPTS = "xtrace"`` and a ``PS4`` holding
    ``$(...)`` make the view's shell run the task's command as it starts (bash takes ``PS4``
    from the environment but for root), so the run started ahead ran it before its go
    (0.0 where a cold run scores 1.0): such a run starts cold."""
    ordinary_user.own(ordinary_user.root)
    done = ordinary_user.run_python(SHELL_OPTIONS, ordinary_user.root)
    assert "rewards {'reward': 1.0} {'reward': 1.0}" in done.stdout, done.stdout + done.stderr[-2000:]


def test_a_folders_mode_changed_with_no_watcher_is_not_left_to_the_held_run(tmp_path):
    """A review after: with no watcher (the TUI with live reload off: a key re-runs), whether the
    workspace changed since the run started ahead was told by its files' stats, a folder by being
    one: a folder made 0700 by the user went to the held run, which saw it 0755, as copied before
    (0.0 where a cold run scores 1.0)."""
    verifier = "def verify(workspace):\n    return float((workspace / 'private').stat().st_mode & 0o077 == 0)\n"
    task_dir = make_task(tmp_path / "t", verifier, cases={"agent": {"private/key.txt": "k"}})
    private = task_dir / "cases" / "agent" / "workspace" / "private"
    private.chmod(0o755)

    async def scenario() -> tuple:
        with Session(task_dir, Options(python=PY, case="agent")) as session:
            session.follow_changes(False)
            session.keep_warm()
            spec = session.spec_for_case(session.task.cases[0])
            first = await session.arun(spec)
            await session.warm.settle()
            private.chmod(0o700)
            return first, await session.arun(spec)

    first, second = _run(scenario())
    assert (first.verdict.rewards, second.verdict.rewards) == ({"reward": 0.0}, {"reward": 1.0})


@pytest.mark.parametrize("home", [".", "/proc/self/cwd", "/proc/self/root/app", "/tmp/../app"])
def test_a_home_that_leads_into_the_workspace_starts_cold(tmp_path, namespace, home):
    """A review after: only an absolute HOME inside the workspace or the tool's folders started
    cold; a relative one (the working folder, /app) or one through /proc still reached the agent's
    user site, whose .pth ran before the go."""
    python, version = _system_python_with_a_user_site()
    toml = 'version = "1.0"\n[environment]\nworkdir = "/app"\n[verifier]\nenv = { HOME = "%s" }\n' % home
    pth = {f".local/lib/python{version}/site-packages/spy.pth": f"import os; {SEEN_FIRST}\n"}
    task_dir = make_task(tmp_path / "t", toml=toml, cases={"agent": pth})
    first, second = _seen_after_a_save_to_the_tests(task_dir, python)
    assert first.verdict.rewards == second.verdict.rewards == {"reward": 1.0}, second.stderr.text


GROWER = """\
import os, threading

def _grow():
    fd = os.open("/logs/verifier/racing", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    while True:
        os.write(fd, b"x")

threading.Thread(target=_grow, daemon=True).start()
"""


def test_a_held_run_ended_writes_nothing_after(tmp_path, namespace):
    """A review after: ending a held run killed bwrap's group, but the view's init is in a session of
    its own and went only with bwrap's parent-death signal, after the tool went on to stage where its
    code could still write. Its end is waited for. (The sleep only gives a write the time to show.)"""
    import time

    python = interpreter_with_long_sys_path(tmp_path / "venv", 0)
    (site_packages,) = (tmp_path / "venv").glob("lib/python3*/site-packages")
    (site_packages / "grower.py").write_text(GROWER)
    task_dir = make_task(tmp_path / "t", cases={"agent": {}})
    grew = []

    async def scenario() -> None:
        with Session(task_dir, Options(python=str(python), case="agent", preload=("grower",))) as session:
            spec = session.spec_for_case(session.task.cases[0])
            session.keep_warm()
            await session.arun(spec)
            for _ in range(20):
                await session.warm.settle()
                [waiting] = session.warm.waiting.values()
                racing = waiting.prepared.stage.reward_dir / "racing"
                while not racing.exists() or racing.stat().st_size == 0:
                    await asyncio.sleep(0.01)
                waiting.end()
                st = racing.stat()
                time.sleep(0.05)
                after = racing.stat()
                assert after.st_ino == st.st_ino and waiting.held.over
                grew.append(after.st_size - st.st_size)
                await session.arun(spec)

    _run(scenario())
    assert grew == [0] * len(grew)


@pytest.mark.parametrize(
    ("sandbox", "alias"),
    [("namespace", alias) for alias in ("removed", "kept", "renamed", "in a folder made")]
    + [("copy", "kept"), ("copy", "renamed")],
    indirect=["sandbox"],
)
def test_a_file_rewritten_through_a_hard_link_is_not_what_the_next_run_finds(tmp_path, sandbox, alias):
    """A run may make a second name for a file of its copy of the workspace and
    write through it: the kernel tells the copy's watch of that name only (of
    none, in a folder the run made). The next run (warm or cold) still finds the
    file as it is: in either sandbox where the name is still there (one stat);
    in the view also where it is gone (a walk: see WriteTracker.contained)."""
    task_dir = make_task(
        tmp_path / "t",
        f"""\
        import os
        import shutil

        def verify(workspace):
            text = (workspace / "data.txt").read_text()
            made = {alias == "in a folder made"}
            if made:
                (workspace / "made").mkdir()
            alias = workspace / ("made/alias" if made else ".alias")
            os.link(workspace / "data.txt", alias)
            alias.write_text("planted")
            if made:
                shutil.rmtree(workspace / "made")
            elif {alias == "removed"}:
                os.unlink(alias)
            elif {alias == "renamed"}:
                os.replace(alias, workspace / ".moved")
            print(text)
            return 1.0
    """,
        files={"data.txt": "original"},
        cases={"only": {"data.txt": "original"}},
    )
    verifier = task_dir / "tests" / "verifier.py"

    async def scenario():
        with Session(task_dir, Options(python=PY, case="only")) as session:
            session.follow_changes(True)
            session.keep_warm()
            runs = [await session.arun()]
            for save in range(2):
                verifier.write_text(verifier.read_text() + f"\n# saved {save}\n", encoding="utf-8")
                session.note_change(Change(frozenset({verifier})))
                runs.append(await session.arun())
            return runs

    runs = _run(scenario())
    assert [run.stdout.text.strip() for run in runs] == ["original"] * 3, [run.stderr.text for run in runs]


def test_what_a_run_leaves_beside_the_runner_is_gone_by_the_next_run(tmp_path, sandbox):
    """The runner's folder (``/tests/.ng``) leads the verifier's sys.path: a module a
    run left there (or its bytecode, or a module of that name in ``__pycache__``)
    would be what the next run's ``import`` finds, where each sandbox run starts
    with what the task ships."""
    task_dir = make_task(
        tmp_path / "t",
        """\
        import sys
        from pathlib import Path

        def verify(workspace):
            ng = Path(sys.argv[0]).resolve().parent
            print(sorted(str(p.relative_to(ng)) for p in ng.rglob("*")))
            (ng / "json.py").write_text("raise SystemExit('planted')")
            (ng / "planted").mkdir()
            (ng / "planted" / "__init__.py").write_text("")
            (ng / "__pycache__" / f"json.{sys.implementation.cache_tag}.pyc").write_bytes(b"planted")
            (ng / "verifier.py").write_text("")
            return 1.0
    """,
        cases={"only": {"a.txt": "a"}},
    )
    with Session(task_dir, Options(python=PY, case="only")) as session:
        first, second = session.run(), session.run()
    assert first.exit_code == second.exit_code == 0, second.stderr.text
    assert second.stdout.text == first.stdout.text


UNREADABLE_RUNNERS_FOLDER = """
import os, sys
from pathlib import Path
from tests.helpers.tasks import make_task
from verifier_tui.engine.session import Options, Session
os.environ["VERIFIER_TUI_SANDBOX"] = sys.argv[2]
verifier = '''
import os, sys
from pathlib import Path

def verify(workspace):
    ng = Path(sys.argv[0]).resolve().parent
    (ng / "json.py").write_text("raise SystemExit('planted')")
    (ng / "__pycache__").chmod(%s)
    os.chmod(ng, %s)
    return 1.0
'''
mode = sys.argv[3]
task_dir = make_task(Path(sys.argv[1]) / "t", verifier % (mode, mode), cases={"only": {"a.txt": "a"}})
with Session(task_dir, Options(python=sys.executable, case="only")) as session:
    for _ in range(3):
        run = session.run()
        print(run.outcome.name, run.exit_code, run.start_error)
"""


@pytest.mark.parametrize("mode", ["0o000", "0o311"])
def test_a_runners_folder_a_run_made_unreadable_fails_no_later_run(ordinary_user, sandbox, mode):
    """A review after: an ordinary user's run that took its own rights from ``/tests/.ng``
    (a task that ships none) made every other run fail to start (``tests/.ng: Permission
    denied``): the next staging listed the folder to clear what the run left, as it was."""
    done = ordinary_user.run_python(UNREADABLE_RUNNERS_FOLDER, ordinary_user.root, sandbox, mode)
    assert done.stdout.splitlines() == ["REWARD_WRITTEN 0 None"] * 3, done.stdout + done.stderr[-2000:]


def test_a_save_to_a_dataset_verifier_goes_warm(tmp_path, sandbox):
    """A review after: each cold staging cleared ``/tests/.ng/verifier.py`` and the run placed
    the dataset's verifier there again once its folder was watched: the run started ahead
    looked written beside, and every save to the dataset's verifier started cold."""
    dataset = tmp_path / "dataset"
    dataset.mkdir()
    (dataset / "dataset.toml").write_text("[dataset]\n")
    verifier = dataset / "verifier.py"
    verifier.write_text("def verify(workspace):\n    print('ran')\n    return 1.0\n")
    task = dataset / "one"
    (task / "tests").mkdir(parents=True)
    (task / "task.toml").write_text('version = "1.0"\n')

    async def scenario():
        with Session(task, Options(python=PY)) as session:
            session.follow_changes(True)
            session.keep_warm()
            runs = [(None, await session.arun())]
            for save in range(2):
                await session.warm.settle()
                [waiting] = session.warm.waiting.values()
                verifier.write_text(verifier.read_text() + f"\n# saved {save}\n", encoding="utf-8")
                session.note_change(Change(frozenset({verifier})))
                runs.append((waiting.held, await session.arun()))
            return runs

    runs = _run(scenario())
    assert [r.stdout.text.strip() for _, r in runs] == ["ran"] * 3, [r.stderr.text for _, r in runs]
    assert [held.went for held, _ in runs[1:]] == [True, True]


def test_files_a_run_made_in_the_views_copy_walk_it_only_where_a_link_could_hide(tmp_path, namespace):
    """A file the run made and kept, or wrote aside and renamed over one of the copy's,
    is asked whether it is a second name (it is not): the copy is not walked for it."""
    task_dir = make_task(
        tmp_path / "t",
        """\
        import os

        def verify(workspace):
            text = (workspace / "data.txt").read_text()
            (workspace / "data.tmp").write_text("replaced")
            os.replace(workspace / "data.tmp", workspace / "data.txt")
            (workspace / "made.txt").write_text("made")
            print(text)
            return 1.0
    """,
        cases={"only": {"data.txt": "original"}},
    )
    with Session(task_dir, Options(python=PY, case="only")) as session:
        session.follow_changes(True)
        spec = session.spec()
        runs = [session.run(spec) for _ in range(3)]
        mirror = session.stage_for(spec).workspace
        assert [run.stdout.text.strip() for run in runs] == ["original"] * 3, [run.stderr.text for run in runs]
        assert not mirror.walked
