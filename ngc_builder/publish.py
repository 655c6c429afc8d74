"""Stage 6, tag and push: only images that passed validation, and the push is proven by
the registry's own answer (manifest HEAD), not just by the engine's stream."""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import Any

import docker.errors
import requests

from .errors import StepError
from .plan import ImageSpec
from .registry import RegistryAuthError, RegistryError, manifest_digest
from .streams import LineSink, StreamError, consume_push


@dataclass(frozen=True)
class PushOutcome:
    ref: str
    digest: str
    seconds: float


def publish_image(
    client: Any, spec: ImageSpec, image_id: str, registry: str, sink: LineSink
) -> PushOutcome:
    started = time.monotonic()
    repository = spec.remote_repository(registry)
    ref = spec.remote_ref(registry)
    try:
        client.api.tag(image_id, repository, spec.tag)
        stream = client.api.push(repository, tag=spec.tag, stream=True, decode=True)
        pushed = consume_push(stream, sink)
        _confirm(client, registry, spec, pushed.digest)
    except (StreamError, RegistryError, docker.errors.DockerException,
            requests.RequestException) as exc:
        _untag(client, ref)
        raise StepError(spec.name, "push", f"{ref}: {exc}") from None
    return PushOutcome(ref, pushed.digest, time.monotonic() - started)


def _confirm(client: Any, registry: str, spec: ImageSpec, digest: str) -> None:
    try:
        held = manifest_digest(registry, spec.name, spec.tag)
    except RegistryAuthError:
        # Registries behind a login answer us 401; the engine holds the credentials.
        held = client.api.inspect_distribution(spec.remote_ref(registry))["Descriptor"]["digest"]
    if held != digest:
        raise RegistryError(f"registry holds {held} for {spec.tag}, engine pushed {digest}")


def _untag(client: Any, ref: str) -> None:
    # A failed push leaves no registry-named tag behind: the next run starts clean.
    with contextlib.suppress(docker.errors.APIError):
        client.api.remove_image(ref, noprune=True)
