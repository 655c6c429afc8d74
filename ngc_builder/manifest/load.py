"""Input (stage 1): load a release manifest with its OS base and frameworks, and report
every problem as `file:line: field: message`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from packaging.specifiers import SpecifierSet
from pydantic import BaseModel, ValidationError

from ngc_builder.errors import InputError, Problem
from ngc_builder.manifest.devel import devel_name, devel_problems
from ngc_builder.manifest.framework import Framework
from ngc_builder.manifest.models import BaseImage, ImageEntry, Release
from ngc_builder.manifest.paths import default_root as default_root
from ngc_builder.manifest.source import SourceMap, load_yaml

ModelT = TypeVar("ModelT", bound=BaseModel)
RESERVED_NAMES = ("base",)
# A framework image named like these would overwrite a generated parent's build context.
RESERVED_PREFIXES = ("base-", "cuda-")


@dataclass(frozen=True)
class FrameworkDef:
    """A framework folder: its definition plus the files that make its layer."""

    spec: Framework
    folder: Path
    layer_template: Path
    probe: Path


@dataclass(frozen=True)
class LoadedRelease:
    """Everything a release needs, checked and cross-referenced."""

    release: Release
    bases: dict[str, BaseImage]
    frameworks: dict[str, FrameworkDef]
    manifest: Path
    root: Path
    source: SourceMap

    @property
    def base(self) -> BaseImage:
        """The release's default OS base."""
        return self.bases[self.release.base]

    def stack_base(self, stack_name: str) -> BaseImage:
        return self.bases[base_name_of_stack(self.release, stack_name)]

    def image_base(self, entry: ImageEntry) -> BaseImage:
        return self.bases[base_name_of_image(self.release, entry)]


def base_name_of_stack(release: Release, stack_name: str) -> str:
    return release.cuda_stacks[stack_name].base or release.base


def base_name_of_image(release: Release, entry: ImageEntry) -> str:
    """A CUDA image sits on its stack's base; a CPU-only image on its own or the default."""
    if entry.stack is not None and entry.stack in release.cuda_stacks:
        return base_name_of_stack(release, entry.stack)
    return entry.base or release.base


def load_release(manifest: Path, root: Path | None = None) -> LoadedRelease:
    """Load and check a release; raise InputError listing every problem found."""
    root = root or default_root(manifest)
    release, source = load_model(manifest, Release, _display(manifest, root))
    problems: list[Problem] = []
    bases = _load_bases(release, source, root, problems)
    frameworks = _load_frameworks(release, source, root, problems)
    problems += _cross_check(release, bases, frameworks, source)
    if problems:
        raise InputError(problems)
    return LoadedRelease(release, bases, frameworks, manifest.resolve(), root, source)


def _base_references(release: Release) -> list[tuple[str, tuple[str | int, ...]]]:
    found: list[tuple[str, tuple[str | int, ...]]] = [(release.base, ("base",))]
    found += [(stack.base, ("cuda_stacks", name, "base"))
              for name, stack in release.cuda_stacks.items() if stack.base]
    found += [(image.base, ("images", index, "base"))
              for index, image in enumerate(release.images) if image.base]
    return found


def _load_bases(
    release: Release, source: SourceMap, root: Path, problems: list[Problem]
) -> dict[str, BaseImage]:
    bases: dict[str, BaseImage] = {}
    seen: set[str] = set()
    for name, where in _base_references(release):
        path = root / "base-images" / f"{name}.yaml"
        if name in seen:
            continue
        seen.add(name)
        if not path.exists():
            problems.append(source.problem(where, f"no base-images/{name}.yaml"))
        elif (loaded := _load_part(path, BaseImage, root, problems)) is not None:
            bases[name] = loaded
    return bases


def _display(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)


SHAPE_ERRORS = ("dict_type", "list_type")


def load_model(path: Path, model: type[ModelT], display: str) -> tuple[ModelT, SourceMap]:
    data, source = load_yaml(path, display)
    if not isinstance(data, dict):
        raise InputError([source.problem((), "expected a mapping of fields")])
    try:
        return model.model_validate(data), source
    except ValidationError as exc:
        raise InputError([_to_problem(error, source) for error in _meant(exc.errors())]) from None


def _field(error: Any) -> tuple[str | int, ...]:
    """Where the error is, without pydantic's names of union members and validators
    ("list[...]", "function-after[...]"): no field name holds a bracket."""
    return tuple(part for part in error["loc"] if not (isinstance(part, str) and "[" in part))


def _meant(errors: list[Any]) -> list[Any]:
    """A field that may be a list or a mapping fails as both: a shape error ("should be a valid
    dictionary") is left out where the other shape found what is wrong inside the value."""
    deeper = [_field(error) for error in errors if error["type"] not in SHAPE_ERRORS]
    return [error for error in errors if error["type"] not in SHAPE_ERRORS or not any(
        len(loc) > len(_field(error)) and loc[:len(_field(error))] == _field(error)
        for loc in deeper)]


def _to_problem(error: Any, source: SourceMap) -> Problem:
    loc = _field(error)
    message = str(error["msg"]).removeprefix("Value error, ")
    if error["type"] == "extra_forbidden":
        message = "unknown field"
    elif error["type"] == "string_type" and isinstance(error.get("input"), int | float):
        message = f"write it as a quoted string (YAML read {error['input']!r} as a number)"
    return source.problem(loc, message)


def _load_part(
    path: Path, model: type[ModelT], root: Path, problems: list[Problem]
) -> ModelT | None:
    if not path.exists():
        return None
    try:
        return load_model(path, model, _display(path, root))[0]
    except InputError as exc:
        problems.extend(exc.problems)
        return None


def _load_frameworks(
    release: Release, source: SourceMap, root: Path, problems: list[Problem]
) -> dict[str, FrameworkDef]:
    found: dict[str, FrameworkDef] = {}
    for index, image in enumerate(release.images):
        if image.framework in found:
            continue
        folder = root / "frameworks" / image.framework
        loaded = _load_framework(folder, root, problems)
        if loaded is not None:
            found[image.framework] = loaded
        elif not links_out_of(folder):  # those are said already
            problems.append(source.problem(("images", index, "framework"),
                                           f"no complete frameworks/{image.framework}/ folder"))
    return found


def _load_framework(folder: Path, root: Path, problems: list[Problem]) -> FrameworkDef | None:
    files = [folder / "framework.yaml", folder / "layer.Dockerfile.j2", folder / "probe.py"]
    if not all(f.is_file() for f in files):
        return None
    escapes = links_out_of(folder)
    if escapes:  # its files go into the Dockerfile and the image: nothing from elsewhere
        problems.extend(Problem(f"frameworks/{folder.name}/{link.relative_to(folder)}", 1,
                                "(file)", f"a link to a file outside frameworks/{folder.name}/:"
                                " not followed") for link in escapes)
        return None
    spec = _load_part(files[0], Framework, root, problems)
    if spec is None:
        return None
    if spec.name != folder.name:
        problems.append(Problem(_display(files[0], root), 1, "name",
                                f"{spec.name!r} differs from its folder {folder.name!r}"))
    return FrameworkDef(spec, folder, files[1], files[2])


def _cross_check(
    release: Release, bases: dict[str, BaseImage], frameworks: dict[str, FrameworkDef],
    source: SourceMap,
) -> list[Problem]:
    problems: list[Problem] = []
    seen: set[str] = set()
    for index, image in enumerate(release.images):
        where = ("images", index)
        name = image.image_name
        if name in RESERVED_NAMES or name.startswith(RESERVED_PREFIXES):
            problems.append(source.problem((*where, "name"), (
                f"image name {name!r} is reserved for the generated images (base, "
                "base-<os>, cuda-<stack>)")))
        for taken in [name, devel_name(image)] if image.devel else [name]:
            if taken in seen:
                problems.append(source.problem((*where, "name"),
                                               f"image name {taken!r} is taken"))
            seen.add(taken)
        framework = frameworks.get(image.framework)
        base = bases.get(base_name_of_image(release, image))
        if framework is not None and base is not None:
            problems += _check_image(release, base, image, framework.spec, where, source)
    return problems


def _check_placement(
    release: Release, image: ImageEntry, framework: Framework, where: tuple[str | int, ...],
    source: SourceMap,
) -> list[Problem]:
    """A CUDA framework needs a stack that exists; a stack image takes its stack's base."""
    if image.stack is not None and image.stack not in release.cuda_stacks:
        return [source.problem((*where, "stack"), f"no cuda_stacks.{image.stack}")]
    if image.stack is not None and image.base is not None:
        return [source.problem((*where, "base"), (
            f"an image on stack {image.stack} uses that stack's base: "
            f"set cuda_stacks.{image.stack}.base instead"))]
    if image.stack is None and framework.needs_cuda(image.variant):
        return [source.problem((*where, "stack"),
                               f"{framework.name} needs a CUDA {framework.cuda_major} stack")]
    return []


def _check_image(
    release: Release,
    base: BaseImage,
    image: ImageEntry,
    framework: Framework,
    where: tuple[str | int, ...],
    source: SourceMap,
) -> list[Problem]:
    problems = _check_placement(release, image, framework, where, source)
    problems += devel_problems(release, base, image, where, source)
    stack = release.cuda_stacks.get(image.stack) if image.stack else None
    wanted = framework.cuda_major
    if stack is not None and wanted is not None and stack.cuda_major != wanted:
        problems.append(source.problem((*where, "stack"), (
            f"{framework.name} needs CUDA {framework.cuda_major}, "
            f"stack {image.stack} is CUDA {stack.cuda}")))
    if image.variant not in framework.requirements:
        problems.append(source.problem((*where, "variant"), (
            f"{framework.name} has no variant {image.variant!r} "
            f"(has: {', '.join(sorted(framework.requirements))})")))
    if base.python not in SpecifierSet(framework.python):
        problems.append(source.problem((*where, "framework"), (
            f"{framework.name} needs Python {framework.python}, "
            f"base {base.name} has {base.python}")))
    for field, offered in (("tools", framework.tools), ("addons", framework.addons)):
        asked: dict[str, str] = getattr(image, field)
        problems += [source.problem((*where, field, name), (
            f"{framework.name} does not offer {name} (frameworks/{framework.name}/"
            f"framework.yaml {field}: {', '.join(offered) or 'none'})"))
            for name in sorted(set(asked) - set(offered))]
    return problems


def links_out_of(folder: Path) -> list[Path]:
    """Every symbolic link in `folder` (at any depth) that leads outside it; the folder
    itself may be a link (a checkout that links a shared framework in)."""
    inside = folder.resolve()
    return sorted(path for path in folder.rglob("*") if path.is_symlink()
                  and not path.resolve().is_relative_to(inside))
