"""`ngc-builder check-host` against real registries: the project's registry and an htpasswd
one started here. Small images are pushed through the registry API in a throwaway namespace
(a GPU one as a two-platform index, a CPU one); then the real CLI judges them on this machine.

No layer is pulled: on the project's registry each image's layer blob is deleted before the
check (a command that needed it would fail), and the htpasswd registry's access log shows the
config blob as the only blob read.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import os
import secrets
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from ngc_builder.services.registry import parse_registry
from ngc_builder.validate.hostfacts import driver_facts, load_pynvml
from tests.conftest import REPO
from tests.integration.conftest import REGISTRY_HOST
from tests.integration.registries import PASSWORD, USER, free_port, htpasswd_registry

pytestmark = pytest.mark.integration

DOCKER_V2 = "application/vnd.docker.distribution.manifest.v2+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
GPU_LABELS = {"org.ngc-builder.cuda": "13.2", "org.ngc-builder.min-driver": "580",
              "org.ngc-builder.gpu-targets": "8.0,9.0"}
CPU_LABELS = {"org.ngc-builder.python": "3.11", "org.ngc-builder.gpu-targets": "8.0,9.0"}


def sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def layer() -> tuple[bytes, str]:
    """A gzipped tar of one random file: (blob, diff ID)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        data = secrets.token_bytes(4096)
        info = tarfile.TarInfo("payload")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), mtime=0), sha(raw.getvalue())


class Pusher:
    """The registry API as `docker push` drives it, from the test's side."""

    def __init__(self, base_url: str, auth: tuple[str, str] | None = None) -> None:
        self.base_url, self.session = base_url, requests.Session()
        self.session.auth = auth

    def blob(self, repo: str, data: bytes) -> str:
        start = self.session.post(f"{self.base_url}/{repo}/blobs/uploads/", timeout=30)
        assert start.status_code == 202, start.text
        location = requests.compat.urljoin(self.base_url, start.headers["Location"])
        put = self.session.put(location, params={"digest": sha(data)}, data=data, timeout=30)
        assert put.status_code == 201, put.text
        return sha(data)

    def manifest(self, repo: str, tag: str, document: dict[str, object], media: str) -> str:
        body = json.dumps(document).encode()
        put = self.session.put(f"{self.base_url}/{repo}/manifests/{tag}", data=body,
                               headers={"Content-Type": media}, timeout=30)
        assert put.status_code == 201, put.text
        return sha(body)

    def image(self, repo: str, tag: str, labels: dict[str, str], arch: str = "amd64"
              ) -> tuple[str, str]:
        """(manifest digest, layer digest) of a one-layer image with these labels."""
        blob, diff_id = layer()
        config = json.dumps({"architecture": arch, "os": "linux", "config": {"Labels": labels},
                             "rootfs": {"type": "layers", "diff_ids": [diff_id]}}).encode()
        layer_digest, config_digest = self.blob(repo, blob), self.blob(repo, config)
        digest = self.manifest(repo, tag, {
            "schemaVersion": 2, "mediaType": DOCKER_V2,
            "config": {"mediaType": "application/vnd.docker.container.image.v1+json",
                       "digest": config_digest, "size": len(config)},
            "layers": [{"mediaType": "application/vnd.docker.image.rootfs.diff.tar.gzip",
                        "digest": layer_digest, "size": len(blob)}]}, DOCKER_V2)
        return digest, layer_digest

    def index(self, repo: str, tag: str, platforms: dict[str, str]) -> str:
        entries = [{"mediaType": DOCKER_V2, "digest": digest, "size": 1,
                    "platform": {"os": "linux", "architecture": arch}}
                   for arch, digest in platforms.items()]
        sizes = {e["digest"]: len(self.session.get(
            f"{self.base_url}/{repo}/manifests/{e['digest']}",
            headers={"Accept": DOCKER_V2}, timeout=30).content) for e in entries}
        for entry in entries:
            entry["size"] = sizes[str(entry["digest"])]
        return self.manifest(repo, tag, {"schemaVersion": 2, "mediaType": OCI_INDEX,
                                         "manifests": entries}, OCI_INDEX)

    def delete_blob(self, repo: str, digest: str) -> None:
        gone = self.session.delete(f"{self.base_url}/{repo}/blobs/{digest}", timeout=30)
        assert gone.status_code == 202, gone.text
        assert self.session.head(f"{self.base_url}/{repo}/blobs/{digest}",
                                 timeout=30).status_code == 404


def check_host(ref: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ngc_builder", "check-host", ref],
                          capture_output=True, text=True, check=False, cwd=REPO,
                          env={**os.environ, "NGC_RETRIES": "1", **(env or {})}, timeout=120)


@pytest.fixture(scope="module")
def pushed() -> dict[str, str]:
    """A GPU image (an index: amd64 with GPU labels, arm64 without) and a CPU image, their
    layer blobs deleted once pushed; refs by kind."""
    address = f"{REGISTRY_HOST}/hostfit-{secrets.token_hex(4)}"
    registry = parse_registry(address)
    pusher = Pusher(registry.base_url)
    repo = registry.path
    amd, amd_layer = pusher.image(repo("pytorch"), "amd64", GPU_LABELS)
    arm, arm_layer = pusher.image(repo("pytorch"), "arm64", {}, arch="arm64")
    pusher.index(repo("pytorch"), "26.11-py3", {"arm64": arm, "amd64": amd})
    _, cpu_layer = pusher.image(repo("mxnet-cpu"), "26.11-py3", CPU_LABELS)
    for name, digest in (("pytorch", amd_layer), ("pytorch", arm_layer),
                         ("mxnet-cpu", cpu_layer)):
        pusher.delete_blob(repo(name), digest)
    return {"gpu": f"{address}/pytorch:26.11-py3", "cpu": f"{address}/mxnet-cpu:26.11-py3",
            "amd": amd, "address": address}


@pytest.fixture(scope="module")
def gpu_less() -> None:
    if driver_facts(load_pynvml()).version is not None:
        pytest.skip("this machine has an NVIDIA driver: the GPU-less verdicts do not apply")


def test_a_gpu_image_fails_here_without_nvml_and_no_layer_was_needed(
        pushed: dict[str, str], gpu_less: None) -> None:
    done = check_host(pushed["gpu"])
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == (f"image {pushed['gpu']}: GPU image, linux/amd64 is "
                        f"{pushed['address']}/pytorch@{pushed['amd']}")
    assert any(line.startswith("fail driver: no NVIDIA driver found (NVML: ")
               for line in lines), done.stdout
    assert "skip gpu-targets: no GPU to compare" in done.stdout
    assert "Traceback" not in done.stderr


def test_a_cpu_image_runs_here(pushed: dict[str, str]) -> None:
    done = check_host(pushed["cpu"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert "skip driver: CPU image: not needed" in done.stdout
    assert done.stdout.splitlines()[-1] == "it would run here"


def test_a_tag_the_registry_lacks_is_one_line_and_exit_2(pushed: dict[str, str]) -> None:
    ref = pushed["cpu"].replace(":26.11-py3", ":no-such-tag")
    done = check_host(ref)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"error: {ref}: the registry has no such repository, tag or digest"]


@pytest.fixture
def private(tmp_path: Path) -> Iterator[tuple[str, Path, str]]:
    """An htpasswd registry holding a GPU image whose layer is still there: (ref, access log,
    layer digest)."""
    folder = tmp_path / "registry"
    folder.mkdir()
    with htpasswd_registry(folder, free_port()) as running:
        pusher = Pusher(f"http://{running.host}/v2", (USER, PASSWORD))
        _, layer_digest = pusher.image("team/jax", "26.11-py3", GPU_LABELS)
        yield f"{running.host}/team/jax:26.11-py3", folder / "registry.log", layer_digest


def docker_config(folder: Path, host: str, password: str) -> dict[str, str]:
    """What `docker login` stores, without an engine: the credentials base64 in auths."""
    folder.mkdir(parents=True, exist_ok=True)
    auth = base64.b64encode(f"{USER}:{password}".encode()).decode()
    (folder / "config.json").write_text(json.dumps({"auths": {host: {"auth": auth}}}))
    return {"DOCKER_CONFIG": str(folder)}


def test_a_registry_with_credentials_reads_the_config_and_no_layer(
        private: tuple[str, Path, str], tmp_path: Path, gpu_less: None) -> None:
    ref, log, layer_digest = private
    host = ref.split("/")[0]
    before = log.read_text().count("\n")
    done = check_host(ref, docker_config(tmp_path / "docker", host, PASSWORD))
    assert done.returncode == 1 and "fail driver: no NVIDIA driver" in done.stdout, done.stderr
    requests_seen = [line for line in log.read_text().splitlines()[before:]
                     if '"GET /v2/team/jax/blobs/' in line]
    assert len(requests_seen) == 1 and layer_digest not in requests_seen[0]
    assert PASSWORD not in done.stdout + done.stderr


def test_a_registry_without_our_credentials_is_exit_2_saying_login(
        private: tuple[str, Path, str], tmp_path: Path) -> None:
    ref, _, _ = private
    host = ref.split("/")[0]
    done = check_host(ref, docker_config(tmp_path / "docker", host, "not-" + PASSWORD))
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith(f"error: {ref}: ") and f"docker login {host}" in done.stderr
