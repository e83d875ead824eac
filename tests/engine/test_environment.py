"""The runner's environment: Harbor's sandbox gives the verifier the
container's environment and the task's ``[verifier] env``, never the
developer's shell. Unit checks of the rules; the runs that prove a real
runner sees exactly this are in tests/cli/test_truthful.py and test_session.py."""

from __future__ import annotations

import pytest

from verifier_tui.engine.sandbox.environment import (
    FROM_OPTION,
    FROM_TASK,
    FROM_TOOL,
    FROM_USER,
    child_environment,
    parse_assignment,
    resolve_template,
)

SHELL = {
    "PATH": "/usr/bin",
    "HOME": "/home/me",
    "LANG": "en_GB.UTF-8",
    "LC_CTYPE": "C.UTF-8",
    "TERM": "xterm",
    "TMPDIR": "/tmp/me",
    "USER": "me",
    "OPENAI_API_KEY": "sk-secret",
    "PYTHONOPTIMIZE": "1",
    "PYTHONPATH": "/elsewhere",
    "PYTHONWARNINGS": "ignore",
    "VIRTUAL_ENV": "/venv",
    "TEXTUAL_DRIVER": "x",
}


def test_only_the_allowlist_passes_from_the_shell():
    made = child_environment({}, environ=SHELL)
    inherited = {name for name, source in ((p.name, p.source) for p in made.passed) if source == FROM_USER}
    assert inherited == {"PATH", "HOME", "LANG", "LC_CTYPE", "TERM", "TMPDIR", "USER"}
    assert made.held_back == sorted(
        ["OPENAI_API_KEY", "PYTHONOPTIMIZE", "PYTHONPATH", "PYTHONWARNINGS", "VIRTUAL_ENV", "TEXTUAL_DRIVER"]
    )
    assert made.values["PYTHONIOENCODING"] == "utf-8" and made.values["PYTHONDONTWRITEBYTECODE"] == "1"
    assert "OPENAI_API_KEY" not in made.values and "PYTHONOPTIMIZE" not in made.values


def test_the_task_env_and_the_option_come_last():
    made = child_environment(
        {"MODE": "strict", "PYTHONHASHSEED": "0", "KEY": "${OPENAI_API_KEY}"},
        ("OPENAI_API_KEY", "MODE=lenient"),
        environ=SHELL,
    )
    assert made.values["KEY"] == "sk-secret"  # Harbor's resolve_env_vars, from the user's environment
    assert made.values["MODE"] == "lenient"  # --env wins
    assert made.values["PYTHONHASHSEED"] == "0"  # the task asked for it: Harbor would pass it
    assert made.values["OPENAI_API_KEY"] == "sk-secret"
    rows = {p.name: p for p in made.passed}
    assert rows["KEY"].source == FROM_TASK and rows["KEY"].shown == "${OPENAI_API_KEY}"  # the template, not the key
    assert rows["OPENAI_API_KEY"].source == FROM_OPTION and rows["OPENAI_API_KEY"].shown is None
    assert rows["PYTHONUNBUFFERED"].source == FROM_TOOL and rows["PYTHONUNBUFFERED"].shown == "1"
    assert "sk-secret" not in str(made.to_json())


@pytest.mark.parametrize(
    "value, environ, expected",
    [
        ("plain", {}, ("plain", None)),
        ("${A}", {"A": "1"}, ("1", None)),
        ("${A:-fallback}", {}, ("fallback", None)),
        ("${A}", {}, (None, "A")),
        ("prefix ${A}", {"A": "1"}, ("prefix ${A}", None)),  # only a whole value is a template
    ],
)
def test_templates_as_harbor_resolves_them(value, environ, expected):
    assert resolve_template(value, environ) == expected


def test_an_unset_template_is_a_problem_and_no_variable():
    made = child_environment({"KEY": "${NOT_THERE}"}, environ={})
    assert "KEY" not in made.values
    assert made.problems and "NOT_THERE is not set" in made.problems[0]


@pytest.mark.parametrize(
    "word, expected", [("A=1", ("A", "1")), ("A=", ("A", "")), ("A=x=y", ("A", "x=y")), ("HOME", ("HOME", "/home/me"))]
)
def test_env_words(word, expected):
    assert parse_assignment(word, {"HOME": "/home/me"}) == expected


@pytest.mark.parametrize("word", ["", "=1", "1A=2", "A B=1", "UNSET"])
def test_bad_env_words(word):
    with pytest.raises(ValueError):
        parse_assignment(word, {})


def test_env_words_given_as_a_generator_are_read_once_and_all_kept():
    # `extra` is any Iterable: a generator read twice (once for the templates, once for the variables)
    # lost every --env word in the second pass, so the verifier never got MODE.
    made = child_environment({"W": "${MODE:-d}"}, (word for word in ["MODE=strict", "bad name"]), environ={})
    assert made.values["W"] == "strict"
    assert made.values["MODE"] == "strict"
    assert [p for p in made.problems if p.startswith("--env")] == [
        "--env 'bad name': give NAME or NAME=VALUE, NAME a variable name (letters, digits, _)"
    ]
