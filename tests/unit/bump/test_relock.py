"""Which image a stale lock field names, when the bump seeds the next month's lock: a field
below the image (`images.jax.error`, since a lock error on an image expected to work became a
problem of its own) must still re-lock that image."""

from __future__ import annotations

import pytest

from ngc_builder.bump.relock import _image_of

pytestmark = pytest.mark.unit
NAMES = ["jax", "jax.cpu", "pytorch"]


@pytest.mark.parametrize(("field", "image"), [
    ("images.jax", "jax"), ("images.jax.error", "jax"), ("images.jax.cpu", "jax.cpu"),
    ("images.jax.cpu.error", "jax.cpu"), ("images.pytorch.pip.3.sha256", "pytorch")])
def test_a_field_names_its_image_whatever_follows(field: str, image: str) -> None:
    assert _image_of(field, NAMES) == image
