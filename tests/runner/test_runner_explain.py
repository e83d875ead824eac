"""--explain (print the run's plan as JSON, call nothing) and --explain-to."""

import json
import os

import pytest

ROLE_HELPERS = "vendored helpers"
ROLE_VERIFIER = "verifier's folder"
ROLE_TESTS = "tests folder"


def marked_verifier(sandbox, signature="workspace", where="tests/verifier.py", returns="1.0", top=""):
    """A verifier whose verify leaves a marker file when it is called."""
    marker = sandbox.root / "verify-was-called"
    sandbox.verifier(
        """
        %s
        def verify(%s):
            open(%r, "w").close()
            return %s
    """
        % (top, signature, str(marker), returns),
        where=where,
    )
    return marker


def explain(result):
    assert result.returncode == 0, result.describe()
    return json.loads(result.stdout)


def assert_untouched(sandbox, marker):
    assert not marker.exists(), "verify was called"
    assert (sandbox.reward_dir / "reward.txt").read_text(encoding="utf-8") == "planted"


def plant_reward(sandbox):
    (sandbox.reward_dir / "reward.txt").write_text("planted", encoding="utf-8")


def test_explain_describes_the_placed_path(sandbox):
    marker = marked_verifier(sandbox, where="tests/checks/verifier.py")
    plant_reward(sandbox)
    doc = explain(sandbox.run("--explain"))
    rows = doc["sys_path"]
    assert [row["role"] for row in rows[:3]] == [ROLE_HELPERS, ROLE_VERIFIER, ROLE_TESTS]
    assert [os.path.realpath(row["path"]) for row in rows[:3]] == [
        os.path.realpath(str(p)) for p in (sandbox.ng, sandbox.tests / "checks", sandbox.tests)
    ]
    assert [row["index"] for row in rows[:3]] == [0, 1, 2]
    assert all(row["role"] == "interpreter" for row in rows[3:])
    assert doc["import_error"] is None
    assert doc["verifier"] == str(sandbox.tests / "checks" / "verifier.py")
    assert doc["workspace"] == str(sandbox.app)
    assert_untouched(sandbox, marker)


def test_explain_reports_a_folder_with_two_roles_once(sandbox):
    marked_verifier(sandbox, where="tests/verifier.py")
    doc = explain(sandbox.run("--explain", flags=("-I",)))
    rows = doc["sys_path"]
    assert rows[0]["roles"] == [ROLE_HELPERS]
    assert rows[1]["roles"] == [ROLE_VERIFIER, ROLE_TESTS]
    assert os.path.realpath(rows[1]["path"]) == os.path.realpath(str(sandbox.tests))
    assert ROLE_TESTS not in [role for row in rows[2:] for role in row["roles"]]
    assert doc["python"]["flags"]["isolated"] is True


def test_explain_shows_where_nemo_gym_resolves_and_what_it_shadows(sandbox, tmp_path):
    marker = marked_verifier(sandbox, top="from nemo_gym.verifiers import x")
    elsewhere = tmp_path / "on-pythonpath"
    sandbox.package(elsewhere, 0.75)
    sandbox.package(sandbox.tests, 0.5)
    sandbox.package(sandbox.ng, 0.25)
    doc = explain(sandbox.run("--explain", pythonpath=[elsewhere]))
    modules = doc["modules"]

    def norm(location):
        return os.path.realpath(location)

    assert norm(modules["nemo_gym"]["resolved"]) == norm(str(sandbox.ng / "nemo_gym" / "__init__.py"))
    assert sorted(map(norm, modules["nemo_gym"]["shadowed"])) == sorted(
        norm(str(base / "nemo_gym" / "__init__.py")) for base in (sandbox.tests, elsewhere)
    )
    assert norm(modules["nemo_gym.verifiers"]["resolved"]) == norm(
        str(sandbox.ng / "nemo_gym" / "verifiers" / "__init__.py")
    )
    assert sorted(map(norm, modules["nemo_gym.verifiers"]["shadowed"])) == sorted(
        norm(str(base / "nemo_gym" / "verifiers" / "__init__.py")) for base in (sandbox.tests, elsewhere)
    )
    assert not marker.exists()


def test_explain_without_any_nemo_gym(sandbox):
    marked_verifier(sandbox)
    doc = explain(sandbox.run("--explain", flags=("-I",)))
    assert doc["modules"]["nemo_gym"] == {"resolved": None, "shadowed": []}
    assert doc["modules"]["nemo_gym.verifiers"] == {"resolved": None, "shadowed": []}


def test_explain_shows_each_parameters_binding(sandbox):
    marker = marked_verifier(sandbox, signature="workspace, /, task_data, *args, bonus=0.5, response=None, **kw")
    plant_reward(sandbox)
    doc = explain(sandbox.run("--explain"))
    rows = {row["name"]: row for row in doc["parameters"]}
    assert [row["name"] for row in doc["parameters"]] == ["workspace", "task_data", "args", "bonus", "response", "kw"]
    assert (rows["workspace"]["binding"], rows["workspace"]["source"], rows["workspace"]["passed"]) == (
        "argument",
        "workspace",
        "positional",
    )
    assert rows["workspace"]["kind"] == "positional-only"
    assert (rows["task_data"]["binding"], rows["task_data"]["passed"]) == ("argument", "keyword")
    assert rows["args"]["binding"] == "nothing"
    assert (rows["bonus"]["binding"], rows["bonus"]["default"]) == ("default", "0.5")
    assert rows["response"]["binding"] == "default"
    assert (rows["kw"]["binding"], rows["kw"]["source"]) == ("argument", ["workspace", "state"])
    assert doc["available"] == ["workspace", "task_data", "state"]
    assert doc["problems"] == []
    assert doc["would_exit"] is None
    assert doc["would_call_verify"] is True
    assert doc["verify"]["signature"] == "verify(workspace, /, task_data, *args, bonus=0.5, response=None, **kw)"
    assert_untouched(sandbox, marker)


def test_explain_with_a_response_binds_it(sandbox):
    marked_verifier(sandbox, signature="response, **kw")
    doc = explain(sandbox.run("--explain", "--response", sandbox.write("r.json", "{}")))
    rows = {row["name"]: row for row in doc["parameters"]}
    assert (rows["response"]["binding"], rows["response"]["source"]) == ("argument", "response")
    assert rows["kw"]["source"] == ["workspace", "task_data", "state"]
    assert "response" in doc["available"]


def test_explain_lists_the_contract_problems(sandbox):
    marker = marked_verifier(sandbox, signature="workspace, response, tolerance")
    plant_reward(sandbox)
    result = sandbox.run("--explain")
    doc = explain(result)
    assert len(doc["problems"]) == 2
    assert "response" in doc["problems"][0] and "tolerance" in doc["problems"][1]
    assert [row["binding"] for row in doc["parameters"]] == ["argument", "missing", "missing"]
    assert doc["would_exit"] == 2
    assert doc["would_call_verify"] is False
    assert result.stderr == ""
    assert_untouched(sandbox, marker)


def test_explain_reports_an_import_error_without_a_traceback_on_stderr(sandbox):
    marker = marked_verifier(sandbox, top="raise ValueError('broken at import')")
    plant_reward(sandbox)
    result = sandbox.run("--explain")
    doc = explain(result)
    assert doc["import_error"]["type"] == "ValueError"
    assert "broken at import" in doc["import_error"]["message"]
    assert doc["would_exit"] == 1
    assert doc["would_call_verify"] is False
    assert_untouched(sandbox, marker)


@pytest.mark.parametrize(
    "raised, message",
    [("ValueError('boom')", "boom"), ("KeyError('key')", "'key'"), ("ValueError()", ""), ("Unprintable()", None)],
)
def test_explain_gives_an_import_errors_message_as_its_traceback_does(sandbox, raised, message):
    """--explain's ``import_error`` message went through repr(): ``'boom'``
    with quotes, where the traceback says ``ValueError: boom``; KeyError's
    own quotes were doubled. Read as the traceback reads it, never with a
    ``str()`` that raises."""
    sandbox.verifier(
        """
        class Unprintable(Exception):
            def __str__(self):
                raise ValueError("no words")

        raise %s
    """
        % raised
    )
    error = explain(sandbox.run("--explain"))["import_error"]
    assert error["message"] == (message if message is not None else "<unprintable Unprintable>")
    last = error["traceback"].rstrip().splitlines()[-1]
    if message is not None:
        assert last == ("%s: %s" % (error["type"], message) if message else error["type"]), last


def test_an_import_error_that_cannot_print_itself_is_explained_and_run_as_harbor_runs_it(sandbox):
    """The module raises, at import, an exception whose ``__str__`` raises:
    ``--explain`` (and a run with ``--explain-to``, as verifier-tui runs every
    verifier) crashed in the runner's own code, so explain said "the runner
    gave no explanation" with the runner's traceback, and a run's stderr
    carried that traceback after the verifier's ("During handling of the above
    exception ...")."""
    sandbox.verifier("""
        class Unprintable(Exception):
            def __str__(self):
                raise ValueError("no words")

        raise Unprintable()
    """)
    doc = explain(sandbox.run("--explain"))
    assert doc["import_error"]["type"] == "Unprintable" and doc["would_exit"] == 1
    assert "Unprintable" in doc["import_error"]["traceback"]
    result = sandbox.run("--explain-to", sandbox.root / "explained.json")
    assert result.returncode == 1 and result.rewards == {}, result.describe()
    assert "During handling" not in result.stderr and "run_verifier" not in result.stderr, result.stderr
    assert result.stderr.rstrip().endswith("Unprintable: <exception str() failed>"), result.stderr
    assert json.loads((sandbox.root / "explained.json").read_text())["import_error"]["type"] == "Unprintable"


def test_explain_imports_the_module(sandbox):
    # --help says so: the module's top-level code runs, verify does not.
    imported = sandbox.root / "module-was-imported"
    marker = marked_verifier(sandbox, top="open(%r, 'w').close()" % str(imported))
    explain(sandbox.run("--explain"))
    assert imported.exists()
    assert not marker.exists()


def test_explain_does_not_create_the_reward_folder(sandbox, tmp_path):
    marker = marked_verifier(sandbox)
    reward_dir = tmp_path / "no" / "reward" / "folder"
    doc = explain(sandbox.run("--explain", reward_dir=reward_dir))
    assert doc["reward_dir"] == str(reward_dir)
    assert not reward_dir.exists()
    assert not marker.exists()


def test_explain_reports_the_default_reward_folder(sandbox):
    marked_verifier(sandbox)
    doc = explain(sandbox.run("--explain", reward_dir=None))
    assert doc["reward_dir"] == "/logs/verifier"


@pytest.mark.parametrize("case", ["missing-verifier", "no-verify", "bad-response"])
def test_explain_of_a_broken_run_touches_nothing(sandbox, case):
    plant_reward(sandbox)
    marker = sandbox.root / "verify-was-called"
    extra = []
    verifier = sandbox.verifier_path
    if case == "missing-verifier":
        verifier = sandbox.tests / "nowhere.py"
    elif case == "no-verify":
        sandbox.verifier("x = 1\n")
    else:
        marker = marked_verifier(sandbox)
        extra = ["--response", sandbox.write("r.json", "[]")]
    doc = explain(sandbox.run("--explain", *extra, verifier=verifier))
    assert doc["would_exit"] == 2
    assert len(doc["problems"]) == 1
    assert_untouched(sandbox, marker)


def test_explain_on_every_interpreter(any_sandbox):
    marker = marked_verifier(any_sandbox, signature="workspace, /")
    plant_reward(any_sandbox)
    doc = explain(any_sandbox.run("--explain"))
    assert [row["role"] for row in doc["sys_path"][:2]] == [ROLE_HELPERS, ROLE_VERIFIER]
    assert doc["parameters"][0]["passed"] == "positional"
    assert_untouched(any_sandbox, marker)


# --------------------------------------------------------------------------
# --explain-to: the same JSON in a file, and the run goes on as usual.


def test_explain_to_writes_the_file_and_the_run_proceeds(any_sandbox):
    marker = marked_verifier(any_sandbox, returns="0.5")
    plant_reward(any_sandbox)
    target = any_sandbox.root / "explain.json"
    result = any_sandbox.run("--explain-to", target)
    assert result.returncode == 0, result.describe()
    assert result.stdout == "" and result.stderr == ""
    assert result.rewards == {"reward.txt": "0.5"}
    assert marker.exists()
    doc = json.loads(target.read_text(encoding="utf-8"))
    assert doc["would_exit"] is None
    assert doc["would_call_verify"] is True
    assert [row["role"] for row in doc["sys_path"][:2]] == [ROLE_HELPERS, ROLE_VERIFIER]
    assert doc["parameters"][0]["binding"] == "argument"


def test_explain_to_matches_explain(sandbox):
    marked_verifier(sandbox, signature="workspace, task_data, bonus=2")
    target = sandbox.root / "explain.json"
    printed = explain(sandbox.run("--explain"))
    sandbox.run("--explain-to", target)
    written = json.loads(target.read_text(encoding="utf-8"))
    for key in ("sys_path", "modules", "parameters", "problems", "available", "verify", "would_exit"):
        assert written[key] == printed[key], key


def test_explain_to_on_a_contract_error(sandbox):
    marked_verifier(sandbox, signature="response")
    target = sandbox.root / "explain.json"
    result = sandbox.run("--explain-to", target)
    result.assert_contract_error("response")
    doc = json.loads(target.read_text(encoding="utf-8"))
    assert doc["would_exit"] == 2
    assert "response" in doc["problems"][0]


def test_explain_to_when_verify_raises(sandbox):
    verifier = sandbox.verifier("""
        def verify(workspace):
            raise RuntimeError("boom")
    """)
    target = sandbox.root / "explain.json"
    result = sandbox.run("--explain-to", target)
    result.assert_verifier_raised(verifier, "RuntimeError")
    assert json.loads(target.read_text(encoding="utf-8"))["would_call_verify"] is True


def test_explain_to_an_unwritable_place_does_not_change_the_run(sandbox):
    marked_verifier(sandbox, returns="0.5")
    result = sandbox.run("--explain-to", sandbox.root / "no-such-folder" / "explain.json")
    assert result.returncode == 0, result.describe()
    assert result.rewards == {"reward.txt": "0.5"}


def test_explain_to_is_not_rewritten_after_a_bad_return_value(sandbox):
    # The file describes the run up to the call; the exit code tells the rest.
    marked_verifier(sandbox, returns="None")
    target = sandbox.root / "explain.json"
    result = sandbox.run("--explain-to", target)
    result.assert_contract_error("verify returned")
    doc = json.loads(target.read_text(encoding="utf-8"))
    assert doc["would_call_verify"] is True
    assert doc["problems"] == []


def test_explain_shows_the_path_as_placed_even_if_the_module_changes_it(sandbox):
    marked_verifier(
        sandbox,
        where="tests/checks/verifier.py",
        top="import sys; sys.path.insert(0, %r)" % str(sandbox.root / "inserted-by-verifier"),
    )
    doc = explain(sandbox.run("--explain"))
    assert doc["import_error"] is None
    rows = doc["sys_path"]
    assert [row["role"] for row in rows[:3]] == [ROLE_HELPERS, ROLE_VERIFIER, ROLE_TESTS]
    assert str(sandbox.root / "inserted-by-verifier") not in [row["path"] for row in rows]


def test_explains_traceback_starts_at_the_verifiers_own_code(sandbox):
    # --explain's traceback of an import error began at the runner's _run and
    # load_verify and importlib's frames, which the run's stderr leaves out:
    # `explain` showed the runner's own lines where `run` showed the verifier's.
    sandbox.verifier("import helper\n\ndef verify(workspace):\n    return 1.0\n")
    sandbox.write("tests/helper.py", "raise ValueError('broken at import')\n")
    doc = explain(sandbox.run("--explain"))
    text = doc["import_error"]["traceback"]
    stderr = sandbox.run().stderr
    assert "run_verifier" not in text and "importlib" not in text, text
    assert text == stderr, (text, stderr)


@pytest.mark.parametrize(
    "definition",
    [
        "async def _grade(workspace, bonus):\n    return 1.0\n\nverify = functools.partial(_grade, bonus=1)\n",
        "class Verify:\n    async def __call__(self, workspace):\n        return 1.0\n\nverify = Verify()\n",
    ],
    ids=["partial", "instance"],
)
def test_explain_says_a_verify_that_is_awaited_is_async_whatever_wraps_it(sandbox, definition):
    """A partial of an ``async def``, or an object whose ``__call__`` is one:
    the runner awaits what it returns, but --explain said ``is_async`` false
    (it looked only for a function's own code), so explain and the resolution
    panel never said verify is run with asyncio.run."""
    sandbox.verifier("import functools\n\n" + definition)
    assert explain(sandbox.run("--explain"))["verify"]["is_async"] is True
    result = sandbox.run()
    assert result.returncode == 0 and result.rewards == {"reward.txt": "1.0"}, result.describe()
