"""The links under a task's tests/ that Harbor 0.26.0's ``validate_input_tree`` refuses, and the
ones it takes, read through the one reader of a task (``read_task_config``)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.helpers.commands import modes_bind_root
from tests.helpers.tasks import make_task
from verifier_tui.engine.task.discovery import read_task_config


def test_a_link_loop_in_tests_is_no_refusal(tmp_path):
    """tests/a → tests/a: Path.resolve raises RuntimeError on Python 3.12 and not on 3.13, so
    whether Harbor loads the task depends on its Python (a genuine trial of such a task was
    scored): not said as a refusal; the run's staging leaves the loop out and says both."""
    task = make_task(tmp_path / "t")
    (task / "tests" / "a").symlink_to(task / "tests" / "a")
    assert read_task_config(task).refused is None


def test_a_link_to_nothing_outside_the_task_is_refused(tmp_path):
    """A link to a path that does not exist is checked where it points, as Harbor's resolve() does."""
    task = make_task(tmp_path / "t")
    (task / "tests" / "gone").symlink_to(tmp_path / "nowhere")
    assert "tests/gone leads out of the task" in (read_task_config(task).refused or "")


def test_links_that_stay_in_the_task_are_taken(tmp_path):
    """tests/shared → ../common, a folder of the task, and tests/inside → a file in it: both stay."""
    task = make_task(tmp_path / "t")
    (task / "common").mkdir()
    (task / "common" / "data.txt").write_text("1\n")
    (task / "tests" / "shared").symlink_to(task / "common")
    (task / "tests" / "inside").symlink_to(task / "common" / "data.txt")
    assert read_task_config(task).refused is None


def test_a_link_out_reached_through_a_link_inside_the_task_is_refused(tmp_path):
    """tests/shared → ../common, whose own link leads out: Harbor follows links inside the task."""
    task = make_task(tmp_path / "t")
    (task / "common").mkdir()
    (task / "common" / "out").symlink_to(tmp_path)
    (task / "tests" / "shared").symlink_to(task / "common")
    assert "tests/shared/out leads out of the task" in (read_task_config(task).refused or "")


def test_a_harborignore_harbor_cannot_read_as_rules_is_refused(tmp_path):
    """tests/.harborignore a link out of the task, or a folder: TaskFileFilter.ignore_rules raises
    ValueError as soon as a path under tests/ is checked (the rules are read from it)."""
    task = make_task(tmp_path / "t")
    (tmp_path / "rules").write_text("*.log\n")
    (task / "tests" / ".harborignore").symlink_to(tmp_path / "rules")
    assert "tests/.harborignore leads out of the task" in (read_task_config(task).refused or "")
    (task / "tests" / ".harborignore").unlink()
    (task / "tests" / ".harborignore").mkdir()
    assert "tests/.harborignore is not a regular file" in (read_task_config(task).refused or "")


def test_a_harborignore_harbor_cannot_read_is_refused(tmp_path):
    """tests/.harborignore of mode 000: TaskFileFilter.ignore_rules reads it with read_text(), which
    raises PermissionError, loading the task. The tool took it for no rules and scored the task."""
    task = make_task(tmp_path / "t")
    rules = task / "tests" / ".harborignore"
    rules.write_text("*.log\n")
    rules.chmod(0)
    # read by a process the file's mode binds (root's would read it all the same)
    read = "import sys; from pathlib import Path; from verifier_tui.engine.task.discovery import read_task_config;"
    read += " print(read_task_config(Path(sys.argv[1])).refused)"
    done = subprocess.run(
        [*modes_bind_root(), sys.executable, "-c", read, str(task)], capture_output=True, text=True, timeout=60
    )
    assert "tests/.harborignore cannot be read (Permission denied)" in done.stdout, done.stdout + done.stderr


def _counting_lookups(monkeypatch) -> list[int]:
    """A count of the file system lookups Python makes (``lstat``, ``stat``, ``readlink``): the
    work a check does, measured without a clock."""
    count = [0]
    for name in ("lstat", "stat", "readlink"):
        real = getattr(os, name)

        def counted(*args, _real=real, **kwargs):
            count[0] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(os, name, counted)
    return count


def test_a_chain_of_links_is_resolved_once_each(tmp_path, monkeypatch):
    """tests/l0 → l1 → … → l300 → ../common: each link resolved again for each entry whose way
    leads through it was work that grew as the square of the chain (minutes for a few hundred,
    on every command). Each link is resolved once: the work grows with the chain."""
    task = make_task(tmp_path / "t")
    (task / "common").mkdir()
    chain = 300
    for i in range(chain):
        (task / "tests" / f"l{i}").symlink_to(f"l{i + 1}")
    (task / "tests" / f"l{chain}").symlink_to("../common")
    count = _counting_lookups(monkeypatch)
    assert read_task_config(task).refused is None
    assert count[0] < 20 * chain, count[0]


def test_a_web_of_folder_links_is_walked_once_per_folder(tmp_path, monkeypatch):
    """Each of 30 folders links twice to the next: 2**30 routes, which Harbor walks one by one. Each
    real folder is looked into once; a link out at the end is still found."""
    task = make_task(tmp_path / "t")
    levels = 30
    for i in range(levels + 1):
        (task / "web" / f"d{i}").mkdir(parents=True)
    for i in range(levels):
        for name in ("a", "b"):
            (task / "web" / f"d{i}" / name).symlink_to(f"../d{i + 1}")
    (task / "tests" / "web").symlink_to("../web/d0")
    count = _counting_lookups(monkeypatch)
    assert read_task_config(task).refused is None
    assert count[0] < 100 * levels, count[0]
    (task / "web" / f"d{levels}" / "out").symlink_to(tmp_path)
    assert "leads out of the task" in (read_task_config(task).refused or "")


def _data_out_and_left_out(tmp_path, comments: int):
    """A task whose tests/data leads out of it, left out by the last line of a tests/.harborignore
    of ``comments`` comment lines before it."""
    task = make_task(tmp_path / "t")
    (tmp_path / "outside").mkdir()
    (task / "tests" / "data").symlink_to(tmp_path / "outside")
    (task / "tests" / ".harborignore").write_text("# a note\n" * comments + "data\n")
    return read_task_config(task)


def test_a_harborignore_past_a_megabyte_still_leaves_its_links_out(tmp_path):
    """tests/.harborignore of 1.2 MB of comments, then ``data``; tests/data a link out of the task:
    Harbor reads the whole file and leaves data out, so it loads the task. Taking the big file as
    no rules said Harbor would refuse it: a false refusal."""
    config = _data_out_and_left_out(tmp_path, comments=140_000)
    assert config.refused is None, config.refused


def test_a_harborignore_too_big_to_read_is_no_refusal_but_said(tmp_path, monkeypatch):
    """Past the bound the tool reads, the rules are unknown: a link they may leave out is not
    refused, and the task's notes say it was not checked."""
    from verifier_tui.engine.task import file_filter

    monkeypatch.setattr(file_filter, "IGNORE_FILE_LIMIT", 1000)
    config = _data_out_and_left_out(tmp_path, comments=200)
    assert config.refused is None, config.refused
    assert any("not checked" in p and "tests/.harborignore" in p for p in config.problems), config.problems


def test_past_the_links_it_follows_the_check_says_it_did_not_check(tmp_path, monkeypatch):
    """More links than the check follows: the rest is not checked, and said so; a link out among
    them is no refusal, as what Harbor makes of it is not known."""
    from verifier_tui.engine.task import loading

    monkeypatch.setattr(loading, "_MOST_LINKS", 3)
    task = make_task(tmp_path / "t")
    (task / "common").mkdir()
    for name in ("a", "b", "c", "d"):
        (task / "tests" / name).symlink_to(task / "common")
    (task / "tests" / "z").symlink_to(tmp_path)
    config = read_task_config(task)
    assert config.refused is None, config.refused
    assert any("not checked whether Harbor refuses" in p for p in config.problems), config.problems


def test_a_folder_reached_first_by_a_left_out_route_is_still_checked_by_its_own(tmp_path):
    """tests/a → b with tests/.harborignore = ``a``, and tests/b/out a link out: the walk went into b
    through a (left out), found out left out on that route, then passed b by as walked already;
    Harbor (3.12 and 3.13) refuses tests/b/out."""
    task = make_task(tmp_path / "t")
    (task / "tests" / "b").mkdir()
    (task / "tests" / "b" / "out").symlink_to("/etc")
    (task / "tests" / "a").symlink_to("b")
    (task / "tests" / ".harborignore").write_text("a\n")
    assert "tests/b/out leads out of the task" in (read_task_config(task).refused or "")


def test_a_left_out_folder_is_not_walked_and_costs_nothing(tmp_path, monkeypatch):
    """A left-out node_modules of more folders than the check walks used them all up: a real link
    out elsewhere was only "not checked", and a task with none got that false note. Harbor never
    looks past a path .harborignore leaves out; neither does the check."""
    from verifier_tui.engine.task import loading

    monkeypatch.setattr(loading, "_MOST_FOLDERS", 5)
    task = make_task(tmp_path / "t")
    for index in range(10):
        (task / "tests" / "node_modules" / f"m{index}").mkdir(parents=True)
    (task / "tests" / ".harborignore").write_text("node_modules/\n")
    config = read_task_config(task)
    assert config.refused is None and not any("not checked" in p for p in config.problems), config.problems
    (task / "tests" / "zdata").symlink_to("/etc")
    assert "tests/zdata leads out of the task" in (read_task_config(task).refused or "")


def test_rules_too_big_to_read_reached_through_a_link_are_no_refusal(tmp_path, monkeypatch):
    """tests/a → ../solution/big/sub, whose solution/big/.harborignore (past what the tool reads) says
    ``sub/``: Harbor's is_excluded matches the link's resolved path with those rules and never enters
    it, so it loads the task. Scoping unknown rules to the route's own folders refused tests/a/out;
    any rules too big to read leave a refusal unknown, said, never made."""
    from verifier_tui.engine.task import file_filter

    monkeypatch.setattr(file_filter, "IGNORE_FILE_LIMIT", 1000)
    task = make_task(tmp_path / "t")
    big = task / "solution" / "big"
    (big / "sub").mkdir(parents=True)
    (big / ".harborignore").write_text("sub/\n" + "# padding\n" * 200)
    (big / "keep.txt").write_text("k")
    (big / "sub" / "out").symlink_to("/etc")
    (task / "tests" / "a").symlink_to("../solution/big/sub")
    config = read_task_config(task)
    assert config.refused is None and any("not checked" in p for p in config.problems), config


def test_a_folder_where_a_link_was_left_out_reached_by_another_route_is_said_not_checked(tmp_path):
    """tests/.harborignore = ``b/out``, tests/b/out → /etc, tests/c → b: the walk left b/out out,
    took b as walked, and said nothing of c/out, which no rule leaves out (Harbor 0.26.0, 3.12 and
    3.13, refuses tests/c/out). Walking b again for each route, as Harbor does, could take minutes
    on a hostile tree: the notes say the links were not all checked, never a refusal."""
    task = make_task(tmp_path / "t")
    (task / "tests" / "b").mkdir()
    (task / "tests" / "b" / "out").symlink_to("/etc")
    (task / "tests" / "c").symlink_to("b")
    (task / "tests" / ".harborignore").write_text("b/out\n")
    config = read_task_config(task)
    assert config.refused is None, config.refused
    assert any("not checked" in p and "tests/c reaches a folder" in p for p in config.problems), config.problems


def test_rules_too_big_to_read_make_unknown_only_the_paths_they_rule(tmp_path, monkeypatch):
    """tests/a/.harborignore past what the tool reads, and tests/b/out a link out: the refusal was
    "not checked" or made depending on the folders' names (which rules were read first), where a's
    rules cannot touch b; Harbor (3.12 and 3.13) refuses tests/b/out. Only rules asked for the path
    (its folders', and those of where its links lead) make it unknown."""
    from verifier_tui.engine.task import file_filter

    monkeypatch.setattr(file_filter, "IGNORE_FILE_LIMIT", 1000)
    for big in ("a", "z"):
        task = make_task(tmp_path / big / "t")
        (task / "tests" / big).mkdir()
        (task / "tests" / big / ".harborignore").write_text("# padding\n" * 200)
        (task / "tests" / big / "f.txt").write_text("x")
        (task / "tests" / "b").mkdir()
        (task / "tests" / "b" / "out").symlink_to("/etc")
        assert "tests/b/out leads out of the task" in (read_task_config(task).refused or ""), big


def test_many_links_to_a_folder_part_of_which_was_left_out_cost_one_walk(tmp_path, monkeypatch):
    """tests/A of many links to tests/B, a folder of many files where .harborignore leaves skip/
    out: each link walked B again (20,000 links to 2,000 files took 43 s on every face, a deeper web
    of them 23 s). B is looked into once; the next route to it ends the check, said not checked."""
    task = make_task(tmp_path / "t")
    (task / "tests" / ".harborignore").write_text("skip/\n")
    (task / "tests" / "B" / "skip").mkdir(parents=True)
    for index in range(200):
        (task / "tests" / "B" / f"f{index}").write_text("x")
    (task / "tests" / "A").mkdir()
    for index in range(500):
        (task / "tests" / "A" / f"l{index}").symlink_to("../B")
    count = _counting_lookups(monkeypatch)
    config = read_task_config(task)
    assert config.refused is None and any("not checked" in p for p in config.problems), config.problems
    assert count[0] < 5_000, count[0]  # B's 200 files looked at once, not once a link


def test_rules_too_big_to_read_below_the_rule_that_leaves_a_path_out_make_it_unknown(tmp_path, monkeypatch):
    """tests/.harborignore = ``out``, and tests/sub/.harborignore, too big to read, begins ``!out``:
    Harbor reads it, lets tests/sub/out (a link out) back in and refuses the task; the tool took
    it as left out, with no word. Rules too big to read, asked for a path, leave it unknown."""
    from verifier_tui.engine.task import file_filter

    monkeypatch.setattr(file_filter, "IGNORE_FILE_LIMIT", 1000)
    task = make_task(tmp_path / "t")
    (task / "tests" / ".harborignore").write_text("out\n")
    (task / "tests" / "sub").mkdir()
    (task / "tests" / "sub" / ".harborignore").write_text("!out\n" + "# padding\n" * 200)
    (task / "tests" / "sub" / "f").write_text("x")
    (task / "tests" / "sub" / "out").symlink_to("/etc")
    config = read_task_config(task)
    assert config.refused is None and any("tests/sub/.harborignore is larger" in p for p in config.problems), config


def test_folders_nested_past_the_check_s_depth_are_said_not_checked(tmp_path):
    """A chain of 200 nested folders under tests/ (one left out at the bottom): every path's rules
    are asked along its whole route, and the check took 45 s on every face. Past 40 folders deep the
    notes say the links were not checked; a link out met before is still refused."""
    from verifier_tui.engine.task import loading

    task = make_task(tmp_path / "t")
    (task / "tests" / ".harborignore").write_text("skipme/\n")
    deep = task / "tests" / "d"
    for _ in range(loading._DEEPEST + 5):
        deep = deep / "d"
    (deep / "skipme").mkdir(parents=True)
    count = _counting_lookups(monkeypatch := pytest.MonkeyPatch())
    try:
        config = read_task_config(task)
    finally:
        monkeypatch.undo()
    assert config.refused is None and any("more than 40 deep" in p for p in config.problems), config.problems
    assert count[0] < 20_000, count[0]
    (task / "tests" / "a_out").symlink_to("/etc")  # walked before the deep folders
    assert "tests/a_out leads out of the task" in (read_task_config(task).refused or "")
