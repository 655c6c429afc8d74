"""The SBOM of an image: the CycloneDX document from the lock, the licences read in the
image, the OCI artifact pushed beside the image, and what verify finds wrong with it."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any

import pytest

from ngc_builder.lock.models import AptPackage, ImageLock, PipPackage, ReleaseLock
from ngc_builder.manifest.load import load_release
from ngc_builder.plan.dag import ReleasePlan, plan_release
from ngc_builder.publish import artifact, sbom
from ngc_builder.publish.sbom import Licence
from ngc_builder.services.engine import Engine
from ngc_builder.services.registry import Manifest, RegistryError
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE
from tests.unit.fake_engine import (
    DIGEST,
    OTHER,
    FakeApi,
    FakeContainer,
    FakeEngine,
    StoringRegistry,
)
from tests.unit.locks import deb, wheel

pytestmark = pytest.mark.unit
IMAGE_BODY = json.dumps({"schemaVersion": 2, "layers": []}).encode()
IMAGE = "sha256:" + hashlib.sha256(IMAGE_BODY).hexdigest()
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"


def image_lock(pip: list[PipPackage] | None = None,
               apt: list[AptPackage] | None = None) -> ImageLock:
    return ImageLock(inputs={}, pip=pip or [], apt=apt or [])


LOCK = ReleaseLock(release="26.11", images={
    "base": image_lock(apt=[deb("libstdc++6", "14.2.0-19"), deb("tzdata", "1:2025b-4")]),
    "cuda-cu13": image_lock(pip=[wheel("nvidia-cuda-runtime", "13.2.86"),
                                 wheel("numpy", "2.3.4")]),
    "jax": image_lock(pip=[wheel("jax", "0.12.0"), wheel("numpy", "2.3.5")]),
    "pytorch": image_lock(pip=[wheel("torch", "2.15.0+cu130")]),
})


@pytest.fixture
def plan(write_release: WriteRelease) -> ReleasePlan:
    return plan_release(load_release(write_release(GOOD_RELEASE, lock=False)))


def document(plan: ReleasePlan, digest: str = IMAGE,
             licences: sbom.Licences | None = None) -> dict[str, Any]:
    return sbom.image_sbom("jax", plan, LOCK, digest, licences or {})


def by_name(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in doc["components"]}


# --- the document -----------------------------------------------------------------------


def test_the_document_holds_the_image_and_every_ancestors_packages(plan: ReleasePlan) -> None:
    doc = document(plan)
    assert (doc["bomFormat"], doc["specVersion"]) == ("CycloneDX", "1.5")
    assert doc["metadata"]["component"] == {
        "type": "container", "bom-ref": f"pkg:oci/jax@{IMAGE}", "name": "jax",
        "version": "26.11-py3", "purl": f"pkg:oci/jax@{IMAGE}"}
    assert sorted(by_name(doc)) == ["jax", "libstdc++6", "numpy", "nvidia-cuda-runtime",
                                    "tzdata"]  # base, cuda-cu13 and jax; not pytorch's torch
    layers = {c["name"]: dict((p["name"], p["value"]) for p in c["properties"])
              ["ngc-builder:layer"] for c in doc["components"]}
    assert layers == {"jax": "jax", "numpy": "jax", "nvidia-cuda-runtime": "cuda-cu13",
                      "libstdc++6": "base", "tzdata": "base"}
    assert doc["dependencies"] == [{"ref": f"pkg:oci/jax@{IMAGE}",
                                    "dependsOn": [c["bom-ref"] for c in doc["components"]]}]


def test_a_child_that_upgrades_a_package_replaces_its_parents(plan: ReleasePlan) -> None:
    numpy = [c for c in document(plan)["components"] if c["name"] == "numpy"]
    assert [c["version"] for c in numpy] == ["2.3.5"]


def test_purls_hashes_and_files(plan: ReleasePlan) -> None:
    components = by_name(document(plan))
    jax, libstdc = components["jax"], components["libstdc++6"]
    assert jax["purl"] == jax["bom-ref"] == "pkg:pypi/jax@0.12.0"
    assert jax["hashes"] == [{"alg": "SHA-256", "content": wheel("jax", "0.12.0").sha256}]
    assert {"name": "ngc-builder:file", "value": "jax-0.12.0-py3-none-any.whl"} in \
        jax["properties"]
    assert libstdc["purl"] == "pkg:deb/debian/libstdc%2B%2B6@14.2.0-19?arch=amd64"
    assert libstdc["hashes"] == [{"alg": "SHA-256",
                                  "content": deb("libstdc++6", "14.2.0-19").sha256}]
    assert components["tzdata"]["purl"] == "pkg:deb/debian/tzdata@1:2025b-4?arch=amd64"
    torch = sbom.image_sbom("pytorch", plan, LOCK, IMAGE, {})["components"]
    assert "pkg:pypi/torch@2.15.0%2Bcu130" in [c["purl"] for c in torch]


def test_same_inputs_same_bytes_and_the_serial_follows_the_digest(plan: ReleasePlan) -> None:
    assert sbom.sbom_bytes(document(plan)) == sbom.sbom_bytes(document(plan))
    serial = document(plan)["serialNumber"]
    assert serial.startswith("urn:uuid:") and len(serial) == len("urn:uuid:") + 36
    assert document(plan, DIGEST)["serialNumber"] != serial
    refs = [c["bom-ref"] for c in document(plan)["components"]]
    assert refs == sorted(refs)


def test_what_the_image_holds_beyond_the_lock_is_listed_without_hashes(
        plan: ReleasePlan) -> None:
    """The OS image's own packages and the venv's pip are in the image but not in the lock:
    given the image's listing, they are components too, said to be found by the listing."""
    installed = {"pip": {"pip": "25.1.1", "NumPy": "2.3.5", "jax": "0.12.0"},
                 "dpkg": {"libc6": "2.41-12", "libstdc++6": "14.2.0-19", "tzdata": "1:2025b-4"}}
    doc = sbom.image_sbom("jax", plan, LOCK, IMAGE, {"deb/libc6": Licence(names=("LGPL-2.1+",))},
                          installed)
    components = by_name(doc)
    assert sorted(components) == ["jax", "libc6", "libstdc++6", "numpy", "nvidia-cuda-runtime",
                                  "pip", "tzdata"]
    assert components["libc6"] == {
        "type": "library", "bom-ref": "pkg:deb/debian/libc6@2.41-12",
        "purl": "pkg:deb/debian/libc6@2.41-12", "name": "libc6", "version": "2.41-12",
        "properties": [{"name": "ngc-builder:found-by", "value": "dpkg"}],
        "licenses": [{"license": {"name": "LGPL-2.1+"}}]}
    assert components["pip"]["purl"] == "pkg:pypi/pip@25.1.1"
    assert "hashes" not in components["pip"] and "hashes" in components["numpy"]
    assert sbom.sbom_bytes(doc) == sbom.sbom_bytes(sbom.image_sbom(
        "jax", plan, LOCK, IMAGE, {"deb/libc6": Licence(names=("LGPL-2.1+",))}, installed))


def test_licences_where_known_and_never_invented(plan: ReleasePlan) -> None:
    licences = {"pypi/jax": Licence(expression="Apache-2.0"),
                "deb/tzdata": Licence(names=("public-domain",))}
    components = by_name(document(plan, licences=licences))
    assert components["jax"]["licenses"] == [{"expression": "Apache-2.0"}]
    assert components["tzdata"]["licenses"] == [{"license": {"name": "public-domain"}}]
    assert "licenses" not in components["numpy"]


def test_an_image_missing_from_the_lock_makes_no_sbom(plan: ReleasePlan) -> None:
    partial = LOCK.model_copy(update={"images": {"jax": LOCK.images["jax"]}})
    with pytest.raises(sbom.SbomError, match="no entry for base"):
        sbom.image_sbom("jax", plan, partial, IMAGE, {})
    with pytest.raises(ValueError, match="not a sha256 digest"):
        sbom.image_sbom("jax", plan, LOCK, "latest", {})


# --- licences read in the image ---------------------------------------------------------


class FailingContainer(FakeContainer):
    def wait(self, timeout: int | None = None) -> dict[str, int]:
        return {"StatusCode": 1}


@dataclass
class ScriptContainers:
    """Containers that print `output`, and remember what they were asked to run."""

    output: str
    status: int = 0
    asked: list[tuple[str, list[str], bool]] = field(default_factory=list)

    def create(self, image: str, command: list[str], *, network_disabled: bool,
               entrypoint: list[str] | None = None, environment: dict[str, str] | None = None,
               device_requests: list[Any] | None = None, shm_size: str | None = None,
               user: str | None = None, read_only: bool = False,
               tmpfs: dict[str, str] | None = None,
               network_mode: str | None = None) -> FakeContainer:
        self.asked.append((image, command, network_disabled))
        kind = FailingContainer if self.status else FakeContainer
        return kind(None, output=self.output)

    def run(self, image: str, command: list[str], *, entrypoint: list[str], remove: bool,
            network_disabled: bool, stderr: bool) -> bytes:
        raise AssertionError("licences are read with create/start/wait/logs")


class ScriptEngine:
    def __init__(self, containers: ScriptContainers) -> None:
        self.api = FakeApi(FakeEngine())
        self.containers = containers


RAW = {
    "pypi": {
        "Jax_Lib": {"expression": "Apache-2.0", "license": None, "classifiers": []},
        "numpy": {"expression": None, "license": "Copyright (c) NumPy\nAll rights reserved.",
                  "classifiers": ["License :: OSI Approved :: BSD License"]},
        "six": {"expression": None, "license": "MIT", "classifiers": []},
        "mystery": {"expression": None, "license": "UNKNOWN",
                    "classifiers": ["License :: OSI Approved"]},
    },
    "deb": {
        "tzdata": {"format": "Format: https://www.debian.org/doc/packaging-manuals/"
                             "copyright-format/1.0/", "license": " public-domain"},
        "libfoo": {"format": "This package was debianized by someone.", "license": "GPL"},
    },
}


def test_licences_are_read_in_a_container_without_network() -> None:
    containers = ScriptContainers(json.dumps(RAW))
    engine: Engine = ScriptEngine(containers)
    found = sbom.licences_in_image(engine, "sha256:" + "12" * 32)
    assert found == {"pypi/jax-lib": Licence(expression="Apache-2.0"),
                     "pypi/numpy": Licence(names=("BSD License",)),
                     "pypi/six": Licence(names=("MIT",)),
                     "deb/tzdata": Licence(names=("public-domain",))}
    assert containers.asked == [("sha256:" + "12" * 32, ["python", "-c", sbom.LICENCE_SCRIPT],
                                 True)]


@pytest.mark.parametrize(("output", "status"), [("not json", 0), ('{"pypi": {}}', 0),
                                                 ("{}", 1)])
def test_unreadable_licences_are_an_sbom_error(output: str, status: int) -> None:
    engine: Engine = ScriptEngine(ScriptContainers(output, status))
    with pytest.raises(sbom.SbomError, match="licences in sha256:"):
        sbom.licences_in_image(engine, "sha256:" + "12" * 32)


def test_the_licence_script_runs_on_a_real_python() -> None:
    """The script itself, run by this Python: it must find the licences of what runs it."""
    done = subprocess.run([sys.executable, "-c", sbom.LICENCE_SCRIPT], capture_output=True,
                          text=True, check=True, timeout=120)
    raw = json.loads(done.stdout)
    pydantic = next(v for k, v in raw["pypi"].items() if k.lower() == "pydantic")
    assert sbom._pypi_licence(pydantic) is not None
    assert all(set(v) == {"format", "license"} for v in raw["deb"].values())


# --- the artifact in the registry -------------------------------------------------------


def registry_with_image() -> StoringRegistry:
    registry = StoringRegistry()
    registry.manifests[f"jax@{IMAGE}"] = Manifest(IMAGE_BODY, DOCKER_MANIFEST, IMAGE)
    return registry


def test_push_puts_the_blobs_and_a_manifest_with_subject_and_artifact_type(
        plan: ReleasePlan) -> None:
    registry = registry_with_image()
    doc = document(plan)
    digest = sbom.push_sbom(registry, "jax", IMAGE, doc)
    tag = "sha256-" + IMAGE.removeprefix("sha256:") + ".sbom"
    assert registry.puts == [("jax", tag)] and registry.tags[("jax", tag)] == digest
    pushed = registry.manifests[f"jax@{tag}"]
    assert pushed.media_type == artifact.OCI_MANIFEST
    assert pushed.digest == digest == "sha256:" + hashlib.sha256(pushed.body).hexdigest()
    manifest = json.loads(pushed.body)
    assert manifest["artifactType"] == "application/vnd.cyclonedx+json"
    assert manifest["subject"] == {"mediaType": DOCKER_MANIFEST, "digest": IMAGE,
                                   "size": len(IMAGE_BODY)}
    assert manifest["config"]["mediaType"] == "application/vnd.oci.empty.v1+json"
    assert registry.blobs[("jax", manifest["config"]["digest"])] == b"{}"
    [layer] = manifest["layers"]
    assert json.loads(registry.blobs[("jax", layer["digest"])]) == doc
    assert layer["size"] == len(sbom.sbom_bytes(doc))
    assert sbom.push_sbom(registry, "jax", IMAGE, doc) == digest
    assert len(registry.puts) == 1  # the same SBOM is already there: nothing put again


def test_push_needs_the_image_in_the_repository(plan: ReleasePlan) -> None:
    with pytest.raises(RegistryError, match="no such image"):
        sbom.push_sbom(StoringRegistry(), "jax", IMAGE, document(plan))


def test_check_passes_on_a_pushed_sbom(plan: ReleasePlan) -> None:
    registry = registry_with_image()
    sbom.push_sbom(registry, "jax", IMAGE, document(plan))
    assert sbom.check_sbom(registry, "jax", IMAGE) is None


def tampered(plan: ReleasePlan, change: str) -> StoringRegistry:
    """A registry whose SBOM of jax has one thing wrong."""
    registry = registry_with_image()
    tag = sbom.sbom_tag(IMAGE)
    sbom.push_sbom(registry, "jax", IMAGE, document(plan, OTHER if change == "doc" else IMAGE))
    manifest = json.loads(registry.manifests[f"jax@{tag}"].body)
    if change == "subject":
        manifest["subject"]["digest"] = OTHER
    elif change == "type":
        manifest["artifactType"] = "application/spdx+json"
    elif change == "blob":
        registry.blobs.clear()
    elif change == "not-json":
        registry.manifests[f"jax@{tag}"] = Manifest(b"<html>", "text/html", DIGEST)
        return registry
    body = json.dumps(manifest).encode()
    registry.manifests[f"jax@{tag}"] = Manifest(body, artifact.OCI_MANIFEST, DIGEST)
    return registry


@pytest.mark.parametrize(("change", "problem"), [
    ("subject", f"SBOM subject is {OTHER}, not the image {IMAGE}"),
    ("type", "SBOM tag holds a application/spdx+json artifact"),
    ("blob", "registry: https://localhost:5000/v2/jax/blobs/sha256:"),
    ("doc", f"SBOM document describes {OTHER}, not {IMAGE}"),
    ("not-json", "SBOM unreadable: JSONDecodeError"),
])
def test_check_names_what_is_wrong(plan: ReleasePlan, change: str, problem: str) -> None:
    assert str(sbom.check_sbom(tampered(plan, change), "jax", IMAGE)).startswith(problem)


def test_check_without_an_sbom() -> None:
    tag = sbom.sbom_tag(IMAGE)
    assert sbom.check_sbom(registry_with_image(), "jax", IMAGE) == \
        f"no SBOM: tag {tag} missing from the registry"
    assert sbom.check_sbom(registry_with_image(), "jax", "latest") == (
        "no SBOM can name 'latest': not a sha256 digest")
