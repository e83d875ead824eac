"""The runner's extras beyond the contract: --pdb and --stack-signal."""

import signal
import time

import pytest


def test_pdb_flag_opens_post_mortem_in_the_verifiers_frame(any_sandbox):
    any_sandbox.verifier(
        "import json\ndef verify(workspace):\n    marker = 'inside-verify'\n    return json.loads('{not json')\n"
    )
    result = any_sandbox.run("--pdb", input=b"p marker\nq\n")
    assert result.returncode == 1
    assert "pdb post-mortem" in result.stderr
    assert "(Pdb)" in result.stdout
    # The first frame pdb shows is verify's own, not json's decoder.
    assert "'inside-verify'" in result.stdout
    assert not result.rewards


def test_pdb_flag_on_a_passing_or_contract_run_says_there_is_nothing_to_debug(sandbox):
    sandbox.verifier("def verify(workspace):\n    return 1.0\n")
    passing = sandbox.run("--pdb")
    assert passing.returncode == 0 and "nothing to debug" in passing.stderr
    sandbox.verifier("def verify(workspace):\n    return 'yes'\n")
    contract = sandbox.run("--pdb")
    assert contract.returncode == 2 and "contract problem" in contract.stderr


def test_pdb_flag_on_a_verifier_that_does_not_compile_says_it_has_no_frame(any_sandbox):
    """pdb opened in the runner's own frame (``run_verifier.py(364)load_verify()``):
    a SyntaxError has no frame of the task's code."""
    any_sandbox.verifier("def verify(workspace):\n    return 1.0 +\n")
    result = any_sandbox.run("--pdb", input=b"q\n")
    assert result.returncode == 1 and "(Pdb)" not in result.stdout
    assert "SyntaxError has no frame of the task's code to debug post-mortem" in result.stderr
    # A dataset's verifier is staged beside the runner, in tests/.ng/: its frame is the task's.
    any_sandbox.verifier(
        "def verify(workspace):\n    marker = 'in-the-dataset-verifier'\n    1 / 0\n", "tests/.ng/verifier.py"
    )
    staged = any_sandbox.run("--pdb", input=b"p marker\nq\n")
    assert "'in-the-dataset-verifier'" in staged.stdout


STUCK = """
    import os, time

    def wait_for(marker, path):
        open(marker, "w").close()  # from here on, the process is in this function
        deadline = time.monotonic() + 60
        while not os.path.exists(path) and time.monotonic() < deadline:
            time.sleep(0.01)

    {top}

    def verify(workspace):
        {body}
        return 1.0
"""


def wait_until(path, within_s=30.0):
    deadline = time.monotonic() + within_s
    while not path.exists():
        assert time.monotonic() < deadline, "%s never appeared" % path
        time.sleep(0.01)


@pytest.mark.parametrize("where", ["verify", "import"])
def test_stack_signal_prints_where_the_verifier_is_stuck_and_the_run_goes_on(any_sandbox, where):
    """What a tool does with a run that timed out: send the signal, read the
    stack on stderr. The run itself is not disturbed by it."""
    stuck, go = any_sandbox.root / "stuck", any_sandbox.root / "go"
    wait = "wait_for(%r, %r)" % (str(stuck), str(go))
    top, body = (wait, "pass") if where == "import" else ("", wait)
    any_sandbox.verifier(STUCK.format(top=top, body=body))
    process = any_sandbox.start("--stack-signal", "USR1")
    try:
        wait_until(stuck)
        process.send_signal(signal.SIGUSR1)
        time.sleep(0.2)
    finally:
        go.touch()
        stdout, stderr = process.communicate(timeout=60)
    stderr = stderr.decode()
    assert process.returncode == 0, stderr
    assert (any_sandbox.reward_dir / "reward.txt").read_text(encoding="utf-8") == "1.0"
    # Innermost first: the verifier's waiting helper, called from where it was stuck. (The
    # signal may land inside os.path.exists, a Python function on 3.8: the stack then starts
    # there, so the verifier's own frames are looked for.)
    ours = [
        line.strip() for line in stderr.splitlines() if line.strip().startswith('File "%s"' % any_sandbox.verifier_path)
    ]
    assert ours[0].endswith(" in wait_for"), stderr
    assert ours[1].endswith(" in verify" if where == "verify" else " in <module>")
    assert "thread" in stderr.lower()


@pytest.mark.parametrize("name", ["usr1", "SIGUSR2", "HUP"])
def test_stack_signal_names_with_or_without_sig(sandbox, name):
    sandbox.verifier("def verify(workspace):\n    return 1.0\n")
    result = sandbox.run("--stack-signal", name)
    assert result.returncode == 0, result.describe()
    assert result.stderr == "" and result.rewards == {"reward.txt": "1.0"}


@pytest.mark.parametrize(
    "name, words",
    [
        ("NOPE", ["no signal is named 'NOPE'"]),
        ("9", ["no signal is named '9'"]),
        ("KILL", ["SIGKILL"]),
        ("STOP", ["SIGSTOP"]),
        ("SEGV", ["SIGSEGV"]),
    ],
)
def test_a_signal_that_cannot_serve_is_a_usage_error(any_sandbox, name, words):
    any_sandbox.verifier("def verify(workspace):\n    return 1.0\n")
    (any_sandbox.reward_dir / "reward.txt").write_text("1.0", encoding="utf-8")
    result = any_sandbox.run("--stack-signal", name)
    result.assert_contract_error("--stack-signal", *words)
