"""Stage 2, plan: the release as a DAG of images (base -> cuda-<stack> -> frameworks)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from .manifest import LoadedRelease
from .models import CudaStack, ImageEntry

LABEL_PREFIX = "org.ngc-builder"
LOCAL_NAMESPACE = "ngc-local"
Kind = Literal["base", "cuda", "framework"]


@dataclass(frozen=True)
class ImageSpec:
    """One node of the build DAG. Registry tags are derived, never stored in templates."""

    name: str
    kind: Kind
    parent: str | None
    release: str
    labels: dict[str, str] = field(default_factory=dict)
    stack: str | None = None
    entry: ImageEntry | None = None

    @property
    def tag(self) -> str:
        """NGC style: <YY.MM>-py3."""
        return f"{self.release}-py3"

    def local_ref(self, render_digest: str) -> str:
        """Where the engine keeps a candidate before it has passed validation: the tag
        carries the render digest, so two releases never overwrite each other's parents."""
        return f"{LOCAL_NAMESPACE}/{self.name}:{self.tag}-{render_digest[:12]}"

    def remote_repository(self, registry: str) -> str:
        return f"{registry.rstrip('/')}/{self.name}"

    def remote_ref(self, registry: str) -> str:
        return f"{self.remote_repository(registry)}:{self.tag}"


@dataclass(frozen=True)
class ReleasePlan:
    release: str
    registry: str
    os_ref: str
    images: list[ImageSpec]

    def get(self, name: str) -> ImageSpec:
        return next(image for image in self.images if image.name == name)

    def select(self, only: list[str]) -> list[ImageSpec]:
        """The images named in `only` plus everything they are built on, in build order."""
        if not only:
            return list(self.images)
        wanted: set[str] = set()
        for name in only:
            node: str | None = name
            while node is not None:
                wanted.add(node)
                node = self.get(node).parent
        return [image for image in self.images if image.name in wanted]


def os_ref(loaded: LoadedRelease) -> str:
    base = loaded.base
    return f"{LOCAL_NAMESPACE}/os-{base.name}:{base.os_version}"


def plan_release(loaded: LoadedRelease, registry: str | None = None) -> ReleasePlan:
    release = loaded.release
    images = [_base_spec(loaded)]
    for stack_name in sorted({image.stack for image in release.images}):
        images.append(_cuda_spec(loaded, stack_name, release.cuda_stacks[stack_name]))
    images += [_framework_spec(loaded, entry) for entry in release.images]
    return ReleasePlan(release.release, registry or release.registry, os_ref(loaded), images)


def _common_labels(loaded: LoadedRelease, name: str) -> dict[str, str]:
    release = loaded.release.release
    return {
        "org.opencontainers.image.title": f"ngc-builder {name}",
        "org.opencontainers.image.version": f"{release}-py3",
        f"{LABEL_PREFIX}.release": release,
        f"{LABEL_PREFIX}.image": name,
        f"{LABEL_PREFIX}.os": loaded.base.name,
        f"{LABEL_PREFIX}.python": loaded.base.python,
    }


def stack_labels(stack_name: str, stack: CudaStack) -> dict[str, str]:
    labels = {f"{LABEL_PREFIX}.stack": stack_name, f"{LABEL_PREFIX}.cuda": stack.cuda}
    for library, wheel in sorted(stack.libraries.items()):
        labels[f"{LABEL_PREFIX}.{library}"] = stack.wheels[wheel]
    return labels


def _base_spec(loaded: LoadedRelease) -> ImageSpec:
    labels = _common_labels(loaded, "base")
    return ImageSpec("base", "base", None, loaded.release.release, labels)


def _cuda_spec(loaded: LoadedRelease, stack_name: str, stack: CudaStack) -> ImageSpec:
    name = f"cuda-{stack_name}"
    labels = {**_common_labels(loaded, name), **stack_labels(stack_name, stack)}
    return ImageSpec(name, "cuda", "base", loaded.release.release, labels, stack_name)


def _framework_spec(loaded: LoadedRelease, entry: ImageEntry) -> ImageSpec:
    name = entry.image_name
    framework = loaded.frameworks[entry.framework].spec
    stack = loaded.release.cuda_stacks[entry.stack]
    labels = {
        **_common_labels(loaded, name),
        **stack_labels(entry.stack, stack),
        "org.opencontainers.image.title": f"{framework.title} {loaded.release.release}",
        f"{LABEL_PREFIX}.framework": framework.name,
        f"{LABEL_PREFIX}.framework.version": entry.version,
    }
    return ImageSpec(name, "framework", f"cuda-{entry.stack}", loaded.release.release,
                     labels, entry.stack, entry)
