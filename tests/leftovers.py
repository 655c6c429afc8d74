"""What a test session leaves behind, taken away again: the engine's throwaway tags and the
images only they held, and the registry repositories the session pushed under a throwaway
namespace (in the session's own registry, tests/suite_registry.py, whose storage goes whole
with it; only in a registry the user named with $NGC_TEST_REGISTRY are they deleted one by
one). Only what this session added goes; `remove_all` sweeps what killed sessions left, by
names only tests use. A CI run on a machine that had run the suites a few dozen times failed
with `no space left on device`: 90 throwaway tags pinned their layers, 200 test repositories
held 6 GB of the registry's blobs, and images pulled by digest (no tag) were never removed."""

from __future__ import annotations

import contextlib
import json
import re
import urllib.error
import urllib.request
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import docker

from tests.suite_registry import FOLDERS, sweep_dead_sessions

# The tests' own refs: releases pushed under a random namespace (`<registry>/ci-1a2b3c4d/jax`,
# pub-, cred-, lock-, team-, faults-...) and test-only local refs. OS bases and keyed builds
# (`ngc-local/<image>:<key>`, adopted by the next run) stay, and so does anything another
# process (a `make release` beside the tests) tagged meanwhile.
THROWAWAY_NAMESPACE = re.compile(r"/[a-z]+(?:-[a-z]+)*-[0-9a-f]{6,8}/")
THROWAWAY_REFS = ("ngc-local/os-test:", "ngc-local/os-repro-test:", "ngc-test/",
                  "ngc-local/slow:")  # the fault suite's framework
MANIFEST_TYPES = ", ".join((
    "application/vnd.oci.image.index.v1+json", "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
    "application/vnd.docker.distribution.manifest.v2+json"))


def throwaway(tag: str) -> bool:
    return bool(THROWAWAY_NAMESPACE.search(tag)) or tag.startswith(THROWAWAY_REFS)


def engine_snapshot(client: Any) -> tuple[set[str], set[str]]:
    """The image ids and the tags the engine holds now."""
    images = client.images.list(all=False)
    return {image.id for image in images}, {tag for image in images for tag in image.tags}


def remove_engine_leftovers(client: Any, before: tuple[set[str], set[str]],
                            unreferenced: bool = True) -> None:
    """Throwaway tags added since `before`, then the images added since that nothing names any
    more but a throwaway digest reference (a pull by digest), or (`unreferenced`) nothing at
    all."""
    ids_before, tags_before = before
    images = client.images.list(all=False)
    added_tags = {tag for image in images for tag in image.tags} - tags_before
    for tag in sorted(filter(throwaway, added_tags)):
        with contextlib.suppress(docker.errors.APIError):
            client.images.remove(tag)
    for image in client.images.list(all=False):
        if image.id not in ids_before and _unnamed(image, unreferenced):
            with contextlib.suppress(docker.errors.APIError):  # a child still uses it
                client.images.remove(image.id)


def _unnamed(image: Any, unreferenced: bool) -> bool:
    digests = image.attrs.get("RepoDigests") or []
    if image.tags or not (digests or unreferenced):
        return False
    return all(throwaway(ref.split("@")[0] + ":") for ref in digests)


def _call(host: str, path: str, method: str = "GET") -> Any:
    request = urllib.request.Request(f"http://{host}{path}", method=method,
                                     headers={"Accept": MANIFEST_TYPES})
    return urllib.request.urlopen(request, timeout=30)


def registry_repositories(host: str) -> set[str]:
    """Every repository the registry lists; empty when it cannot be read (a registry that
    wants credentials is not the tests' own)."""
    found: set[str] = set()
    path = "/v2/_catalog?n=1000"
    with contextlib.suppress(urllib.error.URLError, OSError, ValueError):
        while path:
            with _call(host, path) as answer:
                found.update(json.load(answer).get("repositories") or [])
                path = _next_page(answer.headers.get("Link", ""))
    return found


def _next_page(link: str) -> str:
    match = re.match(r"<(/v2/_catalog\?[^>]*)>", link)
    return match.group(1) if match else ""


def delete_repositories(host: str, repositories: Iterable[str]) -> None:
    """Each repository's manifests deleted through the registry API (its tags go with them)."""
    for repository in repositories:
        for digest in _manifest_digests(host, repository):
            with contextlib.suppress(urllib.error.URLError, OSError):
                _call(host, f"/v2/{repository}/manifests/{digest}", "DELETE").close()


def _manifest_digests(host: str, repository: str) -> set[str]:
    digests: set[str] = set()
    with contextlib.suppress(urllib.error.URLError, OSError, ValueError):
        with _call(host, f"/v2/{repository}/tags/list") as answer:
            tags = json.load(answer).get("tags") or []
        for tag in tags:
            with _call(host, f"/v2/{repository}/manifests/{tag}", "HEAD") as answer:
                digests.add(answer.headers["Docker-Content-Digest"])
    return digests


def remove_all(client: Any, state_dir: Path) -> None:
    """What killed test sessions left (`make clean-test-leftovers`, which .ci/run calls
    first): the engine's throwaway tags and the images only throwaway references name, and
    the registries of dead sessions (tests/suite_registry.py). An image no reference names at
    all is left: whose it is cannot be told, and a release beside the tests may be using it."""
    remove_engine_leftovers(client, (set(), set()), unreferenced=False)
    for folder in sweep_dead_sessions(state_dir / FOLDERS):
        print(f"leftovers: removed the registry of a dead test session: {folder}")


if __name__ == "__main__":
    from ngc_builder.services.environment import state_dir as configured_state_dir

    remove_all(docker.from_env(timeout=900), configured_state_dir())
