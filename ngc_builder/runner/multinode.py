"""The multi-node userspace every CUDA stack carries (rdma-core, UCX, Open MPI) and the
two-process jobs that prove it launches.

NCCL dlopens libibverbs at run time and falls back to TCP sockets, silently, when it cannot:
so the libraries must load, and the RDMA providers (mlx5 for InfiniBand and RoCE, efa, ...)
must be there, or a fabric's devices are never listed. No RDMA device is a fact of the host,
said as such; the job launched by ``mpirun`` runs wherever the image runs.
"""

from __future__ import annotations

import ctypes
import glob
import shutil
import subprocess
from pathlib import Path
from typing import Any

from .suite import Check, Context, Suite

LIBRARIES = {"libibverbs.so.1": "rdma-core's libibverbs", "librdmacm.so.1": "librdmacm",
             "libucp.so.0": "UCX", "libmpi.so.40": "Open MPI"}
# Where Debian's ibverbs-providers puts the drivers libibverbs loads for each RDMA device.
PROVIDERS = "/usr/lib/*-linux-gnu/libibverbs/libmlx5-rdmav*.so"
WORKER = "multinode_worker"


def register(suite: Suite, expect: dict[str, Any]) -> None:
    if "stack" not in expect:
        return
    suite.add(Check("multinode.userspace", "T0", False, check_userspace))
    suite.add(Check("multinode.mpirun", "T2", False, check_mpirun,
                    requires=("multinode.userspace",)))


def check_userspace(ctx: Context) -> str:
    missing = [f"{what} ({name})" for name, what in LIBRARIES.items() if not _loads(name)]
    if not glob.glob(PROVIDERS):
        missing.append(f"the mlx5 RDMA provider ({PROVIDERS})")
    if shutil.which("ibv_devices") is None:
        missing.append("ibv_devices (ibverbs-utils)")
    if missing:
        ctx.absent("missing: " + ", ".join(missing))
    devices = rdma_devices()
    ctx.evidence("rdma_devices", devices)
    listed = ", ".join(devices) if devices else "no RDMA device on this host"
    return f"libibverbs, librdmacm, UCX and Open MPI load; ibv_devices: {listed}"


def _loads(name: str) -> bool:
    try:
        ctypes.CDLL(name)
    except OSError:
        return False
    return True


def rdma_devices() -> list[str]:
    """The devices `ibv_devices` lists. With no RDMA device (no /sys/class/infiniband_verbs,
    as in a container on a host without one) it exits 1 saying the list is unavailable."""
    proc = subprocess.run(["ibv_devices"], capture_output=True, text=True, timeout=60,
                          check=False)
    if proc.returncode != 0:
        return []
    rows = [line.split() for line in proc.stdout.splitlines()[2:]]
    return [row[0] for row in rows if row]


def check_mpirun(ctx: Context) -> str:
    ranks = ctx.mpirun(str(Path(__file__).with_name(f"{WORKER}.py")))
    if sorted(result["rank"] for result in ranks) != [0, 1]:
        ctx.fail(f"mpirun started ranks {ranks}, expected 0 and 1")
    if len({result["pid"] for result in ranks}) != 2 or {r["size"] for r in ranks} != {2}:
        ctx.fail(f"the ranks are not two processes of one world of 2: {ranks}")
    return "mpirun started 2 processes of one world, ranks 0 and 1"
