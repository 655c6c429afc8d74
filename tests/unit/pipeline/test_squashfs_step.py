"""Which manifests of a published image get a SquashFS: none unless its row asks; the image's
own, or for an index the host's and each other platform it ships (one left out: none)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ngc_builder.errors import InputError
from ngc_builder.manifest.models import ImageEntry
from ngc_builder.pipeline.squashfs import check_squashfs_tools, squashfs_targets, wants_squashfs
from ngc_builder.plan.dag import ImageSpec
from ngc_builder.records.record import ImageRecord, PlatformRecord

pytestmark = pytest.mark.unit
INDEX, HOST, ARM = ("sha256:" + hex * 32 for hex in ("aa", "bb", "cc"))
BOTH = ("linux/amd64", "linux/arm64")


def spec(squashfs: bool) -> ImageSpec:
    entry = ImageEntry.model_validate({
        "framework": "pytorch", "version": "2.15.0", "squashfs": squashfs,
        "platforms": list(BOTH), "optional_platforms": ["linux/arm64"]})
    return ImageSpec("pytorch", "framework", "cuda-cu13", "26.12", "debian-trixie",
                     entry=entry, platforms=BOTH)


def record(arm_left_out: str | None = None) -> ImageRecord:
    image = ImageRecord(name="pytorch", kind="framework")
    image.build.image_id, image.push.host_digest = "sha256:" + "11" * 32, HOST
    arm = PlatformRecord(digest=ARM, left_out=arm_left_out)
    arm.build.image_id, arm.validation.verdict = "sha256:" + "22" * 32, "pass"
    image.platforms["linux/arm64"] = arm
    return image


def test_only_a_row_that_asks_gets_one() -> None:
    assert wants_squashfs(spec(True)) and not wants_squashfs(spec(False))
    base = ImageSpec("base", "base", None, "26.12", "debian-trixie")
    assert not wants_squashfs(base)


def test_an_index_gets_one_per_platform_from_that_platforms_image() -> None:
    assert squashfs_targets(spec(True), record(), INDEX) == [
        ("linux/amd64", HOST, "sha256:" + "11" * 32),
        ("linux/arm64", ARM, "sha256:" + "22" * 32)]


def test_a_platform_left_out_gets_none_and_one_platform_is_its_own_digest() -> None:
    left = record(arm_left_out="validate linux/arm64: fail")
    assert [t[0] for t in squashfs_targets(spec(True), left, INDEX)] == ["linux/amd64"]
    single = ImageRecord(name="pytorch", kind="framework")
    single.build.image_id = "sha256:" + "11" * 32
    assert squashfs_targets(spec(True), single, INDEX) == [
        ("linux/amd64", INDEX, "sha256:" + "11" * 32)]


def test_a_host_that_cannot_make_one_is_refused_before_anything_is_built(tmp_path: Path) -> None:
    asking, other = spec(True), spec(False)
    assert asking.entry is not None and other.entry is not None
    rows = [other.entry, asking.entry]
    with pytest.raises(InputError) as refused:
        check_squashfs_tools([asking], tmp_path / "26.12.yaml", rows, which=lambda _: None)
    [problem] = refused.value.problems
    assert str(problem) == (f"{tmp_path / '26.12.yaml'}:1: images[1].squashfs: mksquashfs is "
                            "not installed here (squashfs-tools; `make runtime`)")
    check_squashfs_tools([other], tmp_path / "26.12.yaml", rows, which=lambda _: None)
    check_squashfs_tools([asking], tmp_path / "26.12.yaml", rows, which=lambda _: "/usr/bin/x")
