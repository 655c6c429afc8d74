"""The catalog of one release from its sources: every image, published or not, with its
components (from its labels), tags, full digest, validation, packages and package diff."""

from __future__ import annotations

from ngc_builder.catalog import diff, verdicts
from ngc_builder.catalog.model import (
    EXPECTED_FAILURE,
    NOT_PUBLISHED,
    PUBLISHED,
    Catalog,
    Component,
    Image,
)
from ngc_builder.catalog.source import Row, Sources
from ngc_builder.manifest.platforms import HOST_PLATFORM
from ngc_builder.records.archive import ArchivedImage
from ngc_builder.records.record import ImageRecord

PREFIX = "org.ngc-builder."
# Components table: (shown as, label key under org.ngc-builder.)
COMPONENTS = (("Python", "python"), ("OS", "os"), ("CUDA stack", "stack"), ("CUDA", "cuda"),
              ("CUDA runtime", "cudart"), ("cuBLAS", "cublas"), ("cuDNN", "cudnn"),
              ("NCCL", "nccl"), ("minimum driver", "min-driver"), ("GPU targets", "gpu-targets"),
              ("NVIDIA add-ons", "addons"))


def build_catalog(sources: Sources) -> Catalog:
    archived = sources.archived
    return Catalog(sources.release, archived.registry, archived.revision, sources.previous,
                   sources.files(), tuple(image(sources, name) for name in names(sources)))


def names(sources: Sources) -> list[str]:
    """Published images in archive order, then the manifest's other rows, then any other
    image the record holds."""
    found = list(sources.archived.images)
    found += [row.name for row in sources.manifest.rows if row.name not in found]
    if sources.record is not None:
        found += [name for name in sources.record.images if name not in found]
    return found


def image(sources: Sources, name: str) -> Image:
    published = sources.archived.images.get(name)
    record = sources.image_record(name)
    row = sources.manifest.row(name)
    labels = dict(published.labels if published else record.labels if record else {})
    labels = labels or planned_labels(sources, row)
    state = _state(published, record, row)
    packages = diff.manifest_file(sources, name, record)
    reason = (row.expect_failure if row else None) or (record.expect_failure if record else None)
    return Image(
        name=name, kind=record.kind if record else _kind(name), state=state,
        title=labels.get("org.opencontainers.image.title", name),
        framework=_label(labels, "framework"),
        framework_version=_label(labels, "framework.version"),
        python=_label(labels, "python"), os=_label(labels, "os"), cuda=_label(labels, "cuda"),
        min_driver=_label(labels, "min-driver"),
        gpu_targets=tuple(t for t in _label(labels, "gpu-targets").split(",") if t != "-"),
        repository=f"{sources.archived.registry}/{name}",
        digest=published.digest if state == PUBLISHED and published else None,
        tags=_tags(sources, published, record) if state == PUBLISHED else (),
        components=_components(labels), labels=tuple(Component(k, v) for k, v in
                                                      sorted(labels.items())),
        size_bytes=record.build.size_bytes if record else None,
        validation=verdicts.validation(sources, name, record),
        packages=diff.listed(packages), diff=diff.against_previous(sources, name, packages),
        failure=None if state == PUBLISHED else verdicts.failure(sources, reason, record),
        platforms=_platforms(record, row))


def _platforms(record: ImageRecord | None, row: Row | None) -> tuple[str, ...]:
    """What the run shipped (not what it left out or failed), else what the manifest lists."""
    if record is not None and record.platforms:
        return (HOST_PLATFORM, *sorted(
            platform for platform, entry in record.platforms.items() if entry.left_out is None
            and (entry.validation.verdict == "pass" or entry.digest is not None)))
    listed = row.platforms if row is not None else ()
    return (HOST_PLATFORM, *sorted(set(listed) - {HOST_PLATFORM}))


def planned_labels(sources: Sources, row: Row | None) -> dict[str, str]:
    """What the manifest says of a row nothing was recorded for."""
    if row is None:
        return {}
    stack = sources.manifest.stacks.get(row.stack or "") or {}
    labels = {"framework": row.framework, "framework.version": row.version,
              "os": row.base or str(stack.get("base") or sources.manifest.base)}
    if row.stack:
        labels |= {"stack": row.stack, "cuda": str(stack.get("cuda", "-"))}
    targets = row.gpu_targets or (sources.manifest.gpu_targets if row.stack else ())
    if targets:
        labels["gpu-targets"] = ",".join(targets)
    return {PREFIX + key: value for key, value in labels.items()}


def _state(published: ArchivedImage | None, record: ImageRecord | None,
           row: Row | None) -> str:
    if published is not None and published.digest:
        return PUBLISHED
    expected = (row is not None and row.expect_failure) or (
        record is not None and record.expect_failure)
    return EXPECTED_FAILURE if expected else NOT_PUBLISHED


def _kind(name: str) -> str:
    if name == "base" or name.startswith("base-"):
        return "base"
    return "cuda" if name.startswith("cuda-") else "framework"


def _label(labels: dict[str, str], key: str) -> str:
    return labels.get(PREFIX + key) or "-"


def _components(labels: dict[str, str]) -> tuple[Component, ...]:
    framework = labels.get(PREFIX + "framework")
    found = [Component(framework, _label(labels, "framework.version"))] if framework else []
    found += [Component(shown, labels[PREFIX + key].replace(",", ", "))
              for shown, key in COMPONENTS if labels.get(PREFIX + key)]
    return tuple(found)


def _tags(sources: Sources, published: ArchivedImage | None,
          record: ImageRecord | None) -> tuple[str, ...]:
    """The release tag first, then the other tags pointing at the digest."""
    release_tag = f"{sources.release}-py3"
    tags = {release_tag}
    if published is not None and published.key:
        tags.add(f"key-{published.key}")
    if record is not None:
        tags.update(record.push.promoted)
    return (release_tag, *sorted(tags - {release_tag}))
