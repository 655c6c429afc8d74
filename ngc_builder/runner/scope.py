"""What a run checks: everything (`full`), or the emulated tier (`emulated`).

An image of another platform validated under QEMU on the build host can tell one thing: its
machine code loads, links and runs. Its numerics, servers and benchmarks there say nothing of
the real machine (a Grace node) and take 10-30x longer, so the emulated tier keeps the static
checks (T0: versions, wheel tags, `pip check`, every library's linkage, the framework's import)
and the checks a probe marks `emulated=True` (one small operation per framework, the devel
image's one compile); every other check is skipped with the reason, for a native node to run.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Mapping

SCOPES = ("full", "emulated")
ENV_VAR = "NGC_SCOPE"


def resolve_scope(cli_value: str | None, environ: Mapping[str, str] | None = None) -> str:
    """``--scope`` wins, then ``NGC_SCOPE``, then ``full``; ValueError on an unknown one."""
    env = os.environ if environ is None else environ
    scope = cli_value or env.get(ENV_VAR) or "full"
    if scope not in SCOPES:
        raise ValueError(f"scope must be one of {', '.join(SCOPES)}, got {scope!r}")
    return scope


def in_emulated_tier(tier: str, marked: bool | None) -> bool:
    """A check's own mark wins; unmarked, the static tier (T0) is in and the rest is out."""
    return marked if marked is not None else tier == "T0"


def out_of_scope_reason() -> str:
    return (f"not in the emulated tier: the full tier needs a native {platform.machine()} "
            "node")
