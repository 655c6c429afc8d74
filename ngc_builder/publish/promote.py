"""Publish, step 2: promotion points tags at a pushed candidate's manifest through the registry
API (no second push): the content tag `key-<key>` that lets later runs skip the image, the
release tag `<YY.MM>-py3`, then the release's moving aliases. Release tags are immutable: moving
one to a different digest is refused unless forced, and a forced move is returned for the record.
"""

from __future__ import annotations

from dataclasses import dataclass

from ngc_builder.clock import now
from ngc_builder.errors import StepError
from ngc_builder.plan.dag import ImageSpec
from ngc_builder.publish.push import set_tag, step_errors
from ngc_builder.services.engine import Engine
from ngc_builder.services.registry import Registry


@dataclass(frozen=True)
class Promotion:
    tags: list[str]
    forced: list[str]  # "tag: old -> new at time" for every release tag moved by force


def promote(
    engine: Engine, registry: Registry, spec: ImageSpec, digest: str, key_tag: str,
    aliases: list[str], force: bool, image_id: str | None = None,
) -> Promotion:
    forced = []
    with step_errors(spec, "promote", spec.remote_repository(registry)):
        current = registry.manifest_digest(spec.name, spec.release_tag)
        if current not in (None, digest):
            if not force:
                raise StepError(spec.name, "promote", (
                    f"{spec.remote_ref(registry)} already points at {current}; release tags "
                    f"are immutable, refusing to move it to {digest} (--force moves it and "
                    "records the move)"))
            forced.append(f"{spec.release_tag}: {current} -> {digest} at {now()}")
        # The content tag last: once it is there, later runs skip this image. A tag already
        # at the digest is left alone, so a no-op rerun only reads the registry.
        for tag in (spec.release_tag, *aliases, key_tag):
            if (current if tag == spec.release_tag else registry.manifest_digest(spec.name, tag)) \
                    != digest:
                set_tag(engine, registry, spec, digest, tag, image_id)
    return Promotion([spec.release_tag, *aliases, key_tag], forced)



def stage(engine: Engine, registry: Registry, spec: ImageSpec, digest: str, staged_tag: str,
          image_id: str | None = None) -> None:
    """Point the candidate's staged key tag at it (a rerun leaves a tag already there)."""
    with step_errors(spec, "stage", spec.remote_repository(registry)):
        if registry.manifest_digest(spec.name, staged_tag) != digest:
            set_tag(engine, registry, spec, digest, staged_tag, image_id)
