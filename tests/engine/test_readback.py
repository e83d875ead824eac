"""What the tool reads back from a file a verifier can reach (the runner's
explanation) is read into the runner's shape, once: a value of another type is
left out, never shown and never a traceback in a face."""

from __future__ import annotations

from verifier_tui.engine.readback import Explanation, ImportFailure, Interpreter


def test_the_runners_own_document_passes_unchanged():
    document = {
        "explain_version": 1,
        "python": {
            "executable": "/usr/bin/python3",
            "version": "3.11.7",
            "implementation": "cpython",
            "flags": {"isolated": False, "no_site": False, "dont_write_bytecode": True},
        },
        "verifier": "/t/tests/verifier.py",
        "workspace": "/w",
        "workspace_exists": True,
        "reward_dir": "/r",
        "sys_path": [
            {
                "index": 0,
                "path": "/t/tests/.ng",
                "role": "vendored helpers",
                "roles": ["vendored helpers"],
                "exists": True,
            }
        ],
        "modules": {"nemo_gym": {"resolved": None, "shadowed": []}},
        "preloaded_nemo_gym": None,
        "available": ["workspace", "task_data", "state"],
        "verify": {
            "signature": "verify(workspace)",
            "is_async": False,
            "type": "function",
            "defined_in": "/t/tests/verifier.py",
            "line": 3,
            "yields": None,
        },
        "parameters": [
            {
                "name": "workspace",
                "kind": "positional or keyword",
                "default": None,
                "has_default": False,
                "binding": "argument",
                "source": "workspace",
                "passed": "keyword",
            },
            {
                "name": "kw",
                "kind": "**kwargs",
                "default": None,
                "has_default": False,
                "binding": "argument",
                "source": ["workspace", "state"],
                "passed": "keyword",
            },
        ],
        "problems": [],
        "import_error": None,
        "would_exit": None,
        "would_call_verify": True,
    }
    said = Explanation.read(document).to_json()
    nemo_gym = {"nemo_gym": {"resolved": None, "shadowed": [], "role": None}}  # the tool adds each module's role
    assert {key: said[key] for key in document} == {**document, "modules": nemo_gym}


def test_values_of_another_shape_are_left_out():
    found = Explanation.read(
        {
            "sys_path": "nope",
            "parameters": [1, None, {"name": 7, "kind": "x", "source": [1, "state"]}],
            "problems": [3, "real one"],
            "modules": [],
            "verify": "x",
            "python": {"flags": [1], "version": "3"},
            "would_exit": True,
            "import_error": {"type": "E", "message": 5},
            "injected": {"a": 1},
            7: "odd key",
        },
    )
    assert found is not None
    assert found.sys_path == () and found.modules == {} and found.verify is None and found.would_exit is None
    assert [(row.name, row.kind, row.source) for row in found.parameters] == [("", "x", ("state",))]
    assert found.problems == ("real one",)
    assert found.python == Interpreter(None, "3") and found.import_error == ImportFailure("E")


def test_a_document_that_is_not_an_object_is_none():
    for value in ([], "x", 3, None):
        assert Explanation.read(value) is None
