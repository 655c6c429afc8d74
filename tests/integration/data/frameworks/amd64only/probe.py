"""Fails on aarch64 on purpose, as a framework with an arm64 numerical bug would: the check
itself is real (it reads the machine the container runs on)."""

from __future__ import annotations

import platform
from typing import Any

IMPORT_NAME = "six"


def register(suite: Any) -> None:
    suite.check("amd64only.machine", tier="T2")(machine)


def machine(ctx: Any) -> str:
    found = platform.machine()
    if found == "aarch64":
        ctx.fail(f"runs on {found}: this framework is broken there on purpose")
    return f"runs on {found}"
