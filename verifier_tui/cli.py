"""The ``verifier-tui`` command: the TUI by default, and the headless
``run``, ``explain``, ``test`` and ``watch`` commands.

Start-up matters (``run --json`` is timed against the bare runner), so this
module imports only argparse and the engine; Textual is imported only when the
TUI is really started, asyncio only by the commands that need it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from verifier_tui import __version__

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


def _add_selection(parser: argparse.ArgumentParser, with_case: bool = True) -> None:
    parser.add_argument("path", metavar="PATH", help="a task folder, its tests/ folder, a verifier .py file or a case folder")
    parser.add_argument("--verifier", metavar="FILE", help="which verifier, when the task has several")
    if with_case:
        parser.add_argument("--case", metavar="NAME", help="a case under the task's cases/ folder (or a case folder)")
    parser.add_argument("--workspace", metavar="DIR", type=Path, help="the workspace folder (overrides the case's)")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--response", metavar="FILE", type=Path,
                       help="the agent's final response: a Responses API JSON object (.json) or plain text (wrapped)")
    group.add_argument("--no-response", action="store_true", help="Harbor mode: no response, even if the case has one")
    parser.add_argument("--task-data", metavar="FILE", type=Path, help="the task's fields as a JSON object")
    parser.add_argument("--timeout", metavar="SECONDS", type=_positive_float,
                        help="overrides task.toml's [verifier] timeout_sec")
    parser.add_argument("--python", metavar="EXE", default="python3",
                        help="the interpreter that runs the runner (default: python3 on PATH, as test.sh would)")
    parser.add_argument("--nemo-gym", metavar="DIR", type=Path,
                        help="a nemo_gym/verifiers folder to vendor instead of the interpreter's own")


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError("must be more than 0")
    return value


_width: list[int] = []


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """argparse builds a formatter for every add_argument call, and each one
    asks the terminal for its size: measured at about 3 ms of start-up for our
    parsers. The width is asked once."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        if width is None:
            if not _width:
                import shutil

                _width.append(shutil.get_terminal_size().columns - 2)
            width = _width[0]
        super().__init__(prog, indent_increment, max_help_position, width)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; ``only`` builds just that command's
    subparser (the one being run: each costs a millisecond or two at start-up)."""
    parser = argparse.ArgumentParser(
        prog="verifier-tui", description=DESCRIPTION, formatter_class=_Formatter
    )
    parser.add_argument("--version", action="version", version=f"verifier-tui {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    if only in (None, "run"):
        run = sub.add_parser("run", formatter_class=_Formatter, help="run once, as the sandbox would")
        _add_selection(run)
        run.add_argument("--json", action="store_true", help="print the result as one JSON document")

    if only in (None, "explain"):
        explain = sub.add_parser("explain", formatter_class=_Formatter, help="sys.path, nemo_gym and verify's bindings, without calling verify")
        _add_selection(explain)
        explain.add_argument("--json", action="store_true", help="print the runner's explanation as JSON")

    if only in (None, "test"):
        test = sub.add_parser("test", formatter_class=_Formatter, help="every case with an expected.json; exit 0 when all match")
        _add_selection(test, with_case=False)
        test.add_argument("--json", action="store_true", help="print the results as JSON")
        test.add_argument("--junit", metavar="FILE", type=Path, help="also write a JUnit XML report")
        test.add_argument("--jobs", "-j", metavar="N", type=int,
                          help="cases run at once (default: the number of CPUs)")

    if only in (None, "watch"):
        watch = sub.add_parser("watch", formatter_class=_Formatter, help="re-run on every relevant change, one line per run")
        _add_selection(watch)
        watch.add_argument("--json", action="store_true", help="one JSON document per run, one per line")
        watch.add_argument("--poll", action="store_true", help="poll for changes (network, container and WSL mounts)")
    return parser


def build_tui_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="verifier-tui", description=DESCRIPTION,
                                     formatter_class=_Formatter)
    parser.add_argument("--version", action="version", version=f"verifier-tui {__version__}")
    _add_selection(parser)
    parser.add_argument("--no-watch", action="store_true", help="start with live reload off")
    parser.add_argument("--poll", action="store_true", help="poll for changes (network, container and WSL mounts)")
    return parser


def options_from(args: argparse.Namespace):
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


def open_session(args: argparse.Namespace):
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
        args = build_parser(only=argv[0]).parse_args(argv)
    elif not argv or argv[0] in ("-h", "--help", "--version"):
        build_parser().parse_args(argv or ["--help"])
        return 0
    else:
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


def _dispatch(args: argparse.Namespace) -> int:
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
