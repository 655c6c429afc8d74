"""A devel image through the real pipeline: CI's JAX on its mini stack plus jax-devel (the
stack's nvcc, crt, nvvm and cccl wheels, Debian's g++ and ninja), built, validated and pushed.
Its validation compiles real code: a __global__ kernel with nvcc for sm_80 and sm_90, checked
in the library it made, and an XLA FFI handler built with g++ and called by jax.ffi on the CPU.
Running the kernels needs a GPU: those checks say `no GPU` here (docs/validation-gpu.md has
them run)."""

from __future__ import annotations

import json
import secrets
from typing import Any

import pytest
import requests

from tests.conftest import DATA
from tests.integration.conftest import REGISTRY_HOST, ReleaseRun, ci_project, cli, pull_back

pytestmark = pytest.mark.integration
COMPILED = ("devel.toolchain", "devel.nvcc_targets", "jax.devel.ffi_cpu",
            "jax.devel.ffi_cuda_build")
ON_A_GPU = ("devel.nvcc_kernel_run", "jax.devel.ffi_gpu")


@pytest.fixture(scope="module")
def devel_release(tmp_path_factory: pytest.TempPathFactory) -> ReleaseRun:
    root = tmp_path_factory.mktemp("ci-devel")
    ci_project(root)
    for name in ("ci-devel.yaml", "ci-devel.lock.json"):
        (root / "releases" / name).write_text((DATA / "releases" / name).read_text())
    manifest = root / "releases" / "ci-devel.yaml"
    registry = f"{REGISTRY_HOST}/ci-devel-{secrets.token_hex(4)}"
    done = cli("release", str(manifest), "--registry", registry, "--build-dir",
               str(root / "build"), "--os-source", "bootstrap", "--json", "--quiet")
    run = ReleaseRun(root, manifest, root / "build", registry, done.returncode, done.stdout,
                     done.stderr)
    return pull_back(run) if done.returncode == 0 else run


def checks(run: ReleaseRun, image: str) -> dict[str, dict[str, Any]]:
    found = list(run.build_dir.rglob(f"{image}.validation.json"))
    assert len(found) == 1, found
    report = json.loads(found[0].read_text())
    return {check["id"]: check for check in report["checks"]}


def test_the_devel_image_compiles_cuda_code_for_the_release_targets(
        devel_release: ReleaseRun) -> None:
    assert devel_release.code == 0, devel_release.stderr[-3000:]
    found = checks(devel_release, "jax-devel")
    for check_id in COMPILED:
        assert found[check_id]["status"] == "pass", found[check_id]
    assert "sm_80, sm_90" in found["devel.nvcc_targets"]["message"]
    assert "sm_80, sm_90" in found["jax.devel.ffi_cuda_build"]["message"]
    assert "V13.2.86" in found["devel.toolchain"]["message"]
    for check_id in ON_A_GPU:
        assert (found[check_id]["status"], found[check_id]["message"]) == ("skip", "no GPU")


def registry_layers(registry: str, image: str) -> list[str]:
    """The layer digests the registry serves for `image:26.11-py3` (linux/amd64), as a
    puller reads them: not our record."""
    host, _, namespace = registry.partition("/")
    accept = ", ".join(("application/vnd.oci.image.index.v1+json",
                        "application/vnd.oci.image.manifest.v1+json",
                        "application/vnd.docker.distribution.manifest.list.v2+json",
                        "application/vnd.docker.distribution.manifest.v2+json"))
    def manifest(reference: str) -> dict[str, Any]:
        answer = requests.get(f"http://{host}/v2/{namespace}/{image}/manifests/{reference}",
                              headers={"Accept": accept}, timeout=30)
        answer.raise_for_status()
        found: dict[str, Any] = answer.json()
        return found
    found = manifest("26.11-py3")
    for entry in found.get("manifests", []):  # an index: the amd64 image
        if entry["platform"]["architecture"] == "amd64":
            found = manifest(entry["digest"])
    return [layer["digest"] for layer in found["layers"]]


def test_the_devel_image_is_pushed_from_its_framework(devel_release: ReleaseRun) -> None:
    assert devel_release.code == 0, devel_release.stderr[-3000:]
    # FROM the framework image, as the registry serves both: jax's layers are jax-devel's
    # first ones, the same blobs, and the devel image adds its toolchain above them.
    jax = registry_layers(devel_release.registry, "jax")
    devel = registry_layers(devel_release.registry, "jax-devel")
    assert devel[:len(jax)] == jax and len(devel) > len(jax)


def test_the_framework_image_has_no_compiler_and_says_where_one_is(
        devel_release: ReleaseRun) -> None:
    found = checks(devel_release, "jax")
    assert "devel.toolchain" not in found
    assert found["jax.devel.ffi_cpu"]["status"] == "skip"
    assert "-devel tag" in found["jax.devel.ffi_cpu"]["message"]
