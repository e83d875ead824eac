"""A run through Session, as the TUI and the headless commands do it: the real
runner in a real child process, staged in the session's scratch folder.

Every outcome, through both drivers (``Session.run`` on asyncio and
``Session.run``); the Harbor verdict; paths shown to the user; a timeout
that leaves nothing behind; bounded output; and the user's workspace left
byte-identical whatever the verifier does to its copy.

No assertion is about how long something took. Waits for a process to vanish
are bounded so a bug fails instead of hanging.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import shutil
import stat
import subprocess
import sys
import time
import weakref
from pathlib import Path

import pytest

from tests.helpers.processes import wait_none_with
from tests.helpers.tasks import HANG_GUARD_S, PY, make_task
from verifier_tui.engine.model import Outcome
from verifier_tui.engine.session import Options, Session

CLI = [sys.executable, "-m", "verifier_tui"]

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes through /proc")


@pytest.fixture(params=["sync", "async", "warm"])
def run(request):
    """run(session, spec=None) -> RunResult, through Session.run or
    Session.arun; "warm": the session keeps the next run started ahead
    (keep_warm), and the result is the second run's, which that held run
    must have been (when both started; an overlaid workspace is never held)."""

    def go(session, spec=None):
        if request.param == "sync":
            return session.run(spec)
        if request.param == "async":
            return asyncio.run(asyncio.wait_for(session.arun(spec), HANG_GUARD_S))
        return asyncio.run(asyncio.wait_for(_warm_run(session, spec), HANG_GUARD_S))

    go.driver = request.param
    return go


async def _warm_run(session: Session, spec=None):
    session.keep_warm()
    first = await session.arun(spec)
    await session.warm.settle()
    held = [waiting.held for waiting in session.warm.waiting.values()]
    second = await session.arun(spec)
    if first.start_error is None and second.start_error is None:
        assert all(h.went for h in held), "the second run was not the one started ahead"
    return second


def session_for(task_dir: Path, **options) -> Session:
    options.setdefault("python", PY)
    return Session(task_dir, Options(**options))


# ---------------------------------------------------------------------------
# Every outcome


def test_number_reward(tmp_path, run):
    task_dir = make_task(tmp_path / "t", "def verify(workspace):\n    return 0.25\n")
    with session_for(task_dir) as session:
        result = run(session)
    assert result.outcome is Outcome.REWARD_WRITTEN
    assert result.exit_code == 0 and result.signal is None and result.exit_status == 0
    assert result.verdict.rewards == {"reward": 0.25}
    assert result.verdict.error is None and result.verdict.source == "reward.txt"
    assert [(f.name, f.text) for f in result.reward_files] == [("reward.txt", "0.25")]
    assert result.to_json()["outcome"] == "reward_written"
    assert result.duration_s > 0


def test_a_result_records_what_it_ran_on_and_keeps_no_task_alive(tmp_path):
    """A result holds the run's inputs (the spec's own, said once: the JSON's
    ``case``, ``workspace``, ``timeout_s``... come from them), never the task:
    each save reloads it, and the TUI's history keeps 200 results."""
    task_dir = make_task(tmp_path / "t", cases={"one": {"hello.txt": "hi"}}, timeout=30)
    with session_for(task_dir, case="one") as session:
        chosen = (session.case.name, session.verifier, session.workspace, 30.0)
        task = weakref.ref(session.task)
        result = session.run()
        session.reload_task()
        gc.collect()
        assert task() is None, "a result kept the task it ran alive"
    ran = result.inputs
    assert (ran.case, ran.verifier, ran.workspace, ran.timeout_s) == chosen
    document = result.to_json()
    assert (document["case"], document["workspace"], document["timeout_s"]) == ("one", str(chosen[2]), 30)


def test_dict_reward(tmp_path, run):
    task_dir = make_task(tmp_path / "t", 'def verify(workspace):\n    return {"reward": 1, "style": 0.5}\n')
    with session_for(task_dir) as session:
        result = run(session)
    assert result.outcome is Outcome.REWARD_WRITTEN
    assert result.verdict.rewards == {"reward": 1, "style": 0.5}
    assert result.verdict.source == "reward.json"
    assert [f.name for f in result.reward_files] == ["reward.json"]
    assert json.loads(result.reward_files[0].text) == {"reward": 1, "style": 0.5}


def test_verifier_raised(tmp_path, run):
    task_dir = make_task(
        tmp_path / "t",
        """\
        def verify(workspace):
            raise ValueError("no hello.txt here")
    """,
    )
    with session_for(task_dir) as session:
        result = run(session)
    assert result.outcome is Outcome.VERIFIER_RAISED
    assert result.exit_code == 1 and result.exit_status == 1
    assert "ValueError: no hello.txt here" in result.stderr.text
    assert result.reward_files == []
    assert result.verdict.rewards is None and result.verdict.error == "RewardFileNotFoundError"


def test_verifier_top_level_raised(tmp_path, run):
    task_dir = make_task(tmp_path / "t", "import nosuchmodule_vtui\n\ndef verify(workspace):\n    return 1.0\n")
    with session_for(task_dir) as session:
        result = run(session)
    assert result.outcome is Outcome.VERIFIER_RAISED
    assert "nosuchmodule_vtui" in result.stderr.text
    assert result.explain is not None and result.explain.import_error.type == "ModuleNotFoundError"


def test_contract_error(tmp_path, run):
    task_dir = make_task(tmp_path / "t", 'def verify(workspace):\n    return "high"\n')
    with session_for(task_dir) as session:
        result = run(session)
    assert result.outcome is Outcome.CONTRACT_ERROR
    assert result.exit_code == 2 and result.exit_status == 2
    assert "'high'" in result.stderr.text
    assert result.reward_files == []
    assert result.verdict.error == "RewardFileNotFoundError"


def test_timed_out(tmp_path, run):
    task_dir = make_task(tmp_path / "t", "import time\n\ndef verify(workspace):\n    time.sleep(120)\n    return 1.0\n")
    with session_for(task_dir, timeout=1) as session:
        result = run(session)
    assert result.outcome is Outcome.TIMED_OUT
    assert result.exit_code is None
    assert result.exit_status == 124
    assert result.outcome_words == "timed out after 1 s"
    # Harbor records a timeout as such, in its own words (harbor/trial/trial.py), not as a missing file
    assert result.verdict.error == "VerifierTimeoutError"
    assert result.verdict.message == "Verifier execution timed out after 1.0 seconds"


HANGS_AFTER_ITS_REWARD = """\
import threading
import time


def verify(workspace):
    # A thread that is not a daemon: the interpreter waits for it at exit, after the runner wrote the reward.
    threading.Thread(target=time.sleep, args=(120,)).start()
    return 1.0
"""


def test_a_reward_written_before_a_hang_is_not_a_score(tmp_path, run):
    """Harbor cancels the verifier at its timeout before it reads the reward folder: the
    reward.txt the runner wrote is listed, but the verdict is VerifierTimeoutError and a case
    expecting that reward fails."""
    task_dir = make_task(tmp_path / "t", HANGS_AFTER_ITS_REWARD, cases={"one": {}})
    (task_dir / "cases" / "one" / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    with session_for(task_dir, timeout=1) as session:
        result = run(session)
    assert result.outcome is Outcome.TIMED_OUT
    assert [(f.name, f.text) for f in result.reward_files] == [("reward.txt", "1.0")]
    assert result.verdict.rewards is None and result.verdict.error == "VerifierTimeoutError"
    assert any("reward.txt was written before the timeout" in w for w in result.verdict.warnings)
    assert result.expected_matched is False


def test_killed_by_a_signal(tmp_path, run):
    task_dir = make_task(tmp_path / "t", "import os\n\ndef verify(workspace):\n    os.kill(os.getpid(), 9)\n")
    with session_for(task_dir) as session:
        result = run(session)
    assert result.outcome is Outcome.KILLED
    assert result.signal == 9
    assert result.exit_code is None
    assert result.exit_status == 128 + 9
    assert "9" in result.outcome_words


def test_could_not_start(tmp_path, run):
    task_dir = make_task(tmp_path / "t", "def verify(workspace):\n    return 1.0\n")
    with session_for(task_dir, python="/nonexistent/python3") as session:
        result = run(session)
    assert result.outcome is Outcome.COULD_NOT_START
    assert result.exit_code is None
    assert "/nonexistent/python3" in result.start_error
    assert "could not start" in result.outcome_words
    assert result.exit_status == 127
    assert result.verdict.error == "RewardFileNotFoundError"


def test_python_on_path_that_is_missing(tmp_path, run):
    task_dir = make_task(tmp_path / "t", "def verify(workspace):\n    return 1.0\n")
    with session_for(task_dir, python="no-such-python-vtui") as session:
        result = run(session)
    assert result.outcome is Outcome.COULD_NOT_START
    assert "no-such-python-vtui" in result.start_error


def test_unexpected_exit_code(tmp_path, run):
    task_dir = make_task(tmp_path / "t", "import os\n\ndef verify(workspace):\n    os._exit(3)\n")
    with session_for(task_dir) as session:
        result = run(session)
    assert result.outcome is Outcome.UNEXPECTED_EXIT
    assert result.exit_code == 3 and result.exit_status == 3
    assert "3" in result.outcome_words


def test_the_default_interpreter_is_python3_on_path(tmp_path):
    task_dir = make_task(
        tmp_path / "t", "import sys\n\ndef verify(workspace):\n    print(sys.version_info[0])\n    return 1.0\n"
    )
    with Session(task_dir) as session:
        assert session.options.python == "python3"
        result = session.run()
    assert result.outcome is Outcome.REWARD_WRITTEN
    assert result.stdout.text == "3\n"


def test_a_virtual_environment_is_its_own_interpreter(tmp_path):
    """A venv's bin/python links to its base interpreter but has its own
    site-packages: asking one must never answer for the other."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    task_dir = make_task(
        tmp_path / "t", "import sys\n\ndef verify(workspace):\n    print(sys.prefix)\n    return 1.0\n"
    )
    base = os.path.realpath(sys.executable)
    seen = {}
    for python in (base, str(venv / "bin" / "python"), base):
        with Session(task_dir, Options(python=python)) as session:
            result = session.run()
        assert result.outcome is Outcome.REWARD_WRITTEN, result.stderr.text
        seen.setdefault(python, set()).add(result.stdout.text.strip())
    assert seen[str(venv / "bin" / "python")] == {str(venv)}
    assert str(venv) not in seen[base]


# ---------------------------------------------------------------------------
# The verdict, exactly as Harbor computes it from the reward folder. The
# verifier writes the reward files itself and leaves with os._exit(0), so the
# runner writes nothing and the folder holds exactly what the row describes.

HARBOR_ROWS = [
    ({"reward.json": '{"reward": 0.5, "n": 2}', "reward.txt": "1.0"}, {"reward": 0.5, "n": 2}, None),
    ({"reward.json": '{"ok": true}'}, {"ok": 1.0}, None),
    ({"reward.json": ""}, None, "RewardFileEmptyError"),
    ({"reward.json": "", "reward.txt": "1.0"}, None, "RewardFileEmptyError"),
    ({"reward.json": "not json"}, None, "VerifierOutputParseError"),
    ({"reward.json": '{"reward": "high"}'}, None, "VerifierOutputParseError"),
    ({"reward.json": '{"reward": NaN}'}, None, "VerifierOutputParseError"),
    ({"reward.json": '{"reward": 1e309}'}, None, "VerifierOutputParseError"),
    ({"reward.json": "[1]"}, None, "VerifierOutputParseError"),
    ({"reward.json": "0.5"}, None, "ValidationError"),
    ({"reward.txt": " 0.75\n"}, {"reward": 0.75}, None),
    ({"reward.txt": ""}, None, "RewardFileEmptyError"),
    ({"reward.txt": "three"}, None, "VerifierOutputParseError"),
    ({"reward.txt": "inf"}, None, "VerifierOutputParseError"),
    ({}, None, "RewardFileNotFoundError"),
]


@pytest.mark.parametrize("files, rewards, error", HARBOR_ROWS)
def test_verdict_as_harbor_computes_it(tmp_path, files, rewards, error):
    task_dir = make_task(
        tmp_path / "t",
        f"""\
        import os, sys

        FILES = {files!r}

        def verify(workspace):
            reward_dir = sys.argv[sys.argv.index("--reward-dir") + 1]
            for name, text in FILES.items():
                with open(os.path.join(reward_dir, name), "w") as handle:
                    handle.write(text)
            os._exit(0)
    """,
    )
    with session_for(task_dir) as session:
        result = session.run()
    assert result.exit_code == 0
    assert result.verdict.rewards == rewards
    assert result.verdict.error == error
    assert sorted(f.name for f in result.reward_files) == sorted(files)
    data = result.to_json()
    assert data["rewards"] == rewards and data["verdict_error"] == error


# ---------------------------------------------------------------------------
# Expected verdicts of cases


def test_expected_matched_on_every_example_case(example):
    for name in ("hello-file", "count-errors", "fizzbuzz-module", "sum-column", "summary-keywords"):
        task_dir = example(name)
        with Session(task_dir, Options(python=PY)) as session:
            for case in session.task.cases:
                result = session.run(session.spec_for_case(case))
                assert result.expected_matched is True, (name, case.name, result.to_json())


def test_expected_not_matched(tmp_path, run):
    task_dir = make_task(tmp_path / "t", "def verify(workspace):\n    return 0.5\n", cases={"only": {"a.txt": "a"}})
    expected = task_dir / "cases" / "only" / "expected.json"
    expected.write_text('{"rewards": {"reward": 1.0}}')
    with session_for(task_dir) as session:
        assert run(session).expected_matched is False
    expected.write_text('{"rewards": {"reward": 0.5}}')
    with session_for(task_dir) as session:
        assert run(session).expected_matched is True
    expected.write_text('{"exit_code": 1}')
    with session_for(task_dir) as session:
        assert run(session).expected_matched is False
    expected.unlink()
    with session_for(task_dir) as session:
        assert run(session).expected_matched is None


def test_rewards_compare_as_numbers_with_the_same_keys(example):
    task_dir = example("fizzbuzz-module")
    expected = task_dir / "cases" / "clean" / "expected.json"
    expected.write_text('{"rewards": {"reward": 1, "tests_passed": 8.0, "style": 1}}')
    with Session(task_dir, Options(python=PY, case="clean")) as session:
        assert session.run().expected_matched is True
    expected.write_text('{"rewards": {"reward": 1.0}}')  # a missing key is a mismatch
    with Session(task_dir, Options(python=PY, case="clean")) as session:
        assert session.run().expected_matched is False


# ---------------------------------------------------------------------------
# What the user sees: their own paths, never the scratch copy


def test_tracebacks_show_the_users_files_not_the_scratch_folder(tmp_path, run):
    task_dir = make_task(
        tmp_path / "t",
        """\
        import os, sys
        import helper

        def verify(workspace, task_data):
            print("cwd", os.getcwd())
            print("workspace", workspace)
            print("argv", sys.argv)
            print("path", sys.path[:3])
            helper.check(workspace)
    """,
        cases={"only": {"hello.txt": "hi"}},
    )
    (task_dir / "tests" / "helper.py").write_text(
        "def check(workspace):\n    (workspace / 'missing.txt').read_text()\n", encoding="utf-8"
    )
    with session_for(task_dir) as session:
        result = run(session)
        scratch = str(session.scratch.root)
    assert result.outcome is Outcome.VERIFIER_RAISED
    user_verifier = str(task_dir / "tests" / "verifier.py")
    user_helper = str(task_dir / "tests" / "helper.py")
    user_workspace = str(task_dir / "cases" / "only" / "workspace")
    assert f'File "{user_verifier}", line 9, in verify' in result.stderr.text
    assert f'File "{user_helper}", line 2, in check' in result.stderr.text
    assert str(Path(user_workspace) / "missing.txt") in result.stderr.text
    assert f"workspace {user_workspace}" in result.stdout.text
    for text in (
        result.stdout.text,
        result.stderr.text,
        json.dumps(result.explain.to_json()),
        json.dumps(result.to_json()),
    ):
        assert scratch not in text
        assert "verifier-tui-" not in text


def test_syntax_error_points_at_the_users_file(tmp_path, run):
    task_dir = make_task(tmp_path / "t", "def verify(workspace):\n    return 1.0 +\n")
    with session_for(task_dir) as session:
        result = run(session)
        scratch = str(session.scratch.root)
    assert result.outcome is Outcome.VERIFIER_RAISED
    assert f'File "{task_dir / "tests" / "verifier.py"}", line 2' in result.stderr.text
    assert "SyntaxError" in result.stderr.text
    assert scratch not in result.stderr.text


def test_explain_data_is_in_the_result(example, run):
    task_dir = example("summary-keywords")
    with Session(task_dir, Options(python=PY)) as session:
        result = run(session)
        scratch = str(session.scratch.root)
    assert result.explain is not None
    explain = result.explain.to_json()
    assert explain["verify"]["signature"] == "verify(workspace, /, task_data, *, threshold=0.5)"
    by_name = {row["name"]: row for row in explain["parameters"]}
    assert by_name["workspace"]["passed"] == "positional"
    assert by_name["task_data"]["passed"] == "keyword"
    assert by_name["threshold"]["binding"] == "default"
    roles = [row["roles"] for row in explain["sys_path"][:2]]
    assert roles[0] == ["vendored helpers"]
    assert "verifier's folder" in roles[1] and "tests folder" in roles[1]
    assert explain["sys_path"][1]["path"] == str(task_dir / "tests")
    assert explain["problems"] == []
    data = result.to_json()
    assert data["sys_path"] == explain["sys_path"]
    assert data["arguments"] == explain["parameters"]
    assert scratch not in json.dumps(explain)


def test_the_path_map_is_consulted_in_the_order_it_is_built(tmp_path, sandbox):
    """Of two entries for one scratch path, the first wins: the files staged
    on their own (the runner, the task data, the response) come before the
    stage's folders, the view's paths for them after, the scratch folder last."""
    from verifier_tui.runner_source import runner_path

    task_dir = make_task(tmp_path / "t", cases={"only": {"hello.txt": "hi"}})
    response, data = tmp_path / "response.json", tmp_path / "data.json"
    response.write_text("{}", encoding="utf-8")
    data.write_text("{}", encoding="utf-8")
    with session_for(task_dir, response=response, task_data=data) as session:
        prepared = session.prepare()
    tests = task_dir / "tests"
    ours = [str(runner_path()), str(data), str(response), str(tests / ".ng"), str(tests)]
    ours += [str(task_dir / "cases" / "only" / "workspace"), "<reward folder>"]
    seen_in_the_view = [*ours, str(data)] if sandbox == "namespace" else []  # /tests/data.json: the shim's place
    assert [user for _path, user in prepared.path_map] == [*ours, *seen_in_the_view, "<scratch>"]
    assert prepared.path_map[0][0] == str(prepared.stage.ng_dir / "run_verifier.py")
    assert prepared.path_map[-1][0] == str(prepared.stage.root)


def test_explain_without_running(example):
    task_dir = example("count-errors")
    with Session(task_dir, Options(python=PY, case="harbor-mode")) as session:
        data = session.explain().to_json()
        scratch = str(session.scratch.root)
    assert data["would_call_verify"] is False
    assert any("response" in p for p in data["problems"])
    assert scratch not in json.dumps(data)


# ---------------------------------------------------------------------------
# Nothing left behind, output bounded


def test_timeout_ends_grandchildren_too(tmp_path, run):
    token = f"vtui-grandchild-{os.getpid()}-{id(tmp_path)}"
    task_dir = make_task(
        tmp_path / "t",
        f"""\
        import os, subprocess, sys, time

        def verify(workspace):
            sleeper = [sys.executable, "-c", "import time; time.sleep(300)", {token!r}]
            subprocess.Popen([sys.executable, "-c", "import subprocess, sys, time; "
                              "subprocess.Popen(sys.argv[1:]); time.sleep(300)"] + sleeper)
            subprocess.Popen(sleeper, start_new_session=False)
            print("started", flush=True)
            time.sleep(300)
    """,
    )
    with session_for(task_dir, timeout=1) as session:
        result = run(session)
    assert result.outcome is Outcome.TIMED_OUT
    assert result.stdout.text == "started\n"  # the verifier got as far as starting them
    assert wait_none_with(token) == [], "a process of the run survived it"


def test_leftover_processes_are_ended_when_the_verifier_returns(tmp_path, run):
    token = f"vtui-leftover-{os.getpid()}-{id(tmp_path)}"
    task_dir = make_task(
        tmp_path / "t",
        f"""\
        import subprocess, sys

        def verify(workspace):
            subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", {token!r}])
            return 1.0
    """,
    )
    with session_for(task_dir) as session:
        result = run(session)
    assert result.outcome is Outcome.REWARD_WRITTEN
    assert wait_none_with(token) == []
    assert any(token in command for command in result.strays)


def test_output_over_the_cap_is_bounded(tmp_path, run):
    task_dir = make_task(
        tmp_path / "t",
        """\
        import sys

        def verify(workspace):
            sys.stdout.write("BEGIN\\n" + "x" * (5 * 1024 * 1024) + "\\nEND\\n")
            sys.stderr.write("e" * (3 * 1024 * 1024) + "\\nLAST\\n")
            return 1.0
    """,
    )
    with session_for(task_dir) as session:
        result = run(session)
    assert result.outcome is Outcome.REWARD_WRITTEN
    assert result.verdict.rewards == {"reward": 1.0}
    out, err = result.stdout, result.stderr
    assert out.total_bytes == len("BEGIN\n") + 5 * 1024 * 1024 + len("\nEND\n")
    assert out.dropped_bytes > 4 * 1024 * 1024
    assert len(out.head) + len(out.tail) + out.dropped_bytes == out.total_bytes
    assert len(out.text) < 1024 * 1024
    assert out.text.startswith("BEGIN\n") and out.text.endswith("\nEND\n")
    assert f"{out.dropped_bytes:,} bytes of output dropped" in out.text
    assert err.dropped_bytes > 0 and err.text.endswith("LAST\n")
    data = result.to_json()
    assert data["stdout_dropped_bytes"] == out.dropped_bytes
    assert data["stderr_dropped_bytes"] == err.dropped_bytes


def test_output_that_is_not_utf8(tmp_path, run):
    task_dir = make_task(
        tmp_path / "t",
        """\
        import sys

        def verify(workspace):
            sys.stdout.buffer.write(b"ok \\xff\\xfe caf\\xc3\\xa9\\n")
            return 1.0
    """,
    )
    with session_for(task_dir) as session:
        result = run(session)
    assert result.stdout.text == "ok \ufffd\ufffd café\n"


# ---------------------------------------------------------------------------
# The user's workspace is never touched


def snapshot(root: Path) -> dict[str, tuple]:
    """Every entry under ``root`` (and ``root``'s own permission bits): kind,
    permission bits, and bytes or link target."""
    out: dict[str, tuple] = {".": ("dir", stat.S_IMODE(os.lstat(root).st_mode))}
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in dirs + files:
            path = Path(folder) / name
            rel = path.relative_to(root).as_posix()
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", stat.S_IMODE(st.st_mode))
            else:
                out[rel] = ("file", stat.S_IMODE(st.st_mode), path.read_bytes())
    out["."] = ("dir", stat.S_IMODE(os.lstat(root).st_mode))
    return out


VANDAL = """\
    import os, shutil, stat, sys
    from pathlib import Path

    OUTSIDE = {outside!r}
    VICTIM = {victim!r}

    def listing(workspace):
        out = []
        for folder, dirs, files in os.walk(workspace):
            for name in sorted(dirs + files):
                path = Path(folder) / name
                rel = path.relative_to(workspace).as_posix()
                if path.is_symlink():
                    out.append((rel, "->", os.readlink(path)))
                elif path.is_file():
                    out.append((rel, path.read_text(errors="replace")))
                else:
                    out.append((rel, "dir"))
        return sorted(out)

    def verify(workspace):
        print(repr(listing(workspace)))
        sys.stdout.flush()
        # write through every link the workspace holds, including the one
        # that points outside it
        for path in list(workspace.rglob("*")):
            if path.is_symlink():
                try:
                    with open(path, "w") as handle:
                        handle.write("written through a link")
                except OSError:
                    pass
        # chmod everything, then delete every file and folder it can reach
        for path in sorted(workspace.rglob("*"), reverse=True):
            try:
                os.chmod(path, 0o777 if path.is_dir() else 0o600, follow_symlinks=False)
            except (OSError, NotImplementedError):
                pass
        for path in sorted(workspace.rglob("*"), reverse=True):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        # write new files, replace a file by a link to the outside
        (workspace / "new.txt").write_text("planted")
        (workspace / "sub").mkdir()
        (workspace / "sub" / "deep.txt").write_text("planted deep")
        os.chmod(workspace / "sub", 0o500)
        os.symlink(OUTSIDE, workspace / "hello.txt")
        os.chmod(workspace, 0o500)
        # last, the workspace folder itself becomes a link to another folder
        os.chmod(workspace, 0o700)
        moved = workspace.with_name("app-moved")
        try:
            os.rename(workspace, moved)  # with namespaces the workspace is a mount point: EBUSY
            os.symlink(VICTIM, workspace)
        except OSError:
            pass
        return 1.0
"""


def build_precious_workspace(tmp_path: Path) -> tuple[Path, Path, Path]:
    outside = tmp_path / "outside.txt"
    outside.write_text("the user's other file\n")
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("keep me\n")
    task_dir = make_task(
        tmp_path / "t",
        VANDAL.format(outside=str(outside), victim=str(victim)),
        cases={
            "only": {
                "hello.txt": "hello world\n",
                "data/numbers.csv": "a,b\n1,2\n",
                "data/nested/deep.txt": "deep\n",
                "empty/.keep": "",
            }
        },
    )
    ws = task_dir / "cases" / "only" / "workspace"
    os.chmod(ws / "data" / "numbers.csv", 0o640)
    os.chmod(ws / "hello.txt", 0o444)
    (ws / "bin.dat").write_bytes(bytes(range(256)) * 64)
    os.symlink("hello.txt", ws / "inside-link.txt")
    os.symlink("data", ws / "data-link")
    os.symlink(str(outside), ws / "outside-link.txt")
    os.symlink(str(victim), ws / "victim-link")
    os.symlink("nowhere", ws / "dangling")
    return ws, outside, victim


def test_the_users_workspace_stays_byte_identical(tmp_path, run, sandbox):
    ws, outside, victim = build_precious_workspace(tmp_path)
    before_ws, before_outside, before_victim = snapshot(ws), outside.read_bytes(), snapshot(victim)
    task_dir = tmp_path / "t"
    with session_for(task_dir) as session:
        first = run(session)
        assert first.outcome is Outcome.REWARD_WRITTEN, first.stderr.text
        assert snapshot(ws) == before_ws
        assert outside.read_bytes() == before_outside
        assert snapshot(victim) == before_victim
        # A re-run repairs the mirror: the verifier sees the original files again.
        second = run(session)
        assert second.outcome is Outcome.REWARD_WRITTEN, second.stderr.text
        assert second.stdout.text.splitlines()[0] == first.stdout.text.splitlines()[0]
        third = run(session)
        assert third.stdout.text.splitlines()[0] == first.stdout.text.splitlines()[0]
    assert snapshot(ws) == before_ws
    assert outside.read_bytes() == before_outside
    assert snapshot(victim) == before_victim
    seen = eval(first.stdout.text.splitlines()[0])  # the verifier's own view of its workspace
    assert ("hello.txt", "hello world\n") in seen
    assert ("data/nested/deep.txt", "deep\n") in seen
    # A small workspace is a copy in both sandboxes, and no link of it is read through.
    if sandbox == "namespace":  # kept as they are, as a container's /app holds them: the view has nothing they reach
        assert ("outside-link.txt", "->", str(outside)) in seen
        assert ("victim-link", "->", str(victim)) in seen
    else:  # the copy sandbox would reach the user's files through them: left out
        assert not any(rel in ("outside-link.txt", "victim-link") for rel, *_ in seen)
    assert first.sandbox == sandbox


def test_odd_workspace_entries_are_skipped_with_a_note(tmp_path, run, sandbox):
    task_dir = make_task(
        tmp_path / "t",
        """\
        import os

        def verify(workspace):
            print(sorted(os.listdir(workspace)), os.path.getsize(workspace / "sparse.bin"))
            return 1.0
    """,
        cases={"only": {"a.txt": "a"}},
    )
    ws = task_dir / "cases" / "only" / "workspace"
    os.mkfifo(ws / "pipe")  # copying it must not hang on open()
    os.symlink("loop-b", ws / "loop-a")
    os.symlink("loop-a", ws / "loop-b")
    with open(ws / "sparse.bin", "wb") as handle:  # 4 GiB of holes: copying must not read them all
        handle.truncate(4 * 1024**3)
    with session_for(task_dir) as session:
        result = run(session)
        scratch = session.scratch.root
        used = sum(
            os.lstat(os.path.join(folder, name)).st_blocks * 512
            for folder, _dirs, files in os.walk(scratch)
            for name in files
        )
    assert result.outcome is Outcome.REWARD_WRITTEN, result.stderr.text
    assert used < 64 * 1024**2  # the holes stayed holes
    if sandbox == "namespace":  # nothing is copied: the workspace is shown as it is
        assert result.stdout.text == f"['a.txt', 'loop-a', 'loop-b', 'pipe', 'sparse.bin'] {4 * 1024**3}\n"
        return
    assert result.stdout.text == f"['a.txt', 'sparse.bin'] {4 * 1024**3}\n"
    notes = " ".join(result.notices)
    assert "skipped pipe: it is a FIFO" in notes
    assert "skipped loop-a" in notes and "skipped loop-b" in notes


def test_reruns_copy_only_what_changed(tmp_path, monkeypatch):
    """1,000 files are copied once; later runs copy what the user or the
    verifier changed, nothing else (the copy sandbox: with namespaces
    nothing is copied at all)."""
    monkeypatch.setenv("VERIFIER_TUI_SANDBOX", "copy")
    task_dir = make_task(
        tmp_path / "t",
        """\
        def verify(workspace):
            (workspace / "d3" / "f7.txt").write_text("the verifier wrote here")
            return 1.0
    """,
        cases={"only": {}},
    )
    ws = task_dir / "cases" / "only" / "workspace"
    for folder in range(20):
        (ws / f"d{folder}").mkdir()
        for index in range(50):
            (ws / f"d{folder}" / f"f{index}.txt").write_text(f"{folder}/{index}")
    with session_for(task_dir) as session:
        spec = session.spec()
        first = session.run(spec)
        stage = session.stage_for(spec)
        assert stage.workspace.files_copied == 1_000
        session.run(spec)
        assert stage.workspace.files_copied == 1  # only the file the verifier wrote, repaired
        (ws / "d15" / "f25.txt").write_text("changed by the user")
        (ws / "new.txt").write_text("new")
        session.run(spec)
        assert stage.workspace.files_copied == 3
        assert (stage.app_dir / "d15" / "f25.txt").read_text() == "changed by the user"
    assert first.outcome is Outcome.REWARD_WRITTEN
    assert (ws / "d3" / "f7.txt").read_text() == "3/7"


def test_a_rerun_sees_changes_to_the_users_workspace(tmp_path, run):
    task_dir = make_task(
        tmp_path / "t",
        """\
        def verify(workspace):
            print(sorted(p.name for p in workspace.iterdir()))
            return float((workspace / "score.txt").read_text())
    """,
        cases={"only": {"score.txt": "0.25", "gone.txt": "x"}},
    )
    ws = task_dir / "cases" / "only" / "workspace"
    with session_for(task_dir) as session:
        assert run(session).verdict.rewards == {"reward": 0.25}
        (ws / "score.txt").write_text("0.75")
        (ws / "gone.txt").unlink()
        (ws / "added.txt").write_text("new")
        result = run(session)
    assert result.verdict.rewards == {"reward": 0.75}
    assert result.stdout.text == "['added.txt', 'score.txt']\n"


def test_the_tests_folder_is_repaired_too(tmp_path, run, sandbox):
    """/tests is writable in Harbor's container (harbor-trials.md), so a
    verifier may rewrite its staged copy in either sandbox; the next run puts
    it right, and the user's own file never changes."""
    task_dir = make_task(
        tmp_path / "t",
        """\
        from pathlib import Path

        def verify(workspace):
            here = Path(__file__)
            text = here.read_text()
            here.write_text(text.replace("return 1.0", "return 0.0"))
            return 1.0
    """,
    )
    before = (task_dir / "tests" / "verifier.py").read_bytes()
    with session_for(task_dir) as session:
        first, second = run(session), run(session)
    assert first.verdict.rewards == second.verdict.rewards == {"reward": 1.0}, first.stderr.text
    assert (task_dir / "tests" / "verifier.py").read_bytes() == before


def test_empty_scratch_workspace_without_a_case(tmp_path, run):
    task_dir = make_task(
        tmp_path / "t",
        """\
        def verify(workspace):
            names = sorted(p.name for p in workspace.iterdir())
            (workspace / "left-behind.txt").write_text("x")
            return float(len(names))
    """,
    )
    with session_for(task_dir) as session:
        first = run(session)
        second = run(session)
    assert first.verdict.rewards == {"reward": 0.0}
    assert second.verdict.rewards == {"reward": 0.0}
    assert any("empty scratch workspace" in n for n in first.notices)
    assert first.inputs.workspace is None and first.to_json()["workspace"] is None


def test_runs_at_the_same_time_each_get_their_own_layout(tmp_path):
    task_dir = make_task(
        tmp_path / "t",
        """\
        import time

        def verify(workspace, response):
            text = response["output"][0]["content"][0]["text"]
            (workspace / "mine.txt").write_text(text)
            time.sleep(0.2)
            return float((workspace / "mine.txt").read_text())
    """,
    )
    answers = []
    for index in range(1, 6):
        answer = tmp_path / f"answer-{index}.txt"
        answer.write_text(f"0.{index}")
        answers.append(answer)

    async def all_at_once():
        with session_for(task_dir) as session:
            specs = []
            for answer in answers:
                session.choose_response(answer)
                specs.append(session.spec())
            return await asyncio.wait_for(asyncio.gather(*(session.arun(s) for s in specs)), 120)

    results = asyncio.run(all_at_once())
    assert [r.verdict.rewards for r in results] == [{"reward": i / 10} for i in range(1, 6)]


# ---------------------------------------------------------------------------
# Response, task data, environment


def test_text_response_is_wrapped_as_a_responses_api_object(tmp_path, run):
    task_dir = make_task(
        tmp_path / "t",
        """\
        def verify(workspace, response):
            assert response["object"] == "response"
            message = response["output"][0]
            assert message["type"] == "message" and message["role"] == "assistant"
            text = message["content"][0]["text"]
            print(repr(text))
            return 1.0 if text == "forty-two\\n" else 0.0
    """,
    )
    answer = tmp_path / "answer.txt"
    answer.write_text("forty-two\n")
    with session_for(task_dir, response=answer) as session:
        assert session.mode == "server"
        result = run(session)
    assert result.verdict.rewards == {"reward": 1.0}, result.stderr.text
    assert result.mode == "server"
    assert result.to_json()["response"] == str(answer)


def test_json_response_is_passed_as_it_is(example, run):
    task_dir = example("count-errors")
    with Session(task_dir, Options(python=PY, case="response-json")) as session:
        result = run(session)
    assert result.verdict.rewards == {"reward": 1.0}
    assert result.mode == "server"


def test_text_response_case(example, run):
    task_dir = example("count-errors")
    with Session(task_dir, Options(python=PY, case="response-txt")) as session:
        result = run(session)
    assert result.verdict.rewards == {"reward": 0.0}
    assert result.expected_matched is True


def test_no_response_is_harbor_mode_even_when_the_case_has_one(example, run):
    task_dir = example("count-errors")
    with Session(task_dir, Options(python=PY, case="response-json", no_response=True)) as session:
        assert session.mode == "harbor"
        result = run(session)
    assert result.outcome is Outcome.CONTRACT_ERROR
    assert result.mode == "harbor" and result.inputs.response is None
    assert "response" in result.stderr.text
    assert any("response" in p for p in result.explain.problems)


def test_task_data_option(example, run, tmp_path):
    task_dir = example("sum-column")
    other = tmp_path / "other-task-data.json"
    other.write_text('{"column": "quantity", "tolerance": 0.01}')
    with Session(task_dir, Options(python=PY, case="correct", task_data=other)) as session:
        result = run(session)
    assert result.verdict.rewards == {"reward": 0.0}  # total.txt is the sum of amount, not quantity
    assert result.inputs.task_data == other


def test_task_toml_env_reaches_the_verifier(example, run):
    task_dir = example("hello-file")
    with Session(task_dir, Options(python=PY, case="wrong-case")) as session:
        assert run(session).verdict.rewards == {"reward": 0.0}  # STRICT=1 from task.toml
    toml = task_dir / "task.toml"
    toml.write_text(toml.read_text().replace('env = { STRICT = "1" }', 'env = { STRICT = "0" }'))
    with Session(task_dir, Options(python=PY, case="wrong-case")) as session:
        assert run(session).verdict.rewards == {"reward": 1.0}


def test_environment_is_built_on_purpose(tmp_path, run, monkeypatch):
    sneaky = tmp_path / "sneaky"
    sneaky.mkdir()
    (sneaky / "sneaky_vtui.py").write_text("VALUE = 1\n")
    monkeypatch.setenv("PYTHONPATH", str(sneaky))
    monkeypatch.setenv("PYTHONSTARTUP", str(sneaky / "sneaky_vtui.py"))
    monkeypatch.setenv("TEXTUAL_DRIVER", "nope")
    monkeypatch.setenv("VTUI_KEPT", "kept")
    task_dir = make_task(
        tmp_path / "t",
        """\
        import json, os, sys

        def verify(workspace):
            try:
                import sneaky_vtui
                imported = True
            except ImportError:
                imported = False
            print(json.dumps({
                "imported": imported,
                "env": {k: os.environ.get(k) for k in ("PYTHONPATH", "PYTHONSTARTUP", "TEXTUAL_DRIVER",
                        "VTUI_KEPT", "TASK_VAR", "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING")},
                "dont_write_bytecode": sys.dont_write_bytecode,
            }))
            return 1.0
    """,
        toml='[verifier]\nenv = { TASK_VAR = "from task.toml" }\n',
    )
    with session_for(task_dir) as session:
        result = run(session)
    seen = json.loads(result.stdout.text)
    assert seen["imported"] is False
    assert seen["env"] == {
        # VTUI_KEPT: the shell's own variables stay there (Harbor's sandbox has none of them).
        "PYTHONPATH": None,
        "PYTHONSTARTUP": None,
        "TEXTUAL_DRIVER": None,
        "VTUI_KEPT": None,
        "TASK_VAR": "from task.toml",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONIOENCODING": "utf-8",
    }
    assert seen["dont_write_bytecode"] is True
    assert not list((task_dir / "tests").rglob("__pycache__"))


# ---------------------------------------------------------------------------
# Scratch


def test_close_removes_the_scratch_folder(tmp_path, run):
    task_dir = make_task(
        tmp_path / "t",
        """\
        import os

        def verify(workspace):
            (workspace / "locked").mkdir()
            (workspace / "locked" / "f.txt").write_text("x")
            os.chmod(workspace / "locked", 0)
            return 1.0
    """,
    )
    session = session_for(task_dir)
    run(session)
    root = session.scratch.root
    assert root is not None and root.is_dir()
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    session.close()
    assert not root.exists()
    assert session.scratch is None


LOCKING_VERIFIER = """\
    import os

    def verify(workspace):
        (workspace / "locked").mkdir()
        (workspace / "locked" / "f.txt").write_text("x")
        os.chmod(workspace / "locked", 0)
        return 1.0
"""


def big_workspace_session(tmp_path, monkeypatch) -> tuple[Session, Path]:
    """A copy-staged session on a workspace bigger than what is removed
    before close returns (600 files, that bound lowered to 500 from 5,000:
    the files cost seconds to write), whose verifier leaves an unreadable
    folder in the copy, run once."""
    from verifier_tui.engine.sandbox import stage
    from verifier_tui.engine.sandbox.isolation import VARIABLE

    monkeypatch.setenv(VARIABLE, "copy")
    monkeypatch.setattr(stage, "_REMOVE_DETACHED_AFTER", 500)
    task_dir = make_task(tmp_path / "t", LOCKING_VERIFIER)
    workspace = tmp_path / "big"
    for folder in range(6):
        (workspace / f"d{folder}").mkdir(parents=True)
        for number in range(100):
            (workspace / f"d{folder}" / f"f{number}.txt").write_text("x")
    session = session_for(task_dir, workspace=workspace)
    assert session.run().verdict.rewards == {"reward": 1.0}
    return session, session.scratch.root


def test_a_big_copy_is_removed_after_close_returns(tmp_path, monkeypatch):
    session, root = big_workspace_session(tmp_path, monkeypatch)
    session.close()
    assert session.scratch is None
    deadline = time.monotonic() + HANG_GUARD_S
    while root.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not root.exists()
    assert len(list((tmp_path / "big").rglob("*.txt"))) == 600


def test_a_big_copy_is_removed_before_close_returns_when_no_remover_can_start(tmp_path, monkeypatch):
    session, root = big_workspace_session(tmp_path, monkeypatch)
    monkeypatch.setenv("PATH", str(tmp_path / "no-programs-here"))
    session.close()
    assert not root.exists()


def test_no_scratch_left_after_the_command_line_exits(tmp_path):
    tmpdir = tmp_path / "private-tmp"
    tmpdir.mkdir()
    task_dir = make_task(
        tmp_path / "t",
        """\
        import os

        def verify(workspace):
            (workspace / "locked").mkdir()
            os.chmod(workspace / "locked", 0)
            raise RuntimeError("and then it crashed")
    """,
        cases={"only": {"a.txt": "a"}},
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update(TMPDIR=str(tmpdir), XDG_CACHE_HOME=str(tmp_path / "xdg"))
    for command in (
        ["run", str(task_dir), "--python", PY],
        ["explain", str(task_dir), "--python", PY],
        ["test", str(task_dir), "--python", PY],
        ["run", str(task_dir), "--python", "/nonexistent"],
    ):
        done = subprocess.run(CLI + command, env=env, capture_output=True, text=True, timeout=120)
        assert "Traceback" not in done.stderr or "RuntimeError" in done.stderr, done.stderr
        assert sorted(p.name for p in tmpdir.iterdir() if p.name.startswith("verifier-tui-")) == [], command


# ---------------------------------------------------------------------------
# Inputs that vanish between runs (an editor, git or a build removed them)


def test_a_workspace_deleted_after_it_was_chosen_means_the_run_cannot_start(run, example):
    task_dir = example("hello-file")
    session = session_for(task_dir)
    with session:
        first = run(session)
        assert first.verdict.rewards == {"reward": 1.0}
        shutil.rmtree(task_dir / "cases" / "correct" / "workspace")
        again = run(session)
    assert again.outcome is Outcome.COULD_NOT_START
    assert "is not there any more" in again.start_error
    assert str(task_dir / "cases" / "correct" / "workspace") in again.start_error
    # The first run's reward must not be read as this one's verdict.
    assert again.verdict.rewards is None and again.reward_files == []
    # Nothing ran: no verifier "wrote neither" file (watch --json said so).
    assert again.verdict.message.startswith("No reward file: the run could not start, so nothing wrote")


def chosen_answer(example, tmp_path, name: str) -> tuple[Path, Session]:
    """count-errors with ``name`` (answer.txt or answer.json, scoring 1.0)
    chosen as the response of its case response-txt: the file and the session."""
    task_dir = example("count-errors")
    answer = tmp_path / name
    json_response = task_dir / "cases" / "response-json" / "response.json"
    answer.write_text(json_response.read_text() if name.endswith(".json") else "3\n")
    return answer, session_for(task_dir, case="response-txt", response=answer)


@pytest.mark.parametrize("name", ["answer.txt", "answer.json"])
def test_a_response_deleted_after_it_was_chosen_means_the_run_cannot_start(run, example, tmp_path, name):
    """A response file chosen, then deleted: the run was handed the missing
    path and the runner's contract error (exit 2) was the verdict, where a
    deleted workspace is a run that could not start, saying why."""
    answer, session = chosen_answer(example, tmp_path, name)
    with session:
        assert run(session).verdict.rewards == {"reward": 1.0}
        answer.unlink()
        result = run(session)
    assert result.outcome is Outcome.COULD_NOT_START, result.stderr.text
    assert result.start_error == f"the response {answer} is not there any more (deleted or moved?)"
    assert result.verdict.rewards is None and result.reward_files == []


@pytest.mark.parametrize("name", ["answer.txt", "answer.json"])
def test_a_response_that_became_a_link_to_nothing_is_said_alike_by_the_run_and_by_p(run, example, tmp_path, name):
    """A chosen response file replaced by a link to nothing: the run said
    "answer.txt is a link to nothing: the run cannot read it", p "response
    ... is not a file", the editor "is not there any more (deleted or
    moved?)" (the link is there): three wordings of one fault. The run and p
    now say the same words, and a folder chosen with p says the run cannot read it."""
    from verifier_tui.engine.session import SelectionError

    answer, session = chosen_answer(example, tmp_path, name)
    with session:
        assert run(session).verdict.rewards == {"reward": 1.0}
        answer.unlink()
        answer.symlink_to(tmp_path / "nowhere")
        result = run(session)
        said = f"the response {name} is a link to nothing: the run cannot read it"
        assert result.outcome is Outcome.COULD_NOT_START and result.start_error == said, result.start_error
        with pytest.raises(SelectionError) as chosen:
            session.choose_response(answer)
        assert str(chosen.value) == said
        with pytest.raises(SelectionError) as folder:
            session.choose_response(tmp_path)
        assert (
            str(folder.value) == f"the response {tmp_path.name} is a folder, not a regular file: the run cannot read it"
        )


def test_live_output_shows_the_users_paths_not_the_scratch_copy(example):
    task_dir = example("hello-file")
    chunks = []
    session = session_for(task_dir, case="missing-file")
    with session:
        result = asyncio.run(
            asyncio.wait_for(
                session.arun(on_output=lambda stream, text, user_paths: chunks.append(user_paths(text))), 120
            )
        )
        scratch = str(session.scratch.root)
    live = "".join(chunks)
    assert "FileNotFoundError" in live
    assert str(task_dir / "tests" / "verifier.py") in live
    assert scratch not in live
    assert result.outcome is Outcome.VERIFIER_RAISED


def test_a_verifier_opened_outside_tests_keeps_its_folder_as_tests_after_a_reload(tmp_path):
    """A change to task.toml re-reads the task; it was re-read from the task
    folder, which stages tests/ as /tests instead of the verifier's own
    folder: ``import helper`` beside it stopped working mid-session."""
    root = make_task(tmp_path / "tasks" / "elsewhere")
    (root / "checks").mkdir()
    (root / "checks" / "check.py").write_text("import helper\n\ndef verify(workspace):\n    return helper.VALUE\n")
    (root / "checks" / "helper.py").write_text("VALUE = 0.25\n")
    with Session(root / "checks" / "check.py") as session:
        assert session.run().verdict.rewards == {"reward": 0.25}
        session.reload_task()
        again = session.run()
        assert again.verdict.rewards == {"reward": 0.25}, again.stderr.text
        assert session.task.tests_dir == root / "checks"


def test_a_reload_that_finds_several_verifiers_takes_the_one_test_sh_runs(tmp_path):
    """A task opened with no verifier yet, its test.sh the shim that runs /tests/grader.py; then
    tests/verifier.py and tests/grader.py are saved, both defining verify. Read again, the session took
    the first found (verifier.py), where the session's opening and Harbor run the file test.sh names."""
    root = make_task(tmp_path / "t", None)
    test_sh = root / "tests" / "test.sh"
    test_sh.write_text(test_sh.read_text().replace("--verifier /tests/verifier.py", "--verifier /tests/grader.py"))
    with Session(root, Options(python=PY)) as session:
        assert session.verifier is None
        for name, reward in (("verifier.py", 0.25), ("grader.py", 0.75)):
            (root / "tests" / name).write_text(f"def verify(workspace):\n    return {reward}\n")
        session.reload_task()
        assert session.verifier == root / "tests" / "grader.py"
        assert session.run().verdict.rewards == {"reward": 0.75}


def test_a_case_workspace_that_stops_being_a_folder_is_followed_by_the_session(tmp_path):
    """A FIFO put where the chosen case's workspace was: the session kept the
    old path, so a run said the workspace 'is not there any more' while the
    case (read again) said it runs on an empty one, and its expected.json was
    both 'not applied' and failed."""
    root = make_task(tmp_path / "t", cases={"c": {"a.txt": "x"}})
    (root / "cases" / "c" / "expected.json").write_text(json.dumps({"rewards": {"reward": 1.0}}))
    with Session(root, Options(python=PY)) as session:
        session.select_case_named("c")
        workspace = root / "cases" / "c" / "workspace"
        shutil.rmtree(workspace)
        os.mkfifo(workspace)
        session.reload_task()
        assert session.workspace is None and session.expectation_note() is None
        assert any("not a folder" in notice for notice in session.notices())
        result = session.run()
        assert result.outcome is not Outcome.COULD_NOT_START and result.inputs.expected is not None


def test_a_case_folder_that_comes_back_is_chosen_again_with_its_inputs(tmp_path):
    root = make_task(tmp_path / "t", cases={"c": {"a.txt": "x"}})
    with Session(root, Options(python=PY)) as session:
        session.select_case_named("c")
        away = tmp_path / "away"
        (root / "cases").rename(away)
        session.reload_task()
        assert session.case is None
        away.rename(root / "cases")
        session.reload_task()
        assert session.case is not None and session.case.name == "c"
        assert session.workspace == root / "cases" / "c" / "workspace"


def test_a_workspace_the_user_chose_stays_when_the_case_is_read_again(tmp_path):
    root = make_task(tmp_path / "t", cases={"c": {"a.txt": "x"}})
    mine = tmp_path / "mine"
    mine.mkdir()
    with Session(root, Options(python=PY)) as session:
        session.select_case_named("c")
        session.choose_workspace(mine)
        session.reload_task()
        assert session.workspace == mine


FOLLOW_A_RENAMED_CASE = """
import os, sys
from pathlib import Path
from verifier_tui.engine.session import Session
root = Path(sys.argv[1])
with Session(root) as session:
    session.select_case_named("correct")
    os.rename(root / "cases" / "correct", root / "cases" / "right")
    os.chmod(root / "cases" / "right", 0o311)  # searchable, not readable: the folder cannot be opened
    session.reload_task()
    print(session.case.name if session.case is not None else None)
"""


def test_a_case_renamed_and_made_unreadable_is_still_followed(ordinary_user):
    """``mv cases/correct cases/right; chmod 311 cases/right`` between two
    saves, as an ordinary user: the folder, not to be opened, was known by its
    mtime, never equal to the inode generation it was known by before, so the
    chosen case was dropped as gone (the TUI's list lost it)."""
    root = make_task(ordinary_user.root / "t", cases={"correct": {"a.txt": "x"}})
    done = ordinary_user.run_python(FOLLOW_A_RENAMED_CASE, root)
    assert (done.returncode, done.stdout) == (0, "right\n"), done.stderr


TAKE_A_FOLDER_ON_ITS_INODE = """
import os, shutil, sys, time
from pathlib import Path
from verifier_tui.engine.session import Session
root = Path(sys.argv[1])
gone, made = root / "cases" / "a", root / "cases" / "b"
with Session(root) as session:
    session.select_case_named("a")
    inode = gone.stat().st_ino
    shutil.rmtree(gone)
    for _ in range(50):  # as remove_and_make_on_its_inode (tests/helpers/tasks.py), as this user
        made.mkdir()
        if made.stat().st_ino == inode:
            break
        made.rmdir()
        time.sleep(0.01)
    else:
        sys.exit("no reuse")
    os.chmod(made, 0o311)  # searchable, not readable: the folder cannot be opened for its generation
    session.reload_task()
    print(session.case.name if session.case is not None else None)
"""


def test_a_case_removed_and_an_unreadable_one_made_on_its_inode_is_not_taken_for_it(ordinary_user):
    """``rm -rf cases/a; mkdir cases/b; chmod 311 cases/b`` with ``a`` chosen:
    ``b``, on the inode ``a`` freed (ext4), could not be opened for its
    generation, and was then matched on device and inode alone: the chosen
    case became ``b``, another case."""
    root = make_task(ordinary_user.root / "t", cases={"a": {"x.txt": "x"}})
    done = ordinary_user.run_python(TAKE_A_FOLDER_ON_ITS_INODE, root)
    if "no reuse" in done.stderr:
        pytest.skip("this file system did not give the new folder the inode the removed one freed")
    assert (done.returncode, done.stdout) == (0, "None\n"), done.stderr


def test_a_verifier_picked_by_its_path_follows_the_task_folder_renamed_not_a_file_made_at_the_old_name(tmp_path):
    """The user's words for a pick (the TUI's v, an absolute --verifier) were read again after each reload:
    after `mv t t2`, a file later made at the old path (a checkout of the old name) took the pick, and the
    session ran that other folder's verifier with the renamed task's tests."""
    other = "def verify(workspace):\n    return {placeholder}\n"
    root = make_task(tmp_path / "t", files={"other.py": other.format(placeholder="0.5")})
    with Session(root, Options()) as session:
        session.choose_verifier((root / "tests" / "other.py").absolute())
        os.rename(root, tmp_path / "t2")
        session.reload_task()
        (root / "tests").mkdir(parents=True)
        (root / "tests" / "other.py").write_text(other.format(placeholder="0.0"))
        session.reload_task()
        assert session.verifier == tmp_path / "t2" / "tests" / "other.py"
        assert session.run().verdict.rewards == {"reward": 0.5}


# ---------------------------------------------------------------------------
# What watch watches for whether Harbor loads the task


def _watched(task_dir: Path) -> set[Path]:
    with session_for(task_dir) as session:
        return {target.path for target in session.watch_targets()}


def test_the_task_s_folders_its_links_lead_to_are_watched_never_one_outside(tmp_path):
    """tests/shared → ../common and tests/deep → ../common/deep: common/ is watched once (Harbor
    checks the links in it); solution/home → a folder outside (the user's home, say) is refused,
    never walked, never watched, nor is the task's own folder that tests/up → .. reaches."""
    task = make_task(tmp_path / "t")
    (task / "common" / "deep").mkdir(parents=True)
    (tmp_path / "home").mkdir()
    (task / "tests" / "shared").symlink_to("../common")
    (task / "tests" / "deep").symlink_to("../common/deep")
    (task / "solution").mkdir()
    (task / "solution" / "home").symlink_to(tmp_path / "home")
    watched = _watched(task)
    assert task / "common" in watched and task / "common" / "deep" not in watched
    assert all(path.is_relative_to(task) for path in watched), watched
    (task / "solution" / "home").unlink()
    (task / "tests" / "up").symlink_to("..")
    assert task not in _watched(task)


def test_no_folder_is_watched_for_links_the_check_gave_up_on(tmp_path, monkeypatch):
    """A folder too big to check (past the check's bound): watching it would cost as much, to tell nothing."""
    from verifier_tui.engine.task import loading

    task = make_task(tmp_path / "t")
    (task / "common" / "a" / "b").mkdir(parents=True)
    (task / "tests" / "shared").symlink_to("../common")
    monkeypatch.setattr(loading, "_MOST_FOLDERS", 2)
    assert task / "common" not in _watched(task)


def test_a_task_linking_to_many_folders_has_a_hundred_of_them_watched(tmp_path):
    """tests/ holding 150 links, each to a folder of its own in the task: each watched folder is
    compared with every other at each change (3,000 took 27 s to list): the first 100 are watched."""
    task = make_task(tmp_path / "t")
    for i in range(150):
        (task / "environment" / f"a{i:03}").mkdir(parents=True)
        (task / "tests" / f"l{i:03}").symlink_to(f"../environment/a{i:03}")
    linked = {path for path in _watched(task) if path.is_relative_to(task / "environment")}
    assert linked == {task / "environment" / f"a{i:03}" for i in range(100)}


def test_a_save_in_a_tests_folder_of_a_linked_folder_is_read_by_no_run(tmp_path):
    """tests/env a link to ../environment: environment/tests/notes.txt is no step's tests, so a save
    there (read by no run, Harbor's answer the same) is no round of test --watch; it was one."""
    task = make_task(tmp_path / "t")
    (task / "environment" / "tests").mkdir(parents=True)
    (task / "tests" / "env").symlink_to("../environment")
    with session_for(task) as session:
        assert session.read_by_no_run([task / "environment" / "tests" / "notes.txt"])
        assert not session.read_by_no_run([task / "tests" / "notes.txt"])
