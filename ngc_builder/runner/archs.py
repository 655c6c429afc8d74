"""T0 ``cuda.archs``: the GPU code an image ships covers the GPUs its release targets.

Every CUDA library keeps its kernels in the ELF section ``.nv_fatbin``: a run of fat binaries,
each a 16-byte header followed by entries, one per architecture, either SASS (a cubin for one
``sm_XY``) or PTX (``compute_XY``, compiled by the driver at load time). Reading the section
headers and entry headers is enough: no CUDA toolkit, no GPU, no driver needed.
"""

from __future__ import annotations

import importlib.metadata
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from .gpu import cuda_devices
from .suite import Check, Context, Suite
from .versions import normalize_name

FATBIN_MAGIC = 0xBA55ED50
FATBIN_SECTION = ".nv_fatbin"
KIND_PTX, KIND_SASS = 1, 2
_FATBIN_HEADER = struct.Struct("<IHHQ")  # magic, version, header size, size of the entries
_ENTRY_HEADER = struct.Struct("<HHIQ")  # kind, version, header size, padded payload size
_ENTRY_ARCH_OFFSET = 28  # uint32 sm version (e.g. 90) inside each entry header


@dataclass
class GpuCode:
    """The architectures one library carries code for, as ``major*10 + minor`` numbers."""

    sass: set[int] = field(default_factory=set)
    ptx: set[int] = field(default_factory=set)

    @property
    def empty(self) -> bool:
        return not self.sass and not self.ptx

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
    """Section name -> (file offset, size) of a 64-bit little-endian ELF file, else {}."""
    head = stream.read(64)
    if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
        return {}
    (table_offset,) = struct.unpack_from("<Q", head, 0x28)
    entry_size, count, names_index = struct.unpack_from("<HHH", head, 0x3A)
    stream.seek(table_offset)
    table = stream.read(entry_size * count)
    if entry_size < 40 or len(table) < entry_size * count or names_index >= count:
        return {}
    headers = [struct.unpack_from("<I4xQQQQ", table, i * entry_size) for i in range(count)]
    stream.seek(headers[names_index][3])
    names = stream.read(headers[names_index][4])
    return {_c_string(names, name_at): (offset, size)
            for name_at, _flags, _addr, offset, size in headers}


def _c_string(blob: bytes, start: int) -> str:
    end = blob.find(b"\0", start)
    return blob[start:end if end >= 0 else len(blob)].decode("ascii", "replace")


def scan_library(path: Path) -> GpuCode:
    code = GpuCode()
    with path.open("rb") as stream:
        section = elf_sections(stream).get(FATBIN_SECTION)
        if section is not None:
            for kind, arch in _fatbin_entries(stream, *section):
                (code.ptx if kind == KIND_PTX else code.sass).add(arch)
    return code


def _fatbin_entries(stream: BinaryIO, offset: int, size: int) -> Iterator[tuple[int, int]]:
    position, end = offset, offset + size
    while position + _FATBIN_HEADER.size <= end:
        stream.seek(position)
        magic, _version, header_size, entries_size = _FATBIN_HEADER.unpack(
            stream.read(_FATBIN_HEADER.size))
        if magic != FATBIN_MAGIC:
            position += 8  # fat binaries are 8-byte aligned; skip padding between them
            continue
        yield from _entries(stream, position + header_size, position + header_size + entries_size)
        position += header_size + entries_size


def _entries(stream: BinaryIO, position: int, end: int) -> Iterator[tuple[int, int]]:
    while position + _ENTRY_ARCH_OFFSET + 4 <= end:
        stream.seek(position)
        header = stream.read(_ENTRY_ARCH_OFFSET + 4)
        kind, _version, header_size, payload_size = _ENTRY_HEADER.unpack_from(header)
        if header_size == 0:
            return
        if kind in (KIND_PTX, KIND_SASS):
            yield kind, struct.unpack_from("<I", header, _ENTRY_ARCH_OFFSET)[0]
        position += header_size + payload_size


def capability_number(text: str) -> int:
    """'9.0' -> 90, the numbering fat binaries use."""
    major, minor = text.split(".")
    return int(major) * 10 + int(minor)


def nvidia_build(name: str) -> bool:
    """NVIDIA's own wheels (cuBLAS, cuDNN, the CUDA toolkit...): checked by version, not here."""
    return name.startswith(("nvidia-", "cuda-")) or name == "cuda-toolkit"


def shipped_libraries(stack_wheels: Iterable[str]) -> Iterator[Path]:
    """Shared libraries of every installed distribution except the CUDA stack's wheels and
    NVIDIA's own (on a host there is no stack list: a GPU node's nvidia-* wheels)."""
    skip = {normalize_name(name) for name in stack_wheels}
    for dist in importlib.metadata.distributions():
        name = normalize_name(dist.metadata["Name"] or "")
        if name in skip or nvidia_build(name):
            continue
        for file in dist.files or ():
            if file.name.endswith(".so") or ".so." in file.name:
                yield Path(str(dist.locate_file(file)))


def register(suite: Suite) -> None:
    suite.add(Check("cuda.archs", "T0", False, check_archs))


def check_archs(ctx: Context) -> str:
    targets = [str(t) for t in ctx.expect["gpu_targets"]]
    present = _present_capabilities(ctx)
    code = {str(path): scan_library(path)
            for path in shipped_libraries(ctx.expect.get("wheels", {})) if path.is_file()}
    code = {path: found for path, found in code.items() if not found.empty}
    ctx.evidence("libraries", {path: found.describe() for path, found in code.items()})
    ctx.evidence("targets", targets)
    ctx.evidence("present_gpus", present)
    if not code:
        if ctx.expect.get("gpu_image"):
            ctx.fail("no shipped library carries GPU code: a CPU-only build in a GPU image")
        ctx.skip("CPU-only image: no shipped library carries GPU code")
    gaps = coverage_gaps(code, targets, present)
    if gaps:
        ctx.fail("; ".join(gaps))
    wanted = ", ".join(f"sm_{capability_number(t)}" for t in dict.fromkeys(targets + present))
    return f"{len(code)} libraries with GPU code cover {wanted}"


def _present_capabilities(ctx: Context) -> list[str]:
    if not ctx.gpu_expected:
        return []
    try:
        return sorted({cc for _name, cc in cuda_devices()})
    except (OSError, RuntimeError) as exc:  # gpu.driver reports it; judge the targets alone
        ctx.evidence("present_gpus_error", str(exc))
        return []


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
