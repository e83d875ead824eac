"""``verifier-tui compare JOB_A JOB_B``: two jobs on the same tasks, through
the real command, on job folders built as Harbor 0.26.0 writes them and on
genuine ones."""

from __future__ import annotations

import json

import pytest

from tests.helpers.commands import documented_fields, no_traceback, run_tool
from tests.helpers.harbor import HARBOR_REAL, PASSED, harbor_exception, make_job

TIMEOUT = harbor_exception("VerifierTimeoutError", "Verifier execution timed out after 5.0 seconds")


@pytest.fixture
def two_jobs(runs, task):
    """A: alpha passed twice, beta scored 0, gamma only in A.
    B: alpha passed once then 0.0, beta passed, delta only in B, gamma absent."""
    alpha, beta, gamma, delta = (task(name) for name in ("alpha", "beta", "gamma", "delta"))
    a = make_job(
        runs / "jobs" / "model-a",
        {
            "alpha__a1": dict(task=alpha, rewards={"reward": 1.0}),
            "alpha__a2": dict(task=alpha, rewards={"reward": 1.0}),
            "beta__a1": dict(task=beta, rewards={"reward": 0.0}),
            "gamma__a1": dict(task=gamma, rewards={"reward": 1.0}),
        },
    )
    b = make_job(
        runs / "jobs" / "model-b",
        {
            "alpha__b1": dict(task=alpha, rewards={"reward": 1.0}),
            "alpha__b2": dict(task=alpha, rewards={"reward": 0.0}),
            "beta__b1": dict(task=beta, rewards={"reward": 1.0}),
            "delta__b1": dict(task=delta, exception=TIMEOUT),
        },
    )
    return a, b


def compare_lines(env, jobs, cwd) -> list[str]:
    """``compare A B``'s lines, once it ended well."""
    done = run_tool(env, "compare", *jobs, cwd=cwd)
    no_traceback(done)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_each_task_side_by_side_with_the_difference_and_the_flips(env, two_jobs, tmp_path):
    lines = compare_lines(env, two_jobs, tmp_path)
    assert lines[0] == "A  job model-a · 4 trials · oracle · Harbor's mean 0.750"
    assert lines[1] == "B  job model-b · 4 trials · oracle · Harbor's mean 0.667"
    table = {line.split()[0]: line.split() for line in lines[3:8]}
    assert table["task"] == ["task", "A", "passed", "A", "mean", "B", "passed", "B", "mean", "B", "-", "A", "flipped"]
    assert table["alpha"] == ["alpha", "2/2", "1.000", "1/2", "0.500", "-0.500", "1"]
    assert table["beta"] == ["beta", "0/1", "0.000", "1/1", "1.000", "+1.000", "1"]
    assert table["gamma"] == ["gamma", "1/1", "1.000", "-", "-", "-"]  # B never ran it
    assert table["delta"] == ["delta", "-", "-", "0/1", "-", "-"]  # no valid reward: no mean
    assert "only A passes: alpha, gamma" in lines
    assert "only B passes: beta" in lines
    flipped = lines[lines.index("trials whose outcome flipped, A → B (2; paired in the order they started):") + 1 :]
    assert flipped == [
        "  alpha: alpha__a2 ✓ passed → alpha__b2 · reward below 1 (0.0)",
        "  beta: beta__a1 · reward below 1 (0.0) → beta__b1 ✓ passed",
    ]


def test_compare_json_is_documented_and_names_every_flip(env, two_jobs, tmp_path):
    done = run_tool(env, "compare", "--json", *two_jobs, cwd=tmp_path)
    data = json.loads(done.stdout)
    assert documented_fields("## The compare document", "## The watch stream") == set(data)
    assert data["a"]["name"] == "model-a" and data["b"]["trials"] == 4
    tasks = {t["task"]: t for t in data["tasks"]}
    assert tasks["alpha"]["difference"] == pytest.approx(-0.5)
    assert tasks["gamma"]["b"] is None and tasks["gamma"]["difference"] is None
    assert [(f["a"]["name"], f["b"]["name"]) for f in tasks["alpha"]["flipped"]] == [("alpha__a2", "alpha__b2")]
    assert tasks["delta"]["b"]["errors"] == 1
    assert data["only_a_passes"] == ["alpha", "gamma"] and data["only_b_passes"] == ["beta"]
    assert data["flipped"] == 2 and data["note"] is None
    # Each member of the nested objects is named in its row of the doc.
    from tests.helpers.commands import JSON_DOC

    rows = {
        line.split("`")[1]: line
        for line in JSON_DOC.read_text(encoding="utf-8")
        .split("## The compare document")[1]
        .split("\n## ")[0]
        .splitlines()
        if line.startswith("| `")
    }
    alpha = tasks["alpha"]
    nested = [("a", data["a"]), ("tasks", alpha), ("tasks", alpha["a"]), ("tasks", alpha["flipped"][0]["a"])]
    assert [(row, key) for row, part in nested for key in part if f"`{key}`" not in rows[row]] == []


@pytest.mark.parametrize(
    ("which", "said"),
    [
        ("jobs", "is a folder of jobs: compare two of the jobs in it"),
        ("trial", "is one trial: compare takes two job folders"),
        ("task", "is not a Harbor job folder"),
        ("missing", "does not exist"),
        ("empty", "an empty path: compare takes two job folders"),
    ],
)
def test_a_path_that_is_not_a_job_gets_one_line_and_exit_2(env, two_jobs, runs, which, said):
    path = {
        "jobs": runs / "jobs",
        "trial": two_jobs[0] / "alpha__a1",
        "task": runs / "tasks" / "alpha",
        "missing": runs / "nowhere",
        "empty": "",
    }[which]
    done = run_tool(env, "compare", two_jobs[0], path)
    no_traceback(done)
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and said in done.stderr


@pytest.mark.skipif(HARBOR_REAL is None, reason="needs ../shared/harbor-0.26")
def test_two_genuine_jobs_a_failed_agent_against_the_oracle(env):
    assert HARBOR_REAL is not None
    jobs = HARBOR_REAL / "jobs"
    done = run_tool(env, "compare", jobs / "nop-fail", jobs / "oracle-pass")
    assert done.returncode == 0
    assert "only B passes: hello-file" in done.stdout
    assert "  hello-file: hello-file__C4SunEc ✗ RewardFileNotFoundError → hello-file__g3LxX6i ✓ passed" in done.stdout


def test_two_jobs_with_no_task_in_common_or_one_job_twice_are_said_so(env, runs, task, tmp_path):
    gamma, delta = task("gamma"), task("delta")
    a = make_job(runs / "jobs" / "a", {"gamma__a1": dict(task=gamma, rewards={"reward": 1.0})})
    b = make_job(runs / "jobs" / "b", {"delta__b1": dict(task=delta, rewards={"reward": 1.0})})
    apart = run_tool(env, "compare", a, b, cwd=tmp_path)
    assert apart.returncode == 0
    assert apart.stdout.splitlines()[-1] == (
        "note: the two jobs ran no task in common: each task is in one job only, so none is compared"
    )
    same = run_tool(env, "compare", a, a, cwd=tmp_path)
    assert same.stdout.splitlines()[-1] == "note: A and B are the same job folder: nothing can differ"
    # --json says it too: a reader sees why nothing differs, as the text's reader does.
    assert json.loads(run_tool(env, "compare", "--json", a, a, cwd=tmp_path).stdout)["note"] == (
        "A and B are the same job folder: nothing can differ"
    )
    assert json.loads(run_tool(env, "compare", "--json", a, b, cwd=tmp_path).stdout)["note"].startswith(
        "the two jobs ran no task in common"
    )


def test_a_job_whose_trials_are_all_left_out_is_not_said_to_have_run_other_tasks(env, runs, task, tmp_path):
    """Job A's one trial folder replaced by a link (never followed): the
    comparison ended "the two jobs ran no task in common", though both ran
    alpha; A's trials were not read, which is why nothing is compared."""
    alpha = task("alpha")
    a = make_job(runs / "jobs" / "a", {"alpha__a1": dict(task=alpha, rewards={"reward": 1.0})})
    b = make_job(runs / "jobs" / "b", {"alpha__b1": dict(task=alpha, rewards={"reward": 1.0})})
    elsewhere = tmp_path / "elsewhere"
    (a / "alpha__a1").rename(elsewhere)
    (a / "alpha__a1").symlink_to(elsewhere)
    done = run_tool(env, "compare", a, b, cwd=tmp_path)
    assert done.returncode == 0
    assert "ran no task in common" not in done.stdout, done.stdout
    said = "note: no trial of A was read (each folder left out is noted): no task is compared"
    assert done.stdout.splitlines()[-1] == said, done.stdout
    assert json.loads(run_tool(env, "compare", "--json", a, b, cwd=tmp_path).stdout)["note"] == said[len("note: ") :]


def test_a_job_of_no_trial_folder_is_said_so(env, runs, task, tmp_path):
    """Job A holds no trial folder at all: the comparison said "no trial of A
    was read (each folder left out is noted)", and no note followed, for
    nothing was left out. It now says A holds no trial folder."""
    alpha = task("alpha")
    a = make_job(runs / "jobs" / "a", {})
    b = make_job(runs / "jobs" / "b", {"alpha__b1": dict(task=alpha, rewards={"reward": 1.0})})
    done = run_tool(env, "compare", a, b, cwd=tmp_path)
    assert done.returncode == 0
    said = "note: A holds no trial folder: no task is compared"
    assert done.stdout.splitlines()[-1] == said, done.stdout
    assert "left out" not in done.stdout
    assert json.loads(run_tool(env, "compare", "--json", a, b, cwd=tmp_path).stdout)["note"] == said[len("note: ") :]


def test_a_job_that_cannot_be_listed_is_named_by_its_side_and_path(two_jobs, monkeypatch, capsys):
    """compare of a job that cannot be listed (a folder of mode 0o111 to a user
    not root) said ``PATH: Permission denied``, where the TUI said ``job NAME
    cannot be listed: ...`` and the job overview ``the job folder cannot be
    listed: ...``: one wording, naming the side and the path."""
    from verifier_tui.cli import main

    a, b = two_jobs

    def unlisted(*folders, **_options):
        raise PermissionError(13, "Permission denied", str(folders[1]))

    monkeypatch.setattr("verifier_tui.commands.compare.read_compared", unlisted)
    monkeypatch.chdir(b.parent)
    assert main(["compare", str(a), str(b)]) == 2
    said = capsys.readouterr().err.strip()
    assert said == f"verifier-tui: job B {b.name} cannot be listed: Permission denied", said


@pytest.fixture
def keyed_jobs(runs, task):
    """alpha: A scored keys a and b, B the one key reward (the hostile tester's
    jobs); beta: both scored a and b, B higher on b only."""
    alpha, beta = task("alpha"), task("beta")
    a = make_job(
        runs / "jobs" / "keys-a",
        {
            "alpha__a1": dict(task=alpha, rewards={"a": 1, "b": 0.5}),
            "beta__a1": dict(task=beta, rewards={"a": 1, "b": 0.0}),
        },
    )
    b = make_job(
        runs / "jobs" / "keys-b",
        {
            **{f"alpha__b{i}": dict(task=alpha, rewards={"reward": 1}) for i in range(4)},
            "beta__b1": dict(task=beta, rewards={"a": 1, "b": 1.0}),
        },
    )
    return a, b


def test_several_or_different_reward_keys_show_each_keys_mean_and_no_false_difference(env, keyed_jobs, tmp_path):
    lines = compare_lines(env, keyed_jobs, tmp_path)
    rows = {line.split("  ")[0]: [c.strip() for c in line.split("  ") if c.strip()] for line in lines[3:6]}
    # Different keys on each side: each mean named, no difference (it read +0.000, the first key's mean against B's).
    assert rows["alpha"] == ["alpha", "0/1", "a 1.000, b 0.500", "4/4", "reward 1.000", "-", "1"]
    assert rows["beta"] == ["beta", "0/1", "a 1.000, b 0.000", "1/1", "a 1.000, b 1.000", "a +0.000, b +1.000", "1"]
    assert lines[6] == (
        "note: a mean shown with its reward key is that key's (a job scored the task on several keys, "
        "or the two jobs on different ones); B - A is given only for a key both jobs have"
    )


def test_compare_json_carries_each_keys_mean_and_difference(env, keyed_jobs, tmp_path):
    data = json.loads(run_tool(env, "compare", "--json", *keyed_jobs, cwd=tmp_path).stdout)
    tasks = {t["task"]: t for t in data["tasks"]}
    alpha, beta = tasks["alpha"], tasks["beta"]
    assert alpha["a"]["means"] == {"a": 1.0, "b": 0.5} and alpha["a"]["mean"] is None
    assert alpha["b"]["means"] == {"reward": 1.0} and alpha["b"]["mean"] == 1.0
    assert alpha["difference"] is None and alpha["differences"] == {}
    assert beta["differences"] == {"a": 0.0, "b": 1.0} and beta["difference"] is None


def test_a_reward_that_is_no_number_is_said_so_and_counted_as_harbor_reads_it(env, runs, task, tmp_path):
    """Harbor's verifier refuses such a value; resuming a job, Harbor reads "1.0" as 1.0 (pydantic's lax
    float) and skips a trial whose value is {"x": 1}: never a reward below 1, never a 0 in the mean."""
    alpha, beta = task("alpha"), task("beta")
    a = make_job(
        runs / "jobs" / "strings",
        {"alpha__a1": dict(task=alpha, rewards={"reward": 1}), "beta__a1": dict(task=beta, rewards={"reward": 1})},
    )
    for trial, value in (("alpha__a1", "1.0"), ("beta__a1", {"x": 1})):  # as another writer left them
        result = json.loads((a / trial / "result.json").read_text())
        result["verifier_result"]["rewards"] = {"reward": value}
        (a / trial / "result.json").write_text(json.dumps(result))
    b = make_job(
        runs / "jobs" / "numbers",
        {"alpha__b1": dict(task=alpha, rewards={"reward": 1}), "beta__b1": dict(task=beta, rewards={"reward": 1})},
    )
    done = run_tool(env, "compare", a, b, cwd=tmp_path)
    no_traceback(done)
    lines = done.stdout.splitlines()
    assert lines[0] == "A  job strings · 2 trials · oracle · Harbor's mean 1.000"
    table = {line.split()[0]: line.split() for line in lines[3:6]}
    assert table["alpha"] == ["alpha", "0/1", "1.000", "1/1", "1.000", "+0.000", "1"]
    assert table["beta"] == ["beta", "0/1", "-", "1/1", "1.000", "-", "1"]
    assert '  alpha: alpha__a1 ✗ reward not a number ("1.0") → alpha__b1 ✓ passed' in lines
    assert '  beta: beta__a1 ✗ reward not a number ({"x": 1}) → beta__b1 ✓ passed' in lines
    data = json.loads(run_tool(env, "compare", "--json", a, b, cwd=tmp_path).stdout)
    assert data["a"]["outcomes"] == {"reward not a number": 2}


def test_reward_keys_that_differ_in_their_spaces_are_told_apart(env, runs, task, tmp_path):
    demo = task("alpha")
    a = make_job(runs / "jobs" / "a", {"alpha__a1": dict(task=demo, rewards={"reward ": 0.5})})
    b = make_job(runs / "jobs" / "b", {"alpha__b1": dict(task=demo, rewards={"reward": 1.0})})
    lines = compare_lines(env, (a, b), tmp_path)
    row = next(line for line in lines if line.startswith("alpha "))
    assert '"reward " 0.500' in row and "reward 1.000" in row and row.split()[-2] == "-", row  # no difference


def _named(trial, name: str) -> None:
    """result.json's task_name as Harbor records a task whose task.toml says ``[task] name``."""
    result = trial / "result.json"
    result.write_text(json.dumps(json.loads(result.read_text()) | {"task_name": name}))


def test_a_trial_harbor_did_not_finish_is_counted_under_the_name_its_task_recorded(env, runs, task, tmp_path):
    # Harbor names a task by task.toml's [task] name when it has one (Task.name,
    # harbor/models/task/task.py); a killed trial has no result.json, only its
    # config.json's task folder: it is the same task, not one called "alpha".
    alpha = task("alpha")
    passed = dict(task=alpha, rewards={"reward": 1.0})
    a = make_job(runs / "jobs" / "a", {"alpha__a1": passed, "alpha__a2": passed})
    b = make_job(runs / "jobs" / "b", {"alpha__b1": passed, "alpha__b2": passed})
    for trial in (a / "alpha__a1", b / "alpha__b1", b / "alpha__b2"):
        _named(trial, "org/alpha")
    (a / "alpha__a2" / "result.json").unlink()  # Harbor was killed before it wrote it
    lines = compare_lines(env, (a, b), tmp_path)
    table = {line.split()[0]: line.split() for line in lines[3:] if line}
    assert "alpha" not in table, lines
    assert table["org/alpha"] == ["org/alpha", "1/2", "1.000", "2/2", "1.000", "+0.000", "1"]
    assert "only B passes: org/alpha" in lines
    # no start time: paired last, as the latest started (test_a_trial_harbor_was_killed_in_is_paired_last_not_first)
    assert "  org/alpha: alpha__a2 · not finished → alpha__b2 ✓ passed" in lines, lines
    # Every trial of the task killed in A: B's trials name it.
    (a / "alpha__a1" / "result.json").unlink()
    table = {line.split()[0]: line.split() for line in compare_lines(env, (a, b), tmp_path)[3:] if line}
    assert "alpha" not in table and table["org/alpha"][:5] == ["org/alpha", "0/2", "-", "2/2", "1.000"], table


def test_a_trial_harbor_was_killed_in_is_paired_last_not_first(env, runs, task, tmp_path):
    # Harbor writes result.json when a trial ends: the trial it was running
    # when killed, its latest started, has no start time. Paired first, it
    # shifted every pair of its task by one, so trials that went alike were
    # said to flip (a1 passed → b1 not finished, a2 below 1 → b1 passed, ...).
    alpha = task("alpha")
    passed, below = dict(task=alpha, rewards={"reward": 1.0}), dict(task=alpha, rewards={"reward": 0.0})
    a = make_job(runs / "jobs" / "a", {"alpha__a1": passed, "alpha__a2": below, "alpha__a3": passed})
    b = make_job(runs / "jobs" / "b", {"alpha__b1": passed, "alpha__b2": below, "alpha__b3": passed})
    (b / "alpha__b3" / "result.json").unlink()  # Harbor was killed while it ran
    lines = compare_lines(env, (a, b), tmp_path)
    flipped = [line for line in lines if line.startswith("  alpha: ")]
    assert flipped == ["  alpha: alpha__a3 ✓ passed → alpha__b3 · not finished"], lines
    data = json.loads(run_tool(env, "compare", "--json", a, b, cwd=tmp_path).stdout)
    assert data["flipped"] == 1


def test_a_trial_that_cannot_be_read_is_never_paired_nor_read_through_its_link(env, runs, task, tmp_path):
    # How a trial whose result.json is a link ended is not known (the link is
    # never followed): pairing it would call it a flip, and, with no start
    # time, put it first and shift every other pair of its task.
    alpha = task("alpha")
    passed = dict(task=alpha, rewards={"reward": 1.0})
    a = make_job(runs / "jobs" / "a", {"alpha__a0": passed, "alpha__a1": passed})
    b = make_job(runs / "jobs" / "b", {"alpha__b1": passed})
    planted = tmp_path / "planted.json"
    planted.write_text(json.dumps({"task_name": "what-it-holds", "verifier_result": {"rewards": {"reward": 0.0}}}))
    (a / "alpha__a0" / "result.json").unlink()
    (a / "alpha__a0" / "result.json").symlink_to(planted)
    lines = compare_lines(env, (a, b), tmp_path)
    assert "no trial's outcome flipped (trials paired in the order they started)" in lines, lines
    assert not any("what-it-holds" in line for line in lines), lines
    assert "note: A: alpha__a0: result.json is a link to planted.json: not read here" in lines, lines  # said as one
    data = json.loads(run_tool(env, "compare", "--json", a, b, cwd=tmp_path).stdout)
    assert data["flipped"] == 0 and data["tasks"][0]["flipped"] == []
    assert data["a"]["outcomes"] == {"passed": 1, "cannot be read": 1}


@pytest.mark.parametrize("text", ["{not json}", "[1, 2]"])
def test_a_trial_whose_result_json_is_not_harbors_is_never_paired(env, runs, task, tmp_path, text):
    """A trial whose result.json is not JSON (or a JSON list, or 1 GB) is noted
    "not a file Harbor writes", yet was paired as ``not finished``, last: compare
    said ``alpha__a0 · not finished → alpha__b1 ✓ passed``, a flip of a trial whose
    ending is not known. It is counted and never paired, as one that cannot be read."""
    alpha = task("alpha")
    passed = dict(task=alpha, rewards={"reward": 1.0})
    a = make_job(runs / "jobs" / "a", {"alpha__a0": passed, "alpha__a1": passed})
    b = make_job(runs / "jobs" / "b", {"alpha__b0": passed, "alpha__b1": passed})
    (a / "alpha__a0" / "result.json").write_text(text)
    lines = compare_lines(env, (a, b), tmp_path)
    assert "no trial's outcome flipped (trials paired in the order they started)" in lines, lines
    assert any(line.startswith("note: A: alpha__a0: result.json ") for line in lines), lines
    data = json.loads(run_tool(env, "compare", "--json", a, b, cwd=tmp_path).stdout)
    assert data["flipped"] == 0 and data["tasks"][0]["flipped"] == [], data["tasks"][0]["flipped"]


def test_a_folder_of_a_job_that_is_no_trial_is_said_left_out_not_dropped(env, runs, task, tmp_path):
    # A link in a job (whoever wrote the job may point it anywhere) is never
    # followed, a folder that is no trial is no trial: each is left out of the
    # comparison, and said, as test JOB says it.
    alpha = task("alpha")
    passed = dict(task=alpha, rewards={"reward": 1.0})
    a = make_job(runs / "jobs" / "a", {"alpha__a1": passed})
    b = make_job(runs / "jobs" / "b", {"alpha__b1": passed})
    elsewhere = make_job(tmp_path / "x" / "jobs" / "other", {"alpha__x1": dict(task=alpha, rewards={"reward": 0.0})})
    (a / "alpha__a2").symlink_to(elsewhere / "alpha__x1")
    (b / "scratch").mkdir()
    lines = compare_lines(env, (a, b), tmp_path)
    assert lines[0].startswith("A  job a · 1 trial · ")
    # the target said from where the user started, as run JOB and the TUI's comparison say it
    assert "note: A: alpha__a2 is a link to x/jobs/other/alpha__x1: not read here" in lines, lines
    assert any(line.startswith("note: B: scratch: not a trial folder") for line in lines), lines
    assert "no trial's outcome flipped (trials paired in the order they started)" in lines
    data = json.loads(run_tool(env, "compare", "--json", a, b, cwd=tmp_path).stdout)
    assert data["a"]["problems"] == [f"alpha__a2 is a link to {elsewhere / 'alpha__x1'}: not read here"]
    assert data["b"]["problems"][0].startswith("scratch: not a trial folder")


def test_a_trial_whose_agent_cannot_be_read_names_no_agent(env, runs, task, tmp_path):
    # Neither result.json nor config.json can be read (links, never followed):
    # its agent is not known, which is no agent named "?".
    alpha = task("alpha")
    passed = dict(task=alpha, rewards={"reward": 1.0})
    a = make_job(runs / "jobs" / "a", {"alpha__a1": passed, "alpha__a2": passed})
    b = make_job(runs / "jobs" / "b", {"alpha__b1": passed})
    for name in ("result.json", "config.json"):
        (a / "alpha__a2" / name).unlink()
        (a / "alpha__a2" / name).symlink_to(b / "alpha__b1" / name)
    lines = compare_lines(env, (a, b), tmp_path)
    assert lines[0] == "A  job a · 2 trials · oracle · Harbor's mean 1.000", lines
    data = json.loads(run_tool(env, "compare", "--json", a, b, cwd=tmp_path).stdout)
    assert data["a"]["agents"] == ["oracle"] and data["a"]["outcomes"]["cannot be read"] == 1


def test_a_job_of_two_agents_names_each_agents_mean(env, runs, task, tmp_path):
    # Harbor keeps a mean per <agent>__<model>__<dataset> (JobStats.evals): "0.000; 1.000"
    # after "oracle, nop" read as oracle's 0.000, the other way round.
    alpha = task("alpha")
    a = make_job(runs / "jobs" / "a", {"alpha__a1": dict(task=alpha, rewards={"reward": 1.0})})
    b = make_job(
        runs / "jobs" / "b",
        {
            "alpha__b1": dict(task=alpha, rewards={"reward": 1.0}),
            "alpha__b2": dict(task=alpha, agent="nop", rewards={"reward": 0.0}),
        },
    )
    lines = compare_lines(env, (a, b), tmp_path)
    assert lines[0] == "A  job a · 1 trial · oracle · Harbor's mean 1.000"
    assert lines[1] == "B  job b · 2 trials · oracle, nop · Harbor's mean nop__adhoc 0.000; oracle__adhoc 1.000"


def test_a_mean_that_is_a_number_in_one_job_only_is_said_to_differ(env, runs, task, tmp_path):
    """A's trials of alpha scored 1e308 twice (Harbor's sum overflows: no
    number), B's 1.0 twice: no B - A can be given, and --json said nothing
    differed (``differences`` ``{}``, no flip), as of a task both jobs scored alike."""
    alpha, beta = task("alpha"), task("beta")
    a = make_job(
        runs / "jobs" / "a",
        {
            "alpha__a1": dict(task=alpha, rewards={"reward": 1e308}),
            "alpha__a2": dict(task=alpha, rewards={"reward": 1e308}),
            "beta__a1": dict(task=beta, rewards={"reward": 1.0}),
        },
    )
    b = make_job(
        runs / "jobs" / "b",
        {
            "alpha__b1": dict(task=alpha, rewards={"reward": 1.0}),
            "alpha__b2": dict(task=alpha, rewards={"reward": 1.0}),
            "beta__b1": dict(task=beta, rewards={"reward": 1.0}),
        },
    )
    lines = compare_lines(env, (a, b), tmp_path)
    alpha_row = next(line for line in lines if line.startswith("alpha"))
    assert "no number" in alpha_row and "1.000" in alpha_row, lines
    data = json.loads(run_tool(env, "compare", "--json", a, b, cwd=tmp_path).stdout)
    tasks = {t["task"]: t for t in data["tasks"]}
    assert tasks["alpha"]["differs"] is True and tasks["alpha"]["difference"] is None, tasks["alpha"]
    assert tasks["beta"]["differs"] is False, tasks["beta"]


def test_compare_json_gives_a_mean_that_is_no_number_as_harbor_records_it_and_why(env, runs, task, tmp_path):
    """A job whose trials scored 1e308 twice: Harbor 0.26's Mean overflows to
    inf and its result.json records null. compare --json's ``a`` said
    ``"means": {...: {"mean": "inf"}}`` (a string where a number is
    documented) and no ``mean_errors``, where the text says no number; run
    JOB --json said the same ``"inf"``."""
    alpha = task("alpha")
    a = make_job(runs / "jobs" / "a", {f"alpha__a{i}": dict(task=alpha, rewards={"reward": 1e308}) for i in (1, 2)})
    b = make_job(runs / "jobs" / "b", {"alpha__b1": dict(task=alpha, rewards={"reward": 1.0})})
    data = json.loads(run_tool(env, "compare", "--json", a, b, cwd=tmp_path).stdout)
    assert data["a"]["means"] == {"oracle__adhoc": {"mean": None}}, data["a"]
    assert data["a"]["mean_errors"] == {"oracle__adhoc": {"mean": "inf"}}, data["a"]
    assert data["b"]["means"] == {"oracle__adhoc": {"mean": 1.0}} and data["b"]["mean_errors"] == {}, data["b"]
    row = data["tasks"][0]["a"]
    assert row["mean"] is None and row["means"] == {"reward": None} and row["mean_errors"] == {"reward": "inf"}, row
    job = json.loads(run_tool(env, "run", "--json", a, cwd=tmp_path).stdout)["job"]
    assert job["means"] == data["a"]["means"] and job["mean_errors"] == data["a"]["mean_errors"], job
    assert job["tasks"][0] == row, job["tasks"]


def test_a_difference_past_the_largest_float_is_written_as_it_is_never_inf(env, runs, task, tmp_path):
    """A scored alpha 1e308, B -1e308: each mean a number, their difference
    (-2e308) past any float. B - A read ``-inf`` and --json's ``difference``
    the string ``"-inf"`` where a number or null is documented."""
    alpha = task("alpha")
    a = make_job(runs / "jobs" / "a", {"alpha__a1": dict(task=alpha, rewards={"reward": 1e308})})
    b = make_job(runs / "jobs" / "b", {"alpha__b1": dict(task=alpha, rewards={"reward": -1e308})})
    lines = compare_lines(env, (a, b), tmp_path)
    row = next(line for line in lines if line.startswith("alpha")).split()
    assert row[1:6] == ["1/1", "1.000e+308", "0/1", "-1.000e+308", "-2.000e+308"], row
    data = json.loads(run_tool(env, "compare", "--json", a, b, cwd=tmp_path).stdout)
    [alpha_row] = data["tasks"]
    assert alpha_row["difference"] is None and alpha_row["differences"] == {}, alpha_row
    assert alpha_row["differs"] is True, alpha_row


def test_each_tasks_and_each_jobs_mean_is_worked_out_once_per_reading(runs, task, monkeypatch, capsys):
    """Two jobs whose trials scored 300,000 reward keys each: compare took about 27 s, working
    out each task's mean again for every cell and every sort key of its row (and each job's
    mean again for each of its lines), and so did the TUI's comparison, its sort too. Each
    list of reward dicts (a task's, an agent's group) is averaged once, and the means shown are
    Harbor's."""
    from collections import Counter

    from verifier_tui.cli import main
    from verifier_tui.engine.harbor import overview

    alpha, beta = task("alpha"), task("beta")
    keys = [f"k{n:03}" for n in range(200)]
    a = make_job(
        runs / "jobs" / "wide-a",
        {
            **{f"alpha__a{i}": dict(task=alpha, rewards=dict.fromkeys(keys, 1.0)) for i in range(2)},
            "beta__a1": dict(task=beta, rewards=dict.fromkeys(keys, 0.0)),
        },
    )
    b = make_job(
        runs / "jobs" / "wide-b",
        {
            "alpha__b1": dict(task=alpha, rewards=dict.fromkeys(keys, 0.5)),
            "beta__b1": dict(task=beta, rewards=dict.fromkeys(keys, 1.0)),
        },
    )
    averaged: dict[str, Counter[int]] = {"mean_of": Counter(), "mean_errors": Counter()}

    def counting(real, counted):
        def wrapper(rewards):
            counted[id(rewards)] += 1  # which list of reward dicts was averaged
            return real(rewards)

        return wrapper

    for name, counted in averaged.items():
        monkeypatch.setattr(overview, name, counting(getattr(overview, name), counted))
    monkeypatch.chdir(runs)
    assert main(["compare", str(a), str(b)]) == 0
    lines = capsys.readouterr().out.splitlines()
    for name, counted in averaged.items():
        # alpha's and beta's rewards in each job, and each job's agent group
        assert len(counted) == 6 and set(counted.values()) == {1}, (name, counted)
    row = {line.split()[0]: line for line in lines if line.strip()}
    assert "k000 1.000, k001 1.000" in row["alpha"] and "k000 0.500" in row["alpha"], row["alpha"]
    assert "k000 -0.500" in row["alpha"] and "k019 +1.000, … 180 more" in row["beta"], row["beta"]
    assert "Harbor's mean k000 0.667" in lines[0] and "Harbor's mean k000 0.750" in lines[1], lines[:2]
    for counted in averaged.values():
        counted.clear()
    assert main(["run", str(a)]) == 0  # the job overview: its reward lines and its task table
    assert "k000 1.000, k001 1.000" in capsys.readouterr().out
    for name, counted in averaged.items():
        assert len(counted) == 3 and set(counted.values()) == {1}, (name, counted)


def test_a_nan_reward_is_not_said_below_1(env, runs, task, tmp_path):
    """A trial whose result.json records the reward NaN (another writer's: Harbor writes null):
    compare said `beta__a1 · reward below 1 (nan) → beta__b1 ✓ passed` and run JOB counted it
    `1 reward below 1`, where NaN is below nothing; the mean beside it said `no number (NaN)`.
    It ended with a reward that is no number, as a string reward does; the mean is still
    Harbor's, NaN."""
    beta = task("beta")
    a = make_job(
        runs / "jobs" / "nan",
        {
            "beta__a1": dict(task=beta, rewards={"reward": 0.5}),
            "alpha__a1": dict(task=task("alpha"), rewards={"reward": 1}),
        },
    )
    result = json.loads((a / "beta__a1" / "result.json").read_text())
    result["verifier_result"]["rewards"] = {"reward": float("nan")}  # json.dumps writes NaN
    (a / "beta__a1" / "result.json").write_text(json.dumps(result))
    b = make_job(runs / "jobs" / "one", {"beta__b1": dict(task=beta, rewards={"reward": 1.0})})
    lines = compare_lines(env, (a, b), tmp_path)
    # the reward as JSON writes it, as the mean beside it says it: never (nan) beside (NaN)
    assert "  beta: beta__a1 ✗ reward not a number (NaN) → beta__b1 ✓ passed" in lines, lines
    assert ["beta", "0/1", "no", "number", "(NaN)", "1/1", "1.000", "-", "1"] in [line.split() for line in lines]
    overview = run_tool(env, "run", a, cwd=tmp_path)
    no_traceback(overview)
    assert "ended   1 passed, 1 reward not a number" in overview.stdout.splitlines(), overview.stdout


def test_an_infinite_reward_is_not_said_to_pass(env, runs, task, tmp_path):
    """A trial whose result.json records the reward Infinity (or 1e999; another
    writer's: Harbor's verifier refuses a reward that is not finite, and writes
    null): run JOB counted it ``passed``, and compare said ``only A passes`` and
    ``beta__a1 ✓ passed → beta__b1 · reward below 1``, where Harbor scored no such
    trial, while the mean beside it said ``no number (Infinity)``. It ended with a
    reward that is no number, as NaN does."""
    beta = task("beta")
    a = make_job(
        runs / "jobs" / "inf",
        {
            "beta__a1": dict(task=beta, rewards={"reward": 0.5}),
            "alpha__a1": dict(task=task("alpha"), rewards={"reward": 1}),
        },
    )
    result = json.loads((a / "beta__a1" / "result.json").read_text())
    result["verifier_result"]["rewards"] = {"reward": float("inf")}  # json.dumps writes Infinity
    (a / "beta__a1" / "result.json").write_text(json.dumps(result))
    b = make_job(runs / "jobs" / "one", {"beta__b1": dict(task=beta, rewards={"reward": 0.0})})
    lines = compare_lines(env, (a, b), tmp_path)
    # the reward as JSON writes it, as the header and mean column say it: never (inf) beside (Infinity)
    assert "  beta: beta__a1 ✗ reward not a number (Infinity) → beta__b1 · reward below 1 (0.0)" in lines, lines
    assert "only A passes: alpha" in lines, lines  # alpha, in A alone; never beta
    overview = run_tool(env, "run", a, cwd=tmp_path)
    no_traceback(overview)
    assert "ended   1 passed, 1 reward not a number" in overview.stdout.splitlines(), overview.stdout


def test_a_task_named_with_thousands_of_characters_takes_a_names_room(env, runs, task, tmp_path):
    """A result.json naming its task with 5,000 characters: compare's table padded every row
    to 1,100 columns, and its flips and "only B passes" lines held 1,000 of them; run JOB's
    tables too. The name takes a name's room (60 characters, a count of the rest between)."""
    jobs = []
    for letter, reward in (("a", 0.5), ("b", 1.0)):
        job = make_job(
            runs / "jobs" / f"long-{letter}",
            {
                f"beta__{letter}1": dict(task=task("beta"), rewards={"reward": reward}),
                f"alpha__{letter}1": dict(task=task("alpha"), rewards={"reward": 1.0}),
            },
        )
        result = json.loads((job / f"beta__{letter}1" / "result.json").read_text())
        (job / f"beta__{letter}1" / "result.json").write_text(json.dumps(result | {"task_name": "T" * 5000}))
        jobs.append(job)
    lines = compare_lines(env, jobs, tmp_path)
    overview = run_tool(env, "run", jobs[0], cwd=tmp_path)
    no_traceback(overview)
    for line in [*lines, *overview.stdout.splitlines()]:
        assert len(line) < 150, line
    assert "only B passes: TTTTTTTTTTTTTTTTTTTTT … 4,971 characters left out … TTTTTTTT" in lines, lines


def test_an_agent_named_with_thousands_of_characters_takes_a_names_room(env, runs, task, tmp_path):
    """A result.json naming its agent with 5,000 characters: compare's job line held 1,000
    of them, and Harbor's mean, after the agents, was cut from it; run JOB's header and reward
    line (its evals group is named after the agent) likewise. Each agent, and each group,
    takes a name's room."""
    jobs = []
    for letter in "ab":
        trials = {f"alpha__{letter}{n}": dict(task=task("alpha"), **PASSED) for n in (1, 2)}
        job = make_job(runs / "jobs" / f"agent-{letter}", trials)
        result = json.loads((job / f"alpha__{letter}1" / "result.json").read_text())
        (job / f"alpha__{letter}1" / "result.json").write_text(
            json.dumps(result | {"agent_info": {"name": "A" * 5000, "model_info": {"name": "gpt"}}})
        )
        jobs.append(job)
    lines = compare_lines(env, jobs, tmp_path)
    cut = f"{'A' * 21} … 4,977 characters left out … AA (gpt)"  # the agent and its model, as agents() names them
    assert lines[0].startswith(f"A  job agent-a · 2 trials · {cut}, oracle · Harbor's mean "), lines[0]
    assert lines[0].endswith("__adhoc 1.000; oracle__adhoc 1.000") and len(lines[0]) <= 200, lines[0]
    overview = run_tool(env, "run", jobs[0], cwd=tmp_path)
    no_traceback(overview)
    for line in overview.stdout.splitlines():
        assert len(line) < 150, line
