"""A framework as `frameworks/<name>/framework.yaml` describes it: what its layer installs for
each variant (wheels, and Debian packages per platform), which variants need CUDA, and which
researcher tools it works with."""

from __future__ import annotations

from typing import Annotated

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from pydantic import AfterValidator, Field, model_validator

from ngc_builder.manifest.devel_env import EnvName, EnvTemplate
from ngc_builder.manifest.models import (
    AddonName,
    Identifier,
    Name,
    PackageName,
    PythonRange,
    RequirementTemplate,
    Strict,
    Title,
    ToolName,
)
from ngc_builder.manifest.platforms import HOST_PLATFORM, layer_package, packages_for

LayerPackage = Annotated[str, AfterValidator(layer_package)]


class Framework(Strict):
    name: Name
    title: Title
    # None for a framework without a Python module (its probe has installed_version()).
    import_name: Identifier | None
    # The pip distribution that carries the version; null for OS-packaged frameworks.
    distribution: PackageName | None
    python: PythonRange
    cuda_major: int | None = None
    requirements: dict[Name, list[RequirementTemplate]]
    # Variants that run without CUDA (e.g. jax's "cpu"): they may stand on a bare base.
    cpu_variants: list[Name] = Field(default_factory=list)
    # Debian packages of the layer: one list for every variant, or a list per variant.
    apt_packages: list[LayerPackage] | dict[Name, list[LayerPackage]] = Field(
        default_factory=list)
    # The researcher tools that work with it (a release row may then ask for them).
    tools: list[ToolName] = Field(default_factory=list)
    # NVIDIA's add-ons that work with it (a release row may then ask for them).
    addons: list[AddonName] = Field(default_factory=list)
    # What its devel image sets for extension builds, from the release (manifest/devel_env.py).
    devel_env: dict[EnvName, EnvTemplate] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _has_default_variant(self) -> Framework:
        if "default" not in self.requirements:
            raise ValueError("requirements needs a 'default' variant")
        unknown = sorted(set(self.cpu_variants) - set(self.requirements))
        if unknown:
            raise ValueError(f"cpu_variants names no requirements variant: {unknown}")
        if isinstance(self.apt_packages, dict):
            strangers = sorted(set(self.apt_packages) - set(self.requirements))
            if strangers:
                raise ValueError(f"apt_packages names no requirements variant: {strangers}")
        return self

    def apt_for(self, variant: str, platform: str = HOST_PLATFORM) -> list[str]:
        """The Debian packages the layer of `variant` installs on `platform`."""
        wanted = self.apt_packages
        if isinstance(wanted, dict):
            wanted = wanted.get(variant, [])
        return packages_for(wanted, platform)

    def extras_for(self, variant: str) -> list[str]:
        """The extras of its own distribution `variant` installs: ["cuda13"] for jax[cuda13].
        The runner follows those (and only those) when it checks the framework's libraries."""
        if self.distribution is None:
            return []
        own = canonicalize_name(self.distribution)
        requested = [Requirement(line.replace("{version}", "0"))
                     for line in self.requirements[variant]]
        return sorted({extra for r in requested if canonicalize_name(r.name) == own
                       for extra in r.extras})

    def needs_cuda(self, variant: str) -> bool:
        return self.cuda_major is not None and variant not in self.cpu_variants
