"""The readers of the task's files behind the sandbox's view (test.sh's
workspace path, the Dockerfile's WORKDIR, the lines that name /app): files
the tool did not write, so any bytes at all give an answer, never an exception."""

from __future__ import annotations

import os

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import utf8_text
from verifier_tui.engine.sandbox.view import image_workdir, sandbox_path_lines, workspace_path

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
    os.mkfifo(tmp_path / "environment-fifo")
    (tmp_path / "environment").mkdir()
    os.symlink(tmp_path / "environment-fifo", tmp_path / "environment" / "Dockerfile")
    assert image_workdir(tmp_path) == "/"  # a link to a FIFO: never opened, Docker's default
