"""The SquashFS of an image: what ch-run needs is in it, the same image gives the same bytes,
and the engine's export, hostile input, cannot write outside the unpacked tree."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ngc_builder.publish.squashfs import SquashfsError, make_squashfs, pseudo_files, unpack
from tests.unit.fake_engine import FakeClient, FakeEngine
from tests.unit.tar_archives import archive

pytestmark = pytest.mark.unit
needs_squashfs_tools = pytest.mark.skipif(shutil.which("mksquashfs") is None,
                                          reason="squashfs-tools missing: make runtime")


def tar_of(members: list[tuple[str, bytes | None, str]]) -> bytes:
    return archive(*members).getvalue()


def test_a_hostile_export_writes_nothing_outside_the_tree(tmp_path: Path) -> None:
    outside, root = tmp_path / "outside", tmp_path / "root"
    outside.mkdir()
    root.mkdir()
    hostile = tar_of([
        ("../escaped", b"x", ""),                           # up and out
        (str(outside / "absolute"), b"x", ""),              # an absolute name
        ("etc", None, str(outside)),                        # a folder that is a link out...
        ("etc/hosts", b"x", ""),                            # ...written through
        ("usr/lib/up", None, "../../../outside"),           # a relative link out
        ("usr/lib/up/planted", b"x", ""),
        ("usr/bin/python3", b"#!", ""),                     # an ordinary file
    ])
    with pytest.raises(SquashfsError):  # tar says what it refused, and fails
        unpack([hostile[:700], hostile[700:]], root)
    assert list(outside.iterdir()) == [] and not (tmp_path / "escaped").exists()
    assert (root / "usr/bin/python3").read_bytes() == b"#!"


def test_the_added_files_are_pseudo_files_never_written_into_the_tree(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "usr").mkdir(parents=True)
    (root / "etc").symlink_to("/etc")  # a link out: nothing may be created through it
    pseudo = pseudo_files(root, ["PATH=/opt/venv/bin:/usr/bin", "A=$HOME"], tmp_path / "env")
    lines = pseudo.splitlines()
    assert "ch d 755 root root" in lines and "mnt/9 d 755 root root" in lines
    assert "usr d 755 root root" not in lines and "etc d 755 root root" not in lines
    assert (tmp_path / "env").read_text() == "PATH=/opt/venv/bin:/usr/bin\nA=$HOME\n"
    assert sorted(path.name for path in root.iterdir()) == ["etc", "usr"]


def test_an_image_that_has_its_own_ch_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "ch").mkdir()
    with pytest.raises(SquashfsError, match="already has /ch"):
        pseudo_files(tmp_path, [], tmp_path / "env")


def engine_exporting(members: list[tuple[str, bytes | None, str]],
                     env: list[str]) -> FakeClient:
    engine = FakeEngine()
    engine.images["sha256:img"] = {"name": "jax", "labels": {}, "env": env}
    engine.exports["sha256:img"] = tar_of(members)
    return FakeClient(engine)


def test_an_env_value_with_a_newline_is_refused(tmp_path: Path) -> None:
    engine = engine_exporting([("usr", None, "")], ["A=1\nB=2"])
    with pytest.raises(SquashfsError, match="newline"):
        make_squashfs(engine, "sha256:img", tmp_path / "out.sqfs", 0, tmp_path)


@needs_squashfs_tools
def test_the_same_image_gives_the_same_bytes_with_what_ch_run_needs(tmp_path: Path) -> None:
    members = [("usr", None, ""), ("usr/bin", None, ""), ("usr/bin/tool", b"#!/bin/sh\n", ""),
               ("bin", None, "usr/bin"), ("etc", None, ""), (".dockerenv", b"", "")]
    made = []
    for attempt in ("a", "b"):
        scratch = tmp_path / attempt
        scratch.mkdir()
        engine = engine_exporting(members, ["PATH=/usr/bin", "LANG=C.UTF-8"])
        made.append(make_squashfs(engine, "sha256:img", tmp_path / f"{attempt}.sqfs",
                                  1700000000, scratch))
        assert sorted(path.name for path in scratch.iterdir()) == ["environment", "pseudo"]
    assert made[0].digest == made[1].digest and made[0].size == made[1].size
    listing = subprocess.run(["unsquashfs", "-lls", str(made[0].path)], capture_output=True,
                             text=True, check=True).stdout
    for path in ("ch/environment", "etc/hosts", "etc/resolv.conf", "mnt/0", "proc", "dev"):
        assert f"squashfs-root/{path}" in listing
    assert ".dockerenv" not in listing and "2023-11-14 22:13" in listing  # every time the epoch
    content = subprocess.run(["unsquashfs", "-cat", str(made[0].path), "ch/environment"],
                             capture_output=True, text=True, check=True).stdout
    assert content == "PATH=/usr/bin\nLANG=C.UTF-8\n"
