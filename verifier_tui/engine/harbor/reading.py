"""Reading Harbor's files without trusting them: JSON that may be missing,
cut short (Harbor killed mid-write) or malformed; logs read from their tail;
times as Harbor writes them; ``ExceptionInfo`` records, from result.json or
from an ``exception.txt`` traceback. Nothing here raises for a bad file.

Shapes mirrored from Harbor 0.26.0 ``harbor/models/trial/result.py``
(``TimingInfo``, ``ExceptionInfo``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from verifier_tui.engine import untrusted
from verifier_tui.engine.record import record
from verifier_tui.engine.untrusted import JsonFile

if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

JSON_LIMIT_BYTES = 16 * 1024 * 1024
"""Harbor's JSON files are kilobytes; a bigger one is not Harbor's."""
LOG_TAIL_BYTES = 2 * 1024 * 1024
"""``trial.log`` can grow with a chatty agent: its tail holds the end of the trial."""


#: The earliest year a time Harbor wrote can hold: its first release came out in 2025, so its
#: ``datetime.now()`` never gave an earlier one (a clock at zero gives 1970, earlier still).
EARLIEST_YEAR = 2020
#: How far past this machine's now a time Harbor wrote may be: the two clocks may disagree, by hours.
FUTURE_SLACK_S = 2 * 24 * 3600


@record(frozen=True)
class TimeSpan:
    """A phase's ``TimingInfo``: ``started_at`` and ``finished_at`` (UTC)."""

    started_at: datetime | None
    finished_at: datetime | None

    @property
    def duration_s(self) -> float | None:
        """None when either time is missing or the two give no time (:attr:`problem`)."""
        if self.started_at is None or self.finished_at is None or self.problem is not None:
            return None
        return (self.finished_at - self.started_at).total_seconds()

    @property
    def problem(self) -> str | None:
        """Why the two times give no duration a clock could have measured, in words; None when
        they do or one is missing. A result.json written by hand, or by a clock far wrong, said
        a verifier phase of 3.16e+11 s (year 1 to 9999), or none for one that ended before it began."""
        from datetime import datetime, timedelta, timezone

        if self.started_at is None or self.finished_at is None:
            return None
        latest = datetime.now(timezone.utc) + timedelta(seconds=FUTURE_SLACK_S)
        for name, moment in (("started_at", self.started_at), ("finished_at", self.finished_at)):
            if moment.year < EARLIEST_YEAR or moment > latest:
                when = "before Harbor existed" if moment.year < EARLIEST_YEAR else "in the future"
                return f"{name} {moment.isoformat()} is {when}"
        if self.finished_at < self.started_at:
            return f"finished_at {self.finished_at.isoformat()} is before started_at {self.started_at.isoformat()}"
        return None


@record(frozen=True)
class ExceptionRecord:
    """``ExceptionInfo`` from ``result.json``: ``type`` is the bare class name."""

    type: str
    message: str
    traceback: str = ""
    occurred_at: datetime | None = None


def read_json(path: Path, shape: type | tuple[type, ...] = dict, *, beneath: Path) -> JsonFile:
    """A JSON file of the trial or job folder ``beneath`` (Harbor writes
    objects, and a list in ``manifest.json``), read as every file the tool did
    not write is (:func:`verifier_tui.engine.untrusted.read_json`), never
    through a link."""
    return untrusted.read_json(path, JSON_LIMIT_BYTES, shape=shape, writer="Harbor", beneath=beneath)


def read_text_tail(path: Path, limit: int = LOG_TAIL_BYTES, *, beneath: Path | None) -> str | None:
    """The last ``limit`` bytes of a text file (replacement-decoded), or None
    when there is no regular file to read: one of the trial or job folder
    ``beneath``, never read through a link (None: a file of the user's own)."""
    return tail_text(untrusted.read_bytes(path, limit, keep="tail", beneath=beneath))


def tail_text(found: untrusted.Read) -> str | None:
    """The text of a tail read, from its first whole line (the cut line when it is all the tail holds)."""
    text = found.text()
    if text is not None and found.cut:
        rest = text.split("\n", 1)[-1]  # drop the partial first line
        # ... unless it is all there is (a last line longer than the tail): dropped, the file read "(empty)".
        text = rest if rest.strip() else text
    return text


def not_ended(result: JsonFile, label: str | None = None) -> str | None:
    """Why a trial's or job's ``result.json`` (as read) says Harbor has not
    ended it, None when it has: Harbor writes ``finished_at`` when it ends a
    trial (a job: once its last trial has), so a file without one (missing,
    cut short, not of Harbor's shape) is a run stopped or still going. One
    that cannot be read says nothing either way: None (said as unreadable
    where it is read). ``label``: the file in words (its name)."""
    if result.state == "unreadable":
        return None
    if not result.ok:
        return result.problem
    if parse_time(result.get("finished_at")) is None:
        return f"{label or result.path.name} has no finished_at yet"
    return None


def parse_time(value: Any) -> datetime | None:
    """An ISO time as Harbor writes it (``...Z`` or naive, both UTC), on Python 3.10 too."""
    if not isinstance(value, str) or not value:
        return None
    from datetime import datetime, timezone

    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    # 3.10's fromisoformat takes only 3 or 6 fraction digits.
    head, dot, rest = text.partition(".")
    if dot:
        digits = len(rest) - len(rest.lstrip("0123456789"))
        text = head + "." + (rest[:digits] + "000000")[:6] + rest[digits:]
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def time_span(value: Any) -> TimeSpan | None:
    if not isinstance(value, dict):
        return None
    return TimeSpan(parse_time(value.get("started_at")), parse_time(value.get("finished_at")))


def exception_record(value: Any) -> ExceptionRecord | None:
    if not isinstance(value, dict) or not isinstance(value.get("exception_type"), str):
        return None
    return ExceptionRecord(
        type=value["exception_type"],
        message=str(value.get("exception_message") or ""),
        traceback=str(value.get("exception_traceback") or ""),
        occurred_at=parse_time(value.get("occurred_at")),
    )


def exception_from_text(text: str | None) -> ExceptionRecord | None:
    """The exception of ``exception.txt`` (a traceback whose last line is
    ``module.Type: message``), with its bare type name as result.json keeps it."""
    if not text:
        return None
    from verifier_tui.engine.harbor.runner_output import parse_runner_output

    parsed = parse_runner_output(text)
    if parsed.traceback is None:
        return None
    tb = parsed.traceback
    return ExceptionRecord(type=tb.bare_type, message=tb.exception_message, traceback=text)
