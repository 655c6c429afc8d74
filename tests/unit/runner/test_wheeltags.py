"""`pip check`'s "not supported on this platform" for a wheel whose WHEEL tags are wrong but
whose machine code is right (NVIDIA's aarch64 nvidia-cusparselt-cu13 0.8.1 says
`Tag: py3-none-manylinux2014_sbsa`): excused only after reading every ELF header it installed;
a wheel with code for another machine, or none, stays a finding."""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import pytest

from ngc_builder.runner import core
from ngc_builder.runner.suite import Check, RunEnv, run_check
from ngc_builder.runner.wheeltags import elf_machine, mislabelled

pytestmark = pytest.mark.unit
AARCH64, X86_64 = 183, 62
LINE = "fake-cusparselt 0.8.1 is not supported on this platform"


def elf(machine: int, big_endian: bool = False) -> bytes:
    order = ">" if big_endian else "<"
    return (b"\x7fELF\x02" + (b"\x02" if big_endian else b"\x01") + b"\x01" + b"\x00" * 9
            + struct.pack(f"{order}HH", 3, machine) + b"\x00" * 40)


def installed(site: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, bytes],
              tag: str = "py3-none-manylinux2014_sbsa") -> None:
    """A distribution in `site` as pip installs one: its files, METADATA, WHEEL, RECORD."""
    info = site / "fake_cusparselt-0.8.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-cusparselt\n"
                                   "Version: 0.8.1\n")
    (info / "WHEEL").write_text(f"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: {tag}\n")
    for name, body in files.items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_bytes(body)
    record = [f"{name},," for name in files] + [f"{info.name}/{part},," for part in
                                                ("METADATA", "WHEEL", "RECORD")]
    (info / "RECORD").write_text("\n".join(record) + "\n")
    monkeypatch.syspath_prepend(str(site))


def test_elf_headers_are_read_in_either_byte_order(tmp_path: Path) -> None:
    for name, body, machine in (("le.so", elf(AARCH64), AARCH64),
                                ("be.so", elf(AARCH64, big_endian=True), AARCH64),
                                ("x.so", elf(X86_64), X86_64), ("text.py", b"print()\n", None),
                                ("short", b"\x7fELF", None)):
        (tmp_path / name).write_bytes(body)
        assert elf_machine(tmp_path / name) == machine, name
    assert elf_machine(tmp_path / "absent.so") is None


def test_a_mislabelled_wheel_with_this_machine_s_code_is_excused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    installed(tmp_path, monkeypatch, {"cusparselt/lib/libcusparseLt.so.0": elf(AARCH64),
                                      "cusparselt/__init__.py": b""})
    assert mislabelled(LINE, "aarch64") == ("fake-cusparselt 0.8.1: WHEEL says "
                                            "py3-none-manylinux2014_sbsa, its 1 ELF files are "
                                            "aarch64")


@pytest.mark.parametrize(("files", "line", "machine"), [
    ({"lib.so": bytes(elf(AARCH64))}, LINE, "x86_64"),  # arm64 code in an amd64 image
    ({"a.so": elf(AARCH64), "b.so": elf(X86_64)}, LINE, "aarch64"),  # some code is not ours
    ({"pure.py": b""}, LINE, "aarch64"),  # nothing to read: pip's word stands
    ({"lib.so": elf(AARCH64)}, "fake-cusparselt 0.8.2 is not supported on this platform",
     "aarch64"),  # another version than the one installed
    ({"lib.so": elf(AARCH64)}, "fake-cusparselt 0.8.1 requires numpy, which is not installed.",
     "aarch64"),
    ({"lib.so": elf(AARCH64)}, "absent-wheel 1.0 is not supported on this platform", "aarch64"),
    ({"lib.so": elf(AARCH64)}, LINE, "riscv64"),
])
def test_anything_else_stays_a_finding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       files: dict[str, bytes], line: str,
                                       machine: str) -> None:
    installed(tmp_path, monkeypatch, files)
    assert mislabelled(line, machine) is None


def _pip_check(monkeypatch: pytest.MonkeyPatch, output: str) -> tuple[str, str]:
    def run(*args: object, **kwargs: object) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess([], 1, output, "")
    monkeypatch.setattr(subprocess, "run", run)
    monkeypatch.setattr(core, "mislabelled", lambda line: mislabelled(line, "aarch64"))
    result = run_check(Check("pip.check", "T0", False, core.check_pip),
                       RunEnv({}, "none", False, False))
    return result.status, result.message


def test_pip_check_passes_when_every_line_is_a_mislabelled_wheel_and_names_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    installed(tmp_path, monkeypatch, {"lib.so": elf(AARCH64)})
    status, message = _pip_check(monkeypatch, LINE + "\n")
    assert status == "pass"
    assert "WHEEL says py3-none-manylinux2014_sbsa, its 1 ELF files are aarch64" in message
    status, message = _pip_check(monkeypatch, f"{LINE}\nfoo 1.0 has requirement bar<2, but "
                                               "you have bar 2.1.\n")
    assert status == "fail" and "foo 1.0 has requirement bar<2" in message
