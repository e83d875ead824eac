"""The root cause first: the first thing that went wrong in a trial, in
Harbor 0.26.0's order (environment, agent, verifier), then the verifier's
part; a verifier's output Harbor never downloaded said so, not "(empty)";
where a timed-out replay was stuck. Through the real command, on genuine
Harbor 0.26.0 folders (../shared/harbor-0.26) or folders built from them."""

from __future__ import annotations

import json

import pytest

from tests.helpers.commands import no_traceback, run_tool
from tests.helpers.harbor import (
    PLANTED_FRAMES,
    READS_HELLO,
    SEPARATE,
    harbor_exception,
    harbor_masked_failure_log,
    make_job,
    planted_trial,
    sandbox_trial,
    timed_out_trial,
)
from tests.helpers.tasks import PY, STUCK_IN_ONE_FILE


def tool(env, *args, cwd):
    done = run_tool(env, *args, "--python", PY, cwd=cwd)
    no_traceback(done)
    return done


def lines_of(done) -> list[str]:
    return done.stdout.splitlines()


def test_after_an_agent_timeout_the_agent_comes_first_with_advice_about_it(task, runs, tmp_path, env):
    demo = task(verifier=READS_HELLO, toml=SEPARATE)
    message = "No reward file found at jobs/j/demo__aaaaaaa/verifier/reward.txt or ..."
    trial = sandbox_trial(
        runs / "jobs" / "j",
        demo,
        tmp_path,
        workspace={},
        mode="separate",
        capture=True,
        trial_kwargs=dict(
            agent="claude-code",
            log=harbor_masked_failure_log("demo__aaaaaaa", "RewardFileNotFoundError", message),
            exception=harbor_exception("AgentTimeoutError", "Agent execution timed out after 120.0 seconds"),
        ),
    )
    lines = lines_of(tool(env, "run", trial.path, cwd=tmp_path))
    first = next(i for i, line in enumerate(lines) if line.strip())
    cause = next(i for i, line in enumerate(lines) if line.startswith("root cause"))
    sandbox = next(i for i, line in enumerate(lines) if line.startswith("sandbox "))
    # Right under the header and the task's line, before the verifier's verdict.
    assert first == 0 and cause < sandbox and cause <= 3
    assert lines[cause] == (
        "root cause  AgentTimeoutError (in the agent): Agent execution timed out after 120.0 seconds"
    )
    assert lines[cause + 1].strip() == "then the verifier: RewardFileNotFoundError, recorded only in trial.log"
    assert lines[cause + 2].strip().startswith("try: the agent ran out of time")
    assert "[agent] timeout_sec" in lines[cause + 2]
    data = json.loads(tool(env, "run", trial.path, "--json", cwd=tmp_path).stdout)
    assert data["sandbox"]["root_cause"]["what"] == "AgentTimeoutError"
    assert data["sandbox"]["root_cause"]["phase"] == "agent"
    explained = lines_of(tool(env, "explain", trial.path, cwd=tmp_path))
    assert any(line.startswith("root cause  AgentTimeoutError (in the agent)") for line in explained[:4])


def test_a_failing_oracle_is_named_though_harbor_recorded_no_error(real, env, tmp_path):
    """nop-fail's genuine trial, as a failing oracle leaves it: agent/exit-code.txt
    holds 3, agent/oracle.txt its output, and result.json no exception."""
    trial = real / "jobs" / "nop-fail" / "hello-file__C4SunEc"
    (trial / "agent").mkdir()
    (trial / "agent" / "exit-code.txt").write_text("3")
    (trial / "agent" / "oracle.txt").write_text("solve.sh: line 2: hello: command not found\n")
    result = json.loads((trial / "result.json").read_text())
    result["exception_info"] = None
    result["agent_info"]["name"] = "oracle"
    (trial / "result.json").write_text(json.dumps(result, indent=4))
    (trial / "exception.txt").unlink()
    lines = lines_of(tool(env, "run", trial, cwd=real))
    cause = next(i for i, line in enumerate(lines) if line.startswith("root cause"))
    assert lines[cause] == (
        "root cause  exit code 3 (in the agent): the oracle's solution/solve.sh exited 3; "
        "Harbor records no error for it"
    )
    assert "then the verifier" in lines[cause + 1]
    assert "agent/oracle.txt" in lines[cause + 2]
    assert "the agent exited 3 (agent/exit-code.txt)" in "\n".join(lines)


def test_the_verifiers_own_failure_is_the_root_cause_of_a_genuine_trial(real, env):
    trial = real / "jobs" / "nop-fail" / "hello-file__C4SunEc"
    lines = lines_of(tool(env, "run", trial, cwd=real))
    cause = next(line for line in lines if line.startswith("root cause"))
    assert cause == (
        "root cause  RewardFileNotFoundError (in the verifier): 'verify called and awaited' failed: "
        "FileNotFoundError: [Errno 2] No such file or directory: '/app/hello.txt' at "
        "tasks/hello-file/tests/verifier.py:28"
    )
    passed = lines_of(tool(env, "run", real / "jobs" / "oracle-pass", cwd=real))
    assert "root cause  none: Harbor scored 1.0" in passed


def test_output_never_downloaded_after_a_verifier_timeout_is_not_called_empty(runs, tmp_path, env):
    trial = timed_out_trial(runs, tmp_path, STUCK_IN_ONE_FILE)
    assert not (trial.path / "verifier" / "test-stdout.txt").exists()
    done = tool(env, "run", trial.path, cwd=tmp_path)
    output = done.stdout.split("── sandbox: verifier/test-stdout.txt", 1)[1].splitlines()[1]
    assert output.startswith("(not downloaded: Harbor fetches /logs/verifier only once test.sh has ended")
    assert "(empty" not in done.stdout
    assert "none was downloaded" in done.stdout  # the sandbox's step, explained rightly
    data = json.loads(tool(env, "run", trial.path, "--json", cwd=tmp_path).stdout)
    assert data["sandbox"]["test_stdout_state"] == "not downloaded"
    # An empty file that Harbor did download is empty.
    (trial.path / "verifier" / "test-stdout.txt").write_text("")
    empty = tool(env, "run", trial.path, cwd=tmp_path).stdout
    assert "(empty: test.sh printed nothing)" in empty and "not downloaded" not in empty


def test_a_timed_out_replay_says_where_it_was_stuck(task, runs, tmp_path, env):
    demo = task(verifier=STUCK_IN_ONE_FILE, toml=SEPARATE + "timeout_sec = 1.0\n")
    trial = sandbox_trial(
        runs / "jobs" / "j", demo, tmp_path, workspace={}, mode="separate", capture=True, timeout_s=1.0
    )
    done = tool(env, "run", trial.path, cwd=runs)
    assert done.returncode == 124
    replay = done.stdout.split("\nreplay    ", 1)[1].splitlines()
    assert replay[2].strip() == "stuck at tasks/demo/tests/verifier.py:6 in wait"


def test_test_on_a_job_names_the_earlier_failure_before_the_verifiers_verdict(task, runs, tmp_path, env):
    demo = task(verifier=READS_HELLO, toml=SEPARATE)
    job = runs / "jobs" / "j"
    sandbox_trial(
        job, demo, tmp_path, workspace={"hello.txt": "hi"}, mode="separate", capture=True, name="demo__passed1"
    )
    sandbox_trial(
        job,
        demo,
        tmp_path,
        workspace={"hello.txt": "h"},
        mode="separate",
        capture=True,
        name="demo__timeout",
        trial_kwargs=dict(
            agent="claude-code",
            exception=harbor_exception("AgentTimeoutError", "Agent execution timed out after 60.0 seconds"),
        ),
    )
    lines = lines_of(tool(env, "test", job, cwd=tmp_path))
    row = next(line for line in lines if "demo__timeout" in line)
    assert "AgentTimeoutError → 0.0" in row
    assert "AgentTimeoutError" not in next(line for line in lines if "demo__passed1" in line)


@pytest.mark.parametrize("how", list(PLANTED_FRAMES))
def test_a_frame_the_trial_wrote_never_maps_to_a_file_outside_the_task_or_workspace(task, runs, tmp_path, env, how):
    """PathMapper joined the frame's path to the task's tests/ (or the captured
    /app) and took it when ``is_file()``: ``/tests/../../etc/passwd`` became
    ``<task>/tests/../../etc/passwd``, and a link to the user's file was taken
    as the task's; `run` said "failed at" it, and the trial screen offered
    "e opens it". Now the path is ".." folded first, and a file through a
    link that leads out is none of the task's: no local path."""
    _demo, trial, secret, frame = planted_trial(task, runs, tmp_path, how)
    done = tool(env, "run", trial.path, cwd=runs)
    # Named as the trial wrote it, never as a local file (the task's tests/, the captured app/) ...
    assert "demo/tests/.." not in done.stdout and "artifacts/app/.." not in done.stdout
    # ... and not where it failed (the output below still names the link, as the sandbox's /tests does).
    said = done.stdout.split("── sandbox: verifier/test-stdout.txt", 1)[0]
    assert "demo/tests/notes.py" not in said and "artifacts/app/notes.py" not in said
    data = json.loads(tool(env, "run", trial.path, "--json", cwd=runs).stdout)
    frames = data["sandbox"]["frames"]
    assert frames and frames[0]["sandbox_path"] == frame and frames[0]["path"] is None


def test_an_infinite_recorded_reward_is_no_number_in_the_trial_view(task, runs, tmp_path, env):
    """A trial whose result.json records the reward Infinity (another writer's:
    Harbor's verifier never scores a reward that is not finite): the job overview
    and compare say ``reward not a number``, but the trial view said ``root cause
    none: Harbor scored inf`` and ``sandbox inf``, a trial scored and fine."""
    job = make_job(runs / "jobs" / "inf", {"demo__a1": dict(task=task("demo"), rewards={"reward": 0.5})})
    result = json.loads((job / "demo__a1" / "result.json").read_text())
    result["verifier_result"]["rewards"] = {"reward": float("inf")}  # json.dumps writes Infinity
    (job / "demo__a1" / "result.json").write_text(json.dumps(result))
    lines = lines_of(tool(env, "run", job / "demo__a1", cwd=tmp_path))
    cause = next(line for line in lines if line.startswith("root cause"))
    sandbox = next(line for line in lines if line.startswith("sandbox "))
    assert "Harbor scored" not in cause and "reward not a number" in cause, lines
    assert "reward not a number" in sandbox, lines
