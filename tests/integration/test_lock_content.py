"""The lock's content against its inputs, with the real wheels and .debs of the CI release in
the real package cache: the committed lock is its requirements' closure, and a wheel or a .deb
appended by hand (with its real hash, so every other check passes), or a .deb taken out, is
refused by `check` and by `release` before anything is built."""

from __future__ import annotations

import json
import secrets
import subprocess
from pathlib import Path

import pytest

from ngc_builder.lock.inputs import image_inputs
from ngc_builder.lock.models import dump_lock, load_lock
from ngc_builder.manifest.load import load_release
from ngc_builder.plan.dag import plan_release
from tests.integration.conftest import REGISTRY_HOST, cli, make_ci_root

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("ci_packages")]


def test_the_committed_lock_is_its_requirements_closure(tmp_path: Path) -> None:
    manifest = make_ci_root(tmp_path)
    done = cli("check", str(manifest), "--offline", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["closure_unchecked"] == []  # every wheel was read


def test_a_wheel_appended_by_hand_is_refused_before_anything_is_built(tmp_path: Path) -> None:
    manifest = make_ci_root(tmp_path)
    lock_file = manifest.with_name("ci.lock.json")
    lock = json.loads(lock_file.read_text())
    [six] = lock["images"]["broken"]["pip"]  # a real, cached wheel no JAX requirement needs
    lock["images"]["jax"]["pip"].append(six)
    lock_file.write_text(json.dumps(lock, indent=2))
    refusal = ("images.jax.pip: six==1.16.0 is locked, but no requirement of the image and "
               "no locked wheel's metadata asks for it (lock again)")
    checked = cli("check", str(manifest), "--offline")
    assert checked.returncode == 2 and refusal in checked.stderr
    build = tmp_path / "build"
    released = cli("release", str(manifest), "--only", "jax", "--registry",
                   f"{REGISTRY_HOST}/lockc-{secrets.token_hex(4)}", "--build-dir", str(build),
                   "--os-source", "bootstrap", "--offline")
    assert released.returncode == 2 and refusal in released.stderr
    assert ": building " not in released.stderr


def released_jax(manifest: Path, build: Path) -> subprocess.CompletedProcess[str]:
    return cli("release", str(manifest), "--only", "jax", "--registry",
               f"{REGISTRY_HOST}/lockc-{secrets.token_hex(4)}", "--build-dir", str(build),
               "--os-source", "bootstrap", "--offline")


def test_a_deb_appended_by_hand_is_refused_before_anything_is_built(tmp_path: Path) -> None:
    """A real, cached .deb (the base's media-types) appended to JAX's Debian packages: its
    hash is good and every image's inputs are unchanged, but nothing JAX asks for needs it."""
    manifest = make_ci_root(tmp_path)
    lock_file = manifest.with_name("ci.lock.json")
    lock = load_lock(lock_file)
    assert lock is not None
    [media] = [p for p in lock.images["base"].apt if p.name == "media-types"]
    jax = lock.images["jax"].model_copy(update={"apt": [*lock.images["jax"].apt, media]})
    lock_file.write_text(dump_lock(lock.model_copy(
        update={"images": {**lock.images, "jax": jax}})))
    refusal = (f"images.jax.apt: media-types={media.version} is locked, but no Debian package "
               "of the image and no locked package's Depends asks for it (lock again)")
    checked = cli("check", str(manifest), "--offline")
    assert checked.returncode == 2 and refusal in checked.stderr, checked.stderr[-2000:]
    lines = lock_file.read_text().splitlines()
    line = max(number for number, text in enumerate(lines, 1) if '"media-types"' in text)
    assert f"ci.lock.json:{line}: {refusal}" in checked.stderr  # the appended entry's line
    released = released_jax(manifest, tmp_path / "build")
    assert released.returncode == 2 and refusal in released.stderr
    assert ": building " not in released.stderr


def test_a_deb_taken_out_is_named_with_the_package_that_needs_it(tmp_path: Path) -> None:
    """libexpat1 dropped from the base, and the images above re-keyed as an attacker would
    (their inputs name the base's new digest): the .debs' own Depends still need it."""
    manifest = make_ci_root(tmp_path)
    lock_file = manifest.with_name("ci.lock.json")
    lock = load_lock(lock_file)
    assert lock is not None
    base = lock.images["base"]
    kept = [package for package in base.apt if package.name != "libexpat1"]
    assert len(kept) == len(base.apt) - 1
    lock = lock.model_copy(update={"images": {**lock.images, "base": base.model_copy(
        update={"apt": kept})}})
    loaded = load_release(manifest)
    plan = plan_release(loaded)
    images = {spec.name: lock.images[spec.name].model_copy(
        update={"inputs": image_inputs(loaded, plan, spec, lock)}) for spec in plan.images}
    lock_file.write_text(dump_lock(lock.model_copy(update={"images": images})))
    checked = cli("check", str(manifest), "--offline")
    assert checked.returncode == 2, checked.stderr[-2000:]
    [line] = checked.stderr.strip().splitlines()
    assert "images.base.apt: libexpat1" in line and "is not locked" in line, line
    assert "lock is stale" not in checked.stderr  # only the content check saw it
