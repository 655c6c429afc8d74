"""Lua Torch probe: there is no Python module, so the `th` interpreter is what is checked."""

from __future__ import annotations

import shutil
import subprocess
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # Types only: probes never import the runner (see probe_api.py).
    from probe_api import ProbeContext, ProbeSuite

IMPORT_NAME = None
TIMEOUT_S = 60


def installed_version() -> str:
    """The torch7 package version, from dpkg (Debian route) or luarocks (LuaRocks route)."""
    for command in (["dpkg-query", "-W", "-f", "${Version}", "lua-torch-torch7"],
                    ["luarocks", "show", "--mversion", "torch"]):
        if shutil.which(command[0]) is None:
            continue
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode == 0 and done.stdout.strip():
            return done.stdout.strip().split("-")[0].split("+")[0]
    return ""


def register(suite: ProbeSuite) -> None:
    suite.check("lua-torch.tensor_op", tier="T2", emulated=True)(tensor_op)


def tensor_op(ctx: ProbeContext) -> str:
    """`th -e` fills a 2x3 tensor with ones and sums it: 6."""
    if shutil.which("th") is None:
        ctx.fail("no `th` interpreter on PATH")
    script = "local t = torch.Tensor(2, 3):fill(1); print(t:sum())"
    done = subprocess.run(["th", "-e", script], capture_output=True, text=True, check=False,
                          timeout=TIMEOUT_S)
    ctx.evidence("command", ["th", "-e", script])
    if done.returncode != 0:
        ctx.fail(f"th exited {done.returncode}: {done.stderr.strip()[-300:]}")
    if float(done.stdout.strip().splitlines()[-1]) != 6.0:
        ctx.fail(f"sum of a 2x3 tensor of ones printed {done.stdout.strip()!r}, expected 6")
    return "th -e: torch.Tensor(2,3):fill(1):sum() == 6"
