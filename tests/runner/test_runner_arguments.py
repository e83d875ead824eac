"""Which arguments verify gets, and the four arguments' values."""

import json
import os
import sys

import pytest

REPORT = """
    import json
    from pathlib import Path

    def report(**values):
        def plain(value):
            if isinstance(value, Path):
                return {"Path": str(value), "absolute": value.is_absolute()}
            if isinstance(value, dict):
                return {"dict": {k: plain(v) for k, v in value.items()}}
            return repr(value)
        print(json.dumps({name: plain(value) for name, value in values.items()}, sort_keys=True))
"""


def test_positional_only_parameter_gets_the_workspace(any_sandbox):
    any_sandbox.verifier("""
        from pathlib import Path

        def verify(workspace, /):
            print("got", type(workspace).__name__, workspace)
            return 1.0 if isinstance(workspace, Path) else 0.0
    """)
    result = any_sandbox.run()
    assert result.returncode == 0, result.describe()
    assert result.rewards == {"reward.txt": "1.0"}
    assert "got %s %s" % (type(any_sandbox.app).__name__, any_sandbox.app) in result.stdout


def test_positional_only_parameters_keep_their_order_and_defaults(sandbox):
    # An unknown positional-only parameter with a default before a known one
    # keeps its default; the known ones arrive by position, in order.
    sandbox.verifier("""
        def verify(bonus=0.25, task_data=None, state=None, /, response="none"):
            assert isinstance(task_data, dict) and task_data == {}, task_data
            assert set(state) == {"workspace"}, state
            assert response == "none", response
            return bonus
    """)
    result = sandbox.run()
    assert result.returncode == 0, result.describe()
    assert result.rewards == {"reward.txt": "0.25"}


def test_keyword_only_parameters_get_their_values(sandbox):
    sandbox.verifier(
        REPORT
        + """
    def verify(*, workspace, task_data, state):
        report(workspace=workspace, task_data=task_data, state=state)
        return 1.0
    """
    )
    result = sandbox.run()
    assert result.returncode == 0, result.describe()
    seen = result.stdout_json()
    app = str(sandbox.app)
    assert seen == {
        "workspace": {"Path": app, "absolute": True},
        "task_data": {"dict": {}},
        "state": {"dict": {"workspace": {"Path": app, "absolute": True}}},
    }


def test_only_declared_arguments_are_passed(sandbox):
    sandbox.verifier("""
        def verify(state):
            return 0.5
    """)
    result = sandbox.run()
    assert result.returncode == 0, result.describe()
    assert result.rewards == {"reward.txt": "0.5"}


def test_verify_without_parameters_is_called(sandbox):
    sandbox.verifier("""
        def verify():
            return 0.5
    """)
    result = sandbox.run()
    assert result.returncode == 0, result.describe()
    assert result.rewards == {"reward.txt": "0.5"}


def test_unknown_parameter_with_a_default_keeps_it(sandbox):
    sandbox.verifier("""
        def verify(workspace, bonus=0.125, *, scale=2):
            return bonus * scale
    """)
    result = sandbox.run()
    assert result.returncode == 0, result.describe()
    assert result.rewards == {"reward.txt": "0.25"}


@pytest.mark.parametrize("signature", ["workspace, tolerance", "workspace, *, tolerance", "tolerance, /"])
def test_unknown_parameter_without_a_default_is_a_contract_error(sandbox, signature):
    sandbox.verifier(
        """
        def verify(%s):
            return 1.0
    """
        % signature
    )
    result = sandbox.run()
    result.assert_contract_error("tolerance")


def test_unknown_required_parameter_on_every_interpreter(any_sandbox):
    any_sandbox.verifier("""
        def verify(workspace, tolerance):
            return 1.0
    """)
    result = any_sandbox.run()
    result.assert_contract_error("tolerance")


def test_star_args_receives_nothing(sandbox):
    sandbox.verifier("""
        def verify(*args):
            print("args", args)
            return float(len(args))
    """)
    result = sandbox.run("--response", sandbox.write("r.json", "{}"))
    assert result.returncode == 0, result.describe()
    assert "args ()" in result.stdout
    assert result.rewards == {"reward.txt": "0.0"}


def test_star_kwargs_receives_every_available_argument(sandbox):
    sandbox.verifier("""
        def verify(**kwargs):
            print("names", sorted(kwargs))
            return 1.0
    """)
    result = sandbox.run()
    assert result.returncode == 0, result.describe()
    assert "names ['state', 'task_data', 'workspace']" in result.stdout
    result = sandbox.run("--response", sandbox.write("r.json", '{"id": "resp_1"}'))
    assert result.returncode == 0, result.describe()
    assert "names ['response', 'state', 'task_data', 'workspace']" in result.stdout


def test_star_kwargs_receives_the_arguments_not_already_named(sandbox):
    sandbox.verifier("""
        def verify(workspace, *args, task_data, **rest):
            print("rest", sorted(rest), "args", args)
            return 1.0
    """)
    result = sandbox.run()
    assert result.returncode == 0, result.describe()
    assert "rest ['state'] args ()" in result.stdout


def test_star_kwargs_also_receives_what_a_positional_only_parameter_got(any_sandbox):
    """``def verify(workspace, /, **kwargs)``: kwargs got task_data and state
    but not workspace, though the contract says ``**kwargs`` receives every
    available argument, and Python lets a positional-only name be a keyword
    of ``**kwargs`` too; --explain listed the same three."""
    any_sandbox.verifier("""
        def verify(workspace, /, **kwargs):
            print("names", sorted(kwargs), kwargs.get("workspace") == workspace)
            return 1.0
    """)
    result = any_sandbox.run()
    assert result.returncode == 0, result.describe()
    assert "names ['state', 'task_data', 'workspace'] True" in result.stdout
    rows = json.loads(any_sandbox.run("--explain").stdout)["parameters"]
    assert [(row["name"], row["source"], row["passed"]) for row in rows] == [
        ("workspace", "workspace", "positional"),
        ("kwargs", ["workspace", "task_data", "state"], "keyword"),
    ]


# --------------------------------------------------------------------------
# response.


def test_required_response_without_flag_is_a_contract_error(any_sandbox):
    any_sandbox.verifier("""
        def verify(workspace, response):
            return 1.0
    """)
    result = any_sandbox.run()
    result.assert_contract_error("response", "this run has no response")


@pytest.mark.parametrize("signature", ["response, /", "*, response"])
def test_required_response_of_any_kind_without_flag_is_a_contract_error(sandbox, signature):
    sandbox.verifier(
        """
        def verify(%s):
            return 1.0
    """
        % signature
    )
    result = sandbox.run()
    result.assert_contract_error("response")


def test_response_with_a_default_keeps_it_without_flag(sandbox):
    sandbox.verifier("""
        def verify(workspace, response=None):
            return 0.0 if response is None else 1.0
    """)
    result = sandbox.run()
    assert result.returncode == 0, result.describe()
    assert result.rewards == {"reward.txt": "0.0"}


def test_response_from_a_file(sandbox):
    sandbox.verifier("""
        def verify(workspace, response):
            assert type(response) is dict
            return response["output"][0]["score"]
    """)
    response = sandbox.write("response.json", json.dumps({"id": "resp_1", "output": [{"score": 0.625}]}))
    result = sandbox.run("--response", response)
    assert result.returncode == 0, result.describe()
    assert result.rewards == {"reward.txt": "0.625"}


def test_response_from_standard_input_as_utf8(sandbox):
    sandbox.verifier("""
        def verify(response):
            return 1.0 if response["text"] == "h\\u00e9llo \\u2713" else 0.0
    """)
    payload = json.dumps({"text": "h\u00e9llo \u2713"}, ensure_ascii=False).encode("utf-8")
    result = sandbox.run("--response", "-", input=payload, env={"LC_ALL": "C", "LANG": "C"})
    assert result.returncode == 0, result.describe()
    assert result.rewards == {"reward.txt": "1.0"}


def test_response_equals_form_of_the_flag(sandbox):
    sandbox.verifier("""
        def verify(response):
            return response["score"]
    """)
    result = sandbox.run("--response=-", input=b'{"score": 0.5}')
    assert result.returncode == 0, result.describe()
    assert result.rewards == {"reward.txt": "0.5"}


# --------------------------------------------------------------------------
# task_data.


def test_task_data_is_an_empty_dict_when_absent(sandbox):
    sandbox.verifier("""
        def verify(task_data):
            print("task_data", type(task_data).__name__, task_data)
            return 1.0
    """)
    result = sandbox.run()
    assert result.returncode == 0, result.describe()
    assert "task_data dict {}" in result.stdout


def test_task_data_from_a_file(sandbox):
    sandbox.verifier("""
        def verify(workspace, task_data):
            return task_data["expected"]["reward"]
    """)
    data = sandbox.write("tests/task_data.json", json.dumps({"expected": {"reward": 0.375}, "name": "t"}))
    result = sandbox.run("--task-data", data)
    assert result.returncode == 0, result.describe()
    assert result.rewards == {"reward.txt": "0.375"}


# --------------------------------------------------------------------------
# Bad --response / --task-data files: exit 2 naming the file.

BAD_FILES = [  # (kind, content, a word of the problem the error line must name)
    ("missing", None, "exist"),
    ("invalid-json", "{not json", "JSON"),
    ("empty", "", "JSON"),
    ("not-utf8", b"\xff\xfe{}", "UTF-8"),
    ("json-array", "[1, 2]", "array"),
    ("json-string", '"text"', "object"),
    ("json-null", "null", "object"),
    ("json-number", "0.5", "object"),
    ("nan", '{"score": NaN}', "NaN"),  # Python's json reads these; JSON has no such values
    ("infinity", '{"score": [1, -Infinity]}', "Infinity"),
    ("folder", "<folder>", "folder"),
]


@pytest.mark.parametrize("flag", ["--response", "--task-data"])
@pytest.mark.parametrize("kind, content, problem", BAD_FILES, ids=[case[0] for case in BAD_FILES])
def test_bad_input_file_is_a_contract_error_naming_it(sandbox, flag, kind, content, problem):
    sandbox.verifier("""
        def verify(workspace, task_data, response=None):
            return 1.0
    """)
    path = sandbox.root / ("input-%s.json" % kind)
    if content == "<folder>":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content, encoding="utf-8")
    result = sandbox.run(flag, path)
    result.assert_contract_error(str(path), flag, problem)


@pytest.mark.parametrize("payload", [b"[1]", b"{broken", b"\xff\xfe"])
def test_bad_standard_input_response_is_a_contract_error(sandbox, payload):
    sandbox.verifier("""
        def verify(response):
            return 1.0
    """)
    result = sandbox.run("--response", "-", input=payload)
    result.assert_contract_error("--response", "standard input")


def test_a_response_from_a_closed_standard_input_says_so(sandbox):
    # the line was "--response file standard input cannot be read: 'NoneType' object has no
    # attribute 'buffer'": the runner's own internals, for a shim started with stdin closed
    sandbox.verifier("""
        def verify(response):
            return 1.0
    """)
    # the interpreter started by a shell with fd 0 closed (`<&-`), as a shim could start it
    closed = ["-c", 'exec "$0" "$@" <&-', sys.executable]
    result = sandbox.run("--response", "-", python="/bin/sh", flags=closed)
    result.assert_contract_error("--response", "standard input", "closed")
    assert "NoneType" not in result.stderr, result.describe()


def test_bad_response_file_is_reported_even_if_verify_ignores_response(sandbox):
    sandbox.verifier("""
        def verify(workspace):
            return 1.0
    """)
    path = sandbox.write("response.json", "[]")
    result = sandbox.run("--response", path)
    result.assert_contract_error(str(path))


# --------------------------------------------------------------------------
# workspace and state.


def test_workspace_is_an_absolute_path_even_when_given_relative(sandbox):
    sandbox.verifier(
        REPORT
        + """
    def verify(workspace, state):
        report(workspace=workspace, same=state["workspace"] == workspace, keys=sorted(state),
               state_type=type(state).__name__)
        return 1.0
    """
    )
    result = sandbox.run(workspace="app", cwd=sandbox.root)
    assert result.returncode == 0, result.describe()
    seen = result.stdout_json()
    assert seen["workspace"]["absolute"] is True
    assert os.path.realpath(seen["workspace"]["Path"]) == os.path.realpath(str(sandbox.app))
    assert seen["same"] == "True"
    assert seen["keys"] == "['workspace']"
    assert seen["state_type"] == "'dict'"


def test_state_is_exactly_the_workspace(sandbox):
    sandbox.verifier("""
        from pathlib import Path

        def verify(workspace, state):
            assert state == {"workspace": workspace}, state
            assert isinstance(state["workspace"], Path)
            return 1.0
    """)
    result = sandbox.run()
    assert result.returncode == 0, result.describe()
    assert result.rewards == {"reward.txt": "1.0"}


def test_workspace_is_a_path_to_the_agents_files(sandbox):
    (sandbox.app / "answer.txt").write_text("42\n", encoding="utf-8")
    sandbox.verifier("""
        def verify(workspace):
            return 1.0 if (workspace / "answer.txt").read_text().strip() == "42" else 0.0
    """)
    result = sandbox.run()
    assert result.returncode == 0, result.describe()
    assert result.rewards == {"reward.txt": "1.0"}


# --------------------------------------------------------------------------
# Callables that are not plain functions.


def test_decorated_verify_is_bound_by_its_wrapped_signature(sandbox):
    sandbox.verifier("""
        import functools

        def logged(function):
            @functools.wraps(function)
            def wrapper(*args, **kwargs):
                print("called with", sorted(kwargs), len(args))
                return function(*args, **kwargs)
            return wrapper

        @logged
        def verify(workspace, task_data):
            return 0.5
    """)
    result = sandbox.run()
    assert result.returncode == 0, result.describe()
    assert "called with ['task_data', 'workspace'] 0" in result.stdout
    assert result.rewards == {"reward.txt": "0.5"}


def test_callable_object_verify(sandbox):
    sandbox.verifier("""
        class Verifier(object):
            def __call__(self, workspace, bonus=0.5):
                return bonus

        verify = Verifier()
    """)
    result = sandbox.run()
    assert result.returncode == 0, result.describe()
    assert result.rewards == {"reward.txt": "0.5"}


def test_a_signature_that_raises_when_read_is_the_verifiers_code_raising(sandbox):
    """A callable whose ``__signature__`` property raises: the runner itself
    ended on that exception, with its own frames, and --explain said nothing."""
    sandbox.verifier("""
        class Verify:
            @property
            def __signature__(self):
                raise RuntimeError("gotcha")

            def __call__(self, workspace):
                return 1.0

        verify = Verify()
    """)
    result = sandbox.run()
    assert (result.returncode, result.rewards) == (1, {}), result.describe()
    assert result.stderr.rstrip().endswith("RuntimeError: gotcha") and "__signature__" in result.stderr
    explained = json.loads(sandbox.run("--explain").stdout)
    assert explained["problems"] == ["reading verify's signature raised RuntimeError: gotcha"]
    assert explained["would_exit"] == 1
