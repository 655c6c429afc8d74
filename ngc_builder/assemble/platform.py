"""Another platform's build context: the render's files, and its wheels installed on the
build host into the venv tar its Dockerfile ADDs (assemble/wheel_install.py)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ngc_builder.assemble.host_compile import compile_natively, copy_venv
from ngc_builder.assemble.wheel_install import VenvTree, WheelError, install_wheels
from ngc_builder.errors import StepError
from ngc_builder.lock.models import ImageLock, PipPackage
from ngc_builder.render.contexts import RenderedImage
from ngc_builder.render.installs import VENV_TAR
from ngc_builder.services.engine import Engine
from ngc_builder.services.streams import LineSink


@dataclass(frozen=True)
class HostStage:
    """What the build host's own platform lends another platform's build: `image`, the host
    platform's build of the same image (the same OS and Python), run through `engine`."""

    engine: Engine
    image: str
    wheel_path: Callable[[PipPackage], Path]
    tree: VenvTree


def platform_context(rendered: RenderedImage, folder: Path, locked: ImageLock,
                     stage: HostStage, sink: LineSink) -> Path:
    """`folder/<name>.<arch>/`, ready to build: the base layer's venv, or the layer's wheels
    installed and compiled; StepError names the image and what failed."""
    target = rendered.write(folder, owned=True)
    name = rendered.spec.name
    if rendered.spec.kind == "base":
        entries = copy_venv(stage.engine, stage.image, target / VENV_TAR, name,
                            stage.tree.epoch)
        sink(f"{rendered.platform}: the venv of {stage.image[:19]} ({entries} entries)")
    else:
        for tar, names in rendered.venv_tars.items():
            wheels = [package for package in locked.pip if package.name in names]
            _install(rendered, wheels, stage, target / tar, sink)
    return target


def context_tars(rendered: RenderedImage) -> list[str]:
    """The tars `platform_context` writes into the context: GBs for a CUDA stack, removed
    once the image is built."""
    return [VENV_TAR] if rendered.spec.kind == "base" else list(rendered.venv_tars)


def _install(rendered: RenderedImage, wheels: list[PipPackage], stage: HostStage, tar: Path,
             sink: LineSink) -> None:
    name = rendered.spec.name
    started = time.monotonic()
    try:
        done = install_wheels(wheels, stage.wheel_path, stage.tree, tar)
    except WheelError as exc:
        raise StepError(name, f"install {rendered.platform}", str(exc)) from None
    installed = time.monotonic()
    compiled = compile_natively(stage.engine, stage.image, tar,
                                stage.tree.site_packages.as_posix(), stage.tree.epoch, name)
    sink(f"{rendered.platform}: {tar.name}: {done.wheels} wheel(s) installed ({done.files} "
         f"files, {done.bytes / 1e6:.0f} MB) in {installed - started:.1f} s and {compiled} .pyc "
         f"compiled on the build host in {time.monotonic() - installed:.1f} s")
