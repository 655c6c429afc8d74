"""The install steps a locked image runs: pip from the cache's index with every hash checked,
apt from the cache's flat repository of exactly the locked .debs. The cache is named
`ngc-cache` (a name that exists only inside builds), so no address of the build host, no
CA bundle and no proxy setting is written into an image; pip and apt in the published image
keep their defaults (PyPI, the Debian mirror)."""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from ngc_builder.cache.address import BUILD_HOST_NAME, build_url
from ngc_builder.cache.apt_repo import install_command, repo_path
from ngc_builder.lock.models import AptPackage, PipPackage
from ngc_builder.manifest.platforms import HOST_PLATFORM


def requirements_lock(packages: list[PipPackage]) -> str:
    return "".join(f"{package.requirement()}\n" for package in packages)


def _pip(requirements: str, *options: str) -> str:
    return (f"pip install --no-cache-dir {' '.join(options)}--require-hashes "
            f"--index-url {build_url()}simple/ --trusted-host {BUILD_HOST_NAME} -r {requirements}")


def pip_install(lock_file: str, packages: list[PipPackage]) -> str:
    """Shell text after `RUN `: the locked wheels (those of earlier install layers are already
    there), then proof that they are what is installed."""
    check = f"python -m ngc_runner.lockcheck {lock_file}"
    if not packages:
        return check
    return f"{_pip(lock_file)} \\\n && {check}"


# A big install is split into several layers (docs/performance.md, "Several layers per
# install"), so the engine gzips and uploads them on every core and a pull fetches them in
# parallel. The split follows what moves together: the wheels the manifest pins that share a
# version were released together (CUDA's toolkit components, a framework's own wheels), so
# each such family is one layer. Layers are a chain, so a bump of one family rebuilds (and
# pushes again) that family's layer and the ones after it, never the ones before: families go
# in the order of their names, as nothing tells which moves least. Each family's requirements
# are in its RUN line itself (so its cache key), installed with --no-deps; the final layer
# installs the rest of the lock and proves the whole of it.
def families(packages: list[PipPackage], pinned: Mapping[str, str]) -> list[list[PipPackage]]:
    """The locked wheels at the version `pinned` names for them (names and versions compared
    as pip does), one group per version, in the order of their names."""
    wanted = {canonicalize_name(name): _version(version) for name, version in pinned.items()}
    grouped: dict[object, list[PipPackage]] = {}
    for package in sorted(packages, key=lambda locked: locked.name):
        version = wanted.get(canonicalize_name(package.name))
        if version is not None and version == _version(package.version):
            grouped.setdefault(version, []).append(package)
    return list(grouped.values())


def own_wheels(packages: list[PipPackage], requirements: list[str]) -> dict[str, str]:
    """A framework's own release, from its requirement lines pinned at the row's version
    (`jax[cuda13]==0.12.0`, `jaxlib==0.12.0`): the locked wheels at that version named there
    or named after one of them (jax-cuda13-plugin, jax-cuda13-pjrt), not a dependency that
    happens to share the version."""
    pins = {canonicalize_name(req.name): _version(str(spec.version))
            for req in map(_requirement, requirements) if req is not None
            for spec in req.specifier if spec.operator == "=="}
    return {package.name: package.version for package in packages
            if any(canonicalize_name(package.name).startswith(name) and
                   _version(package.version) == version for name, version in pins.items())}


def _requirement(line: str) -> Requirement | None:
    try:
        return Requirement(line)
    except InvalidRequirement:
        return None


def _version(text: str) -> object:
    """A version as pip compares it (`2.15` is `2.15.0`), its local label aside; the text
    itself when it is not a version."""
    try:
        return Version(Version(text).public)
    except InvalidVersion:
        return text


def family_install(family: list[PipPackage]) -> str:
    """Shell text after `RUN ` for one family's layer (lock values are pattern-checked and
    quoted all the same)."""
    lines = "".join(f" \\\n    {shlex.quote(package.requirement())}" for package in family)
    return f"printf '%s\\n'{lines} \\\n  | {_pip('/dev/stdin', '--no-deps ')}"


# Another platform's wheels, installed on the build host (assemble/wheel_install.py) and their
# bytecode compiled natively (assemble/host_compile.py), in this tar beside the Dockerfile, which
# ADDs it: neither pip nor the compiler runs emulated. The base layer's tar is the venv itself.
VENV_TAR = "venv.tar"


def unpacked_install(lock_file: str) -> str:
    """Shell text after `RUN ` once the venv tar is in: proof that the installed
    distributions are the locked ones (the layer's only emulated Python)."""
    return f"python -m ngc_runner.lockcheck {lock_file}"


def apt_install(packages: list[AptPackage], requested: list[str]) -> str | None:
    """Shell text after `RUN ` for the locked .debs, None when the layer installs none."""
    if not packages:
        return None
    return install_command(repo_path(packages), packages, requested)


def venv_tars(packages: list[PipPackage], context: dict[str, object]) -> dict[str, list[str]]:
    """Another platform's tars, each of the wheels it installs: a tar per family (unless the
    render is one install layer), then the rest; none empty."""
    split = _split(packages, context)
    tars = {f"venv-{number}.tar": [package.name for package in family]
            for number, family in enumerate(split, start=1)}
    in_family = {name for names in tars.values() for name in names}
    rest = [package.name for package in packages if package.name not in in_family]
    return {**tars, VENV_TAR: rest} if rest else tars


def _split(packages: list[PipPackage], context: dict[str, object]) -> list[list[PipPackage]]:
    """The families of `context["pinned"]`, none when the render is one install layer."""
    pinned = context.get("pinned") or {}
    assert isinstance(pinned, Mapping)
    return families(packages, pinned) if context.get("split", True) else []


def wheel_install(lock_file: str, packages: list[PipPackage],
                  context: dict[str, object]) -> dict[str, object]:
    """The template's `pip_install`, `install_layers` (each family's layer before it, for the
    families of `context["pinned"]`; none when `context` asks for one install layer, the
    benchmark's baseline) and `unpacked` (the venv tars it ADDs first, if any)."""
    if context["platform"] == HOST_PLATFORM or context.get("emulated"):
        split = _split(packages, context)
        return {"pip_install": pip_install(lock_file, packages), "unpacked": [],
                "install_layers": [family_install(family) for family in split]}
    return {"pip_install": unpacked_install(lock_file), "install_layers": [],
            "unpacked": list(venv_tars(packages, context))}


def expect_json(data: object) -> bytes:
    """An expectation file (expect/NN-*.json): sorted keys, so the same data renders the same
    bytes, and so the same image key."""
    return (json.dumps(data, indent=2, sort_keys=True) + "\n").encode()
