"""A patch release made from Debian's real security suite (docs/security.md): the CI release
without its broken row (26.11: trixie, the mini stack, CPU JAX) published, then `security
--patch` writes 26.11.1 with only the fixed .debs relocked, and `release` builds, validates,
signs and publishes it.
As users see it: `26.11.1-py3` is a new image whose dpkg holds the fixed versions, signed (the
real cosign verifies it), `26.11-py3` did not move, and the notes name the CVEs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ngc_builder.publish.key_files import PUBLIC_FILE
from ngc_builder.services.environment import state_dir
from ngc_builder.services.registry import parse_registry
from tests.integration.conftest import cli
from tests.integration.test_publishing import new_project
from tests.integration.test_signing import cosign_verify

pytestmark = [pytest.mark.integration, pytest.mark.extended]
IMAGES = ("base", "cuda-mini", "jax")


def released(manifest: Path, registry: str, build_dir: Path) -> dict[str, Any]:
    fetched = cli("fetch", str(manifest))  # the patch's .debs come from the security mirror
    assert fetched.returncode == 0, fetched.stderr[-2000:]
    done = cli("release", str(manifest), "--registry", registry, "--build-dir", str(build_dir),
               "--os-source", "bootstrap", "--json", "--quiet")
    assert done.returncode == 0, done.stderr[-3000:]
    record: dict[str, Any] = json.loads(done.stdout)
    return record


@pytest.fixture(scope="module")
def patched(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("patch")
    (root / "project").mkdir()
    project = new_project(root / "project")  # the CI release without its broken row
    manifest, registry = project.manifest, project.registry
    monthly = released(manifest, registry, root / "build")
    scan = cli("security", str(manifest), "--patch", "--json")
    assert scan.returncode == 0, scan.stderr[-3000:]
    patch = manifest.with_name("26.11.1.yaml")
    record = released(patch, registry, root / "build")
    notes = root / "notes.md"
    report = cli("report", str(patch), "--build-dir", str(root / "build"), "--out",
                 str(root / "matrix.md"), "--notes", str(notes), "--archive", str(root / "archive"))
    assert report.returncode == 0, report.stderr[-2000:]
    return {"monthly": monthly, "patch": record, "registry": registry, "notes": notes.read_text(),
            "fixes": json.loads(scan.stdout)["updates"], "manifest": patch,
            "build_dir": root / "build"}


def digest_of(record: dict[str, Any], name: str) -> str:
    digest: str = record["images"][name]["push"]["digest"]
    return digest


def test_the_patch_is_published_under_its_own_tags_and_the_monthly_tag_stays(
        patched: dict[str, Any]) -> None:
    registry = parse_registry(patched["registry"])
    assert patched["fixes"], "the security suite has fixes for the CI lock"
    for name in IMAGES:
        assert registry.manifest_digest(name, "26.11-py3") == digest_of(patched["monthly"], name)
        assert registry.manifest_digest(name, "26.11.1-py3") == digest_of(patched["patch"], name)
    # The CI lock's OS has fixes (libzstd1, zlib1g, ...): every image stands on it.
    assert digest_of(patched["patch"], "jax") != digest_of(patched["monthly"], "jax")
    tags = cli("verify", str(patched["manifest"]), "--registry", patched["registry"],
               "--build-dir", str(patched["build_dir"]))
    assert tags.returncode == 0, tags.stdout[-2000:] + tags.stderr[-2000:]
    verified = cosign_verify(f"{patched['registry']}/jax:26.11.1-py3",
                             state_dir() / "signing" / PUBLIC_FILE)
    assert verified.returncode == 0, verified.stderr


def test_the_patched_image_holds_the_fixed_versions(patched: dict[str, Any]) -> None:
    reference = f"{patched['registry']}/jax:26.11.1-py3"
    subprocess.run(["docker", "pull", "-q", reference], check=True, capture_output=True)
    held = subprocess.run(["docker", "run", "--rm", "--entrypoint", "dpkg-query", reference,
                           "-W", "-f", "${Package} ${Version}\\n"], capture_output=True,
                          text=True, check=True).stdout.splitlines()
    installed = dict(line.split(" ", 1) for line in held)
    fixed = {(u["name"], u["fixed"]) for u in patched["fixes"] if "debian-trixie" in u["in"]}
    assert fixed and all(installed.get(name) == version for name, version in fixed), fixed


def test_the_notes_name_the_cves_and_where_the_monthly_tag_points(
        patched: dict[str, Any]) -> None:
    notes = patched["notes"]
    assert "## Security fixes" in notes
    assert "`26.11-py3` stays on the 26.11 images; `26.11.1-py3` names the patched ones" in notes
    cves = {cve for update in patched["fixes"] for cve in update["cves"]}
    assert cves and all(cve in notes for cve in cves)
