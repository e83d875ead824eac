"""The links under a task's tests/ that Harbor 0.26.0's ``validate_input_tree`` refuses, and the
ones it takes, read through the one reader of a task (``read_task_config``)."""

from __future__ import annotations

from tests.helpers.tasks import make_task
from verifier_tui.engine.task.discovery import read_task_config


def test_a_link_loop_in_tests_is_refused(tmp_path):
    """tests/a → tests/a: Path.resolve raises RuntimeError on Harbor's Python 3.12."""
    task = make_task(tmp_path / "t")
    (task / "tests" / "a").symlink_to(task / "tests" / "a")
    refused = read_task_config(task).refused or ""
    assert "tests/a is a link loop" in refused and "RuntimeError" in refused, refused


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
