"""releases/26.12.yaml's pytorch-devel as a researcher uses it on a machine without a GPU (a
login node, a CI runner, this host): a CUDA extension, a `__global__` kernel and its host side,
built by `torch.utils.cpp_extension.load_inline` and its host side called. Once with a bare
`docker run` (no `--gpus`, no `-e`), once with a bare `ch-run --set-env` as nobody (no
entrypoint). Neither sets TORCH_CUDA_ARCH_LIST: where the image does not, torch asks the absent
GPU for its architecture and fails (`IndexError` in `_get_cuda_arch_flags`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import pytest
import yaml

from tests.conftest import REPO
from tests.faults.running import Release, namespace
from tests.integration.conftest import cli

pytestmark = [pytest.mark.integration, pytest.mark.extended, pytest.mark.timeout(5400)]
MANIFEST = REPO / "releases" / "26.12.yaml"
IMAGE = "pytorch-devel"
# SASS for each of the release's GPU targets, PTX of the newest for later GPUs.
_TARGETS = [str(target) for target in yaml.safe_load(MANIFEST.read_text())["gpu_targets"]]
ARCH_LIST = ";".join([*_TARGETS[:-1], f"{_TARGETS[-1]}+PTX"])
# What a researcher types: no build folder, no variable; the result is the last stdout line.
EXTENSION = r'''
import json, os, tempfile
from torch.utils.cpp_extension import load_inline

CUDA = """
#include <tuple>
#include <cuda_runtime.h>
__global__ void scale(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
std::tuple<int64_t, int64_t> host_side(int64_t n) {
  int devices = -1;
  cudaError_t status = cudaGetDeviceCount(&devices);  /* no GPU: an error code, no crash */
  return std::make_tuple(n * 3, (int64_t)status);
}
"""
module = load_inline("researcher_ext", cpp_sources="std::tuple<int64_t, int64_t> "
                     "host_side(int64_t n);", cuda_sources=CUDA, functions=["host_side"],
                     build_directory=tempfile.mkdtemp(), with_cuda=True)
value, status = module.host_side(14)
print(json.dumps({"value": value, "cuda_status": status, "library": module.__file__,
                  "arch_list": os.environ.get("TORCH_CUDA_ARCH_LIST")}))
'''
NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"]
LOGIN = ["env", "-i", "PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/nonexistent", "USER=nobody",
         "LOGNAME=nobody"]


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """26.12's pytorch-devel (and what it stands on), both platforms, built and validated."""
    fetched = cli("fetch", str(MANIFEST))  # the run below is --offline
    assert fetched.returncode == 0, fetched.stderr[-2000:]
    build_dir = tmp_path_factory.mktemp("devel") / "build"
    run = Release(MANIFEST, namespace("devel"), build_dir,
                  extra=["--only", IMAGE, "--no-push", "--quiet"])
    assert run.run(5400) == 0, run.stderr()[-3000:]
    images: dict[str, Any] = json.loads(run.stdout_file.read_text())["images"]
    return {"record": images[IMAGE], "pytorch": images["pytorch"], "build_dir": build_dir}


def amd64_id(release: dict[str, Any]) -> str:
    image_id: str = release["record"]["build"]["image_id"]  # the build host's platform
    return image_id


def last_json(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-4000:])
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_validation_built_the_extension_as_users_get_the_image(release: dict[str, Any]) -> None:
    """amd64: the probe built it for the release's targets, in the image's own environment.
    arm64 (emulated): nvcc builds a kernel for the newest target; torch's extension build is
    outside the emulated tier (minutes of g++ under QEMU) and says so."""
    reports = release["build_dir"].rglob("*.validation.json")
    found = {path.name: {check["id"]: check for check in json.loads(path.read_text())["checks"]}
             for path in reports if path.name.startswith(f"{IMAGE}.")}
    native, emulated = found[f"{IMAGE}.validation.json"], found[f"{IMAGE}.arm64.validation.json"]
    extension = native["torch.devel.cuda_extension"]
    assert extension["status"] == "pass", extension
    assert extension["evidence"]["torch_cuda_arch_list"] == ARCH_LIST
    assert native["torch.devel.cuda_extension_run"]["message"] == "no GPU"
    assert emulated["devel.nvcc_targets"]["status"] == "pass"
    assert (emulated["torch.devel.cuda_extension"]["status"],
            emulated["torch.devel.cuda_extension"]["message"]) == (
        "skip", "not in the emulated tier: the full tier needs a native aarch64 node")


def test_the_framework_image_carries_its_addons_each_checked_on_both_platforms(
        release: dict[str, Any]) -> None:
    """releases/26.12.yaml's pytorch row asks for three of NVIDIA's add-ons (docs/addons.md):
    each passes its CPU check in the amd64 report and in arm64's emulated tier, each GPU check
    says it did not run, and the image's label lists them."""
    addons = yaml.safe_load(MANIFEST.read_text())["images"][0]["addons"]
    reports = {path.name: {check["id"]: check for check in json.loads(path.read_text())["checks"]}
               for path in release["build_dir"].rglob("pytorch.*validation.json")}
    ids = {"nvtx": "nvtx", "nvidia-nvimgcodec-cu13": "nvimgcodec",
           "nvidia-cudnn-frontend": "cudnn_frontend"}
    for report in ("pytorch.validation.json", "pytorch.arm64.validation.json"):
        checks = reports[report]
        for name, version in addons.items():
            check = checks[f"addons.{ids[name]}"]
            print(report, check["id"], check["status"], check["message"])
            assert (check["status"], check["evidence"]["version"]) == ("pass", version), check
        assert checks["addons.cudnn_frontend.gpu"]["status"] == "skip"
    inspected = docker.from_env().api.inspect_image(release["pytorch"]["build"]["image_id"])
    assert inspected["Config"]["Labels"]["org.ngc-builder.addons"] == ",".join(
        f"{name}=={version}" for name, version in sorted(addons.items()))


def test_a_bare_docker_run_builds_and_calls_a_cuda_extension(release: dict[str, Any]) -> None:
    done = subprocess.run(["docker", "run", "--rm", amd64_id(release), "python", "-c",
                           EXTENSION], capture_output=True, text=True, timeout=900, check=False)
    result = last_json(done)
    print(result)
    assert result["value"] == 42
    assert result["cuda_status"] != 0  # the runtime answered: no device (there is none here)
    assert result["arch_list"] == ARCH_LIST  # from the image, not from us


@pytest.fixture
def converted(release: dict[str, Any]) -> Iterator[Path]:
    """The amd64 image as a Charliecloud directory that nobody can read."""
    tags = docker.from_env().images.get(amd64_id(release)).tags
    assert tags, "ch-convert reads images by name: the build tags each one"
    folder = Path(tempfile.mkdtemp(prefix="ngc-devel-ch-", dir="/var/tmp"))
    try:
        folder.chmod(0o755)
        done = subprocess.run(["ch-convert", "-i", "docker", "-o", "dir", tags[0],
                               str(folder / "image")], capture_output=True, text=True,
                              timeout=1800, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        yield folder / "image"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_bare_ch_run_as_nobody_builds_and_calls_a_cuda_extension(converted: Path) -> None:
    done = subprocess.run([*NOBODY, *LOGIN, "ch-run", "--set-env", str(converted), "--",
                           "python", "-c", EXTENSION], capture_output=True, text=True,
                          timeout=900, check=False, cwd="/")
    result = last_json(done)
    print(result)
    assert result["value"] == 42
    assert result["arch_list"] == ARCH_LIST
    assert os.stat(converted / "usr").st_uid == 0  # nobody ran it: the image stays root's
