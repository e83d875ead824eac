"""task.toml read as Harbor 0.26.0 loads it (``TaskConfig.model_validate_toml``:
tomllib, then pydantic's lax validation): what it would refuse, what it
accepts, and the timeouts no run can honour."""

from __future__ import annotations

import math

import pytest

from tests.helpers.tasks import make_task
from verifier_tui.engine.task.discovery import read_task_config


def config(tmp_path, toml: str):
    return read_task_config(make_task(tmp_path / "t", toml=toml))


@pytest.mark.parametrize(
    "toml, words",
    [
        ("[verifier\n", "could not be read"),
        ("version = 1\n", "version = 1 is not a string"),
        ("verifier = 3\n", "verifier = 3 is not a table"),
        ('[verifier]\ntimeout_sec = "soon"\n', "[verifier] timeout_sec = 'soon' is not a number"),
        ("[verifier]\ntimeout_sec = [1]\n", "is not a number"),
        ("[verifier]\nenv = { A = 1, B = true }\n", "[verifier] env.B = True is not a string"),
        ('[verifier]\nenv = "A=1"\n', "[verifier] env = 'A=1' is not a table"),
        ('[verifier]\nenvironment_mode = "both"\n', "is not one of 'shared', 'separate'"),
        ("[environment]\nmemory_mb = 1.5\n", "[environment] memory_mb = 1.5 is not a whole number"),
        ('[task]\ndescription = "x"\n', "[task] name is missing"),
        ('[task]\nname = "no-slash"\n', "not in org/name form"),
        ("[[steps]]\nagent = {}\n", "[[steps]] 1: name is missing"),
        ('metadata = "x"\n', "metadata = 'x' is not a table"),
    ],
)
def test_what_harbor_would_refuse(tmp_path, toml, words):
    found = config(tmp_path, toml)
    assert found.refused is not None and words in found.refused
    assert any("Harbor would refuse" in p or "could not be read" in p for p in found.problems)


@pytest.mark.parametrize(
    "toml, timeout",
    [
        ('version = "1.0"\nunknown = 1\n[verifier]\nwhatever = [1, 2]\n', None),  # unknown keys: ignored
        ('[verifier]\ntimeout_sec = "45"\n', 45.0),  # a string holding a number: pydantic's lax float
        ("[verifier]\ntimeout_sec = 7\n", 7.0),
        ('[task]\nname = "org/task"\n[environment]\ncpus = 2.0\n[[steps]]\nname = "one"\n', None),
        # PackageInfo.validate_name_format: re.match, whose $ also matches before a final line break
        ('[task]\nname = "org/task\\n"\n', None),
    ],
)
def test_what_harbor_accepts(tmp_path, toml, timeout):
    found = config(tmp_path, toml)
    assert found.refused is None, found.refused
    assert found.timeout_sec == timeout


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-1", "0.0"])
def test_a_timeout_no_run_can_honour_is_the_default_with_a_note(tmp_path, value):
    found = config(tmp_path, f"[verifier]\ntimeout_sec = {value}\n")
    assert found.refused is None  # Harbor accepts it (pydantic allows nan and inf)
    assert found.timeout_sec is None  # the local run uses Harbor's default
    (note,) = [p for p in found.problems if "timeout_sec" in p]
    at_once = found.verifier.gives_up_at_once
    if value == "inf":  # asyncio.wait_for never gives up
        assert at_once is None and "sets no limit in Harbor" in note
    else:  # asyncio.wait_for gives up before the verifier runs
        assert at_once is not None and (math.isnan(at_once) if value == "nan" else at_once == float(value))
        assert "give up before the verifier runs: every trial ends in VerifierTimeoutError" in note


@pytest.mark.parametrize(
    "toml, said",
    [
        ('[verifier]\nuser = "nobody"\n', "[verifier] user = 'nobody'"),
        ("[verifier]\nuser = 1000\n", "[verifier] user = 1000"),
        ('[[steps]]\nname = "a"\n[steps.verifier]\nuser = "agent"\n', "user = 'agent'"),
    ],
)
def test_a_verifier_user_is_said_as_not_honoured(tmp_path, toml, said):
    """Harbor runs the verifier as task.toml's [verifier] user (Trial's
    with_default_user); the run here was made as the user of the tool without
    a word, so a verifier that reads a file only root can read passed here."""
    found = config(tmp_path, toml)
    assert found.refused is None
    (note,) = [p for p in found.problems if "user" in p]
    assert said in note and "Harbor runs the verifier as that user" in note and "as you" in note, note


def test_the_tasks_verifier_user_is_not_said_of_steps_that_set_their_own(tmp_path):
    """Harbor runs each step's verifier as that step's own [steps.verifier] user
    when it sets one (Trial._step_verifier_user), the task's [verifier] user only
    for the others: a note saying the task's user runs the verifier was wrong
    when every step sets its own, and too broad when some do."""
    task_user = '[verifier]\nuser = "nobody"\n'
    some = '[[steps]]\nname = "a"\n[steps.verifier]\nuser = "root"\n[[steps]]\nname = "b"\n'
    own = some + '[steps.verifier]\nuser = "agent"\n'
    found = config(tmp_path / "all", task_user + own)
    assert found.refused is None
    notes = [p for p in found.problems if "user" in p]
    assert len(notes) == 1 and "user = 'agent'" in notes[0] and "nobody" not in notes[0], notes  # b's own, said
    (note,) = [p for p in config(tmp_path / "some", task_user + some).problems if "user" in p]
    assert "[verifier] user = 'nobody': Harbor runs the verifier as that user, except in the steps that set " in note
    assert "their own [steps.verifier] user" in note, note


@pytest.mark.parametrize("user", ['"root"', "0", '"0"'])
def test_a_verifier_user_of_root_is_no_note(tmp_path, user):
    assert config(tmp_path, f"[verifier]\nuser = {user}\n").problems == ()


def test_the_remembered_answer_keeps_the_refusal(tmp_path):
    task = make_task(tmp_path / "t", toml="version = 1\n")
    first = read_task_config(task)
    again = read_task_config(task)  # from the cache this time
    assert again == first and again.refused is not None


# -- the one reader; each value as Harbor 0.26.0's pydantic models take it ---------------------------


@pytest.mark.parametrize(
    "toml, timeout",
    [
        ('[verifier]\ntimeout_sec = "30"\n', 30.0),
        ("[verifier]\ntimeout_sec = true\n", 1.0),  # lax mode: a boolean is 1.0 to a float field
        ('[verifier]\ntimeout_sec = "1_000"\n', 1000.0),
        ('[verifier]\ntimeout_sec = "1e2"\n', 100.0),
    ],
)
def test_a_timeout_harbor_coerces_is_coerced_the_same_way(tmp_path, toml, timeout):
    found = config(tmp_path, toml)
    assert found.refused is None and found.timeout_sec == timeout and found.verifier.timeout_sec == timeout


@pytest.mark.parametrize(
    "toml, refusal",
    [
        ('[verifier]\ntimeout_sec = "0x10"\n', "[verifier] timeout_sec = '0x10' is not a number"),
        ('[verifier]\ntimeout_sec = "true"\n', "[verifier] timeout_sec = 'true' is not a number"),
        ('[environment]\nenv = ["A=1"]\n', "[environment] env = ['A=1'] is not a table"),  # no list form in 0.26.0
        ("[environment]\ncpus = nan\n", "[environment] cpus = nan is not a finite number"),
        ('[environment]\nmemory_mb = "1e3"\n', "is not a whole number"),
        ('[environment]\nmemory = "2G"\nmemory_mb = 100\n', "conflicts with memory_mb = 100"),
        ('[environment]\nnetwork_mode = "NO-NETWORK"\n', "is not one of 'public', 'no-network', 'allowlist'"),
        ('[environment]\nallowed_hosts = ["example.com"]\n', "only valid with network_mode = 'allowlist'"),
        ('[verifier]\nenvironment_mode = "shared"\n[verifier.environment]\ncpus = 1\n', "has its own environment"),
        ('[[steps]]\nname = "a"\n[[steps]]\nname = "A"\n', "[[steps]] 2: name = 'A' repeats"),
        ('[[steps]]\nname = "a/b"\n', "is not a portable folder name"),
        ('artifacts = ["../x"]\n', "has a '..' component"),
    ],
)
def test_what_harbor_0_26_refuses_more(tmp_path, toml, refusal):
    found = config(tmp_path, toml)
    assert found.refused is not None and refusal in found.refused
    assert len(found.refused.splitlines()) == 1


#: ``allowed_hosts`` entries as Harbor 0.26.0's ``_validate_allowed_host_names`` takes or refuses them
#: (checked against the wheel's config.py): a URL, a port, a CIDR with host bits, a bare
#: ``*``, a wildcard over an address, a label with ``_`` or a leading ``-``.
REFUSED_HOSTS = ["http://x", "x.com:80", "*", "a.*.com", "*.1.2.3.4", "ex ample.com", "-a.com", "a_b.com", "10.0.0.1/8"]
REFUSED_HOSTS += ["fe80::1%eth0", "[::1]", "*.", "a..com", "a" * 64 + ".com"]
TAKEN_HOSTS = ["example.com", "EXAMPLE.com.", " a-b.example.com ", "*.example.com", "::1", "10.0.0.0/8", "1.2.3.4"]


@pytest.mark.parametrize("host", REFUSED_HOSTS)
def test_an_allowed_host_harbor_refuses_refuses_the_task(tmp_path, host):
    """It was taken (the host's syntax was not checked): ``test`` passed the
    task's cases where Harbor would not load it."""
    found = config(tmp_path, f'[verifier]\nnetwork_mode = "allowlist"\nallowed_hosts = ["example.org", "{host}"]\n')
    assert found.refused is not None and "[verifier] allowed_hosts" in found.refused, (host, found.refused)
    assert repr(host) in found.refused and len(found.refused.splitlines()) == 1


#: MCP server headers as Harbor 0.26.0's ``MCPServerConfig.validate_headers`` takes or refuses them: a name
#: that is no HTTP token, a line break in a value, a template left open, a credential written out.
REFUSED_HEADERS = [
    ("Bad Name", "x"),
    ("X-A", "a\\nb"),
    ("X-A", "${A"),
    ("X-A", "${A:-${B}}"),
    ("Authorization", "Bearer abc"),
    ("Authorization", "Bearer ${TOKEN:-abc}"),
    ("X-A", "${API_KEY:-abc}"),
    ("Cookie", "a=b"),
]
TAKEN_HEADERS = [
    ("Authorization", "Bearer ${TOKEN}"),
    ("X-Trace", "on ${RUN:-1}"),
    ("X-Api-Key", ""),
    ("Accept", "*/*"),
]


@pytest.mark.parametrize("name, value", REFUSED_HEADERS)
def test_an_mcp_header_harbor_refuses_refuses_the_task(tmp_path, name, value):
    """Only the headers' kinds were checked: a task Harbor would not load passed."""
    server = f'{{ name = "s", url = "http://h", headers = {{ "{name}" = "{value}" }} }}'
    found = config(tmp_path, f"[environment]\nmcp_servers = [{server}]\n")
    assert found.refused is not None and "headers" in found.refused, found.refused
    assert len(found.refused.splitlines()) == 1


@pytest.mark.parametrize("name, value", TAKEN_HEADERS)
def test_an_mcp_header_harbor_takes_is_taken(tmp_path, name, value):
    server = f'{{ name = "s", url = "http://h", headers = {{ "{name}" = "{value}" }} }}'
    found = config(tmp_path, f"[environment]\nmcp_servers = [{server}]\n")
    assert found.refused is None, found.refused


@pytest.mark.parametrize("host", TAKEN_HOSTS)
def test_an_allowed_host_harbor_takes_is_taken(tmp_path, host):
    found = config(tmp_path, f'[environment]\nnetwork_mode = "allowlist"\nallowed_hosts = ["{host}"]\n')
    assert found.refused is None, found.refused


@pytest.mark.parametrize(
    "toml, cpus, memory_mb",
    [
        ("[environment]\ncpus = 1.5\nmemory_mb = 2048\n", 1.5, 2048),  # cpus is int | float in Harbor
        ('[environment]\ncpus = 2.0\nmemory_mb = "2048.0"\n', 2, 2048),  # normalize_cpus; an int field takes "2048.0"
        ('[environment]\ncpus = "3"\nmemory_mb = 4.0\n', 3, 4),
        ('[environment]\nmemory = "1.5G"\n', None, 1536),  # the deprecated size string
        ("[environment]\ncpus = -1\nmemory_mb = 0\n", None, None),  # Harbor takes them; no limit can be that
    ],
)
def test_the_limits_harbor_takes(tmp_path, toml, cpus, memory_mb):
    found = config(tmp_path, toml)
    assert found.refused is None
    assert found.cpus == cpus and type(found.cpus) is type(cpus)
    assert found.memory_mb == memory_mb


@pytest.mark.parametrize(
    "toml, mode",
    [
        ("", "public"),  # BaselineNetworkPolicyConfig's default
        ('[environment]\nnetwork_mode = "no-network"\n', "no-network"),
        ("[environment]\nallow_internet = false\n", "no-network"),  # the deprecated flag, applied by TaskConfig
        ('[environment]\nallow_internet = false\nnetwork_mode = "public"\n', "public"),  # written wins
        ('[environment]\nnetwork_mode = "no-network"\n[verifier]\nnetwork_mode = "public"\n', "public"),  # override
        # separate mode with its own environment: that environment's baseline (public by default), not [environment]'s
        ('[environment]\nnetwork_mode = "no-network"\n[verifier.environment]\ncpus = 1\n', "public"),
        ('[environment]\nnetwork_mode = "no-network"\n[verifier]\nenvironment_mode = "separate"\n', "no-network"),
    ],
)
def test_the_verifiers_network_mode(tmp_path, toml, mode):
    found = config(tmp_path, toml)
    assert found.refused is None, found.refused
    assert found.verifier_network_mode == mode


def test_workdir_and_a_steps_own_verifier(tmp_path):
    found = config(
        tmp_path,
        '[environment]\nworkdir = "/srv"\n[verifier]\ntimeout_sec = 30\n'
        'network_mode = "no-network"\n\n[[steps]]\nname = "one"\n\n[[steps]]\nname = "two"\n'
        'artifacts = ["/out"]\n[steps.verifier]\ntimeout_sec = "5"\nnetwork_mode = "public"\n'
        'environment_mode = "separate"\n',
    )
    assert found.refused is None and found.workdir == "/srv"
    one, two = found.steps
    assert one.verifier.timeout_sec == 600.0 and not one.verifier.timeout_given  # StepConfig's own default
    assert two.verifier.timeout_sec == 5.0 and two.artifacts == ("/out",)
    assert found.verifier_network_mode_of("one") == "no-network"  # the task's [verifier] override
    assert found.verifier_network_mode_of("two") == "public"  # the step's own
    assert found.verifier_mode("one") == "shared" and found.verifier_mode("two") == "separate"
    assert not found.artifacts and not one.artifacts  # only step two declares /out


def test_the_runs_env_is_the_environment_env_under_the_verifier_env(tmp_path):
    found = config(tmp_path, '[environment]\nenv = { A = "e", B = "e" }\n[verifier]\nenv = { B = "v", C = "v" }\n')
    assert found.env == {"A": "e", "B": "v", "C": "v"}
    # In separate mode the verifier's container is its own environment's.
    found = config(
        tmp_path,
        '[environment]\nenv = { A = "e" }\n[verifier.environment]\nenv = { D = "d" }\n[verifier]\nenv = { C = "v" }\n',
    )
    assert found.env == {"D": "d", "C": "v"}


def test_the_remembered_document_gives_the_same_config(tmp_path):
    toml = (
        '[environment]\ncpus = 1.5\nmemory = "2G"\nenv = { A = "x" }\n[verifier]\ntimeout_sec = "30"\n'
        '[[steps]]\nname = "s"\n'
    )
    task = make_task(tmp_path / "t", toml=toml)
    first = read_task_config(task)
    again = read_task_config(task)  # from the cache this time
    assert again == first and again.cpus == 1.5 and again.memory_mb == 2048 and again.timeout_sec == 30.0


@pytest.mark.parametrize(
    ("toml", "note"),
    [
        ("[verifer]\ntimeout_sec = 5\n", "[verifer] is not one Harbor knows: did you mean [verifier]?"),
        (
            "[verifier]\ntimout_sec = 5\n",
            "[verifier] timout_sec is not one Harbor knows: did you mean [verifier] timeout_sec?",
        ),
        (
            "[environment]\nmemry_mb = 512\n",
            "[environment] memry_mb is not one Harbor knows: did you mean [environment] memory_mb?",
        ),
        (
            "[verifier.environment]\ncpu = 2\n",
            "[verifier.environment] cpu is not one Harbor knows: did you mean [verifier.environment] cpus?",
        ),
        (
            "[[steps]]\nname = 'a'\n[steps.verifer]\n",
            "[[steps]] 1: verifer is not one Harbor knows: did you mean [[steps]] 1: verifier?",
        ),
        ("zzz = 1\n", "zzz is not one Harbor knows (Harbor ignores it)"),
    ],
)
def test_a_key_harbor_does_not_know_is_said_with_the_one_meant(tmp_path, toml, note):
    """pydantic ignores what TaskConfig does not know: a misspelt table or key
    runs with the defaults in Harbor, without a word. The run goes on here
    too, and a note names the key, and the one meant when one is close."""
    task = make_task(tmp_path / "t", toml='version = "1.0"\n' + toml)
    config = read_task_config(task)
    assert [p for p in config.problems if "Harbor knows" in p] == [
        f"task.toml: {note}" + ("" if note.endswith("it)") else " (Harbor ignores it)")
    ]
    assert config.refused is None


def test_every_key_harbor_knows_is_known(tmp_path):
    """The genuine tasks' task.toml files, and the bundled examples', say nothing of unknown keys."""
    from tests.helpers.harbor import HARBOR_REAL
    from tests.helpers.tasks import REPO

    folders = sorted((REPO / "examples" / "tasks").iterdir()) + (
        sorted((HARBOR_REAL / "tasks").iterdir()) if HARBOR_REAL is not None else []
    )
    for folder in folders:
        if (folder / "task.toml").exists():
            assert not [p for p in read_task_config(folder).problems if "Harbor knows" in p], folder


def test_a_harborignore_harbor_never_reads_is_no_refusal(tmp_path):
    """Harbor reads a folder's .harborignore only when it asks about an entry beside it (the file
    itself is left out by name first), and never one outside tests/, solution/ and a step's: such
    an undecodable file refuses nothing. One it reads refuses the task, verifier disabled or not."""
    from verifier_tui.engine.task.loading import as_loaded_without_verifier

    task = make_task(tmp_path / "t")
    latin = "é\n".encode("latin-1")
    (task / "tests" / "empty").mkdir()
    (task / "tests" / "empty" / ".harborignore").write_bytes(latin)
    (task / ".harborignore").write_bytes(latin)
    assert read_task_config(task).refused is None
    # in a folder a .harborignore above it leaves out: Harbor never looks inside, so never reads it
    (task / "tests" / ".harborignore").write_text("sub/\n")
    (task / "tests" / "sub").mkdir()
    (task / "tests" / "sub" / ".harborignore").write_bytes(latin)
    (task / "tests" / "sub" / "f.txt").write_text("x")
    assert read_task_config(task).refused is None
    (task / "solution").mkdir()
    (task / "solution" / "solve.sh").write_text("#!/bin/sh\n")
    (task / "solution" / ".harborignore").write_bytes(latin)
    loaded = read_task_config(task)
    for refused in (loaded.refused, as_loaded_without_verifier(loaded, task).refused):
        assert refused is not None and refused.startswith("solution/.harborignore is not UTF-8 text"), refused
