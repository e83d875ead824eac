"""A run's strays in words: each one's command line cut to a line, and the
note that counts them.

A stray is a process the run left running once it was over. Without
namespaces the process driver finds them by a mark in their environment
(:data:`~verifier_tui.engine.process.MARKER`) and ends them; in the view
(:mod:`.isolation`) its init lists them. Either way a stray is
one process, however many run the same command, and its command line is
shown the one way (:func:`~verifier_tui.engine.procfs.shown_command`), so
both sandboxes count and name the same processes in the same words.

Where ``/proc`` is missing (macOS), nothing is found: the run's process
group is still ended, and escaped processes are not reported.
"""

from __future__ import annotations

SHOWN_CHARS = 160
"""A command line is shown cut to this many characters (:func:`cut`)."""


def cut(command: str) -> str:
    """A command line cut to :data:`SHOWN_CHARS` (once its paths are the user's)."""
    return command if len(command) <= SHOWN_CHARS else command[: SHOWN_CHARS - 1] + "…"


NOTICE_COMMANDS = 3
"""How many different command lines the note about strays names."""


def strays_notice(commands: list[str], *, more: int = 0, at_least: bool = False) -> str:
    """The note about a run's strays (one command line per process): how
    many, and the first few different command lines, each with how many
    processes ran it. ``more``: found past the ones listed, counted only
    (:data:`~.isolation.STRAYS_MOST` are listed at most, in either sandbox),
    said apart as processes not listed: their command lines are not known,
    so they are never counted among the ones named; ``at_least``: the
    listing was cut short (past the run's timeout and a grace), so there
    were at least as many."""
    counts: dict[str, int] = {}
    for command in commands:
        counts[command] = counts.get(command, 0) + 1
    # the most run first, then by their words: the same note whatever order the processes were found in
    named = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:NOTICE_COMMANDS]
    parts = [command if n == 1 else f"{command} (×{n})" for command, n in named]
    rest = len(commands) - sum(n for _, n in named)
    if rest:  # said as other than those named: a bare "+100 more" reads as more of the last, or of those not listed
        parts.append(f"+{rest} more with " + ("another command line" if rest == 1 else "other command lines"))
    if more:
        parts.append(f"{more} more process(es) not listed (only the first {len(commands)} are)")
    shown = "; ".join(parts)
    if at_least:
        return (
            f"the run left at least {len(commands) + more} process(es) running, ended when it was over "
            f"(listing them outlasted the run's timeout and was cut short): {shown}"
        )
    return f"the run left {len(commands) + more} process(es) running, ended when it was over: {shown}"
