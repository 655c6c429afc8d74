"""An image is reused by its content key only when its own build set the key: an image built
FROM ours inherits the key label but not the image."""

from __future__ import annotations

import pytest

from ngc_builder.services.engine import KEY_LABEL, find_built
from tests.unit.fake_engine import FakeClient, FakeEngine

pytestmark = pytest.mark.unit

KEY = "8e786a57216c" * 5


def engine_with(**images: bool) -> FakeClient:
    """Images by ID, each carrying KEY; True marks one with a step of its own on top."""
    engine = FakeEngine()
    for image_id, derived in images.items():
        engine.images[image_id] = {"name": "jax", "derived": derived,
                                   "labels": {KEY_LABEL: KEY, "org.ngc-builder.image": "jax"}}
    return FakeClient(engine)


def test_the_image_built_from_the_key_is_found() -> None:
    found = find_built(engine_with(built=False), KEY)
    assert found is not None and found["Id"] == "built"


def test_an_image_built_from_ours_is_never_taken_for_it() -> None:
    assert find_built(engine_with(derived=True), KEY) is None
    found = find_built(engine_with(derived=True, built=False), KEY)
    assert found is not None and found["Id"] == "built"

