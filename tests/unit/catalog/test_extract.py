"""The catalog's data from a small archive and release record: states, full digests, tags,
components, validation as recorded (a skip stays a skip), package diff, failure evidence."""

from __future__ import annotations

from pathlib import Path

import pytest

from ngc_builder.catalog.extract import build_catalog
from ngc_builder.catalog.model import EXPECTED_FAILURE, PUBLISHED, Catalog, Image
from ngc_builder.catalog.render import pages
from ngc_builder.catalog.source import load_sources
from ngc_builder.records.record import PlatformRecord, load_record, save_record
from tests.unit.catalog.records import GPU, HOSTILE, KEY, PYTORCH, write_all, write_archive

pytestmark = pytest.mark.unit


def catalog_of(root: Path, record: Path | None, release: str = "26.11") -> Catalog:
    return build_catalog(load_sources(root / "archive", release, record, record is not None))


def by_name(catalog: Catalog, name: str) -> Image:
    return next(image for image in catalog.images if image.name == name)


def test_every_image_published_or_not_in_archive_then_manifest_order(tmp_path: Path) -> None:
    fixture = write_all(tmp_path)
    catalog = catalog_of(tmp_path, fixture.record)
    assert [(i.name, i.state) for i in catalog.images] == [
        ("base", PUBLISHED), ("pytorch", PUBLISHED), ("tensorrt", EXPECTED_FAILURE)]
    assert catalog.previous == "25.10"
    assert catalog.options("gpu_targets") == ("8.0", "9.0")


def test_pull_by_full_digest_with_its_tags_and_components(tmp_path: Path) -> None:
    fixture = write_all(tmp_path)
    pytorch = by_name(catalog_of(tmp_path, fixture.record), "pytorch")
    assert pytorch.pull == f"docker pull registry.example:5000/ngc/pytorch@{PYTORCH}"
    assert pytorch.digest is not None and len(pytorch.digest) == len("sha256:") + 64
    assert pytorch.tags == ("26.11-py3", f"key-{KEY}")
    components = {c.name: c.version for c in pytorch.components}
    assert components["pytorch"] == "2.15.0" and components["CUDA"] == "13.2"
    assert components["cuDNN"] == "9.26.0.51" and components["minimum driver"] == "580"
    assert components["NVIDIA add-ons"] == "nvidia-cudnn-frontend==1.28.0, nvtx==0.2.17"
    assert pytorch.gpu_targets == ("8.0", "9.0") and pytorch.size_bytes == 6_197_624_639


def test_validation_per_tier_as_recorded_with_the_gpu_it_ran_on(tmp_path: Path) -> None:
    fixture = write_all(tmp_path)
    validation = by_name(catalog_of(tmp_path, fixture.record), "pytorch").validation
    assert validation.missing is None and validation.verdict == "pass"
    tiers = {tier.tier: tier for tier in validation.tiers}
    assert [c.id for c in tiers["T1"].checks] == ["gpu.driver"]
    assert tiers["T1"].checks[0].gpu == GPU
    bench = tiers["T3"].checks[0]
    assert (tiers["T3"].verdict, bench.status, bench.message) == ("skip: no GPU", "skip",
                                                                   "no GPU")
    assert bench.gpu == "not run (skipped)"
    assert HOSTILE in tiers["T0"].checks[0].evidence  # kept as recorded; escaped when shown


def test_without_a_record_nothing_is_claimed(tmp_path: Path) -> None:
    write_archive(tmp_path)
    catalog = catalog_of(tmp_path, None)
    pytorch, tensorrt = by_name(catalog, "pytorch"), by_name(catalog, "tensorrt")
    assert pytorch.validation.missing and not pytorch.validation.tiers
    assert pytorch.validation.verdict is None and pytorch.size_bytes is None
    assert tensorrt.state == EXPECTED_FAILURE and tensorrt.failure is not None
    assert tensorrt.failure.reason and tensorrt.failure.missing and not tensorrt.failure.step
    assert tensorrt.cuda == "13.2" and tensorrt.os == "debian-trixie"  # from the manifest


def test_a_record_of_another_run_is_not_this_images_validation(tmp_path: Path) -> None:
    fixture = write_all(tmp_path)
    record = load_record(fixture.record)
    assert record is not None
    record.images["pytorch"].push.digest = "sha256:" + "99" * 32
    save_record(record, fixture.record)
    pytorch = by_name(catalog_of(tmp_path, fixture.record), "pytorch")
    assert pytorch.validation.missing and "another run" in pytorch.validation.missing
    assert pytorch.digest == PYTORCH


def test_expected_failure_names_its_step_error_and_log(tmp_path: Path) -> None:
    fixture = write_all(tmp_path)
    tensorrt = by_name(catalog_of(tmp_path, fixture.record), "tensorrt")
    assert tensorrt.digest is None and tensorrt.pull is None and tensorrt.tags == ()
    failure = tensorrt.failure
    assert failure is not None and failure.step == "build"
    assert failure.reason == ("the wheel downloads libnvinfer from an index these machines "
                              "cannot reach")
    assert failure.error is not None and failure.error.startswith("pip: ERROR")
    assert any("No matching distribution" in line for line in failure.log)
    assert not any("pypi.nvidia.example" in line for line in failure.log)  # hosts redacted
    assert tensorrt.validation.missing == "Not validated: blocked (build failed)."


def test_packages_and_their_diff_against_the_previous_release(tmp_path: Path) -> None:
    fixture = write_all(tmp_path)
    catalog = catalog_of(tmp_path, fixture.record)
    pytorch = by_name(catalog, "pytorch")
    assert pytorch.packages is not None
    assert [p.name for p in pytorch.packages.pip] == ["numpy", "onnx", "torch"]
    changes = {(c.kind, c.name): (c.before, c.after) for c in pytorch.diff.changes}
    assert changes == {("pip", "onnx"): (None, "1.23.2"), ("pip", "torch"): ("2.14.1", "2.15.0"),
                       ("pip", "typing_extensions"): ("4.15.0", None)}
    base = by_name(catalog, "base")
    assert base.diff.previous == "25.10" and "New in this release" in base.diff.note


def test_the_oldest_release_says_there_is_no_previous_one(tmp_path: Path) -> None:
    fixture = write_all(tmp_path, previous=False)
    catalog = catalog_of(tmp_path, fixture.record)
    assert catalog.previous is None
    for image in catalog.images:
        assert image.diff.previous is None and not image.diff.changes
        assert image.diff.note.startswith("No previous release")


def test_an_expected_failure_that_failed_validation_names_the_failed_checks(
        tmp_path: Path) -> None:
    fixture = write_all(tmp_path)
    record = load_record(fixture.record)
    assert record is not None
    tensorrt = record.images["tensorrt"]
    tensorrt.build.status = "ok"
    tensorrt.validation.status, tensorrt.validation.error = "failed", None
    tensorrt.validation.failed_checks = ["cuda.archs"]
    save_record(record, fixture.record)
    failure = by_name(catalog_of(tmp_path, fixture.record), "tensorrt").failure
    assert failure is not None and failure.step == "validation"
    assert failure.error == "failed checks: cuda.archs" and failure.log == ()


def test_an_image_adopted_from_the_registry_says_where_its_checks_are(tmp_path: Path) -> None:
    """A run that adopted the published image has its attested tiers, not its checks: the
    page says so instead of naming a report `(None)`."""
    fixture = write_all(tmp_path)
    record = load_record(fixture.record)
    assert record is not None
    validation = record.images["pytorch"].validation
    record.images["pytorch"].validation = validation.model_copy(
        update={"report": None, "gpu_mode": "(published)", "summary": {}})
    save_record(record, fixture.record)
    shown = by_name(catalog_of(tmp_path, fixture.record), "pytorch").validation
    assert shown.note is not None and "(None)" not in shown.note
    assert "adopted the image from the registry" in shown.note
    assert [tier.verdict for tier in shown.tiers] == ["pass", "pass", "pass", "skip: no GPU"]


def test_platforms_are_what_the_run_shipped_and_the_index_filters_on_them(
        tmp_path: Path) -> None:
    fixture = write_all(tmp_path)
    record = load_record(fixture.record)
    assert record is not None
    shipped = PlatformRecord(digest="sha256:" + "c" * 64)
    record.images["pytorch"].platforms["linux/arm64"] = shipped
    record.images["tensorrt"].platforms["linux/arm64"] = PlatformRecord(left_out="build: failed")
    save_record(record, fixture.record)
    catalog = catalog_of(tmp_path, fixture.record)
    assert by_name(catalog, "pytorch").platforms == ("linux/amd64", "linux/arm64")
    assert by_name(catalog, "tensorrt").platforms == ("linux/amd64",)  # left out: not shipped
    assert catalog.options("platforms") == ("linux/amd64", "linux/arm64")
    page = pages(catalog)
    assert 'data-platform="linux/amd64 linux/arm64"' in page["index.html"]
    assert "docker pull --platform linux/arm64" in page["images/pytorch.html"]
    assert "--platform" not in page["images/tensorrt.html"]
    # Without a record, the archived manifest's list, where only platforms we build count.
    unrecorded = by_name(catalog_of(tmp_path, None), "tensorrt")
    assert unrecorded.platforms == ("linux/amd64", "linux/arm64")
