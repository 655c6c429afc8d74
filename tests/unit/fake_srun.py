"""A node's srun steps played in a job's folder: what each two-task launch of the runner's own
worker leaves there (validate/srun.py reads it), for fake clusters that run no job."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ngc_builder.runner.mpilaunch import RESULT_MARK

STEP_OUTPUT_RE = re.compile(r"> srun-(\S+)\.out ")
# What each worker's rank returns when the job works (frameworks/*/probe_*_dist.py).
RANK_RESULTS: dict[str, Callable[[int], dict[str, Any]]] = {
    "multinode_worker": lambda rank: {"rank": rank, "size": 2, "host": "node1",
                                      "pid": 100 + rank},
    "probe_pytorch_dist": lambda rank: {"sum": 3.0, "gathered": [0.0, 1.0], "backend": "gloo"},
    "probe_jax_dist": lambda rank: {"process_index": rank, "process_count": 2,
                                    "global_devices": 2, "gathered": [1, 2], "via": "gloo"},
}


def play_srun_steps(folder: Path, script: str, status: int = 0) -> list[str]:
    """Two ranks of one world for every srun step `script` has; the steps' tags."""
    tags = STEP_OUTPUT_RE.findall(script)
    for tag in tags:
        result = RANK_RESULTS[tag]
        lines = "".join(f"{RESULT_MARK}{rank} {json.dumps(result(rank))}\n" for rank in range(2))
        (folder / f"srun-{tag}.out").write_text(lines)
        (folder / f"srun-{tag}.err").write_text("")
        (folder / f"srun-{tag}.status").write_text(f"{status}\n")
    return tags
