"""The module imports and works on the machine the container runs on.

`purepy.works` is the one small operation of the emulated tier (runner/scope.py); `purepy.sums`
stands for the numerics, which wait for a native node of the platform."""

from __future__ import annotations

import importlib
import platform
from typing import Any

IMPORT_NAME = "six"


def register(suite: Any) -> None:
    suite.check("purepy.works", tier="T2", emulated=True)(works)
    suite.check("purepy.sums", tier="T1")(sums)


def works(ctx: Any) -> str:
    six = importlib.import_module("six")  # the image's, not the builder's (it has no stubs)
    if six.ensure_str(b"ok") != "ok":
        ctx.fail("six.ensure_str does not decode")
    return f"six {six.__version__} works on {platform.machine()}"


def sums(ctx: Any) -> str:
    total = sum(float(n) for n in range(1, 101))
    if total != 5050.0:
        ctx.fail(f"1 + ... + 100 gave {total}")
    return "1 + ... + 100 = 5050"
