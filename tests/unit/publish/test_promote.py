"""Promotion where the registry refuses our API credentials but takes a logged-in engine's
pushes: one image's tag may move by a push of that image, an index's never (the engine would
push the host's image alone, and the tag would silently lose every other platform)."""

from __future__ import annotations

import pytest

from ngc_builder.errors import StepError
from ngc_builder.manifest.load import load_release
from ngc_builder.pipeline.tags import _pushable
from ngc_builder.plan.dag import ImageSpec, plan_release
from ngc_builder.publish.promote import promote
from ngc_builder.records.record import ImageRecord
from ngc_builder.services.registry import Manifest, RegistryAuthError
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE
from tests.unit.fake_engine import DIGEST, FakeClient, FakeEngine, TableRegistry

pytestmark = pytest.mark.unit


class LoginOnly(TableRegistry):
    """Reads answer; every manifest our API client fetches or writes is refused (HTTP 401)."""

    def get_manifest(self, name: str, reference: str) -> Manifest | None:
        raise RegistryAuthError(f"https://{self.address}/v2/{name}/manifests/{reference}: "
                                "HTTP 401")


def _jax(write_release: WriteRelease) -> ImageSpec:
    return plan_release(load_release(write_release(GOOD_RELEASE, lock=False))).get("jax")


def test_an_index_is_never_tagged_by_pushing_the_host_s_image(
        write_release: WriteRelease) -> None:
    engine = FakeEngine()
    with pytest.raises(StepError) as caught:
        promote(FakeClient(engine), LoginOnly(), _jax(write_release), DIGEST, "key-abc", [],
                False, None)
    assert caught.value.step == "promote"
    assert "HTTP 401" in caught.value.message
    assert "can only be tagged through the registry API (an index of platforms" \
        in caught.value.message
    assert not [call for call in engine.calls if call[0] in ("push", "tag")]


def test_the_engine_may_move_a_one_image_tag_but_not_an_index_s() -> None:
    record = ImageRecord(name="jax", kind="framework")
    record.build.image_id = "sha256:" + "cc" * 32
    assert _pushable(record) == record.build.image_id
    record.push.host_digest = DIGEST  # the candidate is an index over platforms
    assert _pushable(record) is None
