"""Signatures as other tools check them: the real `cosign` (installed by ci/setup-host.sh)
verifies what the release signed (each image, its SBOM and its SLSA provenance), on the
release's registry and on one that wants credentials, and rejects an image changed after
signing and a signature by another key."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import requests

from ngc_builder import __version__
from ngc_builder.cache.store import file_sha256
from ngc_builder.lock.models import lock_path
from ngc_builder.publish.attest import attestation_tag
from ngc_builder.publish.cosign_keys import (
    KEY_FILE,
    PUBLIC_FILE,
    SigningKey,
    decrypt,
    write_key_pair,
)
from ngc_builder.publish.referrers import (
    ATTESTATION_ARTIFACT,
    OCI_INDEX,
    SIGNATURE_ARTIFACT,
    referrers_tag,
)
from ngc_builder.publish.sbom import SBOM_TYPE, sbom_tag
from ngc_builder.publish.signing import sign_image, signature_problem, signature_tag
from ngc_builder.publish.squashfs_artifact import SQUASHFS_TYPE, squashfs_tag
from ngc_builder.services.environment import state_dir
from ngc_builder.services.registry import HttpRegistry, Manifest, parse_registry
from tests.integration.conftest import ReleaseRun, cli
from tests.integration.registries import docker_config, free_port, htpasswd_registry

pytestmark = pytest.mark.integration
TAG = "26.11-py3"
PUSHED = ("base", "cuda-mini", "jax")
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"


def cosign_verify(reference: str, public: Path, docker_config: str | None = None
                  ) -> subprocess.CompletedProcess[str]:
    cosign = shutil.which("cosign")
    assert cosign is not None, "cosign is missing: ci/setup-host.sh installs it"
    env = {**os.environ, **({"DOCKER_CONFIG": docker_config} if docker_config else {})}
    return subprocess.run([cosign, "verify", "--key", str(public), "--insecure-ignore-tlog=true",
                           reference], capture_output=True, text=True, env=env, timeout=120,
                          check=False)


def test_cosign_verifies_every_image_the_release_promoted(ci_release: ReleaseRun) -> None:
    public = state_dir() / "signing" / PUBLIC_FILE  # the builder's own key: none configured
    for name in PUSHED:
        image = ci_release.record["images"][name]
        digest = image["push"]["digest"]
        assert image["push"]["signature"] == signature_tag(digest)
        done = cosign_verify(f"{ci_release.registry}/{name}:{TAG}", public)
        assert done.returncode == 0, done.stderr
        [claim] = json.loads(done.stdout)
        assert claim["critical"]["image"]["docker-manifest-digest"] == digest
        sbom = parse_registry(ci_release.registry).manifest_digest(name, sbom_tag(digest))
        signed_sbom = cosign_verify(f"{ci_release.registry}/{name}@{sbom}", public)
        assert signed_sbom.returncode == 0, signed_sbom.stderr
        assert image["push"]["attestation"] == attestation_tag(digest)
        provenance = cosign_attestation(f"{ci_release.registry}/{name}:{TAG}", public)
        assert provenance["subject"][0]["digest"]["sha256"] == digest.removeprefix("sha256:")
        named = {dep.get("name"): dep["digest"] for dep in
                 provenance["predicate"]["buildDefinition"]["resolvedDependencies"]}
        assert named["manifest"]["sha256"] == file_sha256(ci_release.manifest)
        assert named["lock"]["sha256"] == file_sha256(lock_path(ci_release.manifest))
        by = provenance["predicate"]["runDetails"]
        assert by["builder"]["version"]["ngc-builder"] == __version__
        assert by["byproducts"][0]["annotations"]["verdict"] == image["validation"]["verdict"]
        # the OCI 1.1 referrers fallback, as a generic client reads it: one GET of the tag
        host, _, path = ci_release.registry.partition("/")
        index = requests.get(f"http://{host}/v2/{path}/{name}/manifests/{referrers_tag(digest)}",
                             headers={"Accept": OCI_INDEX}, timeout=30)
        assert index.status_code == 200 and index.headers["Content-Type"] == OCI_INDEX
        listed = {entry["artifactType"]: entry["digest"] for entry in index.json()["manifests"]}
        registry = parse_registry(ci_release.registry)
        expected = {
            SBOM_TYPE: registry.manifest_digest(name, sbom_tag(digest)),
            SIGNATURE_ARTIFACT: registry.manifest_digest(name, signature_tag(digest)),
            ATTESTATION_ARTIFACT: registry.manifest_digest(name, attestation_tag(digest))}
        if name == "jax":  # its row asks for a SquashFS (test_squashfs.py)
            expected[SQUASHFS_TYPE] = registry.manifest_digest(name, squashfs_tag(digest))
        assert listed == expected
    verified = cli("verify", str(ci_release.manifest), "--registry", ci_release.registry,
                   "--build-dir", str(ci_release.build_dir), "--json")
    signatures = [check for check in json.loads(verified.stdout)
                  if check["tag"].endswith(".sig")]
    # each image's and each SBOM's, jax's SquashFS's, and each image's provenance
    assert len(signatures) == 2 * len(PUSHED) + 1
    assert all(c["problem"] is None for c in signatures)
    attested = [check for check in json.loads(verified.stdout) if check["tag"].endswith(".att")]
    assert len(attested) == len(PUSHED) and all(c["problem"] is None for c in attested)


def cosign_attestation(reference: str, public: Path) -> dict[str, Any]:
    """The SLSA provenance statement `cosign verify-attestation` accepted."""
    cosign = shutil.which("cosign")
    assert cosign is not None, "cosign is missing: ci/setup-host.sh installs it"
    done = subprocess.run([cosign, "verify-attestation", "--key", str(public), "--type",
                           "slsaprovenance1", "--insecure-ignore-tlog=true", reference],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    envelope = json.loads(done.stdout.splitlines()[0])
    statement: dict[str, Any] = json.loads(base64.b64decode(envelope["payload"]))
    return statement


def put_image(registry: HttpRegistry, name: str, content: bytes) -> str:
    config = registry.put_blob(name, content)
    body = json.dumps({"schemaVersion": 2, "mediaType": OCI_MANIFEST, "layers": [], "config": {
        "mediaType": "application/vnd.oci.image.config.v1+json", "digest": config,
        "size": len(content)}}).encode()
    return registry.put_manifest(name, TAG, Manifest(
        body, OCI_MANIFEST, "sha256:" + hashlib.sha256(body).hexdigest()))


def key_pair(folder: Path, password: bytes) -> SigningKey:
    write_key_pair(folder, password)
    return SigningKey(decrypt((folder / KEY_FILE).read_text(), password, str(folder)), "test")


def cosign_key_pair(folder: Path, password: str) -> SigningKey:
    folder.mkdir()
    cosign = shutil.which("cosign")
    assert cosign is not None, "cosign is missing: ci/setup-host.sh installs it"
    subprocess.run([cosign, "generate-key-pair"], cwd=folder, check=True, capture_output=True,
                   env={**os.environ, "COSIGN_PASSWORD": password}, timeout=60)
    text = (folder / KEY_FILE).read_text()
    return SigningKey(decrypt(text, password.encode(), str(folder)), "cosign")


def test_on_a_registry_that_wants_credentials_cosign_rejects_what_it_should(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "registry").mkdir()
    with htpasswd_registry(tmp_path / "registry", free_port()) as running:
        config = docker_config(tmp_path / "docker-config", running.host)
        monkeypatch.setenv("DOCKER_CONFIG", str(config))
        registry = parse_registry(f"{running.host}/team")
        signed = put_image(registry, "jax", b'{"architecture":"amd64","os":"linux"}')
        # A team's existing key: made by cosign itself, read and used by our signer.
        ours, theirs = cosign_key_pair(tmp_path / "ours", "pw"), key_pair(tmp_path / "theirs", b"")
        sign_image(registry, "jax", signed, ours)
        reference = f"{running.host}/team/jax:{TAG}"
        done = cosign_verify(reference, tmp_path / "ours" / PUBLIC_FILE, str(config))
        assert done.returncode == 0, done.stderr
        other = cosign_verify(reference, tmp_path / "theirs" / PUBLIC_FILE, str(config))
        assert other.returncode != 0 and "no matching signatures" in other.stderr
        # check-host --key: the same verdicts before anything is pulled
        signed_ok = cli("check-host", "--key", str(tmp_path / "ours" / PUBLIC_FILE), reference)
        assert "signature" not in signed_ok.stderr and "Traceback" not in signed_ok.stderr
        wrong = cli("check-host", "--key", str(tmp_path / "theirs" / PUBLIC_FILE), reference)
        assert wrong.returncode == 1 and "holds no signature of this image by the release's " \
            "key" in wrong.stderr
        assert signature_problem(registry, "jax", signed,
                                 theirs.private.public_key()) is not None
        changed = put_image(registry, "jax", b'{"architecture":"amd64","os":"linux","x":1}')
        after = cosign_verify(reference, tmp_path / "ours" / PUBLIC_FILE, str(config))
        assert after.returncode != 0 and "no signatures found" in after.stderr
        assert signature_problem(registry, "jax", changed, ours.private.public_key()) == (
            f"not signed: no {signature_tag(changed)}")
        unsigned = cli("check-host", "--key", str(tmp_path / "ours" / PUBLIC_FILE), reference)
        assert unsigned.returncode == 1
        assert f"not signed: no {signature_tag(changed)}" in unsigned.stderr
