"""``verifier-tui PATH``: open the session the command line asked for and run the app."""

from __future__ import annotations

from verifier_tui.engine.session import Session


def launch(args) -> int:
    """Run the app on ``args.path`` with ``args.options`` (see verifier_tui.cli);
    a path that cannot be debugged raises before anything is drawn."""
    session = Session(args.path, args.options)
    try:
        from verifier_tui.tui.app import VerifierApp  # Textual: only now that the TUI really starts

        app = VerifierApp(session, watch=not args.no_watch, poll=args.poll)
        app.run()
        return app.return_code or 0
    finally:
        session.close()
