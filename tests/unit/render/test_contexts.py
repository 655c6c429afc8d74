"""Rendered Dockerfiles: golden files, byte-identical output, no value reaches a RUN line."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from ngc_builder.lock.models import ReleaseLock, load_lock, lock_path
from ngc_builder.manifest.load import load_release
from ngc_builder.pipeline.prepare import prepare
from ngc_builder.plan.dag import plan_release
from ngc_builder.render.contexts import RenderedImage, render_release
from tests.conftest import REPO, WriteRelease
from tests.unit.conftest import GOOD_RELEASE
from tests.unit.locks import deb

pytestmark = pytest.mark.unit
GOLDEN = Path(__file__).parents[1] / "golden"
# Parent tags carry a digest of the parent's context (runner code included): golden files
# pin the text around it, test_parent_digest_* pin the digest's behaviour.
DIGEST_TAG = re.compile(r"(-py3-|:layer-)[0-9a-f]{12}")


def render(manifest: Path, lock: ReleaseLock | None = None) -> list[RenderedImage]:
    """As `plan` and `release` render (its lock, locked OS bases), or from `lock`."""
    if lock is None:
        return prepare(manifest, None, stack_check=False).rendered
    loaded = load_release(manifest)
    return render_release(loaded, plan_release(loaded), lock)


def test_release_renders_like_the_golden_files() -> None:
    # The repository's own current release with its real lock.
    for image in render(REPO / "releases" / "26.11.yaml"):
        text = DIGEST_TAG.sub(r"\1<digest>", image.dockerfile)
        golden = GOLDEN / "26.11" / f"{image.spec.name}.Dockerfile"
        if os.environ.get("UPDATE_GOLDEN") == "1":
            golden.parent.mkdir(parents=True, exist_ok=True)
            golden.write_text(text, encoding="utf-8")
        assert text == golden.read_text(encoding="utf-8"), f"{image.spec.name} differs"


def test_same_input_gives_byte_identical_output(write_release: WriteRelease,
                                                tmp_path: Path) -> None:
    manifest = write_release(GOOD_RELEASE)
    first, second = tmp_path / "a", tmp_path / "b"
    for image in render(manifest):
        image.write(first)
    for image in render(manifest):
        image.write(second)
    files_a = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    assert files_a == files_b and len(files_a) > 10
    for name in files_a:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


def test_parent_digest_changes_with_parent_context(write_release: WriteRelease) -> None:
    manifest = write_release(GOOD_RELEASE)
    plain = {i.spec.name: i for i in render(manifest)}
    lock = load_lock(lock_path(manifest))
    assert lock is not None
    lock.images["base"] = lock.images["base"].model_copy(
        update={"apt": [deb(p.name, "2.0") for p in lock.images["base"].apt]})
    moved = {i.spec.name: i for i in render(manifest, lock)}
    assert plain["base"].digest() != moved["base"].digest()
    assert plain["cuda-cu13"].dockerfile != moved["cuda-cu13"].dockerfile
    # ...and so on up the DAG: a changed base reaches every framework's FROM line.
    assert plain["jax"].dockerfile != moved["jax"].dockerfile


def test_nothing_of_the_build_host_is_in_a_dockerfile_or_context() -> None:
    """No CA bundle, proxy or cache address: builds reach the cache by the name `ngc-cache`,
    and no ENV of any image names a certificate, a proxy or an index."""
    env_line = re.compile(r"^ENV .*", re.MULTILINE)
    for image in render(REPO / "releases" / "26.11.yaml"):
        settings = " ".join(env_line.findall(image.dockerfile)).upper()
        assert not re.search(r"CERT|CA_BUNDLE|PROXY|INDEX_URL|NGC-CACHE", settings), image.spec.name
        assert not any(b"BEGIN CERTIFICATE" in data or b"PRIVATE KEY" in data
                       for data in image.files.values()), image.spec.name
        hosts = set(re.findall(r"http://([^/:\s]+)", image.dockerfile))
        assert hosts <= {"ngc-cache"}, (image.spec.name, hosts)


def test_installs_are_the_lock_with_hashes(write_release: WriteRelease) -> None:
    manifest = write_release(GOOD_RELEASE)
    lock = load_lock(lock_path(manifest))
    assert lock is not None
    images = {i.spec.name: i for i in render(manifest)}
    jax = images["jax"]
    assert jax.files["requirements.lock"].decode() == "".join(
        f"{p.requirement()}\n" for p in lock.images["jax"].pip)
    assert "--require-hashes" in jax.dockerfile
    assert "python -m ngc_runner.lockcheck" in jax.dockerfile
    pins = [p.pin() for p in lock.images["base"].apt]
    assert all(pin in images["base"].dockerfile for pin in pins)


def test_contexts_carry_pins_runner_and_expectations(write_release: WriteRelease) -> None:
    images = {i.spec.name: i for i in render(write_release(GOOD_RELEASE))}
    assert images["cuda-cu13"].files["stack/requirements.txt"].decode().splitlines()[0] == (
        "cuda-toolkit==13.2.2")
    assert images["jax"].files["requirements.txt"] == b"jax[cuda13]==0.12.0\njaxlib==0.12.0\n"
    assert images["pytorch"].files["requirements.txt"] == b"torch==2.15.0\n"
    assert "ngc_runner/__main__.py" in images["base"].files
    assert b'"version": "0.12.0"' in images["jax"].files["expect/20-framework.json"]
    # The runner follows the extras the image asked of its framework, and only those.
    assert json.loads(images["jax"].files["expect/20-framework.json"])["extras"] == ["cuda13"]
    assert json.loads(images["pytorch"].files["expect/20-framework.json"])["extras"] == []


def test_frameworks_build_from_their_stack_image(write_release: WriteRelease) -> None:
    images = {i.spec.name: i for i in render(write_release(GOOD_RELEASE))}
    cuda_ref = images["cuda-cu13"].local_ref
    assert f"FROM {cuda_ref}\n" in images["jax"].dockerfile
    assert f"FROM {images['base'].local_ref}\n" in images["cuda-cu13"].dockerfile
    assert "FROM ngc-local/os-debian-trixie:13\n" in images["base"].dockerfile


def test_no_manifest_value_is_spliced_into_a_run_line(write_release: WriteRelease) -> None:
    # Versions and package names travel in context files, never in shell commands.
    for image in render(write_release(GOOD_RELEASE)):
        for line in image.dockerfile.splitlines():
            if line.startswith("RUN") or line.startswith(" &&"):
                assert "2.15.0" not in line and "0.12.0" not in line and "13.2.86" not in line
