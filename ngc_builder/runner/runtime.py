"""T0 checks of how the image behaves for the people who start it, not of what it holds.

Validation starts the runner the way researchers' clusters do: an arbitrary UID with no
password entry, on a read-only root filesystem with a tmpfs /tmp (``NGC_RUN_AS`` says how,
so these checks know what to expect). Every other check then ran under those conditions too;
these record them and fail where the image leaves a user nowhere to write.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

from .home import writable
from .suite import Check, Context, Suite

WORKSPACE = "/workspace"


def register(suite: Suite, expect: dict[str, Any]) -> None:
    suite.add(Check("image.user", "T0", False, check_user))
    suite.add(Check("image.workdir", "T0", False, check_workdir))
    if expect.get("stack") and expect.get("cuda"):
        suite.add(Check("cuda.require", "T0", False, check_require_cuda))


def run_as() -> tuple[str, bool] | None:
    """`NGC_RUN_AS=54321:54321,read-only` -> ("54321:54321", True); None when not asked."""
    value = os.environ.get("NGC_RUN_AS", "")
    if not value:
        return None
    user, _, rest = value.partition(",")
    return user, rest == "read-only"


def check_user(ctx: Context) -> str:
    """Started as the asked UID on a read-only root, the user still has a HOME and /tmp."""
    if ctx.host_mode:
        ctx.skip("host mode: the user and root filesystem are the host's")
    asked = run_as()
    if asked is None:
        ctx.skip("not started unprivileged (validate sets NGC_RUN_AS)")
    user, read_only = asked
    found = f"{os.getuid()}:{os.getgid()}"
    home = os.environ.get("HOME", "")
    for key, value in (("uid_gid", found), ("home", home), ("root_read_only", root_read_only()),
                       ("tmp", tempfile.gettempdir())):
        ctx.evidence(key, value)
    if found != user:
        ctx.fail(f"runs as {found}, validation asked for {user}", "host")
    if read_only and not root_read_only():
        ctx.fail("the root filesystem is writable: validation asked for a read-only one", "host")
    if not writable(home):
        ctx.fail(f"HOME={home!r} is not writable for UID {os.getuid()}: caches have no place")
    return f"UID:GID {found}{', read-only root' if read_only else ''}, HOME {home} writable"


def check_workdir(ctx: Context) -> str:
    """Started by validate with the image's own working directory, it is /workspace."""
    if ctx.host_mode:
        ctx.skip("host mode: the working directory is the host's")
    if run_as() is None:
        ctx.skip("not started by validate (NGC_RUN_AS unset): the working directory is "
                 "the caller's")
    here = os.getcwd()
    ctx.evidence("cwd", here)
    if here != WORKSPACE:
        ctx.fail(f"the working directory is {here}, not {WORKSPACE}")
    return f"starts in {WORKSPACE}"


def check_require_cuda(ctx: Context) -> str:
    """NVIDIA_REQUIRE_CUDA names this CUDA, so the NVIDIA runtime can refuse an old driver."""
    value = os.environ.get("NVIDIA_REQUIRE_CUDA", "")
    ctx.evidence("NVIDIA_REQUIRE_CUDA", value)
    wanted = f"cuda>={ctx.expect['cuda']}"
    if wanted not in value.split():
        ctx.fail(f"NVIDIA_REQUIRE_CUDA is {value!r}: it must include {wanted!r}")
    driver = ctx.expect.get("min_driver")
    if driver and f"driver>={driver}" not in value.split():
        ctx.fail(f"NVIDIA_REQUIRE_CUDA is {value!r}: it must accept driver>={driver}")
    return f"NVIDIA_REQUIRE_CUDA={value}"


def root_read_only(mountinfo: str = "/proc/self/mountinfo") -> bool:
    """Whether / is mounted read-only (field 6 of its mountinfo line holds the options)."""
    try:
        with open(mountinfo, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return False
    for line in lines:
        fields = line.split()
        if len(fields) > 5 and fields[4] == "/":
            return "ro" in fields[5].split(",")
    return False
