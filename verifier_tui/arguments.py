"""The argparse parsers of the ``verifier-tui`` command: the authority on its
options, their help and their errors. :mod:`verifier_tui.cli` reads the common
well-formed headless command lines without them (see
``read_simple_command_line``) and comes here for everything else."""

from __future__ import annotations

import argparse
from pathlib import Path

from verifier_tui import __version__
from verifier_tui.cli import DESCRIPTION


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


