"""What Harbor would score from a reward folder, by Harbor's own rules.

Everything Harbor-specific lives here, so a later Harbor change is one place to
edit. The rules mirror ``Verifier._parse_reward_json``,
``Verifier._parse_reward_text`` and the end of ``Verifier.verify`` in Harbor
0.26.0's ``harbor/verifier/verifier.py`` (read from the published wheel):

* ``reward.json`` wins when ``Path.exists()`` is true for it, whatever
  ``reward.txt`` holds; a folder counts as present.
* ``exists()`` and ``read_text()`` follow links, inside Harbor's container,
  where the tool cannot look. So a reward file that is a link (or a reward
  folder that is one) is never read here: whoever planted it may point it at
  the tool's own ``/proc/self/environ`` or the user's files. Its verdict is
  :data:`~verifier_tui.engine.model.UNKNOWN`, its message names the link.
* "Empty" means ``stat().st_size == 0``: zero **bytes**, checked before reading.
  A file holding only whitespace is *not* empty; it fails to parse instead
  (``VerifierOutputParseError``). A FIFO or ``/dev/null`` link has size 0, so it
  is "empty" too (and is never opened, so it cannot hang us).
* The file is read with ``read_text()``: the host's locale encoding (UTF-8 on
  any normal host) in strict mode with universal newlines. Bytes that are not
  valid UTF-8 raise ``UnicodeDecodeError``, a ``ValueError``, which Harbor's
  ``except (ValueError, TypeError)`` turns into ``VerifierOutputParseError``.
  A folder raises ``IsADirectoryError`` and an unreadable file
  ``PermissionError``: neither is caught, so the trial ends with that
  exception's own name, which is what :func:`harbor_verdict` reports.
* ``reward.json``: ``json.loads`` (which accepts ``NaN``, ``Infinity`` and
  turns ``1e309`` into ``inf``). Then every value is checked in order: the
  object's values, or the lone value when it is not an object. A value that is
  not ``int``/``float`` (a string, ``null``, an array, an object) or a float
  that is not finite raises ``VerifierOutputParseError``. ``true``/``false``
  pass (Python bools are ints). So ``[1]``, ``"1"`` and ``null`` are parse
  errors, while a lone finite number such as ``0.5`` or ``true`` passes the
  check and only fails when Harbor builds ``VerifierResult(rewards=...)``,
  whose field is ``dict[str, float | int]``: a pydantic ``ValidationError``.
* That pydantic model also turns ``true``/``false`` values into ``1.0``/``0.0``;
  the rewards returned here are normalised the same way, as ``result.json``
  would show them.
* ``reward.txt``: ``float(text)`` (so surrounding whitespace, ``1_0``, ``1e3``
  are fine), and a non-finite result (``nan``, ``inf``, ``1e309``) raises
  ``VerifierOutputParseError``. Rewards are ``{"reward": value}``.
* Neither file: ``RewardFileNotFoundError``.

A run that outlives its timeout never gets that far: :func:`timeout_verdict`
mirrors ``Trial._verify_with_timeout`` in ``harbor/trial/trial.py``, which
wraps the whole ``Verifier.verify`` in ``asyncio.wait_for``. At the timeout
``verify`` is cancelled while it still waits on ``test.sh``, before the lines
above read the reward folder, and Harbor raises ``VerifierTimeoutError``
("Verifier execution timed out after N seconds", N the float it waited).
So a reward file the verifier wrote before it hung counts for nothing.
"""

from __future__ import annotations

import codecs
import itertools
import json
import math
import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from verifier_tui.engine import untrusted
from verifier_tui.engine.model import UNKNOWN, RewardFile, Verdict
from verifier_tui.engine.plain import code_point, cut_middle, json_escape, may_spell, spelled_out, unbroken

# Harbor 0.26.0's exceptions for a verifier pass, by the bare class name that
# result.json's exception_type records. The faces, the trial readers and the
# agreement all name them through these, so a rename in Harbor is one edit.
REWARD_FILE_NOT_FOUND = "RewardFileNotFoundError"  # harbor/verifier/verifier.py
REWARD_FILE_EMPTY = "RewardFileEmptyError"  # harbor/verifier/verifier.py
OUTPUT_PARSE_ERROR = "VerifierOutputParseError"  # harbor/verifier/verifier.py
VALIDATION_ERROR = "ValidationError"  # pydantic, when VerifierResult is built from a lone number
VERIFIER_TIMEOUT = "VerifierTimeoutError"  # harbor/trial/errors.py, raised by harbor/trial/trial.py

REWARD_JSON = "reward.json"
REWARD_TXT = "reward.txt"
REWARD_FILE_NAMES = (REWARD_JSON, REWARD_TXT)
"""In Harbor's order of precedence."""

PARSE_LIMIT_BYTES = 64 * 1024 * 1024
"""Harbor reads a reward file whole; we do too, up to this size. Real reward
files are a few bytes; this only keeps a runaway verifier from exhausting
memory here."""
NOT_PARSED_PAST = f"verifier-tui does not parse reward files over {PARSE_LIMIT_BYTES:,} bytes"
"""What a reward file past it is said with: the one sign, in its message, that it was not parsed."""

RAISED_UNCAUGHT = "Harbor does not catch it, so the trial ends with this exception"

# --------------------------------------------------------------------------
# The reward files as found, for display.


#: Keys of a reward dict written out in one line (a verdict, a phase); "reward"
#: is always among them: a 100,000-key reward shown whole would freeze the
#: screens and print a 2 MB line. --json keeps every key.
REWARD_KEYS = 20


def rewards_json(rewards: dict[str, Any]) -> tuple[str, int]:
    """The rewards as one line of JSON with at most REWARD_KEYS keys, "reward"
    always among them (Harbor aggregates on it), ``…`` where keys were left
    out; and how many were."""
    if len(rewards) <= REWARD_KEYS:
        return readable_json(rewards), 0
    keys = list(itertools.islice(rewards, REWARD_KEYS))
    last = ""
    if "reward" in rewards and "reward" not in keys:
        keys.pop()
        last = ", " + json.dumps({"reward": rewards["reward"]})[1:-1]  # after the "…"
    shown = readable_json({key: rewards[key] for key in keys})[:-1] + ", …" + last + "}"
    return shown, len(rewards) - len(keys) - (1 if last else 0)


def readable_json(value: Any, indent: int | None = None, spell: Callable[[str], str] = json_escape) -> str:
    """``value`` (rewards, a reward file) as JSON whose keys read as written (café, 日本), what
    cannot be seen written as ``spell`` writes it (:func:`~verifier_tui.engine.plain.spelled_out`):
    as JSON escapes it by default, so that the line is still JSON, exact."""
    dumped = json.dumps(value, ensure_ascii=False, indent=indent)
    # json.dumps escapes a line break inside a string: a raw one is the indent's, kept as such
    return "\n".join(spelled_out(line, spell) for line in dumped.split("\n"))


def reward_pairs(rewards: dict[str, Any], pair: Callable[[str, Any], str], between: str = ", ") -> str:
    """Each reward as ``pair`` words it, at most REWARD_KEYS, then how many
    more: a listing line stays short whatever a trial recorded (10,000 keys)."""
    shown = [pair(key_shown(key), value) for key, value in itertools.islice(rewards.items(), REWARD_KEYS)]
    left = len(rewards) - len(shown)
    return between.join(shown) + (f"{between}… {left:,} more" if left else "")


#: The longest reward key judged whole. A trial's may be megabytes, and a trial's screen names each
#: key some eight times: a longer one is judged in the part shown, quoted if it holds what may be named.
KEY_JUDGED_WHOLE = 10_000


def key_shown(key: str) -> str:
    """A reward key as a listing names it: as written, a soft hyphen and a
    joiner between what it joins kept (an emoji, a Persian word); quoted when spaces begin or end it
    (or it is empty), so that ``reward`` and ``reward `` are not one key; and
    quoted with what could act on a terminal or start a line (a line break, an
    escape, a bidi control, read from a trial's reward.json) made visible, as
    every name read from a file is (:func:`~verifier_tui.engine.plain.unbroken`), as is what draws
    nothing (a zero-width space: ``<U+200B>``, :func:`~verifier_tui.engine.plain.spelled_out`);
    a long one cut as a long line is (:func:`~verifier_tui.engine.plain.cut_middle`)."""
    if len(key) > KEY_JUDGED_WHOLE:
        cut = cut_middle(key)
        shown = spelled_out(unbroken(cut), code_point)
        return f'"{shown}"' if key != key.strip() or may_spell(key) or shown != cut else cut
    shown = spelled_out(unbroken(key), code_point)
    # judged whole: a key cut first differed from itself, and was quoted for it
    return cut_middle(f'"{shown}"' if not key or key != key.strip() or shown != key else key)


def read_reward_files(reward_dir: Path, cap_bytes: int = 1_000_000, *, beneath: Path | None = None) -> list[RewardFile]:
    """The reward files that exist in ``reward_dir``, ``reward.json`` first,
    looked at beneath the folder they belong to (``beneath``, else
    ``reward_dir`` itself) without following a link.

    ``kind`` comes from ``lstat``: ``"file"``, ``"folder"``, ``"link"`` (with
    its ``target``, never read) or ``"other"`` (FIFO, socket, device).
    ``text`` is read for a regular file only, so a FIFO is never opened. At
    most ``cap_bytes`` are read (``truncated`` says so); bytes that are not
    valid UTF-8 are kept as a replacement-decoded text with ``is_utf8=False``.
    A reward folder that is a link (or a folder on the way) holds none.
    """
    folder = Path(beneath or reward_dir)
    found: list[RewardFile] = []
    for name in REWARD_FILE_NAMES:
        path = Path(reward_dir) / name
        st = untrusted.look(path, folder)
        if isinstance(st, untrusted.Read):
            if st.state == "link" and st.path == path:
                found.append(RewardFile(name=name, kind="link", size=0, text=None, target=st.target))
            elif st.state == "unreadable":  # cannot even look at it (e.g. the folder is not searchable)
                found.append(RewardFile(name=name, kind="other", size=0, text=None))
            continue
        kind = "folder" if stat.S_ISDIR(st.st_mode) else "file" if stat.S_ISREG(st.st_mode) else "other"
        text: str | None = None
        is_utf8 = True
        truncated = False
        if kind == "file":
            data = untrusted.read_bytes(path, cap_bytes + 1, keep="head", beneath=folder).data
            if data is not None:
                truncated = len(data) > cap_bytes
                text, is_utf8 = _decode_for_display(data[:cap_bytes], complete=not truncated)
        found.append(RewardFile(name=name, kind=kind, size=st.st_size, text=text, is_utf8=is_utf8, truncated=truncated))
    return found


def _decode_for_display(data: bytes, *, complete: bool) -> tuple[str, bool]:
    """UTF-8 text and whether the bytes were valid. When the bytes were cut at
    a cap, an incomplete character at the very end does not count as invalid."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="strict")
    try:
        return decoder.decode(data, final=complete), True
    except UnicodeDecodeError:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        return decoder.decode(data, final=complete), False


# --------------------------------------------------------------------------
# Harbor's verdict.


def harbor_verdict(reward_dir: Path, *, beneath: Path | None = None) -> Verdict:
    """What Harbor would record for this reward folder: its rewards, or the
    name of the exception it would raise with a message saying why in words.
    The folder is looked into beneath the folder it belongs to (``beneath``,
    else ``reward_dir`` itself) without following a link.

    The rules, and where they come from, are in this module's docstring.
    """
    reward_dir = Path(reward_dir)
    folder = Path(beneath or reward_dir)
    json_path = reward_dir / REWARD_JSON
    txt_path = reward_dir / REWARD_TXT

    json_stat = _harbor_exists(json_path, folder)
    if isinstance(json_stat, Verdict):
        return json_stat
    if json_stat is not None:
        warnings: list[str] = []
        if isinstance(_harbor_exists(txt_path, folder), os.stat_result):
            warnings.append(f"{REWARD_TXT} is ignored: Harbor reads {REWARD_JSON} whenever it exists")
        return _with_warnings(_read_as_harbor(json_path, json_stat, folder, _json_verdict), warnings)

    txt_stat = _harbor_exists(txt_path, folder)
    if isinstance(txt_stat, Verdict):
        return txt_stat
    if txt_stat is not None:
        return _read_as_harbor(txt_path, txt_stat, folder, _txt_verdict)
    return no_reward_file()


def no_reward_file() -> Verdict:
    """Harbor's verdict on a reward folder that holds neither file."""
    return Verdict(
        rewards=None,
        error=REWARD_FILE_NOT_FOUND,
        message=(
            f"No reward file: the verifier wrote neither {REWARD_JSON} nor {REWARD_TXT} "
            "in the reward folder (Harbor deletes both before it runs test.sh)"
        ),
        source=None,
    )


def timeout_message(seconds: float) -> str:
    """``VerifierTimeoutError``'s message in Harbor's own words
    (``Trial._verify_with_timeout``): the timeout as Python prints the float
    Harbor computed, ``1.0``, ``600.0``."""
    return f"Verifier execution timed out after {float(seconds)} seconds"


TIMEOUT_MESSAGE = r"Verifier execution timed out after ([0-9.eE+-]+|None) seconds"
""":func:`timeout_message` read back from a trial (``None``: Harbor ran with no timeout)."""


def timeout_verdict(seconds: float, reward_files: Iterable[RewardFile] = ()) -> Verdict:
    """What Harbor records for a run still going at its timeout:
    ``VerifierTimeoutError``, whatever the reward folder holds, because
    Harbor gives up before it reads the folder (the module docstring).
    ``reward_files``: what the run left there, named in a warning so a
    reward written before a hang is not taken for a score."""
    left = [f.name for f in reward_files]
    warnings: tuple[str, ...] = ()
    if left:
        warnings = (
            f"{' and '.join(left)} {'was' if len(left) == 1 else 'were'} written before the timeout, but "
            "Harbor never reads the reward folder of a run it stopped: it scores no reward",
        )
    return Verdict(
        rewards=None, error=VERIFIER_TIMEOUT, message=timeout_message(seconds), source=None, warnings=warnings
    )


def _harbor_exists(path: Path, folder: Path) -> os.stat_result | Verdict | None:
    """``Path.exists()`` as Harbor's Python does it, keeping the stat result:
    the stat, None for "does not exist", or the verdict when it cannot be
    told here: the file, or a folder on the way, is a link (Harbor would
    follow it inside its container), or it cannot be looked at (``exists()``
    raises, and Harbor with it)."""
    found = untrusted.look(path, folder)
    if isinstance(found, os.stat_result) or found.state == "missing":
        return found if isinstance(found, os.stat_result) else None
    if found.state == "link":
        return _link_verdict(found, folder)
    return Verdict(
        rewards=None,
        error=found.error or "OSError",
        message=f"{found.problem}: {RAISED_UNCAUGHT}",
        source=path.name,
    )


def _link_verdict(found: untrusted.Read, folder: Path) -> Verdict:
    """The verdict of a reward file (or folder) that is a link: not known
    here. A reward file is named by its name, a folder on the way from ``folder``."""
    name = found.path.name if found.path.name in REWARD_FILE_NAMES else found.path.relative_to(folder).as_posix()
    return Verdict(
        rewards=None,
        error=UNKNOWN,
        message=(
            f"{untrusted.link_words(name, found.target or '?')}: Harbor would read it inside the container; "
            "not read here"
        ),
        source=found.path.name,
    )


def _with_warnings(verdict: Verdict, warnings: list[str]) -> Verdict:
    if not warnings:
        return verdict
    return Verdict(
        rewards=verdict.rewards,
        error=verdict.error,
        message=verdict.message,
        source=verdict.source,
        warnings=tuple(warnings) + verdict.warnings,
    )


def _error(name: str, error: str, message: str) -> Verdict:
    return Verdict(rewards=None, error=error, message=message, source=name)


def _read_as_harbor(path: Path, st: os.stat_result, folder: Path, parse: Callable[[str, str], Verdict]) -> Verdict:
    """``parse(name, text)`` of the text Harbor's ``read_text()`` would get (it
    reads either reward file so, then parses it), or the verdict of failing to
    get it (empty, a folder, unreadable, not UTF-8)."""
    name = path.name
    if st.st_size == 0:
        what = "" if stat.S_ISREG(st.st_mode) else f" (it is {untrusted.kind(st.st_mode)})"
        return _error(
            name,
            REWARD_FILE_EMPTY,
            f"{name} is empty (0 bytes){what}",
        )
    if stat.S_ISDIR(st.st_mode):
        return _error(
            name,
            "IsADirectoryError",
            f"{name} is a folder, not a file: Harbor fails reading it (IsADirectoryError); {RAISED_UNCAUGHT}",
        )
    if not stat.S_ISREG(st.st_mode):
        # Never open a FIFO, socket or device here: it could block forever.
        return _error(
            name,
            "OSError",
            f"{name} is {untrusted.kind(st.st_mode)}, not a regular file: Harbor would try "
            "to read it and fail or hang; verifier-tui does not read it",
        )
    if st.st_size > PARSE_LIMIT_BYTES:
        # Harbor 0.26.0 has no exception for this: its read_text() takes the file whole, and what
        # follows (a MemoryError, a parse error, a score) depends on bytes the tool does not read.
        return _error(
            name,
            UNKNOWN,
            f"{name} is {st.st_size:,} bytes: Harbor would read it whole; {NOT_PARSED_PAST}",
        )
    # Opened without blocking or following a link, and checked again: a name
    # swapped for a FIFO or a link after the look above is never waited on or read.
    found = untrusted.read_bytes(path, PARSE_LIMIT_BYTES + 1, keep="head", beneath=folder)
    if found.state == "link":
        return _link_verdict(found, folder)
    if found.data is None:
        return _error(name, found.error or "OSError", f"{found.problem}: {RAISED_UNCAUGHT}")
    data = found.data
    if len(data) == 0:
        # Emptied between the stat and the read: as Harbor would find it now.
        return _error(name, REWARD_FILE_EMPTY, f"{name} is empty (0 bytes)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = data[exc.start : exc.end]
        return _error(
            name,
            OUTPUT_PARSE_ERROR,
            f"{name} is not valid UTF-8 (byte {bad[:1].hex(' ')} at offset {exc.start}, "
            f"{exc.reason}): Harbor reads it as text and fails",
        )
    # read_text() opens in text mode: universal newlines.
    return parse(name, text.replace("\r\n", "\n").replace("\r", "\n"))


def _json_verdict(name: str, text: str) -> Verdict:
    try:
        parsed: object = json.loads(text)
    except json.JSONDecodeError as exc:
        return _error(
            name,
            OUTPUT_PARSE_ERROR,
            f"{name} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
        )
    except ValueError as exc:  # e.g. an integer over Python's digit limit
        return _error(name, OUTPUT_PARSE_ERROR, f"{name} is not valid JSON: {exc}")
    except RecursionError:
        return _error(
            name,
            "RecursionError",
            f"{name} is nested too deeply for Python's json module: {RAISED_UNCAUGHT}",
        )

    # Harbor checks the object's values, or the lone value when it is no object.
    items = list(parsed.items()) if isinstance(parsed, dict) else [(None, parsed)]
    for key, value in items:
        if not isinstance(value, (int, float)):
            hint = ""
            if key is None:
                hint = '; Harbor wants an object of numbers, e.g. {"reward": 1.0}'
            return _error(
                name,
                OUTPUT_PARSE_ERROR,
                f"{_where(name, key)} {_describe_json(value)}, not a number{hint}",
            )
        if isinstance(value, float) and not math.isfinite(value):
            token = _float_token(text, key)
            if token is not None:
                said = f"{_where(name, key)} {token}, {_too_large('json.loads', value)}"
                return _error(name, OUTPUT_PARSE_ERROR, said)
            return _error(
                name,
                OUTPUT_PARSE_ERROR,
                f"{_where(name, key)} {_json_number(value)}, not a finite number",
            )

    if not isinstance(parsed, dict):
        return _error(
            name,
            VALIDATION_ERROR,
            f"{name} holds a lone {_describe_json(parsed)}, not an object: Harbor accepts it "
            "while parsing but fails building its result (rewards must be a dictionary); "
            f'write e.g. {{"reward": {json.dumps(parsed)}}}',
        )

    warnings: list[str] = []
    rewards: dict[str, object] = {}
    for key, value in parsed.items():
        if isinstance(value, bool):
            warnings.append(f"{readable_json(key)} is {json.dumps(value)}: Harbor records it as {float(value)}")
            value = float(value)
        elif isinstance(value, int) and not _finite_float(value):
            # Harbor's Mean metric is sum(values) / len(values): int / int past any float raises.
            warnings.append(
                f"{readable_json(key)} is an integer too large for a float: it is this trial's reward, but Harbor's "
                "mean of a job's rewards divides it, which raises OverflowError"
            )
        rewards[key] = value
    if "reward" not in rewards:
        warnings.append("Harbor aggregates on 'reward'; this dict has none")
    return Verdict(rewards=rewards, source=name, warnings=tuple(warnings))


def _finite_float(value: int) -> bool:
    try:
        float(value)
    except OverflowError:
        return False
    return True


def _too_large(reader: str, value: float) -> str:
    """A number written out in full (``1e309``, 400 digits) that ``reader``
    made ±inf: what it is, as Harbor's check of it refuses it."""
    return f"a number too large for Harbor's float ({reader} reads it as {value!r}, which Harbor refuses as not finite)"


def _float_token(text: str, key: str | None) -> str | None:
    """The token ``key``'s value (the lone value for None) is written as in
    ``text``, when it is a number json.loads made a float of (``1e309``);
    None for ``NaN`` and ``Infinity``. Read again only for a message."""
    raw = json.loads(text, parse_float=str)
    token = raw if key is None else raw.get(key) if isinstance(raw, dict) else None
    return clip(token) if isinstance(token, str) else None


def _where(name: str, key: str | None) -> str:
    """The value a message is about. Made only for a message: made for every
    key, it cost 0.7 s of a 100,000-key reward.json."""
    return f"{name}: {readable_json(key)} is" if key is not None else f"{name} holds"


def _txt_verdict(name: str, text: str) -> Verdict:
    try:
        value = float(text)
    except ValueError:
        if not text.strip():
            why = "it holds only whitespace (Harbor calls a file empty only at 0 bytes, so this is a parse error)"
        else:
            why = f"float() cannot read {_snippet(text)}"
        return _error(name, OUTPUT_PARSE_ERROR, f"{name} does not hold a number: {why}")
    if math.isinf(value) and "inf" not in text.lower():  # digits past the largest float, not "inf" written out
        return _error(name, OUTPUT_PARSE_ERROR, f"{name} holds {_snippet(text)}, {_too_large('float()', value)}")
    if not math.isfinite(value):
        return _error(
            name,
            OUTPUT_PARSE_ERROR,
            f"{name} holds {_snippet(text)}, which is {value!r}, not a finite number",
        )
    return Verdict(rewards={"reward": value}, source=name)


# --------------------------------------------------------------------------
# Words.


def _describe_json(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, str):
        return f"a string ({_snippet(value)})"
    if isinstance(value, list):
        return f"an array ({clip(readable_json(value))})"
    if isinstance(value, dict):
        return f"an object ({clip(readable_json(value))})"
    if isinstance(value, (int, float)):
        return f"number ({_json_number(value)})"
    return type(value).__name__


def _json_number(value: float | int) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
    return repr(value)


def clip(text: str) -> str:
    """The first 60 characters of ``text`` and ``…`` when there were more (a 400-digit number: ``1000…``)."""
    return text if len(text) <= 60 else text[:60] + "…"


def _snippet(text: str) -> str:
    return repr(clip(text))
