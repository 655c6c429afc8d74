"""Numbers the framework probes share: how far a result is from its reference, and sample data.

Stdlib only, like the rest of the runner: arrays arrive as whatever the framework returns and
are read through ``.tolist()``, the one conversion numpy, torch and jax arrays all have (torch's
also leaves the autograd graph and the GPU), so no framework or numpy is imported here.
"""

from __future__ import annotations

import math
import operator
import random
from typing import Any

# Floor for max |reference|: an all-zero reference must give a large error, not divide by zero.
TINY = 1e-30
REGRESSION_NOISE = 0.01  # keeps the regression target learnable but not exactly linear

Shape = tuple[int, ...]
Rows = list[list[float]]


def flatten(array: object) -> tuple[Shape, list[float]]:
    """The shape and the elements (as floats) of an array with ``.tolist()`` (numpy, torch,
    jax; a TensorFlow tensor via ``.numpy()``), of a nested list or tuple, or of a number."""
    level: list[Any] = [array.tolist() if hasattr(array, "tolist") else array]
    shape: list[int] = []
    # One dimension per pass, not recursion: a 512 x 512 result is 262,144 elements.
    while level and isinstance(level[0], (list, tuple)):
        shape.append(len(level[0]))
        level = [item for row in level for item in row]
    if len(level) != math.prod(shape):
        raise ValueError(f"ragged array: {len(level)} elements do not fill shape {tuple(shape)}")
    return tuple(shape), [float(item) for item in level]


def max_abs(numbers: list[float]) -> float:
    """max |x|, and NaN when any x is NaN (the builtin max skips a NaN or not, by position)."""
    magnitudes = [abs(number) for number in numbers]
    if any(math.isnan(magnitude) for magnitude in magnitudes):
        return math.nan
    return max(magnitudes, default=0.0)


def rel_error(actual: object, reference: object) -> float:
    """max |actual - reference| / max |reference|, in float64 (Python floats are doubles).

    NaN or an infinity in either side gives NaN or inf, which no tolerance accepts.
    """
    actual_shape, got = flatten(actual)
    reference_shape, want = flatten(reference)
    # Checked here because flat lists would pair the elements of a transposed result.
    if actual_shape != reference_shape:
        raise ValueError(f"shapes differ: result {actual_shape}, reference {reference_shape}")
    if not want:
        raise ValueError("nothing to compare: the arrays are empty")
    # map() pairs them: zip(strict=) is Python 3.10+, and the shapes already agree.
    diff = max_abs(list(map(operator.sub, got, want)))
    return diff / max(max_abs(want), TINY)


def over_tolerance(what: str, error: float, tolerance: float) -> str | None:
    """Why ``error`` fails ``tolerance``, or None when it passes."""
    if error <= tolerance:  # written so that NaN fails too
        return None
    return f"{what}: max error {error:.3g} of max |ref| exceeds {tolerance:g}"


def within(what: str, error: float, tolerance: float) -> str:
    """The message of a check whose verdict is one comparison that passed."""
    return f"{what} max rel error {error:.2e} <= {tolerance:g}"


def regression_data(features: int = 8, samples: int = 64, seed: int = 0) -> tuple[Rows, Rows]:
    """A seeded linear regression task as nested lists: x (samples x features) ~ N(0, 1),
    y (samples x 1) = x @ w + 1 % noise with w ~ N(0, 1). Lists, so each probe makes them
    its own framework's arrays (and dtype) and the data is the same in every framework."""
    rng = random.Random(seed)
    x = [[rng.gauss(0.0, 1.0) for _ in range(features)] for _ in range(samples)]
    w = [rng.gauss(0.0, 1.0) for _ in range(features)]
    y = [[math.fsum(map(operator.mul, row, w)) + REGRESSION_NOISE * rng.gauss(0.0, 1.0)]
         for row in x]
    return x, y


# A tf32 row's tolerance alone would pass plain fp32 as tf32, so TF32 must also show in the
# error. On an H100 the 256^2 matmul gave 2.5e-07 in fp32 and 2.8e-04 (PyTorch), 3.1e-04 (JAX)
# in TF32, and 2.5e-07 again with TF32 forced off (NVIDIA_TF32_OVERRIDE=0).
TF32_MIN_ERROR = 1e-5


def precision_summary(worst: dict[str, float], tolerances: dict[str, float],
                      notes: list[str]) -> str:
    rows = [f"tf32 {error:.1e} (TF32 used: >= {TF32_MIN_ERROR:g}; <= {tolerances[name]:g})"
            if name == "tf32" else f"{name} {error:.1e} (<= {tolerances[name]:g})"
            for name, error in worst.items()]
    return "max rel error vs float64: " + ", ".join(rows + notes)
