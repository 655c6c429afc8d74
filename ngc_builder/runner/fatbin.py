"""The GPU code a shared library carries, read from its fat binaries (T0 ``cuda.archs`` and the
devel checks use it).

Every CUDA library keeps its kernels in the ELF section ``.nv_fatbin`` (relocatable device code
in ``__nv_relfatbin``, read, as ``cuobjdump`` does, only where ``.nv_fatbin`` is absent): a run
of fat binaries, each a 16-byte header (magic 0xBA55ED50, version, header size, size of what
follows) and then entries, one per architecture. An entry header (64 bytes; 80 for PTX with
options, 112 for sm_100+ cubins) gives its kind, its own size, the padded payload size and, at
byte 28, the architecture; it stays plain when the payload is LZ4- (flag 0x2000) or zstd-
(0x8000) compressed. Reading headers is enough: no CUDA toolkit, GPU, driver or decompressor.

The kinds counted are those ``cuobjdump`` 13.5 (PyPI's ``nvidia-cuda-cuobjdump``) lists when
given hand-made fat binaries: ``--list-elf`` takes 2 (a SASS cubin) and 0x10 (a "capsule
mercury" cubin, nvlink's default for sm_100+, finalised to SASS by the driver at load: SASS for
its sm here), ``--list-ptx`` takes 1 and 0x40 (undocumented; PTX here because cuobjdump lists
it so). 4 (an old cubin format no longer generated) and 8 (NVVM IR / LTO-IR) are in neither
list. No other container magic exists: 0x466243B1 is the ``__fatBinC_Wrapper_t`` that
``.nvFatBinSegment`` holds (pointers to the data, fatbinary_section.h) and 0x1EE55A01 the old
style fat binary cuobjdump no longer reads; it takes neither for a container (after one: an
"invalid fatbin header"), and the reader skips both as it skips padding, and reads on.

Measured on an NVIDIA H100 node (CUDA 13.0 toolkit, driver 580.159.04), this reader (then
counting kinds 1 and 2 only) against ``cuobjdump --list-elf``/``--list-ptx`` on 22 libraries
(torch 2.11.0+cu130's libtorch_cuda, libtorch_cuda_linalg, libtorch_nvshmem; cuBLAS/cuBLASLt
13, cuFFT 12, cuFile, cuRAND 10, cuSOLVER 12, cuSPARSE 12, cuSPARSELt 0, cuDNN 9.19's adv, cnn,
engines_precompiled, engines_runtime_compiled and ops, NCCL 2.28.9, nvshmem_host 3, JAX's
xla_cuda_plugin): 0 mismatches; 6317 containers, all of magic 0xBA55ED50; 19880 entries of kind
2 and 1292 of kind 1, no other magic or kind. No NVIDIA wheel there carried cuobjdump.
"""

from __future__ import annotations

import contextlib
import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

FATBIN_MAGIC = 0xBA55ED50
FATBIN_SECTIONS = (".nv_fatbin", "__nv_relfatbin")  # cuobjdump's order: the first one present
KIND_PTX, KIND_SASS, KIND_CAPMERC, KIND_PTX_40 = 1, 2, 0x10, 0x40
SASS_KINDS = frozenset({KIND_SASS, KIND_CAPMERC})
PTX_KINDS = frozenset({KIND_PTX, KIND_PTX_40})
_FATBIN_HEADER = struct.Struct("<IHHQ")  # magic, version, header size, size of the entries
_ENTRY_HEADER = struct.Struct("<HHIQ")  # kind, version, header size, padded payload size
_ENTRY_MIN_SIZE = 64  # every toolkit's smallest entry header; the arch lies inside it
_ENTRY_ARCH = struct.Struct("<I")
_ENTRY_ARCH_OFFSET = 28  # sm version (e.g. 90) inside each entry header
_ALIGN = 8  # fatbinary.h: fat binaries are 8-byte aligned, padding may lie between them
_CHUNK = 1 << 20  # a multiple of _ALIGN, so an aligned magic never straddles two chunks
# The next container nearly always starts at once: a small first read finds it without reading
# (and, under QEMU, searching) a whole chunk per container, 500 MB for libtorch_cuda.
_FIRST_CHUNK = 1 << 10
_NAMES_CAP = 1 << 24  # a section-name table is a few hundred bytes; claims past this are garbage
_MAGIC_BYTES = struct.pack("<I", FATBIN_MAGIC)


@dataclass
class GpuCode:
    """The architectures one library carries code for, as ``major*10 + minor`` numbers."""

    sass: set[int] = field(default_factory=set)
    ptx: set[int] = field(default_factory=set)

    @property
    def empty(self) -> bool:
        return not self.sass and not self.ptx

    def add(self, kind: int, arch: int) -> None:
        """Count one fat binary entry; kinds cuobjdump lists as neither ELF nor PTX are not code
        a GPU runs as it is."""
        if kind in SASS_KINDS:
            self.sass.add(arch)
        elif kind in PTX_KINDS:
            self.ptx.add(arch)

    def covers(self, target: int) -> str | None:
        """How a GPU of compute capability ``target`` runs this code, or None if it cannot.

        A cubin runs on its own major at an equal or higher minor (sm_80 SASS runs on 8.6, not
        on 9.0); PTX of an equal or lower architecture is compiled for the GPU by the driver."""
        if any(sm // 10 == target // 10 and sm <= target for sm in self.sass):
            return "SASS"
        if any(arch <= target for arch in self.ptx):
            return "PTX JIT"
        return None

    def describe(self) -> str:
        names = [f"sm_{sm}" for sm in sorted(self.sass)]
        return ", ".join(names + [f"compute_{arch}" for arch in sorted(self.ptx)])


def elf_sections(stream: BinaryIO) -> dict[str, tuple[int, int]]:
    """Section name -> (file offset, size) of a 64-bit little-endian ELF file, else {}.

    Offsets and sizes are clipped to the file, so a truncated or lying header reads as less."""
    limit = _file_size(stream)
    head = _read_at(stream, 0, 64, limit)
    if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
        return {}
    (table_offset,) = struct.unpack_from("<Q", head, 0x28)
    entry_size, count, names_index = struct.unpack_from("<HHH", head, 0x3A)
    table = _read_at(stream, table_offset, entry_size * count, limit)
    # ELF64 section headers are 64 bytes: any other size is not a file we can trust
    if entry_size != 64 or len(table) < entry_size * count or names_index >= count:
        return {}
    headers = [struct.unpack_from("<I4xQQQQ", table, i * entry_size) for i in range(count)]
    names_at, names_size = headers[names_index][3:5]
    names = _read_at(stream, names_at, min(names_size, _NAMES_CAP), limit)
    return {_c_string(names, name_at): (offset, max(0, min(size, limit - offset)))
            for name_at, _flags, _addr, offset, size in headers}


def _c_string(blob: bytes, start: int) -> str:
    end = blob.find(b"\0", start)
    return blob[start:end if end >= 0 else len(blob)].decode("ascii", "replace")


def _file_size(stream: BinaryIO) -> int:
    return stream.seek(0, os.SEEK_END)


def _read_at(stream: BinaryIO, offset: int, size: int, limit: int) -> bytes:
    """Up to `size` bytes at `offset`, none at or past `limit`: garbage offsets read as b""
    instead of seeking out of range or allocating what a lying header claims."""
    size = min(size, limit - offset)
    if size <= 0:
        return b""
    stream.seek(offset)
    return stream.read(size)


def scan_library(path: Path) -> GpuCode:
    """The code `path` carries; what could be read of it when reading fails part way."""
    code = GpuCode()
    with contextlib.suppress(OSError), path.open("rb") as stream:
        for kind, arch in fatbin_entries(stream):
            code.add(kind, arch)
    return code


def fatbin_entries(stream: BinaryIO) -> Iterator[tuple[int, int]]:
    """(kind, architecture) of every entry, of any kind, in the file's fat binary section."""
    sections = elf_sections(stream)
    for name in FATBIN_SECTIONS:
        if name in sections:
            offset, size = sections[name]
            yield from _section_entries(stream, offset, offset + size)
            return


def _section_entries(stream: BinaryIO, start: int, end: int) -> Iterator[tuple[int, int]]:
    position = _next_container(stream, start, start, end)
    while position is not None:
        header = _read_at(stream, position, _FATBIN_HEADER.size, end)
        _magic, _version, header_size, entries_size = _FATBIN_HEADER.unpack(header)
        following = position + _ALIGN  # a header too short to be one: look further on
        if header_size >= _FATBIN_HEADER.size:
            first = position + header_size
            yield from _entries(stream, first, min(first + entries_size, end))
            following = max(following, first + entries_size)
        position = _next_container(stream, following, start, end)


def _next_container(stream: BinaryIO, position: int, start: int, end: int) -> int | None:
    """The first aligned offset from `position` whose 16 bytes start a container, read a chunk
    at a time: padding and unknown data (a wrapper, an old-style fat binary) are passed over
    without parsing them as headers, and a garbage section costs one pass, not one read per
    8 bytes."""
    position = start + -(-(position - start) // _ALIGN) * _ALIGN
    size = _FIRST_CHUNK
    while position + _FATBIN_HEADER.size <= end:
        chunk = _read_at(stream, position, size, end)
        found = _aligned_find(chunk)
        if found is not None:
            return position + found if position + found + _FATBIN_HEADER.size <= end else None
        position += size
        size = min(size * 4, _CHUNK)
    return None


def _aligned_find(chunk: bytes) -> int | None:
    at = chunk.find(_MAGIC_BYTES)
    while at > 0 and at % _ALIGN:
        at = chunk.find(_MAGIC_BYTES, at + 1)
    return at if at >= 0 else None


def _entries(stream: BinaryIO, position: int, end: int) -> Iterator[tuple[int, int]]:
    """Entry headers from `position` to `end`. Each one moves on by at least its 64 bytes, so
    the walk ends; a header claiming fewer is malformed and ends this container."""
    while True:
        header = _read_at(stream, position, _ENTRY_MIN_SIZE, end)
        if len(header) < _ENTRY_MIN_SIZE:
            return
        kind, _version, header_size, payload_size = _ENTRY_HEADER.unpack_from(header)
        if header_size < _ENTRY_MIN_SIZE:
            return
        yield kind, _ENTRY_ARCH.unpack_from(header, _ENTRY_ARCH_OFFSET)[0]
        position += header_size + payload_size


def capability_number(text: str) -> int:
    """'9.0' -> 90, the numbering fat binaries use."""
    major, minor = text.split(".")
    return int(major) * 10 + int(minor)


def coverage_gaps(code: dict[str, GpuCode], targets: list[str], present: list[str]) -> list[str]:
    """One line per (library, GPU) that cannot run: release targets need SASS, while the GPU
    present may also run PTX (slower first launch, but it runs)."""
    gaps = []
    for path, found in sorted(code.items()):
        for target in targets:
            if found.covers(capability_number(target)) != "SASS":
                gaps.append(f"{Path(path).name} has no sm_{capability_number(target)} code "
                            f"(release target {target}; has {found.describe()})")
        for gpu in present:
            if found.covers(capability_number(gpu)) is None:
                gaps.append(f"{Path(path).name} cannot run on the GPU present (compute "
                            f"capability {gpu}; has {found.describe()})")
    return gaps
