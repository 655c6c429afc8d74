"""The notes list each image's SquashFS per platform, and how a node starts from one."""

from __future__ import annotations

import pytest

from ngc_builder.records.record import ImageRecord, ReleaseRecord, SquashfsRecord
from ngc_builder.records.squashfs_notes import squashfs_lines

pytestmark = pytest.mark.unit
DIGEST, ARM = "sha256:" + "aa" * 32, "sha256:" + "bb" * 32


def record_with(*made: SquashfsRecord) -> ReleaseRecord:
    record = ReleaseRecord(release="26.12", registry="localhost:5000", manifest="26.12.yaml")
    for name, squashfs in (("base", ()), ("pytorch", made)):
        image = ImageRecord(name=name, kind="framework")
        image.push.status, image.push.digest = "ok", DIGEST
        image.push.squashfs = list(squashfs)
        record.images[name] = image
    return record


def test_each_platforms_squashfs_is_listed_with_how_to_start_it() -> None:
    lines = squashfs_lines(record_with(
        SquashfsRecord(platform="linux/amd64", image=DIGEST, tag="sha256-aa.sqfs",
                       size=2_610_000_000),
        SquashfsRecord(platform="linux/arm64", image=ARM, tag="sha256-bb.sqfs",
                       size=2_500_000_000)))
    assert lines[0] == "## SquashFS"
    assert lines[2] == ("- pytorch: linux/amd64 `localhost:5000/pytorch:sha256-aa.sqfs` "
                        "(2.61 GB), linux/arm64 `localhost:5000/pytorch:sha256-bb.sqfs` (2.50 GB)")
    assert any("ngc-builder squashfs localhost:5000/pytorch:26.12-py3 --key 26.12.cosign.pub"
               in line for line in lines)


def test_a_release_without_any_has_no_section() -> None:
    assert squashfs_lines(record_with()) == []
