"""What a test session leaves behind, taken away again: the engine's throwaway tags and the
images only they held, and the registry repositories the session pushed under a throwaway
namespace. A CI run on a machine that had run the suites a few dozen times failed with `no
space left on device`: 90 throwaway tags pinned their layers, 200 test repositories held 6 GB
of the registry's blobs, and images pulled by digest (no tag) were never removed."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import docker

REPO = Path(__file__).resolve().parent.parent

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


def remove_engine_leftovers(client: Any, before: tuple[set[str], set[str]]) -> None:
    """Throwaway tags added since `before`, then the images added since that nothing names any
    more but a throwaway digest reference (a pull by digest) or nothing at all."""
    ids_before, tags_before = before
    images = client.images.list(all=False)
    added_tags = {tag for image in images for tag in image.tags} - tags_before
    for tag in sorted(filter(throwaway, added_tags)):
        with contextlib.suppress(docker.errors.APIError):
            client.images.remove(tag)
    for image in client.images.list(all=False):
        if image.id not in ids_before and _unnamed(image):
            with contextlib.suppress(docker.errors.APIError):  # a child still uses it
                client.images.remove(image.id)


def _unnamed(image: Any) -> bool:
    digests = image.attrs.get("RepoDigests") or []
    return not image.tags and all(throwaway(ref.split("@")[0] + ":") for ref in digests)


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


def collect_garbage(host: str, state_dir: Path) -> None:
    """The blobs no manifest holds any more, swept when the registry is the one
    ci/setup-engine.sh started (its config under the state dir, serving `host`)."""
    config = state_dir / "registry" / "config.yml"
    tool = shutil.which("docker-registry")
    if tool is None or not config.is_file() or not _serves(config, host):
        return
    subprocess.run([tool, "garbage-collect", str(config)], capture_output=True, check=False,
                   timeout=600)


def _serves(config: Path, host: str) -> bool:
    match = re.search(r"^\s*addr:\s*(\S+)\s*$", config.read_text(), re.MULTILINE)
    if match is None:
        return False
    address = match.group(1).replace("127.0.0.1", "localhost")
    return address == host.split("/")[0].replace("127.0.0.1", "localhost")


def remove_all(client: Any, host: str, state_dir: Path) -> None:
    """Every throwaway tag, image and repository, whoever left it (a session killed before its
    teardown): `make clean-test-leftovers`, which .ci/run calls first."""
    remove_engine_leftovers(client, (set(), set()))
    repositories = registry_repositories(host)
    delete_repositories(host, sorted(name for name in repositories if throwaway(f"/{name}")))
    collect_garbage(host, state_dir)


def configured_registry() -> str:
    """The registry the tests push to: $NGC_TEST_REGISTRY, else where ci/setup-engine.sh put
    ngc-builder's (another port when its default was taken), else localhost:5000."""
    done = subprocess.run(["bash", str(REPO / "ci" / "registry-option.sh")],
                          capture_output=True, text=True, check=False)
    found = done.stdout.split()[-1] if done.stdout.strip() else None
    return os.environ.get("NGC_TEST_REGISTRY") or found or "localhost:5000"


if __name__ == "__main__":
    from ngc_builder.services.environment import state_dir as configured_state_dir

    remove_all(docker.from_env(timeout=900), configured_registry(), configured_state_dir())
