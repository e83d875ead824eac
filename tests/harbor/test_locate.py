"""Finding the task a trial ran: the folder Harbor ran in, where that folder
is now, the job folder's ancestors, Harbor's cache, or the caller's --task."""

from __future__ import annotations

import json
import shutil

from tests.helpers.harbor import PASSED, harbor_trial_config, make_job
from verifier_tui.engine.harbor.digest import task_digest
from verifier_tui.engine.harbor.folders import open_harbor
from verifier_tui.engine.harbor.locate import git_task_cache_dir, locate_task, run_folder, shortuuid_of
from verifier_tui.engine.harbor.walkthrough import trial_json, walk_trial


def one_trial(runs, task, **kwargs):
    make_job(runs / "jobs" / "j", {"demo__aaaaaaa": dict(task=task, **PASSED, **kwargs)})
    return open_harbor(runs / "jobs" / "j" / "demo__aaaaaaa")[0]


def test_the_task_is_found_from_the_folder_harbor_ran_in(task, runs):
    trial = one_trial(runs, task())
    assert run_folder(trial) == runs
    location = locate_task(trial)
    assert location.path == runs / "tasks" / "demo"
    assert "trial_uri" in location.found_by
    assert walk_trial(trial).drift.same is True


def test_a_moved_job_folder_still_finds_its_task(task, runs, tmp_path):
    task()
    trial_dir = one_trial(runs, runs / "tasks" / "demo").path
    moved = tmp_path / "elsewhere" / "harbor-runs"
    shutil.move(str(runs), str(moved))
    trial = open_harbor(moved / "jobs" / "j" / "demo__aaaaaaa")[0]
    assert run_folder(trial) == runs != moved  # trial_uri still names the old place
    location = locate_task(trial)
    assert location.path == moved / "tasks" / "demo"
    assert location.found_by == "task.path in config.json; the trial folder moved since Harbor ran it"
    assert str(runs / "tasks" / "demo") in [place for place, _ in location.tried]
    assert not trial_dir.exists()


def _job_archived_with_its_tasks(task, runs, tmp_path):
    """Job ``j`` (one trial of task ``demo``) copied to ``archive/2026/j``, its
    task to ``archive/tasks/demo``, and the run folder removed: the copy."""
    demo = task()
    one_trial(runs, demo)
    target = tmp_path / "archive" / "2026" / "j"
    shutil.copytree(runs / "jobs" / "j", target)
    shutil.copytree(demo, tmp_path / "archive" / "tasks" / "demo")
    shutil.rmtree(runs)
    return target


def test_a_job_copied_alone_finds_the_task_from_its_ancestors(task, runs, tmp_path):
    """Only jobs/j travelled: the task is beside an ancestor, not at <trials_dir> below the run folder."""
    target = _job_archived_with_its_tasks(task, runs, tmp_path)
    trial = open_harbor(target / "demo__aaaaaaa")[0]
    location = locate_task(trial)
    assert location.path == tmp_path / "archive" / "tasks" / "demo"
    assert location.found_by == "task.path from an ancestor of the job folder"


def test_a_task_that_cannot_be_found_says_where_it_looked_and_how_to_give_it(task, runs):
    demo = task()
    trial = one_trial(runs, demo)
    shutil.rmtree(demo)
    location = locate_task(trial)
    assert location.path is None
    message = location.message()
    assert message.startswith("the task was not found (looked in: ")
    assert str(runs / "tasks" / "demo") in message
    assert "ancestor of the job folder" in message
    assert message.endswith("give the task folder with --task DIR")
    walk = walk_trial(trial)
    out = trial_json(walk)
    assert out["trial"]["task_path"] is None and out["trial"]["task_not_found"] == message
    assert out["local"] is None and "--task DIR" in out["local_skipped"]
    assert out["sandbox"]["harbor_verdict"]["rewards"] == {"reward": 1.0}  # the sandbox side needs no task


def test_a_task_given_by_the_caller_comes_first(task, runs, tmp_path):
    trial = one_trial(runs, task())
    copy = shutil.copytree(runs / "tasks" / "demo", tmp_path / "mine")
    location = locate_task(trial, copy)
    assert location.path == copy and location.found_by == "given with --task"
    not_a_task = tmp_path / "empty"
    not_a_task.mkdir()
    refused = locate_task(trial, not_a_task)
    assert refused.path is None and "no task.toml, tests/test.sh or tests/verifier.py there" in refused.message()


def test_a_folder_with_a_bare_tests_folder_is_no_trials_task(task, runs, tmp_path):
    """One rule for what a task is (engine/task/kinds.py): a checkout's own tests/ is not a task,
    for a trial's task as for the rest of the tool."""
    demo = task()
    trial = one_trial(runs, demo)
    shutil.rmtree(demo)
    (demo / "tests").mkdir(parents=True)  # any Python checkout has one
    assert locate_task(trial).path is None
    assert locate_task(trial, demo).path is None


def test_of_several_copies_the_one_with_the_recorded_digest_wins(task, runs, tmp_path):
    """The run folder still exists but its task was edited; a pristine copy sits beside the job's ancestor."""
    demo = task()
    trial = one_trial(runs, demo)
    pristine = shutil.copytree(demo, runs / "jobs" / "tasks" / "demo")
    (demo / "tests" / "verifier.py").write_text("def verify(workspace):\n    return 0.0\n")
    location = locate_task(trial)
    assert location.path == pristine
    assert walk_trial(trial).drift.same is True


def test_shortuuid_and_git_cache_paths_are_harbors(tmp_path):
    # Checked against Harbor 0.26.0's GitTaskId.get_local_path() with shortuuid 1.0.13 and pydantic 2.
    assert (
        shortuuid_of("git_url='https://github.com/a/b.git' git_commit_id=None path=PosixPath('tasks/x')")
        == "ZyDV9Nx4HccWkJ563dF7nW"
    )
    assert (
        git_task_cache_dir("git@github.com:o/r.git", "abc123", "./t/../y/z", tmp_path)
        == tmp_path / "tasks" / "64ir8KfgfyzTjSNphWDSyb" / "z"
    )
    assert git_task_cache_dir("HTTP://X", "d", "q", tmp_path) == tmp_path / "tasks" / "ZqTrChmmmJcCJGzzbd28tL" / "q"


def _retarget(trial_dir, **task_fields):
    """Point a built trial's config.json at another kind of task."""
    config = json.loads((trial_dir / "config.json").read_text())
    config["task"].update(task_fields)
    (trial_dir / "config.json").write_text(json.dumps(config))


def test_a_git_task_is_found_in_harbors_cache(task, runs, tmp_path):
    demo = task()
    trial = one_trial(runs, demo)
    url, commit = "https://github.com/org/tasks.git", "0123456789abcdef0123456789abcdef01234567"
    _retarget(trial.path, path="tasks/demo", git_url=url, git_commit_id=commit)
    cache = tmp_path / "harbor-cache"
    cached = git_task_cache_dir(url, commit, "tasks/demo", cache)
    shutil.copytree(demo, cached)
    shutil.rmtree(demo)
    location = locate_task(open_harbor(trial.path)[0], cache=cache)
    assert location.kind == "git" and location.path == cached
    assert location.found_by == "Harbor's cache for this git task"


def test_a_git_task_cached_under_another_id_is_found_by_its_digest(task, runs, tmp_path):
    demo = task()
    trial = one_trial(runs, demo)
    _retarget(trial.path, path="tasks/demo", git_url="https://github.com/org/tasks.git", git_commit_id=None)
    cache = tmp_path / "harbor-cache"
    shutil.copytree(demo, cache / "tasks" / "SomeOtherId" / "demo")
    shutil.copytree(demo, cache / "tasks" / "Stale" / "demo")
    (cache / "tasks" / "Stale" / "demo" / "tests" / "verifier.py").write_text("x = 1\n")
    location = locate_task(open_harbor(trial.path)[0], cache=cache)
    assert location.path == cache / "tasks" / "SomeOtherId" / "demo"
    assert location.found_by == "Harbor's cache (same task name and digest)"


def test_a_package_task_is_found_in_harbors_cache_by_its_digest(task, runs, tmp_path):
    demo = task()
    trial = one_trial(runs, demo)
    _retarget(trial.path, path=None, name="acme/demo", ref="latest")
    cache = tmp_path / "harbor-cache"
    digest = task_digest(demo).digest.removeprefix("sha256:")
    shutil.copytree(demo, cache / "tasks" / "packages" / "acme" / "demo" / digest)
    location = locate_task(open_harbor(trial.path)[0], cache=cache)
    assert location.kind == "package"
    assert location.path == cache / "tasks" / "packages" / "acme" / "demo" / digest


def test_an_absolute_task_path_that_moved_is_found_by_its_name(task, runs, tmp_path):
    demo = task()
    config = harbor_trial_config(task_path="/home/dev/tasks/demo", trial_name="demo__aaaaaaa", trials_dir="jobs/j")
    make_job(runs / "jobs" / "j", {"demo__aaaaaaa": dict(task=demo, config=config, **PASSED)})
    location = locate_task(open_harbor(runs / "jobs" / "j" / "demo__aaaaaaa")[0])
    assert location.path == demo


def test_a_task_path_past_the_systems_length_limit_is_a_task_not_found(task, runs):
    """A config.json task.path of 6,000 characters: looking it up raised
    "File name too long", and run and explain said only that, exit 2."""
    import json

    trial = one_trial(runs, task())
    config = trial.path / "config.json"
    data = json.loads(config.read_text())
    data["task"]["path"] = "a/" * 3000
    config.write_text(json.dumps(data))
    location = locate_task(open_harbor(trial.path)[0])
    assert location.path is None and location.message().startswith("the task was not found (looked in: ")


def test_a_trial_named_through_a_link_finds_its_task_from_where_the_link_leads(task, runs, tmp_path):
    """``verifier-tui run latest``, ``latest`` a link the user made to a trial
    of a job copied with its tasks: the task was looked for from the link's
    folder alone, and not found, where the trial's own path finds it."""
    target = _job_archived_with_its_tasks(task, runs, tmp_path)
    (tmp_path / "elsewhere").mkdir()
    latest = tmp_path / "elsewhere" / "latest"
    latest.symlink_to(target / "demo__aaaaaaa")
    location = locate_task(open_harbor(latest)[0])
    assert location.path == tmp_path / "archive" / "tasks" / "demo", location.tried


def test_a_config_json_that_cannot_be_read_is_said_so_not_said_to_have_no_task(task, runs, tmp_path, env):
    """The trial's config.json a link (to a file of the user's), a FIFO or not
    JSON, and no result.json to copy it from: ``run``, ``explain`` and
    ``watch`` said ``the trial does not say where its task was (config.json has
    no task)``, of a file they never read; they say why it was not read."""
    from tests.helpers.commands import no_traceback, run_tool

    demo = task()
    trial = one_trial(runs, demo).path
    (trial / "result.json").unlink()  # Harbor stopped: its copy of config.json is not there either
    mine = tmp_path / "mine.json"
    mine.write_text(json.dumps({"task": {"path": str(demo)}}))
    (trial / "config.json").unlink()
    (trial / "config.json").symlink_to(mine)
    location = locate_task(open_harbor(trial)[0])
    assert location.message().startswith(
        f"the trial does not say where its task was (config.json is a link to {mine}: not read here); "
    ), location.message()
    done = run_tool(env, "explain", trial, cwd=tmp_path)
    no_traceback(done)
    assert done.returncode == 2 and "config.json has no task" not in done.stdout + done.stderr, done
    assert "config.json is a link to mine.json: not read here" in done.stdout + done.stderr, done


def test_of_several_copies_whose_digest_cannot_be_worked_out_the_reason_is_said(task, runs, monkeypatch):
    """Two copies of the task whose .gitignore is past what the tool reads (1,000 bytes here; Harbor
    reads it whole): the copy taken was said chosen as "lock.json records no digest to tell them
    apart", though lock.json records one. What is said now is why neither digest is known."""
    from verifier_tui.engine.task import harbor_text

    demo = task()
    (demo / ".gitignore").write_text("*.log\n")
    trial = one_trial(runs, demo)
    (demo / ".gitignore").write_text("*.log\n" + "# padding\n" * 200)
    other = shutil.copytree(demo, runs / "jobs" / "tasks" / "demo")
    monkeypatch.setattr(harbor_text, "IGNORE_FILE_LIMIT", 1000)
    location = locate_task(trial)
    assert location.path == demo and f"chosen over {other}" in location.found_by, location.found_by
    assert "records no digest" not in location.found_by, location.found_by
    said = "whether it has the digest lock.json recorded cannot be told: its .gitignore is larger than"
    assert said in location.found_by, location.found_by


def test_a_copy_whose_digest_cannot_be_worked_out_is_never_said_to_lack_the_recorded_one(task, runs, monkeypatch):
    """Of two copies, the other's .gitignore past what the tool reads: the note said "its digest
    is the one lock.json recorded, the other's is not", or "none has the recorded digest", of a
    copy whose digest nobody worked out. It now says why that copy's cannot be told."""
    from verifier_tui.engine.task import harbor_text

    demo = task()
    (demo / ".gitignore").write_text("*.log\n")
    trial = one_trial(runs, demo)
    other = shutil.copytree(demo, runs / "jobs" / "tasks" / "demo")
    (other / ".gitignore").write_text("*.log\n" + "# padding\n" * 200)
    monkeypatch.setattr(harbor_text, "IGNORE_FILE_LIMIT", 1000)
    untold = f"; for {other}, whether it has the digest lock.json recorded cannot be told: its .gitignore is larger"
    location = locate_task(trial)
    assert location.path == demo and "its digest is the one lock.json recorded" + untold in location.found_by
    assert "the other's is not" not in location.found_by, location.found_by
    (demo / "instruction.md").write_text("changed since the run\n")
    location = locate_task(trial)
    assert location.path == demo, location.found_by
    assert "its digest is not the one lock.json recorded, and it is tried first" + untold in location.found_by
    assert "none has" not in location.found_by, location.found_by
