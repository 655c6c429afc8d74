"""`release --on slurm` on a real two-node Slurm cluster (tests/cluster/two_nodes.py): each
image a job on a node with its own empty engine, children after their parents, images handed
on through a real registry by content key; the submitting side promotes and signs at the end.

CI's case: the CI release's base and CUDA stack on nodes that hold the release's OS image, the
stack's job on the other node (the base's node is drained once its job runs, as an admin
would), every blob pushed once. On demand: the whole CI release on empty nodes with a node
lost mid-job, then the rerun."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.two_nodes import HUB, NODES, TwoNodes, two_nodes, unavailable
from tests.conftest import REPO
from tests.faults.engines import copy_image
from tests.integration.conftest import make_ci_root
from tests.own_registry import OwnRegistry, free_port

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("ci_packages")]
SITE = """slurm:
  gpus: 0                # CPU nodes: NGC_GPU=none in every job
  build_partition: build
  poll_seconds: 1
"""
# One line per finished request; an upload ends with the PUT that names the blob's digest.
BLOB_PUT = re.compile(r'http\.request\.method=PUT .*http\.request\.uri="/v2/(?P<repo>[^"]*)/'
                      r'blobs/uploads/[^"]*digest=sha256(?:%3A|:)(?P<hex>[0-9a-f]{64})')
SMALL = 1024  # bytes: our artifacts' `{}` config goes into each repository that has one


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TwoNodes, OwnRegistry]]:
    if (reason := unavailable()) is not None:
        pytest.skip(reason)
    port = free_port()
    folder = tmp_path_factory.mktemp("cluster-registry")
    with two_nodes(port) as nodes:
        registry = OwnRegistry(folder, folder / "data", port=port, address=HUB)
        registry.start()
        try:
            yield nodes, registry
        finally:
            registry.stop()


NO_ENGINE = "unix:///nonexistent/docker.sock"


def _project(root: Path) -> Path:
    manifest = make_ci_root(root)
    (root / "site.yaml").write_text(SITE)
    return manifest


def _release(nodes: TwoNodes, manifest: Path, registry: str, build_dir: Path,
             *extra: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "ngc_builder", "release", str(manifest), "--on", "slurm",
               "--registry", registry, "--build-dir", str(build_dir), "--os-source",
               "bootstrap", "--json", "--quiet", *extra]
    # The submitting side as on a login node without Docker: only the nodes build.
    return subprocess.Popen(command, cwd=REPO, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE,
                            env={**nodes.env, "NGC_REGISTRY_INSECURE": "1",
                                 "DOCKER_HOST": NO_ENGINE})


def _job(nodes: TwoNodes, job_id: str) -> dict[str, str]:
    words = nodes.scontrol("show", "job", "-o", job_id).split()
    return dict(word.split("=", 1) for word in words if "=" in word)


def _jobs_named(nodes: TwoNodes, name: str) -> list[dict[str, str]]:
    listed = subprocess.run(["squeue", "-h", "-t", "all", "-o", "%i %j"], env=nodes.env,
                            capture_output=True, text=True, check=True).stdout.split("\n")
    return [_job(nodes, line.split()[0]) for line in listed if line.endswith(f" {name}")]


def _running_on(nodes: TwoNodes, name: str, release: subprocess.Popen[str]) -> str:
    """The node that runs job `name`, as soon as it does."""
    deadline = time.monotonic() + 1200
    while time.monotonic() < deadline and release.poll() is None:
        running = [job for job in _jobs_named(nodes, name) if job["JobState"] == "RUNNING"]
        if running:
            return running[0]["NodeList"]
        time.sleep(0.5)
    raise AssertionError(f"job {name} never ran: {release.communicate()[1][-3000:]}")


def _submitted(stderr: str) -> list[str]:
    return re.findall(r"==> \[\d+/\d+\] (\S+): Slurm job \d+ \(\S+\) submitted", stderr)


def _blob_uploads(registry: OwnRegistry) -> Counter[str]:
    """How many times each blob was uploaded, whatever the repository (a layer another
    repository holds is mounted, not uploaded), leaving out the tiny ones (`{}`)."""
    blobs = registry.storage / "docker" / "registry" / "v2" / "blobs" / "sha256"
    return Counter(f"sha256:{match['hex']}" for match in BLOB_PUT.finditer(registry.log())
                   if (blobs / match["hex"][:2] / match["hex"] / "data").stat().st_size > SMALL)


@pytest.mark.timeout(1800)
def test_base_and_its_cuda_stack_build_as_jobs_on_two_nodes_and_are_promoted_once_all_passed(
        tmp_path: Path, cluster: tuple[TwoNodes, OwnRegistry], locked_trixie_os: str) -> None:
    nodes, registry = cluster
    # Nodes that made the release's OS image before, as a site's long-lived nodes have: it is
    # copied in (making it on an empty engine is the on-demand case's, and test_reproducible's).
    for node in NODES:
        copy_image(locked_trixie_os, nodes.node_engine(node))
    manifest = _project(tmp_path / "project")
    build_dir = tmp_path / "build"
    address = f"{registry.host}/slurm"
    release = _release(nodes, manifest, address, build_dir, "--only", "cuda-mini")
    base_node = _running_on(nodes, "ngc-26.11-base", release)
    # As an admin would: the stack's job, which can only start once the base's ended, runs on
    # the other node.
    nodes.scontrol("update", f"NodeName={base_node}", "State=DRAIN", "Reason=test")
    try:
        stdout, stderr = release.communicate(timeout=1500)
    finally:
        nodes.scontrol("update", f"NodeName={base_node}", "State=RESUME")
    assert release.returncode == 0, stderr[-4000:]
    images: dict[str, Any] = json.loads(stdout)["images"]
    jobs = {name: _job(nodes, images[name]["build"]["slurm_job"]) for name in ("base",
                                                                               "cuda-mini")}
    print({name: (job["JobState"], job["NodeList"]) for name, job in jobs.items()})
    assert jobs["base"]["NodeList"] == base_node != jobs["cuda-mini"]["NodeList"]
    assert f"afterok:{jobs['base']['JobId']}" in jobs["cuda-mini"]["Dependency"] or \
        jobs["cuda-mini"]["Dependency"] == "(null)"  # met, and so cleared by Slurm
    for name in ("base", "cuda-mini"):
        assert images[name]["validation"]["status"] == "ok", images[name]
        assert images[name]["push"]["promoted"], images[name]["push"]  # promoted here
        assert images[name]["push"]["signature"], images[name]["push"]
        assert Path(images[name]["build"]["log"]).is_relative_to(build_dir), images[name]
    # The stack's job took the base its sibling node built from the registry, by key.
    theirs = json.loads((build_dir / "26.11" / "slurm" / "cuda-mini" / "26.11" /
                         "release.json").read_text())["images"]["base"]
    assert (theirs["build"]["source"], theirs["validation"]["gpu_mode"]) == ("registry",
                                                                               "(staged)")
    uploads = _blob_uploads(registry)
    print(f"{len(uploads)} blobs uploaded, at most {max(uploads.values())} time(s) each")
    assert uploads and max(uploads.values()) == 1, uploads.most_common(3)


def test_a_name_that_cannot_go_into_a_job_is_refused_before_anything_is_submitted(
        tmp_path: Path, cluster: tuple[TwoNodes, OwnRegistry]) -> None:
    nodes, registry = cluster
    manifest = _project(tmp_path / "a\nb")
    before = _all_jobs(nodes)
    release = _release(nodes, manifest, f"{registry.host}/hostile", tmp_path / "build")
    _, stderr = release.communicate(timeout=600)
    assert release.returncode == 2, stderr
    assert "control character" in stderr and "Traceback" not in stderr, stderr
    assert _all_jobs(nodes) == before, "a job was submitted"


def _all_jobs(nodes: TwoNodes) -> list[str]:
    return subprocess.run(["squeue", "-h", "-t", "all", "-o", "%i"], env=nodes.env,
                          capture_output=True, text=True, check=True).stdout.split()


@pytest.mark.extended
@pytest.mark.timeout(3600)
def test_a_node_lost_mid_job_fails_its_image_alone_and_the_rerun_submits_only_what_is_missing(
        tmp_path: Path, cluster: tuple[TwoNodes, OwnRegistry]) -> None:
    nodes, registry = cluster
    manifest = _project(tmp_path / "project")
    build_dir = tmp_path / "build"
    address = f"{registry.host}/lost"
    release = _release(nodes, manifest, address, build_dir)
    lost = _running_on(nodes, "ngc-26.11-jax", release)
    time.sleep(20)  # mid-job: building
    nodes.lose_node(lost)
    stdout, stderr = release.communicate(timeout=1800)
    assert release.returncode == 1, stderr[-4000:]
    first: dict[str, Any] = json.loads(stdout)["images"]
    print({name: image["build"].get("error") for name, image in first.items()})
    for name in ("base", "cuda-mini"):
        assert first[name]["push"]["promoted"], first[name]
    assert "NODE_FAIL" in first["jax"]["build"]["error"], first["jax"]
    assert not first["jax"]["push"]["promoted"]
    nodes.bring_back(lost)
    rerun = _release(nodes, manifest, address, build_dir)
    stdout, stderr = rerun.communicate(timeout=1800)
    again: dict[str, Any] = json.loads(stdout)["images"]
    # The broken image fails on purpose, so it is tried again with the lost one, and only they.
    assert sorted(_submitted(stderr)) == ["broken", "jax"], stderr[-4000:]
    assert rerun.returncode == 1 and again["broken"]["build"]["status"] == "failed"
    assert again["jax"]["push"]["promoted"] and again["jax"]["validation"]["status"] == "ok"
    assert again["jax"]["build"]["slurm_job"] != first["jax"]["build"]["slurm_job"]
    for name in ("base", "cuda-mini"):  # held by their keys: promoted as they are
        assert again[name]["push"]["digest"] == first[name]["push"]["digest"]
    uploads = _blob_uploads(registry)
    assert max(uploads.values()) == 1, uploads.most_common(3)
