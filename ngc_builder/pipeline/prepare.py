"""What `plan`, `render` and `release` share before any engine is needed: the manifest loaded
and checked, the registry parsed once, the DAG planned, the lock found fresh and every image
rendered from it. Fails fast, before a single layer is built."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ngc_builder.assemble.image import project_revision
from ngc_builder.cache.store import PackageCache
from ngc_builder.errors import InputError, Problem
from ngc_builder.files import DATA_LIMIT, read_text
from ngc_builder.lock.closure import Closure, LockText, Metadata, cached_requires, check_closure
from ngc_builder.lock.deb_closure import cached_controls
from ngc_builder.lock.inputs import shown_path, stale_problems, with_locked_os
from ngc_builder.lock.models import ReleaseLock, load_lock, lock_path
from ngc_builder.manifest.load import LoadedRelease, load_release
from ngc_builder.manifest.platforms import others
from ngc_builder.manifest.stacks import check_stacks
from ngc_builder.plan.dag import ImageSpec, ReleasePlan, plan_release
from ngc_builder.render.contexts import RenderedImage, render_release
from ngc_builder.render.platforms import render_platform
from ngc_builder.services.registry import HttpRegistry, Registry, parse_registry


@dataclass(frozen=True)
class Prepared:
    loaded: LoadedRelease
    plan: ReleasePlan
    lock: ReleaseLock
    rendered: list[RenderedImage]
    # The project's revision when the templates were read: the `revision` label says what the
    # images were rendered from, not what the checkout became while the cache filled.
    revision: str = "unknown"
    # Each other platform an image ships (`linux/arm64`) -> its renders, parents first.
    platforms: dict[str, list[RenderedImage]] = field(default_factory=dict)

    def rendered_by_name(self) -> dict[str, RenderedImage]:
        return {image.spec.name: image for image in self.rendered}

    def platform_renders(self) -> dict[str, dict[str, RenderedImage]]:
        return {platform: {image.spec.name: image for image in renders}
                for platform, renders in self.platforms.items()}


def registry_option(address: str | None) -> HttpRegistry | None:
    """--registry parsed once (None: the manifest's), or an input error naming the option."""
    if address is None:
        return None
    try:
        return parse_registry(address)
    except ValueError as exc:
        raise InputError([Problem("--registry", 1, "registry", str(exc))]) from None


def fresh_lock(loaded: LoadedRelease, plan: ReleasePlan) -> ReleaseLock:
    """The release's lock, or an input error naming each image it no longer fits."""
    path = lock_path(loaded.manifest)
    lock = load_lock(path)
    problems = stale_problems(loaded, plan, lock, path)
    if problems or lock is None:
        raise InputError(problems)
    return lock


def prepare(manifest: Path, root: Path | None, *, registry: Registry | None = None,
            only: Sequence[str] = (), stack_check: bool = True, split: bool = True) -> Prepared:
    loaded = load_release(manifest, root)
    plan = plan_release(loaded, registry)
    unknown = [name for name in only if name not in {i.name for i in plan.images}]
    if unknown:
        raise InputError([Problem("--only", 1, "only", f"no image named {unknown[0]!r}")])
    if stack_check:
        check_stacks(loaded)
    lock = fresh_lock(loaded, plan)
    plan = with_locked_os(plan, lock)
    revision = project_revision(loaded.root)
    shipped = sorted({p for spec in plan.images for p in others(spec.platforms)})
    return Prepared(loaded, plan, lock, render_release(loaded, plan, lock, split), revision,
                    {p: render_platform(loaded, plan, lock, p, split=split) for p in shipped})


def require_closure(loaded: LoadedRelease, plan: ReleasePlan, lock: ReleaseLock,
                    images: list[ImageSpec], cache: PackageCache) -> Closure:
    """Input errors naming each image whose locked wheels or .debs are not its requirements'
    closure, read from the packages in `cache` (images with one it lacks are left unchecked)."""
    path = lock_path(loaded.manifest)
    metadata = Metadata(cached_requires(cache.wheel_path), cached_controls(cache.deb_path))
    where = LockText(shown_path(path, loaded.root), read_text(path, DATA_LIMIT))
    found = check_closure(loaded, plan, lock, images, metadata, where)
    if found.problems:
        raise InputError(found.problems)
    return found
