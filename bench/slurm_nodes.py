"""`release --on slurm` of the CI release (base, a CUDA stack, JAX and the broken framework)
on the real two-node test cluster (tests/cluster/two_nodes.py), side by side with the same
release on that cluster with one node: each side on a fresh cluster (empty node engines) and a
fresh registry, the package cache warm. Both nodes share this machine's cores, so the point is
that two nodes are no slower and push every blob once; the speed-up of separate machines is
the per-job times it prints, summed by node.

    sudo .venv/bin/python bench/slurm_nodes.py        # about 15 minutes here
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.cluster.two_nodes import HUB, TwoNodes, two_nodes
from tests.integration.conftest import make_ci_root
from tests.integration.test_slurm_release import SITE, _blob_uploads
from tests.own_registry import OwnRegistry, free_port

REPO = Path(__file__).resolve().parents[1]


def one_side(nodes_up: int, work: Path) -> dict[str, Any]:
    port = free_port()
    with two_nodes(port) as nodes:
        for node in ("node1", "node2")[nodes_up:]:
            nodes.scontrol("update", f"NodeName={node}", "State=DRAIN", "Reason=bench")
        registry = OwnRegistry(work / "registry", work / "registry" / "data", port=port,
                               address=HUB)
        (work / "registry").mkdir(parents=True)
        registry.start()
        try:
            return _release(nodes, registry, work)
        finally:
            registry.stop()


def _release(nodes: TwoNodes, registry: OwnRegistry, work: Path) -> dict[str, Any]:
    manifest = make_ci_root(work / "project")
    (work / "project" / "site.yaml").write_text(SITE)
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "ngc_builder", "release", str(manifest), "--on", "slurm",
         "--registry", f"{registry.host}/bench", "--build-dir", str(work / "build"),
         "--os-source", "bootstrap", "--json", "--quiet"], cwd=REPO, capture_output=True,
        text=True, env={**nodes.env, "NGC_REGISTRY_INSECURE": "1"}, check=False)
    seconds = time.monotonic() - started
    images = json.loads(done.stdout)["images"]
    jobs = {name: _job(nodes, image["build"]["slurm_job"]) for name, image in images.items()
            if image["build"].get("slurm_job")}
    uploads = _blob_uploads(registry)
    return {"seconds": seconds, "exit": done.returncode, "jobs": jobs,
            "blobs": len(uploads), "most_uploads": max(uploads.values(), default=0)}


def _job(nodes: TwoNodes, job_id: str) -> dict[str, str]:
    fields = dict(word.split("=", 1) for word in nodes.scontrol("show", "job", "-o", job_id)
                  .split() if "=" in word)
    return {"node": fields["NodeList"], "state": fields["JobState"],
            "run_time": fields["RunTime"]}


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="slurm-bench-") as folder:
        sides = {count: one_side(count, Path(folder) / f"{count}-node") for count in (2, 1)}
    for count, side in sides.items():
        print(f"{count} node(s): {side['seconds']:.1f} s, exit {side['exit']}, "
              f"{side['blobs']} blobs uploaded, at most {side['most_uploads']} time(s) each")
        for name, job in side["jobs"].items():
            print(f"  {name:10} {job['node']:6} {job['state']:10} {job['run_time']}")
    print(f"two nodes / one node: {sides[2]['seconds'] / sides[1]['seconds']:.2f}")


if __name__ == "__main__":
    main()
