"""A pure-Python torch for the PyTorch probe's TF32 and autotune code: no torch needed.

Every tensor holds the same four numbers; an op returns them off by the relative rounding of
its precision, so ``ctx.compare`` sees the errors a real GPU gives (measured on an H100). The
TF32 switches and cuDNN's plan cache behave as in PyTorch, as far as the probe can tell.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import ModuleType, SimpleNamespace
from typing import Any

VALUES = (1.0, -2.0, 0.5, 3.0)
# Relative error of one op against float64, per precision, as an H100 gives it.
ROUNDING = {"float64": 0.0, "float32": 2.5e-7, "tf32": 2.8e-4, "float16": 4.5e-4,
            "bfloat16": 3.4e-3}
SEARCH_KERNELS = 12  # kernels a fake cuDNN search launches before the chosen plan runs
MIXED = "mix of the legacy and new APIs to set the TF32 status"


@dataclass(frozen=True)
class Device:
    type: str

    def __str__(self) -> str:
        return self.type


class FakeTensor:
    def __init__(self, torch: FakeTorch, shape: tuple[int, ...], dtype: str = "float32",
                 device: str = "cpu", rounding: float = 0.0) -> None:
        self.torch, self.shape, self.dtype = torch, shape, dtype
        self.device = Device(device.split(":")[0])
        self.rounding = rounding

    def tolist(self) -> list[float]:
        return [value * (1 + self.rounding) for value in VALUES]

    def to(self, device: str, dtype: str | None = None) -> FakeTensor:
        return FakeTensor(self.torch, self.shape, dtype or self.dtype, device, self.rounding)

    def __iter__(self) -> Iterator[FakeTensor]:
        return iter([FakeTensor(self.torch, self.shape[1:], self.dtype, self.device.type)
                     for _ in range(self.shape[0])])

    def __matmul__(self, other: FakeTensor) -> FakeTensor:
        return self.torch.compute(self, "matmul")

    def __add__(self, other: object) -> FakeTensor:
        self.torch.launch("elementwise_add")
        return self


class NewSwitch:
    """``torch.backends.cuda.matmul`` or ``.cudnn.conv`` of PyTorch 2.9+."""

    def __init__(self, precision: str) -> None:
        self.fp32_precision = precision

    @property
    def allow_tf32(self) -> bool:
        raise RuntimeError(f"PyTorch is checking allow_tf32: you have used {MIXED}")

    @allow_tf32.setter
    def allow_tf32(self, value: bool) -> None:
        raise RuntimeError(f"setting allow_tf32 after fp32_precision: {MIXED}")


class LegacySwitch:
    """``torch.backends.cuda.matmul`` of a PyTorch without ``fp32_precision``."""

    def __init__(self, allow: bool) -> None:
        self.allow_tf32 = allow


class NewCudnn(NewSwitch):
    def __init__(self) -> None:
        super().__init__("none")
        self.conv = NewSwitch("tf32")  # PyTorch's defaults: conv may use TF32, matmul not
        self.benchmark, self.benchmark_limit, self.enabled = False, 10, True

    def is_available(self) -> bool:
        return True

    def version(self) -> int:
        return 91900


class LegacyCudnn(LegacySwitch):
    def __init__(self) -> None:
        super().__init__(True)
        self.benchmark, self.benchmark_limit, self.enabled = False, 10, True

    def is_available(self) -> bool:
        return True

    def version(self) -> int:
        return 8907


@dataclass
class Profile:
    torch: FakeTorch
    start: int = 0
    seen: list[str] = field(default_factory=list)

    def __enter__(self) -> Profile:
        self.start = len(self.torch.launched)
        return self

    def __exit__(self, *exc: object) -> None:
        self.seen = self.torch.launched[self.start:] if self.torch.cupti else []

    def events(self) -> list[SimpleNamespace]:
        # A memset and the CPU side of the launches come with the kernels, as in kineto.
        noise = [SimpleNamespace(name="Memset (Device)", device_type="cuda"),
                 SimpleNamespace(name="aten::conv2d", device_type="cpu")]
        return noise + [SimpleNamespace(name=name, device_type="cuda") for name in self.seen]


class FakeTorch(ModuleType):
    """``honours_tf32=False``: the flags are set but every fp32 op stays fp32 (TF32 off).
    ``autotunes=False``: benchmark mode never searches (a plan from the cache or heuristics).
    ``cupti=False``: the profiler records no GPU activity."""

    float64, float32, float16, bfloat16 = "float64", "float32", "float16", "bfloat16"

    def __init__(self, *, new_api: bool = True, honours_tf32: bool = True,
                 capability: tuple[int, int] = (9, 0), autotunes: bool = True,
                 cupti: bool = True) -> None:
        super().__init__("torch")
        self.__version__ = "2.11.0+fake"
        self.honours_tf32, self.capability = honours_tf32, capability
        self.autotunes, self.cupti = autotunes, cupti
        self.version = SimpleNamespace(cuda="13.0")
        cudnn: NewCudnn | LegacyCudnn = NewCudnn() if new_api else LegacyCudnn()
        matmul = NewSwitch("none") if new_api else LegacySwitch(False)
        self.backends = SimpleNamespace(cuda=SimpleNamespace(matmul=matmul), cudnn=cudnn)
        self.cuda = SimpleNamespace(
            is_available=lambda: True, get_device_name=lambda index=0: "Fake H100",
            get_device_capability=lambda device=None: self.capability,
            synchronize=lambda: None)
        self.nn = SimpleNamespace(functional=SimpleNamespace(conv2d=self.conv2d))
        self.profiler = SimpleNamespace(
            ProfilerActivity=SimpleNamespace(CPU="cpu", CUDA="cuda"),
            supported_activities=lambda: {"cpu", "cuda"},
            profile=lambda activities: Profile(self))
        self.autograd = SimpleNamespace(DeviceType=SimpleNamespace(CPU="cpu", CUDA="cuda"))
        self.launched: list[str] = []
        self.plans: dict[tuple[Any, ...], str] = {}

    def device(self, name: str) -> Device:
        return Device(name.split(":")[0])

    def Generator(self) -> SimpleNamespace:  # torch names it so
        generator = SimpleNamespace()
        generator.manual_seed = lambda seed: generator
        return generator

    def randn(self, *shape: Any, generator: object = None, dtype: str | None = None,
              device: str = "cpu") -> FakeTensor:
        dims = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], tuple) else shape
        return FakeTensor(self, dims, dtype or self.float32, device)

    def equal(self, a: FakeTensor, b: FakeTensor) -> bool:
        return a.tolist() == b.tolist()

    def launch(self, kernel: str) -> None:
        self.launched.append(kernel)

    def tf32_allowed(self, op: str) -> bool:
        cudnn = self.backends.cudnn
        switch = self.backends.cuda.matmul if op == "matmul" else getattr(cudnn, "conv", cudnn)
        if isinstance(switch, NewSwitch):
            return switch.fp32_precision == "tf32"
        return bool(switch.allow_tf32)

    def compute(self, tensor: FakeTensor, op: str) -> FakeTensor:
        on_gpu = tensor.device.type == "cuda"
        tf32 = (on_gpu and tensor.dtype == "float32" and self.tf32_allowed(op)
                and self.honours_tf32 and self.capability >= (8, 0))
        rounding = ROUNDING["tf32" if tf32 else tensor.dtype]
        return FakeTensor(self, tensor.shape, tensor.dtype, tensor.device.type, rounding)

    def conv2d(self, x: FakeTensor, w: FakeTensor, padding: int = 0,
               dilation: int = 1) -> FakeTensor:
        if x.device.type == "cuda":
            self.run_cudnn((x.shape, w.shape, x.dtype, padding, dilation))
        return self.compute(x, "conv")

    def run_cudnn(self, key: tuple[Any, ...]) -> None:
        """PyTorch's plan cache: keyed by the conv, not by the benchmark flag."""
        if key not in self.plans:
            if self.backends.cudnn.benchmark and self.autotunes:
                for index in range(SEARCH_KERNELS):
                    self.launch(f"candidate_{index % 4}")
            self.plans[key] = "chosen_plan"
        self.launch(self.plans[key])


def fake_conv_fwd_bwd(torch: FakeTorch) -> Callable[..., tuple[FakeTensor, ...]]:
    """Stands in for ``conv_fwd_bwd``: output and grads, fp32-close on the GPU."""

    def run(_torch: object, device: str, *args: object, dtype: str | None = None,
            **kwargs: object) -> tuple[FakeTensor, ...]:
        name = dtype or torch.float32
        rounding = ROUNDING[name] if device == "cuda" else 0.0
        return tuple(FakeTensor(torch, (4,), name, device, rounding) for _ in range(3))

    return run
