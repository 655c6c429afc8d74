"""tidy removes only the tags its run made: a build the engine's cache answered has the ID an
earlier image has, and another tag on that ID (a person's, another run's) keeps the image."""

from __future__ import annotations

from typing import Any, cast

import pytest

from ngc_builder.pipeline import tidy
from ngc_builder.services.engine import Engine
from tests.unit.fake_engine import FakeClient, FakeEngine, sha_of

pytestmark = pytest.mark.unit
OURS = tidy.OwnTags(frozenset({"ngc-local/jax:26.11-py3-abc"}), "localhost:5000/ns/jax")


def engine_with(*tags: str) -> tuple[FakeEngine, Engine, str]:
    engine = FakeEngine()
    image_id = sha_of("jax")
    engine.images[image_id] = {"name": "jax", "labels": {}, "Size": 7}
    for tag in tags:
        engine.tags[tag] = image_id
    return engine, cast(Any, FakeClient(engine)), image_id


def test_an_image_only_this_run_tagged_leaves_the_engine() -> None:
    engine, client, image_id = engine_with("ngc-local/jax:26.11-py3-abc",
                                           "localhost:5000/ns/jax:26.11-py3-rc1")
    tidy.drop(client, image_id, OURS)
    assert image_id not in engine.images and not engine.tags


def test_another_tag_on_the_same_id_keeps_the_image_and_its_tag() -> None:
    engine, client, image_id = engine_with("ngc-local/jax:26.11-py3-abc",
                                           "ngc-local/jax:pulled-0123456789ab",
                                           "someone/own:latest",
                                           "localhost:5000/ns/jaxlib:1")  # not ns/jax's
    assert tidy.drop(client, image_id, OURS) == 0
    assert image_id in engine.images
    assert set(engine.tags) == {"ngc-local/jax:pulled-0123456789ab", "someone/own:latest",
                                "localhost:5000/ns/jaxlib:1"}


def test_the_builders_own_image_goes_with_it_unless_someone_tagged_it() -> None:
    """The image as built (untagged, with its parent chain) holds the same layers as the one
    whose config was written again: dropped by the ID its build recorded, not found by label.
    One tagged by someone stays, and so does an image the engine will not remove."""
    engine, client, image_id = engine_with("ngc-local/jax:26.11-py3-abc")
    as_built = sha_of("as built")
    engine.images[as_built] = {"name": "jax", "labels": {}, "built": True}
    tidy.drop(client, image_id, OURS, as_built)
    assert image_id not in engine.images and as_built not in engine.images
    engine, client, image_id = engine_with("ngc-local/jax:26.11-py3-abc")
    engine.images[as_built] = {"name": "jax", "labels": {}, "built": True}
    engine.tags["someone/jax:mine"] = as_built
    tidy.drop(client, image_id, OURS, as_built)
    assert image_id not in engine.images and as_built in engine.images
    assert tidy.drop(client, image_id, OURS, sha_of("never there")) == 0
