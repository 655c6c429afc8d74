"""verify: every planned tag exists and points at the recorded digest."""

from __future__ import annotations

import pytest

from ngc_builder.manifest.load import load_release
from ngc_builder.plan.dag import plan_release
from ngc_builder.publish import verify
from ngc_builder.publish.sbom import sbom_tag
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE
from tests.unit.fake_engine import DIGEST, OTHER, TableRegistry, published

pytestmark = pytest.mark.unit


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
