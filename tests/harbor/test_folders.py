"""Recognising trial and job folders by their files, and reading them
without trusting them: missing, cut-short or older files are states."""

from __future__ import annotations

import json
import os

import pytest

from tests.helpers.harbor import PASSED, harbor_exception, job_entries, make_job, make_trial
from verifier_tui.engine.harbor.folders import HarborFolderError, open_harbor, select_trial
from verifier_tui.engine.harbor.reading import read_json
from verifier_tui.engine.harbor.walkthrough import walk_trial
from verifier_tui.engine.task.target import find_harbor_folder, harbor_kind


def test_real_jobs_and_trials_are_recognised_by_their_files(real):
    for job in (real / "jobs").iterdir():
        assert harbor_kind(job) == "job"
        trials = [p for p in job.iterdir() if p.is_dir()]
        assert [harbor_kind(t) for t in trials] == ["trial"]
    assert harbor_kind(real / "tasks" / "hello-file") is None


def test_a_relative_path_opens_from_any_current_folder(real, monkeypatch):
    monkeypatch.chdir(real / "jobs")
    job, step = open_harbor("nop-fail")
    assert job.name == "nop-fail" and step is None
    monkeypatch.chdir(real / "tasks" / "hello-file" / "tests")
    trial, _ = open_harbor("../../../jobs/nop-fail/hello-file__C4SunEc")
    assert trial.name == "hello-file__C4SunEc"
    assert trial.job_path == real / "jobs" / "nop-fail"
    assert trial.harbor_version == "0.26.0"


def test_a_place_inside_a_trial_opens_the_trial_on_that_step(real):
    trial_dir = real / "jobs" / "multi-step" / "multi-step__2qiWQiH"
    assert find_harbor_folder(trial_dir / "steps" / "second" / "verifier") == ("trial", trial_dir, "second")
    assert find_harbor_folder(trial_dir / "result.json") == ("trial", trial_dir, None)
    trial, step = open_harbor(trial_dir / "steps" / "second")
    assert step == "second" and trial.step(step).rewards == {"reward": 1.0}


def test_a_folder_that_is_neither_gets_one_clear_error(tmp_path, real):
    (tmp_path / "plain").mkdir()
    with pytest.raises(HarborFolderError, match="not a Harbor trial or job folder: a trial folder holds trial.log"):
        open_harbor(tmp_path / "plain")
    with pytest.raises(HarborFolderError, match="not a Harbor trial or job folder"):
        open_harbor(real / "tasks" / "hello-file")
    with pytest.raises(HarborFolderError, match="does not exist"):
        open_harbor(tmp_path / "nowhere")


def test_a_trial_without_its_log_is_still_a_trial_by_its_config(task, runs):
    trial = make_trial(runs / "jobs" / "j" / "demo__aaaaaaa", task=task(), **PASSED)
    (trial / "trial.log").unlink()
    assert harbor_kind(trial) == "trial"
    opened, _ = open_harbor(trial)
    assert any(a.startswith("trial.log") for a in opened.absent)


def test_a_missing_result_json_is_a_state_and_the_files_still_speak(task, runs):
    trial = make_trial(runs / "jobs" / "j" / "demo__aaaaaaa", task=task(), result="missing", **PASSED)
    opened, _ = open_harbor(trial)
    assert opened.result.state == "missing"
    assert any("result.json is missing" in note for note in opened.notes)
    walk = walk_trial(opened)
    # Harbor has not scored it (it scores when the trial ends); the files say what they hold so far
    assert (walk.sandbox.verdict.rewards, walk.sandbox.verdict.finished) == (None, False)
    assert "verifier/ holds rewards reward=1.0 so far" in walk.sandbox.verdict.message


def test_a_truncated_result_json_is_a_state_too(task, runs):
    trial = make_trial(
        runs / "jobs" / "j" / "demo__aaaaaaa", task=task(), result="truncated", verifier_files={"test-stdout.txt": ""}
    )
    opened, _ = open_harbor(trial)
    assert opened.result.state == "truncated"
    assert "cut short" in opened.result.problem
    walk = walk_trial(opened)
    assert walk.sandbox.verdict.finished is False and walk.sandbox.verdict.error is None
    assert "verifier/ holds RewardFileNotFoundError so far" in walk.sandbox.verdict.message


def test_a_killed_trial_still_names_its_exception_from_exception_txt(task, runs):
    trial = make_trial(
        runs / "jobs" / "j" / "demo__aaaaaaa",
        task=task(),
        result="missing",
        exception=harbor_exception("RewardFileNotFoundError", "No reward file found at x"),
        verifier_files={"test-stdout.txt": ""},
    )
    opened, _ = open_harbor(trial)
    assert (
        opened.exception.type == "RewardFileNotFoundError" and opened.exception.message == "No reward file found at x"
    )
    assert opened.started_at is not None  # when config.json was written
    walk = walk_trial(opened)
    assert (walk.sandbox.verdict.error, walk.sandbox.verdict.source) == ("RewardFileNotFoundError", "exception.txt")


def test_an_old_layout_trial_opens_with_what_it_lacks_named(task, runs):
    """Harbor before 0.17 (no lock.json), 0.21 (no verifier_environment_mode),
    0.26 (no schema_version); 0.1.42 and older kept test-stderr.txt apart; no
    manifest, /app at artifacts/app."""
    verifier = "def verify(workspace):\n    return len((workspace / 'out.txt').read_text())\n"
    trial = make_trial(
        runs / "jobs" / "old" / "demo__bbbbbbb",
        task=task(verifier=verifier),
        old_layout=True,
        digest=None,
        exception=harbor_exception("RewardFileNotFoundError", "No reward file found"),
        app={"notes.txt": "x"},
        verifier_files={
            "test-stdout.txt": "",
            "test-stderr.txt": "Traceback (most recent call last):\n"
            '  File "/tests/verifier.py", line 2, in verify\n'
            "FileNotFoundError: [Errno 2] No such file or directory: "
            "'/app/out.txt'\n",
        },
    )
    opened, _ = open_harbor(trial)
    absent = " | ".join(opened.absent)
    assert "lock.json" in absent and "schema_version" in absent and "verifier_environment_mode" in absent
    assert "artifacts/manifest.json" in absent
    assert any("test-stderr.txt" in note for note in opened.notes)
    walk = walk_trial(opened)
    assert walk.facts.verifier_mode == "shared" and walk.facts.mode_source == "task.toml"
    assert walk.sandbox.phases.stopped_at == "verify_called"
    assert walk.sandbox.failure.local_path == runs / "tasks" / "demo" / "tests" / "verifier.py"
    assert walk.workspace.path == trial / "artifacts" / "app"
    assert "older layout" in walk.workspace.words
    assert walk.drift is not None and walk.drift.same is None


def test_a_multi_step_trial_has_one_entry_per_step(task, runs):
    steps = [
        dict(PASSED, name="first"),
        dict(
            name="second",
            exception=harbor_exception("RewardFileNotFoundError", "No reward file found"),
            verifier_files={
                "test-stdout.txt": "run_verifier: error: verify returned None (NoneType); it "
                "must return a finite number\n"
            },
        ),
    ]
    multi = task(toml='[[steps]]\nname = "first"\n\n[[steps]]\nname = "second"\n')
    job_dir = make_job(runs / "jobs" / "j", {"multi__ccccccc": dict(task=multi, mode=None, steps=steps)})
    trial = job_dir / "multi__ccccccc"
    opened, _ = open_harbor(trial)
    assert [s.name for s in opened.steps] == ["first", "second"]
    job, _ = open_harbor(trial.parent)
    assert [(e.step, e.label) for e in job_entries(job)] == [("first", "1.0"), ("second", "RewardFileNotFoundError")]
    second = walk_trial(opened, "second")
    assert second.sandbox.phases.stopped_at == "reward_written"
    assert second.step.verifier_dir == trial / "steps" / "second" / "verifier"
    with pytest.raises(HarborFolderError, match="no step 'third'"):
        opened.step("third")


def test_a_job_with_several_trials_lists_each_with_its_sandbox_verdict(task, runs):
    demo = task()
    job = make_job(
        runs / "jobs" / "2026-12-01__03-36-17",
        {
            "demo__aaaaaaa": dict(task=demo, **PASSED),
            "demo__bbbbbbb": dict(
                task=demo,
                rewards={"reward": 0.0, "lines": 3},
                verifier_files={"test-stdout.txt": "", "reward.json": '{"reward": 0.0, "lines": 3}'},
            ),
            "demo__ccccccc": dict(
                task=demo,
                agent="nop",
                exception=harbor_exception("VerifierTimeoutError", "Verifier execution timed out after 600.0 seconds"),
                verifier_files={},
            ),
        },
    )
    opened, _ = open_harbor(job)
    assert opened.harbor_version == "0.26.0"
    listing = job_entries(opened)
    assert [(e.trial, e.label) for e in listing] == [
        ("demo__aaaaaaa", "1.0"),
        ("demo__bbbbbbb", "reward 0.0, lines 3"),
        ("demo__ccccccc", "VerifierTimeoutError"),
    ]
    assert [e.to_json()["error"] for e in listing] == [None, None, "VerifierTimeoutError"]
    assert opened.trial("demo__bbbbbbb").name == "demo__bbbbbbb"
    with pytest.raises(HarborFolderError, match="no trial 'x'.*demo__aaaaaaa"):
        opened.trial("x")


def test_result_json_cut_at_any_byte_is_truncated_not_invalid(task, runs):
    # Harbor stopped mid-write leaves a prefix of its own JSON: a cut inside
    # `true`, `null` or a number must read as cut short, never as a bad file.
    trial = make_trial(runs / "jobs" / "j" / "demo__aaaaaaa", task=task(), **PASSED)
    data = json.loads((trial / "result.json").read_text(encoding="utf-8"))
    data["task_name"] = "café-∑"  # Harbor writes UTF-8 as is: a cut may split a character
    whole = json.dumps(data, indent=4, ensure_ascii=False).encode("utf-8")
    for end in range(1, len(whole.rstrip()) - 1):
        (trial / "result.json").write_bytes(whole[:end])
        state = read_json(trial / "result.json", beneath=trial)
        assert state.state == "truncated", (whole[max(0, end - 20) : end], state.problem)


def test_an_unreadable_or_odd_config_is_named_not_raised(task, runs):
    trial = make_trial(runs / "jobs" / "j" / "demo__aaaaaaa", task=task(), **PASSED)
    (trial / "config.json").write_text('{"trial_name": ', encoding="utf-8")
    opened, _ = open_harbor(trial)
    assert opened.config.state == "truncated"
    assert opened.name == "demo__aaaaaaa"
    (trial / "config.json").write_text("[1, 2]", encoding="utf-8")
    assert open_harbor(trial)[0].task_config != {}  # read from result.json's copy of the config
    os.chmod(trial / "result.json", 0)
    try:
        state = open_harbor(trial)[0].result.state
    finally:
        os.chmod(trial / "result.json", 0o644)
    assert state in ("unreadable", "ok")  # root reads anything


def test_a_job_whose_trials_all_failed_to_write_still_lists(task, runs):
    job = make_job(
        runs / "jobs" / "j",
        {"demo__aaaaaaa": dict(task=task(), result="missing", verifier_files={"test-stdout.txt": ""})},
    )
    listing = job_entries(open_harbor(job)[0])
    assert [e.label for e in listing] == ["not finished"]  # Harbor scores a trial only when it ends
    assert json.loads((job / "config.json").read_text())["job_name"] == "j"


def test_the_trial_and_step_a_command_means(real):
    multi, _ = open_harbor(real / "jobs" / "multi-step")
    trial, step = select_trial(multi)
    assert trial.name == "multi-step__2qiWQiH" and step == "first"  # a multi-step trial opens on its first step
    assert select_trial(multi, "multi-step__2qiWQiH", "second")[1] == "second"
    with pytest.raises(HarborFolderError, match="no step 'third' \\(steps: first, second\\)"):
        select_trial(multi, step="third")
    with pytest.raises(HarborFolderError, match="no trial 'nope'"):
        select_trial(multi, "nope")
    single, _ = open_harbor(real / "jobs" / "nop-fail" / "hello-file__C4SunEc")
    assert select_trial(single) == (single, None)
    with pytest.raises(HarborFolderError, match="is the trial hello-file__C4SunEc, not other"):
        select_trial(single, "other")


def test_a_job_of_several_trials_needs_a_trial_named(task, runs):
    demo = task()
    job = make_job(
        runs / "jobs" / "j", {"demo__aaaaaaa": dict(task=demo, **PASSED), "demo__bbbbbbb": dict(task=demo, **PASSED)}
    )
    with pytest.raises(
        HarborFolderError, match="has 2 trials: choose one with --trial NAME \\(demo__aaaaaaa, demo__bbbbbbb\\)"
    ):
        select_trial(open_harbor(job)[0])


def test_a_trial_opened_through_the_users_own_link_is_read_again_through_it(task, runs, tmp_path):
    """r refuses a trial folder that became a link (or another folder) since it was read; one the
    user opened through a link of their own is the same folder still, and is read again."""
    from verifier_tui.engine.harbor.folders import open_trial, read_trial_again

    trial = make_trial(runs / "jobs" / "j" / "demo__aaaaaaa", task=task(), result="missing", **PASSED)
    mine = tmp_path / "mine"
    mine.symlink_to(trial)
    again = read_trial_again(open_trial(mine))
    assert again.path == mine and not again.finished
    other = make_trial(tmp_path / "k" / "demo__bbbbbbb", task=task(), **PASSED)
    opened = open_trial(mine)
    mine.unlink()
    mine.symlink_to(other)  # the same link, now to another trial
    with pytest.raises(HarborFolderError, match="mine is another folder now"):
        read_trial_again(opened)
