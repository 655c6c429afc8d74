"""What a check knows about its run (``RunEnv``) and what it works with (``Context``).

Probes never import the runner (it is named ``ngc_runner`` in images but ``ngc_builder.runner``
on a host); everything they need reaches them through the ``Context`` a check is called with.
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from . import mpilaunch, numeric, nvml, perf, toolkit
from .report import FAULTS, Fault, Status


class CheckFailed(Exception):
    """Raised (through ``ctx.fail``) to fail a check; ``fault`` says whose fault it is."""

    def __init__(self, message: str, fault: Fault = "image") -> None:
        if fault not in FAULTS:
            raise ValueError(f"fault must be one of {FAULTS}, got {fault!r}")
        super().__init__(message)
        self.message = message
        self.fault: Fault = fault


class CheckSkipped(Exception):
    """Raised (through ``ctx.skip``) to skip a check with a reason."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class DeviceZero:
    """Which NVML GPU CUDA device 0 is. Frameworks compute on CUDA device 0, which is the first
    GPU of CUDA_VISIBLE_DEVICES and, in CUDA's default order, the fastest one; NVML counts in
    PCI order over every GPU. ``source`` says how the match was made, or why it was not."""

    nvml_index: int | None
    source: str


UNRESOLVED = DeviceZero(None, "CUDA device 0 not resolved")


@dataclass(frozen=True)
class RunEnv:
    """What every check may know about the run."""

    expect: dict[str, Any]
    gpu_mode: str
    gpu_expected: bool
    # NVIDIA device nodes or nvidia-smi are visible: tells "image can't use the GPU" (image
    # fault) from "no GPU was passed in" (host fault) when a framework sees no GPU.
    gpu_visible: bool
    # GPUs the host gave this process: frameworks must see exactly as many.
    host_gpus: int = 0
    # NVML's view at the start of the run: GPU names pick the floors and baselines of T3.
    gpu_info: dict[str, Any] = field(default_factory=dict)
    baselines: dict[str, Any] = field(default_factory=dict)
    # The runner validates an environment of this machine (validate --host), not an image:
    # its CUDA_VISIBLE_DEVICES is then the environment's choice (a scheduler's), not a defect.
    host_mode: bool = False
    # Where host_gpus came from, for the evidence and for messages.
    host_gpus_source: str = "device nodes"
    # CUDA_VISIBLE_DEVICES when the run started (None: not set).
    visible_devices: str | None = None
    device_zero: DeviceZero = UNRESOLVED
    scope: str = "full"  # or "emulated": the emulated tier only (scope.py)

    @property
    def gpu_name(self) -> str | None:
        return self.measured_gpu()[0]

    def measured_gpu(self) -> tuple[str | None, str]:
        """The NVML name of the GPU frameworks measure on, and how it was chosen."""
        gpus = self.gpu_info.get("gpus") or []
        index, source = self.device_zero.nvml_index, self.device_zero.source
        chosen = [gpu for gpu in gpus if index is not None and gpu.get("index") == index]
        if chosen:
            return str(chosen[0]["name"]), source
        names = sorted({str(gpu["name"]) for gpu in gpus})
        if len(names) == 1:  # one model only: whichever GPU it is, its floors are these
            return names[0], f"{source}; every GPU is {names[0]}"
        return None, f"{source}; NVML lists {', '.join(names) or 'no GPU'}"


class Context:
    """Passed to every check; one per check, so evidence never leaks between checks."""

    CheckFailed = CheckFailed
    CheckSkipped = CheckSkipped

    def __init__(self, env: RunEnv, check_id: str) -> None:
        self.check_id = check_id
        self.expect = env.expect
        self.gpu_mode = env.gpu_mode
        self.gpu_expected = env.gpu_expected
        self.gpu_visible = env.gpu_visible
        self.host_gpus = env.host_gpus
        self.host_gpus_source = env.host_gpus_source
        self.host_mode = env.host_mode
        self.env = env
        self.evidence_data: dict[str, Any] = {}

    def fail(self, message: str, fault: Fault = "image") -> NoReturn:
        """Fail the check. It raises, so ``ctx.fail(...)`` and ``raise ctx.fail(...)`` both work."""
        raise CheckFailed(message, fault)

    def skip(self, reason: str) -> NoReturn:
        raise CheckSkipped(reason)

    def cpu_fallback(self, detail: str) -> NoReturn:
        """A GPU was expected but the framework sees none: always a failure, never a pass."""
        self.evidence("gpu_visible_in_container", self.gpu_visible)
        self.evidence("cuda_visible_devices", self.env.visible_devices)
        fault, why = self._fallback_fault()
        raise CheckFailed(f"CPU fallback: {detail}{why}", fault)

    def _fallback_fault(self) -> tuple[Fault, str]:
        hidden = self.env.visible_devices
        if not self.gpu_visible:
            return "host", ""
        if self.host_mode and hidden is not None and self.host_gpus == 0:
            return "host", f" (CUDA_VISIBLE_DEVICES={hidden!r} of this environment hides every GPU)"
        if hidden is not None:  # in an image: the image's own environment hides the GPUs
            return "image", f" (CUDA_VISIBLE_DEVICES={hidden!r} is set in the image's environment)"
        return "image", ""

    def gpu_count_hint(self) -> str:
        """Where the expected GPU count came from, for a framework's device-count message."""
        hidden = self.env.visible_devices
        if self.host_mode or hidden is None:
            return f"expected from {self.host_gpus_source}"
        return f"expected from {self.host_gpus_source}; CUDA_VISIBLE_DEVICES={hidden!r} is " \
            "set in the image"

    def evidence(self, key: str, value: object) -> None:
        self.evidence_data[key] = jsonable(value)

    def absent(self, message: str) -> NoReturn:
        """Something the image should hold is missing: the image's fault; in host mode the
        environment is the host's, so the check is skipped."""
        if self.host_mode:
            self.skip(f"host mode: {message}")
        self.fail(message)

    def mpirun(self, worker: str, processes: int = 2) -> list[Any]:
        """Each rank's return of ``main(rank, size, coordinator)`` in the file `worker`, run in
        `processes` processes launched by Open MPI's mpirun (runner/mpilaunch.py)."""
        if shutil.which("mpirun") is None:
            self.absent("mpirun is not installed (openmpi-bin)")
        run = mpilaunch.launch(Path(worker), processes)
        self.evidence("command", run.command)
        if run.returncode is None:
            self.fail(f"the {processes}-process job did not end in {mpilaunch.TIMEOUT_S} s")
        if run.returncode != 0 or len(run.results) != processes:
            self.evidence("output_tail", run.output[-2000:])
            self.fail(f"mpirun -np {processes} exited {run.returncode} with "
                      f"{len(run.results)} rank result(s): {run.last_error()[:300]}")
        return [run.results[rank] for rank in sorted(run.results)]

    def cuda_home(self) -> str:
        """The CUDA toolkit a devel check builds with; skips where there is none."""
        return str(toolkit.cuda_home(self))

    def gpu_code_covers(self, path: str, targets: list[str] | None = None) -> str:
        """Fail unless the built library at `path` has SASS for every release GPU target
        (or every one of `targets`)."""
        return toolkit.gpu_code_covers(self, path, targets)

    def measure(
        self, metric: str, unit: str, sample: Callable[[], float], repeats: int = perf.MIN_REPEATS,
    ) -> str:
        """T3: ``sample()`` returns one measurement; the median is held to the threshold of the
        GPU the framework measures on. Without any threshold nothing was validated: a skip."""
        gpu, source = self.env.measured_gpu()
        name = gpu or perf.UNKNOWN_GPU
        branch = nvml.driver_branch(self.env.gpu_info.get("driver"))
        self.evidence("gpu_before", nvml.snapshot())
        samples = perf.repeat(sample, repeats)
        self.evidence("gpu_after", nvml.snapshot())
        limit = perf.threshold_for(self.env.baselines, name, branch, metric)
        self.evidence("measurement", perf.Measurement(metric, unit, samples, name, source, branch)
                      .evidence(limit))
        status, message = perf.verdict(metric, unit, samples, limit, name)
        return self._conclude(status, message)

    def _conclude(self, status: Status, message: str) -> str:
        if status == "fail":
            self.fail(message)
        if status == "skip":
            self.skip(message)
        return message

    def compare(
        self, what: str, actual: object, reference: object, tolerance: float,
        key: str | None = None,
    ) -> float:
        """Fail unless max |actual - reference| / max |reference| <= ``tolerance``; returns
        that error. Arrays are any framework's (see ``numeric.flatten``). The error is kept as
        evidence under ``key``, by default ``<what>_rel_error`` so that the comparisons of one
        check keep theirs apart."""
        error = numeric.rel_error(actual, reference)
        self.evidence(f"{what}_rel_error" if key is None else key, error)
        problem = numeric.over_tolerance(what, error, tolerance)
        if problem is not None:
            self.fail(problem)
        return error

    def assert_close(self, what: str, actual: object, reference: object, tolerance: float) -> str:
        """``compare`` for a check whose verdict is this one comparison: its pass message."""
        self.evidence("tolerance", tolerance)
        error = self.compare(what, actual, reference, tolerance, key="rel_error")
        return numeric.within(what, error, tolerance)

    def precision_matrix(self, device: str, tolerances: dict[str, float],
                         row: Callable[[str], tuple[float, float]], no_tf32: str | None) -> str:
        """Each precision's row on ``device``: ``row(name)`` gives its worst error against
        float64 and the error that shows TF32 (a matmul's). Where TF32 applies (``no_tf32`` is
        None) the tf32 row must show TF32's rounding: an fp32-exact result means TF32 is off;
        elsewhere the row is left out, with the reason."""
        worst, notes = {}, []
        for name in tolerances:
            if name == "tf32" and no_tf32 is not None:
                self.evidence("tf32", f"not applicable: {no_tf32}")
                notes.append(f"tf32 not applicable ({no_tf32})")
                continue
            worst[name], telling = row(name)
            if name == "tf32":
                self._require_tf32(device, telling)
        return numeric.precision_summary(worst, tolerances, notes)

    def _require_tf32(self, device: str, error: float) -> None:
        self.evidence("tf32.min_matmul_error", numeric.TF32_MIN_ERROR)
        if error < numeric.TF32_MIN_ERROR:
            self.fail(f"TF32 is off on {device}: the tf32 matmul max rel error {error:.1e} is "
                      f"fp32's (TF32 gives >= {numeric.TF32_MIN_ERROR:g}) although TF32 was "
                      "asked for; check NVIDIA_TF32_OVERRIDE and the framework's TF32 switch")

    @staticmethod
    def regression_data(
        features: int = 8, samples: int = 64, seed: int = 0
    ) -> tuple[numeric.Rows, numeric.Rows]:
        """Seeded linear-regression data as nested lists, for the probe to make its own
        arrays from (probes never import the runner, so it reaches them on the context)."""
        return numeric.regression_data(features, samples, seed)


def jsonable(value: object) -> Any:
    """Evidence must survive ``json.dumps``: keep plain data, stringify anything else."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # NaN/inf would make the document invalid JSON
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(item) for item in value]
    return str(value)
