"""Plan: the release as a DAG of images (base -> cuda-<stack> -> frameworks), with the
registry they are published to."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from ngc_builder.manifest.devel import devel_name
from ngc_builder.manifest.drivers import minimum_driver
from ngc_builder.manifest.load import LoadedRelease, base_name_of_image, base_name_of_stack
from ngc_builder.manifest.models import BaseImage, CudaStack, ImageEntry
from ngc_builder.manifest.platforms import DEFAULT_PLATFORMS
from ngc_builder.services.registry import Registry, parse_registry, repository

LABEL_PREFIX = "org.ngc-builder"
LOCAL_NAMESPACE = "ngc-local"
Kind = Literal["base", "cuda", "framework", "devel"]


@dataclass(frozen=True)
class ImageSpec:
    """One node of the build DAG. Registry tags are derived, never stored in templates."""

    name: str
    kind: Kind
    parent: str | None
    release: str
    base: str
    labels: dict[str, str] = field(default_factory=dict)
    stack: str | None = None
    entry: ImageEntry | None = None
    # Where it ships: a framework's own list; a shared layer's is every platform above it.
    platforms: tuple[str, ...] = DEFAULT_PLATFORMS
    patch: int | None = None  # of a patch release: its tags say so, its contents do not

    @property
    def tag(self) -> str:
        """NGC style: <YY.MM>-py3."""
        return f"{self.release}-py3"

    @property
    def release_tag(self) -> str:
        """The registry tag of the release it is published in: `tag`, or for a patch release
        `<YY.MM>.<N>-py3`. `tag` stays what the image's own files and labels say."""
        return self.tag if self.patch is None else f"{self.release}.{self.patch}-py3"

    @property
    def shared(self) -> bool:
        """A base or CUDA layer: nothing in it names the release, so a later release whose
        inputs below the frameworks did not move has the same key and tags the same digest."""
        return self.kind in ("base", "cuda")

    @property
    def version(self) -> str:
        """What the image is a version of: the release for a framework image, the OS or CUDA
        version for a shared layer (its `org.opencontainers.image.version`)."""
        return self.labels.get("org.opencontainers.image.version", self.tag)

    def local_ref(self, render_digest: str) -> str:
        """Where the engine keeps a candidate before it has passed validation: the tag
        carries the render digest, so two releases never overwrite each other's parents. A
        shared layer's tag names no release: its children's Dockerfiles name it in FROM."""
        if self.shared:
            return f"{LOCAL_NAMESPACE}/{self.name}:layer-{render_digest[:12]}"
        return f"{LOCAL_NAMESPACE}/{self.name}:{self.tag}-{render_digest[:12]}"

    def remote_repository(self, registry: Registry) -> str:
        return repository(registry, self.name)

    def remote_ref(self, registry: Registry) -> str:
        return f"{self.remote_repository(registry)}:{self.release_tag}"


@dataclass(frozen=True)
class ReleasePlan:
    release: str
    registry: Registry  # parsed once; every registry call of the run goes through it
    os_refs: dict[str, str]
    images: list[ImageSpec]

    def get(self, name: str) -> ImageSpec:
        return next(image for image in self.images if image.name == name)

    def os_ref(self, spec: ImageSpec) -> str:
        """The OS image a base layer is built FROM."""
        return self.os_refs[spec.base]

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


def os_ref(base: BaseImage) -> str:
    return f"{LOCAL_NAMESPACE}/os-{base.name}:{base.os_version}"


def base_image_name(loaded: LoadedRelease, base_name: str) -> str:
    """`base` for the release's default OS, `base-<os>` for the others."""
    return "base" if base_name == loaded.release.base else f"base-{base_name}"


def plan_release(loaded: LoadedRelease, registry: Registry | None = None) -> ReleasePlan:
    """The DAG of the release, published to `registry` (default: the manifest's)."""
    release = loaded.release
    used = _used_bases(loaded)
    images = [_base_spec(loaded, name) for name in used]
    stacks = sorted({image.stack for image in release.images if image.stack is not None})
    images += [_cuda_spec(loaded, name, release.cuda_stacks[name]) for name in stacks]
    frameworks = [_framework_spec(loaded, entry) for entry in release.images]
    images += frameworks + [_devel_spec(spec) for spec in frameworks
                            if spec.entry is not None and spec.entry.devel]
    os_refs = {name: os_ref(loaded.bases[name]) for name in used}
    chosen = registry or parse_registry(release.registry)  # the manifest's was checked on load
    images = [replace(image, patch=release.patch) for image in _with_platforms(images)]
    return ReleasePlan(release.release_id, chosen, os_refs, images)


def _with_platforms(images: list[ImageSpec]) -> list[ImageSpec]:
    """Each shared layer with the platforms of every framework above it, in a stable order."""
    wanted: dict[str, set[str]] = {image.name: set() for image in images}
    by_name = {image.name: image for image in images}
    for image in images:
        if image.entry is None:
            continue
        node: str | None = image.name
        while node is not None:
            wanted[node].update(image.entry.platforms)
            node = by_name[node].parent
    return [replace(image, platforms=tuple(sorted(wanted[image.name]))) for image in images]


def _used_bases(loaded: LoadedRelease) -> list[str]:
    """Bases that some image stands on, the default first, then by name."""
    names = {base_name_of_image(loaded.release, entry) for entry in loaded.release.images}
    default = loaded.release.base
    return [default, *sorted(names - {default})]


def _common_labels(name: str, base: BaseImage, version: str) -> dict[str, str]:
    """Labels every image carries. The release id is only in a framework image's: a shared
    layer is the same image in every release that does not change what is below it."""
    return {
        "org.opencontainers.image.title": f"ngc-builder {name}",
        "org.opencontainers.image.version": version,
        f"{LABEL_PREFIX}.image": name,
        f"{LABEL_PREFIX}.os": base.name,
        f"{LABEL_PREFIX}.python": base.python,
    }


def stack_labels(stack_name: str, stack: CudaStack) -> dict[str, str]:
    labels = {f"{LABEL_PREFIX}.stack": stack_name, f"{LABEL_PREFIX}.cuda": stack.cuda}
    driver = minimum_driver(stack.cuda)
    if driver is not None:
        labels[f"{LABEL_PREFIX}.min-driver"] = driver
    for library, wheel in sorted(stack.libraries.items()):
        labels[f"{LABEL_PREFIX}.{library}"] = stack.wheels[wheel]
    return labels


def _base_spec(loaded: LoadedRelease, base_name: str) -> ImageSpec:
    name = base_image_name(loaded, base_name)
    base = loaded.bases[base_name]
    labels = _common_labels(name, base, f"{base.os}-{base.os_version}")
    return ImageSpec(name, "base", None, loaded.release.release, base_name, labels)


def _cuda_spec(loaded: LoadedRelease, stack_name: str, stack: CudaStack) -> ImageSpec:
    name = f"cuda-{stack_name}"
    base_name = base_name_of_stack(loaded.release, stack_name)
    labels = {**_common_labels(name, loaded.bases[base_name], stack.cuda),
              **stack_labels(stack_name, stack)}
    return ImageSpec(name, "cuda", base_image_name(loaded, base_name), loaded.release.release,
                     base_name, labels, stack_name)


def _framework_spec(loaded: LoadedRelease, entry: ImageEntry) -> ImageSpec:
    name = entry.image_name
    framework = loaded.frameworks[entry.framework].spec
    base_name = base_name_of_image(loaded.release, entry)
    release = loaded.release.release
    labels = {
        **_common_labels(name, loaded.bases[base_name], f"{release}-py3"),
        "org.opencontainers.image.title": f"{framework.title} {release}",
        f"{LABEL_PREFIX}.release": release,
        f"{LABEL_PREFIX}.framework": framework.name,
        f"{LABEL_PREFIX}.framework.version": entry.version,
        f"{LABEL_PREFIX}.gpu-targets": ",".join(loaded.release.targets_of(entry)),
    }
    if entry.addons:
        labels[f"{LABEL_PREFIX}.addons"] = ",".join(f"{name}=={version}" for name, version
                                                   in sorted(entry.addons.items()))
    if entry.stack is None:
        parent = base_image_name(loaded, base_name)
    else:
        parent = f"cuda-{entry.stack}"
        labels.update(stack_labels(entry.stack, loaded.release.cuda_stacks[entry.stack]))
    return ImageSpec(name, "framework", parent, release, base_name, labels, entry.stack, entry)


def _devel_spec(framework: ImageSpec) -> ImageSpec:
    """`<image>-devel`, FROM the framework image: its own repository, the same tags. The
    row's size baseline is the framework image's, not this one's."""
    assert framework.entry is not None
    name = devel_name(framework.entry)
    title = framework.labels["org.opencontainers.image.title"]
    labels = {**framework.labels, "org.opencontainers.image.title": f"{title} (devel)",
              f"{LABEL_PREFIX}.image": name, f"{LABEL_PREFIX}.devel": "true"}
    entry = framework.entry.model_copy(update={"size_baseline": None})
    return replace(framework, name=name, kind="devel", parent=framework.name, labels=labels,
                   entry=entry)


def optional_platform(plan: ReleasePlan, spec: ImageSpec, platform: str) -> bool:
    """May `spec` ship without `platform`? A framework says so in `optional_platforms`; a
    shared layer may when every image above it that ships the platform may."""
    if spec.entry is not None:
        return platform in spec.entry.optional_platforms
    above = [image.entry for image in plan.images if image.entry is not None
             and platform in image.entry.platforms and spec.name in ancestors(plan, image)]
    return bool(above) and all(platform in entry.optional_platforms for entry in above)


def ancestors(plan: ReleasePlan, spec: ImageSpec) -> set[str]:
    """The names of the layers `spec` is built on."""
    found, parent = set(), spec.parent
    while parent is not None:
        found.add(parent)
        parent = plan.get(parent).parent
    return found
