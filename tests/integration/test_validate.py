"""Validation through the real engine: a deliberately broken image must fail its check."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from ngc_builder.services.engine import find_built
from ngc_builder.validate.image import RUNNER_COMMAND
from tests.integration.conftest import ReleaseRun, cli

pytestmark = pytest.mark.integration


def derive(client: Any, parent: str, run_line: str, tag: str) -> str:
    dockerfile = f"FROM {parent}\nRUN {run_line}\n".encode()
    image, _ = client.images.build(fileobj=io.BytesIO(dockerfile), tag=tag, rm=True)
    return str(image.id)


def test_validate_command_passes_a_good_image(ci_release: ReleaseRun) -> None:
    image_id = ci_release.record["images"]["jax"]["build"]["image_id"]
    done = cli("validate", image_id, "--release", str(ci_release.manifest), "--json")
    assert done.returncode == 0, done.stdout[-3000:]
    assert json.loads(done.stdout)["verdict"] == "pass"


def test_missing_library_fails_its_check(ci_release: ReleaseRun, docker_client: Any,
                                         tmp_path: Any) -> None:
    parent = ci_release.record["images"]["jax"]["build"]["image_id"]
    broken = derive(docker_client, parent,
                    "find /opt/venv -name 'libcudart.so*' -delete && ldconfig",
                    "ngc-local/test-broken-lib:latest")
    try:
        junit = tmp_path / "junit.xml"
        done = cli("validate", broken, "--json", "--junit", str(junit))
        assert done.returncode == 1
        checks = {c["id"]: c for c in json.loads(done.stdout)["checks"]}
        assert checks["lib.cudart"]["status"] == "fail"
        assert checks["jax.train_cpu"]["status"] == "pass"
        assert "<failure" in junit.read_text()
    finally:
        docker_client.api.remove_image(broken, force=True)


def test_wrong_label_fails_the_label_check(ci_release: ReleaseRun, docker_client: Any) -> None:
    parent = ci_release.record["images"]["jax"]["build"]["image_id"]
    dockerfile = f"FROM {parent}\nLABEL org.ngc-builder.framework.version=9.9.9\n".encode()
    image, _ = docker_client.images.build(fileobj=io.BytesIO(dockerfile), rm=True)
    try:
        done = cli("validate", image.id, "--release", str(ci_release.manifest), "--json")
        assert done.returncode == 1
        labels = next(c for c in json.loads(done.stdout)["checks"] if c["id"] == "labels")
        assert labels["status"] == "fail" and "9.9.9" in labels["message"]
    finally:
        docker_client.api.remove_image(image.id, force=True)


def checks_of(done: Any) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in json.loads(done.stdout)["checks"]}


def test_cpu_image_passes_t0_and_t2_and_skips_gpu_checks_with_reason(
    ci_release: ReleaseRun,
) -> None:
    image_id = ci_release.record["images"]["jax"]["build"]["image_id"]
    done = cli("validate", image_id, "--release", str(ci_release.manifest), "--json")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    checks = checks_of(done)
    assert json.loads(done.stdout)["verdict"] == "pass"
    assert checks["jax.train_cpu"]["status"] == "pass"  # a T2 check of the framework's probe
    assert checks["os.shm"]["status"] == "pass"  # validate starts containers with --shm-size
    assert checks["cuda.archs"]["status"] == "skip"
    assert "CPU-only image" in checks["cuda.archs"]["message"]
    for check in checks.values():
        if check["tier"] == "T0" and check["id"] != "cuda.archs":
            assert check["status"] == "pass", check
    gpu_prefixes = ("gpu.", "jax.gpu.", "jax.bench")
    gpu_checks = [c for c in checks.values() if c["id"].startswith(gpu_prefixes)]
    assert len(gpu_checks) >= 6
    # Each says why it did not run: no GPU, or the GPU check it needs did not run.
    assert all(c["status"] == "skip" and c["message"] in ("no GPU", "requires gpu.driver (skip)")
               for c in gpu_checks)
    assert checks["gpu.driver"]["message"] == "no GPU"
    assert json.loads(done.stdout)["environment"]["docker_command"].startswith("docker run")
    # The multi-node userspace of the stack, through the real Open MPI: no RDMA device here.
    assert checks["multinode.userspace"]["message"].endswith("no RDMA device on this host")
    for job in ("multinode.mpirun", "jax.dist.multiprocess_cpu"):
        assert checks[job]["status"] == "pass", checks[job]
    assert "values [1, 2] gathered" in checks["jax.dist.multiprocess_cpu"]["message"]
    assert "JAX_VERSION=0.12.0" in checks["image.environment"]["message"]


def validate_broken(ci_release: ReleaseRun, docker_client: Any, run_line: str,
                    check_id: str) -> dict[str, Any]:
    """The CI JAX image with `run_line` on top, validated (exit 1), then removed."""
    parent = ci_release.record["images"]["jax"]["build"]["image_id"]
    broken = derive(docker_client, parent, run_line, "ngc-test/broken:latest")
    try:
        key = ci_release.record["images"]["jax"]["build"]["key"]
        reused = find_built(docker_client, key)  # the broken image carries the key label too
        assert reused is not None and reused["Id"] != broken
        done = cli("validate", broken, "--json")
        assert done.returncode == 1
        return checks_of(done)[check_id]
    finally:
        docker_client.api.remove_image(broken, force=True)


def test_gpu_image_without_gpu_code_fails_the_architecture_check(
    ci_release: ReleaseRun, docker_client: Any
) -> None:
    archs = validate_broken(ci_release, docker_client,
                            "echo '{\"gpu_image\": true}' > /opt/ngc/expect/90-claims-gpu.json",
                            "cuda.archs")
    assert archs["status"] == "fail" and "CPU-only build in a GPU image" in archs["message"]


def test_default_docker_shm_fails_the_shm_check_as_a_host_defect(
    ci_release: ReleaseRun, docker_client: Any
) -> None:
    image_id = ci_release.record["images"]["jax"]["build"]["image_id"]
    container = docker_client.containers.run(image_id, RUNNER_COMMAND, detach=True,
                                             environment={"NGC_GPU": "none"},
                                             network_disabled=True)  # Docker's 64 MB /dev/shm
    try:
        assert container.wait(timeout=600)["StatusCode"] == 1
        output = container.logs(stdout=True, stderr=False)
    finally:
        container.remove(force=True)
    checks = {c["id"]: c for c in json.loads(output)["checks"]}
    assert checks["os.shm"]["status"] == "fail" and checks["os.shm"]["fault"] == "host"
    assert "--shm-size" in checks["os.shm"]["message"]


def test_a_library_the_framework_links_missing_fails_the_linkage_check(
    ci_release: ReleaseRun, docker_client: Any
) -> None:
    libraries = validate_broken(ci_release, docker_client,
                                "rm -f /usr/lib/x86_64-linux-gnu/libstdc++.so.6* && ldconfig",
                                "framework.libraries")
    assert libraries["status"] == "fail" and "libstdc++.so.6" in libraries["message"]
    assert libraries["fault"] == "image"
