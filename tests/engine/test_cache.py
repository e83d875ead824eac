"""The tool's own cache files: private to the user, replaced atomically, and
trusted only after their shape was checked (a wrong one costs a fresh answer,
never a traceback)."""

from __future__ import annotations

import json
import marshal
import os
import stat
import subprocess
import sys

import pytest

from tests.helpers.tasks import make_task
from verifier_tui.engine import cache, interpreter
from verifier_tui.engine.interpreter import probe_interpreter
from verifier_tui.engine.sandbox.stage import extras_bytecode
from verifier_tui.engine.session import Options, Session
from verifier_tui.engine.task.discovery import read_task_config


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_the_folder_and_files_are_private(private_cache):
    cache.store("x.json", {"a": 1})
    folder = private_cache / "verifier-tui"
    assert mode(folder) == 0o700
    assert mode(folder / "x.json") == 0o600
    assert [p.name for p in folder.iterdir()] == ["x.json"]  # no temporary file left


def test_a_folder_made_wider_is_made_private_again(private_cache):
    folder = private_cache / "verifier-tui"
    folder.mkdir(parents=True, mode=0o755)
    os.chmod(folder, 0o755)
    cache.store("x.json", {"a": 1})
    assert mode(folder) == 0o700


def test_only_entries_of_the_right_shape_come_back(private_cache):
    cache.store("x.json", {"good": 1, "bad": "one", "odd": [1]})
    assert cache.load("x.json", lambda entry: isinstance(entry, int)) == {"good": 1}


def test_a_check_that_trips_over_a_shape_discards_the_entry(private_cache):
    cache.store("x.json", {"good": {"n": 1}, "bad": [], "worse": None})
    assert cache.load("x.json", lambda entry: entry["n"] > 0) == {"good": {"n": 1}}


@pytest.mark.parametrize("text", ["[]", "null", "7", "{not json", ""])
def test_a_file_that_is_not_a_json_object_is_ignored(private_cache, text):
    folder = private_cache / "verifier-tui"
    folder.mkdir(parents=True)
    (folder / "x.json").write_text(text)
    assert cache.load("x.json", lambda entry: True) == {}


def test_a_file_others_may_write_is_not_trusted(private_cache):
    cache.store("x.json", {"a": 1})
    os.chmod(private_cache / "verifier-tui" / "x.json", 0o666)
    assert cache.load("x.json", lambda entry: True) == {}


def test_only_the_newest_entries_are_kept(private_cache):
    cache.store("x.json", {str(i): i for i in range(10)}, keep=3)
    assert cache.load("x.json", lambda entry: True) == {"7": 7, "8": 8, "9": 9}


def test_a_relative_xdg_cache_home_is_ignored(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache.folder() == str(tmp_path / ".cache" / "verifier-tui")


@pytest.mark.parametrize(
    "planted",
    [
        "[]",
        '{"%s": []}',
        '{"%s": {"path": "x", "stamp": 1}}',
        '{"%s": {"path": [], "stamp": [], "executable": 3, "version": "3"}}',
    ],
)
def test_an_interpreter_cache_of_the_wrong_shape_is_asked_again(private_cache, planted, monkeypatch):
    monkeypatch.setattr(interpreter, "_known", {})  # what this test process learnt already
    exe = os.path.abspath(sys.executable)
    folder = private_cache / "verifier-tui"
    folder.mkdir(parents=True, mode=0o700)
    (folder / "interpreters-2.json").write_text(planted.replace("%s", exe))
    found = probe_interpreter(exe)
    assert found.error is None
    assert found.executable and found.version == "%d.%d.%d" % sys.version_info[:3]
    rewritten = json.loads((folder / "interpreters-2.json").read_text())
    assert isinstance(rewritten[exe]["path"], list)


@pytest.mark.parametrize(
    "planted",
    [
        "[]",
        '{"%s": []}',
        '{"%s": {"stamp": "x", "config": {}}}',
        '{"%s": {"stamp": [], "config": {"timeout_sec": "soon", "env": {}, "name": null, "problems": []}}}',
    ],
)
def test_a_task_config_cache_of_the_wrong_shape_is_read_again(private_cache, tmp_path, planted):
    task = make_task(tmp_path / "t", toml="[verifier]\ntimeout_sec = 7\n")
    folder = private_cache / "verifier-tui"
    folder.mkdir(parents=True, mode=0o700)
    (folder / "task-config.json").write_text(planted.replace("%s", str(task / "task.toml")))
    assert read_task_config(task).timeout_sec == 7.0


# -- private, and trusted only after checks -----------------------------------------------------------


def test_files_are_private_whatever_the_umask(private_cache):
    old = os.umask(0)
    try:
        cache.store("x.json", {"a": 1})
    finally:
        os.umask(old)
    folder = private_cache / "verifier-tui"
    assert mode(folder) == 0o700 and mode(folder / "x.json") == 0o600


@pytest.mark.skipif(os.getuid() != 0, reason="giving a file to another user needs root; the check is the same")
def test_a_file_of_another_user_is_not_trusted(private_cache):
    cache.store("x.json", {"a": 1})
    os.chown(private_cache / "verifier-tui" / "x.json", 65534, 65534)
    assert cache.load("x.json", lambda entry: True) == {}


def test_a_link_in_place_of_a_cache_file_is_not_followed(private_cache, tmp_path):
    """A link planted in the cache folder may point at any JSON object of the
    user's: it is never read as the cache."""
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"a": 1}))
    os.chmod(elsewhere, 0o600)
    folder = private_cache / "verifier-tui"
    folder.mkdir(parents=True, mode=0o700)
    (folder / "x.json").symlink_to(elsewhere)
    assert cache.load("x.json", lambda entry: True) == {}


def test_a_fifo_in_place_of_a_cache_file_does_not_hang(private_cache):
    folder = private_cache / "verifier-tui"
    folder.mkdir(parents=True, mode=0o700)
    os.mkfifo(folder / "x.json", 0o600)
    assert cache.load("x.json", lambda entry: True) == {}


def test_what_cannot_be_written_as_json_costs_only_the_cache(private_cache):
    cache.store("x.json", {"a": float("nan")})
    cache.store("y.json", {"a": object()})
    folder = private_cache / "verifier-tui"
    assert not folder.exists() or list(folder.iterdir()) == []  # nothing written, no temporary file left


def test_a_task_config_cache_holding_an_infinite_timeout_is_read_again(private_cache, tmp_path):
    task = make_task(tmp_path / "t", toml="[verifier]\ntimeout_sec = 7\n")
    folder = private_cache / "verifier-tui"
    folder.mkdir(parents=True, mode=0o700)
    st = os.stat(task / "task.toml")
    stamp = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]
    (folder / "task-config.json").write_text(
        json.dumps(
            {
                str(task / "task.toml"): {
                    "stamp": stamp,
                    "config": {"timeout_sec": float("inf"), "env": {}, "name": None, "problems": [], "refused": None},
                }
            }
        )
    )
    os.chmod(folder / "task-config.json", 0o600)
    assert read_task_config(task).timeout_sec == 7.0


# ---------------------------------------------------------------------------
# The runner's extras, compiled once


_LOAD_STAGED_EXTRAS = """
import sys
from importlib.machinery import SourceFileLoader

class NoCompiling(SourceFileLoader):
    def source_to_code(self, data, path, *, _optimize=-1):
        raise SystemExit("compiled from source")

code = NoCompiling("run_verifier_extras", sys.argv[1]).get_code("run_verifier_extras")
print(code.co_filename)
"""


def test_the_runner_loads_its_extras_from_bytecode_compiled_once(private_cache, tmp_path):
    # The runner starts with -B and would compile the extras at every run:
    # the stage holds their bytecode, which Python takes without compiling.
    extras_bytecode.cache_clear()  # compiled in this process already, by another test, into another cache
    task = make_task(tmp_path / "t")
    with Session(task, Options(python=sys.executable)) as session:
        assert session.run().exit_code == 0
        staged = session.stage_for(session.spec()).tests_dir / ".ng" / "run_verifier_extras.py"
        loaded = subprocess.run(
            [sys.executable, "-B", "-c", _LOAD_STAGED_EXTRAS, str(staged)], capture_output=True, text=True
        )
        name, data = extras_bytecode(staged.read_bytes())
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.strip() == str(staged)  # the code names the staged file, whatever compiled it
    assert cache.read(name) == data  # kept for the next process


def test_a_planted_or_stale_bytecode_in_the_cache_is_not_used(private_cache):
    folder = private_cache / "verifier-tui"
    folder.mkdir(parents=True, mode=0o700)
    source = b"VALUE = 1\n"
    name = f"run_verifier_extras.{sys.implementation.cache_tag}.pyc"
    (folder / name).write_bytes(b"not bytecode at all")
    extras_bytecode.cache_clear()
    got_name, data = extras_bytecode(source)
    (folder / name).write_bytes(data[:-7])  # the right header, its code cut short
    extras_bytecode.cache_clear()
    assert extras_bytecode(source) == (name, data)
    assert got_name == name
    scope: dict[str, object] = {}
    exec(marshal.loads(data[16:]), scope)
    assert scope["VALUE"] == 1
    assert (folder / name).read_bytes() == data  # replaced by the right one
    (folder / name).unlink()
    os.symlink(folder / "elsewhere.pyc", folder / name)  # a link in its place is not read through
    (folder / "elsewhere.pyc").write_bytes(data)
    extras_bytecode.cache_clear()
    assert cache.read(name) is None
    assert extras_bytecode(source)[1] == data
