"""What a framework probe may use of the runner: the ``suite`` its ``register`` gets and the
``ctx`` each of its checks gets. ``Suite`` and ``Context`` satisfy these Protocols
(tests/unit/runner/test_probe_api.py); the probes are type-checked against them alone.

Probes never import the runner at run time (it is ``ngc_runner`` in images, ``ngc_builder.runner``
on a host); they import this module by its bare name ``probe_api`` under ``TYPE_CHECKING`` only,
and mypy finds it through ``mypy_path``. So it is self-contained: no relative imports, stdlib only,
Python 3.9 at run time (it ships in images with the rest of the runner, unused there).
A member is listed here only if some probe uses it: the runner may change everything else.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, NoReturn, Protocol, runtime_checkable

# report.Fault and numeric.Rows again: a relative import would break the bare-name import.
# The test holds Fault to report.FAULTS.
Fault = Literal["image", "host"]
Rows = list[list[float]]


@runtime_checkable
class ProbeContext(Protocol):
    """The ``ctx`` a check is called with; one per check."""

    # Read-only properties: a probe reads the run's facts, it never sets them.
    @property
    def expect(self) -> Mapping[str, Any]:
        """The image's merged expectation documents (parsed JSON)."""
        ...

    @property
    def gpu_expected(self) -> bool: ...

    @property
    def host_gpus(self) -> int:
        """GPUs the host gave this process: a framework must see exactly as many."""
        ...

    @property
    def host_mode(self) -> bool:
        """The runner validates an environment of this machine, not an image."""
        ...

    @property
    def evidence_data(self) -> Mapping[str, Any]:
        """This check's evidence so far (what ``evidence`` recorded)."""
        ...

    def fail(self, message: str, fault: Fault = ...) -> NoReturn: ...

    def skip(self, reason: str) -> NoReturn: ...

    def cpu_fallback(self, detail: str) -> NoReturn: ...

    def gpu_count_hint(self) -> str: ...

    def evidence(self, key: str, value: object) -> None: ...

    def mpirun(self, worker: str, processes: int = ...) -> list[Any]:
        """Each rank's return of ``main(rank, size, coordinator)`` in the file ``worker``."""
        ...

    def cuda_home(self) -> str:
        """The CUDA toolkit of a devel image (or host); skips the check where there is none."""
        ...

    def gpu_code_covers(self, path: str, targets: list[str] | None = None) -> str:
        """Fails unless the library at `path` has SASS for every GPU target of the release
        (or of `targets`: what it was built for, such as a host's own GPUs)."""
        ...

    def measure(self, metric: str, unit: str, sample: Callable[[], float]) -> str: ...

    def compare(
        self, what: str, actual: object, reference: object, tolerance: float,
        key: str | None = ...,
    ) -> float: ...

    def assert_close(
        self, what: str, actual: object, reference: object, tolerance: float
    ) -> str: ...

    def precision_matrix(
        self, device: str, tolerances: dict[str, float],
        row: Callable[[str], tuple[float, float]], no_tf32: str | None,
    ) -> str: ...

    def regression_data(
        self, features: int = ..., samples: int = ..., seed: int = ...
    ) -> tuple[Rows, Rows]: ...


# What a check is: its return value (if not None) becomes the pass message.
ProbeCheck = Callable[[ProbeContext], object]


@runtime_checkable
class ProbeSuite(Protocol):
    """The ``suite`` a probe's ``register`` adds its checks to."""

    # Returns object, not the check: Suite's decorator hands back a function typed for
    # Context, which is no ProbeContext. Probes call it as suite.check(...)(fn), result unused.
    # emulated=True: in the emulated tier (one small operation per framework); unmarked, a
    # check is in it only if it is T0.
    def check(
        self, check_id: str, *, tier: str = ..., needs_gpu: bool = ...,
        emulated: bool | None = ...,
    ) -> Callable[[ProbeCheck], object]: ...
