"""Multi-process PyTorch: a gloo all-reduce across two processes launched by mpirun (CPU), and
on a GPU which network transport NCCL found (InfiniBand/RoCE, or sockets).

``main`` runs in each rank (the runner's multinode worker loads this file in both processes);
the checks run in the runner's process. Only stdlib and torch.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # Types only: probes never import the runner (see probe_api.py).
    from probe_api import ProbeContext, ProbeSuite

RENDEZVOUS_TIMEOUT = timedelta(seconds=300)
NCCL_TIMEOUT_S = 300
_NET_LINE = re.compile(r"NET/(IB|Socket|Plugin|OFI)\b.*|Using network \S+")
# NCCL's own decision ("Using network IB" or "Using network Socket"), logged at INIT.
_CHOSEN = re.compile(r"^Using network (\S+)")
# An IB device as NET/IB lists it: "[0]mlx5_0:1/IB" or ".../RoCE". A "Using" line with no such
# entry ("NET/IB : Using [RO]; OOB eth0", seen on an H200 with no HCA) found no device at all.
_IB_DEVICE = re.compile(r"\[\d+\]\S+:\d+/(IB|RoCE)")


def register(suite: ProbeSuite) -> None:
    suite.check("pytorch.dist.gloo_allreduce", tier="T2")(gloo_allreduce)
    suite.check("pytorch.gpu.nccl_transport", tier="T2", needs_gpu=True)(nccl_transport)


def main(rank: int, size: int, coordinator: str) -> dict[str, Any]:
    """One rank: join the gloo group through a TCP store at `coordinator`, all-reduce and
    all-gather, and say what came back."""
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"tcp://{coordinator}", rank=rank,
                            world_size=size, timeout=RENDEZVOUS_TIMEOUT)
    try:
        total = torch.tensor([float(rank + 1)])
        dist.all_reduce(total)
        gathered = [torch.zeros(1) for _ in range(size)]
        dist.all_gather(gathered, torch.tensor([float(rank)]))
        return {"sum": total.item(), "gathered": [part.item() for part in gathered],
                "backend": dist.get_backend()}
    finally:
        dist.destroy_process_group()


def gloo_allreduce(ctx: ProbeContext) -> str:
    if not ctx.expect.get("stack") and not ctx.host_mode:
        ctx.skip("no CUDA stack: Open MPI comes with the stack layer")
    results = ctx.mpirun(__file__, 2)
    ctx.evidence("ranks", results)
    want_sum, want_gathered = 3.0, [0.0, 1.0]  # ranks 0 and 1 give 1 and 2, and 0 and 1
    wrong = [result for result in results
             if result["sum"] != want_sum or result["gathered"] != want_gathered]
    if wrong:
        ctx.fail(f"gloo all-reduce over 2 processes gave {wrong}, expected sum {want_sum} "
                 f"and all-gather {want_gathered} on every rank")
    return "2 processes under mpirun: gloo all_reduce 1+2 = 3 and all_gather [0, 1] on each"


NCCL_SCRIPT = """
import os, torch, torch.distributed as dist
dist.init_process_group("nccl", init_method="tcp://127.0.0.1:" + os.environ["NGC_PORT"],
                        rank=0, world_size=1)
value = torch.ones(1, device="cuda")
dist.all_reduce(value)
torch.cuda.synchronize()
dist.destroy_process_group()
"""


def nccl_transport(ctx: ProbeContext) -> str:
    """NCCL picks its network at init and logs it (NCCL_DEBUG=INFO): IB when libibverbs and a
    provider find a device, else sockets. Where the host has RDMA devices, sockets is a fault."""
    env = {**os.environ, "NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,NET",
           "NGC_PORT": str(_free_port())}
    proc = subprocess.run([sys.executable, "-c", NCCL_SCRIPT], capture_output=True, text=True,
                          timeout=NCCL_TIMEOUT_S, env=env, check=False)
    found = [match.group(0) for match in _NET_LINE.finditer(proc.stdout + proc.stderr)]
    ctx.evidence("nccl_net_lines", found[:20])
    if proc.returncode != 0:
        ctx.fail(f"NCCL init exited {proc.returncode}: {(proc.stderr or proc.stdout)[-300:]}")
    return transport_verdict(ctx, found, rdma_listed(), bool(found))


def transport_verdict(ctx: ProbeContext, net_lines: list[str], rdma: list[str],
                      logged: bool) -> str:
    chosen = [match.group(1) for line in net_lines if (match := _CHOSEN.match(line))]
    using_ib = [line for line in net_lines
                if line.startswith("NET/IB") and "Using" in line and _IB_DEVICE.search(line)]
    if using_ib and chosen[-1:] in ([], ["IB"]):
        return f"NCCL found its IB transport: {using_ib[0]}"
    if not logged:
        ctx.fail("NCCL logged no NET/ line at NCCL_DEBUG=INFO: its transport is unknown")
    if rdma:
        ctx.fail(f"this host has RDMA devices ({', '.join(rdma)}) but NCCL did not use IB: "
                 f"{'; '.join(net_lines[:3])}", "image")
    ctx.skip(f"no InfiniBand/RoCE device on this host (NCCL: {'; '.join(net_lines[:2])})")


def rdma_listed() -> list[str]:
    try:
        proc = subprocess.run(["ibv_devices"], capture_output=True, text=True, timeout=60,
                              check=False)
    except OSError:
        return []
    rows = [line.split() for line in proc.stdout.splitlines()[2:]] if proc.returncode == 0 else []
    return [row[0] for row in rows if row]


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
