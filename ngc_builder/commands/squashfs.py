"""`ngc-builder squashfs REF --key KEY [-- CMD...]`: start a published image on a node from
its SquashFS (docs/squashfs.md), as a researcher or a Slurm job does.

REF is resolved to this host's platform manifest; its SquashFS artifact must name that
manifest as subject, and both the image and the artifact must be signed by KEY. The SquashFS is
downloaded once into the cache, named by its digest and renamed into place only after the bytes
matched it; later starts find it there (only the registry's few small answers are read
again). With CMD, `ch-run` runs it straight from the file (libsquashfuse); without, the path is
printed, for job scripts that call ch-run themselves.
"""

from __future__ import annotations

import os
import pwd
import shutil
import stat
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from cryptography.hazmat.primitives.asymmetric import ec

from ngc_builder.commands.check_host import refused_line, registry_at, remote_image
from ngc_builder.commands.guard import EXIT_FAILED, EXIT_INPUT, EXIT_OK
from ngc_builder.errors import InputError, Problem
from ngc_builder.publish.cosign_keys import read_public_key
from ngc_builder.publish.signing import SignatureReader, signature_problem
from ngc_builder.publish.squashfs_artifact import Found, find_squashfs
from ngc_builder.services.environment import xdg_home
from ngc_builder.services.registry import RegistryError
from ngc_builder.services.remote_image import (
    BadReference,
    ImageNotFound,
    ImageRef,
    RemoteImage,
    parse_ref,
)

Runner = Callable[[list[str], dict[str, str]], int]


class Source(SignatureReader, Protocol):
    """What starting from a SquashFS reads of a registry (`HttpRegistry` is one)."""

    def download_blob(self, name: str, digest: str, size: int, target: Path) -> None: ...


RegistryFor = Callable[[ImageRef], Source]


@dataclass(frozen=True)
class SquashfsOptions:
    ref: str
    key: Path
    cache_dir: Path | None = None
    command: tuple[str, ...] = ()


class Refused(Exception):
    """REF cannot be started from a SquashFS (missing, unsigned, not this image's)."""


def squashfs_command(options: SquashfsOptions, registry_for: RegistryFor | None = None,
                     runner: Runner | None = None) -> int:
    public = read_public_key(options.key)
    cache = cache_folder(options.cache_dir)
    try:
        ref = parse_ref(options.ref)
        registry = (registry_for or registry_at)(ref)  # one client: one token exchange
        image = remote_image(options.ref, lambda _: registry)
        path = cached(registry, ref.path, _verified(registry, ref, image, public), cache)
    except (BadReference, ImageNotFound) as exc:
        refused_line(options.ref, str(exc))
        return EXIT_INPUT
    except (Refused, RegistryError) as exc:
        refused_line(options.ref, str(exc))
        return EXIT_FAILED
    if not options.command:
        print(path)
        return EXIT_OK
    return (runner or _run)(ch_run_argv(path, image.workdir, list(options.command)),
                            _environment())


def _verified(registry: Source, ref: ImageRef, image: RemoteImage,
              public: ec.EllipticCurvePublicKey) -> Found:
    """The SquashFS artifact of `image`: there, about this very manifest, and it and the image
    both signed by the key."""
    found = find_squashfs(registry, ref.path, image.digest)
    if isinstance(found, str):
        raise Refused(f"{image.platform} manifest {image.digest}: {found}")
    for what, digest in (("the image", image.digest), ("its SquashFS", found.manifest_digest)):
        problem = signature_problem(registry, ref.path, digest, public)
        if problem is not None:
            raise Refused(f"{what} ({digest}) is not signed by the key: {problem}")
    return found


def cache_folder(chosen: Path | None) -> Path:
    """The cache (made 0700): this user's own folder, since a file in it named by a digest is
    run without being hashed again; another user's, a link or one others can write is refused."""
    folder = chosen or (xdg_home("XDG_CACHE_HOME", Path.home() / ".cache")
                        / "ngc-builder" / "squashfs")
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    status = os.lstat(folder)
    problem = ("a symbolic link" if stat.S_ISLNK(status.st_mode)
               else f"owned by uid {status.st_uid}" if status.st_uid != os.geteuid()
               else "writable by others" if status.st_mode & 0o022 else None)
    if problem:
        raise InputError([Problem(str(folder), 1, "--cache-dir", f"{problem}: not trusted")])
    return folder


def cached(registry: Source, name: str, found: Found, cache: Path) -> Path:
    """The SquashFS in the cache, downloaded (and its digest checked) when not there yet."""
    path = cache / f"{found.layer_digest.removeprefix('sha256:')}.sqfs"
    if _usable(path, found.size):
        return path
    free = shutil.disk_usage(cache).free
    if free < found.size:
        raise Refused(f"{cache}: {free / 1e9:.1f} GB free, the SquashFS needs "
                      f"{found.size / 1e9:.1f} GB")
    partial = cache / f".{path.name}.{os.getpid()}.part"
    try:
        registry.download_blob(name, found.layer_digest, found.size, partial)
        partial.chmod(0o644)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return path


def _usable(path: Path, size: int) -> bool:
    """A file this user wrote there (a regular file, theirs, of the digest's size)."""
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        return False
    return (stat.S_ISREG(status.st_mode) and status.st_uid == os.geteuid()
            and not status.st_mode & 0o022 and status.st_size == size)


def ch_run_argv(path: Path, workdir: str, command: list[str]) -> list[str]:
    """ch-run straight from the file: the image's ENV as it is (`--env-no-expand`: Docker
    expanded it already), its WORKDIR (an absolute path, else /), no entrypoint."""
    where = workdir if workdir.startswith("/") and "\n" not in workdir else "/"
    return ["ch-run", "--set-env", "--env-no-expand", f"--cd={where}", str(path), "--",
            *command]


def _environment() -> dict[str, str]:
    """The caller's environment; ch-run refuses to start without USER (a root shell in a CI
    job often has none)."""
    environment = dict(os.environ)
    environment.setdefault("USER", pwd.getpwuid(os.geteuid()).pw_name)
    return environment


def _run(argv: list[str], environment: dict[str, str]) -> int:
    try:
        return subprocess.run(argv, env=environment, check=False).returncode
    except FileNotFoundError:
        raise InputError([Problem("ch-run", 1, "(program)", "not installed (Debian: "
                                  "charliecloud-runtime)")]) from None
