"""The notes' add-ons section: what each image carries beside its framework, whether its GPU
operations ran, and what it cannot carry with the manifest's reason."""

from __future__ import annotations

import pytest

from ngc_builder.manifest.load import load_release
from ngc_builder.records.addon_notes import addon_lines
from ngc_builder.records.record import ImageRecord, ReleaseRecord, ValidationRecord
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE

pytestmark = pytest.mark.unit
ADDONS = GOOD_RELEASE.replace('version: "0.12.0"\n', 'version: "0.12.0"\n    addons:\n'
                              '      nvtx: "0.2.17"\n      nvidia-cudnn-frontend: "1.28.0"\n'
                              '    unavailable_addons:\n      apex: "not on PyPI"\n')


def _record(gpu_mode: str) -> ReleaseRecord:
    jax = ImageRecord(name="jax", kind="framework",
                      validation=ValidationRecord(status="ok", verdict="pass", gpu_mode=gpu_mode))
    return ReleaseRecord(release="26.11", registry="r", manifest="m", images={"jax": jax})


def test_a_release_without_addons_has_no_section(write_release: WriteRelease) -> None:
    assert addon_lines(load_release(write_release(GOOD_RELEASE, lock=False)),
                       _record("none")) == []


@pytest.mark.parametrize(("gpu_mode", "said"), [("none", "GPU operations skipped: no GPU"),
                                                 ("required", "GPU operations run")])
def test_each_images_addons_and_what_it_cannot_carry(write_release: WriteRelease,
                                                    gpu_mode: str, said: str) -> None:
    lines = addon_lines(load_release(write_release(ADDONS, lock=False)), _record(gpu_mode))
    assert lines[:2] == ["## NVIDIA add-ons", ""]
    assert f"- jax: nvidia-cudnn-frontend 1.28.0, nvtx 0.2.17 (pass; {said})" in lines
    assert "- jax: no apex: not on PyPI" in lines
