"""A SquashFS of an image's root filesystem, made once at release, so a cluster node starts the
image with `ch-run` straight from one file (libsquashfuse mounts it) instead of pulling and
unpacking gigabytes on every node (docs/squashfs.md).

What it holds is what `ch-convert -i docker -o squash` makes, without its detours (a tarball
written, gzipped, unpacked again): the engine's export of the image streamed into GNU tar, the
image's ENV as `/ch/environment` (read by `ch-run --set-env`), the mount points ch-run binds
over, then one `mksquashfs`. Every file's time is the lock's epoch, owners are root, and
mksquashfs packs reproducibly: the same image gives the same bytes, whichever host makes it.

The export is the engine's answer, so it is hostile input: GNU tar strips leading `/`, skips
members naming `..`, and makes links that point out of the tree placeholders it never follows;
nothing here writes into the unpacked tree (the added files are mksquashfs pseudo files), so a
tree whose `etc` is a link to the host's cannot make us write there.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import docker.errors
import requests

from ngc_builder.files import file_sha256
from ngc_builder.services.engine import Container, Engine, discard

# ch-run binds these over the image (Charliecloud 0.31's list): they must exist in a
# read-only image, so what the export lacks is added, as ch-convert adds it.
MOUNT_FOLDERS = ("bin", "dev", "etc", "mnt", "proc", "usr", *(f"mnt/{n}" for n in range(10)))
MOUNT_FILES = ("etc/hosts", "etc/resolv.conf")
# zstd: decompressed several times faster than gzip when `import torch` reads 1 GB of
# libraries; level 9 packs 7 GB on two cores in minutes (docs/performance.md).
COMPRESSION = ("-comp", "zstd", "-Xcompression-level", "9")
BLOCK = 1 << 20
EXPORT_TIMEOUT_S = 3600


class SquashfsError(Exception):
    """The SquashFS of an image cannot be made: said in one line."""


@dataclass(frozen=True)
class SquashFile:
    path: Path
    digest: str  # sha256 of the file: the artifact's layer
    size: int
    seconds: float


def make_squashfs(engine: Engine, image_id: str, target: Path, epoch: int,
                  scratch: Path) -> SquashFile:
    """The SquashFS of the image `image_id` at `target`, unpacked under `scratch` (emptied
    after); SquashfsError when the engine, tar or mksquashfs fails."""
    started = time.monotonic()
    environment = _environment(engine, image_id)
    root = scratch / "root"
    root.mkdir()
    try:
        unpack(_exported(engine, image_id), root)
        pseudo = scratch / "pseudo"
        pseudo.write_text(pseudo_files(root, environment, scratch / "environment"))
        _pack(root, pseudo, target, epoch)
    finally:
        subprocess.run(["rm", "-rf", "--one-file-system", str(root)], check=False)
    return SquashFile(target, "sha256:" + file_sha256(target), target.stat().st_size,
                      time.monotonic() - started)


def _environment(engine: Engine, image_id: str) -> list[str]:
    """The image's ENV, one `NAME=value` a line as ch-run reads it; a value with a newline
    cannot be written so, and is refused."""
    try:
        config = engine.api.inspect_image(image_id).get("Config") or {}
    except (docker.errors.DockerException, requests.RequestException) as exc:
        raise SquashfsError(f"inspect {image_id[:19]}: {exc.__class__.__name__}") from None
    variables = [str(line) for line in config.get("Env") or []]
    bad = [line.partition("=")[0][:40] for line in variables if "\n" in line or "=" not in line]
    if bad:
        raise SquashfsError(f"{image_id[:19]}: ENV {bad[0]!r} has no value or a newline")
    return variables


@contextlib.contextmanager
def _container(engine: Engine, image_id: str) -> Iterator[Container]:
    container = engine.containers.create(image_id, ["true"], entrypoint=[],
                                         network_disabled=True)
    try:
        yield container
    finally:
        discard(container)


def _exported(engine: Engine, image_id: str) -> Iterator[bytes]:
    """The image's root filesystem as one tar stream (a container made, never started)."""
    try:
        with _container(engine, image_id) as container:
            yield from container.export(chunk_size=BLOCK)
    except (docker.errors.DockerException, requests.RequestException) as exc:
        raise SquashfsError(f"export {image_id[:19]}: {exc.__class__.__name__}: "
                            f"{str(exc)[:200]}") from None


def unpack(chunks: Iterable[bytes], root: Path) -> None:
    """A tar stream into `root` by GNU tar, with its protections (module docstring). Owners
    are not restored: the SquashFS makes every file root's."""
    tar = subprocess.Popen(["tar", "--extract", "--file=-", "--directory", str(root),
                            "--no-same-owner", "--preserve-permissions",
                            "--delay-directory-restore", "--warning=no-unknown-keyword"],
                           stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    assert tar.stdin is not None
    try:
        _feed(chunks, tar.stdin)
    finally:
        with contextlib.suppress(BrokenPipeError):
            tar.stdin.close()
        errors = tar.stderr.read().decode("utf-8", "replace") if tar.stderr else ""
        status = tar.wait()
    if status != 0:
        raise SquashfsError(f"tar exited {status}: {errors.strip()[-300:]}")


def _feed(chunks: Iterable[bytes], stdin: IO[bytes]) -> None:
    try:
        for chunk in chunks:
            stdin.write(chunk)
    except BrokenPipeError:
        pass  # tar stopped early: its status and message say why


def pseudo_files(root: Path, environment: list[str], environment_file: Path) -> str:
    """mksquashfs pseudo definitions: `/ch/environment` and the missing mount points, added
    to the SquashFS without writing into the unpacked tree."""
    if os.path.lexists(root / "ch"):
        raise SquashfsError("the image already has /ch, where Charliecloud keeps its files")
    environment_file.write_text("".join(f"{line}\n" for line in environment))
    lines = ["ch d 755 root root",
             f"ch/environment f 644 root root cat {shlex.quote(str(environment_file))}"]
    lines += [f"{folder} d 755 root root" for folder in MOUNT_FOLDERS
              if not os.path.lexists(root / folder)]
    lines += [f"{file} f 644 root root true" for file in MOUNT_FILES
              if not os.path.lexists(root / file)]
    return "".join(f"{line}\n" for line in lines)


def _pack(root: Path, pseudo: Path, target: Path, epoch: int) -> None:
    argv = ["mksquashfs", str(root), str(target), "-noappend", "-all-root", "-no-xattrs",
            "-no-progress", "-quiet", "-b", str(128 * 1024), *COMPRESSION,
            "-mkfs-time", str(epoch), "-all-time", str(epoch), "-pf", str(pseudo),
            "-e", ".dockerenv"]
    try:
        packed = subprocess.run(argv, capture_output=True, text=True, timeout=EXPORT_TIMEOUT_S,
                                check=False)
    except FileNotFoundError:
        raise SquashfsError("mksquashfs is not installed (Debian: squashfs-tools)") from None
    if packed.returncode != 0:
        target.unlink(missing_ok=True)
        raise SquashfsError(f"mksquashfs exited {packed.returncode}: "
                            f"{(packed.stderr or packed.stdout).strip()[-300:]}")
