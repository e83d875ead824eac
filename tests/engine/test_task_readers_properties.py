"""A task is someone else's folder: each file of it the tool reads (task.toml,
instruction.md, test.sh, a verifier's source, a .harborignore, tasks.jsonl, a
case's expected.json and task_id.txt, a vendored runner, the Dockerfile) may hold
anything, or be a FIFO, a folder, a link to nothing or a device. Opening the task
gives a task whose notices are one line each, or one line saying why it is none;
what Harbor's digest counts of it is a digest or one line per file it cannot read;
nothing raises another way, nothing waits."""

from __future__ import annotations

import re
import shutil
import warnings
from pathlib import Path

import pathspec
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.helpers.hostile import bounded, contents, one_line, put
from tests.helpers.tasks import make_task
from verifier_tui.engine.harbor.digest import task_digest
from verifier_tui.engine.sandbox.view import image_workdir, workspace_path
from verifier_tui.engine.task.discovery import DiscoveryError, load_case_dir, resolve, verifier_notices
from verifier_tui.engine.task.ignore_rules import IgnoreRules
from verifier_tui.engine.task.kinds import uses_episode_api
from verifier_tui.engine.task.rows import case_task_id
from verifier_tui.engine.task.steps import plain_test_sh, shim_verifier

SETTINGS = settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

TASK_FILES = [
    "task.toml",
    "instruction.md",
    "tests/test.sh",
    "tests/verifier.py",
    "tests/helper.py",
    "tests/.harborignore",
    "tests/.ng/run_verifier.py",
    "tasks.jsonl",
    "cases/one/expected.json",
    "cases/one/task_id.txt",
    "environment/Dockerfile",
]


@pytest.fixture(scope="module")
def task_folder(tmp_path_factory) -> Path:
    root = make_task(
        tmp_path_factory.mktemp("tasks") / "demo",
        files={"helper.py": "X = 1\n", ".harborignore": "*.pyc\n", ".ng/run_verifier.py": "print('runner')\n"},
        cases={"one": {"answer.txt": "42\n"}},
    )
    (root / "tasks.jsonl").write_text('{"task_id": "one", "task_data": {"x": 1}}\n', encoding="utf-8")
    (root / "cases" / "one" / "expected.json").write_text('{"rewards": {"reward": 1.0}}', encoding="utf-8")
    (root / "cases" / "one" / "task_id.txt").write_text("one\n", encoding="utf-8")
    (root / "environment").mkdir()
    (root / "environment" / "Dockerfile").write_text("FROM python:3.12\nWORKDIR /app\n", encoding="utf-8")
    return root


@SETTINGS
@given(name=st.sampled_from(TASK_FILES), data=st.data())
def test_a_task_with_anything_in_place_of_one_file_opens_or_says_why_in_a_line(
    name, data, task_folder, tmp_path_factory
):
    root = tmp_path_factory.mktemp("task") / "demo"
    shutil.copytree(task_folder, root, symlinks=True)
    real = (task_folder / name).read_bytes()
    put(root / name, data.draw(contents(real)))
    try:
        task = bounded(resolve, root)
    except DiscoveryError as exc:
        one_line(str(exc))
        return
    one_line(task.config.refused)
    for notice in task.notices():
        one_line(str(notice))
    for verifier in task.verifiers:
        for notice in bounded(verifier_notices, task, verifier):
            one_line(str(notice))
        bounded(uses_episode_api, verifier)
    for case in task.cases:
        for problem in case.problems:
            one_line(problem)
    case = bounded(load_case_dir, root / "cases" / "one", task)
    for problem in case.problems:
        one_line(problem)
    named = bounded(case_task_id, root / "cases" / "one")
    assert named is None or (named and named == named.strip())
    bounded(shim_verifier, root)
    bounded(plain_test_sh, root, None)
    assert bounded(workspace_path, root / "tests").startswith("/")
    assert bounded(image_workdir, root).startswith("/")
    digest = bounded(task_digest, root)
    assert digest.digest.startswith("sha256:")
    for problem in digest.problems:
        one_line(problem)


IGNORE_PATTERNS = st.text(st.sampled_from("ab.*?[]!^-/\\# \t\r\n"), max_size=60)


def _harbor_excludes(relative: str, where: str, spec: pathspec.GitIgnoreSpec) -> bool:
    """Harbor 0.26.0's ``TaskFileFilter._matches`` for a file of the task whose one ``.harborignore``
    below tests/ is in ``where`` and reads as ``spec``: the file, or a folder on the way to it, matched."""
    if not relative.startswith(where + "/"):
        return False
    parts = relative[len(where) + 1 :].split("/")
    prefixes = ["/".join(parts[: i + 1]) + ("/" if i < len(parts) - 1 else "") for i in range(len(parts))]
    return any(spec.check_file(prefix).include is True for prefix in prefixes)


@SETTINGS
@given(rules=IGNORE_PATTERNS, where=st.sampled_from(["tests", "tests/sub"]))
@example(rules="*.py\n!/\n", where="tests")  # a bare / re-included: a folder pattern for GitIgnoreSpec
def test_any_harborignore_rules_give_the_files_harbor_counts(rules, where, task_folder, tmp_path_factory):
    """Glob syntax of any sort (an unclosed ``[``, a range backwards, ``**``, a lone backslash) in a
    .harborignore is rules or none, never a crash of opening the task or of the digest a trial is
    compared by; the files the digest counts are those pathspec's ``GitIgnoreSpec`` (as Harbor 0.26.0
    reads the file) leaves in, and rules it cannot read are rules the tool says Harbor refuses."""
    root = tmp_path_factory.mktemp("task") / "demo"
    shutil.copytree(task_folder, root, symlinks=True)
    (root / "tests" / "sub").mkdir(exist_ok=True)
    (root / "tests" / "sub" / "data.txt").write_text("x\n", encoding="utf-8")
    every_file = task_digest(root).files
    (root / where / ".harborignore").write_text(rules, encoding="utf-8")
    task = bounded(resolve, root)
    one_line(task.config.refused)
    digest = bounded(task_digest, root)
    assert not any(name.endswith(".harborignore") for name in digest.files)
    assert "task.toml" in digest.files
    lines = rules.splitlines()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pathspec's own regexes warn of some brackets
        try:
            spec = pathspec.GitIgnoreSpec.from_lines(lines)
        except (ValueError, re.error):
            assert IgnoreRules(lines, git_flavour=True).refused is not None
            return
    assert list(digest.files) == [name for name in every_file if not _harbor_excludes(name, where, spec)]
