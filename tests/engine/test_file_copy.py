"""The copy sandbox's file copy (engine/sandbox/file_copy.py), by both of its ways: the
kernel's ``copy_file_range`` and the plain reads and writes that a system
without it (macOS) or a file system that refuses it gets."""

from __future__ import annotations

import os

import pytest

from verifier_tui.engine.sandbox import file_copy


@pytest.fixture(params=["kernel", "reads and writes"])
def way(request, monkeypatch):
    if request.param == "kernel" and not hasattr(os, "copy_file_range"):
        pytest.skip("this system has no copy_file_range")
    monkeypatch.setattr(file_copy, "_kernel_copy", request.param == "kernel")
    return request.param


def test_a_copy_has_the_bytes_mode_and_time_of_its_source(tmp_path, way):
    src, dst = tmp_path / "src.bin", tmp_path / "dst.bin"
    data = os.urandom(3 * 1024 * 1024 + 17)  # more than one chunk, not a multiple of one
    src.write_bytes(data)
    os.chmod(src, 0o640)
    os.utime(src, ns=(1_600_000_000_000_000_001, 1_500_000_000_123_456_789))
    file_copy.copy_file(str(src), str(dst), replace=False)
    assert dst.read_bytes() == data
    assert dst.stat().st_mode & 0o777 == 0o640 | 0o600  # the owner may always read and write the copy
    assert dst.stat().st_mtime_ns == 1_500_000_000_123_456_789
    src.write_bytes(b"shorter now")
    file_copy.copy_file(str(src), str(dst), replace=True)
    assert dst.read_bytes() == b"shorter now"


def test_a_sparse_file_stays_sparse(tmp_path, way):
    src, dst = tmp_path / "sparse.bin", tmp_path / "copy.bin"
    with open(src, "wb") as handle:
        handle.write(b"start")
        handle.seek(256 * 1024**2)
        handle.write(b"end")
    if src.stat().st_blocks * 512 >= src.stat().st_size:
        pytest.skip("this file system keeps no holes")
    file_copy.copy_file(str(src), str(dst), replace=False)
    assert dst.stat().st_size == src.stat().st_size
    assert dst.stat().st_blocks * 512 < 1024**2  # the hole was not written out
    with open(dst, "rb") as handle:
        assert handle.read(5) == b"start"
        handle.seek(256 * 1024**2)
        assert handle.read() == b"end"
