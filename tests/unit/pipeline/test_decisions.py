"""plan's decisions: build / reuse / skip and push / promote, with the reasons."""

from __future__ import annotations

import pytest

from ngc_builder.manifest.load import load_release
from ngc_builder.pipeline.decisions import decide
from ngc_builder.plan.dag import plan_release
from ngc_builder.records.record import ImageRecord
from ngc_builder.render.content_keys import content_keys
from ngc_builder.render.contexts import render_release
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE
from tests.unit.fake_engine import DIGEST, OTHER, TableRegistry, published
from tests.unit.locks import fake_lock

pytestmark = pytest.mark.unit


def test_plan_says_skip_build_and_why(write_release: WriteRelease) -> None:
    loaded = load_release(write_release(GOOD_RELEASE))
    registry = TableRegistry()
    plan = plan_release(loaded, registry)
    rendered = {i.spec.name: i for i in render_release(loaded, plan, fake_lock(loaded, plan))}
    keys = content_keys(loaded, plan, rendered)
    tags = {("base", keys["base"].tag): DIGEST, ("base", "26.11-py3"): DIGEST,
            ("pytorch", "26.11-py3"): OTHER}
    registry.tags.update(tags)
    record = published([])
    record.images["cuda-cu13"] = ImageRecord(name="cuda-cu13", kind="cuda")
    record.images["cuda-cu13"].build.inputs = {**keys["cuda-cu13"].inputs(),
                                               "dockerfile_body": "older"}
    decisions = {d.image: d for d in decide(plan, keys, record, None)}
    assert (decisions["base"].build, decisions["base"].push) == ("skip", "none")
    assert decisions["cuda-cu13"].reasons == ["Dockerfile changed"]
    assert decisions["jax"].reasons[:2] == ["parent cuda-cu13 is being built",
                                            "no earlier build recorded"]
    assert "moving it needs --force" in decisions["pytorch"].reasons[-1]


def test_plan_promotes_what_the_registry_holds_by_key(write_release: WriteRelease) -> None:
    """The key is published: nothing to build; the release tag is set when missing, left when
    there, and moving it from another digest is named as needing --force."""
    loaded = load_release(write_release(GOOD_RELEASE))
    registry = TableRegistry()
    plan = plan_release(loaded, registry)
    rendered = {i.spec.name: i for i in render_release(loaded, plan, fake_lock(loaded, plan))}
    keys = content_keys(loaded, plan, rendered)
    for name in ("base", "cuda-cu13", "pytorch", "jax"):
        registry.tags[(name, keys[name].tag)] = DIGEST
    registry.tags[("base", "26.11-py3")] = DIGEST
    registry.tags[("jax", "26.11-py3")] = OTHER
    decisions = {d.image: d for d in decide(plan, keys, None, None)}
    assert all(d.build == "skip" for d in decisions.values())
    assert (decisions["base"].push, decisions["base"].reasons[-1]) == (
        "none", "release tag already there")
    assert (decisions["pytorch"].push, decisions["pytorch"].reasons[-1]) == (
        "promote", "release tag missing: set it")
    assert decisions["jax"].push == "promote"
    assert decisions["jax"].reasons[-1] == (
        f"release tag at {OTHER}: moving it needs --force")


def test_plan_pulls_a_staged_candidate_instead_of_building_it(write_release: WriteRelease) -> None:
    loaded = load_release(write_release(GOOD_RELEASE))
    registry = TableRegistry()
    plan = plan_release(loaded, registry)
    rendered = {i.spec.name: i for i in render_release(loaded, plan, fake_lock(loaded, plan))}
    keys = content_keys(loaded, plan, rendered)
    registry.tags[("base", keys["base"].tag)] = DIGEST
    registry.tags[("cuda-cu13", keys["cuda-cu13"].staged_tag)] = OTHER
    decisions = {d.image: d for d in decide(plan, keys, None, None)}
    cuda = decisions["cuda-cu13"]
    assert (cuda.build, cuda.push) == ("pull", "promote")
    assert cuda.reasons == [f"registry holds staged-... at {OTHER} (pushed with "
                            "--no-promote): pulled, validated, promoted"]
    assert decisions["jax"].build == "build"
