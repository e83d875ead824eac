"""Harbor's verdict on reward folders written by hand, one row of the rules at a time.

The rules mirror Harbor 0.26.0's harbor/verifier/verifier.py (see the module
docstring of verifier_tui.engine.verdict).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from verifier_tui.engine.model import UNKNOWN, RewardFile
from verifier_tui.engine.verdict import (
    harbor_verdict,
    read_reward_files,
)

NO_REWARD_KEY = "Harbor aggregates on 'reward'; this dict has none"


def write(folder: Path, name: str, content: str | bytes) -> Path:
    path = folder / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_bytes(content.encode("utf-8"))
    return path


def error_of(folder: Path) -> tuple[str | None, str | None]:
    verdict = harbor_verdict(folder)
    assert verdict.rewards is None
    assert verdict.message, "every error has a message in words"
    return verdict.error, verdict.message


# ---------------------------------------------------------------- neither file


def test_neither_file_is_reward_file_not_found(tmp_path: Path) -> None:
    error, message = error_of(tmp_path)
    assert error == "RewardFileNotFoundError"
    assert "reward.json" in message and "reward.txt" in message


def test_other_files_do_not_count(tmp_path: Path) -> None:
    write(tmp_path, "reward.yaml", "reward: 1")
    write(tmp_path, "test-stdout.txt", "1")
    assert harbor_verdict(tmp_path).error == "RewardFileNotFoundError"


def test_missing_reward_folder_is_reward_file_not_found(tmp_path: Path) -> None:
    assert harbor_verdict(tmp_path / "nope").error == "RewardFileNotFoundError"


LINKED = "is a link to {}: Harbor would read it inside the container; not read here"


@pytest.mark.parametrize("target", ["gone.json", "real.json", "/proc/self/environ", "/dev/zero"])
def test_a_reward_file_that_is_a_link_is_never_read_and_its_verdict_is_not_known(tmp_path: Path, target) -> None:
    """Harbor follows a link inside its container, where the tool cannot
    look; followed here, it reads the tool's own environment, or the user's
    files. Whatever it points to (nothing, a good reward file) it is said."""
    write(tmp_path, "real.json", '{"reward": 0.5}')
    write(tmp_path, "reward.txt", "0.25")  # reward.json wins: even a dangling one may not dangle in the container
    (tmp_path / "reward.json").symlink_to(target)
    verdict = harbor_verdict(tmp_path)
    assert (verdict.rewards, verdict.error, verdict.source) == (None, UNKNOWN, "reward.json")
    assert verdict.message == "reward.json " + LINKED.format(target)
    assert verdict.harbor_would == "Harbor's verdict cannot be known here"


def test_a_reward_folder_that_is_a_link_is_never_looked_into(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    write(elsewhere, "reward.txt", "1.0")
    (tmp_path / "stage" / "logs").mkdir(parents=True)
    (tmp_path / "stage" / "logs" / "verifier").symlink_to(elsewhere)
    reward_dir, stage = tmp_path / "stage" / "logs" / "verifier", tmp_path / "stage"
    verdict = harbor_verdict(reward_dir, beneath=stage)
    assert verdict.error == UNKNOWN and verdict.message == f"logs/verifier {LINKED.format(elsewhere)}"
    assert read_reward_files(reward_dir, beneath=stage) == []


# ---------------------------------------------------------------- reward.json


def test_json_object_is_taken_as_it_is(tmp_path: Path) -> None:
    write(tmp_path, "reward.json", '{"reward": 1.0, "tests_passed": 3, "ratio": 0.5}')
    verdict = harbor_verdict(tmp_path)
    assert verdict.ok and verdict.error is None and verdict.message is None
    assert verdict.rewards == {"reward": 1.0, "tests_passed": 3, "ratio": 0.5}
    assert type(verdict.rewards["tests_passed"]) is int  # ints stay ints, as in Harbor
    assert verdict.reward == 1.0
    assert verdict.source == "reward.json"
    assert verdict.warnings == ()


def test_json_with_surrounding_whitespace_and_crlf_is_fine(tmp_path: Path) -> None:
    write(tmp_path, "reward.json", '\r\n  {"reward": 0}\r\n\n')
    assert harbor_verdict(tmp_path).rewards == {"reward": 0}


def test_json_wins_over_a_valid_reward_txt(tmp_path: Path) -> None:
    write(tmp_path, "reward.json", '{"reward": 0.0}')
    write(tmp_path, "reward.txt", "1")
    verdict = harbor_verdict(tmp_path)
    assert verdict.rewards == {"reward": 0.0}
    assert verdict.source == "reward.json"
    assert any("reward.txt is ignored" in w for w in verdict.warnings)


def test_broken_json_wins_over_a_valid_reward_txt(tmp_path: Path) -> None:
    write(tmp_path, "reward.json", "{")
    write(tmp_path, "reward.txt", "1")
    verdict = harbor_verdict(tmp_path)
    assert verdict.error == "VerifierOutputParseError"
    assert verdict.source == "reward.json"


def test_empty_json_is_reward_file_empty(tmp_path: Path) -> None:
    write(tmp_path, "reward.json", "")
    write(tmp_path, "reward.txt", "1")  # not consulted
    error, message = error_of(tmp_path)
    assert error == "RewardFileEmptyError"
    assert message.startswith("reward.json is empty")


def test_whitespace_only_json_is_a_parse_error_not_empty(tmp_path: Path) -> None:
    # Harbor checks st_size == 0, not the stripped text.
    write(tmp_path, "reward.json", " \n\t\n")
    error, message = error_of(tmp_path)
    assert error == "VerifierOutputParseError"
    assert "not valid JSON" in message


def test_invalid_json_says_where(tmp_path: Path) -> None:
    write(tmp_path, "reward.json", "reward: 1")
    error, message = error_of(tmp_path)
    assert error == "VerifierOutputParseError"
    assert message == "reward.json is not valid JSON: Expecting value at line 1 column 1"


def test_python_repr_is_not_json(tmp_path: Path) -> None:
    write(tmp_path, "reward.json", "{'reward': 1.0}")
    error, message = error_of(tmp_path)
    assert error == "VerifierOutputParseError"
    assert "Expecting property name enclosed in double quotes" in message


def test_json_true_false_pass_and_become_floats(tmp_path: Path) -> None:
    write(tmp_path, "reward.json", '{"reward": true, "passed": false}')
    verdict = harbor_verdict(tmp_path)
    assert verdict.ok
    # Harbor's VerifierResult (dict[str, float | int]) turns bools into floats.
    assert verdict.rewards == {"reward": 1.0, "passed": 0.0}
    assert all(type(v) is float for v in verdict.rewards.values())
    assert verdict.reward == 1.0
    assert any('"reward" is true' in w for w in verdict.warnings)


def test_keys_in_reward_json_warnings_and_errors_read_as_written(tmp_path: Path) -> None:
    """A reward.json keyed ``café`` and ``日本`` was warned of as ``"caf\\u00e9" is true``, and a
    bad value as ``"\\u65e5\\u672c" is a string``, where every other line names the key as
    written: they read ``"café"``; what draws nothing is still escaped (``"x\\u200b"``)."""
    large = "1" + "0" * 400
    write(tmp_path, "reward.json", f'{{"reward": 1, "caf\u00e9": true, "x\u200b": false, "gro\u00dfe": {large}}}')
    warnings = harbor_verdict(tmp_path).warnings
    assert '"café" is true: Harbor records it as 1.0' in warnings, warnings
    assert '"x\\u200b" is false: Harbor records it as 0.0' in warnings, warnings
    assert any(w.startswith('"große" is an integer too large for a float') for w in warnings), warnings
    write(tmp_path, "reward.json", '{"reward": 1, "\u65e5\u672c": "1.0"}')
    _error, message = error_of(tmp_path)
    assert 'reward.json: "日本" is a string' in message, message


@pytest.mark.parametrize(
    ("token", "shown"),
    [("NaN", "NaN"), ("Infinity", "Infinity"), ("-Infinity", "-Infinity")],
)
def test_non_finite_json_values_are_parse_errors(tmp_path: Path, token: str, shown: str) -> None:
    write(tmp_path, "reward.json", f'{{"reward": 1.0, "score": {token}}}')
    error, message = error_of(tmp_path)
    assert error == "VerifierOutputParseError"
    assert '"score"' in message and shown in message and "finite" in message


@pytest.mark.parametrize(("content", "token"), [('{"reward": 1.0, "score": 1e309}', "1e309"), ("-2.5E400", "-2.5E400")])
def test_a_json_float_too_large_for_harbors_float_is_said_so(tmp_path: Path, content: str, token: str) -> None:
    """json.loads reads 1e309 as inf, which Harbor refuses as not finite: the
    message said the value "is Infinity", a word the file does not hold."""
    write(tmp_path, "reward.json", content)
    error, message = error_of(tmp_path)
    assert error == "VerifierOutputParseError"
    assert f"{token}, a number too large for Harbor's float (json.loads reads it as " in message, message
    assert "Infinity" not in message


def test_a_json_integer_too_large_for_a_float_is_harbors_reward(tmp_path: Path) -> None:
    """Harbor checks a reward.json value with isinstance(value, (int, float)): a
    400-digit integer (json.loads reads it as an int) passes, as here. But the
    job's mean of the trials' rewards (sum / count) raises OverflowError with
    it, which nothing said."""
    write(tmp_path, "reward.json", '{"reward": 1' + "0" * 400 + "}")
    verdict = harbor_verdict(tmp_path)
    assert verdict.rewards == {"reward": 10**400}
    assert verdict.warnings == (
        "\"reward\" is an integer too large for a float: it is this trial's reward, but Harbor's mean of a "
        "job's rewards divides it, which raises OverflowError",
    )


@pytest.mark.parametrize(
    ("value", "described"),
    [('"1.0"', "a string"), ("null", "null"), ("[1]", "an array"), ('{"a": 1}', "an object")],
)
def test_non_numeric_json_values_are_parse_errors(tmp_path: Path, value: str, described: str) -> None:
    write(tmp_path, "reward.json", f'{{"reward": {value}}}')
    error, message = error_of(tmp_path)
    assert error == "VerifierOutputParseError"
    assert '"reward" is ' + described in message and "not a number" in message


def test_first_bad_value_in_order_is_named(tmp_path: Path) -> None:
    write(tmp_path, "reward.json", '{"a": "x", "b": NaN}')
    _error, message = error_of(tmp_path)
    assert '"a"' in message and '"b"' not in message


@pytest.mark.parametrize(
    ("content", "described"),
    [("[1, 2]", "an array"), ('"1.0"', "a string"), ("null", "null"), ("[]", "an array")],
)
def test_json_array_string_null_are_parse_errors(tmp_path: Path, content: str, described: str) -> None:
    # Harbor 0.26.0 checks the lone value like an object's values: not a number.
    write(tmp_path, "reward.json", content)
    error, message = error_of(tmp_path)
    assert error == "VerifierOutputParseError"
    assert f"reward.json holds {described}" in message
    assert '{"reward": 1.0}' in message  # says what to write instead


@pytest.mark.parametrize("content", ["1", "0.5", "true", "false", "-3"])
def test_lone_json_number_is_a_validation_error(tmp_path: Path, content: str) -> None:
    # Passes Harbor's number check, fails when Harbor builds VerifierResult.
    write(tmp_path, "reward.json", content)
    error, message = error_of(tmp_path)
    assert error == "ValidationError"
    assert "not an object" in message
    assert f'{{"reward": {content}}}' in message


@pytest.mark.parametrize("content", ["NaN", "Infinity", "1e309"])
def test_lone_non_finite_json_number_is_a_parse_error(tmp_path: Path, content: str) -> None:
    write(tmp_path, "reward.json", content)
    assert error_of(tmp_path)[0] == "VerifierOutputParseError"


def test_empty_object_is_accepted_with_a_warning(tmp_path: Path) -> None:
    write(tmp_path, "reward.json", "{}")
    verdict = harbor_verdict(tmp_path)
    assert verdict.rewards == {}
    assert verdict.reward is None
    assert NO_REWARD_KEY in verdict.warnings


def test_dict_without_reward_key_warns(tmp_path: Path) -> None:
    write(tmp_path, "reward.json", '{"accuracy": 0.75}')
    verdict = harbor_verdict(tmp_path)
    assert verdict.rewards == {"accuracy": 0.75}
    assert verdict.reward is None
    assert NO_REWARD_KEY in verdict.warnings


def test_json_with_non_utf8_bytes_is_a_parse_error(tmp_path: Path) -> None:
    write(tmp_path, "reward.json", b'{"reward": 1.0, "note": "caf\xe9"}')
    error, message = error_of(tmp_path)
    assert error == "VerifierOutputParseError"
    assert "not valid UTF-8" in message and "e9" in message


def test_json_with_a_utf8_bom_is_a_parse_error(tmp_path: Path) -> None:
    # read_text() keeps the BOM and json.loads refuses it.
    write(tmp_path, "reward.json", b'\xef\xbb\xbf{"reward": 1.0}')
    error, message = error_of(tmp_path)
    assert error == "VerifierOutputParseError"
    assert "BOM" in message


def test_folder_named_reward_json(tmp_path: Path) -> None:
    (tmp_path / "reward.json").mkdir()
    (tmp_path / "reward.json" / "x").write_text("1")
    write(tmp_path, "reward.txt", "1")  # not consulted: exists() is true for a folder
    verdict = harbor_verdict(tmp_path)
    assert verdict.rewards is None
    # Harbor's stat().st_size check runs first: a folder of size 0 (some file
    # systems) would be "empty"; otherwise reading it fails.
    if os.stat(tmp_path / "reward.json").st_size == 0:
        assert verdict.error == "RewardFileEmptyError"
    else:
        assert verdict.error == "IsADirectoryError"
        assert "is a folder" in verdict.message
    assert verdict.source == "reward.json"


def test_fifo_named_reward_json_is_empty_and_never_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "reward.json")
    verdict = harbor_verdict(tmp_path)  # would hang if it opened the FIFO
    assert verdict.error == "RewardFileEmptyError"
    assert "FIFO" in verdict.message


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable_reward_json(tmp_path: Path) -> None:
    path = write(tmp_path, "reward.json", '{"reward": 1}')
    path.chmod(0)
    try:
        error, message = error_of(tmp_path)
    finally:
        path.chmod(stat.S_IRUSR | stat.S_IWUSR)
    assert error == "PermissionError"
    assert "cannot be read" in message


def test_unreadable_reward_json_as_root_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Root ignores mode bits, so simulate the failing open().
    write(tmp_path, "reward.json", '{"reward": 1}')
    real_open = os.open

    def deny(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        if str(path).endswith("reward.json"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", deny)
    error, message = error_of(tmp_path)
    assert error == "PermissionError"
    assert "Permission denied" in message


# ---------------------------------------------------------------- reward.txt only


@pytest.mark.parametrize(
    ("content", "reward"),
    [
        ("1", 1.0),
        ("0", 0.0),
        (" 0.5\n", 0.5),
        ("0.75\r\n", 0.75),
        ("-2", -2.0),
        ("1e-3", 0.001),
        ("1_0", 10.0),
    ],
)
def test_reward_txt_number(tmp_path: Path, content: str, reward: float) -> None:
    write(tmp_path, "reward.txt", content)
    verdict = harbor_verdict(tmp_path)
    assert verdict.rewards == {"reward": reward}
    assert type(verdict.rewards["reward"]) is float
    assert verdict.source == "reward.txt"
    assert verdict.warnings == ()


def test_empty_reward_txt(tmp_path: Path) -> None:
    write(tmp_path, "reward.txt", "")
    error, message = error_of(tmp_path)
    assert error == "RewardFileEmptyError"
    assert message.startswith("reward.txt is empty")


@pytest.mark.parametrize("content", ["\n", "   ", " \t\r\n"])
def test_whitespace_only_reward_txt_is_a_parse_error(tmp_path: Path, content: str) -> None:
    write(tmp_path, "reward.txt", content)
    error, message = error_of(tmp_path)
    assert error == "VerifierOutputParseError"
    assert "only whitespace" in message


@pytest.mark.parametrize("content", ["abc", "1.0 passed", "0.5\n1.0\n", "reward=1", "1,5"])
def test_reward_txt_that_float_cannot_read(tmp_path: Path, content: str) -> None:
    write(tmp_path, "reward.txt", content)
    error, message = error_of(tmp_path)
    assert error == "VerifierOutputParseError"
    assert "does not hold a number" in message
    assert repr(content)[:20] in message


@pytest.mark.parametrize("content", ["nan", "NaN\n", "inf", "-Infinity"])
def test_non_finite_reward_txt(tmp_path: Path, content: str) -> None:
    write(tmp_path, "reward.txt", content)
    error, message = error_of(tmp_path)
    assert error == "VerifierOutputParseError"
    assert "not a finite number" in message


@pytest.mark.parametrize(
    "content",
    ["1" + "0" * 400, "-1" + "0" * 400 + "\n", "1e309", "2.5E400"],
    ids=["400-digits", "minus-400-digits", "1e309", "2.5E400"],
)
def test_a_reward_txt_too_large_for_harbors_float_is_said_so(tmp_path: Path, content: str) -> None:
    """Harbor reads reward.txt with float(): a number past the largest float
    reads as inf, which it refuses (VerifierOutputParseError). It was said to
    be "inf, not a finite number", which a 400-digit number is not."""
    write(tmp_path, "reward.txt", content)
    error, message = error_of(tmp_path)
    assert error == "VerifierOutputParseError"
    assert "a number too large for Harbor's float (float() reads it as " in message, message
    assert "not a finite number" not in message


def test_reward_txt_with_non_utf8_bytes(tmp_path: Path) -> None:
    write(tmp_path, "reward.txt", b"1\xff")
    error, message = error_of(tmp_path)
    assert error == "VerifierOutputParseError"
    assert "not valid UTF-8" in message and "offset 1" in message


def test_folder_named_reward_txt(tmp_path: Path) -> None:
    (tmp_path / "reward.txt").mkdir()
    (tmp_path / "reward.txt" / "x").write_text("1")
    verdict = harbor_verdict(tmp_path)
    assert verdict.error in {"IsADirectoryError", "RewardFileEmptyError"}
    assert verdict.source == "reward.txt"


# ---------------------------------------------------------------- read_reward_files


def test_read_reward_files_none(tmp_path: Path) -> None:
    assert read_reward_files(tmp_path) == []


def test_read_reward_files_in_harbor_order(tmp_path: Path) -> None:
    write(tmp_path, "reward.txt", "1\n")
    write(tmp_path, "reward.json", '{"reward": 1}')
    files = read_reward_files(tmp_path)
    assert [f.name for f in files] == ["reward.json", "reward.txt"]
    assert files[0].kind == "file" and files[0].text == '{"reward": 1}' and files[0].size == 13
    assert files[1].text == "1\n" and files[1].is_utf8 and not files[1].truncated


def test_read_reward_files_kinds(tmp_path: Path) -> None:
    (tmp_path / "reward.json").mkdir()
    os.mkfifo(tmp_path / "reward.txt")
    files = {f.name: f for f in read_reward_files(tmp_path)}  # must not hang on the FIFO
    assert files["reward.json"].kind == "folder" and files["reward.json"].text is None
    assert files["reward.txt"].kind == "other" and files["reward.txt"].text is None


def test_read_reward_files_links(tmp_path: Path) -> None:
    target = write(tmp_path, "real.txt", "0.5")
    (tmp_path / "reward.txt").symlink_to(target)
    (tmp_path / "reward.json").symlink_to("/proc/self/environ\n\x1b[2J")
    files = {f.name: f for f in read_reward_files(tmp_path)}
    assert files["reward.txt"] == RewardFile(name="reward.txt", kind="link", size=0, text=None, target=str(target))
    assert files["reward.json"].kind == "link" and files["reward.json"].text is None
    assert files["reward.json"].target == "/proc/self/environ\\n\\x1b[2J"  # said harmlessly


def test_read_reward_files_non_utf8(tmp_path: Path) -> None:
    write(tmp_path, "reward.txt", b"0.5 caf\xe9\n")
    (file,) = read_reward_files(tmp_path)
    assert not file.is_utf8
    assert file.text == "0.5 caf\ufffd\n"
    assert file.size == 9


def test_read_reward_files_cap(tmp_path: Path) -> None:
    write(tmp_path, "reward.json", '{"reward": 1, "log": "' + "x" * 5000 + '"}')
    (file,) = read_reward_files(tmp_path, cap_bytes=100)
    assert file.truncated
    assert len(file.text) == 100
    assert file.size > 5000
    assert file.is_utf8


def test_read_reward_files_cap_inside_a_character_is_still_utf8(tmp_path: Path) -> None:
    write(tmp_path, "reward.txt", "é" * 100)  # 2 bytes each
    (file,) = read_reward_files(tmp_path, cap_bytes=51)
    assert file.truncated
    assert file.is_utf8
    assert file.text == "é" * 25


def test_deeply_nested_json_is_harbors_recursion_error(tmp_path: Path) -> None:
    # json.loads raises RecursionError, which Harbor does not catch.
    write(tmp_path, "reward.json", "[" * 200_000 + "]" * 200_000)
    error, message = error_of(tmp_path)
    assert error == "RecursionError"
    assert "nested too deeply" in message


def test_reward_file_over_the_parse_limit_is_not_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import verifier_tui.engine.verdict as verdict_module

    monkeypatch.setattr(verdict_module, "PARSE_LIMIT_BYTES", 10)
    write(tmp_path, "reward.json", '{"reward": 1.0, "x": 1}')
    error, message = error_of(tmp_path)
    assert error == UNKNOWN  # Harbor has no exception of its own for it: what it would do is not known
    assert "verifier-tui does not parse" in message


def test_a_nested_value_in_reward_json_reads_as_written(tmp_path: Path) -> None:
    """``reward.json: "日本" is an object ({"caf\\u00e9": 1}), not a number``: the key was named as
    written and the object beside it escaped. It reads ``{"café": 1}``; what draws nothing is
    still escaped."""
    write(tmp_path, "reward.json", '{"reward": 1, "\u65e5\u672c": {"caf\u00e9": 1, "x\u200b": ["\u65e5"]}}')
    _error, message = error_of(tmp_path)
    assert 'reward.json: "日本" is an object ({"café": 1, "x\\u200b": ["日"]}), not a number' in message, message
    write(tmp_path, "reward.json", '{"reward": ["caf\u00e9"]}')
    _error, message = error_of(tmp_path)
    assert '"reward" is an array (["café"])' in message, message
