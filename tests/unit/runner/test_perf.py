"""T3 maths: bus bandwidth, thresholds from floors and baselines, medians of repeats."""

from __future__ import annotations

import math

import pytest

from ngc_builder.runner import nvml, perf
from ngc_builder.runner.perf import Threshold, bus_bandwidth, threshold_for, verdict
from ngc_builder.runner.report import NO_GPU
from ngc_builder.runner.suite import Check, RunEnv, run_check

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
    passed, message = verdict("gemm_bf16_tflops", "TFLOP/s", [600.0] * 5, limit)
    assert not passed
    assert "median 600" in message and "threshold 604.5" in message and "650" in message
    assert verdict("gemm_bf16_tflops", "TFLOP/s", [610.0] * 5, limit)[0]


def test_a_nan_median_never_passes() -> None:
    assert not verdict("m", "u", [math.nan] * 5, Threshold(None, None, None, None))[0]
    assert not verdict("m", "u", [math.nan] * 5, Threshold(1.0, 1.0, None, None))[0]


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
