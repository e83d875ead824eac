"""Return values -> Harbor's reward files, and no stale verdict ever left."""

import json
import os

import pytest

# --------------------------------------------------------------------------
# Good values.


@pytest.mark.parametrize(
    "expression, expected",
    [
        ("1", 1.0),
        ("0", 0.0),
        ("-3", -3.0),
        ("0.5", 0.5),
        ("0.1", 0.1),
        ("1 / 3", 1 / 3),
        ("1e-300", 1e-300),
        ("2 ** 0.5", 2**0.5),
        ("10 ** 20", 1e20),
        ("5e-324", 5e-324),
        ("-0.0", -0.0),
    ],
)
def test_number_goes_to_reward_txt_and_round_trips(sandbox, expression, expected):
    sandbox.verifier(
        """
        def verify(workspace):
            return %s
    """
        % expression
    )
    result = sandbox.run()
    assert result.returncode == 0, result.describe()
    assert result.stderr == ""
    assert set(result.rewards) == {"reward.txt"}
    assert float(result.reward_txt) == expected
    assert repr(float(result.reward_txt)) == repr(expected)


def test_number_reward_on_every_interpreter(any_sandbox):
    any_sandbox.verifier("""
        def verify(workspace):
            return 1 / 3
    """)
    result = any_sandbox.run()
    assert result.returncode == 0, result.describe()
    assert set(result.rewards) == {"reward.txt"}
    assert float(result.reward_txt) == 1 / 3


def test_float_and_int_subclasses_are_numbers(sandbox):
    sandbox.verifier("""
        import enum

        class Score(float):
            def __repr__(self):
                return "Score!"

        class Count(int):
            pass

        class Level(enum.IntEnum):
            HIGH = 7

        def verify(workspace, task_data):
            return {"float": Score(0.25), "int": Count(3), "enum": Level.HIGH}[task_data["pick"]]
    """)
    for pick, expected in (("float", 0.25), ("int", 3.0), ("enum", 7.0)):
        data = sandbox.write("data_%s.json" % pick, json.dumps({"pick": pick}))
        result = sandbox.run("--task-data", data)
        assert result.returncode == 0, result.describe()
        assert set(result.rewards) == {"reward.txt"}, pick
        assert float(result.reward_txt) == expected, pick


def test_dict_of_numbers_goes_to_reward_json(any_sandbox):
    any_sandbox.verifier("""
        class Count(int):
            pass

        class Score(float):
            pass

        def verify(workspace):
            return {"reward": 1, "accuracy": 0.1, "third": 1 / 3, "tiny": 1e-300,
                    "count": Count(4), "score": Score(0.5), "big": 10 ** 20}
    """)
    result = any_sandbox.run()
    assert result.returncode == 0, result.describe()
    assert set(result.rewards) == {"reward.json"}
    assert result.reward_json == {
        "reward": 1,
        "accuracy": 0.1,
        "third": 1 / 3,
        "tiny": 1e-300,
        "count": 4,
        "score": 0.5,
        "big": 10**20,
    }


def test_dict_without_reward_key_is_still_written(sandbox):
    sandbox.verifier("""
        def verify(workspace):
            return {"accuracy": 0.75}
    """)
    result = sandbox.run()
    assert result.returncode == 0, result.describe()
    assert result.reward_json == {"accuracy": 0.75}


def test_reward_json_is_strict_json(sandbox):
    sandbox.verifier("""
        def verify(workspace):
            return {"reward": 0.5, "unicode \u00e9": 2}
    """)
    result = sandbox.run()
    assert result.returncode == 0, result.describe()

    def refuse(constant):
        raise AssertionError("non-standard JSON constant %s" % constant)

    assert json.loads(result.rewards["reward.json"], parse_constant=refuse) == {"reward": 0.5, "unicode \u00e9": 2}


# --------------------------------------------------------------------------
# Bad values: exit 2, one line on stderr, no reward file.

BAD_VALUES = [
    ("None", "None"),
    ("str", "'0.5'"),
    ("bool-true", "True"),
    ("bool-false", "False"),
    ("nan", "float('nan')"),
    ("inf", "float('inf')"),
    ("-inf", "float('-inf')"),
    ("huge-int", "10 ** 400"),
    ("list", "[1.0]"),
    ("tuple", "(1.0,)"),
    ("dict-non-str-key", "{1: 1.0}"),
    ("dict-bool-value", "{'reward': True}"),
    ("dict-nan-value", "{'reward': float('nan')}"),
    ("dict-inf-value", "{'reward': 1.0, 'm': float('inf')}"),
    ("dict-str-value", "{'reward': '1'}"),
    ("dict-none-value", "{'reward': None}"),
    ("dict-nested", "{'reward': {'x': 1}}"),
    ("empty-dict", "{}"),
    ("object", "object()"),
    ("complex", "1j"),
    ("decimal", "__import__('decimal').Decimal('0.5')"),
]


@pytest.mark.parametrize("expression", [value for _, value in BAD_VALUES], ids=[name for name, _ in BAD_VALUES])
def test_bad_return_value_is_a_contract_error(sandbox, expression):
    sandbox.verifier(
        """
        def verify(workspace):
            return %s
    """
        % expression
    )
    result = sandbox.run()
    result.assert_contract_error("verify returned")
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("expression", ["10 ** 400", "-(10 ** 400)"], ids=["int", "negative-int"])
def test_an_int_too_large_for_a_float_is_said_so(sandbox, expression):
    """An int past the largest float is no reward.txt: its digits are what
    Harbor's float() reads as inf, and refuses. The line said it was "not a
    finite number", then that "float() makes it inf", though float() of the int
    raises OverflowError: it is float() of the file's text that gives inf."""
    sandbox.verifier("def verify(workspace):\n    return %s\n" % expression)
    result = sandbox.run()
    result.assert_contract_error(
        "verify returned %s1000" % ("-" if expression.startswith("-") else ""),
        "an int too large for a float: reward.txt would hold its digits, which Harbor reads with float() as "
        "%sinf and refuses as not finite" % ("-" if expression.startswith("-") else ""),
    )
    assert "not a finite number" not in result.stderr and "float() makes it inf" not in result.stderr


def test_an_int_too_large_for_a_float_in_a_dict_goes_to_reward_json(sandbox):
    """A dict of numbers goes to reward.json (json.dumps): an int is one
    however large, and Harbor's check of reward.json refuses only non-finite
    floats, so it is the trial's reward. The runner refused it (exit 2, no
    reward) saying Harbor "cannot score" it."""
    sandbox.verifier("def verify(workspace):\n    return {'reward': 1.0, 'm': 10 ** 400}\n")
    result = sandbox.run()
    assert result.returncode == 0, result.describe()
    assert result.reward_json == {"reward": 1.0, "m": 10**400}
    assert result.rewards["reward.json"] == json.dumps({"reward": 1.0, "m": 10**400})


@pytest.mark.parametrize("expression", ["10 ** 4300", "-(10 ** 4300)"], ids=["int", "negative-int"])
def test_an_int_too_long_for_json_in_a_dict_is_a_contract_error(any_sandbox, expression):
    """An int of more than 4,300 digits is no reward.json: Python's JSON reader,
    Harbor's too, refuses its digits. json.dumps raised ValueError in the
    runner (exit 1, "verifier raised", the runner's own traceback); on 3.8,
    which has no such limit, it wrote a reward.json Harbor cannot read."""
    any_sandbox.verifier("def verify(workspace):\n    return {'reward': %s}\n" % expression)
    result = any_sandbox.run()
    result.assert_contract_error(
        "verify returned a dict whose value for 'reward' is an integer too long for Python's JSON reader "
        "(Harbor's too) to read"
    )


def test_an_int_too_long_to_print_is_said_by_its_length(any_sandbox):
    """``return 10 ** 5000``: the line said ``verify returned <unrepresentable
    int: ValueError> (int)``, as if the verifier's own __repr__ had failed."""
    any_sandbox.verifier("def verify(workspace):\n    return 10 ** 5000\n")
    result = any_sandbox.run()
    result.assert_contract_error("verify returned an int of more than 4,300 digits (int), an int too large for a float")
    assert "unrepresentable" not in result.stderr


def test_an_int_of_4300_digits_in_a_dict_is_a_reward(sandbox):
    """The limit is Python's: 4,300 digits are read back, so they are a reward."""
    sandbox.verifier("def verify(workspace):\n    return {'reward': 10 ** 4300 - 1}\n")
    result = sandbox.run()
    assert result.returncode == 0, result.describe()
    assert result.rewards["reward.json"] == '{"reward": %s}' % ("9" * 4300)


def test_bad_return_value_on_every_interpreter(any_sandbox):
    any_sandbox.verifier("""
        def verify(workspace):
            return float('nan')
    """)
    result = any_sandbox.run()
    result.assert_contract_error("verify returned", "nan")


def test_bad_value_with_a_broken_repr_is_still_a_contract_error(sandbox):
    # Describing the value must not crash the runner (exit 1 with the
    # runner's own traceback) nor leave the reward verify wrote itself.
    sandbox.verifier("""
        import os, sys

        class Weird(object):
            def __repr__(self):
                raise RuntimeError("no repr")

        def verify(workspace):
            with open(os.path.join(sys.argv[sys.argv.index("--reward-dir") + 1], "reward.txt"), "w") as f:
                f.write("1.0")
            return Weird()
    """)
    result = sandbox.run()
    result.assert_contract_error("verify returned")


def test_dict_key_with_a_broken_repr_is_still_a_contract_error(sandbox):
    sandbox.verifier("""
        class Key(object):
            def __repr__(self):
                raise RuntimeError("no repr")

        def verify(workspace):
            return {Key(): 1.0}
    """)
    result = sandbox.run()
    result.assert_contract_error("verify returned a dict")


def test_a_dict_key_whose_repr_breaks_over_lines_is_named_on_one_line(any_sandbox):
    """The key's message is one line, its repr's breaks spelled: a reader can tell it whole from
    the output after it, which a runner before the key's type ended it with no mark of its end."""
    any_sandbox.verifier("""
        class Key(object):
            def __repr__(self):
                return "K(a\\nb\\u2028c)"

        def verify(workspace):
            return {Key(): 1.0}
    """)
    result = any_sandbox.run()
    result.assert_contract_error("verify returned a dict with a key that is not a string: K(a\\nb\\u2028c) (Key)")


def test_error_line_names_the_bad_value(sandbox):
    sandbox.verifier("""
        def verify(workspace):
            return {"reward": 1.0, "accuracy": "high"}
    """)
    result = sandbox.run()
    result.assert_contract_error("accuracy", "high")


# --------------------------------------------------------------------------
# No stale verdict.


PLANTS = [
    "file-json",
    "file-txt",
    "folder-json",
    "folder-txt",
    "symlink-json-outside",
    "symlink-txt-outside",
    "symlink-to-folder",
    "dangling-symlink",
    "both-files",
]


def plant(sandbox, kind, outside):
    """Plant a stale verdict of ``kind``; return the outside file/folder that
    must survive unchanged (or None)."""
    rd = sandbox.reward_dir
    outside.mkdir(exist_ok=True)
    target = outside / "precious.json"
    target.write_text('{"reward": 1.0}', encoding="utf-8")
    folder = outside / "precious_folder"
    folder.mkdir(exist_ok=True)
    (folder / "keep.txt").write_text("keep", encoding="utf-8")
    if kind == "file-json":
        (rd / "reward.json").write_text('{"reward": 1.0}', encoding="utf-8")
    elif kind == "file-txt":
        (rd / "reward.txt").write_text("1.0", encoding="utf-8")
    elif kind == "both-files":
        (rd / "reward.json").write_text('{"reward": 1.0}', encoding="utf-8")
        (rd / "reward.txt").write_text("1.0", encoding="utf-8")
    elif kind in ("folder-json", "folder-txt"):
        planted = rd / ("reward.json" if kind == "folder-json" else "reward.txt")
        (planted / "deeper").mkdir(parents=True)
        (planted / "inside.txt").write_text("1.0", encoding="utf-8")
        (planted / "deeper" / "more.json").write_text("{}", encoding="utf-8")
    elif kind == "symlink-json-outside":
        os.symlink(str(target), str(rd / "reward.json"))
    elif kind == "symlink-txt-outside":
        os.symlink(str(target), str(rd / "reward.txt"))
    elif kind == "symlink-to-folder":
        os.symlink(str(folder), str(rd / "reward.json"))
    elif kind == "dangling-symlink":
        os.symlink(str(outside / "nowhere"), str(rd / "reward.txt"))
    else:  # pragma: no cover
        raise AssertionError(kind)
    return target, folder


def assert_outside_untouched(target, folder):
    assert not target.is_symlink()
    assert target.read_text(encoding="utf-8") == '{"reward": 1.0}'
    assert sorted(os.listdir(str(folder))) == ["keep.txt"]
    assert (folder / "keep.txt").read_text(encoding="utf-8") == "keep"


SEES_CLEAN_FOLDER = """
    import os

    def verify(workspace):
        found = [n for n in ("reward.json", "reward.txt") if os.path.lexists(os.path.join(%r, n))]
        print("seen:", found)
        if found:
            raise AssertionError("stale verdict visible to verify: %%s" %% found)
        return %s
"""


@pytest.mark.parametrize("kind", PLANTS)
def test_planted_verdict_is_removed_before_verify(sandbox, tmp_path, kind):
    target, folder = plant(sandbox, kind, tmp_path / "outside")
    sandbox.verifier(SEES_CLEAN_FOLDER % (str(sandbox.reward_dir), "0.0"))
    result = sandbox.run()
    assert result.returncode == 0, result.describe()
    assert "seen: []" in result.stdout
    assert result.rewards == {"reward.txt": "0.0"}
    assert_outside_untouched(target, folder)


@pytest.mark.parametrize("kind", ["file-json", "folder-json", "symlink-json-outside", "both-files"])
def test_planted_reward_json_never_outranks_a_number(sandbox, tmp_path, kind):
    # Harbor reads reward.json first: after a number, only reward.txt is there.
    target, folder = plant(sandbox, kind, tmp_path / "outside")
    sandbox.verifier("""
        def verify(workspace):
            return 0.0
    """)
    result = sandbox.run()
    assert result.returncode == 0, result.describe()
    assert result.rewards == {"reward.txt": "0.0"}
    assert_outside_untouched(target, folder)


FAILING_RUNS = {
    "verify-raises": ("def verify(workspace):\n    raise ValueError('boom')\n", 1, ()),
    "import-raises": ("raise ImportError('at import')\n", 1, ()),
    "system-exit-0": ("import sys\ndef verify(workspace):\n    sys.exit(0)\n", 1, ()),
    "bad-value": ("def verify(workspace):\n    return 'yes'\n", 2, ()),
    "no-verify": ("x = 1\n", 2, ()),
    "missing-response": ("def verify(response):\n    return 1.0\n", 2, ()),
    "bad-task-data": ("def verify(workspace):\n    return 1.0\n", 2, ("--task-data", "nowhere.json")),
    "unknown-flag": ("def verify(workspace):\n    return 1.0\n", 2, ("--frobnicate",)),
    "missing-verifier-file": (None, 2, ()),
}


PLANTED_KINDS = ["file-json", "file-txt", "folder-json", "symlink-json-outside", "both-files"]
# Each failure after two kinds of planted verdict, each kind before three or
# four failures. A failure's path decides where the verdict is cleared (at
# the start, on a usage error, after a crash), not the kind planted: the 45 of
# the full cross product would run no other line of the runner.
PLANTED_THEN_FAILING = [
    (PLANTED_KINDS[(index + shift) % len(PLANTED_KINDS)], failure)
    for index, failure in enumerate(sorted(FAILING_RUNS))
    for shift in (0, 2)
]


@pytest.mark.parametrize("kind, failure", PLANTED_THEN_FAILING)
def test_planted_verdict_is_removed_when_the_run_fails(sandbox, tmp_path, kind, failure):
    target, folder = plant(sandbox, kind, tmp_path / "outside")
    source, code, extra = FAILING_RUNS[failure]
    if source is None:
        result = sandbox.run(*extra, verifier=sandbox.tests / "missing.py")
    else:
        sandbox.verifier(source)
        result = sandbox.run(*extra)
    assert result.returncode == code, result.describe()
    assert result.rewards == {}, result.describe()
    assert_outside_untouched(target, folder)


@pytest.mark.parametrize("how, code", [("raise", 1), ("bad", 2), ("exit", 1)])
def test_reward_written_by_verify_itself_is_not_left_on_failure(sandbox, how, code):
    sandbox.verifier(
        """
        import os, sys

        def verify(workspace):
            for name, text in (("reward.txt", "1.0"), ("reward.json", '{"reward": 1.0}')):
                with open(os.path.join(%r, name), "w") as handle:
                    handle.write(text)
            if %r == "raise":
                raise RuntimeError("after writing")
            if %r == "exit":
                sys.exit(0)
            return None
    """
        % (str(sandbox.reward_dir), how, how)
    )
    result = sandbox.run()
    assert result.returncode == code, result.describe()
    assert result.rewards == {}


# Code of the verifier's that runs after verify returned, while the interpreter exits: a
# handler it registered with atexit, a thread it started that the exit waits for, and a
# ThreadPoolExecutor it left running (its workers end through threading's own exit hook).
LATE_WRITERS = {
    "atexit": "import atexit\natexit.register(plant)\n",
    "thread": "import threading\nthreading.Thread(target=plant, args=(0.2,)).start()\n",
    "executor": "import concurrent.futures\nPOOL = concurrent.futures.ThreadPoolExecutor(1)\nPOOL.submit(plant, 0.2)\n",
}
LATE_PLANT = """
import os, time

def plant(delay=0):
    time.sleep(delay)
    for name, text in (("reward.txt", "1.0"), ("reward.json", '{"reward": 1.0}')):
        with open(os.path.join(%r, name), "w") as handle:
            handle.write(text)

def verify(workspace):
%s
    return %s
"""


@pytest.mark.parametrize("how", sorted(LATE_WRITERS))
@pytest.mark.parametrize("returns, code", [("0.0", 0), ("None", 2), ("1 / 0", 1)], ids=["zero", "bad", "raise"])
def test_a_reward_the_verifier_writes_as_the_run_exits_never_stands(sandbox, how, returns, code):
    # Harbor reads reward.json first: a 1.0 planted beside verify's 0.0 was the verdict; after
    # exit 1 or 2 the folder held a reward
    body = "".join("    %s\n" % line for line in LATE_WRITERS[how].splitlines())
    sandbox.verifier(LATE_PLANT % (str(sandbox.reward_dir), body, returns))
    result = sandbox.run()
    assert result.returncode == code, result.describe()
    assert result.rewards == ({"reward.txt": "0.0"} if code == 0 else {}), result.describe()


def test_reward_folder_is_created_when_missing(sandbox, tmp_path):
    sandbox.verifier("""
        def verify(workspace):
            return 0.5
    """)
    reward_dir = tmp_path / "not" / "there" / "yet"
    result = sandbox.run(reward_dir=reward_dir, inspect_reward_dir=reward_dir)
    assert result.returncode == 0, result.describe()
    assert result.rewards == {"reward.txt": "0.5"}


@pytest.mark.parametrize("returns, name", [("0.5", "reward.txt"), ("{'reward': 0.5}", "reward.json")])
def test_a_reward_folder_verify_removed_is_created_again(sandbox, returns, name):
    # exit 2, "cannot write .../reward.txt: No such file or directory", for a verify that cleaned
    # up the folder and returned 0.5: the folder is created when missing, and under Harbor it is a
    # mount point that outlives the removal of what it holds
    sandbox.verifier(
        "import shutil\n\ndef verify(workspace):\n    shutil.rmtree(%r)\n    return %s\n"
        % (str(sandbox.reward_dir), returns)
    )
    result = sandbox.run()
    assert result.returncode == 0, result.describe()
    assert list(result.rewards) == [name], result.describe()


@pytest.mark.parametrize(
    "returns, code, rewards",
    [("{'reward': 0.5}", 0, {"reward.json": '{"reward": 0.5}'}), ("None", 2, {}), ("1 / 0", 1, {})],
    ids=["dict", "bad", "raise"],
)
def test_a_verify_that_lowered_the_recursion_limit_gets_its_verdict(any_sandbox, returns, code, rewards):
    # the runner's own json, its line or the traceback ran out of frames: exit 1 and the
    # runner's own RecursionError traceback, for a good dict too
    any_sandbox.verifier(
        "import sys\n\ndef verify(workspace):\n    sys.setrecursionlimit(25)\n    return %s\n" % returns
    )
    result = any_sandbox.run()
    assert result.returncode == code, result.describe()
    assert result.rewards == rewards, result.describe()
    assert "run_verifier.py" not in result.stderr, result.describe()


@pytest.mark.parametrize("extra", [(), ("--explain-to", "explain.json")], ids=["plain", "explain-to"])
def test_a_recursion_limit_the_module_set_is_verifys_and_the_run_goes_on(any_sandbox, extra):
    # with --explain-to, as every verifier-tui run asks, the extras' JSON ran out of frames: exit
    # 1 and the runner's own traceback, where the sandbox's run wrote the reward; a decorated
    # verify did the same without it (the runner's inspect)
    any_sandbox.verifier("""
        import functools, sys
        sys.setrecursionlimit(30)

        def report(function):
            @functools.wraps(function)
            def wrapper(*args, **kwargs):
                return function(*args, **kwargs)
            return wrapper

        @report
        def verify(workspace):
            return {"reward": 0.5, "limit": sys.getrecursionlimit()}
    """)
    result = any_sandbox.run(*[str(any_sandbox.root / a) if a.endswith(".json") else a for a in extra])
    assert result.returncode == 0, result.describe()
    assert result.reward_json == {"reward": 0.5, "limit": 30}, result.describe()


def test_other_files_in_the_reward_folder_are_kept(sandbox):
    (sandbox.reward_dir / "verifier.log").write_text("log", encoding="utf-8")
    (sandbox.reward_dir / "reward.json.bak").write_text("{}", encoding="utf-8")
    sandbox.verifier("""
        def verify(workspace):
            return 0.5
    """)
    result = sandbox.run()
    assert result.returncode == 0, result.describe()
    assert sorted(os.listdir(str(sandbox.reward_dir))) == ["reward.json.bak", "reward.txt", "verifier.log"]


def test_a_number_whose_own_conversion_raises_is_still_its_value(sandbox):
    sandbox.verifier("""
        class Score(float):
            def __float__(self):
                raise RuntimeError("no float")

        def verify(workspace):
            return Score(0.5)
    """)
    result = sandbox.run()
    assert result.returncode == 0, result.describe()
    assert result.rewards == {"reward.txt": "0.5"}


def test_a_subclass_converting_itself_to_another_number_is_written_as_its_value(sandbox):
    # an int or float subclass is the number it holds: float(text) must give that back, and
    # reward.json is json.dumps of the dict, which writes what the int or float holds
    sandbox.verifier("""
        class Count(int):
            def __float__(self):
                return 0.7

            def __int__(self):
                return 7

            def __index__(self):
                return 7

        class Score(float):
            def __float__(self):
                return 0.9

        def verify(workspace, task_data):
            if task_data["dict"]:
                return {"reward": Score(0.25), "count": Count(1)}
            return Count(1) if task_data["int"] else Score(0.25)
    """)
    for pick, expected in (
        ({"dict": False, "int": True}, {"reward.txt": "1.0"}),
        ({"dict": False, "int": False}, {"reward.txt": "0.25"}),
        ({"dict": True}, {"reward.json": '{"reward": 0.25, "count": 1}'}),
    ):
        data = sandbox.write("data.json", json.dumps(pick))
        result = sandbox.run("--task-data", data)
        assert result.returncode == 0, result.describe()
        assert result.rewards == expected, result.describe()


def test_reward_folder_that_is_a_file_is_a_contract_error(sandbox, tmp_path):
    sandbox.verifier("""
        def verify(workspace):
            return 0.5
    """)
    not_a_folder = tmp_path / "logs-file"
    not_a_folder.write_text("", encoding="utf-8")
    result = sandbox.run(reward_dir=not_a_folder)
    assert result.returncode == 2, result.describe()
    assert len(result.stderr_lines) == 1 and str(not_a_folder) in result.stderr
