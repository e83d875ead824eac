"""Import hygiene, checked in fresh interpreters: the engine and the headless
commands never import Textual (import-linter checks the same statically, see
tests/packaging/test_layers.py; this checks what really happens at run time),
and the one-shot ``run`` and ``explain`` commands do not import asyncio. That
is no trick: their blocking process driver has no use for it (only the async
face, for the TUI, ``watch`` and ``test``, imports it), and importing it would
cost ``run --json`` several milliseconds for nothing.
"""

from __future__ import annotations

import json
import os
import pkgutil
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import verifier_tui.engine

NO_CACHE = shutil.ignore_patterns("__pycache__")

ENGINE_MODULES = sorted(
    info.name for info in pkgutil.walk_packages(verifier_tui.engine.__path__, "verifier_tui.engine.")
)
HEADLESS_MODULES = [
    "verifier_tui",
    "verifier_tui.cli",
    "verifier_tui.commands.headless",
    "verifier_tui.commands.report",
    "verifier_tui.words.run",
    "verifier_tui.runner_source",
    "verifier_tui.engine",
]


def fresh(code: str, tmp_path: Path) -> dict:
    """Run ``code`` and then REPORT in a new interpreter; REPORT prints one
    JSON line, the last on stderr."""
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "xdg-cache"), TMPDIR=str(tmp_path))
    source = textwrap.dedent(code) + REPORT
    done = subprocess.run(
        [sys.executable, "-c", source], capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stderr.strip().splitlines()[-1])


REPORT = textwrap.dedent("""
    import json, sys
    loaded = sorted(sys.modules)
    sys.stderr.write(json.dumps({
        "textual": [m for m in loaded if m == "textual" or m.startswith("textual.")],
        "asyncio": "asyncio" in sys.modules,
        "code": globals().get("code"),
    }) + "\\n")
""")


def test_every_engine_module_is_checked():
    assert "verifier_tui.engine.session" in ENGINE_MODULES
    assert "verifier_tui.engine.watch.live" in ENGINE_MODULES
    assert len(ENGINE_MODULES) >= 10


def test_no_engine_or_headless_module_imports_textual(tmp_path):
    """Each module imported in turn in one interpreter: the first one after
    whose import Textual is loaded is the one that brings it (a module
    imported earlier would have brought it first), so one interpreter finds
    what one per module would, at a 72nd of the cost."""
    code = f"""
        import sys
        brought_by = None
        for module in {HEADLESS_MODULES + ENGINE_MODULES!r}:
            __import__(module)
            if "textual" in sys.modules:
                brought_by = module
                break
        code = brought_by
    """
    seen = fresh(code, tmp_path)
    assert seen["code"] is None, f"importing {seen['code']} imports {seen['textual']}"
    assert seen["textual"] == []


@pytest.fixture
def task(example):
    return example("hello-file")


@pytest.mark.parametrize(
    "command",
    [
        ["run", "--json"],
        ["run"],
        ["run", "--case", "missing-file"],
        ["explain", "--json"],
        ["explain"],
    ],
)
def test_one_shot_commands_import_neither_asyncio_nor_textual(tmp_path, task, command):
    argv = command + [str(task), "--python", sys.executable]
    seen = fresh(
        f"""
        import contextlib, io
        from verifier_tui.cli import main
        with contextlib.redirect_stdout(io.StringIO()):
            code = main({argv!r})
    """,
        tmp_path,
    )
    assert seen["asyncio"] is False
    assert seen["textual"] == []
    assert seen["code"] in (0, 1)


def test_the_program_loads_its_modules_without_the_collector_and_collects_afterwards(tmp_path, task):
    """The program's entry (the console script's and ``python -m verifier_tui``'s)
    loads its modules with Python's cyclic collector paused and sets them aside
    from later collections: about 30 collections went by while they loaded,
    5 to 9 ms of every ``run --json``, and freed nothing. The collector is
    back on for the command itself (a TUI session frees its cycles as ever)."""
    seen = fresh(
        f"""
        import gc, os, sys
        starts = []
        gc.callbacks.append(lambda phase, info: starts.append(info["generation"]) if phase == "start" else None)
        sys.argv = ["verifier-tui", "run", "--json", {str(task)!r}, "--python", {sys.executable!r}]
        def leave(status):  # the program's own end (cli._exit_now), made one this code can report after
            raise SystemExit(status)
        os._exit = leave
        try:
            from verifier_tui.__main__ import main

            main()
        except SystemExit as end:
            status = end.code
        code = {{"status": status, "collections": len(starts), "on": gc.isenabled()}}
        code["set_aside"] = gc.get_freeze_count()
    """,
        tmp_path,
    )
    assert seen["code"]["status"] == 0
    assert seen["code"]["on"] is True
    assert seen["code"]["set_aside"] > 10_000
    assert seen["code"]["collections"] < 15  # about 32 with the collector on while the modules load


@pytest.mark.parametrize("command", [["test"], ["test", "--json"]])
def test_test_command_does_not_import_textual(tmp_path, task, command):
    argv = command + [str(task), "--python", sys.executable]
    seen = fresh(
        f"""
        import contextlib, io
        from verifier_tui.cli import main
        with contextlib.redirect_stdout(io.StringIO()):
            code = main({argv!r})
    """,
        tmp_path,
    )
    assert seen["textual"] == []
    assert seen["code"] == 0


def test_the_watcher_process_watches_without_asyncio(tmp_path):
    """The watcher process, started with every TUI and ``watch`` session, has
    no event loop: it reports a change as the watcher starts it, and leaves
    asyncio unloaded (about 25 ms of every start)."""
    from verifier_tui.engine.watch.watcher import _CHILD_CODE, _child_import_path

    folder = tmp_path / "workspace"
    folder.mkdir()
    options = {"targets": [[str(folder), "workspace", True, False]], "ignore": [], "force_polling": False}
    proc = subprocess.Popen(
        [sys.executable, "-I", "-c", _CHILD_CODE + REPORT, json.dumps(_child_import_path()), json.dumps(options)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert json.loads(proc.stdout.readline()) == {"ready": True}
        (folder / "answer.txt").write_text("42")
        change = json.loads(proc.stdout.readline())["change"]
        _, err = proc.communicate(timeout=30)  # closes its stdin: the watcher ends
    finally:
        proc.kill()
    assert "workspace/answer.txt" in json.dumps(change)
    assert proc.returncode == 0, err
    assert json.loads(err.strip().splitlines()[-1])["asyncio"] is False


def test_the_watcher_process_finds_the_tool_where_its_parent_did(tmp_path):
    """Started from a source tree on PYTHONPATH, which the watcher process's
    ``-I`` ignores, it finds the tool and watchfiles through the import path
    its parent gives it; else it fails to start and watching falls back to
    threads. Here an interpreter that has neither installed finds the tool
    and watchfiles (with what it needs) each in a folder of its own."""
    import watchfiles

    src, lib = tmp_path / "src", tmp_path / "lib"
    shutil.copytree(Path(verifier_tui.engine.__file__).parents[1], src / "verifier_tui", ignore=NO_CACHE)
    lib.mkdir()
    for entry in Path(watchfiles.__file__).parents[1].iterdir():  # watchfiles and what it imports
        if "verifier_tui" not in entry.name:
            (lib / entry.name).symlink_to(entry)
    bare = shutil.which("python3")  # the suite's bare virtual environment (tests/conftest.py)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(src), str(lib)]))
    asked = "import json\nfrom verifier_tui.engine.watch.watcher import _CHILD_CODE, _child_import_path as p\n"
    asked += "print(json.dumps([_CHILD_CODE, p()]))"
    code, path = json.loads(subprocess.run([bare, "-c", asked], env=env, capture_output=True, check=True).stdout)
    folder = tmp_path / "workspace"
    folder.mkdir()
    options = {"targets": [[str(folder), "workspace", True, False]], "ignore": [], "force_polling": False}
    proc = subprocess.Popen(
        [bare, "-I", "-c", code, json.dumps(path), json.dumps(options)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        ready = proc.stdout.readline()
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert json.loads(ready or "null") == {"ready": True}, err


def test_run_starts_without_dataclasses_or_tomllib(tmp_path, task):
    """The two start-up measures kept for `run` (each saves more than 5 ms):
    records instead of dataclasses, and task.toml's answer remembered so that
    tomllib is skipped (the first run parses it)."""
    argv = ["run", "--json", str(task), "--python", sys.executable]
    code = f"""
        import contextlib, io, json, sys
        from verifier_tui.cli import main
        with contextlib.redirect_stdout(io.StringIO()):
            code = main({argv!r})
        sys.stderr.write(json.dumps({{m: m in sys.modules for m in ("dataclasses", "tomllib")}}) + "\\n")
    """
    for _ in range(2):
        env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "xdg-cache"), TMPDIR=str(tmp_path))
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stderr.strip().splitlines()[-1])
    assert loaded == {"dataclasses": False, "tomllib": False}


# ---------------------------------------------------------------------------
# The engine's records behave as the dataclasses they stand in for


def test_records_behave_like_dataclasses():
    from verifier_tui.engine.model import CapturedText, Expectation, RunInputs, RunResult, Verdict
    from verifier_tui.engine.record import narrowed, record, replace
    from verifier_tui.engine.session import Options

    verdict = Verdict({"reward": 1.0})
    assert verdict == Verdict(rewards={"reward": 1.0}, error=None, message=None, source=None, warnings=())
    assert verdict != Verdict({"reward": 0.0})
    assert repr(verdict) == "Verdict(rewards={'reward': 1.0}, error=None, message=None, source=None, warnings=())"
    with pytest.raises(AttributeError):
        verdict.error = "x"  # frozen
    assert hash(CapturedText("a", "b")) == hash(CapturedText("a", "b"))
    assert hash(Options(case="x")) == hash(Options(case="x"))
    with pytest.raises(TypeError):
        Verdict()  # rewards is required
    with pytest.raises(TypeError):
        Verdict({}, nosuch=1)
    with pytest.raises(TypeError):
        Verdict({}, rewards={})
    with pytest.raises(TypeError):
        Expectation(None, None, None, None, "too many")
    # a default factory gives every instance its own value
    fields = dict(
        outcome=None,
        exit_code=0,
        signal=None,
        duration_s=0.0,
        reward_files=[],
        verdict=verdict,
        stdout=CapturedText(),
        stderr=CapturedText(),
        explain=None,
        inputs=RunInputs(None, None, None, None, None, None, "python3", 1.0, None, None),
        command=[],
    )
    one, two = RunResult(**fields), RunResult(**fields)
    # narrowed() gives a record as a base of its class, that base's fields alone (a result's RunInputs)

    @record(frozen=True)
    class More(RunInputs):
        extra: int = 0

    given = (None, "case", None, None, None, None, "python3", 1.0, None, None)
    assert narrowed(More(*given, extra=3), RunInputs) == RunInputs(*given)
    assert type(narrowed(More(*given), RunInputs)) is RunInputs
    one.notices.append("only mine")
    assert two.notices == []
    with pytest.raises(TypeError):
        hash(one)  # mutable, compared by value: unhashable, as a dataclass
    # replace() copies a record with some fields changed (the TUI's spec_for_case, test's cases)
    assert replace(Expectation(exit_code=2), rewards={"r": 1}) == Expectation({"r": 1}, 2, None)
    assert replace(verdict, error="E") == Verdict({"reward": 1.0}, "E")
    with pytest.raises(TypeError):
        replace(verdict, nosuch=1)
