"""The module imports and works on the machine the container runs on."""

from __future__ import annotations

import importlib
import platform
from typing import Any

IMPORT_NAME = "six"


def register(suite: Any) -> None:
    suite.check("purepy.works", tier="T2")(works)


def works(ctx: Any) -> str:
    six = importlib.import_module("six")  # the image's, not the builder's (it has no stubs)
    if six.ensure_str(b"ok") != "ok":
        ctx.fail("six.ensure_str does not decode")
    return f"six {six.__version__} works on {platform.machine()}"
