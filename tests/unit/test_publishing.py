"""verify, plan decisions, package diffs, the size gate, the archive and release notes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ngc_builder.build import packages, sizegate
from ngc_builder.manifest.load import load_release
from ngc_builder.manifest.sizes import parse_size
from ngc_builder.plan.dag import plan_release
from ngc_builder.plan.decisions import decide
from ngc_builder.publish import verify
from ngc_builder.records import archive, notes
from ngc_builder.records.record import ImageRecord, ReleaseRecord
from ngc_builder.render.contexts import render_release
from ngc_builder.render.keys import release_keys
from ngc_builder.services.registry import Manifest
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE
from tests.unit.fake_engine import TableRegistry

pytestmark = pytest.mark.unit
DIGEST = "sha256:" + "aa" * 32
OTHER = "sha256:" + "bb" * 32


def published(names: list[str]) -> ReleaseRecord:
    record = ReleaseRecord(release="26.11", registry="localhost:5000", manifest="26.11.yaml")
    for name in names:
        image = ImageRecord(name=name, kind="framework")
        image.push.status, image.push.digest = "ok", DIGEST
        record.images[name] = image
    return record


def test_verify_reports_missing_and_moved_tags(write_release: WriteRelease) -> None:
    held = {"base": DIGEST, "cuda-cu13": OTHER, "pytorch": DIGEST}
    registry = TableRegistry({(name, "26.11-py3"): digest for name, digest in held.items()})
    plan = plan_release(load_release(write_release(GOOD_RELEASE)), registry)
    checks = {c.image: c for c in verify.verify_tags(plan, published(
        ["base", "cuda-cu13", "pytorch", "jax"]), [])}
    assert checks["base"].problem is None and checks["pytorch"].problem is None
    assert checks["cuda-cu13"].problem == "tag points at another digest than the record's"
    assert checks["jax"].problem == "tag missing from the registry"
    unpublished = {c.image: c for c in verify.verify_tags(plan, published(["base"]), [])}
    assert "no published digest" in str(unpublished["pytorch"].problem)


def test_verify_checks_aliases_too(write_release: WriteRelease) -> None:
    names = ["base", "cuda-cu13", "pytorch", "jax"]
    registry = TableRegistry({(name, "26.11-py3"): DIGEST for name in names})
    plan = plan_release(load_release(write_release(GOOD_RELEASE)), registry)
    checks = verify.verify_tags(plan, published([i.name for i in plan.images]), ["latest"])
    assert {(c.tag, c.problem) for c in checks if c.problem} == {
        ("latest", "tag missing from the registry")}


def test_plan_says_skip_build_and_why(write_release: WriteRelease) -> None:
    loaded = load_release(write_release(GOOD_RELEASE))
    registry = TableRegistry()
    plan = plan_release(loaded, registry)
    rendered = {i.spec.name: i for i in render_release(loaded, plan, None)}
    keys = release_keys(loaded, plan, rendered)
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
    rendered = {i.spec.name: i for i in render_release(loaded, plan, None)}
    keys = release_keys(loaded, plan, rendered)
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
        f"release tag at {OTHER[:19]}: moving it needs --force")


def test_package_diff() -> None:
    change = packages.diff({"jax": "0.11.0", "six": "1.16", "numpy": "2.3"},
                           {"jax": "0.12.0", "numpy": "2.3", "optree": "0.17"})
    assert change.added == {"optree": "0.17"} and change.removed == {"six": "1.16"}
    assert change.changed == {"jax": ("0.11.0", "0.12.0")}
    assert packages.diff({"a": "1"}, {"a": "1"}).empty


def test_size_gate_maths() -> None:
    assert parse_size("6.3 GB") == 6_300_000_000
    assert parse_size("900MiB") == 900 * 2**20
    for bad in ("6.3", "lots GB", "5 TB"):
        with pytest.raises(ValueError):
            parse_size(bad)
    assert not sizegate.over_limit(120, 100) and sizegate.over_limit(121, 100)
    image = {"/opt/venv/lib/python3.13/site-packages/torch/lib/a.so": 900,
             "/opt/venv/lib/python3.13/site-packages/torch/b.py": 100,
             "/usr/lib/x.so": 50, "/etc/same": 10}
    parent = {"/usr/lib/x.so": 20, "/etc/same": 10}
    assert sizegate.largest_added(image, parent) == [
        ("/opt/venv/lib/python3.13/site-packages/torch", 1000), ("/usr/lib/x.so", 30)]


def test_a_size_baseline_must_parse(write_release: WriteRelease) -> None:
    from ngc_builder.errors import InputError

    bad = GOOD_RELEASE.replace('version: "0.12.0"', 'version: "0.12.0"\n    size_baseline: "big"')
    with pytest.raises(InputError) as caught:
        load_release(write_release(bad))
    assert "size_baseline" in str(caught.value.problems[0].field)


def write_packages(path: Path, pip: dict[str, str]) -> str:
    path.write_text(json.dumps({"pip": pip, "dpkg": {"libc6": "2.41-12"}}))
    return str(path)


def test_notes_diff_against_the_archived_previous_release(
    write_release: WriteRelease, tmp_path: Path
) -> None:
    manifest = write_release(GOOD_RELEASE)
    loaded = load_release(manifest)
    old = published(["jax"])
    old.release = "26.10"
    old.images["jax"].build.packages = write_packages(tmp_path / "old.json", {"jax": "0.11.0"})
    archive.write(tmp_path / "archive", manifest, old)
    assert archive.previous_release(tmp_path / "archive", "26.11") == "26.10"
    new = published(["jax", "pytorch"])
    new.images["jax"].build.packages = write_packages(tmp_path / "new.json", {"jax": "0.12.0"})
    new.images["pytorch"].build.packages = write_packages(tmp_path / "t.json", {"torch": "2.15"})
    layers = {"jax": {"sha256:l1": 100, "sha256:l2": 50}, "pytorch": {"sha256:l1": 100,
                                                                      "sha256:l3": 300}}
    registry = TableRegistry(manifests={f"{name}@{DIGEST}": Manifest(
        json.dumps({"layers": [{"digest": d, "size": s} for d, s in blobs.items()]}).encode(),
        "application/json", DIGEST) for name, blobs in layers.items()})
    text = notes.release_notes(loaded, new, tmp_path / "archive", registry)
    assert "## Changes since 26.10" in text
    assert "- **jax** (pip): changed jax 0.11.0 -> 0.12.0" in text
    assert "- **pytorch**: new in this release" in text
    assert "registry stores 0.00 GB" in text and "0.82 x" in text  # 450 of 550 bytes
    assert "jax==0.12.0" in text
