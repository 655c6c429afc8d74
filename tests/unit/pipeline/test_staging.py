"""`release --no-promote` stages each pushed candidate by its key and moves no release tag; a
later run on another host (a GPU job) finds it by key, pulls it instead of building it, gates it
again and promotes that very digest."""

from __future__ import annotations

import pytest

from tests.unit.fake_engine import ALL, TAG, Setup

pytestmark = pytest.mark.unit


def another_host(setup: Setup, gpu_mode: str = "none") -> None:
    """The same registry seen from a fresh runner: no local image, no record."""
    setup.engine.images.clear()
    setup.engine.tags.clear()
    setup.engine.calls.clear()
    setup.record = None
    setup.promote, setup.gpu_mode = True, gpu_mode


def test_no_promote_stages_every_candidate_and_moves_no_release_tag(setup: Setup) -> None:
    setup.promote = False
    record = setup.go()
    for name in ALL:
        image, key = record.images[name], setup.keys[name]
        assert (image.validation.verdict, image.push.status) == ("pass", "ok"), name
        assert image.push.staged == key.staged_tag and image.push.promoted == []
        assert setup.engine.registry[(name, key.staged_tag)] == image.push.digest
        assert (name, TAG) not in setup.engine.registry
        assert (name, key.tag) not in setup.engine.registry  # a later run must not skip it


def test_a_later_run_elsewhere_pulls_the_staged_candidates_and_promotes_them(
        setup: Setup) -> None:
    setup.promote = False
    staged = setup.go()
    another_host(setup)
    record = setup.go()
    assert setup.engine.built() == []  # nothing rebuilt: every candidate pulled by digest
    for name in ALL:
        image, digest = record.images[name], staged.images[name].push.digest
        assert ("pull", f"localhost:5000/{name}@{digest}") in setup.engine.calls, name
        assert image.validation.verdict == "pass" and not image.validation.reused
        assert setup.engine.registry[(name, TAG)] == digest == image.push.digest
        assert image.push.promoted == [TAG, setup.keys[name].tag]
    assert setup.engine.calls_of("push") == []  # promoted through the registry API


def test_a_failed_gate_on_the_later_run_leaves_the_candidate_unpromoted(setup: Setup) -> None:
    setup.promote = False
    setup.go()
    another_host(setup, gpu_mode="required")
    setup.engine.fail_validation = {"jax"}
    record = setup.go()
    assert record.images["jax"].validation.gpu_mode == "required"
    assert record.images["jax"].push.status == "blocked"
    assert ("jax", TAG) not in setup.engine.registry
    assert setup.engine.registry[("pytorch", TAG)] == record.images["pytorch"].push.digest


def test_a_gpu_host_regates_a_published_image_without_rebuilding_it(setup: Setup) -> None:
    published = setup.go()
    another_host(setup, gpu_mode="required")
    record = setup.go()
    assert setup.engine.built() == []
    jax = record.images["jax"]
    assert (jax.validation.gpu_mode, jax.validation.verdict) == ("required", "pass")
    assert jax.push.digest == published.images["jax"].push.digest
    assert setup.engine.registry[("jax", TAG)] == jax.push.digest
