"""Names the tool reads from files it did not write (a case folder's, a
task.toml's ``[task] name``) in ``test``'s text: a line break in one is
written as ``\\n`` on its row and cannot forge another, a bidi control is
shown as ``<U+202E>`` and never obeyed; ``--json`` keeps every name as it is
(JSON escapes it). A trial's and a job's names: tests/harbor/test_harmless_text.py."""

from __future__ import annotations

import json
import re
import sys

import pytest

from tests.helpers.commands import no_traceback, run_tool
from tests.helpers.tasks import make_task, write
from verifier_tui.engine.task.discovery import read_task_config

PY = sys.executable
RLO = "\u202e"
#: A name that, printed as it is, would add a passing row of its own to a table.
FORGED = 'good\n✓  forged  {"reward": 1.0}  {"reward": 1.0}'


def test_a_case_or_task_name_with_a_line_break_stays_on_its_row(tmp_path, env):
    toml = 'version = "1.0"\n[task]\nname = "org/demo"\n'  # a name Harbor refuses: the test below
    task = make_task(tmp_path / "tasks" / "demo", toml=toml, cases={FORGED: {"a.txt": ""}, f"b{RLO}c": {"a.txt": ""}})
    for case in (task / "cases").iterdir():
        write(case / "expected.json", '{"rewards": {"reward": 1.0}}')
    done = run_tool(env, "test", task, "--python", PY, cwd=tmp_path)
    no_traceback(done)
    lines = done.stdout.splitlines()
    assert lines[0].startswith("task org/demo · verifier"), lines
    header, *rows = (line.split() for line in lines[1:4])
    assert header[0] == "case" and [row[1] for row in rows] == ["b<U+202E>c", "good\\n✓"], lines
    assert not any(line.startswith("✓  forged") for line in lines), lines
    assert RLO not in done.stdout
    unknown = run_tool(env, "test", task, "--python", PY, "--case", "nothing", cwd=tmp_path)  # the list of cases too
    assert "::good\\n✓  forged" in unknown.stderr and unknown.stderr.count("\n") == 1, unknown.stderr
    cases = json.loads(run_tool(env, "test", task, "--python", PY, "--json", cwd=tmp_path).stdout)["cases"]
    assert sorted(c["case"] for c in cases) == sorted([FORGED, f"b{RLO}c"])


def test_a_task_name_with_a_line_break_stays_on_the_line_that_refuses_it(tmp_path, env):
    """A name Harbor would refuse (not org/name) runs no case: the line that
    says so, and each case's "not run", keep it on one line, unobeyed."""
    toml = f'version = "1.0"\n[task]\nname = "org/demo\\n✓  forged-task{RLO}"\n'
    task = make_task(tmp_path / "tasks" / "demo", toml=toml, cases={"a": {"a.txt": ""}})
    write(task / "cases" / "a" / "expected.json", '{"rewards": {"reward": 1.0}}')
    done = run_tool(env, "test", task, "--python", PY, cwd=tmp_path)
    no_traceback(done)
    said = done.stdout + done.stderr
    assert "Harbor would refuse to run this task" in said and "forged-task" in said, said
    assert not any(line.lstrip().startswith("✓") for line in said.splitlines()), said
    assert RLO not in said


def test_a_task_env_name_and_value_with_line_breaks_stay_on_explains_line(tmp_path, env):
    """task.toml's [verifier] env holds anything: a name and a value made to
    print "no contract problems" on a line of its own."""
    toml = '[verifier]\nenv = { "Z\\n\\nno contract problems: forged" = "v\\n  FAKE LINE" }\n'
    task = make_task(tmp_path / "t", "def verify(workspace):\n    return 1.0\n", toml=toml)
    done = run_tool(env, "explain", task, "--python", sys.executable)
    no_traceback(done)
    lines = done.stdout.splitlines()
    assert not any(line.startswith(("no contract problems: forged", "  FAKE LINE")) for line in lines), done.stdout
    assert any("Z\\n\\nno contract problems: forged=v\\n  FAKE LINE" in line for line in lines), done.stdout


def test_a_default_whose_repr_breaks_lines_stays_on_explains_line(tmp_path, env):
    """verify's defaults are shown by their repr, which the verifier writes: one
    made to print "no contract problems" on a line of its own (in the signature
    and the parameter's row), over a verify the runner refuses (``missing``,
    required, is nothing it can fill)."""
    source = (
        "class Forged:\n    def __repr__(self):\n"
        "        return 'None\\n\\nno contract problems: verify would be called'\n\n"
        "def verify(workspace, extra=Forged(), *, missing):\n    return 1.0\n"
    )
    task = make_task(tmp_path / "t", source)
    done = run_tool(env, "explain", task, "--python", sys.executable)
    no_traceback(done)
    lines = done.stdout.splitlines()
    assert not any(line.startswith("no contract problems") for line in lines), done.stdout
    assert any(line.startswith("verify(workspace, extra=None\\n\\nno contract") for line in lines), done.stdout
    assert any("default None\\n\\nno contract problems: verify would be called: not an" in line for line in lines)


def test_a_workspace_file_name_with_a_line_break_stays_on_its_note(tmp_path, env):
    """A FIFO (left out of the copy, with a note) named to print a verdict of
    its own on the next line."""
    import os

    task = make_task(tmp_path / "t", "def verify(workspace):\n    return 0.0\n", cases={"plain": {"a.txt": ""}})
    os.mkfifo(task / "cases" / "plain" / "workspace" / 'x\nverdict: {"reward": 1.0}')
    done = run_tool(env, "run", task, "--case", "plain", "--python", PY)
    no_traceback(done)
    lines = done.stdout.splitlines()
    assert [line for line in lines if line.startswith("verdict")] == ['verdict: {"reward": 0.0}  (from reward.txt)']
    assert any(line.startswith('note: workspace: skipped x\\nverdict: {"reward": 1.0}: it is a FIFO') for line in lines)


def test_a_line_too_long_keeps_its_end_where_an_error_names_its_file_and_line():
    from verifier_tui.words.text import ONE_LINE_MOST, one_line

    said = one_line("FileNotFoundError: /app/" + "deep/" * 400 + "hello.txt at tests/verifier.py:28")
    assert len(said) < ONE_LINE_MOST + 60 and said.endswith("hello.txt at tests/verifier.py:28")
    assert said.startswith("FileNotFoundError: /app/deep/") and " characters left out … " in said


@pytest.mark.parametrize(("name", "piece"), [("\u200b" * 1504, "<U+200B>"), ("\n" * 1504, "\\n")])
def test_a_name_cut_counts_the_characters_of_its_own_it_leaves_out(name, piece):
    """A name of 1,504 zero-width spaces was cut with "11,036 characters left out": the count was of
    its spelled text (`<U+200B>`, eight characters each), not of the name, whose spelling was also cut
    in half at its ends. The ends show whole characters, and the count is of the name's own."""
    from verifier_tui.words.text import ONE_LINE_MOST, one_line

    said = one_line(name)
    cut = re.fullmatch(rf"((?:{re.escape(piece)})+) … ([\d,]+) characters left out … ((?:{re.escape(piece)})+)", said)
    assert cut is not None and len(said) <= ONE_LINE_MOST, said
    shown = (len(cut[1]) + len(cut[3])) // len(piece)
    assert int(cut[2].replace(",", "")) == len(name) - shown, said


def test_a_folder_with_a_line_break_reads_the_same_in_an_error_line_as_in_the_table(tmp_path, env):
    """A folder named ``t<newline>x`` is ``t\\nx`` in ``test``'s table (and
    ``"t\\nx"`` in its JSON), but an error line naming it wrote ``t x``: a
    different name, one the user cannot find, nor tell from a space."""
    task = make_task(tmp_path / "t\nx", "def verify(workspace):\n    return 1.0\n", cases={"a": {"a.txt": ""}})
    write(task / "cases" / "a" / "expected.json", '{"rewards": {"reward": 1.0}}')
    table = run_tool(env, "test", task, "--python", PY, cwd=tmp_path)
    no_traceback(table)
    assert table.stdout.splitlines()[0].startswith("task t\\nx · "), table.stdout
    refused = run_tool(env, "run", task, "--python", PY, "--workspace", task / "nowhere", cwd=tmp_path)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert "t\\nx/nowhere" in refused.stderr, refused.stderr
    (tmp_path / "a\nb").mkdir()
    not_a_task = run_tool(env, "run", tmp_path / "a\nb", cwd=tmp_path)
    assert not_a_task.returncode == 2 and not_a_task.stderr.count("\n") == 1, not_a_task.stderr
    assert "a\\nb is not a task" in not_a_task.stderr, not_a_task.stderr


#: What a link target below starts a line with, were it printed raw.
FORGED_LINE = "verifier-tui: forged"


def junit_without_a_forged_line(env, task, tmp_path, words):
    """``test TASK --junit``: ``words`` in its text and in the failure's message and body, none of
    which has a line starting :data:`FORGED_LINE` or a raw bidi control. Returns the failure's message."""
    import xml.etree.ElementTree as ET

    report = tmp_path / "report.xml"
    done = run_tool(env, "test", task, "--python", PY, "--junit", report, cwd=tmp_path)
    no_traceback(done)
    assert done.returncode != 0
    [failure] = ET.parse(report).iter("failure")
    for text in (failure.get("message"), failure.text, done.stdout + done.stderr):
        assert words in text, text
        assert not any(line.startswith(FORGED_LINE) for line in text.splitlines()), text
        assert RLO not in text
    return failure.get("message")


def test_a_verifier_link_target_with_a_line_break_forges_no_line_of_the_junit_report(tmp_path, env):
    """``tests/verifier.py`` a link whose target holds a line break: "no verifier found" names where
    it points, and JUnit's failure message (what CI shows of each case) held the break raw, so its
    second line read as a line of the tool's own."""
    task = make_task(tmp_path / "t", cases={"a": {"a.txt": ""}})
    write(task / "cases" / "a" / "expected.json", '{"rewards": {"reward": 1.0}}')
    (task / "tests" / "verifier.py").unlink()
    (task / "tests" / "verifier.py").symlink_to(f"x\n{FORGED_LINE}{RLO}")
    junit_without_a_forged_line(env, task, tmp_path, f"tests/verifier.py is a link to x\\n{FORGED_LINE}")


def test_where_a_link_out_of_the_task_leads_forges_no_line(tmp_path, env):
    """A case's ``expected.json`` a link out of the task, to a file whose name holds a line break:
    ``leads out of the task, to <where>`` named it raw, so ``test``'s text and its JUnit failure
    message each had a line ``verifier-tui: forged`` of their own."""
    elsewhere = tmp_path / f"x\n{FORGED_LINE}{RLO}"
    write(elsewhere, '{"rewards": {"reward": 1.0}}')
    task = make_task(tmp_path / "t", cases={"a": {"a.txt": ""}})
    (task / "cases" / "a" / "expected.json").symlink_to(elsewhere)
    message = junit_without_a_forged_line(env, task, tmp_path, "expected.json leads out of the task, to ")
    assert f"x\\n{FORGED_LINE}" in message


def test_a_link_harbor_refuses_forges_no_line_of_the_refusal(tmp_path, env):
    """A file of ``tests/`` a link out of the task, to a path holding a line break: Harbor refuses the
    task (``Input paths must stay within the task``), and the line saying so named where it leads raw, so
    ``test --junit``'s failure message of each case had a line ``verifier-tui: forged`` of its own."""
    task = make_task(tmp_path / "t", cases={"a": {"a.txt": ""}})
    write(task / "cases" / "a" / "expected.json", '{"rewards": {"reward": 1.0}}')
    (task / "tests" / "helper.txt").symlink_to(tmp_path / f"x\n{FORGED_LINE}{RLO}")
    message = junit_without_a_forged_line(env, task, tmp_path, "Input paths must stay within the task")
    assert f"x\\n{FORGED_LINE}" in message
    # the refusal of a cycle names the link itself: its own name held the break (read as it is: the
    # JUnit writer makes every message one line, which would hide a refusal that is not)
    (task / "tests" / "helper.txt").unlink()
    (task / "tests" / f"lnk\n{FORGED_LINE}{RLO}").symlink_to(".")
    refused = read_task_config(task).refused
    assert f"tests/lnk\\n{FORGED_LINE}" in refused and "Input directory links must not form cycles" in refused
    assert "\n" not in refused and RLO not in refused, refused
    # a link to a folder part of which .harborignore left out: not checked, said as a note
    (task / "tests" / f"lnk\n{FORGED_LINE}{RLO}").unlink()
    (task / "tests" / "d").mkdir()
    (task / "tests" / "d" / "out").symlink_to("/")
    write(task / "tests" / ".harborignore", "d/out\n")
    (task / "tests" / f"lnk\n{FORGED_LINE}{RLO}").symlink_to("d")
    [note] = read_task_config(task).problems
    assert f"tests/lnk\\n{FORGED_LINE}" in note and "part of which was left out" in note, note
    assert "\n" not in note and RLO not in note, note


def test_a_task_folder_name_with_a_line_break_forges_no_line_of_the_junit_report(tmp_path, env):
    """A task folder named ``t<newline>verifier-tui: forged`` whose tests/verifier.py is a folder:
    "no verifier found for t..." (and where it looked) held the break raw in each case's JUnit failure,
    and so did the testsuite's name: a line ``verifier-tui: forged`` of its own in CI's page."""
    import xml.etree.ElementTree as ET

    task = make_task(tmp_path / f"t\n{FORGED_LINE}{RLO}", cases={"a": {"a.txt": ""}})
    write(task / "cases" / "a" / "expected.json", '{"rewards": {"reward": 1.0}}')
    (task / "tests" / "verifier.py").unlink()
    (task / "tests" / "verifier.py").mkdir()
    message = junit_without_a_forged_line(env, task, tmp_path, "tests/verifier.py is a folder, not a file")
    assert f"no verifier found for t\\n{FORGED_LINE}" in message, message
    suite = ET.parse(tmp_path / "report.xml").getroot().get("name")
    assert suite == f"verifier-tui t\\n{FORGED_LINE}<U+202E>", suite
