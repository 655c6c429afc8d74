"""The session cleanup (tests/leftovers.py) against the real engine and registry: a pushed
throwaway repository loses its manifests and its blobs, an image pulled by digest alone goes,
and what was there before the snapshot stays."""

from __future__ import annotations

import io
import json
import secrets
import subprocess
import urllib.error
from typing import Any

import pytest

from ngc_builder.services.environment import state_dir
from tests.integration.conftest import REGISTRY_HOST
from tests.leftovers import (
    _call,
    collect_garbage,
    delete_repositories,
    engine_snapshot,
    registry_repositories,
    remove_engine_leftovers,
    throwaway,
)

pytestmark = pytest.mark.integration


def _random_image(client: Any, base: str, tag: str) -> str:
    dockerfile = f"FROM {base}\nRUN head -c 200000 /dev/urandom > /leftover\n"
    image, _ = client.images.build(fileobj=io.BytesIO(dockerfile.encode()), tag=tag, rm=True)
    return str(image.id)


def _status(path: str, method: str = "GET") -> int:
    try:
        with _call(REGISTRY_HOST, path, method) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as error:
        return error.code


def test_a_pushed_throwaway_repository_and_its_pulls_are_gone(docker_client: Any,
                                                              trixie_os: str) -> None:
    before = engine_snapshot(docker_client)
    repository = f"leftover-{secrets.token_hex(4)}/random"
    tag = f"{REGISTRY_HOST}/{repository}:1"
    _random_image(docker_client, trixie_os, tag)
    subprocess.run(["docker", "push", "-q", tag], check=True, capture_output=True)
    digest = docker_client.api.inspect_image(tag)["RepoDigests"][0].split("@")[1]
    docker_client.images.remove(tag)
    pulled = f"{REGISTRY_HOST}/{repository}@{digest}"
    subprocess.run(["docker", "pull", "-q", pulled], check=True, capture_output=True)
    assert repository in registry_repositories(REGISTRY_HOST)
    with _call(REGISTRY_HOST, f"/v2/{repository}/manifests/{digest}") as answer:
        random_layer = json.load(answer)["layers"][-1]["digest"]  # no other image holds it

    remove_engine_leftovers(docker_client, before)
    delete_repositories(REGISTRY_HOST, [repository])
    collect_garbage(REGISTRY_HOST, state_dir())

    assert not any(digest in ref for image in docker_client.images.list()
                   for ref in image.attrs.get("RepoDigests") or [])
    assert _status(f"/v2/{repository}/manifests/{digest}", "HEAD") == 404
    assert _status(f"/v2/{repository}/blobs/{random_layer}", "HEAD") == 404
    assert trixie_os in {t for image in docker_client.images.list() for t in image.tags}


def test_only_test_namespaces_and_test_refs_are_throwaway() -> None:
    assert throwaway("localhost:5000/ci-1a2b3c4d/jax:26.11-py3")
    assert throwaway("127.0.0.1:5001/team-a1b2c3/base:26.11-py3")
    assert throwaway("ngc-test/up-child:1")
    assert not throwaway("localhost:5000/jax:26.11-py3")
    assert not throwaway("ngc-local/jax:26.11-py3-1e1182c52617")
    assert not throwaway("localhost:5000/team/base:26.11-py3")
