from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Any

import pytest

from ngc_builder.runner import libs
from ngc_builder.runner.libs import decode_cudart, decode_cudnn, decode_nccl
from ngc_builder.runner.suite import Check, RunEnv, run_check

pytestmark = pytest.mark.unit
ENV = RunEnv({}, "none", False, False)


@pytest.mark.parametrize(
    ("value", "decoded"), [(13020, (13, 2)), (12080, (12, 8)), (11040, (11, 4))]
)
def test_decode_cudart(value: int, decoded: tuple[int, int]) -> None:
    assert decode_cudart(value) == decoded


@pytest.mark.parametrize(
    ("value", "decoded"),
    [(92600, (9, 26, 0)), (90100, (9, 1, 0)), (91003, (9, 10, 3)), (8907, (8, 9, 7))],
)
def test_decode_cudnn(value: int, decoded: tuple[int, int, int]) -> None:
    assert decode_cudnn(value) == decoded


@pytest.mark.parametrize(
    ("value", "decoded"),
    [(23007, (2, 30, 7)), (21903, (2, 19, 3)), (20903, (2, 9, 3)), (2804, (2, 8, 4))],
)
def test_decode_nccl(value: int, decoded: tuple[int, int, int]) -> None:
    assert decode_nccl(value) == decoded


class FakeFunction:
    """Stands in for a ctypes function: writes ``values`` through its int* argument."""

    def __init__(self, *values: int, status: int = 0) -> None:
        self.values = list(values)
        self.status = status
        self.restype: Any = None
        self.argtypes: Any = None

    def __call__(self, *args: Any) -> int:
        pointer = args[-1] if args else None
        if pointer is None:
            return self.values.pop(0)  # cudnnGetVersion returns the value itself
        pointer._obj.value = self.values.pop(0)
        return self.status


class FakeLibrary:
    def __init__(self, **functions: FakeFunction) -> None:
        self.__dict__.update(functions)


def as_cdll(fake: FakeLibrary) -> ctypes.CDLL:
    return fake  # type: ignore[return-value]


def test_queries_decode_what_the_library_reports() -> None:
    assert libs.query_cudart(as_cdll(FakeLibrary(cudaRuntimeGetVersion=FakeFunction(13020)))) == (
        13,
        2,
    )
    assert libs.query_cublas(as_cdll(FakeLibrary(cublasGetProperty=FakeFunction(13, 4, 1)))) == (
        13,
        4,
        1,
    )
    assert libs.query_cudnn(as_cdll(FakeLibrary(cudnnGetVersion=FakeFunction(92600)))) == (9, 26, 0)
    assert libs.query_nccl(as_cdll(FakeLibrary(ncclGetVersion=FakeFunction(23007)))) == (2, 30, 7)


def test_query_status_error_raises() -> None:
    with pytest.raises(libs.LibraryError, match="returned status 3"):
        libs.query_nccl(as_cdll(FakeLibrary(ncclGetVersion=FakeFunction(0, status=3))))


def test_soname_uses_expected_major() -> None:
    assert libs.soname("cudart", "13.2.86") == "libcudart.so.13"
    assert libs.soname("nccl", "2.30.7") == "libnccl.so.2"


def test_resolved_path_reads_maps(tmp_path: Path) -> None:
    maps = tmp_path / "maps"
    maps.write_text(
        "7f00-7f01 r--p 00000000 08:01 11 /usr/lib/libcublasLt.so.13\n"
        "7f01-7f02 r-xp 00000000 08:01 12 /opt/venv/nvidia/cu13/lib/libcublas.so.13\n"
        "7f02-7f03 rw-p 00000000 00:00 0 \n"
    )
    assert (
        libs.resolved_path("libcublas.so.13", maps) == "/opt/venv/nvidia/cu13/lib/libcublas.so.13"
    )


def library_check(name: str, expected: str) -> Check:
    env_expect = {"libraries": {name: expected}}

    def fn(ctx: Any) -> str:
        ctx.expect = env_expect
        return libs.verify_library(ctx, name, expected)

    return Check(f"lib.{name}", "T0", False, fn)


def test_missing_library_fails_with_dlerror() -> None:
    result = run_check(library_check("ngcdoesnotexist", "13.0"), ENV)
    assert result.status == "fail" and result.fault == "image"
    assert "libngcdoesnotexist.so.13" in result.message
    assert "cannot open shared object file" in result.message


def test_library_without_known_query_passes_when_it_loads() -> None:
    result = run_check(library_check("c", "6"), ENV)  # libc.so.6: always there on Linux
    assert result.status == "pass", result.message
    assert "no version query known" in result.message
    assert "libc.so" in result.evidence["path"]


def test_version_mismatch_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeLibrary(ncclGetVersion=FakeFunction(23007))
    monkeypatch.setattr(libs, "load", lambda name: (fake, "/fake/libnccl.so.2"))
    result = run_check(library_check("nccl", "2.30.6"), ENV)
    assert result.status == "fail"
    assert result.message == "nccl is 2.30.7, expected 2.30.6 (/fake/libnccl.so.2)"
    assert result.evidence["path"] == "/fake/libnccl.so.2"


def test_version_match_compares_only_what_the_query_reports(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = FakeLibrary(cudaRuntimeGetVersion=FakeFunction(13020))
    monkeypatch.setattr(libs, "load", lambda name: (fake, "/fake/libcudart.so.13"))
    result = run_check(library_check("cudart", "13.2.86"), ENV)
    assert result.status == "pass", result.message
    assert result.evidence["version"] == "13.2"


def test_cuda_11_runtime_soname_carries_its_minor() -> None:
    from ngc_builder.runner.libs import soname

    assert soname("cudart", "11.7.99") == "libcudart.so.11.0"
    assert soname("cudart", "13.2.86") == "libcudart.so.13"
    assert soname("cublas", "11.10.3.66") == "libcublas.so.11"


@pytest.mark.parametrize("gpu_expected,status", [(False, "skip"), (True, "fail")])
def test_cuda_11_runtime_without_driver_is_skipped_not_passed(
    monkeypatch: pytest.MonkeyPatch, gpu_expected: bool, status: str
) -> None:
    # CUDA 11's cudaRuntimeGetVersion answers 35 (insufficient driver) on a host with none.
    fake = FakeLibrary(cudaRuntimeGetVersion=FakeFunction(0, status=35))
    monkeypatch.setattr(libs, "load", lambda name: (fake, "/fake/libcudart.so.11.0"))
    env = RunEnv({}, "required" if gpu_expected else "none", gpu_expected, False)
    result = run_check(library_check("cudart", "11.7.99"), env)
    assert result.status == status
    assert "libcudart.so.11.0" in result.message
    if gpu_expected:
        assert result.fault == "host"
    else:
        assert result.message.startswith("no GPU")
