"""What `plan`, `render` and `release` share before any engine is needed: the manifest loaded
and checked, the registry parsed once, the DAG planned and every image rendered. Fails fast,
before a single layer is built."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ngc_builder.errors import InputError, Problem
from ngc_builder.manifest.load import LoadedRelease, load_release
from ngc_builder.manifest.stacks import check_stacks
from ngc_builder.plan.dag import ReleasePlan, plan_release
from ngc_builder.render.ca_bundle import resolve_ca_bundle
from ngc_builder.render.contexts import RenderedImage, render_release
from ngc_builder.services.registry import HttpRegistry, Registry, parse_registry


@dataclass(frozen=True)
class Prepared:
    loaded: LoadedRelease
    plan: ReleasePlan
    rendered: list[RenderedImage]

    def rendered_by_name(self) -> dict[str, RenderedImage]:
        return {image.spec.name: image for image in self.rendered}


def registry_option(address: str | None) -> HttpRegistry | None:
    """--registry parsed once (None: the manifest's), or an input error naming the option."""
    if address is None:
        return None
    try:
        return parse_registry(address)
    except ValueError as exc:
        raise InputError([Problem("--registry", 1, "registry", str(exc))]) from None


def prepare(manifest: Path, root: Path | None, *, registry: Registry | None = None,
            only: Sequence[str] = (), stack_check: bool = True,
            ca_bundle: Path | None = None) -> Prepared:
    loaded = load_release(manifest, root)
    plan = plan_release(loaded, registry)
    unknown = [name for name in only if name not in {i.name for i in plan.images}]
    if unknown:
        raise InputError([Problem("--only", 1, "only", f"no image named {unknown[0]!r}")])
    if stack_check:
        check_stacks(loaded)
    return Prepared(loaded, plan, render_release(loaded, plan, resolve_ca_bundle(ca_bundle)))
