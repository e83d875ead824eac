"""The runner started warm: held before it reads anything, and then exactly a cold start."""

import fcntl
import json
import os
import subprocess
import time

from tests.runner.conftest import WARM_VARIABLE, clean_env

SEES = """
    import os, sys
    def verify(workspace):
        open_fds = sorted(int(fd) for fd in os.listdir("/proc/self/fd"))
        print(%r in os.environ, open_fds[:3], max(open_fds) < 10 or open_fds, sys.stdin.seekable())
        return 1.0
"""


def _held(sandbox, extra=None, more_args=()):
    """The runner started warm (its environment also holding ``extra``) and
    not yet told to go: (process, go pipe)."""
    read, go = os.pipe()
    high = fcntl.fcntl(read, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(read)
    args = [
        "--verifier",
        str(sandbox.verifier_path),
        "--workspace",
        str(sandbox.app),
        "--reward-dir",
        str(sandbox.reward_dir),
        *more_args,
    ]
    proc = subprocess.Popen(
        [str(sandbox.python), str(sandbox.runner)] + args,
        cwd=str(sandbox.root),
        env=clean_env(extra=dict(extra or {}, **{WARM_VARIABLE: str(high)})),
        pass_fds=(high,),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    os.close(high)
    return proc, go


def test_a_held_runner_does_nothing_until_go_and_then_runs_as_cold(any_sandbox):
    any_sandbox.verifier((SEES % WARM_VARIABLE).replace("return 1.0", "return 0.5"))
    proc, go = _held(any_sandbox)
    time.sleep(0.5)  # time enough to have run, had it not waited
    assert proc.poll() is None
    assert list(any_sandbox.reward_dir.iterdir()) == []
    os.write(go, b"g")
    os.close(go)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    # The variable and the go pipe are gone; stdin is a cold start's /dev/null.
    assert stdout.decode() == "False [0, 1, 2] True True\n"
    assert (any_sandbox.reward_dir / "reward.txt").read_text() == "0.5"


def test_a_held_runner_discarded_without_go_runs_nothing(sandbox):
    sandbox.verifier("""
        def verify(workspace):
            print("ran")
            return 1.0
    """)
    proc, go = _held(sandbox)
    os.close(go)
    stdout, stderr = proc.communicate(timeout=60)
    assert (proc.returncode, stdout, stderr) == (0, b"", b"")
    assert list(sandbox.reward_dir.iterdir()) == []


def test_a_held_runner_imports_the_modules_to_preload_before_its_go(any_sandbox):
    """verifier-tui's --preload: the names (one that does not import is
    passed over) imported before the wait; the variable gone, as the go pipe's."""
    any_sandbox.verifier("""
        import os, sys
        def verify(workspace):
            print("colorsys" in sys.modules, "VERIFIER_TUI_PRELOAD" in os.environ)
            return 1.0
    """)
    explain = any_sandbox.root / "explain.json"
    proc, go = _held(
        any_sandbox, {"VERIFIER_TUI_PRELOAD": "no_such_module_here,colorsys"}, ["--explain-to", str(explain)]
    )
    os.write(go, b"g")
    os.close(go)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert stdout.decode() == "True False\n"
    # The one passed over is named, with why, for the tool to say.
    assert json.loads(explain.read_text())["preload_failed"] == [
        "no_such_module_here (ModuleNotFoundError: No module named 'no_such_module_here')"
    ]


def test_a_held_runner_told_cpus_with_its_go_binds_every_thread_and_child_to_them(any_sandbox):
    """What starting on the CPUs does for a cold run: the go may name CPUs, and every
    thread the runner has by then (here one a preloaded module started) and
    every process the verifier starts runs on those only."""
    cpu = max(os.sched_getaffinity(0))
    (any_sandbox.root / "starts_a_thread.py").write_text(
        "import threading\nthreading.Thread(target=threading.Event().wait, daemon=True).start()\n"
    )
    any_sandbox.verifier("""
        import os, subprocess, sys
        def verify(workspace):
            threads = sorted(os.listdir("/proc/self/task"))
            child = subprocess.run([sys.executable, "-c", "import os; print(sorted(os.sched_getaffinity(0)))"],
                                   capture_output=True, text=True).stdout.strip()
            print(len(threads), {str(sorted(os.sched_getaffinity(int(t)))) for t in threads}, child)
            return 1.0
    """)
    proc, go = _held(any_sandbox, {"VERIFIER_TUI_PRELOAD": "starts_a_thread", "PYTHONPATH": str(any_sandbox.root)})
    os.write(go, b"g%d" % cpu)
    os.close(go)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert stdout.decode() == "2 {'[%d]'} [%d]\n" % (cpu, cpu)
