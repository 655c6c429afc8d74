"""Render (stage 3): one Dockerfile and build context per image, byte-identical for the
same input (sorted files, no timestamps: `created` is a build-time label)."""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path

import jinja2

from ngc_builder.errors import InputError, Problem
from ngc_builder.files import INPUT_LIMIT, read_regular
from ngc_builder.lock.models import ImageLock, ReleaseLock
from ngc_builder.manifest.drivers import minimum_driver, require_cuda
from ngc_builder.manifest.load import LoadedRelease
from ngc_builder.manifest.paths import probe_modules
from ngc_builder.manifest.platforms import DEB_ARCHES, HOST_PLATFORM
from ngc_builder.manifest.stacks import image_requirements
from ngc_builder.plan.dag import ImageSpec, ReleasePlan
from ngc_builder.render.devel import devel_parts
from ngc_builder.render.environment import (
    env_instruction,
    framework_environment,
    stack_environment,
    workspace_readme,
)
from ngc_builder.render.installs import (
    VENV_TAR,
    apt_install,
    expect_json,
    own_wheels,
    requirements_lock,
    venv_tars,
    wheel_install,
)
from ngc_builder.render.repro import UNLOCKED_EPOCH, reproducible, source_epoch
from ngc_builder.render.templates import TEMPLATE_ERRORS, environment, template_problem

RUNNER_PACKAGE = Path(__file__).resolve().parent.parent / "runner"
RUNNER_NAME = "ngc_runner"
# In every folder `write` makes: the proof that replacing that folder destroys nothing else.
MARKER = ".ngc-rendered"


@dataclass(frozen=True)
class RenderedImage:
    """A Dockerfile and the files of its build context, ready for the engine."""

    spec: ImageSpec
    dockerfile: str
    files: dict[str, bytes]
    platform: str = HOST_PLATFORM  # another platform's render ADDs venv tars (installs.py)
    venv_tars: dict[str, list[str]] = field(default_factory=dict)  # tar -> its wheels' names
    epoch: int = UNLOCKED_EPOCH  # SOURCE_DATE_EPOCH: its layers' times, and its config's

    @property
    def folder_name(self) -> str:
        """Its context folder: the image's name, `<name>.arm64` for another platform."""
        return self.spec.name if self.platform == HOST_PLATFORM else \
            f"{self.spec.name}.{DEB_ARCHES[self.platform]}"

    def digest(self) -> str:
        """Hash of everything that goes into the build (not the parent: see build.py)."""
        h = hashlib.sha256(self.dockerfile.encode())
        for name in sorted(self.files):
            h.update(name.encode() + b"\0" + hashlib.sha256(self.files[name]).digest())
        return h.hexdigest()

    def replaceable(self, folder: Path, owned: bool) -> Path:
        """`folder/<image>`, or InputError when something not ours is there."""
        target = folder / self.folder_name
        foreign = target.exists() and not (owned or (target / MARKER).is_file())
        if target.is_symlink() or foreign:
            raise InputError([Problem(str(target), 1, "--out", "exists and was not written "
                                      "by ngc-builder render: left alone; choose another "
                                      "--out")])
        return target

    @property
    def local_ref(self) -> str:
        return self.spec.local_ref(self.digest())

    def write(self, folder: Path, owned: bool = False) -> Path:
        """`folder/<image>/`: replaced whole only when an earlier render wrote it (its
        marker file says so) or the builder owns `folder` (a release's own context dir);
        any other folder there is left alone and is an error."""
        target = self.replaceable(folder, owned)
        if target.exists():
            shutil.rmtree(target)
        for name, content in sorted(self.files.items()):
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            (target / name).write_bytes(content)
        target.mkdir(parents=True, exist_ok=True)
        (target / "Dockerfile").write_text(self.dockerfile, encoding="utf-8")
        (target / MARKER).write_text(f"rendered by ngc-builder for {self.spec.name}\n")
        return target


def write_all(images: list[RenderedImage], folder: Path, owned: bool = False) -> list[Path]:
    """Every image's folder, or none of them when one may not be replaced."""
    for image in images:
        image.replaceable(folder, owned)
    return [image.write(folder, owned) for image in images]


def render_release(
    loaded: LoadedRelease, plan: ReleasePlan, lock: ReleaseLock, split: bool = True,
) -> list[RenderedImage]:
    """Every image installing exactly what `lock` names (checked fresh by the caller);
    `split=False` renders each install as one layer (render/installs.py): the benchmark's
    naive baseline, never a release's."""
    env = environment(loaded.root)
    done: dict[str, RenderedImage] = {}
    for spec in plan.images:
        parent_ref = plan.os_ref(spec) if spec.parent is None else done[spec.parent].local_ref
        locked = lock.for_image(spec.name) or ImageLock(inputs={})
        epoch = source_epoch(lock.os, spec.base)
        try:
            done[spec.name] = render_image(env, loaded, spec, parent_ref, locked, epoch,
                                           split=split)
        except TEMPLATE_ERRORS as exc:
            raise InputError([template_problem(exc, loaded.root, spec.name)]) from None
    return list(done.values())


def render_image(
    env: jinja2.Environment, loaded: LoadedRelease, spec: ImageSpec, parent_ref: str,
    locked: ImageLock, epoch: int, platform: str = HOST_PLATFORM, emulated: bool = False,
    split: bool = True,
) -> RenderedImage:
    """`epoch`: SOURCE_DATE_EPOCH of its layers (render/repro.py); `emulated`: another
    platform's image installed as the host's is, everything run emulated (pip, venv): the
    benchmark's baseline, never a release's."""
    context = {"release": loaded.release.release, "parent_ref": parent_ref,
               "base": loaded.bases[spec.base], "platform": platform, "emulated": emulated,
               "split": split, "pinned": pinned_wheels(spec, loaded, locked)}
    if spec.kind == "base":
        rendered = _render_base(env, spec, context, loaded, locked)
    elif spec.kind == "cuda":
        rendered = _render_cuda(env, spec, context, loaded, locked)
    elif spec.kind == "devel":
        rendered = RenderedImage(spec, *devel_parts(env, spec, context, loaded, locked))
    else:
        rendered = _render_framework(env, spec, context, loaded, locked)
    tars = {} if spec.kind == "base" or platform == HOST_PLATFORM or emulated else \
        venv_tars(locked.pip, context)
    dockerfile, files = reproducible(rendered.dockerfile, rendered.files, spec.kind, epoch)
    return replace(rendered, dockerfile=dockerfile, files=files, platform=platform,
                   venv_tars=tars, epoch=epoch)


def _render_base(
    env: jinja2.Environment, spec: ImageSpec, context: dict[str, object],
    loaded: LoadedRelease, locked: ImageLock,
) -> RenderedImage:
    files = runner_files()
    # No release here: the base is shared by every release that does not change it.
    files["expect/00-base.json"] = expect_json({"image": spec.name,
                                          "python": loaded.bases[spec.base].python})
    requested = list(loaded.bases[spec.base].apt_packages)
    text = env.get_template("base.Dockerfile.j2").render(
        apt_install=apt_install(locked.apt, requested), **context,
        unpacked=None if context["platform"] == HOST_PLATFORM or context.get("emulated")
        else VENV_TAR)
    return RenderedImage(spec, text, files)


def _render_cuda(
    env: jinja2.Environment, spec: ImageSpec, context: dict[str, object], loaded: LoadedRelease,
    locked: ImageLock,
) -> RenderedImage:
    assert spec.stack is not None
    stack = loaded.release.cuda_stacks[spec.stack]
    pins = "".join(f"{name}=={version}\n" for name, version in sorted(stack.wheels.items()))
    expect = {"image": spec.name, "stack": spec.stack, "cuda": stack.cuda,
              "min_driver": minimum_driver(stack.cuda),
              "wheels": dict(sorted(stack.wheels.items())),
              "libraries": {lib: stack.wheels[wheel] for lib, wheel in
                            sorted(stack.libraries.items())}}
    files = {"stack/requirements.txt": pins.encode(), "expect/10-cuda.json": expect_json(expect),
             "stack/requirements.lock": requirements_lock(locked.pip).encode()}
    requested = list(loaded.bases[spec.base].cuda_apt_packages)
    text = env.get_template("cuda.Dockerfile.j2").render(
        stack_name=spec.stack, stack=stack, require_cuda=require_cuda(stack.cuda), **context,
        **wheel_install("/opt/ngc/stack/requirements.lock", locked.pip, context),
        apt_install=apt_install(locked.apt, requested),
        environment=env_instruction(stack_environment(stack)))
    return RenderedImage(spec, text, files)


def _render_framework(
    env: jinja2.Environment, spec: ImageSpec, context: dict[str, object], loaded: LoadedRelease,
    locked: ImageLock,
) -> RenderedImage:
    assert spec.entry is not None
    entry = spec.entry
    framework = loaded.frameworks[entry.framework]
    requirements = "".join(f"{line}\n" for line in image_requirements(loaded, entry))
    expect = {"image": spec.name, "release": loaded.release.release,
              "framework": framework.spec.name, "version": entry.version,
              "title": framework.spec.title, "tools": dict(sorted(entry.tools.items())),
              "addons": dict(sorted(entry.addons.items())),
              "probe": framework.spec.name, "distribution": framework.spec.distribution,
              "import_name": framework.spec.import_name,
              "extras": framework.spec.extras_for(entry.variant),
              "gpu_targets": loaded.release.targets_of(entry),
              "gpu_image": entry.stack is not None and framework.spec.needs_cuda(entry.variant)}
    variables = framework_environment(framework.spec, entry, loaded.release.release)
    files = {"requirements.txt": requirements.encode(),
             "expect/20-framework.json": expect_json(expect),
             "requirements.lock": requirements_lock(locked.pip).encode(),
             "workspace/README.md": workspace_readme(env, loaded, spec, variables).encode(),
             **probe_files(framework.probe)}
    layer = framework.layer_template.relative_to(loaded.root).as_posix()
    view = {"name": spec.name, "version": entry.version, "stack": entry.stack,
            "variant": entry.variant}
    lock_file = f"/opt/ngc/frameworks/{spec.name}/requirements.lock"
    text = env.get_template("framework.Dockerfile.j2").render(
        framework=framework.spec, image=view, layer_template=layer, **context,
        **wheel_install(lock_file, locked.pip, context),
        apt_install=apt_install(locked.apt, framework.spec.apt_for(entry.variant,
                                                                   str(context["platform"]))),
        environment=env_instruction(variables))
    return RenderedImage(spec, text, files)


def pinned_wheels(spec: ImageSpec, loaded: LoadedRelease, locked: ImageLock) -> dict[str, str]:
    """The wheels the manifest names for this image, at their versions: a stack's, its devel
    wheels, or a framework's own release (render/installs.py: each set of them sharing a
    version is one layer)."""
    if spec.kind == "cuda" and spec.stack is not None:
        return dict(loaded.release.cuda_stacks[spec.stack].wheels)
    if spec.kind == "devel" and spec.stack is not None:
        return dict(loaded.release.cuda_stacks[spec.stack].devel_wheels)
    if spec.entry is None:
        return {}
    entry = spec.entry
    framework = loaded.frameworks[entry.framework].spec
    return own_wheels(locked.pip, [line.replace("{version}", entry.version) for line in
                                   framework.requirements[entry.variant] if "{version}" in line])


def probe_files(probe: Path) -> dict[str, bytes]:
    """probe.py and the probe_*.py modules it may be split into, under probe/."""
    return {f"probe/{path.name}": read_regular(path, INPUT_LIMIT)
            for path in probe_modules(probe.parent)}


def runner_files() -> dict[str, bytes]:
    """The runner package as it ships in images: top-level `ngc_runner`."""
    return {f"{RUNNER_NAME}/{path.relative_to(RUNNER_PACKAGE).as_posix()}": path.read_bytes()
            for path in sorted(RUNNER_PACKAGE.rglob("*.py"))}

