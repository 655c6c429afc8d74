"""The PyTorch probe's TF32 proof, TF32 switches and cudnn.benchmark proof, on a fake torch."""

from __future__ import annotations

import os
import sys
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from ngc_builder.runner.report import CheckResult
from ngc_builder.runner.suite import Check, RunEnv, run_check
from tests.unit.probes.fake_torch import FakeTorch, fake_conv_fwd_bwd
from tests.unit.probes.probing import LoadProbe, run_gpu_check

pytestmark = pytest.mark.unit


@pytest.fixture
def matrix(load_probe: LoadProbe) -> ModuleType:
    return load_probe("pytorch", "probe_pytorch_matrix")


@pytest.fixture
def lib(load_probe: LoadProbe) -> ModuleType:
    return load_probe("pytorch", "probe_pytorch_lib")


@pytest.fixture
def autotune(load_probe: LoadProbe) -> ModuleType:
    return load_probe("pytorch", "probe_pytorch_autotune")


def matrix_on(matrix: ModuleType, torch: FakeTorch, device: str = "cuda") -> CheckResult:
    return run_gpu_check(lambda ctx: matrix.precision_matrix(ctx, torch, device))


def test_tf32_row_passes_when_tf32_rounds(matrix: ModuleType) -> None:
    result = matrix_on(matrix, FakeTorch())
    assert result.status == "pass", result.message
    assert "tf32 2.8e-04 (TF32 used" in result.message
    assert result.evidence["tf32.conv_error"] > 1e-5  # the fake rounds its conv too


def test_tf32_row_equal_to_fp32_fails_naming_tf32_off(matrix: ModuleType) -> None:
    result = matrix_on(matrix, FakeTorch(honours_tf32=False))
    assert result.status == "fail" and result.fault == "image"
    assert "TF32 is off" in result.message and "2.5e-07" in result.message


def test_tf32_is_not_claimed_below_sm80_or_on_the_cpu(matrix: ModuleType) -> None:
    turing = matrix_on(matrix, FakeTorch(capability=(7, 5)))
    assert turing.status == "pass", turing.message
    assert "tf32 not applicable (sm_75 has no TF32" in turing.message
    assert "tf32.matmul_rel_error" not in turing.evidence
    cpu = matrix_on(matrix, FakeTorch(), "cpu")
    assert cpu.status == "pass" and "tf32 not applicable (no TF32 on cpu" in cpu.message


def test_legacy_torch_proves_tf32_through_allow_tf32(matrix: ModuleType) -> None:
    torch = FakeTorch(new_api=False)
    assert matrix_on(matrix, torch).status == "pass"
    off = matrix_on(matrix, FakeTorch(new_api=False, honours_tf32=False))
    assert off.status == "fail" and "TF32 is off" in off.message


def switches(torch: FakeTorch) -> tuple[Any, ...]:
    """The new API's two settings (reading allow_tf32 would raise on that fake)."""
    return torch.backends.cuda.matmul.fp32_precision, torch.backends.cudnn.conv.fp32_precision


def test_new_api_is_used_alone_and_restored(lib: ModuleType) -> None:
    torch = FakeTorch()  # its allow_tf32 raises, as PyTorch's does once fp32_precision is set
    assert lib.new_tf32_api(torch)
    before = switches(torch)
    with lib.tf32_mode(torch, True):
        assert switches(torch) == ("tf32", "tf32")
    with lib.tf32_mode(torch, False):
        assert switches(torch) == ("ieee", "ieee")
    assert switches(torch) == before == ("none", "tf32")


def test_legacy_flags_are_used_where_there_is_no_new_api(lib: ModuleType) -> None:
    torch = FakeTorch(new_api=False)
    assert not lib.new_tf32_api(torch)
    with lib.tf32_mode(torch, True):
        assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == (
            True, True)
    assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == (
        False, True)


def test_settings_come_back_when_the_block_raises(lib: ModuleType) -> None:
    torch = FakeTorch()
    with pytest.raises(ZeroDivisionError), lib.tf32_mode(torch, False):
        _ = 1 / 0
    assert switches(torch) == ("none", "tf32")


def benchmark_check(
    autotune: ModuleType, torch: FakeTorch, monkeypatch: pytest.MonkeyPatch
) -> CheckResult:
    monkeypatch.setitem(sys.modules, "torch", torch)  # require_cuda imports it
    monkeypatch.setattr(autotune, "conv_fwd_bwd", fake_conv_fwd_bwd(torch))
    return run_gpu_check(autotune.gpu_cudnn_benchmark)


def test_benchmark_passes_when_the_first_call_searches(
    autotune: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    torch = FakeTorch()
    result = benchmark_check(autotune, torch, monkeypatch)
    assert result.status == "pass", result.message
    assert result.evidence["kernels_first_call"] == 13
    assert result.evidence["kernels_repeat_call"] == 1
    assert torch.backends.cudnn.benchmark is False  # restored
    assert torch.backends.cudnn.conv.fp32_precision == "tf32"


def test_benchmark_without_a_search_fails(
    autotune: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = benchmark_check(autotune, FakeTorch(autotunes=False), monkeypatch)
    assert result.status == "fail"
    assert "did not autotune" in result.message and "launched 1 GPU kernel(s)" in result.message


def test_benchmark_is_skipped_when_the_profiler_sees_no_gpu(
    autotune: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    blind = benchmark_check(autotune, FakeTorch(cupti=False), monkeypatch)
    assert blind.status == "skip" and "recorded no CUDA kernel" in blind.message
    torch = FakeTorch()
    torch.profiler.supported_activities = lambda: {"cpu"}
    unsupported = benchmark_check(autotune, torch, monkeypatch)
    assert unsupported.status == "skip" and "cannot record CUDA" in unsupported.message


def test_benchmark_shapes_are_new_to_cudnns_cache(
    autotune: ModuleType, lib: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plan cache ignores the benchmark flag: a shape the heuristic conv check ran would
    be served from it, so the benchmark check must never meet one, even when run twice."""
    first, second = autotune.fresh_shapes(), autotune.fresh_shapes()
    assert len({first, second, lib.CONV_SHAPES}) == 3
    torch = FakeTorch()  # one process, one plan cache: a repeated shape would fail the 2nd run
    for _ in range(2):
        assert benchmark_check(autotune, torch, monkeypatch).status == "pass"


@pytest.mark.parametrize(("host_mode", "status"), [(True, "skip"), (False, "fail")])
def test_a_missing_onnx_stack_is_a_skip_on_a_host_and_a_failure_in_an_image(
        load_probe: LoadProbe, monkeypatch: pytest.MonkeyPatch, host_mode: bool,
        status: str) -> None:
    from ngc_builder.runner.suite import Check, RunEnv, run_check

    probe = load_probe("pytorch", "probe")
    monkeypatch.setitem(sys.modules, "torch", FakeTorch())
    monkeypatch.setitem(sys.modules, "onnx", None)  # None in sys.modules: ImportError
    env = RunEnv({}, "none", False, False, 0, host_mode=host_mode)
    result = run_check(Check("torch.onnx_export", "T2", False, probe.onnx_export), env)
    assert result.status == status and "onnxruntime" in result.message


# The devel probe builds as users would: it sets no variable, and holds the image's
# TORCH_CUDA_ARCH_LIST to the release's targets (issue 44: the probe used to set it itself).
@pytest.fixture
def devel(load_probe: LoadProbe) -> ModuleType:
    return load_probe("pytorch", "probe_pytorch_devel")


def _targets_held(devel: ModuleType, monkeypatch: pytest.MonkeyPatch, value: str | None,
                  host_mode: bool = False) -> CheckResult:
    if value is None:
        monkeypatch.delenv("TORCH_CUDA_ARCH_LIST", raising=False)
    else:
        monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", value)
    env = RunEnv({"gpu_targets": ["9.0", "8.0"]}, "none", False, False, host_mode=host_mode)
    return run_check(Check("torch.devel.targets", "T2", False,
                           lambda ctx: str(devel.built_for(ctx))), env)


def test_a_devel_image_without_the_arch_list_fails_naming_the_release_targets(
        devel: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _targets_held(devel, monkeypatch, None)
    assert (result.status, result.fault) == ("fail", "image")
    assert "does not set TORCH_CUDA_ARCH_LIST" in result.message
    assert "8.0;9.0+PTX" in result.message
    assert "TORCH_CUDA_ARCH_LIST" not in os.environ  # and it set none


def test_a_devel_image_with_other_targets_fails_and_the_right_list_passes(
        devel: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    wrong = _targets_held(devel, monkeypatch, "9.0")
    assert wrong.status == "fail" and "TORCH_CUDA_ARCH_LIST=9.0" in wrong.message
    right = _targets_held(devel, monkeypatch, "8.0;9.0+PTX")
    assert (right.status, right.message) == ("pass", "None")  # held to the release's targets


def test_host_mode_without_the_list_builds_for_the_nodes_own_gpus(
        devel: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    cuda = SimpleNamespace(is_available=lambda: True, device_count=lambda: 2,
                           get_device_capability=lambda index: (9, 0))
    monkeypatch.setitem(sys.modules, "torch", SimpleNamespace(cuda=cuda))
    result = _targets_held(devel, monkeypatch, None, host_mode=True)
    assert (result.status, result.message) == ("pass", "['9.0']")
    monkeypatch.setattr(cuda, "is_available", lambda: False)
    none = _targets_held(devel, monkeypatch, None, host_mode=True)
    assert none.status == "fail" and "there is no GPU here" in none.message
