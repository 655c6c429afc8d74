"""Release notes against the archived previous release."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ngc_builder.manifest.load import load_release
from ngc_builder.records import archive, notes
from ngc_builder.services.registry import Manifest
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE
from tests.unit.fake_engine import DIGEST, TableRegistry, published

pytestmark = pytest.mark.unit


def write_packages(path: Path, pip: dict[str, str]) -> str:
    """A package manifest where runs keep them: reports/ beside the record (`release.json`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"pip": pip, "dpkg": {"libc6": "2.41-12"}}))
    return str(path)


def test_notes_diff_against_the_archived_previous_release(
    write_release: WriteRelease, tmp_path: Path
) -> None:
    manifest = write_release(GOOD_RELEASE)
    loaded = load_release(manifest)
    old = published(["jax"])
    old.release = "26.10"
    old.images["jax"].build.packages = write_packages(tmp_path / "old" / "reports" / "j.json",
                                                       {"jax": "0.11.0"})
    archive.write(tmp_path / "archive", manifest, old, tmp_path / "old" / "release.json")
    assert archive.previous_release(tmp_path / "archive", "26.11") == "26.10"
    new = published(["jax", "pytorch"])
    new.images["jax"].build.packages = write_packages(tmp_path / "reports" / "n.json",
                                                       {"jax": "0.12.0"})
    new.images["pytorch"].build.packages = write_packages(tmp_path / "reports" / "t.json",
                                                           {"torch": "2.15"})
    layers = {"jax": {"sha256:l1": 100, "sha256:l2": 50}, "pytorch": {"sha256:l1": 100,
                                                                      "sha256:l3": 300}}
    registry = TableRegistry(manifests={f"{name}@{DIGEST}": Manifest(
        json.dumps({"layers": [{"digest": d, "size": s} for d, s in blobs.items()]}).encode(),
        "application/json", DIGEST) for name, blobs in layers.items()})
    text = notes.release_notes(loaded, new, tmp_path / "release.json", tmp_path / "archive",
                               registry)
    assert "## Changes since 26.10" in text
    assert "- **jax** (pip): changed jax 0.11.0 -> 0.12.0" in text
    assert "- **pytorch**: new in this release" in text
    assert "registry stores 0.00 GB" in text and "0.82 x" in text  # 450 of 550 bytes
    assert "jax==0.12.0" in text
    for name in ("jax", "pytorch"):  # whole digests, pullable as written
        assert f"- {name}: `docker pull {new.registry}/{name}@{DIGEST}`" in text
    assert len(DIGEST) == len("sha256:") + 64
    assert "No image of this release was signed." in text
    new.images["jax"].push.signature = f"sha256-{DIGEST[7:]}.sig"
    signed = notes.release_notes(loaded, new, tmp_path / "release.json", tmp_path / "archive",
                                 registry)
    assert "with the key in `26.11.cosign.pub`: jax." in signed  # pytorch was not signed
    assert "- Attested (SLSA provenance, `sha256-<digest>.att`): none." in signed
    assert (f"`cosign verify --key 26.11.cosign.pub {new.registry}/jax@{DIGEST}`") in signed
    new.images["jax"].push.attestation = f"sha256-{DIGEST[7:]}.att"
    attested = notes.release_notes(loaded, new, tmp_path / "release.json",
                                   tmp_path / "archive", registry)
    assert "`sha256-<digest>.att`): jax." in attested
    assert (f"`cosign verify-attestation --key 26.11.cosign.pub --type slsaprovenance1 "
            f"{new.registry}/jax@{DIGEST}`") in attested


def test_the_package_diff_is_the_lock_diff(write_release: WriteRelease, tmp_path: Path) -> None:
    older = write_release(GOOD_RELEASE.replace('"0.12.0"', '"0.11.0"').replace(
        'release: "26.11"', 'release: "26.10"'), name="26.10.yaml")
    old = published(["jax"])
    old.release = "26.10"
    archived = archive.write(tmp_path / "archive", older, old, tmp_path / "release.json")
    assert (archived / "manifest.lock.json").read_text() == (
        older.with_name("26.10.lock.json").read_text())
    loaded = load_release(write_release(GOOD_RELEASE))
    text = notes.release_notes(loaded, published(["jax"]), tmp_path / "release.json",
                               tmp_path / "archive", TableRegistry(manifests={}))
    assert "- **jax** (lock): jax 0.11.0 -> 0.12.0, jaxlib 0.11.0 -> 0.12.0" in text
    assert "pytorch" not in text.split("## Changes since 26.10")[1].split("Built images")[0]
