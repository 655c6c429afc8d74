"""T3 maths: bus bandwidth, thresholds from floors and baselines, medians of repeats."""

from __future__ import annotations

import math

import pytest

from ngc_builder.runner import gpu, nvml, perf, visibility
from ngc_builder.runner.perf import Threshold, bus_bandwidth, threshold_for, verdict
from ngc_builder.runner.report import NO_GPU
from ngc_builder.runner.suite import Check, DeviceZero, RunEnv, run_check

pytestmark = pytest.mark.unit
H100 = "NVIDIA H100 80GB HBM3"
DOCUMENT = {
    "floors": {H100: {"gemm_bf16_tflops": 494.7}},
    "baselines": [
        {"release": "26.09", "gpu": H100, "driver_branch": "580", "lineage": "pytorch",
         "metric": "gemm_bf16_tflops", "median": 700.0},
        {"release": "26.10", "gpu": H100, "driver_branch": "580", "lineage": "pytorch",
         "metric": "gemm_bf16_tflops", "median": 650.0},
        {"release": "26.10", "gpu": H100, "driver_branch": "570", "lineage": "pytorch",
         "metric": "gemm_bf16_tflops", "median": 900.0},
    ],
}


def test_bus_bandwidth_follows_nccl() -> None:
    assert bus_bandwidth(100.0, 8) == pytest.approx(175.0)
    assert bus_bandwidth(100.0, 2) == pytest.approx(100.0)
    assert bus_bandwidth(100.0, 1) == 0.0
    with pytest.raises(ValueError):
        bus_bandwidth(1.0, 0)


def test_threshold_is_the_latest_baseline_of_the_same_driver_branch() -> None:
    limit = threshold_for(DOCUMENT, H100, "580", "gemm_bf16_tflops")
    assert limit.baseline == 650.0 and limit.baseline_release == "26.10"
    assert limit.value == pytest.approx(0.93 * 650.0)


def test_floor_wins_when_higher_than_the_baseline_share() -> None:
    document = {**DOCUMENT, "floors": {H100: {"gemm_bf16_tflops": 620.0}}}
    assert threshold_for(document, H100, "580", "gemm_bf16_tflops").value == 620.0


def test_without_baseline_the_floor_alone_applies_and_without_both_none() -> None:
    assert threshold_for(DOCUMENT, H100, "590", "gemm_bf16_tflops").value == 494.7
    unknown = threshold_for(DOCUMENT, "NVIDIA B200", "580", "gemm_bf16_tflops")
    assert unknown.value is None and "no floor or baseline" in unknown.describe()


def test_verdict_reports_both_numbers_on_a_drop() -> None:
    limit = Threshold(604.5, 494.7, 650.0, "26.10")
    status, message = verdict("gemm_bf16_tflops", "TFLOP/s", [600.0] * 5, limit)
    assert status == "fail"
    assert "median 600" in message and "threshold 604.5" in message and "650" in message
    assert verdict("gemm_bf16_tflops", "TFLOP/s", [610.0] * 5, limit)[0] == "pass"


def test_a_nan_median_never_passes() -> None:
    assert verdict("m", "u", [math.nan] * 5, Threshold(None, None, None, None))[0] == "fail"
    assert verdict("m", "u", [math.nan] * 5, Threshold(1.0, 1.0, None, None))[0] == "fail"


def test_no_floor_and_no_baseline_is_a_skip_that_says_what_to_add() -> None:
    status, message = verdict("gemm_bf16_tflops", "TFLOP/s", [700.0] * 5,
                              Threshold(None, None, None, None), "NVIDIA B200")
    assert status == "skip"
    assert message == ("gemm_bf16_tflops median 700 TFLOP/s of 5; no floor or baseline for GPU "
                       "'NVIDIA B200': add its datasheet peaks to baselines/gpu.json")


def test_repeat_discards_warmup_and_needs_five_samples() -> None:
    values = iter(range(100))
    assert perf.repeat(lambda: float(next(values)), 5, warmup=2) == [2.0, 3.0, 4.0, 5.0, 6.0]
    with pytest.raises(ValueError):
        perf.repeat(lambda: 1.0, 4)


def test_load_document_reads_the_environment() -> None:
    assert perf.load_document({}) == {}
    assert perf.load_document({"NGC_BASELINES": '{"floors": {}}'}) == {"floors": {}}
    with pytest.raises(ValueError):
        perf.load_document({"NGC_BASELINES": "[1]"})


def measuring_check(samples: list[float]) -> Check:
    values = iter(samples)
    return Check("x.bench", "T3", True, lambda ctx: ctx.measure(
        "gemm_bf16_tflops", "TFLOP/s", lambda: next(values)))


def test_measure_records_evidence_and_fails_below_threshold(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(nvml, "snapshot", lambda: {"driver": "580.95.05", "gpus": []})
    info = {"driver": "580.95.05", "gpus": [{"name": H100, "index": 0}]}
    env = RunEnv({}, "required", True, True, 1, info, DOCUMENT)
    slow = run_check(measuring_check([1.0, 1.0] + [500.0] * 5), env)
    assert slow.status == "fail" and "< threshold" in slow.message
    measured = slow.evidence["measurement"]
    assert measured["median"] == 500.0 and measured["samples"] == [500.0] * 5
    assert measured["gpu"] == H100 and measured["driver_branch"] == "580"
    assert slow.evidence["gpu_before"]["driver"] == "580.95.05"
    fast = run_check(measuring_check([1.0, 1.0, 640.0, 620.0, 630.0, 1.0, 700.0]), env)
    assert fast.status == "pass" and "median 630" in fast.message


def test_measure_is_skipped_without_gpu() -> None:
    result = run_check(measuring_check([1.0] * 7), RunEnv({}, "none", False, False))
    assert result.status == "skip" and result.message == NO_GPU


A100 = "NVIDIA A100-SXM4-80GB"
# A mixed node: NVML (PCI order) lists the A100 first, CUDA's device 0 is the H100.
MIXED = {"driver": "580.95.05", "gpus": [
    {"name": A100, "index": 0, "pci_bus_id": "0000:07:00.0"},
    {"name": H100, "index": 1, "pci_bus_id": "0000:3b:00.0"}]}
FLOORS = {"floors": {A100: {"gemm_bf16_tflops": 156.0}, H100: {"gemm_bf16_tflops": 494.7}}}


def test_the_floor_is_the_one_of_cuda_device_0_not_of_nvml_index_0(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(nvml, "snapshot", lambda: MIXED)
    monkeypatch.setattr(gpu, "device_zero_bus_id", lambda: "0000:3B:00.0")
    env = RunEnv({}, "required", True, True, 2, MIXED, FLOORS,
                 device_zero=visibility.device_zero(MIXED))
    # 300 TFLOP/s passes an A100's floor, not an H100's.
    result = run_check(measuring_check([1.0, 1.0] + [300.0] * 5), env)
    assert result.status == "fail" and "floor 494.7" in result.message
    measured = result.evidence["measurement"]
    assert measured["gpu"] == H100 and measured["floor"] == 494.7
    assert measured["gpu_source"] == "CUDA device 0 is PCI 0000:3b:00.0, NVML index 1"


def test_without_cuda_device_0_a_mixed_node_has_no_floor_to_guess(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(nvml, "snapshot", lambda: MIXED)
    zero = DeviceZero(None, "CUDA device 0 unknown (cuInit returned CUDA driver status 100)")
    env = RunEnv({}, "required", True, True, 2, MIXED, FLOORS, device_zero=zero)
    result = run_check(measuring_check([1.0, 1.0] + [300.0] * 5), env)
    assert result.status == "skip" and "GPU 'unknown GPU'" in result.message
    assert "status 100" in result.evidence["measurement"]["gpu_source"]
    single = RunEnv({}, "required", True, True, 1, {"gpus": [MIXED["gpus"][1]]}, FLOORS,
                    device_zero=zero)
    assert single.measured_gpu()[0] == H100  # one model only: its floors, whichever GPU


def test_a_gpu_without_floor_or_baseline_skips_and_keeps_the_measurement(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(nvml, "snapshot", lambda: {"driver": "580.95.05", "gpus": []})
    info = {"driver": "580.95.05", "gpus": [{"name": "NVIDIA B200", "index": 0}]}
    env = RunEnv({}, "required", True, True, 1, info, DOCUMENT)
    result = run_check(measuring_check([1.0, 1.0] + [900.0] * 5), env)
    assert (result.status, result.fault) == ("skip", None)
    assert result.message == (
        "gemm_bf16_tflops median 900 TFLOP/s of 5; no floor or baseline for GPU "
        "'NVIDIA B200': add its datasheet peaks to baselines/gpu.json")
    measured = result.evidence["measurement"]
    assert measured["median"] == 900.0 and measured["gpu"] == "NVIDIA B200"
    assert measured["threshold"] is None
