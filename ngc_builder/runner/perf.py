"""T3 measurements: median of repeats after warm-up, compared with a threshold.

threshold = max(absolute floor for the GPU model, 0.93 x the stored baseline median for the same
GPU model, driver branch and image lineage). Floors and baselines reach the runner as one JSON
document (``NGC_BASELINES``) that the host side selected for this image's lineage and release;
the runner picks the entries for the GPU it actually runs on.
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MIN_REPEATS = 5
BASELINE_FRACTION = 0.93
ENV_VAR = "NGC_BASELINES"


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


def verdict(metric: str, unit: str, samples: list[float], limit: Threshold) -> tuple[bool, str]:
    """(passed, message); a NaN median never passes."""
    median = statistics.median(samples)
    shown = f"{metric} median {median:.4g} {unit} of {len(samples)}"
    if limit.value is None:
        return median == median, f"{shown} (no threshold: {limit.describe()})"
    if not median >= limit.value:
        return False, f"{shown} < threshold {limit.value:.4g} ({limit.describe()})"
    return True, f"{shown} >= threshold {limit.value:.4g} ({limit.describe()})"
