"""Launch a two-process job with Open MPI's mpirun and collect each rank's result.

Each rank runs ``python -m <runner>.multinode_worker FILE``, which calls FILE's
``main(rank, size, coordinator)`` and prints the result as one marked JSON line
(runner/multinode_worker.py). Judging the outcome is the caller's (``Context.mpirun``).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TIMEOUT_S = 600  # two framework imports, emulated on another platform's image
RESULT_MARK = "@@ngc-rank "
WORKER = "multinode_worker"


@dataclass
class Launch:
    command: list[str]
    returncode: int | None = None  # None: killed after TIMEOUT_S
    output: str = ""
    results: dict[int, Any] = field(default_factory=dict)

    def last_error(self) -> str:
        lines = [line for line in self.output.splitlines() if line.strip() and "----" not in line]
        errors = [line for line in lines if "rror" in line]
        return (errors or lines or ["no output"])[-1].strip()


def launch(worker: Path, processes: int) -> Launch:
    run = Launch(mpirun_command(worker, processes, free_port()))
    try:
        proc = subprocess.run(run.command, capture_output=True, text=True, timeout=TIMEOUT_S,
                              check=False, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return run
    run.returncode, run.output = proc.returncode, proc.stdout + proc.stderr
    run.results = rank_results(proc.stdout)
    return run


def mpirun_command(worker: Path, processes: int, port: int) -> list[str]:
    # Open MPI refuses root unless told: containers run as root by default. --oversubscribe:
    # a container limited to one CPU still starts both ranks; --bind-to none: no pinning to
    # cores the container may not own.
    root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
    return ["mpirun", *root, "--oversubscribe", "--bind-to", "none", "-np", str(processes),
            "-x", f"NGC_COORDINATOR=127.0.0.1:{port}", sys.executable, "-m",
            f"{__package__}.{WORKER}", str(worker)]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def rank_results(output: str) -> dict[int, Any]:
    results: dict[int, Any] = {}
    for line in output.splitlines():
        if line.startswith(RESULT_MARK):
            rank, _, value = line[len(RESULT_MARK):].partition(" ")
            results[int(rank)] = json.loads(value)
    return results
