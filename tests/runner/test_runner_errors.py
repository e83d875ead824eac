"""The verifier's own code raising (exit 1, its traceback), and awaiting."""

import json

import pytest


def test_verify_raising_exits_1_with_the_verifiers_traceback(any_sandbox):
    verifier = any_sandbox.verifier("""
        def check(workspace):
            raise ValueError("the answer is wrong")

        def verify(workspace):
            return check(workspace)
    """)
    result = any_sandbox.run()
    result.assert_verifier_raised(verifier, "ValueError")
    assert "the answer is wrong" in result.stderr
    assert str(any_sandbox.runner) not in result.stderr
    assert result.traceback_files() == [str(verifier)] * 2


def test_import_time_error_exits_1_with_the_verifiers_traceback(any_sandbox):
    verifier = any_sandbox.verifier("""
        import os

        THRESHOLD = int("not a number")

        def verify(workspace):
            return 1.0
    """)
    result = any_sandbox.run()
    result.assert_verifier_raised(verifier, "ValueError")
    assert "run_verifier.py" not in result.stderr
    assert "<frozen" not in result.stderr


def test_import_of_a_missing_module_exits_1(sandbox):
    verifier = sandbox.verifier("""
        import a_module_that_is_not_installed_anywhere

        def verify(workspace):
            return 1.0
    """)
    result = sandbox.run()
    result.assert_verifier_raised(verifier, "ModuleNotFoundError")


def test_error_raised_in_a_helper_shows_the_verifier_frame_first(sandbox):
    helper = sandbox.write(
        "tests/helper.py",
        """
        def grade():
            raise KeyError("missing field")
    """,
    )
    verifier = sandbox.verifier("""
        import helper

        def verify(workspace):
            return helper.grade()
    """)
    result = sandbox.run()
    result.assert_verifier_raised(verifier, "KeyError")
    assert result.traceback_files() == [str(verifier), str(helper)]


def test_syntax_error_exits_1_naming_the_verifier(sandbox):
    verifier = sandbox.verifier("""
        def verify(workspace)
            return 1.0
    """)
    result = sandbox.run()
    result.assert_verifier_raised(verifier, "SyntaxError")
    assert "run_verifier.py" not in result.stderr


@pytest.mark.parametrize("where", ["verify", "import"])
@pytest.mark.parametrize(
    "statement", ["raise SystemExit(0)", "sys.exit(0)", "sys.exit(3)", "sys.exit('bye')", "raise KeyboardInterrupt"]
)
def test_verifier_stopping_itself_exits_1_without_reward(sandbox, where, statement):
    if where == "verify":
        source = "import sys\n\ndef verify(workspace):\n    %s\n" % statement
    else:
        source = "import sys\n%s\n\ndef verify(workspace):\n    return 1.0\n" % statement
    verifier = sandbox.verifier(source)
    result = sandbox.run()
    assert result.returncode == 1, result.describe()
    assert result.rewards == {}
    assert result.traceback_files()[:1] == [str(verifier)], result.describe()
    expected = "KeyboardInterrupt" if "Keyboard" in statement else "SystemExit"
    assert expected in result.stderr_lines[-1]


# --------------------------------------------------------------------------
# Awaiting.


def test_async_verify_is_awaited(any_sandbox):
    any_sandbox.verifier("""
        import asyncio

        async def verify(workspace):
            await asyncio.sleep(0)
            return 0.75
    """)
    result = any_sandbox.run()
    assert result.returncode == 0, result.describe()
    assert result.rewards == {"reward.txt": "0.75"}


def test_async_verify_returning_a_dict(sandbox):
    sandbox.verifier("""
        async def verify(workspace, task_data):
            return {"reward": 1.0, "steps": 3}
    """)
    result = sandbox.run()
    assert result.returncode == 0, result.describe()
    assert result.reward_json == {"reward": 1.0, "steps": 3}


def test_sync_verify_returning_a_coroutine_is_awaited(sandbox):
    sandbox.verifier("""
        import asyncio

        async def _grade(workspace):
            await asyncio.sleep(0)
            return 0.25

        def verify(workspace):
            return _grade(workspace)
    """)
    result = sandbox.run()
    assert result.returncode == 0, result.describe()
    assert result.rewards == {"reward.txt": "0.25"}


def test_custom_awaitable_result_is_awaited(sandbox):
    sandbox.verifier("""
        class Later(object):
            def __await__(self):
                if False:
                    yield
                return 0.5

        def verify(workspace):
            return Later()
    """)
    result = sandbox.run()
    assert result.returncode == 0, result.describe()
    assert result.rewards == {"reward.txt": "0.5"}


def test_async_verify_is_run_by_asyncio_run(sandbox):
    # asyncio.run: a fresh running loop, closed afterwards.
    sandbox.verifier("""
        import asyncio

        async def verify(workspace):
            loop = asyncio.get_running_loop()
            print("running", loop.is_running())
            return 1.0
    """)
    result = sandbox.run()
    assert result.returncode == 0, result.describe()
    assert "running True" in result.stdout


def test_async_verify_raising_exits_1_with_the_verifiers_traceback(any_sandbox):
    verifier = any_sandbox.verifier("""
        import asyncio

        async def verify(workspace):
            await asyncio.sleep(0)
            raise RuntimeError("async failure")
    """)
    result = any_sandbox.run()
    result.assert_verifier_raised(verifier, "RuntimeError")
    assert "async failure" in result.stderr
    assert "asyncio" not in "".join(result.traceback_files())


@pytest.mark.parametrize("statement", ["raise SystemExit(0)", "raise KeyboardInterrupt"])
def test_async_verify_stopping_itself_exits_1(sandbox, statement):
    sandbox.verifier(
        """
        async def verify(workspace):
            %s
    """
        % statement
    )
    result = sandbox.run()
    assert result.returncode == 1, result.describe()
    assert result.rewards == {}


def test_async_verify_returning_a_bad_value_is_a_contract_error(sandbox):
    sandbox.verifier("""
        async def verify(workspace):
            return None
    """)
    result = sandbox.run()
    result.assert_contract_error("verify returned")


# --------------------------------------------------------------------------
# What the runner says goes to the process's stderr, whatever verify did to sys.stderr.

STDERR_CHANGES = {
    "set to None": "sys.stderr = None",
    "closed": "sys.stderr.close()",
    "left redirected": "sys.stderr = io.StringIO()",
}


@pytest.mark.parametrize("change", list(STDERR_CHANGES), ids=list(STDERR_CHANGES))
def test_a_bad_return_value_is_said_on_stderr_whatever_verify_did_to_sys_stderr(any_sandbox, change):
    any_sandbox.verifier("import io, sys\n\ndef verify(workspace):\n    %s\n    return None\n" % STDERR_CHANGES[change])
    result = any_sandbox.run()
    result.assert_contract_error("verify returned None")


@pytest.mark.parametrize("change", list(STDERR_CHANGES), ids=list(STDERR_CHANGES))
def test_a_traceback_goes_to_stderr_whatever_verify_did_to_sys_stderr(any_sandbox, change):
    source = "import io, sys\n\ndef verify(workspace):\n    %s\n    raise ValueError('the answer is wrong')\n"
    verifier = any_sandbox.verifier(source % STDERR_CHANGES[change])
    result = any_sandbox.run()
    result.assert_verifier_raised(verifier, "ValueError")
    assert "the answer is wrong" in result.stderr
    assert "Traceback" not in result.stdout


STATEMENTS = ["raise RuntimeError('gotcha')", "raise SystemExit(0)", "raise KeyboardInterrupt"]


@pytest.mark.parametrize("statement", STATEMENTS)
@pytest.mark.parametrize("where", ["module __getattr__", "__signature__"])
def test_verifier_code_run_while_verify_is_looked_up_exits_1(sandbox, where, statement):
    """The verifier's code can run after its import, while the runner finds
    verify (a module ``__getattr__``) or reads its signature (a
    ``__signature__`` property). It raising is the verifier raising: exit 1,
    its traceback, and --explain says so. It crashed the runner: exit 0
    without a reward for SystemExit(0), 130 for KeyboardInterrupt, and
    --explain printed the runner's own traceback and no document."""
    if where == "module __getattr__":
        source = "def __getattr__(name):\n    %s\n" % statement
    else:
        source = (
            "class Verify:\n    @property\n    def __signature__(self):\n        %s\n\n"
            "    def __call__(self, workspace):\n        return 1.0\n\nverify = Verify()\n" % statement
        )
    verifier = sandbox.verifier(source)
    result = sandbox.run()
    assert (result.returncode, result.rewards) == (1, {}), result.describe()
    assert result.traceback_files()[-1:] == [str(verifier)], result.describe()
    assert statement.split()[1].split("(")[0] in result.stderr_lines[-1]
    explained = sandbox.run("--explain")
    assert explained.returncode == 0, explained.describe()
    assert json.loads(explained.stdout)["would_exit"] == 1
