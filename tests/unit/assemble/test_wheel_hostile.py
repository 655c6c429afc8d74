"""Hostile wheels made here and handed to the host-side installer: members and launchers that
would replace or shadow what the venv made itself (its interpreter links, pyvenv.cfg, its
folders), zip bombs honest and lying about their size, damaged members. Each is refused in one
line naming the wheel and the member, and no tar is left."""

from __future__ import annotations

import hashlib
import io
import time
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from ngc_builder.assemble.wheel_install import MAX_WHEEL_BYTES, VenvTree, WheelError, install_wheels
from ngc_builder.lock.models import PipPackage

pytestmark = pytest.mark.unit

TREE = VenvTree(python="3.13", epoch=86400)
MiB = 1024**2
BOMB = 200 * MiB  # inflated; the wheel holds under 1 MB


def make_wheel(folder: Path, members: dict[str, bytes], name: str = "demo") -> PipPackage:
    info = f"{name}-1.0.dist-info"
    path = folder / f"{name}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as wheel:
        for member, content in {f"{info}/WHEEL": b"Wheel-Version: 1.0\n", **members}.items():
            wheel.writestr(member, content)
    return _locked(path, name)


def _locked(path: Path, name: str = "demo") -> PipPackage:
    return PipPackage(name=name, version="1.0", file=path.name,
                      sha256=hashlib.sha256(path.read_bytes()).hexdigest())


def install(folder: Path, *packages: PipPackage, limit: int = MAX_WHEEL_BYTES) -> Path:
    out = folder / "venv.tar"
    install_wheels(list(packages), lambda p: folder / p.file, TREE, out, limit)
    return out


def refused(folder: Path, *packages: PipPackage, limit: int = MAX_WHEEL_BYTES) -> str:
    """The one line a refusal says; and nothing left where the tar would be."""
    with pytest.raises(WheelError) as caught:
        install(folder, *packages, limit=limit)
    assert not (folder / "venv.tar").exists() and not list(folder.glob("*.partial"))
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{packages[-1].file}: ")
    return message


DATA = "demo-1.0.data"


@pytest.mark.parametrize(("member", "said"), [
    (f"{DATA}/scripts/python3/x",
     "would put a folder where the venv's own /opt/venv/bin/python3 (its interpreter link) is"),
    (f"{DATA}/data/bin/python3.13/x", "the venv's own /opt/venv/bin/python3.13"),
    (f"{DATA}/scripts/python", "would replace the venv's own /opt/venv/bin/python "
                               "(its interpreter link)"),
    (f"{DATA}/data/pyvenv.cfg", "would replace the venv's own /opt/venv/pyvenv.cfg "
                                "(its configuration)"),
    (f"{DATA}/data/pyvenv.cfg/x", "would put a folder where the venv's own "
                                  "/opt/venv/pyvenv.cfg (its configuration) is"),
    (f"{DATA}/data/bin", "would put a file where the venv's folder /opt/venv/bin is"),
    (f"{DATA}/data/lib/python3.13/site-packages", "a file where the venv's folder "
                                                  "/opt/venv/lib/python3.13/site-packages"),
    (f"{DATA}/data/lib64/x", "the venv's own /opt/venv/lib64 (its lib64 link)"),
    (f"{DATA}/scripts/activate", "the venv's own /opt/venv/bin/activate (an activate script)"),
    (f"{DATA}/data/bin/pip3", "the venv's own /opt/venv/bin/pip3 (pip's launcher)"),
    ("demo/x\n/opt/venv/bin/python,,", "is not a plain relative path"),  # a forged RECORD row
])
def test_a_member_over_what_the_venv_made_is_refused(tmp_path: Path, member: str,
                                                     said: str) -> None:
    wheel = make_wheel(tmp_path, {"demo/__init__.py": b"", member: b"#!/bin/sh\nexit 0\n"})
    message = refused(tmp_path, wheel)
    assert said in message
    assert message.startswith(f"{wheel.file}: {member if member.isprintable() else repr(member)}: ")


def test_a_launcher_over_the_interpreter_is_refused(tmp_path: Path) -> None:
    points = b"[console_scripts]\npython3 = demo:main\n"
    wheel = make_wheel(tmp_path, {"demo-1.0.dist-info/entry_points.txt": points})
    assert refused(tmp_path, wheel) == (
        f"{wheel.file}: demo-1.0.dist-info/entry_points.txt: python3: would replace the venv's "
        "own /opt/venv/bin/python3 (its interpreter link)")


def test_pip_s_own_wheel_may_write_pip_s_launchers(tmp_path: Path) -> None:
    points = b"[console_scripts]\npip = pip._internal.cli.main:main\n"
    wheel = make_wheel(tmp_path, {"pip-1.0.dist-info/entry_points.txt": points}, name="pip")
    install(tmp_path, wheel)
    other = make_wheel(tmp_path, {"demo-1.0.dist-info/entry_points.txt": points})
    assert "(pip's launcher)" in refused(tmp_path, other)


def test_a_refused_wheel_leaves_no_tar_not_even_an_earlier_one(tmp_path: Path) -> None:
    good = make_wheel(tmp_path, {"good/__init__.py": b""}, name="good")
    install(tmp_path, good)
    bad = make_wheel(tmp_path, {f"{DATA}/scripts/python3/x": b""})
    refused(tmp_path, good, bad)


@pytest.fixture(scope="module")
def bomb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel under 1 MB whose one member inflates to 200 MB of zeros."""
    path = tmp_path_factory.mktemp("bomb") / "demo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as wheel:
        wheel.writestr("demo-1.0.dist-info/WHEEL", b"Wheel-Version: 1.0\n")
        with wheel.open("demo/zeros.bin", "w") as member:
            for _ in range(BOMB // MiB):
                member.write(bytes(MiB))
    assert path.stat().st_size < MiB
    return path


def _measured(folder: Path, package: PipPackage, limit: int) -> tuple[str | None, float, int]:
    """What the install said (None: installed), its seconds, and its peak of memory."""
    tracemalloc.start()
    started = time.monotonic()
    try:
        install(folder, package, limit=limit)
        said = None
    except WheelError as exc:
        said = str(exc)
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return said, time.monotonic() - started, peak


def test_a_bomb_past_the_bound_is_refused_before_it_inflates(tmp_path: Path, bomb: Path) -> None:
    (tmp_path / bomb.name).write_bytes(bomb.read_bytes())
    said, seconds, peak = _measured(tmp_path, _locked(bomb), limit=64 * MiB)
    assert said == (f"{bomb.name}: demo/zeros.bin: would unpack the wheel past 64 MiB "
                    "(the bound for one wheel)")
    assert seconds < 1 and peak < 4 * MiB
    assert not (tmp_path / "venv.tar").exists()


def test_a_bomb_within_the_bound_streams_in_little_memory(tmp_path: Path, bomb: Path) -> None:
    """Before: read whole (twice over, 400 MB for this one; MemoryError at 1.2 GB)."""
    (tmp_path / bomb.name).write_bytes(bomb.read_bytes())
    said, _, peak = _measured(tmp_path, _locked(bomb), limit=MAX_WHEEL_BYTES)
    assert said is None and peak < 8 * MiB
    assert (tmp_path / "venv.tar").stat().st_size > BOMB


def _declare(path: Path, member: str, *, size: int | None = None, crc: int | None = None) -> None:
    """The zip's declared size or CRC of `member` rewritten, in its local header and in the
    central directory alike, as a hostile wheel would be made."""
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
        local = archive.getinfo(member).header_offset
    central = _central_entry(bytes(data), member.encode())
    for at, field in ((local + 14, crc), (central + 16, crc), (local + 22, size),
                      (central + 24, size)):
        if field is not None:
            data[at:at + 4] = field.to_bytes(4, "little")
    path.write_bytes(bytes(data))


def _central_entry(data: bytes, name: bytes) -> int:
    at = data.find(b"PK\x01\x02")
    while data[at + 46:at + 46 + int.from_bytes(data[at + 28:at + 30], "little")] != name:
        at = data.find(b"PK\x01\x02", at + 4)
    return at


def test_a_bomb_that_declares_1_kib_is_refused_after_1_kib(tmp_path: Path, bomb: Path) -> None:
    lying = tmp_path / bomb.name
    lying.write_bytes(bomb.read_bytes())
    _declare(lying, "demo/zeros.bin", size=1024)
    said, seconds, peak = _measured(tmp_path, _locked(lying), limit=MAX_WHEEL_BYTES)
    assert said == (f"{bomb.name}: demo/zeros.bin: inflates past the 1024 bytes the zip "
                    "declares for it")
    assert seconds < 1 and peak < 4 * MiB


def test_a_member_shorter_than_it_declares_is_refused(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, {"demo/x.py": b"0123456789"})
    _declare(tmp_path / wheel.file, "demo/x.py", size=11)
    assert refused(tmp_path, _locked(tmp_path / wheel.file)).endswith(
        "demo/x.py: inflates to 10 bytes, not the 11 the zip declares for it")


def test_a_member_whose_crc_is_not_its_own_is_refused(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, {"demo/x.py": b"0123456789"})
    _declare(tmp_path / wheel.file, "demo/x.py", crc=1)
    assert refused(tmp_path, _locked(tmp_path / wheel.file)).endswith(
        "demo/x.py: its CRC-32 is not the one the zip declares")


def test_a_huge_entry_points_file_is_not_read(tmp_path: Path) -> None:
    text = b"[console_scripts]\n" + b"#" * (5 * MiB)
    wheel = make_wheel(tmp_path, {"demo-1.0.dist-info/entry_points.txt": text})
    assert "entry_points.txt: declares 5242898 bytes (at most 4194304 read)" in refused(
        tmp_path, wheel)


def test_a_damaged_member_is_named(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, {"demo/x.py": b"print('hello')\n" * 100})
    path = tmp_path / wheel.file
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
        info = archive.getinfo("demo/x.py")
    extra = int.from_bytes(data[info.header_offset + 28:info.header_offset + 30], "little")
    start = info.header_offset + 30 + len(info.filename) + extra
    data[start:start + 4] = b"\xff\xff\xff\xff"  # not a deflate stream any more
    path.write_bytes(bytes(data))
    assert f"{wheel.file}: demo/x.py: " in refused(tmp_path, _locked(path))
