"""The local replay (the real runner, in a real subprocess, through a
Session in Harbor mode) and its agreement with the sandbox."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.helpers.commands import run_tool
from tests.helpers.harbor import (
    HARBOR_REAL,
    READS_HELLO,
    SEPARATE,
    harbor_exception,
    make_job,
    replay_trial,
    sandbox_trial,
)
from tests.helpers.processes import needs_namespaces
from tests.helpers.tasks import HANG_GUARD_S, SHIM, no_python, other_python
from verifier_tui.engine.harbor.agreement import compare
from verifier_tui.engine.harbor.folders import open_harbor
from verifier_tui.engine.harbor.replay import shim_verifier
from verifier_tui.engine.harbor.walkthrough import trial_json, walk_trial

NOT_FOUND = "RewardFileNotFoundError"


def trial_from_sandbox(runs, tmp_path, demo, **kwargs):
    return sandbox_trial(runs / "jobs" / "j", demo, tmp_path, **kwargs)


def replay(trial, step=None, **kwargs):
    opened, replayed = replay_trial(trial, step, **kwargs)
    return opened.walk, opened.plan, replayed.local, opened.to_json(replayed)


def test_separate_mode_with_app_captured_replays_on_exactly_what_the_verifier_saw(task, runs, tmp_path):
    demo = task(verifier=READS_HELLO, toml=SEPARATE)
    trial = trial_from_sandbox(runs, tmp_path, demo, workspace={"hello.txt": "hi"}, mode="separate", capture=True)
    walk, plan, local, out = replay(trial)
    assert plan.workspace == trial.path / "artifacts" / "app" and plan.workspace_origin == "exact"
    assert local.verdict.rewards == {"reward": 1.0} and local.mode == "harbor"
    assert out["same"] is True and out["differences"] == []
    assert out["local"] == local.to_json()  # the run result exactly as `run --json` prints it
    assert out["local_skipped"] is None
    assert out["sandbox"]["harbor_verdict"]["rewards"] == {"reward": 1.0}


def test_a_replay_is_the_same_blocking_and_from_asyncio(task, runs, tmp_path):
    """One replay behind both faces (``run TRIAL``'s and the TUI's): the same
    runs (verifier-tui's runner, then the task's test.sh where the view runs
    it), the same comparison."""
    from verifier_tui.engine.harbor.trial_session import TrialSession

    demo = task(verifier=READS_HELLO, toml=SEPARATE)
    trial = trial_from_sandbox(runs, tmp_path, demo, workspace={"hello.txt": "hi"}, mode="separate", capture=True)
    with TrialSession(trial) as opened:
        faces = [opened.run(), asyncio.run(asyncio.wait_for(opened.arun(), HANG_GUARD_S))]
    seen = [
        (r.local.outcome, r.local.verdict, r.local.verdict_by, r.local.runner_verdict, r.local.notices, r.agreement)
        for r in faces
    ]
    assert seen[0] == seen[1] and faces[0].agreement.same is True


def test_verify_raised_in_both_is_the_same_verdict(task, runs, tmp_path):
    demo = task(verifier=READS_HELLO, toml=SEPARATE)
    trial = trial_from_sandbox(runs, tmp_path, demo, workspace={"other.txt": ""}, mode="separate", capture=True)
    _, _, local, out = replay(trial)
    assert local.outcome.slug == "verifier_raised"
    assert out["sandbox"]["harbor_verdict"]["error"] == NOT_FOUND and out["local"]["verdict_error"] == NOT_FOUND
    assert out["same"] is True


def test_a_required_response_fails_both_in_harbor_mode(task, runs, tmp_path):
    demo = task(verifier="def verify(workspace, response):\n    return 1.0\n", toml=SEPARATE)
    trial = trial_from_sandbox(runs, tmp_path, demo, workspace={}, mode="separate", capture=True)
    _, _, local, out = replay(trial)
    assert local.outcome.slug == "contract_error" and local.inputs.response is None
    assert out["sandbox"]["phase"] == "arguments_bound" and out["same"] is True


def test_shared_mode_without_app_gives_no_replay_and_says_what_to_give(task, runs, tmp_path):
    demo = task(verifier=READS_HELLO)
    trial = trial_from_sandbox(runs, tmp_path, demo, workspace={"hello.txt": "hi"})
    _, plan, local, out = replay(trial)
    assert local is None and out["local"] is None and out["same"] is None and out["differences"] == []
    assert out["local_skipped"].startswith("no workspace to replay on: the trial did not capture /app")
    assert "--workspace DIR, --case NAME or --stand-in empty" in out["local_skipped"]


def test_a_stand_in_workspace_replays_and_is_named_when_the_verdicts_differ(task, runs, tmp_path):
    demo = task(verifier=READS_HELLO, cases={"good": {"hello.txt": "hi"}, "bad": {"hello.txt": "nope"}})
    trial = trial_from_sandbox(runs, tmp_path, demo, workspace={"hello.txt": "hi"})
    _, plan, _, out = replay(trial, case="good")
    assert plan.workspace_origin == "stand-in" and out["same"] is True
    _, _, local, out = replay(trial, case="bad")
    assert local.verdict.rewards == {"reward": 0.0} and out["same"] is False
    assert out["differences"][0] == "the sandbox ended with 1.0, the replay with 0.0"
    assert any(d.startswith("the workspace is your stand-in (bad)") for d in out["differences"])
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "hello.txt").write_text("hi")
    assert replay(trial, workspace=mine)[3]["same"] is True


def test_a_shared_mode_snapshot_is_named_when_the_verdicts_differ(task, runs, tmp_path):
    """Shared mode: the /app artifact was collected in the agent's container, so it need not be what
    the verifier saw; when the replay on it ends otherwise, that is given as a likely reason."""
    demo = task(verifier=READS_HELLO)
    trial = trial_from_sandbox(runs, tmp_path, demo, workspace={"hello.txt": "hi"}, mode="shared", capture=True)
    walk, plan, _, out = replay(trial)
    assert plan.workspace_origin == "snapshot" and out["same"] is True
    (plan.workspace / "hello.txt").write_text("changed after the verifier ran")
    _, _, local, out = replay(trial)
    assert local.verdict.rewards == {"reward": 0.0} and out["same"] is False
    assert any(d.startswith("the workspace is the shared-mode snapshot") for d in out["differences"])


def test_a_task_changed_since_the_run_is_the_first_reason_given(task, runs, tmp_path):
    demo = task(verifier=READS_HELLO, toml=SEPARATE)
    trial = trial_from_sandbox(runs, tmp_path, demo, workspace={"hello.txt": "hi"}, mode="separate", capture=True)
    later = time.time() + 5
    verifier = demo / "tests" / "verifier.py"
    verifier.write_text(READS_HELLO.replace("'hi'", "'hello'"))
    os.utime(verifier, (later, later))
    _, _, _, out = replay(trial)
    assert out["same"] is False
    assert out["trial"]["task_digest"]["same"] is False and out["trial"]["task_digest"]["tests_changed"] is True
    assert "the task changed since the run" in out["differences"][1]
    assert any("tests/verifier.py" in d for d in out["differences"])


def test_a_sandbox_timeout_replays_with_the_same_timeout(task, runs, tmp_path):
    slow = "import time\n\ndef verify(workspace):\n    time.sleep(30)\n    return 1.0\n"
    demo = task(verifier=slow, toml=SEPARATE + "timeout_sec = 1.0\n")
    trial = trial_from_sandbox(runs, tmp_path, demo, workspace={}, mode="separate", capture=True, timeout_s=1.0)
    walk, plan, local, out = replay(trial)
    assert plan.timeout_s == 1.0
    assert local.outcome.slug == "timed_out"
    assert out["same"] is True  # both: VerifierTimeoutError


def test_the_sandbox_timed_out_and_the_replay_did_not(task, runs, tmp_path):
    slow = "import time\n\ndef verify(workspace):\n    time.sleep(30)\n    return 1.0\n"
    demo = task(verifier=slow, toml=SEPARATE + "timeout_sec = 1.0\n")
    trial = trial_from_sandbox(runs, tmp_path, demo, workspace={}, mode="separate", capture=True, timeout_s=1.0)
    (demo / "tests" / "verifier.py").write_text("def verify(workspace):\n    return 1.0\n")  # fixed since
    _, _, local, out = replay(trial)
    assert local.verdict.rewards == {"reward": 1.0}
    assert out["same"] is False
    assert any(d.startswith("the sandbox timed out after 1 s and the replay did not") for d in out["differences"])


def test_the_replay_timed_out_and_the_sandbox_did_not(task, runs, tmp_path):
    demo = task(verifier="def verify(workspace):\n    return 1.0\n", toml=SEPARATE)
    trial = trial_from_sandbox(runs, tmp_path, demo, workspace={}, mode="separate", capture=True)
    (demo / "tests" / "verifier.py").write_text("import time\n\ndef verify(workspace):\n    time.sleep(30)\n")
    _, _, local, out = replay(trial, timeout=1.0)
    assert local.outcome.slug == "timed_out" and out["same"] is False
    assert any(d.startswith("the replay timed out after 1 s and the sandbox did not") for d in out["differences"])


PY38 = other_python("3.8")


@pytest.mark.skipif(PY38 is None, reason=no_python("3.8"))
def test_a_different_python_seen_in_the_sandbox_traceback_is_a_reason(task, runs, tmp_path):
    demo = task(verifier="def verify(workspace):\n    return float((workspace / 'n.txt').read_text())\n")
    trial = trial_from_sandbox(runs, tmp_path, demo, workspace={}, python=PY38)
    stand_in = tmp_path / "stand-in"
    stand_in.mkdir()
    (stand_in / "n.txt").write_text("0.5")
    _, _, local, out = replay(trial, workspace=stand_in)
    assert out["sandbox"]["python"] == "3.8"
    assert out["same"] is False
    assert any(
        d.startswith("a different Python: the sandbox ran 3.8 (seen in its traceback's paths), the replay 3.")
        for d in out["differences"]
    )


def test_a_nemo_gym_that_resolved_elsewhere_in_the_sandbox_is_a_reason(task, runs, tmp_path):
    demo = task(verifier="def verify(workspace):\n    return 1.0\n", toml=SEPARATE)
    stdout = (
        "Traceback (most recent call last):\n"
        '  File "/tests/verifier.py", line 3, in verify\n'
        '  File "/usr/local/lib/python3.11/site-packages/nemo_gym/verifiers/helpers.py", line 9, in score\n'
        "AttributeError: module 'nemo_gym.verifiers' has no attribute 'score_text'\n"
    )
    make_job(
        runs / "jobs" / "j",
        {
            "demo__aaaaaaa": dict(
                task=demo,
                mode="separate",
                app={},
                verifier_files={"test-stdout.txt": stdout},
                exception=harbor_exception(NOT_FOUND, "No reward file found"),
            )
        },
    )
    _, _, _, out = replay(open_harbor(runs / "jobs" / "j" / "demo__aaaaaaa")[0])
    assert out["same"] is False
    assert (
        "in the sandbox, nemo_gym resolved outside the vendored tests/.ng copy "
        "(/usr/local/lib/python3.11/site-packages)"
    ) in out["differences"]


def test_a_verifier_env_template_is_filled_with_its_own_default_and_said(task, runs, tmp_path, monkeypatch):
    """Harbor filled ``${W:-0.5}`` on the machine that ran the job and kept the
    value nowhere: the replay takes the template's default, not the W this
    shell happens to hold, says so, and gives it as a reason when the two
    differ (here, after --env chose another value)."""
    verifier = "import os\n\ndef verify(workspace):\n    return float(os.environ['WEIGHT'])\n"
    demo = task(verifier=verifier, toml=SEPARATE + 'env = { WEIGHT = "${W:-0.5}" }\n')
    trial = trial_from_sandbox(runs, tmp_path, demo, workspace={}, mode="separate", capture=True, env={"WEIGHT": "0.5"})
    monkeypatch.setenv("W", "0.25")  # this shell's W, for something else
    _, plan, local, out = replay(trial)
    assert plan.env == {"WEIGHT": "0.5"} and local.verdict.rewards == {"reward": 0.5} and out["same"] is True
    said = (
        "task.toml [verifier] env writes WEIGHT = '${W:-0.5}', which Harbor filled on the machine that ran the "
        "job and recorded nowhere; the replay takes WEIGHT='0.5' from the template's default"
    )
    assert any(n.startswith(said) for n in out["replay"]["notices"])
    _, _, local, out = replay(trial, env=("WEIGHT=0.25",))
    assert local.verdict.rewards == {"reward": 0.25} and out["same"] is False
    assert any(d.endswith("the replay takes WEIGHT from --env WEIGHT") for d in out["differences"])


def test_a_replay_gets_what_env_adds_and_nothing_else_of_the_shell(task, runs, tmp_path, monkeypatch):
    shows = (
        "import os\n\n"
        "def verify(workspace):\n"
        "    print(os.environ.get('VTUI_TOKEN'), os.environ.get('VTUI_TYPED'))\n"
        "    return 1.0\n"
    )
    monkeypatch.setenv("VTUI_TOKEN", "from the shell")
    trial = trial_from_sandbox(
        runs, tmp_path, task(verifier=shows, toml=SEPARATE), workspace={}, mode="separate", capture=True
    )
    _, _, plain, _ = replay(trial)
    assert plain.stdout.text == "None None\n"
    _, _, added, _ = replay(trial, env=("VTUI_TOKEN", "VTUI_TYPED=typed"))
    assert added.stdout.text == "from the shell typed\n"


def test_a_missing_variable_is_named_among_the_reasons(task, runs, tmp_path, monkeypatch):
    """``${W}`` names a variable of the machine that ran the job: this shell's W (set here) is not
    taken, the replay runs without WEIGHT and says so among the reasons; --env W passes it."""
    verifier = "import os\n\ndef verify(workspace):\n    return float(os.environ.get('WEIGHT', '0'))\n"
    demo = task(verifier=verifier, toml=SEPARATE + 'env = { WEIGHT = "${W}" }\n')
    trial = trial_from_sandbox(runs, tmp_path, demo, workspace={}, mode="separate", capture=True, env={"WEIGHT": "1"})
    monkeypatch.setenv("W", "1")
    _, plan, _, out = replay(trial)
    assert out["same"] is False and "WEIGHT" not in plan.env
    said = "W is not taken from your environment in a replay (WEIGHT = '${W}' in task.toml [verifier] env)"
    assert any(d.startswith(said) for d in out["differences"])
    assert any(n.startswith(said) for n in out["local"]["notices"])
    _, plan, local, out = replay(trial, env=("W",))
    assert plan.env["WEIGHT"] == "1" and local.verdict.rewards == {"reward": 1.0} and out["same"] is True


def test_a_templates_default_that_reads_as_a_template_is_given_as_written(task, runs, tmp_path, monkeypatch):
    """``${W:-${VTUI_SECRET}}``: Harbor resolves once, so the verifier got the text ``${VTUI_SECRET}``. The
    replay said so, then the runner's environment resolved it again and took this shell's secret."""
    shows = "import os\n\ndef verify(workspace):\n    print(os.environ.get('WEIGHT'))\n    return 1.0\n"
    demo = task(verifier=shows, toml=SEPARATE + 'env = { WEIGHT = "${VTUI_UNSET:-${VTUI_SECRET}}" }\n')
    trial = trial_from_sandbox(runs, tmp_path, demo, workspace={}, mode="separate", capture=True)
    monkeypatch.setenv("VTUI_SECRET", "s3cret-of-the-shell")
    monkeypatch.delenv("VTUI_UNSET", raising=False)
    _, plan, local, out = replay(trial)
    assert plan.env == {"WEIGHT": "${VTUI_SECRET}"} and local.stdout.text == "${VTUI_SECRET}\n"
    assert "s3cret-of-the-shell" not in json.dumps(out)
    assert any("the replay takes WEIGHT='${VTUI_SECRET}' from the template's default" in n for n in plan.notices)


def test_the_verifier_the_shim_names_is_the_one_replayed(task):
    demo = task(
        verifier=None,
        files={
            "checks/main.py": "def verify(workspace):\n    return 1.0\n",
            "checks/other.py": "def verify(workspace):\n    return 0.0\n",
        },
        shim=False,
    )
    (demo / "tests" / "test.sh").write_text(
        SHIM.replace("--verifier /tests/verifier.py", "--verifier /tests/checks/main.py")
    )
    assert shim_verifier(demo) == (demo / "tests" / "checks" / "main.py", None)


# test.sh's lines, each with the --verifier bash passes the runner as the file it names (None: known only as
# test.sh runs): a comment, a hint echoed and a quoted blank once gave old.py, x.py and "my".
_NAMED_BY_SH = [
    ("# was: --verifier /tests/old.py\nset -- --verifier /tests/main.py --workspace /app\n", "main.py"),
    ("echo --verifier /tests/x.py\nset -- --verifier /tests/main.py --workspace /app\n", "main.py"),
    ("set -- --verifier '/tests/my verifier.py' --workspace /app\n", "my verifier.py"),
    ('set -- "--verifier=/tests/main.py" --workspace /app\n', "main.py"),
    ("set -- --verifier /tests//checks/../main.py --workspace /app\n", None),
    ('V=/tests/main.py\nset -- --verifier "$V" --workspace /app\n', "main.py"),
    ('[ -f /x ] && V=/tests/main.py\nset -- --verifier "$V" --workspace /app\n', None),
    ("set -- --verifier /tests/{main,x}.py --workspace /app\n", None),
    # a line continuing a list (&&, ||, |, a comment after them) or a group after ! or time: bash may not run it
    ('[ -f /x ] &&\n  V=/tests/main.py\nset -- --verifier "$V" --workspace /app\n', None),
    ('true || ! {\nV=/tests/main.py\n}\nset -- --verifier "$V" --workspace /app\n', None),
    ('true || time {\nV=/tests/main.py\n}\nset -- --verifier "$V" --workspace /app\n', None),
    ('false && # maybe\nV=/tests/main.py\nset -- --verifier "$V" --workspace /app\n', None),
    ('true ||\nV=/tests/main.py\nset -- --verifier "$V" --workspace /app\n', None),
    ('echo x |\nV=/tests/main.py\nset -- --verifier "$V" --workspace /app\n', None),
    ('V=/tests/main.py\nfor i in 1 2; do\nset -- --verifier "$V" --workspace /app\nV=/tests/x.py\ndone\n', None),
    ('f() {\nset -- --verifier "$V" --workspace /app\n}\nV=/tests/main.py\nf\n', None),
    # what is not followed before the use, even closed: a loop, a function (its body may run later), a
    # coproc, a subshell, a here-document, a command named by an expansion, bash's arithmetic (N='V=7')
    ('V=/tests/main.py\nfor i in 1 2; do\n  :\ndone\nset -- --verifier "$V" --workspace /app\n', None),
    *(
        (f'V=/tests/main.py\n{between}\nset -- --verifier "$V" --workspace /app\n', None)
        for between in (
            "function cleanup { rm -f /tmp/x; }",
            "coproc C { :; }",
            "f() (\n  V=/tests/x.py\n)",
            "cat <<$'E'\nE\nV=/tests/x.py",
            "${SRC:-.} /tmp/sets",
            "c=source\n$c /tmp/sets",
            "P=$'$\\x5b\\x56=0]'\n: \"${P@P}\"",  # prompt expansion's arithmetic
            "X=$'\\x56'\n: ${!X:=/tests/x.py}",  # the name X holds
            "PS4=$'+\\x24\\x5b\\x56=7]'\nset -x\n:\nset +x",  # xtrace expands PS4, its arithmetic
            "N=$'a\\x5b\\x56=7]'\n[ -v \"$N\" ]",  # test -v evaluates the subscript
            "N=$'a\\x5b\\x56=7]'\ntest -v \"$N\"",
            *(
                "N=`printf '\\126=7'`\n" + use  # N holds V=7
                for use in ("(( N ))", "echo $[N]", "[[ N -eq 5 ]]", "echo ${s:N}", "arr[N]=1")
            ),
        )
    ),
    # text run through eval or source behind options or an assignment, not read here
    *(
        (f'V=/tests/main.py\n{run} /tmp/sets\nset -- --verifier "$V" --workspace /app\n', None)
        for run in ("command -p .", "builtin -- source", "time -p source", "command -- eval", "A=1 eval", "2>&1 .")
    ),
    # a variable bash sets itself, or V set through a name made as test.sh runs
    ('_=/tests/main.py\ntrue /tests/x.py\nset -- --verifier "$_" --workspace /app\n', None),
    ('PWD=/tests/main.py\ncd /tmp\nset -- --verifier "$PWD" --workspace /app\n', None),
    ('REPLY=/tests/main.py\nread -r </dev/null\nset -- --verifier "$REPLY" --workspace /app\n', None),
    *(
        (f'V=/tests/main.py\nN=`printf "\\126"`\n{sets}\nset -- --verifier "$V" --workspace /app\n', None)
        for sets in (
            *('printf -v "$N" %s /tests/x.py', 'declare "$N=/tests/x.py"', 'read -r "$N" <<< /tests/x.py'),
            *('unset "$N"', 'export "$N=/tests/x.py"', "declare -n R=$N\nR=/tests/x.py"),
            'trap "$N=/tests/x.py" DEBUG',
        )
    ),
]


@pytest.mark.parametrize(("lines", "named"), _NAMED_BY_SH)
def test_the_verifier_replayed_is_the_one_bash_passes_the_runner(task, lines, named):
    demo = task(
        verifier=None,
        files={
            name: "def verify(workspace):\n    return 1.0\n"
            for name in ("main.py", "old.py", "x.py", "my", "my verifier.py")
        },
        shim=False,
    )
    (demo / "tests" / "test.sh").write_text("#!/bin/bash\n" + lines + 'exec python3 /tests/.ng/run_verifier.py "$@"\n')
    assert shim_verifier(demo)[0] == (None if named is None else demo / "tests" / named)


def test_a_long_test_sh_is_read_no_further_than_the_runners_line(task):
    """Only what runs before the runner's line decides the ``$V`` it passes: every later line was taken
    apart too, so a 1.8 MB test.sh took seconds to explain (3.7 s, where 0.28 s had done before)."""
    demo = task(verifier=None, files={"main.py": "def verify(workspace):\n    return 1.0\n"}, shim=False)
    (demo / "tests" / "test.sh").write_text(
        '#!/bin/bash\nV=/tests/main.py\npython3 /tests/.ng/run_verifier.py --workspace /app --verifier "$V"\n'
        + "; y" * 600_000
        + "\n"
    )
    started = time.monotonic()
    assert shim_verifier(demo)[0] == demo / "tests" / "main.py"
    assert time.monotonic() - started < 1.5


def _snapshot(folder: Path) -> dict:
    return {p.relative_to(folder).as_posix(): (p.stat().st_mtime_ns, p.stat().st_size) for p in folder.rglob("*")}


@pytest.mark.skipif(HARBOR_REAL is None, reason="../shared/harbor-0.26 is not here")
def test_the_real_trials_replay_the_same_and_nothing_of_theirs_is_written(tmp_path):
    before = _snapshot(HARBOR_REAL)
    stand_in = tmp_path / "hello"
    stand_in.mkdir()
    (stand_in / "hello.txt").write_text("hello world\n")
    empty = tmp_path / "empty"
    empty.mkdir()
    outcomes = {}
    for job in ("oracle-pass", "nop-fail", "separate-mode", "multi-step"):
        trial = open_harbor(HARBOR_REAL / "jobs" / job)[0].trials[0]
        for step in trial.steps:
            workspace = None if job == "separate-mode" else (empty if job == "nop-fail" else stand_in)
            _, _, _, out = replay(trial, step.name, workspace=workspace)
            outcomes[(job, step.name)] = (
                out["same"],
                out["sandbox"]["harbor_verdict"]["rewards"] or out["sandbox"]["harbor_verdict"]["error"],
            )
    assert outcomes == {
        ("oracle-pass", None): (True, {"reward": 1.0}),
        ("nop-fail", None): (True, NOT_FOUND),
        ("separate-mode", None): (True, {"reward": 1.0}),
        ("multi-step", "first"): (True, {"reward": 1.0}),
        ("multi-step", "second"): (True, {"reward": 1.0}),
    }
    assert _snapshot(HARBOR_REAL) == before


def test_compare_without_a_local_run_is_null(task, runs, tmp_path):
    demo = task(toml=SEPARATE)
    trial = trial_from_sandbox(runs, tmp_path, demo, workspace={}, mode="separate", capture=True)
    walk = walk_trial(trial)
    assert compare(walk.sandbox, walk.facts, None).same is None
    assert json.dumps(trial_json(walk))  # the object is JSON as it is


def no_reward_trial(runs, demo, said):
    """A trial of ``demo`` whose test.sh said ``said`` and wrote no reward (separate mode, /app captured)."""
    make_job(
        runs / "jobs" / "j",
        {
            "demo__aaaaaaa": dict(
                task=demo,
                mode="separate",
                app={"hello.txt": "hi"},
                verifier_files={"test-stdout.txt": said},
                exception=harbor_exception(NOT_FOUND, "No reward file found at /logs/verifier/reward.txt"),
            )
        },
    )
    return open_harbor(runs / "jobs" / "j" / "demo__aaaaaaa")[0]


def test_a_test_sh_that_dies_before_the_runner_replays_as_the_sandbox_ran_it(task, runs, tmp_path, monkeypatch):
    """The verdict comes from the task's own test.sh, run
    as Harbor ran it (in the sandbox's view), not from the runner started
    directly; the runner beside it explains, and the disagreement is said."""
    from verifier_tui.engine.sandbox import isolation

    if isolation.view_problem()[1] is not None:
        pytest.skip("the task's test.sh names /tests and /app: it runs only in the namespace's view")
    monkeypatch.setenv(isolation.VARIABLE, "namespace")
    missing = f"/opt/verifier-tui-no-such-runtime-{os.getpid()}"
    demo = task(verifier=READS_HELLO, toml=SEPARATE)
    (demo / "tests" / "test.sh").write_text(SHIM.replace("\nexec ", f"\ncd {missing} || exit 1\nexec ", 1))
    walk, plan, local, out = replay(
        no_reward_trial(runs, demo, f"/tests/test.sh: line 47: cd: {missing}: No such file or directory\n")
    )
    assert local.verdict.error == NOT_FOUND and local.verdict_by == "test.sh"
    assert f"cd: {missing}: No such file or directory" in local.stderr.text
    assert out["same"] is True
    assert local.runner_verdict == {
        "outcome": "reward_written",
        "outcome_words": "exit 0 · reward written",
        "exit_code": 0,
        "rewards": {"reward": 1.0},
        "verdict_error": None,
        "agrees": False,
    }
    # Its own outcome, at the script's line: the steps are the script's, none reached (the runner,
    # run alone, got through them all, which would say the verifier ran).
    assert local.outcome.slug == "test_sh_ended" and local.phases is None
    assert out["local_phases"]["stopped_at"] == "test_sh"
    assert {p["status"] for p in out["local_phases"]["phases"]} == {"not reached"}
    line = (demo / "tests" / "test.sh").read_text().splitlines().index(f"cd {missing} || exit 1") + 1
    assert out["local_failure"] == {"path": str(demo / "tests" / "test.sh"), "line": line}
    assert out["sandbox"]["phase"] == "test_sh" and out["judged_by"] == "test.sh"


def test_a_test_sh_that_leaves_a_reward_link_after_the_runner_is_not_said_to_have_ended_before_it(
    task, runs, tmp_path, monkeypatch
):
    """A replayed test.sh ran the runner, then left ``reward.txt`` as a link:
    the replay said "test.sh exited 0 before it started the runner, saying
    nothing of why" and showed every step unknown, though the runner ran and
    a link (which the tool said) was left in its reward folder."""
    from verifier_tui.engine.sandbox import isolation

    if isolation.view_problem()[1] is not None:
        pytest.skip("the task's test.sh names /tests and /app: it runs only in the namespace's view")
    monkeypatch.setenv(isolation.VARIABLE, "namespace")
    demo = task(verifier=READS_HELLO, toml=SEPARATE)
    plant = "\nrm -f /logs/verifier/reward.txt\nln -s /proc/self/environ /logs/verifier/reward.txt\n"
    (demo / "tests" / "test.sh").write_text(SHIM.replace("\nexec ", "\n", 1) + plant)
    trial = trial_from_sandbox(runs, tmp_path, demo, workspace={"hello.txt": "hi"}, mode="separate", capture=True)
    _, _, local, out = replay(trial)
    assert local.verdict_by == "test.sh" and local.verdict.error == "unknown", local.verdict
    assert "reward.txt is a link to /proc/self/environ" in (local.verdict.message or "")
    assert local.outcome.slug != "test_sh_ended" and local.phases is not None, local.outcome
    assert not any("before it started the runner" in said for said in [*local.notices, *out["differences"]])
    link = "reward.txt is a link to /proc/self/environ: Harbor would read it inside the container; not read here"
    assert out["runner_alone"]["why"] == link, out["runner_alone"]


def test_a_verdict_from_test_sh_names_no_runner_difference_as_a_reason(task, runs, tmp_path, monkeypatch):
    """The task vendors its own runner: when the replay's verdict comes from
    its test.sh (which runs that runner, as the sandbox did), the runners'
    difference is still said of the phases, but never given as a reason the
    verdicts differ."""
    from tests.helpers.harbor import RUNNER
    from verifier_tui.engine.sandbox import isolation

    if isolation.view_problem()[1] is not None:
        pytest.skip("the task's test.sh runs only in the namespace's view")
    monkeypatch.setenv(isolation.VARIABLE, "namespace")
    demo = task(verifier=READS_HELLO, cases={"bad": {"hello.txt": "nope"}})
    (demo / "tests" / ".ng").mkdir()
    (demo / "tests" / ".ng" / "run_verifier.py").write_text(RUNNER.read_text() + "\n# the task's own copy\n")
    trial = trial_from_sandbox(runs, tmp_path, demo, workspace={"hello.txt": "hi"})
    _, _, local, out = replay(trial, case="bad")
    assert local.verdict_by == "test.sh" and out["same"] is False
    runners = "differs from the runner verifier-tui replays with"
    assert any(runners in n for n in local.notices)
    assert not any(runners in d for d in out["differences"])


def test_a_runner_behind_a_link_is_not_compared_through_it(task, runs, tmp_path):
    """The task's tests/.ng a link to a folder elsewhere: the replay read the runner through the link and said
    it "differs ... (--runner task replays with the task's)", where --runner task refuses a runner behind a
    link. It is read as --runner task reads it (no link, beneath tests/): no runner of the task's, no word."""
    from tests.helpers.harbor import RUNNER

    away = tmp_path / "elsewhere"
    away.mkdir()
    (away / "run_verifier.py").write_text(RUNNER.read_text() + "\n# not the task's\n")
    demo = task(verifier=READS_HELLO, toml=SEPARATE)
    trial = trial_from_sandbox(runs, tmp_path, demo, workspace={"hello.txt": "hi"}, mode="separate", capture=True)
    (demo / "tests" / ".ng").symlink_to(away)
    _, plan, _, _ = replay(trial)
    assert plan.runner_note is None and not any("differs from the runner" in n for n in plan.notices), plan.notices


def test_the_copy_sandboxs_words_are_what_the_replay_ran_with_not_asked_again(task, runs, tmp_path, monkeypatch):
    """A replay in the copy sandbox says why, in ``run TRIAL --json`` and in
    ``test JOB``'s rows alike: from what the run recorded. Asked again when
    reported, a machine whose answer had changed meanwhile (the view now
    possible, a probe said "no" after a minute) had the copy replay said to
    have run in the sandbox's view."""
    from verifier_tui.commands.harbor import job_row

    needs_namespaces()
    demo = task(verifier=READS_HELLO, toml=SEPARATE)
    trial = trial_from_sandbox(runs, tmp_path, demo, workspace={"hello.txt": "hi"}, mode="separate", capture=True)
    monkeypatch.setenv("VERIFIER_TUI_SANDBOX", "copy")
    opened, replayed = replay_trial(trial)
    assert replayed.local.sandbox == "copy"
    monkeypatch.delenv("VERIFIER_TUI_SANDBOX")  # this machine has the view: asked now, it says so
    said = "sandbox: copy (asked for): the verifier runs on this machine as you and can write your files"
    assert opened.to_json(replayed)["copy_sandbox"] == said
    assert job_row(opened, replayed, stderr=False).copy_sandbox == said


def test_a_crlf_test_sh_replays_as_the_sandbox_that_never_started_it(task, runs, tmp_path, monkeypatch):
    """A trial of a task whose test.sh was saved with CRLF endings: `#!/usr/bin/env bash\\r` found no
    `bash\\r`, test.sh exited 127 and Harbor recorded RewardFileNotFoundError. The replay ran the runner,
    then test.sh started as `/usr/bin/env bash` (the \\r dropped): reward 1.0, said to differ."""
    from verifier_tui.engine.sandbox import isolation

    if isolation.view_problem()[1] is not None:
        pytest.skip("the task's test.sh names /tests and /app: it runs only in the namespace's view")
    monkeypatch.setenv(isolation.VARIABLE, "namespace")
    demo = task(verifier=READS_HELLO, toml=SEPARATE)
    (demo / "tests" / "test.sh").write_bytes(SHIM.replace("\n", "\r\n").encode())
    _, _, local, out = replay(no_reward_trial(runs, demo, "/usr/bin/env: 'bash\\r': No such file or directory\n"))
    assert local.verdict.error == NOT_FOUND and local.exit_code == 127, local.verdict
    assert out["same"] is True, out["differences"]
    line = (
        "tests/test.sh has CRLF line endings: its first line `#!/usr/bin/env bash\\r` cannot be run in the "
        "sandbox (exit 127); save it with LF endings"
    )
    assert line in local.notices
    # no step of the runner's: it never started (the replay said the verifier ended the process)
    assert out["local_phases"]["stopped_at"] == "test_sh"
    assert {p["status"] for p in out["local_phases"]["phases"]} == {"not reached"}


def test_a_test_sh_is_started_as_the_kernel_starts_it():
    """The replay runs test.sh through its #! line as the kernel reads it: the interpreter to the first
    blank, the rest as one argument, a CRLF line's \\r kept (the kernel trims only spaces and tabs)."""
    from verifier_tui.engine.invocation import test_sh_argv

    cases = {
        b"#!/bin/bash -e\r\necho\r\n": ["/bin/bash", "-e\r"],
        b"#!  /usr/bin/env -S bash -eu \t\nx\n": ["/usr/bin/env", "-S bash -eu"],
        b"#!/bin/sh\n": ["/bin/sh"],
        b"echo no shebang\n": ["bash"],
        "\ufeff#!/bin/sh\n".encode(): ["bash"],  # a BOM before #!: no #! line to the kernel
    }
    for text, argv in cases.items():
        with tempfile.TemporaryDirectory() as folder:
            (Path(folder) / "test.sh").write_bytes(text)
            assert test_sh_argv(Path(folder) / "test.sh", "/tests/test.sh") == [*argv, "/tests/test.sh"], text


KERNEL_HEADS = {
    "nul-ends-the-name": b"#!{show}\0x\n",
    "nul-ends-the-argument": b"#!{show} -e\0junk\n",
    "cut-name": b"#!/" + b"a" * 300 + b"\n",  # no end in the kernel's 256 bytes, no blank: ENOEXEC
    "cut-argument": b"#!{show} " + b"b" * 300 + b"\n",  # the argument is cut at byte 255
    "not-utf-8": b"#!{show} \xff\xfe\r\n",
    "no-newline": b"#!{show}",
    "only-blanks": b"#!  \t\n",
    "empty": b"#!\n",  # an empty #! line: ENOEXEC, bash runs the file itself
    "empty-unended": b"#!",  # the name "": the kernel refuses it (bash exits 126)
    "blanks-unended": b"#!  \t",
    "nul-first": b"#!\0{show}\n",
    "blanks-then-nul-first": b"#!  \0{show}\n",
    "blank-then-nul": b"#!{show} \0x\n",
}


@pytest.mark.parametrize("head", list(KERNEL_HEADS.values()), ids=list(KERNEL_HEADS))
def test_a_test_sh_is_read_as_the_real_kernel_reads_it(tmp_path, head):
    """The #! line as Linux reads it (fs/binfmt_script.c): a NUL ended nothing (`/bin/bash\\0x` was run as
    `/bin/bash\\ufffdx`), bytes not UTF-8 became U+FFFD, and a first line cut by the kernel's 256 bytes
    was started where the kernel refuses it (ENOEXEC: bash then runs the file itself)."""
    import subprocess

    from verifier_tui.engine.invocation import test_sh_argv, test_sh_unstartable

    show = tmp_path / "show"
    show.write_text(f"#!{sys.executable}\nimport os, sys\nsys.stdout.write(repr([os.fsencode(a) for a in sys.argv]))\n")
    show.chmod(0o755)
    script = tmp_path / "test.sh"
    script.write_bytes(head.replace(b"{show}", os.fsencode(show)))
    script.chmod(0o755)
    argv = test_sh_argv(script, str(script))
    try:
        ran = subprocess.run([str(script)], capture_output=True, check=False)
    except OSError as exc:  # the kernel refused it: the shell that asked runs it itself (ENOEXEC), or says why
        bash = subprocess.run(["bash", "-c", f"({script})"], capture_output=True, check=False)
        refused = test_sh_unstartable(script)
        if exc.errno == errno.ENOEXEC:
            assert argv == ["bash", str(script)] and refused is None, argv
        else:  # as Harbor's bash ends: the replay never starts it, and exits as bash did
            assert refused is not None and refused[1] == bash.returncode, (refused, bash)
        return
    # the interpreter (show, by name) got the argument and the script, byte for byte
    assert argv[0] == str(show) and [os.fsencode(word) for word in argv] == [
        os.fsencode(show),
        *eval(ran.stdout)[1:],
    ], (argv, ran)


# a #! line and whether Harbor's bash, in its working directory (/ here), starts test.sh (0) or how it exits
SHEBANG_PROGRAMS = {
    "relative-missing": (b"#!sh\n", 127),  # the kernel looks in the working directory, never PATH: no /sh
    "relative-found": (b"#!bin/bash\n", 0),  # from /, bin/bash is /bin/bash
    "missing": (b"#!/bin/nosuch\n", 127),
    "env-missing": (b"#!/usr/bin/env nosuch-program\n", 127),
    "env-one-argument": (b"#!/usr/bin/env bash -e\n", 127),  # env looks for a program named "bash -e"
    "env-S-two-blanks": (b"#!/usr/bin/env -S  bash\n", 0),
    "env-S-tab": (b"#!/usr/bin/env -S\tbash\n", 0),
    "env-S-joined": (b"#!/usr/bin/env -Sbash\n", 0),
    "env-S-options": (b"#!/usr/bin/env -S -v --debug -- bash -e\n", 0),
    "env-S-escaped-blank": (b"#!/usr/bin/env -S bash\\_-e\n", 0),  # \_ separates: bash, -e
    "env-S-options-joined": (b"#!/usr/bin/env -S -vS bash\n", 0),  # -S takes bash
    "env-S-quoted-program": (b"#!/usr/bin/env -S 'ba'sh -e\n", 0),
    "folder": (b"#!/usr\n", 126),  # Permission denied
    "env-folder": (b"#!/usr/bin/env /usr\n", 126),
}


@pytest.mark.parametrize("head, code", list(SHEBANG_PROGRAMS.values()), ids=list(SHEBANG_PROGRAMS))
def test_the_program_a_shebang_starts_is_the_one_harbors_bash_starts(tmp_path, monkeypatch, head, code):
    """The program reading test.sh, as Harbor's ``bash -c`` starts it in its working directory (checked
    against the real kernel and env): a relative #! program was looked up from the tool's own working
    directory, and replayed from PATH; a missing one was said to "may expand as bash does"; env -S
    with two blanks, a tab or no blank after it gave an empty program; env's one argument with a blank
    was taken for its first word. A program the sandbox cannot start is said so (exit 127, as bash's)."""
    import subprocess

    from verifier_tui.engine.invocation import test_sh_argv, test_sh_refusals

    script = tmp_path / "test.sh"
    script.write_bytes(head + b'[ -n "$BASH_VERSION" ] || exit 9\nexit 0\nexec python3 run.py --workspace /srv/{a,b}\n')
    script.chmod(0o755)
    harbor = subprocess.run(["bash", "-c", f"({script})"], cwd="/", capture_output=True, check=False)
    assert harbor.returncode == code, harbor
    # the replay's init starts test.sh's program from the working directory with sh's exec
    argv = test_sh_argv(script, str(script))
    replayed = subprocess.run(["sh", "-c", 'exec "$@"', "init", *argv], cwd="/", capture_output=True, check=False)
    assert replayed.returncode == code, (argv, replayed)
    monkeypatch.chdir("/usr/bin")  # where the tool stands decides nothing (an sh is there)
    unstartable, refused = test_sh_refusals(script, via_test_sh=True)
    if code:
        assert unstartable is not None and unstartable[1] == code and refused is None, unstartable
        assert "cannot start" in unstartable[0] and "may expand" not in unstartable[0], unstartable
    else:
        assert unstartable is None, unstartable
    # a run of the runner alone never starts test.sh's program, which the image may have: no refusal for it
    unstartable, refused = test_sh_refusals(script, via_test_sh=False)
    assert unstartable is None, unstartable
    if not code:
        assert refused is not None and "which bash expands into 2 words" in refused, refused


@pytest.mark.parametrize(
    "before",
    [
        *("PATH={bin}", 'X="a b" PATH={bin}', "-i PATH={bin}", "-u X PATH={bin}", "-C / PATH={bin}", "- PATH={bin}"),
        *("-u=bash", "--unset=", "-uA=#", "-C /nonexistent"),  # env refuses these (125)
    ],
)
def test_an_env_s_line_that_changes_where_env_looks_names_no_program(tmp_path, before):
    """``#!/usr/bin/env -S PATH=... prog``, -i, -u, -C: env finds the command from a PATH or folder the
    sandbox's environment decides, or refuses the line (125). The tool looked it up on the image's PATH as
    if nothing changed it, so a program env finds in the PATH given was said missing, test.sh refused
    (127), and a line env refuses named the program it never runs; now none is named."""
    import subprocess

    from verifier_tui.engine.invocation import test_sh_refusals

    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "vtui-only-here").symlink_to(shutil.which("bash"))
    script = tmp_path / "test.sh"
    argument = f"-S {before.replace('{bin}', str(tmp_path / 'bin'))} vtui-only-here"
    script.write_bytes(f"#!/usr/bin/env {argument}\nexit 0\n".encode())
    script.chmod(0o755)
    harbor = subprocess.run(["bash", "-c", f"({script})"], cwd="/", capture_output=True, check=False)
    assert harbor.returncode in (0, 125), harbor  # env found the program in the PATH given, or refused
    unstartable, _refused = test_sh_refusals(script, via_test_sh=True)
    assert unstartable is None, unstartable


@pytest.mark.parametrize(
    "head", ["", "\ufeff#!/usr/bin/env bash\n", "#!\n"], ids=["no-shebang", "bom", "empty-shebang"]
)
def test_a_test_sh_without_a_shebang_replays_in_bash_as_harbor_runs_it(task, runs, tmp_path, monkeypatch, head):
    """Harbor runs test.sh from ``bash -c``: one without a #! line (or with a BOM before it, which the
    kernel does not take for one) is refused by the kernel and run by bash itself. The replay ran it in
    sh, where its bash (`[[ ... ]]`) failed: a trial that scored 1.0 replayed with no reward."""
    from verifier_tui.engine.sandbox import isolation

    if isolation.view_problem()[1] is not None:
        pytest.skip("the task's test.sh names /tests and /app: it runs only in the namespace's view")
    monkeypatch.setenv(isolation.VARIABLE, "namespace")
    demo = task(verifier=READS_HELLO, toml=SEPARATE)
    body = SHIM.split("\n", 1)[1].replace("\nexec ", "\n[[ -d /tests ]] || exit 3\nexec ", 1)
    (demo / "tests" / "test.sh").write_text(head + body)
    trial = trial_from_sandbox(runs, tmp_path, demo, workspace={"hello.txt": "hi"}, mode="separate", capture=True)
    _, _, local, out = replay(trial)
    assert local.verdict_by == "test.sh" and local.verdict.rewards == {"reward": 1.0}, local.stderr.text
    assert out["same"] is True, out["differences"]


@pytest.mark.parametrize(
    "head", [b"#!/bin/bash -e\r\n", b"", b"#!/usr/bin/env -S bash\r\n"], ids=["option", "none", "S"]
)
def test_a_crlf_test_sh_bash_starts_replays_as_bash_ended_it(task, runs, monkeypatch, head):
    """A trial whose CRLF test.sh the kernel (or bash itself) started: bash stopped on a \\r (`-\\r: invalid
    option`, a syntax error at `do\\r`) and Harbor found no reward. The replay's runner scored 1.0 and its
    test.sh was not run to say otherwise. The runner alone is refused; the script, run in the view, ends so."""
    from verifier_tui.engine.sandbox import isolation

    if isolation.view_problem()[1] is not None:
        pytest.skip("the task's test.sh names /tests and /app: it runs only in the namespace's view")
    monkeypatch.setenv(isolation.VARIABLE, "namespace")
    demo = task(verifier=READS_HELLO, toml=SEPARATE)
    (demo / "tests" / "test.sh").write_bytes(head + SHIM.split("\n", 1)[1].replace("\n", "\r\n").encode())
    _, _, local, out = replay(no_reward_trial(runs, demo, "syntax error near unexpected token `$'do\\r''\n"))
    assert local.verdict.error == NOT_FOUND and local.verdict_by == "test.sh", local.verdict
    assert out["same"] is True, out["differences"]


def test_a_test_sh_passing_a_workspace_in_braces_replays_as_bash_ended_it(task, runs, monkeypatch):
    """A trial whose test.sh passes ``--workspace /app/{src,lib}``: bash gave the runner two words, the
    runner refused the second and Harbor found no reward. The replay runs the script itself in the view,
    which ends so; a run of the runner alone is refused, never scored at a folder named with the braces."""
    from verifier_tui.engine.sandbox import isolation

    if isolation.view_problem()[1] is not None:
        pytest.skip("the task's test.sh names /tests and /app: it runs only in the namespace's view")
    monkeypatch.setenv(isolation.VARIABLE, "namespace")
    demo = task(verifier=READS_HELLO, toml=SEPARATE)
    shim = demo / "tests" / "test.sh"
    shim.write_text(shim.read_text().replace("--workspace /app", "--workspace /app/{src,lib}"))
    _, _, local, out = replay(no_reward_trial(runs, demo, "run_verifier: error: unrecognised argument '/app/lib'\n"))
    assert local.verdict.error == NOT_FOUND and local.verdict_by == "test.sh", local.verdict
    # (the view's /app named as the trial's captured folder it stood for)
    assert "unrecognised argument" in local.stderr.text and "app/lib'" in local.stderr.text, local.stderr.text
    assert out["same"] is True, out["differences"]


@pytest.mark.parametrize("head", [b"#!\0/bin/sh\n", b"#! \t\0/bin/bash\n"], ids=["nul", "blanks-nul"])
def test_a_test_sh_whose_shebang_names_an_empty_program_replays_as_bash_ended_it(task, runs, monkeypatch, env, head):
    """A test.sh whose #! line the kernel reads as naming the program "" (blanks at most before a NUL):
    the kernel refuses to exec it (EACCES, not the ENOEXEC that leaves bash to run a file itself), so
    Harbor's bash says `bad interpreter: Permission denied`, exits 126 and finds no reward. The replay
    started a program named "" in the view and said nothing of why; a run of the runner alone scored
    1.0. Neither starts it now, each exits 126 as bash did, and a note says why."""
    import subprocess

    from verifier_tui.engine.sandbox import isolation

    if isolation.view_problem()[1] is not None:
        pytest.skip("the task's test.sh names /tests and /app: it runs only in the namespace's view")
    monkeypatch.setenv(isolation.VARIABLE, "namespace")
    demo = task(verifier=READS_HELLO, toml=SEPARATE)
    shim = demo / "tests" / "test.sh"
    shim.write_bytes(head + (SHIM.split("\n", 1)[1].encode() if head.endswith(b"\n") else b""))
    shim.chmod(0o755)
    bash = subprocess.run(["bash", "-c", f"({shim})"], capture_output=True, text=True, check=False)
    assert bash.returncode == 126, bash
    _, _, local, out = replay(no_reward_trial(runs, demo, bash.stderr))
    assert local.verdict.error == NOT_FOUND and local.exit_code == 126, (local.verdict, local.exit_code)
    assert out["same"] is True, out["differences"]
    assert any("names no program" in notice for notice in local.notices), local.notices
    ran = run_tool(env, "run", demo, "--workspace", demo, "--json")
    data = json.loads(ran.stdout)
    assert data["exit_code"] == 126 and data["verdict_error"] == NOT_FOUND, data
    assert any(n.startswith("tests/test.sh's first line `#!") and "names no program" in n for n in data["notices"])


_V_ONE = "def verify(workspace):\n    return 1.0\n"


def _set_by_v(demo: Path, assigned: str) -> None:
    """The shim's --verifier made "$V", V set by ``assigned`` (test.sh's lines) earlier in the script."""
    script = SHIM.replace("--verifier /tests/verifier.py", '--verifier "$V"').replace("set -u\n", "set -u\n" + assigned)
    (demo / "tests" / "test.sh").write_text(script)


def test_a_replay_runs_the_file_a_plain_assignment_gives_the_shims_verifier(task, runs, tmp_path):
    """``V=/tests/checks/main.py`` then ``--verifier "$V"``: bash passes checks/main.py, which the trial's
    reward came from; the replay once ran tests/verifier.py, which scores otherwise."""
    demo = task(verifier=_V_ONE, toml=SEPARATE)
    trial = trial_from_sandbox(runs, tmp_path, demo, workspace={}, mode="separate", capture=True)
    (demo / "tests" / "checks").mkdir()
    (demo / "tests" / "checks" / "main.py").write_text(_V_ONE)
    (demo / "tests" / "verifier.py").write_text("def verify(workspace):\n    return 0.0\n")
    (demo / "tests" / "test.sh").write_text(  # (the shim's loops and tests before the use: not followed)
        "#!/bin/bash\nset -eu\nV=/tests/checks/main.py\n"
        'exec python3 /tests/.ng/run_verifier.py --verifier "$V" --workspace /app\n'
    )
    _, plan, local, _ = replay(trial)
    assert plan.verifier == demo / "tests" / "checks" / "main.py"
    assert local.verdict.rewards == {"reward": 1.0}


def test_a_replay_says_the_verifier_is_chosen_as_test_sh_runs_when_no_assignment_makes_it_certain(task, runs, tmp_path):
    demo = task(verifier=_V_ONE, toml=SEPARATE)
    trial = trial_from_sandbox(runs, tmp_path, demo, workspace={}, mode="separate", capture=True)
    _set_by_v(demo, "if [ -f /tests/x ]; then V=/tests/x.py; else V=/tests/verifier.py; fi\n")
    _, plan, local, out = replay(trial)
    said = [n for n in plan.notices if "--verifier" in n]
    assert said and "made as it runs" in said[0] and "chosen then" in said[0], plan.notices
    assert said[0] in plan.reasons and plan.verifier == demo / "tests" / "verifier.py"
