"""``lib.<name>`` checks: load each CUDA library by soname and ask it for its version.

The queries used here need neither a GPU nor a driver, so they run on every T0 validation.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .suite import Check, Context, Suite
from .versions import dotted, prefix_matches, release_components

Query = Callable[[ctypes.CDLL], tuple[int, ...]]
_CUBLAS_PROPERTIES = (0, 1, 2)  # libraryPropertyType: MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL


# cudaErrorInsufficientDriver, cudaErrorNoDevice: CUDA 11's runtime answers its version only
# once a driver is loaded (CUDA 12 and later answer without one).
NEEDS_DRIVER = (35, 100)


class NeedsDriver(Exception):
    """The library loaded, but tells its version only when an NVIDIA driver is present."""


class LibraryError(Exception):
    """A library loaded but its version query failed."""


def decode_cudart(value: int) -> tuple[int, int]:
    """``cudaRuntimeGetVersion``/``cuDriverGetVersion``: 13020 -> (13, 2)."""
    return value // 1000, (value % 1000) // 10


def decode_cudnn(value: int) -> tuple[int, int, int]:
    """``cudnnGetVersion``: 9.x encodes M*10000+m*100+p (92600), 8.x M*1000+m*100+p (8907)."""
    if value >= 10000:
        return value // 10000, (value % 10000) // 100, value % 100
    return value // 1000, (value % 1000) // 100, value % 100


def decode_nccl(value: int) -> tuple[int, int, int]:
    """``ncclGetVersion``: from 2.9 on M*10000+m*100+p (23007), before M*1000+m*100+p (2804)."""
    if value >= 20900:
        return value // 10000, (value % 10000) // 100, value % 100
    return value // 1000, (value % 1000) // 100, value % 100


def _status(name: str, code: int) -> None:
    if code in NEEDS_DRIVER:
        raise NeedsDriver(f"{name} returned status {code} (no usable NVIDIA driver)")
    if code != 0:
        raise LibraryError(f"{name} returned status {code}")


def query_cudart(lib: ctypes.CDLL) -> tuple[int, ...]:
    value = ctypes.c_int()
    _status("cudaRuntimeGetVersion", lib.cudaRuntimeGetVersion(ctypes.byref(value)))
    return decode_cudart(value.value)


def query_cublas(lib: ctypes.CDLL) -> tuple[int, ...]:
    parts = []
    for prop in _CUBLAS_PROPERTIES:
        value = ctypes.c_int()
        _status("cublasGetProperty", lib.cublasGetProperty(prop, ctypes.byref(value)))
        parts.append(value.value)
    return tuple(parts)


def query_cudnn(lib: ctypes.CDLL) -> tuple[int, ...]:
    lib.cudnnGetVersion.restype = ctypes.c_size_t
    lib.cudnnGetVersion.argtypes = []
    return decode_cudnn(int(lib.cudnnGetVersion()))


def query_nccl(lib: ctypes.CDLL) -> tuple[int, ...]:
    value = ctypes.c_int()
    _status("ncclGetVersion", lib.ncclGetVersion(ctypes.byref(value)))
    return decode_nccl(value.value)


@dataclass(frozen=True)
class LibrarySpec:
    query: Query
    width: int  # how many leading version components the query can report


KNOWN: dict[str, LibrarySpec] = {
    "cudart": LibrarySpec(query_cudart, 2),
    "cublas": LibrarySpec(query_cublas, 3),
    "cudnn": LibrarySpec(query_cudnn, 3),
    "nccl": LibrarySpec(query_nccl, 3),
}


def soname(name: str, expected: str) -> str:
    # CUDA 11's runtime is libcudart.so.11.0 (every other library and release: .so.<major>).
    major = release_components(expected)[0]
    return f"lib{name}.so.{major}.0" if (name, major) == ("cudart", 11) else f"lib{name}.so.{major}"


def load(name: str) -> tuple[ctypes.CDLL, str]:
    """dlopen ``name`` (raises OSError carrying dlerror's text); return it with its real path."""
    lib = ctypes.CDLL(name)
    return lib, resolved_path(name)


def resolved_path(name: str, maps: Path = Path("/proc/self/maps")) -> str:
    """Where the loader found ``name``: the mapped file whose name starts like the soname."""
    stem = name.split(".so")[0] + ".so"
    try:
        lines = maps.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    for line in lines:
        fields = line.split(maxsplit=5)  # address perms offset dev inode [path]
        if len(fields) == 6 and Path(fields[5]).name.startswith(stem):
            return fields[5]
    # No /proc (not Linux): the best the stdlib offers is a name, not a path.
    return ctypes.util.find_library(stem[3:-3]) or "unknown"


def register(suite: Suite, libraries: dict[str, str]) -> None:
    for name in libraries:
        suite.add(Check(f"lib.{name}", "T0", False, _library_check(name)))


def _library_check(name: str) -> Callable[[Context], str]:
    def check(ctx: Context) -> str:
        expected = ctx.expect["libraries"][name]
        return verify_library(ctx, name, expected)

    return check


def verify_library(ctx: Context, name: str, expected: str) -> str:
    wanted = soname(name, expected)
    ctx.evidence("soname", wanted)
    try:
        lib, path = load(wanted)
    except OSError as exc:
        ctx.fail(f"cannot load {wanted}: {exc}")
    ctx.evidence("path", path)
    spec = KNOWN.get(name)
    if spec is None:
        return f"{wanted} loaded from {path} (no version query known for {name})"
    try:
        actual = spec.query(lib)
    except NeedsDriver as exc:
        if ctx.gpu_expected:
            ctx.fail(f"{wanted} loaded from {path}, but {exc}", fault="host")
        ctx.skip(f"no GPU: {wanted} loaded from {path}; its version needs a driver ({exc})")
    ctx.evidence("version", dotted(actual))
    ctx.evidence("expected", expected)
    if not prefix_matches(actual, expected, spec.width):
        ctx.fail(f"{name} is {dotted(actual)}, expected {expected} ({path})")
    return f"{name} {dotted(actual)} from {path}"
