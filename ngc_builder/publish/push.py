"""Publish, step 1: push a validated candidate to a staging tag (`promote` then points the
release tags at it).

The candidate goes to `<image>:<YY.MM>-py3-rc<N>` (the next free N); the push is proven by
the registry's own answer (manifest HEAD), not just by a stream. The image goes up through the
engine's `docker push`, or with NGC_PUSH_WITH=api through the registry API, compressed on every
core (publish/upload.py: faster for one large layer, not for a whole release on two cores, see
docs/performance.md), falling back to the engine when the registry refuses our credentials.
An image already pushed to this repository (a rerun after a lost connection) is not pushed
again: its digest is looked up and re-tagged through the registry API.
"""

from __future__ import annotations

import contextlib
import re
import tarfile
import time
from collections.abc import Iterator
from dataclasses import dataclass

import docker.errors
import requests

from ngc_builder.errors import StepError
from ngc_builder.plan.dag import ImageSpec
from ngc_builder.publish.layer_memo import LayerMemo, default_memo_path
from ngc_builder.publish.upload import held_manifest, upload_image
from ngc_builder.services.engine import Engine
from ngc_builder.services.environment import setting
from ngc_builder.services.registry import (
    HttpRegistry,
    Registry,
    RegistryAuthError,
    RegistryError,
    RegistryUnavailable,
)
from ngc_builder.services.retry import RetryPolicy, transient_text
from ngc_builder.services.streams import LineSink, PushResult, StreamError, consume_push


@dataclass(frozen=True)
class PushOutcome:
    ref: str
    digest: str
    seconds: float
    pushed: bool  # False: the registry already held this image, only tags were set


def candidate_tag(spec: ImageSpec, existing: list[str]) -> str:
    pattern = re.compile(re.escape(spec.release_tag) + r"-rc(\d+)")
    numbers = [int(m.group(1)) for t in existing if (m := pattern.fullmatch(t))]
    return f"{spec.release_tag}-rc{max(numbers, default=0) + 1}"


ENGINE_ERRORS = (StreamError, RegistryError, docker.errors.DockerException,
                 requests.RequestException, tarfile.TarError)


@contextlib.contextmanager
def step_errors(spec: ImageSpec, step: str, where: str) -> Iterator[None]:
    """Engine, stream and registry errors become this image's step error (one line)."""
    try:
        yield
    except ENGINE_ERRORS as exc:
        raise StepError(spec.name, step, f"{where}: {exc}") from None


def push_candidate(
    engine: Engine, spec: ImageSpec, image_id: str, registry: Registry, sink: LineSink
) -> PushOutcome:
    started = time.monotonic()
    repository = spec.remote_repository(registry)
    with step_errors(spec, "push", repository):
        tag = candidate_tag(spec, registry.list_tags(spec.name))
        known = _already_in_registry(engine, image_id, registry, spec)
    ref = f"{repository}:{tag}"
    if known is not None:
        with step_errors(spec, "push", ref):
            set_tag(engine, registry, spec, known, tag, image_id)
        return PushOutcome(ref, known, time.monotonic() - started, False)
    try:
        with step_errors(spec, "push", ref):
            digest = transfer(engine, spec, image_id, registry, tag, sink)
            _confirm(engine, registry, spec, tag, digest)
    except StepError:
        _untag(engine, ref)
        raise
    return PushOutcome(ref, digest, time.monotonic() - started, True)


def transfer(engine: Engine, spec: ImageSpec, image_id: str, registry: Registry, tag: str,
             sink: LineSink) -> str:
    """The engine's push; with NGC_PUSH_WITH=api an upload through the registry API (again
    after a transient failure: what is up by then is not sent again). The digest."""
    repository = spec.remote_repository(registry)
    api = api_registry(registry)
    if api is not None:
        sources = [spec.parent] if spec.parent else []
        try:
            return RetryPolicy.from_env(say=sink).call(
                f"upload {repository}:{tag}",
                lambda: upload_image(engine.api, api, spec.name, image_id, tag, sources,
                                     LayerMemo(default_memo_path()), sink),
                lambda exc: isinstance(exc, RegistryUnavailable) or transient_text(exc))
        except RegistryAuthError as exc:
            sink(f"the registry API refused us ({exc}): pushing through the engine")
    engine.api.tag(image_id, repository, tag)
    return engine_push(engine, repository, tag, sink).digest


def engine_push(engine: Engine, repository: str, tag: str, sink: LineSink) -> PushResult:
    """The engine's push, read to its end; again after a transient failure (the engine's
    own layer retries are over by then), each retry said in the image's log."""
    return RetryPolicy.from_env(say=sink).call(
        f"push {repository}:{tag}",
        lambda: consume_push(engine.api.push(repository, tag=tag, stream=True, decode=True),
                             sink))


def api_registry(registry: Registry) -> HttpRegistry | None:
    """The registry to push to through its API, when NGC_PUSH_WITH=api asks for that."""
    wanted = setting("NGC_PUSH_WITH") == "api"
    return registry if wanted and isinstance(registry, HttpRegistry) else None


def _already_in_registry(engine: Engine, image_id: str, registry: Registry,
                         spec: ImageSpec) -> str | None:
    """A digest the engine recorded when it pushed this image here before, if still held."""
    repository = spec.remote_repository(registry)
    digests = engine.api.inspect_image(image_id).get("RepoDigests") or []
    for entry in digests:
        name, _, digest = str(entry).partition("@")
        if name == repository and registry.manifest_digest(spec.name, digest) == digest:
            return digest
    api = api_registry(registry)
    if api is not None:  # uploaded through the API: the engine never knew
        with contextlib.suppress(RegistryAuthError):
            return held_manifest(engine.api, api, spec.name, image_id,
                                 LayerMemo(default_memo_path()))
    return None


def _confirm(engine: Engine, registry: Registry, spec: ImageSpec, tag: str, digest: str) -> None:
    try:
        held = registry.manifest_digest(spec.name, tag)
    except RegistryAuthError:
        # Registries behind a login answer us 401; the engine holds the credentials.
        ref = f"{spec.remote_repository(registry)}:{tag}"
        held = engine.api.inspect_distribution(ref)["Descriptor"]["digest"]
    if held != digest:
        raise RegistryError(f"registry holds {held} for {tag}, engine pushed {digest}")


def set_tag(engine: Engine, registry: Registry, spec: ImageSpec, digest: str, tag: str,
            image_id: str | None) -> None:
    """Point a tag at a manifest the registry holds, through the API; behind a login, through
    the engine (its push of an image whose blobs are all there uploads nothing). Without
    `image_id` (an index, which the engine cannot push: it would tag one platform's image
    alone) only the API can, and a refusal is this step's error."""
    try:
        manifest = registry.get_manifest(spec.name, digest)
        if manifest is None:
            raise RegistryError(f"{spec.name}@{digest} is not in the registry")
        registry.put_manifest(spec.name, tag, manifest)
    except RegistryAuthError as exc:
        if image_id is None:
            raise RegistryAuthError(f"{exc}; {digest} can only be tagged through the registry "
                                    "API (an index of platforms, or no copy on this host)"
                                    ) from None
        repository = spec.remote_repository(registry)
        engine.api.tag(image_id, repository, tag)
        engine_push(engine, repository, tag, lambda _line: None)


def _untag(engine: Engine, ref: str) -> None:
    # A failed push leaves no registry-named tag behind: the next run starts clean.
    with contextlib.suppress(docker.errors.APIError):
        engine.api.remove_image(ref, noprune=True)
