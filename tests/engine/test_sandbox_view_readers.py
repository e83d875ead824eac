"""The readers of the task's files behind the sandbox's view (test.sh's
workspace path, the Dockerfile's WORKDIR, the lines that name /app): files
the tool did not write, so any bytes at all give an answer, never an exception."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import utf8_text
from verifier_tui.engine.sandbox.view import (
    APP,
    image_workdir,
    normal_path,
    sandbox_path_lines,
    workspace_given,
    workspace_path,
)

ANY_TEXT = st.one_of(st.binary(max_size=2000), utf8_text(max_size=2000).map(str.encode))


@settings(max_examples=150)
@given(ANY_TEXT)
def test_any_test_sh_gives_an_absolute_workspace_path(tmp_path_factory, data):
    tests = tmp_path_factory.mktemp("tests")
    (tests / "test.sh").write_bytes(data)
    path = workspace_path(tests)
    assert path.startswith("/") and path != "/" and "\n" not in path


@settings(max_examples=150)
@given(ANY_TEXT)
def test_any_dockerfile_gives_an_absolute_workdir(tmp_path_factory, data):
    task = tmp_path_factory.mktemp("task")
    (task / "environment").mkdir()
    (task / "environment" / "Dockerfile").write_bytes(data)
    workdir = image_workdir(task)
    assert workdir.startswith("/") and workdir == os.path.normpath(workdir)


@settings(max_examples=100)
@given(ANY_TEXT)
def test_any_verifier_source_gives_lines_of_its_own(tmp_path_factory, data):
    tests = tmp_path_factory.mktemp("tests")
    (tests / "verifier.py").write_bytes(data)
    for line in sandbox_path_lines(tests, tests / "verifier.py"):
        where, _, path = line.rpartition(" ")
        assert where.startswith(str(tests / "verifier.py") + ":") and path in ("/app", "/tests", "/logs/verifier")


def test_the_readers_on_the_shapes_they_are_for(tmp_path):
    (tmp_path / "test.sh").write_text("# --workspace /nope\npython3 run.py --workspace=/srv/ws --verifier x\n")
    assert workspace_path(tmp_path) == "/srv/ws"
    (tmp_path / "test.sh").write_text('exec "$PY" run.py --workspace "$WS"\n')
    assert workspace_path(tmp_path) == "/app"  # a variable: not known, the shim's default
    # a quote inside the other kind is part of the path, as sh reads it (it was read up to the quote)
    (tmp_path / "test.sh").write_text('exec "$PY" run.py --workspace \'/srv/x"y\' --verifier x\n')
    assert workspace_path(tmp_path) == '/srv/x"y'
    (tmp_path / "test.sh").write_text('exec "$PY" run.py \\\n  --workspace "/srv/it\'s here";echo\n')
    assert workspace_path(tmp_path) == "/srv/it's here"
    # sh takes # for a comment only where a word starts, and a comment's \ continues nothing
    (tmp_path / "test.sh").write_text("exec python3 run.py --workspace /srv/a#b # --workspace /no\n")
    assert workspace_path(tmp_path) == "/srv/a#b"
    (tmp_path / "test.sh").write_text("# see --workspace in the docs \\\nexec python3 run.py --workspace /srv/ws\n")
    assert workspace_path(tmp_path) == "/srv/ws"
    # a backslash and a newline inside single quotes are the path's own (bash keeps them): not guessed
    (tmp_path / "test.sh").write_text("exec python3 run.py --workspace '/srv/a\\\nb'\n")
    assert workspace_path(tmp_path) == "/app"
    # sh reads no quotes in a heredoc's body: the agent's ' there closes nothing, the shim's --workspace stands
    shim = (Path(__file__).parents[2] / "examples/tasks/hello-file/tests/test.sh").read_text()
    notes = "cat > /tmp/notes.txt <<EOF\nthe agent's files are checked in /srv/ws\nEOF\n"
    shim = shim.replace("set -- ", notes + "set -- ").replace("--workspace /app", "--workspace /srv/ws")
    (tmp_path / "test.sh").write_text(shim.replace("exec ", "echo 'verifying' >&2\nexec "))
    assert workspace_path(tmp_path) == "/srv/ws"
    # a CRLF test.sh: bash's delimiter word holds the \r, and so does the body's line that ends the heredoc
    (tmp_path / "test.sh").write_text(
        "cat <<EOF\r\nnotes\r\nEOF\r\nexec python3 run.py --workspace /srv/ws --verifier x\r\n", newline=""
    )
    assert workspace_path(tmp_path) == "/srv/ws"
    # a quote that never closes is that line's alone
    (tmp_path / "test.sh").write_text("echo it's\nexec python3 run.py --workspace /srv/ws\n")
    assert workspace_path(tmp_path) == "/srv/ws"
    os.mkfifo(tmp_path / "environment-fifo")
    (tmp_path / "environment").mkdir()
    os.symlink(tmp_path / "environment-fifo", tmp_path / "environment" / "Dockerfile")
    assert image_workdir(tmp_path) == "/"  # a link to a FIFO: never opened, Docker's default


@pytest.mark.parametrize(
    "arithmetic",
    [
        "limit=$(( (((1))) << 20 ))\n",  # three levels of parentheses inside
        "limit=$((1\n  << 20))\n",  # over two lines
        "(( n = (1 +\n ((2))) << 3 ))\n",
        "echo $(( ')' + 1 << 2 ))\n",  # a quoted parenthesis counts for nothing
        "x=$(( `echo 1 ))` << 2 ))\n",  # nor a backquoted one
        "x=$(( $(echo 1 # one (\n) << 2 ))\n",  # nor one in a comment of a command in it
    ],
)
def test_a_shift_in_arithmetic_starts_no_heredoc_however_it_is_nested_or_broken(tmp_path, arithmetic):
    """bash reads `$((...))` and `((...))` to their matching `))`, over lines and through any depth of
    parentheses, and a `<<` inside is a shift: the reader took it for a heredoc past two levels or a
    line break, skipped the rest of test.sh, and laid the workspace at /app. A review after: a
    parenthesis in backquotes, or in a comment of a `$(...)` inside, still counted."""
    (tmp_path / "test.sh").write_text(f"{arithmetic}exec python3 run.py --workspace /srv/ws --verifier x\n")
    said = subprocess.run(["bash", "-n", tmp_path / "test.sh"], capture_output=True, text=True)
    assert said.returncode == 0, said.stderr  # bash parses it, as the test.sh of a task would be
    assert workspace_path(tmp_path) == "/srv/ws"


@pytest.mark.parametrize(
    "subshells",
    [
        "(((( echo " + "x" * 400 + " >/dev/null ) ) ) )\n",  # each (( read to its ) and found no arithmetic
        "((( (( echo a ) ) ) ) )\n" * 40,
    ],
)
def test_subshells_in_subshells_lose_no_later_workspace(tmp_path, subshells):
    """A `((` that closes as no arithmetic is read again from its second `(`, as bash does: the
    reader bounded all those readings together, and once a long line of them had spent the bound
    it took every later `((` for one never closed, stopped, and laid the workspace at /app."""
    (tmp_path / "test.sh").write_text(f"{subshells}exec python3 run.py --workspace /srv/ws\n")
    stub = (tmp_path / "test.sh").read_text().replace("exec python3 run.py --workspace", "printf '%s\\n'")
    said = subprocess.run(["bash", "-c", stub], capture_output=True, text=True, check=True)
    assert workspace_path(tmp_path) == said.stdout.splitlines()[-1] == "/srv/ws"


@pytest.mark.parametrize(
    "written",
    [
        *("'/srv/$ws'", '"/srv/\\$ws"', "/srv/\\$ws", "'/srv/`ws`'", '"/srv/\\`ws\\`"', "/srv/ws$", '"/srv/ws$"'),
        *("/srv/$é", '"/srv/$日本"', "/srv/$ǅx"),  # bash's names are ASCII letters, digits and _
    ],
)
def test_a_dollar_or_backquote_that_sh_keeps_is_part_of_the_path(tmp_path, written):
    """A `$` or backquote in single quotes, escaped, or with nothing after it to expand is passed as it
    is: the reader took any for a variable, never guessed the path, and laid the workspace at /app. A
    review after: a $ before a letter not ASCII (`$é`, `$日本`) was still taken for a variable."""
    (tmp_path / "test.sh").write_text(f"exec python3 run.py --workspace {written} --verifier x\n")
    said = subprocess.run(["bash", "-c", f"printf %s {written}"], capture_output=True, text=True, check=True)
    assert workspace_path(tmp_path) == said.stdout


def test_a_path_sh_expands_hides_no_plain_one_after_it_on_its_line(tmp_path):
    """The first --workspace of a line whose path sh expands ended the reading of that line: an
    `echo` naming "$HOME" before the runner's own --workspace /srv/ws on the same line laid the
    workspace at /app with a note that its path is known only as test.sh runs."""
    line = 'echo would pass --workspace "$HOME" >&2; exec python3 run.py --workspace /srv/ws\n'
    (tmp_path / "test.sh").write_text(line)
    stub = line.replace("exec python3 run.py --workspace", "printf '%s\\n'")
    said = subprocess.run(["bash", "-c", stub], capture_output=True, text=True, check=True)
    assert workspace_given(tmp_path) == (said.stdout.strip(), "") == ("/srv/ws", "")


@pytest.mark.parametrize(
    ("line", "given"),
    [
        ('set -- "$@" --workspace "$WS" || echo hint: try --workspace /srv/example', ("/app", '"$WS"')),
        ("python3 run.py --workspace=/srv/a; echo --workspace /srv/b", ("/srv/a", "")),
        ('printf "%s" --workspace /srv/c && exec python3 run.py --workspace /srv/d', ("/srv/d", "")),
        ("echo --workspace /srv/b", ("/app", "")),
        # a review after: echo not first in its command
        ('--workspace "$WS"; then echo hint: try --workspace /srv/example; fi', ("/app", '"$WS"')),
        ('--workspace "$WS" || { echo try --workspace /srv/example; }', ("/app", '"$WS"')),
        ('--workspace "$WS" || >&2 echo try --workspace /srv/example', ("/app", '"$WS"')),
    ],
)
def test_a_path_a_command_only_says_is_no_workspace(tmp_path, line, given):
    """A review after: with the line read on past a path sh expands, a hint test.sh prints after the
    runner's command (`... --workspace "$WS" || echo hint: try --workspace /srv/example`) laid the
    workspace at the hint's path: echo and printf pass no --workspace on, their words are not read."""
    (tmp_path / "test.sh").write_text(line + "\n")
    path, note = workspace_given(tmp_path)
    assert path == given[0] and (given[1] in note if given[1] else note == ""), (path, note)


@pytest.mark.parametrize(
    "written",
    ["/srv/w*", "/sr?/ws", "/srv/[wx]s", "/app*", '"/srv/"w*'],
)
def test_a_workspace_pattern_is_said_to_be_the_containers_not_taken_as_written(tmp_path, written):
    """``--workspace /app*``: the shell test.sh runs in matches a pattern against the container's files
    (pathname expansion, at its run), which are not here; the reader took the pattern as the path,
    a folder named ``/app*`` the runner would never be given where anything matches. Quoted or escaped,
    it is the path as written, as bash passes it."""
    line = written if written.startswith("--") else f"--workspace {written}"
    (tmp_path / "test.sh").write_text(f"exec python3 run.py {line}\n")
    path, note = workspace_given(tmp_path)
    assert path == APP and f"tests/test.sh passes {line}, a pattern the container's shell matches" in note, note
    for quoted in (shlex.quote("/srv/w*"), '"/srv/w*"', "/srv/w\\*"):
        (tmp_path / "test.sh").write_text(f"exec python3 run.py --workspace {quoted}\n")
        said = subprocess.run(["bash", "-c", f"printf %s {quoted}"], capture_output=True, text=True, check=True)
        assert workspace_given(tmp_path) == (said.stdout, "") == ("/srv/w*", "")


@pytest.mark.parametrize("written", ["--workspace=/srv/w*", "--workspace=/sr?/ws", "--workspace=/srv/[wx]s"])
def test_a_pattern_after_the_equals_sign_is_passed_as_written(tmp_path, written):
    """``--workspace=/app*``: bash matches the whole word, whose first part is a folder named
    ``--workspace=`` in its working directory; with none there, bash passes the word as written and the
    runner takes ``/app*`` as the path. The reader laid the workspace at ``/app`` with a pattern's note."""
    (tmp_path / "test.sh").write_text(f"exec python3 run.py {written}\n")
    said = subprocess.run(["bash", "-c", f"printf %s {written}"], cwd=tmp_path, capture_output=True, text=True)
    assert workspace_given(tmp_path) == (said.stdout.partition("=")[2], "") == (written.partition("=")[2], "")


@pytest.mark.parametrize(
    "written",
    ["/srv/{a,b}", "/srv/{a,'b c'}", "--workspace=/srv/{a,b}", "/srv/{x,}", "/srv/{1..3}", "/srv/{a,{b,c}}"],
)
def test_a_workspace_in_braces_bash_expands_is_no_path_as_written(tmp_path, written):
    """``--workspace /app/{src,lib}``: bash (which runs test.sh: Harbor's ``bash -c`` for one without a #!
    line) expands it into two words, and the runner takes one workspace and refuses the second (exit 2,
    no reward). The reader took ``/app/{src,lib}`` as the path. A run of the runner alone is refused,
    naming the words bash passes where they are worked out here (as bash's own expansion gives them)."""
    from verifier_tui.engine.invocation import test_sh_refusals

    line = written if written.startswith("--") else f"--workspace {written}"
    (tmp_path / "test.sh").write_text(f"exec python3 run.py {line}\n")
    path, note = workspace_given(tmp_path)
    assert path == APP and note.startswith(f"tests/test.sh passes {line}, "), note
    refused = test_sh_refusals(tmp_path / "test.sh", via_test_sh=False)[1]
    assert refused is not None and refused.startswith(note.partition(": this run's")[0]), refused
    assert "the runner alone is no model of it" in refused and "#! line" not in refused, refused
    words = subprocess.run(["bash", "-c", f"printf '%s\\0' {written}"], capture_output=True, text=True, check=True)
    expanded = words.stdout.split("\0")[:-1]
    if "," in written and written.count("{") == 1:  # one list: its words are said
        assert f"which bash expands into {len(expanded)} words ({shlex.join(expanded)})" in refused, refused
        assert "refuses the rest (exit 2), so Harbor finds no reward" in refused, refused
    else:
        assert len(expanded) > 1 and "bash expands (brace expansion) into words not worked out here" in refused
    # braces bash keeps as written (no comma, quoted, escaped) are the path's own
    for kept in ("/srv/{a}", "'/srv/{a,b}'", "/srv/\\{a,b}", '/srv/{a",b"}'):
        (tmp_path / "test.sh").write_text(f"exec python3 run.py --workspace {kept}\n")
        said = subprocess.run(["bash", "-c", f"printf %s {kept}"], capture_output=True, text=True, check=True)
        assert workspace_given(tmp_path) == (said.stdout, ""), kept
        assert test_sh_refusals(tmp_path / "test.sh", via_test_sh=False) == (None, None)


@pytest.mark.parametrize(
    "written", ["/srv/{$x,b}", '/srv/{a,"$x"}', "/srv/{`pwd`,b}", "/srv/{${x},b}", "/srv/{$(pwd),b}", "/srv/{$((1)),b}"]
)
def test_braces_holding_a_variable_are_braces_still(tmp_path, written):
    """``--workspace /app/{$x,b}``: bash expands the braces before the variable, passing the runner two
    words (it refuses the second, exit 2). The reader saw the $ first and laid the workspace at /app,
    scoring the runner's 1.0. Its words hang on the variable: said as not worked out here. A ``${x,A}``
    is a variable's case changed, no braces, as bash reads it."""
    from verifier_tui.engine.invocation import test_sh_refusals

    (tmp_path / "test.sh").write_text(f"exec python3 run.py --workspace {written}\n")
    words = subprocess.run(["bash", "-c", f"x=a; printf '%s\\0' {written}"], capture_output=True, text=True)
    assert len(words.stdout.split("\0")[:-1]) == 2, words
    refused = test_sh_refusals(tmp_path / "test.sh", via_test_sh=False)[1]
    assert refused is not None and "bash expands (brace expansion) into words not worked out here" in refused
    (tmp_path / "test.sh").write_text("exec python3 run.py --workspace /srv/${x,A}\n")
    assert test_sh_refusals(tmp_path / "test.sh", via_test_sh=False) == (None, None)
    assert "a path known only as test.sh runs" in workspace_given(tmp_path)[1]


@pytest.mark.parametrize("written", ["{/srv/ws,}", "{,/srv/ws}", "{,,/srv/ws}", "--workspace={/srv/ws,x}"])
def test_braces_whose_empty_words_bash_drops_leave_one_path(tmp_path, written):
    """``--workspace {/app,}``: bash drops the empty word its braces make (unquoted, it is no word) and
    passes the runner one path; the reader refused the run as two words. Quoted (``{"",/app}``), the
    empty word stays a word, as bash passes it."""
    from verifier_tui.engine.invocation import test_sh_refusals

    line = written if written.startswith("--") else f"--workspace {written}"
    (tmp_path / "test.sh").write_text(f"exec python3 run.py {line}\n")
    words = subprocess.run(["bash", "-c", f"printf '%s\\0' {line}"], capture_output=True, text=True).stdout
    expanded = words.split("\0")[:-1]
    if written.startswith("--"):  # --workspace= takes the braces' words whole: two flags, no empty one
        assert len(expanded) == 2 and test_sh_refusals(tmp_path / "test.sh", via_test_sh=False)[1] is not None
        return
    assert test_sh_refusals(tmp_path / "test.sh", via_test_sh=False) == (None, None)
    assert workspace_given(tmp_path) == (expanded[-1], "") == ("/srv/ws", "") and len(expanded) == 2
    (tmp_path / "test.sh").write_text('exec python3 run.py --workspace {"",/srv/ws}\n')
    refused = test_sh_refusals(tmp_path / "test.sh", via_test_sh=False)[1]
    assert refused is not None and '--workspace {"",/srv/ws}' in refused, refused


def test_a_command_output_over_lines_is_read_to_its_close(tmp_path):
    """A ``$(`` whose ``)`` is on a later line is one word with what precedes it, as bash reads it: the
    ``--workspace`` before it on its line stays the path, and a ``--workspace`` it is part of is known
    only as test.sh runs (it hid the line's workspace: the run laid /app and scored otherwise)."""
    (tmp_path / "test.sh").write_text(
        'set -- --workspace /srv/ws $(\n  echo x | head -c0\n)\nexec python3 run.py "$@"\n'
    )
    assert workspace_given(tmp_path)[0] == "/srv/ws"
    (tmp_path / "test.sh").write_text("exec python3 run.py --workspace /srv/$(\n  echo w\n)\n")
    assert "a path known only as test.sh runs" in workspace_given(tmp_path)[1]


@pytest.mark.parametrize("shebang", ["#!/bin/dash", "#!/usr/bin/env dash", "#!/bin/sh", "#!/bin/bash", "#!/bin/perl"])
def test_braces_are_the_shell_the_sh_line_names(tmp_path, shebang):
    """Harbor runs test.sh as a file, so its #! line's program reads it: dash (and sh where it is dash,
    as this machine's is, whose programs the view shows) passes ``/srv/{a,b}`` as written. The reader
    refused the run under any #! line, with "if /bin/dash ... is bash". The note says which shell expands."""
    from verifier_tui.engine.invocation import test_sh_refusals, workspace_laid

    (tmp_path / "test.sh").write_text(f"{shebang}\nexec python3 run.py --workspace /srv/{{a,b}}\n")
    name = os.path.basename(os.path.realpath(shebang.split()[-1].removeprefix("#!")))
    if "dash" in shebang or name == "dash":
        said = subprocess.run(["dash", "-c", "printf %s /srv/{a,b}"], capture_output=True, text=True, check=True)
        assert workspace_laid(tmp_path) == (said.stdout, "") == ("/srv/{a,b}", "")
        assert test_sh_refusals(tmp_path / "test.sh", via_test_sh=False) == (None, None)
        return
    shell = "bash" if name == "bash" else shebang.removeprefix("#!")
    path, note = workspace_laid(tmp_path, via_test_sh=True)
    assert path == APP and (f"/srv/{{a,b}}, which {shell} " in note or f"braces {shell}, " in note), note
    refused = test_sh_refusals(tmp_path / "test.sh", via_test_sh=False)[1]
    assert refused is not None and refused.startswith(note.partition(": this run's")[0]), refused
    assert ("refuses the rest (exit 2)" in refused) == (shell == "bash"), refused


@pytest.mark.parametrize("ending", ["", " --verifier x", " # a comment"])
def test_a_crlf_test_sh_passes_the_carriage_return_as_bash_does(tmp_path, ending):
    """A CRLF test.sh whose path is the last word of its line: bash passes the \\r as the path's last
    character (it is no blank to sh), where the reader took the path without it."""
    (tmp_path / "test.sh").write_text(f"exec python3 run.py --workspace /srv/ws{ending}\r\n", newline="")
    line = (tmp_path / "test.sh").read_bytes().replace(b"exec python3 run.py --workspace", b"printf '%s\\0'")
    said = subprocess.run(["bash", "-c", line], capture_output=True, check=True).stdout.split(b"\0")[0].decode()
    assert workspace_path(tmp_path) == said == ("/srv/ws\r" if not ending else "/srv/ws")


# sh's ways to write one word: single quotes, double quotes (a backslash before $, `, " and itself),
# a backslash before each character
_QUOTINGS = [
    shlex.quote,
    lambda path: '"' + re.sub(r'([$`"\\])', r"\\\1", path) + '"',
    lambda path: "".join("\\" + c for c in path),
    # unquoted, a backslash before each character sh would take apart (a # inside a word stays)
    lambda path: re.sub(r"([^\w/.,#+-])", r"\\\1", path),
]
# a comment (which may pass its own --workspace) before the command, ended by a \ or not, and after it
_COMMENTS = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=20) | st.just(
    " see --workspace /srv/not-this \\"
)
# a heredoc before the command, its delimiter quoted or not, <<- taking the body's leading tabs: sh reads no
# quote, comment nor --workspace in its body; or a shift in arithmetic, which starts no heredoc
_ARITHMETIC = ["limit=$((64 << 20))\n", "(( n <<= 2 ))\n", "echo $(( (1 << 3) | 1 ))\n", "x=$(( (((1))) <<\n 2 ))\n"]
_HEREDOCS = st.sampled_from(_ARITHMETIC) | st.builds(
    lambda opener, lines: (
        f"cat >/tmp/notes <<{opener}\n" + "".join(line + "\n" for line in lines) + "\tEOF\n"[opener[0] != "-" :]
    ),
    st.sampled_from(["EOF", "'EOF'", '"EOF"', "\\EOF", "-EOF", "- 'EOF'"]),
    st.lists(
        st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E) | st.sampled_from("\t'\"#\\"), max_size=20)
        .map(str.strip)
        .filter(lambda line: line.lstrip("\t") != "EOF")
        | st.just("it's --workspace /srv/not-this"),
        max_size=3,
    ),
)


@settings(max_examples=200, deadline=None)
@given(
    st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E) | st.sampled_from("éß中"), max_size=30),
    st.sampled_from(_QUOTINGS),
    st.sampled_from([" ", "="]),
    _COMMENTS,
    _COMMENTS,
    _HEREDOCS,
)
def test_a_quoted_workspace_is_read_as_sh_reads_it(tmp_path_factory, tail, quoting, between, before, after, heredoc):
    path = "/" + tail
    tests = tmp_path_factory.mktemp("tests")
    command = f'exec "$PY" run.py --workspace{between}{quoting(path)} --verifier x #{after}'
    (tests / "test.sh").write_text(f"#{before}\n{heredoc}{command}\n")
    # each quoting keeps a $ or ` as it is: a path like any other
    known = normal_path(path) != "/"
    assert workspace_path(tests) == (normal_path(path) if known else APP)


@pytest.mark.parametrize(
    "flag",
    [
        "--workspace >/dev/null /srv/ws",
        "--workspace 2>/dev/null /srv/ws",
        "2>&1 --workspace /srv/ws",
        "--workspace</dev/null /srv/ws",
    ],
)
def test_a_redirection_between_the_flag_and_its_path_is_none_of_the_runners_words(tmp_path, flag):
    """``--workspace >/dev/null /srv/ws``: sh takes a redirection and its file out of the words it passes,
    and the runner gets ``--workspace /srv/ws``. The reader took the redirection's file for the path (the
    run laid the workspace at /dev/null), or ``2`` of ``2>`` for it, and laid it at /app with nothing said."""
    (tmp_path / "test.sh").write_text(f"exec python3 run.py {flag} --verifier x\n")
    stub = f"runner() {{ printf '%s\\0' \"$@\" >{tmp_path / 'argv'}; }}; runner {flag}"
    subprocess.run(["bash", "-c", stub], check=True)
    assert (tmp_path / "argv").read_text().split("\0") == ["--workspace", "/srv/ws", ""]
    assert workspace_given(tmp_path) == ("/srv/ws", "")


@pytest.mark.parametrize("written", ["~", "~/ws", "~root/ws", "~+/ws", "--workspace=~/ws"])
def test_a_workspace_starting_with_a_tilde_is_known_only_as_test_sh_runs(tmp_path, written):
    """``--workspace ~/ws``: bash makes a word that starts with an unquoted ``~`` a home folder (the
    container's user's: ``/root/ws`` under Harbor's root), where the reader saw no absolute path and laid
    the workspace at /app with nothing said. After ``=`` bash keeps it, and quoted it is the path's own."""
    line = written if written.startswith("--") else f"--workspace {written}"
    (tmp_path / "test.sh").write_text(f"exec python3 run.py {line}\n")
    home = subprocess.run(
        ["bash", "-c", f"printf %s {written}"], capture_output=True, text=True, check=True, env={"HOME": "/root"}
    )
    path, note = workspace_given(tmp_path)
    if written.startswith("--"):
        assert home.stdout == written and (path, note) == (APP, "")  # not absolute: the shim's /app
    else:
        assert home.stdout.startswith("/") and home.stdout != written
        assert path == APP and f"passes {line}, a path known only as test.sh runs" in note, note
    (tmp_path / "test.sh").write_text("exec python3 run.py --workspace /srv/'~'\n")
    assert workspace_given(tmp_path) == ("/srv/~", "")


@pytest.mark.parametrize("written", ["/srv/{a,{b}}", "/srv/{{a},b}", "/srv/{{a},{b}}", "/srv/{+1..2}", "/srv/{{a,b}"])
def test_braces_bash_expands_around_braces_it_keeps_are_no_path_as_written(tmp_path, written):
    """``--workspace /srv/{a,{b}}``: bash expands the outer braces (a comma inside them, at any depth)
    into two words, ``/srv/a`` and ``/srv/{b}``, and ``{+1..2}`` is a sequence as ``{1..2}`` is; the reader
    looked only for braces with no brace inside and took the word as the path, where the runner refuses
    the second word (exit 2, no reward)."""
    from verifier_tui.engine.invocation import test_sh_refusals

    (tmp_path / "test.sh").write_text(f"exec python3 run.py --workspace {written}\n")
    words = subprocess.run(["bash", "-c", f"printf '%s\\0' {written}"], capture_output=True, text=True, check=True)
    assert len(words.stdout.split("\0")[:-1]) == 2
    path, note = workspace_given(tmp_path)
    assert path == APP and note.startswith(f"tests/test.sh passes --workspace {written}, "), note
    refused = test_sh_refusals(tmp_path / "test.sh", via_test_sh=False)[1]
    assert refused is not None and "the runner alone is no model of it" in refused, refused


def test_a_workspace_holding_a_line_break_is_said_not_laid(tmp_path):
    """``--workspace '/srv/a`` and ``b'`` on the next line: bash passes the runner one path holding a
    line break, which the reader did not take (rightly: no view lays it), but it laid the workspace at
    /app with nothing said, as though test.sh passed none."""
    (tmp_path / "test.sh").write_text("exec python3 run.py --workspace '/srv/a\nb' --verifier x\n")
    said = subprocess.run(["bash", "-c", "printf %s '/srv/a\nb'"], capture_output=True, text=True, check=True)
    assert said.stdout == "/srv/a\nb"
    path, note = workspace_given(tmp_path)
    assert path == APP and note.startswith("tests/test.sh passes --workspace '/srv/a\\nb', a path holding a line break")
