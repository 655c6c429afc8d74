"""Content keys: what an image is made of, hashed, so work is skipped when nothing changed.

An image's key hashes its rendered Dockerfile, every file of its build context, its labels
(the only build arguments we pass) and its parent's key. Chaining the parent's *key* (not its
registry digest) makes every key computable before anything is built or pushed: a no-op rerun
on a fresh machine finds the same keys. A base image's parent is the OS recipe (the base-image
definition and the OS reference it is obtained as).

The components are kept in the release record, so `plan` can say which input changed.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from ngc_builder.lock.diff import changed_versions, summary, versions
from ngc_builder.lock.models import ReleaseLock
from ngc_builder.manifest.load import LoadedRelease
from ngc_builder.plan.dag import ReleasePlan
from ngc_builder.render.contexts import RUNNER_NAME, RenderedImage

KEY_TAG_PREFIX = "key-"
STAGED_TAG_PREFIX = "staged-"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class ImageKey:
    key: str
    dockerfile_body: str  # the Dockerfile without its FROM lines (they name the parent)
    files: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    parent: str = ""
    locked: dict[str, str] = field(default_factory=dict)  # package -> version, for reasons

    @property
    def tag(self) -> str:
        """The registry tag that proves this key was published (after every gate passed)."""
        return f"{KEY_TAG_PREFIX}{self.key}"

    @property
    def staged_tag(self) -> str:
        """The tag of a candidate pushed but not promoted (`release --no-promote`): a later
        run, on any host, finds it by its key, pulls it and gates it again."""
        return f"{STAGED_TAG_PREFIX}{self.key}"

    def inputs(self) -> dict[str, Any]:
        return asdict(self)


# What the layers above the OS install (each in its own Dockerfile and lock, so in its own
# key): a base image's key must not move when a -devel image's package list does.
LAYER_PACKAGES = {"apt_packages", "cuda_apt_packages", "devel_apt_packages"}


# How the builder makes an image of given inputs, in every key through its OS's: raised when
# the same inputs start to give another image, so that one made before (on an engine, in a
# registry under its key tag) is not taken for one made now. 2: the config written again at
# the lock's epoch (assemble/imageconfig.py), 2026-11-29.
IMAGE_FORMAT = 2


def os_key(loaded: LoadedRelease, base_name: str, os_ref: str) -> str:
    recipe = loaded.bases[base_name].model_dump(mode="json", exclude=LAYER_PACKAGES)
    return sha256(json.dumps({"os": os_ref, "recipe": recipe, "format": IMAGE_FORMAT},
                             sort_keys=True).encode())


def image_key(rendered: RenderedImage, parent_key: str,
              locked: dict[str, str] | None = None,
              platforms: dict[str, str] | None = None) -> ImageKey:
    body = "".join(line for line in rendered.dockerfile.splitlines(keepends=True)
                   if not line.lstrip().upper().startswith("FROM "))
    files = {name: sha256(content) for name, content in sorted(rendered.files.items())}
    labels = dict(sorted(rendered.spec.labels.items()))
    parts: dict[str, Any] = {"dockerfile": sha256(rendered.dockerfile.encode()),
                             "files": files, "labels": labels, "parent": parent_key}
    if platforms:  # an image of the host platform alone keeps the key it always had
        parts["platforms"] = platforms
    whole = json.dumps(parts, sort_keys=True)
    # The lock reaches the key through the Dockerfile and requirements.lock; `locked` only
    # lets a plan say which packages moved.
    return ImageKey(sha256(whole.encode()), sha256(body.encode()), files, labels, parent_key,
                    dict(locked or {}))


def content_keys(
    loaded: LoadedRelease, plan: ReleasePlan, rendered: dict[str, RenderedImage],
    lock: ReleaseLock | None = None,
    other_platforms: dict[str, dict[str, RenderedImage]] | None = None,
) -> dict[str, ImageKey]:
    """Keys of every planned image, parents first (plan order is build order). An image that
    ships other platforms (`other_platforms`: platform -> its renders) hashes each one's
    render and lock too: an arm64 wheel that moves alone changes the key."""
    keys: dict[str, ImageKey] = {}
    for spec in plan.images:
        parent = (os_key(loaded, spec.base, plan.os_ref(spec)) if spec.parent is None
                  else keys[spec.parent].key)
        locked = versions(lock.for_image(spec.name)) if lock is not None else None
        parts = {platform: platform_part(renders[spec.name], lock)
                 for platform, renders in sorted((other_platforms or {}).items())
                 if spec.name in renders and lock is not None}
        keys[spec.name] = image_key(rendered[spec.name], parent, locked, parts)
    return keys


def platform_part(rendered: RenderedImage, lock: ReleaseLock) -> str:
    """What one other platform adds to an image's key: its render, its locked packages and,
    for a base layer, its OS lock."""
    closure = lock.of_platform(rendered.platform)
    entry = closure.images.get(rendered.spec.name)
    os_lock = closure.os.get(rendered.spec.base) if rendered.spec.parent is None else None
    return sha256(json.dumps({
        "dockerfile": sha256(rendered.dockerfile.encode()),
        "files": {name: sha256(content) for name, content in sorted(rendered.files.items())},
        "lock": None if entry is None else entry.model_dump(mode="json"),
        "os": None if os_lock is None else os_lock.digest()}, sort_keys=True).encode())


def changes(previous: dict[str, Any] | None, current: ImageKey,
            parent_name: str | None) -> list[str]:
    """Why ``current`` differs from the inputs an earlier run recorded, one reason per line."""
    if not previous:
        return ["no earlier build recorded"]
    reasons = []
    if previous.get("parent") != current.parent:
        reasons.append(f"parent {parent_name or 'OS image'} changed")
    if previous.get("dockerfile_body") != current.dockerfile_body:
        reasons.append("Dockerfile changed")
    moved = _lock_changes(previous.get("locked"), current.locked)
    if moved:
        reasons.append(f"lock: {summary(moved)}")
    reasons += _file_changes(previous.get("files") or {}, current.files)
    reasons += _label_changes(previous.get("labels") or {}, current.labels)
    return reasons


def _lock_changes(before: dict[str, str] | None, after: dict[str, str]) -> list[str]:
    if before is None:  # recorded before images were locked
        return []
    return changed_versions(before, after)


def _file_changes(before: dict[str, str], after: dict[str, str]) -> list[str]:
    changed = sorted(name for name in before.keys() | after.keys()
                     if before.get(name) != after.get(name))
    runner = [name for name in changed if name.startswith(f"{RUNNER_NAME}/")]
    reasons = [f"{name} {_how(before, after, name)}" for name in changed if name not in runner]
    if runner:
        reasons.append(f"validation runner changed ({len(runner)} files)")
    return reasons


def _how(before: dict[str, str], after: dict[str, str], name: str) -> str:
    if name not in before:
        return "added"
    return "removed" if name not in after else "changed"


def _label_changes(before: dict[str, str], after: dict[str, str]) -> list[str]:
    return [f"label {name}: {before.get(name, '(none)')} -> {after.get(name, '(none)')}"
            for name in sorted(before.keys() | after.keys())
            if before.get(name) != after.get(name)]
