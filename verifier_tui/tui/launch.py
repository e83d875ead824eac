"""``verifier-tui PATH``: open the session the command line asked for and run the app."""

from __future__ import annotations



def launch(args) -> int:
    from verifier_tui.cli import open_session

    session = open_session(args)  # prints a clear error and exits 2 when the path cannot be debugged
    try:
        from verifier_tui.tui.app import VerifierApp

        app = VerifierApp(session, watch=not args.no_watch, poll=args.poll)
        app.run()
        return app.return_code or 0
    finally:
        session.close()
