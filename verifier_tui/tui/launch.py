"""``verifier-tui PATH``: open the session the command line asked for and run the app."""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifier_tui.commands import terminal
from verifier_tui.engine.session import Session
from verifier_tui.words.run import python_words

if TYPE_CHECKING:
    import argparse


def launch(args: argparse.Namespace) -> int:
    """Run the app on ``args.target`` (what ``args.path`` names) with
    ``args.options`` (see verifier_tui.cli); a path that cannot be debugged
    raises before anything is drawn. A Harbor trial or job folder opens the
    trial's app."""
    if args.target.harbor:
        chosen = tuple(
            word
            for name in ("trial", "step", "task")
            if getattr(args, name, None) is not None
            for word in (f"--{name}", str(getattr(args, name)))
        )
        if not _has_terminal(args.path, chosen):
            return 2
        from verifier_tui.tui.trial_app import launch_trial  # Textual: only now that the TUI really starts

        return launch_trial(args)
    from verifier_tui.words.trial import only_for_trials

    refused = only_for_trials(args)
    if refused is not None:
        return terminal.refuse(refused)
    session = Session(args.target, args.options)
    try:
        session.isolation  # noqa: B018 - a sandbox asked for and impossible is one line (IsolationError), not a screen
        # A --python that cannot run the runner is bad input, as run says it (one line, exit 2):
        # the screen has no way to choose another, and its every run would fail to start.
        problem = python_words(session.interpreter())
        if problem is not None:
            return terminal.refuse(problem)
        if not _has_terminal(args.path, ("--step", session.step) if session.step is not None else ()):
            return 2  # the step kept: without it, run and watch would run tests/ alone
        from verifier_tui.tui.app import VerifierApp  # Textual: only now that the TUI really starts

        app = VerifierApp(session, watch=not args.no_watch, poll=args.poll)
        app.run()
        return app.return_code or 0
    finally:
        session.close()


def _has_terminal(path: str, chosen: tuple[str, ...] = ()) -> bool:
    """Whether stdin and stdout are a terminal, which the app needs; when not
    (``verifier-tui TASK </dev/null >out``, a CI step), one line says what to
    use instead. Textual would draw its escape codes into the file and wait
    for keys that never come. Checked after the path, so that a path that
    cannot be debugged is still what is said first. ``chosen``: the options
    that pick what is opened (``--trial NAME``), kept in the suggested commands."""
    import sys

    from verifier_tui.engine.procfs import shell_word

    if sys.stdin.isatty() and sys.stdout.isatty():
        return True
    # Said of each stream that is not one ("stdin and stdout is not one" read wrong).
    lacking = [name for name, stream in (("stdin", sys.stdin), ("stdout", sys.stdout)) if not stream.isatty()]
    where = "neither stdin nor stdout is one" if len(lacking) == 2 else f"{lacking[0]} is not one"
    quoted = " ".join(map(shell_word, [path, *chosen]))  # one line, a bidi control shown
    terminal.error(
        f"the TUI needs a terminal, and {where}: use `verifier-tui run {quoted}` "
        f"for one run, or `verifier-tui watch {quoted}` to run on every change"
    )
    return False
