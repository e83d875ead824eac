"""Command line, the verifier file, and finding verify."""

import re

import pytest

SIMPLE = """
    def verify(workspace):
        return 1.0
"""


def test_plain_run_writes_the_reward(any_sandbox):
    any_sandbox.verifier(SIMPLE)
    result = any_sandbox.run()
    assert result.returncode == 0, result.describe()
    assert result.stdout == "" and result.stderr == ""
    assert result.rewards == {"reward.txt": "1.0"}


@pytest.mark.parametrize(
    "args, words",
    [
        (["--workspace", "app", "--reward-dir", "logs/verifier"], ["--verifier"]),
        (["--verifier", "tests/verifier.py", "--reward-dir", "logs/verifier"], ["--workspace"]),
        (["--reward-dir", "logs/verifier"], ["--verifier", "--workspace"]),
        (
            ["--verifier", "tests/verifier.py", "--workspace", "app", "--reward-dir", "logs/verifier", "--frobnicate"],
            ["--frobnicate"],
        ),
        (
            ["--verifier", "tests/verifier.py", "--workspace", "app", "--reward-dir", "logs/verifier", "extra"],
            ["extra"],
        ),
        (["--verifier", "tests/verifier.py", "--workspace", "--reward-dir", "logs/verifier"], ["--workspace"]),
        (
            ["--verifier", "tests/verifier.py", "--workspace", "app", "--reward-dir", "logs/verifier", "--response"],
            ["--response"],
        ),
        (
            [
                "--verifier",
                "tests/verifier.py",
                "--verifier",
                "tests/verifier.py",
                "--workspace",
                "app",
                "--reward-dir",
                "logs/verifier",
            ],
            ["--verifier"],
        ),
        (["--verifier=", "--workspace", "app", "--reward-dir", "logs/verifier"], ["--verifier"]),
        (
            [
                "--verifier",
                "tests/verifier.py",
                "--workspace",
                "app",
                "--reward-dir",
                "logs/verifier",
                "--phases-to",
                "--pdb",
            ],
            ["--phases-to", "needs a value"],
        ),
        (
            [
                "--verifier",
                "tests/verifier.py",
                "--workspace",
                "app",
                "--reward-dir",
                "logs/verifier",
                "--stack-signal",
                "USR1",
                "--stack-signal=USR2",
            ],
            ["--stack-signal", "more than once"],
        ),
        (
            ["--verifier", "tests/verifier.py", "--workspace", "app", "--reward-dir", "logs/verifier", "--explain=yes"],
            ["--explain=yes"],
        ),
        (
            ["--reward-dir", "logs/verifier", "--frobnicate", "--verifier", "tests/verifier.py", "--workspace"],
            ["--frobnicate"],
        ),
    ],
    ids=[
        "no-verifier",
        "no-workspace",
        "neither",
        "unknown-flag",
        "stray-positional",
        "flag-without-value",
        "last-flag-without-value",
        "flag-twice",
        "empty-value",
        "phases-to-without-value",
        "stack-signal-twice",
        "switch-with-a-value",
        "first-problem-wins",
    ],
)
def test_bad_command_line_is_a_contract_error(sandbox, args, words):
    sandbox.verifier(SIMPLE)
    (sandbox.reward_dir / "reward.txt").write_text("1.0", encoding="utf-8")
    result = sandbox.run_raw(*args)
    result.assert_contract_error(*words)


def test_bad_command_line_on_every_interpreter(any_sandbox):
    any_sandbox.verifier(SIMPLE)
    result = any_sandbox.run("--no-such-flag")
    result.assert_contract_error("--no-such-flag")


def test_equals_forms_of_the_flags(sandbox):
    sandbox.verifier(SIMPLE)
    result = sandbox.run_raw(
        "--verifier=tests/verifier.py",
        "--workspace=app",
        "--reward-dir=logs/verifier",
        "--task-data=%s" % sandbox.write("d.json", "{}"),
        "--phases-to=phases.jsonl",
        "--explain-to=explain.json",
        "--stack-signal=USR1",
    )
    assert result.returncode == 0, result.describe()
    assert result.rewards == {"reward.txt": "1.0"}
    assert (sandbox.root / "phases.jsonl").read_text(encoding="utf-8").count("\n") == 9
    assert (sandbox.root / "explain.json").is_file()


def test_flags_in_any_order_and_a_dash_value(sandbox):
    """'-' is a value (standard input), not a flag; switches go anywhere."""
    sandbox.verifier("""
        def verify(workspace, response):
            return response["score"]
    """)
    result = sandbox.run_raw(
        "--pdb",
        "--response",
        "-",
        "--reward-dir",
        "logs/verifier",
        "--workspace",
        "app",
        "--explain-to",
        "explain.json",
        "--verifier",
        "tests/verifier.py",
        input=b'{"score": 0.25}',
    )
    assert result.returncode == 0, result.describe()
    assert result.rewards == {"reward.txt": "0.25"}
    assert "nothing to debug" in result.stderr


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help(sandbox, flag):
    result = sandbox.run_raw(flag)
    assert result.returncode == 0, result.describe()
    text = " ".join(result.stdout.split())
    for option in (
        "--verifier",
        "--workspace",
        "--response",
        "--task-data",
        "--reward-dir",
        "--explain",
        "--explain-to",
        "--phases-to",
        "--stack-signal",
        "--pdb",
    ):
        assert option in text
    assert "/logs/verifier" in text
    explain = text[text.index("--explain ") :]
    assert re.search(r"imports the verifier module", explain, re.IGNORECASE), result.stdout
    assert result.rewards == {}


@pytest.mark.parametrize(
    "args",
    [["--help", "--frobnicate"], ["--stack-signal", "NOPE", "-h"], ["--verifier", "--help"]],
    ids=["unknown-flag", "bad-signal", "missing-value"],
)
def test_help_wins_over_a_bad_command_line(sandbox, args):
    result = sandbox.run_raw(*args)
    assert result.returncode == 0 and result.stderr == "", result.describe()
    assert result.stdout.startswith("usage: run_verifier.py")


def test_help_wins_over_other_arguments_and_runs_nothing(sandbox):
    marker = sandbox.root / "called"
    sandbox.verifier(
        """
        open(%r, "w").close()

        def verify(workspace):
            return 1.0
    """
        % str(marker)
    )
    result = sandbox.run("--help")
    assert result.returncode == 0
    assert "--explain" in result.stdout
    assert not marker.exists()
    assert result.rewards == {}


def test_missing_verifier_file_is_a_contract_error(any_sandbox):
    missing = any_sandbox.tests / "nowhere.py"
    result = any_sandbox.run(verifier=missing)
    result.assert_contract_error(str(missing))


def test_verifier_that_is_a_folder_is_a_contract_error(sandbox):
    folder = sandbox.tests / "verifier.py"
    folder.mkdir()
    result = sandbox.run(verifier=folder)
    result.assert_contract_error(str(folder))


def test_no_verify_is_a_contract_error(sandbox):
    sandbox.verifier("""
        def check(workspace):
            return 1.0
    """)
    result = sandbox.run()
    result.assert_contract_error("verify")


@pytest.mark.parametrize("value", ["1.0", "None", "'verify'"])
def test_verify_not_callable_is_a_contract_error(sandbox, value):
    sandbox.verifier("verify = %s\n" % value)
    result = sandbox.run()
    result.assert_contract_error("verify", "not callable")


def test_verify_imported_from_a_helper_is_used(sandbox):
    sandbox.write(
        "tests/grading.py",
        """
        def verify(workspace):
            return 0.5
    """,
    )
    sandbox.verifier("from grading import verify\n")
    result = sandbox.run()
    assert result.returncode == 0, result.describe()
    assert result.rewards == {"reward.txt": "0.5"}


def test_verifier_module_is_importable_under_its_own_name(sandbox):
    # A helper importing the verifier module back gets the same module.
    sandbox.write(
        "tests/grading.py",
        """
        def score():
            import verifier
            return verifier.SCORE
    """,
    )
    sandbox.verifier("""
        import grading

        SCORE = 0.5

        def verify(workspace):
            return grading.score()
    """)
    result = sandbox.run()
    assert result.returncode == 0, result.describe()
    assert result.rewards == {"reward.txt": "0.5"}


def test_verifier_runs_as_a_module_not_as_main(sandbox):
    sandbox.verifier("""
        if __name__ == "__main__":
            raise SystemExit("ran as a script")

        def verify(workspace):
            return 1.0 if __file__.endswith("verifier.py") else 0.0
    """)
    result = sandbox.run()
    assert result.returncode == 0, result.describe()
    assert result.rewards == {"reward.txt": "1.0"}


def test_verifier_stdout_and_stderr_pass_through(sandbox):
    sandbox.verifier("""
        import sys

        def verify(workspace):
            print("to stdout")
            print("to stderr", file=sys.stderr)
            return 1.0
    """)
    result = sandbox.run()
    assert result.returncode == 0, result.describe()
    assert result.stdout == "to stdout\n"
    assert result.stderr == "to stderr\n"
