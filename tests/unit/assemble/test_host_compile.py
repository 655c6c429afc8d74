"""What the host platform's container gives back is read as hostile input: only .pyc files in
__pycache__ folders under site-packages are appended (no `..`, no links, no other files), each
root-owned and dated the lock's epoch; the venv copy keeps its links and re-roots at /opt."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path, PurePosixPath

import pytest

from ngc_builder.assemble.host_compile import _append_pycs, _Chunks, _rerooted, _write_sources
from tests.unit.tar_archives import archive

pytestmark = pytest.mark.unit

SITE = PurePosixPath("/opt/venv/lib/python3.13/site-packages")


def names(path: Path) -> dict[str, tarfile.TarInfo]:
    with tarfile.open(path) as tar:
        return {entry.name: entry for entry in tar.getmembers()}


def test_only_bytecode_in_pycache_is_appended(tmp_path: Path) -> None:
    venv = tmp_path / "venv.tar"
    with tarfile.open(venv, "w"):
        pass
    given = archive(("site-packages/jax/__pycache__", None, ""),
                    ("site-packages/jax/__pycache__/core.cpython-313.pyc", b"pyc", ""),
                    ("site-packages/jax/core.py", b"replaced source", ""),
                    ("site-packages/jax/__pycache__/evil.pyc", None, "/etc/shadow"),
                    ("site-packages/../../etc/__pycache__/x.pyc", b"out", ""),
                    ("other/__pycache__/y.pyc", b"elsewhere", ""))
    assert _append_pycs(given, venv, SITE, 86400) == 1
    entries = names(venv)
    assert set(entries) == {f"{str(SITE)[1:]}/jax/__pycache__",
                            f"{str(SITE)[1:]}/jax/__pycache__/core.cpython-313.pyc"}
    pyc = entries[f"{str(SITE)[1:]}/jax/__pycache__/core.cpython-313.pyc"]
    assert (pyc.uid, pyc.mtime, pyc.mode) == (0, 86400, 0o644)


def test_the_venv_copy_keeps_links_and_lands_under_opt(tmp_path: Path) -> None:
    given = archive(("venv", None, ""), ("venv/bin/python", None, "python3"),
                    ("venv/pyvenv.cfg", b"home = /usr/bin\n", ""),
                    ("venv/../etc/passwd", b"root::0:0::/:/bin/sh\n", ""),
                    ("elsewhere/x", b"", ""))
    assert _rerooted(given, tmp_path / "venv.tar", tmp_path, 86400) == 3
    entries = names(tmp_path / "venv.tar")
    assert set(entries) == {"opt", "opt/venv", "opt/venv/bin/python", "opt/venv/pyvenv.cfg"}
    # /opt itself dated the epoch: ADD would give the folder it adds to the build's time
    assert (entries["opt"].mtime, entries["opt"].uid, entries["opt"].mode) == (86400, 0, 0o755)
    assert entries["opt/venv/bin/python"].linkname == "python3"
    assert entries["opt/venv/pyvenv.cfg"].mtime == 123456789  # pip's .pyc stay valid
    assert entries["opt/venv/pyvenv.cfg"].uid == 0


def test_the_same_files_listed_in_another_order_give_the_same_tar_bytes(tmp_path: Path) -> None:
    """An engine lists a folder in its file system's order, which differs between data roots:
    two engines' base images had every amd64 layer the same and the arm64 venv layer not."""
    files = [("venv", None, ""), ("venv/bin", None, ""), ("venv/bin/python", None, "python3"),
             ("venv/pyvenv.cfg", b"home = /usr/bin\n", ""), ("venv/lib", None, "")]
    pycs = [("site-packages/a/__pycache__", None, ""),
            ("site-packages/a/__pycache__/x.cpython-313.pyc", b"x", ""),
            ("site-packages/b/__pycache__", None, ""),
            ("site-packages/b/__pycache__/y.cpython-313.pyc", b"y", "")]
    made: list[bytes] = []
    for order in (files, files[::-1]):
        out = tmp_path / f"venv-{len(made)}.tar"
        _rerooted(archive(*order), out, tmp_path, 86400)
        _append_pycs(archive(*(pycs if not made else pycs[::-1])), out, SITE, 86400)
        made.append(out.read_bytes())
    assert made[0] == made[1]
    assert sorted(tmp_path.iterdir()) == [tmp_path / "venv-0.tar", tmp_path / "venv-1.tar"]


def test_an_archive_past_its_bound_is_refused_before_it_fills_the_disk(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("ngc_builder.assemble.host_compile.MAX_SPOOL_BYTES", 4096)
    big = archive(("venv", None, ""), ("venv/blob", b"x" * 10_000, ""))
    with pytest.raises(tarfile.TarError, match="larger than"):
        _rerooted(big, tmp_path / "venv.tar", tmp_path, 86400)


def test_only_the_sources_go_to_the_compiler(tmp_path: Path) -> None:
    site = str(SITE)[1:]
    venv = tmp_path / "venv.tar"
    venv.write_bytes(archive((f"{site}/torch", None, ""), (f"{site}/torch/nn.py", b"x = 1", ""),
                             (f"{site}/torch/lib/libtorch.so", b"\x7fELF" * 1000, ""),
                             (f"{site}/torch/link.py", None, "/etc/passwd"),
                             ("opt/venv/bin/torchrun", b"#!python", "")).getvalue())
    _write_sources(venv, SITE, tmp_path / "sources.tar")
    entries = names(tmp_path / "sources.tar")
    assert set(entries) == {f"{site}/torch", f"{site}/torch/nn.py"}
    assert entries[f"{site}/torch/nn.py"].mtime == 123456789  # the .pyc header's source time


def test_the_chunks_read_back_whole_in_any_piece_size() -> None:
    data = bytes(range(256)) * 40
    reader = io.BufferedReader(_Chunks(iter([data[:3000], b"", data[3000:]])), buffer_size=7)
    assert b"".join(iter(lambda: reader.read(13), b"")) == data
