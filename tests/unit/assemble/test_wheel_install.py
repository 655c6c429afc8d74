"""The host-side wheel installer on made-up wheels: where each kind of member lands, the
launchers, the scripts' interpreter, RECORD, a stable tar, and the hostile wheels it refuses
(a path out of the venv, a bad hash, a lying size, the venv's own interpreter replaced)."""

from __future__ import annotations

import base64
import hashlib
import io
import tarfile
import zipfile
from pathlib import Path

import pytest

from ngc_builder.assemble.wheel_install import VenvTree, WheelError, install_wheels
from ngc_builder.lock.models import PipPackage

pytestmark = pytest.mark.unit

TREE = VenvTree(python="3.13", epoch=86400)
SITE = "opt/venv/lib/python3.13/site-packages"
ENTRY_POINTS = "[console_scripts]\ndemo = demo.cli:main\ndemo-sub = demo:tools.run\n"


def make_wheel(folder: Path, members: dict[str, bytes], name: str = "demo",
               executable: tuple[str, ...] = ()) -> PipPackage:
    info = f"{name}-1.0.dist-info"
    members = {f"{info}/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: false\n",
               f"{info}/METADATA": f"Name: {name}\nVersion: 1.0\n".encode(),
               f"{info}/RECORD": b"stale,,\n", **members}
    path = folder / f"{name}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for member, content in members.items():
            entry = zipfile.ZipInfo(member)
            entry.external_attr = (0o755 if member in executable else 0o644) << 16
            wheel.writestr(entry, content)
    return PipPackage(name=name, version="1.0", file=path.name,
                      sha256=hashlib.sha256(path.read_bytes()).hexdigest())


def installed(tmp_path: Path, *packages: PipPackage) -> dict[str, tarfile.TarInfo]:
    out = tmp_path / "venv.tar"
    install_wheels(list(packages), lambda p: tmp_path / p.file, TREE, out)
    with tarfile.open(out) as tar:
        return {entry.name: entry for entry in tar.getmembers()}


def read(tmp_path: Path, name: str) -> bytes:
    with tarfile.open(tmp_path / "venv.tar") as tar:
        stream = tar.extractfile(name)
        assert stream is not None
        return stream.read()


def test_each_member_lands_where_pip_puts_it(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, {
        "demo/__init__.py": b"", "demo/_ext.so": b"\x7fELF", "demo/tool": b"#!/bin/sh\n",
        "demo-1.0.data/scripts/run-demo": b"#!python -u\nprint(1)\n",
        "demo-1.0.data/data/share/demo/x.json": b"{}",
        "demo-1.0.data/headers/demo.h": b"int x;",
        "demo-1.0.data/platlib/demo_plat.py": b"",
        "demo-1.0.dist-info/entry_points.txt": ENTRY_POINTS.encode(),
    }, executable=("demo/tool",))
    entries = installed(tmp_path, wheel)
    assert {f"{SITE}/demo/__init__.py", f"{SITE}/demo/_ext.so", f"{SITE}/demo_plat.py",
            "opt/venv/bin/run-demo", "opt/venv/share/demo/x.json",
            "opt/venv/include/site/python3.13/demo/demo.h",
            "opt/venv/bin/demo", "opt/venv/bin/demo-sub"} <= set(entries)
    assert entries[f"{SITE}/demo/tool"].mode == 0o755
    assert entries[f"{SITE}/demo/__init__.py"].mode == 0o644
    assert read(tmp_path, "opt/venv/bin/run-demo") == b"#!/opt/venv/bin/python -u\nprint(1)\n"
    launcher = read(tmp_path, "opt/venv/bin/demo-sub").decode()
    assert launcher.startswith("#!/opt/venv/bin/python\n")
    assert "from demo import tools" in launcher and "sys.exit(tools.run())" in launcher
    assert all(e.uid == 0 and e.mtime == 86400 for e in entries.values())
    assert entries["opt/venv/bin"].isdir() and entries[f"{SITE}/demo"].isdir()


def test_record_lists_every_file_with_its_hash(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, {"demo/__init__.py": b"x = 1\n",
                                  "demo-1.0.data/scripts/s": b"#!python\n",
                                  "demo-1.0.dist-info/entry_points.txt": ENTRY_POINTS.encode()})
    installed(tmp_path, wheel)
    rows = read(tmp_path, f"{SITE}/demo-1.0.dist-info/RECORD").decode().splitlines()
    paths = [row.split(",")[0] for row in rows]
    assert "stale" not in paths and "demo-1.0.dist-info/RECORD" in paths
    assert {"../../../bin/s", "../../../bin/demo", "demo-1.0.dist-info/INSTALLER"} <= set(paths)
    digest = base64.urlsafe_b64encode(hashlib.sha256(b"x = 1\n").digest()).rstrip(b"=")
    assert f"demo/__init__.py,sha256={digest.decode()},6" in rows


def test_the_same_wheels_give_the_same_bytes(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, {"demo/__init__.py": b""})
    other = make_wheel(tmp_path, {"other/__init__.py": b""}, name="other")
    install_wheels([other, wheel], lambda p: tmp_path / p.file, TREE, tmp_path / "a.tar")
    install_wheels([wheel, other], lambda p: tmp_path / p.file, TREE, tmp_path / "b.tar")
    assert (tmp_path / "a.tar").read_bytes() == (tmp_path / "b.tar").read_bytes()


@pytest.mark.parametrize("member", ["../../etc/passwd", "/etc/passwd", "demo/../../x",
                                    "demo\\..\\x", "demo//x"])
def test_a_member_that_could_leave_its_place_is_refused(tmp_path: Path, member: str) -> None:
    wheel = make_wheel(tmp_path, {member: b"owned"})
    with pytest.raises(WheelError, match="is not a plain relative path"):
        installed(tmp_path, wheel)
    assert not (tmp_path / "venv.tar").exists()
    assert not list(tmp_path.glob("*.partial"))


def test_a_wheel_that_replaces_the_interpreter_is_refused(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, {"demo-1.0.data/scripts/python": b"#!/bin/sh\nexit 0\n"})
    with pytest.raises(WheelError, match="would replace the venv's own /opt/venv/bin/python"):
        installed(tmp_path, wheel)


def test_a_wheel_whose_bytes_are_not_the_lock_s_is_refused(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, {"demo/__init__.py": b""})
    (tmp_path / wheel.file).write_bytes((tmp_path / wheel.file).read_bytes() + b"\0")
    with pytest.raises(WheelError, match="its sha256 is not the lock's"):
        installed(tmp_path, wheel)


def test_a_member_larger_than_it_says_is_refused(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, {"demo/__init__.py": b"0123456789"})
    path = tmp_path / wheel.file
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
        header = archive.getinfo("demo/__init__.py").header_offset
    data[header + 22:header + 26] = (4).to_bytes(4, "little")  # local header: size 4
    for at in _central_entries(bytes(data), b"demo/__init__.py"):
        data[at + 24:at + 28] = (4).to_bytes(4, "little")  # and the central directory's
    path.write_bytes(bytes(data))
    lying = wheel.model_copy(update={"sha256": hashlib.sha256(bytes(data)).hexdigest()})
    with pytest.raises(WheelError):
        installed(tmp_path, lying)


def _central_entries(data: bytes, name: bytes) -> list[int]:
    found, at = [], data.find(b"PK\x01\x02")
    while at != -1:
        length = int.from_bytes(data[at + 28:at + 30], "little")
        if data[at + 46:at + 46 + length] == name:
            found.append(at)
        at = data.find(b"PK\x01\x02", at + 4)
    return found


def test_an_entry_point_that_is_not_module_attribute_is_refused(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, {"demo-1.0.dist-info/entry_points.txt":
                                  b"[console_scripts]\nx = os; rm -rf /\n"})
    with pytest.raises(WheelError, match="is not module:attribute"):
        installed(tmp_path, wheel)
