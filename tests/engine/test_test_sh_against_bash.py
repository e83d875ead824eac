"""tests/test.sh's reading against real programs: the workspace the tool lays a run at and the verifier it
takes the shim to run, from the line that starts the runner, against the words bash passes that line's
``python3`` (a stub on PATH writes them down) as the runner's own parser reads them; its install lines
against a stub ``pip`` bash runs; and its ``#!`` line against what the kernel starts. Whatever the tool
claims must be what the real program does, or the tool must say it cannot tell (a note, a refusal, no
claim): never a confident wrong answer."""

from __future__ import annotations

import errno
import importlib.util
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verifier_tui.engine import invocation
from verifier_tui.engine.diagnosis import install_lines
from verifier_tui.engine.sandbox.view import APP, braced_workspace, normal_path
from verifier_tui.engine.task.discovery import shim_reads
from verifier_tui.runner_source import runner_path

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
_spec = importlib.util.spec_from_file_location("run_verifier_under_test", runner_path())
assert _spec is not None and _spec.loader is not None
_runner = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_runner)

# pieces of the workspace's word: plain text, what bash expands unquoted (patterns, braces, a tilde), quoted
# and escaped text (single, double, backslash, $'...', $"..."), variables (one set, one not) with defaults,
# a command's output, a backslash-newline inside the word
_PIECES = st.sampled_from(
    [
        *("/srv", "/app", "/", "ws", "a", "-b", ".", "..", "x=1", ":", "#", "~", "~root", "%"),
        *("*", "?", "[ab]", "[", "]", "{a,b}", "{a,{b}}", "{{a},b}", "{1..2}", "{a}", "{,}", "{", "}", ","),
        *("'/q w'", "'{a,b}'", "'*'", '"/d q"', '"$X"', '"\\$X"', '"{a,b}"', "\\*", "\\{", "\\ ", "\\,", "\\~"),
        *(
            "$'/c\\x41'",
            "$'{a,b}'",
            '$"/l"',
            "$X",
            "${X:-/srv/d}",
            "${UNSET:-/srv/d}",
            "${X}",
            "$(echo /o)",
            "$(\n echo /m\n)",
        ),
        *("`echo /o`", "\\\n", "$", "$é", '"/a\\\nb"', "'/a\\\nb'", "$'\\n'", "\\\\", '"\\a"', "\\;", "'it''s'"),
    ]
)
_WORDS = st.builds(
    lambda head, pieces: head + "".join(pieces), st.sampled_from(["/", "", "/srv/"]), st.lists(_PIECES, max_size=4)
)
# between the flag and its word: a blank, a continuation, a redirection bash takes out of the words
_BETWEEN = st.sampled_from([" ", "=", " \\\n  ", "  \t", " >/dev/null ", " 2>/dev/null ", " </dev/null "])
_BEFORE = st.lists(
    st.sampled_from(
        [
            "# the runner gets --workspace /srv/no\n",
            "X=/srv/x\n",
            "set -e\n",
            "cd /\n",
            "true # --workspace /srv/no \\\n",
            "cat >/dev/null <<'EOF'\npython3 r.py --workspace /srv/no\nEOF\n",
            "echo --workspace /srv/no >/dev/null\n",
        ]
    ),
    max_size=3,
)
#: What may stand before the command test.sh runs (and what closes it), which bash runs it behind.
SH_PREFIXES = ("", "exec ", "true && ", "true; ", "Y=1 ", "command ", "env ", "nice ", "{ ", "( ", "if true; then ")
_PREFIX = st.sampled_from(SH_PREFIXES)
_CLOSING = {"{ ": "; }", "( ": " )", "if true; then ": "; fi", "if ! ": "; then exit 1; fi", "while ! ": "; do :; done"}
_SUFFIX = st.sampled_from(["", " # --workspace /srv/no", " && true", "; true", " 2>&1", " >/dev/null", " | cat"])


_SETS_V = "\x56=/tests/w.py\n"  # sets V, read only as test.sh runs


def _bash_runs(folder: Path, script: str) -> list[list[str]]:
    """Each command line bash gives ``python3`` running ``script`` as test.sh (as Harbor's ``bash -c``
    starts a test.sh without a #! line): a stub on PATH writes its words down, NUL-separated."""
    (folder / "bin").mkdir()
    stub = folder / "bin" / "python3"
    stub.write_text('#!/bin/sh\nprintf \'%s\\0\' "$@" >>"$STUB_OUT"\nprintf \'\\n\' >>"$STUB_OUT"\n')
    stub.chmod(0o755)
    (folder / "tests").mkdir()
    (folder / "tests" / "test.sh").write_text(script)
    (folder / "cwd").mkdir()
    (folder / "cwd" / "sets").write_text(_SETS_V)  # what a test.sh may source or eval: text not read here
    out = folder / "argv"
    env = {"PATH": f"{folder / 'bin'}:/usr/bin:/bin", "HOME": "/root", "X": "/srv/env", "STUB_OUT": str(out)}
    subprocess.run(
        ["bash", folder / "tests" / "test.sh"],
        cwd=folder / "cwd",
        env=env,
        capture_output=True,
        timeout=30,
        check=False,
    )
    if not out.exists():
        return []
    return [line.split("\0") for line in out.read_text().split("\0\n")[:-1]]


def _judged(script: str, argv: list[str], tests: Path) -> None:
    """What the tool says of ``script`` against the words bash gave the runner (``argv``)."""
    try:
        given_workspace = _runner.parse_args(argv[1:])["workspace"]
    except _runner.UsageError:
        given_workspace = None  # the runner refuses what bash gave it: exit 2, no reward
    if any(invocation.test_sh_refusals(tests / "test.sh", via_test_sh=False)):  # not run: the words it names are bash's
        braced = braced_workspace(tests, braces=True)
        assert braced is None or not braced.words or _within(list(braced.words), argv), (script, argv, braced)
        return
    path, note = invocation.workspace_laid(tests)
    said = f"{script!r}: bash passes {argv[1:]!r}; the tool says {path!r}, {note!r}"
    if note:
        return  # known only as test.sh runs: said so
    if given_workspace is None:  # no path of test.sh's is claimed: /app is the shim's, where a broken
        assert path == APP, said  # command line is the runner's to refuse when test.sh runs
        return
    if not given_workspace.startswith("/") or normal_path(given_workspace) == "/":
        return  # a relative workspace (from the working folder) or the root: not laid here, the shim's /app
    assert path == normal_path(given_workspace), said


def _within(words: list[str], argv: list[str]) -> bool:
    return any(argv[at : at + len(words)] == words for at in range(len(argv)))


@SETTINGS
@given(
    word=_WORDS,
    between=_BETWEEN,
    before=_BEFORE,
    prefix=_PREFIX,
    suffix=_SUFFIX,
    verifier_first=st.booleans(),
    shebang=st.sampled_from(["", "#!/bin/bash\n", "#!/usr/bin/env bash\n"]),
    crlf=st.booleans(),
)
def test_the_workspace_read_from_test_sh_is_the_one_bash_passes_or_said_unknown(
    tmp_path_factory, word, between, before, prefix, suffix, verifier_first, shebang, crlf
):
    if between == "=" and word.startswith("\\\n"):
        between = " "
    flag = f"--workspace{between}{word}"
    arguments = ["--verifier /tests/verifier.py", flag] if verifier_first else [flag, "--verifier /tests/verifier.py"]
    command = (
        f"{prefix}python3 /tests/.ng/run_verifier.py {' '.join(arguments)}{suffix}{' }' if prefix == '{ ' else ''}"
    )
    script = shebang + "".join(before) + command + "\n"
    folder = tmp_path_factory.mktemp("bash")
    runs = _bash_runs(folder, script)
    if len(runs) != 1:
        return  # a syntax error bash stopped at, or no run: nothing of the runner's to judge
    _judged(script, runs[0], folder / "tests")


# lines before the runner's that name another verifier where bash passes it nothing
_VERIFIER_BEFORE = st.lists(
    st.sampled_from(
        [
            "# was: --verifier /tests/old.py\n",
            "echo --verifier /tests/old.py\n",
            "echo hint: --verifier=/tests/old.py >&2\n",
            "true # --verifier /tests/old.py\n",
            "cat >/dev/null <<'EOF'\npython3 r.py --verifier /tests/old.py\nEOF\n",
            "V=/tests/old.py\n",
        ]
    ),
    max_size=3,
)


@SETTINGS
@given(
    word=st.builds(
        lambda head, pieces: head + "".join(pieces),
        st.sampled_from(["/tests/", "/tests/", "/tests//", "", "/srv/", "//tests/"]),
        st.lists(st.one_of(_PIECES, st.sampled_from(["v.py", "'my v.py'", "my\\ v.py", '"$V"', "sub/"])), max_size=4),
    ),
    between=_BETWEEN,
    before=_VERIFIER_BEFORE,
    prefix=_PREFIX,
    suffix=_SUFFIX,
)
def test_the_verifier_read_from_test_sh_is_the_one_bash_passes_or_none(
    tmp_path_factory, word, between, before, prefix, suffix
):
    if between == "=" and word.startswith("\\\n"):
        between = " "
    command = f"{prefix}python3 /tests/.ng/run_verifier.py --workspace /app --verifier{between}{word}{suffix}"
    script = "".join(before) + command + _CLOSING.get(prefix, "") + "\n"
    folder = tmp_path_factory.mktemp("bash")
    runs = _bash_runs(folder, script)
    if len(runs) != 1:
        return  # a syntax error bash stopped at, or no run: nothing of the runner's to judge
    named = shim_reads(script)[0]
    try:
        given_verifier = _runner.parse_args(runs[0][1:])["verifier"]
    except _runner.UsageError:
        given_verifier = None  # the runner refuses what bash gave it: it runs no verifier
    said = f"{script!r}: bash passes {runs[0][1:]!r}; the tool says the shim runs {named!r}"
    if named is not None:  # a file claimed must be the one the runner opens
        assert given_verifier is not None, said
        assert normal_path(given_verifier) == normal_path(f"/tests/{named}"), said


# what may set V before the runner's line (or after it), certain or not; and how the runner's line reads it
_V_SETS = st.sampled_from(
    [
        *("V=/tests/v.py\n", "V='/tests/my v.py'\n", "export V=/tests/w.py\n", "A=1 V=/tests/v.py\n"),
        *("V=/tests/*.py\n", "V=/tests/{a,b}.py\n", "V=/tests/v.py:~/x\n", 'V="$X"\n', "V=\n"),
        *("V=/tests/a.py; V=/tests/b.py\n", "V=/tests/v.py &\nwait\n", "V=/tests/v.py | cat\n", "V=/tests/v.py cat\n"),
        *("if true; then\nV=/tests/v.py\nfi\n", "(\nV=/tests/v.py\n)\n", "f() { V=/tests/w.py; }\n", "f\n"),
        *("true && V=/tests/w.py\n", "read -r V </dev/null\n", ": ${V:=/tests/w.py}\n", "eval V=/tests/w.py\n"),
        *("for V in /tests/w.py; do :; done\n", "IFS=/\n", "unset V\n", "V+=x\n", "echo $V ${V} >/dev/null\n"),
        *('"V"=/tests/w.py\n', "cd /\n", "set -e\n", "printf -v V /tests/w.py\n", "declare V=/tests/w.py\n"),
        *("if true; then . ./sets; fi\n", "true && source ./sets\n", '{ eval "$(cat sets)"; }\n', "ls .\n"),
        # a list continued on the next line (which may then not run, or run in a pipeline's subshell)
        *("false &&\n", "true ||\n", "echo x |\n", "false && # maybe\n", "true || ! {\nV=/tests/w.py\n}\n"),
        *("for i in 1 2; do\n", "done\n", "V=/tests/w.py; done\n", "while false; do :; done\n"),
        *("command -p . ./sets\n", "builtin -- source ./sets\n", "time -p source ./sets\n", "A=1 . ./sets\n"),
        *("N=`printf '\\126'`\n", 'printf -v "$N" %s /tests/w.py\n', 'declare "$N=/tests/w.py"\n', 'unset "$N"\n'),
        *('read -r "$N" <<< /tests/w.py\n', 'export "$N=/tests/w.py"\n', "declare -n R=$N\nR=/tests/w.py\n"),
    ]
)


@SETTINGS
@given(
    assigned=st.sampled_from(["", "V=/tests/v.py\n", "V='/tests/my v.py'\n"]),  # a certain one, often
    before=st.lists(_V_SETS, max_size=3),
    after=st.lists(_V_SETS, max_size=1),
    word=st.sampled_from(['"$V"', "$V", "${V}", '"${V}"', "$'V'", '$"V"', '"$V"x', "=$V", '="$V"']),
)
def test_a_verifier_named_by_a_variable_is_the_one_bash_passes_or_none(tmp_path_factory, assigned, before, after, word):
    """``--verifier "$V"``: where the tool reads the value a plain assignment before the runner's line gives
    V, it is the one bash passes; where not, it says the word is made as test.sh runs."""
    between = "" if word.startswith("=") else " "
    command = f"python3 /tests/.ng/run_verifier.py --workspace /app --verifier{between}{word}\n"
    script = assigned + "".join(before) + command + "".join(after)
    runs = _bash_runs(tmp_path_factory.mktemp("bash"), script)
    named, known = shim_reads(script)
    said = f"{script!r}: bash passes {runs!r}; the tool says {named!r}, known: {known}"
    if known and len(runs) == 1:
        try:
            given_verifier = _runner.parse_args(runs[0][1:])["verifier"]
        except _runner.UsageError:
            given_verifier = None
        if named is not None:
            assert given_verifier is not None and normal_path(given_verifier) == normal_path(f"/tests/{named}"), said
        else:  # a file named nowhere in /tests, or none at all
            assert given_verifier is None or not normal_path(given_verifier).startswith("/tests/"), said


# A #! line, from its parts: what the kernel reads as the program ({stub}: a script that writes down its
# arguments; env finds it on PATH) and its one argument, blanks, \r, NULs and lines past the 256 bytes it reads.
_SHEBANGS = st.tuples(
    st.sampled_from([b"#!", b"#!", b"\xef\xbb\xbf#!", b"# !"]),
    st.sampled_from([b"", b" ", b"\t", b" \t ", b" " * 200, b" " * 230, b" " * 260]),
    st.sampled_from([b"{stub}", b"{stub}", b"{stub}\r", b"", b"/usr/bin/env stub", b"/usr/bin/env stub\r"]),
    st.sampled_from([b"", b" ", b"\t", b"\r", b" \r", b"\0", b"  "]),
    st.sampled_from([b"", b"-e", b"a b", b"-x\t y ", b"stub", b"stub\r", b"a\0b", b"x" * 300]),
    st.sampled_from([b"\n", b"\r\n", b"", b"\0\n", b"\n\0"]),
).map(b"".join)


@SETTINGS
@given(first=_SHEBANGS)
def test_the_program_read_from_test_shs_first_line_is_the_one_the_kernel_starts(tmp_path_factory, first):
    folder = tmp_path_factory.mktemp("kernel")
    (folder / "bin").mkdir()
    stub = folder / "bin" / "stub"
    stub.write_text('#!/bin/sh\nprintf \'%s\\0\' "$@" >"$STUB_OUT"\n')
    stub.chmod(0o755)
    test_sh = folder / "test.sh"
    test_sh.write_bytes(first.replace(b"{stub}", os.fsencode(stub)) + b"exit 3\n")
    test_sh.chmod(0o755)
    out = folder / "argv"
    env = {"PATH": f"{folder / 'bin'}:/usr/bin:/bin", "STUB_OUT": str(out)}
    kernel = invocation.test_sh_argv(test_sh, str(test_sh))
    unstartable = invocation.test_sh_unstartable(test_sh)
    said = f"{first!r}: the tool runs {kernel!r}, unstartable {unstartable!r}"
    try:
        ran = subprocess.run([test_sh], env=env, capture_output=True, timeout=30, check=False)
    except OSError as error:
        if error.errno == errno.ENOEXEC:  # the shell that asked runs it: Harbor's bash
            assert kernel == ["bash", str(test_sh)] and unstartable is None, said
        elif error.errno == errno.EACCES:  # a program named "": Harbor's bash exits 126
            assert unstartable is not None and unstartable[1] == 126, said
        else:  # no such program: the tool names one that is not there, or refuses a \r in it
            assert error.errno == errno.ENOENT, error
            assert unstartable is not None or not os.path.exists(kernel[0]), said
        return
    if not out.exists():  # env found no such program (127): one with a \r refused, any other not here either
        assert ran.returncode == 127 and (unstartable is not None or not shutil.which(kernel[1], path=env["PATH"]))
        return
    arguments = out.read_bytes().split(b"\0")[:-1]
    program = kernel[1:] if kernel[0] == "/usr/bin/env" else kernel  # env runs its argument from PATH
    if program is not kernel and not shutil.which(program[0], path=os.pathsep.join(invocation._IMAGE_PATH)):
        # env found the stub on this test's PATH; the sandbox's (the image's) has none: 127 there
        assert unstartable is not None and unstartable[1] == 127, said
        return
    assert unstartable is None, said
    assert os.fsencode(program[0]) in (os.fsencode(stub), b"stub"), said
    assert [os.fsencode(word) for word in program[1:]] == arguments, f"{said}; the kernel passed {arguments!r}"


# env -S's string, from its parts: what may stand before the command (options, assignments, a comment),
# the command (quoted, escaped, split), what follows it; stubs on PATH are named stub, "st ub", 'st"ub'
_ENV_BEFORE = st.sampled_from(
    [
        *("-v", "-u X", "-uX", "-vu X", "-C /", "--chdir=/", "--unset X", "--debug", "--", "-0", "-x", "--ch=/"),
        *("--debug=1", "--default-signal", "--ignore-signal=INT", "--null", "-"),
        *("A=1", 'A="a b"', "'A=a b'", "A=\\_b", "=x", "${HOME}", "A=${HOME}", "#x", "\\#x", "\\c", "\\q"),
        *('"unclosed', "-S stub", "-S'st ub'", "--split-string=stub", "-S", '""', "x\\_y"),
        # what changes where env looks for the command, or a value env refuses
        *("PATH=/nonexistent", "-i", "-u PATH", "-C /nonexistent", "--chdir=/nonexistent", "-P /", "-a x"),
        *("-u=X", "--unset=", "-uA=#", "--unset=PATH"),
    ]
)
_ENV_COMMANDS = st.sampled_from(
    ["stub", '"stub"', "'stub'", 'st"u"b', "stub\\_-e", '"st ub"', "st\\_ub", "'st\"ub'", 'st\\"ub', "s${X}tub"]
)
_ENV_AFTER = st.sampled_from(["", "-e", "'a b'", '"\\t"', "\\c tail", "# note", "${HOME}", "\\q", "'"])
_ENV_BLANK = st.sampled_from([" ", "\t", "  ", "\\_"])


@SETTINGS
@given(
    before=st.lists(_ENV_BEFORE, max_size=3),
    command=_ENV_COMMANDS,
    after=_ENV_AFTER,
    blank=_ENV_BLANK,
)
def test_the_command_env_s_runs_is_the_one_read_from_the_shebang(tmp_path_factory, before, command, after, blank):
    """A ``#!/usr/bin/env -S ...`` line against the real env: the command the tool reads from it (quotes,
    escapes, options, assignments as coreutils' env takes them) is the one env runs, or the tool names none."""
    folder = tmp_path_factory.mktemp("env")
    (folder / "bin").mkdir()
    out = folder / "ran"
    for name in ("stub", "st ub", 'st"ub'):
        stub = folder / "bin" / name
        stub.write_text(f"#!/bin/sh\nprintf %s {shlex.quote(name)} >{shlex.quote(str(out))}\n")
        stub.chmod(0o755)
    argument = "-S" + blank.join([*before, command, *([after] if after else [])])
    # as the kernel starts #!/usr/bin/env ARGUMENT: env, the argument, the script (here none, where env left
    # no command of its own and would run test.sh, whose #! line starts env again, for ever)
    env = {"PATH": f"{folder / 'bin'}:/usr/bin:/bin", "X": "", "HOME": "/root"}
    ran = subprocess.run(
        ["/usr/bin/env", argument, str(folder / "no-test.sh")], env=env, cwd=folder, capture_output=True, timeout=30
    )
    read = invocation._env_command(argument)
    env_ran = out.read_text() if out.exists() else None
    said = f"{argument!r}: env ran {env_ran!r} ({ran.returncode}); the tool reads {read!r}"
    if read in ("stub", "st ub", 'st"ub'):  # a command said found on PATH: env runs it (127 or 125 disagree)
        assert out.exists() and out.read_text() == read, said
    elif read is not None:  # said missing: env finds none
        assert not out.exists() and ran.returncode == 127, said


@pytest.mark.parametrize(
    "prefix",
    [
        *SH_PREFIXES,
        *("if ! ", "while ! ", "time ", "! ", "timeout 300 ", "timeout -k 5 --signal=KILL 300 ", "env -u HOME X=1 "),
        *("nice -n 5 ", "nohup ", "exec -a name ", "xargs -P 2 ", "/usr/bin/env ", "env -- "),
        *("command -v ", "echo ", ": ", "true || "),  # pip not run: said installing nothing
    ],
)
def test_an_install_line_is_found_behind_what_bash_runs_it_behind(tmp_path, prefix):
    """test.sh's install commands against bash: a stub pip on PATH writes down its words; the tool reads
    a line as installing the module exactly where bash runs pip with it (``true || pip install X`` aside:
    what test.sh may run counts)."""
    (tmp_path / "bin").mkdir()
    stub = tmp_path / "bin" / "pip"
    stub.write_text('#!/bin/sh\nprintf \'%s\\n\' "$@" >>"$STUB_OUT"\n')
    stub.chmod(0o755)
    test_sh = tmp_path / "tests" / "test.sh"
    test_sh.parent.mkdir()
    test_sh.write_text(f"{prefix}pip install vtui-fuzzy-scores{_CLOSING.get(prefix, '')}\n")
    out = tmp_path / "argv"
    env = {"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin", "STUB_OUT": str(out)}
    subprocess.run(["bash", test_sh], env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=30, check=False)
    ran = out.exists() and out.read_text().split() == ["install", "vtui-fuzzy-scores"]
    assert bool(install_lines([test_sh], "vtui_fuzzy_scores")) == (ran or prefix == "true || "), (prefix, ran)
