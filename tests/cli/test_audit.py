"""``verifier-tui audit TASK``: the verifier on what a failed or gaming agent
leaves, each probe flagged when it scores as high as a passing case."""

from __future__ import annotations

import json
import os
import signal
import textwrap
from pathlib import Path

import pytest

from tests.helpers.commands import documented_fields, interrupted, no_traceback, run_tool
from tests.helpers.processes import SAY_STARTED, has_started
from tests.helpers.tasks import PY, REPO, copy_example, make_task, nested_folders, write

#: Pays 1.0 for a missing answer: every case a newcomer writes has the file.
LENIENT = """\
    def verify(workspace):
        answer = workspace / "answer.txt"
        if not answer.exists():
            return 1.0
        return 1.0 if answer.read_text().strip() == "42" else 0.0
"""


def lenient_task(tmp_path):
    task = make_task(
        tmp_path / "t",
        LENIENT,
        cases={"right": {"answer.txt": "42\n", "notes.md": "x"}, "wrong": {"answer.txt": "41\n"}},
    )
    write(task / "cases" / "right" / "expected.json", '{"rewards": {"reward": 1.0}}')
    write(task / "cases" / "wrong" / "expected.json", '{"rewards": {"reward": 0.0}}')
    return task


PLANTED_PROBE = "reward files planted in /logs/verifier"


def tree(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_verifier_that_pays_for_a_missing_answer_is_flagged_and_audit_exits_1(env, tmp_path):
    task = lenient_task(tmp_path)
    before = tree(task)
    done = run_tool(env, "audit", task, "--python", PY)
    no_traceback(done)
    assert done.returncode == 1, done.stdout
    rows = {line[3:].split("  ")[0]: line for line in done.stdout.splitlines() if line[:1] in "!✓"}
    # The planted probe too: our runner cleared the files, and the verifier wrote 1.0 of its own.
    for probe in ("an empty workspace", "right: without answer.txt", "wrong: without answer.txt", PLANTED_PROBE):
        assert rows[probe].startswith("!") and "as high as right's 1: the verifier pays for this" in rows[probe]
    for probe in ("right: every file emptied", "right: without notes.md", "reward files planted in /logs/verifier"):
        assert rows[probe].startswith("!") == (probe != "right: every file emptied"), rows[probe]
    assert done.stdout.splitlines()[-1].startswith("5 of 7 probes score as high as right's 1")
    assert tree(task) == before  # nothing written into the task


def test_audit_json_says_each_probe_and_the_bar(env, tmp_path):
    data = json.loads(run_tool(env, "audit", "--json", lenient_task(tmp_path), "--python", PY).stdout)
    assert data["bar"] == {
        "case": "right",
        "reward": 1.0,
        "rewards": {"reward": 1.0},
        "tolerance": None,
        "run": {
            "passed": True,
            "rewards": {"reward": 1.0},
            "verdict_error": None,
            "outcome": "reward_written",
            "raised": None,
        },
    }
    probes = {p["probe"]: p for p in data["probes"]}
    assert probes["an empty workspace"] == {
        "probe": "an empty workspace",
        "reward": 1.0,
        "rewards": {"reward": 1.0},
        "verdict_error": None,
        "outcome": "reward_written",
        "flagged": True,
        "matches": "right",
        "planted_verdict": None,
        "stuck_at": None,
    }
    assert probes["right: every file emptied"]["flagged"] is False
    assert data["flagged"] == 5
    assert documented_fields("## The audit document", "## The compare document") == set(data)


def test_a_strict_verifier_passes_the_audit(env, tmp_path):
    done = run_tool(env, "audit", copy_example("hello-file", tmp_path / "hello-file"), "--python", PY)
    assert done.returncode == 0, done.stdout
    assert done.stdout.splitlines()[-1] == "0 of 10 probes score as high as correct's 1"


#: Pays the right answer only.
STRICT = """\
    def verify(workspace):
        answer = workspace / "answer.txt"
        return 1.0 if answer.exists() and answer.read_text() == "42" else 0.0
"""


def test_reward_files_planted_before_the_run_are_cleared_or_flagged(env, tmp_path):
    """Our runner clears the reward folder before verify: the planted 1.0 is
    never the verdict. A task's own runner that does not would be paid for it."""
    task = make_task(tmp_path / "t", STRICT, cases={"c": {"answer.txt": "42"}})
    write(task / "cases" / "c" / "expected.json", '{"rewards": {"reward": 1.0}}')
    ours = json.loads(run_tool(env, "audit", "--json", task, "--python", PY).stdout)
    planted = next(p for p in ours["probes"] if p["probe"] == "reward files planted in /logs/verifier")
    assert planted["reward"] == 0 and planted["flagged"] is False
    # A runner of the task's own that leaves the folder as it finds it: the
    # verifier's reward.txt of 0 is written beside the planted reward.json, which Harbor reads first.
    runner = (REPO / "runner" / "run_verifier.py").read_text(encoding="utf-8")
    leaves = runner.replace("def clear_rewards(reward_dir):\n", "def clear_rewards(reward_dir):\n    return []\n", 1)
    write(task / "tests" / ".ng" / "run_verifier.py", leaves)
    theirs = json.loads(run_tool(env, "audit", "--json", task, "--python", PY, "--runner", "task").stdout)
    planted = next(p for p in theirs["probes"] if p["probe"] == "reward files planted in /logs/verifier")
    assert planted["reward"] == 1.0 and planted["flagged"] is True and planted["planted_verdict"] == "reward.json"
    # Its row blamed the verifier: the runner is named, and the probe is still flagged (Harbor runs that runner).
    done = run_tool(env, "audit", task, "--python", PY, "--runner", "task", cwd=tmp_path)
    assert done.returncode == 1, done.stdout
    row = next(line for line in done.stdout.splitlines() if "reward files planted" in line)
    assert row.startswith("!") and row.endswith(
        "as high as c's 1: the task's own runner (t/tests/.ng/run_verifier.py) did not clear the planted "
        "reward.json (Harbor clears reward files only before test.sh starts)"
    ), row
    assert all(p["planted_verdict"] is None for p in ours["probes"])


#: Pays an answer given in the files, or in the agent's final response (environment-server mode).
READS_THE_RESPONSE = """\
    import json

    def verify(workspace, response=None):
        answer = workspace / "answer.txt"
        if response is not None and "42" in json.dumps(response):
            return 1.0
        return 1.0 if answer.exists() and answer.read_text() == "42" else 0.0
"""


def test_the_empty_workspace_probe_hands_over_no_case_s_response(env, tmp_path):
    """An agent that did nothing said nothing either: the probes of no case
    ran with the first case's response, so their verdict hung on which case's
    name sorts first (here a-chat's, which says 42, so the empty workspace was
    said to be paid)."""
    cases = {"a-chat": {"notes.md": "x"}, "right": {"answer.txt": "42"}, "wrong": {"answer.txt": "41"}}
    task = make_task(tmp_path / "t", READS_THE_RESPONSE, cases=cases)
    write(task / "cases" / "a-chat" / "response.json", '{"output": [{"type": "message", "content": "42"}]}')
    for case, reward in (("a-chat", 1.0), ("right", 1.0), ("wrong", 0.0)):
        write(task / "cases" / case / "expected.json", '{"rewards": {"reward": %s}}' % reward)
    data = json.loads(run_tool(env, "audit", "--json", task, "--python", PY).stdout)
    by_name = {p["probe"]: p for p in data["probes"]}
    for probe in ("an empty workspace", PLANTED_PROBE):
        assert by_name[probe]["reward"] == 0 and by_name[probe]["flagged"] is False, by_name[probe]
    # a case's own probes keep what its agent said: its files emptied, a-chat still answered 42
    assert by_name["a-chat: every file emptied"]["flagged"] is True


def test_nothing_to_judge_by_is_exit_2(env, tmp_path):
    task = make_task(tmp_path / "t", cases={"c": {}})
    done = run_tool(env, "audit", task, "--python", PY)
    assert done.returncode == 2
    assert "no case's expected.json asks for a reward above 0: nothing to judge" in done.stdout
    # and what to do, to a newcomer with no expected.json at all
    assert "the probes by; write the expected.json of a case a correct agent passes, such as {" in done.stdout
    rows = [line for line in done.stdout.splitlines() if line.endswith("not judged: no case to judge it by")]
    assert rows and all(row.startswith("·") for row in rows)  # never ✓: the verifier was not judged
    # The bar's expected.json not valid JSON: its last line says that one could not be used.
    write(task / "cases" / "c" / "expected.json", '{"rewards": ')
    done = run_tool(env, "audit", task, "--python", PY)
    assert done.returncode == 2
    assert done.stdout.splitlines()[-1].startswith(
        "no case's expected.json asks for a reward above 0 (that of c cannot be used: see the note above)"
    ), done.stdout
    assert run_tool(env, "audit", make_task(tmp_path / "u"), "--python", PY).stderr.endswith(
        "u has no cases: audit compares its probes with a passing case;"
        " make one with verifier-tui run TASK --save-case NAME (cases/NAME/ with an expected.json)\n"
    )
    # Refused before any probe, as bad input is: --json prints no document, as json-output.md says.
    done = run_tool(env, "audit", make_task(tmp_path / "u"), "--python", PY, "--json")
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1, done.stderr


def test_a_fifo_a_read_only_file_and_a_sparse_file_in_a_case_are_audited(env, tmp_path):
    """A FIFO stopped the audit with a raw error (a run leaves it out, with a
    note); a read-only file failed the emptied probe as another user; a sparse
    file became a full copy for each probe, all made before the first ran."""

    task = lenient_task(tmp_path)
    workspace = task / "cases" / "right" / "workspace"
    os.mkfifo(workspace / "pipe")
    (workspace / "answer.txt").chmod(0o444)
    with open(workspace / "big.bin", "wb") as handle:
        handle.truncate(1 << 30)
    done = run_tool(env, "audit", task, "--python", PY, "-j", "1")
    no_traceback(done)
    assert done.returncode == 1, done.stdout + done.stderr
    rows = {line[3:].split("  ")[0]: line for line in done.stdout.splitlines() if line[:1] in "!✓"}
    assert rows["right: every file emptied"].startswith("✓") and rows["right: without big.bin"].startswith("!")
    assert "right: without pipe" not in rows  # not a file: left out, as a run's staging leaves it


def test_a_probes_workspace_keeps_sparse_files_sparse_and_reads_no_emptied_file(tmp_path):

    from verifier_tui.engine.audit import Probe, make_workspace, probes
    from verifier_tui.engine.task.discovery import resolve

    task = lenient_task(tmp_path)
    workspace = task / "cases" / "right" / "workspace"
    with open(workspace / "big.bin", "wb") as handle:
        handle.truncate(1 << 30)
    (workspace / "answer.txt").chmod(0)  # unreadable: an emptied copy never opens it
    cases = {case.name: case for case in resolve(task).cases}
    made = make_workspace(Probe("x", cases["right"], without="notes.md"), tmp_path / "without")
    assert made is not None and sorted(p.name for p in made.iterdir()) == ["answer.txt", "big.bin"]
    assert os.stat(made / "big.bin").st_blocks * 512 < 1 << 20
    emptied = make_workspace(Probe("y", cases["right"], emptied=True), tmp_path / "emptied")
    assert emptied is not None and {p.name: p.stat().st_size for p in emptied.iterdir()} == {
        "answer.txt": 0,
        "big.bin": 0,
        "notes.md": 0,
    }
    assert [p.name for p in probes(list(cases.values()))][:3] == [
        "an empty workspace",
        "reward files planted in /logs/verifier",
        "right: every file emptied",
    ]


def test_a_probes_workspace_makes_hard_links_as_links(tmp_path):
    """Twelve names of one file were twelve copies in each probe's workspace:
    a small archive could fill the disk."""

    from verifier_tui.engine.audit import Probe, make_workspace
    from verifier_tui.engine.task.discovery import resolve

    task = lenient_task(tmp_path)
    workspace = task / "cases" / "right" / "workspace"
    (workspace / "big.bin").write_bytes(b"x" * (1 << 20))
    for index in range(12):
        os.link(workspace / "big.bin", workspace / f"name{index}.bin")
    case = next(c for c in resolve(task).cases if c.name == "right")
    for probe in (Probe("x", case, without="notes.md"), Probe("y", case, emptied=True)):
        made = make_workspace(probe, tmp_path / probe.name)
        assert made is not None
        assert {(made / f"name{index}.bin").stat().st_ino for index in range(12)} == {(made / "big.bin").stat().st_ino}


def test_rewards_of_several_keys_are_judged_key_by_key_as_harbors_mean_counts_them(env, tmp_path):
    """Harbor averages each key of a dict reward apart (``aggregate_reward_dicts``):
    a probe pays as a passing case does when every key is as high."""
    task = make_task(
        tmp_path / "t",
        """
        def verify(workspace):
            answer = workspace / "answer.txt"
            return {"a": 1, "b": 1 if answer.exists() and answer.read_text() == "42" else 0}
        """,
        cases={"right": {"answer.txt": "42"}},
    )
    write(task / "cases" / "right" / "expected.json", '{"rewards": {"a": 1.0, "b": 1.0}}')
    done = run_tool(env, "audit", task, "--python", PY)
    no_traceback(done)
    assert done.returncode == 0, done.stdout
    rows = {line[3:].split("  ")[0]: line for line in done.stdout.splitlines() if line[:1] in "!✓"}
    assert '{"a": 1, "b": 0}' in rows["an empty workspace"] and rows["an empty workspace"].startswith("✓")
    assert done.stdout.splitlines()[-1] == '0 of 4 probes score as high as right\'s {"a": 1.0, "b": 1.0}'
    data = json.loads(run_tool(env, "audit", "--json", task, "--python", PY).stdout)
    assert {key: data["bar"][key] for key in ("case", "reward", "rewards")} == {
        "case": "right",
        "reward": None,
        "rewards": {"a": 1.0, "b": 1.0},
    }
    write(task / "tests" / "verifier.py", "def verify(workspace):\n    return {'a': 1, 'b': 1}\n")
    paid = run_tool(env, "audit", task, "--python", PY)
    assert paid.returncode == 1 and paid.stdout.splitlines()[-1].startswith("4 of 4 probes score as high"), paid.stdout


#: Pays the right answer; stuck on any other, past task.toml's timeout.
STUCK_UNLESS_RIGHT = """\
    import time

    def verify(workspace):
        answer = workspace / "answer.txt"
        if not answer.exists() or answer.read_text() != "42":
            time.sleep(60)
        return 1.0
"""


def test_what_audit_cannot_judge_is_said_and_exits_2(env, tmp_path):
    """A probe that timed out was marked ✓ as one the verifier scored low,
    under a summary saying none was judged: its mark and words are test's."""
    task = make_task(tmp_path / "t", STUCK_UNLESS_RIGHT, cases={"c": {"answer.txt": "42"}}, timeout=1)
    write(task / "cases" / "c" / "expected.json", '{"rewards": {"reward": 1.0}}')
    done = run_tool(env, "audit", task, "--python", PY)
    no_traceback(done)
    assert done.returncode == 2, done.stdout
    rows = done.stdout.splitlines()[2:-1]
    assert len(rows) == 4 and all(row.startswith("⏱") for row in rows), done.stdout
    assert all("VerifierTimeoutError  not judged: timed out after 1 s" in row for row in rows), done.stdout
    assert done.stdout.splitlines()[-1].startswith("no probe ran to its verdict"), done.stdout


def test_a_probe_that_timed_out_says_where_the_verifier_was_stuck(env, tmp_path):
    """A verifier that hangs on what a failed agent leaves: each row said only
    `not judged: timed out after 1 s`, where run and test name the line it
    hung at, the one thing to fix."""
    task = make_task(tmp_path / "t", STUCK_UNLESS_RIGHT, cases={"c": {"answer.txt": "42"}}, timeout=1)
    write(task / "cases" / "c" / "expected.json", '{"rewards": {"reward": 1.0}}')
    done = run_tool(env, "audit", task, "--python", PY, "-j", "2")
    no_traceback(done)
    assert done.returncode == 2, done.stdout
    rows = done.stdout.splitlines()[2:-1]
    stuck = f"not judged: timed out after 1 s, stuck at {task / 'tests' / 'verifier.py'}:6 in verify"
    assert len(rows) == 4 and all(row.endswith(stuck) for row in rows), done.stdout
    data = json.loads(run_tool(env, "audit", task, "--python", PY, "-j", "2", "--json").stdout)
    assert {json.dumps(probe["stuck_at"]) for probe in data["probes"]} == {
        json.dumps({"path": str(task / "tests" / "verifier.py"), "line": 6, "function": "verify"})
    }


def test_a_bar_case_that_timed_out_says_where_the_verifier_was_stuck(env, tmp_path):
    """The case the probes are judged by hangs: its line said only `got timed
    out after 1 s`, where each probe's row and run name the line it hung at."""
    task = make_task(tmp_path / "t", STUCK_UNLESS_RIGHT, cases={"c": {"answer.txt": "41"}}, timeout=1)
    write(task / "cases" / "c" / "expected.json", '{"rewards": {"reward": 1.0}}')
    done = run_tool(env, "audit", task, "--python", PY)
    no_traceback(done)
    assert done.returncode == 2, done.stdout
    assert f"stuck at {task / 'tests' / 'verifier.py'}:6 in verify: no probe was run" in done.stdout, done.stdout


def test_a_verifier_that_fails_the_case_the_probes_are_judged_by_fails_the_audit(env, tmp_path):
    """A verifier that raised on every input (or could not be imported) paid
    no probe: audit passed it with exit 0. The case it is judged by runs first."""
    task = make_task(tmp_path / "t", "def verify(workspace):\n    raise RuntimeError('boom')\n", cases={"c": {}})
    write(task / "cases" / "c" / "expected.json", '{"rewards": {"reward": 1.0}}')
    done = run_tool(env, "audit", task, "--python", PY)
    no_traceback(done)
    assert done.returncode == 2, done.stdout
    assert done.stdout.splitlines()[1:] == [
        'case c, which the probes are judged against, does not pass: expected {"reward": 1.0}, '
        "got exit 1 · verifier raised · RewardFileNotFoundError (RuntimeError in the verifier): no probe was run"
    ], done.stdout
    write(task / "tests" / "verifier.py", "import not_installed_anywhere\n\ndef verify(workspace):\n    return 1.0\n")
    data = json.loads(run_tool(env, "audit", "--json", task, "--python", PY).stdout)
    assert data["bar"]["run"]["passed"] is False and data["bar"]["run"]["raised"] == "ModuleNotFoundError"
    assert data["probes"] == [] and data["flagged"] == 0


def test_a_tasks_own_runner_that_does_not_compile_is_not_said_to_be_the_verifier(env, tmp_path):
    """``audit --runner task`` on a task whose own runner is cut short: the bar
    line said `(SyntaxError in the verifier)` of a verifier never imported."""
    task = make_task(tmp_path / "t", "def verify(workspace):\n    return 1.0\n", cases={"c": {}})
    write(task / "cases" / "c" / "expected.json", '{"rewards": {"reward": 1.0}}')
    write(task / "tests" / ".ng" / "run_verifier.py", "import sys\nsys.exit(main(\n")
    done = run_tool(env, "audit", task, "--runner", "task", "--python", PY)
    no_traceback(done)
    assert done.returncode == 2, done.stdout
    assert "in the verifier" not in done.stdout
    assert "(SyntaxError, line 2 of the task's own runner, which does not compile): no probe was run" in done.stdout
    assert "note: the task's own runner (tests/.ng/run_verifier.py) does not compile" in done.stdout


def test_a_task_harbor_would_refuse_is_said_and_exits_2(env, tmp_path):
    task = lenient_task(tmp_path)
    write(task / "task.toml", "version = 1\n")
    done = run_tool(env, "audit", task, "--python", PY)
    no_traceback(done)
    assert done.returncode == 2
    assert done.stdout.splitlines()[-1].startswith("Harbor would refuse to run this task: "), done.stdout
    data = json.loads(run_tool(env, "audit", "--json", task, "--python", PY).stdout)
    assert data["harbor_refuses_task"]
    # Said once, last, as test says it once: a note above it said the same sentence again.
    assert sum(data["harbor_refuses_task"] in line for line in done.stdout.splitlines()) == 1, done.stdout
    assert not any(data["harbor_refuses_task"] in note for note in data["notices"])


def test_a_case_whose_workspace_leads_out_of_the_task_is_said_not_probed_in_silence(env, tmp_path):
    task = lenient_task(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "answer.txt").write_text("42\n")
    workspace = task / "cases" / "wrong" / "workspace"
    for file in workspace.iterdir():
        file.unlink()
    workspace.rmdir()
    workspace.symlink_to(elsewhere)
    done = run_tool(env, "audit", task, "--python", PY)
    no_traceback(done)
    notes = [line for line in done.stdout.splitlines() if line.startswith("note: case wrong: ")]
    assert len(notes) == 1 and f"leads out of the task, to {elsewhere}" in notes[0], done.stdout
    assert "wrong: without answer.txt" not in done.stdout
    # The note said `give it with --workspace DIR if you mean it; the verifier runs on an empty scratch
    # workspace`: an option audit refuses, and a run audit does not make (the case gets no probes).
    assert notes[0].endswith(
        ": not read for a run, whose verifier could send it anywhere; give it with verifier-tui run TASK "
        "--workspace DIR if you mean it; audit gives the case no probes"
    ), notes[0]


def test_audit_takes_no_option_that_chooses_one_input(env, tmp_path):
    # It makes its own workspaces from every case's: --workspace was taken and ignored.
    task = lenient_task(tmp_path)
    for option in ("--workspace", "--response", "--task-data", "--case"):
        done = run_tool(env, "audit", task, option, str(tmp_path), "--python", PY)
        assert done.returncode == 2, done.stderr  # and said as what it is, not argparse's "unrecognized"
        assert f"error: {option} is not an option of audit; the TUI, run, explain" in done.stderr, done.stderr
    done = run_tool(env, "audit", task, "--case", "c", "--bogus", "--python", PY)  # a typo beside it is said too
    assert done.stderr.rstrip().endswith("take it; also not an option of audit: --bogus"), done.stderr
    header = run_tool(env, "audit", task, "--python", PY).stdout.splitlines()[0]
    assert header.endswith("audit of 2 cases") and "case right" not in header, header


def test_a_probe_within_the_bar_cases_tolerance_is_flagged(env, tmp_path):
    # The bar case passes with 0.95 (its tolerance takes 1 ± 0.1): a verifier
    # that pays an empty workspace the same 0.95 pays for nothing done.
    task = make_task(
        tmp_path / "t", "def verify(workspace):\n    return 0.95\n", cases={"right": {"answer.txt": "42\n"}}
    )
    write(task / "cases" / "right" / "expected.json", '{"rewards": {"reward": 1.0}, "tolerance": 0.1}')
    done = run_tool(env, "audit", task, "--python", PY)
    no_traceback(done)
    assert done.returncode == 1, done.stdout
    rows = {line[3:].split("  ")[0]: line for line in done.stdout.splitlines() if line[:1] in "!✓"}
    assert rows["an empty workspace"].startswith("!"), done.stdout
    assert "as high as right's 1 (tolerance 0.1): the verifier pays for this" in rows["an empty workspace"]
    assert done.stdout.splitlines()[-1].startswith("4 of 4 probes score as high as right's 1 (tolerance 0.1)")
    data = json.loads(run_tool(env, "audit", "--json", task, "--python", PY).stdout)
    assert data["bar"]["tolerance"] == 0.1 and all(probe["flagged"] for probe in data["probes"])


#: Scores 1.0 when the workspace's answer.txt says 42.
ANSWER_IS_42 = (
    "def verify(workspace):\n"
    "    answer = workspace / 'answer.txt'\n"
    "    return 1.0 if answer.exists() and answer.read_text().strip() == '42' else 0.0\n"
)


def test_a_file_the_user_cannot_read_in_one_case_leaves_its_probes_unjudged_not_the_audit(ordinary_user):
    # As the user's own run of the case would, a probe whose workspace cannot
    # be copied whole does not start; the other probes still run.
    task = make_task(
        ordinary_user.root / "tasks" / "t",
        ANSWER_IS_42,
        cases={"right": {"answer.txt": "42\n"}, "wrong": {"answer.txt": "41\n", "secret": "s\n"}},
    )
    write(task / "cases" / "right" / "expected.json", '{"rewards": {"reward": 1.0}}')
    ordinary_user.own(ordinary_user.root)
    (task / "cases" / "wrong" / "workspace" / "secret").chmod(0)
    done = ordinary_user.run("audit", task)
    no_traceback(done)
    assert done.stderr == "", done.stderr
    rows = {line[3:].split("  ")[0]: line for line in done.stdout.splitlines() if line[:1] in "!✓·"}
    unmade = rows["wrong: without answer.txt"]
    assert unmade.startswith("·") and "not judged: could not start: " in unmade, done.stdout
    assert "the workspace could not be copied whole: secret: Permission denied" in unmade
    for probe in ("an empty workspace", "wrong: every file emptied", "wrong: without secret"):
        assert rows[probe].startswith("✓"), done.stdout
    assert done.returncode == 0, done.stdout


def test_a_folder_the_user_cannot_read_in_a_case_is_said_not_dropped_from_the_probes(ordinary_user):
    """A case's workspace folder the user cannot read (chmod 000): its files
    were left out of the probes without a word, and the case's probes ran on
    a copy without the folder, as if it were the case's workspace."""
    task = make_task(
        ordinary_user.root / "tasks" / "t",
        ANSWER_IS_42,
        cases={"right": {"answer.txt": "42\n"}, "wrong": {"answer.txt": "41\n", "private/key.txt": "k\n"}},
    )
    write(task / "cases" / "right" / "expected.json", '{"rewards": {"reward": 1.0}}')
    ordinary_user.own(ordinary_user.root)
    (task / "cases" / "wrong" / "workspace" / "private").chmod(0)
    done = ordinary_user.run("audit", task)
    no_traceback(done)
    assert done.stderr == "", done.stderr
    notes = [line for line in done.stdout.splitlines() if line.startswith("note: case wrong: ")]
    assert notes == [
        "note: case wrong: its workspace's folder private cannot be read (Permission denied): "
        "its files have no probe of their own, and the case's probes cannot copy its workspace whole"
    ], done.stdout
    rows = {line[3:].split("  ")[0]: line for line in done.stdout.splitlines() if line[:1] in "!✓·"}
    for probe in ("wrong: every file emptied", "wrong: without answer.txt"):
        assert rows[probe].startswith("·"), done.stdout  # not run on part of the workspace: not judged
        assert "the workspace could not be copied whole: private: Permission denied" in rows[probe], done.stdout
    data = json.loads(ordinary_user.run("audit", "--json", task).stdout)
    assert data["unread"] == [notes[0].removeprefix("note: ")]


def test_what_every_probe_that_ran_had_is_said_though_one_probe_could_not_start(ordinary_user):
    """A tests/calendar.py that keeps the standard library's out, and one case whose workspace cannot
    be copied whole: its probes never started, so had no note, and the note every other probe had
    (the shadowed module) vanished from the audit. It is said, of the probes that ran."""
    task = make_task(
        ordinary_user.root / "tasks" / "t",
        ANSWER_IS_42,
        cases={"right": {"answer.txt": "42\n"}, "wrong": {"answer.txt": "41\n", "private/key.txt": "k\n"}},
    )
    write(task / "cases" / "right" / "expected.json", '{"rewards": {"reward": 1.0}}')
    write(task / "tests" / "calendar.py", "X = 1\n")
    ordinary_user.own(ordinary_user.root)
    (task / "cases" / "wrong" / "workspace" / "private").chmod(0)
    done = ordinary_user.run("audit", task)
    no_traceback(done)
    notes = [line for line in done.stdout.splitlines() if line.startswith("note: ") and "calendar" in line]
    assert len(notes) == 1, done.stdout


def test_the_probes_of_no_case_take_the_first_readable_cases_inputs(ordinary_user):
    """greeting-rows (each case names its row of tasks.jsonl) without its expected.json files: the empty
    workspace and planted probes ran with no case's task data, so its verifier raised (KeyError) where
    it wrote a reward of 0. They take the inputs of the first case that can be read, as before audit
    stopped choosing a case of its own; a case folder the user cannot read is passed over, a note."""
    task = copy_example("greeting-rows", ordinary_user.root / "tasks" / "greeting-rows")
    for expected in task.glob("cases/*/expected.json"):
        expected.unlink()
    (task / "cases" / "0-locked").mkdir()
    ordinary_user.own(ordinary_user.root)
    (task / "cases" / "0-locked").chmod(0)  # sorts first
    done = ordinary_user.run("audit", "--json", task)
    no_traceback(done)
    data = json.loads(done.stdout)
    probes = {probe["probe"]: probe for probe in data["probes"]}
    for caseless in ("an empty workspace", "reward files planted in /logs/verifier"):
        assert probes[caseless]["verdict_error"] is None and probes[caseless]["reward"] == 0, probes[caseless]
    assert any("0-locked" in note for note in [*data["unread"], *data["notices"]]), data


def test_a_cases_folder_the_user_cannot_read_is_said_not_taken_for_none(ordinary_user):
    """A task's cases/ of mode 000, run as an ordinary user: audit said the
    task "has no cases", test "no case with a usable expected.json under
    .../cases" and run nothing at all, of a folder of cases it could not list."""
    task = make_task(ordinary_user.root / "tasks" / "t", ANSWER_IS_42, cases={"right": {"answer.txt": "42\n"}})
    write(task / "cases" / "right" / "expected.json", '{"rewards": {"reward": 1.0}}')
    ordinary_user.own(ordinary_user.root)
    (task / "cases").chmod(0)
    unread = f"{task / 'cases'} cannot be read (Permission denied)"
    done = ordinary_user.run("audit", task)
    no_traceback(done)
    assert (done.returncode, done.stderr) == (
        2,
        f"verifier-tui: {unread}: audit compares its probes with a passing case\n",
    )
    tested = ordinary_user.run("test", task)
    assert (tested.returncode, tested.stderr) == (2, f"verifier-tui: no case to test: {unread}\n")
    ran = ordinary_user.run("run", task)
    assert f"note: {unread}: no case is listed" in ran.stdout, ran.stdout


def test_a_case_folder_the_user_cannot_read_is_a_note_whichever_case_sorts_first(ordinary_user):
    """A case folder of mode 000 was a note and the audit went on, unless its name sorted
    first (the case run and explain take by default, which audit never chooses): then the
    whole audit was refused in one line, exit 2."""
    task = make_task(
        ordinary_user.root / "tasks" / "t",
        ANSWER_IS_42,
        cases={"a-locked": {"answer.txt": "41\n"}, "right": {"answer.txt": "42\n"}, "z-locked": {}},
    )
    write(task / "cases" / "right" / "expected.json", '{"rewards": {"reward": 1.0}}')
    ordinary_user.own(ordinary_user.root)
    for locked in ("a-locked", "z-locked"):
        (task / "cases" / locked).chmod(0)
    done = ordinary_user.run("audit", task)
    no_traceback(done)
    assert done.stderr == "", done.stderr
    for locked in ("a-locked", "z-locked"):
        assert f"note: case {locked}: {task / 'cases' / locked} cannot be read (Permission denied)" in done.stdout
    assert done.stdout.splitlines()[-1].startswith("0 of 4 probes score as high as right's 1"), done.stdout
    assert done.returncode == 0


def test_audit_on_a_place_in_a_trial_names_the_trial_it_is_in(env, tmp_path):
    """``audit TRIAL/agent`` said `.../agent is a Harbor trial folder`, and of
    ``TRIAL/verifier/test-stdout.txt`` that a file is a folder; ``audit jobs/`` `open the
    task folder it ran`, of a folder of jobs. Each is named as vendor names it."""
    from tests.helpers.harbor import make_job

    task = make_task(tmp_path / "t")
    trial = make_job(tmp_path / "jobs" / "j", {"t__abc": {"task": task}}) / "t__abc"
    (trial / "agent").mkdir(exist_ok=True)
    for inside in (trial / "agent", trial / "result.json"):
        done = run_tool(env, "audit", inside, "--python", PY)
        assert done.returncode == 2, done.stderr
        assert done.stderr == (
            f"verifier-tui: {inside} is in the Harbor trial folder {trial}, not a task: "
            "open the task folder it ran instead\n"
        ), done.stderr
    jobs = tmp_path / "jobs"
    done = run_tool(env, "audit", jobs, "--python", PY)
    assert done.stderr == (
        f"verifier-tui: {jobs} is a Harbor jobs folder, not a task: open a task folder its jobs ran instead\n"
    ), done.stderr


def test_files_past_those_probed_one_by_one_are_said_not_passed_over(env, tmp_path):
    """A case of 30 files: a probe removed each of the first 20 by name, and nothing said that the
    other 10 had none, the file the verifier reads (``zz_answer.txt``, last by name) among them."""
    task = make_task(
        tmp_path / "t",
        "def verify(workspace):\n    return 1.0 if (workspace / 'zz_answer.txt').exists() else 0.0\n",
        cases={"right": {"zz_answer.txt": "42\n", **{f"f{n:02}.txt": "x" for n in range(29)}}},
    )
    write(task / "cases" / "right" / "expected.json", '{"rewards": {"reward": 1.0}}')
    done = run_tool(env, "audit", task, "--python", PY)
    no_traceback(done)
    note = (
        "note: case right: its workspace holds 30 files: a probe removes each of the first 20 by name, "
        "none of the other 10 (f20.txt to zz_answer.txt)"
    )
    assert note in done.stdout.splitlines(), done.stdout
    data = json.loads(run_tool(env, "audit", "--json", task, "--python", PY).stdout)
    assert data["unprobed"] == [note.removeprefix("note: ")], data["unprobed"]


#: The tool, every run after the first (the bar case's) finding no file descriptor at ``sys.argv[1]`` of the
#: process core (``_start``: the runner's process; ``CancelSignal``: the pipe that ends its run early): what a tiny
#: ``ulimit -n`` does to ``audit -j2``, hit every time.
NO_DESCRIPTOR_AFTER_THE_BAR = """
import errno, os, sys
from verifier_tui.engine import process
where = sys.argv.pop(1)
real = getattr(process, where)
calls = []

def short(*args, **kwargs):
    calls.append(1)
    if len(calls) > 1:
        raise OSError(errno.EMFILE, os.strerror(errno.EMFILE))
    return real(*args, **kwargs)

setattr(process, where, short)
from verifier_tui.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("where", ["_start", "CancelSignal"])
def test_probes_that_find_no_file_descriptor_are_each_said_not_started(env, tmp_path, where):
    """``audit -j2`` under a tiny ``ulimit -n``: the planted probe's runner could not start, the planted
    reward.json was read as its verdict, and it was flagged (``our runner did not clear the planted
    reward.json``, exit 1), where no runner ran; and a run with no descriptor left for the pipe that ends it
    early stopped the whole audit (``verifier-tui: TASK: Too many open files``, no table). Each probe that
    could not start now says so on its row, not judged; with none judged, exit 2. test's rounds, which stopped
    whole too, fail that case alone."""
    task = make_task(tmp_path / "t", STRICT, cases={"right": {"answer.txt": "42"}, "wrong": {"answer.txt": "41"}})
    write(task / "cases" / "right" / "expected.json", '{"rewards": {"reward": 1.0}}')
    write(task / "cases" / "wrong" / "expected.json", '{"rewards": {"reward": 0.0}}')
    tool = [PY, "-c", NO_DESCRIPTOR_AFTER_THE_BAR, where]
    done = run_tool(env, "audit", task, "--python", PY, "-j2", tool=tool)
    no_traceback(done)
    assert done.returncode == 2 and done.stderr == "", done.stdout + done.stderr
    rows = done.stdout.splitlines()[2:-1]
    assert len(rows) == 6, done.stdout
    for row in rows:
        assert row.startswith("·") and "not judged: could not start: " in row, row
        assert row.endswith("Too many open files"), row
    assert done.stdout.splitlines()[-1].startswith("no probe ran to its verdict"), done.stdout
    data = json.loads(run_tool(env, "audit", "--json", task, "--python", PY, "-j2", tool=tool).stdout)
    assert data["flagged"] == 0 and {p["outcome"] for p in data["probes"]} == {"could_not_start"}, data
    # the planted probe as every other: no reward, the error Harbor raises on an empty reward folder
    assert {(p["rewards"], p["verdict_error"]) for p in data["probes"]} == {(None, "RewardFileNotFoundError")}, data
    # test's rounds alike: the case that could not start (whichever ran second) fails on its own row, the other passes.
    done = run_tool(env, "test", task, "--python", PY, "-j2", tool=tool)
    no_traceback(done)
    assert done.returncode == 1 and done.stderr == "", done.stdout + done.stderr
    rows = sorted(done.stdout.splitlines()[2:-1])
    assert len(rows) == 2 and rows[0].startswith("✓  "), done.stdout
    assert rows[1].startswith("✗  ") and "could not start: " in rows[1], done.stdout


def test_what_every_probe_ran_without_is_said_as_run_and_test_say_it(env, tmp_path):
    # The task's env names a variable this machine lacks, which Harbor would refuse to run without:
    # `run` and `test` said so, audit judged every probe on a run without it in silence.
    task = lenient_task(tmp_path)
    write(task / "task.toml", 'version = "1.0"\n[verifier]\nenv = { TOKEN = "${VT_AUDIT_UNSET}" }\n')
    env = {k: v for k, v in env.items() if k != "VT_AUDIT_UNSET"}
    done = run_tool(env, "audit", task, "--python", PY)
    no_traceback(done)
    said = [line for line in done.stdout.splitlines() if "VT_AUDIT_UNSET is not set" in line]
    assert len(said) == 1 and said[0].startswith("note: "), done.stdout
    assert "Harbor would stop with ValueError" in said[0]


def test_audit_json_has_the_notes_the_text_says(env, tmp_path):
    task = lenient_task(tmp_path)
    write(task / "task.toml", 'version = "1.0"\n[verifier]\nenv = { TOKEN = "${VT_AUDIT_UNSET}" }\n')
    env = {k: v for k, v in env.items() if k != "VT_AUDIT_UNSET"}
    text = run_tool(env, "audit", task, "--python", PY).stdout
    data = json.loads(run_tool(env, "audit", task, "--python", PY, "--json").stdout)
    said = [line.removeprefix("note: ") for line in text.splitlines() if line.startswith("note: ")]
    assert any("VT_AUDIT_UNSET is not set" in note for note in said)
    assert data["notices"] == said


def test_audit_help_says_its_json_is_one_document(env):
    # It said "print each probe's result as JSON", as if a line a probe followed (as watch prints a line a run).
    said = " ".join(run_tool(env, "audit", "--help").stdout.split())
    assert "--json print the audit as one JSON document" in said, said


def test_what_the_probes_are_given_that_harbor_would_not_give_is_said_as_test_says_it(env, tmp_path):
    # The cases take task_data.json beside task.toml, which Harbor never uploads (verify gets {} there), and a
    # ${VAR} the task's env fills from this shell: test said both, audit judged the probes on them unsaid.
    task = copy_example("sum-column", tmp_path / "sum-column")
    toml = (task / "task.toml").read_text()
    (task / "task.toml").write_text(toml + '\n[verifier.env]\nWHO = "${VT_AUDIT_SET}"\n')
    env = {**env, "VT_AUDIT_SET": "me"}
    tested = [line for line in run_tool(env, "test", task, "--python", PY).stdout.splitlines() if "note: " in line]
    done = run_tool(env, "audit", task, "--python", PY)
    no_traceback(done)
    notes = [line for line in done.stdout.splitlines() if line.startswith("note: ")]
    for words in ("task_data.json beside task.toml is verifier-tui's own", "VT_AUDIT_SET"):
        assert any(words in line for line in tested), tested
        assert any(words in line for line in notes), done.stdout


#: Pays the case its 1.0; says it started, then hangs, on the last probe (the case without b.txt).
HANGS_ON_THE_LAST_PROBE = (
    "import os, time\n\ndef verify(workspace):\n    names = sorted(os.listdir(workspace))\n"
    "    if names == ['a.txt']:\n" + textwrap.indent(SAY_STARTED, "        ") + "        time.sleep(300)\n"
    "    return 1.0 if names == ['a.txt', 'b.txt'] and (workspace / 'a.txt').read_text() else 0.0\n"
)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_mid_audit_json_prints_the_probes_that_finished(env, tmp_path, sig):
    """A CI job's timeout (or Ctrl+C) as the last probe ran: stdout held nothing, as for a run, where
    ``test --json`` prints the cases that finished. The audit document is printed with the probes
    that finished and ``stopped``, the line said on stderr, the exit 128 + the signal."""
    task = make_task(tmp_path / "t", HANGS_ON_THE_LAST_PROBE, cases={"ok": {"a.txt": "a", "b.txt": "b"}})
    write(task / "cases" / "ok" / "expected.json", '{"rewards": {"reward": 1.0}}')
    out = tmp_path / "out.json"
    args = ["audit", task, "--json", "-j", "1", "--python", PY]
    code, err = interrupted(env, args, lambda: has_started(env["TMPDIR"]), sig, "never started", out)
    assert code == 128 + sig and "Traceback" not in err, (code, err)
    data = json.loads(out.read_text())
    assert [probe["probe"] for probe in data["probes"]] == [
        "an empty workspace",
        PLANTED_PROBE,
        "ok: every file emptied",
        "ok: without a.txt",
    ]
    assert data["bar"]["run"]["passed"] is True and data["flagged"] == 0
    name = signal.Signals(sig).name
    assert data["stopped"] == f"stopped by {name} before every one ran: 4 of 5 probes finished", data["stopped"]
    assert err.splitlines()[-1] == f"verifier-tui: {data['stopped']}"
    assert list(Path(env["TMPDIR"]).iterdir()) == []  # the probes' scratch removed
    # the text says the line alone, as test's does
    text = [arg for arg in args if arg != "--json"]
    code, err = interrupted(env, text, lambda: has_started(env["TMPDIR"]), sig, "never started", out)
    assert (code, out.read_text()) == (128 + sig, ""), (code, err)
    assert err.splitlines()[-1] == f"verifier-tui: {data['stopped']}"


def test_a_case_workspace_nested_past_pythons_recursion_limit_is_said_not_a_traceback(env, tmp_path):
    """A case kept from an agent's /app (`run TRIAL --save-case`) holding 1,100 folders one inside the
    other: `audit` listed the workspace with os.walk, which recurses a folder at a time, and ended in
    a RecursionError traceback. The case is said unread, its probes not judged, the others run."""
    task = lenient_task(tmp_path)
    with nested_folders(task / "cases" / "wrong" / "workspace"):
        done = run_tool(env, "audit", task)
    no_traceback(done)
    assert (
        "note: case wrong: its workspace's folders nest past what Python's recursion limit lets a walk "
        "reach: its files have no probe of their own, and the case's probes cannot copy its workspace whole"
    ) in done.stdout, done.stdout
    rows = {line[3:].split("  ")[0]: line for line in done.stdout.splitlines() if line[:1] in "!✓·"}
    assert rows["wrong: every file emptied"].startswith("·"), done.stdout
    assert rows["right: without answer.txt"].startswith("!"), done.stdout  # the lenient verifier, still caught
