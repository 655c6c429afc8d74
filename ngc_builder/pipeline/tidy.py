"""What a release leaves on the build host's engine once the registry holds its images.

Kept: every image another image of the release is built FROM, on every platform (a month's
framework bump rebuilds pytorch on the same cuda-cu13: its parent is there, no pull), and the
OS images. Dropped as soon as it is published: an image nothing is built on (the frameworks'
default and devel tags, GBs each), every platform of it: the registry holds it, and the next
run finds it there by its content key. A fresh 26.12 release left 34 GB of such images.
Only what this run built is dropped: an image it found on the engine (built from the same key
by another run, pulled by a person) is left as it was found. And only the tags this run makes
(its build's local ref, its pushes' tags) are removed: a build the engine's cache answers gets
the very ID an earlier image has, and another tag on it (a person's, another run's) keeps it.
The builder's own image of it goes too (untagged, by the ID its build recorded: the same
layers under the config as built).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

import docker.errors
import requests

from ngc_builder.pipeline import reuse
from ngc_builder.pipeline.run import Run
from ngc_builder.plan.dag import ImageSpec
from ngc_builder.records.record import ImageRecord
from ngc_builder.services.engine import Engine

GB = 1e9


def is_parent(run: Run, name: str) -> bool:
    return any(spec.parent == name for spec in run.inputs.plan.images)


def drop_published(run: Run, spec: ImageSpec, record: ImageRecord) -> None:
    """`spec`'s local images, every platform, once published; kept when it is a parent."""
    if record.push.status != "ok" or not record.push.digest or is_parent(run, spec.name):
        return
    engine = run.engine
    ours = _own_tags(run, spec)
    try:
        # What its own layers held: its parent's stay (a parent is kept).
        freed = sum(drop(engine, image_id, ours, built_id) - _size(engine, parent_id)
                    for image_id, built_id, parent_id in _with_parents(run, spec, record)
                    if image_id)
    except (docker.errors.DockerException, requests.RequestException) as exc:
        run.ui.line(spec.name, f"note: its local image stays ({exc.__class__.__name__}: "
                               f"{exc}); the registry holds it")
        return
    if freed:
        run.ui.step(spec.name, f"dropped its local images ({freed / GB:.2f} GB): published, "
                               "and nothing is built on it")


def _with_parents(run: Run, spec: ImageSpec,
                  record: ImageRecord) -> list[tuple[str | None, str | None, str | None]]:
    """Each platform's local image of `spec` this run built, the builder's own image of it,
    and its parent's there."""
    parent = run.state.record.images.get(spec.parent or "")
    host = (None if record.build.reused else record.build.image_id, record.build.built_id,
            parent.build.image_id if parent else None)
    return [host, *((entry.build.image_id, entry.build.built_id, _platform_id(parent, platform))
                     for platform, entry in record.platforms.items() if not entry.build.reused)]


@dataclass(frozen=True)
class OwnTags:
    """The tags a run makes for one image: its build's local refs (every platform) and its
    pushes' tags in its remote repository."""

    refs: frozenset[str]
    repository: str

    def made(self, tag: str) -> bool:
        return tag in self.refs or tag.startswith((f"{self.repository}:",
                                                   f"{self.repository}@"))


def _own_tags(run: Run, spec: ImageSpec) -> OwnTags:
    refs = {run.inputs.rendered[spec.name].local_ref}
    refs |= {inputs.renders[spec.name].local_ref for inputs in run.inputs.platforms.values()
             if spec.name in inputs.renders}
    return OwnTags(frozenset(refs), spec.remote_repository(run.registry))


def _platform_id(parent: ImageRecord | None, platform: str) -> str | None:
    entry = parent.platforms.get(platform) if parent is not None else None
    return entry.build.image_id if entry is not None else None


def _size(engine: Engine, image_id: str | None) -> int:
    if not image_id:
        return 0
    try:
        return int(engine.api.inspect_image(image_id).get("Size") or 0)
    except docker.errors.ImageNotFound:
        return 0


def drop(engine: Engine, image_id: str, ours: OwnTags, built_id: str | None = None) -> int:
    """The tags of `image_id` this run made removed, then the image unless another tag holds
    it, and the builder's own image of it (`built_id`); its size, 0 when it was not there or
    stays."""
    try:
        found = engine.api.inspect_image(image_id)
    except docker.errors.ImageNotFound:
        return 0
    tags = found.get("RepoTags") or []
    for tag in tags:
        if ours.made(tag):
            engine.api.remove_image(tag)
    if not all(ours.made(tag) for tag in tags):
        return 0
    # A pushed image is still held by its digest references (`repo@sha256:...`) once its
    # last tag is gone: removing it by ID takes those too.
    if reuse.exists(engine, image_id):
        engine.api.remove_image(image_id)
    if built_id and built_id != image_id:
        _drop_untagged(engine, built_id)
    return int(found.get("Size") or 0)


def _drop_untagged(engine: Engine, image_id: str) -> None:
    """The builder's own image (untagged, the same layers under the config as built) and with
    it its intermediates; kept if someone tagged it or builds on it (the engine refuses)."""
    with contextlib.suppress(docker.errors.DockerException, requests.RequestException):
        tags = engine.api.inspect_image(image_id).get("RepoTags") or []
        if not [tag for tag in tags if tag != "<none>:<none>"]:
            engine.api.remove_image(image_id)


def left_behind(run: Run, images: list[ImageSpec], cache_root: Path) -> str:
    """One line: what this release keeps on the engine (and why), and the package cache."""
    engine = run.services.engine
    kept = [spec.name for spec in images if _local(engine, run.state.record.images[spec.name])]
    cache = _tree_bytes(cache_root)
    parents = [name for name in kept if is_parent(run, name)]
    others = [name for name in kept if name not in parents]
    line = (f"left on the engine: {len(parents)} parent images as the next build's layer "
            f"cache ({', '.join(parents) or 'none'})")
    if others:
        line += f", {len(others)} not published ({', '.join(others)})"
    return line + f"; the package cache holds {cache / GB:.2f} GB"


def _local(engine: Engine, record: ImageRecord) -> bool:
    return bool(record.build.image_id) and reuse.exists(engine, record.build.image_id or "")


def _tree_bytes(folder: Path) -> int:
    if not folder.is_dir():
        return 0
    return sum(path.stat().st_size for path in folder.rglob("*")
               if path.is_file() and not path.is_symlink())
