"""Interpreters and dependencies: a module the interpreter lacks,
an interpreter the shim refuses, a coroutine never awaited, a tests/ module
that shadows the standard library. Real interpreters, the real runner."""

from __future__ import annotations

import subprocess
import time

import pytest

from tests.helpers.tasks import HANG_GUARD_S, PY, make_task, python_or_skip, write
from verifier_tui.engine import diagnosis
from verifier_tui.engine.diagnosis import InstallLine, install_lines, missing_module, shadow_text, shadows
from verifier_tui.engine.model import Outcome
from verifier_tui.engine.session import Options, Session
from verifier_tui.engine.task.sh_words import sh_commands


def run(task_dir, **options):
    with Session(task_dir, Options(**{"python": PY, **options})) as session:
        return session.run()


# ---------------------------------------------------------------------------
# A third-party module the interpreter lacks

NEEDS_PACKAGE = """\
import vtui_fuzzy_scores

def verify(workspace):
    return vtui_fuzzy_scores.score(workspace)
"""


def test_a_missing_module_names_the_tasks_install_lines_and_python(tmp_path):
    task_dir = make_task(tmp_path / "t", NEEDS_PACKAGE)
    write(
        task_dir / "environment" / "Dockerfile",
        "FROM python:3.11-slim\n# vtui_fuzzy_scores is pinned below\nRUN pip install numpy vtui-fuzzy-scores==1.2\n",
    )
    write(task_dir / "tests" / "requirements.txt", "requests\nvtui_fuzzy_scores>=1.0\n")
    result = run(task_dir)
    assert result.outcome is Outcome.VERIFIER_RAISED
    note = next(n for n in result.notices if "vtui_fuzzy_scores" in n)
    assert f"the verifier imports vtui_fuzzy_scores, which {PY} does not have" in note
    assert "environment/Dockerfile:3 `RUN pip install numpy vtui-fuzzy-scores==1.2`" in note
    assert "tests/requirements.txt:2 `vtui_fuzzy_scores>=1.0`" in note
    assert "Dockerfile:2" not in note  # a comment installs nothing
    assert "--python EXE" in note


def test_a_pass_on_a_package_of_the_tools_own_environment_is_said(tmp_path):
    """Run with the tool's own interpreter (the README's venv, activated), a verifier importing
    rich scores 1.0; the task's image (python:3.12-slim) lacks rich, so Harbor would fail it."""
    task_dir = make_task(tmp_path / "t", "import rich\n\ndef verify(workspace):\n    return 1.0\n")
    write(task_dir / "environment" / "Dockerfile", "FROM python:3.12-slim\n")
    result = run(task_dir)
    assert result.verdict.rewards is not None
    note = next((n for n in result.notices if "own environment" in n), None)
    assert note is not None and "the verifier's files import rich, found in verifier-tui's own environment" in note
    assert "--python EXE" in note
    # a line that installs it: the image has it, nothing to say
    write(task_dir / "environment" / "Dockerfile", "FROM python:3.12-slim\nRUN pip install rich\n")
    assert not [n for n in run(task_dir).notices if "own environment" in n]


def own_environment_notes(result):
    return [n for n in result.notices if "own environment" in n]


@pytest.mark.parametrize(
    ("source", "installs"),
    [("import jinja2\n", "jinja2"), ("from rich.markdown import Markdown\n", "rich")],
    ids=["jinja2-markupsafe", "rich-markdown_it"],
)
def test_a_package_the_image_installs_names_none_of_its_own_dependencies(tmp_path, source, installs):
    """jinja2 imports markupsafe, rich.markdown imports markdown_it and mdurl: pip installs them
    with the package the Dockerfile names, so only what the task's files import is judged."""
    task_dir = make_task(tmp_path / "t", source + "\ndef verify(workspace):\n    return 1.0\n")
    write(task_dir / "environment" / "Dockerfile", f"FROM python:3.12-slim\nRUN pip install {installs}\n")
    result = run(task_dir)
    assert result.verdict.rewards is not None
    assert not own_environment_notes(result)


def test_a_script_beside_the_verifier_that_it_never_imports_gives_no_note(tmp_path):
    """tests/make_fixtures.py imports rich, the verifier only the standard library and a helper
    package of its own: Harbor never runs the script, so nothing is said of rich; the package's
    own import of jinja2, reached through a relative import, is."""
    task_dir = make_task(
        tmp_path / "t", "import json\nfrom grading import score\n\ndef verify(workspace):\n    return 1.0\n"
    )
    write(task_dir / "tests" / "make_fixtures.py", "import rich\n")
    write(task_dir / "tests" / "grading" / "__init__.py", "from .core import score\n")
    write(task_dir / "tests" / "grading" / "core.py", "def score():\n    import jinja2\n")
    write(task_dir / "environment" / "Dockerfile", "FROM python:3.12-slim\n")
    notes = own_environment_notes(run(task_dir))
    assert len(notes) == 1 and "import jinja2, found" in notes[0] and "rich" not in notes[0], notes


def test_an_import_inside_verify_or_a_helper_of_the_tools_environment_is_said(tmp_path):
    """The explain document is written before verify() runs: the task's files are read instead."""
    task_dir = make_task(tmp_path / "t", "import helper\n\ndef verify(workspace):\n    import rich\n    return 1.0\n")
    write(task_dir / "tests" / "helper.py", "def later():\n    import jinja2\n")
    write(task_dir / "tests" / "broken.py", "def (:\n")  # does not parse: skipped
    write(task_dir / "environment" / "Dockerfile", "FROM python:3.12-slim\n")
    result = run(task_dir)
    assert result.verdict.rewards is not None
    [note] = own_environment_notes(result)
    assert "the verifier's files import jinja2, rich, found in verifier-tui's own environment" in note


FORGES_ITS_EXPLAIN_FILE = """\
import json, sys, sysconfig

def verify(workspace):
    at = sys.argv[sys.argv.index("--explain-to") + 1]
    with open(at) as f:
        doc = json.load(f)
    site = sysconfig.get_paths()["purelib"]
    doc["run_imports"] = {"m%06d" % i: site + "/x.py" for i in range(150_000)}
    with open(at, "w") as f:
        json.dump(doc, f)
    return 1.0
"""


def test_a_verifier_that_rewrites_its_explain_file_with_forged_imports_costs_nothing(tmp_path):
    """A pass took 77 s on 150,000 forged module names, a regex over the install files per name."""
    task_dir = make_task(tmp_path / "t", FORGES_ITS_EXPLAIN_FILE)
    write(task_dir / "environment" / "Dockerfile", "FROM python:3.12-slim\nRUN pip install numpy\n" * 50)
    started = time.monotonic()
    result = run(task_dir)
    assert result.verdict.rewards is not None
    assert time.monotonic() - started < 5
    assert not own_environment_notes(result)


def test_a_standard_library_module_served_from_site_packages_is_not_named(tmp_path):
    """setuptools' distutils-precedence.pth serves distutils (and, with it, setuptools) from the
    tool's site-packages; the image's Python 3.11 has distutils of its own."""
    task_dir = make_task(tmp_path / "t", "import distutils.version\n\ndef verify(workspace):\n    return 1.0\n")
    write(task_dir / "environment" / "Dockerfile", "FROM python:3.11-slim\n")
    result = run(task_dir)
    assert result.verdict.rewards is not None
    assert not own_environment_notes(result)


def test_a_dependency_of_the_environments_pyproject_is_installed(tmp_path):
    task_dir = make_task(tmp_path / "t", "import rich\n\ndef verify(workspace):\n    return 1.0\n")
    pyproject = '[project]\nname = "deps"\nversion = "0"\ndependencies = ["rich>=13"]\n'
    write(task_dir / "environment" / "pyproject.toml", pyproject)
    dockerfile = "FROM python:3.12-slim\nCOPY pyproject.toml /deps/\nRUN pip install /deps\n"
    write(task_dir / "environment" / "Dockerfile", dockerfile)
    assert not own_environment_notes(run(task_dir))


def test_debians_python3_package_installs_the_module(tmp_path):
    """Debian names rich's package python3-rich: the image has rich, nothing to say."""
    task_dir = make_task(tmp_path / "t", "import rich\n\ndef verify(workspace):\n    return 1.0\n")
    dockerfile = "FROM ubuntu:24.04\nRUN apt-get update && apt-get install -y python3 python3-rich\n"
    write(task_dir / "environment" / "Dockerfile", dockerfile)
    assert not own_environment_notes(run(task_dir))


def test_a_verifier_on_the_standard_library_alone_is_not_told_of_the_tools_environment(tmp_path):
    task_dir = make_task(tmp_path / "t", "import json, statistics\n\ndef verify(workspace):\n    return 1.0\n")
    result = run(task_dir)
    assert result.verdict.rewards is not None
    assert not [n for n in result.notices if "own environment" in n], result.notices


def test_a_missing_module_no_file_installs_is_said(tmp_path):
    task_dir = make_task(tmp_path / "t", NEEDS_PACKAGE)
    write(task_dir / "environment" / "Dockerfile", "FROM python:3.11-slim\n")
    note = next(n for n in run(task_dir).notices if "vtui_fuzzy_scores" in n)
    assert "none of the task's install files mentions it (environment/Dockerfile, tests/test.sh)" in note
    (task_dir / "environment" / "Dockerfile").unlink()
    (task_dir / "tests" / "test.sh").unlink()
    note = next(n for n in run(task_dir).notices if "vtui_fuzzy_scores" in n)
    assert "the task has no Dockerfile, requirements file or test.sh that would install it" in note


def test_a_missing_module_the_shim_installs_is_named_with_its_line(tmp_path):
    """A shim that runs ``pip install`` before the runner (common in Harbor
    tasks): its line is where the sandbox gets the package; the shim's other
    lines (``--verifier /tests/verifier.py``) install nothing."""
    task_dir = make_task(tmp_path / "t", "import app\n" + NEEDS_PACKAGE)
    test_sh = task_dir / "tests" / "test.sh"
    test_sh.write_text(
        test_sh.read_text().replace("set -- --verifier", "pip install vtui-fuzzy-scores==1.2\nset -- --verifier"),
        encoding="utf-8",
    )
    note = next(n for n in run(task_dir).notices if "ModuleNotFoundError" in n)
    assert note.startswith("the verifier imports app, which is neither beside it")  # `--workspace /app` is no install
    write(task_dir / "tests" / "verifier.py", NEEDS_PACKAGE)
    note = next(n for n in run(task_dir).notices if "vtui_fuzzy_scores" in n)
    assert "the task installs it for the sandbox in tests/test.sh:" in note
    assert "`pip install vtui-fuzzy-scores==1.2`" in note


#: test.sh lines, and whether each installs vtui_fuzzy_scores: only an install command's own package words do.
TEST_SH_LINES = [
    ("pip uninstall -y vtui-fuzzy-scores", False),
    ('echo "install vtui-fuzzy-scores"', False),
    ("echo vtui-fuzzy-scores; pip install foo", False),
    ("pip install foo  # vtui-fuzzy-scores", False),
    ("pip install --index-url https://example.org/vtui-fuzzy-scores foo", False),
    ("pip install --no-cache-dir \\\n    vtui-fuzzy-scores==1.2", True),
    ("uvx --with vtui-fuzzy-scores python /tests/check.py", True),
    ("uv pip install --system 'vtui_fuzzy_scores[fast]>=1'", True),
    ("python3 -m pip install -q vtui-fuzzy-scores", True),
    ("cd /tmp && PIP_NO_INPUT=1 pip3 install Vtui.Fuzzy-Scores", True),
    ("uv add vtui-fuzzy-scores", True),
    ("apt-get install -y python3-vtui-fuzzy-scores", True),
]


def test_a_test_sh_line_installs_a_module_only_where_an_install_command_names_it(tmp_path):
    """test.sh's lines were taken as installing a module wherever the word "install" and the module's
    name met on a line: `pip uninstall`, an echo, another command or a comment; and missed where the
    name came on a continued line, or after uvx --with, uv pip, python -m pip."""
    test_sh = tmp_path / "t" / "tests" / "test.sh"
    write(test_sh, "".join(f"{line}\n" for line, _ in TEST_SH_LINES))
    starts = [1]
    for line, _ in TEST_SH_LINES:
        starts.append(starts[-1] + line.count("\n") + 1)
    installs = [start for start, (_, does) in zip(starts[:-1], TEST_SH_LINES, strict=True) if does]
    found = install_lines([test_sh], "vtui_fuzzy_scores")
    assert [line.number for line in found] == installs, found
    assert found[0].text == "pip install --no-cache-dir vtui-fuzzy-scores==1.2"


#: test.sh commands behind a reserved word or a command that runs the next one, each installing the module.
BEHIND_A_WRAPPER = [
    "if ! pip install vtui-fuzzy-scores; then exit 1; fi",
    "{ pip install vtui-fuzzy-scores; }",
    "timeout 300 pip install vtui-fuzzy-scores",
    "timeout -k 5 --signal=KILL 300 pip install vtui-fuzzy-scores",
    "env PIP_NO_INPUT=1 pip install vtui-fuzzy-scores",
    "env -u HOME -i X=1 pip install vtui-fuzzy-scores",
    "sudo -H pip install vtui-fuzzy-scores",
    "sudo -u root -E pip install vtui-fuzzy-scores",
    "nice -n 10 nohup pip install vtui-fuzzy-scores",
    "exec command pip install vtui-fuzzy-scores",
    "time pip install vtui-fuzzy-scores",
    "while ! pip install vtui-fuzzy-scores; do sleep 1; done",
    "find /wheels | xargs -P 2 pip install vtui-fuzzy-scores",
    "pip --cache-dir /tmp install vtui-fuzzy-scores",
    "pip --disable-pip-version-check --timeout 60 install vtui-fuzzy-scores",
    "flock /tmp/l pip install vtui-fuzzy-scores",
    "stdbuf -oL pip install vtui-fuzzy-scores",
    "ionice -c3 pip install vtui-fuzzy-scores",
    "setsid pip install vtui-fuzzy-scores",
    "doas pip install vtui-fuzzy-scores",
    "chroot / pip install vtui-fuzzy-scores",
]


def test_an_install_behind_a_reserved_word_or_a_wrapper_is_found(tmp_path):
    """An install command behind sh's reserved words (`if !`, `{`, `time`), a command that runs the next
    one (`timeout 300`, `env X=1`, `sudo -H`, `nice -n 10`, `nohup`, `exec`, `command`, `xargs`; later
    `flock`, `stdbuf`, `ionice`, `setsid`, `doas`, `chroot`, which no table of wrappers listed), or pip's
    global options before `install` (`--cache-dir /tmp`) was taken for no install at all."""
    test_sh = write(tmp_path / "t" / "tests" / "test.sh", "".join(f"{line}\n" for line in BEHIND_A_WRAPPER))
    found = install_lines([test_sh], "vtui_fuzzy_scores")
    missed = [line for line in BEHIND_A_WRAPPER if line not in [f.text for f in found]]
    assert not missed
    assert not any(f.from_a_file for f in found)


def test_an_install_options_values_are_no_packages_and_a_cluster_ending_in_r_reads_a_file(tmp_path):
    """`pip install -qr reqs.txt` (or `-Ur`) read reqs.txt as a package, not as a file whose list it
    installs; the values of pip's options (`--progress-bar off`, `--timeout 60`) were read as packages
    (a value that is the module's own name, `--trusted-host NAME`, is not told from a package)."""
    lines = {
        "pip install -qr vtui_fuzzy_scores.txt": True,
        "pip install -Ur vtui_fuzzy_scores.txt": True,
        "pip install -q -rvtui_fuzzy_scores.txt": True,
        "pip install --timeout 60 --retries 3 --progress-bar off foo": False,
        "pip install --user vtui-fuzzy-scores": None,  # a flag: the next word is a package
        "apt-get install -f python3-vtui-fuzzy-scores": None,  # apt's -f (fix broken) is a flag too
    }
    test_sh = write(tmp_path / "t" / "tests" / "test.sh", "".join(f"{line}\n" for line in lines))
    found = {line.text: line.from_a_file for line in install_lines([test_sh], "vtui_fuzzy_scores")}
    # True: installs what a file lists; None: installs the module by name; False: installs no such package
    assert found == {line: bool(reads) for line, reads in lines.items() if reads is not False}


def test_uvx_with_in_every_spelling_uv_takes_is_read(tmp_path):
    """Terminal-Bench's test.sh files run `uvx -p 3.13 -w pytest==8.4.1 -w numpy==...`: only `--with VALUE`
    was read, so `-w` (and `-wVALUE`, `-w=VALUE`, `--with=VALUE`) installed nothing, nor did
    `--with-requirements FILE` install what a file lists."""
    lines = {
        "uvx -p 3.13 -w pytest==8.4.1 -w vtui-fuzzy-scores==1.2 pytest /tests/test_outputs.py -rA": False,
        "uvx -wvtui-fuzzy-scores pytest": False,
        "uvx -w=vtui-fuzzy-scores pytest": False,
        "uv run --with=numpy,vtui-fuzzy-scores python /tests/check.py": False,
        "uvx --python 3.12 --with-requirements /tests/vtui.txt pytest": True,
    }
    test_sh = write(tmp_path / "t" / "tests" / "test.sh", "".join(f"{line}\n" for line in lines))
    found = {line.text: line.from_a_file for line in install_lines([test_sh], "vtui_fuzzy_scores")}
    assert found == {line: reads for line, reads in lines.items() if reads is not None}


def test_a_test_sh_of_a_megabyte_lexes_only_the_lines_that_may_install_the_module(tmp_path, monkeypatch):
    """A 1 MB test.sh was lexed whole, word by word, wherever a line named pip, uv or apt: `run` took
    ten times as long to say a module was missing. Only a line that names the module (in any of pip's
    spellings) or a file to install from is lexed, never one past 64 KB, and no more than 256 KB of them."""
    lexed: list[str] = []
    monkeypatch.setattr(diagnosis, "sh_commands", lambda line: lexed.append(line) or sh_commands(line))
    filler = "pip install --no-cache-dir numpy pandas\n" * 18_000
    huge = "pip install vtui-fuzzy-scores " + "x" * 200_000 + "\n"
    test_sh = write(
        tmp_path / "t" / "tests" / "test.sh", f"{filler}{huge}pip3 install Vtui.Fuzzy_Scores\npip install -qr r.txt\n"
    )
    found = install_lines([test_sh], "vtui_fuzzy_scores")
    said = [(line.number, line.from_a_file, line.unread) for line in found]
    assert said == [(18_001, False, True), (18_002, False, False), (18_003, True, False)]  # the long one unread
    assert len(lexed) == 2
    # a megabyte of lines that each install it (a hostile test.sh) is read as far as 256 KB of them
    lexed.clear()
    write(test_sh, "pip install vtui-fuzzy-scores numpy\n" * 27_000)
    found = install_lines([test_sh], "vtui_fuzzy_scores")
    assert found[:3] == [InstallLine(test_sh, n, "pip install vtui-fuzzy-scores numpy") for n in (1, 2, 3)]
    assert sum(map(len, lexed)) <= 256 * 1024 < sum(map(len, lexed)) + 36
    assert found[-1].unread and found[-1].number == len(found) and not any(line.unread for line in found[:-1])


def test_a_test_sh_line_too_long_to_read_that_may_install_the_module_is_said(tmp_path):
    """A test.sh line past 64 KB (a `pip install` of the module among a long list of packages) was skipped
    without a word: the note said none of the task's install files mentions the module."""
    task_dir = make_task(tmp_path / "t", NEEDS_PACKAGE)
    test_sh = task_dir / "tests" / "test.sh"
    packages = " ".join(f"vtui-pkg-{n}" for n in range(8_000))  # 100 KB
    test_sh.write_text(
        test_sh.read_text().replace(
            "set -- --verifier", f"pip install {packages} vtui-fuzzy-scores\nset -- --verifier"
        ),
        encoding="utf-8",
    )
    note = next(n for n in run(task_dir).notices if "vtui_fuzzy_scores" in n)
    assert "mentions it" not in note and "the task installs it" not in note, note
    line = next(n for n, text in enumerate(test_sh.read_text().splitlines(), 1) if text.startswith("pip install"))
    assert f"tests/test.sh:{line} `pip install vtui-pkg-0 " in note, note
    assert "may install it (not read as sh reads it: past the 64 KB of a line" in note, note


def test_a_test_sh_installing_from_a_file_not_read_says_the_line(tmp_path):
    """`pip install -r FILE` in test.sh installs what FILE lists: not a package of that name, and a file
    the tool may not have; its line is said as such, never as installing the module."""
    task_dir = make_task(tmp_path / "t", NEEDS_PACKAGE)
    test_sh = task_dir / "tests" / "test.sh"
    test_sh.write_text(
        test_sh.read_text().replace(
            "set -- --verifier", "pip install -r /opt/vtui_fuzzy_scores.txt\nset -- --verifier"
        ),
        encoding="utf-8",
    )
    note = next(n for n in run(task_dir).notices if "vtui_fuzzy_scores" in n)
    assert "the task installs it" not in note
    assert "tests/test.sh:" in note and "`pip install -r /opt/vtui_fuzzy_scores.txt` installs what a file lists" in note


def test_import_names_that_differ_from_their_package_are_found(tmp_path):
    dockerfile = write(tmp_path / "Dockerfile", "RUN pip install PyYAML scikit-learn\n")
    assert [line.number for line in install_lines([dockerfile], "yaml")] == [1]
    assert [line.number for line in install_lines([dockerfile], "sklearn")] == [1]
    assert install_lines([dockerfile], "ml") == []  # words, not substrings


def test_nemo_gym_and_the_tasks_own_modules_get_no_install_hint(tmp_path):
    assert missing_module("ModuleNotFoundError: No module named 'nemo_gym.verifiers'") == "nemo_gym"
    task_dir = make_task(tmp_path / "t", "import nemo_gym\n\ndef verify(workspace):\n    return 1.0\n")
    assert not any("does not have" in n for n in run(task_dir).notices)
    task_dir = make_task(
        tmp_path / "u",
        "import helpers_pkg.sub\n\ndef verify(workspace):\n    return 1.0\n",
        files={"helpers_pkg/__init__.py": ""},
    )
    result = run(task_dir)
    assert result.outcome is Outcome.VERIFIER_RAISED
    assert not any("does not have" in n for n in result.notices)


# ---------------------------------------------------------------------------
# An interpreter older than 3.8: the shim's verdict


@pytest.mark.parametrize("version", ["3.7", "3.6"])
def test_an_interpreter_the_shim_refuses_never_starts_the_runner(tmp_path, version):
    python = python_or_skip(version)
    marker = tmp_path / "ran"
    task_dir = make_task(
        tmp_path / "t", f"open({str(marker)!r}, 'w').close()\n\ndef verify(workspace):\n    return 1.0\n"
    )
    result = run(task_dir, python=python)
    assert result.outcome is Outcome.REFUSED_BY_SHIM
    assert result.exit_code == 127 and result.exit_status == 127
    assert result.verdict.error == "RewardFileNotFoundError"
    assert f"found only an older one: {python} (Python {version}." in result.stderr.text
    assert any("refuses an interpreter older than 3.8" in n for n in result.notices)
    assert not marker.exists()  # the verifier's module was never imported
    assert result.outcome_words == "exit 127 · refused by test.sh"


def test_python_3_8_is_run(tmp_path):
    result = run(make_task(tmp_path / "t"), python=python_or_skip("3.8"))
    assert result.outcome is Outcome.REWARD_WRITTEN, result.stderr.text


# ---------------------------------------------------------------------------
# A coroutine never awaited


def test_a_coroutine_never_awaited_is_flagged_beside_the_verdict(tmp_path):
    task_dir = make_task(
        tmp_path / "t",
        """\
        import gc

        async def check(workspace):
            return 1.0

        def verify(workspace):
            check(workspace)  # forgot the await: the check never runs
            gc.collect()
            return 0.0
    """,
    )
    result = run(task_dir)
    assert result.verdict.rewards == {"reward": 0.0}
    (warning,) = [w for w in result.verdict.warnings if "never awaited" in w]
    assert "coroutine 'check' was never awaited" in warning and "wrong" in warning
    assert warning in result.to_json()["warnings"]


def test_no_flag_without_the_warning(tmp_path):
    result = run(make_task(tmp_path / "t"))
    assert not any("never awaited" in w for w in result.verdict.warnings)


# ---------------------------------------------------------------------------
# A tests/ module shadowing the standard library


def test_a_tests_module_shadowing_the_standard_library_is_flagged(tmp_path):
    task_dir = make_task(
        tmp_path / "t",
        """\
        import statistics

        def verify(workspace):
            return statistics.mean([1.0, 1.0])
    """,
        files={"statistics.py": "# the task's own notes on statistics\n", "helpers.py": "X = 1\n"},
    )
    result = run(task_dir)
    assert result.outcome is Outcome.VERIFIER_RAISED and "AttributeError" in result.stderr.text
    (shadow,) = shadows(result.explain)
    assert shadow["module"] == "statistics"
    assert shadow["path"] == str(task_dir / "tests" / "statistics.py")
    with Session(task_dir, Options(python=PY)) as session:
        assert [s["module"] for s in shadows(session.explain())] == ["statistics"]


#: Says on stderr where each of its imports came from, so a test can hold the notes to what the run did.
REPORTS_ITS_IMPORTS = """\
import sys
import heapq, re, somemod, statistics, types

def verify(workspace):
    for module in (heapq, re, somemod, statistics, types):
        print("IMPORTED", module.__name__, module.__file__, file=sys.stderr)
    return 1.0
"""


def test_a_module_imported_at_start_up_is_never_shadowed_and_the_note_says_so(tmp_path):
    """A .pth file of site-packages that imports a module (as coverage's and
    setuptools' do) puts it in sys.modules before the runner places the task's
    folders first, and so may the interpreter's own start-up: ``import`` then
    never looks along the path, and a tests/ file of that name is never
    imported. Each note must say what the run did, on a real interpreter."""
    venv = tmp_path / "venv"
    subprocess.run([PY, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=HANG_GUARD_S)
    (site_packages,) = venv.glob("lib/python3*/site-packages")
    write(site_packages / "somemod.py", "")
    write(site_packages / "preloads.pth", "import somemod\nimport statistics\n")
    files = {f"{name}.py": "" for name in ("heapq", "re", "somemod", "statistics", "types")}
    task_dir = make_task(tmp_path / "t", REPORTS_ITS_IMPORTS, files=files)
    with Session(task_dir, Options(python=str(venv / "bin" / "python"))) as session:
        result = session.run()
        explained = session.explain()
    imported = dict(line.split()[1:] for line in result.stderr.text.splitlines() if line.startswith("IMPORTED "))
    assert imported["statistics"] != str(task_dir / "tests" / "statistics.py")  # the .pth's copy won
    assert imported["somemod"] == str(site_packages / "somemod.py")
    for explanation in (result.explain, explained):
        notes = {s["module"]: (s, shadow_text(s, str)) for s in shadows(explanation)}
        assert set(notes) == set(imported)
        for module, (shadow, note) in notes.items():
            if imported[module] == shadow["path"]:
                assert note.startswith(f"{shadow['path']} shadows the standard library's {module}:")
            else:
                assert note.startswith(f"{shadow['path']} is never imported: {module} was already imported")
                assert f"`import {module}` gets {imported[module]}" in note


def test_built_in_modules_and_the_tasks_other_modules_are_not_flagged(tmp_path):
    task_dir = make_task(tmp_path / "t", files={"time.py": "", "scoring.py": "", "sys.py": ""})
    result = run(task_dir)
    assert shadows(result.explain) == []


def test_a_helper_missing_beside_the_verifier_is_named_as_the_file(tmp_path):
    """``from csvutil import ...`` with no ``tests/csvutil.py``: named as the
    file missing beside the verifier first, not only as a package to install."""
    task_dir = make_task(tmp_path / "t", "from csvutil import total\n\ndef verify(workspace):\n    return total()\n")
    note = next(n for n in run(task_dir).notices if "csvutil" in n)
    assert note.startswith(
        "the verifier imports csvutil, which is neither beside it (tests/csvutil.py or tests/csvutil/)"
    )
    assert "a helper of the task's missing from tests/ fails the same way in the sandbox" in note


# ---------------------------------------------------------------------------
# A test.sh whose #! line the sandbox cannot start


@pytest.mark.parametrize("shebang", ["#!/usr/bin/env bash", "#!/bin/bash", "#!/bin/sh"])
def test_a_crlf_test_sh_is_never_started_as_the_sandbox_never_starts_it(tmp_path, shebang):
    """A test.sh saved with CRLF endings: its #! line names `bash\\r`, which
    no image has, so Harbor's test.sh exits 127 before anything runs and no
    reward is written. The run passed, its runner started without test.sh."""
    marker = tmp_path / "ran"
    task_dir = make_task(
        tmp_path / "t", f"open({str(marker)!r}, 'w').close()\n\ndef verify(workspace):\n    return 1.0\n"
    )
    shim = task_dir / "tests" / "test.sh"
    body = shim.read_text().split("\n", 1)[1]
    shim.write_bytes(f"{shebang}\n{body}".replace("\n", "\r\n").encode())
    # what the kernel and bash do with it, as Harbor runs it: `bash -c '(/tests/test.sh) > ...'`
    shim.chmod(0o755)
    said = subprocess.run(["bash", "-c", f"({shim})"], capture_output=True, text=True, check=False)
    assert said.returncode == 127, said
    result = run(task_dir)
    assert result.outcome is Outcome.REFUSED_BY_SHIM, result.stderr.text
    assert result.exit_code == 127 and result.verdict.error == "RewardFileNotFoundError"
    line = (
        f"tests/test.sh has CRLF line endings: its first line `{shebang}\\r` cannot be run in the sandbox "
        "(exit 127); save it with LF endings"
    )
    assert line in result.notices and not result.stderr.text  # said once, as the run's note
    assert not marker.exists()  # the verifier's module was never imported


@pytest.mark.parametrize("crlf", ["step", "tests"])
def test_a_steps_own_test_sh_is_the_one_judged_for_crlf(tmp_path, crlf):
    """Harbor runs steps/<name>/tests/test.sh when the step has one (laid over tests/): a CRLF one there
    was run as the runner's 1.0 (tests/test.sh was read), and a CRLF tests/test.sh the step's own hides
    refused a run Harbor scores."""
    task_dir = make_task(tmp_path / "t", toml='[[steps]]\nname = "one"\n')
    write(task_dir / "steps" / "one" / "instruction.md", "Do it.\n")
    shim = (task_dir / "tests" / "test.sh").read_bytes()
    write(task_dir / "steps" / "one" / "tests" / "test.sh", "")
    (task_dir / ("steps/one/tests" if crlf == "step" else "tests") / "test.sh").write_bytes(
        shim.replace(b"\n", b"\r\n")
    )
    lf = shim.replace(b"--workspace /app", b"--workspace /srv/ws")
    (task_dir / ("tests" if crlf == "step" else "steps/one/tests") / "test.sh").write_bytes(lf)
    with Session(task_dir, Options(python=PY, step="one")) as session:
        result = session.run()
        # the workspace the header shows: the script's that runs (none laid for one refused)
        assert session.limits().app == ("/app" if crlf == "step" else "/srv/ws")
    if crlf == "step":
        assert result.outcome is Outcome.REFUSED_BY_SHIM and result.exit_code == 127, result.outcome
    else:
        assert result.verdict.rewards == {"reward": 1.0}, (result.outcome, result.notices)


# ---------------------------------------------------------------------------
# A relative import in a module the runner imports as a top-level one


def test_a_relative_import_of_a_helper_beside_the_verifier_says_how_to_import_it(tmp_path):
    # A newcomer's first helper: `from .helpers import score` in tests/verifier.py. The runner
    # imports verifier.py by its file, as a top-level module (as NeMo Gym's does), so Python's
    # "no known parent package" is all the user saw, in the sandbox as here.
    task_dir = make_task(
        tmp_path / "t",
        "from .helpers import score\n\ndef verify(workspace):\n    return score()\n",
        files={"helpers.py": "def score():\n    return 1.0\n"},
    )
    result = run(task_dir)
    assert result.outcome is Outcome.VERIFIER_RAISED
    (note,) = [n for n in result.notices if "relative import" in n]
    assert "tests/verifier.py:1 `from .helpers import score`" in note
    assert "write `from helpers import score`" in note
    assert note in result.to_json()["notices"]
    # The import fixed as the note says, the verifier runs: the advice is the runner's own rule.
    fixed = "from helpers import score\n\ndef verify(workspace):\n    return score()\n"
    write(task_dir / "tests" / "verifier.py", fixed)
    assert run(task_dir).verdict.rewards == {"reward": 1.0}


def test_no_relative_import_note_for_a_package_of_helpers(tmp_path):
    task_dir = make_task(
        tmp_path / "t",
        "from grading import grade\n\ndef verify(workspace):\n    return grade()\n",
        files={
            "grading/__init__.py": "from .score import grade\n",
            "grading/score.py": "from .weights import FULL\n\ndef grade():\n    return FULL\n",
            "grading/weights.py": "FULL = 1.0\n",
        },
    )
    result = run(task_dir)
    assert result.verdict.rewards == {"reward": 1.0}, result.stderr.text
    assert not any("relative import" in n for n in result.notices)


def _reads_task(tmp_path, verifier="import json\nimport grading\n\ndef verify(workspace):\n    return 1.0\n", **kw):
    task_dir = make_task(tmp_path / "t", verifier, **kw)
    write(task_dir / "environment" / "Dockerfile", "FROM python:3.12-slim\n")
    return task_dir


def test_a_package_wins_over_a_module_file_of_the_same_name(tmp_path):
    """Python's FileFinder takes grading/__init__.py before grading.py: the verifier never imports
    grading.py, so its import of jinja2 says nothing."""
    task_dir = _reads_task(tmp_path)
    write(task_dir / "tests" / "grading" / "__init__.py", "X = 1\n")
    write(task_dir / "tests" / "grading.py", "import jinja2\n")
    assert not own_environment_notes(run(task_dir))


def test_the_verifiers_folder_comes_before_tests_on_the_runners_sys_path(tmp_path):
    """The runner puts the verifier's folder before tests/: tests/sub/grading.py is the one imported."""
    task_dir = _reads_task(
        tmp_path,
        verifier=None,
        files={
            "sub/verifier.py": "import grading\n\ndef verify(workspace):\n    return 1.0\n",
            "sub/grading.py": "X = 1\n",
            "grading.py": "import jinja2\n",
        },
    )
    assert not own_environment_notes(run(task_dir, verifier="sub/verifier.py"))


def test_a_relative_import_past_the_top_level_package_reads_nothing(tmp_path):
    """grading is a top-level package: `from .. import` in it fails in Python (beyond top-level
    package), so tests/make_fixtures.py is never imported."""
    task_dir = _reads_task(tmp_path)
    write(task_dir / "tests" / "grading" / "__init__.py", "def later():\n    from .. import make_fixtures\n")
    write(task_dir / "tests" / "make_fixtures.py", "import jinja2\n")
    assert not own_environment_notes(run(task_dir))


def test_a_large_package_first_does_not_hide_a_helper_read_after_it(tmp_path):
    """A package of 201 files imported first spent the bound on files the import never runs, and
    the helper imported after it (which imports jinja2) was never read."""
    task_dir = _reads_task(tmp_path, verifier="import big\nimport helper\n\ndef verify(workspace):\n    return 1.0\n")
    for i in range(200):
        write(task_dir / "tests" / "big" / f"m{i:03}.py", "X = 1\n")
    write(task_dir / "tests" / "big" / "__init__.py", "")
    write(task_dir / "tests" / "helper.py", "def f():\n    import jinja2\n")
    notes = own_environment_notes(run(task_dir))
    assert len(notes) == 1 and "jinja2" in notes[0], notes
