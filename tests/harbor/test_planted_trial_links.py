"""A genuine Harbor trial whose files, or a folder on the way to them, were
replaced by links: to ``/proc/self/environ`` (read by the tool, that is the
tool's own environment) or to a folder of the user's holding a secret.
Whoever wrote the trial may want out: ``run``, ``explain``, ``test JOB`` and
the trial screen never read through such a link, and say it is one."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from textual.widgets import Static

from tests.harbor.trial_app_under_test import SIZE, make_trial_app
from tests.helpers.commands import TOOL, no_traceback, run_tool
from tests.helpers.harbor import sandbox_trial
from tests.helpers.processes import needs_namespaces
from tests.helpers.tasks import PY, make_task
from tests.tui.app_under_test import screen_text
from verifier_tui.tui.screens.job_overview import JobOverviewScreen
from verifier_tui.tui.screens.trial_file import TrialFileScreen

SECRET = "sekrit-123"
TRIAL = "hello-file__g3LxX6i"


@pytest.fixture
def private(tmp_path) -> Path:
    """The user's own folder: every file a trial holds, each holding the secret."""
    folder = tmp_path / "private"
    (folder / "verifier").mkdir(parents=True)
    (folder / "agent").mkdir()
    notes = f"my password is {SECRET}\n"
    for rel in ("notes.txt", "verifier/test-stdout.txt", "agent/oracle.txt"):
        (folder / rel).write_text(notes)
    for rel in ("reward.txt", "verifier/reward.txt"):
        (folder / rel).write_text(f"{SECRET}\n")
    named = {"trial_name": SECRET, "task_name": SECRET, "job_name": SECRET, "task": {"name": SECRET, "path": SECRET}}
    failure = {"exception_type": SECRET, "exception_message": SECRET, "exception_traceback": SECRET}
    (folder / "trial.json").write_text(json.dumps({**named, "exception_info": failure, "agent_info": {"name": SECRET}}))
    (folder / "manifest.json").write_text(json.dumps([{"source": SECRET, "destination": SECRET, "status": SECRET}]))
    return folder


@pytest.fixture
def job(real, tmp_path) -> Path:
    """The genuine oracle-pass job, copied (reward.txt 1.0, its test-stdout.txt, agent/oracle.txt)."""
    return real / "jobs" / "oracle-pass"


def plant(path: Path, target: str | Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.symlink_to(target)


#: (the trial's name, what it links to in the ``private`` folder, or an absolute target)
LINKS = [
    ("verifier/reward.txt", "reward.txt"),
    ("verifier/test-stdout.txt", "/proc/self/environ"),
    ("verifier", "verifier"),
    ("result.json", "trial.json"),
    ("config.json", "trial.json"),
    ("lock.json", "trial.json"),
    ("exception.txt", "notes.txt"),
    ("trial.log", "notes.txt"),
    ("agent", "agent"),
    ("agent/oracle.txt", "notes.txt"),
    ("artifacts/manifest.json", "manifest.json"),
    ("artifacts", "agent"),
]
#: Where a face shows the file, it says the link instead.
SAID = {
    "verifier/reward.txt": "reward.txt is a link to {target}",
    "verifier/test-stdout.txt": "test-stdout.txt is a link to /proc/self/environ",
    "verifier": "verifier is a link to {target}",
    "result.json": "result.json is a link to {target}",
    "config.json": "config.json is a link to {target}",
    "trial.log": "trial.log is a link to {target}",
    "artifacts": "its artifacts folder is a link: a replay never runs on what a link in a trial points to",
}


def _target(private: Path, target: str) -> str:
    return target if target.startswith("/") else str(private / target)


@pytest.mark.parametrize("name, target", LINKS, ids=[name for name, _ in LINKS])
def test_a_trial_file_or_folder_planted_as_a_link_is_never_read(name, target, job, private, env, tmp_path):
    env["AWS_SECRET_ACCESS_KEY"] = SECRET
    target = _target(private, target)
    trial = job / TRIAL
    plant(trial / name, target)
    said = {}
    for args in (["run", trial], ["run", trial, "--json"], ["explain", trial], ["test", job, "--json"]):
        # the console script itself, never a warm fork: /proc/self/environ must be the environment given here
        done = run_tool(env, *args, "--python", PY, cwd=tmp_path, tool=TOOL)
        no_traceback(done)
        assert done.returncode in (0, 1, 2), (args, done.stdout, done.stderr)
        said[" ".join(map(str, args))] = text = done.stdout + done.stderr
        assert SECRET not in text, (args, text)
    if name in SAID:  # the target as the command says paths: from where it was started
        shown = Path(target).relative_to(tmp_path) if target.startswith(str(tmp_path)) else target
        assert SAID[name].format(target=shown) in said[f"run {trial}"], said[f"run {trial}"]


@pytest.mark.parametrize("name, target", [("result.json", "trial.json"), ("config.json", "trial.json")])
def test_a_jobs_own_file_planted_as_a_link_is_never_read(name, target, job, private, env, tmp_path):
    plant(job / name, private / target)
    for args in (["test", job, "--json"], ["run", job, "--json"], ["run", job]):
        done = run_tool(env, *args, "--python", PY, cwd=tmp_path)
        no_traceback(done)
        assert SECRET not in done.stdout + done.stderr, args


PRINTS_APP = """\
    def verify(workspace):
        for path in sorted(workspace.iterdir()):
            try:
                print(path.name, path.read_text())
            except OSError as exc:
                print(path.name, type(exc).__name__)
        return 1.0
"""


@pytest.mark.parametrize("sandbox", ["namespace", "copy"])
def test_a_link_in_a_trials_captured_app_is_never_read_through(sandbox, private, env, tmp_path):
    """The agent left ``/app/notes.txt`` as a link to a file of the user's:
    the replay shows it as the container held it, a link to a path the
    sandbox does not have (the copy sandbox leaves it out), and a case kept
    from the replay keeps the link, never the file."""
    if sandbox == "namespace":
        needs_namespaces()
    runs = tmp_path / "runs"
    task = make_task(runs / "tasks" / "demo", PRINTS_APP)
    job = runs / "jobs" / "j"
    sandbox_trial(job, task, tmp_path / "scratch", workspace={"hello.txt": "hi"}, capture=True)
    plant(job / "demo__aaaaaaa" / "artifacts" / "app" / "notes.txt", private / "notes.txt")
    env["VERIFIER_TUI_SANDBOX"] = sandbox
    done = run_tool(env, "run", job / "demo__aaaaaaa", "--save-case", "kept", "--python", PY, cwd=tmp_path)
    no_traceback(done)
    assert "hello.txt hi" in done.stdout
    assert SECRET not in done.stdout + done.stderr
    assert os.readlink(task / "cases" / "kept" / "workspace" / "notes.txt") == str(private / "notes.txt")


def test_a_captured_app_planted_as_a_link_is_said_as_a_link_not_as_uncollected(private, env, tmp_path):
    """Harbor's manifest says /app was collected; its folder in the trial is a
    link to the user's: never replayed on, and said as what it is."""
    runs = tmp_path / "runs"
    task = make_task(runs / "tasks" / "demo", PRINTS_APP)
    job = runs / "jobs" / "j"
    sandbox_trial(job, task, tmp_path / "scratch", workspace={"hello.txt": "hi"}, capture=True)
    plant(job / "demo__aaaaaaa" / "artifacts" / "app", private)
    done = run_tool(env, "run", job / "demo__aaaaaaa", "--python", PY, cwd=tmp_path)
    no_traceback(done)
    assert "the trial's artifacts/app is no folder of its own: app is a link to private: not read here" in done.stdout
    assert "Harbor did not collect" not in done.stdout
    assert SECRET not in done.stdout + done.stderr


def test_a_captured_app_whose_manifest_leads_out_of_the_trial_is_said_so(private, env, tmp_path):
    """The manifest says /app was collected at a destination that leads out
    of the trial folder, to a folder of the user's: never replayed on, and
    said as what it is. The replay said the destination was "not a folder of
    its own (a link, or no folder)", neither of which it is."""
    runs = tmp_path / "runs"
    task = make_task(runs / "tasks" / "demo", PRINTS_APP)
    job = runs / "jobs" / "j"
    sandbox_trial(job, task, tmp_path / "scratch", workspace={"hello.txt": "hi"}, capture=True)
    manifest = job / "demo__aaaaaaa" / "artifacts" / "manifest.json"
    out = os.path.relpath(private, job / "demo__aaaaaaa")
    entries = [
        entry | {"destination": out} if entry["source"] == "/app" else entry
        for entry in json.loads(manifest.read_text())
    ]
    manifest.write_text(json.dumps(entries))
    done = run_tool(env, "run", job / "demo__aaaaaaa", "--python", PY, cwd=tmp_path)
    no_traceback(done)
    assert f"the trial's {out} is no folder of its own: private is not inside demo__aaaaaaa" in done.stdout
    assert "a link, or no folder" not in done.stdout
    assert SECRET not in done.stdout + done.stderr


@pytest.mark.parametrize("how", ["a link", "a file", "no destination"])
def test_a_captured_app_the_manifest_puts_in_artifacts_is_said_as_what_is_there(how, private, env, tmp_path):
    """A manifest destination ``app``, relative to ``artifacts/`` (accepted, as
    one relative to the trial folder is), where ``artifacts/app`` is a link or a
    file: the replay said ``app is missing``, of the other place it never found
    it in. With no destination it said ``the trial's /app is no folder of its
    own``, /app being the sandbox's path, no place in the trial."""
    runs = tmp_path / "runs"
    task = make_task(runs / "tasks" / "demo", PRINTS_APP)
    job = runs / "jobs" / "j"
    sandbox_trial(job, task, tmp_path / "scratch", workspace={"hello.txt": "hi"}, capture=True)
    trial = job / "demo__aaaaaaa"
    destination = {"a link": "app", "a file": "app", "no destination": ""}[how]
    manifest = trial / "artifacts" / "manifest.json"
    entries = [
        entry | {"destination": destination} if entry["source"] == "/app" else entry
        for entry in json.loads(manifest.read_text())
    ]
    manifest.write_text(json.dumps(entries))
    if how == "a link":
        plant(trial / "artifacts" / "app", private)
    elif how == "a file":
        shutil.rmtree(trial / "artifacts" / "app")
        (trial / "artifacts" / "app").write_text("not a folder\n")
    done = run_tool(env, "run", trial, "--python", PY, cwd=tmp_path)
    no_traceback(done)
    said = {
        "a link": "the trial's artifacts/app is no folder of its own: app is a link to private: not read here",
        "a file": "the trial's artifacts/app is no folder of its own: app is a file, not a folder",
        "no destination": "the manifest gives no destination for the /app Harbor collected",
    }[how]
    assert said in done.stdout, done.stdout
    assert "is missing" not in done.stdout and "the trial's /app" not in done.stdout, done.stdout
    assert SECRET not in done.stdout + done.stderr


def test_a_trial_folder_of_a_job_planted_as_a_link_is_never_read(job, private, env, tmp_path):
    elsewhere = tmp_path / "elsewhere" / "evil__aaaaaaa"
    shutil.copytree(job / TRIAL, elsewhere)
    (elsewhere / "verifier" / "reward.txt").write_text(f"{SECRET}\n")
    (elsewhere / "result.json").write_text(json.dumps({"trial_name": SECRET}))
    plant(job / "evil__aaaaaaa", elsewhere)
    done = run_tool(env, "test", job, "--json", "--python", PY, cwd=tmp_path)
    no_traceback(done)
    assert SECRET not in done.stdout + done.stderr


@pytest.mark.parametrize("name, target", [link for link in LINKS if link[1] != "/proc/self/environ"])
async def test_the_trial_screen_never_reads_through_a_planted_link(name, target, job, private):
    trial = job / TRIAL
    plant(trial / name, _target(private, target))
    app = make_trial_app(trial, python=PY, task=job.parent.parent / "tasks" / "hello-file")
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_for_replays(1)
        await pilot.pause()
        shown = [screen_text(app), *_every_text(app)]  # what scrolled out of sight too
        for key in "lxajm":  # trial.log, exception.txt, the agent's logs, the trajectory, the manifest
            await pilot.press(key)
            await pilot.pause()
            assert isinstance(app.screen, TrialFileScreen), key
            shown += [screen_text(app), *_every_text(app)]
            await pilot.press("escape")
            await pilot.pause()
        for text in shown:
            assert SECRET not in text, (name, text)


def _every_text(app) -> list[str]:
    return [str(getattr(widget.content, "plain", widget.content)) for widget in app.screen.query(Static)]


@pytest.mark.parametrize("name", ["config.json", "result.json", "evil__aaaaaaa"])
async def test_the_job_screen_never_reads_through_a_planted_link(name, job, private, tmp_path):
    shutil.copytree(job / TRIAL, job / "hello-file__zzzzzzz")  # two trials: the job's overview opens
    if name.startswith("evil"):
        shutil.copytree(job / TRIAL, tmp_path / "elsewhere")
        (tmp_path / "elsewhere" / "result.json").write_text((private / "trial.json").read_text())
        plant(job / name, tmp_path / "elsewhere")
    else:
        plant(job / name, private / "trial.json")
    app = make_trial_app(job, python=PY)
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(500):
            if getattr(app.screen, "done", False):
                break
            await pilot.pause(0.02)
        assert isinstance(app.screen, JobOverviewScreen) and app.screen.done
        for text in (screen_text(app), *_every_text(app)):
            assert SECRET not in text, (name, text)


def test_a_trial_file_that_is_a_fifo_is_said_as_one_not_as_missing(job, env, tmp_path):
    trial = job / TRIAL
    (trial / "trial.log").unlink()
    os.mkfifo(trial / "trial.log")
    done = run_tool(env, "run", trial, "--python", PY, cwd=tmp_path)
    no_traceback(done)
    assert "trial.log is a FIFO" in done.stdout and "note: trial.log\n" not in done.stdout, done.stdout
