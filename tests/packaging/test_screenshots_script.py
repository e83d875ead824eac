"""``scripts/screenshots.py``, the README's way to make its pictures again, in
a clone as a newcomer has it."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

import pytest

import tests.helpers.harbor as harbor
from tests.helpers.tasks import REPO


def _script(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location("screenshots_script", REPO / "scripts" / "screenshots.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_without_the_genuine_jobs_it_says_which_pictures_need_them_before_it_makes_any(tmp_path, monkeypatch, capsys):
    """In a clone without ``../shared/harbor-0.26`` (anyone's but this
    machine's), the README's command rewrote the task pictures, then ended
    with `../shared/harbor-0.26 is not here`, exit 1: half of screenshots/
    made again, and nothing said which pictures were left or how to make the rest."""
    monkeypatch.setattr(harbor, "HARBOR_REAL", None)
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as ended:
        _script(monkeypatch).main(["--out", str(out), "passing-run", "job-overview"])
    assert ended.value.code == 2
    assert not out.exists() or not any(out.iterdir())
    said = capsys.readouterr().err
    assert "job-overview" in said and "../shared/harbor-0.26" in said, said
    assert "passing-run" in said, said  # the pictures it can make, by name
