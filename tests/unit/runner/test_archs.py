"""T0 cuda.archs: fat binary parsing on synthetic ELF files, and the coverage rules."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from ngc_builder.runner import archs
from ngc_builder.runner.archs import GpuCode, coverage_gaps, scan_library
from ngc_builder.runner.report import CheckResult
from ngc_builder.runner.suite import Check, RunEnv, run_check

pytestmark = pytest.mark.unit
PTX, SASS = archs.KIND_PTX, archs.KIND_SASS


def fatbin(entries: list[tuple[int, int]]) -> bytes:
    """One fat binary: a 16-byte header, then a 64-byte header + 8-byte payload per entry."""
    body = b""
    for kind, arch in entries:
        header = bytearray(64)
        struct.pack_into("<HHIQ", header, 0, kind, 0x101, 64, 8)
        struct.pack_into("<I", header, 28, arch)
        body += bytes(header) + b"\xee" * 8
    return struct.pack("<IHHQ", archs.FATBIN_MAGIC, 1, 16, len(body)) + body


def elf_with(section: bytes, name: str = ".nv_fatbin") -> bytes:
    """A minimal 64-bit little-endian ELF: null section, `name`, .shstrtab."""
    names = b"\0" + name.encode() + b"\0.shstrtab\0"
    data_at = 64
    names_at = data_at + len(section)
    table_at = names_at + len(names)
    header = bytearray(64)
    header[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<Q", header, 0x28, table_at)
    struct.pack_into("<HHH", header, 0x3A, 64, 3, 2)

    def entry(name_at: int, offset: int, size: int) -> bytes:
        return struct.pack("<IIQQQQ", name_at, 1, 0, 0, offset, size) + b"\0" * 24

    table = entry(0, 0, 0) + entry(1, data_at, len(section)) + entry(len(name) + 2, names_at,
                                                                   len(names))
    return bytes(header) + section + names + table


def write(tmp_path: Path, data: bytes, name: str = "libk.so") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_scan_reads_sass_and_ptx_from_several_fat_binaries(tmp_path: Path) -> None:
    padding = b"\0" * 8  # fat binaries are 8-byte aligned inside the section
    section = fatbin([(SASS, 80), (SASS, 90)]) + padding + fatbin([(PTX, 90), (SASS, 100)])
    code = scan_library(write(tmp_path, elf_with(section)))
    assert code.sass == {80, 90, 100} and code.ptx == {90}
    assert code.describe() == "sm_80, sm_90, sm_100, compute_90"


def test_files_without_gpu_code_scan_empty(tmp_path: Path) -> None:
    assert scan_library(write(tmp_path, elf_with(b"x" * 16, ".text"))).empty
    assert scan_library(write(tmp_path, b"not an elf at all", "x.so")).empty


def test_sass_runs_on_its_major_at_equal_or_higher_minor_only() -> None:
    code = GpuCode(sass={80})
    assert code.covers(80) == "SASS" and code.covers(86) == "SASS"
    assert code.covers(90) is None and code.covers(75) is None


def test_ptx_is_jit_compiled_for_newer_gpus() -> None:
    assert GpuCode(sass={80}, ptx={80}).covers(90) == "PTX JIT"
    assert GpuCode(ptx={90}).covers(80) is None


def test_release_targets_need_sass_but_the_present_gpu_may_use_ptx() -> None:
    code = {"/x/libtf.so": GpuCode(sass={80}, ptx={80})}
    gaps = coverage_gaps(code, ["8.0", "9.0"], ["9.0"])
    assert gaps == ["libtf.so has no sm_90 code (release target 9.0; has sm_80, compute_80)"]
    old = {"/x/libtorch_cuda.so": GpuCode(sass={37, 50, 60, 70, 75})}
    gaps = coverage_gaps(old, ["7.0"], ["9.0"])
    assert gaps == ["libtorch_cuda.so cannot run on the GPU present (compute capability 9.0; "
                    "has sm_37, sm_50, sm_60, sm_70, sm_75)"]


def run_archs(monkeypatch: pytest.MonkeyPatch, libraries: list[Path], expect: dict[str, object],
              gpus: list[tuple[str, str]] | None = None) -> CheckResult:
    monkeypatch.setattr(archs, "shipped_libraries", lambda wheels: iter(libraries))
    monkeypatch.setattr(archs, "cuda_devices", lambda: gpus or [])
    env = RunEnv(expect, "required" if gpus else "none", bool(gpus), bool(gpus))
    return run_check(Check("cuda.archs", "T0", False, archs.check_archs), env)


def test_check_passes_when_every_library_covers_the_targets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lib = write(tmp_path, elf_with(fatbin([(SASS, 80), (SASS, 90)])))
    result = run_archs(monkeypatch, [lib], {"gpu_targets": ["8.0", "9.0"]}, [("H100", "9.0")])
    assert result.status == "pass", result.message
    assert result.evidence["present_gpus"] == ["9.0"]


def test_check_fails_on_a_missing_target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lib = write(tmp_path, elf_with(fatbin([(SASS, 75)])))
    result = run_archs(monkeypatch, [lib], {"gpu_targets": ["8.0"]})
    assert result.status == "fail" and "no sm_80 code" in result.message


def test_no_gpu_code_skips_a_cpu_image_and_fails_a_gpu_image(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = write(tmp_path, elf_with(b"x" * 16, ".text"))
    skipped = run_archs(monkeypatch, [plain], {"gpu_targets": ["8.0"]})
    assert skipped.status == "skip" and "CPU-only image" in skipped.message
    failed = run_archs(monkeypatch, [plain], {"gpu_targets": ["8.0"], "gpu_image": True})
    assert failed.status == "fail" and "CPU-only build in a GPU image" in failed.message


def test_stack_wheels_are_not_scanned() -> None:
    shipped = {str(path) for path in archs.shipped_libraries(["pydantic-core"])}
    assert not any("pydantic_core" in path for path in shipped)
    assert any("pydantic_core" in str(path) for path in archs.shipped_libraries([]))


def test_nvidia_wheels_are_never_judged_as_the_frameworks_build() -> None:
    assert archs.nvidia_build("nvidia-cublas") and archs.nvidia_build("cuda-toolkit")
    assert not archs.nvidia_build("torch") and not archs.nvidia_build("jax-cuda13-plugin")
