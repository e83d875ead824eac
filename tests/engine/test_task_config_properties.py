"""The task.toml reader on documents nobody planned: it reads files
the tool did not write, so whatever ``tomllib`` can give, the reader gives a
config without raising, and either takes each value as Harbor 0.26.0 would
(the type of each field as Harbor's pydantic models give it) or says in one
line why Harbor would refuse the task.

The expected values themselves were checked against Harbor's own models
(``harbor/models/task/config.py`` under pydantic 2.14) with a differential
run of these strategies; these tests keep the reader's promises without
needing Harbor installed."""

from __future__ import annotations

import datetime
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.strategies import UTF8_CHARACTERS, utf8_text
from verifier_tui.engine.task.config import (
    HARBOR_DEFAULT_VERIFIER_TIMEOUT_S,
    NETWORK_MODES,
    TaskConfig,
    config_from_toml,
)

# What tomllib gives: strings, integers (64 bits), floats (nan and inf too),
# booleans, dates and times, arrays, tables; with the words Harbor's fields use.
WORDS = st.sampled_from(
    [
        "30",
        " 30 ",
        "1_000",
        "1e3",
        "nan",
        "inf",
        "-1",
        "0",
        "2.0",
        "2.5",
        "2048.0",
        "true",
        "no",
        "public",
        "no-network",
        "allowlist",
        "shared",
        "separate",
        "2G",
        "512M",
        "a/b",
        "/app",
        "../x",
        "example.com",
        "",
        "\u00a030",
        "\x1c30",
        "1_0.0",
        "Linux",
        "stdio",
    ]
)
SCALARS = st.one_of(
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.integers(-3, 5000),
    st.floats(),
    WORDS,
    utf8_text(max_size=8),
    st.datetimes(timezones=st.none() | st.just(datetime.timezone.utc)),
    st.dates(),
    st.times(),
)
KEYS = st.sampled_from(
    [
        "timeout_sec",
        "env",
        "environment_mode",
        "network_mode",
        "allowed_hosts",
        "user",
        "environment",
        "cpus",
        "memory_mb",
        "memory",
        "storage",
        "workdir",
        "allow_internet",
        "os",
        "name",
        "version",
        "artifacts",
        "steps",
        "verifier",
        "agent",
        "task",
        "metadata",
        "source",
        "schema_version",
        "collect",
        "healthcheck",
        "tpu",
        "mcp_servers",
        "min_reward",
        "destination",
        "service",
        "command",
        "transport",
        "url",
        "A",
        "B",
    ]
) | utf8_text(max_size=4)
VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=4), max_leaves=20
)
DOCUMENTS = st.dictionaries(KEYS, VALUES, max_size=6)


def a_refusal_or_harbors_types(config: TaskConfig) -> None:
    if config.refused is not None:
        assert config.refused.strip() and len(config.refused.splitlines()) == 1
        assert config.refused.endswith("(Harbor's loader raises pydantic ValidationError)")
        assert config.problems[0] == f"Harbor would refuse to run this task: {config.refused}"
    for problem in config.problems:
        assert len(problem.splitlines()) == 1
    # What the tool honours is always something a run can use.
    assert config.timeout_sec is None or (math.isfinite(config.timeout_sec) and config.timeout_sec > 0)
    assert math.isfinite(config.verifier.timeout_sec) and config.verifier.timeout_sec > 0
    if not config.verifier.timeout_given:
        assert config.verifier.timeout_sec == HARBOR_DEFAULT_VERIFIER_TIMEOUT_S
    assert config.memory_mb is None or (type(config.memory_mb) is int and config.memory_mb > 0)
    assert config.cpus is None or (type(config.cpus) in (int, float) and math.isfinite(config.cpus) and config.cpus > 0)
    if isinstance(config.cpus, float):
        assert not config.cpus.is_integer()  # normalize_cpus: 2.0 is 2
    assert config.workdir is None or isinstance(config.workdir, str)
    assert config.network_mode in NETWORK_MODES and config.verifier_network_mode in NETWORK_MODES
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in config.env.items())
    assert config.verifier_mode() in ("shared", "separate")
    for step in config.steps:
        assert isinstance(step.name, str)
        assert config.verifier_mode(step.name) in ("shared", "separate")
        assert config.verifier_network_mode_of(step.name) in NETWORK_MODES
        assert all(isinstance(a, str) for a in step.artifacts)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(DOCUMENTS)
def test_any_document_gives_harbors_values_or_a_one_line_refusal(document):
    a_refusal_or_harbors_types(config_from_toml(document))


@settings(max_examples=300)
@given(
    st.dictionaries(
        st.sampled_from(["verifier", "environment", "agent", "task", "solution"]),
        st.dictionaries(KEYS, VALUES, max_size=5),
        max_size=3,
    ),
    st.lists(st.dictionaries(KEYS, VALUES, max_size=4), max_size=3),
)
def test_any_tables_and_steps_give_harbors_values_or_a_one_line_refusal(tables, steps):
    """Harbor's own tables, where most of its fields are, reached more often."""
    document = {**tables, "steps": steps}
    a_refusal_or_harbors_types(config_from_toml(document))


@settings(max_examples=300)
@given(
    st.one_of(
        st.booleans(),
        st.integers(-(2**63), 2**63 - 1),
        st.floats(),
        utf8_text(max_size=12),
        st.from_regex(
            r"\s?[+-]?[0-9_]{1,5}(\.[0-9_]{0,3})?([eE][+-]?[0-9]{1,3})?\s?", fullmatch=True, alphabet=UTF8_CHARACTERS
        ),
    )
)
def test_a_timeout_is_taken_as_a_float_field_takes_it_or_refused(value):
    """``[verifier] timeout_sec`` (a float field): a number Harbor takes is the
    timeout when it is a finite number of seconds more than 0, else the
    default with a note; anything else is a refusal naming the field."""
    config = config_from_toml({"verifier": {"timeout_sec": value}})
    if config.refused is not None:
        assert config.refused.startswith("[verifier] timeout_sec = ") and "is not a number" in config.refused
        assert not isinstance(value, (bool, int, float))  # Harbor takes every number, and booleans
        return
    taken = float(value) if isinstance(value, (bool, int, float)) else float(value.strip().replace("_", ""))
    if math.isfinite(taken) and taken > 0:
        assert config.timeout_sec == taken and config.verifier.timeout_given
    else:
        assert config.timeout_sec is None and any("timeout_sec" in p for p in config.problems)
        # Harbor's asyncio.wait_for gives up at once on all of these but inf
        assert (config.verifier.gives_up_at_once is None) == (taken == math.inf)
