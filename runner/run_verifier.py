"""Run a Python verifier inside a Harbor sandbox and write Harbor's reward files.

Usage (as a task's tests/test.sh shim starts it):

    python3 /tests/.ng/run_verifier.py --verifier /tests/verifier.py --workspace /app

This script is copied into the sandbox next to a vendored ``nemo_gym/verifiers``
package, so it imports nothing outside the standard library and runs on any
CPython from 3.8 up, with or without ``-I``, ``-S`` and ``-B``.  It runs on every
save in verifier-tui, so it imports only what a run needs: ``json`` only when a
JSON file is read or a dict reward written, ``asyncio`` only when ``verify``
returned an awaitable, ``inspect`` only for callables that are not plain
functions (and for ``--explain``).

Exit codes: 0 a reward file was written; 1 the verifier's own code raised
(importing the module, or inside ``verify``); 2 a shim or contract problem.  On 1
and 2 no reward file is left in the reward folder.

Syntax and library calls are kept to what Python 3.8 has.
"""

import os
import sys

KNOWN_ARGUMENTS = ("workspace", "task_data", "response", "state")
REWARD_FILES = ("reward.json", "reward.txt")
DEFAULT_REWARD_DIR = "/logs/verifier"
PROG = "run_verifier"

# Roles of the three folders the runner places at the front of sys.path.
ROLE_HELPERS = "vendored helpers"
ROLE_VERIFIER = "verifier's folder"
ROLE_TESTS = "tests folder"
ROLE_INTERPRETER = "interpreter"

HELP = """\
usage: run_verifier.py --verifier FILE --workspace DIR [--response FILE]
                       [--task-data FILE] [--reward-dir DIR]
                       [--explain] [--explain-to FILE] [--pdb]

Import a verifier module, call its verify() with the arguments it declares and
write Harbor's reward file: reward.txt for a number, reward.json for a dict of
numbers.

options:
  --verifier FILE    the verifier module (a .py file defining verify)
  --workspace DIR    the agent's workspace, passed as `workspace` (a Path)
  --response FILE    the agent's final Responses API response (a JSON object),
                     passed as `response`; '-' reads standard input. Without
                     it, `response` is not available (Harbor mode)
  --task-data FILE   the task's fields (a JSON object), passed as `task_data`;
                     {} without it
  --reward-dir DIR   where reward files go (default /logs/verifier; created if
                     missing). Any reward.json / reward.txt already there is
                     removed before verify runs
  --explain          print a JSON description of the run (sys.path as placed,
                     where nemo_gym resolves, verify's signature and each
                     parameter's binding, contract problems) and exit without
                     calling verify or touching the reward folder. This
                     IMPORTS the verifier module, so its top-level code runs
  --explain-to FILE  write that same JSON to FILE just before verify is called
                     (or when the run stops earlier), then run as usual
  --pdb              when the verifier raises, open pdb post-mortem at the
                     innermost frame of the task's own code (for a terminal)
  -h, --help         show this help and exit

exit codes: 0 reward written; 1 the verifier raised (traceback on stderr);
            2 shim or contract problem (one line on stderr naming it)
"""


class ContractError(Exception):
    """A shim or verifier-contract problem: exit 2 with one line on stderr."""


class UsageError(ContractError):
    """Bad command-line arguments."""


# --------------------------------------------------------------------------
# Command line (hand-rolled: argparse alone costs more than a trivial run).

_VALUE_OPTIONS = {
    "--verifier": "verifier",
    "--workspace": "workspace",
    "--response": "response",
    "--task-data": "task_data",
    "--reward-dir": "reward_dir",
    "--explain-to": "explain_to",
}


def parse_args(argv):
    """The options as a dict. The command line the shim and verifier-tui give
    (``--flag value`` pairs, ``--explain``) is read right here; anything else
    goes to parse_args_fully, which is compiled only when needed."""
    opts = {"verifier": None, "workspace": None, "response": None, "task_data": None,
            "reward_dir": None, "explain_to": None, "explain": False, "help": False}
    i, count = 0, len(argv)
    while i < count:
        arg = argv[i]
        key = _VALUE_OPTIONS.get(arg)
        if key is not None and i + 1 < count and opts[key] is None and _plain_value(argv[i + 1]):
            opts[key] = argv[i + 1]
            i += 2
        elif arg == "--explain":
            opts["explain"] = True
            i += 1
        else:
            return _errors().parse_args_fully(argv)
    if opts["verifier"] is None or opts["workspace"] is None:
        return _errors().parse_args_fully(argv)
    return opts


def _plain_value(text):
    return text == "-" or (text != "" and not text.startswith("-"))


# --------------------------------------------------------------------------
# Reward folder.


def clear_rewards(reward_dir):
    """Remove every reward file already in ``reward_dir``: a file, a link (as a
    link: its target is never touched), a folder with contents, anything."""
    for name in REWARD_FILES:
        path = os.path.join(reward_dir, name)
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise ContractError("cannot inspect planted %s: %s" % (path, exc.strerror or exc))
        try:
            if _is_dir_mode(st.st_mode):
                import shutil

                shutil.rmtree(path)
            else:
                os.unlink(path)
        except OSError as exc:
            raise ContractError("cannot remove planted %s: %s" % (path, exc.strerror or exc))


def _is_dir_mode(mode):
    import stat

    return stat.S_ISDIR(mode)


def _quiet_clear(reward_dir):
    """Clear rewards on a failing exit, never raising (the first error wins)."""
    if reward_dir is None:
        return
    try:
        clear_rewards(reward_dir)
    except ContractError:
        pass


def write_reward(result, reward_dir):
    """Write Harbor's reward file for ``result``; ContractError for anything
    that is not a finite number or a non-empty dict of them."""
    number = _number(result)
    if number is not None:
        clear_rewards(reward_dir)  # the verdict is this run's return value alone
        _write_text(os.path.join(reward_dir, "reward.txt"), repr(number))
        return "reward.txt"
    if isinstance(result, dict):
        if not result:
            raise ContractError("verify returned an empty dict; a reward dict needs at least one number")
        clean = {}
        for key, value in result.items():
            if not isinstance(key, str):
                raise ContractError("verify returned a dict with a key that is not a string: %s" % _short_repr(key))
            number = _number(value)
            if number is None:
                raise ContractError(
                    "verify returned a dict whose value for %r is not a finite number: %s"
                    % (key, _errors()._describe(value)))
            clean[key] = int(value) if isinstance(value, int) else number
        import json

        clear_rewards(reward_dir)
        _write_text(os.path.join(reward_dir, "reward.json"), json.dumps(clean, allow_nan=False))
        return "reward.json"
    raise ContractError(
        "verify returned %s; it must return a finite number (int or float, not bool) "
        "or a dict of them" % _errors()._describe(result))


def _number(value):
    """``value`` as a finite float, or None when it is not a reward number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except Exception:  # OverflowError, or a subclass's own __float__ raising
        return None
    if number != number or number in (float("inf"), float("-inf")):
        return None
    return number


def _write_text(path, text):
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise ContractError("cannot write %s: %s" % (path, exc.strerror or exc))


# --------------------------------------------------------------------------
# sys.path.


def _same_key(entry):
    """How two sys.path entries are compared: '' is the current folder; an
    existing folder is known by its device and inode, so every spelling of it
    (trailing slash, '..', a link) is the same entry. One stat() each: cheaper
    than realpath(), which walks every component."""
    entry = entry or os.getcwd()
    try:
        st = os.stat(entry)
        return (st.st_dev, st.st_ino)
    except (OSError, ValueError):
        return os.path.normcase(os.path.abspath(entry))


def place_on_path(folders):
    """Put ``folders`` at the front of sys.path, highest priority first.

    An entry already on the path under any spelling is moved, not added again;
    a folder given twice keeps its first place.
    """
    keys = []
    ordered = []
    for folder in folders:
        key = _same_key(folder)
        if key not in keys:
            keys.append(key)
            ordered.append(folder)
    rest = [entry for entry in sys.path if not isinstance(entry, str) or _same_key(entry) not in keys]
    sys.path[:] = ordered + rest
    return ordered


# --------------------------------------------------------------------------
# Inputs.


def _read_json_object(path, flag):
    """The JSON object in ``path`` ('-' reads stdin); ContractError otherwise."""
    import json

    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as handle:
                data = handle.read()
        value = json.loads(data.decode("utf-8-sig"))
    except Exception as exc:
        raise ContractError(_errors()._json_file_problem(path, flag, exc))
    if not isinstance(value, dict):
        raise ContractError(_errors()._json_file_problem(path, flag, None, value))
    return value


# --------------------------------------------------------------------------
# Loading the verifier.


def _module_name(path):
    stem = os.path.splitext(os.path.basename(path))[0]
    if stem.isidentifier() and stem not in sys.modules:
        return stem
    return "__verifier__"


def load_verify(path):
    """Import the module at ``path`` (registered in sys.modules under its file
    name) and return it. Exceptions from its top-level code propagate."""
    from importlib.machinery import ModuleSpec, SourceFileLoader

    name = _module_name(path)
    loader = SourceFileLoader(name, path)
    spec = ModuleSpec(name, loader, origin=path)
    spec.has_location = True
    module = type(sys)(name)
    module.__spec__ = spec
    module.__loader__ = loader
    module.__file__ = path
    try:
        module.__cached__ = spec.cached
    except Exception:  # pragma: no cover - cache path is informative only
        pass
    sys.modules[name] = module
    try:
        loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


# --------------------------------------------------------------------------
# Parameters and their binding.

POSITIONAL_ONLY = "positional-only"
POSITIONAL_OR_KEYWORD = "positional or keyword"
VAR_POSITIONAL = "*args"
KEYWORD_ONLY = "keyword-only"
VAR_KEYWORD = "**kwargs"
_NO_DEFAULT = object()


def _is_plain_function(obj):
    return (type(obj) is type(_is_plain_function)
            and not hasattr(obj, "__wrapped__")
            and not hasattr(obj, "__signature__"))


def parameters_of(verify):
    """[(name, kind, default-or-_NO_DEFAULT)] for ``verify``.

    Plain functions are read from their code object (no ``inspect`` import on
    the hot path); anything else (methods, classes, partials, wrapped or
    decorated callables) goes through ``inspect.signature``, which is what the
    two paths must agree with.
    """
    if _is_plain_function(verify):
        code = verify.__code__
        flags = code.co_flags
        posonly = getattr(code, "co_posonlyargcount", 0)
        npos = code.co_argcount
        nkwonly = code.co_kwonlyargcount
        names = code.co_varnames
        defaults = verify.__defaults__ or ()
        kwdefaults = verify.__kwdefaults__ or {}
        params = []
        first_default = npos - len(defaults)
        for index in range(npos):
            kind = POSITIONAL_ONLY if index < posonly else POSITIONAL_OR_KEYWORD
            default = defaults[index - first_default] if index >= first_default else _NO_DEFAULT
            params.append((names[index], kind, default))
        cursor = npos
        varargs_name = None
        if flags & 0x04:  # CO_VARARGS
            varargs_name = names[npos + nkwonly]
        for index in range(nkwonly):
            name = names[cursor + index]
            params_default = kwdefaults.get(name, _NO_DEFAULT)
            params.append((name, KEYWORD_ONLY, params_default))
        if varargs_name is not None:
            params.insert(npos, (varargs_name, VAR_POSITIONAL, _NO_DEFAULT))
        if flags & 0x08:  # CO_VARKEYWORDS
            index = npos + nkwonly + (1 if flags & 0x04 else 0)
            params.append((names[index], VAR_KEYWORD, _NO_DEFAULT))
        return params
    return _errors()._parameters_by_inspect(verify)


def bind(params, available):
    """Plan the call: (positional, keywords, plan, problems).

    ``plan`` says how each parameter is bound, as [name, kind, default,
    binding, source, passed] (--explain shows it); ``problems`` are contract
    errors (a required parameter that cannot be filled).
    """
    positional = []
    keywords = {}
    plan = []
    problems = []
    pending_defaults = []  # defaults of skipped positional-only slots
    bound_names = set()
    for name, kind, default in params:
        if kind == VAR_POSITIONAL or kind == VAR_KEYWORD:
            binding, source, passed = "nothing", None, None  # **kwargs is filled below
        elif name in KNOWN_ARGUMENTS and name in available:
            bound_names.add(name)
            binding, source = "argument", name
            if kind == POSITIONAL_ONLY:
                positional.extend(pending_defaults)
                pending_defaults = []
                positional.append(available[name])
                passed = "positional"
            else:
                keywords[name] = available[name]
                passed = "keyword"
        elif default is not _NO_DEFAULT:
            if kind == POSITIONAL_ONLY:
                pending_defaults.append(default)
            binding, source, passed = "default", None, None
        else:
            binding, source, passed = "missing", None, None
            problems.append(_errors()._missing_message(name, available))
        plan.append([name, kind, default, binding, source, passed])
    for entry in plan:
        if entry[1] == VAR_KEYWORD:  # every available argument no named parameter took
            extra = [key for key in KNOWN_ARGUMENTS if key in available and key not in bound_names]
            keywords.update((key, available[key]) for key in extra)
            entry[3:] = ["argument" if extra else "nothing", extra, "keyword"]
    return positional, keywords, plan, problems


def _short_repr(value, limit=120):
    try:
        text = repr(value)
    except Exception as exc:  # a verifier's own __repr__ may raise
        text = "<unrepresentable %s: %s>" % (type(value).__name__, type(exc).__name__)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --------------------------------------------------------------------------
# Awaiting.


def _is_awaitable(value):
    if hasattr(value, "__await__"):
        return True
    code = getattr(value, "gi_code", None)  # a @types.coroutine generator
    return code is not None and bool(code.co_flags & 0x100)


class _Raised(object):
    """What an awaited verify raised, carried out of asyncio.run so that its
    traceback starts at the verifier's frames, not at asyncio's."""

    def __init__(self, error):
        self.error = error


async def _await(awaitable):
    try:
        return await awaitable
    except BaseException as exc:
        return _Raised(exc)


# --------------------------------------------------------------------------
# Tracebacks.


def _say(message):
    sys.stderr.write("%s: error: %s\n" % (PROG, message))
    sys.stderr.flush()


# --------------------------------------------------------------------------
# Explain.


# --------------------------------------------------------------------------
# Main.


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        opts = parse_args(argv)
    except UsageError as exc:
        return _errors()._usage_failure(exc)
    if opts["help"]:
        sys.stdout.write(HELP)
        return 0
    explain = opts["explain"]
    explain_to = opts["explain_to"]
    reward_dir = None if explain else os.path.abspath(opts["reward_dir"] or DEFAULT_REWARD_DIR)
    state = {
        "verifier": os.path.abspath(opts["verifier"]),
        "workspace": os.path.abspath(opts["workspace"]),
        "reward_dir": os.path.abspath(opts["reward_dir"] or DEFAULT_REWARD_DIR),
        "problems": [],
    }
    try:
        code = _run(opts, state, reward_dir, explain or explain_to is not None)
    except BaseException:
        _quiet_clear(reward_dir)  # even a crash of the runner itself leaves no verdict
        raise
    if code != 0:
        _quiet_clear(reward_dir)
    if opts.get("pdb") and code != 1:
        _errors()._nothing_to_debug(code)
    if explain:
        _explain()._write_explain(state, "-")
        return 0
    return code


def _run(opts, state, reward_dir, want_explain):
    """The run itself; returns the exit code. ``state`` gathers what
    --explain reports as the run goes."""
    explain_only = opts["explain"]
    explain_to = opts["explain_to"]

    def stop(exit_code, problem=None, error=None, more=()):
        """End the run: record and report the problem (a failing run only)."""
        return _errors()._stop(opts, state, want_explain, exit_code, problem, error, more)

    # 1. The reward folder: created, and emptied of any planted verdict.
    if reward_dir is not None:
        try:
            os.makedirs(reward_dir, exist_ok=True)
        except OSError as exc:
            return stop(2, "cannot create reward folder %s: %s" % (reward_dir, exc.strerror or exc))
        try:
            clear_rewards(reward_dir)
        except ContractError as exc:
            return stop(2, str(exc))

    # 2. The verifier file.
    verifier = state["verifier"]
    if not os.path.exists(verifier):
        return stop(2, "verifier file %s does not exist" % verifier)
    if not os.path.isfile(verifier):
        return stop(2, "verifier %s is not a file" % verifier)

    # 3. The arguments that exist in this run.
    from pathlib import Path

    workspace = Path(state["workspace"])
    available = {"workspace": workspace, "task_data": {}, "state": {"workspace": workspace}}
    try:
        if opts["task_data"] is not None:
            available["task_data"] = _read_json_object(opts["task_data"], "--task-data")
        if opts["response"] is not None:
            available["response"] = _read_json_object(opts["response"], "--response")
    except ContractError as exc:
        return stop(2, str(exc))
    state["available_names"] = [name for name in KNOWN_ARGUMENTS if name in available]

    # 4. sys.path: the runner's folder, the verifier's folder, the tests folder.
    helpers = os.path.dirname(os.path.abspath(__file__))
    tests_dir = os.path.dirname(helpers)
    verifier_dir = os.path.dirname(verifier)
    if "nemo_gym" in sys.modules:
        _errors()._forget_preloaded_nemo_gym(state)
    state["placed"] = place_on_path([helpers, verifier_dir, tests_dir])
    state["sys_path"] = list(sys.path)  # as placed, before the module's own code can change it
    state["folders"] = (helpers, verifier_dir, tests_dir)  # their roles are worked out by --explain
    if want_explain:
        state["modules"] = _explain().resolve_nemo_gym()

    # 5. Import the module; find verify.
    try:
        module = load_verify(verifier)
    except BaseException as exc:  # the verifier's own top-level code raised
        if want_explain:
            state["import_error"] = _explain()._error_info(exc)
        return stop(1, error=exc)
    verify = getattr(module, "verify", _NO_DEFAULT)  # `verify = None` is "not callable", not missing
    if verify is _NO_DEFAULT:
        return stop(2, "verifier %s defines no verify at top level" % verifier)
    if not callable(verify):
        return stop(2, "verify in %s is not callable: it is %s" % (verifier, _errors()._describe(verify)))

    try:
        params = parameters_of(verify)
    except ContractError as exc:
        return stop(2, str(exc))
    positional, keywords, plan, problems = bind(params, available)
    if want_explain:
        state["plan"] = plan
        state["verify_info"] = _explain()._verify_info(verify, params)
    if problems:
        return stop(2, problems[0], more=problems[1:])
    if explain_only:
        state["would_exit"] = None
        return 0
    if explain_to:
        state["would_exit"] = None
        _explain()._write_explain(state, explain_to)

    # 6. Call, await if needed, write the verdict.
    state["verify_called"] = True
    try:
        result = verify(*positional, **keywords)
        if _is_awaitable(result):
            import asyncio

            result = asyncio.run(_await(result))
            if isinstance(result, _Raised):
                return stop(1, error=result.error)
    except BaseException as exc:  # SystemExit and KeyboardInterrupt too: exit 1
        return stop(1, error=exc)
    try:
        write_reward(result, reward_dir)
    except ContractError as exc:
        return stop(2, str(exc))
    return 0


# --------------------------------------------------------------------------
# Cold code: explain, error reports, tracebacks.
#
# A script gets no bytecode cache, so Python parses every line of this file on
# every start, and parsing is most of the runner's own cost. Code that runs only
# for --explain/--explain-to, or for odd command lines and failing runs, is kept
# as text in two blocks below and compiled the first time it is needed, with its
# real line numbers so that tracebacks and linecache point at this file.
# _explain() and _errors() return this module with that block compiled into it.

_loaded_blocks = set()


def _explain():
    return _load_block("_EXPLAIN_SOURCE")


def _errors():
    return _load_block("_ERRORS_SOURCE")


def _load_block(name):
    module = sys.modules[__name__]
    if name not in _loaded_blocks:
        filename = module.__dict__.get("__file__") or "run_verifier.py"
        offset = 0
        try:
            with open(filename, encoding="utf-8") as handle:
                text = handle.read()
            # The block's text opens with the newline that ends its first line.
            offset = text.count("\n", 0, text.index("\n%s = r" % name) + 1)
        except (OSError, ValueError):
            pass
        source = "\n" * offset + module.__dict__[name]
        exec(compile(source, filename, "exec"), module.__dict__)
        _loaded_blocks.add(name)
    return module


_EXPLAIN_SOURCE = r'''
def path_roles(helpers, verifier_dir, tests_dir):
    """Role names of each of the runner's three folders, keyed as _same_key."""
    roles = {}
    for folder, role in ((helpers, ROLE_HELPERS), (verifier_dir, ROLE_VERIFIER), (tests_dir, ROLE_TESTS)):
        roles.setdefault(_same_key(folder), []).append(role)
    return roles


def _verify_info(verify, params):
    code = getattr(verify, "__code__", None)
    return {
        "signature": _signature_text(params),
        "is_async": bool(getattr(code, "co_flags", 0) & 0x80),
        "type": type(verify).__name__,
        "defined_in": getattr(code, "co_filename", None),
        "line": getattr(code, "co_firstlineno", None),
    }


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


def _error_info(exc):
    import traceback

    return {
        "type": type(exc).__name__,
        "message": _short_repr(str(exc), 500) if str(exc) else "",
        "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
    }


def _module_locations(name, entries):
    """Every copy of top-level package ``name`` along ``entries``, in order:
    [(entry, location, spec)]. A regular package or module reports its file;
    a namespace portion its folder."""
    from importlib.machinery import PathFinder

    found = []
    for entry in entries:
        if not isinstance(entry, str):
            continue
        try:
            spec = PathFinder.find_spec(name, [entry])
        except Exception:
            spec = None
        if spec is None:
            continue
        found.append((entry, _spec_location(spec), spec))
    return found


def _spec_location(spec):
    if spec.origin and spec.origin not in ("namespace", "built-in", "frozen"):
        return spec.origin
    locations = list(spec.submodule_search_locations or [])
    return locations[0] if locations else None


def resolve_nemo_gym():
    """Where ``nemo_gym`` and ``nemo_gym.verifiers`` resolve on sys.path as it
    now stands, and every other copy further down (shadowed)."""
    from importlib.machinery import PathFinder

    result = {}
    try:
        top = PathFinder.find_spec("nemo_gym", sys.path)
    except Exception:
        top = None
    top_location = _spec_location(top) if top is not None else None
    copies = _module_locations("nemo_gym", sys.path)
    result["nemo_gym"] = {
        "resolved": top_location,
        "shadowed": [loc for _, loc, _ in copies if loc != top_location and loc is not None],
    }
    resolved_sub = None
    if top is not None and top.submodule_search_locations:
        try:
            sub = PathFinder.find_spec("nemo_gym.verifiers", list(top.submodule_search_locations))
        except Exception:
            sub = None
        resolved_sub = _spec_location(sub) if sub is not None else None
    shadowed_sub = []
    for _, _, spec in copies:
        for folder in spec.submodule_search_locations or []:
            try:
                sub = PathFinder.find_spec("nemo_gym.verifiers", [folder])
            except Exception:
                sub = None
            location = _spec_location(sub) if sub is not None else None
            if location is not None and location != resolved_sub and location not in shadowed_sub:
                shadowed_sub.append(location)
    result["nemo_gym.verifiers"] = {"resolved": resolved_sub, "shadowed": shadowed_sub}
    return result


def _parameter_row(name, kind, default, binding, source, passed):
    return {
        "name": name,
        "kind": kind,
        "default": None if default is _NO_DEFAULT else _short_repr(default),
        "has_default": default is not _NO_DEFAULT,
        "binding": binding,
        "source": source,
        "passed": passed,
    }


def _explain_document(state):
    roles = path_roles(*state["folders"]) if "folders" in state else {}
    path_rows = []
    for index, entry in enumerate(state.get("sys_path", sys.path)):
        if not isinstance(entry, str):
            continue
        entry_roles = roles.get(_same_key(entry)) if index < len(state.get("placed", ())) else None
        path_rows.append({
            "index": index,
            "path": entry,
            "role": entry_roles[0] if entry_roles else ROLE_INTERPRETER,
            "roles": entry_roles or [ROLE_INTERPRETER],
            "exists": os.path.isdir(entry) or os.path.isfile(entry) if entry else True,
        })
    document = {
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
        "available": state.get("available_names", []),
        "verify": state.get("verify_info"),
        "parameters": [_parameter_row(*entry) for entry in state.get("plan", ())],
        "problems": state.get("problems", []),
        "import_error": state.get("import_error"),
        "would_exit": state.get("would_exit"),
        "would_call_verify": state.get("would_exit") is None and state.get("verify_info") is not None,
    }
    return document


def _write_explain(state, target):
    import json

    text = json.dumps(_explain_document(state), indent=2 if target == "-" else None, default=str)
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
'''


_ERRORS_SOURCE = r'''
def parse_args_fully(argv):
    """parse_args for every other command line: ``--opt=value``, ``--help``,
    and each way of getting it wrong. Returns a dict of options; raises
    UsageError for anything malformed.

    A ``--reward-dir`` seen before the error is still returned in the error's
    ``partial`` attribute so the caller can clear planted rewards anyway.
    """
    opts = {
        "verifier": None,
        "workspace": None,
        "response": None,
        "task_data": None,
        "reward_dir": None,
        "explain_to": None,
        "explain": False,
        "help": False,
        "pdb": False,
    }
    problem = None
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg in ("-h", "--help"):
            opts["help"] = True
            continue
        if arg == "--explain":
            opts["explain"] = True
            continue
        if arg == "--pdb":
            opts["pdb"] = True
            continue
        name, eq, value = arg.partition("=")
        if name in _VALUE_OPTIONS:
            key = _VALUE_OPTIONS[name]
            if not eq:
                if i >= len(argv) or (argv[i].startswith("-") and argv[i] != "-"):
                    problem = problem or "option %s needs a value" % name
                    continue
                value = argv[i]
                i += 1
            if value == "":
                problem = problem or "option %s needs a non-empty value" % name
                continue
            if opts[key] is not None:
                problem = problem or "option %s given more than once" % name
                continue
            opts[key] = value
            continue
        problem = problem or "unrecognised argument %r (see --help)" % arg
    if problem is None and not opts["help"]:
        missing = [flag for flag, key in (("--verifier", "verifier"), ("--workspace", "workspace"))
                   if opts[key] is None]
        if missing:
            problem = "the following arguments are required: %s" % ", ".join(missing)
    if problem is not None and not opts["help"]:
        error = UsageError(problem)
        error.partial = opts
        raise error
    return opts


def _stop(opts, state, want_explain, exit_code, problem, error, more):
    """How _run ends a failing run: the problem recorded for --explain (and
    written to --explain-to unless verify was already called: the file written
    just before the call stands), then reported: a traceback for exit 1, one
    line for exit 2, pdb post-mortem when --pdb asked for it."""
    explain_only = opts["explain"]
    if problem is not None:
        state["problems"].append(problem)
    state["problems"].extend(more)
    state["would_exit"] = exit_code
    if want_explain and not explain_only and opts["explain_to"] and not state.get("verify_called"):
        _explain()._write_explain(state, opts["explain_to"])
    if not explain_only:
        if error is not None:
            _print_traceback(error)
            if opts.get("pdb"):
                _post_mortem(error)
        elif problem is not None:
            _say(problem)
    return exit_code


def _usage_failure(error):
    """A bad command line: exit 2, after clearing the reward folder it named
    (or the default one) unless only --explain was asked for."""
    partial = getattr(error, "partial", {})
    if not partial.get("explain"):
        _quiet_clear(os.path.abspath(partial.get("reward_dir") or DEFAULT_REWARD_DIR))
    _say(str(error))
    return 2


def _parameters_by_inspect(verify):
    """parameters_of for anything that is not a plain function."""
    import inspect

    kinds = {
        inspect.Parameter.POSITIONAL_ONLY: POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD: POSITIONAL_OR_KEYWORD,
        inspect.Parameter.VAR_POSITIONAL: VAR_POSITIONAL,
        inspect.Parameter.KEYWORD_ONLY: KEYWORD_ONLY,
        inspect.Parameter.VAR_KEYWORD: VAR_KEYWORD,
    }
    try:
        signature = inspect.signature(verify)
    except (TypeError, ValueError) as exc:
        raise ContractError("cannot read the signature of verify (%s): %s" % (_describe(verify), exc))
    return [
        (p.name, kinds[p.kind], _NO_DEFAULT if p.default is inspect.Parameter.empty else p.default)
        for p in signature.parameters.values()
    ]


def _describe(value):
    # _short_repr: a verifier's own __repr__ may raise, and must not crash the run
    text = _short_repr(value if not isinstance(value, (str, bytes)) else value[:60], 80)
    return "%s (%s)" % (text, type(value).__name__)


def _forget_preloaded_nemo_gym(state):
    """Something (a .pth file, sitecustomize) imported nemo_gym before the path
    was placed: forget it, so the vendored copy is what the verifier loads."""
    state["preloaded"] = getattr(sys.modules.get("nemo_gym"), "__file__", None)
    for name in [n for n in sys.modules if n == "nemo_gym" or n.startswith("nemo_gym.")]:
        del sys.modules[name]


def _json_file_problem(path, flag, error, value=None):
    """Why ``path`` could not serve as ``flag``'s JSON object, in one line."""
    label = "standard input" if path == "-" else path
    if error is None:
        return "%s file %s holds a JSON %s, not a JSON object" % (flag, label, _json_kind(value))
    if isinstance(error, FileNotFoundError):
        return "%s file %s does not exist" % (flag, label)
    if isinstance(error, IsADirectoryError):
        return "%s file %s is a folder, not a JSON file" % (flag, label)
    if isinstance(error, OSError):
        return "%s file %s cannot be read: %s" % (flag, label, error.strerror or error)
    if isinstance(error, UnicodeDecodeError):
        return "%s file %s is not UTF-8 text: %s" % (flag, label, error)
    if isinstance(error, ValueError):
        return "%s file %s is not valid JSON: %s" % (flag, label, error)
    return "%s file %s cannot be read: %s" % (flag, label, error)


def _json_kind(value):
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    return "number"


def _missing_message(name, available):
    if name == "response":
        return ("verify requires 'response' without a default, but no --response was given: "
                "a published Harbor task never has one (give it a default, e.g. response=None)")
    if name in KNOWN_ARGUMENTS:
        return "verify requires %r without a default, but it is not available in this run" % name
    return ("verify requires %r without a default, which the runner does not provide "
            "(it provides %s)" % (name, ", ".join(k for k in KNOWN_ARGUMENTS if k in available)))


def _post_mortem(error):
    """pdb on what the verifier raised, starting at the innermost frame of the
    task's own code (the verifier or a helper in the tests folder), not in the
    library call it failed inside."""
    import pdb

    tests_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

    class VerifierPdb(pdb.Pdb):
        def setup(self, frame, tb):
            result = pdb.Pdb.setup(self, frame, tb)
            for index in range(len(self.stack) - 1, -1, -1):
                candidate = self.stack[index][0]
                if os.path.abspath(candidate.f_code.co_filename).startswith(tests_dir):
                    self.curindex = index
                    self.curframe = candidate
                    if hasattr(self, "curframe_locals"):
                        self.curframe_locals = candidate.f_locals
                    break
            return result

    sys.stderr.write("\n%s: the verifier raised; pdb post-mortem in its failing frame "
                     "(up/down walk the traceback, q ends it)\n" % PROG)
    sys.stderr.flush()
    debugger = VerifierPdb()
    debugger.reset()
    debugger.interaction(None, error.__traceback__)


def _nothing_to_debug(code):
    if code == 0:
        sys.stderr.write("\n%s: verify returned without raising (exit 0): nothing to debug post-mortem\n" % PROG)
    else:
        sys.stderr.write("\n%s: exit %d is a contract problem, not an exception: see the line above\n" % (PROG, code))


def _print_traceback(exc):
    """The exception with the runner's and importlib's frames left out, so the
    first frame shown is the verifier's own code."""
    import traceback

    tb = exc.__traceback__
    here = os.path.normcase(os.path.abspath(__file__))
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename.startswith("<frozen importlib") or os.path.normcase(os.path.abspath(filename)) == here:
            tb = tb.tb_next
            continue
        break
    traceback.print_exception(type(exc), exc, tb, file=sys.stderr)
    sys.stderr.flush()
'''


if __name__ == "__main__":
    sys.exit(main())
