"""`release --on slurm` with the site's `arm64_partition`, on the real two-node cluster
(tests/cluster/two_nodes.py, whose second node is also partition `arm64`): each image's own job
builds both platforms and stages them with the arm64 validation left out; this side then
validates each staged arm64 manifest, by digest, as a job in that partition, the full tier, and
promotes only what passed there. A row whose arm64 validation fails is kept out whole; an
optional arm64 is left out and the host's manifest alone promoted.

Here the partition's node is an amd64 one running the arm64 images under QEMU: this proves the
plumbing (the split jobs, where they run, the digest judged, promotion waiting, a failure
blocking), not the numerics on Grace that a real partition is for. Two-platform builds on two
empty engines: on demand (`make test-extended`, docs/testing.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ngc_builder.manifest.platforms import HOST_PLATFORM
from ngc_builder.pipeline.prepare import prepare
from ngc_builder.publish.oci_index import platforms_of
from ngc_builder.render.platforms import platform_os_refs
from ngc_builder.services.registry import parse_registry
from tests.cluster.two_nodes import ARM64_PARTITION, NODES, TwoNodes
from tests.faults.engines import copy_image
from tests.integration.test_arm64_build import _os_images
from tests.integration.test_arm64_release import _small_project
from tests.integration.test_slurm_release import _job, _release, cluster  # noqa: F401
from tests.own_registry import OwnRegistry

pytestmark = [pytest.mark.integration, pytest.mark.extended,
              pytest.mark.usefixtures("ci_packages")]
ARM = "linux/arm64"
SITE = f"""slurm:
  gpus: 0
  build_partition: build
  arm64_partition: {ARM64_PARTITION}
  poll_seconds: 1
"""


def _project(root: Path, framework: str, release: str) -> Path:
    manifest = _small_project(root, framework, release)
    (root / "site.yaml").write_text(SITE)
    return manifest


def _nodes_hold_the_os_images(nodes: TwoNodes, manifest: Path, docker_client: Any) -> None:
    """Both platforms' locked OS images, made once on the main engine and copied to each node
    (making them on an empty engine is test_reproducible's case)."""
    prepared = prepare(manifest, None, stack_check=False)
    _os_images(docker_client, prepared)
    refs = [*prepared.plan.os_refs.values(), *platform_os_refs(
        prepared.loaded, prepared.plan, prepared.lock, ARM).values()]
    for node in NODES:
        for ref in refs:
            copy_image(ref, nodes.node_engine(node))


def _released(nodes: TwoNodes, manifest: Path, address: str,
              build_dir: Path) -> tuple[int, dict[str, Any], str]:
    release = _release(nodes, manifest, address, build_dir)
    stdout, stderr = release.communicate(timeout=3000)
    images = json.loads(stdout)["images"] if stdout.strip() else {}
    return release.returncode, images, stderr


def _job_record(build_dir: Path, image: str) -> dict[str, Any]:
    record = json.loads((build_dir / "26.11" / "slurm" / image / "26.11" /
                         "release.json").read_text())
    return record["images"][image]  # type: ignore[no-any-return]


@pytest.mark.timeout(5400)
def test_arm64_rows_are_judged_in_the_arm64_partition_and_promoted_only_once_they_passed(
        tmp_path: Path, cluster: tuple[TwoNodes, OwnRegistry],  # noqa: F811
        docker_client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    nodes, registry = cluster
    monkeypatch.setenv("NGC_REGISTRY_INSECURE", "1")  # this test's own reads of the registry
    manifest = _project(tmp_path / "project", "purepy", "ci-arm64-stage")
    _nodes_hold_the_os_images(nodes, manifest, docker_client)
    build_dir, address = tmp_path / "build", f"{registry.host}/grace"
    code, images, stderr = _released(nodes, manifest, address, build_dir)
    assert code == 0, stderr[-4000:]
    client = parse_registry(address)
    for name in ("base", "cuda-mini", "purepy"):
        arm = images[name]["platforms"][ARM]
        job = _job(nodes, arm["validation"]["slurm_job"])
        built_by = _job(nodes, images[name]["build"]["slurm_job"])
        print(name, job["Partition"], job["NodeList"], arm["validation"]["summary"])
        # Its own job staged it unjudged; the partition's job judged that very digest after.
        assert _job_record(build_dir, name)["platforms"][ARM]["validation"]["verdict"] == \
            "deferred"
        assert (job["Partition"], job["NodeList"]) == (ARM64_PARTITION, NODES[1])
        assert job["SubmitTime"] >= built_by["EndTime"], (job, built_by)
        assert (arm["validation"]["verdict"], arm["validation"]["scope"], arm["emulated"]) == \
            ("pass", "full", False)
        assert arm["validation"]["image_id"] == arm["digest"]
        assert images[name]["push"]["promoted"], images[name]["push"]
        held = platforms_of(client, name, images[name]["push"]["digest"])
        assert held == {HOST_PLATFORM: images[name]["push"]["host_digest"], ARM: arm["digest"]}
    # The full tier ran there: the check that waits for a native node was not skipped.
    report = json.loads(Path(images["purepy"]["platforms"][ARM]["validation"]["report"])
                        .read_text())
    assert report["platform"].endswith("-aarch64-with-glibc2.41"), report["platform"]
    assert report["environment"]["slurm"]["partition"] == ARM64_PARTITION
    assert {c["id"]: c["status"] for c in report["checks"]}["purepy.sums"] == "pass"

    # Rows whose arm64 fails there: the required one kept out whole, the optional one shipped
    # without it. Base and stack are held by their keys: promoted as they are, judged no more.
    failing = _project(tmp_path / "failing", "amd64only", "ci-arm64-fail")
    code, images, stderr = _released(nodes, failing, address, tmp_path / "build-fail")
    assert code == 1, stderr[-4000:]
    required, optional = images["amd64only"], images["amd64only-optional"]
    assert required["platforms"][ARM]["validation"]["verdict"] == "fail"
    assert required["push"]["status"] == "blocked" and not required["push"]["promoted"]
    assert required["push"]["error"].startswith(f"{ARM} did not pass: validate {ARM}: fail:")
    assert client.list_tags("amd64only") and "26.11-py3" not in client.list_tags("amd64only")
    assert optional["platforms"][ARM]["left_out"].startswith(f"validate {ARM}: fail")
    host = _job_record(tmp_path / "build-fail", "amd64only-optional")["push"]["host_digest"]
    assert optional["push"]["promoted"] and optional["push"]["digest"] == host
    for name in ("base", "cuda-mini"):
        assert images[name]["push"]["promoted"], images[name]["push"]
