"""The SBOM of a published image on the real registry: pushed beside the CI release's JAX as
an OCI artifact, then read back with a plain HTTP client as other tools read it (tag
`sha256-<hex>.sbom`, its subject, its CycloneDX layer); verify's check, a tampered subject,
the image still pulled as before; and the same artifact on a registry with token auth."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests

from ngc_builder.assemble import packages
from ngc_builder.lock.models import ReleaseLock, load_lock
from ngc_builder.manifest.load import load_release
from ngc_builder.plan.dag import ReleasePlan, plan_release
from ngc_builder.publish import sbom
from ngc_builder.services.registry import HttpRegistry, Manifest, parse_registry
from tests.conftest import DATA
from tests.integration.conftest import ReleaseRun, make_ci_root
from tests.integration.registries import TokenIssuer, docker_config, token_registry

pytestmark = pytest.mark.integration
TAG = "26.11-py3"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"


@dataclass(frozen=True)
class Pushed:
    registry: HttpRegistry
    digest: str  # the image's
    sbom_digest: str
    document: dict[str, Any]


def ci_lock() -> ReleaseLock:
    lock = load_lock(DATA / "releases" / "ci.lock.json")
    assert lock is not None
    return lock


@pytest.fixture(scope="module")
def plan_and_lock(ci_release: ReleaseRun) -> tuple[ReleasePlan, ReleaseLock]:
    return plan_release(load_release(ci_release.manifest)), ci_lock()


@pytest.fixture(scope="module")
def pushed(ci_release: ReleaseRun, docker_client: Any,
           plan_and_lock: tuple[ReleasePlan, ReleaseLock]) -> Pushed:
    jax = ci_release.record["images"]["jax"]
    assert jax["push"]["status"] == "ok", ci_release.stderr[-2000:]
    licences = sbom.licences_in_image(docker_client, jax["build"]["image_id"])
    installed = packages.load(Path(jax["build"]["packages"]))  # listed from the built image
    document = sbom.image_sbom("jax", *plan_and_lock, jax["push"]["digest"], licences,
                               installed)
    registry = parse_registry(ci_release.registry)
    sbom_digest = sbom.push_sbom(registry, "jax", jax["push"]["digest"], document)
    return Pushed(registry, jax["push"]["digest"], sbom_digest, document)


def get(registry: HttpRegistry, path: str, accept: str = "*/*") -> requests.Response:
    """A plain GET under the registry's /v2/<namespace>/, as any client sends it."""
    response = requests.get(f"{registry.base_url}/{registry.path(path)}",
                            headers={"Accept": accept}, timeout=30)
    assert response.status_code == 200, (path, response.status_code, response.text[:300])
    return response


def test_the_sbom_is_read_back_as_other_tools_read_it(pushed: Pushed) -> None:
    tag = "sha256-" + pushed.digest.removeprefix("sha256:") + ".sbom"
    found = get(pushed.registry, f"jax/manifests/{tag}", OCI_MANIFEST)
    assert found.headers["Content-Type"] == OCI_MANIFEST
    assert found.headers["Docker-Content-Digest"] == pushed.sbom_digest
    manifest = found.json()
    assert manifest["artifactType"] == "application/vnd.cyclonedx+json"
    image = get(pushed.registry, f"jax/manifests/{pushed.digest}",
                "application/vnd.docker.distribution.manifest.v2+json, " + OCI_MANIFEST)
    assert manifest["subject"] == {"mediaType": image.headers["Content-Type"],
                                   "digest": pushed.digest, "size": len(image.content)}
    [layer] = manifest["layers"]
    blob = get(pushed.registry, f"jax/blobs/{layer['digest']}").content
    assert "sha256:" + hashlib.sha256(blob).hexdigest() == layer["digest"]
    assert json.loads(blob) == pushed.document
    assert get(pushed.registry, f"jax/blobs/{manifest['config']['digest']}").content == b"{}"


def test_the_document_names_the_image_and_every_locked_package(
        pushed: Pushed, plan_and_lock: tuple[ReleasePlan, ReleaseLock]) -> None:
    document, lock = pushed.document, plan_and_lock[1]
    assert document["metadata"]["component"]["purl"] == f"pkg:oci/jax@{pushed.digest}"
    purls = {c["purl"]: c for c in document["components"]}
    for image in ("base", "cuda-mini", "jax"):
        for wheel in lock.images[image].pip:
            component = purls[f"pkg:pypi/{wheel.name}@{wheel.version}"]
            assert component["hashes"] == [{"alg": "SHA-256", "content": wheel.sha256}]
        for deb in lock.images[image].apt:
            assert any(purl.startswith(f"pkg:deb/debian/{deb.name.replace('+', '%2B')}@")
                       for purl in purls)
    # Beyond the lock: the OS image's own packages and the venv's pip, as the image lists them.
    libc = purls[next(p for p in purls if p.startswith("pkg:deb/debian/libc6@"))]
    assert libc["properties"] == [{"name": "ngc-builder:found-by", "value": "dpkg"}]
    assert libc["licenses"] == [{"license": {"name": "LGPL-2.1+"}}]
    assert any(purl.startswith("pkg:pypi/pip@") for purl in purls)
    # Licences as the packages in the image declare them (PEP 639 and Debian's DEP-5).
    runtime = purls[next(p for p in purls if p.startswith("pkg:pypi/nvidia-cuda-runtime@"))]
    assert runtime["licenses"] == [{"expression": "LicenseRef-NVIDIA-Proprietary"}]
    assert purls[next(p for p in purls if p.startswith("pkg:deb/debian/ca-certificates@"))][
        "licenses"] == [{"license": {"name": "GPL-2+"}}]


def test_verify_finds_the_sbom_and_a_forged_one(pushed: Pushed, ci_release: ReleaseRun) -> None:
    assert sbom.check_sbom(pushed.registry, "jax", pushed.digest) is None
    # The release pushed every image's SBOM; a digest it never published has none.
    cuda = ci_release.record["images"]["cuda-mini"]["push"]["digest"]
    assert sbom.check_sbom(pushed.registry, "cuda-mini", cuda) is None
    never = "sha256:" + "0" * 64
    assert sbom.check_sbom(pushed.registry, "cuda-mini", never) == (
        f"no SBOM: tag {sbom.sbom_tag(never)} missing from the registry")
    # The SBOM of jax with its subject changed, put under the SBOM tag of the base image in a
    # repository of its own (the release's repositories keep only what the release put there).
    held = pushed.registry.get_manifest("jax", sbom.sbom_tag(pushed.digest))
    assert held is not None
    forged = json.loads(held.body)
    for blob in (forged["config"], *forged["layers"]):
        pushed.registry.put_blob("forged", pushed.registry.get_blob("jax", blob["digest"]))
    forged["subject"]["digest"] = "sha256:" + "ab" * 32
    body = json.dumps(forged).encode()
    base = ci_release.record["images"]["base"]["push"]["digest"]
    pushed.registry.put_manifest("forged", sbom.sbom_tag(base), Manifest(
        body, OCI_MANIFEST, "sha256:" + hashlib.sha256(body).hexdigest()))
    assert sbom.check_sbom(pushed.registry, "forged", base) == (
        f"SBOM subject is sha256:{'ab' * 32}, not the image {base}")


def test_the_image_is_pulled_as_before(pushed: Pushed, ci_release: ReleaseRun,
                                       docker_client: Any) -> None:
    assert pushed.registry.manifest_digest("jax", TAG) == pushed.digest
    pulled = docker_client.images.pull(f"{ci_release.registry}/jax", tag=TAG)
    assert f"{ci_release.registry}/jax@{pushed.digest}" in pulled.attrs["RepoDigests"]
    assert sbom.push_sbom(pushed.registry, "jax", pushed.digest, pushed.document) == \
        pushed.sbom_digest  # pushed again: the same artifact, nothing moved


# --- a registry with token auth (what most hosted registries speak) ---------------------


@pytest.fixture
def token_auth(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HttpRegistry]:
    folder = tmp_path / "registry"
    folder.mkdir()
    with token_registry(folder) as running:
        config = docker_config(tmp_path / "docker-config", running.host)
        monkeypatch.setenv("DOCKER_CONFIG", str(config))
        yield parse_registry(f"{running.host}/team")


def test_the_sbom_artifact_on_a_token_auth_registry(token_auth: HttpRegistry,
                                                    tmp_path: Path) -> None:
    """An image of one config blob, its SBOM pushed and checked: the uploads ask their token
    for `pull,push` on the repository."""
    image_config = b'{"architecture":"amd64","os":"linux"}'
    config = token_auth.put_blob("jax", image_config)
    body = json.dumps({"schemaVersion": 2, "mediaType": OCI_MANIFEST, "layers": [], "config": {
        "mediaType": "application/vnd.oci.image.config.v1+json", "digest": config,
        "size": len(image_config)}}).encode()
    image = token_auth.put_manifest("jax", TAG, Manifest(
        body, OCI_MANIFEST, "sha256:" + hashlib.sha256(body).hexdigest()))
    plan = plan_release(load_release(make_ci_root(tmp_path / "project")))
    document = sbom.image_sbom("jax", plan, ci_lock(), image, {})
    sbom.push_sbom(token_auth, "jax", image, document)
    assert sbom.check_sbom(token_auth, "jax", image) is None
    assert "repository:team/jax:pull,push" in TokenIssuer.issued
    assert sorted(token_auth.list_tags("jax")) == [TAG, sbom.sbom_tag(image)]
