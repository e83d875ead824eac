"""Warm runs (engine/warm.py): a run started ahead and held gives what a cold
run gives; anything the held run already holds that changed discards it; and
nothing held outlives the session.

Real runs of the real runner; "warm" is proven by the held run being the one
that went (``Held.went``), never by timing.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys

import pytest

from tests.helpers import HANG_GUARD_S, PY, RUNNER, TASKS_WITH_CASES, make_task, process_gone, wait_gone
from verifier_tui.engine import warm
from verifier_tui.engine.record import replace
from verifier_tui.engine.session import Options, Session

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
        "explain": result.explain,
        "phases": [{k: v for k, v in phase.items() if not k.endswith("_s")} for phase in result.phases or []],
        "notices": result.notices,
        "strays": result.strays,
        "environment": result.environment,
    }


async def _held_then_run(session: Session, spec) -> tuple:
    """Run ``spec`` once (cold), then again from the run that was started
    ahead meanwhile: (the held run, the second result)."""
    session.keep_warm()
    await session.arun(spec)
    await session.warm.settle()
    held = [waiting.held for waiting in session.warm.waiting.values()]
    assert len(held) == 1, "no run was started ahead"
    return held[0], await session.arun(spec)


def _run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, HANG_GUARD_S))


@pytest.mark.parametrize("name", TASKS_WITH_CASES)
def test_every_example_case_gives_the_same_result_warm_and_cold(example, name, sandbox):
    task_dir = example(name)
    with Session(task_dir, Options(python=PY)) as cold, Session(task_dir, Options(python=PY)) as hot:
        for case in cold.task.cases:
            spec = replace(cold.spec_for_case(case), phases=True)
            expected = cold.run(spec)
            held, result = _run(_held_then_run(hot, replace(hot.spec_for_case(case), phases=True)))
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
    assert timeout == (90 if change == "task.toml timeout" else 60) == result.timeout_s
    assert (result.response is not None) is (change == "response")


def test_a_change_to_the_workspace_goes_to_the_held_run(example, sandbox):
    """The common save: staged into the held run's folders, which it then reads."""
    task_dir = example("hello-file")

    async def scenario():
        with Session(task_dir, Options(python=PY, case="correct")) as session:
            session.keep_warm()
            first = await session.arun()
            await session.warm.settle()
            [waiting] = session.warm.waiting.values()
            (session.workspace / "hello.txt").write_text("something else\n", encoding="utf-8")
            return first, waiting.held, await session.arun()

    first, held, second = _run(scenario())
    assert held.went
    assert first.verdict.rewards == {"reward": 1.0}
    assert second.verdict.rewards != first.verdict.rewards


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

    held, result = _run(scenario())
    assert held.went
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
