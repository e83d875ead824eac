"""What a run's output and the task's own files tell beyond the verdict:
the tool's checks, each a sentence the user can act on.

- a third-party module the interpreter lacks (``ModuleNotFoundError``), with
  the lines of the task that install it in the sandbox, and how to run with an
  interpreter that has it;
- a module in a folder the runner puts ahead of the standard library
  (``tests/statistics.py``) that shadows a standard-library module, or that is
  never imported because a module of its name was imported as the run started;
- a coroutine that was never awaited: a verifier that forgets an ``await``
  scores a coroutine object or a default instead of its check;
- ``breakpoint()`` (or ``pdb.set_trace()``) in the verifier: the runner's
  stdin is not a terminal (Harbor's test.sh gives it none either), so pdb
  reads end-of-file, quits, and the run ends in ``bdb.BdbQuit``;
- a task's own runner that does not compile: its exit 1 says "verifier
  raised" of a verifier never imported;
- a relative import (``from .helpers import score``) in the verifier or a
  helper beside it: the runner imports them as top-level modules, so Python
  says only "no known parent package".
"""

from __future__ import annotations

import os
import re
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from verifier_tui.engine import untrusted
from verifier_tui.engine.advice import DEBUG_UNDER_PDB, PYTHON_OPTION, Advice
from verifier_tui.engine.plain import posix_from
from verifier_tui.engine.readback import INTERPRETER
from verifier_tui.engine.record import record
from verifier_tui.engine.task.kinds import some_names
from verifier_tui.engine.task.sh_words import sh_commands, sh_lines

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from verifier_tui.engine.readback import Explanation
    from verifier_tui.engine.task.kinds import OwnRunner

# Read from every run's output; each is compiled (by ``re``, which keeps it)
# only once the output holds its literal part, which most runs' never do.
_MISSING = r"ModuleNotFoundError: No module named '([^']+)'"
#: The last line of a traceback that pdb's quitting ended: ``bdb.BdbQuit``.
_DEBUGGER_QUIT = r"(?m)^bdb\.BdbQuit\s*$"
_NEVER_AWAITED = r"RuntimeWarning: coroutine '([^']+)' was never awaited"
_NO_PARENT = "ImportError: attempted relative import with no known parent package"
#: The frame that raised it (the last), and its line when Python could show it.
_RELATIVE_FRAME = (
    r'  File "([^"\n]+)", line (\d+), in [^\n]*\n(?:    (from \.[^\n]*)\n)?(?:(?!  File ")[^\n]*\n)*?' + _NO_PARENT
)
#: Import names whose package on PyPI is called otherwise: a Dockerfile
#: installs ``PyYAML``, the verifier imports ``yaml``.
_DISTRIBUTIONS = {
    "yaml": ("pyyaml",),
    "sklearn": ("scikit-learn",),
    "cv2": ("opencv-python", "opencv"),
    "PIL": ("pillow",),
    "bs4": ("beautifulsoup4",),
    "dateutil": ("python-dateutil",),
    "dotenv": ("python-dotenv",),
    "docx": ("python-docx",),
    "Crypto": ("pycryptodome",),
    "jwt": ("pyjwt",),
    "attr": ("attrs",),
    "serial": ("pyserial",),
    "skimage": ("scikit-image",),
}
#: Files of a task that install what its sandbox has, relative to the task.
#: environment/pyproject.toml: a Dockerfile's `COPY pyproject.toml /deps/` then `RUN pip install /deps` installs
#: the dependencies it lists.
_INSTALL_FILES = (
    "environment/Dockerfile",
    "tests/Dockerfile",
    "Dockerfile",
    "tests/test.sh",
    "environment/pyproject.toml",
)
#: Harbor runs the task's test.sh in the sandbox (with its #! line's shell, else bash), so a ``pip install``
#: there installs for the verifier; it is read as sh reads it, and only its install commands' package words
#: count: its other words (the shim's ``--verifier /tests/verifier.py --workspace /app``, an echo, a comment)
#: install nothing.
_SCRIPT = "test.sh"
_INSTALLERS = ("pip", "uv", "apt")  # a line naming none of these is never lexed
_PYTHON = re.compile(r"python(?:3(?:\.\d+)?)?")
#: The words that start an install (pip, pip3.12, uv, uvx, apt-get), whatever runs them (sudo, timeout 300).
_INSTALLER = re.compile(r"pip(?:3(?:\.\d+)?)?|uvx?|apt(?:-get)?")
#: An option of pip install's (uv pip's) that installs what a file lists: -r FILE, -qr FILE, -rFILE, --requirement.
_LISTS_A_FILE = re.compile(r"-[A-Za-z]*r.*|--requirements?(?:=.*)?")
#: uvx's and uv run's package option, its value in the word (-wNAME, -w=NAME, --with=NAME) or the next.
_WITH = re.compile(r"-w=?(.*)|--with(?:=(.*))?")
#: A requirement's name (PEP 508), then its end or what may follow it: extras, a version, a marker, a URL.
_REQUIRES = re.compile(r"([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)(?:$|[\[=<>!~;@ ])")
_REQUIREMENTS_FOLDERS = (".", "environment", "tests")
#: A file larger than this is not searched for install lines.
_MAX_INSTALL_FILE_BYTES = 1_000_000
#: A test.sh line longer than this is not read as an install command, nor lines past this many characters
#: of those that may be one: far past any a task writes, where lexing them costs about 1 ms a KB (measured:
#: 1 MB of `pip install` words 1.0 s, of `; pip install y` 2.9 s); such a line is said, not read.
_MAX_LEXED_LINE = 64 * 1024
_MAX_LEXED = 256 * 1024
_UNREAD = "not read as sh reads it: past the 64 KB of a line, or the 256 KB of install lines, read here"
#: What a line that installs what a file lists holds: a word -r, -qr, -rFILE; --requirement, --with-requirements.
_FROM_A_FILE = re.compile(r"(?<![^\s'\"])-[A-Za-z]*r|requirement")
_LINES_SHOWN = 3


@record(frozen=True)
class InstallLine:
    """A line of a task file that mentions a package; ``from_a_file``: one of test.sh that installs
    what a file lists (``pip install -r FILE``), which may hold the package or not."""

    path: Path
    number: int
    text: str
    from_a_file: bool = False
    unread: bool = False  # a line of test.sh that may install it, too long to read (:data:`_UNREAD`)


def missing_module(output: str) -> str | None:
    """The top-level name of the last module Python could not find."""
    found = re.findall(_MISSING, output) if output and "ModuleNotFoundError" in output else []
    return found[-1].split(".")[0] if found else None


def install_files(task_root: Path) -> list[Path]:
    """The task's Dockerfiles, requirements files and test.sh (those that exist)."""
    files = [task_root / rel for rel in _INSTALL_FILES]
    for folder in _REQUIREMENTS_FOLDERS:
        try:
            files += sorted((task_root / folder).glob("requirements*.txt"))
        except OSError:
            continue
    return [f for f in files if f.is_file()]


def install_lines(files: list[Path], module: str) -> list[InstallLine]:
    """The lines of ``files`` that mention ``module`` (or its PyPI name), as a
    word, whatever the case."""
    # pip names use dashes where import names use underscores (python-dateutil, my_pkg / my-pkg).
    names = (module, module.replace("_", "-"), *_DISTRIBUTIONS.get(module, ()))
    # Debian's package of a module is python3-NAME, with - for _ (apt-get install python3-rich, python3-yaml).
    pattern = re.compile(r"(?<![\w.-])(?:python3-)?(?:" + "|".join(re.escape(n) for n in names) + r")(?![\w-])", re.I)
    found = []
    for path in files:
        text, _ = untrusted.read_text(path, _MAX_INSTALL_FILE_BYTES)
        if text is None:
            continue
        if path.name == _SCRIPT:
            # pip's spellings of a name: any run of - _ . between its parts, any case (Vtui.Fuzzy_Scores)
            spelt = "|".join("[-_.]+".join(map(re.escape, re.split(r"[-_.]+", name))) for name in names)
            found += _script_installs(path, text, {_normal(name) for name in names}, re.compile(spelt, re.I))
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            if pattern.search(line) and not line.lstrip().startswith("#"):
                found.append(InstallLine(path, number, line.strip()))
    return found


def _script_installs(path: Path, text: str, names: set[str], spelt: re.Pattern[str]) -> list[InstallLine]:
    """The lines of a test.sh whose install commands name one of ``names`` (:func:`_normal`), or
    install what a file lists. Lexing a line costs far more than reading it: only one that names an
    installer and the module (``spelt``) or a file to install from is lexed, none past
    :data:`_MAX_LEXED_LINE`, and none once :data:`_MAX_LEXED` characters of them were: each line past
    the first, and the first once that many were, is found ``unread``."""
    found: list[InstallLine] = []
    lexed = 0
    for number, line in sh_lines(text):
        if not any(installer in line for installer in _INSTALLERS) or not (
            spelt.search(line) or _FROM_A_FILE.search(line)
        ):
            continue
        if len(line) > _MAX_LEXED_LINE or lexed + len(line) > _MAX_LEXED:
            found.append(InstallLine(path, number, " ".join(line[:200].split()), unread=True))
            if len(line) > _MAX_LEXED_LINE:
                continue
            break
        lexed += len(line)
        installs = [_installs(command) for command in sh_commands(line)]
        named = any(_normal(package) in names for packages, _ in installs for package in packages)
        if named or any(from_a_file for _, from_a_file in installs):
            found.append(InstallLine(path, number, " ".join(line.split()), from_a_file=not named))
    return found


def _installs(words: list[str]) -> tuple[list[str], bool]:
    """The names of the packages one command of test.sh installs, and whether it installs what a file
    lists. It is read from its first word naming an installer (pip, pip3, python -m pip, uv pip, uv add,
    uvx, uv run, apt, apt-get), whatever runs that (``sudo``, ``timeout 300``, ``if !``): the words after
    ``install`` (uv's ``add``) that are no option, or uvx's and uv run's ``-w``/``--with`` values; a
    ``-…r`` word, ``--requirement`` or ``--with-requirements`` installs from a file. An option's value is
    not told from a package: a module's name would have to be one (``--trusted-host NAME``) to mislead."""
    if words[:1] == ["command"] and words[1:2] in (["-v"], ["-V"]):
        return [], False  # says where a command is
    for at, word in enumerate(words):
        name, rest = word.rsplit("/", 1)[-1], words[at + 1 :]
        if _INSTALLER.fullmatch(name) or (_PYTHON.fullmatch(name) and rest[:2] == ["-m", "pip"]):
            break
    else:
        return [], False
    if _PYTHON.fullmatch(name) or (name == "uv" and rest[:1] == ["pip"]):
        name, rest = "pip", rest[rest.index("pip") + 1 :]
    if name == "uvx" or (name == "uv" and rest[:1] in (["run"], ["tool"])):
        withs = [
            found[1] or found[2] or value
            for word, value in zip(rest, [*rest[1:], ""], strict=True)
            if (found := _WITH.fullmatch(word))
        ]
        from_a_file = any(word.partition("=")[0] == "--with-requirements" for word in rest)
        return [_requirement(package) for value in withs for package in value.split(",")], from_a_file
    verb = "add" if name == "uv" else "install"
    if verb not in rest:
        return [], False
    after = rest[rest.index(verb) + 1 :]
    packages = [word for word in after if not word.startswith("-")]
    if name.startswith("apt"):  # Debian names a module's package python3-NAME (python3-yaml, python3-pil)
        return [_requirement(p.removeprefix("python3-")) for p in packages if p.startswith("python3-")], False
    return [_requirement(package) for package in packages], any(_LISTS_A_FILE.fullmatch(word) for word in after)


def _requirement(word: str) -> str:
    """The name a pip requirement names (``requests[socks]>=2``: requests); "" for a path or a URL."""
    found = _REQUIRES.match(word)
    return found.group(1) if found else ""


def _normal(name: str) -> str:
    """A package's name as pip compares it (PEP 503): ``Vtui.Fuzzy_Scores`` is ``vtui-fuzzy-scores``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def missing_module_notice(output: str, task_root: Path, local_folders: list[Path], python: str) -> Advice | None:
    """A sentence for a verifier that imports a module ``python`` lacks: the
    module, the task's lines that install it in the sandbox, and what to do;
    where nothing installs it, the helper file missing beside the verifier
    (``local_folders``: where the runner finds the task's own modules, the
    verifier's folder last).
    None when nothing is missing, when it is ``nemo_gym`` (it has a hint of its
    own: the shim vendors it), or when the task holds a module of that name
    (then the import failed for another reason)."""
    module = missing_module(output)
    if module is None or module == "nemo_gym":
        return None
    for folder in local_folders:
        if (folder / f"{module}.py").exists() or (folder / module).is_dir():
            return None
    files = install_files(task_root)
    lines = install_lines(files, module)

    def shown(lines: list[InstallLine]) -> str:
        said = [f"{posix_from(line.path, task_root)}:{line.number} `{line.text[:100]}`" for line in lines]
        return some_names(said, _LINES_SHOWN, "; ")

    named = [line for line in lines if not line.from_a_file and not line.unread]
    unread = [line for line in lines if line.unread]
    from_files = [line for line in lines if line.from_a_file]
    if named:
        where = f"the task installs it for the sandbox in {shown(named)}"
    else:
        # Nothing installs it: a helper module of the task's own, missing, is
        # as likely as a package; the sandbox would fail the same way.
        mentions = (
            "none of the lines read of the task's install files installs it"
            if unread
            else ("none of the task's install files mentions it")
        )
        where = (
            f"{mentions} ({', '.join(posix_from(f, task_root) for f in files)})"
            if files
            else "the task has no Dockerfile, requirements file or test.sh that would install it"
        )
        if from_files:  # what a file lists may hold it, or not: said as such, never as installing it
            where += f", though {shown(from_files)} installs what a file lists (not read here)"
        if unread:
            where += f"; {shown(unread)} may install it ({_UNREAD})"
        beside = posix_from(local_folders[-1], task_root) if local_folders else "tests"  # the verifier's own folder
        return Advice(
            f"the verifier imports {module}, which is neither beside it ({beside}/{module}.py or "
            f"{beside}/{module}/) nor installed for {python} (ModuleNotFoundError), and {where}: a helper "
            f"of the task's missing from {beside}/ fails the same way in the sandbox; a package, the task's "
            "image must install, and here run with an interpreter that has it: ",
            PYTHON_OPTION,
        )
    return Advice(
        f"the verifier imports {module}, which {python} does not have (ModuleNotFoundError); {where}. "
        "Run with an interpreter that has it: ",
        PYTHON_OPTION,
        " (for example a virtual environment's bin/python where you installed it)",
    )


#: The task's own .py files read for what they import: the first this many, this many bytes of them in all.
_MAX_SOURCES = 200
_MAX_SOURCE_BYTES = 2_000_000
#: The modules they import that are looked for: far past any task's.
_MAX_IMPORTED = 100


def imported_names(verifier: Path, folders: list[Path]) -> list[str]:
    """The top-level modules the verifier imports, anywhere in it (inside verify() too, where no run
    of a passing verifier would show it), and those the task's own modules it imports in turn
    import: a module of ``folders`` (the runner's sys.path order: a package before a module file of
    its name) or of a relative import is read, never named. A script beside the verifier that it
    never imports is not read. Standard library's left out. Untrusted: links are not followed, a
    file that does not parse is skipped, and no more than :data:`_MAX_SOURCES` files,
    :data:`_MAX_SOURCE_BYTES` bytes, :data:`_MAX_IMPORTED` names."""
    import ast

    queue, seen = [verifier], {verifier}
    wanted: list[tuple[str, tuple[str, ...], list[Path]]]
    found: dict[str, None] = {}
    budget, files = _MAX_SOURCE_BYTES, 0
    while queue and files < _MAX_SOURCES and budget > 0 and len(found) < _MAX_IMPORTED:
        path = queue.pop(0)
        files += 1
        read = untrusted.read_bytes(path, budget, beneath=path.parent)
        if read.data is None:
            continue
        budget -= len(read.data)
        try:
            tree = ast.parse(read.data)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                wanted = [(alias.name, (), folders) for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                wanted = [(node.module, tuple(alias.name for alias in node.names), folders)]
            elif isinstance(node, ast.ImportFrom) and node.level:
                base = path.parents[node.level - 1] if node.level <= len(path.parents) else None
                if base is None or not any(base.is_relative_to(f) and base != f for f in folders):
                    continue  # past the top-level package: Python raises ImportError
                names = tuple(alias.name for alias in node.names)
                wanted = [(node.module, names, [base])] if node.module else [(n, (), [base]) for n in names]
            else:
                continue
            for dotted, names, where in wanted:
                local = _own_module_files(dotted, names, where)
                for file in local or ():
                    if file not in seen:
                        seen.add(file)
                        queue.append(file)
                name = dotted.partition(".")[0]
                if local is None and where is folders and name not in sys.stdlib_module_names and name != "__future__":
                    # every image's Python has the standard library (setuptools' distutils-precedence.pth
                    # serves distutils from site-packages all the same)
                    found[name] = None
    return list(found)[:_MAX_IMPORTED]


def _own_module_files(dotted: str, names: tuple[str, ...], folders: list[Path]) -> list[Path] | None:
    """The files ``import dotted`` (``from dotted import names``) runs of the task's own module, found
    in the first of ``folders`` that has its top name as Python's finder does (a package's folder
    before a module file): each package's ``__init__.py`` down the path, the module, and the
    submodules ``names`` may be. Links are not followed. None: not the task's."""
    parts = dotted.split(".")
    for folder in folders:
        top = folder / parts[0]
        if not (untrusted.real_dir(top) or os.path.lexists(top.with_name(top.name + ".py"))):
            continue
        files: list[Path] = []
        here = folder
        for part in parts:
            if untrusted.real_dir(here / part):
                here = here / part
                files.append(here / "__init__.py")
            else:
                files.append(here / f"{part}.py")
                return [f for f in files if untrusted.is_kind(f, stat.S_ISREG)]
        for name in names:  # from package import submodule
            files += [here / f"{name}.py", here / name / "__init__.py"]
        return [f for f in files if untrusted.is_kind(f, stat.S_ISREG)]
    return None


def _module_in(folder: str | Path, name: str) -> bool:
    """Whether ``import name`` finds a package or module file in ``folder`` (a link counts as found,
    never followed)."""
    import importlib.machinery

    base = os.path.join(folder, name)
    return os.path.lexists(base) or any(os.path.lexists(base + suffix) for suffix in importlib.machinery.all_suffixes())


def own_environment_notice(
    explain: Explanation | None, task_root: Path, verifier: Path, local_folders: list[Path]
) -> Advice | None:
    """A sentence for a verifier that passed here on packages verifier-tui itself brought: the run's
    interpreter is the tool's own environment (the README's venv, python3 on PATH once activated),
    and a module the task's files (``local_folders``) import resolves first in its site-packages of
    all the run's sys.path, while no install line of the task names it. Harbor runs the verifier in
    the task's image, which holds only what it installs. The task's files are read, not the run's
    modules, so a package's own dependencies are not named, and an import in verify() is."""
    import sysconfig

    if explain is None or not explain.sys_path:
        return None
    paths = sysconfig.get_paths()
    own = {way(paths[key]) for key in ("purelib", "platlib") for way in (os.path.abspath, os.path.realpath)}
    if not any(row.path and os.path.abspath(row.path) in own for row in explain.sys_path):
        return None  # another interpreter: the task's files are not read at every run for nothing

    def borrowed(name: str) -> bool:
        if name == "nemo_gym" or any(_module_in(folder, name) for folder in local_folders):
            return False  # the shim vendors nemo_gym (a hint of its own); the task's own module
        first = next((row.path for row in explain.sys_path if row.path and _module_in(row.path, name)), None)
        return first is not None and os.path.abspath(first) in own

    found = sorted(filter(borrowed, imported_names(verifier, local_folders)))
    files = install_files(task_root) if found else []
    unnamed = [name for name in found if not install_lines(files, name)]
    if not unnamed:
        return None
    return Advice(
        f"the verifier's files import {some_names(unnamed, _LINES_SHOWN, ', ')}, found in verifier-tui's own "
        "environment and installed by none of the task's install files: the task's image may lack "
        "them, and Harbor would fail the verifier there. Run with the interpreter the image has: ",
        PYTHON_OPTION,
    )


def relative_import_notice(output: str, task_root: Path) -> str | None:
    """A sentence for ``from .helpers import x`` in a module with no package. The runner
    imports the verifier by its file as a top-level module (as NeMo Gym's runner does), and
    a helper beside it is imported as one too: neither has a parent to be relative to, in the
    sandbox as here. The verifier's folder is on ``sys.path``, so the helper's plain name
    imports it. None without that error."""
    if not output or _NO_PARENT not in output:
        return None
    frames = re.findall(_RELATIVE_FRAME, output)
    if not frames:
        return None
    path, line, statement = frames[-1]
    try:
        where = Path(path).relative_to(task_root).as_posix()
    except ValueError:
        where = path
    said = f"{where}:{line}" + (f" `{statement}`" if statement else "")
    # `from .helpers import x` is `from helpers import x`; `from . import helpers` is `import helpers`
    if statement.startswith("from . import "):
        how = f"write `import {statement.removeprefix('from . import ')}`"
    elif re.match(r"from \.\w", statement):
        how = f"write `from {statement.removeprefix('from .')}`"
    else:  # `from ..x` climbs out of a package it never had
        how = "import the helper by its name"
    return (
        f"a relative import failed at {said}: the runner imports the verifier, and the helpers beside it, "
        "as top-level modules, which have no package to be relative to (the sandbox fails the same way). "
        f"The verifier's folder is on sys.path: {how}. Relative imports work between the modules of a "
        "package folder of helpers (tests/NAME/__init__.py)"
    )


def debugger_notice(output: str) -> Advice | None:
    """A sentence for a verifier that stopped in pdb with no terminal to
    talk to (``breakpoint()``): what happened, and how to debug it for real.
    None when the output shows no ``bdb.BdbQuit``."""
    if not output or "BdbQuit" not in output or not re.search(_DEBUGGER_QUIT, output):
        return None
    return Advice(
        "the verifier stopped in pdb (breakpoint() or pdb.set_trace()) and pdb quit at once, raising "
        "bdb.BdbQuit: the run's stdin is not a terminal, as in the sandbox. To step through it, ",
        DEBUG_UNDER_PDB,
        ": it runs the verifier under pdb in your terminal",
    )


#: Where Python says a file did not compile: its last ``File "...", line N``
#: (no other frame after it) and the error that ends the output.
_NOT_COMPILED = (
    r'  File "([^"\n]+)", line (\d+)\n(?:(?!  File ")[^\n]*\n)*?'
    r"(SyntaxError|IndentationError|TabError): [^\n]*\n\Z"
)


def runner_not_compiled(stderr: str, runner: OwnRunner | None) -> str | None:
    """Where a task's own runner did not compile (``SyntaxError, line 2``), as
    the output's last lines say, naming the runner's own file; None for ours,
    or any other output (a verifier that does not compile is named by its own
    file). Such a runner exits 1 before it imports the verifier."""
    if runner is None or "Error" not in stderr or str(runner.path) not in stderr:
        return None
    found = re.search(_NOT_COMPILED, stderr.rstrip() + "\n")
    if found is None or found.group(1) != str(runner.path):
        return None
    return f"{found.group(3)}, line {found.group(2)}"


def runner_not_compiled_notices(stderr: str, runner: OwnRunner | None) -> list[str]:
    """The sentence for such a runner: its exit 1 reads "verifier raised" of a
    verifier never imported (the verdict, no reward, is Harbor's all the same)."""
    where = runner_not_compiled(stderr, runner)
    if where is None:
        return []
    return [
        f"the task's own runner (tests/.ng/run_verifier.py) does not compile ({where}): it exited 1 before it "
        "imported the verifier, so verify was never called; the sandbox's test.sh runs that file and would "
        "fail the same way. verifier-tui vendor TASK puts a working runner in its place"
    ]


def never_awaited(*outputs: str) -> list[str]:
    """Coroutines Python warned were never awaited, each named once."""
    names: list[str] = []
    for text in outputs:
        for name in re.findall(_NEVER_AWAITED, text) if text and "never awaited" in text else ():
            if name not in names:
                names.append(name)
    return names


def never_awaited_warning(names: list[str]) -> str:
    listed = some_names([f"'{n}'" for n in names], 3)
    return (
        f"coroutine {listed} was never awaited (a RuntimeWarning in the output): a missing await, which "
        "almost always makes the score wrong (the check never ran, or a coroutine object was scored)"
    )


def shadows(explain: Explanation | None) -> list[dict[str, Any]]:
    """Modules in the folders the runner places ahead of the standard library
    (the --explain document's placed rows) that carry a standard-library
    module's name: ``import statistics`` finds ``tests/statistics.py`` first;
    and any that carries the name of a module the run found already imported
    as the runner placed them (``imported_before``), which ``import`` returns
    from sys.modules without looking along the path: the folder's file is
    never imported (``preloaded``; ``preloaded_from``, the file that wins;
    ``by_preload``: ``--preload`` imported it, in a run started ahead).
    That is learnt from the run, not worked out here: what a .pth file,
    sitecustomize or start-up imports differs by interpreter and
    installation. Modules built into the interpreter cannot be shadowed and
    are left out."""
    if explain is None:
        return []
    found: list[dict[str, Any]] = []
    for row in explain.sys_path:
        if row.role in ("", INTERPRETER):
            continue
        folder = Path(row.path)
        try:
            names = sorted(folder.iterdir()) if folder.is_dir() else []
        except OSError:
            continue
        for entry in names:
            module = entry.stem if entry.suffix == ".py" else entry.name if (entry / "__init__.py").is_file() else None
            preloaded = module in explain.imported_before
            if (
                module is None
                or not (preloaded or module in sys.stdlib_module_names)
                or module in sys.builtin_module_names
                or module.startswith("__")
            ):
                continue
            if any(f["module"] == module for f in found):
                continue  # only the first copy on the path is imported
            found.append(
                {
                    "module": module,
                    "path": str(entry),
                    "index": row.index,
                    "preloaded": preloaded,
                    "preloaded_from": explain.imported_before.get(module),
                    "by_preload": module in explain.imported_by_preload,
                }
            )
    return found


def shadow_text(shadow: dict[str, Any], show_path: Callable[[str], str]) -> str:
    module, shown = shadow["module"], show_path(shadow["path"])
    if shadow["preloaded"]:
        wins = show_path(shadow["preloaded_from"]) if shadow["preloaded_from"] else "that module"
        if shadow.get("by_preload"):
            # Not the interpreter's doing: Harbor's sandbox preloads nothing, so there the
            # task's file is imported; the user acts on the preload, not on the file's name.
            return (
                f"{shown} is not imported in this run: --preload imported {module} before the run started, so "
                f"`import {module}` gets {wins}; Harbor preloads nothing, so its run imports this file "
                f"(leave {module}, and what imports it, out of --preload to run as Harbor does)"
            )
        return (
            f"{shown} is never imported: {module} was already imported as the run started (by a .pth file of "
            f"site-packages, sitecustomize, or the interpreter and the runner themselves), so `import {module}` "
            f"gets {wins}; rename it"
        )
    return (
        f"{shown} shadows the standard library's {module}: the runner puts this folder ahead of the "
        f"standard library, so `import {module}` (in the verifier or any library it uses) gets this file; "
        "rename it"
    )
