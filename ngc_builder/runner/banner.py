"""The banner an image prints on start (stderr, so a command's stdout stays its own).

What a researcher needs to see before the first line of their job: which framework and
release this is, the CUDA libraries inside, whether an NVIDIA driver is visible (and new
enough), and whether /dev/shm is large enough for data-loader workers and NCCL. Everything
comes from the expectation files the layers wrote at build time. ``NGC_BANNER=off`` silences
it. It never stops the command from starting.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any, TextIO

from .core import MIN_SHM_BYTES
from .expect import ExpectError, load_expect

EXPECT_DIR = Path("/opt/ngc/expect")
DRIVER_FILE = Path("/proc/driver/nvidia/version")
SHM = "/dev/shm"
_DRIVER = re.compile(r"Kernel Module\b.*?\s(\d+\.\d+(?:\.\d+)?)\s")
_LIBRARIES = (("cudart", "CUDA runtime"), ("cudnn", "cuDNN"), ("nccl", "NCCL"),
              ("cublas", "cuBLAS"))


def print_banner(stream: TextIO = sys.stderr) -> None:
    if os.environ.get("NGC_BANNER", "").lower() in ("0", "off", "no", "false"):
        return
    try:
        expect = load_expect(EXPECT_DIR)
    except ExpectError:
        return  # not one of our images (or a stripped one): nothing true to say
    try:
        stream.write("".join(f"{line}\n" for line in banner_lines(expect, driver_version(),
                                                                   shm_bytes())))
        stream.flush()
    except (OSError, ValueError):
        pass  # a closed stderr must not stop the command


def banner_lines(expect: dict[str, Any], driver: str | None, shm: int | None) -> list[str]:
    title = str(expect.get("title") or expect.get("framework") or expect.get("image", "image"))
    lines = [f"== {title} ==", identity(expect)]
    if expect.get("stack"):
        lines.append(cuda_line(expect))
        lines += driver_lines(driver, expect.get("min_driver"))
    lines += shm_lines(shm)
    return [*lines, ""]


def identity(expect: dict[str, Any]) -> str:
    # A shared layer (base, CUDA) names no release: it is the same image in several.
    release = expect.get("release")
    parts = [f"ngc-builder release {release}" if release else
             f"ngc-builder {expect.get('image', 'image')}"]
    if expect.get("framework"):
        parts.append(f"{expect.get('title') or expect['framework']} {expect.get('version', '?')}")
    parts.append(f"Python {expect.get('python', '?')}")
    return ", ".join(parts)


def cuda_line(expect: dict[str, Any]) -> str:
    libraries = expect.get("libraries") or {}
    found = [f"{name} {libraries[key]}" for key, name in _LIBRARIES if key in libraries]
    return f"CUDA {expect.get('cuda', '?')} ({', '.join(found)})" if found else \
        f"CUDA {expect.get('cuda', '?')}"


def driver_lines(driver: str | None, minimum: object) -> list[str]:
    if driver is None:
        return ["WARNING: no NVIDIA driver found: GPU functionality will not be available.",
                "   Start the container with the NVIDIA Container Toolkit: docker run --gpus all"]
    if isinstance(minimum, str) and version_tuple(driver) < version_tuple(minimum):
        return [f"WARNING: NVIDIA driver {driver} is older than this image's minimum "
                f"{minimum}: CUDA calls will fail with 'driver version is insufficient'."]
    return [f"NVIDIA driver {driver}"]


def shm_lines(shm: int | None) -> list[str]:
    if shm is None or shm >= MIN_SHM_BYTES:
        return []
    return [f"NOTE: /dev/shm is {shm >> 20} MB; data-loader workers and NCCL may run out. "
            "Add --ipc=host or --shm-size=8g to docker run."]


def driver_version(path: Path = DRIVER_FILE) -> str | None:
    try:
        found = _DRIVER.search(path.read_text(errors="replace"))
    except OSError:
        return None
    return found.group(1) if found else None


def shm_bytes(path: str = SHM) -> int | None:
    try:
        stats = os.statvfs(path)
    except OSError:
        return None
    return stats.f_blocks * stats.f_frsize


def version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version))
