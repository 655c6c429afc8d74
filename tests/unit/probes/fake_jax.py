"""A pure-Python jax for the JAX probe's precision matrix: no jax or numpy needed.

Arrays hold four numbers; a matmul returns them off by the relative rounding its dtype and
precision give on a real device (measured on an H100, jax 0.11.2).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType, SimpleNamespace
from typing import Any

VALUES = [1.0, -2.0, 0.5, 3.0]
ROUNDING = {"float32": 2.6e-7, "tf32": 3.1e-4, "float16": 4.3e-4, "bfloat16": 3.1e-3}


@dataclass(frozen=True)
class Device:
    platform: str = "gpu"
    compute_capability: str | None = "9.0"
    device_kind: str = "Fake H100"

    def __str__(self) -> str:
        return "cuda:0" if self.platform == "gpu" else "TFRT_CPU_0"


@dataclass(frozen=True)
class Array:
    device: Device | None = None  # None: a host (numpy) array
    dtype: str = "float64"
    rounding: float = 0.0

    def astype(self, dtype: str) -> Array:
        return Array(self.device, dtype, self.rounding)

    def devices(self) -> set[Device]:
        return set() if self.device is None else {self.device}

    def tolist(self) -> list[float]:
        return [value * (1 + self.rounding) for value in VALUES]


class FakeJax(ModuleType):
    """``presets=False``: a jax older than 0.4.35 (no DotAlgorithmPreset).
    ``honours_tf32=False``: TF32 asked for, fp32 computed (TF32 off)."""

    def __init__(self, *, presets: bool = True, honours_tf32: bool = True) -> None:
        super().__init__("jax")
        self.honours_tf32 = honours_tf32
        self.requested: list[str] = []
        precision = SimpleNamespace(DEFAULT="DEFAULT", HIGH="HIGH", HIGHEST="HIGHEST")
        self.lax = SimpleNamespace(Precision=precision)
        if presets:
            self.lax.DotAlgorithmPreset = SimpleNamespace(TF32_TF32_F32="TF32_TF32_F32")
        self.numpy = FakeNumpy(self)

    def device_put(self, array: Array, device: Device) -> Array:
        return Array(device, array.dtype)

    def matmul(self, x: Array, y: Array, precision: Any = None) -> Array:
        self.requested.append(str(precision))
        device = x.device or Device("cpu")
        if precision == "TF32_TF32_F32" and device.platform != "gpu":
            raise RuntimeError("The precision 'TF32_TF32_F32' is not supported on CPU")
        return Array(device, x.dtype, ROUNDING[self.rounding_of(device, x.dtype, precision)])

    def rounding_of(self, device: Device, dtype: str, precision: Any) -> str:
        if dtype != "float32" or precision == "HIGHEST" or not self.honours_tf32:
            return dtype
        major = int((device.compute_capability or "0").split(".")[0])
        return "tf32" if device.platform == "gpu" and major >= 8 else dtype


class FakeNumpy(ModuleType):
    """``jax.numpy``: the matmul only."""

    def __init__(self, jax: FakeJax) -> None:
        super().__init__("jax.numpy")
        self.matmul = jax.matmul


def operands() -> tuple[Array, Array, list[float]]:
    """Stands in for ``matmul_operands``: two host arrays and the float64 product."""
    return Array(), Array(), list(VALUES)
