"""T1 host preflight through NVML (nvidia-ml-py): is this host fit to run GPU images?

Every finding is a host matter (fault "host"): an image cannot fix an old driver, a GPU with
uncorrected ECC errors, a lost GPU, a thermal slowdown or someone else's job on the GPU. Without
NVML or a GPU every check is skipped with its reason, never passed.

Stdlib only (besides the optional pynvml): GPU nodes run it with nothing but their own Python.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from ngc_builder.runner.report import CheckResult, RunReport

SLOWDOWNS = {  # nvmlClocksEventReason* bits that mean the GPU is being held back
    0x04: "software power cap", 0x08: "hardware slowdown", 0x20: "software thermal slowdown",
    0x40: "hardware thermal slowdown", 0x80: "hardware power brake",
}
UNCORRECTED, VOLATILE = 1, 0  # NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC
GiB = 1 << 30
# NVML_ERROR_NOT_SUPPORTED, NVML_ERROR_FUNCTION_NOT_FOUND: the GPU or driver lacks the query,
# which says nothing about the host's health. Every other NVML error (GPU_IS_LOST,
# NO_PERMISSION, INSUFFICIENT_POWER...) is a host defect.
UNANSWERABLE = {3, 13}
Probe = Callable[[Any, list[Any]], CheckResult]


def load_nvml() -> Any | None:
    try:
        import pynvml  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    return pynvml


def host_preflight(minimum_driver: str | None, nvml: Any | None = None,
                   required: bool = False) -> list[CheckResult]:
    """`required` (NGC_GPU=required): a host without NVML or a driver fails instead of being
    skipped; a GPU runner whose driver or nvidia-ml-py went missing must not pass."""
    nvml = nvml if nvml is not None else load_nvml()
    if nvml is None:
        return [_no_gpu("nvidia-ml-py is not installed (its `gpu` extra)", required)]
    try:
        nvml.nvmlInit()
    except Exception as exc:
        return [_no_gpu(f"NVML did not start ({exc})", required)]
    try:
        return _checks(nvml, minimum_driver)
    finally:
        nvml.nvmlShutdown()


def _checks(nvml: Any, minimum_driver: str | None) -> list[CheckResult]:
    try:
        count = int(nvml.nvmlDeviceGetCount())
    except Exception as exc:
        return [_host_fault("t1.nvml", "NVML cannot count the GPUs", exc)]
    handles, lost = _handles(nvml, count)
    results = [CheckResult("t1.nvml", "T1", "pass", f"NVML sees {count} GPU(s)")]
    results.append(_guarded_driver(nvml, minimum_driver))
    if lost:
        results.append(CheckResult("t1.reachable", "T1", "fail", "; ".join(lost), fault="host",
                                   evidence={"unreachable": lost}))
    results += [_guarded(probe, nvml, handles) for probe in PROBES]
    return results


def _handles(nvml: Any, count: int) -> tuple[list[Any], list[str]]:
    """Handles of the GPUs NVML can reach, and why each other one cannot be reached."""
    handles, lost = [], []
    for index in range(count):
        try:
            handles.append(nvml.nvmlDeviceGetHandleByIndex(index))
        except Exception as exc:
            lost.append(f"GPU {index} unreachable through NVML: {_nvml_error(exc)}")
    return handles, lost


def _nvml_error(exc: Exception) -> str:
    return f"{exc.__class__.__name__}: {exc}"


def _host_fault(check_id: str, what: str, exc: Exception) -> CheckResult:
    return CheckResult(check_id, "T1", "fail", f"{what}: {_nvml_error(exc)}", fault="host")


def _guarded_driver(nvml: Any, minimum: str | None) -> CheckResult:
    try:
        return check_driver(nvml, minimum)
    except Exception as exc:
        return _host_fault("t1.driver", "NVML cannot read the driver version", exc)


def _no_gpu(reason: str, required: bool) -> CheckResult:
    if required:
        return CheckResult("t1.nvml", "T1", "fail", f"no GPU, but NGC_GPU=required: {reason}",
                           fault="host")
    return _skip("t1.nvml", f"no GPU: {reason}")


def _skip(check_id: str, reason: str) -> CheckResult:
    return CheckResult(check_id, "T1", "skip", reason)


def _guarded(probe: Probe, nvml: Any, handles: list[Any]) -> CheckResult:
    check_id = f"t1.{probe.__name__.removeprefix('check_')}"
    try:
        return probe(nvml, handles)
    except Exception as exc:
        if getattr(exc, "value", None) in UNANSWERABLE or not hasattr(exc, "value"):
            return _skip(check_id, f"NVML cannot answer: {_nvml_error(exc)}")
        return _host_fault(check_id, "NVML query failed", exc)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def check_driver(nvml: Any, minimum: str | None) -> CheckResult:
    driver = _text(nvml.nvmlSystemGetDriverVersion())
    evidence = {"driver": driver, "minimum": minimum}
    if minimum is None:
        return CheckResult("t1.driver", "T1", "pass", f"driver {driver}", evidence=evidence)
    try:
        too_old = _numbers(driver) < _numbers(minimum)
    except ValueError:
        return CheckResult("t1.driver", "T1", "fail", f"driver version {driver!r} unreadable",
                           fault="host", evidence=evidence)
    if too_old:
        return CheckResult("t1.driver", "T1", "fail",
                           f"driver {driver} is older than the image's minimum {minimum}",
                           fault="host", evidence=evidence)
    return CheckResult("t1.driver", "T1", "pass", f"driver {driver} >= {minimum}",
                       evidence=evidence)


def _numbers(version: str) -> tuple[int, ...]:
    """'580.95.05' -> (580, 95, 5); NVIDIA driver versions are dotted integers."""
    return tuple(int(part) for part in version.strip().split("."))


def check_gpus(nvml: Any, handles: list[Any]) -> CheckResult:
    gpus = [{"name": _text(nvml.nvmlDeviceGetName(h)),
             "compute_capability": ".".join(
                 str(part) for part in nvml.nvmlDeviceGetCudaComputeCapability(h)),
             "memory_gib": round(nvml.nvmlDeviceGetMemoryInfo(h).total / GiB, 1)}
            for h in handles]
    if not gpus:
        return CheckResult("t1.gpus", "T1", "fail", "NVML runs but sees no GPU", fault="host")
    names = ", ".join(f"{g['name']} (sm_{g['compute_capability'].replace('.', '')}, "
                      f"{g['memory_gib']} GiB)" for g in gpus)
    return CheckResult("t1.gpus", "T1", "pass", f"{len(gpus)} GPU(s): {names}",
                       evidence={"gpus": gpus})


def check_ecc(nvml: Any, handles: list[Any]) -> CheckResult:
    found = []
    for index, handle in enumerate(handles):
        enabled = nvml.nvmlDeviceGetEccMode(handle)[0] == 1
        errors = nvml.nvmlDeviceGetTotalEccErrors(handle, UNCORRECTED, VOLATILE) if enabled else 0
        found.append({"gpu": index, "ecc": enabled, "volatile_uncorrected": int(errors)})
    bad = [f["gpu"] for f in found if f["volatile_uncorrected"] > 0]
    if bad:
        return CheckResult("t1.ecc", "T1", "fail", f"uncorrected ECC errors on GPU {bad}",
                           fault="host", evidence={"gpus": found})
    modes = ", ".join(f"GPU {f['gpu']} ECC {'on' if f['ecc'] else 'off'}" for f in found)
    return CheckResult("t1.ecc", "T1", "pass", f"{modes}; no volatile uncorrected errors",
                       evidence={"gpus": found})


def check_remapped_rows(nvml: Any, handles: list[Any]) -> CheckResult:
    rows = [tuple(nvml.nvmlDeviceGetRemappedRows(h)) for h in handles]
    bad = [i for i, (_, _, pending, failed) in enumerate(rows) if pending or failed]
    evidence = {"rows": [dict(zip(("correctable", "uncorrectable", "pending", "failure"), r,
                                  strict=True)) for r in rows]}
    if bad:
        return CheckResult("t1.remapped_rows", "T1", "fail",
                           f"row remapping pending or failed on GPU {bad}: reset the GPU",
                           fault="host", evidence=evidence)
    return CheckResult("t1.remapped_rows", "T1", "pass", "no pending or failed row remapping",
                       evidence=evidence)


def check_clocks(nvml: Any, handles: list[Any]) -> CheckResult:
    active = {}
    for index, handle in enumerate(handles):
        reasons = int(nvml.nvmlDeviceGetCurrentClocksEventReasons(handle))
        held = [text for bit, text in SLOWDOWNS.items() if reasons & bit]
        if held:
            active[index] = held
    if active:
        detail = "; ".join(f"GPU {i}: {', '.join(r)}" for i, r in active.items())
        return CheckResult("t1.clocks", "T1", "fail", f"clocks held back: {detail}",
                           fault="host", evidence={"active": active})
    return CheckResult("t1.clocks", "T1", "pass", "no thermal or power slowdown active")


def check_modes(nvml: Any, handles: list[Any]) -> CheckResult:
    modes = [{"gpu": i, "persistence": nvml.nvmlDeviceGetPersistenceMode(h) == 1,
              "mig": nvml.nvmlDeviceGetMigMode(h)[0] == 1} for i, h in enumerate(handles)]
    text = ", ".join(f"GPU {m['gpu']}: persistence {'on' if m['persistence'] else 'off'}, "
                     f"MIG {'on' if m['mig'] else 'off'}" for m in modes)
    return CheckResult("t1.modes", "T1", "pass", text, evidence={"gpus": modes})


def check_processes(nvml: Any, handles: list[Any]) -> CheckResult:
    mine = os.getpid()
    foreign = [{"gpu": i, "pid": p.pid, "used_gib": round((p.usedGpuMemory or 0) / GiB, 2)}
               for i, h in enumerate(handles)
               for p in nvml.nvmlDeviceGetComputeRunningProcesses(h) if p.pid != mine]
    if foreign:
        detail = ", ".join(f"pid {f['pid']} on GPU {f['gpu']} ({f['used_gib']} GiB)"
                           for f in foreign)
        return CheckResult("t1.processes", "T1", "fail", f"GPUs are busy: {detail}",
                           fault="host", evidence={"processes": foreign})
    return CheckResult("t1.processes", "T1", "pass", "no other compute process on the GPUs")


PROBES: tuple[Probe, ...] = (check_gpus, check_ecc, check_remapped_rows, check_clocks,
                             check_modes, check_processes)


def preflight_report(minimum_driver: str | None, nvml: Any | None = None,
                     gpu_mode: str = "auto") -> RunReport:
    """The T1 checks as one report, like a runner's (JSON, JUnit); `gpu_mode` as NGC_GPU says
    (auto|required|none): only `required` turns a missing GPU into a failure."""
    required = gpu_mode == "required"
    return RunReport(image="host", python=sys.version.split()[0], platform=sys.platform,
                     gpu_mode=gpu_mode, gpu_expected=required,
                     checks=host_preflight(minimum_driver, nvml, required))
