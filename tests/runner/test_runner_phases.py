"""--phases-to FILE: one JSON line per phase of the run, written as it ends, so
a tool (the trial walkthrough) can show how far a run got and where it stopped."""

import json
import os
import time

import pytest

PHASES = [
    "reward_files_cleared",
    "verifier_found",
    "inputs_read",
    "sys_path_placed",
    "module_imported",
    "arguments_bound",
    "verify_called",
    "reward_written",
]

SIMPLE = """
    def verify(workspace, task_data):
        return 0.5
"""


def read_phases(path):
    """The lines of a phases file, each parsed (every line must be JSON)."""
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n"), text
    return [json.loads(line) for line in text.splitlines()]


def steps(lines):
    return [(line["phase"], line["status"]) for line in lines]


def test_a_passing_run_writes_every_phase_in_order(any_sandbox):
    any_sandbox.verifier(SIMPLE)
    phases = any_sandbox.root / "phases.jsonl"
    result = any_sandbox.run("--phases-to", phases)
    assert result.returncode == 0, result.describe()
    assert result.stdout == "" and result.stderr == ""
    lines = read_phases(phases)
    assert steps(lines) == [(name, "ok") for name in PHASES[:6]] + [
        ("verify_called", "started"),
        ("verify_called", "ok"),
        ("reward_written", "ok"),
    ]
    by_phase = {line["phase"]: line for line in lines if line["status"] == "ok"}
    assert by_phase["reward_files_cleared"]["removed"] == []
    assert by_phase["verifier_found"]["file"] == str(any_sandbox.verifier_path)
    assert by_phase["inputs_read"]["available"] == ["workspace", "task_data", "state"]
    placed = by_phase["sys_path_placed"]
    assert placed["front"] == [str(any_sandbox.ng), str(any_sandbox.tests), str(any_sandbox.tests)]
    assert placed["sys_path"][:2] == [str(any_sandbox.ng), str(any_sandbox.tests)]
    assert by_phase["module_imported"]["module"] == "verifier"
    assert [(row["name"], row["binding"], row["passed"]) for row in by_phase["arguments_bound"]["plan"]] == [
        ("workspace", "argument", "keyword"),
        ("task_data", "argument", "keyword"),
    ]
    assert by_phase["verify_called"] == {
        "phase": "verify_called",
        "status": "ok",
        "awaited": False,
        "result_type": "float",
    }
    written = by_phase["reward_written"]
    assert written["file"] == str(any_sandbox.reward_dir / "reward.txt")
    assert written["text"] == "0.5" == result.reward_txt


def test_the_plan_is_the_one_explain_shows(sandbox):
    sandbox.verifier("""
        def verify(workspace, /, extra=3, *rest, response=None, **more):
            return 1.0
    """)
    phases = sandbox.root / "phases.jsonl"
    assert sandbox.run("--phases-to", phases).returncode == 0
    explained = sandbox.run("--explain")
    plan = [line for line in read_phases(phases) if line["phase"] == "arguments_bound"][0]["plan"]
    assert plan == json.loads(explained.stdout)["parameters"]
    assert [row["name"] for row in plan] == ["workspace", "extra", "rest", "response", "more"]


def test_planted_rewards_are_listed_with_their_kind(sandbox, tmp_path):
    sandbox.verifier(SIMPLE)
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("1.0", encoding="utf-8")
    (sandbox.reward_dir / "reward.json").mkdir()
    (sandbox.reward_dir / "reward.json" / "inside").write_text("x", encoding="utf-8")
    os.symlink(str(elsewhere), str(sandbox.reward_dir / "reward.txt"))
    phases = sandbox.root / "phases.jsonl"
    result = sandbox.run("--phases-to", phases)
    assert result.returncode == 0, result.describe()
    assert read_phases(phases)[0] == {
        "phase": "reward_files_cleared",
        "status": "ok",
        "removed": [{"name": "reward.json", "kind": "folder"}, {"name": "reward.txt", "kind": "link"}],
    }
    assert elsewhere.read_text(encoding="utf-8") == "1.0"


def test_a_reward_verify_wrote_itself_is_listed_when_the_verdict_replaces_it(sandbox):
    sandbox.verifier(
        """
        def verify(workspace):
            open(%r, "w").write('{"reward": 1}')
            return 0.0
    """
        % str(sandbox.reward_dir / "reward.json")
    )
    phases = sandbox.root / "phases.jsonl"
    result = sandbox.run("--phases-to", phases)
    assert result.rewards == {"reward.txt": "0.0"}
    assert read_phases(phases)[-1]["removed"] == [{"name": "reward.json", "kind": "file"}]


def test_a_dict_reward_is_written_as_json(sandbox):
    sandbox.verifier("""
        async def verify(workspace):
            return {"reward": 1, "speed": 0.5}
    """)
    phases = sandbox.root / "phases.jsonl"
    result = sandbox.run("--phases-to", phases)
    lines = read_phases(phases)
    assert lines[-2] == {"phase": "verify_called", "status": "ok", "awaited": True, "result_type": "dict"}
    assert lines[-1]["file"] == str(sandbox.reward_dir / "reward.json")
    assert json.loads(lines[-1]["text"]) == result.reward_json == {"reward": 1, "speed": 0.5}


# (verifier source, extra arguments, the phase it stops in, exit code, what the failed line says)
FAILURES = {
    "reward-folder-is-a-file": (SIMPLE, ["--reward-dir", "a-file"], "reward_files_cleared", 2, "problem"),
    "no-verifier-file": (None, [], "verifier_found", 2, "problem"),
    "bad-task-data": (SIMPLE, ["--task-data", "data.json"], "inputs_read", 2, "problem"),
    "import-raises": ("x = 1 / 0\n", [], "module_imported", 1, "error"),
    "no-verify": ("def check(workspace):\n    return 1.0\n", [], "arguments_bound", 2, "problem"),
    "needs-response": ("def verify(workspace, response):\n    return 1.0\n", [], "arguments_bound", 2, "problems"),
    "verify-raises": (
        "def verify(workspace):\n    raise ValueError('no file here')\n",
        [],
        "verify_called",
        1,
        "error",
    ),
    "bad-return": ("def verify(workspace):\n    return 'yes'\n", [], "reward_written", 2, "problem"),
    # The verifier's own code raising as verify is looked up (a module __getattr__) or its signature read
    "verify-lookup-raises": (
        "def __getattr__(name):\n    raise ValueError('no verify yet')\n",
        [],
        "arguments_bound",
        1,
        "error",
    ),
    "signature-raises": (
        "class Verify:\n"
        "    def __call__(self, workspace):\n        return 1.0\n"
        "    @property\n    def __signature__(self):\n        return 1 / 0\n"
        "verify = Verify()\n",
        [],
        "arguments_bound",
        1,
        "error",
    ),
}


@pytest.mark.parametrize("case", sorted(FAILURES))
def test_a_failing_run_stops_at_its_phase_and_says_why(sandbox, case):
    source, extra, phase, exit_code, field = FAILURES[case]
    if source is not None:
        sandbox.verifier(source)
    else:
        sandbox.verifier_path = sandbox.tests / "missing.py"
    (sandbox.root / "a-file").write_text("", encoding="utf-8")
    (sandbox.root / "data.json").write_text("[1, 2]", encoding="utf-8")
    phases = sandbox.root / "phases.jsonl"
    extra = [str(sandbox.root / arg) if arg in ("a-file", "data.json") else arg for arg in extra]
    if "--reward-dir" in extra:
        result = sandbox.run("--phases-to", phases, *extra, reward_dir=None)
    else:
        result = sandbox.run("--phases-to", phases, *extra)
    assert result.returncode == exit_code, result.describe()
    assert result.rewards == {}
    lines = read_phases(phases)
    reached = [line["phase"] for line in lines]
    last = lines[-1]
    assert last["phase"] == phase and last["status"] == "failed" and last["exit"] == exit_code, lines
    # Every phase before it ended well, in order; none after it was written.
    expected = PHASES[: PHASES.index(phase) + 1]
    if "verify_called" in expected:  # its "started" line, then how it ended
        expected.insert(expected.index("verify_called"), "verify_called")
    assert reached == expected
    assert all(line["status"] in ("ok", "started") for line in lines[:-1])
    # One failure, said once: `problem` (exit 2's line on stderr) or `error` (what the verifier raised,
    # exit 1), never both (a verify whose lookup raised had both)
    assert ("problem" in last) != ("error" in last), last
    if field == "problem":
        assert last["problem"] in result.stderr and len(result.stderr_lines) == 1
    elif field == "problems":
        assert last["problems"] == [last["problem"]] and "response" in last["problem"]
        assert [row["binding"] for row in last["plan"]] == ["argument", "missing"]
    else:
        assert result.stderr_lines[-1] == "%s: %s" % (last["error"]["type"], last["error"]["message"])


def test_an_input_that_fails_names_its_file(sandbox):
    sandbox.verifier(SIMPLE)
    bad = sandbox.write("response.json", "{not json")
    phases = sandbox.root / "phases.jsonl"
    result = sandbox.run("--phases-to", phases, "--response", bad)
    result.assert_contract_error(str(bad))
    last = read_phases(phases)[-1]
    assert last["phase"] == "inputs_read" and last["file"] == str(bad)
    assert "not valid JSON" in last["problem"]


def test_a_verifier_that_ends_the_process_leaves_the_lines_so_far(any_sandbox):
    any_sandbox.verifier("""
        import os

        def verify(workspace):
            os._exit(0)
    """)
    phases = any_sandbox.root / "phases.jsonl"
    result = any_sandbox.run("--phases-to", phases)
    assert result.returncode == 0 and result.rewards == {}
    assert steps(read_phases(phases))[-2:] == [("arguments_bound", "ok"), ("verify_called", "started")]


def test_a_killed_run_shows_how_far_it_got(sandbox):
    sandbox.verifier("""
        import time

        def verify(workspace):
            time.sleep(60)
            return 1.0
    """)
    phases = sandbox.root / "phases.jsonl"
    process = sandbox.start("--phases-to", phases)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if phases.exists() and '"started"' in phases.read_text(encoding="utf-8"):
                break
            time.sleep(0.02)
    finally:
        process.kill()
        process.communicate()
    assert steps(read_phases(phases))[-1] == ("verify_called", "started")


def test_explain_mode_writes_the_phases_it_goes_through(sandbox):
    """--explain never touches the reward folder nor calls verify: no line for either."""
    sandbox.verifier(SIMPLE)
    phases = sandbox.root / "phases.jsonl"
    result = sandbox.run("--explain", "--phases-to", phases)
    assert result.returncode == 0, result.describe()
    assert [line["phase"] for line in read_phases(phases)] == PHASES[1:6]


def test_lines_are_appended_to_what_the_file_holds(sandbox):
    sandbox.verifier(SIMPLE)
    phases = sandbox.write("phases.jsonl", '{"earlier": true}\n')
    assert sandbox.run("--phases-to", phases).returncode == 0
    lines = read_phases(phases)
    assert lines[0] == {"earlier": True} and len(lines) == 1 + 9


def test_a_relative_phases_file_stays_put_when_the_verifier_changes_folder(sandbox, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    sandbox.verifier(
        """
        import os
        os.chdir(%r)

        def verify(workspace):
            return 1.0
    """
        % str(elsewhere)
    )
    result = sandbox.run("--phases-to", "phases.jsonl")
    assert result.returncode == 0, result.describe()
    assert len(read_phases(sandbox.root / "phases.jsonl")) == 9
    assert list(elsewhere.iterdir()) == []


def test_a_phases_file_that_cannot_be_written_changes_nothing(sandbox):
    sandbox.verifier(SIMPLE)
    result = sandbox.run("--phases-to", sandbox.root / "no-such-folder" / "phases.jsonl")
    assert result.returncode == 0, result.describe()
    assert result.stderr == "" and result.rewards == {"reward.txt": "0.5"}


def test_without_the_flag_a_run_writes_no_phases_file(sandbox):
    sandbox.verifier(SIMPLE)
    before = sorted(p.name for p in sandbox.root.iterdir())
    result = sandbox.run()
    assert result.returncode == 0
    assert sorted(p.name for p in sandbox.root.iterdir()) == before
