"""A wheel that ``pip check`` calls unsupported because its publisher mislabelled it.

pip (23.3 on) reads each installed wheel's ``WHEEL`` file and reports ``NAME VERSION is not
supported on this platform`` when none of its ``Tag:`` lines is one this interpreter accepts.
What pip guards against is machine code built for another machine. Some wheels are right in
their file name and machine code but wrong in that file: NVIDIA's aarch64
``nvidia-cusparselt-cu13`` 0.8.1 (``..._manylinux2014_aarch64.whl``) says
``Tag: py3-none-manylinux2014_sbsa``, a platform tag no pip knows, so ``pip check`` fails on
every Grace node. This module reads what pip cannot: the ELF header of every file the
distribution installed. Only a wheel with machine code, all of it for this machine, is
excused, and the report names it with its tags; anything else stays a finding.

Standard library only: this runs inside the images.
"""

from __future__ import annotations

import importlib.metadata
import platform
import re
import struct
from pathlib import Path

UNSUPPORTED = re.compile(r"(?P<name>\S+) (?P<version>\S+) is not supported on this platform")
# ELF e_machine of each machine we build for.
ELF_MACHINES = {"x86_64": 62, "aarch64": 183}
ELF_HEADER = 20  # bytes up to and including e_machine
MAX_FILES = 20000  # a distribution's RECORD beyond this is not read (nothing we ship nears it)


def elf_machine(path: Path) -> int | None:
    """The e_machine of an ELF file, None for any other file (or one that cannot be read)."""
    try:
        with path.open("rb") as stream:
            head = stream.read(ELF_HEADER)
    except OSError:
        return None
    if len(head) < ELF_HEADER or head[:4] != b"\x7fELF" or head[5] not in (1, 2):
        return None
    order = "<" if head[5] == 1 else ">"
    machine: int = struct.unpack(f"{order}H", head[18:20])[0]
    return machine


def wheel_tags(dist: importlib.metadata.Distribution) -> list[str]:
    text = dist.read_text("WHEEL") or ""
    return [line.partition(":")[2].strip() for line in text.splitlines()
            if line.startswith("Tag:")]


def mislabelled(line: str, machine: str | None = None) -> str | None:
    """Why pip's `line` is only a mislabelled wheel (its machine code checked), or None when
    it is a finding: another message, an unknown distribution, no machine code, or any ELF
    file for another machine."""
    match = UNSUPPORTED.fullmatch(line.strip())
    machine = machine or platform.machine()
    wanted = ELF_MACHINES.get(machine)
    if match is None or wanted is None:
        return None
    try:
        dist = importlib.metadata.distribution(match["name"])
    except importlib.metadata.PackageNotFoundError:
        return None
    files = [Path(str(dist.locate_file(entry))) for entry in (dist.files or [])[:MAX_FILES]]
    machines = [found for found in map(elf_machine, files) if found is not None]
    if dist.version != match["version"] or not machines or set(machines) != {wanted}:
        return None
    return (f"{match['name']} {match['version']}: WHEEL says {', '.join(wheel_tags(dist))}, "
            f"its {len(machines)} ELF files are {machine}")
