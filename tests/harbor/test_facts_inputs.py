"""The facts that explain a verdict (mode, Harbor's effective timeout,
durations) and the replay's inputs (workspace, Harbor's verifier env)."""

from __future__ import annotations

import pytest

from tests.helpers.harbor import PASSED, harbor_trial_config, make_job
from verifier_tui.engine.harbor.folders import open_harbor
from verifier_tui.engine.harbor.walkthrough import walk_trial
from verifier_tui.engine.task.discovery import read_task_config


def walk(runs, task, step=None, *, config=None, given=None, **kwargs):
    if config is not None:
        kwargs["config"] = harbor_trial_config(
            task_path=f"tasks/{task.name}", trial_name="t__aaaaaaa", trials_dir="jobs/j", **config
        )
    make_job(runs / "jobs" / "j", {"t__aaaaaaa": dict(task=task, **{**PASSED, **kwargs})})
    return walk_trial(open_harbor(runs / "jobs" / "j" / "t__aaaaaaa")[0], step, given=given)


@pytest.mark.parametrize(
    "toml, config, seconds",
    [
        ("", {}, 600.0),  # Harbor's default
        ("[verifier]\ntimeout_sec = 30.0\n", {}, 30.0),
        ("[verifier]\ntimeout_sec = 30.0\n", {"timeout_multiplier": 2.0}, 60.0),
        ("[verifier]\ntimeout_sec = 30.0\n", {"timeout_multiplier": 2.0, "verifier_timeout_multiplier": 0.5}, 15.0),
        ("[verifier]\ntimeout_sec = 30.0\n", {"override_timeout_sec": 90.0}, 90.0),
        ("[verifier]\ntimeout_sec = 30.0\n", {"override_timeout_sec": 90.0, "max_timeout_sec": 45.0}, 45.0),
        ("[verifier]\ntimeout_sec = 30.0\n", {"override_timeout_sec": 0.0}, 30.0),  # Harbor's `or`: 0 falls through
        # Harbor takes any float: asyncio.wait_for gives up at once on 0 or less (NaN: as 0), never on inf
        ("[verifier]\ntimeout_sec = -3\n", {}, -3.0),
        ("[verifier]\ntimeout_sec = 0\n", {"timeout_multiplier": 2.0}, 0.0),
        ("[verifier]\ntimeout_sec = nan\n", {}, 0.0),
        ("[verifier]\ntimeout_sec = inf\n", {}, 600.0),  # no limit in Harbor: the replay stops at the default
        ("[verifier]\ntimeout_sec = inf\n", {"timeout_multiplier": 2.0}, 600.0),  # no limit twice over: the same
        ("[verifier]\ntimeout_sec = inf\n", {"timeout_multiplier": -1.0}, 0.0),  # -inf: Harbor gives up at once
    ],
)
def test_the_effective_timeout_is_harbors_formula(task, runs, toml, config, seconds):
    facts = walk(runs, task(toml=toml), config=config).facts
    assert facts.timeout.seconds == seconds
    assert facts.timeout.for_replay == seconds


def test_the_words_say_how_the_timeout_was_computed(task, runs):
    words = walk(
        runs, task(timeout=30.0), config={"timeout_multiplier": 2.0, "max_timeout_sec": 20.0}
    ).facts.timeout.words
    assert words == "40 s (task.toml [verifier] timeout_sec 30, capped by max_timeout_sec 20, × timeout_multiplier 2)"


@pytest.mark.parametrize(
    "value, words",
    [
        ("-3", "-3 s, so Harbor gives up at once (task.toml [verifier] timeout_sec -3, × timeout_multiplier 1)"),
        ("nan", "nan s, so Harbor gives up at once (task.toml [verifier] timeout_sec nan, × timeout_multiplier 1)"),
        (
            "inf",
            "600 s (no limit in Harbor; the replay stops at Harbor's default 600: "
            "task.toml [verifier] timeout_sec inf, × timeout_multiplier 1)",
        ),
        # finite, but past what a count of milliseconds can hold: said, never an OverflowError
        ("1e306", "1e+306 s (task.toml [verifier] timeout_sec 1e+306, × timeout_multiplier 1)"),
    ],
)
def test_a_timeout_harbor_cannot_count_down_is_said_as_harbor_used_it(task, runs, value, words):
    assert walk(runs, task(toml=f"[verifier]\ntimeout_sec = {value}\n")).facts.timeout.words == words


@pytest.mark.parametrize("multiplier", [float("inf"), 1e308])
def test_a_multiplier_that_lifts_the_limit_stops_the_replay_at_harbors_default(task, runs, multiplier):
    """A job's config.json (a folder from elsewhere) with a multiplier of
    Infinity, or one that takes the timeout past any float: Harbor waits for
    ever, and the replay of the agent's code ran with no bound, as test JOB
    too, where timeout_sec = inf stops at Harbor's default."""
    timeout = walk(runs, task(timeout=30.0), config={"verifier_timeout_multiplier": multiplier}).facts.timeout
    assert timeout.seconds == 600.0
    assert timeout.words.startswith("600 s (no limit in Harbor; the replay stops at Harbor's default 600: ")
    assert "× verifier_timeout_multiplier" in timeout.words


@pytest.mark.parametrize("key", ["timeout_multiplier", "verifier_timeout_multiplier"])
def test_an_integer_past_any_float_in_config_json_is_no_number(task, runs, key):
    """Harbor's float field refuses it; float() of it raised OverflowError, a
    traceback in run, explain and test JOB."""
    facts = walk(runs, task(timeout=30.0), config={key: int("9" * 400)}).facts
    assert facts.timeout.seconds == 30.0
    override = walk(runs, task(timeout=30.0), config={"override_timeout_sec": 10**400}).facts
    assert override.timeout.seconds == 30.0


def test_a_steps_timeout_defaults_to_600_whatever_the_tasks_says(task, runs):
    """Harbor 0.26.0 reads a step's [steps.verifier] timeout_sec, whose model default is 600."""
    toml = (
        '[verifier]\ntimeout_sec = 30.0\n\n[[steps]]\nname = "a"\n\n[[steps]]\nname = "b"\n'
        "[steps.verifier]\ntimeout_sec = 5.0\n"
    )
    demo = task(toml=toml)
    steps = [dict(PASSED, name="a"), dict(PASSED, name="b")]
    assert walk(runs, demo, "a", mode=None, steps=steps).facts.timeout.seconds == 600.0
    assert walk(runs, demo, "b", mode=None, steps=steps).facts.timeout.seconds == 5.0


def test_a_timeout_the_task_does_not_set_is_said_as_harbors_default_not_as_the_tasks(task, runs):
    """The trial screen and run TRIAL said `task.toml [steps.verifier] of first timeout_sec 600 (Harbor's
    default 600)` of Harbor's own multi-step job, whose task sets no timeout_sec: the user looked in
    task.toml for a 600 it does not hold."""
    plain = walk(runs, task("plain", toml=""), config={"timeout_multiplier": 2.0}).facts.timeout.words
    assert plain == "1200 s (task.toml [verifier] sets no timeout_sec: Harbor's default 600, × timeout_multiplier 2)"
    demo = task(toml='[[steps]]\nname = "a"\n\n[[steps]]\nname = "b"\n[steps.verifier]\ntimeout_sec = 5.0\n')
    steps = [dict(PASSED, name="a"), dict(PASSED, name="b")]
    words = walk(runs, demo, "a", mode=None, steps=steps).facts.timeout.words
    assert words == (
        "600 s (task.toml [steps.verifier] of a sets no timeout_sec: Harbor's default 600, × timeout_multiplier 1)"
    )
    assert walk(runs, demo, "b", mode=None, steps=steps).facts.timeout.words == (
        "5 s (task.toml [steps.verifier] of b timeout_sec 5, × timeout_multiplier 1)"
    )


def test_the_timeout_of_a_step_task_toml_no_longer_lists_says_that_not_that_the_step_sets_none(task, runs):
    """A trial's step `b` that task.toml no longer lists (renamed `c`, its [steps.verifier] with it): the
    facts said `task.toml [steps.verifier] of b sets no timeout_sec: Harbor's default 600`, a table
    the file does not hold, beside the note that the task has no step 'b'."""
    demo = task(toml='[[steps]]\nname = "a"\n\n[[steps]]\nname = "c"\n[steps.verifier]\ntimeout_sec = 5.0\n')
    steps = [dict(PASSED, name="a"), dict(PASSED, name="b")]
    words = walk(runs, demo, "b", mode=None, steps=steps).facts.timeout.words
    assert words == "600 s (task.toml has no step 'b': Harbor's default 600, × timeout_multiplier 1)", words


@pytest.mark.parametrize("step", ["b", None])
def test_the_timeout_of_a_task_toml_that_is_not_toml_says_it_could_not_be_read(task, runs, step):
    """task.toml saved half-written (not TOML): the timeout said `task.toml has no step 'b'` (or that its
    [verifier] sets no timeout_sec), beside the note that task.toml could not be read, which may well
    list the step: it says the file could not be read, in the note's words."""
    demo = task(toml='[[steps]]\nname = "a"\n\n[[steps]]\nname = "b"\n')
    (demo / "task.toml").write_text('[[steps]]\nname = "a"\n\n[[steps]\nname = "b"\n')
    steps = {"mode": None, "steps": [dict(PASSED, name="a"), dict(PASSED, name="b")]} if step else {}
    words = walk(runs, demo, step, **steps).facts.timeout.words
    assert words == "600 s (task.toml could not be read: Harbor's default 600, × timeout_multiplier 1)", words


def test_the_timeout_is_unknown_without_the_task_but_the_sandbox_may_say(task, runs):
    import shutil

    from tests.helpers.harbor import harbor_exception

    demo = task()
    make_job(
        runs / "jobs" / "j",
        {
            "t__aaaaaaa": dict(
                task=demo,
                verifier_files={},
                exception=harbor_exception("VerifierTimeoutError", "Verifier execution timed out after 12.5 seconds"),
            )
        },
    )
    shutil.rmtree(demo)
    facts = walk_trial(open_harbor(runs / "jobs" / "j" / "t__aaaaaaa")[0]).facts
    assert facts.timeout.seconds is None and facts.timeout.for_replay == 12.5
    assert "the sandbox reported 12.5 s" in facts.timeout.words


def test_the_verifier_mode_is_read_where_harbor_recorded_it(task, runs):
    import json

    separate = task("sep", toml='[verifier]\nenvironment_mode = "separate"\n')
    assert walk(runs, separate, mode="separate").facts.mode_source == "result.json"
    # Without it in result.json (Harbor before 0.21), lock.json's resolved mode...
    result = runs / "jobs" / "j" / "t__aaaaaaa" / "result.json"
    data = json.loads(result.read_text())
    del data["verifier_environment_mode"]
    result.write_text(json.dumps(data))
    facts = walk_trial(open_harbor(result.parent)[0]).facts
    assert (facts.verifier_mode, facts.mode_source) == ("separate", "lock.json")
    # ...and without either, task.toml as Harbor resolves it: an environment implies separate.
    facts = walk(runs, task("env", toml="[verifier.environment]\ndocker_image = 'x'\n"), mode=None).facts
    assert (facts.verifier_mode, facts.mode_source) == ("separate", "task.toml")


def test_the_verifier_mode_comes_from_task_toml_for_a_step(task, runs):
    toml = '[[steps]]\nname = "a"\n[steps.verifier]\nenvironment_mode = "separate"\n\n[[steps]]\nname = "b"\n'
    demo = task(toml=toml)
    steps = [dict(PASSED, name="a"), dict(PASSED, name="b")]
    a = walk(runs, demo, "a", mode=None, steps=steps).facts
    b = walk(runs, demo, "b", mode=None, steps=steps).facts
    assert (a.verifier_mode, a.mode_source) == ("separate", "task.toml")
    assert b.verifier_mode == "shared"


def test_the_verifier_phase_duration_is_read_from_the_timings(task, runs):
    assert walk(runs, task(), verifier_seconds=2.5).facts.verifier_duration_s == pytest.approx(2.5)


def test_separate_mode_with_app_captured_is_exactly_what_the_verifier_saw(task, runs):
    w = walk(
        runs,
        task(toml='artifacts = ["/app"]\n[verifier]\nenvironment_mode = "separate"\n'),
        mode="separate",
        app={"hello.txt": "hello\n"},
    )
    assert w.workspace.exact is True and (w.workspace.path / "hello.txt").read_text() == "hello\n"
    assert "exactly what the verifier saw" in w.workspace.words


def test_shared_mode_with_app_captured_is_a_snapshot(task, runs):
    w = walk(runs, task(toml='artifacts = ["/app"]\n'), app={"hello.txt": "hello\n"})
    assert w.workspace.exact is False and "snapshot" in w.workspace.words


def test_shared_mode_without_app_has_no_workspace_and_says_what_to_give(task, runs):
    w = walk(runs, task())
    assert w.workspace.path is None
    assert (
        "did not capture /app" in w.workspace.words
        and "--workspace DIR, --case NAME or --stand-in empty" in w.workspace.words
    )


def test_the_verifier_env_is_built_as_harbor_builds_it(task, runs, monkeypatch):
    monkeypatch.delenv("API_TOKEN", raising=False)  # not in the shell: the advice gives it a value
    toml = (
        '[environment]\nenv = { BASE = "container", SHARED = "from-environment", HOME_DIR = "${HOME}" }\n\n'
        '[verifier]\nenv = { SHARED = "from-verifier", STRICT = "1", MODEL = "${MODEL_NAME:-small}", '
        'TOKEN_FILE = "${API_TOKEN}", MIXED = "pre-${HOME}" }\n'
    )
    w = walk(runs, task(toml=toml), config={"verifier_env": {"STRICT": "0"}}, given={"HOME": "/home/me"})
    env = w.env.values
    assert env["BASE"] == "container" and env["HOME_DIR"] == "/home/me"  # ${HOME}: --env HOME's
    assert env["SHARED"] == "from-verifier"  # [verifier] env over [environment] env
    assert env["STRICT"] == "0"  # the job's verifier env over the task's
    assert env["MODEL"] == "small"  # ${VAR:-default}
    assert env["MIXED"] == "pre-${HOME}"  # only a whole-value template is resolved
    assert "TOKEN_FILE" not in env
    assert w.env.missing == (
        "API_TOKEN is not taken from your environment in a replay (TOKEN_FILE = '${API_TOKEN}' in task.toml "
        "[verifier] env): the replay runs without TOKEN_FILE; --env API_TOKEN=VALUE gives it",
    )


def test_a_redacted_secret_is_taken_from_env_alone_or_named(task, runs, monkeypatch):
    """A trial is untrusted: a redacted OPENAI_API_KEY, or a ``${JUDGE_TOKEN}``, takes nothing of the
    shell's (which holds both here); only what --env passes."""
    monkeypatch.setenv("JUDGE_TOKEN", "t0k-of-the-shell")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-of-the-shell")
    config = {"verifier_env": {"OPENAI_API_KEY": "sk-a****xyz", "JUDGE_TOKEN": "${JUDGE_TOKEN}"}}
    w = walk(runs, task(), config=config)
    assert w.env.values == {}
    assert [said.split(" ", 1)[0] for said in w.env.missing] == ["OPENAI_API_KEY", "JUDGE_TOKEN"]
    assert "redacted" in w.env.missing[0] and "--env OPENAI_API_KEY passes yours" in w.env.missing[0]
    w = walk(runs, task("other"), config=config, given={"JUDGE_TOKEN": "t0k", "OPENAI_API_KEY": "sk-real"})
    assert w.env.values == {"OPENAI_API_KEY": "sk-real", "JUDGE_TOKEN": "t0k"} and w.env.missing == ()


def test_env_fills_a_template_with_a_default_as_harbors_host_would(task, runs):
    """``--env CUTOFF`` filled ``${CUTOFF}`` but left ``${CUTOFF:-0.6}`` at its default: Harbor's
    resolve_env_vars takes CUTOFF from its host for both forms, the default only when it is unset."""
    toml = '[verifier]\nenv = { BARE = "${CUTOFF}", WITH_DEFAULT = "${CUTOFF:-0.6}", OTHER = "${LIMIT:-3}" }\n'
    w = walk(runs, task(toml=toml), given={"CUTOFF": "0.9"})
    assert w.env.values == {"BARE": "0.9", "WITH_DEFAULT": "0.9", "OTHER": "3"}
    said = {f.name: f.sentence({"CUTOFF": "0.9"}) for f in w.env.filled}
    assert said["WITH_DEFAULT"].endswith("the replay takes WITH_DEFAULT from --env CUTOFF"), said
    assert "from the template's default" in str(said["OTHER"])


def test_env_that_only_fills_templates_is_said_and_read_from_the_last_table(task, runs):
    """``--env VTUI_Y`` given to fill ``Y = "${VTUI_Y}"`` is not passed as itself, and nothing said so. And
    ``Z = "${VTUI_X}"`` overwritten by the job's ``Z = "lit"`` fills nothing, yet ``--env VTUI_X`` was held back
    as if it filled Z: only the last table writing each key decides which templates are read."""
    toml = '[verifier]\nenv = { Z = "${VTUI_X}", Y = "${VTUI_Y}", V = "${VTUI_Y:-d}" }\n'
    w = walk(runs, task(toml=toml), config={"verifier_env": {"Z": "lit"}}, given={"VTUI_X": "val-x", "VTUI_Y": "val-y"})
    assert w.env.values == {"Z": "lit", "Y": "val-y", "V": "val-y"}
    assert w.env.fills_only == ("VTUI_Y",)
    assert w.env.fills_note is not None and w.env.fills_note.startswith("--env VTUI_Y only filled V, Y: "), w.env
    assert "the verifier does not get VTUI_Y" in w.env.fills_note and "val-" not in w.env.fills_note
    assert walk(runs, task("other", toml=toml), given={"VTUI_Q": "q"}).env.fills_note is None


def test_the_advice_for_a_template_left_out_can_be_followed(task, runs, monkeypatch):
    """ "--env VAR passes yours" was said of a VAR the shell does not have (``--env VAR`` is then refused:
    "not set in your environment") and of ``${SECRET-x}``, whose name Harbor's pattern reads as
    ``SECRET-x``, which no --env takes."""
    monkeypatch.delenv("VTUI_UNSET_X", raising=False)
    monkeypatch.setenv("VTUI_SET_X", "here")
    toml = '[verifier]\nenv = { A = "${VTUI_UNSET_X}", B = "${SECRET-x}", C = "${VTUI_SET_X}" }\n'
    said = {line.split("(", 2)[1].split(" ", 1)[0]: line for line in walk(runs, task(toml=toml)).env.missing}
    assert said["A"].endswith("the replay runs without A; --env VTUI_UNSET_X=VALUE gives it"), said
    assert said["C"].endswith("the replay runs without C; --env VTUI_SET_X passes yours"), said
    assert said["B"].endswith("the replay runs without B, and no --env gives it"), said  # no option to follow
    assert "'SECRET-x', which is no variable name" in said["B"] and "ValueError" in said["B"], said


def test_a_broken_task_toml_is_named_and_harbors_defaults_assumed(task, runs):
    demo = task(toml="[verifier\n")
    w = walk(runs, demo)
    # The same line as `run` says of that task (one reader: engine/task/config.py).
    assert read_task_config(demo).problems[0] in w.notes
    assert any("task.toml could not be read" in note for note in w.notes)
    assert w.facts.timeout.seconds == 600.0
