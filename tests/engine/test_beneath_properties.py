"""The reader of a folder someone else wrote (``untrusted`` with ``beneath``),
on random trees of files, folders and links (relative, absolute, dangling,
loops, out of the folder and back in): it reads a file only when every name
on the way to it is a real folder or file of the folder's own, never a file
outside it, says a link as a link, and never raises."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from verifier_tui.engine import untrusted
from verifier_tui.engine.plain import one_line

SECRET = b"sekrit-123"
NAMES = ("a", "b", "c")
SETTINGS = settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

#: Where a link may point: within the folder, out of it, nowhere, at itself.
TARGETS = st.sampled_from(
    [
        "a",
        "b/c",
        ".",
        "..",
        "../outside",
        "../outside/secret",
        "../inside/a",
        "{outside}",
        "{outside}/secret",
        "{inside}",
        "{inside}/b",
        "/proc/self/environ",
        "/dev/zero",
        "nothing-here",
        "{self}",
    ]
)
ENTRY = st.one_of(
    st.just(("file", None)),
    st.just(("folder", None)),
    TARGETS.map(lambda target: ("link", target)),
)
PATHS = st.lists(st.sampled_from(NAMES), min_size=1, max_size=3).map(tuple)
TREES = st.lists(st.tuples(PATHS, ENTRY), max_size=12)


def build(root: Path, tree: list) -> tuple[Path, Path]:
    """``root/inside`` holding ``tree`` (each entry made where its folder is a
    real folder; a name already taken is left as it is), and ``root/outside``
    holding the secret."""
    if root.exists():
        shutil.rmtree(root)
    inside, outside = root / "inside", root / "outside"
    inside.mkdir(parents=True)
    outside.mkdir()
    (outside / "secret").write_bytes(SECRET)
    for parts, (kind, target) in tree:
        path = inside.joinpath(*parts)
        if os.path.lexists(path) or not _real_folder(path.parent, inside):
            continue
        if kind == "file":
            path.write_bytes(b"inside:" + "/".join(parts).encode())
        elif kind == "folder":
            path.mkdir()
        else:
            path.symlink_to(target.format(outside=outside, inside=inside, self=path))
    return inside, outside


def _real_folder(path: Path, inside: Path) -> bool:
    """Whether every name from ``inside`` down to ``path`` is a folder, no link on the way."""
    for depth in range(len(path.relative_to(inside).parts) + 1):
        at = inside.joinpath(*path.relative_to(inside).parts[:depth])
        try:
            if not stat.S_ISDIR(os.lstat(at).st_mode):
                return False
        except OSError:
            return False
    return True


def _linked_on_the_way(path: Path, inside: Path) -> bool:
    parts = path.relative_to(inside).parts
    for depth in range(1, len(parts) + 1):
        try:
            if stat.S_ISLNK(os.lstat(inside.joinpath(*parts[:depth])).st_mode):
                return True
        except OSError:
            return False
    return False


@SETTINGS
@given(tree=TREES, asked=PATHS)
def test_reading_beneath_a_folder_never_leaves_it_nor_follows_a_link(tree, asked, tmp_path):
    inside, _ = build(tmp_path / "root", tree)
    path = inside.joinpath(*asked)
    linked = _linked_on_the_way(path, inside)

    found = untrusted.read_bytes(path, 1024, keep="head", beneath=inside)
    assert found.state in ("ok", "missing", "not-a-file", "too-big", "link", "unreadable")
    assert found.problem is None or "\n" not in found.problem
    if found.ok:
        assert not linked and _real_folder(path.parent, inside)
        assert found.data == b"inside:" + "/".join(asked).encode()
    assert found.data is None or SECRET not in found.data
    assert (found.state == "link") == linked, (found, linked)
    if linked:
        assert found.target is not None and " is a link to " in (found.problem or "")

    looked = untrusted.look(path, inside)
    if isinstance(looked, os.stat_result):
        assert not linked and not stat.S_ISLNK(looked.st_mode)
    else:
        assert (looked.state == "link") == linked


@SETTINGS
@given(asked=st.sampled_from(["..", "../outside/secret", "a/../../outside/secret", "/etc/passwd"]))
def test_a_path_out_of_the_folder_is_refused(asked, tmp_path):
    inside, outside = build(tmp_path / "root", [])
    found = untrusted.read_bytes(inside / asked, 1024, beneath=inside)
    assert not found.ok and found.data is None
    assert isinstance(untrusted.look(inside / asked, inside), untrusted.Read)


_KEPT_BESIDE = "\u200c\u200d\ufe0e\ufe0f"  # kept beside what they join (an emoji, a Persian word)


@SETTINGS
@given(target=st.text(max_size=300).filter(lambda t: t and "\x00" not in t))
@example(target="0" * 18 + "\x1f" * 11 + "\U0001239a" * 12)  # escapes past the cut: it was over by one
def test_a_links_target_is_shown_harmlessly(target, tmp_path):
    """Whatever a link's target holds (escape codes, newlines, bidi controls,
    bytes that are not UTF-8), it is shown on one line, cut, with nothing a
    terminal would act on: what is not printable is spelled as every name is,
    but for what a name keeps as written (a soft hyphen, which terminals draw, an
    emoji newer than Python; a joiner, a selector or a flag's tag beside what it joins)."""
    folder = tmp_path / "f"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    try:
        (folder / "reward.json").symlink_to(target)
    except OSError:  # a target longer than the system takes
        return
    found = untrusted.read_bytes(folder / "reward.json", 10, beneath=folder)
    assert found.state == "link" and found.target is not None
    kept = [c for c in found.target if not c.isprintable()]
    assert all(c in _KEPT_BESIDE or 0xE0020 <= ord(c) <= 0xE007F or one_line(c) == c for c in kept), found.target
    assert len(found.target) <= untrusted.TARGET_CHARS + 1


@SETTINGS
@given(tree=TREES, asked=PATHS)
@example(tree=[(("a",), ("file", None)), (("c",), ("link", "../inside/a"))], asked=("c",))  # out and back in
def test_a_path_through_links_inside_the_folder_is_the_file_they_lead_to(tree, asked, tmp_path):
    """``followed_inside``: the file a name of the folder is once each link on
    the way is followed (coverage counts a helper imported through
    ``tests/helper.py -> real_helper.py`` for ``real_helper.py``), or None when a
    link leads out of the folder, even to come back, or to nothing, or loops."""
    inside, outside = build(tmp_path / "root", tree)
    path = inside.joinpath(*asked)
    found = untrusted.followed_inside(path, inside)
    real = Path(os.path.realpath(path))
    if found is None:
        # only when following leaves the folder, finds nothing, or is the folder itself
        lead_in = real.is_relative_to(inside) and real != inside and os.path.exists(path)
        assert not lead_in or _leaves_on_the_way(path, inside), (path, real)
        return
    assert found.is_relative_to(inside) and not _linked_on_the_way(found, inside)
    assert Path(os.path.realpath(found)) == real
    if not _linked_on_the_way(path, inside):
        assert found == path
    read = untrusted.read_bytes(found, 1024, beneath=inside)
    assert read.data is None or SECRET not in read.data


def _leaves_on_the_way(path: Path, inside: Path, hops: int = 40) -> bool:
    """Whether some link followed on the way to ``path`` leads out of
    ``inside`` before it comes back (``realpath`` of each link's own place)."""
    parts = path.relative_to(inside).parts
    for depth in range(1, len(parts) + 1):
        at = inside.joinpath(*parts[:depth])
        if os.path.islink(at):
            target = os.readlink(at)
            step = Path(target) if os.path.isabs(target) else Path(os.path.realpath(at.parent)) / target
            if not Path(os.path.normpath(step)).is_relative_to(inside) or hops <= 0:
                return True
            if not os.path.isabs(target) and _climbs_out(Path(os.path.realpath(at.parent)), target, inside):
                return True  # "../inside/a": out of the folder on the way, whatever the end
            if _leaves_on_the_way(Path(os.path.normpath(step)), inside, hops - 1):
                return True
    return False


def _climbs_out(folder: Path, target: str, inside: Path) -> bool:
    """Whether a relative link's own text, read from ``folder``, goes above ``inside`` at some step."""
    try:
        depth = len(folder.relative_to(os.path.realpath(inside)).parts)
    except ValueError:
        return True
    for part in Path(target).parts:
        depth += -1 if part == ".." else 0 if part == "." else 1
        if depth < 0:
            return True
    return False


def test_links_followed_inside_the_folder_and_no_further(tmp_path):
    inside, outside = build(tmp_path / "root", [])
    (inside / "real.py").write_text("x = 1\n")
    (inside / "pkg").mkdir()
    (inside / "pkg" / "mod.py").write_text("y = 2\n")
    links = {
        "helper.py": "real.py",  # a file beside it
        "chain.py": "helper.py",  # a link to a link
        "absolute.py": str(inside / "real.py"),
        "lib": "pkg",  # a folder
        "up.py": "pkg/../real.py",
        "out.py": str(outside / "secret"),
        "out_and_back.py": "../inside/real.py",  # staging keeps it; here it leaves the folder
        "loop.py": "loop.py",
        "nothing.py": "missing.py",
    }
    for name, target in links.items():
        (inside / name).symlink_to(target)
    followed = {name: untrusted.followed_inside(inside / name, inside) for name in links}
    followed["lib/mod.py"] = untrusted.followed_inside(inside / "lib" / "mod.py", inside)
    assert followed == {
        "helper.py": inside / "real.py",
        "chain.py": inside / "real.py",
        "absolute.py": inside / "real.py",
        "lib": inside / "pkg",
        "up.py": inside / "real.py",
        "out.py": None,
        "out_and_back.py": None,
        "loop.py": None,
        "nothing.py": None,
        "lib/mod.py": inside / "pkg" / "mod.py",
    }
