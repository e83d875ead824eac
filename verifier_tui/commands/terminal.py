"""Writing to the user's terminal (or whatever reads our output) safely.

Three faults a headless command must survive when it prints, each met here
once for every command:

* **Escape codes from the verifier.** A verifier's output may hold a screen
  clear, an OSC 8 link, a bell, a stray ``\\r``. Printed raw they act on the
  user's terminal. :func:`~verifier_tui.words.text.plain_text` removes them;
  the TUI shows verifier text through the same function.
* **A terminal that cannot take every character.** With
  ``PYTHONIOENCODING=ascii`` or ``LANG=C`` Python's streams refuse ``·`` and
  ``✓``. :func:`prepare_streams` makes them write a backslash escape instead
  (``\\xb7``), and :func:`json_text` keeps ``--json`` valid JSON whatever the
  encoding (``\\u`` escapes where the stream cannot take the character).
* **A file another program parses.** ``test --junit`` writes XML, which
  cannot hold most control characters even escaped: :func:`xml_text` writes
  them as visible escapes instead.
* **A reader that went away.** ``verifier-tui run T | head -1``: once ``head``
  exits, a write raises ``BrokenPipeError``. The command's exit status must
  still be the run's, so :func:`write` points the stream at ``/dev/null`` and
  goes on (what Python's documentation advises for SIGPIPE);
  :func:`reader_gone` tells a long-running command (``watch``) to stop.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import sys
from typing import TYPE_CHECKING

from verifier_tui.commands import stopping
from verifier_tui.words.paths import home_folder, text_from
from verifier_tui.words.text import one_line, plain_surrogates, plain_text, unbroken

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TextIO

#: What --json writes as \u escapes although JSON allows them raw: DEL, the C1
#: controls and the bidi controls (json.dumps escapes the C0 ones already).
_JSON_RAW = "[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"  # compiled at first use: non-ASCII output

_gone: set[str] = set()  # "stdout", "stderr": streams whose reader went away
_failed: set[str] = set()  # ... of those, the ones a write failed on (a full disk): the command did not do its job


def prepare_streams() -> None:
    """Make stdout and stderr escape what their encoding cannot take
    (``backslashreplace``) instead of raising UnicodeEncodeError. Streams that
    are not text files of their own (a test's capture) are left alone. A
    stream the tool was started without (``>&-``: Python makes it None) is
    one whose reader went away: it writes to /dev/null."""
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115 - for the process's life
            _gone.add(name)
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # closed, or a stream that refuses
                pass


def can_show(text: str) -> bool:
    """Whether stdout's encoding can write ``text`` as it is."""
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def write(text: str, stream: str = "stdout") -> None:
    """Write ``text`` as it is (our own words: the caller passes verifier text
    through :func:`plain_text`). A reader that went away is noted, the stream
    is pointed at /dev/null, and nothing is raised."""
    if stream in _gone:
        return
    handle: TextIO = getattr(sys, stream)
    try:
        _write_all(handle, text)
    except BrokenPipeError:
        _reader_went_away(stream, handle)
    except ValueError:  # the stream was closed under us: nobody reads it
        _gone.add(stream)
    except OSError as exc:  # a full disk (>/dev/full): said by the command, and nothing more is written there
        _gone.add(stream)
        _failed.add(stream)
        if exc.filename is None:
            exc.filename = "standard output" if stream == "stdout" else "standard error"
        if stream == "stdout":
            stopping.failed(exc)
        raise


def _write_all(handle: TextIO, text: str) -> None:
    """Every byte of ``text`` written to ``handle``'s file. A signal as the write waited on a full pipe
    (a slow reader, ``test --json`` ending on SIGTERM) made it return short, and the text layer dropped
    the rest: a document cut at 64 KB. A stream with no file of its own (a test's capture) is written to."""
    try:
        fd = handle.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
        handle.write(text)
        return
    handle.flush()  # what others wrote through the stream goes first
    data = memoryview(text.encode(handle.encoding or "utf-8", handle.errors or "strict"))
    while data:
        try:
            data = data[os.write(fd, data) :]  # short at a signal: the rest next time round
        except BlockingIOError:  # a stdout its reader made non-blocking: wait until it takes more
            import select

            select.select([], [fd], [])


def line(text: str = "", stream: str = "stdout") -> None:
    """One line of our own (see :func:`write`)."""
    write(text + "\n", stream)


def out(text: str = "") -> None:
    """One line of a headless command's readable output: the verifier's text
    in it made harmless (escape codes shown, any encoding, a closed pipe)."""
    line(plain_text(text))


def say(text: str = "") -> None:
    """A line of the tool's own words (paths shortened: relative to where the
    user started, the home folder as ``~``; outputs are printed as they are),
    on one line whatever a trial's files put in it (an exception's message, a
    reward key). As the TUI says paths (words.paths)."""
    out(text_from(one_line(text), os.getcwd(), home_folder()))


def out_json(data: Any, indent: int | None = 2) -> None:
    """One ``--json`` document (docs/json-output.md) on stdout."""
    line(json_text(data, indent=indent))


def error(text: str) -> None:
    """``verifier-tui: <text>`` on stderr, on one line: bad input gets one
    clear line, whatever the text held (newlines, escape codes). A line break
    is written ``\\n``, as the tables, JSON and JUnit names write it (a folder
    ``a<newline>b`` read ``a b`` here: another name, which does not exist)."""
    flat = unbroken(text.strip())
    line(f"verifier-tui: {flat}", "stderr")


def refuse(text: str) -> int:
    """:func:`error`'s line for input refused, and the exit status every refusal has: 2."""
    error(text)
    return 2


def last_error(text: str) -> None:
    """:func:`error`'s line as a stop's last word, after its report and document: stderr that cannot take
    it (a terminal that closed: EIO) ends nothing, and the command's status stays the stop's."""
    try:
        error(text)
    except OSError:
        pass


def flush() -> None:
    """What stdout's stream still holds sent on: :func:`write` leaves nothing there when stdout is a
    file, but a stream with none of its own (a test's capture) and what others wrote through it
    (``print``, argparse) are buffered."""
    if "stdout" in _gone:
        return
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _reader_went_away("stdout", sys.stdout)
    except ValueError:
        _gone.add("stdout")


class Progress:
    """``12/200 cases · 1 failed`` on stderr, rewritten in place as each of a
    long command's runs ends (``test``, ``test JOB``, ``audit`` print their
    table only once every run is over: minutes, for a big suite), as pytest and
    cargo keep a counter. Only on a terminal that takes ``\r`` and an erase
    (a pipe, a CI log or ``TERM=dumb`` get nothing), and erased again before
    the command says anything else."""

    def __init__(self, total: int, noun: str, bad: str, *, wanted: bool = True) -> None:
        self.total, self.noun, self.bad = total, noun, bad
        self.ended = self.bad_ones = 0
        stderr = sys.stderr
        self.shown = (
            wanted
            and total > 1
            and "stderr" not in _gone
            and os.environ.get("TERM", "dumb") != "dumb"
            and hasattr(stderr, "isatty")
            and stderr.isatty()
        )

    def step(self, bad: bool = False) -> None:
        """One run ended (``bad``: it failed, differed, was flagged)."""
        self.ended += 1
        self.bad_ones += bad
        if self.shown:
            tail = f" · {self.bad_ones} {self.bad}" if self.bad_ones else ""
            self._show(f"\r{self.ended}/{self.total} {self.noun}{tail}\x1b[K")

    def erase(self) -> None:
        if self.shown and self.ended:
            self._show("\r\x1b[K")
            self.ended = 0

    @staticmethod
    def _show(text: str) -> None:
        # A counter the terminal no longer takes (closed: EIO) ends nothing: a stop's report is written
        # after it, and stderr's lines after it are dropped (write).
        try:
            write(text, "stderr")
        except OSError:
            pass


def reader_gone() -> bool:
    """Whether the reader of stdout went away (a closed pipe), found by a
    write or, for a pipe, by asking it: ``watch | head -1`` learns that
    ``head`` left while nothing changes, not only at the next run's line."""
    if "stdout" not in _gone and _pipe_closed("stdout"):
        _reader_went_away("stdout", sys.stdout)
    return "stdout" in _gone


def output_failed() -> bool:
    """Whether writing the output failed (not a reader that left): a watch ends with status 2."""
    return "stdout" in _failed


async def until_reader_gone(stop: Callable[[], object]) -> None:
    """``stop`` once nobody reads stdout any more (``| head -1`` exited),
    asked every second: a watch waiting for a save learns it too, not only
    one that has just written a line. The watching commands run it beside
    their watch, and cancel it when the watch ends."""
    import asyncio

    while not reader_gone():
        await asyncio.sleep(1.0)
    stop()


def _pipe_closed(stream: str) -> bool:
    """Whether ``stream`` is a pipe with no reader left (poll reports an error on its writing end)."""
    import select

    try:
        fd = getattr(sys, stream).fileno()
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return False
        poller = select.poll()
        poller.register(fd, 0)  # no events asked: POLLERR and POLLHUP are always reported
        return any(events & (select.POLLERR | select.POLLHUP) for _fd, events in poller.poll(0))
    except (OSError, ValueError, AttributeError):
        return False


def _reader_went_away(name: str, handle: TextIO) -> None:
    _gone.add(name)
    # The text still buffered would raise again at exit (and Python would then
    # exit 120): the descriptor is pointed at /dev/null, so it goes nowhere.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, handle.fileno())
        finally:
            os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def json_text(data: Any, *, indent: int | None = 2) -> str:
    """``data`` as strict JSON (never ``NaN`` or ``Infinity``: a non-finite
    number that slipped through is written as a string), in characters the
    stream can take: non-ASCII is kept where the stream's encoding can write
    it, else written as ``\\u`` escapes, which every JSON reader decodes."""
    try:
        text = json.dumps(data, indent=indent, default=str, ensure_ascii=False, allow_nan=False)
    except ValueError:
        data = _each_value(data, _finite)
        text = json.dumps(data, indent=indent, default=str, ensure_ascii=False, allow_nan=False)
    if _has_surrogates(text):
        # A file name's bytes that are not UTF-8: a lone surrogate escape, which
        # strict JSON readers refuse, is written as the text shows it ("\xff").
        data = _each_value(data, lambda value: plain_surrogates(value) if isinstance(value, str) else value)
        text = json.dumps(data, indent=indent, default=str, ensure_ascii=False, allow_nan=False)
    if not can_show(text):
        text = json.dumps(data, indent=indent, default=str, ensure_ascii=True, allow_nan=False)
    if text.isascii() and "\x7f" not in text:  # (DEL is ASCII: json.dumps writes it raw either way)
        return text
    # (Only inside strings can these be: escaping them keeps the JSON the same.)
    return re.sub(_JSON_RAW, lambda found: f"\\u{ord(found.group()):04x}", text)


def _has_surrogates(text: str) -> bool:
    """Whether ``text`` holds a surrogate (U+D800 to U+DFFF): asked of the
    UTF-8 encoder itself, since a surrogate is the one thing it refuses, so
    its failure is exactly the answer (and it runs in C, no pattern needed)."""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _each_value(value: Any, fix: Callable[[Any], Any]) -> Any:
    """``value`` with ``fix`` applied to each of its leaves and keys."""
    if isinstance(value, dict):
        return {fix(k): _each_value(v, fix) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_each_value(v, fix) for v in value]
    return fix(value)


def _finite(value: Any) -> Any:
    """A non-finite float as a string, spelt as JSON spells it (``"Infinity"``, ``"NaN"``): as a reward file holds
    it and every face says it (``reward_number``, ``mean_errors``), never Python's ``inf``; anything else as it is."""
    return json.dumps(value) if isinstance(value, float) and not math.isfinite(value) else value


# Characters XML 1.0 cannot hold, even as a character reference: C0 controls
# other than tab, newline and carriage return, lone surrogates, U+FFFE, U+FFFF.
_NOT_XML = "[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]"  # compiled at first use: --junit only
# XML holds bidi controls, but a CI page (or ``cat``) showing them reorders a
# name or a line (``a\u202eevil``); and DEL and the C1 controls, but a terminal
# showing the file acts on C1's CSI and OSC (U+009B, U+009D) as on ESC [ and
# ESC ]: written as visible escapes too, the ones --json escapes (_JSON_RAW).
_NOT_XML_OR_SHOWN_RAW = f"{_NOT_XML}|{_JSON_RAW}"


def xml_text(text: str) -> str:
    """``text`` with what XML 1.0 cannot hold, and the controls --json escapes
    too (bidi, C1, DEL), written as a visible escape (``\\x1b``, ``\\x9b``,
    ``\\u202e``): ElementTree writes such characters as they are, and a JUnit
    reader then refuses the whole file."""
    return re.sub(
        _NOT_XML_OR_SHOWN_RAW,
        lambda match: f"\\x{ord(match.group()):02x}" if ord(match.group()) < 0x100 else f"\\u{ord(match.group()):04x}",
        text,
    )
