"""The session cleanup (tests/leftovers.py, tests/suite_registry.py) against the real engine
and real registries: a session's own registry goes whole with it, a dead session's registry is
stopped and removed by the next, a live one's is left, an image pulled by digest alone goes,
and what the tests did not make (an image no reference names, the shared registry) stays."""

from __future__ import annotations

import contextlib
import io
import json
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import docker
import pytest
import requests

from tests.leftovers import (
    _call,
    _unnamed,
    engine_snapshot,
    registry_repositories,
    remove_engine_leftovers,
    throwaway,
)
from tests.own_registry import OwnRegistry
from tests.suite_registry import FOLDERS, OWNER_FILE, SERVER_FILE, planned, sweep_dead_sessions

pytestmark = pytest.mark.integration


def _random_image(client: Any, base: str, tag: str | None) -> str:
    dockerfile = f"FROM {base}\nRUN head -c 200000 /dev/urandom > /leftover\n"
    image, _ = client.images.build(fileobj=io.BytesIO(dockerfile.encode()), tag=tag, rm=True)
    return str(image.id)


def _answers(host: str) -> bool:
    try:
        return requests.get(f"http://{host}/v2/", timeout=2).status_code == 200
    except requests.RequestException:
        return False


def _dead_pid() -> int:
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    return done.pid


def test_a_session_registry_goes_whole_and_its_pulls_with_it(
        docker_client: Any, trixie_os: str, tmp_path: Path) -> None:
    suite = planned(tmp_path)
    assert suite.own is not None and not _answers(suite.host)
    suite.start()
    before = engine_snapshot(docker_client)
    repository = f"leftover-{secrets.token_hex(4)}/random"
    tag = f"{suite.host}/{repository}:1"
    _random_image(docker_client, trixie_os, tag)
    subprocess.run(["docker", "push", "-q", tag], check=True, capture_output=True)
    digest = docker_client.api.inspect_image(tag)["RepoDigests"][0].split("@")[1]
    docker_client.images.remove(tag)
    subprocess.run(["docker", "pull", "-q", f"{suite.host}/{repository}@{digest}"],
                   check=True, capture_output=True)
    assert repository in registry_repositories(suite.host)
    with _call(suite.host, f"/v2/{repository}/manifests/{digest}") as answer:
        assert json.load(answer)["layers"]

    remove_engine_leftovers(docker_client, before)
    suite.finish()

    assert not any(digest in ref for image in docker_client.images.list()
                   for ref in image.attrs.get("RepoDigests") or [])
    assert not _answers(suite.host) and not suite.own.folder.exists()
    assert trixie_os in {t for image in docker_client.images.list() for t in image.tags}


def test_a_dead_sessions_registry_is_stopped_and_removed_a_live_ones_kept(
        tmp_path: Path) -> None:
    folders = tmp_path / FOLDERS
    dead, live = folders / "1-dead", folders / "2-live"
    with contextlib.ExitStack() as stack:
        registries = []
        for folder, owner in ((dead, _dead_pid()), (live, None)):
            registry = OwnRegistry(folder, folder / "data")
            folder.mkdir(parents=True)
            registry.start()
            stack.callback(registry.stop)
            assert registry.process is not None
            (folder / OWNER_FILE).write_text(str(owner or registry.process.pid))
            (folder / SERVER_FILE).write_text(str(registry.process.pid))
            registries.append(registry)
        assert sweep_dead_sessions(folders) == [dead]
        dead_registry, live_registry = registries
        assert dead_registry.process is not None
        assert dead_registry.process.wait(timeout=30) == -9  # SIGKILL from the sweep
        assert not dead.exists() and live.is_dir() and _answers(live_registry.host)


def test_the_sweep_leaves_an_image_no_reference_names(docker_client: Any,
                                                     trixie_os: str) -> None:
    nameless = docker_client.images.get(_random_image(docker_client, trixie_os, None))
    try:
        # Whose it is cannot be told (a release beside the tests may be using it): only the
        # session that saw it appear removes it.
        assert not _unnamed(nameless, unreferenced=False)
        assert _unnamed(nameless, unreferenced=True)
    finally:
        with contextlib.suppress(docker.errors.APIError):
            docker_client.images.remove(nameless.id)


def test_only_test_namespaces_and_test_refs_are_throwaway() -> None:
    assert throwaway("localhost:5000/ci-1a2b3c4d/jax:26.11-py3")
    assert throwaway("127.0.0.1:5001/team-a1b2c3/base:26.11-py3")
    assert throwaway("ngc-test/up-child:1")
    assert not throwaway("localhost:5000/jax:26.11-py3")
    assert not throwaway("ngc-local/jax:26.11-py3-1e1182c52617")
    assert not throwaway("localhost:5000/team/base:26.11-py3")
