"""task.toml read as Harbor 0.26.0 loads it (``TaskConfig.model_validate_toml``:
tomllib, then pydantic's lax validation): what it would refuse, what it
accepts, and the timeouts no run can honour."""

from __future__ import annotations

import pytest

from tests.helpers import make_task
from verifier_tui.engine.discovery import read_task_config


def config(tmp_path, toml: str):
    return read_task_config(make_task(tmp_path / "t", toml=toml))


@pytest.mark.parametrize("toml, words", [
    ("[verifier\n", "could not be read"),
    ("version = 1\n", "version = 1 is not a string"),
    ("verifier = 3\n", "verifier = 3 is not a table"),
    ('[verifier]\ntimeout_sec = "soon"\n', "[verifier] timeout_sec = 'soon' is not a number"),
    ("[verifier]\ntimeout_sec = [1]\n", "is not a number"),
    ("[verifier]\nenv = { A = 1, B = true }\n", "[verifier] env.B = True is not a string"),
    ('[verifier]\nenv = "A=1"\n', "[verifier] env = 'A=1' is not a table"),
    ('[verifier]\nenvironment_mode = "both"\n', "is not one of 'shared', 'separate'"),
    ("[environment]\nmemory_mb = 1.5\n", "[environment] memory_mb = 1.5 is not a whole number"),
    ("[task]\ndescription = \"x\"\n", "[task] name is missing"),
    ('[task]\nname = "no-slash"\n', "not in org/name form"),
    ('[[steps]]\nagent = {}\n', "[[steps]] 1: name is missing"),
    ('metadata = "x"\n', "metadata = 'x' is not a table"),
])
def test_what_harbor_would_refuse(tmp_path, toml, words):
    found = config(tmp_path, toml)
    assert found.refused is not None and words in found.refused
    assert any("Harbor would refuse" in p or "could not be read" in p for p in found.problems)


@pytest.mark.parametrize("toml, timeout", [
    ('version = "1.0"\nunknown = 1\n[verifier]\nwhatever = [1, 2]\n', None),  # unknown keys: ignored
    ('[verifier]\ntimeout_sec = "45"\n', 45.0),  # a string holding a number: pydantic's lax float
    ("[verifier]\ntimeout_sec = 7\n", 7.0),
    ('[task]\nname = "org/task"\n[environment]\ncpus = 2.0\n[[steps]]\nname = "one"\n', None),
])
def test_what_harbor_accepts(tmp_path, toml, timeout):
    found = config(tmp_path, toml)
    assert found.refused is None, found.refused
    assert found.timeout_sec == timeout


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-1", "0.0"])
def test_a_timeout_no_run_can_honour_is_the_default_with_a_note(tmp_path, value):
    found = config(tmp_path, f"[verifier]\ntimeout_sec = {value}\n")
    assert found.refused is None  # Harbor accepts it (pydantic allows nan and inf)
    assert found.timeout_sec is None
    assert any("is not a finite number of seconds" in p for p in found.problems)


def test_the_remembered_answer_keeps_the_refusal(tmp_path):
    task = make_task(tmp_path / "t", toml="version = 1\n")
    first = read_task_config(task)
    again = read_task_config(task)  # from the cache this time
    assert again == first and again.refused is not None
