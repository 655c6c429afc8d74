"""The registry-API push on the real engine and registry: an image exported by `docker save`,
its layers gzipped in parallel and uploaded, the parent's mounted; then pulled back by plain
`docker pull` into a clean name and run, and its blobs read by another client (HTTP + gzip)."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import requests

from ngc_builder.publish.layer_memo import LayerMemo
from ngc_builder.publish.upload import upload_image
from ngc_builder.services.registry import HttpRegistry, parse_registry
from tests.conftest import REPO
from tests.integration.conftest import REGISTRY_HOST

# --offline runs read the shared package cache: `ci_packages` fills it first.
pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("ci_packages")]


def build(client: Any, dockerfile: str, tag: str) -> str:
    image, _ = client.images.build(fileobj=io.BytesIO(dockerfile.encode()), tag=tag, rm=True)
    return str(image.id)


@pytest.fixture(scope="module")
def chain(docker_client: Any, trixie_os: str) -> dict[str, str]:
    """A parent with a 3 MB random layer (compression cannot shrink it), a child on it."""
    marker = secrets.token_hex(4)
    parent = build(docker_client, f"FROM {trixie_os}\nRUN head -c 3000000 /dev/urandom > "
                   f"/blob && echo parent-{marker} > /p\n", f"ngc-test/up-parent:{marker}")
    child = build(docker_client, f"FROM ngc-test/up-parent:{marker}\nRUN echo child > /c\n",
                  f"ngc-test/up-child:{marker}")
    return {"parent": parent, "child": child, "marker": marker}


@pytest.fixture(scope="module")
def pushed(docker_client: Any, chain: dict[str, str],
           tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    registry = parse_registry(f"{REGISTRY_HOST}/up-{secrets.token_hex(4)}")
    memo = LayerMemo(tmp_path_factory.mktemp("memo") / "layers.json")
    said: dict[str, list[str]] = {"parent": [], "child": []}
    digests = {name: upload_image(docker_client.api, registry, name, chain[name], "rc1",
                                  ["parent"] if name == "child" else [], memo,
                                  said[name].append) for name in ("parent", "child")}
    return {"registry": registry, "memo": memo, "said": said, "digests": digests}


def test_the_child_sends_only_its_own_layer(pushed: dict[str, Any], docker_client: Any,
                                            chain: dict[str, str]) -> None:
    layers = docker_client.api.inspect_image(chain["child"])["RootFS"]["Layers"]
    assert [line.split()[1].rstrip(":") for line in pushed["said"]["child"]] == \
        [layers[-1][:19]]


def test_plain_docker_pull_gets_it_back_and_it_runs(pushed: dict[str, Any],
                                                    docker_client: Any,
                                                    chain: dict[str, str]) -> None:
    registry: HttpRegistry = pushed["registry"]
    ref = f"{registry.address}/child@{pushed['digests']['child']}"
    # The engine must download and unpack every layer: remove what it holds of the chain.
    for tag in (f"ngc-test/up-child:{chain['marker']}", f"ngc-test/up-parent:{chain['marker']}"):
        docker_client.images.remove(tag)
    subprocess.run(["docker", "pull", "-q", ref], check=True, capture_output=True)
    out = subprocess.run(["docker", "run", "--rm", ref, "sh", "-c", "cat /c /p; wc -c </blob"],
                         check=True, capture_output=True, text=True).stdout.split()
    assert out == ["child", f"parent-{chain['marker']}", "3000000"]
    assert docker_client.api.inspect_image(ref)["Id"] == chain["child"]


def test_another_client_reads_each_blob_back_to_its_diff_id(pushed: dict[str, Any]) -> None:
    registry: HttpRegistry = pushed["registry"]
    base = f"{registry.base_url}/{registry.path('child')}"
    manifest = requests.get(f"{base}/manifests/rc1", timeout=30, headers={
        "Accept": "application/vnd.docker.distribution.manifest.v2+json"}).json()
    config = requests.get(f"{base}/blobs/{manifest['config']['digest']}", timeout=30).json()
    for layer, diff_id in zip(manifest["layers"], config["rootfs"]["diff_ids"], strict=True):
        blob = requests.get(f"{base}/blobs/{layer['digest']}", timeout=60).content
        assert len(blob) == layer["size"]
        assert "sha256:" + hashlib.sha256(gzip.decompress(blob)).hexdigest() == diff_id


def test_a_second_push_sends_nothing_and_lands_on_the_same_digest(
        pushed: dict[str, Any], docker_client: Any, chain: dict[str, str],
        tmp_path: Path) -> None:
    said: list[str] = []
    again = upload_image(docker_client.api, pushed["registry"], "child", chain["child"],
                         "rc2", ["parent"], pushed["memo"], said.append)
    assert (again, said) == (pushed["digests"]["child"], [])
    saved = json.loads(pushed["memo"].path.read_text())
    assert chain["child"] in saved["configs"]


def test_a_release_pushed_through_the_api_is_what_docker_pulls(tmp_path: Path,
                                                                docker_client: Any) -> None:
    """The whole pipeline with NGC_PUSH_WITH=api: every image's log shows its layers going up
    through the API, and plain `docker pull` of each release tag gets the validated image."""
    from tests.integration.test_publishing import IMAGES, TAG, new_project

    project = new_project(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "ngc_builder", "release", str(project.manifest), "--registry",
         project.registry, "--build-dir", str(project.build_dir), "--os-source", "bootstrap",
         "--offline", "--json"], cwd=REPO, capture_output=True, text=True, check=False,
        timeout=3600, env={**os.environ, "NGC_PUSH_WITH": "api"})
    assert done.returncode == 0, done.stderr[-3000:]
    record = project.record()["images"]
    for name in IMAGES:
        log = (project.build_dir / "26.11" / "logs" / f"{name}.log").read_text()
        assert "gzipped, uploaded in" in log and "refused us" not in log
        ref = f"{project.registry}/{name}:{TAG}"
        subprocess.run(["docker", "pull", "-q", ref], check=True, capture_output=True)
        assert docker_client.api.inspect_image(ref)["Id"] == record[name]["build"]["image_id"]
