"""The SquashFS step of a publish: for an image whose row asks for it (`squashfs: true`), the
SquashFS of each platform's manifest beside it in the registry before any tag moves, made from
the engine's image once (a rerun finds it there) and signed with the image."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from ngc_builder.errors import InputError, Problem, StepError
from ngc_builder.manifest.models import ImageEntry
from ngc_builder.manifest.platforms import HOST_PLATFORM
from ngc_builder.pipeline.platforms import shipped
from ngc_builder.pipeline.run import Run
from ngc_builder.plan.dag import ImageSpec
from ngc_builder.publish.squashfs import SquashfsError, make_squashfs
from ngc_builder.publish.squashfs_artifact import Found, find_squashfs, push_squashfs, squashfs_tag
from ngc_builder.records.record import ImageRecord, SquashfsRecord
from ngc_builder.render.repro import source_epoch
from ngc_builder.services.engine import image_exists
from ngc_builder.services.registry import HttpRegistry, RegistryError

Target = tuple[str, str, str]  # platform, its manifest's digest, its image on the engine


def wants_squashfs(spec: ImageSpec) -> bool:
    return spec.entry is not None and spec.entry.squashfs


def check_squashfs_tools(selected: list[ImageSpec], manifest: Path, rows: list[ImageEntry],
                         which: Callable[[str], str | None] = shutil.which) -> None:
    """Refused before anything is built: a row asks for a SquashFS and this host cannot make
    one (the push would fail after hours of builds)."""
    asking = [spec.entry for spec in selected if wants_squashfs(spec)]
    if asking and which("mksquashfs") is None:
        index = next((i for i, row in enumerate(rows) if row == asking[0]), 0)
        raise InputError([Problem(str(manifest), 1, f"images[{index}].squashfs",
                                  "mksquashfs is not installed here (squashfs-tools; "
                                  "`make runtime`)")])


def squashfs_targets(spec: ImageSpec, record: ImageRecord, digest: str) -> list[Target]:
    """Each platform's manifest: the image's own, or for an index the host's and the others'."""
    host = record.push.host_digest or digest
    return [(HOST_PLATFORM, host, record.build.image_id or ""),
            *((platform, entry.digest, entry.build.image_id or "")
              for platform, entry in sorted(shipped(spec, record).items()) if entry.digest)]


def attach_squashfs(run: Run, spec: ImageSpec, record: ImageRecord, digest: str) -> None:
    """The SquashFS of every platform's manifest of `digest` in the registry (made and pushed
    where missing), in the record."""
    if not wants_squashfs(spec):
        return
    run.state.doing(spec.name, "squashfs")
    made: list[SquashfsRecord] = []
    earlier = {entry.tag: entry for entry in record.push.squashfs}  # staged, then promoted
    try:
        for platform, manifest, image in squashfs_targets(spec, record, digest):
            made.append(_one(run, spec, platform, manifest, image, earlier))
    except (SquashfsError, RegistryError) as exc:
        record.push.status, record.push.error = "failed", f"squashfs: {exc}"
        raise StepError(spec.name, "squashfs", str(exc)) from None
    record.push.squashfs = made
    for entry in made:
        run.ui.step(spec.name, f"SquashFS {entry.platform} "
                    f"{spec.remote_repository(run.registry)}:{entry.tag} "
                    f"({entry.size / 1e9:.2f} GB)")


def _one(run: Run, spec: ImageSpec, platform: str, manifest: str, image: str,
         earlier: dict[str, SquashfsRecord]) -> SquashfsRecord:
    found = find_squashfs(run.registry, spec.name, manifest)
    if isinstance(found, Found):  # made by an earlier step or run: its figures kept
        kept = earlier.get(squashfs_tag(manifest))
        return kept if kept is not None and kept.size == found.size else SquashfsRecord(
            platform=platform, image=manifest, tag=squashfs_tag(manifest), size=found.size)
    registry = run.registry
    if not isinstance(registry, HttpRegistry):
        raise SquashfsError("this registry takes no streamed upload")
    if not image or not image_exists(run.engine, image):
        raise SquashfsError(f"{platform}: the image is not on this host's engine to read it")
    lock = run.inputs.lock
    epoch = source_epoch(lock.os if lock else {}, spec.base)
    with tempfile.TemporaryDirectory(prefix="ngc-squashfs-") as scratch:
        squash = make_squashfs(run.engine, image, Path(scratch) / "image.sqfs", epoch,
                               Path(scratch))
        push_squashfs(registry, spec.name, manifest, squash)
    return SquashfsRecord(platform=platform, image=manifest, tag=squashfs_tag(manifest),
                          size=squash.size, seconds=round(squash.seconds, 1))
