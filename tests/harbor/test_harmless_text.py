"""Text from a trial's files on the trial's screens and in the headless
commands: names from config.json and result.json, the rewards Harbor
recorded, the reward file in verifier/. A right-to-left override (U+202E)
among them never reaches the terminal (it is shown as ``<U+202E>``), and a
line break in a name is written as ``\\n`` on its row, never a row of its
own; ``--json`` keeps every name as it is (JSON escapes it)."""

from __future__ import annotations

import json
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.harbor.job_copies import copy_job_files, copy_trial
from tests.harbor.trial_app_under_test import make_trial_app
from tests.helpers.commands import no_traceback, run_tool
from tests.tui.app_under_test import screen_text
from verifier_tui.tui.screens.job_overview import JobOverviewScreen

PY = sys.executable
RLO = "\u202e"


def hostile(result: dict) -> None:
    result["task_name"] = f"separate{RLO}-mode"
    result["agent_info"]["name"] = f"ora{RLO}cle"
    result["verifier_result"] = {"rewards": {f"re{RLO}ward": 1.0}}


async def test_a_right_to_left_override_from_a_trial_never_reaches_the_terminal(real, tmp_path):
    job = copy_job_files(real, real / "jobs" / "hostile", source="separate-mode")
    trial = copy_trial(real, job, f"evil{RLO}\nname__a", source="separate-mode", edit=hostile)
    (trial / "verifier" / "reward.json").write_text(json.dumps({f"re{RLO}ward": 1.0}))
    app = make_trial_app(trial, python=PY)
    async with app.run_test(size=(160, 50)) as pilot:
        await app.wait_for_replays(1)
        await pilot.pause()
        shown = screen_text(app)
        assert RLO not in shown
        assert "trial evil<U+202E>\\nname__a · task separate<U+202E>-mode · agent ora<U+202E>cle" in shown  # the header
        assert 'Harbor scored "re<U+202E>ward" 1.0' in shown  # quoted: not the key as written
        assert '"re<U+202E>ward": 1.0' in shown  # verifier/reward.json


async def test_a_job_with_names_harbor_never_writes_is_shown_harmlessly(real, tmp_path):
    job = copy_job_files(real, real / "jobs" / f"hos{RLO}tile\njob", source="separate-mode")  # a job is its folder
    copy_trial(real, job, "separate-mode__good000", source="separate-mode")
    copy_trial(real, job, f"evil{RLO}\nname__a", source="separate-mode", edit=hostile)
    app = make_trial_app(job, python=PY)
    async with app.run_test(size=(160, 50)) as pilot:
        while not (isinstance(app.screen, JobOverviewScreen) and app.screen.done):
            await pilot.pause(0.05)
        await pilot.pause()
        shown = screen_text(app)
        assert RLO not in shown
        assert "job hos<U+202E>tile\\njob" in shown and "evil<U+202E>\\nname__a" in shown


def named(name: str):
    def edit(result: dict) -> None:
        result["trial_name"] = name
        result["task_name"] = f"separate-mode\n{RLO}"
        result["agent_info"]["name"] = f"oracle\n✓  forged-agent{RLO}"

    return edit


def test_trial_and_task_names_from_a_job_stay_on_their_rows(real, env, tmp_path):
    job = copy_job_files(real, real / "jobs" / f"names\n{RLO}forged-job", source="separate-mode")
    copy_trial(real, job, "separate-mode__good000", source="separate-mode")
    trial_name = "evil\n✓  separate-mode__forged  1.0  1.0  same" + RLO  # a folder's name too, on Linux
    evil = copy_trial(real, job, trial_name, source="separate-mode")
    for file in ("config.json", "result.json"):
        data = json.loads((evil / file).read_text())
        data["trial_name"] = trial_name
        if file == "result.json":
            named(trial_name)(data)
        (evil / file).write_text(json.dumps(data))

    tested = run_tool(env, "test", job, "--python", PY, cwd=tmp_path)
    no_traceback(tested)
    lines = tested.stdout.splitlines()
    assert lines[0].startswith("job names\\n<U+202E>forged-job · 2 trial(s)"), lines
    assert [line.split()[1] for line in lines[2:4]] == ["evil\\n✓", "separate-mode__good000"], lines
    assert "2 agree, 0 differ, 0 not compared" in lines
    assert not any(line.lstrip().startswith("✓  separate-mode__forged") for line in lines), lines

    overview = run_tool(env, "run", job, cwd=tmp_path)  # several trials, none chosen: the overview
    no_traceback(overview)
    assert not any("forged-agent" in line and "oracle" not in line for line in overview.stdout.splitlines())
    assert not any(
        line.lstrip().startswith(("✓  separate-mode__forged", "✓  forged")) for line in overview.stdout.splitlines()
    )

    for done in (tested, overview, run_tool(env, "run", evil, "--python", PY, cwd=tmp_path)):
        assert RLO not in done.stdout + done.stderr
    header = run_tool(env, "run", evil, "--python", PY, cwd=tmp_path).stdout.splitlines()[0]
    assert header.startswith("trial evil\\n✓  separate-mode__forged  1.0  1.0  same<U+202E> · task separate-mode\\n")

    data = json.loads(run_tool(env, "test", job, "--python", PY, "--json", cwd=tmp_path).stdout)
    assert data["name"] == f"names\n{RLO}forged-job"
    assert [t["trial"]["name"] for t in data["trials"]] == [trial_name, "separate-mode__good000"]


def test_what_a_trial_recorded_never_forges_a_line_nor_floods_one(task, runs, env, tmp_path):
    from tests.helpers.harbor import harbor_exception, make_job

    demo = task()
    many = {f"k{i}": 1.0 for i in range(10_000)}
    job = make_job(
        runs / "jobs" / "j",
        {
            "demo__exc": dict(
                task=demo,
                rewards={"reward": 1.0},
                exception=harbor_exception("Evil\nverdict: FORGED", "msg\nFORGED LINE"),
                verifier_files={"test-stdout.txt": "", "reward.txt": "1.0"},
            ),
            "demo__key": dict(
                task=demo,
                rewards={"a\nFORGED: 1.0 same": 0.5},
                verifier_files={"test-stdout.txt": "", "reward.json": '{"a\\nFORGED: 1.0 same": 0.5}'},
            ),
            "demo__many": dict(
                task=demo, rewards=many, verifier_files={"test-stdout.txt": "", "reward.json": json.dumps(many)}
            ),
        },
    )
    other = make_job(
        runs / "jobs" / "k",
        {"demo__many": dict(task=demo, rewards=many, verifier_files={"test-stdout.txt": "", "reward.txt": "1.0"})},
    )
    outputs = [
        run_tool(env, "compare", job, other, cwd=tmp_path),
        run_tool(env, "run", job, cwd=tmp_path),
        run_tool(env, "run", job / "demo__exc", "--python", PY, cwd=tmp_path),
        run_tool(env, "run", job / "demo__many", "--python", PY, cwd=tmp_path),
        run_tool(env, "test", job, "--stand-in", "empty", "--python", PY, cwd=tmp_path),
    ]
    for done in outputs:
        no_traceback(done)
        lines = done.stdout.splitlines()
        assert not [line for line in lines if line.startswith(("FORGED", "verdict: FORGED"))], done.stdout
        assert max(map(len, lines)) < 1_000, done.stdout[:2000]  # 10,000 keys: the first 20 and a count
    assert "Evil\\nverdict: FORGED" in outputs[1].stdout
    assert "k19 1.0, … 9,980 more" in outputs[3].stdout


async def test_an_exception_harbor_recorded_stays_on_its_line_on_the_trial_screen(task, runs):
    from tests.helpers.harbor import harbor_exception, make_job

    job = make_job(
        runs / "jobs" / "j",
        {
            "demo__exc": dict(
                task=task(),
                rewards={"reward": 1.0},
                exception=harbor_exception("Evil\nverdict: FORGED", "msg\nFORGED LINE"),
                verifier_files={"test-stdout.txt": "", "reward.txt": "1.0"},
            )
        },
    )
    app = make_trial_app(job / "demo__exc", python=PY)
    async with app.run_test(size=(160, 50)) as pilot:
        await app.wait_for_replays(1)
        await pilot.pause()
        shown = screen_text(app)
        assert "Evil\\nverdict: FORGED" in shown
        assert not [line for line in shown.splitlines() if line.strip("│ ").startswith(("verdict: FORGED", "FORGED"))]


def test_a_trials_long_words_are_cut_with_a_count(task, runs, env, tmp_path):
    from tests.helpers.harbor import harbor_exception, make_job

    job = make_job(
        runs / "jobs" / "j",
        {
            "demo__long": dict(
                task=task(),
                rewards={"reward": 1.0},
                exception=harbor_exception("E" * 20_000, "m" * 20_000),
                verifier_files={"test-stdout.txt": "", "reward.txt": "1.0"},
            )
        },
    )
    for args in (("run", job), ("run", job / "demo__long", "--python", PY), ("test", job, "--python", PY)):
        done = run_tool(env, *args, cwd=tmp_path)
        no_traceback(done)
        assert max(map(len, done.stdout.splitlines())) < 3_000, args  # a 20 KB exception type: not a 20 KB line
        assert "characters left out" in done.stdout, args


#: Reward keys a person reads as written, each holding one invisible formatting character a
#: script needs (a zero-width joiner in a family emoji, a zero-width non-joiner in Persian, a soft
#: hyphen): none can act on a terminal nor start a line.
READABLE_KEYS = (
    "\U0001f468\u200d\U0001f469\u200d\U0001f467",
    "\u0646\u0645\u0631\u0647\u200c\u06a9\u0644",
    "re\u00adward",
)


def _listed(task, runs, env, tmp_path, rewards):
    """What ``run JOB``, ``run TRIAL`` and ``test JOB`` print of a job whose one trial recorded
    ``rewards``, and the rewards ``run TRIAL --json`` gives."""
    from tests.helpers.harbor import make_job

    verifier_files = {"test-stdout.txt": "", "reward.json": json.dumps(rewards)}
    job = make_job(runs / "jobs" / "j", {"demo__key": dict(task=task, rewards=rewards, verifier_files=verifier_files)})
    outputs = [
        run_tool(env, "run", job, cwd=tmp_path),
        run_tool(env, "run", job / "demo__key", "--python", PY, cwd=tmp_path),
        run_tool(env, "test", job, "--stand-in", "empty", "--python", PY, cwd=tmp_path),
    ]
    listed = run_tool(env, "run", job / "demo__key", "--python", PY, "--json", cwd=tmp_path)
    return outputs, json.loads(listed.stdout)["sandbox"]["rewards"]


def test_a_readable_reward_key_is_named_as_written_in_every_listing(task, runs, env, tmp_path):
    """A reward key holding a joiner or a soft hyphen was listed as JSON's ``\\u200d`` escapes by
    ``run JOB``, ``run TRIAL`` and ``test JOB``, unreadable; it is named as written (a reward dict
    shown as JSON still escapes it), and ``--json`` keeps it raw."""
    rewards = {"reward": 1.0, **dict.fromkeys(READABLE_KEYS, 0.5)}
    outputs, listed = _listed(task(), runs, env, tmp_path, rewards)
    for done in outputs:
        no_traceback(done)
        escaped = [line for line in done.stdout.splitlines() if "\\u" in line and "{" not in line]  # JSON escapes
        assert not escaped, done.stdout
        assert all(key in done.stdout for key in READABLE_KEYS), done.stdout
    assert set(READABLE_KEYS) <= set(listed), listed


def test_reward_keys_that_differ_by_an_invisible_character_look_different(task, runs, env, tmp_path):
    """Keys ``reward`` and ``reward`` with a zero-width space (or a word joiner, a joiner beside
    nothing it joins) were listed as written by ``run JOB``, ``run TRIAL`` and ``test JOB``: two
    keys that look one. The invisible character is named (``<U+200B>``, ``\\u200b`` in a reward
    dict shown as JSON); a joiner inside an emoji stays as written; ``--json`` keeps keys raw."""
    sneaky = ("reward\u200b", "re\u2060ward", "reward\u200d", "\ufeffreward")
    rewards = {"reward": 1.0, **dict.fromkeys(sneaky, 0.0), READABLE_KEYS[0]: 0.5}
    outputs, listed = _listed(task(), runs, env, tmp_path, rewards)
    for done in outputs:
        no_traceback(done)
        assert not any(c in done.stdout for c in "\u200b\u2060\ufeff"), done.stdout
        assert "reward\u200d" not in done.stdout, done.stdout
        assert READABLE_KEYS[0] in done.stdout, done.stdout
    assert '"reward<U+200B>"' in outputs[0].stdout and '"re<U+2060>ward"' in outputs[0].stdout, outputs[0].stdout
    assert '"reward<U+200B>" 0.0' in outputs[1].stdout, outputs[1].stdout
    assert set(sneaky) <= set(listed), listed


def test_readable_reward_keys_are_readable_in_a_run_s_verdict(tmp_path, env):
    """``run TASK`` of a verifier scoring ``{"café": 1.0, "日本": 0.5}`` printed its verdict as
    ``{"caf\\u00e9": 1.0, "\\u65e5\\u672c": 0.5}``; the verdict line now shows the keys as
    written, still JSON, a zero-width space alone escaped, and ``--json`` is exact."""
    from tests.helpers.tasks import make_task

    demo = make_task(
        tmp_path / "t",
        'def verify(workspace):\n    return {"reward": 1.0, "caf\\u00e9": 1.0, "\\u65e5\\u672c": 0.5, "x\\u200b": 0}\n',
    )
    done = run_tool(env, "run", demo, "--python", PY, cwd=tmp_path)
    no_traceback(done)
    assert 'verdict: {"reward": 1.0, "café": 1.0, "日本": 0.5, "x\\u200b": 0}' in done.stdout, done.stdout
    listed = run_tool(env, "run", demo, "--python", PY, "--json", cwd=tmp_path)
    assert json.loads(listed.stdout)["rewards"] == {"reward": 1.0, "café": 1.0, "日本": 0.5, "x\u200b": 0}


#: Characters Unicode calls default-ignorable that Python's isprintable() still counts as printable
#: (variation selectors, the combining grapheme joiner, Hangul fillers): each draws nothing.
PRINTABLE_YET_INVISIBLE = ("\ufe00", "\ufe0f", "\U000e0100", "\u034f", "\u115f", "\u1160", "\u3164", "\uffa0")


def test_keys_that_differ_by_an_invisible_mark_or_joiner_look_different(task, runs, env, tmp_path):
    """``reward`` beside ``reward`` + a variation selector, and ``日本`` beside ``日`` + a joiner +
    ``本``, were listed as two pairs that look alike: the selector counts as printable and a joiner
    was kept between any two characters that are not ASCII. Each is named (``<U+FE0F>``); a
    joiner stays only inside an emoji or a word of a joining script."""
    rewards = {"reward": 1.0, "reward\ufe0f": 0.0, "日本": 1.0, "日\u200d本": 0.0}
    outputs, listed = _listed(task(), runs, env, tmp_path, rewards)
    for done in outputs:
        no_traceback(done)
        assert "\ufe0f" not in done.stdout and "\u200d" not in done.stdout, done.stdout
    assert '"reward<U+FE0F>"' in outputs[0].stdout and '"日<U+200D>本"' in outputs[0].stdout, outputs[0].stdout
    assert set(rewards) <= set(listed), listed


@pytest.mark.parametrize("mark", PRINTABLE_YET_INVISIBLE)
def test_a_key_holding_an_invisible_mark_is_named_with_it(mark):
    from verifier_tui.engine.verdict import key_shown, readable_json

    assert key_shown(f"re{mark}ward") == f'"re<U+{ord(mark):04X}>ward"'
    assert mark not in readable_json({f"re{mark}ward": 1.0})


@pytest.mark.parametrize(
    ("key", "shown"),
    [
        ("r\u200b\u200d\u200bx", '"r<U+200B><U+200D><U+200B>x"'),  # a joiner between what draws nothing
        ("\u00e9\u200d\u00e9", '"\u00e9<U+200D>\u00e9"'),  # Latin does not join
        ("reward\ufe0f", '"reward<U+FE0F>"'),  # nothing to present as an emoji
        ("x\ufe0f\u200d\U0001f525", '"x<U+FE0F><U+200D>\U0001f525"'),
    ],
)
def test_a_joiner_or_selector_that_joins_nothing_is_named(key, shown):
    from verifier_tui.engine.verdict import key_shown

    assert key_shown(key) == shown


@pytest.mark.parametrize(
    "key",
    [
        *READABLE_KEYS,
        "\u2764\ufe0f",  # a red heart, presented as an emoji
        "\u2764\ufe0f\u200d\U0001f525",  # a heart on fire
        "\U0001f469\U0001f3fd\u200d\U0001f4bb",  # a woman technologist, her skin tone given
        "\u0915\u094d\u200d\u0937",  # Devanagari: a half form asked for
        "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",  # Persian: a non-joiner inside a word
    ],
)
def test_a_joiner_or_selector_inside_what_it_joins_stays(key):
    from verifier_tui.engine.verdict import key_shown, readable_json

    assert key_shown(key) == key
    assert readable_json({key: 1}) == json.dumps({key: 1}, ensure_ascii=False)


def test_only_the_characters_that_may_draw_nothing_are_judged(monkeypatch):
    """A trial's reward key of 5 MB of ``é`` had every character judged one at a time in Python
    (25 million judgements: ``run TRIAL --task`` took 8.2 s where it had taken 2.35 s). One regex
    now finds what may draw nothing beside one thing and not another, and only that is judged."""
    from verifier_tui.engine import plain

    judged = []
    judge = plain._joins
    monkeypatch.setattr(plain, "_joins", lambda text, at: judged.append(text[at]) or judge(text, at))
    key = "\u00e9" * 100_000 + "\u200b" + "\u65e5\u672c" * 1_000 + "\u2764\ufe0f" + "\u00a0"
    shown = plain.spelled_out(key, plain.code_point)
    assert shown == "\u00e9" * 100_000 + "<U+200B>" + "\u65e5\u672c" * 1_000 + "\u2764\ufe0f<U+00A0>"
    assert judged == ["\ufe0f"]  # a zero-width space draws nothing wherever it is
    judged.clear()
    assert plain.spelled_out("\u00e9" * 100_000, plain.code_point) == "\u00e9" * 100_000
    assert judged == []


#: Characters whose judgement depends on what is beside them, and what they may sit beside.
_AROUND = (
    "\u200b\u200c\u200d\ufe0e\ufe0f\u00ad\u034f\u3164\U000e0100\u2764\U0001f468\U0001f3fd"
    "\u0646\u0915\u094d\u65e5\u00e9a \n\x7f\ud800\udcff\U00040000"
    "\U0001fae8\U0001f3f4\U000e0067\U000e0062\U000e007f\U0001fc00"
)


@given(st.text(st.one_of(st.characters(), st.sampled_from(_AROUND))))
def test_what_is_spelled_out_is_each_character_judged_in_turn(text):
    """The regex that finds what to judge misses nothing: the text comes out as it would had each
    of its characters been judged."""
    import re

    from verifier_tui.engine import plain

    flags = {at for found in re.finditer(plain._FLAG, text) for at in range(*found.span())}

    def unseen(at: int) -> bool:
        c = text[at]
        kept = at in flags or (c in "\u200c\u200d\ufe0e\ufe0f" and plain._joins(text, at))
        return plain._unseen(c) and not kept

    each = "".join(plain.code_point(c) if unseen(at) else c for at, c in enumerate(text))
    assert plain.spelled_out(text, plain.code_point) == each


def test_no_pattern_grows_with_the_text(monkeypatch):
    """A 100,000-character key of every other unassigned code point took 14 s (0.07 s before): a
    character class was built with a range per such code point, and each character of the text was
    matched against all of them. The patterns are now the same whatever the text."""
    import re

    from verifier_tui.engine import plain

    patterns = []

    def spied(name):
        real = getattr(re, name)
        return lambda pattern, *args, **kwargs: patterns.append(str(pattern)) or real(pattern, *args, **kwargs)

    for name in ("compile", "sub", "search", "match", "finditer", "findall"):
        monkeypatch.setattr(plain.re, name, spied(name))
    unassigned = [chr(code) for code in range(0x40000, 0x40000 + 2 * 50_000, 2)]  # plane 4: none assigned
    key = "".join(f"a{c}" for c in unassigned)
    shown = plain.spelled_out(key, plain.code_point)
    assert shown == "".join(f"a{plain.code_point(c)}" for c in unassigned)
    assert max(map(len, patterns), default=0) < 5_000  # the fixed ones; a range per code point: 100,000s


@pytest.mark.parametrize(
    ("key", "shown"),
    [
        ("temp\u00b0\ufe0fC", '"temp\u00b0<U+FE0F>C"'),  # `temp°C` and this printed alike
        ("\u20ac\ufe0e", '"\u20ac<U+FE0E>"'),
        ("\u2192\ufe0f", '"\u2192<U+FE0F>"'),  # → has no emoji form; ↔ has
        ("\u00b0\u200d\u20ac", '"\u00b0<U+200D>\u20ac"'),
        ("\u2764\ufe0f\u200d\u20ac", '"\u2764\ufe0f<U+200D>\u20ac"'),  # a heart joined to no pictograph
    ],
)
def test_a_selector_or_joiner_beside_a_symbol_no_emoji_is_made_of_is_named(key, shown):
    """A variation selector after ``°``, ``€`` or ``→``, a joiner between two such, was kept: any
    symbol that is not ASCII counted as an emoji's, and ``temp°C`` and ``temp°`` U+FE0F ``C``
    printed alike. Only an Extended_Pictographic character (Unicode's emoji-data.txt) takes one."""
    from verifier_tui.engine.verdict import key_shown

    assert key_shown(key) == shown


@pytest.mark.parametrize("key", ["\u2194\ufe0f", "\u00a9\ufe0f", "\u2622\ufe0f", "\U0001f9d1\u200d\U0001f680"])
def test_a_selector_or_joiner_in_an_emoji_stays(key):
    from verifier_tui.engine.verdict import key_shown

    assert key_shown(key) == key


@pytest.mark.parametrize(
    "key",
    [
        "1\ufe0f\u20e3",  # keycap digit one
        "#\ufe0f\u20e3",
        "*\ufe0f\u20e3",
        "\U00011013\U00011046\u200d\U00011032",  # Brahmi: a conjunct asked for
        "\U00010d04\u200d\U00010d05",  # Hanifi Rohingya, written joined
        "\u1780\u200c\u17b6",  # Khmer: a non-joiner before a vowel sign
        "\U00011013\U00011046\u200c\U00011032",
        "\u1700\u1714\u200d\u1701",  # Tagalog, of the Brahmi family too
        "\ua930\ua953\u200d\ua931",  # Rejang
        "\u1950\u200d\u1951",  # Tai Le
        "\u1980\u200c\u19b0",  # New Tai Lue
    ],
)
def test_a_keycap_and_a_joiner_in_a_script_past_the_bmp_stay(key):
    """``1️⃣`` printed as ``"1<U+FE0F>⃣"``: a digit is no pictograph, yet U+FE0F U+20E3 after it
    is an emoji (a keycap). A joiner in Brahmi, Hanifi Rohingya or Khmer was named too: the
    joining scripts were listed up to Mongolian, in the first plane only."""
    from verifier_tui.engine.verdict import key_shown

    assert key_shown(key) == key


@pytest.mark.parametrize(
    ("key", "shown"),
    [("1\ufe0f", '"1<U+FE0F>"'), ("a\ufe0f\u20e3", '"a<U+FE0F>\u20e3"'), ("\ufe0f\u20e3", '"<U+FE0F>\u20e3"')],
)
def test_a_selector_after_a_digit_that_no_keycap_follows_is_named(key, shown):
    from verifier_tui.engine.verdict import key_shown

    assert key_shown(key) == shown


def test_a_huge_key_is_named_in_one_pass_and_cut_once(monkeypatch):
    """A trial's one reward key of 5 MB of U+200B made ``run JOB/trial`` take 13.9 s (4.35 s
    before keys were spelled out) and stalled the trial screen 55 s: each character was judged
    one at a time in Python. What draws nothing is now named in one pass, a joiner with nothing it
    could join beside it unjudged, and a key is cut once, as a long line is; one of megabytes is judged
    in the part shown however many faces name it (the trial screen, some eight times: judged whole,
    13 s again; kept in a cache, 64 such keys held 651 MB)."""
    from verifier_tui.engine import plain, verdict

    judged: list[int] = []
    joins = plain._joins
    monkeypatch.setattr(plain, "_joins", lambda text, at: judged.append(at) or joins(text, at))
    spelled: list[int] = []
    spell = verdict.spelled_out
    monkeypatch.setattr(verdict, "spelled_out", lambda text, how: spelled.append(len(text)) or spell(text, how))
    assert plain.spelled_out("\u200b" * 100_000, plain.code_point) == "<U+200B>" * 100_000
    shown = verdict.key_shown("\u200d" * 100_000)
    assert verdict.key_shown("\u200d" * 100_000) == shown  # named again by each face
    assert shown.startswith('"<U+200D><U+200D>') and shown.endswith('<U+200D>"')
    assert " characters left out " in shown
    assert judged == [] and len(spelled) == 2 and max(spelled) <= 1000  # the part shown, each time
    assert verdict.key_shown("\u0628" * 100_000) == verdict.key_shown("\u0628" * 100_000).strip('"')  # nothing named


_ENGLAND = "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f"  # a flag: 🏴 and its tags


@pytest.mark.parametrize("key", ["\U0001fae8", "\U0001fa77", "\U0001fae8\u200d\U0001f525", _ENGLAND, f"a{_ENGLAND}b"])
def test_an_emoji_newer_than_python_and_a_flag_of_tags_are_named_as_written(key):
    """A shaking face (U+1FAE8) and a pink heart (U+1FA77), Unicode 15.0's, printed as
    ``<U+1FAE8>`` under Python 3.11, whose Unicode 14.0 holds them unassigned; England's flag
    (🏴 and tag characters) had its tags named. What is an emoji's stays as written."""
    from verifier_tui.engine.verdict import key_shown, readable_json

    assert key_shown(key) == key
    assert readable_json({key: 1}) == json.dumps({key: 1}, ensure_ascii=False)


@pytest.mark.parametrize(
    ("key", "shown"),
    [
        ("re\U000e0067ward", '"re<U+E0067>ward"'),
        ("\U0001f3f4\U000e0067", '"\U0001f3f4<U+E0067>"'),  # no cancel tag ends it
        ("\U000e0067\U000e007f", '"<U+E0067><U+E007F>"'),
        ("\U00040000", '"<U+40000>"'),  # unassigned, and no pictograph
    ],
)
def test_a_tag_outside_a_flag_is_named(key, shown):
    from verifier_tui.engine.verdict import key_shown

    assert key_shown(key) == shown


@pytest.mark.parametrize(
    ("key", "shown"),
    [
        ("score\U0001f3f4\U000e0061\U000e007f", '"score\U0001f3f4<U+E0061><U+E007F>"'),  # no flag's tags
        ("score\U0001f3f4\U000e0062\U000e007f", '"score\U0001f3f4<U+E0062><U+E007F>"'),
        ("reward\U0001fc00", '"reward<U+1FC00>"'),  # reserved: no Unicode version assigns it
        ("\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",) * 2,  # Scotland's flag
        ("\U0001f3f4\U000e0067\U000e0062\U000e0077\U000e006c\U000e0073\U000e007f",) * 2,  # Wales'
    ],
)
def test_only_the_three_flags_of_tags_and_assignable_pictographs_stay_as_written(key, shown):
    """Any black flag, tags and a cancel tag stayed as written, so keys that differ by a tag looked
    alike; only England's, Scotland's and Wales' flags are emoji. And a reserved code point past
    U+1FBFF, in Extended_Pictographic yet never assigned, was shown raw, drawing nothing."""
    from verifier_tui.engine.verdict import key_shown

    assert key_shown(key) == shown


def test_a_joiner_or_tag_with_nothing_it_could_join_beside_it_is_named_unjudged(monkeypatch):
    """A verify returning ``{'reward': 1.0, U+200D * 5,000,000: 1.0}`` made ``run`` take 25 s
    (U+200B: 1.9 s): each joiner, selector and tag was judged one at a time in Python. Only one
    with a letter or pictograph beside it is judged now; the rest are named in one pass."""
    from verifier_tui.engine import plain

    judged: list[int] = []
    joins = plain._joins
    monkeypatch.setattr(plain, "_joins", lambda text, at: judged.append(at) or joins(text, at))
    key = "\u200d" * 50_000 + "\U000e0061" * 50_000 + "\ufe0f" * 50_000 + "\u0646\u200d\u0646"
    shown = plain.spelled_out(key, plain.code_point)
    assert shown == "<U+200D>" * 50_000 + "<U+E0061>" * 50_000 + "<U+FE0F>" * 50_000 + "\u0646\u200d\u0646"
    assert len(judged) <= 2


def test_a_long_plain_key_is_cut_once_unquoted():
    """An ASCII key of 5,006 characters with nothing hidden was quoted, as if something in it could
    not be seen, and cut twice: ``"aaaaa…+4,006…bbbbb…+17…bbbbb"``. It reads as a long line does."""
    from verifier_tui.engine.verdict import key_shown
    from verifier_tui.words.run import rewards_text
    from verifier_tui.words.text import one_line

    key = "a" * 600 + "MIDDLE" + "b" * 4400
    assert key_shown(key) == one_line(key) == one_line(key_shown(key))
    assert one_line(key).startswith("a" * 600 + "MIDDLE") and " characters left out … b" in one_line(key)
    assert rewards_text({key: 1.0}) == f"{one_line(key)}=1"
    hidden = key_shown("\u200b" * 5_000)
    assert hidden.startswith('"<U+200B>') and hidden.endswith('<U+200B>"') and len(hidden) <= 1000
