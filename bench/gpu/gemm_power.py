"""Why fp16 GEMM measures below bf16 on an H100: dtype, order, or power.

Runs 8192^3 GEMMs in interleaved rounds (so no dtype always runs later, hotter), about one second
of back-to-back calls per sample, and reads NVML half-way through each sample: SM clock, power
draw, temperature and the clock-event (throttle) reasons. Operand cases:

- ``bf16 randn`` and ``fp16 randn``: what ``torch.bench.gemm_*`` measure;
- ``fp16 bf16-valued``: fp16 operands holding values a bf16 can hold (3 low mantissa bits zero),
  so the same fp16 kernel toggles fewer bits; if it runs faster than ``fp16 randn``, the gap is
  data-dependent power, not the kernel;
- ``bf16 zeros`` / ``fp16 zeros``: the least toggling, the ceiling at this clock budget.

Prints one row per sample, then medians and the ratios fp16/bf16. Needs torch with CUDA and
nvidia-ml-py; never changes clocks or power limits. Usage: ``python3 bench/gpu/gemm_power.py
[--rounds N] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

SIZE = 8192
SAMPLE_S = 1.0
THROTTLE_NAMES = {0x1: "gpu_idle", 0x2: "app_clocks", 0x4: "sw_power_cap", 0x8: "hw_slowdown",
                  0x20: "sw_thermal", 0x40: "hw_thermal", 0x80: "hw_power_brake"}


def operands(torch: Any) -> dict[str, tuple[Any, Any]]:
    generator = torch.Generator(device="cuda").manual_seed(0)

    def randn(dtype: Any) -> Any:
        return torch.randn(SIZE, SIZE, device="cuda", dtype=dtype, generator=generator)

    bf16_a, bf16_b = randn(torch.bfloat16), randn(torch.bfloat16)
    zeros = {name: torch.zeros(SIZE, SIZE, device="cuda", dtype=dtype)
             for name, dtype in (("bf16", torch.bfloat16), ("fp16", torch.float16))}
    return {
        "bf16 randn": (bf16_a, bf16_b),
        "fp16 randn": (randn(torch.float16), randn(torch.float16)),
        "fp16 bf16-valued": (bf16_a.to(torch.float16), bf16_b.to(torch.float16)),
        "bf16 zeros": (zeros["bf16"], zeros["bf16"]),
        "fp16 zeros": (zeros["fp16"], zeros["fp16"]),
    }


def nvml_reading(nvml: Any, handle: Any) -> dict[str, Any]:
    # nvidia-ml-py renamed "throttle reasons" to "clocks event reasons" (12.535); take either.
    read_reasons = (getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None)
                    or nvml.nvmlDeviceGetCurrentClocksThrottleReasons)
    reasons = read_reasons(handle)
    return {"sm_mhz": nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_SM),
            "watts": nvml.nvmlDeviceGetPowerUsage(handle) / 1000,
            "celsius": nvml.nvmlDeviceGetTemperature(handle, nvml.NVML_TEMPERATURE_GPU),
            "reasons": [name for bit, name in THROTTLE_NAMES.items() if reasons & bit]}


def calls_per_sample(torch: Any, work: Callable[[], object]) -> int:
    start = time.perf_counter()
    for _ in range(20):
        work()
    torch.cuda.synchronize()
    return max(20, int(SAMPLE_S / ((time.perf_counter() - start) / 20)))


def sample(torch: Any, nvml: Any, handle: Any, pair: tuple[Any, Any]) -> dict[str, Any]:
    left, right = pair
    calls = calls_per_sample(torch, lambda: left @ right)
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    begin.record()
    for _ in range(calls):
        left @ right
    end.record()
    time.sleep(SAMPLE_S / 2)  # the launches are queued: read NVML while they run
    reading = nvml_reading(nvml, handle)
    end.synchronize()
    seconds = begin.elapsed_time(end) / 1000
    return {"tflops": 2 * SIZE**3 * calls / seconds / 1e12, **reading}


def run(rounds: int) -> dict[str, Any]:
    import pynvml as nvml
    import torch

    nvml.nvmlInit()
    handle = nvml.nvmlDeviceGetHandleByIndex(0)
    cases = operands(torch)
    for pair in cases.values():  # warm-up: cuBLAS heuristics, clocks up
        sample(torch, nvml, handle, pair)
    rows = []
    for round_index in range(rounds):
        for name, pair in cases.items():
            rows.append({"round": round_index, "case": name,
                         **sample(torch, nvml, handle, pair)})
            print(_row_line(rows[-1]), flush=True)
    return {"gpu": nvml.nvmlDeviceGetName(handle),
            "power_limit_w": nvml.nvmlDeviceGetEnforcedPowerLimit(handle) / 1000,
            "torch": torch.__version__, "rows": rows, "medians": _medians(rows)}


def _row_line(row: dict[str, Any]) -> str:
    return (f"{row['round']:>2} {row['case']:<17} {row['tflops']:7.1f} TFLOP/s "
            f"{row['sm_mhz']:5d} MHz {row['watts']:6.1f} W {row['celsius']:3d} C "
            f"{','.join(row['reasons']) or '-'}")


def _medians(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    by_case: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_case.setdefault(row["case"], []).append(row)
    return {case: {key: statistics.median(row[key] for row in group)
                   for key in ("tflops", "sm_mhz", "watts")}
            for case, group in by_case.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--json", help="write every sample and the medians here")
    args = parser.parse_args()
    result = run(args.rounds)
    medians = result["medians"]
    for case, median in medians.items():
        print(f"median {case:<17} {median['tflops']:7.1f} TFLOP/s "
              f"{median['sm_mhz']:6.0f} MHz {median['watts']:6.1f} W")
    bf16 = medians["bf16 randn"]["tflops"]
    for case in ("fp16 randn", "fp16 bf16-valued", "fp16 zeros", "bf16 zeros"):
        print(f"ratio {case} / bf16 randn: {medians[case]['tflops'] / bf16:.3f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(result, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
