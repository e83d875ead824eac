"""Find a run's escaped processes without namespaces: by a mark in their environment.

A process that calls ``setsid`` (or is started with ``process_group=0``, or
double-forks) leaves the runner's process group, so ending the group misses
it. Every process inherits its parent's environment, though, and
``/proc/<pid>/environ`` shows the one a process started with: the runner
gets ``VERIFIER_TUI_RUN=<a token of its own>``, and once it is over (exited,
timed out or superseded) every process of ours whose environment holds that
token is one of its descendants still running. This is how CI servers find a
build's strays (Jenkins' ``BUILD_ID``). A process that starts another with a
cleaned environment escapes it; with namespaces (:mod:`.isolation`) nothing
escapes, and the namespace's init lists what outlived the runner instead.

Either way a stray is one process, however many run the same command, and
its command line is shown by :func:`shown_command` (one line, escaped), so
both sandboxes count and name the same processes in the same words.

Where ``/proc`` is missing (macOS), nothing is found: the run's process
group is still ended, and escaped processes are not reported.
"""

from __future__ import annotations

import os
import re
import signal
import time

from verifier_tui.engine import procfs

MARKER = "VERIFIER_TUI_RUN"


def new_token() -> str:
    return f"{os.getpid()}-{time.monotonic_ns()}-{os.urandom(4).hex()}"


def find(token: str) -> dict[int, str]:
    """The processes (pid: command line) whose environment holds ``token``."""
    needle = f"{MARKER}={token}".encode()
    out: dict[int, str] = {}
    me = os.getpid()
    for pid in procfs.pids():
        if pid == me:
            continue
        environ = procfs.read(pid, "environ", procfs.ARGS_BYTES)
        if environ is None or needle not in environ.split(b"\0"):  # gone, not ours, or not of the run
            continue
        if procfs.is_over(pid):
            continue
        out[pid] = command_line(pid)
    return out


def end(token: str, rounds: int = 5) -> dict[int, str]:
    """SIGKILL every process marked with ``token`` (again, for those started
    meanwhile); each one's command line by its pid, for the run's result."""
    commands: dict[int, str] = {}
    for _ in range(rounds):
        found = find(token)
        if not found:
            break
        for pid, command in found.items():
            commands.setdefault(pid, command)
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        _wait_gone(found, 1.0)
    return commands


def _wait_gone(pids, within_s: float) -> None:
    until = time.monotonic() + within_s
    for pid in pids:
        while time.monotonic() < until:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            if procfs.is_over(pid):
                break
            time.sleep(0.005)


CMDLINE_BYTES = 1024
"""How much of a command line is read: enough for :data:`SHOWN_CHARS`
(the namespace's init reads as much, engine/sandbox/isolation.py)."""

SHOWN_CHARS = 160
"""A command line is shown cut to this many characters (:func:`cut`)."""


def command_line(pid: int) -> str:
    """A process's command line as :func:`shown_command` shows it (``pid N`` when it cannot be read)."""
    return shown_command(procfs.read(pid, "cmdline", CMDLINE_BYTES) or b"", pid)


def shown_command(raw: bytes, pid: int) -> str:
    """A command line (``/proc/PID/cmdline``'s bytes: words ended by NUL) on
    one line, as a shell would take it back: a word with spaces or quotes
    quoted, one with newlines, other control characters, bidi controls or
    bytes that are not UTF-8 written as ``$'...'`` with visible escapes
    (``python3 -c $'import os\\nwhile 1: ...'``). ``pid N`` for an empty
    one (a kernel thread, a process gone meanwhile)."""
    words = raw.split(b"\0")
    if words and not words[-1]:
        words.pop()  # the NUL that ends the last word
    if not words:
        return f"pid {pid}"
    return " ".join(_word(word) for word in words)


def cut(command: str) -> str:
    """A command line cut to :data:`SHOWN_CHARS` (once its paths are the user's)."""
    return command if len(command) <= SHOWN_CHARS else command[: SHOWN_CHARS - 1] + "…"


_PLAIN = re.compile(r"[\w@%+=:,./-]+")
# C0 and C1 controls, DEL, the bidi controls (they reorder what surrounds
# them), and the bytes that were not UTF-8 (as surrogateescape keeps them).
_ESCAPED = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\udc80-\udcff]")
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\\": "\\\\", "'": "\\'"}


def _word(raw: bytes) -> str:
    text = raw.decode("utf-8", errors="surrogateescape")
    if _PLAIN.fullmatch(text):
        return text
    if not _ESCAPED.search(text):
        return "'" + text.replace("'", "'\\''") + "'"
    return "$'" + "".join(_NAMED.get(ch) or (_escape(ch) if _ESCAPED.match(ch) else ch) for ch in text) + "'"


def _escape(ch: str) -> str:
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}"


NOTICE_COMMANDS = 3
"""How many different command lines the note about strays names."""


def strays_notice(commands: list[str]) -> str:
    """The note about a run's strays (one command line per process): how
    many, and the first few different command lines, each with how many
    processes ran it."""
    counts: dict[str, int] = {}
    for command in commands:
        counts[command] = counts.get(command, 0) + 1
    # the most run first, then by their words: the same note whatever order the processes were found in
    named = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:NOTICE_COMMANDS]
    shown = "; ".join(command if n == 1 else f"{command} (×{n})" for command, n in named)
    rest = len(commands) - sum(n for _, n in named)
    if rest:
        shown += f"; +{rest} more"
    return f"the run left {len(commands)} process(es) running, ended when it was over: {shown}"
