"""The ``verifier-tui`` command: the TUI by default, and the headless
``run``, ``explain``, ``test`` and ``watch`` commands.

Start-up matters (``run --json`` is timed against the bare runner), so this
module reads a well-formed headless command line itself and leaves argparse
(verifier_tui/arguments.py) to help and errors; Textual is imported only when
the TUI is really started, asyncio only by the commands that need it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


TYPE_CHECKING = False  # typing is not imported at run time: start-up is measured
if TYPE_CHECKING:
    from typing import Any

COMMANDS = ("run", "explain", "test", "watch")

DESCRIPTION = """\
A terminal debugger for Python verifiers of Harbor tasks.

  verifier-tui PATH            open the TUI on a task, its tests/ folder, a verifier or a case
  verifier-tui run PATH        run once as the sandbox would; exit status is the runner's
  verifier-tui explain PATH    show sys.path, where nemo_gym resolves, and verify's bindings
  verifier-tui test PATH       run every case that has an expected.json; exit 0 when all match
  verifier-tui watch PATH      re-run on every relevant change, one line per run

Run `verifier-tui COMMAND --help` for a command's options.
"""


# The headless commands' options, for the fast reading below; the argparse
# parsers in verifier_tui/arguments.py are the authority (help, errors), and a
# test checks that both read every well-formed command line alike.
_VALUE_FLAGS = {
    "--verifier": ("verifier", str),
    "--case": ("case", str),
    "--workspace": ("workspace", Path),
    "--response": ("response", Path),
    "--task-data": ("task_data", Path),
    "--timeout": ("timeout", float),
    "--python": ("python", str),
    "--nemo-gym": ("nemo_gym", Path),
}
_COMMAND_VALUE_FLAGS = {"test": {"--junit": ("junit", Path), "--jobs": ("jobs", int), "-j": ("jobs", int)}}
_SWITCHES = {"run": ("--json",), "explain": ("--json",), "test": ("--json",), "watch": ("--json", "--poll")}


def read_simple_command_line(argv: list[str]):
    """The options of a well-formed headless command line (``run PATH --flag
    value ...``), read without argparse; None for anything else (help, an
    error, ``--flag=value``, an abbreviation), which argparse then reads.

    Importing argparse (with gettext and locale) and building its parser cost
    about 3.5 ms, some 6% of a whole ``run --json``, which is timed against the
    bare runner."""
    from types import SimpleNamespace

    command = argv[0]
    values = dict(_VALUE_FLAGS)
    values.update(_COMMAND_VALUE_FLAGS.get(command, {}))
    if command == "test":
        del values["--case"]
    switches = _SWITCHES[command] + ("--no-response",)
    found: dict = {}
    path = None
    index = 1
    while index < len(argv):
        word = argv[index]
        if word in switches:
            found[word[2:].replace("-", "_")] = True
            index += 1
        elif word in values:
            dest, kind = values[word]
            if dest in found or index + 1 >= len(argv) or argv[index + 1].startswith("-"):
                return None
            try:
                found[dest] = kind(argv[index + 1])
            except ValueError:
                return None
            index += 2
        elif word.startswith("-") or path is not None:
            return None
        else:
            path = word
            index += 1
    timeout = found.get("timeout")
    if path is None or (timeout is not None and not timeout > 0) or (found.get("no_response") and "response" in found):
        return None
    options = {"command": command, "path": path, "verifier": None, "case": None, "workspace": None,
               "response": None, "no_response": False, "task_data": None, "timeout": None, "python": "python3",
               "nemo_gym": None, "json": False}
    if command == "test":
        del options["case"]
        options.update(junit=None, jobs=None)
    if command == "watch":
        options["poll"] = False
    options.update(found)
    return SimpleNamespace(**options)


def options_from(args):
    from verifier_tui.engine.session import Options

    return Options(
        verifier=args.verifier,
        case=getattr(args, "case", None),
        workspace=args.workspace,
        response=args.response,
        no_response=args.no_response,
        task_data=args.task_data,
        timeout=args.timeout,
        python=args.python,
        nemo_gym=args.nemo_gym,
    )


def open_session(args):
    """A Session for the command line's choices, or a clear error and exit 2."""
    from verifier_tui.engine.discovery import DiscoveryError
    from verifier_tui.engine.session import SelectionError, Session

    try:
        return Session(args.path, options_from(args))
    except (DiscoveryError, SelectionError) as exc:
        _fail(str(exc))
    except OSError as exc:
        _fail(f"{exc.filename or args.path}: {exc.strerror or exc}")


def _fail(message: str, code: int = 2) -> None:
    sys.stderr.write(f"verifier-tui: {message}\n")
    raise SystemExit(code)


def main(argv: list[str] | None = None) -> int:
    """The program. Called without ``argv`` (the console script, ``python -m
    verifier_tui``), a headless command ends the process itself once its
    output is flushed (see :func:`_exit_now`)."""
    entry_point = argv is None
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in COMMANDS:
        args = read_simple_command_line(argv)
        if args is None:
            from verifier_tui.arguments import build_parser

            args = build_parser(only=argv[0]).parse_args(argv)
    elif not argv or argv[0] in ("-h", "--help", "--version"):
        from verifier_tui.arguments import build_parser

        build_parser().parse_args(argv or ["--help"])
        return 0
    else:
        from verifier_tui.arguments import build_tui_parser

        args = build_tui_parser().parse_args(argv)
        args.command = None
    restore = _stop_cleanly_on_sigterm() if args.command is not None else None
    try:
        code = _dispatch(args)
    finally:
        if restore is not None:
            restore()
    if entry_point and args.command is not None:
        _exit_now(code)
    return code


def _exit_now(code: int) -> None:
    """End the process at once, output flushed: the interpreter's orderly
    shutdown (tearing down every module) costs more than a tenth of the bare
    runner's time, and ``run --json`` is timed against it. Only the program's
    own entry point does this, only after a headless command is done (its
    scratch folder removed, its child processes ended, asyncio closed), when
    nothing is left for that shutdown to do."""
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def _dispatch(args) -> int:
    try:
        if args.command == "run":
            from verifier_tui.headless import command_run

            return command_run(args)
        if args.command == "explain":
            from verifier_tui.headless import command_explain

            return command_explain(args)
        if args.command == "test":
            from verifier_tui.headless import command_test

            return command_test(args)
        if args.command == "watch":
            from verifier_tui.headless import command_watch

            return command_watch(args)
        from verifier_tui.tui.launch import launch

        return launch(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        # A choice that turned out impossible mid-way (a verifier deleted, a
        # case gone): one clear line, never a traceback from our own code.
        from verifier_tui.engine.discovery import DiscoveryError
        from verifier_tui.engine.session import SelectionError

        if isinstance(exc, (DiscoveryError, SelectionError)):
            sys.stderr.write(f"verifier-tui: {exc}\n")
            return 2
        if isinstance(exc, OSError):
            sys.stderr.write(f"verifier-tui: {exc.filename or ''}: {exc.strerror or exc}\n")
            return 2
        raise


def _stop_cleanly_on_sigterm():
    """SIGTERM (``kill``, a CI job's timeout) ends a headless command the way
    Ctrl+C does: the run's process group is ended and the scratch folder
    removed. Python's default would die on the spot and leave both behind (the
    runner lives in its own session, so nothing else would end it). A second
    SIGTERM is ignored while that clean-up runs. Returns what puts the previous
    handler back (None when there was another handler already: left alone)."""
    import signal

    try:
        if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
            return None  # someone (a test harness, an embedding program) decided already
    except ValueError:
        return None

    def stop(signum: int, _frame: object) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise SystemExit(128 + signum)

    try:
        signal.signal(signal.SIGTERM, stop)
    except ValueError:  # not the main thread: signals are not ours to handle
        return None
    return lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL)


def dump_json(data: Any) -> str:
    return json.dumps(data, indent=2, default=str, ensure_ascii=False)
