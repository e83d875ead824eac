"""sys.path placement, where nemo_gym resolves, helpers, standard library only."""

import ast
import json
import os
import sys

import pytest

# The path is what a held runner has already made when it is told to go:
# these tests start the runner warm as well as cold (conftest.py).
WARM_TOO = True

FLAG_SETS = [(), ("-I",), ("-S",), ("-B",), ("-I", "-S", "-B")]
FLAG_IDS = ["plain", "-I", "-S", "-B", "-I-S-B"]
LOCATIONS = ["tests/verifier.py", "tests/checks/verifier.py", "tests/.ng/verifier.py"]

PRINT_PATH = """
    import json
    import sys

    def verify(workspace):
        print(json.dumps(sys.path))
        return 1.0
"""


def real(entry, cwd):
    return os.path.realpath(os.path.join(str(cwd), entry or "."))


def expected_front(sandbox, location):
    """The folders the contract puts first, for a verifier at ``location``."""
    verifier_dir = (sandbox.root / location).parent
    front = []
    for folder in (sandbox.ng, verifier_dir, sandbox.tests):
        if os.path.realpath(str(folder)) not in front:
            front.append(os.path.realpath(str(folder)))
    return front


def assert_placed(result, sandbox, location, cwd=None):
    assert result.returncode == 0, result.describe()
    path = result.stdout_json()
    cwd = cwd or sandbox.root
    resolved = [real(entry, cwd) for entry in path if isinstance(entry, str)]
    front = expected_front(sandbox, location)
    assert resolved[: len(front)] == front, path
    for folder in front:
        assert resolved.count(folder) == 1, "%s appears %d times in %s" % (folder, resolved.count(folder), path)
    assert resolved[len(front)] not in front
    return path


@pytest.mark.parametrize("location", LOCATIONS)
@pytest.mark.parametrize("flags", FLAG_SETS, ids=FLAG_IDS)
def test_path_order_however_the_interpreter_starts(sandbox, flags, location):
    sandbox.verifier(PRINT_PATH, where=location)
    result = sandbox.run(flags=flags)
    path = assert_placed(result, sandbox, location)
    # The entries the runner places are spelled as absolute paths.
    assert all(os.path.isabs(entry) for entry in path[:3])


@pytest.mark.parametrize("flags", [(), ("-I", "-S")], ids=["plain", "-I-S"])
def test_path_order_on_every_interpreter(any_sandbox, flags):
    any_sandbox.verifier(PRINT_PATH, where="tests/checks/verifier.py")
    result = any_sandbox.run(flags=flags)
    assert_placed(result, any_sandbox, "tests/checks/verifier.py")


def test_relative_runner_verifier_and_workspace(any_sandbox):
    # python3 tests/.ng/run_verifier.py from the folder above: on 3.8 the
    # script's __file__ and sys.path[0] are relative.
    any_sandbox.verifier(PRINT_PATH, where="tests/checks/verifier.py")
    result = any_sandbox.run_raw(
        "--verifier",
        "tests/checks/verifier.py",
        "--workspace",
        "app",
        "--reward-dir",
        "logs/verifier",
        runner="tests/.ng/run_verifier.py",
        cwd=any_sandbox.root,
    )
    assert_placed(result, any_sandbox, "tests/checks/verifier.py")
    assert result.rewards == {"reward.txt": "1.0"}


@pytest.mark.parametrize("flags", [(), ("-S",), ("-B",)], ids=["plain", "-S", "-B"])
@pytest.mark.parametrize("location", LOCATIONS)
def test_pythonpath_entries_spelled_differently_are_moved_not_duplicated(sandbox, flags, location):
    sandbox.verifier(PRINT_PATH, where=location)
    (sandbox.tests / "checks").mkdir(exist_ok=True)
    alias = sandbox.root / "alias-of-ng"
    os.symlink(str(sandbox.ng), str(alias))
    pythonpath = [
        str(sandbox.tests) + os.sep,  # trailing slash
        ".",  # the cwd, which is the tests folder
        str(sandbox.tests / "checks") + os.sep + ".." + os.sep + "checks",  # with '..'
        str(alias),  # a link to .ng
        str(sandbox.ng) + os.sep,
    ]
    result = sandbox.run(flags=flags, pythonpath=pythonpath, cwd=sandbox.tests)
    assert_placed(result, sandbox, location, cwd=sandbox.tests)


def test_path_entries_from_a_pth_file_are_moved(any_sandbox, tmp_path):
    # A .pth file (processed by site, here through sitecustomize and
    # site.addsitedir) adds the tests folder and .ng under other names, and
    # imports a nemo_gym from that site folder before the runner starts.
    site_dir = tmp_path / "site-packages"
    site_dir.mkdir()
    any_sandbox.package(site_dir, 0.875)
    tests_alias = tmp_path / "tests-alias"
    ng_alias = tmp_path / "ng-alias"
    os.symlink(str(any_sandbox.tests), str(tests_alias))
    os.symlink(str(any_sandbox.ng), str(ng_alias))
    (site_dir / "zz-planted.pth").write_text(
        "%s\n%s\nimport nemo_gym.verifiers\n" % (tests_alias, ng_alias), encoding="utf-8"
    )
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "import site, sys\nsite.addsitedir(%r)\nprint('preloaded', sys.modules['nemo_gym.verifiers'].x)\n"
        % str(site_dir),
        encoding="utf-8",
    )
    any_sandbox.package(any_sandbox.ng, 0.25)
    any_sandbox.verifier(
        """
        import json
        import sys
        from nemo_gym.verifiers import x

        def verify(workspace):
            print(json.dumps(sys.path))
            return x
    """,
        where="tests/checks/verifier.py",
    )
    result = any_sandbox.run(pythonpath=[hook])
    path = assert_placed(result, any_sandbox, "tests/checks/verifier.py")
    assert "preloaded 0.875" in result.stdout  # the .pth did import the site copy first
    assert str(tests_alias) not in path and str(ng_alias) not in path
    assert result.rewards == {"reward.txt": "0.25"}


def test_a_lazy_nemo_gym_imported_before_the_runner_is_forgotten_not_read(any_sandbox, tmp_path):
    # sitecustomize (or a .pth file) put a lazy stand-in for nemo_gym in sys.modules, one whose every
    # attribute imports what is not installed: the runner read its __file__ with getattr, whose default
    # catches AttributeError alone, and ended in its own traceback before the verifier was imported.
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "import sys\n\nclass Stub:\n    def __getattr__(self, name):\n        import not_installed_backend\n\n"
        "sys.modules['nemo_gym'] = Stub()\n",
        encoding="utf-8",
    )
    any_sandbox.package(any_sandbox.ng, 0.25)
    any_sandbox.verifier("from nemo_gym.verifiers import x\n\ndef verify(workspace):\n    return x\n")
    result = any_sandbox.run(pythonpath=[hook])
    assert result.returncode == 0 and "run_verifier" not in result.stderr, result.describe()
    assert result.rewards == {"reward.txt": "0.25"}


# --------------------------------------------------------------------------
# nemo_gym always resolves to the vendored copy.

NEMO_GYM_VERIFIER = """
    import nemo_gym
    from nemo_gym.verifiers import x

    def verify(workspace):
        print("nemo_gym from", nemo_gym.ORIGIN)
        return x
"""


def plant_nemo_gym_everywhere(sandbox, tmp_path):
    elsewhere = tmp_path / "on-pythonpath"
    sandbox.package(elsewhere, 0.75)
    sandbox.package(sandbox.tests, 0.5)
    sandbox.package(sandbox.tests / "checks", 0.125)
    sandbox.package(sandbox.ng, 0.25)
    return elsewhere


@pytest.mark.parametrize("location", LOCATIONS)
@pytest.mark.parametrize("flags", FLAG_SETS, ids=FLAG_IDS)
def test_nemo_gym_resolves_to_the_vendored_copy(sandbox, tmp_path, flags, location):
    elsewhere = plant_nemo_gym_everywhere(sandbox, tmp_path)
    sandbox.verifier(NEMO_GYM_VERIFIER, where=location)
    result = sandbox.run(flags=flags, pythonpath=[elsewhere, sandbox.tests, sandbox.tests / "checks"])
    assert result.returncode == 0, result.describe()
    assert result.rewards == {"reward.txt": "0.25"}
    assert "nemo_gym from %s" % sandbox.ng in result.stdout


def test_nemo_gym_resolves_to_the_vendored_copy_on_every_interpreter(any_sandbox, tmp_path):
    elsewhere = plant_nemo_gym_everywhere(any_sandbox, tmp_path)
    any_sandbox.verifier(NEMO_GYM_VERIFIER)
    result = any_sandbox.run(pythonpath=[elsewhere, any_sandbox.tests])
    assert result.returncode == 0, result.describe()
    assert result.rewards == {"reward.txt": "0.25"}


def test_without_a_vendored_copy_the_tests_copy_is_not_preferred_over_verifier_folder(sandbox, tmp_path):
    # Nothing vendored: the order still holds (verifier's folder, then tests).
    sandbox.package(sandbox.tests, 0.5)
    sandbox.package(sandbox.tests / "checks", 0.125)
    sandbox.verifier(NEMO_GYM_VERIFIER, where="tests/checks/verifier.py")
    result = sandbox.run()
    assert result.returncode == 0, result.describe()
    assert result.rewards == {"reward.txt": "0.125"}


def test_runner_itself_imports_no_nemo_gym(sandbox, tmp_path):
    elsewhere = plant_nemo_gym_everywhere(sandbox, tmp_path)
    sandbox.verifier("""
        import sys

        def verify(workspace):
            print("loaded", sorted(name for name in sys.modules if name.split(".")[0] == "nemo_gym"))
            return 1.0
    """)
    result = sandbox.run(pythonpath=[elsewhere])
    assert result.returncode == 0, result.describe()
    assert "loaded []" in result.stdout


# --------------------------------------------------------------------------
# Helpers.


def test_helper_beside_a_verifier_in_a_subfolder(sandbox):
    sandbox.write("tests/checks/grading.py", "SCORE = 0.5\n")
    sandbox.verifier(
        """
        from grading import SCORE

        def verify(workspace):
            return SCORE
    """,
        where="tests/checks/verifier.py",
    )
    result = sandbox.run()
    assert result.returncode == 0, result.describe()
    assert result.rewards == {"reward.txt": "0.5"}


def test_helper_in_tests_for_a_verifier_published_under_ng(any_sandbox):
    any_sandbox.write("tests/grading.py", "SCORE = 0.5\n")
    any_sandbox.verifier(
        """
        from grading import SCORE

        def verify(workspace):
            return SCORE
    """,
        where="tests/.ng/verifier.py",
    )
    result = any_sandbox.run()
    assert result.returncode == 0, result.describe()
    assert result.rewards == {"reward.txt": "0.5"}


@pytest.mark.parametrize("flags", [("-I",), ("-S",)], ids=["-I", "-S"])
def test_helper_in_tests_for_a_verifier_in_a_subfolder(sandbox, flags):
    sandbox.write("tests/grading.py", "SCORE = 0.5\n")
    sandbox.verifier(
        """
        from grading import SCORE

        def verify(workspace):
            return SCORE
    """,
        where="tests/checks/verifier.py",
    )
    result = sandbox.run(flags=flags)
    assert result.returncode == 0, result.describe()
    assert result.rewards == {"reward.txt": "0.5"}


def test_a_verifier_that_is_a_packages_init_is_named_by_its_package(sandbox):
    """A verifier that is a package's ``__init__.py`` (``tests/grader/__init__.py``,
    named by a shim's ``--verifier`` or chosen with ``--verifier``) was loaded
    as a module named ``__init__``: its ``__name__`` (so its loggers) and a
    trial's phase line (``module __init__``) said so, and ``import grader`` (the
    tests folder is on sys.path) ran its code again as a second module, as
    ``import verifier`` never does for ``tests/verifier.py``; its ``from .
    import scoring`` found no parent package. It is that package now, as
    ``import grader`` makes it."""
    sandbox.write("tests/grader/scoring.py", "SCORE = 1.0\n")
    sandbox.verifier(
        """
        import sys
        from . import scoring
        print("imported as", __name__)

        def verify(workspace):
            import grader
            from grader import scoring as same
            return scoring.SCORE if grader is sys.modules[verify.__module__] and same is scoring else 0.0
    """,
        where="tests/grader/__init__.py",
    )
    phases = sandbox.root / "phases.jsonl"
    result = sandbox.run("--phases-to", str(phases))
    assert result.returncode == 0 and result.rewards == {"reward.txt": "1.0"}, result.describe()
    assert result.stdout.splitlines() == ["imported as grader"], result.describe()
    assert '"module": "grader"' in phases.read_text(encoding="utf-8")


def test_search_order_between_the_three_folders(sandbox):
    # Same module names in several folders: .ng > verifier's folder > tests.
    sandbox.write("tests/.ng/first.py", "WHERE = 'ng'\n")
    sandbox.write("tests/checks/first.py", "WHERE = 'checks'\n")
    sandbox.write("tests/first.py", "WHERE = 'tests'\n")
    sandbox.write("tests/checks/second.py", "WHERE = 'checks'\n")
    sandbox.write("tests/second.py", "WHERE = 'tests'\n")
    sandbox.verifier(
        """
        import first, second

        def verify(workspace):
            print(first.WHERE, second.WHERE)
            return 1.0
    """,
        where="tests/checks/verifier.py",
    )
    result = sandbox.run(flags=("-I",))
    assert result.returncode == 0, result.describe()
    assert "ng checks" in result.stdout


# --------------------------------------------------------------------------
# Standard library only; -B honoured.


def _runner_imports(source):
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.skipif(sys.version_info < (3, 10), reason="sys.stdlib_module_names needs Python 3.10")
def test_runner_imports_only_the_standard_library(sandbox):
    names = _runner_imports(sandbox.runner.read_text(encoding="utf-8"))
    assert names, "no imports found"
    assert sorted(names - set(sys.stdlib_module_names)) == []


@pytest.mark.skipif(sys.version_info < (3, 10), reason="sys.stdlib_module_names needs Python 3.10")
@pytest.mark.parametrize("returns", ["0.5", "{'reward': 0.5}", "None"])
def test_nothing_outside_the_standard_library_is_loaded_at_run_time(sandbox, returns):
    # Under -I -S nothing from site-packages is imported by the interpreter;
    # whatever is loaded when the run ends was loaded by the runner.
    sandbox.write(
        "tests/probe.py",
        """
        import atexit, json, sys

        @atexit.register
        def dump():
            with open(%r, "w") as handle:
                json.dump(sorted(sys.modules), handle)
    """
        % str(sandbox.root / "modules.json"),
    )
    sandbox.verifier(
        """
        import probe

        def verify(workspace):
            return %s
    """
        % returns
    )
    result = sandbox.run("--task-data", sandbox.write("data.json", "{}"), flags=("-I", "-S"))
    assert result.returncode in (0, 2), result.describe()
    loaded = json.loads((sandbox.root / "modules.json").read_text(encoding="utf-8"))
    outside = sorted(
        {name.split(".")[0] for name in loaded}
        - set(sys.stdlib_module_names)
        - set(sys.builtin_module_names)
        - {"__main__", "verifier", "probe"}
    )
    assert outside == []


def test_dash_b_writes_no_bytecode(sandbox):
    sandbox.write("tests/grading.py", "SCORE = 0.5\n")
    sandbox.verifier("""
        from grading import SCORE

        def verify(workspace):
            return SCORE
    """)
    result = sandbox.run(flags=("-B",))
    assert result.returncode == 0, result.describe()
    caches = [root for root, dirs, _ in os.walk(str(sandbox.root)) if "__pycache__" in dirs]
    assert caches == []


SHADOWED = {
    "json": ("def verify(workspace):\n    return {'reward': 1.0}\n", 0, "reward.json"),
    "asyncio": ("async def verify(workspace):\n    return 1.0\n", 0, "reward.txt"),
    "inspect": (
        "import functools\n\n"
        "def deco(f):\n    @functools.wraps(f)\n    def wrapper(*a, **k):\n        return f(*a, **k)\n"
        "    return wrapper\n\n"
        "@deco\ndef verify(workspace):\n    return 1.0\n",
        0,
        "reward.txt",
    ),
    "traceback": ("def verify(workspace):\n    raise ValueError('boom')\n", 1, None),
    "shutil": (
        "def verify(workspace):\n    import os\n    os.makedirs('%s/reward.txt/x')\n    return 1.0\n",
        0,
        "reward.txt",
    ),
}


@pytest.mark.parametrize("name", sorted(SHADOWED))
@pytest.mark.parametrize("flags", [(), ("-I", "-S")], ids=["plain", "-I-S"])
def test_a_helper_named_like_a_module_the_runner_imports_late_is_the_verifiers_alone(sandbox, name, flags):
    # The runner imports json, asyncio, inspect, traceback and shutil only when
    # a run needs them, after the task's folders lead sys.path: a helper
    # tests/json.py stood in for them and the runner crashed with its own
    # traceback (exit 1, "module 'json' has no attribute 'dumps'") on a verify
    # that returned a good dict. The verifier's own import still gets its helper.
    source, code, written = SHADOWED[name]
    sandbox.write("tests/%s.py" % name, "SHADOW = True\n")
    body = source % str(sandbox.reward_dir) if name == "shutil" else source
    # An async verify that imports its own asyncio.py could not run anywhere: that one only sits beside it.
    own = "" if name == "asyncio" else "import %s\nassert %s.SHADOW\n\n" % (name, name)
    sandbox.verifier(own + body)
    result = sandbox.run("--explain-to", sandbox.root / "e.json", flags=flags)
    assert result.returncode == code, result.describe()
    assert "run_verifier" not in result.stderr, result.describe()
    if written is None:
        assert "ValueError: boom" in result.stderr and result.rewards == {}, result.describe()
    else:
        assert list(result.rewards) == [written], result.describe()
    assert json.loads((sandbox.root / "e.json").read_text(encoding="utf-8"))["verify"]


# What a verifier does to sys.path and sys.modules before the runner writes
# its dict: (files to plant, verifier source, the reward.json expected).
REACHED_FROM_VERIFY = {
    # sys.modules['json'] replaced by something that is no module of json
    "replaced": (
        {},
        "import sys, types\n\ndef verify(workspace):\n"
        "    sys.modules['json'] = types.SimpleNamespace()\n    return {'reward': 1.0}\n",
        {"reward": 1.0},
    ),
    # a folder of the tests put on sys.path by the verifier itself, with a json.py
    "subfolder": (
        {"tests/lib/json.py": "SHADOW = True\n"},
        "import os, sys\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))\n\n"
        "def verify(workspace):\n    return {'reward': 1.0}\n",
        {"reward": 1.0},
    ),
    # the workspace put on sys.path to read the agent's code: the agent's json.py wrote the verdict
    "workspace": (
        {"app/json.py": "def dumps(*args, **kwargs):\n    return '{\"reward\": 1.0}'\n"},
        "import sys\n\ndef verify(workspace):\n    sys.path.insert(0, str(workspace))\n    return {'reward': 0.0}\n",
        {"reward": 0.0},
    ),
    # ... and imported from there as json
    "workspace-imported": (
        {"app/json.py": "def dumps(*args, **kwargs):\n    return '{\"reward\": 1.0}'\n"},
        "import sys\n\ndef verify(workspace):\n    sys.path.insert(0, str(workspace))\n"
        "    sys.modules.pop('json', None)\n    import json\n    return {'reward': 0.0}\n",
        {"reward": 0.0},
    ),
    # a helper package tests/json/ whose submodule the verifier imported
    "package": (
        {"tests/json/__init__.py": "SHADOW = True\n", "tests/json/decoder.py": "SHADOW = True\n"},
        "import json.decoder\nassert json.SHADOW\n\ndef verify(workspace):\n    return {'reward': 1.0}\n",
        {"reward": 1.0},
    ),
    # a lazy module in sys.modules (six.moves', a LazyLoader's) whose every attribute, __file__ and
    # __name__ too, imports what is not installed: reading it raised ImportError in the runner's search
    "lazy": (
        {},
        "import sys, types\n\nclass Lazy(types.ModuleType):\n    def __getattr__(self, name):\n"
        "        import not_installed_backend\n\nclass Stub:\n    def __getattr__(self, name):\n"
        "        import not_installed_backend\n\n"
        "sys.modules['optional_backend'] = Lazy('optional_backend')\nsys.modules['other_backend'] = Stub()\n\n"
        "def verify(workspace):\n    sys.modules['json'] = Stub()\n    return {'reward': 1.0}\n",
        {"reward": 1.0},
    ),
}


@pytest.mark.parametrize("case", sorted(REACHED_FROM_VERIFY))
@pytest.mark.parametrize("flags", [(), ("-I", "-S")], ids=["plain", "-I-S"])
def test_the_runners_json_is_the_standard_librarys_whatever_the_verifier_did_to_the_path(sandbox, case, flags):
    # The runner's late json looked past the three folders it placed, and
    # nothing else: a json the verifier's own sys.path or sys.modules led to
    # wrote reward.json (an agent's app/json.py forged a 1.0 for a verify that
    # returned 0.0), or crashed the runner with its own traceback.
    files, source, expected = REACHED_FROM_VERIFY[case]
    for relative, text in files.items():
        sandbox.write(relative, text)
    sandbox.verifier(source)
    for extra in ((), ("--explain-to", sandbox.root / "e.json")):
        result = sandbox.run(*extra, flags=flags)
        assert result.returncode == 0, result.describe()
        assert result.reward_json == expected and result.stderr == "", result.describe()


@pytest.mark.parametrize("module", ["threading", "atexit"])
def test_a_lazy_threading_or_atexit_in_sys_modules_keeps_the_verdict(sandbox, module):
    # verify left a lazy stand-in for threading (or atexit) in sys.modules, whose every attribute imports
    # what is not installed: the runner, running what the exit would (threading._shutdown), read it with
    # getattr, whose default catches AttributeError alone, and ended in its own traceback, exit 1, with
    # reward.json still in the folder. The interpreter's own exit says such an error and still exits 0.
    sandbox.verifier(
        "import sys\n\nclass Stub:\n    def __getattr__(self, name):\n        import not_installed_backend\n\n"
        "def verify(workspace):\n    sys.modules[%r] = Stub()\n    return {'reward': 1.0}\n" % module
    )
    result = sandbox.run()
    assert result.returncode == 0 and "run_verifier" not in result.stderr, result.describe()
    assert result.reward_json == {"reward": 1.0}, result.describe()


@pytest.mark.parametrize("flags", [(), ("-I", "-S")], ids=["plain", "-I-S"])
def test_the_extras_json_leaves_the_verifier_its_own_json(sandbox, flags):
    # --phases-to writes a line as each phase ends, before the verifier is
    # imported, and --explain-to just before verify is called: their json
    # stayed in sys.modules, so with them (the trial replay asks for phases)
    # the verifier's `import json` got the standard library's where the
    # sandbox's run gives it its helper tests/json.py.
    sandbox.write("tests/json.py", "SHADOW = True\n")
    sandbox.verifier(
        "import json\n\ndef verify(workspace):\n    import json as again\n"
        "    return 1.0 if getattr(json, 'SHADOW', False) and getattr(again, 'SHADOW', False) else 0.0\n"
    )
    for extra in ((), ("--phases-to", sandbox.root / "p.jsonl"), ("--explain-to", sandbox.root / "e.json")):
        result = sandbox.run(*extra, flags=flags)
        assert result.returncode == 0 and result.reward_txt == "1.0", (extra, result.describe())
    assert json.loads((sandbox.root / "e.json").read_text(encoding="utf-8"))["verify"]
    last = (sandbox.root / "p.jsonl").read_text(encoding="utf-8").splitlines()[-1]
    assert json.loads(last)["phase"] == "reward_written"
