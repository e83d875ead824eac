"""The ``?`` help of a trial's screen: what its marks mean, then every key,
from the one key table (:data:`verifier_tui.tui.trial_keys.TRIAL_KEYS`)."""

from __future__ import annotations

from textual.content import Content

from verifier_tui.engine.harbor.phases import DONE, FAILED, NOT_REACHED, STOPPED, UNKNOWN
from verifier_tui.tui.display import content
from verifier_tui.tui.screens.help import keys_content, marks_content
from verifier_tui.tui.trial_keys import TRIAL_KEYS
from verifier_tui.words.trial import PHASE_MARKS

MARKS = [
    (
        "root cause",
        [
            (
                "✗",
                "the first thing that went wrong in the trial, in Harbor's order: the environment, "
                "the agent, the verifier (the verifier's part follows an earlier failure)",
            ),
            ("✓", "nothing went wrong: what Harbor scored"),
        ],
    ),
    (
        "the runner's steps",
        [
            (PHASE_MARKS[DONE], "done"),
            (PHASE_MARKS[FAILED], "failed: explained below the table"),
            (PHASE_MARKS[STOPPED], "still running when the run ended (a timeout)"),
            (PHASE_MARKS[NOT_REACHED], "not reached"),
            (PHASE_MARKS[UNKNOWN], "unknown: the sandbox's output does not tell"),
            ("◀▶", "where the sandbox and the replay part"),
        ],
    ),
    (
        "the agreement",
        [
            ("✓ same", "the replay ended as the sandbox did"),
            ("✗ differ", "it did not: why follows"),
            ("⚠ stale", "live reload is off and the task changed since this replay: r replays"),
        ],
    ),
]


def trial_help(from_job: bool) -> Content:
    extra = [("tab", "Move between the sandbox and the replay", "e opens the failing line of the side in focus")]
    if from_job:
        extra.append(("esc", "Back to the job's trials", "the list this trial was opened from"))
    return content(*marks_content(MARKS, width=9), *keys_content(TRIAL_KEYS, extra))
