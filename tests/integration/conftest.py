"""Integration fixtures: one real small release, built once per session against the real
engine that `make engine` (ci/setup-engine.sh) starts and a real registry of the session's
own (tests/suite_registry.py)."""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker
import pytest

from ngc_builder.lock.models import dump_lock, load_lock, lock_path
from ngc_builder.services.environment import state_dir
from tests.conftest import DATA, REPO
from tests.leftovers import (
    delete_repositories,
    engine_snapshot,
    registry_repositories,
    remove_engine_leftovers,
    throwaway,
)
from tests.suite_registry import planned

SUITE_REGISTRY = planned(state_dir())  # $NGC_TEST_REGISTRY, else the session's own
REGISTRY_HOST = SUITE_REGISTRY.host


@dataclass(frozen=True)
class ReleaseRun:
    root: Path
    manifest: Path
    build_dir: Path
    registry: str
    code: int
    stdout: str
    stderr: str

    @property
    def record(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.stdout)
        return data


def pull_back(run: ReleaseRun) -> ReleaseRun:
    """The images the release dropped from the engine once published (nothing is built on
    them: pipeline/tidy.py), pulled back by digest, every platform, as a user gets them: the
    tests that run them locally find them under the IDs the record names. Each is tagged
    `ngc-local/<name>:pulled-<id>`, as its build was: the next session's release finds it by
    its key label (its config's) instead of building it again."""
    pull_back_images(run.registry, run.record)
    return run


def pull_back_images(registry: str, record: dict[str, Any]) -> None:
    client = docker.from_env(timeout=900)
    for name, image in record["images"].items():
        for image_id, digest, platform in _published_images(image):
            if image_id and digest and not held_locally(client, image_id):
                reference = f"{registry}/{name}@{digest}"
                client.api.pull(reference, platform=platform)
                pulled = client.api.inspect_image(reference)["Id"]
                assert pulled == image_id, f"{reference} is {pulled}, built as {image_id}"
                client.api.tag(image_id, f"ngc-local/{name}", f"pulled-{image_id[7:19]}")


def _published_images(image: dict[str, Any]) -> list[tuple[str | None, str | None, str | None]]:
    push = image["push"]
    if push["status"] != "ok":
        return []
    host = (image["build"]["image_id"], push["host_digest"] or push["digest"], None)
    return [host, *((entry["build"]["image_id"], entry["digest"], platform)
                    for platform, entry in image["platforms"].items())]


def held_locally(client: Any, image_id: str) -> bool:
    try:
        client.api.inspect_image(image_id)
    except docker.errors.ImageNotFound:
        return False
    return True


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ngc_builder", *args], capture_output=True,
                          text=True, check=False, cwd=REPO, timeout=3600)


def ci_project(root: Path) -> None:
    """The repository's templates, bases and JAX, plus the broken-on-purpose framework, with
    an empty releases/ for the test's manifest."""
    (root / "frameworks").mkdir(parents=True)
    (root / "releases").mkdir()
    for folder in ("templates", "base-images"):
        (root / folder).symlink_to(REPO / folder)
    (root / "frameworks" / "jax").symlink_to(REPO / "frameworks" / "jax")
    (root / "frameworks" / "broken").symlink_to(DATA / "frameworks" / "broken")


def make_ci_root(root: Path) -> Path:
    """The CI release and its committed lock in a `ci_project`."""
    ci_project(root)
    manifest = root / "releases" / "ci.yaml"
    manifest.write_text((DATA / "releases" / "ci.yaml").read_text())
    copy_lock(manifest)
    return manifest


def copy_lock(manifest: Path, leave_out: tuple[str, ...] = ()) -> None:
    """The CI release's committed lock beside `manifest`, without the images left out."""
    lock = load_lock(DATA / "releases" / "ci.lock.json")
    assert lock is not None
    kept = {name: image for name, image in lock.images.items() if name not in leave_out}
    lock_path(manifest).write_text(dump_lock(lock.model_copy(update={"images": kept})))


@pytest.fixture(scope="session")
def docker_client() -> Any:
    """docker-py's own client: the tests look at the engine the way other tools do (it also
    has the `api` and `containers` an `Engine` has, so builder functions accept it)."""
    from ngc_builder.services.engine import connect

    connect()  # a clear error when no engine answers
    return docker.from_env(timeout=900)


@pytest.fixture(scope="session", autouse=True)
def test_images_removed() -> Iterator[None]:
    """Each session starts its own registry (tests/suite_registry.py) and leaves the engine
    and the registries as it found them, keyed builds aside (tests/leftovers.py): a day of
    `make test` runs filled this machine's disk."""
    client = docker.from_env(timeout=900)
    engine_before = engine_snapshot(client)
    SUITE_REGISTRY.start()
    repositories_before = registry_repositories(REGISTRY_HOST)
    try:
        yield
    finally:
        remove_engine_leftovers(client, engine_before)
        if SUITE_REGISTRY.own is None:  # the user's: only what this session added
            added = registry_repositories(REGISTRY_HOST) - repositories_before
            delete_repositories(REGISTRY_HOST,
                                sorted(filter(lambda name: throwaway(f"/{name}"), added)))
        SUITE_REGISTRY.finish()


@pytest.fixture(scope="session")
def trixie_os(docker_client: Any) -> str:
    """The trixie OS image (`ngc-local/os-debian-trixie:13`), bootstrapped if the engine lacks
    it: tests that start from the bare OS never skip for want of it."""
    from ngc_builder.assemble.osbase import ensure_os_image
    from ngc_builder.manifest.models import BaseImage
    from ngc_builder.manifest.source import load_yaml
    from ngc_builder.plan.dag import os_ref

    path = REPO / "base-images" / "debian-trixie.yaml"
    base = BaseImage.model_validate(load_yaml(path, path.name)[0])
    ref = os_ref(base)
    ensure_os_image(docker_client, base, ref, "bootstrap", lambda line: None)
    return ref


@pytest.fixture(scope="session")
def locked_trixie_os(docker_client: Any, ci_packages: None,
                     tmp_path_factory: pytest.TempPathFactory) -> str:
    """The CI lock's own trixie image (`ngc-local/os-debian-trixie:13-<lock digest>`, what
    the CI release and the fault suite build FROM), made from the cached .debs when the
    engine lacks it, as a release makes it: a second engine gets it copied in."""
    from ngc_builder.assemble.osbase import locked_bootstrap
    from ngc_builder.cache.store import default_root, open_cache
    from ngc_builder.pipeline.console import Ui
    from ngc_builder.pipeline.images import obtain_os_images
    from ngc_builder.pipeline.prepare import prepare

    folder = tmp_path_factory.mktemp("locked-os")
    prepared = prepare(make_ci_root(folder), None, stack_check=False)
    cache = open_cache(default_root())
    locked = {name: locked_bootstrap(entry, cache.deb_path)
              for name, entry in prepared.lock.os.items()}
    ui = Ui(folder / "logs", show_logs=False)
    try:
        made = obtain_os_images(docker_client, prepared.loaded, prepared.plan,
                                prepared.plan.images, "bootstrap", ui, locked)
    finally:
        ui.close()
    assert made["debian-trixie"].error is None, made["debian-trixie"].error
    return prepared.plan.os_refs["debian-trixie"]


@pytest.fixture(scope="session")
def debian_mirror() -> str:
    """The host's Debian mirror, where tests download locked .debs from."""
    from ngc_builder.services.mirror import host_debian_mirror

    mirror = host_debian_mirror()
    if mirror is None:
        pytest.skip("no Debian mirror on this host (set NGC_DEBIAN_MIRROR)")
    return mirror


@pytest.fixture(scope="session")
def ci_release(tmp_path_factory: pytest.TempPathFactory) -> ReleaseRun:
    root = tmp_path_factory.mktemp("ci-project")
    manifest = make_ci_root(root)
    build_dir = root / "build"
    registry = f"{REGISTRY_HOST}/ci-{secrets.token_hex(4)}"
    done = cli("release", str(manifest), "--registry", registry, "--build-dir", str(build_dir),
               "--os-source", "bootstrap", "--json", "--quiet")
    run = ReleaseRun(root, manifest, build_dir, registry, done.returncode, done.stdout,
                     done.stderr)
    # Exit 1 too: the CI release fails its broken image on purpose, and the images it did
    # publish were dropped all the same (on a cold engine nothing else holds them).
    return pull_back(run) if done.returncode in (0, 1) else run
