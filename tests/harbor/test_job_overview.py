"""A folder of jobs and a job at a glance, on genuine Harbor 0.26.0 folders
and on jobs built from their trials: what the engine reads, what the real
command prints, and what ``test`` and the pytest plugin collect."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.cli.test_truthful import strict_json
from tests.harbor.job_copies import copy_job_files, copy_trial, hostile_jobs, mixed_job, rewarded
from tests.helpers.commands import TOOL, inner_pytest_options, modes_bind_root, no_traceback, run_tool
from tests.helpers.harbor import PASSED, harbor_exception, make_job, verifier_disabled_trial
from tests.helpers.tasks import PY
from verifier_tui.engine.harbor.folders import open_harbor, sub_folders
from verifier_tui.engine.harbor.locate import locate_task
from verifier_tui.engine.harbor.overview import JobOverview, read_jobs, read_overview, select_rows, trial_rows
from verifier_tui.engine.record import replace
from verifier_tui.engine.task.config import REFUSED_TO_RUN as REFUSED
from verifier_tui.engine.task.target import find_harbor_folder


def test_the_genuine_jobs_folder_is_recognised_and_listed_latest_started_first(real):
    jobs = real / "jobs"
    assert find_harbor_folder(jobs)[0] == "jobs"
    listed = read_jobs(jobs)
    assert [j.name for j in listed] == ["multi-step", "separate-mode", "nop-fail", "oracle-pass"]
    by_name = {j.name: j for j in listed}
    assert by_name["nop-fail"].ended_words == "1 RewardFileNotFoundError"
    assert by_name["nop-fail"].mean_words == "-"  # Harbor recorded no metric: no trial had a valid reward
    assert by_name["oracle-pass"].ended_words == "1 passed"
    assert by_name["oracle-pass"].mean_words == "1.000"
    assert by_name["oracle-pass"].agents == ("oracle",)
    assert by_name["oracle-pass"].started_at.isoformat().startswith("2026-12-01T03:35:37")


def test_our_mean_is_the_one_harbor_wrote_for_each_genuine_job(real):
    for job in (real / "jobs").iterdir():
        harbor = json.loads((job / "result.json").read_text())["stats"]["evals"]
        written = {key: group["metrics"][0] for key, group in harbor.items() if group["metrics"]}
        assert read_overview(job).means() == written, job.name


def test_a_job_counts_every_way_a_trial_ended_and_says_what_harbors_mean_leaves_out(real, tmp_path):
    overview = read_overview(mixed_job(real, tmp_path / "jobs" / "mixed"))
    assert overview.counts() == [
        ("passed", 2),
        ("reward below 1", 1),
        ("AgentTimeoutError", 1),
        ("RewardFileNotFoundError", 1),
        ("agent failed", 1),
        ("not finished", 1),
    ]
    # Harbor keeps the agent timeout's reward (its policy) and drops the two without a valid reward.
    assert overview.means() == {"oracle__adhoc": {"mean": 0.5}}
    lines = overview.reward_lines()
    assert lines[0] == "oracle__adhoc: mean 0.500 over 5 trials with a valid reward"
    assert lines[1] == (
        "Harbor's mean leaves out 2 trials with no valid reward (1 RewardFileNotFoundError, "
        "1 not finished); counting them as 0 the mean would be 0.357"
    )
    assert overview.token_words() == "2,000 input tokens, 500 output tokens, $0.0200"
    [task] = overview.tasks.values()
    assert (task.task, task.trials, task.passed, task.mean, task.errors) == ("hello-file", 7, 2, 0.5, 2)
    exit_row = next(r for r in overview.rows if r.name == "hello-file__exit006")
    assert exit_row.outcome_words == "agent exited 3"


def test_with_several_reward_keys_a_missing_key_counts_as_zero_as_in_harbor(real, env, tmp_path):
    job = copy_job_files(real, tmp_path / "keys")
    copy_trial(real, job, "t__a", edit=rewarded({"accuracy": 1.0, "style": 0.5}))
    copy_trial(real, job, "t__b", edit=rewarded({"accuracy": 0.0}))
    overview = read_overview(job)
    assert overview.means() == {"oracle__adhoc": {"accuracy": 0.5, "style": 0.25}}
    assert "a key a trial lacks counts as 0" in " ".join(overview.reward_lines())
    # The task's row gives each key's mean, never the first key's alone as "the" mean.
    done = run_tool(env, "run", job, cwd=tmp_path)
    assert "hello-file  2       0       accuracy 0.500, style 0.250  0" in done.stdout
    [task] = json.loads(run_tool(env, "run", "--json", job, cwd=tmp_path).stdout)["job"]["tasks"]
    assert task["mean"] is None and task["means"] == {"accuracy": 0.5, "style": 0.25}


def test_the_trials_filter_by_failure_exception_and_task_and_sort(real, tmp_path):
    job = mixed_job(real, tmp_path / "jobs" / "mixed")
    copy_trial(real, job, "other__pass008", edit=lambda r: r.update(task_name="other"))
    rows = read_overview(job).rows
    assert [r.name for r in select_rows(rows, failures=True)] == [
        "hello-file__exit006",
        "hello-file__half003",
        "hello-file__nop0005",
        "hello-file__slow004",
        "hello-file__stop007",
    ]
    assert [r.name for r in select_rows(rows, outcome="AgentTimeoutError")] == ["hello-file__slow004"]
    assert [r.name for r in select_rows(rows, task="other")] == ["other__pass008"]
    assert select_rows(rows, sort="reward")[0].rewards is None  # no reward first, then the lowest
    assert select_rows(rows, sort="reward")[-1].rewards == {"reward": 1.0}


def test_a_folder_of_trials_without_job_files_reads_as_a_job(real, tmp_path):
    trials = tmp_path / "trials"
    copy_trial(real, trials, "hello-file__one")
    copy_trial(real, trials, "hello-file__two", edit=rewarded({"reward": 0.0}))
    assert find_harbor_folder(trials)[0] == "job"
    assert read_overview(trials).counts() == [("passed", 1), ("reward below 1", 1)]


def test_a_jobs_folder_that_also_holds_many_files_is_still_a_jobs_folder(real, tmp_path):
    # Files kept beside the jobs (notes, exported logs) come before the first
    # job in a listing's order as often as not: only folders are probed.
    jobs = tmp_path / "jobs"
    shutil.copytree(real / "jobs" / "oracle-pass", jobs / "oracle-pass")
    for index in range(5000):
        (jobs / f"note-{index}.txt").write_text("")
    assert find_harbor_folder(jobs)[0] == "jobs"
    assert [j.name for j in read_jobs(jobs)] == ["oracle-pass"]


# --------------------------------------------------------------------------
# The real command.


def test_run_on_the_jobs_folder_lists_the_jobs(real, env, tmp_path):
    done = run_tool(env, "run", real / "jobs", cwd=tmp_path)
    no_traceback(done)
    assert done.returncode == 0  # the overview was what was asked for; nothing replayed
    lines = done.stdout.splitlines()
    assert lines[0] == (
        "jobs folder jobs · 4 jobs (latest started first; each as its result.json recorded it: "
        "open one for its trial folders)"
    )
    assert [line.split()[0] for line in lines[2:6]] == ["multi-step", "separate-mode", "nop-fail", "oracle-pass"]
    nop = next(line for line in lines if line.startswith("nop-fail"))
    assert "nop" in nop and "1 RewardFileNotFoundError" in nop
    data = json.loads(run_tool(env, "run", "--json", real / "jobs", cwd=tmp_path).stdout)
    assert [job["name"] for job in data["jobs"]] == ["multi-step", "separate-mode", "nop-fail", "oracle-pass"]


def test_run_on_a_job_shows_its_overview_and_how_to_choose_a_trial(real, env, tmp_path):
    job = mixed_job(real, tmp_path / "jobs" / "mixed")
    done = run_tool(env, "run", job, cwd=tmp_path)
    no_traceback(done)
    assert done.returncode == 0
    out = done.stdout
    assert (
        "ended   2 passed, 1 reward below 1, 1 AgentTimeoutError, 1 RewardFileNotFoundError, 1 agent failed, "
        "1 not finished" in out
    )
    assert "Harbor's mean leaves out 2 trials" in out
    assert "hello-file  7       2       0.500  2" in out
    assert "hello-file__exit006  hello-file  ✗ agent exited 3" in out
    data = json.loads(run_tool(env, "run", "--json", job, cwd=tmp_path).stdout)["job"]
    assert data["outcomes"]["not finished"] == 1 and data["means"] == {"oracle__adhoc": {"mean": 0.5}}
    assert len(data["trial_rows"]) == 7


def test_a_list_of_names_is_cut_to_a_few_and_a_count(real, env, tmp_path):
    job = copy_job_files(real, tmp_path / "jobs" / "many")
    for index in range(40):
        copy_trial(real, job, f"hello-file__{index:07d}")
    done = run_tool(env, "run", job, cwd=tmp_path)
    assert (
        "(hello-file__0000000, hello-file__0000001, hello-file__0000002, hello-file__0000003, "
        "hello-file__0000004 and 35 more)" in done.stdout
    )
    assert "... and 20 more (--json lists them all)" in done.stdout
    assert max(len(line) for line in done.stdout.splitlines()) < 250
    done = run_tool(env, "run", job, "--trial", "nope", cwd=tmp_path)
    assert done.returncode == 2
    assert "and 35 more" in done.stderr and len(done.stderr) < 400


def test_test_on_the_jobs_folder_takes_every_jobs_trials(real, env, tmp_path):
    done = run_tool(env, "test", "--json", real / "jobs", "--python", PY, cwd=tmp_path)
    no_traceback(done)
    names = sorted(t["trial"]["name"] for t in json.loads(done.stdout)["trials"])
    assert names == [
        "hello-file__C4SunEc",
        "hello-file__g3LxX6i",
        "multi-step__2qiWQiH",
        "multi-step__2qiWQiH",
        "separate-mode__aFJNu4u",
    ]  # the multi-step trial once per step


def test_the_pytest_plugin_collects_every_jobs_trials(real, env, tmp_path):
    import subprocess
    import sys

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "--co",
            "-q",
            "--verifier-cases",
            str(real / "jobs"),
        ],
        cwd=tmp_path,
        env=dict(env, PYTEST_ADDOPTS=inner_pytest_options()),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # <job>::<trial>, as test jobs/ names its rows <job>/<trial> (the job's folder from the rootdir)
    items = [line.rpartition("jobs/")[2] for line in done.stdout.splitlines() if "::" in line]
    assert sorted(items) == [
        "multi-step::multi-step__2qiWQiH[first]",
        "multi-step::multi-step__2qiWQiH[second]",
        "nop-fail::hello-file__C4SunEc",
        "oracle-pass::hello-file__g3LxX6i",
        "separate-mode::separate-mode__aFJNu4u",
    ]


# --------------------------------------------------------------------------
# Which copy of the task.


def test_when_two_copies_of_the_task_qualify_the_one_taken_and_why_are_said(task, runs, tmp_path):
    demo = task()
    make_job(runs / "jobs" / "j", {"demo__aaaaaaa": dict(task=demo, **PASSED)})
    # A second copy where the job folder's ancestors lead (task.path "tasks/demo" from runs/jobs), edited since.
    stale = runs / "jobs" / "tasks" / "demo"
    shutil.copytree(demo, stale)
    (stale / "tests" / "verifier.py").write_text("def verify(workspace):\n    return 0.0\n")
    # Harbor ran elsewhere: trial_uri's folder is gone, so both copies are found from where the job is now.
    result = runs / "jobs" / "j" / "demo__aaaaaaa" / "result.json"
    data = json.loads(result.read_text())
    data["trial_uri"] = "file:///gone/harbor-runs/jobs/j/demo__aaaaaaa"
    result.write_text(json.dumps(data))
    location = locate_task(open_harbor(runs / "jobs" / "j" / "demo__aaaaaaa")[0])
    assert location.path == demo
    assert f"chosen over {stale} (task.path from an ancestor of the job folder)" in location.found_by
    assert "its digest is the one lock.json recorded, the other's is not" in location.found_by


def test_a_job_of_files_harbor_never_writes_is_shown_without_a_traceback(real, env, tmp_path):
    job = hostile_jobs(real, tmp_path)
    overview = read_overview(job)
    assert dict(overview.counts()) == {"no reward": 1, "not finished": 3}
    for path in (job, job.parent):
        for extra in ((), ("--json",)):
            done = run_tool(env, "run", *extra, path, cwd=tmp_path)
            no_traceback(done)
            assert done.returncode == 0 and "\x1b" not in done.stdout and "\x07" not in done.stdout


def test_the_overview_documents_are_documented(real, env, tmp_path):
    from tests.helpers.commands import documented_fields

    data = json.loads(run_tool(env, "run", "--json", mixed_job(real, tmp_path / "jobs" / "mixed"), cwd=tmp_path).stdout)
    assert documented_fields("## The job overview document", "`job`:") == set(data)
    assert documented_fields("`job`:", "## The jobs folder document") == set(data["job"])
    listed = json.loads(run_tool(env, "run", "--json", real / "jobs", cwd=tmp_path).stdout)
    assert documented_fields("## The jobs folder document", "\n## The end") == set(listed)


def test_every_way_a_trial_ended_in_the_overview_json_is_documented(real, env, tmp_path):
    from tests.helpers.commands import JSON_DOC

    job = mixed_job(real, tmp_path / "jobs" / "mixed")
    unread = next(p for p in sorted(job.iterdir()) if (p / "result.json").is_file())
    (unread / "result.json").unlink()
    (unread / "result.json").symlink_to(tmp_path / "elsewhere.json")  # a link: never read through
    outcomes = json.loads(run_tool(env, "run", "--json", job, cwd=tmp_path).stdout)["job"]["outcomes"]
    assert "cannot be read" in outcomes
    row = next(line for line in JSON_DOC.read_text(encoding="utf-8").splitlines() if line.startswith("| `outcomes`"))
    words = [o for o in outcomes if not o[:1].isupper()]  # an exception's type is Harbor's own word
    assert [w for w in words if f"`{w}`" not in row] == []


def test_the_jobs_list_says_each_trial_ended_as_the_job_overview_does(runs, task, env, tmp_path):
    """The jobs list said ``1 reward below 1`` for a failing oracle the
    overview calls ``agent failed``, and counted a trial with both a kept
    reward and an exception twice."""
    demo = task()
    job = make_job(
        runs / "jobs" / "j",
        {
            "demo__pass": dict(task=demo, rewards={"reward": 1.0}),
            "demo__exit": dict(task=demo, rewards={"reward": 0.0}),
            "demo__slow": dict(
                task=demo,
                rewards={"reward": 0.5},
                exception=harbor_exception("AgentTimeoutError", "Agent execution timed out after 60.0 seconds"),
            ),
        },
    )
    (job / "demo__exit" / "agent" / "exit-code.txt").write_text("3\n")
    said = "1 passed, 1 AgentTimeoutError, 1 agent failed"
    overview = run_tool(env, "run", job, cwd=tmp_path).stdout
    assert f"ended   {said}" in overview.splitlines()
    listed = run_tool(env, "run", runs / "jobs", cwd=tmp_path)
    assert listed.returncode == 0
    row = next(line for line in listed.stdout.splitlines() if line.startswith("j "))
    assert row.endswith(said)
    data = json.loads(run_tool(env, "run", "--json", runs / "jobs", cwd=tmp_path).stdout)
    assert data["jobs"][0]["outcomes"] == {"passed": 1, "AgentTimeoutError": 1, "agent failed": 1}


def test_trial_names_in_a_jobs_stats_never_lead_out_of_the_job(runs, task, tmp_path):
    """``reward_stats`` names trials; a name that is a path (``../x``) is not
    followed to an ``agent/exit-code.txt`` elsewhere, nor counted."""
    job = make_job(runs / "jobs" / "j", {"demo__pass": dict(task=task(), rewards={"reward": 1.0})})
    outside = runs / "jobs" / "elsewhere" / "agent"
    outside.mkdir(parents=True)
    (outside / "exit-code.txt").write_text("3\n")
    result = json.loads((job / "result.json").read_text())
    stats = next(iter(result["stats"]["evals"].values()))
    stats["reward_stats"]["reward"]["1.0"] += ["../elsewhere", "/etc", "a/b", ".."]
    (job / "result.json").write_text(json.dumps(result))
    [summary] = read_jobs(runs / "jobs")
    assert summary.outcomes == {"passed": 1}


def test_a_trial_that_finished_with_no_reward_is_not_said_below_1(runs, task, env, tmp_path):
    """A verifier disabled for the job: no reward at all, counted as "reward below 1"."""
    demo = task()
    job = make_job(
        runs / "jobs" / "j", {"demo__none": dict(task=demo), "demo__one": dict(task=demo, rewards={"reward": 1.0})}
    )
    assert dict(read_overview(job).counts()) == {"passed": 1, "no reward": 1}
    done = run_tool(env, "run", job, cwd=tmp_path)
    assert "reward below 1" not in done.stdout and "1 no reward" in done.stdout, done.stdout


def test_a_trial_whose_job_disabled_the_verifier_blames_no_earlier_failure(runs, task, env, tmp_path):
    trial = verifier_disabled_trial(runs, task())
    done = run_tool(env, "run", trial, "--stand-in", "empty", "--python", PY, cwd=tmp_path)
    no_traceback(done)
    assert "the job ran without it (verifier.disable)" in done.stdout, done.stdout
    assert "the failure came before it" not in done.stdout


def test_a_job_that_disabled_the_verifier_loads_a_task_without_its_test_script(runs, task, env, tmp_path):
    """A job run with ``verifier.disable`` on a task with no ``tests/test.sh``: Harbor's trial builds
    ``Task(disable_verification=True)``, which skips ``_validate_tests``, so the task loaded and the
    trial ran; the replay said "Harbor would refuse to run this task: no tests/test.sh" and gave no
    verdict. It now replays as any disabled trial, and says that a job running the verifier would be refused."""
    trial = verifier_disabled_trial(runs, task(shim=False))
    done = run_tool(env, "run", trial, "--stand-in", "empty", "--python", PY, cwd=tmp_path)
    no_traceback(done)
    assert done.returncode == 0, done.stdout + done.stderr
    assert REFUSED not in done.stdout, done.stdout
    assert "replay    1.0 · exit 0" in done.stdout, done.stdout
    note = "Harbor loads this task only with the verifier disabled, as this job ran it; one that runs the verifier "
    assert f"{note}is refused: no tests/test.sh" in done.stdout, done.stdout
    make_job(runs / "jobs" / "k", {"demo__on": dict(task=runs / "tasks" / "demo")})  # the verifier run
    tested = run_tool(env, "test", runs / "jobs", "--stand-in", "empty", "--python", PY, cwd=tmp_path)
    no_traceback(tested)
    rows = {line.split()[1]: line for line in tested.stdout.splitlines() if "/demo__o" in line}
    assert "refused" not in rows["j/demo__off"] and "nothing to compare" in rows["j/demo__off"], tested.stdout
    assert rows["k/demo__on"].endswith("refused"), tested.stdout


def test_a_job_that_disabled_the_verifier_still_reads_the_instruction(runs, task, env, tmp_path):
    """``Task.__init__`` reads ``instruction.md`` with verification disabled too: such a job's
    trial of a task without one is still one Harbor refuses."""
    demo = task()
    (demo / "instruction.md").unlink()
    done = run_tool(env, "run", verifier_disabled_trial(runs, demo), "--stand-in", "empty", cwd=tmp_path)
    no_traceback(done)
    assert f"agreement refused: {REFUSED}: no instruction.md" in done.stdout, done.stdout


def test_the_jobs_list_names_each_job_by_its_folder(real, env, tmp_path):
    """Rows used config.json's job_name: four folders showed as one name, and
    the hint named a folder that does not exist."""
    jobs = tmp_path / "jobs"
    copy_job_files(real, jobs / "renamed")
    done = run_tool(env, "run", jobs, cwd=tmp_path)
    no_traceback(done)
    rows = [line.split()[0] for line in done.stdout.splitlines()[2:-1] if line.strip()]
    assert rows == ["renamed"], done.stdout
    assert done.stdout.splitlines()[-1] == "see one job: verifier-tui run jobs/renamed"
    overview = run_tool(env, "run", jobs / "renamed", cwd=tmp_path).stdout.splitlines()[0]
    assert overview.startswith("job renamed · "), overview  # not config.json's job_name, oracle-pass


def test_times_that_run_backwards_and_negative_tokens_are_not_shown_as_figures(real, env, tmp_path):
    job = copy_job_files(real, tmp_path / "jobs" / "odd")
    trial = copy_trial(real, job, "hello-file__aaaaaaa")
    data = json.loads((trial / "result.json").read_text())
    verifier = data.get("verifier") or {}
    if verifier.get("started_at") and verifier.get("finished_at"):
        verifier["started_at"], verifier["finished_at"] = verifier["finished_at"], verifier["started_at"]
    data["verifier"] = verifier or {"started_at": "2026-01-02T00:00:00Z", "finished_at": "1970-01-01T00:00:00Z"}
    data.setdefault("agent_result", {})["n_input_tokens"] = -5
    (trial / "result.json").write_text(json.dumps(data))
    shown = run_tool(env, "run", trial, cwd=tmp_path).stdout + run_tool(env, "run", job, cwd=tmp_path).stdout
    assert "took -" not in shown and "-5 input tokens" not in shown, shown


def test_token_counts_and_costs_past_any_float_are_summed_without_a_traceback(task, runs, env, tmp_path):
    """Trials whose ``agent_result`` records a cost (and token counts) of a
    401-digit integer, one beside a cost of 1e308: ``run JOB`` died on
    ``OverflowError: int too large to convert to float``, adding them or
    writing the sum as dollars."""
    demo = task()
    job = make_job(runs / "jobs" / "j", {name: dict(task=demo, **PASSED) for name in ("demo__a", "demo__b")})
    for name, cost in (("demo__a", 10**400), ("demo__b", 1e308)):
        data = json.loads((job / name / "result.json").read_text())
        data["agent_result"] = {"n_input_tokens": 10**400, "n_output_tokens": 7, "cost_usd": cost}
        (job / name / "result.json").write_text(json.dumps(data))
    for args in ((job,), ("--json", job)):
        done = run_tool(env, "run", *args, cwd=tmp_path)
        no_traceback(done)
        assert done.returncode == 0, done.stderr
    # a cost past any float is no number, as a mean is said, never Python's $inf
    line = next(line for line in run_tool(env, "run", job, cwd=tmp_path).stdout.splitlines() if "tokens" in line)
    assert line.endswith("14 output tokens, cost no number (past the largest float)") and "inf" not in line, line
    one = run_tool(env, "run", job / "demo__a", cwd=tmp_path)
    no_traceback(one)


def test_a_token_count_of_hundreds_of_digits_takes_no_screenful(task, runs, env, tmp_path):
    """A trial's ``agent_result`` counting 10**400 input tokens: the job's
    ``agent`` line wrote all 401 digits with their commas, 530 characters (the
    TUI's header: eight lines above the tables)."""
    job = make_job(runs / "jobs" / "j", {name: dict(task=task(), **PASSED) for name in ("demo__a", "demo__b")})
    data = json.loads((job / "demo__a" / "result.json").read_text())
    data["agent_result"] = {"n_input_tokens": 10**400, "n_output_tokens": 2_000, "cost_usd": 0.5}
    (job / "demo__a" / "result.json").write_text(json.dumps(data))
    done = run_tool(env, "run", job, cwd=tmp_path)
    no_traceback(done)
    line = next(line for line in done.stdout.splitlines() if "input tokens" in line)
    assert len(line) < 80 and "1.000e+400 input tokens, 2,000 output tokens, $0.5000" in line, line


def test_a_huge_cost_takes_no_screenful(task, runs, env, tmp_path):
    """A trial's ``agent_result`` costing 1e300 dollars: ``:.2f`` wrote all
    301 digits, a 363-character agent line in run JOB (a 313-character cell of
    the TUI's trials table). A cost past a million is written $1.000e+300,
    by the helper the line and the column share."""
    from verifier_tui.engine.harbor.overview import cost_words

    job = make_job(runs / "jobs" / "j", {name: dict(task=task(), **PASSED) for name in ("demo__a", "demo__b")})
    data = json.loads((job / "demo__a" / "result.json").read_text())
    data["agent_result"] = {"n_input_tokens": 1_000, "n_output_tokens": 2_000, "cost_usd": 1e300}
    (job / "demo__a" / "result.json").write_text(json.dumps(data))
    done = run_tool(env, "run", job, cwd=tmp_path)
    no_traceback(done)
    line = next(line for line in done.stdout.splitlines() if "input tokens" in line)
    assert len(line) < 80 and "1,000 input tokens, 2,000 output tokens, $1.000e+300" in line, line
    assert [cost_words(c) for c in (0.5, 2.5, 999_999.0, 1e6, float("inf"))] == [
        "$0.5000",
        "$2.50",
        "$999999.00",
        "$1.000e+6",
        "no number (past the largest float)",
    ]


def test_test_on_a_jobs_folder_names_each_rows_job(task, runs, env, tmp_path):
    import xml.etree.ElementTree as ET

    demo = task()
    for job in ("j1", "j2"):  # a trial's folder name is unique in its job, not in a folder of jobs
        make_job(runs / "jobs" / job, {"demo__same": dict(task=demo, **PASSED)})
    report = tmp_path / "junit.xml"
    done = run_tool(env, "test", runs / "jobs", "--junit", report, "--stand-in", "empty", "--python", PY, cwd=tmp_path)
    no_traceback(done)
    lines = done.stdout.splitlines()
    assert lines[0].startswith("jobs folder jobs · 2 job(s), 2 trial(s)")
    rows = [line.split()[1] for line in lines[2:4]]
    assert sorted(rows) == ["j1/demo__same", "j2/demo__same"]
    cases = ET.parse(report).getroot().findall("testcase")
    assert sorted((c.get("classname"), c.get("name")) for c in cases) == [("j1", "demo__same"), ("j2", "demo__same")]


def test_a_trial_folder_that_cannot_be_read_is_a_row_and_the_others_are_replayed(task, runs, env, tmp_path):
    demo = task()
    job = make_job(
        runs / "jobs" / "j", {"demo__ok": dict(task=demo, **PASSED), "demo__shut": dict(task=demo, **PASSED)}
    )
    for n in range(30):  # Harbor writes only trial folders in a job
        (job / f"stray{n:02}").mkdir()
    shut = job / "demo__shut"
    shut.chmod(0)
    tool = [*modes_bind_root(), *TOOL]
    try:
        tested = run_tool(env, "test", job, "--stand-in", "empty", "--python", PY, cwd=tmp_path, tool=tool)
        overview = run_tool(env, "run", job, cwd=tmp_path, tool=tool)
    finally:
        shut.chmod(0o755)
    no_traceback(tested)
    assert tested.returncode == 1, tested.stdout + tested.stderr  # one trial not compared; never exit 2 for all
    rows = {line.split()[1]: line.split()[0] for line in tested.stdout.splitlines()[2:4]}
    assert rows["demo__shut"] == "?" and "demo__ok" in rows
    assert "the trial folder demo__shut cannot be read (Permission denied)" in tested.stdout
    notes = [line for line in tested.stdout.splitlines() if line.startswith("note: ")]
    assert notes[0].startswith("note: stray00: not a trial folder") and len(notes) == 21  # 20, then a count
    assert notes[-1] == "note: … 10 more notes (--json lists them all)"
    no_traceback(overview)
    assert "1 cannot be read" in overview.stdout and "demo__shut" in overview.stdout


def test_a_trial_that_cannot_be_read_has_every_field_of_a_trial_document_in_test_json(task, runs, env, tmp_path):
    from tests.helpers.commands import documented_fields

    demo = task()
    job = make_job(
        runs / "jobs" / "j", {"demo__ok": dict(task=demo, **PASSED), "demo__shut": dict(task=demo, **PASSED)}
    )
    shut = job / "demo__shut"
    shut.chmod(0)
    tool = [*modes_bind_root(), *TOOL]
    try:
        done = run_tool(env, "test", job, "--json", "--stand-in", "empty", "--python", PY, cwd=tmp_path, tool=tool)
    finally:
        shut.chmod(0o755)
    no_traceback(done)
    trials = {t["trial"]["name"]: t for t in json.loads(done.stdout)["trials"]}
    unread = trials["demo__shut"]
    # A reader takes each trial object as the documented trial document: none lacks a field.
    assert set(unread) == documented_fields("## The trial document", "### The trial") == set(trials["demo__ok"])
    assert unread["judged_by"] is None and unread["runner_alone"] is None and unread["story"] == []
    assert unread["local_skipped"] == "the trial folder demo__shut cannot be read (Permission denied)"


def test_a_job_without_a_trial_folder_still_gives_test_json_its_document(real, env, tmp_path):
    """A job Harbor stopped before any trial folder was made: test JOB --json said why on stderr,
    exit 2, and printed nothing, where test TASK --json with nothing left to test prints its
    document; a script reading stdout got nothing to parse. Now the job test document, no trial
    in it and why in its problems, with the same line and exit 2."""
    job = copy_job_files(real, tmp_path / "jobs" / "stopped")
    (job / "scratch").mkdir()  # a folder that is no trial: a problem said of it too
    done = run_tool(env, "test", job, "--json", "--python", PY, cwd=tmp_path)
    no_traceback(done)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    data = json.loads(done.stdout)
    assert (data["trials"], data["trial_folders"], data["agree"], data["not_compared"]) == ([], 0, 0, 0)
    assert data["problems"] and data["problems"][0].startswith("scratch: not a trial folder"), data["problems"]
    assert data["problems"][0] in done.stderr


def test_run_job_says_each_folder_of_the_job_it_leaves_out(task, runs, env, tmp_path):
    # As test JOB and compare say them: a link (never followed), a folder that is no trial.
    demo = task()
    job = make_job(runs / "jobs" / "j", {"demo__ok": dict(task=demo, **PASSED), "demo__ok2": dict(task=demo, **PASSED)})
    other = make_job(tmp_path / "x" / "jobs" / "other", {"demo__x": dict(task=demo, **PASSED)})
    (job / "demo__linked").symlink_to(other / "demo__x")
    (job / "scratch").mkdir()
    done = run_tool(env, "run", job, cwd=tmp_path)
    no_traceback(done)
    assert done.stdout.startswith("job j · 2 trials · ")
    notes = [line for line in done.stdout.splitlines() if line.startswith("note: demo__linked is a link to ")]
    assert len(notes) == 1 and notes[0].endswith("jobs/other/demo__x: not read here"), done.stdout  # as run says paths
    assert any(line.startswith("note: scratch: not a trial folder") for line in done.stdout.splitlines())
    data = json.loads(run_tool(env, "run", "--json", job, cwd=tmp_path).stdout)
    assert data["job"]["problems"][0] == f"demo__linked is a link to {other / 'demo__x'}: not read here"
    assert data["job"]["problems"][1].startswith("scratch: not a trial folder")


def test_trial_naming_a_link_the_job_leaves_out_says_why_it_is_no_trial(task, runs, env, tmp_path):
    """``run JOB --trial demo__linked``, ``demo__linked`` a link in the job (to
    a trial elsewhere): the line said the job ``has no trial 'demo__linked'``,
    though the overview lists it as a link not read, and the user sees it there."""
    demo = task()
    job = make_job(runs / "jobs" / "j", {"demo__ok": dict(task=demo, **PASSED), "demo__ok2": dict(task=demo, **PASSED)})
    other = make_job(tmp_path / "x" / "jobs" / "other", {"demo__x": dict(task=demo, **PASSED)})
    (job / "demo__linked").symlink_to(other / "demo__x")
    done = run_tool(env, "run", job, "--trial", "demo__linked", cwd=tmp_path)
    no_traceback(done)
    assert done.returncode == 2, done.stderr
    assert "has no trial 'demo__linked'" not in done.stderr, done.stderr
    assert f"demo__linked is a link to {other / 'demo__x'}: not read here" in done.stderr, done.stderr


def test_trial_naming_any_folder_the_job_leaves_out_says_why_and_only_that_one(task, runs, env, tmp_path):
    """``run JOB --trial scratch``, ``scratch`` a folder of the job that is no
    trial: the line said the job ``has no trial 'scratch'`` (only a link's line
    was found by its name); ``--trial my`` beside a link ``my trial`` said why
    that link is no trial, of a name the job does not hold."""
    demo = task()
    job = make_job(runs / "jobs" / "j", {"demo__ok": dict(task=demo, **PASSED)})
    other = make_job(tmp_path / "x" / "jobs" / "other", {"demo__x": dict(task=demo, **PASSED)})
    (job / "my trial").symlink_to(other / "demo__x")
    (job / "scratch").mkdir()
    done = run_tool(env, "run", job, "--trial", "scratch", cwd=tmp_path)
    no_traceback(done)
    assert done.returncode == 2 and "--trial scratch: scratch: not a trial folder" in done.stderr, done.stderr
    done = run_tool(env, "run", job, "--trial", "my", cwd=tmp_path)
    no_traceback(done)
    assert done.returncode == 2 and "has no trial 'my'" in done.stderr, done.stderr
    assert "link" not in done.stderr, done.stderr
    done = run_tool(env, "run", job, "--trial", "my trial", cwd=tmp_path)
    assert done.returncode == 2 and "--trial my trial: my trial is a link to " in done.stderr, done.stderr


def test_a_jobs_own_config_json_that_cannot_be_read_is_said_in_the_jobs_list(task, runs, env, tmp_path):
    """A job's config.json (which names its agents) a link to a file of the
    user's, or a FIFO: ``run JOBS`` and the TUI's list of jobs showed the
    job with agent ``-`` and said nowhere why, the link never said as one.
    A note says why; nothing is read through the link."""
    demo = task()
    for name in ("ok", "linked", "piped"):
        make_job(runs / "jobs" / name, {"demo__a": dict(task=demo, **PASSED)})
    planted = tmp_path / "mine.json"
    planted.write_text(json.dumps({"agents": [{"name": "what-it-holds"}]}))
    (runs / "jobs" / "linked" / "config.json").unlink()
    (runs / "jobs" / "linked" / "config.json").symlink_to(planted)
    (runs / "jobs" / "piped" / "config.json").unlink()
    os.mkfifo(runs / "jobs" / "piped" / "config.json")
    done = run_tool(env, "run", runs / "jobs", cwd=tmp_path)
    no_traceback(done)
    assert "what-it-holds" not in done.stdout
    notes = [line for line in done.stdout.splitlines() if line.startswith("note: ")]
    assert notes == [  # in the order the jobs are listed
        "note: piped: config.json is a FIFO (a named pipe), not a regular file",
        "note: linked: config.json is a link to mine.json: not read here",
    ], done.stdout
    listed: list[str] = []  # the TUI's list of jobs takes its notes here too
    read_jobs(runs / "jobs", notes=listed)
    assert len(listed) == 2 and listed[0] == "piped: config.json is a FIFO (a named pipe), not a regular file"


def test_a_jobs_folder_says_each_folder_it_leaves_out(task, runs, env, tmp_path):
    demo = task()
    make_job(runs / "jobs" / "j", {"demo__ok": dict(task=demo, **PASSED)})
    shut = make_job(runs / "jobs" / "shut", {"demo__in": dict(task=demo, **PASSED)})
    (runs / "jobs" / "empty").mkdir()
    shut.chmod(0)
    try:
        done = run_tool(
            env,
            "test",
            runs / "jobs",
            "--stand-in",
            "empty",
            "--python",
            PY,
            cwd=tmp_path,
            tool=[*modes_bind_root(), *TOOL],
        )
    finally:
        shut.chmod(0o755)
    no_traceback(done)
    assert "j/demo__ok" in done.stdout
    assert "note: empty: not a job folder (no job.log): left out" in done.stdout
    assert "shut cannot be listed (Permission denied)" in done.stdout


def test_a_captured_app_that_cannot_be_read_is_no_replay_said_so(task, runs, env, tmp_path):
    trial = make_job(runs / "jobs" / "j", {"demo__app": dict(task=task(), app={"hello.txt": "hi"}, **PASSED)})
    app = trial / "demo__app" / "artifacts" / "app"
    app.chmod(0)
    try:
        done = run_tool(env, "run", trial / "demo__app", "--python", PY, cwd=tmp_path, tool=[*modes_bind_root(), *TOOL])
    finally:
        app.chmod(0o755)
    no_traceback(done)
    assert done.returncode == 2, done.stdout  # no replay: not a replay that failed on files the verifier saw
    assert "artifacts/app) cannot be read: Permission denied" in done.stdout


def test_a_job_or_trial_folder_that_cannot_be_read_is_named_as_such(task, runs, env, tmp_path):
    job = make_job(runs / "jobs" / "j", {"demo__ok": dict(task=task(), **PASSED)})
    tool = [*modes_bind_root(), *TOOL]
    for folder, mode in ((job, 0o111), (job, 0), (job / "demo__ok", 0)):
        folder.chmod(mode)  # 0o111: its files can be reached by name, the folder not listed
        try:
            done = run_tool(env, "run", folder, cwd=tmp_path, tool=tool)
        finally:
            folder.chmod(0o755)
        no_traceback(done)
        assert done.returncode == 2, (mode, done.stdout)  # never "0 trials" and exit 0
        assert done.stderr == f"verifier-tui: {folder}: Permission denied\n"  # not a job.log that is not there


def test_an_exception_type_with_a_line_break_in_a_jobs_result_json_stays_one_word(task, runs):
    from verifier_tui.engine.harbor.overview import read_job_summary

    job = make_job(runs / "jobs" / "j", {"demo__a": dict(task=task(), **PASSED)})
    result = json.loads((job / "result.json").read_text())
    group = next(iter(result["stats"]["evals"].values()))
    group["exception_stats"] = {"Evil\nverdict: FORGED": ["demo__a"]}
    (job / "result.json").write_text(json.dumps(result))
    assert read_job_summary(job).ended_words == "1 Evil verdict: FORGED"


def test_a_jobs_mean_past_any_float_is_listed_without_a_traceback(task, runs, env, tmp_path):
    """A job's result.json whose metric mean is a 401-digit integer (JSON has
    no bound; Harbor's pydantic takes any int): ``run JOBS`` died on
    ``OverflowError: int too large to convert to float``, listing no job; then
    it listed ``inf`` as a figure (--json's means the string ``"inf"``), where
    such a mean is no number: Harbor's mean is a float."""
    make_job(runs / "jobs" / "fine", {"demo__a": dict(task=task(), **PASSED)})
    job = make_job(runs / "jobs" / "huge", {"demo__b": dict(task=task(), **PASSED)})
    result = json.loads((job / "result.json").read_text())
    next(iter(result["stats"]["evals"].values()))["metrics"] = [{"mean": 10**400}]
    (job / "result.json").write_text(json.dumps(result))
    done = run_tool(env, "run", runs / "jobs", cwd=tmp_path)
    no_traceback(done)
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line for line in done.stdout.splitlines()[2:] if line.split()}
    assert "no number (an integer too large for a float)" in rows["huge"], done.stdout
    assert "inf" not in rows["huge"].split() and "1.000" in rows["fine"].split(), done.stdout
    listed = run_tool(env, "run", "--json", runs / "jobs", cwd=tmp_path)
    no_traceback(listed)
    means = {job["name"]: job["means"] for job in strict_json(listed.stdout)["jobs"]}
    assert [group["mean"] for group in means["huge"].values()] == [None], means  # as a mean recorded null


def test_a_mean_harbor_cannot_compute_is_said_so_not_inf(task, runs, env, tmp_path):
    """Trials rewarded a 401-digit integer: run JOB, --json and the task table
    said ``mean inf`` as if Harbor computed it, where Harbor 0.26's Mean
    (sum(values) / len(values)) raises OverflowError on such ints; the trials
    table wrote all 401 digits of the reward."""
    demo = task()
    job = make_job(
        runs / "jobs" / "j",
        {
            "demo__a": dict(task=demo, rewards={"reward": 10**400}),
            "demo__b": dict(task=demo, rewards={"reward": 1.0}),
        },
    )
    done = run_tool(env, "run", job, cwd=tmp_path)
    no_traceback(done)
    assert "inf" not in done.stdout, done.stdout
    said = "Harbor cannot compute it (OverflowError)"
    assert f"oracle__adhoc: mean {said} over 2 trials" in done.stdout, done.stdout
    task_row = next(line for line in done.stdout.splitlines() if line.startswith(demo.name))
    assert said in task_row, done.stdout
    trial_row = next(line for line in done.stdout.splitlines() if line.startswith("demo__a"))
    assert "1.000e+400" in trial_row and len(trial_row) < 120, trial_row
    data = strict_json(run_tool(env, "run", "--json", job, cwd=tmp_path).stdout)["job"]
    assert list(data["mean_errors"].values()) == [{"mean": "OverflowError"}], data["mean_errors"]
    assert data["tasks"][0]["mean_errors"] == {"reward": "OverflowError"}, data["tasks"][0]


def test_a_result_json_not_of_harbors_shape_is_not_finished_for_the_trial_and_its_job(task, runs, env, tmp_path):
    """A trial's result.json that is valid JSON but not an object (no
    ``finished_at``, which Harbor writes when it ends a trial): the job overview
    said "not finished", the trial itself (``run TRIAL``) took Harbor's verdict
    as given and said it scored the trial. Both now say Harbor has not ended it."""
    demo = task()
    job = make_job(
        runs / "jobs" / "j",
        {
            "demo__list": dict(task=demo, rewards={"reward": 1.0}, verifier_files={"reward.txt": "1"}),
            "demo__pass": dict(task=demo, **PASSED),
        },
    )
    (job / "demo__list" / "result.json").write_text("[]")
    overview = json.loads(run_tool(env, "run", "--json", job, cwd=tmp_path).stdout)["job"]
    assert overview["outcomes"] == {"passed": 1, "not finished": 1}
    done = run_tool(env, "run", "--json", job / "demo__list", "--python", PY, cwd=tmp_path)
    no_traceback(done)
    verdict = json.loads(done.stdout)["sandbox"]["harbor_verdict"]
    assert verdict["finished"] is False and verdict["rewards"] is None, verdict


def test_a_trial_nothing_names_the_task_of_is_named_by_its_folder_and_said_why(task, runs, env, tmp_path):
    """A trial whose result.json is cut short (or missing) and whose
    config.json is missing: no file names its task, and the overview put it
    under a task ``?``, never saying why. Harbor names a trial's folder after
    its task's (``<task>__<7 characters>``): it is counted there, and a note
    says what could not be read, as ``test JOB`` says it."""
    demo = task()
    job = make_job(
        runs / "jobs" / "j",
        {n: dict(task=demo, **PASSED) for n in ("demo__ok", "demo__cut", "demo__bare")},
    )
    (job / "demo__cut" / "result.json").write_text('{"task_name": "de')
    (job / "demo__bare" / "result.json").unlink()
    for name in ("demo__cut", "demo__bare"):
        (job / name / "config.json").unlink()
    done = run_tool(env, "run", job, cwd=tmp_path)
    no_traceback(done)
    lines = done.stdout.splitlines()
    tasks = lines[lines.index("task  trials  passed  mean   errors") + 1 :]
    assert tasks[0].split() == ["demo", "3", "1", "1.000", "0"], done.stdout  # no task "?"
    assert (
        "note: demo__cut: result.json is cut short: Harbor was stopped while writing it; config.json is missing: "
        "its task is named by the trial's folder"
    ) in lines, done.stdout
    bare = "note: demo__bare: result.json is missing; config.json is missing: its task is named by the trial's folder"
    assert bare in lines, done.stdout
    data = json.loads(run_tool(env, "run", "--json", job, cwd=tmp_path).stdout)
    assert {row["task"] for row in data["job"]["trial_rows"]} == {"demo"}


def test_a_trial_whose_result_json_is_no_file_of_harbors_says_why_on_every_face(task, runs, env, tmp_path):
    """A trial's result.json a link (to /etc/passwd), a FIFO, bigger than the
    tool reads or nested past its bound: ``run JOB``, ``compare`` and the TUI's
    overview listed it ``? cannot be read`` or ``· not finished`` and said
    nowhere why (only ``run JOB --json``'s ``problem``), so a link was never
    said to be one. Each says why in a note; one Harbor was stopped in (its
    result.json missing or cut short) is the usual not finished, and no note."""
    demo = task()
    names = ("demo__ok", "demo__link", "demo__fifo", "demo__huge", "demo__deep", "demo__cut", "demo__gone")
    job = make_job(runs / "jobs" / "j", {n: dict(task=demo, **PASSED) for n in names})
    (job / "demo__link" / "result.json").unlink()
    (job / "demo__link" / "result.json").symlink_to("/etc/passwd")
    (job / "demo__fifo" / "result.json").unlink()
    os.mkfifo(job / "demo__fifo" / "result.json")
    with (job / "demo__huge" / "result.json").open("r+b") as big:
        big.truncate(1 << 30)  # sparse: 1 GB that takes no disk
    (job / "demo__deep" / "result.json").write_text("[" * 100_000 + "]" * 100_000)
    (job / "demo__cut" / "result.json").write_text('{"task_name": "de')
    (job / "demo__gone" / "result.json").unlink()
    said = {
        "demo__link: result.json is a link to /etc/passwd: not read here",
        "demo__fifo: result.json is a FIFO (a named pipe), not a regular file",
        "demo__huge: result.json is 1,024 MB: more than the 16 MB this tool reads: not a file Harbor writes",
        "demo__deep: result.json nests more than 200 levels deep: not a file Harbor writes",
    }
    done = run_tool(env, "run", job, cwd=tmp_path)
    no_traceback(done)
    notes = {line.removeprefix("note: ") for line in done.stdout.splitlines() if line.startswith("note: ")}
    assert notes == said, done.stdout
    compared = run_tool(env, "compare", job, job, cwd=tmp_path)
    assert {f"note: A: {note}" for note in said} <= set(compared.stdout.splitlines()), compared.stdout
    data = json.loads(run_tool(env, "compare", "--json", job, job, cwd=tmp_path).stdout)
    assert set(data["a"]["problems"]) == said
    # the TUI's overview reads its notes through trial_rows, as it lists the folder
    folders, listed = sub_folders(job)
    list(trial_rows(folders, listed))
    assert set(listed) == said


def test_a_trial_named_by_its_folder_counts_under_the_name_its_tasks_other_trials_recorded(task, runs, env, tmp_path):
    """The task's task.toml says ``[task] name = "org/demo"``, which Harbor
    records in result.json; a trial whose result.json and config.json cannot
    be read is named by its folder, ``demo``: the overview had two tasks,
    ``org/demo`` and ``demo``, for one. Its folder is named after the task's
    folder, as the other trials' are: it counts under the name they recorded,
    read at once (``run JOB``) or trial by trial, the unreadable one first (the TUI)."""
    demo = task()
    job = make_job(runs / "jobs" / "j", {n: dict(task=demo, **PASSED) for n in ("demo__cut", "demo__ok", "demo__ok2")})
    for name in ("demo__ok", "demo__ok2"):
        result = job / name / "result.json"
        result.write_text(json.dumps(dict(json.loads(result.read_text()), task_name="org/demo")))
    (job / "demo__cut" / "result.json").write_text('{"task_name": "org/de')
    (job / "demo__cut" / "config.json").unlink()
    done = run_tool(env, "run", job, cwd=tmp_path)
    no_traceback(done)
    lines = done.stdout.splitlines()
    tasks = lines[lines.index("task      trials  passed  mean   errors") + 1 :]
    assert tasks[0].split() == ["org/demo", "3", "2", "1.000", "0"], done.stdout
    assert not tasks[1].startswith("demo "), done.stdout
    one_by_one = JobOverview()
    for row in trial_rows(sorted(p for p in job.iterdir() if p.is_dir())):
        one_by_one.add([row])
    assert list(one_by_one.tasks) == ["org/demo"] and one_by_one.tasks["org/demo"].trials == 3
    # A second task of that folder name (another dataset's) recorded too: the unreadable trial could be either.
    other = replace(one_by_one.rows[-1], name="demo__x", task="acme/demo", task_config='{"path": "acme/demo"}')
    one_by_one.add([other])
    assert sorted(one_by_one.tasks) == ["acme/demo", "demo", "org/demo"]
    assert one_by_one.tasks["demo"].trials == 1


def test_run_on_a_jobs_folder_says_each_folder_it_leaves_out(task, runs, env, tmp_path):
    """A link to a job (never followed) and a folder that is no job: ``test
    JOBS`` notes each, ``run JOBS`` listed the jobs without a word of them."""
    demo = task()
    make_job(runs / "jobs" / "j", {"demo__ok": dict(task=demo, **PASSED)})
    other = make_job(tmp_path / "x" / "jobs" / "other", {"demo__x": dict(task=demo, **PASSED)})
    (runs / "jobs" / "linked").symlink_to(other)
    (runs / "jobs" / "scratch").mkdir()
    done = run_tool(env, "run", runs / "jobs", cwd=tmp_path)
    no_traceback(done)
    lines = done.stdout.splitlines()
    assert "note: linked is a link to x/jobs/other: not read here" in lines, done.stdout  # as run says paths
    assert "note: scratch: not a job folder (no job.log): left out" in lines, done.stdout
    data = json.loads(run_tool(env, "run", "--json", runs / "jobs", cwd=tmp_path).stdout)
    assert data["problems"] == [
        f"linked is a link to {other}: not read here",
        "scratch: not a job folder (no job.log): left out",
    ]


def test_run_job_of_one_trial_says_each_folder_of_the_job_it_leaves_out(task, runs, env, tmp_path):
    """A job of one trial folder, a link to another trial and a stray
    folder: ``run JOB`` replays the lone trial, and said nothing of the two
    folders it left out, which ``test JOB`` and the job's overview note."""
    demo = task()
    job = make_job(runs / "jobs" / "j", {"demo__ok": dict(task=demo, **PASSED)})
    other = make_job(tmp_path / "x" / "jobs" / "other", {"demo__x": dict(task=demo, **PASSED)})
    (job / "demo__linked").symlink_to(other / "demo__x")
    (job / "scratch").mkdir()
    done = run_tool(env, "run", job, "--stand-in", "empty", "--python", PY, cwd=tmp_path)
    no_traceback(done)
    lines = [line.strip() for line in done.stdout.splitlines()]
    assert "note: job j: demo__linked is a link to x/jobs/other/demo__x: not read here" in lines, done.stdout
    assert any(line.startswith("note: job j: scratch: not a trial folder") for line in lines), done.stdout
    data = json.loads(run_tool(env, "run", "--json", job, "--stand-in", "empty", "--python", PY, cwd=tmp_path).stdout)
    assert f"job j: demo__linked is a link to {other / 'demo__x'}: not read here" in data["trial"]["notes"]


def test_run_job_says_a_job_harbor_has_not_ended_as_the_tui_does(real, env, tmp_path):
    """A job without its result.json (Harbor still running it, or stopped)
    and a trial not finished: the TUI's overview says ``still running, or
    stopped: ...``, but ``run JOB`` gave the same figures as for a job that
    ended, and ``--json`` had no field saying it."""
    job = copy_job_files(real, tmp_path / "jobs" / "running")
    (job / "result.json").unlink()
    copy_trial(real, job, "hello-file__pass001")
    second = copy_trial(real, job, "hello-file__pass002")
    (second / "result.json").unlink()
    done = run_tool(env, "run", job, cwd=tmp_path)
    no_traceback(done)
    said = "still running, or stopped: the job has no result.json yet; 1 trial not finished · this is the job as read"
    assert said in done.stdout, done.stdout
    data = json.loads(run_tool(env, "run", job, "--json", cwd=tmp_path).stdout)
    assert data["job"]["still_running"] == "the job has no result.json yet; 1 trial not finished"
    # Harbor ends the trial, then the job
    shutil.rmtree(second)
    copy_trial(real, job, "hello-file__pass002")
    shutil.copy2(real / "jobs" / "oracle-pass" / "result.json", job / "result.json")
    data = json.loads(run_tool(env, "run", job, "--json", cwd=tmp_path).stdout)
    assert data["job"]["still_running"] is None
    assert "still running" not in run_tool(env, "run", job, cwd=tmp_path).stdout


def test_a_mean_whose_sum_passes_the_largest_float_is_said_no_number(task, runs, env, tmp_path):
    """Trials rewarded 1e308 and -1e308 (rewards Harbor accepts: finite
    floats): Harbor 0.26's Mean, ``sum(values) / len(values)``, passes the
    largest float on the way and gives inf, which its result.json records as
    ``null`` (pydantic writes no infinity). run JOB, the task table and --json
    said ``mean inf`` as if it were Harbor's figure, and compare's B - A
    ``+nan``."""
    demo = task()
    rewards = {"demo__a": 1e308, "demo__b": 1e308, "demo__c": -1e308, "demo__d": -1e308}
    job = make_job(runs / "jobs" / "j", {name: dict(task=demo, rewards={"reward": r}) for name, r in rewards.items()})
    done = run_tool(env, "run", job, cwd=tmp_path)
    no_traceback(done)
    said = "no number (Harbor's sum overflows to inf; its result.json records null)"
    assert f"oracle__adhoc: mean {said} over 4 trials" in done.stdout, done.stdout
    task_row = next(line for line in done.stdout.splitlines() if line.startswith(demo.name))
    assert said in task_row, done.stdout
    data = strict_json(run_tool(env, "run", "--json", job, cwd=tmp_path).stdout)["job"]
    assert list(data["mean_errors"].values()) == [{"mean": "inf"}], data["mean_errors"]
    assert data["tasks"][0]["mean_errors"] == {"reward": "inf"}, data["tasks"][0]
    shutil.copytree(job, runs / "jobs" / "k")
    compared = run_tool(env, "compare", job, runs / "jobs" / "k", cwd=tmp_path)
    no_traceback(compared)
    assert "nan" not in compared.stdout and said in compared.stdout, compared.stdout
    both = strict_json(run_tool(env, "compare", "--json", job, runs / "jobs" / "k", cwd=tmp_path).stdout)
    assert both["tasks"][0]["difference"] is None and both["tasks"][0]["differences"] == {}, both["tasks"][0]


def test_a_float_reward_of_hundreds_of_digits_takes_no_screenful(task, runs, env, tmp_path):
    """A trial rewarded -1e308 (a finite float, which Harbor accepts): its row
    in run JOB's trials table wrote all 309 digits of it with ``.1f`` (a
    401-digit integer is written 1.000e+400 already)."""
    demo = task()
    job = make_job(
        runs / "jobs" / "j",
        {"demo__a": dict(task=demo, rewards={"reward": -1e308}), "demo__b": dict(task=demo, rewards={"reward": 2.0})},
    )
    done = run_tool(env, "run", job, cwd=tmp_path)
    no_traceback(done)
    trial_row = next(line for line in done.stdout.splitlines() if line.startswith("demo__a"))
    assert "-1.000e+308" in trial_row and len(trial_row) < 120, trial_row


def test_why_a_mean_is_no_number_is_said_only_when_true_and_apart_from_the_figures_around_it(task, runs, env, tmp_path):
    """A sum of finite floats overflows to inf, never to nan: a NaN written in
    a trial's result.json (another writer's: Harbor writes null) read "no
    number: Harbor's sum overflows to nan". And with several keys the line
    read "reward no number: Harbor's sum overflows to inf, recorded null, x
    0.500": the reason's commas ran into the keys'."""
    demo, other = task("demo"), task("other")
    job = make_job(
        runs / "jobs" / "j",
        {
            "demo__a": dict(task=demo, rewards={"reward": float("nan")}),
            "other__a": dict(task=other, agent="nop", rewards={"reward": 1e308, "x": 1.0}),
            "other__b": dict(task=other, agent="nop", rewards={"reward": 1e308, "x": 0.0}),
        },
    )
    done = run_tool(env, "run", job, cwd=tmp_path)
    no_traceback(done)
    assert "overflows to nan" not in done.stdout, done.stdout
    assert "oracle__adhoc: mean no number (NaN) over 1 trial" in done.stdout, done.stdout
    overflow = "no number (Harbor's sum overflows to inf; its result.json records null)"
    assert f"nop__adhoc: reward {overflow}, x 0.500 over 2 trials" in done.stdout, done.stdout
    rows = {line.split()[0]: line for line in done.stdout.splitlines() if line.startswith(("demo ", "other "))}
    assert "no number (NaN)" in rows["demo"] and f"reward {overflow}, x 0.500" in rows["other"], done.stdout
    data = strict_json(run_tool(env, "run", "--json", job, cwd=tmp_path).stdout)["job"]
    assert data["mean_errors"] == {"nop__adhoc": {"reward": "inf"}, "oracle__adhoc": {"mean": "NaN"}}, data


def test_a_mean_is_summed_in_the_order_the_trials_finished_as_harbor_sums_it(task, runs, env, tmp_path):
    """Trials a, b, c, d rewarded 1e308, 1e308, -1e308, -1e308 that finished
    in the order a, c, b, d: Harbor adds each trial's rewards as it ends
    (``_live_rewards``), 1e308 - 1e308 + 1e308 - 1e308, and records 0.0. Summed
    in the order the folders were read, the sum overflowed and the mean was
    said no number, where Harbor has one."""
    demo = task()
    rewards = {"demo__a": 1e308, "demo__b": 1e308, "demo__c": -1e308, "demo__d": -1e308}
    job = make_job(runs / "jobs" / "j", {name: dict(task=demo, rewards={"reward": r}) for name, r in rewards.items()})
    for minute, name in enumerate(("demo__a", "demo__c", "demo__b", "demo__d")):
        result = json.loads((job / name / "result.json").read_text())
        result["finished_at"] = f"2026-12-01T04:0{minute}:00.000000"
        (job / name / "result.json").write_text(json.dumps(result))
    done = run_tool(env, "run", job, cwd=tmp_path)
    no_traceback(done)
    assert "oracle__adhoc: mean 0.000 over 4 trials" in done.stdout, done.stdout
    data = strict_json(run_tool(env, "run", "--json", job, cwd=tmp_path).stdout)["job"]
    assert data["means"] == {"oracle__adhoc": {"mean": 0.0}} and data["mean_errors"] == {}, data
    assert data["tasks"][0]["mean"] == 0.0, data["tasks"]


def test_the_jobs_list_says_a_mean_harbor_recorded_as_null_is_no_number_as_the_overview_does(task, runs, env):
    """A job whose trials scored 1e308 twice: Harbor's sum overflows and its
    result.json records ``{"mean": null}``. The jobs list said ``-``, as of a
    job with no valid reward (no metric at all), while its overview says no number."""
    demo = task()
    job = make_job(runs / "jobs" / "big", {f"demo__{i}": dict(task=demo, rewards={"reward": 1e308}) for i in "ab"})
    make_job(
        runs / "jobs" / "none",
        {"demo__c": dict(task=demo, exception=harbor_exception("RewardFileNotFoundError", "no reward"))},
    )
    result = json.loads((job / "result.json").read_text())
    result["stats"]["evals"]["oracle__adhoc"]["metrics"] = [{"mean": None}]  # pydantic writes inf as null
    (job / "result.json").write_text(json.dumps(result))
    by_name = {summary.name: summary for summary in read_jobs(runs / "jobs")}
    assert by_name["big"].mean_words == "no number (its result.json records null)"
    assert by_name["none"].mean_words == "-"
    done = run_tool(env, "run", runs / "jobs", cwd=runs)
    line = next(line for line in done.stdout.splitlines() if line.startswith("big"))
    assert "no number (its result.json records null)" in line, done.stdout
    data = strict_json(run_tool(env, "run", "--json", runs / "jobs", cwd=runs).stdout)
    big = next(job for job in data["jobs"] if job["name"] == "big")
    assert big["means"] == {"oracle__adhoc": {"mean": None}}, big


def test_the_jobs_list_says_a_mean_of_nan_or_infinity_in_a_jobs_result_json_is_no_number(task, runs, env):
    """A job's result.json whose mean is ``NaN`` or ``1e999`` (another
    writer's: pydantic writes null for both): the jobs list said ``nan`` and
    ``inf`` as if figures, where the job's overview says no number, and
    ``--json``'s ``means`` held the strings ``"nan"`` and ``"inf"`` where a
    number or null is documented."""
    demo = task()
    for name, figure in (("nan", "NaN"), ("inf", "1e999")):
        job = make_job(runs / "jobs" / name, {"demo__a": dict(task=demo, **PASSED)})
        text = (job / "result.json").read_text()
        assert '"mean": 1.0' in text
        (job / "result.json").write_text(text.replace('"mean": 1.0', f'"mean": {figure}'))
    done = run_tool(env, "run", runs / "jobs", cwd=runs)
    no_traceback(done)
    rows = {line.split()[0]: line for line in done.stdout.splitlines()[2:] if line.startswith(("nan ", "inf "))}
    assert "no number (NaN)" in rows["nan"] and "no number (Infinity)" in rows["inf"], done.stdout
    data = strict_json(run_tool(env, "run", "--json", runs / "jobs", cwd=runs).stdout)
    assert [job["means"] for job in data["jobs"]] == [{"oracle__adhoc": {"mean": None}}] * 2, data["jobs"]


def test_a_float_and_an_integer_past_18_digits_are_written_alike(task, runs, env, tmp_path):
    """A trial rewarded ``{"a": -1e308, "b": 10**400}``: the float read
    ``-1e+308`` and the integer ``1.000e+400`` side by side, two ways of
    writing one kind of number (and the bound was written twice, ``1e18``
    and ``10**18``)."""
    demo = task()
    trials = {"demo__a": dict(task=demo, rewards={"a": -1e308, "b": 10**400}), "demo__b": dict(task=demo, rewards={})}
    job = make_job(runs / "jobs" / "j", trials)
    done = run_tool(env, "run", job, cwd=tmp_path)
    no_traceback(done)
    trial_row = next(line for line in done.stdout.splitlines() if line.startswith("demo__a"))
    assert "a=-1.000e+308 b=1.000e+400" in trial_row, trial_row


def test_what_the_mean_would_be_counting_trials_left_out_as_0_is_never_said_inf(task, runs, env, tmp_path):
    """Trials rewarded 1e308 twice and one with no reward: after the mean
    said no number, the next line read "counting them as 0 the mean would be
    inf", a figure no mean is (the sum overflows either way)."""
    demo = task()
    trials = {f"demo__{i}": dict(task=demo, rewards={"reward": 1e308}) for i in "ab"}
    trials["demo__c"] = dict(task=demo, exception=harbor_exception("RewardFileNotFoundError", "no reward"))
    job = make_job(runs / "jobs" / "j", trials)
    done = run_tool(env, "run", job, cwd=tmp_path)
    no_traceback(done)
    line = next(line for line in done.stdout.splitlines() if "leaves out" in line)
    assert line.strip() == "Harbor's mean leaves out 1 trial with no valid reward (1 RewardFileNotFoundError)", line


def test_a_mean_of_hundreds_of_digits_takes_no_screenful(task, runs, env, tmp_path):
    """Trials rewarded 1e308 and 0.5: their mean, 5e307 (a number: the sum
    does not overflow), was written ``.3f``, 312 characters in run JOB's
    reward line and task table, compare's job line, A mean and B - A."""
    demo = task()
    a = make_job(
        runs / "jobs" / "a",
        {"demo__a": dict(task=demo, rewards={"reward": 1e308}), "demo__b": dict(task=demo, rewards={"reward": 0.5})},
    )
    b = make_job(runs / "jobs" / "b", {"demo__c": dict(task=demo, rewards={"reward": 1.0})})
    done = run_tool(env, "run", a, cwd=tmp_path)
    no_traceback(done)
    assert "oracle__adhoc: mean 5.000e+307 over 2 trials" in done.stdout, done.stdout
    assert max(map(len, done.stdout.splitlines())) < 120, done.stdout
    compared = run_tool(env, "compare", a, b, cwd=tmp_path)
    no_traceback(compared)
    assert "Harbor's mean 5.000e+307" in compared.stdout, compared.stdout
    row = next(line for line in compared.stdout.splitlines() if line.startswith(demo.name)).split()
    assert row[1:6] == ["1/2", "5.000e+307", "1/1", "1.000", "-5.000e+307"], row


def test_a_trial_dated_year_1_to_9999_shows_no_duration_in_the_overview(real, env, tmp_path):
    """A trial whose result.json runs from year 1 to 9999: the overview's duration column said
    ``315537897599.0 s`` (and ``-1.0 s`` for one that finished before it started), and
    --json's ``duration_s`` the same. No clock measured either: the duration is not given."""
    job = copy_job_files(real, tmp_path / "jobs" / "job")
    dated = {
        "hello-file__year0001": ("0001-01-01T00:00:00", "9999-12-31T23:59:59"),
        "hello-file__backward": ("2026-12-01T03:36:18", "2026-12-01T03:36:17"),
    }

    def dates(started: str, finished: str):
        def edit(result: dict) -> None:
            result["started_at"], result["finished_at"] = started, finished

        return edit

    for name, (started, finished) in dated.items():
        copy_trial(real, job, name, edit=dates(started, finished))
    done = run_tool(env, "run", job, cwd=tmp_path)
    no_traceback(done)
    for name in dated:
        row = next(line for line in done.stdout.splitlines() if line.startswith(name)).split()
        assert row[-1] == "-", row
    rows = json.loads(run_tool(env, "run", job, "--json", cwd=tmp_path).stdout)["job"]["trial_rows"]
    assert {row["name"]: row["duration_s"] for row in rows} == dict.fromkeys(dated), rows


def test_the_command_a_job_suggests_is_the_one_the_user_typed(real, env, tmp_path):
    """``explain JOB`` (or ``watch JOB``) on a job of several trials, and on a folder of
    jobs: the overview's hint said ``replay one: verifier-tui run JOB --trial NAME`` and
    the list's ``see one job: verifier-tui run JOBS/JOB``, and so did ``--json``'s
    ``choose``: a replay, where the user asked for an explanation (or a watch). Each
    suggests the command typed, the path pasted back as one shell word."""
    import shlex

    jobs = tmp_path / "jobs"
    mixed_job(real, jobs / "my job")
    for command, verb in (("explain", "explain one"), ("watch", "watch one"), ("run", "replay one")):
        listed = run_tool(env, command, jobs, cwd=tmp_path)
        assert listed.returncode == 0, listed.stderr
        said = listed.stdout.splitlines()[-1]
        assert said.startswith("see one job: "), said
        assert shlex.split(said.split(": ", 1)[1]) == ["verifier-tui", command, "jobs/my job"], said
        overview = run_tool(env, command, jobs / "my job", cwd=tmp_path)
        assert overview.returncode == 0, overview.stderr
        line = next((line for line in overview.stdout.splitlines() if line.startswith(f"{verb}: ")), None)
        assert line is not None, overview.stdout
        words = shlex.split(line.removeprefix(f"{verb}: ").rsplit(" (", 1)[0])
        assert words == ["verifier-tui", command, "jobs/my job", "--trial", "NAME"], line
        for path in (jobs, jobs / "my job"):
            choose = json.loads(run_tool(env, command, path, "--json", cwd=tmp_path).stdout)["choose"]
            assert choose.startswith(f"verifier-tui {command} "), choose


def test_the_commands_the_job_lists_suggest_paste_back_as_typed(real, env, tmp_path):
    """A job folder named by someone else (`x; touch owned`, `$(id)`): the hint under the jobs list
    (`see one job: verifier-tui run jobs/x; touch owned`), the overview's `replay one:` and
    compare's and test's pointers printed the path bare, so the command a user pasted ran another."""
    import shlex

    jobs = tmp_path / "jobs"
    mixed_job(real, jobs / "x; touch $(id)")
    said = run_tool(env, "run", jobs, cwd=tmp_path).stdout.splitlines()[-1]
    assert said.startswith("see one job: "), said
    assert shlex.split(said.split(": ", 1)[1]) == ["verifier-tui", "run", "jobs/x; touch $(id)"], said
    overview = run_tool(env, "run", jobs / "x; touch $(id)", cwd=tmp_path).stdout
    line = next(line for line in overview.splitlines() if line.startswith("replay one: "))
    words = shlex.split(line.removeprefix("replay one: ").rsplit(" (", 1)[0])
    assert words[:3] == ["verifier-tui", "run", "jobs/x; touch $(id)"], line
    # ... from elsewhere, the job under the home folder: no ~ inside the quotes, where a shell keeps it
    said = run_tool(dict(env, HOME=str(tmp_path)), "run", jobs, cwd=Path("/")).stdout.splitlines()[-1]
    assert shlex.split(said.split(": ", 1)[1])[2] == str(jobs / "x; touch $(id)"), said
    # ... and a name that reads as an option, seen from its own folder
    (jobs / "x; touch $(id)").rename(jobs / "-x")
    said = run_tool(env, "run", ".", cwd=jobs).stdout.splitlines()[-1]
    assert shlex.split(said.split(": ", 1)[1])[2] == "./-x", said
    (jobs / "-x").rename(jobs / "x; touch $(id)")
    more = tmp_path / "more jobs; $(id)"
    mixed_job(real, more / "one")
    compared = run_tool(env, "compare", more, jobs / "x; touch $(id)", cwd=tmp_path)
    hint = compared.stderr.split("jobs in it (", 1)[1].rsplit(" lists them)", 1)[0]
    assert shlex.split(hint) == ["verifier-tui", "run", str(more)], compared.stderr


def test_a_task_name_of_another_kind_is_read_as_absent_as_the_trial_reads_it(real, env, tmp_path):
    """result.json's task_name is a string; a number or a list there listed the
    trial under a task named ``12345`` or ``[1, {'a': None}]`` in the job's
    overview, while the trial itself (read as absent) said task hello-file."""
    job = copy_job_files(real, tmp_path / "jobs" / "odd")
    copy_trial(real, job, "hello-file__aaaaaaa", edit=lambda r: r.update(task_name=12345))
    copy_trial(real, job, "hello-file__bbbbbbb", edit=lambda r: r.update(task_name=[1, {"a": None}]))
    assert {row.task for row in read_overview(job).rows} == {"hello-file"}
    done = run_tool(env, "run", job, cwd=tmp_path)
    no_traceback(done)
    assert "12345" not in done.stdout and "[1, " not in done.stdout, done.stdout
    for trial in ("hello-file__aaaaaaa", "hello-file__bbbbbbb"):
        assert "· task hello-file ·" in run_tool(env, "run", job / trial, cwd=tmp_path).stdout


def test_a_job_with_no_sandbox_to_replay_in_says_why_in_the_commands_words(real, env, tmp_path):
    """No sandbox to be had (VERIFIER_TUI_SANDBOX misspelt; likewise a probe that timed out): each of
    test JOB's trials said "could not be replayed: IsolationError: ...", a fault of the tool's own by
    its words, where run TRIAL and test TASK say the one line. test JOB now says that line once,
    before any trial, and exits 2, as they do."""
    done = run_tool(
        dict(env, VERIFIER_TUI_SANDBOX="bogus"), "test", "--json", real / "jobs" / "separate-mode", "--python", PY
    )
    no_traceback(done)
    assert (done.returncode, done.stdout) == (2, ""), done.stdout
    assert done.stderr == "verifier-tui: VERIFIER_TUI_SANDBOX='bogus': expected auto, namespace or copy\n"


def _running_job(runs: Path, task) -> Path:
    """A jobs folder whose job has no result.json yet (Harbor still running it, or stopped) but holds two
    trial folders, a folder that is no trial and a link to a trial folder (never followed)."""
    demo = task()
    job = make_job(runs / "jobs" / "running", {name: dict(task=demo, **PASSED) for name in ("demo__1", "demo__2")})
    (job / "result.json").unlink()
    (job / "stray").mkdir()
    (job / "linked").symlink_to(job / "demo__1")
    return runs / "jobs"


def test_the_jobs_list_counts_the_trial_folders_of_a_job_without_result_json(runs, task, env, tmp_path):
    """Its row said ``trials -`` though the job held trial folders: they are counted, as its overview finds them."""
    jobs = _running_job(runs, task)
    listed = run_tool(env, "run", jobs, cwd=tmp_path)
    no_traceback(listed)
    row = next(line for line in listed.stdout.splitlines() if line.startswith("running"))
    header = listed.stdout.splitlines()[1]
    assert row[header.index("trials") :].split()[0] == "2"
    # the line above the table said every row was as its result.json recorded it
    assert "or its trial folders counted where it has none" in listed.stdout.splitlines()[0]
    assert "no result.json" in row
    job = json.loads(run_tool(env, "run", "--json", jobs, cwd=tmp_path).stdout)["jobs"][0]
    assert (job["n_total_trials"], job["trial_folders"]) == (None, 2)


def test_a_file_beside_job_folders_is_that_file_not_the_folder_of_jobs(env, real, tmp_path):
    # A scratch folder holding a downloaded job and a verifier being tried: `run verifier.py` listed the
    # jobs and exited 0, so a CI step that ran the verifier passed without running it.
    scratch = tmp_path / "scratch"
    shutil.copytree(real / "jobs" / "oracle-pass", scratch / "oracle-pass")
    (scratch / "verifier.py").write_text("def verify(workspace):\n    return 0.25\n")
    (scratch / "notes.txt").write_text("")
    done = run_tool(env, "run", scratch / "verifier.py", "--python", PY, "--json")
    no_traceback(done)
    assert json.loads(done.stdout)["rewards"] == {"reward": 0.25}
    # nor a file of the user's that Harbor's job and trial files are named alike (a config of their own)
    for name in ("notes.txt", "config.json", "result.json"):
        (scratch / name).write_text("{}")
        done = run_tool(env, "run", scratch / name)
        assert (done.returncode, done.stdout) == (2, ""), (name, done.stdout)
        assert f"{name} is not a Python file" in done.stderr


@pytest.mark.parametrize("log", ["trial.log", "job.log"])
def test_a_file_beside_a_bare_harbor_log_is_that_file(env, real, tmp_path, log):
    # A scratch folder with a trial.log or job.log left in it (a log saved from a run): `run
    # scratch/verifier.py` opened the folder as a Harbor trial (exit 2) or a job of no trials (exit 0),
    # and the verifier never ran. Harbor writes more beside either log: a trial's config.json,
    # result.json, agent/ and verifier/ (models/trial/paths.py), a job's config.json, lock.json and
    # result.json before any trial starts (job.py).
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / log).write_text("a log kept from a run\n")
    (scratch / "verifier.py").write_text("def verify(workspace):\n    return 0.25\n")
    done = run_tool(env, "run", scratch / "verifier.py", "--python", PY, "--json")
    no_traceback(done)
    assert json.loads(done.stdout)["rewards"] == {"reward": 0.25}, done.stderr
    if log == "job.log":  # a result.json that is no job's (it has no n_total_trials) makes it no job either
        (scratch / "result.json").write_text('{"reward": 1.0}')
        done = run_tool(env, "run", scratch / "verifier.py", "--python", PY, "--json")
        assert json.loads(done.stdout)["rewards"] == {"reward": 0.25}, done.stderr
        (scratch / "result.json").unlink()
    # a real one's log still names its folder, as does a log with its config.json alone beside it
    job = real / "jobs" / "oracle-pass"
    real_one = next(path for path in job.iterdir() if path.is_dir()) if log == "trial.log" else job
    kind = log.removesuffix(".log")
    assert find_harbor_folder(real_one / log) == (kind, real_one, None)
    for name in (log, "config.json"):
        shutil.copy(real_one / name, scratch / name)
    assert find_harbor_folder(scratch / "verifier.py") == (kind, scratch, None)


def test_a_users_config_or_result_beside_downloaded_trials_is_that_file(env, real, tmp_path):
    # A scratch folder holding a downloaded trial and a config.json of the user's: `run scratch/config.json`
    # opened the trial and `test` replayed it as a job. Harbor's config.json and job.log would have made
    # the folder a job; its result.json beside trials is a job's totals, never a trial's or `{}`.
    scratch = tmp_path / "scratch"
    trial = next(path for path in (real / "jobs" / "oracle-pass").iterdir() if path.is_dir())
    shutil.copytree(trial, scratch / trial.name)
    (scratch / "config.json").write_text("{}")
    (scratch / "result.json").write_text((trial / "result.json").read_text())
    for name in ("config.json", "result.json"):
        done = run_tool(env, "run", scratch / name)
        no_traceback(done)
        assert (done.returncode, done.stdout) == (2, ""), (name, done.stdout)
        assert f"{name} is not a Python file" in done.stderr


def test_a_harbor_file_of_a_copied_job_without_its_log_names_the_job(env, real, tmp_path):
    # A job copied without job.log and config.json (its result.json, lock.json and trials kept): `run
    # JOB/result.json` said "not a Python file", exit 2, where it showed the job. Harbor's own file
    # names in a job (job.py, models/trial/paths.py) name their folder; another file does not.
    job = tmp_path / "copied"
    shutil.copytree(real / "jobs" / "oracle-pass", job)
    for gone in ("job.log", "config.json"):
        (job / gone).unlink()
    trial = next(path for path in job.iterdir() if path.is_dir())
    shutil.copytree(trial, job / f"{trial.name}-2")  # two trials: the job's overview, no replay
    (job / "notes.txt").write_text("")
    (job / "analysis.json").write_text("{}")  # `harbor analyze`'s, in the job folder
    for name in ("result.json", "lock.json", "analysis.json"):
        done = run_tool(env, "run", "--json", job / name, cwd=tmp_path)
        no_traceback(done)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["job"]["trials"] == 2
    done = run_tool(env, "run", job / "notes.txt")
    assert done.returncode == 2 and "notes.txt is not a Python file" in done.stderr, done.stderr
