"""Build (stage 4), first: the OS image every release starts FROM.

Pull a reference when a registry serves it; otherwise bootstrap it from a Debian mirror
with debootstrap and `docker import` (the only way on machines with no Docker Hub).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import docker.errors
import docker.utils

from ngc_builder.assemble.osrepro import load_rootfs, reproducible_rootfs
from ngc_builder.errors import StepError
from ngc_builder.lock.models import AptPackage, OsLock
from ngc_builder.manifest.models import BaseImage
from ngc_builder.services.engine import Engine, image_exists
from ngc_builder.services.mirror import host_debian_mirror
from ngc_builder.services.streams import LineSink, StreamError, consume_pull

Strategy = Literal["auto", "pull", "bootstrap"]
PATH_ENV = "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
Bootstrap = Callable[[Engine, BaseImage, str, LineSink], None]  # engine, base, ref, sink
PUBLIC_MIRROR = "http://deb.debian.org/debian"  # the apt source a locked OS image ships


def ensure_os_image(
    engine: Engine, base: BaseImage, ref: str, strategy: Strategy, sink: LineSink,
    bootstrapper: Bootstrap | None = None,
) -> str:
    """Return the ID of the OS image at `ref`, obtaining it if the engine lacks it."""
    return obtain_os_image(engine, base, ref, strategy, sink, bootstrapper)[0]


def obtain_os_image(
    engine: Engine, base: BaseImage, ref: str, strategy: Strategy, sink: LineSink,
    bootstrapper: Bootstrap | None = None, locked: Bootstrap | None = None,
) -> tuple[str, str]:
    """The OS image's ID and how this run got it: already present, pulled, or bootstrapped
    (by `bootstrapper`, default debootstrap + docker import); a base with a lock entry is
    built from it (`locked`) unless a pull is asked for."""
    present = image_exists(engine, ref)
    if not present and locked is not None and strategy != "pull":
        locked(engine, base, ref, sink)
    elif not present:
        _obtain(engine, base, ref, strategy, sink, bootstrapper)
    info = engine.api.inspect_image(ref)
    labels = (info.get("Config") or {}).get("Labels") or {}
    origin = labels.get("org.ngc-builder.os-origin", "pulled")
    return str(info["Id"]), "already present" if present else origin


def _obtain(engine: Engine, base: BaseImage, ref: str, strategy: Strategy,
            sink: LineSink, bootstrapper: Bootstrap | None = None) -> None:
    if strategy == "pull" and not base.pull:
        raise StepError("os-base", "pull", f"{base.name} has no 'pull' reference")
    if strategy in ("auto", "pull") and base.pull:
        try:
            _pull(engine, base.pull, ref, sink)
            return
        except StepError as exc:
            if strategy == "pull" or base.bootstrap is None:
                raise
            sink(f"pull failed ({exc.message}); bootstrapping {base.name} instead")
    if base.bootstrap is None:
        raise StepError("os-base", "bootstrap", f"{base.name} has no bootstrap section")
    (bootstrap if bootstrapper is None else bootstrapper)(engine, base, ref, sink)


def _pull(engine: Engine, source: str, ref: str, sink: LineSink) -> None:
    # "host:5000/debian" has a colon that is not a tag: let docker-py split the reference.
    repository, tag = docker.utils.parse_repository_tag(source)
    tag = tag or "latest"
    pulled = f"{repository}@{tag}" if tag.startswith("sha256:") else f"{repository}:{tag}"
    try:
        consume_pull(engine.api.pull(repository, tag=tag, stream=True, decode=True), sink)
        engine.api.tag(pulled, *ref.split(":", 1))
    except (StreamError, docker.errors.APIError) as exc:
        raise StepError("os-base", f"pull {source}", _first_line(exc)) from None


def locked_bootstrap(entry: OsLock, debs: Callable[[AptPackage], Path]) -> Bootstrap:
    """The OS image from exactly the locked packages (each .deb at `debs(package)`), with the
    same ID whenever it is made from the same lock (`osrepro.py`). Its apt source is Debian's
    public mirror: the build host's mirror is not the image's business."""
    def run(engine: Engine, base: BaseImage, ref: str, sink: LineSink) -> None:
        with tempfile.TemporaryDirectory(prefix="ngc-rootfs-") as scratch:
            tarball = reproducible_rootfs(entry.apt, debs, entry.suite, entry.epoch,
                                          Path(scratch), sink, mirror=PUBLIC_MIRROR)
            labels = {"org.ngc-builder.os-origin": f"locked {entry.suite}"}
            load_rootfs(engine, tarball, ref, labels, entry.epoch, sink, entry.architecture)

    return run


def bootstrap(engine: Engine, base: BaseImage, ref: str, sink: LineSink) -> None:
    assert base.bootstrap is not None
    mirror = base.bootstrap.mirror or host_debian_mirror()
    if mirror is None:
        raise StepError("os-base", "bootstrap", "no Debian mirror known: set NGC_DEBIAN_MIRROR")
    if shutil.which("debootstrap") is None or os.geteuid() != 0:
        raise StepError("os-base", "bootstrap",
                        "needs root and debootstrap (apt-get install debootstrap)")
    with tempfile.TemporaryDirectory(prefix="ngc-rootfs-") as scratch:
        rootfs = Path(scratch) / "rootfs"
        command = ["debootstrap", f"--variant={base.bootstrap.variant}",
                   base.bootstrap.suite, str(rootfs), mirror]
        sink(" ".join(command))
        _run(command, "debootstrap", sink)
        _trim(rootfs)
        tarball = Path(scratch) / "rootfs.tar"
        _run(["tar", "--numeric-owner", "-C", str(rootfs), "-cf", str(tarball), "."], "tar", sink)
        _import(engine, tarball, ref, f"debootstrap {base.bootstrap.suite}")


def _trim(rootfs: Path) -> None:
    # Package caches are rebuilt by `apt-get update` in the base layer anyway.
    for folder in ("var/cache/apt/archives", "var/lib/apt/lists"):
        for item in (rootfs / folder).glob("*"):
            if item.is_file():
                item.unlink()


def _import(engine: Engine, tarball: Path, ref: str, origin: str) -> None:
    repository, tag = ref.split(":", 1)
    changes = [PATH_ENV, 'CMD ["/bin/bash"]', f'LABEL org.ngc-builder.os-origin="{origin}"']
    try:
        engine.api.import_image_from_file(str(tarball), repository=repository, tag=tag,
                                          changes=changes)
    except docker.errors.APIError as exc:
        raise StepError("os-base", "docker import", _first_line(exc)) from None


def _run(command: list[str], step: str, sink: LineSink) -> None:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    for line in done.stdout.splitlines()[-5:]:
        sink(line)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise StepError("os-base", step, f"exit {done.returncode}: {tail[0]}")


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or ["unknown error"])[0]
