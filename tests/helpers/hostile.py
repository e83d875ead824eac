"""What may be found where a file the tool did not write should be, put on disk,
and a reader's answer waited for with a bound: the property tests of those readers share them."""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path

from hypothesis import strategies as st

from tests.strategies import utf8_text

WAIT_S = 10

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | utf8_text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(utf8_text(max_size=12), inner, max_size=4),
    max_leaves=20,
)
#: A field of a document another program wrote: a value of each JSON kind, truthy where it can be (a
#: number where a list belongs is not taken for none, as 0 is), or any JSON.
ANY_FIELD = st.sampled_from([7, -1, 1.5, True, "text", {"k": 1}, [1], None]) | JSON_VALUES


def _deep(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def contents(real: bytes = b"") -> st.SearchStrategy:
    """What may be found where a file should be: ("bytes", data) or (kind, None)."""
    data = st.one_of(
        st.binary(max_size=300),
        JSON_VALUES.map(lambda v: json.dumps(v).encode()),
        st.integers(0, len(real)).map(lambda n: real[:n]),  # the real file cut short
        st.sampled_from([_deep(10_000), _deep(201), b'{"a":' * 3000, b"\xff\xfe{}", b"\x00" * 64, b"{}\n" * 3]),
    )
    kinds = st.sampled_from(["fifo", "folder", "dangling", "device", "missing"])
    return st.one_of(data.map(lambda d: ("bytes", d)), kinds.map(lambda k: (k, None)))


def put(path: Path, found: tuple) -> None:
    """Make ``path`` be what ``found`` says, whatever it was before."""
    kind, data = found
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "bytes":
        path.write_bytes(data)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "dangling":
        path.symlink_to(path.parent / "nothing-here")
    elif kind == "device":
        path.symlink_to("/dev/zero")  # endless: a reader that reads to the end never returns


def bounded(read, *args, **kwargs):
    """``read(*args)``'s value, failing the test when it has not returned within
    :data:`WAIT_S` (a reader blocked on a FIFO would hold the suite for ever)."""
    done: list = []

    def work() -> None:
        try:
            done.append(("value", read(*args, **kwargs)))
        except BaseException as exc:  # noqa: BLE001 - handed back to the test below
            done.append(("raised", exc))

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(WAIT_S)
    assert done, f"{read.__name__} did not return within {WAIT_S} s"
    how, value = done[0]
    if how == "raised":
        raise value
    return value


def one_line(problem: str | None) -> None:
    assert problem is None or (problem and "\n" not in problem), problem
