"""Decisions: what a release run would do for each image (build / reuse / skip, push / promote)
and why: which input changed since the recorded build, or which tag the registry holds."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any

from ngc_builder.plan.dag import ImageSpec, ReleasePlan
from ngc_builder.records.record import ReleaseRecord
from ngc_builder.render.content_keys import ImageKey, changes
from ngc_builder.services.engine import Engine, find_built
from ngc_builder.services.registry import RegistryError


@dataclass(frozen=True)
class Decision:
    image: str
    ref: str  # the release tag it is published as
    parent: str
    key: str
    build: str  # build | reuse | pull (a staged candidate) | skip
    push: str  # push+promote | promote | none
    reasons: list[str] = field(default_factory=list)
    platforms: list[str] = field(default_factory=list)  # what its tag's index holds

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def decide(plan: ReleasePlan, keys: dict[str, ImageKey], record: ReleaseRecord | None,
           engine: Engine | None) -> list[Decision]:
    """`record`: this release's, or an earlier release's (then each reason says since when)."""
    building: set[str] = set()
    decisions = []
    for spec in plan.images:
        decision = _decide(plan, spec, keys[spec.name], record, engine, building)
        if decision.build != "skip":
            building.add(spec.name)
        decisions.append(decision)
    return decisions


def _decide(plan: ReleasePlan, spec: ImageSpec, key: ImageKey, record: ReleaseRecord | None,
            engine: Engine | None, building: set[str]) -> Decision:
    made = partial(Decision, spec.name, spec.remote_ref(plan.registry),
                   spec.parent or plan.os_ref(spec), key.key, platforms=list(spec.platforms))
    try:
        published = plan.registry.manifest_digest(spec.name, key.tag)
        release_tag = plan.registry.manifest_digest(spec.name, spec.release_tag)
        staged = None if published else plan.registry.manifest_digest(spec.name, key.staged_tag)
    except RegistryError as exc:
        return made("build", "push+promote",
                    [f"registry unreachable, cannot tell what it holds: {exc}"])
    if published is not None:
        return made("skip", *_promotion(published, release_tag))
    if staged is not None:
        return made("pull", "promote", [f"registry holds staged-... at {staged} (pushed "
                                        "with --no-promote): pulled, validated, promoted"])
    previous = record.images.get(spec.name) if record else None
    reasons = changes(previous.build.inputs if previous else None, key, spec.parent)
    if previous is not None and record is not None and record.release != plan.release:
        reasons = [f"since {record.release}: {reason}" for reason in reasons]
    if spec.parent in building and not any(r.startswith("parent") for r in reasons):
        reasons.insert(0, f"parent {spec.parent} is being built")
    local = engine is not None and find_built(engine, key.key) is not None
    how = "reuse" if local else "build"
    if local:
        reasons = ["a local image was built from this key earlier", *reasons]
    if not reasons:
        reasons = ["inputs unchanged since the recorded build, but not in the registry yet"]
    if release_tag is not None:
        reasons.append(f"release tag holds {release_tag}: moving it needs --force")
    if spec.entry is not None and spec.entry.expect_failure is not None:
        return made(how, "none",
                    [*reasons, f"expected to fail, never pushed: {spec.entry.expect_failure}"])
    return made(how, "push+promote", reasons)


def _promotion(published: str, release_tag: str | None) -> tuple[str, list[str]]:
    held = f"registry holds key-... at {published}"
    if release_tag == published:
        return "none", [held, "release tag already there"]
    if release_tag is None:
        return "promote", [held, "release tag missing: set it"]
    return "promote", [held, f"release tag at {release_tag}: moving it needs --force"]
