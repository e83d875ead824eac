"""Leaving the app for the real terminal: the user's editor and pdb run there
with the app suspended, then the app comes back."""

from __future__ import annotations

import errno
import shlex
from pathlib import Path

from textual.app import App, SuspendNotSupported

from verifier_tui.engine.process import Attachment, popen
from verifier_tui.words.text import plain_text


def run_suspended(
    app: App[object],
    command: list[str],
    *,
    banner: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    wait_for_enter: bool = False,
    attach: Attachment | None = None,
    cpus: tuple[int, ...] = (),
) -> bool:
    """Run ``command`` in the real terminal while ``app`` is suspended, after
    a line saying what runs (``banner``). With ``wait_for_enter`` (or when the
    command cannot start, or fails) the terminal waits for Enter before the app returns,
    so its last words can be read. False when this app cannot suspend here (no
    terminal of its own: a test pilot, a web driver). ``attach``: a run's
    network helper, ``cpus`` the task's CPUs (:func:`~verifier_tui.engine.process.popen`)."""
    try:
        with app.suspend():
            # The banner names files, and a file name may hold escape codes:
            # written to the real terminal, they are shown harmlessly.
            print(f"verifier-tui: {plain_text(banner)}", flush=True)
            try:
                code = popen(command, attach=attach, cpus=cpus, cwd=cwd, env=env).wait()
                if code != 0 and not wait_for_enter:  # an editor that failed: its last words, and why it ended
                    print(f"verifier-tui: {plain_text(shlex.quote(command[0]))} exited {code}")
                    wait_for_enter = True
            except OSError as exc:
                print(
                    f"verifier-tui: could not start {plain_text(shlex.quote(command[0]))}: "
                    f"{plain_text(str(exc.strerror or exc))}"
                )
                wait_for_enter = True
            finally:
                if attach is not None:
                    attach.close()
            if wait_for_enter:
                try:
                    input("\nverifier-tui: press Enter to return ")
                except (EOFError, KeyboardInterrupt, OSError):
                    pass
            if _hung_up():
                raise _HungUp
    except SuspendNotSupported:
        return False
    except _HungUp:
        # Its SIGHUP waited for an event loop the suspended app held, and to
        # take the terminal back would wait for good: the app ends as q ends it.
        app.exit(return_code=129)
    return True


class _HungUp(Exception):
    """The terminal closed while the app was suspended."""


def _hung_up() -> bool:
    """Whether the terminal is gone (closed while the app was suspended): it
    answers every request with EIO."""
    import termios

    try:
        termios.tcgetattr(0)
    except termios.error as exc:
        return bool(exc.args[0] == errno.EIO)
    return False
