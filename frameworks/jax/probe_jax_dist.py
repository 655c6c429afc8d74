"""Multi-process JAX on the CPU: two processes launched by mpirun join one JAX world through
``jax.distributed.initialize`` and gather a value from each other (over gloo where this
host's name resolves, else through JAX's coordination service).

``main`` runs in each rank (the runner's multinode worker loads this file in both
processes); the check runs in the runner's process. Only stdlib, jax and numpy.
"""

from __future__ import annotations

import os
import socket
from typing import TYPE_CHECKING, Any

EXCHANGE_TIMEOUT_MS = 300_000

if TYPE_CHECKING:
    # Types only: probes never import the runner (see probe_api.py).
    from probe_api import ProbeContext, ProbeSuite


def register(suite: ProbeSuite) -> None:
    suite.check("jax.dist.multiprocess_cpu", tier="T2")(multiprocess_cpu)


def main(rank: int, size: int, coordinator: str) -> dict[str, Any]:
    os.environ["JAX_PLATFORMS"] = "cpu"  # the CPU job the issue asks for, GPU or not
    import jax

    gloo = hostname_resolves()
    # gloo's TCP transport binds to the address of this host's name; a container started with
    # no network (validation's own) has no such address, so there the values go through
    # JAX's coordination service instead, which is as much a JAX multi-process world.
    jax.config.update("jax_cpu_collectives_implementation", "gloo" if gloo else None)
    # Our rank and size come as arguments: JAX's own Open MPI detection wants mpi4py on
    # Open MPI 5, which the image does not need for anything else.
    jax.distributed.initialize(coordinator_address=coordinator, num_processes=size,
                               process_id=rank, cluster_detection_method="deactivate")
    try:
        gathered = _allgather(rank) if gloo else _exchange(rank, size)
        return {"process_index": jax.process_index(), "process_count": jax.process_count(),
                "global_devices": len(jax.devices()), "gathered": gathered,
                "via": "gloo process_allgather" if gloo else "the coordination service"}
    finally:
        jax.distributed.shutdown()


def hostname_resolves() -> bool:
    try:
        return bool(socket.getaddrinfo(socket.gethostname(), None))
    except OSError:
        return False


def _allgather(rank: int) -> list[int]:
    import numpy as np
    from jax.experimental import multihost_utils

    gathered = multihost_utils.process_allgather(np.array([rank + 1]))
    return [int(value) for value in np.asarray(gathered).ravel()]


def _exchange(rank: int, size: int) -> list[int]:
    """Each process publishes rank + 1 in the coordinator's key-value store and reads all."""
    from jax._src import distributed

    client = distributed.global_state.client
    client.key_value_set(f"ngc-probe/{rank}", str(rank + 1))
    return [int(client.blocking_key_value_get(f"ngc-probe/{other}", EXCHANGE_TIMEOUT_MS))
            for other in range(size)]


def multiprocess_cpu(ctx: ProbeContext) -> str:
    if not ctx.expect.get("stack") and not ctx.host_mode:
        ctx.skip("no CUDA stack: Open MPI comes with the stack layer")
    results = ctx.mpirun(__file__, 2)
    ctx.evidence("ranks", results)
    wrong = [result for index, result in enumerate(results)
             if result["process_index"] != index or result["process_count"] != 2
             or result["global_devices"] < 2 or result["gathered"] != [1, 2]]
    if wrong:
        ctx.fail(f"JAX over 2 processes gave {wrong}: expected process_count 2, both CPU "
                 "devices, and [1, 2] gathered on each")
    return (f"2 processes under mpirun: one JAX world of 2, values [1, 2] gathered on each "
            f"through {results[0]['via']}")
