"""verify: every planned tag exists and points at the recorded digest."""

from __future__ import annotations

import pytest

from ngc_builder.manifest.load import load_release
from ngc_builder.plan.dag import ReleasePlan, plan_release
from ngc_builder.publish import verify
from ngc_builder.publish.oci_index import PlatformImage, index_of
from ngc_builder.publish.sbom import sbom_tag
from ngc_builder.records.record import PlatformRecord, ReleaseRecord
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE
from tests.unit.fake_engine import DIGEST, OTHER, TableRegistry, published
from tests.unit.publish.test_oci_index import held

pytestmark = pytest.mark.unit
ARM = "linux/arm64"


def test_verify_reports_missing_and_moved_tags(write_release: WriteRelease) -> None:
    held = {"base": DIGEST, "cuda-cu13": OTHER, "pytorch": DIGEST}
    registry = TableRegistry({(name, "26.11-py3"): digest for name, digest in held.items()})
    plan = plan_release(load_release(write_release(GOOD_RELEASE)), registry)
    checks = {c.image: c for c in verify.verify_tags(plan, published(
        ["base", "cuda-cu13", "pytorch", "jax"]), []) if c.tag == "26.11-py3"}
    assert checks["base"].problem is None and checks["pytorch"].problem is None
    assert checks["cuda-cu13"].problem == "tag points at another digest than the record's"
    assert checks["jax"].problem == "tag missing from the registry"
    unpublished = {c.image: c for c in verify.verify_tags(plan, published(["base"]), [])
                   if c.tag == "26.11-py3"}
    assert "no published digest" in str(unpublished["pytorch"].problem)


def test_verify_checks_aliases_too(write_release: WriteRelease) -> None:
    names = ["base", "cuda-cu13", "pytorch", "jax"]
    registry = TableRegistry({(name, "26.11-py3"): DIGEST for name in names})
    plan = plan_release(load_release(write_release(GOOD_RELEASE)), registry)
    checks = verify.verify_tags(plan, published([i.name for i in plan.images]), ["latest"])
    assert {(c.tag, c.problem) for c in checks if c.problem and c.tag == "latest"} == {
        ("latest", "tag missing from the registry")}


def test_verify_checks_each_published_image_has_its_sbom(write_release: WriteRelease) -> None:
    names = ["base", "cuda-cu13", "pytorch", "jax"]
    registry = TableRegistry({(name, "26.11-py3"): DIGEST for name in names})
    plan = plan_release(load_release(write_release(GOOD_RELEASE)), registry)
    checks = [c for c in verify.verify_tags(plan, published(names), [])
              if c.tag == sbom_tag(DIGEST)]
    assert [c.image for c in checks] == names
    assert all(str(c.problem).startswith("no SBOM") for c in checks)


def _two_platform_jax(write_release: WriteRelease) -> tuple[TableRegistry, ReleasePlan,
                                                                 ReleaseRecord]:
    """jax published as an index over amd64 and arm64, recorded as a release records it."""
    registry = TableRegistry()
    amd64, arm64 = held(registry, "amd64"), held(registry, "arm64")
    index = index_of(registry, "jax", [PlatformImage("linux/amd64", amd64),
                                       PlatformImage(ARM, arm64)])
    registry.manifests[f"jax@{index.digest}"] = index
    registry.tags[("jax", "26.11-py3")] = index.digest
    both = '    version: "0.12.0"\n    platforms: [linux/amd64, linux/arm64]\n'
    text = GOOD_RELEASE.replace('    version: "0.12.0"\n', both)
    plan = plan_release(load_release(write_release(text)), registry)
    record = published(["jax"])
    jax = record.images["jax"]
    jax.push.digest, jax.push.host_digest = index.digest, amd64
    jax.platforms[ARM] = PlatformRecord(digest=arm64)
    return registry, plan, record


def _platform_problems(plan: ReleasePlan, record: ReleaseRecord) -> dict[str, str | None]:
    return {c.tag: c.problem for c in verify.verify_tags(plan, record, [])
            if c.image == "jax" and c.tag.startswith("26.11-py3 ")}


def test_verify_reads_the_index_each_recorded_platform_and_its_sbom(
        write_release: WriteRelease) -> None:
    _, plan, record = _two_platform_jax(write_release)
    assert _platform_problems(plan, record) == {"26.11-py3 linux/amd64": None,
                                                "26.11-py3 linux/arm64": None}
    arm64 = record.images["jax"].platforms[ARM].digest
    sboms = [c for c in verify.verify_tags(plan, record, []) if c.tag == sbom_tag(str(arm64))]
    assert len(sboms) == 1 and str(sboms[0].problem).startswith("no SBOM")
    record.images["jax"].platforms[ARM].digest = OTHER  # a record that says otherwise
    assert _platform_problems(plan, record)["26.11-py3 linux/arm64"] == \
        "the index names another digest than the record's"


def test_verify_names_a_recorded_platform_the_index_lacks(write_release: WriteRelease) -> None:
    registry, plan, record = _two_platform_jax(write_release)
    jax = record.images["jax"]
    amd64_alone = index_of(registry, "jax", [PlatformImage("linux/amd64",
                                                           str(jax.push.host_digest))])
    registry.manifests[f"jax@{amd64_alone.digest}"] = amd64_alone
    registry.tags[("jax", "26.11-py3")] = amd64_alone.digest
    jax.push.digest = amd64_alone.digest
    assert _platform_problems(plan, record)["26.11-py3 linux/arm64"] == \
        "the index lacks this platform"
