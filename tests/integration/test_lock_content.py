"""The lock's content against its inputs, with the real wheels of the CI release in the real
package cache: the committed lock is its requirements' closure, and a wheel appended by hand
(with its real hash, so every other check passes) is refused by `check` and by `release`
before anything is built."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest

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
