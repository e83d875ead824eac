"""The ``verifier-tui`` command: the TUI by default, and the headless ``run``,
``explain``, ``test`` and ``watch`` commands.

Every option is written once, in :data:`OPTIONS`; the argparse parsers are
built from it, and the engine's options (:class:`~verifier_tui.engine.session.Options`)
are read from the parsed command line by name. The faces (:mod:`verifier_tui.commands.headless`,
:mod:`verifier_tui.tui.launch`) get the parsed command line with those
options as ``args.options``, and what its path names as ``args.target``
(``args.targets`` for ``test``: :func:`verifier_tui.engine.task.target.classify`).
Textual is imported only when the TUI is really started.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from verifier_tui import __version__
from verifier_tui.commands import stopping, terminal
from verifier_tui.commands.options import positive_seconds
from verifier_tui.engine.sandbox.isolation import IsolationError
from verifier_tui.engine.session import Options, SelectionError
from verifier_tui.engine.task.discovery import DiscoveryError
from verifier_tui.engine.task.target import EXPECTED_PATHS, classify
from verifier_tui.words.text import unbroken

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NoReturn

DESCRIPTION = """\
A terminal debugger for Python verifiers of Harbor tasks.

  verifier-tui [PATH]          open the TUI on a task, its tests/ folder, a verifier or a case,
                               or a Harbor trial or job folder (sandbox beside a local replay);
                               without PATH, on the folder it is started in
  verifier-tui run PATH        run once as the sandbox would; exit status is the runner's
  verifier-tui explain PATH    show sys.path, where nemo_gym resolves, and verify's bindings
  verifier-tui test PATH...    run every case that has an expected.json; exit 0 when all match
  verifier-tui watch PATH      re-run on every relevant change, one line per run
  verifier-tui audit TASK      the verifier on what a failed or gaming agent leaves; exit 1 if it pays
  verifier-tui compare A B     two jobs on the same tasks: each task's mean, the trials that flipped
  verifier-tui new PATH        write a new task with a Python verifier and three cases, then open it
  verifier-tui vendor TASK     place or refresh the shim (tests/test.sh) and the runner (tests/.ng/)

Run `verifier-tui COMMAND --help` for a command's options.
"""

#: The headless commands and the one-line help of each.
COMMANDS = {
    "run": "run once, as the sandbox would",
    "explain": "sys.path, nemo_gym and verify's bindings, without calling verify",
    "test": "every case with an expected.json; exit 0 when all match",
    "watch": "re-run on every relevant change, one line per run",
    "audit": "the verifier on what a failed or gaming agent leaves; exit 1 when one scores as a passing case",
    "compare": "two Harbor jobs side by side: per task each job's mean and the trials whose outcome flipped",
    "new": "write a new task with a Python verifier and three cases, then open it in the TUI",
    "vendor": "place or refresh a task's tests/test.sh shim and tests/.ng/run_verifier.py",
}
#: The commands that write a task's files; they take none of the run options.
AUTHORING = ("new", "vendor")
TUI = "tui"  # the TUI's own parser: `verifier-tui PATH`
#: The commands that run a task (compare only reads two jobs).
EVERY = (TUI, *(command for command in COMMANDS if command not in (*AUTHORING, "compare")))
#: The commands that run on one choice of inputs (audit makes its own, from every case's).
ONE_CHOICE = tuple(command for command in EVERY if command != "audit")
#: The commands that run one case (test runs every case).
ONE_CASE = tuple(command for command in ONE_CHOICE if command != "test")


def _at_least_one(text: str) -> int:
    """``-j N``: a whole number, 1 or more (0 or less would run nothing, or all at once)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give 1 or more")
    return value


class _Once(argparse.Action):
    """An option these commands take once (``--case``, ``--trial``): given again it is refused,
    never the last one silently kept, since ``test`` takes several and the user may expect as
    much here; ``why`` says which command takes several."""

    def __init__(self, *args: Any, why: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.why = why

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, value: Any, *_: Any) -> None:
        before = getattr(namespace, self.dest)
        if before is not None:
            raise argparse.ArgumentError(self, f"given twice ({before}, {value}): {self.why}")
        setattr(namespace, self.dest, value)


def _env_word(text: str) -> str:
    """``--env NAME`` or ``--env NAME=VALUE``, checked now (a bare NAME must be
    set in the user's environment) and kept as given: the engine reads it
    (verifier_tui.engine.sandbox.environment)."""
    from verifier_tui.engine.sandbox.environment import parse_assignment

    try:
        parse_assignment(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _nemo_gym(text: str) -> Path:
    """``--nemo-gym DIR``, checked now: a folder that holds no nemo_gym/verifiers
    is bad input, refused before anything runs (each run would only fail to start)."""
    from verifier_tui.engine.task.kinds import verifiers_folder

    path = Path(text)
    problem = verifiers_folder(path)[1]
    if problem is not None:
        raise argparse.ArgumentTypeError(f"{text}: {problem}")
    return path


def _file(text: str) -> Path:
    """A report file's path (argparse makes ``""`` the current folder)."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path: give a file name")
    if text == "-":  # stdout is the table's, or --json's
        raise argparse.ArgumentTypeError("-: a report goes to a file; give its name (./- for a file named -)")
    return Path(text)


def _folder(text: str) -> str:
    """``new``'s and ``vendor``'s folder: ``""`` is no folder (``Path("")`` is the current one)."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path: give a folder")
    return text


def _module_names(text: str) -> tuple[str, ...]:
    """``--preload numpy,pandas``: dotted module names, comma-separated."""
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    bad = [name for name in names if not all(part.isidentifier() for part in name.split("."))]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"{text!r}: give module names, comma-separated (numpy,pandas)")
    return names


#: Every option, once: (flags, the commands that take it, whether it is one of
#: the engine's Options, argparse's keywords). ``help`` may name a text per
#: command; ``group`` puts options in one mutually exclusive group.
OPTIONS: list[tuple[tuple[str, ...], tuple[str, ...], bool, dict[str, Any]]] = [
    (("--verifier",), EVERY, True, dict(metavar="FILE", help="which verifier, when the task has several")),
    (
        ("--case",),
        ONE_CASE,
        True,
        dict(
            metavar="NAME",
            action=_Once,
            why="run, explain, watch and the TUI run one case; test takes several",
            help="a case under the task's cases/ folder (or a case folder)",
        ),
    ),
    (
        ("--workspace",),
        ONE_CHOICE,
        True,
        dict(
            metavar="DIR",
            type=Path,
            help="the workspace folder (overrides the case's); for a Harbor trial or "
            "job, it stands in for /app where a trial did not capture it",
        ),
    ),
    (
        ("--response",),
        ONE_CHOICE,
        True,
        dict(
            metavar="FILE",
            type=Path,
            group="response",
            help="the agent's final response: a Responses API JSON object (.json) or plain text (wrapped)",
        ),
    ),
    (
        ("--no-response",),
        ONE_CHOICE,
        True,
        dict(action="store_true", group="response", help="Harbor mode: no response, even if the case has one"),
    ),
    (
        ("--task-data",),
        ONE_CHOICE,
        True,
        dict(
            metavar="FILE",
            type=Path,
            help="the task's fields as a JSON object (or a .jsonl of task rows, with --task-id)",
        ),
    ),
    (
        ("--task-id",),
        ONE_CHOICE,
        True,
        dict(metavar="ID", help="a parameterized task's row: the tasks.jsonl row with this task_id is the task data"),
    ),
    (
        ("--runner",),
        EVERY,
        True,
        dict(
            choices=("ours", "task"),
            default="ours",
            help="ours (default) or task: the runner the task ships in tests/.ng/, as the sandbox would run it",
        ),
    ),
    (
        ("--timeout",),
        EVERY,
        True,
        dict(metavar="SECONDS", type=positive_seconds, help="overrides task.toml's [verifier] timeout_sec"),
    ),
    (
        ("--python",),
        EVERY,
        True,
        dict(
            metavar="EXE",
            default="python3",
            help="the interpreter that runs the runner (default: python3 on PATH, as test.sh would)",
        ),
    ),
    (
        ("--network",),
        EVERY,
        True,
        dict(
            choices=("task", "host"),
            default="task",
            help="task (default): the network the task's network_mode gives, in the run's own network namespace; "
            "host: this machine's network, its loopback services included (said on every run)",
        ),
    ),
    (
        ("--nemo-gym",),
        EVERY,
        True,
        dict(
            metavar="DIR", type=_nemo_gym, help="a nemo_gym/verifiers folder to vendor instead of the interpreter's own"
        ),
    ),
    (
        ("--env",),
        EVERY,
        True,
        dict(
            metavar="NAME[=VALUE]",
            type=_env_word,
            action="append",
            help="give the runner this variable (repeatable): its value from your environment, or VALUE. "
            "Otherwise the runner gets only PATH, HOME, USER, the locale, TERM, TMPDIR and the task's "
            "[verifier] env, as in Harbor's sandbox; a trial's ${NAME} takes only what --env NAME gives",
        ),
    ),
    (
        ("--json",),
        (*EVERY[1:], "compare"),
        False,
        dict(
            action="store_true",
            help={
                "run": "print the result as one JSON document",
                "explain": "print the runner's explanation as JSON",
                "test": "print the results as JSON (with --watch: one document per round, one per line)",
                "watch": "one JSON document per run, one per line",
                "audit": "print the audit as one JSON document: the bar, each probe, the notes",
                "compare": "print the comparison as one JSON document",
            },
        ),
    ),
    (
        ("--case",),
        ("test",),
        False,
        dict(
            metavar="NAME",
            action="append",
            dest="case_patterns",
            help=(
                "only the cases NAME names: a case name or a glob (wrong-*), or TASK::CASE (both may be globs); "
                "may be repeated. For a Harbor job or trial: the task's case NAME stands in for /app where a trial "
                "did not capture it"
            ),
        ),
    ),
    (
        ("--stand-in",),
        (TUI, "run", "explain", "test", "watch"),
        False,
        dict(
            choices=("empty",),
            help=(
                "a Harbor trial or job: an empty /app (what an agent that wrote nothing leaves) where a trial did not "
                "capture /app"
            ),
        ),
    ),
    (("--junit",), ("test",), False, dict(metavar="FILE", type=_file, help="also write a JUnit XML report")),
    (
        ("--coverage",),
        ("run", "test"),
        True,
        dict(action="store_true", help="after the results, the lines of the task's own Python no case reached"),
    ),
    (
        ("--coverage-report",),
        ("run", "test"),
        False,
        dict(metavar="FILE", type=_file, help="write the task's own lines and whether a case reached each as LCOV"),
    ),
    (
        ("--watch",),
        ("test",),
        False,
        dict(
            action="store_true",
            help="every case, then every case again on each save of a file a case reads (the table drawn again), "
            "until Ctrl+C",
        ),
    ),
    (
        ("--jobs", "-j"),
        ("test", "audit"),
        False,
        dict(metavar="N", type=_at_least_one, help="cases (audit: probes) run at once (default: the number of CPUs)"),
    ),
    (
        ("--trial",),
        ONE_CASE,
        False,
        dict(
            metavar="NAME",
            action=_Once,
            why="run, explain, watch and the TUI replay one trial; test JOB replays every one",
            help="a Harbor job folder: which of its trials",
        ),
    ),
    (
        ("--step",),
        ONE_CHOICE,
        True,
        dict(
            metavar="NAME",
            help="a multi-step Harbor trial: which step (default: the first); a multi-step task: the step to verify "
            "as Harbor does, its steps/NAME/tests over tests/ and its [steps.verifier] (default: tests/ alone)",
        ),
    ),
    (
        ("--task",),
        ONE_CHOICE,
        False,
        dict(
            metavar="DIR",
            type=Path,
            help="a Harbor trial or job: the task it ran, when it is not found where the trial says",
        ),
    ),
    (
        ("--both-modes",),
        ("run",),
        False,
        dict(
            action="store_true",
            help="run the case in environment-server mode (with its response) and in Harbor mode (none)",
        ),
    ),
    (
        ("--preload",),
        (TUI, "watch", "test"),
        True,
        dict(
            metavar="MODULES",
            type=_module_names,
            default=(),
            help="a run started ahead imports these modules (comma-separated) while it waits, before the "
            'task\'s files are read (off by default; see "Warm runs" in docs/sandbox.md)',
        ),
    ),
    (("--no-watch",), (TUI,), False, dict(action="store_true", help="start with live reload off")),
    (
        ("--poll",),
        (TUI, "watch", "test"),
        False,
        dict(action="store_true", help="poll for changes (network, container and WSL mounts)"),
    ),
    (
        ("--name",),
        ("new",),
        False,
        dict(
            metavar="ORG/NAME",
            help="the task's [task] name, as Harbor publishes it (default: local/<the folder's name>)",
        ),
    ),
    (
        ("--save-case",),
        ("run",),
        False,
        dict(
            metavar="NAME",
            help="keep this run as the task's case NAME: its workspace (a trial's captured /app), response and "
            "task data copied into cases/NAME/, expected.json from its verdict",
        ),
    ),
    (("--no-open",), ("new",), False, dict(action="store_true", help="do not open the TUI on the new task")),
]


def _add_options(parser: argparse.ArgumentParser, command: str) -> None:
    if command == "new":
        parser.add_argument(
            "path", metavar="PATH", type=_folder, help="the folder to write the task in (new, or empty)"
        )
    elif command == "vendor":
        parser.add_argument("path", metavar="TASK", type=_folder, help="the task folder")
    elif command == "audit":
        parser.add_argument("path", metavar="TASK", help=EXPECTED_PATHS)
    elif command == "compare":
        parser.add_argument("jobs", metavar="JOB", nargs=2, help="two Harbor job folders (A, then B)")
    elif command == "test":
        parser.add_argument(
            "paths",
            metavar="PATH",
            nargs="+",
            help=f"{EXPECTED_PATHS}, or a folder to search for tasks with cases (several may be "
            "given); or a Harbor job or trial folder, alone",
        )
    else:
        parser.add_argument("path", metavar="PATH", help=f"{EXPECTED_PATHS}; or a Harbor trial or job folder")
    groups: dict[str, argparse._MutuallyExclusiveGroup] = {}
    for flags, commands, _engine, keywords in OPTIONS:
        if command not in commands:
            continue
        keywords = dict(keywords)
        if isinstance(keywords.get("help"), dict):
            keywords["help"] = keywords["help"][command]
        group = keywords.pop("group", None)
        if group is not None and group not in groups:
            groups[group] = parser.add_mutually_exclusive_group()
        (parser if group is None else groups[group]).add_argument(*flags, **keywords)


class _Parser(argparse.ArgumentParser):
    """argparse's, with a bad command line said in one line, as every other
    bad input is (its usage block is --help's); its subcommands' parsers are
    made of this class too."""

    def error(self, message: str) -> NoReturn:
        flat = unbroken(message)  # an argument the user typed may hold anything: a line break reads \n
        terminal.line(f"{self.prog}: error: {self._of_another_command(flat) or flat}", "stderr")
        raise SystemExit(2)

    #: The command whose options were read (TUI: ``verifier-tui PATH``); argparse says an unknown
    #: option from the top parser, whose ``prog`` does not name it.
    command = TUI

    def _of_another_command(self, message: str) -> str | None:
        """An option this command does not take but another does (``audit
        --case``): which take it, rather than argparse's bare "unrecognized"."""
        if not message.startswith("unrecognized arguments: "):
            return None
        for word in message.split()[2:]:
            flag = word.split("=", 1)[0]
            takers = next((commands for flags, commands, _engine, _kw in OPTIONS if flag in flags), ())
            if takers and self.command not in takers:
                names = ["the TUI" if taker == TUI else taker for taker in takers]
                said = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
                name = "the TUI (verifier-tui PATH)" if self.command == TUI else self.command
                others = [w for w in message.split()[2:] if w.startswith("-") and w.split("=", 1)[0] != flag]
                also = f"; also not an option of {name}: {' '.join(others)}" if others else ""
                return f"{flag} is not an option of {name}; {said} {'takes' if len(names) == 1 else 'take'} it{also}"
        return None


def build_parser() -> _Parser:
    """The headless commands' parser (``verifier-tui COMMAND ...``)."""
    parser = _Parser(prog="verifier-tui", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"verifier-tui {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command, help_text in COMMANDS.items():
        _add_options(sub.add_parser(command, help=help_text), command)
    return parser


def build_tui_parser() -> _Parser:
    """The TUI's parser (``verifier-tui PATH ...``)."""
    parser = _Parser(prog="verifier-tui", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"verifier-tui {__version__}")
    _add_options(parser, TUI)
    return parser


def parse(argv: list[str]) -> argparse.Namespace:
    """The command line read: ``command`` (None for the TUI), ``path``, each
    option, and ``options``, the engine's Options from it. Help, ``--version``
    and errors exit here, as argparse does."""
    if argv and argv[0] in COMMANDS:
        parser = build_parser()
        parser.command = argv[0]
        args = parser.parse_args(argv)
        if args.command == "new":
            # What opens the new task in the TUI: a name read as a command or an option (test, -x) is said ./NAME,
            # one read as the user's home (~, which ./~ is too once a Path) by its whole path.
            named = args.path in COMMANDS or args.path.startswith("-")
            args.tui_path = (
                os.path.abspath(args.path) if args.path.startswith("~") else f"./{args.path}" if named else args.path
            )
    elif not argv:
        return parse([_here()])
    elif argv[0] in ("-h", "--help", "--version"):
        build_parser().parse_args(argv)
        raise SystemExit(0)
    else:
        parser = build_tui_parser()
        # The path found first, wherever it stands: words after a mistyped command are not what is wrong.
        args, unknown = parser.parse_known_args(argv)
        if not any(word.startswith("-") for word in unknown):  # else the option is what is wrong (--timout 30)
            _refuse_a_mistyped_command(parser, args.path)
        if unknown:
            parser.error(f"unrecognized arguments: {' '.join(unknown)}")  # as parse_args says them
        args.command = None
    engine = {flags[0][2:].replace("-", "_") for flags, _commands, is_engine, _kw in OPTIONS if is_engine}
    chosen = {name: value for name, value in vars(args).items() if name in engine}
    chosen["env"] = tuple(chosen.get("env") or ())
    chosen["coverage"] = bool(chosen.get("coverage") or getattr(args, "coverage_report", None))
    args.options = Options(**chosen)
    return args


def _here() -> str:
    """``verifier-tui`` alone: the folder it started in, when the TUI opens it (a task, a case, a
    trial...). Elsewhere a usage error, one line and exit 2: the whole --help and exit 0 let a script
    that lost its path pass."""
    if _started_in_a_removed_folder():
        terminal.error(_REMOVED_START)
        raise SystemExit(2)
    try:
        target = classify(".")
    except OSError:
        return "."  # (a folder it may not search) said as `verifier-tui .` says it
    if target.why is not None:
        terminal.error(f"no PATH given, and nothing here to open: {target.why}; verifier-tui --help lists the commands")
        raise SystemExit(2)
    return "."


def _refuse_a_mistyped_command(parser: _Parser, word: str) -> None:
    """The TUI's path, when it is no command and no path there (``tets``,
    ``help``): said to be neither, with the command it is closest to. Read as
    the TUI's path, argparse blamed the right words after it ("unrecognized
    arguments: TASK") and a lone one read "help does not exist"."""
    if not word or word.startswith("-") or os.sep in word:
        return  # "" is an empty path, as run says it
    if _started_in_a_removed_folder():
        terminal.error(_REMOVED_START)  # no word names a path there: the folder is what is wrong
        raise SystemExit(2)
    if not _names_nothing(word):
        return
    import difflib

    close = difflib.get_close_matches(word, COMMANDS, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]}?" if close else "verifier-tui --help says what each does"
    parser.error(
        f"{word} is neither a command nor a path that exists ({hint}); the commands are "
        f"{', '.join(COMMANDS)}, and verifier-tui PATH opens the TUI"
    )


def _names_nothing(word: str) -> bool:
    """Whether nothing is there by this name, looked up as classify looks it
    up (``~`` is the home folder). A name that cannot be looked up (in a
    folder that cannot be searched, too long) is a path all the same: classify
    says why."""
    try:
        os.lstat(os.path.expanduser(word))
    except FileNotFoundError:
        return True
    except OSError:
        pass
    return False


def main(argv: list[str] | None = None) -> int:
    """The program: read the command line and hand it to a face. Called
    without ``argv`` (the console script, ``python -m verifier_tui``), a
    headless command ends the process itself once its output is flushed
    (see :func:`_exit_now`)."""
    terminal.prepare_streams()  # a terminal that cannot take "·" gets "\xb7", never a traceback
    words = sys.argv[1:] if argv is None else list(argv)
    command = words[0] if words and words[0] in COMMANDS else None
    # Taken before the command line is read, and held from then on for test and audit (not test --watch,
    # whose rounds end on a signal as watch's do): one that landed before test held them ended it saying
    # nothing, no document on stdout and the last run's --junit report left for CI to show (Ctrl+C: a traceback).
    restore = stopping.stop_cleanly_on_sigterm() if command is not None else None
    try:
        with contextlib.ExitStack() as held:
            if command in ("test", "audit"):
                held.enter_context(stopping.holding())
            args = parse(words)
            if command == "test" and args.watch:
                held.close()
            code = stopping.status(_dispatch(args))
    finally:
        if restore is not None:
            restore()
    if args.command == "new" and code == 0 and not args.no_open and sys.stdin.isatty() and sys.stdout.isatty():
        args = parse([args.tui_path])  # the TUI on the task just written, as `new` said to open it
        code = _dispatch(args)
    if argv is None and args.command is not None:
        _exit_now(code)
    return code


_REMOVED_START = "the folder verifier-tui was started in was removed: start it from one that exists"


def _started_in_a_removed_folder() -> bool:
    """Whether the current folder is gone (``os.getcwd()`` fails): an OSError
    with no file named then comes from it, not from a path the user gave."""
    try:
        os.getcwd()
    except FileNotFoundError:
        return True
    return False


def _exit_now(code: int) -> None:
    """End the process at once, output flushed. The interpreter's orderly
    shutdown (tearing down every module) costs ``run --json`` 5 to 6 ms,
    against 1 ms this way. Only the program's
    own entry point does this, only after a headless command is done (its
    scratch folder removed, its child processes ended and reaped, asyncio
    closed), when nothing is left for that shutdown to do."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def _dispatch(args: argparse.Namespace) -> int:
    try:
        if _started_in_a_removed_folder():
            # Every relative path, and every path shown from here, would be wrong or refused one by one.
            return terminal.refuse(_REMOVED_START)
        if args.command in AUTHORING:
            from verifier_tui.commands import authoring

            authoring_command: Callable[[argparse.Namespace], int] = getattr(authoring, f"{args.command}_command")
            return authoring_command(args)
        if args.command == "compare":
            from verifier_tui.commands.compare import compare_command

            return compare_command(args)
        # What each path names, decided once: every face dispatches on it.
        if args.command == "test":
            args.targets = [classify(path) for path in args.paths]
        else:
            args.target = classify(args.path)
        if args.command is None:
            from verifier_tui.tui.launch import launch

            return launch(args)
        if args.command == "audit":
            from verifier_tui.commands.audit import audit_command

            return audit_command(args)
        from verifier_tui.commands import headless

        headless_command: Callable[[argparse.Namespace], int] = getattr(headless, f"{args.command}_command")
        return headless_command(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # Every write of a headless command goes through verifier_tui.commands.terminal,
        # which survives a closed pipe and keeps the run's status; reaching
        # here means one did not, and its status is unknown: not 0.
        return 141  # 128 + SIGPIPE, what a shell reports for a command killed by it
    except (DiscoveryError, SelectionError, IsolationError) as exc:
        # The path cannot be debugged, or a choice turned out impossible
        # (a verifier deleted, a case gone): one clear line, never a traceback.
        return terminal.refuse(str(exc))
    except OSError as exc:
        if exc.filename is None and _started_in_a_removed_folder():
            return terminal.refuse(_REMOVED_START)
        named = getattr(args, "paths", None) or getattr(args, "jobs", None) or ()
        where = exc.filename or getattr(args, "path", None) or " ".join(map(str, named))
        return terminal.refuse(f"{where}: {exc.strerror or exc}")
