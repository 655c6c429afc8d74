"""One rank of a job `multinode.mpirun` launches: ``python -m <runner>.multinode_worker FILE``.

Loads FILE (a probe's worker, or ``--self`` for the launch check alone), calls its
``main(rank, size, coordinator)`` with the rank Open MPI gave this process, and prints the
result as one marked JSON line. A worker never imports the runner: everything it needs comes
as arguments.
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import sys
from pathlib import Path
from typing import Any

MARK = "@@ngc-rank"


def launch_only(rank: int, size: int, coordinator: str) -> dict[str, Any]:
    """What `multinode.mpirun` checks: each process got its own rank of the same world."""
    return {"rank": rank, "size": size, "host": platform.node(), "pid": os.getpid()}


def main(argv: list[str]) -> int:
    rank = int(os.environ["OMPI_COMM_WORLD_RANK"])
    size = int(os.environ["OMPI_COMM_WORLD_SIZE"])
    coordinator = os.environ["NGC_COORDINATOR"]
    worker = Path(argv[0])
    if worker.name == "multinode_worker.py":
        result: Any = launch_only(rank, size, coordinator)
    else:
        result = _load(worker).main(rank, size, coordinator)
    sys.stdout.flush()
    # One write(2) of less than PIPE_BUF bytes: the ranks share a pipe where a launcher does
    # not forward their output line by line, and a write that small is never interleaved.
    os.write(sys.stdout.fileno(), f"{MARK} {rank} {json.dumps(result)}\n".encode())
    return 0


def _load(path: Path) -> Any:
    sys.path.insert(0, str(path.parent))  # a probe's worker imports its siblings by name
    spec = importlib.util.spec_from_file_location(path.stem, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
