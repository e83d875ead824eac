"""Ask the chosen interpreter about itself, once, and remember the answer.

The runner is started by ``--python`` (``python3`` on PATH by default, as the
shim's ``test.sh`` would find it). Before staging, the tool needs to know which
executable that is, its version, and where its ``nemo_gym/verifiers`` is, to
vendor it beside the runner as the shim does. Asking means starting it (about
18 ms), so the answer is kept in the cache (:mod:`verifier_tui.engine.cache`),
keyed by the interpreter and the modification times of its import path
folders: installing or removing a package changes its site-packages folder,
which asks again.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from verifier_tui.engine import cache
from verifier_tui.engine.model import duration_text
from verifier_tui.engine.record import record

if TYPE_CHECKING:
    from typing import Any

# Written to run on any Python, 2.7 included, so that an old one answers with
# its version (and is refused by name) instead of failing on an import.
_PROBE = (
    "import json, os, sys\n"
    "try:\n"
    "    import importlib.machinery as m\n"
    "    s = m.PathFinder.find_spec('nemo_gym', sys.path)\n"
    "except Exception:\n"
    "    s = None\n"
    "loc = list(s.submodule_search_locations or []) if s else []\n"
    "v = [os.path.join(p, 'verifiers') for p in loc if os.path.isdir(os.path.join(p, 'verifiers'))]\n"
    "print(json.dumps({'verifiers': v[0] if v else None, 'path': [p for p in sys.path if p],"
    " 'version': '%d.%d.%d' % sys.version_info[:3], 'executable': sys.executable,"
    " 'prefixes': [getattr(sys, n, '') for n in ('prefix', 'base_prefix', 'exec_prefix', 'base_exec_prefix')]}))\n"
)
# Answers asked before the probe left the task's environment out may name the
# task's folders (an agent socket): a new name, so none of them is ever read.
_CACHE_FILE = "interpreters-2.json"
#: How long the interpreter has to answer the probe, at most (a run's own
#: timeout bounds it further). A real interpreter answers in tens of ms; a
#: script that hangs must not hold the run for long.
PROBE_TIMEOUT_S = 10.0
_lock = threading.Lock()  # the TUI stages from worker threads
_known: dict[str, dict[str, Any]] = {}  # this process's answers, by interpreter


@record(frozen=True)
class Interpreter:
    """What the chosen interpreter told us about itself."""

    command: str
    executable: str | None
    version: str | None
    nemo_gym_verifiers: Path | None
    error: str | None = None
    folders: tuple[str, ...] = ()
    """Where it lives and what it imports from: its executable, prefixes and
    import path (the sandbox's view must show them)."""


def probe_interpreter(python: str, timeout_s: float = PROBE_TIMEOUT_S) -> Interpreter:
    """Ask ``python`` where its ``nemo_gym/verifiers`` is (without importing
    nemo_gym), or take the remembered answer while its import path is unchanged.

    It runs on this machine, outside any sandbox, so with what the runner
    gets of the user's environment and nothing of the task's: a task's
    ``PYTHONPATH = "${PWD}"`` ran a sitecustomize.py it holds, here, and its
    ``"${SSH_AUTH_SOCK}"`` made the user's agent socket one of the folders
    the view shows (and remembered, for every task)."""
    exe = shutil.which(python) if os.sep not in python else python
    if exe is None:
        return Interpreter(python, None, None, None, error=f"{python}: not found on PATH")
    exe = os.path.abspath(exe)  # the probe runs from the root folder: .venv/bin/python is the user's folder's
    # Keyed by the path as found, links unresolved: a virtual environment's
    # bin/python is a link to its base interpreter, but a different
    # interpreter (its own site-packages, maybe its own nemo_gym).
    key = exe
    with _lock:
        answer = _known.get(key) or cache.load(_CACHE_FILE, _valid_answer).get(key)
        if answer is not None and answer["stamp"] == _path_stamp(answer["path"]):
            _known[key] = answer
            return _interpreter_from(python, answer)
        answer, error = _ask(exe, python, timeout_s)
        if answer is None:
            return Interpreter(python, exe, None, None, error=error)
        _known[key] = answer
        remembered = cache.load(_CACHE_FILE, _valid_answer)
        remembered.pop(key, None)
        remembered[key] = answer
        cache.store(_CACHE_FILE, remembered)
        return _interpreter_from(python, answer)


def _ask(exe: str, python: str, timeout_s: float = PROBE_TIMEOUT_S) -> tuple[dict[str, Any] | None, str | None]:
    import signal
    import subprocess

    from verifier_tui.engine.process import MARKER, end_marked, new_token

    # In a session of its own, so that what it started can be ended with it, and
    # marked, so that what left that session (setsid, a double fork) is found too.
    token = new_token()
    from verifier_tui.engine.sandbox.environment import child_environment

    marked = dict(child_environment({}).values, **{MARKER: token})
    try:
        proc = subprocess.Popen(
            [exe, "-c", _PROBE],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=marked,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            # ``-c`` puts the current folder first on the import path: a json.py
            # in a job folder someone sent, where the user started the tool,
            # would run here, outside any sandbox. The root folder holds none.
            cwd="/",
        )
    except OSError as exc:
        return None, f"{python}: {exc.strerror or exc}"
    except ValueError as exc:
        return None, f"{python}: {exc}"
    stdout: str | None
    stderr: str | None
    try:
        stdout, stderr = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        stdout = stderr = None
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # whatever it left in its group, or all of it on a timeout
        except (ProcessLookupError, PermissionError):
            pass
        end_marked(token)  # and what escaped the group, which may hold the pipes open
        for stream in filter(None, (proc.stdout, proc.stderr)):  # both piped
            stream.close()  # never wait for the end of output a process out of reach still holds
        try:
            proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            pass
    if stdout is None:
        return None, f"{python} did not answer within {duration_text(timeout_s)} (is it a Python interpreter?)"
    done = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    if done.returncode != 0:
        lines = [line.strip() for line in done.stderr.splitlines() if line.strip()] or ["no output"]
        # A traceback ends with its error; a launcher's message (a pyenv shim's) starts with it.
        said = lines[-1] if lines[0].startswith("Traceback") else lines[0]
        return None, f"{python} failed to start: {said}"
    try:
        answer = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        answer = None
    if not _valid_answer(dict(answer, stamp=[]) if isinstance(answer, dict) else None):
        return None, f"{python} gave an unreadable answer"
    answer["stamp"] = _path_stamp(answer["path"])
    return answer, None


def _valid_answer(entry: object) -> bool:
    """The shape the probe answers with (plus its stamp): anything else in the
    cache is discarded."""
    return (
        isinstance(entry, dict)
        and isinstance(entry.get("path"), list)
        and all(isinstance(p, str) for p in entry["path"])
        and isinstance(entry.get("stamp"), list)
        and isinstance(entry.get("executable"), str)
        and isinstance(entry.get("prefixes"), list)
        and all(isinstance(p, str) for p in entry["prefixes"])
        and isinstance(entry.get("version"), str)
        and (entry.get("verifiers") is None or isinstance(entry["verifiers"], str))
    )


def _path_stamp(paths: list[str]) -> list[int | None]:
    out: list[int | None] = []
    for entry in paths:
        try:
            out.append(os.stat(entry).st_mtime_ns)
        except OSError:
            out.append(None)
    return out


def _interpreter_from(python: str, answer: dict[str, Any]) -> Interpreter:
    verifiers = answer["verifiers"]
    old = not_python_3(answer["version"])
    executable = answer["executable"]
    return Interpreter(
        python,
        executable,
        answer["version"],
        Path(verifiers) if verifiers else None,
        error=f"{python}: {old}" if old else None,
        folders=(executable, os.path.realpath(executable), *answer["prefixes"], *answer["path"]),
    )


def not_python_3(version: str) -> str | None:
    """``"Python 2.7 is too old: ..."`` for a Python 2, else None. verifier-tui
    cannot use a Python 2 for anything (the runner is Python 3 code): bad input,
    said in one line. A Python 3 older than 3.8 is run as the sandbox would
    run it, to the shim's refusal (:func:`shim_refusal`)."""
    found = version_tuple(version)
    if not found or found >= (3,):
        return None
    return (
        f"Python {'.'.join(map(str, found[:2]))} is too old: the runner needs "
        f"{SHIM_MIN_VERSION[0]}.{SHIM_MIN_VERSION[1]} or newer"
    )


#: The oldest Python the shim's test.sh accepts: it refuses anything older with
#: exit 127 and no reward file, without starting the runner.
SHIM_MIN_VERSION = (3, 8)
#: The exit status the shim gives then (a shell's "command not found").
SHIM_REFUSAL_EXIT = 127


def version_tuple(version: str | None) -> tuple[int, ...] | None:
    """``"3.7.16"`` as ``(3, 7, 16)``; None when it cannot be read."""
    try:
        return tuple(int(part) for part in (version or "").split(".")[:3])
    except ValueError:
        return None


def shim_refusal(interpreter: Interpreter) -> str | None:
    """What the shim prints when ``interpreter`` is too old for it (None when
    it would run it). The shim's own words, naming the interpreter as found."""
    found = version_tuple(interpreter.version)
    if found is None or not found or found >= SHIM_MIN_VERSION:
        return None
    return (
        f"test.sh: the verifier needs Python 3.8 or newer; found only an older one: "
        f"{interpreter.command} (Python {interpreter.version})"
    )
