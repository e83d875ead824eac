"""What a run printed is the verifier's to write: a trial's test-stdout.txt and
trial.log, a local run's stderr. The readers that look for the runner's report
in it (the traceback, the contract line, the shim's, the shell's, a group's
sub-exception, the frames to open, a stack dump at a timeout) are fed text made
of the lines they look for, forged, broken and interleaved with anything: each
gives its answer, never raises, never waits."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.hostile import bounded
from tests.strategies import utf8_text
from verifier_tui.engine.failing import traceback_frames
from verifier_tui.engine.harbor.facts import logged_verifier_failure
from verifier_tui.engine.harbor.runner_output import (
    SHIM_PREFIX,
    TRACEBACK_HEADER,
    group_sub_exception,
    parse_runner_output,
    report_frames,
    tail_start,
)
from verifier_tui.engine.model import CONTRACT_PREFIX, CapturedText
from verifier_tui.engine.stacks import take_stack

HUGE = "9" * 5000
LINES = st.sampled_from(
    [
        TRACEBACK_HEADER,
        "Exception Group " + TRACEBACK_HEADER,
        "  + Exception Group " + TRACEBACK_HEADER,
        '  File "/tests/verifier.py", line 3, in verify',
        '  File "/tests/verifier.py", line 3, in <module>',
        f'  File "/tests/verifier.py", line {HUGE}, in verify',
        '  File "/tests/verifier.py", line 2',
        '  File "/usr/lib/python3.12/json/decoder.py", line 355, in raw_decode',
        '  File "/tests/helpers.py", line 6 in wait_for_file',
        f'  File "/tests/helpers.py", line {HUGE} in wait_for_file',
        '  File "/tests/helpers.py", line ??? in wait_for_file',
        "    raise ValueError('x')",
        "    ^^^^^^^^^^",
        "ValueError: boom",
        "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)",
        "SyntaxError: invalid syntax",
        "ExceptionGroup: 2 checks failed (2 sub-exceptions)",
        "  | ExceptionGroup: checks (1 sub-exception)",
        "  +-+---------------- 1 ----------------",
        "    +---------------- ... ----------------",
        "    | and 3 more exceptions",
        "    | AssertionError: notes.md is missing",
        "    +------------------------------------",
        "The above exception was the direct cause of the following exception:",
        "During handling of the above exception, another exception occurred:",
        "Exception ignored in: <function Scratch.__del__ at 0x7f>",
        "Exception ignored in atexit callback: <function bye at 0x7f>",
        "Exception in thread Thread-1 (worker):",
        "Error in atexit._run_exitfuncs:",
        CONTRACT_PREFIX + "verify returned None",
        SHIM_PREFIX + "; found Python 3.6",
        "/tests/test.sh: line 9: cd: /opt/x: No such file or directory",
        f"/tests/test.sh: {HUGE}: cd: can't cd to /opt/x",
        "Skipping exception record because trial already has exception_info",
        "Current thread 0x00007f (most recent call first):",
        "Thread 0x00007e (most recent call first):",
        "Task 'main' (most recent call first):",
        "  ...",
        "\x1b[35m",
        "",
        "  ",
    ]
)
OUTPUTS = st.lists(LINES | utf8_text(max_size=40), max_size=30).map("\n".join) | utf8_text(max_size=300)
SETTINGS = settings(max_examples=300)


@SETTINGS
@given(text=OUTPUTS)
def test_the_runners_report_is_found_or_not_in_any_output(text):
    output = bounded(parse_runner_output, text)
    assert output.kind in ("empty", "traceback", "contract_error", "shim_no_python", "test_sh_error", "other")
    if output.traceback is not None:
        assert all(frame.line is None or 0 <= frame.line < 10**10 for frame in output.traceback.frames)
        group_sub_exception(text, output.traceback.bare_type, output.traceback.exception_message)
    for frames in (report_frames(text), report_frames(text, whole_only=True), traceback_frames(text)):
        assert all(isinstance(path, str) and (line is None or 0 <= line < 10**10) for path, line in frames)
    assert 0 <= tail_start(text, len(text) // 2, 200) <= len(text)


@SETTINGS
@given(before=utf8_text(max_size=40), text=OUTPUTS)
def test_a_failure_harbor_logged_is_a_traceback_or_none_in_any_trial_log(before, text):
    logged = bounded(
        logged_verifier_failure, before + "Skipping exception record because trial already has exception_info" + text
    )
    assert logged is None or logged.type


@SETTINGS
@given(text=OUTPUTS, truncated=st.booleans())
def test_a_stack_dump_is_found_or_said_missing_in_any_stderr(text, truncated):
    stderr = CapturedText(head="" if truncated else text, tail=text if truncated else "", dropped_bytes=int(truncated))
    kept, stack = bounded(
        take_stack,
        stderr,
        True,
        stack_signal=True,
        stack_answer="",
        runner=None,
        verifier=Path("/tests/verifier.py"),
        tests_dir=Path("/tests"),
    )
    assert isinstance(kept, CapturedText)
    assert (stack.unavailable is None) or str(stack.unavailable)
