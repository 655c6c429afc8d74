"""Stage 6, publish: push a validated candidate to a staging tag, then promote it.

1. The candidate goes to `<image>:<YY.MM>-py3-rc<N>` (the next free N); the push is proven by
   the registry's own answer (manifest HEAD), not just by the engine's stream. An image the
   engine already pushed to this repository (a rerun after a lost connection) is not pushed
   again: its digest is looked up and re-tagged through the registry API.
2. Promotion points tags at that manifest through the registry API (no second push): the
   content tag `key-<key>` that lets later runs skip the image, the release tag `<YY.MM>-py3`,
   then the release's moving aliases. Release tags are immutable: moving one to a different
   digest is refused unless forced, and a forced move is returned for the record.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import docker.errors
import requests

from ngc_builder.errors import StepError
from ngc_builder.plan.dag import ImageSpec
from ngc_builder.records.record import now
from ngc_builder.services.registry import (
    RegistryAuthError,
    RegistryError,
    get_manifest,
    list_tags,
    manifest_digest,
    put_manifest,
)
from ngc_builder.services.streams import LineSink, StreamError, consume_push


@dataclass(frozen=True)
class PushOutcome:
    ref: str
    digest: str
    seconds: float
    pushed: bool  # False: the registry already held this image, only tags were set


def candidate_tag(spec: ImageSpec, existing: list[str]) -> str:
    pattern = re.compile(re.escape(spec.tag) + r"-rc(\d+)")
    numbers = [int(m.group(1)) for t in existing if (m := pattern.fullmatch(t))]
    return f"{spec.tag}-rc{max(numbers, default=0) + 1}"


ENGINE_ERRORS = (StreamError, RegistryError, docker.errors.DockerException,
                 requests.RequestException)


@contextlib.contextmanager
def step_errors(spec: ImageSpec, step: str, where: str) -> Iterator[None]:
    """Engine, stream and registry errors become this image's step error (one line)."""
    try:
        yield
    except ENGINE_ERRORS as exc:
        raise StepError(spec.name, step, f"{where}: {exc}") from None


def push_candidate(
    client: Any, spec: ImageSpec, image_id: str, registry: str, sink: LineSink
) -> PushOutcome:
    started = time.monotonic()
    repository = spec.remote_repository(registry)
    with step_errors(spec, "push", repository):
        tag = candidate_tag(spec, list_tags(registry, spec.name))
        known = _already_in_registry(client, image_id, registry, spec)
    ref = f"{repository}:{tag}"
    if known is not None:
        with step_errors(spec, "push", ref):
            set_tag(client, registry, spec, known, tag, image_id)
        return PushOutcome(ref, known, time.monotonic() - started, False)
    try:
        with step_errors(spec, "push", ref):
            client.api.tag(image_id, repository, tag)
            pushed = consume_push(
                client.api.push(repository, tag=tag, stream=True, decode=True), sink)
            _confirm(client, registry, spec, tag, pushed.digest)
    except StepError:
        _untag(client, ref)
        raise
    return PushOutcome(ref, pushed.digest, time.monotonic() - started, True)


def _already_in_registry(client: Any, image_id: str, registry: str, spec: ImageSpec) -> str | None:
    """A digest the engine recorded when it pushed this image here before, if still held."""
    repository = spec.remote_repository(registry)
    digests = client.api.inspect_image(image_id).get("RepoDigests") or []
    for entry in digests:
        name, _, digest = str(entry).partition("@")
        if name == repository and manifest_digest(registry, spec.name, digest) == digest:
            return digest
    return None


def _confirm(client: Any, registry: str, spec: ImageSpec, tag: str, digest: str) -> None:
    try:
        held = manifest_digest(registry, spec.name, tag)
    except RegistryAuthError:
        # Registries behind a login answer us 401; the engine holds the credentials.
        ref = f"{spec.remote_repository(registry)}:{tag}"
        held = client.api.inspect_distribution(ref)["Descriptor"]["digest"]
    if held != digest:
        raise RegistryError(f"registry holds {held} for {tag}, engine pushed {digest}")


def set_tag(client: Any, registry: str, spec: ImageSpec, digest: str, tag: str,
            image_id: str | None) -> None:
    """Point a tag at a manifest the registry holds, through the API; behind a login, through
    the engine (its push of an image whose blobs are all there uploads nothing)."""
    try:
        manifest = get_manifest(registry, spec.name, digest)
        if manifest is None:
            raise RegistryError(f"{spec.name}@{digest} is not in the registry")
        put_manifest(registry, spec.name, tag, manifest)
    except RegistryAuthError:
        if image_id is None:
            raise
        repository = spec.remote_repository(registry)
        client.api.tag(image_id, repository, tag)
        consume_push(client.api.push(repository, tag=tag, stream=True, decode=True),
                     lambda _line: None)


@dataclass(frozen=True)
class Promotion:
    tags: list[str]
    forced: list[str]  # "tag: old -> new at time" for every release tag moved by force


def promote(
    client: Any, registry: str, spec: ImageSpec, digest: str, key_tag: str,
    aliases: list[str], force: bool, image_id: str | None = None,
) -> Promotion:
    forced = []
    with step_errors(spec, "promote", spec.remote_repository(registry)):
        current = manifest_digest(registry, spec.name, spec.tag)
        if current not in (None, digest):
            if not force:
                raise StepError(spec.name, "promote", (
                    f"{spec.remote_ref(registry)} already points at {current}; release tags "
                    f"are immutable, refusing to move it to {digest} (--force moves it and "
                    "records the move)"))
            forced.append(f"{spec.tag}: {current} -> {digest} at {now()}")
        # The content tag last: once it is there, later runs skip this image. A tag already
        # at the digest is left alone, so a no-op rerun only reads the registry.
        for tag in (spec.tag, *aliases, key_tag):
            if (current if tag == spec.tag else manifest_digest(registry, spec.name, tag)) \
                    != digest:
                set_tag(client, registry, spec, digest, tag, image_id)
    return Promotion([spec.tag, *aliases, key_tag], forced)


def _untag(client: Any, ref: str) -> None:
    # A failed push leaves no registry-named tag behind: the next run starts clean.
    with contextlib.suppress(docker.errors.APIError):
        client.api.remove_image(ref, noprune=True)
