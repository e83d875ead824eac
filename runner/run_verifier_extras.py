"""What only verifier-tui asks of the runner, beside it in run_verifier_extras.py.

``run_verifier.py`` loads this file only when one of these is asked for:
``--explain`` and ``--explain-to`` (the run described as JSON), ``--phases-to``
(a line per phase), ``--stack-signal`` (every thread's stack and every waiting
asyncio task on a signal), ``--pdb`` (post-mortem in the verifier's frame) and
``--coverage-to`` (the task's own lines that ran) and the held start
(``VERIFIER_TUI_WARM``, ``VERIFIER_TUI_PRELOAD``). A sandbox run
asks for none of them, so it never compiles this file: Python compiles a
script from source at every start, and these were half the runner.

Standard library only, Python 3.8 syntax, like the runner: verifier-tui stages
this file beside it in ``tests/.ng/``. It uses the runner's own names, so it
reads the runner's state as the run made it, never a re-implementation.
"""

import os
import stat
import sys

from run_verifier import (
    _NO_DEFAULT,
    KEYWORD_ONLY,
    POSITIONAL_ONLY,
    PROG,
    VAR_KEYWORD,
    VAR_POSITIONAL,
    UsageError,
    _same_key,
    _short_repr,
    _stdlib,
    own_frames,
)

#: Always False: ``typing`` is not imported for its name (this file is compiled
#: afresh at each start that loads it), but mypy takes any name ``TYPE_CHECKING`` as True.
TYPE_CHECKING = False

# What only the extras write (--phases-to, --explain-to), they write with
# modules the verifier never meets: a run asked for them imports what it would without.
_UNSEEN = {}


def _unseen_stdlib(name):
    """_stdlib, for the extras: the package is taken out of sys.modules again
    (its first write comes before the verifier is imported), so the
    verifier's own `import json` still finds its helper tests/json.py, as in
    the sandbox's run. What it imported on its way (re) stays: taken out too,
    it was imported a second time by the next module that needs it."""
    if name not in _UNSEEN:
        before = set(sys.modules)
        _UNSEEN[name] = _stdlib(name)
        for key in set(sys.modules) - before:
            if key == name or key.startswith(name + "."):
                del sys.modules[key]
    return _UNSEEN[name]


# Roles of the three folders the runner places at the front of sys.path.
ROLE_HELPERS = "vendored helpers"
ROLE_VERIFIER = "verifier's folder"
ROLE_TESTS = "tests folder"
ROLE_INTERPRETER = "interpreter"


def start(opts):
    """Once the command line is read: the stack signal armed, and the files
    the extras write made absolute (the verifier may change the current
    folder)."""
    if opts["stack_signal"] is not None:
        dump_stacks_on(opts)
    for key in ("explain_to", "phases_to"):
        if opts[key] not in (None, "-"):  # --explain-to - prints the document on stdout
            opts[key] = os.path.abspath(opts[key])
    if opts["coverage_to"] is not None:  # before the verifier is imported: its top level counts
        opts["coverage_to"] = os.path.abspath(opts["coverage_to"])
        trace_task_files(os.path.abspath(opts["verifier"] or ""))


def after_run(opts, state, code):
    """What the extras say once the run has ended with exit ``code``: --pdb
    that there was nothing to debug, --explain the document (to --explain-to's
    file when given: a verifier that prints as it is imported shares stdout)."""
    if opts["pdb"] and code != 1:
        nothing_to_debug(code)
    if opts["explain"]:
        write_explain(state, opts["explain_to"] or "-")
    if opts["coverage_to"] is not None:
        write_coverage(opts["coverage_to"])


def stopped(opts, state, phase, exit_code, problem, error, details):
    """A failing run ended in ``phase``: the problem recorded for --explain
    (and written to --explain-to unless verify was already called: the file
    written just before the call stands) and for --phases-to."""
    if problem is not None and error is not None:
        # The verifier's code raised as verify was looked up or its signature read: the line ends
        # as the run's traceback does, with the message (never str() itself: it may raise).
        message = _error_summary(error)["message"]
        problem = "%s: %s" % (problem, message) if message else problem
    state["problems"].extend(details.get("problems") or ([problem] if problem is not None else []))
    state["would_exit"] = exit_code
    if opts["explain_to"] is not None and not opts["explain"] and not state.get("verify_called"):
        write_explain(state, opts["explain_to"])
    if opts["phases_to"] is not None:
        line = dict(details, exit=exit_code)
        # One failure, said once: what the verifier raised (exit 1, a traceback on stderr), else the
        # problem (exit 2, its one line on stderr). verify's lookup or signature raising has both; its
        # problem, which only repeats the error's message, stays --explain's.
        if error is not None:
            line["error"] = error
        elif problem is not None:
            line["problem"] = problem
        write_phase(opts["phases_to"], phase, "failed", line)


# --------------------------------------------------------------------------
# The held start (verifier-tui's warm run)


def hold(names, fd):
    """Import ``names`` (``--preload``), then wait for the go on ``fd``; the
    modules that did not import, named. While a run waits, verifier-tui
    stages it: it copies the saved files into the very folders this view
    shows as ``/app`` and ``/tests``. Code of the task's running now could
    swap a folder there for a link between the tool's look and its write,
    and have the tool write on the machine where the link leads. So until
    the go nothing is imported from the task's tests folder (the runner's
    own folder, first on sys.path, lies in it): its entries are set aside,
    and given back in their places at the go, as a cold start has them
    (Harbor's run, which preloads nothing, imports from them after)."""
    tests = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    whole = list(sys.path)
    sys.path[:] = [entry for entry in whole if not _in_folder(entry, tests)]
    try:
        failed = preload(names)
        wait_for_go(fd)
    finally:
        sys.path[:] = whole + [entry for entry in sys.path if entry not in whole]
    return failed


def _in_folder(entry, folder):
    """Whether the import path ``entry`` lies at or under ``folder``, as written or as it resolves."""
    for path in (os.path.abspath(entry), os.path.realpath(entry)):
        for there in (folder, os.path.realpath(folder)):
            if path == there or path.startswith(there.rstrip("/") + "/"):
                return True
    return False


def wait_for_go(fd):
    """Started ahead of its run (verifier-tui's warm run), with everything a
    cold start has: wait for the byte on ``fd`` that says go, before any
    argument or file is read. Nothing before the pipe closes: the run was
    discarded. (A pipe of its own, not stdin: Python fixes sys.stdin's
    seekability at start-up.)

    The byte may be followed by CPUs (``g0,3``): what ``taskset`` does for a
    cold run, this process does to itself, every thread of it (a preloaded
    module may have started some), before the verifier runs; what it starts
    inherits them. Bound from outside instead, a process the sandbox was
    forking at that moment could keep every CPU."""
    message = b""
    chunk = os.read(fd, 256)
    while chunk:
        message += chunk
        chunk = os.read(fd, 256)
    os.close(fd)
    if not message:
        os._exit(0)
    if len(message) > 1:
        cpus = [int(cpu) for cpu in message[1:].split(b",")]
        for thread in os.listdir("/proc/self/task"):
            try:
                os.sched_setaffinity(int(thread), cpus)
            except OSError:  # a thread that ended meanwhile
                pass


#: The modules ``--preload`` brought into sys.modules (with what they imported).
PRELOADED: set = set()


def preload(names):
    """verifier-tui's ``--preload``: modules a held runner imports before it
    waits, before any argument or file of the task is read. One that fails
    to import is left for the verifier's own import to report; the
    explanation names it (``preload_failed``), as the run went on without it.
    What they imported is kept (``PRELOADED``): a module of the task's own by
    one of those names is kept out by the preload, not by the start-up."""
    failed = []
    before = set(sys.modules)
    for name in names.split(","):
        if name:
            try:
                __import__(name)
            # SystemExit and KeyboardInterrupt too (a module that runs a command line at import): let
            # through, they would end the run before its go, with an exit code Harbor, which preloads
            # nothing, never sees
            except BaseException as exc:
                first = (_error_summary(exc)["message"].strip().splitlines() or [""])[0][:200]
                failed.append("%s (%s%s)" % (name, type(exc).__name__, ": " + first if first else ""))
    PRELOADED.update(set(sys.modules) - before)
    return failed


# --------------------------------------------------------------------------
# The run described as JSON (--explain, --explain-to)


def path_roles(helpers, verifier_dir, tests_dir):
    """Role names of each of the runner's three folders, keyed as _same_key."""
    roles: dict = {}
    for folder, role in ((helpers, ROLE_HELPERS), (verifier_dir, ROLE_VERIFIER), (tests_dir, ROLE_TESTS)):
        roles.setdefault(_same_key(folder), []).append(role)
    return roles


def verify_info(verify, params):
    code = _code_called(verify)
    return {
        "signature": _signature_text(params),
        "is_async": bool(getattr(code, "co_flags", 0) & 0x80),
        "yields": _yields(getattr(code, "co_flags", 0)),
        "type": type(verify).__name__,
        "defined_in": getattr(code, "co_filename", None),
        "line": getattr(code, "co_firstlineno", None),
    }


def yields_problem(info):
    """The problem of a verify that yields (``info`` is verify_info's), or None:
    the runner calls it all the same, but what the call returns is the run's
    contract error. A problem in the document, where a check on ``problems``
    sees it, not only in explain's words."""
    what = info["yields"]
    if what is None:
        return None
    article = "an" if what[0] in "aeiou" else "a"
    return (
        "verify yields: calling it returns %s %s, not a number or a dict of numbers, so the run is a contract "
        "error (exit 2) and writes no reward" % (article, what)
    )


def _yields(flags):
    """What a call of a verify whose code has ``flags`` returns when that code
    yields: a generator (CO_GENERATOR) or an async generator
    (CO_ASYNC_GENERATOR), which the run's write_reward refuses, exit 2;
    None when it does not yield, or when the runner awaits what it returns
    (a @types.coroutine generator, CO_ITERABLE_COROUTINE)."""
    if flags & 0x100:
        return None
    if flags & 0x200:
        return "async generator"
    return "generator" if flags & 0x20 else None


def _code_called(verify):
    """The code a call of ``verify`` runs: a function's own, a partial's
    function's, a callable object's ``__call__``'s (so that an ``async def``
    behind any of them, whose result the runner awaits, is said async); None
    when there is none to see (a builtin, a class) or looking raised."""
    target = verify
    try:
        for _ in range(20):  # a partial of a partial of ...: the runner binds through them all
            code = getattr(target, "__code__", None)
            if code is not None:
                return code
            if type(target).__name__ == "partial" and callable(getattr(target, "func", None)):
                target = target.func
            elif not isinstance(target, type) and type(type(target).__call__).__name__ == "function":
                target = type(target).__call__
            else:
                return None
    except Exception:
        return None
    return None


def _signature_text(params):
    parts = []
    saw_posonly = False
    star_written = False
    for name, kind, default in params:
        if saw_posonly and kind != POSITIONAL_ONLY:
            parts.append("/")
            saw_posonly = False
        if kind == POSITIONAL_ONLY:
            saw_posonly = True
        if kind == KEYWORD_ONLY and not star_written:
            parts.append("*")
            star_written = True
        if kind == VAR_POSITIONAL:
            star_written = True
            parts.append("*" + name)
        elif kind == VAR_KEYWORD:
            parts.append("**" + name)
        elif default is _NO_DEFAULT:
            parts.append(name)
        else:
            parts.append("%s=%s" % (name, _short_repr(default, 40)))
    if saw_posonly:
        parts.append("/")
    return "verify(%s)" % ", ".join(parts)


def error_info(exc):
    traceback = _stdlib("traceback")
    # As the traceback's last line says it (`ValueError: boom`, not repr's `'boom'`), at most 500
    # characters; never str(exc) itself: a verifier's exception may fail to print
    message = _error_summary(exc)["message"]

    return {
        "type": type(exc).__name__,
        "message": message,
        "traceback": "".join(traceback.format_exception(type(exc), exc, own_frames(exc))),
    }


def _find_spec(name, entries):
    """Where ``name`` would be imported from along ``entries`` (PathFinder's
    spec), or None: a path entry that breaks the search only hides a copy."""
    from importlib.machinery import PathFinder

    try:
        return PathFinder.find_spec(name, entries)
    except Exception:
        return None


def _spec_location(spec):
    """A regular package or module: its file; a namespace portion: its folder."""
    if spec is None:
        return None
    if spec.origin and spec.origin not in ("namespace", "built-in", "frozen"):
        return spec.origin
    locations = list(spec.submodule_search_locations or [])
    return locations[0] if locations else None


def resolve_nemo_gym():
    """Where ``nemo_gym`` and ``nemo_gym.verifiers`` resolve on sys.path as it
    now stands, and every other copy further down (shadowed)."""
    top = _find_spec("nemo_gym", sys.path)
    resolved = _spec_location(top)
    copies = [_find_spec("nemo_gym", [entry]) for entry in sys.path if isinstance(entry, str)]
    copies = [spec for spec in copies if spec is not None]
    resolved_sub = None
    if top is not None and top.submodule_search_locations:
        resolved_sub = _spec_location(_find_spec("nemo_gym.verifiers", list(top.submodule_search_locations)))
    shadowed_sub = []
    for spec in copies:
        for folder in spec.submodule_search_locations or []:
            location = _spec_location(_find_spec("nemo_gym.verifiers", [folder]))
            if location is not None and location != resolved_sub and location not in shadowed_sub:
                shadowed_sub.append(location)
    return {
        "nemo_gym": {
            "resolved": resolved,
            "shadowed": [loc for loc in map(_spec_location, copies) if loc != resolved and loc is not None],
        },
        "nemo_gym.verifiers": {"resolved": resolved_sub, "shadowed": shadowed_sub},
    }


def imported_before(folders):
    """The modules already in sys.modules as the runner puts ``folders``
    first that a file or folder of theirs is named after, each with its file
    (None: it has none). ``import`` returns what sys.modules holds without
    searching sys.path, so the folder's copy of such a module is never
    imported: a .pth file of site-packages may import one (as setuptools' and
    coverage's do), so may sitecustomize, and the interpreter and the runner
    import some of the standard library (re, types...) as they start."""
    found = {}
    for folder in folders:
        try:
            entries = os.listdir(folder)
        except OSError:
            continue
        for entry in entries:
            name = entry[:-3] if entry.endswith(".py") else entry
            module = sys.modules.get(name) if "." not in name else None
            if module is not None and name not in found:
                where = getattr(module, "__file__", None)
                found[name] = where if isinstance(where, str) else None
    return found


def explain_document(state):
    roles = path_roles(*state["folders"]) if "folders" in state else {}
    path_rows = []
    for index, entry in enumerate(state.get("sys_path", sys.path)):
        if not isinstance(entry, str):
            continue
        entry_roles = roles.get(_same_key(entry)) if index < len(state.get("placed", ())) else None
        path_rows.append(
            {
                "index": index,
                "path": entry,
                "role": entry_roles[0] if entry_roles else ROLE_INTERPRETER,
                "roles": entry_roles or [ROLE_INTERPRETER],
                "exists": os.path.isdir(entry) or os.path.isfile(entry) if entry else True,
            }
        )
    return {
        "explain_version": 1,
        "python": {
            "executable": sys.executable,
            "version": "%d.%d.%d" % sys.version_info[:3],
            "implementation": sys.implementation.name,
            "flags": {
                "isolated": bool(getattr(sys.flags, "isolated", 0)),
                "no_site": bool(sys.flags.no_site),
                "dont_write_bytecode": bool(sys.dont_write_bytecode),
            },
        },
        "verifier": state.get("verifier"),
        "workspace": state.get("workspace"),
        "workspace_exists": bool(state.get("workspace")) and os.path.isdir(state["workspace"]),
        "reward_dir": state.get("reward_dir"),
        "sys_path": path_rows,
        "modules": state.get("modules") or resolve_nemo_gym(),
        "preloaded_nemo_gym": state.get("preloaded"),
        # the runner dropped a nemo_gym that --preload imported, not a .pth file or sitecustomize
        "nemo_gym_by_preload": "preloaded" in state and "nemo_gym" in PRELOADED,
        "imported_before": state.get("imported_before", {}),
        "imported_by_preload": sorted(set(state.get("imported_before", {})) & PRELOADED),
        "preload_failed": state.get("preload_failed", []),
        "available": state.get("available_names", []),
        "verify": state.get("verify_info"),
        "parameters": [parameter_row(*entry) for entry in state.get("plan", ())],
        "problems": state.get("problems", []),
        "import_error": state.get("import_error"),
        "would_exit": state.get("would_exit"),
        "would_call_verify": state.get("would_exit") is None and state.get("verify_info") is not None,
    }


def write_explain(state, target):
    json = _unseen_stdlib("json")

    text = json.dumps(explain_document(state), indent=2 if target == "-" else None, default=str)
    if target == "-":
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
        return
    try:
        tmp = target + ".tmp"
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, target)
    except OSError:
        pass  # --explain-to is informative; it never changes the run's result


def parameter_row(name, kind, default, binding, source, passed):
    """One entry of ``bind``'s plan as --explain and --phases-to show it."""
    return {
        "name": name,
        "kind": kind,
        "default": None if default is _NO_DEFAULT else _short_repr(default),
        "has_default": default is not _NO_DEFAULT,
        "binding": binding,
        "source": source,
        "passed": passed,
    }


# --------------------------------------------------------------------------
# One JSON line per phase of the run (--phases-to)


def write_phase(target, phase, status, details):
    """Append one --phases-to line: {"phase", "status", ...details}. A ``plan``
    becomes rows as --explain shows them, an ``error`` its type, message and frames.
    The file is closed at once, so the line is on disk before the run goes on
    (a run killed later, or ended by os._exit, still shows it). Informative
    like --explain-to: a line that cannot be written changes nothing."""
    json = _unseen_stdlib("json")

    line = {"phase": phase, "status": status}
    for key, value in details.items():
        if key == "plan":
            value = [parameter_row(*entry) for entry in value]
        elif key == "error":
            value = dict(_error_summary(value), frames=_frame_lines(value))
        line[key] = value
    try:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(line, default=str) + "\n")
    except OSError:
        pass


def _frame_lines(exc):
    """Where ``exc`` was raised: its traceback's frames from the task's code on
    (as stderr prints them), outermost first, the innermost 1,000 at most. A
    report printed after it (an atexit callback's) is not this exception's:
    the failing line is read here, not from stderr's last report."""
    frames = []
    tb = own_frames(exc)
    while tb is not None:
        frames.append({"file": tb.tb_frame.f_code.co_filename, "line": tb.tb_lineno})
        tb = tb.tb_next
    return frames[-1000:]


def _error_summary(exc):
    """An exception as a --phases-to line shows it: its type and its message."""
    try:
        message = str(exc)
    except Exception:  # a verifier's exception may fail to print itself
        message = "<unprintable %s>" % type(exc).__name__
    return {"type": type(exc).__name__, "message": message if len(message) <= 500 else message[:497] + "..."}


# --------------------------------------------------------------------------
# The task's own lines that ran (--coverage-to)

# Files of the tests folder (the parent of this file's folder), the vendored
# .ng/ left out but for a verifier staged there, and the lines of each that ran.
_tests_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_coverage: dict = {"ran": {}, "verifier": None}
# The interpreter's own, kept: a verifier may replace sys.settrace with
# anything, and the writer must still switch tracing off.
_settrace = sys.settrace
# A .py file past this is named not measured: compiling a verifier's 50 MB
# file at the run's end would spend its timeout, a verdict --coverage changed.
_MEASURED_AT_MOST = 2 * 1024 * 1024


def _is_task_file(path):
    if not path.startswith(_tests_root + os.sep):
        return False
    path = os.path.normpath(path)  # a helper loaded as tests/sub/../common.py is tests/common.py
    return not path.startswith(os.path.join(_tests_root, ".ng", "")) or path == _coverage["verifier"]


# sys.monitoring's tool id: one of the two no well-known tool claims (0 is the
# debuggers', 1 coverage.py's, 2 the profilers', 5 the optimizers'), so that a
# verifier measuring the agent's code with coverage.py runs as it would without
# --coverage.
_TOOL_ID = 4


def trace_task_files(verifier):
    """Record each line of a task file as it first runs. On 3.12 and later
    sys.monitoring reports each line once and is then told to stop
    (DISABLE), so a loop costs nothing after its first pass; before, a
    trace function is kept only for frames of the task's files, the others
    run untraced."""
    _coverage["verifier"] = verifier
    ran = _coverage["ran"]
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is not None and monitoring.get_tool(_TOOL_ID) is None:

        def on_line(code, line):
            if _is_task_file(code.co_filename):
                ran.setdefault(code.co_filename, set()).add(line)
            return monitoring.DISABLE

        monitoring.use_tool_id(_TOOL_ID, "verifier-tui")
        monitoring.register_callback(_TOOL_ID, monitoring.events.LINE, on_line)
        monitoring.set_events(_TOOL_ID, monitoring.events.LINE)
        return

    def local(frame, event, arg):
        if event == "line":
            ran[frame.f_code.co_filename].add(frame.f_lineno)
        return local

    def started(frame, event, arg):
        if not _is_task_file(frame.f_code.co_filename):
            return None
        ran.setdefault(frame.f_code.co_filename, set())
        return local

    import threading

    _coverage["tracer"] = started
    threading.settrace(started)
    sys.settrace(started)


def statements(path):
    """The lines of ``path`` that can run, as this interpreter compiles it
    (the line starts of every code object in it: line tables differ between
    Python versions, so only the interpreter that ran can tell), and the
    SHA-256 of the bytes compiled: the verifier can change a file of /tests,
    and the tool keeps the lines only of a file that is still the user's.
    A file that does not compile raises NotCompiled, with that digest."""
    hashlib, types = _stdlib("hashlib"), _stdlib("types")  # a helper tests/hashlib.py is the verifier's

    # Without blocking: a FIFO the verifier made in the tests folder would
    # hold the run at its end, a verdict --coverage changed.
    with open(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)), "rb") as handle:
        st = os.fstat(handle.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise OSError("not a regular file")
        if st.st_size > _MEASURED_AT_MOST:
            raise OSError("larger than %d MB" % (_MEASURED_AT_MOST // (1024 * 1024)))
        source = handle.read()
    digest = hashlib.sha256(source).hexdigest()
    try:
        code = compile(source, path, "exec", dont_inherit=True)
    except SyntaxError as exc:  # a null byte or a bad encoding too
        where = " at line %s" % exc.lineno if exc.lineno else ""  # a null byte has no line
        raise NotCompiled("%s%s: %s" % (type(exc).__name__, where, exc.msg), digest) from None
    lines: set = set()
    todo = [code]
    while todo:
        code = todo.pop()
        if hasattr(code, "co_lines"):
            lines.update(line for _start, _end, line in code.co_lines() if line)
        else:
            dis = _stdlib("dis")

            lines.update(line for _offset, line in dis.findlinestarts(code) if line)
        todo.extend(const for const in code.co_consts if isinstance(const, types.CodeType))
    return lines, digest


class NotCompiled(Exception):
    """A file read whole that this interpreter cannot compile: why, and its digest."""

    def __init__(self, why, digest):
        Exception.__init__(self, why)
        self.why, self.digest = why, digest


def write_coverage(target):
    """The --coverage-to file: per .py file of the tests folder, and per file
    of it that ran under another name (through a folder that is a link), the
    lines that can run and those that ran, why a file this interpreter cannot
    compile has none, and the SHA-256 of each file read whole. Informative: a
    file that cannot be written changes nothing of the run."""
    json = _stdlib("json")

    replaced = "tracer" in _coverage and sys.gettrace() is not _coverage["tracer"]
    try:
        _settrace(None)
        monitoring = getattr(sys, "monitoring", None)
        if monitoring is not None and monitoring.get_tool(_TOOL_ID) == "verifier-tui":
            monitoring.set_events(_TOOL_ID, 0)
    except Exception:  # the verifier's own doing: the file says so, the run ends as it would have
        replaced = True
    ran_in: dict = {}  # by each file's one spelling
    for path, lines in _coverage["ran"].items():
        ran_in.setdefault(os.path.normpath(path), set()).update(lines)
    paths = [_coverage["verifier"]] if _is_task_file(_coverage["verifier"] or "") else []
    for folder, subfolders, names in os.walk(_tests_root):
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__" and (folder, d) != (_tests_root, ".ng"))
        paths += [os.path.join(folder, name) for name in sorted(names) if name.endswith(".py")]
    paths += sorted(ran_in)  # a module imported through a folder that is a link is not walked
    files, not_compiled, digests = {}, {}, {}
    for path in dict.fromkeys(paths):
        try:
            lines, digests[path] = statements(path)
        except NotCompiled as exc:
            not_compiled[path], digests[path] = exc.why, exc.digest
            continue
        except Exception as exc:  # unreadable: no lines to tell either
            not_compiled[path] = "%s: %s" % (type(exc).__name__, exc)
            continue
        ran = ran_in.get(path, set())
        files[path] = {"statements": sorted(lines), "executed": sorted(ran & lines)}
    document: dict = {"files": files, "not_compiled": not_compiled, "sha256": digests}
    if replaced:  # the verifier set its own trace function (or none): lines after that were not seen
        document["tracer_replaced"] = True
    try:
        with open(target, "w", encoding="utf-8") as handle:
            json.dump(document, handle)
    except (OSError, ValueError):
        pass


# --------------------------------------------------------------------------
# pdb post-mortem (--pdb)


def post_mortem(error):
    """pdb on what the verifier raised, starting at the innermost frame of the
    task's own code (the verifier or a helper in the tests folder), not in the
    library call it failed inside. A verifier that does not compile has no
    such frame: pdb would open in the runner's own loader, so it is said instead."""
    if TYPE_CHECKING:
        import pdb  # what mypy checks the subclass below against
    else:
        pdb = _stdlib("pdb")  # a module of its own name in tests/ is the verifier's, not pdb
    traceback = _stdlib("traceback")

    here = os.path.dirname(os.path.abspath(__file__))  # tests/.ng, where a dataset's verifier is staged too
    tests_dir = os.path.dirname(here) + os.sep
    ours = {os.path.join(here, name) for name in ("run_verifier.py", os.path.basename(__file__))}

    def own(frame):
        path = os.path.abspath(frame.f_code.co_filename)
        return path.startswith(tests_dir) and path not in ours

    if not any(own(frame) for frame, _ in traceback.walk_tb(error.__traceback__)):
        sys.stderr.write(
            "\n%s: the %s has no frame of the task's code to debug post-mortem: "
            "the traceback above names its line\n" % (PROG, type(error).__name__)
        )
        return

    class VerifierPdb(pdb.Pdb):
        def setup(self, frame, tb):
            # execRcLines()'s answer (True: the rc file resumed), though typeshed says None
            result = pdb.Pdb.setup(self, frame, tb)  # type: ignore[func-returns-value]
            for index in range(len(self.stack) - 1, -1, -1):
                candidate = self.stack[index][0]
                if own(candidate):
                    self.curindex = index
                    self.curframe = candidate
                    if hasattr(self, "curframe_locals"):
                        self.curframe_locals = candidate.f_locals
                    break
            return result

    sys.stderr.write(
        "\n%s: the verifier raised; pdb post-mortem in its failing frame "
        "(up/down walk the traceback, q ends it)\n" % PROG
    )
    sys.stderr.flush()
    debugger = VerifierPdb()
    debugger.reset()
    debugger.interaction(None, error.__traceback__)


def nothing_to_debug(code):
    if code == 0:
        sys.stderr.write("\n%s: verify returned without raising (exit 0): nothing to debug post-mortem\n" % PROG)
    else:
        sys.stderr.write("\n%s: exit %d is a contract problem, not an exception: see the line above\n" % (PROG, code))


# --------------------------------------------------------------------------
# Every thread's stack on a signal (--stack-signal)


def dump_stacks_on(opts):
    """--stack-signal: on that signal, faulthandler writes every thread's stack
    to stderr from inside the signal handler, so it works even while the
    verifier is stuck in C code, and the run carries on. Then, chained after
    it, :func:`_dump_waiting_tasks` lists the asyncio tasks that wait on an
    await: an ``async def verify`` waiting is on no thread's stack. Set up
    before the verifier is imported, so a module stuck at import shows too. A
    name that is not a signal, or one that cannot be caught, is a usage error."""
    import faulthandler
    import signal

    name = opts["stack_signal"].upper()
    number = signal.Signals.__members__.get(name if name.startswith("SIG") else "SIG" + name)
    problem = None
    if number is None:
        problem = "no signal is named %r (give a name such as USR1)" % opts["stack_signal"]
    else:
        try:
            signal.signal(number, _dump_waiting_tasks)
            faulthandler.register(number, file=sys.stderr, all_threads=True, chain=True)
        except (AttributeError, OSError, RuntimeError, ValueError) as exc:
            problem = "cannot dump stacks on %s (%s); give a signal such as USR1" % (number.name, exc)
    if problem is not None:
        error = UsageError("option --stack-signal: %s" % problem)
        error.partial = opts
        raise error


def _dump_waiting_tasks(signum, frame):
    """After faulthandler's dump: each asyncio task of the running loop that
    is waiting, its awaits innermost first, in faulthandler's format (a
    task that is running is on the main thread's stack, dumped already).
    Written with os.write: the verifier may be inside a write to sys.stderr."""
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:
        return
    try:
        loop = asyncio._get_running_loop()
        blocks = []
        for task in sorted(asyncio.all_tasks(loop), key=lambda task: task.get_name()) if loop else []:
            code_lines = [(f.f_code.co_filename, f.f_lineno, f.f_code.co_name) for f in _awaiting(task.get_coro())]
            if code_lines:
                frames = "".join('  File "%s", line %s in %s\n' % where for where in code_lines)
                blocks.append("\nTask %r (most recent call first):\n%s" % (task.get_name(), frames))
        if blocks:
            os.write(2, "".join(blocks).encode("utf-8", "backslashreplace"))
    except Exception:  # never let the dump change the run
        pass


def _awaiting(coro):
    """The frames of a waiting coroutine's chain of awaits, innermost first;
    none while it runs. The chain ends at what has no frame (a Future)."""
    frames: list = []
    while coro is not None and len(frames) < 100:
        if getattr(coro, "cr_running", False) or getattr(coro, "gi_running", False):
            return []
        frame = getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None)
        if frame is None:
            break
        frames.append(frame)
        coro = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)
    return frames[::-1]
