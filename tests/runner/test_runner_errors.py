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


# Values whose __getattr__ answers any name, as attribute-access dicts do (AttrDict, addict's
# Dict): asked for __await__ or gi_code, they raise KeyError or hand back a value. Python's
# `await` and inspect.isawaitable look at the type alone, so these are rewards, not awaitables.
ANSWERS_ANY_NAME = {
    "AttrDict": (
        "class R(dict):\n    __getattr__ = dict.__getitem__\n",
        "R(reward=1.0)",
        {"reward.json": '{"reward": 1.0}'},
    ),
    "addict": (
        "class R(dict):\n    def __getattr__(self, name):\n        return self.setdefault(name, R())\n",
        "R(reward=1.0)",
        {"reward.json": '{"reward": 1.0}'},
    ),
    "float": ("class R(float):\n    def __getattr__(self, name):\n        return 0\n", "R(0.5)", {"reward.txt": "0.5"}),
}


@pytest.mark.parametrize("kind", list(ANSWERS_ANY_NAME))
def test_a_value_that_answers_any_attribute_is_a_reward_not_an_awaitable(any_sandbox, kind):
    # exit 1 (`KeyError: '__await__'`, or "can't be used in 'await' expression") and no reward
    # for a verify that returned a good dict or number
    source, value, rewards = ANSWERS_ANY_NAME[kind]
    any_sandbox.verifier("%s\ndef verify(workspace):\n    return %s\n" % (source, value))
    result = any_sandbox.run()
    assert result.returncode == 0, result.describe()
    assert result.rewards == rewards, result.describe()


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


def test_a_coroutine_an_awaited_verify_returned_is_one_line(any_sandbox):
    # the line came with a RuntimeWarning (coroutine 'inner' was never awaited) pointing at the
    # runner's own file: three more lines on stderr where the contract says one
    any_sandbox.verifier("""
        async def inner():
            return 0.5

        async def verify(workspace):
            return inner()
    """)
    result = any_sandbox.run()
    result.assert_contract_error("verify returned", "coroutine")


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


UNPRINTABLE = "class Unprintable(Exception):\n    def __str__(self):\n        raise ValueError('no words')\n\n"


@pytest.mark.parametrize(
    "where, raised, said",
    [
        ("module __getattr__", "RuntimeError('gotcha')", "looking up verify raised RuntimeError: gotcha"),
        ("__signature__", "RuntimeError('gotcha')", "reading verify's signature raised RuntimeError: gotcha"),
        ("__signature__", "RuntimeError()", "reading verify's signature raised RuntimeError"),
        ("__signature__", "Unprintable()", "reading verify's signature raised Unprintable: <unprintable Unprintable>"),
    ],
)
def test_explain_gives_the_message_of_what_raised_as_verify_was_looked_up(sandbox, where, raised, said):
    """A module ``__getattr__`` or a ``__signature__`` property that raises:
    --explain said only "reading verify's signature raised RuntimeError",
    without the message the run's traceback ends with. One whose ``__str__``
    raises must not crash the explanation."""
    if where == "module __getattr__":
        source = UNPRINTABLE + "def __getattr__(name):\n    raise %s\n" % raised
    else:
        source = UNPRINTABLE + (
            "class Verify:\n    @property\n    def __signature__(self):\n        raise %s\n\n"
            "    def __call__(self, workspace):\n        return 1.0\n\nverify = Verify()\n" % raised
        )
    sandbox.verifier(source)
    explained = sandbox.run("--explain")
    assert explained.returncode == 0, explained.describe()
    document = json.loads(explained.stdout)
    assert (document["problems"], document["would_exit"]) == ([said], 1)


# verify took the process's standard error (fd 2) away, or pointed it at a full disk: the runner's
# line cannot be written anywhere, but the exit code is still the contract's.
FD2_CHANGES = {
    "closed": "os.close(2)",
    "a full disk": "os.dup2(os.open('/dev/full', os.O_WRONLY), 2)",
}


@pytest.mark.parametrize("change", list(FD2_CHANGES), ids=list(FD2_CHANGES))
@pytest.mark.parametrize("ending, code", [("return None", 2), ("raise ValueError('no')", 1)], ids=["bad", "raise"])
def test_the_exit_code_stays_the_contracts_when_stderr_cannot_be_written(any_sandbox, change, ending, code):
    # a bad return value exited 1, the runner's own crash on writing its line, where the contract says 2
    any_sandbox.verifier("import os\n\ndef verify(workspace):\n    %s\n    %s\n" % (FD2_CHANGES[change], ending))
    result = any_sandbox.run()
    assert result.returncode == code, result.describe()
    assert result.rewards == {}, result.describe()


# verify left what it printed in sys.stdout's buffer, then took fd 1 away (closed it, or pointed
# it at a full disk): the interpreter's own flush at exit failed and turned every exit code into
# 120, beside the reward file Harbor scores.
STDOUT_CHANGES = {
    "closed": "os.close(1)",
    "a full disk": "os.dup2(os.open('/dev/full', os.O_WRONLY), 1)",
}


@pytest.mark.parametrize("change", list(STDOUT_CHANGES), ids=list(STDOUT_CHANGES))
@pytest.mark.parametrize("ending, code", [("return 0.5", 0), ("return None", 2), ("raise ValueError('no')", 1)])
def test_output_that_cannot_be_flushed_leaves_the_exit_code_the_contracts(any_sandbox, change, ending, code):
    source = "import os, sys\n\ndef verify(workspace):\n    sys.stdout.write('unflushed')\n    %s\n    %s\n"
    any_sandbox.verifier(source % (STDOUT_CHANGES[change], ending))
    result = any_sandbox.run()
    assert result.returncode == code, result.describe()
    assert result.rewards == ({"reward.txt": "0.5"} if code == 0 else {}), result.describe()
