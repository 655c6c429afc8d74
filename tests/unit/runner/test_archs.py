"""T0 cuda.archs: fat binary parsing on synthetic ELF files, and the coverage rules."""

from __future__ import annotations

import random
import struct
import time
from pathlib import Path
from typing import Any

import pytest

from ngc_builder.runner import archs
from ngc_builder.runner import fatbin as reader
from ngc_builder.runner.fatbin import GpuCode, coverage_gaps, scan_library
from ngc_builder.runner.report import CheckResult
from ngc_builder.runner.suite import Check, RunEnv, run_check

pytestmark = pytest.mark.unit
PTX, SASS = reader.KIND_PTX, reader.KIND_SASS


def entry(kind: int, arch: int, header_size: int = 64, flags: int = 0x11,
          payload: bytes = b"\xee" * 8) -> bytes:
    """One entry: its header (kind, version 0x101, header size, padded payload size, payload
    size, arch at byte 28, flags at byte 40), then the payload padded to 8 bytes."""
    padded = payload + b"\0" * (-len(payload) % 8)
    header = bytearray(header_size)
    struct.pack_into("<HHIQI", header, 0, kind, 0x101, header_size, len(padded), len(payload))
    struct.pack_into("<I", header, 28, arch)
    struct.pack_into("<Q", header, 40, flags)
    return bytes(header) + padded


def container(*entries: bytes, magic: int = reader.FATBIN_MAGIC) -> bytes:
    body = b"".join(entries)
    return struct.pack("<IHHQ", magic, 1, 16, len(body)) + body


def fatbin(entries: list[tuple[int, int]]) -> bytes:
    """One fat binary: a 16-byte header, then a 64-byte header + 8-byte payload per entry."""
    return container(*(entry(kind, arch) for kind, arch in entries))


def elf_file(sections: dict[str, bytes]) -> bytes:
    """A minimal 64-bit little-endian ELF: null section, `sections` in order, .shstrtab. Headers
    come first and section data last, so cutting the file short truncates the data."""
    names, name_at = b"\0", []
    for name in [*sections, ".shstrtab"]:
        name_at.append(len(names))
        names += name.encode() + b"\0"
    count = len(sections) + 2
    table_at = 64 + len(names)
    rows, data_at = [section_row(0, 0, 0)], table_at + 64 * count
    for at, data in zip(name_at, sections.values(), strict=False):
        rows.append(section_row(at, data_at, len(data)))
        data_at += len(data)
    rows.append(section_row(name_at[-1], 64, len(names)))
    header = bytearray(64)
    header[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<Q", header, 0x28, table_at)
    struct.pack_into("<HHH", header, 0x3A, 64, count, count - 1)
    return bytes(header) + names + b"".join(rows) + b"".join(sections.values())


def section_row(name_at: int, offset: int, size: int) -> bytes:
    return struct.pack("<IIQQQQ", name_at, 1, 0, 0, offset, size) + b"\0" * 24


def elf_with(section: bytes, name: str = ".nv_fatbin") -> bytes:
    return elf_file({name: section})


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


def test_every_kind_cuobjdump_lists_is_counted_and_no_other(tmp_path: Path) -> None:
    # cuobjdump 13.5 --list-elf takes kinds 2 and 0x10 (capsule mercury), --list-ptx 1 and
    # 0x40; 4 (old cubin), 8 (NVVM IR / LTO-IR) and anything else are in neither list
    kinds = [(1, 90), (2, 80), (0x10, 100), (0x40, 120), (4, 70), (8, 89), (0x20, 61)]
    path = write(tmp_path, elf_with(fatbin(kinds)))
    code = scan_library(path)
    assert code.sass == {80, 100} and code.ptx == {90, 120}
    with path.open("rb") as stream:
        assert list(reader.fatbin_entries(stream)) == kinds


def test_longer_entry_headers_and_compressed_payloads_keep_their_arch(tmp_path: Path) -> None:
    lz4_ptx = entry(PTX, 120, header_size=80, flags=0x2011, payload=b"\x13\x0a\x01" * 7)
    zstd_capmerc = entry(0x10, 100, header_size=112, flags=0x8011,
                         payload=b"\x28\xb5\x2f\xfd" + b"\x01" * 13)
    section = container(lz4_ptx, zstd_capmerc, entry(SASS, 90, flags=0x8011))
    code = scan_library(write(tmp_path, elf_with(section)))
    assert code.sass == {90, 100} and code.ptx == {120}


def test_wrapper_and_old_style_magics_are_skipped_not_parsed(tmp_path: Path) -> None:
    # 0x466243B1 is __fatBinC_Wrapper_t (.nvFatBinSegment), 0x1EE55A01 the pre-CUDA-6 format:
    # cuobjdump calls both invalid fat binary headers; the reader passes over them
    wrapper = struct.pack("<IIQQ", 0x466243B1, 1, 0, 0)
    section = (fatbin([(SASS, 80)]) + wrapper + container(entry(SASS, 75), magic=0x466243B1)
               + container(entry(SASS, 61), magic=0x1EE55A01) + fatbin([(SASS, 90)]))
    code = scan_library(write(tmp_path, elf_with(section)))
    assert code.sass == {80, 90} and not code.ptx


def test_relocatable_fat_binaries_count_only_where_no_executable_one_is(tmp_path: Path) -> None:
    relocatable = fatbin([(SASS, 87), (PTX, 87)])
    alone = scan_library(write(tmp_path, elf_file({"__nv_relfatbin": relocatable})))
    assert alone.sass == {87} and alone.ptx == {87}
    both = elf_file({"__nv_relfatbin": relocatable, ".nv_fatbin": fatbin([(SASS, 89)])})
    code = scan_library(write(tmp_path, both, "both.so"))
    assert code.sass == {89} and not code.ptx


# Around each read's end: the small first read, the next (4 times larger), a whole chunk.
@pytest.mark.parametrize("padding", [
    0, 8, 24, reader._FIRST_CHUNK - 8, reader._FIRST_CHUNK, reader._FIRST_CHUNK * 5 - 8,
    reader._FIRST_CHUNK * 5, reader._CHUNK - 8, reader._CHUNK, reader._CHUNK + 8])
def test_fat_binaries_are_found_after_any_aligned_padding(tmp_path: Path, padding: int) -> None:
    section = fatbin([(SASS, 80)]) + b"\0" * padding + fatbin([(SASS, 90)])
    assert scan_library(write(tmp_path, elf_with(section))).sass == {80, 90}


def test_payloads_and_unaligned_bytes_are_never_taken_for_fat_binaries(tmp_path: Path) -> None:
    # a payload may hold the magic (a nested fat binary, compressed bytes): only the container
    # walk and the 8-byte aligned gaps between containers are searched
    nested = container(entry(SASS, 80, payload=fatbin([(SASS, 61)])))
    unaligned = b"\0" * 4 + fatbin([(SASS, 75)]) + b"\0" * 4
    section = nested + unaligned + fatbin([(SASS, 90)])
    assert scan_library(write(tmp_path, elf_with(section))).sass == {80, 90}


def test_a_file_cut_anywhere_reads_a_part_of_the_whole(tmp_path: Path) -> None:
    section = container(entry(SASS, 80), entry(PTX, 120, header_size=80)) + fatbin([(SASS, 90)])
    data = elf_with(section)
    whole = scan_library(write(tmp_path, data))
    assert whole.sass == {80, 90} and whole.ptx == {120}
    for cut in range(len(data)):
        part = scan_library(write(tmp_path, data[:cut]))
        assert part.sass <= whole.sass and part.ptx <= whole.ptx
    header_end = len(data) - len(section)
    assert scan_library(write(tmp_path, data[:header_end + 16 + 64])).sass == {80}


def lying_entry(kind: int, arch: int, header_size: int, payload_size: int) -> bytes:
    header = bytearray(64)
    struct.pack_into("<HHIQ", header, 0, kind, 0x101, header_size, payload_size)
    struct.pack_into("<I", header, 28, arch)
    return bytes(header)


@pytest.mark.parametrize("section,sass", [
    (struct.pack("<IHHQ", reader.FATBIN_MAGIC, 1, 0, 8) + b"\0" * 8 + fatbin([(SASS, 90)]), {90}),
    (struct.pack("<IHHQ", reader.FATBIN_MAGIC, 1, 16, 2**64 - 1) + entry(SASS, 80), {80}),
    (container(lying_entry(SASS, 80, 0, 8), entry(SASS, 75)), set()),
    (container(lying_entry(SASS, 80, 63, 8), entry(SASS, 75)), set()),
    (container(lying_entry(SASS, 80, 64, 2**64 - 1), entry(SASS, 75)), {80}),
    (struct.pack("<I", reader.FATBIN_MAGIC) * 5, set()),
])
def test_lying_headers_end_the_walk_without_raising(
    tmp_path: Path, section: bytes, sass: set[int]
) -> None:
    assert scan_library(write(tmp_path, elf_with(section))).sass == sass


@pytest.mark.parametrize("at,value", [
    (0x28, 2**64 - 1),  # section table past the end of the file
    (0x3A, 0xFFFF),  # a section header size no ELF64 has
    (0x3C, 0xFFFF),  # 65535 sections claimed
    (0x3E, 0xFFFF),  # names table index out of range
])
def test_a_lying_elf_header_reads_as_no_sections(tmp_path: Path, at: int, value: int) -> None:
    data = bytearray(elf_with(fatbin([(SASS, 90)])))
    struct.pack_into("<Q" if at == 0x28 else "<H", data, at, value)
    assert scan_library(write(tmp_path, bytes(data))).empty


def test_section_rows_pointing_past_the_file_read_as_empty(tmp_path: Path) -> None:
    data = bytearray(elf_with(fatbin([(SASS, 90)])))
    table_at = struct.unpack_from("<Q", data, 0x28)[0]
    struct.pack_into("<QQ", data, table_at + 64 + 24, 2**64 - 16, 2**64 - 1)  # .nv_fatbin row
    struct.pack_into("<Q", data, table_at + 128 + 32, 2**64 - 1)  # .shstrtab size
    assert scan_library(write(tmp_path, bytes(data))).empty


def test_random_garbage_never_raises(tmp_path: Path) -> None:
    rng = random.Random(16)
    for _ in range(300):
        garbage = bytearray(rng.randbytes(rng.randrange(0, 600)))
        for _ in range(rng.randrange(0, 6)):  # plant container magics where the reader looks
            at = rng.randrange(0, max(1, len(garbage) // 8)) * 8
            garbage[at:at + 4] = struct.pack("<I", reader.FATBIN_MAGIC)
        scan_library(write(tmp_path, elf_with(bytes(garbage))))


def test_back_to_back_fat_binaries_are_read_a_little_at_a_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """libtorch_cuda holds about 4000 of them: a chunk read per one was 500 MB to search."""
    section = b"".join(fatbin([(SASS, 80 + n % 20)]) for n in range(200))
    read: list[int] = []
    real = reader._read_at

    def counted(*args: Any) -> bytes:
        got = real(*args)
        read.append(len(got))
        return got

    monkeypatch.setattr(reader, "_read_at", counted)
    assert len(scan_library(write(tmp_path, elf_with(section))).sass) == 20
    assert sum(read) < 200 * 2 * reader._FIRST_CHUNK


def test_a_large_section_without_fat_binaries_is_passed_over_quickly(tmp_path: Path) -> None:
    section = b"\0" * (16 * reader._CHUNK) + fatbin([(SASS, 90)])
    started = time.monotonic()
    assert scan_library(write(tmp_path, elf_with(section))).sass == {90}
    assert time.monotonic() - started < 5


def test_an_unreadable_file_scans_empty(tmp_path: Path) -> None:
    assert scan_library(tmp_path / "missing.so").empty


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
