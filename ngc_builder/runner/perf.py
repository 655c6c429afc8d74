"""T3 measurements: median of repeats after warm-up, compared with a threshold.

threshold = max(absolute floor for the GPU model, 0.93 x the stored baseline median for the same
GPU model, driver branch and image lineage). Floors and baselines reach the runner as one JSON
document (``NGC_BASELINES``) that the host side selected for this image's lineage and release;
the runner picks the entries for the GPU it actually runs on. A benchmark with neither is a skip:
it validated nothing.
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .report import Status

MIN_REPEATS = 5
BASELINE_FRACTION = 0.93
ENV_VAR = "NGC_BASELINES"
# Where the project keeps the datasheet peaks that floors are made from.
BASELINE_FILE = "baselines/gpu.json"
UNKNOWN_GPU = "unknown GPU"


@dataclass(frozen=True)
class Threshold:
    value: float | None
    floor: float | None
    baseline: float | None
    baseline_release: str | None

    def describe(self) -> str:
        parts = []
        if self.baseline is not None:
            parts.append(f"{BASELINE_FRACTION} x baseline {self.baseline:.4g} "
                         f"from {self.baseline_release}")
        if self.floor is not None:
            parts.append(f"floor {self.floor:.4g}")
        return ", ".join(parts) or "no floor or baseline for this GPU"


def bus_bandwidth(algorithm_bandwidth: float, ranks: int) -> float:
    """NCCL's all-reduce bus bandwidth: algbw x 2(n-1)/n, comparable across rank counts."""
    if ranks < 1:
        raise ValueError("ranks must be >= 1")
    return algorithm_bandwidth * 2 * (ranks - 1) / ranks


def threshold_for(document: dict[str, Any], gpu: str, branch: str | None, metric: str) -> Threshold:
    floor = document.get("floors", {}).get(gpu, {}).get(metric)
    entries = [e for e in document.get("baselines", [])
               if e.get("gpu") == gpu and e.get("driver_branch") == branch
               and e.get("metric") == metric]
    latest = max(entries, key=lambda e: str(e.get("release", "")), default=None)
    baseline = None if latest is None else float(latest["median"])
    candidates = [v for v in (floor, None if baseline is None else BASELINE_FRACTION * baseline)
                  if v is not None]
    return Threshold(max(candidates) if candidates else None,
                     None if floor is None else float(floor), baseline,
                     None if latest is None else str(latest.get("release")))


def load_document(environ: dict[str, str] | None = None) -> dict[str, Any]:
    text = (os.environ if environ is None else environ).get(ENV_VAR)
    if not text:
        return {}
    document = json.loads(text)
    if not isinstance(document, dict):
        raise ValueError(f"{ENV_VAR} must hold a JSON object")
    return document


def repeat(sample: Callable[[], float], repeats: int = MIN_REPEATS, warmup: int = 2) -> list[float]:
    """Warm-up calls are discarded (autotuning, lazy loading, clocks ramping up)."""
    if repeats < MIN_REPEATS:
        raise ValueError(f"at least {MIN_REPEATS} repeats, got {repeats}")
    for _ in range(warmup):
        sample()
    return [float(sample()) for _ in range(repeats)]


@dataclass(frozen=True)
class Measurement:
    """The samples of one benchmark and the GPU they were taken on."""

    metric: str
    unit: str
    samples: list[float]
    gpu: str
    # How the GPU was chosen (CUDA device 0 matched to NVML), so a wrong floor can be traced.
    gpu_source: str
    driver_branch: str | None

    def evidence(self, limit: Threshold) -> dict[str, Any]:
        return {"metric": self.metric, "unit": self.unit, "samples": self.samples,
                "median": statistics.median(self.samples), "threshold": limit.value,
                "floor": limit.floor, "baseline": limit.baseline,
                "baseline_release": limit.baseline_release, "gpu": self.gpu,
                "gpu_source": self.gpu_source, "driver_branch": self.driver_branch}


def verdict(
    metric: str, unit: str, samples: list[float], limit: Threshold, gpu: str = UNKNOWN_GPU,
) -> tuple[Status, str]:
    """(status, message). A NaN median fails; with no floor and no baseline for ``gpu`` there
    is nothing to hold the median to, so it is a skip that says what to add, never a pass."""
    median = statistics.median(samples)
    shown = f"{metric} median {median:.4g} {unit} of {len(samples)}"
    if median != median:
        return "fail", f"{shown}: not a number"
    if limit.value is None:
        return "skip", (f"{shown}; no floor or baseline for GPU '{gpu}': add its datasheet "
                        f"peaks to {BASELINE_FILE}")
    if median < limit.value:
        return "fail", f"{shown} < threshold {limit.value:.4g} ({limit.describe()})"
    return "pass", f"{shown} >= threshold {limit.value:.4g} ({limit.describe()})"
